// A program that changes process state a process's end would discard:
// its argument says which. cwd: prints the working directory, then moves
// to /; umask: prints the mask, then sets 077; signal: prints SIGUSR1's
// disposition, then installs a handler; fd: opens a descriptor and
// leaves it open; cout: prints 255 and pi with std::cout, then leaves
// it in hex with two fixed decimals; rand: prints rand() and drand48()
// unseeded; getopt: parses its options (-v -n N) and prints them; wide:
// prints with wprintf (stdout becomes wide-oriented). Under a seed server every seed must
// print what a fresh process prints.
#include <hip/hip_runtime.h>

#include <csignal>
#include <iomanip>
#include <iostream>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static void on_usr1(int) {}

int main(int argc, char** argv) {
  if (hipSetDevice(0) != hipSuccess) return 1;
  const char* what = argc > 1 ? argv[1] : "";
  if (!std::strcmp(what, "cwd")) {
    char buf[4096];
    std::printf("cwd %s\n", getcwd(buf, sizeof buf) ? buf : "?");
    return chdir("/") == 0 ? 0 : 1;
  }
  if (!std::strcmp(what, "umask")) {
    mode_t m = umask(077);
    std::printf("umask %03o\n", (unsigned)m);
    return 0;
  }
  if (!std::strcmp(what, "signal")) {
    struct sigaction old;
    sigaction(SIGUSR1, nullptr, &old);
    std::printf("SIGUSR1 %s\n", old.sa_handler == SIG_DFL ? "default" : "handled");
    std::signal(SIGUSR1, on_usr1);
    return 0;
  }
  if (!std::strcmp(what, "fd")) {
    std::printf("fd %s\n", open("/dev/null", O_RDONLY) >= 0 ? "opened" : "refused");  // its number is the process's
    return 0;
  }
  if (!std::strcmp(what, "rand")) {
    std::printf("rand %d %d, drand48 %.6f\n", std::rand(), std::rand(), drand48());
    return 0;
  }
  if (!std::strcmp(what, "getopt")) {
    int v = 0, c;
    const char* n = "none";
    while ((c = getopt(argc - 1, argv + 1, "vn:")) != -1) {
      if (c == 'v') v = 1;
      if (c == 'n') n = optarg;
    }
    std::printf("getopt v=%d n=%s optind=%d\n", v, n, optind);
    return 0;
  }
  if (!std::strcmp(what, "wide")) {
    std::wprintf(L"wide %d\n", 42);
    return 0;
  }
  if (!std::strcmp(what, "cout")) {
    std::cout << 255 << " " << 3.14159 << std::endl;
    std::cout << std::hex << std::fixed << std::setprecision(2);
    return 0;
  }
  return 2;
}
