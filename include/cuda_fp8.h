// emud's cuda_fp8.h: CUDA's 8-bit floating-point types (OCP E4M3 and
// E5M2: __nv_fp8_e4m3, __nv_fp8_e5m2) and their conversions
// (__nv_cvt_float_to_fp8 and kin, with __NV_NOSAT or __NV_SATFINITE), bit
// for bit in software (emud/lowp.h). Written for emud
// (github.com/emud-dev/emud); not NVIDIA's header. The two- and four-wide
// structs (__nv_fp8x2_e4m3, __nv_fp8x4_e5m2, ...) hold their values low
// element first, as CUDA's storage types do. Partial: no arithmetic on
// the fp8 types (CUDA has none either, bar conversions).
#ifndef EMUD_CUDA_FP8_H
#define EMUD_CUDA_FP8_H
// What CUDA's header defines, by which programs (nccl-tests) test for it.
#define __CUDA_FP8_TYPES_EXIST__
#include "cuda_bf16.h"

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

namespace emud {
namespace lowp {
inline Format fp8(__nv_fp8_interpretation_t k) { return k == __NV_E5M2 ? kE5M2 : kE4M3; }
inline __nv_fp8_storage_t toFP8(double x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8_storage_t)encode(x, fp8(k), kNearest, s == __NV_SATFINITE);
}
}  // namespace lowp
}  // namespace emud

inline __host__ __device__ __nv_fp8_storage_t __nv_cvt_double_to_fp8(double x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return ::emud::lowp::toFP8(x, s, k);
}
inline __host__ __device__ __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return ::emud::lowp::toFP8(x, s, k);
}
inline __host__ __device__ __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(__half_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return ::emud::lowp::toFP8(::emud::lowp::decode(x.x, ::emud::lowp::kHalf), s, k);
}
inline __host__ __device__ __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return ::emud::lowp::toFP8(::emud::lowp::decode(x.x, ::emud::lowp::kBF16), s, k);
}
inline __host__ __device__ __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(double2 x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8x2_storage_t)(::emud::lowp::toFP8(x.x, s, k) | ::emud::lowp::toFP8(x.y, s, k) << 8);
}
inline __host__ __device__ __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(float2 x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8x2_storage_t)(::emud::lowp::toFP8(x.x, s, k) | ::emud::lowp::toFP8(x.y, s, k) << 8);
}
inline __host__ __device__ __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(__half2_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_halfraw_to_fp8(__half_raw{x.x}, s, k) | __nv_cvt_halfraw_to_fp8(__half_raw{x.y}, s, k) << 8);
}
inline __host__ __device__ __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(__nv_bfloat162_raw x, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{x.x}, s, k) |
                                __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{x.y}, s, k) << 8);
}
// Every E4M3 and E5M2 value is a half: widening is exact.
inline __host__ __device__ __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t x, __nv_fp8_interpretation_t k) {
  return __half_raw{(unsigned short)::emud::lowp::convert(x, ::emud::lowp::fp8(k), ::emud::lowp::kHalf)};
}
inline __host__ __device__ __half2_raw __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t x, __nv_fp8_interpretation_t k) {
  return __half2_raw{__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)(x & 0xFF), k).x, __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)(x >> 8), k).x};
}

// The scalar types: constructors saturate to the largest finite value
// (__NV_SATFINITE); conversions out are explicit, to integers by
// truncation with NaN as 0.
#define EMUD_FP8(NAME, KIND)                                                                                         \
  struct __attribute__((aligned(1))) NAME {                                                                         \
    __nv_fp8_storage_t __x;                                                                                         \
    NAME() = default;                                                                                               \
    explicit __host__ __device__ NAME(double f) : __x(::emud::lowp::toFP8(f, __NV_SATFINITE, KIND)) {}              \
    explicit __host__ __device__ NAME(float f) : NAME((double)f) {}                                                 \
    explicit __host__ __device__ NAME(__half h) : NAME(::emud::lowp::value(h)) {}                                      \
    explicit __host__ __device__ NAME(__nv_bfloat16 h) : NAME(::emud::lowp::value(h)) {}                               \
    explicit __host__ __device__ NAME(short v) : NAME((double)v) {}                                                 \
    explicit __host__ __device__ NAME(unsigned short v) : NAME((double)v) {}                                        \
    explicit __host__ __device__ NAME(int v) : NAME((double)v) {}                                                   \
    explicit __host__ __device__ NAME(unsigned v) : NAME((double)v) {}                                              \
    explicit __host__ __device__ NAME(long v) : NAME((double)v) {}                                                  \
    explicit __host__ __device__ NAME(unsigned long v) : NAME((double)v) {}                                         \
    explicit __host__ __device__ NAME(long long v) : NAME((double)v) {}                                             \
    explicit __host__ __device__ NAME(unsigned long long v) : NAME((double)v) {}                                    \
    __host__ __device__ double value() const { return ::emud::lowp::decode(__x, ::emud::lowp::fp8(KIND)); }         \
    explicit __host__ __device__ operator double() const { return value(); }                                        \
    explicit __host__ __device__ operator float() const { return (float)value(); }                                  \
    explicit __host__ __device__ operator __half() const { return __half(__nv_cvt_fp8_to_halfraw(__x, KIND)); }      \
    explicit __host__ __device__ operator __nv_bfloat16() const { return __float2bfloat16_rz((float)value()); }      \
    explicit __host__ __device__ operator bool() const { return (__x & 0x7F) != 0; }                                \
    explicit __host__ __device__ operator signed char() const { return ::emud::lowp::toInt<signed char>(value(), ::emud::lowp::kZero); }       \
    explicit __host__ __device__ operator unsigned char() const { return ::emud::lowp::toInt<unsigned char>(value(), ::emud::lowp::kZero); }   \
    explicit __host__ __device__ operator short() const { return ::emud::lowp::toInt<short>(value(), ::emud::lowp::kZero); }                   \
    explicit __host__ __device__ operator unsigned short() const { return ::emud::lowp::toInt<unsigned short>(value(), ::emud::lowp::kZero); } \
    explicit __host__ __device__ operator int() const { return ::emud::lowp::toInt<int>(value(), ::emud::lowp::kZero); }                       \
    explicit __host__ __device__ operator unsigned() const { return ::emud::lowp::toInt<unsigned>(value(), ::emud::lowp::kZero); }             \
    explicit __host__ __device__ operator long() const { return ::emud::lowp::toInt<long>(value(), ::emud::lowp::kZero); }                     \
    explicit __host__ __device__ operator unsigned long() const { return ::emud::lowp::toInt<unsigned long>(value(), ::emud::lowp::kZero); }   \
    explicit __host__ __device__ operator long long() const { return ::emud::lowp::toInt<long long>(value(), ::emud::lowp::kZero); }           \
    explicit __host__ __device__ operator unsigned long long() const {                                              \
      return ::emud::lowp::toInt<unsigned long long>(value(), ::emud::lowp::kZero);                                 \
    }                                                                                                               \
  };
EMUD_FP8(__nv_fp8_e4m3, __NV_E4M3)
EMUD_FP8(__nv_fp8_e5m2, __NV_E5M2)
#undef EMUD_FP8

// Pairs and quads: each element as the scalar type converts it
// (__NV_SATFINITE), the first in the lowest byte; out to floats and
// halves exactly.
#define EMUD_FP8X(NAME2, NAME4, KIND)                                                                                \
  struct __attribute__((aligned(2))) NAME2 {                                                                        \
    __nv_fp8x2_storage_t __x;                                                                                       \
    NAME2() = default;                                                                                              \
    explicit __host__ __device__ NAME2(double2 f) : __x(__nv_cvt_double2_to_fp8x2(f, __NV_SATFINITE, KIND)) {}     \
    explicit __host__ __device__ NAME2(float2 f) : __x(__nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, KIND)) {}       \
    explicit __host__ __device__ NAME2(__half2 h)                                                                   \
        : __x(__nv_cvt_halfraw2_to_fp8x2((__half2_raw)h, __NV_SATFINITE, KIND)) {}                                  \
    explicit __host__ __device__ NAME2(__nv_bfloat162 h)                                                            \
        : __x(__nv_cvt_bfloat16raw2_to_fp8x2((__nv_bfloat162_raw)h, __NV_SATFINITE, KIND)) {}                       \
    explicit __host__ __device__ operator __half2() const { return __half2(__nv_cvt_fp8x2_to_halfraw2(__x, KIND)); } \
    explicit __host__ __device__ operator float2() const {                                                          \
      __half2 h = (__half2) * this;                                                                                 \
      return float2{__half2float(h.x), __half2float(h.y)};                                                          \
    }                                                                                                               \
  };                                                                                                                \
  struct __attribute__((aligned(4))) NAME4 {                                                                        \
    __nv_fp8x4_storage_t __x;                                                                                       \
    NAME4() = default;                                                                                              \
    explicit __host__ __device__ NAME4(double4 f)                                                                   \
        : __x(pack(__nv_cvt_double2_to_fp8x2(double2{f.x, f.y}, __NV_SATFINITE, KIND),                              \
                   __nv_cvt_double2_to_fp8x2(double2{f.z, f.w}, __NV_SATFINITE, KIND))) {}                          \
    explicit __host__ __device__ NAME4(float4 f)                                                                    \
        : __x(pack(__nv_cvt_float2_to_fp8x2(float2{f.x, f.y}, __NV_SATFINITE, KIND),                                \
                   __nv_cvt_float2_to_fp8x2(float2{f.z, f.w}, __NV_SATFINITE, KIND))) {}                            \
    explicit __host__ __device__ NAME4(__half2 lo, __half2 hi)                                                      \
        : __x(pack(__nv_cvt_halfraw2_to_fp8x2((__half2_raw)lo, __NV_SATFINITE, KIND),                               \
                   __nv_cvt_halfraw2_to_fp8x2((__half2_raw)hi, __NV_SATFINITE, KIND))) {}                           \
    explicit __host__ __device__ NAME4(__nv_bfloat162 lo, __nv_bfloat162 hi)                                        \
        : __x(pack(__nv_cvt_bfloat16raw2_to_fp8x2((__nv_bfloat162_raw)lo, __NV_SATFINITE, KIND),                    \
                   __nv_cvt_bfloat16raw2_to_fp8x2((__nv_bfloat162_raw)hi, __NV_SATFINITE, KIND))) {}                \
    explicit __host__ __device__ operator float4() const {                                                          \
      __half2 lo(__nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(__x & 0xFFFF), KIND));                           \
      __half2 hi(__nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(__x >> 16), KIND));                              \
      return float4{__half2float(lo.x), __half2float(lo.y), __half2float(hi.x), __half2float(hi.y)};                \
    }                                                                                                               \
                                                                                                                    \
   private:                                                                                                         \
    static __host__ __device__ __nv_fp8x4_storage_t pack(__nv_fp8x2_storage_t lo, __nv_fp8x2_storage_t hi) {       \
      return (__nv_fp8x4_storage_t)lo | (__nv_fp8x4_storage_t)hi << 16;                                             \
    }                                                                                                               \
  };
EMUD_FP8X(__nv_fp8x2_e4m3, __nv_fp8x4_e4m3, __NV_E4M3)
EMUD_FP8X(__nv_fp8x2_e5m2, __nv_fp8x4_e5m2, __NV_E5M2)
#undef EMUD_FP8X

#endif
