// emud's CFT part of nccl_device.h: NCCL's Compute Fabric Transport
// device API (NCCL 2.31, counted writes 2.32) as far as emud emulates it
// in C++, written for emud from NCCL's documentation and its examples'
// use (names and signatures only; docs/cuda.md, "CFT"). Not NVIDIA's
// header, which is fabric PTX.
//
// Built: cftCaps and cftBarrierCount (ncclDevCommRequirements), the CFT
// teams, the host and device LE queries, ncclCftSmem and ncclCft<Coop>
// (put, putCpMask, get, red, their multimem forms, putCounted and
// putMultimemCounted, submit, flushSmem, flush with its report,
// waitCounted, pullRed), ncclCftBarrierSession<Coop> (plain and
// multimem) and ncclMemFence. Each call's elected thread (thread_rank() ==
// 0) makes the emulator's call (capi/nccl_cft.go) and the coop syncs
// around it, as NCCL's elected thread issues for its coop. Operations are
// timed by package fabric's ports (fabric.Ports, the model of package
// fabric's own engine). Partial: f16/bf16 reductions and fault reports
// are not emulated (flush's report is always success); the proxies and
// memory orders are accepted, not modelled (every fabric write is
// visible when it lands; the race detector orders a waitCounted after
// the counted data unless relaxed).
#ifndef EMUD_NCCL_DEVICE_CFT_H
#define EMUD_NCCL_DEVICE_CFT_H

// ---- capabilities, teams, proxies ----
typedef enum { NCCL_CFT_NONE = 0, NCCL_CFT = 1, NCCL_CFT_MULTIMEM = 2 } ncclCftCaps_t;
typedef enum { NCCL_CFT_TEAM_FLAT = 0, NCCL_CFT_TEAM_HIER_MULTIMEM = 1, NCCL_CFT_TEAM_HIER_LSA = 2 } ncclCftTeamMode_t;
enum class ncclMemProxyType { Generic = 1, Fabric = 2 };
enum class ncclMemFenceScope { Cta = 1, Sys = 2 };

typedef uint32_t ncclCftLeId;

namespace emud {
namespace nccl {
// The emulator's LE ids (capi/nccl_cft.go): flat CFT rank p's unicast LE
// is cftUcLe + p, the multicast team's LE cftMcLe. An LE offset is the
// window's offset in a GPU's slice of the node's memory plus the offset:
// the same on every rank, small as NCCL's symmetric big-VA offsets are
// (NCCL's examples align LE offsets with 32-bit masks). ncclCommWindowRegister
// has the emulator write the slices' base into the window object's spare
// word at byte 24 (capi/nccl_cft.go, EMUD_CFT_H_WINDOW).
constexpr ncclCftLeId cftUcLe = 0x100, cftMcLe = 0x80;
static_assert(sizeof(ncclWindow_vidmem) <= 24, "emud: the window object's word at byte 24 is the CFT slice base");
inline size_t leOffset(ncclWindow_t w, size_t offset) {
  uint64_t flatBase = *(const uint64_t*)((const char*)w + 24);
  return (size_t)((uint64_t)(uintptr_t)w->winBase - flatBase) + offset;
}
}  // namespace nccl
}  // namespace emud

// emud's node is one NVLink domain: the CFT unicast and multicast groups
// are the LSA team, so every mode's team is the flat one or trivial.
inline ncclTeam ncclTeamCft(ncclDevComm const& c, ncclCftTeamMode_t mode = NCCL_CFT_TEAM_FLAT) {
  if (mode == NCCL_CFT_TEAM_FLAT) return ncclTeam{c.lsaSize, c.lsaRank, 1};
  return ncclTeam{1, 0, c.lsaSize};  // one multicast (or LSA) group: this rank alone
}
inline ncclTeam ncclTeamCftMultimem(ncclDevComm const& c) { return ncclTeam{c.lsaSize, c.lsaRank, 1}; }
inline ncclTeam_t ncclTeamCft(ncclComm_t comm, ncclCftTeamMode_t mode = NCCL_CFT_TEAM_FLAT) {
  ncclTeam w = ncclTeamWorld(comm);
  return mode == NCCL_CFT_TEAM_FLAT ? w : ncclTeam{1, 0, w.nRanks};
}
inline ncclTeam_t ncclTeamCftMultimem(ncclComm_t comm) { return ncclTeamWorld(comm); }

// ---- logical-endpoint queries ----
// Device side. peerCft is a rank of cftTeam (a team of this rank).
inline void ncclGetCftLeInfo(ncclWindow_t w, size_t offset, int peerCft, ncclTeam cftTeam, ncclDevComm const& comm, ncclCftLeId* leId,
                             size_t* leOffset) {
  *leId = ::emud::nccl::cftUcLe + (ncclCftLeId)(comm.lsaRank + (peerCft - cftTeam.rank) * cftTeam.stride);
  *leOffset = ::emud::nccl::leOffset(w, offset);
}
// NCCL checks no bound here (the flat team is world ranks on one node).
inline void ncclGetPeerLeInfo(ncclWindow_t w, size_t offset, int peerWorld, ncclDevComm const& comm, ncclCftLeId* leId, size_t* leOffset) {
  (void)comm;
  *leId = ::emud::nccl::cftUcLe + (ncclCftLeId)peerWorld;
  *leOffset = ::emud::nccl::leOffset(w, offset);
}
inline void ncclGetMultimemLeInfo(ncclWindow_t w, size_t offset, ncclDevComm const& comm, ncclCftLeId* leId, size_t* leOffset) {
  (void)comm;
  *leId = ::emud::nccl::cftMcLe;
  *leOffset = ::emud::nccl::leOffset(w, offset);
}
// Host side: the same answers from the window alone (its owner's rank).
inline ncclResult_t ncclGetCftDeviceLeInfo(ncclWindow_t w, size_t offset, int peerCft, ncclTeam_t cftTeam, ncclCftLeId* leId,
                                           size_t* leOffset) {
  if (!w || !leId || !leOffset) return ncclInvalidArgument;
  int flat = w->lsaRank + (peerCft - cftTeam.rank) * cftTeam.stride;
  if (flat < 0) return ncclInvalidArgument;
  *leId = ::emud::nccl::cftUcLe + (ncclCftLeId)flat;
  *leOffset = ::emud::nccl::leOffset(w, offset);
  return ncclSuccess;
}
inline ncclResult_t ncclGetPeerDeviceLeInfo(ncclWindow_t w, size_t offset, int peerWorld, ncclCftLeId* leId, size_t* leOffset) {
  if (!w || !leId || !leOffset || peerWorld < 0) return ncclInvalidArgument;
  *leId = ::emud::nccl::cftUcLe + (ncclCftLeId)peerWorld;
  *leOffset = ::emud::nccl::leOffset(w, offset);
  return ncclSuccess;
}
inline ncclResult_t ncclGetMultimemDeviceLeInfo(ncclWindow_t w, size_t offset, ncclCftLeId* leId, size_t* leOffset) {
  if (!w || !leId || !leOffset) return ncclInvalidArgument;
  *leId = ::emud::nccl::cftMcLe;
  *leOffset = ::emud::nccl::leOffset(w, offset);
  return ncclSuccess;
}

// ---- reductions: a tag with its element type (ncclCftOpSum<float>) ----
namespace emud {
namespace nccl {
template <class T>
constexpr uint64_t cftType() {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, int64_t> ||
                    std::is_same_v<T, float> || std::is_same_v<T, double>,
                "emud: CFT reductions on uint32_t, int32_t, uint64_t, int64_t, float or double (f16 and bf16 are not emulated)");
  return std::is_same_v<T, uint32_t> ? 0 : std::is_same_v<T, int32_t> ? 1 : std::is_same_v<T, uint64_t> ? 2 : std::is_same_v<T, int64_t> ? 3
         : std::is_same_v<T, float>  ? 4
                                     : 5;
}
}  // namespace nccl
}  // namespace emud
#define EMUD_CFT_OP(name, code)                                                              \
  template <typename T>                                                                      \
  struct name {                                                                              \
    static constexpr uint64_t emudCode = ((uint64_t)(code) << 8) | ::emud::nccl::cftType<T>(); \
  };
EMUD_CFT_OP(ncclCftOpSum, 0)
EMUD_CFT_OP(ncclCftOpAnd, 1)
EMUD_CFT_OP(ncclCftOpXor, 2)
EMUD_CFT_OP(ncclCftOpOr, 3)
EMUD_CFT_OP(ncclCftOpMin, 4)
EMUD_CFT_OP(ncclCftOpMax, 5)
#undef EMUD_CFT_OP

// ---- ncclCft ----

// ncclCftSmem: the CTA's mbarrier, in shared memory (the emulator keeps
// its transaction count by this address).
struct alignas(16) ncclCftSmem {
  uint64_t mbarrier;
  uint64_t emudReserved;
};

template <typename Coop>
class ncclCft {
 public:
  ncclCft(Coop coop, ncclCftSmem& smem, EMUD_SITE) : coop_(coop), smem_(&smem) {
    if (coop.thread_rank() == 0) call({EMUD_CFT_INIT, ::emud::addr(smem_)}, "ncclCft::ncclCft", EMUD_SITE_ARGS);
    coop_.sync(EMUD_SITE_ARGS);
  }
  ~ncclCft() {
    coop_.sync(__FILE__, __LINE__, "ncclCft::~ncclCft");
    if (coop_.thread_rank() == 0) call({EMUD_CFT_FINI, ::emud::addr(smem_)}, "ncclCft::~ncclCft", __FILE__, __LINE__, "");
  }
  ncclCft(const ncclCft&) = delete;
  ncclCft& operator=(const ncclCft&) = delete;

  template <typename OpCoop>
  void put(OpCoop op, ncclCftLeId le, size_t leOffset, void* smemSource, uint32_t bytes, EMUD_SITE) {
    issue(op, EMUD_CFT_PUT, 0, le, leOffset, smemSource, bytes, 0, 0, "ncclCft::put", EMUD_SITE_ARGS);
  }
  template <typename OpCoop>
  void putCpMask(OpCoop op, ncclCftLeId le, size_t leOffset, void* smemSource, uint32_t bytes, uint16_t cpMask, EMUD_SITE) {
    issue(op, EMUD_CFT_PUT, 4 | ((uint64_t)cpMask << 16), le, leOffset, smemSource, bytes, 0, 0, "ncclCft::putCpMask", EMUD_SITE_ARGS);
  }
  template <typename OpCoop>
  void putMultimem(OpCoop op, ncclCftLeId le, size_t leOffset, void* smemSource, uint32_t bytes, EMUD_SITE) {
    issue(op, EMUD_CFT_PUT, 1, le, leOffset, smemSource, bytes, 0, 0, "ncclCft::putMultimem", EMUD_SITE_ARGS);
  }
  template <typename OpCoop>
  void putMultimemCpMask(OpCoop op, ncclCftLeId le, size_t leOffset, void* smemSource, uint32_t bytes, uint16_t cpMask, EMUD_SITE) {
    issue(op, EMUD_CFT_PUT, 1 | 4 | ((uint64_t)cpMask << 16), le, leOffset, smemSource, bytes, 0, 0, "ncclCft::putMultimemCpMask",
          EMUD_SITE_ARGS);
  }
  // Counted writes (NCCL 2.32): the destination's 8-byte counter at
  // counterOffset (an LE offset in an NCCL_WIN_CFT_COUNTED window, 256-byte
  // aligned) grows by the bytes as they land.
  template <typename OpCoop>
  void putCounted(OpCoop op, ncclCftLeId le, size_t dataOffset, size_t counterOffset, void* smemSource, uint32_t bytes, EMUD_SITE) {
    issue(op, EMUD_CFT_PUT, 2, le, dataOffset, smemSource, bytes, counterOffset, 0, "ncclCft::putCounted", EMUD_SITE_ARGS);
  }
  template <typename OpCoop>
  void putMultimemCounted(OpCoop op, ncclCftLeId le, size_t dataOffset, size_t counterOffset, void* smemSource, uint32_t bytes,
                          EMUD_SITE) {
    issue(op, EMUD_CFT_PUT, 1 | 2, le, dataOffset, smemSource, bytes, counterOffset, 0, "ncclCft::putMultimemCounted", EMUD_SITE_ARGS);
  }
  template <typename OpCoop>
  void get(OpCoop op, ncclCftLeId le, size_t leOffset, void* smemDestination, uint32_t bytes, EMUD_SITE) {
    issue(op, EMUD_CFT_GET, 0, le, leOffset, smemDestination, bytes, 0, 0, "ncclCft::get", EMUD_SITE_ARGS);
  }
  template <typename OpCoop, typename RedOp>
  void red(OpCoop op, ncclCftLeId le, size_t leOffset, RedOp const&, void* smemSource, uint32_t bytes, EMUD_SITE) {
    issue(op, EMUD_CFT_RED, 0, le, leOffset, smemSource, bytes, 0, RedOp::emudCode, "ncclCft::red", EMUD_SITE_ARGS);
  }
  template <typename OpCoop, typename RedOp>
  void redMultimem(OpCoop op, ncclCftLeId le, size_t leOffset, RedOp const&, void* smemSource, uint32_t bytes, EMUD_SITE) {
    issue(op, EMUD_CFT_RED, 1, le, leOffset, smemSource, bytes, 0, RedOp::emudCode, "ncclCft::redMultimem", EMUD_SITE_ARGS);
  }
  // pullRed: the reduction over every multicast member's copy at the
  // multicast LE, read into smemDestination; a warp's call (NCCL's
  // fetching ops are issued by a whole warp). It starts at the call and
  // completes at the flush after the next submit.
  template <typename OpCoop, typename RedOp>
  void pullRed(OpCoop op, ncclCftLeId le, size_t leOffset, RedOp const&, void* smemDestination, uint32_t bytes, EMUD_SITE) {
    static_assert(std::is_same_v<OpCoop, ncclCoopWarp>, "emud: ncclCft::pullRed is issued by a warp (ncclCoopWarp)");
    issue(op, EMUD_CFT_PULLRED, 1, le, leOffset, smemDestination, bytes, 0, RedOp::emudCode, "ncclCft::pullRed", EMUD_SITE_ARGS);
  }

  template <typename OpCoop>
  void submit(OpCoop op, EMUD_SITE) {
    op.sync(EMUD_SITE_ARGS);
    if (op.thread_rank() == 0) call({EMUD_CFT_SUBMIT, ::emud::addr(smem_)}, "ncclCft::submit", EMUD_SITE_ARGS);
  }
  template <typename OpCoop>
  void flushSmem(OpCoop op, EMUD_SITE) {
    if (op.thread_rank() == 0) call({EMUD_CFT_FLUSH_SMEM, ::emud::addr(smem_)}, "ncclCft::flushSmem", EMUD_SITE_ARGS);
    op.sync(EMUD_SITE_ARGS);
  }
  template <typename OpCoop>
  void flush(OpCoop op, bool* hasReport = nullptr, uint32_t* report = nullptr, EMUD_SITE) {
    op.sync(EMUD_SITE_ARGS);
    if (op.thread_rank() == 0) call({EMUD_CFT_FLUSH, ::emud::addr(smem_)}, "ncclCft::flush", EMUD_SITE_ARGS);
    op.sync(EMUD_SITE_ARGS);
    if (hasReport) *hasReport = false;  // no fault is injected in C++ (docs/cuda.md)
    if (report) *report = 0;
  }
  // waitCounted: the coop waits until its local counter holds at least
  // expected bytes (or *abortFlag is set); an acquire order orders the
  // counted data before the coop's loads.
  template <typename OpCoop>
  void waitCounted(OpCoop op, cuda::memory_order order, ncclMemProxyType proxy, uint64_t* localCounter, uint64_t expected,
                   uint32_t* abortFlag = nullptr, EMUD_SITE) {
    (void)proxy;
    op.sync(EMUD_SITE_ARGS);
    if (op.thread_rank() == 0)
      call({EMUD_CFT_WAIT_COUNTED, ::emud::addr(localCounter), expected, ::emud::addr(abortFlag), (uint64_t)order}, "ncclCft::waitCounted",
           EMUD_SITE_ARGS);
    op.sync(EMUD_SITE_ARGS);
  }

 private:
  Coop coop_;
  ncclCftSmem* smem_;

  static uint64_t call(std::initializer_list<uint64_t> a, const char* name, const char* file, int line, const char* fn) {
    return ::emud::dev(EMUD_OP_CFT, a, name, file, line, fn);
  }
  template <typename OpCoop>
  void issue(OpCoop op, int kind, uint64_t flags, ncclCftLeId le, size_t leOffset, void* smem, uint32_t bytes, size_t counterOffset,
             uint64_t red, const char* name, const char* file, int line, const char* fn) {
    op.sync(file, line, fn);
    if (op.thread_rank() == 0)
      call({EMUD_CFT_ISSUE, ::emud::addr(smem_), (uint64_t)kind, le, leOffset, ::emud::addr(smem), bytes, flags, counterOffset, red},
           name, file, line, fn);
  }
};

// ---- CFT barrier ----

// ncclCftBarrierSession<Coop>: barrier index of the dev comm's CFT
// barriers (cftBarrierCount of them) over the flat CFT team, or the
// multicast team with multimem. NCCL checks neither the index nor that
// one slot serves one CTA; emud says so (EMUD_NCCL_DEBUG=1 stops the
// kernel there; without it an aliased slot is a warning, as its barrier
// orders nothing). Hang reports name the slot and who has not arrived.
template <typename Coop>
class ncclCftBarrierSession {
 public:
  ncclCftBarrierSession(Coop coop, ncclDevComm const& comm, uint32_t index, bool multimem = false, EMUD_SITE) : coop_(coop) {
    if (coop.thread_rank() == 0)
      session_ = ::emud::dev(EMUD_OP_CFT, {EMUD_CFT_BAR_OPEN, comm.emudHandle, index, multimem ? 1u : 0u}, "ncclCftBarrierSession",
                             EMUD_SITE_ARGS);
    coop_.sync(EMUD_SITE_ARGS);
  }
  ~ncclCftBarrierSession() {
    coop_.sync(__FILE__, __LINE__, "ncclCftBarrierSession::~ncclCftBarrierSession");
    if (coop_.thread_rank() == 0)
      ::emud::dev(EMUD_OP_CFT, {EMUD_CFT_BAR_CLOSE, session_}, "ncclCftBarrierSession::~ncclCftBarrierSession", __FILE__, __LINE__, "");
  }
  ncclCftBarrierSession(const ncclCftBarrierSession&) = delete;
  ncclCftBarrierSession& operator=(const ncclCftBarrierSession&) = delete;

  void arrive(Coop, cuda::memory_order, ncclMemProxyType, ncclMemProxyType, EMUD_SITE) {
    coop_.sync(EMUD_SITE_ARGS);
    if (coop_.thread_rank() == 0) ::emud::dev(EMUD_OP_CFT, {EMUD_CFT_BAR_ARRIVE, session_}, "ncclCftBarrierSession::arrive", EMUD_SITE_ARGS);
  }
  void wait(Coop, cuda::memory_order, ncclMemProxyType, ncclMemProxyType, EMUD_SITE) { waitFor(0, false, EMUD_SITE_ARGS); }
  void sync(Coop c, cuda::memory_order o, ncclMemProxyType p, ncclMemProxyType q, EMUD_SITE) {
    arrive(c, o, p, q, EMUD_SITE_ARGS);
    wait(c, o, p, q, EMUD_SITE_ARGS);
  }
  // Timed forms: ncclTimeout once timeoutCycles SM cycles passed (the
  // coop's thread 0 waits; the others return success).
  ncclResult_t wait(Coop, cuda::memory_order, ncclMemProxyType, ncclMemProxyType, uint64_t timeoutCycles, EMUD_SITE) {
    return waitFor(timeoutCycles, true, EMUD_SITE_ARGS) ? ncclTimeout : ncclSuccess;
  }
  ncclResult_t sync(Coop c, cuda::memory_order o, ncclMemProxyType p, ncclMemProxyType q, uint64_t timeoutCycles, EMUD_SITE) {
    arrive(c, o, p, q, EMUD_SITE_ARGS);
    return wait(c, o, p, q, timeoutCycles, EMUD_SITE_ARGS);
  }

 private:
  Coop coop_;
  uint64_t session_ = 0;
  uint64_t waitFor(uint64_t timeout, bool timed, const char* file, int line, const char* fn) {
    uint64_t r = 0;
    if (coop_.thread_rank() == 0)
      r = ::emud::dev(EMUD_OP_CFT, {EMUD_CFT_BAR_WAIT, session_, timeout, timed ? 1u : 0u}, "ncclCftBarrierSession::wait", file, line, fn);
    coop_.sync(file, line, fn);
    return r;
  }
};

// ncclMemFence: emud's memory is sequentially consistent, so the fence
// only syncs the coop (as NCCL's does around its elected fence) and wakes
// pollers.
template <typename Coop>
inline void ncclMemFence(Coop coop, cuda::memory_order, ncclMemProxyType, ncclMemProxyType, ncclMemFenceScope, EMUD_SITE) {
  coop.sync(EMUD_SITE_ARGS);
  if (coop.thread_rank() == 0) ::emud::dev(EMUD_OP_CFT, {EMUD_CFT_FENCE}, "ncclMemFence", EMUD_SITE_ARGS);
  coop.sync(EMUD_SITE_ARGS);
}

#endif
