// An all-to-all by GDA put over the MORI-shaped header of this directory
// (include/mori/cco/cco_scale_out.hpp, the fixture's mlx5 path), compiled
// with -I that include directory: each rank's block of kCtx waves (64
// lanes, a wave of gfx9) runs one context per wave (threadIdx.x /
// warpSize, MORI's warp), whose lane 0 puts a block to every peer on that
// context's queue pair (in two halves, each with a remote signal), quiets its queue pairs and
// waits for every peer's signal; the host checks every block received, a
// round at a time. Arguments: rounds (2), then "fork" to run the ranks as
// forked processes (MORI's harness shape; the digest is the threads').
// -DEMUD_TEST_GDA_NO_QUIET plants a store to a put's source before its
// quiet; -DEMUD_TEST_GDA_THREADS_ONLY leaves the fork mode out (the seed
// server runs programs that never fork).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"
#include "mori/cco/cco_scale_out.hpp"

using namespace mori::cco;

constexpr int kRanks = 4;
constexpr int kCtx = 2;
constexpr size_t kBytes = 1024;
constexpr size_t kWords = kBytes / sizeof(uint32_t);

#define CHECK(x)                                                          \
  do {                                                                    \
    if ((x) != 0) {                                                       \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

// word j of the block src sends dst on context c in round r
static uint32_t word(int src, int dst, int c, int r, size_t j) {
  return uint32_t(src) << 24 ^ uint32_t(dst) << 16 ^ uint32_t(c) << 12 ^ uint32_t(r) << 8 ^ uint32_t(j * 2654435761u);
}

__global__ void alltoall(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, int round) {
  using namespace mori::cco::testgda;
  const int ctx = threadIdx.x / warpSize, lane = threadIdx.x % warpSize;
  if (ctx >= kCtx || lane != 0) return;
  const int me = dc.rank, n = dc.worldSize;
  for (int i = 1; i < n; i++) {
    const int p = (me + i) % n;
    RdmaEndpointDevice* ep = &dc.ibgda.endpoints[p * dc.ibgda.numQpPerPe + ctx];
    // In two halves, each with its signal: two fetch-adds on the queue
    // before its quiet, whose old values land in one scratch word.
    for (uint64_t h = 0; h < kBytes; h += kBytes / 2)
      putSignal(ep, (uint64_t(me) * kCtx + ctx) * kBytes + h, recvWin->ibgdaWin.peerRkeys[p],
                (uint64_t(p) * kCtx + ctx) * kBytes + h, sendWin->ibgdaWin.lkey, kBytes / 2, me * kCtx + ctx,
                dc.resourceWindow_inlined.ibgdaWin.peerRkeys[p]);
  }
#ifdef EMUD_TEST_GDA_NO_QUIET
  // Planted: the source is overwritten before the quiet that says the
  // NIC has read it (the race detector reports the store and the NIC's
  // source read).
  uint32_t* src = reinterpret_cast<uint32_t*>(sendWin->winBase + (uint64_t(sendWin->lsaRank) * sendWin->stride4G << 32));
  src[((me + 1) % n * kCtx + ctx) * kWords] = 0;
#endif
  for (int i = 1; i < n; i++) quiet(&dc.ibgda.endpoints[((me + i) % n) * dc.ibgda.numQpPerPe + ctx]);
  for (int i = 1; i < n; i++) waitSignal(dc, ((me + i) % n) * kCtx + ctx, 2 * (round + 1));
}

static int rankMain(int rank, const ccoUniqueId& id, int rounds) {
  CHECK(hipSetDevice(rank));
  ccoComm* comm = nullptr;
  CHECK(ccoCommCreate(id, kRanks, rank, 1ull << 30, &comm));
  const size_t bytes = kRanks * kCtx * kBytes;
  void *send = nullptr, *recv = nullptr;
  CHECK(ccoMemAlloc(comm, bytes, &send));
  CHECK(ccoMemAlloc(comm, bytes, &recv));
  ccoWindow_t sendWin = nullptr, recvWin = nullptr;
  CHECK(ccoWindowRegister(comm, send, bytes, &sendWin));
  CHECK(ccoWindowRegister(comm, recv, bytes, &recvWin));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.gdaConnectionType = CCO_GDA_CONNECTION_FULL;
  reqs.gdaContextCount = kCtx;
  reqs.gdaSignalCount = kRanks * kCtx;
  reqs.gdaCounterCount = 0;
  reqs.gdaQueueDepth = 64;
  ccoDevComm dc{};
  CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  if (dc.gdaConnType != CCO_GDA_CONNECTION_FULL || dc.ibgda.numQpPerPe != kCtx || !dc.ibgda.endpoints) {
    std::printf("rank %d: no GDA (type %d, %d contexts)\n", rank, (int)dc.gdaConnType, dc.ibgda.numQpPerPe);
    return 1;
  }
  int errors = 0;
  std::vector<uint32_t> h(bytes / sizeof(uint32_t));
  for (int r = 0; r < rounds; r++) {
    for (int p = 0; p < kRanks; p++)
      for (int c = 0; c < kCtx; c++)
        for (size_t j = 0; j < kWords; j++) h[(p * kCtx + c) * kWords + j] = word(rank, p, c, r, j);
    CHECK(hipMemcpy(send, h.data(), bytes, hipMemcpyHostToDevice));
    CHECK(ccoBarrierAll(comm));
    alltoall<<<1, kCtx * 64>>>(dc, sendWin, recvWin, r);
    CHECK(hipDeviceSynchronize());
    CHECK(ccoBarrierAll(comm));
    CHECK(hipMemcpy(h.data(), recv, bytes, hipMemcpyDeviceToHost));
    for (int p = 0; p < kRanks; p++)
      for (int c = 0; c < kCtx && p != rank; c++)
        for (size_t j = 0; j < kWords; j++)
          if (h[(p * kCtx + c) * kWords + j] != word(p, rank, c, r, j)) errors++;
  }
  CHECK(ccoBarrierAll(comm));
  CHECK(ccoDevCommDestroy(comm, &dc));
  CHECK(ccoCommDestroy(comm));
  return errors;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  const bool forked = argc > 2 && !std::strcmp(argv[2], "fork");
  std::printf("header: %s\n", EMUD_TEST_MORI_HEADER);
  std::fflush(stdout);
  ccoUniqueId id;
  CHECK(ccoGetUniqueId(&id));
  std::vector<int> errors(kRanks);
#ifdef EMUD_TEST_GDA_THREADS_ONLY
  if (forked) return 2;  // built without fork: a program that forks has no seed form
#else
  if (forked) {
    std::vector<pid_t> kids;
    for (int r = 0; r < kRanks; r++) {
      pid_t pid = fork();
      if (pid < 0) return 3;
      if (pid == 0) {
        const int e = rankMain(r, id, rounds);
        std::fflush(stdout);
        _exit(e ? 1 : 0);
      }
      kids.push_back(pid);
    }
    for (int r = 0; r < kRanks; r++) {
      int status = 0;
      if (waitpid(kids[r], &status, 0) != kids[r] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) errors[r] = 1;
    }
  } else
#endif
  {
    std::vector<std::thread> ts;
    for (int r = 0; r < kRanks; r++) ts.emplace_back([&, r] { errors[r] = rankMain(r, id, rounds); });
    for (auto& t : ts) t.join();
  }
  int total = 0;
  for (int e : errors) total += e;
  if (total) {
    std::printf("mori gda: FAIL (%d)\n", total);
    return 1;
  }
  std::printf("mori gda: PASS\n");
  return 0;
}
