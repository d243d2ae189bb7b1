// Emulated device memory costs the process about its size and no more:
// argv[1] MiB are allocated with hipMalloc, filled by hipMemset, written
// by a kernel (one word per lane, a lane per 64 KiB, so lane records stay small) and read back
// (cxx TestProbesRSSBound: peak RSS within 1.2x the emulated bytes plus
// the stated constant).
#include <cstdio>
#include <cstdlib>

#include "hip/hip_runtime.h"

__global__ void stamp(unsigned* p, size_t words) {
  size_t i = (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * 16384;
  if (i < words) p[i] = (unsigned)i;
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const size_t bytes = mib << 20, words = bytes / sizeof(unsigned);
  unsigned* p = nullptr;
  if (hipMalloc(&p, bytes) != hipSuccess) return 1;
  if (hipMemset(p, 1, bytes) != hipSuccess) return 1;
  const unsigned lanes = (unsigned)(words / 16384);
  stamp<<<(lanes + 255) / 256, 256>>>(p, words);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  unsigned first = 0, last = 0, mid = 0;
  if (hipMemcpy(&first, p + 1, sizeof first, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  if (hipMemcpy(&last, p + words - 16384, sizeof last, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  if (hipMemcpy(&mid, p + words / 2 + 1, sizeof mid, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  const bool ok = first == 0x01010101u && mid == 0x01010101u && last == (unsigned)(words - 16384);
  std::printf("big_alloc %zu MiB: %s\n", mib, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
