// A rank in a forked process: MORI's test harness forks one process per
// GPU, but emud emulates a job as the threads of one process. A forked
// child has no emulation of its own (emud's runtime starts when the
// program loads, and of its threads only the forking one survives a
// fork), so its first HIP or cco call says so and exits 1, instead of
// hanging or ending silently, whether the parent forked after its first
// HIP call (the default) or before it ("early", the order of MORI's
// harness). The parent goes on (here it reports the child's status, makes
// a call of its own and exits 0).
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

int main(int argc, char** argv) {
  const bool early = argc > 1 && std::strcmp(argv[1], "early") == 0;
  ccoUniqueId id;
  if (!early) CCO_CHECK(ccoGetUniqueId(&id));  // starts the emulation in this process
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 3;
  }
  if (pid == 0) {
    HIP_CHECK(hipSetDevice(1));  // the forked rank's first call
    std::printf("fork_rank: the child's call returned (FAIL)\n");
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("fork_rank: the forked rank exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  if (early) CCO_CHECK(ccoGetUniqueId(&id));  // the parent's emulation works
  return 0;
}
