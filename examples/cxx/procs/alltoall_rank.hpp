// One rank of an all-to-all by ccoSdma put (the shape of
// examples/cxx/alltoall_put.cpp), shared by fork_alltoall.cpp (ranks as
// forked processes, MORI's harness) and thread_alltoall.cpp (ranks as
// threads): every call and device call of a rank is made from this file,
// so the two programs give the emulator the same calls at the same
// lines, and the same seed must give the same digest.
//
// "planted" plants a bug across ranks: each lane, after its first
// round, zeroes the signal slot its peer's signals count in, then waits
// for the running total 2 after a second round; the reset erased a
// count, so the wait hangs and the report names the lane's store.
#pragma once
#include <cstring>

#include "../common.hpp"

namespace procs {

using namespace mori::cco;

constexpr size_t kBytes = 16 << 10;

__global__ void alltoall(ccoDevComm dc, ccoWindow_t sendWin, ccoWindow_t recvWin, size_t bytes, int planted) {
  ccoSdma sdma(dc);
  const int me = dc.lsaRank, n = dc.lsaSize, nq = (int)dc.sdma.sdmaNumQueue;
  const int t = threadIdx.x;
  if (t >= n) return;
  const int peer = (me + 1 + t) % n;
  if (planted) {
    sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
    sdma.waitSignal(peer, 0, 1);
    sdma.quiet(peer);
    dc.sdma.signalBuf[peer * nq] = 0;  // the bug: the slot keeps a running total
    sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, 0);
    sdma.waitSignal(peer, 0, 2);
    sdma.quiet(peer);
    return;
  }
  sdma.put<ccoCoopThread, false, true>(peer, recvWin, me * bytes, sendWin, peer * bytes, bytes, peer % nq);
  sdma.quiet(peer);
  sdma.waitSignal(peer, me % nq, 1);
}

// uniqueId is the harness's ccoGetUniqueId, here so both programs make it
// at one line.
inline void uniqueId(ccoUniqueId* id) { CCO_CHECK(ccoGetUniqueId(id)); }

// runRank is one rank: its error count (0: every block arrived). Its
// setup and teardown are common.hpp's Rank, the same code in every
// program that includes this file.
inline int runRank(int rank, int nRanks, const ccoUniqueId& id, bool planted) {
  int errors = 0;
  {
    Rank r(rank, nRanks, id, kBytes);
    // The launch by macro: emud c++ rewrites <<<>>> in the file it compiles, not in headers.
    hipLaunchKernelGGL(alltoall, dim3(1), dim3(nRanks), 0, 0, r.dc, r.sendWin, r.recvWin, kBytes, planted ? 1 : 0);
    HIP_CHECK(hipDeviceSynchronize());
    for (int p = 0; p < nRanks; p++)
      if (p != rank) errors += r.check(p, p, rank);
  }  // ~Rank: a barrier, then the dev comm, windows, memory and comm go
  std::printf("rank %d: %d errors\n", rank, errors);
  std::fflush(stdout);
  return errors;
}

// sysfsGPUs counts GPUs as MORI's harness does: the KFD topology's
// nodes, in order until one is missing, whose gpu_id is not 0.
inline int sysfsGPUs() {
  int n = 0;
  for (int i = 0; i < 64; i++) {
    char path[128];
    std::snprintf(path, sizeof path, "/sys/class/kfd/kfd/topology/nodes/%d/gpu_id", i);
    FILE* f = std::fopen(path, "r");
    if (!f) break;
    unsigned long id = 0;
    if (std::fscanf(f, "%lu", &id) == 1 && id != 0) n++;
    std::fclose(f);
  }
  return n;
}

// planted says whether argv asks for the planted bug.
inline bool planted(int argc, char** argv) {
  for (int i = 1; i < argc; i++)
    if (!std::strcmp(argv[i], "planted")) return true;
  return false;
}

}  // namespace procs
