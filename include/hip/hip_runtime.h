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
#include <cmath>
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
#include <pthread.h>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "emud/abi.h"
#include "emud-forced/emud_kernel_addr.h"

// (emud c++ predefines __HIP__ and __HIPCC__ for HIP-language sources, as
// clang's -x hip does; hipcc's users pass -D__HIP_PLATFORM_AMD__.)
#ifndef EMUD_CUDA  // a CUDA source (cuda_runtime.h) is not on the AMD platform
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#ifndef __HIP__
#define __HIP__ 1
#endif
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif
#endif
#define __EMUD__ 1
#define HIP_VERSION_MAJOR 6
#define HIP_VERSION_MINOR 4
#define HIP_VERSION_PATCH 0
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)

#define __global__
#define __device__
#define __host__
#define __constant__
#ifdef EMUD_CALL_CONTEXT
// Every source frame a stack frame: the call context (context below).
#define __forceinline__ inline
#else
#define __forceinline__ inline __attribute__((always_inline))
#endif
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
// The vector types of HIP and CUDA (uint4 loads, float2 pairs), as CUDA
// lays them out: 1-, 2- and 4-element types aligned to their size (16
// bytes at most), 3-element ones to their element. Each has its make_.
#define EMUD_VEC1(T, n, a) struct __attribute__((aligned(a))) n##1 { T x; }; \
  inline constexpr n##1 make_##n##1(T x) { return {x}; }
#define EMUD_VEC2(T, n, a) struct __attribute__((aligned(a))) n##2 { T x, y; }; \
  inline constexpr n##2 make_##n##2(T x, T y) { return {x, y}; }
#define EMUD_VEC3(T, n) struct n##3 { T x, y, z; }; \
  inline constexpr n##3 make_##n##3(T x, T y, T z) { return {x, y, z}; }
#define EMUD_VEC4(T, n, a) struct __attribute__((aligned(a))) n##4 { T x, y, z, w; }; \
  inline constexpr n##4 make_##n##4(T x, T y, T z, T w) { return {x, y, z, w}; }
#define EMUD_VEC(T, n, s) EMUD_VEC1(T, n, s) EMUD_VEC2(T, n, 2 * s) EMUD_VEC3(T, n) EMUD_VEC4(T, n, (4 * s > 16 ? 16 : 4 * s))
EMUD_VEC(signed char, char, 1)
EMUD_VEC(unsigned char, uchar, 1)
EMUD_VEC(short, short, 2)
EMUD_VEC(unsigned short, ushort, 2)
EMUD_VEC(int, int, 4)
EMUD_VEC(long, long, 8)
EMUD_VEC(unsigned long, ulong, 8)
EMUD_VEC(long long, longlong, 8)
EMUD_VEC(unsigned long long, ulonglong, 8)
EMUD_VEC(float, float, 4)
EMUD_VEC(double, double, 8)
EMUD_VEC1(unsigned, uint, 4)
EMUD_VEC2(unsigned, uint, 8)
EMUD_VEC4(unsigned, uint, 16)
inline constexpr uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
#undef EMUD_VEC
#undef EMUD_VEC1
#undef EMUD_VEC2
#undef EMUD_VEC3
#undef EMUD_VEC4

// The global min and max of HIP's and CUDA's math headers, for host and
// device code alike: each integer type with itself (and a signed with an
// unsigned of its width, as unsigned), floats as fminf/fmaxf (a NaN
// operand gives the other).
#define EMUD_MINMAX(T, U)                                                 \
  inline __host__ __device__ T min(T a, U b) { return b < a ? b : a; } \
  inline __host__ __device__ T max(T a, U b) { return a < b ? b : a; }
EMUD_MINMAX(int, int)
EMUD_MINMAX(unsigned, unsigned)
EMUD_MINMAX(long, long)
EMUD_MINMAX(unsigned long, unsigned long)
EMUD_MINMAX(long long, long long)
EMUD_MINMAX(unsigned long long, unsigned long long)
#undef EMUD_MINMAX
#define EMUD_MINMAX_MIXED(S, U)                                                                \
  inline __host__ __device__ U min(S a, U b) { return ::min((U)a, b); }                       \
  inline __host__ __device__ U min(U a, S b) { return ::min(a, (U)b); }                       \
  inline __host__ __device__ U max(S a, U b) { return ::max((U)a, b); }                       \
  inline __host__ __device__ U max(U a, S b) { return ::max(a, (U)b); }
EMUD_MINMAX_MIXED(int, unsigned)
EMUD_MINMAX_MIXED(long, unsigned long)
EMUD_MINMAX_MIXED(long long, unsigned long long)
#undef EMUD_MINMAX_MIXED
inline __host__ __device__ float min(float a, float b) { return std::fmin(a, b); }
inline __host__ __device__ float max(float a, float b) { return std::fmax(a, b); }
inline __host__ __device__ double min(double a, double b) { return std::fmin(a, b); }
inline __host__ __device__ double max(double a, double b) { return std::fmax(a, b); }
inline __host__ __device__ double min(float a, double b) { return std::fmin((double)a, b); }
inline __host__ __device__ double min(double a, float b) { return std::fmin(a, (double)b); }
inline __host__ __device__ double max(float a, double b) { return std::fmax((double)a, b); }
inline __host__ __device__ double max(double a, float b) { return std::fmax(a, (double)b); }

typedef enum hipError_t {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorMemoryAllocation = 2,
  hipErrorNotInitialized = 3,
  hipErrorInvalidMemcpyDirection = 21,
  hipErrorInvalidPitchValue = 12,
  hipErrorInvalidDevicePointer = 17,
  hipErrorInvalidDeviceFunction = 98,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidHandle = 400,
  hipErrorIllegalState = 401,
  hipErrorInvalidResourceHandle = 400,
  hipErrorNotReady = 600,
  hipErrorPeerAccessAlreadyEnabled = 704,
  hipErrorPeerAccessNotEnabled = 705,
  hipErrorLaunchFailure = 719,
  hipErrorHostMemoryAlreadyRegistered = 712,
  hipErrorHostMemoryNotRegistered = 713,
  hipErrorCooperativeLaunchTooLarge = 720,
  hipErrorNotSupported = 801,
  hipErrorStreamCaptureUnsupported = 900,
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
// The default streams by name (HIP's values): hipStreamLegacy is the
// null stream, hipStreamPerThread the calling thread's own default
// stream, which orders with the null stream but not with other threads'
// (capi/streams.go). Partial: -fgpu-default-stream=per-thread (the null
// stream meaning the per-thread one) is not emulated.
#define hipStreamLegacy ((hipStream_t)1)
#define hipStreamPerThread ((hipStream_t)2)
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

#ifdef EMUD_CALL_CONTEXT
// context records the lane's call context for its next device call: the
// return addresses of its frames, innermost first, from the frame-pointer
// chain (emud c++ adds -DEMUD_CALL_CONTEXT with -fno-omit-frame-pointer
// and no inlining, so each frame of the source is one on the stack). The
// emulator maps them to file:line and orders the wave's lanes by the
// whole chain (capi's callctx.go).
__attribute__((noinline)) inline void context(emud_lane* l) {
  const uintptr_t lo = (uintptr_t)l->stack_lo, hi = (uintptr_t)l->stack_hi;
  int n = 0;
  uintptr_t* fp = (uintptr_t*)__builtin_frame_address(0);
  while (hi != 0 && n < EMUD_CTX_FRAMES && (uintptr_t)fp >= lo && (uintptr_t)fp + 16 <= hi && ((uintptr_t)fp & 7) == 0) {
    if (fp[1] == 0) break;
    l->ctx_pc[n++] = fp[1];
    uintptr_t* next = (uintptr_t*)fp[0];
    if (next <= fp) break;  // the chain only goes up the stack
    fp = next;
  }
  l->nctx = n;
}
#endif

// yield posts the lane's call (with its call context, when built for it).
// A fence that would do nothing passes here (lane.c emud_fence_skip).
inline uint64_t yield(emud_lane* l, int op, const char* file, int line, const char* fn) {
  if (op == EMUD_OP_FENCE && emud_fence_skip(l)) return 0;
#ifdef EMUD_CALL_CONTEXT
  context(l);
#endif
  return emud_yield(l, op, file, line, fn);
}

// step is a lock-step point before a lane's atomic access, when built
// with EMUD_CALL_CONTEXT: the lane goes on only when the wave's program
// order reaches it, so a lane that skipped a branch does not read a word
// before the lanes in the branch have written it (capi/doc.go).
inline void step(const char* file, int line, const char* fn) {
#ifdef EMUD_CALL_CONTEXT
  if (emud_lane* l = emud_current()) yield(l, EMUD_OP_STEP, file, line, fn);
#else
  (void)file, (void)line, (void)fn;
#endif
}

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
  return yield(l, op, file, line, fn);
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

// Atomic load: a lane whose atomic loads repeat a cycle over up to
// EMUD_SPIN_WORDS words with unchanged values, at the same source lines
// (one word read twice in a row at one line; or A, B, A, B; …) is
// spinning: nothing else runs while it runs
// its own code, so the words cannot change. The emulator then waits for a
// write to any of them (virtual time passes, a flag that is never set is
// a reported hang). The cycle must show twice in a row, so a loop that
// walks other words between its polls is not stopped (lane.c
// emud_note_load; its volatile loads join the same ring).
template <class T>
inline T note_load(const volatile T* p, T v, const char* file, int line, const char* fn) {
  emud_lane* l = emud_current();
  if (l && emud_note_load(l, addr(p), bits(v), sizeof(T), line, 0)) {
    yield(l, EMUD_OP_SPIN, file, line, fn);
    l->nload = 0;
  }
  return v;
}
inline void note_write(const volatile void* p, size_t n, const char* file, int line, const char* fn) {
  emud_lane* l = emud_current();
  if (!l) return;
  l->a[0] = addr(p);
  l->a[1] = n;
  l->nload = 0;
  yield(l, EMUD_OP_ATOMIC, file, line, fn);
}
// A read-modify-write that left its word as it was (an add of 0, a failed
// compare-and-swap, an exchange with the same value) wrote nothing: it is
// a load of the word, so a loop of them on a word no one changes is a spin
// (a CAS lock that is never released, an atomicAdd(p, 0) poll) and waits
// for a write instead of running forever (issue 45).
template <class T>
inline T aload(T* p);  // below
template <class T>
inline void note_rmw(T* p, T old, const char* file, int line, const char* fn) {
  if (bits(aload(p)) == bits(old)) {  // aload: an atomic read, as the race detector must see it
    note_load((const volatile T*)p, old, file, line, fn);
    return;
  }
  note_write(p, sizeof(T), file, line, fn);
}

}  // namespace emud

// The built-in variables are objects, as HIP's and CUDA's are, not
// macros: a user's own variable, parameter or member named blockDim (a
// host `dim3 blockDim(16, 16)`, a launch helper's parameter, a struct's
// field, a kernel's `const int blockDim = 256`) shadows them as C++ scopes
// say, and threadIdx.x is an unsigned int (printf's varargs, min's
// deduction, auto). The emulator (capi/lane.c) gives them the running
// lane's values; in host code they are 0s and dimensions of 1.
extern const uint3 threadIdx __asm__("emud_builtin_threadIdx");
extern const uint3 blockIdx __asm__("emud_builtin_blockIdx");
extern const uint3 blockDim __asm__("emud_builtin_blockDim");
extern const uint3 gridDim __asm__("emud_builtin_gridDim");
#ifdef EMUD_CUDA
static const int warpSize = 32;  // cuda_runtime.h: NVIDIA's warps, whatever EMUD_ARCH
#define EMUD_LAUNCH_WARP 32
#else
static const int warpSize = ::emud::wave_size_env();
#define EMUD_LAUNCH_WARP 0
#endif

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
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz((unsigned)v); }
inline unsigned __brev(unsigned v) {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(v);
}
#ifndef EMUD_CUDA  // cuda_runtime.h has CUDA's 32-bit one
// The lanes of the caller's wave below it (HIP's __lanemask_lt; MORI's
// GDA helpers count active lanes with it).
inline uint64_t __lanemask_lt() { return (uint64_t(1) << __lane_id()) - 1; }
#endif

// Device math of HIP and CUDA that is not C's: the reciprocal square root
// and the fast intrinsics. Lanes are host code, so each is the exactly
// rounded host operation; hardware's fast forms are within a few ulp of
// it, so a kernel checked with a tolerance (as kernels using them are)
// passes on both.
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x), *c = std::cos(x); }
inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
inline float __int_as_float(int v) { return ::emud::unbits<float>((uint32_t)v); }
inline int __float_as_int(float v) { return (int)(uint32_t)::emud::bits(v); }
inline float __uint_as_float(unsigned v) { return ::emud::unbits<float>(v); }
inline unsigned __float_as_uint(float v) { return (uint32_t)::emud::bits(v); }
inline double __longlong_as_double(long long v) { return ::emud::unbits<double>((uint64_t)v); }
inline long long __double_as_longlong(double v) { return (long long)::emud::bits(v); }
inline int __float2int_rn(float x) { return (int)std::nearbyint(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline int __float2int_rd(float x) { return (int)std::floor(x); }
inline int __float2int_ru(float x) { return (int)std::ceil(x); }
inline unsigned __float2uint_rn(float x) { return (unsigned)std::nearbyint(x); }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline int __mul24(int a, int b) {
  auto s24 = [](int v) { return (int32_t)(((uint32_t)v & 0xffffffu) ^ 0x800000u) - 0x800000; };
  return (int)(uint32_t)((int64_t)s24(a) * s24(b));
}
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return (int)(((int64_t)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}

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

namespace emud {
// aload and aswap make a lane's read-modify-write atomic accesses as the
// race detector sees them (-fsanitize=thread instruments both as atomics):
// an atomic load, then a compare-and-swap of the new value, which cannot
// fail as one lane runs at a time. Plain reads and writes had made lanes
// of two waves adding to one counter a race report
// (examples/cxx/quiet/atomic_rmw.cpp). A load and a store's worth of
// bytes, as before, for the lane code's cost.
template <class T>
inline T aload(T* p) {
  std::remove_cv_t<T> v;
  __atomic_load(p, &v, __ATOMIC_RELAXED);
  return v;
}
template <class T, class U>
inline void aswap(T* p, U old, U nv) {
  __atomic_compare_exchange(p, &old, &nv, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}
}  // namespace emud

// Atomics: done natively (one lane runs at a time, and engines run only
// while lanes are parked, so a native read-modify-write is atomic), then
// reported so that waiters on the word wake.
#define EMUD_RMW(name, expr)                                                     \
  template <class T, class U>                                                    \
  inline T name(T* p, U v_, EMUD_SITE) {                                         \
    ::emud::step(EMUD_SITE_ARGS);                                                \
    T v = (T)v_;                                                                 \
    T old = ::emud::aload(p);                                                    \
    ::emud::aswap(p, old, (T)(expr));                                            \
    ::emud::note_rmw(p, old, EMUD_SITE_ARGS);                                    \
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
  ::emud::step(EMUD_SITE_ARGS);
  T old = ::emud::aload(p);
  if (old == (T)cmp) ::emud::aswap(p, old, (T)val);
  ::emud::note_rmw(p, old, EMUD_SITE_ARGS);
  return old;
}
inline unsigned atomicInc(unsigned* p, unsigned lim, EMUD_SITE) {
  ::emud::step(EMUD_SITE_ARGS);
  unsigned old = ::emud::aload(p);
  ::emud::aswap(p, old, old >= lim ? 0u : old + 1);
  ::emud::note_rmw(p, old, EMUD_SITE_ARGS);
  return old;
}

namespace emud {
template <class T>
inline T hip_atomic_load(T* p, int order, int, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  T v = __atomic_load_n(p, order);
  return note_load((const volatile T*)p, v, EMUD_SITE_ARGS);
}
template <class T, class U>
inline void hip_atomic_store(T* p, U v, int order, int, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  __atomic_store_n(p, (T)v, order);
  note_write(p, sizeof(T), EMUD_SITE_ARGS);
}
template <class T, class U>
inline T hip_atomic_fetch_add(T* p, U v, int order, int, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  T old = aload(p);
  aswap(p, old, (T)(old + (T)v));
  (void)order;
  note_rmw(p, old, EMUD_SITE_ARGS);
  return old;
}
// clang's other scoped read-modify-writes (MORI's GDA code takes a
// running maximum with __hip_atomic_fetch_max), as hip_atomic_fetch_add.
#define EMUD_HIP_RMW(name, expr)                                \
  template <class T, class U>                                   \
  inline T name(T* p, U v_, int order, int, EMUD_SITE) {        \
    step(EMUD_SITE_ARGS);                                       \
    T v = (T)v_;                                                \
    T old = aload(p);                                           \
    aswap(p, old, (T)(expr));                                   \
    (void)order;                                                \
    note_rmw(p, old, EMUD_SITE_ARGS);                           \
    return old;                                                 \
  }
EMUD_HIP_RMW(hip_atomic_fetch_sub, old - v)
EMUD_HIP_RMW(hip_atomic_fetch_and, old & v)
EMUD_HIP_RMW(hip_atomic_fetch_or, old | v)
EMUD_HIP_RMW(hip_atomic_fetch_xor, old ^ v)
EMUD_HIP_RMW(hip_atomic_fetch_max, old > v ? old : v)
EMUD_HIP_RMW(hip_atomic_fetch_min, old < v ? old : v)
#undef EMUD_HIP_RMW
template <class T, class U>
inline T hip_atomic_exchange(T* p, U v, int order, int, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  T old = aload(p);
  aswap(p, old, (T)v);
  (void)order;
  note_rmw(p, old, EMUD_SITE_ARGS);
  return old;
}
template <class T, class U>
inline bool hip_atomic_cas(T* p, T* expected, U v, int, int, int, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  T cur = aload(p);
  bool ok = cur == *expected;
  if (ok)
    aswap(p, cur, (T)v);
  else
    *expected = cur;
  note_rmw(p, cur, EMUD_SITE_ARGS);
  return ok;
}
// GCC's __atomic builtins in lane code: the same, native then reported.
template <class T>
inline auto gcc_atomic_load_n(T* p, int order, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  auto v = __atomic_load_n(p, order);
  if (emud_current()) return note_load((const volatile std::remove_cv_t<std::remove_pointer_t<decltype(p)>>*)p, v, EMUD_SITE_ARGS);
  return v;
}
template <class T, class U>
inline void gcc_atomic_store_n(T* p, U v, int order, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  __atomic_store_n(p, v, order);
  note_write(p, sizeof(*p), EMUD_SITE_ARGS);
}
template <class T, class U>
inline auto gcc_atomic_fetch_add(T* p, U v, int order, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  auto old = __atomic_fetch_add(p, v, order);
  note_write(p, sizeof(*p), EMUD_SITE_ARGS);
  return old;
}
template <class T, class U>
inline auto gcc_atomic_exchange_n(T* p, U v, int order, EMUD_SITE) {
  step(EMUD_SITE_ARGS);
  auto old = __atomic_exchange_n(p, v, order);
  note_write(p, sizeof(*p), EMUD_SITE_ARGS);
  return old;
}
}  // namespace emud
#define __hip_atomic_load(p, order, scope) ::emud::hip_atomic_load((p), (order), (scope))
#define __hip_atomic_store(p, v, order, scope) ::emud::hip_atomic_store((p), (v), (order), (scope))
#define __hip_atomic_fetch_add(p, v, order, scope) ::emud::hip_atomic_fetch_add((p), (v), (order), (scope))
#define __hip_atomic_exchange(p, v, order, scope) ::emud::hip_atomic_exchange((p), (v), (order), (scope))
#define __hip_atomic_fetch_sub(p, v, order, scope) ::emud::hip_atomic_fetch_sub((p), (v), (order), (scope))
#define __hip_atomic_fetch_and(p, v, order, scope) ::emud::hip_atomic_fetch_and((p), (v), (order), (scope))
#define __hip_atomic_fetch_or(p, v, order, scope) ::emud::hip_atomic_fetch_or((p), (v), (order), (scope))
#define __hip_atomic_fetch_xor(p, v, order, scope) ::emud::hip_atomic_fetch_xor((p), (v), (order), (scope))
#define __hip_atomic_fetch_max(p, v, order, scope) ::emud::hip_atomic_fetch_max((p), (v), (order), (scope))
#define __hip_atomic_fetch_min(p, v, order, scope) ::emud::hip_atomic_fetch_min((p), (v), (order), (scope))
#define __hip_atomic_compare_exchange_weak(p, e, v, so, fo, scope) \
  ::emud::hip_atomic_cas((p), (e), (v), (so), (fo), (scope))
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
    case hipErrorInvalidPitchValue: return "hipErrorInvalidPitchValue";
    case hipErrorInvalidDevicePointer: return "hipErrorInvalidDevicePointer";
    case hipErrorInvalidMemcpyDirection: return "hipErrorInvalidMemcpyDirection";
    case hipErrorInvalidDeviceFunction: return "hipErrorInvalidDeviceFunction";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
    case hipErrorNotReady: return "hipErrorNotReady";
    case hipErrorPeerAccessAlreadyEnabled: return "hipErrorPeerAccessAlreadyEnabled";
    case hipErrorPeerAccessNotEnabled: return "hipErrorPeerAccessNotEnabled";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
    case hipErrorHostMemoryAlreadyRegistered: return "hipErrorHostMemoryAlreadyRegistered";
    case hipErrorHostMemoryNotRegistered: return "hipErrorHostMemoryNotRegistered";
    case hipErrorCooperativeLaunchTooLarge: return "hipErrorCooperativeLaunchTooLarge";
    case hipErrorNotSupported: return "hipErrorNotSupported";
    case hipErrorStreamCaptureUnsupported: return "hipErrorStreamCaptureUnsupported";
    case hipErrorIllegalState: return "hipErrorIllegalState";
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
// Peer access: every GPU's memory is mapped for every other (one LSA
// space), so access works either way; the calls keep HIP's bookkeeping
// and errors (enabling twice, a device's own, an unknown peer).
namespace emud {
inline std::mutex peer_mu;
inline bool peer_on[64][64];
}  // namespace emud
inline hipError_t hipDeviceEnablePeerAccess(int peer, unsigned flags, EMUD_SITE) {
  int dev = 0, n = 0;
  hipError_t e = hipGetDevice(&dev, EMUD_SITE_ARGS);
  if (e == hipSuccess) e = hipGetDeviceCount(&n, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (flags != 0) return ::emud::last_error = hipErrorInvalidValue;
  if (peer < 0 || peer >= n || peer == dev || peer >= 64) return ::emud::last_error = hipErrorInvalidDevice;
  std::lock_guard<std::mutex> g(::emud::peer_mu);
  if (::emud::peer_on[dev][peer]) return ::emud::last_error = hipErrorPeerAccessAlreadyEnabled;
  ::emud::peer_on[dev][peer] = true;
  return hipSuccess;
}
inline hipError_t hipDeviceDisablePeerAccess(int peer, EMUD_SITE) {
  int dev = 0, n = 0;
  hipError_t e = hipGetDevice(&dev, EMUD_SITE_ARGS);
  if (e == hipSuccess) e = hipGetDeviceCount(&n, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (peer < 0 || peer >= n || peer == dev || peer >= 64) return ::emud::last_error = hipErrorInvalidDevice;
  std::lock_guard<std::mutex> g(::emud::peer_mu);
  if (!::emud::peer_on[dev][peer]) return ::emud::last_error = hipErrorPeerAccessNotEnabled;
  ::emud::peer_on[dev][peer] = false;
  return hipSuccess;
}
// The device's figures come from the emulator (capi/hipcalls.go: an
// MI355X's); the wave size and architecture name from EMUD_ARCH.
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int dev, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(int64_t)dev};
  hipError_t e = ::emud::host(EMUD_H_PROPS, a, __emud_file, __emud_line);
  if (e != hipSuccess) return e;
  if (!p) return ::emud::last_error = hipErrorInvalidValue;
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "AMD Instinct MI355X (emud)");
  std::snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", warpSize == 32 ? "gfx1250" : "gfx950:sramecc+:xnack-");
  p->warpSize = warpSize;
  p->totalGlobalMem = (size_t)a[1];
  p->multiProcessorCount = (int)a[2];
  p->clockRate = (int)a[3];
  p->l2CacheSize = (int)a[4];
  p->memoryClockRate = (int)a[5];
  p->memoryBusWidth = (int)a[6];
  p->sharedMemPerBlock = 160 << 10;
  p->maxSharedMemoryPerMultiProcessor = 160 << 10;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 1024;
  p->maxGridSize[0] = 0x7fffffff, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
  p->regsPerBlock = 65536;
  p->totalConstMem = 2147483647;
  if (warpSize == 32) {
    p->major = 12, p->minor = 5;
  } else {
    p->major = 9, p->minor = 5;
  }
  p->maxThreadsPerMultiProcessor = 2048;
  p->concurrentKernels = 1;
  p->pciBusID = dev;
  p->isMultiGpuBoard = 1;
  p->canMapHostMemory = 1;
  p->cooperativeLaunch = 1;
  p->managedMemory = 1;
  return hipSuccess;
}

// hipDeviceGetAttribute: the attributes collective code asks for, from
// hipGetDeviceProperties's figures. An attribute outside this list is an
// error (hipErrorInvalidValue) naming it by number on stderr.
typedef enum hipDeviceAttribute_t {
  hipDeviceAttributeMaxThreadsPerBlock,
  hipDeviceAttributeMaxBlockDimX,
  hipDeviceAttributeMaxBlockDimY,
  hipDeviceAttributeMaxBlockDimZ,
  hipDeviceAttributeMaxGridDimX,
  hipDeviceAttributeMaxGridDimY,
  hipDeviceAttributeMaxGridDimZ,
  hipDeviceAttributeMaxSharedMemoryPerBlock,
  hipDeviceAttributeSharedMemPerBlockOptin,
  hipDeviceAttributeTotalConstantMemory,
  hipDeviceAttributeWarpSize,
  hipDeviceAttributeMaxRegistersPerBlock,
  hipDeviceAttributeClockRate,
  hipDeviceAttributeMemoryClockRate,
  hipDeviceAttributeMemoryBusWidth,
  hipDeviceAttributeMultiprocessorCount,
  hipDeviceAttributeL2CacheSize,
  hipDeviceAttributeMaxThreadsPerMultiProcessor,
  hipDeviceAttributeComputeCapabilityMajor,
  hipDeviceAttributeComputeCapabilityMinor,
  hipDeviceAttributeConcurrentKernels,
  hipDeviceAttributePciBusId,
  hipDeviceAttributePciDeviceId,
  hipDeviceAttributePciDomainID,
  hipDeviceAttributeIsMultiGpuBoard,
  hipDeviceAttributeIntegrated,
  hipDeviceAttributeCooperativeLaunch,
  hipDeviceAttributeCanMapHostMemory,
  hipDeviceAttributeManagedMemory,
  hipDeviceAttributeMaxSharedMemoryPerMultiprocessor,
  hipDeviceAttributeWallClockRate,
  hipDeviceAttributeCanUseStreamWaitValue,
} hipDeviceAttribute_t;
inline hipError_t hipDeviceGetAttribute(int* v, hipDeviceAttribute_t attr, int dev, EMUD_SITE) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (!v) return ::emud::last_error = hipErrorInvalidValue;
  switch (attr) {
    case hipDeviceAttributeMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeMaxBlockDimX: *v = p.maxThreadsDim[0]; break;
    case hipDeviceAttributeMaxBlockDimY: *v = p.maxThreadsDim[1]; break;
    case hipDeviceAttributeMaxBlockDimZ: *v = p.maxThreadsDim[2]; break;
    case hipDeviceAttributeMaxGridDimX: *v = p.maxGridSize[0]; break;
    case hipDeviceAttributeMaxGridDimY: *v = p.maxGridSize[1]; break;
    case hipDeviceAttributeMaxGridDimZ: *v = p.maxGridSize[2]; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock:
    case hipDeviceAttributeSharedMemPerBlockOptin: *v = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeTotalConstantMemory: *v = (int)p.totalConstMem; break;
    case hipDeviceAttributeWarpSize: *v = p.warpSize; break;
    case hipDeviceAttributeMaxRegistersPerBlock: *v = p.regsPerBlock; break;
    case hipDeviceAttributeClockRate: *v = p.clockRate; break;
    case hipDeviceAttributeMemoryClockRate: *v = p.memoryClockRate; break;
    case hipDeviceAttributeMemoryBusWidth: *v = p.memoryBusWidth; break;
    case hipDeviceAttributeMultiprocessorCount: *v = p.multiProcessorCount; break;
    case hipDeviceAttributeL2CacheSize: *v = p.l2CacheSize; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case hipDeviceAttributeComputeCapabilityMajor: *v = p.major; break;
    case hipDeviceAttributeComputeCapabilityMinor: *v = p.minor; break;
    case hipDeviceAttributeConcurrentKernels: *v = p.concurrentKernels; break;
    case hipDeviceAttributePciBusId: *v = p.pciBusID; break;
    case hipDeviceAttributePciDeviceId: *v = p.pciDeviceID; break;
    case hipDeviceAttributePciDomainID: *v = p.pciDomainID; break;
    case hipDeviceAttributeIsMultiGpuBoard: *v = p.isMultiGpuBoard; break;
    case hipDeviceAttributeIntegrated: *v = p.integrated; break;
    case hipDeviceAttributeCooperativeLaunch: *v = p.cooperativeLaunch; break;
    case hipDeviceAttributeCanMapHostMemory: *v = p.canMapHostMemory; break;
    case hipDeviceAttributeManagedMemory: *v = p.managedMemory; break;
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: *v = (int)p.maxSharedMemoryPerMultiProcessor; break;
    case hipDeviceAttributeWallClockRate: *v = 100000; break;  // wall_clock64: 100 MHz (in kHz)
    case hipDeviceAttributeCanUseStreamWaitValue: *v = 1; break;
    default:
      std::fprintf(stderr, "emud: %s:%d: hipDeviceGetAttribute: attribute %d is not one emud knows (docs/hip.md)\n",
                   __emud_file, __emud_line, (int)attr);
      return ::emud::last_error = hipErrorInvalidValue;
  }
  return hipSuccess;
}
inline hipError_t hipMalloc(void** p, size_t n, EMUD_SITE) {
  uint64_t a[16] = {n, 0, ::emud::addr(p)};
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
// hipExtMallocWithFlags: emud's device memory is coherent between the
// device, its peers and the host, which is what the fine-grained and
// uncached kinds ask for; every kind is hipMalloc's memory.
#define hipDeviceMallocDefault 0x0
#define hipDeviceMallocFinegrained 0x1
#define hipMallocSignalMemory 0x2
#define hipDeviceMallocUncached 0x3
#define hipDeviceMallocContiguous 0x4
inline hipError_t hipExtMallocWithFlags(void** p, size_t n, unsigned flags, EMUD_SITE) {
  if (flags > hipDeviceMallocContiguous) {
    std::fprintf(stderr, "emud: %s:%d: hipExtMallocWithFlags: flags %#x are not HIP's\n", __emud_file, __emud_line, flags);
    return ::emud::last_error = hipErrorInvalidValue;
  }
  return hipMalloc(p, n, EMUD_SITE_ARGS);
}

// Host memory (hipHostMalloc): pinned, mapped and coherent whatever the
// flags; lanes and SDMA engines reach it at the host's address, and
// engines' copies from it take the model's host path (capi).
#define hipHostMallocDefault 0x0
#define hipHostMallocPortable 0x1
#define hipHostMallocMapped 0x2
#define hipHostMallocWriteCombined 0x4
#define hipHostMallocNumaUser 0x20000000
#define hipHostMallocCoherent 0x40000000
#define hipHostMallocNonCoherent 0x80000000
inline hipError_t hipHostMalloc(void** p, size_t n, unsigned flags = 0, EMUD_SITE) {
  uint64_t a[16] = {n, flags};
  hipError_t e = ::emud::host(EMUD_H_HOST_MALLOC, a, __emud_file, __emud_line);
  if (p) *p = e == hipSuccess ? (void*)(uintptr_t)a[2] : nullptr;
  return e;
}
template <class T>
inline hipError_t hipHostMalloc(T** p, size_t n, unsigned flags = 0, EMUD_SITE) {
  return hipHostMalloc((void**)p, n, flags, EMUD_SITE_ARGS);
}
inline hipError_t hipMallocHost(void** p, size_t n, EMUD_SITE) { return hipHostMalloc(p, n, 0, EMUD_SITE_ARGS); }
inline hipError_t hipHostFree(void* p, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(p)};
  return ::emud::host(EMUD_H_HOST_FREE, a, __emud_file, __emud_line);
}
inline hipError_t hipFreeHost(void* p, EMUD_SITE) { return hipHostFree(p, EMUD_SITE_ARGS); }
inline hipError_t hipHostGetDevicePointer(void** d, void* h, unsigned flags, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(h), 0};
  if (!d || flags != 0) return ::emud::last_error = hipErrorInvalidValue;
  if (emud_host_registered(::emud::addr(h), nullptr, nullptr, nullptr)) {  // hipHostRegister's: the same address
    *d = h;
    return hipSuccess;
  }
  hipError_t e = ::emud::host(EMUD_H_HOST_DEVPTR, a, __emud_file, __emud_line);
  *d = e == hipSuccess ? (void*)(uintptr_t)a[1] : nullptr;
  return e;
}

// hipMemGetInfo: total is the device's memory (288 GB on an MI355X);
// free is what emud can still allocate on the current device, whose
// emulated slice holds 64 GiB.
inline hipError_t hipMemGetInfo(size_t* free_, size_t* total, EMUD_SITE) {
  uint64_t a[16] = {0};
  hipError_t e = ::emud::host(EMUD_H_MEM_INFO, a, __emud_file, __emud_line);
  if (e != hipSuccess) return e;
  if (free_) *free_ = (size_t)a[0];
  if (total) *total = (size_t)a[1];
  return hipSuccess;
}

typedef enum hipMemoryType {
  hipMemoryTypeUnregistered = 0,
  hipMemoryTypeHost = 1,
  hipMemoryTypeDevice = 2,
  hipMemoryTypeManaged = 3,
  hipMemoryTypeArray = 10,
  hipMemoryTypeUnified = 11,
} hipMemoryType;
typedef struct hipPointerAttribute_t {
  hipMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
  int isManaged;
  unsigned allocationFlags;
} hipPointerAttribute_t;
// hipPointerGetAttributes: device memory (hipMalloc, ccoMemAlloc) names
// its GPU; hipHostMalloc memory is host memory mapped for the device; any
// other pointer is unregistered (HIP 6's answer, with hipSuccess).
inline hipError_t hipPointerGetAttributes(hipPointerAttribute_t* at, const void* p, EMUD_SITE) {
  if (!at) return ::emud::last_error = hipErrorInvalidValue;
  uint64_t a[16] = {::emud::addr(p)};
  hipError_t e = ::emud::host(EMUD_H_POINTER_ATTR, a, __emud_file, __emud_line);
  if (e != hipSuccess) return e;
  if (a[1] == 0 && emud_host_registered(::emud::addr(p), nullptr, nullptr, nullptr)) a[1] = 1;  // hipHostRegister's
  std::memset(at, 0, sizeof *at);
  at->type = (hipMemoryType)a[1];
  at->device = (int)a[2];
  if (a[1] != 0) at->devicePointer = const_cast<void*>(p);
  if (a[1] == 1) at->hostPointer = const_cast<void*>(p);
  return hipSuccess;
}

// Stream capture and graphs: between hipStreamBeginCapture and
// hipStreamEndCapture a stream's kernel launches, async copies and
// memsets are recorded in the graph, not run (a kernel's arguments as
// they were at the launch, a copy's pointers to be read when the graph
// runs); hipGraphLaunch runs an instantiated graph's work on a stream, in
// the order it was captured, as that stream's own work. A stream that
// waits for an event recorded in a capture joins it (a fork), and its
// work goes into the same graph; the origin's hipStreamEndCapture ends
// them all. Partial: a graph runs its work in the order it was captured,
// on one stream, so branches a capture forked are ordered one after the
// other (a race between them is not seen); host functions, stream memory
// operations and stream-ordered allocation on a capturing stream are
// hipErrorStreamCaptureUnsupported, naming the call; graphs built node by
// node (hipGraphAddKernelNode ...) are not declared.
struct ihipGraph {
  std::vector<std::function<hipError_t(hipStream_t)>> ops;
  hipStream_t origin = nullptr;  // the stream whose hipStreamBeginCapture made it
};
struct hipGraphExec {
  std::vector<std::function<hipError_t(hipStream_t)>> ops;
};
namespace emud {
struct capture_table {
  std::mutex mu;
  std::vector<std::pair<hipStream_t, ihipGraph*>> on;       // capturing streams: the origin and those joined
  std::vector<std::pair<hipEvent_t, ihipGraph*>> recorded;  // events recorded on a capturing stream
};
inline capture_table& captures() {
  static capture_table t;
  return t;
}
// capturing counts the captures open: a plain word, read without the
// lock on every async call (host threads run one at a time under emud),
// so a program that never captures takes no lock for it.
inline int capturing = 0;
inline ihipGraph* capture_of(hipStream_t s) {
  if (!capturing || !s || s == hipStreamLegacy) return nullptr;
  capture_table& t = captures();
  std::lock_guard<std::mutex> g(t.mu);
  for (auto& p : t.on)
    if (p.first == s) return p.second;
  return nullptr;
}
// capture_refused: what a capturing stream cannot take in emud.
inline hipError_t capture_refused(hipStream_t s, const char* call, const char* file, int line) {
  if (!capture_of(s)) return hipSuccess;
  if (!std::strcmp(call, "hipStreamSynchronize"))
    std::fprintf(stderr, "emud: %s:%d: hipStreamSynchronize on a stream being captured: its work is in the graph, "
                         "not running (HIP and CUDA refuse this too)\n", file, line);
  else
    std::fprintf(stderr, "emud: %s:%d: %s on a stream being captured is not emulated (partial: captures hold kernels, "
                         "async copies and memsets; docs/hip.md)\n", file, line, call);
  return last_error = hipErrorStreamCaptureUnsupported;
}
}  // namespace emud

inline hipError_t hipMemcpyAsync(void* dst, const void* src, size_t n, hipMemcpyKind k, hipStream_t s = nullptr,
                                 EMUD_SITE) {
  if (ihipGraph* g = ::emud::capture_of(s)) {
    g->ops.push_back([=](hipStream_t on) { return hipMemcpyAsync(dst, src, n, k, on, __emud_file, __emud_line, __emud_fn); });
    return hipSuccess;
  }
  uint64_t a[16] = {::emud::addr(dst), ::emud::addr(src), n, (uint64_t)(uintptr_t)s, (uint64_t)k, 1};
  return ::emud::host(EMUD_H_MEMCPY, a, __emud_file, __emud_line);
}
inline hipError_t hipMemcpy(void* dst, const void* src, size_t n, hipMemcpyKind k, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(dst), ::emud::addr(src), n, 0, (uint64_t)k, 0};
  return ::emud::host(EMUD_H_MEMCPY, a, __emud_file, __emud_line);
}
inline hipError_t hipMemsetAsync(void* dst, int v, size_t n, hipStream_t s = nullptr, EMUD_SITE) {
  if (ihipGraph* g = ::emud::capture_of(s)) {
    g->ops.push_back([=](hipStream_t on) { return hipMemsetAsync(dst, v, n, on, __emud_file, __emud_line, __emud_fn); });
    return hipSuccess;
  }
  uint64_t a[16] = {::emud::addr(dst), (uint64_t)(uint8_t)v, n, (uint64_t)(uintptr_t)s, 0, 1};
  return ::emud::host(EMUD_H_MEMSET, a, __emud_file, __emud_line);
}
inline hipError_t hipMemset(void* dst, int v, size_t n, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(dst), (uint64_t)(uint8_t)v, n, 0, 0, 0};
  return ::emud::host(EMUD_H_MEMSET, a, __emud_file, __emud_line);
}
// hipMemsetD8/D16/D32: count elements of the value's width; the async
// forms land over virtual time on their stream as hipMemsetAsync does.
typedef void* hipDeviceptr_t;
namespace emud {
inline hipError_t memset_d(void* dst, uint64_t v, size_t count, size_t width, hipStream_t s, bool async, const char* file,
                           int line) {
  if (ihipGraph* g = async ? capture_of(s) : nullptr) {
    g->ops.push_back([=](hipStream_t on) { return memset_d(dst, v, count, width, on, true, file, line); });
    return hipSuccess;
  }
  uint64_t a[16] = {addr(dst), v, count * width, (uint64_t)(uintptr_t)s, 0, async ? 1u : 0u, width};
  return host(EMUD_H_MEMSET, a, file, line);
}
}  // namespace emud
inline hipError_t hipMemsetD8(hipDeviceptr_t d, unsigned char v, size_t n, EMUD_SITE) {
  return ::emud::memset_d(d, v, n, 1, nullptr, false, __emud_file, __emud_line);
}
inline hipError_t hipMemsetD16(hipDeviceptr_t d, unsigned short v, size_t n, EMUD_SITE) {
  return ::emud::memset_d(d, v, n, 2, nullptr, false, __emud_file, __emud_line);
}
inline hipError_t hipMemsetD32(hipDeviceptr_t d, int v, size_t n, EMUD_SITE) {
  return ::emud::memset_d(d, (uint32_t)v, n, 4, nullptr, false, __emud_file, __emud_line);
}
inline hipError_t hipMemsetD8Async(hipDeviceptr_t d, unsigned char v, size_t n, hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::memset_d(d, v, n, 1, s, true, __emud_file, __emud_line);
}
inline hipError_t hipMemsetD16Async(hipDeviceptr_t d, unsigned short v, size_t n, hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::memset_d(d, v, n, 2, s, true, __emud_file, __emud_line);
}
inline hipError_t hipMemsetD32Async(hipDeviceptr_t d, int v, size_t n, hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::memset_d(d, (uint32_t)v, n, 4, s, true, __emud_file, __emud_line);
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
  if (hipError_t e = ::emud::capture_refused(s, "hipStreamSynchronize", __emud_file, __emud_line)) return e;
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
  if (ihipGraph* g = ::emud::capture_of(s)) {
    // Captured: the event names the capture, so that a stream that waits
    // for it joins the capture (a fork); nothing is recorded on the GPU.
    ::emud::capture_table& t = ::emud::captures();
    std::lock_guard<std::mutex> lk(t.mu);
    for (auto& p : t.recorded)
      if (p.first == e) {
        p.second = g;
        return hipSuccess;
      }
    t.recorded.push_back({e, g});
    return hipSuccess;
  }
  uint64_t a[16] = {(uint64_t)(uintptr_t)e, (uint64_t)(uintptr_t)s};
  return ::emud::host(EMUD_H_EVENT_RECORD, a, __emud_file, __emud_line);
}
inline hipError_t hipEventSynchronize(hipEvent_t e, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)e};
  return ::emud::host(EMUD_H_EVENT_SYNC, a, __emud_file, __emud_line);
}
// hipEventElapsedTime: hipErrorNotReady while either event's work runs.
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)start, (uint64_t)(uintptr_t)stop};
  hipError_t r = (hipError_t)emud_host(EMUD_H_EVENT_ELAPSED, a, __emud_file, __emud_line);
  if (r != hipSuccess && r != hipErrorNotReady) ::emud::last_error = r;
  if (ms && r == hipSuccess) std::memcpy(ms, &a[2], sizeof(float));
  return r;
}
inline hipError_t hipEventDestroy(hipEvent_t e, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)e};
  return ::emud::host(EMUD_H_EVENT_DESTROY, a, __emud_file, __emud_line);
}

inline hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned, EMUD_SITE) { return hipEventCreate(e, EMUD_SITE_ARGS); }
// hipEventRecord queues a marker after the stream's work so far and
// returns at once; the event completes when that work does (capi
// calls.go). hipEventQuery is hipSuccess then (ordering the caller after
// the work) and hipErrorNotReady before, after a microsecond of virtual
// time, so a loop of queries lets the work advance; hipStreamWaitEvent
// makes the stream's later work follow the marker.
inline hipError_t hipEventQuery(hipEvent_t e, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)e};
  hipError_t r = (hipError_t)emud_host(EMUD_H_EVENT_QUERY, a, __emud_file, __emud_line);
  if (r != hipSuccess && r != hipErrorNotReady) ::emud::last_error = r;  // not ready is no error
  return r;
}
inline hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags = 0, EMUD_SITE) {
  if (flags != 0) return ::emud::last_error = hipErrorInvalidValue;
  if (::emud::capturing) {
    // An event recorded in a capture: the waiting stream joins that
    // capture (or already captures into it: a join, nothing to do).
    ::emud::capture_table& t = ::emud::captures();
    std::lock_guard<std::mutex> lk(t.mu);
    ihipGraph* g = nullptr;
    for (auto& p : t.recorded)
      if (p.first == e) g = p.second;
    ihipGraph* mine = nullptr;
    for (auto& p : t.on)
      if (p.first == s) mine = p.second;
    if (g && mine && g != mine) {
      std::fprintf(stderr, "emud: %s:%d: hipStreamWaitEvent: the event was recorded in another stream capture "
                           "(partial: captures do not join one another)\n", __emud_file, __emud_line);
      return ::emud::last_error = hipErrorStreamCaptureUnsupported;
    }
    if (g) {
      if (!mine) {
        if (!s || s == hipStreamLegacy) {
          std::fprintf(stderr, "emud: %s:%d: hipStreamWaitEvent: the null stream cannot join a capture\n", __emud_file,
                       __emud_line);
          return ::emud::last_error = hipErrorStreamCaptureUnsupported;
        }
        t.on.push_back({s, g});
        ::emud::capturing++;
      }
      return hipSuccess;
    }
    if (mine) {
      std::fprintf(stderr, "emud: %s:%d: hipStreamWaitEvent on a stream being captured, for an event recorded outside "
                           "the capture, is not emulated (partial; docs/hip.md)\n", __emud_file, __emud_line);
      return ::emud::last_error = hipErrorStreamCaptureUnsupported;
    }
  }
  uint64_t a[16] = {(uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)e};
  return ::emud::host(EMUD_H_STREAM_WAIT_EVENT, a, __emud_file, __emud_line);
}
#define hipEventDefault 0
#define hipEventBlockingSync 1
#define hipEventDisableTiming 2
inline hipError_t hipDeviceCanAccessPeer(int* can, int dev, int peer, EMUD_SITE) {
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n, EMUD_SITE_ARGS);
  if (can) *can = e == hipSuccess && dev >= 0 && dev < n && peer >= 0 && peer < n && dev != peer;
  return e;
}

// HIP calls emud does not emulate: calling one is one compile error,
// "static assertion failed: NAME is not supported by emud (docs/hip.md
// lists the HIP calls emud emulates)", at the call, never a silent no-op.
// The types and constants these calls take are declared, so a call's own
// message is the error rather than an undeclared argument's. A HIP call
// in neither this list nor docs/hip.md's is undeclared (the compiler's
// own "was not declared" error).
namespace emud {
template <class...>
inline constexpr bool unsupported_v = false;
}
#define EMUD_UNSUPPORTED(name)                                                                                 \
  template <class... A>                                                                                        \
  hipError_t name(A&&...) {                                                                                    \
    static_assert(::emud::unsupported_v<A...>, #name " is not supported by emud (docs/hip.md lists the HIP calls emud emulates)"); \
    return hipErrorNotSupported;                                                                               \
  }
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
typedef struct ihipGraph* hipGraph_t;
typedef struct hipGraphExec* hipGraphExec_t;
typedef struct ihipMemPoolHandle_t* hipMemPool_t;
typedef struct ihipCtx_t* hipCtx_t;
typedef int hipDevice_t;
typedef struct hipIpcMemHandle_st { char reserved[64]; } hipIpcMemHandle_t;
typedef struct hipIpcEventHandle_st { char reserved[64]; } hipIpcEventHandle_t;
typedef struct hipFuncAttributes {
  int binaryVersion;
  int cacheModeCA;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxDynamicSharedSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int preferredShmemCarveout;
  int ptxVersion;
  size_t sharedSizeBytes;
} hipFuncAttributes;
typedef enum hipSharedMemConfig {
  hipSharedMemBankSizeDefault,
  hipSharedMemBankSizeFourByte,
  hipSharedMemBankSizeEightByte
} hipSharedMemConfig;
typedef void (*hipHostFn_t)(void*);
typedef enum hipMemoryAdvise { hipMemAdviseSetReadMostly = 1, hipMemAdviseUnsetReadMostly, hipMemAdviseSetPreferredLocation,
  hipMemAdviseUnsetPreferredLocation, hipMemAdviseSetAccessedBy, hipMemAdviseUnsetAccessedBy, hipMemAdviseSetCoarseGrain = 100,
  hipMemAdviseUnsetCoarseGrain } hipMemoryAdvise;
typedef enum hipLimit_t { hipLimitStackSize = 0, hipLimitPrintfFifoSize = 1, hipLimitMallocHeapSize = 2 } hipLimit_t;
typedef enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8, hipFuncAttributePreferredSharedMemoryCarveout = 9 } hipFuncAttribute;
typedef enum hipFuncCache_t { hipFuncCachePreferNone, hipFuncCachePreferShared, hipFuncCachePreferL1, hipFuncCachePreferEqual } hipFuncCache_t;
typedef enum hipStreamCaptureMode { hipStreamCaptureModeGlobal = 0, hipStreamCaptureModeThreadLocal, hipStreamCaptureModeRelaxed } hipStreamCaptureMode;
#define hipHostRegisterDefault 0x0
#define hipHostRegisterPortable 0x1
#define hipHostRegisterMapped 0x2
#define hipIpcMemLazyEnablePeerAccess 0x1
#define hipMemAttachGlobal 0x1
#define hipMemAttachHost 0x2
#define hipDeviceScheduleAuto 0x0
#define hipDeviceScheduleSpin 0x1
#define hipDeviceScheduleYield 0x2
#define hipDeviceScheduleBlockingSync 0x4
#define hipDeviceMapHost 0x8
#define hipStreamWaitValueGte 0x0
#define hipStreamWaitValueEq 0x1
#define hipStreamWaitValueAnd 0x2
#define hipStreamWaitValueNor 0x3

// ---- Copies by kind and between devices, streams' queries, device
// queries and settings (emulated; docs/hip.md) ----

// hipMemcpyPeer and the driver-style copies are hipMemcpy's, of the kind
// their name says (every GPU's memory is mapped for every other: the
// copy's engine path follows the two addresses, not the device numbers,
// which must name devices of the node).
namespace emud {
inline hipError_t peer_devices(int a, int b, const char* file, int line) {
  uint64_t q[16] = {0};
  hipError_t e = host(EMUD_H_DEVICE_COUNT, q, file, line);
  if (e != hipSuccess) return e;
  if (a < 0 || b < 0 || (uint64_t)a >= q[0] || (uint64_t)b >= q[0]) return last_error = hipErrorInvalidDevice;
  return hipSuccess;
}
}  // namespace emud
inline hipError_t hipMemcpyPeer(void* dst, int dstDev, const void* src, int srcDev, size_t n, EMUD_SITE) {
  hipError_t e = ::emud::peer_devices(dstDev, srcDev, __emud_file, __emud_line);
  return e != hipSuccess ? e : hipMemcpy(dst, src, n, hipMemcpyDeviceToDevice, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpyPeerAsync(void* dst, int dstDev, const void* src, int srcDev, size_t n, hipStream_t s = nullptr,
                                     EMUD_SITE) {
  hipError_t e = ::emud::peer_devices(dstDev, srcDev, __emud_file, __emud_line);
  return e != hipSuccess ? e : hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToDevice, s, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, const void* src, size_t n, EMUD_SITE) {
  return hipMemcpy(dst, src, n, hipMemcpyHostToDevice, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t n, EMUD_SITE) {
  return hipMemcpy(dst, src, n, hipMemcpyDeviceToHost, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, EMUD_SITE) {
  return hipMemcpy(dst, src, n, hipMemcpyDeviceToDevice, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, const void* src, size_t n, hipStream_t s, EMUD_SITE) {
  return hipMemcpyAsync(dst, src, n, hipMemcpyHostToDevice, s, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t n, hipStream_t s, EMUD_SITE) {
  return hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToHost, s, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t s, EMUD_SITE) {
  return hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToDevice, s, EMUD_SITE_ARGS);
}
// hipMemcpyWithStream: the copy on the stream, returning once it is done.
inline hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t n, hipMemcpyKind k, hipStream_t s, EMUD_SITE) {
  hipError_t e = hipMemcpyAsync(dst, src, n, k, s, EMUD_SITE_ARGS);
  return e != hipSuccess ? e : hipStreamSynchronize(s, EMUD_SITE_ARGS);
}

// hipStreamQuery: hipSuccess once the stream's work is done (its effects
// ordered before the caller, for the race detector, as a synchronize's);
// else hipErrorNotReady after a microsecond of virtual time, so that a
// loop of queries lets the work it waits for advance (capi streams.go).
inline hipError_t hipStreamQuery(hipStream_t s, EMUD_SITE) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)s, 0};
  hipError_t e = (hipError_t)emud_host(EMUD_H_STREAM_QUERY, a, __emud_file, __emud_line);
  if (e != hipSuccess && e != hipErrorNotReady) ::emud::last_error = e;  // not ready is no error
  return e;
}
inline hipError_t hipStreamGetFlags(hipStream_t s, unsigned* flags, EMUD_SITE) {
  if (!flags) return ::emud::last_error = hipErrorInvalidValue;
  uint64_t a[16] = {(uint64_t)(uintptr_t)s, 1};
  hipError_t e = ::emud::host(EMUD_H_STREAM_QUERY, a, __emud_file, __emud_line);
  if (e == hipSuccess) *flags = (unsigned)a[2];
  return e;
}
// Stream priorities: the range is [0, 0], as a device without priorities
// reports it, so every stream has priority 0 and a requested one is
// clamped to it (HIP's rule for a priority outside the range).
inline hipError_t hipDeviceGetStreamPriorityRange(int* least, int* greatest, EMUD_SITE) {
  if (least) *least = 0;
  if (greatest) *greatest = 0;
  return hipSuccess;
}
inline hipError_t hipStreamCreateWithPriority(hipStream_t* s, unsigned flags, int priority, EMUD_SITE) {
  (void)priority;
  return hipStreamCreateWithFlags(s, flags, EMUD_SITE_ARGS);
}
inline hipError_t hipStreamGetPriority(hipStream_t s, int* priority, EMUD_SITE) {
  unsigned flags = 0;
  hipError_t e = hipStreamGetFlags(s, &flags, EMUD_SITE_ARGS);  // the stream must be one
  if (e == hipSuccess && priority) *priority = 0;
  return e != hipSuccess ? e : priority ? hipSuccess : (::emud::last_error = hipErrorInvalidValue);
}

// hipDeviceReset: the current device's work finishes, then its hipMalloc
// blocks are freed, its streams destroyed and its peer access disabled
// (a later use of them is HIP's error); events and the other devices'
// state stay (capi calls.go).
inline hipError_t hipDeviceReset(EMUD_SITE) {
  uint64_t a[16] = {0};
  hipError_t e = ::emud::host(EMUD_H_DEVICE_RESET, a, __emud_file, __emud_line);
  if (e == hipSuccess && a[0] < 64) {
    std::lock_guard<std::mutex> g(::emud::peer_mu);
    for (int p = 0; p < 64; p++) ::emud::peer_on[a[0]][p] = false;
  }
  return e;
}

// Device queries: hipGetDeviceProperties's figures.
namespace emud {
// copy_cstr copies as much of src as fits in dst's len bytes, ended by a
// NUL (not snprintf: -Wformat-truncation under the user's -Werror).
inline void copy_cstr(char* dst, int len, const char* src) {
  int i = 0;
  for (; i < len - 1 && src[i]; i++) dst[i] = src[i];
  dst[i] = '\0';
}
}  // namespace emud
inline hipError_t hipDeviceGet(hipDevice_t* d, int ordinal, EMUD_SITE) {
  uint64_t a[16] = {0};
  hipError_t e = ::emud::host(EMUD_H_DEVICE_COUNT, a, __emud_file, __emud_line);
  if (e != hipSuccess) return e;
  if (!d) return ::emud::last_error = hipErrorInvalidValue;
  if (ordinal < 0 || (uint64_t)ordinal >= a[0]) return ::emud::last_error = hipErrorInvalidDevice;
  *d = ordinal;
  return hipSuccess;
}
inline hipError_t hipDeviceGetName(char* name, int len, hipDevice_t dev, EMUD_SITE) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (!name || len <= 0) return ::emud::last_error = hipErrorInvalidValue;
  ::emud::copy_cstr(name, len, p.name);
  return hipSuccess;
}
inline hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t dev, EMUD_SITE) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (!bytes) return ::emud::last_error = hipErrorInvalidValue;
  *bytes = p.totalGlobalMem;
  return hipSuccess;
}
inline hipError_t hipDeviceComputeCapability(int* major, int* minor, hipDevice_t dev, EMUD_SITE) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (!major || !minor) return ::emud::last_error = hipErrorInvalidValue;
  *major = p.major, *minor = p.minor;
  return hipSuccess;
}
// hipDeviceGetPCIBusId: domain:bus:device.function, the bus the device's
// number (hipGetDeviceProperties's pciBusID).
inline hipError_t hipDeviceGetPCIBusId(char* id, int len, int dev, EMUD_SITE) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (!id || len <= 0) return ::emud::last_error = hipErrorInvalidValue;
  char full[32];
  std::snprintf(full, sizeof full, "%04x:%02x:%02x.0", p.pciDomainID & 0xffff, p.pciBusID & 0xff, p.pciDeviceID & 0xff);
  ::emud::copy_cstr(id, len, full);
  return hipSuccess;
}
// The HIP version this header stands for (HIP_VERSION), as both the
// runtime's and the driver's.
inline hipError_t hipRuntimeGetVersion(int* v, EMUD_SITE) {
  if (!v) return ::emud::last_error = hipErrorInvalidValue;
  *v = HIP_VERSION;
  return hipSuccess;
}
inline hipError_t hipDriverGetVersion(int* v, EMUD_SITE) { return hipRuntimeGetVersion(v, EMUD_SITE_ARGS); }

// Settings. Cache and shared-memory-bank configurations are hints that
// HIP itself takes and ignores on AMD GPUs: they succeed and read back
// hipFuncCachePreferNone. Device flags (scheduling, hipDeviceMapHost) are
// kept per device and read back; they change nothing emud does. Limits:
// a lane's stack is emud's, 256 KiB, so hipLimitStackSize reads back at
// least that and a larger one is hipErrorInvalidValue; the printf FIFO
// and malloc heap sizes are kept and read back (device printf and malloc
// run on the host's).
namespace emud {
inline std::mutex settings_mu;
inline unsigned device_flags[64];
inline size_t limits[3] = {256 << 10, 4 << 20, 8 << 20};
inline int current_device(const char* file, int line) {
  uint64_t a[16] = {0};
  return host(EMUD_H_GET_DEVICE, a, file, line) == hipSuccess ? (int)a[0] : -1;
}
}  // namespace emud
inline hipError_t hipDeviceSetCacheConfig(hipFuncCache_t c, EMUD_SITE) {
  return (unsigned)c <= hipFuncCachePreferEqual ? hipSuccess : (::emud::last_error = hipErrorInvalidValue);
}
inline hipError_t hipDeviceGetCacheConfig(hipFuncCache_t* c, EMUD_SITE) {
  if (!c) return ::emud::last_error = hipErrorInvalidValue;
  *c = hipFuncCachePreferNone;
  return hipSuccess;
}
inline hipError_t hipFuncSetCacheConfig(const void* f, hipFuncCache_t c, EMUD_SITE) {
  if (!f || (unsigned)c > hipFuncCachePreferEqual) return ::emud::last_error = hipErrorInvalidValue;
  return hipSuccess;
}
template <class F>
inline hipError_t hipFuncSetCacheConfig(F* f, hipFuncCache_t c, EMUD_SITE) {
  return hipFuncSetCacheConfig((const void*)(f), c, EMUD_SITE_ARGS);
}
inline hipError_t hipDeviceSetSharedMemConfig(hipSharedMemConfig c, EMUD_SITE) {
  return (unsigned)c <= hipSharedMemBankSizeEightByte ? hipSuccess : (::emud::last_error = hipErrorInvalidValue);
}
inline hipError_t hipSetDeviceFlags(unsigned flags, EMUD_SITE) {
  const int dev = ::emud::current_device(__emud_file, __emud_line);
  if (dev < 0 || dev >= 64) return ::emud::last_error = hipErrorInvalidDevice;
  if (flags & ~(unsigned)(hipDeviceScheduleSpin | hipDeviceScheduleYield | hipDeviceScheduleBlockingSync | hipDeviceMapHost))
    return ::emud::last_error = hipErrorInvalidValue;
  std::lock_guard<std::mutex> g(::emud::settings_mu);
  ::emud::device_flags[dev] = flags;
  return hipSuccess;
}
inline hipError_t hipGetDeviceFlags(unsigned* flags, EMUD_SITE) {
  const int dev = ::emud::current_device(__emud_file, __emud_line);
  if (dev < 0 || dev >= 64) return ::emud::last_error = hipErrorInvalidDevice;
  if (!flags) return ::emud::last_error = hipErrorInvalidValue;
  std::lock_guard<std::mutex> g(::emud::settings_mu);
  *flags = ::emud::device_flags[dev];
  return hipSuccess;
}
inline hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value, EMUD_SITE) {
  if ((unsigned)limit > hipLimitMallocHeapSize) return ::emud::last_error = hipErrorInvalidValue;
  if (limit == hipLimitStackSize && value > (256 << 10)) {
    std::fprintf(stderr, "emud: %s:%d: hipDeviceSetLimit(hipLimitStackSize, %zu): a lane's stack is emud's 256 KiB\n",
                 __emud_file, __emud_line, value);
    return ::emud::last_error = hipErrorInvalidValue;
  }
  std::lock_guard<std::mutex> g(::emud::settings_mu);
  if (limit != hipLimitStackSize) ::emud::limits[limit] = value;  // the stack reads back its 256 KiB
  return hipSuccess;
}
inline hipError_t hipDeviceGetLimit(size_t* value, hipLimit_t limit, EMUD_SITE) {
  if (!value || (unsigned)limit > hipLimitMallocHeapSize) return ::emud::last_error = hipErrorInvalidValue;
  std::lock_guard<std::mutex> g(::emud::settings_mu);
  *value = ::emud::limits[limit];
  return hipSuccess;
}

// Kernels' attributes and occupancy, by emud's model of a CU (capi
// resident.go): 32 waves and 160 KiB of dynamic shared memory a CU, up to
// 1024 threads a block; registers and static __shared__ are not counted
// (partial: numRegs and sharedSizeBytes read 0).
inline hipError_t hipFuncGetAttributes(hipFuncAttributes* at, const void* f, EMUD_SITE) {
  if (!at) return ::emud::last_error = hipErrorInvalidValue;
  if (!f) return ::emud::last_error = hipErrorInvalidDeviceFunction;
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, 0, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  std::memset(at, 0, sizeof *at);
  at->binaryVersion = at->ptxVersion = p.major * 10 + p.minor;
  at->maxDynamicSharedSizeBytes = 160 << 10;
  at->maxThreadsPerBlock = 1024;
  return hipSuccess;
}
template <class F>
inline hipError_t hipFuncGetAttributes(hipFuncAttributes* at, F* f, EMUD_SITE) {
  return hipFuncGetAttributes(at, (const void*)(f), EMUD_SITE_ARGS);
}
inline hipError_t hipFuncSetAttribute(const void* f, hipFuncAttribute attr, int value, EMUD_SITE) {
  if (!f) return ::emud::last_error = hipErrorInvalidDeviceFunction;
  switch (attr) {
    case hipFuncAttributeMaxDynamicSharedMemorySize:
      return value >= 0 && value <= (160 << 10) ? hipSuccess : (::emud::last_error = hipErrorInvalidValue);
    case hipFuncAttributePreferredSharedMemoryCarveout:
      return value >= -1 && value <= 100 ? hipSuccess : (::emud::last_error = hipErrorInvalidValue);
  }
  return ::emud::last_error = hipErrorInvalidValue;
}
template <class F>
inline hipError_t hipFuncSetAttribute(F* f, hipFuncAttribute attr, int value, EMUD_SITE) {
  return hipFuncSetAttribute((const void*)(f), attr, value, EMUD_SITE_ARGS);
}
namespace emud {
// blocks_per_cu is how many blocks of block threads and dyn bytes of
// dynamic shared memory a CU holds at once (resident.go's bound).
inline int blocks_per_cu(int block, size_t dyn, int wave) {
  const int waves = (block + wave - 1) / wave;
  int n = 32 / waves;
  if (dyn > 0 && (size_t)n > (size_t)(160 << 10) / dyn) n = (int)((size_t)(160 << 10) / dyn);
  return n;
}
}  // namespace emud
inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* f, int block, size_t dyn, EMUD_SITE) {
  if (!n || block <= 0 || block > 1024) return ::emud::last_error = hipErrorInvalidValue;
  if (!f) return ::emud::last_error = hipErrorInvalidDeviceFunction;
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, 0, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  *n = ::emud::blocks_per_cu(block, dyn, p.warpSize);
  return hipSuccess;
}
template <class F>
inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F* f, int block, size_t dyn, EMUD_SITE) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void*)(f), block, dyn, EMUD_SITE_ARGS);
}
// hipOccupancyMaxPotentialBlockSize: the block size (a whole number of
// waves, at most limit when limit > 0) that keeps the most threads of a CU
// busy, the larger on a tie; the grid fills every CU with it.
inline hipError_t hipOccupancyMaxPotentialBlockSize(int* grid, int* block, const void* f, size_t dyn = 0, int limit = 0,
                                                    EMUD_SITE) {
  if (!grid || !block || limit < 0) return ::emud::last_error = hipErrorInvalidValue;
  if (!f) return ::emud::last_error = hipErrorInvalidDeviceFunction;
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, 0, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  const int top = limit > 0 && limit < 1024 ? limit : 1024;
  int best = 0, bestThreads = 0;
  for (int b = p.warpSize; b <= top; b += p.warpSize) {
    const int threads = ::emud::blocks_per_cu(b, dyn, p.warpSize) * b;
    if (threads >= bestThreads && threads > 0) best = b, bestThreads = threads;
  }
  if (best == 0) return ::emud::last_error = hipErrorInvalidValue;  // dyn past a CU's shared memory
  *block = best;
  *grid = ::emud::blocks_per_cu(best, dyn, p.warpSize) * p.multiProcessorCount;
  return hipSuccess;
}
template <class F>
inline hipError_t hipOccupancyMaxPotentialBlockSize(int* grid, int* block, F* f, size_t dyn = 0, int limit = 0, EMUD_SITE) {
  return hipOccupancyMaxPotentialBlockSize(grid, block, (const void*)(f), dyn, limit, EMUD_SITE_ARGS);
}

// Interprocess memory handles (capi/ipc.go). A handle names a device
// allocation (hipMalloc's or ccoMemAlloc's) and the offset of the pointer
// it was made from; every rank of the node, thread or process, maps
// device memory at the same addresses, so opening it returns that
// address (HIP's: the allocation's base plus the offset). It is checked
// when opened: a handle emud did not make, or whose allocation was freed
// since, is hipErrorInvalidHandle naming why. A pointer opened is closed
// once per open.
namespace emud {
inline hipError_t ipc_open(void** p, const hipIpcMemHandle_t& hd, unsigned flags, int base_only, const char* file,
                           int line) {
  if (!p) return last_error = hipErrorInvalidValue;
  uint64_t a[16] = {2};
  std::memcpy(&a[1], hd.reserved, sizeof hd.reserved);
  a[9] = flags;
  a[10] = (uint64_t)base_only;
  hipError_t e = host(EMUD_H_IPC, a, file, line);
  if (e == hipSuccess) *p = (void*)(uintptr_t)a[11];
  return e;
}
}  // namespace emud
inline hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* hd, void* p, EMUD_SITE) {
  if (!hd || !p) return ::emud::last_error = hipErrorInvalidValue;
  uint64_t a[16] = {1, ::emud::addr(p)};
  hipError_t e = ::emud::host(EMUD_H_IPC, a, __emud_file, __emud_line);
  if (e == hipSuccess) std::memcpy(hd->reserved, &a[2], sizeof hd->reserved);
  return e;
}
inline hipError_t hipIpcOpenMemHandle(void** p, hipIpcMemHandle_t hd, unsigned flags, EMUD_SITE) {
  return ::emud::ipc_open(p, hd, flags, 0, __emud_file, __emud_line);
}
inline hipError_t hipIpcCloseMemHandle(void* p, EMUD_SITE) {
  if (!p) return ::emud::last_error = hipErrorInvalidValue;
  uint64_t a[16] = {3, ::emud::addr(p)};
  return ::emud::host(EMUD_H_IPC, a, __emud_file, __emud_line);
}

// Stream memory operations (capi/streammem.go): a word written or
// waited for in the stream's order; the mask applies as HIP says.
inline hipError_t hipStreamWriteValue32(hipStream_t s, void* p, uint32_t v, unsigned flags, EMUD_SITE) {
  if (hipError_t e = ::emud::capture_refused(s, "hipStreamWriteValue32", __emud_file, __emud_line)) return e;
  uint64_t a[16] = {1, (uint64_t)(uintptr_t)s, ::emud::addr(p), v, 4, flags, 0};
  return ::emud::host(EMUD_H_STREAM_MEMOP, a, __emud_file, __emud_line);
}
inline hipError_t hipStreamWriteValue64(hipStream_t s, void* p, uint64_t v, unsigned flags, EMUD_SITE) {
  if (hipError_t e = ::emud::capture_refused(s, "hipStreamWriteValue64", __emud_file, __emud_line)) return e;
  uint64_t a[16] = {1, (uint64_t)(uintptr_t)s, ::emud::addr(p), v, 8, flags, 0};
  return ::emud::host(EMUD_H_STREAM_MEMOP, a, __emud_file, __emud_line);
}
inline hipError_t hipStreamWaitValue32(hipStream_t s, void* p, uint32_t v, unsigned flags, uint32_t mask = 0xFFFFFFFFu,
                                       EMUD_SITE) {
  if (hipError_t e = ::emud::capture_refused(s, "hipStreamWaitValue32", __emud_file, __emud_line)) return e;
  uint64_t a[16] = {2, (uint64_t)(uintptr_t)s, ::emud::addr(p), v, 4, flags, mask};
  return ::emud::host(EMUD_H_STREAM_MEMOP, a, __emud_file, __emud_line);
}
inline hipError_t hipStreamWaitValue64(hipStream_t s, void* p, uint64_t v, unsigned flags,
                                       uint64_t mask = 0xFFFFFFFFFFFFFFFFull, EMUD_SITE) {
  if (hipError_t e = ::emud::capture_refused(s, "hipStreamWaitValue64", __emud_file, __emud_line)) return e;
  uint64_t a[16] = {2, (uint64_t)(uintptr_t)s, ::emud::addr(p), v, 8, flags, mask};
  return ::emud::host(EMUD_H_STREAM_MEMOP, a, __emud_file, __emud_line);
}

// hipMallocManaged: device memory of the current GPU, which the host
// reaches at the same address (emud's device memory is the process's);
// the flags must be hipMemAttachGlobal or hipMemAttachHost. Partial: no
// pages migrate, and the host's plain accesses to it are not seen by the
// race detector (as of any device memory).
inline hipError_t hipMallocManaged(void** p, size_t n, unsigned flags = hipMemAttachGlobal, EMUD_SITE) {
  uint64_t a[16] = {n, 0, ::emud::addr(p), 1, 0, flags};
  hipError_t e = ::emud::host(EMUD_H_MALLOC, a, __emud_file, __emud_line);
  if (p) *p = (void*)(uintptr_t)a[1];
  return e;
}
template <class T>
inline hipError_t hipMallocManaged(T** p, size_t n, unsigned flags = hipMemAttachGlobal, EMUD_SITE) {
  return hipMallocManaged((void**)p, n, flags, EMUD_SITE_ARGS);
}
// hipMallocAsync: allocated at once (for use by the stream's later work);
// hipFreeAsync: the block goes back once the stream's work queued before
// the free is done, and a later allocation that takes it is ordered after
// that work.
inline hipError_t hipMallocAsync(void** p, size_t n, hipStream_t s, EMUD_SITE) {
  if (hipError_t e = ::emud::capture_refused(s, "hipMallocAsync", __emud_file, __emud_line)) return e;
  uint64_t a[16] = {n, 0, ::emud::addr(p), 2, (uint64_t)(uintptr_t)s};
  hipError_t e = ::emud::host(EMUD_H_MALLOC, a, __emud_file, __emud_line);
  if (p) *p = (void*)(uintptr_t)a[1];
  return e;
}
template <class T>
inline hipError_t hipMallocAsync(T** p, size_t n, hipStream_t s, EMUD_SITE) {
  return hipMallocAsync((void**)p, n, s, EMUD_SITE_ARGS);
}
inline hipError_t hipFreeAsync(void* p, hipStream_t s, EMUD_SITE) {
  if (hipError_t e = ::emud::capture_refused(s, "hipFreeAsync", __emud_file, __emud_line)) return e;
  uint64_t a[16] = {::emud::addr(p), 1, (uint64_t)(uintptr_t)s};
  return ::emud::host(EMUD_H_FREE, a, __emud_file, __emud_line);
}
// hipHostAlloc is hipHostMalloc (hipHostAllocMapped and the others are
// its flags' values); hipHostGetFlags reads back the flags it was given.
#define hipHostAllocDefault 0x0
#define hipHostAllocPortable 0x1
#define hipHostAllocMapped 0x2
#define hipHostAllocWriteCombined 0x4
inline hipError_t hipHostAlloc(void** p, size_t n, unsigned flags, EMUD_SITE) {
  return hipHostMalloc(p, n, flags, EMUD_SITE_ARGS);
}
template <class T>
inline hipError_t hipHostAlloc(T** p, size_t n, unsigned flags, EMUD_SITE) {
  return hipHostMalloc((void**)p, n, flags, EMUD_SITE_ARGS);
}
inline hipError_t hipHostGetFlags(unsigned* flags, void* p, EMUD_SITE) {
  if (!flags) return ::emud::last_error = hipErrorInvalidValue;
  if (emud_host_registered(::emud::addr(p), nullptr, nullptr, flags)) return hipSuccess;
  uint64_t a[16] = {::emud::addr(p)};
  hipError_t e = ::emud::host(EMUD_H_POINTER_ATTR, a, __emud_file, __emud_line);
  if (e != hipSuccess) return e;
  if (a[1] != 1) {
    std::fprintf(stderr, "emud: %s:%d: hipHostGetFlags: %p is not in memory hipHostMalloc returned\n", __emud_file,
                 __emud_line, p);
    return ::emud::last_error = hipErrorInvalidValue;
  }
  *flags = (unsigned)a[5];
  return hipSuccess;
}
// hipMemGetAddressRange, hipMemPtrGetInfo: the allocation (hipMalloc's,
// ccoMemAlloc's, hipHostMalloc's) holding the pointer.
inline hipError_t hipMemGetAddressRange(hipDeviceptr_t* base, size_t* size, hipDeviceptr_t p, EMUD_SITE) {
  uint64_t a[16] = {::emud::addr(p)};
  uint64_t rb = 0, rn = 0;
  if (emud_host_registered(a[0], &rb, &rn, nullptr)) {
    if (base) *base = (hipDeviceptr_t)(uintptr_t)rb;
    if (size) *size = (size_t)rn;
    return hipSuccess;
  }
  hipError_t e = ::emud::host(EMUD_H_POINTER_ATTR, a, __emud_file, __emud_line);
  if (e != hipSuccess) return e;
  if (a[1] == 0) {
    std::fprintf(stderr, "emud: %s:%d: hipMemGetAddressRange: %p is in no allocation HIP made\n", __emud_file,
                 __emud_line, p);
    return ::emud::last_error = hipErrorInvalidDevicePointer;
  }
  if (base) *base = (hipDeviceptr_t)(uintptr_t)a[3];
  if (size) *size = (size_t)a[4];
  return hipSuccess;
}
inline hipError_t hipMemPtrGetInfo(void* p, size_t* size, EMUD_SITE) {
  if (!size) return ::emud::last_error = hipErrorInvalidValue;
  return hipMemGetAddressRange(nullptr, size, p, EMUD_SITE_ARGS);
}
// hipChooseDevice: every GPU of the node is alike, so device 0 matches
// any properties as well as another.
inline hipError_t hipChooseDevice(int* dev, const hipDeviceProp_t* prop, EMUD_SITE) {
  if (!dev || !prop) return ::emud::last_error = hipErrorInvalidValue;
  *dev = 0;
  return hipSuccess;
}
// hipDeviceGetByPCIBusId: the device whose bus (hipDeviceGetPCIBusId's
// "domain:bus:device.function", or "bus:device.function") the id names.
inline hipError_t hipDeviceGetByPCIBusId(int* dev, const char* id, EMUD_SITE) {
  unsigned dom = 0, bus = 0, d = 0, fn = 0;
  char extra = 0;
  if (!dev || !id ||
      (std::sscanf(id, "%x:%x:%x.%x%c", &dom, &bus, &d, &fn, &extra) != 4 &&
       std::sscanf(id, "%x:%x.%x%c", &bus, &d, &fn, &extra) != 3)) {
    std::fprintf(stderr, "emud: %s:%d: hipDeviceGetByPCIBusId: \"%s\" is not a PCI id (domain:bus:device.function)\n",
                 __emud_file, __emud_line, id ? id : "(null)");
    return ::emud::last_error = hipErrorInvalidValue;
  }
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  for (int g = 0; g < n; g++) {
    hipDeviceProp_t p;
    if ((e = hipGetDeviceProperties(&p, g, EMUD_SITE_ARGS)) != hipSuccess) return e;
    if ((unsigned)p.pciBusID == bus && (unsigned)p.pciDomainID == dom && (unsigned)p.pciDeviceID == d && fn == 0) {
      *dev = g;
      return hipSuccess;
    }
  }
  std::fprintf(stderr, "emud: %s:%d: hipDeviceGetByPCIBusId: no GPU of the node is at %s\n", __emud_file, __emud_line, id);
  return ::emud::last_error = hipErrorInvalidDevice;
}
// hipDeviceGetP2PAttribute: every pair of GPUs is linked directly (the
// node's fabric), with peer access and native atomics; rank 0.
typedef enum hipDeviceP2PAttr {
  hipDevP2PAttrPerformanceRank = 0,
  hipDevP2PAttrAccessSupported,
  hipDevP2PAttrNativeAtomicSupported,
  hipDevP2PAttrHipArrayAccessSupported
} hipDeviceP2PAttr;
inline hipError_t hipDeviceGetP2PAttribute(int* v, hipDeviceP2PAttr attr, int src, int dst, EMUD_SITE) {
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n, EMUD_SITE_ARGS);
  if (e != hipSuccess) return e;
  if (!v) return ::emud::last_error = hipErrorInvalidValue;
  if (src < 0 || dst < 0 || src >= n || dst >= n || src == dst) return ::emud::last_error = hipErrorInvalidDevice;
  switch (attr) {
    case hipDevP2PAttrPerformanceRank: *v = 0; break;
    case hipDevP2PAttrAccessSupported:
    case hipDevP2PAttrNativeAtomicSupported: *v = 1; break;
    case hipDevP2PAttrHipArrayAccessSupported: *v = 0; break;  // no arrays in emud
    default: return ::emud::last_error = hipErrorInvalidValue;
  }
  return hipSuccess;
}

// Symbols (capi/symbols.go): a __device__ or __constant__ variable is
// one object of the program, which every lane of every GPU reads at its
// host address. The copies first wait for the current device's work (the
// async forms for their stream's, before they return: partial), then
// copy in this process; hipGetSymbolAddress is the variable's address and
// hipGetSymbolSize its size. The symbol is the variable itself (or
// HIP_SYMBOL(variable)). Partial: the GPUs share the one copy, so a
// symbol that host threads of different GPUs fill with different bytes is
// refused (hipErrorInvalidValue, naming both GPUs); the same bytes pass.
#define HIP_SYMBOL(X) X
namespace emud {
inline uint64_t fnv1a(const void* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 0x100000001b3ull;
  return h;
}
// symbol_copy: what 1 copies other to the symbol's [off, off+n), 2 the
// other way.
inline hipError_t symbol_copy(int what, const void* sym, size_t size, void* other, size_t n, size_t off,
                              hipMemcpyKind kind, hipStream_t s, int async, const char* file, int line) {
  const char* call = what == 1 ? "hipMemcpyToSymbol" : "hipMemcpyFromSymbol";
  if (!other && n) return last_error = hipErrorInvalidValue;
  if (off > size || n > size - off) {
    std::fprintf(stderr, "emud: %s:%d: %s: %zu bytes at offset %zu of a %zu-byte symbol\n", file, line, call, n, off,
                 size);
    return last_error = hipErrorInvalidValue;
  }
  unsigned char* at = const_cast<unsigned char*>(static_cast<const unsigned char*>(sym)) + off;
  uint64_t a[16] = {(uint64_t)what, addr(at), n, (uint64_t)kind, (uint64_t)(uintptr_t)s, (uint64_t)async,
                    what == 1 ? fnv1a(other, n) : 0};
  hipError_t e = host(EMUD_H_SYMBOL, a, file, line);
  if (e != hipSuccess) return e;
  if (n == 0) return hipSuccess;
  if (what == 1)
    std::memmove(at, other, n);
  else
    std::memmove(other, at, n);
  return hipSuccess;
}
}  // namespace emud
template <class T>
inline hipError_t hipMemcpyToSymbol(const T& sym, const void* src, size_t n, size_t off = 0,
                                    hipMemcpyKind kind = hipMemcpyHostToDevice, EMUD_SITE) {
  return ::emud::symbol_copy(1, &sym, sizeof(T), const_cast<void*>(src), n, off, kind, nullptr, 0, __emud_file,
                             __emud_line);
}
template <class T>
inline hipError_t hipMemcpyFromSymbol(void* dst, const T& sym, size_t n, size_t off = 0,
                                      hipMemcpyKind kind = hipMemcpyDeviceToHost, EMUD_SITE) {
  return ::emud::symbol_copy(2, &sym, sizeof(T), dst, n, off, kind, nullptr, 0, __emud_file, __emud_line);
}
template <class T>
inline hipError_t hipMemcpyToSymbolAsync(const T& sym, const void* src, size_t n, size_t off, hipMemcpyKind kind,
                                         hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::symbol_copy(1, &sym, sizeof(T), const_cast<void*>(src), n, off, kind, s, 1, __emud_file,
                             __emud_line);
}
template <class T>
inline hipError_t hipMemcpyFromSymbolAsync(void* dst, const T& sym, size_t n, size_t off, hipMemcpyKind kind,
                                           hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::symbol_copy(2, &sym, sizeof(T), dst, n, off, kind, s, 1, __emud_file, __emud_line);
}
template <class T>
inline hipError_t hipGetSymbolAddress(void** p, const T& sym, EMUD_SITE) {
  if (!p) return ::emud::last_error = hipErrorInvalidValue;
  *p = const_cast<void*>(static_cast<const void*>(&sym));
  return hipSuccess;
}
template <class T>
inline hipError_t hipGetSymbolSize(size_t* n, const T&, EMUD_SITE) {
  if (!n) return ::emud::last_error = hipErrorInvalidValue;
  *n = sizeof(T);
  return hipSuccess;
}

// Pitched memory and 2D copies: hipMallocPitch rounds each row up to 256
// bytes; a 2D copy or memset is one copy or memset a row (one in all when
// the rows are contiguous), each as hipMemcpy or hipMemcpyAsync does it,
// in order on the stream. A width past either pitch is
// hipErrorInvalidPitchValue.
namespace emud {
constexpr size_t pitch_align = 256;
inline hipError_t pitch_check(size_t width, size_t p1, size_t p2, const char* call, const char* file, int line) {
  if (width > p1 || width > p2) {
    std::fprintf(stderr, "emud: %s:%d: %s: a row of %zu bytes is wider than a pitch (%zu, %zu)\n", file, line, call, width,
                 p1, p2);
    return last_error = hipErrorInvalidPitchValue;
  }
  return hipSuccess;
}
inline hipError_t memcpy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            hipMemcpyKind k, hipStream_t s, int async, const char* file, int line, const char* fn) {
  hipError_t e = pitch_check(width, dpitch, spitch, async ? "hipMemcpy2DAsync" : "hipMemcpy2D", file, line);
  if (e != hipSuccess || width == 0 || height == 0) return e;
  if (dpitch == width && spitch == width)  // contiguous rows: one copy
    return async ? hipMemcpyAsync(dst, src, width * height, k, s, file, line, fn) : hipMemcpy(dst, src, width * height, k, file, line, fn);
  for (size_t r = 0; r < height; r++) {
    void* d = static_cast<char*>(dst) + r * dpitch;
    const void* q = static_cast<const char*>(src) + r * spitch;
    e = async ? hipMemcpyAsync(d, q, width, k, s, file, line, fn) : hipMemcpy(d, q, width, k, file, line, fn);
    if (e != hipSuccess) return e;
  }
  return hipSuccess;
}
inline hipError_t memset_2d(void* dst, size_t pitch, int v, size_t width, size_t height, hipStream_t s, int async,
                            const char* file, int line, const char* fn) {
  hipError_t e = pitch_check(width, pitch, pitch, async ? "hipMemset2DAsync" : "hipMemset2D", file, line);
  if (e != hipSuccess || width == 0 || height == 0) return e;
  if (pitch == width)
    return async ? hipMemsetAsync(dst, v, width * height, s, file, line, fn) : hipMemset(dst, v, width * height, file, line, fn);
  for (size_t r = 0; r < height; r++) {
    void* d = static_cast<char*>(dst) + r * pitch;
    e = async ? hipMemsetAsync(d, v, width, s, file, line, fn) : hipMemset(d, v, width, file, line, fn);
    if (e != hipSuccess) return e;
  }
  return hipSuccess;
}
}  // namespace emud
inline hipError_t hipMallocPitch(void** p, size_t* pitch, size_t width, size_t height, EMUD_SITE) {
  if (!p || !pitch) return ::emud::last_error = hipErrorInvalidValue;
  *pitch = (width + ::emud::pitch_align - 1) / ::emud::pitch_align * ::emud::pitch_align;
  return hipMalloc(p, *pitch * height, EMUD_SITE_ARGS);
}
template <class T>
inline hipError_t hipMallocPitch(T** p, size_t* pitch, size_t width, size_t height, EMUD_SITE) {
  return hipMallocPitch((void**)p, pitch, width, height, EMUD_SITE_ARGS);
}
inline hipError_t hipMemAllocPitch(hipDeviceptr_t* p, size_t* pitch, size_t width, size_t height, unsigned, EMUD_SITE) {
  return hipMallocPitch((void**)p, pitch, width, height, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              hipMemcpyKind k, EMUD_SITE) {
  return ::emud::memcpy_2d(dst, dpitch, src, spitch, width, height, k, nullptr, 0, EMUD_SITE_ARGS);
}
inline hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, hipMemcpyKind k, hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::memcpy_2d(dst, dpitch, src, spitch, width, height, k, s, 1, EMUD_SITE_ARGS);
}
inline hipError_t hipMemset2D(void* dst, size_t pitch, int v, size_t width, size_t height, EMUD_SITE) {
  return ::emud::memset_2d(dst, pitch, v, width, height, nullptr, 0, EMUD_SITE_ARGS);
}
inline hipError_t hipMemset2DAsync(void* dst, size_t pitch, int v, size_t width, size_t height, hipStream_t s = nullptr,
                                   EMUD_SITE) {
  return ::emud::memset_2d(dst, pitch, v, width, height, s, 1, EMUD_SITE_ARGS);
}

EMUD_UNSUPPORTED(hipMallocFromPoolAsync)
EMUD_UNSUPPORTED(hipMemPoolCreate)
EMUD_UNSUPPORTED(hipMemPoolDestroy)
EMUD_UNSUPPORTED(hipDeviceGetDefaultMemPool)
EMUD_UNSUPPORTED(hipMalloc3D)
EMUD_UNSUPPORTED(hipMallocArray)
EMUD_UNSUPPORTED(hipFreeArray)
// hipHostRegister: the range becomes memory the device reaches at the
// host's address (hipHostGetDevicePointer gives it back), so lanes may
// load and store it (lane.c: else a lane's access to host memory fails
// it); hipMemcpy and hipMemcpyAsync treat it as they treat any host
// memory. Partial: the race detector does not see lanes' accesses to it,
// and an SDMA engine cannot copy from it (a window must be device
// memory). Overlapping an earlier registration is
// hipErrorHostMemoryAlreadyRegistered; unregistering a pointer that did
// not start one is hipErrorHostMemoryNotRegistered.
#define hipHostRegisterIoMemory 0x4
#define hipHostRegisterReadOnly 0x8
inline hipError_t hipHostRegister(void* p, size_t n, unsigned flags, EMUD_SITE) {
  if (!p || n == 0 || (flags & ~0xfu)) {
    std::fprintf(stderr, "emud: %s:%d: hipHostRegister(%p, %zu, %#x): a pointer, a size and hipHostRegister flags\n",
                 __emud_file, __emud_line, p, n, flags);
    return ::emud::last_error = hipErrorInvalidValue;
  }
  switch (emud_host_register(::emud::addr(p), n, flags)) {
    case 0: return hipSuccess;
    case 2:
      std::fprintf(stderr, "emud: %s:%d: hipHostRegister: [%p, +%zu) overlaps memory registered already\n", __emud_file,
                   __emud_line, p, n);
      return ::emud::last_error = hipErrorHostMemoryAlreadyRegistered;
    default:
      std::fprintf(stderr, "emud: %s:%d: hipHostRegister: more than 256 ranges registered at once (emud's table)\n",
                   __emud_file, __emud_line);
      return ::emud::last_error = hipErrorOutOfMemory;
  }
}
inline hipError_t hipHostUnregister(void* p, EMUD_SITE) {
  if (emud_host_unregister(::emud::addr(p)) == 0) return hipSuccess;
  std::fprintf(stderr, "emud: %s:%d: hipHostUnregister: %p does not start memory hipHostRegister registered\n",
               __emud_file, __emud_line, p);
  return ::emud::last_error = hipErrorHostMemoryNotRegistered;
}
// Host functions on a stream (capi/hostfunc.go): each runs on a thread
// of its own (a host thread, as a std::thread is) once the stream's
// earlier work is done, and the stream's later work waits for it to
// return. hipStreamAddCallback's callback gets the stream and the status
// of the work before it; its flags must be 0.
typedef void (*hipStreamCallback_t)(hipStream_t, hipError_t, void*);
namespace emud {
struct host_fn_job {
  hipHostFn_t fn;
  hipStreamCallback_t cb;
  hipStream_t stream;
  void* data;
  uint64_t token;
};
inline void* host_fn_thread(void* p) {
  host_fn_job* j = static_cast<host_fn_job*>(p);
  uint64_t a[16] = {2, j->token};
  hipError_t status = (hipError_t)emud_host(EMUD_H_HOST_FUNC, a, "hipLaunchHostFunc", 0);
  if (j->cb)
    j->cb(j->stream, status, j->data);
  else
    j->fn(j->data);
  delete j;
  return nullptr;
}
inline hipError_t host_fn(hipStream_t s, hipHostFn_t fn, hipStreamCallback_t cb, void* data, const char* file,
                          int line) {
  if (hipError_t e = capture_refused(s, fn ? "hipLaunchHostFunc" : "hipStreamAddCallback", file, line)) return e;
  uint64_t a[16] = {1, (uint64_t)(uintptr_t)s};
  hipError_t e = host(EMUD_H_HOST_FUNC, a, file, line);
  if (e != hipSuccess) return e;
  host_fn_job* j = new host_fn_job{fn, cb, s, data, a[2]};
  pthread_t t;
  if (int rc = pthread_create(&t, nullptr, host_fn_thread, j)) {
    std::fprintf(stderr, "emud: %s:%d: cannot start the thread of a host function: %s\n", file, line, std::strerror(rc));
    delete j;
    return last_error = hipErrorOutOfMemory;
  }
  pthread_detach(t);
  return hipSuccess;
}
}  // namespace emud
inline hipError_t hipLaunchHostFunc(hipStream_t s, hipHostFn_t fn, void* data, EMUD_SITE) {
  if (!fn) return ::emud::last_error = hipErrorInvalidValue;
  return ::emud::host_fn(s, fn, nullptr, data, __emud_file, __emud_line);
}
inline hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t cb, void* data, unsigned flags, EMUD_SITE) {
  if (!cb || flags != 0) return ::emud::last_error = hipErrorInvalidValue;
  return ::emud::host_fn(s, nullptr, cb, data, __emud_file, __emud_line);
}
// Stream capture and graphs (see hipMemcpyAsync above for what a
// capture holds).
typedef enum hipStreamCaptureStatus {
  hipStreamCaptureStatusNone = 0,
  hipStreamCaptureStatusActive,
  hipStreamCaptureStatusInvalidated
} hipStreamCaptureStatus;
typedef struct hipGraphNode* hipGraphNode_t;
inline hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode mode, EMUD_SITE) {
  (void)mode;  // every mode captures the same here: one stream a capture
  if (!s || s == hipStreamLegacy) {
    std::fprintf(stderr, "emud: %s:%d: hipStreamBeginCapture: the null stream cannot be captured\n", __emud_file,
                 __emud_line);
    return ::emud::last_error = hipErrorStreamCaptureUnsupported;
  }
  ::emud::capture_table& t = ::emud::captures();
  std::lock_guard<std::mutex> lk(t.mu);
  for (auto& p : t.on)
    if (p.first == s) return ::emud::last_error = hipErrorIllegalState;
  ihipGraph* g = new ihipGraph;
  g->origin = s;
  t.on.push_back({s, g});
  ::emud::capturing++;
  return hipSuccess;
}
inline hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* graph, EMUD_SITE) {
  if (!graph) return ::emud::last_error = hipErrorInvalidValue;
  ::emud::capture_table& t = ::emud::captures();
  std::lock_guard<std::mutex> lk(t.mu);
  ihipGraph* g = nullptr;
  for (auto& p : t.on)
    if (p.first == s) g = p.second;
  if (!g || g->origin != s) {
    std::fprintf(stderr, "emud: %s:%d: hipStreamEndCapture: %s\n", __emud_file, __emud_line,
                 g ? "the stream joined a capture another stream began: that stream ends it"
                   : "the stream is not being captured");
    return ::emud::last_error = hipErrorIllegalState;
  }
  // The streams that joined end with it (partial: HIP requires them to
  // have joined back into the origin first, which emud does not check).
  for (size_t i = t.on.size(); i-- > 0;)
    if (t.on[i].second == g) {
      t.on.erase(t.on.begin() + (long)i);
      ::emud::capturing--;
    }
  for (size_t i = t.recorded.size(); i-- > 0;)
    if (t.recorded[i].second == g) t.recorded.erase(t.recorded.begin() + (long)i);
  *graph = g;
  return hipSuccess;
}
inline hipError_t hipStreamIsCapturing(hipStream_t s, hipStreamCaptureStatus* st, EMUD_SITE) {
  if (!st) return ::emud::last_error = hipErrorInvalidValue;
  *st = ::emud::capture_of(s) ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
  return hipSuccess;
}
inline hipError_t hipGraphCreate(hipGraph_t* graph, unsigned flags, EMUD_SITE) {
  if (!graph || flags != 0) return ::emud::last_error = hipErrorInvalidValue;
  *graph = new ihipGraph;
  return hipSuccess;
}
inline hipError_t hipGraphDestroy(hipGraph_t graph, EMUD_SITE) {
  if (!graph) return ::emud::last_error = hipErrorInvalidValue;
  delete graph;
  return hipSuccess;
}
inline hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph, hipGraphNode_t* errNode = nullptr,
                                      char* log = nullptr, size_t logSize = 0, EMUD_SITE) {
  if (!exec || !graph) return ::emud::last_error = hipErrorInvalidValue;
  if (errNode) *errNode = nullptr;
  if (log && logSize) log[0] = 0;
  *exec = new hipGraphExec{graph->ops};
  return hipSuccess;
}
inline hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags,
                                               EMUD_SITE) {
  if (flags != 0) return ::emud::last_error = hipErrorInvalidValue;
  return hipGraphInstantiate(exec, graph, nullptr, nullptr, 0, EMUD_SITE_ARGS);
}
inline hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s, EMUD_SITE) {
  if (!exec) return ::emud::last_error = hipErrorInvalidValue;
  for (auto& op : exec->ops)
    if (hipError_t e = op(s)) return e;
  return hipSuccess;
}
inline hipError_t hipGraphExecDestroy(hipGraphExec_t exec, EMUD_SITE) {
  if (!exec) return ::emud::last_error = hipErrorInvalidValue;
  delete exec;
  return hipSuccess;
}

EMUD_UNSUPPORTED(hipMemcpy3D)
EMUD_UNSUPPORTED(hipMemcpy3DAsync)
EMUD_UNSUPPORTED(hipMemset3D)
EMUD_UNSUPPORTED(hipMemsetD32Async2D)
EMUD_UNSUPPORTED(hipMemPrefetchAsync)
EMUD_UNSUPPORTED(hipMemAdvise)
EMUD_UNSUPPORTED(hipMemRangeGetAttribute)
EMUD_UNSUPPORTED(hipMemCreate)
EMUD_UNSUPPORTED(hipMemRelease)
EMUD_UNSUPPORTED(hipMemMap)
EMUD_UNSUPPORTED(hipMemUnmap)
EMUD_UNSUPPORTED(hipMemSetAccess)
EMUD_UNSUPPORTED(hipMemAddressReserve)
EMUD_UNSUPPORTED(hipMemAddressFree)
EMUD_UNSUPPORTED(hipMemGetAllocationGranularity)
EMUD_UNSUPPORTED(hipMemExportToShareableHandle)
EMUD_UNSUPPORTED(hipMemImportFromShareableHandle)
EMUD_UNSUPPORTED(hipCtxCreate)
EMUD_UNSUPPORTED(hipCtxDestroy)
EMUD_UNSUPPORTED(hipCtxGetCurrent)
EMUD_UNSUPPORTED(hipCtxSetCurrent)
EMUD_UNSUPPORTED(hipDevicePrimaryCtxRetain)
EMUD_UNSUPPORTED(hipDevicePrimaryCtxRelease)
EMUD_UNSUPPORTED(hipLaunchCooperativeKernelMultiDevice)
EMUD_UNSUPPORTED(hipConfigureCall)
EMUD_UNSUPPORTED(hipSetupArgument)
EMUD_UNSUPPORTED(hipLaunchByPtr)
EMUD_UNSUPPORTED(hipModuleLoad)
EMUD_UNSUPPORTED(hipModuleLoadData)
EMUD_UNSUPPORTED(hipModuleUnload)
EMUD_UNSUPPORTED(hipModuleGetFunction)
EMUD_UNSUPPORTED(hipModuleGetGlobal)
EMUD_UNSUPPORTED(hipModuleLaunchKernel)
EMUD_UNSUPPORTED(hipIpcGetEventHandle)
EMUD_UNSUPPORTED(hipIpcOpenEventHandle)
EMUD_UNSUPPORTED(hipGraphAddKernelNode)
EMUD_UNSUPPORTED(hipEventRecordWithFlags)
EMUD_UNSUPPORTED(hipExtStreamCreateWithCUMask)
EMUD_UNSUPPORTED(hipExtGetLinkTypeAndHopCount)
EMUD_UNSUPPORTED(hipProfilerStart)
EMUD_UNSUPPORTED(hipProfilerStop)
EMUD_UNSUPPORTED(hipImportExternalMemory)
EMUD_UNSUPPORTED(hipExternalMemoryGetMappedBuffer)
EMUD_UNSUPPORTED(hipDestroyExternalMemory)
#undef EMUD_UNSUPPORTED

// ---- launches ----

namespace emud {
struct launch_cfg {
  dim3 grid, block;
  size_t shmem;
  hipStream_t stream;
  const char* file;  // the launch's own line, for its errors
  int line;
  int coop = 0;  // a cooperative launch (hipLaunchCooperativeKernel)
  const void* fn = nullptr;  // its kernel, whose name emud finds from its address
};
// cfg is called where the user's <<<>>> (or hipLaunchKernelGGL) was, so
// its defaulted __builtin_FILE/LINE name that line, not this header.
inline launch_cfg cfg(dim3 g, dim3 b, size_t shmem = 0, hipStream_t s = nullptr, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  return {g, b, shmem, s, file, line, 0, nullptr};
}

// launch runs body(args...) on every thread of the grid: each lane gets its
// own copy of the arguments, as kernel arguments are copied to each
// thread's registers.
template <class F, class... A>
hipError_t launch(launch_cfg c, const char* name, F body, A&&... args) {
  using Tup = std::tuple<std::decay_t<A>...>;
  if (ihipGraph* g = capture_of(c.stream)) {
    // Captured: the launch as it is now, its arguments copied, made again
    // on the stream the graph runs on.
    g->ops.push_back([c, name, body, tup = Tup(std::forward<A>(args)...)](hipStream_t on) {
      launch_cfg again = c;
      again.stream = on;
      return std::apply([&](const auto&... a) { return launch(again, name, body, a...); }, tup);
    });
    return hipSuccess;
  }
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
                    (uint64_t)(uintptr_t)fin, addr(name), sizeof(Ctx), EMUD_LAUNCH_WARP, (uint64_t)c.coop, addr(c.fn)};
  return host(EMUD_H_LAUNCH, a, c.file, c.line);
}

// coop_launch calls f with the arguments args points at (one pointer a
// parameter, as hipLaunchKernel's kernelParams), its grid cooperative.
template <class... P, size_t... I>
hipError_t coop_launch(void (*f)(P...), dim3 g, dim3 b, void** args, size_t shmem, hipStream_t s, const char* file,
                       int line, std::index_sequence<I...>, int coop = 1) {
  if (!f || (sizeof...(P) > 0 && !args)) return last_error = hipErrorInvalidValue;
  launch_cfg c{g, b, shmem, s, file, line, coop, (const void*)f};
  auto body = [f](auto&... a) { f(a...); };
  return launch(c, coop ? "cooperative kernel" : "kernel", body, *static_cast<std::decay_t<P>*>(args[I])...);
}
// launch_addr launches the kernel at f, known by its address only: one
// the program cast to a void pointer, registered there (emud c++
// rewrites the cast: emud-forced/emud_kernel_addr.h). Its arguments' bytes are
// copied now, as HIP's launch copies them, into the launch's context
// (which lanes may read, as they read a <<<>>> launch's arguments), and
// each lane calls the kernel with copies of them. An address no cast
// registered fails the launch with hipErrorInvalidDeviceFunction, saying
// so at its line; so do more than 64 parameters or 4 KiB of them (HIP's
// own limit on a kernel's arguments is 4 KiB).
struct addr_args {
  enum { max_args = 64, max_bytes = 4096, max_align = 64 };
  kernel_invoker invoke;
  const void* fn;
  unsigned nargs, used;
  unsigned off[max_args];
  unsigned char bytes[max_bytes];  // laid out for a base aligned to max_align (each lane's copy)
};
inline hipError_t launch_addr(const char* call, const void* f, dim3 g, dim3 b, void** args, size_t shmem,
                              hipStream_t s, const char* file, int line, int coop) {
  const kernel_entry* k = f ? kernel_lookup(f) : nullptr;
  if (!k) {
    std::fprintf(stderr,
                 "emud: %s:%d: %s: %p is no kernel emud knows: emud launches a kernel given as a void pointer when the "
                 "program's source casts it to one, `(const void*)kernel`, which emud c++ registers%s (docs/hip.md)\n",
                 file, line, call, f,
                 kernel_table_full() ? "; the table of such kernels (4096) was full" : "");
    return last_error = hipErrorInvalidDeviceFunction;
  }
  if (k->nargs > 0 && !args) return last_error = hipErrorInvalidValue;
  auto a = std::make_unique<addr_args>();
  a->invoke = k->invoke;
  a->fn = k->fn;
  a->nargs = k->nargs;
  size_t n = 0;
  for (unsigned i = 0; i < k->nargs; i++) {
    const size_t al = k->align[i] ? k->align[i] : 1;
    n = (n + al - 1) / al * al;
    if (i >= addr_args::max_args || al > addr_args::max_align || n + k->size[i] > addr_args::max_bytes) {
      std::fprintf(stderr, "emud: %s:%d: %s: kernel %s: emud copies at most %d arguments of %d bytes in all, aligned to "
                           "at most %d, for a launch by address\n",
                   file, line, call, k->name ? k->name : "", (int)addr_args::max_args, (int)addr_args::max_bytes,
                   (int)addr_args::max_align);
      return last_error = hipErrorInvalidValue;
    }
    if (!args[i]) return last_error = hipErrorInvalidValue;
    a->off[i] = (unsigned)n;
    std::memcpy(a->bytes + n, args[i], k->size[i]);
    n += k->size[i];
  }
  a->used = (unsigned)n;
  launch_cfg c{g, b, shmem, s, file, line, coop, f};
  // The launch copies the body wherever it keeps it, so each lane copies
  // the bytes to an aligned buffer of its own (a few bytes, usually)
  // before it calls the kernel with them. (An over-aligned member of the
  // body itself would make GCC note an ABI change in every program.)
  auto body = [a = *a]() {
    alignas(addr_args::max_align) unsigned char mine[addr_args::max_bytes];
    std::memcpy(mine, a.bytes, a.used);
    void* ptrs[addr_args::max_args];
    for (unsigned i = 0; i < a.nargs; i++) ptrs[i] = mine + a.off[i];
    a.invoke(a.fn, ptrs);
  };
  return launch(c, k->name ? k->name : (coop ? "cooperative kernel" : "kernel"), body);
}
}  // namespace emud

// hipLaunchCooperativeKernel: a launch whose every block must fit the GPU
// at once (else hipErrorCooperativeLaunchTooLarge), in which a grid sync
// (cooperative groups' this_grid().sync()) is a barrier of every thread
// of the grid (capi/gridsync.go). The kernel is passed as itself, or as
// a void pointer that the program's source cast it to (launch_addr).
template <class... P>
inline hipError_t hipLaunchCooperativeKernel(void (*f)(P...), dim3 g, dim3 b, void** args, unsigned shmem = 0,
                                             hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::coop_launch(f, g, b, args, shmem, s, __emud_file, __emud_line, std::index_sequence_for<P...>{});
}
// A kernel given as a void pointer: one the program's source casts so
// (emud::launch_addr).
template <class T>
inline hipError_t hipLaunchCooperativeKernel(T* f, dim3 g, dim3 b, void** args, unsigned shmem = 0, hipStream_t s = nullptr,
                                             EMUD_SITE) {
  return ::emud::launch_addr("hipLaunchCooperativeKernel", f, g, b, args, shmem, s, __emud_file, __emud_line, 1);
}
// hipLaunchKernel: the launch of <<<>>>, with the arguments args points
// at (one pointer a parameter); the kernel passed as itself, as above.
template <class... P>
inline hipError_t hipLaunchKernel(void (*f)(P...), dim3 g, dim3 b, void** args, size_t shmem = 0, hipStream_t s = nullptr,
                                  EMUD_SITE) {
  return ::emud::coop_launch(f, g, b, args, shmem, s, __emud_file, __emud_line, std::index_sequence_for<P...>{}, 0);
}
template <class T>
inline hipError_t hipLaunchKernel(T* f, dim3 g, dim3 b, void** args, size_t shmem = 0, hipStream_t s = nullptr, EMUD_SITE) {
  return ::emud::launch_addr("hipLaunchKernel", f, g, b, args, shmem, s, __emud_file, __emud_line, 0);
}
namespace emud {
inline void grid_sync(const char* file, int line, const char* fn) {
  dev(EMUD_OP_GRID_SYNC, {}, "this_grid().sync()", file, line, fn);
}
}  // namespace emud

// The kernel is called through a generic lambda, so template kernels
// whose arguments are deduced launch too.
#define EMUD_KERNEL_BODY(k) [=](auto&... emud_a_) { k(emud_a_...); }
#define hipLaunchKernelGGL(k, grid, block, shmem, stream, ...) \
  ::emud::launch(::emud::cfg((grid), (block), (shmem), (stream)), #k, EMUD_KERNEL_BODY(k), ##__VA_ARGS__)
// hipExtLaunchKernelGGL (hip/hip_ext.h): the launch between records of
// its start and stop events on its stream, where they are not null.
// flags must be 0 (hipExtAnyOrderLaunch is not emulated).
namespace emud {
template <class F, class... A>
hipError_t ext_launch(launch_cfg c, hipEvent_t start, hipEvent_t stop, unsigned flags, const char* name, F body,
                      A&&... args) {
  if (flags != 0) return last_error = hipErrorInvalidValue;
  if (start) {
    hipError_t e = hipEventRecord(start, c.stream, c.file, c.line);
    if (e != hipSuccess) return e;
  }
  hipError_t e = launch(c, name, body, std::forward<A>(args)...);
  if (e != hipSuccess || !stop) return e;
  return hipEventRecord(stop, c.stream, c.file, c.line);
}
}  // namespace emud
#define hipExtLaunchKernelGGL(k, grid, block, shmem, stream, start, stop, flags, ...)                         \
  ::emud::ext_launch(::emud::cfg((grid), (block), (shmem), (stream)), (start), (stop), (flags), #k, EMUD_KERNEL_BODY(k), \
                     ##__VA_ARGS__)

// A unit built without -fsanitize=thread may hold lane code whose device
// stores no access log sees: it says so once the program loads, and a
// lane's fence then wakes every watcher, as it would without the logs
// (capi's lane.c emud_logs_all_stores). emud's own host-only units
// (mori_host.cpp) define EMUD_HOST_UNIT.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EMUD_UNIT_SANITIZED 1
#endif
#endif
#if !defined(__SANITIZE_THREAD__) && !defined(EMUD_UNIT_SANITIZED) && !defined(EMUD_HOST_UNIT)
extern "C" void emud_uninstrumented_unit(void);
namespace {
struct emud_unit_note {
  emud_unit_note() { emud_uninstrumented_unit(); }
};
const emud_unit_note emud_unit_note_{};
}  // namespace
#endif

#endif
