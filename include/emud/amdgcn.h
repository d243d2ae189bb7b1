// emud/amdgcn.h: the clang AMDGCN builtins a self-contained device header
// (MORI's mori/cco/cco.hpp) calls, over emud's HIP layer. emud c++
// includes it first (-include) in a translation unit that compiles
// against a user's own MORI header (cxx/mori.go); emud's own cco.hpp
// needs none of it. Written for emud; it contains no MORI or ROCm code.
//
// Each builtin is a macro, so the call site a report names (a hang, a
// trap, a convergence point) is the line in the user's header that calls
// the builtin, as __builtin_FILE/LINE see it there.
#ifndef EMUD_AMDGCN_H
#define EMUD_AMDGCN_H

#include "hip/hip_runtime.h"

namespace emud {
// mbcnt_lo/hi: how many set bits of mask lie below this lane, in the low
// (lanes 0-31) and high (lanes 32-63) halves of the wave, plus acc.
inline unsigned mbcnt_lo(uint32_t mask, unsigned acc) {
  emud_lane* l = emud_current();
  unsigned id = l ? (unsigned)l->lane_id : 0;
  unsigned below = id >= 32 ? 32 : id;
  uint32_t m = below == 32 ? mask : (mask & ((1u << below) - 1));
  return acc + (unsigned)__builtin_popcount(m);
}
inline unsigned mbcnt_hi(uint32_t mask, unsigned acc) {
  emud_lane* l = emud_current();
  unsigned id = l ? (unsigned)l->lane_id : 0;
  if (id < 32) return acc;
  unsigned below = id - 32;
  uint32_t m = below >= 32 ? mask : (mask & ((1u << below) - 1));
  return acc + (unsigned)__builtin_popcount(m);
}
// The publish of a lane's stores (s_waitcnt, a fence): a fence of emud's,
// so every store so far is announced and waiters on it wake.
inline void publish(const char* what, EMUD_SITE) { dev(EMUD_OP_FENCE, {}, what, EMUD_SITE_ARGS); }
// readfirstlane: the lowest active lane's value.
inline uint32_t readfirstlane(uint32_t v, EMUD_SITE) {
  uint64_t m = dev(EMUD_OP_ACTIVE_MASK, {}, "__builtin_amdgcn_readfirstlane", EMUD_SITE_ARGS);
  int src = m ? __builtin_ctzll(m) : 0;
  return (uint32_t)dev(EMUD_OP_SHFL, {(uint64_t)v, (uint64_t)src, (uint64_t)::warpSize}, "__builtin_amdgcn_readfirstlane",
                       EMUD_SITE_ARGS);
}
}  // namespace emud

#define __builtin_amdgcn_workitem_id_x() (::emud::tid3().x)
#define __builtin_amdgcn_workitem_id_y() (::emud::tid3().y)
#define __builtin_amdgcn_workitem_id_z() (::emud::tid3().z)
#define __builtin_amdgcn_workgroup_id_x() (::emud::bid3().x)
#define __builtin_amdgcn_workgroup_size_x() (::emud::bdim3().x)
#define __builtin_amdgcn_wavefrontsize() (::warpSize)
#define __builtin_amdgcn_ballot_w64(p) (::__ballot((p) ? 1 : 0))
#define __builtin_amdgcn_ballot_w32(p) ((uint32_t)::__ballot((p) ? 1 : 0))
#define __builtin_amdgcn_mbcnt_lo(m, acc) (::emud::mbcnt_lo((uint32_t)(m), (unsigned)(acc)))
#define __builtin_amdgcn_mbcnt_hi(m, acc) (::emud::mbcnt_hi((uint32_t)(m), (unsigned)(acc)))
// ds_bpermute(addr, v): lane addr/4's v (the wave's lanes modulo its size).
#define __builtin_amdgcn_ds_bpermute(a, v) ((int)::__shfl((uint32_t)(v), (int)(((unsigned)(a) >> 2) % (unsigned)::warpSize)))
#define __builtin_amdgcn_readfirstlane(v) (::emud::readfirstlane((uint32_t)(v)))
#define __builtin_amdgcn_wave_barrier() (::__syncwarp())
#define __builtin_amdgcn_s_barrier() (::__syncthreads())
#define __builtin_amdgcn_s_waitcnt(n) (::emud::publish("__builtin_amdgcn_s_waitcnt"))
#define __builtin_amdgcn_fence(order, scope) (::emud::publish("__builtin_amdgcn_fence"))
#define __builtin_readcyclecounter() ((unsigned long long)::clock64())

#endif
