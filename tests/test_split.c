/* test_split.c — code generation split over processes (split.c).
 *
 * A module of three big functions, f0 and f1 exported and helper local (GHC's local
 * labels), with a local variable counter that helper reads: split in two, f0 and f1 are
 * part 0 and helper part 1, so f0's call to helper and helper's load of counter cross
 * parts.  The joined object must be the unsplit one to its users: the same symbols,
 * local and global as there, and a program linked with it prints the same. */
#include "support.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emit.h"

#ifndef STROBE_CLANG
#define STROBE_CLANG ""
#endif

enum { BIG = 1600 }; /* add-mul pairs per function: 3200 instructions */

static LLVMValueRef chain(LLVMBuilderRef b, LLVMTypeRef i64, LLVMValueRef v, unsigned seed,
                          unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    v = LLVMBuildAdd(b, v, LLVMConstInt(i64, seed + i, 0), "");
    v = LLVMBuildMul(b, v, LLVMConstInt(i64, 3, 0), "");
  }
  return v;
}

/* The module, with chains of n add-mul pairs. */
static LLVMModuleRef module(LLVMContextRef ctx, unsigned n) {
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("big", ctx);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef fty = LLVMFunctionType(i64, &i64, 1, 0);
  LLVMValueRef f0 = LLVMAddFunction(m, "strobe_split_f0", fty);
  LLVMValueRef f1 = LLVMAddFunction(m, "strobe_split_f1", fty);
  LLVMValueRef helper = LLVMAddFunction(m, "strobe_split_helper", fty);
  LLVMSetLinkage(helper, LLVMInternalLinkage);
  LLVMValueRef counter = LLVMAddGlobal(m, i64, "strobe_split_counter");
  LLVMSetLinkage(counter, LLVMInternalLinkage);
  LLVMSetInitializer(counter, LLVMConstInt(i64, 5, 0));

  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f0, "entry"));
  LLVMValueRef x = LLVMGetParam(f0, 0);
  LLVMValueRef h = LLVMBuildCall2(b, fty, helper, &x, 1, "");
  LLVMBuildRet(b, LLVMBuildAdd(b, chain(b, i64, x, 1, n), h, ""));

  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f1, "entry"));
  LLVMBuildRet(b, chain(b, i64, LLVMGetParam(f1, 0), 7, n));

  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, helper, "entry"));
  LLVMValueRef c = LLVMBuildLoad2(b, i64, counter, "");
  LLVMBuildRet(b, LLVMBuildAdd(b, chain(b, i64, LLVMGetParam(helper, 0), 11, n), c, ""));
  LLVMDisposeBuilder(b);
  return m;
}

/* The standard output of a shell command, malloc'd; the command must exit 0. */
static char *run(const char *cmd) {
  FILE *p = popen(cmd, "r");
  if (!p) fail_msg("cannot run '%s'", cmd);
  Capture c;
  capture_begin(&c);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) fwrite(buf, 1, n, c.out);
  int status = pclose(p);
  char *out = capture_end(&c);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("'%s' failed:\n%s", cmd, out);
  return out;
}

/* Links obj with a main that calls f0 and f1 and runs it: what it prints. */
static char *link_and_run(const char *dir, const char *obj) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd %s && printf '%%s\\n' '#include <stdio.h>' 'long strobe_split_f0(long);' "
           "'long strobe_split_f1(long);' "
           "'int main(void) { printf(\"%%ld %%ld\\\\n\", strobe_split_f0(3), strobe_split_f1(4)); }' "
           "> main.c && %s main.c %s -o prog && ./prog",
           dir, STROBE_CLANG, obj);
  return run(cmd);
}

/* A scratch directory, a context and a target machine for one test. */
typedef struct {
  char dir[64];
  LLVMContextRef ctx;
  LLVMTargetMachineRef tm;
} Scratch;

static void scratch_begin(Scratch *x) {
  snprintf(x->dir, sizeof x->dir, "/tmp/strobe-test-split.XXXXXX");
  assert_non_null(mkdtemp(x->dir));
  x->ctx = LLVMContextCreate();
  char *error = NULL;
  x->tm = emit_target_machine(1, true, &error);
  if (!x->tm) fail_msg("%s", error);
}

static void scratch_end(Scratch *x) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", x->dir);
  assert_int_equal(system(cmd), 0);
  LLVMDisposeTargetMachine(x->tm);
  LLVMContextDispose(x->ctx);
}

/* What a shell command about a file prints: fmt has one %s, the file's path. */
static char *about(const char *fmt, const char *path) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, fmt, path);
  return run(cmd);
}

static void test_split_is_the_unsplit_object(void **state) {
  (void)state;
  if (!*STROBE_CLANG) fail_msg("no clang to link with");
  Scratch x;
  scratch_begin(&x);
  char one[128], two[128];
  snprintf(one, sizeof one, "%s/one.o", x.dir);
  snprintf(two, sizeof two, "%s/two.o", x.dir);
  LLVMModuleRef m = module(x.ctx, BIG);
  char *error = NULL;
  if (!emit_module(m, x.tm, EMIT_KIND_OBJ, one, &error)) fail_msg("%s", error);
  if (!emit_object_split(m, x.tm, 2, two, &error)) fail_msg("%s", error);
  char *names = about("ls %s", x.dir);
  assert_string_equal(names, "one.o\ntwo.o\n"); /* no part left behind */

  /* The symbols are the unsplit object's, each local or global as there. */
  char *syms_one = about("nm %s | sed 's/^[0-9a-f]* //' | sort", one);
  char *syms_two = about("nm %s | sed 's/^[0-9a-f]* //' | sort", two);
  assert_string_equal(syms_one, syms_two);
  assert_non_null(strstr(syms_two, "t strobe_split_helper\n"));
  assert_non_null(strstr(syms_two, "d strobe_split_counter\n"));
  assert_non_null(strstr(syms_two, "T strobe_split_f0\n"));

  /* Split it is: f0's call to helper crosses parts, so the joined object relocates it
   * against the (now local) symbol, where the unsplit one resolved it in place. */
  char *relocs_one = about("readelf -r %s | grep -c strobe_split_helper || true", one);
  char *relocs_two = about("readelf -r %s | grep -c strobe_split_helper || true", two);
  assert_string_equal(relocs_one, "0\n");
  assert_string_equal(relocs_two, "1\n");

  char *out_one = link_and_run(x.dir, one);
  char *out_two = link_and_run(x.dir, two);
  assert_string_equal(out_one, out_two);

  char *all[] = {names, syms_one, syms_two, relocs_one, relocs_two, out_one, out_two};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
  LLVMDisposeModule(m);
  scratch_end(&x);
}

/* A module too small to split is one part: its call to helper is resolved in place,
 * and no part file is left. */
static void test_small_module_is_not_split(void **state) {
  (void)state;
  Scratch x;
  scratch_begin(&x);
  char path[128];
  snprintf(path, sizeof path, "%s/small.o", x.dir);
  LLVMModuleRef m = module(x.ctx, 10);
  char *error = NULL;
  if (!emit_object_split(m, x.tm, 8, path, &error)) fail_msg("%s", error);
  char *relocs = about("readelf -r %s | grep -c strobe_split_helper || true", path);
  assert_string_equal(relocs, "0\n");
  char *names = about("ls %s", x.dir);
  assert_string_equal(names, "small.o\n");
  free(relocs);
  free(names);
  LLVMDisposeModule(m);
  scratch_end(&x);
}

/* A big module written through a symbolic link is split beside the file the link
 * names, which gets the object (the link stays a link); to a device it is written in
 * one part, in place (emit.c, Note [Where the output goes]). */
static void test_split_through_link_and_to_device(void **state) {
  (void)state;
  Scratch x;
  scratch_begin(&x);
  char sub[128], link[128], target[128];
  snprintf(sub, sizeof sub, "%s/objects", x.dir);
  snprintf(link, sizeof link, "%s/link.o", x.dir);
  snprintf(target, sizeof target, "%s/objects/big.o", x.dir);
  assert_int_equal(mkdir(sub, 0777), 0);
  assert_int_equal(symlink("objects/big.o", link), 0);
  LLVMModuleRef m = module(x.ctx, BIG);
  char *error = NULL;
  if (!emit_object_split(m, x.tm, 2, link, &error)) fail_msg("%s", error);
  char *kinds = about("stat -c %%F %s/link.o", x.dir);
  assert_string_equal(kinds, "symbolic link\n");
  char *names = about("ls %s", sub);
  assert_string_equal(names, "big.o\n"); /* no part left behind */
  char *relocs = about("readelf -r %s | grep -c strobe_split_helper || true", target);
  assert_string_equal(relocs, "1\n"); /* split it was */

  if (!emit_object_split(m, x.tm, 2, "/dev/null", &error)) fail_msg("%s", error);
  char *null = about("stat -c %%F %s", "/dev/null");
  assert_string_equal(null, "character special file\n");
  char *all[] = {kinds, names, relocs, null};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
  LLVMDisposeModule(m);
  scratch_end(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_is_the_unsplit_object),
      cmocka_unit_test(test_small_module_is_not_split),
      cmocka_unit_test(test_split_through_link_and_to_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
