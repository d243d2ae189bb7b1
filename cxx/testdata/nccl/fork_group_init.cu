// Ranks as processes, each making its own ncclCommInitRank between
// ncclGroupStart and ncclGroupEnd, as nccl-tests does under MPI even with
// one GPU a process: the group's lone init runs on the process's one
// thread (a forked rank is emulated with one host thread), then a sum
// over the ranks.
#include <cuda_runtime.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

static int rankMain(int r, int n, ncclUniqueId id) {
  if (cudaSetDevice(r) != cudaSuccess) return 1;
  ncclComm_t comm;
  if (ncclGroupStart() != ncclSuccess) return 2;
  if (ncclCommInitRank(&comm, n, id, r) != ncclSuccess) return 3;
  if (ncclGroupEnd() != ncclSuccess || comm == nullptr) return 4;
  float* d = nullptr;
  float v = (float)(r + 1), h = 0;
  if (cudaMalloc((void**)&d, 2 * sizeof(float)) != cudaSuccess) return 5;
  cudaMemcpy(d, &v, sizeof v, cudaMemcpyHostToDevice);
  if (ncclAllReduce(d, d + 1, 1, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess) return 6;
  cudaMemcpy(&h, d + 1, sizeof h, cudaMemcpyDeviceToHost);
  ncclCommDestroy(comm);
  return h == (float)(n * (n + 1) / 2) ? 0 : 7;
}

int main() {
  int n = 0;
  cudaGetDeviceCount(&n);
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return 1;
  for (int r = 0; r < n; r++)
    if (fork() == 0) _exit(rankMain(r, n, id));
  int bad = 0;
  for (int r = 0; r < n; r++) {
    int st = 0;
    wait(&st);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      bad++;
      std::printf("a rank ended with %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
  }
  std::printf("fork_group_init %d ranks: %d failed\n", n, bad);
  return bad != 0;
}
