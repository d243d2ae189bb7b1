// A CUDA program on emud: a block-wide sum by warp shuffles (warps of
// 32), a ballot, a cuda::atomic_ref total across blocks, streams, events
// and the runtime's error reporting. Prints PASS or what was wrong.
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDACHECK(x)                                                                                      \
  do {                                                                                                    \
    cudaError_t e_ = (x);                                                                                 \
    if (e_ != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
      std::exit(1);                                                                                       \
    }                                                                                                     \
  } while (0)

__global__ void blockSum(const int* in, int n, int* perBlock, unsigned long long* total, unsigned* oddWarps) {
  __shared__ int warpSums[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  unsigned odd = __ballot_sync(0xffffffffu, i < n && (in[i] & 1));
  int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  if (lane == 0) {
    warpSums[warp] = v;
    oddWarps[blockIdx.x * (blockDim.x / 32) + warp] = odd;
  }
  __syncthreads();
  if (warp == 0) {
    int s = lane < (int)(blockDim.x / warpSize) ? warpSums[lane] : 0;
    for (int d = 16; d > 0; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);
    if (lane == 0) {
      perBlock[blockIdx.x] = s;
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> t(*total);
      t.fetch_add((unsigned long long)s, cuda::memory_order_relaxed);
    }
  }
}

int main() {
  const int blocks = 4, threads = 128, n = blocks * threads - 5;
  int dev = -1;
  if (cudaSetDevice(99) != cudaErrorInvalidDevice) {
    std::printf("FAIL: cudaSetDevice(99) did not fail with cudaErrorInvalidDevice\n");
    return 1;
  }
  if (cudaGetLastError() != cudaErrorInvalidDevice || cudaGetLastError() != cudaSuccess) {
    std::printf("FAIL: cudaGetLastError did not return and clear the error\n");
    return 1;
  }
  CUDACHECK(cudaSetDevice(1));
  CUDACHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CUDACHECK(cudaGetDeviceProperties(&prop, dev));
  std::vector<int> h(n);
  long long want = 0;
  for (int i = 0; i < n; i++) want += h[i] = (i * 7) % 13;
  int *in, *perBlock;
  unsigned long long* total;
  unsigned* oddWarps;
  CUDACHECK(cudaMalloc(&in, n * sizeof(int)));
  CUDACHECK(cudaMalloc(&perBlock, blocks * sizeof(int)));
  CUDACHECK(cudaMalloc(&total, sizeof *total));
  CUDACHECK(cudaMalloc(&oddWarps, blocks * threads / 32 * sizeof(unsigned)));
  cudaStream_t s;
  cudaEvent_t start, stop;
  CUDACHECK(cudaStreamCreate(&s));
  CUDACHECK(cudaEventCreate(&start));
  CUDACHECK(cudaEventCreate(&stop));
  CUDACHECK(cudaMemcpyAsync(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice, s));
  CUDACHECK(cudaMemsetAsync(total, 0, sizeof *total, s));
  CUDACHECK(cudaEventRecord(start, s));
  blockSum<<<blocks, threads, 0, s>>>(in, n, perBlock, total, oddWarps);
  CUDACHECK(cudaGetLastError());
  CUDACHECK(cudaEventRecord(stop, s));
  CUDACHECK(cudaStreamSynchronize(s));
  float ms = -1;
  CUDACHECK(cudaEventElapsedTime(&ms, start, stop));
  unsigned long long got = 0;
  std::vector<int> pb(blocks);
  std::vector<unsigned> ow(blocks * threads / 32);
  CUDACHECK(cudaMemcpy(&got, total, sizeof got, cudaMemcpyDeviceToHost));
  CUDACHECK(cudaMemcpy(pb.data(), perBlock, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CUDACHECK(cudaMemcpy(ow.data(), oddWarps, ow.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  int errors = 0;
  if ((long long)got != want) errors++, std::printf("total %llu, want %lld\n", got, want);
  for (int b = 0; b < blocks; b++) {
    long long w = 0;
    for (int i = b * threads; i < (b + 1) * threads && i < n; i++) w += h[i];
    if (pb[b] != w) errors++, std::printf("block %d: %d, want %lld\n", b, pb[b], w);
  }
  for (size_t w = 0; w < ow.size(); w++) {
    unsigned m = 0;
    for (int l = 0; l < 32; l++) {
      int i = (int)w * 32 + l;
      if (i < n && (h[i] & 1)) m |= 1u << l;
    }
    if (ow[w] != m) errors++, std::printf("warp %zu: ballot %#x, want %#x\n", w, ow[w], m);
  }
  if (prop.warpSize != 32) errors++, std::printf("warpSize %d\n", prop.warpSize);
  CUDACHECK(cudaFree(in));
  CUDACHECK(cudaStreamDestroy(s));
  std::printf("warp_reduce: %s (device %d, %d warps of 32)\n", errors ? "FAIL" : "PASS", dev, blocks * threads / 32);
  return errors ? 1 : 0;
}
