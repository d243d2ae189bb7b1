// A warp-scope put whose source the lanes overwrite too soon: the put goes
// on queue 1, but the kernel drains only queue 0 (quietQueue on the wrong
// queue) before every lane stores new values into the source block, so
// the engine may still be reading it. The race detector sees the lanes'
// stores in a plain emud c++ build (lane code is instrumented by default)
// and names the store's own line:
//   emud c++ put_overwrite.cpp; EMUD_RACE=1 ./a.out  → exit 5, every seed
// "fixed" drains queue 1 first: no race.
#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 64 * 64 * sizeof(uint64_t);

__global__ void putThenReuse(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, uint64_t* send, int drained) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = 1 - me;
  sdma.put<ccoCoopWarp>(peer, recvWin, me * kBytes, sendWin, peer * kBytes, kBytes, 1);
  sdma.quietQueue<ccoCoopWarp>(peer, drained);
  uint64_t* block = send + peer * (kBytes / 8);
  for (int i = 0; i < 64; i++) block[i * 64 + threadIdx.x] = ~0ull;  // the source, reused
  sdma.quiet<ccoCoopWarp>(peer);  // every queue drained before the kernel ends
}

bool fixed = false;

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 2);
  putThenReuse<<<1, 64>>>(r.dc, r.sendWin, r.recvWin, (uint64_t*)r.send, fixed ? 1 : 0);
  HIP_CHECK(hipDeviceSynchronize());
  CCO_CHECK(ccoBarrierAll(r.comm));
  return 0;
}

int main(int argc, char** argv) {
  fixed = argc > 1 && std::strcmp(argv[1], "fixed") == 0;
  return finish("put_overwrite", runRanks(kRanks, rankMain));
}
