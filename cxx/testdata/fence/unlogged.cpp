// A store that lane code makes where no access log sees it (a call of the
// C library's memcpy or memset, or code built without -fsanitize=thread:
// store_flag.cpp) must still wake a lane that polls the word, at the
// storing lane's fence, as a GPU's would be seen. A fence wakes every
// watcher only when some store since the last such wake went unlogged
// (capi's lanes.go fenceWakesAll): this program fails if one of those
// stores is not known as unlogged.
//
// Block 0 polls the flag, then acknowledges it. Block 1 waits 1 µs,
// fences (the first fence after the host's calls wakes every watcher),
// waits 1 µs more (so the poll is parked first), stores the flag the way
// argv[1] says, fences
// and waits 10 µs of clock reads before it reads the acknowledgement:
// had the fence not woken the poller, it would still be parked (the run
// is never quiescent while block 1 reads the clock) and the
// acknowledgement 0.
//
//   unlogged memcpy | memset | plain   (plain: store_flag.cpp's store)
#include <cstdio>
#include <cstring>

#include "hip/hip_runtime.h"

void storeFlag(unsigned* flag);  // store_flag.cpp, or the plain store below

__device__ void delay(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void pollAndStore(unsigned* flag, unsigned* ack, unsigned* seen, int how, size_t n) {
  if (blockIdx.x == 0) {
    while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {
    }
    __hip_atomic_store(ack, 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    return;
  }
  delay(1 * 2400);  // 1 µs at clock64's 2.4 GHz
  // A fence with nothing unlogged since the host's last call woke every
  // watcher: the next one wakes them only for the store below.
  __threadfence();
  delay(1 * 2400);
  const unsigned one = 1;
  if (how == 0) {
    std::memcpy(flag, &one, n);  // n from the host: a call, not an inlined store
  } else if (how == 1) {
    std::memset(flag, 1, n);
  } else {
    storeFlag(flag);
  }
  __threadfence();
  delay(10 * 2400);
  *seen = __hip_atomic_load(ack, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "";
  const int h = !std::strcmp(how, "memcpy") ? 0 : !std::strcmp(how, "memset") ? 1 : !std::strcmp(how, "plain") ? 2 : -1;
  if (h < 0) {
    std::fprintf(stderr, "unlogged: say memcpy, memset or plain\n");
    return 2;
  }
  unsigned *flag = nullptr, *ack = nullptr, *seen = nullptr;
  if (hipMalloc(&flag, 4) != hipSuccess || hipMalloc(&ack, 4) != hipSuccess || hipMalloc(&seen, 4) != hipSuccess) return 1;
  if (hipMemset(flag, 0, 4) != hipSuccess || hipMemset(ack, 0, 4) != hipSuccess || hipMemset(seen, 0, 4) != hipSuccess)
    return 1;
  pollAndStore<<<2, 1>>>(flag, ack, seen, h, h == 1 ? 1 : 4);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  unsigned got = 0;
  if (hipMemcpy(&got, seen, 4, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  std::printf("unlogged %s: %s (acknowledged %u)\n", how, got == 1 ? "PASS" : "FAIL", got);
  return got == 1 ? 0 : 1;
}
