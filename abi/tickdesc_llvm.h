/* tickdesc_llvm.h — the tick descriptor as LLVM sees it, from abi/tickdesc.def.
 *
 * The lowering builds each descriptor as a constant of the struct type below, one
 * operand per row of the table, in its order; the plugin reads the operands back by
 * the same indices.  The C struct (strobe/dynstack.h) expands the same rows, so the
 * LLVM struct's layout is the C one: i32 is uint32_t, ptr any pointer, and no row needs
 * padding that LLVM would not also insert (the offsets are pinned there). */
#ifndef STROBE_TICKDESC_LLVM_H
#define STROBE_TICKDESC_LLVM_H

#include <llvm-c/Core.h>

/* The index of each field in the LLVM struct, and how many there are. */
enum {
#define STROBE_DESC_FIELD(id, name, ctype, llvm, offset) STROBE_DESC_IDX_##id,
#include "tickdesc.def"
#undef STROBE_DESC_FIELD
  STROBE_DESC_NFIELDS
};

#define STROBE_DESC_LLVM_I32(ctx) LLVMInt32TypeInContext(ctx)
#define STROBE_DESC_LLVM_PTR(ctx) LLVMPointerTypeInContext(ctx, 0)

/* A new named struct type %StrobeTickDesc in ctx (one per module the lowering builds). */
static inline LLVMTypeRef strobe_desc_llvm_type(LLVMContextRef ctx) {
  LLVMTypeRef fields[STROBE_DESC_NFIELDS] = {
#define STROBE_DESC_FIELD(id, name, ctype, llvm, offset) STROBE_DESC_LLVM_##llvm(ctx),
#include "tickdesc.def"
#undef STROBE_DESC_FIELD
  };
  LLVMTypeRef t = LLVMStructCreateNamed(ctx, "StrobeTickDesc");
  LLVMStructSetBody(t, fields, STROBE_DESC_NFIELDS, 0);
  return t;
}

#endif
