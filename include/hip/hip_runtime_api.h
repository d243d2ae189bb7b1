// hip/hip_runtime_api.h for emud. In HIP it is the host runtime API alone,
// which hip/hip_runtime.h includes; a source that includes only it (MORI's
// mori/application/utils/check.hpp, whose error macros its benchmarks
// use) gets emud's whole hip/hip_runtime.h here, which holds both halves.
// Written for emud; it is not AMD's header.
#ifndef EMUD_HIP_RUNTIME_API_H
#define EMUD_HIP_RUNTIME_API_H
#include <hip/hip_runtime.h>
#endif
