/* strobe/dynstack.h — the dynamic stack: what instrumented code and debuggers see of
 * libstrobe-rt (DESIGN.md §7–§9).
 *
 * Per thread, the runtime keeps a bounded stack of entries {tick descriptor, watermark},
 * the chain of source expressions the thread is inside.  Instrumented code changes it
 * through the pseudo-intrinsics of intrinsics.def: the strobe-instrument plugin turns
 * each into an inline fast path (below) with a cold call to the slow path of the same
 * name.  A debugger or a core-file reader finds every thread's stack through
 * strobe_registry with plain memory reads (docs/registry.md).
 *
 * Contents:
 *   1. StrobeTickDesc            the constant descriptor the lowering emits per tick
 *   2. StrobeEntry, StrobeThreadStack, StrobeRegistry   the stack and its registry
 *   3. StrobeDynStackCache       the thread-local cache the inline fast paths read
 *   4. the slow paths (from intrinsics.def) and the fast paths, the contract
 *   5. reports, statistics, options
 *
 * Every layout that the lowering, the plugin or the lldb module relies on is pinned by
 * _Static_assert at the end of its section.  x86-64 (LP64) only, like rt.h. */
#ifndef STROBE_DYNSTACK_H
#define STROBE_DYNSTACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define STROBE_STATIC_ASSERT static_assert
#define STROBE_THREAD_LOCAL thread_local
#else
#define STROBE_STATIC_ASSERT _Static_assert
#define STROBE_THREAD_LOCAL _Thread_local
#endif

/* ==== 1. Tick descriptors ============================================================

   One per tick of an instrumented function, emitted by the lowering as a constant
   (LLVM type { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr }, `align 8`) in the section
   STROBE_TICK_SECTION.  The runtime compares descriptors by address and by content,
   never writes them, and enumerates them through the linker's __start_/__stop_
   symbols of that section (strobe_tick_descs), so the section MUST hold descriptors
   only, each 8-aligned (48 bytes, so they follow each other without padding).  An
   explicit alignment on a global with a section is honoured exactly by LLVM.

   Lines and columns are GHC's as the Cmm dump prints them in `src<file:span>` (the end
   column inclusive), which is also how reports print them back.  The runtime compares
   names and files by pointer first and by content only when the pointers differ, so
   the descriptors of one module SHOULD share one string per function name and per
   file. */

#define STROBE_TICK_SECTION "strobe_ticks"

typedef enum StrobeTickKind {
  /* 0 is no kind: zero-filled memory is not a descriptor */
  STROBE_TICK_SOURCE_NOTE = 1, /* a `//tick src<file:span>`: the full span is valid */
  STROBE_TICK_ENTRY = 2,       /* reserved: the entry of a function with no source note;
                                  the span is all 0, file may be NULL */
} StrobeTickKind;

typedef struct StrobeTickDesc {
  uint32_t kind;              /*  0: a StrobeTickKind; readers skip kinds they do not know */
  uint32_t line1, col1;       /*  4: where the span starts */
  uint32_t line2, col2;       /* 12: where it ends (col2 inclusive, as printed) */
  uint32_t reserved;          /* 20: 0 */
  const char *function;       /* 24: the Haskell name of the function, `Main.fact`; its
                                     continuations and thunks carry the same name, so
                                     that the siblings rule (tick) sees one function */
  const char *file;           /* 32: the source file, `Fact.hs` */
  const void *code;           /* 40: an address in the code whose line-table row is
                                     the tick's line (for a debugger), or NULL */
} StrobeTickDesc;

STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, kind) == 0, "StrobeTickDesc.kind");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, line1) == 4, "StrobeTickDesc.line1");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, col1) == 8, "StrobeTickDesc.col1");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, line2) == 12, "StrobeTickDesc.line2");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, col2) == 16, "StrobeTickDesc.col2");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, reserved) == 20, "StrobeTickDesc.reserved");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, function) == 24, "StrobeTickDesc.function");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, file) == 32, "StrobeTickDesc.file");
STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, code) == 40, "StrobeTickDesc.code");
STROBE_STATIC_ASSERT(sizeof(StrobeTickDesc) == 48, "StrobeTickDesc is 48 bytes");

/* The descriptors of the STROBE_TICK_SECTION of the module that links libstrobe-rt
 * statically (the program, usually); *count gets how many.  A shared libstrobe-rt sees
 * only its own, empty, section: it returns NULL and 0. */
const StrobeTickDesc *strobe_tick_descs(size_t *count);

/* ==== 2. The stack and the registry =================================================

   Note [Watermarks]
   ~~~~~~~~~~~~~~~~~
   An entry's watermark is the Cmm Sp at its tick.  The Cmm stack grows down, so a
   deeper frame has a smaller Sp, and from the top of the stack down the watermarks
   never decrease (a push first pops every entry whose watermark is below its Sp).
   When Sp rises above a watermark (wm < Sp) that entry's frame is gone: it is stale.
   A continuation entered by a return at Sp has finished everything pushed at Sp or
   deeper (wm <= Sp): that is why ret pops inclusively and pop does not.  Entries at
   the same watermark belong to one Cmm frame: an expression and those nested in it,
   and the tail calls made from it (a jump keeps Sp).

   The entries of a thread live in a ring of `capacity` slots: the newest is at slot
   `top`, the i-th newest at slot (top - i) mod capacity, for i < depth.  When the ring
   is full a push overwrites the oldest entry and counts it in `dropped`. */

enum {
  STROBE_ENTRY_TAIL = 1u << 0, /* this entry's expression tail-called the one above it */
};

typedef struct StrobeEntry {
  const StrobeTickDesc *desc; /*  0: the expression */
  uintptr_t wm;               /*  8: its watermark, the Cmm Sp at the tick */
  uint64_t repeats;           /* 16: how often it was entered again in place: a tail-
                                     recursive loop, a cycle of tail calls (shown as
                                     `(x<repeats+1>)`); the inline fast path adds to it */
  uint32_t flags;             /* 24: STROBE_ENTRY_* */
  uint32_t elided;            /* 28: tail calls dropped just below this entry because
                                     its depth had more than tail_limit of them */
} StrobeEntry;

STROBE_STATIC_ASSERT(offsetof(StrobeEntry, desc) == 0, "StrobeEntry.desc");
STROBE_STATIC_ASSERT(offsetof(StrobeEntry, wm) == 8, "StrobeEntry.wm");
STROBE_STATIC_ASSERT(offsetof(StrobeEntry, repeats) == 16, "StrobeEntry.repeats");
STROBE_STATIC_ASSERT(offsetof(StrobeEntry, flags) == 24, "StrobeEntry.flags");
STROBE_STATIC_ASSERT(offsetof(StrobeEntry, elided) == 28, "StrobeEntry.elided");
STROBE_STATIC_ASSERT(sizeof(StrobeEntry) == 32, "StrobeEntry is 32 bytes");

/* What a thread's stack counts; only its thread writes them.  ticks, repeats and the
 * other totals are derived from these (StrobeStats, strobe_dynstack_stats). */
typedef struct StrobeCounters {
  uint64_t slow_ticks;      /*  0: calls of strobe_tick */
  uint64_t slow_pops;       /*  8: calls of strobe_pop */
  uint64_t slow_rets;       /* 16: calls of strobe_ret */
  uint64_t slow_repeats;    /* 24: repeats that strobe_tick counted (the inline fast path
                                   counts the others, in StrobeEntry.repeats only) */
  uint64_t retired_repeats; /* 32: the repeats of entries since removed */
  uint64_t pushes;          /* 40: entries pushed */
  uint64_t pops;            /* 48: entries removed by pop, ret or tick (stale entries,
                                   finished siblings, tail cycles) */
  uint64_t drops;           /* 56: entries dropped because the ring was full */
  uint64_t tail_drops;      /* 64: tail calls dropped because of tail_limit */
} StrobeCounters;

STROBE_STATIC_ASSERT(sizeof(StrobeCounters) == 72, "StrobeCounters: 9 words, in order");

/* One thread's dynamic stack, allocated on its first tick (with its ring just after
 * it) and registered in strobe_registry until the thread exits. */
typedef struct StrobeThreadStack StrobeThreadStack;
struct StrobeThreadStack {
  StrobeThreadStack *next;  /*  0: the next thread in the registry, or NULL */
  uint64_t tid;             /*  8: the kernel's thread id (gettid), as lldb shows it */
  StrobeEntry *entries;     /* 16: the ring */
  uint32_t capacity;        /* 24: its slots (the `capacity` option; 0 if the ring could
                                   not be allocated: every push is then a drop) */
  uint32_t top;             /* 28: the slot of the newest entry, if depth > 0 */
  uint32_t depth;           /* 32: live entries, at most capacity */
  uint32_t tail_limit;      /* 36: the `tail_limit` option */
  uint32_t busy;            /* 40: nonzero while a slow path is changing this stack: a
                                   reader that stopped the thread there may see it
                                   half-changed */
  uint32_t reserved;        /* 44 */
  uint64_t dropped;         /* 48: entries dropped (ring full) that were older than the
                                   oldest live one and may still be live; 0 once a pop
                                   shows them all stale */
  uintptr_t dropped_wm;     /* 56: the watermark of the oldest of them */
  StrobeCounters counters;  /* 64 */
};

STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, next) == 0, "StrobeThreadStack.next");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, tid) == 8, "StrobeThreadStack.tid");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, entries) == 16, "StrobeThreadStack.entries");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, capacity) == 24, "StrobeThreadStack.capacity");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, top) == 28, "StrobeThreadStack.top");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, depth) == 32, "StrobeThreadStack.depth");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, tail_limit) == 36, "StrobeThreadStack.tail_limit");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, busy) == 40, "StrobeThreadStack.busy");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, dropped) == 48, "StrobeThreadStack.dropped");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, dropped_wm) == 56, "StrobeThreadStack.dropped_wm");
STROBE_STATIC_ASSERT(offsetof(StrobeThreadStack, counters) == 64, "StrobeThreadStack.counters");
STROBE_STATIC_ASSERT(sizeof(StrobeThreadStack) == 136, "StrobeThreadStack is 136 bytes");

/* The i-th newest entry of s (i < s->depth): how any reader indexes the ring. */
static inline const StrobeEntry *strobe_dynstack_at(const StrobeThreadStack *s, uint32_t i) {
  return &s->entries[s->top >= i ? s->top - i : s->top + s->capacity - i];
}

/* The registry: every thread with a dynamic stack, for debuggers and core-file readers
 * (docs/registry.md).  Statically initialised, so a reader can check magic, version and
 * sizes before the program ran any tick.  Threads join when they first tick and leave
 * when they exit; a change holds a lock in the runtime and keeps `generation` odd while
 * the list is inconsistent. */
#define STROBE_REGISTRY_MAGIC 0x42525453u /* the bytes "STRB" */
#define STROBE_REGISTRY_VERSION 1u

enum {
  STROBE_REGISTRY_POPS_EVERYWHERE = 1u << 0, /* the options in effect (flags) */
  STROBE_REGISTRY_CRASH_REPORT = 1u << 1,
  STROBE_REGISTRY_REPORT_AT_EXIT = 1u << 2,
};

typedef struct StrobeRegistry {
  uint32_t magic;               /*  0: STROBE_REGISTRY_MAGIC */
  uint32_t version;             /*  4: STROBE_REGISTRY_VERSION */
  uint32_t header_size;         /*  8: sizeof(StrobeRegistry) */
  uint32_t thread_size;         /* 12: sizeof(StrobeThreadStack) */
  uint32_t entry_size;          /* 16: sizeof(StrobeEntry) */
  uint32_t desc_size;           /* 20: sizeof(StrobeTickDesc) */
  StrobeThreadStack *threads;   /* 24: the live threads, newest first; NULL if none */
  uint64_t generation;          /* 32: +1 before and after each change: odd = changing */
  uint64_t nthreads;            /* 40: how many are on the list */
  uint64_t nexited;             /* 48: threads that used the stack and have exited */
  uint32_t capacity;            /* 56: the options stacks started now get */
  uint32_t tail_limit;          /* 60 */
  uint32_t flags;               /* 64: STROBE_REGISTRY_* */
  uint32_t reserved;            /* 68 */
  StrobeCounters exited;        /* 72: the exited threads' counters, summed (their live
                                       entries' repeats folded into retired_repeats) */
} StrobeRegistry;

STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, magic) == 0, "StrobeRegistry.magic");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, version) == 4, "StrobeRegistry.version");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, header_size) == 8, "StrobeRegistry.header_size");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, thread_size) == 12, "StrobeRegistry.thread_size");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, entry_size) == 16, "StrobeRegistry.entry_size");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, desc_size) == 20, "StrobeRegistry.desc_size");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, threads) == 24, "StrobeRegistry.threads");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, generation) == 32, "StrobeRegistry.generation");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, nthreads) == 40, "StrobeRegistry.nthreads");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, nexited) == 48, "StrobeRegistry.nexited");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, capacity) == 56, "StrobeRegistry.capacity");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, tail_limit) == 60, "StrobeRegistry.tail_limit");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, flags) == 64, "StrobeRegistry.flags");
STROBE_STATIC_ASSERT(offsetof(StrobeRegistry, exited) == 72, "StrobeRegistry.exited");
STROBE_STATIC_ASSERT(sizeof(StrobeRegistry) == 144, "StrobeRegistry is 144 bytes");

extern StrobeRegistry strobe_registry;

/* ==== 3. The fast-path cache ========================================================

   A copy of the calling thread's top entry, in one thread-local struct, so that an
   inline fast path costs one thread-local load, a compare and a branch (the shape of
   XRay's trampolines).  Every slow path leaves it equal to the stack:
     depth > 0:                 top_wm = top entry's wm, top_desc = its desc,
                                top = &its slot
     depth == 0, dropped > 0:   top_wm = dropped_wm, top_desc = top = NULL
                                (so that a pop above the dropped entries reaches the
                                slow path, which forgets them)
     otherwise, and initially:  top_wm = UINTPTR_MAX, top_desc = top = NULL
   With an empty stack the pop and ret checks are never taken and every tick reaches
   the slow path, which pushes (and allocates the thread's stack on its first call).

   The plugin declares it `@strobe_dynstack_cache = external thread_local(initialexec)
   global` in code that goes into an executable (libstrobe-rt.a, or libstrobe-rt.so
   loaded at startup), and with the default (general-dynamic) model in code that goes
   into a shared library. */

#define STROBE_DYNSTACK_CACHE_NAME "strobe_dynstack_cache"

typedef struct StrobeDynStackCache {
  uintptr_t top_wm;               /*  0 */
  const StrobeTickDesc *top_desc; /*  8 */
  StrobeEntry *top;               /* 16 */
  StrobeThreadStack *stack;       /* 24: the thread's stack, NULL before its first tick */
} StrobeDynStackCache;

STROBE_STATIC_ASSERT(offsetof(StrobeDynStackCache, top_wm) == 0, "cache.top_wm");
STROBE_STATIC_ASSERT(offsetof(StrobeDynStackCache, top_desc) == 8, "cache.top_desc");
STROBE_STATIC_ASSERT(offsetof(StrobeDynStackCache, top) == 16, "cache.top");
STROBE_STATIC_ASSERT(offsetof(StrobeDynStackCache, stack) == 24, "cache.stack");
STROBE_STATIC_ASSERT(sizeof(StrobeDynStackCache) == 32, "StrobeDynStackCache is 32 bytes");

extern STROBE_THREAD_LOCAL StrobeDynStackCache strobe_dynstack_cache;

/* ==== 4. The intrinsics: slow paths and fast paths ==================================

   The slow paths are declared from intrinsics.def: each row's RTS_ENTRY, returning
   void, with one parameter per argument kind (STROBE_ARG_<KIND>).  Each implements
   its whole rule (DESIGN §9), so calling it where the fast path would not is always
   correct, only slower:

   strobe_tick(desc, sp)
     1. Pop every stale entry (wm < sp).
     2. While the top entry is at this depth (wm == sp):
        a. it is desc itself (same address, or same kind, function, file and span) →
           count a repeat on it; done.  (A tail-recursive loop stays one entry.)
        b. its span strictly contains desc's, in the same file → push desc; done.
           (A nested expression.)
        c. it belongs to desc's function → pop it and go on.  (A sibling that finished:
           `stmt1; stmt2` shows only stmt2.)
        d. it belongs to another function: a tail call.  If desc's function already has
           a frame at this depth (a cycle of tail calls), truncate back to that frame's
           oldest entry, count a repeat on it and make it desc: it stays if it is desc,
           desc is pushed on it if it contains desc, else it becomes desc.  Otherwise
           mark the top entry tail and push desc; if this depth now has more than
           tail_limit tail entries, drop the oldest one (with the entries of its
           function below it at this depth) and count it in the `elided` of the entry
           above.  Done.
     3. No entry at this depth: push desc.
   strobe_pop(sp)   pop every entry with wm < sp.
   strobe_ret(sp)   pop every entry with wm <= sp (Note [Watermarks]).
   A push into a full ring drops the oldest entry and counts it; nothing fails, and
   nothing allocates but a thread's first tick. */

#define STROBE_ARG_DESC const StrobeTickDesc *
#define STROBE_ARG_SP uintptr_t
#define STROBE_PARAMS_1(a, b) STROBE_ARG_##a
#define STROBE_PARAMS_2(a, b) STROBE_ARG_##a, STROBE_ARG_##b

#define STROBE_INTRINSIC(ID, LLVM_NAME, RTS_ENTRY, NARGS, ARG1, ARG2)                    \
  void RTS_ENTRY(STROBE_PARAMS_##NARGS(ARG1, ARG2));
#include "intrinsics.def"
#undef STROBE_INTRINSIC

/* The inline fast paths.  The plugin emits exactly this logic in IR (with the cold call
 * in a cold block); these C versions are its reference, used by C callers and by the
 * tests.  Verbatim, with c = &strobe_dynstack_cache (one thread-local address):
 *
 *   tick(desc, sp):  if (c->top_desc == desc && c->top_wm == sp)
 *                      c->top->repeats += 1;          // relaxed load and store
 *                    else
 *                      strobe_tick(desc, sp);         // cold
 *   pop(sp):         if (c->top_wm < sp)  strobe_pop(sp);   // cold
 *   ret(sp):         if (c->top_wm <= sp) strobe_ret(sp);   // cold
 *
 * Watermarks compare unsigned (`icmp ult`, `icmp ule`, `icmp eq`).  tick's fast case is
 * rule 2a with nothing stale (top_wm == sp: nothing is deeper than sp).  The repeat is a
 * relaxed (LLVM `monotonic`) load and store, not a locked read-modify-write: only the
 * owning thread writes it, and strobe_dynstack_stats may read it from another thread;
 * on x86-64 both are plain moves.  A function that is not instrumented but keeps its
 * pop checks (the plugin's pops-everywhere option) uses the same pop fast path.
 *
 * Every row of intrinsics.def needs one (RTS_ENTRY##_fast, checked below). */
static inline void strobe_tick_fast(const StrobeTickDesc *desc, uintptr_t sp) {
  StrobeDynStackCache *c = &strobe_dynstack_cache;
  if (c->top_desc == desc && c->top_wm == sp) {
    uint64_t *r = &c->top->repeats;
    __atomic_store_n(r, __atomic_load_n(r, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
  } else {
    strobe_tick(desc, sp);
  }
}

static inline void strobe_pop_fast(uintptr_t sp) {
  if (strobe_dynstack_cache.top_wm < sp) strobe_pop(sp);
}

static inline void strobe_ret_fast(uintptr_t sp) {
  if (strobe_dynstack_cache.top_wm <= sp) strobe_ret(sp);
}

#ifndef __cplusplus
/* Each runtime entry, and its fast path, has the prototype intrinsics.def gives it. */
#define STROBE_FN_TYPE_1(a, b) void (*)(STROBE_ARG_##a)
#define STROBE_FN_TYPE_2(a, b) void (*)(STROBE_ARG_##a, STROBE_ARG_##b)
#define STROBE_INTRINSIC(ID, LLVM_NAME, RTS_ENTRY, NARGS, ARG1, ARG2)                    \
  _Static_assert(_Generic(&RTS_ENTRY, STROBE_FN_TYPE_##NARGS(ARG1, ARG2): 1, default: 0), \
                 #RTS_ENTRY " does not have the prototype intrinsics.def gives " LLVM_NAME);\
  _Static_assert(_Generic(&RTS_ENTRY##_fast,                                             \
                          STROBE_FN_TYPE_##NARGS(ARG1, ARG2): 1, default: 0),              \
                 #RTS_ENTRY "_fast, the fast path of " LLVM_NAME ", is missing or wrong");
#include "intrinsics.def"
#undef STROBE_INTRINSIC
#undef STROBE_FN_TYPE_1
#undef STROBE_FN_TYPE_2
#endif

/* ==== 5. Reports, statistics, options ===============================================

   A report prints the calling thread's stack newest first, one entry a line:
     #0 Main.crash at Crash.hs:12:3-20
     #1 Main.level3 at Crash.hs:(9,1)-(10,20) (tail)
        ... 2 tail calls elided
     #2 Main.loop at Loop.hs:4:7 (x1000)
     ... 17 older entries dropped
   Spans as GHC prints them: l:c, l:c1-c2, (l1,c1)-(l2,c2); (xN) when the entry was
   entered N > 1 times; (tail) when it tail-called the entry above it.

   On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT the thread's report goes to stderr
   after a line `strobe: SIGSEGV (segmentation fault); the dynamic stack, newest first:`
   (nothing if the stack is empty), and the process dies of the signal.  With the
   crash_report option on (the default) the runtime installs that handler at the first
   tick, replacing any the program installed before (strobe_rt_main installs it at
   start, for the guard page, whatever the option says). */

/* Writes the calling thread's stack to fd; nothing if it is empty.  Async-signal-safe
 * (write(2) only), so a signal handler may call it.  Returns the number of entries
 * written, or -1 if a write failed. */
int strobe_dynstack_dump(int fd);

/* The same, leaving out the entries that a live Cmm Sp shows stale (wm < sp), as a
 * reader that knows the current Sp does (DESIGN §9); sp 0 leaves out nothing. */
int strobe_dynstack_dump_at(int fd, uintptr_t sp);

/* Totals over all threads, live and exited; one X row per field. */
#define STROBE_STATS(X)                                                                  \
  X(ticks, "ticks executed (the inline repeats included)")                               \
  X(repeats, "ticks that counted a repeat instead of pushing")                           \
  X(pushes, "entries pushed")                                                            \
  X(pops, "entries popped (stale, returned, finished siblings, tail cycles)")            \
  X(drops, "entries dropped because a stack was full")                                   \
  X(tail_drops, "tail calls elided by tail_limit")                                       \
  X(slow_calls, "calls of strobe_tick, strobe_pop and strobe_ret")                       \
  X(threads, "threads that used the dynamic stack")

typedef struct StrobeStats {
#define STROBE_STAT_FIELD(name, help) uint64_t name;
  STROBE_STATS(STROBE_STAT_FIELD)
#undef STROBE_STAT_FIELD
} StrobeStats;

/* The totals over every thread (live ones read while they run: approximate), or with
 * strobe_dynstack_thread_stats only the calling thread's (exact). */
void strobe_dynstack_stats(StrobeStats *out);
void strobe_dynstack_thread_stats(StrobeStats *out);

/* Writes the totals to fd as `strobe stats` shows them. */
void strobe_dynstack_write_stats(int fd);

/* The calling thread's stack, or NULL before its first tick. */
const StrobeThreadStack *strobe_dynstack_current(void);

/* Uses opts (rt.h's StrobeOptions) from now on instead of those read from
 * STROBE_OPTIONS on first use: capacity and tail_limit for the stacks that threads
 * start later, crash_report and report_at_exit at once.  strobe_rt_main calls it. */
struct StrobeOptions;
void strobe_dynstack_configure(const struct StrobeOptions *opts);

/* Forgets the calling thread's stack and takes it off the registry, as its exit does;
 * its next tick starts a new one. */
void strobe_dynstack_release(void);

#ifdef __cplusplus
}
#endif
#endif
