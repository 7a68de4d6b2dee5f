/* debuginfo.c — Haskell source locations as DWARF (docs/design.md, "Tick scopes and
 * source notes").
 *
 * Note [DWARF language]: the compile unit says C unless --dwarf-language=haskell.  lldb
 * 22 has no type system for DW_LANG_Haskell: it makes no Function objects for such
 * code, so `b Main.fact` fails and every frame warns.  With a C language tag and no
 * linkage name, `bt` prints `Main.fact at Fact.hs:15:10` and `b Main.fact` works.
 */
#include "debuginfo.h"

#include <stdlib.h>
#include <string.h>

#include "span.h"

struct DebugInfo {
  LLVMModuleRef m;
  LLVMContextRef ctx;
  LLVMDIBuilderRef dib;
  LLVMMetadataRef cu, cu_file, subroutine_type;
  const char *dir;
  Arena *a;
  StrMap files; /* file name -> index into file_md */
  VEC(LLVMMetadataRef) file_md;
};

static LLVMMetadataRef add_file(DebugInfo *dw, const char *name, const char *dir) {
  LLVMMetadataRef md = LLVMDIBuilderCreateFile(dw->dib, name, strlen(name), dir, strlen(dir));
  strmap_put(&dw->files, dw->a, arena_strndup(dw->a, name, strlen(name)), dw->file_md.n, NULL);
  vec_push(dw->a, &dw->file_md, md);
  return md;
}

static LLVMMetadataRef file_of(DebugInfo *dw, const char *name) {
  uint32_t i;
  if (strmap_get(&dw->files, name, &i)) return dw->file_md.v[i];
  return add_file(dw, name, name[0] == '/' ? "" : dw->dir);
}

DebugInfo *dw_new(LLVMModuleRef m, bool haskell, unsigned dwarf_version, const char *cu_file,
                  const char *dir) {
  DebugInfo *dw = calloc(1, sizeof *dw);
  if (!dw) internal_error("out of memory");
  dw->m = m;
  dw->ctx = LLVMGetModuleContext(m);
  dw->dib = LLVMCreateDIBuilder(m);
  dw->a = arena_new();
  dw->dir = arena_strndup(dw->a, dir, strlen(dir));
  strmap_init(&dw->files, dw->a, 8);
  /* The unit's directory is where the compiler ran, as GHC's DW_AT_comp_dir is, also
   * when its file name is absolute. */
  dw->cu_file = add_file(dw, cu_file, dw->dir);
  static const char producer[] = "strobe";
  dw->cu = LLVMDIBuilderCreateCompileUnit(
      dw->dib, haskell ? LLVMDWARFSourceLanguageHaskell : LLVMDWARFSourceLanguageC, dw->cu_file,
      producer, sizeof producer - 1, /*isOptimized=*/0, "", 0, /*RuntimeVer=*/0, "", 0,
      LLVMDWARFEmissionFull, /*DWOId=*/0, /*SplitDebugInlining=*/0,
      /*DebugInfoForProfiling=*/0, "", 0, "", 0);
  dw->subroutine_type = LLVMDIBuilderCreateSubroutineType(dw->dib, dw->cu_file, NULL, 0, 0);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(dw->ctx);
  LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                    LLVMValueAsMetadata(LLVMConstInt(i32, LLVMDebugMetadataVersion(), 0)));
  /* 4 unless asked: bookworm's valgrind 3.19 gives up on the DWARF 5 forms LLVM emits
   * ("unhandled dwarf2 abbrev form code 0x25"), and gdb and perf read 4 everywhere. */
  if (!dwarf_version) dwarf_version = 4;
  cmm_assert(dwarf_version == 4 || dwarf_version == 5);
  LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                    LLVMValueAsMetadata(LLVMConstInt(i32, dwarf_version, 0)));
  return dw;
}

void dw_finish(DebugInfo *dw) { LLVMDIBuilderFinalize(dw->dib); }

void dw_free(DebugInfo *dw) {
  if (!dw) return;
  LLVMDisposeDIBuilder(dw->dib);
  arena_free(dw->a);
  free(dw);
}

bool dw_note_within(const CmmSrcNote *a, const CmmSrcNote *b) {
  return strcmp(a->file, b->file) == 0 && strobe_span_contains(STROBE_SPAN_OF(a), STROBE_SPAN_OF(b));
}

void dw_function(DebugInfo *dw, DwFunction *f, LLVMValueRef fn, const char *name, bool local,
                 const ScopeNode *root, Arena *a) {
  const CmmSrcNote *note = root ? root->first : NULL;
  LLVMMetadataRef file = note ? file_of(dw, note->file) : dw->cu_file;
  unsigned line = note ? note->line1 : 0;
  f->root = root;
  f->fallback = note;
  f->sp = LLVMDIBuilderCreateFunction(dw->dib, file, name, strlen(name), "", 0, file, line,
                                      dw->subroutine_type, local,
                                      /*IsDefinition=*/1, line, LLVMDIFlagZero,
                                      /*IsOptimized=*/0);
  LLVMSetSubprogram(fn, f->sp);
  strmap_init(&f->blocks, a, 16);
  f->lexical.n = 0;
}

/* The lexical block of node n, made on first use: nested under its parent's if the
 * parent lies below the function's entry scope, else directly in the subprogram. */
LLVMMetadataRef dw_scope(DebugInfo *dw, DwFunction *f, const ScopeNode *n, Arena *a) {
  if (!n || n == f->root || !n->first) return f->sp;
  uint32_t i;
  if (strmap_get(&f->blocks, n->text, &i)) return f->lexical.v[i];
  const ScopeNode *up = n->parent;
  while (up && up != f->root) up = up->parent;
  LLVMMetadataRef parent = up ? dw_scope(dw, f, n->parent, a) : f->sp;
  LLVMMetadataRef lb = LLVMDIBuilderCreateLexicalBlock(dw->dib, parent, file_of(dw, n->first->file),
                                                       n->first->line1, n->first->col1);
  strmap_put(&f->blocks, a, n->text, f->lexical.n, NULL);
  vec_push(a, &f->lexical, lb);
  return lb;
}

LLVMMetadataRef dw_location(DebugInfo *dw, DwFunction *f, LLVMMetadataRef scope,
                            const CmmSrcNote *note) {
  if (!note) note = f->fallback;
  return LLVMDIBuilderCreateDebugLocation(dw->ctx, note ? note->line1 : 0, note ? note->col1 : 0,
                                          scope, NULL);
}

void dw_function_done(DebugInfo *dw, DwFunction *f) {
  LLVMDIBuilderFinalizeSubprogram(dw->dib, f->sp);
}
