// A program that makes emud calls and ends by exit(3) from main's code:
// under a seed server the process ends, and its status is the seed's.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void fill(int* p) { p[threadIdx.x] = threadIdx.x; }

int main() {
  int* d = nullptr;
  if (hipMalloc(&d, 64 * sizeof(int)) != hipSuccess) return 1;
  fill<<<1, 64>>>(d);
  int h[64];
  if (hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  std::printf("h[63] = %d\n", h[63]);
  std::exit(3);
}
