// emud's hip/hip_bf16.h: HIP's bfloat16 type and intrinsics
// (__hip_bfloat16, __hip_bfloat162, __float2bfloat16, __hadd, ...), bit
// for bit in software (emud/bf16.h). Written for emud
// (github.com/emud-dev/emud); not AMD's header. Not here: the older
// hip_bfloat16 class of hip/hip_bfloat16.h.
#ifndef EMUD_HIP_BF16_H
#define EMUD_HIP_BF16_H
#include "hip/hip_fp16.h"
#define EMUD_BF16 __hip_bfloat16
#define EMUD_BF162 __hip_bfloat162
#define EMUD_BF16_RAW __hip_bfloat16_raw
#define EMUD_BF162_RAW __hip_bfloat162_raw
#include "emud/bf16.h"
#endif
