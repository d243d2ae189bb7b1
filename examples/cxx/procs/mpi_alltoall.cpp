// Ranks started by mpirun (mpirun -np 4 with EMUD_NODE set): each process
// runs one rank and finds its rank and world size with MPI, as MORI's
// MORI_WITH_MPI tests do. Rank 0 makes the unique id and broadcasts it
// with MPI_Bcast; then the ranks run the all-to-all over ccoSdma on rank
// 0's emulated node and check the data. MPI_Init runs before the first HIP
// call, so its runtime threads exist before emud starts (they are not
// host threads: capi/doc.go). MPI_Bcast and MPI_Finalize block until the
// other ranks make theirs: each is a free section (capi/mpi.c), so the
// rank gives its turn up while it waits. "planted" plants
// alltoall_rank.hpp's bug; "kill" makes rank 1 kill itself after its
// first HIP call (the others' report names it).
#include <mpi.h>
#include <signal.h>

#include "alltoall_rank.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nRanks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nRanks);
  mori::cco::ccoUniqueId uid;
  if (rank == 0) procs::uniqueId(&uid);
  MPI_Bcast(&uid, sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rank == 1 && argc > 1 && !std::strcmp(argv[1], "kill")) {
    HIP_CHECK(hipSetDevice(rank));
    raise(SIGKILL);
  }
  const int errors = procs::runRank(rank, nRanks, uid, procs::planted(argc, argv));
  if (rank == 0) std::printf("mpi_alltoall: rank 0 done\n");
  MPI_Finalize();
  return finish("mpi_alltoall", errors);
}
