/* llvm_types.h — the ABI's records as LLVM sees them, from intrinsics/tickdesc.def and
 * intrinsics/registry.def: the compiler's side (the lowering and the plugin; not installed).
 *
 * The lowering builds each tick descriptor as a constant of strobe_desc_llvm_type, one
 * operand per row of tickdesc.def, in its order; the plugin reads the operands back by
 * the same indices.  The plugin declares the thread's head with strobe_head_llvm_type.
 * The C structs (abi.h) expand the same rows, so each LLVM struct's layout is the C
 * one: i32 is uint32_t, i64 uint64_t, ptr any pointer, and no row needs padding that
 * LLVM would not also insert (the offsets are pinned there). */
#ifndef STROBE_ABI_LLVM_TYPES_H
#define STROBE_ABI_LLVM_TYPES_H

#include <llvm-c/Core.h>

#include "registry.def"

/* The index of each field in the LLVM struct, and how many there are. */
enum {
#define STROBE_DESC_FIELD(id, name, ctype, llvm, offset) STROBE_DESC_IDX_##id,
#include "tickdesc.def"
#undef STROBE_DESC_FIELD
  STROBE_DESC_NFIELDS
};

#define STROBE_LLVM_I32(ctx) LLVMInt32TypeInContext(ctx)
#define STROBE_LLVM_I64(ctx) LLVMInt64TypeInContext(ctx)
#define STROBE_LLVM_PTR(ctx) LLVMPointerTypeInContext(ctx, 0)

/* A new named struct type %StrobeTickDesc in ctx (one per module the lowering builds). */
static inline LLVMTypeRef strobe_desc_llvm_type(LLVMContextRef ctx) {
  LLVMTypeRef fields[STROBE_DESC_NFIELDS] = {
#define STROBE_DESC_FIELD(id, name, ctype, llvm, offset) STROBE_LLVM_##llvm(ctx),
#include "tickdesc.def"
#undef STROBE_DESC_FIELD
  };
  LLVMTypeRef t = LLVMStructCreateNamed(ctx, "StrobeTickDesc");
  LLVMStructSetBody(t, fields, STROBE_DESC_NFIELDS, 0);
  return t;
}

/* The literal struct of StrobeDynStackHead's fields. */
static inline LLVMTypeRef strobe_head_llvm_type(LLVMContextRef ctx) {
#define STROBE_HEAD_LLVM_FIELD(type, name, ctype, offset, llvm) STROBE_LLVM_##llvm(ctx),
  LLVMTypeRef fields[] = {STROBE_DYNSTACK_HEAD_FIELDS(STROBE_HEAD_LLVM_FIELD)};
#undef STROBE_HEAD_LLVM_FIELD
  return LLVMStructTypeInContext(ctx, fields, sizeof fields / sizeof *fields, 0);
}

#endif
