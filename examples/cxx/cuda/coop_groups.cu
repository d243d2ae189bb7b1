// Cooperative groups on emud: a block-wide maximum by warp tiles
// (tiled_partition<32>, shfl_xor, ballot) and the block's sync. Prints
// PASS or what was wrong.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>

namespace cg = cooperative_groups;

__global__ void blockMax(const int* in, int* out, unsigned* bigWarps) {
  __shared__ int partial[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int v = in[block.group_index().x * block.size() + block.thread_rank()];
  for (int m = 16; m > 0; m /= 2) {
    int o = warp.shfl_xor(v, m);
    v = o > v ? o : v;
  }
  unsigned big = warp.ballot(v > 900);
  if (warp.thread_rank() == 0) {
    partial[warp.meta_group_rank()] = v;
    bigWarps[block.group_index().x * warp.meta_group_size() + warp.meta_group_rank()] = big;
  }
  block.sync();
  if (block.thread_rank() == 0) {
    int m = partial[0];
    for (unsigned w = 1; w < warp.meta_group_size(); w++) m = partial[w] > m ? partial[w] : m;
    out[block.group_index().x] = m;
  }
}

int main() {
  const int blocks = 3, threads = 96, n = blocks * threads;
  int h[n];
  for (int i = 0; i < n; i++) h[i] = (i * 37) % 1000;
  int *in, *out;
  unsigned* big;
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&out, blocks * sizeof(int));
  cudaMalloc(&big, blocks * 3 * sizeof(unsigned));
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  blockMax<<<blocks, threads>>>(in, out, big);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  int o[blocks];
  unsigned b[blocks * 3];
  cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
  cudaMemcpy(b, big, sizeof b, cudaMemcpyDeviceToHost);
  int errors = 0;
  for (int k = 0; k < blocks; k++) {
    int m = 0;
    for (int i = k * threads; i < (k + 1) * threads; i++) m = h[i] > m ? h[i] : m;
    if (o[k] != m) errors++, std::printf("block %d: max %d, want %d\n", k, o[k], m);
    for (int w = 0; w < 3; w++) {
      int wm = 0;
      for (int i = k * threads + w * 32; i < k * threads + w * 32 + 32; i++) wm = h[i] > wm ? h[i] : wm;
      unsigned want = wm > 900 ? 0xffffffffu : 0;  // every lane holds the warp's maximum
      if (b[k * 3 + w] != want) errors++, std::printf("block %d warp %d: ballot %#x, want %#x\n", k, w, b[k * 3 + w], want);
    }
  }
  std::printf("coop_groups: %s\n", errors ? "FAIL" : "PASS");
  return errors ? 1 : 0;
}
