// emud's host control plane for a user's own mori/cco/cco.hpp. emud c++
// compiles this file against the user's header (cxx/mori.go), with
// emud/amdgcn.h included first and BUILD_CCO_SDMA on, and links it into
// the program in place of MORI's libmori (cco_init.cpp): every structure
// the header declares is filled here by its field names, so the layout is
// the header's own, whatever its version. A field or call emud needs that
// the header lacks (or has renamed) fails this compile, which emud c++
// reports naming the header. Written for emud; it contains no MORI code.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <mutex>
#include <vector>

#include "mori/cco/cco.hpp"

#if !BUILD_CCO_SDMA
#error "emud c++ compiles its MORI host control plane with BUILD_CCO_SDMA=1 (it fills ccoSdmaQueueDeviceHandle)"
#endif

extern "C" void* emud_obj_alloc(size_t n);

// The layout check: every structure this file fills must consist of the
// fields it knows, and nothing else, so a header that added a field (one
// its device code reads, which emud would leave zero) fails this compile
// instead of running with it unset. Each check lists the known fields as
// (offset, size, alignment) and asserts that they tile the structure with
// no room left but alignment padding; its message names the structure and
// the fields emud knows (emud c++ then names the header's other fields,
// cxx/mori.go). GDA fields are known and left zero where the header has
// them (GDA is not emulated).
namespace emudlayout {
struct F {
  size_t off, size, align;
};
constexpr size_t up(size_t v, size_t a) { return (v + a - 1) / a * a; }
template <size_t N>
constexpr bool tiles(const F (&in)[N], size_t n, size_t total, size_t align) {
  F f[N] = {};
  for (size_t i = 0; i < n; i++) f[i] = in[i];
  for (size_t i = 1; i < n; i++)  // by offset: the header may order its fields as it likes
    for (size_t j = i; j > 0 && f[j - 1].off > f[j].off; j--) {
      F t = f[j];
      f[j] = f[j - 1];
      f[j - 1] = t;
    }
  size_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    if (f[i].off != up(pos, f[i].align)) return false;
    pos = f[i].off + f[i].size;
  }
  return up(pos, align) == total;
}
#define EMUD_F(S, m) \
  ::emudlayout::F { offsetof(S, m), sizeof(((S*)nullptr)->m), alignof(decltype(((S*)nullptr)->m)) }
template <class T, class = void>
struct hasIbgda : std::false_type {};
template <class T>
struct hasIbgda<T, std::void_t<decltype(&T::ibgda)>> : std::true_type {};
template <class T, class = void>
struct hasIbgdaWin : std::false_type {};
template <class T>
struct hasIbgdaWin<T, std::void_t<decltype(&T::ibgdaWin)>> : std::true_type {};
// expectSignals: the per-dev-comm expected-signal counters MORI's
// ccoSdmaContext had before #502 (zeroed device words emud allocates).
template <class T, class = void>
struct hasExpect : std::false_type {};
template <class T>
struct hasExpect<T, std::void_t<decltype(&T::expectSignals)>> : std::true_type {};
template <class T>
constexpr F expectOf() {
  if constexpr (hasExpect<T>::value) return EMUD_F(T, expectSignals);
  return F{0, 0, 1};
}
template <class T>
constexpr F ibgdaOf() {
  if constexpr (hasIbgda<T>::value) return EMUD_F(T, ibgda);
  return F{0, 0, 1};
}
template <class T>
constexpr F ibgdaWinOf() {
  if constexpr (hasIbgdaWin<T>::value) return EMUD_F(T, ibgdaWin);
  return F{0, 0, 1};
}
}  // namespace emudlayout

namespace mori {
namespace cco {

namespace emudcheck {
using emudlayout::F;
constexpr F windowFields[] = {EMUD_F(ccoWindowDevice, winBase), EMUD_F(ccoWindowDevice, stride4G),
                              EMUD_F(ccoWindowDevice, lsaRank), emudlayout::ibgdaWinOf<ccoWindowDevice>()};
static_assert(emudlayout::tiles(windowFields, emudlayout::hasIbgdaWin<ccoWindowDevice>::value ? 4 : 3,
                                sizeof(ccoWindowDevice), alignof(ccoWindowDevice)),
              "emud-layout: ccoWindowDevice: winBase stride4G lsaRank ibgdaWin");
constexpr F sdmaFields[] = {EMUD_F(ccoSdmaContext, sdmaNumQueue), EMUD_F(ccoSdmaContext, deviceHandles),
                            EMUD_F(ccoSdmaContext, signalBuf), EMUD_F(ccoSdmaContext, peerSignalPtrs),
                            emudlayout::expectOf<ccoSdmaContext>()};
static_assert(emudlayout::tiles(sdmaFields, emudlayout::hasExpect<ccoSdmaContext>::value ? 5 : 4, sizeof(ccoSdmaContext),
                                alignof(ccoSdmaContext)),
              "emud-layout: ccoSdmaContext: sdmaNumQueue deviceHandles signalBuf peerSignalPtrs expectSignals");
constexpr F queueFields[] = {
    EMUD_F(ccoSdmaQueueDeviceHandle, queueBuf),      EMUD_F(ccoSdmaQueueDeviceHandle, rptr),
    EMUD_F(ccoSdmaQueueDeviceHandle, wptr),          EMUD_F(ccoSdmaQueueDeviceHandle, doorbell),
    EMUD_F(ccoSdmaQueueDeviceHandle, cachedWptr),    EMUD_F(ccoSdmaQueueDeviceHandle, committedWptr),
    EMUD_F(ccoSdmaQueueDeviceHandle, cachedHwReadIndex)};
static_assert(emudlayout::tiles(queueFields, 7, sizeof(ccoSdmaQueueDeviceHandle), alignof(ccoSdmaQueueDeviceHandle)),
              "emud-layout: ccoSdmaQueueDeviceHandle: queueBuf rptr wptr doorbell cachedWptr committedWptr cachedHwReadIndex");
constexpr F commFields[] = {EMUD_F(ccoDevComm, rank),
                            EMUD_F(ccoDevComm, worldSize),
                            EMUD_F(ccoDevComm, lsaSize),
                            EMUD_F(ccoDevComm, lsaRank),
                            EMUD_F(ccoDevComm, myNodeStart),
                            EMUD_F(ccoDevComm, gdaConnType),
                            EMUD_F(ccoDevComm, flatBase),
                            EMUD_F(ccoDevComm, perRankSize),
                            EMUD_F(ccoDevComm, windowTable),
                            EMUD_F(ccoDevComm, resourceWindow),
                            EMUD_F(ccoDevComm, resourceWindow_inlined),
                            EMUD_F(ccoDevComm, lsaBarrier),
                            EMUD_F(ccoDevComm, railGdaBarrier),
                            EMUD_F(ccoDevComm, hybridLsaBarrier),
                            EMUD_F(ccoDevComm, hybridRailGdaBarrier),
                            EMUD_F(ccoDevComm, sdma),
                            emudlayout::ibgdaOf<ccoDevComm>()};
static_assert(emudlayout::tiles(commFields, emudlayout::hasIbgda<ccoDevComm>::value ? 17 : 16, sizeof(ccoDevComm),
                                alignof(ccoDevComm)),
              "emud-layout: ccoDevComm: rank worldSize lsaSize lsaRank myNodeStart gdaConnType flatBase perRankSize "
              "windowTable resourceWindow resourceWindow_inlined lsaBarrier railGdaBarrier hybridLsaBarrier "
              "hybridRailGdaBarrier sdma ibgda");
}  // namespace emudcheck

namespace {

const char kSite[] = "(MORI host control plane)";

int call(int op, uint64_t* a, const char* what) {
  int rc = emud_host(op, a, what, 0);
  return rc;
}

uint64_t handleOf(const void* p) { return (uint64_t)(uintptr_t)p; }

// The dev comms this control plane made, by their signal pool (unique per
// dev comm): MORI's ccoDevComm has no field for emud's handle.
struct made {
  uint64_t* signalBuf;
  uint64_t handle;
};
std::mutex madeMu;
std::vector<made> madeList;

// A window in the header's layout, from emud's (winBase, stride4G,
// lsaRank at 0, 8, 12: include/emud/abi.h's ccoWindowRegister results).
ccoWindowDevice* window(uint64_t emudWin) {
  auto* w = static_cast<ccoWindowDevice*>(emud_obj_alloc(sizeof(ccoWindowDevice)));
  std::memset(static_cast<void*>(w), 0, sizeof *w);
  const char* e = reinterpret_cast<const char*>(emudWin);
  std::memcpy(&w->winBase, e, sizeof(uint64_t));
  uint32_t stride;
  int32_t rank;
  std::memcpy(&stride, e + 8, 4);
  std::memcpy(&rank, e + 12, 4);
  w->stride4G = stride;
  w->lsaRank = rank;
  return w;
}

// fillExpect gives a pre-#502 header's expectSignals its zeroed counters
// (a template, so a header without the field never sees the assignment).
template <class C>
int fillExpect(C& s, size_t nq) {
  if constexpr (emudlayout::hasExpect<C>::value) {
    void* ev = nullptr;
    if (hipMalloc(&ev, nq * sizeof(uint64_t)) != hipSuccess || hipMemset(ev, 0, nq * sizeof(uint64_t)) != hipSuccess)
      return 1;
    s.expectSignals = static_cast<decltype(s.expectSignals)>(ev);
  }
  (void)s;
  (void)nq;
  return 0;
}

}  // namespace

// freeExpect frees what fillExpect allocated.
template <class C>
void freeExpect(C& s) {
  if constexpr (emudlayout::hasExpect<C>::value) {
    if (s.expectSignals) hipFree(s.expectSignals);
    s.expectSignals = nullptr;
  }
  (void)s;
}

// freeMade gives back what ccoDevCommCreate hipMalloc'd for the dev
// comm's device code (each queue's handle, the handle and peer-signal
// arrays, the expected-signal counters), as MORI's ccoDevCommDestroy
// frees its own: a leak checker's hipMemGetInfo stays level over dev
// comms made and destroyed in a loop (cxx TestMoriDevCommPerRound; 76
// KiB a dev comm before).
void freeMade(ccoDevComm& d) {
  const size_t nq = (size_t)d.lsaSize * d.sdma.sdmaNumQueue;
  if (d.sdma.deviceHandles && nq > 0) {
    std::vector<ccoSdmaQueueDeviceHandle*> handles(nq, nullptr);
    if (hipMemcpy(handles.data(), d.sdma.deviceHandles, nq * sizeof(void*), hipMemcpyDeviceToHost) == hipSuccess)
      for (auto* h : handles)
        if (h) hipFree(h);
    hipFree(d.sdma.deviceHandles);
    d.sdma.deviceHandles = nullptr;
  }
  if (d.sdma.peerSignalPtrs) hipFree(d.sdma.peerSignalPtrs);
  d.sdma.peerSignalPtrs = nullptr;
  freeExpect(d.sdma);
}

int ccoGetUniqueId(ccoUniqueId* id) {
  uint64_t a[16] = {handleOf(id)};
  return call(EMUD_H_UNIQUE_ID, a, "ccoGetUniqueId");
}

int ccoCommCreate(const ccoUniqueId& id, int nRanks, int rank, size_t perRankVmmSize, ccoComm** comm) {
  uint64_t a[16] = {handleOf(&id), (uint64_t)(int64_t)nRanks, (uint64_t)(int64_t)rank, perRankVmmSize};
  int rc = call(EMUD_H_COMM_CREATE, a, "ccoCommCreate");
  if (comm) *comm = rc == 0 ? reinterpret_cast<ccoComm*>((uintptr_t)a[4]) : nullptr;
  return rc;
}

int ccoCommDestroy(ccoComm* comm) {
  uint64_t a[16] = {handleOf(comm)};
  return call(EMUD_H_COMM_DESTROY, a, "ccoCommDestroy");
}

int ccoMemAlloc(ccoComm* comm, size_t size, void** ptr) {
  uint64_t a[16] = {handleOf(comm), size};
  int rc = call(EMUD_H_MEM_ALLOC, a, "ccoMemAlloc");
  if (ptr) *ptr = rc == 0 ? reinterpret_cast<void*>((uintptr_t)a[2]) : nullptr;
  return rc;
}

int ccoMemFree(ccoComm* comm, void* ptr) {
  uint64_t a[16] = {handleOf(comm), handleOf(ptr)};
  return call(EMUD_H_MEM_FREE, a, "ccoMemFree");
}

int ccoMemImport(ccoComm*, void*, size_t, void** ptr) {
  if (ptr) *ptr = nullptr;
  std::fprintf(stderr, "emud: %s ccoMemImport: importing an external HIP VMM allocation is not emulated\n", kSite);
  return 1;
}

int ccoWindowRegister(ccoComm* comm, size_t size, ccoWindow_t* win, void** localPtr) {
  uint64_t a[16] = {handleOf(comm), 0, size};
  int rc = call(EMUD_H_WINDOW_REGISTER, a, "ccoWindowRegister");
  if (win) *win = rc == 0 ? window(a[3]) : nullptr;
  if (localPtr) *localPtr = rc == 0 ? reinterpret_cast<void*>((uintptr_t)a[4]) : nullptr;
  return rc;
}

int ccoWindowRegister(ccoComm* comm, void* ptr, size_t size, ccoWindow_t* win) {
  if (!ptr) {
    std::fprintf(stderr, "emud: %s ccoWindowRegister: null buffer\n", kSite);
    return 1;
  }
  uint64_t a[16] = {handleOf(comm), handleOf(ptr), size};
  int rc = call(EMUD_H_WINDOW_REGISTER, a, "ccoWindowRegister");
  if (win) *win = rc == 0 ? window(a[3]) : nullptr;
  return rc;
}

int ccoWindowRegister(ccoComm*, void*, size_t, ccoWindow_t* win, void** localPtr) {
  if (win) *win = nullptr;
  if (localPtr) *localPtr = nullptr;
  std::fprintf(stderr, "emud: %s ccoWindowRegister: registering an external HIP VMM allocation is not emulated\n", kSite);
  return 1;
}

int ccoWindowDeregister(ccoComm* comm, ccoWindow_t) {
  uint64_t a[16] = {handleOf(comm)};
  return call(EMUD_H_WINDOW_DEREGISTER, a, "ccoWindowDeregister");
}

void* ccoGetPeerPtr(ccoComm* comm, void* localPtr, int pe) {
  uint64_t a[16] = {handleOf(comm), handleOf(localPtr), (uint64_t)(int64_t)pe};
  call(EMUD_H_PEER_PTR, a, "ccoGetPeerPtr");
  return reinterpret_cast<void*>((uintptr_t)a[3]);
}

int ccoDevCommCreate(ccoComm* comm, const ccoDevCommRequirements* reqs, ccoDevComm* out) {
  if (!reqs || !out) {
    std::fprintf(stderr, "emud: %s ccoDevCommCreate: null %s\n", kSite, reqs ? "outDevComm" : "requirements");
    return 1;
  }
  uint64_t gda = reqs->gdaConnectionType == CCO_GDA_CONNECTION_FULL ? 1 : 0;
  uint64_t a[16] = {handleOf(comm), reqs->magic, reqs->version, (uint64_t)(int64_t)reqs->sdmaQueueCount,
                    0, gda, (uint64_t)(int64_t)reqs->lsaBarrierCount, (uint64_t)(int64_t)reqs->barrierCount,
                    (uint64_t)(int64_t)reqs->railGdaBarrierCount};
  int rc = call(EMUD_H_DEVCOMM_CREATE, a, "ccoDevCommCreate");
  if (rc != 0) return rc;
  ccoDevComm d;
  std::memset(static_cast<void*>(&d), 0, sizeof d);
  d.rank = (int)a[0];
  d.worldSize = (int)a[1];
  d.lsaRank = (int)a[2];
  d.lsaSize = (int)a[3];
  d.myNodeStart = 0;
  d.gdaConnType = reqs->gdaConnectionType;
  d.flatBase = reinterpret_cast<void*>((uintptr_t)a[7]);
  d.perRankSize = (size_t)a[8];
  d.windowTable = nullptr;
  d.lsaBarrier.nBarriers = (int)a[9];
  d.lsaBarrier.bufOffset = (uint32_t)a[10];
  d.hybridLsaBarrier.nBarriers = (int)a[13];
  d.hybridLsaBarrier.bufOffset = (uint32_t)a[14];
  d.resourceWindow_inlined.winBase = reinterpret_cast<char*>((uintptr_t)a[11]);
  d.resourceWindow_inlined.stride4G = (uint32_t)a[12];
  d.resourceWindow_inlined.lsaRank = d.lsaRank;
  d.resourceWindow = window(a[15]);
  const uint64_t handle = a[6];
  const uint32_t n = (uint32_t)a[4];
  d.sdma.sdmaNumQueue = n;
  d.sdma.signalBuf = reinterpret_cast<uint64_t*>((uintptr_t)a[5]);
  if (n > 0) {
    const size_t nq = (size_t)d.lsaSize * n;
    std::vector<ccoSdmaQueueDeviceHandle*> handles(nq, nullptr);
    std::vector<uint64_t*> peers(d.lsaSize, nullptr);
    for (int p = 0; p < d.lsaSize; p++) {
      for (uint32_t q = 0; q < n; q++) {
        uint64_t b[16] = {handle, (uint64_t)p, q, (uint64_t)CCO_SDMA_QUEUE_SIZE};
        if ((rc = call(EMUD_H_MORI_QUEUE, b, "ccoDevCommCreate")) != 0) return rc;
        ccoSdmaQueueDeviceHandle h;
        std::memset(static_cast<void*>(&h), 0, sizeof h);
        h.queueBuf = reinterpret_cast<uint32_t*>((uintptr_t)b[0]);
        h.rptr = reinterpret_cast<HSAuint64*>((uintptr_t)b[1]);
        h.wptr = reinterpret_cast<HSAuint64*>((uintptr_t)b[2]);
        h.doorbell = reinterpret_cast<HSAuint64*>((uintptr_t)b[3]);
        h.cachedWptr = reinterpret_cast<uint64_t*>((uintptr_t)b[4]);
        h.committedWptr = reinterpret_cast<uint64_t*>((uintptr_t)b[5]);
        h.cachedHwReadIndex = b[6];
        void* dev = nullptr;
        if (hipMalloc(&dev, sizeof h) != hipSuccess) return 1;
        if (hipMemcpy(dev, &h, sizeof h, hipMemcpyHostToDevice) != hipSuccess) return 1;
        handles[(size_t)p * n + q] = static_cast<ccoSdmaQueueDeviceHandle*>(dev);
        peers[p] = reinterpret_cast<uint64_t*>((uintptr_t)b[7]);
      }
    }
    void* hv = nullptr;
    void* pv = nullptr;
    if (hipMalloc(&hv, nq * sizeof(void*)) != hipSuccess || hipMalloc(&pv, d.lsaSize * sizeof(void*)) != hipSuccess) return 1;
    hipMemcpy(hv, handles.data(), nq * sizeof(void*), hipMemcpyHostToDevice);
    hipMemcpy(pv, peers.data(), d.lsaSize * sizeof(void*), hipMemcpyHostToDevice);
    d.sdma.deviceHandles = static_cast<ccoSdmaQueueDeviceHandle**>(hv);
    d.sdma.peerSignalPtrs = static_cast<uint64_t**>(pv);
    if (fillExpect(d.sdma, nq) != 0) return 1;
  }
  {
    std::lock_guard<std::mutex> g(madeMu);
    madeList.push_back({d.sdma.signalBuf, handle});
  }
  *out = d;
  return 0;
}

int ccoDevCommDestroy(ccoComm* comm, ccoDevComm* dc) {
  if (!dc) return 0;
  uint64_t handle = 0;
  {
    std::lock_guard<std::mutex> g(madeMu);
    for (auto& m : madeList)
      if (m.signalBuf == dc->sdma.signalBuf && m.handle != 0) {
        handle = m.handle;
        m.handle = 0;
        break;
      }
  }
  uint64_t a[16] = {handleOf(comm), handle};
  const int rc = call(EMUD_H_DEVCOMM_DESTROY, a, "ccoDevCommDestroy");
  if (rc == 0) freeMade(*dc);
  return rc;
}

ccoDevComm* ccoDevCommCopyToDevice(const ccoDevComm* host) {
  void* dev = nullptr;
  if (!host || hipMalloc(&dev, sizeof *host) != hipSuccess) return nullptr;
  hipMemcpy(dev, host, sizeof *host, hipMemcpyHostToDevice);
  return static_cast<ccoDevComm*>(dev);
}

void ccoDevCommFreeDeviceCopy(ccoDevComm* devicePtr) {
  if (devicePtr) hipFree(devicePtr);
}

int ccoBarrierAll(ccoComm* comm) {
  uint64_t a[16] = {handleOf(comm)};
  return call(EMUD_H_BARRIER_ALL, a, "ccoBarrierAll");
}

}  // namespace cco
}  // namespace mori
