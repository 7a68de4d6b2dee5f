/* test_emit.c — optimisation and output (emit.c).
 *
 * A tiny module built by hand with the C API (two ghccc functions, one of which calls
 * C and then tail-calls the other, and a C function returning 42) goes through
 * emit_optimize and out as IR, bitcode, assembly and an object; the object links with
 * clang and runs.  Output is whole or absent, and nothing on the way gives a ghccc
 * function a frame pointer, which would overwrite Sp (rbp). */
#include "support.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>

#include "emit.h"

#ifndef STROBE_CLANG
#define STROBE_CLANG ""
#endif

/* ---- the fixture: a context, the tiny module and a scratch directory ---------------- */

typedef struct Fixture {
  LLVMContextRef ctx;
  LLVMModuleRef m;
  char dir[64];
} Fixture;

/* In the module:
 *   ghccc void @strobe_test_g(ptr %base, ptr %sp, ptr %hp, i64 %r1) noinline:
 *                                     call void @strobe_test_hook(ptr %hp) (C), ret void
 *   ghccc void @strobe_test_f(same): call void @strobe_test_hook(ptr %sp) (C), then
 *                                     musttail call ghccc @strobe_test_g(same args)
 *   i32 @strobe_test_answer(): ret i32 42 */
static LLVMModuleRef tiny_module(LLVMContextRef ctx) {
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("tiny", ctx);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMTypeRef vd = LLVMVoidTypeInContext(ctx);
  LLVMTypeRef stg_params[] = {ptr, ptr, ptr, i64};
  LLVMTypeRef stg = LLVMFunctionType(vd, stg_params, 4, 0);

  LLVMTypeRef hook_ty = LLVMFunctionType(vd, &ptr, 1, 0);
  LLVMValueRef hook = LLVMAddFunction(m, "strobe_test_hook", hook_ty);

  /* -O1 and up would delete a call to an empty g, or inline a small one: the musttail
   * call would go.  So g has an effect and is noinline. */
  LLVMValueRef g = LLVMAddFunction(m, "strobe_test_g", stg);
  LLVMSetFunctionCallConv(g, LLVMGHCCallConv);
  LLVMAddAttributeAtIndex(
      g, LLVMAttributeFunctionIndex,
      LLVMCreateEnumAttribute(ctx, LLVMGetEnumAttributeKindForName("noinline", 8), 0));
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, g, "entry"));
  LLVMValueRef hp = LLVMGetParam(g, 2);
  LLVMBuildCall2(b, hook_ty, hook, &hp, 1, "");
  LLVMBuildRetVoid(b);

  LLVMValueRef f = LLVMAddFunction(m, "strobe_test_f", stg);
  LLVMSetFunctionCallConv(f, LLVMGHCCallConv);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, "entry"));
  LLVMValueRef sp = LLVMGetParam(f, 1);
  LLVMBuildCall2(b, hook_ty, hook, &sp, 1, "");
  LLVMValueRef args[4];
  for (unsigned i = 0; i < 4; i++) args[i] = LLVMGetParam(f, i);
  LLVMValueRef call = LLVMBuildCall2(b, stg, g, args, 4, "");
  LLVMSetInstructionCallConv(call, LLVMGHCCallConv);
  LLVMSetTailCallKind(call, LLVMTailCallKindMustTail);
  LLVMBuildRetVoid(b);

  LLVMTypeRef answer_ty = LLVMFunctionType(i32, NULL, 0, 0);
  LLVMValueRef answer = LLVMAddFunction(m, "strobe_test_answer", answer_ty);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, answer, "entry"));
  LLVMBuildRet(b, LLVMConstInt(i32, 42, 0));

  LLVMDisposeBuilder(b);
  return m;
}

static int setup(void **state) {
  Fixture *fx = calloc(1, sizeof *fx);
  if (!fx) return -1;
  fx->ctx = LLVMContextCreate();
  fx->m = tiny_module(fx->ctx);
  snprintf(fx->dir, sizeof fx->dir, "/tmp/strobe-test-emit.XXXXXX");
  if (!mkdtemp(fx->dir)) return -1;
  *state = fx;
  return 0;
}

/* Removes the scratch directory and what is in it (files and empty directories). */
static int teardown(void **state) {
  Fixture *fx = *state;
  DIR *d = opendir(fx->dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", fx->dir, e->d_name);
      if (unlink(path) != 0) rmdir(path);
    }
    closedir(d);
  }
  rmdir(fx->dir);
  LLVMDisposeModule(fx->m);
  LLVMContextDispose(fx->ctx);
  free(fx);
  return 0;
}

#define EMIT_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ---- helpers -------------------------------------------------------------------- */

/* fx->dir/name, in a static buffer (one at a time). */
static const char *in_dir(const Fixture *fx, const char *name) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", fx->dir, name);
  return path;
}

/* The whole file, NUL-terminated (malloc'd); its size in *size if size is not NULL. */
static char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot read '%s'", path);
  Capture c;
  capture_begin(&c);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) fwrite(buf, 1, n, c.out);
  fclose(f);
  char *text = capture_end(&c);
  if (size) *size = c.size;
  return text;
}

static void assert_verifies(LLVMModuleRef m) {
  char *msg = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) fail_msg("invalid module: %s", msg);
  LLVMDisposeMessage(msg);
}

static LLVMTargetMachineRef machine(int opt_level) {
  char *error = NULL;
  LLVMTargetMachineRef tm = emit_target_machine(opt_level, true, &error);
  if (!tm) fail_msg("no target machine: %s", error);
  return tm;
}

static void optimize(LLVMModuleRef m, LLVMTargetMachineRef tm, int opt_level) {
  char *error = NULL;
  if (!emit_optimize(m, tm, opt_level, &error)) fail_msg("-O%d: %s", opt_level, error);
}

static void emit(LLVMModuleRef m, LLVMTargetMachineRef tm, EmitKind kind, const char *path) {
  char *error = NULL;
  if (!emit_module(m, tm, kind, path, &error)) fail_msg("emitting '%s': %s", path, error);
}

/* The names in dir other than . and .., space-separated (malloc'd). */
static char *dir_names(const char *dir) {
  Capture c;
  capture_begin(&c);
  DIR *d = opendir(dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      fprintf(c.out, "%s%s", c.size ? " " : "", e->d_name);
  closedir(d);
  return capture_end(&c);
}

/* Runs argv (argv[0] a path) and returns its exit status; fails if it did not exit. */
static int run(char *const argv[]) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    execv(argv[0], argv);
    _exit(127);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status)) fail_msg("'%s' did not exit (status %#x)", argv[0], status);
  return WEXITSTATUS(status);
}

/* The assembly of one function: from "name:" to the next ".Lfunc_end" (malloc'd). */
static char *function_asm(const char *s, const char *name) {
  char label[128];
  snprintf(label, sizeof label, "\n%s:", name);
  const char *start = strstr(s, label);
  if (!start) fail_msg("no '%s' in:\n%s", name, s);
  const char *end = strstr(start, ".Lfunc_end");
  if (!end) fail_msg("'%s' has no end in:\n%s", name, s);
  return strndup(start, (size_t)(end - start));
}

/* ---- suffixes and target machines --------------------------------------------------- */

static void test_kind_from_suffix(void **state) {
  (void)state;
  EmitKind k = EMIT_KIND_OBJ;
  assert_true(emit_kind_from_suffix("Foo.ll", &k));
  assert_int_equal(k, EMIT_KIND_LLVM);
  assert_true(emit_kind_from_suffix("dir.o/Foo.bc", &k));
  assert_int_equal(k, EMIT_KIND_BC);
  assert_true(emit_kind_from_suffix("/tmp/Foo.s", &k));
  assert_int_equal(k, EMIT_KIND_ASM);
  assert_true(emit_kind_from_suffix("Foo.dump-cmm.o", &k));
  assert_int_equal(k, EMIT_KIND_OBJ);

  k = EMIT_KIND_LLVM;
  static const char *const others[] = {"Foo", "Foo.S", "Foo.obj", "Foo.lll", "Foo.ll.txt",
                                       ".o", "dir/.ll", "-", "", "Foo.", "Foo.c"};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (emit_kind_from_suffix(others[i], &k)) fail_msg("'%s' has a kind", others[i]);
  assert_false(emit_kind_from_suffix(NULL, &k));
  assert_int_equal(k, EMIT_KIND_LLVM); /* untouched */
}

static void test_target_machine(void **state) {
  (void)state;
  for (int o = 0; o <= 3; o++) {
    LLVMTargetMachineRef tm = machine(o);
    char *triple = LLVMGetTargetMachineTriple(tm);
    if (strncmp(triple, "x86_64-", 7) != 0) fail_msg("triple '%s'", triple);
    LLVMDisposeMessage(triple);
    LLVMDisposeTargetMachine(tm);
  }
  char *error = NULL;
  assert_null(emit_target_machine(4, true, &error));
  assert_string_equal(error, "optimisation level 4: expected 0, 1, 2 or 3");
  free(error);
  assert_null(emit_target_machine(-1, true, NULL)); /* no message wanted: none made */
}

static void test_prepare_sets_triple_and_layout(void **state) {
  Fixture *fx = *state;
  assert_verifies(fx->m);
  LLVMTargetMachineRef tm = machine(0);
  char *error = NULL;
  assert_true(emit_prepare_module(fx->m, tm, &error));
  char *triple = LLVMGetTargetMachineTriple(tm);
  assert_string_equal(LLVMGetTarget(fx->m), triple);
  LLVMDisposeMessage(triple);
  assert_true(strncmp(LLVMGetDataLayoutStr(fx->m), "e-m:e-", 6) == 0);
  LLVMDisposeTargetMachine(tm);
}

/* ---- optimisation --------------------------------------------------------------- */

static void check_optimized(Fixture *fx, int opt_level) {
  LLVMTargetMachineRef tm = machine(opt_level);
  optimize(fx->m, tm, opt_level);
  assert_verifies(fx->m);
  LLVMValueRef f = LLVMGetNamedFunction(fx->m, "strobe_test_f");
  assert_non_null(f);
  assert_int_equal(LLVMGetFunctionCallConv(f), LLVMGHCCallConv);
  assert_non_null(LLVMGetNamedFunction(fx->m, "strobe_test_answer"));
  /* The musttail call survives, as the last call before the ret. */
  LLVMValueRef ret = LLVMGetLastInstruction(LLVMGetLastBasicBlock(f));
  LLVMValueRef call = LLVMGetPreviousInstruction(ret);
  assert_non_null(call);
  assert_int_equal(LLVMGetInstructionOpcode(call), LLVMCall);
  assert_int_equal(LLVMGetTailCallKind(call), LLVMTailCallKindMustTail);
  LLVMDisposeTargetMachine(tm);
}

static void test_optimize_O0(void **state) { check_optimized(*state, 0); }
static void test_optimize_O1(void **state) { check_optimized(*state, 1); }
static void test_optimize_O2(void **state) { check_optimized(*state, 2); }
static void test_optimize_O3(void **state) { check_optimized(*state, 3); }

static void test_optimize_bad_level(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(2);
  char *error = NULL;
  assert_false(emit_optimize(fx->m, tm, 9, &error));
  assert_string_equal(error, "optimisation level 9: expected 0, 1, 2 or 3");
  free(error);
  LLVMDisposeTargetMachine(tm);
}

/* ---- output --------------------------------------------------------------------- */

static void test_write_ll(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(0);
  emit(fx->m, tm, EMIT_KIND_LLVM, in_dir(fx, "t.ll"));
  char *text = slurp(in_dir(fx, "t.ll"), NULL);
  assert_true(strncmp(text, "; ModuleID = 'tiny'", 19) == 0);
  assert_non_null(strstr(text, "define ghccc void @strobe_test_f("));
  assert_non_null(strstr(text, "musttail call ghccc void @strobe_test_g("));
  assert_non_null(strstr(text, "target triple = \"x86_64-"));
  free(text);
  char *names = dir_names(fx->dir);
  assert_string_equal(names, "t.ll"); /* no temporary file left */
  free(names);
  LLVMDisposeTargetMachine(tm);
}

static void test_write_bc(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(0);
  emit(fx->m, tm, EMIT_KIND_BC, in_dir(fx, "t.bc"));
  size_t size;
  char *bytes = slurp(in_dir(fx, "t.bc"), &size);
  assert_true(size > 4);
  assert_memory_equal(bytes, "BC\xC0\xDE", 4);
  free(bytes);
  LLVMDisposeTargetMachine(tm);
}

static void test_write_asm(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(2);
  emit(fx->m, tm, EMIT_KIND_ASM, in_dir(fx, "t.s"));
  char *text = slurp(in_dir(fx, "t.s"), NULL);
  assert_non_null(strstr(text, "strobe_test_f:"));
  assert_non_null(strstr(text, "strobe_test_answer:"));
  free(text);
  LLVMDisposeTargetMachine(tm);
}

static void test_write_obj(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(2);
  emit(fx->m, tm, EMIT_KIND_OBJ, in_dir(fx, "t.o"));
  size_t size;
  char *bytes = slurp(in_dir(fx, "t.o"), &size);
  assert_true(size > 64);
  assert_memory_equal(bytes, "\x7f" "ELF\x02\x01", 6); /* ELF, 64-bit, little-endian */
  free(bytes);
  LLVMDisposeTargetMachine(tm);
}

/* "-" is standard output (here redirected to a file). */
static void test_write_stdout(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(0);
  char out[512];
  snprintf(out, sizeof out, "%s", in_dir(fx, "stdout.ll"));
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(saved >= 0 && fd >= 0);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  char *error = NULL;
  bool ok = emit_module(fx->m, tm, EMIT_KIND_LLVM, "-", &error);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  if (!ok) fail_msg("%s", error);
  char *text = slurp(out, NULL);
  assert_true(strncmp(text, "; ModuleID = 'tiny'", 19) == 0);
  free(text);
  LLVMDisposeTargetMachine(tm);
}

/* Code generation runs on a copy: the module prints the same before and after.  Run on
 * the module itself, CodeGenPrepare would sink this function's address computation
 * into the block that loads from it. */
static void test_codegen_leaves_module(void **state) {
  Fixture *fx = *state;
  LLVMContextRef ctx = fx->ctx;
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0), i1 = LLVMInt1TypeInContext(ctx);
  LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx);
  LLVMTypeRef params[] = {ptr, i1};
  LLVMValueRef h = LLVMAddFunction(fx->m, "strobe_test_sink", LLVMFunctionType(i32, params, 2, 0));
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, h, "entry");
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(ctx, h, "then");
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(ctx, h, "else");
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef offset = LLVMConstInt(LLVMInt64TypeInContext(ctx), 40, 0);
  LLVMValueRef addr = LLVMBuildGEP2(b, i8, LLVMGetParam(h, 0), &offset, 1, "addr");
  LLVMBuildCondBr(b, LLVMGetParam(h, 1), then, other);
  LLVMPositionBuilderAtEnd(b, then);
  LLVMBuildRet(b, LLVMBuildLoad2(b, i32, addr, "v"));
  LLVMPositionBuilderAtEnd(b, other);
  LLVMBuildRet(b, LLVMConstInt(i32, 1, 0));
  LLVMDisposeBuilder(b);

  LLVMTargetMachineRef tm = machine(2);
  char *error = NULL;
  assert_true(emit_prepare_module(fx->m, tm, &error));
  char *before = LLVMPrintModuleToString(fx->m);
  emit(fx->m, tm, EMIT_KIND_OBJ, in_dir(fx, "t.o"));
  emit(fx->m, tm, EMIT_KIND_ASM, in_dir(fx, "t.s"));
  char *after = LLVMPrintModuleToString(fx->m);
  assert_string_equal(before, after);
  LLVMDisposeMessage(before);
  LLVMDisposeMessage(after);
  LLVMDisposeTargetMachine(tm);
}

/* A write that fails says where and leaves nothing behind. */
static void test_failed_write(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(0);
  static const EmitKind kinds[] = {EMIT_KIND_LLVM, EMIT_KIND_BC, EMIT_KIND_ASM, EMIT_KIND_OBJ};
  char path[512], expected[600];

  /* A directory that does not exist. */
  snprintf(path, sizeof path, "%s/missing/t.o", fx->dir);
  snprintf(expected, sizeof expected, "cannot write '%s': No such file or directory", path);
  for (size_t i = 0; i < 4; i++) {
    char *error = NULL;
    assert_false(emit_module(fx->m, tm, kinds[i], path, &error));
    assert_string_equal(error, expected);
    free(error);
  }
  char *names = dir_names(fx->dir);
  assert_string_equal(names, "");
  free(names);

  /* The temporary file is made, the rename over a directory fails: it is removed. */
  snprintf(path, sizeof path, "%s/out.ll", fx->dir);
  assert_int_equal(mkdir(path, 0755), 0);
  for (size_t i = 0; i < 4; i++) {
    char *error = NULL;
    assert_false(emit_module(fx->m, tm, kinds[i], path, &error));
    assert_non_null(strstr(error, "cannot write '"));
    free(error);
  }
  names = dir_names(fx->dir);
  assert_string_equal(names, "out.ll");
  free(names);

  char *error = NULL;
  assert_false(emit_module(fx->m, tm, EMIT_KIND_LLVM, "", &error));
  assert_string_equal(error, "no output file name");
  free(error);
  LLVMDisposeTargetMachine(tm);
}

/* Invalid IR is an error, not a crash in the code generator, and writes nothing. */
static void test_invalid_module(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(2);
  LLVMValueRef answer = LLVMGetNamedFunction(fx->m, "strobe_test_answer");
  LLVMBuilderRef b = LLVMCreateBuilderInContext(fx->ctx);
  /* A second block with no terminator. */
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(fx->ctx, answer, "dangling"));
  LLVMDisposeBuilder(b);
  char *error = NULL;
  assert_false(emit_module(fx->m, tm, EMIT_KIND_OBJ, in_dir(fx, "t.o"), &error));
  assert_true(strncmp(error, "invalid LLVM IR: ", 17) == 0);
  free(error);
  error = NULL;
  assert_false(emit_optimize(fx->m, tm, 2, &error));
  assert_true(strncmp(error, "invalid LLVM IR: ", 17) == 0);
  free(error);
  char *names = dir_names(fx->dir);
  assert_string_equal(names, "");
  free(names);
  LLVMDisposeTargetMachine(tm);
}

/* An error LLVM reports through the context (here the assembler's, on module-level
 * asm) comes back as an error; by default LLVM would print it and exit(1). */
static void test_codegen_error(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(0);
  static const char bogus[] = "strobe_bogus_mnemonic %rax";
  LLVMAppendModuleInlineAsm(fx->m, bogus, sizeof bogus - 1);
  char *error = NULL;
  assert_false(emit_module(fx->m, tm, EMIT_KIND_OBJ, in_dir(fx, "t.o"), &error));
  if (strncmp(error, "code generation: ", 17) != 0 ||
      !strstr(error, "invalid instruction mnemonic 'strobe_bogus_mnemonic'") ||
      error[strlen(error) - 1] == '\n')
    fail_msg("got '%s'", error);
  free(error);
  char *names = dir_names(fx->dir);
  assert_string_equal(names, "");
  free(names);
  /* The handler is the context's own again, and a good module emits. */
  assert_null(LLVMContextGetDiagnosticHandler(fx->ctx));
  LLVMSetModuleInlineAsm2(fx->m, "", 0);
  emit(fx->m, tm, EMIT_KIND_OBJ, in_dir(fx, "t.o"));
  LLVMDisposeTargetMachine(tm);
}

/* ---- the object links and runs ------------------------------------------------------ */

static void test_object_links_and_runs(void **state) {
  Fixture *fx = *state;
  if (access(STROBE_CLANG, X_OK) != 0)
    fail_msg("no clang to link with (STROBE_CLANG is '%s')", STROBE_CLANG);
  LLVMTargetMachineRef tm = machine(2);
  optimize(fx->m, tm, 2);
  char obj[512], main_c[512], exe[512];
  snprintf(obj, sizeof obj, "%s", in_dir(fx, "t.o"));
  snprintf(main_c, sizeof main_c, "%s", in_dir(fx, "main.c"));
  snprintf(exe, sizeof exe, "%s", in_dir(fx, "a.out"));
  emit(fx->m, tm, EMIT_KIND_OBJ, obj);
  FILE *f = fopen(main_c, "w");
  assert_non_null(f);
  fputs("int strobe_test_answer(void);\n"
        "void strobe_test_hook(void *sp) { (void)sp; }\n"
        "int main(void) { return strobe_test_answer(); }\n",
        f);
  fclose(f);
  /* clang's default on Debian is a PIE: the object must be PIC to link. */
  char *cc[] = {STROBE_CLANG, obj, main_c, "-o", exe, NULL};
  assert_int_equal(run(cc), 0);
  char *prog[] = {exe, NULL};
  assert_int_equal(run(prog), 42);
  LLVMDisposeTargetMachine(tm);
}

/* ---- ghccc and the frame pointer (docs/lowering.md, "Functions") -------------------- */

/* At -O0 and -O2 nothing adds a frame-pointer attribute, and the code of the ghccc
 * function that calls C neither sets rbp up as a frame pointer nor loses Sp: rbp
 * itself goes to the C call as its argument. */
static void check_no_frame_pointer(Fixture *fx, int opt_level) {
  LLVMTargetMachineRef tm = machine(opt_level);
  optimize(fx->m, tm, opt_level);
  emit(fx->m, tm, EMIT_KIND_LLVM, in_dir(fx, "t.ll"));
  emit(fx->m, tm, EMIT_KIND_ASM, in_dir(fx, "t.s"));
  char *ir = slurp(in_dir(fx, "t.ll"), NULL);
  if (strstr(ir, "frame-pointer")) fail_msg("-O%d added a frame pointer:\n%s", opt_level, ir);
  free(ir);
  char *s = slurp(in_dir(fx, "t.s"), NULL);
  char *f = function_asm(s, "strobe_test_f");
  if (strstr(f, "%rsp, %rbp") || strstr(f, "pushq\t%rbp"))
    fail_msg("-O%d: rbp set up as a frame pointer:\n%s", opt_level, f);
  if (!strstr(f, "movq\t%rbp, %rdi"))
    fail_msg("-O%d: Sp (rbp) is not what the C call gets:\n%s", opt_level, f);
  free(f);
  free(s);
  LLVMDisposeTargetMachine(tm);
}

static void test_no_frame_pointer_O0(void **state) { check_no_frame_pointer(*state, 0); }
static void test_no_frame_pointer_O2(void **state) { check_no_frame_pointer(*state, 2); }

/* Gives f the attribute "frame-pointer"=value (replacing one it has). */
static void set_frame_pointer(LLVMValueRef f, const char *value) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(f));
  LLVMAttributeRef a =
      LLVMCreateStringAttribute(ctx, "frame-pointer", 13, value, (unsigned)strlen(value));
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, a);
}

/* A ghccc function that asks for a frame pointer is refused; "none" and "reserved"
 * (rbp kept out of register allocation, not made a frame pointer) are fine. */
static void test_frame_pointer_refused(void **state) {
  Fixture *fx = *state;
  LLVMTargetMachineRef tm = machine(0);
  LLVMValueRef f = LLVMGetNamedFunction(fx->m, "strobe_test_f");
  static const char *const bad[] = {"all", "non-leaf", "non-leaf-no-reserve"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    set_frame_pointer(f, bad[i]);
    char *error = NULL, expected[200];
    assert_false(emit_module(fx->m, tm, EMIT_KIND_ASM, in_dir(fx, "t.s"), &error));
    snprintf(expected, sizeof expected,
             "ghccc function 'strobe_test_f' has \"frame-pointer\"=\"%s\": the frame "
             "pointer would overwrite Sp (rbp)",
             bad[i]);
    assert_string_equal(error, expected);
    free(error);
  }
  static const char *const good[] = {"none", "reserved"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    set_frame_pointer(f, good[i]);
    emit(fx->m, tm, EMIT_KIND_ASM, in_dir(fx, "t.s"));
    char *s = slurp(in_dir(fx, "t.s"), NULL);
    char *code = function_asm(s, "strobe_test_f");
    if (strstr(code, "%rsp, %rbp") || !strstr(code, "movq\t%rbp, %rdi"))
      fail_msg("with \"%s\", Sp (rbp) is lost:\n%s", good[i], code);
    free(code);
    free(s);
  }
  /* The C function may have one. */
  set_frame_pointer(LLVMGetNamedFunction(fx->m, "strobe_test_answer"), "all");
  emit(fx->m, tm, EMIT_KIND_ASM, in_dir(fx, "t.s"));
  LLVMDisposeTargetMachine(tm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kind_from_suffix),
      cmocka_unit_test(test_target_machine),
      EMIT_TEST(test_prepare_sets_triple_and_layout),
      EMIT_TEST(test_optimize_O0),
      EMIT_TEST(test_optimize_O1),
      EMIT_TEST(test_optimize_O2),
      EMIT_TEST(test_optimize_O3),
      EMIT_TEST(test_optimize_bad_level),
      EMIT_TEST(test_write_ll),
      EMIT_TEST(test_write_bc),
      EMIT_TEST(test_write_asm),
      EMIT_TEST(test_write_obj),
      EMIT_TEST(test_write_stdout),
      EMIT_TEST(test_codegen_leaves_module),
      EMIT_TEST(test_failed_write),
      EMIT_TEST(test_invalid_module),
      EMIT_TEST(test_codegen_error),
      EMIT_TEST(test_object_links_and_runs),
      EMIT_TEST(test_no_frame_pointer_O0),
      EMIT_TEST(test_no_frame_pointer_O2),
      EMIT_TEST(test_frame_pointer_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
