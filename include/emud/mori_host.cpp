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
// MORI's ccoGda endpoints are core::RdmaEndpointDevice, declared in the
// core RDMA header that cco_scale_out.hpp pulls in; a header tree without
// it has no GDA for emud to fill.
#if __has_include("mori/core/transport/rdma/core_device_types.hpp")
#include "mori/core/transport/rdma/core_device_types.hpp"
#define EMUD_MORI_GDA 1
#else
#define EMUD_MORI_GDA 0
#endif

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
// cxx/mori.go). GDA's structures are checked and filled where the header
// tree has MORI's core RDMA types (capi/mori_gda.go is the NIC beneath).
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
#if EMUD_MORI_GDA
using namespace ::mori::core;
constexpr F ibgdaWinFields[] = {EMUD_F(ccoIbgdaWin, peerRkeys), EMUD_F(ccoIbgdaWin, lkey)};
static_assert(emudlayout::tiles(ibgdaWinFields, 2, sizeof(ccoIbgdaWin), alignof(ccoIbgdaWin)),
              "emud-layout: ccoIbgdaWin: peerRkeys lkey");
constexpr F ibgdaFields[] = {EMUD_F(ccoIbgdaContext, endpoints),     EMUD_F(ccoIbgdaContext, numQpPerPe),
                             EMUD_F(ccoIbgdaContext, signalCount),   EMUD_F(ccoIbgdaContext, signalBuf),
                             EMUD_F(ccoIbgdaContext, signalShadows), EMUD_F(ccoIbgdaContext, counterCount),
                             EMUD_F(ccoIbgdaContext, counterBuf)};
static_assert(emudlayout::tiles(ibgdaFields, 7, sizeof(ccoIbgdaContext), alignof(ccoIbgdaContext)),
              "emud-layout: ccoIbgdaContext: endpoints numQpPerPe signalCount signalBuf signalShadows counterCount "
              "counterBuf");
constexpr F epFields[] = {EMUD_F(RdmaEndpointDevice, vendorId), EMUD_F(RdmaEndpointDevice, qpn),
                          EMUD_F(RdmaEndpointDevice, wqHandle), EMUD_F(RdmaEndpointDevice, cqHandle),
                          EMUD_F(RdmaEndpointDevice, atomicIbuf)};
static_assert(emudlayout::tiles(epFields, 5, sizeof(RdmaEndpointDevice), alignof(RdmaEndpointDevice)),
              "emud-layout: RdmaEndpointDevice: vendorId qpn wqHandle cqHandle atomicIbuf");
constexpr F wqFields[] = {
    EMUD_F(WorkQueueHandle, postIdx),    EMUD_F(WorkQueueHandle, dbTouchIdx), EMUD_F(WorkQueueHandle, doneIdx),
    EMUD_F(WorkQueueHandle, readyIdx),   EMUD_F(WorkQueueHandle, msnPack),    EMUD_F(WorkQueueHandle, sqAddr),
    EMUD_F(WorkQueueHandle, msntblAddr), EMUD_F(WorkQueueHandle, rqAddr),     EMUD_F(WorkQueueHandle, dbrRecAddr),
    EMUD_F(WorkQueueHandle, dbrAddr),    EMUD_F(WorkQueueHandle, rqdbrAddr),  EMUD_F(WorkQueueHandle, mtuSize),
    EMUD_F(WorkQueueHandle, sqWqeNum),   EMUD_F(WorkQueueHandle, msntblNum),  EMUD_F(WorkQueueHandle, rqWqeNum),
    EMUD_F(WorkQueueHandle, postSendLock), EMUD_F(WorkQueueHandle, color),    EMUD_F(WorkQueueHandle, sq_dbval),
    EMUD_F(WorkQueueHandle, rq_dbval)};
static_assert(emudlayout::tiles(wqFields, 19, sizeof(WorkQueueHandle), alignof(WorkQueueHandle)),
              "emud-layout: WorkQueueHandle: postIdx dbTouchIdx doneIdx readyIdx msnPack sqAddr msntblAddr rqAddr "
              "dbrRecAddr dbrAddr rqdbrAddr mtuSize sqWqeNum msntblNum rqWqeNum postSendLock color sq_dbval rq_dbval");
constexpr F cqFields[] = {
    EMUD_F(CompletionQueueHandle, cqAddr),      EMUD_F(CompletionQueueHandle, dbrRecAddr),
    EMUD_F(CompletionQueueHandle, dbrAddr),     EMUD_F(CompletionQueueHandle, consIdx),
    EMUD_F(CompletionQueueHandle, needConsIdx), EMUD_F(CompletionQueueHandle, activeIdx),
    EMUD_F(CompletionQueueHandle, cq_consumer), EMUD_F(CompletionQueueHandle, cq_dbpos),
    EMUD_F(CompletionQueueHandle, cqeNum),      EMUD_F(CompletionQueueHandle, cqeSize),
    EMUD_F(CompletionQueueHandle, pollCqLock),  EMUD_F(CompletionQueueHandle, cq_dbval)};
static_assert(emudlayout::tiles(cqFields, 12, sizeof(CompletionQueueHandle), alignof(CompletionQueueHandle)),
              "emud-layout: CompletionQueueHandle: cqAddr dbrRecAddr dbrAddr consIdx needConsIdx activeIdx cq_consumer "
              "cq_dbpos cqeNum cqeSize pollCqLock cq_dbval");
constexpr F ibufFields[] = {EMUD_F(IbufHandle, addr),   EMUD_F(IbufHandle, lkey), EMUD_F(IbufHandle, rkey),
                            EMUD_F(IbufHandle, nslots), EMUD_F(IbufHandle, head), EMUD_F(IbufHandle, tail)};
static_assert(emudlayout::tiles(ibufFields, 6, sizeof(IbufHandle), alignof(IbufHandle)),
              "emud-layout: IbufHandle: addr lkey rkey nslots head tail");
#endif
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

// fillWinKeys gives a header's ibgdaWin the window's memory region keys:
// every rank's (peerRkeys, which GDA WQEs name) and this rank's (lkey).
// A template, so a header without ibgdaWin never sees the fields.
template <class W>
int fillWinKeys(W* w, uint64_t emudWin) {
  if constexpr (emudlayout::hasIbgdaWin<W>::value) {
    uint64_t a[16] = {emudWin, 0};
    if (call(EMUD_H_MORI_GDA_KEY, a, "ccoWindowRegister") != 0) return 1;
    const int n = (int)a[4];
    auto* keys = static_cast<uint32_t*>(emud_obj_alloc(n * sizeof(uint32_t)));
    keys[0] = (uint32_t)a[2];
    w->ibgdaWin.lkey = (uint32_t)a[3];
    for (int p = 1; p < n; p++) {
      uint64_t b[16] = {emudWin, (uint64_t)p};
      if (call(EMUD_H_MORI_GDA_KEY, b, "ccoWindowRegister") != 0) return 1;
      keys[p] = (uint32_t)b[2];
    }
    w->ibgdaWin.peerRkeys = keys;
  }
  (void)w;
  (void)emudWin;
  return 0;
}

// A window in the header's layout, from emud's (winBase, stride4G,
// lsaRank at 0, 8, 12: include/emud/abi.h's ccoWindowRegister results);
// registered says it is a ccoWindowRegister'd window (GDA keys).
ccoWindowDevice* window(uint64_t emudWin, bool registered) {
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
  if (registered && fillWinKeys(w, emudWin) != 0) return nullptr;
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

// fillGda fills a header's ibgda (ccoIbgdaContext) for dev comm handle:
// each peer's endpoints (core::RdmaEndpointDevice, an mlx5 queue pair of
// emud's: capi/mori_gda.go), the signal pool and its keys in the resource
// window's ibgdaWin. A template, so a header without ibgda never sees it.
template <class D>
int fillGda(D& d, uint64_t handle, int contexts) {
  if constexpr (emudlayout::hasIbgda<D>::value) {
#if EMUD_MORI_GDA
    using namespace ::mori::core;
    auto& g = d.ibgda;
    g.numQpPerPe = contexts > 0 ? contexts : 4;  // MORI's comm default
    if (d.gdaConnType == CCO_GDA_CONNECTION_NONE) return 0;
    const int n = d.worldSize, q = g.numQpPerPe;
    std::vector<RdmaEndpointDevice> eps((size_t)n * q);
    std::memset(static_cast<void*>(eps.data()), 0, eps.size() * sizeof(RdmaEndpointDevice));
    auto* sigKeys = static_cast<uint32_t*>(emud_obj_alloc(n * sizeof(uint32_t)));
    uint64_t b[16] = {};
    for (int p = 0; p < n; p++) {
      for (int x = 0; x < q; x++) {
        uint64_t c[16] = {handle, (uint64_t)p, (uint64_t)x};
        if (call(EMUD_H_MORI_GDA_EP, c, "ccoDevCommCreate") != 0) return 1;
        std::memcpy(b, c, sizeof b);
        sigKeys[p] = (uint32_t)c[10];
        if (c[0] == 0) continue;  // this rank: no queue pair to itself
        RdmaEndpointDevice& e = eps[(size_t)p * q + x];
        e.vendorId = RdmaDeviceVendorId::Mellanox;
        e.qpn = (uint32_t)c[7];
        e.wqHandle.sqAddr = reinterpret_cast<void*>((uintptr_t)c[0]);
        e.wqHandle.dbrRecAddr = reinterpret_cast<void*>((uintptr_t)c[1]);
        e.wqHandle.dbrAddr = reinterpret_cast<void*>((uintptr_t)c[2]);
        e.wqHandle.rqdbrAddr = e.wqHandle.dbrRecAddr;
        e.wqHandle.sqWqeNum = (uint32_t)c[8];
        e.wqHandle.mtuSize = 4096;
        e.cqHandle.cqAddr = reinterpret_cast<void*>((uintptr_t)c[3]);
        e.cqHandle.dbrRecAddr = reinterpret_cast<void*>((uintptr_t)c[4]);
        e.cqHandle.cqeNum = (uint32_t)c[9];
        e.cqHandle.cqeSize = 64;
        e.atomicIbuf.addr = (uintptr_t)c[5];
        e.atomicIbuf.lkey = (uint32_t)c[6];
        e.atomicIbuf.rkey = (uint32_t)c[6];
        e.atomicIbuf.nslots = 1;
      }
    }
    void* ev = nullptr;
    if (hipMalloc(&ev, eps.size() * sizeof(RdmaEndpointDevice)) != hipSuccess ||
        hipMemcpy(ev, eps.data(), eps.size() * sizeof(RdmaEndpointDevice), hipMemcpyHostToDevice) != hipSuccess)
      return 1;
    g.endpoints = static_cast<RdmaEndpointDevice*>(ev);
    uint64_t dn[16] = {handle, (uint64_t)(uintptr_t)ev, sizeof(RdmaEndpointDevice),
                       offsetof(RdmaEndpointDevice, wqHandle) + offsetof(WorkQueueHandle, doneIdx)};
    if (call(EMUD_H_MORI_GDA_DONE, dn, "ccoDevCommCreate") != 0) return 1;
    const uint64_t base = b[12], nsig = b[13], nctr = b[14];
    g.signalCount = (int)nsig;
    g.counterCount = (int)nctr;
    auto* pool = reinterpret_cast<uint64_t*>((uintptr_t)base);
    g.signalBuf = nsig ? pool : nullptr;
    g.signalShadows = nsig ? pool + nsig : nullptr;
    g.counterBuf = nctr ? pool + 2 * nsig : nullptr;
    // A signal's WQE names the resource window's key and the slot's
    // offset (raddr = id * 8): the pool is that region.
    if constexpr (emudlayout::hasIbgdaWin<ccoWindowDevice>::value) {
      d.resourceWindow_inlined.ibgdaWin.peerRkeys = sigKeys;
      d.resourceWindow_inlined.ibgdaWin.lkey = (uint32_t)b[11];
      if (d.resourceWindow) d.resourceWindow->ibgdaWin = d.resourceWindow_inlined.ibgdaWin;
    }
#else
    static_assert(sizeof(D) == 0,
                  "emud-layout: ccoDevComm has ibgda but mori/core/transport/rdma/core_device_types.hpp "
                  "(core::RdmaEndpointDevice) is not on the include path");
#endif
  }
  (void)d;
  (void)handle;
  (void)contexts;
  return 0;
}

// freeGda frees fillGda's endpoints.
template <class D>
void freeGda(D& d) {
  if constexpr (emudlayout::hasIbgda<D>::value) {
    if (d.ibgda.endpoints) hipFree(d.ibgda.endpoints);
    d.ibgda.endpoints = nullptr;
  }
  (void)d;
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
  freeGda(d);
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
  if (win) *win = rc == 0 ? window(a[3], true) : nullptr;
  if (rc == 0 && win && !*win) return 1;
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
  if (win) *win = rc == 0 ? window(a[3], true) : nullptr;
  if (rc == 0 && win && !*win) return 1;
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
  // emud's ranks share one node: CROSSNODE and RAIL have no peers and
  // collapse to NONE, as MORI's ccoDevCommCreate does on one node; FULL
  // connects every pair (capi/mori_gda.go).
  uint64_t gda = reqs->gdaConnectionType == CCO_GDA_CONNECTION_FULL ? 1 : 0;
  uint64_t a[16] = {handleOf(comm),
                    reqs->magic,
                    reqs->version,
                    (uint64_t)(int64_t)reqs->sdmaQueueCount,
                    0,
                    gda,
                    (uint64_t)(int64_t)reqs->lsaBarrierCount,
                    (uint64_t)(int64_t)reqs->barrierCount,
                    (uint64_t)(int64_t)reqs->railGdaBarrierCount,
                    0,
                    (uint64_t)(int64_t)reqs->gdaSignalCount,
                    (uint64_t)(int64_t)reqs->gdaCounterCount,
                    (uint64_t)(int64_t)reqs->gdaContextCount,
                    (uint64_t)(int64_t)reqs->gdaQueueDepth,
                    1 /* this control plane fills GDA */};
  int rc = call(EMUD_H_DEVCOMM_CREATE, a, "ccoDevCommCreate");
  if (rc != 0) return rc;
  ccoDevComm d;
  std::memset(static_cast<void*>(&d), 0, sizeof d);
  d.rank = (int)a[0];
  d.worldSize = (int)a[1];
  d.lsaRank = (int)a[2];
  d.lsaSize = (int)a[3];
  d.myNodeStart = 0;
  d.gdaConnType = gda && d.worldSize > 1 ? CCO_GDA_CONNECTION_FULL : CCO_GDA_CONNECTION_NONE;
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
  d.resourceWindow = window(a[15], false);
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
  if (fillGda(d, handle, reqs->gdaContextCount) != 0) return 1;
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
