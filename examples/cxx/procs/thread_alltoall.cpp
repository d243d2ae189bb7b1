// fork_alltoall.cpp's twin with its ranks as threads of one process (as
// MORI's in-process tests run them): the same calls from the same lines
// (alltoall_rank.hpp), so the same seed gives the same digest.
#include <thread>

#include "alltoall_rank.hpp"

int main(int argc, char** argv) {
  const int nRanks = procs::sysfsGPUs();
  const bool planted = procs::planted(argc, argv);
  mori::cco::ccoUniqueId uid;
  procs::uniqueId(&uid);
  std::vector<int> errors(nRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < nRanks; r++) threads.emplace_back([&, r] { errors[r] = procs::runRank(r, nRanks, uid, planted); });
  int failed = 0;
  for (int r = 0; r < nRanks; r++) {
    threads[r].join();
    if (errors[r]) failed++;
  }
  std::printf("thread_alltoall: %d/%d ranks passed\n", nRanks - failed, nRanks);
  return finish("thread_alltoall", failed);
}
