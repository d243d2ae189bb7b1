// A cooperative launch (hipLaunchCooperativeKernel) whose kernel syncs
// the whole grid (cooperative groups' this_grid().sync()): each thread
// writes its word, the grid syncs, and each thread reads the word of a
// thread in the next block.
//
// Modes (argv[1]):
//   (none)    PASS, race-clean under EMUD_RACE=1, twice over (two syncs);
//   nosync    the sync is left out: a race between blocks;
//   returned  one thread returns before the sync: a hang naming the
//             sync, 255 of 256 threads arrived and 1 returned;
//   plain     the kernel launched with hipLaunchKernel (as <<<>>>): its
//             sync fails the lane, naming the call;
//   toolarge  a grid larger than the GPU holds at once is refused with
//             hipErrorCooperativeLaunchTooLarge.
#include <cstdio>
#include <cstring>

#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr int kBlocks = 4, kThreads = 64, kN = kBlocks * kThreads;

__global__ void shift(unsigned* buf, unsigned* out, int mode) {
  cg::grid_group grid = cg::this_grid();
  const unsigned me = (unsigned)grid.thread_rank();
  if (mode == 2 && me == 77) return;  // returned: never reaches the sync
  for (int round = 0; round < 2; round++) {
    buf[me] = me + 1000u * round;
    if (mode != 1) grid.sync();
    out[me] = buf[(me + kThreads) % grid.size()];
    if (mode != 1) grid.sync();
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int m = !std::strcmp(mode, "nosync") ? 1 : !std::strcmp(mode, "returned") ? 2 : 0;
  unsigned *buf = nullptr, *out = nullptr;
  if (hipMalloc(&buf, kN * sizeof(unsigned)) != hipSuccess || hipMalloc(&out, kN * sizeof(unsigned)) != hipSuccess)
    return 3;
  void* args[] = {&buf, &out, &m};
  if (!std::strcmp(mode, "toolarge")) {
    hipError_t e = hipLaunchCooperativeKernel(shift, dim3(600), dim3(1024), args, 0, nullptr);
    std::printf("coop toolarge: %s\n", hipGetErrorName(e));
    return e == hipErrorCooperativeLaunchTooLarge ? 0 : 1;
  }
  if (!std::strcmp(mode, "plain")) {
    if (hipLaunchKernel(shift, dim3(kBlocks), dim3(kThreads), args, 0, nullptr) != hipSuccess) return 1;
  } else if (hipLaunchCooperativeKernel(shift, dim3(kBlocks), dim3(kThreads), args, 0, nullptr) != hipSuccess) {
    std::printf("coop: launch failed\n");
    return 1;
  }
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  unsigned h[kN];
  if (hipMemcpy(h, out, sizeof h, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  int wrong = 0;
  for (int i = 0; i < kN; i++) wrong += h[i] != (unsigned)((i + kThreads) % kN) + 1000u;
  std::printf("coop %s: %d of %d words wrong (%s)\n", *mode ? mode : "sync", wrong, kN, wrong ? "FAIL" : "PASS");
  return *mode ? 0 : wrong != 0;
}
