// A grid-wide wait over more blocks than run at once: every block but the
// last spins until the last block raises a flag. On a GPU whose CUs hold
// fewer blocks than the grid, the last block never starts (it waits for a
// spinning block to retire) and the kernel hangs; under emud, run with
// EMUD_RESIDENT_LANES under the grid's lanes, the hang report says the
// grid's later blocks have not started and how many are resident (cxx
// TestGridWideWaitReported). With room for every block it passes.
#include <cstdio>

#include "hip/hip_runtime.h"

constexpr int kBlocks = 8, kThreads = 256;

__global__ void waitLast(int* flag) {
  if (blockIdx.x == kBlocks - 1) {
    if (threadIdx.x == 0) __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {
  }
}

int main() {
  int* flag = nullptr;
  if (hipMalloc(&flag, sizeof(int)) != hipSuccess || hipMemset(flag, 0, sizeof(int)) != hipSuccess) return 1;
  waitLast<<<kBlocks, kThreads>>>(flag);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  std::printf("wait_last: %d blocks, PASS\n", kBlocks);
  return 0;
}
