// Ranks as threads or as forked processes ("fork"), each launching a grid
// of 12 blocks of 64 lanes that add to one counter between two block
// barriers: with EMUD_RESIDENT_LANES under the grids' lanes, later blocks
// start as earlier ones retire (capi's resident.go), and the run is the
// same, one digest, with the ranks as threads or as processes (cxx
// TestGridBudgetForkDigest).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

using namespace mori::cco;

constexpr int kRanks = 4, kBlocks = 12, kThreads = 64;

__global__ void count(unsigned* c) {
  __syncthreads();
  atomicAdd(c, blockIdx.x + 1);
  __syncthreads();
}

int rankMain(int rank, const ccoUniqueId& id) {
  ccoComm* comm = nullptr;
  unsigned* c = nullptr;
  unsigned v = 0;
  if (hipSetDevice(rank) != hipSuccess || ccoCommCreate(id, kRanks, rank, 0, &comm) != 0) return 1;
  if (hipMalloc(&c, sizeof *c) != hipSuccess || hipMemset(c, 0, sizeof *c) != hipSuccess) return 1;
  count<<<kBlocks, kThreads>>>(c);
  if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(&v, c, sizeof v, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  if (ccoCommDestroy(comm) != 0) return 1;
  return v == (unsigned)kThreads * kBlocks * (kBlocks + 1) / 2 ? 0 : 1;
}

int main(int argc, char** argv) {
  const bool forked = argc > 1 && !std::strcmp(argv[1], "fork");
  ccoUniqueId id;
  if (ccoGetUniqueId(&id) != 0) return 1;
  int failed = 0;
  if (forked) {
    pid_t kids[kRanks];
    for (int r = 0; r < kRanks; r++)
      if ((kids[r] = fork()) == 0) _exit(rankMain(r, id));
    for (int r = 0; r < kRanks; r++) {
      int st = 0;
      waitpid(kids[r], &st, 0);
      failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
  } else {
    std::vector<int> rc(kRanks);
    std::vector<std::thread> ts;
    for (int r = 0; r < kRanks; r++) ts.emplace_back([&, r] { rc[r] = rankMain(r, id); });
    for (auto& t : ts) t.join();
    for (int e : rc) failed += e != 0;
  }
  std::printf("grid_budget: %d/%d ranks passed\n", kRanks - failed, kRanks);
  return failed ? 1 : 0;
}
