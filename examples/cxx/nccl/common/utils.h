// The rank harness of emud's NCCL device-API examples, in the shape of
// NCCL's own examples (a main.cu per example and this common utility):
// one process, a pthread per rank, each with its own device and
// ncclCommInitRank on one unique id.
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

// What each rank's thread is given.
struct RankArgs {
  ncclUniqueId id;
  int rank, nRanks, device;
  int errors;  // set by the body: elements that came out wrong
};

// run_example starts one pthread per rank (argv[1] ranks, else every
// device), each running body, and joins them; it prints "<name>: PASS"
// when every rank's body found no error, and returns the exit status.
int run_example(int argc, char* argv[], const char* name, void (*body)(RankArgs*));

#endif
