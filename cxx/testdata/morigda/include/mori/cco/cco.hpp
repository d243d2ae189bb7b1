// A small header in the structure of MORI's mori/cco/cco.hpp with its GDA
// (ccoIbgdaContext, ccoIbgdaWin), written for emud's tests
// (cxx/mori_gda_test.go): not MORI's header, and none of its code. The
// host types are testdata/mori's; the device side is a GDA path of its
// own in MORI's mlx5 shape (cco_scale_out.hpp).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#ifndef BUILD_CCO_SDMA
#define BUILD_CCO_SDMA 0
#endif

#define EMUD_TEST_MORI_HEADER "emud-testdata-morigda"

namespace mori {
namespace core {
struct RdmaEndpointDevice;
}
}  // namespace mori

#ifndef _HSAKMTTYPES_H_
typedef uint64_t HSAuint64;
#endif

namespace mori {
namespace cco {

static constexpr uint32_t CCO_API_MAGIC = 0x0CC0AAAA;
static constexpr uint32_t CCO_API_VERSION = 1;

enum ccoGdaConnectionType {
  CCO_GDA_CONNECTION_NONE = 0,
  CCO_GDA_CONNECTION_FULL = 1,
  CCO_GDA_CONNECTION_CROSSNODE = 2,
  CCO_GDA_CONNECTION_RAIL = 3,
};

struct ccoIbgdaWin {
  uint32_t* peerRkeys;
  uint32_t lkey;
};
struct ccoWindowDevice {
  char* winBase;
  uint32_t stride4G;
  int lsaRank;
  ccoIbgdaWin ibgdaWin;
};
typedef ccoWindowDevice* ccoWindow_t;

// GDA: a dev comm's queue pairs (endpoints[peer * numQpPerPe + context])
// and its signal pool (signals, shadows, counters).
struct ccoIbgdaContext {
  core::RdmaEndpointDevice* endpoints;
  int numQpPerPe;
  int signalCount;
  uint64_t* signalBuf;
  uint64_t* signalShadows;
  int counterCount;
  uint64_t* counterBuf;
};

struct ccoSdmaQueueDeviceHandle;
struct ccoSdmaContext {
  uint32_t sdmaNumQueue;
  ccoSdmaQueueDeviceHandle** deviceHandles;  // [lsaSize * sdmaNumQueue], peer-major
  uint64_t* signalBuf;                       // [lsaSize * sdmaNumQueue], by sender
  uint64_t** peerSignalPtrs;                 // [lsaSize]
};
struct ccoLsaBarrierHandle {
  uint32_t bufOffset;
  int nBarriers;
};
struct ccoGdaBarrierHandle {
  uint32_t signal0;
  int nBarriers;
};
struct ccoDevComm {
  int rank;
  int worldSize;
  int lsaSize;
  int lsaRank;
  int myNodeStart;
  ccoGdaConnectionType gdaConnType;
  void* flatBase;
  size_t perRankSize;
  void* windowTable;
  ccoWindowDevice* resourceWindow;
  ccoWindowDevice resourceWindow_inlined;
  ccoIbgdaContext ibgda;
  ccoLsaBarrierHandle lsaBarrier;
  ccoGdaBarrierHandle railGdaBarrier;
  ccoLsaBarrierHandle hybridLsaBarrier;
  ccoGdaBarrierHandle hybridRailGdaBarrier;
  ccoSdmaContext sdma;
};
static_assert(std::is_trivially_copyable<ccoDevComm>::value, "passed to kernels by value");

struct ccoDevCommRequirements {
  size_t size;
  uint32_t magic;
  uint32_t version;
  void* resourceRequirementsList;
  ccoGdaConnectionType gdaConnectionType;
  int gdaContextCount;
  int gdaSignalCount;
  int gdaCounterCount;
  int gdaQueueDepth;
  int gdaTrafficClass;
  int lsaBarrierCount;
  int railGdaBarrierCount;
  int sdmaQueueCount;
  int barrierCount;
};
#define CCO_DEV_COMM_REQUIREMENTS_INITIALIZER                                                             \
  {sizeof(::mori::cco::ccoDevCommRequirements), ::mori::cco::CCO_API_MAGIC, ::mori::cco::CCO_API_VERSION, \
   nullptr, ::mori::cco::CCO_GDA_CONNECTION_CROSSNODE, 4, 16, 16, 0, -1, 0, 0, 0, 0}

struct ccoUniqueId {
  char internal[128];
};
struct ccoComm;

int ccoGetUniqueId(ccoUniqueId* uniqueId);
int ccoCommCreate(const ccoUniqueId& uniqueId, int nRanks, int rank, size_t perRankVmmSize, ccoComm** comm);
int ccoCommDestroy(ccoComm* comm);
int ccoMemAlloc(ccoComm* comm, size_t size, void** ptr);
int ccoMemFree(ccoComm* comm, void* ptr);
int ccoWindowRegister(ccoComm* comm, void* ptr, size_t size, ccoWindow_t* win);
int ccoWindowDeregister(ccoComm* comm, ccoWindow_t win);
int ccoDevCommCreate(ccoComm* comm, const ccoDevCommRequirements* reqs, ccoDevComm* outDevComm);
int ccoDevCommDestroy(ccoComm* comm, ccoDevComm* devComm);
int ccoBarrierAll(ccoComm* comm);

}  // namespace cco
}  // namespace mori

#if (defined(__HIPCC__) || defined(__CUDACC__)) && BUILD_CCO_SDMA
namespace mori {
namespace cco {
constexpr uint32_t CCO_SDMA_QUEUE_SIZE = 256 * 1024;
// The SDMA queue handle's fields (this header has no SDMA device path).
struct ccoSdmaQueueDeviceHandle {
  uint32_t* queueBuf;
  HSAuint64* rptr;
  HSAuint64* wptr;
  HSAuint64* doorbell;
  uint64_t* cachedWptr;
  uint64_t* committedWptr;
  uint64_t cachedHwReadIndex;
};
}  // namespace cco
}  // namespace mori
#endif
