// A HIP copy or memset given a bad host pointer: each is an error naming
// the call, the argument and the caller's line (hipErrorInvalidValue,
// which HIP_CHECK reports and exits 1), where touching the pointer would
// crash the whole program with a runtime dump and no line of the user's
// (issue 45).
//   host_pointer null     hipMemcpy to a null host destination
//   host_pointer wild     hipMemcpy from a wild host source
//   host_pointer freed    hipMemcpyAsync into a large buffer already freed
//   host_pointer memset   hipMemset of an unmapped host address
#include <sys/mman.h>

#include <cstring>

#include "../common.hpp"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  HIP_CHECK(hipSetDevice(0));
  void* dev = nullptr;
  const size_t n = 1 << 20;
  HIP_CHECK(hipMalloc(&dev, n));
  if (std::strcmp(mode, "null") == 0) {
    HIP_CHECK(hipMemcpy(nullptr, dev, 4096, hipMemcpyDeviceToHost));
  } else if (std::strcmp(mode, "wild") == 0) {
    HIP_CHECK(hipMemcpy(dev, (void*)(uintptr_t)0x10, 4096, hipMemcpyHostToDevice));
  } else if (std::strcmp(mode, "freed") == 0) {
    // A mapping of its own, unmapped again: what free does to a large
    // malloc (glibc maps those with mmap).
    void* host = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (host == MAP_FAILED) return 3;
    munmap(host, n);
    HIP_CHECK(hipMemcpyAsync(host, dev, n, hipMemcpyDeviceToHost, 0));
    HIP_CHECK(hipStreamSynchronize(0));
  } else if (std::strcmp(mode, "memset") == 0) {
    HIP_CHECK(hipMemset((void*)(uintptr_t)0x1000, 0, 64));
  } else {
    std::fprintf(stderr, "usage: host_pointer null|wild|freed|memset\n");
    return 3;
  }
  std::printf("host_pointer %s: FAIL (the call returned)\n", mode);
  return 0;
}
