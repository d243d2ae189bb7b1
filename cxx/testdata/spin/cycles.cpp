// Block 0's lane waits for a flag while polling k words in turn (argument
// k, 1 to 16: the flag and k-1 counters that never change), so its atomic
// loads repeat a cycle of k loads; block 1's lane sets the flag after 1 µs
// of virtual time. emud sees a cycle of up to 8 loads as a spin (the lane
// waits for a write to one of the words); a longer one runs natively and
// never lets block 1 run (a spin hang after EMUD_SPIN_LIMIT).
#include <cstdio>
#include <cstdlib>

#include "hip/hip_runtime.h"

__global__ void cycle(int* words, int k, long long* seen) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    const long long t0 = wall_clock64();
    while (wall_clock64() - t0 < 100) {
    }
    __hip_atomic_store(&words[0], 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  int sum = 0;
  for (;;) {
    if (__hip_atomic_load(&words[0], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) != 0) break;
    for (int i = 1; i < k; i++) sum += __hip_atomic_load(&words[i], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
  seen[0] = wall_clock64();
  seen[1] = sum;
}

int main(int argc, char** argv) {
  const int k = argc > 1 ? std::atoi(argv[1]) : 0;
  if (k < 1 || k > 16) {
    std::fprintf(stderr, "usage: cycles K (1 to 16 words polled in turn)\n");
    return 3;
  }
  int* words = nullptr;
  long long* seen = nullptr;
  if (hipMalloc(&words, 16 * sizeof(int)) != hipSuccess || hipMalloc(&seen, 2 * sizeof(long long)) != hipSuccess ||
      hipMemset(words, 0, 16 * sizeof(int)) != hipSuccess)
    return 1;
  cycle<<<2, 64>>>(words, k, seen);
  long long got[2] = {};
  if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(got, seen, sizeof got, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  // The flag was set at 1 µs (100 ticks of 10 ns): the lane saw it then.
  const bool ok = got[0] >= 100 && got[1] == 0;
  std::printf("cycles %d: flag seen at %lld ns: %s\n", k, got[0] * 10, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
