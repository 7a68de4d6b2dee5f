/* test_dynstack.c — the dynamic stack (rts/dynstack.c, rts/report.c): one test per
 * rule of the dynamic stack as strobe/dynstack.h states them, run once through the inline
 * fast paths and once through the slow paths alone; the head and the sentinels after
 * every operation; what the fast paths do inline (and that it is what the slow paths
 * do); a full array; the statistics; the reports (on demand, on fatal signals, at
 * exit), the options and the registry.  Threads are in test_dynstack_threads.c.
 *
 * Each test starts a fresh stack on the calling thread with the options it needs
 * (fresh()).  A rule test runs twice (RULE_TEST): with the fast paths, as instrumented
 * code calls them, and with the slow paths only; both must give the stack the rule
 * says.  So do the tests of what the fast paths do inline (test_inline_*), which also
 * count the slow paths' calls in their fast run: the inline tick's walk down the
 * entries at sp (repeat, push on an entry of the descriptor's parent chain, pop its
 * function's other entries) for descriptors flagged STROBE_DESC_NESTED, and only the
 * repeat of the top for the others.  Every cold call of the inline tick is checked to
 * find the stack as the fast path found it (cold_tick).  Watermarks are made-up Cmm Sp
 * values: the stack grows down, so a deeper frame has a smaller one.  Crashes and
 * exits happen in a child process whose stderr the test reads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The inline tick's cold call, strobe_tick, is cold_tick here (below): it checks that
 * the fast path stored nothing before calling it (strobe/dynstack.h §4: "a cold call
 * finds the stack as it was"), then calls the runtime's strobe_tick.  The fast paths
 * are otherwise the header's, unchanged. */
#define strobe_tick cold_tick
#include "strobe/dynstack.h"
#undef strobe_tick
#include "strobe/rt.h"
#include "span.h"
#include "ticks.h" /* the parents and flags the lowering gives */

void strobe_tick(const StrobeTickDesc *desc, uintptr_t sp); /* the runtime's */

/* ---- descriptors ------------------------------------------------------------------ */

/* As the lowering emits them: constants in the strobe_ticks section, one string per
 * function name and per file in a "module" (here: string literals, which the compiler
 * merges; test_parents_are_the_lowerings checks it), each with the parent and the flags
 * the lowering gives it (Note [A descriptor's parent] in lowering/ticks.c, checked by
 * the same test).  A parent comes before its children.  NESTED (STROBE_DESC_NESTED):
 * every span of its function and file that contains the descriptor's is on its parent
 * chain, so that the inline tick handles rules 2b and 2c; 0: the runtime does. */
#define NESTED STROBE_DESC_NESTED
#define TICK_DESC(var, parent, flags, fn, file, l1, c1, l2, c2)                            \
  static const StrobeTickDesc var                                                          \
      __attribute__((section(STROBE_TICK_SECTION), used, aligned(8))) = {                  \
          STROBE_TICK_SOURCE_NOTE, l1, c1, l2, c2, flags, fn, file, NULL, parent}

TICK_DESC(fact_body, NULL, NESTED, "Main.fact", "Fact.hs", 15, 1, 17, 30); /* (15,1)-(17,30) */
TICK_DESC(fact_rhs, &fact_body, NESTED, "Main.fact", "Fact.hs", 15, 10, 15, 25); /* nested */
TICK_DESC(fact_call, &fact_body, NESTED, "Main.fact", "Fact.hs", 16, 5, 16, 20); /* sibling */
TICK_DESC(go_a, NULL, NESTED, "Main.go", "Go.hs", 3, 7, 3, 7);
TICK_DESC(go_b, NULL, NESTED, "Main.go", "Go.hs", 4, 7, 4, 12); /* siblings, no parent */
TICK_DESC(level2, NULL, NESTED, "Main.level2", "Crash.hs", 6, 14, 6, 22);
TICK_DESC(level3, NULL, NESTED, "Main.level3", "Crash.hs", 9, 1, 10, 20);
TICK_DESC(crash, NULL, NESTED, "Main.crash", "Crash.hs", 12, 3, 12, 20);
TICK_DESC(ping, NULL, NESTED, "Main.ping", "Loop.hs", 1, 1, 1, 40);
TICK_DESC(ping_inner, &ping, NESTED, "Main.ping", "Loop.hs", 1, 10, 1, 20); /* in ping */
TICK_DESC(ping_other, NULL, NESTED, "Main.ping", "Loop.hs", 2, 1, 2, 40); /* not in ping */
TICK_DESC(pong, NULL, NESTED, "Main.pong", "Loop.hs", 5, 1, 5, 40);
TICK_DESC(f1, NULL, NESTED, "T.f1", "T.hs", 1, 1, 1, 9);
TICK_DESC(f2, NULL, NESTED, "T.f2", "T.hs", 2, 1, 2, 9);
TICK_DESC(f3, NULL, NESTED, "T.f3", "T.hs", 3, 1, 3, 9);
TICK_DESC(f4, NULL, NESTED, "T.f4", "T.hs", 4, 1, 4, 9);
TICK_DESC(f5, NULL, NESTED, "T.f5", "T.hs", 5, 1, 5, 9);
TICK_DESC(other_file, NULL, NESTED, "Main.fact", "Other.hs", 15, 12, 15, 20); /* inside
                                                    fact_rhs's span, another file */
/* A function with nested spans three deep:
 *   walk = let { x; y; z } in case { alt1; alt2 = l r }; res */
TICK_DESC(walk, NULL, NESTED, "Main.walk", "Walk.hs", 1, 1, 9, 40);
TICK_DESC(walk_let, &walk, NESTED, "Main.walk", "Walk.hs", 2, 3, 4, 30);
TICK_DESC(walk_x, &walk_let, NESTED, "Main.walk", "Walk.hs", 2, 5, 2, 20);
TICK_DESC(walk_y, &walk_let, NESTED, "Main.walk", "Walk.hs", 3, 5, 3, 20);
TICK_DESC(walk_z, &walk_let, NESTED, "Main.walk", "Walk.hs", 4, 5, 4, 30);
TICK_DESC(walk_case, &walk, NESTED, "Main.walk", "Walk.hs", 5, 3, 8, 30);
TICK_DESC(walk_alt1, &walk_case, NESTED, "Main.walk", "Walk.hs", 6, 5, 6, 20);
TICK_DESC(walk_alt2, &walk_case, NESTED, "Main.walk", "Walk.hs", 7, 5, 8, 30);
TICK_DESC(walk_alt2_l, &walk_alt2, NESTED, "Main.walk", "Walk.hs", 7, 7, 7, 12);
TICK_DESC(walk_alt2_r, &walk_alt2, NESTED, "Main.walk", "Walk.hs", 8, 7, 8, 12);
TICK_DESC(walk_res, &walk, NESTED, "Main.walk", "Walk.hs", 9, 3, 9, 40);
/* A local function of walk's, its code a function of its own (another name) whose span
 * is inside walk_y's: the slow path's rule 2b pushes it on walk_y (the same file), not
 * as a tail call; inline, an entry of another function is for the slow path. */
TICK_DESC(walk_go, NULL, NESTED, "Main.walk_go", "Walk.hs", 3, 7, 3, 15);
/* Another function of the same file, and one of another file. */
TICK_DESC(step, NULL, NESTED, "Main.step", "Walk.hs", 11, 1, 13, 20);
TICK_DESC(step_a, &step, NESTED, "Main.step", "Walk.hs", 12, 3, 12, 20);
TICK_DESC(step_b, &step, NESTED, "Main.step", "Walk.hs", 13, 3, 13, 20);
TICK_DESC(loop, NULL, NESTED, "Main.loop", "Loop.hs", 10, 1, 12, 40);
TICK_DESC(loop_a, &loop, NESTED, "Main.loop", "Loop.hs", 11, 3, 11, 30);
TICK_DESC(loop_b, &loop, NESTED, "Main.loop", "Loop.hs", 12, 3, 12, 30);
/* Spans that do not nest: lap_p and lap_q overlap (lines 23-24), and lap_in is inside
 * both.  Its parent is lap_p (the lowering keeps the first of two smallest candidates
 * that do not contain each other), so lap_q, which contains it, is not on its chain:
 * not NESTED, and neither is lap_in_a, inside lap_in (and so inside lap_q too).  The
 * others are: what contains them is on their chains.
 *   lap     (20,1)-(28,40)
 *   lap_p   (21,3)-(24,40)    lap_x (22,5)-(22,20)    lap_in (23,5)-(23,20)
 *   lap_q   (23,3)-(26,40)    lap_y (25,5)-(25,20)    lap_in_a (23,7)-(23,12) */
TICK_DESC(lap, NULL, NESTED, "Main.lap", "Lap.hs", 20, 1, 28, 40);
TICK_DESC(lap_p, &lap, NESTED, "Main.lap", "Lap.hs", 21, 3, 24, 40);
TICK_DESC(lap_q, &lap, NESTED, "Main.lap", "Lap.hs", 23, 3, 26, 40);
TICK_DESC(lap_x, &lap_p, NESTED, "Main.lap", "Lap.hs", 22, 5, 22, 20);
TICK_DESC(lap_in, &lap_p, 0, "Main.lap", "Lap.hs", 23, 5, 23, 20);
TICK_DESC(lap_in_a, &lap_in, 0, "Main.lap", "Lap.hs", 23, 7, 23, 12);
TICK_DESC(lap_y, &lap_q, NESTED, "Main.lap", "Lap.hs", 25, 5, 25, 20);
/* The same notes again, in descriptors with strings of their own (their own module's,
 * or a producer's that does not share strings) and their own parents: the slow paths
 * count them as the same expressions, by content; the fast paths, which compare
 * addresses, leave them to the slow paths. */
static const char other_fact[] = "Main.fact", other_fact_hs[] = "Fact.hs",
                  other_walk[] = "Main.walk", other_walk_hs[] = "Walk.hs";
TICK_DESC(fact_body_too, NULL, NESTED, other_fact, other_fact_hs, 15, 1, 17, 30);
TICK_DESC(walk_let_too, NULL, NESTED, other_walk, other_walk_hs, 2, 3, 4, 30);
TICK_DESC(walk_x_too, &walk_let_too, NESTED, other_walk, other_walk_hs, 2, 5, 2, 20);
TICK_DESC(walk_y_too, &walk_let_too, NESTED, other_walk, other_walk_hs, 3, 5, 3, 20);

/* The descriptors of the two "modules": this one's, and the other's. */
static const StrobeTickDesc *const module_descs[] = {
    &fact_body, &fact_rhs, &fact_call, &go_a, &go_b, &level2, &level3, &crash, &ping,
    &ping_inner, &ping_other, &pong, &f1, &f2, &f3, &f4, &f5, &other_file, &walk,
    &walk_let, &walk_x, &walk_y, &walk_z, &walk_case, &walk_alt1, &walk_alt2,
    &walk_alt2_l, &walk_alt2_r, &walk_res, &walk_go, &step, &step_a, &step_b, &loop,
    &loop_a, &loop_b, &lap, &lap_p, &lap_q, &lap_x, &lap_in, &lap_in_a, &lap_y,
};
static const StrobeTickDesc *const other_module_descs[] = {
    &fact_body_too, &walk_let_too, &walk_x_too, &walk_y_too,
};
enum {
  NMODULE = sizeof module_descs / sizeof *module_descs,
  NOTHER = sizeof other_module_descs / sizeof *other_module_descs,
  NDESCS = NMODULE + NOTHER, /* all of the section */
};

/* ---- driving the stack ------------------------------------------------------------ */

/* Which intrinsics TICK, POP and RET call: the fast paths (which call the slow ones
 * when they must), or the slow paths only. */
typedef enum Paths { FAST, SLOW } Paths;
static const Paths fast_paths = FAST, slow_paths = SLOW;
static Paths paths;

/* The differential test's step (test_fast_paths_agree_with_slow_paths), or -1. */
static long diff_step = -1;

/* Releases the calling thread's stack and sets the options (STROBE_OPTIONS syntax) that
 * the next tick starts a new one with. */
static void fresh(const char *text) {
  StrobeOptions o;
  const char *bad = strobe_options_parse(text, &o);
  if (bad) fail_msg("bad options '%s'", bad);
  strobe_dynstack_configure(&o);
  strobe_dynstack_release();
}

/* *state: which Paths (RULE_TEST), or NULL for the fast paths. */
static int setup(void **state) {
  paths = *state ? *(const Paths *)*state : FAST;
  diff_step = -1;
  fresh(NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  strobe_dynstack_release();
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define RULE_TEST(f)                                                                     \
  {#f " (fast paths)", f, setup, teardown, (void *)&fast_paths},                         \
      {#f " (slow paths)", f, setup, teardown, (void *)&slow_paths}

static const StrobeThreadStack *cur(void) {
  const StrobeThreadStack *s = strobe_dynstack_current();
  assert_non_null(s);
  return s;
}

static uint32_t depth(void) { return strobe_dynstack_depth(cur()); }

__attribute__((format(printf, 2, 3))) static void broken(int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (diff_step >= 0) fail_msg("line %d, step %ld: %s", line, diff_step, msg);
  fail_msg("line %d: %s", line, msg);
}

/* The contract's invariants (Note [The entries and their sentinels]): the head and the
 * stack agree, the sentinels hold their watermarks and nothing else was written to
 * them, the top is in [base, limit), the watermarks never decrease from the top down
 * (to the base sentinel: the fast pop relies on it), and the top entry is not marked
 * tail (it is running). */
static void check_invariants(int line) {
  const StrobeDynStackHead *h = &strobe_dynstack_head;
  const StrobeThreadStack *s = strobe_dynstack_current();
  const StrobeEntry *empty = &strobe_dynstack_empty;
  if (empty->wm != UINTPTR_MAX || empty->desc != &strobe_dynstack_no_desc ||
      empty->repeats || strobe_dynstack_no_desc.kind || strobe_dynstack_no_desc.parent)
    broken(line, "strobe_dynstack_empty or strobe_dynstack_no_desc changed");
  if (!s) {
    if (h->top != empty || h->base != empty || h->limit || h->stack)
      broken(line, "no stack, but the head is not the empty one");
    return;
  }
  if (h->stack != s || s->head != h) broken(line, "head and stack disagree");
  if (h->base != s->entries - 1) broken(line, "base is not entries - 1");
  if (h->limit != s->entries + s->capacity - 1) broken(line, "limit is not entries + capacity - 1");
  if (s->capacity < STROBE_MIN_CAPACITY) broken(line, "capacity %u is below the least", s->capacity);
  if (h->top < h->base || h->top > h->limit)
    broken(line, "top is entries[%td], outside [base, limit]", h->top - s->entries);
  if (s->busy) broken(line, "busy outside a slow path");
  const StrobeEntry *base = &s->entries[-1], *below = &s->entries[-2];
  for (const StrobeEntry *e = below; e <= base; e++)
    if (e->desc != &strobe_dynstack_no_desc || e->wm != UINTPTR_MAX || e->repeats || e->flags ||
        e->elided)
      broken(line, "sentinel entries[%td] was written", e - s->entries);
  for (const StrobeEntry *e = h->top + 1; e < s->entries + s->capacity; e++)
    if (e->repeats || e->flags || e->elided)
      broken(line, "the free slot entries[%td] is not clear", e - s->entries);
  /* the markers (Note [Folding] in rts/dynstack.c): one run, after at most 4 entries */
  uint32_t markers_from = 0, markers_to = 0;
  for (uint32_t i = 0; i < s->capacity && &s->entries[i] <= h->top; i++) {
    if (!strobe_entry_is_dropped(&s->entries[i])) continue;
    if (markers_to == 0) markers_from = i;
    else if (markers_to != i) broken(line, "a marker at entries[%u], apart from the others", i);
    markers_to = i + 1;
  }
  if (markers_to && markers_from > 4) broken(line, "the markers start at entries[%u]", markers_from);
  uint32_t n = strobe_dynstack_depth(s);
  if (n > 0) {
    const StrobeEntry *t = strobe_dynstack_at(s, 0);
    if (t != h->top) broken(line, "strobe_dynstack_at(s, 0) is not the top");
    if (t->flags & STROBE_ENTRY_TAIL) broken(line, "the top entry is tail");
  }
  for (uint32_t i = 0; i < n; i++) {
    const StrobeEntry *e = strobe_dynstack_at(s, i);
    if (!e->desc || e->desc->kind == 0) broken(line, "entry %u has no descriptor", i);
    if (strobe_entry_is_dropped(e) && e->elided == 0) broken(line, "the marker stands for nothing");
    uintptr_t below_wm = i + 1 < n ? strobe_dynstack_at(s, i + 1)->wm : base->wm;
    if (below_wm < e->wm)
      broken(line, "entry %u (wm %#lx) is deeper than the one above it (wm %#lx)", i + 1,
             (unsigned long)below_wm, (unsigned long)e->wm);
  }
}

/* ---- the fast tick's cold call ------------------------------------------------------ */

/* The stack as a fast tick found it: the head's top, and the entries from the lower
 * sentinel up to the slot above the top (where a push writes), while `armed`. */
enum { MAX_WATCHED = 8 * STROBE_INITIAL_CAPACITY + 3 }; /* test_array_grows's depth */
static struct {
  bool armed;
  const StrobeEntry *top, *from; /* from: entries[-2], or NULL with no stack */
  size_t n;                      /* entries from `from` on */
  StrobeEntry copy[MAX_WATCHED];
} watched;

/* Calls of cold_tick: those that found the stack as the fast path did (an unarmed one,
 * a call of strobe_tick_fast outside fast_tick, is not checked). */
static uint64_t cold_ticks, cold_ticks_checked;

static void fast_tick(const StrobeTickDesc *d, uintptr_t sp) {
  const StrobeDynStackHead *h = &strobe_dynstack_head;
  const StrobeThreadStack *s = strobe_dynstack_current();
  watched.top = h->top;
  watched.from = NULL;
  watched.n = 0;
  if (s) {
    const StrobeEntry *end = h->top + 1 < h->limit ? h->top + 2 : h->limit;
    watched.from = s->entries - 2;
    watched.n = (size_t)(end - watched.from);
    assert_true(watched.n <= MAX_WATCHED);
    memcpy(watched.copy, watched.from, watched.n * sizeof(StrobeEntry));
  }
  watched.armed = true;
  strobe_tick_fast(d, sp);
  watched.armed = false;
}

/* Whether now is was as the walk may leave an entry it popped before its cold call: a
 * sibling of desc at sp, cleared (strobe/dynstack.h §4). */
static bool walk_cleared(const StrobeEntry *was, const StrobeEntry *now, const StrobeTickDesc *desc,
                         uintptr_t sp) {
  return now->desc == was->desc && now->wm == was->wm && was->wm == sp &&
         was->desc->function == desc->function && !now->repeats && !now->flags && !now->elided;
}

void cold_tick(const StrobeTickDesc *desc, uintptr_t sp) {
  cold_ticks++;
  if (watched.armed) {
    watched.armed = false;
    if (strobe_dynstack_head.top != watched.top)
      broken(__LINE__, "tick(%s %u:%u, %#lx): the fast path moved the top (%p to %p) and "
             "then called strobe_tick", desc->function, desc->line1, desc->col1,
             (unsigned long)sp, (const void *)watched.top, (const void *)strobe_dynstack_head.top);
    for (size_t i = 0; i < watched.n; i++)
      if (memcmp(&watched.from[i], &watched.copy[i], sizeof(StrobeEntry)) &&
          !walk_cleared(&watched.copy[i], &watched.from[i], desc, sp))
        broken(__LINE__, "tick(%s %u:%u, %#lx): the fast path wrote entries[%td] and then "
               "called strobe_tick", desc->function, desc->line1, desc->col1,
               (unsigned long)sp, (ptrdiff_t)i - 2);
    cold_ticks_checked++;
  }
  strobe_tick(desc, sp);
}

static void tick(const StrobeTickDesc *d, uintptr_t sp) {
  if (paths == SLOW) strobe_tick(d, sp);
  else fast_tick(d, sp);
}

static void pop(uintptr_t sp) {
  if (paths == SLOW) strobe_pop(sp);
  else strobe_pop_fast(sp);
}

static void ret(uintptr_t sp) {
  if (paths == SLOW) strobe_ret(sp);
  else strobe_ret_fast(sp);
}

/* Every operation checks the invariants after. */
#define TICK(d, sp) (tick(&(d), (sp)), check_invariants(__LINE__))
#define POP(sp) (pop(sp), check_invariants(__LINE__))
#define RET(sp) (ret(sp), check_invariants(__LINE__))

typedef struct Want {
  const StrobeTickDesc *desc;
  uintptr_t wm;
  uint64_t repeats;
  bool tail;
  uint32_t elided;
} Want;

/* The stack is exactly want[0..n), newest first. */
static void expect_stack(int line, const Want *want, size_t n) {
  check_invariants(line);
  const StrobeThreadStack *s = cur();
  uint32_t depth = strobe_dynstack_depth(s);
  if (depth != n) fail_msg("line %d: depth %u, expected %zu", line, depth, n);
  for (size_t i = 0; i < n; i++) {
    const StrobeEntry *e = strobe_dynstack_at(s, (uint32_t)i);
    const Want *w = &want[i];
    if (e->desc != w->desc || e->wm != w->wm || e->repeats != w->repeats ||
        !!(e->flags & STROBE_ENTRY_TAIL) != w->tail || e->elided != w->elided)
      fail_msg("line %d: entry %zu is {%s %d:%d, wm %#lx, x%lu, tail %d, elided %u}, "
               "expected {%s %d:%d, wm %#lx, x%lu, tail %d, elided %u}",
               line, i, e->desc->function, e->desc->line1, e->desc->col1,
               (unsigned long)e->wm, (unsigned long)e->repeats,
               !!(e->flags & STROBE_ENTRY_TAIL), e->elided, w->desc->function,
               w->desc->line1, w->desc->col1, (unsigned long)w->wm,
               (unsigned long)w->repeats, w->tail, w->elided);
  }
}

#define EXPECT(...)                                                                      \
  expect_stack(__LINE__, (const Want[]){__VA_ARGS__},                                    \
               sizeof((const Want[]){__VA_ARGS__}) / sizeof(Want))
#define EXPECT_EMPTY() expect_stack(__LINE__, NULL, 0)

/* Entries, for EXPECT: E(desc, wm), R with a repeat count, T marked tail. */
#define E(d, wm) {&(d), (wm), 0, false, 0}
#define R(d, wm, n) {&(d), (wm), (n), false, 0}
#define T(d, wm) {&(d), (wm), 0, true, 0}
/* The marker of n dropped entries, the oldest at wm. */
#define D(wm, n) {&strobe_dynstack_dropped_desc, (wm), 0, false, (n)}

static StrobeStats thread_stats(void) {
  StrobeStats st;
  strobe_dynstack_thread_stats(&st);
  return st;
}

/* The slow paths' counters, to tell what the fast paths did inline: slow_calls() after
 * an operation equals it before iff nothing reached a slow path. */
typedef struct SlowCalls {
  uint64_t ticks, pops, rets;
} SlowCalls;

static SlowCalls slow_calls(void) {
  const StrobeThreadStack *s = strobe_dynstack_current();
  if (!s) return (SlowCalls){0};
  return (SlowCalls){s->counters.slow_ticks, s->counters.slow_pops, s->counters.slow_rets};
}

/* (With the slow paths only, every call is one: nothing to check.) */
#define EXPECT_SLOW_CALLS(before, t, p, r)                                               \
  do {                                                                                   \
    if (paths == SLOW) break;                                                            \
    SlowCalls now_ = slow_calls();                                                       \
    if (now_.ticks - (before).ticks != (t) || now_.pops - (before).pops != (p) ||        \
        now_.rets - (before).rets != (r))                                                \
      fail_msg("line %d: slow ticks, pops, rets +%lu +%lu +%lu, expected +%d +%d +%d",   \
               __LINE__, (unsigned long)(now_.ticks - (before).ticks),                   \
               (unsigned long)(now_.pops - (before).pops),                               \
               (unsigned long)(now_.rets - (before).rets), (t), (p), (r));               \
  } while (0)

/* What strobe_dynstack_dump(fd) writes, in a static buffer. */
static const char *dump_text(uintptr_t sp, int *n) {
  static char buf[8192];
  FILE *f = tmpfile();
  assert_non_null(f);
  *n = strobe_dynstack_dump_at(fileno(f), sp);
  rewind(f);
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  buf[len] = '\0';
  fclose(f);
  return buf;
}

/* ---- the fixtures ----------------------------------------------------------------- */

/* a's span strictly contains b's: the one rule (intrinsics/span.h). */
static bool encloses(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return strobe_span_encloses(STROBE_SPAN_OF(a), STROBE_SPAN_OF(b));
}

/* Each module's descriptors are as the ticks stage decides them (tk_link_descs; Note [A
 * descriptor's parent] in lowering/ticks.c), given the module's descriptors in the
 * order the module lists them, and the lowering emits them: the parent, and
 * STROBE_DESC_NESTED for a descriptor the stage calls nested.  And the module shares one
 * string per function name and per file, as the lowering does (string_const): the
 * inline tick compares functions by address. */
static void check_parents(const StrobeTickDesc *const *descs, size_t n) {
  TkDesc *tk = calloc(n, sizeof *tk);
  assert_non_null(tk);
  for (size_t i = 0; i < n; i++)
    tk[i] = (TkDesc){.function = descs[i]->function, .file = descs[i]->file,
                     .span = STROBE_SPAN_OF(descs[i])};
  tk_link_descs(tk, (uint32_t)n);
  for (size_t i = 0; i < n; i++) {
    const StrobeTickDesc *d = descs[i];
    const StrobeTickDesc *parent = tk[i].parent == TK_NO_PARENT ? NULL : descs[tk[i].parent];
    if (d->parent != parent)
      fail_msg("%s %u:%u: parent %p, the lowering would give %p", d->function, d->line1,
               d->col1, (const void *)d->parent, (const void *)parent);
    unsigned flags = tk[i].nested ? STROBE_DESC_NESTED : 0u;
    if (d->flags != flags)
      fail_msg("%s %u:%u: flags %#x, the lowering would give %#x", d->function, d->line1,
               d->col1, d->flags, flags);
    for (size_t j = 0; j < n; j++) {
      const StrobeTickDesc *e = descs[j];
      if ((!strcmp(e->function, d->function) && e->function != d->function) ||
          (!strcmp(e->file, d->file) && e->file != d->file))
        fail_msg("%s %u:%u and %u:%u: the same text in two strings of one module",
                 d->function, d->line1, d->col1, e->line1, e->col1);
    }
  }
  free(tk);
}

static void test_parents_are_the_lowerings(void **state) {
  (void)state;
  check_parents(module_descs, NMODULE);
  check_parents(other_module_descs, NOTHER);
  assert_ptr_equal(walk_alt2_l.parent, &walk_alt2); /* and the tree is three deep */
  assert_ptr_equal(walk_alt2.parent->parent, &walk);
  /* the spans that do not nest: lap_q contains lap_in, off its chain */
  assert_ptr_equal(lap_in.parent, &lap_p);
  assert_true(encloses(&lap_q, &lap_in) && !encloses(&lap_q, &lap_p) &&
              !encloses(&lap_p, &lap_q));
  size_t not_nested = 0;
  for (size_t i = 0; i < NMODULE; i++) not_nested += !(module_descs[i]->flags & NESTED);
  assert_int_equal(not_nested, 2); /* lap_in and lap_in_a */
  /* the other module's strings are its own */
  assert_ptr_not_equal(walk_let_too.function, walk_let.function);
  assert_ptr_not_equal(fact_body_too.function, fact_body.function);
}

/* ---- the empty stack -------------------------------------------------------------- */

static void test_empty_stack(void **state) {
  (void)state;
  /* before a thread's first tick: the empty head, no stack */
  check_invariants(__LINE__);
  assert_ptr_equal(strobe_dynstack_head.top, &strobe_dynstack_empty);
  assert_null(strobe_dynstack_head.limit);
  POP(0x1000);
  RET(UINTPTR_MAX - 7);
  strobe_pop(0x1000); /* the slow paths too: nothing to pop, nothing to start */
  strobe_ret(0x1000);
  assert_null(strobe_dynstack_current());

  /* emptied by a ret: top is the base again */
  TICK(fact_body, 0x1000);
  RET(0x1000);
  EXPECT_EMPTY();
  assert_ptr_equal(strobe_dynstack_head.top, strobe_dynstack_head.base);
  POP(0x2000);
  RET(0x2000);
  EXPECT_EMPTY();
  TICK(fact_body, 0x3000);
  EXPECT(E(fact_body, 0x3000));
}

static void test_first_tick_pushes(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  EXPECT(E(fact_body, 0x1000));
  const StrobeThreadStack *s = cur();
  assert_int_equal(s->capacity, 1024); /* the defaults */
  assert_int_equal(s->tail_limit, 4);
  assert_int_equal(s->tid, (uint64_t)gettid());
  assert_int_equal(s->busy, 0);
  assert_ptr_equal(s->entries, strobe_dynstack_head.top); /* the oldest is the newest */
  strobe_tick(NULL, 0x800); /* a NULL descriptor is ignored */
  EXPECT(E(fact_body, 0x1000));
}

/* ---- tick ------------------------------------------------------------------------- */

static void test_tick_pops_stale_entries_first(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  TICK(fact_rhs, 0x0f00); /* a deeper frame */
  TICK(go_a, 0x0e00);
  EXPECT(E(go_a, 0xe00), E(fact_rhs, 0xf00), E(fact_body, 0x1000));
  TICK(go_b, 0x0f80); /* go_a and fact_rhs were popped without a pop: both stale */
  EXPECT(E(go_b, 0xf80), E(fact_body, 0x1000));
  TICK(crash, 0x2000); /* above everything */
  EXPECT(E(crash, 0x2000));
  /* the stale top was the parent: it is popped, not pushed on */
  TICK(walk_let, 0x1000);
  TICK(walk_x, 0x0f00);
  TICK(walk_y, 0x0f80); /* walk_x is stale (slow): not a sibling at this depth */
  EXPECT(E(walk_y, 0xf80), E(walk_let, 0x1000), E(crash, 0x2000));
}

static void test_tick_repeat(void **state) {
  (void)state;
  TICK(ping, 0x1000);
  TICK(ping, 0x1000);
  TICK(ping, 0x1000);
  EXPECT(R(ping, 0x1000, 2));
  strobe_tick(&ping, 0x1000); /* the slow path, called anyway, counts the same */
  EXPECT(R(ping, 0x1000, 3));
  /* a stale entry above does not hide it: pop it, then count */
  TICK(go_a, 0x0f00);
  TICK(ping, 0x1000);
  EXPECT(R(ping, 0x1000, 4));
  /* a nested expression repeats on its own */
  TICK(ping_inner, 0x1000);
  TICK(ping_inner, 0x1000);
  EXPECT(R(ping_inner, 0x1000, 1), R(ping, 0x1000, 4));
}

static void test_tick_repeat_same_note_other_descriptor(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  TICK(fact_body_too, 0x1000); /* the same source note, from another module */
  EXPECT(R(fact_body, 0x1000, 1));
  /* a sibling whose parent is the other module's copy of the top's parent */
  TICK(walk_let, 0x0f00);
  TICK(walk_x, 0x0f00);
  TICK(walk_y_too, 0x0f00);
  EXPECT(E(walk_y_too, 0xf00), E(walk_let, 0xf00), R(fact_body, 0x1000, 1));
  TICK(walk_y, 0x0f00); /* the same note as the top's */
  EXPECT(R(walk_y_too, 0xf00, 1), E(walk_let, 0xf00), R(fact_body, 0x1000, 1));
}

static void test_tick_nested_push(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  TICK(fact_rhs, 0x1000); /* inside fact_body's span: its parent */
  EXPECT(E(fact_rhs, 0x1000), E(fact_body, 0x1000));
  /* a span inside fact_rhs's, but of another file, is nested in neither: a sibling of
   * both (same function) */
  TICK(other_file, 0x1000);
  EXPECT(E(other_file, 0x1000));

  /* three deep, each on its parent */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_case, 0x1000);
  TICK(walk_alt2, 0x1000);
  TICK(walk_alt2_r, 0x1000);
  EXPECT(E(walk_alt2_r, 0x1000), E(walk_alt2, 0x1000), E(walk_case, 0x1000),
         E(walk, 0x1000));
  /* nested in an entry that is not its parent (a grandparent) */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_x, 0x1000);
  EXPECT(E(walk_x, 0x1000), E(walk, 0x1000));
  /* nested in another module's copy of its parent */
  fresh(NULL);
  TICK(walk_let_too, 0x1000);
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), E(walk_let_too, 0x1000));
}

static void test_tick_sibling_replaces(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  TICK(fact_rhs, 0x1000);
  TICK(fact_call, 0x1000); /* fact_rhs finished: pop it, push into fact_body */
  EXPECT(E(fact_call, 0x1000), E(fact_body, 0x1000));
  fresh(NULL);
  TICK(go_a, 0x1000); /* `stmt1; stmt2` shows only stmt2 */
  TICK(go_b, 0x1000);
  EXPECT(E(go_b, 0x1000));
  /* an enclosing expression of the same function comes back: the nested ones finished */
  fresh(NULL);
  TICK(fact_rhs, 0x1000);
  TICK(fact_body, 0x1000);
  EXPECT(E(fact_body, 0x1000));

  /* siblings under a common parent; the repeats go with the one replaced */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_let, 0x1000);
  TICK(walk_x, 0x1000);
  TICK(walk_x, 0x1000);
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), E(walk_let, 0x1000), E(walk, 0x1000));
  TICK(walk_z, 0x1000);
  EXPECT(E(walk_z, 0x1000), E(walk_let, 0x1000), E(walk, 0x1000));
  /* a sibling of the parent: the nested one and the parent finished */
  TICK(walk_res, 0x1000);
  EXPECT(E(walk_res, 0x1000), E(walk, 0x1000));
  /* a sibling whose parent is not on the stack: only the top's frame below */
  fresh(NULL);
  TICK(level2, 0x1100);
  TICK(walk_x, 0x1000);
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), E(level2, 0x1100));
  /* a sibling whose grandparent is the entry below: pushed on it */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_x, 0x1000);
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), E(walk, 0x1000));
  /* a sibling of a tail call: the function below keeps its tail entry */
  fresh(NULL);
  TICK(step, 0x1000);
  TICK(walk_x, 0x1000);
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), T(step, 0x1000));
}

static void test_tick_tail_call_marks_tail(void **state) {
  (void)state;
  TICK(level2, 0x1000);
  TICK(level3, 0x0ff0); /* level2 called level3: a deeper frame */
  TICK(crash, 0x0ff0);  /* level3 jumped to crash: same depth, another function */
  EXPECT(E(crash, 0xff0), T(level3, 0xff0), E(level2, 0x1000));
  int n;
  assert_string_equal(dump_text(0, &n), "#0 Main.crash at Crash.hs:12:3-20\n"
                                        "#1 Main.level3 at Crash.hs:(9,1)-(10,20) (tail)\n"
                                        "#2 Main.level2 at Crash.hs:6:14-22\n");
  assert_int_equal(n, 3);
  /* from a nested expression: the nested one is marked, its parent stays below */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_res, 0x1000);
  TICK(step_a, 0x1000);
  EXPECT(E(step_a, 0x1000), T(walk_res, 0x1000), E(walk, 0x1000));
  TICK(step_b, 0x1000); /* and the callee's siblings replace each other above it */
  EXPECT(E(step_b, 0x1000), T(walk_res, 0x1000), E(walk, 0x1000));
}

static void test_tick_tail_cycle_truncates(void **state) {
  (void)state;
  TICK(ping, 0x1000);
  TICK(pong, 0x1000);
  EXPECT(E(pong, 0x1000), T(ping, 0x1000));
  TICK(ping, 0x1000); /* ping already has a frame here: back to it, one repeat */
  EXPECT(R(ping, 0x1000, 1));
  /* however long the loop, the stack stays two entries */
  for (int i = 0; i < 1000000; i++) {
    tick(&pong, 0x1000);
    tick(&ping, 0x1000);
    if (depth() > 2) fail_msg("iteration %d: depth %u", i, depth());
  }
  EXPECT(R(ping, 0x1000, 1000001));

  /* the frame's oldest entry takes the repeat; what was nested in it goes */
  fresh(NULL);
  TICK(ping, 0x1000);
  TICK(ping_inner, 0x1000);
  TICK(pong, 0x1000);
  EXPECT(E(pong, 0x1000), T(ping_inner, 0x1000), E(ping, 0x1000));
  TICK(ping, 0x1000);
  EXPECT(R(ping, 0x1000, 1));
  /* re-entered at a nested expression: pushed on the frame */
  TICK(pong, 0x1000);
  TICK(ping_inner, 0x1000);
  EXPECT(E(ping_inner, 0x1000), R(ping, 0x1000, 2));
  /* re-entered elsewhere: the frame shows where, and keeps its count */
  TICK(pong, 0x1000);
  TICK(ping_other, 0x1000);
  EXPECT(R(ping_other, 0x1000, 3));
}

static void test_tick_tail_limit(void **state) {
  (void)state;
  fresh("tail_limit=2");
  TICK(level2, 0x2000); /* a caller at another depth stays */
  TICK(f1, 0x1000);
  TICK(f2, 0x1000);
  TICK(f3, 0x1000);
  EXPECT(E(f3, 0x1000), T(f2, 0x1000), T(f1, 0x1000), E(level2, 0x2000));
  TICK(f4, 0x1000); /* three tail entries: f1 goes */
  EXPECT(E(f4, 0x1000), T(f3, 0x1000), {&f2, 0x1000, 0, true, 1}, E(level2, 0x2000));
  TICK(f5, 0x1000); /* f2 goes, and what it had elided */
  EXPECT(E(f5, 0x1000), T(f4, 0x1000), {&f3, 0x1000, 0, true, 2}, E(level2, 0x2000));
  assert_int_equal(cur()->counters.tail_drops, 2);
  int n;
  assert_string_equal(dump_text(0, &n), "#0 T.f5 at T.hs:5:1-9\n"
                                        "#1 T.f4 at T.hs:4:1-9 (tail)\n"
                                        "#2 T.f3 at T.hs:3:1-9 (tail)\n"
                                        "   ... 2 tail calls elided\n"
                                        "#3 Main.level2 at Crash.hs:6:14-22\n");

  /* an elided tail call takes its enclosing expressions with it */
  fresh("tail_limit=1");
  TICK(ping, 0x1000);
  TICK(ping_inner, 0x1000);
  TICK(f1, 0x1000);
  TICK(f2, 0x1000);
  EXPECT(E(f2, 0x1000), {&f1, 0x1000, 0, true, 1});

  /* tail_limit=0: only the running function at each depth */
  fresh("tail_limit=0");
  TICK(level3, 0x1000);
  TICK(crash, 0x1000);
  EXPECT({&crash, 0x1000, 0, false, 1});
  assert_string_equal(dump_text(0, &n), "#0 Main.crash at Crash.hs:12:3-20\n"
                                        "   ... 1 tail call elided\n");
  /* a nested expression pushed on it keeps the count below it where it is */
  fresh("tail_limit=0");
  TICK(level3, 0x1000);
  TICK(walk, 0x1000);
  TICK(walk_let, 0x1000);
  EXPECT(E(walk_let, 0x1000), {&walk, 0x1000, 0, false, 1});
}

/* ---- pop and ret ------------------------------------------------------------------ */

static void push_three(void) {
  TICK(level2, 0x1000);
  TICK(level3, 0x0f00);
  TICK(crash, 0x0e00);
}

static void test_pop(void **state) {
  (void)state;
  push_three();
  POP(0x0e00); /* nothing above 0xe00 is gone */
  EXPECT(E(crash, 0xe00), E(level3, 0xf00), E(level2, 0x1000));
  POP(0x0f00); /* wm < sp: crash's frame is gone, level3's is not */
  EXPECT(E(level3, 0xf00), E(level2, 0x1000));
  POP(0x0f01);
  EXPECT(E(level2, 0x1000));
  POP(0x9000);
  EXPECT_EMPTY();
  /* several entries of one frame go together */
  TICK(walk, 0x1000);
  TICK(walk_let, 0x1000);
  TICK(walk_case, 0x0f00);
  TICK(walk_alt1, 0x0f00);
  EXPECT(E(walk_alt1, 0xf00), E(walk_case, 0xf00), E(walk_let, 0x1000), E(walk, 0x1000));
  POP(0x1000);
  EXPECT(E(walk_let, 0x1000), E(walk, 0x1000));
}

/* ---- Haskell threads and stack chunks (Note [Haskell threads and stack chunks]) -- */

/* A virtual watermark: an entry `off` bytes from the end of chunk `chunk`. */
#define V(chunk, off) (STROBE_WM_VIRTUAL_TOP - (((uintptr_t)(chunk) << 32) | (uintptr_t)(off)))

static size_t registry_count(uint64_t thread_id) {
  size_t n = 0;
  for (const StrobeThreadStack *t = strobe_registry.threads; t; t = t->next) n += t->thread_id == thread_id;
  return n;
}

static void test_green_threads(void **state) {
  (void)state;
  TICK(fact_body, 0x9000); /* the OS thread's own stack */
  StrobeDynStackHead prev7, prev8;
  StrobeThreadStack *a = strobe_green_enter(7, &prev7);
  assert_non_null(a);
  assert_ptr_equal(strobe_dynstack_current(), a);
  assert_int_equal(a->thread_id, 7);
  assert_true((a->flags & STROBE_STACK_HASKELL) && (a->flags & STROBE_STACK_RUNNING));
  assert_ptr_equal(a->head, &strobe_dynstack_head);
  EXPECT_EMPTY();
  TICK(level2, 0x5000);
  TICK(level3, 0x4f00);
  strobe_green_leave(a, &prev7, 0);
  EXPECT(E(fact_body, 0x9000)); /* the OS thread's own again */
  assert_ptr_equal(a->head, &a->parked);
  assert_int_equal(a->tid, 0);
  assert_false(a->flags & STROBE_STACK_RUNNING);
  assert_int_equal(a->parked.top - a->entries + 1, 2);
  StrobeThreadStack *b = strobe_green_enter(8, &prev8);
  TICK(crash, 0x4000); /* deeper than a's entries, on the same OS thread: its own */
  EXPECT(E(crash, 0x4000));
  assert_int_equal(registry_count(7), 1);
  assert_int_equal(registry_count(8), 1);
  strobe_green_leave(b, &prev8, 1); /* finished: freed */
  assert_null(strobe_green_find(8));
  assert_int_equal(registry_count(8), 0);
  assert_ptr_equal(strobe_green_find(7), a);
  assert_ptr_equal(strobe_green_enter(7, &prev7), a); /* a runs again, as it was */
  EXPECT(E(level3, 0x4f00), E(level2, 0x5000));
  strobe_green_leave(a, &prev7, 1);
  assert_null(strobe_green_find(7));
  EXPECT(E(fact_body, 0x9000));
}

/* Many threads: the map grows and deletes (backward shift) without losing one. */
static void test_green_threads_many(void **state) {
  (void)state;
  enum { N = 300 };
  StrobeDynStackHead prev;
  for (uint64_t id = 1; id <= N; id++) {
    StrobeThreadStack *s = strobe_green_enter(id * 64, &prev); /* ids that collide */
    TICK(level2, 0x5000 + id * 8);
    strobe_green_leave(s, &prev, 0);
  }
  for (uint64_t id = 1; id <= N; id += 2) {
    StrobeThreadStack *s = strobe_green_enter(id * 64, &prev);
    strobe_green_leave(s, &prev, 1);
  }
  for (uint64_t id = 1; id <= N; id++) {
    StrobeThreadStack *s = strobe_green_find(id * 64);
    if (id % 2) {
      assert_null(s);
      continue;
    }
    assert_non_null(s);
    assert_ptr_equal(strobe_green_enter(id * 64, &prev), s);
    EXPECT(E(level2, 0x5000 + id * 8));
    strobe_green_leave(s, &prev, 1);
  }
}

static void test_stack_chunks(void **state) {
  (void)state;
  StrobeDynStackHead prev;
  StrobeThreadStack *s = strobe_green_enter(9, &prev);
  strobe_dynstack_rechunk(s, 0, 0x10000, 0, 0); /* its first chunk */
  TICK(level2, 0xff00);
  TICK(level3, 0xfe00);
  /* an overflow: the frames deeper than 0x180 bytes from chunk 0's end were copied
     to chunk 1, below its 16-byte underflow frame */
  strobe_dynstack_rechunk(s, 1, 0x20000, 0x180, 16);
  EXPECT(E(level3, 0x20000 - 0x90), E(level2, V(0, 0x100)));
  TICK(crash, 0x1fe00);
  EXPECT(E(crash, 0x1fe00), E(level3, 0x1ff70), E(level2, V(0, 0x100)));
  POP(0x1fff0); /* chunk 1 returned up to its underflow frame: an older chunk's stays */
  EXPECT(E(level2, V(0, 0x100)));
  RET(0x1fff0);
  EXPECT(E(level2, V(0, 0x100)));
  TICK(crash, 0x1ffe0); /* pushed above it */
  EXPECT(E(crash, 0x1ffe0), E(level2, V(0, 0x100)));
  /* the underflow back to chunk 0, which a GC moved meanwhile: chunk 1's entries go */
  strobe_dynstack_rechunk(s, 0, 0x30000, 0, 0);
  EXPECT(E(level2, 0x2ff00));
  strobe_dynstack_rechunk(s, 0, 0x50000, 0, 0); /* a GC moves it again */
  EXPECT(E(level2, 0x4ff00));
  assert_false(s->flags & STROBE_STACK_APPROX);
  /* grown by two chunks unseen: kept where it was known, and marked approximate */
  strobe_dynstack_rechunk(s, 2, 0x70000, 0, 0);
  EXPECT(E(level2, V(0, 0x100)));
  assert_true(s->flags & STROBE_STACK_APPROX);
  /* every chunk gone but the bottom one, which has nothing */
  strobe_dynstack_rechunk(s, 0, 0x80000, 0, 0);
  EXPECT(E(level2, 0x7ff00));
  strobe_green_leave(s, &prev, 1);
}

static void test_ret_is_inclusive(void **state) {
  (void)state;
  push_three();
  RET(0x0df8);
  EXPECT(E(crash, 0xe00), E(level3, 0xf00), E(level2, 0x1000));
  RET(0x0f00); /* the continuation at 0xf00 was returned to: wm <= sp are done */
  EXPECT(E(level2, 0x1000));
  RET(0x1000);
  EXPECT_EMPTY();
}

/* ---- a full array ----------------------------------------------------------------- */

static void test_full_stack_drops_oldest(void **state) {
  (void)state;
  fresh("capacity=4"); /* a small array: all but a quarter of it, one marker */
  const StrobeTickDesc *d[] = {&f1, &f2, &f3, &f4, &f5, &crash};
  for (int i = 0; i < 6; i++) TICK(*d[i], 0x1000 - 0x100 * (uintptr_t)i); /* recursion */
  /* the fifth push folds f1, f2 and f3 into a marker; f4 stays */
  EXPECT(E(crash, 0xb00), E(f5, 0xc00), E(f4, 0xd00), D(0x1000, 3));
  const StrobeThreadStack *s = cur();
  assert_int_equal(s->counters.drops, 3);
  int n;
  assert_string_equal(dump_text(0, &n), "#0 Main.crash at Crash.hs:12:3-20\n"
                                        "#1 T.f5 at T.hs:5:1-9\n"
                                        "#2 T.f4 at T.hs:4:1-9\n"
                                        "... 3 older entries not kept\n");
  assert_int_equal(n, 3);

  /* the live entries go; the folded ones may still be live: the marker keeps the
   * oldest one's watermark */
  RET(0x0e00);
  EXPECT(D(0x1000, 3));
  assert_string_equal(dump_text(0, &n), "... 3 older entries not kept\n");
  assert_int_equal(n, 0);
  TICK(go_a, 0x0f00); /* pushes on them */
  EXPECT(E(go_a, 0xf00), D(0x1000, 3));
  POP(0x1000); /* not above them */
  EXPECT(D(0x1000, 3));
  POP(0x1001); /* everything, the folded ones too, is finished */
  EXPECT_EMPTY();
  assert_string_equal(dump_text(0, &n), "");

  /* on and on: the newest stay, in place, and the marker counts the rest */
  for (uintptr_t i = 0; i < 1000; i++) TICK(*d[i % 6], 0x100000 - 16 * i);
  uint32_t live = depth() - 1;
  assert_true(live >= 1 && live <= 3);
  for (uint32_t i = 0; i < live; i++) {
    const StrobeEntry *e = strobe_dynstack_at(s, i);
    assert_int_equal(e->wm, 0x100000 - 16 * (999 - i));
    assert_ptr_equal(e->desc, d[(999 - i) % 6]);
  }
  const StrobeEntry *marker = strobe_dynstack_at(s, live);
  assert_true(strobe_entry_is_dropped(marker));
  assert_int_equal(marker->wm, 0x100000);
  assert_int_equal(marker->elided + live, 1000);
  assert_int_equal(s->counters.drops, 3 + marker->elided);
  RET(0x100000); /* inclusive: the folded ones too */
  EXPECT_EMPTY();
}

/* The total an array's entries stand for: its entries, and what its markers count. */
static uint64_t represented(void) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < depth(); i++) {
    const StrobeEntry *e = strobe_dynstack_at(cur(), i);
    n += strobe_entry_is_dropped(e) ? e->elided : 1;
  }
  return n;
}

/* Note [Folding] in rts/dynstack.c: past `capacity`, the oldest entries stay, the
 * newest quarter stays, and what is between folds into markers of whole levels, the
 * oldest levels one each: a recursion that returns leaves nothing behind. */
static void test_fold_keeps_both_ends(void **state) {
  (void)state;
  fresh("capacity=64");
  TICK(go_a, 0x100000); /* main */
  for (uintptr_t i = 1; i <= 1000; i++) TICK(walk, 0x100000 - 16 * i); /* a deep recursion */
  const StrobeThreadStack *s = cur();
  assert_true(depth() < 64);
  assert_int_equal(represented(), 1001);
  assert_ptr_equal(s->entries[0].desc, &go_a); /* the oldest are entries */
  for (uint32_t i = 1; i < 4; i++) assert_int_equal(s->entries[i].wm, 0x100000 - 16 * i);
  assert_true(strobe_entry_is_dropped(&s->entries[4]));
  assert_int_equal(strobe_dynstack_at(s, 0)->wm, 0x100000 - 16 * 1000); /* the newest */
  for (uint32_t i = 0; i < 16; i++) { /* the oldest folded levels, one marker each */
    assert_true(strobe_entry_is_dropped(&s->entries[4 + i]));
    assert_int_equal(s->entries[4 + i].elided, 1);
  }
  int n;
  const char *text = dump_text(0, &n);
  assert_non_null(strstr(text, "#0 Main.walk at Walk.hs:(1,1)-(9,40) (×"));
  assert_non_null(strstr(text, " older entries not kept\n#"));
  assert_non_null(strstr(text, "Main.go at Go.hs:3:7\n"));

  /* back to the middle of the recursion: what is folded counts up to one run more */
  RET(0x100000 - 16 * 500);
  uint64_t r = represented();
  assert_true(r >= 500 && r <= 500 + 1000 / 16 + 1);
  /* back to one of the oldest levels: exact */
  RET(0x100000 - 16 * 10);
  assert_int_equal(represented(), 10);
  /* back to main: nothing of the recursion is left */
  RET(0x100000 - 16);
  EXPECT(E(go_a, 0x100000));
  assert_string_equal(dump_text(0, &n), "#0 Main.go at Go.hs:3:7\n");
}

/* The array starts small and doubles when full, up to `capacity`; only then does it
 * drop.  The entries move with it, in order. */
static void test_array_grows(void **state) {
  (void)state;
  fresh("capacity=1048576");
  for (uintptr_t i = 0; i < 5000; i++) TICK(walk, 0x100000 - 16 * i);
  const StrobeThreadStack *s = cur();
  assert_int_equal(depth(), 5000);
  assert_int_equal(s->capacity, 8 * STROBE_INITIAL_CAPACITY);
  assert_int_equal(s->max_capacity, 1u << 20);
  assert_int_equal(s->counters.drops, 0);
  for (uint32_t i = 0; i < 5000; i++) assert_int_equal(s->entries[i].wm, 0x100000 - 16 * i);
  RET(0x100000);
  EXPECT_EMPTY();
  assert_int_equal(s->capacity, 8 * STROBE_INITIAL_CAPACITY); /* it stays grown */

  fresh("capacity=1500"); /* 1024, then 1500 (not 2048), then drops */
  for (uintptr_t i = 0; i < 1600; i++) TICK(walk, 0x100000 - 16 * i);
  s = cur();
  assert_int_equal(s->capacity, 1500);
  assert_false(strobe_entry_is_dropped(&s->entries[0])); /* the oldest stay */
  assert_int_equal(s->entries[0].wm, 0x100000);
  assert_true(strobe_entry_is_dropped(&s->entries[4]));
  assert_int_equal(represented(), 1600);
  RET(0x100000);
  EXPECT_EMPTY();
}

/* A stack keeps the marker and one entry at least. */
static void test_small_capacity_is_raised(void **state) {
  (void)state;
  for (int c = 0; c < 3; c++) {
    char options[32];
    snprintf(options, sizeof options, "capacity=%d", c);
    fresh(options);
    TICK(f1, 0x1000);
    assert_int_equal(cur()->capacity, STROBE_MIN_CAPACITY);
    TICK(f2, 0x0f00);
    TICK(f3, 0x0e00);
    EXPECT(E(f3, 0xe00), D(0x1000, 2));
    int n;
    assert_string_equal(dump_text(0, &n), "#0 T.f3 at T.hs:3:1-9\n... 2 older entries not kept\n");
    TICK(f4, 0x0d00);
    EXPECT(E(f4, 0xd00), D(0x1000, 3));
    RET(0x1000);
    EXPECT_EMPTY();
  }
}

/* ---- what the fast paths do inline ------------------------------------------------ */

/* A deeper Sp pushes, the top entry again counts a repeat: no slow path. */
static void test_inline_push_and_repeat(void **state) {
  (void)state;
  TICK(fact_body, 0x1000); /* the first tick starts the stack: slow */
  SlowCalls before = slow_calls();
  assert_int_equal(before.ticks, 1);
  TICK(level3, 0x0f00);
  TICK(crash, 0x0e00);
  TICK(crash, 0x0e00);
  TICK(crash, 0x0e00);
  EXPECT(R(crash, 0xe00, 2), E(level3, 0xf00), E(fact_body, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* onto an emptied stack: the base sentinel is above any Sp */
  RET(0x1000);
  TICK(go_a, 0x2000);
  EXPECT(E(go_a, 0x2000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* the same expression from another module's descriptor: slow, and a repeat */
  TICK(fact_body, 0x1f00);
  TICK(fact_body_too, 0x1f00);
  EXPECT(R(fact_body, 0x1f00, 1), E(go_a, 0x2000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
}

/* A pop or ret walks down over every stale entry, as many as there are, and stops at
 * the first live one or at the base: no slow path. */
static void test_inline_pop_and_ret_many(void **state) {
  (void)state;
  TICK(level2, 0x1000);
  TICK(walk, 0x0f00);
  TICK(walk_let, 0x0f00);
  TICK(walk_x, 0x0f00);
  TICK(crash, 0x0e00);
  TICK(crash, 0x0e00);
  SlowCalls before = slow_calls();
  RET(0x0df8); /* nothing */
  POP(0x0e00); /* nothing */
  EXPECT(R(crash, 0xe00, 1), E(walk_x, 0xf00), E(walk_let, 0xf00), E(walk, 0xf00),
         E(level2, 0x1000));
  RET(0x0f00); /* four entries, two frames */
  EXPECT(E(level2, 0x1000));
  TICK(walk, 0x0f00);
  TICK(walk_case, 0x0e00);
  POP(0x0e08); /* one */
  EXPECT(E(walk, 0xf00), E(level2, 0x1000));
  POP(0x2000); /* to the base */
  EXPECT_EMPTY();
  POP(0x3000); /* the empty stack: nothing */
  RET(0x3000);
  EXPECT_EMPTY();
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
}

/* Rule 2b inline: an entry on desc's parent chain is the top, or is under entries of
 * desc's function that the walk pops (2c); the parent, or an entry further up. */
static void test_inline_nested_push(void **state) {
  (void)state;
  TICK(walk, 0x1000);
  SlowCalls before = slow_calls();
  TICK(walk_case, 0x1000);
  TICK(walk_alt2, 0x1000);
  TICK(walk_alt2, 0x1000);
  TICK(walk_alt2_l, 0x1000);
  EXPECT(E(walk_alt2_l, 0x1000), R(walk_alt2, 0x1000, 1), E(walk_case, 0x1000),
         E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* the parent under two siblings: walk_alt2_l and walk_alt2 are popped */
  TICK(walk_alt1, 0x1000);
  EXPECT(E(walk_alt1, 0x1000), E(walk_case, 0x1000), E(walk, 0x1000));
  /* the grandparent under two siblings (walk_x's parent walk_let is not on the stack) */
  TICK(walk_x, 0x1000);
  EXPECT(E(walk_x, 0x1000), E(walk, 0x1000));
  /* the great-grandparent under one */
  TICK(walk_alt2_r, 0x1000);
  EXPECT(E(walk_alt2_r, 0x1000), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* the grandparent at the top (of a deeper frame) */
  TICK(walk_case, 0x0f00);
  TICK(walk_alt2_l, 0x0f00);
  EXPECT(E(walk_alt2_l, 0xf00), E(walk_case, 0xf00), E(walk_alt2_r, 0x1000), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* nested in the other module's copy of its parent: another function (its string) */
  TICK(walk_let_too, 0x0e00);
  TICK(walk_y, 0x0e00);
  EXPECT(E(walk_y, 0xe00), E(walk_let_too, 0xe00), E(walk_alt2_l, 0xf00), E(walk_case, 0xf00),
         E(walk_alt2_r, 0x1000), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
}

/* Rule 2c inline: the top, of desc's function, neither desc nor on its chain, is popped
 * and desc takes its place, on the entry below or on a new depth. */
static void test_inline_sibling_replaces(void **state) {
  (void)state;
  TICK(walk, 0x1000);
  SlowCalls before = slow_calls();
  TICK(walk_let, 0x1000);
  TICK(walk_x, 0x1000);
  TICK(walk_x, 0x1000);
  StrobeEntry *top = strobe_dynstack_head.top;
  TICK(walk_y, 0x1000);
  assert_ptr_equal(strobe_dynstack_head.top, top); /* in the same slot */
  TICK(walk_z, 0x1000);
  EXPECT(E(walk_z, 0x1000), E(walk_let, 0x1000), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);

  /* the entry below at another depth */
  fresh(NULL);
  TICK(level2, 0x1100);
  before = slow_calls();
  TICK(walk_x, 0x1000);
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), E(level2, 0x1100));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* the base sentinel below */
  fresh(NULL);
  TICK(walk_x, 0x1000);
  before = slow_calls();
  TICK(walk_y, 0x1000);
  TICK(walk_z, 0x1000);
  EXPECT(E(walk_z, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* the grandparent below */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_x, 0x1000);
  before = slow_calls();
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);

  /* no parent: a sibling at the top level of its function (the same name: the same
   * string in a module), or the expression that encloses the top coming back */
  fresh(NULL);
  TICK(level2, 0x1100);
  TICK(go_a, 0x1000);
  before = slow_calls();
  TICK(go_b, 0x1000);
  EXPECT(E(go_b, 0x1000), E(level2, 0x1100));
  TICK(fact_rhs, 0x0f00);
  TICK(fact_body, 0x0f00);
  EXPECT(E(fact_body, 0xf00), E(go_b, 0x1000), E(level2, 0x1100));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* the same name in a string of its own: slow (here the same note: a repeat) */
  TICK(fact_body_too, 0x0f00);
  EXPECT(R(fact_body, 0xf00, 1), E(go_b, 0x1000), E(level2, 0x1100));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  /* a span of the same function in another file: fact_rhs's span contains it, but not
   * in its file: a sibling of both */
  fresh(NULL);
  TICK(fact_body, 0x1000);
  TICK(fact_rhs, 0x1000);
  before = slow_calls();
  TICK(other_file, 0x1000);
  EXPECT(E(other_file, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
}

/* Rule 2a after 2c: the walk finds desc under entries of its function (a loop that
 * comes back to an enclosing expression: the nested ones finished): it pops them and
 * counts a repeat on desc's entry, running again, so no longer a tail caller. */
static void test_inline_walk_repeats_under_siblings(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  SlowCalls before = slow_calls();
  TICK(fact_rhs, 0x1000);  /* 2b */
  TICK(fact_call, 0x1000); /* 2c: fact_rhs finished */
  TICK(fact_body, 0x1000); /* the loop again: fact_call finished */
  EXPECT(R(fact_body, 0x1000, 1));
  assert_ptr_equal(strobe_dynstack_head.top, cur()->entries);
  for (int i = 0; i < 100; i++) {
    TICK(fact_rhs, 0x1000);
    TICK(fact_call, 0x1000);
    TICK(fact_body, 0x1000);
  }
  EXPECT(R(fact_body, 0x1000, 101));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);

  /* under three entries, two levels of them */
  fresh(NULL);
  TICK(level2, 0x1100);
  TICK(walk, 0x1000);
  before = slow_calls();
  TICK(walk_case, 0x1000);
  TICK(walk_alt2, 0x1000);
  TICK(walk_alt2_l, 0x1000);
  TICK(walk_alt2_l, 0x1000);
  TICK(walk_case, 0x1000); /* pops walk_alt2_l (x2) and walk_alt2 */
  EXPECT(R(walk_case, 0x1000, 1), E(walk, 0x1000), E(level2, 0x1100));
  TICK(walk_alt2, 0x1000);
  TICK(walk_alt2_r, 0x1000);
  TICK(walk, 0x1000); /* pops three */
  EXPECT(R(walk, 0x1000, 1), E(level2, 0x1100));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* only at sp: the same expression in the caller's frame is another entry */
  TICK(walk_let, 0x0f00);
  TICK(walk_x, 0x0f00);
  TICK(walk, 0x0f00);
  EXPECT(E(walk, 0xf00), R(walk, 0x1000, 1), E(level2, 0x1100));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);

  /* A tail caller under entries of its own function: the runtime does not make one (a
   * tail call goes to another function, and the cycle back truncates to the caller's
   * frame), but the contract clears the flag of the entry that runs again, as the slow
   * path's rule 2a does.  Made by hand here. */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_let, 0x1000);
  TICK(walk_x, 0x1000);
  ((StrobeEntry *)strobe_dynstack_at(cur(), 1))->flags |= STROBE_ENTRY_TAIL;
  EXPECT(E(walk_x, 0x1000), T(walk_let, 0x1000), E(walk, 0x1000));
  before = slow_calls();
  TICK(walk_let, 0x1000);
  EXPECT(R(walk_let, 0x1000, 1), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
}

/* Rule 2c on every entry at sp, then rule 3: nothing at sp contains desc. */
static void test_inline_walk_pops_the_whole_depth(void **state) {
  (void)state;
  TICK(level2, 0x1100);
  SlowCalls before = slow_calls();
  TICK(walk_case, 0x1000); /* the frame starts inside walk: walk is not on the stack */
  TICK(walk_alt2, 0x1000);
  TICK(walk_alt2_r, 0x1000);
  TICK(walk_let, 0x1000); /* pops three */
  EXPECT(E(walk_let, 0x1000), E(level2, 0x1100));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* down to the base sentinel */
  fresh(NULL);
  TICK(walk_case, 0x1000);
  before = slow_calls();
  TICK(walk_alt1, 0x1000);
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000));
  assert_ptr_equal(strobe_dynstack_head.top, cur()->entries);
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* an enclosing entry at another depth is not pushed on: the walk stops at sp */
  fresh(NULL);
  TICK(walk, 0x1000);
  before = slow_calls();
  TICK(walk_x, 0x0f00);
  TICK(walk_y, 0x0f00);
  EXPECT(E(walk_y, 0xf00), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  /* in a full array: the push goes where the first popped entry was, nothing drops */
  fresh("capacity=3");
  TICK(walk_case, 0x1000);
  before = slow_calls();
  TICK(walk_alt2, 0x1000);
  TICK(walk_alt2_l, 0x1000);
  TICK(walk_let, 0x1000);
  EXPECT(E(walk_let, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
}

/* The walk meets an entry of another function (a tail call's, the other module's, the
 * dropped entries' marker), possibly under entries of desc's function: the slow
 * path, which finds the stack as it was (cold_tick checks it: nothing popped, nothing
 * written), and gives the stack the slow paths alone give (the same test, run with
 * them). */
static void test_inline_walk_stops_at_another_function(void **state) {
  (void)state;
  TICK(step, 0x1000);
  TICK(walk_let, 0x1000); /* a tail call: slow */
  SlowCalls before = slow_calls();
  uint64_t checked = cold_ticks_checked;
  TICK(walk_y, 0x1000);   /* 2b */
  EXPECT(E(walk_y, 0x1000), E(walk_let, 0x1000), T(step, 0x1000));
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  TICK(walk_res, 0x1000); /* pops walk_y and walk_let, then step: slow */
  EXPECT(E(walk_res, 0x1000), T(step, 0x1000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  if (paths == FAST) assert_int_equal(cold_ticks_checked, checked + 1);
  /* at the top: a sibling of a tail call (the function below keeps its tail entry) */
  fresh(NULL);
  TICK(step, 0x1000);
  TICK(walk_x, 0x1000);
  before = slow_calls();
  TICK(walk_y, 0x1000);
  EXPECT(E(walk_y, 0x1000), T(step, 0x1000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  /* a function whose span is inside the top's, in its file: the slow path's rule 2b
   * (another function's entry: the inline tick cannot tell) */
  fresh(NULL);
  TICK(walk, 0x1000);
  TICK(walk_let, 0x1000);
  TICK(walk_y, 0x1000);
  before = slow_calls();
  TICK(walk_go, 0x1000);
  EXPECT(E(walk_go, 0x1000), E(walk_y, 0x1000), E(walk_let, 0x1000), E(walk, 0x1000));
  TICK(walk_go, 0x1000); /* the top again: inline */
  EXPECT(R(walk_go, 0x1000, 1), E(walk_y, 0x1000), E(walk_let, 0x1000), E(walk, 0x1000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  /* the other module's copy of the parent, under a sibling */
  fresh(NULL);
  TICK(walk_let_too, 0x1000);
  TICK(walk_x, 0x1000); /* slow: 2b on another function's entry */
  before = slow_calls();
  TICK(walk_y, 0x1000); /* pops walk_x, then walk_let_too: slow */
  EXPECT(E(walk_y, 0x1000), E(walk_let_too, 0x1000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  /* the same note as desc's, in this module's descriptor, under the other module's
   * siblings: slow, and a repeat by content */
  fresh(NULL);
  TICK(walk_let, 0x1000);
  TICK(walk_x_too, 0x1000); /* slow: 2b on another function's entry */
  TICK(walk_y_too, 0x1000); /* slow: 2c, then walk_let */
  EXPECT(E(walk_y_too, 0x1000), E(walk_let, 0x1000));
  before = slow_calls();
  TICK(walk_let_too, 0x1000); /* pops walk_y_too, then walk_let: slow */
  EXPECT(R(walk_let, 0x1000, 1));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  /* the marker of entries dropped at this depth, under a sibling */
  fresh("capacity=2");
  TICK(step, 0x1000);
  TICK(f1, 0x1000);     /* a tail call */
  TICK(walk_x, 0x1000); /* another, into a full array: step and f1 are dropped */
  EXPECT(E(walk_x, 0x1000), D(0x1000, 2));
  before = slow_calls();
  TICK(walk_y, 0x1000); /* pops walk_x, then the marker: slow */
  EXPECT(E(walk_y, 0x1000), D(0x1000, 2));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
}

/* A descriptor that is not NESTED (lap_in: lap_q contains it, off its chain): only a
 * repeat of the top is inline; rules 2b and 2c, and a repeat under siblings, are the
 * slow path's, which tells a containing entry by its span.  Were lap_in taken for
 * NESTED, the walk would pop lap_q as a sibling. */
static void test_inline_needs_nested_spans(void **state) {
  (void)state;
  TICK(lap, 0x1000);
  SlowCalls before = slow_calls();
  TICK(lap_q, 0x1000); /* NESTED: 2b inline */
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  TICK(lap_in, 0x1000); /* 2b on lap_q, not its parent: slow */
  EXPECT(E(lap_in, 0x1000), E(lap_q, 0x1000), E(lap, 0x1000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  TICK(lap_in, 0x1000); /* the top again: inline */
  EXPECT(R(lap_in, 0x1000, 1), E(lap_q, 0x1000), E(lap, 0x1000));
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  TICK(lap_in_a, 0x1000); /* 2b on its parent, not NESTED either: slow */
  TICK(lap_in, 0x1000);   /* 2a under lap_in_a: slow */
  EXPECT(R(lap_in, 0x1000, 2), E(lap_q, 0x1000), E(lap, 0x1000));
  EXPECT_SLOW_CALLS(before, 3, 0, 0);
  /* NESTED ones over them: lap_y (in lap_q) pops lap_in; lap_x (in lap_p, in lap) pops
   * lap_y and lap_q */
  TICK(lap_y, 0x1000);
  EXPECT(E(lap_y, 0x1000), E(lap_q, 0x1000), E(lap, 0x1000));
  TICK(lap_x, 0x1000);
  EXPECT(E(lap_x, 0x1000), E(lap, 0x1000));
  EXPECT_SLOW_CALLS(before, 3, 0, 0);
  /* 2c for lap_in: slow */
  TICK(lap_p, 0x1000);
  TICK(lap_x, 0x1000);
  EXPECT(E(lap_x, 0x1000), E(lap_p, 0x1000), E(lap, 0x1000));
  EXPECT_SLOW_CALLS(before, 3, 0, 0);
  TICK(lap_in, 0x1000);
  EXPECT(E(lap_in, 0x1000), E(lap_p, 0x1000), E(lap, 0x1000));
  EXPECT_SLOW_CALLS(before, 4, 0, 0);
  /* rule 3 for it: inline (nothing at sp) */
  TICK(lap_in, 0x0f00);
  EXPECT(E(lap_in, 0xf00), E(lap_in, 0x1000), E(lap_p, 0x1000), E(lap, 0x1000));
  EXPECT_SLOW_CALLS(before, 4, 0, 0);
}

/* A full array: a push reaches the slow path, which folds the oldest entries into the
 * marker; pops pop the marker inline, as any entry. */
static void test_inline_stops_at_a_full_array(void **state) {
  (void)state;
  fresh("capacity=4");
  TICK(walk, 0x1000);
  SlowCalls before = slow_calls();
  TICK(walk_let, 0x1000); /* 2b */
  TICK(walk_x, 0x0ff0);   /* 3 */
  TICK(walk_case, 0x0fe0);
  EXPECT_SLOW_CALLS(before, 0, 0, 0);
  TICK(walk_alt1, 0x0fe0); /* 2b, full: all but the newest quarter go into a marker */
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  EXPECT(E(walk_alt1, 0xfe0), E(walk_case, 0xfe0), D(0x1000, 3));
  TICK(walk_alt2, 0x0fe0);   /* 2c, then 2b on walk_case: inline */
  TICK(walk_alt2_l, 0x0fe0); /* 2b */
  TICK(walk_alt2_r, 0x0fe0); /* 2c then 2b: in walk_alt2_l's slot */
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  EXPECT(E(walk_alt2_r, 0xfe0), E(walk_alt2, 0xfe0), E(walk_case, 0xfe0), D(0x1000, 3));
  TICK(walk_res, 0x0fe0); /* pops three, then rule 3 on the marker: inline */
  EXPECT(E(walk_res, 0xfe0), D(0x1000, 3));
  TICK(crash, 0x0f00);
  TICK(crash, 0x0f00); /* the top again: inline */
  TICK(level3, 0x0e00); /* the array is full */
  EXPECT_SLOW_CALLS(before, 1, 0, 0);
  TICK(level2, 0x0d00); /* 3 on a full array: the marker takes walk_res and crash */
  EXPECT_SLOW_CALLS(before, 2, 0, 0);
  EXPECT(E(level2, 0xd00), E(level3, 0xe00), D(0x1000, 5));
  RET(0x0fe0); /* down to the marker, whose wm is 0x1000: inline */
  EXPECT(D(0x1000, 5));
  POP(0x1000); /* not above it */
  EXPECT(D(0x1000, 5));
  POP(0x1008); /* above it: inline too */
  EXPECT_EMPTY();
  EXPECT_SLOW_CALLS(before, 2, 0, 0);
}

/* `ticks` counts the fast paths' ticks, inline, whatever they then do; the slow paths
 * count only their own calls. */
static void test_ticks_are_counted_inline(void **state) {
  (void)state;
  StrobeStats total0;
  strobe_dynstack_stats(&total0);
  strobe_tick(&walk, 0x1000);
  strobe_tick(&walk, 0x1000);
  assert_int_equal(strobe_dynstack_head.ticks, 0);
  assert_int_equal(thread_stats().ticks, 0);
  assert_int_equal(thread_stats().slow_ticks, 2);
  strobe_tick_fast(&walk, 0x1000);     /* repeat */
  strobe_tick_fast(&walk_let, 0x1000); /* 2b */
  strobe_tick_fast(&walk_x, 0x0f00);   /* 3 */
  strobe_tick_fast(&walk_y, 0x0f00);   /* 2c */
  strobe_tick_fast(&pong, 0x0f00);     /* slow: a tail call */
  strobe_pop_fast(0x1000);
  strobe_ret_fast(0x1000);
  strobe_pop(0x1000);
  strobe_ret(0x1000);
  assert_int_equal(strobe_dynstack_head.ticks, 5);
  StrobeStats st = thread_stats();
  assert_int_equal(st.ticks, 5);
  assert_int_equal(st.slow_ticks, 3);
  assert_int_equal(st.slow_pops, 1);
  assert_int_equal(st.slow_rets, 1);
  assert_int_equal(cur()->counters.ticks, 0); /* a thread's record: the head has them */
  /* a released stack's ticks go to the exited threads' */
  strobe_dynstack_release();
  assert_int_equal(strobe_dynstack_head.ticks, 0);
  StrobeStats total;
  strobe_dynstack_stats(&total);
  assert_int_equal(total.ticks - total0.ticks, 5);
  assert_int_equal(total.slow_ticks - total0.slow_ticks, 3);
}

/* ---- the fast paths agree with the slow paths ------------------------------------- */

/* A pseudo-random sequence of ticks, pops and rets runs once through the fast paths,
 * recording the stack after every step, and once through the slow paths alone on a
 * fresh stack with the same options: after every step the two stacks must be the same,
 * entry by entry.  The sequence favours what the fast paths do inline: the top's frame,
 * its children, siblings, ancestors and descendants and the rest of its function (so
 * that the walk pops several entries, repeats under them, pushes on an ancestor, or
 * empties the depth), a frame deeper; over descriptors with parents, from two modules,
 * with spans that do not nest.  The fast run also checks each step against the fast
 * paths' logic as strobe/dynstack.h states it (predict_tick): a slow path is called
 * exactly when it says, and then finds the stack as it was (cold_tick). */

static const StrobeTickDesc *const diff_descs[] = {
    &walk, &walk_let, &walk_x, &walk_y, &walk_z, &walk_case, &walk_alt1, &walk_alt2,
    &walk_alt2_l, &walk_alt2_r, &walk_res, &walk_go, &step, &step_a, &step_b, &loop,
    &loop_a, &loop_b, &walk_let_too, &walk_x_too, &walk_y_too, &fact_body, &fact_rhs,
    &fact_call, &fact_body_too, &ping, &ping_inner, &pong, &go_a, &go_b, &lap, &lap_p,
    &lap_q, &lap_x, &lap_in, &lap_in_a, &lap_y,
};
enum { NDIFF = sizeof diff_descs / sizeof *diff_descs };

enum { DIFF_BASE = 0x100000, DIFF_FLOOR = 0x1000 };

typedef enum OpKind { OP_TICK, OP_POP, OP_RET } OpKind;

typedef struct Op {
  OpKind kind;
  const StrobeTickDesc *desc; /* OP_TICK's */
  uintptr_t sp;
} Op;

/* A stack after one step: its entries, newest first, from Trace.pool[at]. */
typedef struct Snap {
  size_t at;
  uint32_t depth;
} Snap;

typedef struct Trace {
  Op *ops;
  Snap *snaps;
  StrobeEntry *pool;
  size_t pool_len, pool_cap;
} Trace;

/* What strobe/dynstack.h says the fast tick does with the stack as it is: the way,
 * after how many pops (2c) of the walk, and whether the entry pushed on (2b) is an
 * ancestor beyond desc's parent. */
typedef enum Way {
  WAY_PUSH,             /* 3: nothing at sp (a deeper frame) */
  WAY_REPEAT,           /* 2a on the top */
  WAY_REPEAT_POPPED,    /* 2a on an entry under siblings: pops, repeats */
  WAY_NESTED,           /* 2b on the top */
  WAY_SIBLING,          /* one 2c, then 2b */
  WAY_SIBLINGS,         /* more 2c, then 2b */
  WAY_POPPED_ALL,       /* 2c on every entry at sp, then 3 */
  WAY_SLOW_STALE,       /* the top is stale */
  WAY_SLOW_NOT_NESTED,  /* desc is not NESTED and not the top */
  WAY_SLOW_OTHER,       /* the walk met an entry of another function */
  WAY_SLOW_FULL,        /* a push into a full array (or before the first tick) */
  NWAYS,
  WAY_FIRST_SLOW = WAY_SLOW_STALE,
} Way;

static const char *const way_names[NWAYS] = {
    "push (3)", "repeat (2a)", "repeat under siblings (2c, 2a)", "nested (2b)",
    "sibling (2c, 2b)", "siblings (2c+, 2b)", "the whole depth popped (2c+, 3)",
    "slow: stale", "slow: not nested", "slow: another function",
    "slow: full (or no stack yet)"};

typedef struct Prediction {
  Way way;
  uint32_t pops;
  bool ancestor;
} Prediction;

static bool on_chain(const StrobeTickDesc *d, const StrobeTickDesc *desc) {
  for (const StrobeTickDesc *p = desc->parent; p; p = p->parent)
    if (p == d) return true;
  return false;
}

static Prediction predict_tick(const StrobeTickDesc *desc, uintptr_t sp) {
  const StrobeEntry *at = strobe_dynstack_head.top, *on = NULL;
  Prediction p = {WAY_PUSH, 0, false};
  if (sp > at->wm) return (Prediction){WAY_SLOW_STALE, 0, false};
  for (; at->wm == sp; at--, p.pops++) {
    if (at->desc == desc) {
      p.way = p.pops ? WAY_REPEAT_POPPED : WAY_REPEAT;
      return p;
    }
    if (!(desc->flags & STROBE_DESC_NESTED)) {
      p.way = WAY_SLOW_NOT_NESTED;
      return p;
    }
    if (on_chain(at->desc, desc)) {
      on = at;
      break;
    }
    if (at->desc->function != desc->function) {
      p.way = WAY_SLOW_OTHER;
      return p;
    }
  }
  if ((uintptr_t)at >= (uintptr_t)strobe_dynstack_head.limit) p.way = WAY_SLOW_FULL;
  else if (on) p.way = p.pops == 0 ? WAY_NESTED : p.pops == 1 ? WAY_SIBLING : WAY_SIBLINGS;
  else p.way = p.pops ? WAY_POPPED_ALL : WAY_PUSH;
  p.ancestor = on && on->desc != desc->parent;
  return p;
}

static uint64_t xorshift(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

typedef enum Kin { CHILD, SIBLING, ANCESTOR, DESCENDANT, SAME_FUNCTION } Kin;

/* The k-th (modulo their number) of the descriptors that are d's kin; NULL if none. */
static const StrobeTickDesc *related(const StrobeTickDesc *d, Kin kin, uint64_t k) {
  const StrobeTickDesc *found[NDIFF];
  size_t n = 0;
  for (size_t i = 0; i < NDIFF; i++) {
    const StrobeTickDesc *e = diff_descs[i];
    bool is;
    switch (kin) {
    case CHILD: is = e->parent == d; break;
    case SIBLING: is = d->parent && e->parent == d->parent && e != d; break;
    case ANCESTOR: is = on_chain(e, d); break;
    case DESCENDANT: is = on_chain(d, e); break;
    default: is = e->function == d->function && e != d; break;
    }
    if (is) found[n++] = e;
  }
  return n ? found[k % n] : NULL;
}

/* The next operation, chosen with the stack as it is: a tick of the top's kin is in the
 * top's frame more often than others (expressions nest in a frame). */
static Op next_op(uint64_t *x) {
  uint64_t r = xorshift(x);
  const StrobeEntry *t = strobe_dynstack_head.top;
  bool empty = t == strobe_dynstack_head.base;
  uintptr_t wm = empty ? DIFF_BASE : t->wm, k = 8 * (1 + (r >> 12) % 3), sp;
  switch ((r >> 8) % 10) {
  case 0: case 1: case 2: case 3: case 4: sp = wm; break;     /* the top's frame */
  case 5: case 6: sp = wm - k; break;                         /* a call */
  case 7: case 8: sp = wm + k; break;                         /* a return */
  default: sp = DIFF_BASE - 8 * ((r >> 12) % 64); break;      /* anywhere */
  }
  if (sp < DIFF_FLOOR || sp > DIFF_BASE + 64) sp = DIFF_BASE;
  unsigned kind = (unsigned)(r % 100);
  if (kind < 12) return (Op){OP_POP, NULL, sp};
  if (kind < 24) return (Op){OP_RET, NULL, sp};
  const StrobeTickDesc *d = NULL;
  uint64_t which = r >> 24;
  if (!empty && !strobe_entry_is_dropped(t)) { /* code never ticks the marker's desc */
    switch ((r >> 16) % 16) {
    case 0: case 1: case 2: case 3: d = related(t->desc, CHILD, which); break;
    case 4: case 5: d = related(t->desc, SIBLING, which); break;
    case 6: d = t->desc; break;
    case 7: case 8: d = related(t->desc, ANCESTOR, which); break; /* a loop comes back */
    case 9: case 10: d = related(t->desc, DESCENDANT, which); break;
    case 11: case 12: case 13: d = related(t->desc, SAME_FUNCTION, which); break;
    default: break;
    }
    if (d && (r >> 20) % 4 != 0) sp = wm;
  }
  if (!d) d = diff_descs[which % NDIFF];
  return (Op){OP_TICK, d, sp};
}

static void apply(const Op *op, Paths how) {
  switch (op->kind) {
  case OP_TICK:
    if (how == FAST) fast_tick(op->desc, op->sp);
    else strobe_tick(op->desc, op->sp);
    break;
  case OP_POP:
    if (how == FAST) strobe_pop_fast(op->sp);
    else strobe_pop(op->sp);
    break;
  case OP_RET:
    if (how == FAST) strobe_ret_fast(op->sp);
    else strobe_ret(op->sp);
    break;
  }
}

static void record(Trace *tr, size_t i) {
  const StrobeThreadStack *s = strobe_dynstack_current();
  Snap *sn = &tr->snaps[i];
  *sn = (Snap){.at = tr->pool_len};
  if (!s) return;
  sn->depth = strobe_dynstack_depth(s);
  if (tr->pool_len + sn->depth > tr->pool_cap) {
    tr->pool_cap = 2 * (tr->pool_cap + sn->depth);
    tr->pool = realloc(tr->pool, tr->pool_cap * sizeof *tr->pool);
    assert_non_null(tr->pool);
  }
  for (uint32_t j = 0; j < sn->depth; j++) tr->pool[tr->pool_len++] = *strobe_dynstack_at(s, j);
}

static bool same_desc(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return a == b || (a->kind == b->kind && a->line1 == b->line1 && a->col1 == b->col1 &&
                    a->line2 == b->line2 && a->col2 == b->col2 &&
                    !strcmp(a->function, b->function) && !strcmp(a->file, b->file));
}

static bool same_entry(const StrobeEntry *a, const StrobeEntry *b) {
  return same_desc(a->desc, b->desc) && a->wm == b->wm && a->repeats == b->repeats &&
         a->flags == b->flags && a->elided == b->elided;
}

/* `depth 3: walk 1:1 @0x1000 x2 tail elided 1; ...` (the newest 8). */
static void describe(char *buf, size_t size, const StrobeEntry *newest_first, uint32_t depth) {
  int n = snprintf(buf, size, "depth %u:", depth);
  for (uint32_t j = 0; j < depth && j < 8 && n > 0 && (size_t)n < size; j++) {
    const StrobeEntry *e = &newest_first[j];
    n += snprintf(buf + n, size - (size_t)n, " %s %u:%u @%#lx x%lu%s e%u;", e->desc->function,
                  e->desc->line1, e->desc->col1, (unsigned long)e->wm,
                  (unsigned long)e->repeats, e->flags & STROBE_ENTRY_TAIL ? " tail" : "",
                  e->elided);
  }
}

static const char *op_text(const Op *op) {
  static char buf[128];
  static const char *const kinds[] = {"tick", "pop", "ret"};
  if (op->kind == OP_TICK)
    snprintf(buf, sizeof buf, "tick(%s %u:%u, %#lx)", op->desc->function, op->desc->line1,
             op->desc->col1, (unsigned long)op->sp);
  else
    snprintf(buf, sizeof buf, "%s(%#lx)", kinds[op->kind], (unsigned long)op->sp);
  return buf;
}

/* The slow run's stack after step i is the fast run's. */
static void compare(const Trace *tr, size_t i, const char *options, uint64_t seed) {
  const Snap *want = &tr->snaps[i];
  const StrobeThreadStack *s = strobe_dynstack_current();
  static StrobeEntry got[1024];
  uint32_t depth = s ? strobe_dynstack_depth(s) : 0;
  assert_true(depth <= 1024);
  for (uint32_t j = 0; j < depth; j++) got[j] = *strobe_dynstack_at(s, j);
  bool same = depth == want->depth;
  for (uint32_t j = 0; same && j < depth; j++) same = same_entry(&got[j], &tr->pool[want->at + j]);
  if (same) return;
  char fast[1024], slow[1024], ops[512] = "";
  describe(fast, sizeof fast, &tr->pool[want->at], want->depth);
  describe(slow, sizeof slow, got, depth);
  for (size_t j = i >= 5 ? i - 5 : 0; j <= i; j++) {
    strncat(ops, op_text(&tr->ops[j]), sizeof ops - strlen(ops) - 1);
    strncat(ops, j < i ? ", " : "", sizeof ops - strlen(ops) - 1);
  }
  fail_msg("'%s', seed %lu, step %zu: the fast and the slow paths disagree after ... %s\n"
           "  fast paths: %s\n  slow paths: %s",
           options, (unsigned long)seed, i, ops, fast, slow);
}

typedef struct DiffCounts {
  uint64_t ways[NWAYS];
  uint64_t ancestor;    /* pushes on an ancestor beyond the parent (2b) */
  uint64_t other_under; /* WAY_SLOW_OTHER after pops: the stack left as it was */
  uint64_t max_pops;    /* the most entries one walk popped (or repeated under) */
  uint64_t drops, tail_drops;
  uint64_t elided; /* steps after which an entry showed elided tail calls */
} DiffCounts;

static void differential(const char *options, uint64_t seed, size_t n, DiffCounts *counts) {
  Trace tr = {.ops = calloc(n, sizeof(Op)), .snaps = calloc(n, sizeof(Snap))};
  assert_true(tr.ops && tr.snaps);
  uint64_t ticks = 0, slow_ticks = 0, checked = cold_ticks_checked;
  fresh(options);
  uint64_t x = seed;
  for (size_t i = 0; i < n; i++) {
    diff_step = (long)i;
    Op op = next_op(&x);
    tr.ops[i] = op;
    SlowCalls before = slow_calls();
    bool slow;
    Way way = NWAYS;
    if (op.kind == OP_TICK) {
      Prediction p = predict_tick(op.desc, op.sp);
      way = p.way;
      slow = way >= WAY_FIRST_SLOW;
      slow_ticks += slow;
      counts->ways[way]++;
      counts->ancestor += p.ancestor && !slow;
      counts->other_under += way == WAY_SLOW_OTHER && p.pops > 0;
      if (p.pops > counts->max_pops) counts->max_pops = p.pops;
      ticks++;
    } else {
      slow = false; /* pops stop at the base: never a slow path */
    }
    apply(&op, FAST);
    check_invariants(__LINE__);
    SlowCalls after = slow_calls();
    uint64_t calls = after.ticks - before.ticks + after.pops - before.pops + after.rets - before.rets;
    if (calls != slow)
      fail_msg("'%s', seed %lu, step %zu: %s called %lu slow paths, expected %d (%s)", options,
               (unsigned long)seed, i, op_text(&op), (unsigned long)calls, slow,
               way < NWAYS ? way_names[way] : "pop");
    record(&tr, i);
    for (uint32_t j = 0; j < tr.snaps[i].depth; j++) {
      const StrobeEntry *e = &tr.pool[tr.snaps[i].at + j];
      if (e->elided && !strobe_entry_is_dropped(e)) {
        counts->elided++;
        break;
      }
    }
  }
  StrobeStats fast = thread_stats();
  assert_int_equal(fast.ticks, ticks);
  assert_int_equal(fast.slow_ticks, slow_ticks);
  assert_int_equal(fast.slow_pops + fast.slow_rets, 0);
  assert_int_equal(cold_ticks_checked - checked, slow_ticks); /* each found the stack as it was */

  fresh(options); /* the same options, a new stack */
  uint64_t pops_with_stack = 0;
  for (size_t i = 0; i < n; i++) {
    diff_step = (long)i;
    if (tr.ops[i].kind != OP_TICK && strobe_dynstack_current()) pops_with_stack++;
    apply(&tr.ops[i], SLOW);
    check_invariants(__LINE__);
    compare(&tr, i, options, seed);
  }
  diff_step = -1;
  StrobeStats slow = thread_stats();
  assert_int_equal(slow.ticks, 0);
  assert_int_equal(slow.slow_ticks, ticks);
  assert_int_equal(slow.slow_pops + slow.slow_rets, pops_with_stack);
  assert_int_equal(slow.drops, fast.drops);
  assert_int_equal(slow.tail_drops, fast.tail_drops);
  counts->drops += fast.drops;
  counts->tail_drops += fast.tail_drops;
  free(tr.ops);
  free(tr.snaps);
  free(tr.pool);
}

static void test_fast_paths_agree_with_slow_paths(void **state) {
  (void)state;
  static const struct {
    const char *options;
    bool fills;  /* the array fills: entries are dropped into the marker */
    bool elides; /* tail calls are elided */
    bool nests;  /* room for a push above a non-sentinel: every way but full is taken */
    bool walks;  /* room for three entries at one depth: the walk pops two and more */
  } configs[] = {
      {"capacity=1024,tail_limit=4", false, true, true, true},
      {"capacity=16,tail_limit=2", true, true, true, true},
      {"capacity=8,tail_limit=1", true, true, true, true},
      {"capacity=5,tail_limit=0", true, true, true, true},
      {"capacity=2,tail_limit=0", true, true, true, false},
      {"capacity=0", true, false, true, false}, /* raised to 2 */
  };
  static const uint64_t seeds[] = {88172645463325252u, 0x9e3779b97f4a7c15u, 12345};
  for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
    DiffCounts counts = {0};
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++)
      differential(configs[c].options, seeds[i], 20000, &counts);
    print_message("  '%s':", configs[c].options);
    for (int w = 0; w < NWAYS; w++)
      print_message("%s %s %lu", w ? "," : "", way_names[w], (unsigned long)counts.ways[w]);
    print_message(";\n    on an ancestor %lu, another function under siblings %lu, at most %lu "
                  "popped; drops %lu, tail drops %lu (elided on %lu steps)\n",
                  (unsigned long)counts.ancestor, (unsigned long)counts.other_under,
                  (unsigned long)counts.max_pops, (unsigned long)counts.drops, (unsigned long)counts.tail_drops,
                  (unsigned long)counts.elided);
    /* what the sequences reached, and so compared with the slow paths */
    for (int w = 0; w < NWAYS; w++) {
      bool needed = w == WAY_SLOW_FULL ? configs[c].fills
                    : w == WAY_SIBLINGS ? configs[c].walks
                    : w >= WAY_FIRST_SLOW || configs[c].nests;
      if (counts.ways[w] == 0 && needed)
        fail_msg("'%s': no tick went the way %s", configs[c].options, way_names[w]);
    }
    if (configs[c].walks)
      assert_true(counts.ancestor > 0 && counts.other_under > 0 && counts.max_pops >= 3);
    if (configs[c].fills) assert_true(counts.drops > 0);
    else assert_int_equal(counts.drops, 0);
    if (configs[c].elides) assert_true(counts.elided > 0);
  }
}

/* ---- reports ---------------------------------------------------------------------- */

static const StrobeTickDesc point = {STROBE_TICK_SOURCE_NOTE, 7, 3, 7, 3, 0, "M.p", "P.hs", NULL, NULL};
static const StrobeTickDesc entry_only = {STROBE_TICK_ENTRY, 0, 0, 0, 0, 0, "M.e", NULL, NULL, NULL};

static void test_report_format(void **state) {
  (void)state;
  fresh("tail_limit=0");
  TICK(fact_body, 0x1000);
  TICK(entry_only, 0x0f00);
  TICK(point, 0x0e00);
  TICK(point, 0x0e00);
  TICK(point, 0x0e00);
  int n;
  assert_string_equal(dump_text(0, &n), "#0 M.p at P.hs:7:3 (x3)\n"
                                        "#1 M.e\n"
                                        "#2 Main.fact at Fact.hs:(15,1)-(17,30)\n");
  assert_int_equal(n, 3);
  /* what a reader that knows the live Sp shows: only what is not stale */
  assert_string_equal(dump_text(0x0f00, &n), "#0 M.e\n"
                                             "#1 Main.fact at Fact.hs:(15,1)-(17,30)\n");
  assert_int_equal(n, 2);
  assert_string_equal(dump_text(0x1001, &n), "");
  assert_int_equal(strobe_dynstack_dump(-1), -1); /* a failed write */
}

static void test_report_before_first_tick(void **state) {
  (void)state;
  int n;
  assert_string_equal(dump_text(0, &n), "");
  assert_int_equal(n, 0);
}

typedef struct Child {
  int status; /* as waitpid reports it */
  char err[8192];
} Child;

/* Runs body in a child process with stderr captured; body does not return. */
static Child in_child(void (*body)(void)) {
  Child c;
  FILE *err = tmpfile();
  assert_non_null(err);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* cmocka catches these around each test: put the default back, as a program has */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) signal(fatal[i], SIG_DFL);
    dup2(fileno(err), STDERR_FILENO);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    body();
    _exit(99);
  }
  assert_int_equal(waitpid(pid, &c.status, 0), pid);
  rewind(err);
  size_t n = fread(c.err, 1, sizeof c.err - 1, err);
  c.err[n] = '\0';
  fclose(err);
  return c;
}

static void died_of(const Child *c, int sig) {
  if (!WIFSIGNALED(c->status) || WTERMSIG(c->status) != sig)
    fail_msg("expected death by signal %d, got wait status %#x; stderr: %s", sig, c->status,
             c->err);
}

/* Starts the stack a crash report shows (configuring installs the runtime's handler). */
static void crash_stack(const char *options) {
  fresh(options);
  strobe_tick_fast(&level2, 0x1000);
  strobe_tick_fast(&level3, 0x0ff0);
  strobe_tick_fast(&crash, 0x0ff0);
  strobe_tick_fast(&crash, 0x0ff0);
}

static const char crash_lines[] = "#0 Main.crash at Crash.hs:12:3-20 (x2)\n"
                                  "#1 Main.level3 at Crash.hs:(9,1)-(10,20) (tail)\n"
                                  "#2 Main.level2 at Crash.hs:6:14-22\n";

static void segfaults(void) {
  crash_stack(NULL);
  volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) (void)*p;
}

static void raises_sigsegv(void) {
  crash_stack(NULL);
  raise(SIGSEGV);
}

static void aborts(void) {
  crash_stack(NULL);
  abort();
}

static void raises_sigfpe(void) {
  crash_stack(NULL);
  raise(SIGFPE);
}

static void test_crash_report(void **state) {
  (void)state;
  char want[1024];
  Child c = in_child(segfaults); /* a fault: the instruction is retried, and dies */
  died_of(&c, SIGSEGV);
  snprintf(want, sizeof want,
           "strobe: SIGSEGV (segmentation fault); the dynamic stack, newest first:\n%s",
           crash_lines);
  assert_string_equal(c.err, want);

  c = in_child(raises_sigsegv); /* sent: raised again */
  died_of(&c, SIGSEGV);
  assert_string_equal(c.err, want);

  c = in_child(aborts);
  died_of(&c, SIGABRT);
  snprintf(want, sizeof want,
           "strobe: SIGABRT (aborted); the dynamic stack, newest first:\n%s", crash_lines);
  assert_string_equal(c.err, want);

  c = in_child(raises_sigfpe);
  died_of(&c, SIGFPE);
  snprintf(want, sizeof want,
           "strobe: SIGFPE (arithmetic exception); the dynamic stack, newest first:\n%s",
           crash_lines);
  assert_string_equal(c.err, want);
}

static void segfaults_quietly(void) {
  crash_stack("crash_report=off");
  raise(SIGSEGV);
}

static void segfaults_with_empty_stack(void) {
  crash_stack(NULL);
  strobe_ret_fast(0x1000);
  raise(SIGSEGV);
}

static void test_crash_report_off_or_empty(void **state) {
  (void)state;
  Child c = in_child(segfaults_quietly);
  died_of(&c, SIGSEGV);
  assert_string_equal(c.err, "");
  c = in_child(segfaults_with_empty_stack);
  died_of(&c, SIGSEGV);
  assert_string_equal(c.err, "");
}

static void exits_with_a_stack(void) {
  crash_stack("report_at_exit=yes");
  exit(0);
}

static void exits_with_report_off(void) {
  crash_stack(NULL);
  exit(0);
}

static void test_report_at_exit(void **state) {
  (void)state;
  Child c = in_child(exits_with_a_stack);
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  char want[1024];
  snprintf(want, sizeof want, "strobe: the dynamic stack at exit, newest first:\n%s",
           crash_lines);
  if (strncmp(c.err, want, strlen(want)) != 0) fail_msg("stderr: %s", c.err);
  /* then the process's totals (test_stats checks the numbers) */
  const char *stats = c.err + strlen(want);
  if (strncmp(stats, "strobe: dynamic stack statistics\n", 33) != 0)
    fail_msg("stderr: %s", c.err);
#define STAT_NAME(name, help) #name,
  static const char *const names[] = {STROBE_STATS(STAT_NAME)};
#undef STAT_NAME
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char line[32];
    snprintf(line, sizeof line, "\n  %-12s", names[i]);
    if (!strstr(stats, line)) fail_msg("no %s line in: %s", names[i], stats);
  }

  c = in_child(exits_with_report_off);
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  assert_string_equal(c.err, "");
}

/* ---- through strobe_rt_main: STROBE_OPTIONS and the guard page --------------------- */

static int64_t ticks_and_returns(StrobeRegTable *r) {
  strobe_tick_fast(&fact_body, (uintptr_t)r->Sp);
  strobe_tick_fast(&fact_rhs, (uintptr_t)r->Sp);
  return 0;
}

static int64_t ticks_and_overflows(StrobeRegTable *r) {
  strobe_tick_fast(&go_a, (uintptr_t)r->Sp);
  strobe_tick_fast(&go_a, (uintptr_t)r->Sp);
  for (volatile StrobeWord *p = r->Sp; p; p--) *p = 0;
  return 0;
}

static int64_t (*rt_entry)(StrobeRegTable *);

static void runs_rt_main(void) {
  char *argv[] = {"test_dynstack", NULL};
  exit(strobe_rt_main(1, argv, rt_entry));
}

static void test_through_rt_main(void **state) {
  (void)state;
  setenv("STROBE_OPTIONS", "stack=64K,report_at_exit=1", 1);
  rt_entry = ticks_and_returns;
  Child c = in_child(runs_rt_main);
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  /* one frame: the body's note and the one nested in it (report.c, Note [One frame per
   * activation]) */
  const char *want = "strobe: the dynamic stack at exit, newest first:\n"
                     "#0 Main.fact at Fact.hs:15:10-25\n"
                     "strobe: dynamic stack statistics\n";
  if (strncmp(c.err, want, strlen(want)) != 0) fail_msg("stderr: %s", c.err);

  /* a Cmm stack overflow is a clean error, with the dynamic stack */
  setenv("STROBE_OPTIONS", "stack=64K", 1);
  rt_entry = ticks_and_overflows;
  c = in_child(runs_rt_main);
  unsetenv("STROBE_OPTIONS");
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2);
  assert_string_equal(c.err, "strobe: Cmm stack overflow\n"
                             "strobe: the dynamic stack, newest first:\n"
                             "#0 Main.go at Go.hs:3:7 (x2)\n");
}

/* ---- statistics ------------------------------------------------------------------- */

static void test_stats(void **state) {
  (void)state;
  StrobeStats before;
  strobe_dynstack_stats(&before); /* the process's totals so far */
  TICK(ping, 0x1000);       /* the first: slow */
  TICK(ping, 0x1000);       /* inline repeat */
  TICK(ping_inner, 0x1000); /* inline nested push */
  TICK(pong, 0x1000);       /* tail: slow */
  TICK(ping, 0x1000);       /* cycle: slow */
  TICK(go_a, 0x0f00);       /* inline push */
  POP(0x0f00);              /* inline: nothing */
  POP(0x1000);              /* inline: pops go_a */
  RET(0x1000);              /* inline: pops ping (x3) */
  strobe_pop(0x1000);       /* the slow paths, called anyway */
  strobe_ret(0x1000);
  StrobeStats st = thread_stats();
  assert_int_equal(st.ticks, 6);
  assert_int_equal(st.slow_ticks, 3);
  assert_int_equal(st.slow_pops, 1);
  assert_int_equal(st.slow_rets, 1);
  assert_int_equal(st.drops, 0);
  assert_int_equal(st.tail_drops, 0);
  assert_int_equal(st.threads, 1);
  const StrobeCounters *c = &cur()->counters;
  assert_int_equal(c->slow_ticks, 3);
  assert_int_equal(c->slow_pops, 1);
  assert_int_equal(c->slow_rets, 1);

  /* drops, and tail drops, on stacks of their own */
  StrobeStats first = st;
  fresh("capacity=4");
  for (uintptr_t i = 0; i < 6; i++) TICK(walk, 0x1000 - 16 * i);
  StrobeStats second = thread_stats();
  assert_int_equal(second.ticks, 6);
  assert_int_equal(second.slow_ticks, 2); /* the first, and the one that dropped */
  assert_int_equal(second.drops, 3);      /* all but the newest quarter of 4 */
  assert_int_equal(second.tail_drops, 0);
  fresh("tail_limit=1");
  TICK(level2, 0x2000);
  TICK(f1, 0x1000);
  TICK(f2, 0x1000);
  TICK(f3, 0x1000); /* f1 is elided */
  st = thread_stats();
  assert_int_equal(st.ticks, 4);
  assert_int_equal(st.slow_ticks, 3);
  assert_int_equal(st.drops, 0);
  assert_int_equal(st.tail_drops, 1);

  /* the totals grow by as much (this is the only thread) */
  StrobeStats after;
  strobe_dynstack_stats(&after);
#define GREW(name, help) assert_int_equal(after.name - before.name, first.name + second.name + st.name);
  STROBE_STATS(GREW)
#undef GREW

  /* a released stack's counters stay in the totals */
  strobe_dynstack_release();
  StrobeStats released;
  strobe_dynstack_stats(&released);
  assert_memory_equal(&released, &after, sizeof after);
  assert_int_equal(thread_stats().ticks, 0);
}

/* ---- options ---------------------------------------------------------------------- */

static StrobeOptions parsed(const char *text) {
  StrobeOptions o;
  const char *bad = strobe_options_parse(text, &o);
  if (bad) fail_msg("'%s': bad entry at '%s'", text ? text : "(null)", bad);
  return o;
}

static void test_options(void **state) {
  (void)state;
  StrobeOptions o = parsed(NULL);
  assert_int_equal(o.capacity, 1024);
  assert_int_equal(o.tail_limit, 4);
  assert_true(o.crash_report);
  assert_false(o.report_at_exit);
  assert_false(o.pops_everywhere);

  o = parsed("capacity=16,tail_limit=0,crash_report=0,report_at_exit=1,pops_everywhere=on");
  assert_int_equal(o.capacity, 16);
  assert_int_equal(o.tail_limit, 0);
  assert_false(o.crash_report);
  assert_true(o.report_at_exit);
  assert_true(o.pops_everywhere);
  assert_int_equal(parsed("capacity=4294967295").capacity, UINT32_MAX);
  assert_int_equal(parsed("capacity=0").capacity, 0);
  static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false", "off"};
  for (int i = 0; i < 4; i++) {
    char text[64];
    snprintf(text, sizeof text, "report_at_exit=%s,crash_report=%s", yes[i], no[i]);
    o = parsed(text);
    assert_true(o.report_at_exit);
    assert_false(o.crash_report);
  }

  static const char *const bad[] = {
      "capacity=",    "capacity=-1", "capacity=1K",   "capacity=4294967296", "capacity=0x10",
      "tail_limit=a", "crash_report=", "crash_report=2", "crash_report=Yes", "report_at_exit=y",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    StrobeOptions untouched = {.capacity = 7};
    if (strobe_options_parse(bad[i], &untouched) != bad[i]) fail_msg("'%s' was accepted", bad[i]);
    assert_int_equal(untouched.capacity, 7);
  }

  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  strobe_options_describe(out);
  fclose(out);
  assert_non_null(strstr(text, "  capacity=<count>"));
  assert_non_null(strstr(text, "(default 1024)"));
  assert_non_null(strstr(text, "  crash_report=<bool>"));
  assert_non_null(strstr(text, "(default yes)"));
  assert_non_null(strstr(text, "  report_at_exit=<bool>"));
  assert_non_null(strstr(text, "(default no)"));
  free(text);
}

static void test_options_apply(void **state) {
  (void)state;
  fresh("capacity=3,tail_limit=1,pops_everywhere=1,report_at_exit=0");
  assert_int_equal(strobe_registry.capacity, 3);
  assert_int_equal(strobe_registry.tail_limit, 1);
  assert_int_equal(strobe_registry.flags,
                   STROBE_REGISTRY_POPS_EVERYWHERE | STROBE_REGISTRY_CRASH_REPORT);
  TICK(go_a, 0x1000);
  assert_int_equal(cur()->capacity, 3);
  assert_int_equal(cur()->tail_limit, 1);
  /* a new capacity applies to stacks started later */
  StrobeOptions o = parsed("capacity=5");
  strobe_dynstack_configure(&o);
  assert_int_equal(cur()->capacity, 3);
  strobe_dynstack_release();
  TICK(go_a, 0x1000);
  assert_int_equal(cur()->capacity, 5);
}

/* ---- the registry and the descriptors --------------------------------------------- */

static void test_registry(void **state) {
  (void)state;
  const StrobeRegistry *r = &strobe_registry;
  assert_int_equal(r->magic, STROBE_REGISTRY_MAGIC);
  assert_memory_equal(&r->magic, "STRB", 4);
  assert_int_equal(r->version, STROBE_REGISTRY_VERSION);
  assert_int_equal(r->header_size, sizeof(StrobeRegistry));
  assert_int_equal(r->thread_size, sizeof(StrobeThreadStack));
  assert_int_equal(r->entry_size, sizeof(StrobeEntry));
  assert_int_equal(r->desc_size, sizeof(StrobeTickDesc));

  uint64_t exited = r->nexited, gen = r->generation;
  TICK(fact_body, 0x1000);
  const StrobeThreadStack *s = cur();
  assert_ptr_equal(r->threads, s); /* the only thread here */
  assert_null(s->next);
  assert_int_equal(r->nthreads, 1);
  assert_int_equal(r->generation, gen + 2); /* even: not changing */
  assert_ptr_equal(s->entries[-1].desc, &strobe_dynstack_no_desc); /* the sentinels below */
  assert_ptr_equal(s->head, &strobe_dynstack_head);
  assert_int_equal(r->head_size, sizeof(StrobeDynStackHead));
  strobe_dynstack_release();
  assert_null(r->threads);
  assert_int_equal(r->nthreads, 0);
  assert_int_equal(r->nexited, exited + 1);
  assert_int_equal(r->generation, gen + 4);
}

static void test_tick_descs(void **state) {
  (void)state;
  size_t n;
  const StrobeTickDesc *d = strobe_tick_descs(&n);
  assert_int_equal(n, NDESCS); /* this file's, and only those */
  for (size_t i = 0; i < NDESCS; i++) {
    const StrobeTickDesc *want = i < NMODULE ? module_descs[i] : other_module_descs[i - NMODULE];
    size_t j = 0;
    while (j < n && &d[j] != want) j++;
    if (j == n) fail_msg("%s %u:%u is not in the section", want->function, want->line1, want->col1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_parents_are_the_lowerings),
      RULE_TEST(test_empty_stack),
      RULE_TEST(test_first_tick_pushes),
      RULE_TEST(test_tick_pops_stale_entries_first),
      RULE_TEST(test_tick_repeat),
      RULE_TEST(test_tick_repeat_same_note_other_descriptor),
      RULE_TEST(test_tick_nested_push),
      RULE_TEST(test_tick_sibling_replaces),
      RULE_TEST(test_tick_tail_call_marks_tail),
      RULE_TEST(test_tick_tail_cycle_truncates),
      RULE_TEST(test_tick_tail_limit),
      RULE_TEST(test_pop),
      RULE_TEST(test_green_threads),
      RULE_TEST(test_green_threads_many),
      RULE_TEST(test_stack_chunks),
      RULE_TEST(test_ret_is_inclusive),
      RULE_TEST(test_full_stack_drops_oldest),
      RULE_TEST(test_fold_keeps_both_ends),
      RULE_TEST(test_small_capacity_is_raised),
      RULE_TEST(test_array_grows),
      RULE_TEST(test_inline_push_and_repeat),
      RULE_TEST(test_inline_pop_and_ret_many),
      RULE_TEST(test_inline_nested_push),
      RULE_TEST(test_inline_sibling_replaces),
      RULE_TEST(test_inline_walk_repeats_under_siblings),
      RULE_TEST(test_inline_walk_pops_the_whole_depth),
      RULE_TEST(test_inline_walk_stops_at_another_function),
      RULE_TEST(test_inline_needs_nested_spans),
      RULE_TEST(test_inline_stops_at_a_full_array),
      TEST(test_ticks_are_counted_inline),
      TEST(test_fast_paths_agree_with_slow_paths),
      TEST(test_report_format),
      TEST(test_report_before_first_tick),
      TEST(test_crash_report),
      TEST(test_crash_report_off_or_empty),
      TEST(test_report_at_exit),
      TEST(test_through_rt_main),
      TEST(test_stats),
      TEST(test_options),
      TEST(test_options_apply),
      TEST(test_registry),
      TEST(test_tick_descs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
