// Many launches of one grid of 64 blocks of 64 lanes, one after another:
// the state of a launch's lanes must go when the launch retires, so the
// emulator's memory does not grow with the launches (cxx
// TestLaunchesFreeLaneState). argv[1] is the launch count.
#include <cstdio>
#include <cstdlib>

#include "hip/hip_runtime.h"

__global__ void bump(unsigned* p) { p[blockIdx.x * blockDim.x + threadIdx.x] += 1; }

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100;
  unsigned* p = nullptr;
  if (hipMalloc(&p, 64 * 64 * sizeof(unsigned)) != hipSuccess) return 1;
  for (int i = 0; i < n; i++) {
    bump<<<64, 64>>>(p);
    if (hipDeviceSynchronize() != hipSuccess) return 1;
  }
  unsigned h = 0;
  if (hipMemcpy(&h, p + 4095, sizeof h, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  std::printf("launches %d: last word %u (%s)\n", n, h, h == (unsigned)n ? "PASS" : "FAIL");
  return h == (unsigned)n ? 0 : 1;
}
