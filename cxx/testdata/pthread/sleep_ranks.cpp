// Four ranks that each sleep (sleep_for, 100 µs times rank + 1) and
// yield between their HIP calls, as threads or (argument "fork") as
// forked rank processes: a rank process's sleeps and yields pass in
// virtual time through its proxy as a rank thread's do (capi/psleep.c),
// so both give one digest.
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include "hip/hip_runtime.h"
__global__ void k(int* p, int v) { *p = v; }
static int rank(int r) {
  if (hipSetDevice(r) != hipSuccess) return 1;
  int* p = nullptr;
  if (hipMalloc(&p, sizeof(int)) != hipSuccess) return 1;
  std::this_thread::sleep_for(std::chrono::microseconds(100 * (r + 1)));
  k<<<1, 1>>>(p, r);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  std::this_thread::yield();
  int v = -1;
  hipMemcpy(&v, p, sizeof v, hipMemcpyDeviceToHost);
  return v == r ? 0 : 1;
}
int main(int argc, char** argv) {
  const bool fork_ = argc > 1 && !strcmp(argv[1], "fork");
  int bad = 0;
  if (fork_) {
    std::vector<pid_t> ps;
    for (int r = 0; r < 4; r++) { pid_t p = fork(); if (p == 0) _exit(rank(r)); ps.push_back(p); }
    for (pid_t p : ps) { int st = 0; waitpid(p, &st, 0); bad += !WIFEXITED(st) || WEXITSTATUS(st); }
  } else {
    std::vector<std::thread> ts; std::vector<int> rc(4);
    for (int r = 0; r < 4; r++) ts.emplace_back([&rc, r] { rc[r] = rank(r); });
    for (auto& t : ts) t.join();
    for (int x : rc) bad += x;
  }
  std::printf("sleep_ranks %s: %s\n", fork_ ? "fork" : "threads", bad ? "FAIL" : "PASS");
  return bad;
}
