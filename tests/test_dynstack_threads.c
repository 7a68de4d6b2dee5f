/* test_dynstack_threads.c — the dynamic stack with several threads: each thread has
 * its own head and stack, which its fast paths change inline while other threads read
 * the totals and the stacks' depths; the registry lists every thread while it runs and
 * forgets it when it exits; the totals add up, exactly, to what each thread counted.
 *
 * Built twice: test_dynstack_threads, like the other tests (and so also under ASan and
 * UBSan with STROBE_SANITIZE), and test_dynstack_threads_tsan, with the runtime's
 * sources compiled in, under ThreadSanitizer, which fails the test on a data race: a
 * fast path or a slow path that wrote what others read (a head's top and ticks, a
 * stack's counters) without an atomic store would be one. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "strobe/dynstack.h"
#include "strobe/rt.h"

/* As the lowering emits them, with their parents and flags: the spans of each function
 * nest (STROBE_DESC_NESTED), so that the inline tick walks the entries of a frame.
 * One string per function name and file, as in a module.
 *   ping (1,1)-(1,60)  ping_a (1,10)-(1,20)  ping_b (1,22)-(1,40)  ping_b_in (1,25)-(1,30) */
#define DESC(parent, fn, file, l1, c1, l2, c2)                                            \
  {STROBE_TICK_SOURCE_NOTE, l1, c1, l2, c2, STROBE_DESC_NESTED, fn, file, NULL, parent}
static const char loop_hs[] = "Loop.hs", ping_fn[] = "Main.ping";
static const StrobeTickDesc ping = DESC(NULL, ping_fn, loop_hs, 1, 1, 1, 60);
static const StrobeTickDesc ping_a = DESC(&ping, ping_fn, loop_hs, 1, 10, 1, 20);
static const StrobeTickDesc ping_b = DESC(&ping, ping_fn, loop_hs, 1, 22, 1, 40);
static const StrobeTickDesc ping_b_in = DESC(&ping_b, ping_fn, loop_hs, 1, 25, 1, 30);
static const StrobeTickDesc pong = DESC(NULL, "Main.pong", loop_hs, 5, 1, 5, 40);
static const StrobeTickDesc leaf = DESC(NULL, "Main.leaf", loop_hs, 9, 3, 9, 8);
static const StrobeTickDesc deeper = DESC(NULL, "Main.deeper", loop_hs, 10, 3, 10, 8);
static const StrobeTickDesc deep = DESC(NULL, "Main.deep", "Deep.hs", 20, 1, 20, 30);
static const StrobeTickDesc t1 = DESC(NULL, "T.t1", "T.hs", 1, 1, 1, 9);
static const StrobeTickDesc t2 = DESC(NULL, "T.t2", "T.hs", 2, 1, 2, 9);
static const StrobeTickDesc t3 = DESC(NULL, "T.t3", "T.hs", 3, 1, 3, 9);

enum {
  NTHREADS = 4,
  ITERATIONS = 20000,
  CAPACITY = 64,
  RECURSION = 200, /* deeper than CAPACITY: the array folds (Note [Folding]) */
};

/* The options the workers' stacks start with. */
#define OPTIONS "capacity=64,tail_limit=1"

/* What each worker counts (its thread's statistics, exact): the recursion's first tick
 * starts the stack and each push into a full array folds it, as often as the same
 * recursion on a thread of its own folds it (the reference, in `folds` and `drops`);
 * its ret pops every entry and marker inline.  Of the three tail calls two are slow,
 * and one is elided.  Then each iteration has 11 ticks, two of them slow (ping, which
 * re-enters ping's frame, from the second on; pong, a tail call). */
enum { ITERATION_TICKS = 11 };
static StrobeStats expected = {
    .ticks = RECURSION + 3 + ITERATION_TICKS * (uint64_t)ITERATIONS,
    .slow_pops = 0,
    .slow_rets = 0,
    .tail_drops = 1,
    .threads = 1,
};

typedef struct Worker {
  pthread_t thread;
  uintptr_t base;                 /* its Sp: each thread has its own Cmm stack */
  uint64_t tid;
  const StrobeThreadStack *stack; /* published once the recursion is done */
  bool ok;                        /* its own checks passed */
  char why[128];                  /* else which */
} Worker;

static pthread_barrier_t checked, may_exit; /* with main: NTHREADS + 1 */
static int running;                         /* workers not yet at `checked` */

/* A recursion RECURSION deep below base, and the return to base's frame. */
static void recurse(uintptr_t base) {
  for (uintptr_t i = 1; i <= RECURSION; i++) strobe_tick_fast(&deep, base - 16 * i);
  strobe_ret_fast(base);
}

/* Three tail calls a frame below base, one more than tail_limit keeps; the return. */
static void tail_calls(uintptr_t base) {
  strobe_tick_fast(&t1, base - 8);
  strobe_tick_fast(&t2, base - 8);
  strobe_tick_fast(&t3, base - 8);
  strobe_ret_fast(base - 8);
}

/* One iteration: ping's body; a nested expression in it (inline, 2b); its sibling
 * (inline, 2c then 2b), and one nested in that (inline, 2b); ping's body again, a loop
 * (inline: the walk pops two entries and repeats on ping, publishing it as the top);
 * ping_b_in on ping, its grandparent (inline, 2b), and ping_b (inline, 2c then 2b);
 * a tail call to pong (slow, 2d), which calls leaf a frame deeper (inline), twice in
 * place (inline repeat), and leaf calls deeper; both return at once (inline, two
 * entries).  From the second iteration on, ping re-enters its frame below pong (slow,
 * the cycle). */
static void iterate(uintptr_t base) {
  strobe_tick_fast(&ping, base);
  strobe_tick_fast(&ping_a, base);
  strobe_tick_fast(&ping_b, base);
  strobe_tick_fast(&ping_b_in, base);
  strobe_tick_fast(&ping, base);
  strobe_tick_fast(&ping_b_in, base);
  strobe_tick_fast(&ping_b, base);
  strobe_tick_fast(&pong, base);
  strobe_tick_fast(&leaf, base - 16);
  strobe_tick_fast(&leaf, base - 16);
  strobe_tick_fast(&deeper, base - 32);
  strobe_ret_fast(base - 16);
  strobe_pop_fast(base - 16); /* nothing: no call */
}

/* The stack after n iterations: pong, on ping_b (tail), on ping entered twice in each
 * but the first once. */
static bool stack_after(const StrobeThreadStack *s, uintptr_t base, uint64_t n) {
  if (!s || strobe_dynstack_depth(s) != 3) return false;
  const StrobeEntry *e0 = strobe_dynstack_at(s, 0), *e1 = strobe_dynstack_at(s, 1),
                    *e2 = strobe_dynstack_at(s, 2);
  return e0->desc == &pong && e0->wm == base && e0->repeats == 0 && e0->flags == 0 &&
         e1->desc == &ping_b && e1->wm == base && e1->repeats == 0 &&
         e1->flags == STROBE_ENTRY_TAIL && e2->desc == &ping && e2->wm == base &&
         e2->repeats == 2 * n - 1 && e2->flags == 0;
}

static bool same_stats(const StrobeStats *a, const StrobeStats *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

#define CHECK(w, cond)                                                                   \
  do {                                                                                   \
    if ((w)->ok && !(cond)) {                                                            \
      (w)->ok = false;                                                                   \
      snprintf((w)->why, sizeof (w)->why, "line %d: %s", __LINE__, #cond);               \
    }                                                                                    \
  } while (0)

static void *work(void *arg) {
  Worker *w = arg;
  w->tid = (uint64_t)gettid();
  w->ok = true;
  recurse(w->base);
  const StrobeThreadStack *s = strobe_dynstack_current();
  CHECK(w, s && strobe_dynstack_depth(s) == 0);
  CHECK(w, s && s->counters.drops == expected.drops);
  tail_calls(w->base);
  CHECK(w, s && strobe_dynstack_depth(s) == 0 && s->counters.tail_drops == 1);
  __atomic_store_n(&w->stack, s, __ATOMIC_RELEASE);
  for (int i = 0; i < ITERATIONS; i++) iterate(w->base);
  /* its own head, its own stack, its own counts */
  const StrobeDynStackHead *h = &strobe_dynstack_head;
  CHECK(w, stack_after(s, w->base, ITERATIONS));
  CHECK(w, s->head == h && h->stack == s && h->top == strobe_dynstack_at(s, 0));
  CHECK(w, h->base == s->entries - 1 && h->limit == s->entries + CAPACITY - 1);
  CHECK(w, h->ticks == expected.ticks);
  StrobeStats mine;
  strobe_dynstack_thread_stats(&mine);
  CHECK(w, same_stats(&mine, &expected));
  __atomic_fetch_sub(&running, 1, __ATOMIC_RELEASE);
  pthread_barrier_wait(&checked);
  pthread_barrier_wait(&may_exit);
  return NULL;
}

static void configure(const char *text) {
  StrobeOptions o;
  assert_null(strobe_options_parse(text, &o));
  strobe_dynstack_configure(&o);
}

static int defaults(void **state) {
  (void)state;
  configure(NULL);
  strobe_dynstack_release();
  return 0;
}

/* What the main thread finds wrong while workers wait for it: noted, and failed only
 * once they are joined (a failure that skipped the barriers would hang the test). */
static char problem[256];

#define NOTE(cond)                                                                       \
  do {                                                                                   \
    if (!problem[0] && !(cond))                                                          \
      snprintf(problem, sizeof problem, "line %d: %s", __LINE__, #cond);                 \
  } while (0)

/* The recursion alone, on a thread of its own: how often it folds, what it drops. */
static void *reference(void *arg) {
  StrobeStats *st = arg;
  recurse(1u << 20);
  strobe_dynstack_thread_stats(st);
  return NULL;
}

static void test_threads_have_their_own_stacks(void **state) {
  (void)state;
  configure(OPTIONS);
  StrobeStats ref;
  pthread_t r;
  assert_int_equal(pthread_create(&r, NULL, reference, &ref), 0);
  assert_int_equal(pthread_join(r, NULL), 0);
  assert_true(ref.drops > 0 && ref.drops < RECURSION);
  expected.drops = ref.drops;
  expected.slow_ticks = ref.slow_ticks + 2 + 1 + 2 * ((uint64_t)ITERATIONS - 1);
  StrobeStats before;
  strobe_dynstack_stats(&before);
  uint64_t exited = strobe_registry.nexited;
  problem[0] = '\0';

  Worker w[NTHREADS];
  pthread_barrier_init(&checked, NULL, NTHREADS + 1);
  pthread_barrier_init(&may_exit, NULL, NTHREADS + 1);
  running = NTHREADS;
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (Worker){.base = (uintptr_t)(i + 1) << 20};
    assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
  }
  /* While the workers run: the totals only grow, and never past what they will be; a
   * stack's depth, read through its head, stays within what an iteration pushes; a
   * head's ticks only grow. */
  uint64_t last_ticks = before.ticks, head_ticks[NTHREADS] = {0};
  do {
    StrobeStats st;
    strobe_dynstack_stats(&st);
    NOTE(st.ticks >= last_ticks);
    NOTE(st.ticks <= before.ticks + NTHREADS * expected.ticks);
    NOTE(st.drops <= before.drops + NTHREADS * expected.drops);
    last_ticks = st.ticks;
    for (int i = 0; i < NTHREADS; i++) {
      const StrobeThreadStack *s = __atomic_load_n(&w[i].stack, __ATOMIC_ACQUIRE);
      if (!s) continue;
      NOTE(strobe_dynstack_depth(s) <= 5);
      uint64_t t = __atomic_load_n(&s->head->ticks, __ATOMIC_RELAXED);
      NOTE(t >= head_ticks[i] && t <= expected.ticks);
      head_ticks[i] = t;
    }
  } while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) > 0);
  pthread_barrier_wait(&checked);

  /* every worker, stopped: the registry lists each with its stack */
  NOTE(strobe_registry.nthreads == NTHREADS);
  NOTE(strobe_registry.generation % 2 == 0);
  int found = 0;
  for (const StrobeThreadStack *s = strobe_registry.threads; s; s = s->next) {
    for (int i = 0; i < NTHREADS; i++) {
      if (s->tid != w[i].tid) continue;
      found++;
      if (!w[i].ok && !problem[0]) snprintf(problem, sizeof problem, "worker %d: %s", i, w[i].why);
      NOTE(s == w[i].stack);
      NOTE(stack_after(s, w[i].base, ITERATIONS));
      NOTE(s->capacity == CAPACITY);
      NOTE(s->busy == 0);
      NOTE(s->counters.ticks == 0); /* a thread's record: its head has them */
      NOTE(s->head->ticks == expected.ticks);
      NOTE(s->counters.slow_ticks == expected.slow_ticks);
      NOTE(s->counters.slow_pops == expected.slow_pops);
      NOTE(s->counters.slow_rets == expected.slow_rets);
      NOTE(s->counters.drops == expected.drops);
      NOTE(s->counters.tail_drops == expected.tail_drops);
      for (int j = 0; j < i; j++) NOTE(s->head != w[j].stack->head);
    }
  }
  NOTE(found == NTHREADS);
  /* the totals, with the workers stopped: exactly the sum */
  StrobeStats st;
  strobe_dynstack_stats(&st);
#define SUMS(name, help) NOTE(st.name - before.name == NTHREADS * expected.name);
  STROBE_STATS(SUMS)

  pthread_barrier_wait(&may_exit);
  for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_join(w[i].thread, NULL), 0);
  pthread_barrier_destroy(&checked);
  pthread_barrier_destroy(&may_exit);
  if (problem[0]) fail_msg("%s", problem);

  /* gone from the registry, their counts kept */
  assert_null(strobe_registry.threads);
  assert_int_equal(strobe_registry.nthreads, 0);
  assert_int_equal(strobe_registry.nexited, exited + NTHREADS);
  strobe_dynstack_stats(&st);
  STROBE_STATS(SUMS)
#undef SUMS
  if (problem[0]) fail_msg("%s", problem);
  assert_int_equal(strobe_registry.exited.ticks - before.ticks, NTHREADS * expected.ticks);
}

static void *tick_once(void *arg) {
  strobe_tick_fast(&ping, 0x1000);   /* its first: slow */
  strobe_tick_fast(&ping_a, 0x1000); /* inline: 2b */
  strobe_tick_fast(&ping_b, 0x1000); /* inline: 2c, 2b */
  strobe_tick_fast(&ping, 0x1000);   /* inline: 2c, 2a */
  *(uint64_t *)arg = (uint64_t)gettid();
  return NULL;
}

static void test_exited_thread_leaves_registry(void **state) {
  (void)state;
  uint64_t exited = strobe_registry.nexited, tid = 0;
  StrobeStats before;
  strobe_dynstack_stats(&before);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, tick_once, &tid), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  for (const StrobeThreadStack *s = strobe_registry.threads; s; s = s->next)
    assert_int_not_equal(s->tid, tid);
  assert_int_equal(strobe_registry.nexited, exited + 1);
  StrobeStats st;
  strobe_dynstack_stats(&st);
  assert_int_equal(st.ticks - before.ticks, 4);
  assert_int_equal(st.slow_ticks - before.slow_ticks, 1); /* its first */
  assert_int_equal(st.threads - before.threads, 1);

  /* this thread's stack is its own: the other's ticks are not in it */
  assert_null(strobe_dynstack_current());
  assert_int_equal(strobe_dynstack_head.ticks, 0);
  strobe_tick_fast(&pong, 0x2000);
  const StrobeThreadStack *mine = strobe_dynstack_current();
  assert_non_null(mine);
  assert_int_equal(strobe_dynstack_depth(mine), 1);
  assert_int_equal(mine->tid, (uint64_t)gettid());
  assert_ptr_equal(mine->head, &strobe_dynstack_head);
  assert_ptr_equal(strobe_registry.threads, mine);
  StrobeStats own;
  strobe_dynstack_thread_stats(&own);
  assert_int_equal(own.ticks, 1);
  assert_int_equal(own.threads, 1);
  strobe_dynstack_release();
  assert_null(strobe_registry.threads);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_threads_have_their_own_stacks, defaults, defaults),
      cmocka_unit_test_setup_teardown(test_exited_thread_leaves_registry, defaults, defaults),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
