// cudaStreamPerThread and cudaStreamLegacy. argv[1]:
//   ordered  each of two threads fills its own buffer with a kernel on
//            its per-thread stream, synchronizes that stream and checks
//            the buffer; then, with no synchronize, a kernel on the
//            per-thread stream and a cudaMemcpy on the legacy stream
//            (which waits for it) hand a value from one to the other;
//            destroying a default stream is refused;
//   cross    (planted) thread 1 reads, on its per-thread stream, the
//            buffer thread 0's per-thread stream writes, ordered by
//            nothing (per-thread streams do not wait for each other).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <thread>

__global__ void fill(int* p, int n, int v) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) p[i] = v + i;
}
__global__ void copyPlusOne(const int* src, int* dst, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i] + 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ordered";
  const int n = 256;
  int *a = nullptr, *b = nullptr;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  int bad = 0;
  if (!std::strcmp(mode, "cross")) {
    std::thread t0([&] {
      fill<<<1, 64, 0, cudaStreamPerThread>>>(a, n, 100);
      cudaStreamSynchronize(cudaStreamPerThread);
    });
    std::thread t1([&] {
      copyPlusOne<<<1, 64, 0, cudaStreamPerThread>>>(a, b, n);
      cudaStreamSynchronize(cudaStreamPerThread);
    });
    t0.join();
    t1.join();
    std::printf("per_thread cross: done\n");
    return 0;
  }
  int* bufs[2] = {a, b};
  std::thread ts[2];
  int sums[2] = {0, 0};
  for (int k = 0; k < 2; k++)
    ts[k] = std::thread([&, k] {
      fill<<<1, 64, 0, cudaStreamPerThread>>>(bufs[k], n, 1000 * (k + 1));
      cudaStreamSynchronize(cudaStreamPerThread);
      int h[n];
      cudaMemcpy(h, bufs[k], sizeof h, cudaMemcpyDeviceToHost);
      for (int i = 0; i < n; i++) sums[k] += h[i] != 1000 * (k + 1) + i;
    });
  for (auto& t : ts) t.join();
  bad += sums[0] + sums[1];
  // The legacy stream waits for the per-thread stream's kernel.
  fill<<<1, 64, 0, cudaStreamPerThread>>>(a, n, 7);
  int h[n];
  cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) bad += h[i] != 7 + i;
  copyPlusOne<<<1, 64, 0, cudaStreamLegacy>>>(a, b, n);
  cudaMemcpyAsync(h, b, sizeof h, cudaMemcpyDeviceToHost, cudaStreamPerThread);
  cudaStreamSynchronize(cudaStreamPerThread);
  for (int i = 0; i < n; i++) bad += h[i] != 8 + i;
  unsigned flags = 99;
  cudaStreamGetFlags(cudaStreamPerThread, &flags);
  bad += flags != 0;
  bad += cudaStreamDestroy(cudaStreamPerThread) == cudaSuccess;
  bad += cudaStreamDestroy(cudaStreamLegacy) == cudaSuccess;
  std::printf("per_thread ordered: %d wrong\n", bad);
  return bad != 0;
}
