/* test_rt.c — the runtime of standalone programs (rts/): STROBE_OPTIONS, the register
 * table's layout, and what strobe_rt_main sets up and reports.
 *
 * Each run of strobe_rt_main happens in a child process (it maps memory, installs a
 * signal handler and may exit), with a C function standing in for strobec's
 * strobe_entry; its stdout and stderr go to temporary files that the test reads. */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS, setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strobe/rt.h"

/* ---- running a program ------------------------------------------------------------ */

typedef int64_t Entry(StrobeRegTable *base);

typedef struct Run {
  int status; /* as waitpid reports it */
  char out[4096], err[4096];
} Run;

static void slurp(FILE *f, char *buf, size_t size) {
  rewind(f);
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* Runs strobe_rt_main(entry) in a child with STROBE_OPTIONS=options (unset if NULL). */
static Run run(Entry *entry, const char *options) {
  Run r;
  FILE *out = tmpfile(), *err = tmpfile();
  assert_non_null(out);
  assert_non_null(err);
  fflush(NULL); /* or the child would print the parent's buffered output again */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fileno(out), STDOUT_FILENO);
    dup2(fileno(err), STDERR_FILENO);
    struct rlimit no_core = {0, 0}; /* the fault tests must not leave core files */
    setrlimit(RLIMIT_CORE, &no_core);
    if (options) setenv("STROBE_OPTIONS", options, 1);
    else unsetenv("STROBE_OPTIONS");
    char *argv[] = {"test_rt", NULL};
    exit(strobe_rt_main(1, argv, entry)); /* as main returns it */
  }
  assert_int_equal(waitpid(pid, &r.status, 0), pid);
  slurp(out, r.out, sizeof r.out);
  slurp(err, r.err, sizeof r.err);
  return r;
}

static void exited(const Run *r, int status) {
  if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != status)
    fail_msg("expected exit status %d, got wait status %#x; stderr: %s", status,
             r->status, r->err);
}

/* ---- options ---------------------------------------------------------------------- */

static StrobeOptions parsed(const char *text) {
  StrobeOptions o;
  const char *bad = strobe_options_parse(text, &o);
  if (bad) fail_msg("'%s': bad entry at '%s'", text ? text : "(null)", bad);
  return o;
}

static void test_options_defaults(void **state) {
  (void)state;
  StrobeOptions o = parsed(NULL);
  assert_int_equal(o.stack, 1 << 20);
  assert_int_equal(o.heap, 4 << 20);
  o = parsed("");
  assert_int_equal(o.stack, 1 << 20);
  assert_int_equal(o.heap, 4 << 20);
}

static void test_options_sizes(void **state) {
  (void)state;
  assert_int_equal(parsed("stack=12345").stack, 12345);
  assert_int_equal(parsed("stack=64K").stack, 64 << 10);
  assert_int_equal(parsed("stack=64k").stack, 64 << 10);
  assert_int_equal(parsed("heap=3M").heap, 3 << 20);
  assert_int_equal(parsed("heap=3m").heap, 3 << 20);
  assert_int_equal(parsed("heap=2G").heap, (size_t)2 << 30);
  StrobeOptions o = parsed("heap=8K,stack=16K");
  assert_int_equal(o.stack, 16 << 10);
  assert_int_equal(o.heap, 8 << 10);
  assert_int_equal(parsed("stack=1K,stack=2K").stack, 2 << 10); /* the last wins */
  o = parsed(",stack=1K,,heap=2K,"); /* empty entries are skipped */
  assert_int_equal(o.stack, 1 << 10);
  assert_int_equal(o.heap, 2 << 10);
}

static void test_options_bad_entries(void **state) {
  (void)state;
  static const char *const bad[] = {
      "stack",      "stack=",    "=1",       "stack=K", "stack=0",  "stack=-1",
      "stack=1.5M", "stack=1KB", "stack= 1", "Stack=1", "stacks=1", "nosuch=1",
      "stack=99999999999999999999", "heap=99999999999999999G",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    StrobeOptions o = {.stack = 7, .heap = 7};
    const char *at = strobe_options_parse(bad[i], &o);
    if (at != bad[i]) fail_msg("'%s' was accepted", bad[i]);
    assert_int_equal(o.stack, 7); /* untouched */
  }
  const char *text = "stack=1M,bogus,heap=1M";
  StrobeOptions o;
  assert_ptr_equal(strobe_options_parse(text, &o), text + 9);
}

static int64_t says_called(StrobeRegTable *base) {
  (void)base;
  printf("called\n");
  return 0;
}

static void test_bad_option_stops_the_program(void **state) {
  (void)state;
  Run r = run(says_called, "stack=64K,stakc=1M,heap=64K");
  exited(&r, 2);
  assert_string_equal(r.out, ""); /* the entry did not run */
  const char *first = "strobe: bad STROBE_OPTIONS entry 'stakc=1M'\n";
  if (strncmp(r.err, first, strlen(first)) != 0) fail_msg("stderr: %s", r.err);
  /* followed by a list of the keys, with their defaults */
  assert_non_null(strstr(r.err, "stack=<size>"));
  assert_non_null(strstr(r.err, "(default 4M)"));
}

/* ---- the capability --------------------------------------------------------------- */

/* Offsets from BaseReg, as intrinsics/globalregs.def has them. */
enum {
#define X(id, name, type, offset) OFF_##id = offset,
#include "globalregs.def"
#undef X
};

#define AT_BASE(cap, T, off) (*(T *)((char *)&(cap).r + (off)))

static void test_capability_layout(void **state) {
  (void)state;
  StrobeCapability cap = {0};
  int a, b, c;
  cap.f.GCEnter1 = &a;
  cap.f.GCFun = &b;
  cap.f.EagerBlackholeInfo = &c;
  assert_ptr_equal(AT_BASE(cap, void *, OFF_GCENTER1), &a);
  assert_ptr_equal(AT_BASE(cap, void *, OFF_GCFUN), &b);
  assert_ptr_equal(AT_BASE(cap, void *, OFF_EAGER_BLACKHOLE_INFO), &c);
  /* BaseReg is &cap.r: the register table starts right after the function table */
  assert_ptr_equal((char *)&cap.r, (char *)&cap + sizeof(StrobeFunTable));

  StrobeWord w[4];
  cap.r.Sp = &w[0];
  cap.r.SpLim = &w[1];
  cap.r.Hp = &w[2];
  cap.r.HpLim = &w[3];
  cap.r.R1 = 11;
  cap.r.R10 = 20;
  cap.r.F6 = 1.5f;
  cap.r.D1 = 2.5;
  cap.r.HpAlloc = 99;
  assert_ptr_equal(AT_BASE(cap, StrobeWord *, OFF_SP), &w[0]);
  assert_ptr_equal(AT_BASE(cap, StrobeWord *, OFF_SPLIM), &w[1]);
  assert_ptr_equal(AT_BASE(cap, StrobeWord *, OFF_HP), &w[2]);
  assert_ptr_equal(AT_BASE(cap, StrobeWord *, OFF_HPLIM), &w[3]);
  assert_int_equal(AT_BASE(cap, StrobeWord, OFF_R1), 11);
  assert_int_equal(AT_BASE(cap, StrobeWord, OFF_R10), 20);
  assert_true(AT_BASE(cap, float, OFF_F6) == 1.5f);
  assert_true(AT_BASE(cap, double, OFF_D1) == 2.5);
  assert_int_equal(AT_BASE(cap, StrobeWord, OFF_HPALLOC), 99);
}

/* ---- what the entry finds --------------------------------------------------------- */

static size_t expect_stack, expect_heap; /* set before run(check_registers, …) */

static int aligned(const void *p) {
  return (uintptr_t)p % (uintptr_t)sysconf(_SC_PAGESIZE) == 0;
}

/* Returns 0, or the number of the first check that failed (the child's status). */
static int64_t check_registers(StrobeRegTable *r) {
  StrobeCapability *cap = (StrobeCapability *)((char *)r - offsetof(StrobeCapability, r));
  StrobeWord *lowest = (StrobeWord *)((char *)r->SpLim - STROBE_STACK_RESERVE);
  if (!aligned(r->Sp + 1)) return 1; /* Sp is the top word of the stack */
  if (!aligned(lowest)) return 2;    /* SpLim is the reserve above the guard page */
  if ((size_t)((char *)(r->Sp + 1) - (char *)lowest) != expect_stack) return 3;
  if (!aligned(r->Hp + 1)) return 4; /* Hp is one word below the nursery */
  if (!aligned(r->HpLim + 1)) return 5;
  if ((size_t)((char *)r->HpLim - (char *)r->Hp) != expect_heap) return 6;
  if (r->R1 || r->R10 || r->HpAlloc || r->CurrentTSO || r->CCCS) return 7;
  if (cap->f.GCEnter1 || cap->f.GCFun || cap->f.EagerBlackholeInfo) return 8;
  /* the whole stack, reserve included, and the whole nursery are writable */
  for (volatile StrobeWord *p = r->Sp; p >= lowest; p--) *p = 1;
  for (volatile StrobeWord *p = r->Hp + 1; p <= r->HpLim; p++) *p = 1;
  return 0;
}

static void test_registers_on_entry(void **state) {
  (void)state;
  expect_stack = 1 << 20;
  expect_heap = 4 << 20;
  Run r = run(check_registers, NULL);
  exited(&r, 0);

  expect_stack = 64 << 10;
  expect_heap = 128 << 10;
  r = run(check_registers, "stack=64K,heap=128K");
  exited(&r, 0);

  expect_stack = expect_heap = (size_t)sysconf(_SC_PAGESIZE); /* rounded up to pages */
  r = run(check_registers, "stack=1,heap=100");
  exited(&r, 0);
}

static int64_t result; /* what returns_result returns */

static int64_t returns_result(StrobeRegTable *base) {
  (void)base;
  return result;
}

static void test_exit_status_is_low_byte_of_result(void **state) {
  (void)state;
  static const struct { int64_t result; int status; } cases[] = {
      {0, 0}, {42, 42}, {0x1ff, 255}, {256, 0}, {-1, 255},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    result = cases[i].result;
    Run r = run(returns_result, NULL);
    exited(&r, cases[i].status);
    assert_string_equal(r.err, "");
  }
}

static void test_no_entry(void **state) {
  (void)state;
  Run r = run(NULL, NULL);
  exited(&r, 2);
  assert_non_null(strstr(r.err, "strobe: the program has no strobe_entry"));
}

/* ---- the guard page and other faults ---------------------------------------------- */

/* Pushes without stack checks until something stops it. */
static int64_t overflows_stack(StrobeRegTable *r) {
  printf("partial"); /* no newline: only a flush prints it */
  for (volatile StrobeWord *p = r->Sp; p; p--) *p = 0;
  return 0; /* not reached: the guard page stops the loop */
}

static void test_stack_overflow_hits_guard_page(void **state) {
  (void)state;
  Run r = run(overflows_stack, "stack=64K");
  exited(&r, 2);
  assert_string_equal(r.err, "strobe: Cmm stack overflow\n");
  assert_string_equal(r.out, "partial");
}

static int64_t faults_elsewhere(StrobeRegTable *r) {
  (void)r;
  volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  return *p;
}

static int64_t raises_sigsegv(StrobeRegTable *r) {
  (void)r;
  raise(SIGSEGV);
  return 1;
}

static void test_other_faults_are_not_caught(void **state) {
  (void)state;
  Entry *entries[] = {faults_elsewhere, raises_sigsegv};
  for (size_t i = 0; i < 2; i++) {
    Run r = run(entries[i], NULL);
    if (!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGSEGV)
      fail_msg("entry %zu: wait status %#x, stderr: %s", i, r.status, r.err);
    assert_string_equal(r.err, "");
  }
}

/* ---- exhaustion ------------------------------------------------------------------- */

/* Allocates two-word objects with GHC's heap check until it fails. */
static int64_t fills_heap(StrobeRegTable *r) {
  StrobeWord *hp = r->Hp;
  for (long n = 0;; n++) {
    hp += 2;
    if (hp > r->HpLim) {
      printf("%ld objects\n", n);
      strobe_heap_exhausted();
    }
    hp[-1] = hp[0] = (StrobeWord)n;
  }
}

static void test_heap_exhausted(void **state) {
  (void)state;
  Run r = run(fills_heap, "heap=64K");
  exited(&r, 2);
  assert_string_equal(r.err, "strobe: heap exhausted\n");
  assert_string_equal(r.out, "4096 objects\n"); /* flushed, and the nursery all used */
}

/* Pushes two-word frames with GHC's stack check until it fails. */
static int64_t fills_stack(StrobeRegTable *r) {
  StrobeWord *sp = r->Sp;
  for (long n = 0;; n++) {
    if (sp - 2 < r->SpLim) {
      printf("%ld frames\n", n);
      strobe_stack_exhausted();
    }
    sp -= 2;
    sp[0] = sp[1] = (StrobeWord)n;
  }
}

static void test_stack_exhausted(void **state) {
  (void)state;
  Run r = run(fills_stack, "stack=64K");
  exited(&r, 2);
  assert_string_equal(r.err, "strobe: Cmm stack exhausted\n");
  char expect[64]; /* two-word frames from Sp, the top word, down to SpLim */
  int frames = ((64 << 10) - 8 - STROBE_STACK_RESERVE) / 16;
  snprintf(expect, sizeof expect, "%d frames\n", frames);
  assert_string_equal(r.out, expect);
}

/* ---- printing --------------------------------------------------------------------- */

static int64_t prints_ints(StrobeRegTable *r) {
  (void)r;
  strobe_print_int(0);
  strobe_print_int(-42);
  strobe_print_int(INT64_MAX);
  strobe_print_int(INT64_MIN);
  return 0;
}

static void test_print_int(void **state) {
  (void)state;
  Run r = run(prints_ints, NULL);
  exited(&r, 0);
  assert_string_equal(r.out, "0\n-42\n9223372036854775807\n-9223372036854775808\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_defaults),
      cmocka_unit_test(test_options_sizes),
      cmocka_unit_test(test_options_bad_entries),
      cmocka_unit_test(test_bad_option_stops_the_program),
      cmocka_unit_test(test_capability_layout),
      cmocka_unit_test(test_registers_on_entry),
      cmocka_unit_test(test_exit_status_is_low_byte_of_result),
      cmocka_unit_test(test_no_entry),
      cmocka_unit_test(test_stack_overflow_hits_guard_page),
      cmocka_unit_test(test_other_faults_are_not_caught),
      cmocka_unit_test(test_heap_exhausted),
      cmocka_unit_test(test_stack_exhausted),
      cmocka_unit_test(test_print_int),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
