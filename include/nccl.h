// emud's nccl.h: NCCL's host API as far as device-API programs use it,
// written for emud from NCCL's documentation and headers (names and
// signatures only; github.com/emud-dev/emud, docs/cuda.md). Not NVIDIA's
// header. Communicators, symmetric memory and windows are the emulated
// node's (capi: the same comm, memory and window calls as emud's MORI
// layer), so lanes dereference LSA pointers natively and hang reports,
// the race detector and timing are the emulator's.
//
// Built: ncclGetUniqueId, ncclCommInitRank, ncclCommInitAll (one rank
// thread per device, made here), ncclCommFinalize, ncclCommDestroy,
// ncclCommCount, ncclCommUserRank, ncclCommCuDevice, ncclMemAlloc,
// ncclMemFree, ncclCommWindowRegister/Deregister, ncclGetErrorString,
// ncclGetVersion, ncclCommInitRankConfig, ncclCommInitRankScalable,
// ncclCommSplit, ncclCommShrink, ncclCommSuspend/Resume, ncclCommMemStats,
// ncclCommRevoke, ncclWinGetUserPtr, ncclCommRegister/Deregister;
// the host collectives (ncclAllReduce, ncclBroadcast, ncclBcast,
// ncclReduce, ncclAllGather, ncclReduceScatter, ncclAlltoAll, ncclGather,
// ncclScatter), ncclSend,
// ncclRecv and ncclGroupStart/End (capi/nccl_coll.go); nccl_device.h adds
// the device-communicator calls. The calls below "not emulated" are a
// compile error naming each.
#ifndef EMUD_NCCL_H
#define EMUD_NCCL_H

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_runtime.h"
// As NCCL's nccl.h: its data types' C++ types come with it.
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cuda_fp8.h"

#define NCCL_MAJOR 2
#define NCCL_MINOR 31
#define NCCL_PATCH 0
#define NCCL_VERSION(X, Y, Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#define NCCL_VERSION_CODE NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH)

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8,
  ncclNumResults = 9
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01
#define NCCL_REVOKE_DEFAULT 0x00
#define NCCL_SUSPEND_MEM 0x01
#define NCCL_UNDEF_FLOAT -1.0f
#define NCCL_API_MAGIC 0xcafebeef
#define NCCL_CONFIG_UNDEF_PTR nullptr

// The types the refused host calls below take (collectives, group calls,
// ncclCommInitRankConfig), declared so that a program using them fails
// with that call's own message, not an undeclared argument's. The values
// are NCCL's.
typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4, ncclNumOps = 5, ncclMaxRedOp = 0x7fffffff } ncclRedOp_t;
typedef enum { ncclScalarDevice = 0, ncclScalarHostImmediate = 1 } ncclScalarResidence_t;
// A communicator's configuration: the fields programs set before
// ncclCommInitRankConfig, each undefined until set.
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char* netName;
  int splitShare, trafficClass;
  const char* commName;
  int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched, graphUsageMode,
      numRmaCtx, maxP2pPeers, graphStreamOrdering;
} ncclConfig_t;
#define NCCL_CONFIG_INITIALIZER                                                                                 \
  {                                                                                                              \
    sizeof(ncclConfig_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,       \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,              \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,              \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT               \
  }

#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_STRICT_ORDERING 0x02
#define NCCL_WIN_CFT_COUNTED 0x08  // CFT counted writes' counters live here (NCCL 2.32)
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

struct ncclComm;
typedef struct ncclComm* ncclComm_t;
struct ncclWindow_vidmem;
typedef struct ncclWindow_vidmem* ncclWindow_t;

// The window as lanes read it (ncclWindow_t points to it): the same
// layout as the emulator's window object (capi's windowDevice).
struct ncclWindow_vidmem {
  char* winBase;      // the flat LSA base plus the window's offset
  uint32_t stride4G;  // GPU slices apart, in 4 GiB units
  int lsaRank;        // the owner's LSA rank
};

namespace emud {
namespace nccl {
// What the header keeps of each comm (the emulator keeps the rest): its
// rank, size and device, for the calls NCCL answers on the host.
struct commInfo {
  int rank, nRanks, dev;
  uint64_t clique;         // the unique id's: comms of one ncclCommInitRank id share it
  bool suspended = false;  // ncclCommSuspend'ed, not resumed yet
  bool revoked = false;    // ncclCommRevoke'd
};
inline std::mutex mu;
inline std::map<uintptr_t, commInfo> comms;   // by ncclComm_t
inline std::map<int, uintptr_t> devComm;      // device -> its latest live comm (ncclMemAlloc's)
inline std::map<uintptr_t, uintptr_t> allocs; // ncclMemAlloc'd pointer -> its comm
// drives is, for the calling thread, each clique's comms it has made
// NCCL calls on: a thread with two of one clique drives several ranks
// (one thread, every GPU), where a blocking collective setup call would
// wait for the thread itself.
inline thread_local std::map<uint64_t, std::map<uintptr_t, bool>> drives;
inline void noteDrive(uintptr_t comm) {
  std::lock_guard<std::mutex> g(mu);
  auto it = comms.find(comm);
  if (it != comms.end()) drives[it->second.clique][comm] = true;
}
inline bool drivesSeveral(uintptr_t comm) {
  std::lock_guard<std::mutex> g(mu);
  auto it = comms.find(comm);
  if (it == comms.end()) return false;
  auto d = drives.find(it->second.clique);
  return d != drives.end() && (d->second.size() > 1 || (d->second.size() == 1 && !d->second.count(comm)));
}

}  // namespace nccl
}  // namespace emud
// ncclGetLastError: the calling thread's last failed call, in words (C
// linkage, as NCCL's: capi/nccl_err.c).
extern "C" const char* ncclGetLastError(ncclComm_t comm);
extern "C" void emud_nccl_set_last_error(const char* msg);
namespace emud {
namespace nccl {
inline ncclResult_t fail(ncclResult_t r, const char* call, const char* why, const char* file, int line) {
  std::fprintf(stderr, "emud: %s:%d: %s: %s\n", file, line, call, why);
  char msg[512];
  std::snprintf(msg, sizeof msg, "%s: %s (%s:%d)", call, why, file, line);
  emud_nccl_set_last_error(msg);
  return r;
}
inline bool info(ncclComm_t c, commInfo* out) {
  std::lock_guard<std::mutex> g(mu);
  auto it = comms.find((uintptr_t)c);
  if (it == comms.end()) return false;
  *out = it->second;
  return true;
}
// The emulator's status codes are MORI's (0 success): any failure is the
// call's misuse here, which the emulator has already named on stderr.
inline ncclResult_t rc(int r) { return r == 0 ? ncclSuccess : ncclInvalidUsage; }
}  // namespace nccl
}  // namespace emud

inline const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    case ncclTimeout: return "operation timed out";
    default: return "unknown result code";
  }
}
inline ncclResult_t ncclGetVersion(int* v) {
  if (!v) return ncclInvalidArgument;
  *v = NCCL_VERSION_CODE;
  return ncclSuccess;
}

inline ncclResult_t ncclGetUniqueId(ncclUniqueId* id, EMUD_SITE) {
  if (!id) return ::emud::nccl::fail(ncclInvalidArgument, "ncclGetUniqueId", "null uniqueId", __emud_file, __emud_line);
  uint64_t a[16] = {::emud::addr(id)};
  return ::emud::nccl::rc(emud_host(EMUD_H_UNIQUE_ID, a, __emud_file, __emud_line));
}

// Groups and the collective setup calls: one thread may make several
// ranks' ncclCommInitRank (or ncclCommWindowRegister, ncclDevCommCreate)
// between ncclGroupStart and ncclGroupEnd, each after cudaSetDevice to
// its rank's GPU, as NCCL allows. emud's are collective on the calling
// thread, so inside a group each is kept, with the device current at the
// call, and the outermost ncclGroupEnd runs them at once, each on a
// thread of its own (host threads of the emulation, as ncclCommInitAll's)
// on its device, before the group's collectives; a lone one runs on the
// calling thread (a rank process, under MPI, groups its own). Their
// outputs are set when ncclGroupEnd returns, as NCCL says.
namespace emud {
namespace nccl {
inline thread_local int groupDepth;
struct deferredCall {
  int dev;
  std::function<ncclResult_t()> call;
};
inline thread_local std::vector<deferredCall> deferred;
// defer keeps call for the group's end when a group is open.
inline bool defer(std::function<ncclResult_t()> call, const char* file, int line, const char* fn) {
  if (groupDepth == 0) return false;
  int dev = 0;
  (void)cudaGetDevice(&dev, file, line, fn);
  deferred.push_back({dev, std::move(call)});
  return true;
}
// runDeferred runs the calls a group kept: the first failure, if any.
inline ncclResult_t runDeferred(const char* file, int line, const char* fn) {
  std::vector<deferredCall> calls = std::move(deferred);
  deferred.clear();
  if (calls.size() == 1) {
    // One call (a process's own rank, as nccl-tests groups it under MPI):
    // on the calling thread, on the call's device, as without a group. A
    // forked rank process is emulated with one host thread.
    int prev = 0;
    if (cudaGetDevice(&prev, file, line, fn) != cudaSuccess) return ncclUnhandledCudaError;
    if (prev != calls[0].dev && cudaSetDevice(calls[0].dev, file, line, fn) != cudaSuccess) return ncclUnhandledCudaError;
    ncclResult_t r = calls[0].call();
    if (prev != calls[0].dev) (void)cudaSetDevice(prev, file, line, fn);
    return r;
  }
  std::vector<ncclResult_t> res(calls.size(), ncclSuccess);
  std::vector<std::thread> ts;
  for (size_t i = 0; i < calls.size(); i++) {
    ts.emplace_back([&, i] {
      if (cudaSetDevice(calls[i].dev, file, line, fn) != cudaSuccess) {
        res[i] = ncclUnhandledCudaError;
        return;
      }
      res[i] = calls[i].call();
    });
  }
  for (auto& t : ts) t.join();
  for (ncclResult_t r : res)
    if (r != ncclSuccess) return r;
  return ncclSuccess;
}
}  // namespace nccl
}  // namespace emud

namespace emud {
namespace nccl {
// initRank makes rank's comm of the id on device dev: collective, it
// returns when every rank of the id has made its call, as NCCL's
// bootstrap does.
inline ncclResult_t initRank(ncclComm_t* comm, int nRanks, const ncclUniqueId& id, int rank, int dev, const char* file,
                             int line) {
  uint64_t a[16] = {::emud::addr(&id), (uint64_t)(int64_t)nRanks, (uint64_t)(int64_t)rank, 0, 0, 1, (uint64_t)dev};
  int r = emud_host(EMUD_H_COMM_CREATE, a, file, line);
  if (r != 0) return rc(r);
  *comm = (ncclComm_t)(uintptr_t)a[4];
  std::lock_guard<std::mutex> g(mu);
  uint64_t clique = 0;
  std::memcpy(&clique, reinterpret_cast<const unsigned char*>(&id) + 8, sizeof clique);
  comms[(uintptr_t)*comm] = {rank, nRanks, dev, clique};
  devComm[dev] = (uintptr_t)*comm;
  return ncclSuccess;
}
// joinSplit makes the calling rank's comm of a split's answer a (the
// id's number, the rank, the ranks: capi/split.go) on device dev.
inline ncclResult_t joinSplit(ncclComm_t* comm, const uint64_t* a, int dev, const char* file, int line) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::memcpy(&id, "emud-uid", 8);
  std::memcpy(reinterpret_cast<unsigned char*>(&id) + 8, &a[3], sizeof a[3]);
  return initRank(comm, (int)a[5], id, (int)a[4], dev, file, line);
}
}  // namespace nccl
}  // namespace emud

// ncclCommInitRank: the rank runs on the calling thread's current device
// (cudaSetDevice first), which no other rank of the id may share. Ranks
// on GPUs other than 0..nRanks-1 in rank order (two comms on halves of
// the node) run host collectives; their windows and dev comms are
// refused (docs/cuda.md).
inline ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nRanks, ncclUniqueId id, int rank, EMUD_SITE) {
  if (!comm) return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommInitRank", "null comm", __emud_file, __emud_line);
  *comm = nullptr;
  if (::emud::nccl::defer([=] { return ncclCommInitRank(comm, nRanks, id, rank, __emud_file, __emud_line, __emud_fn); },
                          EMUD_SITE_ARGS))
    return ncclSuccess;
  if (nRanks < 1 || rank < 0 || rank >= nRanks)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommInitRank", "rank outside [0, nRanks)", __emud_file, __emud_line);
  int dev = 0;
  if (cudaGetDevice(&dev, EMUD_SITE_ARGS) != cudaSuccess) return ncclUnhandledCudaError;
  return ::emud::nccl::initRank(comm, nRanks, id, rank, dev, __emud_file, __emud_line);
}

// ncclCommSplit: collective over comm's ranks. The ranks of one color
// make a new comm, ranked by key and then by their rank in comm, each on
// its rank's device in comm; a rank of color NCCL_SPLIT_NOCOLOR gets
// none (*newcomm NULL). One thread splitting several ranks groups the
// calls (ncclGroupStart/End), as NCCL asks. The configuration changes
// nothing (as ncclCommInitRankConfig's).
inline ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config,
                                  EMUD_SITE) {
  (void)config;
  if (!newcomm) return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommSplit", "null newcomm", __emud_file, __emud_line);
  *newcomm = nullptr;
  ::emud::nccl::commInfo ci;
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommSplit", "comm was not made by ncclCommInitRank (or destroyed)",
                              __emud_file, __emud_line);
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommSplit", "color is negative and not NCCL_SPLIT_NOCOLOR",
                              __emud_file, __emud_line);
  ::emud::nccl::noteDrive((uintptr_t)comm);
  if (::emud::nccl::defer([=] { return ncclCommSplit(comm, color, key, newcomm, config, __emud_file, __emud_line, __emud_fn); },
                          EMUD_SITE_ARGS))
    return ncclSuccess;
  uint64_t a[16] = {(uint64_t)(uintptr_t)comm, (uint64_t)(int64_t)color, (uint64_t)(int64_t)key};
  int r = emud_host(EMUD_H_COMM_SPLIT, a, __emud_file, __emud_line);
  if (r != 0) return ::emud::nccl::rc(r);
  if (a[3] == 0) return ncclSuccess;  // NCCL_SPLIT_NOCOLOR
  return ::emud::nccl::joinSplit(newcomm, a, ci.dev, __emud_file, __emud_line);
}

// ncclCommShrink: ncclCommSplit's rendezvous among the ranks not in
// excludeRanksList (every caller passes the same list, and the excluded
// ranks do not call): one comm, its ranks in their order in comm, each
// on its rank's device. Partial: NCCL_SHRINK_ABORT aborts nothing, as
// emud's comm has no operation in flight once its streams were waited.
inline ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                                   ncclConfig_t* config, int shrinkFlags, EMUD_SITE) {
  (void)config;
  if (!newcomm) return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommShrink", "null newcomm", __emud_file, __emud_line);
  *newcomm = nullptr;
  ::emud::nccl::commInfo ci;
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommShrink", "comm was not made by ncclCommInitRank (or destroyed)",
                              __emud_file, __emud_line);
  if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommShrink", "shrinkFlags is neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT",
                              __emud_file, __emud_line);
  if (excludeRanksCount < 0 || excludeRanksCount >= ci.nRanks || (excludeRanksCount > 0 && !excludeRanksList))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommShrink",
                              "excludeRanksCount must be at least 0 and leave a rank, with a list of that many ranks", __emud_file,
                              __emud_line);
  std::vector<int> ex(excludeRanksList, excludeRanksList + excludeRanksCount);
  std::sort(ex.begin(), ex.end());
  uint64_t digest = 1469598103934665603ull;  // FNV-1a over the sorted ranks
  for (size_t i = 0; i < ex.size(); i++) {
    if (ex[i] < 0 || ex[i] >= ci.nRanks || (i > 0 && ex[i] == ex[i - 1]))
      return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommShrink", "excludeRanksList holds a rank twice or one outside the comm",
                                __emud_file, __emud_line);
    if (ex[i] == ci.rank)
      return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommShrink", "the calling rank is in excludeRanksList (excluded ranks do not call)",
                                __emud_file, __emud_line);
    digest = (digest ^ (uint64_t)ex[i]) * 1099511628211ull;
  }
  ::emud::nccl::noteDrive((uintptr_t)comm);
  if (::emud::nccl::defer(
          [=] {
            return ncclCommShrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags, __emud_file, __emud_line,
                                  __emud_fn);
          },
          EMUD_SITE_ARGS))
    return ncclSuccess;
  uint64_t a[16] = {(uint64_t)(uintptr_t)comm, 0, (uint64_t)ci.rank, 0, 0, 0, (uint64_t)(ci.nRanks - excludeRanksCount), digest};
  int r = emud_host(EMUD_H_COMM_SPLIT, a, __emud_file, __emud_line);
  if (r != 0) return ::emud::nccl::rc(r);
  return ::emud::nccl::joinSplit(newcomm, a, ci.dev, __emud_file, __emud_line);
}

// ncclCommInitRankScalable: ncclCommInitRank's over the first of the
// nId ids (NCCL spreads its bootstrap over them; emud's comm is made at
// once, and every rank passes the same ids in the same order).
inline ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                             ncclConfig_t* config, EMUD_SITE) {
  (void)config;
  if (nId < 1 || !commIds)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommInitRankScalable", "nId < 1 or null commIds", __emud_file, __emud_line);
  return ncclCommInitRank(newcomm, nranks, commIds[0], myrank, EMUD_SITE_ARGS);
}

// ncclCommInitAll makes the comms of nDev devices from one thread: as
// the emulator's comm creation is collective, each is made by a thread
// of its own (host threads of the emulation) that this call joins.
inline ncclResult_t ncclCommInitAll(ncclComm_t* comms, int nDev, const int* devList, EMUD_SITE) {
  if (!comms || nDev < 1)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommInitAll", "null comms or nDev < 1", __emud_file, __emud_line);
  ncclUniqueId id;
  ncclResult_t r = ncclGetUniqueId(&id, EMUD_SITE_ARGS);
  if (r != ncclSuccess) return r;
  std::vector<ncclResult_t> res(nDev, ncclSuccess);
  std::vector<std::thread> ts;
  for (int i = 0; i < nDev; i++) {
    ts.emplace_back([&, i] {
      int dev = devList ? devList[i] : i;
      if (cudaSetDevice(dev, __emud_file, __emud_line, __emud_fn) != cudaSuccess) {
        res[i] = ncclUnhandledCudaError;
        return;
      }
      res[i] = ncclCommInitRank(&comms[i], nDev, id, i, __emud_file, __emud_line, __emud_fn);
    });
  }
  for (auto& t : ts) t.join();
  for (ncclResult_t x : res)
    if (x != ncclSuccess) return x;
  return ncclSuccess;
}

// ncclCommFinalize: emud's collectives are stream work queued at their
// call, so there is nothing left to flush; after ncclCommRevoke it is
// invalid, as NCCL says.
inline ncclResult_t ncclCommFinalize(ncclComm_t comm, EMUD_SITE) {
  ::emud::nccl::commInfo ci;
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommFinalize", "not a comm ncclCommInitRank made", __emud_file, __emud_line);
  if (ci.revoked)
    return ::emud::nccl::fail(ncclInvalidUsage, "ncclCommFinalize", "the communicator was revoked (ncclCommRevoke): destroy it",
                              __emud_file, __emud_line);
  return ncclSuccess;
}
inline ncclResult_t ncclCommDestroy(ncclComm_t comm, EMUD_SITE) {
  ::emud::nccl::commInfo ci;
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommDestroy", "not a comm ncclCommInitRank made (or destroyed)", __emud_file, __emud_line);
  uint64_t a[16] = {(uint64_t)(uintptr_t)comm};
  int r = emud_host(EMUD_H_COMM_DESTROY, a, __emud_file, __emud_line);
  std::lock_guard<std::mutex> g(::emud::nccl::mu);
  ::emud::nccl::comms.erase((uintptr_t)comm);
  if (::emud::nccl::devComm[ci.dev] == (uintptr_t)comm) ::emud::nccl::devComm.erase(ci.dev);
  for (auto& al : ::emud::nccl::allocs)
    if (al.second == (uintptr_t)comm) al.second = 0;  // ncclMemFree may still come

  return ::emud::nccl::rc(r);
}
inline ncclResult_t ncclCommCount(ncclComm_t comm, int* count) {
  ::emud::nccl::noteDrive((uintptr_t)comm);
  ::emud::nccl::commInfo ci;
  if (!count || !::emud::nccl::info(comm, &ci)) return ncclInvalidArgument;
  *count = ci.nRanks;
  return ncclSuccess;
}
inline ncclResult_t ncclCommUserRank(ncclComm_t comm, int* rank) {
  ::emud::nccl::noteDrive((uintptr_t)comm);
  ::emud::nccl::commInfo ci;
  if (!rank || !::emud::nccl::info(comm, &ci)) return ncclInvalidArgument;
  *rank = ci.rank;
  return ncclSuccess;
}
inline ncclResult_t ncclCommCuDevice(ncclComm_t comm, int* dev) {
  ::emud::nccl::noteDrive((uintptr_t)comm);
  ::emud::nccl::commInfo ci;
  if (!dev || !::emud::nccl::info(comm, &ci)) return ncclInvalidArgument;
  *dev = ci.dev;
  return ncclSuccess;
}

// ncclMemAlloc: memory that windows can be registered on. NCCL's takes
// no comm; emud's symmetric memory is a comm's, so it comes from the
// latest live comm of the current device (ncclCommInitRank first, as
// NCCL's device-API examples do).
inline ncclResult_t ncclMemAlloc(void** ptr, size_t size, EMUD_SITE) {
  if (!ptr) return ::emud::nccl::fail(ncclInvalidArgument, "ncclMemAlloc", "null ptr", __emud_file, __emud_line);
  *ptr = nullptr;
  int dev = 0;
  if (cudaGetDevice(&dev, EMUD_SITE_ARGS) != cudaSuccess) return ncclUnhandledCudaError;
  uintptr_t comm;
  {
    std::lock_guard<std::mutex> g(::emud::nccl::mu);
    auto it = ::emud::nccl::devComm.find(dev);
    if (it == ::emud::nccl::devComm.end())
      return ::emud::nccl::fail(ncclInvalidUsage, "ncclMemAlloc",
                                "no NCCL comm on the current device yet: emud allocates NCCL memory from a comm's symmetric heap, so call ncclCommInitRank first",
                                __emud_file, __emud_line);
    comm = it->second;
  }
  uint64_t a[16] = {(uint64_t)comm, size};
  int r = emud_host(EMUD_H_MEM_ALLOC, a, __emud_file, __emud_line);
  if (r != 0) return ncclSystemError;
  *ptr = (void*)(uintptr_t)a[2];
  std::lock_guard<std::mutex> g(::emud::nccl::mu);
  ::emud::nccl::allocs[(uintptr_t)*ptr] = comm;
  return ncclSuccess;
}
inline ncclResult_t ncclMemFree(void* ptr, EMUD_SITE) {
  if (!ptr) return ncclSuccess;
  uintptr_t comm;
  {
    std::lock_guard<std::mutex> g(::emud::nccl::mu);
    auto it = ::emud::nccl::allocs.find((uintptr_t)ptr);
    if (it == ::emud::nccl::allocs.end())
      return ::emud::nccl::fail(ncclInvalidArgument, "ncclMemFree", "not a pointer ncclMemAlloc returned (or freed)", __emud_file, __emud_line);
    comm = it->second;
    ::emud::nccl::allocs.erase(it);
  }
  // NCCL's memory outlives the comm it was allocated beside (nccl-tests
  // frees its buffers after ncclCommDestroy); emud's came from the comm's
  // heap, which stays with the node once the comm is gone: nothing to free.
  if (comm == 0) return ncclSuccess;
  uint64_t a[16] = {(uint64_t)comm, ::emud::addr(ptr)};
  return ::emud::nccl::rc(emud_host(EMUD_H_MEM_FREE, a, __emud_file, __emud_line));
}

// ncclCommWindowRegister is collective, as NCCL's: it returns when every
// rank registered its buffer. The buffer must be ncclMemAlloc's, whole or
// in part (the emulator names what else it was).
inline ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags = NCCL_WIN_DEFAULT,
                                           EMUD_SITE) {
  ::emud::nccl::noteDrive((uintptr_t)comm);
  if (!win || !buff)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommWindowRegister", "null buffer or window", __emud_file, __emud_line);
  *win = nullptr;
  if (::emud::nccl::defer([=] { return ncclCommWindowRegister(comm, buff, size, win, winFlags, __emud_file, __emud_line, __emud_fn); },
                          EMUD_SITE_ARGS))
    return ncclSuccess;
  if (winFlags & ~(NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_STRICT_ORDERING | NCCL_WIN_CFT_COUNTED))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommWindowRegister",
                              "window flags other than NCCL_WIN_COLL_SYMMETRIC, NCCL_WIN_STRICT_ORDERING and NCCL_WIN_CFT_COUNTED",
                              __emud_file, __emud_line);
  if ((winFlags & NCCL_WIN_CFT_COUNTED) && ::emud::addr(buff) % 256 != 0)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommWindowRegister",
                              "NCCL_WIN_CFT_COUNTED needs a 256-byte aligned buffer (counters are 256-byte aligned in it)", __emud_file,
                              __emud_line);
  uint64_t a[16] = {(uint64_t)(uintptr_t)comm, ::emud::addr(buff), size};
  int r = emud_host(EMUD_H_WINDOW_REGISTER, a, __emud_file, __emud_line);
  if (r != 0) return ::emud::nccl::rc(r);
  // The window's flags and comm, for CFT's LE offsets and counters.
  uint64_t c[16] = {EMUD_CFT_H_WINDOW, (uint64_t)a[3], (uint64_t)(unsigned)winFlags, (uint64_t)(uintptr_t)comm};
  r = emud_host(EMUD_H_CFT, c, __emud_file, __emud_line);
  if (r != 0) return ::emud::nccl::rc(r);
  *win = (ncclWindow_t)(uintptr_t)a[3];
  return ncclSuccess;
}
inline ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win, EMUD_SITE) {
  ::emud::nccl::noteDrive((uintptr_t)comm);
  uint64_t a[16] = {(uint64_t)(uintptr_t)comm, ::emud::addr(win)};
  return ::emud::nccl::rc(emud_host(EMUD_H_WINDOW_DEREGISTER, a, __emud_file, __emud_line));
}

// ---- host collectives and point-to-point (capi/nccl_coll.go) ----
// Stream work, matched across ranks by call order on each communicator;
// the calls between the outermost ncclGroupStart and ncclGroupEnd of a
// thread post together, one job a stream, so a group's sends and
// receives do not wait for each other. Arguments are checked at the
// call (a bad one is ncclInvalidUsage, said at its line); ranks whose
// calls disagree fail the run naming both, and a call some rank never
// makes is a hang naming the ranks that made it.
namespace emud {
namespace nccl {
enum {
  coll_allreduce = 1,
  coll_broadcast,
  coll_reduce,
  coll_allgather,
  coll_reducescatter,
  coll_alltoall,
  coll_send,
  coll_recv,
  coll_group_start,
  coll_group_end,
  coll_gather,
  coll_scatter
};
// collName is call kind's NCCL name, for its errors.
inline const char* collName(int kind, bool inPlace) {
  static const char* const names[] = {"ncclAllReduce", "ncclBroadcast",  "ncclReduce",   "ncclAllGather",
                                      "ncclReduceScatter", "ncclAlltoAll", "ncclSend",     "ncclRecv",
                                      "ncclGroupStart", "ncclGroupEnd",   "ncclGather",   "ncclScatter"};
  if (kind == coll_broadcast && inPlace) return "ncclBcast";
  return kind >= coll_allreduce && kind <= coll_scatter ? names[kind - coll_allreduce] : "the collective";
}
// A reduction operator ncclRedOpCreatePreMulSum made: ncclNumOps + its
// index names it; the emulator gets its scalar with each call.
struct preMulSum {
  ncclComm_t comm;
  int type;
  int residence;    // ncclScalarDevice or ncclScalarHostImmediate
  uint64_t scalar;  // the host scalar's bytes, or the device scalar's address
  bool live;
};
inline std::vector<preMulSum> userOps;
// preMulOp is the PreMulSum for the redop code 5 the emulator knows it by.
constexpr int preMulOp = 5;

// coll makes call kind; inPlace names an ncclBcast (a broadcast).
inline ncclResult_t coll(int kind, const void* send, const void* recv, size_t count, int type, int op, int peer,
                         ncclComm_t comm, cudaStream_t s, const char* file, int line, bool inPlace = false) {
  if (comm) noteDrive((uintptr_t)comm);
  commInfo ci;
  if (comm && info(comm, &ci) && (ci.suspended || ci.revoked))
    return fail(ncclInvalidUsage, collName(kind, inPlace),
                ci.revoked ? "the communicator was revoked (ncclCommRevoke): destroy, split or shrink it"
                           : "the communicator is suspended (ncclCommSuspend): ncclCommResume first",
                file, line);
  uint64_t residence = 0, scalar = 0;
  if (op >= ncclNumOps && (kind == coll_allreduce || kind == coll_reduce || kind == coll_reducescatter)) {
    std::lock_guard<std::mutex> g(mu);
    size_t k = (size_t)(op - ncclNumOps);
    if (k >= userOps.size() || !userOps[k].live)
      return fail(ncclInvalidArgument, collName(kind, inPlace), "a reduction operator ncclRedOpCreatePreMulSum did not make (or destroyed)", file, line);
    if (userOps[k].comm != comm)
      return fail(ncclInvalidArgument, collName(kind, inPlace), "a reduction operator made for another communicator", file, line);
    if (userOps[k].type != type)
      return fail(ncclInvalidArgument, collName(kind, inPlace), "a reduction operator made for another datatype", file, line);
    residence = userOps[k].residence == ncclScalarHostImmediate ? 1 : 2;
    scalar = userOps[k].scalar;
    op = preMulOp;
  }
  uint64_t a[16] = {(uint64_t)kind,          ::emud::addr(send),        ::emud::addr(recv),
                    (uint64_t)count,         (uint64_t)(int64_t)type,   (uint64_t)(int64_t)op,
                    (uint64_t)(int64_t)peer, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)s,
                    (uint64_t)inPlace,       residence,                 scalar};
  return rc(emud_host(EMUD_H_NCCL_COLL, a, file, line));
}
}  // namespace nccl
}  // namespace emud
inline ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_allreduce, sendbuff, recvbuff, count, datatype, op, 0, comm, stream,
                            __emud_file, __emud_line);
}
inline ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                  ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_broadcast, sendbuff, recvbuff, count, datatype, 0, root, comm, stream,
                            __emud_file, __emud_line);
}
// ncclBcast: the in-place broadcast.
inline ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                              cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_broadcast, buff, buff, count, datatype, 0, root, comm, stream, __emud_file,
                            __emud_line, true);
}
inline ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream,
                            __emud_file, __emud_line);
}
inline ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                  ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_allgather, sendbuff, recvbuff, sendcount, datatype, 0, 0, comm, stream,
                            __emud_file, __emud_line);
}
inline ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_reducescatter, sendbuff, recvbuff, recvcount, datatype, op, 0, comm,
                            stream, __emud_file, __emud_line);
}
inline ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_alltoall, sendbuff, recvbuff, count, datatype, 0, 0, comm, stream,
                            __emud_file, __emud_line);
}
// ncclGather: every rank's count elements to the root's recvbuff, in rank
// order; ncclScatter: the root's sendbuff, count elements to each rank.
inline ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                               ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_gather, sendbuff, recvbuff, count, datatype, 0, root, comm, stream,
                            __emud_file, __emud_line);
}
inline ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_scatter, sendbuff, recvbuff, count, datatype, 0, root, comm, stream,
                            __emud_file, __emud_line);
}
inline ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                             cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_send, sendbuff, nullptr, count, datatype, 0, peer, comm, stream,
                            __emud_file, __emud_line);
}
inline ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                             cudaStream_t stream, EMUD_SITE) {
  return ::emud::nccl::coll(::emud::nccl::coll_recv, nullptr, recvbuff, count, datatype, 0, peer, comm, stream,
                            __emud_file, __emud_line);
}
inline ncclResult_t ncclGroupStart(EMUD_SITE) {
  ncclResult_t r = ::emud::nccl::coll(::emud::nccl::coll_group_start, nullptr, nullptr, 0, 0, 0, 0, nullptr, nullptr, __emud_file,
                                      __emud_line);
  if (r == ncclSuccess) ::emud::nccl::groupDepth++;
  return r;
}
inline ncclResult_t ncclGroupEnd(EMUD_SITE) {
  if (::emud::nccl::groupDepth > 0 && --::emud::nccl::groupDepth == 0 && !::emud::nccl::deferred.empty()) {
    ncclResult_t r = ::emud::nccl::runDeferred(EMUD_SITE_ARGS);
    if (r != ncclSuccess) {
      (void)::emud::nccl::coll(::emud::nccl::coll_group_end, nullptr, nullptr, 0, 0, 0, 0, nullptr, nullptr, __emud_file, __emud_line);
      return r;
    }
  }
  return ::emud::nccl::coll(::emud::nccl::coll_group_end, nullptr, nullptr, 0, 0, 0, 0, nullptr, nullptr, __emud_file,
                            __emud_line);
}
// ncclCommRegister: the buffer is usable by collectives as it is (emud
// copies from device memory directly); the handle names it.
inline ncclResult_t ncclCommRegister(ncclComm_t comm, void* buff, size_t size, void** handle, EMUD_SITE) {
  if (!handle) return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommRegister", "null handle", __emud_file, __emud_line);
  ::emud::nccl::commInfo ci;
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommRegister", "comm was not made by ncclCommInitRank",
                              __emud_file, __emud_line);
  (void)size;
  *handle = buff;
  return ncclSuccess;
}
inline ncclResult_t ncclCommDeregister(ncclComm_t comm, void* handle, EMUD_SITE) {
  ::emud::nccl::commInfo ci;
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommDeregister", "comm was not made by ncclCommInitRank",
                              __emud_file, __emud_line);
  (void)handle;
  return ncclSuccess;
}
// ncclCommInitRankConfig: ncclCommInitRank's; the configuration's fields
// change nothing in emud (every call blocks as a blocking comm's does).
inline ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nRanks, ncclUniqueId id, int rank,
                                           ncclConfig_t* config, EMUD_SITE) {
  (void)config;
  return ncclCommInitRank(comm, nRanks, id, rank, EMUD_SITE_ARGS);
}

// ncclRedOpCreatePreMulSum: an operator that multiplies each rank's input
// by that rank's scalar (in the datatype), then sums; a host scalar is
// read now, a device one when the collective runs.
inline ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                             ncclScalarResidence_t residence, ncclComm_t comm, EMUD_SITE) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  ::emud::nccl::commInfo ci;
  if (!op || !scalar)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum", "null op or scalar", __emud_file, __emud_line);
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum", "comm was not made by ncclCommInitRank",
                              __emud_file, __emud_line);
  if ((int)datatype < 0 || (int)datatype >= ncclNumTypes)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum", "not an ncclDataType_t", __emud_file, __emud_line);
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum", "residence is neither ncclScalarDevice nor ncclScalarHostImmediate",
                              __emud_file, __emud_line);
  ::emud::nccl::preMulSum m{comm, (int)datatype, (int)residence, 0, true};
  if (residence == ncclScalarHostImmediate) {
    std::memcpy(&m.scalar, scalar, sizes[datatype]);
  } else {
    m.scalar = ::emud::addr(scalar);
  }
  std::lock_guard<std::mutex> g(::emud::nccl::mu);
  ::emud::nccl::userOps.push_back(m);
  *op = (ncclRedOp_t)(ncclNumOps + (int)::emud::nccl::userOps.size() - 1);
  return ncclSuccess;
}
inline ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm, EMUD_SITE) {
  std::lock_guard<std::mutex> g(::emud::nccl::mu);
  size_t k = (size_t)((int)op - ncclNumOps);
  if ((int)op < ncclNumOps || k >= ::emud::nccl::userOps.size() || !::emud::nccl::userOps[k].live)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclRedOpDestroy", "not an operator ncclRedOpCreatePreMulSum made (or destroyed)",
                              __emud_file, __emud_line);
  if (::emud::nccl::userOps[k].comm != comm)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclRedOpDestroy", "the operator was made for another communicator",
                              __emud_file, __emud_line);
  ::emud::nccl::userOps[k].live = false;
  return ncclSuccess;
}
// ncclCommGetAsyncError: emud's collectives fail the run at once (the
// report names the call), so a live comm never holds an error.
inline ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError, EMUD_SITE) {
  ::emud::nccl::commInfo ci;
  if (!asyncError)
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommGetAsyncError", "null asyncError", __emud_file, __emud_line);
  if (!::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommGetAsyncError", "comm was not made by ncclCommInitRank",
                              __emud_file, __emud_line);
  *asyncError = ncclSuccess;
  return ncclSuccess;
}
// ncclCommAbort: ncclCommDestroy's (emud has no operation in flight to
// cancel once the comm's streams were waited for; partial: one still
// queued runs as it would after a destroy).
inline ncclResult_t ncclCommAbort(ncclComm_t comm, EMUD_SITE) { return ncclCommDestroy(comm, EMUD_SITE_ARGS); }

// ncclCommSuspend and ncclCommResume: a suspended comm refuses
// collectives until resumed. Partial: it releases no memory, as emud's
// comm holds no GPU memory of NCCL's own (ncclMemAlloc's is the user's).
namespace emud {
namespace nccl {
// changeState runs change on comm's kept state under the lock, or fails
// call as NCCL does for a comm that is not live.
inline ncclResult_t changeState(ncclComm_t comm, const char* call, const char* file, int line,
                                const std::function<ncclResult_t(commInfo&)>& change) {
  std::lock_guard<std::mutex> g(mu);
  auto it = comms.find((uintptr_t)comm);
  if (it == comms.end()) return fail(ncclInvalidArgument, call, "comm was not made by ncclCommInitRank (or destroyed)", file, line);
  return change(it->second);
}
}  // namespace nccl
}  // namespace emud
inline ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags, EMUD_SITE) {
  return ::emud::nccl::changeState(comm, "ncclCommSuspend", __emud_file, __emud_line, [&](::emud::nccl::commInfo& ci) {
    if (flags & ~NCCL_SUSPEND_MEM)
      return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommSuspend", "flags other than NCCL_SUSPEND_MEM", __emud_file, __emud_line);
    if (ci.suspended)
      return ::emud::nccl::fail(ncclInvalidUsage, "ncclCommSuspend", "the communicator is suspended already", __emud_file, __emud_line);
    ci.suspended = true;
    return ncclSuccess;
  });
}
inline ncclResult_t ncclCommResume(ncclComm_t comm, EMUD_SITE) {
  return ::emud::nccl::changeState(comm, "ncclCommResume", __emud_file, __emud_line, [&](::emud::nccl::commInfo& ci) {
    if (!ci.suspended)
      return ::emud::nccl::fail(ncclInvalidUsage, "ncclCommResume", "the communicator is not suspended", __emud_file, __emud_line);
    ci.suspended = false;
    return ncclSuccess;
  });
}
// ncclCommMemStats: emud's comm holds no GPU memory of NCCL's own, so the
// byte counts are 0; ncclStatGpuMemSuspended says whether it is suspended.
typedef enum {
  ncclStatGpuMemSuspend = 0,
  ncclStatGpuMemSuspended = 1,
  ncclStatGpuMemPersist = 2,
  ncclStatGpuMemTotal = 3
} ncclCommMemStat_t;
inline ncclResult_t ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value, EMUD_SITE) {
  ::emud::nccl::commInfo ci;
  if (!value || !::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommMemStats", "null value, or comm not made by ncclCommInitRank",
                              __emud_file, __emud_line);
  switch (stat) {
    case ncclStatGpuMemSuspended: *value = ci.suspended; return ncclSuccess;
    case ncclStatGpuMemSuspend:
    case ncclStatGpuMemPersist:
    case ncclStatGpuMemTotal: *value = 0; return ncclSuccess;
  }
  return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommMemStats", "not an ncclCommMemStat_t", __emud_file, __emud_line);
}
// ncclCommRevoke: the comm takes no more collectives (they fail naming
// the revoke); destroy, split and shrink still work. emud's comm has
// nothing in flight to stop once its streams were waited for (partial:
// work already queued on a stream runs).
inline ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags, EMUD_SITE) {
  return ::emud::nccl::changeState(comm, "ncclCommRevoke", __emud_file, __emud_line, [&](::emud::nccl::commInfo& ci) {
    if (revokeFlags != NCCL_REVOKE_DEFAULT)
      return ::emud::nccl::fail(ncclInvalidArgument, "ncclCommRevoke", "revokeFlags must be NCCL_REVOKE_DEFAULT", __emud_file,
                                __emud_line);
    ci.revoked = true;
    return ncclSuccess;
  });
}
// ncclWinGetUserPtr: the buffer the calling rank registered the window on.
inline ncclResult_t ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr, EMUD_SITE) {
  ::emud::nccl::commInfo ci;
  if (!outUserPtr || !win || !::emud::nccl::info(comm, &ci))
    return ::emud::nccl::fail(ncclInvalidArgument, "ncclWinGetUserPtr", "null window or pointer, or comm not made by ncclCommInitRank",
                              __emud_file, __emud_line);
  *outUserPtr = win->winBase + (((uint64_t)win->lsaRank * win->stride4G) << 32);
  return ncclSuccess;
}
// ncclResetDebugInit (deprecated by NCCL): emud's NCCL has no debug log
// to set up again.
inline void ncclResetDebugInit() {}

// ncclGroupSimulateEnd's and the parameter API's types, so that a
// program calling them fails on the call's own message below.
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;
#define NCCL_SIM_INFO_INITIALIZER {sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION_CODE, NCCL_UNDEF_FLOAT}
typedef struct ncclParamHandle* ncclParamHandle_t;

// ---- not emulated: a compile error naming the call ----
namespace emud {
namespace nccl {
template <class...>
inline constexpr bool unsupported_v = false;
}
}  // namespace emud
#define EMUD_NCCL_UNSUPPORTED(name)                                                                           \
  template <class... A>                                                                                       \
  ncclResult_t name(A&&...) {                                                                                 \
    static_assert(::emud::nccl::unsupported_v<A...>,                                                          \
                  #name " is not supported by emud (docs/cuda.md lists the NCCL calls emud emulates)");      \
    return ncclInvalidUsage;                                                                                  \
  }
EMUD_NCCL_UNSUPPORTED(ncclCommGetUniqueId)
EMUD_NCCL_UNSUPPORTED(ncclCommGrow)
EMUD_NCCL_UNSUPPORTED(ncclGroupSimulateEnd)
EMUD_NCCL_UNSUPPORTED(ncclParamBind)
EMUD_NCCL_UNSUPPORTED(ncclParamGet)
EMUD_NCCL_UNSUPPORTED(ncclParamGetI8)
EMUD_NCCL_UNSUPPORTED(ncclParamGetI16)
EMUD_NCCL_UNSUPPORTED(ncclParamGetI32)
EMUD_NCCL_UNSUPPORTED(ncclParamGetI64)
EMUD_NCCL_UNSUPPORTED(ncclParamGetU8)
EMUD_NCCL_UNSUPPORTED(ncclParamGetU16)
EMUD_NCCL_UNSUPPORTED(ncclParamGetU32)
EMUD_NCCL_UNSUPPORTED(ncclParamGetU64)
EMUD_NCCL_UNSUPPORTED(ncclParamGetStr)
EMUD_NCCL_UNSUPPORTED(ncclParamGetParameter)
EMUD_NCCL_UNSUPPORTED(ncclParamGetAllParameterKeys)
EMUD_NCCL_UNSUPPORTED(ncclParamDumpAll)
EMUD_NCCL_UNSUPPORTED(ncclPutSignal)
EMUD_NCCL_UNSUPPORTED(ncclSignal)
EMUD_NCCL_UNSUPPORTED(ncclWaitSignal)
#undef EMUD_NCCL_UNSUPPORTED

#endif
