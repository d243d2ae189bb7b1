// Correct lane code: lane 0 of each of four blocks (four waves, no order
// between them) adds to one counter with an atomic read-modify-write, and
// block 0's lane 0 then polls the counter with an atomic load until every
// add is in. Atomics never race with atomics, so the race detector
// (EMUD_RACE=1) must stay quiet. Modes, one RMW form each:
//   atomic_rmw add        atomicAdd
//   atomic_rmw fetch_add  __hip_atomic_fetch_add (MORI's ReserveSlot)
//   atomic_rmw cas        an atomicCAS retry loop
//   atomic_rmw exchange   __hip_atomic_exchange of a per-block counter
// Prints PASS when the count (or, for exchange, each block's last value)
// is what the adds made.
#include <cstdio>
#include <cstring>

#include <hip/hip_runtime.h>

constexpr int kBlocks = 4;
constexpr int kAdds = 8;

__device__ void bump(unsigned long long* c, unsigned long long* mine, int mode) {
  switch (mode) {
    case 0:
      atomicAdd(c, 1ull);
      break;
    case 1:
      __hip_atomic_fetch_add(c, 1ull, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      break;
    case 2: {
      unsigned long long seen = __hip_atomic_load(c, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      for (;;) {
        const unsigned long long was = atomicCAS(c, seen, seen + 1);
        if (was == seen) break;
        seen = was;
      }
      break;
    }
    default: {
      // Each block swaps its own word, and counts the adds on the shared one.
      const unsigned long long old = __hip_atomic_exchange(mine, 0ull, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      __hip_atomic_exchange(mine, old + 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
      atomicAdd(c, 1ull);
    }
  }
}

__global__ void count(unsigned long long* c, unsigned long long* per, unsigned long long* out, int mode) {
  if (threadIdx.x != 0) return;
  for (int i = 0; i < kAdds; i++) bump(c, per + blockIdx.x, mode);
  if (blockIdx.x != 0) return;
  unsigned long long got;
  while ((got = __hip_atomic_load(c, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)) < (unsigned long long)kBlocks * kAdds) {
  }
  out[0] = got;
}

int main(int argc, char** argv) {
  const char* names[] = {"add", "fetch_add", "cas", "exchange"};
  const char* mode = argc > 1 ? argv[1] : "add";
  int m = -1;
  for (int i = 0; i < 4; i++)
    if (!strcmp(mode, names[i])) m = i;
  if (m < 0) {
    fprintf(stderr, "atomic_rmw: unknown mode %s\n", mode);
    return 64;
  }
  unsigned long long *c, *per, *out;
  hipMalloc(&c, sizeof *c);
  hipMalloc(&per, kBlocks * sizeof *per);
  hipMalloc(&out, sizeof *out);
  hipMemset(c, 0, sizeof *c);
  hipMemset(per, 0, kBlocks * sizeof *per);
  hipMemset(out, 0, sizeof *out);
  count<<<kBlocks, 64>>>(c, per, out, m);
  hipDeviceSynchronize();
  unsigned long long got = 0, perGot[kBlocks];
  hipMemcpy(&got, out, sizeof got, hipMemcpyDeviceToHost);
  hipMemcpy(perGot, per, sizeof perGot, hipMemcpyDeviceToHost);
  bool ok = got == (unsigned long long)kBlocks * kAdds;
  if (m == 3)
    for (int b = 0; b < kBlocks; b++) ok = ok && perGot[b] == kAdds;
  printf("atomic_rmw %s: %s (count %llu)\n", mode, ok ? "PASS" : "FAIL", got);
  return ok ? 0 : 1;
}
