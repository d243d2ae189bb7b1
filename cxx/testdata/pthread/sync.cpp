// Host threads that coordinate with std::mutex and std::condition_variable
// (pthread mutexes and condition variables: capi/pmutex.c), by argument:
//   cv:       rank 0 makes the unique id, fills a device buffer and
//             notifies; ranks 1..3 wait on the condition variable, then
//             read the buffer and make the comm; each holds one mutex
//             across a launch and its hipDeviceSynchronize. Before, the
//             first waiter held its turn in pthread_cond_wait and the run
//             was a spin hang.
//   timeout:  a wait_for nobody notifies ends after its 50 ms as timed
//             out (virtual time, then what is left of the wall-clock
//             deadline, which the C++ library checks); the thread goes on.
//   promise:  rank 0 fills the buffer and hands its pointer to ranks 1..3
//             through std::promise (a futex wait in the C++ library);
//   latch:    4 ranks count a std::latch down and wait on it, each
//             after a kernel of its own (C++20);
//   racy:     the promise's twin without it: thread 1 reads the buffer
//             while the main thread fills it, with nothing between them
//             (a data race under EMUD_RACE=1);
//   lockloop: a loop of a lock, a hipDeviceSynchronize with nothing to
//             wait for and an unlock, for a flag nobody sets: a poll of
//             the thread's own (a cycle of locks that see the same each
//             time: psleep.c), so virtual time passes, and the
//             watchdog's hang names its line, under EMUD_RACE=1 too;
//   atexit:   a global object's destructor, which runs after the end of
//             run, locks a mutex, yields and sleeps: natively, as the
//             emulation has ended (under EMUD_RACE=1 too);
//   deadlock: two threads take two mutexes in opposite orders, meeting at
//             a pthread barrier between: a hang report naming the
//             mutexes' waits and their owners.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <future>
#include <latch>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

using namespace mori::cco;

std::mutex mu, held;
std::condition_variable cv;
bool ready = false;
ccoUniqueId uid;
int* shared = nullptr;  // GPU 0's buffer, filled by rank 0
int done = 0, good = 0;

__global__ void bump(int* p) { *p += 1; }

void rank(int r, int n) {
  if (hipSetDevice(r) != hipSuccess) return;
  if (r == 0) {
    if (ccoGetUniqueId(&uid) != 0 || hipMalloc(&shared, 64 * sizeof(int)) != hipSuccess) return;
    std::vector<int> v(64);
    for (int i = 0; i < 64; i++) v[i] = 7 * i;
    if (hipMemcpy(shared, v.data(), 64 * sizeof(int), hipMemcpyHostToDevice) != hipSuccess) return;
    {
      std::lock_guard<std::mutex> g(mu);
      ready = true;
    }
    cv.notify_all();
  } else {
    std::unique_lock<std::mutex> g(mu);
    cv.wait(g, [] { return ready; });
  }
  std::vector<int> v(64);
  if (hipMemcpy(v.data(), shared, 64 * sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) return;
  bool ok = true;
  for (int i = 0; i < 64; i++) ok = ok && v[i] == 7 * i;
  ccoComm* comm = nullptr;
  if (ccoCommCreate(uid, n, r, 0, &comm) != 0) return;
  int* p = nullptr;
  if (hipMalloc(&p, sizeof(int)) != hipSuccess || hipMemset(p, 0, sizeof(int)) != hipSuccess) return;
  {
    std::lock_guard<std::mutex> g(held);  // held across emud calls that wait
    bump<<<1, 1>>>(p);
    if (hipDeviceSynchronize() != hipSuccess) return;
    int got = 0;
    if (hipMemcpy(&got, p, sizeof got, hipMemcpyDeviceToHost) != hipSuccess) return;
    ok = ok && got == 1;
    done++;
    good += ok;
  }
  ccoBarrierAll(comm);
  ccoCommDestroy(comm);
}

// Made before main, so destroyed after the end of run (its exit handler
// was registered at the first emud call, later).
struct Late {
  bool used = false;
  ~Late() {
    if (!used) return;
    std::lock_guard<std::mutex> g(mu);
    std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::microseconds(10));
    std::printf("sync atexit: the destructor ran\n");
  }
} late;

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!std::strcmp(mode, "cv")) {
    const int n = 4;
    std::vector<std::thread> ts;
    for (int r = 0; r < n; r++) ts.emplace_back(rank, r, n);
    for (auto& t : ts) t.join();
    std::printf("sync cv: %d of %d ranks through, %d checked: %s\n", done, n, good, good == n ? "PASS" : "FAIL");
    return good == n ? 0 : 1;
  }
  if (!std::strcmp(mode, "timeout")) {
    int* p = nullptr;
    if (hipMalloc(&p, sizeof(int)) != hipSuccess) return 1;
    bool timedOut = false;
    std::thread t([&] {
      if (hipSetDevice(1) != hipSuccess) return;
      std::unique_lock<std::mutex> g(mu);
      timedOut = !cv.wait_for(g, std::chrono::milliseconds(50), [] { return ready; });
    });
    t.join();
    hipEvent_t e;
    if (hipEventCreate(&e) != hipSuccess) return 1;
    std::printf("sync timeout: %s: %s\n", timedOut ? "timed out" : "woken", timedOut ? "PASS" : "FAIL");
    return timedOut ? 0 : 1;
  }
  if (!std::strcmp(mode, "promise")) {
    std::promise<int*> pr;
    std::shared_future<int*> fut = pr.get_future().share();
    int seen = 0;
    std::vector<std::thread> ts;
    for (int r = 1; r < 4; r++)
      ts.emplace_back([&, r] {
        if (hipSetDevice(r) != hipSuccess) return;
        int* buf = fut.get();
        std::vector<int> v(64);
        if (hipMemcpy(v.data(), buf, 64 * sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) return;
        bool ok = true;
        for (int i = 0; i < 64; i++) ok = ok && v[i] == 3 * i;
        seen += ok;
      });
    int* buf = nullptr;
    std::vector<int> v(64);
    for (int i = 0; i < 64; i++) v[i] = 3 * i;
    if (hipMalloc(&buf, 64 * sizeof(int)) != hipSuccess ||
        hipMemcpy(buf, v.data(), 64 * sizeof(int), hipMemcpyHostToDevice) != hipSuccess)
      return 1;
    pr.set_value(buf);
    for (auto& t : ts) t.join();
    std::printf("sync promise: %d of 3 ranks read the buffer: %s\n", seen, seen == 3 ? "PASS" : "FAIL");
    return seen == 3 ? 0 : 1;
  }
  if (!std::strcmp(mode, "racy")) {
    int* buf = nullptr;
    if (hipMalloc(&buf, 64 * sizeof(int)) != hipSuccess) return 1;
    std::thread t([buf] {
      std::vector<int> v(64);
      if (hipSetDevice(1) == hipSuccess) (void)hipMemcpy(v.data(), buf, 64 * sizeof(int), hipMemcpyDeviceToHost);
    });
    std::vector<int> v(64, 3);
    if (hipMemcpy(buf, v.data(), 64 * sizeof(int), hipMemcpyHostToDevice) != hipSuccess) return 1;
    t.join();
    std::printf("sync racy: done\n");
    return 0;
  }
  if (!std::strcmp(mode, "latch")) {
    std::latch all(4);
    int through = 0;
    std::vector<std::thread> ts;
    for (int r = 0; r < 4; r++)
      ts.emplace_back([&, r] {
        int* p = nullptr;
        if (hipSetDevice(r) != hipSuccess || hipMalloc(&p, sizeof(int)) != hipSuccess) return;
        bump<<<1, 1>>>(p);
        if (hipDeviceSynchronize() != hipSuccess) return;
        all.arrive_and_wait();
        through++;
      });
    for (auto& t : ts) t.join();
    std::printf("sync latch: %d of 4 through: %s\n", through, through == 4 ? "PASS" : "FAIL");
    return through == 4 ? 0 : 1;
  }
  if (!std::strcmp(mode, "atexit")) {
    int* p = nullptr;
    if (hipMalloc(&p, sizeof(int)) != hipSuccess) return 1;
    late.used = true;
    std::printf("sync atexit: main returns\n");
    return 0;
  }
  if (!std::strcmp(mode, "lockloop")) {
    for (;;) {
      std::lock_guard<std::mutex> g(mu);
      if (ready) break;
      if (hipDeviceSynchronize() != hipSuccess) return 1;
    }
    return 0;
  }
  if (!std::strcmp(mode, "deadlock")) {
    std::mutex a, b;
    pthread_barrier_t both;
    pthread_barrier_init(&both, nullptr, 2);
    auto take = [&both](std::mutex& x, std::mutex& y, int dev) {
      if (hipSetDevice(dev) != hipSuccess) return;
      std::lock_guard<std::mutex> g1(x);
      pthread_barrier_wait(&both);  // each holds its first
      std::lock_guard<std::mutex> g2(y);
    };
    std::thread t1(take, std::ref(a), std::ref(b), 0), t2(take, std::ref(b), std::ref(a), 1);
    t1.join();
    t2.join();
    std::printf("sync deadlock: no deadlock: FAIL\n");
    return 1;
  }
  std::fprintf(stderr, "usage: sync cv|timeout|promise|racy|latch|atexit|lockloop|deadlock\n");
  return 3;
}
