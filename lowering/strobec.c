/* strobec — strobe's compiler driver.
 *
 * The pipeline, for each input file:
 *
 *   parse    GHC's printed Cmm into CmmFile            (lex.c, parse.c)
 *   types    widths the text leaves out                (types.c)
 *   scopes   the tick-scope tree of each group          (scopes.c)
 *   emit     canonical Cmm or the scope trees          (print.c, scopes.c)
 *
 * Later phases slot in after scopes: lower to LLVM IR with DWARF, instrument, and
 * emit IR, bitcode, assembly or an object.
 *
 * Output is written whole or not at all: it is built in memory and written only
 * once every input has gone through without an error.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmm.h"
#include "scopes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef STROBE_VERSION
#define STROBE_VERSION "unknown"
#endif

typedef enum { EMIT_CMM, EMIT_SCOPES } Emit;

typedef struct Options {
  Emit emit;
  const char *output;    /* NULL: stdout */
  const char *main_file; /* NULL: the file most ticks name */
  bool no_warnings;
  const char **inputs;
  int ninputs;
} Options;

static void usage(FILE *out) {
  fputs("Usage: strobec [options] FILE...\n"
        "\n"
        "Reads Cmm as GHC 9.0.2 prints it with -g (-ddump-cmm or -ddump-cmm-raw, native or\n"
        "-fllvm pipeline, whole dump files) and writes what --emit asks for.  FILE '-' is\n"
        "standard input.\n"
        "\n"
        "Options:\n"
        "  --emit=cmm          print the parsed Cmm back in canonical form (default);\n"
        "                      reading that output again gives the same text\n"
        "  --emit=scopes       print each group's tick-scope tree: scopes, their blocks,\n"
        "                      their ticks and their best source note\n"
        "  -o FILE             write to FILE (default: standard output); written only if\n"
        "                      every input succeeds\n"
        "  --main-file=NAME    the Haskell file being compiled, preferred for best notes\n"
        "                      (default: the file named by the most ticks of each input)\n"
        "  -w                  do not print warnings\n"
        "  --help              show this help and exit\n"
        "  --version           show the version and exit\n"
        "\n"
        "Exit status: 0 on success, 1 on bad input or usage, 70 on an internal error.\n",
        out);
}

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "strobec: error: ");
  fprintf(stderr, fmt, arg);
  fputs("\nTry 'strobec --help'.\n", stderr);
  exit(1);
}

static Options parse_options(int argc, char **argv) {
  Options o = {.emit = EMIT_CMM};
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
      if (strcmp(a + 7, "cmm") == 0) o.emit = EMIT_CMM;
      else if (strcmp(a + 7, "scopes") == 0) o.emit = EMIT_SCOPES;
      else usage_error("unknown --emit kind '%s' (expected cmm or scopes)", a + 7);
    } else if (strcmp(a, "-o") == 0) {
      if (++i == argc) usage_error("%s needs a file name", "-o");
      o.output = argv[i];
    } else if (strncmp(a, "-o", 2) == 0) {
      o.output = a + 2;
    } else if (strcmp(a, "-w") == 0) {
      o.no_warnings = true;
    } else if (strncmp(a, "--main-file=", 12) == 0) {
      o.main_file = a + 12;
    } else {
      usage_error("unknown option '%s'", a);
    }
  }
  if (o.ninputs == 0) usage_error("%s", "no input files");
  return o;
}

/* Runs the pipeline on one input, appending what --emit asks for to out. */
static bool compile(const Options *o, const char *path, FILE *out) {
  CmmSource *src = cmm_source_read(path);
  if (!src) return false;
  Diag d = {.out = stderr, .no_warnings = o->no_warnings};

  CmmFile *f = cmm_parse(src, &d);
  bool ok = f && cmm_infer_types(f, &d);
  if (ok && o->emit == EMIT_CMM) cmm_print_file(out, f);
  if (ok && o->emit == EMIT_SCOPES) {
    const char *main_file = o->main_file ? o->main_file : scopes_main_file(f, f->arena);
    if (o->ninputs > 1) fprintf(out, "file %s\n", src->name);
    for (uint32_t g = 0; g < f->ngroups; g++) {
      ScopeTree *t = scopes_build(f, &f->groups[g], main_file, f->arena);
      scopes_print(out, f, &f->groups[g], t);
    }
  }
  cmm_file_free(f);
  cmm_source_free(src);
  return ok;
}

/* Writes the whole buffer to path through a temporary file and a rename. */
static bool write_output(const char *path, const char *buf, size_t len) {
  if (!path) return fwrite(buf, 1, len, stdout) == len && fflush(stdout) == 0;
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) internal_error("out of memory");
  snprintf(tmp, n + 16, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(buf, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    fprintf(stderr, "strobec: error: cannot write '%s': %s\n", path, strerror(errno));
    remove(tmp);
  }
  free(tmp);
  return ok;
}

int main(int argc, char **argv) {
  Options o = parse_options(argc, argv);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) internal_error("open_memstream: %s", strerror(errno));

  bool ok = true;
  for (int i = 0; i < o.ninputs; i++) ok = compile(&o, o.inputs[i], out) && ok;

  if (fclose(out) != 0) internal_error("cannot finish the output in memory");
  if (ok) ok = write_output(o.output, buf, len);
  free(buf);
  free(o.inputs);
  return ok ? 0 : 1;
}
