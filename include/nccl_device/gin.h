// emud's GIN part of nccl_device.h: ncclGin, ncclGinBarrierSession and
// ncclBarrierSession, written for emud from NCCL's documentation and
// headers (names and signatures only; docs/cuda.md). Included by
// nccl_device.h; not NVIDIA's header.
//
// GIN runs over the emulated node's SDMA queues, as RCCL's Anvil backend
// (NCCL_GIN_TYPE=7) runs it inside a node (capi/nccl_gin.go): a put is a
// copy on the queue of its connection, a remote signal an atomic add on
// the peer's signal word after it, a local counter an atomic add on this
// rank's counter word after it. Signals and counters are 64-bit words of
// the rank's GPU memory: readSignal, readCounter and the resets are
// native atomics on them; waits are device calls, so a wait that cannot
// end is a hang report naming the signal or counter, the rank, the value
// expected and the value there, and who waits.
//
// Partial (docs/cuda.md): VA signals, get, putValue, flushAsync/wait,
// descriptors, ncclGinAllContexts and the timeout form of flush are not
// emulated (a compile error names each); weak signals order as strong
// ones do (the queue runs in order); memory orders and thread scopes are
// accepted and not modelled.
#ifndef EMUD_NCCL_DEVICE_GIN_H
#define EMUD_NCCL_DEVICE_GIN_H

#include <optional>

typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

// ---- put/signal actions ----
struct ncclGin_None {};
struct ncclGin_SignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_StrongSignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_WeakSignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_SignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_StrongSignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_WeakSignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_CounterInc {
  ncclGinCounter_t counter;
};
struct ncclGin_WeakCounterInc {
  ncclGinCounter_t counter;
};
// VA signals are declared so programs naming them compile up to their
// use, which is a compile error (not emulated yet).
struct ncclGin_StrongVASignalInc {
  ncclWindow_t signalWindow;
  size_t signalOffset;
};
struct ncclGin_WeakVASignalInc {
  ncclWindow_t signalWindow;
  size_t signalOffset;
};
struct ncclGin_VASignalInc {
  ncclWindow_t signalWindow;
  size_t signalOffset;
};
struct ncclGin_StrongVASignalAdd {
  ncclWindow_t signalWindow;
  size_t signalOffset;
  uint64_t value;
};
struct ncclGin_WeakVASignalAdd {
  ncclWindow_t signalWindow;
  size_t signalOffset;
  uint64_t value;
};
struct ncclGin_VASignalAdd {
  ncclWindow_t signalWindow;
  size_t signalOffset;
  uint64_t value;
};

#define ncclGinOptFlagsDefault 0u

// NCCL's fence levels of a GIN barrier: a bit set. On SDMA, a barrier's
// signal follows the context's earlier puts on each queue, so Put holds
// whatever is asked; Get has nothing to drain (no get is emulated).
enum ncclGinFenceLevel : uint32_t {
  None = 0,
  Put = 1u << 0,
  Get = 1u << 1,
  Relaxed = None,
};
constexpr ncclGinFenceLevel operator|(ncclGinFenceLevel a, ncclGinFenceLevel b) {
  return static_cast<ncclGinFenceLevel>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr ncclGinFenceLevel operator&(ncclGinFenceLevel a, ncclGinFenceLevel b) {
  return static_cast<ncclGinFenceLevel>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
}

namespace emud {
namespace nccl {
template <class...>
inline constexpr bool gin_not_built_v = false;

// A remote action as the emulator's words: the signal (or ~0 for none),
// the value it adds, and whether it is a strong signal.
struct ginRemote {
  uint64_t signal, value, strong;
};
template <typename R>
constexpr ginRemote remote(R r) {
  if constexpr (std::is_same_v<R, ncclGin_None>) {
    return {~0ull, 0, 0};
  } else if constexpr (std::is_same_v<R, ncclGin_SignalInc> || std::is_same_v<R, ncclGin_StrongSignalInc>) {
    return {r.signal, 1, 1};
  } else if constexpr (std::is_same_v<R, ncclGin_WeakSignalInc>) {
    return {r.signal, 1, 0};
  } else if constexpr (std::is_same_v<R, ncclGin_SignalAdd> || std::is_same_v<R, ncclGin_StrongSignalAdd>) {
    return {r.signal, r.value, 1};
  } else if constexpr (std::is_same_v<R, ncclGin_WeakSignalAdd>) {
    return {r.signal, r.value, 0};
  } else {
    static_assert(gin_not_built_v<R>,
                  "emud: this ncclGin remote action is not emulated (VA signals are not built yet; docs/cuda.md)");
    return {};
  }
}
template <typename L>
constexpr uint64_t local(L l) {
  if constexpr (std::is_same_v<L, ncclGin_None>) {
    return ~0ull;
  } else if constexpr (std::is_same_v<L, ncclGin_CounterInc> || std::is_same_v<L, ncclGin_WeakCounterInc>) {
    return l.counter;
  } else {
    static_assert(gin_not_built_v<L>, "emud: an ncclGin local action is ncclGin_None or ncclGin_WeakCounterInc");
    return 0;
  }
}
template <typename D>
constexpr void noDescriptor() {
  static_assert(std::is_same_v<D, ncclGin_None>, "emud: ncclGin descriptors in shared memory are not emulated (docs/cuda.md)");
}
inline uint64_t rollingMask(int bits) { return bits >= 64 ? ~0ull : bits <= 0 ? 0 : (~0ull >> (64 - bits)); }
}  // namespace nccl
}  // namespace emud

// ncclGin: one GIN context of a dev comm, as a kernel thread holds it.
struct ncclGin {
  ncclDevComm const& comm;
  int contextId;

  ncclGin(ncclDevComm const& c, int contextIndex, EMUD_SITE) : comm(c), contextId(contextIndex) {
    if (contextIndex < 0 || contextIndex >= c.ginContextCount || c.emudGin == 0)
      ::emud::dev(EMUD_OP_GIN, {EMUD_GIN_OPEN, 0, c.emudHandle, (uint64_t)(int64_t)contextIndex}, "ncclGin", EMUD_SITE_ARGS);
  }

  template <typename RemoteAction = ncclGin_None, typename LocalAction = ncclGin_None, typename Coop = ncclCoopThread,
            typename DescriptorSmem = ncclGin_None>
  void put(ncclTeam team, int peer, ncclWindow_t dstWnd, size_t dstOffset, ncclWindow_t srcWnd, size_t srcOffset, size_t bytes,
           RemoteAction remoteAction = ncclGin_None{}, LocalAction localAction = ncclGin_None{}, Coop = ncclCoopThread{},
           DescriptorSmem = ncclGin_None{}, cuda::thread_scope = cuda::thread_scope_thread,
           cuda::thread_scope = cuda::thread_scope_device, uint32_t = ncclGinOptFlagsDefault, EMUD_SITE) const {
    ::emud::nccl::noDescriptor<DescriptorSmem>();
    ::emud::nccl::ginRemote r = ::emud::nccl::remote(remoteAction);
    ::emud::dev(EMUD_OP_GIN,
                {EMUD_GIN_PUT, ::emud::nccl::coop<Coop>(), comm.emudHandle, (uint64_t)(int64_t)contextId,
                 (uint64_t)(int64_t)ncclTeamRankToWorld(comm, team, peer), ::emud::addr(dstWnd), dstOffset, ::emud::addr(srcWnd),
                 srcOffset, bytes, r.signal, r.value, ::emud::nccl::local(localAction), r.strong},
                "ncclGin::put", EMUD_SITE_ARGS);
  }

  template <typename RemoteAction, typename Coop = ncclCoopThread, typename DescriptorSmem = ncclGin_None>
  void signal(ncclTeam team, int peer, RemoteAction remoteAction, Coop = ncclCoopThread(), DescriptorSmem = ncclGin_None{},
              cuda::thread_scope = cuda::thread_scope_thread, cuda::thread_scope = cuda::thread_scope_device,
              uint32_t = ncclGinOptFlagsDefault, EMUD_SITE) const {
    ::emud::nccl::noDescriptor<DescriptorSmem>();
    ::emud::nccl::ginRemote r = ::emud::nccl::remote(remoteAction);
    ::emud::dev(EMUD_OP_GIN,
                {EMUD_GIN_SIGNAL, ::emud::nccl::coop<Coop>(), comm.emudHandle, (uint64_t)(int64_t)contextId,
                 (uint64_t)(int64_t)ncclTeamRankToWorld(comm, team, peer), 0, 0, 0, 0, 0, r.signal, r.value, ~0ull, r.strong},
                "ncclGin::signal", EMUD_SITE_ARGS);
  }

  // Every put of this coop on the context has read its source (on SDMA:
  // every queue of the context has drained).
  template <typename Coop, typename DescriptorSmem = ncclGin_None>
  void flush(Coop, cuda::memory_order = cuda::memory_order_acquire, DescriptorSmem = ncclGin_None{}, EMUD_SITE) const {
    ::emud::nccl::noDescriptor<DescriptorSmem>();
    ::emud::dev(EMUD_OP_GIN, {EMUD_GIN_FLUSH, ::emud::nccl::coop<Coop>(), comm.emudHandle, (uint64_t)(int64_t)contextId},
                "ncclGin::flush", EMUD_SITE_ARGS);
  }

  // ---- signals ----
  uint64_t readSignal(ncclGinSignal_t signal, int bits = 64, cuda::memory_order ord = cuda::memory_order_acquire,
                      EMUD_SITE) const {
    return cuda::atomic_ref<uint64_t>(comm.emudGinSignals[signal]).load(ord, EMUD_SITE_ARGS) & ::emud::nccl::rollingMask(bits);
  }
  template <typename Coop>
  void waitSignal(Coop c, ncclGinSignal_t signal, uint64_t least, int bits = 64,
                  cuda::memory_order ord = cuda::memory_order_acquire, EMUD_SITE) const {
    wait<Coop>(EMUD_GIN_WAIT_SIGNAL, signal, least, bits, 0, false, "ncclGin::waitSignal", EMUD_SITE_ARGS);
    (void)c, (void)ord;
  }
  template <typename Coop>
  ncclResult_t waitSignal(Coop, ncclGinSignal_t signal, uint64_t least, int bits, cuda::memory_order, uint64_t timeoutCycles,
                          EMUD_SITE) const {
    return wait<Coop>(EMUD_GIN_WAIT_SIGNAL, signal, least, bits, timeoutCycles, true, "ncclGin::waitSignal", EMUD_SITE_ARGS)
               ? ncclTimeout
               : ncclSuccess;
  }
  // Each signal's shadow is a word of this rank's memory the program may
  // use as it likes; increaseSignalShadow and resetSignal change it.
  uint64_t* getSignalShadowPtr(ncclGinSignal_t signal) const { return &comm.emudGinShadows[signal]; }
  void increaseSignalShadow(ncclGinSignal_t signal, uint64_t delta) const { *getSignalShadowPtr(signal) += delta; }
  template <typename Coop>
  void waitSignalMeetShadow(Coop c, ncclGinSignal_t signal, int bits = 64, cuda::memory_order ord = cuda::memory_order_acquire,
                            EMUD_SITE) const {
    waitSignal(c, signal, *getSignalShadowPtr(signal), bits, ord, EMUD_SITE_ARGS);
  }
  // Wait until the signal passes its shadow by leastDelta, then move the
  // shadow to the value seen (the coop's thread 0 moves it).
  template <typename Coop, typename Uint>
  void waitSignalFollowShadow(Coop c, ncclGinSignal_t signal, Uint leastDelta, Uint* before, Uint* delta, int bits = 64,
                              cuda::memory_order ord = cuda::memory_order_acquire, EMUD_SITE) const {
    uint64_t shadow = *getSignalShadowPtr(signal);
    waitSignal(c, signal, shadow + (uint64_t)leastDelta, bits, ord, EMUD_SITE_ARGS);
    uint64_t v = readSignal(signal, bits, ord, EMUD_SITE_ARGS);
    *before = (Uint)shadow;
    *delta = (Uint)(v - shadow);
    c.sync(EMUD_SITE_ARGS);
    if (c.thread_rank() == 0) *getSignalShadowPtr(signal) = v;
    c.sync(EMUD_SITE_ARGS);
  }
  // Sets signal and shadow to zero (no put may be signalling it then).
  void resetSignal(ncclGinSignal_t signal, EMUD_SITE) const {
    cuda::atomic_ref<uint64_t>(comm.emudGinSignals[signal]).store(0, cuda::memory_order_relaxed, EMUD_SITE_ARGS);
    *getSignalShadowPtr(signal) = 0;
  }

  // ---- counters ----
  uint64_t readCounter(ncclGinCounter_t counter, int bits = 56, cuda::memory_order ord = cuda::memory_order_acquire,
                       EMUD_SITE) const {
    return cuda::atomic_ref<uint64_t>(comm.emudGinCounters[counter]).load(ord, EMUD_SITE_ARGS) & ::emud::nccl::rollingMask(bits);
  }
  template <typename Coop>
  void waitCounter(Coop, ncclGinCounter_t counter, uint64_t least, int bits = 56,
                   cuda::memory_order = cuda::memory_order_acquire, EMUD_SITE) const {
    wait<Coop>(EMUD_GIN_WAIT_COUNTER, counter, least, bits, 0, false, "ncclGin::waitCounter", EMUD_SITE_ARGS);
  }
  template <typename Coop>
  ncclResult_t waitCounter(Coop, ncclGinCounter_t counter, uint64_t least, int bits, cuda::memory_order, uint64_t timeoutCycles,
                           EMUD_SITE) const {
    return wait<Coop>(EMUD_GIN_WAIT_COUNTER, counter, least, bits, timeoutCycles, true, "ncclGin::waitCounter", EMUD_SITE_ARGS)
               ? ncclTimeout
               : ncclSuccess;
  }
  void resetCounter(ncclGinCounter_t counter, EMUD_SITE) const {
    cuda::atomic_ref<uint64_t>(comm.emudGinCounters[counter]).store(0, cuda::memory_order_relaxed, EMUD_SITE_ARGS);
  }

  // ---- not emulated: a compile error naming the call ----
  template <class... A>
  void get(A&&...) const {
    static_assert(::emud::nccl::gin_not_built_v<A...>, "emud: ncclGin::get is not emulated yet (docs/cuda.md)");
  }
  template <class T = void, class... A>
  void putValue(A&&...) const {
    static_assert(::emud::nccl::gin_not_built_v<A...>, "emud: ncclGin::putValue is not emulated yet (docs/cuda.md)");
  }
  template <class... A>
  void flushAsync(A&&...) const {
    static_assert(::emud::nccl::gin_not_built_v<A...>, "emud: ncclGin::flushAsync is not emulated yet (docs/cuda.md)");
  }

 private:
  template <typename Coop>
  uint64_t wait(int what, uint32_t index, uint64_t least, int bits, uint64_t timeout, bool timed, const char* name,
                const char* file, int line, const char* fn) const {
    return ::emud::dev(EMUD_OP_GIN,
                       {(uint64_t)what, ::emud::nccl::coop<Coop>(), comm.emudHandle, (uint64_t)(int64_t)contextId, index, least,
                        (uint64_t)(int64_t)bits, timeout, timed ? 1u : 0u},
                       name, file, line, fn);
  }
};

// ---- GIN barrier ----

// ncclGinBarrierSession<Coop>: a barrier of a team's ranks over GIN
// signals on slot index of a dev comm's GIN barrier handle (railGinBarrier,
// worldGinBarrier, or the hybrid barrier's rail half): each sync adds one
// to every member's slot word through the context's queues and waits
// until this rank's word counts every member's arrival of the epoch. The
// epoch carries over to the next session on the slot.
template <typename Coop>
struct ncclGinBarrierSession {
  ncclGin gin;
  ncclTeam team;
  ncclGinBarrierHandle handle;
  uint32_t index;
  uint64_t epoch;

  ncclGinBarrierSession(Coop, ncclGin g, ncclTeam t, ncclGinBarrierHandle h, uint32_t idx, EMUD_SITE)
      : gin(g), team(t), handle(h), index(idx) {
    epoch = call(EMUD_GIN_BARRIER_OPEN, 0, false, "ncclGinBarrierSession", EMUD_SITE_ARGS);
  }
  ncclGinBarrierSession(Coop c, ncclGin g, ncclTeamTagRail, uint32_t idx, EMUD_SITE)
      : ncclGinBarrierSession(c, g, ncclTeamRail(g.comm), g.comm.railGinBarrier, idx, EMUD_SITE_ARGS) {}
  ncclGinBarrierSession(Coop c, ncclGin g, ncclTeamTagWorld, uint32_t idx, EMUD_SITE)
      : ncclGinBarrierSession(c, g, ncclTeamWorld(g.comm), g.comm.worldGinBarrier, idx, EMUD_SITE_ARGS) {}
  ~ncclGinBarrierSession() { call(EMUD_GIN_BARRIER_CLOSE, 0, false, "ncclGinBarrierSession::~ncclGinBarrierSession", __FILE__, __LINE__, ""); }
  ncclGinBarrierSession(ncclGinBarrierSession const&) = delete;

  void sync(Coop, cuda::memory_order, ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get, EMUD_SITE) {
    call(EMUD_GIN_BARRIER_SYNC, 0, false, "ncclGinBarrierSession::sync", EMUD_SITE_ARGS);
    epoch++;
  }
  ncclResult_t sync(Coop, cuda::memory_order, ncclGinFenceLevel, uint64_t timeoutCycles, EMUD_SITE) {
    if (call(EMUD_GIN_BARRIER_SYNC, timeoutCycles, true, "ncclGinBarrierSession::sync", EMUD_SITE_ARGS)) return ncclTimeout;
    epoch++;
    return ncclSuccess;
  }

 private:
  uint64_t call(int what, uint64_t timeout, bool timed, const char* name, const char* file, int line, const char* fn) {
    return ::emud::dev(EMUD_OP_GIN,
                       {(uint64_t)what, ::emud::nccl::coop<Coop>(), gin.comm.emudHandle, (uint64_t)(int64_t)gin.contextId,
                        (uint64_t)(int64_t)team.nRanks, (uint64_t)(int64_t)team.rank, (uint64_t)(int64_t)team.stride,
                        (uint64_t)(int64_t)handle.kind, index, what == EMUD_GIN_BARRIER_OPEN ? (uint64_t)(int64_t)handle.nBarriers : epoch,
                        timeout, timed ? 1u : 0u},
                       name, file, line, fn);
  }
};

// ncclBarrierSession<Coop>: NCCL's hybrid barrier. With ncclTeamTagWorld
// and a GIN context it is an LSA barrier of the LSA team on the dev
// comm's hybridLsaBarrier, then a GIN barrier of the rail team on its
// hybrid rail GIN barrier (both barrierCount slots); ncclTeamTagLsa is
// the LSA half alone, ncclTeamTagRail the GIN half alone. On emud's one
// node the LSA team is the node and the rail team this rank alone.
template <typename Coop>
struct ncclBarrierSession {
  std::optional<ncclLsaBarrierSession<Coop>> lsa;
  std::optional<ncclGinBarrierSession<Coop>> rail;

  ncclBarrierSession(Coop c, ncclTeamTagWorld, ncclGin g, uint32_t index, bool multimem = false, EMUD_SITE) {
    lsa.emplace(c, g.comm, ncclTeamLsa(g.comm), g.comm.hybridLsaBarrier, index, multimem, EMUD_SITE_ARGS);
    rail.emplace(c, g, ncclTeamRail(g.comm), g.comm.hybridRailGinBarrier, index, EMUD_SITE_ARGS);
  }
  ncclBarrierSession(Coop c, ncclTeamTagLsa, ncclDevComm const& comm, uint32_t index, bool multimem = false, EMUD_SITE) {
    lsa.emplace(c, comm, ncclTeamLsa(comm), comm.hybridLsaBarrier, index, multimem, EMUD_SITE_ARGS);
  }
  ncclBarrierSession(Coop c, ncclTeamTagRail, ncclGin g, uint32_t index, EMUD_SITE) {
    rail.emplace(c, g, ncclTeamRail(g.comm), g.comm.hybridRailGinBarrier, index, EMUD_SITE_ARGS);
  }
  ncclBarrierSession(ncclBarrierSession const&) = delete;

  ncclLsaBarrierSession<Coop>& lsaBarrier() { return *lsa; }
  ncclGinBarrierSession<Coop>& ginBarrier() { return *rail; }

  void sync(Coop c, cuda::memory_order o, ncclGinFenceLevel f = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get, EMUD_SITE) {
    if (lsa) lsa->sync(c, o, EMUD_SITE_ARGS);
    if (rail) rail->sync(c, o, f, EMUD_SITE_ARGS);
  }
  ncclResult_t sync(Coop c, cuda::memory_order o, ncclGinFenceLevel f, uint64_t timeoutCycles, EMUD_SITE) {
    ncclResult_t r = ncclSuccess;
    // Both halves run whatever the first returned: every thread of the
    // coop must reach the second's coop syncs (as NCCL's does).
    if (lsa) r = lsa->sync(c, o, timeoutCycles, EMUD_SITE_ARGS);
    if (rail) {
      ncclResult_t r2 = rail->sync(c, o, f, timeoutCycles, EMUD_SITE_ARGS);
      if (r == ncclSuccess) r = r2;
    }
    return r;
  }
};

#endif
