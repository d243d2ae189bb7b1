// Ranks that make dev comms and destroy their comm straight after, with
// no barrier between (MORI's test_gda_modes does): the last rank to reach
// a ccoDevCommCreate's collective runs on and destroys its comm while the
// others still set up their queues, which take the peers' signal pools.
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

using namespace mori::cco;

constexpr int kRanks = 4;

static int rankMain(int rank, const ccoUniqueId& id) {
  if (hipSetDevice(rank) != hipSuccess) return 1;
  ccoComm* comm = nullptr;
  if (ccoCommCreate(id, kRanks, rank, 1ull << 30, &comm) != 0) return 1;
  ccoDevComm dc[3];
  for (auto& d : dc) {
    ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
    reqs.lsaBarrierCount = 2;
    if (ccoDevCommCreate(comm, &reqs, &d) != 0) {
      std::printf("rank %d: ccoDevCommCreate failed\n", rank);
      return 1;
    }
  }
  for (auto& d : dc)
    if (ccoDevCommDestroy(comm, &d) != 0) return 1;
  return ccoCommDestroy(comm);
}

int main() {
  ccoUniqueId id;
  if (ccoGetUniqueId(&id) != 0) return 1;
  std::vector<int> errors(kRanks);
  std::vector<std::thread> ts;
  for (int r = 0; r < kRanks; r++) ts.emplace_back([&, r] { errors[r] = rankMain(r, id); });
  for (auto& t : ts) t.join();
  for (int e : errors)
    if (e) {
      std::printf("mori runahead: FAIL\n");
      return 1;
    }
  std::printf("mori runahead: PASS\n");
  return 0;
}
