// PLANTED BUG (the seed's failure table: waitSignal never returns):
// eight lanes of one wave put to one peer on one queue, so they form one
// group and the peer's counter advances by one; the receiver counts
// expected per lane (8) and waits forever. emud reports the hang: the
// waiting lanes, the slot, the value expected and the value there.
#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 4096;

__global__ void perLane(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  const size_t slice = bytes / 8, off = threadIdx.x * slice;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes + off, sendWin, peer * bytes + off, slice, 0);
  sdma.quiet(peer);
  sdma.waitSignal(peer, 0, blockDim.x);  // BUG: one signal per put() call, not per lane
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 1);
  perLane<<<1, 8>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  return 0;
}

int main() { return finish("expected_per_lane", runRanks(kRanks, rankMain)); }
