/* symtab.c — the module's symbols: which label is which LLVM value, definitions
 * replacing earlier declarations, and linkage (docs/design.md, "Lowering").  The
 * spelling of a symbol is symbols.c's (lw_symbol). */
#include "lower_internal.h"

#include <string.h>

/* The address of a label: this file's definition, or an external declaration. */
LLVMValueRef lw_label_ref(Lowering *L, const char *label) {
  uint32_t i;
  if (strmap_get(&L->defs, label, &i)) return L->def.v[i];
  const char *sym = lw_symbol(L->a, label);
  LLVMValueRef g = LLVMGetNamedGlobal(L->m, sym);
  if (!g) g = LLVMGetNamedFunction(L->m, sym);
  if (!g) {
    g = LLVMAddGlobal(L->m, L->i8, sym);
    LLVMSetLinkage(g, LLVMExternalLinkage);
  }
  return g;
}

/* A module-qualified label (`Main.main_info`, `:Main.main_info`) is visible to other
 * modules; the rest are this module's. */
static LLVMLinkage linkage_of(Lowering *L, const char *label) {
  return lw_label_module(L->a, label) ? LLVMExternalLinkage : LLVMInternalLinkage;
}

/* From now on, lw_label_ref(label) in this file is v. */
LLVMValueRef lw_define(Lowering *L, const char *label, LLVMValueRef v) {
  strmap_put(&L->defs, L->a, label, L->def.n, NULL);
  vec_push(L->a, &L->def, v);
  return v;
}

/* Gives v the symbol of label, taking the place of any declaration of it made so far
 * (another input file may have used the label before this one defines it). */
void lw_name_definition(Lowering *L, CmmLoc loc, const char *label, LLVMValueRef v) {
  const char *sym = lw_symbol(L->a, label);
  /* A definition has no body yet while its file is declared, so "defined" is kept here,
   * not asked of LLVM. */
  if (!strmap_put(&L->symbols, L->a, sym, 0, NULL))
    lw_fail_at(L, loc, "'%s' is defined twice (symbol '%s')", label, sym);
  LLVMValueRef old = LLVMGetNamedGlobal(L->m, sym);
  if (!old) old = LLVMGetNamedFunction(L->m, sym);
  if (old) { /* an external declaration made by an earlier use */
    LLVMReplaceAllUsesWith(old, v);
    if (LLVMIsAFunction(old)) LLVMDeleteFunction(old);
    else LLVMDeleteGlobal(old);
  }
  LLVMSetValueName2(v, sym, strlen(sym));
  LLVMSetLinkage(v, linkage_of(L, label));
}
