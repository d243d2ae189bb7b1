// Misuse of ncclGin, one case per run (GIN_MISUSE names it): rank 0's
// kernel makes the mistake and emud fails the kernel with a message
// naming the call, the argument and the dev comm's count. NCCL checks
// none of these on a GPU (its kernel would read or write past its GIN
// resources); emud stops at them (docs/cuda.md). GIN_MISUSE=timeout is the
// correct use of a timed wait that times out: it prints "timed out" and
// passes. GIN_MISUSE=reuse checks that ncclDevCommDestroy gave the dev
// comm's GIN words back: the next ncclMemAlloc gets them.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"
#include "../common/utils.h"

__global__ void misuse(int which, ncclWindow_t win, size_t bytes, ncclDevComm devComm, int* status) {
  ncclTeam world = ncclTeamWorld(devComm);
  switch (which) {
    case 0: {  // a context past ginContextCount
      ncclGin gin{devComm, 5};
      (void)gin;
      break;
    }
    case 1: {  // a signal past ginSignalCount
      ncclGin gin{devComm, 0};
      gin.put(world, 1, win, 0, win, 0, 64, ncclGin_SignalInc{7});
      break;
    }
    case 2: {  // a counter past ginCounterCount
      ncclGin gin{devComm, 0};
      gin.waitCounter(ncclCoopThread(), 3, 1);
      break;
    }
    case 3: {  // a barrier slot past worldGinBarrierCount
      ncclGin gin{devComm, 0};
      ncclGinBarrierSession<ncclCoopThread> bar{ncclCoopThread(), gin, ncclTeamTagWorld(), 4};
      break;
    }
    case 4: {  // a put past the destination window
      ncclGin gin{devComm, 0};
      gin.put(world, 1, win, bytes - 8, win, 0, 64, ncclGin_SignalInc{0});
      break;
    }
    case 5: {  // a timed wait that times out: ncclTimeout, the signal untouched
      ncclGin gin{devComm, 0};
      *status = gin.waitSignal(ncclCoopThread(), 0, 1, 64, cuda::memory_order_acquire, 2400) == ncclTimeout ? 1 : 2;
      break;
    }
  }
}

static const char* cases[] = {"context", "signal", "counter", "barrier", "window", "timeout", "reuse"};

static void* run(int my_rank, int total_ranks, int local_device, int devices_per_rank) {
  (void)devices_per_rank;
  const char* env = std::getenv("GIN_MISUSE");
  int which = -1;
  for (int i = 0; env && i < (int)(sizeof cases / sizeof *cases); i++)
    if (std::strcmp(env, cases[i]) == 0) which = i;
  if (which < 0) {
    if (my_rank == 0) std::fprintf(stderr, "GIN_MISUSE: one of context, signal, counter, barrier, window, timeout, reuse\n");
    return (void*)1;
  }
  ncclUniqueId id;
  if (my_rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  util_broadcast(0, my_rank, &id);
  CUDACHECK(cudaSetDevice(local_device));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, total_ranks, id, my_rank));
  const size_t bytes = 4096;
  void* buf;
  NCCLCHECK(ncclMemAlloc(&buf, bytes));
  ncclWindow_t win;
  NCCLCHECK(ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  ncclDevComm devComm;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginContextCount = 1;
  reqs.ginSignalCount = 1;
  reqs.ginCounterCount = 1;
  reqs.worldGinBarrierCount = 1;
  NCCLCHECK(ncclDevCommCreate(comm, &reqs, &devComm));
  int* status;
  CUDACHECK(cudaMalloc((void**)&status, sizeof(int)));
  CUDACHECK(cudaMemset(status, 0, sizeof(int)));
  int st = 0;
  if (my_rank == 0 && which != 6) {
    misuse<<<1, 1>>>(which, win, bytes, devComm, status);
    CUDACHECK(cudaDeviceSynchronize());
    CUDACHECK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
    if (which == 5) std::printf("%s\n", st == 1 ? "timed out" : "did not time out");
  }
  NCCLCHECK(ncclDevCommDestroy(comm, &devComm));
  bool reused = true;
  if (which == 6) {  // the dev comm's GIN words went back to the comm's heap
    void* again;
    NCCLCHECK(ncclMemAlloc(&again, 4096));
    reused = again == (void*)devComm.emudGinSignals;
    std::printf("rank %d: %s\n", my_rank, reused ? "GIN words reused" : "GIN words not reused");
    NCCLCHECK(ncclMemFree(again));
  }
  NCCLCHECK(ncclCommWindowDeregister(comm, win));
  NCCLCHECK(ncclMemFree(buf));
  NCCLCHECK(ncclCommDestroy(comm));
  return (which == 5 && my_rank == 0 && st != 1) || !reused ? (void*)1 : nullptr;
}

int main(int argc, char* argv[]) {
  int rc = run_example(argc, argv, run);
  std::printf("gin_misuse: %s\n", rc ? "FAIL" : "PASS");
  return rc;
}
