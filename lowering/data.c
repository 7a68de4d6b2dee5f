/* data.c — statics as LLVM constants: data sections, info tables as prefix data
 * (docs/design.md, "Lowering").  A label difference is a constant expression on the two
 * labels' addresses; an info table's words sit right before its function's code. */
#include "lower_internal.h"

#include <stdlib.h>
#include <string.h>

/* A literal as a constant.  A label difference has the width of its type: 64 bits, or
 * 32 for the SRT slot of an info table (infotable.c gives it, as GHC does). */
LLVMValueRef lw_static_lit(Lowering *L, const CmmExpr *e) {
  switch (e->kind) {
  case CMM_E_INT: return lw_const_int(L, e);
  case CMM_E_FLOAT: return LLVMConstReal(lw_type_of(L, e->type), e->u.f.value);
  case CMM_E_LABEL: return lw_label_word(L, e->u.label.name, e->u.label.offset);
  case CMM_E_LABEL_DIFF: {
    LLVMValueRef v = LLVMConstSub(lw_label_word(L, e->u.label.name, e->u.label.offset),
                                  lw_label_word(L, e->u.label.name2, 0));
    unsigned w = e->type.width ? e->type.width : 64;
    return w == 64 ? v : LLVMConstTrunc(v, LLVMIntTypeInContext(L->ctx, w));
  }
  default: lw_fail_at(L, e->loc, "expected a literal");
  }
}

/* Statics as a packed struct: one field per static. */
LLVMValueRef lw_statics_const(Lowering *L, const CmmStatic *st, uint32_t n) {
  LLVMValueRef *fields = arena_alloc(L->a, (n ? n : 1) * sizeof *fields);
  for (uint32_t i = 0; i < n; i++) {
    switch (st[i].kind) {
    case CMM_STATIC_LIT: fields[i] = lw_static_lit(L, st[i].lit); break;
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
    return lw_type_of(L, st->lit->type);
  case CMM_STATIC_STRING: return LLVMArrayType2(L->i8, st->len + 1);
  default: return LLVMArrayType2(L->i8, st->len);
  }
}

LLVMTypeRef lw_statics_type(Lowering *L, const CmmStatic *st, uint32_t n) {
  LLVMTypeRef *fields = arena_alloc(L->a, (n ? n : 1) * sizeof *fields);
  for (uint32_t i = 0; i < n; i++) fields[i] = static_type(L, &st[i]);
  return LLVMStructTypeInContext(L->ctx, fields, n, 1);
}

/* The words of an info table as prefix data: the table sits right before the code.
 * Data a symbolic table refers to (a constructor's description) becomes local globals
 * first, so that the words can refer to them.  Local with a name, as the string of a
 * raw table's dump is: an object split into parts (split.c) then has the same symbols
 * as the whole one. */
void lw_prefix_data(Lowering *L, const CmmProc *p, const CmmInfoTable *it, LLVMValueRef fn) {
  CmmStatic *st;
  uint32_t n;
  char *why = NULL;
  if (!lw_info_table_words(p, it, L->a, &st, &n, &why, &L->info)) {
    const char *text = why ? arena_strndup(L->a, why, strlen(why)) : "out of memory";
    free(why);
    lw_fail_at(L, it->loc, "cannot lay out info table '%s': %s", it->label, text);
  }
  for (uint32_t i = 0; i < L->info.naux; i++) {
    const LwInfoAux *x = &L->info.aux[i];
    LLVMValueRef g = LLVMAddGlobal(L->m, lw_statics_type(L, x->statics, x->nstatics),
                                   lw_symbol(L->a, x->label));
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetAlignment(g, strcmp(x->section, "cstring") == 0 ? 1 : 8);
    lw_define(L, x->label, g);
    LLVMSetInitializer(g, lw_statics_const(L, x->statics, x->nstatics));
  }
  LLVMSetPrefixData(fn, lw_statics_const(L, st, n));
}

LLVMValueRef lw_declare_data(Lowering *L, const CmmData *dt) {
  LLVMValueRef g = LLVMAddGlobal(L->m, lw_statics_type(L, dt->statics, dt->nstatics), "");
  lw_name_definition(L, dt->loc, dt->label, g);
  LLVMSetAlignment(g, strcmp(dt->section, "cstring") == 0 ? 1 : 8);
  LLVMSetGlobalConstant(g, strcmp(dt->section, "data") != 0 && strcmp(dt->section, "uninitialised") != 0);
  return lw_define(L, dt->label, g);
}
