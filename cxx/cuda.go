package cxx

import "path/filepath"

// cudaDefines are what a CUDA source (.cu, -x cuda) is compiled with:
// nvcc's __CUDACC__ and __NVCC__, and EMUD_CUDA, which makes emud's
// headers give the CUDA dialect (warps of 32 whatever EMUD_ARCH, the
// cuda* runtime of include/cuda_runtime.h) even when a header reaches
// hip/hip_runtime.h first. __CUDA_ARCH__ stays undefined: a source is
// compiled once, as host code whose kernels run as native lanes.
var cudaDefines = []string{"-D__CUDACC__=1", "-D__NVCC__=1", "-DEMUD_CUDA=1"}

// isCUDA says whether source s is CUDA C++: a .cu file, or any file after
// -x cuda (or -x cu).
func isCUDA(s source) bool {
	return s.lang == "cuda" || s.lang == "cu" || (s.lang == "" && filepath.Ext(s.path) == ".cu")
}
