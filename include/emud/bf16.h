// emud's bfloat16 type and its intrinsics, the API CUDA's cuda_bf16.h
// (__nv_bfloat16) and HIP's hip/hip_bf16.h (__hip_bfloat16) share: the
// same surface as emud/half.h's __half, from the same body
// (emud/lowp_type.h), on 8 exponent and 7 stored significand bits, bit
// for bit as the device computes them (emud/lowp.h). The type's name is
// the including API's:
// cuda_bf16.h and hip/hip_bf16.h set EMUD_BF16 and its kin before
// including this. Written for emud (github.com/emud-dev/emud); not
// NVIDIA's or AMD's header. Partial as emud/half.h is (no atomics on it).
#ifndef EMUD_BF16_H
#define EMUD_BF16_H

#include "emud/half.h"

#if !defined(EMUD_BF16) || !defined(EMUD_BF162) || !defined(EMUD_BF16_RAW) || !defined(EMUD_BF162_RAW)
#error "emud: include cuda_bf16.h or hip/hip_bf16.h, not emud/bf16.h"
#endif

#define EMUD_LP EMUD_BF16
#define EMUD_LP2 EMUD_BF162
#define EMUD_LP_RAW EMUD_BF16_RAW
#define EMUD_LP2_RAW EMUD_BF162_RAW
#define EMUD_LP_FMT kBF16
#define EMUD_LP_N bfloat16
#define EMUD_LP_N2 bfloat162
#define EMUD_LP_ONE 0x3F80
#define EMUD_LP_INF 0x7F80
#include "emud/lowp_type.h"

#endif
