/* split.c — an object made by several processes: code generation split by function.
 *
 * LLVM's code generator takes most of strobec's time (instruction selection and
 * register allocation, per function), and it is one thread.  emit_object_split cuts an
 * optimised module into parts, runs the code generator on each part in its own process
 * (fork: each child has the whole module, copy on write, and keeps only its part's
 * definitions), and joins the parts' objects into one with `ld -r`.
 *
 * Note [Splitting a module]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * - Parts are contiguous runs of the module's functions, of about the same number of
 *   instructions each, so the joined object keeps the module's order of code (ld -r
 *   lays out its inputs' sections in order).  Every global variable goes to part 0.
 * - In a part, a function or variable of another part becomes a declaration.  A local
 *   one (internal or private: a label GHC keeps local, a tick descriptor, a string) that
 *   some other part uses must then be a symbol the linker resolves: in every part it is
 *   made external and hidden, under a name, and after the join `objcopy
 *   --localize-symbols` makes it local again, so that the object exports exactly what
 *   the unsplit one does.
 * - Each part has its own DWARF compile unit, for its functions; a debugger reads the
 *   module's code from several units of the same name, as from any program.
 */
#define _POSIX_C_SOURCE 200809L
#include "emit.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/DebugInfo.h>

#include "errfmt.h"

extern char **environ;

/* A module below this many instructions per part is not worth another process. */
enum { SPLIT_MIN_INSTRUCTIONS = 4000 };

typedef struct {
  LLVMValueRef fn;
  unsigned part;
} FnPart;

typedef struct {
  LLVMValueRef *fns; /* the module's defined functions, in order */
  size_t nfns;
  unsigned nparts;
  FnPart *by_fn;     /* each function's part, sorted by function (part_of_function) */
} Split;

static size_t instructions(LLVMValueRef fn) {
  size_t n = 0;
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

static int by_fn(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const FnPart *)a)->fn, y = (uintptr_t)((const FnPart *)b)->fn;
  return (x > y) - (x < y);
}

/* Contiguous runs of about total/nparts instructions; false when the module is too
 * small to split into more than one part. */
static bool plan(LLVMModuleRef m, unsigned jobs, Split *s) {
  size_t cap = 0, total = 0;
  size_t *size = NULL;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    if (s->nfns == cap) {
      cap = cap ? 2 * cap : 256;
      s->fns = realloc(s->fns, cap * sizeof *s->fns);
      size = realloc(size, cap * sizeof *size);
      if (!s->fns || !size) abort();
    }
    size[s->nfns] = instructions(f);
    total += size[s->nfns];
    s->fns[s->nfns++] = f;
  }
  size_t want = total / SPLIT_MIN_INSTRUCTIONS;
  s->nparts = want < jobs ? (unsigned)want : jobs;
  if (s->nparts > s->nfns) s->nparts = (unsigned)s->nfns;
  if (s->nparts < 2) {
    free(size);
    return false;
  }
  s->by_fn = malloc(s->nfns * sizeof *s->by_fn);
  if (!s->by_fn) abort();
  size_t done = 0;
  for (size_t i = 0; i < s->nfns; i++) {
    unsigned p = (unsigned)(done * s->nparts / total);
    s->by_fn[i] = (FnPart){s->fns[i], p < s->nparts ? p : s->nparts - 1};
    done += size[i];
  }
  free(size);
  qsort(s->by_fn, s->nfns, sizeof *s->by_fn, by_fn);
  return true;
}

static unsigned part_of_function(const Split *s, LLVMValueRef fn) {
  FnPart key = {fn, 0};
  const FnPart *hit = bsearch(&key, s->by_fn, s->nfns, sizeof key, by_fn);
  return hit ? hit->part : 0;
}

/* The part whose definitions use v: through an instruction, a variable's initializer
 * (part 0), a function's prefix data, or a constant expression, followed to its own
 * users.  PART_NONE when nothing uses it, PART_MIXED once two parts do. */
enum { PART_NONE = UINT32_MAX, PART_MIXED = UINT32_MAX - 1 };

static unsigned join(unsigned a, unsigned b) {
  if (a == PART_NONE) return b;
  if (b == PART_NONE || a == b) return a;
  return PART_MIXED;
}

static unsigned users_part(const Split *s, LLVMValueRef v, unsigned depth) {
  unsigned part = PART_NONE;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u && part != PART_MIXED; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsAInstruction(user))
      part = join(part,
                  part_of_function(s, LLVMGetBasicBlockParent(LLVMGetInstructionParent(user))));
    else if (LLVMIsAGlobalVariable(user))
      part = join(part, 0);
    else if (LLVMIsAFunction(user)) /* prefix data */
      part = join(part, part_of_function(s, user));
    else if (depth < 16)
      part = join(part, users_part(s, user, depth + 1));
    else
      part = PART_MIXED;
  }
  return part;
}

/* Makes every local value that a part other than its own uses external and hidden;
 * their names, one per line, for objcopy --localize-symbols.  NULL when out of memory. */
static char *promote(LLVMModuleRef m, const Split *s, size_t *len) {
  char *names = NULL;
  FILE *out = open_memstream(&names, len);
  if (!out) return NULL;
  unsigned serial = 0;
  for (int pass = 0; pass < 2; pass++) {
    LLVMValueRef v = pass == 0 ? LLVMGetFirstFunction(m) : LLVMGetFirstGlobal(m);
    for (; v; v = pass == 0 ? LLVMGetNextFunction(v) : LLVMGetNextGlobal(v)) {
      LLVMLinkage l = LLVMGetLinkage(v);
      if (LLVMIsDeclaration(v) || (l != LLVMInternalLinkage && l != LLVMPrivateLinkage)) continue;
      unsigned own = pass == 0 ? part_of_function(s, v) : 0;
      unsigned used = users_part(s, v, 0);
      if (used == PART_NONE || used == own) continue;
      size_t n;
      const char *name = LLVMGetValueName2(v, &n);
      char fresh[48];
      if (n == 0) {
        snprintf(fresh, sizeof fresh, ".strobe.split.%u", serial++);
        LLVMSetValueName2(v, fresh, strlen(fresh));
        name = LLVMGetValueName2(v, &n);
      }
      LLVMSetLinkage(v, LLVMExternalLinkage);
      LLVMSetVisibility(v, LLVMHiddenVisibility);
      LLVMSetUnnamedAddress(v, LLVMNoUnnamedAddr);
      fprintf(out, "%.*s\n", (int)n, name);
    }
  }
  if (fclose(out) != 0) {
    free(names);
    return NULL;
  }
  return names;
}

/* Keeps only part p's definitions: another part's function becomes a declaration of
 * the same name and type (its uses moved to it), a variable loses its initializer. */
static void keep_part(LLVMModuleRef m, const Split *s, unsigned p) {
  for (size_t i = 0; i < s->nfns; i++) {
    if (s->by_fn[i].part == p) continue;
    LLVMValueRef f = s->by_fn[i].fn;
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    char *copy = strndup(name, n);
    if (!copy) abort();
    LLVMValueRef decl = LLVMAddFunction(m, "", LLVMGlobalGetValueType(f));
    LLVMSetFunctionCallConv(decl, LLVMGetFunctionCallConv(f));
    LLVMSetLinkage(decl, LLVMExternalLinkage);
    LLVMSetVisibility(decl, LLVMGetVisibility(f));
    LLVMReplaceAllUsesWith(f, decl);
    LLVMDeleteFunction(f);
    LLVMSetValueName2(decl, copy, n);
    free(copy);
  }
  if (p == 0) return;
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    size_t n;
    const char *name = LLVMGetValueName2(g, &n);
    if (LLVMIsDeclaration(g) || (n > 5 && memcmp(name, "llvm.", 5) == 0)) continue;
    LLVMSetInitializer(g, NULL);
    LLVMSetLinkage(g, LLVMExternalLinkage);
    LLVMSetSection(g, NULL);
  }
}

/* Runs argv (a program on PATH), waiting; an error unless it exits with status 0. */
static bool run(char *const argv[], char **error) {
  pid_t pid;
  int e = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (e != 0) return strobe_fail(error, "cannot run %s: %s", argv[0], strerror(e));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return strobe_fail(error, "waiting for %s: %s", argv[0], strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  bool exited = WIFEXITED(status);
  return strobe_fail(error, "%s failed (%s %d)", argv[0], exited ? "exit status" : "signal",
                     exited ? WEXITSTATUS(status) : WTERMSIG(status));
}

static char *part_path(const char *path, unsigned p) {
  size_t cap = strlen(path) + 48;
  char *t = malloc(cap);
  if (!t) abort();
  snprintf(t, cap, "%s.part%ld.%u.o", path, (long)getpid(), p);
  return t;
}

/* Part p's object into its file: in a child, whose copy of m it may change. */
static bool emit_part(LLVMModuleRef m, LLVMTargetMachineRef tm, const Split *s, unsigned p,
                      const char *file, char **error) {
  keep_part(m, s, p);
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &msg, &buf))
    return strobe_fail(error, "code generation: %s", msg ? msg : "failed");
  LLVMDisposeMessage(msg);
  bool ok = emit_write_file(file, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), error);
  LLVMDisposeMemoryBuffer(buf);
  return ok;
}

bool emit_object_split(LLVMModuleRef m, LLVMTargetMachineRef tm, unsigned jobs, const char *path,
                       char **error) {
  Split s = {0};
  char *file = NULL; /* the file the parts' object replaces (emit_output_file) */
  if (strcmp(path, "-") != 0 && !emit_output_file(path, &file, error)) return false;
  if (jobs < 2 || !file || !plan(m, jobs, &s)) { /* stdout, a device or a FIFO: one part */
    free(s.fns);
    free(file);
    return emit_module(m, tm, EMIT_KIND_OBJ, path, error);
  }
  size_t nlen = 0;
  bool ok = emit_prepare_module(m, tm, error);
  char *names = ok ? promote(m, &s, &nlen) : NULL;
  char **files = calloc(s.nparts, sizeof *files);
  pid_t *pids = calloc(s.nparts, sizeof *pids);
  if (ok && !(names && files && pids)) ok = strobe_fail(error, "out of memory");
  fflush(NULL);
  for (unsigned p = 0; ok && p < s.nparts; p++) {
    files[p] = part_path(file, p);
    pids[p] = fork();
    if (pids[p] < 0) ok = strobe_fail(error, "fork: %s", strerror(errno));
    if (pids[p] == 0) {
      char *e = NULL;
      bool done = emit_part(m, tm, &s, p, files[p], &e);
      if (!done) fprintf(stderr, "strobec: error: %s: part %u: %s\n", path, p, e ? e : "failed");
      _exit(done ? 0 : 1);
    }
  }
  for (unsigned p = 0; p < s.nparts; p++) {
    int status;
    if (pids && pids[p] > 0 && waitpid(pids[p], &status, 0) == pids[p] &&
        !(WIFEXITED(status) && WEXITSTATUS(status) == 0) && ok)
      ok = strobe_fail(error, "code generation of part %u of %u failed", p + 1, s.nparts);
  }
  char *joined = part_path(file, s.nparts);
  char *list = part_path(file, s.nparts + 1);
  if (ok) ok = emit_write_file(list, names, nlen, error);
  if (ok) {
    char **argv = calloc(s.nparts + 5, sizeof *argv);
    if (!argv) abort();
    unsigned a = 0;
    argv[a++] = "ld", argv[a++] = "-r", argv[a++] = "-o", argv[a++] = joined;
    for (unsigned p = 0; p < s.nparts; p++) argv[a++] = files[p];
    ok = run(argv, error);
    free(argv);
  }
  if (ok) {
    size_t cap = strlen(list) + 32;
    char *opt = malloc(cap);
    if (!opt) abort();
    snprintf(opt, cap, "--localize-symbols=%s", list);
    char *argv[] = {"objcopy", opt, joined, NULL};
    ok = run(argv, error);
    free(opt);
  }
  if (ok && rename(joined, file) != 0)
    ok = strobe_fail(error, "cannot write '%s': %s", path, strerror(errno));
  unlink(joined);
  unlink(list);
  for (unsigned p = 0; files && p < s.nparts; p++) {
    if (files[p]) unlink(files[p]);
    free(files[p]);
  }
  free(joined);
  free(list);
  free(file);
  free(files);
  free(pids);
  free(names);
  free(s.fns);
  free(s.by_fn);
  return ok;
}
