// The seed server: a warm process that holds the emulator and runs one
// seed of a program's seed form (emud c++'s PROGRAM.emud-seeds.so) per
// request, loading the object afresh each time (the protocol and what
// is reset between seeds: doc.go, "The seed server"). Built by emud c++ as
// emud-seed-server next to libemud.a: a main that calls emud_seed_serve.
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <wchar.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lane.h"

extern char** environ;
extern void __cxa_finalize(void* dso);
// The server's main (emud c++'s) saves and restores the C++ library's
// standard streams' formatting and the global locales around each seed.
extern void emud_seed_streams_save(void) __attribute__((weak));
extern void emud_seed_streams_restore(void) __attribute__((weak));

#define SEED_PROTO "emud-seed/1"
#define SEED_REQ_MAX (16u << 20)      // a request's bytes: argv and environment
#define SEED_RSS_MAX (4ull << 30)     // past this resident size after a seed, the server ends (more = 0)
#define SEED_ARGC_MAX 65536

static int srv_err = 2;  // the server's own stderr, while fd 2 is a seed's

static void die(const char* what, const char* detail) {
  dprintf(srv_err, "emud seed server: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  _exit(1);
}

// read_full reads n bytes: 0, 1 at end of file before the first byte, -1
// on error or a short read.
static int read_full(int fd, void* p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char*)p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return got == 0 ? 1 : -1;
    got += (size_t)r;
  }
  return 0;
}

static int write_full(int fd, const void* p, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t r = write(fd, (const char*)p + put, n - put);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    put += (size_t)r;
  }
  return 0;
}

static uint64_t resident(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, rss = 0;
  if (!f) return 0;
  if (fscanf(f, "%llu %llu", &size, &rss) != 2) rss = 0;
  fclose(f);
  return rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

// ---- what else a seed can change in the process ----
//
// A process starts each seed afresh in these too: the working directory,
// the file mode mask and the main thread's signal mask are put back; a
// changed signal disposition, a pending timer, or file descriptors piling
// up (more than SEED_FDS_SLACK over the count after the first seed) end
// the server after the seed instead (more = 0).
#define SEED_FDS_SLACK 16
static char start_cwd[PATH_MAX];
static mode_t start_umask;
static sigset_t start_mask;
static struct sigaction start_act[NSIG];
static int base_fds = -1;

static int count_fds(void) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

static void save_process(void) {
  if (!getcwd(start_cwd, sizeof start_cwd)) start_cwd[0] = 0;
  start_umask = umask(0);
  umask(start_umask);
  pthread_sigmask(SIG_SETMASK, NULL, &start_mask);
  for (int s = 1; s < NSIG; s++) sigaction(s, NULL, &start_act[s]);
}


// restore_process puts back what it can and says whether the server may
// go on.
static int restore_process(void) {
  int ok = 1;
  // libc's own globals a program's first use finds as at start: rand and
  // random's sequence (unseeded, it is seed 1's), drand48's (unseeded,
  // glibc's starts from X = 0 with the standard multiplier and addend,
  // which seed48 sets), getopt's position.
  srand(1);
  unsigned short x48[3] = {0, 0, 0};
  seed48(x48);
  optind = 1;
  opterr = 1;
  optopt = '?';
  if (start_cwd[0] && chdir(start_cwd) != 0) ok = 0;
  umask(start_umask);
  pthread_sigmask(SIG_SETMASK, &start_mask, NULL);
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    struct sigaction now;
    if (sigaction(s, NULL, &now) != 0) continue;
    if (now.sa_handler == start_act[s].sa_handler) continue;
    if ((now.sa_flags & SA_SIGINFO) && (void*)now.sa_sigaction == emud_fault_handler()) {
      start_act[s] = now;  // emud's own, installed at the first seed's first call, kept
      continue;
    }
    dprintf(srv_err, "emud seed server: the seed changed signal %d's disposition: ending after this seed\n", s);
    ok = 0;
  }
  // stdio's own streams: a seed that made one wide (wprintf) or reopened
  // it elsewhere (freopen) leaves them so for the next.
  if (fwide(stdout, 0) > 0 || fwide(stderr, 0) > 0 || fileno(stdout) != 1 || fileno(stderr) != 2) {
    dprintf(srv_err, "emud seed server: the seed reoriented or reopened stdout or stderr: ending after this seed\n");
    ok = 0;
  }
  struct itimerval it;
  if (getitimer(ITIMER_REAL, &it) == 0 && (it.it_value.tv_sec || it.it_value.tv_usec)) {
    dprintf(srv_err, "emud seed server: the seed left a timer (alarm) running: ending after this seed\n");
    ok = 0;
  }
  int n = count_fds();
  if (base_fds < 0) {
    base_fds = n;
  } else if (n > base_fds + SEED_FDS_SLACK) {
    dprintf(srv_err, "emud seed server: %d file descriptors open, %d after the first seed: ending after this seed\n", n, base_fds);
    ok = 0;
  }
  return ok;
}

// ---- one CPU a seed ----
//
// A seed runs one actor at a time (the simulator's turns), but its
// threads (the program's host threads, Go's) hand turns to each other
// hundreds of times a seed: a thread woken on another CPU costs that CPU
// a wake from idle (an IPI, in a VM an exit) before it runs, and the two
// CPUs' caches the data. So each seed's threads are held on the CPU the
// seed began on, and let go between seeds, where the kernel may place the
// next seed's start on another (two sweeps on one machine still spread).
// EMUD_SEED_PIN=0 in the server's starting environment turns it off.
// A program asking its own affinity (sched_getaffinity,
// pthread_getaffinity_np) is told the server's, as a process of its own
// would be (lane.c's interposers, by emud_seed_pinned).
static cpu_set_t srv_cpus;  // the server's affinity at its start
static int srv_cpus_ok;     // srv_cpus was read
static int pin_ok;          // pinning is on, over more than one CPU
static int pinned = -1;     // the CPU the running seed is held on, or -1

static void affinity_all(const cpu_set_t* m) {
  DIR* d = opendir("/proc/self/task");
  if (!d) return;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    int tid = atoi(e->d_name);
    // The system call, not this file's sched_setaffinity (the program's).
    // A thread ending meanwhile: ESRCH, nothing to hold.
    if (tid > 0) syscall(SYS_sched_setaffinity, tid, sizeof *m, m);
  }
  closedir(d);
}

static void pin_init(void) {
  srv_cpus_ok = sched_getaffinity(0, sizeof srv_cpus, &srv_cpus) == 0;
  const char* v = getenv("EMUD_SEED_PIN");
  pin_ok = srv_cpus_ok && CPU_COUNT(&srv_cpus) > 1 && !(v && strcmp(v, "0") == 0);
}

static void pin_seed(void) {
  int cpu = sched_getcpu();
  if (!pin_ok || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &srv_cpus)) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  affinity_all(&one);
  pinned = cpu;
}

static int prog_set;  // the seed set an affinity of its own: its queries are answered as they are

// unpin_seed lets the threads go at a seed's end, and puts back an
// affinity the seed set (pinned or not), which the next seed must not
// inherit.
static void unpin_seed(void) {
  if ((pinned >= 0 || prog_set) && srv_cpus_ok) affinity_all(&srv_cpus);
  pinned = -1;
  prog_set = 0;
}

// as_unpinned makes a query's answer m (size bytes) the server's
// affinity where it is the seed's pin: the program never sees it.
static void as_unpinned(size_t size, cpu_set_t* m) {
  if (pinned < 0 || prog_set || !m) return;
  size_t n = size < sizeof srv_cpus ? size : sizeof srv_cpus;
  if (CPU_COUNT_S(n, m) != 1 || !CPU_ISSET_S(pinned, n, m)) return;
  memcpy(m, &srv_cpus, n);
}

static void* next_fn(void** cache, const char* name) {
  if (!*cache) *cache = dlsym(RTLD_NEXT, name);
  return *cache;
}

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t* m) {
  static void* f;
  int (*real)(pid_t, size_t, cpu_set_t*) = (int (*)(pid_t, size_t, cpu_set_t*))next_fn(&f, "sched_getaffinity");
  if (!real) return errno = ENOSYS, -1;
  int rc = real(pid, size, m);
  if (rc == 0) as_unpinned(size, m);
  return rc;
}

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t* m) {
  static void* f;
  int (*real)(pid_t, size_t, const cpu_set_t*) = (int (*)(pid_t, size_t, const cpu_set_t*))next_fn(&f, "sched_setaffinity");
  if (!real) return errno = ENOSYS, -1;
  prog_set = 1;
  return real(pid, size, m);
}

int pthread_getaffinity_np(pthread_t th, size_t size, cpu_set_t* m) {
  static void* f;
  int (*real)(pthread_t, size_t, cpu_set_t*) = (int (*)(pthread_t, size_t, cpu_set_t*))next_fn(&f, "pthread_getaffinity_np");
  if (!real) return ENOSYS;
  int rc = real(th, size, m);
  if (rc == 0) as_unpinned(size, m);
  return rc;
}

int pthread_setaffinity_np(pthread_t th, size_t size, const cpu_set_t* m) {
  static void* f;
  int (*real)(pthread_t, size_t, const cpu_set_t*) = (int (*)(pthread_t, size_t, const cpu_set_t*))next_fn(&f, "pthread_setaffinity_np");
  if (!real) return ENOSYS;
  prog_set = 1;
  return real(th, size, m);
}

static int open_out(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) die(path, strerror(errno));
  return fd;
}

// run_seed runs one request's seed: strs are its n strings. It returns
// main's status and sets *more; a seed that ends otherwise ends the
// process (exit, a signal, an emulation failure), as a process would.
static int run_seed(const char* object, char** strs, int n, int* more) {
  if (n < 4 || strcmp(strs[0], SEED_PROTO) != 0) die("a request that is not " SEED_PROTO, n > 0 ? strs[0] : NULL);
  char* end = NULL;
  errno = 0;
  long argc = strtol(strs[3], &end, 10);
  if (errno || !end || *end || strs[3][0] == 0 || argc < 0 || argc > SEED_ARGC_MAX || argc > n - 4)
    die("a request's argc is not a count of the strings that follow", strs[3]);
  char** argv = strs + 4;
  char** env = argv + argc;
  int nenv = n - 4 - (int)argc;
  for (int i = 0; i < nenv; i++)
    if (env[i][0] == '=' || !strchr(env[i], '=')) die("a request's environment string is not K=V", env[i]);
  char** av = malloc(((size_t)argc + 1) * sizeof *av);
  if (!av) die("out of memory", NULL);
  memcpy(av, argv, (size_t)argc * sizeof *av);
  av[argc] = NULL;

  // The seed's whole environment, in C's environ and Go's copy both,
  // before the object's constructors run.
  clearenv();
  emud_enter();
  emudGoSeedEnv(env, nenv);
  emud_leave();

  int fo = open_out(strs[1]), fe = open_out(strs[2]);
  fflush(NULL);
  if (dup2(fo, 1) < 0 || dup2(fe, 2) < 0) die("dup2", strerror(errno));
  close(fo);
  close(fe);

  emud_seed_loading(object);
  void* h = dlopen(object, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "emud seed server: loading %s: %s\n", object, dlerror());
    fflush(NULL);
    _exit(127);
  }
  int (*mainf)(int, char**, char**) = (int (*)(int, char**, char**))dlsym(h, "main");
  struct link_map* lm = NULL;
  if (!mainf || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
    fprintf(stderr, "emud seed server: %s has no main\n", object);
    fflush(NULL);
    _exit(127);
  }
  emud_seed_loaded((void*)mainf, (uint64_t)lm->l_addr);
  emud_enter();
  uint64_t dso = emudGoSeedObject((char*)object, (uint64_t)lm->l_addr);
  emudGoSeedEnvSync();  // what the object's constructors set (--offload-arch's EMUD_ARCH)
  emud_leave();
  emud_seed_dso((void*)(uintptr_t)dso);

  int rc = mainf((int)argc, av, environ);

  // main returned: what exit(rc) does from here. Threads the program
  // started and never joined still run its code: then the end is a
  // process's own exit (the status the client reads is rc all the same).
  emud_enter();
  int live = emudGoSeedLive();
  emud_leave();
  if (live > 0 || emud_seed_threads() > 0) exit(rc);
  // The object's exit handlers, newest first, the end of run among them
  // where its first emud call registered it (lane.c); else the end of run
  // (waiting for the simulation, EMUD_SUMMARY etc.) first.
  if (dso) __cxa_finalize((void*)(uintptr_t)dso);
  if (emud_started() && !emud_seed_exit_in_dso()) emud_seed_exit();
  fflush(NULL);
  free(av);
  *more = 1;
  dlclose(h);  // the object's static destructors run here
  fflush(NULL);
  void* again = dlopen(object, RTLD_NOW | RTLD_NOLOAD);
  if (again) {
    dprintf(srv_err, "emud seed server: %s stayed loaded after dlclose (a unique or NODELETE symbol?): ending after this seed\n", object);
    dlclose(again);
    *more = 0;
  }
  return rc & 0xff;
}

int emud_seed_serve(int argc, char** argv) {
  if (argc != 2 || argv[1][0] != '/') {
    fprintf(stderr,
            "usage: %s /absolute/path/PROGRAM" ".emud-seeds.so\n"
            "emud's seed server (run by emud explore): requests on fd 3, replies on fd 4\n",
            argc > 0 ? argv[0] : "emud-seed-server");
    return 2;
  }
  const char* object = argv[1];
  if (fcntl(3, F_GETFD) < 0 || fcntl(4, F_GETFD) < 0) {
    fprintf(stderr, "emud seed server: fds 3 (requests) and 4 (replies) must be open\n");
    return 2;
  }
  emud_seed_mark_start();
  pin_init();
  emud_enter();
  (void)emudGoSeedLive();  // the Go runtime is up (its signal handlers installed) before they are saved
  emud_leave();
  save_process();
  if (emud_seed_streams_save) emud_seed_streams_save();
  int srv_out = fcntl(1, F_DUPFD_CLOEXEC, 10);
  srv_err = fcntl(2, F_DUPFD_CLOEXEC, 10);
  if (srv_out < 0 || srv_err < 0) die("saving stdout and stderr", strerror(errno));
  fcntl(3, F_SETFD, FD_CLOEXEC);
  fcntl(4, F_SETFD, FD_CLOEXEC);
  for (;;) {
    unsigned char hdr[4];
    int r = read_full(3, hdr, 4);
    if (r == 1) _exit(0);  // the client is done
    if (r < 0) die("reading a request's length", strerror(errno));
    uint32_t n = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
    if (n == 0 || n > SEED_REQ_MAX) die("a request's length is 0 or over 16 MiB", NULL);
    char* buf = malloc(n);
    if (!buf) die("out of memory", NULL);
    if (read_full(3, buf, n) != 0) die("a request cut short", NULL);
    if (buf[n - 1] != 0) die("a request's last string has no NUL", NULL);
    int ns = 0;
    for (uint32_t i = 0; i < n; i++) ns += buf[i] == 0;
    char** strs = malloc(((size_t)ns + 1) * sizeof *strs);
    if (!strs) die("out of memory", NULL);
    for (int i = 0, at = 0; i < ns; i++) {
      strs[i] = buf + at;
      at += (int)strlen(buf + at) + 1;
    }
    strs[ns] = NULL;
    int more = 0;
    pin_seed();
    int status = run_seed(object, strs, ns, &more);
    if (dup2(srv_out, 1) < 0 || dup2(srv_err, 2) < 0) die("dup2", strerror(errno));
    if (emud_seed_reset_c() != 0) more = 0;
    if (!restore_process()) more = 0;
    if (emud_seed_streams_restore) emud_seed_streams_restore();
    emud_enter();
    emudGoSeedReset();
    emud_leave();
    if (resident() > SEED_RSS_MAX) more = 0;
    free(strs);
    free(buf);
    unsigned char reply[5] = {(unsigned char)status, 0, 0, 0, (unsigned char)more};
    unpin_seed();
    if (write_full(4, reply, sizeof reply) != 0) die("writing a reply", strerror(errno));
    if (!more) _exit(0);
  }
}
