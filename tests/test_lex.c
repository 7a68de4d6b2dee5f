/* test_lex.c — the lexer and Haskell string literals (lex.c).
 *
 * A NAME is a maximal run of label characters, so GHC's symbol-laden labels stay whole
 * and punctuation only splits where a label cannot go on; comments and titles are
 * line-based; strings decode Haskell escapes and print back as `show` prints them. */
#include "support.h"

/* ---- helpers -------------------------------------------------------------------- */

enum { MAX_TOKENS = 64 };

typedef struct Lexed {
  CmmSource *src;
  Diag d;
  CmmToken t[MAX_TOKENS];
  int n; /* tokens before EOF (or up to and including the first TK_ERROR) */
} Lexed;

/* Lexes all of text; the diagnostics are counted, not printed. */
static Lexed *lex_all(const char *text) {
  Lexed *L = calloc(1, sizeof *L);
  assert_non_null(L);
  L->src = cmm_source_from_memory("test.cmm", text, strlen(text));
  CmmLexer lx;
  cmm_lex_init(&lx, L->src, &L->d);
  for (;;) {
    CmmToken t = cmm_lex_next(&lx);
    if (t.kind == TK_EOF) break;
    assert_true(L->n < MAX_TOKENS);
    L->t[L->n++] = t;
    if (t.kind == TK_ERROR) break;
  }
  return L;
}

static void lexed_free(Lexed *L) {
  cmm_source_free(L->src);
  free(L);
}

/* Token i has this kind and spelling, and starts at byte offset loc. */
static void tok_is(const Lexed *L, int i, int kind, const char *text, CmmLoc loc) {
  if (i >= L->n) fail_msg("'%s': no token %d", L->src->text, i);
  const CmmToken *t = &L->t[i];
  if ((int)t->kind != kind || t->len != strlen(text) || memcmp(t->p, text, t->len) != 0 ||
      t->loc != loc)
    fail_msg("'%s': token %d is '%.*s' (kind %d) at %u, expected '%s' (kind %d) at %u",
             L->src->text, i, (int)t->len, t->p, (int)t->kind, (unsigned)t->loc, text, kind,
             (unsigned)loc);
}

enum { MAX_WANT = 16 };

/* An input and all the tokens it lexes to, in order (up to the first with no text). */
typedef struct LexCase {
  const char *text;
  struct {
    int kind;
    const char *text;
    CmmLoc loc;
  } tok[MAX_WANT];
} LexCase;

/* Each input lexes, without error, to exactly its tokens. */
static void lexes_as(const LexCase *cases, size_t ncases) {
  for (const LexCase *c = cases; c < cases + ncases; c++) {
    Lexed *L = lex_all(c->text);
    int n = 0;
    while (n < MAX_WANT && c->tok[n].text) n++;
    if (L->n != n) fail_msg("'%s' lexed to %d tokens, expected %d", c->text, L->n, n);
    for (int i = 0; i < n; i++) tok_is(L, i, c->tok[i].kind, c->tok[i].text, c->tok[i].loc);
    assert_int_equal(L->d.errors, 0);
    lexed_free(L);
  }
}

/* A whole input that is one NAME token. */
static void one_name(const char *text) {
  Lexed *L = lex_all(text);
  assert_int_equal(L->n, 1);
  tok_is(L, 0, TK_NAME, text, 0);
  assert_int_equal(L->d.errors, 0);
  lexed_free(L);
}

/* Decodes the first token of text (a string literal). */
static bool decode(const char *text, uint8_t **bytes, uint32_t *len, Arena *a, unsigned *errors) {
  CmmSource *src = cmm_source_from_memory("test.cmm", text, strlen(text));
  Diag d = {0};
  CmmLexer lx;
  cmm_lex_init(&lx, src, &d);
  CmmToken t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_STRING);
  bool ok = cmm_decode_string(src, t, a, &d, bytes, len);
  *errors = d.errors;
  cmm_source_free(src);
  return ok;
}

/* The string literal decodes to exactly these n bytes. */
static void decodes_to(const char *lit, const char *want, uint32_t n) {
  Arena *a = arena_new();
  uint8_t *bytes = NULL;
  uint32_t len = 0;
  unsigned errors;
  if (!decode(lit, &bytes, &len, a, &errors)) fail_msg("%s did not decode", lit);
  assert_int_equal(errors, 0);
  assert_int_equal(len, n);
  assert_memory_equal(bytes, want, n);
  arena_free(a);
}

/* The string literal is malformed; the error points at byte offset loc of lit. */
static void rejects(const char *lit, CmmLoc loc) {
  Arena *a = arena_new();
  CmmSource *src = cmm_source_from_memory("test.cmm", lit, strlen(lit));
  Capture cap;
  capture_begin(&cap);
  Diag d = {.out = cap.out};
  CmmLexer lx;
  cmm_lex_init(&lx, src, &d);
  CmmToken t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_STRING);
  uint8_t *bytes;
  uint32_t len;
  assert_false(cmm_decode_string(src, t, a, &d, &bytes, &len));
  assert_int_equal(d.errors, 1);
  char *buf = capture_end(&cap);
  char want[32];
  snprintf(want, sizeof want, "test.cmm:1:%u: error:", (unsigned)loc + 1);
  if (strncmp(buf, want, strlen(want)) != 0) fail_msg("for %s: got '%s', expected '%s'", lit, buf, want);
  free(buf);
  cmm_source_free(src);
  arena_free(a);
}

/* What cmm_print_string prints for these bytes. */
static char *printed(const uint8_t *bytes, uint32_t len) {
  Capture cap;
  capture_begin(&cap);
  cmm_print_string(cap.out, bytes, len);
  return capture_end(&cap);
}

static void prints_as(const char *bytes, uint32_t n, const char *want) {
  char *got = printed((const uint8_t *)bytes, n);
  assert_string_equal(got, want);
  free(got);
}

/* ---- names ---------------------------------------------------------------------- */

static void test_labels_with_symbols(void **state) {
  (void)state;
  one_name("GHC.Classes.==_info");
  one_name("GHC.Types.[]_closure+1");
  one_name("(,)_con_info");
  one_name("(,,)_con_info");
  one_name("GHC.Show.$fShow(,)2_closure");
  one_name("Data.Foldable.$fFoldable[]_closure");
  /* Note [Built-in syntax in names]: every group, in runs, anywhere in a name */
  one_name("Text.Regex.Posix.Wrap.$fRegexContextRegex[][]_$cmatch_closure");
  one_name("Main.$fPair()[]_closure");
  one_name("Main.$fPair[](,,)_info");
  one_name("()_closure");
  one_name("GHC.Types.$tc(##)_closure+1");
  one_name("GHC.Types.$tc(#,,#)_closure+1");
  one_name("GHC.Classes.C:(%,%)_con_info");
  one_name("GHC.Classes.C:(%%)_closure+1");
  one_name("GHC.Tuple.$tc'(,)2_closure");
  one_name("Main.$w$c()[](##)(%,,%)x_info");
  one_name(":Main.main_info");
  one_name("GHC.Num.-_info");
  one_name("GHC.Base.>>=_info");
  one_name("GHC.Types.krep$*_closure");
  one_name("Main.$fShowSum'_closure");
  one_name("GHC.Types.I#_con_info");
  one_name("fact_rgr_closure-block_c1JV_info");
  one_name("_s1Jv::P64");
  one_name("%MO_UU_Conv_W8_W64");
  one_name("18446744073709551612");
  one_name("-I64");
  one_name("Main.gr\xc3\xbc\xc3\x9f" "e_closure"); /* UTF-8 in a name */
}

static void test_label_in_context(void **state) {
  (void)state;
  static const LexCase cases[] = {
      {"call GHC.Classes.==_info(R2) returns to c1JV, args: 32;",
       {{TK_NAME, "call", 0}, {TK_NAME, "GHC.Classes.==_info", 5}, {TK_LPAREN, "(", 24},
        {TK_NAME, "R2", 25}, {TK_RPAREN, ")", 27}, {TK_NAME, "returns", 29},
        {TK_NAME, "to", 37}, {TK_NAME, "c1JV", 40}, {TK_COMMA, ",", 44},
        {TK_NAME, "args:", 46}, {TK_NAME, "32", 52}, {TK_SEMI, ";", 54}}},
  };
  lexes_as(cases, sizeof cases / sizeof *cases);
}

/* `[]` and `()` join a name only when a label character follows them. */
static void test_brackets_not_swallowed(void **state) {
  (void)state;
  static const LexCase cases[] = {
      {"I8[] \"x\"",
       {{TK_NAME, "I8", 0}, {TK_LBRACKET, "[", 2}, {TK_RBRACKET, "]", 3},
        {TK_STRING, "\"x\"", 5}}},
      {"call MO_WriteBarrier();",
       {{TK_NAME, "call", 0}, {TK_NAME, "MO_WriteBarrier", 5}, {TK_LPAREN, "(", 20},
        {TK_RPAREN, ")", 21}, {TK_SEMI, ";", 22}}},
      {"sat_s1Jv_entry() { //  [R1]",
       {{TK_NAME, "sat_s1Jv_entry", 0}, {TK_LPAREN, "(", 14}, {TK_RPAREN, ")", 15},
        {TK_LBRACE, "{", 17}, {TK_COMMENT, "  [R1]", 21}}},
      /* a load's brackets hold an expression */
      {"P64[Sp + 8]",
       {{TK_NAME, "P64", 0}, {TK_LBRACKET, "[", 3}, {TK_NAME, "Sp", 4}, {TK_NAME, "+", 7},
        {TK_NAME, "8", 9}, {TK_RBRACKET, "]", 10}}},
      /* statics list of an SRT: labels followed by ',' and ']' */
      {"[GHC.Show.$fShow(,)2_closure+1, GHC.Types.[]_closure+1]",
       {{TK_LBRACKET, "[", 0}, {TK_NAME, "GHC.Show.$fShow(,)2_closure+1", 1},
        {TK_COMMA, ",", 30}, {TK_NAME, "GHC.Types.[]_closure+1", 32},
        {TK_RBRACKET, "]", 54}}},
      /* a run of groups that no label character follows is punctuation */
      {"f()[] x",
       {{TK_NAME, "f", 0}, {TK_LPAREN, "(", 1}, {TK_RPAREN, ")", 2}, {TK_LBRACKET, "[", 3},
        {TK_RBRACKET, "]", 4}, {TK_NAME, "x", 6}}},
      /* (#) and (%) are no groups */
      {"(#)x",
       {{TK_LPAREN, "(", 0}, {TK_NAME, "#", 1}, {TK_RPAREN, ")", 2}, {TK_NAME, "x", 3}}},
  };
  lexes_as(cases, sizeof cases / sizeof *cases);
}

static void test_punctuation(void **state) {
  (void)state;
  Lexed *L = lex_all("{}[](),;");
  static const int kinds[] = {TK_LBRACE, TK_RBRACE, TK_LBRACKET, TK_RBRACKET,
                              TK_LPAREN, TK_RPAREN, TK_COMMA,    TK_SEMI};
  assert_int_equal(L->n, 8);
  for (int i = 0; i < 8; i++) {
    assert_int_equal(L->t[i].kind, kinds[i]);
    assert_int_equal(L->t[i].loc, (CmmLoc)i);
    assert_int_equal(L->t[i].len, 1);
  }
  lexed_free(L);
}

/* ---- comments ------------------------------------------------------------------- */

static void test_comments(void **state) {
  (void)state;
  static const LexCase cases[] = {
      {"c1K8: // c1JR/c1JY\n"
       "  //tick src<fib_ack.hs:15:19-25>\n"
       "  R1 = Main.//_info;\n"
       "  //\n"
       "  x //\tt\r\n"
       "  y",
       {{TK_NAME, "c1K8:", 0},
        {TK_COMMENT, " c1JR/c1JY", 8}, /* p/len: after the `//` */
        {TK_COMMENT, "tick src<fib_ack.hs:15:19-25>", 23},
        {TK_NAME, "R1", 55},
        {TK_NAME, "=", 58},
        {TK_NAME, "Main.//_info", 60}, /* the operator (//) as a Haskell name */
        {TK_SEMI, ";", 72},
        {TK_COMMENT, "", 78}, /* `//` alone at the end of a line */
        {TK_NAME, "x", 81},
        {TK_COMMENT, "\tt", 85}, /* the \r of a CRLF line is not in it */
        {TK_NAME, "y", 91}}},
  };
  lexes_as(cases, sizeof cases / sizeof *cases);

  /* `//` glued to a name at the start of a run is a name too */
  one_name("//_info");
  one_name("GHC.Base.//_closure+1");
}

/* A comment ends at its line: what follows on the next line is lexed again. */
static void test_comment_then_code(void **state) {
  (void)state;
  static const LexCase cases[] = {
      {"// [R2, R1]\n{ info_tbls:",
       {{TK_COMMENT, " [R2, R1]", 2}, {TK_LBRACE, "{", 12}, {TK_NAME, "info_tbls:", 14}}},
  };
  lexes_as(cases, sizeof cases / sizeof *cases);
}

/* ---- titles and lines ----------------------------------------------------------- */

static void test_title_and_timestamp(void **state) {
  (void)state;
  const char *text = "\n==================== Output Cmm ====================\n"
                     "2026-11-29 15:39:17.151249044 UTC\n"
                     "\n"
                     "[]";
  CmmSource *src = cmm_source_from_memory("t", text, strlen(text));
  Diag d = {0};
  CmmLexer lx;
  cmm_lex_init(&lx, src, &d);
  CmmToken t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_TITLE);
  assert_int_equal(t.loc, 1); /* the first '=' */
  assert_int_equal(t.len, 10);
  assert_memory_equal(t.p, "Output Cmm", 10);
  CmmToken line = cmm_lex_line(&lx);
  assert_int_equal(line.len, 33);
  assert_memory_equal(line.p, "2026-11-29 15:39:17.151249044 UTC", 33);
  assert_int_equal(line.loc, 54);
  t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_LBRACKET);
  assert_int_equal(t.loc, 89);
  t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_RBRACKET);
  t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_EOF);
  assert_int_equal(t.loc, strlen(text));
  assert_int_equal(d.errors, 0);
  cmm_source_free(src);
}

static void test_title_variants(void **state) {
  (void)state;
  static const LexCase cases[] = {
      /* CRLF, and a title of another pass */
      {"==================== Raw Cmm ====================\r\n[",
       {{TK_TITLE, "Raw Cmm", 0}, {TK_LBRACKET, "[", 51}}},
      {"==================== Post control-flow optimisations ====================",
       {{TK_TITLE, "Post control-flow optimisations", 0}}},
      /* not at the start of a line: a run of label characters like any other */
      {" ====================", {{TK_NAME, "====================", 1}}},
  };
  lexes_as(cases, sizeof cases / sizeof *cases);
}

static void test_lex_line(void **state) {
  (void)state;
  const char *text = "a   \r\nsecond line\r\nthird";
  CmmSource *src = cmm_source_from_memory("t", text, strlen(text));
  Diag d = {0};
  CmmLexer lx;
  cmm_lex_init(&lx, src, &d);
  CmmToken t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_NAME);
  CmmToken line = cmm_lex_line(&lx); /* skips the rest of "a" 's line */
  assert_int_equal(line.loc, 6);
  assert_int_equal(line.len, 11);
  assert_memory_equal(line.p, "second line", 11);
  t = cmm_lex_next(&lx);
  assert_int_equal(t.kind, TK_NAME);
  assert_int_equal(t.loc, 19);
  assert_int_equal(t.len, 5);
  cmm_source_free(src);
}

/* ---- locations and errors --------------------------------------------------------- */

static void test_locations(void **state) {
  (void)state;
  const char *text = "       c1Kb: // c1JR\n"
                     "           I64[Sp - 16] = stg_upd_frame_info;\n";
  CmmSource *src = cmm_source_from_memory("t", text, strlen(text));
  Lexed *L = lex_all(text);
  assert_int_equal(L->n, 11);
  tok_is(L, 0, TK_NAME, "c1Kb:", 7);
  tok_is(L, 2, TK_NAME, "I64", 32);
  tok_is(L, 9, TK_NAME, "stg_upd_frame_info", 47);
  uint32_t line, col;
  cmm_source_linecol(src, L->t[9].loc, &line, &col);
  assert_int_equal(line, 2);
  assert_int_equal(col, 27);
  cmm_source_linecol(src, L->t[0].loc, &line, &col);
  assert_int_equal(line, 1);
  assert_int_equal(col, 8);
  lexed_free(L);
  cmm_source_free(src);
}

static void test_unexpected_byte(void **state) {
  (void)state;
  Lexed *L = lex_all("R1 = R2\x01;");
  assert_int_equal(L->n, 4);
  assert_int_equal(L->t[3].kind, TK_ERROR);
  assert_int_equal(L->t[3].loc, 7);
  assert_int_equal(L->d.errors, 1);
  lexed_free(L);
}

static void test_unterminated_string(void **state) {
  (void)state;
  Lexed *L = lex_all("I8[] \"Main\nx");
  assert_int_equal(L->n, 4);
  assert_int_equal(L->t[3].kind, TK_ERROR);
  assert_int_equal(L->t[3].loc, 5);
  assert_int_equal(L->d.errors, 1);
  lexed_free(L);
  /* an escaped quote does not end the string */
  L = lex_all("\"a\\\"");
  assert_int_equal(L->t[L->n - 1].kind, TK_ERROR);
  lexed_free(L);
  L = lex_all("\"a\\\"b\" c");
  assert_int_equal(L->n, 2);
  tok_is(L, 0, TK_STRING, "\"a\\\"b\"", 0);
  lexed_free(L);
}

static void test_is_label_char(void **state) {
  (void)state;
  for (const char *p = "azAZ09_$.#'!%&*+/<=>?@\\^|~:-`"; *p; p++)
    if (!cmm_is_label_char((unsigned char)*p)) fail_msg("'%c' is a label character", *p);
  for (const char *p = " \t\n\r()[]{},;\""; *p; p++)
    if (cmm_is_label_char((unsigned char)*p)) fail_msg("'%c' is not a label character", *p);
  assert_false(cmm_is_label_char(0));
  assert_false(cmm_is_label_char(0x01));
  assert_false(cmm_is_label_char(0x7f));
  assert_true(cmm_is_label_char(0x80));
  assert_true(cmm_is_label_char(0xC3));
  assert_true(cmm_is_label_char(0xFF));
  assert_false(cmm_is_label_char(-1)); /* EOF */
}

/* ---- strings ------------------------------------------------------------------------ */

static void test_decode_plain(void **state) {
  (void)state;
  decodes_to("\"Main\"", "Main", 4);
  decodes_to("\"\"", "", 0);
  decodes_to("\"main:Main.Node\"", "main:Main.Node", 14);
  decodes_to("\"tab\\there \\\"q\\\" \\195\\188ber\\\\ end\"",
             "tab\there \"q\" \xc3\xbc" "ber\\ end", 23);
}

static void test_decode_escapes(void **state) {
  (void)state;
  decodes_to("\"\\195\\188\"", "\xc3\xbc", 2);
  decodes_to("\"\\200\\&1\"", "\xc8" "1", 2);   /* \& ends a numeric escape before a digit */
  decodes_to("\"a\\&b\"", "ab", 2);
  decodes_to("\"\\SOH\"", "\x01", 1);
  decodes_to("\"\\SO\\&H\"", "\x0e" "H", 2);   /* \SO then H, not \SOH */
  decodes_to("\"\\SOx\"", "\x0e" "x", 2);
  decodes_to("\"\\^A\\^@\\^_\"", "\x01\x00\x1f", 3);
  decodes_to("\"\\x41\\x7e\\xfF\"", "A~\xff", 3);
  decodes_to("\"\\o101\"", "A", 1);
  decodes_to("\"\\DEL\"", "\x7f", 1);
  decodes_to("\"\\NUL\\SP\\ESC\\US\"", "\x00 \x1b\x1f", 4);
  decodes_to("\"\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\'\"", "\a\b\f\n\r\t\v\\\"'", 10);
  decodes_to("\"\\0\\255\"", "\x00\xff", 2);
}

static void test_decode_string_gap(void **state) {
  (void)state;
  decodes_to("\"ab\\   \\cd\"", "abcd", 4);
  decodes_to("\"ab\\\t\\cd\"", "abcd", 4);
}

static void test_decode_errors(void **state) {
  (void)state;
  rejects("\"Ma\\qin\"", 3);  /* not an escape */
  rejects("\"caf\\256\"", 4); /* not a byte */
  rejects("\"\\1114112\"", 1);
  rejects("\"\\x100\"", 1);
  rejects("\"\\x\"", 1);      /* no digits */
  rejects("\"\\o8\"", 1);
  rejects("\"ab\\  cd\"", 3); /* a gap must end with a backslash */
  rejects("\"\\^a\"", 1);     /* \^ takes @ A-Z [ \ ] ^ _ */
}

static void test_print_string(void **state) {
  (void)state;
  prints_as("Main", 4, "\"Main\"");
  prints_as("", 0, "\"\"");
  prints_as("tab\there \"q\" \xc3\xbc" "ber\\ end", 23,
            "\"tab\\there \\\"q\\\" \\195\\188ber\\\\ end\"");
  prints_as("\xc8" "1", 2, "\"\\200\\&1\"");
  prints_as("\xc8" "x", 2, "\"\\200x\"");
  prints_as("\x0e" "H", 2, "\"\\SO\\&H\"");
  prints_as("\x0e" "I", 2, "\"\\SOI\"");
  prints_as("\x01" "2", 2, "\"\\SOH2\"");
  prints_as("\x7f", 1, "\"\\DEL\"");
  prints_as("\x00", 1, "\"\\NUL\"");
  prints_as("\x1b\x1f", 2, "\"\\ESC\\US\"");
  prints_as("\a\b\t\n\v\f\r", 7, "\"\\a\\b\\t\\n\\v\\f\\r\"");
  prints_as("'", 1, "\"'\"");
}

/* Every byte, next to every kind of neighbour, prints to a literal that decodes back. */
static void test_round_trip_all_bytes(void **state) {
  (void)state;
  Arena *a = arena_new();
  static const uint8_t neighbours[] = {'0', '9', 'H', 'a', 0x0e, 0xc3, '\\', '"', ' ', 0};
  for (unsigned c = 0; c < 256; c++)
    for (size_t k = 0; k < sizeof neighbours; k++) {
      uint8_t in[3] = {(uint8_t)c, neighbours[k], (uint8_t)c};
      char *lit = printed(in, 3);
      uint8_t *bytes = NULL;
      uint32_t len = 0;
      unsigned errors;
      if (!decode(lit, &bytes, &len, a, &errors))
        fail_msg("byte %u before %u printed as %s, which does not decode", c, neighbours[k], lit);
      if (len != 3 || memcmp(bytes, in, 3) != 0)
        fail_msg("byte %u before %u printed as %s, which decodes to %u bytes", c, neighbours[k],
                 lit, len);
      free(lit);
    }
  /* and all 256 in one literal */
  uint8_t all[256];
  for (unsigned c = 0; c < 256; c++) all[c] = (uint8_t)c;
  char *lit = printed(all, 256);
  uint8_t *bytes = NULL;
  uint32_t len = 0;
  unsigned errors;
  assert_true(decode(lit, &bytes, &len, a, &errors));
  assert_int_equal(len, 256);
  assert_memory_equal(bytes, all, 256);
  /* the printed literal is one line of printable ASCII */
  for (const char *p = lit; *p; p++) assert_true(*p >= 0x20 && *p < 0x7f);
  free(lit);
  arena_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_labels_with_symbols),
      cmocka_unit_test(test_label_in_context),
      cmocka_unit_test(test_brackets_not_swallowed),
      cmocka_unit_test(test_punctuation),
      cmocka_unit_test(test_comments),
      cmocka_unit_test(test_comment_then_code),
      cmocka_unit_test(test_title_and_timestamp),
      cmocka_unit_test(test_title_variants),
      cmocka_unit_test(test_lex_line),
      cmocka_unit_test(test_locations),
      cmocka_unit_test(test_unexpected_byte),
      cmocka_unit_test(test_unterminated_string),
      cmocka_unit_test(test_is_label_char),
      cmocka_unit_test(test_decode_plain),
      cmocka_unit_test(test_decode_escapes),
      cmocka_unit_test(test_decode_string_gap),
      cmocka_unit_test(test_decode_errors),
      cmocka_unit_test(test_print_string),
      cmocka_unit_test(test_round_trip_all_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
