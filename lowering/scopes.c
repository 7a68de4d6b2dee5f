/* scopes.c — tick-scope analysis (docs/design.md, "Tick scopes and source notes", after
 * GHC.Cmm.DebugBlock).
 *
 * The approach, per group (one dump section):
 *
 *  1. Every block names its scope.  Scopes are keyed by their canonical text, GHC's own
 *     spelling: "global", a path "a/b/c" (root first), or a combined scope "(p+q)".  A walk
 *     over the procs in group order and their blocks in order makes one node per scope, in
 *     order of first appearance, and gives it its blocks and its own source notes
 *     (duplicates — same file and span — dropped).
 *  2. The scope graph becomes a tree rooted at `global`.  The parent of "a/b/c" is the
 *     nearest proper prefix ("a/b", then "a") that owns blocks in the group, else the
 *     root: intermediate scopes often own no blocks.  A combined scope "(p+q)" hangs under
 *     p itself or p's nearest prefix that owns blocks (GHC follows the first path), and
 *     the notes of q and of q's prefixes that are not prefixes of p are copied into it,
 *     after its own, so that they still cover it.
 *  3. Each node's best note: among its notes (own and copied) from the main file if any
 *     are, else among all, the first one that contains no other (the most specific span;
 *     GHC takes the first note of the main file, strobe prefers specificity).  Spans in
 *     different files are never compared.  A node without notes inherits its parent's.
 *
 * Everything is hash lookups on scope texts: the work is linear in blocks and notes,
 * plus a sort of each node's notes and a walk up each new scope's prefixes.
 *
 * The --emit=scopes text (scopes_print), one group after another:
 *
 *   group 1: sat_s1Jv_entry sat_s1Jw_entry fact_rgr_entry
 *     global
 *       c1JR  best: src<fib_ack.hs:(14,1)-(15,25)>
 *         blocks: fact_rgr_entry: c1Km c1Ko c1Kq c1Kn c1Kp c1JV
 *         ticks: src<fib_ack.hs:(14,1)-(15,25)>
 *         c1JR/c1Kv  best: src<fib_ack.hs:14:10>
 *           …
 *       (a/b+c/d)  best: src<F.hs:3:5> (inherited)
 *         blocks: f_entry: c7
 *         copied from c/d: src<F.hs:3:5>
 *
 *  - `group N`: N counts the file's dump sections from 1; then the group's procs in order.
 *    A group without procs prints `group N: (no code)` and nothing else.
 *  - One line per node, indented two spaces per tree level below the group line: the
 *    scope text, then `  best: <note>` if a note covers it, ` (inherited)` if that note is
 *    an ancestor's.  Children follow their parent, in order of first appearance.
 *  - Under a node, indented two more: `blocks: <proc>: <block>…`, one line per proc the
 *    node has blocks in; `ticks: <note>…`, its own notes; `copied from <scope>: <note>…`,
 *    one line per scope whose notes a combined scope copied.  Empty lines are left out.
 */
#include "scopes.h"

#include "span.h"

#include <stdlib.h>
#include <string.h>

/* ---- scope texts ------------------------------------------------------------------ */

/* A NUL-terminated string in a malloc'd buffer, reused as scratch space. */
typedef struct Buf {
  char *p;
  size_t n, cap;
} Buf;

static void buf_put(Buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1) cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p) internal_error("out of memory");
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void buf_str(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

/* The first k components of a path, joined by '/'. */
static void buf_path(Buf *b, const CmmScopePath *p, uint32_t k) {
  for (uint32_t i = 0; i < k; i++) {
    if (i) buf_put(b, "/", 1);
    buf_str(b, p->comps[i]);
  }
}

/* The scope's canonical text into b (replacing what was there), as GHC prints it. */
static const char *scope_text(Buf *b, const CmmScope *s) {
  b->n = 0;
  buf_put(b, "", 0);
  if (s->npaths == 0) {
    buf_str(b, "global");
  } else if (s->npaths == 1) {
    buf_path(b, &s->paths[0], s->paths[0].n);
  } else {
    buf_put(b, "(", 1);
    for (uint32_t i = 0; i < s->npaths; i++) {
      if (i) buf_put(b, "+", 1);
      buf_path(b, &s->paths[i], s->paths[i].n);
    }
    buf_put(b, ")", 1);
  }
  return b->p;
}

/* ---- building the tree ------------------------------------------------------------ */

/* A node while the tree is built: the public part and the vectors that grow. */
typedef struct NodeBuild {
  ScopeNode node;
  VEC(ScopeBlock) blocks;
  VEC(ScopeTick) ticks;
} NodeBuild;

typedef struct Builder {
  Arena *a;
  ScopeTree *t;
  VEC(NodeBuild *) nodes;
  StrMap seen;  /* "node|l1,c1,l2,c2|file" of every tick kept: drops duplicates */
  Buf key;
} Builder;

static uint32_t new_node(Builder *b, const char *text, const CmmScope *scope) {
  NodeBuild *nb = arena_alloc(b->a, sizeof *nb);
  uint32_t index = b->nodes.n;
  nb->node.index = index;
  nb->node.text = arena_strndup(b->a, text, strlen(text));
  nb->node.scope = scope;
  vec_push(b->a, &b->nodes, nb);
  strmap_put(&b->t->by_text, b->a, nb->node.text, index, NULL);
  return index;
}

/* Adds a note to a node unless the node already has one with the same file and span. */
static void add_tick(Builder *b, NodeBuild *nb, const CmmSrcNote *note, const ScopeNode *from) {
  char head[80];
  int len = snprintf(head, sizeof head, "%u|%u,%u,%u,%u|", nb->node.index, note->line1,
                     note->col1, note->line2, note->col2);
  b->key.n = 0;
  buf_put(&b->key, head, (size_t)len);
  buf_str(&b->key, note->file);
  if (strmap_get(&b->seen, b->key.p, NULL)) return;
  strmap_put(&b->seen, b->a, arena_strndup(b->a, b->key.p, b->key.n), 1, NULL);
  vec_push(b->a, &nb->ticks, ((ScopeTick){note, from}));
}

/* The node of the first k components of p, if that scope owns blocks. */
static NodeBuild *prefix_node(Builder *b, const CmmScopePath *p, uint32_t k, Buf *scratch) {
  scratch->n = 0;
  buf_put(scratch, "", 0);
  buf_path(scratch, p, k);
  uint32_t i;
  return strmap_get(&b->t->by_text, scratch->p, &i) ? b->nodes.v[i] : NULL;
}

/* Step 2: the parent of a node, and for a combined scope the notes of its other paths. */
static void link_node(Builder *b, NodeBuild *nb, Buf *scratch) {
  const CmmScope *s = nb->node.scope;
  NodeBuild *parent = NULL;
  if (s->npaths >= 1) {
    const CmmScopePath *p = &s->paths[0];
    /* A path's parent is a proper prefix; a combined scope's may be its first path. */
    uint32_t k = s->npaths > 1 ? p->n : p->n ? p->n - 1 : 0;
    for (; k > 0 && !parent; k--) parent = prefix_node(b, p, k, scratch);
  }
  nb->node.parent = parent ? &parent->node : &b->nodes.v[0]->node;

  for (uint32_t j = 1; j < s->npaths; j++) {
    const CmmScopePath *p = &s->paths[0], *q = &s->paths[j];
    uint32_t common = 0; /* q's prefixes up to this length are p's prefixes too */
    while (common < p->n && common < q->n && strcmp(p->comps[common], q->comps[common]) == 0)
      common++;
    for (uint32_t k = q->n; k > common; k--) {
      NodeBuild *from = prefix_node(b, q, k, scratch);
      if (!from) continue;
      for (uint32_t i = 0; i < from->node.nown; i++)
        add_tick(b, nb, from->ticks.v[i].note, &from->node);
    }
  }
}

/* ---- best notes ------------------------------------------------------------------- */

/* Positions compare as every part compares them (intrinsics/span.h). */
#define pos_cmp strobe_pos_cmp

typedef struct Cand {
  const CmmSrcNote *note;
  uint32_t order;
} Cand;

/* By file, then start descending, then end ascending: walking this order, every span
 * already seen in the same file starts at or after the current one, and a span seen with
 * the same start ends before it. */
static int cand_cmp(const void *pa, const void *pb) {
  const CmmSrcNote *a = ((const Cand *)pa)->note, *b = ((const Cand *)pb)->note;
  int c = strcmp(a->file, b->file);
  if (c) return c;
  c = pos_cmp(b->line1, b->col1, a->line1, a->col1);
  if (c) return c;
  return pos_cmp(a->line2, a->col2, b->line2, b->col2);
}

/* The first note (in order) among the preferred ones whose span strictly contains no
 * other preferred note's span.  Notes have distinct (file, span) pairs. */
static const CmmSrcNote *best_note(const ScopeTick *ticks, uint32_t n, const char *main_file,
                                   Arena *a) {
  if (n == 0) return NULL;
  bool any_main = false;
  for (uint32_t i = 0; i < n && main_file && !any_main; i++)
    any_main = strcmp(ticks[i].note->file, main_file) == 0;

  Cand *cands = arena_alloc(a, n * sizeof *cands);
  uint32_t nc = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!any_main || strcmp(ticks[i].note->file, main_file) == 0)
      cands[nc++] = (Cand){ticks[i].note, i};
  if (nc == 1) return cands[0].note;
  qsort(cands, nc, sizeof *cands, cand_cmp);

  bool *encloses = arena_alloc(a, n * sizeof *encloses); /* by order */
  const CmmSrcNote *min_end = NULL; /* the earliest end seen so far in this file */
  for (uint32_t i = 0; i < nc; i++) {
    const CmmSrcNote *c = cands[i].note;
    if (i > 0 && strcmp(c->file, cands[i - 1].note->file) != 0) min_end = NULL;
    if (min_end && pos_cmp(min_end->line2, min_end->col2, c->line2, c->col2) <= 0)
      encloses[cands[i].order] = true;
    if (!min_end || pos_cmp(c->line2, c->col2, min_end->line2, min_end->col2) < 0)
      min_end = c;
  }
  for (uint32_t i = 0; i < n; i++) /* the first preferred note enclosing nothing */
    if ((!any_main || strcmp(ticks[i].note->file, main_file) == 0) && !encloses[i])
      return ticks[i].note;
  internal_error("no minimal span among %u notes", nc);
}

/* GHC's choice: the first note from the main file, else the first note. */
static const CmmSrcNote *first_note(const ScopeTick *ticks, uint32_t n, const char *main_file) {
  for (uint32_t i = 0; i < n && main_file; i++)
    if (strcmp(ticks[i].note->file, main_file) == 0) return ticks[i].note;
  return n ? ticks[0].note : NULL;
}

/* ---- the API ------------------------------------------------------------------------ */

const char *scopes_main_file(const CmmFile *f, Arena *a) {
  StrMap index = {0};
  VEC(const char *) files = {0}; /* in order of first appearance */
  VEC(uint32_t) counts = {0};
  for (uint32_t gi = 0; gi < f->ngroups; gi++) {
    const CmmGroup *g = &f->groups[gi];
    for (uint32_t d = 0; d < g->ndecls; d++) {
      if (g->decls[d].kind != CMM_DECL_PROC) continue;
      const CmmProc *p = &g->decls[d].u.proc;
      for (uint32_t bi = 0; bi < p->nblocks; bi++)
        for (uint32_t si = 0; si < p->blocks[bi].nstmts; si++) {
          const CmmStmt *st = &p->blocks[bi].stmts[si];
          if (st->kind != CMM_S_TICK) continue;
          uint32_t i;
          if (!strmap_get(&index, st->u.tick.file, &i)) {
            i = files.n;
            vec_push(a, &files, st->u.tick.file);
            vec_push(a, &counts, 0);
            strmap_put(&index, a, st->u.tick.file, i, NULL);
          }
          counts.v[i]++;
        }
    }
  }
  const char *best = NULL;
  uint32_t best_count = 0;
  for (uint32_t i = 0; i < files.n; i++) /* strictly more: ties go to the first seen */
    if (counts.v[i] > best_count) {
      best_count = counts.v[i];
      best = files.v[i];
    }
  return best;
}

ScopeTree *scopes_build(const CmmFile *f, const CmmGroup *g, const char *main_file, Arena *a) {
  ScopeTree *t = arena_alloc(a, sizeof *t);
  t->group = g;
  t->main_file = main_file ? main_file : scopes_main_file(f, a);
  t->block_node = arena_alloc(a, (g->ndecls ? g->ndecls : 1) * sizeof *t->block_node);

  Builder b = {.a = a, .t = t};
  Buf scratch = {0};
  strmap_init(&t->by_text, a, 64);
  strmap_init(&b.seen, a, 64);
  new_node(&b, "global", NULL); /* the root, whether or not blocks name it */

  /* Step 1: nodes, their blocks and their own notes. */
  for (uint32_t d = 0; d < g->ndecls; d++) {
    if (g->decls[d].kind != CMM_DECL_PROC) continue;
    const CmmProc *p = &g->decls[d].u.proc;
    t->block_node[d] = arena_alloc(a, (p->nblocks ? p->nblocks : 1) * sizeof(uint32_t));
    for (uint32_t bi = 0; bi < p->nblocks; bi++) {
      const CmmBlock *blk = &p->blocks[bi];
      const char *text = scope_text(&scratch, &blk->scope);
      uint32_t i;
      if (!strmap_get(&t->by_text, text, &i)) i = new_node(&b, text, &blk->scope);
      NodeBuild *nb = b.nodes.v[i];
      if (!nb->node.scope) nb->node.scope = &blk->scope; /* the root named by a block */
      t->block_node[d][bi] = i;
      vec_push(a, &nb->blocks, ((ScopeBlock){p, blk}));
      for (uint32_t si = 0; si < blk->nstmts; si++)
        if (blk->stmts[si].kind == CMM_S_TICK) add_tick(&b, nb, &blk->stmts[si].u.tick, NULL);
    }
  }
  for (uint32_t i = 0; i < b.nodes.n; i++) b.nodes.v[i]->node.nown = b.nodes.v[i]->ticks.n;

  /* Step 2: parents, and the notes combined scopes copy. */
  for (uint32_t i = 1; i < b.nodes.n; i++) link_node(&b, b.nodes.v[i], &scratch);

  t->nnodes = b.nodes.n;
  t->nodes = arena_alloc(a, t->nnodes * sizeof *t->nodes);
  for (uint32_t i = 0; i < t->nnodes; i++) {
    NodeBuild *nb = b.nodes.v[i];
    t->nodes[i] = &nb->node;
    nb->node.nblocks = nb->blocks.n;
    nb->node.blocks = nb->blocks.v;
    nb->node.nticks = nb->ticks.n;
    nb->node.ticks = nb->ticks.v;
  }
  for (uint32_t i = 1; i < t->nnodes; i++) t->nodes[i]->parent->nchildren++;
  for (uint32_t i = 0; i < t->nnodes; i++) {
    ScopeNode *n = t->nodes[i];
    n->children = arena_alloc(a, (n->nchildren ? n->nchildren : 1) * sizeof *n->children);
    n->nchildren = 0;
  }
  for (uint32_t i = 1; i < t->nnodes; i++) {
    ScopeNode *parent = t->nodes[i]->parent;
    parent->children[parent->nchildren++] = t->nodes[i];
  }

  /* Step 3: best notes, parents before children (breadth first from the root). */
  ScopeNode **queue = arena_alloc(a, t->nnodes * sizeof *queue);
  uint32_t head = 0, tail = 0;
  queue[tail++] = t->nodes[0];
  while (head < tail) {
    ScopeNode *n = queue[head++];
    if (n->parent) n->depth = n->parent->depth + 1;
    n->best = best_note(n->ticks, n->nticks, t->main_file, a);
    if (!n->best && n->parent) {
      n->best = n->parent->best;
      n->best_inherited = n->best != NULL;
    }
    n->first = first_note(n->ticks, n->nticks, t->main_file);
    if (!n->first && n->parent) n->first = n->parent->first;
    for (uint32_t c = 0; c < n->nchildren; c++) queue[tail++] = n->children[c];
  }
  cmm_assert(tail == t->nnodes);

  free(scratch.p);
  free(b.key.p);
  return t;
}

ScopeTree **scopes_build_file(const CmmFile *f, const char *main_file, Arena *a) {
  if (!main_file) main_file = scopes_main_file(f, a);
  ScopeTree **trees = arena_alloc(a, (f->ngroups ? f->ngroups : 1) * sizeof *trees);
  for (uint32_t g = 0; g < f->ngroups; g++) trees[g] = scopes_build(f, &f->groups[g], main_file, a);
  return trees;
}

const ScopeNode *scopes_block_node(const ScopeTree *t, uint32_t decl, uint32_t block) {
  cmm_assert(decl < t->group->ndecls && t->block_node[decl]);
  cmm_assert(block < t->group->decls[decl].u.proc.nblocks);
  return t->nodes[t->block_node[decl][block]];
}

const ScopeNode *scopes_find(const ScopeTree *t, const char *text) {
  uint32_t i;
  return strmap_get(&t->by_text, text, &i) ? t->nodes[i] : NULL;
}

/* ---- --emit=scopes ------------------------------------------------------------------ */

static void indent(FILE *out, uint32_t depth) {
  for (uint32_t i = 0; i < depth; i++) fputs("  ", out);
}

static void print_node(FILE *out, const ScopeNode *n) {
  uint32_t d = n->depth + 1; /* the group line is level 0 */
  indent(out, d);
  if (n->scope) cmm_print_scope(out, n->scope);
  else fputs(n->text, out);
  if (n->best) {
    fputs("  best: ", out);
    cmm_print_srcnote(out, n->best);
    if (n->best_inherited) fputs(" (inherited)", out);
  }
  fputc('\n', out);

  for (uint32_t i = 0; i < n->nblocks; i++) {
    if (i == 0 || n->blocks[i].proc != n->blocks[i - 1].proc) {
      if (i) fputc('\n', out);
      indent(out, d + 1);
      fprintf(out, "blocks: %s:", n->blocks[i].proc->label);
    }
    fprintf(out, " %s", n->blocks[i].block->label);
  }
  if (n->nblocks) fputc('\n', out);

  for (uint32_t i = 0; i < n->nticks; i++) {
    const ScopeTick *tk = &n->ticks[i];
    if (i == 0 || tk->from != n->ticks[i - 1].from) {
      if (i) fputc('\n', out);
      indent(out, d + 1);
      if (tk->from) fprintf(out, "copied from %s:", tk->from->text);
      else fputs("ticks:", out);
    }
    fputc(' ', out);
    cmm_print_srcnote(out, tk->note);
  }
  if (n->nticks) fputc('\n', out);
}

void scopes_print(FILE *out, const CmmFile *f, const CmmGroup *g, const ScopeTree *t) {
  fprintf(out, "group %td:", g - f->groups + 1);
  bool code = false;
  for (uint32_t d = 0; d < g->ndecls; d++)
    if (g->decls[d].kind == CMM_DECL_PROC) {
      fprintf(out, " %s", g->decls[d].u.proc.label);
      code = true;
    }
  if (!code) {
    fputs(" (no code)\n", out);
    return;
  }
  fputc('\n', out);

  /* Depth first, children in order; an explicit stack, as paths can be deep. */
  const ScopeNode **stack = malloc(t->nnodes * sizeof *stack);
  if (!stack) internal_error("out of memory");
  uint32_t sp = 0;
  stack[sp++] = t->nodes[0];
  while (sp) {
    const ScopeNode *n = stack[--sp];
    print_node(out, n);
    for (uint32_t c = n->nchildren; c > 0; c--) stack[sp++] = n->children[c - 1];
  }
  free(stack);
}
