// The HIP calls a program's harness commonly makes beyond MORI's own
// (examples/cxx/hip_calls.cpp has those): copies by kind and between
// devices, stream queries and flags, device queries, versions, settings,
// kernels' attributes and occupancy, and hipDeviceReset, each result
// checked. "query" alone runs the hipStreamQuery poll, whose kernel
// writes pinned host memory the host reads after the query succeeds
// (race-clean under EMUD_RACE=1: a successful query orders the stream's
// work before the caller); "racy", its twin, clears it with a
// hipMemsetAsync on another stream while the kernel runs (a race).
#include <cstdio>
#include <cstring>

#include "hip/hip_ext.h"

static int failures = 0;
#define EXPECT(cond)                                                                \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::printf("more_calls: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);  \
      failures++;                                                                   \
    }                                                                               \
  } while (0)
#define OK(x) EXPECT((x) == hipSuccess)

constexpr int kWords = 256;

__global__ void fill(unsigned* p, unsigned v) { p[threadIdx.x] = v + threadIdx.x; }
__global__ void count(unsigned* host, int rounds) {
  for (int i = 0; i < rounds; i++) atomicAdd(&host[threadIdx.x], 1u);
}
// gate counts once the host has set *flag: a kernel that waits for the
// host while the host polls hipStreamQuery.
__global__ void gate(unsigned* flag, unsigned* host, int rounds) {
  while (atomicAdd(flag, 0u) == 0) {
  }
  for (int i = 0; i < rounds; i++) atomicAdd(&host[threadIdx.x], 1u);
}

static void copies() {
  unsigned h[kWords], back[kWords];
  for (int i = 0; i < kWords; i++) h[i] = 3 * i + 1;
  unsigned *a = nullptr, *b = nullptr, *c = nullptr;
  OK(hipSetDevice(0));
  OK(hipMalloc(&a, sizeof h));
  OK(hipSetDevice(1));
  OK(hipMalloc(&b, sizeof h));
  OK(hipMalloc(&c, sizeof h));
  OK(hipMemcpyHtoD(a, h, sizeof h));
  OK(hipMemcpyPeer(b, 1, a, 0, sizeof h));
  std::memset(back, 0, sizeof back);
  OK(hipMemcpyDtoH(back, b, sizeof back));
  EXPECT(std::memcmp(h, back, sizeof h) == 0);
  EXPECT(hipMemcpyPeer(b, 1, a, 99, sizeof h) == hipErrorInvalidDevice);
  EXPECT(hipGetLastError() == hipErrorInvalidDevice);
  hipStream_t s = nullptr;
  OK(hipStreamCreate(&s));
  OK(hipMemcpyDtoDAsync(c, b, sizeof h, s));
  OK(hipMemcpyPeerAsync(a, 0, c, 1, sizeof h, s));
  std::memset(back, 0, sizeof back);
  OK(hipMemcpyDtoHAsync(back, a, sizeof back, s));
  OK(hipStreamSynchronize(s));
  EXPECT(std::memcmp(h, back, sizeof h) == 0);
  for (int i = 0; i < kWords; i++) h[i] = 7 * i;
  OK(hipMemcpyHtoDAsync(c, h, sizeof h, s));
  OK(hipMemcpyDtoD(b, c, sizeof h));  // the null stream follows s's copy
  std::memset(back, 0, sizeof back);
  OK(hipMemcpyWithStream(back, b, sizeof back, hipMemcpyDeviceToHost, s));
  EXPECT(std::memcmp(h, back, sizeof h) == 0);
  unsigned flags = 9;
  OK(hipStreamGetFlags(s, &flags));
  EXPECT(flags == hipStreamDefault);
  hipStream_t nb = nullptr;
  OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
  OK(hipStreamGetFlags(nb, &flags));
  EXPECT(flags == hipStreamNonBlocking);
  int least = 5, greatest = 5, prio = 5;
  OK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT(least == 0 && greatest == 0);
  hipStream_t pr = nullptr;
  OK(hipStreamCreateWithPriority(&pr, hipStreamDefault, -1));
  OK(hipStreamGetPriority(pr, &prio));
  EXPECT(prio == 0);
  EXPECT(hipStreamGetFlags((hipStream_t)(uintptr_t)4096, &flags) == hipErrorInvalidHandle);
  EXPECT(hipGetLastError() == hipErrorInvalidHandle);
  OK(hipStreamDestroy(pr));
  OK(hipStreamDestroy(nb));
  OK(hipStreamDestroy(s));
  OK(hipFree(c));
  OK(hipFree(b));
  OK(hipSetDevice(0));
  OK(hipFree(a));
}

static void query() {
  OK(hipSetDevice(2));
  unsigned* host = nullptr;
  OK(hipHostMalloc(&host, 65 * sizeof(unsigned)));
  for (int i = 0; i < 64; i++) host[i] = 0;
  hipStream_t s = nullptr;
  OK(hipStreamCreate(&s));
  OK(hipStreamQuery(s));  // nothing queued yet
  unsigned* flag = host + 64;
  *flag = 0;
  gate<<<1, 64, 0, s>>>(flag, host, 200);
  long polls = 0;
  hipError_t e;
  while ((e = hipStreamQuery(s)) == hipErrorNotReady)
    if (++polls == 3) __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);  // the kernel waits for it
  OK(e);
  OK(hipGetLastError());  // not ready is never the last error
  unsigned sum = 0;
  for (int i = 0; i < 64; i++) sum += host[i];  // after the query: ordered after the kernel
  EXPECT(sum == 64 * 200);
  EXPECT(polls >= 3);
  std::printf("more_calls query: %u counted, polled %s\n", sum, polls >= 3 ? "until the flag was set" : "too few times");
  EXPECT(hipStreamQuery((hipStream_t)(uintptr_t)4096) == hipErrorInvalidHandle);
  EXPECT(hipGetLastError() == hipErrorInvalidHandle);
  OK(hipStreamDestroy(s));
  OK(hipHostFree(host));
}

static void devices() {
  hipDevice_t d = -1;
  OK(hipDeviceGet(&d, 2));
  EXPECT(d == 2);
  EXPECT(hipDeviceGet(&d, 99) == hipErrorInvalidDevice);
  (void)hipGetLastError();
  char name[64] = {0};
  OK(hipDeviceGetName(name, sizeof name, 3));
  EXPECT(std::strstr(name, "MI355X") != nullptr);
  char small[8];
  OK(hipDeviceGetName(small, sizeof small, 3));
  EXPECT(std::strlen(small) == sizeof small - 1);
  size_t total = 0;
  OK(hipDeviceTotalMem(&total, 1));
  EXPECT(total == (size_t)288 << 30);
  int major = 0, minor = 0;
  OK(hipDeviceComputeCapability(&major, &minor, 0));
  EXPECT(major == (warpSize == 32 ? 12 : 9) && minor == 5);
  char bus[32] = {0};
  OK(hipDeviceGetPCIBusId(bus, sizeof bus, 3));
  EXPECT(std::strcmp(bus, "0000:03:00.0") == 0);
  EXPECT(hipDeviceGetPCIBusId(bus, sizeof bus, 99) == hipErrorInvalidDevice);
  (void)hipGetLastError();
  int rv = 0, dv = 0;
  OK(hipRuntimeGetVersion(&rv));
  OK(hipDriverGetVersion(&dv));
  EXPECT(rv == HIP_VERSION && dv == HIP_VERSION && rv >= 60400000);
}

static void settings() {
  OK(hipSetDevice(4));
  OK(hipDeviceSetCacheConfig(hipFuncCachePreferShared));
  hipFuncCache_t cc = hipFuncCachePreferL1;
  OK(hipDeviceGetCacheConfig(&cc));
  EXPECT(cc == hipFuncCachePreferNone);
  OK(hipFuncSetCacheConfig(fill, hipFuncCachePreferL1));
  OK(hipDeviceSetSharedMemConfig(hipSharedMemBankSizeFourByte));
  OK(hipSetDeviceFlags(hipDeviceScheduleYield | hipDeviceMapHost));
  unsigned flags = 0;
  OK(hipGetDeviceFlags(&flags));
  EXPECT(flags == (hipDeviceScheduleYield | hipDeviceMapHost));
  OK(hipSetDevice(5));
  OK(hipGetDeviceFlags(&flags));
  EXPECT(flags == 0);  // per device
  EXPECT(hipSetDeviceFlags(0x1000) == hipErrorInvalidValue);
  (void)hipGetLastError();
  size_t v = 0;
  OK(hipDeviceSetLimit(hipLimitPrintfFifoSize, 1 << 20));
  OK(hipDeviceGetLimit(&v, hipLimitPrintfFifoSize));
  EXPECT(v == 1 << 20);
  OK(hipDeviceSetLimit(hipLimitStackSize, 8192));
  OK(hipDeviceGetLimit(&v, hipLimitStackSize));
  EXPECT(v == 256 << 10);
  EXPECT(hipDeviceSetLimit(hipLimitStackSize, 1 << 20) == hipErrorInvalidValue);
  (void)hipGetLastError();
}

static void kernels() {
  hipFuncAttributes at;
  OK(hipFuncGetAttributes(&at, fill));
  EXPECT(at.maxThreadsPerBlock == 1024 && at.maxDynamicSharedSizeBytes == 160 << 10);
  EXPECT(hipFuncGetAttributes(&at, (const void*)nullptr) == hipErrorInvalidDeviceFunction);
  OK(hipFuncSetAttribute(fill, hipFuncAttributeMaxDynamicSharedMemorySize, 96 << 10));
  EXPECT(hipFuncSetAttribute(fill, hipFuncAttributeMaxDynamicSharedMemorySize, 200 << 10) == hipErrorInvalidValue);
  const int w = warpSize;
  int n = 0;
  OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, fill, 4 * w, 0));
  EXPECT(n == 8);  // 32 waves a CU, 4 a block
  OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, fill, 4 * w, 64 << 10));
  EXPECT(n == 2);  // 160 KiB of shared memory a CU
  EXPECT(hipOccupancyMaxActiveBlocksPerMultiprocessor(&n, fill, 2048, 0) == hipErrorInvalidValue);
  (void)hipGetLastError();
  int grid = 0, block = 0;
  OK(hipOccupancyMaxPotentialBlockSize(&grid, &block, fill));
  EXPECT(block == 1024);  // every whole-wave block keeps 2048 (wave64) or 1024 threads busy: the largest wins
  EXPECT(grid == (32 / (block / w)) * 256);
  OK(hipOccupancyMaxPotentialBlockSize(&grid, &block, fill, 0, 4 * w));
  EXPECT(block == 4 * w && grid == 8 * 256);
  // hipExtLaunchKernelGGL between two events, as MORI's SDMA examples time
  // their kernels.
  OK(hipSetDevice(3));
  unsigned* buf = nullptr;
  OK(hipMalloc(&buf, kWords * sizeof(unsigned)));
  hipEvent_t e0, e1;
  OK(hipEventCreate(&e0));
  OK(hipEventCreate(&e1));
  hipExtLaunchKernelGGL(fill, dim3(1), dim3(kWords), 0, 0, e0, e1, 0, buf, 9u);
  OK(hipGetLastError());
  OK(hipEventSynchronize(e1));
  float ms = -1;
  OK(hipEventElapsedTime(&ms, e0, e1));
  EXPECT(ms >= 0);
  unsigned back[kWords];
  OK(hipMemcpy(back, buf, sizeof back, hipMemcpyDeviceToHost));
  EXPECT(back[0] == 9 && back[kWords - 1] == 9 + kWords - 1);
  OK(hipEventDestroy(e0));
  OK(hipEventDestroy(e1));
  OK(hipFree(buf));
}

static void reset() {
  OK(hipSetDevice(6));
  void* p = nullptr;
  OK(hipMalloc(&p, 1 << 20));
  hipStream_t s = nullptr;
  OK(hipStreamCreate(&s));
  fill<<<1, kWords, 0, s>>>((unsigned*)p, 5);
  OK(hipDeviceEnablePeerAccess(7, 0));
  OK(hipDeviceReset());  // waits for the kernel, then frees and destroys
  EXPECT(hipFree(p) == hipErrorInvalidValue);
  EXPECT(hipStreamSynchronize(s) == hipErrorInvalidHandle);
  OK(hipDeviceEnablePeerAccess(7, 0));  // disabled by the reset
  void* q = nullptr;
  OK(hipMalloc(&q, 1 << 20));  // the device is usable again
  OK(hipFree(q));
  (void)hipGetLastError();
}

static void racy() {
  OK(hipSetDevice(2));
  unsigned* host = nullptr;
  OK(hipHostMalloc(&host, 64 * sizeof(unsigned)));
  hipStream_t s = nullptr;
  OK(hipStreamCreate(&s));
  hipStream_t other = nullptr;
  OK(hipStreamCreateWithFlags(&other, hipStreamNonBlocking));
  count<<<1, 64, 0, s>>>(host, 200);
  OK(hipMemsetAsync(host, 0, 64 * sizeof(unsigned), other));  // nothing orders it with the kernel
  while (hipStreamQuery(s) == hipErrorNotReady) {
  }
  OK(hipStreamSynchronize(other));
  OK(hipStreamDestroy(other));
  std::printf("more_calls racy: cleared while the kernel ran\n");
  OK(hipStreamDestroy(s));
  OK(hipHostFree(host));
}

// events: a record returns at once. The kernel on stream a waits for a
// flag the host sets only after its third not-ready hipEventQuery (a
// record that waited for the stream's work would hang). Then a's kernel
// fills a buffer, an event is recorded after it, and stream b's kernel
// copies the buffer out after hipStreamWaitEvent: it sees every word and,
// under EMUD_RACE=1, races with nothing. "nowait", the planted twin,
// leaves hipStreamWaitEvent out: b's kernel runs unordered with a's (a
// race; before, the record itself waited for a's kernel and ordered the
// host, and so b, after it, hiding the missing wait).
__global__ void gate(unsigned* flag) {
  while (atomicAdd(flag, 0u) == 0) {
  }
}
__global__ void fill_rounds(unsigned* buf, unsigned v, int rounds) {
  for (int r = 0; r < rounds; r++) buf[threadIdx.x] = v + threadIdx.x + r;
}
__global__ void copy_out(const unsigned* buf, unsigned* out) { out[threadIdx.x] = buf[threadIdx.x]; }

static void events(bool wait) {
  OK(hipSetDevice(5));
  unsigned *flag = nullptr, *buf = nullptr, *out = nullptr;
  OK(hipHostMalloc(&flag, sizeof(unsigned)));
  *flag = 0;
  OK(hipMalloc(&buf, kWords * sizeof(unsigned)));
  OK(hipMalloc(&out, kWords * sizeof(unsigned)));
  hipStream_t a = nullptr, b = nullptr;
  OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  hipEvent_t start, opened, filled;
  OK(hipEventCreate(&start));
  OK(hipEventCreate(&opened));
  OK(hipEventCreate(&filled));
  OK(hipEventRecord(start, a));
  gate<<<1, 1, 0, a>>>(flag);
  OK(hipEventRecord(opened, a));  // returns at once: the kernel waits for the flag
  long polls = 0;
  hipError_t e;
  float ms = -1;
  while ((e = hipEventQuery(opened)) == hipErrorNotReady) {
    if (polls == 0) EXPECT(hipEventElapsedTime(&ms, start, opened) == hipErrorNotReady);
    if (++polls == 3) __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);
  }
  OK(e);
  OK(hipGetLastError());  // neither not-ready answer is kept as the last error
  EXPECT(polls >= 3);
  OK(hipEventElapsedTime(&ms, start, opened));
  EXPECT(ms > 0);  // the gate stood for three queries' worth of virtual time
  fill_rounds<<<1, kWords, 0, a>>>(buf, 40, 4);
  OK(hipEventRecord(filled, a));
  if (wait) OK(hipStreamWaitEvent(b, filled, 0));
  copy_out<<<1, kWords, 0, b>>>(buf, out);
  OK(hipStreamSynchronize(b));
  OK(hipStreamSynchronize(a));
  unsigned back[kWords];
  OK(hipMemcpy(back, out, sizeof back, hipMemcpyDeviceToHost));
  int good = 0;
  for (int i = 0; i < kWords; i++) good += back[i] == 40u + i + 3;
  if (wait) EXPECT(good == kWords);
  std::printf("more_calls events%s: %d of %d words copied after the fill, %ld polls\n", wait ? "" : " (no wait)", good,
              kWords, polls);
  OK(hipEventDestroy(start));
  OK(hipEventDestroy(opened));
  OK(hipEventDestroy(filled));
  OK(hipStreamDestroy(a));
  OK(hipStreamDestroy(b));
  OK(hipFree(out));
  OK(hipFree(buf));
  OK(hipHostFree(flag));
}

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "query")) {
    query();
  } else if (argc > 1 && !std::strcmp(argv[1], "racy")) {
    racy();
  } else if (argc > 1 && !std::strcmp(argv[1], "events")) {
    events(true);
  } else if (argc > 1 && !std::strcmp(argv[1], "nowait")) {
    events(false);
  } else {
    copies();
    query();
    devices();
    settings();
    kernels();
    events(true);
    reset();
  }
  std::printf("more_calls: %s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
