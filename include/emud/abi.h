/* emud's C ABI: what the HIP and cco.hpp headers of this directory call.
 * Written for emud (github.com/emud-dev/emud); see capi/doc.go. Not a
 * public HIP or MORI header: programs include hip/hip_runtime.h and
 * mori/cco/cco.hpp, which are built on these calls. */
#ifndef EMUD_ABI_H
#define EMUD_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device calls: a lane fills a[] and yields to the emulator. */
enum {
  EMUD_OP_NONE = 0,
  EMUD_OP_PUT,          /* a: flags, peer, dstWin, dstOff, srcWin, srcOff, bytes, queueId, devcomm */
  EMUD_OP_GET,          /* as PUT */
  EMUD_OP_QUIET,        /* a: coop, peer, devcomm */
  EMUD_OP_QUIET_QUEUE,  /* a: coop, peer, queueId, devcomm */
  EMUD_OP_COMMIT,       /* a: coop, peer, queueId, devcomm */
  EMUD_OP_WAIT_SIGNAL,  /* a: srcRank, queueId, expected, devcomm */
  EMUD_OP_PUT_BCAST,    /* a: flags, peer, dstWin, dstOff, peer2, dstWin2, dstOff2, srcWin, srcOff, bytes, queueId, devcomm */
  EMUD_OP_POST_WAIT_MEM,    /* a: coop, peer, queueId, win, off, value, cmp, mask, devcomm */
  EMUD_OP_POST_WAIT_SIGNAL, /* a: coop, peer, queueId, srcRank, sigQueueId, expected, devcomm */
  EMUD_OP_SYNC_THREADS,
  EMUD_OP_SYNC_WARP,
  EMUD_OP_BALLOT,       /* a: pred -> mask of the active lanes' predicates */
  EMUD_OP_ACTIVE_MASK,  /* -> mask */
  EMUD_OP_SHFL,         /* a: value, srcLane, width -> value of srcLane */
  EMUD_OP_SPIN,         /* a: addr, width, value seen twice, k: the last k loads (load_*) repeat: wait for a write to one; 1 if they were volatile loads (then the load's pc) */
  EMUD_OP_ATOMIC,       /* a: addr, width: a native atomic RMW/store happened there */
  EMUD_OP_FENCE,        /* a fence: stores so far are visible (wakes waiters) */
  EMUD_OP_CLOCK,        /* a: 0 cycles (clock64), 1 wall clock (wall_clock64) -> ticks */
  EMUD_OP_UNSUPPORTED,  /* a: name (const char*) -> fails the lane */
  EMUD_OP_TRAP,         /* a: what (const char*) -> fails the lane */
  EMUD_OP_SHARED,       /* a: id, bytes, align -> per-block static shared storage */
  EMUD_OP_PRINTF,       /* a: text (const char*) -> written in run order */
  EMUD_OP_ACCESSES,     /* the lane's access log is full: record it (-fsanitize=thread) */
  EMUD_OP_LSA_BARRIER,  /* a: what (EMUD_LSA_*), coop, devcomm, session (open: index), team nRanks, rank, stride,
                           timeoutCycles, has timeout, handle nBarriers -> open: session; wait: 0, or 1 timed out */
  /* GIN (nccl_device/gin.h, capi/nccl_gin.go) */
  EMUD_OP_GIN,          /* a: what (EMUD_GIN_*), coop, devcomm, context, then per call (capi/nccl_gin.go) */
  /* CFT (include/nccl_device/cft.h, capi/nccl_cft.go) */
  EMUD_OP_CFT,          /* a: what (EMUD_CFT_*), then the call's arguments (capi/nccl_cft.go) */
  EMUD_OP_STEP,         /* the lane is about to make an atomic access (-DEMUD_CALL_CONTEXT): a lock-step point */
  EMUD_OP_GRID_SYNC,    /* cooperative groups' grid sync: every thread of a cooperative launch's grid (capi/gridsync.go) */
};

/* EMUD_OP_GIN's first argument: the ncclGin or GIN barrier call. */
enum { EMUD_GIN_PUT, EMUD_GIN_SIGNAL, EMUD_GIN_WAIT_SIGNAL, EMUD_GIN_WAIT_COUNTER, EMUD_GIN_FLUSH, EMUD_GIN_OPEN,
       EMUD_GIN_BARRIER_OPEN, EMUD_GIN_BARRIER_SYNC, EMUD_GIN_BARRIER_CLOSE };

/* EMUD_OP_CFT's first argument: which CFT call a lane (a coop's elected
 * thread) makes. */
enum {
  EMUD_CFT_BAR_OPEN, EMUD_CFT_BAR_ARRIVE, EMUD_CFT_BAR_WAIT, EMUD_CFT_BAR_CLOSE,
  EMUD_CFT_INIT, EMUD_CFT_ISSUE, EMUD_CFT_SUBMIT, EMUD_CFT_FLUSH_SMEM, EMUD_CFT_FLUSH, EMUD_CFT_FINI,
  EMUD_CFT_WAIT_COUNTED, EMUD_CFT_FENCE,
};
/* EMUD_CFT_ISSUE's kinds. */
enum { EMUD_CFT_PUT, EMUD_CFT_GET, EMUD_CFT_RED, EMUD_CFT_PULLRED };

/* EMUD_OP_LSA_BARRIER's first argument: the ccoLsaBarrierSession call. */
enum { EMUD_LSA_OPEN, EMUD_LSA_ARRIVE, EMUD_LSA_WAIT, EMUD_LSA_CLOSE };

/* Put/get flags word: coop | local<<2 | remote<<3 | optFlags<<4 | threadMode<<8. */
#define EMUD_PUT_FLAGS(coop, local, remote, opt, mode) \
  ((uint64_t)(coop) | ((uint64_t)(local) << 2) | ((uint64_t)(remote) << 3) | ((uint64_t)(opt) << 4) | ((uint64_t)(mode) << 8))

#define EMUD_CTX_FRAMES 32
typedef struct emud_lane {
  uint32_t tid[3], bid[3], bdim[3], gdim[3];
  int32_t warp_size, lane_id, gpu, pad0;
  void* dyn_shared;       /* extern __shared__ storage of the block */
  /* the pending device call */
  int32_t op, line;
  const char* file;
  const char* func;
  uint64_t a[14];
  uint64_t ret;
  /* 0 running, 1 parked at op, 2 returned, 3 faulted */
  int32_t state, sig;
  uint64_t fault_addr, fault_pc;
  void* impl;             /* the runtime's own state */
  /* Lane code built with -fsanitize=thread: host memory the lane may
   * touch besides its stack and the program's static data (this struct,
   * the launch's arguments, the block's shared memory), and the log of
   * its device-memory accesses since the last device call. */
  uint64_t allow_lo[8], allow_hi[8];
  int32_t nallow, nlog;
  uint64_t log_lo[128], log_hi[128];
  uint64_t log_pc[128];  /* where the access (the first, merged) returns to */
  uint8_t log_kind[128]; /* EMUD_ACCESS_* bits */
  /* Bytes of device memory the lane's instrumented code stored since the
   * runtime last took the count, each once: the cost of the lane's own
   * code (capi's lanecost.go). */
  uint64_t nbytes;
  /* The bytes counted since the count was last taken, by 16-byte granule
   * (direct-mapped, 64 granules: cost_g holds granule + 1, cost_m its
   * bytes): a byte stored again before the lane's next device call is not
   * counted again (lane.c cost_bytes, lanecost.go). */
  uint64_t cost_g[64];
  uint16_t cost_m[64];
  /* The lane's atomic loads since its last atomic write or spin, a ring
   * of the newest 2*EMUD_SPIN_WORDS (hip_runtime.h note_load): loads
   * that repeat a cycle over up to EMUD_SPIN_WORDS words with unchanged
   * values are a spin. nload counts every load since the reset. */
  uint64_t load_addr[16], load_val[16];
  uint32_t load_width[16];
  /* Each load's source line (its site): a cycle is the same loads at the
   * same lines, so a wait that saw its word and a later read of that word
   * elsewhere are not a poll of it (MORI's waitSignal then readSignal). */
  int32_t load_line[16];
  int32_t nload;
  /* Set (by lane.c's wrappers of memcpy, memmove and memset, which emud
   * c++ links in place of the C library's) when the lane's code called
   * one of them on device memory since the runtime last took it: stores
   * its access log did not see, which its next fence must announce by
   * waking every watcher (capi's lanes.go fenceWakesAll). */
  int32_t unlogged;
  /* The lane's call context at its pending call, when its code was built
   * with -DEMUD_CALL_CONTEXT (emud c++ does so against a user's MORI
   * header): the return addresses of its frames, innermost first, read
   * from the frame-pointer chain inside its stack [stack_lo, stack_hi). */
  uint64_t ctx_pc[EMUD_CTX_FRAMES];
  int32_t nctx;
  /* How many fences the lane may still pass without a device call, set by
   * the runtime at each resume: nonzero when a fence would do nothing
   * then (lane.c emud_fence_skip says when it still does). */
  int32_t idle_fences;
  uint64_t stack_lo, stack_hi;
  /* Bytes the lane's instrumented code loaded from and stored to other
   * GPUs' slices (peers' LSA windows) since the runtime last took the
   * count, in an NCCL program only (capi's lanecost.go: the fabric's
   * time); peer_st's bytes are counted in nbytes too. */
  uint64_t peer_ld, peer_st;
} emud_lane;
#define EMUD_SPIN_WORDS 8
#define EMUD_ACCESS_WRITE 1
#define EMUD_ACCESS_ATOMIC 2
/* A volatile load or store of lane code: a plain native access, announced
 * as a store is, that the race detector takes as an atomic one (capi's
 * lanes.go flushAccesses). */
#define EMUD_ACCESS_VOLATILE 4
#define EMUD_SIG_HOST_ACCESS 1000 /* fault code: a load or store of host memory */

/* emud_current is the running lane, NULL in host code. It is a call, not a
 * variable, on purpose: a lane may resume on another OS thread, so no
 * thread-local address may be cached across a device call. */
emud_lane* emud_current(void);
/* emud_yield posts l's pending call (op and a[] filled) and returns its
 * result once the emulator ran it. */
uint64_t emud_yield(emud_lane* l, int op, const char* file, int line, const char* func);
/* emud_note_load records a polling load of l's (its word, value, width
 * and site) and returns 1 when its newest loads repeat a cycle: a spin,
 * with a[0..4] filled for the SPIN call (lane.c). */
int emud_note_load(emud_lane* l, uint64_t addr, uint64_t val, uint32_t width, int32_t site, int vol);
/* emud_fence_skip says whether l's fence may pass without a device call,
 * and spends one of its idle fences if so (lane.c). */
int emud_fence_skip(emud_lane* l);

/* Host calls: one entry point, a[] in and out; returns a hipError_t-like
 * code (0 success) or, for cco calls, MORI's int status. */
enum {
  EMUD_H_START = 1, EMUD_H_DEVICE_COUNT, EMUD_H_SET_DEVICE, EMUD_H_GET_DEVICE, EMUD_H_PROPS,
  EMUD_H_MALLOC, EMUD_H_FREE, EMUD_H_MEMCPY, EMUD_H_MEMSET,
  EMUD_H_STREAM_CREATE, EMUD_H_STREAM_SYNC, EMUD_H_STREAM_DESTROY, EMUD_H_DEVICE_SYNC,
  EMUD_H_EVENT_CREATE, EMUD_H_EVENT_RECORD, EMUD_H_EVENT_SYNC, EMUD_H_EVENT_ELAPSED, EMUD_H_EVENT_DESTROY,
  EMUD_H_LAUNCH,
  EMUD_H_UNIQUE_ID, EMUD_H_COMM_CREATE, EMUD_H_COMM_DESTROY, EMUD_H_MEM_ALLOC, EMUD_H_MEM_FREE,
  EMUD_H_WINDOW_REGISTER, EMUD_H_WINDOW_DEREGISTER, EMUD_H_DEVCOMM_CREATE, EMUD_H_DEVCOMM_DESTROY,
  EMUD_H_BARRIER_ALL, EMUD_H_PEER_PTR, EMUD_H_UNSUPPORTED, EMUD_H_ERROR_STRING, EMUD_H_LAST_ERROR,
  /* HIP calls MORI's code uses (capi/hipcalls.go) */
  EMUD_H_HOST_MALLOC,      /* a: bytes, flags -> a[2] pointer */
  EMUD_H_HOST_FREE,        /* a: pointer */
  EMUD_H_HOST_DEVPTR,      /* a: host pointer -> a[1] device pointer */
  EMUD_H_MEM_INFO,         /* -> a[0] free, a[1] total of the current device */
  EMUD_H_POINTER_ATTR,     /* a: pointer -> a[1] type (0 unregistered, 1 host, 2 device), a[2] device, a[3] base, a[4] size, a[5] hipHostMalloc flags */
  EMUD_H_STREAM_WAIT_EVENT,/* a: stream, event */
  EMUD_H_EVENT_QUERY,      /* a: event */
  EMUD_H_MORI_QUEUE,       /* a: devcomm, peer, queueId, ring bytes -> ring, rptr, wptr, doorbell, cachedWptr, committedWptr, start, peer pool (capi/mori.go) */
  EMUD_H_THREAD_BARRIER,   /* a: barrier, count, what (1 wait, 2 destroy) -> a[3] 1 for the serial thread (capi/pbarrier.go) */
  EMUD_H_FREE_SECTION,     /* a: name; a rank process's free section, to its proxy only -> a[15] its done word (capi/procs.c) */
  /* GIN */
  EMUD_H_GIN_CREATE,       /* a: comm, devcomm, contexts, signals, counters, rail, world, hybrid GIN barriers -> a[8] signals, a[9] counters, a[10] shadows (capi/nccl_gin.go) */
  /* CFT */
  EMUD_H_CFT,              /* a: what (EMUD_CFT_H_*), then its arguments (capi/nccl_cft.go) */
  /* MORI's ccoGda (capi/mori_gda.go) */
  EMUD_H_MORI_GDA_EP,      /* a: devcomm, peer, context -> sq, dbr, uar, cq, cq dbr, ibuf, ibuf key, qpn, WQEs, CQEs, peer's signal key, own, signal base, signals, counters, contexts */
  EMUD_H_MORI_GDA_KEY,     /* a: emud window, peer -> a[2] peer's key, a[3] own key, a[4] ranks */
  EMUD_H_MORI_GDA_DONE,    /* a: devcomm, endpoints, endpoint bytes, doneIdx offset */
  /* pthread mutexes and condition variables of host threads (capi/pmutex.c) */
  EMUD_H_THREAD_SYNC,      /* a: what, object, owner tid or timeout ns -> a[4] 1: lock natively / timed out */
  EMUD_H_THREAD_SLEEP,     /* a: ns of virtual time, why (1 sleep, 2 yield, 3 poll, 4 retry), site pc (capi/psleep.c) */
  EMUD_H_STREAM_QUERY,     /* a: stream, what (0 hipStreamQuery, 1 flags -> a[2]) (capi/streams.go) */
  EMUD_H_DEVICE_RESET,     /* -> a[0] the device reset (capi/streams.go) */
  EMUD_H_IPC,              /* a: what (1 get, 2 open, 3 close), then its words (capi/ipc.go) */
  EMUD_H_STREAM_MEMOP,     /* a: what (1 write, 2 wait), stream, pointer, value, width, flags, mask (capi/streammem.go) */
  EMUD_H_SYMBOL,           /* a: what (1 to, 2 from), address, bytes, kind, stream, async, FNV-1a of the bytes written (capi/symbols.go) */
  EMUD_H_HOST_FUNC,        /* a: what (1 queue on stream a[1] -> a[2] token, 2 the function's thread waits for token a[1]) (capi/hostfunc.go) */
  EMUD_H_NCCL_COLL,        /* a: kind, send, recv, count, type, reduction, root or peer, comm, stream (capi/nccl_coll.go) */
  EMUD_H_COMM_SPLIT,       /* a: parent comm, color, key, -, -, -, ranks taking part (0: all), excluded ranks' digest -> a[3] the new comm's unique id (0: no color), a[4] its rank, a[5] its ranks (capi/split.go) */
};
enum { EMUD_CFT_H_DEVCOMM = 1, EMUD_CFT_H_WINDOW = 2 };
int emud_host(int op, uint64_t* a, const char* file, int line);
/* Host memory registered for the device (hipHostRegister): lanes may
 * touch it. register returns 0, 1 (empty or wrapping range), 2 (overlaps
 * a registered range) or 3 (the table is full); unregister 0 or 1 (p does
 * not start a registered range); registered 1 if p is in a range. */
int emud_host_register(uint64_t p, uint64_t n, unsigned flags);
int emud_host_unregister(uint64_t p);
int emud_host_registered(uint64_t p, uint64_t* base, uint64_t* size, unsigned* flags);

/* A kernel launch: the runtime calls entry(ctx) as each lane's body and
 * free_ctx(ctx) once every lane of the grid has returned. */
typedef void (*emud_entry)(void* ctx);

#ifdef __cplusplus
}
#endif
#endif
