// Host code takes virtual time when EMUD_HOST_GBPS says how fast (issue
// 38, capi's hostcost.go): the host zeroes, fills and sums a 1 MiB
// buffer between two hipEventRecord calls, and hipEventElapsedTime reads
// the time its 3 MiB of stores and loads took at that rate: 3.1 ms at
// EMUD_HOST_GBPS=1; unset, host code takes none and it reads 0.
//   emud c++ -O2 host_work.cpp; EMUD_HOST_GBPS=1 ./a.out   → "host_work: 3.146 ms"
#include <cstdio>
#include <vector>

#include "hip/hip_runtime.h"

int main() {
  hipEvent_t start, stop;
  if (hipSetDevice(0) != hipSuccess || hipEventCreate(&start) != hipSuccess || hipEventCreate(&stop) != hipSuccess ||
      hipEventRecord(start, 0) != hipSuccess) {
    std::fprintf(stderr, "host_work: setup failed\n");
    return 1;
  }
  std::vector<unsigned> buf(1 << 18);  // 1 MiB of stores (zeroed)
  unsigned* p = buf.data();
  for (unsigned i = 0; i < (1u << 18); i++) p[i] = i * 2654435761u;  // 1 MiB of stores
  unsigned sum = 0;
  for (unsigned i = 0; i < (1u << 18); i++) sum += p[i];  // 1 MiB of loads
  float ms = -1;
  if (hipEventRecord(stop, 0) != hipSuccess || hipEventSynchronize(stop) != hipSuccess ||
      hipEventElapsedTime(&ms, start, stop) != hipSuccess) {
    std::fprintf(stderr, "host_work: timing failed\n");
    return 1;
  }
  std::printf("host_work: %.3f ms (sum %u)\n", ms, sum);
  return 0;
}
