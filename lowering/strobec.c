/* strobec — strobe's compiler driver.
 *
 * The pipeline (compile() reads the same way, one call per stage; docs/design.md,
 * "Pipeline"); the names are --time-passes' rows:
 *
 *   read, parse  GHC's printed Cmm into CmmFile              diag.c, lex.c, parse.c
 *   types    the widths the text leaves out                  types.c
 *   scopes   the tick-scope tree of each group               scopes.c
 *   ticks    per file, the binding each proc's ticks count   ticks.c
 *            for; once the module is lowered, every tick descriptor's parent and flags
 *   lower    ghccc functions with Haskell DWARF, the         lower.c and the files of
 *            intrinsics where ticks.c puts them              lower_internal.h
 *   instrument  mark the functions opted in, then (for       plugin/instrument.c
 *            assembly and objects) the dynamic stack's fast paths in them; IR and
 *            bitcode keep the intrinsics for `opt -passes=strobe-instrument`
 *   optimize, codegen+write  optimise, then IR, bitcode,     emit.c
 *            assembly or object
 *
 * --emit=cmm and --emit=scopes stop after scopes and print text instead.  Output is
 * written whole or not at all: it is made in memory and written once every input has
 * gone through without an error.  Library code reports errors and never prints; this
 * file decides what reaches standard error and the exit status.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmm.h"
#include "emit.h"
#include "instrument.h"
#include "lower.h"
#include "scopes.h"
#include "ticks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef STROBE_VERSION
#define STROBE_VERSION "unknown"
#endif

typedef enum { OUT_CMM, OUT_SCOPES, OUT_LLVM } Output;

typedef struct Options {
  Output out;
  EmitKind kind;         /* OUT_LLVM: what to write */
  bool kind_given;
  int opt_level;
  const char *output;    /* NULL: stdout */
  bool no_warnings;
  bool time_passes;
  bool pic;              /* --relocation-model: pic (default) or static */
  unsigned jobs;         /* --jobs: processes for an object's code generation */
  const char *main_file; /* --main-file: the Haskell file the scopes stage prefers */
  LowerOptions lower;
  SpOptions instrument;  /* which functions get the dynamic stack */
  const char *package_map; /* --package-map=FILE */
  const char *this_unit;   /* --this-unit=UNIT */
  unsigned ghc;            /* --ghc-version: 900, 906 */
  const char **inputs;
  int ninputs;
} Options;

#ifndef STROBE_GHC_DEFAULT
#define STROBE_GHC_DEFAULT "" /* no ghc at the build: GHC 9.0's rules */
#endif

static void usage(FILE *out) {
  fputs("Usage: strobec [options] FILE...\n"
        "\n"
        "Reads Cmm as GHC 9.0.2 or 9.6.6 prints it with -g (-ddump-cmm or -ddump-cmm-raw,\n"
        "native or -fllvm pipeline, whole dump files), lowers it to LLVM IR with Haskell\n"
        "debug info, and writes what --emit asks for.  Several files make one module.\n"
        "FILE '-' is standard input.\n"
        "\n"
        "Output:\n"
        "  -o FILE             write to FILE (default: standard output); written only if\n"
        "                      every input succeeds\n"
        "  --emit=KIND         what to write; the default comes from the suffix of -o\n"
        "                      (.o obj, .s asm, .bc bc, .ll llvm, .cmm cmm), else llvm:\n"
        "    obj                 an ELF object\n"
        "    asm                 assembly\n"
        "    bc                  LLVM bitcode\n"
        "    llvm                LLVM IR as text\n"
        "    cmm                 the parsed Cmm in canonical form (reading it again gives\n"
        "                        the same text)\n"
        "    scopes              each group's tick-scope tree: scopes, their blocks, their\n"
        "                        ticks and their best source note\n"
        "  -O0 -O1 -O2 -O3     optimisation level (default -O0), LLVM's pipeline in process\n"
        "  --relocation-model=M  pic (default: links into PIE executables and shared\n"
        "                      libraries) or static (only into an executable that is not\n"
        "                      PIE, as GHC links its programs: no GOT, shorter dynamic-\n"
        "                      stack code, which reaches the runtime by local-exec TLS)\n"
        "  --jobs=N            generate an object's code in up to N processes (default 1):\n"
        "                      a big module is split by function, and the parts are\n"
        "                      joined by ld -r (binutils' ld and objcopy on PATH)\n"
        "\n"
        "Lowering:\n"
        "  --entry=LABEL       make a standalone program entered at LABEL (a procedure or\n"
        "                      its info table); link with libstrobe-rt-standalone\n"
        "                      (docs/standalone.md)\n"
        "  --dwarf-language=L  c (default: best for lldb) or haskell (DW_LANG_Haskell)\n"
        "  --dwarf-version=N   4 (default: valgrind 3.19, gdb and perf read it) or 5\n"
        "  --main-file=NAME    the Haskell file being compiled, preferred for source notes\n"
        "                      (default: the file named by the most ticks of each input)\n"
        "                      and the name of the DWARF compile unit (default: the\n"
        "                      first input)\n"
        "\n"
        "Symbols (docs/lowering.md):\n"
        "  --package-map=FILE  the unit id of each library module, one 'MODULE UNIT-ID'\n"
        "                      line each ('#' comments), as driver/strobe-package-map\n"
        "                      prints it from ghc-pkg: a label of a module gets the\n"
        "                      z-encoded unit id as prefix (base_GHCziBase_map_closure)\n"
        "  --this-unit=UNIT    the unit being compiled (default main, which has no\n"
        "                      prefix); it owns every module the map does not list\n"
        "  --ghc-version=X.Y   the GHC that printed the dump: 9.0, 9.6 or 9.10 (default:\n"
        "                      the one strobec was built with); 9.6's objects name tuples\n"
        "                      GHC.Tuple.Prim's, and 9.6's and 9.10's make a data\n"
        "                      constructor's info table global\n"
        "\n"
        "The dynamic stack (docs/lowering.md):\n"
        "  --instrument=GLOBS  instrument the functions whose Haskell names match these\n"
        "                      comma-separated fnmatch patterns ('Main.fact*,Main.go')\n"
        "  --instrument-list=FILE  XRay-style list: [always] and [never] sections of\n"
        "                      fun:PATTERN lines; [never] wins\n"
        "  --pops-everywhere   keep the pop checks in functions not instrumented too\n"
        "  --count-ticks       count every tick, for the runtime's statistics (one\n"
        "                      instruction more on each)\n"
        "  --ticks=MODE        which source notes tick: all (default) every note, so a\n"
        "                      report's frame is at the expression its function is at now\n"
        "                      (for a caller, where it called); functions only each\n"
        "                      function's entry note (a binding's whole span, a thunk's\n"
        "                      or return point's scope): the call chain, cheaper\n"
        "  --no-intrinsics     emit no dynamic-stack intrinsics at all\n"
        "                      (by default they are removed from every function not\n"
        "                      instrumented; .ll and .bc keep them for opt's plugin)\n"
        "\n"
        "Other:\n"
        "  -w                  do not print warnings\n"
        "  --time-passes       print the time each stage took to standard error\n"
        "  --help              show this help and exit\n"
        "  --version           show the version and exit\n"
        "\n"
        "Exit status: 0 on success, 1 on bad input or usage, 2 when every error is valid\n"
        "GHC Cmm that strobe refuses to lower faithfully (an ambiguous bitwise expression,\n"
        "docs/cmm-syntax.md: compile that module with GHC's own code generator), 70 on an\n"
        "internal error.\n",
        out);
}

/* A GHC version strobe knows the rules of ("9.6", "9.6.6"): 906; 0 for any other. */
static unsigned ghc_version(const char *s) {
  unsigned major = 0, minor = 0, patch;
  int len = 0;
  if (sscanf(s, "%u.%u%n.%u%n", &major, &minor, &len, &patch, &len) < 2 || s[len] || major != 9 ||
      (minor != 0 && minor != 6 && minor != 10))
    return 0;
  return 100 * major + minor;
}

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "strobec: error: ");
  fprintf(stderr, fmt, arg);
  fputs("\nTry 'strobec --help'.\n", stderr);
  exit(1);
}

static bool parse_emit(const char *s, Options *o) {
  static const struct { const char *name; Output out; EmitKind kind; } kinds[] = {
      {"obj", OUT_LLVM, EMIT_KIND_OBJ}, {"asm", OUT_LLVM, EMIT_KIND_ASM},
      {"bc", OUT_LLVM, EMIT_KIND_BC},   {"llvm", OUT_LLVM, EMIT_KIND_LLVM},
      {"cmm", OUT_CMM, EMIT_KIND_LLVM}, {"scopes", OUT_SCOPES, EMIT_KIND_LLVM},
  };
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (strcmp(s, kinds[i].name) == 0) {
      o->out = kinds[i].out;
      o->kind = kinds[i].kind;
      o->kind_given = true;
      return true;
    }
  return false;
}

static Options parse_options(int argc, char **argv) {
  Options o = {.out = OUT_LLVM, .kind = EMIT_KIND_LLVM, .pic = true};
  sp_options_init(&o.instrument);
  o.inputs = calloc((size_t)argc, sizeof *o.inputs);
  if (!o.inputs) internal_error("out of memory");
  bool no_more_options = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (no_more_options || a[0] != '-' || strcmp(a, "-") == 0) {
      o.inputs[o.ninputs++] = a;
    } else if (strcmp(a, "--") == 0) {
      no_more_options = true;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(a, "--version") == 0) {
      printf("strobec %s\n", STROBE_VERSION);
      exit(0);
    } else if (strncmp(a, "--emit=", 7) == 0) {
      if (!parse_emit(a + 7, &o))
        usage_error("unknown --emit kind '%s' (expected obj, asm, bc, llvm, cmm or scopes)", a + 7);
    } else if (strcmp(a, "-o") == 0) {
      if (++i == argc) usage_error("%s needs a file name", "-o");
      o.output = argv[i];
    } else if (strncmp(a, "-o", 2) == 0) {
      o.output = a + 2;
    } else if (a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      o.opt_level = a[2] - '0';
    } else if (strncmp(a, "--entry=", 8) == 0 && a[8]) {
      o.lower.entry = a + 8;
    } else if (strncmp(a, "--dwarf-language=", 17) == 0) {
      if (strcmp(a + 17, "haskell") == 0) o.lower.dwarf_haskell = true;
      else if (strcmp(a + 17, "c") != 0)
        usage_error("unknown --dwarf-language '%s' (expected c or haskell)", a + 17);
    } else if (strncmp(a, "--dwarf-version=", 16) == 0) {
      if (strcmp(a + 16, "4") == 0) o.lower.dwarf_version = 4;
      else if (strcmp(a + 16, "5") == 0) o.lower.dwarf_version = 5;
      else usage_error("unknown --dwarf-version '%s' (expected 4 or 5)", a + 16);
    } else if (strncmp(a, "--instrument=", 13) == 0) {
      char *error = NULL;
      if (!sp_options_add_globs(&o.instrument, a + 13, &error)) usage_error("%s", error);
    } else if (strncmp(a, "--instrument-list=", 18) == 0) {
      char *error = NULL;
      if (!sp_options_parse_list(&o.instrument, a + 18, &error)) {
        fprintf(stderr, "%s\n", error);
        exit(1);
      }
    } else if (strncmp(a, "--ticks=", 8) == 0) {
      if (!tk_mode_parse(a + 8, &o.lower.ticks))
        usage_error("--ticks wants 'functions' or 'all', not '%s'", a + 8);
    } else if (strcmp(a, "--pops-everywhere") == 0) {
      o.instrument.pops_everywhere = true;
    } else if (strcmp(a, "--count-ticks") == 0) {
      o.instrument.count_ticks = true;
    } else if (strncmp(a, "--relocation-model=", 19) == 0) {
      if (strcmp(a + 19, "pic") == 0) o.pic = true;
      else if (strcmp(a + 19, "static") == 0) o.pic = false;
      else usage_error("unknown --relocation-model '%s' (expected pic or static)", a + 19);
      o.instrument.local_exec = !o.pic;
    } else if (strncmp(a, "--jobs=", 7) == 0) {
      char *end;
      long n = strtol(a + 7, &end, 10);
      if (end == a + 7 || *end || n < 1 || n > 64)
        usage_error("--jobs wants a number of processes from 1 to 64, not '%s'", a + 7);
      o.jobs = (unsigned)n;
    } else if (strcmp(a, "--no-intrinsics") == 0) {
      o.lower.no_intrinsics = true;
    } else if (strncmp(a, "--package-map=", 14) == 0) {
      if (!a[14]) usage_error("%s needs a file name", "--package-map");
      o.package_map = a + 14;
    } else if (strncmp(a, "--ghc-version=", 14) == 0) {
      if (!(o.ghc = ghc_version(a + 14)))
        usage_error("--ghc-version wants 9.0, 9.6 or 9.10 (or 9.0.2, 9.6.6, 9.10.3), not '%s'",
                    a + 14);
    } else if (strncmp(a, "--this-unit=", 12) == 0) {
      if (!a[12] || strpbrk(a + 12, " \t\n")) usage_error("bad unit id '%s'", a + 12);
      o.this_unit = a + 12;
    } else if (strncmp(a, "--main-file=", 12) == 0) {
      o.main_file = a + 12;
    } else if (strcmp(a, "-w") == 0) {
      o.no_warnings = true;
    } else if (strcmp(a, "--time-passes") == 0) {
      o.time_passes = true;
    } else {
      usage_error("unknown option '%s'", a);
    }
  }
  if (o.ninputs == 0) usage_error("%s", "no input files");
  if (!o.kind_given && o.output) {
    size_t n = strlen(o.output);
    if (n > 4 && strcmp(o.output + n - 4, ".cmm") == 0) o.out = OUT_CMM;
    else emit_kind_from_suffix(o.output, &o.kind);
  }
  return o;
}

/* --time-passes: seconds spent per stage, over all inputs. */
enum { T_READ, T_PARSE, T_TYPES, T_SCOPES, T_TICKS, T_LOWER, T_INSTRUMENT, T_OPTIMIZE, T_EMIT,
       T_NSTAGES };
static const char *const stage_names[T_NSTAGES] = {
    "read", "parse", "types", "scopes", "ticks", "lower", "instrument", "optimize", "codegen+write"};
static double stage_time[T_NSTAGES];

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs a stage's expression, adding its time to stage_time[stage]. */
#define TIMED(stage, x) (stage_t0 = now(), stage_ok = (x), stage_time[stage] += now() - stage_t0, stage_ok)
static double stage_t0;
static bool stage_ok;

static void print_times(void) {
  double total = 0;
  for (int i = 0; i < T_NSTAGES; i++) total += stage_time[i];
  fprintf(stderr, "strobec: time per stage (seconds)\n");
  for (int i = 0; i < T_NSTAGES; i++)
    fprintf(stderr, "  %-14s %9.4f  %5.1f%%\n", stage_names[i], stage_time[i],
            total > 0 ? 100 * stage_time[i] / total : 0);
  fprintf(stderr, "  %-14s %9.4f\n", "total", total);
}

/* Every error reported, and those among them that are refusals (Diag.refusals): the
 * exit status is 2 when all errors were refusals. */
static unsigned n_errors, n_refusals;

static void count(const Diag *d) {
  n_errors += d->errors;
  n_refusals += d->refusals;
}

/* The front end for one input: parse and infer widths.  NULL after reporting. */
static CmmFile *front_end(const Options *o, const char *path, CmmSource **src) {
  Diag d = {.out = stderr, .no_warnings = o->no_warnings};
  if (!TIMED(T_READ, (*src = cmm_source_read(path, &d)) != NULL)) {
    count(&d);
    return NULL;
  }
  CmmFile *f;
  (void)TIMED(T_PARSE, (f = cmm_parse(*src, &d)) != NULL);
  if (f && !TIMED(T_TYPES, cmm_infer_types(f, &d))) {
    cmm_file_free(f);
    f = NULL;
  }
  count(&d);
  return f;
}

/* --emit=cmm and --emit=scopes: text, made in memory. */
static bool print_text(const Options *o, FILE *out) {
  bool ok = true;
  for (int i = 0; i < o->ninputs; i++) {
    CmmSource *src;
    CmmFile *f = front_end(o, o->inputs[i], &src);
    ok = ok && f;
    if (f && o->out == OUT_CMM) cmm_print_file(out, f);
    if (f && o->out == OUT_SCOPES) {
      const char *main_file = o->main_file ? o->main_file : scopes_main_file(f, f->arena);
      if (o->ninputs > 1) fprintf(out, "file %s\n", src->name);
      for (uint32_t g = 0; g < f->ngroups; g++)
        scopes_print(out, f, &f->groups[g], scopes_build(f, &f->groups[g], main_file, f->arena));
    }
    cmm_file_free(f);
    cmm_source_free(src);
  }
  return ok;
}

/* A phase's error (malloc'd, intrinsics/errfmt.h) to the user, through the Diag. */
static bool report(Diag *d, char *error) {
  diag_tool_error(d, "%s", error ? error : "out of memory");
  free(error);
  return false;
}

/* parse → types → scopes → ticks → lower → instrument → emit, every input into one
 * module.  S is o->lower.symbols, which each input's symbols table adds to. */
static bool compile(const Options *o, LwSymbols *S) {
  LLVMContextRef ctx = LLVMContextCreate();
  Diag d = {.out = stderr, .no_warnings = o->no_warnings};
  Ticks *ticks = tk_new(); /* the module's tick descriptors */
  /* The module, and its DWARF compile unit, is named after the Haskell source when the
   * driver says which one it is (--main-file), as GHC names its own unit; else after
   * the first input, a standalone program's Cmm. */
  Lowering *L = lw_new(ctx, o->main_file ? o->main_file : o->inputs[0], &o->lower, ticks, &d);
  bool ok = true;
  for (int i = 0; i < o->ninputs && ok; i++) {
    CmmSource *src;
    CmmFile *f = front_end(o, o->inputs[i], &src);
    ScopeTree **trees = NULL;
    TkPlan *plan = NULL;
    ok = f && (!f->nsymbols || lw_symbols_add_table(S, f, &d)) &&
         TIMED(T_SCOPES, (trees = scopes_build_file(f, o->main_file, f->arena)) != NULL) &&
         TIMED(T_TICKS, (plan = tk_plan(f, trees, f->arena)) != NULL) &&
         TIMED(T_LOWER, lw_add_file(L, f, trees, plan));
    cmm_file_free(f);
    cmm_source_free(src);
  }
  if (ok) (void)TIMED(T_TICKS, (tk_link(ticks), true));
  LLVMModuleRef m = NULL;
  if (ok) (void)TIMED(T_LOWER, (m = lw_finish(L)) != NULL);
  lw_free(L);
  tk_free(ticks);
  ok = m != NULL;

  char *error = NULL;
  /* Opted-in functions carry the attribute, so that opt's plugin sees the choice too. */
  if (m) (void)TIMED(T_INSTRUMENT, (sp_mark_selected(m, &o->instrument), true));
  bool code = o->kind == EMIT_KIND_OBJ || o->kind == EMIT_KIND_ASM;
  if (ok && code && !TIMED(T_INSTRUMENT, sp_instrument_module(m, &o->instrument, &error)))
    ok = report(&d, error);
  LLVMTargetMachineRef tm = ok ? emit_target_machine(o->opt_level, o->pic, &error) : NULL;
  ok = ok && (tm || report(&d, error));
  ok = ok && (TIMED(T_OPTIMIZE, emit_optimize(m, tm, o->opt_level, &error)) || report(&d, error));
  const char *path = o->output ? o->output : "-";
  ok = ok && (TIMED(T_EMIT, o->kind == EMIT_KIND_OBJ
                                ? emit_object_split(m, tm, o->jobs, path, &error)
                                : emit_module(m, tm, o->kind, path, &error)) ||
              report(&d, error));
  if (tm) LLVMDisposeTargetMachine(tm);
  if (m) LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  count(&d);
  return ok;
}

/* The package map, read once for the whole run; NULL after reporting. */
static LwSymbols *read_symbols(const Options *o) {
  LwSymbols *S = lw_symbols_new(o->this_unit ? o->this_unit : "main");
  unsigned built_with = ghc_version(STROBE_GHC_DEFAULT);
  lw_symbols_set_ghc(S, o->ghc ? o->ghc : built_with ? built_with : 900);
  if (!o->package_map) return S;
  Diag d = {.out = stderr};
  CmmSource *src = cmm_source_read(o->package_map, &d);
  bool ok = src && lw_symbols_add_map(S, src, &d);
  cmm_source_free(src);
  count(&d);
  if (ok) return S;
  lw_symbols_free(S);
  return NULL;
}

int main(int argc, char **argv) {
  Options o = parse_options(argc, argv);
  bool ok;
  if (o.out == OUT_LLVM) {
    LwSymbols *S = read_symbols(&o);
    o.lower.symbols = S;
    ok = S && compile(&o, S);
    lw_symbols_free(S);
  } else {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) internal_error("open_memstream: %s", strerror(errno));
    ok = print_text(&o, out);
    if (fclose(out) != 0) internal_error("cannot finish the output in memory");
    char *error = NULL;
    Diag d = {.out = stderr, .no_warnings = o.no_warnings};
    if (ok && !emit_write_file(o.output ? o.output : "-", buf, len, &error)) ok = report(&d, error);
    count(&d);
    free(buf);
  }
  if (o.time_passes) print_times();
  sp_options_free(&o.instrument);
  free(o.inputs);
  if (ok) return 0;
  return n_refusals > 0 && n_refusals == n_errors ? 2 : 1;
}
