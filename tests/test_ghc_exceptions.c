/* test_ghc_exceptions.c — rts/ghc_exceptions.c: the snapshot at a raise, the table of
 * raises (rethrows, asynchronous exceptions, threads sharing a slot), and the wraps,
 * called as GHC's runtime calls them, on a TSO and a capability laid out as GHC 9.0.2's.
 * GHC's functions that the wraps call on (__real_*) are stand-ins here. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ghc_exceptions.h"
#include "ghc_layout.h"
#include "rt_internal.h"
#include "strobe/dynstack.h"

static const StrobeTickDesc desc_a = {STROBE_TICK_SOURCE_NOTE, 3, 1, 3, 20, 0, "Main.a", "A.hs", NULL, NULL};
static const StrobeTickDesc desc_b = {STROBE_TICK_SOURCE_NOTE, 5, 1, 5, 20, 0, "Main.b", "A.hs", NULL, NULL};
static const StrobeTickDesc desc_c = {STROBE_TICK_SOURCE_NOTE, 7, 2, 7, 9, 0, "Main.c", "A.hs", NULL, NULL};

/* ---- GHC's side: a TSO, its stack and a capability, at GHC's offsets ------------- */

/* The layouts of the GHC strobe is built with (ghc_layout.h; on 9.0.2 the TSO's
 * stackobj is at 24 and its id at 48, the stack's sp at 16). */
typedef struct FakeTso {
  uintptr_t words[GHC_TSO_ID / 8 + 1];
} FakeTso;

typedef struct FakeStack {
  uintptr_t words[GHC_STACK_SP / 8 + 1];
} FakeStack;

static FakeTso tso;
static FakeStack tso_stack;
static unsigned char cap[GHC_CAP_R + GHC_REG_CURRENT_TSO + 8];

static void set_thread(uint64_t id, uintptr_t sp, int current) {
  memset(&tso, 0, sizeof tso);
  tso_stack.words[GHC_STACK_SP / 8] = sp;
  tso.words[GHC_TSO_STACKOBJ / 8] = (uintptr_t)&tso_stack;
  tso.words[GHC_TSO_ID / 8] = id;
  void *t = current ? &tso : NULL;
  memcpy(cap + GHC_CAP_R + GHC_REG_CURRENT_TSO, &t, sizeof t);
}

static int real_raise_calls, real_belch_calls, real_throw_calls;

uintptr_t __real_raiseExceptionHelper(void *reg, void *t, void *exception);
uintptr_t __real_raiseExceptionHelper(void *reg, void *t, void *exception) {
  (void)reg, (void)t, (void)exception;
  real_raise_calls++;
  return 7; /* the frame type GHC's returns */
}

void __real_errorBelch2(const char *fmt, char *msg);
void __real_errorBelch2(const char *fmt, char *msg) {
  real_belch_calls++;
  fprintf(stderr, "prog: ");
  fprintf(stderr, fmt, msg);
  fprintf(stderr, "\n");
  fflush(stderr);
}

/* What raiseAsync leaves on top of the target's stack: 9.0's stg_raise closure, or
 * 9.4's application of the handler (Note [Where an asynchronous exception is
 * delivered] in rts/ghc_exceptions.c); the stand-in of throwTo puts it there. */
const char stg_enter_info[8], stg_ap_pv_info[8];
static uintptr_t delivered_top[4];

static void deliver_as_90(uintptr_t exception) {
  (void)exception;
  uintptr_t top[] = {(uintptr_t)stg_enter_info, 0x7000 /* stg_raise */, 0, 0};
  memcpy(delivered_top, top, sizeof top);
}

static void deliver_as_96(uintptr_t exception) {
  uintptr_t top[] = {(uintptr_t)stg_enter_info, 0x7100 /* the handler */,
                     (uintptr_t)stg_ap_pv_info, exception};
  memcpy(delivered_top, top, sizeof top);
}

static void (*deliver)(uintptr_t exception) = deliver_as_90;

void *__real_throwTo(void *c, void *source, void *target, void *exception);
void *__real_throwTo(void *c, void *source, void *target, void *exception) {
  (void)c, (void)source;
  real_throw_calls++;
  deliver((uintptr_t)exception);
  FakeTso *t = target;
  ((FakeStack *)t->words[GHC_TSO_STACKOBJ / 8])->words[GHC_STACK_SP / 8] = (uintptr_t)delivered_top;
  return NULL;
}
void __real_throwToSingleThreaded(void *c, void *t, void *exception);
void __real_throwToSingleThreaded(void *c, void *t, void *exception) { (void)c, (void)t, (void)exception; }
void __real_throwToSingleThreaded_(void *c, void *t, void *exception, bool s);
void __real_throwToSingleThreaded_(void *c, void *t, void *exception, bool s) { (void)c, (void)t, (void)exception, (void)s; }
void __real_throwToSelf(void *c, void *t, void *exception);
void __real_throwToSelf(void *c, void *t, void *exception) { (void)c, (void)t, (void)exception; }
void *__real_raiseAsync(void *c, void *t, void *exception, bool s, void *h);
void *__real_raiseAsync(void *c, void *t, void *exception, bool s, void *h) { (void)c, (void)exception, (void)s, (void)h; return t; }
int __real_maybePerformBlockedException(void *c, void *t);
int __real_maybePerformBlockedException(void *c, void *t) { (void)c, (void)t; return 0; }
uint32_t __real_throwToMsg(void *c, void *msg);
uint32_t __real_throwToMsg(void *c, void *msg) { (void)c, (void)msg; return 0; }
void *rts_unsafeGetMyCapability(void);
void *rts_unsafeGetMyCapability(void) { return cap; }

/* raiseIO#: the wrap jumps to it, and it returns to the wrap's caller here (in GHC it
 * jumps on to raise#, which calls raiseExceptionHelper). */
static int real_raise_io_calls;
void __real_stg_raiseIOzh(void);
void __real_stg_raiseIOzh(void) { real_raise_io_calls++; }
void __wrap_stg_raiseIOzh(void);

uintptr_t __wrap_raiseExceptionHelper(void *reg, void *t, void *exception);
void __wrap_errorBelch2(const char *fmt, char *msg);
void *__wrap_throwTo(void *c, void *source, void *target, void *exception);

/* ---- helpers ---------------------------------------------------------------------- */

/* This thread's dynamic stack: a at 0x1000 (oldest), b at 0x800, c at 0x400. */
static void three_deep(void) {
  strobe_dynstack_release();
  strobe_tick(&desc_a, 0x1000);
  strobe_tick(&desc_b, 0x800);
  strobe_tick(&desc_c, 0x400);
}

static int reset(void **state) {
  (void)state;
  strobe_dynstack_release();
  memset(rt_raise_table(), 0, sizeof *rt_raise_table());
  rt_ghc_exceptions_configure(true, false);
  real_raise_calls = real_belch_calls = real_throw_calls = real_raise_io_calls = 0;
  return 0;
}

/* What body writes on stderr. */
static char captured[8192];
static void capture(void (*body)(void)) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  int saved = dup(STDERR_FILENO);
  dup2(fileno(tmp), STDERR_FILENO);
  body();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(tmp);
  size_t n = fread(captured, 1, sizeof captured - 1, tmp);
  captured[n] = '\0';
  fclose(tmp);
}

/* ---- snapshots -------------------------------------------------------------------- */

static void test_snapshot_newest_first(void **state) {
  (void)state;
  three_deep();
  RtSnapshot snap;
  rt_snapshot_take(&snap, strobe_dynstack_current(), 0x400);
  assert_int_equal(snap.n, 3);
  assert_ptr_equal(snap.entries[0].desc, &desc_c);
  assert_ptr_equal(snap.entries[1].desc, &desc_b);
  assert_ptr_equal(snap.entries[2].desc, &desc_a);
}

static void test_snapshot_leaves_out_finished(void **state) {
  (void)state;
  three_deep();
  RtSnapshot snap;
  /* raised at 0x900: c (0x400) and b (0x800) have returned */
  rt_snapshot_take(&snap, strobe_dynstack_current(), 0x900);
  assert_int_equal(snap.n, 1);
  assert_ptr_equal(snap.entries[0].desc, &desc_a);
  rt_snapshot_take(&snap, NULL, 0);
  assert_int_equal(snap.n, 0);
}

static void test_snapshot_is_bounded(void **state) {
  (void)state;
  strobe_dynstack_release();
  static StrobeTickDesc many[RT_SNAPSHOT_ENTRIES + 10];
  for (size_t i = 0; i < sizeof many / sizeof *many; i++) {
    many[i] = desc_a;
    many[i].line1 = many[i].line2 = (uint32_t)i + 1;
    strobe_tick(&many[i], 0x100000 - 64 * i);
  }
  RtSnapshot snap;
  rt_snapshot_take(&snap, strobe_dynstack_current(), 0);
  /* the newest, a marker of the 11 between, and the oldest */
  assert_int_equal(snap.n, RT_SNAPSHOT_ENTRIES);
  assert_ptr_equal(snap.entries[0].desc, &many[RT_SNAPSHOT_ENTRIES + 9]); /* the newest */
  const StrobeEntry *marker = &snap.entries[RT_SNAPSHOT_NEWEST];
  assert_true(strobe_entry_is_dropped(marker));
  assert_int_equal(marker->elided, 11);
  assert_ptr_equal(snap.entries[RT_SNAPSHOT_NEWEST - 1].desc, &many[RT_SNAPSHOT_ENTRIES + 10 - RT_SNAPSHOT_NEWEST]);
  assert_ptr_equal(snap.entries[RT_SNAPSHOT_NEWEST + 1].desc, &many[RT_SNAPSHOT_OLDEST - 1]);
  assert_ptr_equal(snap.entries[RT_SNAPSHOT_ENTRIES - 1].desc, &many[0]); /* the oldest */
}

/* ---- the table -------------------------------------------------------------------- */

static RtRaiseTable t;

static void test_rethrow_keeps_the_first_raise(void **state) {
  (void)state;
  memset(&t, 0, sizeof t);
  three_deep();
  RtSnapshot snap;
  assert_int_equal(rt_raise_record(&t, 1, 0xa0, strobe_dynstack_current(), 0x400, NULL), RT_RAISED);
  /* the handler, shallower, rethrows it */
  assert_int_equal(rt_raise_record(&t, 1, 0xa0, strobe_dynstack_current(), 0x1000, &snap), RT_RAISED_AGAIN);
  assert_int_equal(snap.n, 3);
  /* cleanup code raises and catches another one, then the first is rethrown */
  assert_int_equal(rt_raise_record(&t, 1, 0xb0, strobe_dynstack_current(), 0x1000, NULL), RT_RAISED);
  assert_int_equal(rt_raise_lookup(&t, 1, &snap), RT_RAISE_SYNC);
  assert_int_equal(snap.n, 1);
  assert_int_equal(rt_raise_record(&t, 1, 0xa0, strobe_dynstack_current(), 0x1000, NULL), RT_RAISED_AGAIN);
  assert_int_equal(rt_raise_lookup(&t, 1, &snap), RT_RAISE_SYNC);
  assert_int_equal(snap.n, 3);
  assert_ptr_equal(snap.entries[0].desc, &desc_c);
}

static void test_async_after_a_raise(void **state) {
  (void)state;
  memset(&t, 0, sizeof t);
  three_deep();
  RtSnapshot snap;
  assert_int_equal(rt_raise_lookup(&t, 3, &snap), RT_RAISE_NONE);
  rt_raise_record(&t, 3, 0xa0, strobe_dynstack_current(), 0x400, NULL);
  rt_raise_async(&t, 3, 0xc0);
  assert_int_equal(rt_raise_lookup(&t, 3, &snap), RT_RAISE_ASYNC);
  /* its delivery (stg_raise) is not a raise with a stack */
  assert_int_equal(rt_raise_record(&t, 3, 0xc0, strobe_dynstack_current(), 0x400, NULL), RT_RAISED_ASYNC);
  assert_int_equal(rt_raise_lookup(&t, 3, &snap), RT_RAISE_ASYNC);
  /* caught; a later raise of the thread's own is what a report shows */
  rt_raise_record(&t, 3, 0xd0, strobe_dynstack_current(), 0x800, NULL);
  assert_int_equal(rt_raise_lookup(&t, 3, &snap), RT_RAISE_SYNC);
  assert_int_equal(snap.n, 2);
  /* another thread's asynchronous exception changes nothing here */
  rt_raise_async(&t, 4, 0xe0);
  assert_int_equal(rt_raise_lookup(&t, 3, &snap), RT_RAISE_SYNC);
}

static void test_threads_sharing_a_slot(void **state) {
  (void)state;
  memset(&t, 0, sizeof t);
  three_deep();
  RtSnapshot snap;
  uint64_t other = 5 + RT_RAISE_SLOTS;
  rt_raise_record(&t, 5, 0xa0, strobe_dynstack_current(), 0x400, NULL);
  rt_raise_record(&t, other, 0xb0, strobe_dynstack_current(), 0x800, NULL);
  assert_int_equal(rt_raise_lookup(&t, 5, &snap), RT_RAISE_SYNC);
  assert_int_equal(snap.n, 3);
  assert_int_equal(rt_raise_lookup(&t, other, &snap), RT_RAISE_SYNC);
  assert_int_equal(snap.n, 2);
  /* the same exception pointer in another thread is not a rethrow */
  assert_int_equal(rt_raise_record(&t, other, 0xa0, strobe_dynstack_current(), 0x1000, NULL), RT_RAISED);
  /* thread 5's record was the oldest: evicted, and nothing is reported for it */
  assert_int_equal(rt_raise_lookup(&t, 5, &snap), RT_RAISE_NONE);
  assert_int_equal(rt_raise_lookup(&t, 6, &snap), RT_RAISE_NONE);
}

/* ---- the wraps -------------------------------------------------------------------- */

static void raise_then_report(void) {
  three_deep();
  set_thread(9, 0x800, 1);
  assert_int_equal(__wrap_raiseExceptionHelper(NULL, &tso, (void *)0x5001), 7);
  three_deep(); /* the handlers may tick: the report is of the raise */
  strobe_tick(&desc_a, 0x80);
  __wrap_errorBelch2("%s", "boom");
}

static void test_uncaught_report(void **state) {
  (void)state;
  capture(raise_then_report);
  assert_int_equal(real_raise_calls, 1);
  assert_int_equal(real_belch_calls, 1);
  assert_string_equal(captured,
                      "strobe: uncaught exception in Haskell thread 9; the dynamic stack at "
                      "its raise, newest first:\n"
                      "#0 Main.b at A.hs:5:1-20\n"
                      "#1 Main.a at A.hs:3:1-20\n"
                      "prog: boom\n");
}

static void raise_only(void) {
  three_deep();
  set_thread(9, 0x400, 1);
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x5001);
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x5003); /* same closure, other tag */
}

static void test_report_raise(void **state) {
  (void)state;
  rt_ghc_exceptions_configure(true, true);
  capture(raise_only);
  assert_int_equal(real_raise_calls, 2);
  assert_string_equal(captured,
                      "strobe: exception raised in Haskell thread 9; the dynamic stack, "
                      "newest first:\n"
                      "#0 Main.c at A.hs:7:2-9\n#1 Main.b at A.hs:5:1-20\n#2 Main.a at A.hs:3:1-20\n"
                      "strobe: exception raised again in Haskell thread 9; the dynamic stack "
                      "at its first raise, newest first:\n"
                      "#0 Main.c at A.hs:7:2-9\n#1 Main.b at A.hs:5:1-20\n#2 Main.a at A.hs:3:1-20\n");
}

/* b's code built an IO action and returned (its continuation, at 0x800, is entered:
 * Sp is above it); base's code runs the action, which raises with raiseIO#. */
static void io_raise_then_report(void) {
  three_deep();
  set_thread(9, 0x900, 1);
  __wrap_stg_raiseIOzh();
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x5001);
  __wrap_errorBelch2("%s", "user error (built by b)");
}

static void test_io_raise_keeps_the_builder(void **state) {
  (void)state;
  capture(io_raise_then_report);
  assert_int_equal(real_raise_io_calls, 1);
  assert_string_equal(captured,
                      "strobe: uncaught exception in Haskell thread 9; the dynamic stack at "
                      "its raise, newest first:\n"
                      "#0 Main.c at A.hs:7:2-9\n#1 Main.b at A.hs:5:1-20\n#2 Main.a at A.hs:3:1-20\n"
                      "prog: user error (built by b)\n");
}

/* The same stack and Sp, raised by raise#: the finished entries go.  The flag of an
 * earlier raiseIO# does not last past its raise. */
static void pure_raise_then_report(void) {
  three_deep();
  set_thread(9, 0x900, 1);
  __wrap_stg_raiseIOzh();
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x5001);
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x6001);
  __wrap_errorBelch2("%s", "Prelude.head: empty list");
}

static void test_pure_raise_leaves_out_finished(void **state) {
  (void)state;
  capture(pure_raise_then_report);
  assert_string_equal(captured,
                      "strobe: uncaught exception in Haskell thread 9; the dynamic stack at "
                      "its raise, newest first:\n"
                      "#0 Main.a at A.hs:3:1-20\n"
                      "prog: Prelude.head: empty list\n");
}

static void message_only(void) { __wrap_errorBelch2("%s", "no raise"); }

static void test_no_raise_no_report(void **state) {
  (void)state;
  set_thread(11, 0x400, 1);
  capture(message_only);
  assert_string_equal(captured, "prog: no raise\n");
  set_thread(11, 0x400, 0); /* no current TSO */
  capture(message_only);
  assert_string_equal(captured, "prog: no raise\n");
}

static void raise_off(void) {
  three_deep();
  set_thread(9, 0x400, 1);
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x5001);
  __wrap_errorBelch2("%s", "boom");
}

static void test_report_uncaught_off(void **state) {
  (void)state;
  rt_ghc_exceptions_configure(false, false);
  capture(raise_off);
  assert_string_equal(captured, "prog: boom\n");
}

static void thrown_to(void) {
  three_deep();
  set_thread(9, 0x400, 1);
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x5001); /* caught */
  assert_null(__wrap_throwTo(cap, NULL, &tso, (void *)0x6001));
  __wrap_raiseExceptionHelper(NULL, &tso, (void *)0x6001); /* delivered */
  __wrap_errorBelch2("%s", "killed");
}

static void test_async_report(void **state) {
  (void)state;
  capture(thrown_to);
  assert_int_equal(real_throw_calls, 1);
  assert_string_equal(captured,
                      "strobe: uncaught exception in Haskell thread 9: it was thrown to the "
                      "thread asynchronously (throwTo, killThread, timeout or the runtime); "
                      "no dynamic stack was kept for it\n"
                      "prog: killed\n");
}

/* GHC 9.4 and later: raiseAsync applies the handler, and no raise follows. */
static void thrown_to_applied(void) {
  three_deep();
  set_thread(9, 0x400, 1);
  assert_null(__wrap_throwTo(cap, NULL, &tso, (void *)0x6001));
  __wrap_errorBelch2("%s", "killed");
}

static void test_async_delivered(void **state) {
  (void)state;
  rt_ghc_exceptions_configure(true, true);
  deliver = deliver_as_96;
  capture(thrown_to_applied);
  deliver = deliver_as_90;
  assert_string_equal(captured,
                      "strobe: asynchronous exception raised in Haskell thread 9 (throwTo, "
                      "killThread, timeout or the runtime); no dynamic stack is kept for it\n"
                      "strobe: uncaught exception in Haskell thread 9: it was thrown to the "
                      "thread asynchronously (throwTo, killThread, timeout or the runtime); "
                      "no dynamic stack was kept for it\n"
                      "prog: killed\n");
}

/* GHC 9.0: the delivery is a raise, which reports it; the wrap of throwTo does not. */
static void test_async_delivered_as_a_raise(void **state) {
  (void)state;
  rt_ghc_exceptions_configure(true, true);
  capture(thrown_to_applied);
  assert_string_equal(captured,
                      "strobe: uncaught exception in Haskell thread 9: it was thrown to the "
                      "thread asynchronously (throwTo, killThread, timeout or the runtime); "
                      "no dynamic stack was kept for it\n"
                      "prog: killed\n");
}

/* ---- frames (Note [One frame per activation] in rts/report.c) --------------------- */

/* Main.f's binding (10,1)-(12,30), a note in it, and one in that; Main.g's binding. */
static const StrobeTickDesc f_body = {STROBE_TICK_SOURCE_NOTE, 10, 1, 12, 30, STROBE_DESC_NESTED, "Main.f", "N.hs", NULL, NULL};
static const StrobeTickDesc f_rhs = {STROBE_TICK_SOURCE_NOTE, 12, 5, 12, 30, STROBE_DESC_NESTED, "Main.f", "N.hs", NULL, &f_body};
static const StrobeTickDesc f_call = {STROBE_TICK_SOURCE_NOTE, 12, 5, 12, 15, STROBE_DESC_NESTED, "Main.f", "N.hs", NULL, &f_rhs};
static const StrobeTickDesc g_body = {STROBE_TICK_SOURCE_NOTE, 20, 1, 20, 9, STROBE_DESC_NESTED, "Main.g", "N.hs", NULL, NULL};

static StrobeEntry frames[8];
static uint32_t nframes;
static void write_frames(void) { rt_write_entries(STDERR_FILENO, "stack:\n", frames, nframes, false); }

static void test_frames(void **state) {
  (void)state;
  StrobeEntry e[] = {
      /* newest first: two activations of f, a tail call from g into the newer */
      {.desc = &f_call, .wm = 0x100},
      {.desc = &f_rhs, .wm = 0x100},
      {.desc = &f_body, .wm = 0x100, .repeats = 2}, /* entered 3 times at this depth */
      {.desc = &g_body, .wm = 0x180, .flags = STROBE_ENTRY_TAIL},
      {.desc = &f_call, .wm = 0x180},
      {.desc = &f_body, .wm = 0x180},
      {.desc = &f_call, .wm = 0x200, .elided = 2}, /* tail calls dropped below it */
      {.desc = &f_body, .wm = 0x200},
  };
  assert_true(rt_one_frame(&e[0], &e[1]));  /* on the parent chain */
  assert_true(rt_one_frame(&e[1], &e[2]));
  assert_false(rt_one_frame(&e[2], &e[3])); /* another function */
  assert_false(rt_one_frame(&e[3], &e[4])); /* g is not on f's chain */
  assert_false(rt_one_frame(&e[5], &e[4])); /* the older must be the enclosing one */
  assert_false(rt_one_frame(&e[2], &e[5])); /* a binding is not on its own chain */
  assert_false(rt_one_frame(&e[6], &e[7])); /* tail calls were elided between them */
  StrobeEntry tail_older = e[5];
  tail_older.flags = STROBE_ENTRY_TAIL;
  assert_false(rt_one_frame(&e[4], &tail_older)); /* the older tail-called the newer */
  memcpy(frames, e, sizeof e);
  nframes = 8;
  capture(write_frames);
  assert_string_equal(captured, "stack:\n"
                                "#0 Main.f at N.hs:12:5-15 (x3)\n"
                                "#1 Main.g at N.hs:20:1-9 (tail)\n"
                                "#2 Main.f at N.hs:12:5-15\n"
                                "#3 Main.f at N.hs:12:5-15\n"
                                "   ... 2 tail calls elided\n"
                                "#4 Main.f at N.hs:(10,1)-(12,30)\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define TEST(f) cmocka_unit_test_setup(f, reset)
      TEST(test_snapshot_newest_first),
      TEST(test_snapshot_leaves_out_finished),
      TEST(test_snapshot_is_bounded),
      TEST(test_rethrow_keeps_the_first_raise),
      TEST(test_async_after_a_raise),
      TEST(test_threads_sharing_a_slot),
      TEST(test_uncaught_report),
      TEST(test_report_raise),
      TEST(test_io_raise_keeps_the_builder),
      TEST(test_pure_raise_leaves_out_finished),
      TEST(test_no_raise_no_report),
      TEST(test_report_uncaught_off),
      TEST(test_async_report),
      TEST(test_async_delivered),
      TEST(test_async_delivered_as_a_raise),
      TEST(test_frames),
#undef TEST
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
