// Every HIP call of issue 39 that MORI's code uses, with its result
// checked: device properties and attributes (an MI355X's figures), memory
// information, peer access, hipExtMallocWithFlags, hipMemsetD8/D16/D32
// and their async forms, host memory (hipHostMalloc: written by a lane
// through hipHostGetDevicePointer, read by the host), pointer attributes,
// and one stream waiting for another's event.
#include <cstdio>
#include <cstring>

#include "hip/hip_runtime.h"

static int failures = 0;
#define EXPECT(cond)                                                               \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::printf("hip_calls: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);  \
      failures++;                                                                  \
    }                                                                              \
  } while (0)
#define OK(x) EXPECT((x) == hipSuccess)

__global__ void store_u32(unsigned* p, unsigned v) { p[threadIdx.x] = v + threadIdx.x; }
__global__ void add_one(const unsigned* src, unsigned* dst) { dst[threadIdx.x] = src[threadIdx.x] + 1; }

static void properties() {
  hipDeviceProp_t p;
  OK(hipGetDeviceProperties(&p, 0));
  EXPECT(p.totalGlobalMem == (size_t)288 << 30);
  EXPECT(p.multiProcessorCount == 256);
  EXPECT(p.warpSize == warpSize);
  EXPECT(p.clockRate == 2400000);
  EXPECT(p.memoryBusWidth == 8192);
  EXPECT(std::strncmp(p.gcnArchName, warpSize == 32 ? "gfx1250" : "gfx950", 6) == 0);
  int v = 0;
  OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMultiprocessorCount, 0));
  EXPECT(v == p.multiProcessorCount);
  OK(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, 0));
  EXPECT(v == warpSize);
  OK(hipDeviceGetAttribute(&v, hipDeviceAttributeClockRate, 0));
  EXPECT(v == p.clockRate);
  OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMaxSharedMemoryPerBlock, 0));
  EXPECT(v == (int)p.sharedMemPerBlock);
  OK(hipDeviceGetAttribute(&v, hipDeviceAttributeComputeCapabilityMajor, 0));
  EXPECT(v == p.major);
  EXPECT(hipDeviceGetAttribute(&v, (hipDeviceAttribute_t)9999, 0) == hipErrorInvalidValue);
  EXPECT(hipGetLastError() == hipErrorInvalidValue);
  EXPECT(hipGetDeviceProperties(&p, 99) == hipErrorInvalidDevice);
  EXPECT(hipGetLastError() == hipErrorInvalidDevice);
}

static void memory_info() {
  size_t free0 = 0, total = 0, free1 = 0;
  OK(hipMemGetInfo(&free0, &total));
  EXPECT(total == (size_t)288 << 30);
  EXPECT(free0 > 0 && free0 <= total);
  void* p = nullptr;
  OK(hipMalloc(&p, 1 << 20));
  OK(hipMemGetInfo(&free1, &total));
  EXPECT(free0 - free1 >= (1 << 20));
  OK(hipFree(p));
}

static void peers() {
  int can = -1;
  OK(hipDeviceCanAccessPeer(&can, 0, 1));
  EXPECT(can == 1);
  OK(hipDeviceCanAccessPeer(&can, 0, 0));
  EXPECT(can == 0);
  OK(hipSetDevice(0));
  OK(hipDeviceEnablePeerAccess(1, 0));
  EXPECT(hipDeviceEnablePeerAccess(1, 0) == hipErrorPeerAccessAlreadyEnabled);
  EXPECT(hipDeviceEnablePeerAccess(0, 0) == hipErrorInvalidDevice);
  OK(hipDeviceDisablePeerAccess(1));
  EXPECT(hipDeviceDisablePeerAccess(1) == hipErrorPeerAccessNotEnabled);
  (void)hipGetLastError();
}

static void ext_malloc_and_memsets() {
  const int n = 256;
  unsigned* d = nullptr;
  OK(hipExtMallocWithFlags((void**)&d, n * sizeof(unsigned), hipDeviceMallocFinegrained));
  unsigned* u = nullptr;
  OK(hipExtMallocWithFlags((void**)&u, n * sizeof(unsigned), hipDeviceMallocUncached));
  void* bad = nullptr;
  EXPECT(hipExtMallocWithFlags(&bad, 64, 0x100) == hipErrorInvalidValue);
  (void)hipGetLastError();

  unsigned h[n];
  OK(hipMemsetD32(d, (int)0xdeadbeef, n));
  OK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  int bad32 = 0;
  for (int i = 0; i < n; i++) bad32 += h[i] != 0xdeadbeefu;
  EXPECT(bad32 == 0);
  OK(hipMemsetD16(d, 0x1234, 2 * n));
  OK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 0x12341234u && h[n - 1] == 0x12341234u);
  OK(hipMemsetD8(d, 0x5a, 4 * n - 1));  // all but the last byte
  OK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 0x5a5a5a5au && h[n - 1] == 0x125a5a5au);

  hipStream_t s;
  OK(hipStreamCreate(&s));
  OK(hipMemsetD32Async(u, 7, n, s));
  OK(hipMemsetD16Async(u, 0x0101, 2, s));  // the first word only
  OK(hipMemsetD8Async((char*)u + 4, 2, 1, s));
  OK(hipStreamSynchronize(s));
  OK(hipMemcpy(h, u, sizeof h, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 0x01010101u && h[1] == 2 && h[2] == 7 && h[n - 1] == 7);
  // The value of an async memset is the call's, whatever the calls after
  // it pass (it was once read from their arguments when it landed).
  OK(hipMemsetAsync(u, 0x3c, n * sizeof(unsigned), s));
  OK(hipMemsetD8(d, 0x11, 4));
  OK(hipStreamSynchronize(s));
  OK(hipMemcpy(h, u, sizeof h, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 0x3c3c3c3cu && h[n - 1] == 0x3c3c3c3cu);
  EXPECT(hipMemsetD32((char*)d + 2, 0, 4) == hipErrorInvalidValue);  // not aligned to its elements
  (void)hipGetLastError();
  OK(hipStreamDestroy(s));
}

static void host_memory() {
  unsigned* h = nullptr;
  OK(hipHostMalloc((void**)&h, 64 * sizeof(unsigned), hipHostMallocMapped | hipHostMallocCoherent));
  EXPECT(h != nullptr);
  unsigned* hd = nullptr;
  OK(hipHostGetDevicePointer((void**)&hd, h, 0));
  EXPECT(hd == h);
  store_u32<<<1, 64>>>(hd, 100);  // a lane stores to host memory
  OK(hipDeviceSynchronize());
  int wrong = 0;
  for (int i = 0; i < 64; i++) wrong += h[i] != 100u + i;
  EXPECT(wrong == 0);

  unsigned* d = nullptr;
  OK(hipMalloc(&d, 64 * sizeof(unsigned)));
  OK(hipMemcpy(d, h, 64 * sizeof(unsigned), hipMemcpyHostToDevice));
  unsigned back[64];
  OK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
  EXPECT(back[63] == 163);

  hipPointerAttribute_t at;
  OK(hipPointerGetAttributes(&at, h + 3));
  EXPECT(at.type == hipMemoryTypeHost && at.hostPointer == h + 3);
  OK(hipPointerGetAttributes(&at, d));
  EXPECT(at.type == hipMemoryTypeDevice && at.device == 0 && at.devicePointer == d);
  OK(hipSetDevice(1));
  unsigned* d1 = nullptr;
  OK(hipMalloc(&d1, 64));
  OK(hipPointerGetAttributes(&at, d1));
  EXPECT(at.type == hipMemoryTypeDevice && at.device == 1);
  OK(hipSetDevice(0));
  OK(hipPointerGetAttributes(&at, back));
  EXPECT(at.type == hipMemoryTypeUnregistered);

  void* none = nullptr;
  EXPECT(hipHostGetDevicePointer(&none, back, 0) == hipErrorInvalidValue);
  OK(hipHostFree(h));
  EXPECT(hipHostFree(h) == hipErrorInvalidValue);
  (void)hipGetLastError();
}

static void stream_waits_event() {
  unsigned *x = nullptr, *y = nullptr;
  OK(hipMalloc(&x, 64 * sizeof(unsigned)));
  OK(hipMalloc(&y, 64 * sizeof(unsigned)));
  hipStream_t a, b;
  OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  hipEvent_t ev;
  OK(hipEventCreate(&ev));
  OK(hipEventQuery(ev));  // never recorded: complete, as in HIP
  store_u32<<<1, 64, 0, a>>>(x, 1000);
  OK(hipEventRecord(ev, a));
  OK(hipStreamWaitEvent(b, ev, 0));
  add_one<<<1, 64, 0, b>>>(x, y);
  OK(hipStreamSynchronize(b));
  OK(hipEventQuery(ev));
  unsigned h[64];
  OK(hipMemcpy(h, y, sizeof h, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 1001 && h[63] == 1064);
  EXPECT(hipStreamWaitEvent(b, (hipEvent_t)(uintptr_t)12345, 0) == hipErrorInvalidHandle);
  (void)hipGetLastError();
  OK(hipEventDestroy(ev));
  OK(hipStreamDestroy(a));
  OK(hipStreamDestroy(b));
}

int main() {
  properties();
  memory_info();
  peers();
  ext_malloc_and_memsets();
  host_memory();
  stream_waits_event();
  if (failures) {
    std::printf("hip_calls: FAIL (%d)\n", failures);
    return 1;
  }
  std::printf("hip_calls: PASS\n");
  return 0;
}
