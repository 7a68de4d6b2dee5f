/* lower.h — Cmm to LLVM IR with Haskell debug info (docs/design.md, "Lowering").
 *
 *   symbols.c   labels to object symbols (z-encoding) and to Haskell names
 *   lower.c     procs to ghccc functions, split at proc points; data to globals;
 *               info tables to prefix data; the --entry glue
 *   debuginfo.c DISubprogram per function, DILexicalBlock per scope-tree node,
 *               a DILocation on every instruction
 *
 * Usage: lw_new, then lw_add_file for each parsed and typed file, then lw_finish,
 * which returns the module (verified) or NULL after reporting errors.
 */
#ifndef STROBE_LOWER_H
#define STROBE_LOWER_H

#include <llvm-c/Core.h>

#include "cmm.h"

typedef struct LowerOptions {
  const char *entry;     /* --entry=LABEL: emit strobe_entry and the stop frame */
  bool dwarf_haskell;    /* DW_LANG_Haskell instead of the default (C; see docs/lowering.md) */
  const char *main_file; /* the Haskell file preferred for notes; NULL: per input */
  bool no_intrinsics;    /* emit no strobe.* calls or descriptors (instrumentation off) */
} LowerOptions;

typedef struct Lowering Lowering;

Lowering *lw_new(LLVMContextRef ctx, const char *module_name, const LowerOptions *o, Diag *d);
/* Lowers one parsed, typed file into the module; false after reporting an error. */
bool lw_add_file(Lowering *L, const CmmFile *f);
/* Finishes debug info and glue and verifies the module.  The caller owns the module;
 * NULL (and a diagnostic) on failure. */
LLVMModuleRef lw_finish(Lowering *L);
void lw_free(Lowering *L);

/* ---- symbols.c ---------------------------------------------------------------------- */

/* The object symbol of a Cmm label: GHC's z-encoding of the module and the name, joined
 * by `_`, then the label's kind suffix (`Main.fact_info` -> `Main_fact_info`,
 * `GHC.Types.[]_closure` -> `GHCziTypes_ZMZN_closure`).  Package prefixes are not in the
 * dump, so they are not added. */
char *lw_symbol(Arena *a, const char *label);
/* The Haskell name of the code a label belongs to, for debuggers: `Main.fact_info` ->
 * `Main.fact`; `fact_rgr_info` -> `<module>.fact`; module may be NULL. */
char *lw_haskell_name(Arena *a, const char *label, const char *module);
/* The module of a module-qualified label (`Main.fact_info` -> `Main`), or NULL. */
char *lw_label_module(Arena *a, const char *label);

#endif
