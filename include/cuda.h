// emud's cuda.h: the CUDA driver API's version, types and result codes,
// which CUDA programs include beside the runtime's. Written for emud
// (github.com/emud-dev/emud); not NVIDIA's header. emud emulates the
// runtime API (cuda_runtime.h, docs/cuda.md), not the driver's: each
// driver call below is a compile error naming it, never a silent no-op.
#ifndef EMUD_CUDA_H
#define EMUD_CUDA_H
#include "cuda_runtime.h"

#define CUDA_VERSION 12080

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef hipStream_t CUstream;
typedef hipEvent_t CUevent;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999,
} CUresult;

#define EMUD_CU_UNSUPPORTED(name)                                                                         \
  template <class... A>                                                                                   \
  CUresult name(A&&...) {                                                                                 \
    static_assert(::emud::cuda::unsupported_v<A...>,                                                      \
                  #name ": emud emulates CUDA's runtime API, not the driver's (docs/cuda.md)");         \
    return CUDA_ERROR_NOT_SUPPORTED;                                                                      \
  }
EMUD_CU_UNSUPPORTED(cuInit)
EMUD_CU_UNSUPPORTED(cuDriverGetVersion)
EMUD_CU_UNSUPPORTED(cuDeviceGet)
EMUD_CU_UNSUPPORTED(cuDeviceGetCount)
EMUD_CU_UNSUPPORTED(cuDeviceGetAttribute)
EMUD_CU_UNSUPPORTED(cuDeviceGetName)
EMUD_CU_UNSUPPORTED(cuCtxGetCurrent)
EMUD_CU_UNSUPPORTED(cuCtxSetCurrent)
EMUD_CU_UNSUPPORTED(cuCtxCreate)
EMUD_CU_UNSUPPORTED(cuCtxDestroy)
EMUD_CU_UNSUPPORTED(cuDevicePrimaryCtxRetain)
EMUD_CU_UNSUPPORTED(cuGetErrorString)
EMUD_CU_UNSUPPORTED(cuGetErrorName)
EMUD_CU_UNSUPPORTED(cuMemAlloc)
EMUD_CU_UNSUPPORTED(cuMemFree)
EMUD_CU_UNSUPPORTED(cuMemcpy)
EMUD_CU_UNSUPPORTED(cuMemGetAddressRange)
EMUD_CU_UNSUPPORTED(cuMemCreate)
EMUD_CU_UNSUPPORTED(cuMemMap)
EMUD_CU_UNSUPPORTED(cuMemUnmap)
EMUD_CU_UNSUPPORTED(cuMemRelease)
EMUD_CU_UNSUPPORTED(cuMemAddressReserve)
EMUD_CU_UNSUPPORTED(cuMemAddressFree)
EMUD_CU_UNSUPPORTED(cuMemSetAccess)
EMUD_CU_UNSUPPORTED(cuMemGetAllocationGranularity)
EMUD_CU_UNSUPPORTED(cuMulticastCreate)
EMUD_CU_UNSUPPORTED(cuModuleLoad)
EMUD_CU_UNSUPPORTED(cuModuleGetFunction)
EMUD_CU_UNSUPPORTED(cuLaunchKernel)
EMUD_CU_UNSUPPORTED(cuStreamWaitValue32)
EMUD_CU_UNSUPPORTED(cuStreamWriteValue32)
EMUD_CU_UNSUPPORTED(cuPointerGetAttribute)
#undef EMUD_CU_UNSUPPORTED

#endif
