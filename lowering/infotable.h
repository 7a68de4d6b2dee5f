/* infotable.h — an info table as the words GHC 9.0.2 lays out for it (x86-64,
 * tables next to code, no profiling).
 *
 * -ddump-cmm prints info tables symbolically (CmmInfoTable.rep, .srt, .label) and
 * -ddump-cmm-raw prints the same tables as their words (CmmInfoTable.statics).  The
 * lowering turns words into LLVM prefix data, so it needs words for both flavours:
 * lw_info_table_words builds, from a symbolic table, exactly the statics GHC's raw dump
 * prints, and returns a raw table's own statics.
 *
 * A symbolic table can refer to data GHC emits next to the raw table (a constructor's
 * description string, a bitmap too large for one word); those come back as LwInfoAux
 * sections for the lowering to emit as private globals.  The word that refers to one is
 * a label difference `AUX-INFO`, as in the raw dump, with AUX one of these names:
 *
 *   <info label>_descr   section "cstring": the constructor description, bytes without
 *                        the NUL (GHC: `iXXXX_str`, CString; the backends add the NUL)
 *   <info label>_btm     section "readonly": a large bitmap, `const nbits;` and then the
 *                        bitmap words (GHC: `bXXXX_btm`, ReadOnlyData)
 *
 * A static function's pointer count is not printed by -ddump-cmm (GHC's SMRep printer
 * drops `N ptrs` after `static`) and GHC puts the function's SRT entries into its static
 * closure, counting them as pointers; so for `HeapRep static { Fun … }` the closure
 * `X_closure` (for the table `X_info`) is looked up in the file: LwInfoCtx.file. */
#ifndef STROBE_INFOTABLE_H
#define STROBE_INFOTABLE_H

#include "cmm.h"

/* A data section a symbolic table refers to (see above). */
typedef struct LwInfoAux {
  const char *section;  /* GHC's section type: "cstring" or "readonly" */
  const char *label;
  uint32_t nstatics;
  CmmStatic *statics;   /* cstring: one CMM_STATIC_STRING; readonly: CMM_STATIC_LITs */
} LwInfoAux;

typedef struct LwInfoCtx {
  /* in: the file the procs come from (static closures are looked up in it); may be NULL */
  const CmmFile *file;
  /* out: the sections the table of the last call refers to (nodes in the call's arena;
   * a description's bytes are the parsed file's) */
  LwInfoAux *aux;
  uint32_t naux;
  /* private: the file's data sections by label, built by the first call that needs it,
   * in that call's arena (which must therefore outlive ctx) */
  bool indexed;
  StrMap data_index;
  const CmmData **datas;
} LwInfoCtx;

/* file may be NULL (then a static function's table fails). */
void lw_info_ctx_init(LwInfoCtx *ctx, const CmmFile *file);

/* The words of it, a table of proc, as GHC's -ddump-cmm-raw prints them, in its order:
 * CMM_STATIC_LIT statics whose lit is CMM_E_INT (type I64, or I32 for `:: W32`) or
 * CMM_E_LABEL_DIFF (`X-Y`: name X, name2 Y; type I64, except the half-word SRT field,
 * I32).  Nodes come from a.
 *
 * A raw table (proc->raw) returns its own statics, except that a label difference gets
 * the width GHC gave it, which the dump does not print: I32 in the last position (the SRT
 * offset), I64 elsewhere (copies are made; the file is not changed).
 *
 * ctx may be NULL; then a table that needs it (a constructor, a large bitmap, a static
 * function) fails.  False, with *why (malloc'd) saying why, when the table's shape is
 * one GHC 9.0.2 would not lay out or one this function does not know. */
bool lw_info_table_words(const CmmProc *proc, const CmmInfoTable *it, Arena *a,
                         CmmStatic **statics, uint32_t *n, char **why, LwInfoCtx *ctx);

/* RTS constants used by the layout (rts/include/rts/storage/ClosureTypes.h, FunTypes.h,
 * InfoTables.h). */
enum {
  LW_CONSTR = 1, LW_CONSTR_1_0 = 2, LW_CONSTR_0_1 = 3, LW_CONSTR_2_0 = 4, LW_CONSTR_1_1 = 5,
  LW_CONSTR_0_2 = 6, LW_CONSTR_NOCAF = 7,
  LW_FUN = 8, LW_FUN_1_0 = 9, LW_FUN_0_1 = 10, LW_FUN_2_0 = 11, LW_FUN_1_1 = 12,
  LW_FUN_0_2 = 13, LW_FUN_STATIC = 14,
  LW_THUNK = 15, LW_THUNK_1_0 = 16, LW_THUNK_0_1 = 17, LW_THUNK_2_0 = 18, LW_THUNK_1_1 = 19,
  LW_THUNK_0_2 = 20, LW_THUNK_STATIC = 21, LW_THUNK_SELECTOR = 22,
  LW_RET_SMALL = 30, LW_RET_BIG = 31,
  LW_ARG_GEN = 0, LW_ARG_GEN_BIG = 1,
  LW_BITMAP_BITS_SHIFT = 6,                                   /* size in the low 6 bits */
  LW_MAX_SMALL_BITMAP_SIZE = CMM_WORD_WIDTH - LW_BITMAP_BITS_SHIFT, /* 58 */
};

#endif
