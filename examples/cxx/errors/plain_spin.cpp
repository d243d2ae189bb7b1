// A lane that polls a flag with a plain load never sees it change: at -O2
// the compiler keeps the value in a register (s_sleep is no memory
// barrier), so on a GPU the kernel spins forever (a hang), and on emud
// the lane never calls in either, so virtual
// time stands still and nothing else runs. emud's spin watch ends the run
// after EMUD_SPIN_LIMIT of wall time (10s) as a hang (exit 2) naming the
// lane and its last device call:
//   plain_spin lane:   the lane polls with a plain load: the hang report;
//   plain_spin atomic: the same poll with __hip_atomic_load, the flag
//     raised by another kernel's atomic store: the lane sees it, PASS
//     (race-clean: a copy setting the flag would race the poll);
//   plain_spin clock:  a delay loop on clock64 (a read at the instant of
//     the last one is a read 20 ns later): it ends, PASS;
//   plain_spin host:   a host thread waits in its own code for a flag the
//     main thread sets after a hipDeviceSynchronize: natively that works, but emud
//     runs host threads in turns, so the waiter holds the turn and the
//     main thread never gets it back: the hang report names the waiter.
#include <atomic>
#include <cstring>
#include <thread>

#include "../common.hpp"

__global__ void waitPlain(const int* flag, int* seen) {
  if (threadIdx.x != 0) return;
  while (*flag == 0) __builtin_amdgcn_s_sleep(1);
  *seen = 1;
}

__global__ void waitAtomic(const int* flag, int* seen) {
  if (threadIdx.x != 0) return;
  while (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) == 0) __builtin_amdgcn_s_sleep(1);
  *seen = 1;
}

// setFlag raises the flag with an atomic store (atomic mode). Not a
// hipMemcpyAsync: a copy writes plain bytes, not an atomic word, and HIP
// orders it against no kernel on another stream, so a lane's atomic poll
// of the word it writes races it (EMUD_RACE=1 reports the pair).
__global__ void setFlag(int* flag) {
  if (threadIdx.x != 0) return;
  __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}

// delay spins for cycles of the shader clock and stores the time it
// took, in wall_clock64 ticks (10 ns).
__global__ void delay(long long cycles, long long* took) {
  if (threadIdx.x != 0) return;
  const long long w0 = wall_clock64(), t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  *took = wall_clock64() - w0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "clock") == 0) {
    HIP_CHECK(hipSetDevice(0));
    long long* took = nullptr;
    HIP_CHECK(hipMalloc(&took, sizeof(long long)));
    delay<<<1, 64>>>(24000, took);  // 10 µs at 2.4 GHz
    HIP_CHECK(hipDeviceSynchronize());
    long long got = 0;
    HIP_CHECK(hipMemcpy(&got, took, sizeof got, hipMemcpyDeviceToHost));
    // The loop ended and took at least its cycles at the top clock. No
    // upper bound: a wave descheduled mid-loop (time slicing, CWSR; PCT's
    // preemption in emud explore) or a shader clock below 2.4 GHz takes
    // longer on a GPU as well.
    const bool ok = got >= 1000;
    std::printf("plain_spin clock: 24000 cycles took %lld ns: %s\n", got * 10, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  }
  if (std::strcmp(mode, "host") == 0) {
    HIP_CHECK(hipSetDevice(0));
    void* big = nullptr;
    HIP_CHECK(hipMalloc(&big, 16 << 20));
    std::atomic<bool> ready{false};
    std::thread waiter([&] {
      while (!ready.load()) {
      }
    });
    HIP_CHECK(hipMemsetAsync(big, 0, 16 << 20, 0));
    HIP_CHECK(hipDeviceSynchronize());  // waits in virtual time: the waiter takes the turn and keeps it
    ready = true;
    waiter.join();
    std::printf("plain_spin host: the waiter saw the flag (FAIL: emud should have reported it)\n");
    return 1;
  }
  const bool plain = std::strcmp(mode, "lane") == 0;
  if (!plain && std::strcmp(mode, "atomic") != 0) {
    std::fprintf(stderr, "usage: plain_spin lane|atomic|clock|host\n");
    return 3;
  }
  HIP_CHECK(hipSetDevice(0));
  int *flag = nullptr, *seen = nullptr;
  HIP_CHECK(hipMalloc(&flag, sizeof(int)));
  HIP_CHECK(hipMalloc(&seen, sizeof(int)));
  HIP_CHECK(hipMemset(flag, 0, sizeof(int)));
  HIP_CHECK(hipMemset(seen, 0, sizeof(int)));
  hipStream_t waitStream, setStream;
  HIP_CHECK(hipStreamCreateWithFlags(&waitStream, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&setStream, hipStreamNonBlocking));
  if (plain)
    waitPlain<<<1, 64, 0, waitStream>>>(flag, seen);
  else
    waitAtomic<<<1, 64, 0, waitStream>>>(flag, seen);
  // The flag is set after other work on its stream (a 16 MiB memset),
  // so the lane is polling by then.
  void* big = nullptr;
  HIP_CHECK(hipMalloc(&big, 16 << 20));
  HIP_CHECK(hipMemsetAsync(big, 0, 16 << 20, setStream));
  static const int one = 1;
  if (plain)
    HIP_CHECK(hipMemcpyAsync(flag, &one, sizeof(int), hipMemcpyHostToDevice, setStream));
  else
    setFlag<<<1, 64, 0, setStream>>>(flag);
  HIP_CHECK(hipDeviceSynchronize());
  int got = 0;
  HIP_CHECK(hipMemcpy(&got, seen, sizeof(int), hipMemcpyDeviceToHost));
  if (got != 1) {
    std::printf("plain_spin %s: the lane did not see the flag (FAIL)\n", mode);
    return 1;
  }
  std::printf("plain_spin %s: PASS\n", mode);
  return 0;
}
