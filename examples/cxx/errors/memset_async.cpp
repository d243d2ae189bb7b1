// hipMemsetAsync is asynchronous: the receive buffer's clear is still in
// flight when the all-to-all kernel, queued on another stream that
// nothing orders after the clear, has the peers' puts land in it (the
// class of mori#519). Each rank clears its receive buffer on stream
// `clear` and launches on stream `work`:
//   memset_async race:    two streams and no synchronisation: with
//                         EMUD_RACE=1 the race detector reports the memset
//                         against the peer's COPY (exit 5);
//   memset_async ordered: hipStreamSynchronize(clear) before the barrier:
//                         no race, PASS.
#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 2;
constexpr size_t kBytes = 256 << 10;
static bool ordered = false;

__global__ void exchange(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = (me + 1) % dc.lsaSize;
  if (threadIdx.x != 0) return;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
  sdma.quiet(peer);
  sdma.waitSignal(peer, 0, 1);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  HIP_CHECK(hipSetDevice(rank));
  ccoComm* comm = nullptr;
  CCO_CHECK(ccoCommCreate(id, nRanks, rank, 0, &comm));
  const size_t span = nRanks * kBytes;
  void *send = nullptr, *recv = nullptr;
  CCO_CHECK(ccoMemAlloc(comm, span, &send));
  CCO_CHECK(ccoMemAlloc(comm, span, &recv));
  std::vector<uint64_t> host(span / 8);
  for (int p = 0; p < nRanks; p++)
    for (size_t i = 0; i < kBytes / 8; i++) host[p * kBytes / 8 + i] = pattern(rank, p, i);
  HIP_CHECK(hipMemcpy(send, host.data(), span, hipMemcpyHostToDevice));
  ccoWindow_t sendWin, recvWin;
  CCO_CHECK(ccoWindowRegister(comm, send, span, &sendWin));
  CCO_CHECK(ccoWindowRegister(comm, recv, span, &recvWin));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.sdmaQueueCount = 1;
  ccoDevComm dc;
  CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));

  hipStream_t clear, work;
  HIP_CHECK(hipStreamCreateWithFlags(&clear, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&work, hipStreamNonBlocking));
  HIP_CHECK(hipMemsetAsync(recv, 0, span, clear));
  if (ordered) HIP_CHECK(hipStreamSynchronize(clear));
  CCO_CHECK(ccoBarrierAll(comm));
  exchange<<<1, 64, 0, work>>>(dc, sendWin, recvWin, kBytes);
  HIP_CHECK(hipStreamSynchronize(work));
  HIP_CHECK(hipStreamSynchronize(clear));
  CCO_CHECK(ccoBarrierAll(comm));

  const int peer = (rank + 1) % nRanks;
  HIP_CHECK(hipMemcpy(host.data(), (char*)recv + peer * kBytes, kBytes, hipMemcpyDeviceToHost));
  int errors = 0;
  for (size_t i = 0; i < kBytes / 8; i++)
    if (host[i] != pattern(peer, rank, i)) errors++;
  HIP_CHECK(hipStreamDestroy(clear));
  HIP_CHECK(hipStreamDestroy(work));
  return errors;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "ordered") == 0) {
    ordered = true;
  } else if (std::strcmp(mode, "race") != 0) {
    std::fprintf(stderr, "usage: memset_async race|ordered\n");
    return 3;
  }
  const int errors = runRanks(kRanks, rankMain);
  std::printf("memset_async %s: %s (%d wrong words)\n", mode, errors ? "data lost" : "data intact", errors);
  return errors && ordered ? 1 : 0;
}
