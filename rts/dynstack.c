/* dynstack.c — the dynamic stack (DESIGN.md §9): the slow paths of the intrinsics,
 * each thread's stack, the registry that debuggers read, and the statistics.
 *
 * The inline fast paths (strobe/dynstack.h) handle what changes nothing or only counts
 * a repeat; everything else arrives here.  A thread's first tick allocates its stack
 * (a header and a ring of `capacity` entries, in one block) and registers it; after
 * that nothing allocates: a push into a full ring overwrites the oldest entry.  Each
 * slow path ends by copying the top entry into the thread-local cache that the fast
 * paths read (sync_cache), which is the one invariant every change here keeps.
 *
 * Concurrency.  A stack is written only by its thread.  strobe_dynstack_stats reads
 * other threads' counters, shapes and repeat counts while they run, so those fields
 * are written and read with relaxed atomics (plain moves on x86-64); the rest of an
 * entry is read only by its thread (reports) or by a debugger that stopped it.  The
 * registry list changes under registry_lock, its generation odd meanwhile. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid */
#endif
#include "rt_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* initial-exec: the slow paths reach it without __tls_get_addr in libstrobe-rt.so too
 * (which may then not be dlopen'ed late into a process short of static TLS). */
__attribute__((tls_model("initial-exec"))) STROBE_THREAD_LOCAL StrobeDynStackCache
    strobe_dynstack_cache = {.top_wm = UINTPTR_MAX};

StrobeRegistry strobe_registry = {
    .magic = STROBE_REGISTRY_MAGIC,
    .version = STROBE_REGISTRY_VERSION,
    .header_size = sizeof(StrobeRegistry),
    .thread_size = sizeof(StrobeThreadStack),
    .entry_size = sizeof(StrobeEntry),
    .desc_size = sizeof(StrobeTickDesc),
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key; /* its destructor takes an exiting thread's stack away */
static StrobeOptions options;    /* under registry_lock */

/* ---- relaxed accesses (see Concurrency above) ------------------------------------- */

static uint64_t load64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static void store64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static void bump(uint64_t *counter, uint64_t n) { store64(counter, load64(counter) + n); }

/* Publishes a new top and depth.  Release, so that a signal handler on this thread,
 * or a debugger stopping it, never sees the shape before the entry it points at. */
static void set_shape(StrobeThreadStack *s, uint32_t top, uint32_t depth) {
  __atomic_store_n(&s->top, top, __ATOMIC_RELEASE);
  __atomic_store_n(&s->depth, depth, __ATOMIC_RELEASE);
}

static StrobeEntry *at(StrobeThreadStack *s, uint32_t i) {
  return (StrobeEntry *)strobe_dynstack_at(s, i);
}

/* ---- comparing descriptors -------------------------------------------------------- */

static bool same_string(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_function(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return same_string(a->function, b->function);
}

static bool same_span(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return a->line1 == b->line1 && a->col1 == b->col1 && a->line2 == b->line2 &&
         a->col2 == b->col2;
}

/* The same expression: one source note may become several descriptors (one per block
 * it covers, or copied into a combined scope), and they must count as one, or a loop
 * through two of them would grow the stack. */
static bool same_expr(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return a == b || (a->kind == b->kind && same_span(a, b) && same_function(a, b) &&
                    same_string(a->file, b->file));
}

static bool before_or_at(uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2) {
  return l1 < l2 || (l1 == l2 && c1 <= c2);
}

/* a's span strictly contains b's, in the same file.  Strictly: two equal spans of
 * different functions nested in each other would push forever. */
static bool encloses(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return a->kind == STROBE_TICK_SOURCE_NOTE && b->kind == STROBE_TICK_SOURCE_NOTE &&
         !same_span(a, b) && before_or_at(a->line1, a->col1, b->line1, b->col1) &&
         before_or_at(b->line2, b->col2, a->line2, a->col2) && same_string(a->file, b->file);
}

/* ---- the stack's primitive changes ------------------------------------------------ */

/* The cache after any change: see "The fast-path cache" in strobe/dynstack.h. */
static void sync_cache(StrobeThreadStack *s) {
  StrobeDynStackCache *c = &strobe_dynstack_cache;
  if (s->depth > 0) {
    StrobeEntry *e = at(s, 0);
    c->top_wm = e->wm;
    c->top_desc = e->desc;
    c->top = e;
  } else {
    c->top_wm = s->dropped ? s->dropped_wm : UINTPTR_MAX;
    c->top_desc = NULL;
    c->top = NULL;
  }
}

/* Counts an entry of the ring, or one that never got into it, as dropped. */
static void drop(StrobeThreadStack *s, uintptr_t wm, uint64_t repeats) {
  bump(&s->counters.drops, 1);
  bump(&s->counters.retired_repeats, repeats);
  if (s->dropped++ == 0) s->dropped_wm = wm; /* the oldest dropped, as drops go oldest first */
}

static void push(StrobeThreadStack *s, const StrobeTickDesc *desc, uintptr_t sp) {
  bump(&s->counters.pushes, 1);
  if (s->capacity == 0) {
    drop(s, sp, 0);
    return;
  }
  uint32_t slot = s->top + 1 == s->capacity ? 0 : s->top + 1;
  uint32_t depth = s->depth;
  StrobeEntry *e = &s->entries[slot];
  if (depth == s->capacity) drop(s, e->wm, load64(&e->repeats)); /* full: the oldest goes */
  else depth++;
  e->desc = desc;
  e->wm = sp;
  store64(&e->repeats, 0);
  e->flags = 0;
  e->elided = 0;
  set_shape(s, slot, depth);
}

static void pop_top(StrobeThreadStack *s) {
  bump(&s->counters.retired_repeats, load64(&at(s, 0)->repeats));
  bump(&s->counters.pops, 1);
  set_shape(s, s->top ? s->top - 1 : s->capacity - 1, s->depth - 1);
}

static void count_repeat(StrobeThreadStack *s, StrobeEntry *e) {
  bump(&e->repeats, 1);
  bump(&s->counters.slow_repeats, 1);
  e->flags &= ~(uint32_t)STROBE_ENTRY_TAIL; /* it is running again */
}

static bool is_stale(uintptr_t wm, uintptr_t sp, bool inclusive) {
  return wm < sp || (inclusive && wm == sp);
}

/* Pops the entries that Sp = sp shows finished (Note [Watermarks]); once none is left,
 * forgets the dropped ones too if they are finished as well. */
static void pop_finished(StrobeThreadStack *s, uintptr_t sp, bool inclusive) {
  while (s->depth > 0 && is_stale(at(s, 0)->wm, sp, inclusive)) pop_top(s);
  if (s->depth == 0 && s->dropped && is_stale(s->dropped_wm, sp, inclusive)) s->dropped = 0;
}

/* Removes the m entries from the i-th newest on (i >= 1): the entries above move down,
 * and the one just above the gap counts them as one elided tail call, plus whatever
 * they had elided themselves. */
static void elide(StrobeThreadStack *s, uint32_t i, uint32_t m) {
  uint64_t elided = 1;
  for (uint32_t j = i; j < i + m; j++) {
    elided += at(s, j)->elided;
    bump(&s->counters.retired_repeats, load64(&at(s, j)->repeats));
  }
  bump(&s->counters.tail_drops, 1);
  for (uint32_t j = i; j-- > 0;) { /* older first: a destination is never still a source */
    StrobeEntry *from = at(s, j), *to = at(s, j + m);
    to->desc = from->desc;
    to->wm = from->wm;
    store64(&to->repeats, load64(&from->repeats));
    to->flags = from->flags;
    to->elided = from->elided;
  }
  set_shape(s, s->top >= m ? s->top - m : s->top + s->capacity - m, s->depth - m);
  StrobeEntry *above = at(s, i - 1);
  elided += above->elided;
  above->elided = elided > UINT32_MAX ? UINT32_MAX : (uint32_t)elided;
}

/* ---- strobe_tick's rules ---------------------------------------------------------- */

/* If desc's function has a frame at depth sp below the top, sets *base to the index of
 * that frame's oldest entry: the run of its function's entries at sp that starts with
 * the newest one. */
static bool frame_of(StrobeThreadStack *s, const StrobeTickDesc *desc, uintptr_t sp,
                     uint32_t *base) {
  for (uint32_t i = 1; i < s->depth && at(s, i)->wm == sp; i++) {
    if (!same_function(at(s, i)->desc, desc)) continue;
    while (i + 1 < s->depth && at(s, i + 1)->wm == sp && same_function(at(s, i + 1)->desc, desc))
      i++;
    *base = i;
    return true;
  }
  return false;
}

/* Rule 2d, a cycle of tail calls: truncate back to the frame's oldest entry and count a
 * repeat on it, as cost-centre stacks do on recursion; then it shows desc. */
static void reenter(StrobeThreadStack *s, uint32_t base, const StrobeTickDesc *desc,
                    uintptr_t sp) {
  for (uint32_t i = 0; i < base; i++) pop_top(s);
  StrobeEntry *e = at(s, 0);
  count_repeat(s, e);
  if (same_expr(e->desc, desc)) return;
  if (encloses(e->desc, desc)) push(s, desc, sp);
  else e->desc = desc;
}

/* Rule 2d, the limit: while depth sp has more than tail_limit tail entries, elide the
 * oldest with the entries of its function below it at that depth (its enclosing
 * expressions: they made the tail call too). */
static void limit_tails(StrobeThreadStack *s, uintptr_t sp) {
  for (;;) {
    uint32_t n = 0, oldest = 0;
    for (uint32_t i = 0; i < s->depth && at(s, i)->wm == sp; i++) {
      if (at(s, i)->flags & STROBE_ENTRY_TAIL) {
        n++;
        oldest = i;
      }
    }
    if (n <= s->tail_limit) return;
    const StrobeTickDesc *fn = at(s, oldest)->desc;
    uint32_t m = 1;
    while (oldest + m < s->depth) {
      const StrobeEntry *e = at(s, oldest + m);
      if (e->wm != sp || (e->flags & STROBE_ENTRY_TAIL) || !same_function(e->desc, fn)) break;
      m++;
    }
    elide(s, oldest, m);
  }
}

/* Rules 2 and 3 of strobe_tick (strobe/dynstack.h), once nothing is stale. */
static void tick_at_depth(StrobeThreadStack *s, const StrobeTickDesc *desc, uintptr_t sp) {
  while (s->depth > 0 && at(s, 0)->wm == sp) {
    StrobeEntry *top = at(s, 0);
    if (same_expr(top->desc, desc)) { /* 2a */
      count_repeat(s, top);
      return;
    }
    if (encloses(top->desc, desc)) break; /* 2b */
    if (same_function(top->desc, desc)) { /* 2c */
      pop_top(s);
      continue;
    }
    uint32_t base; /* 2d */
    if (frame_of(s, desc, sp, &base)) {
      reenter(s, base, desc, sp);
    } else {
      top->flags |= STROBE_ENTRY_TAIL;
      push(s, desc, sp);
      limit_tails(s, sp);
    }
    return;
  }
  push(s, desc, sp); /* 2b, 3 */
}

/* ---- the threads' stacks ---------------------------------------------------------- */

static void set_options(const StrobeOptions *o) {
  pthread_mutex_lock(&registry_lock);
  options = *o;
  strobe_registry.capacity = o->capacity;
  strobe_registry.tail_limit = o->tail_limit;
  uint32_t flags = (o->pops_everywhere ? STROBE_REGISTRY_POPS_EVERYWHERE : 0) |
                   (o->crash_report ? STROBE_REGISTRY_CRASH_REPORT : 0) |
                   (o->report_at_exit ? STROBE_REGISTRY_REPORT_AT_EXIT : 0);
  __atomic_store_n(&strobe_registry.flags, flags, __ATOMIC_RELAXED); /* read by handlers */
  pthread_mutex_unlock(&registry_lock);
  if (o->crash_report) rt_install_fatal_handlers();
}

/* Adds the counters c to *sum.  c may belong to a running thread (relaxed reads; see
 * Concurrency). */
static void add_counters(StrobeCounters *sum, const StrobeCounters *c) {
  sum->slow_ticks += load64(&c->slow_ticks);
  sum->slow_pops += load64(&c->slow_pops);
  sum->slow_rets += load64(&c->slow_rets);
  sum->slow_repeats += load64(&c->slow_repeats);
  sum->retired_repeats += load64(&c->retired_repeats);
  sum->pushes += load64(&c->pushes);
  sum->pops += load64(&c->pops);
  sum->drops += load64(&c->drops);
  sum->tail_drops += load64(&c->tail_drops);
}

/* The repeats that s's live entries hold (they join retired_repeats when popped). */
static uint64_t live_repeats(StrobeThreadStack *s) {
  uint32_t depth = __atomic_load_n(&s->depth, __ATOMIC_ACQUIRE);
  uint32_t top = __atomic_load_n(&s->top, __ATOMIC_ACQUIRE), cap = s->capacity;
  uint64_t n = 0;
  for (uint32_t i = 0; i < depth && i < cap; i++) /* strobe_dynstack_at, read once */
    n += load64(&s->entries[top >= i ? top - i : top + cap - i].repeats);
  return n;
}

/* Takes s off the registry, adds its counters to the exited threads', and frees it. */
static void retire(StrobeThreadStack *s) {
  pthread_mutex_lock(&registry_lock);
  strobe_registry.generation++;
  for (StrobeThreadStack **p = &strobe_registry.threads; *p; p = &(*p)->next) {
    if (*p == s) {
      *p = s->next;
      break;
    }
  }
  strobe_registry.nthreads--;
  strobe_registry.nexited++;
  add_counters(&strobe_registry.exited, &s->counters);
  strobe_registry.exited.retired_repeats += live_repeats(s);
  strobe_registry.generation++;
  pthread_mutex_unlock(&registry_lock);
  free(s);
}

/* Forgets the calling thread's stack s: the cache empties before s goes. */
static void release(StrobeThreadStack *s) {
  if (strobe_dynstack_cache.stack == s)
    strobe_dynstack_cache = (StrobeDynStackCache){.top_wm = UINTPTR_MAX};
  retire(s);
}

static void on_thread_exit(void *s) { release(s); }

static StrobeThreadStack *start_stack(void) {
  rt_dynstack_init();
  pthread_mutex_lock(&registry_lock);
  uint32_t capacity = options.capacity, tail_limit = options.tail_limit;
  pthread_mutex_unlock(&registry_lock);
  StrobeThreadStack *s = calloc(1, sizeof *s + (size_t)capacity * sizeof(StrobeEntry));
  if (!s && capacity > 0) { /* never fail: keep nothing, count every push as dropped */
    capacity = 0;
    s = calloc(1, sizeof *s);
  }
  if (!s) return NULL;
  s->tid = (uint64_t)gettid();
  s->entries = capacity > 0 ? (StrobeEntry *)(s + 1) : NULL;
  s->capacity = capacity;
  s->top = capacity > 0 ? capacity - 1 : 0; /* so that the first push goes to slot 0 */
  s->tail_limit = tail_limit;

  pthread_mutex_lock(&registry_lock);
  strobe_registry.generation++;
  s->next = strobe_registry.threads;
  strobe_registry.threads = s;
  strobe_registry.nthreads++;
  strobe_registry.generation++;
  pthread_mutex_unlock(&registry_lock);

  pthread_setspecific(thread_key, s);
  strobe_dynstack_cache.stack = s;
  sync_cache(s);
  return s;
}

/* ---- the slow paths --------------------------------------------------------------- */

/* A slow path's changes happen between begin and end: busy tells a reader that stops
 * the thread in between (a debugger, this thread's crash handler) to be careful. */
static void begin(StrobeThreadStack *s) {
  s->busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void end(StrobeThreadStack *s) {
  sync_cache(s);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->busy = 0;
}

void strobe_tick(const StrobeTickDesc *desc, uintptr_t sp) {
  StrobeThreadStack *s = strobe_dynstack_cache.stack;
  if (!desc || (!s && !(s = start_stack()))) return;
  begin(s);
  bump(&s->counters.slow_ticks, 1);
  pop_finished(s, sp, false);
  tick_at_depth(s, desc, sp);
  end(s);
}

/* Before a thread's first tick its stack is empty: nothing to pop, nothing to start. */
void strobe_pop(uintptr_t sp) {
  StrobeThreadStack *s = strobe_dynstack_cache.stack;
  if (!s) return;
  begin(s);
  bump(&s->counters.slow_pops, 1);
  pop_finished(s, sp, false);
  end(s);
}

void strobe_ret(uintptr_t sp) {
  StrobeThreadStack *s = strobe_dynstack_cache.stack;
  if (!s) return;
  begin(s);
  bump(&s->counters.slow_rets, 1);
  pop_finished(s, sp, true);
  end(s);
}

/* ---- process-wide set-up ---------------------------------------------------------- */

/* fork: the child has one thread, the one that forked.  The others' stacks stay in
 * the parent; the child forgets them (and does not count them as exited). */
static void before_fork(void) { pthread_mutex_lock(&registry_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&registry_lock); }
static void after_fork_child(void) {
  StrobeThreadStack *mine = strobe_dynstack_cache.stack, *next;
  for (StrobeThreadStack *s = strobe_registry.threads; s; s = next) {
    next = s->next;
    if (s != mine) free(s);
  }
  strobe_registry.threads = mine;
  strobe_registry.nthreads = mine != NULL;
  if (mine) mine->next = NULL;
  pthread_mutex_unlock(&registry_lock);
}

static void init(void) {
  StrobeOptions o;
  const char *bad = strobe_options_parse(getenv("STROBE_OPTIONS"), &o);
  if (bad) {
    /* strobe_rt_main stops a standalone program before this; anything else runs on */
    fprintf(stderr, "strobe: ignoring STROBE_OPTIONS: bad entry '%.*s'\n",
            (int)strcspn(bad, ","), bad);
    strobe_options_parse(NULL, &o);
  }
  pthread_key_create(&thread_key, on_thread_exit);
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  atexit(rt_report_at_exit);
  set_options(&o);
}

void rt_dynstack_init(void) { pthread_once(&init_once, init); }

void strobe_dynstack_configure(const StrobeOptions *opts) {
  rt_dynstack_init();
  set_options(opts);
}

void strobe_dynstack_release(void) {
  StrobeThreadStack *s = strobe_dynstack_cache.stack;
  if (!s) return;
  pthread_setspecific(thread_key, NULL);
  release(s);
}

const StrobeThreadStack *strobe_dynstack_current(void) { return strobe_dynstack_cache.stack; }

/* ---- statistics ------------------------------------------------------------------- */

static void derive(StrobeStats *out, const StrobeCounters *c, uint64_t live, uint64_t threads) {
  uint64_t repeats = c->retired_repeats + live;
  /* approximate while other threads run: never let a difference wrap */
  uint64_t inline_repeats = repeats > c->slow_repeats ? repeats - c->slow_repeats : 0;
  *out = (StrobeStats){
      .ticks = c->slow_ticks + inline_repeats,
      .repeats = repeats,
      .pushes = c->pushes,
      .pops = c->pops,
      .drops = c->drops,
      .tail_drops = c->tail_drops,
      .slow_calls = c->slow_ticks + c->slow_pops + c->slow_rets,
      .threads = threads,
  };
}

void strobe_dynstack_stats(StrobeStats *out) {
  StrobeCounters sum = {0};
  uint64_t live = 0;
  pthread_mutex_lock(&registry_lock);
  add_counters(&sum, &strobe_registry.exited);
  for (StrobeThreadStack *s = strobe_registry.threads; s; s = s->next) {
    add_counters(&sum, &s->counters);
    live += live_repeats(s);
  }
  uint64_t threads = strobe_registry.nthreads + strobe_registry.nexited;
  pthread_mutex_unlock(&registry_lock);
  derive(out, &sum, live, threads);
}

void strobe_dynstack_thread_stats(StrobeStats *out) {
  StrobeCounters c = {0};
  StrobeThreadStack *s = strobe_dynstack_cache.stack;
  if (s) add_counters(&c, &s->counters);
  derive(out, &c, s ? live_repeats(s) : 0, s != NULL);
}

/* ---- the descriptors -------------------------------------------------------------- */

/* The linker defines these for a section whose name is a C identifier (here
 * STROBE_TICK_SECTION), in the module that has one; hidden, so that a shared libstrobe-rt sees only its own (none). */
extern const StrobeTickDesc __start_strobe_ticks[] __attribute__((weak, visibility("hidden")));
extern const StrobeTickDesc __stop_strobe_ticks[] __attribute__((weak, visibility("hidden")));

const StrobeTickDesc *strobe_tick_descs(size_t *count) {
  if (!__start_strobe_ticks || !__stop_strobe_ticks) {
    *count = 0;
    return NULL;
  }
  *count = (size_t)(__stop_strobe_ticks - __start_strobe_ticks);
  return __start_strobe_ticks;
}
