/* deep_threads.c — the C side of deep.cmm for a program of several threads, which has
 * its own main: it starts NTHREADS threads, and each runs the Cmm program on a stack of
 * its own (strobe_rt_run) to a depth of its own, thread i (from 0) going i + 2 levels
 * deep.  At the bottom they meet: the last to arrive calls deep_all_met, where a
 * debugger stops with every thread inside Cmm code at the bottom of its recursion, and
 * then all of them return.  Exits with 0 if every run returned 0. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "strobe/rt.h"

enum { NTHREADS = 3 };

static pthread_barrier_t met, go;
static _Thread_local int64_t depth;

int64_t deep_depth(void) { return depth; }

/* Where a debugger stops: every thread waits at the bottom of its recursion. */
__attribute__((noinline)) void deep_all_met(void) { __asm__ volatile(""); }

int64_t deep_bottom(int64_t n) {
  if (pthread_barrier_wait(&met) == PTHREAD_BARRIER_SERIAL_THREAD) deep_all_met();
  pthread_barrier_wait(&go);
  return n;
}

static void *run(void *arg) {
  depth = (int64_t)(intptr_t)arg;
  int64_t r;
  return (void *)(intptr_t)(strobe_rt_run(strobe_entry, &r) == 0 ? r : 2);
}

int main(void) {
  pthread_t threads[NTHREADS];
  pthread_barrier_init(&met, NULL, NTHREADS);
  pthread_barrier_init(&go, NULL, NTHREADS);
  for (int i = 0; i < NTHREADS; i++)
    pthread_create(&threads[i], NULL, run, (void *)(intptr_t)(i + 2));
  int status = 0;
  for (int i = 0; i < NTHREADS; i++) {
    void *r;
    pthread_join(threads[i], &r);
    if (r != NULL) status = 1;
  }
  return status;
}
