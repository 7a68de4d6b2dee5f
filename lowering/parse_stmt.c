/* parse_stmt.c — statements, ticks, tick scopes and blocks.
 *
 * A block is its label, its tick scope (the `//` comment after the label) and its
 * statements, the last one a terminator.  A block reference is checked once its proc
 * is parsed (ps_resolve_proc), since a goto may jump forward.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "parse.h"

/* ---- statements ------------------------------------------------------------------- */

void ps_block_ref(Parser *P, CmmBlockRef *ref) {
  if (P->tok.kind != TK_NAME || tok_is_def(P->tok)) ps_expected(P, "a block label");
  ref->name = tok_str(P, P->tok);
  ref->loc = P->tok.loc;
  next(P);
}

/* A register that may be assigned: a global or a local. */
static CmmExpr *parse_reg(Parser *P, const char *what) {
  CmmToken t = P->tok;
  if (t.kind != TK_NAME || (ps_global_reg(t.p, t.len) < 0 && !memmem(t.p, t.len, "::", 2)))
    ps_expected(P, what);
  CmmExpr *e = ps_atom(P);
  if (e->kind != CMM_E_GLOBAL && e->kind != CMM_E_LOCAL) /* `-_x::I64` is an expression */
    ps_fail_at(P, t.loc, "expected %s, got an expression", what);
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

/* The name after a source note, `> "stepB.go"` (strobe's GHC plugin writes it): the
 * `>` that ends the span, or NULL if the note has no name.  The file name before it
 * may hold anything, so the `>` is the first one followed by ` "` and preceded by the
 * end of a span (a digit or `)`) after which a whole string ends the comment. */
static const char *note_name_start(const char *p, const char *end) {
  if (end - p < 3 || end[-1] != '"') return NULL;
  for (const char *q = p; q + 2 < end - 1; q++) {
    if (q[0] != '>' || q[1] != ' ' || q[2] != '"' || q == p ||
        !((q[-1] >= '0' && q[-1] <= '9') || q[-1] == ')'))
      continue;
    const char *c = q + 3;
    while (c < end - 1 && *c != '"') c += *c == '\\' && c + 1 < end - 1 ? 2 : 1;
    if (c == end - 1) return q;
  }
  return NULL;
}

/* tick := '//tick src<' file ':' span '>' [STRING]     -- STRING: the binding's name
 * span := line ':' col | line ':' col '-' col | '(' line ',' col ')-(' line ',' col ')' */
static void parse_tick(Parser *P, CmmSrcNote *n) {
  CmmToken t = P->tok;
  const char *p = t.p + 4, *end = t.p + t.len;
  while (p < end && *p == ' ') p++;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
  CmmLoc at = t.loc + (CmmLoc)(p - t.p);
  const char *name = note_name_start(p, end);
  n->name = NULL;
  if (name) {
    CmmToken str = {.kind = TK_STRING, .loc = t.loc + (CmmLoc)(name + 2 - t.p),
                    .len = (uint32_t)(end - name - 2), .p = name + 2};
    uint8_t *bytes;
    uint32_t len;
    if (!cmm_decode_string(P->src, str, P->a, P->d, &bytes, &len)) longjmp(P->fail, 1);
    if (len == 0 || memchr(bytes, 0, len))
      ps_fail_at(P, str.loc, "expected the name of a binding after the source note, got %s",
                 len ? "a name holding NUL" : "an empty name");
    n->name = arena_strndup(P->a, (const char *)bytes, len);
    end = name + 1;
  }
  if (end - p < 5 || memcmp(p, "src<", 4) != 0 || end[-1] != '>')
    ps_fail_at(P, at, "expected a source note 'src<file:span>' after //tick");
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
    ps_fail_at(P, at, "expected 'file:line:col' in the source note");
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
    ps_fail_at(P, t.loc + (CmmLoc)(colon + 1 - t.p), "malformed span '%.*s' in the source note",
               (int)(bend - colon - 1), colon + 1);
  if (!n->line1 || !n->col1 || !n->line2 || !n->col2)
    ps_fail_at(P, t.loc + (CmmLoc)(colon + 1 - t.p), "source note lines and columns start at 1");
  if (n->line2 < n->line1 || (n->line2 == n->line1 && n->col2 < n->col1))
    ps_fail_at(P, t.loc + (CmmLoc)(colon + 1 - t.p), "source note span ends before it starts");
  next(P);
}

/* unwind := 'unwind' reg '=' ('Just' expr | 'Nothing') {',' reg '=' …} ';' */
static void parse_unwind(Parser *P, CmmStmt *s) {
  VEC(CmmUnwind) regs = {0};
  next(P);
  do {
    if (regs.n) next(P);
    CmmToken t = P->tok;
    int r = t.kind == TK_NAME ? ps_global_reg(t.p, t.len) : -1;
    if (r < 0) ps_expected(P, "a global register after 'unwind'");
    next(P);
    expect_name(P, "=");
    CmmUnwind u = {.reg = (uint8_t)r};
    if (is_name(P, "Nothing")) {
      next(P);
    } else {
      expect_name(P, "Just");
      u.expr = ps_expr(P);
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
  s->u.if_.cond = ps_expr(P);
  expect_kind(P, TK_RPAREN, "')' after the condition");
  s->u.if_.likely = -1;
  if (P->tok.kind == TK_LPAREN) {
    next(P);
    expect_name(P, "likely:");
    if (is_name(P, "True")) s->u.if_.likely = 1;
    else if (is_name(P, "False")) s->u.if_.likely = 0;
    else ps_expected(P, "'True' or 'False'");
    next(P);
    expect_kind(P, TK_RPAREN, "')'");
  }
  expect_name(P, "goto");
  ps_block_ref(P, &s->u.if_.then_);
  expect_kind(P, TK_SEMI, "';'");
  expect_name(P, "else");
  expect_name(P, "goto");
  ps_block_ref(P, &s->u.if_.else_);
  expect_kind(P, TK_SEMI, "';'");
}

/* switch := 'switch' '[' int '..' int ']' expr '{' case* [default] '}'
 * case    := 'case' int {',' int} ':' 'goto' L ';'
 * default := 'default:' '{' 'goto' L ';' '}' */
static void parse_switch(Parser *P, CmmStmt *s) {
  next(P);
  expect_kind(P, TK_LBRACKET, "'[' after 'switch'");
  s->u.sw.lo = ps_int_tok(P, "the lower bound of the switch range");
  expect_name(P, "..");
  s->u.sw.hi = ps_int_tok(P, "the upper bound of the switch range");
  expect_kind(P, TK_RBRACKET, "']'");
  s->u.sw.scrut = ps_expr(P);
  expect_kind(P, TK_LBRACE, "'{' to open the switch");
  VEC(CmmSwitchCase) cases = {0};
  while (is_name(P, "case")) {
    next(P);
    VEC(CmmInt) values = {0};
    do {
      if (values.n) next(P);
      vec_push(P->a, &values, ps_int_tok(P, "a case value"));
    } while (P->tok.kind == TK_COMMA);
    expect_name(P, ":");
    expect_name(P, "goto");
    CmmSwitchCase c = {.nvalues = values.n, .values = values.v};
    vec_push(P->a, &cases, c);
    ps_block_ref(P, &cases.v[cases.n - 1].target);
    expect_kind(P, TK_SEMI, "';'");
  }
  s->u.sw.ncases = cases.n;
  s->u.sw.cases = cases.v;
  if (is_name(P, "default:")) {
    next(P);
    expect_kind(P, TK_LBRACE, "'{'");
    expect_name(P, "goto");
    s->u.sw.has_default = true;
    ps_block_ref(P, &s->u.sw.default_);
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
    vec_push(P->a, &args, ps_expr(P));
    while (P->tok.kind == TK_COMMA) {
      next(P);
      vec_push(P->a, &args, ps_expr(P));
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
          ps_expected(P, "a hint (PtrHint, ‘signed’ or none)");
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
    s->u.ccall.target = ps_expr(P);
    expect_kind(P, TK_RPAREN, "')' after the call target");
  } else {
    if (P->tok.kind != TK_NAME) ps_expected(P, "the function to call");
    CmmToken t = P->tok;
    next(P);
    s->u.ccall.target = ps_label_expr(P, t, false);
  }
  s->u.ccall.args = parse_args(P, &s->u.ccall.nargs);
  expect_kind(P, TK_SEMI, "';' after the call");
}

/* prim  := 'MO_' name [width [amo | order] | int] args ';'
 * order := 'MemOrderRelaxed' | 'MemOrderAcquire' | 'MemOrderRelease' | 'MemOrderSeqCst'
 *          (GHC 9.6 prints one after an atomic read's or write's width; 9.0 none) */
static void parse_primcall(Parser *P, CmmStmt *s, int op) {
  s->kind = CMM_S_PRIMCALL;
  s->u.prim.op = (uint8_t)op;
  next(P);
  switch (cmm_primops[op].arg) {
  case CMM_PRIMARG_WIDTH: s->u.prim.width = ps_width(P); break;
  case CMM_PRIMARG_WIDTH_AMO:
    s->u.prim.width = ps_width(P);
    if (P->tok.kind != TK_NAME || P->tok.len < 5 || memcmp(P->tok.p, "AMO_", 4) != 0)
      ps_expected(P, "an atomic operation (AMO_Add, AMO_Sub, …)");
    s->u.prim.amo = tok_str(P, P->tok);
    next(P);
    break;
  case CMM_PRIMARG_INT: s->u.prim.intarg = ps_i64(P, "an alignment"); break;
  case CMM_PRIMARG_WIDTH_ORDER:
    s->u.prim.width = ps_width(P);
    if (P->tok.kind == TK_NAME && P->tok.len > 8 && memcmp(P->tok.p, "MemOrder", 8) == 0) {
      for (int o = CMM_ORDER_NONE + 1; o < CMM_NUM_ORDERS; o++)
        if (strlen(cmm_order_names[o]) == P->tok.len && memcmp(cmm_order_names[o], P->tok.p, P->tok.len) == 0)
          s->u.prim.order = (uint8_t)o;
      if (s->u.prim.order == CMM_ORDER_NONE)
        ps_expected(P, "a memory order (MemOrderRelaxed, MemOrderAcquire, MemOrderRelease or "
                       "MemOrderSeqCst)");
      next(P);
    }
    break;
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
    ps_fail_at(P, P->tok.loc, "only foreign calls and prim calls return results; got %s",
               ps_describe(P, P->tok));
  s->kind = CMM_S_CALL;
  if (P->tok.kind == TK_LPAREN) {
    next(P);
    s->u.call.target = ps_expr(P);
    expect_kind(P, TK_RPAREN, "')' after the call target");
  } else {
    if (P->tok.kind != TK_NAME || tok_is_def(P->tok)) ps_expected(P, "the call target");
    CmmToken t = P->tok;
    next(P);
    s->u.call.target = ps_label_expr(P, t, false);
  }
  expect_kind(P, TK_LPAREN, "'(' before the registers passed");
  VEC(uint8_t) regs = {0};
  while (P->tok.kind != TK_RPAREN) {
    if (regs.n) expect_kind(P, TK_COMMA, "',' or ')' in the registers passed");
    int r = P->tok.kind == TK_NAME ? ps_global_reg(P->tok.p, P->tok.len) : -1;
    if (r < 0) ps_expected(P, "a global register");
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
    ps_block_ref(P, &s->u.call.returns_to);
    expect_kind(P, TK_COMMA, "','");
  }
  expect_name(P, "args:");
  s->u.call.args = ps_i64(P, "a byte count");
  expect_kind(P, TK_COMMA, "','");
  expect_name(P, "res:");
  s->u.call.res = ps_i64(P, "a byte count");
  expect_kind(P, TK_COMMA, "','");
  expect_name(P, "upd:");
  s->u.call.upd = ps_i64(P, "a byte count");
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
    if (!is_name(P, "call")) ps_expected(P, "'call'");
    parse_call(P, s, results.v, results.n);
    return;
  }
  if (t.kind != TK_NAME) ps_expected(P, "a statement");
  if (is_name(P, "unwind")) { s->kind = CMM_S_UNWIND; parse_unwind(P, s); return; }
  if (is_name(P, "if")) { s->kind = CMM_S_IF; parse_if(P, s); return; }
  if (is_name(P, "switch")) { s->kind = CMM_S_SWITCH; parse_switch(P, s); return; }
  if (is_name(P, "call")) { parse_call(P, s, NULL, 0); return; }
  if (is_name(P, "goto")) {
    s->kind = CMM_S_GOTO;
    next(P);
    ps_block_ref(P, &s->u.goto_.target);
    expect_kind(P, TK_SEMI, "';' after the goto");
    return;
  }
  CmmType ty;
  bool unaligned = false, relaxed = false;
  if (P->lx.p < P->lx.end && *P->lx.p == '[' && ps_memory_type(t, &ty, &unaligned, &relaxed)) {
    if (relaxed) /* GHC writes atomically with MO_AtomicWrite, never `I64![e] = v;` */
      ps_fail_at(P, t.loc + (CmmLoc)t.len - 1,
                 "expected a store ('%.*s[…] = …;' or '%.*s^[…] = …;'), got the relaxed load "
                 "'%.*s[' as a statement", (int)t.len - 1, t.p, (int)t.len - 1, t.p,
                 (int)t.len, t.p);
    s->kind = CMM_S_STORE;
    s->u.store.type = ty;
    s->u.store.unaligned = unaligned;
    next(P);
    next(P); /* '[' */
    s->u.store.addr = ps_expr(P);
    expect_kind(P, TK_RBRACKET, "']' to close the address");
    expect_name(P, "=");
    s->u.store.rhs = ps_expr(P);
    expect_kind(P, TK_SEMI, "';' after the store");
    return;
  }
  s->kind = CMM_S_ASSIGN;
  s->u.assign.lhs = parse_reg(P, "a statement");
  expect_name(P, "=");
  s->u.assign.rhs = ps_expr(P);
  expect_kind(P, TK_SEMI, "';' after the assignment");
}

/* ---- blocks ----------------------------------------------------------------------- */

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
    if (end[-1] != ')') ps_fail_at(P, AT(end), "expected ')' to close the combined scope");
    p++;
    end--;
  }
  VEC(CmmScopePath) paths = {0};
  for (;;) {
    VEC(const char *) comps = {0};
    for (;;) {
      const char *c = p;
      while (p < end && is_unique_char(*p)) p++;
      if (p == c)
        ps_fail_at(P, AT(p), "expected a tick scope (a unique, a path 'a/b' or 'global')");
      vec_push(P->a, &comps, arena_strndup(P->a, c, (size_t)(p - c)));
      if (p < end && *p == '/') { p++; continue; }
      break;
    }
    CmmScopePath path = {comps.n, comps.v};
    vec_push(P->a, &paths, path);
    if (combined && p < end && *p == '+') { p++; continue; }
    break;
  }
  if (p != end) ps_fail_at(P, AT(p), "unexpected '%c' in the tick scope", *p);
  if (combined && paths.n < 2) ps_fail_at(P, sc->loc, "a combined scope has at least two paths");
#undef AT
  sc->npaths = paths.n;
  sc->paths = paths.v;
  next(P);
}

/* block := L ':' '//' scope stmt* terminator */
void ps_block(Parser *P, CmmBlock *b, uint32_t index) {
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
    ps_expected(P, "the block's tick scope ('// c1/c2'; dumps made with -dsuppress-ticks lack it)");
  parse_scope(P, &b->scope);
  VEC(CmmStmt) stmts = {0};
  for (;;) {
    if (P->tok.kind == TK_RBRACE || tok_is_def(P->tok)) {
      if (!stmts.n || !cmm_is_terminator(stmts.v[stmts.n - 1].kind))
        ps_expected(P, arena_printf(P->a,
                                    "a statement ending block '%s' (goto, if, switch or call)",
                                    b->label));
      break;
    }
    if (stmts.n && cmm_is_terminator(stmts.v[stmts.n - 1].kind))
      ps_expected(P, "a block label or '}' after the block's last statement");
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
    ps_fail_at(P, r->loc, "no block '%s' in this procedure", r->name);
}

void ps_resolve_proc(Parser *P, CmmProc *pr) {
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
