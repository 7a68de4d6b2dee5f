/* tickemit.c — the dynamic stack's intrinsic calls and the module's tick descriptors,
 * emitted as the ticks stage (ticks.c) decided them (docs/design.md, "The dynamic
 * stack").  Descriptor i of the stage is the i-th global made here; its initializer is
 * set once the stage has linked every descriptor to its parent (lw_set_parents). */
#include "lower_internal.h"

#include <string.h>

static const struct { const char *name; unsigned nargs; bool desc; } intrinsics[] = {
#define STROBE_INTRINSIC(id, name, rts, nargs, a1, a2) {name, nargs, STROBE_IS_DESC_##a1},
#define STROBE_IS_DESC_DESC true
#define STROBE_IS_DESC_SP false
#include "intrinsics.def"
#undef STROBE_INTRINSIC
};

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

/* The function a tick counts for: the binding its note belongs to where the note names
 * one of this module's (strobe's GHC plugin names the notes of the module's own source
 * as -prof names cost centres, `Main.stepB.go`: a thunk's, a worker's or a floated
 * binding's note keeps its binding's name), else the procedure's (tk_plan).  A note of
 * code GHC inlined from another module has only the name GHC kept (`mod`), and counts
 * for the code it was inlined into, as a cost centre would: the same frame, and the
 * inline fast paths' (a loop that alternated between its own notes and an inlined
 * `mod`'s would take the slow path at every tick). */
static const char *tick_function(Fn *F, const CmmSrcNote *n) {
  const char *m = F->L->module;
  size_t len = m ? strlen(m) : 0;
  const char *name = tk_note_name(F->L->plan, n);
  if (name && len && strncmp(name, m, len) == 0 && name[len] == '.') return name;
  return F->pi->function;
}

/* The constant descriptor of a tick (StrobeTickDesc), one per function, note and
 * owning binding over the module, in the section the runtime enumerates. */
static LLVMValueRef tick_desc(Fn *F, const CmmSrcNote *n) {
  Lowering *L = F->L;
  const char *function = tick_function(F, n);
  bool made;
  uint32_t i = tk_desc(L->ticks, F->pi->function, function, n, &made);
  if (!made) return L->desc.v[i].g;
  cmm_assert(i == L->desc.n);
  Desc d = {.function = string_const(L, function), .file = string_const(L, n->file)};
  LLVMValueRef f[STROBE_DESC_NFIELDS] = {
      [STROBE_DESC_IDX_KIND] = LLVMConstInt(L->i32, STROBE_TICK_SOURCE_NOTE, 0),
      [STROBE_DESC_IDX_LINE1] = LLVMConstInt(L->i32, n->line1, 0),
      [STROBE_DESC_IDX_COL1] = LLVMConstInt(L->i32, n->col1, 0),
      [STROBE_DESC_IDX_LINE2] = LLVMConstInt(L->i32, n->line2, 0),
      [STROBE_DESC_IDX_COL2] = LLVMConstInt(L->i32, n->col2, 0),
      [STROBE_DESC_IDX_FLAGS] = LLVMConstInt(L->i32, 0, 0), /* lw_set_parents */
      [STROBE_DESC_IDX_FUNCTION] = d.function,
      [STROBE_DESC_IDX_FILE] = d.file,
      [STROBE_DESC_IDX_CODE] = F->fn, /* its function, whose lines the tick's are among */
      [STROBE_DESC_IDX_PARENT] = LLVMConstPointerNull(L->ptr), /* lw_set_parents */
  };
  memcpy(d.fields, f, sizeof f);
  d.g = LLVMAddGlobal(L->m, L->desc_type, ".strobe.tick");
  LLVMSetLinkage(d.g, LLVMPrivateLinkage);
  LLVMSetGlobalConstant(d.g, 1);
  LLVMSetSection(d.g, STROBE_TICK_SECTION);
  LLVMSetAlignment(d.g, 8);
  vec_push(L->a, &L->desc, d);
  return d.g;
}

/* Each descriptor's flags and parent, as the ticks stage decided them (Note [A
 * descriptor's parent] in ticks.c). */
void lw_set_parents(Lowering *L) {
  cmm_assert(tk_count(L->ticks) == L->desc.n);
  for (uint32_t i = 0; i < L->desc.n; i++) {
    Desc *d = &L->desc.v[i];
    const TkDesc *t = tk_get(L->ticks, i);
    d->fields[STROBE_DESC_IDX_FLAGS] = LLVMConstInt(L->i32, t->nested ? STROBE_DESC_NESTED : 0, 0);
    if (t->parent != TK_NO_PARENT) d->fields[STROBE_DESC_IDX_PARENT] = L->desc.v[t->parent].g;
    LLVMSetInitializer(d->g, LLVMConstNamedStruct(L->desc_type, d->fields, STROBE_DESC_NFIELDS));
  }
}

/* A call of intrinsic id with the current Sp plus sp_offset (and a descriptor for a
 * tick, whose watermark is at that offset: Note [A tick's watermark] in ticks.c). */
void lw_call_intrinsic(Fn *F, int id, const CmmSrcNote *note, int64_t sp_offset) {
  Lowering *L = F->L;
  if (L->o->no_intrinsics) return;
  LLVMValueRef args[2];
  unsigned n = 0;
  if (intrinsics[id].desc) args[n++] = tick_desc(F, note);
  LLVMValueRef sp = lw_read_global(F, CMM_REG_SP, 0);
  args[n++] = sp_offset ? LLVMBuildAdd(L->b, sp, lw_word(L, sp_offset), "wm") : sp;
  LLVMValueRef fn = intrinsic_fn(L, id);
  LLVMBuildCall2(L->b, LLVMGlobalGetValueType(fn), fn, args, n, "");
}
