/* support.h — what the cmocka tests share.  Header-only; include it first.
 *
 *  - arena fixtures: arena_setup/arena_teardown give each test a fresh Arena in *state
 *    (so tests do not depend on their order); ARENA_TEST(f) registers a test with them;
 *  - Capture: what is written to a FILE, kept in memory as text (open_memstream);
 *  - macros that build small GHC-style Cmm dumps: HEAD, PROC, PROC_WITH, BLOCK, S, TICK,
 *    GOTO, RET, END_PROC, NEXT, DATA;
 *  - parse_dump: a whole dump through cmm_parse (and cmm_infer_types), diagnostics kept;
 *  - parse_one_expr: one expression through cmm_parse_expr (and cmm_infer_expr), likewise. */
#ifndef STROBE_TESTS_SUPPORT_H
#define STROBE_TESTS_SUPPORT_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmm.h"

/* ---- arena fixtures ------------------------------------------------------------- */

static inline int arena_setup(void **state) {
  *state = arena_new();
  return *state ? 0 : -1;
}

static inline int arena_teardown(void **state) {
  arena_free(*state);
  return 0;
}

#define ARENA_TEST(f) cmocka_unit_test_setup_teardown(f, arena_setup, arena_teardown)

/* ---- text written to a FILE ------------------------------------------------------ */

/* capture_begin, write to c.out, then capture_end returns the text (malloc'd, free it;
 * its length is then in c.size).  c must stay where it is in between. */
typedef struct Capture {
  FILE *out;
  char *text;
  size_t size;
} Capture;

static inline void capture_begin(Capture *c) {
  c->text = NULL;
  c->size = 0;
  c->out = open_memstream(&c->text, &c->size);
  assert_non_null(c->out);
}

static inline char *capture_end(Capture *c) {
  fclose(c->out);
  return c->text;
}

/* ---- building dumps ------------------------------------------------------------- */

/* HEAD "[" PROC("f_entry") BLOCK("c1", "c1") S("R1 = R2;") RET END_PROC "]\n" is a group
 * whose proc header is line 5 and whose first statement is line 11, column 12. */
#define HEAD                                                                       \
  "\n==================== Output Cmm ====================\n"                     \
  "2026-11-29 15:39:17.151249044 UTC\n\n"
#define PROC_WITH(name, live, tables)                                              \
  name "() { //  " live "\n"                                                       \
  "         { info_tbls: [" tables "]\n"                                           \
  "           stack_info: arg_space: 8\n"                                          \
  "         }\n"                                                                   \
  "     {offset\n"
#define PROC(name) PROC_WITH(name, "[R1]", "")
#define BLOCK(label, scope) "       " label ": // " scope "\n"
#define S(stmt) "           " stmt "\n"
#define TICK(span) S("//tick src<" span ">")
#define GOTO(label) S("goto " label ";")
#define RET S("call (P64[Sp])(R1) args: 8, res: 0, upd: 8;")
#define END_PROC "     }\n }"
#define NEXT ",\n " /* between two declarations of a group */
#define DATA(label)                                                                \
  "section \"\"data\" . " label "\" {\n"                                           \
  "     " label ":\n"                                                              \
  "         const 0;\n"                                                            \
  " }"

/* ---- parsing -------------------------------------------------------------------- */

enum { PARSE_ONLY = 0, INFER_TYPES = 1 };

typedef struct Parsed {
  CmmSource *src;
  CmmFile *f;
  bool ok;    /* with INFER_TYPES, what cmm_infer_types returned; else true */
  char *diag; /* what the diagnostics printed (malloc'd) */
} Parsed;

/* Parses text (named test.dump-cmm), which must parse without error (else the test
 * fails, showing the diagnostics), and with INFER_TYPES infers its types. */
static inline Parsed parse_dump(const char *text, bool infer) {
  Parsed p = {0};
  p.src = cmm_source_from_memory("test.dump-cmm", text, strlen(text));
  Capture cap;
  capture_begin(&cap);
  Diag d = {.out = cap.out};
  p.f = cmm_parse(p.src, &d);
  bool parsed = p.f && d.errors == 0;
  p.ok = parsed && (!infer || cmm_infer_types(p.f, &d));
  p.diag = capture_end(&cap);
  if (!parsed) fail_msg("did not parse: %s", p.diag);
  return p;
}

static inline void parsed_free(Parsed p) {
  cmm_file_free(p.f);
  cmm_source_free(p.src);
  free(p.diag);
}

typedef struct ParsedExpr {
  CmmExpr *e;       /* NULL if the text did not parse */
  bool ok;          /* parsed (and with INFER_TYPES, typed) without an error */
  unsigned errors;  /* how many errors were reported */
  unsigned refusals; /* … of which refusals (diag_refusal) */
  const char *diag; /* what the diagnostics printed (in the arena) */
} ParsedExpr;

/* Parses text (named expr) as one expression in a, and with INFER_TYPES infers its
 * types.  Only the tree's locations need the source, so it is freed here. */
static inline ParsedExpr parse_one_expr(Arena *a, const char *text, bool infer) {
  CmmSource *src = cmm_source_from_memory("expr", text, strlen(text));
  Capture cap;
  capture_begin(&cap);
  Diag d = {.out = cap.out};
  ParsedExpr r = {.e = cmm_parse_expr(src, a, &d)};
  r.ok = r.e && d.errors == 0 && (!infer || cmm_infer_expr(src, r.e, &d));
  r.errors = d.errors;
  r.refusals = d.refusals;
  char *diag = capture_end(&cap);
  r.diag = arena_strndup(a, diag, cap.size);
  free(diag);
  cmm_source_free(src);
  return r;
}

#endif
