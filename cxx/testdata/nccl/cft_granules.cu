// Granule by granule (cxx TestCftGranules): rank 0 putCounted-s 8 KiB
// into rank 1's window; rank 1 waits until its counter holds the first
// 4 KiB, looks at a word of each granule, then waits for all 8 KiB and
// looks again. The fabric moves data in 4 KiB granules, each counted as
// it lands (package fabric's model), so after the first wait the second
// granule has not landed yet. Reading past the counted bytes is a race
// on purpose (the test runs without the race detector): it observes the
// granules.
#include <cstdio>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "utils.h"

#define BYTES 8192
#define WORDS (BYTES / 4)
#define THREADS 64

__global__ void granules(ncclWindow_t win, ncclDevComm devComm, uint32_t* seen) {
  ncclCoopCta coop;
  __shared__ ncclCftSmem cftSmem;
  __shared__ __align__(16) uint32_t stage[WORDS];
  const int rank = devComm.lsaRank;
  uint32_t* data = (uint32_t*)ncclGetLocalPointer(win, 0);
  uint64_t* counter = (uint64_t*)ncclGetLocalPointer(win, BYTES);
  for (int j = threadIdx.x; j < WORDS; j += blockDim.x) stage[j] = 0x1000u + (uint32_t)j;
  coop.sync();
  ncclCft<ncclCoopCta> cft{coop, cftSmem};
  if (rank == 0) {
    ncclCftLeId le;
    size_t off;
    ncclGetPeerLeInfo(win, 0, 1, devComm, &le, &off);
    cft.putCounted(coop, le, off, off + BYTES, stage, BYTES);
    cft.submit(coop);
    cft.flush(coop);
  } else if (rank == 1) {
    cft.waitCounted(coop, cuda::memory_order_acquire, ncclMemProxyType::Generic, counter, BYTES / 2);
    if (threadIdx.x == 0) {
      seen[0] = data[0];
      seen[1] = data[WORDS / 2];
    }
    cft.waitCounted(coop, cuda::memory_order_acquire, ncclMemProxyType::Generic, counter, BYTES);
    if (threadIdx.x == 0) seen[2] = data[WORDS / 2];
  }
}

static void* run(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));
  const size_t winBytes = BYTES + 256;  // the data, then its counter
  void* buf;
  NCCLCHECK(ncclMemAlloc(&buf, winBytes));
  CUDACHECK(cudaMemset(buf, 0, winBytes));
  ncclWindow_t win;
  NCCLCHECK(ncclCommWindowRegister(comm, buf, winBytes, &win, NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_CFT_COUNTED));
  uint32_t* seen;
  CUDACHECK(cudaMalloc(&seen, 3 * sizeof(uint32_t)));
  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.cftCaps = NCCL_CFT;
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));
  granules<<<1, THREADS>>>(win, devComm, seen);
  CUDACHECK(cudaDeviceSynchronize());
  uint32_t h[3];
  CUDACHECK(cudaMemcpy(h, seen, sizeof h, cudaMemcpyDeviceToHost));
  if (my_rank == 1)
    std::printf("rank 1: after %d counted bytes word 0 is %#x and word %d is %#x; after %d, word %d is %#x\n", BYTES / 2, h[0], WORDS / 2,
                h[1], BYTES, WORDS / 2, h[2]);
  NCCLCHECK(ncclDevCommDestroy(comm, &devComm));
  NCCLCHECK(ncclCommWindowDeregister(comm, win));
  NCCLCHECK(ncclMemFree(buf));
  CUDACHECK(cudaFree(seen));
  NCCLCHECK(ncclCommDestroy(comm));
  return nullptr;
}

int main(int argc, char* argv[]) { return run_example(argc, argv, run); }
