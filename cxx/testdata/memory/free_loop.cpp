// hipMalloc and hipFree in a loop, as a leak checker or a caching
// allocator's user does: each round allocates a large buffer, a kernel on
// a stream of its own fills it, and the buffer is freed with no
// synchronization of the program's own (hipFree's implicit
// hipDeviceSynchronize is the only one). A second buffer of the same size,
// made after the free, is written by a kernel on another stream. Prints
// hipMemGetInfo's free memory before the loop and after it: the same on
// a GPU, whose hipFree gives the memory back. Arguments: rounds (40),
// MiB per buffer (1024).
#include <cstdio>
#include <cstdlib>

#include "hip/hip_runtime.h"

#define CHECK(x)                                                                 \
  do {                                                                           \
    hipError_t e_ = (x);                                                         \
    if (e_ != hipSuccess) {                                                      \
      std::printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

__global__ void fill(unsigned* p, unsigned v) { p[threadIdx.x] = v + threadIdx.x; }

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 40;
  const size_t bytes = (argc > 2 ? std::atoll(argv[2]) : 1024) << 20;
  hipStream_t a, b;
  CHECK(hipStreamCreate(&a));
  CHECK(hipStreamCreate(&b));
  size_t before = 0, after = 0, total = 0;
  CHECK(hipMemGetInfo(&before, &total));
  for (int r = 0; r < rounds; r++) {
    unsigned* p = nullptr;
    CHECK(hipMalloc(&p, bytes));
    fill<<<1, 64, 0, a>>>(p, 100u * r);
    CHECK(hipFree(p));  // waits for the fill: HIP's implicit device synchronize
    unsigned* q = nullptr;
    CHECK(hipMalloc(&q, bytes));
    fill<<<1, 64, 0, b>>>(q, 7u);
    CHECK(hipStreamSynchronize(b));
    unsigned got[64];
    CHECK(hipMemcpy(got, q, sizeof got, hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++)
      if (got[i] != 7u + i) {
        std::printf("free loop: FAIL: round %d word %d is %u\n", r, i, got[i]);
        return 1;
      }
    CHECK(hipFree(q));
  }
  CHECK(hipMemGetInfo(&after, &total));
  std::printf("free before %zu after %zu\n", before, after);
  std::printf(before == after ? "free loop: PASS\n" : "free loop: FAIL: memory kept\n");
  return before == after ? 0 : 1;
}
