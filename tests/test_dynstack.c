/* test_dynstack.c — the dynamic stack (rts/dynstack.c, rts/report.c): one test per
 * rule of DESIGN.md §9 as strobe/dynstack.h states them, the fast-path cache after
 * every operation, the reports (on demand, on fatal signals, at exit), the options and
 * the registry.  Threads are in test_dynstack_threads.c.
 *
 * Each test starts a fresh stack on the calling thread with the options it needs
 * (fresh()), and drives it through the inline fast paths, as instrumented code does,
 * unless it tests a slow path itself.  Watermarks are made-up Cmm Sp values: the stack
 * grows down, so a deeper frame has a smaller one.  Crashes and exits happen in a
 * child process whose stderr the test reads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/dynstack.h"
#include "strobe/rt.h"

/* ---- descriptors ------------------------------------------------------------------ */

/* As the lowering emits them: constants in the strobe_ticks section. */
#define TICK_DESC(var, fn, file, l1, c1, l2, c2)                                           \
  static const StrobeTickDesc var                                                          \
      __attribute__((section(STROBE_TICK_SECTION), used, aligned(8))) = {                  \
          STROBE_TICK_SOURCE_NOTE, l1, c1, l2, c2, 0, fn, file, NULL}

TICK_DESC(fact_body, "Main.fact", "Fact.hs", 15, 1, 17, 30); /* (15,1)-(17,30) */
TICK_DESC(fact_rhs, "Main.fact", "Fact.hs", 15, 10, 15, 25); /* nested in the body */
TICK_DESC(fact_call, "Main.fact", "Fact.hs", 16, 5, 16, 20); /* its sibling */
TICK_DESC(fact_body_too, "Main.fact", "Fact.hs", 15, 1, 17, 30); /* the same note again */
TICK_DESC(go_a, "Main.go", "Go.hs", 3, 7, 3, 7);
TICK_DESC(go_b, "Main.go", "Go.hs", 4, 7, 4, 12);
TICK_DESC(level2, "Main.level2", "Crash.hs", 6, 14, 6, 22);
TICK_DESC(level3, "Main.level3", "Crash.hs", 9, 1, 10, 20);
TICK_DESC(crash, "Main.crash", "Crash.hs", 12, 3, 12, 20);
TICK_DESC(ping, "Main.ping", "Loop.hs", 1, 1, 1, 40);
TICK_DESC(ping_inner, "Main.ping", "Loop.hs", 1, 10, 1, 20); /* nested in ping */
TICK_DESC(ping_other, "Main.ping", "Loop.hs", 2, 1, 2, 40);  /* not nested in ping */
TICK_DESC(pong, "Main.pong", "Loop.hs", 5, 1, 5, 40);
TICK_DESC(f1, "T.f1", "T.hs", 1, 1, 1, 9);
TICK_DESC(f2, "T.f2", "T.hs", 2, 1, 2, 9);
TICK_DESC(f3, "T.f3", "T.hs", 3, 1, 3, 9);
TICK_DESC(f4, "T.f4", "T.hs", 4, 1, 4, 9);
TICK_DESC(f5, "T.f5", "T.hs", 5, 1, 5, 9);
TICK_DESC(other_file, "Main.fact", "Other.hs", 15, 12, 15, 20); /* inside fact_rhs's span,
                                                                 but another file */

static const StrobeTickDesc *const all_descs[] = {
    &fact_body, &fact_rhs, &fact_call, &fact_body_too, &go_a, &go_b, &level2,
    &level3, &crash, &ping, &ping_inner, &ping_other, &pong, &f1, &f2, &f3, &f4, &f5,
    &other_file,
};
enum { NDESCS = sizeof all_descs / sizeof *all_descs };

/* ---- driving the stack ------------------------------------------------------------ */

/* Releases the calling thread's stack and sets the options (STROBE_OPTIONS syntax) that
 * the next tick starts a new one with. */
static void fresh(const char *text) {
  StrobeOptions o;
  const char *bad = strobe_options_parse(text, &o);
  if (bad) fail_msg("bad options '%s'", bad);
  strobe_dynstack_configure(&o);
  strobe_dynstack_release();
}

static int setup(void **state) {
  (void)state;
  fresh(NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  strobe_dynstack_release();
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static const StrobeThreadStack *cur(void) {
  const StrobeThreadStack *s = strobe_dynstack_current();
  assert_non_null(s);
  return s;
}

/* The cache equals the stack, the watermarks never decrease from the top down, and the
 * top is not marked tail (it is running). */
static void check_invariants(int line) {
  const StrobeDynStackCache *c = &strobe_dynstack_cache;
  const StrobeThreadStack *s = strobe_dynstack_current();
  if (!s) {
    if (c->top_wm != UINTPTR_MAX || c->top_desc || c->top || c->stack)
      fail_msg("line %d: no stack, but the cache is not empty", line);
    return;
  }
  if (c->stack != s) fail_msg("line %d: cache.stack is not the stack", line);
  if (s->depth > s->capacity) fail_msg("line %d: depth %u > capacity", line, s->depth);
  if (s->depth > 0) {
    const StrobeEntry *e = strobe_dynstack_at(s, 0);
    if (c->top_wm != e->wm || c->top_desc != e->desc || c->top != e)
      fail_msg("line %d: the cache is not the top entry", line);
    if (e->flags & STROBE_ENTRY_TAIL) fail_msg("line %d: the top entry is tail", line);
  } else {
    uintptr_t wm = s->dropped ? s->dropped_wm : UINTPTR_MAX;
    if (c->top_wm != wm || c->top_desc || c->top)
      fail_msg("line %d: empty stack, but the cache says wm %#lx desc %p", line,
               (unsigned long)c->top_wm, (const void *)c->top_desc);
  }
  for (uint32_t i = 1; i < s->depth; i++)
    if (strobe_dynstack_at(s, i)->wm < strobe_dynstack_at(s, i - 1)->wm)
      fail_msg("line %d: entry %u is deeper than the one above it", line, i);
}

/* Every operation goes through the fast path, and checks the invariants after. */
#define TICK(d, sp) (strobe_tick_fast(&(d), (sp)), check_invariants(__LINE__))
#define POP(sp) (strobe_pop_fast(sp), check_invariants(__LINE__))
#define RET(sp) (strobe_ret_fast(sp), check_invariants(__LINE__))

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
  if (s->depth != n) fail_msg("line %d: depth %u, expected %zu", line, s->depth, n);
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

static StrobeStats thread_stats(void) {
  StrobeStats st;
  strobe_dynstack_thread_stats(&st);
  return st;
}

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

/* ---- the empty stack -------------------------------------------------------------- */

static void test_empty_stack_fast_paths_fall_through(void **state) {
  (void)state;
  /* before a thread's first tick: the cache's initial value, no stack */
  check_invariants(__LINE__);
  assert_int_equal(strobe_dynstack_cache.top_wm, UINTPTR_MAX);
  POP(0x1000);
  RET(UINTPTR_MAX - 1);
  strobe_pop(0x1000); /* the slow paths too: nothing to pop, nothing to start */
  strobe_ret(0x1000);
  assert_null(strobe_dynstack_current());

  /* emptied by pops: the checks are not taken again */
  TICK(fact_body, 0x1000);
  RET(0x1000);
  EXPECT_EMPTY();
  StrobeStats before = thread_stats();
  POP(0x2000);
  RET(0x2000);
  StrobeStats after = thread_stats();
  assert_int_equal(after.slow_calls, before.slow_calls);
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
}

static void test_tick_repeat(void **state) {
  (void)state;
  TICK(ping, 0x1000);
  TICK(ping, 0x1000); /* the inline fast path counts it */
  TICK(ping, 0x1000);
  EXPECT(R(ping, 0x1000, 2));
  assert_int_equal(cur()->counters.slow_repeats, 0);
  strobe_tick(&ping, 0x1000); /* the slow path, called anyway, counts the same */
  EXPECT(R(ping, 0x1000, 3));
  assert_int_equal(cur()->counters.slow_repeats, 1);
  /* a stale entry above does not hide it: pop it, then count */
  TICK(go_a, 0x0f00);
  TICK(ping, 0x1000);
  EXPECT(R(ping, 0x1000, 4));
}

static void test_tick_repeat_same_note_other_descriptor(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  TICK(fact_body_too, 0x1000); /* the same source note, emitted twice */
  EXPECT(R(fact_body, 0x1000, 1));
}

static void test_tick_nested_push(void **state) {
  (void)state;
  TICK(fact_body, 0x1000);
  TICK(fact_rhs, 0x1000); /* inside fact_body's span */
  EXPECT(E(fact_rhs, 0x1000), E(fact_body, 0x1000));
  /* a span inside fact_rhs's, but of another file, is nested in neither: a sibling of
   * both (same function) */
  TICK(other_file, 0x1000);
  EXPECT(E(other_file, 0x1000));
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
    strobe_tick_fast(&pong, 0x1000);
    strobe_tick_fast(&ping, 0x1000);
    if (cur()->depth > 2) fail_msg("iteration %d: depth %u", i, cur()->depth);
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
  assert_int_equal(cur()->counters.pops, 3);
}

/* ---- a full stack ----------------------------------------------------------------- */

static void test_full_stack_drops_oldest(void **state) {
  (void)state;
  fresh("capacity=4");
  const StrobeTickDesc *d[] = {&f1, &f2, &f3, &f4, &f5, &crash};
  for (int i = 0; i < 6; i++) TICK(*d[i], 0x1000 - 0x100 * (uintptr_t)i); /* recursion */
  EXPECT(E(crash, 0xb00), E(f5, 0xc00), E(f4, 0xd00), E(f3, 0xe00));
  const StrobeThreadStack *s = cur();
  assert_int_equal(s->dropped, 2);
  assert_int_equal(s->dropped_wm, 0x1000); /* f1's, the oldest */
  assert_int_equal(s->counters.drops, 2);
  int n;
  assert_string_equal(dump_text(0, &n), "#0 Main.crash at Crash.hs:12:3-20\n"
                                        "#1 T.f5 at T.hs:5:1-9\n"
                                        "#2 T.f4 at T.hs:4:1-9\n"
                                        "#3 T.f3 at T.hs:3:1-9\n"
                                        "... 2 older entries dropped\n");
  assert_int_equal(n, 4);

  /* the live entries go; the dropped ones may still be live: the cache keeps the
   * oldest one's watermark, so that a pop above it reaches the slow path */
  RET(0x0e00);
  EXPECT_EMPTY();
  assert_int_equal(s->dropped, 2);
  assert_int_equal(strobe_dynstack_cache.top_wm, 0x1000);
  assert_string_equal(dump_text(0, &n), "... 2 older entries dropped\n");
  assert_int_equal(n, 0);
  TICK(go_a, 0x0f00); /* pushes below them */
  EXPECT(E(go_a, 0xf00));
  assert_int_equal(s->dropped, 2);
  POP(0x1001); /* everything, the dropped ones too, is finished */
  EXPECT_EMPTY();
  assert_int_equal(s->dropped, 0);
  assert_int_equal(strobe_dynstack_cache.top_wm, UINTPTR_MAX);
  assert_string_equal(dump_text(0, &n), "");

  /* round and round the ring */
  for (uintptr_t i = 0; i < 1000; i++) TICK(*d[i % 6], 0x100000 - 16 * i);
  assert_int_equal(s->depth, 4);
  assert_int_equal(s->dropped, 996);
  for (uintptr_t i = 0; i < 4; i++) {
    const StrobeEntry *e = strobe_dynstack_at(s, (uint32_t)i);
    assert_int_equal(e->wm, 0x100000 - 16 * (999 - i));
    assert_ptr_equal(e->desc, d[(999 - i) % 6]);
  }
}

static void test_capacity_zero_drops_everything(void **state) {
  (void)state;
  fresh("capacity=0");
  TICK(fact_body, 0x1000);
  TICK(fact_rhs, 0x1000);
  EXPECT_EMPTY();
  assert_int_equal(cur()->dropped, 2);
  int n;
  assert_string_equal(dump_text(0, &n), "... 2 older entries dropped\n");
  POP(0x2000);
  assert_int_equal(cur()->dropped, 0);
}

/* ---- the cache, under any sequence ------------------------------------------------ */

/* Runs n pseudo-random ticks, pops and rets over five depths, checking the invariants
 * after each and the depth against bound; returns the thread's statistics. */
static StrobeStats run_random(const char *options, int n, uint32_t bound) {
  fresh(options);
  static const uintptr_t sps[] = {0x1000, 0x0ff0, 0x0fe0, 0x0fd0, 0x0fc0};
  uint64_t x = 88172645463325252u, ticks = 0;
  for (int i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    uintptr_t sp = sps[(x >> 8) % 5];
    switch (x % 10) {
    case 0: case 1: strobe_pop_fast(sp); break;
    case 2: case 3: strobe_ret_fast(sp); break;
    default:
      strobe_tick_fast(all_descs[(x >> 16) % NDESCS], sp);
      ticks++;
    }
    check_invariants(__LINE__);
    const StrobeThreadStack *s = strobe_dynstack_current(); /* NULL before a tick */
    if (s && s->depth > bound) fail_msg("step %d: depth %u > %u", i, s->depth, bound);
  }
  StrobeStats st = thread_stats();
  assert_int_equal(st.ticks, ticks); /* the inline repeats are counted too */
  return st;
}

static void test_cache_consistent_under_random_operations(void **state) {
  (void)state;
  /* no loop grows the stack: per depth at most tail_limit + 1 frames, each an
   * expression and one nested in it (the deepest nesting among all_descs) */
  StrobeStats st = run_random("capacity=100,tail_limit=2", 200000, 5 * 3 * 2);
  assert_true(st.repeats > 0 && st.tail_drops > 0 && st.pops > 0);
  assert_int_equal(st.drops, 0);
  st = run_random("capacity=4,tail_limit=2", 200000, 4); /* the ring overflows */
  assert_true(st.drops > 0);
}

/* ---- reports ---------------------------------------------------------------------- */

static const StrobeTickDesc point = {STROBE_TICK_SOURCE_NOTE, 7, 3, 7, 3, 0, "M.p", "P.hs", NULL};
static const StrobeTickDesc entry_only = {STROBE_TICK_ENTRY, 0, 0, 0, 0, 0, "M.e", NULL, NULL};

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
  static const char *const names[] = {"ticks", "repeats", "pushes", "pops", "drops",
                                      "tail_drops", "slow_calls", "threads"};
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
  const char *want = "strobe: the dynamic stack at exit, newest first:\n"
                     "#0 Main.fact at Fact.hs:15:10-25\n"
                     "#1 Main.fact at Fact.hs:(15,1)-(17,30)\n"
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
  TICK(ping, 0x1000);
  TICK(ping, 0x1000); /* inline repeat */
  TICK(pong, 0x1000); /* tail: push */
  TICK(ping, 0x1000); /* cycle: pop pong, slow repeat */
  TICK(go_a, 0x0f00); /* push */
  POP(0x0f00);        /* fast: nothing */
  POP(0x1000);        /* slow: pops go_a */
  RET(0x1000);        /* slow: pops ping (x3) */
  StrobeStats st = thread_stats();
  assert_int_equal(st.ticks, 5);
  assert_int_equal(st.repeats, 2);
  assert_int_equal(st.pushes, 3);
  assert_int_equal(st.pops, 3);
  assert_int_equal(st.drops, 0);
  assert_int_equal(st.tail_drops, 0);
  assert_int_equal(st.slow_calls, 4 + 2);
  assert_int_equal(st.threads, 1);
  const StrobeCounters *c = &cur()->counters;
  assert_int_equal(c->slow_ticks, 4);
  assert_int_equal(c->slow_pops, 1);
  assert_int_equal(c->slow_rets, 1);
  assert_int_equal(c->slow_repeats, 1);
  assert_int_equal(c->retired_repeats, 2);

  /* the totals grow by as much (this is the only thread) */
  StrobeStats after;
  strobe_dynstack_stats(&after);
  assert_int_equal(after.ticks - before.ticks, 5);
  assert_int_equal(after.pushes - before.pushes, 3);

  /* a released stack's counters stay in the totals */
  strobe_dynstack_release();
  StrobeStats released;
  strobe_dynstack_stats(&released);
  assert_int_equal(released.ticks, after.ticks);
  assert_int_equal(released.repeats, after.repeats);
  assert_int_equal(released.threads, after.threads);
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
  assert_ptr_equal(s->entries, (const StrobeEntry *)(s + 1));
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
    size_t j = 0;
    while (j < n && &d[j] != all_descs[i]) j++;
    if (j == n) fail_msg("%s %u:%u is not in the section", all_descs[i]->function,
                         all_descs[i]->line1, all_descs[i]->col1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_empty_stack_fast_paths_fall_through),
      TEST(test_first_tick_pushes),
      TEST(test_tick_pops_stale_entries_first),
      TEST(test_tick_repeat),
      TEST(test_tick_repeat_same_note_other_descriptor),
      TEST(test_tick_nested_push),
      TEST(test_tick_sibling_replaces),
      TEST(test_tick_tail_call_marks_tail),
      TEST(test_tick_tail_cycle_truncates),
      TEST(test_tick_tail_limit),
      TEST(test_pop),
      TEST(test_ret_is_inclusive),
      TEST(test_full_stack_drops_oldest),
      TEST(test_capacity_zero_drops_everything),
      TEST(test_cache_consistent_under_random_operations),
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
