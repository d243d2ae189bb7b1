// A CFT barrier exchange over NCCL's device API, run ITERS times: every
// CTA of every rank stores a stamp into the next rank's window through
// LSA pointers, syncs on its own CFT barrier slot (blockIdx.x, as
// cftBarrierCount = CTAS provides), and checks the stamps the previous
// rank stored into its own window. The entry sync orders the last
// iteration's checks before this iteration's stores; the middle one
// orders the stores before the checks.
//
// Built with -DMULTIMEM the sessions are multimem barriers (cftCaps asks
// for NCCL_CFT_MULTIMEM too). Built with -DALIAS_BARRIER_SLOT it is the
// planted twin (cft_barrier_aliased_slot): every CTA opens slot 0, so one
// rank's CTAs share the slot's epoch and inboxes and a peer's arrival no
// longer says which CTA's stores are done. NCCL checks nothing; emud
// names the aliased slot (a warning, or with EMUD_NCCL_DEBUG=1 the
// kernel stops at the session's line). Built with -DINDEX_PAST_COUNT each
// CTA uses slot blockIdx.x + gridDim.x, past cftBarrierCount: NCCL checks
// nothing and the exchange still works (emud gives such a slot state of
// its own), and EMUD_NCCL_DEBUG=1 stops the kernel naming the index.
// Built with -DLAST_RANK_SKIPS_LAUNCH the last rank never launches
// iteration 1: the other ranks' CTAs wait at the entry sync, and the run
// ends in a hang report naming each CTA's slot and the rank that has not
// arrived.
#include <cstdio>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

#ifndef CTAS
#define CTAS 2
#endif
#define THREADS 64
#define ITERS 3
#ifdef MULTIMEM
#define USE_MULTIMEM true
#else
#define USE_MULTIMEM false
#endif

__device__ __host__ static int stamp(int iter, int rank, int i) { return iter * 1000003 + rank * 10007 + i; }

__global__ void cftBarrierKernel(ncclWindow_t win, int iter, int* errors, ncclDevComm devComm) {
  ncclCoopCta coop;
  ncclTeam team = ncclTeamCft(devComm);
#if defined(ALIAS_BARRIER_SLOT)
  const uint32_t slot = 0;  // the planted bug: every CTA on one slot
#elif defined(INDEX_PAST_COUNT)
  const uint32_t slot = blockIdx.x + gridDim.x;  // past cftBarrierCount: unchecked, as in NCCL
#else
  const uint32_t slot = blockIdx.x;
#endif
  ncclCftBarrierSession<ncclCoopCta> bar{coop, devComm, slot, USE_MULTIMEM};
  bar.sync(coop, cuda::memory_order_acquire, ncclMemProxyType::Generic, ncclMemProxyType::Generic);
  const int next = (team.rank + 1) % team.nRanks, prev = (team.rank + team.nRanks - 1) % team.nRanks;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  ((int*)ncclGetLsaPointer(win, 0, next))[i] = stamp(iter, team.rank, i);
  bar.sync(coop, cuda::memory_order_acq_rel, ncclMemProxyType::Generic, ncclMemProxyType::Generic);
  int got = ((const int*)ncclGetLocalPointer(win, 0))[i];
  if (got != stamp(iter, prev, i)) atomicAdd(errors, 1);
}

static void* cftBarrier(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  const size_t bytes = CTAS * THREADS * sizeof(int);
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));
  void* buf;
  NCCLCHECK(ncclMemAlloc(&buf, bytes));
  CUDACHECK(cudaMemset(buf, 0, bytes));
  ncclWindow_t win;
  NCCLCHECK(ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  int* errors;
  CUDACHECK(cudaMalloc((void**)&errors, sizeof(int)));
  CUDACHECK(cudaMemset(errors, 0, sizeof(int)));
  cudaStream_t stream;
  CUDACHECK(cudaStreamCreate(&stream));

  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.cftCaps = USE_MULTIMEM ? (NCCL_CFT | NCCL_CFT_MULTIMEM) : NCCL_CFT;
  reqs.cftBarrierCount = CTAS;  // one barrier slot per CTA
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));

  for (int iter = 0; iter < ITERS; iter++) {
#ifdef LAST_RANK_SKIPS_LAUNCH
    if (my_rank == total_ranks - 1 && iter == 1) return nullptr;  // the planted bug: one rank never launches iteration 1
#endif
    cftBarrierKernel<<<CTAS, THREADS, 0, stream>>>(win, iter, errors, devComm);
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaStreamSynchronize(stream));
  }
  int h = 0;
  CUDACHECK(cudaMemcpy(&h, errors, sizeof(int), cudaMemcpyDeviceToHost));
  if (h) std::printf("rank %d: %d stamps wrong\n", my_rank, h);

  NCCLCHECK(ncclDevCommDestroy(comm, &devComm));
  NCCLCHECK(ncclCommWindowDeregister(comm, win));
  NCCLCHECK(ncclMemFree(buf));
  CUDACHECK(cudaFree(errors));
  NCCLCHECK(ncclCommFinalize(comm));
  NCCLCHECK(ncclCommDestroy(comm));
  CUDACHECK(cudaStreamDestroy(stream));
  return h ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
#if defined(ALIAS_BARRIER_SLOT)
  const char* name = "cft_barrier_aliased_slot";
#elif defined(INDEX_PAST_COUNT)
  const char* name = "cft_barrier_index_past_count";
#elif defined(LAST_RANK_SKIPS_LAUNCH)
  const char* name = "cft_barrier_missing_rank";
#elif defined(MULTIMEM)
  const char* name = "cft_barrier_multimem";
#else
  const char* name = "cft_barrier";
#endif
  int rc = run_example(argc, argv, cftBarrier);
  std::printf("%s: %s\n", name, rc ? "FAIL" : "PASS");
  return rc;
}
