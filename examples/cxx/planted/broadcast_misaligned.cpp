// PLANTED BUG (the seed's failure table: broadcast destinations not
// congruent mod 32): one COPY packet, two destinations, the second 8
// bytes off the first's alignment. On hardware the second copy lands
// shifted; with MORI_CCO_SDMA_DEBUG emud traps at the call, naming both
// addresses and the rule.
#define MORI_CCO_SDMA_DEBUG 1
#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 4096;

__global__ void bcast(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  // BUG: the local copy's offset (+8) is not congruent to the peer's mod 32
  sdma.putBroadcast(peer, recvWin, me * bytes, me, recvWin, peer * bytes + 8, sendWin, peer * bytes, 256, 0);
  sdma.quiet(peer);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 1);
  bcast<<<1, 1>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  return 0;
}

int main() { return finish("broadcast_misaligned", runRanks(kRanks, rankMain)); }
