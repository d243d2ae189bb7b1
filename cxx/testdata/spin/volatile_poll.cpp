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
//            the spin on a volatile load;
//   publish: block 1's lane stores 8 words of data, fences and sets the
//            flag with a volatile store; block 0's lane polls it and
//            reads the data: correct, no race under EMUD_RACE=1 (a
//            volatile access is a relaxed atomic at system scope on
//            AMDGPU, and emud's detector takes it as an atomic);
//   late:    the same with the flag set before the data (the bug): under
//            EMUD_RACE=1 a race on the data words;
//   plain:   the flag set by a plain store, polled by volatile loads: a
//            race under EMUD_RACE=1 (a plain store is not atomic).
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

// publishWait: block 1 publishes data[0..8) and the flag (data[8]) in
// the order mode says; block 0 waits for the flag and sums the data.
__global__ void publishWait(int* data, int mode, int* sum) {
  if (threadIdx.x != 0) return;
  volatile int* flag = data + 8;
  if (blockIdx.x == 1) {
    if (mode == 1) *flag = 1;  // late: the flag before the data
    for (int i = 0; i < 8; i++) data[i] = i + 1;
    __threadfence();
    if (mode == 0) *flag = 1;
    if (mode == 2) data[8] = 1;  // plain: not a volatile store
    return;
  }
  while (*flag == 0) {
  }
  __threadfence();
  int s = 0;
  for (int i = 0; i < 8; i++) s += data[i];
  *sum = s;
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
  const int pm = !std::strcmp(mode, "publish") ? 0 : !std::strcmp(mode, "late") ? 1 : !std::strcmp(mode, "plain") ? 2 : -1;
  if (pm >= 0) {
    publishWait<<<2, 64>>>(words, pm, words + 12);
    int got = 0;
    if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(&got, words + 12, sizeof got, hipMemcpyDeviceToHost) != hipSuccess)
      return 1;
    // late may read the data before it lands: its sum is the schedule's.
    const bool ok = pm == 1 || got == 36;
    std::printf("volatile_poll %s: sum %d: %s\n", mode, got, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  }
  std::fprintf(stderr, "usage: volatile_poll flag|barrier|never|publish|late|plain\n");
  return 3;
}
