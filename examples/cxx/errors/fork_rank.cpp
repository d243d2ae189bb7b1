// A rank in a forked process: MORI's test harness forks one process per
// GPU, but emud emulates a job as the threads of one process. A child
// forked after the emulation started has no emulation of its own (of the
// Go runtime only the forking thread survives), so its first HIP or cco
// call says so and exits 1, instead of hanging or ending silently. The
// parent goes on (here it reports the child's status and exits 0).
#include <sys/wait.h>
#include <unistd.h>

#include "../common.hpp"

using namespace mori::cco;

int main() {
  ccoUniqueId id;
  CCO_CHECK(ccoGetUniqueId(&id));  // starts the emulation in this process
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
  return 0;
}
