// Host code that includes only hip/hip_runtime_api.h and
// rocm_smi/rocm_smi.h, with error-check macros in the shape MORI's
// mori/application/utils/check.hpp gives its benchmarks (written here for
// emud's tests: cxx/apiheaders_test.go). kernel.cpp, the program's other
// unit, includes hip/hip_runtime.h as device code does.
#include <hip/hip_runtime_api.h>
#include <rocm_smi/rocm_smi.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_HIP(stmt)                                                                     \
  do {                                                                                      \
    hipError_t e = (stmt);                                                                  \
    if (e != hipSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #stmt, hipGetErrorString(e)); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

#define CHECK_RSMI(stmt)                                                  \
  do {                                                                    \
    rsmi_status_t s = (stmt);                                             \
    if (s != RSMI_STATUS_SUCCESS) {                                       \
      const char* msg = nullptr;                                          \
      rsmi_status_string(s, &msg);                                        \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, msg);        \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

int fill(int* dev, int n);  // kernel.cpp

int main() {
  int n = 0;
  CHECK_HIP(hipGetDeviceCount(&n));
  std::printf("devices %d\n", n);
  const char* text = nullptr;
  CHECK_RSMI(rsmi_status_string(RSMI_STATUS_INIT_ERROR, &text));
  std::printf("init error: %s\n", text);
  CHECK_RSMI(rsmi_status_string((rsmi_status_t)0x1234, &text));
  std::printf("0x1234: %s\n", text);
  std::printf("null text: %d\n", (int)rsmi_status_string(RSMI_STATUS_SUCCESS, nullptr));
  int* dev = nullptr;
  CHECK_HIP(hipMalloc(&dev, 64 * sizeof(int)));
  const int sum = fill(dev, 64);
  CHECK_HIP(hipFree(dev));
  std::printf("sum %d\n", sum);
  if (sum != 64 * 63 / 2) {
    std::printf("apiheaders: FAIL\n");
    return 1;
  }
  std::printf("apiheaders: PASS\n");
  return 0;
}
