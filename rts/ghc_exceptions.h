/* ghc_exceptions.h — the snapshots that rts/ghc_exceptions.c takes at a GHC program's
 * raises, and their table; internal to the runtime (prefix rt_), apart so that the
 * unit tests reach them. */
#ifndef STROBE_RT_GHC_EXCEPTIONS_H
#define STROBE_RT_GHC_EXCEPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "strobe/dynstack.h"

#pragma GCC visibility push(hidden)

enum {
  RT_SNAPSHOT_NEWEST = 48,  /* entries copied at a raise: the newest, */
  RT_SNAPSHOT_OLDEST = 15,  /* the oldest, */
  RT_SNAPSHOT_ENTRIES = RT_SNAPSHOT_NEWEST + 1 + RT_SNAPSHOT_OLDEST, /* a marker between */
  RT_RAISE_SLOTS = 64,      /* slots of the table: thread id modulo this */
  RT_RAISE_RECORDS = 2,     /* raises kept per slot */
};

/* A copy of the live entries of a thread's dynamic stack, newest first, as a report
 * prints them: its newest and its oldest, and between them a marker of dropped entries
 * (strobe_entry_is_dropped) counting those not copied, the stack's own markers' too. */
typedef struct RtSnapshot {
  uint32_t n;      /* entries[0..n), newest first */
  bool busy;       /* the stack was changing (a slow path was interrupted) */
  StrobeEntry entries[RT_SNAPSHOT_ENTRIES];
} RtSnapshot;

/* Copies s's live entries into snap: those that the next pop at sp would not remove
 * (the stale ones above the raise go; sp 0 keeps them, as an IO raise does: Note [Who
 * built the action that raised] in ghc_exceptions.c), at most RT_SNAPSHOT_NEWEST of the
 * newest and RT_SNAPSHOT_OLDEST of the oldest.  s may be NULL (no stack: an empty
 * snapshot). */
void rt_snapshot_take(RtSnapshot *snap, const StrobeThreadStack *s, uintptr_t sp);

typedef struct RtRaiseRecord {
  uint64_t seq;         /* when it was last raised; 0: not in use */
  uint64_t id;          /* the Haskell thread's id */
  uintptr_t exception;  /* the exception closure, untagged */
  uint64_t rethrows;
  RtSnapshot snap;      /* at its first raise */
} RtRaiseRecord;

typedef struct RtRaiseSlot {
  bool lock;
  uint64_t async_seq, async_id; /* the newest asynchronous exception thrown here */
  uintptr_t async_exception;
  RtRaiseRecord records[RT_RAISE_RECORDS];
} RtRaiseSlot;

typedef struct RtRaiseTable {
  RtRaiseSlot slots[RT_RAISE_SLOTS];
} RtRaiseTable;

/* The process's table. */
RtRaiseTable *rt_raise_table(void);

typedef enum RtRaised {
  RT_RAISED,       /* a new raise: its record has the stack */
  RT_RAISED_AGAIN, /* a rethrow: a record of the thread holds that exception already, and
                      keeps the stack of its first raise */
  RT_RAISED_ASYNC, /* the delivery of the asynchronous exception thrown to the thread
                      last: no stack */
} RtRaised;

/* Thread id raises exception (an untagged closure) with stack s at sp.  *out, if not
 * NULL, gets the record's snapshot (RT_RAISED, RT_RAISED_AGAIN). */
RtRaised rt_raise_record(RtRaiseTable *t, uint64_t id, uintptr_t exception,
                     const StrobeThreadStack *s, uintptr_t sp, RtSnapshot *out);

/* The asynchronous exception `exception` is thrown to thread id. */
void rt_raise_async(RtRaiseTable *t, uint64_t id, uintptr_t exception);

typedef enum RtRaiseLookup {
  RT_RAISE_NONE,  /* nothing kept for the thread */
  RT_RAISE_SYNC,  /* its newest raise: *out */
  RT_RAISE_ASYNC, /* an asynchronous exception came after its newest raise */
} RtRaiseLookup;

/* What is known of thread id's newest exception. */
RtRaiseLookup rt_raise_lookup(RtRaiseTable *t, uint64_t id, RtSnapshot *out);

/* The reports, on fd: at a raise (report_raise), and before GHC's message of an
 * uncaught exception (nothing for RT_RAISE_NONE or an empty snapshot). */
void rt_report_raise(int fd, uint64_t id, RtRaised how, const RtSnapshot *snap);
void rt_report_uncaught(int fd, uint64_t id, RtRaiseLookup what, const RtSnapshot *snap);

/* GHC's TSO: its id and its stack's saved Sp. */
uint64_t rt_ghc_tso_id(const void *tso);
uintptr_t rt_ghc_tso_sp(const void *tso);

/* Sets the options instead of those of STROBE_OPTIONS (for the tests). */
void rt_ghc_exceptions_configure(bool uncaught, bool raise);

#pragma GCC visibility pop
#endif
