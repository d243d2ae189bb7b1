// Lane coroutines, fault capture and host-thread tracking for emud's C ABI
// (see doc.go). Every lane of a C++ kernel runs on its own small stack; the
// Go side resumes it (emud_resume) and it runs until its next device call
// (emud_yield), which switches back. Written for emud.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emud/abi.h"
#include "lane.h"

// Switching stacks: on x86-64 a few instructions that keep the
// callee-saved registers, MXCSR and the x87 control word (what the ABI
// says a call preserves); swapcontext would also save and restore the
// signal mask, two system calls on every device call. Elsewhere,
// ucontext.
#if defined(__x86_64__)
#define EMUD_FAST_SWITCH 1
// emud_switch(save, to): saves this context's stack pointer in *save and
// resumes the one whose stack pointer is to.
void emud_switch(void** save, void* to);
__asm__(
    ".text\n"
    ".globl emud_switch\n"
    ".hidden emud_switch\n"
    ".type emud_switch,@function\n"
    "emud_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  subq $8, %rsp\n"
    "  stmxcsr (%rsp)\n"
    "  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n"
    "  fldcw 4(%rsp)\n"
    "  addq $8, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size emud_switch, .-emud_switch\n"
    // A new lane's first switch returns here with the lane in r12 and
    // lane_start in r13; the stack is 16-byte aligned for the call.
    ".globl emud_lane_trampoline\n"
    ".hidden emud_lane_trampoline\n"
    ".type emud_lane_trampoline,@function\n"
    "emud_lane_trampoline:\n"
    "  movq %r12, %rdi\n"
    "  callq *%r13\n"
    "  ud2\n"
    ".size emud_lane_trampoline, .-emud_lane_trampoline\n");
void emud_lane_trampoline(void);
#endif

typedef struct lane_impl {
#ifdef EMUD_FAST_SWITCH
  void *sp, *caller_sp;
#else
  ucontext_t ctx, caller;
#endif
  sigjmp_buf fault;
  void* stack;
  emud_entry entry;
  void* arg;
} lane_impl;

// cur_lane is read by every instrumented access (host_skips): initial-exec
// makes that read one load off %fs, where the default model for the
// archive's position-independent code is a __tls_get_addr call sequence
// (relaxed by the linker, but it still made each __tsan_ entry save and
// restore a register around it). The library is only ever linked into an
// executable (a program, the seed server), as the Go runtime's own
// initial-exec TLS in it requires.
static __thread emud_lane* cur_lane __attribute__((tls_model("initial-exec")));  // the lane running on this OS thread
static __thread int in_emud;          // inside an emud host call (thread creation is the runtime's own)
static __thread int host_id = -1;     // this thread's emud host thread, -1 = none

emud_lane* emud_current(void) { return cur_lane; }

// host_tids maps a host thread to its OS thread id while it runs, so that
// a mutex's owner (glibc's field holds its tid) can be told a host thread
// (pmutex.c). Written by each thread for itself, read by the turn holder.
#define MAX_HOST_TIDS 4096
static int host_tids[MAX_HOST_TIDS];
static void note_tid(int id, int on) {
  if (id >= 0 && id < MAX_HOST_TIDS) __atomic_store_n(&host_tids[id], on ? (int)syscall(SYS_gettid) : 0, __ATOMIC_RELAXED);
}
int emud_host_of_tid(int tid) {
  if (tid <= 0) return -1;
  for (int i = 0; i < MAX_HOST_TIDS; i++)
    if (__atomic_load_n(&host_tids[i], __ATOMIC_RELAXED) == tid) return i;
  return -1;
}

// HIP's and CUDA's built-in variables, as objects: hip_runtime.h declares
// threadIdx, blockIdx, blockDim and gridDim as const uint3 objects bound
// to these symbols (an asm label), so a user's own variable, parameter
// or member of one of those names shadows them as on a GPU, and
// threadIdx.x is a plain unsigned int (varargs, template deduction,
// auto). They hold the running lane's values: emud_resume sets them
// before it switches to a lane and gives them the host's values (0s, and
// dimensions of 1) when the lane stops. One lane or host thread runs at a
// time, and a lane's values never change while it lives, so code that
// keeps a value read before a device call is still right after it
// (whichever OS thread resumes the lane: not thread-locals, whose
// address could be kept across a call; abi.h emud_current).
typedef struct {
  uint32_t x, y, z;
} emud_dim3;
emud_dim3 emud_builtin_threadIdx = {0, 0, 0}, emud_builtin_blockIdx = {0, 0, 0};
emud_dim3 emud_builtin_blockDim = {1, 1, 1}, emud_builtin_gridDim = {1, 1, 1};

static void builtins_of(const emud_lane* l) {
  emud_builtin_threadIdx = (emud_dim3){l->tid[0], l->tid[1], l->tid[2]};
  emud_builtin_blockIdx = (emud_dim3){l->bid[0], l->bid[1], l->bid[2]};
  emud_builtin_blockDim = (emud_dim3){l->bdim[0], l->bdim[1], l->bdim[2]};
  emud_builtin_gridDim = (emud_dim3){l->gdim[0], l->gdim[1], l->gdim[2]};
}

static void builtins_of_host(void) {
  emud_builtin_threadIdx = (emud_dim3){0, 0, 0};
  emud_builtin_blockIdx = (emud_dim3){0, 0, 0};
  emud_builtin_blockDim = (emud_dim3){1, 1, 1};
  emud_builtin_gridDim = (emud_dim3){1, 1, 1};
}

#define LANE_STACK (256 << 10)

#ifdef EMUD_FAST_SWITCH
static void lane_start(emud_lane* l) {
  lane_impl* im = (lane_impl*)l->impl;
  im->entry(im->arg);
  l->state = 2;
  cur_lane = NULL;
  emud_switch(&im->sp, im->caller_sp);  // never resumed
  abort();
}
#else
static void lane_main(unsigned lo, unsigned hi) {
  emud_lane* l = (emud_lane*)(((uintptr_t)hi << 32) | (uintptr_t)lo);
  lane_impl* im = (lane_impl*)l->impl;
  im->entry(im->arg);
  l->state = 2;
  cur_lane = NULL;
  // Returning switches to uc_link (the caller of the last resume).
}
#endif

// Lane stacks come from arenas of ARENA_STACKS stacks, one mapping each
// (MAP_NORESERVE: a stack's pages are committed only as its lane touches
// them), and go back to a free list for later lanes; arenas are never
// unmapped. Each stack's lowest page is its guard, installed when the
// stack is first handed out with
// MADV_GUARD_INSTALL (Linux 6.13), which marks the page in the page
// tables without splitting the mapping. The guard pages that mprotect
// made split each stack into a mapping of its own and a guard mapping: a
// grid of 32,768 lanes (NCCL's 01_allreduce_lsa at 4 ranks) needed 65,536
// mappings, over Linux's vm.max_map_count of 65,530, and its launch
// failed. On older kernels the guard falls back to mprotect (and such
// grids still need vm.max_map_count raised). A stack freed while more than
// KEEP_STACKS are free gives its pages back (MADV_DONTNEED). It was 4,096:
// a grid over its resident blocks (capi's resident.go) frees a stack per
// lane and takes it again for the next block's, and giving pages back past
// 4,096 free stacks had madvise's TLB shootdowns and the faults after them
// take half of a 1 Mi-lane launch's time; 65,536 is two GPUs' resident
// lanes at emud's default.
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#define ARENA_STACKS 64
#define KEEP_STACKS 65536
#define GUARD_PAGE 4096

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static void** pool;  // free stacks
static size_t npool, cappool;
static size_t nstacks;  // stacks made: the free list has room for all of them
static int guard_madvise = 1;  // cleared when the kernel refuses MADV_GUARD_INSTALL

// guard makes the page at p fault on any access.
static int guard(void* p) {
  if (guard_madvise) {
    if (madvise(p, GUARD_PAGE, MADV_GUARD_INSTALL) == 0) return 0;
    if (errno != EINVAL) return -1;
    guard_madvise = 0;  // an older kernel: mprotect from now on
  }
  return mprotect(p, GUARD_PAGE, PROT_NONE);
}

static char* fresh;      // the newest arena's stacks not yet handed out
static int fresh_left;   // how many

// fresh_stack hands out the next stack of the newest arena, mapping an
// arena when none is left, and makes its guard page; pool_mu is held.
// The free list grows to hold every stack made, so stack_put has room.
static void* fresh_stack(void) {
  if (fresh_left == 0) {
    if (nstacks + ARENA_STACKS > cappool) {
      size_t c = cappool ? 2 * cappool : 4 * ARENA_STACKS;
      while (c < nstacks + ARENA_STACKS) c *= 2;
      void** p = realloc(pool, c * sizeof(void*));
      if (!p) return NULL;
      pool = p;
      cappool = c;
    }
    char* a = mmap(NULL, (size_t)ARENA_STACKS * LANE_STACK, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) return NULL;
    fresh = a;
    fresh_left = ARENA_STACKS;
    nstacks += ARENA_STACKS;
  }
  char* s = fresh;
  if (guard(s) != 0) return NULL;  // tried again by the next lane
  fresh += LANE_STACK;
  fresh_left--;
  return s;
}

static void* stack_get(void) {
  void* s = NULL;
  pthread_mutex_lock(&pool_mu);
  if (npool > 0)
    s = pool[--npool];
  else
    s = fresh_stack();
  pthread_mutex_unlock(&pool_mu);
  return s;
}

static void stack_put(void* s) {
  pthread_mutex_lock(&pool_mu);
  int release = npool >= KEEP_STACKS;
  pool[npool++] = s;  // room: the list holds nstacks
  pthread_mutex_unlock(&pool_mu);
  if (release) madvise((char*)s + GUARD_PAGE, LANE_STACK - GUARD_PAGE, MADV_DONTNEED);
}

uint64_t emud_lane_stack(emud_lane* l, uint64_t* size) {
  *size = LANE_STACK;
  return (uint64_t)(uintptr_t)((lane_impl*)l->impl)->stack;
}

// A lane's records (emud_lane and its lane_impl, some 6 KiB) come from a
// free list of those of returned lanes, kept for good: a grid over its
// resident blocks makes and frees a lane per thread, and malloc gave the
// freed records' pages back and faulted them in again for the next block
// (a tenth of a 1 Mi-lane launch's time).
typedef struct lane_rec {
  emud_lane l;
  lane_impl im;
  struct lane_rec* next;  // on the free list
} lane_rec;
static lane_rec* free_recs;  // under pool_mu

static lane_rec* rec_get(void) {
  pthread_mutex_lock(&pool_mu);
  lane_rec* r = free_recs;
  if (r) free_recs = r->next;
  pthread_mutex_unlock(&pool_mu);
  if (!r) return calloc(1, sizeof(lane_rec));
  memset(r, 0, sizeof *r);
  return r;
}

static void rec_put(lane_rec* r) {
  pthread_mutex_lock(&pool_mu);
  r->next = free_recs;
  free_recs = r;
  pthread_mutex_unlock(&pool_mu);
}

emud_lane* emud_lane_new(emud_entry entry, void* arg) {
  lane_rec* r = rec_get();
  if (!r) return NULL;
  emud_lane* l = &r->l;
  lane_impl* im = &r->im;
  l->impl = im;
  im->entry = entry;
  im->arg = arg;
  im->stack = stack_get();
  if (!im->stack) {
    rec_put(r);
    return NULL;
  }
  l->stack_lo = (uint64_t)(uintptr_t)im->stack;
  l->stack_hi = l->stack_lo + LANE_STACK;
#ifdef EMUD_FAST_SWITCH
  // The frame emud_switch pops: MXCSR and x87 control word (this
  // thread's), r15, r14, r13 = lane_start, r12 = the lane, rbx, rbp, and
  // the return address, the trampoline; above it the stack is 16-aligned.
  uint64_t* top = (uint64_t*)((char*)im->stack + LANE_STACK);
  uint64_t* sp = top - 10;  // 8 words and 2 of headroom: (top - 2) is 16-aligned after the ret
  uint32_t csr[2];
  __asm__ volatile("stmxcsr %0" : "=m"(csr[0]));
  __asm__ volatile("fnstcw %0" : "=m"(*(uint16_t*)&csr[1]));
  csr[1] &= 0xffff;
  memcpy(&sp[0], csr, 8);
  sp[1] = 0;                                // r15
  sp[2] = 0;                                // r14
  sp[3] = (uint64_t)(uintptr_t)lane_start;  // r13
  sp[4] = (uint64_t)(uintptr_t)l;           // r12
  sp[5] = 0;                                // rbx
  sp[6] = 0;                                // rbp
  sp[7] = (uint64_t)(uintptr_t)emud_lane_trampoline;
  im->sp = sp;
  return l;
#else
  getcontext(&im->ctx);
  im->ctx.uc_stack.ss_sp = im->stack;
  im->ctx.uc_stack.ss_size = LANE_STACK;
  im->ctx.uc_link = &im->caller;
  uintptr_t p = (uintptr_t)l;
  makecontext(&im->ctx, (void (*)(void))lane_main, 2, (unsigned)(p & 0xffffffffu), (unsigned)(p >> 32));
  return l;
#endif
}

void emud_lane_free(emud_lane* l) {
  if (emud_lane_is_remote(l)) {  // a forked rank's lane (procs.c)
    emud_remote_free(l);
    return;
  }
  lane_impl* im = (lane_impl*)l->impl;
  stack_put(im->stack);
  rec_put((lane_rec*)l);  // l is its record's first member
}

// emud_resume runs lane l until its next device call (state 1), its return
// (state 2) or a fault (state 3: sig, fault_addr, fault_pc set).
void emud_resume(emud_lane* l) {
  if (emud_lane_is_remote(l)) {  // runs in its forked rank's process (procs.c)
    emud_remote_resume(l);
    return;
  }
  lane_impl* im = (lane_impl*)l->impl;
  // The mask need not be saved (a system call): the fault handler is
  // SA_NODEFER with an empty sa_mask, so it blocks nothing.
  if (sigsetjmp(im->fault, 0)) {
    cur_lane = NULL;
    builtins_of_host();
    l->state = 3;
    return;
  }
  l->state = 0;
  cur_lane = l;
  builtins_of(l);
#ifdef EMUD_FAST_SWITCH
  emud_switch(&im->caller_sp, im->sp);
#else
  swapcontext(&im->caller, &im->ctx);
#endif
  cur_lane = NULL;
  builtins_of_host();
}

uint64_t emud_yield(emud_lane* l, int op, const char* file, int line, const char* func) {
  lane_impl* im = (lane_impl*)l->impl;
  l->op = op;
  l->file = file;
  l->line = line;
  l->func = func;
  l->state = 1;
#ifdef EMUD_FAST_SWITCH
  emud_switch(&im->sp, im->caller_sp);
#else
  swapcontext(&im->ctx, &im->caller);
#endif
  return l->ret;
}

// ---- the device address range ----
//
// The Go runtime places its heap at a random address of the low 64 TiB
// (Go 1.26's randomized heap base), which can fall inside the GPU slices;
// so before anything else runs (a priority constructor precedes the Go
// runtime's own initialiser) the whole range 64 GPUs could use is
// reserved, inaccessible and without backing, and regions are later mapped
// inside it (emud_map_device). An address of the range that no region's
// 2 MiB chunk holds still faults, as an unmapped device address should.

#define EMUD_DEFAULT_BASE 0x200000000000ull  // capi's DefaultBase
#define EMUD_SLICE (64ull << 30)             // lsa.DefaultStride
#define EMUD_MAX_GPUS 64

static uint64_t resv_lo, resv_hi;  // the reserved range, 0 = none

__attribute__((constructor(101))) static void reserve_device_range(void) {
  emud_heap_setup();  // heap.c: first, before any thread
  uint64_t base = EMUD_DEFAULT_BASE;
  const char* e = getenv("EMUD_BASE");
  if (e && *e) {
    char* end = NULL;
    base = strtoull(e, &end, 16);  // strtoull takes the 0x prefix too
    if (!end || *end || base == 0 || base % (4ull << 30) != 0) return;  // start() names the bad value
  }
  uint64_t size = EMUD_MAX_GPUS * EMUD_SLICE + EMUD_ARENA_SIZE;  // the arena's room last
  void* p = mmap((void*)(uintptr_t)base, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                 -1, 0);
  if (p == MAP_FAILED) return;
  if ((uint64_t)(uintptr_t)p != base) {  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    munmap(p, size);
    return;
  }
  resv_lo = base;
  resv_hi = base + size - EMUD_ARENA_SIZE;
}

// emud_map_device maps [base, base+size) read-write inside the reserved
// range: 0 on success, -1 when the range is not inside it (the caller then
// maps it as engine.MapAt does), errno on failure.
//
// Mappings are made in whole 2 MiB chunks (the x86-64 huge page) with
// MADV_HUGEPAGE, each chunk once: a region's first touch then costs one
// fault per 2 MiB instead of one per 4 KiB page (a fault is some 20 µs in
// a virtual machine with shadow page tables, and the faults of a few MiB
// of fresh device memory were most of a small program's run), and the
// regions of one GPU, allocated one after another, share their chunks.
// What a region gets that an earlier region's chunk already maps is
// cleared where it is resident (mincore), so a region still starts as
// zero bytes even after a lane's stray store into the chunk's free tail.
// An address outside every chunk still faults; one past a region but
// inside its chunk does not (a GPU's allocator also maps in large pages).
#define EMUD_CHUNK (2ull << 20)

static pthread_mutex_t map_mu = PTHREAD_MUTEX_INITIALIZER;

// ext_list is a sorted list of disjoint extents [lo, hi).
typedef struct {
  uint64_t (*e)[2];
  int n, cap;
} ext_list;

static ext_list mapped;  // chunks mapped read-write for this emulation
// parked: chunks a seed server's earlier seed mapped, kept (PROT_NONE,
// all zero bytes) for a later seed's regions at the same addresses, so
// that seed neither faults them in again nor has the kernel clear them
// (emud_seed_reset_c). A process run never parks a chunk.
static ext_list parked;

// ext_add records [lo, hi) in l, merging with its neighbours.
static int ext_add(ext_list* l, uint64_t lo, uint64_t hi) {
  int i = 0;
  while (i < l->n && l->e[i][1] < lo) i++;
  if (i < l->n && l->e[i][0] <= hi) {  // touches extent i (and maybe the ones after)
    if (lo < l->e[i][0]) l->e[i][0] = lo;
    if (hi > l->e[i][1]) l->e[i][1] = hi;
    while (i + 1 < l->n && l->e[i + 1][0] <= l->e[i][1]) {
      if (l->e[i + 1][1] > l->e[i][1]) l->e[i][1] = l->e[i + 1][1];
      memmove(&l->e[i + 1], &l->e[i + 2], (size_t)(l->n - i - 2) * sizeof l->e[0]);
      l->n--;
    }
    return 0;
  }
  if (l->n == l->cap) {
    int c = l->cap ? 2 * l->cap : 16;
    void* p = realloc(l->e, (size_t)c * sizeof l->e[0]);
    if (!p) return ENOMEM;
    l->e = p;
    l->cap = c;
  }
  memmove(&l->e[i + 1], &l->e[i], (size_t)(l->n - i) * sizeof l->e[0]);
  l->e[i][0] = lo;
  l->e[i][1] = hi;
  l->n++;
  return 0;
}

// ext_remove takes [lo, hi) out of l, splitting an extent that holds it
// in its middle.
static int ext_remove(ext_list* l, uint64_t lo, uint64_t hi) {
  for (int i = 0; i < l->n; i++) {
    uint64_t a = l->e[i][0], b = l->e[i][1];
    if (b <= lo || a >= hi) continue;
    if (a < lo && b > hi) {  // the middle: split in two
      l->e[i][1] = lo;
      return ext_add(l, hi, b);  // [lo, hi) lies between: no merge
    }
    if (a < lo) {
      l->e[i][1] = lo;
    } else if (b > hi) {
      l->e[i][0] = hi;
    } else {  // all of it
      memmove(&l->e[i], &l->e[i + 1], (size_t)(l->n - i - 1) * sizeof l->e[0]);
      l->n--;
      i--;
    }
  }
  return 0;
}

static uint64_t ext_bytes(const ext_list* l) {
  uint64_t n = 0;
  for (int i = 0; i < l->n; i++) n += l->e[i][1] - l->e[i][0];
  return n;
}

// map_chunks maps [lo, hi) (chunk-aligned, not mapped yet) as huge pages;
// what of it is parked is made accessible again instead, its bytes zero
// already and its huge pages resident.
static int map_chunks(uint64_t lo, uint64_t hi) {
  int shared = emud_procs_map(lo, hi);  // once ranks run as processes, chunks are shared (procs.c)
  if (shared >= 0) {
    if (shared) return shared;
    int rc = ext_remove(&parked, lo, hi);  // the shared mapping replaced them
    return rc ? rc : ext_add(&mapped, lo, hi);
  }
  for (uint64_t a = lo; a < hi;) {
    int i = 0;
    while (i < parked.n && parked.e[i][1] <= a) i++;
    uint64_t e;
    if (i < parked.n && parked.e[i][0] <= a) {
      e = parked.e[i][1] < hi ? parked.e[i][1] : hi;
      if (mprotect((void*)(uintptr_t)a, e - a, PROT_READ | PROT_WRITE) != 0) return errno ? errno : 1;
      int rc = ext_remove(&parked, a, e);
      if (rc != 0) return rc;
    } else {
      e = i < parked.n && parked.e[i][0] < hi ? parked.e[i][0] : hi;
      void* p = mmap((void*)(uintptr_t)a, e - a, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (p == MAP_FAILED) return errno ? errno : 1;
      madvise(p, e - a, MADV_HUGEPAGE);  // advice: without transparent huge pages it is 4 KiB pages all the same
    }
    int rc = ext_add(&mapped, a, e);
    if (rc != 0) return rc;
    a = e;
  }
  return 0;
}

static void zero_dirty(uint64_t lo, uint64_t hi);

// clear_resident zeroes the resident pages of [lo, hi) (page-aligned,
// inside one or two chunks already mapped): pages never touched read as
// zero already, and clearing them would fault them in. A resident page
// is read first and cleared only if a byte is not zero (zero_dirty): the
// free tail of a chunk, which a new region mostly gets, is clean unless
// a stray store dirtied it, and reading it costs less than writing it.
static void clear_resident(uint64_t lo, uint64_t hi) { zero_dirty(lo, hi); }

uint64_t emud_resv_lo(void) { return resv_lo; }
uint64_t emud_resv_hi(void) { return resv_hi; }
uint64_t emud_resv_arena(void) { return resv_lo ? resv_hi : 0; }
// emud_device_extents calls f on each mapped chunk extent, with the
// mapping lock held (procs.c shares them at the first fork).
int emud_device_extents(int (*f)(uint64_t lo, uint64_t hi)) {
  int rc = 0;
  pthread_mutex_lock(&map_mu);
  for (int i = 0; i < mapped.n && rc == 0; i++) rc = f(mapped.e[i][0], mapped.e[i][1]);
  pthread_mutex_unlock(&map_mu);
  return rc;
}

int emud_map_device(uint64_t base, uint64_t size) {
  if (resv_lo == 0 || base < resv_lo || base >= resv_hi || size > resv_hi - base) return -1;
  uint64_t lo = base & ~(EMUD_CHUNK - 1), hi = (base + size + EMUD_CHUNK - 1) & ~(EMUD_CHUNK - 1);
  if (hi > resv_hi) hi = resv_hi;
  int rc = 0;
  pthread_mutex_lock(&map_mu);
  // Walk [lo, hi): map each gap between the extents already mapped, and
  // clear what the region gets of those extents.
  for (uint64_t a = lo; a < hi && rc == 0;) {
    int i = 0;
    while (i < mapped.n && mapped.e[i][1] <= a) i++;
    if (i == mapped.n || mapped.e[i][0] >= hi) {
      rc = map_chunks(a, hi);
      break;
    }
    if (mapped.e[i][0] > a) {
      uint64_t e = mapped.e[i][0];
      rc = map_chunks(a, e);
      a = e;
      continue;
    }
    uint64_t e = mapped.e[i][1] < hi ? mapped.e[i][1] : hi;
    uint64_t clo = a > base ? a : base, chi = e < base + size ? e : base + size;
    if (clo < chi) clear_resident(clo, chi);
    a = e;
  }
  pthread_mutex_unlock(&map_mu);
  return rc;
}

// ---- faults in lane code ----

static struct sigaction old_act[65];
static const int fault_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};

#if defined(__x86_64__)
// gpu_divide gives an integer division that trapped in lane code (a
// divisor of 0, or INT_MIN / -1) the value a GPU goes on with, where x86
// raises SIGFPE: a GPU's div never traps (PTX leaves the quotient by zero
// unspecified), so a kernel that divides by zero and never uses the
// result runs on the device. emud's values: a quotient of all ones and
// the dividend as remainder for a zero divisor (q*0 + r = x), the
// dividend and 0 for the overflow. It decodes the faulting DIV or IDIV
// (prefixes, REX, F6/F7 /6 or /7, ModRM, SIB, displacement), sets the
// result registers as the instruction would and steps past it; 0 when
// the instruction is not one.
static int gpu_divide(ucontext_t* uc, int code) {
  greg_t* g = uc->uc_mcontext.gregs;
  static const int regs[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                               REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  const unsigned char* p = (const unsigned char*)(uintptr_t)g[REG_RIP];
  int n = 0, opsize = 4, rex = 0, segment = 0;
  (void)code;  // Linux says FPE_INTDIV for both: the divisor tells them apart
  for (;; n++) {
    unsigned char b = p[n];
    if (b == 0x66) {
      opsize = 2;
    } else if (b == 0x64 || b == 0x65) {
      segment = 1;  // a TLS operand: its base is not in the context
    } else if (!(b == 0x67 || b == 0xF2 || b == 0xF3 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 || b == 0xF0)) {
      break;
    }
    if (n > 14) return 0;
  }
  if ((p[n] & 0xF0) == 0x40) rex = p[n++];
  unsigned char op = p[n++];
  if (op != 0xF6 && op != 0xF7) return 0;
  unsigned char modrm = p[n++];
  int reg = (modrm >> 3) & 7, mod = modrm >> 6, rm = modrm & 7;
  if (reg != 6 && reg != 7) return 0;
  if (op == 0xF6) opsize = 1;
  if (rex & 8) opsize = 8;
  // The divisor's address (a memory operand), as the CPU computed it.
  uint64_t ea = 0;
  int known = 1;
  if (mod != 3) {
    int base = rm | (rex & 1) << 3;
    if (rm == 4) {
      unsigned char sib = p[n++];
      int index = ((sib >> 3) & 7) | (rex & 2) << 2, scale = sib >> 6;
      base = (sib & 7) | (rex & 1) << 3;
      if (index != 4) ea += (uint64_t)g[regs[index]] << scale;
      if (mod == 0 && (sib & 7) == 5) {
        int32_t d;
        memcpy(&d, p + n, 4);
        n += 4;
        ea += (uint64_t)(int64_t)d;
        base = -1;
      }
    } else if (mod == 0 && rm == 5) {  // RIP-relative: from the next instruction
      int32_t d;
      memcpy(&d, p + n, 4);
      n += 4;
      ea = (uint64_t)g[REG_RIP] + (uint64_t)n + (uint64_t)(int64_t)d;
      base = -1;
    }
    if (base >= 0) ea += (uint64_t)g[regs[base]];
    if (mod == 1) {
      ea += (uint64_t)(int64_t)(int8_t)p[n];
      n += 1;
    } else if (mod == 2) {
      int32_t d;
      memcpy(&d, p + n, 4);
      n += 4;
      ea += (uint64_t)(int64_t)d;
    }
    known = !segment;
  }
  const int bits = opsize * 8;
  const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  uint64_t divisor = 0;
  if (mod == 3) {
    int rr = rm | (rex & 1) << 3;
    divisor = (uint64_t)g[regs[rr]];
    if (opsize == 1 && !rex && rm >= 4) divisor = (uint64_t)g[regs[rm - 4]] >> 8;  // AH, CH, DH, BH
  } else if (known) {
    memcpy(&divisor, (const void*)(uintptr_t)ea, (size_t)opsize);
  }
  divisor &= mask;
  uint64_t lo = (uint64_t)g[REG_RAX] & mask;
  uint64_t q, r;
  if (known && divisor != 0) {  // INT_MIN / -1: the dividend, and no remainder
    q = lo, r = 0;
  } else {
    q = mask, r = lo;
  }
  if (opsize == 1) {  // AX / r/m8: AL the quotient, AH the remainder
    g[REG_RAX] = (greg_t)(((uint64_t)g[REG_RAX] & ~0xFFFFull) | ((r & 0xFF) << 8) | (q & 0xFF));
  } else if (opsize == 2) {
    g[REG_RAX] = (greg_t)(((uint64_t)g[REG_RAX] & ~0xFFFFull) | q);
    g[REG_RDX] = (greg_t)(((uint64_t)g[REG_RDX] & ~0xFFFFull) | r);
  } else {  // a 32-bit result zeroes the register's upper half, as on x86
    g[REG_RAX] = (greg_t)q;
    g[REG_RDX] = (greg_t)r;
  }
  g[REG_RIP] += n;
  return 1;
}

static int divide_noted;
#endif

static void on_fault(int sig, siginfo_t* info, void* uctx) {
  emud_lane* l = cur_lane;
#if defined(__x86_64__)
  if (l && sig == SIGFPE && (info->si_code == FPE_INTDIV || info->si_code == FPE_INTOVF)) {
    uint64_t pc = (uint64_t)((ucontext_t*)uctx)->uc_mcontext.gregs[REG_RIP];
    if (gpu_divide((ucontext_t*)uctx, info->si_code)) {
      if (!__atomic_exchange_n(&divide_noted, 1, __ATOMIC_RELAXED)) {
        char m[256];
        int k = snprintf(m, sizeof m,
                         "emud: a lane's integer division by zero or of INT_MIN by -1 at pc %#llx went on as on a GPU "
                         "(which does not trap): see capi/lane.c's gpu_divide for the values (said once a process)\n",
                         (unsigned long long)pc);
        if (k > 0) (void)!write(2, m, (size_t)(k < (int)sizeof m ? k : (int)sizeof m - 1));
      }
      return;
    }
  }
#endif
  if (l) {
    l->sig = sig;
    l->fault_addr = (uint64_t)(uintptr_t)info->si_addr;
#if defined(__x86_64__)
    l->fault_pc = (uint64_t)((ucontext_t*)uctx)->uc_mcontext.gregs[REG_RIP];
#endif
    siglongjmp(((lane_impl*)l->impl)->fault, 1);
  }
  // Not a lane: the previous handler (the Go runtime's) decides.
  struct sigaction* o = &old_act[sig];
  if (o->sa_flags & SA_SIGINFO) {
    if (o->sa_sigaction) {
      o->sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
    o->sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// emud_fault_default makes a fault outside lane code end the process as
// by default (a forked rank, whose Go runtime's handler cannot run).
void emud_fault_default(void) {
  for (size_t i = 0; i < sizeof fault_sigs / sizeof fault_sigs[0]; i++) {
    memset(&old_act[fault_sigs[i]], 0, sizeof old_act[0]);
    old_act[fault_sigs[i]].sa_handler = SIG_DFL;
  }
}

static int faults_installed;  // once per process: a seed server's later seeds keep them
void* emud_fault_handler(void) { return (void*)on_fault; }

void emud_install_fault_handlers(void) {
  if (faults_installed) return;
  faults_installed = 1;
  for (size_t i = 0; i < sizeof fault_sigs / sizeof fault_sigs[0]; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(fault_sigs[i], &sa, &old_act[fault_sigs[i]]);
  }
}

// ---- host threads ----
//
// A thread created by a host thread of the program (std::thread, pthread)
// becomes a host thread of the emulation: its creation, start and end are
// ordered by the emulator, so the threads' calls interleave the same way on
// every run. Threads the runtime creates for itself (the Go runtime's)
// pass straight through.

static int (*real_create)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
static int (*real_join)(pthread_t, void**);

struct tramp {
  void* (*fn)(void*);
  void* arg;
  int id;
};

#define MAX_TRACKED 4096
static pthread_mutex_t tr_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t tr_thread[MAX_TRACKED];
static int tr_id[MAX_TRACKED];
static int ntr;

// started is set once the Go side has built the emulation, on the thread
// whose first call built it; other threads read it without a lock, so it
// is read and written atomically (a thread that sees it set sees the
// emulation built).
static int started;
static int adopted;  // the main thread's first call adopted the early threads (under tr_mu): later ones are hosts
int emud_started(void) { return __atomic_load_n(&started, __ATOMIC_ACQUIRE); }
void emud_set_started(void) { __atomic_store_n(&started, 1, __ATOMIC_RELEASE); }
static int forked;   // this process is a fork: 1 before the emulation started, 2 after

// A forked child has no working emulator of its own: the Go runtime
// starts when the program loads, and of its threads only the forking one
// survives a fork, so a call into it would hang. A child of a host
// thread is a rank of its parent's node (procs.c); any other forked
// process (a rank's own child, or a child whose node could not be shared,
// which fork warned of) says so at its first call and exits 1.
static void on_fork_child(void) { forked = emud_started() ? 2 : 1; }

static void forked_call(const char* what, const char* file, int line) {
  fprintf(stderr,
          "emud: %s:%d: %s in a process forked %s that is not a rank of an emulated node: only the children a host "
          "thread of the node's process forks are ranks (not a rank's own child, nor one whose fork warned that the "
          "node could not be shared); of emud's runtime only the forking thread survives a fork\n",
          file ? file : "?", line, what,
          forked == 2 ? "after the emulation started" : "before the program's first HIP/cco call");
  fflush(stderr);
  _exit(1);
}

// The main thread is the program's first host thread.
__attribute__((constructor)) static void mark_main(void) {
  host_id = 0;
  note_tid(0, 1);
  pthread_atfork(NULL, NULL, on_fork_child);
}

int emud_forked(void) { return forked; }
int emud_in_emud(void) { return in_emud; }
void emud_enter(void) { in_emud++; }
void emud_leave(void) { in_emud--; }
int emud_host_id(void) { return host_id; }
void emud_set_host_id(int id) {
  host_id = id;
  note_tid(id, 1);
}

static void* trampoline(void* p) {
  struct tramp t = *(struct tramp*)p;
  free(p);
  host_id = t.id;
  note_tid(t.id, 1);
  in_emud++;
  emudGoHostAttach(t.id);
  in_emud--;
  void* r = t.fn(t.arg);
  emud_free_close();
  in_emud++;
  emudGoHostExit(t.id);
  in_emud--;
  note_tid(t.id, 0);
  host_id = -1;
  return r;
}

static void resolve(void) {
  if (!real_create) real_create = dlsym(RTLD_NEXT, "pthread_create");
  if (!real_join) real_join = dlsym(RTLD_NEXT, "pthread_join");
}

// Threads the main thread starts before the program's first HIP/cco call
// (a thread pool made early, ranks started before any of them calls HIP)
// are host threads too: the emulation, when it starts, adopts those still
// running, in the order they were created, as threads of the main thread;
// each takes its first turn at its first emud call (or when it returns).
// The Go runtime's first thread is created from the main thread while the
// program loads, so it is recorded too; the Go side's init marks it as
// the runtime's (emud_early_runtime), and it is never adopted.
enum { EARLY_RUNNING, EARLY_EXITED, EARLY_ADOPTED, EARLY_RUNTIME };
#define MAX_EARLY 1024
static struct {
  pthread_t th;
  int th_set, state, id;
} early[MAX_EARLY];
static int nearly;
static __thread int my_early = -1;  // this thread's entry in early[], -1 = none

static void track(pthread_t th, int id) {  // with tr_mu held
  if (ntr < MAX_TRACKED) {
    tr_thread[ntr] = th;
    tr_id[ntr++] = id;
  }
}

struct etramp {
  void* (*fn)(void*);
  void* arg;
  int idx;
};

static void* early_trampoline(void* p) {
  struct etramp t = *(struct etramp*)p;
  free(p);
  my_early = t.idx;
  void* r = t.fn(t.arg);
  pthread_mutex_lock(&tr_mu);
  int id = early[t.idx].state == EARLY_ADOPTED ? early[t.idx].id : -1;
  if (early[t.idx].state == EARLY_RUNNING) early[t.idx].state = EARLY_EXITED;
  pthread_mutex_unlock(&tr_mu);
  if (id >= 0 && !forked) {
    emud_free_close();
    in_emud++;
    if (host_id < 0) {  // adopted, never called in: its first turn is its end
      host_id = id;
      note_tid(id, 1);
      emudGoHostAttach(id);
    }
    emudGoHostExit(id);
    in_emud--;
    note_tid(id, 0);
    host_id = -1;
  }
  return r;
}

static int early_create(pthread_t* th, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
  struct etramp* t = malloc(sizeof *t);
  pthread_mutex_lock(&tr_mu);
  if (!t || nearly == MAX_EARLY) {  // past the table: a thread emud does not know
    pthread_mutex_unlock(&tr_mu);
    free(t);
    return real_create(th, attr, fn, arg);
  }
  int i = nearly++;  // a zero entry: a seed server's reset clears the last seed's
  early[i].state = EARLY_RUNNING;
  pthread_mutex_unlock(&tr_mu);
  t->fn = fn;
  t->arg = arg;
  t->idx = i;
  int rc = real_create(th, attr, early_trampoline, t);
  pthread_mutex_lock(&tr_mu);
  if (rc != 0) {
    early[i].state = EARLY_EXITED;
  } else {
    early[i].th = *th;  // before any adoption: that is the main thread's, like this create
    early[i].th_set = 1;
  }
  pthread_mutex_unlock(&tr_mu);
  if (rc != 0) free(t);
  return rc;
}

// The Go side's adoption, at the main thread's first call, on the main
// thread: it holds the lock while it makes each adopted thread's host (an
// early thread ending meanwhile waits, and then finds its host made).
void emud_early_lock(void) { pthread_mutex_lock(&tr_mu); }
void emud_early_unlock(void) { pthread_mutex_unlock(&tr_mu); }
int emud_early_next(void) {  // the first early thread still running and not adopted, or -1
  for (int i = 0; i < nearly; i++)
    if (early[i].state == EARLY_RUNNING) return i;
  adopted = 1;  // with the lock still held: no early thread comes after the last adopted
  return -1;
}
void emud_early_adopt(int i, int id) {
  early[i].state = EARLY_ADOPTED;
  early[i].id = id;
  if (early[i].th_set) track(early[i].th, id);
}
void emud_early_runtime(void) {
  pthread_mutex_lock(&tr_mu);
  if (my_early >= 0) early[my_early].state = EARLY_RUNTIME;
  pthread_mutex_unlock(&tr_mu);
}
int emud_main_entered(void) { return adopted; }  // on the main thread: whether it has called in

// emud_early_pending says whether the calling thread is an early thread
// still waiting for its adoption (the main thread has not called in).
int emud_early_pending(void) {
  if (my_early < 0) return 0;
  pthread_mutex_lock(&tr_mu);
  int p = early[my_early].state == EARLY_RUNNING && !adopted;
  pthread_mutex_unlock(&tr_mu);
  return p;
}

// emud_early_unattached says whether the calling thread is an early
// thread that has not called in yet, adopted or still waiting for its
// adoption. A wait of its own in glibc (a condition variable, a mutex, a
// semaphore, a futex) begun before the adoption would hold the turn the
// adoption gives it while the thread it waits for waits for a turn: the
// interposers (pmutex.c, psync.c, pbarrier.c) wait natively in slices of
// a millisecond instead, and at each slice's end call in
// (emud_early_attach) once adopted, and wait in virtual time.
int emud_early_unattached(void) {
  if (my_early < 0 || host_id >= 0 || forked || in_emud || cur_lane) return 0;
  pthread_mutex_lock(&tr_mu);
  int st = early[my_early].state;
  pthread_mutex_unlock(&tr_mu);
  return st == EARLY_RUNNING || st == EARLY_ADOPTED;
}

// emud_early_attach: an adopted early thread that has not called in does
// (EMUD_H_START: its first turn), so that it is a host thread in its turn
// (1); 0 if it is not one or not adopted yet.
int emud_early_attach(void) {
  if (my_early < 0 || host_id >= 0 || forked || in_emud || cur_lane || !emud_started()) return 0;
  pthread_mutex_lock(&tr_mu);
  int st = early[my_early].state;
  pthread_mutex_unlock(&tr_mu);
  if (st != EARLY_ADOPTED) return 0;
  uint64_t a[16] = {0};
  emud_host(EMUD_H_START, a, "its first wait", 0);
  return host_id >= 0;
}

// emud_early_slice sets at to the end of an early thread's next native
// slice of a wait on clock: a millisecond from now, or the caller's own
// deadline (NULL: none) if sooner; 1 when it is the caller's.
int emud_early_slice(clockid_t clock, const struct timespec* deadline, struct timespec* at) {
  clock_gettime(clock, at);
  at->tv_nsec += 1000000;
  if (at->tv_nsec >= 1000000000) at->tv_sec++, at->tv_nsec -= 1000000000;
  if (deadline && (deadline->tv_sec < at->tv_sec || (deadline->tv_sec == at->tv_sec && deadline->tv_nsec <= at->tv_nsec))) {
    *at = *deadline;
    return 1;
  }
  return 0;
}

// emud_early_id is the host of an adopted early thread calling in for the
// first time (and becomes its host_id), or -1.
int emud_early_id(void) {
  if (my_early < 0) return -1;
  pthread_mutex_lock(&tr_mu);
  int id = early[my_early].state == EARLY_ADOPTED ? early[my_early].id : -1;
  pthread_mutex_unlock(&tr_mu);
  if (id >= 0) {
    host_id = id;
    note_tid(id, 1);
  }
  return id;
}

// runtime_thread says whether a thread is a library runtime's own: one
// created by code in a shared object other than the program's image (the
// emulator's too), the C library and the C++ library (std::thread). MPI's
// PMIx and libevent progress threads, made in MPI_Init before the first
// HIP call, never call emud: adopted as host threads, each would hold its
// first turn forever and the run would end in a false hang report. They
// run as plain threads, outside the emulation.
static void* seed_base;              // the seed server's loaded program (its dli_fbase), NULL = none
static char seed_file[PATH_MAX + 1];  // its path as dlopen was given it, "" = none

static int seed_object(const Dl_info* c) {
  return (seed_base && c->dli_fbase == seed_base) || (seed_file[0] && c->dli_fname && !strcmp(c->dli_fname, seed_file));
}

static int runtime_thread_of(void* caller) {
  Dl_info self, c;
  if (!caller || !dladdr((void*)&runtime_thread_of, &self) || !dladdr(caller, &c) || !c.dli_fname) return 0;
  if (c.dli_fbase == self.dli_fbase || seed_object(&c)) return 0;
  const char* base = strrchr(c.dli_fname, '/');
  base = base ? base + 1 : c.dli_fname;
  return strncmp(base, "libc.so", 7) != 0 && strncmp(base, "libstdc++.so", 12) != 0 &&
         strncmp(base, "libpthread.so", 13) != 0;
}

// The answer for the last caller, kept while no object was loaded or
// unloaded since (the loader's counts): dladdr searches a whole object's
// symbols for the nearest, and a seed's threads (std::thread's) all come
// from one call site in the C++ library.
static pthread_mutex_t rt_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void* caller;
  unsigned long long adds, subs;
  int ans;
} rt_last;

static int load_counts(struct dl_phdr_info* i, size_t n, void* d) {
  (void)n;
  unsigned long long* c = d;
  c[0] = i->dlpi_adds;
  c[1] = i->dlpi_subs;
  return 1;  // the first object's counts are the loader's
}

static int runtime_thread(void* caller) {
  unsigned long long c[2] = {0, 0};
  dl_iterate_phdr(load_counts, c);
  pthread_mutex_lock(&rt_mu);
  int hit = caller && rt_last.caller == caller && rt_last.adds == c[0] && rt_last.subs == c[1];
  int ans = rt_last.ans;
  pthread_mutex_unlock(&rt_mu);
  if (hit) return ans;
  ans = runtime_thread_of(caller);
  pthread_mutex_lock(&rt_mu);
  rt_last.caller = caller;
  rt_last.adds = c[0];
  rt_last.subs = c[1];
  rt_last.ans = ans;
  pthread_mutex_unlock(&rt_mu);
  return ans;
}

int pthread_create(pthread_t* th, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
  resolve();
  if (forked) return real_create(th, attr, fn, arg);  // its first emud call says what is wrong
  if (runtime_thread(__builtin_return_address(0))) return real_create(th, attr, fn, arg);
  // The main thread has not called in yet (the emulation may have been
  // built meanwhile, by an early thread's call): th is an early thread
  // too, adopted at the main thread's first call, whatever the OS's
  // timing. Only the main thread's first call sets adopted.
  if (host_id == 0 && !adopted && !in_emud && !cur_lane) return early_create(th, attr, fn, arg);
  if (!emud_started() || host_id < 0 || in_emud || cur_lane) return real_create(th, attr, fn, arg);
  struct tramp* t = malloc(sizeof *t);
  if (!t) return 11; /* EAGAIN */
  t->fn = fn;
  t->arg = arg;
  emud_free_close();
  in_emud++;
  const int id = t->id = emudGoHostSpawn(host_id);
  in_emud--;
  // t is the new thread's from here: its trampoline frees it, perhaps
  // before real_create returns, so the id is read from our own copy (a
  // read of t->id after it, of freed memory, tracked the thread under a
  // garbage host id now and then, and its pthread_join then panicked in
  // emudGoHostJoin: about 1 run in 300-800 of put_overwrite under
  // EMUD_RACE=1).
  int rc = real_create(th, attr, trampoline, t);
  if (rc == 0) {
    pthread_mutex_lock(&tr_mu);
    track(*th, id);
    pthread_mutex_unlock(&tr_mu);
  } else {
    free(t);
  }
  return rc;
}

int pthread_join(pthread_t th, void** ret) {
  resolve();
  int id = -1;
  if (!adopted && !forked && host_id == 0 && !in_emud) {
    // The main thread joins a thread it started before its first call:
    // that call is this one (it adopts the thread, building the
    // emulation if no thread has), so that the join waits in virtual time
    // and the thread's calls get their turns; a real join here would hold
    // the main thread where the emulation cannot give its turn away.
    int running = 0;
    pthread_mutex_lock(&tr_mu);
    for (int i = 0; i < nearly; i++)
      if (early[i].th_set && pthread_equal(early[i].th, th) && early[i].state == EARLY_RUNNING) running = 1;
    pthread_mutex_unlock(&tr_mu);
    if (running) {
      uint64_t a[16] = {0};
      emud_host(EMUD_H_START, a, "pthread_join", 0);
    }
  }
  if (emud_started() && !forked && host_id >= 0 && !in_emud) {
    pthread_mutex_lock(&tr_mu);
    for (int i = 0; i < ntr; i++) {
      if (pthread_equal(tr_thread[i], th)) {
        id = tr_id[i];
        tr_thread[i] = tr_thread[ntr - 1];
        tr_id[i] = tr_id[--ntr];
        break;
      }
    }
    pthread_mutex_unlock(&tr_mu);
  }
  if (id >= 0) {
    emud_free_close();
    in_emud++;
    emudGoHostJoin(host_id, id);
    in_emud--;
  }
  return real_join(th, ret);
}

int emud_host(int op, uint64_t* a, const char* file, int line) {
  if (emud_client_active()) return emud_client_call(op, a, file, line);  // a forked rank, or one started apart (procs.c)
  if (forked) forked_call("a HIP/cco call", file, line);
  emud_node_serve();  // rank 0 of ranks started apart takes the others in at its first call (procs.c)
  emud_free_close();  // back from a blocking call outside emud (MPI): wait to be let in
  in_emud++;
  int rc = emudGoHost(op, a, (char*)file, line);
  in_emud--;
  return rc;
}

// run_over: the main thread's end of run has run (at_exit): its exit
// handlers and static destructors after it lock, sleep and wait natively
// (pmutex.c, psleep.c), as the emulation has ended.
static int run_over;
int emud_run_over(void) { return __atomic_load_n(&run_over, __ATOMIC_ACQUIRE); }

static void at_exit(void) {
  if (host_id != 0 || forked) return;  // exit() from another thread, or a forked child: nothing to wait for
  emud_free_close();
  in_emud++;
  emudGoExit();
  in_emud--;
  __atomic_store_n(&run_over, 1, __ATOMIC_RELEASE);
}

static int exit_registered;  // once per process: a seed server's seeds must not pile up handlers

// A seed server's seed registers the end of run among its object's own
// exit handlers (the object's __dso_handle, seed_dso): the server runs
// them with __cxa_finalize when main returns, so the program's handlers
// and static destructors registered after its first emud call run before
// the end of run and the earlier ones after it, as exit orders them.
extern int __cxa_atexit(void (*fn)(void*), void* arg, void* dso);
static void* seed_dso;
static int exit_in_dso;  // this seed's end of run is among the object's handlers
static void at_exit_dso(void* arg) {
  (void)arg;
  at_exit();
}
void emud_seed_dso(void* dso) { seed_dso = dso; }
int emud_seed_exit_in_dso(void) { return exit_in_dso; }

void emud_register_exit(void) {
  if (seed_dso) {
    exit_in_dso = __cxa_atexit(at_exit_dso, NULL, seed_dso) == 0;
    if (exit_in_dso) return;
  }
  if (exit_registered) return;
  exit_registered = 1;
  atexit(at_exit);
}

// ---- lane loads and stores: the ThreadSanitizer callback ABI ----
//
// Lane code compiled with -fsanitize=thread (emud c++ passes the flag to
// the compiler only; the program does not link TSan's runtime) calls
// these for every load, store and atomic. In host code (no lane) they do
// nothing but the atomic itself. In a lane, a device address is logged for
// the race detector (when it is on) and recorded at the lane's next
// device call; an address that is neither device memory, the lane's
// stack, the program's static data nor memory the runtime lent the lane
// (allow_lo/hi) is a host pointer: the lane fails with the address.

static int race_on;  // the Go side's race detector is on
void emud_set_race(int on) { race_on = on; }

// lsa_gpus is the node's GPU count once an NCCL dev comm exists, 0
// before and in MORI programs: a lane's accesses to another GPU's slice
// below it are LSA peer accesses, which the fabric times (lanecost.go).
static int lsa_gpus;
void emud_set_lsa_gpus(int n) { lsa_gpus = n; }
int emud_race_on(void) { return race_on; }

// Host code's cost (hostcost.go, EMUD_HOST_GBPS): the bytes a host
// thread's instrumented code loads and stores, counted only while on.
static int host_cost_on;
static __thread uint64_t host_bytes;
void emud_set_host_cost(int on) { host_cost_on = on; }
uint64_t emud_host_bytes_take(void) {
  uint64_t n = host_bytes;
  host_bytes = 0;
  return n;
}

// Runtime objects that lane code reads (ccoWindow_t's device struct): in
// this file's static data, which lanes may touch. Never freed. The bump
// offset lives in the pool's first line, not in a static of its own:
// procs.c shares the pool between the processes of a node, and objects are
// made in every one of them (include/emud/mori_host.cpp builds a MORI
// header's window structs in the rank's process), so each process kept
// its own offset and handed out the same addresses: with a user's MORI
// header in fork mode, every rank's window struct was the last writer's,
// and every put read one rank's source (test_sdma_put: 0/8).
static _Alignas(4096) char obj_pool[1 << 20];  // page-aligned: procs.c shares it at the first fork
enum { OBJ_HEAD = 64 };                         // the offset word's line
void* emud_obj_pool(size_t* n) {
  *n = sizeof obj_pool;
  return obj_pool;
}
void* emud_obj_alloc(size_t n) {
  n = (n + 63) & ~(size_t)63;
  uint64_t* used = (uint64_t*)(void*)obj_pool;
  uint64_t off = OBJ_HEAD + __atomic_fetch_add(used, (uint64_t)n, __ATOMIC_RELAXED);
  if (off + n <= sizeof obj_pool) return obj_pool + off;
  return calloc(1, n);  // past the pool: heap (a TSan-built lane reading it fails as a host access)
}

static uint64_t seg_lo[32], seg_hi[32];  // the program's own loaded segments
static int nseg;

// Host memory the program registered (hipHostRegister), which lanes may
// touch as the device would through its mapping: at most 256 ranges at
// once. Changed only in a host thread's turn, read by lanes (one runs at
// a time); reg_mu orders host threads of a rank process that register
// outside the emulation.
#define MAX_REG 256
static uint64_t reg_lo[MAX_REG], reg_hi[MAX_REG];
static unsigned reg_flags[MAX_REG];
static int nreg;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

int emud_host_register(uint64_t p, uint64_t n, unsigned flags) {
  if (n == 0 || p + n < p) return 1;
  int rc = 0;
  emud_real_mutex_lock(&reg_mu);
  for (int i = 0; i < nreg && !rc; i++)
    if (p < reg_hi[i] && reg_lo[i] < p + n) rc = 2;  // overlaps a registered range
  if (!rc && nreg == MAX_REG) rc = 3;
  if (!rc) {
    reg_lo[nreg] = p, reg_hi[nreg] = p + n, reg_flags[nreg] = flags;
    __atomic_store_n(&nreg, nreg + 1, __ATOMIC_RELEASE);
  }
  emud_real_mutex_unlock(&reg_mu);
  return rc;
}

int emud_host_unregister(uint64_t p) {
  int rc = 1;
  emud_real_mutex_lock(&reg_mu);
  for (int i = 0; i < nreg; i++)
    if (reg_lo[i] == p) {
      reg_lo[i] = reg_lo[nreg - 1], reg_hi[i] = reg_hi[nreg - 1], reg_flags[i] = reg_flags[nreg - 1];
      __atomic_store_n(&nreg, nreg - 1, __ATOMIC_RELEASE);
      rc = 0;
      break;
    }
  emud_real_mutex_unlock(&reg_mu);
  return rc;
}

int emud_host_registered(uint64_t p, uint64_t* base, uint64_t* size, unsigned* flags) {
  int n = __atomic_load_n(&nreg, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++)
    if (p >= reg_lo[i] && p < reg_hi[i]) {
      if (base) *base = reg_lo[i];
      if (size) *size = reg_hi[i] - reg_lo[i];
      if (flags) *flags = reg_flags[i];
      return 1;
    }
  return 0;
}

// add_segments records an object's loaded segments as the program's.
static void add_segments(struct dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum && nseg < 32; i++) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    seg_lo[nseg] = info->dlpi_addr + ph->p_vaddr;
    seg_hi[nseg] = seg_lo[nseg] + ph->p_memsz;
    nseg++;
  }
}

static int seg_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  add_segments(info);
  return 1;  // the first object is the program itself
}

__attribute__((constructor(102))) static void find_segments(void) { dl_iterate_phdr(seg_cb, NULL); }

static void flush_log(emud_lane* l) {
  if (l->nlog > 0) emud_yield(l, EMUD_OP_ACCESSES, l->file, l->line, l->func);
}

__attribute__((noinline)) static void host_access(emud_lane* l, uint64_t a, int kind, void* pc) {
  l->sig = EMUD_SIG_HOST_ACCESS + kind;
  l->fault_addr = a;
  l->fault_pc = (uint64_t)(uintptr_t)pc;
  siglongjmp(((lane_impl*)l->impl)->fault, 1);
}

// A host thread's plain stores to device memory, logged (by an
// instrumented program) for the write history of the words hang reports
// watch, and handed to the Go side at the thread's next emud call (or
// when the log is full): the thread holds its turn meanwhile, so virtual
// time has not moved.
static __thread emud_host_log hlog;

emud_host_log* emud_host_stores(void) { return &hlog; }

static void host_store(uint64_t a, uint64_t n, void* pc) {
  int i = hlog.n - 1;
  if (i >= 0 && hlog.pc[i] == (uint64_t)(uintptr_t)pc && a <= hlog.hi[i] && a + n >= hlog.lo[i]) {
    if (a < hlog.lo[i]) hlog.lo[i] = a;
    if (a + n > hlog.hi[i]) hlog.hi[i] = a + n;
    return;
  }
  if (hlog.n == EMUD_HOST_LOG) {
    emud_free_close();
    in_emud++;
    emudGoHostStores(host_id);
    in_emud--;
  }
  i = hlog.n++;
  hlog.lo[i] = a;
  hlog.hi[i] = a + n;
  hlog.pc[i] = (uint64_t)(uintptr_t)pc;
}

// cost_bytes is how many of [a, a+n) the lane's code has not stored to
// since its count was last taken (abi.h cost_g): the bytes it pays for.
// Counting each byte once between device calls, not each store, keeps the
// lane's time the same whether the compiler stores a value twice (-O0) or
// once (-O2), as long as a span touches at most 64 granules at a time;
// past that, a granule evicted and stored again is counted again.
static inline uint64_t cost_bytes(emud_lane* l, uint64_t a, uint64_t n) {
  uint64_t fresh = 0;
  for (uint64_t g = a >> 4, last = (a + n - 1) >> 4; g <= last; g++) {
    uint64_t lo = g << 4 > a ? g << 4 : a, hi = (g + 1) << 4 < a + n ? (g + 1) << 4 : a + n;
    uint16_t m = (uint16_t)(((1u << (hi - lo)) - 1) << (lo & 15));
    int i = (int)(g & 63);
    if (l->cost_g[i] != g + 1) {
      l->cost_g[i] = g + 1;
      l->cost_m[i] = 0;
    }
    fresh += (uint64_t)__builtin_popcount(m & (uint16_t)~l->cost_m[i]);
    l->cost_m[i] |= m;
  }
  return fresh;
}

static __attribute__((noinline)) void lane_access_slow(const volatile void* p, uint64_t n, int kind, void* pc) {
  emud_lane* l = cur_lane;
  if (n == 0) return;
  uint64_t a = (uint64_t)(uintptr_t)p;
  if (!l) {
    if (host_cost_on && emud_started() && !forked && host_id >= 0 && !in_emud) host_bytes += n;
    if ((kind & EMUD_ACCESS_WRITE) && !(kind & EMUD_ACCESS_ATOMIC) && emud_started() && !forked && host_id >= 0 && !in_emud &&
        a >= resv_lo && a < resv_hi)
      host_store(a, n, pc);
    return;
  }
  if (resv_lo == 0) return;  // no reserved device range: nothing to tell apart
  if (a >= resv_lo && a < resv_hi) {
    // The lane code's cost (lanecost.go): the bytes it stores, each once
    // per span. Loads are not charged: -O0 copies a struct whole where -O2
    // loads the one field used, so their bytes depend on the flags.
    // An NCCL program's accesses to a peer's slice are also counted for
    // the fabric (lanecost.go): loads by bytes, stores once per span.
    uint64_t g = (a - resv_lo) / EMUD_SLICE;
    int peer = g < (uint64_t)lsa_gpus && g != (uint64_t)l->gpu;
    if (kind & EMUD_ACCESS_WRITE) {
      uint64_t fresh = cost_bytes(l, a, n);
      l->nbytes += fresh;
      if (peer) l->peer_st += fresh;
    } else if (peer) {
      l->peer_ld += n;
    }
    // Stores are logged always (they enter the write history of the
    // words hang reports watch), loads only for the race detector.
    if (!race_on && !(kind & EMUD_ACCESS_WRITE)) return;
    int i = l->nlog - 1;
    if (i >= 0 && !(kind & (EMUD_ACCESS_ATOMIC | EMUD_ACCESS_VOLATILE)) && l->log_kind[i] == kind && l->log_pc[i] == (uint64_t)(uintptr_t)pc &&
        a <= l->log_hi[i] && a + n >= l->log_lo[i]) {
      if (a < l->log_lo[i]) l->log_lo[i] = a;
      if (a + n > l->log_hi[i]) l->log_hi[i] = a + n;
      return;
    }
    if (l->nlog == 128) flush_log(l);
    i = l->nlog++;
    l->log_lo[i] = a;
    l->log_hi[i] = a + n;
    l->log_pc[i] = (uint64_t)(uintptr_t)pc;
    l->log_kind[i] = (uint8_t)kind;
    return;
  }
  lane_impl* im = (lane_impl*)l->impl;
  uint64_t s = (uint64_t)(uintptr_t)im->stack;
  if (a >= s && a < s + LANE_STACK) return;
  for (int i = 0; i < l->nallow; i++)
    if (a >= l->allow_lo[i] && a < l->allow_hi[i]) return;
  for (int i = 0; i < nseg; i++)
    if (a >= seg_lo[i] && a < seg_hi[i]) return;
  if (emud_host_registered(a, NULL, NULL, NULL)) return;
  host_access(l, a, kind, pc);
}

// lane_access is every instrumented access's entry. Most of a program's
// accesses are its host code's (emud c++ instruments whole files): a fill
// or check loop over a host buffer makes one call per element. Such an
// access needs nothing unless host cost counts it or it stores into device
// memory, so host_skips, inlined into the __tsan_ entry, returns before
// lane_access_slow's frame: in alltoall_put.cpp, 5 M such calls a run
// (its fill, check and FNV-1a loops) cost 12-15 ms of a ~85 ms run before.
static inline __attribute__((always_inline)) int host_skips(const volatile void* p, int kind) {
  if (__builtin_expect(cur_lane != NULL || host_cost_on, 0)) return 0;
  if (!(kind & EMUD_ACCESS_WRITE)) return 1;
  // resv_hi - resv_lo is 0 without a reserved range: every store skips.
  return (uint64_t)(uintptr_t)p - resv_lo >= resv_hi - resv_lo;
}
#define lane_access(p, n, kind, pc)                         \
  do {                                                      \
    if (!host_skips(p, kind)) lane_access_slow(p, n, kind, pc); \
  } while (0)

#define RA __builtin_return_address(0)

// A host thread's atomic and volatile accesses, for the race detector:
// the words it acquired (loads) and released (stores, read-modify-writes)
// since its last emud call, which takes them (emud_host_atomics; capi's
// host.go flushAtomics), so a flag or a std::promise between host threads
// orders what each does around it. Only the turn holder runs host code,
// so a release is taken before any other host thread's later acquire.
static __thread emud_host_atomic_log host_at;
static __attribute__((noinline)) void host_atomic(const volatile void* p, int write) {
  uint64_t a = (uint64_t)(uintptr_t)p;
  for (int i = host_at.n - 1; i >= 0; i--)
    if (host_at.addr[i] == a) {
      host_at.write[i] |= (uint8_t)write;
      return;
    }
  if (host_at.n == EMUD_HOST_ATOMIC_LOG) {
    host_at.over = 1;  // more words than the log holds: the Go side orders by one word for all
    return;
  }
  host_at.addr[host_at.n] = a;
  host_at.write[host_at.n++] = (uint8_t)write;
}
emud_host_atomic_log* emud_host_atomics(void) { return &host_at; }
#define HOST_AT(p, w)                                            \
  do {                                                           \
    if (__builtin_expect(race_on && !cur_lane, 0)) host_atomic(p, w); \
  } while (0)
// Each object compiled with -fsanitize=thread calls __tsan_init from a
// constructor of its own: the program's lanes are instrumented.
static int instrumented;
int emud_instrumented(void) { return instrumented; }
void __tsan_init(void) { instrumented = 1; }

// Device stores the access log misses, for a lane's fence (lanes.go
// fenceWakesAll): with every store logged and announced at the lane's
// next device call, a fence need not wake every watcher in case some
// store was not. Three kinds are not logged, and each is known here:
//  - an object built without -fsanitize=thread: emud's device headers
//    note each such unit from a constructor (emud_uninstrumented_unit);
//  - a call to the C library's memcpy, memmove or memset (and the
//    _FORTIFY_SOURCE _chk forms): GCC's TSan leaves them to the runtime's
//    interceptors, and emud has none; emud c++ links the program (and its
//    seed form, and the seed server) with -Wl,--wrap for each, so the
//    program's calls reach the wrappers below, which mark the running
//    lane's struct when the destination is device memory;
//  - a program not linked so (another driver's link): __real_memcpy,
//    weak, is then null, and every fence wakes every watcher, as before.
// Host code's stores are the Go side's (every host call marks memory
// possibly changed). Inline assembly that stores to device memory is not
// seen (partial).
static int uninstrumented_units;
void emud_uninstrumented_unit(void) { uninstrumented_units = 1; }

extern void* __real_memcpy(void*, const void*, size_t) __attribute__((weak));
extern void* __real_memmove(void*, const void*, size_t) __attribute__((weak));
extern void* __real_memset(void*, int, size_t) __attribute__((weak));
extern void* __real___memcpy_chk(void*, const void*, size_t, size_t) __attribute__((weak));
extern void* __real___memmove_chk(void*, const void*, size_t, size_t) __attribute__((weak));
extern void* __real___memset_chk(void*, int, size_t, size_t) __attribute__((weak));

static inline void mem_store(const void* d, size_t n) {
  emud_lane* l = cur_lane;
  if (__builtin_expect(l != NULL, 0) && n > 0 && (uint64_t)(uintptr_t)d - resv_lo < resv_hi - resv_lo) l->unlogged = 1;
}
void* __wrap_memcpy(void* d, const void* s, size_t n) {
  mem_store(d, n);
  return __real_memcpy(d, s, n);
}
void* __wrap_memmove(void* d, const void* s, size_t n) {
  mem_store(d, n);
  return __real_memmove(d, s, n);
}
void* __wrap_memset(void* d, int c, size_t n) {
  mem_store(d, n);
  return __real_memset(d, c, n);
}
void* __wrap___memcpy_chk(void* d, const void* s, size_t n, size_t dn) {
  mem_store(d, n);
  return __real___memcpy_chk(d, s, n, dn);
}
void* __wrap___memmove_chk(void* d, const void* s, size_t n, size_t dn) {
  mem_store(d, n);
  return __real___memmove_chk(d, s, n, dn);
}
void* __wrap___memset_chk(void* d, int c, size_t n, size_t dn) {
  mem_store(d, n);
  return __real___memset_chk(d, c, n, dn);
}

// emud_logs_all_stores reports whether every device store of lane code
// is logged or marked (above): the program is instrumented, has no unit
// that is not, and was linked with the wrappers.
int emud_logs_all_stores(void) {
  return instrumented && !uninstrumented_units && __real_memcpy != NULL && __real_memmove != NULL && __real_memset != NULL;
}
// emud_fence_skip says whether lane l's fence may pass without a device
// call. At the lane's resume the runtime set idle_fences when a fence
// would do nothing then (lanes.go idleFences: every store is announced and
// none of the lane's ring stores waits for a publish); it still would do
// nothing while the lane has done nothing its next call must carry: no
// access logged, no byte counted, no store unlogged, and every store of
// lane code is logged. Such a fence changes nothing, so skipping its round
// trip through the runtime (a cross-process one for a forked rank's lane)
// changes no run. MORI's LSA barrier fences on every lane of the coop, 5
// fences a lane a block sync, most of them so. Each skip spends one idle
// fence, so a loop of fences still reaches the runtime every few turns,
// where the call watch reports it (callwatch.go).
int emud_fence_skip(emud_lane* l) {
  if (l->idle_fences <= 0 || l->nlog != 0 || l->unlogged || l->nbytes != 0 || l->peer_ld != 0 || !emud_logs_all_stores())
    return 0;
  l->idle_fences--;
  return 1;
}
void __tsan_func_entry(void* pc) { (void)pc; }
void __tsan_func_exit(void) {}
// load_cycle is the spin test of a lane's polling loads: the k (1 to
// EMUD_SPIN_WORDS) for which its newest 2k loads are the same k loads
// twice (the same words, values, widths and sites), or 0. Nothing else
// runs while a lane runs its own code, so such words cannot change: the
// lane is spinning.
static int load_cycle(const emud_lane* l) {
  for (int k = 1; k <= EMUD_SPIN_WORDS && 2 * k <= l->nload; k++) {
    int same = 1;
    // load j back (0 the newest) sits at (nload-1-j) % 16
    for (int j = 0; j < k && same; j++) {
      int a = (l->nload - 1 - j) & 15, b = (l->nload - 1 - j - k) & 15;
      same = l->load_addr[a] == l->load_addr[b] && l->load_val[a] == l->load_val[b] &&
             l->load_width[a] == l->load_width[b] && l->load_line[a] == l->load_line[b];
    }
    if (same) return k;
  }
  return 0;
}

// emud_note_load records a lane's polling load (an atomic load,
// hip_runtime.h note_load, or a volatile load of device memory,
// volatile_load below) in its ring, and says whether the ring now shows
// a spin: then it has filled a[0..4] for the SPIN call the caller makes
// (the word, its width and value, the cycle's length, and whether the
// loads were volatile).
int emud_note_load(emud_lane* l, uint64_t addr, uint64_t val, uint32_t width, int32_t site, int vol) {
  int i = l->nload & 15;
  l->load_addr[i] = addr;
  l->load_val[i] = val;
  l->load_width[i] = width;
  l->load_line[i] = site;
  if (++l->nload >= 32) l->nload -= 16;  // the same ring slots, no overflow
  int k = load_cycle(l);
  if (k == 0) return 0;
  l->a[0] = addr;
  l->a[1] = width;
  l->a[2] = val;
  l->a[3] = (uint64_t)k;
  l->a[4] = (uint64_t)vol;
  return 1;
}

// volatile_load is a lane's volatile load of device memory, before it
// happens: a poll's read, as an atomic load is. A volatile load is made
// afresh at each iteration, and on a GPU it reaches the memory other
// waves write (MORI's benchmarks wait for their all-block barrier so:
// while (counter[1] != round) {}), so a loop of them is a wait, not a
// plain load the compiler may keep in a register. The load joins the
// lane's ring of polling loads with its pc as its site (negative, never
// a line number); a cycle of them is a SPIN call (a[4] = 1: volatile;
// a[5] the load's pc, for its site: lanes.go volatileSite), which waits
// for a write to the words. emud c++ compiles lane code with TSan's
// volatile callbacks apart (--param=tsan-distinguish-volatile=1, cxx's
// instrument); a unit built without it polls as a plain load does.
static __attribute__((noinline)) void volatile_load(const volatile void* p, int n, void* pc) {
  emud_lane* l = cur_lane;
  uint64_t a = (uint64_t)(uintptr_t)p, v;
  if (!l) {  // host code's: a run of them may be a poll (psleep.c)
    HOST_AT(p, 0);
    switch (n) {
      case 1: v = *(const volatile uint8_t*)p; break;
      case 2: v = *(const volatile uint16_t*)p; break;
      case 4: v = *(const volatile uint32_t*)p; break;
      case 8: v = *(const volatile uint64_t*)p; break;
      default: return;
    }
    emud_host_poll(p, v, pc);
    return;
  }
  if (a < resv_lo || a >= resv_hi) return;  // not device memory
  switch (n) {
    case 1: v = *(const volatile uint8_t*)p; break;
    case 2: v = *(const volatile uint16_t*)p; break;
    case 4: v = *(const volatile uint32_t*)p; break;
    case 8: v = *(const volatile uint64_t*)p; break;
    default: return;  // 16 bytes: not a flag
  }
  if (!emud_note_load(l, a, v, (uint32_t)n, (int32_t)((uint32_t)(uintptr_t)pc | 0x80000000u), 1)) return;
  l->a[5] = (uint64_t)(uintptr_t)pc;
  emud_yield(l, EMUD_OP_SPIN, l->file, l->line, l->func);  // at its last call's site (volatileSite)
  l->nload = 0;
  // The load the code makes next is after the wait, so after the write
  // that ended it: the one logged before the call was flushed by it.
  lane_access(p, (uint64_t)n, EMUD_ACCESS_VOLATILE, pc);
}

// A volatile access is logged as one (EMUD_ACCESS_VOLATILE): the race
// detector takes it as an atomic access of its word, as AMDGPU's code
// generation makes a non-atomic volatile load or store a relaxed atomic
// at system scope (https://reviews.llvm.org/D94214) and HIP programs poll
// flags with it (MORI's benchmarks' all-block barrier). A volatile store
// is still a plain store for the write history and wakes (lanes.go
// logStores); in host code the bit changes nothing.
#define VW (EMUD_ACCESS_VOLATILE | EMUD_ACCESS_WRITE)
#define EMUD_TSAN_RW(n)                                                                   \
  void __tsan_read##n(void* p) { lane_access(p, n, 0, RA); }                                   \
  void __tsan_write##n(void* p) { lane_access(p, n, EMUD_ACCESS_WRITE, RA); }                  \
  void __tsan_unaligned_read##n(void* p) { lane_access(p, n, 0, RA); }                         \
  void __tsan_unaligned_write##n(void* p) { lane_access(p, n, EMUD_ACCESS_WRITE, RA); }        \
  void __tsan_volatile_read##n(void* p) {                                                      \
    lane_access(p, n, EMUD_ACCESS_VOLATILE, RA);                                               \
    volatile_load(p, n, RA);                                                                   \
  }                                                                                            \
  void __tsan_volatile_write##n(void* p) {                                                     \
    lane_access(p, n, VW, RA);                                                                 \
    HOST_AT(p, 1);                                                                             \
  }                                                                                            \
  void __tsan_unaligned_volatile_read##n(void* p) {                                            \
    lane_access(p, n, EMUD_ACCESS_VOLATILE, RA);                                               \
    volatile_load(p, n, RA);                                                                   \
  }                                                                                            \
  void __tsan_unaligned_volatile_write##n(void* p) {                                           \
    lane_access(p, n, VW, RA);                                                                 \
    HOST_AT(p, 1);                                                                             \
  }
EMUD_TSAN_RW(1)
EMUD_TSAN_RW(2)
EMUD_TSAN_RW(4)
EMUD_TSAN_RW(8)
EMUD_TSAN_RW(16)
void __tsan_read_range(void* p, unsigned long n) { lane_access(p, n, 0, RA); }
void __tsan_write_range(void* p, unsigned long n) { lane_access(p, n, EMUD_ACCESS_WRITE, RA); }
void __tsan_vptr_update(void** p, void* v) {
  (void)v;
  lane_access(p, sizeof(void*), EMUD_ACCESS_WRITE, RA);
}
void __tsan_vptr_read(void** p) { lane_access(p, sizeof(void*), 0, RA); }

// Atomics: done here (this file is not instrumented), sequentially
// consistent whatever order was asked (stronger is allowed), and logged as
// atomic accesses.
#define AW (EMUD_ACCESS_ATOMIC | EMUD_ACCESS_WRITE)
// A host read-modify-write's key for psleep.c's cycles: what it saw and
// what it left. One that leaves the word as it was may be a poll's
// sleep; one that changed it may have taken a lock, and does not sleep.
#define HOST_RMW(old, new) ((uint64_t)(old) * 0x100000001b3ull ^ (uint64_t)(new))
#define EMUD_TSAN_ATOMIC(n, T)                                                                         \
  T __tsan_atomic##n##_load(const volatile T* p, int mo) {                                             \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), EMUD_ACCESS_ATOMIC, RA);                                                 \
    HOST_AT(p, 0);                                                                                     \
    T v = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                        \
    if (!cur_lane) emud_host_poll(p, (uint64_t)v, RA); /* host code's poll? (psleep.c) */              \
    return v;                                                                                          \
  }                                                                                                    \
  void __tsan_atomic##n##_store(volatile T* p, T v, int mo) {                                          \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);                                                          \
    if (!cur_lane) emud_host_op(p, (uint64_t)v, RA, 1); /* a step of a host poll? (psleep.c) */        \
  }                                                                                                    \
  T __tsan_atomic##n##_exchange(volatile T* p, T v, int mo) {                                          \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T old = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                                               \
    if (!cur_lane) emud_host_op(p, HOST_RMW(old, v), RA, old == v);                                    \
    return old;                                                                                        \
  }                                                                                                    \
  T __tsan_atomic##n##_fetch_add(volatile T* p, T v, int mo) {                                         \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T old = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);                                                \
    if (!cur_lane) emud_host_op(p, HOST_RMW(old, (T)(old + v)), RA, (T)(old + v) == old);              \
    return old;                                                                                        \
  }                                                                                                    \
  T __tsan_atomic##n##_fetch_sub(volatile T* p, T v, int mo) {                                         \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T old = __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST);                                                \
    if (!cur_lane) emud_host_op(p, HOST_RMW(old, (T)(old - v)), RA, (T)(old - v) == old);              \
    return old;                                                                                        \
  }                                                                                                    \
  T __tsan_atomic##n##_fetch_and(volatile T* p, T v, int mo) {                                         \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T old = __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);                                                \
    if (!cur_lane) emud_host_op(p, HOST_RMW(old, old & v), RA, (T)(old & v) == old);                   \
    return old;                                                                                        \
  }                                                                                                    \
  T __tsan_atomic##n##_fetch_or(volatile T* p, T v, int mo) {                                          \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T old = __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);                                                 \
    if (!cur_lane) emud_host_op(p, HOST_RMW(old, old | v), RA, (T)(old | v) == old);                   \
    return old;                                                                                        \
  }                                                                                                    \
  T __tsan_atomic##n##_fetch_xor(volatile T* p, T v, int mo) {                                         \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T old = __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST);                                                \
    if (!cur_lane) emud_host_op(p, HOST_RMW(old, (T)(old ^ v)), RA, (T)(old ^ v) == old);              \
    return old;                                                                                        \
  }                                                                                                    \
  T __tsan_atomic##n##_fetch_nand(volatile T* p, T v, int mo) {                                        \
    (void)mo;                                                                                          \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T old = __atomic_fetch_nand(p, v, __ATOMIC_SEQ_CST);                                               \
    if (!cur_lane) emud_host_op(p, HOST_RMW(old, (T)(~(old & v))), RA, (T)(~(old & v)) == old);        \
    return old;                                                                                        \
  }                                                                                                    \
  int __tsan_atomic##n##_compare_exchange_strong(volatile T* p, T* c, T v, int mo, int fmo) {          \
    (void)mo, (void)fmo;                                                                               \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    int ok = __atomic_compare_exchange_n(p, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
    if (!cur_lane) emud_host_op(p, ok ? HOST_RMW(*c, v) : (uint64_t)*c, RA, !ok);                      \
    return ok;                                                                                         \
  }                                                                                                    \
  int __tsan_atomic##n##_compare_exchange_weak(volatile T* p, T* c, T v, int mo, int fmo) {            \
    (void)mo, (void)fmo;                                                                               \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    int ok = __atomic_compare_exchange_n(p, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
    if (!cur_lane) emud_host_op(p, ok ? HOST_RMW(*c, v) : (uint64_t)*c, RA, !ok);                      \
    return ok;                                                                                         \
  }                                                                                                    \
  T __tsan_atomic##n##_compare_exchange_val(volatile T* p, T c, T v, int mo, int fmo) {                \
    (void)mo, (void)fmo;                                                                               \
    lane_access(p, sizeof(T), AW, RA);                                                                 \
    HOST_AT(p, 1);                                                                                     \
    T want = c;                                                                                        \
    int ok = __atomic_compare_exchange_n(p, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);             \
    if (!cur_lane) emud_host_op(p, ok ? HOST_RMW(want, v) : (uint64_t)c, RA, !ok);                     \
    return c;                                                                                          \
  }
EMUD_TSAN_ATOMIC(8, uint8_t)
EMUD_TSAN_ATOMIC(16, uint16_t)
EMUD_TSAN_ATOMIC(32, uint32_t)
EMUD_TSAN_ATOMIC(64, uint64_t)
void __tsan_atomic_thread_fence(int mo) {
  (void)mo;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int mo) {
  (void)mo;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

// ---- the seed server (seedsrv.c): one program loaded per seed ----
//
// What the file keeps for one emulation, and how a seed server puts it
// back between two seeds that ended cleanly (capi/doc.go lists all of
// the emulator's per-process state).

static int nseg_base = -1;   // the server's own segments, found by the constructor
static int early_base = -1;  // early[] entries of the server's own start (the Go runtime's threads)

// emud_seed_loaded records the seed object just loaded (any address
// inside it): its threads are the program's (runtime_thread), and its
// segments the program's static data, which lanes may touch, after the
// server's own (which hold obj_pool).
static int seed_seg_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  if ((void*)info->dlpi_addr != data) return 0;
  add_segments(info);
  return 1;
}

// emud_seed_loading names the object about to be loaded: threads its
// constructors start are the program's too.
void emud_seed_loading(const char* path) { snprintf(seed_file, sizeof seed_file, "%s", path); }

int emud_seed_loaded(void* any, uint64_t bias) {
  Dl_info d;
  if (!dladdr(any, &d)) return -1;
  seed_base = d.dli_fbase;
  if (nseg_base < 0) nseg_base = nseg;
  nseg = nseg_base;
  dl_iterate_phdr(seed_seg_cb, (void*)(uintptr_t)bias);
  return 0;
}

void emud_seed_mark_start(void) {
  pthread_mutex_lock(&tr_mu);
  if (early_base < 0) early_base = nearly;
  pthread_mutex_unlock(&tr_mu);
}

// emud_seed_threads counts the threads of the seed that may still run
// its code: early threads never adopted nor ended, and threads emud
// tracked and no one joined, whose host the Go side counts (emudGoSeedLive).
int emud_seed_threads(void) {
  int n = 0;
  pthread_mutex_lock(&tr_mu);
  for (int i = early_base < 0 ? 0 : early_base; i < nearly; i++)
    if (early[i].state == EARLY_RUNNING) n++;
  pthread_mutex_unlock(&tr_mu);
  return n;
}

void emud_sysfs_reset(void);  // sysfs.c

// EMUD_PARK_MAX bounds the device memory a seed server keeps parked
// between seeds (its resident size, and the bytes a reset scans): a seed
// that mapped more has the rest unmapped as before.
#define EMUD_PARK_MAX (64ull << 20)

// zero_dirty zeroes the pages of [lo, hi) (mapped read-write) that hold
// a byte other than zero: the seed's regions, and any stray store past
// them inside their chunk. Pages never resident read as zero already and
// are not touched; a clean page is only read, which costs less than
// clearing it (and far less than the kernel's fault and clear of a fresh
// huge page).
static void zero_dirty(uint64_t lo, uint64_t hi) {
  unsigned char vec[2 * EMUD_CHUNK / 4096];
  for (uint64_t a = lo; a < hi;) {
    uint64_t n = hi - a;
    if (n > sizeof vec * 4096) n = sizeof vec * 4096;
    int known = mincore((void*)(uintptr_t)a, n, vec) == 0;
    for (uint64_t i = 0; i < n / 4096; i++) {
      if (known && !(vec[i] & 1)) continue;
      const uint64_t* w = (const uint64_t*)(uintptr_t)(a + i * 4096);
      uint64_t any = 0;
      for (int k = 0; k < 4096 / 8 && !any; k += 8)
        any = w[k] | w[k + 1] | w[k + 2] | w[k + 3] | w[k + 4] | w[k + 5] | w[k + 6] | w[k + 7];
      if (any) memset((void*)w, 0, 4096);
    }
    a += n;
  }
}

// emud_seed_reset_c puts the file's per-emulation state back as a fresh
// process has it: called on the main thread between two seeds, when no
// thread of the last one runs. Device memory goes back to inaccessible
// and all zero bytes, so an address the last seed mapped faults again and
// a region of the next seed starts as zero: up to EMUD_PARK_MAX of it is
// parked (its dirty pages zeroed, then PROT_NONE, the huge pages kept for
// the next seed's regions at the same addresses), the rest is mapped
// again as reserved, without backing. Chunks shared with ranks run as
// processes are never parked. 0, or -1 when device memory was mapped
// outside the reserved range (the server must not go on).
int emud_seed_reset_c(void) {
  int rc = 0;
  pthread_mutex_lock(&map_mu);
  uint64_t room = EMUD_PARK_MAX - ext_bytes(&parked);
  int shared = emud_procs_shared();
  for (int i = 0; i < mapped.n; i++) {
    uint64_t lo = mapped.e[i][0], hi = mapped.e[i][1];
    if (!shared && hi - lo <= room) {
      zero_dirty(lo, hi);
      if (mprotect((void*)(uintptr_t)lo, hi - lo, PROT_NONE) == 0 && ext_add(&parked, lo, hi) == 0) {
        room -= hi - lo;
        continue;
      }
      ext_remove(&parked, lo, hi);
    }
    void* p = mmap((void*)(uintptr_t)lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) rc = -1;
  }
  mapped.n = 0;
  pthread_mutex_unlock(&map_mu);
  if (resv_lo == 0) rc = -1;  // regions were mapped by the Go side (engine.MapAt), which this cannot undo
  pthread_mutex_lock(&tr_mu);
  ntr = 0;
  if (early_base >= 0) {
    memset(&early[early_base], 0, (size_t)(nearly - early_base) * sizeof early[0]);
    nearly = early_base;
  }
  adopted = 0;
  pthread_mutex_unlock(&tr_mu);
  __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&run_over, 0, __ATOMIC_RELEASE);
  race_on = 0;
  lsa_gpus = 0;
  host_cost_on = 0;
  host_bytes = 0;
  hlog.n = 0;
  instrumented = 0;
  seed_base = NULL;
  seed_file[0] = 0;
  seed_dso = NULL;
  exit_in_dso = 0;
  if (nseg_base >= 0) nseg = nseg_base;
  uint64_t used = *(uint64_t*)(void*)obj_pool;
  size_t n = OBJ_HEAD + used;
  if (n > sizeof obj_pool) n = sizeof obj_pool;
  memset(obj_pool, 0, n);
  emud_sysfs_reset();
  return rc;
}

// emud_seed_exit is what exit() does for emud when main returns (at_exit).
void emud_seed_exit(void) { at_exit(); }
