// Many launches under EMUD_RACE=1: the race detector reuses the thread
// slots of retired waves, so its memory stays bounded, and it still tells
// ordered launches from unordered ones (cxx TestRaceLaunchesBounded).
// argv[1] is the launch count on stream a; argv[2] says how a last launch
// on stream b is ordered after them: "synced" (hipStreamSynchronize(a)
// first: no race) or "unsynced" (nothing: a race with a's launches, which
// wait queued behind each other while the host goes on to stream b).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hip/hip_runtime.h"

__global__ void bump(unsigned* p) { p[blockIdx.x * blockDim.x + threadIdx.x] += 1; }

#define CHECK(x)                                                  \
  do {                                                            \
    if ((x) != hipSuccess) {                                      \
      std::printf("race_launches: %s failed at %d\n", #x, __LINE__); \
      return 1;                                                   \
    }                                                             \
  } while (0)

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100;
  const bool synced = argc > 2 && std::strcmp(argv[2], "synced") == 0;
  unsigned* p = nullptr;
  CHECK(hipMalloc(&p, 4 * 64 * sizeof(unsigned)));
  CHECK(hipMemset(p, 0, 4 * 64 * sizeof(unsigned)));
  hipStream_t a, b;
  CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  for (int i = 0; i < n; i++) bump<<<4, 64, 0, a>>>(p);  // one stream: ordered
  if (synced) CHECK(hipStreamSynchronize(a));
  bump<<<4, 64, 0, b>>>(p);
  CHECK(hipDeviceSynchronize());
  unsigned h = 0;
  CHECK(hipMemcpy(&h, p + 255, sizeof h, hipMemcpyDeviceToHost));
  std::printf("race_launches %d %s: last word %u (%s)\n", n, synced ? "synced" : "unsynced", h,
              h == (unsigned)n + 1 ? "PASS" : "FAIL");
  return h == (unsigned)n + 1 ? 0 : 1;
}
