// pthread mutexes and condition variables between host threads wait in
// virtual time (std::mutex and std::condition_variable are built on
// them): a host thread holds its turn between emud calls, so a real
// pthread_cond_wait would hold it while the thread that is to signal
// waits for a turn that never comes (rank 0 makes the unique id and
// notifies the others), and a real pthread_mutex_lock would hold it while
// the owner, parked in an emud call inside its critical section, waits
// for one. Both were a false hang (the spin watch's report).
//
// Once the emulation is built, for a host thread in its turn (not in a
// lane, an emud call or a free section, not a forked rank):
//  - pthread_mutex_lock takes the lock if it is free (trylock). If another
//    host thread owns it (glibc's owner field), the wait is an emud call
//    (capi/pmutex.go) that returns when some thread unlocks it; an owner
//    emud does not run (a library's thread, a host thread in an MPI free
//    section) is waited for as before, natively.
//  - pthread_mutex_unlock unlocks and, if host threads wait for the
//    mutex in virtual time, wakes them.
//  - pthread_cond_wait, pthread_cond_timedwait and pthread_cond_clockwait
//    unlock the mutex, wait in virtual time for a signal or broadcast
//    and lock it again as above. A timed wait waits at most the time left
//    to its deadline, as virtual time; if that passes, it waits natively,
//    holding its turn, for what is left of the deadline in wall time (the
//    C++ library reads the clock after the call to tell a timeout).
//  - pthread_cond_signal and pthread_cond_broadcast wake the condition's
//    virtual-time waiters (a signal wakes every one of them: POSIX allows
//    a wait to return spuriously, and a program loops on its predicate),
//    and signal natively too, for threads emud does not run.
// Under the race detector (EMUD_RACE=1) each unlock and each wake
// releases a synchronisation of the object that each lock and each
// return from a wait acquires. Everywhere else these are glibc's.
// Partial: a wait whose signaller is a thread emud does not run is
// woken only natively, never in virtual time (a hang report); glibc's
// owner field is read, so another C library's mutexes are always locked
// natively.
#define _GNU_SOURCE
#define EMUD_PMUTEX_IMPL
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "lane.h"

static int (*real_lock_fn)(pthread_mutex_t*);
static int (*real_unlock_fn)(pthread_mutex_t*);
static int (*real_trylock_fn)(pthread_mutex_t*);
static int (*real_timedlock)(pthread_mutex_t*, const struct timespec*);
static int (*real_cond_wait)(pthread_cond_t*, pthread_mutex_t*);
static int (*real_cond_timedwait)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
static int (*real_cond_clockwait)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
static int (*real_cond_signal)(pthread_cond_t*);
static long (*real_syscall)(long, ...);
static int (*real_cond_broadcast)(pthread_cond_t*);

// glibc has old condition variables at the base version too: the default
// version of each call is the one programs link against.
static void* real_sym(const char* name) {
  void* p = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
  return p ? p : dlsym(RTLD_NEXT, name);
}

// resolve looks the C library's calls up, once: from a constructor, or
// from the first call if one comes before it (the C library's own locks,
// the loader's and malloc's, never call these interposers, so a lookup
// does not recurse).
static void resolve(void) {
  if (__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) return;
  real_lock_fn = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  real_unlock_fn = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
  real_trylock_fn = (int (*)(pthread_mutex_t*))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
  real_timedlock = (int (*)(pthread_mutex_t*, const struct timespec*))dlsym(RTLD_NEXT, "pthread_mutex_timedlock");
  real_cond_wait = (int (*)(pthread_cond_t*, pthread_mutex_t*))real_sym("pthread_cond_wait");
  real_cond_timedwait = (int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*))real_sym("pthread_cond_timedwait");
  real_cond_clockwait = (int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*))dlsym(RTLD_NEXT, "pthread_cond_clockwait");
  real_cond_signal = (int (*)(pthread_cond_t*))real_sym("pthread_cond_signal");
  real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  __atomic_store_n(&real_cond_broadcast, (int (*)(pthread_cond_t*))real_sym("pthread_cond_broadcast"), __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void resolve_early(void) { resolve(); }

static int real_lock(pthread_mutex_t* m) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  return real_lock_fn(m);
}
static int real_unlock(pthread_mutex_t* m) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  return real_unlock_fn(m);
}
static int real_trylock(pthread_mutex_t* m) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  return real_trylock_fn(m);
}

int emud_real_mutex_lock(pthread_mutex_t* m) { return real_lock(m); }
int emud_real_mutex_unlock(pthread_mutex_t* m) { return real_unlock(m); }

// A host thread in its turn, outside emud: the calls wait in virtual time.
int emud_host_turn(void) {
  return emud_started() && !emud_run_over() && !emud_forked() && !emud_client_active() && !emud_in_emud() &&
         emud_host_id() >= 0 && emud_current() == NULL && !emud_free_local();
}
#define emulated emud_host_turn

// The objects host threads wait for in virtual time, with their waiters:
// touched only by host threads in their turns, one at a time, so an
// unlock or a signal with nobody waiting costs no emud call.
#define NWAITED 256
static struct {
  const void* obj;
  int n;
} waited[NWAITED];
static int nwaiting;  // the sum of waited[].n

static int waiters(const void* obj) {
  if (nwaiting == 0) return 0;
  for (int i = 0; i < NWAITED; i++)
    if (waited[i].obj == obj) return waited[i].n;
  return 0;
}

static int note_waiter(const void* obj, int d) {
  int free_slot = -1;
  for (int i = 0; i < NWAITED; i++) {
    if (waited[i].obj == obj) {
      waited[i].n += d;
      nwaiting += d;
      if (waited[i].n == 0) waited[i].obj = NULL;
      return 0;
    }
    if (free_slot < 0 && waited[i].obj == NULL) free_slot = i;
  }
  if (d < 0 || free_slot < 0) return -1;
  waited[free_slot].obj = obj;
  waited[free_slot].n = d;
  nwaiting += d;
  return 0;
}

// sync_call is EMUD_H_THREAD_SYNC (pmutex.go): what, the object, the
// mutex owner's thread id or the timeout, the clock. The result is the
// call's a[4] (1: the owner is not a thread emud runs; 1: timed out).
static int sync_call(uint64_t what, const void* obj, uint64_t x, uint64_t clock, const char* name, int* out) {
  uint64_t a[16] = {what, (uint64_t)(uintptr_t)obj, x, clock};
  int rc = emud_host(EMUD_H_THREAD_SYNC, a, name, 0);
  if (out) *out = (int)a[4];
  return rc;
}

enum { SYNC_MUTEX_WAIT = 1, SYNC_COND_WAIT = 2, SYNC_WAKE = 3, SYNC_RELEASE = 4, SYNC_ACQUIRE = 5, SYNC_FUTEX_WAIT = 6 };

// For psync.c's semaphores, read-write locks and once calls.
int emud_thread_sync(uint64_t what, const void* obj, uint64_t x, uint64_t kind, const char* name, uint64_t out[2]) {
  uint64_t a[16] = {what, (uint64_t)(uintptr_t)obj, x, kind};
  int rc = emud_host(EMUD_H_THREAD_SYNC, a, name, 0);
  if (out) out[0] = a[4], out[1] = a[5];
  return rc;
}
int emud_note_waiter(const void* obj, int d) { return note_waiter(obj, d); }
int emud_waiters(const void* obj) { return waiters(obj); }

// lock_emulated locks m for a host thread in its turn.
static int lock_emulated(pthread_mutex_t* m) {
  for (;;) {
    int rc = real_trylock(m);
    if (rc == 0) {
      if (emud_race_on()) sync_call(SYNC_ACQUIRE, m, 0, 0, "pthread_mutex_lock", NULL);
      return 0;
    }
    if (rc != EBUSY) return rc;
#ifdef __GLIBC__
    int owner = m->__data.__owner;
#else
    int owner = 0;
#endif
    if (owner <= 0 || note_waiter(m, 1) != 0) return real_lock(m);
    int native = 0;
    rc = sync_call(SYNC_MUTEX_WAIT, m, (uint64_t)owner, 0, "pthread_mutex_lock", &native);
    note_waiter(m, -1);
    if (rc != 0) return rc;
    if (native) return real_lock(m);  // its owner runs outside the turns (or is this thread)
  }
}

int pthread_mutex_lock(pthread_mutex_t* m) {
  if (!emulated()) {
    if (!emud_early_unattached()) return real_lock(m);
    // An early thread (lane.c): natively, in slices, until it is adopted.
    for (;;) {
      int rc = real_trylock(m);
      if (rc != EBUSY) return rc;
      if (emud_early_attach()) break;
      struct timespec at;
      emud_early_slice(CLOCK_REALTIME, NULL, &at);
      rc = real_timedlock(m, &at);
      if (rc != ETIMEDOUT) return rc;
    }
  }
  int rc = lock_emulated(m);
  if (rc == 0) emud_host_op(m, EMUD_POLL_LOCK, __builtin_return_address(0), 0);  // a lock in a loop may poll (psleep.c)
  return rc;
}

// A trylock that succeeds is a lock for the race detector; a run of
// them that fail is a poll.
int pthread_mutex_trylock(pthread_mutex_t* m) {
  int rc = real_trylock(m);
  // An early thread's try_lock loop calls in once it is adopted (lane.c),
  // so that the loop is a host poll and lets the owner run.
  if (!emulated() && (rc != EBUSY || !emud_early_unattached() || !emud_early_attach())) return rc;
  if (rc == 0 && emud_race_on()) sync_call(SYNC_ACQUIRE, m, 0, 0, "pthread_mutex_trylock", NULL);
  if (rc == 0 || rc == EBUSY) emud_host_op(m, rc == 0 ? EMUD_POLL_LOCK : EMUD_POLL_BUSY, __builtin_return_address(0), rc != 0);
  return rc;
}

static int unlock_emulated(pthread_mutex_t* m) {
  if (emud_race_on()) sync_call(SYNC_RELEASE, m, 0, 0, "pthread_mutex_unlock", NULL);
  int rc = real_unlock(m);
  if (rc == 0 && waiters(m) > 0) sync_call(SYNC_WAKE, m, 0, 0, "pthread_mutex_unlock", NULL);
  return rc;
}

int pthread_mutex_unlock(pthread_mutex_t* m) {
  if (!emulated()) return real_unlock(m);
  int rc = unlock_emulated(m);
  if (rc == 0) emud_host_poll(m, EMUD_POLL_UNLOCK, __builtin_return_address(0));  // its sleep with the mutex free
  return rc;
}

// cond_wait waits for c in virtual time: timeout_ns < 0 none. A timed
// wait that times out in virtual time goes on natively until its
// deadline (timed), holding the turn: the C++ library reads the clock
// again after the call and takes the wait as timed out only once its
// deadline has passed in wall time.
static int cond_wait(pthread_cond_t* c, pthread_mutex_t* m, int64_t timeout_ns, const char* name,
                     int (*timed)(pthread_cond_t*, pthread_mutex_t*, void*), void* arg) {
  if (note_waiter(c, 1) != 0) return -1;  // the table is full: natively
  int rc = unlock_emulated(m);
  if (rc != 0) {
    note_waiter(c, -1);
    return rc;
  }
  int timed_out = 0;
  rc = sync_call(SYNC_COND_WAIT, c, timeout_ns < 0 ? UINT64_MAX : (uint64_t)timeout_ns, 0, name, &timed_out);
  note_waiter(c, -1);
  int lrc = lock_emulated(m);
  if (rc != 0) return rc;
  if (lrc != 0) return lrc;
  return timed_out ? timed(c, m, arg) : 0;
}

struct deadline {
  clockid_t clock;
  const struct timespec* at;
};

static int native_clockwait(pthread_cond_t* c, pthread_mutex_t* m, void* arg) {
  struct deadline* d = arg;
  if (real_cond_clockwait) return real_cond_clockwait(c, m, d->clock, d->at);
  return real_cond_timedwait(c, m, d->at);
}

static int native_timedwait(pthread_cond_t* c, pthread_mutex_t* m, void* arg) {
  return real_cond_timedwait(c, m, ((struct deadline*)arg)->at);
}

static int valid_ts(const struct timespec* t);

// early_cond_wait is an early thread's wait (lane.c): it lets the mutex
// go, waits on the condition natively for a millisecond (or to the
// caller's deadline if sooner) with a mutex of its own, and locks the
// mutex again through pthread_mutex_lock, whose early path waits in
// slices too. The end of the slice is a spurious wake-up (POSIX allows
// them: the caller loops on its predicate). glibc's own wait would take
// the mutex back natively, unsliced, and hold the thread there while its
// owner, a host thread, waited for the turn the adoption gave this one.
// Once adopted, the thread calls in with the mutex let go, and its next
// wait is in virtual time.
static int early_cond_wait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock, const struct timespec* deadline) {
  static __thread pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
  struct timespec at;
  const int mine = emud_early_slice(clock, deadline, &at);
  int rc = real_unlock(m);
  if (rc != 0) return rc;
  if (!emud_early_attach()) {
    real_lock(&own);
    rc = real_cond_clockwait ? real_cond_clockwait(c, &own, clock, &at) : real_cond_timedwait(c, &own, &at);
    real_unlock(&own);
  }
  int lrc = pthread_mutex_lock(m);
  if (lrc != 0) return lrc;
  return rc == ETIMEDOUT && mine ? ETIMEDOUT : 0;
}

int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  if (!emulated() && emud_early_unattached()) {
    int rc = early_cond_wait(c, m, CLOCK_MONOTONIC, NULL);
    if (rc >= 0) return rc;
  }
  if (emulated()) {
    int rc = cond_wait(c, m, -1, "pthread_cond_wait", NULL, NULL);
    if (rc >= 0) return rc;
  }
  return real_cond_wait(c, m);
}

// left is the time from now on clock to abstime, in ns (0 if past, -1
// for none: a deadline decades away, such as a time point's maximum),
// rounded up to a whole millisecond: the virtual timeout of a wait, whose
// deadline the program took from the wall clock a moment before. So a
// seed's run does not depend on that moment (its digest is the same),
// unless a millisecond boundary falls in it.
static int64_t left(clockid_t clock, const struct timespec* abstime);
int64_t emud_time_left(clockid_t clock, const struct timespec* abstime) { return left(clock, abstime); }
static int64_t left(clockid_t clock, const struct timespec* abstime) {
  struct timespec now;
  if (clock_gettime(clock, &now) != 0) return 0;
  if (abstime->tv_sec - now.tv_sec > 1000000000) return -1;
  int64_t d = (int64_t)(abstime->tv_sec - now.tv_sec) * 1000000000 + (abstime->tv_nsec - now.tv_nsec);
  if (d <= 0) return 0;
  const int64_t ms = 1000000;
  return d > INT64_MAX - ms ? d : (d + ms - 1) / ms * ms;
}

int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock, const struct timespec* abstime) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  if (!emulated() && emud_early_unattached() && abstime && valid_ts(abstime) &&
      (clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC)) {
    int rc = early_cond_wait(c, m, clock, abstime);
    if (rc >= 0) return rc;
  }
  if (emulated() && abstime && abstime->tv_nsec >= 0 && abstime->tv_nsec < 1000000000 &&
      (clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC)) {
    struct deadline d = {clock, abstime};
    int rc = cond_wait(c, m, left(clock, abstime), "pthread_cond_clockwait", native_clockwait, &d);
    if (rc >= 0) return rc;
  }
  if (!real_cond_clockwait) return EINVAL;
  return real_cond_clockwait(c, m, clock, abstime);
}

int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* abstime) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  clockid_t clock = CLOCK_REALTIME;
#ifdef __GLIBC__
  // pthread_condattr_setclock's clock: bit 1 of the wait references
  // word in glibc's condition variables since 2.25.
  if (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 2) clock = CLOCK_MONOTONIC;
#endif
  if (!emulated() && emud_early_unattached() && abstime && valid_ts(abstime)) {
    int rc = early_cond_wait(c, m, clock, abstime);
    if (rc >= 0) return rc;
  }
  if (emulated() && abstime && abstime->tv_nsec >= 0 && abstime->tv_nsec < 1000000000) {
    struct deadline d = {clock, abstime};
    int rc = cond_wait(c, m, left(clock, abstime), "pthread_cond_timedwait", native_timedwait, &d);
    if (rc >= 0) return rc;
  }
  return real_cond_timedwait(c, m, abstime);
}

static int wake(pthread_cond_t* c, int (*real)(pthread_cond_t*), const char* name) {
  if (emulated() && (waiters(c) > 0 || emud_race_on())) sync_call(SYNC_WAKE, c, 0, 0, name, NULL);
  return real(c);
}

int pthread_cond_signal(pthread_cond_t* c) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  return wake(c, real_cond_signal, "pthread_cond_signal");
}

int pthread_cond_broadcast(pthread_cond_t* c) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  return wake(c, real_cond_broadcast, "pthread_cond_broadcast");
}

// ---- futexes ----
//
// The C++ library waits on a futex word itself, through syscall(SYS_futex,
// ...), for std::future and std::promise, std::atomic::wait and notify,
// std::latch, std::barrier and std::counting_semaphore: for a host thread
// in its turn a FUTEX_WAIT (or FUTEX_WAIT_BITSET) whose word still holds
// its value waits in virtual time for a FUTEX_WAKE of the word by another
// host thread (a wake wakes every such waiter: futex users re-check their
// word), or for its timeout (an absolute one as a timed condition wait's:
// its time left in virtual time, then natively to its deadline). Under the
// race detector each wake releases what each return from a wait acquires.
// Every other syscall, and every call from elsewhere, is the C library's.

static int valid_ts(const struct timespec* t) { return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000; }

// syscall_args reads a syscall's six words (as the C library's syscall
// does: the ones not passed are whatever the registers hold, unused).
#define syscall_args(n, x)                         \
  long x[6];                                       \
  do {                                             \
    va_list ap;                                    \
    va_start(ap, n);                               \
    for (int i = 0; i < 6; i++) x[i] = va_arg(ap, long); \
    va_end(ap);                                    \
  } while (0)

static long native_syscall(long n, const long x[6]) {
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  return real_syscall(n, x[0], x[1], x[2], x[3], x[4], x[5]);
}

long emud_real_syscall(long n, ...) {
  syscall_args(n, x);
  return native_syscall(n, x);
}

// early_futex_wait is an early thread's FUTEX_WAIT (lane.c): natively, a
// millisecond at a time (or to its own timeout if sooner), whose end is
// a spurious wake-up (futex users re-check their word); -2 once the
// thread has called in, for the wait in virtual time.
static long early_futex_wait(long n, const long x[6]) {
  if (emud_early_attach()) return -2;
  const int op = (int)x[1] & FUTEX_CMD_MASK;
  const struct timespec* ts = (const struct timespec*)x[3];
  if (ts && !valid_ts(ts)) return native_syscall(n, x);
  long y[6] = {x[0], x[1], x[2], x[3], x[4], x[5]};
  struct timespec slice;
  int mine;
  if (op == FUTEX_WAIT) {  // a relative timeout
    mine = ts && (ts->tv_sec == 0 && ts->tv_nsec <= 1000000);
    slice = mine ? *ts : (struct timespec){0, 1000000};
  } else {
    const clockid_t clock = ((int)x[1] & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    mine = emud_early_slice(clock, ts, &slice);
  }
  y[3] = (long)&slice;
  long r = native_syscall(n, y);
  if (r == -1 && errno == ETIMEDOUT && !mine) return 0;
  return r;
}

long syscall(long n, ...) {
  syscall_args(n, x);
  if (!__atomic_load_n(&real_cond_broadcast, __ATOMIC_ACQUIRE)) resolve();
  if (n == SYS_futex && x[0] != 0 && !emulated() &&
      ((x[1] & FUTEX_CMD_MASK) == FUTEX_WAIT || (x[1] & FUTEX_CMD_MASK) == FUTEX_WAIT_BITSET) && emud_early_unattached()) {
    long r = early_futex_wait(n, x);
    if (r != -2) return r;
  }
  if (n == SYS_futex && x[0] != 0 && emulated()) {
    uint32_t* word = (uint32_t*)x[0];
    const int op = (int)x[1] & FUTEX_CMD_MASK;
    if (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET) {
      const struct timespec* ts = (const struct timespec*)x[3];
      if (ts && !valid_ts(ts)) goto native;
      if (__atomic_load_n(word, __ATOMIC_SEQ_CST) != (uint32_t)x[2]) {
        errno = EAGAIN;
        return -1;
      }
      const int absolute = op == FUTEX_WAIT_BITSET;
      const clockid_t clock = ((int)x[1] & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
      uint64_t timeout = UINT64_MAX;
      if (ts && absolute) timeout = (uint64_t)left(clock, ts);  // -1: none
      if (ts && !absolute && ts->tv_sec < 1000000000) timeout = (uint64_t)ts->tv_sec * 1000000000 + (uint64_t)ts->tv_nsec;
      if (note_waiter(word, 1) != 0) goto native;
      int timed_out = 0;
      int rc = sync_call(SYNC_FUTEX_WAIT, word, timeout, 0, "futex wait", &timed_out);
      note_waiter(word, -1);
      if (rc != 0 || (timed_out && absolute)) goto native;  // the rest of its deadline natively
      if (timed_out) {
        errno = ETIMEDOUT;
        return -1;
      }
      return 0;
    }
    if (op == FUTEX_WAKE || op == FUTEX_WAKE_BITSET) {
      long r = native_syscall(n, x);
      int w = waiters(word);
      if (w > 0) sync_call(SYNC_WAKE, word, 0, 0, "futex wake", NULL);
      else if (emud_race_on()) sync_call(SYNC_RELEASE, word, 0, 0, "futex wake", NULL);
      return r < 0 ? r : r + w;
    }
  }
native:
  return native_syscall(n, x);
}
