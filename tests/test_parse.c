/* test_parse.c — the parser (parse.c): GHC's printing precedence, operand classes,
 * block-versus-foreign labels, label differences in statics, and print∘parse.
 *
 * Expressions go through cmm_parse_expr and are checked as trees and as printed text;
 * label resolution and statics need whole dumps, parsed with cmm_parse. */
#include "support.h"

#include <math.h>

/* ---- helpers -------------------------------------------------------------------- */

/* Parses text as one expression, which must parse without error. */
static CmmExpr *expr(Arena *a, const char *text) {
  ParsedExpr r = parse_one_expr(a, text, PARSE_ONLY);
  if (!r.ok) fail_msg("'%s' did not parse: %s", text, r.diag);
  return r.e;
}

/* text is not an expression. */
static void no_expr(Arena *a, const char *text) {
  if (parse_one_expr(a, text, PARSE_ONLY).e) fail_msg("'%s' parsed", text);
}

static char *print_expr(const CmmExpr *e) {
  Capture cap;
  capture_begin(&cap);
  cmm_print_expr(cap.out, e);
  return capture_end(&cap);
}

static void assert_prints(const CmmExpr *e, const char *want) {
  char *got = print_expr(e);
  if (strcmp(got, want) != 0) fail_msg("printed '%s', expected '%s'", got, want);
  free(got);
}

/* e is the MachOp op with n operands, written infix (not %MO_…). */
static CmmExpr *mo(CmmExpr *e, int op, unsigned n) {
  assert_non_null(e);
  assert_int_equal(e->kind, CMM_E_MACHOP);
  if (e->u.mo.op != op)
    fail_msg("MachOp %s, expected %s", cmm_machops[e->u.mo.op].name, cmm_machops[op].name);
  assert_int_equal(e->u.mo.nargs, n);
  return e;
}
static CmmExpr *arg(CmmExpr *e, unsigned i) { return e->u.mo.args[i]; }

static void is_int(const CmmExpr *e, uint64_t mag, bool neg, unsigned width) {
  assert_int_equal(e->kind, CMM_E_INT);
  assert_true(e->u.i.mag == mag);
  assert_int_equal(e->u.i.neg, neg);
  assert_int_equal(e->type.width, width);
}

static void is_global(const CmmExpr *e, int reg) {
  assert_int_equal(e->kind, CMM_E_GLOBAL);
  assert_int_equal(e->u.global.reg, reg);
}

static void is_local(const CmmExpr *e, const char *name, int cat, unsigned width) {
  assert_int_equal(e->kind, CMM_E_LOCAL);
  assert_string_equal(e->u.local.name, name);
  assert_int_equal(e->type.cat, cat);
  assert_int_equal(e->type.width, width);
}

static void is_label(const CmmExpr *e, const char *name, int64_t offset) {
  assert_int_equal(e->kind, CMM_E_LABEL);
  assert_string_equal(e->u.label.name, name);
  assert_true(e->u.label.offset == offset);
}

static CmmExpr *is_load(CmmExpr *e, int cat, unsigned width) {
  assert_int_equal(e->kind, CMM_E_LOAD);
  assert_int_equal(e->type.cat, cat);
  assert_int_equal(e->type.width, width);
  return e->u.load.addr;
}

/* (r + k), a register offset, means r + k and r - -k (SYNTAX §8.7). */
static bool same_regoff(const CmmExpr *ro, const CmmExpr *m);

/* Two trees mean the same (locations aside): a register offset equals the sum it
 * prints as, and a named MachOp the infix one GHC prints for it. */
static bool same_tree(const CmmExpr *x, const CmmExpr *y) {
  if (x->kind == CMM_E_REGOFF && y->kind == CMM_E_MACHOP) return same_regoff(x, y);
  if (y->kind == CMM_E_REGOFF && x->kind == CMM_E_MACHOP) return same_regoff(y, x);
  if (x->kind != y->kind || x->type.cat != y->type.cat || x->type.width != y->type.width)
    return false;
  switch (x->kind) {
  case CMM_E_INT: return x->u.i.mag == y->u.i.mag && x->u.i.neg == y->u.i.neg;
  case CMM_E_FLOAT: return strcmp(x->u.f.spelling, y->u.f.spelling) == 0;
  case CMM_E_LABEL:
  case CMM_E_LABEL_DIFF:
    return strcmp(x->u.label.name, y->u.label.name) == 0 && x->u.label.offset == y->u.label.offset &&
           (x->kind == CMM_E_LABEL || strcmp(x->u.label.name2, y->u.label.name2) == 0);
  case CMM_E_LOAD: return same_tree(x->u.load.addr, y->u.load.addr);
  case CMM_E_GLOBAL: return x->u.global.reg == y->u.global.reg;
  case CMM_E_LOCAL: return strcmp(x->u.local.name, y->u.local.name) == 0;
  case CMM_E_REGOFF:
    return x->u.regoff.offset == y->u.regoff.offset && same_tree(x->u.regoff.reg, y->u.regoff.reg);
  case CMM_E_MACHOP:
    if (x->u.mo.op != y->u.mo.op || x->u.mo.nargs != y->u.mo.nargs) return false;
    if (x->u.mo.named && y->u.mo.named && (x->u.mo.w != y->u.mo.w || x->u.mo.w2 != y->u.mo.w2))
      return false;
    for (unsigned i = 0; i < x->u.mo.nargs; i++)
      if (!same_tree(x->u.mo.args[i], y->u.mo.args[i])) return false;
    return true;
  default: return false;
  }
}

static bool same_regoff(const CmmExpr *ro, const CmmExpr *m) {
  if (m->u.mo.nargs != 2 || (m->u.mo.op != CMM_MO_ADD && m->u.mo.op != CMM_MO_SUB)) return false;
  const CmmExpr *k = m->u.mo.args[1];
  if (k->kind != CMM_E_INT || !same_tree(ro->u.regoff.reg, m->u.mo.args[0])) return false;
  int64_t v = k->u.i.neg ? -(int64_t)k->u.i.mag : (int64_t)k->u.i.mag;
  return ro->u.regoff.offset == (m->u.mo.op == CMM_MO_ADD ? v : -v);
}

/* ---- precedence ------------------------------------------------------------------- */

/* loops/O1: `(h xor w) * K`, the bitwise operator binding tighter than `*`. */
static void test_xor_tighter_than_mul(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "I64[Sp + 16] ^ I64[R1 + 7] * 1099511628211");
  mo(e, CMM_MO_MUL, 2);
  CmmExpr *x = mo(arg(e, 0), CMM_MO_XOR, 2);
  is_load(arg(x, 0), CMM_BITS, 64);
  is_load(arg(x, 1), CMM_BITS, 64);
  is_int(arg(e, 1), 1099511628211u, false, 64);
  assert_prints(e, "I64[Sp + 16] ^ I64[R1 + 7] * 1099511628211");
}

/* A run of one bitwise operator reads left-associated: every grouping has its value. */
static void test_bitwise_left_assoc(void **state) {
  Arena *a = *state;
  const char *text = "(_s5l6::I64 << 5) | (_s5l6::I64 >> 59) | 3 | R1";
  CmmExpr *e = expr(a, text);
  mo(e, CMM_MO_OR, 2);
  is_global(arg(e, 1), CMM_REG_R1);
  CmmExpr *or2 = mo(arg(e, 0), CMM_MO_OR, 2);
  is_int(arg(or2, 1), 3, false, 64);
  CmmExpr *or1 = mo(arg(or2, 0), CMM_MO_OR, 2);
  mo(arg(or1, 0), CMM_MO_SHL, 2);
  mo(arg(or1, 1), CMM_MO_U_SHR, 2);
  assert_prints(e, text);
}

/* Note [Bitwise chains] (parse_expr.c): a bare run of `& | ^` and prefixes is GHC's text for
 * every tree that flattens to it.  strobe reads the runs whose trees all have one value
 * and refuses the others (a refusal: strobec's exit status 2).  Parentheses group. */
static void test_bitwise_chains(void **state) {
  Arena *a = *state;
  static const struct { const char *text, *prints; } accepted[] = {
      {"R1 & R2 & R3", NULL},
      {"R1 ^ R2 ^ R3 ^ R4", NULL},
      {"R1 & ~R2", NULL},               /* a prefix on the last operand */
      {"R1 | R2 | -R3", NULL},
      {"~R1 ^ R2", NULL},               /* ~(x ^ y) is ~x ^ y */
      {"R1 ^ ~R2 ^ ~~R3", NULL},
      {"(~R1) & R2", NULL},             /* parentheses group */
      {"~(R1 & R2)", NULL},
      {"(R1 | R2) & R3", NULL},
      {"R1 | (R2 & R3)", NULL},
      {"((R1 | R2) & R3) | 1", NULL},
      {"R1 & 7 != 0", NULL},            /* a comparison ends the run */
      {"R1 & ~R2 + 1", NULL},           /* so does +: ~ covers R2 only */
      {"R1 & (-8)", NULL},              /* GHC's negative literal */
      {"R1 & -8", "R1 & (-8)"},
  };
  for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
    ParsedExpr r = parse_one_expr(a, accepted[i].text, PARSE_ONLY);
    if (!r.ok) fail_msg("'%s' was not accepted: %s", accepted[i].text, r.diag);
    char *t = print_expr(r.e);
    const char *want = accepted[i].prints ? accepted[i].prints : accepted[i].text;
    if (strcmp(t, want) != 0) fail_msg("'%s' printed as '%s'", accepted[i].text, t);
    free(t);
  }
  static const struct { const char *text; unsigned col; const char *what; } refused[] = {
      /* GHC's own text: loops/O1 and a bit reversal
         (lit-tests/cmm/Inputs/bitwise/BitRev.dump-cmm-raw) */
      {"(_s5l6::I64 << 5) | (_s5l6::I64 >> 59) & 18446744073709551612 | 1", 40,
       "both 'x | (y & z)' and '(x | y) & z' as 'x | y & z'"},
      {"(_s1Po::I64 << 1) | _s1Pn::I64 & 1", 32, "'x | (y & z)'"},
      {"I64[Sp + 8] & I64[R1 + 7] ^ 255", 27, "both 'x & (y ^ z)' and '(x & y) ^ z'"},
      {"R1 ^ R2 | R3", 9, "'(x ^ y) | z'"},
      {"R1 & R2 & R3 | R4", 14, "'x & y | z'"},
      /* complement (x .&. y) and complement x .&. y both print `~R2 & R3` */
      {"~R2 & R3", 1, "both '(~x) & y' and '~(x & y)' as '~x & y'"},
      {"R1 & ~R2 & R3", 6, "'~(x & y)'"},
      {"-R1 ^ R2", 1, "both '(-x) ^ y' and '-(x ^ y)'"},
      {"~-R1 ^ R2", 1, "'~x ^ y'"},
      {"-8 & R1", 1, "'(-x) & y'"},      /* a bare -8 is GHC's prefix - on 8 */
      {"R1 ^ ~R2 | R3", 10, "'x ^ y | z'"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    ParsedExpr r = parse_one_expr(a, refused[i].text, PARSE_ONLY);
    char at[32];
    snprintf(at, sizeof at, "expr:1:%u: error: ", refused[i].col);
    if (r.e || r.errors != 1 || r.refusals != 1 || !strstr(r.diag, at) ||
        !strstr(r.diag, "ambiguous bitwise expression: GHC prints ") ||
        !strstr(r.diag, refused[i].what))
      fail_msg("'%s': expected a refusal at column %u naming %s, got: %s", refused[i].text,
               refused[i].col, refused[i].what, r.diag);
  }
}

/* `R1 & 7 != 0` is `(R1 & 7) != 0`: the opposite of C. */
static void test_and_tighter_than_compare(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "R1 & 7 != 0");
  mo(e, CMM_MO_NE, 2);
  CmmExpr *and = mo(arg(e, 0), CMM_MO_AND, 2);
  is_global(arg(and, 0), CMM_REG_R1);
  is_int(arg(and, 1), 7, false, 64);
  is_int(arg(e, 1), 0, false, 64);
  assert_prints(e, "R1 & 7 != 0");
}

static void test_levels(void **state) {
  Arena *a = *state;
  /* + - are left-associative */
  CmmExpr *e = expr(a, "R1 - R2 - R3");
  mo(arg(mo(e, CMM_MO_SUB, 2), 0), CMM_MO_SUB, 2);
  is_global(arg(e, 1), CMM_REG_R3);
  e = expr(a, "R1 - (R2 - R3)");
  mo(arg(mo(e, CMM_MO_SUB, 2), 1), CMM_MO_SUB, 2);
  assert_prints(e, "R1 - (R2 - R3)");
  /* * / % bind tighter than + -; / and % are the unsigned MachOps */
  e = expr(a, "R1 + R2 * R3 / R4 % R5");
  mo(e, CMM_MO_ADD, 2);
  CmmExpr *rem = mo(arg(e, 1), CMM_MO_U_REM, 2);
  CmmExpr *quot = mo(arg(rem, 0), CMM_MO_U_QUOT, 2);
  mo(arg(quot, 0), CMM_MO_MUL, 2);
  e = expr(a, "(R1 + R2) * R3");
  mo(arg(mo(e, CMM_MO_MUL, 2), 0), CMM_MO_ADD, 2);
  assert_prints(e, "(R1 + R2) * R3");
  /* a comparison's operands are sums; a shift is at the comparison level */
  e = expr(a, "Hp + 16 > HpLim");
  mo(arg(mo(e, CMM_MO_U_GT, 2), 0), CMM_MO_ADD, 2);
  e = expr(a, "R1 << 3 + 1");
  mo(arg(mo(e, CMM_MO_SHL, 2), 1), CMM_MO_ADD, 2);
  e = expr(a, "(R1 < R2) == 0");
  mo(arg(mo(e, CMM_MO_EQ, 2), 0), CMM_MO_U_LT, 2);
  assert_prints(e, "(R1 < R2) == 0");
  e = expr(a, "R1 <= R2");
  mo(e, CMM_MO_U_LE, 2);
  e = expr(a, "R1 >= R2");
  mo(e, CMM_MO_U_GE, 2);
}

static void test_comparison_chain_rejected(void **state) {
  Arena *a = *state;
  ParsedExpr r = parse_one_expr(a, "R1 < R2 < R3", PARSE_ONLY);
  assert_null(r.e);
  assert_int_equal(r.errors, 1);
  no_expr(a, "R1 << 2 == 0");
  assert_non_null(expr(a, "(R1 << 2) == 0"));
}

/* ---- register offsets ------------------------------------------------------------- */

/* `(Sp + 8) - 48`: GHC prints a nested CmmRegOff in parentheses. */
static void test_regoff(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "(Sp + 8) - 48 < SpLim");
  mo(e, CMM_MO_U_LT, 2);
  is_global(arg(e, 1), CMM_REG_SPLIM);
  CmmExpr *sub = mo(arg(e, 0), CMM_MO_SUB, 2);
  CmmExpr *ro = arg(sub, 0);
  assert_int_equal(ro->kind, CMM_E_REGOFF);
  is_global(ro->u.regoff.reg, CMM_REG_SP);
  assert_true(ro->u.regoff.offset == 8);
  is_int(arg(sub, 1), 48, false, 64);
  assert_prints(e, "(Sp + 8) - 48 < SpLim");

  e = expr(a, "(Sp + -40) >= SpLim");
  ro = arg(mo(e, CMM_MO_U_GE, 2), 0);
  assert_int_equal(ro->kind, CMM_E_REGOFF);
  assert_true(ro->u.regoff.offset == -40);
  assert_prints(e, "(Sp + -40) >= SpLim");

  e = expr(a, "P64[(_s1Jv::P64 + 16)]");
  ro = is_load(e, CMM_GCPTR, 64);
  assert_int_equal(ro->kind, CMM_E_REGOFF);
  is_local(ro->u.regoff.reg, "_s1Jv", CMM_GCPTR, 64);
  assert_true(ro->u.regoff.offset == 16);

  /* At the top GHC prints a register offset as a plain sum. */
  e = expr(a, "(Sp + -40)");
  assert_int_equal(e->kind, CMM_E_REGOFF);
  assert_prints(e, "Sp - 40");
  /* Not register offsets: a sum of two registers, a literal of another width, a label. */
  mo(expr(a, "(Sp + R1)"), CMM_MO_ADD, 2);
  mo(expr(a, "(_x::I32 + 8 :: W32)"), CMM_MO_ADD, 2);
  mo(expr(a, "(stg_ap_pp_info + 8)"), CMM_MO_ADD, 2);
}

/* ---- prefix operators and negative literals ---------------------------------------- */

static void test_prefix(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "-I64[R1 + 7]");
  CmmExpr *addr = is_load(arg(mo(e, CMM_MO_S_NEG, 1), 0), CMM_BITS, 64);
  mo(addr, CMM_MO_ADD, 2);
  assert_prints(e, "-I64[R1 + 7]");

  e = expr(a, "~R1");
  is_global(arg(mo(e, CMM_MO_NOT, 1), 0), CMM_REG_R1);
  assert_prints(e, "~R1");

  /* the prefixes are the tightest of all (`~R1 & 7` is ambiguous: test_bitwise_chains) */
  e = expr(a, "~R1 ^ 7");
  mo(arg(mo(e, CMM_MO_XOR, 2), 0), CMM_MO_NOT, 1);
  e = expr(a, "-_s1::I64 + 1");
  mo(arg(mo(e, CMM_MO_ADD, 2), 0), CMM_MO_S_NEG, 1);
  e = expr(a, "-(R1 + R2)");
  mo(arg(mo(e, CMM_MO_S_NEG, 1), 0), CMM_MO_ADD, 2);
  assert_prints(e, "-(R1 + R2)");
}

/* GHC prints a prefix applied to a prefix glued (`~` <> pprExpr9 x): `~~R1`, `-~R1`.
 * Such a run has no label suffix, so it is not a label (SYNTAX §8.1); strobe's own
 * printer writes `~(~R1)`, which must read back too. */
static void test_prefix_of_prefix(void **state) {
  Arena *a = *state;
  /* GHC prints a prefix on a prefix glued (`~~R1`); strobe reads and prints it so. */
  CmmExpr *e = expr(a, "~(~R1)");
  mo(arg(mo(e, CMM_MO_NOT, 1), 0), CMM_MO_NOT, 1);
  assert_prints(e, "~~R1");
  e = expr(a, "~~R1");
  mo(arg(mo(e, CMM_MO_NOT, 1), 0), CMM_MO_NOT, 1);
  assert_prints(e, "~~R1");
  e = expr(a, "-~R1");
  mo(arg(mo(e, CMM_MO_S_NEG, 1), 0), CMM_MO_NOT, 1);
  assert_prints(e, "-~R1");
}

static void test_negative_literals(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "_s1Ji::P64 & (-8)");
  mo(e, CMM_MO_AND, 2);
  is_local(arg(e, 0), "_s1Ji", CMM_GCPTR, 64);
  is_int(arg(e, 1), 8, true, 64);
  assert_prints(e, "_s1Ji::P64 & (-8)");

  e = expr(a, "(-9223372036854775808)");
  is_int(e, 9223372036854775808u, true, 64);
  assert_prints(e, "(-9223372036854775808)");
  e = expr(a, "18446744073709551615");
  is_int(e, UINT64_MAX, false, 64);
  e = expr(a, "-(-8)");
  is_int(arg(mo(e, CMM_MO_S_NEG, 1), 0), 8, true, 64);
  assert_prints(e, "-(-8)");
  e = expr(a, "(-0)");
  is_int(e, 0, false, 64); /* no negative zero */

  no_expr(a, "18446744073709551616");
  no_expr(a, "(-9223372036854775809)");
}

/* ---- literals --------------------------------------------------------------------- */

static void test_labels(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "stg_INTLIKE_closure+289");
  is_label(e, "stg_INTLIKE_closure", 289);
  assert_int_equal(e->u.label.kind, CMM_LABEL_FOREIGN);
  assert_prints(e, "stg_INTLIKE_closure+289");
  is_label(expr(a, "GHC.Num.-_info"), "GHC.Num.-_info", 0);
  is_label(expr(a, "GHC.Types.[]_closure+1"), "GHC.Types.[]_closure", 1);
  is_label(expr(a, "GHC.Show.$fShow(,)2_closure+1"), "GHC.Show.$fShow(,)2_closure", 1);
  is_label(expr(a, "$trModule2_r1Gl_closure+1"), "$trModule2_r1Gl_closure", 1);
  is_label(expr(a, "(,)_con_info"), "(,)_con_info", 0);
  is_label(expr(a, ":Main.main_info"), ":Main.main_info", 0);
  is_label(expr(a, "-->_r1Ab_closure"), "-->_r1Ab_closure", 0); /* not a prefix minus */
  is_label(expr(a, "~~>_r2_closure+2"), "~~>_r2_closure", 2);
  is_label(expr(a, "Main.main1_closure"), "Main.main1_closure", 0);
  is_label(expr(a, "foo_closure-8"), "foo_closure", -8);
  /* gc registers print like labels, but they are registers */
  is_global(expr(a, "stg_gc_enter_1"), CMM_REG_GCENTER1);

  /* a label with an offset, nested under an operator, is parenthesised */
  e = expr(a, "(stg_INTLIKE_closure+289) + 8");
  is_label(arg(mo(e, CMM_MO_ADD, 2), 0), "stg_INTLIKE_closure", 289);
  assert_prints(e, "(stg_INTLIKE_closure+289) + 8");

  /* outside statics a `-` between labels is part of one name */
  e = expr(a, "fact_rgr_closure-block_c1JV_info");
  is_label(e, "fact_rgr_closure-block_c1JV_info", 0);
}

static void test_named_machops(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "%MO_UU_Conv_W8_W64(I8[R2])");
  mo(e, CMM_MO_UU_CONV, 1);
  assert_true(e->u.mo.named);
  assert_int_equal(e->u.mo.w, 8);
  assert_int_equal(e->u.mo.w2, 64);
  is_load(arg(e, 0), CMM_BITS, 8);
  assert_prints(e, "%MO_UU_Conv_W8_W64(I8[R2])");

  e = expr(a, "%MO_SS_Conv_W64_W16(I64[R1 + 7])");
  mo(e, CMM_MO_SS_CONV, 1);
  assert_int_equal(e->u.mo.w, 64);
  assert_int_equal(e->u.mo.w2, 16);

  e = expr(a, "%MO_S_Lt_W64(I64[R1 + 7], 11)");
  mo(e, CMM_MO_S_LT, 2);
  assert_true(e->u.mo.named);
  assert_int_equal(e->u.mo.w, 64);
  assert_int_equal(e->u.mo.w2, 64);

  e = expr(a, "%MO_F_Mul_W64(%MO_F_Mul_W64(_s4qw::F64,\n    3.141592653589793 :: W64),\n  _s4qw::F64)");
  mo(arg(mo(e, CMM_MO_F_MUL, 2), 0), CMM_MO_F_MUL, 2);
  assert_prints(e, "%MO_F_Mul_W64(%MO_F_Mul_W64(_s4qw::F64, 3.141592653589793 :: W64), _s4qw::F64)");

  /* a MachOp that has an infix form prints as GHC prints it, whatever its width */
  e = expr(a, "%MO_Add_W32(_x::I32, 1 :: W32)");
  mo(e, CMM_MO_ADD, 2);
  assert_true(e->u.mo.named);
  assert_int_equal(e->u.mo.w, 32);
  assert_prints(e, "_x::I32 + 1 :: W32");

  no_expr(a, "%MO_UU_Conv_W8(I8[R2])");   /* one width short */
  no_expr(a, "%MO_S_Lt_W7(R1, R2)");      /* no such width */
  no_expr(a, "%MO_S_Lt_W64(R1)");         /* arity */
}

static void test_numbers(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "1.0e-12 :: W64");
  assert_int_equal(e->kind, CMM_E_FLOAT);
  assert_int_equal(e->type.cat, CMM_FLOAT);
  assert_int_equal(e->type.width, 64);
  assert_string_equal(e->u.f.spelling, "1.0e-12");
  assert_true(fabs(e->u.f.value - 1.0e-12) < 1e-27);
  assert_prints(e, "1.0e-12 :: W64");

  e = expr(a, "0.5 :: W32");
  assert_int_equal(e->kind, CMM_E_FLOAT);
  assert_int_equal(e->type.width, 32);
  assert_true(e->u.f.value == 0.5);

  e = expr(a, "3.141592653589793 :: W64");
  assert_prints(e, "3.141592653589793 :: W64");

  e = expr(a, "Infinity :: W64");
  assert_int_equal(e->kind, CMM_E_FLOAT);
  assert_true(isinf(e->u.f.value));
  e = expr(a, "NaN :: W32");
  assert_true(isnan(e->u.f.value));
  /* GHC prints a negative float bare, named ones too: a literal, not MO_S_Neg. */
  e = expr(a, "-Infinity :: W64");
  assert_int_equal(e->kind, CMM_E_FLOAT);
  assert_true(isinf(e->u.f.value) && e->u.f.value < 0);
  assert_prints(e, "-Infinity :: W64");
  e = expr(a, "-Infinity :: W32");
  assert_int_equal(e->kind, CMM_E_FLOAT);
  assert_int_equal(e->type.width, 32);
  e = expr(a, "-0.0 :: W64");
  assert_int_equal(e->kind, CMM_E_FLOAT);
  assert_true(e->u.f.value == 0 && signbit(e->u.f.value));

  e = expr(a, "16 :: W32");
  is_int(e, 16, false, 32);
  assert_prints(e, "16 :: W32");
  e = expr(a, "16 :: W64");
  is_int(e, 16, false, 64);
  assert_prints(e, "16"); /* the word width is not printed */

  no_expr(a, "1.5"); /* GHC always prints a float's width */
  no_expr(a, "1.5 :: W16");
  no_expr(a, "1.2.3 :: W64");
}

static void test_registers(void **state) {
  Arena *a = *state;
  is_local(expr(a, "_s5kx::F32"), "_s5kx", CMM_FLOAT, 32);
  is_local(expr(a, "_B0::P64"), "_B0", CMM_GCPTR, 64);
  is_local(expr(a, "_c3kR::I64"), "_c3kR", CMM_BITS, 64);
  is_local(expr(a, "_x::I8"), "_x", CMM_BITS, 8);
  CmmExpr *e = expr(a, "CurrentNursery");
  is_global(e, CMM_REG_CURRENT_NURSERY);
  e = expr(a, "D1");
  is_global(e, CMM_REG_D1);
  assert_int_equal(e->type.cat, CMM_FLOAT);
  assert_int_equal(e->type.width, 64);
  /* a load's address can be any expression, loads nest */
  e = expr(a, "I32[I64[_s1XG::P64 & (-8)] - 4]");
  CmmExpr *sub = is_load(e, CMM_BITS, 32);
  CmmExpr *inner = is_load(arg(mo(sub, CMM_MO_SUB, 2), 0), CMM_BITS, 64);
  mo(inner, CMM_MO_AND, 2);
  assert_prints(e, "I32[I64[_s1XG::P64 & (-8)] - 4]");

  no_expr(a, "_x::Q64");
  no_expr(a, "_x::P16");
  no_expr(a, "::P64");
}

static void test_locations(void **state) {
  Arena *a = *state;
  CmmExpr *e = expr(a, "(Sp + 8) - 48 < SpLim");
  assert_int_equal(e->loc, 14);                         /* an infix MachOp: its operator */
  assert_int_equal(arg(e, 1)->loc, 16);
  assert_int_equal(arg(arg(e, 0), 0)->loc, 0);          /* a register offset: its '(' */
  e = expr(a, "R1 + -I64[R1 + 7]");
  assert_int_equal(arg(e, 1)->loc, 5);                  /* the prefix operator */
  assert_int_equal(arg(arg(e, 1), 0)->loc, 6);          /* the load after it */
}

/* ---- whole procs: block labels versus foreign labels -------------------------------- */

static const char resolution[] =
    HEAD "[" PROC_WITH("fact_rgr_entry", "[R2]",
                       "(c1JV,\n label: block_c1JV_info\n rep: StackRep [False]\n srt: Nothing)")
    BLOCK("c1Km", "c1JR")
    S("I64[Sp - 16] = c1JV;")
    S("_c3kR::I64 = cos;")
    S("_c3kS::I64 = c1Km+8;")
    S("(_s5q7::F64) = call \"ccall\" arg hints:  []  result hints:  [] cos(0.5 :: W64);")
    S("(_s5q8::F64) = call \"ccall\" arg hints:  []  result hints:  [] (_c3kR::I64)(_s5q7::F64);")
    S("call GHC.Classes.==_info(R2) returns to c1JV, args: 32, res: 8, upd: 8;")
    BLOCK("c1JV", "c1JR")
    S("R1 = sin;")
    RET
    END_PROC NEXT
    PROC_WITH("other_entry", "[]", "")
    BLOCK("c1Zz", "c1JR")
    S("I64[Sp - 8] = c1JV;")
    RET
    END_PROC "]\n";

/* A bare name that is a block of the enclosing proc is that block; `cos` and `sin` look
 * like uniques but name no block, so they stay foreign (SYNTAX §8.4). */
static void test_block_vs_foreign_labels(void **state) {
  (void)state;
  Parsed p = parse_dump(resolution, PARSE_ONLY);
  assert_int_equal(p.f->ngroups, 1);
  assert_int_equal(p.f->groups[0].ndecls, 2);
  CmmProc *pr = &p.f->groups[0].decls[0].u.proc;
  assert_int_equal(pr->nblocks, 2);
  CmmStmt *s = pr->blocks[0].stmts;
  assert_int_equal(pr->blocks[0].nstmts, 6);

  CmmExpr *c1jv = s[0].u.store.rhs;
  is_label(c1jv, "c1JV", 0);
  assert_int_equal(c1jv->u.label.kind, CMM_LABEL_BLOCK);
  assert_int_equal(c1jv->u.label.block, 1);

  CmmExpr *cos_ = s[1].u.assign.rhs;
  is_label(cos_, "cos", 0);
  assert_int_equal(cos_->u.label.kind, CMM_LABEL_FOREIGN);

  /* with an offset it is not the block's address */
  CmmExpr *off = s[2].u.assign.rhs;
  is_label(off, "c1Km", 8);
  assert_int_equal(off->u.label.kind, CMM_LABEL_FOREIGN);

  assert_int_equal(s[3].kind, CMM_S_CCALL);
  is_label(s[3].u.ccall.target, "cos", 0);
  assert_int_equal(s[3].u.ccall.target->u.label.kind, CMM_LABEL_FOREIGN);
  assert_int_equal(s[3].u.ccall.nresults, 1);
  assert_int_equal(s[3].u.ccall.nargs, 1);
  assert_string_equal(s[3].u.ccall.conv, "ccall");

  /* a call target in parentheses is an expression */
  assert_int_equal(s[4].kind, CMM_S_CCALL);
  is_local(s[4].u.ccall.target, "_c3kR", CMM_BITS, 64);

  assert_int_equal(s[5].kind, CMM_S_CALL);
  is_label(s[5].u.call.target, "GHC.Classes.==_info", 0);
  assert_int_equal(s[5].u.call.target->u.label.kind, CMM_LABEL_FOREIGN);
  assert_true(s[5].u.call.returns);
  assert_int_equal(s[5].u.call.returns_to.index, 1);
  assert_int_equal(pr->tables[0].block.index, 1);

  CmmExpr *sin_ = pr->blocks[1].stmts[0].u.assign.rhs;
  is_label(sin_, "sin", 0);
  assert_int_equal(sin_->u.label.kind, CMM_LABEL_FOREIGN);

  /* blocks are per proc: c1JV is not a block of other_entry */
  CmmProc *other = &p.f->groups[0].decls[1].u.proc;
  CmmExpr *ref = other->blocks[0].stmts[0].u.store.rhs;
  is_label(ref, "c1JV", 0);
  assert_int_equal(ref->u.label.kind, CMM_LABEL_FOREIGN);
  parsed_free(p);
}

/* A foreign label that happens to be a later block's name is resolved once the whole
 * proc is read, not when the label is met. */
static void test_forward_block_reference(void **state) {
  (void)state;
  Parsed p = parse_dump(HEAD "[" PROC("f_entry")
                        BLOCK("c1", "c1") S("I64[Sp - 8] = c3;") GOTO("c2")
                        BLOCK("c2", "c1") GOTO("c3")
                        BLOCK("c3", "c1") RET
                        END_PROC "]\n", PARSE_ONLY);
  CmmProc *pr = &p.f->groups[0].decls[0].u.proc;
  CmmExpr *c3 = pr->blocks[0].stmts[0].u.store.rhs;
  assert_int_equal(c3->u.label.kind, CMM_LABEL_BLOCK);
  assert_int_equal(c3->u.label.block, 2);
  assert_int_equal(pr->blocks[0].stmts[1].u.goto_.target.index, 1);
  assert_int_equal(pr->blocks[1].stmts[0].u.goto_.target.index, 2);
  parsed_free(p);
}

/* ---- wrapped proc headers ----------------------------------------------------------- */

/* GHC fills the header's live-register list to its line width and goes on below the
 * first register, without `//` (once, or a register per line when the label alone fills
 * the line); a CRLF dump wraps the same way.  Every register is read, in order. */
static void test_wrapped_live_registers(void **state) {
  (void)state;
  static const char text[] =
      HEAD "[" PROC_WITH("Main.$wf_entry", "[R5,\n                          R4, R3, R2]", "")
      BLOCK("c1", "c1") RET END_PROC NEXT
      PROC_WITH("Main.$wg_entry", "[R4,\n                  R3,\n                  R2]", "")
      BLOCK("c2", "c2") RET END_PROC NEXT
      PROC_WITH("Main.$wh_entry", "[D2,\r\n   R3, D1,\r\n   R2]\r", "")
      BLOCK("c3", "c3") RET END_PROC NEXT
      PROC_WITH("Main.$wk_entry", "[R3, R2]", "")
      BLOCK("c4", "c4") RET END_PROC "]\n";
  Parsed p = parse_dump(text, PARSE_ONLY);
  static const char *const want[][5] = {
      {"R5", "R4", "R3", "R2", NULL}, {"R4", "R3", "R2", NULL}, {"D2", "R3", "D1", "R2", NULL},
      {"R3", "R2", NULL}};
  assert_int_equal(p.f->groups[0].ndecls, 4);
  for (unsigned i = 0; i < 4; i++) {
    const CmmProc *pr = &p.f->groups[0].decls[i].u.proc;
    unsigned n = 0;
    while (want[i][n]) n++;
    assert_int_equal(pr->nlive, n);
    for (unsigned j = 0; j < n; j++)
      assert_string_equal(cmm_global_regs[pr->live[j]].name, want[i][j]);
    assert_int_equal(pr->nblocks, 1); /* the info tables and the body follow as usual */
  }
  parsed_free(p);
}

/* The list wraps only after a comma, and its ']' ends the line. */
static void test_wrapped_live_registers_errors(void **state) {
  (void)state;
  static const struct { const char *live, *msg; } bad[] = {
      {"[R2,\n  R1", "expected ',' or ']' in the live registers, got '{'"},
      {"[R2\n  R1]", "expected ',' or ']' in the live registers, got the end of the comment"},
      {"[R2,\n  R1] R3", "expected the end of the line after the wrapped live registers"},
      {"[R2,\n  // R1]", "expected a global register, got a comment"},
      {"[\n  R1]", "expected a global register, got the end of the comment"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s[%s() { //  %s\n%s", HEAD, "f_entry", bad[i].live,
             "         { info_tbls: []\n           stack_info: arg_space: 8\n         }\n"
             "     {offset\n" BLOCK("c1", "c1") RET END_PROC "]\n");
    CmmSource *src = cmm_source_from_memory("test.dump-cmm", text, strlen(text));
    Capture cap;
    capture_begin(&cap);
    Diag d = {.out = cap.out};
    CmmFile *f = cmm_parse(src, &d);
    char *diag = capture_end(&cap);
    if (f || !strstr(diag, bad[i].msg))
      fail_msg("live '%s': expected '%s', got '%s'", bad[i].live, bad[i].msg, diag);
    free(diag);
    cmm_source_free(src);
  }
}

/* ---- statics: label differences ---------------------------------------------------- */

static const char raw[] =
    "\n==================== Raw Cmm ====================\n"
    "2026-11-29 15:39:17.152726325 UTC\n\n"
    "[fact_rgr_entry() { //  [R2]\n"
    "         { [(c1JV,\n"
    "             block_c1JV_info:\n"
    "                 const 1;\n"
    "                 const 30 :: W32;\n"
    "                 const fact_rgr_closure-block_c1JV_info;),\n"
    "            (c1Km,\n"
    "             Main.$wgo_info:\n"
    "                 const Main.$wgo_slow-Main.$wgo_info;\n"
    "                 const 4294967301;\n"
    "                 const GHC.Num.-_closure-Main.$wgo_info+8;)]\n"
    "         }\n"
    "     {offset\n"
    "       c1Km: // c1JR\n"
    "           goto c1JV;\n"
    "       c1JV: // c1JR\n"
    "           call (P64[Sp])(R1) args: 8, res: 0, upd: 8;\n"
    "     }\n"
    " }]\n"
    "\n==================== Raw Cmm ====================\n"
    "2026-11-29 15:39:17.152726325 UTC\n\n"
    "[section \"\"cstring\" . i2HR_str\" {\n"
    "     i2HR_str:\n"
    "         I8[] \"main:Main.Node\"\n"
    " },\n"
    " section \"\"data\" . Main.x_closure\" {\n"
    "     Main.x_closure:\n"
    "         const i2HR_str-Main.Node_con_info;\n"
    "         const GHC.Types.[]_closure+1;\n"
    "         const (-1);\n"
    "         const 1.5 :: W32;\n"
    "         I8[16]\n"
    " }]\n";

static void is_diff(const CmmExpr *e, const char *name, const char *name2, int64_t offset) {
  assert_int_equal(e->kind, CMM_E_LABEL_DIFF);
  assert_string_equal(e->u.label.name, name);
  assert_string_equal(e->u.label.name2, name2);
  assert_true(e->u.label.offset == offset);
}

static void test_label_differences_in_statics(void **state) {
  (void)state;
  Parsed p = parse_dump(raw, PARSE_ONLY);
  assert_int_equal(p.f->ngroups, 2);
  CmmProc *pr = &p.f->groups[0].decls[0].u.proc;
  assert_true(pr->raw);
  assert_int_equal(pr->ntables, 2);
  CmmInfoTable *t = &pr->tables[0];
  assert_string_equal(t->label, "block_c1JV_info");
  assert_int_equal(t->nstatics, 3);
  is_int(t->statics[0].lit, 1, false, 64);
  is_int(t->statics[1].lit, 30, false, 32);
  is_diff(t->statics[2].lit, "fact_rgr_closure", "block_c1JV_info", 0);
  t = &pr->tables[1];
  is_diff(t->statics[0].lit, "Main.$wgo_slow", "Main.$wgo_info", 0);
  is_diff(t->statics[2].lit, "GHC.Num.-_closure", "Main.$wgo_info", 8);

  CmmGroup *g = &p.f->groups[1];
  assert_int_equal(g->ndecls, 2);
  CmmData *str = &g->decls[0].u.data;
  assert_string_equal(str->section, "cstring");
  assert_string_equal(str->label, "i2HR_str");
  assert_int_equal(str->statics[0].kind, CMM_STATIC_STRING);
  assert_int_equal(str->statics[0].len, 14);
  assert_memory_equal(str->statics[0].bytes, "main:Main.Node", 14);
  CmmData *dt = &g->decls[1].u.data;
  assert_string_equal(dt->section, "data");
  assert_string_equal(dt->label, "Main.x_closure");
  assert_int_equal(dt->nstatics, 5);
  is_diff(dt->statics[0].lit, "i2HR_str", "Main.Node_con_info", 0);
  is_label(dt->statics[1].lit, "GHC.Types.[]_closure", 1);
  is_int(dt->statics[2].lit, 1, true, 64);
  assert_int_equal(dt->statics[3].lit->kind, CMM_E_FLOAT);
  assert_int_equal(dt->statics[3].lit->type.width, 32);
  assert_int_equal(dt->statics[4].kind, CMM_STATIC_UNINIT);
  assert_int_equal(dt->statics[4].len, 16);
  parsed_free(p);
}

/* ---- print∘parse ------------------------------------------------------------------- */

/* GHC-shaped expressions print back exactly as written. */
static const char *const canonical[] = {
    "(Sp + 8) - 48 < SpLim",
    "(Sp + -40) >= SpLim",
    "Hp + 16 > HpLim",
    "_s1Jt::P64 & 7",
    "_s1Ji::P64 & (-8)",
    "R1 & 7 != 0",
    "I64[Sp + 16] ^ I64[R1 + 7] * 1099511628211",
    "(_s5l6::I64 << 5) | (_s5l6::I64 >> 59)",
    "R2 & R3 & R4",
    "~R2 ^ R3",
    "-I64[R1 + 7]",
    "~R1",
    "%MO_S_Lt_W64(I64[R1 + 7], 11)",
    "%MO_UU_Conv_W8_W64(I8[R2])",
    "%MO_FS_Conv_W64_W64(D1)",
    "%MO_F_Mul_W64(F64[R1 + 7], 6.283185307179586 :: W64)",
    "I32[I64[_s1XG::P64 & (-8)] - 4]",
    "P64[_s1Jv::P64 + 16]",
    "stg_INTLIKE_closure+289",
    "GHC.Num.-_info",
    "GHC.Types.[]_closure+1",
    "1.0e-12 :: W64",
    "0.5 :: W32",
    "16 :: W32",
    "18446744073709551612",
    "R1 - (R2 - R3)",
    "(R1 + R2) * R3",
    "R1 * R2 / R3 % R4",
    "(R1 < R2) == 0",
    "R1 << 3 + 1",
    "-(-8)",
    "-(R1 + 1)",
    "(stg_INTLIKE_closure+289) + 8",
    "HpLim + (_u3lU::I64 + 8)",
};

static void test_canonical_print(void **state) {
  Arena *a = *state;
  for (size_t i = 0; i < sizeof canonical / sizeof *canonical; i++)
    assert_prints(expr(a, canonical[i]), canonical[i]);
}

/* Any accepted expression: its print parses to the same tree, and printing that gives
 * the same text (the printer is a fixed point of print∘parse). */
static const char *const tricky[] = {
    "((R1))",
    "(R1 + 8)",
    "(Sp + -24)",
    "Sp + -40",
    "(R1 & 7) != 0",
    "((R1 + R2) + R3)",
    "(R1 * R2) + (R3 * R4)",
    "(R1 << 5) | (R1 >> 59)",
    "%MO_S_Neg_W64(%MO_S_Neg_W64(R1))",
    "-(-(R1))",
    "(-8) & R1",
    "(stg_INTLIKE_closure+289)",
    "%MO_Add_W32(_x::I32, 1 :: W32)",
    "I64[(Sp + 8)]",
    "(~R1) & 7",
    "~R1 ^ 7",
    "(R1 & R2) | R3",
    "(R1 & ~R2) & R3",
    "R1 & (R2 & R3) & R4",
    "-((R1 | R2) & R3)",
};

static void test_print_parse_fixed_point(void **state) {
  Arena *a = *state;
  for (size_t i = 0; i < sizeof tricky / sizeof *tricky; i++) {
    CmmExpr *e1 = expr(a, tricky[i]);
    char *t1 = print_expr(e1);
    CmmExpr *e2 = expr(a, t1);
    char *t2 = print_expr(e2);
    if (!same_tree(e1, e2))
      fail_msg("'%s' printed as '%s', which reads back as another tree", tricky[i], t1);
    if (strcmp(t1, t2) != 0) fail_msg("'%s' printed as '%s', then as '%s'", tricky[i], t1, t2);
    free(t1);
    free(t2);
  }
}

/* Trees GHC's printer would write ambiguously (SYNTAX §8.5) can still be written with
 * parentheses, and strobe reads them; its printer must keep those parentheses, or the
 * canonical output means something else than its input. */
static const char *const explicit_parens[] = {
    "~(R1 & 7)",
    "-(R1 & 7)",
    "R1 | (R2 & R3)",
    "R1 ^ (R2 | R3)",
    "R1 & (R2 & R3)",
};

static void test_print_keeps_explicit_parentheses(void **state) {
  Arena *a = *state;
  unsigned bad = 0;
  for (size_t i = 0; i < sizeof explicit_parens / sizeof *explicit_parens; i++) {
    CmmExpr *e1 = expr(a, explicit_parens[i]);
    char *t1 = print_expr(e1);
    CmmExpr *e2 = expr(a, t1);
    if (!same_tree(e1, e2)) {
      print_error("'%s' printed as '%s', which reads back as another tree\n", explicit_parens[i], t1);
      bad++;
    }
    free(t1);
  }
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      ARENA_TEST(test_xor_tighter_than_mul),
      ARENA_TEST(test_bitwise_left_assoc),
      ARENA_TEST(test_bitwise_chains),
      ARENA_TEST(test_and_tighter_than_compare),
      ARENA_TEST(test_levels),
      ARENA_TEST(test_comparison_chain_rejected),
      ARENA_TEST(test_regoff),
      ARENA_TEST(test_prefix),
      ARENA_TEST(test_prefix_of_prefix),
      ARENA_TEST(test_negative_literals),
      ARENA_TEST(test_labels),
      ARENA_TEST(test_named_machops),
      ARENA_TEST(test_numbers),
      ARENA_TEST(test_registers),
      ARENA_TEST(test_locations),
      cmocka_unit_test(test_block_vs_foreign_labels),
      cmocka_unit_test(test_forward_block_reference),
      cmocka_unit_test(test_wrapped_live_registers),
      cmocka_unit_test(test_wrapped_live_registers_errors),
      cmocka_unit_test(test_label_differences_in_statics),
      ARENA_TEST(test_canonical_print),
      ARENA_TEST(test_print_parse_fixed_point),
      ARENA_TEST(test_print_keeps_explicit_parentheses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
