// Ranks as processes: fork mode (see doc.go, "Ranks as processes").
//
// A program that forks one process per rank (MORI's test harness) runs
// them on the one emulated node of the process that forked. That process
// is the coordinator: it has the Go runtime and the simulator. A forked
// child has no usable Go runtime (of its threads only the forking one
// survives a fork), so it is a client in C only: fork() here makes a
// socketpair first, and in the parent a proxy thread, a host thread of
// the emulation like any std::thread, carries the child's HIP and cco
// calls out on the child's behalf, in the turns the simulator gives it.
// The child's lanes run in the child, as coroutines resumed on the
// coordinator's word: the coordinator's lane is a mirror whose resume
// puts the lane's state in the child's channel and waits for its next
// device call there.
//
// Channels (pchan): a lane's resume is most of what crosses, one per
// device call, so it does not go over the socket: each rank process has
// a slot in shared memory that holds one lane (lanes run one at a time,
// so a resume and its yield are one slot's traffic), a word the
// coordinator bumps to post (the bell) and one the process bumps to
// answer. A side that waits spins on its word for a while first
// (EMUD_FORK_SPIN_US, 50 µs; none with one CPU, nor on the CPU the
// other side last waited on, which the spin would only keep from it),
// then sleeps on it (a futex), announcing so, and only then does the
// other side make a system call to wake it. A process spins only while
// the lane the coordinator resumed last is its own (exts->resumed), and
// not for a call's reply before a lane of it ran in the call. With both awake a device
// call's round trip costs no system call and no wake-up. A futex cannot
// see a process end, so a sleeper looks at the socket every 20 ms for a
// hang-up. Calls and their replies stay on the socket: the coordinator
// counts its messages there in the channel and rings the same bell, so
// a process waits in one place (client_next) for a resume or a reply.
// Only the live part of a lane is copied (its access log up to nlog).
//
// Memory: at the first fork the device chunks mapped so far move into
// one memfd, mapped MAP_SHARED at the same addresses, and so does the
// runtime's object pool; later chunks are mapped from the memfd and
// listed in a shared table that a child maps from on each message. Block
// shared memory of a child's grids comes from a shared arena. Host
// memory a call reads or writes (hipMemcpy's host side, a unique id) is
// staged: copied over the socket with the call and its reply.
//
// Ends: a child whose coordinator's end of the socket closes exits (a
// thread of the child watches for it, so a child running its own code
// ends too), with the failed run's status and no line of its own, since
// the report names it; a fork closes in the child the coordinator's ends
// of earlier children's sockets, which would keep them open.
//
// Written for emud.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <sys/un.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emud/abi.h"
#include "lane.h"

enum { PM_CALL = 1, PM_REPLY, PM_RESUME, PM_YIELD, PM_FREE };

// pmsg is every message's header; a lane (RESUME, YIELD) and n bytes of
// staged data follow it.
typedef struct {
  uint32_t kind;
  int32_t op, line, rc;
  int32_t in_idx, out_idx;  // CALL: the argument staged in (its bytes follow), the one staged out
  uint64_t a[16];
  uint64_t n, out_n;        // bytes following; CALL: bytes the reply brings back
  uint64_t lane, entry, arg;
  char file[232];
} pmsg;

static int send_all(int fd, const void* p, size_t n) {
  const char* c = p;
  while (n > 0) {
    ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

static int recv_all(int fd, void* p, size_t n) {
  char* c = p;
  while (n > 0) {
    ssize_t r = recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

// ---- waiting on a word of shared memory ----

// spin_ns is how long a side spins on a channel's word before it sleeps
// on it: a round trip where both sides stay awake costs no system call
// and no wake-up, and a lane's code up to its next device call, or the
// simulator's turn on one, is mostly shorter than a sleep and a wake-up
// (a few µs against tens on a loaded VM). With one CPU the other side
// cannot run while this one spins: no spin. EMUD_FORK_SPIN_US sets it
// (0: never spin).
static int64_t spin_ns = -1;

static int64_t spin_budget(void) {
  int64_t v = __atomic_load_n(&spin_ns, __ATOMIC_RELAXED);
  if (v >= 0) return v;
  v = 50000;
  const char* e = getenv("EMUD_FORK_SPIN_US");
  if (e && *e) {
    char* end = NULL;
    long us = strtol(e, &end, 10);
    if (end && !*end && us >= 0 && us <= 1000000)
      v = (int64_t)us * 1000;
    else if (!emud_forked())  // said once, by the coordinator
      fprintf(stderr, "emud: EMUD_FORK_SPIN_US=%s is not a whole number of µs from 0 to 1000000; forked ranks' lanes spin "
              "50 µs\n", e);
  }
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) v = 0;
  __atomic_store_n(&spin_ns, v, __ATOMIC_RELAXED);
  return v;
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// word_ring bumps *w and wakes a sleeper on it, if any: the bump and the
// look at *sleep are sequentially consistent, as are the sleeper's
// announcement and its look at *w, so one of the two sees the other.
static void word_ring(volatile uint32_t* w, volatile uint32_t* sleep) {
  __atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(sleep, __ATOMIC_SEQ_CST)) syscall(SYS_futex, w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

// peer_gone says whether the other end of socket *fdp hung up (its
// process ended), reading nothing.
static int peer_gone(volatile int* fdp) {
  int fd = __atomic_load_n(fdp, __ATOMIC_ACQUIRE);  // -1 once its reader closed it (proxy)
  if (fd < 0) return 1;
  struct pollfd pf = {fd, 0, 0};  // no events asked: a hang-up or error only
  return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL));
}

// word_wait waits until *w is no longer old: 0 then, -1 once the other
// end of socket *fd hung up (a futex cannot see a process end, so a
// sleep looks every 20 ms). mine and peer are where this side and the
// other say which CPU they last waited on; with who, the spin ends as
// soon as *who is no longer me (a rank process: the coordinator resumed
// another process's lane, so its own next resume is not near, and the
// spin would keep that process from the CPU); with spin 0, no spin.
static int word_wait(volatile uint32_t* w, volatile uint32_t* sleep, uint32_t old, volatile int* fd,
                     volatile int32_t* mine, volatile int32_t* peer, volatile int32_t* who, int32_t me, int spin) {
  if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != old) return 0;
  int64_t budget = spin ? spin_budget() : 0;
  // A spin on the CPU the other side runs on only delays it: it gets the
  // CPU when the spin ends.
  int cpu = sched_getcpu();
  __atomic_store_n(mine, cpu, __ATOMIC_RELAXED);
  if (cpu < 0 || cpu == __atomic_load_n(peer, __ATOMIC_RELAXED)) budget = 0;
  if (budget > 0) {
    int64_t end = mono_ns() + budget;
    for (int i = 1;; i++) {
      cpu_relax();
      if (__atomic_load_n(w, __ATOMIC_ACQUIRE) != old) return 0;
      if (who && __atomic_load_n(who, __ATOMIC_RELAXED) != me) break;
      if ((i & 63) == 0 && mono_ns() > end) break;
    }
  }
  __atomic_fetch_add(sleep, 1, __ATOMIC_SEQ_CST);
  int gone = 0;
  while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == old) {
    struct timespec ts = {0, 20000000};
    if (syscall(SYS_futex, w, FUTEX_WAIT, old, &ts, NULL, 0) != 0 && errno == ETIMEDOUT && peer_gone(fd)) {
      gone = __atomic_load_n(w, __ATOMIC_SEQ_CST) == old;
      break;
    }
  }
  __atomic_fetch_sub(sleep, 1, __ATOMIC_SEQ_CST);
  return gone ? -1 : 0;
}

// ---- shared memory ----

#define EXT_MAX 65536
#define MAX_PROCS 256

// pchan is a rank process's channel for its lanes' resumes, in shared
// memory: a resume and its yield are the lane copied into the slot and a
// word bumped, with no system call while the other side is awake; a side
// that finds nothing after a brief spin sleeps on the word (a futex),
// and the other side wakes it only then. Everything else (calls, their
// replies, a grid's context to free) goes over the socket, whose
// messages from the coordinator are counted here and ring the same bell,
// so a process waits in one place for whichever comes.
typedef struct {
  // Coordinator to process: bumped for each resume posted and each
  // message sent on the socket; bell_sleep counts the process's
  // threads asleep on it.
  volatile uint32_t bell __attribute__((aligned(64)));
  volatile uint32_t bell_sleep;
  volatile uint32_t resume;  // a resume is in the slot, not yet taken
  volatile uint64_t socks;   // messages the coordinator sent on the socket
  // Process to coordinator: bumped when the resumed lane yielded (its
  // call, return or fault is in the slot).
  volatile uint32_t back __attribute__((aligned(64)));
  volatile uint32_t back_sleep;
  // The CPU each side last waited on (a spin on the other's only delays it).
  volatile int32_t coord_cpu __attribute__((aligned(64)));
  volatile int32_t proc_cpu;
  // The slot: RESUME (lane, entry, arg) and the lane one way, YIELD (the
  // lane's id, n bytes of str) and the lane the other.
  pmsg m __attribute__((aligned(64)));
  emud_lane l;
  char str[1024];
} pchan;

typedef struct {
  volatile uint64_t gen;  // bumped when the table changes
  volatile int32_t n;
  uint64_t ext[EXT_MAX][2];
  // A rank process's free section (a blocking MPI call) ended: its word,
  // set by the process and waited on (a futex) by its proxy, which does
  // not read the socket meanwhile (the process's lanes may be resumed on it).
  volatile uint32_t free_done[MAX_PROCS];
  // The MPI call it is in now (a string of the program's image, which
  // every rank shares), for reports: the section stays open across calls.
  const char* volatile free_name[MAX_PROCS];
  // The run's exit status, set by the coordinator as its run fails, so
  // its ranks exit with it and a launcher (mpirun) sees one outcome.
  volatile int32_t run_status;
  // The coordinator exited normally (its program returned, perhaps
  // without waiting for its ranks): a rank running its own code goes on
  // as it would on hardware, and a later call of its says the node is gone.
  volatile int32_t coord_exited;
  // The slot whose lane the coordinator resumed last (a process spins
  // for its next resume only while it is its own).
  volatile int32_t resumed __attribute__((aligned(64)));
  // Each rank process's lane channel, by its slot (a proc's).
  pchan chan[MAX_PROCS];
} ext_table;

static int dev_fd = -1;       // the device memory's memfd, once shared
static ext_table* exts;       // chunks mapped from it, in mapping order
#define ARENA_SIZE EMUD_ARENA_SIZE
static char* arena;           // block shared memory of forked ranks' grids
static size_t arena_used;
static int arena_live;
static pthread_mutex_t arena_mu = PTHREAD_MUTEX_INITIALIZER;

static void ext_add(uint64_t lo, uint64_t hi) {
  int n = exts->n;
  if (n > 0 && exts->ext[n - 1][1] == lo) {
    exts->ext[n - 1][1] = hi;
  } else if (n < EXT_MAX) {
    exts->ext[n][0] = lo;
    exts->ext[n][1] = hi;
    exts->n = n + 1;
  } else {
    fprintf(stderr, "emud: ranks as processes: more than %d separate device memory extents; the run stops\n", EXT_MAX);
    _exit(1);
  }
  exts->gen++;
}

// emud_procs_shared says whether device memory is shared with ranks run
// as processes (a seed server's reset then parks none of it).
int emud_procs_shared(void) { return dev_fd >= 0; }

int emud_procs_map(uint64_t lo, uint64_t hi) {
  if (dev_fd < 0) return -1;
  uint64_t base = emud_resv_lo();
  void* p = mmap((void*)(uintptr_t)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, dev_fd, (off_t)(lo - base));
  if (p == MAP_FAILED) return errno ? errno : 1;
  ext_add(lo, hi);
  return 0;
}

// share_extent moves [lo, hi), mapped private, into the memfd: its
// resident pages are copied (the rest read as zero anyway) and the range
// is mapped shared over itself.
static int share_extent(uint64_t lo, uint64_t hi) {
  uint64_t base = emud_resv_lo();
  unsigned char vec[512];
  for (uint64_t a = lo; a < hi;) {
    uint64_t n = hi - a;
    if (n > sizeof vec * 4096) n = sizeof vec * 4096;
    if (mincore((void*)(uintptr_t)a, n, vec) != 0) return errno;
    for (uint64_t i = 0; i < n / 4096; i++) {
      if (!(vec[i] & 1)) continue;
      uint64_t pg = a + i * 4096;
      if (pwrite(dev_fd, (void*)(uintptr_t)pg, 4096, (off_t)(pg - base)) != 4096) return errno ? errno : EIO;
    }
    a += n;
  }
  void* p = mmap((void*)(uintptr_t)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, dev_fd, (off_t)(lo - base));
  if (p == MAP_FAILED) return errno;
  ext_add(lo, hi);
  return 0;
}

// shared_fd makes a memfd of n bytes mapped shared at want (anywhere
// when 0, over what is there when fixed): its mapping, or NULL.
static void* shared_fd(const char* name, size_t n, void* want, int fixed, int* fd) {
  *fd = memfd_create(name, MFD_CLOEXEC);
  if (*fd < 0) return NULL;
  if (ftruncate(*fd, (off_t)n) != 0) {
    close(*fd);
    *fd = -1;
    return NULL;
  }
  void* p = mmap(want, n, PROT_READ | PROT_WRITE, MAP_SHARED | (fixed ? MAP_FIXED : 0), *fd, 0);
  if (p == MAP_FAILED) {
    close(*fd);
    *fd = -1;
    return NULL;
  }
  return p;
}

static int ext_fd = -1, arena_fd = -1, pool_fd = -1;

static void coord_exit(void) {
  if (exts && !emud_forked()) exts->coord_exited = 1;
}

// share_memory makes the coordinator's device memory and runtime objects
// shared, once, before its first fork (or before it takes in ranks
// started apart): each is a memfd, so a rank started apart can map it too.
static int share_memory(const char** what) {
  if (dev_fd >= 0) return 0;
  uint64_t lo = emud_resv_lo(), hi = emud_resv_hi();
  *what = "the device address range is not reserved (EMUD_BASE taken?)";
  if (lo == 0) return EINVAL;
  *what = "memfd_create";
  int fd = memfd_create("emud-device", MFD_CLOEXEC);
  if (fd < 0) return errno;
  *what = "sizing the device memfd";
  if (ftruncate(fd, (off_t)(hi - lo)) != 0) {
    close(fd);
    return errno;
  }
  *what = "the shared extent table";
  if (!(exts = shared_fd("emud-extents", sizeof *exts, NULL, 0, &ext_fd))) return errno ? errno : ENOMEM;
  *what = "the shared arena";
  if (!(arena = shared_fd("emud-arena", ARENA_SIZE, (void*)(uintptr_t)emud_resv_arena(), 1, &arena_fd)))
    return errno ? errno : ENOMEM;
  // The runtime's objects that lanes read (windows' device structs):
  // copied out and back over a shared mapping of the pool's pages.
  size_t pn;
  char* pool = emud_obj_pool(&pn);
  char* save = malloc(pn);
  *what = "sharing the object pool";
  if (!save) return ENOMEM;
  memcpy(save, pool, pn);
  if (!shared_fd("emud-objects", pn, pool, 1, &pool_fd)) {
    free(save);
    return errno ? errno : ENOMEM;
  }
  memcpy(pool, save, pn);
  free(save);
  dev_fd = fd;
  atexit(coord_exit);
  *what = "sharing the device memory mapped so far";
  return emud_device_extents(share_extent);
}

void* emud_shm_alloc(size_t n, size_t align) {
  if (!arena) return NULL;
  if (align < 16) align = 16;
  void* p = NULL;
  pthread_mutex_lock(&arena_mu);
  size_t at = (arena_used + align - 1) / align * align;
  if (at + n <= ARENA_SIZE) {
    p = arena + at;
    arena_used = at + n;
    arena_live++;
    memset(p, 0, n);
  }
  pthread_mutex_unlock(&arena_mu);
  return p;
}

void emud_shm_free(void* p) {
  if (!p) return;
  pthread_mutex_lock(&arena_mu);
  if (--arena_live == 0) arena_used = 0;  // no grid of a forked rank alive: start over
  pthread_mutex_unlock(&arena_mu);
}

// ---- the coordinator's side ----

typedef struct proc {
  int fd, pid, host, joined;
  int slot;   // its free_done word
  int apart;  // started apart (EMUD_NODE), not a child of this process
  pthread_t th;
} proc;

static proc* procs[MAX_PROCS];
static int nprocs;
static int next_slot;
static pthread_mutex_t procs_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread proc* my_proc;  // the proxy thread's process

void* emud_thread_proc(void) { return my_proc; }

typedef struct {
  uint64_t magic;  // where a local lane's impl has a stack pointer or ucontext flags: never this
  proc* p;
  emud_entry entry;
  void* arg;
  char str[1024];  // a staged string argument of the lane's last call
} remote_lane;
#define REMOTE_MAGIC 0xe3d0c0ffee000001ull  // not a canonical x86-64 address

int emud_lane_is_remote(emud_lane* l) { return l->impl && *(uint64_t*)l->impl == REMOTE_MAGIC; }

emud_lane* emud_lane_make(emud_entry entry, void* arg, void* proc_) {
  if (!proc_) return emud_lane_new(entry, arg);
  emud_lane* l = calloc(1, sizeof *l);
  remote_lane* r = calloc(1, sizeof *r);
  if (!l || !r) {
    free(l);
    free(r);
    return NULL;
  }
  r->magic = REMOTE_MAGIC;
  r->p = proc_;
  r->entry = entry;
  r->arg = arg;
  l->impl = r;
  return l;
}

int emud_remote_pid(emud_lane* l) { return emud_lane_is_remote(l) ? ((remote_lane*)l->impl)->p->pid : 0; }

void emud_remote_free(emud_lane* l) {
  free(l->impl);
  free(l);
}

// chan_init readies slot's channel for a new rank: no CPU known yet.
static void chan_init(int slot) {
  pchan* c = &exts->chan[slot];
  c->coord_cpu = c->proc_cpu = -1;
}

static void ended(int pid, char* how, size_t cap);

// lane_copy copies lane src into dst but for the entries of its access
// log past nlog, which nothing reads (most of the lane's bytes, and an
// empty log on a resume: the coordinator took the entries).
static void lane_copy(emud_lane* dst, const emud_lane* src) {
  int n = src->nlog;
  if (n < 0 || n > 128) n = 128;
  memcpy(dst, src, offsetof(emud_lane, log_lo));
  memcpy(dst->log_lo, src->log_lo, (size_t)n * sizeof src->log_lo[0]);
  memcpy(dst->log_hi, src->log_hi, (size_t)n * sizeof src->log_hi[0]);
  memcpy(dst->log_pc, src->log_pc, (size_t)n * sizeof src->log_pc[0]);
  memcpy(dst->log_kind, src->log_kind, (size_t)n * sizeof src->log_kind[0]);
  memcpy(&dst->nbytes, &src->nbytes, sizeof *src - offsetof(emud_lane, nbytes));
}

// emud_remote_resume runs a forked rank's lane in its process until its
// next device call, its return or its fault; EMUD_LANE_GONE when the
// process is gone. The lane goes through the process's channel (pchan):
// lanes run one at a time, so the slot holds one lane at a time.
void emud_remote_resume(emud_lane* l) {
  remote_lane* r = l->impl;
  proc* p = r->p;
  pchan* c = &exts->chan[p->slot];
  if (__atomic_load_n(&p->fd, __ATOMIC_ACQUIRE) < 0) {
    l->state = EMUD_LANE_GONE;
    return;
  }
  memset(&c->m, 0, sizeof c->m);
  c->m.kind = PM_RESUME;
  c->m.lane = (uint64_t)(uintptr_t)l;
  c->m.entry = (uint64_t)(uintptr_t)r->entry;
  c->m.arg = (uint64_t)(uintptr_t)r->arg;
  lane_copy(&c->l, l);
  uint32_t back = __atomic_load_n(&c->back, __ATOMIC_ACQUIRE);
  __atomic_store_n(&exts->resumed, p->slot, __ATOMIC_RELAXED);
  __atomic_store_n(&c->resume, 1, __ATOMIC_RELEASE);
  word_ring(&c->bell, &c->bell_sleep);
  if (word_wait(&c->back, &c->back_sleep, back, &p->fd, &c->coord_cpu, &c->proc_cpu, NULL, 0, 1) != 0 ||
      c->m.kind != PM_YIELD || c->m.lane != (uint64_t)(uintptr_t)l || c->m.n > sizeof r->str) {
    l->state = EMUD_LANE_GONE;
    return;
  }
  lane_copy(l, &c->l);
  l->impl = r;
  if (c->m.n > 0) {
    memcpy(r->str, c->str, c->m.n);
    r->str[sizeof r->str - 1] = 0;
    l->a[0] = (uint64_t)(uintptr_t)r->str;
  }
}

// sock_sent counts a message about to be sent on process p's socket and
// rings its bell: the process waits on the bell, not the socket (pchan).
// It rings before the send: a reply's staged bytes (a hipMemcpy into the
// process's pageable memory) can pass the socket's buffer, and the send
// then blocks until the process reads, which it does only once woken
// (MORI's test_sdma_signal hung so at its first 64 MiB check).
static void sock_sent(proc* p) {
  pchan* c = &exts->chan[p->slot];
  __atomic_fetch_add(&c->socks, 1, __ATOMIC_RELEASE);
  word_ring(&c->bell, &c->bell_sleep);
}

// emud_remote_gone says, for a lane whose resume found its process gone,
// which process that was (its pid; the host thread of its proxy in *host,
// whether it was started apart in *apart) and how it ended, in how.
int emud_remote_gone(emud_lane* l, int* host, int* apart, char* how, int cap) {
  proc* p = ((remote_lane*)l->impl)->p;
  *host = p->host;
  *apart = p->apart;
  if (p->apart)
    snprintf(how, (size_t)cap, "ended (started apart: its status is its launcher's)");
  else
    ended(p->pid, how, (size_t)cap);
  return p->pid;
}

void emud_remote_free_ctx(void* proc_, emud_entry fin, void* ctx) {
  proc* p = proc_;
  pmsg m;
  memset(&m, 0, sizeof m);
  m.kind = PM_FREE;
  m.entry = (uint64_t)(uintptr_t)fin;
  m.arg = (uint64_t)(uintptr_t)ctx;
  sock_sent(p);
  send_all(p->fd, &m, sizeof m);  // a process gone has nothing to free
}

// ended says how process pid ended, without reaping it (the program's
// own waitpid does): it closed its socket, so it is exiting.
static void ended(int pid, char* how, size_t cap) {
  siginfo_t si;
  for (int i = 0; i < 2000; i++) {
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | WNOHANG) != 0) break;
    if (si.si_pid == pid) {
      if (si.si_code == CLD_EXITED)
        snprintf(how, cap, "exited with status %d", si.si_status);
      else
        snprintf(how, cap, "was killed by signal %d (%s)", si.si_status, strsignal(si.si_status));
      return;
    }
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  snprintf(how, cap, "closed its connection to the coordinator");
}

// proxy_free is a rank process's free section, on its proxy: the turn
// is given up while the process makes its blocking call (MPI), and taken
// back when it says it returned (its free_done word) and a quiescent
// point lets it in (free.go). Meanwhile the proxy does not read the
// socket: the process's lanes may be resumed over it, served there by a
// thread of the process while its main thread is in the call. Nonzero
// when the process is gone.
static int proxy_free(proc* p, pmsg* m, const char* name) {
  volatile uint32_t* done = &exts->free_done[p->slot];
  __atomic_store_n(done, 0, __ATOMIC_RELEASE);
  char nm[64];
  snprintf(nm, sizeof nm, "%s", name);
  exts->free_name[p->slot] = NULL;
  emud_enter();
  emudGoFreeBegin(nm, (void*)&exts->free_name[p->slot]);
  emud_leave();
  pmsg r = *m;
  r.kind = PM_REPLY;
  r.n = 0;
  r.rc = 0;
  r.a[15] = (uint64_t)p->slot;
  sock_sent(p);
  int gone = send_all(p->fd, &r, sizeof r) != 0;
  emud_enter();
  emudGoFreeRelease();  // from here to emudGoFreeEnd this thread holds no turn
  emud_leave();
  while (!gone && !__atomic_load_n(done, __ATOMIC_ACQUIRE)) {
    struct timespec ts = {0, 20000000};
    syscall(SYS_futex, done, FUTEX_WAIT, 0, &ts, NULL, 0);
    // Reading nothing: a hang-up, an error, or the process's end of the
    // socket shut for writing (a failed rank's exit: node_on_exit).
    struct pollfd pf = {p->fd, POLLRDHUP, 0};
    if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR | POLLRDHUP))) gone = 1;
  }
  emud_enter();
  emudGoFreeEnd();  // the turn again
  emud_leave();
  if (gone) return -1;
  r.a[15] = 0;
  sock_sent(p);
  if (send_all(p->fd, &r, sizeof r)) return -1;
  return 0;
}

// proxy is the host thread that carries process p's calls out.
static void* proxy(void* arg) {
  proc* p = arg;
  my_proc = p;
  p->host = emud_host_id();
  emud_enter();
  emudGoProcStarted(p->host, p->pid);
  emud_leave();
  pmsg m;
  char* in = NULL;
  char* out = NULL;
  for (;;) {
    if (recv_all(p->fd, &m, sizeof m) != 0) break;
    if (m.kind != PM_CALL || m.n > (1ull << 30) || m.out_n > (1ull << 30) || m.in_idx >= 16 || m.out_idx >= 16) {
      fprintf(stderr, "emud: forked rank process %d sent a malformed message (kind %u); the coordinator drops it\n", p->pid,
              m.kind);
      break;
    }
    in = m.n ? malloc(m.n) : NULL;
    out = m.out_n ? calloc(1, m.out_n) : NULL;
    if ((m.n && !in) || (m.out_n && !out) || (m.n && recv_all(p->fd, in, m.n) != 0)) break;
    if (m.in_idx >= 0) m.a[m.in_idx] = (uint64_t)(uintptr_t)in;
    if (m.out_idx >= 0) m.a[m.out_idx] = (uint64_t)(uintptr_t)out;
    m.file[sizeof m.file - 1] = 0;
    if (m.op == EMUD_H_FREE_SECTION) {
      if (in && m.n) in[m.n - 1] = 0;  // the call's name, a string however it came
      int bad = proxy_free(p, &m, in && m.n ? in : "a call outside emud");
      free(in);
      free(out);
      in = out = NULL;
      if (bad) break;
      continue;
    }
    m.rc = emud_host(m.op, m.a, m.file, m.line);
    m.kind = PM_REPLY;
    m.n = m.out_n;
    sock_sent(p);
    int bad = send_all(p->fd, &m, sizeof m) || (m.n && send_all(p->fd, out, m.n));
    free(in);
    free(out);
    in = out = NULL;
    if (bad) break;
  }
  free(in);
  free(out);
  char how[128];
  if (p->apart)
    snprintf(how, sizeof how, "ended (started apart: its status is its launcher's)");
  else
    ended(p->pid, how, sizeof how);
  emud_enter();
  emudGoProcEnded(p->host, p->pid, p->apart, how);
  emud_leave();
  // Marked closed first: a fork from here on must not close the number,
  // which the program may reuse (fork closes the open ones in the child).
  int fd = p->fd;
  __atomic_store_n(&p->fd, -1, __ATOMIC_RELEASE);
  close(fd);
  return NULL;
}

static pid_t (*real_fork)(void);
static pid_t (*real_waitpid)(pid_t, int*, int);

static void resolve_procs(void) {
  if (!real_fork) real_fork = dlsym(RTLD_NEXT, "fork");
  if (!real_waitpid) real_waitpid = dlsym(RTLD_NEXT, "waitpid");
}

// ---- the client's side (a forked child: C only) ----

static int client_fd = -1;
static int node_world;  // ranks started apart: the world size (procs below)
static int coord_pid;  // the coordinator, for the child's messages (getppid changes once it is gone)
static pthread_t client_owner;
static int client_owned;
static uint64_t client_gen;
static pchan* my_chan;      // this process's lane channel (pchan)
static int32_t my_slot;     // its slot
static uint64_t socks_seen;  // messages of the coordinator's read off the socket

int emud_client_active(void) { return client_fd >= 0; }

// client_map maps the chunks the coordinator mapped since the last look.
static void client_map(void) {
  if (!exts || exts->gen == client_gen) return;
  uint64_t gen = exts->gen, base = emud_resv_lo();
  for (int i = 0; i < exts->n; i++) {
    uint64_t lo = exts->ext[i][0], hi = exts->ext[i][1];
    if (mmap((void*)(uintptr_t)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, dev_fd, (off_t)(lo - base)) ==
        MAP_FAILED) {
      fprintf(stderr, "emud: forked rank process %d: cannot map device memory [%#llx, %#llx): %s\n", (int)getpid(),
              (unsigned long long)lo, (unsigned long long)hi, strerror(errno));
      _exit(1);
    }
  }
  client_gen = gen;
}

typedef struct local_lane {
  uint64_t id;
  emud_lane* l;
  struct local_lane* next;
} local_lane;
static local_lane* locals;

// client_exiting is a rank started apart's own exit status while it waits
// for its coordinator to end (node_on_exit).
static int client_exiting;

static void client_gone(void) {
  // The coordinator ended (its run failed and it exited with the run's
  // status, or it was killed): nothing can go on. After a failed run
  // this rank says nothing: the coordinator's report names it ("still
  // running"), and a line of its own, merged by a launcher (mpirun) with
  // the coordinator's stderr, could land inside that report.
  const char* kind = node_world ? "rank process" : "forked rank process";
  // A thread of a rank that is exiting (its lanes' server in a free
  // section) finds the socket shut: node_on_exit ends the process.
  if (__atomic_load_n(&client_exiting, __ATOMIC_ACQUIRE))
    for (;;) pause();
  int st = exts ? exts->run_status : 0;
  if (st != 0) _exit(st);
  fprintf(stderr, "emud: %s %d: the coordinator (process %d) is gone; this rank exits 1\n", kind, (int)getpid(), coord_pid);
  _exit(1);
}

// client_watch is a thread of a rank process that waits for its
// coordinator's end of the socket to close, and then ends the process:
// the main thread notices only when it reads the socket, which a rank
// running its own code (a lane or host loop that never calls emud, one
// the coordinator's spin watch reported) never does again.
static int watch_fd = -1;
static void* client_watch(void* arg) {
  (void)arg;
  for (;;) {
    struct pollfd pf = {watch_fd, 0, 0};  // no events asked: a hang-up or error only, reading nothing
    int r = poll(&pf, 1, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || (pf.revents & POLLNVAL)) return NULL;  // the process closed it itself
    if (!(pf.revents & (POLLHUP | POLLERR))) continue;
    if (exts && exts->coord_exited && !exts->run_status) return NULL;
    if (__atomic_load_n(&client_exiting, __ATOMIC_ACQUIRE)) return NULL;  // node_on_exit waits for the coordinator
    client_gone();
  }
}

static void client_watch_start(int fd) {
  watch_fd = fd;
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&at, 64 << 10);
  emud_enter();  // the runtime's own thread, not the program's
  int rc = pthread_create(&th, &at, client_watch, NULL);
  emud_leave();
  pthread_attr_destroy(&at);
  if (rc != 0)
    fprintf(stderr, "emud: rank process %d: cannot start the thread that watches the coordinator (%s); if the coordinator "
            "ends while this rank runs its own code, the rank stays\n", (int)getpid(), strerror(rc));
}

// emud_procs_status records the coordinator's failed run's status for its
// rank processes (client_gone).
void emud_procs_status(int code) {
  if (exts) exts->run_status = code;
}

// serve_lane runs the lane the channel's RESUME names until its next
// device call and puts the lane back in the slot.
static void serve_lane(void) {
  pchan* c = my_chan;
  pmsg* m = &c->m;
  if (m->kind != PM_RESUME) client_gone();
  client_map();
  local_lane** pp = &locals;
  while (*pp && (*pp)->id != m->lane) pp = &(*pp)->next;
  local_lane* ll = *pp;
  if (!ll) {
    ll = calloc(1, sizeof *ll);
    if (!ll) client_gone();
    ll->id = m->lane;
    ll->l = emud_lane_new((emud_entry)(uintptr_t)m->entry, (void*)(uintptr_t)m->arg);
    if (!ll->l) {
      fprintf(stderr, "emud: forked rank process %d: cannot allocate a lane's stack\n", (int)getpid());
      _exit(1);
    }
    ll->next = locals;
    locals = ll;
    pp = &locals;
  }
  const uint64_t id = m->lane;
  emud_lane* l = ll->l;
  // The lane's own runtime state and stack are this process's: the
  // mirror's copy has the coordinator's (none). The stack bounds bound
  // the walk for the lane's call context (hip_runtime.h context): with the
  // mirror's zeros every call had no context, so lanes of one wave at
  // different call chains of one helper line (a MORI-shaped header's
  // ds_bpermute, reached from two places) met as one lock-step point.
  void* impl = l->impl;
  const uint64_t slo = l->stack_lo, shi = l->stack_hi;
  lane_copy(l, &c->l);
  l->impl = impl;
  l->stack_lo = slo;
  l->stack_hi = shi;
  // The coordinator lent the lane its mirror, the first range it allows
  // (lanes.go runLane); here the lane is l. Only that entry: a range of
  // this process's (the launch's context) may start at the mirror's
  // address, which is the coordinator's heap, not this one's, and
  // "translating" it too left the lane's own arguments out of bounds.
  if (l->nallow > 0 && l->allow_lo[0] == id && l->allow_hi[0] == id + sizeof *l) {
    l->allow_lo[0] = (uint64_t)(uintptr_t)l;
    l->allow_hi[0] = (uint64_t)(uintptr_t)l + sizeof *l;
  }
  emud_resume(l);
  memset(m, 0, sizeof *m);
  m->kind = PM_YIELD;
  m->lane = id;
  const char* s = NULL;
  if (l->state == 1 && (l->op == EMUD_OP_UNSUPPORTED || l->op == EMUD_OP_TRAP) && l->a[0]) s = (const char*)(uintptr_t)l->a[0];
  if (s) {
    m->n = strnlen(s, sizeof c->str - 1) + 1;
    memcpy(c->str, s, m->n - 1);
    c->str[m->n - 1] = 0;
  }
  lane_copy(&c->l, l);
  emud_lane* back = &c->l;
  if (back->nallow > 0 && back->allow_lo[0] == (uint64_t)(uintptr_t)l &&
      back->allow_hi[0] == (uint64_t)(uintptr_t)l + sizeof *l) {
    back->allow_lo[0] = id;
    back->allow_hi[0] = id + sizeof *l;
  }
  if (l->state == 2 || l->state == 3) {
    *pp = ll->next;
    emud_lane_free(l);
    free(ll);
  }
  word_ring(&c->back, &c->back_sleep);
}

// client_next waits for the coordinator's next message, serving the
// lanes it resumes meanwhile: 1 with a message of the socket's header in
// r, 0 once *stop is set.
static int client_next(pmsg* r, volatile int* stop) {
  pchan* c = my_chan;
  // No spin before a first resume: a reply comes from the proxy, which a
  // spin here may keep from the CPU, and which takes a wake-up and the
  // call's own work anyway; once a lane of this process ran, the next
  // resume is likely near.
  int served = 0;
  for (;;) {
    uint32_t bell = __atomic_load_n(&c->bell, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c->resume, __ATOMIC_ACQUIRE)) {
      __atomic_store_n(&c->resume, 0, __ATOMIC_RELAXED);
      serve_lane();
      served = 1;
      continue;
    }
    if (__atomic_load_n(&c->socks, __ATOMIC_ACQUIRE) != socks_seen) {
      socks_seen++;
      if (recv_all(client_fd, r, sizeof *r) != 0) client_gone();
      client_map();
      return 1;
    }
    if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) return 0;
    if (word_wait(&c->bell, &c->bell_sleep, bell, &client_fd, &c->proc_cpu, &c->coord_cpu, &exts->resumed, my_slot,
                  served) != 0)
      client_gone();
  }
}

static int is_device(uint64_t p) { return p >= emud_resv_lo() && p < emud_resv_hi(); }

static void node_ready(void);
static int node_client_ready = 1;
static int client_reply(pmsg* m, uint64_t* a, void* out);
static int client_free_open;
static void client_free_end(void);

int emud_client_call(int op, uint64_t* a, const char* file, int line) {
  if (!node_client_ready) node_ready();
  if (client_free_open && pthread_equal(client_owner, pthread_self())) client_free_end();
  if (!client_owned) {
    client_owner = pthread_self();
    client_owned = 1;
  } else if (!pthread_equal(client_owner, pthread_self())) {
    fprintf(stderr,
            "emud: %s:%d: a HIP/cco call from a second thread of forked rank process %d: a forked rank is emulated with "
            "one host thread (partial); make the calls from the thread that made its first\n",
            file ? file : "?", line, (int)getpid());
    _exit(1);
  }
  pmsg m;
  memset(&m, 0, sizeof m);
  m.kind = PM_CALL;
  m.op = op;
  m.line = line;
  m.in_idx = m.out_idx = -1;
  memcpy(m.a, a, sizeof m.a);
  snprintf(m.file, sizeof m.file, "%s", file ? file : "?");
  const void* in = NULL;
  void* out = NULL;
  switch (op) {
    case EMUD_H_UNIQUE_ID:
      m.out_idx = 0, m.out_n = 128, out = (void*)(uintptr_t)a[0];
      break;
    case EMUD_H_COMM_CREATE:
      if (a[0]) m.in_idx = 0, m.n = 128, in = (void*)(uintptr_t)a[0];
      break;
    case EMUD_H_LAUNCH:
    case EMUD_H_UNSUPPORTED: {
      int i = op == EMUD_H_LAUNCH ? 11 : 0;
      if (a[i]) m.in_idx = i, in = (void*)(uintptr_t)a[i], m.n = strnlen(in, 4095) + 1;
      break;
    }
    case EMUD_H_MEMCPY:
    case EMUD_H_MEMSET: {
      uint64_t dst = a[0], src = a[1], n = a[2];
      int async = a[5] != 0;
      if (n == 0) break;
      if (n > (1ull << 30)) {
        fprintf(stderr, "emud: %s:%d: a host copy of %llu bytes in forked rank process %d: over the 1 GiB a forked rank "
                "stages per call (partial)\n", m.file, line, (unsigned long long)n, (int)getpid());
        _exit(1);
      }
      if (op == EMUD_H_MEMCPY && !is_device(src)) m.in_idx = 1, m.n = n, in = (void*)(uintptr_t)src;
      if (!is_device(dst)) {
        if (async) {
          fprintf(stderr, "emud: %s:%d: %s into pageable host memory in forked rank process %d is not emulated "
                  "(partial: a forked rank's host side is staged, so it could only land after the call); use the "
                  "synchronous call or hipHostMalloc's memory\n", m.file, line,
                  op == EMUD_H_MEMCPY ? "hipMemcpyAsync" : "hipMemsetAsync", (int)getpid());
          _exit(1);
        }
        m.out_idx = 0, m.out_n = n, out = (void*)(uintptr_t)dst;
      }
      break;
    }
  }
  if (m.in_idx >= 0 && m.in_idx == m.out_idx) m.out_idx = -1;  // not reached: in and out are different arguments
  if (send_all(client_fd, &m, sizeof m) || (m.n && send_all(client_fd, in, m.n))) client_gone();
  return client_reply(&m, a, out);
}

// client_serve handles a message of the socket from the coordinator that
// is not a reply: a grid's context to free.
static void client_serve(pmsg* r) {
  switch (r->kind) {
    case PM_FREE:
      ((emud_entry)(uintptr_t)r->entry)((void*)(uintptr_t)r->arg);
      break;
    default:
      client_gone();
  }
}

// client_reply waits for the reply to call m, serving the process's
// lanes meanwhile, and copies its results into a and out.
static int client_reply(pmsg* m, uint64_t* a, void* out) {
  for (;;) {
    pmsg r;
    client_next(&r, NULL);
    if (r.kind != PM_REPLY) {
      client_serve(&r);
      continue;
    }
    if (r.n != m->out_n || (r.n && recv_all(client_fd, out, r.n) != 0)) client_gone();
    for (int i = 0; i < 16; i++)
      if (i != m->in_idx && i != m->out_idx) a[i] = r.a[i];
    return r.rc;
  }
}

// ---- free sections (free.go): a blocking call outside emud ----
//
// A rank process's free section: its proxy gives the turn up (proxy_free)
// while the process makes the call; a thread of the process serves its
// lanes on the socket meanwhile (they may be resumed while the main
// thread is in the call), and stops before the process says it returned.

static pthread_t free_server;
static volatile int free_stop;  // the call returned: the main thread serves from here
static volatile uint32_t* free_word;
static int free_slot;
static pmsg free_call;

static void* free_serve(void* arg) {
  (void)arg;
  pmsg r;
  while (client_next(&r, &free_stop)) {
    if (r.kind == PM_REPLY) client_gone();  // no call is waiting for one
    client_serve(&r);
  }
  return NULL;
}

static int client_free_begin(const char* name) {
  uint64_t a[16] = {0};
  memset(&free_call, 0, sizeof free_call);
  free_call.kind = PM_CALL;
  free_call.op = EMUD_H_FREE_SECTION;
  free_call.in_idx = 0;
  free_call.out_idx = -1;
  free_call.n = strnlen(name, 63) + 1;
  snprintf(free_call.file, sizeof free_call.file, "%s", name);
  char nm[64];
  snprintf(nm, sizeof nm, "%s", name);
  if (send_all(client_fd, &free_call, sizeof free_call) || send_all(client_fd, nm, free_call.n)) client_gone();
  client_reply(&free_call, a, NULL);
  if (a[15] >= MAX_PROCS) client_gone();
  free_word = &exts->free_done[a[15]];
  free_slot = (int)a[15];
  __atomic_store_n(&free_stop, 0, __ATOMIC_RELEASE);
  emud_enter();  // the runtime's own thread, not the program's
  int rc = pthread_create(&free_server, NULL, free_serve, NULL);
  emud_leave();
  if (rc != 0) {
    fprintf(stderr, "emud: rank process %d: %s: cannot start the thread that serves its lanes\n", (int)getpid(), name);
    _exit(1);
  }
  client_free_open = 1;
  return 1;
}

static void client_free_end(void) {
  client_free_open = 0;
  __atomic_store_n(&free_stop, 1, __ATOMIC_RELEASE);
  word_ring(&my_chan->bell, &my_chan->bell_sleep);  // the server, if asleep, wakes to see it
  emud_enter();
  pthread_join(free_server, NULL);
  emud_leave();
  __atomic_store_n(free_word, 1, __ATOMIC_RELEASE);
  syscall(SYS_futex, free_word, FUTEX_WAKE, 1, NULL, NULL, 0);
  uint64_t a[16] = {0};
  client_reply(&free_call, a, NULL);
}

static __thread int free_local;  // this thread of the coordinator's process has a free section open
static __thread const char* volatile free_cur;  // the MPI call it is in now

// emud_free_begin opens a free section before a blocking call outside
// emud (mpi.c) when the calling thread holds a turn: 1 if it did, 0 if
// the call runs as it is (a section is open already, the emulation has
// not started, the thread is not a host thread, a rank process not yet
// taken in). The section stays open past the call, through the thread's
// own code and further such calls, until its next emud call
// (emud_free_close), so MPI calls in a row (a receive, then a send on)
// need no turn between them: one waiting on another rank's next MPI call
// never waits for a quiescent point to let that rank back in.
extern int emud_mpi_shim;

int emud_free_begin(const char* name) {
  if (!emud_mpi_shim) return 0;  // never: the reference keeps mpi.c linked in
  if (emud_client_active()) {
    if (!node_client_ready || emud_current() || emud_in_emud()) return 0;
    if (client_free_open) {
      if (pthread_equal(client_owner, pthread_self())) exts->free_name[free_slot] = name;
      return 0;
    }
    if (!client_owned) {
      client_owner = pthread_self();
      client_owned = 1;
    } else if (!pthread_equal(client_owner, pthread_self())) {
      return 0;  // not the rank's host thread: it holds no turn
    }
    return client_free_begin(name);
  }
  if (free_local) {
    free_cur = name;
    return 0;
  }
  if (!emud_started() || emud_forked() || emud_host_id() < 0 || emud_in_emud() || emud_current()) return 0;
  free_cur = NULL;
  emud_enter();
  emudGoFreeBegin((char*)name, (void*)&free_cur);
  emudGoFreeRelease();
  emud_leave();
  free_local = 1;
  return 1;
}

int emud_free_local(void) { return free_local; }

// emud_client_turn: the calling thread is a rank process's host thread,
// after its first call, in its own code (not a lane, an emud call or a
// free section): its sleeps and polls are emud calls, as a rank thread's
// are (psleep.c), so the ranks as processes give the threads' run.
int emud_client_turn(void) {
  return emud_client_active() && node_client_ready && client_owned && !client_free_open &&
         pthread_equal(client_owner, pthread_self()) && !emud_current() && !emud_in_emud();
}

// emud_free_close ends the calling thread's free section, if open, before
// it touches the emulation: it waits for a quiescent point to let it in.
void emud_free_close(void) {
  if (!free_local) return;
  free_local = 0;
  emud_enter();
  emudGoFreeEnd();
  emud_leave();
}

// ---- fork and waitpid ----

pid_t fork(void) {
  resolve_procs();
  if (emud_forked()) {
    // A rank's own child would share its rank's connection: it has none.
    pid_t pid = real_fork();
    if (pid == 0) {
      client_fd = -1;
      my_chan = NULL;
    }
    return pid;
  }
  if (emud_in_emud() || emud_current()) return real_fork();
  if (emud_host_id() == 0 && !emud_main_entered()) {
    // Forked before the main thread's first HIP call (MORI's harness
    // order): this process becomes the node's coordinator now.
    uint64_t a[16] = {0};
    emud_host(EMUD_H_START, a, "fork", 0);
  }
  if (!emud_started() || emud_host_id() < 0) return real_fork();  // not a host thread: no rank
  const char* what = "";
  int e = share_memory(&what);
  if (e) {
    fprintf(stderr, "emud: fork: cannot share the emulated node with a child (%s: %s); the child's HIP calls will fail\n", what,
            strerror(e));
    return real_fork();
  }
  // The rank's slot (its channel, pchan) is its before the fork, so the
  // child knows it; slots are never reused, as procs' entries are not.
  pthread_mutex_lock(&procs_mu);
  int slot = next_slot < MAX_PROCS ? next_slot++ : -1;
  pthread_mutex_unlock(&procs_mu);
  if (slot < 0) {
    fprintf(stderr, "emud: fork: more than %d ranks; the child gets no emulation (its HIP calls will fail)\n", MAX_PROCS);
    return real_fork();
  }
  chan_init(slot);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    fprintf(stderr, "emud: fork: socketpair: %s; the child's HIP calls will fail\n", strerror(errno));
    return real_fork();
  }
  fflush(NULL);
  coord_pid = (int)getpid();
  pid_t pid = real_fork();
  if (pid == 0) {
    close(sv[0]);
    // The coordinator's ends of the earlier ranks' sockets came along:
    // held here, they would keep those ranks from seeing the
    // coordinator's end when it dies (no hang-up while a copy is open).
    for (int i = 0; i < nprocs; i++)
      if (procs[i]->fd >= 0) close(procs[i]->fd);
    client_fd = sv[1];
    my_chan = &exts->chan[slot];
    my_slot = slot;
    client_gen = exts->gen;
    emud_fault_default();
    client_watch_start(client_fd);
    return 0;
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return pid;
  }
  proc* p = calloc(1, sizeof *p);
  if (!p) {
    fprintf(stderr, "emud: fork: out of memory; process %d gets no emulation\n", (int)pid);
    close(sv[0]);
    return pid;
  }
  p->fd = sv[0];
  p->pid = pid;
  p->host = -1;
  p->slot = slot;
  // The proxy is a host thread of the forking thread, made as a
  // std::thread's is (lane.c's pthread_create): so a rank process and a
  // rank thread take the same turns.
  if (pthread_create(&p->th, NULL, proxy, p) != 0) {
    fprintf(stderr, "emud: fork: cannot start the thread that serves process %d\n", (int)pid);
    close(sv[0]);
    free(p);
    return pid;
  }
  pthread_mutex_lock(&procs_mu);
  procs[nprocs++] = p;
  pthread_mutex_unlock(&procs_mu);
  return pid;
}

// waitpid for a forked rank, by a host thread, first waits in virtual
// time for the rank's proxy to end (a pthread_join, as a thread's
// std::thread::join), so the rank's calls get their turns; a real wait
// here would hold the turn the rank needs.
pid_t waitpid(pid_t pid, int* status, int options) {
  resolve_procs();
  if (!emud_forked() && emud_started() && emud_host_id() >= 0 && !emud_in_emud() && !emud_current() &&
      !(options & WNOHANG) && (pid > 0 || pid == -1)) {
    proc* p = NULL;
    pthread_mutex_lock(&procs_mu);
    for (int i = 0; i < nprocs && !p; i++)
      if (!procs[i]->joined && (pid == -1 || procs[i]->pid == pid)) p = procs[i];
    if (p) p->joined = 1;
    pthread_mutex_unlock(&procs_mu);
    if (p) {
      pthread_join(p->th, NULL);
      pid = p->pid;
    }
  }
  return real_waitpid(pid, status, options);
}

pid_t wait(int* status) { return waitpid(-1, status, 0); }

// ---- ranks started apart (EMUD_NODE) ----
//
// Processes started apart (a per-rank launcher, mpirun) share one node
// when EMUD_NODE names a socket path and the launcher's environment gives
// the rank and the world size (RANK and WORLD_SIZE, else OpenMPI's, PMI's
// or Slurm's). Rank 0 is the coordinator: it listens at load, and at its
// first HIP or cco call takes in the other world-1 ranks, each of which
// connected at its own load, and makes their proxies in rank order, so
// arrival order does not matter. A rank's calls and lanes then go as a
// forked rank's do; the memfds of the node's memory come with the reply
// to its hello (SCM_RIGHTS). Every rank must run the same program image
// (lanes' file names and the runtime's object pool are at the same
// addresses): the coordinator checks it.

typedef struct {
  uint32_t magic;
  int32_t rank, world, pid;
  uint64_t image, pool;  // the program's image and object pool, as the rank has them
} node_hello;

typedef struct {
  uint32_t magic;
  int32_t ok, race, pid;  // pid: rank 0's
  uint64_t arena;
  int32_t slot, pad;  // the rank's channel (pchan)
  char err[400];
} node_setup;

#define NODE_MAGIC 0x656d6e64u
static int node_listen = -1;  // rank 0: the listening socket, until its first call

static int env_int(const char* const* names, int* v) {
  for (; *names; names++) {
    const char* e = getenv(*names);
    if (e && *e) {
      char* end = NULL;
      long n = strtol(e, &end, 10);
      if (end && !*end && n >= 0 && n < 1 << 20) {
        *v = (int)n;
        return 1;
      }
    }
  }
  return 0;
}


static int node_addr(struct sockaddr_un* a, const char* path) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a->sun_path) return -1;
  strcpy(a->sun_path, path);
  return 0;
}

__attribute__((format(printf, 1, 2))) static void node_die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "emud: EMUD_NODE=%s: ", getenv("EMUD_NODE"));
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  _exit(1);
}

static int node_timeout(void) {
  const char* e = getenv("EMUD_NODE_TIMEOUT");
  char* end = NULL;
  long s = e && *e ? strtol(e, &end, 10) : 60;
  if (e && *e && (!end || *end || s < 1 || s > 86400)) node_die("EMUD_NODE_TIMEOUT=%s: want whole seconds, 1 to 86400", e);
  return (int)s;
}

// node_on_exit runs when a rank started apart exits with a status other
// than 0 (a failed check, say). A launcher such as mpirun ends the whole
// job at the first rank that does, rank 0 too, before rank 0's run could
// report (a race the failed check came from, a hang). So the rank ends
// its part of the run here (its proxy sees the socket's end, as at an
// exit) and waits for rank 0's process to end, then exits with the
// failed run's status if it failed (as a rank whose coordinator is gone
// does), else with its own; the launcher hears of rank 0 first.
static void node_on_exit(int status, void* arg) {
  (void)arg;
  if (status == 0 || client_fd < 0 || !node_client_ready || coord_pid <= 0 || (exts && exts->coord_exited)) return;
  __atomic_store_n(&client_exiting, status, __ATOMIC_RELEASE);
  fflush(NULL);
  shutdown(client_fd, SHUT_WR);
  int pfd = (int)syscall(SYS_pidfd_open, coord_pid, 0);
  for (;;) {
    if (pfd >= 0) {
      struct pollfd pf = {pfd, POLLIN, 0};
      if (poll(&pf, 1, -1) >= 0 || errno != EINTR) break;
    } else {
      if (kill(coord_pid, 0) != 0 && errno == ESRCH) break;
      struct timespec ts = {0, 10000000};
      nanosleep(&ts, NULL);
    }
  }
  if (exts && exts->run_status) _exit(exts->run_status);
}

__attribute__((constructor(103))) static void node_join(void) {
  const char* path = getenv("EMUD_NODE");
  static const char* const ranks[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL};
  static const char* const worlds[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};
  int rank = -1, world = -1;
  if (!path || !*path) return;
  if (!env_int(ranks, &rank) || !env_int(worlds, &world))
    node_die("the launcher gives no rank and world size (RANK and WORLD_SIZE, or OpenMPI's, PMI's or Slurm's)");
  if (world < 1 || rank >= world) node_die("rank %d is outside the world size %d", rank, world);
  if (world == 1) return;
  struct sockaddr_un a;
  if (node_addr(&a, path)) node_die("the socket path is too long (%d bytes at most)", (int)sizeof a.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) node_die("socket: %s", strerror(errno));
  node_world = world;
  if (rank == 0) {
    unlink(path);  // a socket left by an earlier job
    if (bind(fd, (struct sockaddr*)&a, sizeof a) != 0 || listen(fd, world) != 0)
      node_die("rank 0 cannot listen there: %s", strerror(errno));
    node_listen = fd;
    return;
  }
  // Another rank: connect (rank 0 may start later) and say who it is;
  // the setup comes back when rank 0 makes its first call.
  int tries = node_timeout() * 100;
  while (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    if (--tries <= 0)
      node_die("rank %d cannot reach rank 0's node there in %d s (EMUD_NODE_TIMEOUT): is rank 0 running this job, or did the job end?",
               rank, node_timeout());
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  size_t pn;
  node_hello h = {NODE_MAGIC, rank, world, (int)getpid(), (uint64_t)(uintptr_t)&node_join,
                  (uint64_t)(uintptr_t)emud_obj_pool(&pn)};
  if (send_all(fd, &h, sizeof h)) node_die("rank 0's node closed the connection");
  client_fd = fd;
  node_client_ready = 0;
  on_exit(node_on_exit, NULL);
}

// node_ready takes the setup a rank started apart gets from rank 0: the
// memfds of device memory, the extent table, the arena and the object
// pool, mapped where rank 0 has them.
static void node_ready(void) {
  node_setup st;
  int fds[4];
  char cbuf[CMSG_SPACE(sizeof fds)];
  struct iovec iov = {&st, sizeof st};
  struct msghdr mh = {0};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = cbuf;
  mh.msg_controllen = sizeof cbuf;
  ssize_t r = recvmsg(client_fd, &mh, MSG_WAITALL);
  if (r != (ssize_t)sizeof st || st.magic != NODE_MAGIC)
    node_die("rank 0's node ended before it took this rank in");
  if (!st.ok) node_die("rank 0 refused this rank: %s", st.err);
  coord_pid = st.pid;
  if (st.slot < 0 || st.slot >= MAX_PROCS) node_die("rank 0 gave this rank no channel (slot %d)", st.slot);
  struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
  if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof fds)) node_die("rank 0 sent no memory");
  memcpy(fds, CMSG_DATA(c), sizeof fds);
  dev_fd = fds[0];
  exts = mmap(NULL, sizeof *exts, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
  // The arena's room is reserved here as in rank 0 (lane.c), at the same
  // address unless EMUD_BASE differs between the two.
  if (st.arena != emud_resv_arena())
    node_die("rank 0's shared arena is at 0x%llx, this process reserved 0x%llx for it (is EMUD_BASE the same in every rank?)",
             (unsigned long long)st.arena, (unsigned long long)emud_resv_arena());
  arena = mmap((void*)(uintptr_t)st.arena, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fds[2], 0);
  size_t pn;
  void* pool = emud_obj_pool(&pn);
  void* pm = mmap(pool, pn, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fds[3], 0);
  if (exts == MAP_FAILED || arena != (void*)(uintptr_t)st.arena || pm != pool)
    node_die("cannot map rank 0's node memory here (%s)", strerror(errno));
  my_chan = &exts->chan[st.slot];
  my_slot = st.slot;
  client_gen = 0;
  client_map();
  emud_set_race(st.race);
  emud_install_fault_handlers();
  node_client_ready = 1;
  client_watch_start(client_fd);
}

static int node_reply(int fd, node_setup* st) {
  int fds[4] = {dev_fd, ext_fd, arena_fd, pool_fd};
  char cbuf[CMSG_SPACE(sizeof fds)];
  memset(cbuf, 0, sizeof cbuf);
  struct iovec iov = {st, sizeof *st};
  struct msghdr mh = {0};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (st->ok) {
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(c), fds, sizeof fds);
  }
  return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof *st ? 0 : -1;
}

static void node_atexit(void) {
  // Rank 0's program ends: the other ranks' proxies are its threads, so
  // it waits for them in virtual time, as it would join threads.
  if (emud_forked() || emud_host_id() != 0) return;
  for (int i = 0; i < nprocs; i++)
    if (!procs[i]->joined) {
      procs[i]->joined = 1;
      pthread_join(procs[i]->th, NULL);
    }
}

// emud_node_serve is rank 0's first call: it takes in the world's other
// ranks, in rank order, before the call goes on.
void emud_node_serve(void) {
  if (node_listen < 0 || emud_host_id() != 0 || emud_in_emud()) return;
  int lfd = node_listen;
  node_listen = -1;
  uint64_t a[16] = {0};
  emud_host(EMUD_H_START, a, "EMUD_NODE", 0);
  const char* what = "";
  int e = share_memory(&what);
  if (e) node_die("rank 0 cannot share its node (%s): %s", what, strerror(e));
  int n = node_world - 1;
  int* fds = calloc((size_t)n, sizeof *fds);
  int* pids = calloc((size_t)n, sizeof *pids);
  if (!fds || !pids) node_die("out of memory");
  for (int i = 0; i < n; i++) fds[i] = -1;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  size_t pn;
  void* pool = emud_obj_pool(&pn);
  for (int got = 0; got < n;) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - t0.tv_sec > node_timeout()) {
      char missing[300] = "";
      for (int r = 1; r <= n; r++)
        if (fds[r - 1] < 0 && strlen(missing) < sizeof missing - 12)
          snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %d", r);
      node_die("rank 0 waited %d s (EMUD_NODE_TIMEOUT) for ranks that never came:%s", node_timeout(), missing);
    }
    struct pollfd pf = {lfd, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0) continue;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) continue;
    node_hello h;
    node_setup st;
    memset(&st, 0, sizeof st);
    st.magic = NODE_MAGIC;
    if (recv_all(fd, &h, sizeof h) || h.magic != NODE_MAGIC) {
      close(fd);
      continue;
    }
    if (h.world != node_world)
      snprintf(st.err, sizeof st.err, "its world size %d is not rank 0's %d (another job's rank?)", h.world, node_world);
    else if (h.rank < 1 || h.rank > n || fds[h.rank - 1] >= 0)
      snprintf(st.err, sizeof st.err, "rank %d is taken or out of range", h.rank);
    else if (h.image != (uint64_t)(uintptr_t)&node_join || h.pool != (uint64_t)(uintptr_t)pool)
      snprintf(st.err, sizeof st.err, "it runs another program image than rank 0 (every rank must run the same "
               "non-position-independent program)");
    if (st.err[0]) {
      node_reply(fd, &st);
      close(fd);
      continue;
    }
    fds[h.rank - 1] = fd;
    pids[h.rank - 1] = h.pid;
    got++;
  }
  close(lfd);
  unlink(getenv("EMUD_NODE"));
  for (int r = 1; r <= n; r++) {
    node_setup st;
    memset(&st, 0, sizeof st);
    st.magic = NODE_MAGIC;
    st.ok = 1;
    st.race = emud_race_on();
    st.pid = (int32_t)getpid();
    st.arena = (uint64_t)(uintptr_t)arena;
    pthread_mutex_lock(&procs_mu);
    st.slot = next_slot < MAX_PROCS ? next_slot++ : -1;
    pthread_mutex_unlock(&procs_mu);
    if (st.slot < 0) node_die("more than %d ranks", MAX_PROCS);
    chan_init(st.slot);
    if (node_reply(fds[r - 1], &st)) node_die("rank %d went away before it was taken in", r);
    proc* p = calloc(1, sizeof *p);
    if (!p) node_die("out of memory");
    p->fd = fds[r - 1];
    p->pid = pids[r - 1];
    p->host = -1;
    p->apart = 1;
    p->slot = st.slot;
    if (pthread_create(&p->th, NULL, proxy, p) != 0) node_die("cannot start the thread that serves rank %d", r);
    pthread_mutex_lock(&procs_mu);
    procs[nprocs++] = p;
    pthread_mutex_unlock(&procs_mu);
  }
  free(fds);
  free(pids);
  atexit(node_atexit);
}
