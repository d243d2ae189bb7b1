// A sum all-reduce of uint32_t over NCCL's CFT device API, the algorithm
// of emud's Go scenario cft-allreduce (scenario/cft RunAllReduce) written
// as NCCL users write CFT kernels: one warp per rank. Each rank's buffer
// of CFT_ALLREDUCE_BYTES bytes (default 4096, a multiple of 16) is split
// into one chunk per rank. Between two multimem barriers, each rank
// pullReds its chunk (the sum over every rank's input, through the
// multicast LE) into shared memory, a stage of at most 64 KiB at a time,
// and redMultimem-sums it into every rank's zeroed output window: an
// all-gather by reduction. Each rank's host checks every element of its
// output.
//
// Both sides time their fabric operations with package fabric's ports
// (NVLink 5 defaults), so cxx's TestCftAllReduceMatchesGo finds this
// program and RunAllReduce on the same ranks and bytes ending at the same
// emulated time, on every seed it runs.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

#define THREADS 32
#define MAX_STAGE (64 << 10)
#define STAGE_OFFSET 16  // past the ncclCftSmem

__global__ void cftAllReduce(ncclWindow_t inWin, ncclWindow_t outWin, size_t bytes, size_t per, size_t stageBytes,
                             ncclDevComm devComm) {
  ncclCoopWarp warp;
  extern __shared__ __align__(16) unsigned char smemBytes[];
  ncclCftSmem* cftSmem = (ncclCftSmem*)smemBytes;
  void* stage = smemBytes + STAGE_OFFSET;
  ncclCft<ncclCoopWarp> cft{warp, *cftSmem};
  ncclCftBarrierSession<ncclCoopWarp> bar{warp, devComm, 0, true};
  // The inputs are published before anyone pulls them.
  bar.sync(warp, cuda::memory_order_acq_rel, ncclMemProxyType::Generic, ncclMemProxyType::Fabric);
  ncclTeam team = ncclTeamCftMultimem(devComm);
  for (int c = team.rank; c < team.nRanks; c += team.nRanks) {
    const size_t lo = c * per, hi = (c + 1) * per < bytes ? (c + 1) * per : bytes;
    for (size_t off = lo; off < hi; off += stageBytes) {
      const uint32_t n = (uint32_t)(hi - off < stageBytes ? hi - off : stageBytes);
      ncclCftLeId le;
      size_t leOff;
      ncclGetMultimemLeInfo(inWin, off, devComm, &le, &leOff);
      cft.pullRed(warp, le, leOff, ncclCftOpSum<uint32_t>{}, stage, n);
      cft.submit(warp);
      cft.flush(warp);
      ncclGetMultimemLeInfo(outWin, off, devComm, &le, &leOff);
      cft.redMultimem(warp, le, leOff, ncclCftOpSum<uint32_t>{}, stage, n);
      cft.submit(warp);
      cft.flush(warp);
    }
  }
  // Every rank's sums have landed before the hosts read them.
  bar.sync(warp, cuda::memory_order_acq_rel, ncclMemProxyType::Fabric, ncclMemProxyType::Generic);
}

static uint32_t input(int rank, size_t i) { return (uint32_t)(rank + 1) * 0x9e3779b9u + (uint32_t)i * 2654435761u; }

static void* allReduce(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  size_t bytes = 4096;
  if (const char* s = std::getenv("CFT_ALLREDUCE_BYTES")) bytes = std::strtoull(s, nullptr, 10);
  if (bytes == 0 || bytes % 16 != 0) {
    std::fprintf(stderr, "rank %d: CFT_ALLREDUCE_BYTES=%zu: want a positive multiple of 16\n", my_rank, bytes);
    return (void*)1;
  }
  // A chunk per rank, rounded up to 16 bytes; a stage of at most 64 KiB.
  const size_t per = ((bytes + total_ranks - 1) / total_ranks + 15) & ~(size_t)15;
  const size_t stageBytes = per < MAX_STAGE ? per : MAX_STAGE;
  const size_t count = bytes / sizeof(uint32_t);
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));

  void *dIn, *dOut;
  NCCLCHECK(ncclMemAlloc(&dIn, bytes));
  NCCLCHECK(ncclMemAlloc(&dOut, bytes));
  std::vector<uint32_t> h(count);
  for (size_t i = 0; i < count; i++) h[i] = input(my_rank, i);
  CUDACHECK(cudaMemcpy(dIn, h.data(), bytes, cudaMemcpyHostToDevice));
  CUDACHECK(cudaMemset(dOut, 0, bytes));
  ncclWindow_t inWin, outWin;
  NCCLCHECK(ncclCommWindowRegister(comm, dIn, bytes, &inWin, NCCL_WIN_COLL_SYMMETRIC));
  NCCLCHECK(ncclCommWindowRegister(comm, dOut, bytes, &outWin, NCCL_WIN_COLL_SYMMETRIC));
  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.cftCaps = NCCL_CFT | NCCL_CFT_MULTIMEM;
  reqs.cftBarrierCount = 1;
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));
  cudaStream_t stream;
  CUDACHECK(cudaStreamCreate(&stream));

  cftAllReduce<<<1, THREADS, STAGE_OFFSET + stageBytes, stream>>>(inWin, outWin, bytes, per, stageBytes, devComm);
  CUDACHECK(cudaGetLastError());
  CUDACHECK(cudaStreamSynchronize(stream));

  CUDACHECK(cudaMemcpy(h.data(), dOut, bytes, cudaMemcpyDeviceToHost));
  int errors = 0;
  for (size_t i = 0; i < count; i++) {
    uint32_t want = 0;
    for (int r = 0; r < total_ranks; r++) want += input(r, i);
    if (h[i] != want && errors++ < 4) std::printf("rank %d: element %zu is %u, want %u\n", my_rank, i, h[i], want);
  }

  NCCLCHECK(ncclDevCommDestroy(comm, &devComm));
  NCCLCHECK(ncclCommWindowDeregister(comm, inWin));
  NCCLCHECK(ncclCommWindowDeregister(comm, outWin));
  NCCLCHECK(ncclMemFree(dIn));
  NCCLCHECK(ncclMemFree(dOut));
  NCCLCHECK(ncclCommFinalize(comm));
  NCCLCHECK(ncclCommDestroy(comm));
  CUDACHECK(cudaStreamDestroy(stream));
  return errors ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
  int rc = run_example(argc, argv, allReduce);
  std::printf("cft_allreduce: %s\n", rc ? "FAIL" : "PASS");
  return rc;
}
