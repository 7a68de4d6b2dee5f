/* parse_expr.c — expressions: operands, MachOps and GHC's printing precedence.
 *
 * The levels, loosest first, and why a bare bitwise run may be refused: parse.c's essay
 * and Note [Bitwise chains] below.  An operand is classified by its spelling and its
 * position (parse_atom_): number, register, label, label+offset, label difference
 * (statics only), or a glued prefix operator.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "parse.h"

#include <errno.h>
#include <stdlib.h>

/* The prefix operators glued to one operand. */
enum { PREFIX_NEG = 1, PREFIX_NOT = 2 };

static CmmExpr *new_expr(Parser *P, int kind, CmmLoc loc) {
  CmmExpr *e = arena_alloc(P->a, sizeof *e);
  e->kind = (uint8_t)kind;
  e->loc = loc;
  return e;
}

static CmmExpr *parse_unary(Parser *P, unsigned *prefixes);

/* A label names a closure, an info table, a string … : `_closure`, `_info`, `_str`. */
static bool has_label_suffix(const char *p, size_t n) {
  size_t i = n;
  while (i > 0 && p[i - 1] >= 'a' && p[i - 1] <= 'z') i--;
  return i < n && i > 1 && p[i - 1] == '_';
}

/* label := name ['+' digits | '-' digits]
 * static label := name '-' name [offset]   (a difference; both names end in a suffix) */
CmmExpr *ps_label_expr(Parser *P, CmmToken t, bool allow_diff) {
  CmmExpr *e = new_expr(P, CMM_E_LABEL, t.loc);
  size_t n = t.len, i = n;
  while (i > 0 && t.p[i - 1] >= '0' && t.p[i - 1] <= '9') i--;
  if (i < n && i >= 2 && (t.p[i - 1] == '+' || t.p[i - 1] == '-') && t.p[i - 2] != '+' &&
      t.p[i - 2] != '-') {
    uint64_t mag = ps_magnitude(P, t.p + i, n - i, t.loc + (CmmLoc)i);
    if (mag > INT64_MAX) ps_fail_at(P, t.loc + (CmmLoc)i, "label offset out of range");
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

/* A float that Haskell's `show` names rather than writes in digits. */
static bool is_named_float(const char *p, size_t n) {
  return (n == 8 && memcmp(p, "Infinity", 8) == 0) || (n == 3 && memcmp(p, "NaN", 3) == 0);
}

/* `-8`, `-1.5e-3`, `-Infinity`: a number with its `-` glued on.  GHC prints a negative
 * float so (GHC.Cmm.Ppr.Expr, pprLit: `show` on a Double, no parentheses), and a
 * negative integer in parentheses, `(-8)`, where the `-` is then read the same way. */
static bool is_negative_number(CmmToken t) {
  return t.len > 1 && t.p[0] == '-' &&
         ((t.p[1] >= '0' && t.p[1] <= '9') || is_named_float(t.p + 1, t.len - 1));
}

/* number := digits [':: ' width] | float ':: ' width    (float: digits with . or e,
 *           Infinity, NaN; `-` glued in front for negative values: -Infinity) */
static CmmExpr *number_expr(Parser *P, CmmToken t) {
  bool neg = t.p[0] == '-';
  const char *p = t.p + neg;
  size_t n = t.len - neg;
  CmmExpr *e;
  if (all_digits(p, n)) {
    e = new_expr(P, CMM_E_INT, t.loc);
    e->u.i.mag = ps_magnitude(P, p, n, t.loc);
    e->u.i.neg = neg && e->u.i.mag != 0;
    if (neg && e->u.i.mag > (uint64_t)INT64_MAX + 1)
      ps_fail_at(P, t.loc, "integer literal '%.*s' does not fit in 64 bits", (int)t.len, t.p);
    e->type = (CmmType){CMM_BITS, CMM_WORD_WIDTH};
  } else {
    char *spelling = tok_str(P, t), *end;
    errno = 0;
    double v = strtod(spelling, &end);
    const char *sp = spelling + neg;
    bool named = is_named_float(sp, strlen(sp));
    if (*end || (!named && (n == 0 || p[0] < '0' || p[0] > '9')))
      ps_fail_at(P, t.loc, "malformed number '%s'", spelling);
    e = new_expr(P, CMM_E_FLOAT, t.loc);
    e->u.f.spelling = spelling;
    e->u.f.value = v;
    e->type.cat = CMM_FLOAT;
  }
  next(P);
  if (is_name(P, "::")) {
    next(P);
    e->type.width = ps_width(P);
    if (e->kind == CMM_E_FLOAT && e->type.width != 32 && e->type.width != 64)
      ps_fail_at(P, t.loc, "a float literal must be W32 or W64");
  } else if (e->kind == CMM_E_FLOAT) {
    ps_expected(P, "':: W64' or ':: W32' after a float literal");
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
    uint16_t w1 = ps_width_digits(w, (size_t)(sep - w));
    uint16_t w2 = mi->nwidths == 2 ? ps_width_digits(sep + 2, (size_t)(end - sep - 2)) : w1;
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
        ps_expected(P, arena_printf(P->a, "',' (%%MO_%s takes %u operands)", mi->name, mi->arity));
      if (i) next(P);
      e->u.mo.args[i] = ps_expr(P);
    }
    if (P->tok.kind != TK_RPAREN)
      ps_expected(P, arena_printf(P->a, "')' (%%MO_%s takes %u operand%s)", mi->name, mi->arity,
                                  mi->arity == 1 ? "" : "s"));
    next(P);
    return e;
  }
  ps_fail_at(P, t.loc, "unknown MachOp '%.*s'", (int)t.len, t.p);
}

/* atom := '(' expr ')' | machop | type '[' expr ']' | global | local | number | label */
static CmmExpr *parse_atom_(Parser *P);
CmmExpr *ps_atom(Parser *P) {
  if (++P->depth > MAX_DEPTH) ps_fail_at(P, P->tok.loc, "expression nested too deeply");
  CmmExpr *e = parse_atom_(P);
  P->depth--;
  return e;
}

static CmmExpr *parse_atom_(Parser *P) {
  CmmToken t = P->tok;
  if (t.kind == TK_LPAREN) {
    next(P);
    CmmExpr *e = ps_expr(P);
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
  if (t.kind != TK_NAME || tok_is_def(t) || only_symbols(t)) ps_expected(P, "an expression");
  if (t.len > 4 && memcmp(t.p, "%MO_", 4) == 0) return named_machop(P, t);
  if ((is_glued_prefix(t) && !(t.p[1] >= '0' && t.p[1] <= '9') && !is_negative_number(t)) ||
      (t.len == 1 && (t.p[0] == '-' || t.p[0] == '~') && P->lx.p < P->lx.end && *P->lx.p == '(')) {
    unsigned prefixes = 0;
    return parse_unary(P, &prefixes);
  }

  CmmType ty;
  bool unaligned = false, relaxed = false;
  if (P->lx.p < P->lx.end && *P->lx.p == '[' && ps_memory_type(t, &ty, &unaligned, &relaxed)) {
    CmmExpr *e = new_expr(P, CMM_E_LOAD, t.loc);
    e->type = ty;
    e->u.load.unaligned = unaligned;
    e->u.load.relaxed = relaxed;
    next(P);
    expect_kind(P, TK_LBRACKET, "'['");
    e->u.load.addr = ps_expr(P);
    expect_kind(P, TK_RBRACKET, "']' to close the load");
    return e;
  }
  int r = ps_global_reg(t.p, t.len);
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
    if (nl == 0) ps_fail_at(P, t.loc, "expected a register name before '::'");
    if (!ps_type_of(dc + 2, tl, &ty))
      ps_fail_at(P, t.loc + (CmmLoc)nl + 2, "expected a type (I64, P64, F64, …), got '%.*s'",
                 (int)tl, dc + 2);
    CmmExpr *e = new_expr(P, CMM_E_LOCAL, t.loc);
    e->u.local.name = arena_strndup(P->a, t.p, nl);
    e->type = ty;
    next(P);
    return e;
  }
  bool neg = t.p[0] == '-' && t.len > 1;
  if ((t.p[neg] >= '0' && t.p[neg] <= '9') ||
      is_named_float(t.p + neg, t.len - neg))
    return number_expr(P, t);
  next(P);
  return ps_label_expr(P, t, P->in_static);
}

/* unary := '-' unary | '~' unary | atom       (the operator glued to its operand)
 * Adds the prefixes read (PREFIX_NEG, PREFIX_NOT) to *prefixes. */
static CmmExpr *parse_unary(Parser *P, unsigned *prefixes) {
  CmmToken t = P->tok;
  /* `-(-8)`: the operator alone, glued to a parenthesis */
  bool alone = t.kind == TK_NAME && t.len == 1 && (t.p[0] == '-' || t.p[0] == '~') &&
               P->lx.p < P->lx.end && *P->lx.p == '(';
  if (!alone && (t.kind != TK_NAME || !is_glued_prefix(t) ||
                 is_negative_number(t)))
    return ps_atom(P);
  CmmExpr *e = new_expr(P, CMM_E_MACHOP, t.loc);
  e->u.mo.op = t.p[0] == '-' ? CMM_MO_S_NEG : CMM_MO_NOT;
  *prefixes |= t.p[0] == '-' ? PREFIX_NEG : PREFIX_NOT;
  e->u.mo.nargs = 1;
  e->u.mo.args = arena_alloc(P->a, sizeof *e->u.mo.args);
  if (++P->depth > MAX_DEPTH) ps_fail_at(P, t.loc, "expression nested too deeply");
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
    if (++P->depth > MAX_DEPTH) ps_fail_at(P, loc, "expression nested too deeply");
    next(P);
    prefixes = 0;
    operand = P->tok;
    CmmExpr *y = level == 9 ? parse_unary(P, &prefixes) : parse_level(P, tighter[level]);
    if (level == 9) prefixes |= negative_literal(operand);
    x = binary(P, op, x, y, loc);
    if (level == 1) {
      if (infix_op(P, &l) >= 0 && l == 1)
        ps_fail_at(P, P->tok.loc, "comparisons and shifts do not associate: add parentheses");
      P->depth = depth;
      return x;
    }
  }
}

CmmExpr *ps_expr(Parser *P) { return parse_level(P, 1); }
