// Many lanes making many device calls, with the ranks as threads or as
// forked processes (capi/procs.c: a forked rank's lane resumes through
// its process's shared-memory channel). Each of 4 ranks runs 2 blocks of
// 128 lanes (2 waves each); every lane takes a ticket from an atomic
// counter in each of its rounds, so what it sums depends on the order the
// simulator ran the lanes in, and makes a ballot, a shuffle, an
// __activemask and a __syncthreads in each round: 5 device calls a round,
// about 25,600 a rank. Each rank prints its sum and its tickets; the test
// (cxx/procs_test.go TestForkLanesChannel) holds that the processes print
// what the threads print and give their digest.
//
// Usage: fork_lanes threads|fork [die|trap]. With "die", rank 1's lane 133
// (block 1, wave 0) calls _exit(3) in its 4th round, while the coordinator
// waits for its next device call; with "trap" it calls __builtin_trap()
// there instead.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "hip/hip_runtime.h"

constexpr int kRanks = 4, kBlocks = 2, kLanes = 128, kRounds = 20, kDieLane = 133;

enum { kNone, kDie, kTrap };

__global__ void churn(unsigned long long* sum, unsigned* tickets, int end) {
  const int me = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long acc = me;
  for (int r = 0; r < kRounds; r++) {
    const unsigned t = atomicAdd(tickets, 1u);
    acc = acc * 31 + t;
    acc ^= __ballot((int)((t + me) & 1));
    acc += __shfl(acc, (threadIdx.x + 1) % warpSize);
    acc += __activemask() & 0xff;
    __syncthreads();
    if (r == 3 && me == kDieLane && end == kDie) _exit(3);
    if (r == 3 && me == kDieLane && end == kTrap) __builtin_trap();
  }
  atomicAdd(sum, acc);
}

static int rank(int r, int end) {
  if (hipSetDevice(r) != hipSuccess) return 1;
  unsigned long long* sum = nullptr;
  unsigned* tickets = nullptr;
  if (hipMalloc(&sum, sizeof *sum) != hipSuccess || hipMalloc(&tickets, sizeof *tickets) != hipSuccess ||
      hipMemset(sum, 0, sizeof *sum) != hipSuccess || hipMemset(tickets, 0, sizeof *tickets) != hipSuccess)
    return 1;
  churn<<<kBlocks, kLanes>>>(sum, tickets, r == 1 ? end : kNone);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  unsigned long long s = 0;
  unsigned n = 0;
  if (hipMemcpy(&s, sum, sizeof s, hipMemcpyDeviceToHost) != hipSuccess ||
      hipMemcpy(&n, tickets, sizeof n, hipMemcpyDeviceToHost) != hipSuccess)
    return 1;
  // A round trip of 1 MiB through pageable host memory: as a process, the
  // copy back is the call's reply, staged over the socket, past its
  // buffer (a reply rung only after its send blocked for good).
  const size_t big = 1 << 20;
  std::vector<unsigned> out(big / 4), back(big / 4);
  for (size_t i = 0; i < out.size(); i++) out[i] = (unsigned)(i * 2654435761u) ^ (unsigned)r;
  void* dev = nullptr;
  if (hipMalloc(&dev, big) != hipSuccess || hipMemcpy(dev, out.data(), big, hipMemcpyHostToDevice) != hipSuccess ||
      hipMemcpy(back.data(), dev, big, hipMemcpyDeviceToHost) != hipSuccess || hipFree(dev) != hipSuccess)
    return 1;
  const bool same = out == back;
  std::printf("rank %d: sum %016llx, %u tickets, 1 MiB back %s\n", r, s, n, same ? "intact" : "CORRUPT");
  std::fflush(stdout);
  return n == (unsigned)(kBlocks * kLanes * kRounds) && same ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fork_lanes threads|fork [die|trap]\n");
    return 3;
  }
  const bool fork_ = !std::strcmp(argv[1], "fork");
  const int end = argc > 2 && !std::strcmp(argv[2], "die") ? kDie : argc > 2 && !std::strcmp(argv[2], "trap") ? kTrap : kNone;
  int failed = 0;
  if (fork_) {
    std::vector<pid_t> kids;
    for (int r = 0; r < kRanks; r++) {
      const pid_t pid = fork();
      if (pid < 0) return 3;
      if (pid == 0) _exit(rank(r, end));
      kids.push_back(pid);
    }
    for (pid_t pid : kids) {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
    }
  } else {
    std::vector<int> rc(kRanks);
    std::vector<std::thread> ths;
    for (int r = 0; r < kRanks; r++) ths.emplace_back([&rc, r, end] { rc[r] = rank(r, end); });
    for (auto& th : ths) th.join();
    for (int v : rc) failed += v != 0;
  }
  std::printf("fork_lanes: %d of %d ranks failed\n", failed, kRanks);
  return failed ? 1 : 0;
}
