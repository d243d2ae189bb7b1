// Waits on volatile loads (argument mode), as MORI's cco benchmarks wait
// for their all-block barrier. A volatile load is made afresh each time
// and on a GPU sees what other waves write, so these are waits, not hangs;
// emud takes a lane's loop of volatile loads of device memory as a poll
// (capi/lane.c volatile_load) when the code is instrumented (emud c++'s
// default):
//   flag:    block 0's lane loops on a volatile load of a flag that block
//            1's lane sets with an atomic store after 1 µs: it sees it then;
//   barrier: 8 blocks of 64 lanes pass 4 rounds of an all-block barrier
//            (__syncthreads, then lane 0 fences, atomicInc's the arrival
//            count, the last arrival bumps the round word with a volatile
//            add, and the others loop on a volatile load of it);
//   never:   a volatile poll of a flag nobody sets: a hang report naming
//            the spin on a volatile load.
#include <cstdio>
#include <cstring>

#include "hip/hip_runtime.h"

__global__ void flagWait(int* flag, long long* seen) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    const long long t0 = wall_clock64();
    while (wall_clock64() - t0 < 100) {
    }
    __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  volatile int* f = flag;
  while (*f == 0) {
  }
  *seen = wall_clock64();
}

__global__ void blockBarrier(volatile unsigned int* counter, int rounds, int* passed) {
  const int nblocks = gridDim.x;
  for (int i = 0; i < rounds; i++) {
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      const unsigned int c = atomicInc((unsigned int*)counter, 0xffffffffu);
      if (c == (unsigned int)(nblocks * (i + 1) - 1)) counter[1] += 1u;
      while (counter[1] != (unsigned int)(i + 1)) {
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(passed, 1);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int* words = nullptr;
  long long* seen = nullptr;
  if (hipMalloc(&words, 16 * sizeof(int)) != hipSuccess || hipMalloc(&seen, sizeof(long long)) != hipSuccess ||
      hipMemset(words, 0, 16 * sizeof(int)) != hipSuccess)
    return 1;
  if (!std::strcmp(mode, "flag") || !std::strcmp(mode, "never")) {
    flagWait<<<!std::strcmp(mode, "flag") ? 2 : 1, 64>>>(words, seen);
    long long got = 0;
    if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(&got, seen, sizeof got, hipMemcpyDeviceToHost) != hipSuccess)
      return 1;
    const bool ok = got >= 100;  // set at 1 µs: 100 ticks of 10 ns
    std::printf("volatile_poll %s: flag seen at %lld ns: %s\n", mode, got * 10, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  }
  if (!std::strcmp(mode, "barrier")) {
    blockBarrier<<<8, 64>>>((volatile unsigned int*)words, 4, words + 4);
    int got[5] = {};
    if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(got, words, sizeof got, hipMemcpyDeviceToHost) != hipSuccess)
      return 1;
    const bool ok = got[0] == 32 && got[1] == 4 && got[4] == 8;
    std::printf("volatile_poll barrier: %d arrivals, round %d, %d blocks through: %s\n", got[0], got[1], got[4],
                ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  }
  std::fprintf(stderr, "usage: volatile_poll flag|barrier|never\n");
  return 3;
}
