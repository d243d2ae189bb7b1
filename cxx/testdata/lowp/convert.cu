// Every conversion and operation of emud's cuda_fp16.h, cuda_bf16.h and
// cuda_fp8.h on a sweep of inputs, printed as hex for TestLowPrecision
// (lowp_test.go) to check against its own references: all 65,536
// encodings of half and bfloat16 to float and to integers under each
// rounding; floats at and around every half midpoint and a stride over
// all float encodings to half, bfloat16, E4M3 and E5M2; and pseudo-random
// operands for +, -, *, /, fma, min and max. A kernel does the same
// conversions on the device side (they are __host__ __device__): its
// output must equal the host's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float bitsf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The floats to convert: around every half and bfloat16 midpoint, and a
// stride over every float encoding.
static std::vector<uint32_t> floats() {
  std::vector<uint32_t> v;
  for (uint32_t h = 0; h < 0x7C00; h++) {
    float mid = (__half2float(__ushort_as_half((unsigned short)h)) + __half2float(__ushort_as_half((unsigned short)(h + 1)))) / 2;
    for (int d = -1; d <= 1; d++) {
      v.push_back(fbits(mid) + d);
      v.push_back((fbits(mid) + d) | 0x80000000u);
    }
  }
  for (uint64_t u = 0; u < (1ull << 32); u += 65521) v.push_back((uint32_t)u);
  v.push_back(0x7F800000u);
  v.push_back(0xFF800000u);
  v.push_back(0x7FC00000u);
  return v;
}

__global__ void deviceSide(const uint32_t* in, uint32_t* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float f = bitsf(in[i]);
    __half h = __float2half(f);
    __nv_bfloat16 b = __float2bfloat16(f);
    __nv_fp8_e4m3 e4(f);
    __nv_fp8_e5m2 e5(f);
    out[i] = (uint32_t)__half_as_ushort(__hadd(h, h)) ^ (uint32_t)__bfloat16_as_ushort(b) << 16 ^ (uint32_t)e4.__x << 8 ^ e5.__x;
  }
}

int main() {
  for (uint32_t h = 0; h < 0x10000; h++) {
    __half x = __ushort_as_half((unsigned short)h);
    __nv_bfloat16 y = __ushort_as_bfloat16((unsigned short)h);
    std::printf("h2f %x %x\n", h, fbits(__half2float(x)));
    std::printf("b2f %x %x\n", h, fbits(__bfloat162float(y)));
    std::printf("h2i %x %x %x %x %x\n", h, (uint32_t)__half2int_rn(x), (uint32_t)__half2int_rz(x), (uint32_t)__half2int_rd(x), (uint32_t)__half2int_ru(x));
    std::printf("b2i %x %x %x %x %x\n", h, (uint32_t)__bfloat162int_rn(y), (uint32_t)__bfloat162int_rz(y), (uint32_t)__bfloat162int_rd(y),
                (uint32_t)__bfloat162int_ru(y));
  }
  for (uint32_t e = 0; e < 0x100; e++) {
    std::printf("e4h %x %x\n", e, __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)e, __NV_E4M3).x);
    std::printf("e5h %x %x\n", e, __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)e, __NV_E5M2).x);
  }
  std::vector<uint32_t> fs = floats();
  for (uint32_t u : fs) {
    float f = bitsf(u);
    std::printf("f2h %x %x %x %x %x\n", u, __half_as_ushort(__float2half_rn(f)), __half_as_ushort(__float2half_rz(f)),
                __half_as_ushort(__float2half_rd(f)), __half_as_ushort(__float2half_ru(f)));
    std::printf("f2b %x %x %x %x %x\n", u, __bfloat16_as_ushort(__float2bfloat16_rn(f)), __bfloat16_as_ushort(__float2bfloat16_rz(f)),
                __bfloat16_as_ushort(__float2bfloat16_rd(f)), __bfloat16_as_ushort(__float2bfloat16_ru(f)));
    std::printf("f2e %x %x %x %x %x\n", u, __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E4M3), __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3),
                __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E5M2), __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2));
  }
  uint64_t s = 88172645463325252ull;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (unsigned short)(s >> 20);
  };
  for (int i = 0; i < 40000; i++) {
    unsigned short a = next(), b = next(), c = next();
    __half x = __ushort_as_half(a), y = __ushort_as_half(b), z = __ushort_as_half(c);
    std::printf("hop %x %x %x %x %x %x %x %x %x %x\n", a, b, c, __half_as_ushort(x + y), __half_as_ushort(x - y), __half_as_ushort(x * y),
                __half_as_ushort(x / y), __half_as_ushort(__hfma(x, y, z)), __half_as_ushort(__hmin(x, y)), __half_as_ushort(__hmax(x, y)));
    __nv_bfloat16 p = __ushort_as_bfloat16(a), q = __ushort_as_bfloat16(b), r = __ushort_as_bfloat16(c);
    std::printf("bop %x %x %x %x %x %x %x %x %x %x\n", a, b, c, __bfloat16_as_ushort(p + q), __bfloat16_as_ushort(p - q),
                __bfloat16_as_ushort(p * q), __bfloat16_as_ushort(p / q), __bfloat16_as_ushort(__hfma(p, q, r)), __bfloat16_as_ushort(__hmin(p, q)),
                __bfloat16_as_ushort(__hmax(p, q)));
  }

  // The fp8 pairs and quads hold the scalar types' bytes, low element
  // first, from floats, doubles, halves and bfloat16 pairs, and give back
  // the scalars' values.
  int pairs = 0, npairs = 0;
  for (size_t i = 0; i + 1 < fs.size(); i += 7) {
    const float a = bitsf(fs[i]), b = bitsf(fs[i + 1]);
    npairs++;
    const __nv_fp8x2_e4m3 p(float2{a, b});
    const __nv_fp8x2_e5m2 q(double2{a, b});
    const float2 pb = (float2)p;
    const __half2 qh = (__half2)q;
    const __nv_fp8x4_e4m3 r(__floats2half2_rn(a, b), __floats2half2_rn(b, a));
    const __nv_fp8x4_e5m2 w(float4{a, b, b, a});
    const __nv_fp8x4_e4m3 z(__floats2bfloat162_rn(a, b), __floats2bfloat162_rn(a, a));
    const float4 wb = (float4)w;
    const unsigned a4 = __nv_fp8_e4m3(a).__x, b4 = __nv_fp8_e4m3(b).__x, a5 = __nv_fp8_e5m2(a).__x, b5 = __nv_fp8_e5m2(b).__x;
    const unsigned ha = __nv_fp8_e4m3(__float2half(a)).__x, hb = __nv_fp8_e4m3(__float2half(b)).__x;
    const unsigned za = __nv_fp8_e4m3(__float2bfloat16(a)).__x, zb = __nv_fp8_e4m3(__float2bfloat16(b)).__x;
    const auto same = [](float x, float y) { return fbits(x) == fbits(y) || (x != x && y != y); };
    pairs += p.__x != (a4 | b4 << 8) || q.__x != (a5 | b5 << 8) || r.__x != (ha | hb << 8 | hb << 16 | ha << 24) ||
             w.__x != (a5 | b5 << 8 | b5 << 16 | a5 << 24) || z.__x != (za | zb << 8 | za << 16 | za << 24) ||
             !same(pb.x, (float)__nv_fp8_e4m3(a)) || !same(pb.y, (float)__nv_fp8_e4m3(b)) ||
             !same(__half2float(qh.y), (float)__nv_fp8_e5m2(b)) || !same(wb.x, (float)__nv_fp8_e5m2(a)) ||
             !same(wb.z, (float)__nv_fp8_e5m2(b)) || sizeof p != 2 || sizeof w != 4;
  }
  std::printf("fp8 pairs %d of %d differ\n", pairs, npairs);

  // The device side agrees with the host's.
  const int n = 4096;
  uint32_t *din = nullptr, *dout = nullptr;
  if (cudaMalloc(&din, n * 4) != cudaSuccess || cudaMalloc(&dout, n * 4) != cudaSuccess) return 1;
  std::vector<uint32_t> in(fs.begin(), fs.begin() + n), out(n);
  cudaMemcpy(din, in.data(), n * 4, cudaMemcpyHostToDevice);
  deviceSide<<<1, 64>>>(din, dout, n);
  cudaMemcpy(out.data(), dout, n * 4, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    float f = bitsf(in[i]);
    __half h = __float2half(f);
    uint32_t want = (uint32_t)__half_as_ushort(__hadd(h, h)) ^ (uint32_t)__bfloat16_as_ushort(__float2bfloat16(f)) << 16 ^
                    (uint32_t)__nv_fp8_e4m3(f).__x << 8 ^ __nv_fp8_e5m2(f).__x;
    bad += out[i] != want;
  }
  std::printf("device %d of %d differ\n", bad, n);
  return bad != 0 || pairs != 0;
}
