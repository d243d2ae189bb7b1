// emud's cuda_bf16.h: CUDA's bfloat16 type and intrinsics
// (__nv_bfloat16, __nv_bfloat162, __float2bfloat16, __hadd, ...), bit for
// bit in software (emud/bf16.h). Written for emud
// (github.com/emud-dev/emud); not NVIDIA's header.
#ifndef EMUD_CUDA_BF16_H
#define EMUD_CUDA_BF16_H
// What CUDA's header defines, by which programs (nccl-tests) test for it.
#define __CUDA_BF16_TYPES_EXIST__
#include "cuda_fp16.h"
#define EMUD_BF16 __nv_bfloat16
#define EMUD_BF162 __nv_bfloat162
#define EMUD_BF16_RAW __nv_bfloat16_raw
#define EMUD_BF162_RAW __nv_bfloat162_raw
#include "emud/bf16.h"
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
#endif
