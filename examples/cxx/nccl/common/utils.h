// The rank harness of emud's NCCL device-API examples, in the shape of
// NCCL's own examples (a main.cu per example and this common utility):
// one process, a pthread per rank (NTHREADS of them, else one per
// device), rank 0 makes the unique id and util_broadcast hands it to the
// others, each rank runs the example's function on its own device.
#ifndef EMUD_EXAMPLES_NCCL_UTILS_H
#define EMUD_EXAMPLES_NCCL_UTILS_H

#include <cstdio>
#include <cstdlib>

#include "cuda_runtime.h"
#include "nccl.h"

#define CUDACHECK(cmd)                                                                                    \
  do {                                                                                                    \
    cudaError_t e_ = (cmd);                                                                               \
    if (e_ != cudaSuccess) {                                                                              \
      std::fprintf(stderr, "%s:%d: CUDA error '%s' in %s\n", __FILE__, __LINE__, cudaGetErrorString(e_), #cmd); \
      std::exit(1);                                                                                       \
    }                                                                                                     \
  } while (0)

#define NCCLCHECK(cmd)                                                                                    \
  do {                                                                                                    \
    ncclResult_t r_ = (cmd);                                                                              \
    if (r_ != ncclSuccess) {                                                                              \
      std::fprintf(stderr, "%s:%d: NCCL error '%s' in %s\n", __FILE__, __LINE__, ncclGetErrorString(r_), #cmd); \
      std::exit(1);                                                                                       \
    }                                                                                                     \
  } while (0)

// util_broadcast gives every rank root's unique id: root's *arg is
// copied to the others' once all ranks have called it.
int util_broadcast(int root, int my_rank, ncclUniqueId* arg);

// run_example runs ncclExample(my_rank, total_ranks, local_device,
// devices_per_rank) on a pthread per rank and joins them. A rank's
// function returns NULL when its results were right, anything else when
// not; run_example returns 0 when every rank's were.
int run_example(int argc, char* argv[], void* (*ncclExample)(int, int, int, int));

#endif
