// Host threads' sleeps, yields and polls pass in virtual time (and a rank
// process's host thread's, through its proxy): a host
// thread holds its turn between emud calls, so a loop that waits for
// another host thread natively (while (!ready.load())
// std::this_thread::sleep_for(1ms); a yield loop; a bare spin on an
// atomic or volatile flag) held it, the other thread never ran, and the
// run ended as a spin hang. For a host thread in its turn (emud_host_turn):
//  - nanosleep, clock_nanosleep, usleep and sleep sleep their time in
//    virtual time (an absolute clock_nanosleep its time left, rounded up
//    to a whole millisecond), and return at once in wall time;
//  - sched_yield (std::this_thread::yield) sleeps 1 µs of virtual time, so
//    a yield loop lets virtual time pass for the work it waits for;
//  - EMUD_HOST_POLL_RUN atomic operations in a row that repeat a cycle of
//    at most 8, each at the same site and address seeing and writing the
//    same values as one cycle before (emud c++ instruments host code;
//    lane.c calls emud_host_poll for atomic and volatile loads and for
//    read-modify-writes that change nothing, pmutex.c and psync.c for
//    locks taken and let go): a flag polled, a failed test-and-set or
//    compare-and-swap retried, a lock taken to read a flag and let go,
//    again and again, are a poll: the thread sleeps 1 µs of virtual
//    time, then goes on. A loop whose values change (a counter) is not.
// Everywhere else they are the C library's. Partial: a poll on a plain
// load, or in code built with -fno-sanitize=thread, is still the spin
// hang (the compiler may keep a plain load's value in a register).
#define _GNU_SOURCE
#define EMUD_PMUTEX_IMPL
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "lane.h"

#define EMUD_HOST_POLL_RUN 64
#define EMUD_YIELD_NS 1000

static int (*real_nanosleep)(const struct timespec*, struct timespec*);
static int (*real_clock_nanosleep)(clockid_t, int, const struct timespec*, struct timespec*);
static int (*real_usleep)(useconds_t);
static unsigned (*real_sleep)(unsigned);
static int (*real_sched_yield)(void);

static void resolve(void) {
  if (__atomic_load_n(&real_sched_yield, __ATOMIC_ACQUIRE)) return;
  real_nanosleep = (int (*)(const struct timespec*, struct timespec*))dlsym(RTLD_NEXT, "nanosleep");
  real_clock_nanosleep = (int (*)(clockid_t, int, const struct timespec*, struct timespec*))dlsym(RTLD_NEXT, "clock_nanosleep");
  real_usleep = (int (*)(useconds_t))dlsym(RTLD_NEXT, "usleep");
  real_sleep = (unsigned (*)(unsigned))dlsym(RTLD_NEXT, "sleep");
  __atomic_store_n(&real_sched_yield, (int (*)(void))dlsym(RTLD_NEXT, "sched_yield"), __ATOMIC_RELEASE);
}
__attribute__((constructor)) static void resolve_early(void) { resolve(); }

int emud_real_nanosleep(const struct timespec* req, struct timespec* rem) {
  resolve();
  return real_nanosleep(req, rem);
}

enum { SLEEP_SLEEP = 1, SLEEP_YIELD = 2, SLEEP_POLL = 3, SLEEP_RETRY = 4 };

// A host thread in its turn, or a rank process's host thread in its own
// code: a rank process's sleeps and polls are its proxy's, in virtual
// time, as a rank thread's are (its mutexes and condition variables stay
// native: its other threads are not host threads).
// An early thread that the adoption made a host thread calls in here
// (lane.c), or its sleep loop would hold the turn it was given.
static int sleeps_virtual(void) { return emud_host_turn() || emud_client_turn() || emud_early_attach(); }

// vsleep_at is EMUD_H_THREAD_SLEEP (psleep.go): ns of virtual time, why,
// and the site of a poll or retry (a pc) for its report.
static int vsleep_at(uint64_t ns, uint64_t why, const char* name, void* pc) {
  uint64_t a[16] = {ns, why, (uint64_t)(uintptr_t)pc};
  return emud_host(EMUD_H_THREAD_SLEEP, a, name, 0);
}
static int vsleep(uint64_t ns, uint64_t why, const char* name) { return vsleep_at(ns, why, name, NULL); }

static int valid(const struct timespec* t) { return t && t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000; }

static uint64_t ns_of(const struct timespec* t) {
  if ((uint64_t)t->tv_sec > (UINT64_MAX - 1000000000) / 1000000000) return UINT64_MAX / 2;
  return (uint64_t)t->tv_sec * 1000000000 + (uint64_t)t->tv_nsec;
}

int nanosleep(const struct timespec* req, struct timespec* rem) {
  resolve();
  if (sleeps_virtual() && valid(req)) {
    if (vsleep(ns_of(req), SLEEP_SLEEP, "nanosleep") != 0) return real_nanosleep(req, rem);
    if (rem) rem->tv_sec = 0, rem->tv_nsec = 0;
    return 0;
  }
  return real_nanosleep(req, rem);
}

int clock_nanosleep(clockid_t clk, int flags, const struct timespec* req, struct timespec* rem) {
  resolve();
  if (sleeps_virtual() && valid(req) && (clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC)) {
    uint64_t ns = ns_of(req);
    if (flags & TIMER_ABSTIME) {
      struct timespec now;
      if (clock_gettime(clk, &now) != 0) return real_clock_nanosleep(clk, flags, req, rem);
      const uint64_t at = ns_of(&now), ms = 1000000;
      ns = ns > at ? (ns - at + ms - 1) / ms * ms : 0;
      // What is left of the deadline passes natively after, for a
      // caller that reads the clock again.
      if (vsleep(ns, SLEEP_SLEEP, "clock_nanosleep") != 0) return real_clock_nanosleep(clk, flags, req, rem);
      return real_clock_nanosleep(clk, flags, req, rem);
    }
    if (vsleep(ns, SLEEP_SLEEP, "clock_nanosleep") != 0) return real_clock_nanosleep(clk, flags, req, rem);
    if (rem) rem->tv_sec = 0, rem->tv_nsec = 0;
    return 0;
  }
  return real_clock_nanosleep(clk, flags, req, rem);
}

int usleep(useconds_t us) {
  resolve();
  if (sleeps_virtual() && vsleep((uint64_t)us * 1000, SLEEP_SLEEP, "usleep") == 0) return 0;
  return real_usleep(us);
}

unsigned sleep(unsigned s) {
  resolve();
  if (sleeps_virtual() && vsleep((uint64_t)s * 1000000000, SLEEP_SLEEP, "sleep") == 0) return 0;
  return real_sleep(s);
}

int sched_yield(void) {
  resolve();
  if (sleeps_virtual() && vsleep(EMUD_YIELD_NS, SLEEP_YIELD, "sched_yield") == 0) return 0;
  return real_sched_yield();
}

// The thread's recent atomic operations (host_ops) as keys of their
// address, site and values; run[L] counts the operations in a row that
// repeat the one L before them, so a loop of L operations that sees and
// writes the same values each time (a flag polled; a lock taken, a flag
// read under it and the lock let go) keeps run[L] growing. poll_n counts
// the operations in a row made inside such a cycle.
#define HOST_CYCLE 8
static __thread uint64_t host_ops[HOST_CYCLE];
static __thread unsigned host_op_n;
static __thread unsigned run[HOST_CYCLE + 1];
static __thread int poll_n;

static uint64_t op_key(const volatile void* p, uint64_t v, void* pc) {
  uint64_t k = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
  k ^= (v + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
  k ^= (uint64_t)(uintptr_t)pc * 0xff51afd7ed558ccdull;
  return k ^ (k >> 29);
}

// emud_host_op notes one: may_sleep is 0 for one that may have taken a
// lock (a read-modify-write that changed the word, a pthread lock), so
// that the poll's sleep comes at a later one (the unlock), with the lock
// free for the threads it lets run.
void emud_host_op(const volatile void* p, uint64_t v, void* pc, int may_sleep) {
  const uint64_t k = op_key(p, v, pc);
  int cycle = 0;
  for (unsigned l = 1; l <= HOST_CYCLE; l++) {
    if (host_op_n >= l && host_ops[(host_op_n - l) % HOST_CYCLE] == k) {
      if (++run[l] >= l) cycle = 1;
    } else {
      run[l] = 0;
    }
  }
  host_ops[host_op_n++ % HOST_CYCLE] = k;
  if (!cycle) {
    poll_n = 0;
    return;
  }
  if (++poll_n < EMUD_HOST_POLL_RUN || !may_sleep) return;
  poll_n = 0;
  if (sleeps_virtual()) vsleep_at(EMUD_YIELD_NS, SLEEP_POLL, "a poll of its own", pc);
}

void emud_host_poll(const volatile void* p, uint64_t v, void* pc) { emud_host_op(p, v, pc, 1); }

// emud_host_retry sleeps 1 µs of virtual time between two tries of a
// lock or a once in progress (psync.c): 0, or not a host thread's turn.
int emud_host_retry(const char* name, void* pc) {
  if (!emud_host_turn()) return -1;
  return vsleep_at(EMUD_YIELD_NS, SLEEP_RETRY, name, pc);
}
