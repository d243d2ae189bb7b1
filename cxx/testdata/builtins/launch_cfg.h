// A user's own header whose struct has members named as the built-in
// variables (cxx TestBuiltinNames): the rewriter never sees a header, so
// these compile only because the built-ins are objects, not macros.
#pragma once
#include <hip/hip_runtime.h>

struct LaunchCfg {
  dim3 gridDim;
  dim3 blockDim;
  int threadIdx;  // a member of another type, named as a built-in
};

// blockIdx as a parameter of a declaration in a header.
unsigned firstLane(const LaunchCfg& cfg, unsigned blockIdx);
