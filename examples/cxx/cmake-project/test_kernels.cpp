// Tests the kernel library (libkernels.a) through its header: run by ctest
// (CMakeLists.txt) and by `make check` (Makefile).
#include <cstdio>
#include <vector>

#include "host_ref.hpp"
#include "kernels.hpp"

#define CHECK(x)                                                                            \
  do {                                                                                      \
    hipError_t e_ = (x);                                                                    \
    if (e_ != hipSuccess) {                                                                 \
      std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_));        \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

int main() {
  const int n = 1000, blocks = 3;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; i++) x[i] = float(i), y[i] = float(2 * i + 1);
  std::vector<int> in(blocks * 256);
  for (int i = 0; i < blocks * 256; i++) in[i] = i % 97 - 40;

  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  float *dx, *dy;
  int *din, *dout;
  CHECK(hipMalloc(&dx, n * sizeof(float)));
  CHECK(hipMalloc(&dy, n * sizeof(float)));
  CHECK(hipMalloc(&din, in.size() * sizeof(int)));
  CHECK(hipMalloc(&dout, blocks * sizeof(int)));
  CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(din, in.data(), in.size() * sizeof(int), hipMemcpyHostToDevice));
  CHECK(saxpy(3.0f, dx, dy, n, s));
  CHECK(block_sums(din, dout, blocks, s));
  CHECK(hipStreamSynchronize(s));

  std::vector<float> got(n);
  int sums[blocks];
  CHECK(hipMemcpy(got.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(sums, dout, sizeof sums, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (got[i] != saxpy_ref(3.0f, x[i], y[i])) bad++;
  for (int b = 0; b < blocks; b++)
    if (sums[b] != block_sum_ref(in.data(), b)) bad++;
  std::printf("test_kernels: saxpy y[999] = %g, block sums %d %d %d\n", got[n - 1], sums[0], sums[1], sums[2]);
  if (bad) {
    std::printf("test_kernels: FAIL (%d wrong)\n", bad);
    return 1;
  }
  std::printf("test_kernels: PASS\n");
  return 0;
}
