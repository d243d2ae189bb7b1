// The CUDA tutorials' launch, under emud's cuda_runtime.h: host dim3s
// named blockDim and gridDim, and a launch helper whose parameters are
// named so, launching a 2-D matrix add whose kernel reads the built-ins
// (cxx TestBuiltinNames). Prints PASS or what was wrong.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#define CUDACHECK(x)                                                                                \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::printf("names_cu: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                                     \
    }                                                                                               \
  } while (0)

__global__ void matAdd(const float* a, const float* b, float* c, int n, int m) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < n && row < m) c[row * n + col] = a[row * n + col] + b[row * n + col];
  if (blockIdx.x == 1 && blockIdx.y == 1 && threadIdx.x == 2 && threadIdx.y == 5)
    printf("names_cu: thread (%u, %u) of block (%u, %u), warpSize %d\n", threadIdx.x, threadIdx.y, blockIdx.x, blockIdx.y,
           warpSize);
}

static cudaError_t launch(dim3 gridDim, dim3 blockDim, const float* a, const float* b, float* c, int n, int m) {
  matAdd<<<gridDim, blockDim>>>(a, b, c, n, m);
  return cudaGetLastError();
}

int main() {
  const int n = 24, m = 20;
  std::vector<float> ha(n * m), hb(n * m), hc(n * m);
  for (int i = 0; i < n * m; i++) ha[i] = (float)i, hb[i] = (float)(3 * i);
  float *a, *b, *c;
  CUDACHECK(cudaMalloc(&a, n * m * sizeof(float)));
  CUDACHECK(cudaMalloc(&b, n * m * sizeof(float)));
  CUDACHECK(cudaMalloc(&c, n * m * sizeof(float)));
  CUDACHECK(cudaMemcpy(a, ha.data(), n * m * sizeof(float), cudaMemcpyHostToDevice));
  CUDACHECK(cudaMemcpy(b, hb.data(), n * m * sizeof(float), cudaMemcpyHostToDevice));
  int failures = 0;
  for (int pass = 0; pass < 2; pass++) {
    CUDACHECK(cudaMemset(c, 0, n * m * sizeof(float)));
    dim3 blockDim(16, 16);
    dim3 gridDim((n + blockDim.x - 1) / blockDim.x, (m + blockDim.y - 1) / blockDim.y);
    if (pass == 0) {
      matAdd<<<gridDim, blockDim>>>(a, b, c, n, m);
    } else {
      CUDACHECK(launch(gridDim, blockDim, a, b, c, n, m));
    }
    CUDACHECK(cudaDeviceSynchronize());
    CUDACHECK(cudaMemcpy(hc.data(), c, n * m * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n * m; i++)
      if (hc[i] != (float)(4 * i)) {
        if (failures++ < 5) std::printf("names_cu: pass %d: c[%d] is %g, not %d\n", pass, i, hc[i], 4 * i);
      }
  }
  if (failures) {
    std::printf("names_cu: FAIL (%d)\n", failures);
    return 1;
  }
  std::printf("names_cu: PASS\n");
  return 0;
}
