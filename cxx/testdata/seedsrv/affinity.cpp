// What a program learns of the CPUs it may run on. A seed server holds
// each seed's threads on one CPU (seedsrv.c, "one CPU a seed"); the
// program must not see it: its affinity queries, from main and from a
// thread it starts, give what a process of its own gets, and after it
// sets an affinity of its own, that one.
//
// argv[1] "held" prints instead how many CPUs the kernel lets the main
// thread and a started thread use (/proc's Cpus_allowed_list, which no
// interposer answers): 1 in a seed server on a machine of more.
#include <pthread.h>
#include <sched.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

static int allowed() {  // the CPUs in this thread's Cpus_allowed_list
  std::ifstream f("/proc/thread-self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
    int n = 0;
    size_t at = line.find(':') + 1;
    while (at < line.size()) {
      size_t end = line.find(',', at);
      std::string r = line.substr(at, end == std::string::npos ? std::string::npos : end - at);
      int lo = 0, hi = 0;
      if (std::sscanf(r.c_str(), "%d-%d", &lo, &hi) == 2) {
        n += hi - lo + 1;
      } else if (std::sscanf(r.c_str(), "%d", &lo) == 1) {
        n++;
      }
      if (end == std::string::npos) break;
      at = end + 1;
    }
    return n;
  }
  return -1;
}

static void report(const char* who) {
  cpu_set_t s;
  CPU_ZERO(&s);
  int a = sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : -1;
  CPU_ZERO(&s);
  int b = pthread_getaffinity_np(pthread_self(), sizeof s, &s) == 0 ? CPU_COUNT(&s) : -1;
  std::printf("%s: sched_getaffinity %d, pthread_getaffinity_np %d\n", who, a, b);
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "held") == 0) {
    int t = 0;
    std::thread th([&] { t = allowed(); });
    th.join();
    std::printf("held: main %d, thread %d\n", allowed(), t);
    return 0;
  }
  std::printf("hardware_concurrency %u, get_nprocs %d, online %ld\n", std::thread::hardware_concurrency(), get_nprocs(),
              sysconf(_SC_NPROCESSORS_ONLN));
  report("main");
  std::thread th([] { report("thread"); });
  th.join();
  // One CPU of its own choosing: the query says so, as in a process.
  cpu_set_t s;
  CPU_ZERO(&s);
  if (sched_getaffinity(0, sizeof s, &s) != 0) return 1;
  int first = -1;
  for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
    if (CPU_ISSET(i, &s)) first = i;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return 2;
  report("main, set to one");
  return 0;
}
