// A host thread that waits in its own code for another host thread, or
// for a kernel, by argument (capi/psleep.c): the waits pass in virtual
// time, where before the waiting thread held its turn and the run was a
// spin hang.
//   sleep:  thread 1 polls an atomic flag with sleep_for(1 ms) between
//           loads; the main thread sets it after a kernel;
//   yield:  the same with std::this_thread::yield();
//   spin:   the same with nothing between the loads;
//   pinned: the main thread polls a volatile word of hipHostMalloc memory
//           that a kernel's lane sets after 2 µs;
//   never:  the spin on a flag nobody sets: a hang report naming the poll.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "hip/hip_runtime.h"

std::atomic<int> ready{0};

__global__ void store5(int* p) { *p = 5; }

__global__ void setLater(int* flag) {
  const long long t0 = wall_clock64();
  while (wall_clock64() - t0 < 200) {
  }
  __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!std::strcmp(mode, "pinned")) {
    int* flag = nullptr;
    if (hipHostMalloc(&flag, sizeof(int), 0) != hipSuccess) return 1;
    *flag = 0;
    setLater<<<1, 1>>>(flag);
    while (*(volatile int*)flag == 0) {
    }
    std::printf("poll pinned: flag seen: PASS\n");
    return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
  }
  const bool sleep = !std::strcmp(mode, "sleep"), yield = !std::strcmp(mode, "yield");
  if (!sleep && !yield && std::strcmp(mode, "spin") && std::strcmp(mode, "never")) {
    std::fprintf(stderr, "usage: poll sleep|yield|spin|pinned|never\n");
    return 3;
  }
  int* p = nullptr;
  if (hipMalloc(&p, sizeof(int)) != hipSuccess) return 1;
  int v = 0;
  std::thread t([&] {
    if (hipSetDevice(1) != hipSuccess) return;
    while (!ready.load()) {
      if (sleep) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (yield) std::this_thread::yield();
    }
    if (hipMemcpy(&v, p, sizeof v, hipMemcpyDeviceToHost) != hipSuccess) v = -1;
  });
  store5<<<1, 1>>>(p);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  if (std::strcmp(mode, "never")) ready.store(1);
  t.join();
  std::printf("poll %s: %d: %s\n", mode, v, v == 5 ? "PASS" : "FAIL");
  return v == 5 ? 0 : 1;
}
