/* ghc_threads.c — the dynamic stack under GHC 9.0's runtime: one stack per Haskell
 * thread, and the chunks of its Cmm stack followed (Note [Haskell threads and stack
 * chunks] in strobe/dynstack.h).
 *
 * Only libstrobe-rt.a has this file, and only a program linked with
 *   -Wl,--wrap=StgRun,--wrap=threadStackUnderflow,--wrap=resumeThread,-u,__wrap_StgRun
 * uses it (strobe-ghc adds those flags to an instrumented program).  Every call of
 * these functions comes from another object than the one that defines them
 * (Schedule.o calls StgRun; StgMiscClosures.o, RaiseAsync.o and Schedule.o call
 * threadStackUnderflow; compiled Haskell code calls resumeThread after each safe
 * foreign call), so the linker sends those calls here.  A -dynamic program's
 * RTS binds them inside libHSrts.so: there the stack stays one per OS thread.
 *
 * The layouts read here are those of the GHC strobe is built with, on x86-64,
 * non-profiling: ghc_layout.h, which the build makes from that GHC's
 * DerivedConstants.h; nothing of GHC's headers is included. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rt_internal.h"

#include <stdint.h>

/* GHC's layouts, GHC_* (x86-64, tables next to code, no profiling): ghc_layout.h, made
 * from the headers of the GHC strobe is built with. */
#include "ghc_layout.h"

typedef void *(*GhcFunPtr)(void);

/* The real functions, which --wrap names __real_*, and the underflow frame's info. */
void *__real_StgRun(GhcFunPtr f, void *basereg);
uintptr_t __real_threadStackUnderflow(void *cap, void *tso);
void *__real_resumeThread(void *task);
extern const char stg_stack_underflow_frame_info[];

void *__wrap_StgRun(GhcFunPtr f, void *basereg);
uintptr_t __wrap_threadStackUnderflow(void *cap, void *tso);
void *__wrap_resumeThread(void *task);

static uintptr_t word(const void *p, size_t offset) {
  return *(const uintptr_t *)((const char *)p + offset);
}

/* Where a chunk's words end (its highest address + 1). */
static uintptr_t chunk_end(const void *stack) {
  uint32_t words = *(const uint32_t *)((const char *)stack + GHC_STACK_SIZE);
  return (uintptr_t)stack + GHC_STACK_STACK + (uintptr_t)words * 8;
}

/* The chunk below stack in its thread's chain (the next_chunk of the underflow frame
 * at its end), or NULL at the bottom (which ends with a stop frame). */
static const void *chunk_below(const void *stack) {
  uintptr_t frame = chunk_end(stack) - GHC_UNDERFLOW_FRAME;
  if (word((const void *)frame, 0) != (uintptr_t)stg_stack_underflow_frame_info) return NULL;
  return (const void *)word((const void *)frame, 8);
}

/* How many chunks are below stack. */
static uint32_t chunk_index(const void *stack) {
  uint32_t n = 0;
  for (const void *c = chunk_below(stack); c; c = chunk_below(c)) n++;
  return n;
}

/* Tells s where tso's chunks are now, if its top chunk is not the one s knows. */
static void follow_chunks(StrobeThreadStack *s, const void *tso) {
  const void *top = (const void *)word(tso, GHC_TSO_STACKOBJ);
  uintptr_t end = chunk_end(top);
  if (end == s->chunk_end) return; /* the same chunk, unmoved */
  uint32_t index = chunk_index(top);
  uintptr_t split = 0;
  const void *below = chunk_below(top);
  if (s->chunk_end && below && index == s->chunk_index + 1) {
    /* An overflow: the frames above the old chunk's saved Sp stayed in it, the deeper
       ones were copied below the new chunk's underflow frame. */
    split = chunk_end(below) - word(below, GHC_STACK_SP);
    if (split == 0) split = 1; /* everything moved: still a split */
  }
  strobe_dynstack_rechunk(s, index, end, split, GHC_UNDERFLOW_FRAME);
}

void *__wrap_StgRun(GhcFunPtr f, void *basereg) {
  const void *tso = (const void *)word(basereg, GHC_REG_CURRENT_TSO);
  StrobeDynStackHead prev;
  StrobeThreadStack *s = tso ? strobe_green_enter(word(tso, GHC_TSO_ID), &prev) : NULL;
  if (s) follow_chunks(s, tso);
  void *r = __real_StgRun(f, basereg);
  if (s) {
    int finished = *(const uint32_t *)((const char *)r + GHC_REG_RET) == GHC_THREAD_FINISHED;
    strobe_green_leave(s, &prev, finished);
  }
  return r;
}

/* The top chunk of tso is done (its frames returned, or an exception unwound them):
 * its entries go, and the chunk below becomes the top. */
uintptr_t __wrap_threadStackUnderflow(void *cap, void *tso) {
  uintptr_t r = __real_threadStackUnderflow(cap, tso);
  StrobeThreadStack *s = strobe_green_find(word(tso, GHC_TSO_ID));
  if (s && s->chunk_end) {
    const void *top = (const void *)word(tso, GHC_TSO_STACKOBJ);
    uint32_t index = s->chunk_index > 0 ? s->chunk_index - 1 : chunk_index(top);
    strobe_dynstack_rechunk(s, index, chunk_end(top), 0, 0);
  }
  return r;
}

/* A safe foreign call returns: a GC during the call may have moved the thread's stack
 * (performGC, or another capability's GC with -threaded), which the thread reloads
 * from its TSO after this.  The thread is the one bound to this OS thread. */
void *__wrap_resumeThread(void *task) {
  void *r = __real_resumeThread(task);
  const void *tso = (const void *)word(r, GHC_REG_CURRENT_TSO);
  StrobeThreadStack *s = strobe_dynstack_head.stack;
  if (s && tso && s->thread_id == word(tso, GHC_TSO_ID)) follow_chunks(s, tso);
  return r;
}
