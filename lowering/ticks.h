/* ticks.h — the ticks stage: the dynamic stack's policy, decided without LLVM
 * (docs/design.md, "Tick scopes and source notes" and "The dynamic stack").
 *
 * The lowering calls three pseudo-intrinsics (strobe.tick, strobe.pop, strobe.ret) and
 * emits one constant tick descriptor per Haskell function and source note of the
 * module.  What it calls where, and what each descriptor says, is decided here:
 *
 *   tk_plan       per proc of a file, before lowering: the binding whose function its
 *                 ticks count for (a thunk's or a -fllvm continuation's is the binding
 *                 it belongs to) and whether it is entered by a return
 *   tk_pops       after which statements a pop goes (an assignment that may raise Sp)
 *   tk_returns    which calls are returns, a ret before each (its code's entries go)
 *   tk_ret_on_entry  which functions start with a ret (those entered by a return)
 *   tk_frames, tk_wm_offset  where a tick's watermark is: the continuation its code
 *                 returns to, as an offset from Sp (Note [A tick's watermark] in ticks.c)
 *   tk_ticks     which source notes tick: all, or a function's entry note (--ticks)
 *   tk_repeats, tk_repeated  which edges of a loop skip a tick that the dynamic stack's
 *                 top is already (Note [A tick its loop repeats] in ticks.c)
 *   tk_desc       the descriptor of a tick: one per (owner, function, file, span) in the
 *                 module, numbered in order of first use
 *   tk_link       every descriptor's parent and its NESTED flag (Note [A descriptor's
 *                 parent] in ticks.c), once every descriptor is known
 *
 * The lowering emits what was decided (lowering/tickemit.c): descriptor i is the i-th
 * global it makes, its parent field the global of tk_get(i)->parent.  Strings are
 * copied: a Ticks outlives the files whose notes it was given.
 */
#ifndef STROBE_TICKS_H
#define STROBE_TICKS_H

#include "cmm.h"
#include "scopes.h"
#include "span.h"

/* ---- per file: which function a proc's ticks count for --------------------------- */

typedef struct TkProc {
  /* The proc whose Haskell function this proc's ticks count for; NULL: its own (it is
   * a binding, has no code, or no enclosing scope holds a binding's entry). */
  const CmmProc *binding;
  bool continuation; /* a -fllvm split continuation (`_c1JV`): entered by a return */
} TkProc;

typedef struct TkPlan {
  const CmmFile *file;
  TkProc **procs; /* [group][decl]; a data decl's entry is zero */
  StrMap renamed; /* a named note's address -> index into names (tk_note_name) */
  VEC(const char *) names;
} TkPlan;

/* The plan of file f, whose groups have the scope trees trees[g] (scopes_build). */
TkPlan *tk_plan(const CmmFile *f, ScopeTree *const *trees, Arena *a);
const TkProc *tk_proc(const TkPlan *plan, uint32_t group, uint32_t decl);

/* The name of the binding a named note belongs to (Note [A local binding's own note]
 * in ticks.c); NULL if the note has none. */
const char *tk_note_name(const TkPlan *plan, const CmmSrcNote *note);

/* Whether a note is the whole definition of a local binding (Note [A local binding's
 * own note] in ticks.c). */
bool tk_is_definition(const TkPlan *plan, const CmmSrcNote *note);

/* Code that is a binding of its own: not a -fllvm continuation (`_c1JV`), not a thunk
 * (`sat_s1Jv`). */
bool tk_is_binding(const CmmProc *p);

/* ---- where the intrinsics go ------------------------------------------------------- */

/* Whether a pop follows statement s: an assignment to Sp that may raise it (pop
 * frames), which is every one but a push (`Sp = Sp - N`, `Sp = (Sp + -N)`).  The pop
 * compares with the continuation the code returns to (tk_wm_offset), not Sp: GHC's
 * code keeps live frames below Sp across a join point's back edge. */
bool tk_pops(const CmmStmt *s);

/* s is a return: a jump to the continuation at Sp. */
bool tk_returns(const CmmStmt *s);

/* Whether the function that starts at proc point pp of its proc begins with a ret: a
 * return point (any proc point but the entry), or the entry of a continuation. */
bool tk_ret_on_entry(uint32_t pp, bool continuation);

/* ---- where a tick's watermark is (Note [A tick's watermark] in ticks.c) ---------- */

/* What a proc's calls say of its frame: the size of its incoming area (the symbolic
 * dump's arg_space, or what its jumps imply), and per block the update frame offset
 * (`upd:`) of the calls the block leads to; TK_UNKNOWN where nothing says. */
enum { TK_UNKNOWN = -1 };

typedef struct TkFrames {
  int64_t arg_space;
  int64_t *upd; /* [block] */
} TkFrames;

TkFrames tk_frames(const CmmProc *p, Arena *a);

/* The offset of the entry Sp from Sp after statement s, given it before s in *k
 * (TK_UNKNOWN: not known): an `unwind Sp = Just Sp + k` says it, `Sp = Sp ± n` moves
 * it, any other assignment to Sp loses it.  A block starts with TK_UNKNOWN. */
void tk_track_sp(const CmmStmt *s, int64_t *k);

/* The watermark of a tick in block b, where the entry Sp is Sp + k: the address of
 * the continuation its code returns to, as an offset from Sp; 0 (Sp itself) where the
 * proc does not say. */
int64_t tk_wm_offset(const TkFrames *f, uint32_t b, int64_t k);


/* Note [Which notes tick] in ticks.c. */
typedef enum TkMode {
  TK_ALL,       /* --ticks=all (the default): every source note, the finest location */
  TK_FUNCTIONS, /* --ticks=functions: a function's entry note only */
} TkMode;

/* Which notes tick in one function (one per proc point). */
typedef struct TkFnTicks {
  const TkPlan *plan; /* its file's: which notes are local definitions */
  TkMode mode;
  const CmmSrcNote *own; /* its own note (tk_own_note) */
  const bool *definitions; /* [block]: a definition ticks there (tk_definition_blocks) */
} TkFnTicks;

/* Per block of p: whether the note of a binding's definition that GHC compiled into
 * other code ticks there with --ticks=functions: where two edges or more of p go (a
 * loop's header, a join point), or where no loop passes, through returns too (Note
 * [Which notes tick]). */
bool *tk_definition_blocks(const CmmProc *p, Arena *a);

/* The own note of the function that starts at block pp of p, the decl-th of the group
 * whose scopes are tree; NULL if it has none. */
const CmmSrcNote *tk_own_note(const TkPlan *plan, const CmmProc *p, const ScopeTree *tree,
                              uint32_t decl, uint32_t pp, const bool *proc_point, Arena *a);

/* Whether a tick at note, in block b, goes in the function. */
bool tk_ticks(const TkFnTicks *w, uint32_t b, const CmmSrcNote *note);

/* The mode named s ("functions", "all"); false if s names none. */
bool tk_mode_parse(const char *s, TkMode *mode);

/* ---- ticks a loop repeats (Note [A tick its loop repeats] in ticks.c) ----------- */

/* What the dynamic stack's top is known to be at a point of a function's code: the
 * tick statement that made it, with its watermark (an offset from Sp); tick NULL: not
 * known. */
typedef struct TkTop {
  const CmmStmt *tick;
  int64_t wm;
} TkTop;

typedef struct TkRepeats {
  TkTop *out;   /* [block]: the top when the block goes to its successors */
  TkTop *first; /* [block]: its first tick, where nothing before it acts or computes */
} TkRepeats;

/* Of the function (one per proc point) that starts at block pp of proc p, whose
 * blocks are those reached from pp without entering another proc point
 * (proc_point[b]), and whose notes tick as w says. */
TkRepeats tk_repeats(const CmmProc *p, const TkFrames *f, uint32_t pp, const bool *proc_point,
                     const TkFnTicks *w, Arena *a);

/* Whether the edge from block `from` to block `to` may skip to's first tick: the top
 * is that tick already. */
bool tk_repeated(const TkRepeats *r, uint32_t from, uint32_t to);

/* ---- the module's descriptors ------------------------------------------------------ */

enum { TK_NO_PARENT = UINT32_MAX };

typedef struct TkDesc {
  const char *owner;    /* the binding whose code ticks it (tk_desc) */
  const char *function; /* the Haskell function the tick counts for */
  const char *file;     /* the note's file */
  StrobeSpan span;
  uint32_t parent;      /* index of the parent descriptor, or TK_NO_PARENT (tk_link) */
  bool nested;          /* STROBE_DESC_NESTED (tk_link) */
} TkDesc;

typedef struct Ticks Ticks;

Ticks *tk_new(void);
void tk_free(Ticks *t);

/* The descriptor of a tick at note, counting for Haskell function `function`, in code
 * of the binding `owner` (the procedure's, tk_plan): one per owner, so that each
 * binding's code has descriptors of its own, whose code address says the code is
 * instrumented (the profiler's rt_prof_resolve_locals).  *made is true when this call
 * made it (it is then the last, index tk_count() - 1). */
uint32_t tk_desc(Ticks *t, const char *owner, const char *function, const CmmSrcNote *note,
                 bool *made);
uint32_t tk_count(const Ticks *t);
const TkDesc *tk_get(const Ticks *t, uint32_t i);

/* Sets every descriptor's parent and nested flag. */
void tk_link(Ticks *t);
/* The same rule on any array of descriptors, in their order (the tests use it). */
void tk_link_descs(TkDesc *d, uint32_t n);

#endif
