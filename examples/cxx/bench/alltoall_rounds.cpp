// alltoall_put.cpp's all-to-all, repeated: 8 ranks, one lane per peer,
// each round a 64 KiB put with a remote signal, a quiet and a wait for the
// peer's round-th signal, for argv[1] rounds (1) in one kernel. `emud
// bench` runs it at two round counts and divides the difference, so the
// per-round figure leaves out what a run pays once (process start, the
// node, comms, windows, the host's fill and check), and sets it beside
// the same kernel in Go (bench/cxx.go), whose emulated end time must be
// the same.
#include <cstdlib>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64 << 10;

__global__ void alltoallRounds(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes, int rounds) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int t = threadIdx.x;
  if (t >= n) return;
  const int peer = (me + 1 + t) % n;
  for (int r = 1; r <= rounds; r++) {
    sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, peer % nq);
    sdma.quiet(peer);
    sdma.waitSignal(peer, me % nq, (uint64_t)r);
  }
}

int rounds = 1;

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes);
  alltoallRounds<<<1, kRanks>>>(r.dc, r.sendWin, r.recvWin, kBytes, rounds);
  HIP_CHECK(hipDeviceSynchronize());
  int bad = 0;
  for (int p = 0; p < nRanks; p++) bad += r.check(p, p, rank);
  return bad;
}

int main(int argc, char** argv) {
  if (argc > 1) rounds = std::atoi(argv[1]);
  if (rounds < 1) {
    std::fprintf(stderr, "alltoall_rounds: rounds %s: need at least 1\n", argv[1]);
    return 2;
  }
  return finish("alltoall_rounds", runRanks(kRanks, rankMain));
}
