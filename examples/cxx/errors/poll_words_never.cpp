// A lane polls a flag and a counter in turn, and nothing ever writes
// either: its loads repeat a cycle over the two words, a spin on both
// (examples/cxx/poll_words.cpp), and with no write to wait for the run
// ends as a hang (exit 2) naming the two words, their values and the
// line of the load that closed the cycle.
#include "../common.hpp"

__global__ void pollNever(const int* flag, const int* counter, int* seen) {
  if (threadIdx.x != 0) return;
  int c = 0;
  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0)
    c = __hip_atomic_load(counter, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  *seen = c + 1;
}

int main() {
  HIP_CHECK(hipSetDevice(0));
  int *words = nullptr, *seen = nullptr;
  HIP_CHECK(hipMalloc(&words, 2 * sizeof(int)));
  HIP_CHECK(hipMalloc(&seen, sizeof(int)));
  HIP_CHECK(hipMemset(words, 0, 2 * sizeof(int)));
  HIP_CHECK(hipMemset(words + 1, 7, 1));
  pollNever<<<1, 64>>>(words, words + 1, seen);
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("poll_words_never: the lane left its loop (FAIL: nothing set the flag)\n");
  return 1;
}
