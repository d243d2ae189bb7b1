// A queue leak across re-created comms: each round makes a one-rank comm
// whose dev comm asks for 4 SDMA queues (all loopback, so all on GPU 0's
// engine 0, as MORI's anvil places loopback queues on gfx950), runs a
// kernel over them and forgets ccoCommDestroy. The comm owns its queues,
// so the second round's comm is made beside a live one (a warning on
// stderr says it may be a leak) and the third overflows engine 0's cap of
// 8 queues: ccoDevCommCreate's queue creation is refused, naming the
// engine, its cap and the live comms that hold it, and the process exits
// 1, as MORI's does when KFD refuses a queue. "fixed" destroys each comm
// and runs all rounds.
#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

constexpr int kQueues = 4, kRounds = 6;
constexpr size_t kBytes = 4096;

__global__ void loopback(ccoDevComm dc, ccoWindow_t win) {
  ccoSdma sdma(dc);
  const int q = threadIdx.x;  // one lane per queue
  sdma.put<ccoCoopThread>(0, win, (kQueues + q) * kBytes, win, q * kBytes, kBytes, q);
  sdma.quiet(0);
}

int main(int argc, char** argv) {
  const bool fixed = argc > 1 && std::strcmp(argv[1], "fixed") == 0;
  HIP_CHECK(hipSetDevice(0));
  for (int round = 0; round < kRounds; round++) {
    ccoUniqueId id;
    CCO_CHECK(ccoGetUniqueId(&id));
    ccoComm* comm = nullptr;
    CCO_CHECK(ccoCommCreate(id, 1, 0, 0, &comm));
    ccoWindow_t win = nullptr;
    void* buf = nullptr;
    CCO_CHECK(ccoWindowRegister(comm, 2 * kQueues * kBytes, &win, &buf));
    ccoDevCommRequirements reqs = CCO_DEV_COMM_REQUIREMENTS_INITIALIZER;
    reqs.sdmaQueueCount = kQueues;
    ccoDevComm dc;
    CCO_CHECK(ccoDevCommCreate(comm, &reqs, &dc));
    loopback<<<1, kQueues>>>(dc, win);
    HIP_CHECK(hipDeviceSynchronize());
    std::printf("queue_leak: round %d done\n", round);
    if (fixed) {
      CCO_CHECK(ccoDevCommDestroy(comm, &dc));
      CCO_CHECK(ccoWindowDeregister(comm, win));
      CCO_CHECK(ccoMemFree(comm, buf));
      CCO_CHECK(ccoCommDestroy(comm));
    }
  }
  std::printf("queue_leak: %d rounds: PASS\n", kRounds);
  return 0;
}
