// Ranks started apart by a per-rank launcher (torchrun's RANK and
// WORLD_SIZE; mpirun and srun give theirs): each process runs one rank.
// With EMUD_NODE naming a socket path, the processes share one emulated
// node (capi/procs.c): rank 0 is its coordinator. Rank 0 makes the
// unique id and publishes it in a file (as MORI's single-rank mode reads
// one); the others wait for the file.
#include <unistd.h>

#include "alltoall_rank.hpp"

int main(int argc, char** argv) {
  const char* r = std::getenv("RANK");
  const char* w = std::getenv("WORLD_SIZE");
  const char* uidPath = std::getenv("UID_FILE");
  if (!r || !w || !uidPath) {
    std::fprintf(stderr, "env_alltoall: set RANK, WORLD_SIZE and UID_FILE\n");
    return 3;
  }
  const int rank = std::atoi(r), nRanks = std::atoi(w);
  mori::cco::ccoUniqueId uid;
  if (rank == 0) {
    procs::uniqueId(&uid);
    std::string tmp = std::string(uidPath) + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(&uid, sizeof uid, 1, f) != 1) return 3;
    std::fclose(f);
    if (std::rename(tmp.c_str(), uidPath) != 0) return 3;
  } else {
    FILE* f = nullptr;
    for (int i = 0; i < 6000 && !(f = std::fopen(uidPath, "rb")); i++) usleep(10000);
    if (!f || std::fread(&uid, sizeof uid, 1, f) != 1) return 3;
    std::fclose(f);
  }
  const int errors = procs::runRank(rank, nRanks, uid, procs::planted(argc, argv));
  if (rank == 0) std::printf("env_alltoall: rank 0 done\n");
  return finish("env_alltoall", errors);
}
