// The other ncclCft operations, checked for data on every rank: a Sum
// reduction of uint32_t into the next rank's window, a put with a copy
// mask (bytes 0-7 of each 16-byte word) into the next rank's window, and
// a get from the previous rank's window into shared memory, one submit
// and one flush; CFT barrier syncs frame them (the entry one: every
// host has initialised its window; the exit one: the peers' operations
// into this window are complete before this host reads it).
//
// With CFT_MISUSE=n in the environment the kernel makes misuse n
// instead (cxx's TestNcclCftMisuse), each a kernel failure naming the
// call and the rule: 1 an unaligned shared-memory source, 2 a size that
// is not whole 16-byte words, 3 flush before submit, 4 the ncclCft ending
// with operations in flight, 5 a counted put whose counter is not in an
// NCCL_WIN_CFT_COUNTED window, 6 an LE outside the team, 7 a multimem put
// on a dev comm without NCCL_CFT_MULTIMEM, 8 a Min reduction of floats,
// 9 a pullRed Sum of doubles (CFT has none).
//
// With CFT_REUSE_STAGE=1 the kernel overwrites its shared-memory source
// after submit and flushSmem, which is correct: the operations have read
// it, and the data checks pass. With CFT_REUSE_STAGE=2 it overwrites it
// after submit without flushSmem (the planted twin): the fabric reads a
// source as its bytes leave the port, after submit, so the peers receive
// the overwritten words and the checks fail.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

#define THREADS 64
#define REGION 256  // bytes: 64 uint32_t
enum { R_RED, R_MASK, R_GET, R_OUT, R_COUNT };

static uint32_t init(int region, int rank, int i) { return (uint32_t)(region * 100000 + rank * 1000 + i); }
__device__ static uint32_t staged(int rank, int i) { return (uint32_t)(rank * 7919 + i * 3); }

__global__ void cftOps(ncclWindow_t win, int misuse, int reuse, ncclDevComm devComm) {
  ncclCoopCta coop;
  ncclTeam team = ncclTeamCft(devComm);
  const int rank = team.rank, next = (rank + 1) % team.nRanks, prev = (rank + team.nRanks - 1) % team.nRanks;
  __shared__ ncclCftSmem cftSmem;
  __shared__ __align__(16) uint32_t stage[THREADS + 4];
  __shared__ __align__(16) uint32_t got[THREADS];
  ncclCftBarrierSession<ncclCoopCta> bar{coop, devComm, 0};
  bar.sync(coop, cuda::memory_order_acquire, ncclMemProxyType::Generic, ncclMemProxyType::Fabric);
  stage[threadIdx.x] = staged(rank, threadIdx.x);
  {
    ncclCft<ncclCoopCta> cft{coop, cftSmem};
    ncclCftLeId leNext, lePrev;
    size_t offNext, offPrev;
    ncclGetCftLeInfo(win, 0, next, team, devComm, &leNext, &offNext);
    ncclGetCftLeInfo(win, 0, prev, team, devComm, &lePrev, &offPrev);
    switch (misuse) {
      case 1: cft.put(coop, leNext, offNext + R_OUT * REGION, stage + 1, REGION); break;
      case 2: cft.put(coop, leNext, offNext + R_OUT * REGION, stage, 20); break;
      case 3: cft.put(coop, leNext, offNext + R_OUT * REGION, stage, REGION); cft.flush(coop); break;
      case 4: cft.put(coop, leNext, offNext + R_OUT * REGION, stage, REGION); cft.submit(coop); break;
      case 5: cft.putCounted(coop, leNext, offNext + R_OUT * REGION, offNext + R_GET * REGION, stage, REGION); break;
      case 6: {
        ncclCftLeId le;
        size_t off;
        ncclGetPeerLeInfo(win, 0, team.nRanks, devComm, &le, &off);  // one past the last rank
        cft.put(coop, le, off, stage, REGION);
        break;
      }
      case 7: {
        ncclCftLeId le;
        size_t off;
        ncclGetMultimemLeInfo(win, 0, devComm, &le, &off);
        cft.putMultimem(coop, le, off + R_OUT * REGION, stage, REGION);
        break;
      }
      case 8: cft.red(coop, leNext, offNext + R_RED * REGION, ncclCftOpMin<float>{}, stage, REGION); break;
      case 9: {
        ncclCftLeId le;
        size_t off;
        ncclGetMultimemLeInfo(win, R_RED * REGION, devComm, &le, &off);
        if (threadIdx.x < 32) cft.pullRed(ncclCoopWarp(), le, off, ncclCftOpSum<double>{}, got, REGION);
        break;
      }
      default:
        cft.red(coop, leNext, offNext + R_RED * REGION, ncclCftOpSum<uint32_t>{}, stage, REGION);
        cft.putCpMask(coop, leNext, offNext + R_MASK * REGION, stage, REGION, 0x00ff);
        cft.get(coop, lePrev, offPrev + R_GET * REGION, got, REGION);
        cft.submit(coop);
        if (reuse == 1) cft.flushSmem(coop);
        if (reuse) {
          stage[threadIdx.x] = 0xbad;  // the source reused: safe only after flushSmem
          coop.sync();
        }
        bool hasReport = true;
        uint32_t report = 1;
        cft.flush(coop, &hasReport, &report);
        if (hasReport || report != 0) ((uint32_t*)ncclGetLocalPointer(win, R_OUT * REGION))[threadIdx.x] = 0xdead;
        else ((uint32_t*)ncclGetLocalPointer(win, R_OUT * REGION))[threadIdx.x] = got[threadIdx.x];
    }
  }
  (void)prev;
  bar.sync(coop, cuda::memory_order_release, ncclMemProxyType::Fabric, ncclMemProxyType::Generic);
}

static void* cftOpsRank(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  const char* m = std::getenv("CFT_MISUSE");
  const int misuse = m ? std::atoi(m) : 0;
  const char* r = std::getenv("CFT_REUSE_STAGE");
  const int reuse = r ? std::atoi(r) : 0;
  const size_t bytes = R_COUNT * REGION;
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));
  void* buf;
  NCCLCHECK(ncclMemAlloc(&buf, bytes));
  std::vector<uint32_t> h(bytes / 4);
  for (int r = 0; r < R_COUNT; r++)
    for (int i = 0; i < REGION / 4; i++) h[r * REGION / 4 + i] = init(r, my_rank, i);
  CUDACHECK(cudaMemcpy(buf, h.data(), bytes, cudaMemcpyHostToDevice));
  ncclWindow_t win;
  NCCLCHECK(ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.cftCaps = NCCL_CFT;
  reqs.cftBarrierCount = 1;
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));
  cudaStream_t stream;
  CUDACHECK(cudaStreamCreate(&stream));
  cftOps<<<1, THREADS, 0, stream>>>(win, misuse, reuse, devComm);
  CUDACHECK(cudaStreamSynchronize(stream));
  CUDACHECK(cudaMemcpy(h.data(), buf, bytes, cudaMemcpyDeviceToHost));
  const int prev = (my_rank + total_ranks - 1) % total_ranks;
  int errors = 0;
  auto check = [&](const char* what, int i, uint32_t got, uint32_t want) {
    if (got != want && errors++ < 4) std::printf("rank %d: %s[%d] is %#x, want %#x\n", my_rank, what, i, got, want);
  };
  for (int i = 0; i < REGION / 4; i++) {
    uint32_t s = (uint32_t)(prev * 7919 + i * 3);
    check("red", i, h[R_RED * REGION / 4 + i], init(R_RED, my_rank, i) + s);
    check("cpMask", i, h[R_MASK * REGION / 4 + i], i % 4 < 2 ? s : init(R_MASK, my_rank, i));  // bytes 0-7 of each 16
    check("get", i, h[R_OUT * REGION / 4 + i], init(R_GET, prev, i));
  }
  NCCLCHECK(ncclDevCommDestroy(comm, &devComm));
  NCCLCHECK(ncclCommWindowDeregister(comm, win));
  NCCLCHECK(ncclMemFree(buf));
  NCCLCHECK(ncclCommFinalize(comm));
  NCCLCHECK(ncclCommDestroy(comm));
  CUDACHECK(cudaStreamDestroy(stream));
  return errors ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
  int rc = run_example(argc, argv, cftOpsRank);
  std::printf("cft_ops: %s\n", rc ? "FAIL" : "PASS");
  return rc;
}
