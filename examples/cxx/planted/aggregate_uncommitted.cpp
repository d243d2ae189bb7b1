// PLANTED BUG (the seed's failure table: Aggregate never committed): the
// put is posted with ccoSdmaOptFlagsAggregate, which does not ring the
// doorbell, and commit() is never called. quiet returns at once (nothing
// was committed to drain) and the peer's waitSignal waits forever; emud's
// report names the queue whose packets were written but never rung.
#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 4096;

__global__ void noCommit(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  sdma.put<ccoCoopThread, false, true, ccoSdmaOptFlagsAggregate>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
  // BUG: sdma.commit(peer, 0) missing
  sdma.quiet(peer);
  sdma.waitSignal(peer, 0, 1);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 1);
  noCommit<<<1, 1>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  return 0;
}

int main() { return finish("aggregate_uncommitted", runRanks(kRanks, rankMain)); }
