// MPI's blocking calls are free sections (free.go, procs.c): a host
// thread holds its turn between emud calls, so a blocking MPI call made
// in it (MPI_Barrier, MPI_Bcast, MPI_Recv, MPI_Finalize ...) would keep
// the ranks it waits for from ever reaching theirs. Here each gives its
// turn up, runs MORI's or the program's real call (the MPI library's
// profiling entry, PMPI_*) beside the emulation, and comes back at a
// quiescent point of the run, so the run stays the seed's.
//
// A program that does not link MPI has these definitions too, unused:
// the PMPI_* references are weak, so nothing needs MPI to link, and no
// mpi.h is needed to build them. Handles (communicators, datatypes,
// requests) are passed through untouched as words, whatever the MPI
// library makes of them (OpenMPI's pointers, MPICH's integers), so the
// wrappers need no MPI header. Calls that do not wait (MPI_Isend,
// MPI_Irecv, MPI_Comm_rank ...) are not wrapped: they run in the turn,
// as any host code. Polling calls (MPI_Test*, MPI_Iprobe) are wrapped,
// so a loop on them lets the other ranks run.
//
// Written for emud.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "lane.h"

typedef void* H;  // a handle or pointer, passed through
typedef long A;   // MPI_Aint

int emud_mpi_shim = 1;  // procs.c refers to it, so the linker keeps this file

__attribute__((noreturn)) static void no_pmpi(const char* name) {
  fprintf(stderr, "emud: %s: the program calls MPI but its MPI library has no PMPI_%s (emud runs MPI's blocking calls "
          "through the profiling interface)\n", name, name + 4);
  exit(1);
}

// FREE defines MPI_x over PMPI_x in a free section, which stays open
// until the thread's next emud call (procs.c, emud_free_begin).
#define FREE(name, params, args)                   \
  extern int P##name params __attribute__((weak)); \
  int name params {                                \
    if (!P##name) no_pmpi(#name);                  \
    emud_free_begin(#name);                        \
    return P##name args;                           \
  }

// Start and end: MPI_Init and MPI_Finalize synchronise the job (a fence).
FREE(MPI_Init, (H argc, H argv), (argc, argv))
FREE(MPI_Init_thread, (H argc, H argv, int req, H prov), (argc, argv, req, prov))
FREE(MPI_Finalize, (void), ())

// Collectives.
FREE(MPI_Barrier, (H c), (c))
FREE(MPI_Bcast, (H b, int n, H t, int root, H c), (b, n, t, root, c))
FREE(MPI_Reduce, (H s, H r, int n, H t, H op, int root, H c), (s, r, n, t, op, root, c))
FREE(MPI_Allreduce, (H s, H r, int n, H t, H op, H c), (s, r, n, t, op, c))
FREE(MPI_Gather, (H s, int sn, H st, H r, int rn, H rt, int root, H c), (s, sn, st, r, rn, rt, root, c))
FREE(MPI_Gatherv, (H s, int sn, H st, H r, H rn, H rd, H rt, int root, H c), (s, sn, st, r, rn, rd, rt, root, c))
FREE(MPI_Scatter, (H s, int sn, H st, H r, int rn, H rt, int root, H c), (s, sn, st, r, rn, rt, root, c))
FREE(MPI_Scatterv, (H s, H sn, H sd, H st, H r, int rn, H rt, int root, H c), (s, sn, sd, st, r, rn, rt, root, c))
FREE(MPI_Allgather, (H s, int sn, H st, H r, int rn, H rt, H c), (s, sn, st, r, rn, rt, c))
FREE(MPI_Allgatherv, (H s, int sn, H st, H r, H rn, H rd, H rt, H c), (s, sn, st, r, rn, rd, rt, c))
FREE(MPI_Alltoall, (H s, int sn, H st, H r, int rn, H rt, H c), (s, sn, st, r, rn, rt, c))
FREE(MPI_Alltoallv, (H s, H sn, H sd, H st, H r, H rn, H rd, H rt, H c), (s, sn, sd, st, r, rn, rd, rt, c))
FREE(MPI_Reduce_scatter, (H s, H r, H rn, H t, H op, H c), (s, r, rn, t, op, c))
FREE(MPI_Reduce_scatter_block, (H s, H r, int rn, H t, H op, H c), (s, r, rn, t, op, c))
FREE(MPI_Scan, (H s, H r, int n, H t, H op, H c), (s, r, n, t, op, c))
FREE(MPI_Exscan, (H s, H r, int n, H t, H op, H c), (s, r, n, t, op, c))

// Communicators made collectively.
FREE(MPI_Comm_dup, (H c, H nc), (c, nc))
FREE(MPI_Comm_split, (H c, int color, int key, H nc), (c, color, key, nc))
FREE(MPI_Comm_split_type, (H c, int type, int key, H info, H nc), (c, type, key, info, nc))
FREE(MPI_Comm_create, (H c, H g, H nc), (c, g, nc))

// Point to point.
FREE(MPI_Send, (H b, int n, H t, int dst, int tag, H c), (b, n, t, dst, tag, c))
FREE(MPI_Ssend, (H b, int n, H t, int dst, int tag, H c), (b, n, t, dst, tag, c))
FREE(MPI_Bsend, (H b, int n, H t, int dst, int tag, H c), (b, n, t, dst, tag, c))
FREE(MPI_Rsend, (H b, int n, H t, int dst, int tag, H c), (b, n, t, dst, tag, c))
FREE(MPI_Recv, (H b, int n, H t, int src, int tag, H c, H st), (b, n, t, src, tag, c, st))
FREE(MPI_Sendrecv, (H sb, int sn, H stt, int dst, int stag, H rb, int rn, H rt, int src, int rtag, H c, H st),
     (sb, sn, stt, dst, stag, rb, rn, rt, src, rtag, c, st))
FREE(MPI_Sendrecv_replace, (H b, int n, H t, int dst, int stag, int src, int rtag, H c, H st),
     (b, n, t, dst, stag, src, rtag, c, st))
FREE(MPI_Probe, (int src, int tag, H c, H st), (src, tag, c, st))
FREE(MPI_Mprobe, (int src, int tag, H c, H msg, H st), (src, tag, c, msg, st))
FREE(MPI_Mrecv, (H b, int n, H t, H msg, H st), (b, n, t, msg, st))

// Completion.
FREE(MPI_Wait, (H rq, H st), (rq, st))
FREE(MPI_Waitall, (int n, H rq, H st), (n, rq, st))
FREE(MPI_Waitany, (int n, H rq, H idx, H st), (n, rq, idx, st))
FREE(MPI_Waitsome, (int n, H rq, H outn, H idx, H st), (n, rq, outn, idx, st))
FREE(MPI_Test, (H rq, H flag, H st), (rq, flag, st))
FREE(MPI_Testall, (int n, H rq, H flag, H st), (n, rq, flag, st))
FREE(MPI_Testany, (int n, H rq, H idx, H flag, H st), (n, rq, idx, flag, st))
FREE(MPI_Testsome, (int n, H rq, H outn, H idx, H st), (n, rq, outn, idx, st))
FREE(MPI_Iprobe, (int src, int tag, H c, H flag, H st), (src, tag, c, flag, st))
FREE(MPI_Improbe, (int src, int tag, H c, H flag, H msg, H st), (src, tag, c, flag, msg, st))

// One-sided synchronisation.
FREE(MPI_Win_create, (H base, A size, int unit, H info, H c, H win), (base, size, unit, info, c, win))
FREE(MPI_Win_allocate, (A size, int unit, H info, H c, H base, H win), (size, unit, info, c, base, win))
FREE(MPI_Win_free, (H win), (win))
FREE(MPI_Win_fence, (int assert_, H win), (assert_, win))
