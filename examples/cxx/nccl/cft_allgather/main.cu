// A counted all-gather over NCCL's CFT device API (NCCL 2.32's counted
// writes), run ITERS times on fresh inputs. Each CTA stages its share of
// this rank's elements in shared memory with a bulk copy
// (cuda::device::memcpy_async_tx on a cuda::barrier), puts it into every
// rank's receive window at this rank's block (putCounted: each delivered
// byte adds to the receiver's 8-byte counter after the data), submits and
// flushes; then every CTA waits until its rank's counter holds every
// rank's bytes (waitCounted, acquire). The counter is never reset: the
// expected count is the running total, (iter + 1) * nRanks * bytes. A CFT
// barrier on the CTA's own slot at entry orders the last iteration's host
// reads before this one's puts.
//
// Built with -DMULTIMEM each chunk is one putMultimemCounted to the
// multicast LE (every rank's window), as NCCL's multimem example does.
// Built with -DWRONG_BYTE_COUNT it is the planted twin
// (cft_allgather_wrong_count): each rank copies its own block locally
// instead of putting it through the fabric, but still waits for nRanks
// blocks of bytes, so its counter stops one block short: a hang report
// naming the counter, its bytes and the cause. Built with -DSKIP_WAIT
// (cft_allgather_no_wait) the kernel ends without waitCounted: peers'
// counted writes may land while the host copies the receive window out,
// which the race detector (EMUD_RACE=1) reports.
#include <cstdio>
#include <cuda/barrier>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

#define CTAS 4
#define THREADS 128
#define COUNT 1024  // elements per rank
#define ITERS 2
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((a) - 1))
#define CFT_SMEM_OFFSET 0
#define MBAR_OFFSET ALIGN_UP(CFT_SMEM_OFFSET + sizeof(ncclCftSmem), alignof(cuda::barrier<cuda::thread_scope_block>))
#define STAGE_OFFSET ALIGN_UP(MBAR_OFFSET + sizeof(cuda::barrier<cuda::thread_scope_block>), 16)
#define SMEM_BYTES (STAGE_OFFSET + THREADS * sizeof(float))

__global__ void cftAllGather(ncclWindow_t sendWin, ncclWindow_t recvWin, size_t count, int iter, ncclDevComm devComm) {
  ncclCoopCta coop;
  ncclTeam team = ncclTeamCft(devComm);
  const int rank = team.rank, nRanks = team.nRanks;
  const size_t bytes = count * sizeof(float);
  float* send = (float*)ncclGetLocalPointer(sendWin, 0);
  float* recv = (float*)ncclGetLocalPointer(recvWin, 0);
  uint64_t* counter = (uint64_t*)ALIGN_UP((uintptr_t)(recv + count * nRanks), (uintptr_t)256);

  ncclCftBarrierSession<ncclCoopCta> bar{coop, devComm, blockIdx.x};
  bar.sync(coop, cuda::memory_order_relaxed, ncclMemProxyType::Generic, ncclMemProxyType::Generic);

  extern __shared__ __align__(16) unsigned char smemBytes[];
  ncclCftSmem* cftSmem = (ncclCftSmem*)(smemBytes + CFT_SMEM_OFFSET);
  auto* mbar = (cuda::barrier<cuda::thread_scope_block>*)(smemBytes + MBAR_OFFSET);
  float* stage = (float*)(smemBytes + STAGE_OFFSET);
  ncclCft<ncclCoopCta> cft{coop, *cftSmem};
  if (coop.thread_rank() == 0) init(mbar, 1);
  coop.sync();

  for (size_t base = blockIdx.x * blockDim.x; base < count; base += (size_t)blockDim.x * gridDim.x) {
    uint32_t n = (uint32_t)(count - base < blockDim.x ? count - base : blockDim.x);
    uint32_t chunk = n * sizeof(float);
    if (coop.thread_rank() == 0) {
      cuda::device::memcpy_async_tx(stage, send + base, cuda::aligned_size_t<16>(chunk), *mbar);
      auto token = cuda::device::barrier_arrive_tx(*mbar, 1, chunk);
      mbar->wait(std::move(token));
    }
    coop.sync();
#ifdef MULTIMEM
    ncclCftLeId le;
    size_t leOff;
    ncclGetMultimemLeInfo(recvWin, rank * bytes, devComm, &le, &leOff);
    size_t counterOff = ALIGN_UP(leOff + (nRanks - rank) * bytes, 256u);  // a 32-bit mask, as NCCL's examples write it
    cft.putMultimemCounted(coop, le, leOff + base * sizeof(float), counterOff, stage, chunk);
#else
    for (int peer = 0; peer < nRanks; peer++) {
#ifdef WRONG_BYTE_COUNT
      if (peer == rank) {  // the planted bug: its own block copied locally, not counted
        if (threadIdx.x < n) recv[rank * count + base + threadIdx.x] = stage[threadIdx.x];
        continue;
      }
#endif
      ncclCftLeId le;
      size_t leOff;
      ncclGetCftLeInfo(recvWin, rank * bytes, peer, team, devComm, &le, &leOff);
      size_t counterOff = ALIGN_UP(leOff + (nRanks - rank) * bytes, 256u);  // a 32-bit mask, as NCCL's examples write it
      cft.putCounted(coop, le, leOff + base * sizeof(float), counterOff, stage, chunk);
    }
#endif
    cft.submit(coop);
    cft.flush(coop);
  }
  // Every rank's bytes, running total over the launches.
#ifndef SKIP_WAIT
  cft.waitCounted(coop, cuda::memory_order_acquire, ncclMemProxyType::Generic, counter, (uint64_t)(iter + 1) * nRanks * bytes,
                  devComm.abortFlag);
#else
  (void)counter;  // the planted bug: no wait for the peers' bytes
#endif
}

static float input(int iter, int rank, size_t i) { return (float)(rank * 1000 + i) + 0.5f * (float)iter; }

static void* allGather(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  const size_t count = COUNT, sendBytes = count * sizeof(float), recvBytes = count * total_ranks * sizeof(float);
  const size_t counterBytes = 256 + 256;  // the counter, at the first 256-byte boundary past the data
  const size_t winBytes = ALIGN_UP(recvBytes + counterBytes, (size_t)256);
  int errors = 0;
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));

  void *dSend, *dRecv;
  NCCLCHECK(ncclMemAlloc(&dSend, sendBytes));
  NCCLCHECK(ncclMemAlloc(&dRecv, winBytes));
  CUDACHECK(cudaMemset(dRecv, 0, winBytes));
  ncclWindow_t sendWin, recvWin;
  NCCLCHECK(ncclCommWindowRegister(comm, dSend, sendBytes, &sendWin, NCCL_WIN_COLL_SYMMETRIC));
  NCCLCHECK(ncclCommWindowRegister(comm, dRecv, winBytes, &recvWin, NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_CFT_COUNTED));

  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
#ifdef MULTIMEM
  reqs.cftCaps = NCCL_CFT | NCCL_CFT_MULTIMEM;
#else
  reqs.cftCaps = NCCL_CFT;
#endif
  reqs.cftBarrierCount = CTAS;
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));
  cudaStream_t stream;
  CUDACHECK(cudaStreamCreate(&stream));

  std::vector<float> h(count * total_ranks);
  for (int iter = 0; iter < ITERS; iter++) {
    for (size_t i = 0; i < count; i++) h[i] = input(iter, my_rank, i);
    CUDACHECK(cudaMemcpy(dSend, h.data(), sendBytes, cudaMemcpyHostToDevice));
    cftAllGather<<<CTAS, THREADS, SMEM_BYTES, stream>>>(sendWin, recvWin, count, iter, devComm);
    CUDACHECK(cudaGetLastError());
    CUDACHECK(cudaStreamSynchronize(stream));
    CUDACHECK(cudaMemcpy(h.data(), dRecv, recvBytes, cudaMemcpyDeviceToHost));
    for (int r = 0; r < total_ranks; r++)
      for (size_t i = 0; i < count; i++)
        if (h[r * count + i] != input(iter, r, i) && errors++ < 4)
          std::printf("rank %d iteration %d: rank %d's element %zu is %g, want %g\n", my_rank, iter, r, i, h[r * count + i], input(iter, r, i));
  }

  NCCLCHECK(ncclDevCommDestroy(comm, &devComm));
  NCCLCHECK(ncclCommWindowDeregister(comm, recvWin));
  NCCLCHECK(ncclCommWindowDeregister(comm, sendWin));
  NCCLCHECK(ncclMemFree(dRecv));
  NCCLCHECK(ncclMemFree(dSend));
  NCCLCHECK(ncclCommFinalize(comm));
  NCCLCHECK(ncclCommDestroy(comm));
  CUDACHECK(cudaStreamDestroy(stream));
  return errors ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
#if defined(WRONG_BYTE_COUNT)
  const char* name = "cft_allgather_wrong_count";
#elif defined(SKIP_WAIT)
  const char* name = "cft_allgather_no_wait";
#elif defined(MULTIMEM)
  const char* name = "cft_allgather_multimem";
#else
  const char* name = "cft_allgather";
#endif
  int rc = run_example(argc, argv, allGather);
  std::printf("%s: %s\n", name, rc ? "FAIL" : "PASS");
  return rc;
}
