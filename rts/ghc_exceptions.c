/* ghc_exceptions.c — the dynamic stack at the raises of a GHC program's exceptions
 * (docs/exceptions.md).
 *
 * strobe-ghc links an instrumented program with these linker options, which route
 * calls between GHC's own libraries through the functions here (`--wrap=SYM` sends an
 * undefined reference to SYM to __wrap_SYM, and __real_SYM to the original):
 *
 *   raiseExceptionHelper  called by raise# and raiseIO# (GHC's Exception.cmm) on the
 *                         raising thread, to unwind the stack: a snapshot of that
 *                         thread's dynamic stack before, and with report_raise a
 *                         report; after, the entries of the unwound frames go;
 *   stg_raiseIOzh         raiseIO# (throwIO, ioError, throwSTM), which jumps to
 *                         raise#: it says so to the snapshot (Note [Who built the
 *                         action that raised]);
 *   errorBelch2           called by base's top handler (GHC.TopHandler, and
 *                         GHC.Conc.Sync for a forkIO thread) to print the message of
 *                         an exception that nothing caught: the snapshot of its raise
 *                         goes first, with report_uncaught (the default);
 *   throwTo, throwToSingleThreaded, throwToSingleThreaded_, throwToSelf, raiseAsync
 *                         an asynchronous exception (throwTo, killThread, timeout, the
 *                         runtime's BlockedIndefinitely…): recorded against its target,
 *                         so that the report of a later message does not show the
 *                         stack of an earlier, unrelated raise;
 *   maybePerformBlockedException, throwToMsg
 *                         with the above, every way into raiseAsync from outside
 *                         RaiseAsync.c, where an asynchronous exception is delivered
 *                         (Note [Where an asynchronous exception is delivered]).
 *
 * The snapshots.  A process-wide table of RT_RAISE_SLOTS slots (ghc_exceptions.h), one
 * per Haskell thread id modulo that, each with RT_RAISE_RECORDS records of at most
 * RT_SNAPSHOT_ENTRIES entries: copying
 * at a raise is bounded, allocates nothing and takes the slot's own lock only.  A
 * raise of the exception (the same closure) that a record of the thread holds already
 * is a rethrow (`finally`, `bracket`, `onException`, `catch` and `throwIO e`): the
 * record keeps the stack of the first raise.  Two threads whose ids share a slot evict
 * each other's records; a lookup that finds none of its thread's reports nothing.
 *
 * GHC's layouts: ghc_layout.h, made from the headers of the GHC strobe is built with
 * (on 9.0.2: StgTSO.stackobj at 24, StgTSO.id at 48, StgStack.sp at 16, Capability.r at
 * 24, StgRegTable.rCurrentTSO at 872; 9.10 moved StgTSO.id to 56). */
#define _DEFAULT_SOURCE
#include "rt_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ghc_exceptions.h"
#include "ghc_layout.h"

/* ---- GHC's side ------------------------------------------------------------------- */

static uintptr_t word_at(const void *p, size_t off) {
  uintptr_t v;
  memcpy(&v, (const char *)p + off, sizeof v);
  return v;
}

uint64_t rt_ghc_tso_id(const void *tso) { return (uint64_t)word_at(tso, GHC_TSO_ID); }

uintptr_t rt_ghc_tso_sp(const void *tso) {
  const void *stack = (const void *)word_at(tso, GHC_TSO_STACKOBJ);
  return stack ? word_at(stack, GHC_STACK_SP) : 0;
}

/* GHC's functions that the wraps call on (the linker's __real_ names). */
uintptr_t __real_raiseExceptionHelper(void *reg, void *tso, void *exception);
void __real_errorBelch2(const char *fmt, char *msg);
void *__real_throwTo(void *cap, void *source, void *target, void *exception);
void __real_throwToSingleThreaded(void *cap, void *tso, void *exception);
void __real_throwToSingleThreaded_(void *cap, void *tso, void *exception, bool stop_at_atomically);
void __real_throwToSelf(void *cap, void *tso, void *exception);
void *__real_raiseAsync(void *cap, void *tso, void *exception, bool stop_at_atomically,
                        void *stop_here);
int __real_maybePerformBlockedException(void *cap, void *tso);
uint32_t __real_throwToMsg(void *cap, void *msg);
extern const char stg_enter_info[], stg_ap_pv_info[];
void *rts_unsafeGetMyCapability(void);

/* ---- options ---------------------------------------------------------------------- */

static pthread_once_t options_once = PTHREAD_ONCE_INIT;
static bool opt_uncaught, opt_raise;

static void read_options(void) {
  StrobeOptions o;
  /* a bad STROBE_OPTIONS is reported by the dynamic stack's own set-up; here it means
   * the defaults, as there */
  if (strobe_options_parse(getenv("STROBE_OPTIONS"), &o)) strobe_options_parse(NULL, &o);
  opt_uncaught = o.report_uncaught;
  opt_raise = o.report_raise;
}

void rt_ghc_exceptions_configure(bool uncaught, bool raise) {
  pthread_once(&options_once, read_options);
  opt_uncaught = uncaught;
  opt_raise = raise;
}

/* ---- snapshots -------------------------------------------------------------------- */

void rt_snapshot_take(RtSnapshot *snap, const StrobeThreadStack *s, uintptr_t sp) {
  snap->n = 0;
  snap->busy = false;
  if (!s) return;
  snap->busy = s->busy != 0;
  uint32_t depth = strobe_dynstack_depth(s), i = 0;
  /* the entries that the next pop at sp would remove are finished (Note [Watermarks]
   * in strobe/dynstack.h): the raise is at sp */
  while (i < depth && strobe_dynstack_at(s, i)->wm < sp) i++;
  /* the newest, up to the stack's first marker; the oldest, from the bottom up to its
   * last; the rest, markers and entries, is one marker */
  uint32_t newest = i, oldest = depth;
  while (newest < depth && newest - i < RT_SNAPSHOT_NEWEST &&
         !strobe_entry_is_dropped(strobe_dynstack_at(s, newest)))
    newest++;
  while (oldest > newest && depth - oldest < RT_SNAPSHOT_OLDEST &&
         !strobe_entry_is_dropped(strobe_dynstack_at(s, oldest - 1)))
    oldest--;
  for (uint32_t j = i; j < newest; j++) snap->entries[snap->n++] = *strobe_dynstack_at(s, j);
  if (oldest > newest) {
    uint64_t dropped = 0;
    for (uint32_t j = newest; j < oldest; j++) {
      const StrobeEntry *e = strobe_dynstack_at(s, j);
      dropped += strobe_entry_is_dropped(e) ? e->elided : 1;
    }
    snap->entries[snap->n++] = (StrobeEntry){
        .desc = &strobe_dynstack_dropped_desc,
        .wm = strobe_dynstack_at(s, oldest - 1)->wm,
        .elided = dropped > UINT32_MAX ? UINT32_MAX : (uint32_t)dropped};
  }
  for (uint32_t j = oldest; j < depth; j++) snap->entries[snap->n++] = *strobe_dynstack_at(s, j);
}

/* ---- the table -------------------------------------------------------------------- */

static RtRaiseTable table;
static uint64_t next_seq; /* atomic */

static void lock(RtRaiseSlot *slot) {
  while (__atomic_test_and_set(&slot->lock, __ATOMIC_ACQUIRE)) sched_yield();
}

static void unlock(RtRaiseSlot *slot) { __atomic_clear(&slot->lock, __ATOMIC_RELEASE); }

static RtRaiseSlot *slot_of(RtRaiseTable *t, uint64_t id) { return &t->slots[id % RT_RAISE_SLOTS]; }

static uint64_t new_seq(void) { return __atomic_add_fetch(&next_seq, 1, __ATOMIC_RELAXED); }

RtRaiseTable *rt_raise_table(void) { return &table; }

RtRaised rt_raise_record(RtRaiseTable *t, uint64_t id, uintptr_t exception,
                     const StrobeThreadStack *s, uintptr_t sp, RtSnapshot *out) {
  RtRaiseSlot *slot = slot_of(t, id);
  bool rethrow = false;
  lock(slot);
  if (slot->async_seq && slot->async_id == id && slot->async_exception == exception) {
    /* the delivery of the asynchronous exception: raiseAsync left the thread to raise
     * it (stg_raise) at its handler, where the stack it was interrupted in is gone */
    slot->async_seq = new_seq();
    unlock(slot);
    return RT_RAISED_ASYNC;
  }
  RtRaiseRecord *r = NULL;
  for (int i = 0; i < RT_RAISE_RECORDS; i++) {
    RtRaiseRecord *c = &slot->records[i];
    if (c->seq && c->id == id && c->exception == exception) r = c;
  }
  if (r) { /* a rethrow: the record keeps its stack, and is the thread's newest */
    rethrow = true;
    r->rethrows++;
  } else {
    r = &slot->records[0]; /* the oldest, or one not in use */
    for (int i = 1; i < RT_RAISE_RECORDS; i++)
      if (slot->records[i].seq < r->seq) r = &slot->records[i];
    r->id = id;
    r->exception = exception;
    r->rethrows = 0;
    rt_snapshot_take(&r->snap, s, sp);
  }
  r->seq = new_seq();
  if (out) *out = r->snap;
  unlock(slot);
  return rethrow ? RT_RAISED_AGAIN : RT_RAISED;
}

void rt_raise_async(RtRaiseTable *t, uint64_t id, uintptr_t exception) {
  RtRaiseSlot *slot = slot_of(t, id);
  lock(slot);
  slot->async_id = id;
  slot->async_exception = exception;
  slot->async_seq = new_seq();
  unlock(slot);
}

RtRaiseLookup rt_raise_lookup(RtRaiseTable *t, uint64_t id, RtSnapshot *out) {
  RtRaiseSlot *slot = slot_of(t, id);
  RtRaiseLookup what = RT_RAISE_NONE;
  lock(slot);
  const RtRaiseRecord *newest = NULL;
  for (int i = 0; i < RT_RAISE_RECORDS; i++) {
    const RtRaiseRecord *c = &slot->records[i];
    if (c->seq && c->id == id && (!newest || c->seq > newest->seq)) newest = c;
  }
  if (slot->async_seq && slot->async_id == id && (!newest || slot->async_seq > newest->seq)) {
    what = RT_RAISE_ASYNC;
  } else if (newest) {
    what = RT_RAISE_SYNC;
    *out = newest->snap;
  }
  unlock(slot);
  return what;
}

/* ---- reports ---------------------------------------------------------------------- */

static void write_all(int fd, const char *s) {
  for (size_t n = strlen(s); n > 0;) {
    ssize_t w = write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

/* "strobe: <what> in Haskell thread <id><rest>" into buf. */
static void line(char *buf, size_t size, const char *what, uint64_t id, const char *rest) {
  char digits[24];
  size_t k = sizeof digits;
  digits[--k] = '\0';
  do digits[--k] = (char)('0' + id % 10);
  while ((id /= 10) != 0);
  buf[0] = '\0';
  const char *parts[] = {"strobe: ", what, " in Haskell thread ", digits + k, rest};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    strncat(buf, parts[i], size - strlen(buf) - 1);
}

void rt_report_raise(int fd, uint64_t id, RtRaised how, const RtSnapshot *snap) {
  char h[200];
  bool rethrow = how == RT_RAISED_AGAIN;
  const char *what = rethrow ? "exception raised again" : "exception raised";
  if (how == RT_RAISED_ASYNC) {
    line(h, sizeof h, "asynchronous exception raised", id,
         " (throwTo, killThread, timeout or the runtime); no dynamic stack is kept for it\n");
    write_all(fd, h);
    return;
  }
  if (snap->n == 0) {
    line(h, sizeof h, what, id, "; the dynamic stack is empty\n");
    write_all(fd, h);
    return;
  }
  line(h, sizeof h, what, id,
       rethrow ? "; the dynamic stack at its first raise, newest first:\n"
               : "; the dynamic stack, newest first:\n");
  rt_write_entries(fd, h, snap->entries, snap->n, snap->busy);
}

void rt_report_uncaught(int fd, uint64_t id, RtRaiseLookup what, const RtSnapshot *snap) {
  char h[200];
  if (what == RT_RAISE_ASYNC) {
    line(h, sizeof h, "uncaught exception", id,
         ": it was thrown to the thread asynchronously (throwTo, killThread, timeout or "
         "the runtime); no dynamic stack was kept for it\n");
    write_all(fd, h);
    return;
  }
  if (what != RT_RAISE_SYNC || snap->n == 0) return;
  line(h, sizeof h, "uncaught exception", id, "; the dynamic stack at its raise, newest first:\n");
  rt_write_entries(fd, h, snap->entries, snap->n, snap->busy);
}

/* ---- the wraps -------------------------------------------------------------------- */

/* Note [Who built the action that raised]
   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
   An IO action is a function that some code builds and other code runs.  At -O0,
   GHC runs a do-block through base's (>>=), which is not instrumented: in

       failB n = ioError (userError ("out of turns at " ++ show n))

   failB's code returns the action `ioError ...` and has finished (its entry is stale,
   its continuation entered) when base's (>>=) runs that action and raiseIO# raises.
   A snapshot that skipped the finished entries would show failB's caller as the
   raiser, or nothing at all.  A cost-centre stack keeps failB, the scope the action
   was built in.

   The entries that are finished at a raise but still on the dynamic stack are those
   that finished since the thread last ran instrumented code: any tick, and any return
   into instrumented code, pops what has finished below it.  When the raise is
   raiseIO#, that is the code that built the action (and the code around it in the
   same frame, whose entries went with it): the snapshot keeps them.  raise# (error,
   throw, a pattern-match failure, div) keeps only the live entries: there the
   finished entries are work that returned a value that base's code then rejected (a
   predicate that `head . filter p` called), not the raiser.

   raiseIO# is stg_raiseIOzh, which base's code (and strobec's) jumps to with the
   exception in R1 (rbx): the wrap sets this thread's flag in rax, which no STG
   register uses, and jumps on; the next raiseExceptionHelper on this thread reads and
   clears it.  Under -dynamic the wrap does not take, and an IO raise is a raise. */
__attribute__((tls_model("initial-exec"))) _Thread_local unsigned char rt_raising_io;

__asm__(".pushsection .text\n"
        ".globl __wrap_stg_raiseIOzh\n"
        ".type __wrap_stg_raiseIOzh, @function\n"
        "__wrap_stg_raiseIOzh:\n"
        "  movq rt_raising_io@GOTTPOFF(%rip), %rax\n"
        "  movb $1, %fs:(%rax)\n"
        "  jmp __real_stg_raiseIOzh\n"
        ".size __wrap_stg_raiseIOzh, . - __wrap_stg_raiseIOzh\n"
        ".popsection\n");

/* The closure, whatever the pointer's tag. */
static uintptr_t untag(const void *closure) { return (uintptr_t)closure & ~(uintptr_t)7; }

static void async_to(void *target, void *exception) {
  if (target) rt_raise_async(&table, rt_ghc_tso_id(target), untag(exception));
}

/* Note [Where an asynchronous exception is delivered]
   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
   raiseAsync (RaiseAsync.c) unwinds the target's stack to its innermost catch frame.
   GHC 9.0 leaves there a closure that raises the exception again (stg_raise) when the
   thread runs: the delivery is a raiseExceptionHelper, which finds the exception
   recorded by async_to and reports it as asynchronous.  From GHC 9.4 raiseAsync
   applies the handler itself (its Note [Apply the handler directly in raiseAsync]):
   the stack's top is then

       stg_enter_info, handler, stg_ap_pv_info, exception

   and no raise follows.  raiseAsync is called from inside RaiseAsync.c (throwTo,
   throwToMsg, throwToSingleThreaded, maybePerformBlockedException), where --wrap does
   not reach: the wraps of the functions that other objects call look, when the real
   one returns, for that top on the target's stack, and report the delivery there.
   On 9.0 the top is stg_raise's, and the raise reports, as before. */
static void delivered(const void *tso) {
  if (!tso) return;
  const void *stack = (const void *)word_at(tso, GHC_TSO_STACKOBJ);
  const uintptr_t *sp = stack ? (const uintptr_t *)word_at(stack, GHC_STACK_SP) : NULL;
  if (!sp || sp[0] != (uintptr_t)stg_enter_info || sp[2] != (uintptr_t)stg_ap_pv_info) return;
  pthread_once(&options_once, read_options);
  uint64_t id = rt_ghc_tso_id(tso);
  rt_raise_async(&table, id, untag((const void *)sp[3]));
  if (opt_raise) rt_report_raise(STDERR_FILENO, id, RT_RAISED_ASYNC, NULL);
}

uintptr_t __wrap_raiseExceptionHelper(void *reg, void *tso, void *exception) {
  pthread_once(&options_once, read_options);
  bool io = rt_raising_io;
  rt_raising_io = 0;
  if (tso) {
    uint64_t id = rt_ghc_tso_id(tso);
    RtSnapshot snap;
    /* from Sp, the live entries; from 0, the finished ones too (Note [Who built the
     * action that raised]) */
    RtRaised how = rt_raise_record(&table, id, untag(exception), strobe_dynstack_current(),
                                   io ? 0 : rt_ghc_tso_sp(tso), opt_raise ? &snap : NULL);
    if (opt_raise) rt_report_raise(STDERR_FILENO, id, how, &snap);
  }
  uintptr_t frame = __real_raiseExceptionHelper(reg, tso, exception);
  /* The stack is unwound to the frame that handles the exception (a catch frame, or
   * what else raiseExceptionHelper stops at), which Sp is now at: what returned to
   * that frame or to one below it is gone, as after a return to it. */
  if (tso) strobe_ret(rt_ghc_tso_sp(tso));
  return frame;
}

void __wrap_errorBelch2(const char *fmt, char *msg) {
  pthread_once(&options_once, read_options);
  void *cap = opt_uncaught ? rts_unsafeGetMyCapability() : NULL;
  const void *tso = cap ? (const void *)word_at(cap, GHC_CAP_R + GHC_REG_CURRENT_TSO) : NULL;
  if (tso) {
    uint64_t id = rt_ghc_tso_id(tso);
    RtSnapshot snap;
    RtRaiseLookup what = rt_raise_lookup(&table, id, &snap);
    rt_report_uncaught(STDERR_FILENO, id, what, &snap);
  }
  __real_errorBelch2(fmt, msg);
}

void *__wrap_throwTo(void *cap, void *source, void *target, void *exception) {
  async_to(target, exception);
  void *msg = __real_throwTo(cap, source, target, exception);
  if (!msg) delivered(target);
  return msg;
}

void __wrap_throwToSingleThreaded(void *cap, void *tso, void *exception) {
  async_to(tso, exception);
  __real_throwToSingleThreaded(cap, tso, exception);
  delivered(tso);
}

void __wrap_throwToSingleThreaded_(void *cap, void *tso, void *exception, bool stop_at_atomically) {
  async_to(tso, exception);
  __real_throwToSingleThreaded_(cap, tso, exception, stop_at_atomically);
  delivered(tso);
}

void __wrap_throwToSelf(void *cap, void *tso, void *exception) {
  async_to(tso, exception);
  __real_throwToSelf(cap, tso, exception);
  delivered(tso);
}

/* raiseAsync returns its TSO from GHC 9.4 (void before) */
void *__wrap_raiseAsync(void *cap, void *tso, void *exception, bool stop_at_atomically,
                        void *stop_here) {
  async_to(tso, exception);
  void *r = __real_raiseAsync(cap, tso, exception, stop_at_atomically, stop_here);
  delivered(tso);
  return r;
}

/* a throwTo that waited for its target to unmask: recorded by the throwTo */
int __wrap_maybePerformBlockedException(void *cap, void *tso) {
  int raised = __real_maybePerformBlockedException(cap, tso);
  if (raised) delivered(tso);
  return raised;
}

/* a throwTo from another capability (-threaded): recorded by the throwTo, delivered
 * when the target's capability reads the message */
uint32_t __wrap_throwToMsg(void *cap, void *msg) {
  const void *target = (const void *)word_at(msg, GHC_MSG_THROWTO_TARGET);
  uint32_t r = __real_throwToMsg(cap, msg);
  if (r == 0 /* THROWTO_SUCCESS */) delivered(target);
  return r;
}
