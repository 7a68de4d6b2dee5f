/* test_scopes.c — the tick-scope tree of a group and each scope's best note (scopes.c).
 *
 * Each test parses a small dump shaped like GHC 9.0.2's -ddump-cmm output and checks the
 * tree through the API; one test checks the --emit=scopes text. */
#include "support.h"

#include "scopes.h"

/* ---- helpers -------------------------------------------------------------------- */

static const ScopeNode *node(const ScopeTree *t, const char *text) {
  const ScopeNode *n = scopes_find(t, text);
  if (!n) fail_msg("no scope node '%s'", text);
  return n;
}

static void assert_note(const CmmSrcNote *n, const char *file, uint32_t l1, uint32_t c1,
                        uint32_t l2, uint32_t c2) {
  assert_non_null(n);
  assert_string_equal(n->file, file);
  assert_int_equal(n->line1, l1);
  assert_int_equal(n->col1, c1);
  assert_int_equal(n->line2, l2);
  assert_int_equal(n->col2, c2);
}

/* ---- the tree ------------------------------------------------------------------- */

/* A thunk proc (listed first, as GHC does) whose scope nests under another proc's, and
 * a scope whose parent path owns no blocks: shaped like fib_ack/O0 `fact`. */
static const char nesting[] =
    "[" PROC("sat_s1_entry")
        BLOCK("c10", "cA/cB/cX") TICK("M.hs:5:3-9") RET
    END_PROC NEXT PROC("f_entry")
        BLOCK("c1", "cA") TICK("M.hs:(1,1)-(9,20)") GOTO("c2")
        BLOCK("c2", "cA/cB") TICK("M.hs:5:1-20")
            S("if (R1 & 7 != 0) goto c3; else goto c4;")
        BLOCK("c3", "cA/cC/cD") RET
        BLOCK("c4", "cA/cB") TICK("M.hs:5:1-20") RET
    END_PROC "]\n";

static void test_nesting_across_procs(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(nesting, PARSE_ONLY);
  ScopeTree *t = scopes_build(in.f, &in.f->groups[0], NULL, arena);
  assert_int_equal(t->nnodes, 5);

  const ScopeNode *root = t->nodes[0], *a = node(t, "cA"), *ab = node(t, "cA/cB"),
                  *abx = node(t, "cA/cB/cX"), *acd = node(t, "cA/cC/cD");
  /* Nodes in order of first appearance, the root first. */
  assert_ptr_equal(t->nodes[1], abx);
  assert_ptr_equal(t->nodes[2], a);
  assert_ptr_equal(t->nodes[3], ab);
  assert_ptr_equal(t->nodes[4], acd);

  assert_string_equal(root->text, "global");
  assert_null(root->parent);
  assert_null(root->scope); /* no block names `global` */
  assert_int_equal(root->nblocks, 0);
  assert_int_equal(root->nchildren, 1);
  assert_ptr_equal(root->children[0], a);

  assert_ptr_equal(a->parent, root);
  assert_ptr_equal(ab->parent, a);
  assert_ptr_equal(abx->parent, ab); /* the thunk's scope, across procs */
  assert_ptr_equal(acd->parent, a);  /* cA/cC owns no blocks */
  assert_int_equal(a->nchildren, 2);
  assert_ptr_equal(a->children[0], ab);
  assert_ptr_equal(a->children[1], acd);
  assert_int_equal(ab->nchildren, 1);
  assert_ptr_equal(ab->children[0], abx);
  assert_int_equal(acd->depth, 2);
  assert_int_equal(abx->depth, 3);

  /* Blocks, by proc and in order. */
  assert_int_equal(ab->nblocks, 2);
  assert_string_equal(ab->blocks[0].block->label, "c2");
  assert_string_equal(ab->blocks[1].block->label, "c4");
  assert_string_equal(ab->blocks[0].proc->label, "f_entry");
  assert_string_equal(abx->blocks[0].proc->label, "sat_s1_entry");
  assert_ptr_equal(scopes_block_node(t, 0, 0), abx);
  assert_ptr_equal(scopes_block_node(t, 1, 2), acd);
  assert_ptr_equal(scopes_block_node(t, 1, 3), ab);

  /* Duplicates dropped: c4 repeats c2's note. */
  assert_int_equal(ab->nticks, 1);
  assert_int_equal(ab->nown, 1);
  assert_null(ab->ticks[0].from);

  /* Best notes: own, or inherited from the nearest ancestor that has one. */
  assert_null(root->best);
  assert_false(root->best_inherited);
  assert_note(a->best, "M.hs", 1, 1, 9, 20);
  assert_false(a->best_inherited);
  assert_note(ab->best, "M.hs", 5, 1, 5, 20);
  assert_note(abx->best, "M.hs", 5, 3, 5, 9);
  assert_note(acd->best, "M.hs", 1, 1, 9, 20);
  assert_true(acd->best_inherited);
  assert_int_equal(acd->nticks, 0);
  parsed_free(in);
}

/* Combined scopes hang under their first path (or its nearest prefix with blocks) and
 * copy the notes of the other paths' scopes that are not prefixes of the first. */
static const char combined[] =
    "[" PROC("g_entry")
        BLOCK("c1", "cP") TICK("M.hs:(1,1)-(5,1)") GOTO("c2")
        BLOCK("c2", "cP/cQ") TICK("M.hs:2:1-10") GOTO("c3")
        BLOCK("c3", "cP/cR/cS") TICK("M.hs:3:1-10") GOTO("c4")
        BLOCK("c4", "cP/cR") TICK("M.hs:3:1-30") GOTO("c5")
        BLOCK("c5", "(cP/cQ/cZ+cP/cR/cS/cT)") TICK("M.hs:2:3-4") GOTO("c6")
        BLOCK("c6", "(cP/cR+cP/cQ)") GOTO("c7")
        BLOCK("c7", "(cY+cP/cQ)") RET
    END_PROC "]\n";

static void test_combined_scope(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(combined, PARSE_ONLY);
  ScopeTree *t = scopes_build(in.f, &in.f->groups[0], "M.hs", arena);
  const ScopeNode *p = node(t, "cP"), *pq = node(t, "cP/cQ"), *pr = node(t, "cP/cR"),
                  *prs = node(t, "cP/cR/cS");

  /* First path cP/cQ/cZ owns no blocks: the parent is cP/cQ.  Copied: cP/cR/cS and
   * cP/cR (cP/cR/cS/cT owns no blocks; cP is a prefix of the first path). */
  const ScopeNode *c = node(t, "(cP/cQ/cZ+cP/cR/cS/cT)");
  assert_ptr_equal(c->parent, pq);
  assert_int_equal(c->nown, 1);
  assert_int_equal(c->nticks, 3);
  assert_note(c->ticks[0].note, "M.hs", 2, 3, 2, 4);
  assert_null(c->ticks[0].from);
  assert_note(c->ticks[1].note, "M.hs", 3, 1, 3, 10);
  assert_ptr_equal(c->ticks[1].from, prs);
  assert_note(c->ticks[2].note, "M.hs", 3, 1, 3, 30);
  assert_ptr_equal(c->ticks[2].from, pr);
  assert_note(c->best, "M.hs", 2, 3, 2, 4); /* minimal and first */

  /* The first path owns blocks itself; the notes of cP/cQ are copied and win. */
  const ScopeNode *c2 = node(t, "(cP/cR+cP/cQ)");
  assert_ptr_equal(c2->parent, pr);
  assert_int_equal(c2->nown, 0);
  assert_int_equal(c2->nticks, 1);
  assert_ptr_equal(c2->ticks[0].from, pq);
  assert_note(c2->best, "M.hs", 2, 1, 2, 10);
  assert_false(c2->best_inherited);

  /* No prefix of the first path owns blocks: the root. */
  const ScopeNode *c3 = node(t, "(cY+cP/cQ)");
  assert_ptr_equal(c3->parent, t->nodes[0]);
  assert_int_equal(c3->nticks, 2); /* cP/cQ's and cP's: cP is no prefix of cY */
  assert_ptr_equal(c3->ticks[0].from, pq);
  assert_ptr_equal(c3->ticks[1].from, p);
  assert_note(c3->best, "M.hs", 2, 1, 2, 10);
  parsed_free(in);
}

/* Best note: the first that contains no other, not the first. */
static const char specific[] =
    "[" PROC("h_entry")
        BLOCK("c1", "cA") TICK("M.hs:(1,1)-(3,20)") TICK("M.hs:2:5-9") TICK("M.hs:2:5")
            TICK("M.hs:3:1-4") GOTO("c2")
        BLOCK("c2", "cA/cB") TICK("M.hs:2:5-9") TICK("M.hs:2:5-7") GOTO("c3")
        BLOCK("c3", "cA/cC") TICK("M.hs:4:1-9") TICK("M.hs:4:5-20") RET
    END_PROC "]\n";

static void test_best_by_specificity(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(specific, PARSE_ONLY);
  ScopeTree *t = scopes_build(in.f, &in.f->groups[0], NULL, arena);
  assert_note(node(t, "cA")->best, "M.hs", 2, 5, 2, 5);
  assert_note(node(t, "cA/cB")->best, "M.hs", 2, 5, 2, 7); /* same start, ends earlier */
  assert_note(node(t, "cA/cC")->best, "M.hs", 4, 1, 4, 9); /* overlap is not containment */
  parsed_free(in);
}

/* Notes of the main file win over more specific ones from other files; a scope with
 * notes from other files only takes the best of those. */
static const char two_files[] =
    "[" PROC("k_entry")
        BLOCK("c1", "cA") TICK("M.hs:(1,1)-(9,9)") TICK("Lib.hs:4:2") TICK("M.hs:(1,1)-(9,9)")
            GOTO("c2")
        BLOCK("c2", "cA/cB") TICK("Lib.hs:(1,1)-(8,8)") TICK("Lib.hs:4:2-3") RET
    END_PROC "]\n";

static void test_main_file_preferred(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(two_files, PARSE_ONLY);
  /* M.hs: 2 notes (the duplicate counts), Lib.hs: 3. */
  assert_string_equal(scopes_main_file(in.f, arena), "Lib.hs");
  ScopeTree *t = scopes_build(in.f, &in.f->groups[0], "M.hs", arena);
  assert_string_equal(t->main_file, "M.hs");
  assert_int_equal(node(t, "cA")->nticks, 2);
  assert_note(node(t, "cA")->best, "M.hs", 1, 1, 9, 9);
  assert_note(node(t, "cA/cB")->best, "Lib.hs", 4, 2, 4, 3);
  assert_false(node(t, "cA/cB")->best_inherited);

  t = scopes_build(in.f, &in.f->groups[0], NULL, arena); /* the default: Lib.hs */
  assert_string_equal(t->main_file, "Lib.hs");
  assert_note(node(t, "cA")->best, "Lib.hs", 4, 2, 4, 2);
  parsed_free(in);
}

/* GHC's choice, where the lowering starts a block's line: the first note of the main
 * file, whatever its span; else the first of another file; else the parent's. */
static void test_first_note(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(specific, PARSE_ONLY);
  ScopeTree *t = scopes_build(in.f, &in.f->groups[0], NULL, arena);
  assert_note(node(t, "cA")->first, "M.hs", 1, 1, 3, 20); /* best is 2:5, the innermost */
  assert_note(node(t, "cA/cB")->first, "M.hs", 2, 5, 2, 9);
  parsed_free(in);

  in = parse_dump(two_files, PARSE_ONLY);
  t = scopes_build(in.f, &in.f->groups[0], "M.hs", arena);
  assert_note(node(t, "cA")->first, "M.hs", 1, 1, 9, 9);
  assert_note(node(t, "cA/cB")->first, "Lib.hs", 1, 1, 8, 8); /* no M.hs note: first of any */
  parsed_free(in);

  in = parse_dump(nesting, PARSE_ONLY);
  t = scopes_build(in.f, &in.f->groups[0], NULL, arena);
  assert_ptr_equal(node(t, "cA/cC/cD")->first, node(t, "cA")->first); /* inherited */
  assert_note(node(t, "cA/cB/cX")->first, "M.hs", 5, 3, 5, 9);
  parsed_free(in);
}

/* The default main file counts notes over all groups; ties go to the first seen. */
static void test_default_main_file(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(HEAD "[" PROC("a_entry") BLOCK("c1", "cA") TICK("A.hs:1:1") RET
                         END_PROC "]\n" HEAD "[" PROC("b_entry") BLOCK("c2", "cB")
                         TICK("B.hs:1:1") TICK("B.hs:1:2") RET END_PROC "]\n",
                         PARSE_ONLY);
  assert_int_equal(in.f->ngroups, 2);
  assert_string_equal(scopes_main_file(in.f, arena), "B.hs");
  parsed_free(in);

  in = parse_dump("[" PROC("a_entry") BLOCK("c1", "cA") TICK("A.hs:1:1") TICK("B.hs:1:1")
                  TICK("B.hs:1:2") TICK("A.hs:1:2") RET END_PROC "]\n",
                  PARSE_ONLY);
  assert_string_equal(scopes_main_file(in.f, arena), "A.hs");
  parsed_free(in);

  in = parse_dump("[" PROC("a_entry") BLOCK("c1", "cA") RET END_PROC "]\n", PARSE_ONLY);
  assert_null(scopes_main_file(in.f, arena));
  ScopeTree *t = scopes_build(in.f, &in.f->groups[0], NULL, arena);
  assert_null(t->main_file);
  assert_null(node(t, "cA")->best);
  assert_false(node(t, "cA")->best_inherited);
  parsed_free(in);
}

/* Blocks in `global` (the -fllvm stubs) belong to the root; a root note covers all. */
static const char global_blocks[] =
    "[" PROC("m_entry")
        BLOCK("u1", "global") TICK("M.hs:1:1-5") GOTO("c2")
        BLOCK("c2", "cA") RET
    END_PROC NEXT PROC("n_entry")
        BLOCK("u3", "global") RET
    END_PROC "]\n";

static void test_global_root(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(global_blocks, PARSE_ONLY);
  ScopeTree *t = scopes_build(in.f, &in.f->groups[0], NULL, arena);
  const ScopeNode *root = t->nodes[0];
  assert_ptr_equal(node(t, "global"), root);
  assert_int_equal(t->nnodes, 2);
  assert_non_null(root->scope);
  assert_int_equal(root->scope->npaths, 0);
  assert_int_equal(root->nblocks, 2);
  assert_ptr_equal(scopes_block_node(t, 1, 0), root);
  assert_note(root->best, "M.hs", 1, 1, 1, 5);
  assert_false(root->best_inherited);
  assert_ptr_equal(node(t, "cA")->parent, root);
  assert_note(node(t, "cA")->best, "M.hs", 1, 1, 1, 5);
  assert_true(node(t, "cA")->best_inherited);
  parsed_free(in);
}

/* ---- --emit=scopes -------------------------------------------------------------- */

/* What --emit=scopes prints for group g. */
static char *print_group(Parsed in, uint32_t g, Arena *arena) {
  Capture cap;
  capture_begin(&cap);
  ScopeTree *t = scopes_build(in.f, &in.f->groups[g], NULL, arena);
  scopes_print(cap.out, in.f, &in.f->groups[g], t);
  return capture_end(&cap);
}

static void test_print(void **state) {
  Arena *arena = *state;
  Parsed in = parse_dump(HEAD "[" DATA("x_closure") "]\n" HEAD "[" PROC("sat_s1_entry")
                         BLOCK("c10", "cA/cB/cX") TICK("M.hs:5:3-9") RET END_PROC NEXT
                         PROC("f_entry")
                         BLOCK("c1", "cA") TICK("M.hs:(1,1)-(9,20)") GOTO("c2")
                         BLOCK("c2", "cA/cB") TICK("M.hs:5:1-20") TICK("M.hs:5:1") GOTO("c3")
                         BLOCK("c3", "(cA/cC+cA/cB)") GOTO("c4")
                         BLOCK("c4", "cA/cB") RET END_PROC NEXT DATA("f_closure") "]\n",
                         PARSE_ONLY);
  char *text = print_group(in, 0, arena);
  assert_string_equal(text, "group 1: (no code)\n");
  free(text);

  text = print_group(in, 1, arena);
  assert_string_equal(text,
                      "group 2: sat_s1_entry f_entry\n"
                      "  global\n"
                      "    cA  best: src<M.hs:(1,1)-(9,20)>\n"
                      "      blocks: f_entry: c1\n"
                      "      ticks: src<M.hs:(1,1)-(9,20)>\n"
                      "      cA/cB  best: src<M.hs:5:1>\n"
                      "        blocks: f_entry: c2 c4\n"
                      "        ticks: src<M.hs:5:1-20> src<M.hs:5:1>\n"
                      "        cA/cB/cX  best: src<M.hs:5:3-9>\n"
                      "          blocks: sat_s1_entry: c10\n"
                      "          ticks: src<M.hs:5:3-9>\n"
                      "      (cA/cC+cA/cB)  best: src<M.hs:5:1>\n"
                      "        blocks: f_entry: c3\n"
                      "        copied from cA/cB: src<M.hs:5:1-20> src<M.hs:5:1>\n");
  free(text);
  parsed_free(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      ARENA_TEST(test_nesting_across_procs),
      ARENA_TEST(test_combined_scope),
      ARENA_TEST(test_best_by_specificity),
      ARENA_TEST(test_first_note),
      ARENA_TEST(test_main_file_preferred),
      ARENA_TEST(test_default_main_file),
      ARENA_TEST(test_global_root),
      ARENA_TEST(test_print),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
