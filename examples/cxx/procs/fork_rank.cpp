// A rank in a forked process, forked after the first HIP call (the
// default) or before it ("early", the order of a harness that forks
// before it touches HIP): either way the child runs on the parent's
// emulated node (capi/procs.c), its call returns, and the parent's
// waitpid waits for it in virtual time. (Before ranks as processes, the
// child's first call said a forked child is not emulated and exited 1.)
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "../common.hpp"

using namespace mori::cco;

int main(int argc, char** argv) {
  const bool early = argc > 1 && std::strcmp(argv[1], "early") == 0;
  const bool nested = argc > 1 && std::strcmp(argv[1], "nested") == 0;
  ccoUniqueId id;
  if (!early) CCO_CHECK(ccoGetUniqueId(&id));  // starts the emulation in this process
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 3;
  }
  if (pid == 0) {
    HIP_CHECK(hipSetDevice(1));  // the forked rank's first call
    int dev = -1;
    HIP_CHECK(hipGetDevice(&dev));
    std::printf("fork_rank: the child's calls returned (device %d)\n", dev);
    std::fflush(stdout);
    if (nested) {
      const pid_t g = fork();
      if (g == 0) {
        HIP_CHECK(hipSetDevice(0));  // a rank's own child: no rank
        _exit(0);
      }
      int st = 0;
      waitpid(g, &st, 0);
      std::printf("fork_rank: the rank's own child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
      std::fflush(stdout);
    }
    _exit(dev == 1 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("fork_rank: the forked rank exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  if (early) CCO_CHECK(ccoGetUniqueId(&id));  // the parent's own calls go on
  return 0;
}
