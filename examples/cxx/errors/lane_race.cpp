// Two kernels on two streams that nothing orders store into the same
// device buffer: a data race between lanes. The lanes' stores are native,
// so the race detector sees them only in a build with -fsanitize=thread
// (emud implements TSan's callbacks and logs each lane load and store):
//   emud c++ -fsanitize=thread lane_race.cpp; EMUD_RACE=1 ./a.out  → exit 5
// With `ordered` the second kernel is on the first one's stream: no race.
#include <cstring>

#include "../common.hpp"

__global__ void fill(uint32_t* p, uint32_t v) { p[threadIdx.x] = v; }

int main(int argc, char** argv) {
  const bool ordered = argc > 1 && std::strcmp(argv[1], "ordered") == 0;
  HIP_CHECK(hipSetDevice(0));
  uint32_t* buf = nullptr;
  HIP_CHECK(hipMalloc(&buf, 64 * sizeof(uint32_t)));
  hipStream_t a, b;
  HIP_CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  fill<<<1, 1, 0, a>>>(buf, 1);
  fill<<<1, 1, 0, ordered ? a : b>>>(buf, 2);
  HIP_CHECK(hipDeviceSynchronize());
  uint32_t host[64];
  HIP_CHECK(hipMemcpy(host, buf, sizeof host, hipMemcpyDeviceToHost));
  std::printf("lane_race %s: buf[0] = %u\n", ordered ? "ordered" : "race", host[0]);
  return 0;
}
