// The kernels of the library, and the host functions that launch them.
#include "kernels.hpp"

__global__ void saxpy_kernel(float a, const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}

__global__ void block_sum_kernel(const int* in, int* out) {
  __shared__ int part[256];
  int t = threadIdx.x;
  part[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = part[0];
}

hipError_t saxpy(float a, const float* x, float* y, int n, hipStream_t s) {
  saxpy_kernel<<<4, 64, 0, s>>>(a, x, y, n);
  return hipGetLastError();
}

hipError_t block_sums(const int* in, int* out, int blocks, hipStream_t s) {
  hipLaunchKernelGGL(block_sum_kernel, dim3(blocks), dim3(256), 0, s, in, out);
  return hipGetLastError();
}
