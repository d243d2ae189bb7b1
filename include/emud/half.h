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

#define EMUD_LP __half
#define EMUD_LP2 __half2
#define EMUD_LP_RAW __half_raw
#define EMUD_LP2_RAW __half2_raw
#define EMUD_LP_FMT kHalf
#define EMUD_LP_N half
#define EMUD_LP_N2 half2
#define EMUD_LP_ONE 0x3C00
#define EMUD_LP_INF 0x7C00
#include "emud/lowp_type.h"

typedef __half half;
typedef __half2 half2;

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)

#endif
