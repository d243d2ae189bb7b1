// mori/cco/cco.hpp for emud: MORI's cco API (host control plane, the
// ccoSdma device API, teams and the LSA barrier session) over emud's
// emulator. Written for emud from the
// names and signatures of MORI's public header include/mori/cco/cco.hpp
// (github.com/ROCm/mori) and its SDMA device API notes; it is not MORI's
// header and contains none of its code. Every device call runs emud's Go
// implementation (package cco): signals, grouping, debug traps, hang
// causes and timing are those of a Go kernel.
//
// Differences from MORI's header, all deliberate:
//   - ccoSdma is always available (MORI needs BUILD_CCO_SDMA);
//   - ccoDevComm carries one extra trailing field, emudHandle, and not
//     the GDA context (ibgda); its rail GDA barrier handles are always
//     disabled (one node);
//   - ccoLsaBarrierSession keeps its epoch in emud, takes a dev comm's
//     lsaBarrier or hybridLsaBarrier as its handle, and is not copyable;
//   - GDA (ccoGda, cco_scale_out.hpp) is not emulated.
// ccoCommCreate, ccoWindowRegister, ccoDevCommCreate and ccoBarrierAll are
// collective, as MORI's all-gathers make them: each returns when every
// rank of the comm has made it.
#ifndef EMUD_MORI_CCO_HPP
#define EMUD_MORI_CCO_HPP

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "hip/hip_runtime.h"

// hsakmt's name for a 64-bit word (signal slots are HSAuint64 in MORI's
// device code, at global scope as there), unless hsakmt's own header already gave it.
#ifndef _HSAKMTTYPES_H_
typedef uint64_t HSAuint64;
#endif

namespace mori {
namespace cco {

static constexpr uint32_t CCO_API_MAGIC = 0x0CC0AAAA;
static constexpr uint32_t CCO_API_VERSION = 1;

enum ccoGdaConnectionType {
  CCO_GDA_CONNECTION_NONE = 0,
  CCO_GDA_CONNECTION_FULL = 1,
  CCO_GDA_CONNECTION_CROSSNODE = 2,
  CCO_GDA_CONNECTION_RAIL = 3,
};

enum ccoTeamMode {
  CCO_TEAM_WORLD = 0,
  CCO_TEAM_LSA = 1,
  CCO_TEAM_GDA = 2,
};

struct ccoTeam {
  int nRanks;
  int rank;
  int stride;
};
typedef ccoTeam ccoTeam_t;

struct ccoIbgdaWin {
  uint32_t* peerRkeys;
  uint32_t lkey;
};

// Filled by ccoWindowRegister; kernels read it through ccoWindow_t.
struct ccoWindowDevice {
  char* winBase;      // flat base + the window's slot offset
  uint32_t stride4G;  // perRankSize >> 32
  int lsaRank;        // the owner's LSA rank
  ccoIbgdaWin ibgdaWin;
};
typedef ccoWindowDevice* ccoWindow_t;

struct ccoSdmaQueueDeviceHandle;  // opaque: the queues are emud's

struct ccoSdmaContext {
  uint32_t sdmaNumQueue;                     // 0 when SDMA is off
  ccoSdmaQueueDeviceHandle** deviceHandles;  // not exposed by emud (nullptr)
  uint64_t* signalBuf;                       // [lsaSize * sdmaNumQueue], this rank's pool
  uint64_t** peerSignalPtrs;                 // not exposed by emud (nullptr)
};

// Which LSA barrier slots a dev comm has: nBarriers of them, their state
// (nBarriers epochs, then inbox[index][peer], 32-bit words) at
// resourceWindow_inlined.winBase + (lsaRank * stride4G << 32) + bufOffset,
// as in MORI. nBarriers 0: none.
struct ccoLsaBarrierHandle {
  uint32_t bufOffset;
  int nBarriers;
};

// A barrier over GDA signals (the rail barrier, and the rail half of the
// hybrid one). They cross nodes: on emud's one node both are disabled
// (nBarriers 0), as MORI collapses them on one node.
struct ccoGdaBarrierHandle {
  uint32_t signal0;
  int nBarriers;
};

struct ccoDevComm {
  int rank;
  int worldSize;
  int lsaSize;
  int lsaRank;
  int myNodeStart;
  ccoGdaConnectionType gdaConnType;
  void* flatBase;
  size_t perRankSize;
  void* windowTable;
  ccoWindowDevice* resourceWindow;
  ccoWindowDevice resourceWindow_inlined;
  ccoLsaBarrierHandle lsaBarrier;  // reqs.lsaBarrierCount slots for ccoLsaBarrierSession
  ccoGdaBarrierHandle railGdaBarrier;        // disabled: one node
  ccoLsaBarrierHandle hybridLsaBarrier;      // reqs.barrierCount slots, the hybrid barrier's LSA half
  ccoGdaBarrierHandle hybridRailGdaBarrier;  // disabled: one node
  ccoSdmaContext sdma;
  uint64_t emudHandle;  // emud: which dev comm of the emulation this is
};
typedef ccoDevComm* ccoDevComm_t;
static_assert(std::is_trivially_copyable<ccoDevComm>::value, "ccoDevComm must be trivially copyable");

struct ccoDevResourceRequirements {
  ccoDevResourceRequirements* next;
  size_t bufferSize;
  size_t bufferAlign;
  uint32_t* outBufferHandle;
  int gdaSignalCount;
  int gdaCounterCount;
  uint32_t* outGdaSignalStart;
  uint32_t* outGdaCounterStart;
};

struct ccoDevCommRequirements {
  size_t size;
  uint32_t magic;
  uint32_t version;
  ccoDevResourceRequirements* resourceRequirementsList;
  ccoGdaConnectionType gdaConnectionType;
  int gdaContextCount;
  int gdaSignalCount;
  int gdaCounterCount;
  int gdaQueueDepth;
  int gdaTrafficClass;
  int lsaBarrierCount;
  int railGdaBarrierCount;
  int sdmaQueueCount;  // 0 = MORI_SDMA_NUM_CHANNELS or the default
  int barrierCount;
};

// The same values, in the same order, as MORI's initializer.
#define CCO_DEV_COMM_REQUIREMENTS_INITIALIZER                                                  \
  {                                                                                            \
    sizeof(::mori::cco::ccoDevCommRequirements), ::mori::cco::CCO_API_MAGIC,                   \
        ::mori::cco::CCO_API_VERSION, nullptr, ::mori::cco::CCO_GDA_CONNECTION_CROSSNODE, 4, 16, \
        16, 0, -1, 0, 0, 0, 0                                                                  \
  }

struct ccoUniqueId {
  char internal[128];
};
struct ccoComm;  // opaque

#ifdef MORI_CCO_SDMA_DEBUG
constexpr bool CCO_SDMA_BREAK_ON_RETRIES = true;
#else
constexpr bool CCO_SDMA_BREAK_ON_RETRIES = false;
#endif

constexpr uint64_t CCO_SDMA_UNIT = 32;
constexpr size_t CCO_SDMA_MAX_COPY_BYTES = 0x3fffffe0;

// ---- host control plane ----

// emud_null_arg refuses a call whose out-pointer is null before it does
// anything: the comm, buffer or window it made would be lost (issue 45).
inline int emud_null_arg(const char* call, const char* arg, const char* file, int line) {
  std::fprintf(stderr, "emud: %s:%d: %s: %s is null: nowhere to store the result\n", file, line, call, arg);
  return 1;
}

inline int ccoGetUniqueId(ccoUniqueId* id, EMUD_SITE) {
  if (!id) return emud_null_arg("ccoGetUniqueId", "uniqueId", __emud_file, __emud_line);
  uint64_t a[16] = {::emud::addr(id)};
  return emud_host(EMUD_H_UNIQUE_ID, a, __emud_file, __emud_line);
}
inline int ccoCommCreate(const ccoUniqueId& id, int nRanks, int rank, size_t perRankVmmSize, ccoComm** comm,
                         EMUD_SITE) {
  if (!comm) return emud_null_arg("ccoCommCreate", "comm", __emud_file, __emud_line);
  uint64_t a[16] = {::emud::addr(&id), (uint64_t)(int64_t)nRanks, (uint64_t)(int64_t)rank, perRankVmmSize};
  int rc = emud_host(EMUD_H_COMM_CREATE, a, __emud_file, __emud_line);
  if (comm) *comm = rc == 0 ? (ccoComm*)(uintptr_t)a[4] : nullptr;
  return rc;
}
inline int ccoCommDestroy(ccoComm* comm, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(comm)};
  return emud_host(EMUD_H_COMM_DESTROY, a, __emud_file, __emud_line);
}
inline int ccoMemAlloc(ccoComm* comm, size_t size, void** ptr, EMUD_SITE) {
  if (!ptr) return emud_null_arg("ccoMemAlloc", "ptr", __emud_file, __emud_line);
  uint64_t a[16] = {::emud::addr(comm), size};
  int rc = emud_host(EMUD_H_MEM_ALLOC, a, __emud_file, __emud_line);
  if (ptr) *ptr = rc == 0 ? (void*)(uintptr_t)a[2] : nullptr;
  return rc;
}
inline int ccoMemFree(ccoComm* comm, void* ptr, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(comm), ::emud::addr(ptr)};
  return emud_host(EMUD_H_MEM_FREE, a, __emud_file, __emud_line);
}
// Overload B: register memory from ccoMemAlloc.
inline int ccoWindowRegister(ccoComm* comm, void* ptr, size_t size, ccoWindow_t* win, EMUD_SITE) {
  if (!win) return emud_null_arg("ccoWindowRegister", "win", __emud_file, __emud_line);
  uint64_t a[16] = {::emud::addr(comm), ::emud::addr(ptr), size};
  if (!ptr) {
    std::fprintf(stderr, "emud: %s:%d: ccoWindowRegister: null buffer\n", __emud_file, __emud_line);
    return 1;
  }
  int rc = emud_host(EMUD_H_WINDOW_REGISTER, a, __emud_file, __emud_line);
  if (win) *win = rc == 0 ? (ccoWindow_t)(uintptr_t)a[3] : nullptr;
  return rc;
}
// Overload A: allocate and register.
inline int ccoWindowRegister(ccoComm* comm, size_t size, ccoWindow_t* win, void** localPtr, EMUD_SITE) {
  if (!win || !localPtr)
    return emud_null_arg("ccoWindowRegister", win ? "localPtr" : "win", __emud_file, __emud_line);
  uint64_t a[16] = {::emud::addr(comm), 0, size};
  int rc = emud_host(EMUD_H_WINDOW_REGISTER, a, __emud_file, __emud_line);
  if (win) *win = rc == 0 ? (ccoWindow_t)(uintptr_t)a[3] : nullptr;
  if (localPtr) *localPtr = rc == 0 ? (void*)(uintptr_t)a[4] : nullptr;
  return rc;
}
int ccoWindowRegister(ccoComm*, void*, size_t, ccoWindow_t*, void**) = delete;  // import (overload C): not emulated
int ccoMemImport(ccoComm*, void*, size_t, void**) = delete;                     // not emulated
inline int ccoWindowDeregister(ccoComm* comm, ccoWindow_t win, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(comm), ::emud::addr(win)};
  return emud_host(EMUD_H_WINDOW_DEREGISTER, a, __emud_file, __emud_line);
}
inline void* ccoGetPeerPtr(ccoComm* comm, void* localPtr, int pe, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(comm), ::emud::addr(localPtr), (uint64_t)(int64_t)pe};
  emud_host(EMUD_H_PEER_PTR, a, __emud_file, __emud_line);
  return (void*)(uintptr_t)a[3];
}
inline int ccoDevCommCreate(ccoComm* comm, const ccoDevCommRequirements* reqs, ccoDevComm* out, EMUD_SITE) {
  if (!reqs || !out) {
    std::fprintf(stderr, "emud: %s:%d: ccoDevCommCreate: null %s\n", __emud_file, __emud_line,
                 reqs ? "outDevComm" : "requirements (start from CCO_DEV_COMM_REQUIREMENTS_INITIALIZER)");
    return 1;
  }
  // One node: CROSSNODE and RAIL connect no peer, so they need no GDA.
  uint64_t gda = reqs->gdaConnectionType == CCO_GDA_CONNECTION_FULL ? 1 : 0;
  uint64_t a[16] = {::emud::addr(comm), reqs->magic, reqs->version, (uint64_t)(int64_t)reqs->sdmaQueueCount,
                    CCO_SDMA_BREAK_ON_RETRIES ? 1u : 0u, gda, (uint64_t)(int64_t)reqs->lsaBarrierCount,
                    (uint64_t)(int64_t)reqs->barrierCount, (uint64_t)(int64_t)reqs->railGdaBarrierCount};
  int rc = emud_host(EMUD_H_DEVCOMM_CREATE, a, __emud_file, __emud_line);
  if (rc != 0) return rc;
  std::memset(out, 0, sizeof *out);
  out->rank = (int)a[0];
  out->worldSize = (int)a[1];
  out->lsaRank = (int)a[2];
  out->lsaSize = (int)a[3];
  out->sdma.sdmaNumQueue = (uint32_t)a[4];
  out->sdma.signalBuf = (uint64_t*)(uintptr_t)a[5];
  out->emudHandle = a[6];
  out->flatBase = (void*)(uintptr_t)a[7];
  out->perRankSize = (size_t)a[8];
  out->gdaConnType = reqs->gdaConnectionType;
  out->lsaBarrier.nBarriers = (int)a[9];
  out->lsaBarrier.bufOffset = (uint32_t)a[10];
  out->resourceWindow_inlined.winBase = (char*)(uintptr_t)a[11];
  out->resourceWindow_inlined.stride4G = (uint32_t)a[12];
  out->resourceWindow_inlined.lsaRank = out->lsaRank;
  out->hybridLsaBarrier.nBarriers = (int)a[13];
  out->hybridLsaBarrier.bufOffset = (uint32_t)a[14];
  out->resourceWindow = (ccoWindowDevice*)(uintptr_t)a[15];
  return 0;
}
inline int ccoDevCommDestroy(ccoComm* comm, ccoDevComm* dc, EMUD_SITE) {
  if (!dc) return 0;  // as MORI's: nothing to destroy
  uint64_t a[16] = {::emud::addr(comm), dc->emudHandle};
  return emud_host(EMUD_H_DEVCOMM_DESTROY, a, __emud_file, __emud_line);
}
inline int ccoBarrierAll(ccoComm* comm, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(comm)};
  return emud_host(EMUD_H_BARRIER_ALL, a, __emud_file, __emud_line);
}

// ---- device API ----

struct ccoCoopThread {
  int thread_rank() const { return 0; }
  int size() const { return 1; }
  void sync() {}
};
struct ccoCoopWarp {
  int thread_rank() const { return (int)(threadIdx.x % warpSize); }
  int size() const { return warpSize; }
  void sync(EMUD_SITE) { __syncwarp(~0ull, EMUD_SITE_ARGS); }
};
struct ccoCoopBlock {
  int thread_rank() const { return (int)threadIdx.x; }
  int size() const { return (int)blockDim.x; }
  void sync(EMUD_SITE) { __syncthreads(EMUD_SITE_ARGS); }
};

namespace emudimpl {
template <typename Coop>
constexpr uint64_t coop() {
  static_assert(std::is_same_v<Coop, ccoCoopThread> || std::is_same_v<Coop, ccoCoopWarp> ||
                    std::is_same_v<Coop, ccoCoopBlock>,
                "ccoSdma supports ccoCoopThread, ccoCoopWarp, or ccoCoopBlock");
  return std::is_same_v<Coop, ccoCoopThread> ? 0 : std::is_same_v<Coop, ccoCoopWarp> ? 1 : 2;
}
}  // namespace emudimpl

inline void* ccoGetLsaPeerPtr(ccoWindow_t win, int peerLsaRank, size_t offset = 0) {
  return win->winBase + (((uint64_t)peerLsaRank * win->stride4G) << 32) + offset;
}
inline void* ccoGetLocalPtr(ccoWindow_t win, size_t offset = 0) { return ccoGetLsaPeerPtr(win, win->lsaRank, offset); }

// ---- teams ----

// Every rank of the comm.
inline ccoTeam ccoTeamWorld(ccoDevComm const& c) { return ccoTeam{c.worldSize, c.rank, 1}; }
// The ranks of this node (LSA).
inline ccoTeam ccoTeamLsa(ccoDevComm const& c) { return ccoTeam{c.lsaSize, c.lsaRank, 1}; }
// The ranks of the other nodes; this rank is not a member.
inline ccoTeam ccoTeamCrossNode(ccoDevComm const& c) { return ccoTeam{c.worldSize - c.lsaSize, -1, 1}; }
// This LSA rank on each other node; this rank is not a member.
inline ccoTeam ccoTeamRail(ccoDevComm const& c) { return ccoTeam{c.worldSize / c.lsaSize - 1, -1, c.lsaSize}; }
// The world rank of a member of a team this rank belongs to.
inline int ccoTeamRankToWorld(ccoDevComm const& c, ccoTeam tm, int teamRank) {
  return c.rank + (teamRank - tm.rank) * tm.stride;
}
// The world rank of the teamRank-th rank of ccoTeamCrossNode.
inline int ccoCrossNodeTeamRankToWorld(ccoDevComm const& c, int teamRank) {
  return teamRank < c.myNodeStart ? teamRank : teamRank + c.lsaSize;
}
// The world rank of this LSA rank on the teamRank-th other node.
inline int ccoRailTeamRankToWorld(ccoDevComm const& c, int teamRank) {
  const int myNode = c.rank / c.lsaSize;
  return (teamRank < myNode ? teamRank : teamRank + 1) * c.lsaSize + c.lsaRank;
}

// ---- LSA barrier session ----

// ccoLsaBarrierSession<Coop>: a barrier among the team's LSA ranks on slot
// index of the dev comm's lsaBarrier (every member opens it, with the same
// group, and the slot's epoch carries over from the last session on it).
// Each call runs package cco's LsaBarrierSession, so arrivals, waits,
// timeouts and hang reports are a Go kernel's. Partial: the handle must be
// comm->lsaBarrier (the hybrid barriers are not emulated), and the epoch
// is kept by emud, not in the struct.
template <typename Coop>
struct ccoLsaBarrierSession {
  Coop coop;
  ccoTeam_t team;
  ccoDevComm_t comm;
  ccoLsaBarrierHandle handle;
  uint32_t index;
  uint64_t emudSession;

  ccoLsaBarrierSession(Coop group, ccoDevComm_t c, ccoTeam_t t, ccoLsaBarrierHandle h, uint32_t idx, EMUD_SITE)
      : coop(group), team(t), comm(c), handle(h), index(idx) {
    emudSession = ::emud::dev(EMUD_OP_LSA_BARRIER,
                              {EMUD_LSA_OPEN, emudimpl::coop<Coop>(), c ? c->emudHandle : 0, idx,
                               (uint64_t)(int64_t)t.nRanks, (uint64_t)(int64_t)t.rank, (uint64_t)(int64_t)t.stride, h.bufOffset, 0,
                               (uint64_t)(int64_t)h.nBarriers},
                              "ccoLsaBarrierSession", EMUD_SITE_ARGS);
  }
  ~ccoLsaBarrierSession() { call(EMUD_LSA_CLOSE, 0, false, "ccoLsaBarrierSession::~ccoLsaBarrierSession", __FILE__, __LINE__, ""); }
  ccoLsaBarrierSession(const ccoLsaBarrierSession&) = delete;
  ccoLsaBarrierSession& operator=(const ccoLsaBarrierSession&) = delete;

  // Signal this rank's arrival to every member.
  void arrive(Coop, EMUD_SITE) { call(EMUD_LSA_ARRIVE, 0, false, "ccoLsaBarrierSession::arrive", EMUD_SITE_ARGS); }
  // Wait until every member arrived.
  void wait(Coop, EMUD_SITE) { call(EMUD_LSA_WAIT, 0, false, "ccoLsaBarrierSession::wait", EMUD_SITE_ARGS); }
  // Wait at most timeoutCycles shader-clock cycles: 0, or 1 when they passed first.
  template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
  int wait(Coop, T timeoutCycles, EMUD_SITE) {
    return (int)call(EMUD_LSA_WAIT, (uint64_t)timeoutCycles, true, "ccoLsaBarrierSession::wait", EMUD_SITE_ARGS);
  }
  void sync(Coop c, EMUD_SITE) {
    arrive(c, EMUD_SITE_ARGS);
    wait(c, EMUD_SITE_ARGS);
  }
  template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
  int sync(Coop c, T timeoutCycles, EMUD_SITE) {
    arrive(c, EMUD_SITE_ARGS);
    return wait(c, timeoutCycles, EMUD_SITE_ARGS);
  }

 private:
  uint64_t call(int what, uint64_t timeout, bool timed, const char* name, const char* file, int line, const char* fn) {
    return ::emud::dev(EMUD_OP_LSA_BARRIER,
                       {(uint64_t)what, emudimpl::coop<Coop>(), comm ? comm->emudHandle : 0, emudSession, 0, 0, 0, timeout,
                        timed ? 1u : 0u},
                       name, file, line, fn);
  }
};

enum ccoSdmaThreadMode : uint32_t {
  ccoSdmaThreadIndependent = 0,
  ccoSdmaThreadSameQueue = 1,
};
enum ccoSdmaOptFlags : uint32_t {
  ccoSdmaOptFlagsDefault = 0,
  ccoSdmaOptFlagsAggregate = (1u << 0),
  ccoSdmaOptFlagsSignalPerCopy = (1u << 1),
};
enum ccoSdmaCmp : uint32_t {
  ccoSdmaCmpAlways = 0,
  ccoSdmaCmpLt = 1,
  ccoSdmaCmpLe = 2,
  ccoSdmaCmpEq = 3,
  ccoSdmaCmpNe = 4,
  ccoSdmaCmpGe = 5,
  ccoSdmaCmpGt = 6,
};


struct ccoSdma {
  ccoDevComm const& comm;

  ccoSdma(ccoDevComm const& c) : comm(c) {}

  template <typename Coop = ccoCoopThread, bool localSignal = false, bool remoteSignal = false,
            uint32_t optFlags = ccoSdmaOptFlagsDefault, ccoSdmaThreadMode threadMode = ccoSdmaThreadIndependent>
  void put(int peer, ccoWindow_t dstWin, size_t dstOffset, ccoWindow_t srcWin, size_t srcOffset, size_t bytes,
           int queueId = 0, EMUD_SITE) {
    static_assert((optFlags & ~static_cast<uint32_t>(ccoSdmaOptFlagsAggregate | ccoSdmaOptFlagsSignalPerCopy)) == 0,
                  "ccoSdma::put: unknown ccoSdmaOptFlags bit");
    static_assert(threadMode == ccoSdmaThreadIndependent || std::is_same_v<Coop, ccoCoopThread>,
                  "ccoSdmaThreadSameQueue requires ccoCoopThread");
    ::emud::dev(EMUD_OP_PUT,
                {EMUD_PUT_FLAGS(emudimpl::coop<Coop>(), localSignal, remoteSignal, optFlags, threadMode),
                 (uint64_t)(int64_t)peer, ::emud::addr(dstWin), dstOffset, ::emud::addr(srcWin), srcOffset, bytes,
                 (uint64_t)(int64_t)queueId, comm.emudHandle},
                "ccoSdma::put", EMUD_SITE_ARGS);
  }

  template <typename Coop = ccoCoopThread, bool localSignal = false, bool remoteSignal = false,
            uint32_t optFlags = ccoSdmaOptFlagsDefault, ccoSdmaThreadMode threadMode = ccoSdmaThreadIndependent>
  void get(int peer, ccoWindow_t dstWin, size_t dstOffset, ccoWindow_t srcWin, size_t srcOffset, size_t bytes,
           int queueId = 0, EMUD_SITE) {
    static_assert((optFlags & ~static_cast<uint32_t>(ccoSdmaOptFlagsAggregate | ccoSdmaOptFlagsSignalPerCopy)) == 0,
                  "ccoSdma::get: unknown ccoSdmaOptFlags bit");
    static_assert(threadMode == ccoSdmaThreadIndependent || std::is_same_v<Coop, ccoCoopThread>,
                  "ccoSdmaThreadSameQueue requires ccoCoopThread");
    ::emud::dev(EMUD_OP_GET,
                {EMUD_PUT_FLAGS(emudimpl::coop<Coop>(), localSignal, remoteSignal, optFlags, threadMode),
                 (uint64_t)(int64_t)peer, ::emud::addr(dstWin), dstOffset, ::emud::addr(srcWin), srcOffset, bytes,
                 (uint64_t)(int64_t)queueId, comm.emudHandle},
                "ccoSdma::get", EMUD_SITE_ARGS);
  }

  template <typename Coop = ccoCoopThread>
  void quiet(int peer, EMUD_SITE) {
    ::emud::dev(EMUD_OP_QUIET, {emudimpl::coop<Coop>(), (uint64_t)(int64_t)peer, comm.emudHandle}, "ccoSdma::quiet",
                EMUD_SITE_ARGS);
  }

  template <typename Coop = ccoCoopThread>
  void quietQueue(int peer, int queueId, EMUD_SITE) {
    ::emud::dev(EMUD_OP_QUIET_QUEUE,
                {emudimpl::coop<Coop>(), (uint64_t)(int64_t)peer, (uint64_t)(int64_t)queueId, comm.emudHandle},
                "ccoSdma::quietQueue", EMUD_SITE_ARGS);
  }

  void waitSignal(int srcRank, int queueId, uint64_t expected, EMUD_SITE) {
    ::emud::dev(EMUD_OP_WAIT_SIGNAL, {(uint64_t)(int64_t)srcRank, (uint64_t)(int64_t)queueId, expected, comm.emudHandle},
                "ccoSdma::waitSignal", EMUD_SITE_ARGS);
  }

  template <typename Coop = ccoCoopThread>
  void commit(int peer, int queueId = 0, EMUD_SITE) {
    ::emud::dev(EMUD_OP_COMMIT,
                {emudimpl::coop<Coop>(), (uint64_t)(int64_t)peer, (uint64_t)(int64_t)queueId, comm.emudHandle},
                "ccoSdma::commit", EMUD_SITE_ARGS);
  }

  // The seed API's engine-side calls.
  template <typename Coop = ccoCoopThread, bool localSignal = false, bool remoteSignal = false,
            uint32_t optFlags = ccoSdmaOptFlagsDefault>
  void putBroadcast(int peer, ccoWindow_t dstWin, size_t dstOffset, int peer2, ccoWindow_t dstWin2, size_t dstOffset2,
                    ccoWindow_t srcWin, size_t srcOffset, size_t bytes, int queueId = 0, EMUD_SITE) {
    ::emud::dev(EMUD_OP_PUT_BCAST,
                {EMUD_PUT_FLAGS(emudimpl::coop<Coop>(), localSignal, remoteSignal, optFlags, 0),
                 (uint64_t)(int64_t)peer, ::emud::addr(dstWin), dstOffset, (uint64_t)(int64_t)peer2,
                 ::emud::addr(dstWin2), dstOffset2, ::emud::addr(srcWin), srcOffset, bytes, (uint64_t)(int64_t)queueId,
                 comm.emudHandle},
                "ccoSdma::putBroadcast", EMUD_SITE_ARGS);
  }

  template <typename Coop = ccoCoopThread, uint32_t optFlags = ccoSdmaOptFlagsDefault>
  void postWaitMem(int peer, int queueId, ccoWindow_t win, size_t offset, uint32_t value,
                   ccoSdmaCmp cmp = ccoSdmaCmpEq, uint32_t mask = 0xFFFFFFFFu, EMUD_SITE) {
    ::emud::dev(EMUD_OP_POST_WAIT_MEM,
                {EMUD_PUT_FLAGS(emudimpl::coop<Coop>(), 0, 0, optFlags, 0), (uint64_t)(int64_t)peer,
                 (uint64_t)(int64_t)queueId, ::emud::addr(win), offset, value, (uint64_t)cmp, mask, comm.emudHandle},
                "ccoSdma::postWaitMem", EMUD_SITE_ARGS);
  }

  template <typename Coop = ccoCoopThread, uint32_t optFlags = ccoSdmaOptFlagsDefault>
  void postWaitSignal(int peer, int queueId, int srcRank, int sigQueueId, uint64_t expected, EMUD_SITE) {
    ::emud::dev(EMUD_OP_POST_WAIT_SIGNAL,
                {EMUD_PUT_FLAGS(emudimpl::coop<Coop>(), 0, 0, optFlags, 0), (uint64_t)(int64_t)peer,
                 (uint64_t)(int64_t)queueId, (uint64_t)(int64_t)srcRank, (uint64_t)(int64_t)sigQueueId, expected,
                 comm.emudHandle},
                "ccoSdma::postWaitSignal", EMUD_SITE_ARGS);
  }
};

}  // namespace cco
}  // namespace mori

#endif
