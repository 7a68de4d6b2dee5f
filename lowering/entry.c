/* entry.c — the standalone --entry glue (docs/standalone.md; docs/design.md, "The
 * runtime"). */
#include "lower_internal.h"

#include <string.h>

/* Note [Standalone glue]: with --entry=L strobec adds the stop frame, a ghccc function
 * with a return-point info table that saves R1 and returns, and `strobe_entry`, a C
 * function that pushes the stop frame and calls L.  Every Cmm jump is a musttail call,
 * so the stop frame's `ret` comes straight back to strobe_entry (docs/standalone.md). */
bool lw_entry_glue(Lowering *L) {
  if (!L->entry_fn) {
    diag_tool_error(L->d, "--entry=%s: no procedure or info table of that name", L->o->entry);
    return false;
  }
  LLVMBuilderRef b = L->b;
  LLVMValueRef stop = lw_new_function(L);
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
#define FIELD(reg) LLVMBuildGEP2(b, L->i8, rt, (LLVMValueRef[]){lw_word(L, cmm_global_regs[reg].offset)}, 1, "")
  LLVMValueRef sp = LLVMBuildLoad2(b, L->ptr, FIELD(CMM_REG_SP), "sp");
  LLVMBuildStore(b, stop, sp);
  LLVMValueRef args[NPARAMS];
  for (int s = 0; s < NPARAMS; s++) args[s] = LLVMGetUndef(lw_param_type(L, s));
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
  return true;
}
