/* lower.h — Cmm to LLVM IR with Haskell debug info (docs/design.md, "Lowering").
 *
 *   symbols.c   labels to object symbols (GHC's names: packages, z-encoding,
 *               visibility) and to Haskell names
 *   lower.c     procs to ghccc functions, split at proc points; data to globals;
 *               info tables to prefix data; the --entry glue
 *   debuginfo.c DISubprogram per function, DILexicalBlock per scope-tree node,
 *               a DILocation on every instruction
 *
 * Usage: lw_new, then lw_add_file for each parsed and typed file with its scope trees
 * (scopes_build_file) and its ticks plan (tk_plan); then tk_link on the Ticks given to
 * lw_new; then lw_finish, which returns the module (verified) or NULL after reporting
 * errors.
 */
#ifndef STROBE_LOWER_H
#define STROBE_LOWER_H

#include <llvm-c/Core.h>

#include "cmm.h"
#include "scopes.h"
#include "ticks.h"

typedef struct LowerOptions {
  const char *entry;     /* --entry=LABEL: emit strobe_entry and the stop frame */
  bool dwarf_haskell;    /* DW_LANG_Haskell instead of the default (C; see docs/lowering.md) */
  unsigned dwarf_version; /* 4 or 5; 0: 4 (docs/lowering.md) */
  bool no_intrinsics;    /* emit no strobe.* calls or descriptors (instrumentation off) */
  TkMode ticks;          /* --ticks: which source notes tick (Note [Which notes tick]) */
  const struct LwSymbols *symbols; /* --package-map and --this-unit; NULL: no map, unit main */
} LowerOptions;

typedef struct Lowering Lowering;

/* ticks: the module's descriptors, which the lowering makes as it meets ticks (the
 * caller owns it, and links it before lw_finish). */
Lowering *lw_new(LLVMContextRef ctx, const char *module_name, const LowerOptions *o, Ticks *ticks,
                 Diag *d);
/* Lowers one parsed, typed file into the module; trees[g] is the scope tree of group g
 * and plan the file's ticks plan.  False after reporting an error. */
bool lw_add_file(Lowering *L, const CmmFile *f, ScopeTree *const *trees, const TkPlan *plan);
/* Finishes debug info and glue, gives the descriptors what the (linked) ticks stage
 * decided, and verifies the module.  The caller owns the module; NULL (and a
 * diagnostic) on failure. */
LLVMModuleRef lw_finish(Lowering *L);
void lw_free(Lowering *L);

/* ---- symbols.c ---------------------------------------------------------------------- */

/* What symbols.c needs to resolve labels: the package map (module -> unit id, read once
 * per run) and the unit being compiled, which owns every module the map does not list. */
typedef struct LwSymbols LwSymbols;

LwSymbols *lw_symbols_new(const char *this_unit);
/* The GHC whose text dump the labels come from (900 for 9.0, the default; 906 for 9.6;
 * 910 for 9.10):
 * the rules that name built-in syntax and make labels local differ (symbols.c). */
void lw_symbols_set_ghc(LwSymbols *S, unsigned ghc);
/* Adds a package map's lines (`MODULE UNIT-ID`, `#` comments); false after reporting
 * the first bad line to d.  A module listed under two units stays in the map as
 * ambiguous: resolving one of its labels is then an error. */
bool lw_symbols_add_map(LwSymbols *S, const CmmSource *map, Diag *d);
size_t lw_symbols_modules(const LwSymbols *S); /* modules in the map */
/* Adds a file's `symbols` table (strobe's GHC plugin writes it): those labels then
 * resolve to the symbols it gives, with no package map.  false after reporting a label
 * that another file gave another symbol. */
bool lw_symbols_add_table(LwSymbols *S, const CmmFile *f, Diag *d);
void lw_symbols_free(LwSymbols *S);

typedef struct LwSymbol {
  const char *symbol; /* the object symbol GHC's own object uses */
  const char *module; /* the Haskell module it belongs to, or NULL (the RTS's, C's,
                         or a name internal to its module) */
  bool global;        /* visible outside the object (GHC's externallyVisibleCLabel) */
} LwSymbol;

/* Resolves a Cmm label (`GHC.Base.map_closure` -> `base_GHCziBase_map_closure` with a map
 * that puts GHC.Base in base).  S NULL: no map, unit main.  false and *why (in a) if the
 * label cannot be resolved: it names the label and the module it should be in. */
bool lw_resolve(const LwSymbols *S, Arena *a, const char *label, LwSymbol *out, const char **why);
/* lw_resolve with no map, for labels strobe makes itself (an unresolvable label keeps
 * its spelling, with the characters a symbol cannot hold z-encoded). */
char *lw_symbol(Arena *a, const char *label);
/* GHC's z-encoding of a string (`$fShow(,)` -> `zdfShowZLz2cUZR`, `(,)` -> `Z2T`). */
char *lw_zencode(Arena *a, const char *s, size_t n);
/* Where a label is first spelled in src (as a whole label), for diagnostics; 0 if not. */
CmmLoc lw_label_loc(const CmmSource *src, const char *label);

/* The Haskell name of the code a label belongs to, for debuggers: `Main.fact_info` ->
 * `Main.fact`; `fact_rgr_info` -> `<module>.fact`; module may be NULL. */
char *lw_haskell_name(Arena *a, const char *label, const char *module);
/* The module of a module-qualified label (`Main.fact_info` -> `Main`), or NULL. */
char *lw_label_module(Arena *a, const char *label);

#endif
