// A GDA device path of emud's own writing in the shape of MORI's
// cco_scale_out.hpp over its mlx5 provider (not MORI's code): lanes of a
// wave that post on one queue pair together reserve contiguous WQE slots
// with one fetch-add, each writes its RDMA WRITE (control, remote address
// and data segments, big-endian), the last lane adds the signal's atomic
// fetch-add WQE and rings: it waits its turn on the queue, stores the
// doorbell record, then the last WQE's control qword to the UAR. quiet
// polls the collapsed CQ's entry 0 until its wqe_counter names the last
// rung WQE. warpSize comes from the compiler's arch macro, as MORI's core
// utils.hpp takes it.
//
// Planted bugs, chosen by macro:
//   EMUD_TEST_GDA_SEND     the data WQE's opcode is SEND (0x0a), which
//                          emud's NIC does not run: a report naming the
//                          queue, the WQE index and the opcode;
//   EMUD_TEST_GDA_BAD_KEY  the data WQE names the peer's key plus one: an
//                          error completion naming the key.
#pragma once

#include "mori/cco/cco.hpp"
#include "mori/core/transport/rdma/core_device_types.hpp"

#if defined(__HIPCC__) || defined(__CUDACC__)
#ifndef warpSize
#if defined(__GFX9__)
#define warpSize 64
#else
#define warpSize 32
#endif
#endif

namespace mori {
namespace cco {
namespace testgda {

using core::RdmaEndpointDevice;

constexpr uint32_t kWrite = 0x08, kSend = 0x0a, kFetchAdd = 0x12, kCqUpdate = 0x08;

inline uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t be64(uint64_t v) { return __builtin_bswap64(v); }

inline uint8_t* slot(RdmaEndpointDevice* ep, uint32_t i) {
  return static_cast<uint8_t*>(ep->wqHandle.sqAddr) + ((i & (ep->wqHandle.sqWqeNum - 1)) << 6);
}

// header writes a WQE's control and remote address segments.
inline void header(uint8_t* w, uint32_t idx, uint32_t op, uint32_t qpn, uint32_t ds, uint64_t raddr, uint32_t rkey) {
  uint32_t* c = reinterpret_cast<uint32_t*>(w);
  c[0] = be32(((idx & 0xffff) << 8) | op);
  c[1] = be32((qpn << 8) | ds);
  c[2] = be32(kCqUpdate);  // fm_ce_se is the word's last byte
  c[3] = 0;
  *reinterpret_cast<uint64_t*>(w + 16) = be64(raddr);
  c[6] = be32(rkey);
  c[7] = 0;
}

inline void data(uint8_t* s, uint32_t len, uint32_t lkey, uint64_t addr) {
  uint32_t* d = reinterpret_cast<uint32_t*>(s);
  d[0] = be32(len);
  d[1] = be32(lkey);
  *reinterpret_cast<uint64_t*>(s + 8) = be64(addr);
}

// ring makes WQEs [base, base+n) the NIC's, after every earlier WQE.
inline void ring(RdmaEndpointDevice* ep, uint32_t base, uint32_t n) {
  core::WorkQueueHandle& wq = ep->wqHandle;
  while (__hip_atomic_load(&wq.dbTouchIdx, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT) != base) {
  }
  __threadfence_system();
  __hip_atomic_store(static_cast<uint32_t*>(wq.dbrRecAddr) + 1, be32((base + n) & 0xffff), __ATOMIC_SEQ_CST,
                     __HIP_MEMORY_SCOPE_SYSTEM);
  __threadfence_system();
  const uint64_t ctrl = *reinterpret_cast<volatile uint64_t*>(slot(ep, base + n - 1));
  __hip_atomic_store(static_cast<uint64_t*>(wq.dbrAddr), ctrl, __ATOMIC_SEQ_CST, __HIP_MEMORY_SCOPE_SYSTEM);
  __hip_atomic_store(&wq.dbTouchIdx, base + n, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

// putSignal writes bytes at srcOff of the local region srcKey to dstOff of
// the peer's region dstKey, then adds 1 to the peer's signal sigId: the
// active lanes of the wave, all on ep, post together.
inline void putSignal(RdmaEndpointDevice* ep, uint64_t dstOff, uint32_t dstKey, uint64_t srcOff, uint32_t srcKey,
                      uint32_t bytes, uint32_t sigId, uint32_t sigKey) {
  const uint64_t mask = __ballot(1);
  const int leader = 63 - __clzll(mask);
  const uint32_t n = __popcll(mask);
  const uint32_t me = __popcll(mask & __lanemask_lt());
  uint32_t base = 0;
  if (me == n - 1) base = atomicAdd(&ep->wqHandle.postIdx, n + 1);
  base = __shfl(base, leader);
  uint8_t* w = slot(ep, base + me);
  uint32_t op = kWrite;
#ifdef EMUD_TEST_GDA_SEND
  op = kSend;
#endif
#ifdef EMUD_TEST_GDA_BAD_KEY
  dstKey += 1;
#endif
  header(w, base + me, op, ep->qpn, 3, dstOff, dstKey);
  data(w + 32, bytes, srcKey, srcOff);
  __threadfence();
  if (me != n - 1) return;
  uint8_t* a = slot(ep, base + n);
  header(a, base + n, kFetchAdd, ep->qpn, 4, uint64_t(sigId) * 8, sigKey);
  *reinterpret_cast<uint64_t*>(a + 32) = be64(1);
  *reinterpret_cast<uint64_t*>(a + 40) = 0;
  data(a + 48, 8, ep->atomicIbuf.lkey, ep->atomicIbuf.addr);
  __threadfence();
  ring(ep, base, n + 1);
}

// quiet waits until every WQE rung on ep has completed.
inline void quiet(RdmaEndpointDevice* ep) {
  const uint32_t rung = __hip_atomic_load(&ep->wqHandle.dbTouchIdx, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  if (rung == 0) return;
  uint32_t* tail = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(ep->cqHandle.cqAddr) + 60);
  for (;;) {
    const uint32_t v = __hip_atomic_load(tail, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
    const uint32_t counter = ((v & 0xff) << 8) | ((v >> 8) & 0xff);
    if ((v >> 28) == 0xd) __builtin_trap();  // an error completion
    if (counter == ((rung - 1) & 0xffff)) break;
  }
  __hip_atomic_store(&ep->wqHandle.doneIdx, rung, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

inline void waitSignal(ccoDevComm& dc, uint32_t id, uint64_t least) {
  while (__hip_atomic_load(&dc.ibgda.signalBuf[id], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM) < least) {
  }
}

}  // namespace testgda
}  // namespace cco
}  // namespace mori
#endif
