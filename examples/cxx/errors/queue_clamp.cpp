// A queue count over the hardware cap: the dev comm asks for 12 SDMA
// queues per peer, MORI clamps the count to 8 (kMaxSdmaChannelsPerPair)
// with a warning, and the kernel, which trusts its own 12, spreads a put
// over queue ids 0..11. Ids 8..11 are out of range: MORI's cco.hpp
// returns before touching a queue, in its release and debug builds alike,
// so a third of the blocks never land. emud prints the clamp warning on
// stderr in every mode, and with MORI_CCO_SDMA_DEBUG=1 one line per call
// site naming the out-of-range queueId. The program reads
// dc.sdma.sdmaNumQueue ("fixed") to stay within range and pass.
#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2, kAsked = 12;
constexpr size_t kBytes = 12 << 10;

__global__ void spread(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, int queues) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = 1 - me, q = threadIdx.x;
  const size_t slice = kBytes / kAsked;
  sdma.put<ccoCoopThread>(peer, recvWin, me * kBytes + q * slice, sendWin, peer * kBytes + q * slice, slice,
                          q % queues);
  sdma.quiet(peer);
}

bool fixed = false;

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, kAsked);
  const int queues = fixed ? (int)r.dc.sdma.sdmaNumQueue : kAsked;
  spread<<<1, kAsked>>>(r.dc, r.sendWin, r.recvWin, queues);
  HIP_CHECK(hipDeviceSynchronize());
  CCO_CHECK(ccoBarrierAll(r.comm));
  const int peer = 1 - rank;
  return r.check(peer, peer, rank);
}

int main(int argc, char** argv) {
  fixed = argc > 1 && std::strcmp(argv[1], "fixed") == 0;
  return finish("queue_clamp", runRanks(kRanks, rankMain));
}
