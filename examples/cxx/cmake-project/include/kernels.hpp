// The kernel library's interface: host functions that launch its kernels
// on a stream. Test programs include this, not the kernels' source.
#pragma once
#include <hip/hip_runtime.h>

// y[i] = a * x[i] + y[i] for i < n, on stream s.
hipError_t saxpy(float a, const float* x, float* y, int n, hipStream_t s);

// out[b] = the sum of in[b*256 .. b*256+255] (in has blocks*256 ints), a
// block reduction in shared memory.
hipError_t block_sums(const int* in, int* out, int blocks, hipStream_t s);
