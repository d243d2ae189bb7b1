// Ranks as forked processes, in the shape of MORI's test harness
// (tests/cpp/cco/cco_test_harness.hpp, fork mode): count the GPUs in the
// KFD topology, make the unique id and write it to a file, fork one
// child per GPU that reads the id from the file and runs its rank, and
// wait for them. emud runs the children on the one emulated node of this
// process (capi/procs.c); the digest equals thread_alltoall.cpp's, the
// same ranks as threads. "kill" makes rank 1 kill itself in the middle
// of its run (the others' report names it).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "alltoall_rank.hpp"

int main(int argc, char** argv) {
  const int nRanks = procs::sysfsGPUs();
  if (nRanks < 2) {
    std::printf("fork_alltoall: need at least 2 GPUs, found %d\n", nRanks);
    return 1;
  }
  const bool planted = procs::planted(argc, argv), kill = argc > 1 && !std::strcmp(argv[1], "kill");
  const char* tmp = std::getenv("TMPDIR");
  char uidPath[256];
  std::snprintf(uidPath, sizeof uidPath, "%s/procs-uid_%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
  mori::cco::ccoUniqueId uid;
  procs::uniqueId(&uid);
  FILE* f = std::fopen(uidPath, "wb");
  if (!f || std::fwrite(&uid, sizeof uid, 1, f) != 1) return 3;
  std::fclose(f);
  std::vector<pid_t> children;
  for (int r = 0; r < nRanks; r++) {
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      mori::cco::ccoUniqueId mine;
      FILE* in = nullptr;
      while (!(in = std::fopen(uidPath, "rb"))) usleep(10000);
      if (std::fread(&mine, sizeof mine, 1, in) != 1) _exit(3);
      std::fclose(in);
      if (kill && r == 1) {
        HIP_CHECK(hipSetDevice(r));
        raise(SIGKILL);
      }
      _exit(procs::runRank(r, nRanks, mine, planted) == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (int r = 0; r < nRanks; r++) {
    int status = 0;
    waitpid(children[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "fork_alltoall: rank %d failed (status %d)\n", r, status);
      failed++;
    }
  }
  unlink(uidPath);
  std::printf("fork_alltoall: %d/%d ranks passed\n", nRanks - failed, nRanks);
  return finish("fork_alltoall", failed);
}
