/* emit.c — the last stage: optimise a lowered module and write it out (see emit.h).
 *
 * Everything goes through LLVM's C API in process: the new pass manager
 * (LLVMRunPasses) for -O, the target machine's code generator for assembly and
 * objects.  Output is produced in memory first and written with one rename, so a
 * failure at any point leaves no partial file (Note [Where the output goes]).
 */
#define _POSIX_C_SOURCE 200809L
#include "emit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "errfmt.h"

/* Note [ghccc and the frame pointer]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The ghccc convention pins Sp to rbp (docs/lowering.md, "Functions").  A function that
 * keeps a frame pointer makes rbp the frame pointer: its prologue pushes rbp and moves
 * rsp into it, and llc does so without a word, so Sp is gone from the first instruction
 * on.  This happens with "frame-pointer"="all", and also with "non-leaf" (and LLVM 22's
 * "non-leaf-no-reserve") as soon as the function calls something, which a foreign call
 * does.  Only "none" and "reserved" keep rbp an argument.  Nothing here adds the
 * attribute (LLVM's pipelines do not, only clang's front end does), and
 * emit_prepare_module refuses a ghccc function that carries any other value, rather
 * than let the code generator miscompile it.  A dynamic alloca also forces a frame
 * pointer; the lowering must never make one in a ghccc function.
 */

/* ---- errors -------------------------------------------------------------------- */

/* Messages are formatted by strobe's one formatter (intrinsics/errfmt.h). */
#define fail strobe_fail

/* fail() with a message LLVM allocated, which is disposed of here. */
static bool fail_llvm(char **error, const char *what, char *msg) {
  fail(error, "%s: %s", what, msg && *msg ? msg : "unknown error");
  LLVMDisposeMessage(msg);
  return false;
}

/* Errors that LLVM reports through a context's diagnostic handler while a catcher is
 * installed.  Without one, LLVMContext prints an error and calls exit(1). */
typedef struct Catcher {
  LLVMContextRef ctx;
  LLVMDiagnosticHandler old_handler;
  void *old_context;
  unsigned count; /* errors caught */
  char *errors;   /* their descriptions, a newline between two (malloc'd) */
  size_t len;
} Catcher;

static void on_diagnostic(LLVMDiagnosticInfoRef di, void *p) {
  Catcher *c = p;
  if (LLVMGetDiagInfoSeverity(di) != LLVMDSError) return;
  c->count++;
  char *desc = LLVMGetDiagInfoDescription(di);
  size_t n = strlen(desc);
  while (n > 0 && desc[n - 1] == '\n') desc[--n] = '\0';
  char *grown = realloc(c->errors, c->len + n + 2);
  if (grown) {
    c->errors = grown;
    if (c->len) c->errors[c->len++] = '\n';
    memcpy(c->errors + c->len, desc, n + 1);
    c->len += n;
  }
  LLVMDisposeMessage(desc);
}

static void catch_begin(Catcher *c, LLVMContextRef ctx) {
  *c = (Catcher){.ctx = ctx,
                 .old_handler = LLVMContextGetDiagnosticHandler(ctx),
                 .old_context = LLVMContextGetDiagnosticContext(ctx)};
  LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, c);
}

/* Restores the context's handler; false and *error ("what: …") if errors were caught. */
static bool catch_end(Catcher *c, const char *what, char **error) {
  LLVMContextSetDiagnosticHandler(c->ctx, c->old_handler, c->old_context);
  if (c->count == 0) return true;
  fail(error, "%s: %s", what, c->errors ? c->errors : "an error (out of memory to say which)");
  free(c->errors);
  c->errors = NULL;
  return false;
}

/* ---- the target ---------------------------------------------------------------- */

bool emit_kind_from_suffix(const char *path, EmitKind *kind) {
  static const struct {
    const char *suffix;
    EmitKind kind;
  } suffixes[] = {
      {".ll", EMIT_KIND_LLVM},
      {".bc", EMIT_KIND_BC},
      {".s", EMIT_KIND_ASM},
      {".o", EMIT_KIND_OBJ},
  };
  size_t n = path ? strlen(path) : 0;
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    size_t k = strlen(suffixes[i].suffix);
    if (n > k && strcmp(path + n - k, suffixes[i].suffix) == 0 && path[n - k - 1] != '/') {
      *kind = suffixes[i].kind;
      return true;
    }
  }
  return false;
}

static bool valid_opt_level(int opt_level, char **error) {
  if (opt_level >= 0 && opt_level <= 3) return true;
  return fail(error, "optimisation level %d: expected 0, 1, 2 or 3", opt_level);
}

LLVMTargetMachineRef emit_target_machine(int opt_level, bool pic, char **error) {
  static const LLVMCodeGenOptLevel codegen_level[] = {
      LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
      LLVMCodeGenLevelAggressive};
  if (!valid_opt_level(opt_level, error)) return NULL;

  /* Registering a target twice is harmless: LLVM keeps the first registration. */
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser(); /* module-level and inline asm in objects */

  char *triple = LLVMGetDefaultTargetTriple();
  if (strncmp(triple, "x86_64-", 7) != 0) {
    fail(error, "host triple '%s': strobe generates code for x86-64 only", triple);
    LLVMDisposeMessage(triple);
    return NULL;
  }
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    fail(error, "no LLVM target for '%s': %s", triple, msg ? msg : "unknown error");
    LLVMDisposeMessage(msg);
    LLVMDisposeMessage(triple);
    return NULL;
  }
  LLVMDisposeMessage(msg);
  /* CPU "" and no features, as llc.  PIC links into PIE executables and shared
   * libraries (llc needs -relocation-model=pic to build the same object); static only
   * into an executable that is not PIE, as GHC links its programs, but its code needs
   * no GOT and takes a descriptor's address as an immediate. */
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, triple, "", "", codegen_level[opt_level],
                              pic ? LLVMRelocPIC : LLVMRelocStatic, LLVMCodeModelDefault);
  if (!tm) fail(error, "cannot create a target machine for '%s'", triple);
  LLVMDisposeMessage(triple);
  return tm;
}

/* See Note [ghccc and the frame pointer]. */
static bool check_frame_pointers(LLVMModuleRef m, char **error) {
  static const char key[] = "frame-pointer";
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMGetFunctionCallConv(f) != LLVMGHCCallConv) continue;
    LLVMAttributeRef a =
        LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, key, sizeof key - 1);
    if (!a) continue;
    unsigned n;
    const char *v = LLVMGetStringAttributeValue(a, &n);
    bool safe = (n == 4 && memcmp(v, "none", 4) == 0) || (n == 8 && memcmp(v, "reserved", 8) == 0);
    if (!safe) {
      size_t len;
      const char *name = LLVMGetValueName2(f, &len);
      return fail(error,
                  "ghccc function '%.*s' has \"frame-pointer\"=\"%.*s\": the frame pointer "
                  "would overwrite Sp (rbp)",
                  (int)len, name, (int)n, v);
    }
  }
  return true;
}

bool emit_prepare_module(LLVMModuleRef m, LLVMTargetMachineRef tm, char **error) {
  char *triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(m, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  char *layout = LLVMCopyStringRepOfTargetData(td);
  LLVMSetDataLayout(m, layout);
  LLVMDisposeMessage(layout);
  LLVMDisposeTargetData(td);

  if (!check_frame_pointers(m, error)) return false;
  char *msg = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg))
    return fail_llvm(error, "invalid LLVM IR", msg);
  LLVMDisposeMessage(msg);
  return true;
}

/* ---- optimisation --------------------------------------------------------------- */

bool emit_optimize(LLVMModuleRef m, LLVMTargetMachineRef tm, int opt_level, char **error) {
  if (!valid_opt_level(opt_level, error) || !emit_prepare_module(m, tm, error)) return false;
  char pipeline[16];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", opt_level);
  /* The options must not be NULL (LLVMRunPasses reads them unchecked).  Their
   * defaults are opt's pipeline tuning (clang's differs: it turns SLP vectorisation
   * on at -O2), so this gives what `opt-22 -passes='default<O2>'` gives. */
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  Catcher c;
  catch_begin(&c, LLVMGetModuleContext(m));
  LLVMErrorRef err = LLVMRunPasses(m, pipeline, tm, options);
  bool caught = catch_end(&c, "optimisation", error);
  LLVMDisposePassBuilderOptions(options);
  if (err) {
    if (!caught && error) free(*error); /* the pipeline's own error says more */
    char *msg = LLVMGetErrorMessage(err);
    fail(error, "pass pipeline '%s': %s", pipeline, msg);
    LLVMDisposeErrorMessage(msg);
    return false;
  }
  return caught;
}

/* ---- output --------------------------------------------------------------------- */

/* Note [Where the output goes]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A regular file, or a name that no file has yet, is written whole or not at all: the
 * bytes go to a new file beside it, which is renamed over it.  Anything else that
 * exists (a device such as /dev/null, a FIFO, a socket, a directory) is opened and
 * written directly, as clang does: renaming over /dev/null would replace the device
 * with a regular file for every later user (strobec runs as root in containers), and
 * over a FIFO would cut off its reader.  So is anything a symbolic link leads to that
 * is not a regular file: /dev/stdout, whose /proc link names a pipe (`pipe:[1234]`),
 * not a path.  Otherwise a symbolic link is followed, link by link, to the name it
 * leads to, which is then written as above: the link stays a link, and its target is
 * replaced, not the link.
 */

enum { MAX_LINKS = 40 }; /* as Linux's ELOOP */

/* The name path leads to through its symbolic links (malloc'd), or NULL when out of
 * memory.  A link that cannot be read, or a loop, ends the walk where it is. */
static char *follow_links(const char *path) {
  char *name = strdup(path);
  for (int hops = 0; name && hops < MAX_LINKS; hops++) {
    struct stat st;
    if (lstat(name, &st) != 0 || !S_ISLNK(st.st_mode)) return name;
    char link[4096];
    ssize_t n = readlink(name, link, sizeof link - 1);
    if (n < 0) return name;
    link[n] = '\0';
    /* A relative link is relative to the directory that holds it. */
    const char *slash = strrchr(name, '/');
    size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - name) + 1;
    char *next = malloc(dir + (size_t)n + 1);
    if (next) {
      memcpy(next, name, dir);
      memcpy(next + dir, link, (size_t)n + 1);
    }
    free(name);
    name = next;
  }
  return name;
}

bool emit_output_file(const char *path, char **file, char **error) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* through any links */
    *file = NULL;
    return true;
  }
  *file = follow_links(path);
  if (!*file) return fail(error, "cannot write '%s': out of memory", path);
  if (lstat(*file, &st) == 0 && !S_ISREG(st.st_mode)) { /* a link here is a loop */
    free(*file);
    *file = NULL;
  }
  return true;
}

static bool write_all(int fd, const char *p, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= (size_t)n;
  }
  return true;
}

/* A device, FIFO or socket: written in place (Note [Where the output goes]). */
static bool write_directly(const char *path, const void *data, size_t size, char **error) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && write_all(fd, data, size);
  int e = errno;
  if (fd >= 0 && close(fd) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (!ok) fail(error, "cannot write '%s': %s", path, strerror(e));
  return ok;
}

bool emit_write_file(const char *path, const void *data, size_t size, char **error) {
  if (!path || !*path) return fail(error, "no output file name");
  if (strcmp(path, "-") == 0) {
    if ((size > 0 && fwrite(data, 1, size, stdout) != size) || fflush(stdout) != 0)
      return fail(error, "cannot write to standard output: %s", strerror(errno));
    return true;
  }
  char *file;
  if (!emit_output_file(path, &file, error)) return false;
  if (!file) return write_directly(path, data, size, error);

  /* A new file beside the one replaced (same file system, so rename is atomic); O_EXCL
   * so that another process's temporary file is never reused, 0666 so the umask
   * applies. */
  size_t cap = strlen(file) + 48;
  char *tmp = malloc(cap);
  if (!tmp) {
    free(file);
    return fail(error, "cannot write '%s': out of memory", path);
  }
  int fd = -1;
  for (unsigned i = 0; fd < 0 && i < 64; i++) {
    snprintf(tmp, cap, "%s.tmp%ld.%u", file, (long)getpid(), i);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int e = errno;
    free(tmp);
    free(file);
    return fail(error, "cannot write '%s': %s", path, strerror(e));
  }
  bool ok = write_all(fd, data, size);
  int e = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (ok && rename(tmp, file) != 0) {
    ok = false;
    e = errno;
  }
  if (!ok) {
    unlink(tmp);
    fail(error, "cannot write '%s': %s", path, strerror(e));
  }
  free(tmp);
  free(file);
  return ok;
}

/* Assembly or an object, from a copy of m: the code generator's IR passes
 * (CodeGenPrepare and friends) rewrite the module they run on. */
static bool emit_code(LLVMModuleRef m, LLVMTargetMachineRef tm, LLVMCodeGenFileType type,
                      const char *path, char **error) {
  LLVMModuleRef copy = LLVMCloneModule(m);
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  Catcher c;
  catch_begin(&c, LLVMGetModuleContext(copy));
  LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(tm, copy, type, &msg, &buf);
  bool ok = catch_end(&c, "code generation", error);
  LLVMDisposeModule(copy);
  if (failed) {
    if (!ok && error) free(*error);
    ok = fail_llvm(error, "code generation", msg);
  } else {
    LLVMDisposeMessage(msg);
  }
  if (ok) ok = emit_write_file(path, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), error);
  if (buf) LLVMDisposeMemoryBuffer(buf);
  return ok;
}

bool emit_module(LLVMModuleRef m, LLVMTargetMachineRef tm, EmitKind kind, const char *path,
                 char **error) {
  if (!emit_prepare_module(m, tm, error)) return false;
  switch (kind) {
  case EMIT_KIND_LLVM: {
    char *text = LLVMPrintModuleToString(m);
    bool ok = emit_write_file(path, text, strlen(text), error);
    LLVMDisposeMessage(text);
    return ok;
  }
  case EMIT_KIND_BC: {
    LLVMMemoryBufferRef buf = LLVMWriteBitcodeToMemoryBuffer(m);
    bool ok = emit_write_file(path, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), error);
    LLVMDisposeMemoryBuffer(buf);
    return ok;
  }
  case EMIT_KIND_ASM: return emit_code(m, tm, LLVMAssemblyFile, path, error);
  case EMIT_KIND_OBJ: return emit_code(m, tm, LLVMObjectFile, path, error);
  }
  return fail(error, "unknown output kind %d", (int)kind);
}
