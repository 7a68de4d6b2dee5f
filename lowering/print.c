/* print.c — the canonical Cmm printer (--emit=cmm).
 *
 * It prints GHC's layout and GHC's expression syntax (GHC.Cmm.Ppr*), one statement
 * per line: reading its output back gives the same IR, so printing is a fixed point.
 * The precedence levels are those the parser reads (parse.c): an operand that is an
 * operator of a looser level, or of the same level on the right, gets parentheses;
 * `& | ^` and the prefixes never do, as in GHC.
 */
#include "cmm.h"

#include <inttypes.h>
#include <string.h>

static void print_int(FILE *out, CmmInt v) {
  fprintf(out, "%s%" PRIu64, v.neg ? "-" : "", v.mag);
}

/* In an expression a negative literal is parenthesised: `R1 & (-8)`, `const (-1);`. */
static void print_int_lit(FILE *out, CmmInt v) {
  if (v.neg) fprintf(out, "(-%" PRIu64 ")", v.mag);
  else fprintf(out, "%" PRIu64, v.mag);
}

static void print_offset(FILE *out, int64_t off) {
  if (off > 0) fprintf(out, "+%" PRId64, off);
  else if (off < 0) fprintf(out, "-%" PRIu64, (uint64_t)0 - (uint64_t)off);
}

static void print_at(FILE *out, const CmmExpr *e, int level);

static void print_lit(FILE *out, const CmmExpr *e, bool nested) {
  switch (e->kind) {
  case CMM_E_INT:
    print_int_lit(out, e->u.i);
    if (e->type.width && e->type.width != CMM_WORD_WIDTH) fprintf(out, " :: W%u", e->type.width);
    return;
  case CMM_E_FLOAT:
    fprintf(out, "%s :: W%u", e->u.f.spelling, e->type.width);
    return;
  case CMM_E_LABEL:
  case CMM_E_LABEL_DIFF: {
    bool parens = nested && (e->u.label.offset || e->kind == CMM_E_LABEL_DIFF);
    if (parens) fputc('(', out);
    fputs(e->u.label.name, out);
    if (e->kind == CMM_E_LABEL_DIFF) fprintf(out, "-%s", e->u.label.name2);
    print_offset(out, e->u.label.offset);
    if (parens) fputc(')', out);
    return;
  }
  default: internal_error("print_lit: not a literal");
  }
}

static void print_args(FILE *out, CmmExpr *const *args, uint32_t n) {
  fputc('(', out);
  for (uint32_t i = 0; i < n; i++) {
    if (i) fputs(", ", out);
    cmm_print_expr(out, args[i]);
  }
  fputc(')', out);
}

/* `& | ^` and the prefixes: GHC prints them bare inside one another, and the parser
 * accepts only the bare runs that have one meaning (parse_expr.c, Note [Bitwise chains]): one
 * operator throughout, read left-associated, and a prefix on the last operand only, or
 * `~` anywhere in a run of `^`.  Everything else gets parentheses, so that the output
 * reads back as the same tree; GHC's own accepted text prints as GHC printed it. */
static bool is_bitwise(const CmmExpr *e) {
  return e->kind == CMM_E_MACHOP && cmm_machops[e->u.mo.op].prec == 9 && e->u.mo.nargs == 2;
}

static bool is_prefix(const CmmExpr *e) {
  return e->kind == CMM_E_MACHOP && (e->u.mo.op == CMM_MO_NOT || e->u.mo.op == CMM_MO_S_NEG);
}

/* A run of prefixes printed bare (`~~x`) that is all `~`. */
static bool only_not(const CmmExpr *e) {
  for (; is_prefix(e); e = e->u.mo.args[0])
    if (e->u.mo.op == CMM_MO_S_NEG) return false;
  return true;
}

static void print_bitwise(FILE *out, const CmmExpr *e, int follow);

/* An operand of the bitwise operator op; follow is the bitwise operator printed right
 * after it, or -1 when it ends the run. */
static void print_bitwise_operand(FILE *out, const CmmExpr *e, int op, int follow, bool left) {
  bool bare;
  if (is_bitwise(e)) bare = left && e->u.mo.op == op;
  else if (is_prefix(e)) bare = follow < 0 || (follow == CMM_MO_XOR && only_not(e));
  else bare = true;
  if (!bare) fputc('(', out);
  if (is_bitwise(e)) print_bitwise(out, e, bare ? follow : -1);
  else print_at(out, e, 9);
  if (!bare) fputc(')', out);
}

static void print_bitwise(FILE *out, const CmmExpr *e, int follow) {
  int op = e->u.mo.op;
  print_bitwise_operand(out, e->u.mo.args[0], op, op, true);
  fprintf(out, " %s ", cmm_machops[op].infix);
  print_bitwise_operand(out, e->u.mo.args[1], op, follow, false);
}

/* Levels: 1 compare/shift, 7 add, 8 multiply, 9 atoms and the tight operators. */
static void print_at(FILE *out, const CmmExpr *e, int level) {
  if (e->kind == CMM_E_MACHOP) {
    const CmmMachOpInfo *mi = &cmm_machops[e->u.mo.op];
    if (mi->infix_len && e->u.mo.nargs == 2) {
      int p = mi->prec;
      if (p < level) {
        fputc('(', out);
        print_at(out, e, 1);
        fputc(')', out);
        return;
      }
      if (p == 9) {
        print_bitwise(out, e, -1);
        return;
      }
      /* left-associative (level 1 is non-associative: both sides tighter) */
      print_at(out, e->u.mo.args[0], p == 1 ? 7 : p);
      fprintf(out, " %s ", mi->infix);
      print_at(out, e->u.mo.args[1], p == 1 ? 7 : p == 7 ? 8 : 9);
      return;
    }
    if (mi->infix_len) { /* prefix - and ~ */
      const CmmExpr *x = e->u.mo.args[0];
      fputs(mi->infix, out);
      if (is_bitwise(x)) {
        fputc('(', out);
        print_at(out, x, 9);
        fputc(')', out);
      } else {
        print_at(out, x, 9);
      }
      return;
    }
    fprintf(out, "%%MO_%s_W%u", mi->name, e->u.mo.w);
    if (mi->nwidths == 2) fprintf(out, "_W%u", e->u.mo.w2);
    print_args(out, e->u.mo.args, e->u.mo.nargs);
    return;
  }
  switch (e->kind) {
  case CMM_E_INT:
  case CMM_E_FLOAT:
  case CMM_E_LABEL:
  case CMM_E_LABEL_DIFF: print_lit(out, e, true); return;
  case CMM_E_LOAD:
    fprintf(out, "%s%s[", cmm_type_name(e->type),
            e->u.load.unaligned ? "^" : e->u.load.relaxed ? "!" : "");
    cmm_print_expr(out, e->u.load.addr);
    fputc(']', out);
    return;
  case CMM_E_GLOBAL: fputs(cmm_global_regs[e->u.global.reg].name, out); return;
  case CMM_E_LOCAL: fprintf(out, "%s::%s", e->u.local.name, cmm_type_name(e->type)); return;
  case CMM_E_REGOFF:
    fputc('(', out);
    print_at(out, e->u.regoff.reg, 9);
    fprintf(out, " + %" PRId64 ")", e->u.regoff.offset);
    return;
  default: internal_error("print_at: bad expression kind %d", e->kind);
  }
}

void cmm_print_expr(FILE *out, const CmmExpr *e) {
  switch (e->kind) {
  case CMM_E_INT:
  case CMM_E_FLOAT:
  case CMM_E_LABEL:
  case CMM_E_LABEL_DIFF: print_lit(out, e, false); return;
  case CMM_E_REGOFF: /* at the top, GHC prints a register offset as a plain sum */
    print_at(out, e->u.regoff.reg, 9);
    if (e->u.regoff.offset < 0)
      fprintf(out, " - %" PRIu64, (uint64_t)0 - (uint64_t)e->u.regoff.offset);
    else
      fprintf(out, " + %" PRId64, e->u.regoff.offset);
    return;
  default: print_at(out, e, 1); return;
  }
}

void cmm_print_srcnote(FILE *out, const CmmSrcNote *n) {
  fprintf(out, "src<%s:", n->file);
  if (n->line1 == n->line2 && n->col1 == n->col2) fprintf(out, "%u:%u", n->line1, n->col1);
  else if (n->line1 == n->line2) fprintf(out, "%u:%u-%u", n->line1, n->col1, n->col2);
  else fprintf(out, "(%u,%u)-(%u,%u)", n->line1, n->col1, n->line2, n->col2);
  fputc('>', out);
}

void cmm_print_scope(FILE *out, const CmmScope *s) {
  if (s->npaths == 0) {
    fputs("global", out);
    return;
  }
  if (s->npaths > 1) fputc('(', out);
  for (uint32_t i = 0; i < s->npaths; i++) {
    if (i) fputc('+', out);
    for (uint32_t j = 0; j < s->paths[i].n; j++)
      fprintf(out, "%s%s", j ? "/" : "", s->paths[i].comps[j]);
  }
  if (s->npaths > 1) fputc(')', out);
}

/* GHC's `fsep (punctuate comma hints)`: every hint but the last takes a comma, and the
 * non-empty results are joined by spaces (NoHint prints nothing): `[PtrHint, , PtrHint]`,
 * `[PtrHint,]`. */
static void print_hints(FILE *out, const CmmHint *h, uint32_t n) {
  bool first = true;
  fputc('[', out);
  for (uint32_t i = 0; i < n; i++) {
    bool comma = i + 1 < n;
    if (!h[i].text[0] && !comma) continue;
    fprintf(out, "%s%s%s", first ? "" : " ", h[i].text, comma ? "," : "");
    first = false;
  }
  fputc(']', out);
}

static void print_results(FILE *out, CmmExpr *const *r, uint32_t n) {
  if (!n) return;
  print_args(out, r, n);
  fputs(" = ", out);
}

static void print_target(FILE *out, const CmmExpr *t) {
  if (t->kind == CMM_E_LABEL) {
    cmm_print_expr(out, t);
  } else {
    fputc('(', out);
    cmm_print_expr(out, t);
    fputc(')', out);
  }
}

static void print_stmt(FILE *out, const CmmStmt *s) {
  fputs("           ", out);
  switch (s->kind) {
  case CMM_S_TICK:
    fputs("//tick ", out);
    cmm_print_srcnote(out, &s->u.tick);
    if (s->u.tick.name) {
      fputc(' ', out);
      cmm_print_string(out, (const uint8_t *)s->u.tick.name, (uint32_t)strlen(s->u.tick.name));
    }
    break;
  case CMM_S_COMMENT: fprintf(out, "//%s", s->u.comment.text); break;
  case CMM_S_UNWIND:
    fputs("unwind ", out);
    for (uint32_t i = 0; i < s->u.unwind.n; i++) {
      const CmmUnwind *u = &s->u.unwind.regs[i];
      fprintf(out, "%s%s = ", i ? ", " : "", cmm_global_regs[u->reg].name);
      if (u->expr) {
        fputs("Just ", out);
        cmm_print_expr(out, u->expr);
      } else {
        fputs("Nothing", out);
      }
    }
    fputc(';', out);
    break;
  case CMM_S_ASSIGN:
    cmm_print_expr(out, s->u.assign.lhs);
    fputs(" = ", out);
    cmm_print_expr(out, s->u.assign.rhs);
    fputc(';', out);
    break;
  case CMM_S_STORE:
    fprintf(out, "%s%s[", cmm_type_name(s->u.store.type), s->u.store.unaligned ? "^" : "");
    cmm_print_expr(out, s->u.store.addr);
    fputs("] = ", out);
    cmm_print_expr(out, s->u.store.rhs);
    fputc(';', out);
    break;
  case CMM_S_CCALL:
    print_results(out, s->u.ccall.results, s->u.ccall.nresults);
    fprintf(out, "call \"%s\" arg hints:  ", s->u.ccall.conv);
    print_hints(out, s->u.ccall.arg_hints, s->u.ccall.narg_hints);
    fputs("  result hints:  ", out);
    print_hints(out, s->u.ccall.res_hints, s->u.ccall.nres_hints);
    fputs(s->u.ccall.never_returns ? " never returns " : " ", out);
    print_target(out, s->u.ccall.target);
    print_args(out, s->u.ccall.args, s->u.ccall.nargs);
    fputc(';', out);
    break;
  case CMM_S_PRIMCALL: {
    const CmmPrimOpInfo *pi = &cmm_primops[s->u.prim.op];
    print_results(out, s->u.prim.results, s->u.prim.nresults);
    fprintf(out, "call %s", pi->name);
    if (pi->arg == CMM_PRIMARG_WIDTH || pi->arg == CMM_PRIMARG_WIDTH_AMO ||
        pi->arg == CMM_PRIMARG_WIDTH_ORDER)
      fprintf(out, " W%u", s->u.prim.width);
    if (pi->arg == CMM_PRIMARG_WIDTH_AMO) fprintf(out, " %s", s->u.prim.amo);
    if (pi->arg == CMM_PRIMARG_WIDTH_ORDER && s->u.prim.order != CMM_ORDER_NONE)
      fprintf(out, " %s", cmm_order_names[s->u.prim.order]);
    if (pi->arg == CMM_PRIMARG_INT) fprintf(out, " %" PRId64, s->u.prim.intarg);
    print_args(out, s->u.prim.args, s->u.prim.nargs);
    fputc(';', out);
    break;
  }
  case CMM_S_GOTO: fprintf(out, "goto %s;", s->u.goto_.target.name); break;
  case CMM_S_IF:
    fputs("if (", out);
    cmm_print_expr(out, s->u.if_.cond);
    fputs(") ", out);
    if (s->u.if_.likely >= 0) fprintf(out, "(likely: %s) ", s->u.if_.likely ? "True" : "False");
    fprintf(out, "goto %s; else goto %s;", s->u.if_.then_.name, s->u.if_.else_.name);
    break;
  case CMM_S_SWITCH: {
    fputs("switch [", out);
    print_int(out, s->u.sw.lo);
    fputs(" .. ", out);
    print_int(out, s->u.sw.hi);
    fputs("] ", out);
    const CmmExpr *x = s->u.sw.scrut;
    if (x->kind == CMM_E_LOCAL || x->kind == CMM_E_GLOBAL) {
      cmm_print_expr(out, x);
    } else {
      fputc('(', out);
      cmm_print_expr(out, x);
      fputc(')', out);
    }
    fputs(" {\n", out);
    for (uint32_t i = 0; i < s->u.sw.ncases; i++) {
      const CmmSwitchCase *c = &s->u.sw.cases[i];
      fputs("               case ", out);
      for (uint32_t j = 0; j < c->nvalues; j++) {
        if (j) fputs(", ", out);
        print_int(out, c->values[j]);
      }
      fprintf(out, " : goto %s;\n", c->target.name);
    }
    if (s->u.sw.has_default)
      fprintf(out, "               default: {goto %s;}\n", s->u.sw.default_.name);
    fputs("           }", out);
    break;
  }
  case CMM_S_CALL:
    fputs("call ", out);
    print_target(out, s->u.call.target);
    fputc('(', out);
    for (uint32_t i = 0; i < s->u.call.nregs; i++)
      fprintf(out, "%s%s", i ? ", " : "", cmm_global_regs[s->u.call.regs[i]].name);
    fputs(") ", out);
    if (s->u.call.returns) fprintf(out, "returns to %s, ", s->u.call.returns_to.name);
    fprintf(out, "args: %" PRId64 ", res: %" PRId64 ", upd: %" PRId64 ";", s->u.call.args,
            s->u.call.res, s->u.call.upd);
    break;
  default: internal_error("print_stmt: bad statement kind %d", s->kind);
  }
  fputc('\n', out);
}

static void print_static(FILE *out, const CmmStatic *st, const char *indent) {
  fputs(indent, out);
  switch (st->kind) {
  case CMM_STATIC_LIT:
    fputs("const ", out);
    cmm_print_expr(out, st->lit);
    fputc(';', out);
    break;
  case CMM_STATIC_STRING:
    fputs("I8[] ", out);
    cmm_print_string(out, st->bytes, st->len);
    break;
  case CMM_STATIC_UNINIT: fprintf(out, "I8[%u]", st->len); break;
  default: internal_error("print_static: bad kind %d", st->kind);
  }
}

static void print_bits(FILE *out, const CmmRep *r) {
  fputc('[', out);
  for (uint32_t i = 0; i < r->nbits; i++)
    fprintf(out, "%s%s", i ? ", " : "", r->bits[i] ? "True" : "False");
  fputc(']', out);
}

static void print_rep(FILE *out, const CmmRep *r) {
  switch (r->kind) {
  case CMM_REP_STACK:
    fputs("StackRep ", out);
    print_bits(out, r);
    return;
  case CMM_REP_RTS:
    fprintf(out, "tag: %u ", r->rts_type);
    print_rep(out, r->inner);
    return;
  default: break;
  }
  fputs("HeapRep", out);
  if (r->is_static) fputs(" static", out);
  if (r->ptrs) fprintf(out, " %u ptrs", r->ptrs);
  if (r->nonptrs) fprintf(out, " %u nonptrs", r->nonptrs);
  fputs(" { ", out);
  switch (r->closure) {
  case CMM_CLOSURE_THUNK: fputs("Thunk", out); break;
  case CMM_CLOSURE_BLACKHOLE: fputs("BlackHole", out); break;
  case CMM_CLOSURE_INDSTATIC: fputs("IndStatic", out); break;
  case CMM_CLOSURE_THUNK_SELECTOR: fprintf(out, "ThunkSel %u", r->selector); break;
  case CMM_CLOSURE_FUN:
    fprintf(out, "Fun {arity: %u fun_type: ", r->arity);
    if (r->arg_gen) {
      fputs("ArgGen ", out);
      print_bits(out, r);
    } else {
      fprintf(out, "ArgSpec %u", r->arg_spec);
    }
    fputc('}', out);
    break;
  case CMM_CLOSURE_CON:
    fprintf(out, "Con {tag: %u descr:", r->tag);
    cmm_print_string(out, (const uint8_t *)r->descr, (uint32_t)strlen(r->descr));
    fputc('}', out);
    break;
  default: internal_error("print_rep: bad closure type %d", r->closure);
  }
  fputs(" }", out);
}

static void print_info(FILE *out, const CmmProc *p) {
  if (p->raw) {
    fputs("         { [", out);
    for (uint32_t i = 0; i < p->ntables; i++) {
      const CmmInfoTable *it = &p->tables[i];
      fprintf(out, "%s(%s,\n             %s:", i ? ",\n            " : "", it->block.name,
              it->label);
      for (uint32_t j = 0; j < it->nstatics; j++) {
        fputc('\n', out);
        print_static(out, &it->statics[j], "                 ");
      }
      fputc(')', out);
    }
    fputs("]\n         }\n", out);
    return;
  }
  fputs("         { info_tbls: [", out);
  for (uint32_t i = 0; i < p->ntables; i++) {
    const CmmInfoTable *it = &p->tables[i];
    fprintf(out, "%s(%s,\n                        label: %s\n                        rep: ",
            i ? ",\n                       " : "", it->block.name, it->label);
    print_rep(out, &it->rep);
    fprintf(out, "\n                        srt: %s%s)", it->srt ? "Just " : "Nothing",
            it->srt ? it->srt : "");
  }
  fprintf(out, "]\n           stack_info: arg_space: %" PRId64 "\n         }\n", p->arg_space);
}

static void print_proc(FILE *out, const CmmProc *p) {
  fprintf(out, "%s() { //  [", p->label);
  for (uint32_t i = 0; i < p->nlive; i++)
    fprintf(out, "%s%s", i ? ", " : "", cmm_global_regs[p->live[i]].name);
  fputs("]\n", out);
  print_info(out, p);
  fputs("     {offset\n", out);
  for (uint32_t i = 0; i < p->nblocks; i++) {
    const CmmBlock *b = &p->blocks[i];
    fprintf(out, "       %s: // ", b->label);
    cmm_print_scope(out, &b->scope);
    fputc('\n', out);
    for (uint32_t j = 0; j < b->nstmts; j++) print_stmt(out, &b->stmts[j]);
  }
  fputs("     }\n }", out);
}

static void print_data(FILE *out, const CmmData *d) {
  fprintf(out, "section \"\"%s\" . %s\" {\n     %s:\n", d->section, d->label, d->label);
  for (uint32_t i = 0; i < d->nstatics; i++) {
    print_static(out, &d->statics[i], "         ");
    fputc('\n', out);
  }
  fputs(" }", out);
}

void cmm_print_file(FILE *out, const CmmFile *f) {
  for (uint32_t g = 0; g < f->ngroups; g++) {
    const CmmGroup *gr = &f->groups[g];
    if (gr->title) fprintf(out, "\n==================== %s ====================\n", gr->title);
    if (gr->timestamp) fprintf(out, "%s\n", gr->timestamp);
    if (gr->title) fputc('\n', out);
    fputc('[', out);
    for (uint32_t i = 0; i < gr->ndecls; i++) {
      if (i) fputs(",\n ", out);
      if (gr->decls[i].kind == CMM_DECL_PROC) print_proc(out, &gr->decls[i].u.proc);
      else print_data(out, &gr->decls[i].u.data);
    }
    fputs("]\n\n", out);
  }
  if (f->nsymbols) {
    fputs("symbols {\n", out);
    for (uint32_t i = 0; i < f->nsymbols; i++)
      fprintf(out, "    %s = %s %s;\n", f->symbols[i].label, f->symbols[i].symbol,
              f->symbols[i].global ? "global" : "local");
    fputs("}\n", out);
  }
}
