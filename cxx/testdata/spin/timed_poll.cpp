// Polls with a timeout, as MORI's and NCCL's timed barrier waits are
// written: `while (flag == 0) if (clock64() - start >= timeout) break;`.
// Lane 0 of block 0 waits for a flag nobody sets (it must time out, not
// hang); lane 0 of block 1 waits, with a far longer timeout, for a flag
// that block 2 sets after 1 µs (it must see it then, not at its
// timeout). Argument: the timeout of block 0 in shader cycles (2.4 GHz).
// Prints each wait's result and the cycles it took, and PASS when block
// 0 timed out within 1/16 past its timeout and block 1 saw its flag
// within 1 µs of the set.
#include <cstdio>
#include <cstdlib>

#include "hip/hip_runtime.h"

__device__ int timedWait(unsigned* flag, unsigned long long timeout, unsigned long long* took) {
  const unsigned long long start = clock64();
  int rc = 0;
  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) == 0) {
    if ((unsigned long long)clock64() - start >= timeout) {
      rc = 1;
      break;
    }
  }
  *took = clock64() - start;
  return rc;
}

__global__ void polls(unsigned* flags, unsigned long long timeout, int* rc, unsigned long long* took) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 2) {
    const long long t0 = wall_clock64();
    while (wall_clock64() - t0 < 100) {  // 1 µs of the 100 MHz clock
    }
    __hip_atomic_store(&flags[1], 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
    return;
  }
  const int b = blockIdx.x;
  rc[b] = timedWait(&flags[b], b == 0 ? timeout : 100 * timeout, &took[b]);
}

int main(int argc, char** argv) {
  const unsigned long long timeout = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 0;
  if (timeout == 0) {
    std::fprintf(stderr, "usage: timed_poll CYCLES (block 0's timeout, > 0)\n");
    return 3;
  }
  unsigned* flags = nullptr;
  int* rc = nullptr;
  unsigned long long* took = nullptr;
  if (hipMalloc(&flags, 2 * sizeof(unsigned)) != hipSuccess || hipMalloc(&rc, 2 * sizeof(int)) != hipSuccess ||
      hipMalloc(&took, 2 * sizeof(unsigned long long)) != hipSuccess ||
      hipMemset(flags, 0, 2 * sizeof(unsigned)) != hipSuccess)
    return 1;
  polls<<<3, 1>>>(flags, timeout, rc, took);
  int h_rc[2];
  unsigned long long h_took[2];
  if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(h_rc, rc, sizeof(h_rc), hipMemcpyDeviceToHost) != hipSuccess ||
      hipMemcpy(h_took, took, sizeof(h_took), hipMemcpyDeviceToHost) != hipSuccess)
    return 1;
  const bool timedOut = h_rc[0] == 1 && h_took[0] >= timeout && h_took[0] <= timeout + timeout / 16 + 2400;
  const bool saw = h_rc[1] == 0 && h_took[1] >= 2400 && h_took[1] <= 4800;  // the set at 1 µs, seen within 1 µs
  std::printf("timed_poll: block 0 rc %d after %llu cycles (timeout %llu), block 1 rc %d after %llu cycles: %s\n", h_rc[0],
              h_took[0], timeout, h_rc[1], h_took[1], timedOut && saw ? "PASS" : "FAIL");
  return timedOut && saw ? 0 : 1;
}
