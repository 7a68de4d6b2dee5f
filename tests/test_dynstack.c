/* test_dynstack.c — the dynamic stack (rts/dynstack.c): one test per rule of the dynamic
 * stack as strobe/dynstack.h states them, run once through the inline fast paths and
 * once through the slow paths alone (RULE_TEST); the head and the sentinels after every
 * operation; Haskell threads and stack chunks; a full array.  What the fast paths do
 * inline, and that it is what the slow paths do, is in test_dynstack_inline.c; the
 * reports, the statistics, the options and the registry in test_dynstack_reports.c;
 * threads in test_dynstack_threads.c.  The fixtures, the drivers and the invariant
 * checker are dynstack_support.h's, the descriptors dynstack_descs.h's. */
#include "dynstack_support.h"
#include "span.h"
#include "ticks.h" /* the parents and flags the lowering gives */

#include "dynstack_descs.h"

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

/* Rule 2e: a tick whose span contains an entry at its depth, of another function, that
 * ran first (an operand GHC's optimised code evaluated before the code around it):
 * that entry, and those above it, have finished. */
static void test_tick_finished_operand(void **state) {
  (void)state;
  TICK(inv, 0x1000);
  TICK(inv_pat, 0x1000);     /* in inventory's span: nested */
  TICK(parse_entry, 0x1000); /* the pattern's right-hand side calls parseEntry: a tail call */
  EXPECT(E(parse_entry, 0x1000), T(inv_pat, 0x1000), E(inv, 0x1000));
  TICK(inv_add, 0x1000); /* the let's code, around the pattern: parseEntry returned */
  EXPECT(E(inv_add, 0x1000), E(inv, 0x1000));
  /* the next iteration does it again (the pattern now nested in add's entry, which
   * counts a repeat): the stack does not grow */
  TICK(inv_pat, 0x1000);
  TICK(parse_entry, 0x1000);
  TICK(inv_add, 0x1000);
  EXPECT(R(inv_add, 0x1000, 1), E(inv, 0x1000));
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

  /* back to the middle of the recursion: what is folded counts up to one marker more */
  uint32_t largest = 0;
  for (uint32_t i = 0; i < depth(); i++) {
    const StrobeEntry *e = strobe_dynstack_at(s, i);
    if (strobe_entry_is_dropped(e) && e->elided > largest) largest = e->elided;
  }
  assert_true(largest < 1000 / 4);
  RET(0x100000 - 16 * 500);
  uint64_t r = represented();
  assert_true(r >= 500 && r <= 500 + largest);
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
      RULE_TEST(test_tick_finished_operand),
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
