// The test harness's device side, in a header as benchmark suites keep
// it (nccl-tests' common.h has its launch helpers): a kernel launched by
// a template helper here, a kernel with a __shared__ buffer, and code for
// newer GPUs under __CUDA_ARCH__ that emud never compiles. emud c++
// rewrites this header's launches and shared declarations as it does a
// source's (cxx/headers.go), from a copy, so errors and lanes' sites
// still name this file.
#ifndef ONE_THREAD_HARNESS_H
#define ONE_THREAD_HARNESS_H

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

// fill writes v * (i % 7 + 1) to element i: small integers, so every
// reduction below is exact whatever the order of its additions.
template <typename T>
__global__ void fill(T* buf, size_t n, float v) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    buf[i] = T(v * (float)(i % 7 + 1));
}

template <typename T>
inline cudaError_t launchFill(T* buf, size_t n, float v, cudaStream_t s) {
  fill<T><<<2, 64, 0, s>>>(buf, n, v);
  return cudaGetLastError();
}

// blockSum adds a block's floats through shared memory: out[blockIdx.x].
__global__ void blockSum(const float* in, float* out) {
  __shared__ float part[64];
  part[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < 64; i++) s += part[i];
    out[blockIdx.x] = s;
  }
}

#if __CUDA_ARCH__ >= 900
// Hopper's multimem reduction: never compiled by emud (no __CUDA_ARCH__),
// so its PTX is not checked either.
__device__ inline float multimemSum(const float* p) {
  float r;
  asm volatile("multimem.ld_reduce.global.add.f32 %0, [%1];" : "=f"(r) : "l"(p) : "memory");
  return r;
}
#endif

#endif
