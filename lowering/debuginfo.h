/* debuginfo.h — Haskell source locations as DWARF (docs/design.md, "Tick scopes and
 * source notes").
 *
 * One compile unit per module; per LLVM function a DISubprogram named with the Haskell
 * name and placed at its entry scope's best note; a DILexicalBlock per scope-tree node
 * the function has blocks in, nested as the tree nests below the function's entry scope;
 * and the location each instruction gets.
 */
#ifndef STROBE_DEBUGINFO_H
#define STROBE_DEBUGINFO_H

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "cmm.h"
#include "scopes.h"

typedef struct DebugInfo DebugInfo;

/* cu_file: the compile unit's name, the source it was compiled from; dir: the
 * directory the compiler ran in, the unit's DW_AT_comp_dir, which relative source-note
 * file names are resolved against. */
/* dwarf_version: 4 or 5, 0 for 4 (the "Dwarf Version" module flag; LLVM's default is 5). */
DebugInfo *dw_new(LLVMModuleRef m, bool haskell, unsigned dwarf_version, const char *cu_file,
                  const char *dir);
void dw_finish(DebugInfo *dw);
void dw_free(DebugInfo *dw);

typedef struct DwFunction {
  LLVMMetadataRef sp;
  const ScopeNode *root;   /* the function's entry scope */
  StrMap blocks;           /* scope text -> index + 1 into lexical, per function */
  VEC(LLVMMetadataRef) lexical;
  const CmmSrcNote *fallback; /* where instructions without a note go */
} DwFunction;

/* A DISubprogram for fn, named `name`, at its entry scope's note (line 0 if none);
 * local: the function is not visible outside its module. */
void dw_function(DebugInfo *dw, DwFunction *f, LLVMValueRef fn, const char *name, bool local,
                 const ScopeNode *root, Arena *a);
/* The lexical scope for code of scope-tree node n in function f. */
LLVMMetadataRef dw_scope(DebugInfo *dw, DwFunction *f, const ScopeNode *n, Arena *a);
/* A location at note (or at the function's fallback when note is NULL) in scope. */
LLVMMetadataRef dw_location(DebugInfo *dw, DwFunction *f, LLVMMetadataRef scope,
                            const CmmSrcNote *note);
void dw_function_done(DebugInfo *dw, DwFunction *f);

/* Whether note b lies within note a (same file, span contained). */
bool dw_note_within(const CmmSrcNote *a, const CmmSrcNote *b);

#endif
