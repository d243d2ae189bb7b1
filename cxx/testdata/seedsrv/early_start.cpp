// Threads the main thread starts before any HIP call, the first of which
// calls HIP at once: its call builds the emulation while the main thread
// is still starting the others, and then joins them. Whichever side of the
// build each create and join falls on, every thread is a host thread and
// the run ends: a thread made while the build adopted the early ones must
// not be left out of it, and a join of an adopted thread must not wait
// natively while the main thread holds its first turn.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <thread>
#include <vector>

int main() {
  constexpr int kThreads = 16;
  int count[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++)
    threads.emplace_back([&count, t] {
      if (hipSetDevice(t % 8) != hipSuccess || hipGetDeviceCount(&count[t]) != hipSuccess) count[t] = -1;
    });
  for (auto& th : threads) th.join();
  int bad = 0;
  for (int c : count) bad += c != 8;
  std::printf("early_start: %s\n", bad ? "FAIL" : "PASS");
  return bad != 0;
}
