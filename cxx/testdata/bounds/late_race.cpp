// Blocks that start as others retire are not ordered after them: every
// block's thread 0 stores its index to one word with no synchronisation,
// a race on a GPU whatever blocks it holds at once. Run with
// EMUD_RESIDENT_LANES=64 (one block at a time) and EMUD_RACE=1, the race
// detector reports it (cxx TestLateBlocksRace): a block is forked from
// what the launching thread had done at the launch, not from the block
// that retired to make room for it.
#include <cstdio>

#include "hip/hip_runtime.h"

__global__ void lastWriter(int* word) {
  if (threadIdx.x == 0) *word = (int)blockIdx.x;
}

int main() {
  int* word = nullptr;
  if (hipMalloc(&word, sizeof(int)) != hipSuccess) return 1;
  lastWriter<<<4, 64>>>(word);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  int h = -1;
  if (hipMemcpy(&h, word, sizeof h, hipMemcpyDeviceToHost) != hipSuccess) return 1;
  std::printf("late_race: last writer block %d\n", h);
  return 0;
}
