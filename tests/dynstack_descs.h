/* dynstack_descs.h — the tick descriptors that the dynamic stack's tests tick, as the
 * lowering emits a module's (below).  Each test program includes it once, in its test
 * file, and so holds them in its strobe_ticks section, and only them (test_tick_descs
 * checks it); dynstack_support.c does not include it. */
#ifndef STROBE_TESTS_DYNSTACK_DESCS_H
#define STROBE_TESTS_DYNSTACK_DESCS_H

#include "dynstack_support.h"

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
/* -O1's inventory: the let of its where-bound add evaluates parseEntry (inlined, strict)
 * first, then the let's code, all in one frame */
TICK_DESC(inv, NULL, NESTED, "Main.inventory", "Inv.hs", 24, 1, 26, 83);
TICK_DESC(inv_add, NULL, NESTED, "Main.inventory.add", "Inv.hs", 26, 5, 26, 83);
TICK_DESC(inv_pat, NULL, NESTED, "Main.inventory.add.(...)", "Inv.hs", 26, 35, 26, 46);
TICK_DESC(parse_entry, NULL, NESTED, "Main.parseEntry", "Inv.hs", 15, 1, 21, 20);
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
    &loop_a, &loop_b, &lap, &lap_p, &lap_q, &lap_x, &lap_in, &lap_in_a, &lap_y, &inv,
    &inv_add, &inv_pat, &parse_entry,
};
static const StrobeTickDesc *const other_module_descs[] = {
    &fact_body_too, &walk_let_too, &walk_x_too, &walk_y_too,
};
enum {
  NMODULE = sizeof module_descs / sizeof *module_descs,
  NOTHER = sizeof other_module_descs / sizeof *other_module_descs,
  NDESCS = NMODULE + NOTHER, /* all of the section */
};

#endif
