/* strobe/dynstack.h — the dynamic stack: what instrumented code and debuggers see of
 * libstrobe-rt (docs/design.md, "The dynamic stack").
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
 *   2. StrobeEntry, StrobeThreadStack   a thread's stack
 *   3. StrobeDynStackHead        the thread-local head the inline fast paths change;
 *      StrobeRegistry            every thread's stack, for debuggers
 *   4. the slow paths (from intrinsics.def) and the fast paths, the contract
 *   5. reports, statistics, options
 *
 * The records that compiled code shares (StrobeTickDesc, StrobeEntry, StrobeDynStackHead)
 * are defined in intrinsics/abi.h, which the lowering and the plugin include instead of
 * this header; sections 1-3 say what they are for.  Every layout that the lowering, the
 * plugin or the lldb module relies on is pinned by _Static_assert, there or at the end
 * of its section here.  x86-64 (LP64) only, like rt.h. */
#ifndef STROBE_DYNSTACK_H
#define STROBE_DYNSTACK_H

#include <stddef.h>
#include <stdint.h>

/* The records that compiled code shares with the runtime (StrobeTickDesc, StrobeEntry,
 * StrobeDynStackHead) and their constants, expanded from intrinsics/tickdesc.def and
 * intrinsics/registry.def; the registry's records below expand registry.def the same
 * way (STROBE_MEMBER, each offset pinned by STROBE_PIN). */
#include "abi.h"
#include "stats.def"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 1. Tick descriptors ============================================================

   One per Haskell function and source note, emitted by the lowering as a constant
   (StrobeTickDesc of intrinsics/abi.h, with its kinds, flags and section; the LLVM
   struct of intrinsics/llvm_types.h, `align 8`) in the section STROBE_TICK_SECTION.
   The runtime compares descriptors by address and by content, never writes them, and
   enumerates them through the linker's __start_/__stop_ symbols of that section
   (strobe_tick_descs), so the section MUST hold descriptors only, each 8-aligned (56
   bytes, so they follow each other without padding).  An explicit alignment on a
   global with a section is honoured exactly by LLVM.

   Lines and columns are GHC's as the Cmm dump prints them in `src<file:span>` (the end
   column inclusive), which is also how reports print them back.  The runtime compares
   names and files by pointer first and by content only when the pointers differ, so
   the descriptors of one module SHOULD share one string per function name and per
   file. */

/* The descriptors of the STROBE_TICK_SECTION of the module that links libstrobe-rt
 * statically (the program, usually); *count gets how many.  A shared libstrobe-rt sees
 * only its own, empty, section: it returns NULL and 0. */
const StrobeTickDesc *strobe_tick_descs(size_t *count);

/* ==== 2. The stack, its head and the registry =======================================

   Note [Watermarks]
   ~~~~~~~~~~~~~~~~~
   An entry's watermark is the address of the continuation its code returns to: the
   innermost frame on the Cmm stack (a return address, an update frame, a catch frame)
   that the code of its tick will return to, wherever the code moves Sp meanwhile
   (Note [A tick's watermark] in lowering/ticks.c: the lowering passes Sp plus the
   offset the Cmm gives).  The Cmm stack grows down, so a deeper frame has a smaller
   address, and from the top of the stack down the watermarks never decrease (a push
   first pops every entry whose watermark is below its own).  When Sp rises above a
   watermark (wm < Sp) that continuation has been entered or unwound: the entry is
   stale.  A continuation entered by a return at Sp is the one at Sp: everything whose
   code returns to it, or to one deeper, has finished (wm <= Sp): that is why ret pops
   inclusively and pop does not.  Entries at the same watermark are one frame's: an
   expression and those nested in it, and the tail calls made from it (a tail call keeps
   the continuation).

   Note [The entries and their sentinels]
   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
   A thread's entries are an array, oldest first: entries[0] is the oldest live entry
   and the thread's head (section 3) points at the newest, `top`, so that the i-th
   newest is top - i and the depth is top - entries + 1.  Two slots below entries[0]
   are sentinels, never entries, with wm = UINTPTR_MAX, so that the inline fast paths
   need no bounds check to look below the top: a loop popping entries stops at
   entries[-1], the base, at the latest.  top == base: the stack is empty.

   Three rules keep the inline fast paths short (section 4):
     - Every slot above the top has repeats, flags and elided 0: whatever removes an
       entry clears them, so that a push writes only desc and wm.
     - An inline push fills top + 1 only while top < limit, the last slot
       (entries + capacity - 1).  A push into a full array reaches the slow path,
       which doubles the array while it is smaller than the `capacity` option, and
       else folds entries into markers (below).
     - Nothing but the sentinels is ever below entries[0], so an inline pop never
       looks at the base: it stops there.
   The folded entries: when the array is full (and as large as `capacity` lets it be),
   the entries between its oldest few and its newest quarter are folded into markers,
   each standing for a run of whole frames (rts/dynstack.c, Note [Folding]).  A marker
   is an entry like the others, with desc = &strobe_dynstack_dropped_desc (kind
   STROBE_TICK_DROPPED), wm = the oldest folded entry's watermark and elided = how many
   entries it stands for; the markers are one run, after at most the 4 oldest entries.
   A marker goes when a pop shows its watermark stale, as the oldest of the entries it
   stands for would have; a report prints a run of markers as `... N older entries not
   kept`. */

/* A stack holds at least the marker and one entry: a `capacity` below is raised.  Its
 * array starts with STROBE_INITIAL_CAPACITY slots (or `capacity`, if less) and doubles
 * when full, up to `capacity`; only then are entries dropped. */
#define STROBE_MIN_CAPACITY 2u
#define STROBE_INITIAL_CAPACITY 1024u

/* StrobeEntry and its flags (STROBE_ENTRY_*) are in intrinsics/abi.h. */

/* What the slow paths count (only the owning thread writes a stack's counters).  The
 * ticks are counted inline, in the thread's head; `ticks` here is the exited threads'
 * sum in the registry and 0 in a thread's record. */
typedef struct StrobeCounters {
  STROBE_COUNTERS_FIELDS(STROBE_MEMBER)
} StrobeCounters;

STROBE_COUNTERS_FIELDS(STROBE_PIN)
STROBE_STATIC_ASSERT(sizeof(StrobeCounters) == 48, "StrobeCounters: 6 words, in order");

/* The thread-local head, StrobeDynStackHead (section 3), is in intrinsics/abi.h; a
 * stack that no OS thread runs keeps its own. */

enum {
  STROBE_STACK_HASKELL = 1u << 0, /* a Haskell thread's stack (thread_id), not an OS
                                     thread's own */
  STROBE_STACK_RUNNING = 1u << 1, /* an OS thread (tid) runs it now: head is that
                                     thread's head, else `parked` */
  STROBE_STACK_APPROX = 1u << 2,  /* entries were kept whose place in the thread's
                                     stack chunks could not be followed exactly: the
                                     report says it may be off */
};

/* One thread's dynamic stack, allocated on its first tick (with its entries just after
 * it) and registered in strobe_registry until the thread exits. */
struct StrobeThreadStack {
  STROBE_THREAD_STACK_FIELDS(STROBE_MEMBER)
};

STROBE_THREAD_STACK_FIELDS(STROBE_PIN)
STROBE_STATIC_ASSERT(sizeof(StrobeThreadStack) == 160, "StrobeThreadStack is 160 bytes");

/* ==== 3. The thread's head ==========================================================

   What instrumented code reads and changes inline: one thread-local struct per thread,
   reached with one thread-local address (the shape of XRay's trampolines).  `top` is
   the stack's one pointer to its newest entry; the slow paths change it as the inline
   fast paths do.  Before the thread's first tick, and after its stack is released:
     top = base = &strobe_dynstack_empty (a sentinel, wm = UINTPTR_MAX), limit = NULL,
   so that pops change nothing and every tick reaches the slow path (top < NULL never
   holds), which allocates the thread's stack.  `ticks` counts the thread's ticks only
   in code built with strobec --count-ticks (the statistics' `ticks`); it is 0 else.

   The plugin declares it `@strobe_dynstack_head = external thread_local global`:
   local-exec when the code goes into the executable that links libstrobe-rt.a
   (strobec --relocation-model=static, as strobe-ghc builds GHC's non-PIE programs),
   initial-exec otherwise.  Its name, STROBE_DYNSTACK_HEAD_NAME, and its layout are in
   intrinsics/abi.h. */

extern STROBE_THREAD_LOCAL StrobeDynStackHead strobe_dynstack_head;
extern const StrobeEntry strobe_dynstack_empty;
extern const StrobeTickDesc strobe_dynstack_no_desc; /* a sentinel's: kind 0, no parent,
                                                        a function string of its own */
extern const StrobeTickDesc strobe_dynstack_dropped_desc; /* the dropped entries' marker:
                                                             STROBE_TICK_DROPPED */

/* Whether e is a marker of folded entries; its elided field says how many it stands
 * for. */
static inline int strobe_entry_is_dropped(const StrobeEntry *e) {
  return e->desc == &strobe_dynstack_dropped_desc;
}

/* How many entries s holds, and its i-th newest (i < depth): how any reader in the
 * process indexes it (a debugger does the same with s->head->top). */
static inline uint32_t strobe_dynstack_depth(const StrobeThreadStack *s) {
  return (uint32_t)(__atomic_load_n(&s->head->top, __ATOMIC_ACQUIRE) - s->entries + 1);
}

static inline const StrobeEntry *strobe_dynstack_at(const StrobeThreadStack *s, uint32_t i) {
  return __atomic_load_n(&s->head->top, __ATOMIC_ACQUIRE) - i;
}

/* ==== The registry ==================================================================

   Every thread with a dynamic stack, for debuggers and core-file readers
   (docs/registry.md).  Statically initialised, so a reader can check magic, version
   and sizes before the program ran any tick.  Threads join when they first tick and
   leave when they exit; a change holds a lock in the runtime and keeps `generation`
   odd while the list is inconsistent. */
#define STROBE_REGISTRY_MAGIC 0x42525453u /* the bytes "STRB" */
#define STROBE_REGISTRY_VERSION 5u

enum {
  STROBE_REGISTRY_POPS_EVERYWHERE = 1u << 0, /* the options in effect (flags) */
  STROBE_REGISTRY_CRASH_REPORT = 1u << 1,
  STROBE_REGISTRY_REPORT_AT_EXIT = 1u << 2,
};

typedef struct StrobeRegistry {
  STROBE_REGISTRY_FIELDS(STROBE_MEMBER)
} StrobeRegistry;

STROBE_REGISTRY_FIELDS(STROBE_PIN)
STROBE_STATIC_ASSERT(sizeof(StrobeRegistry) == 120, "StrobeRegistry is 120 bytes");

extern StrobeRegistry strobe_registry;

/* ==== 4. The intrinsics: slow paths and fast paths ==================================

   The slow paths are declared from intrinsics.def: each row's RTS_ENTRY, returning
   void, with one parameter per argument kind (STROBE_ARG_<KIND>).  Each implements
   its whole rule (docs/design.md), so calling it where the fast path would not is always
   correct, only slower:

   strobe_tick(desc, sp)            sp: the tick's watermark (Note [Watermarks])
     1. Pop every stale entry (wm < sp).
     2. While the top entry is at this depth (wm == sp):
        a. it is desc itself (same address, or same kind, function, file and span) →
           count a repeat on it; done.  (A tail-recursive loop stays one entry.)
        b. its span strictly contains desc's, in the same file → push desc; done.
           (A nested expression.)
        c. it belongs to desc's function → pop it and go on.  (A sibling that finished:
           `stmt1; stmt2` shows only stmt2.)
        e. desc contains the span of an entry at this depth above the first that is
           desc or contains it → pop that entry and those above it, and go on.  (An
           operand that optimised code evaluated before the code around it.)
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
   A push into a full array folds entries into markers (Note [The entries and their
   sentinels]) and counts them, once the array has grown to `capacity`;
   nothing fails, and nothing allocates but a thread's first tick and a growth.
   Ticks are counted inline (strobec --count-ticks), not here.

   Instrumented code reaches them through their trampolines, `<entry>_cold`
   (rts/trampolines.c), which preserve the registers GHC's code keeps in the C ABI's
   scratch registers; inline pops and rets never need them. */

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
 * tests, and count ticks as code built with --count-ticks does.  With h = &strobe_dynstack_head (one thread-local address) and t = h->top:
 *
 *   tick(desc, sp):  [h->ticks += 1, relaxed, in code built with --count-ticks]
 *                    if (sp < t->wm) {                            // deeper: rule 3
 *                      if (t < h->limit) { t[1].desc = desc; t[1].wm = sp;
 *                                          h->top = t + 1; }     // the rest is 0
 *                      else strobe_tick(desc, sp);                // full: cold
 *                      done
 *                    }
 *                    if (sp > t->wm) strobe_tick(desc, sp);       // stale: cold
 *                    at = t; walk the entries at sp, from the top:
 *                      at->desc == desc:  at->repeats += 1; if popped, clear at's tail
 *                                         flag and h->top = at; done        // rule 2a
 *                      desc not NESTED:   strobe_tick(desc, sp); done       // cold
 *                      at->desc on desc's parent chain: stop        // rule 2b: push
 *                      at->desc of another function: strobe_tick; done  // 2d: cold
 *                      else pop it: clear it; at -= 1; stop if at->wm != sp // 2c, 3
 *                    push on at: as above, with at for t, h->top = at + 1
 *   pop(sp):         while (t->wm < sp) clear *t--;               // stops at the base
 *                    h->top = t;
 *   ret(sp):         the same with <= (Note [Watermarks]).
 *
 * Watermarks and entry addresses compare unsigned.  A push is rule 3 with nothing
 * stale (sp < t->wm: t, and everything below it, is shallower), rule 2b on an entry
 * that contains desc, or rule 3 once rule 2c popped every entry at sp.  The walk
 * tells the three kinds of entry of desc's function apart by desc's parent chain,
 * which the lowering computed (Note [A descriptor's parent] in lowering/lower.c):
 * with STROBE_DESC_NESTED, an entry of desc's function that contains desc is on the
 * chain, so one that is neither desc nor on the chain is a sibling.  "desc's
 * function" is the same string: a module shares one per function, and Haskell names
 * are module-qualified, so two modules' descriptors never share one (the linker may
 * merge equal strings, but a program has one module of each name); content-equal
 * descriptors of two modules (rule 2a by content) therefore reach the slow path.  A
 * sentinel's desc is strobe_dynstack_no_desc, and the marker's
 * strobe_dynstack_dropped_desc, with no parent and a function string no other has.
 * The walk clears the siblings it pops before it knows whether it ends in a cold
 * call; the slow path would pop them anyway (rule 2c comes before 2d).
 *
 * Sp is a word-aligned address, never UINTPTR_MAX, which no sentinel would stop.
 *
 * The entry is written before the release store of h->top publishes it, so that a
 * signal handler on this thread, or a debugger stopping it, never sees a top it has
 * not written.  Counts that other threads read (ticks, repeats) are relaxed (LLVM
 * `monotonic`) loads and stores, not locked read-modify-writes: only the owning thread
 * writes them; on x86-64 they are plain moves.  A function that is not instrumented
 * but keeps its pop checks (the plugin's pops-everywhere option) uses the same pop
 * fast path.
 *
 * Every row of intrinsics.def needs one (RTS_ENTRY##_fast, checked below). */
static inline void strobe_dynstack_count(uint64_t *counter) {
  __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* A popped slot: everything but desc and wm back to 0, as a push expects it. */
static inline void strobe_entry_clear(StrobeEntry *e) {
  e->repeats = 0;
  e->flags = 0;
  e->elided = 0;
}

/* d is on desc's parent chain. */
static inline int strobe_desc_on_chain(const StrobeTickDesc *d, const StrobeTickDesc *desc) {
  for (const StrobeTickDesc *p = desc->parent; p; p = p->parent)
    if (p == d) return 1;
  return 0;
}

static inline void strobe_tick_fast(const StrobeTickDesc *desc, uintptr_t sp) {
  StrobeDynStackHead *h = &strobe_dynstack_head;
  StrobeEntry *t = h->top, *at = t;
  strobe_dynstack_count(&h->ticks); /* as code built with --count-ticks */
  if (sp < t->wm) goto push;
  if (sp > t->wm) goto slow;
  do {
    const StrobeTickDesc *d = at->desc;
    if (d == desc) {
      if (at != t) {
        at->flags &= ~(uint32_t)STROBE_ENTRY_TAIL; /* running again (rule 2a) */
        __atomic_store_n(&h->top, at, __ATOMIC_RELEASE);
      }
      strobe_dynstack_count(&at->repeats);
      return;
    }
    if (!(desc->flags & STROBE_DESC_NESTED)) goto slow;
    if (strobe_desc_on_chain(d, desc)) break;
    if (d->function != desc->function) goto slow;
    strobe_entry_clear(at--);
  } while (sp == at->wm);
push:
  if (at < h->limit) {
    at[1].desc = desc;
    at[1].wm = sp;
    __atomic_store_n(&h->top, at + 1, __ATOMIC_RELEASE);
    return;
  }
slow:
  strobe_tick(desc, sp);
}

/* pop and ret: inclusive is ret's <= */
static inline void strobe_dynstack_pop_fast(uintptr_t sp, int inclusive) {
  StrobeEntry *t = strobe_dynstack_head.top;
  if (!(t->wm < sp || (inclusive && t->wm == sp))) return;
  do strobe_entry_clear(t--);
  while (t->wm < sp || (inclusive && t->wm == sp));
  __atomic_store_n(&strobe_dynstack_head.top, t, __ATOMIC_RELEASE);
}

static inline void strobe_pop_fast(uintptr_t sp) { strobe_dynstack_pop_fast(sp, 0); }

static inline void strobe_ret_fast(uintptr_t sp) { strobe_dynstack_pop_fast(sp, 1); }
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

   A report prints the calling thread's stack newest first, one frame a line:
     #0 Main.crash at Crash.hs:12:3-20
     #1 Main.level3 at Crash.hs:(9,1)-(10,20) (tail)
        ... 2 tail calls elided
     #2 Main.loop at Loop.hs:4:7 (x1000)
     #3 Main.walk at Walk.hs:3:5-20 (×297)
     ... 17 older entries not kept
     #300 Main.main at Main.hs:(5,1)-(9,20)
   Spans as GHC prints them: l:c, l:c1-c2, (l1,c1)-(l2,c2); (xN) when the entry was
   entered N > 1 times; (tail) when it tail-called the entry above it; (×N) for N
   identical frames in a row, numbered as N (Note [Runs of frames] in rts/report.c); a
   line for the entries that markers stand for, where they are.

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
 * reader that knows the current Sp does (docs/design.md); sp 0 leaves out nothing. */
int strobe_dynstack_dump_at(int fd, uintptr_t sp);

/* Totals over all threads, live and exited: the rows of intrinsics/stats.def. */

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

/* ==== 6. Haskell threads and stack chunks ============================================

   Note [Haskell threads and stack chunks]
   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
   Under GHC's runtime many Haskell threads run on one OS thread, one Haskell thread
   may run on several OS threads in turn (-threaded), and a thread's Cmm stack is a
   chain of chunks that GHC allocates, copies and moves.  The runtime keeps one stack
   (a StrobeThreadStack) per Haskell thread, keyed by its id (thread_id), and the
   thread-local head is always the head of the stack that runs on the OS thread now:
     - strobe_green_enter binds a Haskell thread's stack to the calling OS thread
       (creating it on first use) and parks what ran there before; strobe_green_leave
       parks it again (its head copied to `parked`, `head` pointing there, tid 0) and
       frees it when the thread has finished.  GHC's scheduler passes through StgRun
       at every switch of Haskell thread on an OS thread; rts/ghc_threads.c wraps it.
     - A Haskell thread's chunks change only in three ways (GHC 9.0): an overflow
       (the scheduler's threadStackOverflow, between two StgRuns), an underflow
       (threadStackUnderflow, called by the underflow frame and by the exception
       code when it unwinds a chunk), and a GC that moves a small chunk (between two
       StgRuns).  ghc_threads.c wraps threadStackUnderflow and checks the chunk at
       every StgRun; each change reaches strobe_dynstack_rechunk.  So the inline fast
       paths never see a chunk change: they are what they are for one stack.
   Watermarks (Note [Watermarks]) are then of two kinds:
     raw      wm < STROBE_WM_VIRTUAL: a Cmm Sp in the stack's current top chunk, the
              one that ends at chunk_end and is chunk_index from the bottom;
     virtual  STROBE_WM_VIRTUAL <= wm < UINTPTR_MAX: an entry in an older chunk,
              encoded as STROBE_WM_VIRTUAL_TOP - (index << 32 | offset), the offset
              in bytes from that chunk's end: a position that no move changes.
   Invariants, kept by every change:
     I1. Every raw watermark is in the current top chunk; every entry of an older
         chunk is virtual; no entry is in a chunk that is gone.
     I2. Watermarks never decrease from the top down (a deeper chunk is newer, a
         virtual watermark is above every Sp), so the fast paths' rules hold across
         chunks: they never pop a virtual entry and always push above one.
     I3. Only the OS thread that runs a stack changes it, and a debugger reads any
         stack through its record's `head` at any stop (the switches order their
         writes so that `head` and what it points at agree; `flags` says RUNNING).
   strobe_dynstack_rechunk(s, top, top_end, split, split_to) moves s to a chain whose
   top chunk is `top` and ends at top_end: every raw watermark becomes its position
   (offset from chunk_end in chunk_index); if `split` is nonzero, the chunk
   chunk_index overflowed into chunk_index + 1, and the frames deeper than `split`
   bytes from its end were copied to that new chunk, at (offset - split + split_to)
   bytes from its end.  Entries in chunks above `top` are popped (their frames
   returned or were unwound), entries in `top` become raw again, others stay
   virtual.  A change it cannot follow (a chain that grew by more than one chunk, an
   offset past 4 GiB) keeps the entries where they were last known and sets
   STROBE_STACK_APPROX, which the report prints.  A standalone program never calls
   it: its stack has one chunk and its watermarks are all raw. */

#define STROBE_WM_VIRTUAL (UINTPTR_MAX / 2 + 1)           /* 2^63: above any Sp */
#define STROBE_WM_VIRTUAL_TOP (UINTPTR_MAX - UINT32_MAX - 1) /* index 0, offset 0 */

/* Binds the stack of Haskell thread `id` (made on first use) to the calling OS
 * thread, as its head; what the OS thread ran before goes to *prev (with its tick
 * count) and is parked.  Returns the stack, or NULL if it could not be made (the OS
 * thread then keeps what it had). */
StrobeThreadStack *strobe_green_enter(uint64_t id, StrobeDynStackHead *prev);

/* Parks s (bound by strobe_green_enter on this OS thread) and binds prev again; with
 * finished, s leaves the registry and is freed (its counters go to `exited`). */
void strobe_green_leave(StrobeThreadStack *s, const StrobeDynStackHead *prev, int finished);

/* The stack of Haskell thread id, or NULL if it has none. */
StrobeThreadStack *strobe_green_find(uint64_t id);

/* Note [Haskell threads and stack chunks]. */
void strobe_dynstack_rechunk(StrobeThreadStack *s, uint32_t top, uintptr_t top_end,
                             uintptr_t split, uintptr_t split_to);

#ifdef __cplusplus
}
#endif
#endif
