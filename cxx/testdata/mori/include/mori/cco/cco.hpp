// A small header in the structure of MORI's mori/cco/cco.hpp, written for
// emud's tests (cxx/mori_test.go): not MORI's header, and none of its
// code. It declares the types and host calls emud's control plane fills
// (include/emud/mori_host.cpp) with MORI's names and field order, and a
// device SDMA path of its own in MORI's shape: a queue handle whose
// ReserveSlot makes a fetch-add reservation on a ring of 32-byte units,
// a submitPacket that waits its turn in the in-order commit chain,
// publishes the lane's ring stores and stores wptr and the doorbell, and
// put/quiet/waitSignal over it. Its device code uses only the AMDGCN
// builtins and scoped __hip_atomic_* calls, as MORI's does.
//
// Planted bugs, one per class, chosen by macro:
//   EMUD_TEST_MORI_NO_PUBLISH  submitPacket rings the doorbell without the
//                              publish (no s_waitcnt(0) / release fence);
//   EMUD_TEST_MORI_OLD_CHAIN   every posting lane runs the commit chain
//                              itself, with a wave barrier after its wait,
//                              as MORI before #502 had: lanes of one wave
//                              sharing a queue deadlock (the first waits at
//                              the barrier for the ones waiting their turn;
//                              without the barrier lock-step holds it at
//                              the loop's exit just the same). The fixed
//                              shape groups the wave's lanes by queue: one
//                              leader reserves and rings for its group.
//   EMUD_TEST_MORI_RENAMED     the handle's committedWptr is renamed, a
//                              layout emud cannot fill (a build error);
//   EMUD_TEST_MORI_ADDED       ccoSdmaContext has a field emud does not
//                              know (a build error, never left zero).
// Variants, not bugs:
//   EMUD_TEST_MORI_CAS_RESERVE ReserveSlot reserves by compare-and-swap and
//                              waits for a full ring re-reading the write
//                              and read pointers in turn (put.cpp full);
//   EMUD_TEST_MORI_CALL_FIRST  a device call (a wave barrier) between a
//                              lane's ring stores and its publish: the
//                              publish still comes before the doorbell.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#ifndef BUILD_CCO_SDMA
#define BUILD_CCO_SDMA 0
#endif

// Which header a program compiled against (the tests print it).
#define EMUD_TEST_MORI_HEADER "emud-testdata-mori"

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

struct ccoIbgdaWin {
  uint32_t* peerRkeys;
  uint32_t lkey;
};
struct ccoWindowDevice {
  char* winBase;
  uint32_t stride4G;
  int lsaRank;
  ccoIbgdaWin ibgdaWin;
};
typedef ccoWindowDevice* ccoWindow_t;

struct ccoSdmaQueueDeviceHandle;
struct ccoSdmaContext {
  uint32_t sdmaNumQueue;
  ccoSdmaQueueDeviceHandle** deviceHandles;  // [lsaSize * sdmaNumQueue], peer-major
  uint64_t* signalBuf;                       // [lsaSize * sdmaNumQueue], by sender
#ifdef EMUD_TEST_MORI_ADDED
  uint64_t* laneHints;  // a field a newer version added, which emud does not fill
#endif
  uint64_t** peerSignalPtrs;                 // [lsaSize]
};
struct ccoLsaBarrierHandle {
  uint32_t bufOffset;
  int nBarriers;
};
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
  ccoLsaBarrierHandle lsaBarrier;
  ccoGdaBarrierHandle railGdaBarrier;
  ccoLsaBarrierHandle hybridLsaBarrier;
  ccoGdaBarrierHandle hybridRailGdaBarrier;
  ccoSdmaContext sdma;
};
static_assert(std::is_trivially_copyable<ccoDevComm>::value, "passed to kernels by value");

struct ccoDevCommRequirements {
  size_t size;
  uint32_t magic;
  uint32_t version;
  void* resourceRequirementsList;
  ccoGdaConnectionType gdaConnectionType;
  int gdaContextCount;
  int gdaSignalCount;
  int gdaCounterCount;
  int gdaQueueDepth;
  int gdaTrafficClass;
  int lsaBarrierCount;
  int railGdaBarrierCount;
  int sdmaQueueCount;
  int barrierCount;
};
#define CCO_DEV_COMM_REQUIREMENTS_INITIALIZER                                                             \
  {sizeof(::mori::cco::ccoDevCommRequirements), ::mori::cco::CCO_API_MAGIC, ::mori::cco::CCO_API_VERSION, \
   nullptr, ::mori::cco::CCO_GDA_CONNECTION_NONE, 0, 0, 0, 0, -1, 0, 0, 0, 0}

struct ccoUniqueId {
  char internal[128];
};
struct ccoComm;

int ccoGetUniqueId(ccoUniqueId* uniqueId);
int ccoCommCreate(const ccoUniqueId& uniqueId, int nRanks, int rank, size_t perRankVmmSize, ccoComm** comm);
int ccoCommDestroy(ccoComm* comm);
int ccoMemAlloc(ccoComm* comm, size_t size, void** ptr);
int ccoMemFree(ccoComm* comm, void* ptr);
int ccoWindowRegister(ccoComm* comm, void* ptr, size_t size, ccoWindow_t* win);
int ccoWindowDeregister(ccoComm* comm, ccoWindow_t win);
int ccoDevCommCreate(ccoComm* comm, const ccoDevCommRequirements* reqs, ccoDevComm* outDevComm);
int ccoDevCommDestroy(ccoComm* comm, ccoDevComm* devComm);
int ccoBarrierAll(ccoComm* comm);

}  // namespace cco
}  // namespace mori

#if (defined(__HIPCC__) || defined(__CUDACC__)) && BUILD_CCO_SDMA
namespace mori {
namespace cco {

constexpr uint32_t CCO_SDMA_QUEUE_SIZE = 256 * 1024;
constexpr uint64_t CCO_SDMA_UNIT = 32;
constexpr int CCO_SDMA_MAX_RETRIES = 1 << 20;

// The lane's ring stores land before its doorbell store.
inline void testPublish() {
#if !defined(EMUD_TEST_MORI_NO_PUBLISH)
#if defined(__gfx1250__)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
#else
  __builtin_amdgcn_s_waitcnt(0);
#endif
#endif
}

struct ccoSdmaQueueDeviceHandle {
  uint32_t* queueBuf;
  HSAuint64* rptr;
  HSAuint64* wptr;
  HSAuint64* doorbell;
  uint64_t* cachedWptr;
#ifdef EMUD_TEST_MORI_RENAMED
  uint64_t* commitWptr;
#else
  uint64_t* committedWptr;
#endif
  uint64_t cachedHwReadIndex;

  // One fetch-add hands out [base, base+bytes); the lane then waits until
  // the engine's read pointer leaves room for it.
  uint64_t ReserveSlot(uint64_t bytes) {
#ifdef EMUD_TEST_MORI_CAS_RESERVE
    // The compare-and-swap shape (MORI 489dbfd5): read the write pointer,
    // and while the ring looks full, the read pointer too, each round; a
    // full ring is a wait over the two words in turn.
    int tries = 0;
    for (;;) {
      uint64_t base = __hip_atomic_load(cachedWptr, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      bool room = base + bytes - cachedHwReadIndex <= CCO_SDMA_QUEUE_SIZE;
      if (!room) {
        cachedHwReadIndex = __hip_atomic_load(rptr, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
        room = base + bytes - cachedHwReadIndex <= CCO_SDMA_QUEUE_SIZE;
      }
      if (room && __hip_atomic_compare_exchange_strong(cachedWptr, &base, base + bytes, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                                       __HIP_MEMORY_SCOPE_AGENT))
        return base;
      if (++tries == CCO_SDMA_MAX_RETRIES) __builtin_trap();
    }
#endif
    const uint64_t base = __hip_atomic_fetch_add(cachedWptr, bytes, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    int retries = 0;
    while (base + bytes - cachedHwReadIndex > CCO_SDMA_QUEUE_SIZE) {
      cachedHwReadIndex = __hip_atomic_load(rptr, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
      if (++retries == CCO_SDMA_MAX_RETRIES) __builtin_trap();
    }
    return base;
  }
  // The lane's turn comes when every earlier reservation has been rung.
  void submitPacket(uint64_t base, uint64_t end) {
#ifndef EMUD_TEST_MORI_RENAMED
    int retries = 0;
    while (__hip_atomic_load(committedWptr, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT) != base) {
      __builtin_amdgcn_s_sleep(1);
      if (++retries == CCO_SDMA_MAX_RETRIES) __builtin_trap();
    }
#ifdef EMUD_TEST_MORI_OLD_CHAIN
    __builtin_amdgcn_wave_barrier();  // pre-#502: the lanes of the wave meet here, each after its own turn
#endif
    testPublish();
    __hip_atomic_store(wptr, end, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    __hip_atomic_store(doorbell, end, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
    __hip_atomic_store(committedWptr, end, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
#endif
  }
};

// The 32-byte unit at monotonic byte offset at.
inline uint32_t* testUnit(ccoSdmaQueueDeviceHandle& h, uint64_t at) {
  return h.queueBuf + ((at % CCO_SDMA_QUEUE_SIZE) / sizeof(uint32_t));
}
// gfx9 COPY_LINEAR (7 dwords, the 30-bit count is bytes - 1), padded to the unit with a zero (NOP) dword.
inline void testWriteCopy(ccoSdmaQueueDeviceHandle& h, uint64_t at, const void* src, void* dst, uint64_t bytes) {
  uint32_t* u = testUnit(h, at);
  const uint64_t s = (uint64_t)(uintptr_t)src, d = (uint64_t)(uintptr_t)dst;
  const uint32_t dw[8] = {1u, (uint32_t)(bytes - 1) & 0x3fffffffu, 0, (uint32_t)s, (uint32_t)(s >> 32), (uint32_t)d,
                          (uint32_t)(d >> 32), 0};
  for (int i = 0; i < 8; i++) u[i] = dw[i];
}
// gfx9 ATOMIC ADD64 of 1 (operation 47 in bits 31:25).
inline void testWriteSignal(ccoSdmaQueueDeviceHandle& h, uint64_t at, HSAuint64* target) {
  uint32_t* u = testUnit(h, at);
  const uint64_t t = (uint64_t)(uintptr_t)target;
  const uint32_t dw[8] = {10u | (47u << 25), (uint32_t)t, (uint32_t)(t >> 32), 1, 0, 0, 0, 0};
  for (int i = 0; i < 8; i++) u[i] = dw[i];
}

struct ccoCoopThread {};
struct ccoCoopWarp {};

// Wave helpers, one line each as MORI's are: the collectives below reach
// each from several places, so a lane's point is its whole call chain.
#if defined(__gfx1250__)
inline uint64_t testBallot(bool p) { return __builtin_amdgcn_ballot_w32(p); }
#else
inline uint64_t testBallot(bool p) { return __builtin_amdgcn_ballot_w64(p); }
#endif
inline uint32_t testLanesBelow(uint64_t m) {
  return __builtin_amdgcn_mbcnt_hi((uint32_t)(m >> 32), __builtin_amdgcn_mbcnt_lo((uint32_t)m, 0));
}
inline uint32_t testLaneId() { return testLanesBelow(~0ull); }
inline uint32_t testFrom32(uint32_t v, int lane) { return (uint32_t)__builtin_amdgcn_ds_bpermute(lane << 2, (int)v); }
inline uint64_t testFrom(uint64_t v, int lane) {
  return (uint64_t)testFrom32((uint32_t)(v >> 32), lane) << 32 | testFrom32((uint32_t)v, lane);
}

struct ccoSdma {
  ccoDevComm const& comm;
  ccoSdma(ccoDevComm const& c) : comm(c) {}

  // put: each calling lane posts its own COPY (and a remote signal) on
  // queue (peer, queueId) at thread scope; at warp scope lane 0 posts it
  // and the others do nothing.
  template <typename Coop = ccoCoopThread, bool localSignal = false, bool remoteSignal = false>
  void put(int peer, ccoWindow_t dstWin, size_t dstOff, ccoWindow_t srcWin, size_t srcOff, size_t bytes,
           int queueId = 0) {
    if (std::is_same_v<Coop, ccoCoopWarp> && testLaneId() != 0) return;
    const ccoSdmaContext& s = comm.sdma;
    const uint32_t n = s.sdmaNumQueue;
    if (queueId < 0 || (uint32_t)queueId >= n || bytes == 0) return;
    const uint32_t key = (uint32_t)peer * n + (uint32_t)queueId;
    constexpr uint64_t units = 1 + (localSignal ? 1 : 0) + (remoteSignal ? 1 : 0);
    char* dst = dstWin->winBase + (((uint64_t)peer * dstWin->stride4G) << 32) + dstOff;
    const char* src = srcWin->winBase + (((uint64_t)srcWin->lsaRank * srcWin->stride4G) << 32) + srcOff;
#ifdef EMUD_TEST_MORI_OLD_CHAIN
    ccoSdmaQueueDeviceHandle h = *s.deviceHandles[key];
    const uint64_t base = h.ReserveSlot(units * CCO_SDMA_UNIT);
    write<localSignal, remoteSignal>(h, base, src, dst, bytes, peer, queueId);
    h.submitPacket(base, base + units * CCO_SDMA_UNIT);
#else
    // The lanes still to post, one queue at a time: the lowest such
    // lane's queue is this round's, its lanes take consecutive slots of
    // one reservation, and that lane rings for them all.
    const uint32_t me = testLaneId();
    uint64_t left = testBallot(true);
    while (left != 0) {
      const int first = __builtin_ctzll(left);
      const uint32_t k = testFrom32(key, first);  // every lane: the loop is uniform
      const bool in = ((left >> me) & 1) != 0 && k == key;
      const uint64_t group = testBallot(in);
      if (in) {
        ccoSdmaQueueDeviceHandle h = *s.deviceHandles[key];
        const uint32_t idx = testLanesBelow(group);
        const uint64_t run = (uint64_t)__builtin_popcountll(group) * units * CCO_SDMA_UNIT;
        uint64_t base = idx == 0 ? h.ReserveSlot(run) : 0;
        base = testFrom(base, first);
        write<localSignal, remoteSignal>(h, base + idx * units * CCO_SDMA_UNIT, src, dst, bytes, peer, queueId);
#ifdef EMUD_TEST_MORI_CALL_FIRST
        __builtin_amdgcn_wave_barrier();
#endif
        testPublish();  // each lane publishes its own stores
        __builtin_amdgcn_wave_barrier();
        if (idx == 0) h.submitPacket(base, base + run);
      }
      left &= ~group;
    }
#endif
  }

  // write puts the lane's COPY and signals at ring offset at.
  template <bool localSignal, bool remoteSignal>
  void write(ccoSdmaQueueDeviceHandle& h, uint64_t at, const char* src, char* dst, size_t bytes, int peer, int queueId) {
    const ccoSdmaContext& s = comm.sdma;
    testWriteCopy(h, at, src, dst, bytes);
    at += CCO_SDMA_UNIT;
    const uint32_t slot = (uint32_t)comm.lsaRank * s.sdmaNumQueue + (uint32_t)queueId;
    if (localSignal) {
      testWriteSignal(h, at, s.signalBuf + slot);
      at += CCO_SDMA_UNIT;
    }
    if (remoteSignal) testWriteSignal(h, at, s.peerSignalPtrs[peer] + slot);
  }

  // quiet<ccoCoopWarp>: lane q waits for queue (peer, q), then the wave meets.
  template <typename Coop = ccoCoopThread>
  void quiet(int peer) {
    if constexpr (std::is_same_v<Coop, ccoCoopWarp>) {
      const uint32_t q = testLaneId();
      if (q < comm.sdma.sdmaNumQueue) drain(peer, q);
      __builtin_amdgcn_wave_barrier();
    } else {
      for (uint32_t q = 0; q < comm.sdma.sdmaNumQueue; q++) drain(peer, q);
    }
  }

  // drain waits until queue (peer, q) has run what was rung on it.
  void drain(int peer, uint32_t q) {
    const ccoSdmaContext& s = comm.sdma;
    ccoSdmaQueueDeviceHandle h = *s.deviceHandles[peer * s.sdmaNumQueue + q];
#ifndef EMUD_TEST_MORI_RENAMED
    const uint64_t target = __hip_atomic_load(h.committedWptr, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    while (__hip_atomic_load(h.rptr, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM) < target) __builtin_amdgcn_s_sleep(1);
#endif
  }

  // waitSignal: poll this rank's slot [srcRank * n + queueId] until it reaches expected.
  void waitSignal(int srcRank, int queueId, uint64_t expected) {
    const ccoSdmaContext& s = comm.sdma;
    HSAuint64* slot = s.signalBuf + ((uint32_t)srcRank * s.sdmaNumQueue + (uint32_t)queueId);
    while (__hip_atomic_load(slot, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM) < expected) __builtin_amdgcn_s_sleep(2);
  }
};

}  // namespace cco
}  // namespace mori
#endif
