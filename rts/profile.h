/* profile.h — sampling the dynamic stack into a CPU profile (docs/profiling.md).
 *
 *   profile.c      the sampler: the SIGPROF timer, its handler, the table of stacks,
 *                  the classification of a sampled PC, the folded file at exit
 *   ghc_profile.c  the GHC side (linked by strobe-ghc): marks the OS threads that are
 *                  in GHC's garbage collector, so that their samples say `[gc]`
 *
 * The table is what the unit test (tests/test_profile.c) drives: a fixed array of
 * slots, open addressing, filled by signal handlers on any thread at once with atomic
 * operations only (no lock, no allocation). */
#ifndef STROBE_RT_PROFILE_H
#define STROBE_RT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "strobe/rt.h"

#pragma GCC visibility push(hidden)

/* Where the sampled PC was, the leaf frame that a sample gets after its stack's
 * entries: 0 is instrumented code (no leaf frame), the others are names (profile.c). */
enum {
  RT_PROF_INSTRUMENTED = 0,
  RT_PROF_GC = 1,       /* [gc] */
  RT_PROF_RTS = 2,      /* [rts] */
  RT_PROF_LIB = 3,      /* [lib] */
  RT_PROF_MAIN = 4,     /* [main] */
  RT_PROF_NOSTACK = 5,  /* [nostack] */
  RT_PROF_FIRST_NAMED = 6,
  RT_PROF_MAX_CLASSES = 256,
};

enum {
  RT_PROF_TRUNCATED = 1u << 0, /* older entries were cut (depth) or dropped (capacity) */
};

/* One distinct stack: its frames (function names), root first. */
typedef struct RtProfSlot {
  uint64_t state; /* 0 empty, 1 being filled, else the key's hash (with bit 1 set) */
  uint64_t count;
  uint32_t depth;
  uint16_t leaf;
  uint16_t flags;
  const char *frames[]; /* `max_depth` of them */
} RtProfSlot;

typedef struct RtProfTable {
  unsigned char *slots; /* nslots of stride bytes */
  uint32_t nslots, max_depth;
  size_t stride;
  uint32_t *used;  /* the claimed slots' indices + 1, in the order claimed (nused) */
  uint32_t nused;
  uint64_t lost; /* samples no slot was found for */
} RtProfTable;

/* The bytes a table of nslots slots of max_depth frames needs. */
size_t rt_prof_table_bytes(uint32_t nslots, uint32_t max_depth);

/* Makes a table in mem (rt_prof_table_bytes of it, zeroed, 8-aligned): the slots, then
 * the index of the claimed ones, which the writer reads instead of every slot. */
void rt_prof_table_init(RtProfTable *t, void *mem, uint32_t nslots, uint32_t max_depth);

/* Counts one sample of frames[0..n) (root first, n <= max_depth) with leaf and flags.
 * Async-signal-safe, lock-free, any thread.  False if no slot was free (counted in
 * lost). */
bool rt_prof_add(RtProfTable *t, const char *const *frames, uint32_t n, uint16_t leaf,
                 uint16_t flags);

/* Writes the folded stacks (root first, `;` between frames, a space and the count),
 * one line per distinct stack, sorted, identical stacks merged; leaf_names[leaf] is the
 * leaf frame's name (index 0 unused).  Lost samples are a line `[lost] N`.  Returns
 * the number of lines, -1 on a write or memory error. */
long rt_prof_write_folded(const RtProfTable *t, FILE *out, const char *const *leaf_names);

/* The leaf name of a code symbol: NULL if it belongs to an instrumented module (one
 * of modules[0..nmodules), GHC module names as in `Data.Map`), else the frame's name
 * written to buf (`[base]`, `[containers]`, `[main]`, `[rts]`). */
const char *rt_prof_symbol_label(const char *symbol, const char *const *modules,
                                 size_t nmodules, char *buf, size_t bufsize);

/* A code address and its class, while the profiler builds its map of the code (at
 * start, never in a handler): a symbol's start, or a code section's start or end. */
typedef struct RtProfSym {
  uintptr_t lo;
  uint32_t cls;  /* RT_PROF_*, a name's index, or RT_PROF_UNRESOLVED (a local symbol) */
  uint32_t prio; /* at one address the lowest wins: 0 a symbol, 1 a section's start,
                    2 its end */
  int32_t group; /* a local symbol's object: the number of STT_FILE symbols before it in
                    the symbol table (each object's locals follow its STT_FILE
                    symbol); -1 for any other entry */
} RtProfSym;

#define RT_PROF_UNRESOLVED UINT32_MAX

/* Sorts syms[0..n) by address, then prio, as two sorted parts merged: syms[0..nexe)
 * (the executable's entries) and syms[nexe..n) (the libraries'); any order within
 * each part. */
void rt_prof_sort_syms(RtProfSym *syms, size_t nexe, size_t n);

/* Gives every RT_PROF_UNRESOLVED entry of syms[0..n) (sorted by address, then prio) a
 * class.  An entry whose symbol holds one of code[0..ncode) (instrumented code: the
 * tick descriptors' code addresses) is instrumented code.  Any other takes the class of
 * the resolved entry before it (the code of a procedure's continuations and thunks
 * follows it), except that it takes the class of the resolved entry after it when that
 * one is of its own object (group) and the one before is not: an object's first local
 * symbols come before its first global one, right after another object's code. */
void rt_prof_resolve_locals(RtProfSym *syms, size_t n, const uintptr_t *code, size_t ncode);

/* Starts sampling if o->profile names a file (once per process; later calls do
 * nothing).  Called by dynstack.c whenever the options are set. */
void rt_profile_start(const StrobeOptions *o);

/* Nonzero while the calling OS thread is in GHC's garbage collector (ghc_profile.c). */
extern _Thread_local volatile int rt_profile_in_gc;

#pragma GCC visibility pop
#endif
