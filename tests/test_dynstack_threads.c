/* test_dynstack_threads.c — the dynamic stack with several threads: each thread has
 * its own stack and cache, the registry lists every thread while it runs and forgets
 * it when it exits, and the totals add up, while another thread reads them.
 *
 * Built twice: test_dynstack_threads, like the other tests (and so also under ASan and
 * UBSan with STROBE_SANITIZE), and test_dynstack_threads_tsan, with the runtime's
 * sources compiled in, under ThreadSanitizer, which fails the test on a data race. */
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
#include <unistd.h>

#include "strobe/dynstack.h"
#include "strobe/rt.h"

static const StrobeTickDesc ping = {STROBE_TICK_SOURCE_NOTE, 1, 1, 1, 40, 0, "Main.ping", "Loop.hs", NULL};
static const StrobeTickDesc pong = {STROBE_TICK_SOURCE_NOTE, 5, 1, 5, 40, 0, "Main.pong", "Loop.hs", NULL};
static const StrobeTickDesc leaf = {STROBE_TICK_SOURCE_NOTE, 9, 3, 9, 8, 0, "Main.leaf", "Loop.hs", NULL};

enum { NTHREADS = 4, ITERATIONS = 20000 };

typedef struct Worker {
  pthread_t thread;
  uintptr_t base; /* its Sp: each thread has its own Cmm stack */
  uint64_t tid;
  bool ok; /* its own checks passed */
} Worker;

static pthread_barrier_t checked, may_exit; /* with main: NTHREADS + 1 */
static int running;                         /* workers not yet at `checked` */

/* One iteration: ping tail-calls pong (a cycle back to ping from the second on), which
 * calls leaf one frame deeper, twice in place, and returns.  So per iteration: 4 ticks,
 * one an inline repeat; pushes pong and leaf; pops pong (the cycle) and leaf (ret). */
static void iterate(uintptr_t base) {
  strobe_tick_fast(&ping, base);
  strobe_tick_fast(&pong, base);
  strobe_tick_fast(&leaf, base - 16);
  strobe_tick_fast(&leaf, base - 16);
  strobe_ret_fast(base - 16);
  strobe_pop_fast(base - 16); /* nothing: no call */
}

/* The stack after n iterations: pong, on ping (tail) entered n times. */
static bool stack_after(const StrobeThreadStack *s, uintptr_t base, uint64_t n) {
  if (!s || s->depth != 2) return false;
  const StrobeEntry *top = strobe_dynstack_at(s, 0), *below = strobe_dynstack_at(s, 1);
  return top->desc == &pong && top->wm == base && top->repeats == 0 &&
         below->desc == &ping && below->wm == base && below->repeats == n - 1 &&
         (below->flags & STROBE_ENTRY_TAIL);
}

static void *work(void *arg) {
  Worker *w = arg;
  w->tid = (uint64_t)gettid();
  for (int i = 0; i < ITERATIONS; i++) iterate(w->base);
  const StrobeThreadStack *s = strobe_dynstack_current();
  const StrobeDynStackCache *c = &strobe_dynstack_cache;
  w->ok = stack_after(s, w->base, ITERATIONS) && c->stack == s &&
          c->top == strobe_dynstack_at(s, 0) && c->top_desc == &pong && c->top_wm == w->base;
  __atomic_fetch_sub(&running, 1, __ATOMIC_RELEASE);
  pthread_barrier_wait(&checked);
  pthread_barrier_wait(&may_exit);
  return NULL;
}

static void test_threads_have_their_own_stacks(void **state) {
  (void)state;
  StrobeStats before;
  strobe_dynstack_stats(&before);
  uint64_t exited = strobe_registry.nexited;

  Worker w[NTHREADS];
  pthread_barrier_init(&checked, NULL, NTHREADS + 1);
  pthread_barrier_init(&may_exit, NULL, NTHREADS + 1);
  running = NTHREADS;
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (Worker){.base = (uintptr_t)(i + 1) << 20};
    assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
  }
  /* the totals, read while the workers run */
  long reads = 0;
  while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) > 0) {
    StrobeStats st;
    strobe_dynstack_stats(&st);
    reads++;
  }
  assert_true(reads > 0);
  pthread_barrier_wait(&checked);

  /* every worker, stopped: the registry lists each with its stack */
  assert_int_equal(strobe_registry.nthreads, NTHREADS);
  assert_int_equal(strobe_registry.generation % 2, 0);
  int found = 0;
  for (const StrobeThreadStack *s = strobe_registry.threads; s; s = s->next) {
    for (int i = 0; i < NTHREADS; i++) {
      if (s->tid != w[i].tid) continue;
      found++;
      assert_true(w[i].ok);
      assert_true(stack_after(s, w[i].base, ITERATIONS));
      assert_int_equal(s->capacity, 1024);
      assert_int_equal(s->busy, 0);
      assert_int_equal(s->counters.slow_ticks, 3 * ITERATIONS);
    }
  }
  assert_int_equal(found, NTHREADS);

  pthread_barrier_wait(&may_exit);
  for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_join(w[i].thread, NULL), 0);
  pthread_barrier_destroy(&checked);
  pthread_barrier_destroy(&may_exit);

  /* gone from the registry, their counts kept */
  assert_null(strobe_registry.threads);
  assert_int_equal(strobe_registry.nthreads, 0);
  assert_int_equal(strobe_registry.nexited, exited + NTHREADS);
  StrobeStats st;
  strobe_dynstack_stats(&st);
  const uint64_t n = ITERATIONS, k = NTHREADS;
  assert_int_equal(st.ticks - before.ticks, k * 4 * n);
  assert_int_equal(st.repeats - before.repeats, k * (2 * n - 1)); /* leaf's, ping's */
  assert_int_equal(st.pushes - before.pushes, k * (2 * n + 1));
  assert_int_equal(st.pops - before.pops, k * (2 * n - 1));
  assert_int_equal(st.slow_calls - before.slow_calls, k * 4 * n); /* 3 ticks and ret */
  assert_int_equal(st.threads - before.threads, k);
}

static void *tick_once(void *arg) {
  strobe_tick_fast(&ping, 0x1000);
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
  assert_int_equal(st.ticks - before.ticks, 1);
  assert_int_equal(st.pushes - before.pushes, 1);

  /* this thread's stack is its own: the other's ticks are not in it */
  assert_null(strobe_dynstack_current());
  strobe_tick_fast(&pong, 0x2000);
  const StrobeThreadStack *mine = strobe_dynstack_current();
  assert_non_null(mine);
  assert_int_equal(mine->depth, 1);
  assert_int_equal(mine->tid, (uint64_t)gettid());
  assert_ptr_equal(strobe_registry.threads, mine);
  strobe_dynstack_release();
  assert_null(strobe_registry.threads);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_have_their_own_stacks),
      cmocka_unit_test(test_exited_thread_leaves_registry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
