// A grid-wide wait: every block but the last spins until the last block
// raises a flag. A GPU runs it when its CUs hold every block at once; when
// they hold fewer than the grid, the last block never starts (it waits
// for a spinning block to retire) and the kernel hangs. emud's lane budget
// (EMUD_RESIDENT_LANES) is not such a limit: blocks start past it once
// every lane alive waits, so the program passes whatever the budget; a
// grid past what the CUs hold (each block asking for a CU's whole 160 KiB
// of LDS, so one block a CU) is a hang report that says the grid's later
// blocks have not started and how many the CUs hold (cxx
// TestGridWideWaitReported). Arguments: blocks (8), threads a block
// (256), dynamic shared memory a block in bytes (0).
#include <cstdio>
#include <cstdlib>

#include "hip/hip_runtime.h"

__global__ void waitLast(int* flag, int blocks) {
  extern __shared__ char lds[];
  (void)lds;
  if ((int)blockIdx.x == blocks - 1) {
    if (threadIdx.x == 0) __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {
  }
}

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 8;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 256;
  const size_t lds = argc > 3 ? (size_t)std::atoll(argv[3]) : 0;
  int* flag = nullptr;
  if (hipMalloc(&flag, sizeof(int)) != hipSuccess || hipMemset(flag, 0, sizeof(int)) != hipSuccess) return 1;
  waitLast<<<blocks, threads, lds>>>(flag, blocks);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  std::printf("wait_last: %d blocks, PASS\n", blocks);
  return 0;
}
