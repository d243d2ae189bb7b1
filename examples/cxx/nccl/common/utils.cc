// The rank harness of emud's NCCL examples (utils.h).
#include "utils.h"

#include <pthread.h>

#include <vector>

namespace {
struct Start {
  void (*body)(RankArgs*);
  RankArgs* args;
};

void* rankMain(void* p) {
  Start* s = static_cast<Start*>(p);
  s->body(s->args);
  return nullptr;
}
}  // namespace

int run_example(int argc, char* argv[], const char* name, void (*body)(RankArgs*)) {
  int nDev = 0;
  CUDACHECK(cudaGetDeviceCount(&nDev));
  int nRanks = argc > 1 ? std::atoi(argv[1]) : nDev;
  if (nRanks < 1 || nRanks > nDev) {
    std::fprintf(stderr, "%s: %d ranks asked, %d devices\n", name, nRanks, nDev);
    return 1;
  }
  // The unique id is made before the rank threads start, so no rank waits
  // in its own code for another (the ranks' broadcast of it, in one
  // process).
  ncclUniqueId id;
  NCCLCHECK(ncclGetUniqueId(&id));
  std::vector<RankArgs> args(nRanks);
  std::vector<Start> starts(nRanks);
  std::vector<pthread_t> threads(nRanks);
  for (int r = 0; r < nRanks; r++) {
    args[r] = RankArgs{id, r, nRanks, r, 0};
    starts[r] = Start{body, &args[r]};
    if (pthread_create(&threads[r], nullptr, rankMain, &starts[r]) != 0) {
      std::fprintf(stderr, "%s: pthread_create failed\n", name);
      return 1;
    }
  }
  int errors = 0;
  for (int r = 0; r < nRanks; r++) {
    pthread_join(threads[r], nullptr);
    errors += args[r].errors;
  }
  if (errors) {
    std::printf("%s: FAIL (%d wrong elements)\n", name, errors);
    return 1;
  }
  std::printf("%s: PASS (%d ranks)\n", name, nRanks);
  return 0;
}
