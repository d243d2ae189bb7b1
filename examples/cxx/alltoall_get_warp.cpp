// All-to-all by get at warp scope: one warp per peer pulls the peer's
// block for this rank, split over the peer's queues (one get<ccoCoopWarp>
// per queue, posted by the warp's leader), then quiet<ccoCoopWarp> drains
// them before the kernel ends. Then again over a cleared receive buffer
// with the warps taking the peers in the opposite order (another order of
// posts on the queues). Each round checks every received block.
#include "common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64 << 10;

__global__ void alltoallGetWarp(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes, int reverse) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  int w = threadIdx.x / warpSize;
  if (w >= n) return;
  if (reverse) w = n - 1 - w;
  const int peer = (me + 1 + w) % n;
  const size_t chunk = bytes / nq;
  // the peer's send block for us lands in our receive block from that peer
  for (int q = 0; q < nq; q++)
    sdma.get<ccoCoopWarp>(peer, recvWin, peer * bytes + q * chunk, sendWin, me * bytes + q * chunk, chunk, q);
  sdma.quiet<ccoCoopWarp>(peer);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 2);
  int errors = 0;
  for (int reverse = 0; reverse < 2; reverse++) {
    if (reverse) r.clear();
    alltoallGetWarp<<<1, kRanks * warpSize>>>(r.dc, r.sendWin, r.recvWin, kBytes, reverse);
    HIP_CHECK(hipDeviceSynchronize());
    CCO_CHECK(ccoBarrierAll(r.comm));
    for (int p = 0; p < nRanks; p++) errors += r.check(p, p, rank);
  }
  return errors;
}

int main() { return finish("alltoall_get_warp", runRanks(kRanks, rankMain)); }
