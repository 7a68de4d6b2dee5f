/* test_symbols.c — labels to GHC's object symbols (symbols.c).
 *
 * Every expected symbol here is one GHC 9.0.2's own objects and libraries define or
 * use (checked with nm: base's libHSbase, ghc-prim's, containers', the RTS's, and
 * objects of the corpus programs and of a module built with -this-unit-id 9foo-1.0).
 * The lit tests (lit-tests/ghc/) compare whole objects; these pin each rule. */
#include "support.h"

#include "lower.h"

/* ---- helpers -------------------------------------------------------------------- */

/* A package map from text (which must read). */
static LwSymbols *symbols(const char *this_unit, const char *map) {
  LwSymbols *S = lw_symbols_new(this_unit);
  CmmSource *src = cmm_source_from_memory("map", map, strlen(map));
  Diag d = {.out = stderr};
  if (!lw_symbols_add_map(S, src, &d)) fail_msg("the map did not read:\n%s", map);
  cmm_source_free(src);
  return S;
}

static const char *const base_map = "# GHC's boot packages\n"
                                    "GHC.Base base\n"
                                    "GHC.Show base\n"
                                    "\n"
                                    "GHC.Types ghc-prim\n"
                                    "GHC.Tuple\tghc-prim\n"
                                    "GHC.Num.Integer ghc-bignum\n"
                                    "Data.Map.Internal containers-0.6.4.1\n";

static void resolves(const LwSymbols *S, Arena *a, const char *label, const char *symbol,
                     bool global) {
  LwSymbol s;
  const char *why = NULL;
  if (!lw_resolve(S, a, label, &s, &why)) fail_msg("'%s' did not resolve: %s", label, why);
  if (strcmp(s.symbol, symbol) != 0) fail_msg("'%s' is '%s', expected '%s'", label, s.symbol, symbol);
  if (s.global != global) fail_msg("'%s' is %s, expected %s", label, s.global ? "global" : "local",
                                   global ? "global" : "local");
}

/* The label does not resolve, and the reason holds each of the texts. */
static void unresolved(const LwSymbols *S, Arena *a, const char *label, const char *t1,
                       const char *t2) {
  LwSymbol s;
  const char *why = NULL;
  if (lw_resolve(S, a, label, &s, &why)) fail_msg("'%s' resolved to '%s'", label, s.symbol);
  if (!strstr(why, t1) || (t2 && !strstr(why, t2)))
    fail_msg("'%s': reason '%s' lacks '%s' or '%s'", label, why, t1, t2 ? t2 : "");
}

static void encodes(Arena *a, const char *s, const char *z) {
  const char *got = lw_zencode(a, s, strlen(s));
  if (strcmp(got, z) != 0) fail_msg("z-encoding '%s' gave '%s', expected '%s'", s, got, z);
}

/* ---- z-encoding ------------------------------------------------------------------ */

static void zencode_characters(void **state) {
  Arena *a = *state;
  encodes(a, "foo_wib", "foozuwib");
  encodes(a, "fooZ", "fooZZ");
  encodes(a, "zip", "zzip");
  encodes(a, ":+", "ZCzp");
  encodes(a, "$wgo", "zdwgo");
  encodes(a, "++", "zpzp");
  encodes(a, "showList__", "showListzuzu");
  encodes(a, "krep$*Arr*", "krepzdztArrzt");
  encodes(a, "$tc'Cell", "zdtczqCell");
  encodes(a, "I#", "Izh");
  encodes(a, "&|^=><-!'\\/%.", "zazbzczezgzlzmznzqzrzszvzi");
  encodes(a, "a@b~c", "az40Ubz7eUc");  /* no code of their own: hex, then U */
  encodes(a, "\xce\xbb", "z3bbU");       /* λ: its code point, not its UTF-8 bytes */
  encodes(a, "\xc2\xa0", "z0a0U");       /* a hex starting with a letter gets a 0 */
}

static void zencode_tuples(void **state) {
  Arena *a = *state;
  encodes(a, "()", "Z0T");
  encodes(a, "(,)", "Z2T");
  encodes(a, "(,,,,)", "Z5T");
  encodes(a, "(# #)", "Z1H");
  encodes(a, "(#,#)", "Z2H");
  encodes(a, "[]", "ZMZN");
  /* Inside a longer name a tuple is spelled out: base_GHCziShow_zdfShowZLz2cUZR2_closure. */
  encodes(a, "$fShow(,)", "zdfShowZLz2cUZR");
  encodes(a, "$fEq(,,)", "zdfEqZLz2cUz2cUZR");
  encodes(a, "$tc(,)", "zdtcZLz2cUZR");
  /* Runs of groups, unboxed and constraint ones (lex.c, Note [Built-in syntax in names]),
   * as in GHC 9.0.2's objects: ghczmprim_GHCziTypes_zdtcZLzhzhZR_closure, … */
  encodes(a, "$fRegexContextRegex[][]", "zdfRegexContextRegexZMZNZMZN");
  encodes(a, "$fPair()[]", "zdfPairZLZRZMZN");
  encodes(a, "$fPair[](,,)", "zdfPairZMZNZLz2cUz2cUZR");
  encodes(a, "$tc(##)", "zdtcZLzhzhZR");
  encodes(a, "$tc(#,#)", "zdtcZLzhz2cUzhZR");
  encodes(a, "$tc'(,)", "zdtczqZLz2cUZR");
  encodes(a, "C:(%,%)", "CZCZLzvz2cUzvZR");
  encodes(a, "C:(%%)", "CZCZLzvzvZR");
  encodes(a, "(##)", "Z1H"); /* as GHC's maybe_tuple: (## counts as one */
}

static void zencode_units(void **state) {
  Arena *a = *state;
  encodes(a, "ghc-prim", "ghczmprim");
  encodes(a, "containers-0.6.4.1", "containerszm0zi6zi4zi1");
  encodes(a, "9foo-1.0", "z39Ufoozm1zi0"); /* a leading digit is encoded */
  encodes(a, "GHC.IO.Handle.FD", "GHCziIOziHandleziFD");
}

/* ---- module-qualified labels ----------------------------------------------------- */

static void package_prefixes(void **state) {
  Arena *a = *state;
  LwSymbols *S = symbols("main", base_map);
  assert_int_equal(lw_symbols_modules(S), 6);
  resolves(S, a, "GHC.Base.map_closure", "base_GHCziBase_map_closure", true);
  resolves(S, a, "GHC.Base.++_info", "base_GHCziBase_zpzp_info", true);
  resolves(S, a, "GHC.Show.$fShow(,)2_closure", "base_GHCziShow_zdfShowZLz2cUZR2_closure", true);
  resolves(S, a, "GHC.Show.$fShow(,)_$sgo1_info", "base_GHCziShow_zdfShowZLz2cUZRzuzdsgo1_info", true);
  resolves(S, a, "GHC.Types.I#_con_info", "ghczmprim_GHCziTypes_Izh_con_info", true);
  resolves(S, a, "GHC.Num.Integer.integerAdd_info", "ghczmbignum_GHCziNumziInteger_integerAdd_info", true);
  resolves(S, a, "Data.Map.Internal.insert_info",
           "containerszm0zi6zi4zi1_DataziMapziInternal_insert_info", true);
  /* Not in the map: the unit being compiled, main, which has no prefix. */
  resolves(S, a, "Main.main_info", "Main_main_info", true);
  resolves(S, a, ":Main.main_closure", "ZCMain_main_closure", true);
  resolves(S, a, "Main.$wgo_info", "Main_zdwgo_info", true);
  resolves(S, a, "Main.$trModule2_bytes", "Main_zdtrModule2_bytes", true);
  lw_symbols_free(S);
}

static void this_unit(void **state) {
  Arena *a = *state;
  LwSymbols *S = symbols("9foo-1.0", base_map);
  resolves(S, a, "X.f_closure", "z39Ufoozm1zi0_X_f_closure", true);
  resolves(S, a, "X.Cell_con_info", "z39Ufoozm1zi0_X_Cell_con_info", true);
  resolves(S, a, "GHC.Base.map_closure", "base_GHCziBase_map_closure", true);
  lw_symbols_free(S);
  /* No map at all: as for main, no prefixes. */
  resolves(NULL, a, "GHC.Base.map_closure", "GHCziBase_map_closure", true);
}

static void builtin_syntax(void **state) {
  Arena *a = *state;
  LwSymbols *S = symbols("main", base_map);
  /* Bare or qualified, the same ghc-prim symbol. */
  resolves(S, a, ":_con_info", "ghczmprim_GHCziTypes_ZC_con_info", true);
  resolves(S, a, "GHC.Types.:_con_info", "ghczmprim_GHCziTypes_ZC_con_info", true);
  resolves(S, a, "[]_closure", "ghczmprim_GHCziTypes_ZMZN_closure", true);
  resolves(S, a, "GHC.Types.[]_closure", "ghczmprim_GHCziTypes_ZMZN_closure", true);
  resolves(S, a, "(,)_con_info", "ghczmprim_GHCziTuple_Z2T_con_info", true);
  resolves(S, a, "(,,)_closure", "ghczmprim_GHCziTuple_Z3T_closure", true);
  resolves(S, a, "()_closure", "ghczmprim_GHCziTuple_Z0T_closure", true);
  resolves(S, a, "GHC.Tuple.()_closure", "ghczmprim_GHCziTuple_Z0T_closure", true);
  resolves(S, a, "GHC.Types.$tc(##)_closure", "ghczmprim_GHCziTypes_zdtcZLzhzhZR_closure", true);
  resolves(S, a, "GHC.Types.$tc(#,,#)_closure", "ghczmprim_GHCziTypes_zdtcZLzhz2cUz2cUzhZR_closure",
           true);
  lw_symbols_free(S);
}

/* ---- labels of the RTS and of C --------------------------------------------------- */

static void primops_and_rts(void **state) {
  Arena *a = *state;
  LwSymbols *S = symbols("main", base_map);
  /* An out-of-line primop's label: the whole primop name z-encoded. */
  resolves(S, a, "stg_decodeDouble_Int64#", "stg_decodeDoublezuInt64zh", true);
  resolves(S, a, "stg_decodeFloat_Int#", "stg_decodeFloatzuIntzh", true);
  resolves(S, a, "stg_newMutVar#", "stg_newMutVarzh", true);
  resolves(S, a, "stg_addCFinalizerToWeak#", "stg_addCFinalizzerToWeakzh", true);
  resolves(S, a, "stg_atomicModifyMutVar_#", "stg_atomicModifyMutVarzuzh", true);
  /* The RTS's own Cmm and C names: verbatim. */
  resolves(S, a, "stg_ap_pp_info", "stg_ap_pp_info", false);
  resolves(S, a, "stg_ap_pp_fast", "stg_ap_pp_fast", false);
  resolves(S, a, "stg_gc_unpt_r1", "stg_gc_unpt_r1", false);
  resolves(S, a, "stg_upd_frame_info", "stg_upd_frame_info", false);
  resolves(S, a, "stg_SRT_2_info", "stg_SRT_2_info", false);
  resolves(S, a, "newCAF", "newCAF", false);
  lw_symbols_free(S);
}

/* ---- visibility -------------------------------------------------------------------- */

static void visibility(void **state) {
  Arena *a = *state;
  LwSymbols *S = symbols("main", base_map);
  /* A constructor worker's info table and entry are local; its closure and the
   * constructor's table are global (nm: `t Main_Node_info`, `T Main_Node_con_info`). */
  resolves(S, a, "Main.Cell_info", "Main_Cell_info", false);
  resolves(S, a, "Main.Cell_entry", "Main_Cell_entry", false);
  resolves(S, a, "Main.:+:_info", "Main_ZCzpZC_info", false);
  resolves(S, a, "Main.C:Shape_info", "Main_CZCShape_info", false);
  resolves(S, a, "Main.Cell_con_info", "Main_Cell_con_info", true);
  resolves(S, a, "Main.Cell_closure", "Main_Cell_closure", true);
  resolves(S, a, "Main.Color_closure_tbl", "Main_Color_closure_tbl", true);
  resolves(S, a, "Main.$WCell_info", "Main_zdWCell_info", true);
  resolves(S, a, "Main.$tc'Cell_closure", "Main_zdtczqCell_closure", true);
  /* `_con_info` is a kind only after a constructor's name. */
  resolves(S, a, "Main.x_con_info", "Main_xzucon_info", true);
  /* Names internal to the module stay local. */
  resolves(S, a, "fact_rgr_info", "fact_rgr_info", false);
  resolves(S, a, "$trModule3_r1Gm_bytes", "zdtrModule3_r1Gm_bytes", false);
  resolves(S, a, "block_c1JV_info", "block_c1JV_info", false);
  resolves(S, a, "i4gJ_str", "i4gJ_str", false);
  resolves(S, a, "u1Gx_srt", "u1Gx_srt", false);
  /* A proc point strobe names after its procedure. */
  resolves(S, a, "Main.fact_entry_c1JV", "Mainzifact_entry_c1JV", false);
  lw_symbols_free(S);
}

/* ---- what cannot be resolved ----------------------------------------------------- */

static void unresolvable(void **state) {
  Arena *a = *state;
  LwSymbols *S = symbols("main", "Data.Foo foo-1.0\nData.Foo foo-2.0\nData.Foo foo-1.0\n"
                                 "Data.Foo bar-1\n");
  unresolved(S, a, "Data.Foo.f_closure", "'Data.Foo.f_closure'",
             "module 'Data.Foo' is in several units of the package map (foo-1.0, foo-2.0, bar-1)");
  unresolved(S, a, "Main.fact", "'Main.fact' of module 'Main'", "no kind suffix");
  unresolved(S, a, "(,x)_closure", "'(,x)_closure'", "GHC.Tuple");
  unresolved(S, a, ":_junk", "':_junk'", NULL);
  lw_symbols_free(S);
}

/* The first line a bad map reports (`map:LINE:COL: error: …`). */
static void rejects_map(const char *map, const char *first_line) {
  LwSymbols *S = lw_symbols_new("main");
  CmmSource *src = cmm_source_from_memory("map", map, strlen(map));
  Capture cap;
  capture_begin(&cap);
  Diag d = {.out = cap.out};
  bool ok = lw_symbols_add_map(S, src, &d);
  char *text = capture_end(&cap);
  cmm_source_free(src);
  lw_symbols_free(S);
  if (ok) fail_msg("the map was accepted:\n%s", map);
  size_t n = strlen(first_line);
  if (strncmp(text, first_line, n) != 0 || text[n] != '\n')
    fail_msg("reported\n%s\nexpected first line\n%s", text, first_line);
  free(text);
}

static void bad_maps(void **state) {
  (void)state;
  rejects_map("GHC.Base base\nGHC.Show\n",
              "map:2:9: error: expected the unit id of module 'GHC.Show' (like base)");
  rejects_map("ghc.base base\n", "map:1:1: error: expected a module name (like Data.Map.Internal)");
  rejects_map("GHC.Base- base\n", "map:1:9: error: expected a module name (like Data.Map.Internal)");
  rejects_map("# ok\n  GHC.Base base extra\n",
              "map:2:17: error: expected the end of the line: a line is 'MODULE UNIT-ID'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      ARENA_TEST(zencode_characters), ARENA_TEST(zencode_tuples), ARENA_TEST(zencode_units),
      ARENA_TEST(package_prefixes),   ARENA_TEST(this_unit),      ARENA_TEST(builtin_syntax),
      ARENA_TEST(primops_and_rts),    ARENA_TEST(visibility),     ARENA_TEST(unresolvable),
      ARENA_TEST(bad_maps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
