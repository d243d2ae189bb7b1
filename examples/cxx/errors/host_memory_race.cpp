// hipHostMalloc's memory is seen by the race detector as device memory
// is: a kernel's lane stores to a pinned word while a hipMemsetAsync on
// another stream, which nothing orders against the kernel, clears it.
//   host_memory_race race:    two non-blocking streams: with EMUD_RACE=1
//                             the detector reports the memset against the
//                             lane's store (exit 5);
//   host_memory_race ordered: hipStreamSynchronize(clear) before the
//                             launch: no race, the kernel's value stays.
#include <cstring>

#include "../common.hpp"

__global__ void fill(unsigned* p) { *p = 1000; }

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const bool ordered = std::strcmp(mode, "ordered") == 0;
  if (!ordered && std::strcmp(mode, "race") != 0) {
    std::fprintf(stderr, "usage: host_memory_race race|ordered\n");
    return 3;
  }
  unsigned* h = nullptr;
  HIP_CHECK(hipHostMalloc((void**)&h, sizeof(unsigned), hipHostMallocMapped));
  hipStream_t clear, work;
  HIP_CHECK(hipStreamCreateWithFlags(&clear, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&work, hipStreamNonBlocking));
  HIP_CHECK(hipMemsetAsync(h, 0, sizeof(unsigned), clear));
  if (ordered) HIP_CHECK(hipStreamSynchronize(clear));
  fill<<<1, 1, 0, work>>>(h);
  HIP_CHECK(hipStreamSynchronize(work));
  HIP_CHECK(hipStreamSynchronize(clear));
  std::printf("host_memory_race %s: the word holds %u\n", mode, *h);
  HIP_CHECK(hipHostFree(h));
  return 0;
}
