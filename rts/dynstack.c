/* dynstack.c — the dynamic stack (docs/design.md, "The dynamic stack"): the slow paths
 * of the intrinsics, each thread's stack, the registry that debuggers read, and the
 * statistics.
 *
 * The inline fast paths (strobe/dynstack.h) push onto a deeper frame, count a repeat,
 * and pop stale entries; everything else arrives here: the same-depth rules, a full
 * array, the dropped entries, a thread's first tick.  That tick allocates the thread's
 * stack (a record, and two sentinels and `capacity` entries in a block of their own)
 * and registers it; after that only a full array that may grow allocates (grow).  The thread-local head's `top` is the one pointer
 * to the newest entry, changed here as inline, and every slot above it is clear
 * (set_top): the invariants every change here keeps (Note [The entries and their
 * sentinels] in strobe/dynstack.h).
 *
 * Concurrency.  A stack is written only by its thread.  strobe_dynstack_stats reads
 * other threads' counters and tick counts while they run, so those fields are written
 * and read with relaxed atomics (plain moves on x86-64); the entries are read only by
 * their thread (reports) or by a debugger that stopped it.  The registry list changes
 * under registry_lock, its generation odd meanwhile. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid */
#endif
#include "profile.h"
#include "rt_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "span.h" /* the containment rule of rule 2b */

/* A sentinel's descriptor.  Its function is a string of its own: a descriptor whose
 * function is NULL must not look like a sentinel's sibling to the inline walk. */
const StrobeTickDesc strobe_dynstack_no_desc = {.kind = 0, .function = "(no descriptor)"};

const StrobeTickDesc strobe_dynstack_dropped_desc = {.kind = STROBE_TICK_DROPPED,
                                                     .function = "(dropped entries)"};

/* The head of a thread with no stack points at this sentinel, which pops nothing and
 * pushes nothing inline (Note [The entries and their sentinels]). */
const StrobeEntry strobe_dynstack_empty = {.desc = &strobe_dynstack_no_desc, .wm = UINTPTR_MAX};
#define EMPTY_HEAD                                                                       \
  ((StrobeDynStackHead){.top = (StrobeEntry *)&strobe_dynstack_empty,                    \
                        .base = (StrobeEntry *)&strobe_dynstack_empty})

/* initial-exec: the slow paths reach it without __tls_get_addr in libstrobe-rt.so too
 * (which may then not be dlopen'ed late into a process short of static TLS). */
__attribute__((tls_model("initial-exec"))) STROBE_THREAD_LOCAL StrobeDynStackHead
    strobe_dynstack_head = EMPTY_HEAD;

StrobeRegistry strobe_registry = {
    .magic = STROBE_REGISTRY_MAGIC,
    .version = STROBE_REGISTRY_VERSION,
    .header_size = sizeof(StrobeRegistry),
    .thread_size = sizeof(StrobeThreadStack),
    .entry_size = sizeof(StrobeEntry),
    .desc_size = sizeof(StrobeTickDesc),
    .head_size = sizeof(StrobeDynStackHead),
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key; /* its destructor takes an exiting thread's stack away */
static StrobeOptions options;    /* under registry_lock */

/* ---- relaxed accesses (see Concurrency above) ------------------------------------- */

static uint64_t load64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static void store64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static void bump(uint64_t *counter, uint64_t n) { store64(counter, load64(counter) + n); }

static StrobeEntry *top(void) { return strobe_dynstack_head.top; }

/* Publishes a top.  Release, so that a signal handler on this thread, or a debugger
 * stopping it, never sees a top before the entry it points at. */
static void publish_top(StrobeEntry *t) {
  __atomic_store_n(&strobe_dynstack_head.top, t, __ATOMIC_RELEASE);
}

/* Moves the top of this thread's stack to t; the slots a lower top frees are cleared
 * (an inline push writes only desc and wm). */
static void set_top(StrobeEntry *t) {
  StrobeEntry *old = top();
  publish_top(t);
  for (StrobeEntry *e = t + 1; e <= old; e++) strobe_entry_clear(e);
}
static StrobeEntry *at(uint32_t i) { return top() - i; }
static uint32_t depth(const StrobeThreadStack *s) { return (uint32_t)(top() - s->entries + 1); }

/* ---- comparing descriptors -------------------------------------------------------- */

static bool same_string(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_function(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return same_string(a->function, b->function);
}

static bool same_span(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return strobe_span_equal(STROBE_SPAN_OF(a), STROBE_SPAN_OF(b));
}

/* The same expression: strobec makes one descriptor per function and note in a module,
 * but code built otherwise (two modules inlining the same code, another front end) may
 * have several, and they must count as one, or a loop through two of them would grow
 * the stack. */
static bool same_expr(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return a == b || (a->kind == b->kind && same_span(a, b) && same_function(a, b) &&
                    same_string(a->file, b->file));
}

/* a's span strictly contains b's, in the same file.  Strictly: two equal spans of
 * different functions nested in each other would push forever. */
static bool encloses(const StrobeTickDesc *a, const StrobeTickDesc *b) {
  return a->kind == STROBE_TICK_SOURCE_NOTE && b->kind == STROBE_TICK_SOURCE_NOTE &&
         strobe_span_encloses(STROBE_SPAN_OF(a), STROBE_SPAN_OF(b)) && same_string(a->file, b->file);
}

/* ---- the stack's primitive changes ------------------------------------------------ */

/* Note [Folding]: the array is full (and as large as `capacity` lets it be).  The
 * newest quarter stays as it is, and so do the KEEP_OLDEST oldest entries (the
 * thread's first: `main`, a forked thread's action), so that a report always shows
 * both ends.  What is between is folded into at most MAX_MARKERS markers, each
 * standing for a run of entries: its watermark is the oldest one's, and `elided` how
 * many entries it stands for.  A marker goes when that oldest entry's frame goes, and
 * a run never splits a level (the entries of one watermark, one frame's), so a marker
 * never outlives its frames.  The markers are one run, the first of what is between:
 *   - the first EXACT_LEVELS markers stand for one level each (a computation that
 *     returns to one of them leaves nothing behind);
 *   - the entries folded now make about NEW_RUNS markers of equal size (a run ends at
 *     the first level change after its size), and while there are too many markers
 *     the two neighbours that stand for fewest entries together become one.
 * What is approximate: a marker of several levels counts all its entries until the
 * oldest of them goes (docs/dynstack-ghc.md).  A fold reads a level's entries only to
 * find where it ends, and moves the newest quarter down: a push past `capacity` costs
 * a few instructions more than one that is not. */
enum { KEEP_OLDEST = 4, MAX_MARKERS = 32, EXACT_LEVELS = 16, NEW_RUNS = 8 };

/* The end of the level that items[i] is in: the first index after i with another
 * watermark, or n. */
static uint32_t level_end(const StrobeEntry *items, uint32_t i, uint32_t n) {
  uint32_t j = i + 1;
  while (j < n && items[j].wm == items[i].wm) j++;
  return j;
}

static StrobeEntry marker(uintptr_t wm, uint64_t count) {
  return (StrobeEntry){.desc = &strobe_dynstack_dropped_desc, .wm = wm,
                       .elided = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count};
}

static void drop_oldest(StrobeThreadStack *s) {
  uint32_t n = depth(s), c = s->capacity;
  bool big = c >= 64; /* room for both ends and the markers */
  uint32_t keep_new = c / 4, oldest = big ? KEEP_OLDEST : 0;
  uint32_t max = big ? MAX_MARKERS : 1, exact = big ? EXACT_LEVELS : 0;
  StrobeEntry *items = s->entries + oldest; /* the markers, then the entries to fold */
  uint32_t nitems = n - keep_new - oldest, m = 0;
  while (m < nitems && strobe_entry_is_dropped(&items[m])) m++;
  uint32_t i = m; /* the next entry to fold; markers are written at m <= i */
  bump(&s->counters.drops, nitems - i);
  for (; m < exact && i < nitems; m++) { /* one level each */
    uint32_t end = level_end(items, i, nitems);
    items[m] = marker(items[i].wm, end - i);
    i = end;
  }
  uint32_t size = (nitems - i + NEW_RUNS - 1) / NEW_RUNS;
  while (i < nitems) {
    uint32_t end = i + size < nitems ? level_end(items, i + size - 1, nitems) : nitems;
    items[m++] = marker(items[i].wm, end - i);
    i = end;
  }
  while (m > max) { /* the neighbours (after the exact ones) that count fewest, as one */
    uint32_t k = m > exact + 1 ? exact : 0;
    for (uint32_t j = k + 1; j + 1 < m; j++)
      if ((uint64_t)items[j].elided + items[j + 1].elided <
          (uint64_t)items[k].elided + items[k + 1].elided)
        k = j;
    items[k] = marker(items[k].wm, (uint64_t)items[k].elided + items[k + 1].elided);
    memmove(items + k + 1, items + k + 2, (size_t)(m - k - 2) * sizeof(StrobeEntry));
    m--;
  }
  memmove(items + m, items + nitems, (size_t)keep_new * sizeof(StrobeEntry));
  set_top(items + m + keep_new - 1); /* which clears the slots the moves left */
}

/* A thread's slots: the two sentinels, then capacity clear slots; NULL if they cannot be
 * had.  entries(s) - 2 is what free takes. */
static StrobeEntry *new_entries(uint32_t capacity) {
  StrobeEntry *block = calloc(2 + (size_t)capacity, sizeof(StrobeEntry));
  if (!block) return NULL;
  block[0] = block[1] = strobe_dynstack_empty;
  return block + 2;
}

static void free_stack(StrobeThreadStack *s) {
  free(s->entries - 2);
  free(s);
}

/* The array is full: doubles it, up to max_capacity, for the calling thread, whose
 * stack s is; false if it is as large as it may be or no memory is left.  A signal
 * handler on this thread sees no stack meanwhile (h->stack NULL, as bind does it). */
static bool grow(StrobeThreadStack *s) {
  if (s->capacity >= s->max_capacity) return false;
  uint32_t capacity = s->capacity > s->max_capacity / 2 ? s->max_capacity : 2 * s->capacity;
  StrobeEntry *entries = new_entries(capacity), *old = s->entries;
  if (!entries) return false;
  uint32_t n = depth(s);
  memcpy(entries, old, (size_t)n * sizeof *entries);
  StrobeDynStackHead *h = &strobe_dynstack_head;
  h->stack = NULL;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->entries = entries;
  s->capacity = capacity;
  h->base = entries - 1;
  h->limit = entries + capacity - 1;
  publish_top(entries + n - 1);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  h->stack = s;
  free(old - 2);
  return true;
}

static void push(StrobeThreadStack *s, const StrobeTickDesc *desc, uintptr_t sp) {
  if (top() >= strobe_dynstack_head.limit && !grow(s)) drop_oldest(s);
  StrobeEntry *e = top() + 1;
  *e = (StrobeEntry){.desc = desc, .wm = sp};
  set_top(e);
}

static void pop_top(void) { set_top(top() - 1); }

static void count_repeat(StrobeEntry *e) {
  bump(&e->repeats, 1);
  e->flags &= ~(uint32_t)STROBE_ENTRY_TAIL; /* it is running again */
}

static bool is_stale(uintptr_t wm, uintptr_t sp, bool inclusive) {
  return wm < sp || (inclusive && wm == sp);
}

/* Pops the entries that Sp = sp shows finished (Note [Watermarks]); the base's
 * UINTPTR_MAX stops it. */
static void pop_finished(uintptr_t sp, bool inclusive) {
  StrobeEntry *t = top();
  while (is_stale(t->wm, sp, inclusive)) t--;
  set_top(t);
}

/* Removes the m entries from the i-th newest on (i >= 1): the entries above move down,
 * and the one just above the gap counts them as one elided tail call, plus whatever
 * they had elided themselves. */
static void elide(StrobeThreadStack *s, uint32_t i, uint32_t m) {
  bump(&s->counters.tail_drops, 1);
  uint64_t elided = 1;
  for (uint32_t j = i; j < i + m; j++) elided += at(j)->elided;
  StrobeEntry *gap = at(i + m - 1); /* the oldest of them */
  memmove(gap, gap + m, (size_t)i * sizeof(StrobeEntry));
  set_top(top() - m); /* and clears the slots the move left */
  StrobeEntry *above = at(i - 1); /* the entry just above the gap, moved down */
  elided += above->elided;
  above->elided = elided > UINT32_MAX ? UINT32_MAX : (uint32_t)elided;
}

/* ---- strobe_tick's rules ---------------------------------------------------------- */

/* If desc's function has a frame at depth sp below the top, sets *base to the index of
 * that frame's oldest entry: the run of its function's entries at sp that starts with
 * the newest one. */
static bool frame_of(StrobeThreadStack *s, const StrobeTickDesc *desc, uintptr_t sp,
                     uint32_t *base) {
  for (uint32_t i = 1; i < depth(s) && at(i)->wm == sp; i++) {
    if (!same_function(at(i)->desc, desc)) continue;
    while (i + 1 < depth(s) && at(i + 1)->wm == sp && same_function(at(i + 1)->desc, desc))
      i++;
    *base = i;
    return true;
  }
  return false;
}

/* Rule 2e: among the entries at depth sp above the first that is desc or contains it,
 * the oldest whose span desc contains, as an index; depth(s) if none.  Such an entry
 * is a sub-expression of desc's that ran first, in the same frame, and has finished:
 * GHC's optimised code evaluates a strict operand before the code around it (-O1's
 * `let (name, stock) = parseEntry s in insertWith merge name stock m` runs
 * parseEntry, then the let's code), and one frame holds both. */
static uint32_t finished_operand(StrobeThreadStack *s, const StrobeTickDesc *desc,
                                 uintptr_t sp) {
  uint32_t found = depth(s);
  for (uint32_t i = 0; i < depth(s) && at(i)->wm == sp; i++) {
    const StrobeTickDesc *d = at(i)->desc;
    if (strobe_entry_is_dropped(at(i)) || same_expr(d, desc) || encloses(d, desc)) break;
    if (encloses(desc, d)) found = i;
  }
  return found;
}

/* Rule 2d, a cycle of tail calls: truncate back to the frame's oldest entry and count a
 * repeat on it, as cost-centre stacks do on recursion; then it shows desc. */
static void reenter(StrobeThreadStack *s, uint32_t base, const StrobeTickDesc *desc,
                    uintptr_t sp) {
  for (uint32_t i = 0; i < base; i++) pop_top();
  StrobeEntry *e = at(0);
  count_repeat(e);
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
    for (uint32_t i = 0; i < depth(s) && at(i)->wm == sp; i++) {
      if (at(i)->flags & STROBE_ENTRY_TAIL) {
        n++;
        oldest = i;
      }
    }
    if (n <= s->tail_limit) return;
    const StrobeTickDesc *fn = at(oldest)->desc;
    uint32_t m = 1;
    while (oldest + m < depth(s)) {
      const StrobeEntry *e = at(oldest + m);
      if (e->wm != sp || (e->flags & STROBE_ENTRY_TAIL) || !same_function(e->desc, fn)) break;
      m++;
    }
    elide(s, oldest, m);
  }
}

/* Rules 2 and 3 of strobe_tick (strobe/dynstack.h), once nothing is stale. */
static void tick_at_depth(StrobeThreadStack *s, const StrobeTickDesc *desc, uintptr_t sp) {
  while (depth(s) > 0 && at(0)->wm == sp) {
    StrobeEntry *t = at(0);
    if (strobe_entry_is_dropped(t)) break; /* what it stands for is not known: 3 */
    if (same_expr(t->desc, desc)) { /* 2a */
      count_repeat(t);
      return;
    }
    if (encloses(t->desc, desc)) break; /* 2b */
    if (same_function(t->desc, desc)) { /* 2c */
      pop_top();
      continue;
    }
    uint32_t operand = finished_operand(s, desc, sp); /* 2e */
    if (operand < depth(s)) {
      for (uint32_t i = 0; i <= operand; i++) pop_top();
      continue;
    }
    uint32_t base; /* 2d */
    if (frame_of(s, desc, sp, &base)) {
      reenter(s, base, desc, sp);
    } else {
      t->flags |= STROBE_ENTRY_TAIL;
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
  __atomic_store_n(&rt_report_full, o->report_full, __ATOMIC_RELAXED);
  __atomic_store_n(&strobe_registry.flags, flags, __ATOMIC_RELAXED); /* read by handlers */
  pthread_mutex_unlock(&registry_lock);
  if (o->crash_report) rt_install_fatal_handlers();
  rt_profile_start(o); /* profile=FILE: sampling (profile.c), once per process */
}

/* Adds the counters c to *sum.  c may belong to a running thread (relaxed reads; see
 * Concurrency). */
static void add_counters(StrobeCounters *sum, const StrobeCounters *c) {
  sum->ticks += load64(&c->ticks);
  sum->slow_ticks += load64(&c->slow_ticks);
  sum->slow_pops += load64(&c->slow_pops);
  sum->slow_rets += load64(&c->slow_rets);
  sum->drops += load64(&c->drops);
  sum->tail_drops += load64(&c->tail_drops);
}

/* s's counters, with the ticks its thread counted inline. */
static StrobeCounters counters_of(const StrobeThreadStack *s) {
  /* s->head moves between the parked copy and its OS thread's head (bind, park) while
   * another thread reads the statistics: read it as bind stores it. */
  const StrobeDynStackHead *head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
  StrobeCounters c = {.ticks = load64(&head->ticks)};
  add_counters(&c, &s->counters);
  return c;
}

/* Takes s off the registry (and off the Haskell threads' map) and adds its counters
 * to the exited threads'.  s is parked, or the calling thread's. */
static void map_del(uint64_t id);
static void unregister(StrobeThreadStack *s) {
  pthread_mutex_lock(&registry_lock);
  strobe_registry.generation++;
  for (StrobeThreadStack **p = &strobe_registry.threads; *p; p = &(*p)->next) {
    if (*p == s) {
      *p = s->next;
      break;
    }
  }
  if (s->flags & STROBE_STACK_HASKELL) map_del(s->thread_id);
  strobe_registry.nthreads--;
  strobe_registry.nexited++;
  StrobeCounters c = counters_of(s);
  add_counters(&strobe_registry.exited, &c);
  strobe_registry.generation++;
  pthread_mutex_unlock(&registry_lock);
}

/* Takes s, the calling thread's stack, off the registry, empties the head and frees
 * s. */
static void release(StrobeThreadStack *s) {
  unregister(s);
  strobe_dynstack_head = EMPTY_HEAD;
  free_stack(s);
}

static void on_thread_exit(void *s) { release(s); }

/* A new stack, registered and parked (its head is its own `parked`): a header, the two
 * sentinels, then the entries (Note [The entries and their sentinels]); NULL only if
 * not even the header could be had. */
static StrobeThreadStack *new_stack(uint64_t thread_id) {
  rt_dynstack_init();
  pthread_mutex_lock(&registry_lock);
  uint32_t capacity = options.capacity, tail_limit = options.tail_limit;
  pthread_mutex_unlock(&registry_lock);
  uint32_t max = capacity < STROBE_MIN_CAPACITY ? STROBE_MIN_CAPACITY : capacity;
  capacity = max < STROBE_INITIAL_CAPACITY ? max : STROBE_INITIAL_CAPACITY;
  StrobeThreadStack *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->entries = new_entries(capacity);
  if (!s->entries && capacity > STROBE_MIN_CAPACITY) /* never fail: keep what the least can */
    s->entries = new_entries(capacity = STROBE_MIN_CAPACITY);
  if (!s->entries) {
    free(s);
    return NULL;
  }
  s->capacity = capacity;
  s->max_capacity = max;
  s->tail_limit = tail_limit;
  s->thread_id = thread_id;
  s->flags = thread_id ? STROBE_STACK_HASKELL : 0;
  s->parked = (StrobeDynStackHead){
      .top = s->entries - 1, .limit = s->entries + capacity - 1, .base = s->entries - 1, .stack = s};
  s->head = &s->parked;
  return s;
}

static bool map_put(StrobeThreadStack *s);

/* Puts s on the registry's list (and a Haskell thread's on the map); false if the map
 * could not grow (s is then on neither). */
static bool register_stack(StrobeThreadStack *s) {
  pthread_mutex_lock(&registry_lock);
  if ((s->flags & STROBE_STACK_HASKELL) && !map_put(s)) {
    pthread_mutex_unlock(&registry_lock);
    return false;
  }
  strobe_registry.generation++;
  s->next = strobe_registry.threads;
  strobe_registry.threads = s;
  strobe_registry.nthreads++;
  strobe_registry.generation++;
  pthread_mutex_unlock(&registry_lock);
  return true;
}

/* Makes s the calling OS thread's stack: the head takes s's parked one.  The head's
 * stack goes last (and first in park), so that a signal handler on this thread sees
 * either no stack or a whole one; s->head moves after its target is written
 * (Note [Haskell threads and stack chunks], I3). */
static void bind(StrobeThreadStack *s) {
  StrobeDynStackHead *h = &strobe_dynstack_head;
  h->stack = NULL;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  h->limit = s->parked.limit;
  h->base = s->parked.base;
  store64(&h->ticks, load64(&s->parked.ticks));
  publish_top(s->parked.top);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  h->stack = s;
  s->tid = (uint64_t)gettid();
  __atomic_store_n(&s->head, h, __ATOMIC_RELEASE);
  __atomic_store_n(&s->flags, s->flags | STROBE_STACK_RUNNING, __ATOMIC_RELAXED);
}

/* s, bound to the calling OS thread, keeps its head in `parked` from now on. */
static void park(StrobeThreadStack *s) {
  const StrobeDynStackHead *h = &strobe_dynstack_head;
  s->parked.limit = h->limit;
  s->parked.base = h->base;
  s->parked.stack = s;
  store64(&s->parked.ticks, load64(&h->ticks));
  __atomic_store_n(&s->parked.top, h->top, __ATOMIC_RELEASE);
  __atomic_store_n(&s->head, &s->parked, __ATOMIC_RELEASE);
  __atomic_store_n(&s->flags, s->flags & ~(uint32_t)STROBE_STACK_RUNNING, __ATOMIC_RELAXED);
  if (s->flags & STROBE_STACK_HASKELL) s->tid = 0;
}

/* The calling OS thread's own stack, made at its first tick outside any Haskell
 * thread. */
static StrobeThreadStack *start_stack(void) {
  StrobeThreadStack *s = new_stack(0);
  if (!s) return NULL;
  s->tid = (uint64_t)gettid();
  s->parked.ticks = strobe_dynstack_head.ticks; /* the ticks counted before this one */
  register_stack(s);
  bind(s);
  pthread_setspecific(thread_key, s);
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
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->busy = 0;
}

void strobe_tick(const StrobeTickDesc *desc, uintptr_t sp) {
  StrobeThreadStack *s = strobe_dynstack_head.stack;
  if (!desc || (!s && !(s = start_stack()))) return;
  begin(s);
  bump(&s->counters.slow_ticks, 1);
  pop_finished(sp, false);
  tick_at_depth(s, desc, sp);
  end(s);
}

/* strobe_pop, or with inclusive strobe_ret (Note [Watermarks]).  Before a thread's
 * first tick its stack is empty: nothing to pop, nothing to start. */
static void pop_slow(uintptr_t sp, bool inclusive) {
  StrobeThreadStack *s = strobe_dynstack_head.stack;
  if (!s) return;
  begin(s);
  bump(inclusive ? &s->counters.slow_rets : &s->counters.slow_pops, 1);
  pop_finished(sp, inclusive);
  end(s);
}

void strobe_pop(uintptr_t sp) { pop_slow(sp, false); }

void strobe_ret(uintptr_t sp) { pop_slow(sp, true); }

/* ---- Haskell threads (Note [Haskell threads and stack chunks]) ------------------ */

/* Their stacks by thread id: open addressing, linear probing, under registry_lock.
 * GHC never reuses a thread id. */
static StrobeThreadStack **green_map;
static size_t green_cap, green_count;

static size_t map_slot(uint64_t id) { return (size_t)(id * 0x9E3779B97F4A7C15u) & (green_cap - 1); }

static StrobeThreadStack *map_find(uint64_t id) {
  if (green_cap == 0) return NULL;
  for (size_t i = map_slot(id);; i = (i + 1) & (green_cap - 1)) {
    if (!green_map[i]) return NULL;
    if (green_map[i]->thread_id == id) return green_map[i];
  }
}

static bool map_put(StrobeThreadStack *s) {
  if (2 * (green_count + 1) > green_cap) {
    size_t cap = green_cap ? 2 * green_cap : 64;
    StrobeThreadStack **m = calloc(cap, sizeof *m), **old = green_map;
    if (!m) return false;
    size_t old_cap = green_cap;
    green_map = m;
    green_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
      if (!old[i]) continue;
      size_t j = map_slot(old[i]->thread_id);
      while (green_map[j]) j = (j + 1) & (cap - 1);
      green_map[j] = old[i];
    }
    free(old);
  }
  size_t j = map_slot(s->thread_id);
  while (green_map[j]) j = (j + 1) & (green_cap - 1);
  green_map[j] = s;
  green_count++;
  return true;
}

/* Deletes by shifting back the entries of the probe run behind the hole. */
static void map_del(uint64_t id) {
  if (green_cap == 0) return;
  size_t i = map_slot(id);
  while (green_map[i] && green_map[i]->thread_id != id) i = (i + 1) & (green_cap - 1);
  if (!green_map[i]) return;
  green_map[i] = NULL;
  green_count--;
  for (size_t j = (i + 1) & (green_cap - 1); green_map[j]; j = (j + 1) & (green_cap - 1)) {
    size_t home = map_slot(green_map[j]->thread_id);
    /* j's entry may move to the hole i unless its home lies cyclically in (i, j] */
    bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    green_map[i] = green_map[j];
    green_map[j] = NULL;
    i = j;
  }
}

StrobeThreadStack *strobe_green_find(uint64_t id) {
  pthread_mutex_lock(&registry_lock);
  StrobeThreadStack *s = map_find(id);
  pthread_mutex_unlock(&registry_lock);
  return s;
}

StrobeThreadStack *strobe_green_enter(uint64_t id, StrobeDynStackHead *prev) {
  rt_dynstack_init();
  *prev = strobe_dynstack_head;
  pthread_mutex_lock(&registry_lock);
  StrobeThreadStack *s = map_find(id);
  pthread_mutex_unlock(&registry_lock);
  if (!s) {
    s = new_stack(id);
    if (!s) return NULL;
    if (!register_stack(s)) {
      free_stack(s);
      return NULL;
    }
  }
  if (prev->stack) park(prev->stack);
  bind(s);
  return s;
}

void strobe_green_leave(StrobeThreadStack *s, const StrobeDynStackHead *prev, int finished) {
  park(s);
  if (prev->stack) {
    bind(prev->stack);
  } else { /* no stack before: the empty head, with the ticks it had counted */
    StrobeDynStackHead *h = &strobe_dynstack_head;
    h->stack = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    h->limit = prev->limit;
    h->base = prev->base;
    store64(&h->ticks, load64(&prev->ticks));
    publish_top(prev->top);
  }
  if (finished) {
    unregister(s);
    free_stack(s);
  }
}

/* ---- stack chunks (Note [Haskell threads and stack chunks]) --------------------- */

typedef struct Pos {
  uint32_t chunk;
  uint64_t offset; /* bytes from the chunk's end */
} Pos;

static bool is_virtual(uintptr_t wm) { return wm >= STROBE_WM_VIRTUAL && wm != UINTPTR_MAX; }

static uintptr_t virtual_wm(Pos p) {
  return STROBE_WM_VIRTUAL_TOP - (((uintptr_t)p.chunk << 32) | (uintptr_t)p.offset);
}

/* Where the entry at wm is, in the chain as s last knew it, after the overflow that
 * split/split_to describe (split 0: none); *approx if that is not known exactly. */
static Pos position(const StrobeThreadStack *s, uintptr_t wm, uintptr_t split,
                    uintptr_t split_to, bool *approx) {
  if (is_virtual(wm)) {
    uintptr_t v = STROBE_WM_VIRTUAL_TOP - wm;
    return (Pos){.chunk = (uint32_t)(v >> 32), .offset = v & UINT32_MAX};
  }
  Pos p = {.chunk = s->chunk_index, .offset = wm <= s->chunk_end ? s->chunk_end - wm : 0};
  if (wm > s->chunk_end) *approx = true;
  if (split && p.offset > split) {
    p.chunk++;
    p.offset = p.offset - split + split_to;
  }
  if (p.offset > UINT32_MAX) {
    p.offset = UINT32_MAX;
    *approx = true;
  }
  return p;
}

/* p's watermark in a chain whose top chunk is top, ending at top_end; 0 if the chunk
 * is gone. */
static uintptr_t rebased(Pos p, uint32_t top, uintptr_t top_end) {
  if (p.chunk > top) return 0;
  if (p.chunk == top) return top_end - (uintptr_t)p.offset;
  return virtual_wm(p);
}

void strobe_dynstack_rechunk(StrobeThreadStack *s, uint32_t top, uintptr_t top_end,
                             uintptr_t split, uintptr_t split_to) {
  if (s->chunk_end == 0) { /* the first chunk it sees: nothing pushed yet */
    s->chunk_index = top;
    s->chunk_end = top_end;
    return;
  }
  if (top == s->chunk_index && top_end == s->chunk_end && !split) return;
  begin(s);
  bool approx = false;
  if (split && top != s->chunk_index + 1) split = 0;
  if (top > s->chunk_index + 1) approx = true; /* grew by more than one chunk unseen */
  StrobeDynStackHead *h = s->head;
  StrobeEntry *t = h->top;
  /* Newest first (I2): the gone ones are the newest; an entry virtual in a chunk below
   * `top` stays as it is, and so does every older one. */
  uint32_t n = (uint32_t)(t - s->entries + 1), keep = n;
  for (uint32_t i = n; i-- > 0;) {
    uintptr_t old = s->entries[i].wm;
    if (is_virtual(old) && (STROBE_WM_VIRTUAL_TOP - old) >> 32 < top) break;
    uintptr_t wm = rebased(position(s, old, split, split_to, &approx), top, top_end);
    if (wm) s->entries[i].wm = wm;
    else keep = i;
  }
  s->chunk_index = top;
  s->chunk_end = top_end;
  __atomic_store_n(&h->top, s->entries + keep - 1, __ATOMIC_RELEASE);
  for (uint32_t i = keep; i < n; i++) strobe_entry_clear(&s->entries[i]); /* popped */
  if (approx) __atomic_store_n(&s->flags, s->flags | STROBE_STACK_APPROX, __ATOMIC_RELAXED);
  end(s);
}

/* ---- process-wide set-up ---------------------------------------------------------- */

/* fork: the child has one thread, the one that forked.  The others' stacks stay in
 * the parent; the child forgets them (and does not count them as exited). */
static void before_fork(void) { pthread_mutex_lock(&registry_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&registry_lock); }
static void after_fork_child(void) {
  StrobeThreadStack *mine = strobe_dynstack_head.stack, *next;
  for (StrobeThreadStack *s = strobe_registry.threads; s; s = next) {
    next = s->next;
    if (s != mine) free_stack(s);
  }
  strobe_registry.threads = mine;
  strobe_registry.nthreads = mine != NULL;
  if (mine) mine->next = NULL;
  if (green_cap) memset(green_map, 0, green_cap * sizeof *green_map);
  green_count = 0;
  if (mine && (mine->flags & STROBE_STACK_HASKELL)) map_put(mine);
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
  StrobeThreadStack *s = strobe_dynstack_head.stack;
  if (!s) return;
  pthread_setspecific(thread_key, NULL);
  release(s);
}

const StrobeThreadStack *strobe_dynstack_current(void) { return strobe_dynstack_head.stack; }

/* ---- statistics ------------------------------------------------------------------- */

static void derive(StrobeStats *out, const StrobeCounters *c, uint64_t threads) {
  *out = (StrobeStats){
      .ticks = c->ticks,
      .slow_ticks = c->slow_ticks,
      .slow_pops = c->slow_pops,
      .slow_rets = c->slow_rets,
      .drops = c->drops,
      .tail_drops = c->tail_drops,
      .threads = threads,
  };
}

void strobe_dynstack_stats(StrobeStats *out) {
  StrobeCounters sum = {0};
  pthread_mutex_lock(&registry_lock);
  add_counters(&sum, &strobe_registry.exited);
  for (StrobeThreadStack *s = strobe_registry.threads; s; s = s->next) {
    StrobeCounters c = counters_of(s);
    add_counters(&sum, &c);
  }
  uint64_t threads = strobe_registry.nthreads + strobe_registry.nexited;
  pthread_mutex_unlock(&registry_lock);
  derive(out, &sum, threads);
}

void strobe_dynstack_thread_stats(StrobeStats *out) {
  StrobeThreadStack *s = strobe_dynstack_head.stack;
  StrobeCounters c = s ? counters_of(s) : (StrobeCounters){0};
  derive(out, &c, s != NULL);
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
