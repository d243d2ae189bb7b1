// A C++ program that posts about 4 M SDMA packets: 8 ranks, one lane per
// peer, each lane posting 5 small puts a round to its peer (3 with a
// remote signal: a COPY and an ATOMIC each; 2 without: a COPY), on the
// peer's queue, for kRounds rounds, then quieting and waiting in-kernel for
// the peer's 3·kRounds signals. 8 × 7 lanes × 8929 rounds gives 2.5 M
// copies and 1.5 M signals. `emud bench` times it (EMUD_SUMMARY=1 prints
// the packets the engines retired and the wall time).
#include <cstdlib>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64;  // per put
constexpr int kPuts = 5, kSignalled = 3;

__global__ void packets(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, int rounds) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int t = threadIdx.x;
  if (t >= n - 1) return;
  const int peer = (me + 1 + t) % n;
  const size_t block = kPuts * kBytes;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < kPuts; i++) {
      // my send block for the peer into my block of its receive buffer
      const size_t dst = me * block + i * kBytes, src = peer * block + i * kBytes;
      if (i < kSignalled)
        sdma.put<ccoCoopThread, false, true>(peer, recvWin, dst, sendWin, src, kBytes, peer % nq);
      else
        sdma.put<ccoCoopThread, false, false>(peer, recvWin, dst, sendWin, src, kBytes, peer % nq);
    }
  }
  sdma.quiet(peer);
  sdma.waitSignal(peer, me % nq, (uint64_t)kSignalled * rounds);
}

int rounds = 8929;

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kPuts * kBytes);
  packets<<<1, 64>>>(r.dc, r.sendWin, r.recvWin, rounds);
  HIP_CHECK(hipDeviceSynchronize());
  int bad = 0;
  for (int p = 0; p < nRanks; p++)
    if (p != rank) bad += r.check(p, p, rank);
  return bad;
}

int main(int argc, char** argv) {
  if (argc > 1) rounds = std::atoi(argv[1]);
  const int errors = runRanks(kRanks, rankMain);
  return finish("packets", errors);
}
