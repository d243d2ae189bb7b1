/* rocm_smi/rocm_smi.h for emud: ROCm SMI's status type, its codes and
 * rsmi_status_string, which a program's error-check macros name (MORI's
 * mori/application/utils/check.hpp defines one over them). Written for
 * emud from ROCm SMI's public API (github.com/ROCm/rocm_smi_lib, the
 * rsmi_status_t codes); it is not AMD's header. emud emulates no SMI:
 * there is no GPU to query, so the library's device and topology calls
 * (rsmi_init, rsmi_num_monitor_devices, rsmi_topo_*) are not declared,
 * and a program that calls one fails to compile naming it. A HIP program
 * learns the emulated node from HIP itself (hipGetDeviceCount,
 * hipGetDeviceProperties). */
#ifndef EMUD_ROCM_SMI_H
#define EMUD_ROCM_SMI_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  RSMI_STATUS_SUCCESS = 0x0,
  RSMI_STATUS_INVALID_ARGS = 0x1,
  RSMI_STATUS_NOT_SUPPORTED = 0x2,
  RSMI_STATUS_FILE_ERROR = 0x3,
  RSMI_STATUS_PERMISSION = 0x4,
  RSMI_STATUS_OUT_OF_RESOURCES = 0x5,
  RSMI_STATUS_INTERNAL_EXCEPTION = 0x6,
  RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 0x7,
  RSMI_STATUS_INIT_ERROR = 0x8,
  RSMI_STATUS_NOT_YET_IMPLEMENTED = 0x9,
  RSMI_STATUS_NOT_FOUND = 0xA,
  RSMI_STATUS_INSUFFICIENT_SIZE = 0xB,
  RSMI_STATUS_INTERRUPT = 0xC,
  RSMI_STATUS_UNEXPECTED_SIZE = 0xD,
  RSMI_STATUS_NO_DATA = 0xE,
  RSMI_STATUS_UNEXPECTED_DATA = 0xF,
  RSMI_STATUS_BUSY = 0x10,
  RSMI_STATUS_REFCOUNT_OVERFLOW = 0x11,
  RSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF
} rsmi_status_t;
#define RSMI_INITIALIZATION_ERROR RSMI_STATUS_INIT_ERROR

/* rsmi_status_string sets *text to words for status: RSMI_STATUS_SUCCESS,
 * or RSMI_STATUS_INVALID_ARGS when text is NULL. */
static inline rsmi_status_t rsmi_status_string(rsmi_status_t status, const char** text) {
  if (!text) return RSMI_STATUS_INVALID_ARGS;
  switch (status) {
    case RSMI_STATUS_SUCCESS: *text = "RSMI_STATUS_SUCCESS: the call succeeded"; break;
    case RSMI_STATUS_INVALID_ARGS: *text = "RSMI_STATUS_INVALID_ARGS: an argument is not valid"; break;
    case RSMI_STATUS_NOT_SUPPORTED: *text = "RSMI_STATUS_NOT_SUPPORTED: not supported on this device or system"; break;
    case RSMI_STATUS_FILE_ERROR: *text = "RSMI_STATUS_FILE_ERROR: a file the call needs could not be read or written"; break;
    case RSMI_STATUS_PERMISSION: *text = "RSMI_STATUS_PERMISSION: not permitted"; break;
    case RSMI_STATUS_OUT_OF_RESOURCES: *text = "RSMI_STATUS_OUT_OF_RESOURCES: out of memory or another resource"; break;
    case RSMI_STATUS_INTERNAL_EXCEPTION: *text = "RSMI_STATUS_INTERNAL_EXCEPTION: an internal error"; break;
    case RSMI_STATUS_INPUT_OUT_OF_BOUNDS: *text = "RSMI_STATUS_INPUT_OUT_OF_BOUNDS: an index or value out of its range"; break;
    case RSMI_STATUS_INIT_ERROR: *text = "RSMI_STATUS_INIT_ERROR: the library is not initialised"; break;
    case RSMI_STATUS_NOT_YET_IMPLEMENTED: *text = "RSMI_STATUS_NOT_YET_IMPLEMENTED: not implemented"; break;
    case RSMI_STATUS_NOT_FOUND: *text = "RSMI_STATUS_NOT_FOUND: not found"; break;
    case RSMI_STATUS_INSUFFICIENT_SIZE: *text = "RSMI_STATUS_INSUFFICIENT_SIZE: the buffer is too small"; break;
    case RSMI_STATUS_INTERRUPT: *text = "RSMI_STATUS_INTERRUPT: interrupted"; break;
    case RSMI_STATUS_UNEXPECTED_SIZE: *text = "RSMI_STATUS_UNEXPECTED_SIZE: data of an unexpected size"; break;
    case RSMI_STATUS_NO_DATA: *text = "RSMI_STATUS_NO_DATA: no data"; break;
    case RSMI_STATUS_UNEXPECTED_DATA: *text = "RSMI_STATUS_UNEXPECTED_DATA: data not as expected"; break;
    case RSMI_STATUS_BUSY: *text = "RSMI_STATUS_BUSY: the device is busy"; break;
    case RSMI_STATUS_REFCOUNT_OVERFLOW: *text = "RSMI_STATUS_REFCOUNT_OVERFLOW: a reference count overflowed"; break;
    default: *text = "RSMI_STATUS_UNKNOWN_ERROR: an unknown status"; break;
  }
  return RSMI_STATUS_SUCCESS;
}

#ifdef __cplusplus
}
#endif
#endif
