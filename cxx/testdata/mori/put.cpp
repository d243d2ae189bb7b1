// An all-to-all by put over the MORI-shaped header of this directory
// (include/mori/cco/cco.hpp), compiled with -I that include directory so
// emud c++ uses it instead of emud's own: lane t of each rank posts its
// block to peer (rank+1+t) mod n with a remote signal, raw packets in the
// ring and a doorbell store, for several rounds; each rank then checks
// every block it received. Prints which header it was compiled against.
// Arguments: rounds (3), then "same" for every lane on one queue, or
// "full" for lane 0 posting its block kFullReps times before its quiet:
// more than its ring holds, so it waits for the engine to free ring space
// (with -DEMUD_TEST_MORI_CAS_RESERVE, re-reading the write and read
// pointers in turn), or "quiet" for puts without signals that each lane
// quiets, the receivers reading after the host's synchronize and barrier
// (MORI's test_sdma_put: the quiet's drain of the read pointer is the
// only device-side edge). "fork" (after the mode, or alone after the rounds)
// runs the ranks as processes in MORI's fork harness shape: the unique id
// first, then one forked child per rank, the parent in waitpid; the
// digest is the threads' (capi/procs.c). "redev" makes and destroys a
// dev comm every round, as a leak checker does, and rank 0 prints how much
// device memory (hipMemGetInfo's free) each dev comm after the first kept.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

using namespace mori::cco;

// Which header the program was compiled against: this directory's names
// itself; a user's MORI is the path emud c++ found; else emud's own (the
// bench builds it against all three).
#if defined(EMUD_TEST_MORI_HEADER)
#define PUT_HEADER EMUD_TEST_MORI_HEADER
#elif defined(EMUD_MORI_HEADER)
#define PUT_HEADER EMUD_MORI_HEADER
#else
#define PUT_HEADER "emud's own"
#endif

constexpr int kRanks = 8;
constexpr size_t kBytes = 4096;
// 64-byte puts (a COPY and a signal) past the 256 KiB ring.
constexpr int kFullReps = 256 * 1024 / 64 + 100;

#define CHECK(x)                                                  \
  do {                                                            \
    if ((x) != 0) {                                               \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x); \
      std::exit(1);                                               \
    }                                                             \
  } while (0)

// same: every lane posts to the next rank on its queue 0 (block t of its
// send window to block t of the peer's receive window), so the lanes of one
// wave share one commit chain.
__global__ void alltoall(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, int round, int same) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int t = threadIdx.x;
  if (t >= n) return;
  if (same == 1) {
    const int peer = (me + 1) % n;
    sdma.put<ccoCoopThread, false, true>(peer, recvWin, t * kBytes, sendWin, t * kBytes, kBytes, 0);
    sdma.quiet(peer);
    sdma.waitSignal((me - 1 + n) % n, 0, (uint64_t)(round + 1) * n);
    return;
  }
  const int peer = (me + 1 + t) % n;
  if (same == 3) {  // "quiet": no signal; the receiver reads after the host's barrier
    sdma.put<ccoCoopThread, false, false>(peer, recvWin, me * kBytes, sendWin, peer * kBytes, kBytes, peer % nq);
    sdma.quiet(peer);
    return;
  }
  const int reps = same == 2 && t == 0 ? kFullReps : 1;  // "full": lane t receives from lane t of its sender
  for (int i = 0; i < reps; i++)
    sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * kBytes, sendWin, peer * kBytes, kBytes, peer % nq);
  sdma.quiet(peer);
  const int from = (me - 1 - t + 2 * n) % n;
  sdma.waitSignal(from, me % nq, ((uint64_t)round + 1) * reps);
}

uint32_t word(int src, int dst, int round, size_t i) { return (uint32_t)(src * 0x1000000 + dst * 0x10000 + round * 0x100) ^ (uint32_t)i; }

int rankMain(int rank, const ccoUniqueId& id, int rounds, int same, bool redev) {
  CHECK(hipSetDevice(rank));
  ccoComm* comm = nullptr;
  CHECK(ccoCommCreate(id, kRanks, rank, 0, &comm));
  void *send = nullptr, *recv = nullptr;
  CHECK(ccoMemAlloc(comm, kRanks * kBytes, &send));
  CHECK(ccoMemAlloc(comm, kRanks * kBytes, &recv));
  ccoWindow_t sw = nullptr, rw = nullptr;
  CHECK(ccoWindowRegister(comm, send, kRanks * kBytes, &sw));
  CHECK(ccoWindowRegister(comm, recv, kRanks * kBytes, &rw));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ccoDevComm dc;
  if (!redev) CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  std::vector<uint32_t> host(kRanks * kBytes / 4);
  int errors = 0;
  size_t freeAfterFirst = 0, freeNow = 0, total = 0;
  for (int round = 0; round < rounds; round++) {
    if (redev) CHECK(ccoDevCommCreate(comm, &reqs, &dc));
    for (int p = 0; p < kRanks; p++)
      for (size_t i = 0; i < kBytes / 4; i++) host[p * kBytes / 4 + i] = word(rank, p, round, i);
    CHECK(hipMemcpy(send, host.data(), kRanks * kBytes, hipMemcpyHostToDevice));
    CHECK(ccoBarrierAll(comm));
    alltoall<<<1, 64>>>(dc, sw, rw, redev ? 0 : round, same);  // a fresh dev comm's signals start at 0
    CHECK(hipDeviceSynchronize());
    CHECK(ccoBarrierAll(comm));
    CHECK(hipMemcpy(host.data(), recv, kRanks * kBytes, hipMemcpyDeviceToHost));
    for (int p = 0; p < kRanks; p++)
      for (size_t i = 0; i < kBytes / 4; i++) {
        const uint32_t want = same == 1 ? word((rank - 1 + kRanks) % kRanks, p, round, i) : word(p, rank, round, i);
        if (host[p * kBytes / 4 + i] != want) errors++;
      }
    if (redev) {
      CHECK(ccoDevCommDestroy(comm, &dc));
      CHECK(hipMemGetInfo(&freeNow, &total));
      if (round == 0) freeAfterFirst = freeNow;
    }
  }
  if (redev && rank == 0 && rounds > 1)
    std::printf("device memory kept per dev comm: %zu bytes\n", (freeAfterFirst - freeNow) / (rounds - 1));
  CHECK(ccoBarrierAll(comm));
  if (!redev) CHECK(ccoDevCommDestroy(comm, &dc));
  CHECK(ccoCommDestroy(comm));
  return errors;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  int same = 0;
  bool fork_ranks = false, redev = false;
  for (int i = 2; i < argc; i++) {
    if (!std::strcmp(argv[i], "same")) same = 1;
    if (!std::strcmp(argv[i], "full")) same = 2;
    if (!std::strcmp(argv[i], "quiet")) same = 3;
    if (!std::strcmp(argv[i], "fork")) fork_ranks = true;
    if (!std::strcmp(argv[i], "redev")) redev = true;
  }
  std::printf("header: %s\n", PUT_HEADER);
  std::fflush(stdout);
  ccoUniqueId id;
  CHECK(ccoGetUniqueId(&id));
  std::vector<int> errors(kRanks);
  if (fork_ranks) {
    // MORI's harness: a child per rank, its error count as its status.
    std::vector<pid_t> kids;
    for (int r = 0; r < kRanks; r++) {
      pid_t pid = fork();
      if (pid < 0) return 3;
      if (pid == 0) {
        const int e = rankMain(r, id, rounds, same, redev);
        std::fflush(stdout);
        _exit(e ? 1 : 0);
      }
      kids.push_back(pid);
    }
    for (int r = 0; r < kRanks; r++) {
      int status = 0;
      if (waitpid(kids[r], &status, 0) != kids[r] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::printf("mori put: rank %d failed (status %d)\n", r, status);
        errors[r] = 1;
      }
    }
  } else {
    std::vector<std::thread> ts;
    for (int r = 0; r < kRanks; r++) ts.emplace_back([&, r] { errors[r] = rankMain(r, id, rounds, same, redev); });
    for (auto& t : ts) t.join();
  }
  int total = 0;
  for (int e : errors) total += e;
  if (total) {
    std::printf("mori put: FAIL (%d wrong words)\n", total);
    return 1;
  }
  std::printf("mori put: PASS\n");
  return 0;
}
