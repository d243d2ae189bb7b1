// Device math and vector types that CUDA and HIP kernels use and C++
// lacks (rsqrtf, the fast intrinsics, bit casts, uint4/float4 and their
// make_ functions, __lanemask_lt), in one kernel built as CUDA (.cu) and
// as HIP (-x hip); as HIP, clang's scoped __hip_atomic_fetch_max/min/
// or/xor/and/sub and compare_exchange_weak too. Each lane computes from its index and stores its
// results; the host recomputes them with <cmath> and prints PASS or each
// mismatch. A kernel normalising by rsqrtf(mean + eps) is the shape of
// the RMS-norm kernels that use it.
#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
#include <hip/hip_runtime.h>
#define cudaMalloc hipMalloc
#define cudaMemcpy hipMemcpy
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaDeviceSynchronize hipDeviceSynchronize
#endif
#include <cmath>
#include <cstdint>
#include <cstdio>

constexpr int kLanes = 64;
constexpr int kOut = 12;  // results per lane

__global__ void mathKernel(const uint4* in, float* out, uint64_t* masks) {
  int i = threadIdx.x;
  uint4 v = in[i];  // one 16-byte load of four words
  float x = (float)(v.x + v.y + v.z + v.w) / 64.0f + 0.5f;
  float4 r = make_float4(rsqrtf(x), __fdividef(1.0f, x), __expf(-x), __logf(x));
  float* o = out + i * kOut;
  o[0] = r.x;
  o[1] = r.y;
  o[2] = r.z;
  o[3] = r.w;
  o[4] = __powf(x, 1.5f);
  o[5] = __saturatef(x - 1.0f);
  o[6] = __int_as_float(__float_as_int(x));
  o[7] = __fmaf_rn(x, x, 1.0f);
  o[8] = (float)__float2int_rn(x * 3.0f);
  o[9] = (float)rsqrt((double)x);
  o[10] = __uint_as_float(__float_as_uint(-x));
  o[11] = (float)__umulhi(0x80000000u, v.x * 2u + 2u);
  masks[i] = (uint64_t)__lanemask_lt();
}

#ifndef __CUDACC__
// clang's scoped read-modify-writes beyond fetch_add (HIP only): every
// lane folds its index into words[0..5], then CASes words[6] once.
__global__ void rmwKernel(unsigned* words) {
  unsigned i = threadIdx.x;
  __hip_atomic_fetch_max(&words[0], i, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min(&words[1], i + 5, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_or(&words[2], 1u << (i % 32), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_xor(&words[3], 1u << (i % 8), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_and(&words[4], ~(1u << (i % 16)), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_sub(&words[5], 2u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  unsigned want = 0;
  while (!__hip_atomic_compare_exchange_weak(&words[6], &want, want + 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                             __HIP_MEMORY_SCOPE_AGENT)) {
  }
}
#endif

int main() {
  uint4 h_in[kLanes];
  for (int i = 0; i < kLanes; i++) h_in[i] = make_uint4(i, 2 * i, 3, (unsigned)(i % 5));
  uint4* d_in;
  float* d_out;
  uint64_t* d_masks;
  if (cudaMalloc((void**)&d_in, sizeof(h_in)) != 0 || cudaMalloc((void**)&d_out, kLanes * kOut * sizeof(float)) != 0 ||
      cudaMalloc((void**)&d_masks, kLanes * sizeof(uint64_t)) != 0) {
    std::printf("device_math: malloc failed\n");
    return 1;
  }
  cudaMemcpy(d_in, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
  mathKernel<<<1, kLanes>>>(d_in, d_out, d_masks);
  cudaDeviceSynchronize();
  float out[kLanes * kOut];
  uint64_t masks[kLanes];
  cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost);
  cudaMemcpy(masks, d_masks, sizeof(masks), cudaMemcpyDeviceToHost);

  int bad = 0;
  auto near = [](float got, double want) { return std::fabs(got - want) <= 1e-5 * std::fabs(want) + 1e-6; };
#ifdef __CUDACC__
  const int wave = 32;
#else
  const int wave = warpSize;
#endif
  for (int i = 0; i < kLanes; i++) {
    const uint4 v = h_in[i];
    double x = (float)(v.x + v.y + v.z + v.w) / 64.0f + 0.5f;
    double want[kOut] = {1 / std::sqrt(x), 1 / x, std::exp(-x), std::log(x), std::pow(x, 1.5),
                         std::fmin(std::fmax(x - 1, 0.0), 1.0), x, x * x + 1, std::nearbyint(x * 3), 1 / std::sqrt(x), -x,
                         (double)(((uint64_t)0x80000000u * (v.x * 2u + 2u)) >> 32)};
    for (int k = 0; k < kOut; k++) {
      if (!near(out[i * kOut + k], want[k])) {
        std::printf("lane %d result %d: got %.9g, want %.9g\n", i, k, out[i * kOut + k], want[k]);
        bad++;
      }
    }
    uint64_t m = (uint64_t(1) << (i % wave)) - 1;
    if (masks[i] != m) {
      std::printf("lane %d __lanemask_lt: got %#llx, want %#llx\n", i, (unsigned long long)masks[i],
                  (unsigned long long)m);
      bad++;
    }
  }
#ifndef __CUDACC__
  unsigned h_words[7] = {0, 1000, 0, 0, 0xffffffffu, 1000, 0};
  unsigned* d_words;
  if (hipMalloc((void**)&d_words, sizeof(h_words)) != 0) return 1;
  hipMemcpy(d_words, h_words, sizeof(h_words), hipMemcpyHostToDevice);
  rmwKernel<<<1, kLanes>>>(d_words);
  hipDeviceSynchronize();
  hipMemcpy(h_words, d_words, sizeof(h_words), hipMemcpyDeviceToHost);
  // 64 lanes: max 63, min 5, every bit or-ed, each of 8 bits xor-ed 8
  // times (0), the low 16 bits cleared, 64 subtractions of 2, 64 CASes.
  const unsigned want_words[7] = {63, 5, 0xffffffffu, 0, 0xffff0000u, 1000 - 128, 64};
  for (int k = 0; k < 7; k++) {
    if (h_words[k] != want_words[k]) {
      std::printf("rmw word %d: got %#x, want %#x\n", k, h_words[k], want_words[k]);
      bad++;
    }
  }
#endif
  static_assert(sizeof(uint4) == 16 && alignof(uint4) == 16 && alignof(float2) == 8 && alignof(double2) == 16,
                "vector types are laid out as CUDA's");
  std::printf("device_math: %s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
