// LSA barriers between kernels of different ranks (ccoLsaBarrierSession),
// with no host barrier between ccoDevCommCreate and the launches: dev comm
// creation is collective, so every rank's barrier slots exist when a
// kernel arrives.
//   1. Visibility, at block, warp and thread scope (one slot each): each
//      round a rank writes a word into its window, syncs, reads every
//      peer's word through ccoGetLsaPeerPtr and checks it, and syncs again
//      before the next round overwrites it.
//   2. An all-reduce: every block of every rank sums its share of the
//      ranks' vectors through peer pointers and writes the sum into every
//      rank's result, between two syncs on its own slot.
//   3. Epochs carry over: the visibility kernel again on its slot, a
//      second launch continuing the round numbers; then the slot's epoch,
//      read where MORI keeps it (resourceWindow_inlined + bufOffset).
//   4. A timeout: the last rank opens no session; the others' sync with a
//      timeout of 500 M cycles (about 208 ms, more than the emulator's
//      100 ms progress watchdog) returns 1, and the run goes on.
//   5. The hybrid barrier's LSA half (reqs.barrierCount): the visibility
//      kernel on dc.hybridLsaBarrier, whose epochs are its own; the rail
//      GDA handles are disabled on one node, and dc.resourceWindow holds
//      what resourceWindow_inlined does.
//   6. ccoMemAlloc of 0 bytes gives nullptr; a freed slot is reused.
#include "common.hpp"

using namespace mori::cco;

constexpr int kRanks = 8;
constexpr int kRounds = 16;
constexpr int kBlocks = 4, kThreads = 128;
constexpr size_t kElems = 2048;
constexpr uint32_t kSlots = kBlocks + 4;  // all-reduce blocks, then scopes and the timeout
constexpr int kHybrid = 2;                 // hybrid barrier slots

__device__ uint32_t cookie(uint32_t round, int rank) { return round * 1000003u + (uint32_t)rank; }

template <typename Coop>
__global__ void visibility(ccoDevComm dc, ccoWindow_t win, uint32_t slot, uint32_t first, int* errors,
                           bool hybrid = false) {
  Coop g;
  ccoLsaBarrierSession<Coop> bar(g, &dc, ccoTeamLsa(dc), hybrid ? dc.hybridLsaBarrier : dc.lsaBarrier, slot);
  uint32_t* mine = static_cast<uint32_t*>(ccoGetLocalPtr(win, slot * 64));
  int bad = 0;
  for (uint32_t r = first; r < first + kRounds; r++) {
    if (g.thread_rank() == 0) __hip_atomic_store(mine, cookie(r, dc.lsaRank), __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
    bar.sync(g);
    for (int p = g.thread_rank(); p < dc.lsaSize; p += g.size()) {
      const uint32_t* theirs = static_cast<const uint32_t*>(ccoGetLsaPeerPtr(win, p, slot * 64));
      if (__hip_atomic_load(theirs, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) != cookie(r, p)) bad++;
    }
    bar.sync(g);
  }
  if (bad) atomicAdd(errors, bad);
}

__global__ void allreduce(ccoDevComm dc, ccoWindow_t in, ccoWindow_t out, size_t n) {
  ccoCoopBlock g;
  ccoLsaBarrierSession<ccoCoopBlock> bar(g, &dc, ccoTeamLsa(dc), dc.lsaBarrier, blockIdx.x);
  bar.sync(g);  // every rank's input is written
  // rank r sums the elements i ≡ r (mod lsaSize): each is written by one lane of one rank
  const size_t step = (size_t)gridDim.x * blockDim.x * dc.lsaSize;
  for (size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * dc.lsaSize + dc.lsaRank; i < n; i += step) {
    float v = 0;
    for (int p = 0; p < dc.lsaSize; p++) v += static_cast<const float*>(ccoGetLsaPeerPtr(in, p))[i];
    for (int p = 0; p < dc.lsaSize; p++) static_cast<float*>(ccoGetLsaPeerPtr(out, p))[i] = v;
  }
  bar.sync(g);  // every rank's result is complete
}

// epochOf reads a slot's epoch where MORI keeps it: the dev comm's
// resource window, this rank's slice, lsaBarrier.bufOffset.
__global__ void epochOf(ccoDevComm dc, uint32_t slot, uint32_t* out, bool hybrid = false) {
  const ccoWindowDevice& rw = dc.resourceWindow_inlined;
  const char* base = rw.winBase + ((uint64_t)dc.lsaRank * rw.stride4G << 32);
  const ccoLsaBarrierHandle& h = hybrid ? dc.hybridLsaBarrier : dc.lsaBarrier;
  *out = reinterpret_cast<const uint32_t*>(base + h.bufOffset)[slot];
}

__global__ void timeout(ccoDevComm dc, uint32_t slot, int skip, int* rc) {
  ccoCoopThread g;
  if (dc.lsaRank == skip) return;
  ccoLsaBarrierSession<ccoCoopThread> bar(g, &dc, ccoTeamLsa(dc), dc.lsaBarrier, slot);
  *rc = bar.sync(g, 500ull * 1000 * 1000);
}

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  HIP_CHECK(hipSetDevice(rank));
  ccoComm* comm = nullptr;
  CCO_CHECK(ccoCommCreate(id, nRanks, rank, 0, &comm));
  void *cookies = nullptr, *in = nullptr, *out = nullptr;
  CCO_CHECK(ccoMemAlloc(comm, 4096, &cookies));
  CCO_CHECK(ccoMemAlloc(comm, kElems * sizeof(float), &in));
  CCO_CHECK(ccoMemAlloc(comm, kElems * sizeof(float), &out));
  std::vector<float> host(kElems);
  for (size_t i = 0; i < kElems; i++) host[i] = (float)(rank + 1) * (float)(i % 7);
  HIP_CHECK(hipMemcpy(in, host.data(), kElems * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(out, 0, kElems * sizeof(float)));
  HIP_CHECK(hipMemset(cookies, 0, 4096));
  ccoWindow_t cookieWin, inWin, outWin;
  CCO_CHECK(ccoWindowRegister(comm, cookies, 4096, &cookieWin));
  CCO_CHECK(ccoWindowRegister(comm, in, kElems * sizeof(float), &inWin));
  CCO_CHECK(ccoWindowRegister(comm, out, kElems * sizeof(float), &outWin));
  ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.gdaConnectionType = CCO_GDA_CONNECTION_NONE;
  reqs.lsaBarrierCount = kSlots;
  reqs.barrierCount = kHybrid;
  reqs.railGdaBarrierCount = 1;  // crosses nodes: disabled on one
  ccoDevComm dc;
  CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));  // collective: no ccoBarrierAll needed before the kernels

  int* errors = nullptr;
  HIP_CHECK(hipMalloc(&errors, 4 * sizeof(int)));
  HIP_CHECK(hipMemset(errors, 0, 4 * sizeof(int)));
  int bad = 0;
  if (dc.lsaBarrier.nBarriers != (int)kSlots) {
    std::printf("rank %d: lsaBarrier has %d slots, want %u\n", rank, dc.lsaBarrier.nBarriers, kSlots);
    bad++;
  }
  const ccoTeam lsa = ccoTeamLsa(dc), world = ccoTeamWorld(dc);
  if (lsa.nRanks != nRanks || lsa.rank != rank || world.nRanks != nRanks || ccoTeamRankToWorld(dc, lsa, 3) != 3) {
    std::printf("rank %d: teams (%d,%d,%d) (%d,%d,%d)\n", rank, lsa.nRanks, lsa.rank, lsa.stride, world.nRanks,
                world.rank, world.stride);
    bad++;
  }

  // 1. visibility at three scopes
  visibility<ccoCoopBlock><<<1, kThreads>>>(dc, cookieWin, kBlocks + 0, 1, errors);
  visibility<ccoCoopWarp><<<1, 64>>>(dc, cookieWin, kBlocks + 1, 1, errors);
  visibility<ccoCoopThread><<<1, 1>>>(dc, cookieWin, kBlocks + 2, 1, errors);
  // 2. the all-reduce, one slot per block
  allreduce<<<kBlocks, kThreads>>>(dc, inWin, outWin, kElems);
  // 3. the block-scope slot again: its epoch continues from launch 1
  visibility<ccoCoopBlock><<<1, kThreads>>>(dc, cookieWin, kBlocks + 0, 1 + kRounds, errors);
  HIP_CHECK(hipDeviceSynchronize());
  epochOf<<<1, 1>>>(dc, kBlocks + 0, (uint32_t*)(errors + 2));
  // 4. the last rank skips the barrier: the others time out
  timeout<<<1, 1>>>(dc, kBlocks + 3, nRanks - 1, errors + 1);
  HIP_CHECK(hipDeviceSynchronize());
  // 5. the hybrid barrier's LSA half, slot 1
  visibility<ccoCoopWarp><<<1, 64>>>(dc, cookieWin, 1, 1, errors, true);
  HIP_CHECK(hipDeviceSynchronize());
  epochOf<<<1, 1>>>(dc, 1, (uint32_t*)(errors + 3), true);
  if (dc.hybridLsaBarrier.nBarriers != kHybrid || dc.hybridLsaBarrier.bufOffset == dc.lsaBarrier.bufOffset ||
      dc.railGdaBarrier.nBarriers != 0 || dc.hybridRailGdaBarrier.nBarriers != 0) {
    std::printf("rank %d: hybrid handle {%u, %d}, rail %d, hybrid rail %d\n", rank, dc.hybridLsaBarrier.bufOffset,
                dc.hybridLsaBarrier.nBarriers, dc.railGdaBarrier.nBarriers, dc.hybridRailGdaBarrier.nBarriers);
    bad++;
  }
  ccoWindowDevice rw{};
  if (!dc.resourceWindow) {
    std::printf("rank %d: no resourceWindow\n", rank);
    bad++;
  } else {
    HIP_CHECK(hipMemcpy(&rw, dc.resourceWindow, sizeof rw, hipMemcpyDeviceToHost));
    if (rw.winBase != dc.resourceWindow_inlined.winBase || rw.stride4G != dc.resourceWindow_inlined.stride4G ||
        rw.lsaRank != dc.lsaRank) {
      std::printf("rank %d: resourceWindow {%p, %u, %d} is not resourceWindow_inlined\n", rank, (void*)rw.winBase,
                  rw.stride4G, rw.lsaRank);
      bad++;
    }
  }

  int got[4] = {0, 0, 0, 0};
  HIP_CHECK(hipMemcpy(got, errors, sizeof got, hipMemcpyDeviceToHost));
  if (got[0] != 0) std::printf("rank %d: %d peer words wrong after a sync\n", rank, got[0]);
  bad += got[0];
  const int wantRc = rank == nRanks - 1 ? 0 : 1;
  if (got[1] != wantRc) {
    std::printf("rank %d: timed sync returned %d, want %d\n", rank, got[1], wantRc);
    bad++;
  }
  if (got[2] != 4 * kRounds) {  // two launches of kRounds rounds, two syncs each
    std::printf("rank %d: slot %d's epoch is %d, want %d\n", rank, kBlocks, got[2], 4 * kRounds);
    bad++;
  }
  if (got[3] != 2 * kRounds) {  // one launch on hybrid slot 1
    std::printf("rank %d: hybrid slot 1's epoch is %d, want %d\n", rank, got[3], 2 * kRounds);
    bad++;
  }
  HIP_CHECK(hipMemcpy(host.data(), out, kElems * sizeof(float), hipMemcpyDeviceToHost));
  for (size_t i = 0; i < kElems; i++)
    if (host[i] != (float)(nRanks * (nRanks + 1) / 2) * (float)(i % 7)) bad++;

  // 6. allocator edges, as MORI's: 0 bytes is nullptr, a freed slot comes back
  void* z = &z;
  CCO_CHECK(ccoMemAlloc(comm, 0, &z));
  void *a = nullptr, *b = nullptr;
  CCO_CHECK(ccoMemAlloc(comm, 8192, &a));
  CCO_CHECK(ccoMemFree(comm, a));
  CCO_CHECK(ccoMemAlloc(comm, 8192, &b));
  if (z != nullptr || a != b) {
    std::printf("rank %d: 0-byte alloc %p, reuse %p then %p\n", rank, z, a, b);
    bad++;
  }
  CCO_CHECK(ccoMemFree(comm, b));

  CCO_CHECK(ccoBarrierAll(comm));
  HIP_CHECK(hipFree(errors));
  CCO_CHECK(ccoDevCommDestroy(comm, &dc));
  CCO_CHECK(ccoWindowDeregister(comm, outWin));
  CCO_CHECK(ccoWindowDeregister(comm, inWin));
  CCO_CHECK(ccoWindowDeregister(comm, cookieWin));
  CCO_CHECK(ccoMemFree(comm, out));
  CCO_CHECK(ccoMemFree(comm, in));
  CCO_CHECK(ccoMemFree(comm, cookies));
  CCO_CHECK(ccoCommDestroy(comm));
  return bad;
}

int main() { return finish("lsa_barrier", runRanks(kRanks, rankMain)); }
