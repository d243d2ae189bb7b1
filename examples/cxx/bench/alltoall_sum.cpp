// The Go alltoall scenario's shape in C++ (8 ranks, 64 KiB a pair, one
// lane per peer putting its block with a remote signal, quieting the peer
// and waiting for the peer's signal), for `emud bench`'s per-seed row
// (bench/cxx.go): alltoall_put.cpp's kernel, with a host check that does
// the Go scenario's kind of work. The Go seed checks each received block
// by a word-wise block hash (internal/blocksum) against the pattern's;
// this program reads each received word once, compares it with the
// pattern and folds it into an 8-lane word-wise hash of the same kind
// (its per-rank figure is printed, so a record shows the bytes), where
// alltoall_put.cpp also runs a byte-wise FNV-1a over the same 4 MiB (one
// multiply per byte: 4.7 ms a seed natively, more than a whole Go seed).
//
// What still differs from the Go seed, all of it more work on this side:
// the Go send windows keep their pattern from the seed before (a kept
// mapping, engine.Memory.Prefill) and the Go check hashes the bytes as
// the COPY lands them (lsa.Space.LandedSum) against a cached sum, while
// here every seed fills a host buffer with the pattern, copies it to the
// device (hipMemcpy), copies the received blocks back and hashes them:
// four more passes over each rank's 512 KiB, instrumented (emud c++'s
// default), in a program whose eight ranks are host threads.
//
// argv[1] picks a part, so the bench can tell the parts of a seed apart:
//   (none)   the whole program;
//   nohost   the same emulation without the host's fill and check loops
//            (the copies to and from the device stay; the send buffer is
//            zeroed by memset instead of filled);
//   threads  eight rank threads started and joined, no emud call;
//   empty    main returns at once.
#include <cstring>
#include <memory>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr size_t kBytes = 64 << 10;

__global__ void alltoallSum(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int t = threadIdx.x;
  if (t >= n) return;
  const int peer = (me + 1 + t) % n;
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, peer % nq);
  sdma.quiet(peer);
  sdma.waitSignal(peer, me % nq, 1);
}

bool hostWork = true;
uint64_t sums[kRanks];

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  HIP_CHECK(hipSetDevice(rank));
  ccoComm* comm = nullptr;
  CCO_CHECK(ccoCommCreate(id, nRanks, rank, 0, &comm));
  const size_t span = nRanks * kBytes, words = kBytes / 8;
  void *send = nullptr, *recv = nullptr;
  CCO_CHECK(ccoMemAlloc(comm, span, &send));
  CCO_CHECK(ccoMemAlloc(comm, span, &recv));
  // Not a std::vector: its zeroing would be a third instrumented pass
  // over the buffer, which the fill overwrites.
  std::unique_ptr<uint64_t[]> host(new uint64_t[span / 8]);
  if (hostWork) {
    for (int p = 0; p < nRanks; p++)
      for (size_t i = 0; i < words; i++) host[p * words + i] = pattern(rank, p, i);
  } else {
    std::memset(host.get(), 0, span);
  }
  HIP_CHECK(hipMemcpy(send, host.get(), span, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(recv, 0, span));
  ccoWindow_t sendWin, recvWin;
  CCO_CHECK(ccoWindowRegister(comm, send, span, &sendWin));
  CCO_CHECK(ccoWindowRegister(comm, recv, span, &recvWin));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ccoDevComm dc;
  CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));
  CCO_CHECK(ccoBarrierAll(comm));

  alltoallSum<<<1, kRanks>>>(dc, sendWin, recvWin, kBytes);
  HIP_CHECK(hipDeviceSynchronize());

  HIP_CHECK(hipMemcpy(host.get(), recv, span, hipMemcpyDeviceToHost));
  int errors = 0;
  if (hostWork) {
    // 8 lanes, each word xored in, multiplied and rotated (internal/blocksum's
    // step), so that the loop is not one chain of multiplies.
    uint64_t s[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int p = 0; p < nRanks; p++) {
      const uint64_t* b = host.get() + p * words;
      for (size_t i = 0; i < words; i += 8)
        for (int l = 0; l < 8; l++) {
          const uint64_t w = b[i + l];
          errors += w != pattern(p, rank, i + l);
          s[l] = rotl((s[l] ^ w) * 0xc2b2ae3d27d4eb4full, 31);
        }
    }
    uint64_t h = 0;
    for (int l = 0; l < 8; l++) h = rotl(h ^ s[l], 27) * 0x9e3779b97f4a7c15ull;
    sums[rank] = h;
  }
  CCO_CHECK(ccoBarrierAll(comm));
  CCO_CHECK(ccoDevCommDestroy(comm, &dc));
  CCO_CHECK(ccoWindowDeregister(comm, recvWin));
  CCO_CHECK(ccoWindowDeregister(comm, sendWin));
  CCO_CHECK(ccoMemFree(comm, recv));
  CCO_CHECK(ccoMemFree(comm, send));
  CCO_CHECK(ccoCommDestroy(comm));
  return errors;
}

int main(int argc, char** argv) {
  const char* part = argc > 1 ? argv[1] : "";
  if (!std::strcmp(part, "empty")) return 0;
  if (!std::strcmp(part, "threads")) {
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; r++) threads.emplace_back([] {});
    for (auto& t : threads) t.join();
    return 0;
  }
  if (*part && std::strcmp(part, "nohost") != 0) {
    std::fprintf(stderr, "alltoall_sum: unknown part %s (nohost, threads or empty)\n", part);
    return 2;
  }
  hostWork = *part == 0;
  int n = 0;
  HIP_CHECK(hipGetDeviceCount(&n));
  if (n < kRanks) {
    std::printf("alltoall_sum: SKIP (%d GPUs, need %d)\n", n, kRanks);
    return 0;
  }
  const int errors = runRanks(kRanks, rankMain);
  if (hostWork)
    for (int r = 0; r < kRanks; r++) std::printf("rank %d received sum %016llx\n", r, (unsigned long long)sums[r]);
  return finish("alltoall_sum", errors);
}
