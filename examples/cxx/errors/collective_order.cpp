// Collective host calls out of step: every rank must make the same
// collective calls (ccoCommCreate, ccoWindowRegister, ccoDevCommCreate,
// ccoBarrierAll) in the same order, as MORI's all-gathers require. Here
// rank 1 registers a window while rank 0 waits in ccoBarrierAll: the call
// that arrives second fails naming both (on MORI the all-gather would
// mismatch), and the program exits 1.
#include "../common.hpp"

using namespace mori::cco;

int rankMain(int rank, int nRanks, const ccoUniqueId& id) {
  HIP_CHECK(hipSetDevice(rank));
  ccoComm* comm = nullptr;
  CCO_CHECK(ccoCommCreate(id, nRanks, rank, 0, &comm));
  void* buf = nullptr;
  CCO_CHECK(ccoMemAlloc(comm, 4096, &buf));
  ccoWindow_t win;
  if (rank == 0) {
    CCO_CHECK(ccoBarrierAll(comm));
    CCO_CHECK(ccoWindowRegister(comm, buf, 4096, &win));
  } else {
    CCO_CHECK(ccoWindowRegister(comm, buf, 4096, &win));
    CCO_CHECK(ccoBarrierAll(comm));
  }
  std::printf("collective_order: rank %d went on (FAIL)\n", rank);
  return 1;
}

int main() { return finish("collective_order", runRanks(2, rankMain)); }
