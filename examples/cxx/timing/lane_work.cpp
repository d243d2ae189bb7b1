// Lane code takes virtual time (issue 38): every lane of one wave stores
// words into device memory in a loop, lanes 32..63 twice as many as lanes
// 0..31, and lane 0 reads clock64 before and after. The wave pays for its
// busiest lane's bytes (capi's lane cost: 4 CU cycles per 16 bytes by
// default, EMUD_LANE_COST), so the loop of 2·N 8-byte stores shows as
// N·4 cycles; with EMUD_LANE_COST=0 it shows as none.
//   emud c++ lane_work.cpp; ./a.out [N]   → "lane_work: N stores, C cycles"
#include <cstdio>
#include <cstdlib>

#include "hip/hip_runtime.h"

__global__ void work(unsigned long long* buf, int n, long long* cycles) {
  const int lane = threadIdx.x;
  const int mine = lane < 32 ? n : 2 * n;
  long long t0 = clock64();
  for (int i = 0; i < mine; i++) buf[(size_t)i * 64 + lane] = (unsigned long long)i;
  long long t1 = clock64();
  if (lane == 0) *cycles = t1 - t0;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
  if (n < 1 || n > (1 << 20)) {
    std::fprintf(stderr, "lane_work: N %d: want 1..2^20\n", n);
    return 2;
  }
  unsigned long long* buf = nullptr;
  long long* cycles = nullptr;
  if (hipSetDevice(0) != hipSuccess || hipMalloc(&buf, (size_t)2 * n * 64 * 8) != hipSuccess ||
      hipMalloc(&cycles, sizeof(long long)) != hipSuccess) {
    std::fprintf(stderr, "lane_work: setup failed\n");
    return 1;
  }
  work<<<1, 64>>>(buf, n, cycles);
  long long c = 0;
  if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(&c, cycles, sizeof c, hipMemcpyDeviceToHost) != hipSuccess) {
    std::fprintf(stderr, "lane_work: run failed\n");
    return 1;
  }
  std::printf("lane_work: %d stores, %lld cycles\n", 2 * n, c);
  return 0;
}
