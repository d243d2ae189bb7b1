// pthread barriers between host threads wait in virtual time: a host
// thread holds its turn between emud calls, so a real
// pthread_barrier_wait would hold it while the others wait for a turn to
// arrive (NCCL's examples hand the unique id to their rank threads this
// way). Once the emulation is built, a barrier's wait and destroy by a
// host thread are emud host calls (capi/pbarrier.go), with the count its
// init gave; before it, or from a thread emud does not run, they are
// glibc's. Partial: at most 256 barriers live at once are known; a wait
// on another fails naming it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "lane.h"

static int (*real_init)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned);
static int (*real_wait)(pthread_barrier_t*);
static int (*real_destroy)(pthread_barrier_t*);

// Every barrier's count, from its init (before the emulation too), so a
// barrier made before the first emud call and waited on after is known.
#define NCOUNTS 256
static pthread_mutex_t counts_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  pthread_barrier_t* b;
  unsigned count;
} counts[NCOUNTS];

static void remember(pthread_barrier_t* b, unsigned count) {
  pthread_mutex_lock(&counts_mu);
  int free_slot = -1;
  for (int i = 0; i < NCOUNTS; i++) {
    if (counts[i].b == b) free_slot = i;
    if (free_slot < 0 && counts[i].b == NULL) free_slot = i;
  }
  if (free_slot >= 0) counts[free_slot].b = b, counts[free_slot].count = count;
  pthread_mutex_unlock(&counts_mu);
}

static unsigned count_of(pthread_barrier_t* b, int forget) {
  unsigned n = 0;
  pthread_mutex_lock(&counts_mu);
  for (int i = 0; i < NCOUNTS; i++)
    if (counts[i].b == b) {
      n = counts[i].count;
      if (forget) counts[i].b = NULL;
    }
  pthread_mutex_unlock(&counts_mu);
  return n;
}

// A forked rank's process (procs.c) keeps glibc's barriers: a barrier
// across processes is not emulated.
static int emulated(void) {
  return emud_started() && !emud_forked() && !emud_in_emud() && emud_host_id() >= 0 && emud_current() == NULL;
}

static int barrier_call(pthread_barrier_t* b, uint64_t count, uint64_t what, const char* name) {
  uint64_t a[16] = {(uint64_t)(uintptr_t)b, count, what};
  int rc = emud_host(EMUD_H_THREAD_BARRIER, a, name, 0);
  if (rc != 0) return rc;
  return a[3] ? PTHREAD_BARRIER_SERIAL_THREAD : 0;
}

int pthread_barrier_init(pthread_barrier_t* b, const pthread_barrierattr_t* attr, unsigned count) {
  if (!real_init) real_init = (int (*)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned))dlsym(RTLD_NEXT, "pthread_barrier_init");
  int rc = real_init(b, attr, count);
  if (rc == 0) remember(b, count);
  return rc;
}

int pthread_barrier_wait(pthread_barrier_t* b) {
  if (!real_wait) real_wait = (int (*)(pthread_barrier_t*))dlsym(RTLD_NEXT, "pthread_barrier_wait");
  if (!emulated()) return real_wait(b);
  return barrier_call(b, count_of(b, 0), 1, "pthread_barrier_wait");
}

int pthread_barrier_destroy(pthread_barrier_t* b) {
  if (!real_destroy) real_destroy = (int (*)(pthread_barrier_t*))dlsym(RTLD_NEXT, "pthread_barrier_destroy");
  count_of(b, 1);
  if (emulated()) barrier_call(b, 0, 2, "pthread_barrier_destroy");
  return real_destroy(b);
}
