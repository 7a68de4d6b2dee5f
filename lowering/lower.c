/* lower.c — Cmm procedures and data to LLVM IR: the lowering proper (docs/design.md,
 * "Lowering").  Functions, blocks, statements, expressions and registers are here; prim
 * calls, statics, symbols, the dynamic stack's intrinsics and the --entry glue are in
 * the files lower_internal.h lists.
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
#include "lower_internal.h"

#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>

static const char *const param_names[NPARAMS] = {"Base", "Sp", "Hp", "R1", "R2", "R3", "R4", "R5",
                                                 "R6", "SpLim", "XMM1", "XMM2", "XMM3", "XMM4",
                                                 "XMM5", "XMM6"};

/* ---- types and constants ---------------------------------------------------------- */

LLVMTypeRef lw_type_of(Lowering *L, CmmType t) {
  if (t.cat == CMM_FLOAT) return t.width == 32 ? L->f32 : L->f64;
  return LLVMIntTypeInContext(L->ctx, t.width);
}

LLVMValueRef lw_word(Lowering *L, int64_t v) { return LLVMConstInt(L->i64, (uint64_t)v, 1); }

/* A literal of a static or an expression as a constant of its printed width. */
LLVMValueRef lw_const_int(Lowering *L, const CmmExpr *e) {
  uint64_t v = e->u.i.neg ? 0 - e->u.i.mag : e->u.i.mag;
  return LLVMConstInt(lw_type_of(L, e->type), v, 0);
}

LLVMValueRef lw_label_word(Lowering *L, const char *label, int64_t offset) {
  LLVMValueRef p = LLVMConstPtrToInt(lw_label_ref(L, label), L->i64);
  return offset ? LLVMConstAdd(p, lw_word(L, offset)) : p;
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

LLVMTypeRef lw_param_type(Lowering *L, int slot) {
  return slot <= P_HP ? L->ptr : slot < P_XMM1 ? L->i64 : L->f64;
}

static LLVMValueRef base(Fn *F) { return LLVMBuildLoad2(F->L->b, F->L->ptr, F->slot[P_BASE], "Base"); }

/* The address of a register's slot in the register table. */
static LLVMValueRef table_addr(Fn *F, int reg, CmmLoc loc) {
  int32_t off = cmm_global_regs[reg].offset;
  if (off == -1)
    lw_fail_at(F->L, loc, "register %s has no place in the register table", cmm_global_regs[reg].name);
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

LLVMValueRef lw_read_global(Fn *F, int reg, CmmLoc loc) {
  Lowering *L = F->L;
  LLVMTypeRef t = lw_type_of(L, cmm_global_regs[reg].type);
  int slot = pinned_slot(reg);
  if (slot < 0) return LLVMBuildLoad2(L->b, t, table_addr(F, reg, loc), "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, lw_param_type(L, slot), F->slot[slot], "");
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
  LLVMValueRef a = LLVMBuildAlloca(F->alloca_at, lw_type_of(F->L, e->type), e->u.local.name);
  strmap_put(&F->locals, F->L->a, e->u.local.name, F->local.n, NULL);
  vec_push(F->L->a, &F->local, a);
  return a;
}

/* ---- expressions ---------------------------------------------------------------- */

static LLVMValueRef address(Fn *F, const CmmExpr *e) {
  return LLVMBuildIntToPtr(F->L->b, lw_expr(F, e), F->L->ptr, "");
}

/* An integer operand at width w (shift amounts may be wider or narrower). */
LLVMValueRef lw_int_at(Fn *F, LLVMValueRef v, unsigned w) {
  unsigned have = LLVMGetIntTypeWidth(LLVMTypeOf(v));
  LLVMTypeRef t = LLVMIntTypeInContext(F->L->ctx, w);
  return have == w ? v : have > w ? LLVMBuildTrunc(F->L->b, v, t, "") : LLVMBuildZExt(F->L->b, v, t, "");
}

static LLVMValueRef flag(Fn *F, LLVMValueRef i1) { /* a comparison is a word */
  return LLVMBuildZExt(F->L->b, i1, F->L->i64, "");
}

LLVMValueRef lw_llvm_intrinsic(Lowering *L, const char *name, LLVMTypeRef *over, size_t nover,
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
  LLVMValueRef x = lw_expr(F, e->u.mo.args[0]);
  LLVMValueRef y = e->u.mo.nargs > 1 ? lw_expr(F, e->u.mo.args[1]) : NULL;
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
    LLVMValueRef r = lw_llvm_intrinsic(L, e->u.mo.op == CMM_MO_S_MULMAYOFLO ? "llvm.smul.with.overflow"
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
  case CMM_MO_SHL: return LLVMBuildShl(b, x, lw_int_at(F, y, w), "");
  case CMM_MO_U_SHR: return LLVMBuildLShr(b, x, lw_int_at(F, y, w), "");
  case CMM_MO_S_SHR: return LLVMBuildAShr(b, x, lw_int_at(F, y, w), "");
  case CMM_MO_SF_CONV: return LLVMBuildSIToFP(b, x, to_float, "");
  case CMM_MO_FS_CONV: return LLVMBuildFPToSI(b, x, to_int, "");
  case CMM_MO_SS_CONV: return w2 > w ? LLVMBuildSExt(b, x, to_int, "") : lw_int_at(F, x, w2);
  case CMM_MO_UU_CONV:
  case CMM_MO_XX_CONV: return lw_int_at(F, x, w2);
  case CMM_MO_FF_CONV:
    return w2 > w ? LLVMBuildFPExt(b, x, to_float, "") : w2 < w ? LLVMBuildFPTrunc(b, x, to_float, "") : x;
  case CMM_MO_FMA_FMADD:
  case CMM_MO_FMA_FMSUB:
  case CMM_MO_FMA_FNMADD:
  case CMM_MO_FMA_FNMSUB: { /* llvm.fma, fused as GHC's backends fuse it, the signs negated */
    LLVMValueRef z = lw_expr(F, e->u.mo.args[2]);
    bool neg_xy = e->u.mo.op == CMM_MO_FMA_FNMADD || e->u.mo.op == CMM_MO_FMA_FNMSUB;
    bool neg_z = e->u.mo.op == CMM_MO_FMA_FMSUB || e->u.mo.op == CMM_MO_FMA_FNMSUB;
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef args[] = {neg_xy ? LLVMBuildFNeg(b, x, "") : x, y,
                           neg_z ? LLVMBuildFNeg(b, z, "") : z};
    return lw_llvm_intrinsic(L, "llvm.fma", &t, 1, args, 3);
  }
  default: internal_error("machop %d", e->u.mo.op);
  }
}

LLVMValueRef lw_expr(Fn *F, const CmmExpr *e) {
  Lowering *L = F->L;
  switch (e->kind) {
  case CMM_E_INT: return lw_const_int(L, e);
  case CMM_E_FLOAT: return LLVMConstReal(lw_type_of(L, e->type), e->u.f.value);
  case CMM_E_LABEL: {
    if (e->u.label.kind == CMM_LABEL_BLOCK) {
      LLVMValueRef fn = F->pi->fn[e->u.label.block];
      cmm_assert(fn);
      return LLVMConstPtrToInt(fn, L->i64);
    }
    return lw_label_word(L, e->u.label.name, e->u.label.offset);
  }
  case CMM_E_LABEL_DIFF: return lw_static_lit(L, e);
  case CMM_E_LOAD: {
    LLVMValueRef v = LLVMBuildLoad2(L->b, lw_type_of(L, e->type), address(F, e->u.load.addr), "");
    if (e->u.load.unaligned) LLVMSetAlignment(v, 1); /* I64^[e] (GHC 9.4) */
    if (e->u.load.relaxed) { /* I64![e] (GHC 9.10): as GHC's LLVM backend, monotonic */
      LLVMSetOrdering(v, LLVMAtomicOrderingMonotonic);
      LLVMSetAlignment(v, e->type.width / 8);
    }
    return v;
  }
  case CMM_E_GLOBAL: return lw_read_global(F, e->u.global.reg, e->loc);
  case CMM_E_LOCAL: return LLVMBuildLoad2(L->b, lw_type_of(L, e->type), local_slot(F, e), "");
  case CMM_E_REGOFF: {
    LLVMValueRef r = lw_expr(F, e->u.regoff.reg);
    return LLVMBuildAdd(L->b, r, LLVMConstInt(LLVMTypeOf(r), (uint64_t)e->u.regoff.offset, 1), "");
  }
  case CMM_E_MACHOP: return machop(F, e);
  default: internal_error("expr kind %d", e->kind);
  }
}

void lw_assign(Fn *F, const CmmExpr *lhs, LLVMValueRef v) {
  if (lhs->kind == CMM_E_GLOBAL) write_global(F, lhs->u.global.reg, v, lhs->loc);
  else LLVMBuildStore(F->L->b, v, local_slot(F, lhs));
}

/* ---- statements ------------------------------------------------------------------ */

/* A value into a result register, at the register's width. */
void lw_assign_result(Fn *F, const CmmExpr *reg, LLVMValueRef v) {
  LLVMTypeRef want = lw_type_of(F->L, reg->type);
  if (LLVMGetTypeKind(want) == LLVMIntegerTypeKind && LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMIntegerTypeKind)
    v = lw_int_at(F, v, LLVMGetIntTypeWidth(want));
  lw_assign(F, reg, v);
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
    args[s] = live[s] ? LLVMBuildLoad2(L->b, lw_param_type(L, s), F->slot[s], "")
                      : LLVMGetUndef(lw_param_type(L, s));
  LLVMValueRef call = LLVMBuildCall2(L->b, L->fn_type, target, args, NPARAMS, "");
  LLVMSetInstructionCallConv(call, LLVMGHCCallConv);
  LLVMSetTailCallKind(call, LLVMTailCallKindMustTail);
  LLVMBuildRetVoid(L->b);
}

static LLVMValueRef call_target(Fn *F, const CmmExpr *t) {
  if (t->kind == CMM_E_LABEL && t->u.label.offset == 0)
    return t->u.label.kind == CMM_LABEL_BLOCK ? F->pi->fn[t->u.label.block]
                                              : lw_label_ref(F->L, t->u.label.name);
  return address(F, t);
}

/* Note [Foreign calls]: the dump gives neither a C function's prototype nor whether it
 * is variadic, so a foreign call uses a variadic prototype with no fixed parameters.  On
 * x86-64 System V this passes every argument where a prototyped call would, and also
 * sets %al, which variadic callees such as printf need for floating-point arguments. */
static void ccall(Fn *F, const CmmStmt *s) {
  Lowering *L = F->L;
  if (s->u.ccall.nresults > 1)
    lw_fail_at(L, s->loc, "a foreign call with %u results is not supported", s->u.ccall.nresults);
  LLVMValueRef *args = arena_alloc(L->a, (s->u.ccall.nargs + 1) * sizeof *args);
  for (uint32_t i = 0; i < s->u.ccall.nargs; i++) args[i] = lw_expr(F, s->u.ccall.args[i]);
  LLVMTypeRef ret = s->u.ccall.nresults ? lw_type_of(L, s->u.ccall.results[0]->type) : L->void_t;
  LLVMTypeRef ft = LLVMFunctionType(ret, NULL, 0, /*IsVarArg=*/1);
  LLVMValueRef r = LLVMBuildCall2(L->b, ft, call_target(F, s->u.ccall.target), args,
                                  s->u.ccall.nargs, "");
  if (s->u.ccall.nresults) lw_assign(F, s->u.ccall.results[0], r);
  if (s->u.ccall.never_returns) {
    LLVMBuildUnreachable(L->b);
    LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->ctx, F->fn, "dead"));
  }
}

/* ---- blocks and functions ------------------------------------------------------- */

typedef VEC(uint32_t) Worklist;

/* Block k after its first tick: where an edge goes whose dynamic stack's top is that
 * tick already (Note [A tick its loop repeats] in ticks.c). */
static LLVMBasicBlockRef after_tick(Fn *F, uint32_t k) {
  if (!F->after_tick[k])
    F->after_tick[k] = LLVMAppendBasicBlockInContext(
        F->L->ctx, F->fn, arena_printf(F->L->a, "%s.after_tick", F->proc->blocks[k].label));
  return F->after_tick[k];
}

/* The basic block a branch to Cmm block k goes to: k's own block in this function, made
 * on first use and queued, or, for another proc point, a block that jumps to it; past
 * k's first tick where the branch may skip it. */
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
  if (F->cur != NO_BLOCK && tk_repeated(&F->repeats, F->cur, k)) return after_tick(F, k);
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
    LLVMValueRef c = truth(F, lw_expr(F, s->u.if_.cond));
    LLVMValueRef br = LLVMBuildCondBr(L->b, c, target(F, todo, s->u.if_.then_.index),
                                      target(F, todo, s->u.if_.else_.index));
    set_weights(L, br, s->u.if_.likely);
    return;
  }
  case CMM_S_SWITCH: {
    LLVMValueRef x = lw_expr(F, s->u.sw.scrut);
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
          lw_fail_at(L, c->target.loc, "case value %s%llu appears twice in this switch (at %u bits)",
                  c->values[j].neg ? "-" : "", (unsigned long long)c->values[j].mag,
                  LLVMGetIntTypeWidth(t));
        LLVMAddCase(sw, v, dest);
      }
    }
    return;
  }
  case CMM_S_CALL:
    if (tk_returns(s)) lw_call_intrinsic(F, LW_RET, NULL, 0);
    jump(F, call_target(F, s->u.call.target), s->u.call.regs, s->u.call.nregs);
    return;
  default: internal_error("terminator %d", s->kind);
  }
}

static void block(Fn *F, Worklist *todo, uint32_t k) {
  Lowering *L = F->L;
  const CmmBlock *blk = &F->proc->blocks[k];
  LLVMPositionBuilderAtEnd(L->b, F->bb[k]);
  F->cur = k;
  const ScopeNode *node = scopes_block_node(F->tree, F->decl, k);
  F->scope = dw_scope(L->dw, &F->dwf, node, L->a);
  /* Note [Where a block's line starts]: at GHC's note for the scope (the first from the
   * main file, usually the whole binding), not at the most specific one: that keeps
   * every line GHC's own -g object has (bench/line-tables.sh).  A tick inside the
   * current note then moves the location in, for code after it. */
  const CmmSrcNote *note = node->first;
  LLVMSetCurrentDebugLocation2(L->b, dw_location(L->dw, &F->dwf, F->scope, note));
  if (k == F->pp && tk_ret_on_entry(k, F->pi->continuation)) lw_call_intrinsic(F, LW_RET, NULL, 0);
  int64_t entry_sp = TK_UNKNOWN; /* the entry Sp's offset from Sp here (tk_track_sp) */
  for (uint32_t i = 0; i < blk->nstmts; i++) {
    const CmmStmt *s = &blk->stmts[i];
    tk_track_sp(s, &entry_sp);
    switch (s->kind) {
    case CMM_S_TICK: /* finer than the block's note: code after a tick within it */
      if (!note || dw_note_within(note, &s->u.tick)) {
        note = &s->u.tick;
        LLVMSetCurrentDebugLocation2(L->b, dw_location(L->dw, &F->dwf, F->scope, note));
      }
      if (tk_ticks(&F->ticks, k, &s->u.tick))
        lw_call_intrinsic(F, LW_TICK, &s->u.tick, tk_wm_offset(&F->pi->frames, k, entry_sp));
      if (s == F->repeats.first[k].tick) { /* the edges that skip it go on from here */
        LLVMBuildBr(L->b, after_tick(F, k));
        LLVMPositionBuilderAtEnd(L->b, F->after_tick[k]);
      }
      break;
    case CMM_S_COMMENT:
    case CMM_S_UNWIND: break;
    case CMM_S_ASSIGN:
      lw_assign(F, s->u.assign.lhs, lw_expr(F, s->u.assign.rhs));
      if (tk_pops(s)) /* what is below the continuation this code returns to is done */
        lw_call_intrinsic(F, LW_POP, NULL, tk_wm_offset(&F->pi->frames, k, entry_sp));
      break;
    case CMM_S_STORE: {
      LLVMValueRef st = LLVMBuildStore(L->b, lw_expr(F, s->u.store.rhs), address(F, s->u.store.addr));
      if (s->u.store.unaligned) LLVMSetAlignment(st, 1); /* I64^[e] = v; (GHC 9.4) */
      break;
    }
    case CMM_S_CCALL: ccall(F, s); break;
    case CMM_S_PRIMCALL: lw_primcall(F, s); break;
    default: terminator(F, todo, s); break;
    }
  }
}

static void function(Lowering *L, const CmmProc *p, const ProcInfo *pi, const ScopeTree *tree,
                     uint32_t decl, uint32_t k) {
  Fn F = {.L = L, .proc = p, .pi = pi, .pp = k, .fn = pi->fn[k], .tree = tree, .decl = decl};
  F.bb = arena_alloc(L->a, p->nblocks * sizeof *F.bb);
  F.jump = arena_alloc(L->a, p->nblocks * sizeof *F.jump);
  F.after_tick = arena_alloc(L->a, p->nblocks * sizeof *F.after_tick);
  F.cur = NO_BLOCK;
  F.ticks = (TkFnTicks){L->plan, L->o->ticks, tk_own_note(L->plan, p, tree, decl, k, pi->pp, L->a),
                        pi->definitions};
  F.repeats = tk_repeats(p, &pi->frames, k, pi->pp, &F.ticks, L->a);
  strmap_init(&F.locals, L->a, 16);

  const CmmInfoTable *it = table_of(p, k);
  const char *name = k == 0 ? pi->name : arena_printf(L->a, "%s.%s", pi->name, p->blocks[k].label);
  LLVMAddAttributeAtIndex(F.fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(L->ctx, STROBE_ATTR_NAME, STROBE_ATTR_LEN(STROBE_ATTR_NAME),
                                                    name, strlen(name)));
  dw_function(L->dw, &F.dwf, F.fn, name, LLVMGetLinkage(F.fn) == LLVMInternalLinkage,
              scopes_block_node(tree, decl, k), L->a);
  if (it) lw_prefix_data(L, p, it, F.fn);

  /* The entry block: a slot per pinned register, then a branch to the proc point. */
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(L->ctx, F.fn, "entry");
  LLVMPositionBuilderAtEnd(L->b, entry);
  LLVMSetCurrentDebugLocation2(L->b, dw_location(L->dw, &F.dwf, F.dwf.sp, NULL));
  for (int s = 0; s < NPARAMS; s++) {
    F.slot[s] = LLVMBuildAlloca(L->b, lw_param_type(L, s), param_names[s]);
    LLVMBuildStore(L->b, LLVMGetParam(F.fn, (unsigned)s), F.slot[s]);
  }
  Worklist todo = {0};
  LLVMValueRef br = LLVMBuildBr(L->b, target(&F, &todo, k));
  F.alloca_at = L->alloca_at; /* the Lowering's (Note [Unwinding]) */
  LLVMPositionBuilderBefore(F.alloca_at, br);
  for (uint32_t i = 0; i < todo.n; i++) block(&F, &todo, todo.v[i]);
  dw_function_done(L->dw, &F.dwf);
}

LLVMValueRef lw_new_function(Lowering *L) {
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

/* A continuation or thunk is named after the binding the ticks stage found for it
 * (tk_plan): a -fllvm continuation (`_c1JV`) as the native pipeline's split names it,
 * after that code (`Main.fact.c1JV`), and its ticks, like a thunk's, count as that
 * function's. */
static void find_binding(Lowering *L, const CmmProc *p, ProcInfo *pi, const TkProc *tp) {
  const CmmProc *q = tp->binding;
  if (!q) return;
  const CmmInfoTable *t = table_of(q, 0);
  pi->function = lw_haskell_name(L->a, t ? t->label : q->label, L->module);
  if (pi->continuation) pi->name = arena_printf(L->a, "%s.%s", pi->function, p->label + 1);
}

static ProcInfo *declare_proc(Lowering *L, const CmmProc *p, uint32_t g, uint32_t i) {
  ProcInfo *pi = arena_alloc(L->a, sizeof *pi);
  pi->pp = proc_points(L, p);
  pi->fn = arena_alloc(L->a, p->nblocks * sizeof *pi->fn);
  const CmmInfoTable *entry_table = table_of(p, 0);
  pi->name = pi->function =
      lw_haskell_name(L->a, entry_table ? entry_table->label : p->label, L->module);
  pi->continuation = tk_proc(L->plan, g, i)->continuation;
  pi->frames = tk_frames(p, L->a);
  pi->definitions = tk_definition_blocks(p, L->a);
  for (uint32_t k = 0; k < p->nblocks; k++) {
    if (!pi->pp[k]) continue;
    const CmmInfoTable *it = table_of(p, k);
    const char *label = it ? it->label
                        : k == 0 ? p->label
                                 : arena_printf(L->a, "%s_%s", p->label, p->blocks[k].label);
    pi->fn[k] = lw_new_function(L);
    lw_name_definition(L, it ? it->loc : p->blocks[k].loc, label, pi->fn[k]);
    lw_define(L, label, pi->fn[k]);
  }
  if (entry_table) lw_define(L, p->label, pi->fn[0]); /* `X_entry` is the code of `X_info` */
  return pi;
}

/* ---- errors ------------------------------------------------------------------------ */

/* Note [Unwinding]: a user error found while lowering (an unsupported statement, a
 * symbol defined twice, an info table that cannot be laid out) is reported by
 * lw_fail_at, the only longjmp of the lowering, to the setjmp of lw_add_file, the only
 * landing.  Nothing between the two owns anything that unwinding would leak: every node
 * is in the Lowering's arena, and the builders are the Lowering's (a Fn borrows
 * L->alloca_at rather than making its own).  unwound() leaves them positioned nowhere,
 * and the Lowering failed: lw_finish then returns NULL. */
_Noreturn void lw_fail_at(Lowering *L, CmmLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(L->d, L->f->src, loc, fmt, ap);
  va_end(ap);
  longjmp(L->fail, 1);
}

static bool unwound(Lowering *L) {
  LLVMClearInsertionPosition(L->b);
  LLVMClearInsertionPosition(L->alloca_at);
  LLVMSetCurrentDebugLocation2(L->b, NULL);
  L->failed = true;
  return false;
}

/* ---- files, continued ---------------------------------------------------------------- */

bool lw_add_file(Lowering *L, const CmmFile *f, ScopeTree *const *trees, const TkPlan *plan) {
  L->f = f;
  L->module = file_module(L, f);
  L->plan = plan;
  strmap_init(&L->defs, L->a, 256);
  L->def.n = 0;
  lw_info_ctx_init(&L->info, f);
  if (setjmp(L->fail)) return unwound(L); /* Note [Unwinding] */
  /* First every definition, so that any label can refer to any other; then bodies. */
  ProcInfo ***infos = arena_alloc(L->a, (f->ngroups ? f->ngroups : 1) * sizeof *infos);
  for (uint32_t g = 0; g < f->ngroups; g++) {
    const CmmGroup *gr = &f->groups[g];
    infos[g] = arena_alloc(L->a, (gr->ndecls ? gr->ndecls : 1) * sizeof **infos);
    for (uint32_t i = 0; i < gr->ndecls; i++) {
      const CmmDecl *d = &gr->decls[i];
      if (d->kind == CMM_DECL_PROC) infos[g][i] = declare_proc(L, &d->u.proc, g, i);
      else lw_declare_data(L, &d->u.data);
    }
  }
  for (uint32_t g = 0; g < f->ngroups; g++) {
    const CmmGroup *gr = &f->groups[g];
    const ScopeTree *tree = trees[g];
    for (uint32_t i = 0; i < gr->ndecls; i++) {
      const CmmDecl *d = &gr->decls[i];
      if (d->kind == CMM_DECL_DATA) {
        const CmmData *dt = &d->u.data;
        LLVMSetInitializer(lw_label_ref(L, dt->label), lw_statics_const(L, dt->statics, dt->nstatics));
        continue;
      }
      const CmmProc *p = &d->u.proc;
      find_binding(L, p, infos[g][i], tk_proc(plan, g, i));
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

Lowering *lw_new(LLVMContextRef ctx, const char *module_name, const LowerOptions *o, Ticks *ticks,
                 Diag *d) {
  Lowering *L = calloc(1, sizeof *L);
  if (!L) internal_error("out of memory");
  L->ctx = ctx;
  L->o = o;
  L->d = d;
  L->ticks = ticks;
  L->a = arena_new();
  L->m = LLVMModuleCreateWithNameInContext(module_name, ctx);
  L->b = LLVMCreateBuilderInContext(ctx);
  L->alloca_at = LLVMCreateBuilderInContext(ctx);
  strmap_init(&L->symbols, L->a, 1024);
  strmap_init(&L->strings, L->a, 64);
  L->i1 = LLVMInt1TypeInContext(ctx);
  L->i8 = LLVMInt8TypeInContext(ctx);
  L->i32 = LLVMInt32TypeInContext(ctx);
  L->i64 = LLVMInt64TypeInContext(ctx);
  L->f32 = LLVMFloatTypeInContext(ctx);
  L->f64 = LLVMDoubleTypeInContext(ctx);
  L->ptr = LLVMPointerTypeInContext(ctx, 0);
  L->void_t = LLVMVoidTypeInContext(ctx);
  LLVMTypeRef params[NPARAMS];
  for (int s = 0; s < NPARAMS; s++) params[s] = lw_param_type(L, s);
  L->fn_type = LLVMFunctionType(L->void_t, params, NPARAMS, 0);
  L->desc_type = strobe_desc_llvm_type(ctx);
  /* The compile unit names the module; relative note files resolve from the cwd. */
  char cwd[4096];
  L->dw = dw_new(L->m, o->dwarf_haskell, o->dwarf_version, module_name, getcwd(cwd, sizeof cwd) ? cwd : ".");
  return L;
}

LLVMModuleRef lw_finish(Lowering *L) {
  if (L->failed) return NULL;
  if (L->o->entry && !lw_entry_glue(L)) return NULL;
  lw_set_parents(L);
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
