// A hybrid all-to-all over NCCL's device API, in the shape of NCCL's hybrid
// example, run ITERS times on fresh inputs: peers in this rank's LSA team
// get their chunks through LSA stores, the others through GIN puts with a
// signal per CTA; a hybrid barrier (ncclBarrierSession: the LSA team's
// barrier, then the rail team's GIN barrier) opens and closes each
// iteration. Each CTA moves its slice of every chunk.
//
// As in NCCL's example, the LSA team is the node: on emud's one node every
// peer is an LSA peer, so the GIN loop posts nothing and the CTAs' waits
// are for no signal; the kernel is written for any split.
//
// Built with -DSKIP_EXIT_BARRIER it is the planted twin
// (hybrid_alltoall_no_exit_barrier): the closing barrier is left out, so
// a rank's host may read its receive buffer while a peer's CTAs still
// store into it. The race detector (EMUD_RACE=1) reports the peer's LSA
// stores against the host's copy out of the buffer.
#include <cstdio>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

#define CTAS 2
#define THREADS 64
#define ITERS 3

__global__ void hybridAlltoAll(ncclWindow_t sendWin, ncclWindow_t recvWin, size_t count, ncclDevComm devComm) {
  ncclGin gin{devComm, 0};
  const ncclGinSignal_t sig = blockIdx.x;  // a signal per CTA, as ginSignalCount = CTAS provides
  const uint64_t sigBase = gin.readSignal(sig);
  ncclBarrierSession<ncclCoopCta> bar{ncclCoopCta(), ncclTeamTagWorld(), gin, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire, ncclGinFenceLevel::None);

  ncclTeam world = ncclTeamWorld(devComm), lsa = ncclTeamLsa(devComm);
  const int startLsa = world.rank - lsa.rank, lsaSize = lsa.nRanks;
  const size_t slice = count / gridDim.x, first = blockIdx.x * slice, bytes = slice * sizeof(float);
  // Peers outside the LSA team: a GIN put of this CTA's slice each.
  int remote = 0;
  for (int r = 0; r < world.nRanks; r++) {
    if (r >= startLsa && r < startLsa + lsaSize) continue;
    if (remote++ % blockDim.x == threadIdx.x)
      gin.put(world, r, recvWin, (world.rank * count + first) * sizeof(float), sendWin, (r * count + first) * sizeof(float), bytes,
              ncclGin_SignalInc{sig});
  }
  // Peers in the LSA team: stores through their LSA pointers.
  const float* send = (const float*)ncclGetLocalPointer(sendWin, 0);
  for (int lp = 0; lp < lsaSize; lp++) {
    float* recv = (float*)ncclGetLsaPointer(recvWin, 0, lp);
    for (size_t i = first + threadIdx.x; i < first + slice; i += blockDim.x)
      recv[world.rank * count + i] = send[(startLsa + lp) * count + i];
  }
  gin.waitSignal(ncclCoopCta(), sig, sigBase + remote);
  gin.flush(ncclCoopCta());
#ifndef SKIP_EXIT_BARRIER
  bar.sync(ncclCoopCta(), cuda::memory_order_release, ncclGinFenceLevel::Put);
#endif
}

static float input(int iter, int rank, int dest, size_t i) { return (float)(rank * 1000 + dest * 100 + (i + 3 * iter) % 89); }

static void* alltoAll(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  const size_t count = 1024, elems = count * total_ranks, bytes = elems * sizeof(float);
  int errors = 0;
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  NCCLCHECK(ncclCommQueryProperties(comm, &props));
  if (!props.deviceApiSupport || props.ginType == NCCL_GIN_TYPE_NONE) {
    std::fprintf(stderr, "rank %d: no device API or no GIN\n", my_rank);
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
  reqs.barrierCount = CTAS;    // a hybrid barrier slot per CTA
  reqs.ginSignalCount = CTAS;  // a signal per CTA
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));

  std::vector<float> h(elems);
  for (int iter = 0; iter < ITERS; iter++) {
    for (size_t i = 0; i < elems; i++) h[i] = input(iter, my_rank, (int)(i / count), i % count);
    CUDACHECK(cudaMemcpy(sendBuf, h.data(), bytes, cudaMemcpyHostToDevice));
    hybridAlltoAll<<<CTAS, THREADS, 0, stream>>>(sendWin, recvWin, count, devComm);
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaStreamSynchronize(stream));
    CUDACHECK(cudaMemcpy(h.data(), recvBuf, bytes, cudaMemcpyDeviceToHost));
    for (int src = 0; src < total_ranks; src++)
      for (size_t i = 0; i < count; i++) {
        float want = input(iter, src, my_rank, i);
        if (h[src * count + i] != want && errors++ < 4)
          std::printf("rank %d iteration %d: element %zu from rank %d is %g, want %g\n", my_rank, iter, i, src, h[src * count + i],
                      want);
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
#ifdef SKIP_EXIT_BARRIER
  const char* name = "hybrid_alltoall_no_exit_barrier";
#else
  const char* name = "hybrid_alltoall";
#endif
  int rc = run_example(argc, argv, alltoAll);
  std::printf("%s: %s\n", name, rc ? "FAIL" : "PASS");
  return rc;
}
