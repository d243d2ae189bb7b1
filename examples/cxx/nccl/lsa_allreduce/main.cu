// An all-reduce (sum of floats) over NCCL's device API, LSA only, run
// LSA_ALLREDUCE_ITERS times (3) on fresh inputs: every rank's CTAs read their share of the
// elements from every peer's send window through LSA pointers, add them,
// and store the sum into every peer's receive window. Two barriers frame
// the work: the first (acquire) waits until every peer has launched this
// iteration, so its host has written its send buffer and read last
// iteration's receive buffer; the last (release) publishes this rank's
// stores before peers' hosts read their receive windows.
//
// LSA_ALLREDUCE_COUNT sets the floats (default 4096) and
// LSA_ALLREDUCE_ITERS the iterations (default 3): cxx's
// TestLsaAllReduceMatchesGo runs one iteration of two sizes against its Go
// twin (cxx/lsa_twin_test.go), which ends at the same emulated time.
//
// Built with -DSKIP_ENTRY_BARRIER it is the planted twin
// (lsa_allreduce_no_entry_barrier): a rank may read a peer's send buffer
// before that peer's host has written this iteration's inputs, and
// overwrite its receive buffer while its host still reads the last
// iteration's; the race detector (EMUD_RACE=1) reports both. Built with
// -DALIAS_BARRIER_SLOT it is the second twin (lsa_allreduce_aliased_slot):
// every CTA opens its session on slot 0, so the CTAs of one rank share a
// barrier's epoch and inbox words; at exact timing the sums still come
// out right, and the race detector reports the CTAs' unordered stores to
// the slot's words. Built with -DLAST_RANK_SKIPS_LAUNCH (the third twin,
// lsa_allreduce_missing_rank) the last rank never launches iteration 1:
// every other rank's CTAs wait in the entry barrier, and the run ends in
// a hang report naming the barrier and the rank that never arrived.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

#ifndef CTAS
#define CTAS 2
#endif
#define THREADS 64

__global__ void lsaAllReduce(ncclWindow_t sendWin, ncclWindow_t recvWin, size_t count, ncclDevComm devComm) {
#ifdef ALIAS_BARRIER_SLOT
  const uint32_t slot = 0;  // the planted bug: every CTA on one slot
#else
  const uint32_t slot = blockIdx.x;  // a slot per CTA, as lsaBarrierCount = CTAS provides
#endif
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier, slot};
#ifndef SKIP_ENTRY_BARRIER
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
#endif
  const int rank = devComm.lsaRank, nRanks = devComm.lsaSize;
  // This rank's elements, spread over its CTAs' threads.
  const size_t first = threadIdx.x + blockDim.x * (blockIdx.x + gridDim.x * rank);
  const size_t stride = (size_t)blockDim.x * gridDim.x * nRanks;
  for (size_t i = first; i < count; i += stride) {
    float v = 0;
    for (int peer = 0; peer < nRanks; peer++) v += ((const float*)ncclGetLsaPointer(sendWin, 0, peer))[i];
    for (int peer = 0; peer < nRanks; peer++) ((float*)ncclGetLsaPointer(recvWin, 0, peer))[i] = v;
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// envSize is the positive number in environment variable name, or def.
static size_t envSize(const char* name, size_t def) {
  const char* s = std::getenv(name);
  if (!s) return def;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (!*s || *end || v == 0 || v > (1ull << 24)) {
    std::fprintf(stderr, "%s=%s: want a number of 1..%llu\n", name, s, 1ull << 24);
    std::exit(2);
  }
  return (size_t)v;
}

static float input(int iter, int rank, size_t i) { return (float)(rank + 1) + (float)((i + 5 * iter) % 13); }

// Each rank's thread: as NCCL's examples, rank 0 makes the unique id and
// util_broadcast gives it to the others. NULL when the sums were right.
static void* allReduce(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  const size_t count = envSize("LSA_ALLREDUCE_COUNT", 4096), bytes = count * sizeof(float);
  const int iters = (int)envSize("LSA_ALLREDUCE_ITERS", 3);
  int errors = 0;
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  NCCLCHECK(ncclCommQueryProperties(comm, &props));
  if (!props.deviceApiSupport || props.nLsaTeams != 1) {
    std::fprintf(stderr, "rank %d: no device API or more than one LSA team\n", my_rank);
    return (void*)1;
  }
  void *sendBuf, *recvBuf;
  NCCLCHECK(ncclMemAlloc(&sendBuf, bytes));
  NCCLCHECK(ncclMemAlloc(&recvBuf, bytes));
  ncclWindow_t sendWin, recvWin;
  NCCLCHECK(ncclCommWindowRegister(comm, sendBuf, bytes, &sendWin, NCCL_WIN_COLL_SYMMETRIC));
  NCCLCHECK(ncclCommWindowRegister(comm, recvBuf, bytes, &recvWin, NCCL_WIN_COLL_SYMMETRIC));
  cudaStream_t stream;
  CUDACHECK(cudaStreamCreate(&stream));
  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = CTAS;  // one barrier slot per CTA
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));

  std::vector<float> h(count);
  for (int iter = 0; iter < iters; iter++) {
    for (size_t i = 0; i < count; i++) h[i] = input(iter, my_rank, i);
    CUDACHECK(cudaMemcpy(sendBuf, h.data(), bytes, cudaMemcpyHostToDevice));
#ifdef LAST_RANK_SKIPS_LAUNCH
    if (my_rank == total_ranks - 1 && iter == 1) return nullptr;  // the planted bug: one rank never launches iteration 1
#endif
    lsaAllReduce<<<CTAS, THREADS, 0, stream>>>(sendWin, recvWin, count, devComm);
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaStreamSynchronize(stream));
    CUDACHECK(cudaMemcpy(h.data(), recvBuf, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i++) {
      float want = 0;
      for (int r = 0; r < total_ranks; r++) want += input(iter, r, i);
      if (h[i] != want && errors++ < 4)
        std::printf("rank %d iteration %d: element %zu is %g, want %g\n", my_rank, iter, i, h[i], want);
    }
  }

  NCCLCHECK(ncclDevCommDestroy(comm, &devComm));
  NCCLCHECK(ncclCommWindowDeregister(comm, sendWin));
  NCCLCHECK(ncclCommWindowDeregister(comm, recvWin));
  NCCLCHECK(ncclMemFree(sendBuf));
  NCCLCHECK(ncclMemFree(recvBuf));
  NCCLCHECK(ncclCommFinalize(comm));
  NCCLCHECK(ncclCommDestroy(comm));
  CUDACHECK(cudaStreamDestroy(stream));
  return errors ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
#if defined(SKIP_ENTRY_BARRIER)
  const char* name = "lsa_allreduce_no_entry_barrier";
#elif defined(ALIAS_BARRIER_SLOT)
  const char* name = "lsa_allreduce_aliased_slot";
#elif defined(LAST_RANK_SKIPS_LAUNCH)
  const char* name = "lsa_allreduce_missing_rank";
#else
  const char* name = "lsa_allreduce";
#endif
  int rc = run_example(argc, argv, allReduce);
  std::printf("%s: %s\n", name, rc ? "FAIL" : "PASS");
  return rc;
}
