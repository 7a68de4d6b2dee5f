/* test_plugin.c — the C core of the strobe-instrument pass (plugin/instrument.c): glob
 * selection, the list-file parser and its errors, the Haskell name of a function, and
 * sp_instrument_module on small modules (what is instrumented, no residue, errors that
 * leave the module as it was).  The IR shapes are in lit-tests/plugin/. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>

#include "instrument.h"

/* ---- fixtures ------------------------------------------------------------------- */

static int options_setup(void **state) {
  SpOptions *o = malloc(sizeof *o);
  if (!o) return -1;
  sp_options_init(o);
  *state = o;
  return 0;
}

static int options_teardown(void **state) {
  sp_options_free(*state);
  free(*state);
  return 0;
}

#define OPTIONS_TEST(f) cmocka_unit_test_setup_teardown(f, options_setup, options_teardown)

/* Parses text as a list file named "list.txt"; the error (or NULL) in *error. */
static bool parse(SpOptions *o, const char *text, char **error) {
  *error = NULL;
  return sp_options_parse_list_text(o, text, "list.txt", error);
}

static void assert_parse_error(const char *text, const char *message) {
  SpOptions o;
  sp_options_init(&o);
  assert_true(sp_options_add_globs(&o, "Keep.me", NULL));
  char *error;
  assert_false(parse(&o, text, &error));
  assert_non_null(error);
  assert_string_equal(error, message);
  free(error);
  /* A failed parse adds nothing, even what came before the error. */
  assert_int_equal(o.always.count, 1);
  assert_int_equal(o.never.count, 0);
  sp_options_free(&o);
}

/* ---- globs ---------------------------------------------------------------------- */

static void test_nothing_selects_nothing(void **state) {
  SpOptions *o = *state;
  assert_false(sp_selected(o, "Main.fact"));
  assert_false(sp_excluded(o, "Main.fact"));
  assert_true(sp_options_add_globs(o, "", NULL));
  assert_false(sp_selected(o, "Main.fact"));
}

static void test_globs_select(void **state) {
  SpOptions *o = *state;
  char *error = NULL;
  assert_true(sp_options_add_globs(o, "Main.fact*,,Data.Map.?nsert,", &error));
  assert_null(error);
  assert_int_equal(o->always.count, 2);
  assert_true(sp_selected(o, "Main.fact"));
  assert_true(sp_selected(o, "Main.factorial"));
  assert_true(sp_selected(o, "Data.Map.insert"));
  assert_false(sp_selected(o, "Data.Map.inserts"));
  assert_false(sp_selected(o, "Main.main"));
  assert_false(sp_selected(o, "XMain.fact"));
  /* `*` crosses module dots: globs match the whole Haskell name as a string. */
  assert_true(sp_options_add_globs(o, "*.go", NULL));
  assert_true(sp_selected(o, "Data.List.go"));
  assert_false(sp_excluded(o, "Data.List.go"));
}

/* ---- list files ----------------------------------------------------------------- */

static void test_list_always_never(void **state) {
  SpOptions *o = *state;
  char *error;
  assert_true(parse(o,
                    "# a comment\n"
                    "\n"
                    "[always]\n"
                    "fun:Main.*\n"
                    "  fun:  Data.Map.insert  \r\n"
                    "[never]\n"
                    "\t# indented comment\n"
                    "fun:Main.helper\n"
                    "[always]\n"
                    "fun:Lib.*",
                    &error));
  assert_null(error);
  assert_int_equal(o->always.count, 3);
  assert_int_equal(o->never.count, 1);
  assert_string_equal(o->always.items[1], "Data.Map.insert");
  assert_true(sp_selected(o, "Main.fact"));
  assert_true(sp_selected(o, "Data.Map.insert"));
  assert_true(sp_selected(o, "Lib.f"));
  /* [never] wins. */
  assert_false(sp_selected(o, "Main.helper"));
  assert_true(sp_excluded(o, "Main.helper"));
}

static void test_never_wins_over_globs(void **state) {
  SpOptions *o = *state;
  char *error;
  assert_true(parse(o, "[never]\nfun:Main.secret*\n", &error));
  assert_true(sp_options_add_globs(o, "*", &error));
  assert_true(sp_selected(o, "Main.fact"));
  assert_false(sp_selected(o, "Main.secret"));
  assert_false(sp_selected(o, "Main.secretly"));
}

static void test_empty_list(void **state) {
  SpOptions *o = *state;
  char *error;
  assert_true(parse(o, "", &error));
  assert_true(parse(o, "# nothing\n\n[always]\n[never]\n", &error));
  assert_int_equal(o->always.count + o->never.count, 0);
}

static void test_list_errors(void **state) {
  (void)state;
  assert_parse_error("[always]\nfun:A\n[sometimes]\n",
                     "list.txt:3: error: unknown section '[sometimes]', expected '[always]' or '[never]'");
  assert_parse_error("[always]\nsrc:Fact.hs\n", "list.txt:2: error: expected 'fun:PATTERN', got 'src:Fact.hs'");
  assert_parse_error("\n  fun:Main.x\n",
                     "list.txt:2: error: 'fun:Main.x' is in no section, expected '[always]' or '[never]' before it");
  assert_parse_error("[never]\nfun:\n", "list.txt:2: error: expected a pattern after 'fun:'");
  assert_parse_error("[never]\nfun:a\nMain.b\n", "list.txt:3: error: expected 'fun:PATTERN', got 'Main.b'");
}

/* Writes text to a new temporary file; returns its path (malloc'd). */
static char *temp_file(const char *text) {
  char *path = strdup("/tmp/strobe-test-plugin-XXXXXX");
  assert_non_null(path);
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
  return path;
}

static void test_list_file(void **state) {
  SpOptions *o = *state;
  char *path = temp_file("[always]\nfun:Main.fact\n[never]\nfun:Main.main\n");
  char *error = NULL;
  assert_true(sp_options_parse_list(o, path, &error));
  assert_null(error);
  assert_true(sp_selected(o, "Main.fact"));
  assert_true(sp_excluded(o, "Main.main"));
  unlink(path);
  free(path);

  path = temp_file("[always]\nfun:A\nbad\n");
  assert_false(sp_options_parse_list(o, path, &error));
  char expected[256];
  snprintf(expected, sizeof expected, "%s:3: error: expected 'fun:PATTERN', got 'bad'", path);
  assert_string_equal(error, expected);
  free(error);
  unlink(path);
  free(path);

  assert_false(sp_options_parse_list(o, "/nonexistent/list.txt", &error));
  assert_string_equal(error, "/nonexistent/list.txt: error: cannot open the list file: No such file or directory");
  free(error);
}

/* ---- modules -------------------------------------------------------------------- */

static const char module_text[] =
    "declare void @strobe.tick(ptr, i64)\n"
    "declare void @strobe.pop(i64)\n"
    "declare void @strobe.ret(i64)\n"
    "@desc = private constant [56 x i8] zeroinitializer, section \"strobe_ticks\", align 8\n"
    "define ghccc void @fact(ptr %Sp) \"strobe-name\"=\"Main.fact\" {\n"
    "  %sp = ptrtoint ptr %Sp to i64\n"
    "  call void @strobe.ret(i64 %sp)\n"
    "  call void @strobe.tick(ptr @desc, i64 %sp)\n"
    "  %up = add i64 %sp, 8\n"
    "  call void @strobe.pop(i64 %up)\n"
    "  ret void\n"
    "}\n"
    "define ghccc void @helper(ptr %Sp) \"strobe-name\"=\"Main.helper\" {\n"
    "  %sp = ptrtoint ptr %Sp to i64\n"
    "  call void @strobe.tick(ptr @desc, i64 %sp)\n"
    "  %up = add i64 %sp, 8\n"
    "  call void @strobe.pop(i64 %up)\n"
    "  ret void\n"
    "}\n"
    "define ghccc void @main(ptr %Sp) \"strobe-instrument\" \"strobe-name\"=\"Main.main\" {\n"
    "  %sp = ptrtoint ptr %Sp to i64\n"
    "  call void @strobe.tick(ptr @desc, i64 %sp)\n"
    "  ret void\n"
    "}\n"
    "define void @anonymous(i64 %sp) {\n"
    "  call void @strobe.ret(i64 %sp)\n"
    "  ret void\n"
    "}\n";

static LLVMModuleRef parse_module(LLVMContextRef ctx, const char *text) {
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(text, strlen(text), "test.ll");
  LLVMModuleRef m = NULL;
  char *msg = NULL;
  if (LLVMParseIRInContext(ctx, buf, &m, &msg)) fail_msg("cannot parse the test module: %s", msg);
  return m;
}

/* How many calls in f call a function whose name starts with prefix. */
static int calls_to(LLVMValueRef f, const char *prefix) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsACallInst(i)) continue;
      size_t len;
      const char *name = LLVMGetValueName2(LLVMGetCalledValue(i), &len);
      if (strncmp(name, prefix, strlen(prefix)) == 0) n++;
    }
  return n;
}

/* The calls in f of inline asm `call <entry>_cold@PLT`: the cold paths (Note [The cold
 * calls] in plugin/instrument.c). */
static int cold_calls_to(LLVMValueRef f, const char *entry) {
  char want[64];
  snprintf(want, sizeof want, "call %s_cold@PLT", entry);
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsACallInst(i) || !LLVMIsAInlineAsm(LLVMGetCalledValue(i))) continue;
      size_t len;
      const char *text = LLVMGetInlineAsmAsmString(LLVMGetCalledValue(i), &len);
      if (len == strlen(want) && memcmp(text, want, len) == 0) n++;
    }
  return n;
}

static bool has_attribute(LLVMValueRef f, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  return LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, kind) != NULL;
}

static int instructions(LLVMValueRef f) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

static void test_function_name(void **state) {
  (void)state;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = parse_module(ctx, module_text);
  char *name = sp_function_name(LLVMGetNamedFunction(m, "fact"));
  assert_string_equal(name, "Main.fact");
  free(name);
  /* Neither "strobe-name" nor a DISubprogram: the LLVM name. */
  name = sp_function_name(LLVMGetNamedFunction(m, "anonymous"));
  assert_string_equal(name, "anonymous");
  free(name);
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
}

static void test_instrument_module(void **state) {
  SpOptions *o = *state;
  assert_true(sp_options_add_globs(o, "Main.fact", NULL));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = parse_module(ctx, module_text);
  assert_true(sp_module_has_intrinsics(m));
  assert_true(sp_function_instrumented(LLVMGetNamedFunction(m, "fact"), o));
  assert_false(sp_function_instrumented(LLVMGetNamedFunction(m, "helper"), o));
  assert_true(sp_function_instrumented(LLVMGetNamedFunction(m, "main"), o));

  char *error = (char *)"not reset";
  assert_true(sp_instrument_module(m, o, &error));
  assert_null(error);
  assert_false(sp_module_has_intrinsics(m));
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    assert_int_equal(calls_to(f, "strobe."), 0);
  LLVMValueRef fact = LLVMGetNamedFunction(m, "fact");
  /* one cold call, the tick's, through its trampoline; pops and rets have none */
  assert_int_equal(cold_calls_to(fact, "strobe_tick"), 1);
  assert_int_equal(cold_calls_to(fact, "strobe_ret") + cold_calls_to(fact, "strobe_pop"), 0);
  assert_int_equal(calls_to(fact, "strobe_"), 0);
  assert_int_equal(calls_to(fact, "llvm.threadlocal.address"), 3);
  assert_true(has_attribute(fact, "noredzone")); /* the cold call pushes below rsp */
  /* Not instrumented: the calls and what only computed their arguments are gone. */
  LLVMValueRef helper = LLVMGetNamedFunction(m, "helper");
  assert_int_equal(instructions(helper), 1);
  assert_false(has_attribute(helper, "noredzone"));
  assert_int_equal(cold_calls_to(LLVMGetNamedFunction(m, "main"), "strobe_tick"), 1);
  assert_int_equal(instructions(LLVMGetNamedFunction(m, "anonymous")), 1);
  LLVMValueRef head = LLVMGetNamedGlobal(m, "strobe_dynstack_head");
  assert_non_null(head);
  assert_int_equal(LLVMGetThreadLocalMode(head), LLVMInitialExecTLSModel);
  char *msg = NULL;
  assert_false(LLVMVerifyModule(m, LLVMReturnStatusAction, &msg));
  LLVMDisposeMessage(msg);
  /* code for the executable that links the runtime: local-exec */
  LLVMModuleRef exe = parse_module(ctx, module_text);
  o->local_exec = true;
  assert_true(sp_instrument_module(exe, o, NULL));
  o->local_exec = false;
  assert_int_equal(LLVMGetThreadLocalMode(LLVMGetNamedGlobal(exe, "strobe_dynstack_head")),
                   LLVMLocalExecTLSModel);
  LLVMDisposeModule(exe);

  /* Running again changes nothing. */
  char *before = LLVMPrintModuleToString(m);
  assert_true(sp_instrument_module(m, o, &error));
  char *after = LLVMPrintModuleToString(m);
  assert_string_equal(before, after);
  LLVMDisposeMessage(before);
  LLVMDisposeMessage(after);
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
}

static void test_pops_everywhere(void **state) {
  SpOptions *o = *state;
  o->pops_everywhere = true;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = parse_module(ctx, module_text);
  assert_true(sp_instrument_module(m, o, NULL));
  /* a fast path reads the head once: fact keeps its ret and pop, not its tick */
  LLVMValueRef fact = LLVMGetNamedFunction(m, "fact");
  assert_int_equal(cold_calls_to(fact, "strobe_tick"), 0);
  assert_int_equal(calls_to(fact, "llvm.threadlocal.address"), 2);
  assert_int_equal(calls_to(LLVMGetNamedFunction(m, "helper"), "llvm.threadlocal.address"), 1);
  assert_int_equal(cold_calls_to(LLVMGetNamedFunction(m, "main"), "strobe_tick"), 1);
  assert_int_equal(calls_to(LLVMGetNamedFunction(m, "anonymous"), "llvm.threadlocal.address"), 1);
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
}

static void test_module_errors_change_nothing(void **state) {
  SpOptions *o = *state;
  static const char *const bad[][2] = {
      {"declare void @strobe.pop(i32)\n"
       "define void @f() \"strobe-instrument\" {\n  call void @strobe.pop(i32 0)\n  ret void\n}\n",
       "strobe-instrument: the intrinsic 'strobe.pop' has type 'void (i32)', expected 'void (i64)'"},
      {"declare void @strobe.ret(i64)\n@p = global ptr @strobe.ret\n",
       "strobe-instrument: the intrinsic 'strobe.ret' is used other than by a direct call: "
       "@p = global ptr @strobe.ret"},
      {"declare void @strobe.ret(i64)\ndefine void @strobe.tick(ptr %d, i64 %sp) {\n  ret void\n}\n",
       "strobe-instrument: the intrinsic 'strobe.tick' has a body; it must be only declared"},
      {"@strobe_dynstack_head = global i64 0\ndeclare void @strobe.ret(i64)\n",
       "strobe-instrument: 'strobe_dynstack_head' is not thread-local"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef m = parse_module(ctx, bad[k][0]);
    char *before = LLVMPrintModuleToString(m);
    char *error = NULL;
    assert_false(sp_instrument_module(m, o, &error));
    assert_string_equal(error, bad[k][1]);
    free(error);
    char *after = LLVMPrintModuleToString(m);
    assert_string_equal(before, after);
    LLVMDisposeMessage(before);
    LLVMDisposeMessage(after);
    LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      OPTIONS_TEST(test_nothing_selects_nothing),
      OPTIONS_TEST(test_globs_select),
      OPTIONS_TEST(test_list_always_never),
      OPTIONS_TEST(test_never_wins_over_globs),
      OPTIONS_TEST(test_empty_list),
      OPTIONS_TEST(test_list_errors),
      OPTIONS_TEST(test_list_file),
      OPTIONS_TEST(test_function_name),
      OPTIONS_TEST(test_instrument_module),
      OPTIONS_TEST(test_pops_everywhere),
      OPTIONS_TEST(test_module_errors_change_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
