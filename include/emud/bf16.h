// emud's bfloat16 type and its intrinsics, the API CUDA's cuda_bf16.h
// (__nv_bfloat16) and HIP's hip/hip_bf16.h (__hip_bfloat16) share: the
// same surface as emud/half.h's __half (conversions under each rounding,
// arithmetic, comparisons, two-wide forms, math, operators), on 8
// exponent and 7 stored significand bits, bit for bit as the device
// computes them (emud/lowp.h). The type's name is the including API's:
// cuda_bf16.h and hip/hip_bf16.h set EMUD_BF16 and its kin before
// including this. Written for emud (github.com/emud-dev/emud); not
// NVIDIA's or AMD's header. Partial as emud/half.h is (no atomics on it).
#ifndef EMUD_BF16_H
#define EMUD_BF16_H

#include "emud/half.h"

#if !defined(EMUD_BF16) || !defined(EMUD_BF162) || !defined(EMUD_BF16_RAW) || !defined(EMUD_BF162_RAW)
#error "emud: include cuda_bf16.h or hip/hip_bf16.h, not emud/bf16.h"
#endif

struct EMUD_BF16_RAW {
  unsigned short x;
};
struct EMUD_BF162_RAW {
  unsigned short x, y;
};

struct __attribute__((aligned(2))) EMUD_BF16 {
  unsigned short __x;
  EMUD_BF16() = default;
  __host__ __device__ constexpr EMUD_BF16(const EMUD_BF16_RAW& r) : __x(r.x) {}
  __host__ __device__ EMUD_BF16(float f) : __x((unsigned short)::emud::lowp::encode(f, ::emud::lowp::kBF16)) {}
  __host__ __device__ EMUD_BF16(double f) : __x((unsigned short)::emud::lowp::encode(f, ::emud::lowp::kBF16)) {}
  __host__ __device__ EMUD_BF16(short v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16(unsigned short v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16(int v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16(unsigned v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16(long v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16(unsigned long v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16(long long v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16(unsigned long long v) : EMUD_BF16((double)v) {}
  __host__ __device__ EMUD_BF16& operator=(const EMUD_BF16_RAW& r) {
    __x = r.x;
    return *this;
  }
  __host__ __device__ operator EMUD_BF16_RAW() const { return EMUD_BF16_RAW{__x}; }
  __host__ __device__ operator float() const { return (float)::emud::lowp::decode(__x, ::emud::lowp::kBF16); }
  __host__ __device__ explicit operator double() const { return ::emud::lowp::decode(__x, ::emud::lowp::kBF16); }
  __host__ __device__ explicit operator bool() const { return (__x & 0x7FFF) != 0; }
#define EMUD_BF16_TO(T) \
  __host__ __device__ explicit operator T() const { return ::emud::lowp::toInt<T>(::emud::lowp::decode(__x, ::emud::lowp::kBF16), ::emud::lowp::kZero); }
  EMUD_BF16_TO(signed char)
  EMUD_BF16_TO(unsigned char)
  EMUD_BF16_TO(short)
  EMUD_BF16_TO(unsigned short)
  EMUD_BF16_TO(int)
  EMUD_BF16_TO(unsigned)
  EMUD_BF16_TO(long)
  EMUD_BF16_TO(unsigned long)
  EMUD_BF16_TO(long long)
  EMUD_BF16_TO(unsigned long long)
#undef EMUD_BF16_TO
};

struct __attribute__((aligned(4))) EMUD_BF162 {
  EMUD_BF16 x, y;
  EMUD_BF162() = default;
  __host__ __device__ constexpr EMUD_BF162(const EMUD_BF16& a, const EMUD_BF16& b) : x(a), y(b) {}
  __host__ __device__ constexpr EMUD_BF162(const EMUD_BF162_RAW& r) : x(EMUD_BF16_RAW{r.x}), y(EMUD_BF16_RAW{r.y}) {}
  __host__ __device__ EMUD_BF162& operator=(const EMUD_BF162_RAW& r) {
    x = EMUD_BF16_RAW{r.x};
    y = EMUD_BF16_RAW{r.y};
    return *this;
  }
  __host__ __device__ operator EMUD_BF162_RAW() const { return EMUD_BF162_RAW{x.__x, y.__x}; }
};


namespace emud {
namespace lowp {
inline double bv(EMUD_BF16 h) { return decode(h.__x, kBF16); }
inline EMUD_BF16 bmake(uint32_t b) { return EMUD_BF16(EMUD_BF16_RAW{(unsigned short)b}); }
inline EMUD_BF16 bround(double v, Round r = kNearest) { return bmake(encode(v, kBF16, r)); }
// sat clamps to [0, 1] (NaN is +0), as the _sat forms do.
inline EMUD_BF16 bsat(EMUD_BF16 h) {
  if (isNaN(h.__x, kBF16)) return bmake(0);
  double v = bv(h);
  return v < 0 ? bmake(0) : v > 1 ? bmake(0x3F80) : h;
}
}  // namespace lowp
}  // namespace emud

// ---- conversions ----
inline __host__ __device__ float __bfloat162float(EMUD_BF16 h) { return (float)::emud::lowp::bv(h); }
inline __host__ __device__ EMUD_BF16 __float2bfloat16(float f) { return ::emud::lowp::bround(f); }
inline __host__ __device__ EMUD_BF16 __float2bfloat16_rn(float f) { return ::emud::lowp::bround(f); }
inline __host__ __device__ EMUD_BF16 __float2bfloat16_rz(float f) { return ::emud::lowp::bround(f, ::emud::lowp::kZero); }
inline __host__ __device__ EMUD_BF16 __float2bfloat16_rd(float f) { return ::emud::lowp::bround(f, ::emud::lowp::kDown); }
inline __host__ __device__ EMUD_BF16 __float2bfloat16_ru(float f) { return ::emud::lowp::bround(f, ::emud::lowp::kUp); }
inline __host__ __device__ EMUD_BF16 __double2bfloat16(double f) { return ::emud::lowp::bround(f); }
inline __host__ __device__ EMUD_BF162 __float2bfloat162_rn(float f) { return EMUD_BF162(__float2bfloat16(f), __float2bfloat16(f)); }
inline __host__ __device__ EMUD_BF162 __floats2bfloat162_rn(float a, float b) { return EMUD_BF162(__float2bfloat16(a), __float2bfloat16(b)); }
inline __host__ __device__ EMUD_BF162 __float22bfloat162_rn(float2 f) { return EMUD_BF162(__float2bfloat16(f.x), __float2bfloat16(f.y)); }
inline __host__ __device__ float2 __bfloat1622float2(EMUD_BF162 h) { return float2{__bfloat162float(h.x), __bfloat162float(h.y)}; }
inline __host__ __device__ float __low2float(EMUD_BF162 h) { return __bfloat162float(h.x); }
inline __host__ __device__ float __high2float(EMUD_BF162 h) { return __bfloat162float(h.y); }
inline __host__ __device__ EMUD_BF16 __low2bfloat16(EMUD_BF162 h) { return h.x; }
inline __host__ __device__ EMUD_BF16 __high2bfloat16(EMUD_BF162 h) { return h.y; }
inline __host__ __device__ EMUD_BF162 __halves2bfloat162(EMUD_BF16 a, EMUD_BF16 b) { return EMUD_BF162(a, b); }
inline __host__ __device__ EMUD_BF162 __bfloat162bfloat162(EMUD_BF16 a) { return EMUD_BF162(a, a); }
inline __host__ __device__ EMUD_BF162 __low2bfloat162(EMUD_BF162 h) { return EMUD_BF162(h.x, h.x); }
inline __host__ __device__ EMUD_BF162 __high2bfloat162(EMUD_BF162 h) { return EMUD_BF162(h.y, h.y); }
inline __host__ __device__ EMUD_BF162 __lows2bfloat162(EMUD_BF162 a, EMUD_BF162 b) { return EMUD_BF162(a.x, b.x); }
inline __host__ __device__ EMUD_BF162 __highs2bfloat162(EMUD_BF162 a, EMUD_BF162 b) { return EMUD_BF162(a.y, b.y); }
inline __host__ __device__ EMUD_BF162 __lowhigh2highlow(EMUD_BF162 h) { return EMUD_BF162(h.y, h.x); }
inline __host__ __device__ short __bfloat16_as_short(EMUD_BF16 h) { return (short)h.__x; }
inline __host__ __device__ unsigned short __bfloat16_as_ushort(EMUD_BF16 h) { return h.__x; }
inline __host__ __device__ EMUD_BF16 __short_as_bfloat16(short v) { return ::emud::lowp::bmake((unsigned short)v); }
inline __host__ __device__ EMUD_BF16 __ushort_as_bfloat16(unsigned short v) { return ::emud::lowp::bmake(v); }

// Integers, each way, under each rounding (NAME_rn/rz/rd/ru).
#define EMUD_BF16_INT(suffix, T)                                                                                          \
  inline __host__ __device__ T __bfloat162##suffix##_rn(EMUD_BF16 h) { return ::emud::lowp::toInt<T>(::emud::lowp::bv(h), ::emud::lowp::kNearest); } \
  inline __host__ __device__ T __bfloat162##suffix##_rz(EMUD_BF16 h) { return ::emud::lowp::toInt<T>(::emud::lowp::bv(h), ::emud::lowp::kZero); }    \
  inline __host__ __device__ T __bfloat162##suffix##_rd(EMUD_BF16 h) { return ::emud::lowp::toInt<T>(::emud::lowp::bv(h), ::emud::lowp::kDown); }    \
  inline __host__ __device__ T __bfloat162##suffix##_ru(EMUD_BF16 h) { return ::emud::lowp::toInt<T>(::emud::lowp::bv(h), ::emud::lowp::kUp); }      \
  inline __host__ __device__ EMUD_BF16 __##suffix##2bfloat16_rn(T v) { return ::emud::lowp::bround((double)v); }                                    \
  inline __host__ __device__ EMUD_BF16 __##suffix##2bfloat16_rz(T v) { return ::emud::lowp::bround((double)v, ::emud::lowp::kZero); }               \
  inline __host__ __device__ EMUD_BF16 __##suffix##2bfloat16_rd(T v) { return ::emud::lowp::bround((double)v, ::emud::lowp::kDown); }               \
  inline __host__ __device__ EMUD_BF16 __##suffix##2bfloat16_ru(T v) { return ::emud::lowp::bround((double)v, ::emud::lowp::kUp); }
EMUD_BF16_INT(int, int)
EMUD_BF16_INT(uint, unsigned)
EMUD_BF16_INT(short, short)
EMUD_BF16_INT(ushort, unsigned short)
EMUD_BF16_INT(ll, long long)
EMUD_BF16_INT(ull, unsigned long long)
#undef EMUD_BF16_INT
inline __host__ __device__ unsigned char __bfloat162uchar_rz(EMUD_BF16 h) { return ::emud::lowp::toInt<unsigned char>(::emud::lowp::bv(h), ::emud::lowp::kZero); }
inline __host__ __device__ signed char __bfloat162char_rz(EMUD_BF16 h) { return ::emud::lowp::toInt<signed char>(::emud::lowp::bv(h), ::emud::lowp::kZero); }

// ---- arithmetic: the exact result rounded once ----
inline __host__ __device__ EMUD_BF16 __hadd(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bround(::emud::lowp::bv(a) + ::emud::lowp::bv(b)); }
inline __host__ __device__ EMUD_BF16 __hsub(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bround(::emud::lowp::bv(a) - ::emud::lowp::bv(b)); }
inline __host__ __device__ EMUD_BF16 __hmul(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bround(::emud::lowp::bv(a) * ::emud::lowp::bv(b)); }
inline __host__ __device__ EMUD_BF16 __hdiv(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bround(::emud::lowp::bv(a) / ::emud::lowp::bv(b)); }
inline __host__ __device__ EMUD_BF16 __hadd_rn(EMUD_BF16 a, EMUD_BF16 b) { return __hadd(a, b); }
inline __host__ __device__ EMUD_BF16 __hsub_rn(EMUD_BF16 a, EMUD_BF16 b) { return __hsub(a, b); }
inline __host__ __device__ EMUD_BF16 __hmul_rn(EMUD_BF16 a, EMUD_BF16 b) { return __hmul(a, b); }
inline __host__ __device__ EMUD_BF16 __hneg(EMUD_BF16 a) { return ::emud::lowp::bmake(a.__x ^ 0x8000u); }
inline __host__ __device__ EMUD_BF16 __habs(EMUD_BF16 a) { return ::emud::lowp::bmake(a.__x & 0x7FFFu); }
inline __host__ __device__ EMUD_BF16 __hfma(EMUD_BF16 a, EMUD_BF16 b, EMUD_BF16 c) { return ::emud::lowp::bmake(::emud::lowp::fma(a.__x, b.__x, c.__x, ::emud::lowp::kBF16)); }
inline __host__ __device__ EMUD_BF16 __hadd_sat(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bsat(__hadd(a, b)); }
inline __host__ __device__ EMUD_BF16 __hsub_sat(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bsat(__hsub(a, b)); }
inline __host__ __device__ EMUD_BF16 __hmul_sat(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bsat(__hmul(a, b)); }
inline __host__ __device__ EMUD_BF16 __hfma_sat(EMUD_BF16 a, EMUD_BF16 b, EMUD_BF16 c) { return ::emud::lowp::bsat(__hfma(a, b, c)); }

// ---- comparisons: ordered ones are false with a NaN, the u forms true ----
#define EMUD_BF16_CMP(name, op)                                                                                 \
  inline __host__ __device__ bool __h##name(EMUD_BF16 a, EMUD_BF16 b) { return ::emud::lowp::bv(a) op ::emud::lowp::bv(b); } \
  inline __host__ __device__ bool __h##name##u(EMUD_BF16 a, EMUD_BF16 b) {                                            \
    return __hisnan(a) || __hisnan(b) || ::emud::lowp::bv(a) op ::emud::lowp::bv(b);                            \
  }
inline __host__ __device__ bool __hisnan(EMUD_BF16 a) { return ::emud::lowp::isNaN(a.__x, ::emud::lowp::kBF16); }
inline __host__ __device__ int __hisinf(EMUD_BF16 a) { return a.__x == 0x7F80 ? 1 : a.__x == 0xFF80 ? -1 : 0; }
EMUD_BF16_CMP(eq, ==)
EMUD_BF16_CMP(lt, <)
EMUD_BF16_CMP(le, <=)
EMUD_BF16_CMP(gt, >)
EMUD_BF16_CMP(ge, >=)
#undef EMUD_BF16_CMP
inline __host__ __device__ bool __hne(EMUD_BF16 a, EMUD_BF16 b) { return !__hisnan(a) && !__hisnan(b) && ::emud::lowp::bv(a) != ::emud::lowp::bv(b); }
inline __host__ __device__ bool __hneu(EMUD_BF16 a, EMUD_BF16 b) { return !(::emud::lowp::bv(a) == ::emud::lowp::bv(b)); }
// max and min: a NaN operand gives the other, two give the canonical NaN,
// and +0 is above -0; the _nan forms give a NaN if either is one.
inline __host__ __device__ EMUD_BF16 __hmax(EMUD_BF16 a, EMUD_BF16 b) {
  if (__hisnan(a)) return __hisnan(b) ? ::emud::lowp::bmake(0x7FFF) : b;
  if (__hisnan(b)) return a;
  double x = ::emud::lowp::bv(a), y = ::emud::lowp::bv(b);
  if (x == y) return (a.__x & 0x8000) ? b : a;
  return x > y ? a : b;
}
inline __host__ __device__ EMUD_BF16 __hmin(EMUD_BF16 a, EMUD_BF16 b) {
  if (__hisnan(a)) return __hisnan(b) ? ::emud::lowp::bmake(0x7FFF) : b;
  if (__hisnan(b)) return a;
  double x = ::emud::lowp::bv(a), y = ::emud::lowp::bv(b);
  if (x == y) return (a.__x & 0x8000) ? a : b;
  return x < y ? a : b;
}
inline __host__ __device__ EMUD_BF16 __hmax_nan(EMUD_BF16 a, EMUD_BF16 b) { return __hisnan(a) || __hisnan(b) ? ::emud::lowp::bmake(0x7FFF) : __hmax(a, b); }
inline __host__ __device__ EMUD_BF16 __hmin_nan(EMUD_BF16 a, EMUD_BF16 b) { return __hisnan(a) || __hisnan(b) ? ::emud::lowp::bmake(0x7FFF) : __hmin(a, b); }

// ---- two-wide: each half alone ----
#define EMUD_BF162_BIN(name, one) \
  inline __host__ __device__ EMUD_BF162 name(EMUD_BF162 a, EMUD_BF162 b) { return EMUD_BF162(one(a.x, b.x), one(a.y, b.y)); }
EMUD_BF162_BIN(__hadd2, __hadd)
EMUD_BF162_BIN(__hsub2, __hsub)
EMUD_BF162_BIN(__hmul2, __hmul)
EMUD_BF162_BIN(__h2div, __hdiv)
EMUD_BF162_BIN(__hadd2_sat, __hadd_sat)
EMUD_BF162_BIN(__hsub2_sat, __hsub_sat)
EMUD_BF162_BIN(__hmul2_sat, __hmul_sat)
EMUD_BF162_BIN(__hmax2, __hmax)
EMUD_BF162_BIN(__hmin2, __hmin)
EMUD_BF162_BIN(__hmax2_nan, __hmax_nan)
EMUD_BF162_BIN(__hmin2_nan, __hmin_nan)
#undef EMUD_BF162_BIN
inline __host__ __device__ EMUD_BF162 __hfma2(EMUD_BF162 a, EMUD_BF162 b, EMUD_BF162 c) { return EMUD_BF162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __host__ __device__ EMUD_BF162 __hneg2(EMUD_BF162 a) { return EMUD_BF162(__hneg(a.x), __hneg(a.y)); }
inline __host__ __device__ EMUD_BF162 __habs2(EMUD_BF162 a) { return EMUD_BF162(__habs(a.x), __habs(a.y)); }
inline __host__ __device__ bool __hbeq2(EMUD_BF162 a, EMUD_BF162 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
inline __host__ __device__ bool __hbne2(EMUD_BF162 a, EMUD_BF162 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }
inline __host__ __device__ bool __hblt2(EMUD_BF162 a, EMUD_BF162 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }
inline __host__ __device__ bool __hble2(EMUD_BF162 a, EMUD_BF162 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); }
inline __host__ __device__ bool __hbgt2(EMUD_BF162 a, EMUD_BF162 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }
inline __host__ __device__ bool __hbge2(EMUD_BF162 a, EMUD_BF162 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); }

// ---- math: the double function's result rounded once (the device's
// approximate forms may differ in the last bit) ----
#define EMUD_BF16_MATH(name, expr)                                  \
  inline __host__ __device__ EMUD_BF16 name(EMUD_BF16 a) {                \
    const double x = ::emud::lowp::bv(a);                           \
    return ::emud::lowp::bround(expr);                              \
  }
EMUD_BF16_MATH(hsqrt, std::sqrt(x))
EMUD_BF16_MATH(hrsqrt, 1 / std::sqrt(x))
EMUD_BF16_MATH(hrcp, 1 / x)
EMUD_BF16_MATH(hexp, std::exp(x))
EMUD_BF16_MATH(hexp2, std::exp2(x))
EMUD_BF16_MATH(hexp10, std::pow(10.0, x))
EMUD_BF16_MATH(hlog, std::log(x))
EMUD_BF16_MATH(hlog2, std::log2(x))
EMUD_BF16_MATH(hlog10, std::log10(x))
EMUD_BF16_MATH(hsin, std::sin(x))
EMUD_BF16_MATH(hcos, std::cos(x))
EMUD_BF16_MATH(hfloor, std::floor(x))
EMUD_BF16_MATH(hceil, std::ceil(x))
EMUD_BF16_MATH(htrunc, std::trunc(x))
EMUD_BF16_MATH(hrint, std::nearbyint(x))
#undef EMUD_BF16_MATH

// ---- operators ----
inline __host__ __device__ EMUD_BF16 operator+(const EMUD_BF16& a, const EMUD_BF16& b) { return __hadd(a, b); }
inline __host__ __device__ EMUD_BF16 operator-(const EMUD_BF16& a, const EMUD_BF16& b) { return __hsub(a, b); }
inline __host__ __device__ EMUD_BF16 operator*(const EMUD_BF16& a, const EMUD_BF16& b) { return __hmul(a, b); }
inline __host__ __device__ EMUD_BF16 operator/(const EMUD_BF16& a, const EMUD_BF16& b) { return __hdiv(a, b); }
inline __host__ __device__ EMUD_BF16& operator+=(EMUD_BF16& a, const EMUD_BF16& b) { return a = __hadd(a, b); }
inline __host__ __device__ EMUD_BF16& operator-=(EMUD_BF16& a, const EMUD_BF16& b) { return a = __hsub(a, b); }
inline __host__ __device__ EMUD_BF16& operator*=(EMUD_BF16& a, const EMUD_BF16& b) { return a = __hmul(a, b); }
inline __host__ __device__ EMUD_BF16& operator/=(EMUD_BF16& a, const EMUD_BF16& b) { return a = __hdiv(a, b); }
inline __host__ __device__ EMUD_BF16 operator+(const EMUD_BF16& a) { return a; }
inline __host__ __device__ EMUD_BF16 operator-(const EMUD_BF16& a) { return __hneg(a); }
inline __host__ __device__ EMUD_BF16& operator++(EMUD_BF16& a) { return a = __hadd(a, ::emud::lowp::bmake(0x3F80)); }
inline __host__ __device__ EMUD_BF16& operator--(EMUD_BF16& a) { return a = __hsub(a, ::emud::lowp::bmake(0x3F80)); }
inline __host__ __device__ EMUD_BF16 operator++(EMUD_BF16& a, int) {
  EMUD_BF16 o = a;
  ++a;
  return o;
}
inline __host__ __device__ EMUD_BF16 operator--(EMUD_BF16& a, int) {
  EMUD_BF16 o = a;
  --a;
  return o;
}
inline __host__ __device__ bool operator==(const EMUD_BF16& a, const EMUD_BF16& b) { return __heq(a, b); }
inline __host__ __device__ bool operator!=(const EMUD_BF16& a, const EMUD_BF16& b) { return __hneu(a, b); }
inline __host__ __device__ bool operator<(const EMUD_BF16& a, const EMUD_BF16& b) { return __hlt(a, b); }
inline __host__ __device__ bool operator<=(const EMUD_BF16& a, const EMUD_BF16& b) { return __hle(a, b); }
inline __host__ __device__ bool operator>(const EMUD_BF16& a, const EMUD_BF16& b) { return __hgt(a, b); }
inline __host__ __device__ bool operator>=(const EMUD_BF16& a, const EMUD_BF16& b) { return __hge(a, b); }
inline __host__ __device__ EMUD_BF162 operator+(const EMUD_BF162& a, const EMUD_BF162& b) { return __hadd2(a, b); }
inline __host__ __device__ EMUD_BF162 operator-(const EMUD_BF162& a, const EMUD_BF162& b) { return __hsub2(a, b); }
inline __host__ __device__ EMUD_BF162 operator*(const EMUD_BF162& a, const EMUD_BF162& b) { return __hmul2(a, b); }
inline __host__ __device__ EMUD_BF162 operator/(const EMUD_BF162& a, const EMUD_BF162& b) { return __h2div(a, b); }
inline __host__ __device__ EMUD_BF162& operator+=(EMUD_BF162& a, const EMUD_BF162& b) { return a = __hadd2(a, b); }
inline __host__ __device__ EMUD_BF162& operator-=(EMUD_BF162& a, const EMUD_BF162& b) { return a = __hsub2(a, b); }
inline __host__ __device__ EMUD_BF162& operator*=(EMUD_BF162& a, const EMUD_BF162& b) { return a = __hmul2(a, b); }
inline __host__ __device__ EMUD_BF162& operator/=(EMUD_BF162& a, const EMUD_BF162& b) { return a = __h2div(a, b); }
inline __host__ __device__ EMUD_BF162 operator-(const EMUD_BF162& a) { return __hneg2(a); }
inline __host__ __device__ bool operator==(const EMUD_BF162& a, const EMUD_BF162& b) { return __hbeq2(a, b); }
inline __host__ __device__ bool operator!=(const EMUD_BF162& a, const EMUD_BF162& b) { return !__hbeq2(a, b); }

#endif
