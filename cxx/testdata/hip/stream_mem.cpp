// Stream memory operations and the allocation and query calls beside
// them, each result checked.
//
// Modes (argv[1]):
//   (none)  a kernel on stream A fills a buffer, hipStreamWriteValue32
//           sets a flag after it; stream B waits for the flag
//           (hipStreamWaitValue32) and copies the buffer out: the copy
//           sees the fill and is ordered after it (race-clean under
//           EMUD_RACE=1). Then the wait conditions (Gte, Eq, And, Nor,
//           64-bit with a mask) against host stores; hipMallocManaged,
//           hipMallocAsync/hipFreeAsync (a block freed on one stream is
//           reused once that stream's work is done), hipHostAlloc and
//           hipHostGetFlags, hipMemGetAddressRange, hipMemPtrGetInfo,
//           hipChooseDevice, hipDeviceGetByPCIBusId and
//           hipDeviceGetP2PAttribute, hipMallocPitch, hipMemcpy2D(Async)
//           and hipMemset2D, hipHostRegister (a kernel writes registered
//           host memory); and the refusals.
//   nowait  stream B copies without waiting for the flag: a race with
//           the kernel's stores.
//   never   stream B waits for a flag nobody sets: a hang report naming
//           the wait.
#include <cstdio>
#include <cstring>

#include <hip/hip_runtime.h>

static int failures = 0;
#define EXPECT(cond)                                                              \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::printf("stream_mem: %s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                                 \
    }                                                                             \
  } while (0)
#define OK(x) EXPECT((x) == hipSuccess)

constexpr int kWords = 256;

__global__ void fill(unsigned* p, unsigned v) {
  for (int r = 0; r < 4; r++) p[threadIdx.x] = v + threadIdx.x + r;
}
__global__ void bump(unsigned* p) { p[threadIdx.x] += 1; }
// seen records, in out[i], the word its wait waited for, as it runs.
__global__ void seen(const unsigned* word, unsigned* out, int i) { out[i] = *(const volatile unsigned*)word; }

static void handover(const char* mode) {
  OK(hipSetDevice(0));
  unsigned *buf = nullptr, *out = nullptr, *flag = nullptr;
  OK(hipMalloc(&buf, kWords * sizeof(unsigned)));
  OK(hipMalloc(&out, kWords * sizeof(unsigned)));
  OK(hipMalloc(&flag, sizeof(unsigned)));
  OK(hipMemset(flag, 0, sizeof(unsigned)));
  hipStream_t a = nullptr, b = nullptr;
  OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  fill<<<1, kWords, 0, a>>>(buf, 100);
  if (std::strcmp(mode, "never") != 0) OK(hipStreamWriteValue32(a, flag, 1, 0));
  if (std::strcmp(mode, "nowait") != 0) OK(hipStreamWaitValue32(b, flag, 1, hipStreamWaitValueEq));
  OK(hipMemcpyAsync(out, buf, kWords * sizeof(unsigned), hipMemcpyDeviceToDevice, b));
  OK(hipStreamSynchronize(b));
  unsigned host[kWords];
  OK(hipStreamSynchronize(a));
  OK(hipMemcpy(host, out, sizeof host, hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < kWords; i++) wrong += host[i] != 100u + i + 3;
  if (!*mode) EXPECT(wrong == 0);
  std::printf("stream_mem %s: %d of %d words as filled\n", *mode ? mode : "handover", kWords - wrong, kWords);
  OK(hipStreamDestroy(a));
  OK(hipStreamDestroy(b));
  OK(hipFree(buf));
  OK(hipFree(out));
  OK(hipFree(flag));
}

// conditions: a host store to pinned memory satisfies each condition;
// the stream's kernel after the wait runs only then.
static void conditions() {
  unsigned* word = nullptr;
  unsigned long long* wide = nullptr;
  unsigned* counter = nullptr;
  OK(hipHostMalloc(&word, sizeof *word));
  OK(hipHostMalloc(&wide, sizeof *wide));
  OK(hipMalloc(&counter, kWords * sizeof(unsigned)));
  OK(hipMemset(counter, 0, kWords * sizeof(unsigned)));
  unsigned* seenBy = nullptr;
  OK(hipHostMalloc(&seenBy, 8 * sizeof(unsigned)));
  hipStream_t s = nullptr;
  OK(hipStreamCreate(&s));
  struct Case {
    unsigned flags, value, mask, set;
  } cases[] = {
      {hipStreamWaitValueGte, 5, 0xffffffffu, 7},
      {hipStreamWaitValueEq, 0x12, 0xff, 0xab12},
      {hipStreamWaitValueAnd, 0x30, 0xffffffffu, 0x10},
      {hipStreamWaitValueNor, 0x0f, 0xffffffffu, 0x0},  // ~(0xfffffff0 | 0x0f) is 0 until the store
  };
  int n = 0;
  for (const Case& c : cases) {
    *word = 0;
    if (c.flags == hipStreamWaitValueNor) *word = 0xfffffff0u;
    OK(hipStreamWaitValue32(s, word, c.value, c.flags, c.mask));
    bump<<<1, kWords, 0, s>>>(counter);
    seen<<<1, 1, 0, s>>>(word, seenBy, n);
    *word = c.set;
    OK(hipStreamSynchronize(s));
    EXPECT(seenBy[n] == c.set);  // the kernels ran after the store, not before
    n++;
  }
  *wide = 0;
  OK(hipStreamWaitValue64(s, wide, 1ull << 40, hipStreamWaitValueGte));
  bump<<<1, kWords, 0, s>>>(counter);
  *wide = 3ull << 40;
  OK(hipStreamSynchronize(s));
  n++;
  OK(hipStreamWriteValue64(s, wide, 42, 0));
  OK(hipStreamSynchronize(s));
  EXPECT(*wide == 42);
  unsigned host[kWords];
  OK(hipMemcpy(host, counter, sizeof host, hipMemcpyDeviceToHost));
  EXPECT(host[0] == (unsigned)n && host[kWords - 1] == (unsigned)n);
  std::printf("stream_mem conditions: %u kernels ran after their waits\n", host[0]);
  // Refusals.
  EXPECT(hipStreamWaitValue32(s, word, 1, 7) == hipErrorInvalidValue);
  EXPECT(hipStreamWriteValue32(s, word, 1, 1) == hipErrorInvalidValue);
  EXPECT(hipStreamWriteValue32(s, (char*)counter + 2, 1, 0) == hipErrorInvalidValue);
  unsigned pageable = 0;
  EXPECT(hipStreamWriteValue32(s, &pageable, 1, 0) == hipErrorInvalidValue);
  (void)hipGetLastError();
  OK(hipStreamDestroy(s));
  OK(hipHostFree(word));
  OK(hipHostFree(wide));
  OK(hipHostFree(seenBy));
  OK(hipFree(counter));
}

static void allocs() {
  OK(hipSetDevice(1));
  // Managed memory: the host writes it, a kernel adds, the host reads.
  unsigned* m = nullptr;
  OK(hipMallocManaged(&m, kWords * sizeof(unsigned)));
  for (int i = 0; i < kWords; i++) m[i] = i;
  bump<<<1, kWords>>>(m);
  OK(hipDeviceSynchronize());
  EXPECT(m[0] == 1 && m[kWords - 1] == kWords);
  int attr = 0;
  OK(hipDeviceGetAttribute(&attr, hipDeviceAttributeManagedMemory, 1));
  EXPECT(attr == 1);
  void* bad = nullptr;
  EXPECT(hipMallocManaged(&bad, 64, 4) == hipErrorInvalidValue);
  OK(hipFree(m));
  // Stream-ordered: a block freed on s1 is handed out again only once
  // s1's work before the free is done, and its new user follows it.
  hipStream_t s1 = nullptr, s2 = nullptr;
  OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  unsigned *x = nullptr, *y = nullptr;
  OK(hipMallocAsync(&x, kWords * sizeof(unsigned), s1));
  fill<<<1, kWords, 0, s1>>>(x, 7);
  OK(hipFreeAsync(x, s1));
  EXPECT(hipFreeAsync(x, s1) == hipErrorInvalidValue);
  (void)hipGetLastError();
  OK(hipStreamSynchronize(s1));
  OK(hipMallocAsync(&y, kWords * sizeof(unsigned), s2));
  EXPECT(y == x);  // the same block, its last user done
  fill<<<1, kWords, 0, s2>>>(y, 9);
  OK(hipFreeAsync(y, s2));
  OK(hipStreamSynchronize(s2));
  OK(hipStreamDestroy(s1));
  OK(hipStreamDestroy(s2));
  // Host allocation flags, address ranges.
  char* h = nullptr;
  OK(hipHostAlloc(&h, 1000, hipHostAllocMapped | hipHostAllocPortable));
  unsigned flags = 0;
  OK(hipHostGetFlags(&flags, h + 10));
  EXPECT(flags == (hipHostAllocMapped | hipHostAllocPortable));
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  OK(hipMemGetAddressRange(&base, &size, h + 999));
  EXPECT(base == h && size == 1000);
  char* d = nullptr;
  OK(hipMalloc(&d, 5000));
  OK(hipMemGetAddressRange(&base, &size, d + 4096));
  EXPECT(base == d && size == 5000);
  size = 0;
  OK(hipMemPtrGetInfo(d, &size));
  EXPECT(size == 5000);
  int local = 0;
  EXPECT(hipMemGetAddressRange(&base, &size, &local) == hipErrorInvalidDevicePointer);
  EXPECT(hipHostGetFlags(&flags, &local) == hipErrorInvalidValue);
  (void)hipGetLastError();
  OK(hipHostFree(h));
  OK(hipFree(d));
  // Pitched memory: a 100 x 8 byte matrix in rows of 256, a 2D memset of
  // a 10 x 4 corner, and back to the host packed.
  unsigned char* pm = nullptr;
  size_t pitch = 0;
  OK(hipMallocPitch(&pm, &pitch, 100, 8));
  EXPECT(pitch == 256);
  unsigned char mat[8][100], back[8][100];
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 100; c++) mat[r][c] = (unsigned char)(r * 100 + c);
  OK(hipMemcpy2D(pm, pitch, mat, 100, 100, 8, hipMemcpyHostToDevice));
  OK(hipMemset2D(pm + pitch, pitch, 0xee, 10, 4));
  hipStream_t s3 = nullptr;
  OK(hipStreamCreate(&s3));
  OK(hipMemcpy2DAsync(back, 100, pm, pitch, 100, 8, hipMemcpyDeviceToHost, s3));
  OK(hipStreamSynchronize(s3));
  OK(hipStreamDestroy(s3));
  int bad2d = 0;
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 100; c++) bad2d += back[r][c] != (r >= 1 && r < 5 && c < 10 ? 0xee : mat[r][c]);
  EXPECT(bad2d == 0);
  EXPECT(hipMemcpy2D(pm, 64, mat, 100, 100, 8, hipMemcpyHostToDevice) == hipErrorInvalidPitchValue);
  (void)hipGetLastError();
  OK(hipFree(pm));
  // Registered host memory: a kernel writes it through the device
  // pointer hipHostGetDevicePointer gives.
  static unsigned reg[kWords];
  OK(hipHostRegister(reg, sizeof reg, hipHostRegisterMapped));
  unsigned* regDev = nullptr;
  OK(hipHostGetDevicePointer((void**)&regDev, reg, 0));
  fill<<<1, kWords>>>(regDev, 40);
  OK(hipDeviceSynchronize());
  EXPECT(reg[0] == 43 && reg[kWords - 1] == 43 + kWords - 1);
  OK(hipHostGetFlags(&flags, reg + 5));
  EXPECT(flags == hipHostRegisterMapped);
  hipPointerAttribute_t at;
  OK(hipPointerGetAttributes(&at, reg));
  EXPECT(at.type == hipMemoryTypeHost);
  EXPECT(hipHostRegister(reg + 4, 16, 0) == hipErrorHostMemoryAlreadyRegistered);
  OK(hipHostUnregister(reg));
  EXPECT(hipHostUnregister(reg) == hipErrorHostMemoryNotRegistered);
  (void)hipGetLastError();
  // Devices.
  hipDeviceProp_t p;
  OK(hipGetDeviceProperties(&p, 0));
  int dev = -1;
  OK(hipChooseDevice(&dev, &p));
  EXPECT(dev == 0);
  char id[32];
  OK(hipDeviceGetPCIBusId(id, sizeof id, 3));
  dev = -1;
  OK(hipDeviceGetByPCIBusId(&dev, id));
  EXPECT(dev == 3);
  EXPECT(hipDeviceGetByPCIBusId(&dev, "0000:63:00.0") == hipErrorInvalidDevice);
  EXPECT(hipDeviceGetByPCIBusId(&dev, "not a bus id") == hipErrorInvalidValue);
  int v = -1;
  OK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 0, 5));
  EXPECT(v == 1);
  OK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrNativeAtomicSupported, 5, 0));
  EXPECT(v == 1);
  EXPECT(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 2, 2) == hipErrorInvalidDevice);
  (void)hipGetLastError();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  handover(mode);
  if (!*mode) {
    conditions();
    allocs();
  }
  std::printf("stream_mem: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
