// Device memory across the seeds of one seed server. A seed run with
// "write" fills a 1 MiB region and stores a byte past it inside its
// 2 MiB chunk (a stray store: the chunk is mapped whole); a seed run with
// "check" allocates the same region, at the same address, and must find
// every byte of it and the byte past it zero, as a fresh process does.
// "touch ADDR" reads a device address without allocating anything: it
// must fault as in a fresh process, whatever an earlier seed mapped.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr size_t kBytes = 1 << 20;
constexpr size_t kPast = kBytes + 12345;  // inside the region's chunk, past the region

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "check";
  if (std::strcmp(mode, "touch") == 0 && argc > 2) {
    volatile unsigned char* p = (unsigned char*)std::strtoull(argv[2], nullptr, 0);
    std::printf("read %d\n", p[0]);
    return 0;
  }
  unsigned char* d = nullptr;
  if (hipMalloc(&d, kBytes) != hipSuccess) return 2;
  std::vector<unsigned char> h(kBytes, 1);
  if (hipMemcpy(h.data(), d, kBytes, hipMemcpyDeviceToHost) != hipSuccess) return 3;
  size_t nonzero = 0;
  for (unsigned char b : h) nonzero += b != 0;
  int past = ((volatile unsigned char*)d)[kPast];
  std::printf("region %p: %zu nonzero bytes, past it %d\n", (void*)d, nonzero, past);
  if (std::strcmp(mode, "write") == 0) {
    if (hipMemset(d, 0xab, kBytes) != hipSuccess) return 4;
    if (hipDeviceSynchronize() != hipSuccess) return 5;
    ((volatile unsigned char*)d)[kPast] = 7;
  }
  return nonzero == 0 && past == 0 ? 0 : 1;
}
