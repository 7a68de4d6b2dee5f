/* strobe/rt.h — libstrobe-rt, the runtime that programs built by strobe link with.
 *
 * Here: what a standalone Cmm program runs on (docs/standalone.md): main, which maps
 * the Cmm stack and the heap nursery and fills the register table; the functions such
 * a program calls; and the options read from STROBE_OPTIONS.  The dynamic stack that
 * instrumented code keeps, its registry and its reports are in strobe/dynstack.h.
 *
 * Exported names start with strobe_.  The layouts here are x86-64 only. */
#ifndef STROBE_RT_H
#define STROBE_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#define STROBE_NORETURN [[noreturn]]
#else
#define STROBE_NORETURN _Noreturn
#endif

/* ---- the capability: register table and function table --------------------------- */

typedef uint64_t StrobeWord;

/* GHC's StgRegTable (x86-64, GHC 9.0), so that compiled Cmm finds every register that
 * is not pinned to a machine register where GHC's own code looks for it.  BaseReg
 * points here.  intrinsics/globalregs.def gives the offsets; standalone.c pins them. */
typedef struct StrobeRegTable {
  StrobeWord R1, R2, R3, R4, R5, R6, R7, R8, R9, R10; /* 0 */
  float F1, F2, F3, F4, F5, F6;                       /* 80 */
  double D1, D2, D3, D4, D5, D6;                      /* 104 */
  StrobeWord XMM[6][2], YMM[6][4], ZMM[6][8];         /* 152: vector registers, unused */
  StrobeWord L1;                                      /* 824 */
  StrobeWord *Sp;    /* 832: the Cmm stack pointer; the stack grows down */
  StrobeWord *SpLim; /* 840: the lowest address Sp may reach */
  StrobeWord *Hp;    /* 848: the last word allocated */
  StrobeWord *HpLim; /* 856: the last word of the nursery */
  void *CCCS, *CurrentTSO, *Nursery, *CurrentNursery, *CurrentAlloc; /* 864..896 */
  StrobeWord HpAlloc; /* 904 */
  StrobeWord Ret;     /* 912 */
} StrobeRegTable;

/* GHC's StgFunTable: RTS entry points that compiled code reaches through BaseReg
 * (`call (stg_gc_enter_1)(R1)` jumps to I64[BaseReg - 16]).  Standalone programs use
 * none of them, so they stay NULL. */
typedef struct StrobeFunTable {
  void *EagerBlackholeInfo; /* BaseReg - 24 */
  void *GCEnter1;           /* BaseReg - 16 */
  void *GCFun;              /* BaseReg - 8 */
} StrobeFunTable;

/* As in GHC's Capability, the function table sits just below the register table:
 * &cap.r is BaseReg. */
typedef struct StrobeCapability {
  StrobeFunTable f;
  StrobeRegTable r;
} StrobeCapability;

/* ---- standalone programs ---------------------------------------------------------- */

/* Bytes of the Cmm stack kept below SpLim, above the guard page.  GHC keeps such a
 * reserve (RESERVED_STACK_WORDS, 21 words) so that code may push a small frame after
 * a stack check failed, on its way to report it; 1 KiB covers that with room. */
#define STROBE_STACK_RESERVE 1024

/* The program's entry, which `strobec --entry=LABEL` emits: it runs LABEL on the
 * register table base and returns the R1 of the program's final return. */
int64_t strobe_entry(StrobeRegTable *base);

/* What libstrobe-rt's main does: reads STROBE_OPTIONS, maps the Cmm stack (with a
 * guard page) and the nursery, fills the register table, runs entry and returns the
 * low 8 bits of its result as the exit status; 2, with a message on stderr, if it
 * cannot start the program.  argc and argv are not used yet. */
int strobe_rt_main(int argc, char **argv, int64_t (*entry)(StrobeRegTable *base));

/* Runs entry once more, on the calling thread, on a Cmm stack (above a guard page), a
 * register table and a heap nursery of its own, sized by STROBE_OPTIONS as in
 * strobe_rt_main, mapped for this call and freed after it.  Any thread may call it,
 * several at once; a program with its own main may call it instead of strobe_rt_main.
 * Returns 0 with entry's R1 in *result, or 2, with a message on stderr, if STROBE_OPTIONS
 * is bad or the memory cannot be had.  Unlike strobe_rt_main's, a fault on this guard
 * page is not reported as a Cmm stack overflow: it is an ordinary crash. */
int strobe_rt_run(int64_t (*entry)(StrobeRegTable *base), int64_t *result);

/* Called by a program whose heap check or stack check failed: flush stdout, print
 * `strobe: heap exhausted` (or `strobe: Cmm stack exhausted`) and exit with status 2. */
STROBE_NORETURN void strobe_heap_exhausted(void);
STROBE_NORETURN void strobe_stack_exhausted(void);

/* Prints n and a newline on stdout. */
void strobe_print_int(int64_t n);

/* ---- options (STROBE_OPTIONS) ----------------------------------------------------- */

#define STROBE_OPTION_TYPE_size size_t
#define STROBE_OPTION_TYPE_count uint32_t
#define STROBE_OPTION_TYPE_bool bool
#define STROBE_OPTION_TYPE_path StrobePath

/* A file name (the `path` kind): at most 1023 bytes, no comma; empty is none. */
typedef struct StrobePath {
  char path[1024];
} StrobePath;

/* One field per row of strobe/options.def. */
typedef struct StrobeOptions {
#define STROBE_OPTION(name, kind, dflt, help) STROBE_OPTION_TYPE_##kind name;
#include "strobe/options.def"
#undef STROBE_OPTION
} StrobeOptions;

/* Sets *opts to the defaults with text applied: `key=value` entries separated by
 * commas, later ones winning; NULL is no entries.  Returns NULL, or the first bad
 * entry (it runs to the next comma or the end), leaving *opts as it was. */
const char *strobe_options_parse(const char *text, StrobeOptions *opts);

/* Lists the options, their values' form and their defaults, one per line. */
void strobe_options_describe(FILE *out);

#ifdef __cplusplus
}
#endif
#endif
