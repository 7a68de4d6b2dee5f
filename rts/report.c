/* report.c — printing the dynamic stack: on demand, on a fatal signal, at exit.
 *
 * A report is the calling thread's stack, newest first (the format is in
 * strobe/dynstack.h).  Whatever a signal handler may run formats into a buffer on the
 * stack and writes it with write(2): no stdio, no malloc, no locks.
 *
 * The one handler of SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT lives here too, so
 * that the standalone runtime's guard page and the crash report share it: a fault on
 * the guard page is a Cmm stack overflow (a clean error, with the dynamic stack);
 * anything else prints the dynamic stack, if crash_report is on and there is one, and
 * then dies of the signal with the default action, as if nothing had caught it. */
#define _DEFAULT_SOURCE /* sigaction, SA_ONSTACK */
#include "rt_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h> /* fflush only */
#include <string.h>
#include <unistd.h>

/* ---- async-signal-safe output ----------------------------------------------------- */

typedef struct Out {
  int fd;
  bool failed; /* a write failed: the rest is not written */
  size_t n;
  char buf[512];
} Out;

static void flush(Out *o) {
  for (size_t done = 0; done < o->n && !o->failed;) {
    ssize_t w = write(o->fd, o->buf + done, o->n - done);
    if (w > 0) done += (size_t)w;
    else if (w < 0 && errno == EINTR) continue;
    else o->failed = true;
  }
  o->n = 0;
}

static void put_n(Out *o, const char *s, size_t n) {
  while (n > 0) {
    if (o->n == sizeof o->buf) flush(o);
    size_t k = sizeof o->buf - o->n < n ? sizeof o->buf - o->n : n;
    memcpy(o->buf + o->n, s, k);
    o->n += k;
    s += k;
    n -= k;
  }
}

static void put(Out *o, const char *s) { put_n(o, s, strlen(s)); }

static void put_u64(Out *o, uint64_t v) {
  char digits[20];
  size_t i = sizeof digits;
  do digits[--i] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  put_n(o, digits + i, sizeof digits - i);
}

/* n, then the noun, singular or plural. */
static void put_count(Out *o, uint64_t n, const char *one, const char *many) {
  put_u64(o, n);
  put(o, " ");
  put(o, n == 1 ? one : many);
}

/* ---- the report ------------------------------------------------------------------- */

/* As GHC prints a span: l:c, l:c1-c2 or (l1,c1)-(l2,c2). */
static void put_span(Out *o, const StrobeTickDesc *d) {
  if (d->line1 == d->line2) {
    put_u64(o, d->line1);
    put(o, ":");
    put_u64(o, d->col1);
    if (d->col2 != d->col1) {
      put(o, "-");
      put_u64(o, d->col2);
    }
    return;
  }
  put(o, "(");
  put_u64(o, d->line1);
  put(o, ",");
  put_u64(o, d->col1);
  put(o, ")-(");
  put_u64(o, d->line2);
  put(o, ",");
  put_u64(o, d->col2);
  put(o, ")");
}

/* ---- frames ---------------------------------------------------------------------- */

/* Note [One frame per activation]: a user expects one frame per Haskell function
 * activation, as in a C debugger, but --ticks=all pushes an entry per source note: a
 * binding's note, then the nested notes of the expression it is evaluating.  Two
 * consecutive entries, newer above older, are one frame when
 *   - the older's descriptor is on the newer's parent chain (so the same function and
 *     file, the older's span enclosing the newer's: the ticks stage links only those),
 *   - the older is not marked tail (it did not tail-call into the newer), and
 *   - the newer has elided nothing (no tail calls were dropped between them).
 * A run of such pairs is one frame.  It prints the newest entry's function, span and
 * tail mark (where the activation is now), and the oldest entry's repeats and elided
 * count (the times the function was entered again at that depth, as --ticks=functions,
 * which ticks only the binding's note, counts them; and the tail calls dropped below the
 * frame).  docs/design.md, "The dynamic stack", states the same for debuggers. */
bool rt_one_frame(const StrobeEntry *newer, const StrobeEntry *older) {
  return newer->desc && older->desc && !(older->flags & STROBE_ENTRY_TAIL) &&
         newer->elided == 0 && strobe_desc_on_chain(older->desc, newer->desc);
}

bool rt_report_full;

static bool full_report(void) { return __atomic_load_n(&rt_report_full, __ATOMIC_RELAXED); }

/* `#n Main.fact at Fact.hs:15:10-25 (x3) (tail) (×k)`, and the tail calls elided
 * below it: the frame of entries newest..oldest (one entry: both the same), which
 * stands for k identical frames in a row. */
static void put_frame(Out *o, uint64_t n, const StrobeEntry *newest, const StrobeEntry *oldest,
                      uint64_t k) {
  const StrobeEntry *e = newest;
  const StrobeTickDesc *d = e->desc;
  put(o, "#");
  put_u64(o, n);
  put(o, " ");
  put(o, d && d->function ? d->function : "?");
  if (d && d->kind == STROBE_TICK_SOURCE_NOTE && d->file) {
    put(o, " at ");
    put(o, d->file);
    put(o, ":");
    put_span(o, d);
  }
  if (oldest->repeats > 0) {
    put(o, " (x");
    put_u64(o, oldest->repeats + 1);
    put(o, ")");
  }
  if (e->flags & STROBE_ENTRY_TAIL) put(o, " (tail)");
  if (k > 1) {
    put(o, " (×");
    put_u64(o, k);
    put(o, ")");
  }
  put(o, "\n");
  if (oldest->elided > 0) {
    put(o, "   ... ");
    put_count(o, oldest->elided, "tail call elided\n", "tail calls elided\n");
  }
}

/* Note [Runs of frames]: a recursion shows as the same frame many times over; a report
 * prints a run of identical frames (the same expressions, marks and counts) once, with
 * how many it stands for, `(×297)`, and numbers the frames below it as if it had
 * printed them all. */
static bool same_frame(const StrobeEntry *n1, const StrobeEntry *o1, const StrobeEntry *n2,
                       const StrobeEntry *o2) {
  return n1->desc == n2->desc && o1->desc == o2->desc && n1->flags == n2->flags &&
         o1->repeats == o2->repeats && o1->elided == o2->elided;
}

/* Prints n entries, newest first, the i-th at first + i * step: frames (Note [One
 * frame per activation]) unless report_full is on, runs of identical frames as one
 * line (Note [Runs of frames]), and a line for each run of markers (Note [Folding] in
 * dynstack.c) counting the entries they stand for.  Returns the frames printed. */
static uint64_t put_entries(Out *o, const StrobeEntry *first, ptrdiff_t step, uint32_t n) {
  bool full = full_report();
  uint64_t frames = 0, not_kept = 0, run = 0;
  const StrobeEntry *newest = NULL, *oldest = NULL; /* the run's frame */
  for (uint32_t i = 0; i < n;) {
    const StrobeEntry *e = first + (ptrdiff_t)i * step;
    if (strobe_entry_is_dropped(e)) {
      not_kept += e->elided;
      i++;
      continue;
    }
    uint32_t j = i; /* the frame: entries i..j */
    while (!full && j + 1 < n && !strobe_entry_is_dropped(first + (ptrdiff_t)(j + 1) * step) &&
           rt_one_frame(first + (ptrdiff_t)j * step, first + (ptrdiff_t)(j + 1) * step))
      j++;
    const StrobeEntry *f_old = first + (ptrdiff_t)j * step;
    i = j + 1;
    if (run && !not_kept && same_frame(newest, oldest, e, f_old)) {
      run++;
      continue;
    }
    if (run) put_frame(o, frames, newest, oldest, run);
    frames += run;
    if (not_kept) {
      put(o, "... ");
      put_count(o, not_kept, "older entry not kept\n", "older entries not kept\n");
      not_kept = 0;
    }
    newest = e;
    oldest = f_old;
    run = 1;
  }
  if (run) put_frame(o, frames, newest, oldest, run);
  frames += run;
  if (not_kept) {
    put(o, "... ");
    put_count(o, not_kept, "older entry not kept\n", "older entries not kept\n");
  }
  return frames;
}

/* Whether a report of s leaving out what sp shows stale (0: nothing) prints anything. */
static bool shows(const StrobeThreadStack *s, uintptr_t sp) {
  if (!s) return false;
  uint32_t depth = strobe_dynstack_depth(s);
  return depth > 0 && strobe_dynstack_at(s, depth - 1)->wm >= sp; /* the oldest goes last */
}

/* Writes s's entries, newest first, leaving out those that sp shows stale (as
 * put_entries does); returns how many frames it wrote. */
static int put_stack(Out *o, const StrobeThreadStack *s, uintptr_t sp) {
  uint32_t depth = strobe_dynstack_depth(s), i = 0;
  while (i < depth && strobe_dynstack_at(s, i)->wm < sp) i++;
  uint64_t n = i < depth ? put_entries(o, strobe_dynstack_at(s, i), -1, depth - i) : 0;
  if (s->busy) put(o, "(the dynamic stack was changing when this report began: it may be off)\n");
  if (__atomic_load_n(&s->flags, __ATOMIC_RELAXED) & STROBE_STACK_APPROX)
    put(o, "(approximate: the thread's stack chunks changed in a way strobe could not follow)\n");
  return (int)n;
}

int strobe_dynstack_dump_at(int fd, uintptr_t sp) {
  const StrobeThreadStack *s = strobe_dynstack_head.stack;
  if (!shows(s, sp)) return 0;
  Out o = {.fd = fd};
  int n = put_stack(&o, s, sp);
  flush(&o);
  return o.failed ? -1 : n;
}

int strobe_dynstack_dump(int fd) { return strobe_dynstack_dump_at(fd, 0); }

int rt_write_entries(int fd, const char *header, const StrobeEntry *entries, uint32_t n, bool busy) {
  Out o = {.fd = fd};
  put(&o, header);
  uint64_t frames = put_entries(&o, entries, 1, n);
  if (busy) put(&o, "(the dynamic stack was changing when it was copied: it may be off)\n");
  flush(&o);
  return o.failed ? -1 : (int)frames;
}

/* ---- statistics and the report at exit -------------------------------------------- */

static void put_spaces(Out *o, size_t n) {
  while (n-- > 0) put(o, " ");
}

/* `  ticks              1234  ticks executed (…)`: names in 12 columns, numbers in 14. */
static void put_stat(Out *o, const char *name, uint64_t v, const char *help) {
  size_t digits = 1;
  for (uint64_t w = v; w >= 10; w /= 10) digits++;
  put(o, "  ");
  put(o, name);
  put_spaces(o, strlen(name) < 12 ? 12 - strlen(name) : 1);
  put_spaces(o, digits < 14 ? 14 - digits : 0);
  put_u64(o, v);
  put(o, "  ");
  put(o, help);
  put(o, "\n");
}

void strobe_dynstack_write_stats(int fd) {
  StrobeStats st;
  strobe_dynstack_stats(&st);
  Out o = {.fd = fd};
  put(&o, "strobe: dynamic stack statistics\n");
#define STROBE_STAT_LINE(name, help) put_stat(&o, #name, st.name, help);
  STROBE_STATS(STROBE_STAT_LINE)
#undef STROBE_STAT_LINE
  flush(&o);
}

void rt_report_at_exit(void) {
  if (!(__atomic_load_n(&strobe_registry.flags, __ATOMIC_RELAXED) &
        STROBE_REGISTRY_REPORT_AT_EXIT))
    return;
  fflush(stdout); /* what the program printed comes first */
  const StrobeThreadStack *s = strobe_dynstack_head.stack;
  Out o = {.fd = STDERR_FILENO};
  if (shows(s, 0)) {
    put(&o, "strobe: the dynamic stack at exit, newest first:\n");
    put_stack(&o, s, 0);
  } else {
    put(&o, "strobe: the dynamic stack is empty at exit\n");
  }
  flush(&o);
  strobe_dynstack_write_stats(STDERR_FILENO);
}

/* ---- fatal signals ---------------------------------------------------------------- */

static const struct {
  int sig;
  const char *name, *what;
} fatal_signals[] = {
    {SIGSEGV, "SIGSEGV", "segmentation fault"},
    {SIGBUS, "SIGBUS", "bus error"},
    {SIGILL, "SIGILL", "illegal instruction"},
    {SIGFPE, "SIGFPE", "arithmetic exception"},
    {SIGABRT, "SIGABRT", "aborted"},
};

enum { NFATAL = sizeof fatal_signals / sizeof *fatal_signals };

static uintptr_t guard_lo, guard_hi; /* the standalone Cmm stack's guard page: [lo, hi) */

void rt_set_guard_page(uintptr_t lo, uintptr_t hi) {
  guard_lo = lo;
  guard_hi = hi;
}

/* Set while this thread reports: a second fault inside the report just dies. */
static STROBE_THREAD_LOCAL volatile sig_atomic_t reporting;

static void on_fatal_signal(int sig, siginfo_t *info, void *uctx) {
  (void)uctx;
  int saved_errno = errno;
  const StrobeThreadStack *s = strobe_dynstack_head.stack;
  uintptr_t addr = (uintptr_t)info->si_addr;
  if ((sig == SIGSEGV || sig == SIGBUS) && addr >= guard_lo && addr < guard_hi) {
    /* Only Cmm code touches the Cmm stack (C code runs on the machine stack), so the
     * interrupted code is not inside stdio and flushing stdout is safe here. */
    fflush(stdout);
    Out o = {.fd = STDERR_FILENO};
    put(&o, "strobe: Cmm stack overflow\n");
    if (!reporting && shows(s, 0)) {
      reporting = 1;
      put(&o, "strobe: the dynamic stack, newest first:\n");
      put_stack(&o, s, 0);
    }
    flush(&o);
    _exit(2);
  }
  if (!reporting && shows(s, 0) &&
      (__atomic_load_n(&strobe_registry.flags, __ATOMIC_RELAXED) &
       STROBE_REGISTRY_CRASH_REPORT)) {
    reporting = 1;
    Out o = {.fd = STDERR_FILENO};
    put(&o, "strobe: ");
    for (int i = 0; i < NFATAL; i++) {
      if (fatal_signals[i].sig == sig) {
        put(&o, fatal_signals[i].name);
        put(&o, " (");
        put(&o, fatal_signals[i].what);
        put(&o, ")");
      }
    }
    put(&o, "; the dynamic stack, newest first:\n");
    put_stack(&o, s, 0);
    flush(&o);
  }
  /* Die of the signal as if there were no handler.  Returning retries the faulting
   * instruction, which now gets the default action; a signal that was sent (kill,
   * raise, abort), not caused, is sent again. */
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  if (info->si_code <= 0) raise(sig);
  errno = saved_errno;
}

int rt_install_fatal_handlers(void) {
  struct sigaction sa = {.sa_sigaction = on_fatal_signal, .sa_flags = SA_SIGINFO | SA_ONSTACK};
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < NFATAL; i++) sigaddset(&sa.sa_mask, fatal_signals[i].sig);
  for (int i = 0; i < NFATAL; i++)
    if (sigaction(fatal_signals[i].sig, &sa, NULL) != 0) return -1;
  return 0;
}
