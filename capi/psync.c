// POSIX semaphores, read-write locks (std::shared_mutex), spin locks and
// once calls (std::call_once) between host threads pass in virtual time,
// as pmutex.c's mutexes do: a host thread holds its turn between emud
// calls, so sem_wait for a sem_post of another host thread, a reader
// waiting for a writer parked in an emud call, or a spin on a lock such a
// writer holds, held it and the run was a spin hang of correct code.
// glibc waits for these on its own futexes, never through syscall(), so
// pmutex.c's futex waits do not see them.
//
// For a host thread in its turn (emud_host_turn):
//  - sem_wait, sem_timedwait and sem_clockwait take the semaphore if its
//    count is above zero (sem_trywait); otherwise they wait in virtual
//    time for a sem_post by another host thread, and try again. A timed
//    wait waits at most its time left (rounded up to a millisecond, as a
//    timed condition wait's), then natively for the rest of its deadline.
//  - pthread_rwlock_rdlock, _wrlock and their timed and clock forms take
//    the lock if they can (the try forms); otherwise they wait in virtual
//    time for an unlock by another host thread, and try again.
//  - sem_post and pthread_rwlock_unlock wake the object's virtual-time
//    waiters (each tries again: several may wake for one count).
//  - pthread_spin_lock tries the lock and, while another thread holds it,
//    sleeps 1 µs of virtual time between tries (psleep.c's retry), as a
//    spin on hardware lets time pass; a lock never unlocked is the
//    progress watchdog's hang naming the retries.
//  - pthread_once (std::call_once) whose initialiser another host thread
//    runs (parked in an emud call, say) retries each µs until it is done.
// Under the race detector (EMUD_RACE=1) a post, an unlock and the end of
// a once's initialiser release a synchronisation of the object that a
// wait's or a lock's return and a once's return acquire. Everywhere else
// (emud's own code, threads emud does not run, ranks as processes) these
// are glibc's calls.
// Partial: a waiter whose post or unlock comes from a thread emud does
// not run is never woken in virtual time (a hang report); semaphores
// shared between processes are glibc's.
#define _GNU_SOURCE
#define EMUD_PMUTEX_IMPL
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#include "lane.h"

// The caller's site: where a loop of locks would poll (psleep.c).
#define RA __builtin_return_address(0)

// EMUD_H_THREAD_SYNC's calls (pmutex.go).
enum { SYNC_WAKE = 3, SYNC_RELEASE = 4, SYNC_ACQUIRE = 5, SYNC_OBJ_WAIT = 7 };
// What an object wait waits for, for its hang report (pmutex.go).
enum { WAIT_SEM = 1, WAIT_READ = 2, WAIT_WRITE = 3 };

static int (*real_sem_wait)(sem_t*);
static int (*real_sem_timedwait)(sem_t*, const struct timespec*);
static int (*real_sem_clockwait)(sem_t*, clockid_t, const struct timespec*);
static int (*real_sem_trywait)(sem_t*);
static int (*real_sem_post)(sem_t*);
static int (*real_rdlock)(pthread_rwlock_t*);
static int (*real_wrlock)(pthread_rwlock_t*);
static int (*real_tryrdlock)(pthread_rwlock_t*);
static int (*real_trywrlock)(pthread_rwlock_t*);
static int (*real_timedrdlock)(pthread_rwlock_t*, const struct timespec*);
static int (*real_timedwrlock)(pthread_rwlock_t*, const struct timespec*);
static int (*real_clockrdlock)(pthread_rwlock_t*, clockid_t, const struct timespec*);
static int (*real_clockwrlock)(pthread_rwlock_t*, clockid_t, const struct timespec*);
static int (*real_rwunlock)(pthread_rwlock_t*);
static int (*real_spin_lock)(pthread_spinlock_t*);
static int (*real_spin_trylock)(pthread_spinlock_t*);
static int (*real_spin_unlock)(pthread_spinlock_t*);
static int (*real_once)(pthread_once_t*, void (*)(void));

#define LOOK(v, name) v = (__typeof__(v))dlsym(RTLD_NEXT, name)

// resolve looks the C library's calls up once (from a constructor, or a
// call before it); a clock form glibc lacks (before 2.30) stays NULL.
static void resolve(void) {
  if (__atomic_load_n(&real_once, __ATOMIC_ACQUIRE)) return;
  LOOK(real_sem_wait, "sem_wait");
  LOOK(real_sem_timedwait, "sem_timedwait");
  LOOK(real_sem_clockwait, "sem_clockwait");
  LOOK(real_sem_trywait, "sem_trywait");
  LOOK(real_sem_post, "sem_post");
  LOOK(real_rdlock, "pthread_rwlock_rdlock");
  LOOK(real_wrlock, "pthread_rwlock_wrlock");
  LOOK(real_tryrdlock, "pthread_rwlock_tryrdlock");
  LOOK(real_trywrlock, "pthread_rwlock_trywrlock");
  LOOK(real_timedrdlock, "pthread_rwlock_timedrdlock");
  LOOK(real_timedwrlock, "pthread_rwlock_timedwrlock");
  LOOK(real_clockrdlock, "pthread_rwlock_clockrdlock");
  LOOK(real_clockwrlock, "pthread_rwlock_clockwrlock");
  LOOK(real_rwunlock, "pthread_rwlock_unlock");
  LOOK(real_spin_lock, "pthread_spin_lock");
  LOOK(real_spin_trylock, "pthread_spin_trylock");
  LOOK(real_spin_unlock, "pthread_spin_unlock");
  __atomic_store_n(&real_once, (int (*)(pthread_once_t*, void (*)(void)))dlsym(RTLD_NEXT, "pthread_once"),
                   __ATOMIC_RELEASE);
}
__attribute__((constructor)) static void resolve_early(void) { resolve(); }

static void acquired(const void* obj, const char* name) {
  if (emud_race_on()) emud_thread_sync(SYNC_ACQUIRE, obj, 0, 0, name, NULL);
}

// released follows a post or an unlock: it wakes the object's waiters,
// whose wake is also the detector's release, or only releases.
static void released(const void* obj, const char* name) {
  if (emud_waiters(obj) > 0)
    emud_thread_sync(SYNC_WAKE, obj, 0, 0, name, NULL);
  else if (emud_race_on())
    emud_thread_sync(SYNC_RELEASE, obj, 0, 0, name, NULL);
}

static int valid(const struct timespec* t) { return t && t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000; }

// A try and the blocking call it stands for, on one object: native is
// the C library's wait, untimed (at NULL) or to a deadline.
struct taker {
  int (*try_take)(void* obj);
  int (*native)(void* obj, clockid_t clock, const struct timespec* at);
  int busy;  // the try's errno or result for a taken object
  int kind;  // WAIT_*
};

// take takes obj for a host thread in its turn: tries, and while it is
// taken waits in virtual time for a wake of it (at most the deadline's
// time left, then natively). A wake another waiter beat it to is waited
// again, with what is left of the time.
static int take(void* obj, const struct taker* k, clockid_t clock, const struct timespec* at, const char* name) {
  int64_t t = at ? emud_time_left(clock, at) : -1;  // virtual ns left; -1 none
  for (;;) {
    int rc = k->try_take(obj);
    if (rc == 0) {
      acquired(obj, name);
      return 0;
    }
    if (rc != k->busy) return rc;
    if (t == 0 || emud_note_waiter(obj, 1) != 0) break;  // past its deadline, or the table is full
    uint64_t out[2] = {0, 0};
    rc = emud_thread_sync(SYNC_OBJ_WAIT, obj, t < 0 ? UINT64_MAX : (uint64_t)t, (uint64_t)k->kind, name, out);
    emud_note_waiter(obj, -1);
    if (rc != 0 || out[0]) break;  // timed out in virtual time
    if (t > 0) t = out[1] >= (uint64_t)t ? 0 : t - (int64_t)out[1];
  }
  int rc = k->native(obj, clock, at);
  if (rc == 0) acquired(obj, name);
  return rc;
}

// early_take is an early thread's wait (lane.c): natively, a millisecond
// at a time (or to the caller's deadline if sooner), until it is taken
// or the thread has called in (-1: wait in virtual time).
static int early_take(void* obj, const struct taker* k, clockid_t clock, const struct timespec* at) {
  for (;;) {
    int rc = k->try_take(obj);
    if (rc != k->busy) return rc;
    if (emud_early_attach()) return -1;
    struct timespec slice;
    const int mine = emud_early_slice(clock, at, &slice);
    rc = k->native(obj, clock, &slice);
    if (rc != ETIMEDOUT || mine) return rc;
  }
}

// lock is an interposer's path for a host thread in its turn, or an
// early thread (natively in slices until it calls in); -2 for neither
// (the C library's call). A host thread's lock taken is a step of a
// possible poll at the caller's site pc (tag: EMUD_POLL_LOCK or _READ).
static int lock(void* obj, const struct taker* k, clockid_t clock, const struct timespec* at, const char* name,
                uint64_t tag, void* pc) {
  if (!emud_host_turn()) {
    if (!emud_early_unattached()) return -2;
    int rc = early_take(obj, k, clock, at);
    if (rc != -1) return rc;
  }
  int rc = take(obj, k, clock, at, name);
  if (rc == 0) emud_host_op(obj, tag, pc, 0);
  return rc;
}

// tried follows a try form's result rc (busy: its answer for a taken
// object): a success acquires, and a success or a failure is a step of a
// possible poll at pc; only a failure may sleep there.
static void tried(const void* obj, int rc, int busy, uint64_t tag, const char* name, void* pc) {
  if (!emud_host_turn()) return;
  if (rc == 0) acquired(obj, name);
  if (rc == 0 || rc == busy) emud_host_op(obj, rc == 0 ? tag : EMUD_POLL_BUSY, pc, rc != 0);
}

// Semaphores report through errno, -1 on failure.
static int sem_try(void* s) { return real_sem_trywait(s) == 0 ? 0 : errno; }
static int sem_native(void* s, clockid_t clock, const struct timespec* at) {
  int rc;
  if (!at)
    rc = real_sem_wait(s);
  else if (real_sem_clockwait)
    rc = real_sem_clockwait(s, clock, at);
  else
    rc = real_sem_timedwait(s, at);
  return rc == 0 ? 0 : errno;
}
static const struct taker sem_taker = {sem_try, sem_native, EAGAIN, WAIT_SEM};

static int sem_take(sem_t* s, clockid_t clock, const struct timespec* at, const char* name, void* pc) {
  int rc = lock(s, &sem_taker, clock, at, name, EMUD_POLL_LOCK, pc);
  if (rc == 0 || rc == -2) return rc;
  errno = rc;
  return -1;
}

int sem_wait(sem_t* s) {
  resolve();
  int rc = sem_take(s, CLOCK_REALTIME, NULL, "sem_wait", RA);
  return rc == -2 ? real_sem_wait(s) : rc;
}

int sem_timedwait(sem_t* s, const struct timespec* at) {
  resolve();
  if (!valid(at)) return real_sem_timedwait(s, at);
  int rc = sem_take(s, CLOCK_REALTIME, at, "sem_timedwait", RA);
  return rc == -2 ? real_sem_timedwait(s, at) : rc;
}

int sem_clockwait(sem_t* s, clockid_t clock, const struct timespec* at) {
  resolve();
  if (!real_sem_clockwait) {
    errno = ENOSYS;
    return -1;
  }
  if (!valid(at) || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)) return real_sem_clockwait(s, clock, at);
  int rc = sem_take(s, clock, at, "sem_clockwait", RA);
  return rc == -2 ? real_sem_clockwait(s, clock, at) : rc;
}

int sem_trywait(sem_t* s) {
  resolve();
  int rc = real_sem_trywait(s);
  const int e = errno;
  tried(s, rc == 0 ? 0 : e, EAGAIN, EMUD_POLL_LOCK, "sem_trywait", RA);
  errno = e;
  return rc;
}

int sem_post(sem_t* s) {
  resolve();
  int rc = real_sem_post(s);
  if (rc == 0 && emud_host_turn()) {
    released(s, "sem_post");
    emud_host_poll(s, EMUD_POLL_UNLOCK, RA);
  }
  return rc;
}

// Read-write locks report by their result.
static int rd_try(void* l) { return real_tryrdlock(l); }
static int wr_try(void* l) { return real_trywrlock(l); }
static int rd_native(void* l, clockid_t clock, const struct timespec* at) {
  if (!at) return real_rdlock(l);
  if (real_clockrdlock) return real_clockrdlock(l, clock, at);
  return real_timedrdlock(l, at);
}
static int wr_native(void* l, clockid_t clock, const struct timespec* at) {
  if (!at) return real_wrlock(l);
  if (real_clockwrlock) return real_clockwrlock(l, clock, at);
  return real_timedwrlock(l, at);
}
static const struct taker rd_taker = {rd_try, rd_native, EBUSY, WAIT_READ};
static const struct taker wr_taker = {wr_try, wr_native, EBUSY, WAIT_WRITE};

int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  resolve();
  int rc = lock(l, &rd_taker, CLOCK_REALTIME, NULL, "pthread_rwlock_rdlock", EMUD_POLL_READ, RA);
  return rc == -2 ? real_rdlock(l) : rc;
}

int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  resolve();
  int rc = lock(l, &wr_taker, CLOCK_REALTIME, NULL, "pthread_rwlock_wrlock", EMUD_POLL_LOCK, RA);
  return rc == -2 ? real_wrlock(l) : rc;
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t* l, const struct timespec* at) {
  resolve();
  if (!valid(at)) return real_timedrdlock(l, at);
  int rc = lock(l, &rd_taker, CLOCK_REALTIME, at, "pthread_rwlock_timedrdlock", EMUD_POLL_READ, RA);
  return rc == -2 ? real_timedrdlock(l, at) : rc;
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t* l, const struct timespec* at) {
  resolve();
  if (!valid(at)) return real_timedwrlock(l, at);
  int rc = lock(l, &wr_taker, CLOCK_REALTIME, at, "pthread_rwlock_timedwrlock", EMUD_POLL_LOCK, RA);
  return rc == -2 ? real_timedwrlock(l, at) : rc;
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t* l, clockid_t clock, const struct timespec* at) {
  resolve();
  if (!real_clockrdlock) return ENOSYS;
  if (!valid(at) || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)) return real_clockrdlock(l, clock, at);
  int rc = lock(l, &rd_taker, clock, at, "pthread_rwlock_clockrdlock", EMUD_POLL_READ, RA);
  return rc == -2 ? real_clockrdlock(l, clock, at) : rc;
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t* l, clockid_t clock, const struct timespec* at) {
  resolve();
  if (!real_clockwrlock) return ENOSYS;
  if (!valid(at) || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)) return real_clockwrlock(l, clock, at);
  int rc = lock(l, &wr_taker, clock, at, "pthread_rwlock_clockwrlock", EMUD_POLL_LOCK, RA);
  return rc == -2 ? real_clockwrlock(l, clock, at) : rc;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t* l) {
  resolve();
  int rc = real_tryrdlock(l);
  tried(l, rc, EBUSY, EMUD_POLL_READ, "pthread_rwlock_tryrdlock", RA);
  return rc;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t* l) {
  resolve();
  int rc = real_trywrlock(l);
  tried(l, rc, EBUSY, EMUD_POLL_LOCK, "pthread_rwlock_trywrlock", RA);
  return rc;
}

int pthread_rwlock_unlock(pthread_rwlock_t* l) {
  resolve();
  int rc = real_rwunlock(l);
  if (rc == 0 && emud_host_turn()) {
    released(l, "pthread_rwlock_unlock");
    emud_host_poll(l, EMUD_POLL_UNLOCK, RA);
  }
  return rc;
}

// early_pause is an early thread's native wait between two tries of a
// spin lock or a once in progress: 50 µs of wall time.
static void early_pause(void) {
  const struct timespec pause = {0, 50000};
  emud_real_nanosleep(&pause, NULL);
}

// Spin locks: retried each µs of virtual time while taken.
int pthread_spin_lock(pthread_spinlock_t* l) {
  resolve();
  if (!emud_host_turn()) {
    if (!emud_early_unattached()) return real_spin_lock(l);
    // An early thread (lane.c): natively until it calls in.
    for (;;) {
      int rc = real_spin_trylock(l);
      if (rc != EBUSY) return rc;
      if (emud_early_attach()) break;
      early_pause();
    }
  }
  for (;;) {
    int rc = real_spin_trylock(l);
    if (rc == 0) {
      acquired((const void*)l, "pthread_spin_lock");
      emud_host_op((const void*)l, EMUD_POLL_LOCK, RA, 0);
      return 0;
    }
    if (rc != EBUSY || emud_host_retry("pthread_spin_lock", RA) != 0) return real_spin_lock(l);
  }
}

int pthread_spin_trylock(pthread_spinlock_t* l) {
  resolve();
  int rc = real_spin_trylock(l);
  tried((const void*)l, rc, EBUSY, EMUD_POLL_LOCK, "pthread_spin_trylock", RA);
  return rc;
}

int pthread_spin_unlock(pthread_spinlock_t* l) {
  resolve();
  // The release comes first: the lock is another thread's once unlocked.
  const int turn = emud_host_turn();
  if (turn && emud_race_on()) emud_thread_sync(SYNC_RELEASE, (const void*)l, 0, 0, "pthread_spin_unlock", NULL);
  int rc = real_spin_unlock(l);
  if (turn) emud_host_poll((const void*)l, EMUD_POLL_UNLOCK, RA);  // its sleep with the lock free
  return rc;
}

// Once calls. glibc's once word: bit 1 done, bit 0 an initialiser in
// progress (with the fork generation above them).
#define ONCE_INPROGRESS 1
#define ONCE_DONE 2

// The initialiser this thread runs under real_once, and its object: the
// trampoline reads both before calling it (an initialiser may itself
// call pthread_once).
static __thread void (*once_fn)(void);
static __thread pthread_once_t* once_obj;

static void once_trampoline(void) {
  void (*fn)(void) = once_fn;
  pthread_once_t* o = once_obj;
  fn();
  // A host thread in its turn, or an early thread that became one in
  // the initialiser (its first call, which may have built the emulation).
  if (emud_host_turn() && emud_race_on()) emud_thread_sync(SYNC_RELEASE, o, 0, 0, "pthread_once", NULL);
}

// run_once runs the initialiser through the trampoline, so that its end
// releases for the race detector.
static int run_once(pthread_once_t* o, void (*init)(void)) {
  once_fn = init;
  once_obj = o;
  int rc = real_once(o, once_trampoline);
  if (rc == 0 && emud_host_turn()) acquired(o, "pthread_once");
  return rc;
}

int emud_real_once(pthread_once_t* o, void (*init)(void)) {
  resolve();
  return real_once(o, init);
}

int pthread_once(pthread_once_t* o, void (*init)(void)) {
  resolve();
  if (!emud_host_turn()) {
    if (!emud_early_unattached()) return real_once(o, init);
    // An early thread (lane.c): an initialiser another thread runs is
    // waited for natively until this one calls in.
    for (;;) {
      const int v = __atomic_load_n((int*)o, __ATOMIC_ACQUIRE);
      if (v & ONCE_DONE) return real_once(o, init);
      if (!(v & ONCE_INPROGRESS)) return run_once(o, init);
      if (emud_early_attach()) break;
      early_pause();
    }
  }
  for (;;) {
    const int v = __atomic_load_n((int*)o, __ATOMIC_ACQUIRE);
    if (v & ONCE_DONE) {
      acquired(o, "pthread_once");
      return 0;
    }
    if (!(v & ONCE_INPROGRESS)) break;
    // Another thread runs the initialiser: a host thread parked in an
    // emud call needs turns to finish it.
    if (emud_host_retry("pthread_once", RA) != 0) return real_once(o, init);
  }
  return run_once(o, init);
}
