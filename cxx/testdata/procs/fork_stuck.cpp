// Two ranks as forked processes (MORI's fork harness shape) where rank 1
// never calls emud again: "lane" (the default) launches a kernel whose
// lane loops in its own code on a local it never changes (a volatile one,
// which the compiler keeps: no device memory, which a loop of volatile
// loads would poll, waiting for a write), "host" loops in its host code.
// Rank 0 waits for it in ccoBarrierAll. The coordinator's spin watch
// ends the run with a hang report naming rank 1's process, and both rank
// processes, rank 1 still in its loop and rank 0 in its call, exit with
// the run's status (cxx/procs_test.go TestForkStuckRank). Each rank
// prints its pid so the test can check that none is left.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "hip/hip_runtime.h"
#include "mori/cco/cco.hpp"

using namespace mori::cco;

__global__ void pollPlain(int* flag) {
  volatile int forever = 1;
  while (forever) {
  }
  *flag = 1;
}

int main(int argc, char** argv) {
  const bool host = argc > 1 && !std::strcmp(argv[1], "host");
  ccoUniqueId id;
  if (ccoGetUniqueId(&id) != 0) return 3;
  pid_t kids[2];
  for (int r = 0; r < 2; r++) {
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      ccoComm* comm = nullptr;
      if (hipSetDevice(r) != hipSuccess || ccoCommCreate(id, 2, r, 0, &comm) != 0) _exit(3);
      std::printf("rank %d: pid %d\n", r, (int)getpid());
      std::fflush(stdout);
      if (r == 1) {
        if (host) {
          volatile int forever = 1;
          while (forever) {
          }
        }
        int* flag = nullptr;
        if (hipMalloc(&flag, sizeof(int)) != hipSuccess || hipMemset(flag, 0, sizeof(int)) != hipSuccess) _exit(3);
        pollPlain<<<1, 1>>>(flag);
        (void)hipDeviceSynchronize();
      }
      _exit(ccoBarrierAll(comm) == 0 ? 0 : 1);
    }
    kids[r] = pid;
  }
  for (int r = 0; r < 2; r++) {
    int status = 0;
    waitpid(kids[r], &status, 0);
  }
  std::printf("fork_stuck: the ranks ended (not expected: rank 1 never does)\n");
  return 1;
}
