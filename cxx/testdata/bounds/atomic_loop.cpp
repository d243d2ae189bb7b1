// Loops of atomic read-modify-writes that leave their word as it was: a
// read-modify-write that changes nothing is a load of the word, so each
// loop is a spin that waits for a write, and a write that never comes is a
// hang report naming the word and the line (cxx TestAtomicLoopIsASpin).
// Before, each ran forever at 100% CPU with no report (issue 45).
//   atomic_loop add0: a lane polls with atomicAdd(p, 0);
//   atomic_loop cas:  a lane spins on a lock held forever (atomicCAS);
//   atomic_loop pair: two lanes take turns on one CAS lock: it ends.
#include <cstdio>
#include <cstring>
#include "hip/hip_runtime.h"
__global__ void loopAdd0(unsigned* n) {
  while (atomicAdd(n, 0u) == 0) {
  }
}
__global__ void loopCas(int* lock) {
  while (atomicCAS(lock, 0, 1) != 0) {
  }
}
__global__ void lockPair(int* lock, int* out) {  // lane 0 holds the lock a while, lane 1 waits for it
  if (threadIdx.x == 0) {
    while (atomicCAS(lock, 0, 1) != 0) {}
    *out = 42;
    __threadfence();
    atomicExch(lock, 0);
  } else {
    while (atomicCAS(lock, 0, 1) != 0) {}
    out[1] = *out;
    atomicExch(lock, 0);
  }
}
int main(int argc, char** argv) {
  const char* m = argc > 1 ? argv[1] : "";
  int* lock; unsigned* n; int* out;
  hipMalloc(&lock, 4); hipMalloc(&n, 4); hipMalloc(&out, 8);
  hipMemset(lock, 0, 4); hipMemset(n, 0, 4); hipMemset(out, 0, 8);
  if (!strcmp(m, "add0")) loopAdd0<<<1, 1>>>(n);
  if (!strcmp(m, "cas")) { hipMemset(lock, 1, 1); loopCas<<<1, 1>>>(lock); }
  if (!strcmp(m, "pair")) lockPair<<<1, 2>>>(lock, out);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  int h[2]; hipMemcpy(h, out, 8, hipMemcpyDeviceToHost);
  std::printf("atomic_loop %s ended: %d %d\n", m, h[0], h[1]);
  return 0;
}
