// A lane whose recursion outgrows its stack (emud gives each lane 256
// KiB, below which a guard page lies): the run stops naming the kernel,
// the line and what happened, "lane stack overflow", and exits 1. Before,
// the fault read as a host-pointer access or a memory fault at an
// address that was never allocated.
#include "../common.hpp"

__device__ __attribute__((noinline)) int deep(int n) {
  volatile char frame[2048];
  frame[n % 2048] = (char)n;
  if (n == 0) return frame[0];
  return deep(n - 1) + frame[n % 2048];
}

__global__ void recurse(int* out, int n) { out[threadIdx.x] = deep(n); }

int main() {
  int* out = nullptr;
  HIP_CHECK(hipMalloc(&out, 64 * sizeof(int)));
  recurse<<<1, 1>>>(out, 1 << 20);
  HIP_CHECK(hipDeviceSynchronize());
  std::printf("stack_overflow: the lane went on (FAIL)\n");
  return 1;
}
