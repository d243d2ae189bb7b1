// MPI calls whose partner comes only after another rank's emud work, for
// the free sections' grace (capi/doc.go, "MPI and other blocking calls"):
// rank 0 sends to rank 1, makes a HIP call, then sends to rank 2, whose
// receive waits all that time. At the quiescent point where rank 0 and
// rank 1 are back at their HIP calls, rank 2's receive cannot return
// until rank 0 goes on: after EMUD_FREE_GRACE the others go on without
// it, with the warning that the run's order now depends on wall time.
// "mismatch" makes rank 0 alone call MPI_Barrier while the others wait
// for it in emud (ccoCommCreate): no call can return, a hang report.
// "spin": rank 1's MPI_Recv waits for rank 0's send, which comes after a
// kernel whose lane reads a word twice (its wait ends at the quiescent
// point that also releases rank 1's section): the run is not over there,
// the lane goes on, and the section is let in later (correct code, no
// hang, no warning).
#include <mpi.h>

#include "alltoall_rank.hpp"

__global__ void readTwice(int* word, int* out) {
  const int first = __hip_atomic_load(word, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
  const int second = __hip_atomic_load(word, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
  *out = first == second ? second : -1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  HIP_CHECK(hipSetDevice(rank));
  if (argc > 1 && !std::strcmp(argv[1], "mismatch")) {
    mori::cco::ccoUniqueId uid;
    if (rank == 0) procs::uniqueId(&uid);
    MPI_Bcast(&uid, sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) MPI_Barrier(MPI_COMM_WORLD);  // the bug: the others never make it
    procs::runRank(rank, world, uid, false);
    MPI_Finalize();
    return 0;
  }
  int* buf = nullptr;
  HIP_CHECK(hipMalloc(&buf, 64));
  int v = 0;
  if (argc > 1 && !std::strcmp(argv[1], "spin")) {
    if (rank == 0) {
      HIP_CHECK(hipMemset(buf, 0, 64));
      readTwice<<<1, 1>>>(buf, buf + 1);
      HIP_CHECK(hipDeviceSynchronize());
      HIP_CHECK(hipMemcpy(&v, buf + 1, sizeof v, hipMemcpyDeviceToHost));
      MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
      v = -2;
      MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    HIP_CHECK(hipFree(buf));
    MPI_Finalize();
    std::printf("rank %d: got %d\n", rank, v);
    return finish("mpi_late", v == 0 ? 0 : 1);
  }
  if (rank == 0) {
    v = 41;
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    HIP_CHECK(hipMemset(buf, 0, 64));
    v = 42;
    MPI_Send(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  } else if (rank <= 2) {
    MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    HIP_CHECK(hipMemset(buf, v, 64));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int want = rank == 0 ? 42 : rank <= 2 ? 40 + rank : 0;
  HIP_CHECK(hipFree(buf));
  MPI_Finalize();
  std::printf("rank %d: got %d\n", rank, v);
  return finish("mpi_late", v == want ? 0 : 1);
}
