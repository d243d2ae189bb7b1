// A correct shape the signal-lifecycle checks must stay quiet on (issue
// 37): an all-to-all called twice, each call counting its signals from 0.
// Between the calls each rank resets its own signal slots, after the first
// call's last wait, and a host barrier orders the peers' second-call
// signals after every reset. The second call's waitSignal(..., 1) then
// holds on the second call's signal, not on the value the first left.
//   reset_epochs lane          a lane store in the first kernel, after its waits
//   reset_epochs memset        hipMemset of the slots (synchronous)
//   reset_epochs memset_async  hipMemsetAsync on the kernel's stream, then
//                              hipStreamSynchronize
// Each run checks both calls' data and prints PASS.
#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 4;
constexpr size_t kBytes = 16 << 10;

enum Mode { kLane, kMemset, kMemsetAsync };
static Mode mode = kLane;

__global__ void alltoall(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes, bool reset) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize;
  if (threadIdx.x != 0) return;
  for (int p = 0; p < n; p++) {
    if (p == me) continue;
    sdma.put<ccoCoopThread, false, true>(p, recvWin, me * bytes, sendWin, p * bytes, bytes, 0);
  }
  for (int p = 0; p < n; p++) {
    if (p == me) continue;
    sdma.quiet(p);
    sdma.waitSignal(p, 0, 1);  // this call's one signal from p, counted from 0
  }
  if (reset) {
    // After this epoch's last wait: this rank's own slots back to 0.
    for (int p = 0; p < n; p++) dc.sdma.signalBuf[p * dc.sdma.sdmaNumQueue + 0] = 0;
  }
}

static int check(const std::vector<uint64_t>& got, int rank, int nRanks, int call) {
  int errors = 0;
  for (int p = 0; p < nRanks; p++) {
    if (p == rank) continue;
    for (size_t i = 0; i < kBytes / 8; i++)
      if (got[p * kBytes / 8 + i] != pattern(p, rank, i + call * kBytes)) errors++;
  }
  return errors;
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  Rank r(rank, nRanks, id, kBytes, 1);  // comm, windows, a dev comm of one queue id
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  const size_t span = nRanks * kBytes;
  std::vector<uint64_t> host(span / 8);
  int errors = 0;
  for (int call = 0; call < 2; call++) {
    for (int p = 0; p < nRanks; p++)
      for (size_t i = 0; i < kBytes / 8; i++) host[p * kBytes / 8 + i] = pattern(rank, p, i + call * kBytes);
    HIP_CHECK(hipMemcpy(r.send, host.data(), span, hipMemcpyHostToDevice));
    CCO_CHECK(ccoBarrierAll(r.comm));
    alltoall<<<1, 64, 0, s>>>(r.dc, r.sendWin, r.recvWin, kBytes, mode == kLane);
    const size_t slots = nRanks * r.dc.sdma.sdmaNumQueue * sizeof(uint64_t);
    if (mode == kMemsetAsync) HIP_CHECK(hipMemsetAsync(r.dc.sdma.signalBuf, 0, slots, s));
    HIP_CHECK(hipStreamSynchronize(s));
    if (mode == kMemset) HIP_CHECK(hipMemset(r.dc.sdma.signalBuf, 0, slots));
    CCO_CHECK(ccoBarrierAll(r.comm));  // every rank's reset before any second-call signal
    HIP_CHECK(hipMemcpy(host.data(), r.recv, span, hipMemcpyDeviceToHost));
    errors += check(host, rank, nRanks, call);
  }
  HIP_CHECK(hipStreamDestroy(s));
  return errors;  // ~Rank destroys the dev comm and the comm
}

int main(int argc, char** argv) {
  const char* m = argc > 1 ? argv[1] : "";
  if (std::strcmp(m, "lane") == 0) {
    mode = kLane;
  } else if (std::strcmp(m, "memset") == 0) {
    mode = kMemset;
  } else if (std::strcmp(m, "memset_async") == 0) {
    mode = kMemsetAsync;
  } else {
    std::fprintf(stderr, "usage: reset_epochs lane|memset|memset_async\n");
    return 3;
  }
  return finish("reset_epochs", runRanks(kRanks, rankMain));
}
