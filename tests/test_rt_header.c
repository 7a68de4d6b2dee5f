/* test_rt_header.c — the runtime's public header against intrinsics/intrinsics.def.
 *
 * strobe/dynstack.h declares the intrinsics' slow paths by expanding the table, and
 * pins them with _Static_assert; this test reads the header the way a compiler does
 * (libclang) and checks, row by row, that the function the table names is declared
 * with a void result and the table's parameter types.  A table row without its
 * declaration, or a declaration whose macro expansion drifted, fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <clang-c/Index.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct Row { const char *llvm_name, *entry; unsigned nargs; const char *args[2]; } Row;

/* The canonical C type of each argument kind of intrinsics.def. */
#define KIND_DESC "const StrobeTickDesc *"
#define KIND_SP "uintptr_t"
#define KIND_NONE NULL
static const Row rows[] = {
#define STROBE_INTRINSIC(id, name, rts, nargs, a1, a2) {name, #rts, nargs, {KIND_##a1, KIND_##a2}},
#include "intrinsics.def"
#undef STROBE_INTRINSIC
};
enum { NROWS = sizeof rows / sizeof *rows };

typedef struct Found {
  bool seen[NROWS];
  char error[512];
} Found;

static bool type_is(CXType t, const char *want) {
  CXString s = clang_getTypeSpelling(t);
  bool ok = strcmp(clang_getCString(s), want) == 0;
  clang_disposeString(s);
  return ok;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  Found *found = data;
  if (clang_getCursorKind(c) != CXCursor_FunctionDecl) return CXChildVisit_Continue;
  CXString name = clang_getCursorSpelling(c);
  for (unsigned i = 0; i < NROWS; i++) {
    if (strcmp(clang_getCString(name), rows[i].entry) != 0) continue;
    found->seen[i] = true;
    int n = clang_Cursor_getNumArguments(c);
    if (!type_is(clang_getCursorResultType(c), "void") || n != (int)rows[i].nargs)
      snprintf(found->error, sizeof found->error, "%s: wrong result or %d arguments", rows[i].entry, n);
    for (int a = 0; a < n && a < 2; a++)
      if (!type_is(clang_getCursorType(clang_Cursor_getArgument(c, (unsigned)a)), rows[i].args[a]))
        snprintf(found->error, sizeof found->error, "%s: argument %d is not %s", rows[i].entry,
                 a + 1, rows[i].args[a]);
  }
  clang_disposeString(name);
  return CXChildVisit_Continue;
}

static void test_header_declares_every_intrinsic(void **state) {
  (void)state;
  CXIndex index = clang_createIndex(0, 1);
  const char *args[] = {"-x", "c", "-std=c17", "-I" STROBE_SOURCE_DIR "/rts",
                        "-I" STROBE_SOURCE_DIR "/intrinsics"};
  CXTranslationUnit tu = clang_parseTranslationUnit(
      index, STROBE_SOURCE_DIR "/rts/strobe/dynstack.h", args, sizeof args / sizeof *args, NULL, 0,
      CXTranslationUnit_None);
  assert_non_null(tu);
  for (unsigned i = 0; i < clang_getNumDiagnostics(tu); i++) { /* it must compile cleanly */
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXString s = clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions());
      fail_msg("%s", clang_getCString(s));
    }
    clang_disposeDiagnostic(d);
  }
  Found found = {0};
  clang_visitChildren(clang_getTranslationUnitCursor(tu), visit, &found);
  for (unsigned i = 0; i < NROWS; i++)
    if (!found.seen[i]) fail_msg("%s (%s) is not declared", rows[i].entry, rows[i].llvm_name);
  if (found.error[0]) fail_msg("%s", found.error);
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_header_declares_every_intrinsic)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
