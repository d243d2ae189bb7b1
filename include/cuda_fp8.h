// emud's cuda_fp8.h: CUDA's 8-bit floating-point types (OCP E4M3 and
// E5M2: __nv_fp8_e4m3, __nv_fp8_e5m2) and their conversions
// (__nv_cvt_float_to_fp8 and kin, with __NV_NOSAT or __NV_SATFINITE), bit
// for bit in software (emud/lowp.h). Written for emud
// (github.com/emud-dev/emud); not NVIDIA's header. Partial: the two- and
// four-wide structs (__nv_fp8x2_e4m3, ...) are not here; the storage
// conversions of pairs are.
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

#endif
