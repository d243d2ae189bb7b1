// The rank harness of emud's NCCL examples (utils.h).
#include "utils.h"

#include <pthread.h>

#include <vector>

namespace {
pthread_barrier_t barrier;
ncclUniqueId shared_id;

struct Rank {
  void* (*fn)(int, int, int, int);
  int rank, total;
  void* result;
};

void* rankMain(void* p) {
  Rank* r = static_cast<Rank*>(p);
  r->result = r->fn(r->rank, r->total, r->rank, 1);
  return nullptr;
}
}  // namespace

int util_broadcast(int root, int my_rank, ncclUniqueId* arg) {
  if (my_rank == root) shared_id = *arg;
  // Every rank waits here for the others (on emud too: a host thread may
  // block in its own code while no rank needs the emulator, as here,
  // before any rank has made a comm).
  int rc = pthread_barrier_wait(&barrier);
  if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) {
    std::fprintf(stderr, "util_broadcast: pthread_barrier_wait: %d\n", rc);
    return 1;
  }
  if (my_rank != root) *arg = shared_id;
  return 0;
}

int run_example(int argc, char* argv[], void* (*ncclExample)(int, int, int, int)) {
  (void)argc;
  (void)argv;
  int nDev = 0;
  CUDACHECK(cudaGetDeviceCount(&nDev));
  int total = nDev;
  if (const char* s = std::getenv("NTHREADS")) total = std::atoi(s);
  if (total < 1 || total > nDev) {
    std::fprintf(stderr, "run_example: NTHREADS=%d, %d devices\n", total, nDev);
    return 1;
  }
  pthread_barrier_init(&barrier, nullptr, total);
  std::vector<Rank> ranks(total);
  std::vector<pthread_t> threads(total);
  for (int r = 0; r < total; r++) {
    ranks[r] = Rank{ncclExample, r, total, nullptr};
    if (pthread_create(&threads[r], nullptr, rankMain, &ranks[r]) != 0) {
      std::fprintf(stderr, "run_example: pthread_create failed\n");
      return 1;
    }
  }
  int failed = 0;
  for (int r = 0; r < total; r++) {
    pthread_join(threads[r], nullptr);
    if (ranks[r].result != nullptr) failed++;
  }
  pthread_barrier_destroy(&barrier);
  return failed ? 1 : 0;
}
