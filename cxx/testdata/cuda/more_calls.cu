// The CUDA runtime calls of a program's harness beyond the basic ones
// (cxx/testdata/hip/more_calls.cpp's HIP twins): copies between devices,
// mapped pinned memory a kernel writes while the host polls
// cudaStreamQuery, pointer attributes, device attributes, kernels'
// attributes and occupancy (warps of 32), versions, settings and
// IPC memory handles, host functions on a stream, a captured graph and
// cudaDeviceReset, each result checked.
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

static int failures = 0;
#define EXPECT(cond)                                                                     \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::printf("cuda more_calls: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);  \
      failures++;                                                                        \
    }                                                                                    \
  } while (0)
#define OK(x) EXPECT((x) == cudaSuccess)

__global__ void count(unsigned* flag, unsigned* p, int rounds) {
  while (atomicAdd(flag, 0u) == 0) {
  }
  for (int i = 0; i < rounds; i++) atomicAdd(&p[threadIdx.x], 1u);
}

int main() {
  unsigned h[64], back[64];
  for (int i = 0; i < 64; i++) h[i] = 5 * i + 2;
  unsigned *a = nullptr, *b = nullptr;
  OK(cudaSetDevice(0));
  OK(cudaMalloc(&a, sizeof h));
  OK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice));
  OK(cudaSetDevice(1));
  OK(cudaMalloc(&b, sizeof h));
  OK(cudaMemcpyPeer(b, 1, a, 0, sizeof h));
  OK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
  EXPECT(std::memcmp(h, back, sizeof h) == 0);
  EXPECT(cudaMemcpyPeer(b, 1, a, 42, sizeof h) == cudaErrorInvalidDevice);
  (void)cudaGetLastError();

  cudaPointerAttributes at;
  OK(cudaPointerGetAttributes(&at, b));
  EXPECT(at.type == cudaMemoryTypeDevice && at.device == 1);

  unsigned* host = nullptr;
  OK(cudaHostAlloc(&host, 33 * sizeof(unsigned), cudaHostAllocMapped));
  for (int i = 0; i < 33; i++) host[i] = 0;
  unsigned* dev = nullptr;
  OK(cudaHostGetDevicePointer(&dev, host, 0));
  OK(cudaPointerGetAttributes(&at, host));
  EXPECT(at.type == cudaMemoryTypeHost);
  cudaStream_t s = nullptr;
  OK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -1));
  unsigned flags = 0;
  OK(cudaStreamGetFlags(s, &flags));
  EXPECT(flags == cudaStreamNonBlocking);
  count<<<1, 32, 0, s>>>(dev + 32, dev, 100);  // waits for the host's flag
  long polls = 0;
  cudaError_t e;
  while ((e = cudaStreamQuery(s)) == cudaErrorNotReady)
    if (++polls == 3) __atomic_store_n(&host[32], 1u, __ATOMIC_RELEASE);
  OK(e);
  unsigned sum = 0;
  for (int i = 0; i < 32; i++) sum += host[i];
  EXPECT(sum == 32 * 100);
  EXPECT(polls >= 3);
  std::printf("cuda more_calls: %u counted, %ld polls\n", sum, polls);
  OK(cudaStreamDestroy(s));
  OK(cudaFreeHost(host));

  int v = 0;
  OK(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0));
  EXPECT(v == 32);
  OK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
  EXPECT(v == 256);
  OK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0));
  EXPECT(v == 10);
  EXPECT(cudaDeviceGetAttribute(&v, (cudaDeviceAttr)11, 0) == cudaErrorInvalidValue);
  (void)cudaGetLastError();

  OK(cudaFuncSetAttribute(count, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10));
  cudaFuncAttributes fa;
  OK(cudaFuncGetAttributes(&fa, count));
  EXPECT(fa.maxThreadsPerBlock == 1024);
  int blocks = 0;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, count, 128, 0));
  EXPECT(blocks == 8);  // 32 warps a CU, 4 a block

  int rv = 0;
  OK(cudaRuntimeGetVersion(&rv));
  EXPECT(rv == CUDART_VERSION);
  OK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 32 << 20));
  size_t lim = 0;
  OK(cudaDeviceGetLimit(&lim, cudaLimitMallocHeapSize));
  EXPECT(lim == 32 << 20);
  OK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync | cudaDeviceMapHost | cudaDeviceLmemResizeToMax));
  OK(cudaGetDeviceFlags(&flags));
  EXPECT(flags == (cudaDeviceScheduleBlockingSync | cudaDeviceMapHost));

  // IPC: a handle made from a pointer into an allocation opens to the
  // allocation's base, as CUDA's does (HIP's opens to the pointer).
  cudaIpcMemHandle_t ih;
  OK(cudaIpcGetMemHandle(&ih, b + 16));
  unsigned* opened = nullptr;
  OK(cudaIpcOpenMemHandle(&opened, ih, cudaIpcMemLazyEnablePeerAccess));
  EXPECT(opened == b);
  OK(cudaIpcCloseMemHandle(opened));
  EXPECT(cudaIpcCloseMemHandle(opened) == cudaErrorInvalidResourceHandle);
  EXPECT(cudaIpcGetMemHandle(&ih, h) == cudaErrorInvalidDevicePointer);
  (void)cudaGetLastError();

  // A host function and a callback on a stream run after its work.
  static int ran = 0;
  static cudaError_t seen = cudaErrorUnknown;
  cudaStream_t hs = nullptr;
  OK(cudaStreamCreate(&hs));
  OK(cudaLaunchHostFunc(hs, [](void* p) { *static_cast<int*>(p) += 1; }, &ran));
  OK(cudaStreamAddCallback(hs, [](cudaStream_t, cudaError_t st, void* p) { seen = st; *static_cast<int*>(p) += 10; }, &ran, 0));
  OK(cudaStreamSynchronize(hs));
  EXPECT(ran == 11 && seen == cudaSuccess);
  // A captured memset runs when its graph is launched, not before.
  OK(cudaStreamBeginCapture(hs, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(a, 7, sizeof h, hs));
  cudaGraph_t graph = nullptr;
  OK(cudaStreamEndCapture(hs, &graph));
  OK(cudaMemcpy(back, a, sizeof back, cudaMemcpyDeviceToHost));
  EXPECT(std::memcmp(h, back, sizeof h) == 0);
  cudaGraphExec_t exec = nullptr;
  OK(cudaGraphInstantiate(&exec, graph, 0));
  OK(cudaGraphLaunch(exec, hs));
  OK(cudaStreamSynchronize(hs));
  OK(cudaMemcpy(back, a, sizeof back, cudaMemcpyDeviceToHost));
  EXPECT(back[0] == 0x07070707u);
  OK(cudaGraphExecDestroy(exec));
  OK(cudaGraphDestroy(graph));
  OK(cudaStreamDestroy(hs));

  OK(cudaDeviceReset());  // device 1: b is freed
  EXPECT(cudaFree(b) == cudaErrorInvalidValue);
  OK(cudaSetDevice(0));
  OK(cudaFree(a));
  std::printf("cuda more_calls: %s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
