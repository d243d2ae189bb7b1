// hip/hip_runtime.h for emud: the subset of the HIP runtime and device
// language that collective kernels use, over emud's emulator (capi).
// Written for emud from HIP's public documentation (rocm.docs.amd.com,
// HIP API reference); it is not AMD's header. Device code runs as host
// C++: every lane is a coroutine of the emulator and every device call
// below is a point where the emulator schedules lanes (see capi/doc.go).
#ifndef EMUD_HIP_RUNTIME_H
#define EMUD_HIP_RUNTIME_H

#ifndef __cplusplus
#error "emud's hip_runtime.h is C++ (C++17)"
#endif
#if __cplusplus < 201703L
#error "emud's HIP headers need C++17 (-std=c++17 or later)"
#endif

// The standard headers the programs (and this header) use come first:
// this header later turns GCC's __atomic builtins into emud calls, which
// must not reach into the library's own inline code.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "emud/abi.h"

// (emud c++ predefines __HIP__ and __HIPCC__ for HIP-language sources, as
// clang's -x hip does; hipcc's users pass -D__HIP_PLATFORM_AMD__.)
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#ifndef __HIP__
#define __HIP__ 1
#endif
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif
#define __EMUD__ 1
#define HIP_VERSION_MAJOR 6
#define HIP_VERSION_MINOR 4

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
// __shared__ declarations are rewritten by `emud c++`; one that reaches
// the compiler (inside a macro, say) names itself instead of silently
// becoming a per-lane variable.
#define __shared__ __emud_shared_declaration_not_rewritten_by_emud_cxx

// Call-site arguments: device and host calls take the caller's file and
// line (hang reports, errors) as defaulted trailing parameters.
#define EMUD_SITE                                                                  \
  const char *__emud_file = __builtin_FILE(), int __emud_line = __builtin_LINE(), \
             const char *__emud_fn = __builtin_FUNCTION()
#define EMUD_SITE_ARGS __emud_file, __emud_line, __emud_fn

struct dim3 {
  uint32_t x, y, z;
  constexpr dim3(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  uint32_t x, y, z;
};

typedef enum hipError_t {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorMemoryAllocation = 2,
  hipErrorNotInitialized = 3,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidHandle = 400,
  hipErrorInvalidResourceHandle = 400,
  hipErrorNotReady = 600,
  hipErrorLaunchFailure = 719,
  hipErrorNotSupported = 801,
  hipErrorUnknown = 999,
} hipError_t;

typedef enum hipMemcpyKind {
  hipMemcpyHostToHost = 0,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
  hipMemcpyDefault = 4,
} hipMemcpyKind;

typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;

typedef struct hipDeviceProp_t {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  int memoryClockRate;
  int memoryBusWidth;
  size_t totalConstMem;
  int major;
  int minor;
  int multiProcessorCount;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  int computeMode;
  int concurrentKernels;
  int pciDomainID;
  int pciBusID;
  int pciDeviceID;
  size_t maxSharedMemoryPerMultiProcessor;
  int isMultiGpuBoard;
  int canMapHostMemory;
  char gcnArchName[256];
  int integrated;
  int cooperativeLaunch;
  int managedMemory;
} hipDeviceProp_t;

#define __HIP_MEMORY_SCOPE_SINGLETHREAD 1
#define __HIP_MEMORY_SCOPE_WAVEFRONT 2
#define __HIP_MEMORY_SCOPE_WORKGROUP 3
#define __HIP_MEMORY_SCOPE_AGENT 4
#define __HIP_MEMORY_SCOPE_SYSTEM 5

namespace emud {

inline emud_lane* lane() { return emud_current(); }

// A device call: fill the lane's arguments, yield, return the result.
// From host code (no lane) it is an error naming the call.
inline uint64_t dev(int op, std::initializer_list<uint64_t> args, const char* what, const char* file, int line,
                    const char* fn) {
  emud_lane* l = emud_current();
  if (!l) {
    std::fprintf(stderr, "emud: %s:%d: %s called from host code (it is a device function)\n", file, line, what);
    std::exit(1);
  }
  int i = 0;
  for (uint64_t v : args) l->a[i++] = v;
  return emud_yield(l, op, file, line, fn);
}

template <class T>
inline uint64_t bits(T v) {
  static_assert(sizeof(T) <= 8, "emud: value wider than 64 bits");
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  return u;
}
template <class T>
inline T unbits(uint64_t u) {
  T v;
  std::memcpy(&v, &u, sizeof(T));
  return v;
}
inline uint64_t addr(const volatile void* p) { return (uint64_t)(uintptr_t)p; }

inline uint3 tid3() {
  emud_lane* l = emud_current();
  if (!l) return {0, 0, 0};
  return {l->tid[0], l->tid[1], l->tid[2]};
}
inline uint3 bid3() {
  emud_lane* l = emud_current();
  if (!l) return {0, 0, 0};
  return {l->bid[0], l->bid[1], l->bid[2]};
}
inline uint3 bdim3() {
  emud_lane* l = emud_current();
  if (!l) return {1, 1, 1};
  return {l->bdim[0], l->bdim[1], l->bdim[2]};
}
inline uint3 gdim3() {
  emud_lane* l = emud_current();
  if (!l) return {1, 1, 1};
  return {l->gdim[0], l->gdim[1], l->gdim[2]};
}
inline int wave_size_env() {
  const char* a = std::getenv("EMUD_ARCH");
  return a && std::strcmp(a, "gfx1250") == 0 ? 32 : 64;
}

template <class T>
using shared_t = T;
inline void* shared(uint64_t id, size_t bytes, size_t align, EMUD_SITE) {
  return (void*)(uintptr_t)dev(EMUD_OP_SHARED, {id, bytes, align}, "__shared__", EMUD_SITE_ARGS);
}
inline void* dyn_shared() {
  emud_lane* l = emud_current();
  return l ? l->dyn_shared : nullptr;
}

inline void unsupported(const char* name, EMUD_SITE) {
  emud_lane* l = emud_current();
  if (l) {
    dev(EMUD_OP_UNSUPPORTED, {addr(name)}, name, EMUD_SITE_ARGS);
    return;
  }
  uint64_t a[16] = {addr(name)};
  emud_host(EMUD_H_UNSUPPORTED, a, __emud_file, __emud_line);
}

// Atomic load: a lane that reads the same value from the same word twice
// in a row is spinning; the emulator then waits for a write to the word
// (virtual time passes, a flag that is never set is a reported hang).
struct spin_state {
  const volatile void* p;
  uint64_t v;
};
inline spin_state* spin_of(emud_lane* l) { return reinterpret_cast<spin_state*>(&l->a[12]); }
template <class T>
inline T note_load(const volatile T* p, T v, const char* file, int line, const char* fn) {
  emud_lane* l = emud_current();
  if (!l) return v;
  // a[12..13] survive between calls: no device call uses them.
  spin_state* s = spin_of(l);
  if (s->p == (const volatile void*)p && s->v == bits(v)) {
    l->a[0] = addr(p);
    l->a[1] = sizeof(T);
    l->a[2] = bits(v);
    emud_yield(l, EMUD_OP_SPIN, file, line, fn);
    s->p = nullptr;
    return v;
  }
  s->p = (const volatile void*)p;
  s->v = bits(v);
  return v;
}
inline void note_write(const volatile void* p, size_t n, const char* file, int line, const char* fn) {
  emud_lane* l = emud_current();
  if (!l) return;
  l->a[0] = addr(p);
  l->a[1] = n;
  spin_of(l)->p = nullptr;
  emud_yield(l, EMUD_OP_ATOMIC, file, line, fn);
}

}  // namespace emud

#define threadIdx (::emud::tid3())
#define blockIdx (::emud::bid3())
#define blockDim (::emud::bdim3())
#define gridDim (::emud::gdim3())
static const int warpSize = ::emud::wave_size_env();

// ---- device functions ----

inline void __syncthreads(EMUD_SITE) { ::emud::dev(EMUD_OP_SYNC_THREADS, {}, "__syncthreads", EMUD_SITE_ARGS); }
inline void __syncwarp(uint64_t = ~0ull, EMUD_SITE) { ::emud::dev(EMUD_OP_SYNC_WARP, {}, "__syncwarp", EMUD_SITE_ARGS); }
inline uint64_t __ballot(int pred, EMUD_SITE) {
  return ::emud::dev(EMUD_OP_BALLOT, {(uint64_t)(pred != 0)}, "__ballot", EMUD_SITE_ARGS);
}
inline uint64_t __ballot_sync(uint64_t, int pred, EMUD_SITE) {
  return ::emud::dev(EMUD_OP_BALLOT, {(uint64_t)(pred != 0)}, "__ballot_sync", EMUD_SITE_ARGS);
}
inline int __any(int pred, EMUD_SITE) {
  return ::emud::dev(EMUD_OP_BALLOT, {(uint64_t)(pred != 0)}, "__any", EMUD_SITE_ARGS) != 0;
}
inline int __all(int pred, EMUD_SITE) {
  return ::emud::dev(EMUD_OP_BALLOT, {(uint64_t)(pred == 0)}, "__all", EMUD_SITE_ARGS) == 0;
}
inline uint64_t __activemask(EMUD_SITE) { return ::emud::dev(EMUD_OP_ACTIVE_MASK, {}, "__activemask", EMUD_SITE_ARGS); }
inline unsigned __lane_id() {
  emud_lane* l = emud_current();
  return l ? (unsigned)l->lane_id : 0;
}
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __ffsll(unsigned long long v) { return __builtin_ffsll((long long)v); }
inline int __ffs(unsigned v) { return __builtin_ffs((int)v); }
inline int __clzll(long long v) { return v == 0 ? 64 : __builtin_clzll((unsigned long long)v); }

template <class T>
inline T __shfl(T v, int src, int width = warpSize, EMUD_SITE) {
  return ::emud::unbits<T>(::emud::dev(EMUD_OP_SHFL, {::emud::bits(v), (uint64_t)(int64_t)src, (uint64_t)(int64_t)width},
                                       "__shfl", EMUD_SITE_ARGS));
}
template <class T>
inline T __shfl_up(T v, unsigned delta, int width = warpSize, EMUD_SITE) {
  int l = (int)__lane_id(), seg = l % width;
  int s = seg >= (int)delta ? seg - (int)delta : seg;
  return ::emud::unbits<T>(::emud::dev(EMUD_OP_SHFL, {::emud::bits(v), (uint64_t)(int64_t)s, (uint64_t)(int64_t)width},
                                       "__shfl_up", EMUD_SITE_ARGS));
}
template <class T>
inline T __shfl_down(T v, unsigned delta, int width = warpSize, EMUD_SITE) {
  int l = (int)__lane_id(), seg = l % width;
  int s = seg + (int)delta < width ? seg + (int)delta : seg;
  return ::emud::unbits<T>(::emud::dev(EMUD_OP_SHFL, {::emud::bits(v), (uint64_t)(int64_t)s, (uint64_t)(int64_t)width},
                                       "__shfl_down", EMUD_SITE_ARGS));
}
template <class T>
inline T __shfl_xor(T v, int mask, int width = warpSize, EMUD_SITE) {
  int l = (int)__lane_id(), seg = l % width;
  int s = seg ^ mask;
  if (s >= width) s = seg;
  return ::emud::unbits<T>(::emud::dev(EMUD_OP_SHFL, {::emud::bits(v), (uint64_t)(int64_t)s, (uint64_t)(int64_t)width},
                                       "__shfl_xor", EMUD_SITE_ARGS));
}

inline void __threadfence(EMUD_SITE) { ::emud::dev(EMUD_OP_FENCE, {}, "__threadfence", EMUD_SITE_ARGS); }
inline void __threadfence_system(EMUD_SITE) { ::emud::dev(EMUD_OP_FENCE, {}, "__threadfence_system", EMUD_SITE_ARGS); }
inline void __threadfence_block(EMUD_SITE) { ::emud::dev(EMUD_OP_FENCE, {}, "__threadfence_block", EMUD_SITE_ARGS); }
inline long long clock64(EMUD_SITE) { return (long long)::emud::dev(EMUD_OP_CLOCK, {0}, "clock64", EMUD_SITE_ARGS); }
inline long long wall_clock64(EMUD_SITE) {
  return (long long)::emud::dev(EMUD_OP_CLOCK, {1}, "wall_clock64", EMUD_SITE_ARGS);
}
inline long long clock(EMUD_SITE) { return clock64(EMUD_SITE_ARGS); }

namespace emud {
[[noreturn]] inline void trap(const char* what, EMUD_SITE) {
  if (emud_current()) dev(EMUD_OP_TRAP, {addr(what)}, what, EMUD_SITE_ARGS);
  std::fprintf(stderr, "emud: %s:%d: %s in host code\n", __emud_file, __emud_line, what);
  std::abort();
}
}  // namespace emud
#define __builtin_trap() ::emud::trap("__builtin_trap")
// s_sleep, as the compiler sees the real builtin: a side effect that is
// not a memory barrier, so a poll loop around it is kept, and a plain
// load in it may be hoisted (such a loop never sees its flag, on a GPU
// too; emud's spin watch reports it). It takes no virtual time: an
// atomic load in the loop is what polls (capi/doc.go).
#define __builtin_amdgcn_s_sleep(n) __asm__ volatile("")

// Atomics: done natively (one lane runs at a time, and engines run only
// while lanes are parked, so a native read-modify-write is atomic), then
// reported so that waiters on the word wake.
#define EMUD_RMW(name, expr)                                                     \
  template <class T, class U>                                                    \
  inline T name(T* p, U v_, EMUD_SITE) {                                         \
    T v = (T)v_;                                                                 \
    T old = *p;                                                                  \
    *p = (expr);                                                                 \
    ::emud::note_write(p, sizeof(T), EMUD_SITE_ARGS);                            \
    return old;                                                                  \
  }
EMUD_RMW(atomicAdd, old + v)
EMUD_RMW(atomicSub, old - v)
EMUD_RMW(atomicExch, v)
EMUD_RMW(atomicMax, old > v ? old : v)
EMUD_RMW(atomicMin, old < v ? old : v)
EMUD_RMW(atomicAnd, old & v)
EMUD_RMW(atomicOr, old | v)
EMUD_RMW(atomicXor, old ^ v)
#undef EMUD_RMW
template <class T, class U, class V>
inline T atomicCAS(T* p, U cmp, V val, EMUD_SITE) {
  T old = *p;
  if (old == (T)cmp) *p = (T)val;
  ::emud::note_write(p, sizeof(T), EMUD_SITE_ARGS);
  return old;
}
inline unsigned atomicInc(unsigned* p, unsigned lim, EMUD_SITE) {
  unsigned old = *p;
  *p = old >= lim ? 0 : old + 1;
  ::emud::note_write(p, sizeof(unsigned), EMUD_SITE_ARGS);
  return old;
}

namespace emud {
template <class T>
inline T hip_atomic_load(T* p, int order, int, EMUD_SITE) {
  T v = __atomic_load_n(p, order);
  return note_load((const volatile T*)p, v, EMUD_SITE_ARGS);
}
template <class T, class U>
inline void hip_atomic_store(T* p, U v, int order, int, EMUD_SITE) {
  __atomic_store_n(p, (T)v, order);
  note_write(p, sizeof(T), EMUD_SITE_ARGS);
}
template <class T, class U>
inline T hip_atomic_fetch_add(T* p, U v, int order, int, EMUD_SITE) {
  T old = *p;
  *p = old + (T)v;
  (void)order;
  note_write(p, sizeof(T), EMUD_SITE_ARGS);
  return old;
}
template <class T, class U>
inline T hip_atomic_exchange(T* p, U v, int order, int, EMUD_SITE) {
  T old = *p;
  *p = (T)v;
  (void)order;
  note_write(p, sizeof(T), EMUD_SITE_ARGS);
  return old;
}
template <class T, class U>
inline bool hip_atomic_cas(T* p, T* expected, U v, int, int, int, EMUD_SITE) {
  bool ok = *p == *expected;
  if (ok)
    *p = (T)v;
  else
    *expected = *p;
  note_write(p, sizeof(T), EMUD_SITE_ARGS);
  return ok;
}
// GCC's __atomic builtins in lane code: the same, native then reported.
template <class T>
inline auto gcc_atomic_load_n(T* p, int order, EMUD_SITE) {
  auto v = __atomic_load_n(p, order);
  if (emud_current()) return note_load((const volatile std::remove_cv_t<std::remove_pointer_t<decltype(p)>>*)p, v, EMUD_SITE_ARGS);
  return v;
}
template <class T, class U>
inline void gcc_atomic_store_n(T* p, U v, int order, EMUD_SITE) {
  __atomic_store_n(p, v, order);
  note_write(p, sizeof(*p), EMUD_SITE_ARGS);
}
template <class T, class U>
inline auto gcc_atomic_fetch_add(T* p, U v, int order, EMUD_SITE) {
  auto old = __atomic_fetch_add(p, v, order);
  note_write(p, sizeof(*p), EMUD_SITE_ARGS);
  return old;
}
template <class T, class U>
inline auto gcc_atomic_exchange_n(T* p, U v, int order, EMUD_SITE) {
  auto old = __atomic_exchange_n(p, v, order);
  note_write(p, sizeof(*p), EMUD_SITE_ARGS);
  return old;
}
}  // namespace emud
#define __hip_atomic_load(p, order, scope) ::emud::hip_atomic_load((p), (order), (scope))
#define __hip_atomic_store(p, v, order, scope) ::emud::hip_atomic_store((p), (v), (order), (scope))
#define __hip_atomic_fetch_add(p, v, order, scope) ::emud::hip_atomic_fetch_add((p), (v), (order), (scope))
#define __hip_atomic_exchange(p, v, order, scope) ::emud::hip_atomic_exchange((p), (v), (order), (scope))
#define __hip_atomic_compare_exchange_strong(p, e, v, so, fo, scope) \
  ::emud::hip_atomic_cas((p), (e), (v), (so), (fo), (scope))
#define __atomic_load_n(p, order) ::emud::gcc_atomic_load_n((p), (order))
#define __atomic_store_n(p, v, order) ::emud::gcc_atomic_store_n((p), (v), (order))
#define __atomic_fetch_add(p, v, order) ::emud::gcc_atomic_fetch_add((p), (v), (order))
#define __atomic_exchange_n(p, v, order) ::emud::gcc_atomic_exchange_n((p), (v), (order))

// ---- host API ----

namespace emud {
// The calling host thread's last error, as HIP keeps it: every failed
// call (a launch included, which <<<>>> cannot return) sets it;
// hipGetLastError returns and clears it.
inline thread_local hipError_t last_error = hipSuccess;
inline hipError_t host(int op, uint64_t* a, const char* file, int line) {
  hipError_t e = (hipError_t)emud_host(op, a, file, line);
  if (e != hipSuccess) last_error = e;
  return e;
}
}  // namespace emud

inline const char* hipGetErrorString(hipError_t e) {
  switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorNotInitialized: return "hipErrorNotInitialized";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
    case hipErrorNotReady: return "hipErrorNotReady";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
    case hipErrorNotSupported: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
  }
}
inline const char* hipGetErrorName(hipError_t e) { return hipGetErrorString(e); }
inline hipError_t hipGetLastError() {
  hipError_t e = ::emud::last_error;
  ::emud::last_error = hipSuccess;
  return e;
}
inline hipError_t hipPeekAtLastError() { return ::emud::last_error; }
inline hipError_t hipInit(unsigned) { return hipSuccess; }

inline hipError_t hipGetDeviceCount(int* n, EMUD_SITE) {
  uint64_t a[16] = {0};
  hipError_t e = ::emud::host(EMUD_H_DEVICE_COUNT, a, __emud_file, __emud_line);
  if (n) *n = (int)a[0];
  return e;
}
inline hipError_t hipSetDevice(int d, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(int64_t)d};
  return ::emud::host(EMUD_H_SET_DEVICE, a, __emud_file, __emud_line);
}
inline hipError_t hipGetDevice(int* d, EMUD_SITE) {
  uint64_t a[16] = {0};
  hipError_t e = ::emud::host(EMUD_H_GET_DEVICE, a, __emud_file, __emud_line);
  if (d) *d = (int)a[0];
  return e;
}
inline hipError_t hipDeviceEnablePeerAccess(int, unsigned) { return hipSuccess; }  // every LSA peer is mapped
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int dev, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(int64_t)dev};
  hipError_t e = ::emud::host(EMUD_H_PROPS, a, __emud_file, __emud_line);
  if (e != hipSuccess || !p) return e;
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "AMD Instinct MI355X (emud)");
  std::snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", warpSize == 32 ? "gfx1250" : "gfx950:sramecc+:xnack-");
  p->warpSize = warpSize;
  p->totalGlobalMem = (size_t)a[1];
  p->sharedMemPerBlock = 160 << 10;
  p->maxSharedMemoryPerMultiProcessor = 160 << 10;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 1024;
  p->maxGridSize[0] = 1 << 20, p->maxGridSize[1] = 1, p->maxGridSize[2] = 1;
  p->regsPerBlock = 65536;
  p->clockRate = 2400000;
  p->major = 9, p->minor = 5;
  p->multiProcessorCount = 256;
  p->maxThreadsPerMultiProcessor = 2048;
  p->concurrentKernels = 1;
  p->pciBusID = dev;
  p->isMultiGpuBoard = 1;
  p->canMapHostMemory = 1;
  p->cooperativeLaunch = 1;
  return hipSuccess;
}
inline hipError_t hipMalloc(void** p, size_t n, EMUD_SITE) {
  uint64_t a[16] = {n};
  hipError_t e = ::emud::host(EMUD_H_MALLOC, a, __emud_file, __emud_line);
  if (p) *p = (void*)(uintptr_t)a[1];
  return e;
}
template <class T>
inline hipError_t hipMalloc(T** p, size_t n, EMUD_SITE) {
  return hipMalloc((void**)p, n, EMUD_SITE_ARGS);
}
inline hipError_t hipFree(void* p, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(p)};
  return ::emud::host(EMUD_H_FREE, a, __emud_file, __emud_line);
}
inline hipError_t hipMemcpyAsync(void* dst, const void* src, size_t n, hipMemcpyKind k, hipStream_t s = nullptr,
                                 EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(dst), ::emud::addr(src), n, (uint64_t)(uintptr_t)s, (uint64_t)k, 1};
  return ::emud::host(EMUD_H_MEMCPY, a, __emud_file, __emud_line);
}
inline hipError_t hipMemcpy(void* dst, const void* src, size_t n, hipMemcpyKind k, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(dst), ::emud::addr(src), n, 0, (uint64_t)k, 0};
  return ::emud::host(EMUD_H_MEMCPY, a, __emud_file, __emud_line);
}
inline hipError_t hipMemsetAsync(void* dst, int v, size_t n, hipStream_t s = nullptr, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(dst), (uint64_t)(uint8_t)v, n, (uint64_t)(uintptr_t)s, 0, 1};
  return ::emud::host(EMUD_H_MEMSET, a, __emud_file, __emud_line);
}
inline hipError_t hipMemset(void* dst, int v, size_t n, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(dst), (uint64_t)(uint8_t)v, n, 0, 0, 0};
  return ::emud::host(EMUD_H_MEMSET, a, __emud_file, __emud_line);
}
inline hipError_t hipStreamCreate(hipStream_t* s, EMUD_SITE) {
  uint64_t a[16] = {0};
  hipError_t e = ::emud::host(EMUD_H_STREAM_CREATE, a, __emud_file, __emud_line);
  if (s) *s = (hipStream_t)(uintptr_t)a[0];
  return e;
}
// hipStreamNonBlocking: the stream does not synchronise with the null
// stream.
inline hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned flags, EMUD_SITE) {
  uint64_t a[16] = {flags};
  hipError_t e = ::emud::host(EMUD_H_STREAM_CREATE, a, __emud_file, __emud_line);
  if (s) *s = (hipStream_t)(uintptr_t)a[0];
  return e;
}
#define hipStreamNonBlocking 1
#define hipStreamDefault 0
inline hipError_t hipStreamSynchronize(hipStream_t s, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)s};
  return ::emud::host(EMUD_H_STREAM_SYNC, a, __emud_file, __emud_line);
}
inline hipError_t hipStreamDestroy(hipStream_t s, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)s};
  return ::emud::host(EMUD_H_STREAM_DESTROY, a, __emud_file, __emud_line);
}
inline hipError_t hipDeviceSynchronize(EMUD_SITE) {
  uint64_t a[16] = {0};
  return ::emud::host(EMUD_H_DEVICE_SYNC, a, __emud_file, __emud_line);
}
inline hipError_t hipEventCreate(hipEvent_t* e, EMUD_SITE) {
  uint64_t a[16] = {0};
  hipError_t r = ::emud::host(EMUD_H_EVENT_CREATE, a, __emud_file, __emud_line);
  if (e) *e = (hipEvent_t)(uintptr_t)a[0];
  return r;
}
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t s = nullptr, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)e, (uint64_t)(uintptr_t)s};
  return ::emud::host(EMUD_H_EVENT_RECORD, a, __emud_file, __emud_line);
}
inline hipError_t hipEventSynchronize(hipEvent_t e, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)e};
  return ::emud::host(EMUD_H_EVENT_SYNC, a, __emud_file, __emud_line);
}
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)start, (uint64_t)(uintptr_t)stop};
  hipError_t r = ::emud::host(EMUD_H_EVENT_ELAPSED, a, __emud_file, __emud_line);
  if (ms) std::memcpy(ms, &a[2], sizeof(float));
  return r;
}
inline hipError_t hipEventDestroy(hipEvent_t e, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)e};
  return ::emud::host(EMUD_H_EVENT_DESTROY, a, __emud_file, __emud_line);
}

inline hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned, EMUD_SITE) { return hipEventCreate(e, EMUD_SITE_ARGS); }
#define hipEventDefault 0
#define hipEventBlockingSync 1
#define hipEventDisableTiming 2
inline hipError_t hipDeviceCanAccessPeer(int* can, int dev, int peer, EMUD_SITE) {
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n, EMUD_SITE_ARGS);
  if (can) *can = e == hipSuccess && dev >= 0 && dev < n && peer >= 0 && peer < n && dev != peer;
  return e;
}

// HIP calls emud does not emulate: calling one is a compile error naming
// it ("static assertion failed: hipMallocManaged is not supported by
// emud ..."), never a silent no-op. Calls HIP has and this header lists
// nowhere fail to compile as undeclared.
namespace emud {
template <class...>
inline constexpr bool unsupported_v = false;
}
#define EMUD_UNSUPPORTED(name)                                                                                 \
  template <class... A>                                                                                        \
  hipError_t name(A&&...) {                                                                                    \
    static_assert(::emud::unsupported_v<A...>, #name " is not supported by emud (capi/doc.go lists the HIP subset)"); \
    return hipErrorNotSupported;                                                                               \
  }
EMUD_UNSUPPORTED(hipMallocManaged)
EMUD_UNSUPPORTED(hipHostMalloc)
EMUD_UNSUPPORTED(hipHostFree)
EMUD_UNSUPPORTED(hipMallocHost)
EMUD_UNSUPPORTED(hipHostRegister)
EMUD_UNSUPPORTED(hipHostUnregister)
EMUD_UNSUPPORTED(hipHostGetDevicePointer)
EMUD_UNSUPPORTED(hipExtMallocWithFlags)
EMUD_UNSUPPORTED(hipMallocAsync)
EMUD_UNSUPPORTED(hipFreeAsync)
EMUD_UNSUPPORTED(hipMallocPitch)
EMUD_UNSUPPORTED(hipMemcpyPeer)
EMUD_UNSUPPORTED(hipMemcpyPeerAsync)
EMUD_UNSUPPORTED(hipMemcpy2D)
EMUD_UNSUPPORTED(hipMemcpy2DAsync)
EMUD_UNSUPPORTED(hipMemcpyToSymbol)
EMUD_UNSUPPORTED(hipMemcpyFromSymbol)
EMUD_UNSUPPORTED(hipGetSymbolAddress)
EMUD_UNSUPPORTED(hipMemPrefetchAsync)
EMUD_UNSUPPORTED(hipMemAdvise)
EMUD_UNSUPPORTED(hipMemGetInfo)
EMUD_UNSUPPORTED(hipStreamWaitEvent)
EMUD_UNSUPPORTED(hipStreamQuery)
EMUD_UNSUPPORTED(hipEventQuery)
EMUD_UNSUPPORTED(hipStreamAddCallback)
EMUD_UNSUPPORTED(hipLaunchHostFunc)
EMUD_UNSUPPORTED(hipStreamCreateWithPriority)
EMUD_UNSUPPORTED(hipDeviceReset)
EMUD_UNSUPPORTED(hipDeviceGetAttribute)
EMUD_UNSUPPORTED(hipDeviceSetLimit)
EMUD_UNSUPPORTED(hipFuncGetAttributes)
EMUD_UNSUPPORTED(hipFuncSetAttribute)
EMUD_UNSUPPORTED(hipLaunchCooperativeKernel)
EMUD_UNSUPPORTED(hipModuleLoad)
EMUD_UNSUPPORTED(hipModuleGetFunction)
EMUD_UNSUPPORTED(hipModuleLaunchKernel)
EMUD_UNSUPPORTED(hipIpcGetMemHandle)
EMUD_UNSUPPORTED(hipIpcOpenMemHandle)
EMUD_UNSUPPORTED(hipIpcCloseMemHandle)
EMUD_UNSUPPORTED(hipGraphCreate)
EMUD_UNSUPPORTED(hipGraphInstantiate)
EMUD_UNSUPPORTED(hipGraphLaunch)
EMUD_UNSUPPORTED(hipStreamBeginCapture)
EMUD_UNSUPPORTED(hipStreamEndCapture)
#undef EMUD_UNSUPPORTED

// ---- launches ----

namespace emud {
struct launch_cfg {
  dim3 grid, block;
  size_t shmem;
  hipStream_t stream;
};
inline launch_cfg cfg(dim3 g, dim3 b, size_t shmem = 0, hipStream_t s = nullptr) { return {g, b, shmem, s}; }

// launch runs body(args...) on every thread of the grid: each lane gets its
// own copy of the arguments, as kernel arguments are copied to each
// thread's registers.
template <class F, class... A>
hipError_t launch(launch_cfg c, const char* name, F body, A&&... args) {
  using Tup = std::tuple<std::decay_t<A>...>;
  struct Ctx {
    F body;
    Tup args;
  };
  Ctx* ctx = new Ctx{body, Tup(std::forward<A>(args)...)};
  emud_entry entry = [](void* p) {
    Ctx* x = static_cast<Ctx*>(p);
    Tup mine = x->args;
    std::apply(x->body, mine);
  };
  emud_entry fin = [](void* p) { delete static_cast<Ctx*>(p); };
  uint64_t a[16] = {c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.shmem,
                    (uint64_t)(uintptr_t)c.stream, (uint64_t)(uintptr_t)entry, (uint64_t)(uintptr_t)ctx,
                    (uint64_t)(uintptr_t)fin, addr(name), sizeof(Ctx)};
  return host(EMUD_H_LAUNCH, a, __FILE__, __LINE__);
}
}  // namespace emud

// The kernel is called through a generic lambda, so template kernels
// whose arguments are deduced launch too.
#define EMUD_KERNEL_BODY(k) [=](auto&... emud_a_) { k(emud_a_...); }
#define hipLaunchKernelGGL(k, grid, block, shmem, stream, ...) \
  ::emud::launch(::emud::cfg((grid), (block), (shmem), (stream)), #k, EMUD_KERNEL_BODY(k), ##__VA_ARGS__)

#endif
