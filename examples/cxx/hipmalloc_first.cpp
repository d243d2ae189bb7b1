// Correct code that emud once refused: rank 0 hipMallocs a scratch buffer
// before its ccoMemAlloc and rank 1 after it. On MORI ccoMemAlloc's slots
// come from the comm's own VMM heap, which hipMalloc never touches, so the
// slots sit at the same offset on both ranks and ccoWindowRegister's
// exchange succeeds; emud's hipMalloc shared one allocator with
// ccoMemAlloc, so rank 0's slot moved and ccoWindowRegister failed with
// "ranks must allocate and register alike". The two ranks then put their
// blocks to each other and check them.
#include "common.hpp"

using namespace mori::cco;

constexpr size_t kBytes = 8 << 10;

__global__ void swapBlocks(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, peer = 1 - me;
  if (threadIdx.x != 0) return;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
  sdma.quiet(peer);
  sdma.waitSignal(peer, 0, 1);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  HIP_CHECK(hipSetDevice(rank));
  void* scratch = nullptr;
  if (rank == 0) HIP_CHECK(hipMalloc(&scratch, 3 << 20));  // before: on emud it shifted the slot
  ccoComm* comm = nullptr;
  CCO_CHECK(ccoCommCreate(id, nRanks, rank, 0, &comm));
  const size_t span = nRanks * kBytes;
  void *send = nullptr, *recv = nullptr;
  CCO_CHECK(ccoMemAlloc(comm, span, &send));
  if (rank == 1) HIP_CHECK(hipMalloc(&scratch, 5 << 20));  // between the two slots
  CCO_CHECK(ccoMemAlloc(comm, span, &recv));
  std::vector<uint64_t> host(span / 8);
  for (int p = 0; p < nRanks; p++)
    for (size_t i = 0; i < kBytes / 8; i++) host[p * kBytes / 8 + i] = pattern(rank, p, i);
  HIP_CHECK(hipMemcpy(send, host.data(), span, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(recv, 0, span));
  ccoWindow_t sendWin, recvWin;
  CCO_CHECK(ccoWindowRegister(comm, send, span, &sendWin));
  CCO_CHECK(ccoWindowRegister(comm, recv, span, &recvWin));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ccoDevComm dc;
  CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  CCO_CHECK(ccoBarrierAll(comm));

  swapBlocks<<<1, 64>>>(dc, sendWin, recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());

  HIP_CHECK(hipMemcpy(host.data(), recv, span, hipMemcpyDeviceToHost));
  const int peer = 1 - rank;
  int errors = 0;
  for (size_t i = 0; i < kBytes / 8; i++)
    if (host[peer * kBytes / 8 + i] != pattern(peer, rank, i)) errors++;
  CCO_CHECK(ccoBarrierAll(comm));
  CCO_CHECK(ccoDevCommDestroy(comm, &dc));
  CCO_CHECK(ccoWindowDeregister(comm, recvWin));
  CCO_CHECK(ccoWindowDeregister(comm, sendWin));
  CCO_CHECK(ccoMemFree(comm, recv));
  CCO_CHECK(ccoMemFree(comm, send));
  CCO_CHECK(ccoCommDestroy(comm));
  HIP_CHECK(hipFree(scratch));
  return errors;
}

int main() { return finish("hipmalloc_first", runRanks(2, rankMain)); }
