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
