// The cost of a call that crosses processes: one rank makes N host calls
// that do not wait (hipGetDevice) and runs a kernel of one lane that makes
// N device calls that do not wait (__activemask), first as a thread of
// this process, then as a forked child (capi/procs.c), and prints the
// wall time per call of each. A forked rank's host call is a round trip
// on its socket to the coordinator's proxy thread; its lane's device
// call is one too, the other way. Usage: handoff [N] (default 20000).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "../common.hpp"

__global__ void calls(int n, unsigned long long* sink) {
  unsigned long long m = 0;
  for (int i = 0; i < n; i++) m += __activemask();
  *sink = m;
}

static double nsPer(std::chrono::steady_clock::time_point t0, int n) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
}

// rank makes the calls and prints what each cost.
static int rank(const char* as, int n) {
  HIP_CHECK(hipSetDevice(1));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; i++) {
    int dev = -1;
    HIP_CHECK(hipGetDevice(&dev));
    if (dev != 1) return 1;
  }
  const double host = nsPer(t0, n);
  unsigned long long* sink = nullptr;
  HIP_CHECK(hipMalloc(&sink, sizeof *sink));
  t0 = std::chrono::steady_clock::now();
  calls<<<1, 1>>>(n, sink);
  HIP_CHECK(hipDeviceSynchronize());
  const double device = nsPer(t0, n);
  unsigned long long got = 0;
  HIP_CHECK(hipMemcpy(&got, sink, sizeof got, hipMemcpyDeviceToHost));
  std::printf("handoff: as a %s: %.0f ns a host call, %.0f ns a device call\n", as, host, device);
  std::fflush(stdout);
  return got == (unsigned long long)n ? 0 : 1;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  int errors = 0;
  std::thread th([&] { errors += rank("thread", n); });
  th.join();
  const pid_t pid = fork();
  if (pid == 0) _exit(rank("process", n));
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) errors++;
  return finish("handoff", errors);
}
