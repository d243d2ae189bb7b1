// Loops made only of emud calls that can never end: each call returns at
// once, changes nothing and takes no virtual time, so no other thread can
// ever end the loop. The run stops as a hang (exit 2) naming the thread
// and its call's line; before, it ran forever at 100% CPU with no report.
//   call_loop sync:    a lane loops on __syncthreads (a block of one lane);
//   call_loop ballot:  a lane loops on __ballot;
//   call_loop shfl:    a lane loops on __shfl;
//   call_loop cycle:   a lane loops on __shfl and __ballot in turn (a
//                      grouping loop whose mask never empties);
//   call_loop fence:   a lane loops on __threadfence over a plain load (a
//                      fence with nothing to announce passes in the lane's
//                      own code, lane.c emud_fence_skip, but not forever);
//   call_loop device:  the host loops on hipDeviceSynchronize with no work.
#include <cstring>

#include "../common.hpp"

__global__ void loopSync(int* stop) {
  while (*stop == 0) __syncthreads();
}

__global__ void loopBallot(int* stop) {
  while (__ballot(*stop != 0) == 0) {
  }
}

__global__ void loopShfl(int* stop) {
  while (__shfl(*stop, 0) == 0) {
  }
}

__global__ void loopCycle(int* stop) {
  unsigned long long left = 1;
  while (left != 0) {
    const int k = __shfl(*stop, __builtin_ctzll(left));
    left &= ~__ballot(k != 0);
  }
}

__global__ void loopFence(int* stop) {
  while (*stop == 0) __threadfence();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "sync";
  int* stop = nullptr;
  HIP_CHECK(hipMalloc(&stop, sizeof(int)));
  HIP_CHECK(hipMemset(stop, 0, sizeof(int)));
  int host = 0;
  if (!std::strcmp(mode, "sync")) loopSync<<<1, 1>>>(stop);
  if (!std::strcmp(mode, "ballot")) loopBallot<<<1, 1>>>(stop);
  if (!std::strcmp(mode, "shfl")) loopShfl<<<1, 1>>>(stop);
  if (!std::strcmp(mode, "cycle")) loopCycle<<<1, 1>>>(stop);
  if (!std::strcmp(mode, "fence")) loopFence<<<1, 1>>>(stop);
  if (!std::strcmp(mode, "device"))
    while (host == 0) HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("call_loop %s: the loop ended (FAIL)\n", mode);
  return 1;
}
