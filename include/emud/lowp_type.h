// The body of emud's two 16-bit floating types, included once for each
// (emud/half.h for binary16, emud/bf16.h for bfloat16; no include guard):
// the type and its two-wide and raw forms, conversions under each
// rounding, arithmetic, comparisons, two-wide forms, math and operators,
// bit for bit as the device computes them (emud/lowp.h). CUDA and HIP give
// both types the same surface, the arithmetic overloaded (__hadd) and the
// conversions named for the type (__float2half, __float2bfloat16), so the
// includer names the type and its format:
//   EMUD_LP, EMUD_LP2, EMUD_LP_RAW, EMUD_LP2_RAW  the type names;
//   EMUD_LP_FMT                    its format's name in emud::lowp (kHalf, kBF16);
//   EMUD_LP_N, EMUD_LP_N2          the conversions' stem (half, half2;
//                                  bfloat16, bfloat162);
//   EMUD_LP_ONE, EMUD_LP_INF       the encodings of 1 and +infinity.
// They are undefined at the end, with the body's own macros. Written for emud
// (github.com/emud-dev/emud); not NVIDIA's or AMD's header.
#if !defined(EMUD_LP) || !defined(EMUD_LP2) || !defined(EMUD_LP_RAW) || !defined(EMUD_LP2_RAW) || !defined(EMUD_LP_FMT) || \
    !defined(EMUD_LP_N) || !defined(EMUD_LP_N2) || !defined(EMUD_LP_ONE) || !defined(EMUD_LP_INF)
#error "emud: include cuda_fp16.h, cuda_bf16.h or their HIP forms, not emud/lowp_type.h"
#endif

#define EMUD_LP_CAT_(a, b) a##b
#define EMUD_LP_CAT(a, b) EMUD_LP_CAT_(a, b)
#define EMUD_LP_CAT3(a, b, c) EMUD_LP_CAT(EMUD_LP_CAT(a, b), c)
// EMUD_LP_FN(pre, post) is pre, the type's stem, post: EMUD_LP_FN(__float2, _rn)
// is __float2half_rn or __float2bfloat16_rn; EMUD_LP_FN2 the two-wide stem's.
#define EMUD_LP_FN(pre, post) EMUD_LP_CAT3(pre, EMUD_LP_N, post)
#define EMUD_LP_FN2(pre, post) EMUD_LP_CAT3(pre, EMUD_LP_N2, post)
// The helpers' names in emud::lowp: make_half, round_bfloat16, ...
#define EMUD_LP_MAKE EMUD_LP_CAT(make_, EMUD_LP_N)
#define EMUD_LP_ROUND EMUD_LP_CAT(round_, EMUD_LP_N)

struct EMUD_LP_RAW {
  unsigned short x;
};
struct EMUD_LP2_RAW {
  unsigned short x, y;
};

struct __attribute__((aligned(2))) EMUD_LP {
  unsigned short __x;
  EMUD_LP() = default;
  __host__ __device__ constexpr EMUD_LP(const EMUD_LP_RAW& r) : __x(r.x) {}
  __host__ __device__ EMUD_LP(float f) : __x((unsigned short)::emud::lowp::encode(f, ::emud::lowp::EMUD_LP_FMT)) {}
  __host__ __device__ EMUD_LP(double f) : __x((unsigned short)::emud::lowp::encode(f, ::emud::lowp::EMUD_LP_FMT)) {}
  __host__ __device__ EMUD_LP(short v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP(unsigned short v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP(int v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP(unsigned v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP(long v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP(unsigned long v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP(long long v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP(unsigned long long v) : EMUD_LP((double)v) {}
  __host__ __device__ EMUD_LP& operator=(const EMUD_LP_RAW& r) {
    __x = r.x;
    return *this;
  }
  __host__ __device__ operator EMUD_LP_RAW() const { return EMUD_LP_RAW{__x}; }
  __host__ __device__ operator float() const { return (float)::emud::lowp::decode(__x, ::emud::lowp::EMUD_LP_FMT); }
  __host__ __device__ explicit operator double() const { return ::emud::lowp::decode(__x, ::emud::lowp::EMUD_LP_FMT); }
  __host__ __device__ explicit operator bool() const { return (__x & 0x7FFF) != 0; }
#define EMUD_LP_TO(T) \
  __host__ __device__ explicit operator T() const { return ::emud::lowp::toInt<T>(::emud::lowp::decode(__x, ::emud::lowp::EMUD_LP_FMT), ::emud::lowp::kZero); }
  EMUD_LP_TO(signed char)
  EMUD_LP_TO(unsigned char)
  EMUD_LP_TO(short)
  EMUD_LP_TO(unsigned short)
  EMUD_LP_TO(int)
  EMUD_LP_TO(unsigned)
  EMUD_LP_TO(long)
  EMUD_LP_TO(unsigned long)
  EMUD_LP_TO(long long)
  EMUD_LP_TO(unsigned long long)
#undef EMUD_LP_TO
};

struct __attribute__((aligned(4))) EMUD_LP2 {
  EMUD_LP x, y;
  EMUD_LP2() = default;
  __host__ __device__ constexpr EMUD_LP2(const EMUD_LP& a, const EMUD_LP& b) : x(a), y(b) {}
  __host__ __device__ constexpr EMUD_LP2(const EMUD_LP2_RAW& r) : x(EMUD_LP_RAW{r.x}), y(EMUD_LP_RAW{r.y}) {}
  __host__ __device__ EMUD_LP2& operator=(const EMUD_LP2_RAW& r) {
    x = EMUD_LP_RAW{r.x};
    y = EMUD_LP_RAW{r.y};
    return *this;
  }
  __host__ __device__ operator EMUD_LP2_RAW() const { return EMUD_LP2_RAW{x.__x, y.__x}; }
};


namespace emud {
namespace lowp {
inline double value(EMUD_LP h) { return decode(h.__x, EMUD_LP_FMT); }
inline EMUD_LP EMUD_LP_MAKE(uint32_t b) { return EMUD_LP(EMUD_LP_RAW{(unsigned short)b}); }
inline EMUD_LP EMUD_LP_ROUND(double v, Round r = kNearest) { return EMUD_LP_MAKE(encode(v, EMUD_LP_FMT, r)); }
// sat clamps to [0, 1] (NaN is +0), as the _sat forms do.
inline EMUD_LP sat(EMUD_LP h) {
  if (isNaN(h.__x, EMUD_LP_FMT)) return EMUD_LP_MAKE(0);
  double v = value(h);
  return v < 0 ? EMUD_LP_MAKE(0) : v > 1 ? EMUD_LP_MAKE(EMUD_LP_ONE) : h;
}
}  // namespace lowp
}  // namespace emud

// ---- conversions ----
inline __host__ __device__ float EMUD_LP_FN(__, 2float)(EMUD_LP h) { return (float)::emud::lowp::value(h); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__float2, )(float f) { return ::emud::lowp::EMUD_LP_ROUND(f); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__float2, _rn)(float f) { return ::emud::lowp::EMUD_LP_ROUND(f); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__float2, _rz)(float f) { return ::emud::lowp::EMUD_LP_ROUND(f, ::emud::lowp::kZero); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__float2, _rd)(float f) { return ::emud::lowp::EMUD_LP_ROUND(f, ::emud::lowp::kDown); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__float2, _ru)(float f) { return ::emud::lowp::EMUD_LP_ROUND(f, ::emud::lowp::kUp); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__double2, )(double f) { return ::emud::lowp::EMUD_LP_ROUND(f); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__float2, _rn)(float f) { return EMUD_LP2(EMUD_LP_FN(__float2, )(f), EMUD_LP_FN(__float2, )(f)); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__floats2, _rn)(float a, float b) { return EMUD_LP2(EMUD_LP_FN(__float2, )(a), EMUD_LP_FN(__float2, )(b)); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__float22, _rn)(float2 f) { return EMUD_LP2(EMUD_LP_FN(__float2, )(f.x), EMUD_LP_FN(__float2, )(f.y)); }
inline __host__ __device__ float2 EMUD_LP_FN2(__, 2float2)(EMUD_LP2 h) { return float2{EMUD_LP_FN(__, 2float)(h.x), EMUD_LP_FN(__, 2float)(h.y)}; }
inline __host__ __device__ float __low2float(EMUD_LP2 h) { return EMUD_LP_FN(__, 2float)(h.x); }
inline __host__ __device__ float __high2float(EMUD_LP2 h) { return EMUD_LP_FN(__, 2float)(h.y); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__low2, )(EMUD_LP2 h) { return h.x; }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__high2, )(EMUD_LP2 h) { return h.y; }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__halves2, )(EMUD_LP a, EMUD_LP b) { return EMUD_LP2(a, b); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_CAT(EMUD_LP_FN(__, 2), EMUD_LP_N2)(EMUD_LP a) { return EMUD_LP2(a, a); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__low2, )(EMUD_LP2 h) { return EMUD_LP2(h.x, h.x); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__high2, )(EMUD_LP2 h) { return EMUD_LP2(h.y, h.y); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__lows2, )(EMUD_LP2 a, EMUD_LP2 b) { return EMUD_LP2(a.x, b.x); }
inline __host__ __device__ EMUD_LP2 EMUD_LP_FN2(__highs2, )(EMUD_LP2 a, EMUD_LP2 b) { return EMUD_LP2(a.y, b.y); }
inline __host__ __device__ EMUD_LP2 __lowhigh2highlow(EMUD_LP2 h) { return EMUD_LP2(h.y, h.x); }
inline __host__ __device__ short EMUD_LP_FN(__, _as_short)(EMUD_LP h) { return (short)h.__x; }
inline __host__ __device__ unsigned short EMUD_LP_FN(__, _as_ushort)(EMUD_LP h) { return h.__x; }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__short_as_, )(short v) { return ::emud::lowp::EMUD_LP_MAKE((unsigned short)v); }
inline __host__ __device__ EMUD_LP EMUD_LP_FN(__ushort_as_, )(unsigned short v) { return ::emud::lowp::EMUD_LP_MAKE(v); }

// Integers, each way, under each rounding (NAME_rn/rz/rd/ru).
#define EMUD_LP_INT(suffix, T)                                                                                          \
  inline __host__ __device__ T EMUD_LP_CAT(EMUD_LP_FN(__, 2), suffix##_rn)(EMUD_LP h) { return ::emud::lowp::toInt<T>(::emud::lowp::value(h), ::emud::lowp::kNearest); } \
  inline __host__ __device__ T EMUD_LP_CAT(EMUD_LP_FN(__, 2), suffix##_rz)(EMUD_LP h) { return ::emud::lowp::toInt<T>(::emud::lowp::value(h), ::emud::lowp::kZero); }    \
  inline __host__ __device__ T EMUD_LP_CAT(EMUD_LP_FN(__, 2), suffix##_rd)(EMUD_LP h) { return ::emud::lowp::toInt<T>(::emud::lowp::value(h), ::emud::lowp::kDown); }    \
  inline __host__ __device__ T EMUD_LP_CAT(EMUD_LP_FN(__, 2), suffix##_ru)(EMUD_LP h) { return ::emud::lowp::toInt<T>(::emud::lowp::value(h), ::emud::lowp::kUp); }      \
  inline __host__ __device__ EMUD_LP EMUD_LP_CAT3(__##suffix##2, EMUD_LP_N, _rn)(T v) { return ::emud::lowp::EMUD_LP_ROUND((double)v); }                                    \
  inline __host__ __device__ EMUD_LP EMUD_LP_CAT3(__##suffix##2, EMUD_LP_N, _rz)(T v) { return ::emud::lowp::EMUD_LP_ROUND((double)v, ::emud::lowp::kZero); }               \
  inline __host__ __device__ EMUD_LP EMUD_LP_CAT3(__##suffix##2, EMUD_LP_N, _rd)(T v) { return ::emud::lowp::EMUD_LP_ROUND((double)v, ::emud::lowp::kDown); }               \
  inline __host__ __device__ EMUD_LP EMUD_LP_CAT3(__##suffix##2, EMUD_LP_N, _ru)(T v) { return ::emud::lowp::EMUD_LP_ROUND((double)v, ::emud::lowp::kUp); }
EMUD_LP_INT(int, int)
EMUD_LP_INT(uint, unsigned)
EMUD_LP_INT(short, short)
EMUD_LP_INT(ushort, unsigned short)
EMUD_LP_INT(ll, long long)
EMUD_LP_INT(ull, unsigned long long)
#undef EMUD_LP_INT
inline __host__ __device__ unsigned char EMUD_LP_FN(__, 2uchar_rz)(EMUD_LP h) { return ::emud::lowp::toInt<unsigned char>(::emud::lowp::value(h), ::emud::lowp::kZero); }
inline __host__ __device__ signed char EMUD_LP_FN(__, 2char_rz)(EMUD_LP h) { return ::emud::lowp::toInt<signed char>(::emud::lowp::value(h), ::emud::lowp::kZero); }

// ---- arithmetic: the exact result rounded once ----
inline __host__ __device__ EMUD_LP __hadd(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::EMUD_LP_ROUND(::emud::lowp::value(a) + ::emud::lowp::value(b)); }
inline __host__ __device__ EMUD_LP __hsub(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::EMUD_LP_ROUND(::emud::lowp::value(a) - ::emud::lowp::value(b)); }
inline __host__ __device__ EMUD_LP __hmul(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::EMUD_LP_ROUND(::emud::lowp::value(a) * ::emud::lowp::value(b)); }
inline __host__ __device__ EMUD_LP __hdiv(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::EMUD_LP_ROUND(::emud::lowp::value(a) / ::emud::lowp::value(b)); }
inline __host__ __device__ EMUD_LP __hadd_rn(EMUD_LP a, EMUD_LP b) { return __hadd(a, b); }
inline __host__ __device__ EMUD_LP __hsub_rn(EMUD_LP a, EMUD_LP b) { return __hsub(a, b); }
inline __host__ __device__ EMUD_LP __hmul_rn(EMUD_LP a, EMUD_LP b) { return __hmul(a, b); }
inline __host__ __device__ EMUD_LP __hneg(EMUD_LP a) { return ::emud::lowp::EMUD_LP_MAKE(a.__x ^ 0x8000u); }
inline __host__ __device__ EMUD_LP __habs(EMUD_LP a) { return ::emud::lowp::EMUD_LP_MAKE(a.__x & 0x7FFFu); }
inline __host__ __device__ EMUD_LP __hfma(EMUD_LP a, EMUD_LP b, EMUD_LP c) { return ::emud::lowp::EMUD_LP_MAKE(::emud::lowp::fma(a.__x, b.__x, c.__x, ::emud::lowp::EMUD_LP_FMT)); }
inline __host__ __device__ EMUD_LP __hadd_sat(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::sat(__hadd(a, b)); }
inline __host__ __device__ EMUD_LP __hsub_sat(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::sat(__hsub(a, b)); }
inline __host__ __device__ EMUD_LP __hmul_sat(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::sat(__hmul(a, b)); }
inline __host__ __device__ EMUD_LP __hfma_sat(EMUD_LP a, EMUD_LP b, EMUD_LP c) { return ::emud::lowp::sat(__hfma(a, b, c)); }

// ---- comparisons: ordered ones are false with a NaN, the u forms true ----
#define EMUD_LP_CMP(name, op)                                                                                 \
  inline __host__ __device__ bool __h##name(EMUD_LP a, EMUD_LP b) { return ::emud::lowp::value(a) op ::emud::lowp::value(b); } \
  inline __host__ __device__ bool __h##name##u(EMUD_LP a, EMUD_LP b) {                                            \
    return __hisnan(a) || __hisnan(b) || ::emud::lowp::value(a) op ::emud::lowp::value(b);                            \
  }
inline __host__ __device__ bool __hisnan(EMUD_LP a) { return ::emud::lowp::isNaN(a.__x, ::emud::lowp::EMUD_LP_FMT); }
inline __host__ __device__ int __hisinf(EMUD_LP a) { return a.__x == EMUD_LP_INF ? 1 : a.__x == (EMUD_LP_INF | 0x8000) ? -1 : 0; }
EMUD_LP_CMP(eq, ==)
EMUD_LP_CMP(lt, <)
EMUD_LP_CMP(le, <=)
EMUD_LP_CMP(gt, >)
EMUD_LP_CMP(ge, >=)
#undef EMUD_LP_CMP
inline __host__ __device__ bool __hne(EMUD_LP a, EMUD_LP b) { return !__hisnan(a) && !__hisnan(b) && ::emud::lowp::value(a) != ::emud::lowp::value(b); }
inline __host__ __device__ bool __hneu(EMUD_LP a, EMUD_LP b) { return !(::emud::lowp::value(a) == ::emud::lowp::value(b)); }
// max and min: a NaN operand gives the other, two give the canonical NaN,
// and +0 is above -0; the _nan forms give a NaN if either is one.
inline __host__ __device__ EMUD_LP __hmax(EMUD_LP a, EMUD_LP b) {
  if (__hisnan(a)) return __hisnan(b) ? ::emud::lowp::EMUD_LP_MAKE(0x7FFF) : b;
  if (__hisnan(b)) return a;
  double x = ::emud::lowp::value(a), y = ::emud::lowp::value(b);
  if (x == y) return (a.__x & 0x8000) ? b : a;
  return x > y ? a : b;
}
inline __host__ __device__ EMUD_LP __hmin(EMUD_LP a, EMUD_LP b) {
  if (__hisnan(a)) return __hisnan(b) ? ::emud::lowp::EMUD_LP_MAKE(0x7FFF) : b;
  if (__hisnan(b)) return a;
  double x = ::emud::lowp::value(a), y = ::emud::lowp::value(b);
  if (x == y) return (a.__x & 0x8000) ? a : b;
  return x < y ? a : b;
}
inline __host__ __device__ EMUD_LP __hmax_nan(EMUD_LP a, EMUD_LP b) { return __hisnan(a) || __hisnan(b) ? ::emud::lowp::EMUD_LP_MAKE(0x7FFF) : __hmax(a, b); }
inline __host__ __device__ EMUD_LP __hmin_nan(EMUD_LP a, EMUD_LP b) { return __hisnan(a) || __hisnan(b) ? ::emud::lowp::EMUD_LP_MAKE(0x7FFF) : __hmin(a, b); }

// ---- two-wide: each half alone ----
#define EMUD_LP2_BIN(name, one) \
  inline __host__ __device__ EMUD_LP2 name(EMUD_LP2 a, EMUD_LP2 b) { return EMUD_LP2(one(a.x, b.x), one(a.y, b.y)); }
EMUD_LP2_BIN(__hadd2, __hadd)
EMUD_LP2_BIN(__hsub2, __hsub)
EMUD_LP2_BIN(__hmul2, __hmul)
EMUD_LP2_BIN(__h2div, __hdiv)
EMUD_LP2_BIN(__hadd2_sat, __hadd_sat)
EMUD_LP2_BIN(__hsub2_sat, __hsub_sat)
EMUD_LP2_BIN(__hmul2_sat, __hmul_sat)
EMUD_LP2_BIN(__hmax2, __hmax)
EMUD_LP2_BIN(__hmin2, __hmin)
EMUD_LP2_BIN(__hmax2_nan, __hmax_nan)
EMUD_LP2_BIN(__hmin2_nan, __hmin_nan)
#undef EMUD_LP2_BIN
inline __host__ __device__ EMUD_LP2 __hfma2(EMUD_LP2 a, EMUD_LP2 b, EMUD_LP2 c) { return EMUD_LP2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __host__ __device__ EMUD_LP2 __hneg2(EMUD_LP2 a) { return EMUD_LP2(__hneg(a.x), __hneg(a.y)); }
inline __host__ __device__ EMUD_LP2 __habs2(EMUD_LP2 a) { return EMUD_LP2(__habs(a.x), __habs(a.y)); }
inline __host__ __device__ bool __hbeq2(EMUD_LP2 a, EMUD_LP2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
inline __host__ __device__ bool __hbne2(EMUD_LP2 a, EMUD_LP2 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }
inline __host__ __device__ bool __hblt2(EMUD_LP2 a, EMUD_LP2 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }
inline __host__ __device__ bool __hble2(EMUD_LP2 a, EMUD_LP2 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); }
inline __host__ __device__ bool __hbgt2(EMUD_LP2 a, EMUD_LP2 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }
inline __host__ __device__ bool __hbge2(EMUD_LP2 a, EMUD_LP2 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); }

// ---- math: the double function's result rounded once (the device's
// approximate forms may differ in the last bit) ----
#define EMUD_LP_MATH(name, expr)                                  \
  inline __host__ __device__ EMUD_LP name(EMUD_LP a) {                \
    const double x = ::emud::lowp::value(a);                           \
    return ::emud::lowp::EMUD_LP_ROUND(expr);                              \
  }
EMUD_LP_MATH(hsqrt, std::sqrt(x))
EMUD_LP_MATH(hrsqrt, 1 / std::sqrt(x))
EMUD_LP_MATH(hrcp, 1 / x)
EMUD_LP_MATH(hexp, std::exp(x))
EMUD_LP_MATH(hexp2, std::exp2(x))
EMUD_LP_MATH(hexp10, std::pow(10.0, x))
EMUD_LP_MATH(hlog, std::log(x))
EMUD_LP_MATH(hlog2, std::log2(x))
EMUD_LP_MATH(hlog10, std::log10(x))
EMUD_LP_MATH(hsin, std::sin(x))
EMUD_LP_MATH(hcos, std::cos(x))
EMUD_LP_MATH(hfloor, std::floor(x))
EMUD_LP_MATH(hceil, std::ceil(x))
EMUD_LP_MATH(htrunc, std::trunc(x))
EMUD_LP_MATH(hrint, std::nearbyint(x))
#undef EMUD_LP_MATH

// ---- operators ----
inline __host__ __device__ EMUD_LP operator+(const EMUD_LP& a, const EMUD_LP& b) { return __hadd(a, b); }
inline __host__ __device__ EMUD_LP operator-(const EMUD_LP& a, const EMUD_LP& b) { return __hsub(a, b); }
inline __host__ __device__ EMUD_LP operator*(const EMUD_LP& a, const EMUD_LP& b) { return __hmul(a, b); }
inline __host__ __device__ EMUD_LP operator/(const EMUD_LP& a, const EMUD_LP& b) { return __hdiv(a, b); }
inline __host__ __device__ EMUD_LP& operator+=(EMUD_LP& a, const EMUD_LP& b) { return a = __hadd(a, b); }
inline __host__ __device__ EMUD_LP& operator-=(EMUD_LP& a, const EMUD_LP& b) { return a = __hsub(a, b); }
inline __host__ __device__ EMUD_LP& operator*=(EMUD_LP& a, const EMUD_LP& b) { return a = __hmul(a, b); }
inline __host__ __device__ EMUD_LP& operator/=(EMUD_LP& a, const EMUD_LP& b) { return a = __hdiv(a, b); }
inline __host__ __device__ EMUD_LP operator+(const EMUD_LP& a) { return a; }
inline __host__ __device__ EMUD_LP operator-(const EMUD_LP& a) { return __hneg(a); }
inline __host__ __device__ EMUD_LP& operator++(EMUD_LP& a) { return a = __hadd(a, ::emud::lowp::EMUD_LP_MAKE(EMUD_LP_ONE)); }
inline __host__ __device__ EMUD_LP& operator--(EMUD_LP& a) { return a = __hsub(a, ::emud::lowp::EMUD_LP_MAKE(EMUD_LP_ONE)); }
inline __host__ __device__ EMUD_LP operator++(EMUD_LP& a, int) {
  EMUD_LP o = a;
  ++a;
  return o;
}
inline __host__ __device__ EMUD_LP operator--(EMUD_LP& a, int) {
  EMUD_LP o = a;
  --a;
  return o;
}
inline __host__ __device__ bool operator==(const EMUD_LP& a, const EMUD_LP& b) { return __heq(a, b); }
inline __host__ __device__ bool operator!=(const EMUD_LP& a, const EMUD_LP& b) { return __hneu(a, b); }
inline __host__ __device__ bool operator<(const EMUD_LP& a, const EMUD_LP& b) { return __hlt(a, b); }
inline __host__ __device__ bool operator<=(const EMUD_LP& a, const EMUD_LP& b) { return __hle(a, b); }
inline __host__ __device__ bool operator>(const EMUD_LP& a, const EMUD_LP& b) { return __hgt(a, b); }
inline __host__ __device__ bool operator>=(const EMUD_LP& a, const EMUD_LP& b) { return __hge(a, b); }
inline __host__ __device__ EMUD_LP2 operator+(const EMUD_LP2& a, const EMUD_LP2& b) { return __hadd2(a, b); }
inline __host__ __device__ EMUD_LP2 operator-(const EMUD_LP2& a, const EMUD_LP2& b) { return __hsub2(a, b); }
inline __host__ __device__ EMUD_LP2 operator*(const EMUD_LP2& a, const EMUD_LP2& b) { return __hmul2(a, b); }
inline __host__ __device__ EMUD_LP2 operator/(const EMUD_LP2& a, const EMUD_LP2& b) { return __h2div(a, b); }
inline __host__ __device__ EMUD_LP2& operator+=(EMUD_LP2& a, const EMUD_LP2& b) { return a = __hadd2(a, b); }
inline __host__ __device__ EMUD_LP2& operator-=(EMUD_LP2& a, const EMUD_LP2& b) { return a = __hsub2(a, b); }
inline __host__ __device__ EMUD_LP2& operator*=(EMUD_LP2& a, const EMUD_LP2& b) { return a = __hmul2(a, b); }
inline __host__ __device__ EMUD_LP2& operator/=(EMUD_LP2& a, const EMUD_LP2& b) { return a = __h2div(a, b); }
inline __host__ __device__ EMUD_LP2 operator-(const EMUD_LP2& a) { return __hneg2(a); }
inline __host__ __device__ bool operator==(const EMUD_LP2& a, const EMUD_LP2& b) { return __hbeq2(a, b); }
inline __host__ __device__ bool operator!=(const EMUD_LP2& a, const EMUD_LP2& b) { return !__hbeq2(a, b); }

#undef EMUD_LP_ROUND
#undef EMUD_LP_MAKE
#undef EMUD_LP_FN2
#undef EMUD_LP_FN
#undef EMUD_LP_CAT3
#undef EMUD_LP_CAT
#undef EMUD_LP_CAT_
#undef EMUD_LP_INF
#undef EMUD_LP_ONE
#undef EMUD_LP_N2
#undef EMUD_LP_N
#undef EMUD_LP_FMT
#undef EMUD_LP2_RAW
#undef EMUD_LP_RAW
#undef EMUD_LP2
#undef EMUD_LP
