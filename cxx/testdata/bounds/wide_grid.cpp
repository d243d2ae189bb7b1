// A grid far beyond what a GPU keeps resident: argv[1] blocks (default
// 4096) of 256 threads, 1 Mi lanes at the default. Each lane stores its
// input doubled in the block's shared memory, meets the block at
// __syncthreads and writes its neighbour's value plus its block index,
// so a lane that ran before its block's stores, or in the wrong block,
// shows in the output. Under emud a launch makes a block's lanes when
// the block is dispatched and frees them when it retires, so the peak
// memory is that of the resident blocks, not of the grid (cxx
// TestWideGridBounded).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hip/hip_runtime.h"

constexpr int kThreads = 256;

#define CHECK(x)                                                    \
  do {                                                              \
    if ((x) != hipSuccess) {                                        \
      std::fprintf(stderr, "wide_grid: %s failed\n", #x);           \
      return 1;                                                     \
    }                                                               \
  } while (0)

__global__ void neighbours(const int* in, int* out) {
  __shared__ int tile[kThreads];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = 2 * in[i];
  __syncthreads();
  out[i] = tile[(threadIdx.x + 1) % kThreads] + (int)blockIdx.x;
}

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 4096;
  if (blocks < 1) return 1;
  const size_t n = (size_t)blocks * kThreads;
  std::vector<int> h(n);
  for (size_t i = 0; i < n; i++) h[i] = (int)(i * 7 + 3);
  int *in = nullptr, *out = nullptr;
  CHECK(hipMalloc(&in, n * sizeof(int)));
  CHECK(hipMalloc(&out, n * sizeof(int)));
  CHECK(hipMemcpy(in, h.data(), n * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemset(out, 0xff, n * sizeof(int)));
  neighbours<<<blocks, kThreads>>>(in, out);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  std::vector<int> got(n);
  CHECK(hipMemcpy(got.data(), out, n * sizeof(int), hipMemcpyDeviceToHost));
  int errors = 0;
  for (size_t i = 0; i < n; i++) {
    size_t b = i / kThreads, t = i % kThreads;
    int want = 2 * h[b * kThreads + (t + 1) % kThreads] + (int)b;
    if (got[i] != want && errors++ < 4) std::printf("out[%zu] = %d, want %d\n", i, got[i], want);
  }
  std::printf("wide_grid: %d blocks of %d lanes, %s\n", blocks, kThreads, errors ? "FAIL" : "PASS");
  return errors ? 1 : 0;
}
