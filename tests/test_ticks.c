/* test_ticks.c — the ticks stage (lowering/ticks.c): which descriptors a module gets,
 * their parents and NESTED flags, the binding a thunk's or continuation's ticks count
 * for, and where pops and rets go.  No LLVM. */
#include "support.h"

#include "ticks.h"

/* ---- helpers -------------------------------------------------------------------- */

static CmmSrcNote note(const char *file, uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2) {
  return (CmmSrcNote){.file = file, .line1 = l1, .col1 = c1, .line2 = l2, .col2 = c2};
}

static TkDesc desc(const char *function, const char *file, uint32_t l1, uint32_t c1,
                   uint32_t l2, uint32_t c2) {
  return (TkDesc){.function = function, .file = file, .span = {l1, c1, l2, c2}};
}

/* ---- the containment rule --------------------------------------------------------- */

static void test_span_rule(void **state) {
  (void)state;
  StrobeSpan body = {15, 1, 17, 30}, rhs = {15, 10, 15, 25}, same_start = {15, 1, 15, 5};
  assert_true(strobe_span_contains(body, rhs));
  assert_true(strobe_span_encloses(body, rhs));
  assert_false(strobe_span_contains(rhs, body));
  assert_true(strobe_span_contains(body, body));  /* containment includes equality */
  assert_false(strobe_span_encloses(body, body)); /* enclosing does not */
  assert_true(strobe_span_encloses(body, same_start)); /* a shared start still nests */
  StrobeSpan end = {17, 30, 17, 30};
  assert_true(strobe_span_encloses(body, end)); /* a shared end too */
  StrobeSpan past = {17, 30, 17, 31};
  assert_false(strobe_span_contains(body, past)); /* one column past the end */
  assert_int_equal(strobe_pos_cmp(3, 9, 4, 1), -1);
  assert_int_equal(strobe_pos_cmp(4, 2, 4, 1), 1);
  assert_int_equal(strobe_pos_cmp(4, 1, 4, 1), 0);
}

/* ---- parents and flags ------------------------------------------------------------ */

/* Spans that nest: each descriptor's parent is the smallest that strictly contains it,
 * whatever the order; all are NESTED. */
static void test_parents_nest(void **state) {
  (void)state;
  TkDesc d[] = {
      desc("Main.fact", "Fact.hs", 15, 10, 15, 25), /* 0: in 2, in 1 */
      desc("Main.fact", "Fact.hs", 15, 1, 17, 30),  /* 1: the body */
      desc("Main.fact", "Fact.hs", 15, 5, 16, 1),   /* 2: between */
      desc("Main.fact", "Fact.hs", 16, 5, 16, 20),  /* 3: in 1 only */
      desc("Main.fact", "Fact.hs", 16, 5, 16, 20),  /* 4: equal to 3: neither encloses */
  };
  tk_link_descs(d, 5);
  assert_int_equal(d[0].parent, 2);
  assert_int_equal(d[1].parent, TK_NO_PARENT);
  assert_int_equal(d[2].parent, 1);
  assert_int_equal(d[3].parent, 1);
  assert_int_equal(d[4].parent, 1);
  for (int i = 0; i < 5; i++) assert_true(d[i].nested);
}

/* Parents stay within a function and a file: the same spans elsewhere do not count. */
static void test_parents_per_function_and_file(void **state) {
  (void)state;
  TkDesc d[] = {
      desc("Main.go", "Go.hs", 1, 1, 9, 1),
      desc("Main.fact", "Go.hs", 3, 1, 3, 9), /* another function */
      desc("Main.go", "Other.hs", 3, 1, 3, 9), /* another file */
      desc("Main.go", "Go.hs", 3, 1, 3, 9),
  };
  tk_link_descs(d, 4);
  assert_int_equal(d[1].parent, TK_NO_PARENT);
  assert_int_equal(d[2].parent, TK_NO_PARENT);
  assert_int_equal(d[3].parent, 0);
}

/* Overlapping spans that do not nest: of two smallest candidates the first in order is
 * the parent, and the descriptor is not NESTED (the other candidate is off its chain);
 * the overlapping spans themselves are. */
static void test_overlapping_spans(void **state) {
  (void)state;
  TkDesc d[] = {
      desc("Main.lap", "Lap.hs", 1, 1, 1, 20),  /* p */
      desc("Main.lap", "Lap.hs", 1, 10, 1, 30), /* q: overlaps p */
      desc("Main.lap", "Lap.hs", 1, 12, 1, 15), /* in both */
      desc("Main.lap", "Lap.hs", 1, 13, 1, 14), /* in in: its chain has in, p, not q */
  };
  tk_link_descs(d, 4);
  assert_int_equal(d[0].parent, TK_NO_PARENT);
  assert_int_equal(d[1].parent, TK_NO_PARENT);
  assert_int_equal(d[2].parent, 0);
  assert_int_equal(d[3].parent, 2);
  assert_true(d[0].nested && d[1].nested);
  assert_false(d[2].nested);
  assert_false(d[3].nested);

  TkDesc r[] = {d[1], d[0], d[2]}; /* q first: q wins */
  tk_link_descs(r, 3);
  assert_int_equal(r[2].parent, 0);
  assert_false(r[2].nested);
}

/* Two bindings' code with the same note of go (one descriptor each, per owner): a
 * descriptor's parent is its own code's copy, and it is NESTED, since the other copy is
 * the same expression (the inline tick then handles it without the runtime). */
static void test_parents_of_two_owners(void **state) {
  (void)state;
  TkDesc d[] = {
      desc("Main.go", "Go.hs", 13, 5, 16, 42), /* 0: the thunk's copy, first in order */
      desc("Main.go", "Go.hs", 13, 5, 16, 42), /* 1: $wgo's */
      desc("Main.go", "Go.hs", 14, 9, 14, 13), /* 2: $wgo's, in both */
      desc("Main.go", "Go.hs", 14, 9, 14, 13), /* 3: the thunk's */
  };
  d[0].owner = d[3].owner = "sat_s3Ac";
  d[1].owner = d[2].owner = "Main.$wgo";
  tk_link_descs(d, 4);
  assert_int_equal(d[2].parent, 1);
  assert_int_equal(d[3].parent, 0);
  assert_true(d[2].nested && d[3].nested);
}

/* ---- one descriptor per function and note ----------------------------------------- */

static void test_dedup_per_function(void **state) {
  (void)state;
  Ticks *t = tk_new();
  char file[] = "Fact.hs"; /* changed below: the stage keeps its own copy */
  char fn[] = "Main.fact";
  CmmSrcNote body = note(file, 15, 1, 17, 30), rhs = note(file, 15, 10, 15, 25);
  bool made;
  assert_int_equal(tk_desc(t, fn, fn, &body, &made), 0);
  assert_true(made);
  assert_int_equal(tk_desc(t, fn, fn, &rhs, &made), 1);
  assert_true(made);
  CmmSrcNote again = note("Fact.hs", 15, 1, 17, 30); /* another note, the same span */
  assert_int_equal(tk_desc(t, "Main.fact", "Main.fact", &again, &made), 0);
  assert_false(made);
  assert_int_equal(tk_desc(t, "Main.go", "Main.go", &body, &made), 2); /* another function */
  assert_true(made);
  CmmSrcNote other = note("Other.hs", 15, 1, 17, 30); /* another file */
  assert_int_equal(tk_desc(t, fn, fn, &other, &made), 3);
  assert_true(made);
  assert_int_equal(tk_desc(t, "Main.go", fn, &body, &made), 4); /* fact's, in go's code */
  assert_true(made);
  assert_int_equal(tk_count(t), 5);

  file[0] = 'X', fn[0] = 'X';
  tk_link(t);
  assert_string_equal(tk_get(t, 0)->file, "Fact.hs");
  assert_string_equal(tk_get(t, 1)->function, "Main.fact");
  assert_ptr_equal(tk_get(t, 0)->function, tk_get(t, 1)->function); /* one copy per text */
  assert_ptr_equal(tk_get(t, 0)->file, tk_get(t, 2)->file);
  assert_int_equal(tk_get(t, 1)->parent, 0);
  assert_int_equal(tk_get(t, 2)->parent, TK_NO_PARENT); /* Main.go's own */
  assert_int_equal(tk_get(t, 3)->parent, TK_NO_PARENT);
  assert_true(tk_get(t, 1)->span.line1 == 15 && tk_get(t, 1)->span.col2 == 25);
  tk_free(t);
}

/* ---- the plan --------------------------------------------------------------------- */

/* A thunk whose scope nests under a binding's, a -fllvm continuation under the same
 * binding, and a thunk under no binding. */
static const char plan_dump[] =
    "[" PROC("sat_s1_entry")
        BLOCK("c10", "cA/cB/cX") TICK("M.hs:5:3-9") RET
    END_PROC NEXT PROC("_c1JV")
        BLOCK("c20", "cA/cB") RET
    END_PROC NEXT PROC("f_entry")
        BLOCK("c1", "cA") TICK("M.hs:(1,1)-(9,20)") GOTO("c2")
        BLOCK("c2", "cA/cB") RET
    END_PROC NEXT PROC("sat_s2_entry")
        BLOCK("c30", "cZ") RET
    END_PROC NEXT DATA("d_closure") "]\n";

static void test_plan(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(plan_dump, PARSE_ONLY);
  ScopeTree **trees = scopes_build_file(in.f, NULL, arena);
  TkPlan *plan = tk_plan(in.f, trees, arena);
  const CmmProc *f = &in.f->groups[0].decls[2].u.proc;
  assert_string_equal(f->label, "f_entry");
  assert_ptr_equal(tk_proc(plan, 0, 0)->binding, f); /* the thunk */
  assert_false(tk_proc(plan, 0, 0)->continuation);
  assert_ptr_equal(tk_proc(plan, 0, 1)->binding, f); /* the continuation */
  assert_true(tk_proc(plan, 0, 1)->continuation);
  assert_null(tk_proc(plan, 0, 2)->binding); /* a binding counts for itself */
  assert_null(tk_proc(plan, 0, 3)->binding); /* no binding above it */
  assert_null(tk_proc(plan, 0, 4)->binding); /* data */
  assert_true(tk_is_binding(f));
  assert_false(tk_is_binding(&in.f->groups[0].decls[0].u.proc));
  assert_false(tk_is_binding(&in.f->groups[0].decls[1].u.proc));
  parsed_free(in);
}

/* ---- which notes tick --------------------------------------------------------------- */

/* A binding whose entry block only checks the stack (no note), its body block with the
 * binding's note and nested notes, a return point with a note of its own, a thunk, and
 * a binding whose entry scope has no note at all (it allocates its HasCallStack
 * dictionary first), with a local `where` loop in its code and a helper GHC inlined. */
static const char ticks_dump[] =
    "[" PROC("f_entry")
        BLOCK("c0", "cA") GOTO("c1")
        BLOCK("c1", "cA") TICK("M.hs:(1,1)-(9,20)") TICK("M.hs:2:3-9") GOTO("c2")
        BLOCK("c2", "cA/cB") TICK("M.hs:2:5-7") TICK("M.hs:(1,1)-(9,20)") RET
    END_PROC NEXT PROC("sat_s1_entry")
        BLOCK("c10", "cA/cB/cX") TICK("M.hs:5:3-9") TICK("M.hs:5:4-6") RET
    END_PROC NEXT PROC("g_entry")
        BLOCK("c20", "cP") GOTO("c21")
        BLOCK("c21", "cP/cQ") S("//tick src<M.hs:(11,1)-(21,20)> \"M.g\"") GOTO("c22")
        BLOCK("c22", "cP/cQ") S("//tick src<M.hs:(13,5)-(16,42)> \"M.g\"")
        S("//tick src<M.hs:14:9-13> \"M.g.go\"") S("//tick src<M.hs:16:21-42> \"M.g.go\"")
        S("if (R1 == 0) goto c23; else goto c24;")
        BLOCK("c24", "cP/cQ") S("//tick src<M.hs:(18,5)-(18,30)> \"M.g\"")
        S("//tick src<M.hs:18:17-30> \"M.g.mix\"") GOTO("c22")
        BLOCK("c23", "cP/cQ") S("//tick src<M.hs:(20,5)-(20,30)> \"M.g\"")
        S("//tick src<M.hs:20:10-30> \"M.g.done\"") RET
    END_PROC NEXT PROC_WITH("h_entry", "[R1]", "(c52, label: block_c52_info rep: StackRep [] srt: Nothing)")
        BLOCK("c50", "cH") GOTO("c51")
        BLOCK("c51", "cH") GOTO("c53")
        BLOCK("c53", "cH") S("//tick src<M.hs:(31,5)-(31,40)> \"M.h\"")
        S("//tick src<M.hs:31:20-40> \"M.h.step\"")
        S("call M.f_info(R1) returns to c52, args: 8, res: 8, upd: 8;")
        BLOCK("c52", "cH") GOTO("c51")
    END_PROC "]\n";

static void test_which_notes_tick(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(ticks_dump, PARSE_ONLY);
  ScopeTree **trees = scopes_build_file(in.f, NULL, arena);
  TkPlan *plan = tk_plan(in.f, trees, arena);
  const CmmProc *f = &in.f->groups[0].decls[0].u.proc, *thunk = &in.f->groups[0].decls[1].u.proc;
  const CmmProc *g = &in.f->groups[0].decls[2].u.proc;
  const CmmSrcNote *binding = &f->blocks[1].stmts[0].u.tick, *nested = &f->blocks[1].stmts[1].u.tick;
  const CmmSrcNote *inner = &f->blocks[2].stmts[0].u.tick, *again = &f->blocks[2].stmts[1].u.tick;
  bool none[4] = {false}, c2[3] = {false, false, true};
  TkFnTicks all = {plan, TK_ALL, NULL, NULL};
  for (const CmmSrcNote *const *n = (const CmmSrcNote *[]){binding, nested, inner, again, NULL}; *n; n++)
    assert_true(tk_ticks(&all, 1, *n)); /* all: every note */
  TkFnTicks fn = {plan, TK_FUNCTIONS, tk_own_note(plan, f, trees[0], 0, 0, c2, arena),
                   tk_definition_blocks(f, arena)};
  assert_ptr_equal(fn.own, scopes_block_node(trees[0], 0, 0)->first);
  assert_true(tk_ticks(&fn, 1, binding)); /* the binding's own note, */
  assert_true(tk_ticks(&fn, 2, again));   /* wherever it stands */
  assert_false(tk_ticks(&fn, 1, nested)); /* nested notes do not */
  assert_false(tk_ticks(&fn, 2, inner));
  /* a function entered at block c2 (a return point) ticks the entry of the function
   * around its scope's note (2:5-7): the binding's, not the nested note */
  TkFnTicks ret = {plan, TK_FUNCTIONS, tk_own_note(plan, f, trees[0], 0, 2, c2, arena),
                    tk_definition_blocks(f, arena)};
  assert_true(tk_ticks(&ret, 2, again));
  assert_false(tk_ticks(&ret, 2, inner));
  /* a thunk: its entry scope's note, not what is nested in it */
  TkFnTicks th = {plan, TK_FUNCTIONS, tk_own_note(plan, thunk, trees[0], 1, 0, none, arena),
                   tk_definition_blocks(thunk, arena)};
  assert_true(tk_ticks(&th, 0, &thunk->blocks[0].stmts[0].u.tick));
  assert_false(tk_ticks(&th, 0, &thunk->blocks[0].stmts[1].u.tick));
  TkFnTicks nothing = {plan, TK_FUNCTIONS, NULL, tk_definition_blocks(f, arena)};
  assert_false(tk_ticks(&nothing, 1, binding)); /* no own note, not a definition: nothing */
  /* g's entry scope has no note: its own is the first its code ticks, g's whole span */
  const CmmSrcNote *g_own = tk_own_note(plan, g, trees[0], 2, 0, none, arena);
  assert_null(scopes_block_node(trees[0], 2, 0)->first);
  assert_ptr_equal(g_own, &g->blocks[1].stmts[0].u.tick);
  /* go's definition (named M.g by GHC) is go's entry; go's body notes are nested */
  const CmmSrcNote *go = &g->blocks[2].stmts[0].u.tick, *body = &g->blocks[2].stmts[1].u.tick;
  assert_true(tk_is_definition(plan, go));
  assert_string_equal(tk_note_name(plan, go), "M.g.go");
  assert_false(tk_is_definition(plan, body) || tk_is_definition(plan, g_own));
  /* mix's definition, in the loop's body (GHC inlined it there): only with all; done's,
   * inlined where no loop passes, is done's entry */
  const CmmSrcNote *mix = &g->blocks[3].stmts[0].u.tick, *done = &g->blocks[4].stmts[0].u.tick;
  assert_true(tk_is_definition(plan, mix) && tk_is_definition(plan, done));
  TkFnTicks gt = {plan, TK_FUNCTIONS, g_own, tk_definition_blocks(g, arena)};
  assert_true(tk_ticks(&gt, 1, g_own) && tk_ticks(&gt, 2, go) && tk_ticks(&gt, 4, done));
  assert_false(tk_ticks(&gt, 2, body) || tk_ticks(&gt, 3, mix) ||
               tk_ticks(&gt, 3, &g->blocks[3].stmts[1].u.tick) ||
               tk_ticks(&gt, 4, &g->blocks[4].stmts[1].u.tick));
  /* h's loop goes through a call and its return: step's definition is in its body */
  const CmmProc *h = &in.f->groups[0].decls[3].u.proc;
  bool *h_defs = tk_definition_blocks(h, arena);
  assert_true(tk_is_definition(plan, &h->blocks[2].stmts[0].u.tick));
  assert_true(h_defs[1] && !h_defs[2]); /* the header, a join; the body */
  parsed_free(in);
}

/* ---- ticks a loop repeats ------------------------------------------------------------ */

/* Five loops, each a header block ticking the loop's note and a body going back to it:
 * a quiet body; a body that calls C (unsafely: no Haskell code runs); a body that moves
 * Sp; (with --ticks=all) a body with a tick of its own; and a body with a safe foreign
 * call's first half.  Each proc is one function (no proc points but c0). */
#define LOOP(name, body)                                                      \
  PROC(name)                                                                  \
      BLOCK("c0", "cA") S("unwind Sp = Just Sp;") GOTO("c1")                  \
      BLOCK("c1", "cA") S("unwind Sp = Just Sp;") TICK("M.hs:(3,5)-(5,40)")   \
      S("if (R2 == 0) goto c3; else goto c2;")                                \
      BLOCK("c2", "cA") body S("R2 = R2 - 1;") GOTO("c1")                     \
      BLOCK("c3", "cA") RET END_PROC
static const char loops_dump[] =
    "[" LOOP("quiet_entry", S("R3 = R3 + R2;"))
    NEXT LOOP("ccall_entry", S("call \"ccall\" arg hints:  []  result hints:  [] g();"))
    NEXT LOOP("sp_entry", S("Sp = Sp + 8;"))
    NEXT LOOP("ticking_entry", TICK("M.hs:5:21-40"))
    NEXT LOOP("safe_entry", S("(_c1::I64) = call \"ccall\" arg hints:  [PtrHint,]  result hints:  [PtrHint] suspendThread(BaseReg, 0);")) "]\n";

static void test_loop_repeats(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(loops_dump, PARSE_ONLY);
  ScopeTree **trees = scopes_build_file(in.f, NULL, arena);
  TkPlan *plan = tk_plan(in.f, trees, arena);
  bool pp[4] = {true, false, false, false};
  for (uint32_t d = 0; d < 5; d++) {
    const CmmProc *p = &in.f->groups[0].decls[d].u.proc;
    TkFrames fr = tk_frames(p, arena);
    for (TkMode mode = TK_ALL; mode <= TK_FUNCTIONS; mode++) {
      TkFnTicks w = {plan, mode, tk_own_note(plan, p, trees[0], d, 0, pp, arena), tk_definition_blocks(p, arena)};
      TkRepeats r = tk_repeats(p, &fr, 0, pp, &w, arena);
      bool skips = d <= 1 || (d == 3 && mode == TK_FUNCTIONS); /* body's tick: not at all */
      assert_int_equal(tk_repeated(&r, 2, 1), skips); /* the back edge */
      assert_false(tk_repeated(&r, 0, 1));            /* the way in: the top is not known */
      if (skips) assert_ptr_equal(r.first[1].tick, &p->blocks[1].stmts[1]);
      else assert_null(r.first[1].tick);              /* no edge skips it: no split */
    }
  }
  parsed_free(in);
}

/* ---- where pops and rets go ------------------------------------------------------- */

static const char pops_dump[] =
    "[" PROC("f_entry")
        BLOCK("c1", "c1")
        S("Sp = Sp + 16;")
        S("Sp = Sp - 8;")
        S("Sp = R1;")
        S("R1 = Sp + 8;")
        S("Sp = Sp - -8;")
        S("I64[Sp] = 1;")
        S("Sp = (Sp + -32);")
        S("Sp = (Sp + 40);")
        RET
        BLOCK("c2", "c1")
        S("call (I64[R1])(R1) args: 8, res: 0, upd: 8;")
    END_PROC "]\n";

static void test_pops_and_rets(void **state) {
  (void)state;
  Parsed in = parse_dump(pops_dump, PARSE_ONLY);
  const CmmBlock *b = &in.f->groups[0].decls[0].u.proc.blocks[0];
  const CmmBlock *b2 = &in.f->groups[0].decls[0].u.proc.blocks[1];
  assert_int_equal(b->nstmts, 9);
  assert_true(tk_pops(&b->stmts[0]));  /* raises Sp */
  assert_false(tk_pops(&b->stmts[1])); /* Sp = Sp - N only lowers it */
  assert_true(tk_pops(&b->stmts[2]));  /* anything else may raise it */
  assert_false(tk_pops(&b->stmts[3])); /* not an assignment to Sp */
  assert_true(tk_pops(&b->stmts[4]));  /* minus a negative number raises it */
  assert_false(tk_pops(&b->stmts[5])); /* a store */
  assert_false(tk_pops(&b->stmts[6])); /* (Sp + -32), the plugin's spelling: a push */
  assert_true(tk_pops(&b->stmts[7]));  /* (Sp + 40) raises it */
  assert_false(tk_pops(&b->stmts[8])); /* the return */
  assert_false(tk_returns(&b->stmts[0]));
  assert_true(tk_returns(&b->stmts[8]));    /* to the continuation at Sp */
  assert_false(tk_returns(&b2->stmts[0])); /* enters a closure: a tail call */
  parsed_free(in);

  assert_false(tk_ret_on_entry(0, false)); /* a proc's entry is called */
  assert_true(tk_ret_on_entry(0, true));   /* a continuation's is returned to */
  assert_true(tk_ret_on_entry(3, false));  /* so is any other proc point */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_span_rule),
      cmocka_unit_test(test_parents_nest),
      cmocka_unit_test(test_parents_per_function_and_file),
      cmocka_unit_test(test_overlapping_spans),
      cmocka_unit_test(test_parents_of_two_owners),
      cmocka_unit_test(test_dedup_per_function),
      ARENA_TEST(test_which_notes_tick),
      ARENA_TEST(test_loop_repeats),
      ARENA_TEST(test_plan),
      ARENA_TEST(test_pops_and_rets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
