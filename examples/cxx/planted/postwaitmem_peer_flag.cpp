// PLANTED BUG (the seed's failure table: a queue stops moving after
// postWaitMem): each rank raises a ready flag in its own memory; the
// sender posts an engine-side wait for its peer's flag before the put.
// But an engine-side wait polls this GPU's memory only, and the program
// passes the peer's flag window (from a table every rank thread filled),
// which hardware does not promise to see. Built with MORI_CCO_SDMA_DEBUG,
// emud traps at the call, naming the flag's GPU and the rule.
#define MORI_CCO_SDMA_DEBUG 1
#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 4096;

ccoWindow_t flagWins[kRanks];  // every rank's flag window, filled by the rank threads

__global__ void waitPeerFlag(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, ccoWindow_t myFlag,
                             ccoWindow_t peerFlag, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  sdma.postWaitMem(peer, 0, peerFlag, 0, 1u);  // BUG: the flag must be local memory
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
  __hip_atomic_store((uint32_t*)ccoGetLocalPtr(myFlag, 0), 1u, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
  sdma.waitSignal(peer, 0, 1);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 1);
  void* flag = nullptr;
  CCO_CHECK(ccoMemAlloc(r.comm, 4096, &flag));
  CCO_CHECK(ccoWindowRegister(r.comm, flag, 4096, &flagWins[rank]));
  HIP_CHECK(hipMemset(flag, 0, 4096));
  CCO_CHECK(ccoBarrierAll(r.comm));
  const int peer = (rank + 1) % nRanks;
  waitPeerFlag<<<1, 1>>>(r.dc, r.sendWin, r.recvWin, flagWins[rank], flagWins[peer], kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  return 0;
}

int main() { return finish("postwaitmem_peer_flag", runRanks(kRanks, rankMain)); }
