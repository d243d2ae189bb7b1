// Ranks started by mpirun (mpirun -np 4 with EMUD_NODE set): each process
// runs one rank and finds its rank and world size with MPI, as MORI's
// MORI_WITH_MPI tests do. Rank 0 makes the unique id and broadcasts it
// with MPI_Bcast; then the ranks run the all-to-all over ccoSdma on rank
// 0's emulated node and check the data. MPI_Init runs before the first HIP
// call, so its runtime threads exist before emud starts (they are not
// host threads: capi/doc.go). Partial: MPI_Finalize after the first HIP
// call blocks a rank in its own code while it holds its turn, so this
// run ends in a false hang report (spin) today; without it the
// all-to-all passes on 4 ranks with one digest.
#include <mpi.h>

#include "alltoall_rank.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nRanks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nRanks);
  mori::cco::ccoUniqueId uid;
  if (rank == 0) procs::uniqueId(&uid);
  MPI_Bcast(&uid, sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
  const int errors = procs::runRank(rank, nRanks, uid, procs::planted(argc, argv));
  if (rank == 0) std::printf("mpi_alltoall: rank 0 done\n");
  MPI_Finalize();
  return finish("mpi_alltoall", errors);
}
