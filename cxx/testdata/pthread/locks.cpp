// Host threads that hand a device buffer over with POSIX semaphores,
// read-write locks (std::shared_mutex), spin locks, a spin lock of the
// program's own (std::atomic_flag), a mutex polled under, C++20
// semaphores and barriers, and std::call_once (capi/psync.c, pmutex.c,
// psleep.c). Rank 0 fills GPU 0's buffer (a copy and a kernel, each an
// emud call that waits in virtual time), holding the lock where the mode
// has one (taken before the others try it: a std::latch); ranks 1..3
// wait for it, then copy the buffer back and check it. Before, each of these (but the C++20 ones) held the waiting
// thread's turn in glibc's own wait or in the program's loop, and the
// run was a spin hang, or, under EMUD_RACE=1, ran on with no report.
// By argument (and a second, "early": the main thread makes no HIP call
// before it starts the threads, so each thread's first wait begins
// natively, before the emulation adopts it, and is waited in slices
// until then: lane.c emud_early_unattached):
//   sem, rwlock, shared, spin, flag, mutex, trylock, cv, csem, barrier,
//   once: the handovers, each correct;
//   sem_never:  the readers wait on a semaphore nobody posts (a hang);
//   spin_never: rank 0 never unlocks its spin lock (a hang);
//   sem_racy:   the sem handover's twin whose readers do not wait (a
//               data race under EMUD_RACE=1).
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <latch>
#include <mutex>
#include <pthread.h>
#include <semaphore.h>
#include <semaphore>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"

constexpr int kRanks = 4, kWords = 64;

std::string mode;
int* shared = nullptr;  // GPU 0's buffer
sem_t psem;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
std::shared_mutex smu;
pthread_spinlock_t spin;
std::atomic_flag flag = ATOMIC_FLAG_INIT;
std::mutex mu;
std::condition_variable cv;
std::counting_semaphore<kRanks> csem(0);
std::barrier<> bar(kRanks);
std::once_flag once;
std::latch taken(kRanks);  // rank 0 holds its lock before the readers try it
bool ready = false;  // read and written under the mode's lock
std::atomic<int> good{0};

__global__ void scale(int* p) { p[threadIdx.x] *= 7; }

void publish() {
  if (hipSetDevice(0) != hipSuccess) return;
  if (!shared && hipMalloc(&shared, kWords * sizeof(int)) != hipSuccess) return;  // early: the first call
  std::vector<int> v(kWords);
  for (int i = 0; i < kWords; i++) v[i] = i;
  if (hipMemcpy(shared, v.data(), kWords * sizeof(int), hipMemcpyHostToDevice) != hipSuccess) return;
  scale<<<1, kWords>>>(shared);
  (void)hipDeviceSynchronize();
}

void check(int r) {
  std::vector<int> v(kWords);
  if (hipSetDevice(r) != hipSuccess) return;
  if (hipMemcpy(v.data(), shared, kWords * sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) return;
  bool ok = true;
  for (int i = 0; i < kWords; i++) ok = ok && v[i] == 7 * i;
  good += ok;
}

// Is the buffer published? Read under the mode's lock, in a loop.
bool polled() {
  bool rd = false;
  if (mode == "rwlock") {
    pthread_rwlock_rdlock(&rw);
    rd = ready;
    pthread_rwlock_unlock(&rw);
  } else if (mode == "shared") {
    std::shared_lock<std::shared_mutex> g(smu);
    rd = ready;
  } else if (mode == "spin") {
    pthread_spin_lock(&spin);
    rd = ready;
    pthread_spin_unlock(&spin);
  } else if (mode == "flag") {
    while (flag.test_and_set(std::memory_order_acquire)) {
    }
    rd = ready;
    flag.clear(std::memory_order_release);
  } else if (mode == "mutex") {
    std::lock_guard<std::mutex> g(mu);
    rd = ready;
  } else if (mode == "trylock") {
    while (!mu.try_lock()) {
    }
    rd = ready;
    mu.unlock();
  }
  return rd;
}

void rank(int r) {
  if (mode == "once") {
    std::call_once(once, publish);
    check(r);
    return;
  }
  const bool polling = mode == "rwlock" || mode == "shared" || mode == "spin" || mode == "flag" || mode == "mutex" || mode == "trylock";
  if (r == 0) {
    if (mode == "rwlock") pthread_rwlock_wrlock(&rw);
    if (mode == "shared") smu.lock();
    if (mode == "spin" || mode == "spin_never") pthread_spin_lock(&spin);
    if (mode == "flag")
      while (flag.test_and_set(std::memory_order_acquire)) {
      }
    if (mode == "mutex" || mode == "trylock") mu.lock();
    taken.count_down();
    publish();
    ready = true;
    if (mode == "rwlock") pthread_rwlock_unlock(&rw);
    if (mode == "shared") smu.unlock();
    if (mode == "spin") pthread_spin_unlock(&spin);
    if (mode == "flag") flag.clear(std::memory_order_release);
    if (mode == "mutex" || mode == "trylock") mu.unlock();
    if (mode == "cv") {
      {
        std::lock_guard<std::mutex> g(mu);
        ready = true;
      }
      cv.notify_all();
    }
    if (mode == "sem")
      for (int i = 1; i < kRanks; i++) sem_post(&psem);
    if (mode == "csem") csem.release(kRanks - 1);
    if (mode == "barrier") bar.arrive_and_wait();
  } else {
    taken.arrive_and_wait();
    if (mode == "sem" || mode == "sem_never") sem_wait(&psem);
    if (mode == "csem") csem.acquire();
    if (mode == "barrier") bar.arrive_and_wait();
    if (mode == "cv") {
      std::unique_lock<std::mutex> g(mu);
      cv.wait(g, [] { return ready; });
    }
    if (mode == "spin_never") {
      pthread_spin_lock(&spin);
      pthread_spin_unlock(&spin);
    }
    if (polling)
      while (!polled()) {
      }
  }
  check(r);
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "sem";
  // "early": the threads start before the program's first HIP call, so
  // that the ranks' first waits begin natively, before the emulation
  // adopts them (rank 0's hipSetDevice builds it).
  const bool early = argc > 2 && !std::strcmp(argv[2], "early");
  if (!early && (hipSetDevice(0) != hipSuccess || hipMalloc(&shared, kWords * sizeof(int)) != hipSuccess)) return 1;
  sem_init(&psem, 0, 0);
  pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; r++) threads.emplace_back(rank, r);
  for (auto& t : threads) t.join();
  std::printf("locks %s: %d of %d ranks read the buffer: %s\n", mode.c_str(), good.load(), kRanks,
              good.load() == kRanks ? "PASS" : "FAIL");
  return good.load() == kRanks ? 0 : 1;
}
