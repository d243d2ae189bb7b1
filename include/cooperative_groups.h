// emud's <cooperative_groups.h>: the subset of CUDA's cooperative groups
// emud emulates, written for emud (not NVIDIA's header; docs/cuda.md).
// Groups are views of the block and its warps: their collectives are the
// lane runtime's __syncthreads, __syncwarp, shuffles and ballot, grouped
// by program order. Built: this_thread_block() (thread_block) and
// tiled_partition<32> (thread_block_tile<32>), and this_grid()
// (grid_group) in a cooperative launch. Refused at compile time, naming
// themselves: tiles of other sizes, coalesced_threads(),
// this_multi_grid().
#ifndef EMUD_COOPERATIVE_GROUPS_H
#define EMUD_COOPERATIVE_GROUPS_H

#include "cuda_runtime.h"
#include "emud/groups.h"  // thread_block, grid_group

namespace cooperative_groups {
namespace emudimpl {
template <class...>
inline constexpr bool unsupported_v = false;
}

// thread_block_tile<32>: the calling thread's warp.
template <unsigned N>
class thread_block_tile {
  static_assert(N == 32, "emud: thread_block_tile of 32 threads (a warp) only (docs/cuda.md)");

 public:
  void sync(EMUD_SITE) const { __syncwarp(~0ull, EMUD_SITE_ARGS); }
  unsigned long long thread_rank() const { return block().thread_rank() % 32; }
  unsigned long long size() const { return 32; }
  unsigned long long num_threads() const { return 32; }
  unsigned long long meta_group_rank() const { return block().thread_rank() / 32; }
  unsigned long long meta_group_size() const { return (block().size() + 31) / 32; }
  template <class T>
  T shfl(T v, int src, EMUD_SITE) const {
    return __shfl_sync(~0u, v, src, 32, EMUD_SITE_ARGS);
  }
  template <class T>
  T shfl_down(T v, unsigned d, EMUD_SITE) const {
    return __shfl_down_sync(~0u, v, d, 32, EMUD_SITE_ARGS);
  }
  template <class T>
  T shfl_up(T v, unsigned d, EMUD_SITE) const {
    return __shfl_up_sync(~0u, v, d, 32, EMUD_SITE_ARGS);
  }
  template <class T>
  T shfl_xor(T v, int m, EMUD_SITE) const {
    return __shfl_xor_sync(~0u, v, m, 32, EMUD_SITE_ARGS);
  }
  unsigned ballot(int pred, EMUD_SITE) const { return ::emud::cuda::ballot(pred, EMUD_SITE_ARGS); }
  int any(int pred, EMUD_SITE) const { return ballot(pred, EMUD_SITE_ARGS) != 0; }
  int all(int pred, EMUD_SITE) const { return ballot(!pred, EMUD_SITE_ARGS) == 0; }

 private:
  static thread_block block() { return thread_block(); }
};
template <unsigned N>
inline thread_block_tile<N> tiled_partition(const thread_block&) {
  return thread_block_tile<N>();
}
template <unsigned N>
inline void sync(const thread_block_tile<N>& g, EMUD_SITE) {
  g.sync(EMUD_SITE_ARGS);
}

#define EMUD_CG_UNSUPPORTED(name)                                                                             \
  template <class... A>                                                                                       \
  void name(A&&...) {                                                                                         \
    static_assert(emudimpl::unsupported_v<A...>,                                                              \
                  "cooperative_groups::" #name " is not supported by emud (docs/cuda.md lists what is)");     \
  }
EMUD_CG_UNSUPPORTED(this_multi_grid)
EMUD_CG_UNSUPPORTED(coalesced_threads)
#undef EMUD_CG_UNSUPPORTED
}  // namespace cooperative_groups

#endif
