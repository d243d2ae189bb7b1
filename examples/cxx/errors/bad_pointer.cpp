// A kernel that dereferences memory no device holds fails its lane with
// the address, and the run exits 1 with the report on stderr:
//   bad_pointer device: a store past the end of a hipMalloc'd buffer, into
//     GPU 0's slice where no allocation is;
//   bad_pointer host:   a load through a host pointer (a host buffer the
//     program freed; mapped at a fixed address so the report is the same
//     on every run);
//   bad_pointer live:   a load through a host pointer to live host memory:
//     only a build with -fsanitize=thread sees it (emud checks each lane
//     load and store); otherwise the load succeeds natively and the program
//     says so.
// All are bugs on hardware too (a GPU memory access fault).
#include <sys/mman.h>

#include <cstring>

#include "../common.hpp"

__global__ void storeAt(uint64_t* p, uint64_t v) {
  if (threadIdx.x == 0) p[0] = v;
}

__global__ void loadFrom(const uint64_t* p, uint64_t* out) {
  if (threadIdx.x == 0) out[0] = p[0];
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  HIP_CHECK(hipSetDevice(0));
  uint64_t* buf = nullptr;
  HIP_CHECK(hipMalloc(&buf, 4096));
  if (std::strcmp(mode, "device") == 0) {
    storeAt<<<1, 64>>>(buf + (1 << 27), 1);  // 1 GiB past the buffer
  } else if (std::strcmp(mode, "host") == 0 || std::strcmp(mode, "live") == 0) {
    void* host = mmap((void*)0x100000000000ull, 1 << 20, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (host == MAP_FAILED) {
      std::perror("mmap");
      return 3;
    }
    std::memset(host, 7, 1 << 20);
    if (mode[0] == 'h') munmap(host, 1 << 20);  // freed: the kernel reads a dangling host pointer
    loadFrom<<<1, 64>>>((const uint64_t*)host, buf);
  } else {
    std::fprintf(stderr, "usage: bad_pointer device|host|live\n");
    return 3;
  }
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("bad_pointer %s: no fault (FAIL)\n", mode);
  return 1;
}
