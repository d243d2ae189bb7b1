// A grid too large for the emulator's memory: <<<1<<20, 64>>> is within
// HIP's limits but its 64 M lanes need about 64 GiB of emud's lane
// records. The launch fails at once naming the estimate, the budget and
// this line, and the program goes on (cxx TestLaunchOverBudget); before,
// the grid grew until the kernel killed the process.
#include <cstdio>

#include "hip/hip_runtime.h"

__global__ void touch(unsigned* p) { atomicAdd(p, 1u); }

int main() {
  unsigned* p = nullptr;
  if (hipMalloc(&p, sizeof(unsigned)) != hipSuccess) return 1;
  touch<<<1 << 20, 64>>>(p);
  hipError_t e = hipGetLastError();
  std::printf("huge_grid: launch %s\n", e == hipSuccess ? "accepted (FAIL)" : hipGetErrorString(e));
  touch<<<4, 64>>>(p);  // a grid within the budget still runs
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  unsigned h = 0;
  if (hipMemcpy(&h, p, sizeof h, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  std::printf("huge_grid: the small grid counted %u\n", h);
  return e == hipSuccess || h != 256 ? 1 : 0;
}
