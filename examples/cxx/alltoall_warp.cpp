// All-to-all by put at warp scope: one warp per peer, each block split
// over the peer's queues (one put<ccoCoopWarp> per queue, posted by the
// warp's leader, with a remote signal), then quiet<ccoCoopWarp> and one
// waitSignal per queue. Then the same all-to-all by get at thread scope.
#include "common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64 << 10;

__global__ void alltoallWarp(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int w = threadIdx.x / warpSize;
  if (w >= n) return;
  const int peer = (me + 1 + w) % n;
  const size_t chunk = bytes / nq;
  for (int q = 0; q < nq; q++)
    sdma.put<ccoCoopWarp, false, true>(peer, recvWin, me * bytes + q * chunk, sendWin, peer * bytes + q * chunk, chunk, q);
  sdma.quiet<ccoCoopWarp>(peer);
  for (int q = 0; q < nq; q++) sdma.waitSignal(peer, q, 1);
}

__global__ void alltoallGet(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int t = threadIdx.x;
  if (t >= n) return;
  const int peer = (me + 1 + t) % n;
  // pull the peer's block for us into our receive block from that peer
  sdma.get(peer, recvWin, peer * bytes, sendWin, me * bytes, bytes, peer % nq);
  sdma.quiet(peer);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 2);
  int errors = 0;
  alltoallWarp<<<1, kRanks * warpSize>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  for (int p = 0; p < nRanks; p++) errors += r.check(p, p, rank);
  r.clear();
  alltoallGet<<<1, kRanks>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  CCO_CHECK(ccoBarrierAll(r.comm));
  for (int p = 0; p < nRanks; p++) errors += r.check(p, p, rank);
  return errors;
}

int main() { return finish("alltoall_warp", runRanks(kRanks, rankMain)); }
