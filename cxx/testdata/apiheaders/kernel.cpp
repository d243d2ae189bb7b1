// The device unit of cxx/testdata/apiheaders: hip/hip_runtime.h, then
// hip/hip_runtime_api.h again (its guard makes that nothing).
#include <hip/hip_runtime.h>
#include <hip/hip_runtime_api.h>

__global__ void iota(int* out) { out[threadIdx.x] = (int)threadIdx.x; }

int fill(int* dev, int n) {
  iota<<<1, n>>>(dev);
  if (hipDeviceSynchronize() != hipSuccess) return -1;
  int host[64] = {};
  if (n > 64 || hipMemcpy(host, dev, n * sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) return -1;
  int sum = 0;
  for (int i = 0; i < n; i++) sum += host[i];
  return sum;
}
