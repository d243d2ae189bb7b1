// Helpers shared by emud's C++ examples: status checks, the data pattern
// every example sends, and the rank-thread harness in the shape of MORI's
// in-process multi-GPU tests (one host thread per rank, one unique id).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

#define HIP_CHECK(x)                                                                             \
  do {                                                                                           \
    hipError_t e_ = (x);                                                                         \
    if (e_ != hipSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, hipGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

#define CCO_CHECK(x)                                                           \
  do {                                                                         \
    int rc_ = (x);                                                             \
    if (rc_ != 0) {                                                            \
      std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, rc_); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// word i of the block rank src sends to rank dst: a splitmix64 hash, so
// a misplaced or stale block differs from what belongs there.
inline uint64_t pattern(int src, int dst, uint64_t i) {
  uint64_t z = (((uint64_t)src << 32) | (uint64_t)dst) * 0x9e3779b97f4a7c15ull + i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// runRanks starts one host thread per rank, as an in-process multi-GPU
// test does, and waits for them; body(rank, nRanks, id) returns the
// rank's error count.
template <class F>
int runRanks(int nRanks, F body) {
  mori::cco::ccoUniqueId id;
  CCO_CHECK(mori::cco::ccoGetUniqueId(&id));
  std::vector<int> errors(nRanks, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < nRanks; r++) threads.emplace_back([&, r] { errors[r] = body(r, nRanks, id); });
  for (auto& t : threads) t.join();
  int total = 0;
  for (int e : errors) total += e;
  return total;
}

inline int finish(const char* name, int errors) {
  if (errors == 0) {
    std::printf("%s: PASS\n", name);
    return 0;
  }
  std::printf("%s: FAIL (%d wrong words)\n", name, errors);
  return 1;
}

// Rank is one rank's side of a test: its comm, a send and a receive window
// of nRanks blocks of bytes each (send block p holds pattern(rank, p)),
// and a dev comm.
struct Rank {
  int rank = 0, nRanks = 0;
  size_t bytes = 0;
  mori::cco::ccoComm* comm = nullptr;
  void *send = nullptr, *recv = nullptr;
  mori::cco::ccoWindow_t sendWin = nullptr, recvWin = nullptr;
  mori::cco::ccoDevComm dc;

  Rank(int r, int n, const mori::cco::ccoUniqueId& id, size_t b, int queues = 0) : rank(r), nRanks(n), bytes(b) {
    using namespace mori::cco;
    HIP_CHECK(hipSetDevice(r));
    CCO_CHECK(ccoCommCreate(id, n, r, 0, &comm));
    CCO_CHECK(ccoMemAlloc(comm, n * b, &send));
    CCO_CHECK(ccoMemAlloc(comm, n * b, &recv));
    std::vector<uint64_t> host(n * b / 8);
    for (int p = 0; p < n; p++)
      for (size_t i = 0; i < b / 8; i++) host[p * b / 8 + i] = pattern(r, p, i);
    HIP_CHECK(hipMemcpy(send, host.data(), n * b, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(recv, 0, n * b));
    CCO_CHECK(ccoWindowRegister(comm, send, n * b, &sendWin));
    CCO_CHECK(ccoWindowRegister(comm, recv, n * b, &recvWin));
    ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
    reqs.sdmaQueueCount = queues;
    CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));
    CCO_CHECK(ccoBarrierAll(comm));
  }

  // check counts the words of receive block p that are not pattern(src, dst).
  int check(int p, int src, int dst, size_t off = 0, size_t n = 0) {
    if (n == 0) n = bytes;
    std::vector<uint64_t> got(n / 8);
    HIP_CHECK(hipMemcpy(got.data(), (char*)recv + p * bytes + off, n, hipMemcpyDeviceToHost));
    int bad = 0;
    for (size_t i = 0; i < n / 8; i++)
      if (got[i] != pattern(src, dst, off / 8 + i)) bad++;
    return bad;
  }

  void clear() {
    HIP_CHECK(hipMemset(recv, 0, nRanks * bytes));
    CCO_CHECK(mori::cco::ccoBarrierAll(comm));
  }

  ~Rank() {
    using namespace mori::cco;
    CCO_CHECK(ccoBarrierAll(comm));
    CCO_CHECK(ccoDevCommDestroy(comm, &dc));
    CCO_CHECK(ccoWindowDeregister(comm, recvWin));
    CCO_CHECK(ccoWindowDeregister(comm, sendWin));
    CCO_CHECK(ccoMemFree(comm, recv));
    CCO_CHECK(ccoMemFree(comm, send));
    CCO_CHECK(ccoCommDestroy(comm));
  }
};
