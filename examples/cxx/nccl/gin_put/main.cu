// The all-to-all of examples/cxx/alltoall_put.cpp over NCCL's GIN: each
// rank's thread t puts its chunk for peer (rank + 1 + t) mod nRanks into
// that peer's receive window with a signal, waits until its own signal
// counts every peer's put, and flushes. cxx's TestGinPutMatchesGo runs the
// same kernel written in Go (cco.Sdma.PutSignals and WaitWord) on a job
// of the same seed: both end at the same emulated time with the same
// bytes. Prints each rank's receive-buffer FNV-1a.
#include <cstdio>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

static const size_t kBytes = 64 << 10;

__global__ void ginPut(ncclDevComm dc, ncclWindow_t sendWin, ncclWindow_t recvWin, size_t bytes) {
  ncclGin gin{dc, 0};
  const int t = threadIdx.x;
  if (t >= dc.nRanks) return;
  const int peer = (dc.rank + 1 + t) % dc.nRanks;
  gin.put(ncclTeamWorld(dc), peer, recvWin, dc.rank * bytes, sendWin, peer * bytes, bytes, ncclGin_SignalInc{0});
  gin.waitSignal(ncclCoopThread(), 0, dc.nRanks);
  gin.flush(ncclCoopThread());
}

// word i of the chunk src sends to dst (examples/cxx/common.hpp's pattern).
static uint64_t pattern(int src, int dst, uint64_t i) {
  uint64_t z = ((uint64_t)src << 32 | (uint64_t)dst) * 0x9e3779b97f4a7c15ull + i + 0x9e3779b97f4a7c15ull;
  z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ z >> 27) * 0x94d049bb133111ebull;
  return z ^ z >> 31;
}

static uint64_t checksums[8];

static void* run(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));
  const size_t span = total_ranks * kBytes;
  void *send, *recv;
  NCCLCHECK(ncclMemAlloc(&send, span));
  NCCLCHECK(ncclMemAlloc(&recv, span));
  std::vector<uint64_t> host(span / 8);
  for (int p = 0; p < total_ranks; p++)
    for (size_t i = 0; i < kBytes / 8; i++) host[p * kBytes / 8 + i] = pattern(my_rank, p, i);
  CUDACHECK(cudaMemcpy(send, host.data(), span, cudaMemcpyHostToDevice));
  CUDACHECK(cudaMemset(recv, 0, span));
  ncclWindow_t sendWin, recvWin;
  NCCLCHECK(ncclCommWindowRegister(comm, send, span, &sendWin, NCCL_WIN_COLL_SYMMETRIC));
  NCCLCHECK(ncclCommWindowRegister(comm, recv, span, &recvWin, NCCL_WIN_COLL_SYMMETRIC));
  ncclDevComm dc;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginContextCount = 1;
  reqs.ginSignalCount = 1;
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &dc));

  ginPut<<<1, 8>>>(dc, sendWin, recvWin, kBytes);
  CUDACHECK(cudaDeviceSynchronize());

  CUDACHECK(cudaMemcpy(host.data(), recv, span, cudaMemcpyDeviceToHost));
  int errors = 0;
  for (int p = 0; p < total_ranks; p++)
    for (size_t i = 0; i < kBytes / 8; i++)
      if (host[p * kBytes / 8 + i] != pattern(p, my_rank, i)) errors++;
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char* b = (const unsigned char*)host.data(); b != (const unsigned char*)(host.data() + host.size()); b++)
    h = (h ^ *b) * 0x100000001b3ull;
  checksums[my_rank] = h;
  NCCLCHECK(ncclDevCommDestroy(comm, &dc));
  NCCLCHECK(ncclCommWindowDeregister(comm, sendWin));
  NCCLCHECK(ncclCommWindowDeregister(comm, recvWin));
  NCCLCHECK(ncclMemFree(send));
  NCCLCHECK(ncclMemFree(recv));
  NCCLCHECK(ncclCommDestroy(comm));
  return errors ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
  int rc = run_example(argc, argv, run);
  for (int r = 0; r < 8; r++) std::printf("rank %d received fnv64 %016llx\n", r, (unsigned long long)checksums[r]);
  std::printf("gin_put: %s\n", rc ? "FAIL" : "PASS");
  return rc;
}
