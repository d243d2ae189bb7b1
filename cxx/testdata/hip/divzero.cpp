// Integer division in kernels where x86 traps and a GPU does not: by
// zero (32- and 64-bit, signed and unsigned, quotient and remainder) and
// INT_MIN / -1. emud's lanes go on with the values capi/lane.c's
// gpu_divide documents (a quotient of all ones and the dividend as
// remainder for a zero divisor; the dividend and 0 for the overflow),
// and a division the kernel never uses is harmless, as on a device. The
// divisors come from the launch, so the compiler cannot fold them.
// argv[1] "host": the host divides by zero, which traps as on any CPU.
#include <hip/hip_runtime.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>

__global__ void divide(uint64_t* out, int zero, int minusOne, long long zero64) {
  volatile int x = 1234567;
  volatile unsigned ux = 4000000000u;
  volatile long long y = -9876543210LL;
  volatile unsigned long long uy = 18000000000000000000ull;
  volatile int imin = INT_MIN;
  volatile long long lmin = LLONG_MIN;
  out[0] = (uint32_t)(x / zero);
  out[1] = (uint32_t)(x % zero);
  out[2] = ux / (unsigned)zero;
  out[3] = ux % (unsigned)zero;
  out[4] = (uint64_t)(y / zero64);
  out[5] = (uint64_t)(y % zero64);
  out[6] = uy / (unsigned long long)zero64;
  out[7] = uy % (unsigned long long)zero64;
  out[8] = (uint32_t)(imin / minusOne);
  out[9] = (uint32_t)(imin % minusOne);
  out[10] = (uint64_t)(lmin / (long long)minusOne);
  out[11] = (uint64_t)(lmin % (long long)minusOne);
  volatile int unused = x / zero;  // never read: no effect at all
  (void)unused;
  out[12] = 42;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "host") == 0) {
    volatile int zero = 0;
    std::printf("%d\n", 7 / zero);
    return 0;
  }
  uint64_t* d = nullptr;
  if (hipMalloc(&d, 13 * sizeof(uint64_t)) != hipSuccess) return 1;
  hipLaunchKernelGGL(divide, dim3(1), dim3(1), 0, 0, d, 0, -1, 0LL);
  uint64_t h[13];
  if (hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  for (int i = 0; i < 13; i++) std::printf("%d %#llx\n", i, (unsigned long long)h[i]);
  return 0;
}
