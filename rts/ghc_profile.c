/* ghc_profile.c — the GHC side of the profile (docs/profiling.md): which OS threads
 * are in GHC's garbage collector, so that their samples get the leaf frame `[gc]`.
 *
 * strobe-ghc links an instrumented program with --wrap=GarbageCollect and
 * --wrap=gcWorkerThread (and -u __wrap_GarbageCollect, which pulls this member in):
 *   GarbageCollect  the collection itself, on the OS thread that runs it (any RTS);
 *   gcWorkerThread  a parallel collection's helpers (-threaded, +RTS -qg off), on the
 *                   other capabilities' OS threads.  The non-threaded RTS has none:
 *                   its __real_ is then a weak undefined symbol, and nothing calls it.
 *
 * GarbageCollect's parameters differ between GHC releases (9.0.2 has seven: integers,
 * booleans and pointers); the wrap takes seven words and hands them on unchanged,
 * which the x86-64 calling convention makes exact for any such list of at most seven
 * (the seventh is on the caller's stack, read whether or not the caller wrote it). */
#include "profile.h"

#include <stdint.h>

typedef uintptr_t W;

void __real_GarbageCollect(W, W, W, W, W, W, W);
void __real_gcWorkerThread(void *cap) __attribute__((weak));

void __wrap_GarbageCollect(W a, W b, W c, W d, W e, W f, W g);
void __wrap_gcWorkerThread(void *cap);

void __wrap_GarbageCollect(W a, W b, W c, W d, W e, W f, W g) {
  rt_profile_in_gc++;
  __real_GarbageCollect(a, b, c, d, e, f, g);
  rt_profile_in_gc--;
}

void __wrap_gcWorkerThread(void *cap) {
  rt_profile_in_gc++;
  if (__real_gcWorkerThread) __real_gcWorkerThread(cap);
  rt_profile_in_gc--;
}
