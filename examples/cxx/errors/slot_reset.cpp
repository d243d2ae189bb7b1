// A signal slot reset by the rank's own lane: each rank puts to its peer
// with a remote signal, waits for the peer's signal, then "resets" the
// peer's slot with a plain store for the next round, and waits for a
// running total of 2 after the second round. The reset erased a count,
// so the wait never returns: the hang report names the write that
// lowered the slot, by the lane and its store's own line (a lane's
// stores enter the slot's write history; before, the reset was in no
// history, or was blamed on whichever wave next announced memory).
#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 4096;

__global__ void twoRounds(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = 1 - me;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * kBytes, sendWin, peer * kBytes, kBytes, 0);
  sdma.waitSignal(peer, 0, 1);
  sdma.quiet(peer);
  dc.sdma.signalBuf[peer * dc.sdma.sdmaNumQueue] = 0;  // the bug: the slot keeps a running total
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * kBytes, sendWin, peer * kBytes, kBytes, 0);
  sdma.waitSignal(peer, 0, 2);
  sdma.quiet(peer);
}

// "host": the host thread resets the slot between two launches of one
// round each; the report names the host thread's store and its line.
__global__ void oneRound(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, uint64_t want) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = 1 - me;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * kBytes, sendWin, peer * kBytes, kBytes, 0);
  sdma.waitSignal(peer, 0, want);
  sdma.quiet(peer);
}

bool byHost = false;

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 1);
  if (!byHost) {
    twoRounds<<<1, 1>>>(r.dc, r.sendWin, r.recvWin);
    HIP_CHECK(hipDeviceSynchronize());
    return 0;
  }
  oneRound<<<1, 1>>>(r.dc, r.sendWin, r.recvWin, 1);
  HIP_CHECK(hipDeviceSynchronize());
  r.dc.sdma.signalBuf[(1 - rank) * r.dc.sdma.sdmaNumQueue] = 0;  // the bug, on the host
  oneRound<<<1, 1>>>(r.dc, r.sendWin, r.recvWin, 2);
  HIP_CHECK(hipDeviceSynchronize());
  return 0;
}

int main(int argc, char** argv) {
  byHost = argc > 1 && std::strcmp(argv[1], "host") == 0;
  return finish("slot_reset", runRanks(kRanks, rankMain));
}
