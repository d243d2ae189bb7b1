// emud's low-precision floating-point core: exact encode and decode of
// binary16 (half), bfloat16 and the two OCP 8-bit formats (E4M3, E5M2),
// under which emud's cuda_fp16.h, cuda_bf16.h, cuda_fp8.h,
// hip/hip_fp16.h and hip/hip_bf16.h build their types. Written for emud
// (github.com/emud-dev/emud); not NVIDIA's or AMD's code.
//
// emud compiles device code as host code, so the device's conversion and
// arithmetic instructions are done here in software, bit for bit: a value
// goes to double (exact for every format here), the operation is done in
// double, and the result is rounded once to the format. For +, -, * and /
// on half and bfloat16 that gives the correctly rounded result the
// hardware gives (double has more than twice their precision plus two
// bits, so double rounding cannot change the result); fma keeps the
// rounding error of its double sum and breaks a tie with it.
#ifndef EMUD_LOWP_H
#define EMUD_LOWP_H

#include <cmath>
#include <cstdint>
#include <limits>

namespace emud {
namespace lowp {

// A format: exponent and stored significand bits; ieee formats give their
// top exponent to infinities and NaNs, E4M3 (OCP's "fn") has no
// infinity and only S.1111.111 for NaN, so its top exponent holds values
// up to 448.
struct Format {
  int exp, man;
  bool ieee;
  uint32_t nan;  // the NaN a conversion makes
};
constexpr Format kHalf{5, 10, true, 0x7FFF};
constexpr Format kBF16{8, 7, true, 0x7FFF};
constexpr Format kE4M3{4, 3, false, 0x7F};
constexpr Format kE5M2{5, 2, true, 0x7F};

enum Round { kNearest, kZero, kDown, kUp };

inline int bias(Format f) { return (1 << (f.exp - 1)) - 1; }
inline uint32_t signBit(Format f) { return 1u << (f.exp + f.man); }
inline uint32_t infBits(Format f) { return ((1u << f.exp) - 1) << f.man; }
// maxBits is the largest finite magnitude's encoding.
inline uint32_t maxBits(Format f) { return f.ieee ? infBits(f) - 1 : (1u << (f.exp + f.man)) - 2; }

inline bool isNaN(uint32_t b, Format f) {
  uint32_t m = b & (signBit(f) - 1);
  return f.ieee ? m > infBits(f) : m == signBit(f) - 1;
}

inline double decode(uint32_t b, Format f) {
  const uint32_t mag = b & (signBit(f) - 1);
  const int field = (int)(mag >> f.man);
  const uint32_t frac = mag & ((1u << f.man) - 1);
  double v;
  if (isNaN(b, f)) {
    v = NAN;
  } else if (f.ieee && mag == infBits(f)) {
    v = INFINITY;
  } else if (field == 0) {
    v = std::ldexp((double)frac, 1 - bias(f) - f.man);
  } else {
    v = std::ldexp((double)(frac | (1u << f.man)), field - bias(f) - f.man);
  }
  return (b & signBit(f)) ? -v : v;
}

// encode rounds x to the format. over says what a finite x past the
// largest finite value (or an infinity, in a format without one) becomes:
// with sat, the largest finite value; else an infinity (E4M3: NaN), except
// that a rounding toward zero, or away from x's sign, stops at the
// largest finite value as IEEE says. stick is the sign of x's error when
// x is itself a rounded double (exact - x): it breaks a tie at a midpoint.
inline uint32_t encode(double x, Format f, Round r = kNearest, bool sat = false, int stick = 0) {
  if (x != x) return f.nan;
  const bool neg = std::signbit(x);
  const uint32_t sign = neg ? signBit(f) : 0;
  double a = std::fabs(x);
  if (neg) stick = -stick;  // stick now measures the magnitude's error
  // What an overflow gives, by the rounding direction of the magnitude.
  const bool toward = r == kZero || (r == kDown && !neg) || (r == kUp && neg);
  const uint32_t over = sat || toward ? maxBits(f) : (f.ieee ? infBits(f) : f.nan);
  if (std::isinf(a)) return sign | (f.ieee && !sat ? infBits(f) : over);
  if (a == 0) return sign;
  int e2;
  std::frexp(a, &e2);  // a in [2^(e2-1), 2^e2)
  int e = e2 - 1;
  const int emin = 1 - bias(f);
  if (e < emin) e = emin;  // subnormals share the smallest normal's step
  const double n = std::ldexp(a, f.man - e);  // a in steps of the format's ulp: exact
  double q = std::floor(n);
  const double rest = n - q;
  bool up = false;
  switch (r) {
    case kNearest:
      up = rest > 0.5 || (rest == 0.5 && (stick > 0 || (stick == 0 && std::fmod(q, 2) == 1)));
      break;
    case kZero:
      break;
    case kDown:
      up = neg && (rest > 0 || stick > 0);
      break;
    case kUp:
      up = !neg && (rest > 0 || stick > 0);
      break;
  }
  if (up) q += 1;
  // q holds the hidden bit for normals: q + (e+bias-1) << man encodes it,
  // a carry out of the significand moving the exponent by itself; a
  // subnormal's q is its encoding (2^man: the smallest normal's).
  uint64_t bits = (uint64_t)q;
  if (n >= (double)(1u << f.man)) bits += (uint64_t)(e + bias(f) - 1) << f.man;
  if (bits > maxBits(f)) return sign | over;
  return sign | (uint32_t)bits;
}

// convert between two formats (exact where the target holds the value).
inline uint32_t convert(uint32_t b, Format from, Format to, Round r = kNearest, bool sat = false) {
  if (isNaN(b, from)) return to.nan;
  return encode(decode(b, from), to, r, sat);
}

// fma is a*b+c rounded once: a*b is exact in double for these formats,
// the sum's rounding error breaks a tie.
inline uint32_t fma(uint32_t a, uint32_t b, uint32_t c, Format f) {
  const double p = decode(a, f) * decode(b, f), z = decode(c, f);
  const double s = p + z;
  if (s != s || std::isinf(s)) return encode(s, f);
  const double bb = s - p, err = (p - (s - bb)) + (z - bb);
  return encode(s, f, kNearest, false, err > 0 ? 1 : err < 0 ? -1 : 0);
}

// toInt converts a decoded value to I by r, as the device's cvt does:
// values past I's range clamp to it; NaN is 0, or for 64-bit types
// 0x8000000000000000.
template <typename I>
inline I toInt(double v, Round r) {
  if (v != v) return sizeof(I) == 8 ? (I)(std::numeric_limits<I>::is_signed ? std::numeric_limits<I>::min() : (I)1 << 63) : (I)0;
  switch (r) {
    case kNearest:
      v = std::nearbyint(v);
      break;
    case kZero:
      v = std::trunc(v);
      break;
    case kDown:
      v = std::floor(v);
      break;
    case kUp:
      v = std::ceil(v);
      break;
  }
  if (v <= (double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  if (v >= (double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  return (I)v;
}

}  // namespace lowp
}  // namespace emud

#endif
