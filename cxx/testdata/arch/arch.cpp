// Prints the wave size a kernel sees: built with --offload-arch=gfx1250
// it is 32 (EMUD_ARCH baked in), with gfx950 64 (TestOffloadArch).
#include <hip/hip_runtime.h>

__global__ void wave(int* out) {
  if (threadIdx.x == 0) *out = warpSize;
}

int main() {
  int* d = nullptr;
  if (hipMalloc(&d, sizeof(int)) != hipSuccess) return 1;
  wave<<<1, 64>>>(d);
  int w = 0;
  if (hipMemcpy(&w, d, sizeof w, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  int p = 0;
  hipDeviceProp_t props;
  if (hipGetDeviceProperties(&props, 0) != hipSuccess) return 1;
  p = props.warpSize;
  std::printf("arch: warpSize %d (props %d, %s)\n", w, p, props.gcnArchName);
  return w == p ? 0 : 1;
}
