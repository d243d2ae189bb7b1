// An all-to-all over NCCL's GIN (GPU-initiated networking), in the shape of
// NCCL's pure-GIN example, run ITERS times on fresh inputs: every CTA puts
// its slice of each peer's chunk into that peer's receive window with a
// remote signal and a local counter, waits until every peer's put of its
// slice has landed, and then reads what it received (doubling it into a
// local output buffer). A GIN barrier per CTA opens each iteration, so no
// peer writes a receive window its host still reads; the counter wait
// closes it, so the host rewrites a send window only once its puts have
// read it.
//
// Each CTA waits on a signal of its own (ginSignalCount = CTAS). Built
// with -DSHARED_SIGNAL it is the planted twin (gin_alltoall_shared_signal):
// every CTA signals and waits on signal 0, so one CTA's arrivals count for
// the other's wait. A CTA may then pass its wait before its own slices
// have landed and read them (wrong data, and a race between the peer's
// SDMA copy and the CTA's load), or read a base value that already holds
// the other CTA's early arrivals and wait for signals that never come (a
// hang report naming the signal, its value and who waits). Built with
// -DLAST_RANK_SKIPS_PUT (gin_alltoall_missing_put) the last rank never
// puts to rank 0: rank 0's CTAs wait for a signal one short, and the run
// ends in a hang report naming the signal, the value expected and the
// value there, and the waiting CTAs.
#include <cstdio>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

#define CTAS 2
#define THREADS 64
#define ITERS 3

__global__ void ginAlltoAll(ncclWindow_t sendWin, ncclWindow_t recvWin, float* out, size_t count, ncclDevComm devComm) {
  ncclGin gin{devComm, 0};
#ifdef SHARED_SIGNAL
  const ncclGinSignal_t sig = 0;  // the planted bug: every CTA on one signal
#else
  const ncclGinSignal_t sig = blockIdx.x;  // a signal per CTA, as ginSignalCount = CTAS provides
#endif
  const ncclGinCounter_t ctr = blockIdx.x;
  const uint64_t sigBase = gin.readSignal(sig);
  const uint64_t ctrBase = gin.readCounter(ctr);
  // Every rank's CTA has read its bases and its host is done with the
  // last iteration's buffers before any put of this one.
  ncclGinBarrierSession<ncclCoopCta> bar{ncclCoopCta(), gin, ncclTeamWorld(devComm), devComm.railGinBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed, ncclGinFenceLevel::Relaxed);

  ncclTeam world = ncclTeamWorld(devComm);
  const size_t slice = count / gridDim.x, first = blockIdx.x * slice;
  for (int r = threadIdx.x; r < world.nRanks; r += blockDim.x) {
#ifdef LAST_RANK_SKIPS_PUT
    if (world.rank == world.nRanks - 1 && r == 0) continue;  // the planted bug: rank 0 waits for a put never made
#endif
    gin.put(world, r, recvWin, (world.rank * count + first) * sizeof(float), sendWin, (r * count + first) * sizeof(float),
            slice * sizeof(float), ncclGin_SignalInc{sig}, ncclGin_WeakCounterInc{ctr});
  }
  gin.waitSignal(ncclCoopCta(), sig, sigBase + world.nRanks);

  const float* recv = (const float*)ncclGetLocalPointer(recvWin, 0);
  for (int src = 0; src < world.nRanks; src++)
    for (size_t i = first + threadIdx.x; i < first + slice; i += blockDim.x) out[src * count + i] = 2 * recv[src * count + i];

  gin.waitCounter(ncclCoopCta(), ctr, ctrBase + world.nRanks);
  gin.flush(ncclCoopCta());
}

static float input(int iter, int rank, int dest, size_t i) { return (float)(rank * 1000 + dest * 100 + (i + 7 * iter) % 97); }

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
  void *sendBuf, *recvBuf;
  NCCLCHECK(ncclMemAlloc(&sendBuf, bytes));
  NCCLCHECK(ncclMemAlloc(&recvBuf, bytes));
  ncclWindow_t sendWin, recvWin;
  NCCLCHECK(ncclCommWindowRegister(comm, sendBuf, bytes, &sendWin, NCCL_WIN_COLL_SYMMETRIC));
  NCCLCHECK(ncclCommWindowRegister(comm, recvBuf, bytes, &recvWin, NCCL_WIN_COLL_SYMMETRIC));
  float* out;
  CUDACHECK(cudaMalloc((void**)&out, bytes));
  cudaStream_t stream;
  CUDACHECK(cudaStreamCreate(&stream));
  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.railGinBarrierCount = CTAS;  // a GIN barrier slot per CTA
  reqs.ginSignalCount = CTAS;       // a signal per CTA
  reqs.ginCounterCount = CTAS;      // a counter per CTA
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));

  std::vector<float> h(elems);
  for (int iter = 0; iter < ITERS; iter++) {
    for (size_t i = 0; i < elems; i++) h[i] = input(iter, my_rank, (int)(i / count), i % count);
    CUDACHECK(cudaMemcpy(sendBuf, h.data(), bytes, cudaMemcpyHostToDevice));
    ginAlltoAll<<<CTAS, THREADS, 0, stream>>>(sendWin, recvWin, out, count, devComm);
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaStreamSynchronize(stream));
    CUDACHECK(cudaMemcpy(h.data(), out, bytes, cudaMemcpyDeviceToHost));
    for (int src = 0; src < total_ranks; src++)
      for (size_t i = 0; i < count; i++) {
        float want = 2 * input(iter, src, my_rank, i);
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
  CUDACHECK(cudaFree(out));
  NCCLCHECK(ncclCommFinalize(comm));
  NCCLCHECK(ncclCommDestroy(comm));
  CUDACHECK(cudaStreamDestroy(stream));
  return errors ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
#if defined(SHARED_SIGNAL)
  const char* name = "gin_alltoall_shared_signal";
#elif defined(LAST_RANK_SKIPS_PUT)
  const char* name = "gin_alltoall_missing_put";
#else
  const char* name = "gin_alltoall";
#endif
  int rc = run_example(argc, argv, alltoAll);
  std::printf("%s: %s\n", name, rc ? "FAIL" : "PASS");
  return rc;
}
