// Declarations shared by lane.c and the Go side (see doc.go).
#ifndef EMUD_LANE_H
#define EMUD_LANE_H
#include "emud/abi.h"
// Go's build cache hashes this package's files but not include/emud/abi.h:
// a change to the lane's layout there reused a library built against the
// old one (lanes then read the wrong fields: a panic). Pinning the size
// here makes such a change a change of this file too.
_Static_assert(sizeof(emud_lane) == 4920, "emud_lane changed in abi.h: update this size (capi/lane.h)");
emud_lane* emud_lane_new(emud_entry entry, void* arg);
void emud_lane_free(emud_lane* l);
// emud_lane_stack is the lowest address of the lane's stack mapping (its
// guard page) and its size.
uint64_t emud_lane_stack(emud_lane* l, uint64_t* size);
void emud_resume(emud_lane* l);
void emud_install_fault_handlers(void);
void emud_heap_setup(void);
int emud_map_device(uint64_t base, uint64_t size);
void emud_set_race(int on);
void emud_set_lsa_gpus(int n);
void emud_set_host_cost(int on);
uint64_t emud_host_bytes_take(void);
#define EMUD_HOST_LOG 64
typedef struct {
  int n;
  uint64_t lo[EMUD_HOST_LOG], hi[EMUD_HOST_LOG], pc[EMUD_HOST_LOG];
} emud_host_log;
emud_host_log* emud_host_stores(void);
extern void emudGoHostStores(int id);
int emud_instrumented(void);
int emud_logs_all_stores(void);
void* emud_obj_alloc(size_t n);
void emud_enter(void);
void emud_leave(void);
int emud_host_id(void);
void emud_set_host_id(int id);
static inline void emud_call_entry(emud_entry f, void* ctx) { f(ctx); }
// Exported by the Go side.
extern int emudGoHostSpawn(int parent);
extern void emudGoHostAttach(int id);
extern void emudGoHostExit(int id);
extern void emudGoHostJoin(int self, int child);
extern int emudGoHost(int op, uint64_t* a, char* file, int line);
extern void emudGoExit(void);
void emud_register_exit(void);
void emud_set_started(void);
void emud_early_lock(void);
void emud_early_unlock(void);
int emud_early_next(void);
void emud_early_adopt(int i, int id);
void emud_early_runtime(void);
int emud_early_id(void);
int emud_early_pending(void);
int emud_main_entered(void);
// Ranks as processes (procs.c).
int emud_lane_is_remote(emud_lane* l);
void emud_remote_resume(emud_lane* l);
void emud_remote_free(emud_lane* l);
int emud_remote_pid(emud_lane* l);  // the rank process a remote lane runs in, else 0
int emud_remote_gone(emud_lane* l, int* host, int* apart, char* how, int cap);
emud_lane* emud_lane_make(emud_entry entry, void* arg, void* proc);
void* emud_thread_proc(void);
void emud_remote_free_ctx(void* proc, emud_entry fin, void* ctx);
void* emud_shm_alloc(size_t n, size_t align);
void emud_shm_free(void* p);
int emud_procs_map(uint64_t lo, uint64_t hi);
int emud_procs_shared(void);
int emud_client_active(void);
int emud_client_call(int op, uint64_t* a, const char* file, int line);
uint64_t emud_resv_lo(void);
// The seed server (seedsrv.c, lane.c's end).
int emud_seed_serve(int argc, char** argv);
void emud_seed_loading(const char* path);
int emud_seed_loaded(void* any, uint64_t bias);
void emud_seed_mark_start(void);
int emud_seed_threads(void);
int emud_seed_reset_c(void);
void emud_seed_exit(void);
void* emud_fault_handler(void);
void emud_seed_dso(void* dso);
int emud_seed_exit_in_dso(void);
int emud_started(void);
extern void emudGoSeedEnv(char** kv, int n);
extern void emudGoSeedEnvSync(void);
extern uint64_t emudGoSeedObject(char* path, uint64_t bias);
extern int emudGoSeedLive(void);
extern void emudGoSeedReset(void);
uint64_t emud_resv_hi(void);
// The shared arena of ranks as processes (procs.c) sits in a reservation
// of its own, just past the device range and made with it in every
// process, so a rank started apart finds its coordinator's arena address
// free (a kernel-chosen address can hold another mapping there).
#define EMUD_ARENA_SIZE (256ull << 20)
uint64_t emud_resv_arena(void);
int emud_device_extents(int (*f)(uint64_t lo, uint64_t hi));
void emud_fault_default(void);
void emud_node_serve(void);
int emud_race_on(void);
void* emud_obj_pool(size_t* n);
int emud_started(void);
int emud_forked(void);
int emud_in_emud(void);
extern void emudGoProcEnded(int id, int pid, int apart, char* how);
extern void emudGoProcStarted(int id, int pid);
// Free sections: blocking calls outside emud (procs.c, mpi.c, free.go).
void emud_procs_status(int code);
int emud_free_begin(const char* name);
void emud_free_close(void);
extern void emudGoFreeBegin(char* name, void* cur);
extern void emudGoFreeRelease(void);
extern void emudGoFreeEnd(void);
#define EMUD_LANE_GONE 4 /* a remote lane's process is gone */
// A host thread's atomic and volatile words since its last emud call,
// for the race detector (lane.c host_atomic).
#define EMUD_HOST_ATOMIC_LOG 64
typedef struct {
  int n, over;
  uint64_t addr[EMUD_HOST_ATOMIC_LOG];
  uint8_t write[EMUD_HOST_ATOMIC_LOG];
} emud_host_atomic_log;
emud_host_atomic_log* emud_host_atomics(void);
int emud_free_local(void);
int emud_host_of_tid(int tid);
// emud_host_turn: the calling thread is a host thread in its turn,
// outside emud (not a lane, an emud call, a free section or a rank
// process): its waits are emud's (pmutex.c, psleep.c).
int emud_host_turn(void);
int emud_run_over(void);
int emud_client_turn(void);
// emud_host_poll notes a host thread's atomic or volatile load (psleep.c):
// a run of the same load seeing the same value is a poll.
void emud_host_poll(const volatile void* p, uint64_t v, void* pc);
// emud_host_op notes any atomic operation or lock of a host thread; one
// that may have taken a lock (may_sleep 0) never sleeps itself.
void emud_host_op(const volatile void* p, uint64_t v, void* pc, int may_sleep);
// The values a lock's operations note (pmutex.c, psync.c): a lock's
// words are not the program's, so any distinct tags do.
#define EMUD_POLL_LOCK 0x10c0001u
#define EMUD_POLL_UNLOCK 0x10c0002u
#define EMUD_POLL_BUSY 0x10c0003u
#define EMUD_POLL_READ 0x10c0004u
// Semaphores, read-write locks, spin locks and once calls (psync.c) use
// pmutex.c's waits: EMUD_H_THREAD_SYNC's call what on obj (out: its a[4]
// and a[5]), its table of waited objects, a deadline's time left, and
// psleep.c's retry (1 µs of virtual time).
#include <time.h>
int emud_thread_sync(uint64_t what, const void* obj, uint64_t x, uint64_t kind, const char* name, uint64_t out[2]);
int emud_note_waiter(const void* obj, int d);
int emud_waiters(const void* obj);
int64_t emud_time_left(clockid_t clock, const struct timespec* abstime);
int emud_host_retry(const char* name, void* pc);
// Host threads' turnstiles (turn.c): futex words a turn passes through.
void emud_turn_wait(uint32_t* self);
void emud_turn_wake(uint32_t* to);
void emud_turn_pass(uint32_t* to, uint32_t* self);
// An early thread not yet called in waits natively in slices, and calls
// in once adopted (lane.c).
int emud_early_unattached(void);
int emud_early_attach(void);
int emud_early_slice(clockid_t clock, const struct timespec* deadline, struct timespec* at);
// Host threads' pthread mutexes and condition variables (pmutex.c) wait
// in virtual time; emud's own C code locks its own mutexes with the C
// library's calls, never through those interposers.
#include <pthread.h>
int emud_real_mutex_lock(pthread_mutex_t* m);
int emud_real_mutex_unlock(pthread_mutex_t* m);
// So do its own sleeps (psleep.c passes a host thread's in virtual time)
// and its futex waits and wakes.
#include <time.h>
int emud_real_nanosleep(const struct timespec* req, struct timespec* rem);
int emud_real_once(pthread_once_t* o, void (*init)(void));  // and its once calls (psync.c)
long emud_real_syscall(long n, ...);  // and its futexes (pmutex.c's syscall waits a host thread's in virtual time)
#ifndef EMUD_PMUTEX_IMPL
#define syscall emud_real_syscall
#define pthread_mutex_lock emud_real_mutex_lock
#define pthread_mutex_unlock emud_real_mutex_unlock
#define nanosleep emud_real_nanosleep
#define pthread_once emud_real_once
#endif
#endif
