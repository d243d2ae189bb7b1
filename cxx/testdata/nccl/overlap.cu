// Data-parallel overlap, as a training step does it: per rank a compute
// stream and a communication stream. Each iteration, kernels fill and
// scale one of two gradient buffers on the compute stream; an event hands
// the buffer to the communication stream, which all-reduces it in place
// while the next iteration's kernels fill the other buffer; before a
// buffer is filled again, the compute stream waits for the event after
// its last all-reduce. The host checks both buffers' last sums.
// argv[1] plants a bug: "nowait" drops the communication stream's wait
// for the filled buffer, "nodone" the compute stream's wait before
// reusing one (each a race the detector names).
#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

__global__ void fill(float* g, int n, int rank, int iter) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] = (float)(rank + 1) * (float)(iter + 1) + (float)i;
}
__global__ void scale(float* g, int n, float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] *= f;
}

int main(int argc, char** argv) {
  const char* plant = argc > 1 ? argv[1] : "";
  const bool noWait = !std::strcmp(plant, "nowait"), noDone = !std::strcmp(plant, "nodone");
  int nDev = 0;
  cudaGetDeviceCount(&nDev);
  const int n = 256, iters = 4;
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  std::vector<int> bad(nDev);
  std::vector<std::thread> ts;
  for (int r = 0; r < nDev; r++)
    ts.emplace_back([&, r] {
      cudaSetDevice(r);
      ncclComm_t comm;
      ncclCommInitRank(&comm, nDev, id, r);
      cudaStream_t comp, net;
      cudaStreamCreateWithFlags(&comp, cudaStreamNonBlocking);
      cudaStreamCreateWithFlags(&net, cudaStreamNonBlocking);
      float* g[2];
      cudaEvent_t ready[2], done[2];
      for (int b = 0; b < 2; b++) {
        cudaMalloc(&g[b], n * sizeof(float));
        cudaEventCreateWithFlags(&ready[b], cudaEventDisableTiming);
        cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming);
      }
      for (int it = 0; it < iters; it++) {
        int b = it % 2;
        if (it >= 2 && !noDone) cudaStreamWaitEvent(comp, done[b], 0);
        fill<<<2, 128, 0, comp>>>(g[b], n, r, it);
        scale<<<2, 128, 0, comp>>>(g[b], n, 0.5f);
        cudaEventRecord(ready[b], comp);
        if (!noWait) cudaStreamWaitEvent(net, ready[b], 0);
        ncclAllReduce(g[b], g[b], n, ncclFloat, ncclSum, comm, net);
        cudaEventRecord(done[b], net);
      }
      cudaStreamSynchronize(net);
      std::vector<float> h(n);
      for (int b = 0; b < 2; b++) {
        int it = iters - 2 + b;
        cudaMemcpy(h.data(), g[b], n * sizeof(float), cudaMemcpyDeviceToHost);
        for (int i = 0; i < n; i++) {
          float want = 0;
          for (int q = 0; q < nDev; q++) want += ((float)(q + 1) * (float)(it + 1) + (float)i) * 0.5f;
          if (h[i] != want) { bad[r]++; break; }
        }
      }
      for (int b = 0; b < 2; b++) cudaFree(g[b]);
      cudaStreamDestroy(comp);
      cudaStreamDestroy(net);
      ncclCommDestroy(comm);
    });
  for (auto& t : ts) t.join();
  int total = 0;
  for (int x : bad) total += x;
  printf(total ? "overlap: FAIL\n" : "overlap: PASS\n");
  return total != 0;
}
