// emud's nccl_device.h: NCCL's device API as far as emud emulates it in
// C++, written for emud from NCCL's documentation and headers (names and
// signatures only; docs/cuda.md). Not NVIDIA's header, which is inline
// PTX and libcu++.
//
// Built: the device communicator (ncclDevCommCreate/Destroy with
// ncclDevCommRequirements and its initializer), ncclCommQueryProperties,
// teams (ncclTeamWorld/Lsa/Rail, the rank conversions and factors), the
// cooperative groups ncclCoopThread, ncclCoopWarp and ncclCoopCta, the
// window pointers (ncclGetLsaPointer, ncclGetLocalPointer,
// ncclGetPeerPointer, and the host's ncclGetLsaDevicePointer and
// ncclGetPeerDevicePointer), and ncclLsaBarrierSession, whose calls run
// the emulator's LSA barrier (arrivals, waits, timeouts and hang reports
// naming the slot and who has not arrived). Lanes load and store through
// LSA pointers natively. GIN (ncclGin, ncclGinBarrierSession,
// ncclBarrierSession) is nccl_device/gin.h, over the node's SDMA queues;
// CFT (ncclCft, counted writes, CFT barriers, LE queries) is
// nccl_device/cft.h, included at the end. Not built yet: LSA multimem,
// LL A2A and resource buffers.
#ifndef EMUD_NCCL_DEVICE_H
#define EMUD_NCCL_DEVICE_H

#include <cuda/atomic>
#include <type_traits>

#include "nccl.h"

struct ncclTeam {
  int nRanks, rank, stride;
};
typedef struct ncclTeam ncclTeam_t;
struct ncclTeamTagWorld {};
struct ncclTeamTagLsa {};
struct ncclTeamTagRail {};

// A dev comm's LSA barriers: nBarriers slots whose state lives at
// bufOffset in the resource window (the emulator's layout).
struct ncclLsaBarrierHandle {
  uint32_t bufOffset;
  int nBarriers;
};
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;

// A dev comm's GIN barriers (nccl_device/gin.h): which of its three
// (0 rail, 1 world, 2 the hybrid barrier's rail half) and its slots.
struct ncclGinBarrierHandle {
  int kind;
  int nBarriers;
};
typedef struct ncclGinBarrierHandle ncclGinBarrierHandle_t;

typedef enum {
  NCCL_GIN_CONNECTION_NONE,
  NCCL_GIN_CONNECTION_FULL,
  NCCL_GIN_CONNECTION_RAIL,
} ncclGinConnectionType_t;
typedef enum {
  NCCL_GIN_TYPE_NONE = 0,
  NCCL_GIN_TYPE_PROXY = 2,
  NCCL_GIN_TYPE_GDAKI = 3,
  NCCL_GIN_TYPE_GPI = 4,
  NCCL_GIN_TYPE_ANVIL_SDMA = 7,  // RCCL's GIN over SDMA queues: emud's (nccl_device/gin.h)
} ncclGinType_t;

struct ncclDevResourceRequirements;
struct ncclTeamRequirements;
typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclTeamRequirements ncclTeamRequirements_t;

// ncclDevCommRequirements: NCCL's fields, in NCCL's order.
struct ncclDevCommRequirements {
  size_t size;
  unsigned int magic;
  unsigned int version;
  ncclDevResourceRequirements_t* resourceRequirementsList;
  ncclTeamRequirements_t* teamRequirementsList;
  bool lsaMultimem;
  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;
  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
  ncclGinConnectionType_t ginConnectionType;
  bool ginExclusiveContexts;
  int ginQueueDepth;
  int ginTrafficClass;
  int worldGinBarrierCount;
  bool ginStrongSignalsRequired;
  bool ginVaSignalsRequired;
  int cftCaps;          // NCCL_CFT | NCCL_CFT_MULTIMEM (nccl_device/cft.h)
  int cftBarrierCount;  // ncclCftBarrierSession slots
};
typedef struct ncclDevCommRequirements ncclDevCommRequirements_t;

// NCCL's defaults: no barriers, no GIN resources (ginContextCount 4 is a
// hint NCCL may lower; emud asks for no context with it).
#define NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER                                                          \
  {                                                                                                     \
    sizeof(ncclDevCommRequirements_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NULL, NULL, false, 0, 0, 0, 0, 0, \
        false, 4, 0, 0, NCCL_GIN_CONNECTION_NONE, false, 0, NCCL_CONFIG_UNDEF_INT, 0, true, true         \
  }

struct ncclCommProperties {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  ncclGinType_t ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  ncclGinType_t railedGinType;
};
typedef struct ncclCommProperties ncclCommProperties_t;
#define NCCL_COMM_PROPERTIES_INITIALIZER {sizeof(ncclCommProperties_t), NCCL_API_MAGIC, NCCL_VERSION_CODE}

// ncclDevComm as kernels get it (by value): the fields NCCL's device
// code reads that emud fills, and the emulator's handle.
struct ncclDevComm {
  unsigned int magic;
  unsigned int version;
  int rank, nRanks;
  int lsaRank, lsaSize;
  ncclWindow_t resourceWindow;
  ncclLsaBarrierHandle_t lsaBarrier;
  ncclLsaBarrierHandle_t hybridLsaBarrier;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
  uint64_t emudHandle;  // which dev comm of the emulation this is
  // GIN (nccl_device/gin.h): the barrier handles, and this rank's signal,
  // counter and shadow words (emudGin is 0 for a dev comm without GIN).
  ncclGinBarrierHandle_t railGinBarrier, worldGinBarrier, hybridRailGinBarrier;
  uint64_t emudGin;
  uint64_t* emudGinSignals;
  uint64_t* emudGinCounters;
  uint64_t* emudGinShadows;
  uint32_t* abortFlag;  // waitCounted's abort flag: emud sets none (null)
};
typedef struct ncclDevComm ncclDevComm_t;
static_assert(std::is_trivially_copyable<ncclDevComm>::value, "ncclDevComm must be trivially copyable");

inline ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props, EMUD_SITE) {
  ::emud::nccl::commInfo ci;
  if (!props || !::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommQueryProperties", "null props or not a comm ncclCommInitRank made",
                              __emud_file, __emud_line);
  props->rank = ci.rank;
  props->nRanks = ci.nRanks;
  props->cudaDev = ci.dev;
  props->nvmlDev = ci.dev;
  props->deviceApiSupport = true;
  props->multimemSupport = false;  // multimem is not emulated in C++ yet
  props->ginType = NCCL_GIN_TYPE_ANVIL_SDMA;  // GIN over the node's SDMA queues (nccl_device/gin.h)
  props->nLsaTeams = 1;  // one node: every rank is in the LSA team
  props->hostRmaSupport = false;
  props->railedGinType = NCCL_GIN_TYPE_NONE;
  return ncclSuccess;
}

// ncclDevCommCreate is collective (every rank's returns once all made
// theirs, so a kernel may use peers' barrier slots at once). Asking for
// what emud does not emulate in C++ yet fails naming it.
inline ncclResult_t ncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs, ncclDevComm_t* out, EMUD_SITE) {
  const char* call = "ncclDevCommCreate";
  ::emud::nccl::noteDrive((uintptr_t)comm);
  if (reqs && out) {
    ncclDevCommRequirements_t keep = *reqs;  // the call's copy: the group's end may come after the caller's goes
    if (::emud::nccl::defer([=] { return ncclDevCommCreate(comm, &keep, out, __emud_file, __emud_line, __emud_fn); }, EMUD_SITE_ARGS))
      return ncclSuccess;
  }
  if (!reqs || !out)
    return ::emud::nccl::fail(ncclInvalidArgument, call,
                              reqs ? "null outDevComm" : "null requirements (start from NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER)",
                              __emud_file, __emud_line);
  if (reqs->magic != NCCL_API_MAGIC)
    return ::emud::nccl::fail(ncclInvalidArgument, call, "requirements magic is not NCCL_API_MAGIC: start from NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER",
                              __emud_file, __emud_line);
  const char* no = nullptr;
  if (reqs->ginSignalCount < 0 || reqs->ginCounterCount < 0 || reqs->railGinBarrierCount < 0 || reqs->worldGinBarrierCount < 0)
    no = "a negative GIN signal, counter or barrier count";
  else if (reqs->lsaMultimem)
    no = "lsaMultimem: multimem is not emulated in C++ yet (docs/cuda.md)";
  else if (reqs->resourceRequirementsList || reqs->teamRequirementsList)
    no = "resource or team requirement lists: not emulated in C++ yet (docs/cuda.md)";
  else if (reqs->lsaLLA2ABlockCount > 0 || reqs->lsaLLA2ASlotCount > 0)
    no = "LL all-to-all slots: not emulated in C++ yet (docs/cuda.md)";
  else if (reqs->lsaBarrierCount < 0 || reqs->barrierCount < 0)
    no = "a negative barrier count";
  if (no) return ::emud::nccl::fail(ncclInvalidUsage, call, no, __emud_file, __emud_line);
  // The emulator's dev comm (the MORI layer's entry): no SDMA queues are
  // used by NCCL's API; lsaBarrierCount slots, and barrierCount slots for
  // the hybrid barrier's LSA half.
  // a[9] = 1: an NCCL dev comm, whose LSA accesses and barriers take the
  // fabric's time (docs/timing.md).
  uint64_t a[16] = {(uint64_t)(uintptr_t)comm, 0x0CC0AAAA, 1, 0, 0, 0, (uint64_t)(int64_t)reqs->lsaBarrierCount,
                    (uint64_t)(int64_t)reqs->barrierCount, 0, 1};
  int r = emud_host(EMUD_H_DEVCOMM_CREATE, a, __emud_file, __emud_line);
  if (r != 0) return ::emud::nccl::rc(r);
  std::memset(out, 0, sizeof *out);
  out->magic = NCCL_API_MAGIC;
  out->version = NCCL_VERSION_CODE;
  out->rank = (int)a[0];
  out->nRanks = (int)a[1];
  out->lsaRank = (int)a[2];
  out->lsaSize = (int)a[3];
  out->emudHandle = a[6];
  out->lsaBarrier.nBarriers = (int)a[9];
  out->lsaBarrier.bufOffset = (uint32_t)a[10];
  out->hybridLsaBarrier.nBarriers = (int)a[13];
  out->hybridLsaBarrier.bufOffset = (uint32_t)a[14];
  out->resourceWindow = (ncclWindow_t)(uintptr_t)a[15];
  // GIN resources (nccl_device/gin.h): signals, counters and GIN barrier
  // slots, and the hybrid barrier's rail half (barrierCount slots).
  bool gin = reqs->ginSignalCount > 0 || reqs->ginCounterCount > 0 || reqs->railGinBarrierCount > 0 ||
             reqs->worldGinBarrierCount > 0 || reqs->barrierCount > 0 || reqs->ginForceEnable;
  if (gin) {
    int ctx = reqs->ginContextCount > 0 ? reqs->ginContextCount : 1;
    uint64_t g[16] = {(uint64_t)(uintptr_t)comm, out->emudHandle, (uint64_t)ctx, (uint64_t)reqs->ginSignalCount,
                      (uint64_t)reqs->ginCounterCount, (uint64_t)reqs->railGinBarrierCount, (uint64_t)reqs->worldGinBarrierCount,
                      (uint64_t)reqs->barrierCount};
    r = emud_host(EMUD_H_GIN_CREATE, g, __emud_file, __emud_line);
    if (r != 0) return ::emud::nccl::rc(r);
    out->emudGin = 1;
    out->ginContextCount = ctx;
    out->ginSignalCount = reqs->ginSignalCount;
    out->ginCounterCount = reqs->ginCounterCount;
    out->railGinBarrier = {0, reqs->railGinBarrierCount};
    out->worldGinBarrier = {1, reqs->worldGinBarrierCount};
    out->hybridRailGinBarrier = {2, reqs->barrierCount};
    out->emudGinSignals = (uint64_t*)(uintptr_t)g[8];
    out->emudGinCounters = (uint64_t*)(uintptr_t)g[9];
    out->emudGinShadows = (uint64_t*)(uintptr_t)g[10];
  }
  // CFT (nccl_device/cft.h): the emulator keeps the CFT barriers and caps.
  if (reqs->cftCaps != 0 || reqs->cftBarrierCount != 0) {
    uint64_t c[16] = {EMUD_CFT_H_DEVCOMM, (uint64_t)(uintptr_t)comm, out->emudHandle, (uint64_t)(int64_t)reqs->cftCaps,
                      (uint64_t)(int64_t)reqs->cftBarrierCount};
    int r2 = emud_host(EMUD_H_CFT, c, __emud_file, __emud_line);
    if (r2 != 0) return ::emud::nccl::rc(r2);
  }
  return ncclSuccess;
}
// ncclDevCommDestroy is collective, as NCCL's is (it deregisters the dev
// comm's resource window, a collective call): no rank frees its barriers
// while a peer's kernel may still arrive at them. A thread that drives
// several of the comm's ranks (it made NCCL calls on another comm of the
// same id: nccl-tests' one thread for every GPU, whose cleanup destroys
// each rank's in turn outside a group) does not wait in it: each rank's
// dev comm then lives until the comm's last rank has destroyed its own,
// and that call destroys them all (capi's devCommDestroyAll).
inline ncclResult_t ncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* dc, EMUD_SITE) {
  if (!dc) return ncclSuccess;
  if (::emud::nccl::drivesSeveral((uintptr_t)comm)) {
    uint64_t a[16] = {(uint64_t)(uintptr_t)comm, dc->emudHandle, 1};
    return ::emud::nccl::rc(emud_host(EMUD_H_DEVCOMM_DESTROY, a, __emud_file, __emud_line));
  }
  uint64_t b[16] = {(uint64_t)(uintptr_t)comm};
  int r = emud_host(EMUD_H_BARRIER_ALL, b, __emud_file, __emud_line);
  if (r != 0) return ::emud::nccl::rc(r);
  uint64_t a[16] = {(uint64_t)(uintptr_t)comm, dc->emudHandle};
  return ::emud::nccl::rc(emud_host(EMUD_H_DEVCOMM_DESTROY, a, __emud_file, __emud_line));
}

// ---- teams ----
inline ncclTeam ncclTeamWorld(ncclDevComm const& c) { return ncclTeam{c.nRanks, c.rank, 1}; }
inline ncclTeam ncclTeamLsa(ncclDevComm const& c) { return ncclTeam{c.lsaSize, c.lsaRank, 1}; }
// The same LSA rank on each node (one node here: this rank alone).
inline ncclTeam ncclTeamRail(ncclDevComm const& c) { return ncclTeam{c.nRanks / c.lsaSize, c.rank / c.lsaSize, c.lsaSize}; }
inline ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  ::emud::nccl::commInfo ci{0, 1, 0};
  ::emud::nccl::info(comm, &ci);
  return ncclTeam{ci.nRanks, ci.rank, 1};
}
inline ncclTeam_t ncclTeamLsa(ncclComm_t comm) { return ncclTeamWorld(comm); }
inline ncclTeam_t ncclTeamRail(ncclComm_t comm) {
  ncclTeam w = ncclTeamWorld(comm);
  return ncclTeam{1, 0, w.nRanks};
}
inline int ncclTeamRankToWorld(ncclDevComm const& c, ncclTeam tm, int r) { return c.rank + (r - tm.rank) * tm.stride; }
inline int ncclTeamRankToLsa(ncclDevComm const& c, ncclTeam tm, int r) { return c.lsaRank + (r - tm.rank) * tm.stride; }
inline int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t tm, int r) {
  ncclTeam w = ncclTeamWorld(comm);
  return w.rank + (r - tm.rank) * tm.stride;
}
inline int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t tm, int r) { return ncclTeamRankToWorld(comm, tm, r); }
// Whether b's member bPeer is a member of a (both teams of this rank).
inline bool ncclTeamRankIsMember(ncclTeam_t a, ncclTeam_t b, int bPeer) {
  int d = (bPeer - b.rank) * b.stride;  // world distance from this rank
  if (d % a.stride != 0) return false;
  int r = a.rank + d / a.stride;
  return r >= 0 && r < a.nRanks;
}
// a's rank of b's member bPeer (-1 when it is not in a).
inline int ncclTeamRankToTeam(ncclTeam_t a, ncclTeam_t b, int bPeer) {
  return ncclTeamRankIsMember(a, b, bPeer) ? a.rank + (bPeer - b.rank) * b.stride / a.stride : -1;
}
// The team of innerSize consecutive members that holds this rank, and the
// team of this rank's position in every such group.
inline ncclTeam_t ncclTeamInnerFactor(ncclTeam_t p, int innerSize) {
  return ncclTeam{innerSize, p.rank % innerSize, p.stride};
}
inline ncclTeam_t ncclTeamOuterFactor(ncclTeam_t p, int innerSize) {
  return ncclTeam{p.nRanks / innerSize, p.rank / innerSize, p.stride * innerSize};
}
// The index-th member of parent that is not in subset, as a parent rank.
inline int ncclTeamRankInDifference(ncclTeam_t parent, ncclTeam_t subset, int index) {
  for (int r = 0; r < parent.nRanks; r++) {
    if (ncclTeamRankIsMember(subset, parent, r)) continue;
    if (index-- == 0) return r;
  }
  return -1;
}

// ---- cooperative groups ----
template <int N>
struct ncclCoopTile {
  static_assert(N == 1 || N == 32, "emud: ncclCoopTile of 1 (ncclCoopThread) or 32 (ncclCoopWarp) threads only");
  int thread_rank() const { return N == 1 ? 0 : (int)(threadIdx.x % 32); }
  constexpr int size() const { return N; }
  constexpr int num_threads() const { return N; }
  void sync(EMUD_SITE) {
    if (N > 1) __syncwarp(~0ull, EMUD_SITE_ARGS);
  }
};
typedef ncclCoopTile<1> ncclCoopThread;
typedef ncclCoopTile<32> ncclCoopWarp;
struct ncclCoopCta {
  int thread_rank() const { return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)); }
  int size() const { return (int)(blockDim.x * blockDim.y * blockDim.z); }
  int num_threads() const { return size(); }
  void sync(EMUD_SITE) { __syncthreads(EMUD_SITE_ARGS); }
};

namespace emud {
namespace nccl {
template <typename Coop>
constexpr uint64_t coop() {
  static_assert(std::is_same_v<Coop, ncclCoopThread> || std::is_same_v<Coop, ncclCoopWarp> || std::is_same_v<Coop, ncclCoopCta>,
                "emud: NCCL device calls take ncclCoopThread, ncclCoopWarp or ncclCoopCta");
  return std::is_same_v<Coop, ncclCoopThread> ? 0 : std::is_same_v<Coop, ncclCoopWarp> ? 1 : 2;
}
}  // namespace nccl
}  // namespace emud

// ---- window pointers ----
inline void* ncclGetLsaPointer(ncclWindow_t w, size_t offset, int peer) {
  return w->winBase + (((uint64_t)(int64_t)peer * w->stride4G) << 32) + offset;
}
inline void* ncclGetLocalPointer(ncclWindow_t w, size_t offset) { return ncclGetLsaPointer(w, offset, w->lsaRank); }
// peer is a world rank: on emud's one node, its LSA rank.
inline void* ncclGetPeerPointer(ncclWindow_t w, size_t offset, int peer) { return ncclGetLsaPointer(w, offset, peer); }
inline void* ncclGetPeerPointer(ncclWindow_t w, size_t offset, ncclTeam tm, int peer) {
  return ncclGetLsaPointer(w, offset, w->lsaRank + (peer - tm.rank) * tm.stride);
}
inline ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t w, size_t offset, int lsaRank, void** out) {
  if (!w || !out) return ncclInvalidArgument;
  *out = ncclGetLsaPointer(w, offset, lsaRank);
  return ncclSuccess;
}
inline ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t w, size_t offset, int peer, void** out) {
  return ncclGetLsaDevicePointer(w, offset, peer, out);
}
// LSA multimem (NVLS) is not emulated: ncclCommQueryProperties says
// multimemSupport is false and a dev comm asking lsaMultimem fails, so a
// program that checks first (NCCL's examples do) builds and stops there,
// as on a GPU without multimem; a lane that asks anyway fails naming the
// call, and the host's form returns ncclInvalidUsage saying why.
inline void* ncclGetLsaMultimemPointer(ncclWindow_t, size_t, ncclDevComm const&, EMUD_SITE) {
  ::emud::unsupported("ncclGetLsaMultimemPointer (LSA multimem; docs/cuda.md)", EMUD_SITE_ARGS);
  return nullptr;
}
inline ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t, size_t, void** out, EMUD_SITE) {
  if (out) *out = nullptr;
  return ::emud::nccl::fail(ncclInvalidUsage, "ncclGetLsaMultimemDevicePointer",
                            "LSA multimem is not emulated (docs/cuda.md)", __emud_file, __emud_line);
}

// ---- LSA barrier ----

// ncclLsaBarrierSession<Coop>: a barrier of the team's LSA ranks on slot
// index of a dev comm's lsaBarrier (or hybridLsaBarrier); every member
// opens it with the same coop, and the slot's epoch carries over from the
// session before. Each call runs the emulator's LSA barrier, so arrivals,
// waits, timeouts and hang reports are a Go kernel's; a peer sees an
// arrival one fabric latency after it (docs/timing.md). Partial: the
// memory order is accepted, not modelled (every arrive releases and every
// wait acquires, in the race detector too), and multimem is refused.
template <typename Coop>
struct ncclLsaBarrierSession {
  ncclDevComm const* comm;
  uint64_t emudSession;

  ncclLsaBarrierSession(Coop, ncclDevComm const& c, ncclTeam t, ncclLsaBarrierHandle h, uint32_t index, bool multimem = false,
                        EMUD_SITE)
      : comm(&c) {
    if (multimem) ::emud::unsupported("ncclLsaBarrierSession with multimem", EMUD_SITE_ARGS);
    emudSession = ::emud::dev(EMUD_OP_LSA_BARRIER,
                              {EMUD_LSA_OPEN, ::emud::nccl::coop<Coop>(), c.emudHandle, index, (uint64_t)(int64_t)t.nRanks,
                               (uint64_t)(int64_t)t.rank, (uint64_t)(int64_t)t.stride, h.bufOffset, 0, (uint64_t)(int64_t)h.nBarriers},
                              "ncclLsaBarrierSession", EMUD_SITE_ARGS);
  }
  ncclLsaBarrierSession(Coop co, ncclDevComm const& c, ncclTeamTagLsa, uint32_t index, bool multimem = false, EMUD_SITE)
      : ncclLsaBarrierSession(co, c, ncclTeamLsa(c), c.lsaBarrier, index, multimem, EMUD_SITE_ARGS) {}
  ~ncclLsaBarrierSession() { call(EMUD_LSA_CLOSE, 0, false, "ncclLsaBarrierSession::~ncclLsaBarrierSession", __FILE__, __LINE__, ""); }
  ncclLsaBarrierSession(const ncclLsaBarrierSession&) = delete;
  ncclLsaBarrierSession& operator=(const ncclLsaBarrierSession&) = delete;

  void arrive(Coop, cuda::memory_order, EMUD_SITE) { call(EMUD_LSA_ARRIVE, 0, false, "ncclLsaBarrierSession::arrive", EMUD_SITE_ARGS); }
  void wait(Coop, cuda::memory_order, EMUD_SITE) { call(EMUD_LSA_WAIT, 0, false, "ncclLsaBarrierSession::wait", EMUD_SITE_ARGS); }
  void sync(Coop c, cuda::memory_order o, EMUD_SITE) {
    arrive(c, o, EMUD_SITE_ARGS);
    wait(c, o, EMUD_SITE_ARGS);
  }
  // Wait at most timeoutCycles SM cycles: ncclTimeout when they passed first.
  ncclResult_t wait(Coop, cuda::memory_order, uint64_t timeoutCycles, EMUD_SITE) {
    return call(EMUD_LSA_WAIT, timeoutCycles, true, "ncclLsaBarrierSession::wait", EMUD_SITE_ARGS) ? ncclTimeout : ncclSuccess;
  }
  ncclResult_t sync(Coop c, cuda::memory_order o, uint64_t timeoutCycles, EMUD_SITE) {
    arrive(c, o, EMUD_SITE_ARGS);
    return wait(c, o, timeoutCycles, EMUD_SITE_ARGS);
  }

 private:
  uint64_t call(int what, uint64_t timeout, bool timed, const char* name, const char* file, int line, const char* fn) {
    return ::emud::dev(EMUD_OP_LSA_BARRIER,
                       {(uint64_t)what, ::emud::nccl::coop<Coop>(), comm->emudHandle, emudSession, 0, 0, 0, timeout, timed ? 1u : 0u},
                       name, file, line, fn);
  }
};

// GIN and CFT.
#include "nccl_device/gin.h"
#include "nccl_device/cft.h"

#endif
