// Signals: remote, local and both, from groups of 1, 2, 8 and 64 lanes of
// one wave on one queue, with and without ccoSdmaOptFlagsSignalPerCopy,
// each verified in the kernel with waitSignal and no barrier: one put()
// call advances the counter by one, or by the lane count with
// SignalPerCopy. The launches go through a template kernel, a macro over
// several lines and a lambda.
#include "common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64 << 10;

template <bool Local, bool Remote, uint32_t Flags>
__global__ void signalsKernel(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes, int lanes,
                              uint64_t localWant, uint64_t remoteWant) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, peer = (me + 1) % n, prev = (me + n - 1) % n;
  const int t = threadIdx.x;
  if (t >= lanes) return;
  const size_t slice = bytes / 64, off = t * slice;
  sdma.put<ccoCoopThread, Local, Remote, Flags>(peer, recvWin, me * bytes + off, sendWin, peer * bytes + off, slice, 0);
  if (Local) sdma.waitSignal(me, 0, localWant);
  if (Remote) sdma.waitSignal(prev, 0, remoteWant);
  sdma.quiet(peer);
}

#define LAUNCH_SIGNALS(L, R, F, r, lanes, lw, rw)                                        \
  signalsKernel<L, R, F>                                                                 \
      <<<1, 64>>>((r).dc, (r).sendWin, (r).recvWin, kBytes, lanes, \
                  lw, rw)

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 2);
  uint64_t local = 0, remote = 0;
  auto run = [&](int kind, bool perCopy, int lanes) {
    const uint64_t inc = perCopy ? lanes : 1;
    const bool l = kind != 1, rm = kind != 0;
    if (l) local += inc;
    if (rm) remote += inc;
    if (kind == 0 && !perCopy) LAUNCH_SIGNALS(true, false, ccoSdmaOptFlagsDefault, r, lanes, local, remote);
    if (kind == 0 && perCopy) LAUNCH_SIGNALS(true, false, ccoSdmaOptFlagsSignalPerCopy, r, lanes, local, remote);
    if (kind == 1 && !perCopy) LAUNCH_SIGNALS(false, true, ccoSdmaOptFlagsDefault, r, lanes, local, remote);
    if (kind == 1 && perCopy) LAUNCH_SIGNALS(false, true, ccoSdmaOptFlagsSignalPerCopy, r, lanes, local, remote);
    if (kind == 2 && !perCopy) LAUNCH_SIGNALS(true, true, ccoSdmaOptFlagsDefault, r, lanes, local, remote);
    if (kind == 2 && perCopy) LAUNCH_SIGNALS(true, true, ccoSdmaOptFlagsSignalPerCopy, r, lanes, local, remote);
    HIP_CHECK(hipDeviceSynchronize());
  };
  for (int kind = 0; kind < 3; kind++)
    for (int perCopy = 0; perCopy < 2; perCopy++)
      for (int lanes : {1, 2, 8, 64}) run(kind, perCopy != 0, lanes);
  CCO_CHECK(ccoBarrierAll(r.comm));
  const int prev = (rank + nRanks - 1) % nRanks;
  int errors = r.check(prev, prev, rank);
  // the counters hold exactly the totals the kernels waited for
  uint64_t mine = 0, fromPrev = 0;
  HIP_CHECK(hipMemcpy(&mine, r.dc.sdma.signalBuf + rank * r.dc.sdma.sdmaNumQueue, 8, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&fromPrev, r.dc.sdma.signalBuf + prev * r.dc.sdma.sdmaNumQueue, 8, hipMemcpyDeviceToHost));
  if (mine != local || fromPrev != remote) {
    std::printf("rank %d: local counter %llu (want %llu), remote %llu (want %llu)\n", rank, (unsigned long long)mine,
                (unsigned long long)local, (unsigned long long)fromPrev, (unsigned long long)remote);
    errors++;
  }
  return errors;
}

int main() { return finish("signals", runRanks(kRanks, rankMain)); }
