// The RDMA endpoint types of MORI's core, in the structure of MORI's
// mori/core/transport/rdma/core_device_types.hpp (their names and field
// order), written for emud's tests: not MORI's header. emud's control
// plane fills them (include/emud/mori_host.cpp) and the fixture's device
// code (../../../cco/cco_scale_out.hpp) posts through them.
#pragma once

#include <stdint.h>

namespace mori {
namespace core {

enum class RdmaDeviceVendorId : uint32_t {
  Unknown = 0,
  Mellanox = 0x02c9,
};

struct WorkQueueHandle {
  uint32_t postIdx;     // WQEs reserved
  uint32_t dbTouchIdx;  // WQEs rung
  uint32_t doneIdx;     // WQEs completed
  uint32_t readyIdx;
  union {
    struct {
      uint32_t msntblSlotIdx;
      uint32_t psnIdx;
    };
    uint64_t msnPack;
  };
  void* sqAddr;
  void* msntblAddr;
  void* rqAddr;
  void* dbrRecAddr;  // the doorbell record: the SQ counter is its second big-endian word
  void* dbrAddr;     // the UAR doorbell: the last WQE's first control qword
  void* rqdbrAddr;
  uint32_t mtuSize;
  uint32_t sqWqeNum;
  uint32_t msntblNum;
  uint32_t rqWqeNum;
  uint32_t postSendLock;
  bool color;
  uint64_t sq_dbval;
  uint64_t rq_dbval;
};

struct CompletionQueueHandle {
  void* cqAddr;
  void* dbrRecAddr;
  void* dbrAddr;
  uint32_t consIdx;
  uint32_t needConsIdx;
  uint32_t activeIdx;
  uint32_t cq_consumer;
  uint32_t cq_dbpos;
  uint32_t cqeNum;
  uint32_t cqeSize;
  uint32_t pollCqLock;
  uint64_t cq_dbval;
};

struct IbufHandle {
  uintptr_t addr;
  uint32_t lkey;
  uint32_t rkey;
  uint32_t nslots;
  uint32_t head;
  uint32_t tail;
};

struct RdmaEndpointDevice {
  RdmaDeviceVendorId vendorId;
  uint32_t qpn;
  WorkQueueHandle wqHandle;
  CompletionQueueHandle cqHandle;
  IbufHandle atomicIbuf;
};

}  // namespace core
}  // namespace mori
