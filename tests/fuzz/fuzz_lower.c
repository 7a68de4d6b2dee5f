/* fuzz_lower.c — libFuzzer target for the lowering: any input the front end accepts
 * must lower to a module that LLVM's verifier accepts (lw_finish verifies; a failure is
 * an internal error, which exits and so counts as a crash).  No code generation: it is
 * LLVM's own and too slow to fuzz through.  Built with -DSTROBE_FUZZ=ON; run by
 * scripts/fuzz.sh lower. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cmm.h"
#include "lower.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  LLVMContextRef ctx = LLVMContextCreate(); /* one per input: nothing outlives it */
  CmmSource *src = cmm_source_from_memory("fuzz", (const char *)data, size);
  Diag d = {.out = NULL};
  CmmFile *f = cmm_parse(src, &d);
  if (f && cmm_infer_types(f, &d)) {
    LowerOptions o = {0};
    Ticks *ticks = tk_new();
    Lowering *L = lw_new(ctx, "fuzz", &o, ticks, &d);
    ScopeTree **trees = scopes_build_file(f, NULL, f->arena);
    if (lw_add_file(L, f, trees, tk_plan(f, trees, f->arena))) {
      tk_link(ticks);
      LLVMModuleRef m = lw_finish(L);
      if (m) LLVMDisposeModule(m);
    }
    lw_free(L);
    tk_free(ticks);
  }
  cmm_file_free(f);
  cmm_source_free(src);
  LLVMContextDispose(ctx);
  return 0;
}
