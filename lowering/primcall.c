/* primcall.c — GHC's CallishMachOps (`(r) = call MO_PopCnt W64(x)`), table-driven from
 * primops.def: a row says how its op is lowered (docs/design.md, "Lowering").
 *
 *   F64, F32         the LLVM intrinsic FN overloaded at double or float (llvm.sin)
 *   LIBM64, LIBM32   the C function FN of libm (tan, tanf): LLVM has no intrinsic
 *   BITS, BITS_ZF    the LLVM intrinsic FN at the op's width on one operand (llvm.ctpop);
 *                    _ZF: with the `is zero poison` flag false (llvm.ctlz)
 *   OVERFLOW         FN = llvm.{u,s}{add,sub}.with.overflow: (result, carry or overflow)
 *   CFUN             a call of the C function FN (suspendThread), its prototype the
 *                    operands' types
 *   X64              a 64-bit operation of GHC's for 32-bit targets: FN names it in x64_ops
 *   CODE             its own case below
 */
#include "lower_internal.h"

#include <stdio.h>
#include <string.h>

enum { HOW_CODE, HOW_F64, HOW_F32, HOW_LIBM64, HOW_LIBM32, HOW_BITS, HOW_BITS_ZF, HOW_OVERFLOW,
       HOW_CFUN, HOW_X64 };
static const struct { uint8_t how, nargs; const char *fn; } lowering[CMM_NUM_PRIMOPS] = {
#define X(id, name, arg, how, fn, nargs) [CMM_PRIM_##id] = {HOW_##how, nargs, fn},
#include "primops.def"
#undef X
};

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
    lw_fail_at(L, s->loc, "%s takes %u argument%s and gives %u result%s, not %u and %u",
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
  lw_fail_at(L, s->loc, "unknown atomic operation '%s'", s->u.prim.amo);
}

/* What an X64 row's FN computes on 64-bit operands: an instruction, a comparison (whose
 * result is 0 or 1), or a conversion between the word and 64 bits (signed or not). */
static const struct { const char *name; LLVMOpcode op; LLVMIntPredicate cmp; } x64_ops[] = {
    {"add", LLVMAdd, 0},   {"sub", LLVMSub, 0},   {"mul", LLVMMul, 0},   {"sdiv", LLVMSDiv, 0},
    {"srem", LLVMSRem, 0}, {"udiv", LLVMUDiv, 0}, {"urem", LLVMURem, 0}, {"and", LLVMAnd, 0},
    {"or", LLVMOr, 0},     {"xor", LLVMXor, 0},   {"shl", LLVMShl, 0},   {"ashr", LLVMAShr, 0},
    {"lshr", LLVMLShr, 0}, {"eq", LLVMICmp, LLVMIntEQ}, {"ne", LLVMICmp, LLVMIntNE},
    {"sge", LLVMICmp, LLVMIntSGE}, {"sgt", LLVMICmp, LLVMIntSGT}, {"sle", LLVMICmp, LLVMIntSLE},
    {"slt", LLVMICmp, LLVMIntSLT}, {"uge", LLVMICmp, LLVMIntUGE}, {"ugt", LLVMICmp, LLVMIntUGT},
    {"ule", LLVMICmp, LLVMIntULE}, {"ult", LLVMICmp, LLVMIntULT},
    {"neg", LLVMSub, 0},   {"not", LLVMXor, 0},   {"sconv", LLVMSExt, 0}, {"uconv", LLVMZExt, 0},
};

static LLVMValueRef x64(Fn *F, const char *fn, LLVMValueRef *a) {
  LLVMBuilderRef b = F->L->b;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(F->L->ctx);
  size_t i = 0;
  while (strcmp(x64_ops[i].name, fn) != 0) i++; /* every FN of primops.def is there */
  switch (x64_ops[i].op) {
  case LLVMSExt: return lw_int_at(F, a[0], 64); /* the word's width is 64 here, */
  case LLVMZExt: return lw_int_at(F, a[0], 64); /* so To and From are the same */
  case LLVMICmp: return LLVMBuildZExt(b, LLVMBuildICmp(b, x64_ops[i].cmp, lw_int_at(F, a[0], 64),
                                                       lw_int_at(F, a[1], 64), ""), i64, "");
  default: break;
  }
  LLVMValueRef x = lw_int_at(F, a[0], 64);
  if (strcmp(fn, "neg") == 0) return LLVMBuildNeg(b, x, "");
  if (strcmp(fn, "not") == 0) return LLVMBuildNot(b, x, "");
  return LLVMBuildBinOp(b, x64_ops[i].op, x, lw_int_at(F, a[1], 64), "");
}

/* An atomic's LLVM ordering: GHC 9.6's, or, where the dump prints none (9.0), the
 * sequential consistency that GHC 9.0's code generators gave every atomic. */
static LLVMAtomicOrdering ordering(Lowering *L, const CmmStmt *s, bool load) {
  switch (s->u.prim.order) {
  case CMM_ORDER_RELAXED: return LLVMAtomicOrderingMonotonic;
  case CMM_ORDER_ACQUIRE:
    if (!load) lw_fail_at(L, s->loc, "an atomic write cannot have the order MemOrderAcquire");
    return LLVMAtomicOrderingAcquire;
  case CMM_ORDER_RELEASE:
    if (load) lw_fail_at(L, s->loc, "an atomic read cannot have the order MemOrderRelease");
    return LLVMAtomicOrderingRelease;
  default: return LLVMAtomicOrderingSequentiallyConsistent;
  }
}

/* The alignment argument of MO_Memcpy & co.: a power of two, else no promise (1). */
static unsigned alignment(int64_t a) {
  return a > 0 && a <= (1 << 30) && (a & (a - 1)) == 0 ? (unsigned)a : 1;
}

/* GHC's CallishMachOps: LLVM intrinsics where there is one, libm otherwise. */
void lw_primcall(Fn *F, const CmmStmt *s) {
  Lowering *L = F->L;
  LLVMBuilderRef b = L->b;
  int op = s->u.prim.op;
  unsigned w = s->u.prim.width;
  LLVMTypeRef tw = w ? LLVMIntTypeInContext(L->ctx, w) : L->i64;
  LLVMValueRef a[3] = {0};
  for (uint32_t i = 0; i < s->u.prim.nargs && i < 3; i++) a[i] = lw_expr(F, s->u.prim.args[i]);
  CmmExpr *const *res = s->u.prim.results;
  const char *name = cmm_primops[op].name;

  const char *fn = lowering[op].fn;
  switch (lowering[op].how) {
  case HOW_F64:
  case HOW_F32:
  case HOW_LIBM64:
  case HOW_LIBM32: { /* MO_F64_Sin, MO_F32_Sqrt, … */
    unsigned nargs = lowering[op].nargs;
    need(L, s, 1, nargs);
    bool f32 = lowering[op].how == HOW_F32 || lowering[op].how == HOW_LIBM32;
    LLVMTypeRef t = f32 ? L->f32 : L->f64;
    bool llvm = lowering[op].how == HOW_F64 || lowering[op].how == HOW_F32;
    lw_assign(F, res[0], llvm ? lw_llvm_intrinsic(L, fn, &t, 1, a, nargs) : libm(F, fn, t, a, nargs));
    return;
  }
  case HOW_BITS:
  case HOW_BITS_ZF: { /* MO_PopCnt, MO_Clz, … */
    need(L, s, 1, 1);
    LLVMValueRef args[2] = {lw_int_at(F, a[0], w), LLVMConstInt(L->i1, 0, 0)};
    bool zero_flag = lowering[op].how == HOW_BITS_ZF;
    lw_assign_result(F, res[0], lw_llvm_intrinsic(L, fn, &tw, 1, args, zero_flag ? 2 : 1));
    return;
  }
  case HOW_OVERFLOW: { /* (result, carry or overflow) */
    need(L, s, 2, 2);
    LLVMValueRef args[2] = {lw_int_at(F, a[0], w), lw_int_at(F, a[1], w)};
    LLVMValueRef r = lw_llvm_intrinsic(L, fn, &tw, 1, args, 2);
    lw_assign_result(F, res[0], LLVMBuildExtractValue(b, r, 0, ""));
    lw_assign_result(F, res[1], LLVMBuildZExt(b, LLVMBuildExtractValue(b, r, 1, ""), tw, ""));
    return;
  }
  case HOW_CFUN: { /* MO_SuspendThread(BaseReg, 0) is suspendThread(BaseReg, 0) */
    unsigned nargs = lowering[op].nargs;
    need(L, s, 1, nargs);
    LLVMTypeRef params[3];
    for (unsigned i = 0; i < nargs; i++) params[i] = LLVMTypeOf(a[i]);
    LLVMTypeRef ft = LLVMFunctionType(lw_type_of(L, res[0]->type), params, nargs, 0);
    LLVMValueRef f = LLVMGetNamedFunction(L->m, fn);
    if (!f) f = LLVMAddFunction(L->m, fn, ft);
    lw_assign(F, res[0], LLVMBuildCall2(b, ft, f, a, nargs, ""));
    return;
  }
  case HOW_X64:
    need(L, s, 1, lowering[op].nargs);
    lw_assign_result(F, res[0], x64(F, fn, a));
    return;
  default: break; /* HOW_CODE */
  }

  switch (op) {
  case CMM_PRIM_READ_BARRIER:
  case CMM_PRIM_ACQUIRE_FENCE:
    LLVMBuildFence(b, LLVMAtomicOrderingAcquire, 0, "");
    return;
  case CMM_PRIM_WRITE_BARRIER:
  case CMM_PRIM_RELEASE_FENCE:
    LLVMBuildFence(b, LLVMAtomicOrderingRelease, 0, "");
    return;
  case CMM_PRIM_SEQCST_FENCE:
    LLVMBuildFence(b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
    return;
  case CMM_PRIM_TOUCH:
  case CMM_PRIM_PREFETCH: return;
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
      lw_assign_result(F, res[0], LLVMBuildZExt(b, LLVMBuildNot(b, fits, ""), tw, ""));
      lw_assign_result(F, res[1], hi);
      lw_assign_result(F, res[2], lo);
    } else {
      lw_assign_result(F, res[0], hi);
      lw_assign_result(F, res[1], lo);
    }
    return;
  }
  case CMM_PRIM_U_QUOTREM:
  case CMM_PRIM_S_QUOTREM: {
    need(L, s, 2, 2);
    bool sign = op == CMM_PRIM_S_QUOTREM;
    LLVMValueRef x = lw_int_at(F, a[0], w), y = lw_int_at(F, a[1], w);
    lw_assign_result(F, res[0], sign ? LLVMBuildSDiv(b, x, y, "") : LLVMBuildUDiv(b, x, y, ""));
    lw_assign_result(F, res[1], sign ? LLVMBuildSRem(b, x, y, "") : LLVMBuildURem(b, x, y, ""));
    return;
  }
  case CMM_PRIM_U_QUOTREM2: { /* (hi, lo) / d */
    need(L, s, 2, 3);
    LLVMTypeRef t2 = LLVMIntTypeInContext(L->ctx, 2 * w);
    LLVMValueRef n = LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildZExt(b, a[0], t2, ""), LLVMConstInt(t2, w, 0), ""),
                                 LLVMBuildZExt(b, a[1], t2, ""), "");
    LLVMValueRef d = LLVMBuildZExt(b, a[2], t2, "");
    lw_assign_result(F, res[0], LLVMBuildTrunc(b, LLVMBuildUDiv(b, n, d, ""), tw, ""));
    lw_assign_result(F, res[1], LLVMBuildTrunc(b, LLVMBuildURem(b, n, d, ""), tw, ""));
    return;
  }
  case CMM_PRIM_ADD2: { /* (carry, sum) */
    need(L, s, 2, 2);
    LLVMValueRef sum = LLVMBuildAdd(b, a[0], a[1], "");
    lw_assign_result(F, res[0], LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntULT, sum, a[0], ""), tw, ""));
    lw_assign_result(F, res[1], sum);
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
    LLVMValueRef args[] = {lw_int_at(F, a[0], 64), lw_int_at(F, a[1], 64)};
    lw_assign_result(F, res[0], LLVMBuildCall2(b, ft, fn, args, 2, ""));
    return;
  }
  case CMM_PRIM_UF_CONV:
    need(L, s, 1, 1);
    lw_assign(F, res[0], LLVMBuildUIToFP(b, a[0], lw_type_of(L, res[0]->type), ""));
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
    LLVMBuildMemSet(b, LLVMBuildIntToPtr(b, a[0], L->ptr, ""), lw_int_at(F, a[1], 8), a[2],
                    alignment(s->u.prim.intarg));
    return;
  case CMM_PRIM_MEMCMP: {
    need(L, s, 1, 3);
    LLVMTypeRef params[] = {L->ptr, L->ptr, L->i64};
    LLVMTypeRef ft = LLVMFunctionType(L->i32, params, 3, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->m, "memcmp");
    if (!fn) fn = LLVMAddFunction(L->m, "memcmp", ft);
    LLVMValueRef args[] = {LLVMBuildIntToPtr(b, a[0], L->ptr, ""), LLVMBuildIntToPtr(b, a[1], L->ptr, ""), a[2]};
    lw_assign_result(F, res[0], LLVMBuildCall2(b, ft, fn, args, 3, ""));
    return;
  }
  case CMM_PRIM_ATOMIC_READ: {
    need(L, s, 1, 1);
    LLVMValueRef v = LLVMBuildLoad2(b, tw, LLVMBuildIntToPtr(b, a[0], L->ptr, ""), "");
    LLVMSetOrdering(v, ordering(L, s, true));
    LLVMSetAlignment(v, w / 8);
    lw_assign_result(F, res[0], v);
    return;
  }
  case CMM_PRIM_ATOMIC_WRITE: {
    need(L, s, 0, 2);
    LLVMValueRef st = LLVMBuildStore(b, lw_int_at(F, a[1], w), LLVMBuildIntToPtr(b, a[0], L->ptr, ""));
    LLVMSetOrdering(st, ordering(L, s, false));
    LLVMSetAlignment(st, w / 8);
    return;
  }
  case CMM_PRIM_CMPXCHG: {
    need(L, s, 1, 3);
    LLVMValueRef r = LLVMBuildAtomicCmpXchg(b, LLVMBuildIntToPtr(b, a[0], L->ptr, ""), lw_int_at(F, a[1], w),
                                            lw_int_at(F, a[2], w), LLVMAtomicOrderingSequentiallyConsistent,
                                            LLVMAtomicOrderingSequentiallyConsistent, 0);
    lw_assign_result(F, res[0], LLVMBuildExtractValue(b, r, 0, ""));
    return;
  }
  case CMM_PRIM_XCHG:
  case CMM_PRIM_ATOMIC_RMW: {
    need(L, s, 1, 2);
    LLVMAtomicRMWBinOp rmw = op == CMM_PRIM_XCHG ? LLVMAtomicRMWBinOpXchg : amo_op(L, s);
    lw_assign_result(F, res[0], LLVMBuildAtomicRMW(b, rmw, LLVMBuildIntToPtr(b, a[0], L->ptr, ""),
                                                lw_int_at(F, a[1], w), LLVMAtomicOrderingSequentiallyConsistent, 0));
    return;
  }
  default: lw_fail_at(L, s->loc, "%s is not supported yet", name);
  }
}
