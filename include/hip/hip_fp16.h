// emud's hip/hip_fp16.h: HIP's half-precision type and intrinsics (__half,
// __half2, __float2half, __hadd, ...; HIP names them as CUDA does), bit for
// bit in software (emud/half.h). Written for emud
// (github.com/emud-dev/emud); not AMD's header.
#ifndef EMUD_HIP_FP16_H
#define EMUD_HIP_FP16_H
#include "hip/hip_runtime.h"
#include "emud/half.h"
#endif
