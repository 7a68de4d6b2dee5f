/* parse.c — recursive descent from GHC 9.0.2's printed Cmm to CmmFile.
 *
 * The approach.  GHC's Cmm printer (GHC.Cmm.Ppr*) is meant for people: it leaves
 * widths out, prints bitwise operators without parentheses and tighter than
 * comparisons, glues symbols into labels, and wraps long statements.  So:
 *
 *  - the lexer is free-form (newlines are spaces) except for `//` comments, which
 *    carry the block scopes, the live registers of a proc header and the ticks;
 *  - a NAME token is a run of label characters, classified here by its spelling and
 *    its position (classify_operand): number, register, label, label+offset,
 *    label difference (statics only), or a glued prefix operator;
 *  - expressions follow GHC's printing precedence, loosest first:
 *      level 1  == != < > <= >= << >>   one operator, no associativity
 *      level 7  + -                      left-associative
 *      level 8  * / %                    left-associative
 *      level 9  & | ^, prefix - ~        tightest; nested ones are printed bare, so
 *                                        a run that mixes them has several meanings
 *                                        and is refused (Note [Bitwise chains])
 *  - bare names in value position are labels; once a proc is parsed, those naming one
 *    of its blocks become block labels (resolve_proc), and every goto target must be
 *    one of its blocks;
 *  - the first error ends the parse: it is reported with its location and the parser
 *    unwinds (longjmp) to cmm_parse, which frees the arena.  Every node is in the arena,
 *    so unwinding leaks nothing.
 *
 * Each parse function carries the grammar rule it implements; docs/cmm-syntax.md
 * collects them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "cmm.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
  CmmLexer lx;
  CmmToken tok;      /* the current token */
  const CmmSource *src;
  Diag *d;
  Arena *a;
  jmp_buf fail;
  /* per proc: its blocks by name, and the labels to resolve once all are known */
  StrMap blocks;
  VEC(CmmExpr *) labels;
  bool in_static;    /* label differences are allowed */
  bool in_comment;   /* lexing inside a `//` comment (the live registers) */
  const char *open_what; /* the construct being parsed, for a note at end of file */
  CmmLoc open_loc;
  VEC(CmmLoc) block_locs; /* per proc: where each block is defined */
  unsigned depth;    /* of nested expressions: deep input must not overflow our stack */
  const char *proc;  /* the procedure being parsed, or NULL */
} Parser;

/* The height of an expression tree: nesting and operator chains both count. */
enum { MAX_DEPTH = 1000 };

/* The prefix operators glued to one operand. */
enum { PREFIX_NEG = 1, PREFIX_NOT = 2 };

/* ---- tokens and errors ------------------------------------------------------------ */

static void next(Parser *P) {
  P->tok = cmm_lex_next(&P->lx);
  if (P->tok.kind == TK_ERROR) longjmp(P->fail, 1); /* the lexer reported it */
}

static _Noreturn void fail_at(Parser *P, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static _Noreturn void fail_at(Parser *P, CmmLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(P->d, P->src, loc, fmt, ap);
  va_end(ap);
  longjmp(P->fail, 1);
}

/* How a token reads in "got X". */
static const char *describe(Parser *P, CmmToken t) {
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

static _Noreturn void expected(Parser *P, const char *what) {
  diag_error(P->d, P->src, P->tok.loc, "expected %s, got %s", what, describe(P, P->tok));
  if (P->tok.kind == TK_EOF && !P->in_comment && P->open_what)
    diag_note(P->d, P->src, P->open_loc, "%s started here", P->open_what);
  longjmp(P->fail, 1);
}

static bool is_name(const Parser *P, const char *s) {
  size_t n = strlen(s);
  return P->tok.kind == TK_NAME && P->tok.len == n && memcmp(P->tok.p, s, n) == 0;
}

static void expect_kind(Parser *P, int kind, const char *what) {
  if (P->tok.kind != kind) expected(P, what);
  next(P);
}

static void expect_name(Parser *P, const char *s) {
  if (!is_name(P, s)) expected(P, arena_printf(P->a, "'%s'", s));
  next(P);
}

static char *tok_str(Parser *P, CmmToken t) { return arena_strndup(P->a, t.p, t.len); }

/* A token inside a comment: a lexer over [p, end) of the same source. */
static void sub_lexer(Parser *P, CmmLexer *lx, const char *p, const char *end) {
  cmm_lex_init(lx, P->src, P->d);
  lx->p = p;
  lx->end = end;
}

/* ---- numbers ---------------------------------------------------------------------- */

static bool all_digits(const char *p, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++)
    if (p[i] < '0' || p[i] > '9') return false;
  return true;
}

/* Decimal magnitude; fails on overflow past 2^64-1. */
static uint64_t parse_magnitude(Parser *P, const char *p, size_t n, CmmLoc loc) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned dgt = (unsigned)(p[i] - '0');
    if (v > (UINT64_MAX - dgt) / 10)
      fail_at(P, loc, "integer literal '%.*s' does not fit in 64 bits", (int)n, p);
    v = v * 10 + dgt;
  }
  return v;
}

/* int := ['-'] digits */
static CmmInt parse_int_tok(Parser *P, const char *what) {
  CmmToken t = P->tok;
  bool neg = t.kind == TK_NAME && t.len > 1 && t.p[0] == '-';
  if (t.kind != TK_NAME || !all_digits(t.p + neg, t.len - neg)) expected(P, what);
  CmmInt v = {parse_magnitude(P, t.p + neg, t.len - neg, t.loc), neg};
  if (neg && v.mag > (uint64_t)INT64_MAX + 1)
    fail_at(P, t.loc, "integer literal '%.*s' does not fit in 64 bits", (int)t.len, t.p);
  if (v.mag == 0) v.neg = false;
  next(P);
  return v;
}

static uint32_t parse_u32(Parser *P, const char *what) {
  CmmLoc loc = P->tok.loc;
  CmmInt v = parse_int_tok(P, what);
  if (v.neg || v.mag > UINT32_MAX) fail_at(P, loc, "expected %s, got a number out of range", what);
  return (uint32_t)v.mag;
}

static int64_t parse_i64(Parser *P, const char *what) {
  CmmLoc loc = P->tok.loc;
  CmmInt v = parse_int_tok(P, what);
  if (!v.neg && v.mag > INT64_MAX) fail_at(P, loc, "expected %s, got a number out of range", what);
  return v.neg ? (int64_t)(0 - v.mag) : (int64_t)v.mag;
}

/* width := W8 | W16 | W32 | W64 | W128 | W256 | W512 */
static uint16_t width_digits(const char *p, size_t n) {
  if (n < 1 || n > 3 || !all_digits(p, n)) return 0;
  unsigned v = 0;
  for (size_t i = 0; i < n; i++) v = v * 10 + (unsigned)(p[i] - '0');
  return v == 8 || v == 16 || v == 32 || v == 64 || v == 128 || v == 256 || v == 512
             ? (uint16_t)v : 0;
}

static uint16_t parse_width(Parser *P) {
  uint16_t w = 0;
  if (P->tok.kind == TK_NAME && P->tok.len > 1 && P->tok.p[0] == 'W')
    w = width_digits(P->tok.p + 1, P->tok.len - 1);
  if (!w) expected(P, "a width (W8, W16, W32, W64, …)");
  next(P);
  return w;
}

/* type := I8 … I512 | P32 | P64 | F32 | F64 */
static bool type_of(const char *p, size_t n, CmmType *t) {
  if (n < 2) return false;
  uint16_t w = width_digits(p + 1, n - 1);
  switch (p[0]) {
  case 'I': *t = (CmmType){CMM_BITS, w}; return w != 0;
  case 'P': *t = (CmmType){CMM_GCPTR, w}; return w == 32 || w == 64;
  case 'F': *t = (CmmType){CMM_FLOAT, w}; return w == 32 || w == 64;
  default: return false;
  }
}

static int global_reg_of(const char *p, size_t n) {
  for (int r = 0; r < CMM_NUM_GLOBAL_REGS; r++)
    if (cmm_global_regs[r].len == n && cmm_global_regs[r].name[0] == p[0] &&
        memcmp(cmm_global_regs[r].name, p, n) == 0)
      return r;
  return -1;
}

static bool tok_is_def(CmmToken t) { /* `label:` but not `x::` */
  return t.kind == TK_NAME && t.len >= 2 && t.p[t.len - 1] == ':' && t.p[t.len - 2] != ':';
}

/* ---- expressions ------------------------------------------------------------------ */

static CmmExpr *new_expr(Parser *P, int kind, CmmLoc loc) {
  CmmExpr *e = arena_alloc(P->a, sizeof *e);
  e->kind = (uint8_t)kind;
  e->loc = loc;
  return e;
}

static CmmExpr *parse_expr(Parser *P);
static CmmExpr *parse_unary(Parser *P, unsigned *prefixes);

/* A label names a closure, an info table, a string … : `_closure`, `_info`, `_str`. */
static bool has_label_suffix(const char *p, size_t n) {
  size_t i = n;
  while (i > 0 && p[i - 1] >= 'a' && p[i - 1] <= 'z') i--;
  return i < n && i > 1 && p[i - 1] == '_';
}

/* label := name ['+' digits | '-' digits]
 * static label := name '-' name [offset]   (a difference; both names end in a suffix) */
static CmmExpr *label_expr(Parser *P, CmmToken t, bool allow_diff) {
  CmmExpr *e = new_expr(P, CMM_E_LABEL, t.loc);
  size_t n = t.len, i = n;
  while (i > 0 && t.p[i - 1] >= '0' && t.p[i - 1] <= '9') i--;
  if (i < n && i >= 2 && (t.p[i - 1] == '+' || t.p[i - 1] == '-') && t.p[i - 2] != '+' &&
      t.p[i - 2] != '-') {
    uint64_t mag = parse_magnitude(P, t.p + i, n - i, t.loc + (CmmLoc)i);
    if (mag > INT64_MAX) fail_at(P, t.loc + (CmmLoc)i, "label offset out of range");
    e->u.label.offset = t.p[i - 1] == '-' ? -(int64_t)mag : (int64_t)mag;
    n = i - 1;
  }
  if (allow_diff)
    for (size_t j = 1; j + 1 < n; j++)
      if (t.p[j] == '-' && has_label_suffix(t.p, j) && has_label_suffix(t.p + j + 1, n - j - 1)) {
        e->kind = CMM_E_LABEL_DIFF;
        e->u.label.name2 = arena_strndup(P->a, t.p + j + 1, n - j - 1);
        n = j;
        break;
      }
  e->u.label.name = arena_strndup(P->a, t.p, n);
  if (e->kind == CMM_E_LABEL) vec_push(P->a, &P->labels, e);
  return e;
}

/* number := digits [':: ' width] | float ':: ' width    (float: digits with . or e,
 *           Infinity, NaN; `-` glued in front for negative values) */
static CmmExpr *number_expr(Parser *P, CmmToken t) {
  bool neg = t.p[0] == '-';
  const char *p = t.p + neg;
  size_t n = t.len - neg;
  CmmExpr *e;
  if (all_digits(p, n)) {
    e = new_expr(P, CMM_E_INT, t.loc);
    e->u.i.mag = parse_magnitude(P, p, n, t.loc);
    e->u.i.neg = neg && e->u.i.mag != 0;
    if (neg && e->u.i.mag > (uint64_t)INT64_MAX + 1)
      fail_at(P, t.loc, "integer literal '%.*s' does not fit in 64 bits", (int)t.len, t.p);
    e->type = (CmmType){CMM_BITS, CMM_WORD_WIDTH};
  } else {
    char *spelling = tok_str(P, t), *end;
    errno = 0;
    double v = strtod(spelling, &end);
    const char *sp = spelling + neg;
    bool named = strcmp(sp, "Infinity") == 0 || strcmp(sp, "NaN") == 0;
    if (*end || (!named && (n == 0 || p[0] < '0' || p[0] > '9')))
      fail_at(P, t.loc, "malformed number '%s'", spelling);
    e = new_expr(P, CMM_E_FLOAT, t.loc);
    e->u.f.spelling = spelling;
    e->u.f.value = v;
    e->type.cat = CMM_FLOAT;
  }
  next(P);
  if (is_name(P, "::")) {
    next(P);
    e->type.width = parse_width(P);
    if (e->kind == CMM_E_FLOAT && e->type.width != 32 && e->type.width != 64)
      fail_at(P, t.loc, "a float literal must be W32 or W64");
  } else if (e->kind == CMM_E_FLOAT) {
    expected(P, "':: W64' or ':: W32' after a float literal");
  }
  return e;
}

static bool is_alnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A run of symbols alone (`-`, `==`) is an operator, never an operand: a label named
 * by an operator always has a suffix (`GHC.Num.-_info`). */
static bool only_symbols(CmmToken t) {
  for (uint32_t i = 0; i < t.len; i++)
    if (is_alnum((unsigned char)t.p[i]) || t.p[i] == '_' || (unsigned char)t.p[i] >= 0x80)
      return false;
  return true;
}

/* A run that starts with `-` or `~` is a prefix operator glued to its operand (`-I64[…]`,
 * `~~R1`, `-_s1::I64`), unless it is a label whose name is an operator
 * (`-->_r1Ab_closure`): then a symbol or `_` follows, the run ends in a label suffix
 * (before any offset), and there is no `::` (which only a register has). */
static bool is_glued_prefix(CmmToken t) {
  if (t.len < 2 || (t.p[0] != '-' && t.p[0] != '~')) return false;
  unsigned char c = (unsigned char)t.p[1];
  if (is_alnum(c) || c == '%' || c >= 0x80 || memmem(t.p, t.len, "::", 2)) return true;
  size_t n = t.len;
  while (n > 0 && t.p[n - 1] >= '0' && t.p[n - 1] <= '9') n--;
  if (n < t.len && n > 0 && (t.p[n - 1] == '+' || t.p[n - 1] == '-')) n--;
  else n = t.len;
  return !has_label_suffix(t.p, n);
}

/* machop := '%MO_' name '_W' n ['_W' n] '(' expr {',' expr} ')' */
static CmmExpr *named_machop(Parser *P, CmmToken t) {
  const char *p = t.p + 4; /* after %MO_ */
  size_t n = t.len - 4;
  for (int op = 0; op < CMM_NUM_MACHOPS; op++) {
    const CmmMachOpInfo *mi = &cmm_machops[op];
    size_t l = strlen(mi->name);
    if (n < l + 3 || memcmp(p, mi->name, l) != 0 || memcmp(p + l, "_W", 2) != 0) continue;
    const char *w = p + l + 2, *end = p + n;
    const char *sep = mi->nwidths == 2 ? memmem(w, (size_t)(end - w), "_W", 2) : end;
    if (!sep) continue;
    uint16_t w1 = width_digits(w, (size_t)(sep - w));
    uint16_t w2 = mi->nwidths == 2 ? width_digits(sep + 2, (size_t)(end - sep - 2)) : w1;
    if (!w1 || !w2) continue;
    CmmExpr *e = new_expr(P, CMM_E_MACHOP, t.loc);
    e->u.mo.op = (uint8_t)op;
    e->u.mo.named = true;
    e->u.mo.w = w1;
    e->u.mo.w2 = w2;
    next(P);
    expect_kind(P, TK_LPAREN, "'(' after a MachOp");
    e->u.mo.nargs = mi->arity;
    e->u.mo.args = arena_alloc(P->a, mi->arity * sizeof *e->u.mo.args);
    for (unsigned i = 0; i < mi->arity; i++) {
      if (i && P->tok.kind != TK_COMMA)
        expected(P, arena_printf(P->a, "',' (%%MO_%s takes %u operands)", mi->name, mi->arity));
      if (i) next(P);
      e->u.mo.args[i] = parse_expr(P);
    }
    if (P->tok.kind != TK_RPAREN)
      expected(P, arena_printf(P->a, "')' (%%MO_%s takes %u operand%s)", mi->name, mi->arity,
                               mi->arity == 1 ? "" : "s"));
    next(P);
    return e;
  }
  fail_at(P, t.loc, "unknown MachOp '%.*s'", (int)t.len, t.p);
}

/* atom := '(' expr ')' | machop | type '[' expr ']' | global | local | number | label */
static CmmExpr *parse_atom_(Parser *P);
static CmmExpr *parse_atom(Parser *P) {
  if (++P->depth > MAX_DEPTH) fail_at(P, P->tok.loc, "expression nested too deeply");
  CmmExpr *e = parse_atom_(P);
  P->depth--;
  return e;
}

static CmmExpr *parse_atom_(Parser *P) {
  CmmToken t = P->tok;
  if (t.kind == TK_LPAREN) {
    next(P);
    CmmExpr *e = parse_expr(P);
    expect_kind(P, TK_RPAREN, "')'");
    /* `(Sp + 8)`: GHC prints a register plus a constant this way (CmmRegOff). */
    if (e->kind == CMM_E_MACHOP && e->u.mo.op == CMM_MO_ADD && !e->u.mo.named &&
        (e->u.mo.args[0]->kind == CMM_E_GLOBAL || e->u.mo.args[0]->kind == CMM_E_LOCAL) &&
        e->u.mo.args[1]->kind == CMM_E_INT && e->u.mo.args[1]->type.width == CMM_WORD_WIDTH &&
        e->u.mo.args[1]->u.i.mag <= INT64_MAX) {
      CmmExpr *r = new_expr(P, CMM_E_REGOFF, t.loc);
      CmmInt off = e->u.mo.args[1]->u.i;
      r->u.regoff.reg = e->u.mo.args[0];
      r->u.regoff.offset = off.neg ? -(int64_t)off.mag : (int64_t)off.mag;
      return r;
    }
    return e;
  }
  if (t.kind != TK_NAME || tok_is_def(t) || only_symbols(t)) expected(P, "an expression");
  if (t.len > 4 && memcmp(t.p, "%MO_", 4) == 0) return named_machop(P, t);
  if ((is_glued_prefix(t) && !(t.p[1] >= '0' && t.p[1] <= '9')) ||
      (t.len == 1 && (t.p[0] == '-' || t.p[0] == '~') && P->lx.p < P->lx.end && *P->lx.p == '(')) {
    unsigned prefixes = 0;
    return parse_unary(P, &prefixes);
  }

  CmmType ty;
  if (P->lx.p < P->lx.end && *P->lx.p == '[' && type_of(t.p, t.len, &ty)) {
    CmmExpr *e = new_expr(P, CMM_E_LOAD, t.loc);
    e->type = ty;
    next(P);
    expect_kind(P, TK_LBRACKET, "'['");
    e->u.load.addr = parse_expr(P);
    expect_kind(P, TK_RBRACKET, "']' to close the load");
    return e;
  }
  int r = global_reg_of(t.p, t.len);
  if (r >= 0) {
    CmmExpr *e = new_expr(P, CMM_E_GLOBAL, t.loc);
    e->u.global.reg = (uint8_t)r;
    e->type = cmm_global_regs[r].type;
    next(P);
    return e;
  }
  const char *dc = memmem(t.p, t.len, "::", 2);
  if (dc) {
    size_t nl = (size_t)(dc - t.p), tl = t.len - nl - 2;
    if (nl == 0) fail_at(P, t.loc, "expected a register name before '::'");
    if (!type_of(dc + 2, tl, &ty))
      fail_at(P, t.loc + (CmmLoc)nl + 2, "expected a type (I64, P64, F64, …), got '%.*s'",
              (int)tl, dc + 2);
    CmmExpr *e = new_expr(P, CMM_E_LOCAL, t.loc);
    e->u.local.name = arena_strndup(P->a, t.p, nl);
    e->type = ty;
    next(P);
    return e;
  }
  bool neg = t.p[0] == '-' && t.len > 1;
  if ((t.p[neg] >= '0' && t.p[neg] <= '9') ||
      ((t.len - neg == 8 && memcmp(t.p + neg, "Infinity", 8) == 0) ||
       (t.len - neg == 3 && memcmp(t.p + neg, "NaN", 3) == 0)))
    return number_expr(P, t);
  next(P);
  return label_expr(P, t, P->in_static);
}

/* unary := '-' unary | '~' unary | atom       (the operator glued to its operand)
 * Adds the prefixes read (PREFIX_NEG, PREFIX_NOT) to *prefixes. */
static CmmExpr *parse_unary(Parser *P, unsigned *prefixes) {
  CmmToken t = P->tok;
  /* `-(-8)`: the operator alone, glued to a parenthesis */
  bool alone = t.kind == TK_NAME && t.len == 1 && (t.p[0] == '-' || t.p[0] == '~') &&
               P->lx.p < P->lx.end && *P->lx.p == '(';
  if (!alone && (t.kind != TK_NAME || !is_glued_prefix(t) ||
                 (t.p[0] == '-' && t.p[1] >= '0' && t.p[1] <= '9')))
    return parse_atom(P);
  CmmExpr *e = new_expr(P, CMM_E_MACHOP, t.loc);
  e->u.mo.op = t.p[0] == '-' ? CMM_MO_S_NEG : CMM_MO_NOT;
  *prefixes |= t.p[0] == '-' ? PREFIX_NEG : PREFIX_NOT;
  e->u.mo.nargs = 1;
  e->u.mo.args = arena_alloc(P->a, sizeof *e->u.mo.args);
  if (++P->depth > MAX_DEPTH) fail_at(P, t.loc, "expression nested too deeply");
  if (alone) {
    next(P);
  } else { /* the operand is the rest of the run */
    P->tok.p++;
    P->tok.len--;
    P->tok.loc++;
  }
  e->u.mo.args[0] = parse_unary(P, prefixes);
  P->depth--;
  return e;
}

/* The infix operator the current token spells, and its level; -1 if none. */
static int infix_op(const Parser *P, int *level) {
  if (P->tok.kind != TK_NAME || P->tok.len > 2) return -1;
  for (int op = 0; op < CMM_NUM_MACHOPS; op++) {
    const CmmMachOpInfo *mi = &cmm_machops[op];
    if (mi->infix_len == P->tok.len && mi->arity == 2 && mi->infix[0] == P->tok.p[0] &&
        memcmp(mi->infix, P->tok.p, P->tok.len) == 0) {
      *level = mi->prec;
      return op;
    }
  }
  return -1;
}

/* Note [Bitwise chains]: GHC prints both operands of `& | ^` and the operand of a prefix
 * `~` or `-` at its tightest level, and that level never gets parentheses
 * (GHC.Cmm.Ppr.Expr: genMachOp, pprExpr9).  So a run of bitwise operators and prefixes
 * without parentheses is the text of every tree over its operands that flattens to it,
 * and real dumps hold more than one such tree: `(x << 5) | (x >> 59) & K | 1` is
 * left-nested, `w & v ^ 255` (from w .&. complement v) right-nested, and `~x & y` is
 * GHC's text for both complement x .&. y and complement (x .&. y).  All those trees have
 * one value only when
 *   - every binary operator of the run is the same one (each is associative), and
 *   - no operand but the last carries a prefix, except `~` in a run of `^` alone
 *     (~(x ^ y) is ~x ^ y).
 * Any other run is valid GHC Cmm whose meaning the text does not say: strobe refuses
 * it, naming the procedure, and strobec exits with status 2.  Parentheses, which GHC
 * never prints there, group as written. */
static _Noreturn void refuse_chain(Parser *P, CmmLoc loc, const char *what) {
  const char *where = P->proc ? arena_printf(P->a, " in procedure '%s'", P->proc) : "";
  diag_refusal(P->d, P->src, loc,
               "ambiguous bitwise expression%s: GHC prints %s; strobe does not guess which "
               "one this is",
               where, what);
  longjmp(P->fail, 1);
}

static _Noreturn void refuse_mixed(Parser *P, int op1, int op2, CmmLoc loc) {
  const char *a = cmm_machops[op1].infix, *b = cmm_machops[op2].infix;
  refuse_chain(P, loc, arena_printf(P->a, "both 'x %s (y %s z)' and '(x %s y) %s z' as 'x %s y %s z'",
                                    a, b, a, b, a, b));
}

static _Noreturn void refuse_prefix(Parser *P, char prefix, int op, CmmLoc loc) {
  const char *b = cmm_machops[op].infix;
  refuse_chain(P, loc, arena_printf(P->a, "both '(%cx) %s y' and '%c(x %s y)' as '%cx %s y'",
                                    prefix, b, prefix, b, prefix, b));
}

/* GHC prints a negative literal in parentheses, `(-8)`: a bare `-8` is its prefix `-`
 * on the literal 8 (MO_S_Neg), and takes part in a chain as a prefix does. */
static unsigned negative_literal(CmmToken t) {
  return t.kind == TK_NAME && t.len > 1 && t.p[0] == '-' && t.p[1] >= '0' && t.p[1] <= '9'
             ? PREFIX_NEG : 0;
}

static CmmExpr *binary(Parser *P, int op, CmmExpr *x, CmmExpr *y, CmmLoc loc) {
  CmmExpr *e = new_expr(P, CMM_E_MACHOP, loc);
  e->u.mo.op = (uint8_t)op;
  e->u.mo.nargs = 2;
  e->u.mo.args = arena_alloc(P->a, 2 * sizeof *e->u.mo.args);
  e->u.mo.args[0] = x;
  e->u.mo.args[1] = y;
  return e;
}

/* expr9 := unary {('&' | '|' | '^') unary}      one operator, read left-associated
 *                                               (Note [Bitwise chains])
 * expr8 := expr9 {('*' | '/' | '%') expr9}
 * expr7 := expr8 {('+' | '-') expr8}
 * expr  := expr7 [('==' | '!=' | '<' | '>' | '<=' | '>=' | '<<' | '>>') expr7] */
static CmmExpr *parse_level(Parser *P, int level) {
  static const int tighter[10] = {[1] = 7, [7] = 8, [8] = 9};
  unsigned prefixes = 0;      /* of the operand just read (level 9) */
  CmmToken operand = P->tok;  /* where it starts */
  CmmExpr *x = level == 9 ? parse_unary(P, &prefixes) : parse_level(P, tighter[level]);
  if (level == 9) prefixes |= negative_literal(operand);
  unsigned depth = P->depth;
  int first_op = -1;
  for (;;) {
    int l, op = infix_op(P, &l);
    if (op < 0 || l != level) {
      P->depth = depth;
      return x;
    }
    CmmLoc loc = P->tok.loc;
    if (level == 9 && !P->in_static) { /* Note [Bitwise chains] */
      if (first_op >= 0 && op != first_op) refuse_mixed(P, first_op, op, loc);
      if ((prefixes & PREFIX_NEG) || (prefixes && op != CMM_MO_XOR))
        refuse_prefix(P, operand.p[0], op, operand.loc);
    }
    if (first_op < 0) first_op = op;
    if (++P->depth > MAX_DEPTH) fail_at(P, loc, "expression nested too deeply");
    next(P);
    prefixes = 0;
    operand = P->tok;
    CmmExpr *y = level == 9 ? parse_unary(P, &prefixes) : parse_level(P, tighter[level]);
    if (level == 9) prefixes |= negative_literal(operand);
    x = binary(P, op, x, y, loc);
    if (level == 1) {
      if (infix_op(P, &l) >= 0 && l == 1)
        fail_at(P, P->tok.loc, "comparisons and shifts do not associate: add parentheses");
      P->depth = depth;
      return x;
    }
  }
}

static CmmExpr *parse_expr(Parser *P) { return parse_level(P, 1); }

/* ---- statements ------------------------------------------------------------------- */

static void block_ref(Parser *P, CmmBlockRef *ref) {
  if (P->tok.kind != TK_NAME || tok_is_def(P->tok)) expected(P, "a block label");
  ref->name = tok_str(P, P->tok);
  ref->loc = P->tok.loc;
  next(P);
}

/* A register that may be assigned: a global or a local. */
static CmmExpr *parse_reg(Parser *P, const char *what) {
  CmmToken t = P->tok;
  if (t.kind != TK_NAME || (global_reg_of(t.p, t.len) < 0 && !memmem(t.p, t.len, "::", 2)))
    expected(P, what);
  CmmExpr *e = parse_atom(P);
  if (e->kind != CMM_E_GLOBAL && e->kind != CMM_E_LOCAL) /* `-_x::I64` is an expression */
    fail_at(P, t.loc, "expected %s, got an expression", what);
  return e;
}

static bool span_num(const char **p, const char *end, uint32_t *v) {
  uint64_t x = 0;
  const char *start = *p;
  for (; *p < end && **p >= '0' && **p <= '9'; (*p)++)
    if ((x = x * 10 + (uint64_t)(**p - '0')) > UINT32_MAX) return false;
  *v = (uint32_t)x;
  return *p > start;
}

static bool span_char(const char **p, const char *end, char c) {
  if (*p >= end || **p != c) return false;
  (*p)++;
  return true;
}

/* tick := '//tick src<' file ':' span '>'
 * span := line ':' col | line ':' col '-' col | '(' line ',' col ')-(' line ',' col ')' */
static void parse_tick(Parser *P, CmmSrcNote *n) {
  CmmToken t = P->tok;
  const char *p = t.p + 4, *end = t.p + t.len;
  while (p < end && *p == ' ') p++;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
  CmmLoc at = t.loc + (CmmLoc)(p - t.p);
  if (end - p < 5 || memcmp(p, "src<", 4) != 0 || end[-1] != '>')
    fail_at(P, at, "expected a source note 'src<file:span>' after //tick");
  const char *body = p + 4, *bend = end - 1;
  /* The span is at the end; the file name (which may hold ':') is before it. */
  const char *colon = NULL;
  if (bend > body && bend[-1] == ')') {
    for (const char *q = bend - 1; q > body; q--)
      if (q[-1] == ':' && q[0] == '(') { colon = q - 1; break; }
  } else {
    int seen = 0;
    for (const char *q = bend - 1; q >= body; q--)
      if (*q == ':' && ++seen == 2) { colon = q; break; }
  }
  if (!colon || colon == body)
    fail_at(P, at, "expected 'file:line:col' in the source note");
  n->file = arena_strndup(P->a, body, (size_t)(colon - body));
  n->loc = t.loc;
  const char *q = colon + 1;
  bool ok;
  if (q < bend && *q == '(') {
    ok = span_char(&q, bend, '(') && span_num(&q, bend, &n->line1) && span_char(&q, bend, ',') &&
         span_num(&q, bend, &n->col1) && span_char(&q, bend, ')') && span_char(&q, bend, '-') &&
         span_char(&q, bend, '(') && span_num(&q, bend, &n->line2) && span_char(&q, bend, ',') &&
         span_num(&q, bend, &n->col2) && span_char(&q, bend, ')');
  } else {
    ok = span_num(&q, bend, &n->line1) && span_char(&q, bend, ':') && span_num(&q, bend, &n->col1);
    n->line2 = n->line1;
    n->col2 = n->col1;
    if (ok && span_char(&q, bend, '-')) ok = span_num(&q, bend, &n->col2);
  }
  if (!ok || q != bend)
    fail_at(P, t.loc + (CmmLoc)(colon + 1 - t.p), "malformed span '%.*s' in the source note",
            (int)(bend - colon - 1), colon + 1);
  if (!n->line1 || !n->col1 || !n->line2 || !n->col2)
    fail_at(P, t.loc + (CmmLoc)(colon + 1 - t.p), "source note lines and columns start at 1");
  if (n->line2 < n->line1 || (n->line2 == n->line1 && n->col2 < n->col1))
    fail_at(P, t.loc + (CmmLoc)(colon + 1 - t.p), "source note span ends before it starts");
  next(P);
}

/* unwind := 'unwind' reg '=' ('Just' expr | 'Nothing') {',' reg '=' …} ';' */
static void parse_unwind(Parser *P, CmmStmt *s) {
  VEC(CmmUnwind) regs = {0};
  next(P);
  do {
    if (regs.n) next(P);
    CmmToken t = P->tok;
    int r = t.kind == TK_NAME ? global_reg_of(t.p, t.len) : -1;
    if (r < 0) expected(P, "a global register after 'unwind'");
    next(P);
    expect_name(P, "=");
    CmmUnwind u = {.reg = (uint8_t)r};
    if (is_name(P, "Nothing")) {
      next(P);
    } else {
      expect_name(P, "Just");
      u.expr = parse_expr(P);
    }
    vec_push(P->a, &regs, u);
  } while (P->tok.kind == TK_COMMA);
  expect_kind(P, TK_SEMI, "';' after the unwind");
  s->u.unwind.n = regs.n;
  s->u.unwind.regs = regs.v;
}

/* if := 'if' '(' expr ')' ['(likely:' ('True' | 'False') ')'] 'goto' L ';' 'else' 'goto' L ';' */
static void parse_if(Parser *P, CmmStmt *s) {
  next(P);
  expect_kind(P, TK_LPAREN, "'(' after 'if'");
  s->u.if_.cond = parse_expr(P);
  expect_kind(P, TK_RPAREN, "')' after the condition");
  s->u.if_.likely = -1;
  if (P->tok.kind == TK_LPAREN) {
    next(P);
    expect_name(P, "likely:");
    if (is_name(P, "True")) s->u.if_.likely = 1;
    else if (is_name(P, "False")) s->u.if_.likely = 0;
    else expected(P, "'True' or 'False'");
    next(P);
    expect_kind(P, TK_RPAREN, "')'");
  }
  expect_name(P, "goto");
  block_ref(P, &s->u.if_.then_);
  expect_kind(P, TK_SEMI, "';'");
  expect_name(P, "else");
  expect_name(P, "goto");
  block_ref(P, &s->u.if_.else_);
  expect_kind(P, TK_SEMI, "';'");
}

/* switch := 'switch' '[' int '..' int ']' expr '{' case* [default] '}'
 * case    := 'case' int {',' int} ':' 'goto' L ';'
 * default := 'default:' '{' 'goto' L ';' '}' */
static void parse_switch(Parser *P, CmmStmt *s) {
  next(P);
  expect_kind(P, TK_LBRACKET, "'[' after 'switch'");
  s->u.sw.lo = parse_int_tok(P, "the lower bound of the switch range");
  expect_name(P, "..");
  s->u.sw.hi = parse_int_tok(P, "the upper bound of the switch range");
  expect_kind(P, TK_RBRACKET, "']'");
  s->u.sw.scrut = parse_expr(P);
  expect_kind(P, TK_LBRACE, "'{' to open the switch");
  VEC(CmmSwitchCase) cases = {0};
  while (is_name(P, "case")) {
    next(P);
    VEC(CmmInt) values = {0};
    do {
      if (values.n) next(P);
      vec_push(P->a, &values, parse_int_tok(P, "a case value"));
    } while (P->tok.kind == TK_COMMA);
    expect_name(P, ":");
    expect_name(P, "goto");
    CmmSwitchCase c = {.nvalues = values.n, .values = values.v};
    vec_push(P->a, &cases, c);
    block_ref(P, &cases.v[cases.n - 1].target);
    expect_kind(P, TK_SEMI, "';'");
  }
  s->u.sw.ncases = cases.n;
  s->u.sw.cases = cases.v;
  if (is_name(P, "default:")) {
    next(P);
    expect_kind(P, TK_LBRACE, "'{'");
    expect_name(P, "goto");
    s->u.sw.has_default = true;
    block_ref(P, &s->u.sw.default_);
    expect_kind(P, TK_SEMI, "';'");
    expect_kind(P, TK_RBRACE, "'}'");
  }
  expect_kind(P, TK_RBRACE, "'case', 'default:' or '}' in the switch");
}

/* args := '(' [expr {',' expr}] ')' */
static CmmExpr **parse_args(Parser *P, uint32_t *n) {
  VEC(CmmExpr *) args = {0};
  expect_kind(P, TK_LPAREN, "'(' before the arguments");
  if (P->tok.kind != TK_RPAREN) {
    vec_push(P->a, &args, parse_expr(P));
    while (P->tok.kind == TK_COMMA) {
      next(P);
      vec_push(P->a, &args, parse_expr(P));
    }
  }
  expect_kind(P, TK_RPAREN, "',' or ')' in the argument list");
  *n = args.n;
  return args.v;
}

/* hints := '[' [hint {',' hint}] ']'      hint := PtrHint | ‘signed’ | `signed' | (empty)
 * (GHC's AddrHint, SignedHint and NoHint; the quotes depend on the locale) */
static CmmHint *parse_hints(Parser *P, uint32_t *n) {
  VEC(CmmHint) hints = {0};
  expect_kind(P, TK_LBRACKET, "'[' to open the hints");
  if (P->tok.kind != TK_RBRACKET) {
    for (;;) {
      CmmHint h = {""};
      if (P->tok.kind == TK_NAME) {
        if (!is_name(P, "PtrHint") && !is_name(P, "‘signed’") && !is_name(P, "`signed'"))
          expected(P, "a hint (PtrHint, ‘signed’ or none)");
        h.text = tok_str(P, P->tok);
        next(P);
      }
      vec_push(P->a, &hints, h);
      if (P->tok.kind != TK_COMMA) break;
      next(P);
    }
  }
  expect_kind(P, TK_RBRACKET, "',' or ']' in the hints");
  *n = hints.n;
  return hints.v;
}

/* ccall := '"' conv '"' 'arg' 'hints:' hints 'result' 'hints:' hints ['never' 'returns']
 *          (label | '(' expr ')') args ';' */
static void parse_ccall(Parser *P, CmmStmt *s) {
  s->kind = CMM_S_CCALL;
  CmmToken conv = P->tok;
  s->u.ccall.conv = arena_strndup(P->a, conv.p + 1, conv.len - 2);
  next(P);
  expect_name(P, "arg");
  expect_name(P, "hints:");
  s->u.ccall.arg_hints = parse_hints(P, &s->u.ccall.narg_hints);
  expect_name(P, "result");
  expect_name(P, "hints:");
  s->u.ccall.res_hints = parse_hints(P, &s->u.ccall.nres_hints);
  if (is_name(P, "never")) {
    next(P);
    expect_name(P, "returns");
    s->u.ccall.never_returns = true;
  }
  if (P->tok.kind == TK_LPAREN) {
    next(P);
    s->u.ccall.target = parse_expr(P);
    expect_kind(P, TK_RPAREN, "')' after the call target");
  } else {
    if (P->tok.kind != TK_NAME) expected(P, "the function to call");
    CmmToken t = P->tok;
    next(P);
    s->u.ccall.target = label_expr(P, t, false);
  }
  s->u.ccall.args = parse_args(P, &s->u.ccall.nargs);
  expect_kind(P, TK_SEMI, "';' after the call");
}

/* prim := 'MO_' name [width [amo] | int] args ';' */
static void parse_primcall(Parser *P, CmmStmt *s, int op) {
  s->kind = CMM_S_PRIMCALL;
  s->u.prim.op = (uint8_t)op;
  next(P);
  switch (cmm_primops[op].arg) {
  case CMM_PRIMARG_WIDTH: s->u.prim.width = parse_width(P); break;
  case CMM_PRIMARG_WIDTH_AMO:
    s->u.prim.width = parse_width(P);
    if (P->tok.kind != TK_NAME || P->tok.len < 5 || memcmp(P->tok.p, "AMO_", 4) != 0)
      expected(P, "an atomic operation (AMO_Add, AMO_Sub, …)");
    s->u.prim.amo = tok_str(P, P->tok);
    next(P);
    break;
  case CMM_PRIMARG_INT: s->u.prim.intarg = parse_i64(P, "an alignment"); break;
  default: break;
  }
  s->u.prim.args = parse_args(P, &s->u.prim.nargs);
  expect_kind(P, TK_SEMI, "';' after the call");
}

static int primop_of(CmmToken t) {
  if (t.kind != TK_NAME) return -1;
  for (int op = 0; op < CMM_NUM_PRIMOPS; op++)
    if (strlen(cmm_primops[op].name) == t.len && memcmp(cmm_primops[op].name, t.p, t.len) == 0)
      return op;
  return -1;
}

/* call := 'call' (label | '(' expr ')') '(' [global {',' global}] ')'
 *         ['returns' 'to' L ','] 'args:' int ',' 'res:' int ',' 'upd:' int ';'
 *       | 'call' ccall | 'call' prim */
static void parse_call(Parser *P, CmmStmt *s, CmmExpr **results, uint32_t nresults) {
  next(P);
  int prim = primop_of(P->tok);
  if (P->tok.kind == TK_STRING || prim >= 0) {
    if (P->tok.kind == TK_STRING) parse_ccall(P, s);
    else parse_primcall(P, s, prim);
    /* results share a layout in both forms */
    if (s->kind == CMM_S_CCALL) {
      s->u.ccall.results = results;
      s->u.ccall.nresults = nresults;
    } else {
      s->u.prim.results = results;
      s->u.prim.nresults = nresults;
    }
    return;
  }
  if (nresults)
    fail_at(P, P->tok.loc, "only foreign calls and prim calls return results; got %s",
            describe(P, P->tok));
  s->kind = CMM_S_CALL;
  if (P->tok.kind == TK_LPAREN) {
    next(P);
    s->u.call.target = parse_expr(P);
    expect_kind(P, TK_RPAREN, "')' after the call target");
  } else {
    if (P->tok.kind != TK_NAME || tok_is_def(P->tok)) expected(P, "the call target");
    CmmToken t = P->tok;
    next(P);
    s->u.call.target = label_expr(P, t, false);
  }
  expect_kind(P, TK_LPAREN, "'(' before the registers passed");
  VEC(uint8_t) regs = {0};
  while (P->tok.kind != TK_RPAREN) {
    if (regs.n) expect_kind(P, TK_COMMA, "',' or ')' in the registers passed");
    int r = P->tok.kind == TK_NAME ? global_reg_of(P->tok.p, P->tok.len) : -1;
    if (r < 0) expected(P, "a global register");
    vec_push(P->a, &regs, (uint8_t)r);
    next(P);
  }
  next(P);
  s->u.call.nregs = regs.n;
  s->u.call.regs = regs.v;
  if (is_name(P, "returns")) {
    next(P);
    expect_name(P, "to");
    s->u.call.returns = true;
    block_ref(P, &s->u.call.returns_to);
    expect_kind(P, TK_COMMA, "','");
  }
  expect_name(P, "args:");
  s->u.call.args = parse_i64(P, "a byte count");
  expect_kind(P, TK_COMMA, "','");
  expect_name(P, "res:");
  s->u.call.res = parse_i64(P, "a byte count");
  expect_kind(P, TK_COMMA, "','");
  expect_name(P, "upd:");
  s->u.call.upd = parse_i64(P, "a byte count");
  expect_kind(P, TK_SEMI, "';' after the call");
}

/* stmt := tick | comment | unwind | if | 'goto' L ';' | switch | call
 *       | '(' reg {',' reg} ')' '=' call
 *       | type '[' expr ']' '=' expr ';'
 *       | reg '=' expr ';' */
static void parse_stmt(Parser *P, CmmStmt *s) {
  CmmToken t = P->tok;
  s->loc = t.loc;
  if (t.kind == TK_COMMENT) {
    if (t.len >= 4 && memcmp(t.p, "tick", 4) == 0) {
      s->kind = CMM_S_TICK;
      parse_tick(P, &s->u.tick);
    } else {
      s->kind = CMM_S_COMMENT;
      s->u.comment.text = tok_str(P, t);
      next(P);
    }
    return;
  }
  if (t.kind == TK_LPAREN) {
    VEC(CmmExpr *) results = {0};
    do {
      next(P);
      vec_push(P->a, &results, parse_reg(P, "a register to receive a result"));
    } while (P->tok.kind == TK_COMMA);
    expect_kind(P, TK_RPAREN, "')' after the results");
    expect_name(P, "=");
    if (!is_name(P, "call")) expected(P, "'call'");
    parse_call(P, s, results.v, results.n);
    return;
  }
  if (t.kind != TK_NAME) expected(P, "a statement");
  if (is_name(P, "unwind")) { s->kind = CMM_S_UNWIND; parse_unwind(P, s); return; }
  if (is_name(P, "if")) { s->kind = CMM_S_IF; parse_if(P, s); return; }
  if (is_name(P, "switch")) { s->kind = CMM_S_SWITCH; parse_switch(P, s); return; }
  if (is_name(P, "call")) { parse_call(P, s, NULL, 0); return; }
  if (is_name(P, "goto")) {
    s->kind = CMM_S_GOTO;
    next(P);
    block_ref(P, &s->u.goto_.target);
    expect_kind(P, TK_SEMI, "';' after the goto");
    return;
  }
  CmmType ty;
  if (P->lx.p < P->lx.end && *P->lx.p == '[' && type_of(t.p, t.len, &ty)) {
    s->kind = CMM_S_STORE;
    s->u.store.type = ty;
    next(P);
    next(P); /* '[' */
    s->u.store.addr = parse_expr(P);
    expect_kind(P, TK_RBRACKET, "']' to close the address");
    expect_name(P, "=");
    s->u.store.rhs = parse_expr(P);
    expect_kind(P, TK_SEMI, "';' after the store");
    return;
  }
  s->kind = CMM_S_ASSIGN;
  s->u.assign.lhs = parse_reg(P, "a statement");
  expect_name(P, "=");
  s->u.assign.rhs = parse_expr(P);
  expect_kind(P, TK_SEMI, "';' after the assignment");
}

/* ---- blocks, procs, data ------------------------------------------------------------ */

static bool is_unique_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* scope := 'global' | path | '(' path {'+' path} ')'     path := unique {'/' unique} */
static void parse_scope(Parser *P, CmmScope *sc) {
  CmmToken t = P->tok;
  const char *p = t.p, *end = t.p + t.len;
  while (p < end && *p == ' ') p++;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
  sc->loc = t.loc + (CmmLoc)(p - t.p);
#define AT(q) (t.loc + (CmmLoc)((q) - t.p))
  if (end - p == 6 && memcmp(p, "global", 6) == 0) {
    next(P);
    return;
  }
  bool combined = p < end && *p == '(';
  if (combined) {
    if (end[-1] != ')') fail_at(P, AT(end), "expected ')' to close the combined scope");
    p++;
    end--;
  }
  VEC(CmmScopePath) paths = {0};
  for (;;) {
    VEC(const char *) comps = {0};
    for (;;) {
      const char *c = p;
      while (p < end && is_unique_char(*p)) p++;
      if (p == c) fail_at(P, AT(p), "expected a tick scope (a unique, a path 'a/b' or 'global')");
      vec_push(P->a, &comps, arena_strndup(P->a, c, (size_t)(p - c)));
      if (p < end && *p == '/') { p++; continue; }
      break;
    }
    CmmScopePath path = {comps.n, comps.v};
    vec_push(P->a, &paths, path);
    if (combined && p < end && *p == '+') { p++; continue; }
    break;
  }
  if (p != end) fail_at(P, AT(p), "unexpected '%c' in the tick scope", *p);
  if (combined && paths.n < 2) fail_at(P, sc->loc, "a combined scope has at least two paths");
#undef AT
  sc->npaths = paths.n;
  sc->paths = paths.v;
  next(P);
}

/* block := L ':' '//' scope stmt* terminator */
static void parse_block(Parser *P, CmmBlock *b, uint32_t index) {
  CmmToken t = P->tok;
  b->label = arena_strndup(P->a, t.p, t.len - 1);
  b->loc = t.loc;
  uint32_t first;
  if (!strmap_put(&P->blocks, P->a, b->label, index, &first)) {
    diag_error(P->d, P->src, t.loc, "block '%s' is defined twice", b->label);
    diag_note(P->d, P->src, P->block_locs.v[first], "'%s' was first defined here", b->label);
    longjmp(P->fail, 1);
  }
  vec_push(P->a, &P->block_locs, t.loc);
  next(P);
  if (P->tok.kind != TK_COMMENT)
    expected(P, "the block's tick scope ('// c1/c2'; dumps made with -dsuppress-ticks lack it)");
  parse_scope(P, &b->scope);
  VEC(CmmStmt) stmts = {0};
  for (;;) {
    if (P->tok.kind == TK_RBRACE || tok_is_def(P->tok)) {
      if (!stmts.n || !cmm_is_terminator(stmts.v[stmts.n - 1].kind))
        expected(P, arena_printf(P->a, "a statement ending block '%s' (goto, if, switch or call)",
                                 b->label));
      break;
    }
    if (stmts.n && cmm_is_terminator(stmts.v[stmts.n - 1].kind))
      expected(P, "a block label or '}' after the block's last statement");
    CmmStmt s = {0};
    parse_stmt(P, &s);
    vec_push(P->a, &stmts, s);
  }
  b->nstmts = stmts.n;
  b->stmts = stmts.v;
}

/* Checks every block reference of a proc and marks the labels that name its blocks. */
static void resolve_ref(Parser *P, CmmBlockRef *r) {
  if (!strmap_get(&P->blocks, r->name, &r->index))
    fail_at(P, r->loc, "no block '%s' in this procedure", r->name);
}

static void resolve_proc(Parser *P, CmmProc *pr) {
  for (uint32_t i = 0; i < pr->ntables; i++) resolve_ref(P, &pr->tables[i].block);
  for (uint32_t i = 0; i < pr->nblocks; i++)
    for (uint32_t j = 0; j < pr->blocks[i].nstmts; j++) {
      CmmStmt *s = &pr->blocks[i].stmts[j];
      switch (s->kind) {
      case CMM_S_GOTO: resolve_ref(P, &s->u.goto_.target); break;
      case CMM_S_IF:
        resolve_ref(P, &s->u.if_.then_);
        resolve_ref(P, &s->u.if_.else_);
        break;
      case CMM_S_SWITCH:
        for (uint32_t k = 0; k < s->u.sw.ncases; k++) resolve_ref(P, &s->u.sw.cases[k].target);
        if (s->u.sw.has_default) resolve_ref(P, &s->u.sw.default_);
        break;
      case CMM_S_CALL:
        if (s->u.call.returns) resolve_ref(P, &s->u.call.returns_to);
        break;
      default: break;
      }
    }
  /* A bare name that is one of this proc's blocks is that block's address. */
  for (uint32_t i = 0; i < P->labels.n; i++) {
    CmmExpr *e = P->labels.v[i];
    uint32_t index;
    if (e->u.label.offset == 0 && strmap_get(&P->blocks, e->u.label.name, &index)) {
      e->u.label.kind = CMM_LABEL_BLOCK;
      e->u.label.block = index;
    }
  }
}

/* static := 'const' expr ';' | 'I8' '[' ']' string | 'I8' '[' int ']' */
static void parse_static(Parser *P, CmmStatic *st) {
  st->loc = P->tok.loc;
  if (is_name(P, "const")) {
    next(P);
    st->kind = CMM_STATIC_LIT;
    P->in_static = true;
    CmmExpr *e = parse_expr(P);
    P->in_static = false;
    if (e->kind != CMM_E_INT && e->kind != CMM_E_FLOAT && e->kind != CMM_E_LABEL &&
        e->kind != CMM_E_LABEL_DIFF)
      fail_at(P, e->loc, "expected a literal (a number, a label or a label difference)");
    st->lit = e;
    expect_kind(P, TK_SEMI, "';' after the constant");
    return;
  }
  if (!is_name(P, "I8")) expected(P, "'const', 'I8[]' or the end of the statics");
  next(P);
  expect_kind(P, TK_LBRACKET, "'[' after I8");
  if (P->tok.kind == TK_RBRACKET) {
    next(P);
    if (P->tok.kind != TK_STRING) expected(P, "a string literal after I8[]");
    uint8_t *bytes;
    if (!cmm_decode_string(P->src, P->tok, P->a, P->d, &bytes, &st->len)) longjmp(P->fail, 1);
    st->kind = CMM_STATIC_STRING;
    st->bytes = bytes;
    next(P);
  } else {
    st->kind = CMM_STATIC_UNINIT;
    st->len = parse_u32(P, "a size in bytes");
    expect_kind(P, TK_RBRACKET, "']'");
  }
  if (P->tok.kind == TK_SEMI) next(P);
}

static CmmStatic *parse_statics(Parser *P, uint32_t *n, int stop) {
  VEC(CmmStatic) st = {0};
  while (P->tok.kind != stop) {
    CmmStatic s = {0};
    parse_static(P, &s);
    vec_push(P->a, &st, s);
  }
  *n = st.n;
  return st.v;
}

static const char *parse_def(Parser *P, const char *what) {
  if (!tok_is_def(P->tok)) expected(P, what);
  const char *l = arena_strndup(P->a, P->tok.p, P->tok.len - 1);
  next(P);
  return l;
}

static const char *parse_label_name(Parser *P, const char *what) {
  if (P->tok.kind != TK_NAME || tok_is_def(P->tok)) expected(P, what);
  const char *l = tok_str(P, P->tok);
  next(P);
  return l;
}

/* bits := '[' [('True' | 'False') {',' …}] ']' */
static void parse_bits(Parser *P, CmmRep *r) {
  VEC(bool) bits = {0};
  expect_kind(P, TK_LBRACKET, "'[' to open the bitmap");
  while (P->tok.kind != TK_RBRACKET) {
    if (bits.n) expect_kind(P, TK_COMMA, "',' or ']' in the bitmap");
    if (is_name(P, "True")) vec_push(P->a, &bits, true);
    else if (is_name(P, "False")) vec_push(P->a, &bits, false);
    else expected(P, "'True' or 'False'");
    next(P);
  }
  next(P);
  r->nbits = bits.n;
  r->bits = bits.v;
}

/* rep     := 'HeapRep' ['static'] [int 'ptrs'] [int 'nonptrs'] '{' closure '}'
 *          | 'StackRep' bits | 'tag:' int rep
 * closure := 'Thunk' | 'BlackHole' | 'IndStatic' | 'ThunkSel' int
 *          | 'Fun' '{' 'arity:' int 'fun_type:' ('ArgSpec' int | 'ArgGen' bits) '}'
 *          | 'Con' '{' 'tag:' int 'descr:' string '}' */
static void parse_rep(Parser *P, CmmRep *r) {
  if (is_name(P, "StackRep")) {
    next(P);
    r->kind = CMM_REP_STACK;
    parse_bits(P, r);
    return;
  }
  if (is_name(P, "tag:")) {
    next(P);
    r->kind = CMM_REP_RTS;
    r->rts_type = parse_u32(P, "a closure type");
    r->inner = arena_alloc(P->a, sizeof *r->inner);
    if (++P->depth > MAX_DEPTH) fail_at(P, P->tok.loc, "info table nested too deeply");
    parse_rep(P, r->inner);
    P->depth--;
    return;
  }
  expect_name(P, "HeapRep");
  r->kind = CMM_REP_HEAP;
  if (is_name(P, "static")) {
    r->is_static = true;
    next(P);
  }
  while (P->tok.kind == TK_NAME && all_digits(P->tok.p, P->tok.len)) {
    uint32_t v = parse_u32(P, "a count");
    if (is_name(P, "ptrs")) r->ptrs = v;
    else if (is_name(P, "nonptrs")) r->nonptrs = v;
    else expected(P, "'ptrs' or 'nonptrs'");
    next(P);
  }
  expect_kind(P, TK_LBRACE, "'{' to open the closure type");
  if (is_name(P, "Thunk")) { r->closure = CMM_CLOSURE_THUNK; next(P); }
  else if (is_name(P, "BlackHole")) { r->closure = CMM_CLOSURE_BLACKHOLE; next(P); }
  else if (is_name(P, "IndStatic")) { r->closure = CMM_CLOSURE_INDSTATIC; next(P); }
  else if (is_name(P, "ThunkSel")) {
    r->closure = CMM_CLOSURE_THUNK_SELECTOR;
    next(P);
    r->selector = parse_u32(P, "a selector offset");
  } else if (is_name(P, "Fun")) {
    r->closure = CMM_CLOSURE_FUN;
    next(P);
    expect_kind(P, TK_LBRACE, "'{'");
    expect_name(P, "arity:");
    r->arity = parse_u32(P, "an arity");
    expect_name(P, "fun_type:");
    if (is_name(P, "ArgSpec")) {
      next(P);
      r->arg_spec = parse_u32(P, "an argument pattern number");
    } else {
      expect_name(P, "ArgGen");
      r->arg_gen = true;
      parse_bits(P, r);
    }
    expect_kind(P, TK_RBRACE, "'}'");
  } else if (is_name(P, "Con")) {
    r->closure = CMM_CLOSURE_CON;
    next(P);
    expect_kind(P, TK_LBRACE, "'{'");
    expect_name(P, "tag:");
    r->tag = parse_u32(P, "a constructor tag");
    expect_name(P, "descr:");
    if (P->tok.kind != TK_STRING) expected(P, "the constructor description string");
    uint8_t *bytes;
    uint32_t len;
    if (!cmm_decode_string(P->src, P->tok, P->a, P->d, &bytes, &len)) longjmp(P->fail, 1);
    if (memchr(bytes, 0, len)) fail_at(P, P->tok.loc, "NUL byte in a constructor description");
    r->descr = (const char *)bytes;
    next(P);
    expect_kind(P, TK_RBRACE, "'}'");
  } else {
    expected(P, "a closure type (Thunk, Fun, Con, ThunkSel, BlackHole, IndStatic)");
  }
  expect_kind(P, TK_RBRACE, "'}' to close the closure type");
}

/* info := '{' 'info_tbls:' '[' [itbl {',' itbl}] ']' 'stack_info:' 'arg_space:' int '}'
 *       | '{' '[' [raw {',' raw}] ']' '}'
 * itbl := '(' L ',' 'label:' label 'rep:' rep 'srt:' ('Nothing' | 'Just' label) ')'
 * raw  := '(' L ',' label ':' static* ')' */
static void parse_info(Parser *P, CmmProc *pr) {
  expect_kind(P, TK_LBRACE, "'{' to open the info tables");
  pr->raw = P->tok.kind == TK_LBRACKET;
  if (!pr->raw) expect_name(P, "info_tbls:");
  expect_kind(P, TK_LBRACKET, "'['");
  VEC(CmmInfoTable) tables = {0};
  while (P->tok.kind != TK_RBRACKET) {
    if (tables.n) expect_kind(P, TK_COMMA, "',' or ']' in the info tables");
    CmmInfoTable it = {.loc = P->tok.loc};
    expect_kind(P, TK_LPAREN, "'(' to open an info table");
    block_ref(P, &it.block);
    expect_kind(P, TK_COMMA, "','");
    if (pr->raw) {
      it.label = parse_def(P, "the info table's label and ':'");
      it.statics = parse_statics(P, &it.nstatics, TK_RPAREN);
    } else {
      expect_name(P, "label:");
      it.label = parse_label_name(P, "the info table's label");
      expect_name(P, "rep:");
      parse_rep(P, &it.rep);
      expect_name(P, "srt:");
      if (is_name(P, "Nothing")) {
        next(P);
      } else {
        expect_name(P, "Just");
        it.srt = parse_label_name(P, "the SRT label");
      }
    }
    expect_kind(P, TK_RPAREN, "')' to close the info table");
    vec_push(P->a, &tables, it);
  }
  next(P);
  pr->ntables = tables.n;
  pr->tables = tables.v;
  if (!pr->raw) {
    expect_name(P, "stack_info:");
    expect_name(P, "arg_space:");
    pr->has_arg_space = true;
    pr->arg_space = parse_i64(P, "a byte count");
  }
  expect_kind(P, TK_RBRACE, "'}' to close the info tables");
}

/* live := '//' '[' [global {',' global}] ']'     (the proc header's comment)
 *
 * GHC fills the list to its line width (`fsep`), so a long header wraps after a comma
 * and the rest of the list continues on the following lines, aligned under the first
 * register and without `//`:
 *     Main.$wf_entry() { //  [R5,
 *                             R4, R3, R2]
 * The comment then ends at its last line's ']'.  Nothing else in a dump is a comment
 * that wraps (docs/cmm-syntax.md). */
static void parse_live(Parser *P, CmmProc *pr) {
  if (P->tok.kind != TK_COMMENT) expected(P, "the live registers ('//  [R1]')");
  CmmToken c = P->tok;
  CmmLexer saved = P->lx;
  sub_lexer(P, &P->lx, c.p, c.p + c.len);
  P->in_comment = true;
  next(P);
  VEC(uint8_t) live = {0};
  expect_kind(P, TK_LBRACKET, "'[' to open the live registers");
  while (P->tok.kind != TK_RBRACKET) {
    if (live.n) {
      expect_kind(P, TK_COMMA, "',' or ']' in the live registers");
      if (P->in_comment && P->tok.kind == TK_EOF) { /* wrapped: the list goes on below */
        P->lx = saved;
        P->in_comment = false;
        next(P);
      }
    }
    int r = P->tok.kind == TK_NAME ? global_reg_of(P->tok.p, P->tok.len) : -1;
    if (r < 0) expected(P, "a global register");
    vec_push(P->a, &live, (uint8_t)r);
    next(P);
  }
  if (P->in_comment) {
    next(P);
    if (P->tok.kind != TK_EOF) expected(P, "the end of the comment");
    P->lx = saved;
    P->in_comment = false;
  } else { /* the ']' of a wrapped list ends the comment's last line */
    const char *q = P->lx.p;
    while (q < P->lx.end && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < P->lx.end && *q != '\n')
      fail_at(P, (CmmLoc)(q - P->src->text),
              "expected the end of the line after the wrapped live registers");
  }
  pr->nlive = live.n;
  pr->live = live.v;
  next(P);
}

/* proc := label '(' ')' '{' live info '{' 'offset' block* '}' '}' */
static void parse_proc(Parser *P, CmmProc *pr) {
  pr->loc = P->tok.loc;
  pr->label = parse_label_name(P, "a procedure or 'section'");
  P->open_what = arena_printf(P->a, "procedure '%s'", pr->label);
  P->proc = pr->label;
  P->open_loc = pr->loc;
  expect_kind(P, TK_LPAREN, "'(' after the procedure name");
  expect_kind(P, TK_RPAREN, "')'");
  expect_kind(P, TK_LBRACE, "'{' to open the procedure");
  parse_live(P, pr);
  parse_info(P, pr);
  expect_kind(P, TK_LBRACE, "'{' to open the procedure's body");
  expect_name(P, "offset");
  strmap_init(&P->blocks, P->a, 16);
  P->labels.n = 0;
  P->block_locs.n = 0;
  VEC(CmmBlock) blocks = {0};
  while (P->tok.kind != TK_RBRACE) {
    if (!tok_is_def(P->tok)) expected(P, "a block label ('c1K8:') or '}'");
    CmmBlock b = {0};
    parse_block(P, &b, blocks.n);
    vec_push(P->a, &blocks, b);
  }
  next(P);
  pr->nblocks = blocks.n;
  pr->blocks = blocks.v;
  expect_kind(P, TK_RBRACE, "'}' to close the procedure");
  resolve_proc(P, pr);
  P->open_what = NULL;
  P->proc = NULL;
}

/* data := 'section' '"' '"' type '"' ' . ' label '"' '{' label ':' static* '}'
 * (GHC prints the section type in quotes inside the quoted header, unescaped) */
static void parse_data(Parser *P, CmmData *dt) {
  dt->loc = P->tok.loc;
  P->open_what = "the section";
  P->open_loc = dt->loc;
  const char *p = P->lx.p, *end = P->lx.end;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
#define FAIL_HERE(...) fail_at(P, (CmmLoc)(p - P->src->text), __VA_ARGS__)
  if (end - p < 2 || p[0] != '"' || p[1] != '"') FAIL_HERE("expected '\"\"' to open the section header");
  p += 2;
  const char *ty = p;
  while (p < end && *p != '"' && *p != '\n') p++;
  if (p == ty || p >= end || *p != '"') FAIL_HERE("expected the section type and '\"'");
  dt->section = arena_strndup(P->a, ty, (size_t)(p - ty));
  p++;
  if (end - p < 3 || memcmp(p, " . ", 3) != 0) FAIL_HERE("expected ' . ' after the section type");
  p += 3;
  const char *lb = p;
  while (p < end && *p != '"' && *p != ' ' && *p != '\n' && *p != '\t') p++;
  if (p == lb || p >= end || *p != '"') FAIL_HERE("expected the section's label and '\"'");
#undef FAIL_HERE
  const char *section_label = arena_strndup(P->a, lb, (size_t)(p - lb));
  P->lx.p = p + 1;
  next(P);
  expect_kind(P, TK_LBRACE, "'{' to open the section");
  CmmLoc label_loc = P->tok.loc;
  dt->label = parse_def(P, "the data label and ':'");
  if (strcmp(dt->label, section_label) != 0) {
    diag_error(P->d, P->src, label_loc, "expected label '%s' of the section, got '%s'",
               section_label, dt->label);
    diag_note(P->d, P->src, (CmmLoc)(lb - P->src->text), "the section header names '%s'",
              section_label);
    longjmp(P->fail, 1);
  }
  dt->statics = parse_statics(P, &dt->nstatics, TK_RBRACE);
  next(P);
  P->open_what = NULL;
}

/* decl := data | proc */
static void parse_decl(Parser *P, CmmDecl *d) {
  if (is_name(P, "section")) {
    d->kind = CMM_DECL_DATA;
    parse_data(P, &d->u.data);
  } else {
    d->kind = CMM_DECL_PROC;
    parse_proc(P, &d->u.proc);
  }
}

/* A timestamp line: `2026-11-29 15:39:17.151249044 UTC`. */
static bool is_timestamp(const char *p, size_t n) {
  return n >= 23 && p[4] == '-' && p[7] == '-' && p[10] == ' ' && p[13] == ':' &&
         memcmp(p + n - 4, " UTC", 4) == 0 && all_digits(p, 4);
}

/* file    := {comment | section} EOF
 * section := [TITLE [timestamp]] group
 * group   := '[' [decl {',' decl}] ']'
 * (GHC prints no comments between sections; strobe lets tests and hand-written
 * programs have them, and drops them.) */
static void parse_file(Parser *P, CmmFile *f) {
  VEC(CmmGroup) groups = {0};
  next(P);
  for (;;) {
    while (P->tok.kind == TK_COMMENT) next(P);
    if (P->tok.kind == TK_EOF) break;
    CmmGroup g = {.loc = P->tok.loc};
    if (P->tok.kind == TK_TITLE) {
      g.title = tok_str(P, P->tok);
      CmmLexer look = P->lx;
      CmmToken line = cmm_lex_line(&look);
      if (is_timestamp(line.p, line.len)) {
        g.timestamp = tok_str(P, line);
        P->lx = look;
      }
      next(P);
    }
    if (P->tok.kind != TK_LBRACKET)
      expected(P, g.title ? "'[' to open the group" : "a section title or '['");
    next(P);
    VEC(CmmDecl) decls = {0};
    while (P->tok.kind != TK_RBRACKET) {
      if (decls.n) expect_kind(P, TK_COMMA, "',' or ']' after a declaration");
      CmmDecl d = {0};
      parse_decl(P, &d);
      vec_push(P->a, &decls, d);
    }
    next(P);
    g.ndecls = decls.n;
    g.decls = decls.v;
    vec_push(P->a, &groups, g);
  }
  f->ngroups = groups.n;
  f->groups = groups.v;
}

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
  parse_file(P, f);
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
    e = parse_expr(P);
    if (P->tok.kind != TK_EOF) expected(P, "the end of the expression");
  }
  free(P);
  return e;
}
