/* parse.h — what the files of the parser share (the approach: parse.c's essay).
 *
 * One Parser over a file, split by concern into these files; each section below names
 * the file that implements it:
 *
 *   parse.c       the essay; tokens and errors, numbers, widths, types and registers;
 *                 the entry points cmm_parse and cmm_parse_expr
 *   parse_expr.c  expressions: operands, MachOps, GHC's printing precedence
 *                 (Note [Bitwise chains])
 *   parse_stmt.c  statements, ticks, tick scopes and blocks; a proc's block references
 *   parse_decl.c  statics, info tables, live registers, procs, data sections, and the
 *                 file: sections, groups and declarations
 *
 * Errors: ps_fail_at and ps_expected report the parse's one error and unwind (longjmp)
 * to cmm_parse; every node is in the file's arena, so unwinding leaks nothing.
 */
#ifndef STROBE_PARSE_H
#define STROBE_PARSE_H

#include "cmm.h"

#include <setjmp.h>
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

/* ---- parse.c: tokens and errors --------------------------------------------------- */

/* Reports an error at loc and unwinds to cmm_parse. */
_Noreturn void ps_fail_at(Parser *P, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* `expected WHAT, got TOKEN` at the current token, and unwinds. */
_Noreturn void ps_expected(Parser *P, const char *what);
/* How a token reads in "got X". */
const char *ps_describe(Parser *P, CmmToken t);

static inline void next(Parser *P) {
  P->tok = cmm_lex_next(&P->lx);
  if (P->tok.kind == TK_ERROR) longjmp(P->fail, 1); /* the lexer reported it */
}

static inline bool is_name(const Parser *P, const char *s) {
  size_t n = strlen(s);
  return P->tok.kind == TK_NAME && P->tok.len == n && memcmp(P->tok.p, s, n) == 0;
}

static inline void expect_kind(Parser *P, int kind, const char *what) {
  if (P->tok.kind != kind) ps_expected(P, what);
  next(P);
}

static inline void expect_name(Parser *P, const char *s) {
  if (!is_name(P, s)) ps_expected(P, arena_printf(P->a, "'%s'", s));
  next(P);
}

static inline char *tok_str(Parser *P, CmmToken t) { return arena_strndup(P->a, t.p, t.len); }

static inline bool tok_is_def(CmmToken t) { /* `label:` but not `x::` */
  return t.kind == TK_NAME && t.len >= 2 && t.p[t.len - 1] == ':' && t.p[t.len - 2] != ':';
}

/* ---- parse.c: numbers, widths, types and registers -------------------------------- */

static inline bool all_digits(const char *p, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++)
    if (p[i] < '0' || p[i] > '9') return false;
  return true;
}

/* Decimal magnitude; fails on overflow past 2^64-1. */
uint64_t ps_magnitude(Parser *P, const char *p, size_t n, CmmLoc loc);
/* int := ['-'] digits */
CmmInt ps_int_tok(Parser *P, const char *what);
uint32_t ps_u32(Parser *P, const char *what);
int64_t ps_i64(Parser *P, const char *what);
/* The width the digits of `W64` name; 0 if none. */
uint16_t ps_width_digits(const char *p, size_t n);
/* width := W8 | W16 | W32 | W64 | W128 | W256 | W512 */
uint16_t ps_width(Parser *P);
/* type := I8 … I512 | P32 | P64 | F32 | F64 */
bool ps_type_of(const char *p, size_t n, CmmType *t);
/* memtype := type ['^' | '!']   the type of a load or store, before its '['; '^': unaligned
 * (GHC 9.4 and later print `I64^[e]`); '!': a relaxed atomic load (GHC 9.10 prints
 * MO_RelaxedRead, every closure's info pointer, as `I64![e]`) */
bool ps_memory_type(CmmToken t, CmmType *ty, bool *unaligned, bool *relaxed);
/* The global register p names, or -1. */
int ps_global_reg(const char *p, size_t n);

/* ---- parse_expr.c ----------------------------------------------------------------- */

CmmExpr *ps_expr(Parser *P);
/* One operand: no infix operator follows it into the result. */
CmmExpr *ps_atom(Parser *P);
/* A label from token t (already consumed); allow_diff: a label difference may be read. */
CmmExpr *ps_label_expr(Parser *P, CmmToken t, bool allow_diff);

/* ---- parse_stmt.c ----------------------------------------------------------------- */

void ps_block_ref(Parser *P, CmmBlockRef *ref);
/* The block whose `L:` is the current token, the index-th of its proc. */
void ps_block(Parser *P, CmmBlock *b, uint32_t index);
/* Checks every block reference of a parsed proc and marks the labels naming its blocks. */
void ps_resolve_proc(Parser *P, CmmProc *pr);

/* ---- parse_decl.c ----------------------------------------------------------------- */

/* The whole file, from its first token. */
void ps_file(Parser *P, CmmFile *f);

#endif
