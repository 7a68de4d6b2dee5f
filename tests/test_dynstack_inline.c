/* test_dynstack_inline.c — what the dynamic stack's fast paths (strobe/dynstack.h) do
 * inline, and that it is what the slow paths do.  The tests of what the fast paths do
 * inline (test_inline_*) run twice, as test_dynstack.c's rule tests do (RULE_TEST): with
 * the fast paths, and with the slow paths only; both must give the stack the rule says.
 * They also count the slow paths' calls in their fast run: the inline tick's walk down
 * the entries at sp (repeat, push on an entry of the descriptor's parent chain, pop its
 * function's other entries) for descriptors flagged STROBE_DESC_NESTED, and only the
 * repeat of the top for the others.  The differential test runs pseudo-random sequences
 * through both and compares the stacks after every step.  The fixtures, the drivers and
 * the invariant checker are dynstack_support.h's, the descriptors dynstack_descs.h's. */
#include "dynstack_support.h"

#include "dynstack_descs.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
