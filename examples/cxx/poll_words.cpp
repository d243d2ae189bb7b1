// A lane may wait for a flag while polling other words in turn (MORI's
// ring-full wait re-reads the read pointer and the write pointer each
// round): its atomic loads repeat a cycle over several words, never the
// same word twice in a row. emud takes such a cycle (up to 8 words) for a
// spin on all its words: the lane waits for a write to any of them, so
// virtual time passes and the lane that sets the flag runs.
//   block 0 polls {flag, counter}, block 1 {flag, counter, other};
//   block 2 waits 1 µs (wall_clock64), sets the counter to 1, waits 1 µs more and
//   sets the flag.
// Each waiter records the counter it reads once the flag is up (1: the
// flag's release orders the counter's store before it) and when it saw
// the flag (not before block 2 set it). Not the last counter its loop
// read: a block may start after block 2 has set both words (blocks of a
// grid start up to tens of µs apart under emud explore's perturbation,
// as on hardware: examples/cxx/skew/cta_skew.cpp), and its loop then
// never reads the counter at all.
#include "common.hpp"

__global__ void pollWords(int* flag, int* counter, int* other, long long* seen) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 2) {
    long long t0 = wall_clock64();
    while (wall_clock64() - t0 < 100) {
    }
    __hip_atomic_store(counter, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    while (wall_clock64() - t0 < 200) {
    }
    seen[4] = wall_clock64();
    __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {
    (void)__hip_atomic_load(counter, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    if (blockIdx.x == 1) (void)__hip_atomic_load(other, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
  seen[2 * blockIdx.x] = __hip_atomic_load(counter, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  seen[2 * blockIdx.x + 1] = wall_clock64();
}

int main() {
  HIP_CHECK(hipSetDevice(0));
  int* words = nullptr;
  long long* seen = nullptr;
  HIP_CHECK(hipMalloc(&words, 3 * sizeof(int)));
  HIP_CHECK(hipMalloc(&seen, 5 * sizeof(long long)));
  HIP_CHECK(hipMemset(words, 0, 3 * sizeof(int)));
  HIP_CHECK(hipMemset(seen, 0, 5 * sizeof(long long)));
  pollWords<<<3, 64>>>(words, words + 1, words + 2, seen);
  HIP_CHECK(hipDeviceSynchronize());
  long long got[5] = {};
  HIP_CHECK(hipMemcpy(got, seen, sizeof got, hipMemcpyDeviceToHost));
  int errors = 0;
  for (int b = 0; b < 2; b++) {
    if (got[2 * b] != 1 || got[2 * b + 1] < got[4]) {
      std::printf("block %d: counter %lld (want 1), saw the flag at %lld (set at %lld)\n", b, got[2 * b], got[2 * b + 1], got[4]);
      errors++;
    }
  }
  std::printf("poll_words: %s\n", errors ? "FAIL" : "PASS");
  return errors ? 1 : 0;
}
