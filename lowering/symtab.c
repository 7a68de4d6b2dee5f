/* symtab.c — the module's symbols: which label is which LLVM value, definitions
 * replacing earlier declarations, and linkage (docs/design.md, "Lowering").  The
 * spelling of a symbol and whether GHC makes it global are symbols.c's (lw_resolve). */
#include "lower_internal.h"

#include <string.h>

/* The address of a label: this file's definition, or an external declaration. */
LLVMValueRef lw_label_ref(Lowering *L, const char *label) {
  uint32_t i;
  if (strmap_get(&L->defs, label, &i)) return L->def.v[i];
  LwSymbol s;
  const char *why;
  if (!lw_resolve(L->o->symbols, L->a, label, &s, &why))
    lw_fail_at(L, lw_label_loc(L->f->src, label), "%s", why);
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

/* From now on, lw_label_ref(label) in this file is v. */
LLVMValueRef lw_define(Lowering *L, const char *label, LLVMValueRef v) {
  strmap_put(&L->defs, L->a, label, L->def.n, NULL);
  vec_push(L->a, &L->def, v);
  return v;
}

/* Gives v the symbol of label, taking the place of any declaration of it made so far
 * (another input file may have used the label before this one defines it). */
void lw_name_definition(Lowering *L, CmmLoc loc, const char *label, LLVMValueRef v) {
  LwSymbol s;
  const char *why;
  if (!lw_resolve(L->o->symbols, L->a, label, &s, &why)) lw_fail_at(L, loc, "%s", why);
  const char *sym = s.symbol;
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
  LLVMSetLinkage(v, linkage_of(&s));
}
