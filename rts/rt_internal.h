/* rt_internal.h — what the runtime's files share and do not export (prefix rt_).
 *
 *   dynstack.c    the dynamic stack: slow paths, thread stacks, registry, statistics
 *   report.c      printing it: on demand, on a fatal signal, at exit
 *   options.c     STROBE_OPTIONS
 *   ghc_exceptions.c  reports at a GHC program's raises (linked by strobe-ghc)
 *   standalone.c  what a standalone Cmm program runs on
 */
#ifndef STROBE_RT_INTERNAL_H
#define STROBE_RT_INTERNAL_H

#include "strobe/dynstack.h"
#include "strobe/rt.h"

/* Not exported from libstrobe-rt.so. */
#pragma GCC visibility push(hidden)

/* ---- dynstack.c ---- */

/* Reads STROBE_OPTIONS (unless strobe_dynstack_configure came first), and sets up what
 * the dynamic stack needs process-wide: the thread-exit hook, the fork hook, the
 * fatal-signal handlers and the report at exit.  Idempotent and thread-safe. */
void rt_dynstack_init(void);

/* ---- report.c ---- */

/* Installs the one handler of SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT, which turns
 * a fault on the Cmm stack's guard page into `strobe: Cmm stack overflow` and otherwise
 * prints the thread's dynamic stack (if crash_report is on) and dies of the signal.
 * Returns 0 on success, else -1 with errno set.  Calling it again is harmless. */
int rt_install_fatal_handlers(void);

/* Tells the handler where the standalone program's guard page is: [lo, hi). */
void rt_set_guard_page(uintptr_t lo, uintptr_t hi);

/* Whether entry `older`, just below `newer` in a stack, belongs to the same frame (one
 * Haskell function activation; Note [One frame per activation] in report.c). */
bool rt_one_frame(const StrobeEntry *newer, const StrobeEntry *older);
/* The report_full option: reports list every entry, not frames (set with the options). */
extern bool rt_report_full;

/* Writes header, then entries[0..n) (newest first) as a report prints them (as frames,
 * unless report_full is on; a marker of dropped entries as a line counting them), and
 * a warning if the stack was `busy` when they were copied.  write(2) only.  Returns
 * the frames written, or -1 if a write failed. */
int rt_write_entries(int fd, const char *header, const StrobeEntry *entries, uint32_t n, bool busy);

/* The report at exit (registered with atexit; prints only if report_at_exit is on). */
void rt_report_at_exit(void);

#pragma GCC visibility pop
#endif
