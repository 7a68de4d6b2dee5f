/* dynstack_support.c — the fixtures, the drivers and the invariant checker of the dynamic
 * stack's tests, as dynstack_support.h declares and describes them.  It ticks no
 * descriptor of its own: a test program's strobe_ticks section holds dynstack_descs.h's
 * only. */
#include "dynstack_support.h"

/* ---- driving the stack ------------------------------------------------------------ */

const Paths fast_paths = FAST, slow_paths = SLOW;
Paths paths;

long diff_step = -1;

void fresh(const char *text) {
  StrobeOptions o;
  const char *bad = strobe_options_parse(text, &o);
  if (bad) fail_msg("bad options '%s'", bad);
  strobe_dynstack_configure(&o);
  strobe_dynstack_release();
}

int setup(void **state) {
  paths = *state ? *(const Paths *)*state : FAST;
  diff_step = -1;
  fresh(NULL);
  return 0;
}

int teardown(void **state) {
  (void)state;
  strobe_dynstack_release();
  return 0;
}

const StrobeThreadStack *cur(void) {
  const StrobeThreadStack *s = strobe_dynstack_current();
  assert_non_null(s);
  return s;
}

uint32_t depth(void) { return strobe_dynstack_depth(cur()); }

__attribute__((format(printf, 2, 3))) static void broken(int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (diff_step >= 0) fail_msg("line %d, step %ld: %s", line, diff_step, msg);
  fail_msg("line %d: %s", line, msg);
}

void check_invariants(int line) {
  const StrobeDynStackHead *h = &strobe_dynstack_head;
  const StrobeThreadStack *s = strobe_dynstack_current();
  const StrobeEntry *empty = &strobe_dynstack_empty;
  if (empty->wm != UINTPTR_MAX || empty->desc != &strobe_dynstack_no_desc ||
      empty->repeats || strobe_dynstack_no_desc.kind || strobe_dynstack_no_desc.parent)
    broken(line, "strobe_dynstack_empty or strobe_dynstack_no_desc changed");
  if (!s) {
    if (h->top != empty || h->base != empty || h->limit || h->stack)
      broken(line, "no stack, but the head is not the empty one");
    return;
  }
  if (h->stack != s || s->head != h) broken(line, "head and stack disagree");
  if (h->base != s->entries - 1) broken(line, "base is not entries - 1");
  if (h->limit != s->entries + s->capacity - 1) broken(line, "limit is not entries + capacity - 1");
  if (s->capacity < STROBE_MIN_CAPACITY) broken(line, "capacity %u is below the least", s->capacity);
  if (h->top < h->base || h->top > h->limit)
    broken(line, "top is entries[%td], outside [base, limit]", h->top - s->entries);
  if (s->busy) broken(line, "busy outside a slow path");
  const StrobeEntry *base = &s->entries[-1], *below = &s->entries[-2];
  for (const StrobeEntry *e = below; e <= base; e++)
    if (e->desc != &strobe_dynstack_no_desc || e->wm != UINTPTR_MAX || e->repeats || e->flags ||
        e->elided)
      broken(line, "sentinel entries[%td] was written", e - s->entries);
  for (const StrobeEntry *e = h->top + 1; e < s->entries + s->capacity; e++)
    if (e->repeats || e->flags || e->elided)
      broken(line, "the free slot entries[%td] is not clear", e - s->entries);
  /* the markers (Note [Folding] in rts/dynstack.c): one run, after at most 4 entries */
  uint32_t markers_from = 0, markers_to = 0;
  for (uint32_t i = 0; i < s->capacity && &s->entries[i] <= h->top; i++) {
    if (!strobe_entry_is_dropped(&s->entries[i])) continue;
    if (markers_to == 0) markers_from = i;
    else if (markers_to != i) broken(line, "a marker at entries[%u], apart from the others", i);
    markers_to = i + 1;
  }
  if (markers_to && markers_from > 4) broken(line, "the markers start at entries[%u]", markers_from);
  uint32_t n = strobe_dynstack_depth(s);
  if (n > 0) {
    const StrobeEntry *t = strobe_dynstack_at(s, 0);
    if (t != h->top) broken(line, "strobe_dynstack_at(s, 0) is not the top");
    if (t->flags & STROBE_ENTRY_TAIL) broken(line, "the top entry is tail");
  }
  for (uint32_t i = 0; i < n; i++) {
    const StrobeEntry *e = strobe_dynstack_at(s, i);
    if (!e->desc || e->desc->kind == 0) broken(line, "entry %u has no descriptor", i);
    if (strobe_entry_is_dropped(e) && e->elided == 0) broken(line, "the marker stands for nothing");
    uintptr_t below_wm = i + 1 < n ? strobe_dynstack_at(s, i + 1)->wm : base->wm;
    if (below_wm < e->wm)
      broken(line, "entry %u (wm %#lx) is deeper than the one above it (wm %#lx)", i + 1,
             (unsigned long)below_wm, (unsigned long)e->wm);
  }
}

/* ---- the fast tick's cold call ------------------------------------------------------ */

/* The stack as a fast tick found it: the head's top, and the entries from the lower
 * sentinel up to the slot above the top (where a push writes), while `armed`. */
enum { MAX_WATCHED = 8 * STROBE_INITIAL_CAPACITY + 3 }; /* test_dynstack.c's test_array_grows */
static struct {
  bool armed;
  const StrobeEntry *top, *from; /* from: entries[-2], or NULL with no stack */
  size_t n;                      /* entries from `from` on */
  StrobeEntry copy[MAX_WATCHED];
} watched;

uint64_t cold_ticks, cold_ticks_checked;

void fast_tick(const StrobeTickDesc *d, uintptr_t sp) {
  const StrobeDynStackHead *h = &strobe_dynstack_head;
  const StrobeThreadStack *s = strobe_dynstack_current();
  watched.top = h->top;
  watched.from = NULL;
  watched.n = 0;
  if (s) {
    const StrobeEntry *end = h->top + 1 < h->limit ? h->top + 2 : h->limit;
    watched.from = s->entries - 2;
    watched.n = (size_t)(end - watched.from);
    assert_true(watched.n <= MAX_WATCHED);
    memcpy(watched.copy, watched.from, watched.n * sizeof(StrobeEntry));
  }
  watched.armed = true;
  strobe_tick_fast(d, sp);
  watched.armed = false;
}

/* Whether now is was as the walk may leave an entry it popped before its cold call: a
 * sibling of desc at sp, cleared (strobe/dynstack.h §4). */
static bool walk_cleared(const StrobeEntry *was, const StrobeEntry *now, const StrobeTickDesc *desc,
                         uintptr_t sp) {
  return now->desc == was->desc && now->wm == was->wm && was->wm == sp &&
         was->desc->function == desc->function && !now->repeats && !now->flags && !now->elided;
}

void cold_tick(const StrobeTickDesc *desc, uintptr_t sp) {
  cold_ticks++;
  if (watched.armed) {
    watched.armed = false;
    if (strobe_dynstack_head.top != watched.top)
      broken(__LINE__, "tick(%s %u:%u, %#lx): the fast path moved the top (%p to %p) and "
             "then called strobe_tick", desc->function, desc->line1, desc->col1,
             (unsigned long)sp, (const void *)watched.top, (const void *)strobe_dynstack_head.top);
    for (size_t i = 0; i < watched.n; i++)
      if (memcmp(&watched.from[i], &watched.copy[i], sizeof(StrobeEntry)) &&
          !walk_cleared(&watched.copy[i], &watched.from[i], desc, sp))
        broken(__LINE__, "tick(%s %u:%u, %#lx): the fast path wrote entries[%td] and then "
               "called strobe_tick", desc->function, desc->line1, desc->col1,
               (unsigned long)sp, (ptrdiff_t)i - 2);
    cold_ticks_checked++;
  }
  strobe_tick(desc, sp);
}

void tick(const StrobeTickDesc *d, uintptr_t sp) {
  if (paths == SLOW) strobe_tick(d, sp);
  else fast_tick(d, sp);
}

void pop(uintptr_t sp) {
  if (paths == SLOW) strobe_pop(sp);
  else strobe_pop_fast(sp);
}

void ret(uintptr_t sp) {
  if (paths == SLOW) strobe_ret(sp);
  else strobe_ret_fast(sp);
}

void expect_stack(int line, const Want *want, size_t n) {
  check_invariants(line);
  const StrobeThreadStack *s = cur();
  uint32_t depth = strobe_dynstack_depth(s);
  if (depth != n) fail_msg("line %d: depth %u, expected %zu", line, depth, n);
  for (size_t i = 0; i < n; i++) {
    const StrobeEntry *e = strobe_dynstack_at(s, (uint32_t)i);
    const Want *w = &want[i];
    if (e->desc != w->desc || e->wm != w->wm || e->repeats != w->repeats ||
        !!(e->flags & STROBE_ENTRY_TAIL) != w->tail || e->elided != w->elided)
      fail_msg("line %d: entry %zu is {%s %d:%d, wm %#lx, x%lu, tail %d, elided %u}, "
               "expected {%s %d:%d, wm %#lx, x%lu, tail %d, elided %u}",
               line, i, e->desc->function, e->desc->line1, e->desc->col1,
               (unsigned long)e->wm, (unsigned long)e->repeats,
               !!(e->flags & STROBE_ENTRY_TAIL), e->elided, w->desc->function,
               w->desc->line1, w->desc->col1, (unsigned long)w->wm,
               (unsigned long)w->repeats, w->tail, w->elided);
  }
}

StrobeStats thread_stats(void) {
  StrobeStats st;
  strobe_dynstack_thread_stats(&st);
  return st;
}

SlowCalls slow_calls(void) {
  const StrobeThreadStack *s = strobe_dynstack_current();
  if (!s) return (SlowCalls){0};
  return (SlowCalls){s->counters.slow_ticks, s->counters.slow_pops, s->counters.slow_rets};
}

const char *dump_text(uintptr_t sp, int *n) {
  static char buf[8192];
  FILE *f = tmpfile();
  assert_non_null(f);
  *n = strobe_dynstack_dump_at(fileno(f), sp);
  rewind(f);
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  buf[len] = '\0';
  fclose(f);
  return buf;
}
