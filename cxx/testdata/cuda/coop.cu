// A cooperative launch in CUDA (cudaLaunchCooperativeKernel with
// cooperative_groups' this_grid()): each thread adds its rank into a
// per-block sum, the grid syncs, and every thread reads the sum of the
// next block. argv[1] "big" launches 160 blocks of 512 threads (81,920
// threads: more than emud's 65,536 resident lanes, all within the GPU's
// CUs): the later blocks start when the first ones wait in the sync.
// "ex" makes the launch through cudaLaunchKernelEx with the cooperative
// attribute; "addr" passes the kernel as a void pointer, as CUDA's
// samples do: cudaLaunchCooperativeKernel((void*)nextSum, ...).
#include <cstdio>
#include <cstring>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void nextSum(unsigned long long* sums, unsigned long long* out) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  atomicAdd(&sums[blockIdx.x], (unsigned long long)grid.thread_rank());
  grid.sync();
  const unsigned next = (blockIdx.x + 1) % gridDim.x;
  if (block.thread_rank() == 0) out[blockIdx.x] = sums[next];
}

int main(int argc, char** argv) {
  const bool big = argc > 1 && !std::strcmp(argv[1], "big");
  const bool ex = argc > 1 && !std::strcmp(argv[1], "ex");
  const bool byAddr = argc > 1 && !std::strcmp(argv[1], "addr");
  const unsigned blocks = big ? 160 : 8, threads = big ? 512 : 64;
  unsigned long long *sums = nullptr, *out = nullptr;
  if (cudaMalloc(&sums, blocks * sizeof *sums) != cudaSuccess || cudaMalloc(&out, blocks * sizeof *out) != cudaSuccess)
    return 3;
  cudaMemset(sums, 0, blocks * sizeof *sums);
  void* args[] = {&sums, &out};
  cudaError_t e;
  if (ex) {  // the same launch through cudaLaunchKernelEx's cooperative attribute
    cudaLaunchAttribute at[2];
    at[0].id = cudaLaunchAttributeCooperative;
    at[0].val.cooperative = 1;
    at[1].id = cudaLaunchAttributePriority;
    at[1].val.priority = 0;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cfg.attrs = at;
    cfg.numAttrs = 2;
    e = cudaLaunchKernelEx(&cfg, nextSum, sums, out);
  } else if (byAddr) {
    e = cudaLaunchCooperativeKernel((void*)nextSum, dim3(blocks), dim3(threads), args, 0, nullptr);
  } else {
    e = cudaLaunchCooperativeKernel(nextSum, dim3(blocks), dim3(threads), args, 0, nullptr);
  }
  if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("cuda coop: %s\n", cudaGetErrorString(e));
    return 1;
  }
  unsigned long long h[256];
  cudaMemcpy(h, out, blocks * sizeof *out, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (unsigned b = 0; b < blocks; b++) {
    const unsigned long long n = (b + 1) % blocks, lo = n * threads;
    wrong += h[b] != threads * lo + (unsigned long long)threads * (threads - 1) / 2;
  }
  std::printf("cuda coop %u x %u: %d of %u sums wrong (%s)\n", blocks, threads, wrong, blocks, wrong ? "FAIL" : "PASS");
  return wrong != 0;
}
