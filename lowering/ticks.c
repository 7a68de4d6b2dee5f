/* ticks.c — the ticks stage (see ticks.h; docs/design.md, "The dynamic stack").
 *
 * Note [A descriptor's parent]: the parent of a descriptor is the descriptor of the
 * smallest span that strictly contains its own, among those of the same function and
 * file in this module; none if none does.  Of two smallest candidates that do not
 * contain each other, the first in the module's order wins.  When those spans nest (the
 * notes of a Haskell binding do), every one of them is on the parent chain, and the
 * descriptor says so (STROBE_DESC_NESTED): the inline tick (plugin/instrument.c) then
 * tells an entry that contains it from a finished sibling by the chain alone, and
 * handles rules 2a-2c of the dynamic stack without calling the runtime.  Quadratic in
 * the descriptors of a module, which are few per function.
 */
#include "ticks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan -------------------------------------------------------------------- */

bool tk_is_binding(const CmmProc *p) {
  return p->label[0] != '_' && strncmp(p->label, "sat_", 4) != 0;
}

/* The binding a continuation or thunk belongs to: the nearest scope at or above its
 * entry holds the entry block of that binding's proc.  GHC's -fllvm pipeline makes each
 * continuation a proc of its own (`_c1JV`, table `block_c1JV_info`); its ticks, like a
 * thunk's, count as that binding's function. */
static const CmmProc *binding_of(const CmmProc *p, const ScopeTree *tree, uint32_t decl) {
  if (tk_is_binding(p) || p->nblocks == 0) return NULL; /* no code, no ticks */
  for (const ScopeNode *n = scopes_block_node(tree, decl, 0); n; n = n->parent)
    for (uint32_t i = 0; i < n->nblocks; i++) {
      const CmmProc *q = n->blocks[i].proc;
      if (q != p && tk_is_binding(q) && n->blocks[i].block == &q->blocks[0]) return q;
    }
  return NULL;
}

/* Note [A local binding's own note]
   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
   GHC names a source note by the bindings it is in (SourceNote's name, which strobe's
   plugin prints): the notes of a `where` helper's body are `hotA.go`, but the note of
   the helper's whole definition, `go !acc i | ... = ...`, is in hotA only: `hotA`.  A
   loop over `go` ticks that note at each iteration, then go's own, so that the two
   would take turns as two functions at one watermark, each tick a tail call (the slow
   path).  So a note named F is the definition of a local binding g, and counts as F.g,
   when
     - the notes its span strictly contains (in its file) are all named F.g or inside
       F.g, and F.g is the longest name they all begin with (`let bad why = ...`
       inside parseValue, a helper of sumSettings, is named sumSettings by GHC, and
       contains only notes of sumSettings.parseValue.bad);
     - one of them ends where it ends: g's body, or its last `where` binding (not `let
       (a, b) = g x in f a b`, whose body keeps no note once the plugin has dropped
       those of variables);
     - it is not a top-level binding's, which may contain only its `where` helper's
       notes (`inventory es = foldl' add Map.empty es where add = ...`): a top-level
       binding's note starts at column 1, and no note is around it.
   A definition counts by its new name inside an enclosing one (parseValue's definition
   contains bad's), so the renaming repeats until nothing changes. */

/* The length of the longest name, in whole components, that a and b both begin with. */
static size_t common_prefix(const char *a, const char *b) {
  size_t n = 0, i = 0;
  for (; a[i] && a[i] == b[i]; i++)
    if (a[i] == '.') n = i;
  return (a[i] == '\0' || a[i] == '.') && (b[i] == '\0' || b[i] == '.') ? i : n;
}

static void set_name(TkPlan *plan, Arena *a, const CmmSrcNote *n, const char *name) {
  char key[32];
  uint32_t i;
  snprintf(key, sizeof key, "%p", (const void *)n);
  if (strmap_get(&plan->renamed, key, &i)) {
    plan->names.v[i] = name;
    return;
  }
  strmap_put(&plan->renamed, a, arena_strndup(a, key, strlen(key)), plan->names.n, NULL);
  vec_push(a, &plan->names, name);
}

static void rename_definitions(TkPlan *plan, Arena *a) {
  VEC(const CmmSrcNote *) notes = {0};
  const CmmFile *f = plan->file;
  for (uint32_t g = 0; g < f->ngroups; g++)
    for (uint32_t i = 0; i < f->groups[g].ndecls; i++) {
      const CmmDecl *d = &f->groups[g].decls[i];
      if (d->kind != CMM_DECL_PROC) continue;
      for (uint32_t b = 0; b < d->u.proc.nblocks; b++)
        for (uint32_t s = 0; s < d->u.proc.blocks[b].nstmts; s++) {
          const CmmStmt *st = &d->u.proc.blocks[b].stmts[s];
          if (st->kind == CMM_S_TICK && st->u.tick.name) vec_push(a, &notes, &st->u.tick);
        }
    }
  strmap_init(&plan->renamed, a, 16);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < notes.n; i++) {
      const CmmSrcNote *n = notes.v[i];
      const char *name = tk_note_name(plan, n);
      size_t len = strlen(name), longest = 0; /* of the name all those inside begin with */
      const char *inner = NULL;                /* the first of them */
      bool all = true, ends = false; /* ends: one of them where n ends (g's body) */
      bool local = n->col1 > 1;           /* not a top-level binding's whole span */
      for (uint32_t j = 0; j < notes.n && all; j++) {
        const CmmSrcNote *m = notes.v[j];
        if (strcmp(m->file, n->file) != 0) continue;
        local |= strobe_span_encloses(STROBE_SPAN_OF(m), STROBE_SPAN_OF(n));
        if (!strobe_span_encloses(STROBE_SPAN_OF(n), STROBE_SPAN_OF(m))) continue;
        const char *mname = tk_note_name(plan, m);
        if (!inner) inner = mname, longest = strlen(mname);
        size_t k = common_prefix(inner, mname);
        longest = k < longest ? k : longest;
        all = strncmp(mname, name, len) == 0 && mname[len] == '.' && longest > len;
        ends |= m->line2 == n->line2 && m->col2 == n->col2;
      }
      if (!inner || !all || !ends || !local) continue; /* a longer name: the renaming ends */
      set_name(plan, a, n, arena_printf(a, "%.*s", (int)longest, inner));
      changed = true;
    }
  }
}

bool tk_is_definition(const TkPlan *plan, const CmmSrcNote *note) {
  char key[32];
  uint32_t i;
  if (!plan || !note->name || !plan->names.n) return false;
  snprintf(key, sizeof key, "%p", (const void *)note);
  return strmap_get(&plan->renamed, key, &i);
}

const char *tk_note_name(const TkPlan *plan, const CmmSrcNote *note) {
  char key[32];
  uint32_t i;
  if (!note->name || !plan->names.n) return note->name;
  snprintf(key, sizeof key, "%p", (const void *)note);
  return strmap_get(&plan->renamed, key, &i) ? plan->names.v[i] : note->name;
}

TkPlan *tk_plan(const CmmFile *f, ScopeTree *const *trees, Arena *a) {
  TkPlan *plan = arena_alloc(a, sizeof *plan);
  plan->file = f;
  plan->procs = arena_alloc(a, (f->ngroups ? f->ngroups : 1) * sizeof *plan->procs);
  for (uint32_t g = 0; g < f->ngroups; g++) {
    const CmmGroup *gr = &f->groups[g];
    plan->procs[g] = arena_alloc(a, (gr->ndecls ? gr->ndecls : 1) * sizeof **plan->procs);
    for (uint32_t i = 0; i < gr->ndecls; i++) {
      if (gr->decls[i].kind != CMM_DECL_PROC) continue;
      const CmmProc *p = &gr->decls[i].u.proc;
      plan->procs[g][i].continuation = p->label[0] == '_' && p->label[1] == 'c';
      plan->procs[g][i].binding = binding_of(p, trees[g], i);
    }
  }
  rename_definitions(plan, a);
  return plan;
}

const TkProc *tk_proc(const TkPlan *plan, uint32_t group, uint32_t decl) {
  cmm_assert(group < plan->file->ngroups && decl < plan->file->groups[group].ndecls);
  return &plan->procs[group][decl];
}

/* ---- where the intrinsics go ----------------------------------------------------- */

static bool is_sp(const CmmExpr *e) {
  return e->kind == CMM_E_GLOBAL && e->u.global.reg == CMM_REG_SP;
}

/* e is Sp plus a constant, *by: `Sp`, `Sp + n`, `Sp - n`, or `(Sp + n)` (a CmmRegOff,
 * as GHC prints `Sp + n` where it holds one, and as strobe's plugin prints it). */
static bool sp_plus(const CmmExpr *e, int64_t *by) {
  if (!e) return false;
  if (is_sp(e)) return *by = 0, true;
  if (e->kind == CMM_E_REGOFF && is_sp(e->u.regoff.reg)) return *by = e->u.regoff.offset, true;
  if (e->kind != CMM_E_MACHOP || (e->u.mo.op != CMM_MO_ADD && e->u.mo.op != CMM_MO_SUB))
    return false;
  const CmmExpr *x = e->u.mo.args[0], *n = e->u.mo.args[1];
  if (!is_sp(x) || n->kind != CMM_E_INT) return false;
  int64_t v = n->u.i.neg ? -(int64_t)n->u.i.mag : (int64_t)n->u.i.mag;
  *by = e->u.mo.op == CMM_MO_ADD ? v : -v;
  return true;
}

/* Sp moves up, or anywhere it is not known to: what returned below it is done.  A
 * push (`Sp = Sp - n`, `Sp = Sp + -n`) pops nothing. */
bool tk_pops(const CmmStmt *s) {
  int64_t by;
  return s->kind == CMM_S_ASSIGN && is_sp(s->u.assign.lhs) &&
         !(sp_plus(s->u.assign.rhs, &by) && by <= 0);
}

/* A return: a jump to the continuation at Sp (`call (P64[Sp])(R1) args: 8, res: 0`).
 * What returns to it, or to one deeper, has finished: the code's own entries go with
 * it (ret), also where the continuation is not instrumented code, whose entry would
 * pop them (an update frame, base's code): code that ran there next might push its
 * frames on their watermarks, which would then look live. */
bool tk_returns(const CmmStmt *s) {
  int64_t by;
  if (s->kind != CMM_S_CALL || s->u.call.returns || s->u.call.res != 0) return false;
  const CmmExpr *t = s->u.call.target;
  return t->kind == CMM_E_LOAD && sp_plus(t->u.load.addr, &by) && by == 0;
}

/* Note [A tick's watermark]
   ~~~~~~~~~~~~~~~~~~~~~~~~~~~
   A tick's entry must stay while the code it counts for may still run, and go when
   that code has finished: when the continuation it returns to is entered, or unwound
   past (Note [Watermarks] in strobe/dynstack.h).  So its watermark is the address of
   that continuation, not the Sp at the tick: GHC's code pops its own temporaries, and
   sometimes its arguments, before a tail call (`Sp = Sp + 16; call stg_ap_pp_fast` into
   `error`), which leaves Sp above the Sp of the tick while the frame that code returns
   to is still there.  The Cmm says where that frame is, in bytes from the proc's entry
   Sp (GHC.Cmm.LayoutStack's Old area):
     - the Old area, the incoming arguments and the return address, is arg_space bytes
       from the entry Sp up: the symbolic dump prints it; in a raw dump, every jump
       (a call that returns to nothing, `res: 0`) passes its arguments in the Old
       area, which ends `args` bytes above its Sp;
     - a call's `upd: U` says the frame its code returns to (an update frame, or else
       the return address) is U bytes below the Old area's end: at entry + arg_space - U;
     - `unwind Sp = Just Sp + k` says the entry Sp is k bytes above Sp.
   A tick's code returns where the calls it leads to return: the block's call, or the
   first call found through its gotos and branches.  Where a proc says none of it, the
   tick's watermark is Sp, as before. */

void tk_track_sp(const CmmStmt *s, int64_t *k) {
  int64_t by;
  if (s->kind == CMM_S_UNWIND) {
    for (uint32_t i = 0; i < s->u.unwind.n; i++)
      if (s->u.unwind.regs[i].reg == CMM_REG_SP)
        *k = sp_plus(s->u.unwind.regs[i].expr, &by) ? by : TK_UNKNOWN;
    return;
  }
  if (s->kind != CMM_S_ASSIGN || !is_sp(s->u.assign.lhs) || *k == TK_UNKNOWN) return;
  *k = sp_plus(s->u.assign.rhs, &by) ? *k - by : TK_UNKNOWN; /* Sp = Sp + by: nearer */
}

/* The blocks a terminator may go to next in its proc (at most 2 but for a switch). */
static uint32_t successors(const CmmStmt *s, uint32_t *out, uint32_t max) {
  uint32_t n = 0;
  switch (s->kind) {
  case CMM_S_GOTO: out[n++] = s->u.goto_.target.index; break;
  case CMM_S_IF:
    out[n++] = s->u.if_.then_.index;
    out[n++] = s->u.if_.else_.index;
    break;
  case CMM_S_SWITCH:
    for (uint32_t i = 0; i < s->u.sw.ncases && n < max; i++) out[n++] = s->u.sw.cases[i].target.index;
    if (s->u.sw.has_default && n < max) out[n++] = s->u.sw.default_.index;
    break;
  default: break;
  }
  return n;
}

/* A call that returns to nothing: a tail call, or a return.  The -fllvm pipeline's
 * procs split at proc points print no `returns to` for the calls that do return, but
 * those say `res:` of at least the return address's 8 bytes. */
static bool is_jump(const CmmStmt *s) { return !s->u.call.returns && s->u.call.res == 0; }

TkFrames tk_frames(const CmmProc *p, Arena *a) {
  /* GHC's -fllvm pipeline prints 0 for the procs it split at proc points: not a size */
  TkFrames f = {.arg_space = p->has_arg_space && p->arg_space > 0 ? p->arg_space : TK_UNKNOWN};
  f.upd = arena_alloc(a, (p->nblocks ? p->nblocks : 1) * sizeof *f.upd);
  for (uint32_t b = 0; b < p->nblocks; b++) {
    const CmmBlock *blk = &p->blocks[b];
    int64_t k = TK_UNKNOWN;
    f.upd[b] = TK_UNKNOWN;
    for (uint32_t i = 0; i < blk->nstmts; i++) {
      const CmmStmt *s = &blk->stmts[i];
      if (s->kind == CMM_S_CALL) {
        f.upd[b] = s->u.call.upd;
        if (is_jump(s) && k != TK_UNKNOWN && f.arg_space == TK_UNKNOWN)
          f.arg_space = s->u.call.args - k;
      }
      tk_track_sp(s, &k);
    }
  }
  /* a block that ends in a goto, branch or switch returns where its successors do */
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = 0; b < p->nblocks; b++) {
      const CmmBlock *blk = &p->blocks[b];
      if (f.upd[b] != TK_UNKNOWN || blk->nstmts == 0) continue;
      uint32_t next[8];
      uint32_t n = successors(&blk->stmts[blk->nstmts - 1], next, 8);
      for (uint32_t i = 0; i < n && f.upd[b] == TK_UNKNOWN; i++)
        if (next[i] < p->nblocks && f.upd[next[i]] != TK_UNKNOWN) f.upd[b] = f.upd[next[i]];
      changed |= f.upd[b] != TK_UNKNOWN;
    }
  }
  return f;
}

int64_t tk_wm_offset(const TkFrames *f, uint32_t b, int64_t k) {
  if (k == TK_UNKNOWN || f->arg_space == TK_UNKNOWN || f->upd[b] == TK_UNKNOWN) return 0;
  return k + f->arg_space - f->upd[b];
}

/* A continuation is entered by a return: what was pushed at its depth is done. */
bool tk_ret_on_entry(uint32_t pp, bool continuation) { return pp != 0 || continuation; }

/* Note [Which notes tick]: with --ticks=all every source note of a function ticks, so
 * the dynamic stack knows the innermost expression each activation is at, and a report
 * groups a function's nested entries into one frame (Note [One frame per activation] in
 * rts/report.c).  With --ticks=functions only the entries a call chain needs tick: in
 * each LLVM function (one per proc point) its own note, and the definitions of local
 * bindings:
 *   - a function's own note is the note GHC shows for the scope of its first block
 *     (ScopeNode.first: the first note of the main file, which for a binding's entry
 *     is the binding's whole span), wherever in that function it stands (the entry
 *     block often only checks the stack and heap; the note is in the block after);
 *     where that scope has no note at all (a binding whose entry allocates what its
 *     body shares, a HasCallStack dictionary), the first note its code ticks;
 *   - so a binding's entry ticks its own note: one entry per activation;
 *   - a thunk's entry ticks its scope's note (it counts for the binding it belongs to,
 *     tk_plan): the expression being forced;
 *   - a return point (a proc point but the entry) ticks, after its ret (which does not
 *     depend on the mode: it still trims what the callee left), the entry of the
 *     function it is in: of the binding's note and the local definitions of its proc,
 *     the innermost around the note of its scope.  That is the caller's entry again if
 *     a pop of the call took it, and otherwise the entry at the top already, the fast
 *     path's repeat (a nested note there would take turns with the entry, on the slow
 *     path, at every iteration of a loop that calls out).  A scope with no note of its
 *     own inherits its parent's, which its code rarely ticks: such a return point then
 *     ticks nothing but local definitions;
 *   - the whole definition of a binding that GHC compiled into other code, not as a
 *     function of its own, is that binding's entry: a local binding's (Note [A local
 *     binding's own note]: a `where` loop that the parent's code and the loop's back
 *     edges go to, a join point), or a top-level binding's that GHC inlined (its note
 *     starts at column 1).  Except in the body of a loop, where it is not the loop's
 *     header: there its code counts for the loop's entry, as a nested note would (a
 *     helper inlined into a loop would otherwise take turns with the loop's entry at
 *     one watermark, on the slow path, at every iteration).
 * Nested expression notes do not tick, so a caller shows its binding's span, not the
 * line it called from: the price of the cheaper mode.  The DWARF lines are the same in
 * both modes. */
static bool same_span(const CmmSrcNote *a, const CmmSrcNote *b) {
  return strcmp(a->file, b->file) == 0 && a->line1 == b->line1 && a->col1 == b->col1 &&
         a->line2 == b->line2 && a->col2 == b->col2;
}

/* A binding's whole definition: a local one's (Note [A local binding's own note]), or a
 * top-level one's, which starts at column 1 (GHC inlined it where it is not in the
 * binding's own code). */
static bool is_definition(const TkPlan *plan, const CmmSrcNote *note) {
  return (note->name && note->col1 == 1) || tk_is_definition(plan, note);
}

bool tk_ticks(const TkFnTicks *w, uint32_t b, const CmmSrcNote *note) {
  if (w->mode == TK_ALL) return true;
  return (w->own && same_span(w->own, note)) ||
         (w->definitions && w->definitions[b] && is_definition(w->plan, note));
}

/* The blocks that control goes to after a block, in *next (arena memory): where its
 * terminator goes, and where a call returns to. */
static uint32_t successors_of(const CmmBlock *blk, uint32_t **next, Arena *a) {
  if (!blk->nstmts) return 0;
  const CmmStmt *last = &blk->stmts[blk->nstmts - 1];
  uint32_t n = last->kind == CMM_S_SWITCH ? last->u.sw.ncases + 1 : 2;
  *next = arena_alloc(a, n * sizeof **next);
  if (last->kind == CMM_S_CALL && last->u.call.returns) {
    (*next)[0] = last->u.call.returns_to.index;
    return 1;
  }
  return successors(last, *next, n);
}

bool *tk_definition_blocks(const CmmProc *p, Arena *a) {
  uint32_t n = p->nblocks ? p->nblocks : 1;
  uint8_t *preds = arena_alloc(a, n * sizeof *preds);
  bool *out = arena_alloc(a, n * sizeof *out), *seen = arena_alloc(a, n * sizeof *seen);
  uint32_t **next = arena_alloc(a, n * sizeof *next), *nnext = arena_alloc(a, n * sizeof *nnext);
  uint32_t *stack = arena_alloc(a, n * sizeof *stack);
  for (uint32_t b = 0; b < p->nblocks; b++) {
    nnext[b] = successors_of(&p->blocks[b], &next[b], a);
    for (uint32_t i = 0; i < nnext[b]; i++)
      if (next[b][i] < p->nblocks && preds[next[b][i]] < 2) preds[next[b][i]]++;
  }
  for (uint32_t b = 0; b < p->nblocks; b++) {
    if (preds[b] >= 2) { /* a loop's header, a join point */
      out[b] = true;
      continue;
    }
    /* else: whether b is on no loop, that is, does not reach itself */
    memset(seen, 0, n * sizeof *seen);
    uint32_t depth = 0;
    bool loops = false;
    stack[depth++] = b;
    while (depth && !loops) {
      uint32_t c = stack[--depth];
      for (uint32_t i = 0; i < nnext[c] && !loops; i++) {
        uint32_t s = next[c][i];
        if (s >= p->nblocks || seen[s]) continue;
        loops = s == b;
        seen[s] = true;
        stack[depth++] = s;
      }
    }
    out[b] = !loops;
  }
  return out;
}

/* The first note that the function's code ticks, in the order control reaches its
 * blocks from pp. */
static const CmmSrcNote *first_ticked(const CmmProc *p, uint32_t pp, const bool *proc_point,
                                      Arena *a) {
  uint32_t *queue = arena_alloc(a, p->nblocks * sizeof *queue), head = 0, tail = 0;
  bool *queued = arena_alloc(a, p->nblocks * sizeof *queued);
  queue[tail++] = pp;
  queued[pp] = true;
  while (head < tail) {
    const CmmBlock *blk = &p->blocks[queue[head++]];
    for (uint32_t i = 0; i < blk->nstmts; i++)
      if (blk->stmts[i].kind == CMM_S_TICK) return &blk->stmts[i].u.tick;
    uint32_t *next, n = successors_of(blk, &next, a); /* a return point is a proc point */
    for (uint32_t j = 0; j < n; j++)
      if (next[j] < p->nblocks && !proc_point[next[j]] && !queued[next[j]]) {
        queued[next[j]] = true;
        queue[tail++] = next[j];
      }
  }
  return NULL;
}

const CmmSrcNote *tk_own_note(const TkPlan *plan, const CmmProc *p, const ScopeTree *tree,
                              uint32_t decl, uint32_t pp, const bool *proc_point, Arena *a) {
  if (pp >= p->nblocks) return NULL;
  const ScopeNode *entry = scopes_block_node(tree, decl, pp);
  if (pp == 0) return entry && entry->first ? entry->first : first_ticked(p, pp, proc_point, a);
  if (!entry || !entry->first || entry->best_inherited) return entry ? entry->first : NULL;
  /* a return point: the innermost entry of a function around its scope's note */
  const CmmSrcNote *own = entry->first, *best = tk_own_note(plan, p, tree, decl, 0, proc_point, a);
  if (best && (strcmp(best->file, own->file) != 0 ||
               !strobe_span_encloses(STROBE_SPAN_OF(best), STROBE_SPAN_OF(own))))
    best = NULL;
  for (uint32_t b = 0; b < p->nblocks; b++)
    for (uint32_t i = 0; i < p->blocks[b].nstmts; i++) {
      const CmmStmt *s = &p->blocks[b].stmts[i];
      if (s->kind != CMM_S_TICK || !tk_is_definition(plan, &s->u.tick)) continue;
      const CmmSrcNote *d = &s->u.tick;
      if (strcmp(d->file, own->file) == 0 &&
          strobe_span_encloses(STROBE_SPAN_OF(d), STROBE_SPAN_OF(own)) &&
          (!best || strobe_span_encloses(STROBE_SPAN_OF(best), STROBE_SPAN_OF(d))))
        best = d;
    }
  return best ? best : own;
}

bool tk_mode_parse(const char *s, TkMode *mode) {
  if (strcmp(s, "all") == 0) *mode = TK_ALL;
  else if (strcmp(s, "functions") == 0) *mode = TK_FUNCTIONS;
  else return false;
  return true;
}

/* ---- ticks a loop repeats -------------------------------------------------------- */

/* Note [A tick its loop repeats]
   ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
   A loop GHC compiled to a goto ticks its header's note at every iteration: in a tight
   loop (`go !acc i = go (acc + i) (i + 1)`), the tick's fast path, the entry repeated
   at the top (rule 2a), can cost as much as the loop's own work.  Where nothing on the
   way back acts on the dynamic stack (no other tick, no pop, no call: calls end the
   function; no safe foreign call, around which other threads run) and Sp has not
   moved, the top is still that tick at the same watermark, so ticking it again would
   only count a repeat.  Such a back edge skips the tick: the header's block is split
   after it, and the edge goes to the second half.  The loop's frame is then the same,
   and its `(×N)` counts the times the loop was entered, not its iterations.

   The top after each block is a forward dataflow over the function's blocks: a tick
   sets it, anything else that acts on the stack (or moves Sp, which the watermarks are
   offsets from) makes it unknown, and where paths meet it is known only if they agree.
   Only a tick that is the first thing its block does may be skipped, and never the
   function's first block's (a return point starts with a ret). */

static const TkTop no_top = {0};

/* A safe foreign call's halves, around which the runtime may run other Haskell threads
 * and this one may be woken on another OS thread (the runtime's wrapped resumeThread
 * switches stacks): GHC 9.0 calls suspendThread and resumeThread, 9.6 says
 * MO_SuspendThread and MO_ResumeThread.  Any other C call is an unsafe one, which runs
 * no Haskell code. */
static bool switches_threads(const CmmStmt *s) {
  if (s->kind == CMM_S_PRIMCALL)
    return s->u.prim.op == CMM_PRIM_SUSPEND_THREAD || s->u.prim.op == CMM_PRIM_RESUME_THREAD;
  const CmmExpr *t = s->u.ccall.target;
  return t->kind == CMM_E_LABEL && (strcmp(t->u.label.name, "suspendThread") == 0 ||
                                    strcmp(t->u.label.name, "resumeThread") == 0);
}

static bool same_top(TkTop x, TkTop y) { return x.tick == y.tick && (!x.tick || x.wm == y.wm); }

/* The top after block b of the function, given the top before it; *first is b's first
 * tick if nothing before it in the block does anything. */
static TkTop through(const CmmProc *p, const TkFrames *f, uint32_t b, const TkFnTicks *w,
                     TkTop top, TkTop *first) {
  const CmmBlock *blk = &p->blocks[b];
  int64_t k = TK_UNKNOWN;
  bool quiet = true; /* nothing done yet in the block */
  *first = no_top;
  for (uint32_t i = 0; i < blk->nstmts; i++) {
    const CmmStmt *s = &blk->stmts[i];
    tk_track_sp(s, &k);
    switch (s->kind) {
    case CMM_S_UNWIND:
    case CMM_S_COMMENT: break;
    case CMM_S_TICK:
      if (!tk_ticks(w, b, &s->u.tick)) break;
      top = (TkTop){s, tk_wm_offset(f, b, k)};
      if (quiet) *first = top;
      quiet = false;
      break;
    case CMM_S_ASSIGN:
      if (is_sp(s->u.assign.lhs)) top = no_top;
      quiet = false;
      break;
    case CMM_S_CCALL:
    case CMM_S_PRIMCALL:
      if (switches_threads(s)) top = no_top;
      quiet = false;
      break;
    default: quiet = false; break;
    }
  }
  return top;
}

TkRepeats tk_repeats(const CmmProc *p, const TkFrames *f, uint32_t pp, const bool *proc_point,
                     const TkFnTicks *w, Arena *a) {
  uint32_t n = p->nblocks ? p->nblocks : 1;
  TkRepeats r = {arena_alloc(a, n * sizeof *r.out), arena_alloc(a, n * sizeof *r.first)};
  TkTop *in = arena_alloc(a, n * sizeof *in);
  bool *seen = arena_alloc(a, n * sizeof *seen); /* in[b] holds what some path brings */
  for (uint32_t b = 0; b < p->nblocks; b++) {
    r.out[b] = r.first[b] = in[b] = no_top;
    seen[b] = false;
  }
  if (pp >= p->nblocks) return r;
  seen[pp] = true; /* entered from outside: the top is not known */
  uint32_t max = 2; /* every successor counts: one missed would make a top look known */
  for (uint32_t b = 0; b < p->nblocks; b++) {
    const CmmBlock *blk = &p->blocks[b];
    const CmmStmt *last = blk->nstmts ? &blk->stmts[blk->nstmts - 1] : NULL;
    if (last && last->kind == CMM_S_SWITCH && last->u.sw.ncases + 1 > max) max = last->u.sw.ncases + 1;
  }
  uint32_t *next = arena_alloc(a, max * sizeof *next);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t b = 0; b < p->nblocks; b++) {
      if (!seen[b] || p->blocks[b].nstmts == 0) continue;
      TkTop out = through(p, f, b, w, in[b], &r.first[b]);
      r.out[b] = out;
      uint32_t m = successors(&p->blocks[b].stmts[p->blocks[b].nstmts - 1], next, max);
      for (uint32_t i = 0; i < m; i++) {
        uint32_t s = next[i];
        if (s >= p->nblocks || (proc_point[s] && s != pp)) continue; /* another function */
        TkTop met = !seen[s] ? out : same_top(in[s], out) ? out : no_top;
        if (!seen[s] || !same_top(in[s], met)) {
          in[s] = met;
          seen[s] = changed = true;
        }
      }
    }
  }
  /* a block is split after its first tick only where an edge skips it */
  r.first[pp] = no_top;
  bool *skipped = seen; /* reused: what follows reads no in[] */
  for (uint32_t b = 0; b < p->nblocks; b++) skipped[b] = false;
  for (uint32_t b = 0; b < p->nblocks; b++) {
    if (!p->blocks[b].nstmts) continue;
    uint32_t m = successors(&p->blocks[b].stmts[p->blocks[b].nstmts - 1], next, max);
    for (uint32_t i = 0; i < m; i++)
      if (next[i] < p->nblocks && tk_repeated(&r, b, next[i])) skipped[next[i]] = true;
  }
  for (uint32_t b = 0; b < p->nblocks; b++)
    if (!skipped[b]) r.first[b] = no_top;
  return r;
}

bool tk_repeated(const TkRepeats *r, uint32_t from, uint32_t to) {
  return r->first[to].tick && same_top(r->out[from], r->first[to]);
}

/* ---- the descriptors ------------------------------------------------------------- */

struct Ticks {
  Arena *a;
  StrMap strings; /* one copy of each function name and file -> index into string */
  VEC(const char *) string;
  StrMap descs;   /* "owner|function|file|l1:c1-l2:c2" -> index */
  VEC(TkDesc) desc;
};

Ticks *tk_new(void) {
  Ticks *t = calloc(1, sizeof *t);
  if (!t) internal_error("out of memory");
  t->a = arena_new();
  strmap_init(&t->strings, t->a, 64);
  strmap_init(&t->descs, t->a, 256);
  return t;
}

void tk_free(Ticks *t) {
  if (!t) return;
  arena_free(t->a);
  free(t);
}

static const char *intern(Ticks *t, const char *s) {
  uint32_t i;
  if (strmap_get(&t->strings, s, &i)) return t->string.v[i];
  const char *copy = arena_strndup(t->a, s, strlen(s));
  strmap_put(&t->strings, t->a, copy, t->string.n, NULL);
  vec_push(t->a, &t->string, copy);
  return copy;
}

uint32_t tk_desc(Ticks *t, const char *owner, const char *function, const CmmSrcNote *n,
                 bool *made) {
  const char *key = arena_printf(t->a, "%s|%s|%s|%u:%u-%u:%u", owner, function, n->file,
                                 n->line1, n->col1, n->line2, n->col2);
  uint32_t i;
  *made = !strmap_get(&t->descs, key, &i);
  if (!*made) return i;
  TkDesc d = {.owner = intern(t, owner), .function = intern(t, function), .file = intern(t, n->file),
              .span = STROBE_SPAN_OF(n), .parent = TK_NO_PARENT, .nested = true};
  strmap_put(&t->descs, t->a, key, t->desc.n, NULL);
  vec_push(t->a, &t->desc, d);
  return t->desc.n - 1;
}

uint32_t tk_count(const Ticks *t) { return t->desc.n; }

const TkDesc *tk_get(const Ticks *t, uint32_t i) {
  cmm_assert(i < t->desc.n);
  return &t->desc.v[i];
}

static bool same_text(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* e's span strictly contains d's, in the same function and file. */
static bool is_enclosing(const TkDesc *e, const TkDesc *d) {
  return same_text(e->function, d->function) && same_text(e->file, d->file) &&
         strobe_span_encloses(e->span, d->span);
}

/* Whether candidate j is a better parent for d than its current one, p: a smaller span,
 * or the same span in d's own code (another owner's copy of a note is the same
 * expression to the runtime, but the inline tick compares descriptors). */
static bool better_parent(const TkDesc *v, const TkDesc *d, uint32_t p, uint32_t j) {
  if (p == TK_NO_PARENT || strobe_span_encloses(v[p].span, v[j].span)) return true;
  return strobe_span_equal(v[p].span, v[j].span) && !same_text(v[p].owner, d->owner) &&
         same_text(v[j].owner, d->owner);
}

void tk_link_descs(TkDesc *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    TkDesc *d = &v[i];
    d->parent = TK_NO_PARENT;
    for (uint32_t j = 0; j < n; j++)
      if (is_enclosing(&v[j], d) && better_parent(v, d, d->parent, j)) d->parent = j;
  }
  /* nested: every enclosing descriptor is on the chain, or another owner's copy of one
   * on it (the inline tick would take it for a sibling and pop it, where the runtime
   * would push on it: the same frame either way) */
  for (uint32_t i = 0; i < n; i++) {
    TkDesc *d = &v[i];
    bool nested = true;
    for (uint32_t j = 0; j < n && nested; j++) {
      if (!is_enclosing(&v[j], d)) continue;
      uint32_t p = d->parent;
      while (p != TK_NO_PARENT && p != j && !strobe_span_equal(v[p].span, v[j].span)) p = v[p].parent;
      nested = p != TK_NO_PARENT;
    }
    d->nested = nested;
  }
}

void tk_link(Ticks *t) { tk_link_descs(t->desc.v, t->desc.n); }
