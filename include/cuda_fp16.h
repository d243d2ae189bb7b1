// emud's cuda_fp16.h: CUDA's half-precision type and intrinsics (__half,
// __half2, __float2half, __hadd, ...), bit for bit in software
// (emud/half.h says what is there and what is partial). Written for emud
// (github.com/emud-dev/emud); not NVIDIA's header.
#ifndef EMUD_CUDA_FP16_H
#define EMUD_CUDA_FP16_H
#include "cuda_runtime.h"
#include "emud/half.h"
#endif
