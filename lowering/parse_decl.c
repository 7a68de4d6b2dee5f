/* parse_decl.c — statics, info tables, procs, data sections, and the file's structure:
 * its dump sections (a title, a timestamp), their groups and declarations.
 */
#include "parse.h"

/* ---- statics and info tables ------------------------------------------------------ */

/* static := 'const' expr ';' | 'I8' '[' ']' string | 'I8' '[' int ']' */
static void parse_static(Parser *P, CmmStatic *st) {
  st->loc = P->tok.loc;
  if (is_name(P, "const")) {
    next(P);
    st->kind = CMM_STATIC_LIT;
    P->in_static = true;
    CmmExpr *e = ps_expr(P);
    P->in_static = false;
    if (e->kind != CMM_E_INT && e->kind != CMM_E_FLOAT && e->kind != CMM_E_LABEL &&
        e->kind != CMM_E_LABEL_DIFF)
      ps_fail_at(P, e->loc, "expected a literal (a number, a label or a label difference)");
    st->lit = e;
    expect_kind(P, TK_SEMI, "';' after the constant");
    return;
  }
  if (!is_name(P, "I8")) ps_expected(P, "'const', 'I8[]' or the end of the statics");
  next(P);
  expect_kind(P, TK_LBRACKET, "'[' after I8");
  if (P->tok.kind == TK_RBRACKET) {
    next(P);
    if (P->tok.kind != TK_STRING) ps_expected(P, "a string literal after I8[]");
    uint8_t *bytes;
    if (!cmm_decode_string(P->src, P->tok, P->a, P->d, &bytes, &st->len)) longjmp(P->fail, 1);
    st->kind = CMM_STATIC_STRING;
    st->bytes = bytes;
    next(P);
  } else {
    st->kind = CMM_STATIC_UNINIT;
    st->len = ps_u32(P, "a size in bytes");
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
  if (!tok_is_def(P->tok)) ps_expected(P, what);
  const char *l = arena_strndup(P->a, P->tok.p, P->tok.len - 1);
  next(P);
  return l;
}

static const char *parse_label_name(Parser *P, const char *what) {
  if (P->tok.kind != TK_NAME || tok_is_def(P->tok)) ps_expected(P, what);
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
    else ps_expected(P, "'True' or 'False'");
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
    r->rts_type = ps_u32(P, "a closure type");
    r->inner = arena_alloc(P->a, sizeof *r->inner);
    if (++P->depth > MAX_DEPTH) ps_fail_at(P, P->tok.loc, "info table nested too deeply");
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
    uint32_t v = ps_u32(P, "a count");
    if (is_name(P, "ptrs")) r->ptrs = v;
    else if (is_name(P, "nonptrs")) r->nonptrs = v;
    else ps_expected(P, "'ptrs' or 'nonptrs'");
    next(P);
  }
  expect_kind(P, TK_LBRACE, "'{' to open the closure type");
  if (is_name(P, "Thunk")) { r->closure = CMM_CLOSURE_THUNK; next(P); }
  else if (is_name(P, "BlackHole")) { r->closure = CMM_CLOSURE_BLACKHOLE; next(P); }
  else if (is_name(P, "IndStatic")) { r->closure = CMM_CLOSURE_INDSTATIC; next(P); }
  else if (is_name(P, "ThunkSel")) {
    r->closure = CMM_CLOSURE_THUNK_SELECTOR;
    next(P);
    r->selector = ps_u32(P, "a selector offset");
  } else if (is_name(P, "Fun")) {
    r->closure = CMM_CLOSURE_FUN;
    next(P);
    expect_kind(P, TK_LBRACE, "'{'");
    expect_name(P, "arity:");
    r->arity = ps_u32(P, "an arity");
    expect_name(P, "fun_type:");
    if (is_name(P, "ArgSpec")) {
      next(P);
      r->arg_spec = ps_u32(P, "an argument pattern number");
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
    r->tag = ps_u32(P, "a constructor tag");
    expect_name(P, "descr:");
    if (P->tok.kind != TK_STRING) ps_expected(P, "the constructor description string");
    uint8_t *bytes;
    uint32_t len;
    if (!cmm_decode_string(P->src, P->tok, P->a, P->d, &bytes, &len)) longjmp(P->fail, 1);
    if (memchr(bytes, 0, len)) ps_fail_at(P, P->tok.loc, "NUL byte in a constructor description");
    r->descr = (const char *)bytes;
    next(P);
    expect_kind(P, TK_RBRACE, "'}'");
  } else {
    ps_expected(P, "a closure type (Thunk, Fun, Con, ThunkSel, BlackHole, IndStatic)");
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
    ps_block_ref(P, &it.block);
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
    pr->arg_space = ps_i64(P, "a byte count");
  }
  expect_kind(P, TK_RBRACE, "'}' to close the info tables");
}

/* ---- procs, data sections and the file -------------------------------------------- */

/* A token inside a comment: a lexer over [p, end) of the same source. */
static void sub_lexer(Parser *P, CmmLexer *lx, const char *p, const char *end) {
  cmm_lex_init(lx, P->src, P->d);
  lx->p = p;
  lx->end = end;
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
  if (P->tok.kind != TK_COMMENT) ps_expected(P, "the live registers ('//  [R1]')");
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
    int r = P->tok.kind == TK_NAME ? ps_global_reg(P->tok.p, P->tok.len) : -1;
    if (r < 0) ps_expected(P, "a global register");
    vec_push(P->a, &live, (uint8_t)r);
    next(P);
  }
  if (P->in_comment) {
    next(P);
    if (P->tok.kind != TK_EOF) ps_expected(P, "the end of the comment");
    P->lx = saved;
    P->in_comment = false;
  } else { /* the ']' of a wrapped list ends the comment's last line */
    const char *q = P->lx.p;
    while (q < P->lx.end && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < P->lx.end && *q != '\n')
      ps_fail_at(P, (CmmLoc)(q - P->src->text),
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
    if (!tok_is_def(P->tok)) ps_expected(P, "a block label ('c1K8:') or '}'");
    CmmBlock b = {0};
    ps_block(P, &b, blocks.n);
    vec_push(P->a, &blocks, b);
  }
  next(P);
  pr->nblocks = blocks.n;
  pr->blocks = blocks.v;
  expect_kind(P, TK_RBRACE, "'}' to close the procedure");
  ps_resolve_proc(P, pr);
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
#define FAIL_HERE(...) ps_fail_at(P, (CmmLoc)(p - P->src->text), __VA_ARGS__)
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

/* A symbol as GHC's assembly spells it: letters, digits, `_`, `.` and `$`. */
static bool is_symbol(CmmToken t) {
  for (uint32_t i = 0; i < t.len; i++) {
    char c = t.p[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '.' || c == '$'))
      return false;
  }
  return t.len > 0 && t.kind == TK_NAME;
}

/* symbols := 'symbols' '{' {LABEL '=' SYMBOL ('global' | 'local') ';'} '}'
 * (strobe's GHC plugin: docs/cmm-syntax.md, "What the plugin adds") */
static void parse_symbols(Parser *P, CmmFile *f) {
  if (f->nsymbols) ps_fail_at(P, P->tok.loc, "a second 'symbols' table: a file has one");
  CmmLoc open = P->tok.loc;
  next(P);
  P->open_what = "the symbols table";
  P->open_loc = open;
  expect_kind(P, TK_LBRACE, "'{' after 'symbols'");
  VEC(CmmSymbol) rows = {0};
  StrMap seen;
  strmap_init(&seen, P->a, 64);
  while (P->tok.kind != TK_RBRACE) {
    CmmSymbol s = {.loc = P->tok.loc};
    if (P->tok.kind != TK_NAME || is_name(P, "=")) ps_expected(P, "a label or '}'");
    s.label = tok_str(P, P->tok);
    next(P);
    expect_name(P, "=");
    if (!is_symbol(P->tok)) ps_expected(P, "the label's symbol (letters, digits, '_', '.', '$')");
    s.symbol = tok_str(P, P->tok);
    next(P);
    if (is_name(P, "global")) s.global = true;
    else if (!is_name(P, "local")) ps_expected(P, "'global' or 'local'");
    next(P);
    expect_kind(P, TK_SEMI, "';' after the symbol's visibility");
    uint32_t old;
    if (!strmap_put(&seen, P->a, s.label, rows.n, &old)) {
      diag_error(P->d, P->src, s.loc, "label '%s' is in the symbols table twice", s.label);
      diag_note(P->d, P->src, rows.v[old].loc, "first here");
      longjmp(P->fail, 1);
    }
    vec_push(P->a, &rows, s);
  }
  next(P);
  P->open_what = NULL;
  f->nsymbols = rows.n;
  f->symbols = rows.v;
}

/* file    := {comment | section | symbols} EOF
 * section := [TITLE [timestamp]] group
 * group   := '[' [decl {',' decl}] ']'
 * (GHC prints no comments between sections; strobe lets tests and hand-written
 * programs have them, and drops them.) */
void ps_file(Parser *P, CmmFile *f) {
  VEC(CmmGroup) groups = {0};
  next(P);
  for (;;) {
    while (P->tok.kind == TK_COMMENT) next(P);
    if (P->tok.kind == TK_EOF) break;
    if (is_name(P, "symbols")) {
      parse_symbols(P, f);
      continue;
    }
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
      ps_expected(P, g.title ? "'[' to open the group" : "a section title or '['");
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
