// HIP's names for emud's half and bfloat16 types (hip/hip_fp16.h,
// hip/hip_bf16.h): the same intrinsics as CUDA's, on __half and
// __hip_bfloat16, in a kernel and on the host (TestLowPrecision).
#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void scale(__half* h, __hip_bfloat16* b) {
  h[threadIdx.x] = __hmul(h[threadIdx.x], __float2half(2.0f));
  b[threadIdx.x] = __hadd(b[threadIdx.x], __float2bfloat16(1.0f));
}

int main() {
  __half a = 1.5f, x = __float2half(2.25f);
  __hip_bfloat16 c = __float2bfloat16(3.0f);
  __half* dh = nullptr;
  __hip_bfloat16* db = nullptr;
  if (hipMalloc(&dh, 2 * sizeof(__half)) != hipSuccess || hipMalloc(&db, 2 * sizeof(__hip_bfloat16)) != hipSuccess) return 1;
  __half hh[2] = {__float2half(0.75f), __float2half(1.0f)};
  __hip_bfloat16 bb[2] = {__float2bfloat16(1.0f), __float2bfloat16(-1.0f)};
  hipMemcpy(dh, hh, sizeof hh, hipMemcpyHostToDevice);
  hipMemcpy(db, bb, sizeof bb, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(scale, dim3(1), dim3(2), 0, 0, dh, db);
  hipMemcpy(hh, dh, sizeof hh, hipMemcpyDeviceToHost);
  hipMemcpy(bb, db, sizeof bb, hipMemcpyDeviceToHost);
  std::printf("%g %g %g %g %g %#x %#x\n", __half2float(a + x), (float)__hfma(a, x, a), __bfloat162float(__hmul(c, c)), __half2float(hh[0]),
              __bfloat162float(bb[0]), __half_as_ushort(hh[1]) >> 1 << 1 == 0x4000 ? 0x3c00 : 0, __bfloat16_as_ushort(__hadd(bb[1], bb[0])) == 0x4000 ? 0x3f80u : 0u);
  return 0;
}
