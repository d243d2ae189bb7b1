// The program's C heap, set up for a process whose host threads take turns.
//
// A C++ program's run is a fresh process, and in a fresh process every page
// of host memory it touches is a page fault (15 us each in a virtual machine
// at 2 cores; alltoall_put.cpp's eight 512 KiB host buffers were ~1000 of a
// run's ~2200 faults). glibc's defaults are made for threads that run at
// once: an arena per thread (a fresh 64 MiB reservation each), and each
// block of 128 KiB or more a mapping of its own, made and faulted anew at
// every allocation. emud's host threads take turns (one holds the
// simulator's turn at a time), so one arena loses nothing, and big blocks
// can come from the heap, whose first 64 MiB are advised as transparent
// huge pages: a first touch then costs one fault per 2 MiB.
//
// EMUD_MALLOC=system leaves glibc's defaults, and so does a program that
// sets glibc's malloc tunables itself (GLIBC_TUNABLES with glibc.malloc,
// or MALLOC_ARENA_MAX and the like). Nothing here changes what a run
// computes: host addresses are not part of a digest.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lane.h"

#ifdef __GLIBC__
#include <malloc.h>

enum {
  kHugePage = 2 << 20,
  kAdvised = 64 << 20,  // the heap's part advised as huge pages
};

// user_malloc_settings says whether the environment sets malloc up itself.
static int user_malloc_settings(void) {
  const char* e = getenv("EMUD_MALLOC");
  if (e && strcmp(e, "system") == 0) return 1;
  const char* t = getenv("GLIBC_TUNABLES");
  if (t && strstr(t, "glibc.malloc.")) return 1;
  static const char* const vars[] = {"MALLOC_ARENA_MAX",     "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                                     "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_MAX_"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

// emud_heap_setup is called by lane.c's first constructor (a constructor
// here would not be linked: nothing else in this file is referenced),
// before the program's own constructors and the Go runtime's start
// (neither has made a thread yet), so every thread shares the one arena.
void emud_heap_setup(void) {
  if (user_malloc_settings()) return;
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's most
  // Keep a freed top of up to twice the advised part (the advised part
  // is the top at first): given back and grown again it would be a
  // mapping without the advice.
  mallopt(M_TRIM_THRESHOLD, 2 * kAdvised);
  // Move the break to a 2 MiB boundary (glibc takes a foreign sbrk as a
  // gap, and its next growth starts past it: the gap, never touched, costs
  // no memory), grow the heap once by the advised part (an allocation
  // past its top with that much padding), advise it, and pad as glibc
  // does again.
  uintptr_t lo = ((uintptr_t)sbrk(0) + kHugePage - 1) & ~(uintptr_t)(kHugePage - 1);
  if (sbrk((intptr_t)(lo - (uintptr_t)sbrk(0))) == (void*)-1) return;
  mallopt(M_TOP_PAD, kAdvised);
  void* volatile grow = malloc(1 << 20);  // volatile: a malloc freed unused is dropped by the compiler
  free(grow);
  mallopt(M_TOP_PAD, 128 << 10);
  uintptr_t hi = (uintptr_t)sbrk(0) & ~(uintptr_t)(kHugePage - 1);
  // Advice only: without transparent huge pages it is 4 KiB pages as before.
  if (hi <= lo) return;
  madvise((void*)lo, hi - lo, MADV_HUGEPAGE);
  // glibc wrote its chunk headers in the first 2 MiB before the advice,
  // so that part has 4 KiB pages now and would fault page by page: hold it
  // as a block never freed (its untouched pages cost nothing), so the
  // program's blocks start in the next 2 MiB, untouched. (MADV_COLLAPSE of
  // it cost ~1 ms a run here: more than it saves in a small program.)
  static void* volatile head;
  head = malloc(kHugePage);
}
#else
void emud_heap_setup(void) {}
#endif
