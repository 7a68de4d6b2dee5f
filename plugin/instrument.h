/* instrument.h — the strobe-instrument pass, its C core (docs/design.md, "The plugin").
 *
 * The lowering calls the pseudo-intrinsics of intrinsics.def (strobe.tick, strobe.pop,
 * strobe.ret) in every function.  This pass decides per function whether it is
 * instrumented and then rewrites each call:
 *   - in an instrumented function, into the inline fast path of strobe/dynstack.h (one
 *     thread-local cache, a compare, a branch to a cold block calling the runtime's
 *     slow path);
 *   - in any other function, into nothing (with pops_everywhere, pop and ret become the
 *     same fast-path checks as in an instrumented function; ticks still go).
 * Afterwards no call of a `strobe.*` intrinsic remains and their declarations are gone.
 *
 * A function is instrumented when its Haskell name is not in a [never] section and
 * either it carries the string attribute "strobe-instrument" (what strobec records) or
 * the options select its name.  Its Haskell name is its string attribute "strobe-name",
 * else its DISubprogram's name, else its LLVM name (the attributes: intrinsics/attributes.h).
 *
 * strobec links this file (strobe_plugin_core); StrobePlugin.so wraps it for opt-22 and
 * clang-22.  LLVM-C only; errors come back as malloc'd strings; nothing exits. */
#ifndef STROBE_PLUGIN_INSTRUMENT_H
#define STROBE_PLUGIN_INSTRUMENT_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The attributes the lowering sets and the pass reads: STROBE_ATTR_*. */
#include "attributes.h"

/* A growable list of fnmatch(3) patterns on Haskell names (`Main.fact*`). */
typedef struct SpPatterns {
  char **items;
  size_t count, capacity;
} SpPatterns;

typedef struct SpOptions {
  SpPatterns always;    /* --instrument globs and [always] entries: select a name */
  SpPatterns never;     /* [never] entries: exclude a name, whatever else selects it */
  bool pops_everywhere; /* keep pop and ret checks in functions that are not instrumented */
  bool count_ticks;     /* count every tick in the head's `ticks` (the statistics) */
  bool local_exec;      /* the code goes into the executable that links libstrobe-rt.a:
                           reach the head by local-exec TLS (else initial-exec) */
} SpOptions;

/* An empty SpOptions (selects nothing); sp_options_free releases what the adders took. */
void sp_options_init(SpOptions *o);
void sp_options_free(SpOptions *o);

/* Adds the comma-separated globs of `globs` (`Main.fact*,Data.Map.*`) to o->always;
 * empty items are skipped.  False (and *error) only if memory runs out. */
bool sp_options_add_globs(SpOptions *o, const char *globs, char **error);

/* Reads an XRay-style list file:
 *     # comment
 *     [always]
 *     fun:Main.fact*
 *     [never]
 *     fun:Main.helper
 * Blank lines and `#` comments are ignored, spaces around a line too.  An entry before
 * any section, an unknown section, an entry other than `fun:PATTERN`, or an empty
 * pattern is an error `PATH:LINE: error: ...`.  On error o keeps what came before. */
bool sp_options_parse_list(SpOptions *o, const char *path, char **error);

/* The same on text in memory; `name` is what messages call it. */
bool sp_options_parse_list_text(SpOptions *o, const char *text, const char *name,
                                char **error);

/* Whether the options select the Haskell name: in [always] or a glob, and not [never]. */
bool sp_selected(const SpOptions *o, const char *haskell_name);

/* Whether the name is in [never]. */
bool sp_excluded(const SpOptions *o, const char *haskell_name);

/* The Haskell name of function f as the pass sees it (see the top of this file), or
 * NULL if it has none; malloc'd. */
char *sp_function_name(LLVMValueRef f);

/* Records the choice of o in m: every function whose Haskell name o selects gets the
 * attribute STROBE_ATTR_INSTRUMENT, so that the pass (here, or opt's plugin reading .ll or
 * .bc) instruments it without being given o. */
void sp_mark_selected(LLVMModuleRef m, const SpOptions *o);

/* Whether the pass instruments function f under o. */
bool sp_function_instrumented(LLVMValueRef f, const SpOptions *o);

/* Whether m declares any intrinsic of intrinsics.def: whether the pass changes m. */
bool sp_module_has_intrinsics(LLVMModuleRef m);

/* The pass.  Rewrites every call of an intrinsic of intrinsics.def in m and deletes
 * their declarations.  False and *error
 * (malloc'd, `strobe-instrument: ...`) if m uses an intrinsic in a way the pass cannot
 * rewrite (a declaration of the wrong type, a use that is not a direct call) or if a
 * runtime function or the cache is already defined with another type; m is then
 * unchanged. */
bool sp_instrument_module(LLVMModuleRef m, const SpOptions *o, char **error);

#ifdef __cplusplus
}
#endif
#endif
