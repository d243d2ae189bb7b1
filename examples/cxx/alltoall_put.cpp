// All-to-all by put at thread scope: one lane per peer posts its block
// with a remote signal, quiets the peer and waits for the peer's block.
// The shape of the Go alltoall scenario (scenario/sdma/alltoall.go).
#include "common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64 << 10;

__global__ void alltoallPut(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int t = threadIdx.x;
  if (t >= n) return;
  const int peer = (me + 1 + t) % n;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, peer % nq);
  sdma.quiet(peer);
  sdma.waitSignal(peer, me % nq, 1);
}

uint64_t checksums[kRanks];  // FNV-1a of each rank's receive buffer

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
  HIP_CHECK(hipMemset(recv, 0, span));
  ccoWindow_t sendWin, recvWin;
  CCO_CHECK(ccoWindowRegister(comm, send, span, &sendWin));
  CCO_CHECK(ccoWindowRegister(comm, recv, span, &recvWin));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ccoDevComm dc;
  CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  CCO_CHECK(ccoBarrierAll(comm));

  alltoallPut<<<1, kRanks>>>(dc, sendWin, recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());

  HIP_CHECK(hipMemcpy(host.data(), recv, span, hipMemcpyDeviceToHost));
  int errors = 0;
  for (int p = 0; p < nRanks; p++)
    for (size_t i = 0; i < kBytes / 8; i++)
      if (host[p * kBytes / 8 + i] != pattern(p, rank, i)) errors++;
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char* b = (const unsigned char*)host.data(); b != (const unsigned char*)(host.data() + host.size()); b++)
    h = (h ^ *b) * 0x100000001b3ull;
  checksums[rank] = h;
  CCO_CHECK(ccoBarrierAll(comm));
  CCO_CHECK(ccoDevCommDestroy(comm, &dc));
  CCO_CHECK(ccoWindowDeregister(comm, recvWin));
  CCO_CHECK(ccoWindowDeregister(comm, sendWin));
  CCO_CHECK(ccoMemFree(comm, recv));
  CCO_CHECK(ccoMemFree(comm, send));
  CCO_CHECK(ccoCommDestroy(comm));
  return errors;
}

int main() {
  int n = 0;
  HIP_CHECK(hipGetDeviceCount(&n));
  if (n < kRanks) {
    std::printf("alltoall_put: SKIP (%d GPUs, need %d)\n", n, kRanks);
    return 0;
  }
  const int errors = runRanks(kRanks, rankMain);
  for (int r = 0; r < kRanks; r++) std::printf("rank %d received fnv64 %016llx\n", r, (unsigned long long)checksums[r]);
  return finish("alltoall_put", errors);
}
