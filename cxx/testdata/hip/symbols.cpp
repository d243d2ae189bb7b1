// __constant__ and __device__ variables through hipMemcpyToSymbol,
// hipMemcpyFromSymbol, their async forms, hipGetSymbolAddress and
// hipGetSymbolSize: a kernel reads a table the host filled and counts
// into a device counter the host reads back; bad sizes and kinds are
// refused. "ranks" has two rank threads (GPUs 0 and 1) load the same
// table, which passes; "conflict" has them load different tables, which
// emud refuses (its GPUs share the one copy of a symbol: partial).
#include <pthread.h>

#include <cstdio>
#include <cstring>

#include <hip/hip_runtime.h>

static int failures = 0;
#define EXPECT(cond)                                                            \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::printf("symbols: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);  \
      __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                       \
    }                                                                           \
  } while (0)
#define OK(x) EXPECT((x) == hipSuccess)

__constant__ float coeffs[4];
__device__ unsigned counter;

__global__ void scale(float* out) {
  out[threadIdx.x] = coeffs[threadIdx.x % 4] * threadIdx.x;
  atomicAdd(&counter, 1u);
}

static void single() {
  const float h[4] = {1.f, 2.f, 3.f, 4.f};
  OK(hipMemcpyToSymbol(HIP_SYMBOL(coeffs), h, sizeof h));
  const float last = 8.f;
  OK(hipMemcpyToSymbol(coeffs, &last, sizeof last, 3 * sizeof(float)));  // an offset into the table
  const unsigned zero = 0;
  OK(hipMemcpyToSymbol(counter, &zero, sizeof zero));
  float* out = nullptr;
  OK(hipMalloc(&out, 64 * sizeof(float)));
  scale<<<1, 64>>>(out);
  OK(hipDeviceSynchronize());
  float got[64];
  OK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
  int wrong = 0;
  const float want[4] = {1.f, 2.f, 3.f, 8.f};
  for (int i = 0; i < 64; i++) wrong += got[i] != want[i % 4] * i;
  EXPECT(wrong == 0);
  unsigned n = 0;
  OK(hipMemcpyFromSymbol(&n, HIP_SYMBOL(counter), sizeof n));
  EXPECT(n == 64);
  hipStream_t s = nullptr;
  OK(hipStreamCreate(&s));
  OK(hipMemcpyToSymbolAsync(counter, &zero, sizeof zero, 0, hipMemcpyHostToDevice, s));
  scale<<<1, 32, 0, s>>>(out);
  OK(hipMemcpyFromSymbolAsync(&n, counter, sizeof n, 0, hipMemcpyDeviceToHost, s));
  OK(hipStreamSynchronize(s));
  EXPECT(n == 32);
  void* p = nullptr;
  size_t size = 0;
  OK(hipGetSymbolAddress(&p, coeffs));
  OK(hipGetSymbolSize(&size, coeffs));
  EXPECT(p == (void*)coeffs && size == sizeof coeffs);
  std::printf("symbols: %d of 64 words wrong, counter %u\n", wrong, n);
  hipError_t e = hipMemcpyToSymbol(coeffs, h, sizeof h, sizeof(float));
  std::printf("symbols: past the end: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidValue);
  e = hipMemcpyToSymbol(coeffs, h, sizeof h, 0, hipMemcpyDeviceToHost);
  std::printf("symbols: wrong kind: %s\n", hipGetErrorName(e));
  EXPECT(e == hipErrorInvalidMemcpyDirection);
  (void)hipGetLastError();
  OK(hipStreamDestroy(s));
  OK(hipFree(out));
}

static bool conflict = false;
static pthread_barrier_t barrier;

static void* rank(void* arg) {
  const int me = (int)(intptr_t)arg;
  OK(hipSetDevice(me));
  float h[4] = {1.f, 2.f, 3.f, 4.f};
  if (conflict) h[0] += me;
  if (me == 1) pthread_barrier_wait(&barrier);  // rank 0 loads first
  hipError_t e = hipMemcpyToSymbol(coeffs, h, sizeof h);
  if (me == 0) pthread_barrier_wait(&barrier);
  std::printf("symbols %s: rank %d: %s\n", conflict ? "conflict" : "ranks", me, hipGetErrorName(e));
  if (!conflict || me == 0) EXPECT(e == hipSuccess);
  if (conflict && me == 1) EXPECT(e == hipErrorInvalidValue);
  return nullptr;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!*mode) {
    single();
  } else {
    conflict = !std::strcmp(mode, "conflict");
    pthread_barrier_init(&barrier, nullptr, 2);
    pthread_t t[2];
    for (int r = 0; r < 2; r++) pthread_create(&t[r], nullptr, rank, (void*)(intptr_t)r);
    for (int r = 0; r < 2; r++) pthread_join(t[r], nullptr);
  }
  std::printf("symbols: %s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
