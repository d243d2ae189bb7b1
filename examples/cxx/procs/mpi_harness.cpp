// A test harness in MPI mode, in the shape of MORI's (its cco test
// harness with MORI_WITH_MPI): run by mpirun -np N with EMUD_NODE set,
// each process finds its rank and the world size with MPI, rank 0 makes
// the unique id and broadcasts it, the ranks meet at MPI_Barrier, run the
// all-to-all, and gather the outcome with MPI: a token passed round the
// ring with MPI_Recv and MPI_Send (calls in a row outside emud, each
// waiting for the previous rank's), and an MPI_Allreduce that must agree
// with it; rank 0 prints the verdict, and all meet at MPI_Barrier and
// MPI_Finalize. Every blocking MPI call here is made after the first HIP
// call, in a free section (capi/mpi.c).
#include <mpi.h>

#include "alltoall_rank.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int devices = 0;
  HIP_CHECK(hipGetDeviceCount(&devices));
  if (devices < world) {
    if (rank == 0) std::printf("mpi_harness: %d ranks but %d GPUs\n", world, devices);
    MPI_Finalize();
    return 1;
  }
  HIP_CHECK(hipSetDevice(rank));
  mori::cco::ccoUniqueId uid;
  if (rank == 0) procs::uniqueId(&uid);
  MPI_Bcast(&uid, sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const int errors = procs::runRank(rank, world, uid, procs::planted(argc, argv));
  // The ring: rank 0 starts the token; each rank adds its failures
  // (0 or 1) and passes it on; it comes back to rank 0.
  const int failed = errors ? 1 : 0;
  int token = 0;
  if (rank == 0) {
    token = failed;
    MPI_Send(&token, 1, MPI_INT, 1 % world, 7, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, world - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    token += failed;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % world, 7, MPI_COMM_WORLD);
  }
  int total = 0;
  MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  int bad = 0;
  if (rank == 0) {
    if (token != total) {
      std::printf("mpi_harness: the ring counted %d failed ranks, MPI_Allreduce %d\n", token, total);
      bad = 1;
    }
    std::printf("=== %d/%d PASSED ===\n", world - total, world);
  }
  MPI_Finalize();
  return finish("mpi_harness", errors + bad);
}
