// Rank threads that meet at a pthread barrier before their HIP calls, as
// NCCL's example harness hands out its unique id: emud interposes the
// barrier (it waits in virtual time). A seed server must interpose it as
// the program's own link does, though the server's code never calls it:
// bound to the C library's, the first thread at the barrier would wait
// natively while holding its turn, and every seed would hang.
#include <hip/hip_runtime.h>
#include <pthread.h>

#include <cstdio>

constexpr int kThreads = 4;
static pthread_barrier_t barrier;
static int count[kThreads];

static void* rank(void* arg) {
  const int t = (int)(long)arg;
  pthread_barrier_wait(&barrier);
  if (hipSetDevice(t) != hipSuccess || hipGetDeviceCount(&count[t]) != hipSuccess) count[t] = -1;
  pthread_barrier_wait(&barrier);
  return nullptr;
}

int main() {
  pthread_barrier_init(&barrier, nullptr, kThreads);
  pthread_t th[kThreads];
  for (int t = 0; t < kThreads; t++) pthread_create(&th[t], nullptr, rank, (void*)(long)t);
  for (int t = 0; t < kThreads; t++) pthread_join(th[t], nullptr);
  pthread_barrier_destroy(&barrier);
  int bad = 0;
  for (int c : count) bad += c != 8;
  std::printf("barrier: %s\n", bad ? "FAIL" : "PASS");
  return bad != 0;
}
