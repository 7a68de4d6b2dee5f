/* lower.c — Cmm procedures and data to LLVM IR (DESIGN.md §6).
 *
 * The model, GHC's own LLVM backend's with two differences (proc-point splitting of
 * native-code dumps, and musttail):
 *
 *  - Every proc point becomes one LLVM function with the ghccc convention: the entry
 *    block of a proc, every block with an info table, every `returns to` target and
 *    every block whose label is used as a value.  A function holds the blocks reachable
 *    from its proc point without passing another one (a block reachable from two is
 *    copied into both); a `goto` to another proc point becomes a jump to its function.
 *    After stack layout only global registers are live across a proc point, which is why
 *    this split is sound.
 *  - Every function has one type (Note [One function type]); the pinned registers
 *    travel as its arguments, the others live in the register table at BaseReg.
 *    Inside a function each pinned register and each local register is an alloca;
 *    mem2reg turns them into SSA values from -O1 on.
 *  - A jump or call is `musttail call ghccc` then `ret void`; the return address a
 *    call pushed is just a word on the Cmm stack.
 *  - An info table becomes its function's prefix data, so the table sits right before
 *    the code (tables next to code); data sections become globals.
 *  - Labels become symbols in symbols.c.  A label this module does not define is an
 *    `external global i8` (as GHC declares them): code, data and C functions alike are
 *    just addresses here, and calls go through them.
 *
 * Note [One function type]: musttail requires the caller's and callee's prototypes to
 * match, so every ghccc function is
 *     void (ptr Base, ptr Sp, ptr Hp, i64 R1 … i64 R6, i64 SpLim, double XMM1 … XMM6)
 * Registers not live into a callee are passed as undef.  F<n> and D<n> share XMM<n>, as
 * on GHC's x86-64: a float travels in the low 32 bits of the double.
 */
#include "lower.h"

#include <setjmp.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>

#include "debuginfo.h"
#include "infotable.h"
#include "scopes.h"
#include "strobe/dynstack.h"

/* The pseudo-intrinsics (intrinsics/intrinsics.def), and the tick descriptor whose
 * layout the runtime defines (StrobeTickDesc): six 32-bit words, then four pointers. */
enum {
#define STROBE_INTRINSIC(id, name, rts, nargs, a1, a2) LW_##id,
#include "intrinsics.def"
#undef STROBE_INTRINSIC
  LW_NINTRINSICS
};
static const struct { const char *name; unsigned nargs; bool desc; } intrinsics[] = {
#define STROBE_INTRINSIC(id, name, rts, nargs, a1, a2) {name, nargs, STROBE_IS_DESC_##a1},
#define STROBE_IS_DESC_DESC true
#define STROBE_IS_DESC_SP false
#include "intrinsics.def"
#undef STROBE_INTRINSIC
};
_Static_assert(offsetof(StrobeTickDesc, function) == 24 && offsetof(StrobeTickDesc, file) == 32 &&
                   offsetof(StrobeTickDesc, code) == 40 && offsetof(StrobeTickDesc, parent) == 48 &&
                   sizeof(StrobeTickDesc) == 56,
               "the lowering emits StrobeTickDesc as { i32 x 6, ptr, ptr, ptr, ptr }");
enum { DESC_FIELDS = 10, DESC_FLAGS = 5, DESC_PARENT = 9 };

/* A tick descriptor of the module; its initializer is set at the end (lw_finish), when
 * every descriptor is known and its parent can be found. */
typedef struct Desc Desc;
struct Desc {
  LLVMValueRef g;
  LLVMValueRef fields[DESC_FIELDS];
  LLVMValueRef function, file; /* the string constants, one per text */
  uint32_t line1, col1, line2, col2;
  Desc *parent; /* set by set_parents */
};

enum { NPARAMS = 16, P_BASE = 0, P_SP, P_HP, P_R1, P_SPLIM = P_R1 + 6, P_XMM1 };
static const char *const param_names[NPARAMS] = {"Base", "Sp", "Hp", "R1", "R2", "R3", "R4", "R5",
                                                 "R6", "SpLim", "XMM1", "XMM2", "XMM3", "XMM4",
                                                 "XMM5", "XMM6"};

struct Lowering {
  LLVMContextRef ctx;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMBuilderRef alloca_at; /* each function's, before its entry block's branch */
  const LowerOptions *o;
  Diag *d;
  Arena *a;             /* lives as long as the Lowering */
  DebugInfo *dw;
  LLVMTypeRef i1, i8, i32, i64, f32, f64, ptr, void_t, fn_type;
  bool failed;
  /* per file */
  const CmmFile *f;
  const char *module;   /* the Haskell module, for names of module-internal code */
  const char *main_file;
  jmp_buf fail;
  StrMap defs;          /* label -> index into def */
  VEC(LLVMValueRef) def;
  LLVMValueRef entry_fn; /* --entry's function, once a file defines it */
  StrMap symbols;        /* every symbol defined so far, over all files */
  LwInfoCtx info;        /* info-table layout context for the file */
  LLVMValueRef intrinsic[LW_NINTRINSICS]; /* declared on first use */
  LLVMTypeRef desc_type;
  StrMap strings;        /* a private string constant per distinct text */
  StrMap descs;          /* a descriptor per (function, note) */
  VEC(Desc) desc;
  VEC(LLVMValueRef) string;
};

static _Noreturn void fail_at(Lowering *L, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static _Noreturn void fail_at(Lowering *L, CmmLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(L->d, L->f->src, loc, fmt, ap);
  va_end(ap);
  longjmp(L->fail, 1);
}

/* ---- symbols -------------------------------------------------------------------- */

/* The address of a label: this file's definition, or an external declaration. */
static LLVMValueRef label_ref(Lowering *L, const char *label) {
  uint32_t i;
  if (strmap_get(&L->defs, label, &i)) return L->def.v[i];
  LwSymbol s;
  const char *why;
  if (!lw_resolve(L->o->symbols, L->a, label, &s, &why)) fail_at(L, lw_label_loc(L->f->src, label), "%s", why);
  const char *sym = s.symbol;
  LLVMValueRef g = LLVMGetNamedGlobal(L->m, sym);
  if (!g) g = LLVMGetNamedFunction(L->m, sym);
  if (!g) {
    g = LLVMAddGlobal(L->m, L->i8, sym);
    LLVMSetLinkage(g, LLVMExternalLinkage);
  }
  return g;
}

/* What GHC makes visible to other modules (symbols.c): module-qualified labels
 * (`Main.main_info`, `:Main.main_info`) except a constructor worker's (`Main.Cell_info`). */
static LLVMLinkage linkage_of(const LwSymbol *s) {
  return s->global ? LLVMExternalLinkage : LLVMInternalLinkage;
}

/* From now on, label_ref(label) in this file is v. */
static LLVMValueRef define(Lowering *L, const char *label, LLVMValueRef v) {
  strmap_put(&L->defs, L->a, label, L->def.n, NULL);
  vec_push(L->a, &L->def, v);
  return v;
}

/* ---- types and constants ---------------------------------------------------------- */

static LLVMTypeRef type_of(Lowering *L, CmmType t) {
  if (t.cat == CMM_FLOAT) return t.width == 32 ? L->f32 : L->f64;
  return LLVMIntTypeInContext(L->ctx, t.width);
}

static LLVMValueRef word(Lowering *L, int64_t v) { return LLVMConstInt(L->i64, (uint64_t)v, 1); }

/* A literal of a static or an expression as a constant of its printed width. */
static LLVMValueRef const_int(Lowering *L, const CmmExpr *e) {
  uint64_t v = e->u.i.neg ? 0 - e->u.i.mag : e->u.i.mag;
  return LLVMConstInt(type_of(L, e->type), v, 0);
}

static LLVMValueRef label_word(Lowering *L, const char *label, int64_t offset) {
  LLVMValueRef p = LLVMConstPtrToInt(label_ref(L, label), L->i64);
  return offset ? LLVMConstAdd(p, word(L, offset)) : p;
}

/* A literal as a constant.  A label difference has the width of its type: 64 bits, or
 * 32 for the SRT slot of an info table (infotable.c gives it, as GHC does). */
static LLVMValueRef static_lit(Lowering *L, const CmmExpr *e) {
  switch (e->kind) {
  case CMM_E_INT: return const_int(L, e);
  case CMM_E_FLOAT: return LLVMConstReal(type_of(L, e->type), e->u.f.value);
  case CMM_E_LABEL: return label_word(L, e->u.label.name, e->u.label.offset);
  case CMM_E_LABEL_DIFF: {
    LLVMValueRef v = LLVMConstSub(label_word(L, e->u.label.name, e->u.label.offset),
                                  label_word(L, e->u.label.name2, 0));
    unsigned w = e->type.width ? e->type.width : 64;
    return w == 64 ? v : LLVMConstTrunc(v, LLVMIntTypeInContext(L->ctx, w));
  }
  default: fail_at(L, e->loc, "expected a literal");
  }
}

/* Statics as a packed struct: one field per static. */
static LLVMValueRef statics_const(Lowering *L, const CmmStatic *st, uint32_t n) {
  LLVMValueRef *fields = arena_alloc(L->a, (n ? n : 1) * sizeof *fields);
  for (uint32_t i = 0; i < n; i++) {
    switch (st[i].kind) {
    case CMM_STATIC_LIT: fields[i] = static_lit(L, st[i].lit); break;
    case CMM_STATIC_STRING: /* with the NUL the dump leaves out */
      fields[i] = LLVMConstStringInContext2(L->ctx, (const char *)st[i].bytes, st[i].len, 0);
      break;
    case CMM_STATIC_UNINIT:
      fields[i] = LLVMConstNull(LLVMArrayType2(L->i8, st[i].len));
      break;
    default: internal_error("bad static kind %d", st[i].kind);
    }
  }
  return LLVMConstStructInContext(L->ctx, fields, n, /*packed=*/1);
}

/* The LLVM type of one static, as statics_const builds it. */
static LLVMTypeRef static_type(Lowering *L, const CmmStatic *st) {
  switch (st->kind) {
  case CMM_STATIC_LIT:
    if (st->lit->kind == CMM_E_LABEL) return L->i64;
    return type_of(L, st->lit->type);
  case CMM_STATIC_STRING: return LLVMArrayType2(L->i8, st->len + 1);
  default: return LLVMArrayType2(L->i8, st->len);
  }
}

static LLVMTypeRef statics_type(Lowering *L, const CmmStatic *st, uint32_t n) {
  LLVMTypeRef *fields = arena_alloc(L->a, (n ? n : 1) * sizeof *fields);
  for (uint32_t i = 0; i < n; i++) fields[i] = static_type(L, &st[i]);
  return LLVMStructTypeInContext(L->ctx, fields, n, 1);
}

/* Gives v the symbol of label, taking the place of any declaration of it made so far
 * (another input file may have used the label before this one defines it). */
static void name_definition(Lowering *L, CmmLoc loc, const char *label, LLVMValueRef v) {
  LwSymbol s;
  const char *why;
  if (!lw_resolve(L->o->symbols, L->a, label, &s, &why)) fail_at(L, loc, "%s", why);
  const char *sym = s.symbol;
  /* A definition has no body yet while its file is declared, so "defined" is kept here,
   * not asked of LLVM. */
  if (!strmap_put(&L->symbols, L->a, sym, 0, NULL))
    fail_at(L, loc, "'%s' is defined twice (symbol '%s')", label, sym);
  LLVMValueRef old = LLVMGetNamedGlobal(L->m, sym);
  if (!old) old = LLVMGetNamedFunction(L->m, sym);
  if (old) { /* an external declaration made by an earlier use */
    LLVMReplaceAllUsesWith(old, v);
    if (LLVMIsAFunction(old)) LLVMDeleteFunction(old);
    else LLVMDeleteGlobal(old);
  }
  LLVMSetValueName2(v, sym, strlen(sym));
  LLVMSetLinkage(v, linkage_of(&s));
}

/* ---- proc points ---------------------------------------------------------------- */

typedef void (*ExprFn)(const CmmExpr *e, void *ctx);

static void walk_expr(const CmmExpr *e, ExprFn fn, void *ctx) {
  fn(e, ctx);
  switch (e->kind) {
  case CMM_E_LOAD: walk_expr(e->u.load.addr, fn, ctx); break;
  case CMM_E_REGOFF: walk_expr(e->u.regoff.reg, fn, ctx); break;
  case CMM_E_MACHOP:
    for (unsigned i = 0; i < e->u.mo.nargs; i++) walk_expr(e->u.mo.args[i], fn, ctx);
    break;
  default: break;
  }
}

static void walk_exprs(CmmExpr *const *v, uint32_t n, ExprFn fn, void *ctx) {
  for (uint32_t i = 0; i < n; i++) walk_expr(v[i], fn, ctx);
}

/* Every expression of a statement, in no particular order. */
static void walk_stmt(const CmmStmt *s, ExprFn fn, void *ctx) {
  switch (s->kind) {
  case CMM_S_UNWIND:
    for (uint32_t i = 0; i < s->u.unwind.n; i++)
      if (s->u.unwind.regs[i].expr) walk_expr(s->u.unwind.regs[i].expr, fn, ctx);
    break;
  case CMM_S_ASSIGN: walk_expr(s->u.assign.lhs, fn, ctx); walk_expr(s->u.assign.rhs, fn, ctx); break;
  case CMM_S_STORE: walk_expr(s->u.store.addr, fn, ctx); walk_expr(s->u.store.rhs, fn, ctx); break;
  case CMM_S_CCALL:
    walk_exprs(s->u.ccall.results, s->u.ccall.nresults, fn, ctx);
    walk_exprs(s->u.ccall.args, s->u.ccall.nargs, fn, ctx);
    walk_expr(s->u.ccall.target, fn, ctx);
    break;
  case CMM_S_PRIMCALL:
    walk_exprs(s->u.prim.results, s->u.prim.nresults, fn, ctx);
    walk_exprs(s->u.prim.args, s->u.prim.nargs, fn, ctx);
    break;
  case CMM_S_IF: walk_expr(s->u.if_.cond, fn, ctx); break;
  case CMM_S_SWITCH: walk_expr(s->u.sw.scrut, fn, ctx); break;
  case CMM_S_CALL: walk_expr(s->u.call.target, fn, ctx); break;
  default: break;
  }
}

static void mark_block_label(const CmmExpr *e, void *ctx) {
  if (e->kind == CMM_E_LABEL && e->u.label.kind == CMM_LABEL_BLOCK)
    ((bool *)ctx)[e->u.label.block] = true;
}

/* The proc points of a proc: its entry, blocks with an info table, `returns to`
 * targets and blocks whose label is a value. */
static bool *proc_points(Lowering *L, const CmmProc *p) {
  bool *pp = arena_alloc(L->a, p->nblocks * sizeof *pp);
  pp[0] = true;
  for (uint32_t i = 0; i < p->ntables; i++) pp[p->tables[i].block.index] = true;
  for (uint32_t b = 0; b < p->nblocks; b++)
    for (uint32_t j = 0; j < p->blocks[b].nstmts; j++) {
      const CmmStmt *s = &p->blocks[b].stmts[j];
      if (s->kind == CMM_S_CALL && s->u.call.returns) pp[s->u.call.returns_to.index] = true;
      walk_stmt(s, mark_block_label, pp);
    }
  return pp;
}

static const CmmInfoTable *table_of(const CmmProc *p, uint32_t block) {
  for (uint32_t i = 0; i < p->ntables; i++)
    if (p->tables[i].block.index == block) return &p->tables[i];
  return NULL;
}

/* Per proc: its proc points and the LLVM function of each. */
typedef struct ProcInfo {
  bool *pp;
  LLVMValueRef *fn;      /* per block: its function if it is a proc point */
  const char *name;      /* the Haskell name of the proc */
  const char *function;  /* the Haskell function its code belongs to, for tick
                            descriptors: a thunk's or continuation's is its binding's */
  bool continuation;     /* GHC's -fllvm split continuation (`_c1JV`) */
} ProcInfo;

/* ---- one LLVM function ---------------------------------------------------------- */

typedef struct Fn {
  Lowering *L;
  const CmmProc *proc;
  const ProcInfo *pi;
  uint32_t pp;                /* the proc point it starts at */
  LLVMValueRef fn;
  LLVMBuilderRef alloca_at;  /* in the entry block, before its branch */
  LLVMValueRef slot[NPARAMS]; /* an alloca per pinned register */
  StrMap locals;              /* local register -> index into local */
  VEC(LLVMValueRef) local;
  LLVMBasicBlockRef *bb;      /* per block: its basic block here, or NULL */
  LLVMBasicBlockRef *jump;    /* per proc point: a block that jumps to its function */
  /* debug info */
  const ScopeTree *tree;
  uint32_t decl;
  DwFunction dwf;
  LLVMMetadataRef scope;
} Fn;

/* The argument slot of a pinned register, or -1 if it lives in the register table. */
static int pinned_slot(int reg) {
  switch (reg) {
  case CMM_REG_BASEREG: return P_BASE; /* a safe foreign call may move it (resumeThread) */
  case CMM_REG_SP: return P_SP;
  case CMM_REG_HP: return P_HP;
  case CMM_REG_SPLIM: return P_SPLIM;
  case CMM_REG_R1: case CMM_REG_R2: case CMM_REG_R3:
  case CMM_REG_R4: case CMM_REG_R5: case CMM_REG_R6: return P_R1 + (reg - CMM_REG_R1);
  case CMM_REG_F1: case CMM_REG_F2: case CMM_REG_F3:
  case CMM_REG_F4: case CMM_REG_F5: case CMM_REG_F6: return P_XMM1 + (reg - CMM_REG_F1);
  case CMM_REG_D1: case CMM_REG_D2: case CMM_REG_D3:
  case CMM_REG_D4: case CMM_REG_D5: case CMM_REG_D6: return P_XMM1 + (reg - CMM_REG_D1);
  default: return -1;
  }
}

static LLVMTypeRef param_type(Lowering *L, int slot) {
  return slot <= P_HP ? L->ptr : slot < P_XMM1 ? L->i64 : L->f64;
}

static LLVMValueRef base(Fn *F) { return LLVMBuildLoad2(F->L->b, F->L->ptr, F->slot[P_BASE], "Base"); }

/* The address of a register's slot in the register table. */
static LLVMValueRef table_addr(Fn *F, int reg, CmmLoc loc) {
  int32_t off = cmm_global_regs[reg].offset;
  if (off == -1)
    fail_at(F->L, loc, "register %s has no place in the register table", cmm_global_regs[reg].name);
  LLVMValueRef idx = LLVMConstInt(F->L->i64, (uint64_t)(int64_t)off, 1);
  return LLVMBuildGEP2(F->L->b, F->L->i8, base(F), &idx, 1, "");
}

/* F<n> is the low 32 bits of XMM<n> (Note [One function type]). */
static LLVMValueRef float_from_xmm(Lowering *L, LLVMValueRef d) {
  LLVMValueRef bits = LLVMBuildTrunc(L->b, LLVMBuildBitCast(L->b, d, L->i64, ""), L->i32, "");
  return LLVMBuildBitCast(L->b, bits, L->f32, "");
}

static LLVMValueRef xmm_from_float(Lowering *L, LLVMValueRef f) {
  LLVMValueRef bits = LLVMBuildZExt(L->b, LLVMBuildBitCast(L->b, f, L->i32, ""), L->i64, "");
  return LLVMBuildBitCast(L->b, bits, L->f64, "");
}

static bool is_float_reg(int reg) { return reg >= CMM_REG_F1 && reg <= CMM_REG_F6; }

static LLVMValueRef read_global(Fn *F, int reg, CmmLoc loc) {
  Lowering *L = F->L;
  LLVMTypeRef t = type_of(L, cmm_global_regs[reg].type);
  int slot = pinned_slot(reg);
  if (slot < 0) return LLVMBuildLoad2(L->b, t, table_addr(F, reg, loc), "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, param_type(L, slot), F->slot[slot], "");
  if (slot <= P_HP) return LLVMBuildPtrToInt(L->b, v, L->i64, "");
  if (is_float_reg(reg)) return float_from_xmm(L, v);
  return v;
}

static void write_global(Fn *F, int reg, LLVMValueRef v, CmmLoc loc) {
  Lowering *L = F->L;
  int slot = pinned_slot(reg);
  if (slot < 0) {
    LLVMBuildStore(L->b, v, table_addr(F, reg, loc));
    return;
  }
  if (slot <= P_HP) v = LLVMBuildIntToPtr(L->b, v, L->ptr, "");
  else if (is_float_reg(reg)) v = xmm_from_float(L, v);
  LLVMBuildStore(L->b, v, F->slot[slot]);
}

static LLVMValueRef local_slot(Fn *F, const CmmExpr *e) {
  uint32_t i;
  if (strmap_get(&F->locals, e->u.local.name, &i)) return F->local.v[i];
  LLVMValueRef a = LLVMBuildAlloca(F->alloca_at, type_of(F->L, e->type), e->u.local.name);
  strmap_put(&F->locals, F->L->a, e->u.local.name, F->local.n, NULL);
  vec_push(F->L->a, &F->local, a);
  return a;
}

/* ---- expressions ---------------------------------------------------------------- */

static LLVMValueRef expr(Fn *F, const CmmExpr *e);

static LLVMValueRef address(Fn *F, const CmmExpr *e) {
  return LLVMBuildIntToPtr(F->L->b, expr(F, e), F->L->ptr, "");
}

/* An integer operand at width w (shift amounts may be wider or narrower). */
static LLVMValueRef int_at(Fn *F, LLVMValueRef v, unsigned w) {
  unsigned have = LLVMGetIntTypeWidth(LLVMTypeOf(v));
  LLVMTypeRef t = LLVMIntTypeInContext(F->L->ctx, w);
  return have == w ? v : have > w ? LLVMBuildTrunc(F->L->b, v, t, "") : LLVMBuildZExt(F->L->b, v, t, "");
}

static LLVMValueRef flag(Fn *F, LLVMValueRef i1) { /* a comparison is a word */
  return LLVMBuildZExt(F->L->b, i1, F->L->i64, "");
}

static LLVMValueRef intrinsic(Lowering *L, const char *name, LLVMTypeRef *over, size_t nover,
                              LLVMValueRef *args, unsigned nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) internal_error("no LLVM intrinsic %s", name);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->m, id, over, nover);
  LLVMTypeRef ft = LLVMIntrinsicGetType(L->ctx, id, over, nover);
  return LLVMBuildCall2(L->b, ft, fn, args, nargs, "");
}

static LLVMValueRef machop(Fn *F, const CmmExpr *e) {
  Lowering *L = F->L;
  LLVMBuilderRef b = L->b;
  LLVMValueRef x = expr(F, e->u.mo.args[0]);
  LLVMValueRef y = e->u.mo.nargs > 1 ? expr(F, e->u.mo.args[1]) : NULL;
  unsigned w = e->u.mo.w, w2 = e->u.mo.w2;
  LLVMTypeRef to_int = LLVMIntTypeInContext(L->ctx, w2);
  LLVMTypeRef to_float = w2 == 32 ? L->f32 : L->f64;
  switch (e->u.mo.op) {
  case CMM_MO_ADD: return LLVMBuildAdd(b, x, y, "");
  case CMM_MO_SUB: return LLVMBuildSub(b, x, y, "");
  case CMM_MO_MUL: return LLVMBuildMul(b, x, y, "");
  case CMM_MO_EQ: return flag(F, LLVMBuildICmp(b, LLVMIntEQ, x, y, ""));
  case CMM_MO_NE: return flag(F, LLVMBuildICmp(b, LLVMIntNE, x, y, ""));
  case CMM_MO_S_QUOT: return LLVMBuildSDiv(b, x, y, "");
  case CMM_MO_S_REM: return LLVMBuildSRem(b, x, y, "");
  case CMM_MO_U_QUOT: return LLVMBuildUDiv(b, x, y, "");
  case CMM_MO_U_REM: return LLVMBuildURem(b, x, y, "");
  case CMM_MO_S_NEG: return LLVMBuildNeg(b, x, "");
  case CMM_MO_S_MULMAYOFLO:
  case CMM_MO_U_MULMAYOFLO: {
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef args[] = {x, y};
    LLVMValueRef r = intrinsic(L, e->u.mo.op == CMM_MO_S_MULMAYOFLO ? "llvm.smul.with.overflow"
                                                                     : "llvm.umul.with.overflow",
                               &t, 1, args, 2);
    return LLVMBuildZExt(b, LLVMBuildExtractValue(b, r, 1, ""), t, "");
  }
  case CMM_MO_S_GE: return flag(F, LLVMBuildICmp(b, LLVMIntSGE, x, y, ""));
  case CMM_MO_S_LE: return flag(F, LLVMBuildICmp(b, LLVMIntSLE, x, y, ""));
  case CMM_MO_S_GT: return flag(F, LLVMBuildICmp(b, LLVMIntSGT, x, y, ""));
  case CMM_MO_S_LT: return flag(F, LLVMBuildICmp(b, LLVMIntSLT, x, y, ""));
  case CMM_MO_U_GE: return flag(F, LLVMBuildICmp(b, LLVMIntUGE, x, y, ""));
  case CMM_MO_U_LE: return flag(F, LLVMBuildICmp(b, LLVMIntULE, x, y, ""));
  case CMM_MO_U_GT: return flag(F, LLVMBuildICmp(b, LLVMIntUGT, x, y, ""));
  case CMM_MO_U_LT: return flag(F, LLVMBuildICmp(b, LLVMIntULT, x, y, ""));
  case CMM_MO_F_ADD: return LLVMBuildFAdd(b, x, y, "");
  case CMM_MO_F_SUB: return LLVMBuildFSub(b, x, y, "");
  case CMM_MO_F_NEG: return LLVMBuildFNeg(b, x, "");
  case CMM_MO_F_MUL: return LLVMBuildFMul(b, x, y, "");
  case CMM_MO_F_QUOT: return LLVMBuildFDiv(b, x, y, "");
  case CMM_MO_F_EQ: return flag(F, LLVMBuildFCmp(b, LLVMRealOEQ, x, y, ""));
  case CMM_MO_F_NE: return flag(F, LLVMBuildFCmp(b, LLVMRealUNE, x, y, ""));
  case CMM_MO_F_GE: return flag(F, LLVMBuildFCmp(b, LLVMRealOGE, x, y, ""));
  case CMM_MO_F_LE: return flag(F, LLVMBuildFCmp(b, LLVMRealOLE, x, y, ""));
  case CMM_MO_F_GT: return flag(F, LLVMBuildFCmp(b, LLVMRealOGT, x, y, ""));
  case CMM_MO_F_LT: return flag(F, LLVMBuildFCmp(b, LLVMRealOLT, x, y, ""));
  case CMM_MO_AND: return LLVMBuildAnd(b, x, y, "");
  case CMM_MO_OR: return LLVMBuildOr(b, x, y, "");
  case CMM_MO_XOR: return LLVMBuildXor(b, x, y, "");
  case CMM_MO_NOT: return LLVMBuildNot(b, x, "");
  case CMM_MO_SHL: return LLVMBuildShl(b, x, int_at(F, y, w), "");
  case CMM_MO_U_SHR: return LLVMBuildLShr(b, x, int_at(F, y, w), "");
  case CMM_MO_S_SHR: return LLVMBuildAShr(b, x, int_at(F, y, w), "");
  case CMM_MO_SF_CONV: return LLVMBuildSIToFP(b, x, to_float, "");
  case CMM_MO_FS_CONV: return LLVMBuildFPToSI(b, x, to_int, "");
  case CMM_MO_SS_CONV: return w2 > w ? LLVMBuildSExt(b, x, to_int, "") : int_at(F, x, w2);
  case CMM_MO_UU_CONV:
  case CMM_MO_XX_CONV: return int_at(F, x, w2);
  case CMM_MO_FF_CONV:
    return w2 > w ? LLVMBuildFPExt(b, x, to_float, "") : w2 < w ? LLVMBuildFPTrunc(b, x, to_float, "") : x;
  default: internal_error("machop %d", e->u.mo.op);
  }
}

static LLVMValueRef expr(Fn *F, const CmmExpr *e) {
  Lowering *L = F->L;
  switch (e->kind) {
  case CMM_E_INT: return const_int(L, e);
  case CMM_E_FLOAT: return LLVMConstReal(type_of(L, e->type), e->u.f.value);
  case CMM_E_LABEL: {
    if (e->u.label.kind == CMM_LABEL_BLOCK) {
      LLVMValueRef fn = F->pi->fn[e->u.label.block];
      cmm_assert(fn);
      return LLVMConstPtrToInt(fn, L->i64);
    }
    return label_word(L, e->u.label.name, e->u.label.offset);
  }
  case CMM_E_LABEL_DIFF: return static_lit(L, e);
  case CMM_E_LOAD: return LLVMBuildLoad2(L->b, type_of(L, e->type), address(F, e->u.load.addr), "");
  case CMM_E_GLOBAL: return read_global(F, e->u.global.reg, e->loc);
  case CMM_E_LOCAL: return LLVMBuildLoad2(L->b, type_of(L, e->type), local_slot(F, e), "");
  case CMM_E_REGOFF: {
    LLVMValueRef r = expr(F, e->u.regoff.reg);
    return LLVMBuildAdd(L->b, r, LLVMConstInt(LLVMTypeOf(r), (uint64_t)e->u.regoff.offset, 1), "");
  }
  case CMM_E_MACHOP: return machop(F, e);
  default: internal_error("expr kind %d", e->kind);
  }
}

static void assign(Fn *F, const CmmExpr *lhs, LLVMValueRef v) {
  if (lhs->kind == CMM_E_GLOBAL) write_global(F, lhs->u.global.reg, v, lhs->loc);
  else LLVMBuildStore(F->L->b, v, local_slot(F, lhs));
}

/* ---- the dynamic stack's intrinsics ------------------------------------------------ */

static LLVMValueRef intrinsic_fn(Lowering *L, int id) {
  if (!L->intrinsic[id]) {
    LLVMTypeRef params[2] = {intrinsics[id].desc ? L->ptr : L->i64, L->i64};
    L->intrinsic[id] = LLVMAddFunction(L->m, intrinsics[id].name,
                                       LLVMFunctionType(L->void_t, params, intrinsics[id].nargs, 0));
    unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(L->intrinsic[id], LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(L->ctx, nounwind, 0));
  }
  return L->intrinsic[id];
}

/* A private NUL-terminated string, one per distinct text in the module. */
static LLVMValueRef string_const(Lowering *L, const char *text) {
  uint32_t i;
  if (strmap_get(&L->strings, text, &i)) return L->string.v[i];
  LLVMValueRef init = LLVMConstStringInContext2(L->ctx, text, strlen(text), 0);
  LLVMValueRef g = LLVMAddGlobal(L->m, LLVMTypeOf(init), ".strobe.str");
  LLVMSetInitializer(g, init);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  strmap_put(&L->strings, L->a, arena_strndup(L->a, text, strlen(text)), L->string.n, NULL);
  vec_push(L->a, &L->string, g);
  return g;
}

/* The constant descriptor of a tick (StrobeTickDesc), one per Haskell function and
 * note over the module, in the section the runtime enumerates. */
static LLVMValueRef tick_desc(Fn *F, const CmmSrcNote *n) {
  Lowering *L = F->L;
  const char *key = arena_printf(L->a, "%s|%s|%u:%u-%u:%u", F->pi->function, n->file, n->line1,
                                 n->col1, n->line2, n->col2);
  uint32_t i;
  if (strmap_get(&L->descs, key, &i)) return L->desc.v[i].g;
  Desc d = {.function = string_const(L, F->pi->function), .file = string_const(L, n->file),
            .line1 = n->line1, .col1 = n->col1, .line2 = n->line2, .col2 = n->col2};
  LLVMValueRef f[DESC_FIELDS] = {
      LLVMConstInt(L->i32, STROBE_TICK_SOURCE_NOTE, 0), LLVMConstInt(L->i32, n->line1, 0),
      LLVMConstInt(L->i32, n->col1, 0), LLVMConstInt(L->i32, n->line2, 0),
      LLVMConstInt(L->i32, n->col2, 0), LLVMConstInt(L->i32, 0, 0), /* flags: set_parents */
      d.function, d.file,
      F->fn, /* the code: its function, whose lines the tick's are among */
      LLVMConstPointerNull(L->ptr), /* the parent: set by set_parents */
  };
  memcpy(d.fields, f, sizeof f);
  d.g = LLVMAddGlobal(L->m, L->desc_type, ".strobe.tick");
  LLVMSetLinkage(d.g, LLVMPrivateLinkage);
  LLVMSetGlobalConstant(d.g, 1);
  LLVMSetSection(d.g, STROBE_TICK_SECTION);
  LLVMSetAlignment(d.g, 8);
  strmap_put(&L->descs, L->a, key, L->desc.n, NULL);
  vec_push(L->a, &L->desc, d);
  return d.g;
}

static bool before_or_at(uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2) {
  return l1 < l2 || (l1 == l2 && c1 <= c2);
}

/* a's span strictly contains b's (as the runtime's rule 2b compares them). */
static bool encloses(const Desc *a, const Desc *b) {
  bool same = a->line1 == b->line1 && a->col1 == b->col1 && a->line2 == b->line2 && a->col2 == b->col2;
  return !same && before_or_at(a->line1, a->col1, b->line1, b->col1) &&
         before_or_at(b->line2, b->col2, a->line2, a->col2);
}

/* Note [A descriptor's parent]: the parent of a descriptor is the descriptor of the
 * smallest span that strictly contains its own, among those of the same function and
 * file in this module; NULL if none does.  When those spans nest (the notes of a
 * Haskell binding do), every one of them is on the parent chain, and the descriptor
 * says so (STROBE_DESC_NESTED): the inline tick (plugin/instrument.c) then tells an
 * entry that contains it from a finished sibling by the chain alone, and handles
 * rules 2a-2c of the dynamic stack without calling the runtime.  Quadratic in the
 * descriptors of a function, which are few. */
static bool is_enclosing(const Desc *e, const Desc *d) {
  return e->function == d->function && e->file == d->file && encloses(e, d);
}

static void set_parents(Lowering *L) {
  for (uint32_t i = 0; i < L->desc.n; i++) {
    Desc *d = &L->desc.v[i];
    for (uint32_t j = 0; j < L->desc.n; j++) {
      Desc *e = &L->desc.v[j];
      if (is_enclosing(e, d) && (!d->parent || encloses(d->parent, e))) d->parent = e;
    }
  }
  for (uint32_t i = 0; i < L->desc.n; i++) {
    Desc *d = &L->desc.v[i];
    bool nested = true;
    for (uint32_t j = 0; j < L->desc.n && nested; j++) {
      const Desc *e = &L->desc.v[j];
      if (!is_enclosing(e, d)) continue;
      const Desc *p = d->parent;
      while (p && p != e) p = p->parent;
      nested = p == e;
    }
    d->fields[DESC_FLAGS] = LLVMConstInt(L->i32, nested ? STROBE_DESC_NESTED : 0, 0);
    if (d->parent) d->fields[DESC_PARENT] = d->parent->g;
    LLVMSetInitializer(d->g, LLVMConstNamedStruct(L->desc_type, d->fields, DESC_FIELDS));
  }
}

/* A call of intrinsic id with the current Sp (and a descriptor for a tick). */
static void call_intrinsic(Fn *F, int id, const CmmSrcNote *note) {
  Lowering *L = F->L;
  if (L->o->no_intrinsics) return;
  LLVMValueRef args[2];
  unsigned n = 0;
  if (intrinsics[id].desc) args[n++] = tick_desc(F, note);
  args[n++] = read_global(F, CMM_REG_SP, 0);
  LLVMValueRef fn = intrinsic_fn(L, id);
  LLVMBuildCall2(L->b, LLVMGlobalGetValueType(fn), fn, args, n, "");
}

/* Whether an assignment to Sp may raise it (pop frames): all but `Sp = Sp - N`. */
static bool may_raise_sp(const CmmExpr *rhs) {
  if (rhs->kind == CMM_E_MACHOP && rhs->u.mo.op == CMM_MO_SUB) {
    const CmmExpr *x = rhs->u.mo.args[0], *n = rhs->u.mo.args[1];
    return !(x->kind == CMM_E_GLOBAL && x->u.global.reg == CMM_REG_SP && n->kind == CMM_E_INT &&
             !n->u.i.neg);
  }
  return true;
}

/* ---- statements ------------------------------------------------------------------ */

/* A value into a result register, at the register's width. */
static void assign_result(Fn *F, const CmmExpr *reg, LLVMValueRef v) {
  LLVMTypeRef want = type_of(F->L, reg->type);
  if (LLVMGetTypeKind(want) == LLVMIntegerTypeKind && LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMIntegerTypeKind)
    v = int_at(F, v, LLVMGetIntTypeWidth(want));
  assign(F, reg, v);
}

/* A jump: every Cmm call and jump is `musttail call ghccc` then `ret void`.  Registers
 * not live into the callee are undef; regs NULL means all of them are live. */
static void jump(Fn *F, LLVMValueRef target, const uint8_t *regs, uint32_t nregs) {
  Lowering *L = F->L;
  bool live[NPARAMS] = {[P_BASE] = true, [P_SP] = true, [P_HP] = true, [P_SPLIM] = true};
  for (int s = 0; s < NPARAMS; s++) live[s] |= regs == NULL;
  for (uint32_t i = 0; regs && i < nregs; i++) {
    int s = pinned_slot(regs[i]);
    if (s >= 0) live[s] = true;
  }
  LLVMValueRef args[NPARAMS];
  for (int s = 0; s < NPARAMS; s++)
    args[s] = live[s] ? LLVMBuildLoad2(L->b, param_type(L, s), F->slot[s], "")
                      : LLVMGetUndef(param_type(L, s));
  LLVMValueRef call = LLVMBuildCall2(L->b, L->fn_type, target, args, NPARAMS, "");
  LLVMSetInstructionCallConv(call, LLVMGHCCallConv);
  LLVMSetTailCallKind(call, LLVMTailCallKindMustTail);
  LLVMBuildRetVoid(L->b);
}

static LLVMValueRef call_target(Fn *F, const CmmExpr *t) {
  if (t->kind == CMM_E_LABEL && t->u.label.offset == 0)
    return t->u.label.kind == CMM_LABEL_BLOCK ? F->pi->fn[t->u.label.block]
                                              : label_ref(F->L, t->u.label.name);
  return address(F, t);
}

/* Note [Foreign calls]: the dump gives neither a C function's prototype nor whether it
 * is variadic, so a foreign call uses a variadic prototype with no fixed parameters.  On
 * x86-64 System V this passes every argument where a prototyped call would, and also
 * sets %al, which variadic callees such as printf need for floating-point arguments. */
static void ccall(Fn *F, const CmmStmt *s) {
  Lowering *L = F->L;
  if (s->u.ccall.nresults > 1)
    fail_at(L, s->loc, "a foreign call with %u results is not supported", s->u.ccall.nresults);
  LLVMValueRef *args = arena_alloc(L->a, (s->u.ccall.nargs + 1) * sizeof *args);
  for (uint32_t i = 0; i < s->u.ccall.nargs; i++) args[i] = expr(F, s->u.ccall.args[i]);
  LLVMTypeRef ret = s->u.ccall.nresults ? type_of(L, s->u.ccall.results[0]->type) : L->void_t;
  LLVMTypeRef ft = LLVMFunctionType(ret, NULL, 0, /*IsVarArg=*/1);
  LLVMValueRef r = LLVMBuildCall2(L->b, ft, call_target(F, s->u.ccall.target), args,
                                  s->u.ccall.nargs, "");
  if (s->u.ccall.nresults) assign(F, s->u.ccall.results[0], r);
  if (s->u.ccall.never_returns) {
    LLVMBuildUnreachable(L->b);
    LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->ctx, F->fn, "dead"));
  }
}

static LLVMValueRef libm(Fn *F, const char *name, LLVMTypeRef t, LLVMValueRef *args, unsigned n) {
  Lowering *L = F->L;
  LLVMTypeRef params[2] = {t, t};
  LLVMTypeRef ft = LLVMFunctionType(t, params, n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(L->m, name);
  if (!fn) fn = LLVMAddFunction(L->m, name, ft);
  return LLVMBuildCall2(L->b, ft, fn, args, n, "");
}

static void need(Lowering *L, const CmmStmt *s, uint32_t nresults, uint32_t nargs) {
  if (s->u.prim.nresults != nresults || s->u.prim.nargs != nargs)
    fail_at(L, s->loc, "%s takes %u argument%s and gives %u result%s, not %u and %u",
            cmm_primops[s->u.prim.op].name, nargs, nargs == 1 ? "" : "s", nresults,
            nresults == 1 ? "" : "s", s->u.prim.nargs, s->u.prim.nresults);
}

static LLVMAtomicRMWBinOp amo_op(Lowering *L, const CmmStmt *s) {
  static const struct { const char *name; LLVMAtomicRMWBinOp op; } ops[] = {
      {"AMO_Add", LLVMAtomicRMWBinOpAdd}, {"AMO_Sub", LLVMAtomicRMWBinOpSub},
      {"AMO_And", LLVMAtomicRMWBinOpAnd}, {"AMO_Nand", LLVMAtomicRMWBinOpNand},
      {"AMO_Or", LLVMAtomicRMWBinOpOr},   {"AMO_Xor", LLVMAtomicRMWBinOpXor},
  };
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (strcmp(ops[i].name, s->u.prim.amo) == 0) return ops[i].op;
  fail_at(L, s->loc, "unknown atomic operation '%s'", s->u.prim.amo);
}

/* The alignment argument of MO_Memcpy & co.: a power of two, else no promise (1). */
static unsigned alignment(int64_t a) {
  return a > 0 && a <= (1 << 30) && (a & (a - 1)) == 0 ? (unsigned)a : 1;
}

/* GHC's CallishMachOps: LLVM intrinsics where there is one, libm otherwise. */
static void primcall(Fn *F, const CmmStmt *s) {
  Lowering *L = F->L;
  LLVMBuilderRef b = L->b;
  int op = s->u.prim.op;
  unsigned w = s->u.prim.width;
  LLVMTypeRef tw = w ? LLVMIntTypeInContext(L->ctx, w) : L->i64;
  LLVMValueRef a[3] = {0};
  for (uint32_t i = 0; i < s->u.prim.nargs && i < 3; i++) a[i] = expr(F, s->u.prim.args[i]);
  CmmExpr *const *res = s->u.prim.results;
  const char *name = cmm_primops[op].name;

  if (op >= CMM_PRIM_F64_PWR && op <= CMM_PRIM_F32_SQRT) { /* MO_F64_Sin, MO_F32_Sqrt, … */
    bool f32 = op >= CMM_PRIM_F32_PWR;
    const char *fn = name + 7; /* after MO_F64_ */
    bool pwr = op == CMM_PRIM_F64_PWR || op == CMM_PRIM_F32_PWR;
    need(L, s, 1, pwr ? 2 : 1);
    LLVMTypeRef t = f32 ? L->f32 : L->f64;
    static const struct { const char *op, *intrinsic, *libm; } math[] = {
        {"Pwr", "llvm.pow", NULL},   {"Sin", "llvm.sin", NULL},     {"Cos", "llvm.cos", NULL},
        {"Exp", "llvm.exp", NULL},   {"Log", "llvm.log", NULL},     {"Sqrt", "llvm.sqrt", NULL},
        {"Fabs", "llvm.fabs", NULL}, {"Tan", NULL, "tan"},          {"Asin", NULL, "asin"},
        {"Acos", NULL, "acos"},      {"Atan", NULL, "atan"},        {"Sinh", NULL, "sinh"},
        {"Cosh", NULL, "cosh"},      {"Tanh", NULL, "tanh"},        {"Asinh", NULL, "asinh"},
        {"Acosh", NULL, "acosh"},    {"Atanh", NULL, "atanh"},      {"Log1P", NULL, "log1p"},
        {"ExpM1", NULL, "expm1"},
    };
    for (size_t i = 0; i < sizeof math / sizeof *math; i++) {
      if (strcmp(math[i].op, fn) != 0) continue;
      LLVMValueRef r;
      if (math[i].intrinsic) {
        r = intrinsic(L, math[i].intrinsic, &t, 1, a, pwr ? 2 : 1);
      } else {
        char libname[16];
        snprintf(libname, sizeof libname, "%s%s", math[i].libm, f32 ? "f" : "");
        r = libm(F, libname, t, a, 1);
      }
      assign(F, res[0], r);
      return;
    }
    internal_error("no lowering for %s", name);
  }

  switch (op) {
  case CMM_PRIM_READ_BARRIER:
    LLVMBuildFence(b, LLVMAtomicOrderingAcquire, 0, "");
    return;
  case CMM_PRIM_WRITE_BARRIER:
    LLVMBuildFence(b, LLVMAtomicOrderingRelease, 0, "");
    return;
  case CMM_PRIM_TOUCH:
  case CMM_PRIM_PREFETCH: return;
  case CMM_PRIM_POPCNT:
  case CMM_PRIM_CLZ:
  case CMM_PRIM_CTZ:
  case CMM_PRIM_BSWAP:
  case CMM_PRIM_BREV: {
    need(L, s, 1, 1);
    static const char *const names[] = {
        [CMM_PRIM_POPCNT] = "llvm.ctpop", [CMM_PRIM_CLZ] = "llvm.ctlz", [CMM_PRIM_CTZ] = "llvm.cttz",
        [CMM_PRIM_BSWAP] = "llvm.bswap", [CMM_PRIM_BREV] = "llvm.bitreverse"};
    LLVMValueRef args[2] = {int_at(F, a[0], w), LLVMConstInt(L->i1, 0, 0)};
    bool zero_flag = op == CMM_PRIM_CLZ || op == CMM_PRIM_CTZ;
    assign_result(F, res[0], intrinsic(L, names[op], &tw, 1, args, zero_flag ? 2 : 1));
    return;
  }
  case CMM_PRIM_U_MUL2:
  case CMM_PRIM_S_MUL2: {
    bool sign = op == CMM_PRIM_S_MUL2;
    need(L, s, sign ? 3 : 2, 2);
    LLVMTypeRef t2 = LLVMIntTypeInContext(L->ctx, 2 * w);
    LLVMValueRef x = sign ? LLVMBuildSExt(b, a[0], t2, "") : LLVMBuildZExt(b, a[0], t2, "");
    LLVMValueRef y = sign ? LLVMBuildSExt(b, a[1], t2, "") : LLVMBuildZExt(b, a[1], t2, "");
    LLVMValueRef p = LLVMBuildMul(b, x, y, "");
    LLVMValueRef lo = LLVMBuildTrunc(b, p, tw, "");
    LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, p, LLVMConstInt(t2, w, 0), ""), tw, "");
    if (sign) { /* (does the product need the high word, hi, lo) */
      LLVMValueRef fits = LLVMBuildICmp(b, LLVMIntEQ, hi,
                                        LLVMBuildAShr(b, lo, LLVMConstInt(tw, w - 1, 0), ""), "");
      assign_result(F, res[0], LLVMBuildZExt(b, LLVMBuildNot(b, fits, ""), tw, ""));
      assign_result(F, res[1], hi);
      assign_result(F, res[2], lo);
    } else {
      assign_result(F, res[0], hi);
      assign_result(F, res[1], lo);
    }
    return;
  }
  case CMM_PRIM_U_QUOTREM:
  case CMM_PRIM_S_QUOTREM: {
    need(L, s, 2, 2);
    bool sign = op == CMM_PRIM_S_QUOTREM;
    LLVMValueRef x = int_at(F, a[0], w), y = int_at(F, a[1], w);
    assign_result(F, res[0], sign ? LLVMBuildSDiv(b, x, y, "") : LLVMBuildUDiv(b, x, y, ""));
    assign_result(F, res[1], sign ? LLVMBuildSRem(b, x, y, "") : LLVMBuildURem(b, x, y, ""));
    return;
  }
  case CMM_PRIM_U_QUOTREM2: { /* (hi, lo) / d */
    need(L, s, 2, 3);
    LLVMTypeRef t2 = LLVMIntTypeInContext(L->ctx, 2 * w);
    LLVMValueRef n = LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildZExt(b, a[0], t2, ""), LLVMConstInt(t2, w, 0), ""),
                                 LLVMBuildZExt(b, a[1], t2, ""), "");
    LLVMValueRef d = LLVMBuildZExt(b, a[2], t2, "");
    assign_result(F, res[0], LLVMBuildTrunc(b, LLVMBuildUDiv(b, n, d, ""), tw, ""));
    assign_result(F, res[1], LLVMBuildTrunc(b, LLVMBuildURem(b, n, d, ""), tw, ""));
    return;
  }
  case CMM_PRIM_ADD2: { /* (carry, sum) */
    need(L, s, 2, 2);
    LLVMValueRef sum = LLVMBuildAdd(b, a[0], a[1], "");
    assign_result(F, res[0], LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntULT, sum, a[0], ""), tw, ""));
    assign_result(F, res[1], sum);
    return;
  }
  case CMM_PRIM_ADDWORDC:
  case CMM_PRIM_SUBWORDC:
  case CMM_PRIM_ADDINTC:
  case CMM_PRIM_SUBINTC: { /* (result, carry or overflow) */
    need(L, s, 2, 2);
    static const char *const names[] = {
        [CMM_PRIM_ADDWORDC] = "llvm.uadd.with.overflow", [CMM_PRIM_SUBWORDC] = "llvm.usub.with.overflow",
        [CMM_PRIM_ADDINTC] = "llvm.sadd.with.overflow", [CMM_PRIM_SUBINTC] = "llvm.ssub.with.overflow"};
    LLVMValueRef args[2] = {int_at(F, a[0], w), int_at(F, a[1], w)};
    LLVMValueRef r = intrinsic(L, names[op], &tw, 1, args, 2);
    assign_result(F, res[0], LLVMBuildExtractValue(b, r, 0, ""));
    assign_result(F, res[1], LLVMBuildZExt(b, LLVMBuildExtractValue(b, r, 1, ""), tw, ""));
    return;
  }
  case CMM_PRIM_PDEP:
  case CMM_PRIM_PEXT: { /* as GHC without BMI2: ghc-prim's C functions hs_pdep64 & co. */
    need(L, s, 1, 2);
    char name[16];
    snprintf(name, sizeof name, "hs_%s%u", op == CMM_PRIM_PDEP ? "pdep" : "pext", w);
    LLVMTypeRef params[] = {L->i64, L->i64};
    LLVMTypeRef ft = LLVMFunctionType(L->i64, params, 2, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->m, name);
    if (!fn) fn = LLVMAddFunction(L->m, name, ft);
    LLVMValueRef args[] = {int_at(F, a[0], 64), int_at(F, a[1], 64)};
    assign_result(F, res[0], LLVMBuildCall2(b, ft, fn, args, 2, ""));
    return;
  }
  case CMM_PRIM_UF_CONV:
    need(L, s, 1, 1);
    assign(F, res[0], LLVMBuildUIToFP(b, a[0], type_of(L, res[0]->type), ""));
    return;
  case CMM_PRIM_MEMCPY:
  case CMM_PRIM_MEMMOVE: {
    need(L, s, 0, 3);
    LLVMValueRef dst = LLVMBuildIntToPtr(b, a[0], L->ptr, ""), src = LLVMBuildIntToPtr(b, a[1], L->ptr, "");
    unsigned align = alignment(s->u.prim.intarg);
    if (op == CMM_PRIM_MEMCPY) LLVMBuildMemCpy(b, dst, align, src, align, a[2]);
    else LLVMBuildMemMove(b, dst, align, src, align, a[2]);
    return;
  }
  case CMM_PRIM_MEMSET:
    need(L, s, 0, 3);
    LLVMBuildMemSet(b, LLVMBuildIntToPtr(b, a[0], L->ptr, ""), int_at(F, a[1], 8), a[2],
                    alignment(s->u.prim.intarg));
    return;
  case CMM_PRIM_MEMCMP: {
    need(L, s, 1, 3);
    LLVMTypeRef params[] = {L->ptr, L->ptr, L->i64};
    LLVMTypeRef ft = LLVMFunctionType(L->i32, params, 3, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->m, "memcmp");
    if (!fn) fn = LLVMAddFunction(L->m, "memcmp", ft);
    LLVMValueRef args[] = {LLVMBuildIntToPtr(b, a[0], L->ptr, ""), LLVMBuildIntToPtr(b, a[1], L->ptr, ""), a[2]};
    assign_result(F, res[0], LLVMBuildCall2(b, ft, fn, args, 3, ""));
    return;
  }
  case CMM_PRIM_ATOMIC_READ: {
    need(L, s, 1, 1);
    LLVMValueRef v = LLVMBuildLoad2(b, tw, LLVMBuildIntToPtr(b, a[0], L->ptr, ""), "");
    LLVMSetOrdering(v, LLVMAtomicOrderingSequentiallyConsistent);
    LLVMSetAlignment(v, w / 8);
    assign_result(F, res[0], v);
    return;
  }
  case CMM_PRIM_ATOMIC_WRITE: {
    need(L, s, 0, 2);
    LLVMValueRef st = LLVMBuildStore(b, int_at(F, a[1], w), LLVMBuildIntToPtr(b, a[0], L->ptr, ""));
    LLVMSetOrdering(st, LLVMAtomicOrderingSequentiallyConsistent);
    LLVMSetAlignment(st, w / 8);
    return;
  }
  case CMM_PRIM_CMPXCHG: {
    need(L, s, 1, 3);
    LLVMValueRef r = LLVMBuildAtomicCmpXchg(b, LLVMBuildIntToPtr(b, a[0], L->ptr, ""), int_at(F, a[1], w),
                                            int_at(F, a[2], w), LLVMAtomicOrderingSequentiallyConsistent,
                                            LLVMAtomicOrderingSequentiallyConsistent, 0);
    assign_result(F, res[0], LLVMBuildExtractValue(b, r, 0, ""));
    return;
  }
  case CMM_PRIM_XCHG:
  case CMM_PRIM_ATOMIC_RMW: {
    need(L, s, 1, 2);
    LLVMAtomicRMWBinOp rmw = op == CMM_PRIM_XCHG ? LLVMAtomicRMWBinOpXchg : amo_op(L, s);
    assign_result(F, res[0], LLVMBuildAtomicRMW(b, rmw, LLVMBuildIntToPtr(b, a[0], L->ptr, ""),
                                                int_at(F, a[1], w), LLVMAtomicOrderingSequentiallyConsistent, 0));
    return;
  }
  default: fail_at(L, s->loc, "%s is not supported yet", name);
  }
}

/* ---- blocks and functions ------------------------------------------------------- */

typedef VEC(uint32_t) Worklist;

/* The basic block a branch to Cmm block k goes to: k's own block in this function, made
 * on first use and queued, or, for another proc point, a block that jumps to it. */
static LLVMBasicBlockRef target(Fn *F, Worklist *todo, uint32_t k) {
  Lowering *L = F->L;
  if (F->pi->pp[k] && F->pi->fn[k] != F->fn) {
    if (!F->jump[k]) {
      LLVMBasicBlockRef here = LLVMGetInsertBlock(L->b);
      LLVMMetadataRef loc = LLVMGetCurrentDebugLocation2(L->b);
      F->jump[k] = LLVMAppendBasicBlockInContext(L->ctx, F->fn, F->proc->blocks[k].label);
      LLVMPositionBuilderAtEnd(L->b, F->jump[k]);
      jump(F, F->pi->fn[k], NULL, 0);
      LLVMPositionBuilderAtEnd(L->b, here);
      LLVMSetCurrentDebugLocation2(L->b, loc);
    }
    return F->jump[k];
  }
  if (!F->bb[k]) {
    F->bb[k] = LLVMAppendBasicBlockInContext(L->ctx, F->fn, F->proc->blocks[k].label);
    vec_push(L->a, todo, k);
  }
  return F->bb[k];
}

static void set_weights(Lowering *L, LLVMValueRef br, int likely) {
  if (likely < 0) return;
  LLVMMetadataRef md[3] = {
      LLVMMDStringInContext2(L->ctx, "branch_weights", 14),
      LLVMValueAsMetadata(LLVMConstInt(L->i32, likely ? 2000 : 1, 0)),
      LLVMValueAsMetadata(LLVMConstInt(L->i32, likely ? 1 : 2000, 0)),
  };
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(L->ctx, "prof", 4),
                  LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, md, 3)));
}

static LLVMValueRef truth(Fn *F, LLVMValueRef v) {
  return LLVMBuildICmp(F->L->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

static void terminator(Fn *F, Worklist *todo, const CmmStmt *s) {
  Lowering *L = F->L;
  switch (s->kind) {
  case CMM_S_GOTO: LLVMBuildBr(L->b, target(F, todo, s->u.goto_.target.index)); return;
  case CMM_S_IF: {
    LLVMValueRef c = truth(F, expr(F, s->u.if_.cond));
    LLVMValueRef br = LLVMBuildCondBr(L->b, c, target(F, todo, s->u.if_.then_.index),
                                      target(F, todo, s->u.if_.else_.index));
    set_weights(L, br, s->u.if_.likely);
    return;
  }
  case CMM_S_SWITCH: {
    LLVMValueRef x = expr(F, s->u.sw.scrut);
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMBasicBlockRef dflt;
    if (s->u.sw.has_default) {
      dflt = target(F, todo, s->u.sw.default_.index);
    } else { /* the range says no other value comes */
      LLVMBasicBlockRef here = LLVMGetInsertBlock(L->b);
      dflt = LLVMAppendBasicBlockInContext(L->ctx, F->fn, "impossible");
      LLVMPositionBuilderAtEnd(L->b, dflt);
      LLVMBuildUnreachable(L->b);
      LLVMPositionBuilderAtEnd(L->b, here);
    }
    uint32_t ncases = 0;
    for (uint32_t i = 0; i < s->u.sw.ncases; i++) ncases += s->u.sw.cases[i].nvalues;
    LLVMValueRef sw = LLVMBuildSwitch(L->b, x, dflt, ncases);
    StrMap seen; /* the case values at the scrutinee's width: each once */
    strmap_init(&seen, L->a, ncases);
    for (uint32_t i = 0; i < s->u.sw.ncases; i++) {
      const CmmSwitchCase *c = &s->u.sw.cases[i];
      LLVMBasicBlockRef dest = target(F, todo, c->target.index);
      for (uint32_t j = 0; j < c->nvalues; j++) {
        LLVMValueRef v = LLVMConstInt(t, c->values[j].neg ? 0 - c->values[j].mag : c->values[j].mag, 0);
        const char *key = arena_printf(L->a, "%llu", LLVMConstIntGetZExtValue(v));
        if (!strmap_put(&seen, L->a, key, 0, NULL))
          fail_at(L, c->target.loc, "case value %s%llu appears twice in this switch (at %u bits)",
                  c->values[j].neg ? "-" : "", (unsigned long long)c->values[j].mag,
                  LLVMGetIntTypeWidth(t));
        LLVMAddCase(sw, v, dest);
      }
    }
    return;
  }
  case CMM_S_CALL:
    jump(F, call_target(F, s->u.call.target), s->u.call.regs, s->u.call.nregs);
    return;
  default: internal_error("terminator %d", s->kind);
  }
}

static void block(Fn *F, Worklist *todo, uint32_t k) {
  Lowering *L = F->L;
  const CmmBlock *blk = &F->proc->blocks[k];
  LLVMPositionBuilderAtEnd(L->b, F->bb[k]);
  const ScopeNode *node = scopes_block_node(F->tree, F->decl, k);
  F->scope = dw_scope(L->dw, &F->dwf, node, L->a);
  /* Note [Where a block's line starts]: at GHC's note for the scope (the first from the
   * main file, usually the whole binding), not at the most specific one: that keeps
   * every line GHC's own -g object has (bench/line-tables.sh).  A tick inside the
   * current note then moves the location in, for code after it. */
  const CmmSrcNote *note = node->first;
  LLVMSetCurrentDebugLocation2(L->b, dw_location(L->dw, &F->dwf, F->scope, note));
  /* A continuation is entered by a return: what was pushed at its depth is done. */
  if (k == F->pp && (k != 0 || F->pi->continuation)) call_intrinsic(F, LW_RET, NULL);
  for (uint32_t i = 0; i < blk->nstmts; i++) {
    const CmmStmt *s = &blk->stmts[i];
    switch (s->kind) {
    case CMM_S_TICK: /* finer than the block's note: code after a tick within it */
      if (!note || dw_note_within(note, &s->u.tick)) {
        note = &s->u.tick;
        LLVMSetCurrentDebugLocation2(L->b, dw_location(L->dw, &F->dwf, F->scope, note));
      }
      call_intrinsic(F, LW_TICK, &s->u.tick);
      break;
    case CMM_S_COMMENT:
    case CMM_S_UNWIND: break;
    case CMM_S_ASSIGN:
      assign(F, s->u.assign.lhs, expr(F, s->u.assign.rhs));
      if (s->u.assign.lhs->kind == CMM_E_GLOBAL && s->u.assign.lhs->u.global.reg == CMM_REG_SP &&
          may_raise_sp(s->u.assign.rhs))
        call_intrinsic(F, LW_POP, NULL);
      break;
    case CMM_S_STORE:
      LLVMBuildStore(L->b, expr(F, s->u.store.rhs), address(F, s->u.store.addr));
      break;
    case CMM_S_CCALL: ccall(F, s); break;
    case CMM_S_PRIMCALL: primcall(F, s); break;
    default: terminator(F, todo, s); break;
    }
  }
}

/* The words of an info table as prefix data: the table sits right before the code.
 * Data a symbolic table refers to (a constructor's description) becomes private
 * globals first, so that the words can refer to them. */
static void prefix_data(Lowering *L, const CmmProc *p, const CmmInfoTable *it, LLVMValueRef fn) {
  CmmStatic *st;
  uint32_t n;
  char *why = NULL;
  if (!lw_info_table_words(p, it, L->a, &st, &n, &why, &L->info)) {
    diag_error(L->d, L->f->src, it->loc, "cannot lay out info table '%s': %s", it->label, why);
    free(why);
    longjmp(L->fail, 1);
  }
  for (uint32_t i = 0; i < L->info.naux; i++) {
    const LwInfoAux *x = &L->info.aux[i];
    LLVMValueRef g = LLVMAddGlobal(L->m, statics_type(L, x->statics, x->nstatics),
                                   lw_symbol(L->a, x->label));
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetAlignment(g, strcmp(x->section, "cstring") == 0 ? 1 : 8);
    define(L, x->label, g);
    LLVMSetInitializer(g, statics_const(L, x->statics, x->nstatics));
  }
  LLVMSetPrefixData(fn, statics_const(L, st, n));
}

static void function(Lowering *L, const CmmProc *p, const ProcInfo *pi, const ScopeTree *tree,
                     uint32_t decl, uint32_t k) {
  Fn F = {.L = L, .proc = p, .pi = pi, .pp = k, .fn = pi->fn[k], .tree = tree, .decl = decl};
  F.bb = arena_alloc(L->a, p->nblocks * sizeof *F.bb);
  F.jump = arena_alloc(L->a, p->nblocks * sizeof *F.jump);
  strmap_init(&F.locals, L->a, 16);

  const CmmInfoTable *it = table_of(p, k);
  const char *name = k == 0 ? pi->name : arena_printf(L->a, "%s.%s", pi->name, p->blocks[k].label);
  LLVMAddAttributeAtIndex(F.fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(L->ctx, "strobe-name", 11, name, strlen(name)));
  dw_function(L->dw, &F.dwf, F.fn, name, LLVMGetLinkage(F.fn) == LLVMInternalLinkage,
              scopes_block_node(tree, decl, k), L->a);
  if (it) prefix_data(L, p, it, F.fn);

  /* The entry block: a slot per pinned register, then a branch to the proc point. */
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->ctx, F.fn, "entry");
  LLVMPositionBuilderAtEnd(L->b, entry);
  LLVMSetCurrentDebugLocation2(L->b, dw_location(L->dw, &F.dwf, F.dwf.sp, NULL));
  for (int s = 0; s < NPARAMS; s++) {
    F.slot[s] = LLVMBuildAlloca(L->b, param_type(L, s), param_names[s]);
    LLVMBuildStore(L->b, LLVMGetParam(F.fn, (unsigned)s), F.slot[s]);
  }
  Worklist todo = {0};
  LLVMValueRef br = LLVMBuildBr(L->b, target(&F, &todo, k));
  F.alloca_at = L->alloca_at; /* the Lowering's: an error longjmps past this function */
  LLVMPositionBuilderBefore(F.alloca_at, br);
  for (uint32_t i = 0; i < todo.n; i++) block(&F, &todo, todo.v[i]);
  dw_function_done(L->dw, &F.dwf);
}

static LLVMValueRef new_function(Lowering *L) {
  LLVMValueRef fn = LLVMAddFunction(L->m, "", L->fn_type);
  for (int s = 0; s < NPARAMS; s++) {
    char name[16];
    snprintf(name, sizeof name, "%s_Arg", param_names[s]);
    LLVMSetValueName2(LLVMGetParam(fn, (unsigned)s), name, strlen(name));
  }
  LLVMSetFunctionCallConv(fn, LLVMGHCCallConv);
  LLVMSetAlignment(fn, 8);
  /* Cmm may load from address 0 to crash on purpose: LLVM must not treat that as
   * undefined behaviour and delete it. */
  static const char *const attrs[] = {"nounwind", "null_pointer_is_valid"};
  for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
    unsigned kind = LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i]));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->ctx, kind, 0));
  }
  return fn;
}

/* ---- files ------------------------------------------------------------------------ */

/* The module most module-qualified labels defined here belong to (`Main`), if any. */
static const char *file_module(Lowering *L, const CmmFile *f) {
  StrMap count = {0};
  const char *best = NULL;
  uint32_t best_n = 0;
  for (uint32_t g = 0; g < f->ngroups; g++)
    for (uint32_t i = 0; i < f->groups[g].ndecls; i++) {
      const CmmDecl *d = &f->groups[g].decls[i];
      const char *label = d->kind == CMM_DECL_PROC ? d->u.proc.label : d->u.data.label;
      char *m = lw_label_module(L->a, label);
      if (!m) continue;
      uint32_t n = 0;
      strmap_get(&count, m, &n);
      strmap_put(&count, L->a, m, ++n, NULL);
      if (n > best_n) best_n = n, best = m;
    }
  return best;
}

/* Code that is not a binding of its own: a -fllvm split continuation (`_c1JV`) or a
 * thunk (`sat_s1Jv`). */
static bool is_binding(const CmmProc *p) {
  return p->label[0] != '_' && strncmp(p->label, "sat_", 4) != 0;
}

/* The binding a continuation or thunk belongs to: the nearest scope at or above its
 * entry holds the entry block of that binding's proc.  GHC's -fllvm pipeline makes each
 * continuation a proc of its own (`_c1JV`, table `block_c1JV_info`); it is named as the
 * native pipeline's split names it, after that code (`Main.fact.c1JV`), and its ticks,
 * like a thunk's, count as that function's. */
static void find_binding(Lowering *L, const CmmProc *p, ProcInfo *pi, const ScopeTree *tree,
                         uint32_t decl) {
  if (is_binding(p) || p->nblocks == 0) return; /* no code, no ticks: no binding needed */
  for (const ScopeNode *n = scopes_block_node(tree, decl, 0); n; n = n->parent)
    for (uint32_t i = 0; i < n->nblocks; i++) {
      const CmmProc *q = n->blocks[i].proc;
      if (q == p || !is_binding(q) || n->blocks[i].block != &q->blocks[0]) continue;
      const CmmInfoTable *t = table_of(q, 0);
      pi->function = lw_haskell_name(L->a, t ? t->label : q->label, L->module);
      if (pi->continuation) pi->name = arena_printf(L->a, "%s.%s", pi->function, p->label + 1);
      return;
    }
}

static ProcInfo *declare_proc(Lowering *L, const CmmProc *p) {
  ProcInfo *pi = arena_alloc(L->a, sizeof *pi);
  pi->pp = proc_points(L, p);
  pi->fn = arena_alloc(L->a, p->nblocks * sizeof *pi->fn);
  const CmmInfoTable *entry_table = table_of(p, 0);
  pi->name = pi->function =
      lw_haskell_name(L->a, entry_table ? entry_table->label : p->label, L->module);
  pi->continuation = p->label[0] == '_' && p->label[1] == 'c';
  for (uint32_t k = 0; k < p->nblocks; k++) {
    if (!pi->pp[k]) continue;
    const CmmInfoTable *it = table_of(p, k);
    const char *label = it ? it->label
                        : k == 0 ? p->label
                                 : arena_printf(L->a, "%s_%s", p->label, p->blocks[k].label);
    pi->fn[k] = new_function(L);
    name_definition(L, it ? it->loc : p->blocks[k].loc, label, pi->fn[k]);
    define(L, label, pi->fn[k]);
  }
  if (entry_table) define(L, p->label, pi->fn[0]); /* `X_entry` is the code of `X_info` */
  return pi;
}

static LLVMValueRef declare_data(Lowering *L, const CmmData *dt) {
  LLVMValueRef g = LLVMAddGlobal(L->m, statics_type(L, dt->statics, dt->nstatics), "");
  name_definition(L, dt->loc, dt->label, g);
  LLVMSetAlignment(g, strcmp(dt->section, "cstring") == 0 ? 1 : 8);
  LLVMSetGlobalConstant(g, strcmp(dt->section, "data") != 0 && strcmp(dt->section, "uninitialised") != 0);
  return define(L, dt->label, g);
}

bool lw_add_file(Lowering *L, const CmmFile *f) {
  L->f = f;
  L->module = file_module(L, f);
  L->main_file = L->o->main_file ? L->o->main_file : scopes_main_file(f, L->a);
  strmap_init(&L->defs, L->a, 256);
  L->def.n = 0;
  lw_info_ctx_init(&L->info, f);
  if (setjmp(L->fail)) {
    L->failed = true;
    return false;
  }
  /* First every definition, so that any label can refer to any other; then bodies. */
  ProcInfo ***infos = arena_alloc(L->a, (f->ngroups ? f->ngroups : 1) * sizeof *infos);
  for (uint32_t g = 0; g < f->ngroups; g++) {
    const CmmGroup *gr = &f->groups[g];
    infos[g] = arena_alloc(L->a, (gr->ndecls ? gr->ndecls : 1) * sizeof **infos);
    for (uint32_t i = 0; i < gr->ndecls; i++) {
      const CmmDecl *d = &gr->decls[i];
      if (d->kind == CMM_DECL_PROC) infos[g][i] = declare_proc(L, &d->u.proc);
      else declare_data(L, &d->u.data);
    }
  }
  for (uint32_t g = 0; g < f->ngroups; g++) {
    const CmmGroup *gr = &f->groups[g];
    const ScopeTree *tree = scopes_build(f, gr, L->main_file, L->a);
    for (uint32_t i = 0; i < gr->ndecls; i++) {
      const CmmDecl *d = &gr->decls[i];
      if (d->kind == CMM_DECL_DATA) {
        const CmmData *dt = &d->u.data;
        LLVMSetInitializer(label_ref(L, dt->label), statics_const(L, dt->statics, dt->nstatics));
        continue;
      }
      const CmmProc *p = &d->u.proc;
      find_binding(L, p, infos[g][i], tree, i);
      for (uint32_t k = 0; k < p->nblocks; k++)
        if (infos[g][i]->pp[k]) function(L, p, infos[g][i], tree, i, k);
    }
  }
  if (L->o->entry && !L->entry_fn) {
    uint32_t i;
    if (strmap_get(&L->defs, L->o->entry, &i) && LLVMIsAFunction(L->def.v[i]))
      L->entry_fn = L->def.v[i];
  }
  LLVMSetCurrentDebugLocation2(L->b, NULL);
  return true;
}

/* ---- the module --------------------------------------------------------------------- */

Lowering *lw_new(LLVMContextRef ctx, const char *module_name, const LowerOptions *o, Diag *d) {
  Lowering *L = calloc(1, sizeof *L);
  if (!L) internal_error("out of memory");
  L->ctx = ctx;
  L->o = o;
  L->d = d;
  L->a = arena_new();
  L->m = LLVMModuleCreateWithNameInContext(module_name, ctx);
  L->b = LLVMCreateBuilderInContext(ctx);
  L->alloca_at = LLVMCreateBuilderInContext(ctx);
  strmap_init(&L->symbols, L->a, 1024);
  strmap_init(&L->strings, L->a, 64);
  strmap_init(&L->descs, L->a, 256);
  L->i1 = LLVMInt1TypeInContext(ctx);
  L->i8 = LLVMInt8TypeInContext(ctx);
  L->i32 = LLVMInt32TypeInContext(ctx);
  L->i64 = LLVMInt64TypeInContext(ctx);
  L->f32 = LLVMFloatTypeInContext(ctx);
  L->f64 = LLVMDoubleTypeInContext(ctx);
  L->ptr = LLVMPointerTypeInContext(ctx, 0);
  L->void_t = LLVMVoidTypeInContext(ctx);
  LLVMTypeRef params[NPARAMS];
  for (int s = 0; s < NPARAMS; s++) params[s] = param_type(L, s);
  L->fn_type = LLVMFunctionType(L->void_t, params, NPARAMS, 0);
  LLVMTypeRef desc_fields[DESC_FIELDS] = {L->i32, L->i32, L->i32, L->i32, L->i32,
                                          L->i32, L->ptr, L->ptr, L->ptr, L->ptr};
  L->desc_type = LLVMStructCreateNamed(ctx, "StrobeTickDesc");
  LLVMStructSetBody(L->desc_type, desc_fields, DESC_FIELDS, 0);
  /* The compile unit names the module; relative note files resolve from the cwd. */
  char cwd[4096];
  L->dw = dw_new(L->m, o->dwarf_haskell, module_name, getcwd(cwd, sizeof cwd) ? cwd : ".");
  return L;
}

/* Note [Standalone glue]: with --entry=L strobec adds the stop frame, a ghccc function
 * with a return-point info table that saves R1 and returns, and `strobe_entry`, a C
 * function that pushes the stop frame and calls L.  Every Cmm jump is a musttail call,
 * so the stop frame's `ret` comes straight back to strobe_entry (docs/standalone.md). */
static void entry_glue(Lowering *L) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef stop = new_function(L);
  LLVMSetValueName2(stop, "strobe_stop_frame_info", 22);
  LLVMValueRef words[] = {LLVMConstInt(L->i64, 0, 0), LLVMConstInt(L->i32, 30, 0), /* RET_SMALL */
                          LLVMConstInt(L->i32, 0, 0)};
  LLVMSetPrefixData(stop, LLVMConstStructInContext(L->ctx, words, 3, 1));
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(L->ctx, stop, "entry"));
  LLVMValueRef r1_slot = LLVMGetParam(stop, P_BASE); /* rR1 is at offset 0 */
  LLVMBuildStore(b, LLVMGetParam(stop, P_R1), r1_slot);
  LLVMBuildRetVoid(b);

  LLVMTypeRef ft = LLVMFunctionType(L->i64, &L->ptr, 1, 0);
  LLVMValueRef glue = LLVMAddFunction(L->m, "strobe_entry", ft);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(L->ctx, glue, "entry"));
  LLVMValueRef rt = LLVMGetParam(glue, 0);
#define FIELD(reg) LLVMBuildGEP2(b, L->i8, rt, (LLVMValueRef[]){word(L, cmm_global_regs[reg].offset)}, 1, "")
  LLVMValueRef sp = LLVMBuildLoad2(b, L->ptr, FIELD(CMM_REG_SP), "sp");
  LLVMBuildStore(b, stop, sp);
  LLVMValueRef args[NPARAMS];
  for (int s = 0; s < NPARAMS; s++) args[s] = LLVMGetUndef(param_type(L, s));
  args[P_BASE] = rt;
  args[P_SP] = sp;
  args[P_HP] = LLVMBuildLoad2(b, L->ptr, FIELD(CMM_REG_HP), "hp");
  args[P_SPLIM] = LLVMBuildLoad2(b, L->i64, FIELD(CMM_REG_SPLIM), "splim");
  LLVMValueRef call = LLVMBuildCall2(b, L->fn_type, L->entry_fn, args, NPARAMS, "");
  LLVMSetInstructionCallConv(call, LLVMGHCCallConv);
  /* strobe_entry has no debug info: code inlined into it would lose its Haskell lines. */
  unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->ctx, noinline, 0));
  LLVMBuildRet(b, LLVMBuildLoad2(b, L->i64, FIELD(CMM_REG_R1), "status"));
#undef FIELD
}

LLVMModuleRef lw_finish(Lowering *L) {
  if (L->failed) return NULL;
  if (L->o->entry) {
    if (!L->entry_fn) {
      L->d->errors++;
      if (L->d->out)
        fprintf(L->d->out, "strobec: error: --entry=%s: no procedure or info table of that name\n",
                L->o->entry);
      return NULL;
    }
    entry_glue(L);
  }
  set_parents(L);
  dw_finish(L->dw);
  char *msg = NULL;
  if (LLVMVerifyModule(L->m, LLVMReturnStatusAction, &msg))
    internal_error("the LLVM IR strobe made does not verify:\n%s", msg);
  LLVMDisposeMessage(msg);
  LLVMModuleRef m = L->m;
  L->m = NULL;
  return m;
}

void lw_free(Lowering *L) {
  if (!L) return;
  dw_free(L->dw);
  LLVMDisposeBuilder(L->b);
  LLVMDisposeBuilder(L->alloca_at);
  if (L->m) LLVMDisposeModule(L->m);
  arena_free(L->a);
  free(L);
}
