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
 * each LLVM function (one per proc point) the note GHC shows for the scope of its first
 * block (ScopeNode.first: the first note of the main file, which for a binding's entry
 * is the binding's whole span), wherever in that function it stands (the entry block
 * often only checks the stack and heap; the note is in the block after).  So:
 *   - a binding's entry ticks its own note: one entry per activation;
 *   - a thunk's entry ticks its scope's note (it counts for the binding it belongs to,
 *     tk_plan): the expression being forced;
 *   - a return point (a proc point but the entry, or a -fllvm continuation) ticks the
 *     note of its scope, after its ret (which does not depend on the mode: it still
 *     trims what the callee left): the caller's entry again if a pop of the call took it,
 *     and where the caller is when it goes on;
 *   - an entry scope with no note of its own inherits its parent's first note, which
 *     its code rarely ticks: such a function then ticks nothing.
 * Nested expression notes do not tick, so a caller shows its binding's span, not the
 * line it called from: the price of the cheaper mode.  The DWARF lines are the same in
 * both modes. */
bool tk_ticks(TkMode mode, const ScopeNode *entry, const CmmSrcNote *note) {
  if (mode == TK_ALL) return true;
  const CmmSrcNote *own = entry ? entry->first : NULL;
  return own && strcmp(own->file, note->file) == 0 && own->line1 == note->line1 &&
         own->col1 == note->col1 && own->line2 == note->line2 && own->col2 == note->col2;
}

bool tk_mode_parse(const char *s, TkMode *mode) {
  if (strcmp(s, "all") == 0) *mode = TK_ALL;
  else if (strcmp(s, "functions") == 0) *mode = TK_FUNCTIONS;
  else return false;
  return true;
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
  TkDesc d = {.function = intern(t, function), .file = intern(t, n->file),
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

static bool same_text(const char *a, const char *b) { return a == b || strcmp(a, b) == 0; }

/* e's span strictly contains d's, in the same function and file. */
static bool is_enclosing(const TkDesc *e, const TkDesc *d) {
  return same_text(e->function, d->function) && same_text(e->file, d->file) &&
         strobe_span_encloses(e->span, d->span);
}

void tk_link_descs(TkDesc *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    TkDesc *d = &v[i];
    d->parent = TK_NO_PARENT;
    for (uint32_t j = 0; j < n; j++)
      if (is_enclosing(&v[j], d) &&
          (d->parent == TK_NO_PARENT || strobe_span_encloses(v[d->parent].span, v[j].span)))
        d->parent = j;
  }
  for (uint32_t i = 0; i < n; i++) {
    TkDesc *d = &v[i];
    bool nested = true;
    for (uint32_t j = 0; j < n && nested; j++) {
      if (!is_enclosing(&v[j], d)) continue;
      uint32_t p = d->parent;
      while (p != TK_NO_PARENT && p != j) p = v[p].parent;
      nested = p == j;
    }
    d->nested = nested;
  }
}

void tk_link(Ticks *t) { tk_link_descs(t->desc.v, t->desc.n); }
