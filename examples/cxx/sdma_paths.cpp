// ccoSdma paths beyond the all-to-all: block scope with 128 threads (two
// waves) and queueId == threadIdx.x; a zero-byte put then quiet; many
// lanes of one wave on one queue; a ring wrap with mixed slot sizes over
// 8192 rounds.
#include "common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64 << 10;

// Block scope: thread 0 posts for the block (its queueId, 0, is the one
// used); the whole block takes part in every call.
__global__ void blockScope(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize;
  for (int i = 1; i <= n; i++) {
    const int peer = (me + i) % n;
    sdma.put<ccoCoopBlock, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, threadIdx.x);
    sdma.quiet<ccoCoopBlock>(peer);
  }
  for (int i = 1; i <= n; i++) sdma.waitSignal((me + n - i) % n, 0, 1);
}

// A zero-byte put posts nothing; quiet returns. Then a real put.
__global__ void zeroByte(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  sdma.put(peer, recvWin, me * bytes, sendWin, peer * bytes, 0, 0);
  sdma.quiet(peer);
  sdma.put(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
  sdma.quiet(peer);
}

// 64 lanes of one wave, one queue: lane t sends slice t of the block.
__global__ void oneQueue(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  const size_t slice = bytes / blockDim.x, off = threadIdx.x * slice;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes + off, sendWin, peer * bytes + off, slice, 1);
  sdma.quiet(peer);
  sdma.waitSignal((me + dc.lsaSize - 1) % dc.lsaSize, 1, 1);
}

// 8192 rounds on one queue, alternating one-slot puts (no signal) and
// three-slot puts (local and remote signal): the ring wraps many times.
__global__ void ringWrap(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes, int rounds) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, peer = (me + 1) % n;
  const size_t piece = 256, pieces = bytes / piece;
  uint64_t signalled = 0;
  for (int i = 0; i < rounds; i++) {
    const size_t off = (i % pieces) * piece;
    if (i % 2 == 0) {
      sdma.put(peer, recvWin, me * bytes + off, sendWin, peer * bytes + off, piece, 0);
    } else {
      sdma.put<ccoCoopThread, true, true>(peer, recvWin, me * bytes + off, sendWin, peer * bytes + off, piece, 0);
      signalled++;
    }
    if (i % 64 == 63) sdma.quietQueue(peer, 0);
  }
  sdma.quiet(peer);
  sdma.waitSignal(me, 0, signalled);             // our own local signals
  sdma.waitSignal((me + n - 1) % n, 0, signalled);  // the previous rank's remote ones
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 2);
  const int prev = (rank + nRanks - 1) % nRanks;
  int errors = 0;

  blockScope<<<1, 128>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  CCO_CHECK(ccoBarrierAll(r.comm));
  for (int p = 0; p < nRanks; p++) errors += r.check(p, p, rank);
  r.clear();

  zeroByte<<<1, 1>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  CCO_CHECK(ccoBarrierAll(r.comm));
  errors += r.check(prev, prev, rank);
  r.clear();

  oneQueue<<<1, 64>>>(r.dc, r.sendWin, r.recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());
  CCO_CHECK(ccoBarrierAll(r.comm));
  errors += r.check(prev, prev, rank);
  r.clear();

  ringWrap<<<1, 1>>>(r.dc, r.sendWin, r.recvWin, kBytes, 8192);
  HIP_CHECK(hipDeviceSynchronize());
  CCO_CHECK(ccoBarrierAll(r.comm));
  errors += r.check(prev, prev, rank);
  return errors;
}

int main() { return finish("sdma_paths", runRanks(kRanks, rankMain)); }
