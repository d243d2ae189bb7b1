// A grid of 32,768 lanes alive at once (64 blocks of 512 threads, the
// lanes of NCCL's 01_allreduce_lsa at 4 ranks): every block waits at
// __syncthreads while its thread 0 waits, with an atomic counter, until
// every block has arrived (and block 0 has counted, below); then each
// lane writes its index. Each lane has
// its own 256 KiB stack; with a guard page made by mprotect each stack
// was two mappings, 65,536 for the grid, over Linux's default
// vm.max_map_count (65,530), and the launch failed with "cannot allocate
// the lane's stack", or, where the mappings merged, went on with stacks
// whose guard page mprotect had failed to make. While every lane is alive,
// lane 0 counts the process's mappings: now a few per arena of 64 stacks.
#include <fcntl.h>
#include <unistd.h>

#include "common.hpp"

constexpr int kBlocks = 64, kThreads = 512;

static int mappings = -1;  // counted by lane 0 while every lane is alive

// countMappings counts the lines of /proc/self/maps.
static int countMappings() {
  int fd = open("/proc/self/maps", O_RDONLY);
  if (fd < 0) return -1;
  char buf[1 << 16];
  int n = 0;
  for (ssize_t r; (r = read(fd, buf, sizeof buf)) > 0;)
    for (ssize_t i = 0; i < r; i++) n += buf[i] == '\n';
  close(fd);
  return n;
}

__global__ void allAlive(int* arrived, int* out) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __hip_atomic_fetch_add(&arrived[0], 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    while (__hip_atomic_load(&arrived[0], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) < kBlocks) {
    }
    // Every lane is alive: each block's other lanes wait at the next
    // __syncthreads, and no block goes on until block 0 has counted.
    if (blockIdx.x == 0) {
      mappings = countMappings();
      __hip_atomic_store(&arrived[1], 1, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
    }
    while (__hip_atomic_load(&arrived[1], __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT) == 0) {
    }
  }
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i;
}

int main() {
  HIP_CHECK(hipSetDevice(0));
  int* arrived = nullptr;
  int* out = nullptr;
  HIP_CHECK(hipMalloc(&arrived, 2 * sizeof(int)));
  HIP_CHECK(hipMalloc(&out, kBlocks * kThreads * sizeof(int)));
  HIP_CHECK(hipMemset(arrived, 0, 2 * sizeof(int)));
  HIP_CHECK(hipMemset(out, 0xff, kBlocks * kThreads * sizeof(int)));
  allAlive<<<kBlocks, kThreads>>>(arrived, out);
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> got(kBlocks * kThreads);
  HIP_CHECK(hipMemcpy(got.data(), out, got.size() * sizeof(int), hipMemcpyDeviceToHost));
  int errors = 0;
  for (int i = 0; i < kBlocks * kThreads; i++) {
    if (got[i] != i && errors++ < 4) std::printf("out[%d] = %d, want %d\n", i, got[i], i);
  }
  std::printf("big_grid: %d mappings while every lane was alive\n", mappings);
  std::printf("big_grid: %d lanes, %s\n", kBlocks * kThreads, errors ? "FAIL" : "PASS");
  return errors ? 1 : 0;
}
