// Two shapes that are correct on a GPU only because the lanes of a wave
// run in lock-step, over the MORI-shaped header of this directory (emud
// c++ compiles against it, found on -I). Four ranks, each one kernel per
// round, sending to the next rank.
//
// mixed: lanes 0..7 post, in one branch, to the next rank over two queues
//   (lane % 2); the header groups them by queue, one queue per round of
//   its loop, each round's leader reserving and ringing for its group.
//   The group walk reaches the header's one-line broadcast helper from two
//   places (the round's queue, the leader's reservation), so lanes must be
//   told apart by their call chain and the lanes of this round must finish
//   it before the others start the next. Then every lane quiets and waits
//   for the signals its rank's receiver counts.
// warp: lane 0 alone posts a warp-scope put on queue 1 with a local
//   signal; then the wave quiets at warp scope, lane q draining queue q.
//   Lane 1 must drain queue 1 after lane 0 has posted on it (the lanes
//   that skipped the put wait for it at its end), so after the quiet lane
//   0 finds the signal there without waiting for it.
//
// Arguments: the mode, then the rounds (2). Prints PASS or what failed.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

using namespace mori::cco;

constexpr int kRanks = 4;
constexpr int kLanes = 8;
constexpr size_t kBytes = 1024;

#define CHECK(x)                                                          \
  do {                                                                    \
    if ((x) != 0) {                                                       \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

__global__ void mixed(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, int round) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize;
  const int peer = (me + 1) % n, from = (me - 1 + n) % n;
  const int t = threadIdx.x;
  if (t < kLanes) sdma.put<ccoCoopThread, false, true>(peer, recvWin, t * kBytes, sendWin, t * kBytes, kBytes, t % 2);
  sdma.quiet(peer);
  if (t < 2) sdma.waitSignal(from, t, (uint64_t)(round + 1) * (kLanes / 2));
}

// out[round] = 1 when the signal was there right after the quiet.
__global__ void warp(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, uint64_t* out, int round) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize;
  const int peer = (me + 1) % n;
  sdma.put<ccoCoopWarp, true, false>(peer, recvWin, 0, sendWin, 0, kBytes, 1);
  sdma.quiet<ccoCoopWarp>(peer);
  if (threadIdx.x == 0) {
    const uint64_t got = __hip_atomic_load(dc.sdma.signalBuf + (uint32_t)me * dc.sdma.sdmaNumQueue + 1, __ATOMIC_RELAXED,
                                           __HIP_MEMORY_SCOPE_SYSTEM);
    out[round] = got == (uint64_t)round + 1;
  }
}

uint32_t word(int src, int round, size_t i) { return (uint32_t)(src * 0x1000000 + round * 0x100) ^ (uint32_t)i; }

int rankMain(int rank, const ccoUniqueId& id, bool isWarp, int rounds) {
  CHECK(hipSetDevice(rank));
  ccoComm* comm = nullptr;
  CHECK(ccoCommCreate(id, kRanks, rank, 0, &comm));
  const size_t bytes = kLanes * kBytes;
  void *send = nullptr, *recv = nullptr;
  CHECK(ccoMemAlloc(comm, bytes, &send));
  CHECK(ccoMemAlloc(comm, bytes, &recv));
  ccoWindow_t sw = nullptr, rw = nullptr;
  CHECK(ccoWindowRegister(comm, send, bytes, &sw));
  CHECK(ccoWindowRegister(comm, recv, bytes, &rw));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ccoDevComm dc;
  CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  if (dc.sdma.sdmaNumQueue < 2) {
    std::fprintf(stderr, "rank %d: %u SDMA queues, the test needs 2\n", rank, dc.sdma.sdmaNumQueue);
    std::exit(1);
  }
  uint64_t* out = nullptr;
  CHECK(hipMalloc((void**)&out, rounds * sizeof(uint64_t)));
  CHECK(hipMemset(out, 0, rounds * sizeof(uint64_t)));
  std::vector<uint32_t> host(bytes / 4);
  int errors = 0;
  for (int round = 0; round < rounds; round++) {
    for (size_t i = 0; i < host.size(); i++) host[i] = word(rank, round, i);
    CHECK(hipMemcpy(send, host.data(), bytes, hipMemcpyHostToDevice));
    CHECK(ccoBarrierAll(comm));
    if (isWarp)
      warp<<<1, 32>>>(dc, sw, rw, out, round);  // one wave, wave32 or wave64
    else
      mixed<<<1, 64>>>(dc, sw, rw, round);
    CHECK(hipDeviceSynchronize());
    CHECK(ccoBarrierAll(comm));
    CHECK(hipMemcpy(host.data(), recv, bytes, hipMemcpyDeviceToHost));
    const size_t words = (isWarp ? kBytes : bytes) / 4;
    for (size_t i = 0; i < words; i++)
      if (host[i] != word((rank - 1 + kRanks) % kRanks, round, i)) errors++;
  }
  if (isWarp) {
    std::vector<uint64_t> seen(rounds);
    CHECK(hipMemcpy(seen.data(), out, rounds * sizeof(uint64_t), hipMemcpyDeviceToHost));
    for (int r = 0; r < rounds; r++)
      if (seen[r] != 1) {
        std::printf("rank %d round %d: the signal was not there after quiet<ccoCoopWarp>\n", rank, r);
        errors++;
      }
  }
  CHECK(hipFree(out));
  CHECK(ccoBarrierAll(comm));
  CHECK(ccoDevCommDestroy(comm, &dc));
  CHECK(ccoCommDestroy(comm));
  return errors;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "mixed";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  if (mode != "mixed" && mode != "warp") {
    std::fprintf(stderr, "usage: lockstep mixed|warp [rounds]\n");
    return 1;
  }
  std::printf("header: %s\n", EMUD_TEST_MORI_HEADER);
  ccoUniqueId id;
  CHECK(ccoGetUniqueId(&id));
  std::vector<int> errors(kRanks);
  std::vector<std::thread> ts;
  for (int r = 0; r < kRanks; r++) ts.emplace_back([&, r] { errors[r] = rankMain(r, id, mode == "warp", rounds); });
  for (auto& t : ts) t.join();
  int total = 0;
  for (int e : errors) total += e;
  if (total) {
    std::printf("lockstep %s: FAIL (%d errors)\n", mode.c_str(), total);
    return 1;
  }
  std::printf("lockstep %s: PASS\n", mode.c_str());
  return 0;
}
