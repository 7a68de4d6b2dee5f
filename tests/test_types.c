/* test_types.c — width inference (types.c).
 *
 * GHC prints infix MachOps and word-sized literals without a width; the width of an
 * infix operation is its operands', a comparison is a word of bits, a conversion has
 * its target width, adding to a GC pointer keeps a GC pointer, and a width that does
 * not agree is an error at the right place. */
#include "support.h"

/* ---- helpers -------------------------------------------------------------------- */

/* Parses text as an expression (which must parse) and infers its types. */
static ParsedExpr check(Arena *a, const char *text) {
  ParsedExpr c = parse_one_expr(a, text, INFER_TYPES);
  if (!c.e) fail_msg("'%s' did not parse: %s", text, c.diag);
  assert_int_equal(c.errors, c.ok ? 0 : 1);
  return c;
}

static const CmmExpr *typed(Arena *a, const char *text) {
  ParsedExpr c = check(a, text);
  if (!c.ok) fail_msg("'%s': %s", text, c.diag);
  return c.e;
}

static void has_type(const CmmExpr *e, int cat, unsigned width) {
  if (e->type.cat != cat || e->type.width != width)
    fail_msg("type %s, expected %s", cmm_type_name(e->type),
             cmm_type_name((CmmType){(uint8_t)cat, (uint16_t)width}));
}

static void type_is(Arena *a, const char *text, int cat, unsigned width) {
  has_type(typed(a, text), cat, width);
}

/* Inference fails on text with this first diagnostic line (`expr:1:COL: error: …`). */
static void rejects(Arena *a, const char *text, const char *first_line) {
  ParsedExpr c = check(a, text);
  if (c.ok) fail_msg("'%s' was accepted", text);
  size_t n = strlen(first_line);
  if (strncmp(c.diag, first_line, n) != 0 || c.diag[n] != '\n')
    fail_msg("for '%s': got '%s', expected '%s'", text, c.diag, first_line);
}

/* ---- infix operators ---------------------------------------------------------------- */

static void test_infix_width_from_operands(void **state) {
  Arena *a = *state;
  const CmmExpr *e = typed(a, "I32[R1] + 1 :: W32");
  has_type(e, CMM_BITS, 32);
  assert_int_equal(e->u.mo.w, 32);
  has_type(e->u.mo.args[0], CMM_BITS, 32);
  has_type(e->u.mo.args[1], CMM_BITS, 32);

  type_is(a, "R2 + 1", CMM_GCPTR, 64);
  type_is(a, "Sp - 40", CMM_BITS, 64);
  type_is(a, "I8[R2] * 3 :: W8", CMM_BITS, 8);
  type_is(a, "_x::I16 & _y::I16", CMM_BITS, 16);
  type_is(a, "_x::I32 / 2 :: W32", CMM_BITS, 32);
  type_is(a, "_x::I32 % 2 :: W32", CMM_BITS, 32);
  type_is(a, "I64[Sp + 16] ^ I64[R1 + 7] * 1099511628211", CMM_BITS, 64);
  /* prefix operators */
  e = typed(a, "-I32[R1 + 7]");
  has_type(e, CMM_BITS, 32);
  assert_int_equal(e->u.mo.w, 32);
  type_is(a, "~_x::I8", CMM_BITS, 8);
  /* a shift amount may have another width than the value shifted */
  e = typed(a, "_x::I32 << 3");
  has_type(e, CMM_BITS, 32);
  assert_int_equal(e->u.mo.w, 32);
  type_is(a, "_x::I16 >> _n::I64", CMM_BITS, 16);
}

static void test_infix_width_mismatch(void **state) {
  Arena *a = *state;
  /* the error is at the operator */
  rejects(a, "I32[R1] + 1", "expr:1:9: error: operands of '+' have different widths (W32 and W64)");
  rejects(a, "_a::I32 + _b::I64", "expr:1:9: error: operands of '+' have different widths (W32 and W64)");
  rejects(a, "R1 & _x::I8", "expr:1:4: error: operands of '&' have different widths (W64 and W8)");
  rejects(a, "(R1 + R2) * (_x::I32 - 1 :: W32)",
          "expr:1:11: error: operands of '*' have different widths (W64 and W32)");
  /* nested: the innermost mismatch is reported */
  rejects(a, "R1 + (_a::I16 - _b::I8)",
          "expr:1:15: error: operands of '-' have different widths (W16 and W8)");
}

static void test_infix_on_floats(void **state) {
  Arena *a = *state;
  rejects(a, "D1 + D2", "expr:1:4: error: integer operator '+' applied to a float (F64)");
  rejects(a, "R1 + F1", "expr:1:6: error: integer operator '+' applied to a float (F32)");
  rejects(a, "-D1", "expr:1:1: error: integer operator '-' applied to a float (F64)");
}

/* ---- comparisons and conversions ------------------------------------------------------ */

static void test_comparisons_are_words(void **state) {
  Arena *a = *state;
  const CmmExpr *e = typed(a, "I32[R1] < 1 :: W32");
  has_type(e, CMM_BITS, 64);
  assert_int_equal(e->u.mo.w, 32); /* the comparison itself is at the operands' width */
  type_is(a, "R1 & 7 != 0", CMM_BITS, 64);
  type_is(a, "_x::I8 == 0 :: W8", CMM_BITS, 64);
  type_is(a, "(Sp + 8) - 48 < SpLim", CMM_BITS, 64);
  type_is(a, "%MO_S_Lt_W32(I32[R1], 11 :: W32)", CMM_BITS, 64);
  type_is(a, "%MO_F_Lt_W64(D1, 0.0 :: W64)", CMM_BITS, 64);
  type_is(a, "%MO_F_Eq_W32(F1, F2)", CMM_BITS, 64);
  /* the word a comparison gives is not a narrower value */
  rejects(a, "(_x::I32 < 1 :: W32) & 1 :: W32",
          "expr:1:22: error: operands of '&' have different widths (W64 and W32)");
}

static void test_conversions(void **state) {
  Arena *a = *state;
  type_is(a, "%MO_UU_Conv_W8_W64(I8[R2])", CMM_BITS, 64);
  type_is(a, "%MO_SS_Conv_W64_W16(I64[R1 + 7])", CMM_BITS, 16);
  type_is(a, "%MO_SS_Conv_W64_W32(R1)", CMM_BITS, 32);
  type_is(a, "%MO_XX_Conv_W32_W8(_x::I32)", CMM_BITS, 8);
  type_is(a, "%MO_SF_Conv_W64_W64(R1)", CMM_FLOAT, 64);
  type_is(a, "%MO_SF_Conv_W64_W32(_x::I64)", CMM_FLOAT, 32);
  type_is(a, "%MO_FS_Conv_W64_W64(D1)", CMM_BITS, 64);
  type_is(a, "%MO_FS_Conv_W32_W64(F1)", CMM_BITS, 64);
  type_is(a, "%MO_FF_Conv_W64_W32(D1)", CMM_FLOAT, 32);
  type_is(a, "%MO_FF_Conv_W32_W64(F1)", CMM_FLOAT, 64);
  /* a conversion's operand has the source width */
  rejects(a, "%MO_UU_Conv_W8_W64(R2)", "expr:1:20: error: operand of %MO_UU_Conv_W8_W64 is W64, not W8");
  rejects(a, "%MO_FF_Conv_W64_W32(F1)", "expr:1:21: error: operand of %MO_FF_Conv_W64_W32 is W32, not W64");
}

static void test_named_machops(void **state) {
  Arena *a = *state;
  type_is(a, "%MO_F_Mul_W64(F64[R1 + 7], 6.283185307179586 :: W64)", CMM_FLOAT, 64);
  type_is(a, "%MO_F_Neg_W32(F1)", CMM_FLOAT, 32);
  type_is(a, "%MO_S_Quot_W32(_x::I32, 3 :: W32)", CMM_BITS, 32);
  type_is(a, "%MO_S_MulMayOflo_W64(R1, R2)", CMM_BITS, 64);
  type_is(a, "%MO_S_Shr_W32(_x::I32, 31)", CMM_BITS, 32); /* shift amount: any width */
  type_is(a, "%MO_Add_W32(_x::I32, 1 :: W32)", CMM_BITS, 32);
  rejects(a, "%MO_S_Gt_W64(_s1Ja::I32, 0)", "expr:1:14: error: operand of %MO_S_Gt_W64 is W32, not W64");
  rejects(a, "%MO_F_Add_W64(F1, D2)", "expr:1:15: error: operand of %MO_F_Add_W64 is W32, not W64");
  rejects(a, "%MO_S_Lt_W64(I64[R1 + 7], 11 :: W32)",
          "expr:1:27: error: operand of %MO_S_Lt_W64 is W32, not W64");
}

/* ---- GC pointers and labels ---------------------------------------------------------- */

static void test_gc_pointers(void **state) {
  Arena *a = *state;
  /* adding to or subtracting from a GC pointer gives a GC pointer (a tagged or interior one) */
  type_is(a, "_x::P64 + 8", CMM_GCPTR, 64);
  type_is(a, "_x::P64 - 8", CMM_GCPTR, 64);
  type_is(a, "Hp - 7", CMM_GCPTR, 64);
  type_is(a, "(_x::P64 + 16)", CMM_GCPTR, 64); /* a register offset */
  type_is(a, "R1 + 7", CMM_GCPTR, 64);
  /* other operations give bits */
  type_is(a, "_x::P64 & 7", CMM_BITS, 64);
  type_is(a, "_x::P64 & (-8)", CMM_BITS, 64);
  type_is(a, "_x::P64 * 2", CMM_BITS, 64);
  type_is(a, "-_x::P64", CMM_BITS, 64);
  type_is(a, "8 + _x::P64", CMM_BITS, 64); /* the first operand decides */
  /* loads are what they say, whatever the address */
  type_is(a, "P64[_x::P64 + 16]", CMM_GCPTR, 64);
  type_is(a, "I64[R1 + 7]", CMM_BITS, 64);
  type_is(a, "F64[R1 + 7]", CMM_FLOAT, 64);
  type_is(a, "I32[I64[_s1XG::P64 & (-8)] - 4]", CMM_BITS, 32);
  /* registers */
  type_is(a, "R1", CMM_GCPTR, 64);
  type_is(a, "Sp", CMM_BITS, 64);
  type_is(a, "Hp", CMM_GCPTR, 64);
  type_is(a, "D1", CMM_FLOAT, 64);
  type_is(a, "F1", CMM_FLOAT, 32);
  type_is(a, "BaseReg", CMM_BITS, 64);
}

static void test_label_types(void **state) {
  Arena *a = *state;
  type_is(a, "GHC.Num.$fNumInteger_closure", CMM_GCPTR, 64);
  type_is(a, "GHC.Types.[]_closure+1", CMM_GCPTR, 64);
  type_is(a, "stg_INTLIKE_closure+289", CMM_GCPTR, 64);
  type_is(a, "stg_upd_frame_info", CMM_BITS, 64);
  type_is(a, "GHC.Num.-_info", CMM_BITS, 64);
  type_is(a, "i2HR_str", CMM_BITS, 64);
  type_is(a, "Main.x_closure_tbl", CMM_BITS, 64);
  type_is(a, "newCAF", CMM_BITS, 64);
  type_is(a, "_closure", CMM_BITS, 64); /* a suffix alone names nothing */
  type_is(a, "stg_INTLIKE_closure+289 + 8", CMM_GCPTR, 64);
}

static void test_literals(void **state) {
  Arena *a = *state;
  type_is(a, "42", CMM_BITS, 64);
  type_is(a, "42 :: W16", CMM_BITS, 16);
  type_is(a, "1.0e-12 :: W64", CMM_FLOAT, 64);
  type_is(a, "0.5 :: W32", CMM_FLOAT, 32);
}

static void test_float_address(void **state) {
  Arena *a = *state;
  rejects(a, "I64[D1]", "expr:1:5: error: a float is not an address");
  rejects(a, "P64[R1 + I64[F1]]", "expr:1:14: error: a float is not an address");
}

static void test_type_names(void **state) {
  (void)state;
  assert_string_equal(cmm_type_name((CmmType){CMM_BITS, 8}), "I8");
  assert_string_equal(cmm_type_name((CmmType){CMM_BITS, 64}), "I64");
  assert_string_equal(cmm_type_name((CmmType){CMM_BITS, 512}), "I512");
  assert_string_equal(cmm_type_name((CmmType){CMM_GCPTR, 64}), "P64");
  assert_string_equal(cmm_type_name((CmmType){CMM_FLOAT, 32}), "F32");
  assert_string_equal(cmm_type_name((CmmType){CMM_FLOAT, 64}), "F64");
}

/* ---- whole files ------------------------------------------------------------------- */

/* A dump of one proc, f_entry, whose first block c1 holds stmts: the proc header is
 * line 5 and the first statement line 11, column 12. */
#define ONE_PROC(stmts) HEAD "[" PROC("f_entry") BLOCK("c1", "c1") stmts END_PROC "]\n"

/* Inference fails on the dump text with this first diagnostic line. */
static void file_rejects(const char *text, const char *first_line) {
  Parsed c = parse_dump(text, INFER_TYPES);
  assert_false(c.ok);
  size_t n = strlen(first_line);
  if (strncmp(c.diag, first_line, n) != 0 || c.diag[n] != '\n')
    fail_msg("got '%s', expected '%s'", c.diag, first_line);
  parsed_free(c);
}

static void test_file_statements(void **state) {
  (void)state;
  Parsed c = parse_dump(ONE_PROC(S("_s1Jv::P64 = R1;")
                                 S("_c1K7::P64 = Hp - 7;")
                                 S("_x::I32 = I32[_s1Jv::P64 + 3] + 1 :: W32;")
                                 S("I32[Sp - 4] = _x::I32;")
                                 S("F32[Hp - 32] = 0.5 :: W32;")
                                 S("(_c1Q0::I64) = call \"ccall\" arg hints:  [PtrHint,]  "
                                   "result hints:  [] suspendThread(BaseReg, 0);")
                                 S("(_c5Av::I64) = call MO_PopCnt W64(R2);")
                                 S("if (_x::I32 > 10 :: W32) goto c2; else goto c2;")
                                 BLOCK("c2", "c1")
                                 S("I64[Sp - 8] = c2;")
                                 S("unwind Sp = Just Sp + 8;")
                                 RET),
                        INFER_TYPES);
  if (!c.ok) fail_msg("%s", c.diag);
  CmmBlock *b = &c.f->groups[0].decls[0].u.proc.blocks[0];
  has_type(b->stmts[1].u.assign.rhs, CMM_GCPTR, 64);
  const CmmExpr *add = b->stmts[2].u.assign.rhs;
  has_type(add, CMM_BITS, 32);
  assert_int_equal(add->u.mo.w, 32);
  const CmmStmt *ccall = &b->stmts[5];
  has_type(ccall->u.ccall.results[0], CMM_BITS, 64);
  has_type(ccall->u.ccall.args[0], CMM_BITS, 64);
  has_type(ccall->u.ccall.target, CMM_BITS, 64);
  const CmmExpr *cond = b->stmts[7].u.if_.cond;
  has_type(cond, CMM_BITS, 64);
  assert_int_equal(cond->u.mo.w, 32);
  /* a block's address is bits */
  const CmmBlock *b2 = &c.f->groups[0].decls[0].u.proc.blocks[1];
  has_type(b2->stmts[0].u.store.rhs, CMM_BITS, 64);
  has_type(b2->stmts[1].u.unwind.regs[0].expr, CMM_BITS, 64);
  parsed_free(c);
}

static void test_file_errors(void **state) {
  (void)state;
  file_rejects(ONE_PROC(S("_x::I32 = _y::I64;") RET),
               "test.dump-cmm:11:22: error: a register of W32 gets a W64 value");
  file_rejects(ONE_PROC(S("_x::I32 = 1;") RET),
               "test.dump-cmm:11:22: error: a register of W32 gets a W64 value");
  file_rejects(ONE_PROC(S("_x::I32 = I32[R1] < 1 :: W32;") RET),
               "test.dump-cmm:11:30: error: a register of W32 gets a W64 value");
  file_rejects(ONE_PROC(S("I32[Sp - 4] = R1;") RET),
               "test.dump-cmm:11:26: error: a store of W32 gets a W64 value");
  file_rejects(ONE_PROC(S("R1 = R1 + 1 :: W32;") RET),
               "test.dump-cmm:11:20: error: operands of '+' have different widths (W64 and W32)");
  file_rejects(ONE_PROC(S("if (_x::I32 > 10) goto c1; else goto c1;")),
               "test.dump-cmm:11:24: error: operands of '>' have different widths (W32 and W64)");
}

/* `(D1 + 8)` reads as a register offset; it is no more an integer sum on a float than
 * `D1 + 8` is, and neither is `F64[D1] = …`'s address more of an address than I64[D1]'s. */
static void test_float_register_offset(void **state) {
  (void)state;
  file_rejects(ONE_PROC(S("D2 = (D1 + 8);") RET),
               "test.dump-cmm:11:17: error: integer operator '+' applied to a float (F64)");
  file_rejects(ONE_PROC(S("F64[D1] = D2;") RET),
               "test.dump-cmm:11:16: error: a float is not an address");
}

/* A local register has one type in a whole proc; the error names the first use. */
static void test_local_register_types(void **state) {
  (void)state;
  file_rejects(ONE_PROC(S("_s1Jv::P64 = R1;") S("R1 = _s1Jv::I64;") RET),
               "test.dump-cmm:12:17: error: local register '_s1Jv' is I64 here but P64 before");
  file_rejects(ONE_PROC(S("_s1Jv::F64 = D1;") S("_s1Jv::F32 = F1;") RET),
               "test.dump-cmm:12:12: error: local register '_s1Jv' is F32 here but F64 before");
  /* the note points at the first use */
  Parsed n = parse_dump(ONE_PROC(S("_s1Jv::P64 = R1;") S("R1 = _s1Jv::I64;") RET), INFER_TYPES);
  assert_non_null(strstr(n.diag, "test.dump-cmm:11:12: note: '_s1Jv' first used as P64 here\n"));
  parsed_free(n);
  /* two procs may use one name with two types */
  Parsed c = parse_dump(HEAD "[" PROC("f_entry") BLOCK("c1", "c1") S("_s1Jv::P64 = R1;") RET
                        END_PROC NEXT PROC("g_entry") BLOCK("c1", "c1") S("_s1Jv::I64 = Sp;") RET
                        END_PROC "]\n", INFER_TYPES);
  if (!c.ok) fail_msg("%s", c.diag);
  parsed_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      ARENA_TEST(test_infix_width_from_operands),
      ARENA_TEST(test_infix_width_mismatch),
      ARENA_TEST(test_infix_on_floats),
      ARENA_TEST(test_comparisons_are_words),
      ARENA_TEST(test_conversions),
      ARENA_TEST(test_named_machops),
      ARENA_TEST(test_gc_pointers),
      ARENA_TEST(test_label_types),
      ARENA_TEST(test_literals),
      ARENA_TEST(test_float_address),
      cmocka_unit_test(test_type_names),
      cmocka_unit_test(test_file_statements),
      cmocka_unit_test(test_file_errors),
      cmocka_unit_test(test_local_register_types),
      cmocka_unit_test(test_float_register_offset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
