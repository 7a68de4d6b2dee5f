/* dynstack_support.h — what the dynamic stack's cmocka tests share (test_dynstack.c,
 * test_dynstack_inline.c, test_dynstack_reports.c); dynstack_support.c defines it, and
 * dynstack_descs.h holds the descriptors they tick.  Include it first.
 *
 *  - the fixtures: fresh(), setup and teardown, TEST and RULE_TEST;
 *  - the drivers: TICK, POP and RET, through the fast paths or the slow paths only, and
 *    the fast tick's cold call (cold_tick);
 *  - the invariant checker (check_invariants), run after every operation, and EXPECT;
 *  - the counters: thread_stats, slow_calls and EXPECT_SLOW_CALLS; and dump_text.
 *
 * Each test starts a fresh stack on the calling thread with the options it needs
 * (fresh()).  A rule test runs twice (RULE_TEST): with the fast paths, as instrumented
 * code calls them, and with the slow paths only; both must give the stack the rule
 * says.  Every cold call of the inline tick is checked to find the stack as the fast
 * path found it (cold_tick).  Watermarks are made-up Cmm Sp values: the stack grows
 * down, so a deeper frame has a smaller one. */
#ifndef STROBE_TESTS_DYNSTACK_SUPPORT_H
#define STROBE_TESTS_DYNSTACK_SUPPORT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid, open_memstream */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The inline tick's cold call, strobe_tick, is cold_tick here (dynstack_support.c): it
 * checks that the fast path stored nothing before calling it (strobe/dynstack.h §4: "a
 * cold call finds the stack as it was"), then calls the runtime's strobe_tick.  The fast
 * paths are otherwise the header's, unchanged. */
#define strobe_tick cold_tick
#include "strobe/dynstack.h"
#undef strobe_tick
#include "strobe/rt.h"

void strobe_tick(const StrobeTickDesc *desc, uintptr_t sp); /* the runtime's */

/* ---- driving the stack ------------------------------------------------------------ */

/* Which intrinsics TICK, POP and RET call: the fast paths (which call the slow ones
 * when they must), or the slow paths only. */
typedef enum Paths { FAST, SLOW } Paths;
extern const Paths fast_paths, slow_paths;
extern Paths paths;

/* The differential test's step (test_fast_paths_agree_with_slow_paths), or -1. */
extern long diff_step;

/* Releases the calling thread's stack and sets the options (STROBE_OPTIONS syntax) that
 * the next tick starts a new one with. */
void fresh(const char *text);

/* *state: which Paths (RULE_TEST), or NULL for the fast paths. */
int setup(void **state);
int teardown(void **state);

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define RULE_TEST(f)                                                                     \
  {#f " (fast paths)", f, setup, teardown, (void *)&fast_paths},                         \
      {#f " (slow paths)", f, setup, teardown, (void *)&slow_paths}

const StrobeThreadStack *cur(void);
uint32_t depth(void);

/* The contract's invariants (Note [The entries and their sentinels]): the head and the
 * stack agree, the sentinels hold their watermarks and nothing else was written to
 * them, the top is in [base, limit), the watermarks never decrease from the top down
 * (to the base sentinel: the fast pop relies on it), and the top entry is not marked
 * tail (it is running). */
void check_invariants(int line);

/* ---- the fast tick's cold call ------------------------------------------------------ */

/* Calls of cold_tick: those that found the stack as the fast path did (an unarmed one,
 * a call of strobe_tick_fast outside fast_tick, is not checked). */
extern uint64_t cold_ticks, cold_ticks_checked;

/* strobe_tick_fast, armed: its cold call checks the stack it found. */
void fast_tick(const StrobeTickDesc *d, uintptr_t sp);

void tick(const StrobeTickDesc *d, uintptr_t sp);
void pop(uintptr_t sp);
void ret(uintptr_t sp);

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
void expect_stack(int line, const Want *want, size_t n);

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

StrobeStats thread_stats(void);

/* The slow paths' counters, to tell what the fast paths did inline: slow_calls() after
 * an operation equals it before iff nothing reached a slow path. */
typedef struct SlowCalls {
  uint64_t ticks, pops, rets;
} SlowCalls;

SlowCalls slow_calls(void);

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
const char *dump_text(uintptr_t sp, int *n);

#endif
