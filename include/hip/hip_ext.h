// hip/hip_ext.h for emud. In HIP it declares AMD's extensions to the
// runtime (hipExtLaunchKernelGGL, hipExtMallocWithFlags, ...); emud's
// hip/hip_runtime.h holds the ones emud emulates, so this includes it.
// Written for emud; it is not AMD's header.
#ifndef EMUD_HIP_EXT_H
#define EMUD_HIP_EXT_H
#include <hip/hip_runtime.h>
#endif
