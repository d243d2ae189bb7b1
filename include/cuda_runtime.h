// emud's cuda_runtime.h: the CUDA runtime subset emud emulates, over the
// same emulator entries as emud's hip/hip_runtime.h (include/emud/abi.h).
// Written for emud (github.com/emud-dev/emud); not NVIDIA's header. A CUDA
// program built with emud c++ runs its kernels as native lanes in warps of
// 32 on the emulated node (capi/doc.go; docs/cuda.md lists what is
// emulated, refused and partial). A CUDA call emud does not emulate is a
// compile error naming it, never a silent no-op.
#ifndef EMUD_CUDA_RUNTIME_H
#define EMUD_CUDA_RUNTIME_H

#if defined(EMUD_HIP_RUNTIME_H) && !defined(EMUD_CUDA)
#error "emud: cuda_runtime.h after hip/hip_runtime.h in one translation unit: a source is CUDA (warps of 32) or HIP, not both"
#endif
#ifndef EMUD_CUDA
#define EMUD_CUDA 1
#endif
#include "hip/hip_runtime.h"

// What nvcc predefines (emud c++ predefines them for .cu sources and -x
// cuda too). __CUDA_ARCH__ is not defined: emud compiles a source once,
// as host code, so code under #ifdef __CUDA_ARCH__ is left out.
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#define CUDART_VERSION 12080
#define __CUDART_API_VERSION 12080

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalState = 401,
  cudaErrorNotReady = 600,
  cudaErrorHostMemoryAlreadyRegistered = 712,
  cudaErrorHostMemoryNotRegistered = 713,
  cudaErrorLaunchFailure = 719,
  cudaErrorCooperativeLaunchTooLarge = 720,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorUnknown = 999,
} cudaError_t;

typedef hipStream_t cudaStream_t;
// CUDA's default streams by name (hip_runtime.h's, the same values).
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
typedef hipEvent_t cudaEvent_t;
typedef enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
} cudaMemcpyKind;
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaEventDefault 0x0
#define cudaEventBlockingSync 0x1
#define cudaEventDisableTiming 0x2
#define cudaHostAllocDefault 0x0

typedef struct cudaUUID_st {
  char bytes[16];
} cudaUUID_t;
// The fields CUDA programs read most (names and types as CUDA's); the
// figures are emud's GPU's (hipGetDeviceProperties), with warps of 32.
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
};

namespace emud {
namespace cuda {
// The HIP layer's codes are CUDA's numbers for every error it returns.
inline cudaError_t err(hipError_t e) { return (cudaError_t)(int)e; }
}  // namespace cuda
}  // namespace emud

inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error";
  }
}
inline const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidPitchValue: return "cudaErrorInvalidPitchValue";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorCooperativeLaunchTooLarge: return "cudaErrorCooperativeLaunchTooLarge";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}
inline cudaError_t cudaGetLastError() { return ::emud::cuda::err(hipGetLastError()); }
inline cudaError_t cudaPeekAtLastError() { return ::emud::cuda::err(hipPeekAtLastError()); }
inline cudaError_t cudaGetDeviceCount(int* n, EMUD_SITE) { return ::emud::cuda::err(hipGetDeviceCount(n, EMUD_SITE_ARGS)); }
inline cudaError_t cudaSetDevice(int d, EMUD_SITE) { return ::emud::cuda::err(hipSetDevice(d, EMUD_SITE_ARGS)); }
inline cudaError_t cudaGetDevice(int* d, EMUD_SITE) { return ::emud::cuda::err(hipGetDevice(d, EMUD_SITE_ARGS)); }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int dev, EMUD_SITE) {
  hipDeviceProp_t h;
  hipError_t e = hipGetDeviceProperties(&h, dev, EMUD_SITE_ARGS);
  if (e != hipSuccess) return ::emud::cuda::err(e);
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "emud NVLink-class GPU (warps of 32)");
  for (int i = 0; i < 16; i++) p->uuid.bytes[i] = (char)(i == 15 ? dev + 1 : 0x5e);  // one per device, never all zero
  p->totalGlobalMem = h.totalGlobalMem;
  p->sharedMemPerBlock = p->sharedMemPerBlockOptin = h.sharedMemPerBlock;
  p->regsPerBlock = p->regsPerMultiprocessor = h.regsPerBlock;
  p->warpSize = 32;
  p->memPitch = (size_t)1 << 31;
  p->maxThreadsPerBlock = h.maxThreadsPerBlock;
  for (int i = 0; i < 3; i++) {
    p->maxThreadsDim[i] = h.maxThreadsDim[i];
    p->maxGridSize[i] = h.maxGridSize[i];
  }
  p->clockRate = h.clockRate;
  p->totalConstMem = h.totalConstMem;
  p->major = 10;  // compute capability 10.0, a Blackwell-class part (NVLink 5)
  p->minor = 0;
  p->textureAlignment = 512;
  p->deviceOverlap = 1;
  p->multiProcessorCount = h.multiProcessorCount;
  p->integrated = h.integrated;
  p->canMapHostMemory = h.canMapHostMemory;
  p->computeMode = h.computeMode;
  p->concurrentKernels = h.concurrentKernels;
  p->pciBusID = h.pciBusID;
  p->pciDeviceID = h.pciDeviceID;
  p->pciDomainID = h.pciDomainID;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryClockRate = h.memoryClockRate;
  p->memoryBusWidth = h.memoryBusWidth;
  p->l2CacheSize = h.l2CacheSize;
  p->maxThreadsPerMultiProcessor = h.maxThreadsPerMultiProcessor;
  p->globalL1CacheSupported = p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = h.maxSharedMemoryPerMultiProcessor;
  p->managedMemory = h.managedMemory;
  p->isMultiGpuBoard = h.isMultiGpuBoard;
  p->hostNativeAtomicSupported = 1;
  p->cooperativeLaunch = h.cooperativeLaunch;
  p->maxBlocksPerMultiProcessor = h.maxThreadsPerMultiProcessor / 32 > 0 ? h.maxThreadsPerMultiProcessor / 32 : 1;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceCanAccessPeer(int* can, int dev, int peer, EMUD_SITE) {
  return ::emud::cuda::err(hipDeviceCanAccessPeer(can, dev, peer, EMUD_SITE_ARGS));
}
inline cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipDeviceEnablePeerAccess(peer, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMalloc(void** p, size_t n, EMUD_SITE) { return ::emud::cuda::err(hipMalloc(p, n, EMUD_SITE_ARGS)); }
template <class T>
inline cudaError_t cudaMalloc(T** p, size_t n, EMUD_SITE) {
  return cudaMalloc((void**)p, n, EMUD_SITE_ARGS);
}
inline cudaError_t cudaFree(void* p, EMUD_SITE) { return ::emud::cuda::err(hipFree(p, EMUD_SITE_ARGS)); }
inline cudaError_t cudaMallocHost(void** p, size_t n, EMUD_SITE) { return ::emud::cuda::err(hipHostMalloc(p, n, 0, EMUD_SITE_ARGS)); }
template <class T>
inline cudaError_t cudaMallocHost(T** p, size_t n, EMUD_SITE) {
  return cudaMallocHost((void**)p, n, EMUD_SITE_ARGS);
}
inline cudaError_t cudaFreeHost(void* p, EMUD_SITE) { return ::emud::cuda::err(hipHostFree(p, EMUD_SITE_ARGS)); }
inline cudaError_t cudaMemGetInfo(size_t* free_, size_t* total, EMUD_SITE) {
  return ::emud::cuda::err(hipMemGetInfo(free_, total, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind k, EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpy(dst, src, n, (hipMemcpyKind)k, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind k, cudaStream_t s = nullptr,
                                   EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpyAsync(dst, src, n, (hipMemcpyKind)k, s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMemset(void* dst, int v, size_t n, EMUD_SITE) {
  return ::emud::cuda::err(hipMemset(dst, v, n, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMemsetAsync(void* dst, int v, size_t n, cudaStream_t s = nullptr, EMUD_SITE) {
  return ::emud::cuda::err(hipMemsetAsync(dst, v, n, s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamCreate(cudaStream_t* s, EMUD_SITE) { return ::emud::cuda::err(hipStreamCreate(s, EMUD_SITE_ARGS)); }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamCreateWithFlags(s, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamSynchronize(s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s, EMUD_SITE) { return ::emud::cuda::err(hipStreamDestroy(s, EMUD_SITE_ARGS)); }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags = 0, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamWaitEvent(s, e, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaDeviceSynchronize(EMUD_SITE) { return ::emud::cuda::err(hipDeviceSynchronize(EMUD_SITE_ARGS)); }
inline cudaError_t cudaEventCreate(cudaEvent_t* e, EMUD_SITE) { return ::emud::cuda::err(hipEventCreate(e, EMUD_SITE_ARGS)); }
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipEventCreateWithFlags(e, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr, EMUD_SITE) {
  return ::emud::cuda::err(hipEventRecord(e, s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e, EMUD_SITE) {
  return ::emud::cuda::err(hipEventSynchronize(e, EMUD_SITE_ARGS));
}
inline cudaError_t cudaEventQuery(cudaEvent_t e, EMUD_SITE) { return ::emud::cuda::err(hipEventQuery(e, EMUD_SITE_ARGS)); }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b, EMUD_SITE) {
  return ::emud::cuda::err(hipEventElapsedTime(ms, a, b, EMUD_SITE_ARGS));
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e, EMUD_SITE) { return ::emud::cuda::err(hipEventDestroy(e, EMUD_SITE_ARGS)); }

// ---- copies between devices, pinned memory, stream queries, device
// attributes and settings, kernels' attributes and occupancy: the HIP
// layer's (docs/hip.md), with CUDA's names, enums and figures ----
#define cudaHostAllocPortable 0x1
#define cudaHostAllocMapped 0x2
#define cudaHostAllocWriteCombined 0x4
#define cudaDeviceScheduleAuto 0x0
#define cudaDeviceScheduleSpin 0x1
#define cudaDeviceScheduleYield 0x2
#define cudaDeviceScheduleBlockingSync 0x4
#define cudaDeviceMapHost 0x8
#define cudaDeviceLmemResizeToMax 0x10
typedef enum cudaLimit { cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2 } cudaLimit;
typedef enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
} cudaFuncAttribute;
struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
};
typedef enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
} cudaMemoryType;
struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};
// The attributes collective code asks for, with CUDA's numbers; any other
// is cudaErrorInvalidValue.
typedef enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrPciDomainId = 50,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrManagedMemory = 83,
  cudaDevAttrIsMultiGpuBoard = 84,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
} cudaDeviceAttr;

inline cudaError_t cudaMemcpyPeer(void* dst, int dstDev, const void* src, int srcDev, size_t n, EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpyPeer(dst, dstDev, src, srcDev, n, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDev, const void* src, int srcDev, size_t n,
                                       cudaStream_t s = nullptr, EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpyPeerAsync(dst, dstDev, src, srcDev, n, s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipHostMalloc(p, n, flags, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaHostAlloc(T** p, size_t n, unsigned flags, EMUD_SITE) {
  return cudaHostAlloc((void**)p, n, flags, EMUD_SITE_ARGS);
}
inline cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipHostGetDevicePointer(d, h, flags, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaHostGetDevicePointer(T** d, void* h, unsigned flags, EMUD_SITE) {
  return cudaHostGetDevicePointer((void**)d, h, flags, EMUD_SITE_ARGS);
}
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* at, const void* p, EMUD_SITE) {
  if (!at) return cudaErrorInvalidValue;
  hipPointerAttribute_t h;
  hipError_t e = hipPointerGetAttributes(&h, p, EMUD_SITE_ARGS);
  if (e != hipSuccess) return ::emud::cuda::err(e);
  at->type = (cudaMemoryType)h.type;
  at->device = h.device;
  at->devicePointer = h.devicePointer;
  at->hostPointer = h.hostPointer;
  return cudaSuccess;
}
// Interprocess memory handles: HIP's (capi/ipc.go), except that a handle
// opens to its allocation's base, as CUDA's does, whatever pointer into it
// the handle was made from.
#define CUDA_IPC_HANDLE_SIZE 64
typedef struct cudaIpcMemHandle_st { char reserved[CUDA_IPC_HANDLE_SIZE]; } cudaIpcMemHandle_t;
#define cudaIpcMemLazyEnablePeerAccess 0x01
inline cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* hd, void* p, EMUD_SITE) {
  return ::emud::cuda::err(hipIpcGetMemHandle(reinterpret_cast<hipIpcMemHandle_t*>(hd), p, EMUD_SITE_ARGS));
}
inline cudaError_t cudaIpcOpenMemHandle(void** p, cudaIpcMemHandle_t hd, unsigned flags, EMUD_SITE) {
  hipIpcMemHandle_t h;
  static_assert(sizeof h == sizeof hd, "IPC handles of one size");
  std::memcpy(&h, &hd, sizeof h);
  return ::emud::cuda::err(::emud::ipc_open(p, h, flags, 1, __emud_file, __emud_line));
}
template <class T>
inline cudaError_t cudaIpcOpenMemHandle(T** p, cudaIpcMemHandle_t hd, unsigned flags, EMUD_SITE) {
  return cudaIpcOpenMemHandle((void**)p, hd, flags, EMUD_SITE_ARGS);
}
inline cudaError_t cudaIpcCloseMemHandle(void* p, EMUD_SITE) {
  return ::emud::cuda::err(hipIpcCloseMemHandle(p, EMUD_SITE_ARGS));
}
// Managed and stream-ordered allocation, host flags, device choice and
// peer attributes: HIP's (hip.md), with CUDA's constants.
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
inline cudaError_t cudaMallocManaged(void** p, size_t n, unsigned flags = cudaMemAttachGlobal, EMUD_SITE) {
  return ::emud::cuda::err(hipMallocManaged(p, n, flags, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaMallocManaged(T** p, size_t n, unsigned flags = cudaMemAttachGlobal, EMUD_SITE) {
  return cudaMallocManaged((void**)p, n, flags, EMUD_SITE_ARGS);
}
inline cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s, EMUD_SITE) {
  return ::emud::cuda::err(hipMallocAsync(p, n, s, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaMallocAsync(T** p, size_t n, cudaStream_t s, EMUD_SITE) {
  return cudaMallocAsync((void**)p, n, s, EMUD_SITE_ARGS);
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t s, EMUD_SITE) {
  return ::emud::cuda::err(hipFreeAsync(p, s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaHostGetFlags(unsigned* flags, void* p, EMUD_SITE) {
  return ::emud::cuda::err(hipHostGetFlags(flags, p, EMUD_SITE_ARGS));
}
inline cudaError_t cudaDeviceGetPCIBusId(char* id, int len, int dev, EMUD_SITE) {
  return ::emud::cuda::err(hipDeviceGetPCIBusId(id, len, dev, EMUD_SITE_ARGS));
}
inline cudaError_t cudaChooseDevice(int* dev, const cudaDeviceProp* prop, EMUD_SITE) {
  if (!dev || !prop) return cudaErrorInvalidValue;
  *dev = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetByPCIBusId(int* dev, const char* id, EMUD_SITE) {
  return ::emud::cuda::err(hipDeviceGetByPCIBusId(dev, id, EMUD_SITE_ARGS));
}
typedef enum cudaDeviceP2PAttr {
  cudaDevP2PAttrPerformanceRank = 1,
  cudaDevP2PAttrAccessSupported = 2,
  cudaDevP2PAttrNativeAtomicSupported = 3,
  cudaDevP2PAttrCudaArrayAccessSupported = 4
} cudaDeviceP2PAttr;
inline cudaError_t cudaDeviceGetP2PAttribute(int* v, cudaDeviceP2PAttr attr, int src, int dst, EMUD_SITE) {
  if (attr < cudaDevP2PAttrPerformanceRank || attr > cudaDevP2PAttrCudaArrayAccessSupported) return cudaErrorInvalidValue;
  return ::emud::cuda::err(hipDeviceGetP2PAttribute(v, (hipDeviceP2PAttr)(attr - 1), src, dst, EMUD_SITE_ARGS));
}
// cudaLaunchCooperativeKernel: hipLaunchCooperativeKernel's (hip.md):
// every block fits the GPU at once, and this_grid().sync() is a barrier
// of the whole grid; the kernel is passed as itself, or as a void
// pointer the program's source cast it to (emud::launch_addr).
template <class... P>
inline cudaError_t cudaLaunchCooperativeKernel(void (*f)(P...), dim3 g, dim3 b, void** args, size_t shmem = 0,
                                               cudaStream_t s = nullptr, EMUD_SITE) {
  return ::emud::cuda::err(
      ::emud::coop_launch(f, g, b, args, shmem, s, __emud_file, __emud_line, std::index_sequence_for<P...>{}));
}
template <class T>
inline cudaError_t cudaLaunchCooperativeKernel(T* f, dim3 g, dim3 b, void** args, size_t shmem = 0,
                                               cudaStream_t s = nullptr, EMUD_SITE) {
  return ::emud::cuda::err(
      ::emud::launch_addr("cudaLaunchCooperativeKernel", f, g, b, args, shmem, s, __emud_file, __emud_line, 1));
}
// cudaLaunchKernel: hipLaunchKernel's (the kernel passed as itself or as
// a void pointer).
template <class... P>
inline cudaError_t cudaLaunchKernel(void (*f)(P...), dim3 g, dim3 b, void** args, size_t shmem = 0,
                                    cudaStream_t s = nullptr, EMUD_SITE) {
  return ::emud::cuda::err(
      ::emud::coop_launch(f, g, b, args, shmem, s, __emud_file, __emud_line, std::index_sequence_for<P...>{}, 0));
}
template <class T>
inline cudaError_t cudaLaunchKernel(T* f, dim3 g, dim3 b, void** args, size_t shmem = 0, cudaStream_t s = nullptr,
                                    EMUD_SITE) {
  return ::emud::cuda::err(::emud::launch_addr("cudaLaunchKernel", f, g, b, args, shmem, s, __emud_file, __emud_line, 0));
}
// Host functions on a stream: hipLaunchHostFunc's (hip.md).
typedef hipHostFn_t cudaHostFn_t;
typedef void (*cudaStreamCallback_t)(cudaStream_t, cudaError_t, void*);
inline cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* data, EMUD_SITE) {
  return ::emud::cuda::err(hipLaunchHostFunc(s, fn, data, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* data, unsigned flags, EMUD_SITE) {
  // hipError_t and cudaError_t share their numbers (err above), and the
  // callback's other arguments their types.
  return ::emud::cuda::err(
      hipStreamAddCallback(s, reinterpret_cast<hipStreamCallback_t>(cb), data, flags, EMUD_SITE_ARGS));
}
// Stream capture and graphs: HIP's (hip.md); cudaGraphInstantiate has
// CUDA 12's form (flags).
typedef hipGraph_t cudaGraph_t;
typedef hipGraphExec_t cudaGraphExec_t;
typedef hipGraphNode_t cudaGraphNode_t;
typedef enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2
} cudaStreamCaptureMode;
typedef enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2
} cudaStreamCaptureStatus;
inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamBeginCapture(s, (hipStreamCaptureMode)mode, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamEndCapture(s, g, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* st, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamIsCapturing(s, reinterpret_cast<hipStreamCaptureStatus*>(st), EMUD_SITE_ARGS));
}
inline cudaError_t cudaGraphCreate(cudaGraph_t* g, unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipGraphCreate(g, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t g, EMUD_SITE) { return ::emud::cuda::err(hipGraphDestroy(g, EMUD_SITE_ARGS)); }
namespace emud {
namespace cuda {
// noMoreArgs ends a call's own parameters before the defaulted site
// ones: a call with more arguments (the older signature below) cannot
// slide them into the site's file and line.
struct noMoreArgs {};
}  // namespace cuda
}  // namespace emud
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags = 0,
                                        ::emud::cuda::noMoreArgs = {}, EMUD_SITE) {
  return ::emud::cuda::err(hipGraphInstantiateWithFlags(e, g, flags, EMUD_SITE_ARGS));
}
// The signature before CUDA 12 (error node and log buffer), which CUDA 12
// keeps for C++: no error node is ever reported and the log is empty.
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, cudaGraphNode_t* errorNode, char* log,
                                        size_t logSize, EMUD_SITE) {
  if (errorNode) *errorNode = nullptr;
  if (log && logSize > 0) log[0] = 0;
  return ::emud::cuda::err(hipGraphInstantiateWithFlags(e, g, 0, EMUD_SITE_ARGS));
}
inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags = 0,
                                                 EMUD_SITE) {
  return ::emud::cuda::err(hipGraphInstantiateWithFlags(e, g, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s, EMUD_SITE) {
  return ::emud::cuda::err(hipGraphLaunch(e, s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e, EMUD_SITE) {
  return ::emud::cuda::err(hipGraphExecDestroy(e, EMUD_SITE_ARGS));
}
// cudaLaunchKernelEx (CUDA 12's, its C++ form: the kernel and its
// arguments): the launch of its config's grid, block, dynamic shared
// memory and stream. Attributes: cudaLaunchAttributeCooperative makes it
// a cooperative launch (cudaLaunchCooperativeKernel's); a priority and
// programmatic stream serialization are taken and change nothing (the
// launch keeps its stream's full order); a cluster of 1x1x1 is no
// cluster. Any other attribute is cudaErrorNotSupported, naming it.
typedef enum cudaLaunchAttributeID {
  cudaLaunchAttributeIgnore = 0,
  cudaLaunchAttributeAccessPolicyWindow = 1,
  cudaLaunchAttributeCooperative = 2,
  cudaLaunchAttributeSynchronizationPolicy = 3,
  cudaLaunchAttributeClusterDimension = 4,
  cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
  cudaLaunchAttributeProgrammaticStreamSerialization = 6,
  cudaLaunchAttributeProgrammaticEvent = 7,
  cudaLaunchAttributePriority = 8,
} cudaLaunchAttributeID;
typedef union cudaLaunchAttributeValue {
  char pad[64];
  int cooperative;
  struct {
    unsigned x, y, z;
  } clusterDim;
  int programmaticStreamSerializationAllowed;
  int priority;
} cudaLaunchAttributeValue;
typedef struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  char pad[8 - sizeof(cudaLaunchAttributeID)];
  cudaLaunchAttributeValue val;
} cudaLaunchAttribute;
typedef struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned int numAttrs;
} cudaLaunchConfig_t;
namespace emud {
namespace cuda {
// with_site carries the call's file and line into a variadic call, whose
// own parameters cannot end with defaulted ones: its constructor's
// defaults are taken where the argument converts, at the caller's line.
template <class T>
struct with_site {
  T v;
  const char* file;
  int line;
  with_site(T value, const char* f = __builtin_FILE(), int l = __builtin_LINE()) : v(value), file(f), line(l) {}
};
}  // namespace cuda
}  // namespace emud
template <class... P, class... A>
inline cudaError_t cudaLaunchKernelEx(::emud::cuda::with_site<const cudaLaunchConfig_t*> site, void (*f)(P...),
                                      A&&... args) {
  const cudaLaunchConfig_t* cfg = site.v;
  if (!cfg || !f || (cfg->numAttrs && !cfg->attrs)) return cudaErrorInvalidValue;
  static_assert(sizeof...(P) == sizeof...(A), "cudaLaunchKernelEx: one argument a kernel parameter");
  int coop = 0;
  for (unsigned i = 0; i < cfg->numAttrs; i++) {
    const cudaLaunchAttribute& at = cfg->attrs[i];
    switch (at.id) {
      case cudaLaunchAttributeIgnore:
      case cudaLaunchAttributePriority:
      case cudaLaunchAttributeProgrammaticStreamSerialization: break;
      case cudaLaunchAttributeCooperative: coop = at.val.cooperative != 0; break;
      case cudaLaunchAttributeClusterDimension:
        if (at.val.clusterDim.x * at.val.clusterDim.y * at.val.clusterDim.z <= 1) break;
        [[fallthrough]];
      default:
        std::fprintf(stderr, "emud: %s:%d: cudaLaunchKernelEx: launch attribute %d is not emulated (docs/cuda.md)\n",
                     site.file, site.line, (int)at.id);
        return (cudaError_t)(::emud::last_error = hipErrorNotSupported);
    }
  }
  ::emud::launch_cfg c{cfg->gridDim, cfg->blockDim, cfg->dynamicSmemBytes, cfg->stream, site.file, site.line,
                       coop, (const void*)f};
  auto body = [f](auto&... a) { f(a...); };
  return ::emud::cuda::err(::emud::launch(c, coop ? "cooperative kernel" : "kernel", body, P(std::forward<A>(args))...));
}
// Symbols: hipMemcpyToSymbol's (hip.md), with CUDA's names.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& sym, const void* src, size_t n, size_t off = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice, EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpyToSymbol(sym, src, n, off, (hipMemcpyKind)kind, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& sym, size_t n, size_t off = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost, EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpyFromSymbol(dst, sym, n, off, (hipMemcpyKind)kind, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T& sym, const void* src, size_t n, size_t off = 0,
                                           cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t s = nullptr,
                                           EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpyToSymbolAsync(sym, src, n, off, (hipMemcpyKind)kind, s, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& sym, size_t n, size_t off = 0,
                                             cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t s = nullptr,
                                             EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpyFromSymbolAsync(dst, sym, n, off, (hipMemcpyKind)kind, s, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** p, const T& sym, EMUD_SITE) {
  return ::emud::cuda::err(hipGetSymbolAddress(p, sym, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaGetSymbolSize(size_t* n, const T& sym, EMUD_SITE) {
  return ::emud::cuda::err(hipGetSymbolSize(n, sym, EMUD_SITE_ARGS));
}
// Pitched memory and 2D copies: HIP's (hip.md).
inline cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height, EMUD_SITE) {
  return ::emud::cuda::err(hipMallocPitch(p, pitch, width, height, EMUD_SITE_ARGS));
}
template <class T>
inline cudaError_t cudaMallocPitch(T** p, size_t* pitch, size_t width, size_t height, EMUD_SITE) {
  return cudaMallocPitch((void**)p, pitch, width, height, EMUD_SITE_ARGS);
}
inline cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                cudaMemcpyKind k, EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpy2D(dst, dpitch, src, spitch, width, height, (hipMemcpyKind)k, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind k, cudaStream_t s = nullptr, EMUD_SITE) {
  return ::emud::cuda::err(hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, (hipMemcpyKind)k, s, EMUD_SITE_ARGS));
}
inline cudaError_t cudaMemset2D(void* dst, size_t pitch, int v, size_t width, size_t height, EMUD_SITE) {
  return ::emud::cuda::err(hipMemset2D(dst, pitch, v, width, height, EMUD_SITE_ARGS));
}
// Registered host memory: hipHostRegister's (hip.md).
#define cudaHostRegisterDefault 0x0
#define cudaHostRegisterPortable 0x1
#define cudaHostRegisterMapped 0x2
#define cudaHostRegisterIoMemory 0x4
#define cudaHostRegisterReadOnly 0x8
inline cudaError_t cudaHostRegister(void* p, size_t n, unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipHostRegister(p, n, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaHostUnregister(void* p, EMUD_SITE) { return ::emud::cuda::err(hipHostUnregister(p, EMUD_SITE_ARGS)); }
inline cudaError_t cudaStreamQuery(cudaStream_t s, EMUD_SITE) { return ::emud::cuda::err(hipStreamQuery(s, EMUD_SITE_ARGS)); }
inline cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned* flags, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamGetFlags(s, flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags, int priority, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamCreateWithPriority(s, flags, priority, EMUD_SITE_ARGS));
}
inline cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority, EMUD_SITE) {
  return ::emud::cuda::err(hipStreamGetPriority(s, priority, EMUD_SITE_ARGS));
}
inline cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest, EMUD_SITE) {
  return ::emud::cuda::err(hipDeviceGetStreamPriorityRange(least, greatest, EMUD_SITE_ARGS));
}
inline cudaError_t cudaDeviceReset(EMUD_SITE) { return ::emud::cuda::err(hipDeviceReset(EMUD_SITE_ARGS)); }
inline cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value, EMUD_SITE) {
  return ::emud::cuda::err(hipDeviceSetLimit((hipLimit_t)limit, value, EMUD_SITE_ARGS));
}
inline cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit, EMUD_SITE) {
  return ::emud::cuda::err(hipDeviceGetLimit(value, (hipLimit_t)limit, EMUD_SITE_ARGS));
}
// cudaDeviceLmemResizeToMax is taken and dropped: local memory is a
// lane's stack, emud's 256 KiB.
inline cudaError_t cudaSetDeviceFlags(unsigned flags, EMUD_SITE) {
  return ::emud::cuda::err(hipSetDeviceFlags(flags & ~(unsigned)cudaDeviceLmemResizeToMax, EMUD_SITE_ARGS));
}
inline cudaError_t cudaGetDeviceFlags(unsigned* flags, EMUD_SITE) {
  return ::emud::cuda::err(hipGetDeviceFlags(flags, EMUD_SITE_ARGS));
}
inline cudaError_t cudaRuntimeGetVersion(int* v, EMUD_SITE) {
  if (!v) return cudaErrorInvalidValue;
  *v = CUDART_VERSION;
  return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int* v, EMUD_SITE) { return cudaRuntimeGetVersion(v, EMUD_SITE_ARGS); }
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int dev, EMUD_SITE) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev, EMUD_SITE_ARGS);
  if (e != hipSuccess) return ::emud::cuda::err(e);
  if (!v) return cudaErrorInvalidValue;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *v = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *v = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *v = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *v = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *v = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *v = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = (int)p.maxSharedMemoryPerMultiProcessor; break;
    case cudaDevAttrTotalConstantMemory: *v = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrMaxRegistersPerBlock: *v = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *v = p.clockRate; break;
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrIntegrated: *v = 0; break;
    case cudaDevAttrCanMapHostMemory:
    case cudaDevAttrConcurrentKernels:
    case cudaDevAttrUnifiedAddressing:
    case cudaDevAttrIsMultiGpuBoard:
    case cudaDevAttrCooperativeLaunch: *v = 1; break;
    case cudaDevAttrManagedMemory: *v = 1; break;
    case cudaDevAttrPciBusId: *v = p.pciBusID; break;
    case cudaDevAttrPciDeviceId: *v = p.pciDeviceID; break;
    case cudaDevAttrPciDomainId: *v = p.pciDomainID; break;
    case cudaDevAttrMemoryClockRate: *v = p.memoryClockRate; break;
    case cudaDevAttrGlobalMemoryBusWidth: *v = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *v = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 10; break;  // cudaGetDeviceProperties's 10.0
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    default:
      std::fprintf(stderr, "emud: %s:%d: cudaDeviceGetAttribute: attribute %d is not one emud answers (docs/cuda.md)\n",
                   __emud_file, __emud_line, (int)attr);
      return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}
inline cudaError_t cudaFuncSetAttribute(const void* f, cudaFuncAttribute attr, int value, EMUD_SITE) {
  return ::emud::cuda::err(hipFuncSetAttribute(f, (hipFuncAttribute)attr, value, EMUD_SITE_ARGS));
}
template <class F>
inline cudaError_t cudaFuncSetAttribute(F* f, cudaFuncAttribute attr, int value, EMUD_SITE) {
  return cudaFuncSetAttribute((const void*)(f), attr, value, EMUD_SITE_ARGS);
}
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* at, const void* f, EMUD_SITE) {
  if (!at) return cudaErrorInvalidValue;
  hipFuncAttributes h;
  hipError_t e = hipFuncGetAttributes(&h, f, EMUD_SITE_ARGS);
  if (e != hipSuccess) return ::emud::cuda::err(e);
  std::memset(at, 0, sizeof *at);
  at->maxThreadsPerBlock = h.maxThreadsPerBlock;
  at->maxDynamicSharedSizeBytes = h.maxDynamicSharedSizeBytes;
  at->ptxVersion = at->binaryVersion = 100;
  return cudaSuccess;
}
template <class F>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* at, F* f, EMUD_SITE) {
  return cudaFuncGetAttributes(at, (const void*)(f), EMUD_SITE_ARGS);
}
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* f, int block, size_t dyn, EMUD_SITE) {
  return ::emud::cuda::err(hipOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, dyn, EMUD_SITE_ARGS));
}
template <class F>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F* f, int block, size_t dyn, EMUD_SITE) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void*)(f), block, dyn, EMUD_SITE_ARGS);
}

// ---- warp intrinsics with a member mask (warps of 32) ----
// The mask is not checked: every lane of the warp that reaches the call
// takes part, as package kernel's collectives group lanes by program order.
namespace emud {
namespace cuda {
inline unsigned ballot(int pred, EMUD_SITE) {
  return (unsigned)::emud::dev(EMUD_OP_BALLOT, {(uint64_t)(pred != 0)}, "__ballot_sync", EMUD_SITE_ARGS);
}
}  // namespace cuda
}  // namespace emud
#define __ballot_sync(mask, pred) ::emud::cuda::ballot((pred))
inline int __any_sync(unsigned, int pred, EMUD_SITE) { return ::emud::cuda::ballot(pred, EMUD_SITE_ARGS) != 0; }
inline int __all_sync(unsigned, int pred, EMUD_SITE) {
  return ::emud::cuda::ballot(!pred, EMUD_SITE_ARGS) == 0;
}
template <class T>
inline T __shfl_sync(unsigned, T v, int src, int width = 32, EMUD_SITE) {
  return __shfl(v, src, width, EMUD_SITE_ARGS);
}
template <class T>
inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32, EMUD_SITE) {
  return __shfl_up(v, delta, width, EMUD_SITE_ARGS);
}
template <class T>
inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32, EMUD_SITE) {
  return __shfl_down(v, delta, width, EMUD_SITE_ARGS);
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int mask, int width = 32, EMUD_SITE) {
  return __shfl_xor(v, mask, width, EMUD_SITE_ARGS);
}
inline unsigned __activemask_sync_emud(EMUD_SITE) { return (unsigned)__activemask(EMUD_SITE_ARGS); }
inline unsigned __lanemask_lt() { return (1u << __lane_id()) - 1; }
#define __nanosleep(ns) __asm__ volatile("")
// CUDA's alignment qualifier (emud c++ drops it from __shared__
// declarations, whose storage is 16-byte aligned already).
#define __align__(n) __attribute__((aligned(n)))

// ---- inline PTX ----
// emud c++ rewrites a CUDA source's asm statements that it emulates into
// these calls (cxx/ptx.go); any other asm is a build error naming it.
// Each is done natively with GCC's atomics and reported, as the HIP
// layer's atomics are: a waiter on the word wakes, a load that reads the
// same value twice is a spin that waits for a write.
namespace emud {
namespace ptx {
enum { op_add, op_or, op_and, op_min, op_max, op_exch };
template <class T>
inline T rmw(int op, uint64_t addr, T v, int order, const char* file, int line, const char* fn) {
  T* p = (T*)(uintptr_t)addr;
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  for (;;) {
    T next = op == op_add ? (T)(old + v) : op == op_or ? (T)(old | v) : op == op_and ? (T)(old & v)
             : op == op_min ? (old < v ? old : v) : op == op_max ? (old > v ? old : v) : v;
    if (__atomic_compare_exchange(p, &old, &next, false, order, __ATOMIC_RELAXED)) break;
  }
  ::emud::note_write(p, sizeof(T), file, line, fn);
  return old;
}
template <class T>
inline T ld(uint64_t addr, int order, const char* file, int line, const char* fn) {
  T* p = (T*)(uintptr_t)addr;
  T v;
  __atomic_load(p, &v, order);  // not __atomic_load_n: hip_runtime.h makes that a reporting macro
  return ::emud::note_load((const volatile T*)p, v, file, line, fn);
}
template <class T>
inline void st(uint64_t addr, T v, int order, const char* file, int line, const char* fn) {
  T* p = (T*)(uintptr_t)addr;
  __atomic_store(p, &v, order);
  ::emud::note_write(p, sizeof(T), file, line, fn);
}
inline void fence(const char* file, int line, const char* fn) { ::emud::dev(EMUD_OP_FENCE, {}, "fence", file, line, fn); }
}  // namespace ptx
}  // namespace emud

// ---- not emulated: a compile error naming the call ----
namespace emud {
namespace cuda {
template <class...>
inline constexpr bool unsupported_v = false;
}
}  // namespace emud
#define EMUD_CUDA_UNSUPPORTED(name)                                                                            \
  template <class... A>                                                                                        \
  cudaError_t name(A&&...) {                                                                                   \
    static_assert(::emud::cuda::unsupported_v<A...>,                                                           \
                  #name " is not supported by emud (docs/cuda.md lists the CUDA calls emud emulates)");        \
    return cudaErrorNotSupported;                                                                              \
  }
EMUD_CUDA_UNSUPPORTED(cudaMalloc3D)
EMUD_CUDA_UNSUPPORTED(cudaMemcpy3D)
EMUD_CUDA_UNSUPPORTED(cudaMemPrefetchAsync)
EMUD_CUDA_UNSUPPORTED(cudaMemAdvise)
#undef EMUD_CUDA_UNSUPPORTED

#endif
