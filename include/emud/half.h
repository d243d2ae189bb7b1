// emud's binary16 type and its intrinsics, the API CUDA's cuda_fp16.h and
// HIP's hip/hip_fp16.h share (both include this): __half, __half2, their
// raw forms, conversions under each rounding, arithmetic, comparisons and
// a few math functions, bit for bit as the device computes them
// (emud/lowp.h says how). Written for emud (github.com/emud-dev/emud);
// not NVIDIA's or AMD's header.
//
// __half converts implicitly from float, double and the integer types
// (round to nearest even) and to float, as CUDA's does; mixing __half and
// float in one operator is ambiguous there too. Conversions to integers
// are explicit. Partial: no device atomics on __half (atomicAdd of a
// __half* is a compile error), and of the two-wide math only the
// arithmetic, fma, min/max and the __hbeq2-style comparisons are here.
#ifndef EMUD_HALF_H
#define EMUD_HALF_H

#include "emud/lowp.h"

#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif

struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};

struct __attribute__((aligned(2))) __half {
  unsigned short __x;
  __half() = default;
  __host__ __device__ constexpr __half(const __half_raw& r) : __x(r.x) {}
  __host__ __device__ __half(float f) : __x((unsigned short)::emud::lowp::encode(f, ::emud::lowp::kHalf)) {}
  __host__ __device__ __half(double f) : __x((unsigned short)::emud::lowp::encode(f, ::emud::lowp::kHalf)) {}
  __host__ __device__ __half(short v) : __half((double)v) {}
  __host__ __device__ __half(unsigned short v) : __half((double)v) {}
  __host__ __device__ __half(int v) : __half((double)v) {}
  __host__ __device__ __half(unsigned v) : __half((double)v) {}
  __host__ __device__ __half(long v) : __half((double)v) {}
  __host__ __device__ __half(unsigned long v) : __half((double)v) {}
  __host__ __device__ __half(long long v) : __half((double)v) {}
  __host__ __device__ __half(unsigned long long v) : __half((double)v) {}
  __host__ __device__ __half& operator=(const __half_raw& r) {
    __x = r.x;
    return *this;
  }
  __host__ __device__ operator __half_raw() const { return __half_raw{__x}; }
  __host__ __device__ operator float() const { return (float)::emud::lowp::decode(__x, ::emud::lowp::kHalf); }
  __host__ __device__ explicit operator double() const { return ::emud::lowp::decode(__x, ::emud::lowp::kHalf); }
  __host__ __device__ explicit operator bool() const { return (__x & 0x7FFF) != 0; }
#define EMUD_HALF_TO(T) \
  __host__ __device__ explicit operator T() const { return ::emud::lowp::toInt<T>(::emud::lowp::decode(__x, ::emud::lowp::kHalf), ::emud::lowp::kZero); }
  EMUD_HALF_TO(signed char)
  EMUD_HALF_TO(unsigned char)
  EMUD_HALF_TO(short)
  EMUD_HALF_TO(unsigned short)
  EMUD_HALF_TO(int)
  EMUD_HALF_TO(unsigned)
  EMUD_HALF_TO(long)
  EMUD_HALF_TO(unsigned long)
  EMUD_HALF_TO(long long)
  EMUD_HALF_TO(unsigned long long)
#undef EMUD_HALF_TO
};

struct __attribute__((aligned(4))) __half2 {
  __half x, y;
  __half2() = default;
  __host__ __device__ constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
  __host__ __device__ constexpr __half2(const __half2_raw& r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
  __host__ __device__ __half2& operator=(const __half2_raw& r) {
    x = __half_raw{r.x};
    y = __half_raw{r.y};
    return *this;
  }
  __host__ __device__ operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};

typedef __half half;
typedef __half2 half2;

namespace emud {
namespace lowp {
inline double hv(__half h) { return decode(h.__x, kHalf); }
inline __half hmake(uint32_t b) { return __half(__half_raw{(unsigned short)b}); }
inline __half hround(double v, Round r = kNearest) { return hmake(encode(v, kHalf, r)); }
// sat clamps to [0, 1] (NaN is +0), as the _sat forms do.
inline __half hsat(__half h) {
  if (isNaN(h.__x, kHalf)) return hmake(0);
  double v = hv(h);
  return v < 0 ? hmake(0) : v > 1 ? hmake(0x3C00) : h;
}
}  // namespace lowp
}  // namespace emud

// ---- conversions ----
inline __host__ __device__ float __half2float(__half h) { return (float)::emud::lowp::hv(h); }
inline __host__ __device__ __half __float2half(float f) { return ::emud::lowp::hround(f); }
inline __host__ __device__ __half __float2half_rn(float f) { return ::emud::lowp::hround(f); }
inline __host__ __device__ __half __float2half_rz(float f) { return ::emud::lowp::hround(f, ::emud::lowp::kZero); }
inline __host__ __device__ __half __float2half_rd(float f) { return ::emud::lowp::hround(f, ::emud::lowp::kDown); }
inline __host__ __device__ __half __float2half_ru(float f) { return ::emud::lowp::hround(f, ::emud::lowp::kUp); }
inline __host__ __device__ __half __double2half(double f) { return ::emud::lowp::hround(f); }
inline __host__ __device__ __half2 __float2half2_rn(float f) { return __half2(__float2half(f), __float2half(f)); }
inline __host__ __device__ __half2 __floats2half2_rn(float a, float b) { return __half2(__float2half(a), __float2half(b)); }
inline __host__ __device__ __half2 __float22half2_rn(float2 f) { return __half2(__float2half(f.x), __float2half(f.y)); }
inline __host__ __device__ float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }
inline __host__ __device__ float __low2float(__half2 h) { return __half2float(h.x); }
inline __host__ __device__ float __high2float(__half2 h) { return __half2float(h.y); }
inline __host__ __device__ __half __low2half(__half2 h) { return h.x; }
inline __host__ __device__ __half __high2half(__half2 h) { return h.y; }
inline __host__ __device__ __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
inline __host__ __device__ __half2 __half2half2(__half a) { return __half2(a, a); }
inline __host__ __device__ __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
inline __host__ __device__ __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
inline __host__ __device__ __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __host__ __device__ __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
inline __host__ __device__ __half2 __lowhigh2highlow(__half2 h) { return __half2(h.y, h.x); }
inline __host__ __device__ short __half_as_short(__half h) { return (short)h.__x; }
inline __host__ __device__ unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __host__ __device__ __half __short_as_half(short v) { return ::emud::lowp::hmake((unsigned short)v); }
inline __host__ __device__ __half __ushort_as_half(unsigned short v) { return ::emud::lowp::hmake(v); }

// Integers, each way, under each rounding (NAME_rn/rz/rd/ru).
#define EMUD_HALF_INT(suffix, T)                                                                                          \
  inline __host__ __device__ T __half2##suffix##_rn(__half h) { return ::emud::lowp::toInt<T>(::emud::lowp::hv(h), ::emud::lowp::kNearest); } \
  inline __host__ __device__ T __half2##suffix##_rz(__half h) { return ::emud::lowp::toInt<T>(::emud::lowp::hv(h), ::emud::lowp::kZero); }    \
  inline __host__ __device__ T __half2##suffix##_rd(__half h) { return ::emud::lowp::toInt<T>(::emud::lowp::hv(h), ::emud::lowp::kDown); }    \
  inline __host__ __device__ T __half2##suffix##_ru(__half h) { return ::emud::lowp::toInt<T>(::emud::lowp::hv(h), ::emud::lowp::kUp); }      \
  inline __host__ __device__ __half __##suffix##2half_rn(T v) { return ::emud::lowp::hround((double)v); }                                    \
  inline __host__ __device__ __half __##suffix##2half_rz(T v) { return ::emud::lowp::hround((double)v, ::emud::lowp::kZero); }               \
  inline __host__ __device__ __half __##suffix##2half_rd(T v) { return ::emud::lowp::hround((double)v, ::emud::lowp::kDown); }               \
  inline __host__ __device__ __half __##suffix##2half_ru(T v) { return ::emud::lowp::hround((double)v, ::emud::lowp::kUp); }
EMUD_HALF_INT(int, int)
EMUD_HALF_INT(uint, unsigned)
EMUD_HALF_INT(short, short)
EMUD_HALF_INT(ushort, unsigned short)
EMUD_HALF_INT(ll, long long)
EMUD_HALF_INT(ull, unsigned long long)
#undef EMUD_HALF_INT
inline __host__ __device__ unsigned char __half2uchar_rz(__half h) { return ::emud::lowp::toInt<unsigned char>(::emud::lowp::hv(h), ::emud::lowp::kZero); }
inline __host__ __device__ signed char __half2char_rz(__half h) { return ::emud::lowp::toInt<signed char>(::emud::lowp::hv(h), ::emud::lowp::kZero); }

// ---- arithmetic: the exact result rounded once ----
inline __host__ __device__ __half __hadd(__half a, __half b) { return ::emud::lowp::hround(::emud::lowp::hv(a) + ::emud::lowp::hv(b)); }
inline __host__ __device__ __half __hsub(__half a, __half b) { return ::emud::lowp::hround(::emud::lowp::hv(a) - ::emud::lowp::hv(b)); }
inline __host__ __device__ __half __hmul(__half a, __half b) { return ::emud::lowp::hround(::emud::lowp::hv(a) * ::emud::lowp::hv(b)); }
inline __host__ __device__ __half __hdiv(__half a, __half b) { return ::emud::lowp::hround(::emud::lowp::hv(a) / ::emud::lowp::hv(b)); }
inline __host__ __device__ __half __hadd_rn(__half a, __half b) { return __hadd(a, b); }
inline __host__ __device__ __half __hsub_rn(__half a, __half b) { return __hsub(a, b); }
inline __host__ __device__ __half __hmul_rn(__half a, __half b) { return __hmul(a, b); }
inline __host__ __device__ __half __hneg(__half a) { return ::emud::lowp::hmake(a.__x ^ 0x8000u); }
inline __host__ __device__ __half __habs(__half a) { return ::emud::lowp::hmake(a.__x & 0x7FFFu); }
inline __host__ __device__ __half __hfma(__half a, __half b, __half c) { return ::emud::lowp::hmake(::emud::lowp::fma(a.__x, b.__x, c.__x, ::emud::lowp::kHalf)); }
inline __host__ __device__ __half __hadd_sat(__half a, __half b) { return ::emud::lowp::hsat(__hadd(a, b)); }
inline __host__ __device__ __half __hsub_sat(__half a, __half b) { return ::emud::lowp::hsat(__hsub(a, b)); }
inline __host__ __device__ __half __hmul_sat(__half a, __half b) { return ::emud::lowp::hsat(__hmul(a, b)); }
inline __host__ __device__ __half __hfma_sat(__half a, __half b, __half c) { return ::emud::lowp::hsat(__hfma(a, b, c)); }

// ---- comparisons: ordered ones are false with a NaN, the u forms true ----
#define EMUD_HALF_CMP(name, op)                                                                                 \
  inline __host__ __device__ bool __h##name(__half a, __half b) { return ::emud::lowp::hv(a) op ::emud::lowp::hv(b); } \
  inline __host__ __device__ bool __h##name##u(__half a, __half b) {                                            \
    return __hisnan(a) || __hisnan(b) || ::emud::lowp::hv(a) op ::emud::lowp::hv(b);                            \
  }
inline __host__ __device__ bool __hisnan(__half a) { return ::emud::lowp::isNaN(a.__x, ::emud::lowp::kHalf); }
inline __host__ __device__ int __hisinf(__half a) { return a.__x == 0x7C00 ? 1 : a.__x == 0xFC00 ? -1 : 0; }
EMUD_HALF_CMP(eq, ==)
EMUD_HALF_CMP(lt, <)
EMUD_HALF_CMP(le, <=)
EMUD_HALF_CMP(gt, >)
EMUD_HALF_CMP(ge, >=)
#undef EMUD_HALF_CMP
inline __host__ __device__ bool __hne(__half a, __half b) { return !__hisnan(a) && !__hisnan(b) && ::emud::lowp::hv(a) != ::emud::lowp::hv(b); }
inline __host__ __device__ bool __hneu(__half a, __half b) { return !(::emud::lowp::hv(a) == ::emud::lowp::hv(b)); }
// max and min: a NaN operand gives the other, two give the canonical NaN,
// and +0 is above -0; the _nan forms give a NaN if either is one.
inline __host__ __device__ __half __hmax(__half a, __half b) {
  if (__hisnan(a)) return __hisnan(b) ? ::emud::lowp::hmake(0x7FFF) : b;
  if (__hisnan(b)) return a;
  double x = ::emud::lowp::hv(a), y = ::emud::lowp::hv(b);
  if (x == y) return (a.__x & 0x8000) ? b : a;
  return x > y ? a : b;
}
inline __host__ __device__ __half __hmin(__half a, __half b) {
  if (__hisnan(a)) return __hisnan(b) ? ::emud::lowp::hmake(0x7FFF) : b;
  if (__hisnan(b)) return a;
  double x = ::emud::lowp::hv(a), y = ::emud::lowp::hv(b);
  if (x == y) return (a.__x & 0x8000) ? a : b;
  return x < y ? a : b;
}
inline __host__ __device__ __half __hmax_nan(__half a, __half b) { return __hisnan(a) || __hisnan(b) ? ::emud::lowp::hmake(0x7FFF) : __hmax(a, b); }
inline __host__ __device__ __half __hmin_nan(__half a, __half b) { return __hisnan(a) || __hisnan(b) ? ::emud::lowp::hmake(0x7FFF) : __hmin(a, b); }

// ---- two-wide: each half alone ----
#define EMUD_HALF2_BIN(name, one) \
  inline __host__ __device__ __half2 name(__half2 a, __half2 b) { return __half2(one(a.x, b.x), one(a.y, b.y)); }
EMUD_HALF2_BIN(__hadd2, __hadd)
EMUD_HALF2_BIN(__hsub2, __hsub)
EMUD_HALF2_BIN(__hmul2, __hmul)
EMUD_HALF2_BIN(__h2div, __hdiv)
EMUD_HALF2_BIN(__hadd2_sat, __hadd_sat)
EMUD_HALF2_BIN(__hsub2_sat, __hsub_sat)
EMUD_HALF2_BIN(__hmul2_sat, __hmul_sat)
EMUD_HALF2_BIN(__hmax2, __hmax)
EMUD_HALF2_BIN(__hmin2, __hmin)
EMUD_HALF2_BIN(__hmax2_nan, __hmax_nan)
EMUD_HALF2_BIN(__hmin2_nan, __hmin_nan)
#undef EMUD_HALF2_BIN
inline __host__ __device__ __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __host__ __device__ __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __host__ __device__ __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
inline __host__ __device__ bool __hbeq2(__half2 a, __half2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
inline __host__ __device__ bool __hbne2(__half2 a, __half2 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }
inline __host__ __device__ bool __hblt2(__half2 a, __half2 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }
inline __host__ __device__ bool __hble2(__half2 a, __half2 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); }
inline __host__ __device__ bool __hbgt2(__half2 a, __half2 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }
inline __host__ __device__ bool __hbge2(__half2 a, __half2 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); }

// ---- math: the double function's result rounded once (the device's
// approximate forms may differ in the last bit) ----
#define EMUD_HALF_MATH(name, expr)                                  \
  inline __host__ __device__ __half name(__half a) {                \
    const double x = ::emud::lowp::hv(a);                           \
    return ::emud::lowp::hround(expr);                              \
  }
EMUD_HALF_MATH(hsqrt, std::sqrt(x))
EMUD_HALF_MATH(hrsqrt, 1 / std::sqrt(x))
EMUD_HALF_MATH(hrcp, 1 / x)
EMUD_HALF_MATH(hexp, std::exp(x))
EMUD_HALF_MATH(hexp2, std::exp2(x))
EMUD_HALF_MATH(hexp10, std::pow(10.0, x))
EMUD_HALF_MATH(hlog, std::log(x))
EMUD_HALF_MATH(hlog2, std::log2(x))
EMUD_HALF_MATH(hlog10, std::log10(x))
EMUD_HALF_MATH(hsin, std::sin(x))
EMUD_HALF_MATH(hcos, std::cos(x))
EMUD_HALF_MATH(hfloor, std::floor(x))
EMUD_HALF_MATH(hceil, std::ceil(x))
EMUD_HALF_MATH(htrunc, std::trunc(x))
EMUD_HALF_MATH(hrint, std::nearbyint(x))
#undef EMUD_HALF_MATH

// ---- operators ----
inline __host__ __device__ __half operator+(const __half& a, const __half& b) { return __hadd(a, b); }
inline __host__ __device__ __half operator-(const __half& a, const __half& b) { return __hsub(a, b); }
inline __host__ __device__ __half operator*(const __half& a, const __half& b) { return __hmul(a, b); }
inline __host__ __device__ __half operator/(const __half& a, const __half& b) { return __hdiv(a, b); }
inline __host__ __device__ __half& operator+=(__half& a, const __half& b) { return a = __hadd(a, b); }
inline __host__ __device__ __half& operator-=(__half& a, const __half& b) { return a = __hsub(a, b); }
inline __host__ __device__ __half& operator*=(__half& a, const __half& b) { return a = __hmul(a, b); }
inline __host__ __device__ __half& operator/=(__half& a, const __half& b) { return a = __hdiv(a, b); }
inline __host__ __device__ __half operator+(const __half& a) { return a; }
inline __host__ __device__ __half operator-(const __half& a) { return __hneg(a); }
inline __host__ __device__ __half& operator++(__half& a) { return a = __hadd(a, ::emud::lowp::hmake(0x3C00)); }
inline __host__ __device__ __half& operator--(__half& a) { return a = __hsub(a, ::emud::lowp::hmake(0x3C00)); }
inline __host__ __device__ __half operator++(__half& a, int) {
  __half o = a;
  ++a;
  return o;
}
inline __host__ __device__ __half operator--(__half& a, int) {
  __half o = a;
  --a;
  return o;
}
inline __host__ __device__ bool operator==(const __half& a, const __half& b) { return __heq(a, b); }
inline __host__ __device__ bool operator!=(const __half& a, const __half& b) { return __hneu(a, b); }
inline __host__ __device__ bool operator<(const __half& a, const __half& b) { return __hlt(a, b); }
inline __host__ __device__ bool operator<=(const __half& a, const __half& b) { return __hle(a, b); }
inline __host__ __device__ bool operator>(const __half& a, const __half& b) { return __hgt(a, b); }
inline __host__ __device__ bool operator>=(const __half& a, const __half& b) { return __hge(a, b); }
inline __host__ __device__ __half2 operator+(const __half2& a, const __half2& b) { return __hadd2(a, b); }
inline __host__ __device__ __half2 operator-(const __half2& a, const __half2& b) { return __hsub2(a, b); }
inline __host__ __device__ __half2 operator*(const __half2& a, const __half2& b) { return __hmul2(a, b); }
inline __host__ __device__ __half2 operator/(const __half2& a, const __half2& b) { return __h2div(a, b); }
inline __host__ __device__ __half2& operator+=(__half2& a, const __half2& b) { return a = __hadd2(a, b); }
inline __host__ __device__ __half2& operator-=(__half2& a, const __half2& b) { return a = __hsub2(a, b); }
inline __host__ __device__ __half2& operator*=(__half2& a, const __half2& b) { return a = __hmul2(a, b); }
inline __host__ __device__ __half2& operator/=(__half2& a, const __half2& b) { return a = __h2div(a, b); }
inline __host__ __device__ __half2 operator-(const __half2& a) { return __hneg2(a); }
inline __host__ __device__ bool operator==(const __half2& a, const __half2& b) { return __hbeq2(a, b); }
inline __host__ __device__ bool operator!=(const __half2& a, const __half2& b) { return !__hbeq2(a, b); }

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)

#endif
