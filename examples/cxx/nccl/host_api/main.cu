// NCCL's host calls as emud emulates them, from one thread: misuse first
// (each must fail with the result NCCL gives, and say why on stderr),
// then ncclCommInitAll over every device and the comm queries. Prints
// PASS or each call that came out wrong.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cuda_runtime.h"
#include "nccl.h"
#include "nccl_device.h"

static int errors = 0;
#define EXPECT(cond)                                                 \
  do {                                                               \
    if (!(cond)) {                                                   \
      std::printf("%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      errors++;                                                      \
    }                                                                \
  } while (0)

int main() {
  int nDev = 0;
  EXPECT(cudaGetDeviceCount(&nDev) == cudaSuccess && nDev >= 2);
  void* p = nullptr;
  // No comm on device 0 yet: emud's symmetric memory is a comm's.
  EXPECT(ncclMemAlloc(&p, 4096) == ncclInvalidUsage && p == nullptr);
  EXPECT(ncclMemFree((void*)0x1234) == ncclInvalidArgument);

  std::vector<ncclComm_t> comms(nDev);
  EXPECT(ncclCommInitAll(comms.data(), nDev, nullptr) == ncclSuccess);
  for (int i = 0; i < nDev; i++) {
    int count = -1, rank = -1, dev = -1;
    EXPECT(ncclCommCount(comms[i], &count) == ncclSuccess && count == nDev);
    EXPECT(ncclCommUserRank(comms[i], &rank) == ncclSuccess && rank == i);
    EXPECT(ncclCommCuDevice(comms[i], &dev) == ncclSuccess && dev == i);
    ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
    EXPECT(ncclCommQueryProperties(comms[i], &props) == ncclSuccess && props.rank == i && props.nRanks == nDev &&
           props.deviceApiSupport && props.nLsaTeams == 1 && !props.multimemSupport);
    ncclTeam_t w = ncclTeamWorld(comms[i]);
    EXPECT(w.nRanks == nDev && w.rank == i && w.stride == 1);
  }
  // Device 0's comm now lends ncclMemAlloc its heap.
  EXPECT(cudaSetDevice(0) == cudaSuccess);
  EXPECT(ncclMemAlloc(&p, 4096) == ncclSuccess && p != nullptr);
  EXPECT(ncclMemFree(p) == ncclSuccess);
  // What is not emulated in C++ yet is refused, naming it.
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaLLA2ABlockCount = 4;
  ncclDevComm dc;
  EXPECT(ncclDevCommCreate(comms[0], &reqs, &dc) == ncclInvalidUsage);
  reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.magic = 0;
  EXPECT(ncclDevCommCreate(comms[0], &reqs, &dc) == ncclInvalidArgument);
  // LSA multimem is not emulated: its pointer query says so.
  void* mm = &dc;
  EXPECT(ncclGetLsaMultimemDevicePointer(nullptr, 0, &mm) == ncclInvalidUsage && mm == nullptr);
  // Suspend, resume, revoke and the memory statistics: a suspended or
  // revoked comm refuses collectives, naming why.
  float* f = nullptr;
  EXPECT(cudaMalloc(&f, sizeof(float)) == cudaSuccess);
  uint64_t v = 9;
  EXPECT(ncclCommSuspend(comms[0], NCCL_SUSPEND_MEM) == ncclSuccess);
  EXPECT(ncclCommSuspend(comms[0], 0) == ncclInvalidUsage);
  EXPECT(ncclCommMemStats(comms[0], ncclStatGpuMemSuspended, &v) == ncclSuccess && v == 1);
  EXPECT(ncclAllReduce(f, f, 1, ncclFloat, ncclSum, comms[0], nullptr) == ncclInvalidUsage);
  EXPECT(ncclCommResume(comms[0]) == ncclSuccess && ncclCommResume(comms[0]) == ncclInvalidUsage);
  EXPECT(ncclCommMemStats(comms[0], ncclStatGpuMemSuspended, &v) == ncclSuccess && v == 0);
  EXPECT(ncclCommMemStats(comms[0], ncclStatGpuMemTotal, &v) == ncclSuccess && v == 0);
  EXPECT(ncclCommMemStats(comms[0], (ncclCommMemStat_t)7, &v) == ncclInvalidArgument);
  EXPECT(ncclCommRevoke(comms[0], 1) == ncclInvalidArgument);
  // A window gives back the buffer it was registered on (a lone rank's
  // comm, so that the registration, collective, needs no other thread).
  ncclUniqueId id;
  ncclComm_t solo = nullptr;
  ncclWindow_t win = nullptr;
  void* userPtr = nullptr;
  EXPECT(ncclGetUniqueId(&id) == ncclSuccess && ncclCommInitRank(&solo, 1, id, 0) == ncclSuccess);
  EXPECT(ncclMemAlloc(&p, 1 << 16) == ncclSuccess);
  EXPECT(ncclCommWindowRegister(solo, p, 1 << 16, &win) == ncclSuccess);
  EXPECT(ncclWinGetUserPtr(solo, win, &userPtr) == ncclSuccess && userPtr == p);
  EXPECT(ncclCommRevoke(solo, NCCL_REVOKE_DEFAULT) == ncclSuccess);
  EXPECT(ncclAllReduce(f, f, 1, ncclFloat, ncclSum, solo, nullptr) == ncclInvalidUsage);
  EXPECT(ncclCommFinalize(solo) == ncclInvalidUsage);
  EXPECT(ncclCommDestroy(solo) == ncclSuccess);
  // Team arithmetic: 8 ranks as 2 x 4.
  ncclTeam_t world{8, 5, 1};
  ncclTeam_t inner = ncclTeamInnerFactor(world, 4), outer = ncclTeamOuterFactor(world, 4);
  EXPECT(inner.nRanks == 4 && inner.rank == 1 && inner.stride == 1);
  EXPECT(outer.nRanks == 2 && outer.rank == 1 && outer.stride == 4);
  EXPECT(ncclTeamRankIsMember(inner, world, 6) && !ncclTeamRankIsMember(inner, world, 0));
  EXPECT(ncclTeamRankToTeam(inner, world, 7) == 3 && ncclTeamRankToTeam(outer, world, 1) == 0);
  // world \ inner is world ranks 0-3: the index-th of them, -1 past them.
  EXPECT(ncclTeamRankInDifference(world, inner, 0) == 0 && ncclTeamRankInDifference(world, inner, 3) == 3 &&
         ncclTeamRankInDifference(world, inner, 4) == -1);
  std::printf("host_api: %s\n", errors ? "FAIL" : "PASS");
  return errors ? 1 : 0;
}
