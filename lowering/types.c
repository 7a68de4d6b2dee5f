/* types.c — the tables of Cmm operations, and width inference.
 *
 * GHC prints infix MachOps (`+`, `<`, `&` …) without their width, and integer literals
 * without theirs when it is the word.  Every other width is in the text: loads and
 * stores (`I32[…]`), local registers (`_s1::F64`), named MachOps (`%MO_SS_Conv_W64_W32`).
 * So the width of an infix operation is the width of its operands, which must agree
 * (shift amounts excepted); an assignment or store must move a value of its own width.
 */
#include "cmm.h"

#include <string.h>

#define I64 {CMM_BITS, 64}
#define P64 {CMM_GCPTR, 64}
#define F32 {CMM_FLOAT, 32}
#define F64 {CMM_FLOAT, 64}

const CmmGlobalRegInfo cmm_global_regs[CMM_NUM_GLOBAL_REGS] = {
#define X(id, name, type, offset) [CMM_REG_##id] = {name, sizeof name - 1, type, offset},
#include "globalregs.def"
#undef X
};

const CmmMachOpInfo cmm_machops[CMM_NUM_MACHOPS] = {
#define X(id, name, arity, nw, infix, prec, result) \
  [CMM_MO_##id] = {name, infix, arity, nw, prec, CMM_RES_##result, sizeof infix - 1},
#include "machops.def"
#undef X
};

const CmmPrimOpInfo cmm_primops[CMM_NUM_PRIMOPS] = {
#define X(id, name, arg, how, fn, nargs) [CMM_PRIM_##id] = {name, CMM_PRIMARG_##arg},
#include "primops.def"
#undef X
};

const char *const cmm_order_names[CMM_NUM_ORDERS] = {
    [CMM_ORDER_RELAXED] = "MemOrderRelaxed", [CMM_ORDER_ACQUIRE] = "MemOrderAcquire",
    [CMM_ORDER_RELEASE] = "MemOrderRelease", [CMM_ORDER_SEQCST] = "MemOrderSeqCst",
};

const char *cmm_type_name(CmmType t) {
  static const char *const names[3][7] = {
      {"I8", "I16", "I32", "I64", "I128", "I256", "I512"},
      {"P8", "P16", "P32", "P64", "P128", "P256", "P512"},
      {"F8", "F16", "F32", "F64", "F128", "F256", "F512"},
  };
  int i = 0;
  for (unsigned w = 8; w < t.width && i < 6; w *= 2) i++;
  if (t.cat > CMM_FLOAT || (8u << i) != t.width) internal_error("bad type %u/%u", t.cat, t.width);
  return names[t.cat][i];
}

typedef struct Infer {
  const CmmSource *src;
  Diag *d;
  Arena *a;
  StrMap locals; /* per proc: local register name -> first use (CmmExpr *) index */
  VEC(const CmmExpr *) uses;
  bool ok;
} Infer;

static bool fail(Infer *I, CmmLoc loc, const char *what) {
  diag_error(I->d, I->src, loc, "%s", what);
  I->ok = false;
  return false;
}

static const char *wname(Infer *I, CmmType t) { return arena_printf(I->a, "W%u", t.width); }

static bool label_is_gcptr(const char *name) {
  size_t n = strlen(name);
  return n > 8 && strcmp(name + n - 8, "_closure") == 0;
}

static bool infer(Infer *I, CmmExpr *e);

static bool address(Infer *I, const CmmExpr *addr) {
  return addr->type.cat != CMM_FLOAT || fail(I, addr->loc, "a float is not an address");
}

/* A value used where only an integer makes sense: a condition, a switch, a target. */
static bool integer(Infer *I, const CmmExpr *e, const char *what) {
  return e->type.cat != CMM_FLOAT ||
         fail(I, e->loc, arena_printf(I->a, "%s must be an integer, not %s", what, cmm_type_name(e->type)));
}

/* The F_ MachOps and the conversions from a float (FS_, FF_) take floats; the rest,
 * integers. */
static bool takes_floats(const CmmMachOpInfo *mi) { return mi->name[0] == 'F'; }

static bool infer_machop(Infer *I, CmmExpr *e) {
  const CmmMachOpInfo *mi = &cmm_machops[e->u.mo.op];
  for (unsigned i = 0; i < e->u.mo.nargs; i++)
    if (!infer(I, e->u.mo.args[i])) return false;
  CmmType x = e->u.mo.args[0]->type;
  for (unsigned i = 0; i < e->u.mo.nargs; i++) {
    const CmmExpr *a = e->u.mo.args[i];
    if ((a->type.cat == CMM_FLOAT) == takes_floats(mi)) continue;
    if (!e->u.mo.named)
      return fail(I, i ? a->loc : e->loc,
                  arena_printf(I->a, "integer operator '%s' applied to a float (%s)", mi->infix,
                               cmm_type_name(a->type)));
    return fail(I, a->loc, arena_printf(I->a, "%%MO_%s takes %s operands, not %s", mi->name,
                                        takes_floats(mi) ? "float" : "integer",
                                        cmm_type_name(a->type)));
  }
  if (!e->u.mo.named) {
    /* An infix operator: the integer MachOps, at the width of their operands. */
    e->u.mo.w = e->u.mo.w2 = x.width;
    bool shift = e->u.mo.op == CMM_MO_SHL || e->u.mo.op == CMM_MO_U_SHR;
    if (e->u.mo.nargs == 2 && !shift) {
      CmmType y = e->u.mo.args[1]->type;
      if (y.width != x.width)
        return fail(I, e->loc, arena_printf(I->a, "operands of '%s' have different widths (%s and %s)",
                                            mi->infix, wname(I, x), wname(I, y)));
    }
  } else {
    for (unsigned i = 0; i < e->u.mo.nargs; i++) {
      const CmmExpr *a = e->u.mo.args[i];
      bool shift_amount = i == 1 && (e->u.mo.op == CMM_MO_SHL || e->u.mo.op == CMM_MO_U_SHR ||
                                     e->u.mo.op == CMM_MO_S_SHR);
      if (a->type.width != e->u.mo.w && !shift_amount)
        return fail(I, a->loc,
                    mi->nwidths == 2
                        ? arena_printf(I->a, "operand of %%MO_%s_W%u_W%u is %s, not W%u", mi->name,
                                       e->u.mo.w, e->u.mo.w2, wname(I, a->type), e->u.mo.w)
                        : arena_printf(I->a, "operand of %%MO_%s_W%u is %s, not W%u", mi->name,
                                       e->u.mo.w, wname(I, a->type), e->u.mo.w));
    }
  }
  uint16_t w = e->u.mo.w, w2 = e->u.mo.w2;
  switch (mi->result) {
  case CMM_RES_OPND:
    e->type = (CmmType){(x.cat == CMM_GCPTR && (e->u.mo.op == CMM_MO_ADD || e->u.mo.op == CMM_MO_SUB))
                            ? CMM_GCPTR : CMM_BITS, w};
    break;
  case CMM_RES_BITS: e->type = (CmmType){CMM_BITS, w}; break;
  case CMM_RES_FLOAT: e->type = (CmmType){CMM_FLOAT, w}; break;
  case CMM_RES_CMP: e->type = (CmmType){CMM_BITS, CMM_WORD_WIDTH}; break;
  case CMM_RES_TO_BITS: e->type = (CmmType){CMM_BITS, w2}; break;
  case CMM_RES_TO_FLOAT: e->type = (CmmType){CMM_FLOAT, w2}; break;
  default: internal_error("bad MachOp result kind");
  }
  return true;
}

static bool infer(Infer *I, CmmExpr *e) {
  switch (e->kind) {
  case CMM_E_INT:
  case CMM_E_FLOAT:
  case CMM_E_GLOBAL: return true; /* typed by the parser */
  case CMM_E_LABEL:
    e->type = (CmmType){e->u.label.kind == CMM_LABEL_FOREIGN && label_is_gcptr(e->u.label.name)
                            ? CMM_GCPTR : CMM_BITS, CMM_WORD_WIDTH};
    return true;
  case CMM_E_LABEL_DIFF: e->type = (CmmType){CMM_BITS, CMM_WORD_WIDTH}; return true;
  case CMM_E_LOAD: return infer(I, e->u.load.addr) && address(I, e->u.load.addr);
  case CMM_E_LOCAL: {
    uint32_t first;
    if (strmap_put(&I->locals, I->a, e->u.local.name, I->uses.n, &first)) {
      vec_push(I->a, &I->uses, e);
    } else {
      strmap_put(&I->locals, I->a, e->u.local.name, first, NULL); /* keep the first use */
      const CmmExpr *f = I->uses.v[first];
      if (f->type.cat != e->type.cat || f->type.width != e->type.width) {
        fail(I, e->loc, arena_printf(I->a, "local register '%s' is %s here but %s before",
                                     e->u.local.name, cmm_type_name(e->type),
                                     cmm_type_name(f->type)));
        diag_note(I->d, I->src, f->loc, "'%s' first used as %s here", e->u.local.name,
                  cmm_type_name(f->type));
        return false;
      }
    }
    return true;
  }
  case CMM_E_REGOFF:
    if (!infer(I, e->u.regoff.reg)) return false;
    e->type = e->u.regoff.reg->type;
    if (e->type.cat == CMM_FLOAT)
      return fail(I, e->loc, arena_printf(I->a, "integer operator '+' applied to a float (%s)",
                                          cmm_type_name(e->type)));
    return true;
  case CMM_E_MACHOP: return infer_machop(I, e);
  default: internal_error("infer: bad expression kind %d", e->kind);
  }
}

/* An assignment or store moves a value of its own width, and a float only into a float. */
static bool same_width(Infer *I, CmmType dst, const CmmExpr *rhs, const char *what) {
  if ((dst.cat == CMM_FLOAT) != (rhs->type.cat == CMM_FLOAT))
    return fail(I, rhs->loc, arena_printf(I->a, "%s of type %s gets a value of type %s", what,
                                          cmm_type_name(dst), cmm_type_name(rhs->type)));
  if (dst.width == rhs->type.width) return true;
  return fail(I, rhs->loc, arena_printf(I->a, "%s of %s gets a %s value", what, wname(I, dst),
                                        wname(I, rhs->type)));
}

/* Prim calls: the MO_F64_ and MO_F32_ ones compute on floats of their width; the rest on
 * integers, except that MO_UF_Conv gives a float. */
static void check_prim(Infer *I, const CmmStmt *s) {
  int op = s->u.prim.op;
  bool f = op >= CMM_PRIM_F64_PWR && op <= CMM_PRIM_F32_SQRT;
  CmmType want = {CMM_FLOAT, op >= CMM_PRIM_F32_PWR ? 32 : 64};
  const char *name = cmm_primops[op].name;
  for (uint32_t i = 0; i < s->u.prim.nargs && I->ok; i++) {
    const CmmExpr *a = s->u.prim.args[i];
    if (f ? a->type.cat != CMM_FLOAT || a->type.width != want.width : a->type.cat == CMM_FLOAT)
      fail(I, a->loc, arena_printf(I->a, "%s takes %s arguments, not %s", name,
                                   f ? cmm_type_name(want) : "integer", cmm_type_name(a->type)));
  }
  bool float_result = f || op == CMM_PRIM_UF_CONV;
  for (uint32_t i = 0; i < s->u.prim.nresults && I->ok; i++) {
    const CmmExpr *r = s->u.prim.results[i];
    if ((r->type.cat == CMM_FLOAT) != float_result || (f && r->type.width != want.width))
      fail(I, r->loc, arena_printf(I->a, "%s gives %s results, not %s", name,
                                   f ? cmm_type_name(want) : float_result ? "float" : "integer",
                                   cmm_type_name(r->type)));
  }
}

static void infer_all(Infer *I, CmmExpr **v, uint32_t n) {
  for (uint32_t i = 0; i < n && I->ok; i++) infer(I, v[i]);
}

static void infer_stmt(Infer *I, CmmStmt *s) {
  switch (s->kind) {
  case CMM_S_UNWIND:
    for (uint32_t i = 0; i < s->u.unwind.n && I->ok; i++)
      if (s->u.unwind.regs[i].expr) infer(I, s->u.unwind.regs[i].expr);
    break;
  case CMM_S_ASSIGN:
    if (infer(I, s->u.assign.lhs) && infer(I, s->u.assign.rhs))
      same_width(I, s->u.assign.lhs->type, s->u.assign.rhs, "a register");
    break;
  case CMM_S_STORE:
    if (infer(I, s->u.store.addr) && address(I, s->u.store.addr) && infer(I, s->u.store.rhs))
      same_width(I, s->u.store.type, s->u.store.rhs, "a store");
    break;
  case CMM_S_CCALL:
    infer_all(I, s->u.ccall.results, s->u.ccall.nresults);
    infer_all(I, s->u.ccall.args, s->u.ccall.nargs);
    if (I->ok && infer(I, s->u.ccall.target)) integer(I, s->u.ccall.target, "a call target");
    break;
  case CMM_S_PRIMCALL:
    infer_all(I, s->u.prim.results, s->u.prim.nresults);
    infer_all(I, s->u.prim.args, s->u.prim.nargs);
    if (I->ok) check_prim(I, s);
    break;
  case CMM_S_IF:
    if (infer(I, s->u.if_.cond)) integer(I, s->u.if_.cond, "a condition");
    break;
  case CMM_S_SWITCH:
    if (infer(I, s->u.sw.scrut)) integer(I, s->u.sw.scrut, "a switch scrutinee");
    break;
  case CMM_S_CALL:
    if (infer(I, s->u.call.target)) integer(I, s->u.call.target, "a call target");
    break;
  default: break;
  }
}

bool cmm_infer_types(CmmFile *f, Diag *d) {
  Infer I = {.src = f->src, .d = d, .a = f->arena, .ok = true};
  for (uint32_t g = 0; g < f->ngroups && I.ok; g++)
    for (uint32_t i = 0; i < f->groups[g].ndecls && I.ok; i++) {
      CmmDecl *decl = &f->groups[g].decls[i];
      if (decl->kind == CMM_DECL_DATA) {
        for (uint32_t j = 0; j < decl->u.data.nstatics && I.ok; j++)
          if (decl->u.data.statics[j].lit) infer(&I, decl->u.data.statics[j].lit);
        continue;
      }
      CmmProc *p = &decl->u.proc;
      strmap_init(&I.locals, I.a, 64);
      I.uses.n = 0;
      for (uint32_t t = 0; t < p->ntables; t++)
        for (uint32_t j = 0; j < p->tables[t].nstatics && I.ok; j++)
          infer(&I, p->tables[t].statics[j].lit);
      for (uint32_t b = 0; b < p->nblocks && I.ok; b++)
        for (uint32_t j = 0; j < p->blocks[b].nstmts && I.ok; j++)
          infer_stmt(&I, &p->blocks[b].stmts[j]);
    }
  return I.ok;
}

bool cmm_infer_expr(const CmmSource *src, CmmExpr *e, Diag *d) {
  Arena *a = arena_new();
  Infer I = {.src = src, .d = d, .a = a, .ok = true};
  strmap_init(&I.locals, a, 16);
  infer(&I, e);
  arena_free(a);
  return I.ok;
}
