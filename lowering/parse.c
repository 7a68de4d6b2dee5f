/* parse.c — recursive descent from GHC 9.0.2's printed Cmm to CmmFile.
 *
 * The approach.  GHC's Cmm printer (GHC.Cmm.Ppr*) is meant for people: it leaves
 * widths out, prints bitwise operators without parentheses and tighter than
 * comparisons, glues symbols into labels, and wraps long statements.  So:
 *
 *  - the lexer is free-form (newlines are spaces) except for `//` comments, which
 *    carry the block scopes, the live registers of a proc header and the ticks;
 *  - a NAME token is a run of label characters, classified by its spelling and its
 *    position (parse_expr.c): number, register, label, label+offset, label
 *    difference (statics only), or a glued prefix operator;
 *  - expressions follow GHC's printing precedence, loosest first:
 *      level 1  == != < > <= >= << >>   one operator, no associativity
 *      level 7  + -                      left-associative
 *      level 8  * / %                    left-associative
 *      level 9  & | ^, prefix - ~        tightest; nested ones are printed bare, so
 *                                        a run that mixes them has several meanings
 *                                        and is refused (Note [Bitwise chains])
 *  - bare names in value position are labels; once a proc is parsed, those naming one
 *    of its blocks become block labels (ps_resolve_proc), and every goto target must
 *    be one of its blocks;
 *  - the first error ends the parse: it is reported with its location and the parser
 *    unwinds (longjmp) to cmm_parse, which frees the arena.  Every node is in the arena,
 *    so unwinding leaks nothing.
 *
 * Each parse function carries the grammar rule it implements; docs/cmm-syntax.md
 * collects them.  The parser is split by concern (parse.h names each file's part):
 * this file has the tokens, errors and numbers every part uses, and the entry points;
 * parse_expr.c the expressions, parse_stmt.c the statements and blocks, parse_decl.c
 * the procs, data sections and the file's structure.
 */
#include "parse.h"

#include <stdarg.h>
#include <stdlib.h>

/* ---- tokens and errors ------------------------------------------------------------ */

_Noreturn void ps_fail_at(Parser *P, CmmLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(P->d, P->src, loc, fmt, ap);
  va_end(ap);
  longjmp(P->fail, 1);
}

const char *ps_describe(Parser *P, CmmToken t) {
  switch (t.kind) {
  case TK_EOF: return P->in_comment ? "the end of the comment" : "end of file";
  case TK_TITLE: return "a section title";
  case TK_COMMENT:
    return t.len >= 4 && memcmp(t.p, "tick", 4) == 0 ? "a tick" : "a comment";
  case TK_STRING:
    if (t.len > 40) return "a string literal";
    /* fallthrough */
  default: {
    uint32_t n = t.len > 40 ? 40 : t.len;
    return arena_printf(P->a, "'%.*s%s'", (int)n, t.p, t.len > n ? "…" : "");
  }
  }
}

_Noreturn void ps_expected(Parser *P, const char *what) {
  diag_error(P->d, P->src, P->tok.loc, "expected %s, got %s", what, ps_describe(P, P->tok));
  if (P->tok.kind == TK_EOF && !P->in_comment && P->open_what)
    diag_note(P->d, P->src, P->open_loc, "%s started here", P->open_what);
  longjmp(P->fail, 1);
}

/* ---- numbers ---------------------------------------------------------------------- */

uint64_t ps_magnitude(Parser *P, const char *p, size_t n, CmmLoc loc) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned dgt = (unsigned)(p[i] - '0');
    if (v > (UINT64_MAX - dgt) / 10)
      ps_fail_at(P, loc, "integer literal '%.*s' does not fit in 64 bits", (int)n, p);
    v = v * 10 + dgt;
  }
  return v;
}

/* int := ['-'] digits */
CmmInt ps_int_tok(Parser *P, const char *what) {
  CmmToken t = P->tok;
  bool neg = t.kind == TK_NAME && t.len > 1 && t.p[0] == '-';
  if (t.kind != TK_NAME || !all_digits(t.p + neg, t.len - neg)) ps_expected(P, what);
  CmmInt v = {ps_magnitude(P, t.p + neg, t.len - neg, t.loc), neg};
  if (neg && v.mag > (uint64_t)INT64_MAX + 1)
    ps_fail_at(P, t.loc, "integer literal '%.*s' does not fit in 64 bits", (int)t.len, t.p);
  if (v.mag == 0) v.neg = false;
  next(P);
  return v;
}

uint32_t ps_u32(Parser *P, const char *what) {
  CmmLoc loc = P->tok.loc;
  CmmInt v = ps_int_tok(P, what);
  if (v.neg || v.mag > UINT32_MAX)
    ps_fail_at(P, loc, "expected %s, got a number out of range", what);
  return (uint32_t)v.mag;
}

int64_t ps_i64(Parser *P, const char *what) {
  CmmLoc loc = P->tok.loc;
  CmmInt v = ps_int_tok(P, what);
  if (!v.neg && v.mag > INT64_MAX)
    ps_fail_at(P, loc, "expected %s, got a number out of range", what);
  return v.neg ? (int64_t)(0 - v.mag) : (int64_t)v.mag;
}

/* width := W8 | W16 | W32 | W64 | W128 | W256 | W512 */
uint16_t ps_width_digits(const char *p, size_t n) {
  if (n < 1 || n > 3 || !all_digits(p, n)) return 0;
  unsigned v = 0;
  for (size_t i = 0; i < n; i++) v = v * 10 + (unsigned)(p[i] - '0');
  return v == 8 || v == 16 || v == 32 || v == 64 || v == 128 || v == 256 || v == 512
             ? (uint16_t)v : 0;
}

uint16_t ps_width(Parser *P) {
  uint16_t w = 0;
  if (P->tok.kind == TK_NAME && P->tok.len > 1 && P->tok.p[0] == 'W')
    w = ps_width_digits(P->tok.p + 1, P->tok.len - 1);
  if (!w) ps_expected(P, "a width (W8, W16, W32, W64, …)");
  next(P);
  return w;
}

/* type := I8 … I512 | P32 | P64 | F32 | F64 */
bool ps_type_of(const char *p, size_t n, CmmType *t) {
  if (n < 2) return false;
  uint16_t w = ps_width_digits(p + 1, n - 1);
  switch (p[0]) {
  case 'I': *t = (CmmType){CMM_BITS, w}; return w != 0;
  case 'P': *t = (CmmType){CMM_GCPTR, w}; return w == 32 || w == 64;
  case 'F': *t = (CmmType){CMM_FLOAT, w}; return w == 32 || w == 64;
  default: return false;
  }
}

bool ps_memory_type(CmmToken t, CmmType *ty, bool *unaligned, bool *relaxed) {
  *unaligned = t.len > 2 && t.p[t.len - 1] == '^';
  *relaxed = t.len > 2 && t.p[t.len - 1] == '!';
  return ps_type_of(t.p, t.len - (*unaligned || *relaxed), ty);
}

int ps_global_reg(const char *p, size_t n) {
  for (int r = 0; r < CMM_NUM_GLOBAL_REGS; r++)
    if (cmm_global_regs[r].len == n && cmm_global_regs[r].name[0] == p[0] &&
        memcmp(cmm_global_regs[r].name, p, n) == 0)
      return r;
  return -1;
}

/* ---- the entry points ------------------------------------------------------------- */
CmmFile *cmm_parse(const CmmSource *src, Diag *d) {
  CmmFile *volatile f = calloc(1, sizeof *f);
  if (!f) internal_error("out of memory");
  f->src = src;
  f->arena = arena_new();
  Parser *P = calloc(1, sizeof *P);
  if (!P) internal_error("out of memory");
  P->src = src;
  P->d = d;
  P->a = f->arena;
  cmm_lex_init(&P->lx, src, d);
  if (memchr(src->text, '\0', src->len)) {
    diag_error(d, src, (CmmLoc)((const char *)memchr(src->text, '\0', src->len) - src->text),
               "NUL byte in the input (is this a Cmm dump?)");
    free(P);
    cmm_file_free(f);
    return NULL;
  }
  if (setjmp(P->fail)) {
    free(P);
    cmm_file_free(f);
    return NULL;
  }
  ps_file(P, f);
  free(P);
  return f;
}

void cmm_file_free(CmmFile *f) {
  if (!f) return;
  arena_free(f->arena);
  free(f);
}

CmmExpr *cmm_parse_expr(const CmmSource *src, Arena *a, Diag *d) {
  Parser *P = calloc(1, sizeof *P);
  if (!P) internal_error("out of memory");
  P->src = src;
  P->d = d;
  P->a = a;
  cmm_lex_init(&P->lx, src, d);
  CmmExpr *volatile e = NULL;
  if (!setjmp(P->fail)) {
    next(P);
    e = ps_expr(P);
    if (P->tok.kind != TK_EOF) ps_expected(P, "the end of the expression");
  }
  free(P);
  return e;
}
