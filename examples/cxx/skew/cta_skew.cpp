// PLANTED BUG that needs the CTAs of one grid to start far apart (issue
// 38): block 1 raises a ready flag as it starts; block 0 puts its block
// to the peer, drains the queue (some µs) and then reads block 1's flag
// once, assuming block 1 must have started by then, instead of waiting
// for it. Blocks of a grid start within about a microsecond of each other
// almost always, so the bug hides; under timing perturbation a block now
// and then starts tens of µs late (a CU still busy, a dispatcher that
// stalls), and block 0 finds the flag down: the program prints FAIL and
// exits 1. cxx's TestCtaSkewBugFound finds it within 200 seeds.
#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 64 << 10;

__global__ void handshake(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes, int* flag,
                          int* missed) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    __hip_atomic_store(flag, 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);  // block 1 is running
    return;
  }
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
  sdma.quiet(peer);
  // BUG: one look, no wait: block 1 "must" have started during the drain.
  if (__hip_atomic_load(flag, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) *missed = 1;
  sdma.waitSignal(peer, 0, 1);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 1);
  int* words = nullptr;  // [0] the flag, [1] missed
  HIP_CHECK(hipMalloc(&words, 2 * sizeof(int)));
  HIP_CHECK(hipMemset(words, 0, 2 * sizeof(int)));
  handshake<<<2, 64>>>(r.dc, r.sendWin, r.recvWin, kBytes, words, words + 1);
  HIP_CHECK(hipDeviceSynchronize());
  int missed = 0;
  HIP_CHECK(hipMemcpy(&missed, words + 1, sizeof(int), hipMemcpyDeviceToHost));
  if (missed) std::printf("rank %d: block 0 read block 1's flag before block 1 had started\n", rank);
  const int prev = (rank + 1) % nRanks;  // two ranks: each is the other's predecessor
  return missed + r.check(prev, prev, rank);
}

int main() { return finish("cta_skew", runRanks(kRanks, rankMain)); }
