/* test_dynstack_reports.c — what the dynamic stack (rts/dynstack.c, rts/report.c)
 * reports and counts: the reports (on demand, on fatal signals, at exit), through
 * strobe_rt_main (STROBE_OPTIONS and the guard page), the statistics, the options, the
 * registry and the descriptors' section.  Crashes and exits happen in a child process
 * whose stderr the test reads.  The fixtures and the drivers are dynstack_support.h's,
 * the descriptors dynstack_descs.h's. */
#include "dynstack_support.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "dynstack_descs.h"

/* ---- reports ---------------------------------------------------------------------- */

static const StrobeTickDesc point = {STROBE_TICK_SOURCE_NOTE, 7, 3, 7, 3, 0, "M.p", "P.hs", NULL, NULL};
static const StrobeTickDesc entry_only = {STROBE_TICK_ENTRY, 0, 0, 0, 0, 0, "M.e", NULL, NULL, NULL};

static void test_report_format(void **state) {
  (void)state;
  fresh("tail_limit=0");
  TICK(fact_body, 0x1000);
  TICK(entry_only, 0x0f00);
  TICK(point, 0x0e00);
  TICK(point, 0x0e00);
  TICK(point, 0x0e00);
  int n;
  assert_string_equal(dump_text(0, &n), "#0 M.p at P.hs:7:3 (x3)\n"
                                        "#1 M.e\n"
                                        "#2 Main.fact at Fact.hs:(15,1)-(17,30)\n");
  assert_int_equal(n, 3);
  /* what a reader that knows the live Sp shows: only what is not stale */
  assert_string_equal(dump_text(0x0f00, &n), "#0 M.e\n"
                                             "#1 Main.fact at Fact.hs:(15,1)-(17,30)\n");
  assert_int_equal(n, 2);
  assert_string_equal(dump_text(0x1001, &n), "");
  assert_int_equal(strobe_dynstack_dump(-1), -1); /* a failed write */
}

static void test_report_before_first_tick(void **state) {
  (void)state;
  int n;
  assert_string_equal(dump_text(0, &n), "");
  assert_int_equal(n, 0);
}

typedef struct Child {
  int status; /* as waitpid reports it */
  char err[8192];
} Child;

/* Runs body in a child process with stderr captured; body does not return. */
static Child in_child(void (*body)(void)) {
  Child c;
  FILE *err = tmpfile();
  assert_non_null(err);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* cmocka catches these around each test: put the default back, as a program has */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) signal(fatal[i], SIG_DFL);
    dup2(fileno(err), STDERR_FILENO);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    body();
    _exit(99);
  }
  assert_int_equal(waitpid(pid, &c.status, 0), pid);
  rewind(err);
  size_t n = fread(c.err, 1, sizeof c.err - 1, err);
  c.err[n] = '\0';
  fclose(err);
  return c;
}

static void died_of(const Child *c, int sig) {
  if (!WIFSIGNALED(c->status) || WTERMSIG(c->status) != sig)
    fail_msg("expected death by signal %d, got wait status %#x; stderr: %s", sig, c->status,
             c->err);
}

/* Starts the stack a crash report shows (configuring installs the runtime's handler). */
static void crash_stack(const char *options) {
  fresh(options);
  strobe_tick_fast(&level2, 0x1000);
  strobe_tick_fast(&level3, 0x0ff0);
  strobe_tick_fast(&crash, 0x0ff0);
  strobe_tick_fast(&crash, 0x0ff0);
}

static const char crash_lines[] = "#0 Main.crash at Crash.hs:12:3-20 (x2)\n"
                                  "#1 Main.level3 at Crash.hs:(9,1)-(10,20) (tail)\n"
                                  "#2 Main.level2 at Crash.hs:6:14-22\n";

static void segfaults(void) {
  crash_stack(NULL);
  volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) (void)*p;
}

static void raises_sigsegv(void) {
  crash_stack(NULL);
  raise(SIGSEGV);
}

static void aborts(void) {
  crash_stack(NULL);
  abort();
}

static void raises_sigfpe(void) {
  crash_stack(NULL);
  raise(SIGFPE);
}

static void test_crash_report(void **state) {
  (void)state;
  char want[1024];
  Child c = in_child(segfaults); /* a fault: the instruction is retried, and dies */
  died_of(&c, SIGSEGV);
  snprintf(want, sizeof want,
           "strobe: SIGSEGV (segmentation fault); the dynamic stack, newest first:\n%s",
           crash_lines);
  assert_string_equal(c.err, want);

  c = in_child(raises_sigsegv); /* sent: raised again */
  died_of(&c, SIGSEGV);
  assert_string_equal(c.err, want);

  c = in_child(aborts);
  died_of(&c, SIGABRT);
  snprintf(want, sizeof want,
           "strobe: SIGABRT (aborted); the dynamic stack, newest first:\n%s", crash_lines);
  assert_string_equal(c.err, want);

  c = in_child(raises_sigfpe);
  died_of(&c, SIGFPE);
  snprintf(want, sizeof want,
           "strobe: SIGFPE (arithmetic exception); the dynamic stack, newest first:\n%s",
           crash_lines);
  assert_string_equal(c.err, want);
}

static void segfaults_quietly(void) {
  crash_stack("crash_report=off");
  raise(SIGSEGV);
}

static void segfaults_with_empty_stack(void) {
  crash_stack(NULL);
  strobe_ret_fast(0x1000);
  raise(SIGSEGV);
}

static void test_crash_report_off_or_empty(void **state) {
  (void)state;
  Child c = in_child(segfaults_quietly);
  died_of(&c, SIGSEGV);
  assert_string_equal(c.err, "");
  c = in_child(segfaults_with_empty_stack);
  died_of(&c, SIGSEGV);
  assert_string_equal(c.err, "");
}

static void exits_with_a_stack(void) {
  crash_stack("report_at_exit=yes");
  exit(0);
}

static void exits_with_report_off(void) {
  crash_stack(NULL);
  exit(0);
}

static void test_report_at_exit(void **state) {
  (void)state;
  Child c = in_child(exits_with_a_stack);
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  char want[1024];
  snprintf(want, sizeof want, "strobe: the dynamic stack at exit, newest first:\n%s",
           crash_lines);
  if (strncmp(c.err, want, strlen(want)) != 0) fail_msg("stderr: %s", c.err);
  /* then the process's totals (test_stats checks the numbers) */
  const char *stats = c.err + strlen(want);
  if (strncmp(stats, "strobe: dynamic stack statistics\n", 33) != 0)
    fail_msg("stderr: %s", c.err);
#define STAT_NAME(name, help) #name,
  static const char *const names[] = {STROBE_STATS(STAT_NAME)};
#undef STAT_NAME
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char line[32];
    snprintf(line, sizeof line, "\n  %-12s", names[i]);
    if (!strstr(stats, line)) fail_msg("no %s line in: %s", names[i], stats);
  }

  c = in_child(exits_with_report_off);
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  assert_string_equal(c.err, "");
}

/* ---- through strobe_rt_main: STROBE_OPTIONS and the guard page --------------------- */

static int64_t ticks_and_returns(StrobeRegTable *r) {
  strobe_tick_fast(&fact_body, (uintptr_t)r->Sp);
  strobe_tick_fast(&fact_rhs, (uintptr_t)r->Sp);
  return 0;
}

static int64_t ticks_and_overflows(StrobeRegTable *r) {
  strobe_tick_fast(&go_a, (uintptr_t)r->Sp);
  strobe_tick_fast(&go_a, (uintptr_t)r->Sp);
  for (volatile StrobeWord *p = r->Sp; p; p--) *p = 0;
  return 0;
}

static int64_t (*rt_entry)(StrobeRegTable *);

static void runs_rt_main(void) {
  char *argv[] = {"test_dynstack", NULL};
  exit(strobe_rt_main(1, argv, rt_entry));
}

static void test_through_rt_main(void **state) {
  (void)state;
  setenv("STROBE_OPTIONS", "stack=64K,report_at_exit=1", 1);
  rt_entry = ticks_and_returns;
  Child c = in_child(runs_rt_main);
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0);
  /* one frame: the body's note and the one nested in it (report.c, Note [One frame per
   * activation]) */
  const char *want = "strobe: the dynamic stack at exit, newest first:\n"
                     "#0 Main.fact at Fact.hs:15:10-25\n"
                     "strobe: dynamic stack statistics\n";
  if (strncmp(c.err, want, strlen(want)) != 0) fail_msg("stderr: %s", c.err);

  /* a Cmm stack overflow is a clean error, with the dynamic stack */
  setenv("STROBE_OPTIONS", "stack=64K", 1);
  rt_entry = ticks_and_overflows;
  c = in_child(runs_rt_main);
  unsetenv("STROBE_OPTIONS");
  assert_true(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2);
  assert_string_equal(c.err, "strobe: Cmm stack overflow\n"
                             "strobe: the dynamic stack, newest first:\n"
                             "#0 Main.go at Go.hs:3:7 (x2)\n");
}

/* ---- statistics ------------------------------------------------------------------- */

static void test_stats(void **state) {
  (void)state;
  StrobeStats before;
  strobe_dynstack_stats(&before); /* the process's totals so far */
  TICK(ping, 0x1000);       /* the first: slow */
  TICK(ping, 0x1000);       /* inline repeat */
  TICK(ping_inner, 0x1000); /* inline nested push */
  TICK(pong, 0x1000);       /* tail: slow */
  TICK(ping, 0x1000);       /* cycle: slow */
  TICK(go_a, 0x0f00);       /* inline push */
  POP(0x0f00);              /* inline: nothing */
  POP(0x1000);              /* inline: pops go_a */
  RET(0x1000);              /* inline: pops ping (x3) */
  strobe_pop(0x1000);       /* the slow paths, called anyway */
  strobe_ret(0x1000);
  StrobeStats st = thread_stats();
  assert_int_equal(st.ticks, 6);
  assert_int_equal(st.slow_ticks, 3);
  assert_int_equal(st.slow_pops, 1);
  assert_int_equal(st.slow_rets, 1);
  assert_int_equal(st.drops, 0);
  assert_int_equal(st.tail_drops, 0);
  assert_int_equal(st.threads, 1);
  const StrobeCounters *c = &cur()->counters;
  assert_int_equal(c->slow_ticks, 3);
  assert_int_equal(c->slow_pops, 1);
  assert_int_equal(c->slow_rets, 1);

  /* drops, and tail drops, on stacks of their own */
  StrobeStats first = st;
  fresh("capacity=4");
  for (uintptr_t i = 0; i < 6; i++) TICK(walk, 0x1000 - 16 * i);
  StrobeStats second = thread_stats();
  assert_int_equal(second.ticks, 6);
  assert_int_equal(second.slow_ticks, 2); /* the first, and the one that dropped */
  assert_int_equal(second.drops, 3);      /* all but the newest quarter of 4 */
  assert_int_equal(second.tail_drops, 0);
  fresh("tail_limit=1");
  TICK(level2, 0x2000);
  TICK(f1, 0x1000);
  TICK(f2, 0x1000);
  TICK(f3, 0x1000); /* f1 is elided */
  st = thread_stats();
  assert_int_equal(st.ticks, 4);
  assert_int_equal(st.slow_ticks, 3);
  assert_int_equal(st.drops, 0);
  assert_int_equal(st.tail_drops, 1);

  /* the totals grow by as much (this is the only thread) */
  StrobeStats after;
  strobe_dynstack_stats(&after);
#define GREW(name, help) assert_int_equal(after.name - before.name, first.name + second.name + st.name);
  STROBE_STATS(GREW)
#undef GREW

  /* a released stack's counters stay in the totals */
  strobe_dynstack_release();
  StrobeStats released;
  strobe_dynstack_stats(&released);
  assert_memory_equal(&released, &after, sizeof after);
  assert_int_equal(thread_stats().ticks, 0);
}

/* ---- options ---------------------------------------------------------------------- */

static StrobeOptions parsed(const char *text) {
  StrobeOptions o;
  const char *bad = strobe_options_parse(text, &o);
  if (bad) fail_msg("'%s': bad entry at '%s'", text ? text : "(null)", bad);
  return o;
}

static void test_options(void **state) {
  (void)state;
  StrobeOptions o = parsed(NULL);
  assert_int_equal(o.capacity, 1024);
  assert_int_equal(o.tail_limit, 4);
  assert_true(o.crash_report);
  assert_false(o.report_at_exit);
  assert_false(o.pops_everywhere);

  o = parsed("capacity=16,tail_limit=0,crash_report=0,report_at_exit=1,pops_everywhere=on");
  assert_int_equal(o.capacity, 16);
  assert_int_equal(o.tail_limit, 0);
  assert_false(o.crash_report);
  assert_true(o.report_at_exit);
  assert_true(o.pops_everywhere);
  assert_int_equal(parsed("capacity=4294967295").capacity, UINT32_MAX);
  assert_int_equal(parsed("capacity=0").capacity, 0);
  static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false", "off"};
  for (int i = 0; i < 4; i++) {
    char text[64];
    snprintf(text, sizeof text, "report_at_exit=%s,crash_report=%s", yes[i], no[i]);
    o = parsed(text);
    assert_true(o.report_at_exit);
    assert_false(o.crash_report);
  }

  static const char *const bad[] = {
      "capacity=",    "capacity=-1", "capacity=1K",   "capacity=4294967296", "capacity=0x10",
      "tail_limit=a", "crash_report=", "crash_report=2", "crash_report=Yes", "report_at_exit=y",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    StrobeOptions untouched = {.capacity = 7};
    if (strobe_options_parse(bad[i], &untouched) != bad[i]) fail_msg("'%s' was accepted", bad[i]);
    assert_int_equal(untouched.capacity, 7);
  }

  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  strobe_options_describe(out);
  fclose(out);
  assert_non_null(strstr(text, "  capacity=<count>"));
  assert_non_null(strstr(text, "(default 1024)"));
  assert_non_null(strstr(text, "  crash_report=<bool>"));
  assert_non_null(strstr(text, "(default yes)"));
  assert_non_null(strstr(text, "  report_at_exit=<bool>"));
  assert_non_null(strstr(text, "(default no)"));
  free(text);
}

static void test_options_apply(void **state) {
  (void)state;
  fresh("capacity=3,tail_limit=1,pops_everywhere=1,report_at_exit=0");
  assert_int_equal(strobe_registry.capacity, 3);
  assert_int_equal(strobe_registry.tail_limit, 1);
  assert_int_equal(strobe_registry.flags,
                   STROBE_REGISTRY_POPS_EVERYWHERE | STROBE_REGISTRY_CRASH_REPORT);
  TICK(go_a, 0x1000);
  assert_int_equal(cur()->capacity, 3);
  assert_int_equal(cur()->tail_limit, 1);
  /* a new capacity applies to stacks started later */
  StrobeOptions o = parsed("capacity=5");
  strobe_dynstack_configure(&o);
  assert_int_equal(cur()->capacity, 3);
  strobe_dynstack_release();
  TICK(go_a, 0x1000);
  assert_int_equal(cur()->capacity, 5);
}

/* ---- the registry and the descriptors --------------------------------------------- */

static void test_registry(void **state) {
  (void)state;
  const StrobeRegistry *r = &strobe_registry;
  assert_int_equal(r->magic, STROBE_REGISTRY_MAGIC);
  assert_memory_equal(&r->magic, "STRB", 4);
  assert_int_equal(r->version, STROBE_REGISTRY_VERSION);
  assert_int_equal(r->header_size, sizeof(StrobeRegistry));
  assert_int_equal(r->thread_size, sizeof(StrobeThreadStack));
  assert_int_equal(r->entry_size, sizeof(StrobeEntry));
  assert_int_equal(r->desc_size, sizeof(StrobeTickDesc));

  uint64_t exited = r->nexited, gen = r->generation;
  TICK(fact_body, 0x1000);
  const StrobeThreadStack *s = cur();
  assert_ptr_equal(r->threads, s); /* the only thread here */
  assert_null(s->next);
  assert_int_equal(r->nthreads, 1);
  assert_int_equal(r->generation, gen + 2); /* even: not changing */
  assert_ptr_equal(s->entries[-1].desc, &strobe_dynstack_no_desc); /* the sentinels below */
  assert_ptr_equal(s->head, &strobe_dynstack_head);
  assert_int_equal(r->head_size, sizeof(StrobeDynStackHead));
  strobe_dynstack_release();
  assert_null(r->threads);
  assert_int_equal(r->nthreads, 0);
  assert_int_equal(r->nexited, exited + 1);
  assert_int_equal(r->generation, gen + 4);
}

static void test_tick_descs(void **state) {
  (void)state;
  size_t n;
  const StrobeTickDesc *d = strobe_tick_descs(&n);
  assert_int_equal(n, NDESCS); /* this file's, and only those */
  for (size_t i = 0; i < NDESCS; i++) {
    const StrobeTickDesc *want = i < NMODULE ? module_descs[i] : other_module_descs[i - NMODULE];
    size_t j = 0;
    while (j < n && &d[j] != want) j++;
    if (j == n) fail_msg("%s %u:%u is not in the section", want->function, want->line1, want->col1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_report_format),
      TEST(test_report_before_first_tick),
      TEST(test_crash_report),
      TEST(test_crash_report_off_or_empty),
      TEST(test_report_at_exit),
      TEST(test_through_rt_main),
      TEST(test_stats),
      TEST(test_options),
      TEST(test_options_apply),
      TEST(test_registry),
      TEST(test_tick_descs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
