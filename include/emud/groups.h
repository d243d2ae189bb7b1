// The cooperative groups CUDA's <cooperative_groups.h> and HIP's
// <hip/hip_cooperative_groups.h> share, written for emud: the block
// (this_thread_block(), thread_block) and, in a cooperative launch
// (hipLaunchCooperativeKernel, cudaLaunchCooperativeKernel), the grid
// (this_grid(), grid_group), whose sync is a barrier of every thread of
// the grid (capi/gridsync.go); in any other launch that sync fails the
// lane naming the call. Included by those two headers, after the
// runtime's.
#ifndef EMUD_GROUPS_H
#define EMUD_GROUPS_H

namespace cooperative_groups {

class thread_block {
 public:
  void sync(EMUD_SITE) const { __syncthreads(EMUD_SITE_ARGS); }
  unsigned long long thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  unsigned long long size() const { return (unsigned long long)blockDim.x * blockDim.y * blockDim.z; }
  unsigned long long num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
  dim3 dim_threads() const { return group_dim(); }
};
inline thread_block this_thread_block() { return thread_block(); }

class grid_group {
 public:
  void sync(EMUD_SITE) const { ::emud::grid_sync(EMUD_SITE_ARGS); }
  bool is_valid() const { return true; }
  unsigned long long thread_rank() const { return block_rank() * block_size() + thread_block().thread_rank(); }
  unsigned long long size() const { return num_blocks() * block_size(); }
  unsigned long long num_threads() const { return size(); }
  unsigned long long block_rank() const { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
  unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
  dim3 group_dim() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
  dim3 dim_blocks() const { return group_dim(); }
  dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }

 private:
  static unsigned long long block_size() { return thread_block().size(); }
};
inline grid_group this_grid() { return grid_group(); }

inline void sync(const thread_block& g, EMUD_SITE) { g.sync(EMUD_SITE_ARGS); }
inline void sync(const grid_group& g, EMUD_SITE) { g.sync(EMUD_SITE_ARGS); }

}  // namespace cooperative_groups

#endif
