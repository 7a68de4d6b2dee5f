/* scopes.h — tick-scope analysis: the scope tree of a group and each scope's best note.
 *
 * GHC labels every block with a tick scope (`c1JR/c1JY`, `(p+q)`, `global`) and puts
 * source notes (`//tick src<…>`) into blocks.  A note covers the blocks of its scope and
 * of all nested scopes, and scopes cross proc boundaries (a thunk's blocks sit under the
 * scope of the binding that allocated it).  scopes_build turns one group (one dump
 * section) into a tree of ScopeNodes, each with the blocks and notes it owns and the one
 * note a debugger should show for it (docs/design.md, "Tick scopes and
 * source notes", after GHC.Cmm.DebugBlock).
 *
 * Everything a ScopeTree holds lives in the arena passed to scopes_build; the IR it
 * points into (blocks, notes, labels) must outlive it.
 */
#ifndef STROBE_SCOPES_H
#define STROBE_SCOPES_H

#include "cmm.h"

typedef struct ScopeNode ScopeNode;

/* One block of the group: the proc it is in and the block itself. */
typedef struct ScopeBlock {
  const CmmProc *proc;
  const CmmBlock *block;
} ScopeBlock;

/* One note of a node: its own (from == NULL) or copied from the node of another path
 * of a combined scope (from: that node). */
typedef struct ScopeTick {
  const CmmSrcNote *note;
  const ScopeNode *from;
} ScopeTick;

struct ScopeNode {
  uint32_t index;            /* in ScopeTree.nodes; 0 is the root */
  uint32_t depth;            /* 0 for the root */
  const char *text;          /* canonical scope text: "global", "a/b/c", "(p+q)" */
  const CmmScope *scope;     /* as printed on its first block; NULL: a root without blocks */
  ScopeNode *parent;         /* NULL only for the root */
  uint32_t nchildren;
  ScopeNode **children;      /* in order of first appearance in the group */
  uint32_t nblocks;
  ScopeBlock *blocks;        /* procs in group order, blocks in proc order */
  uint32_t nticks, nown;     /* ticks[0..nown) own, ticks[nown..nticks) copied */
  ScopeTick *ticks;          /* no two with the same file and span */
  const CmmSrcNote *best;    /* NULL: no note covers this node */
  bool best_inherited;       /* best comes from an ancestor (the node has no ticks) */
  /* GHC's choice (GHC.Cmm.DebugBlock's bestSrcTick): the first note from the main file,
   * else the first note, else the parent's.  Usually the whole binding's span; the
   * lowering starts each block's line there (see Note [Where a block's line starts]). */
  const CmmSrcNote *first;
};

typedef struct ScopeTree {
  const CmmGroup *group;
  const char *main_file;     /* the file whose notes are preferred; NULL: none known */
  uint32_t nnodes;
  ScopeNode **nodes;         /* nodes[0] is the root `global`; the rest in order of
                                first appearance (procs in group order, blocks in order) */
  StrMap by_text;            /* scope text -> index in nodes */
  uint32_t **block_node;     /* [decl][block] -> index in nodes; NULL for a data decl */
} ScopeTree;

/* The file named by the most source notes in the whole file (ties: the first seen);
 * NULL if there are none.  The result points into f's IR.  Compute it once per file and
 * pass it to scopes_build: with main_file == NULL, scopes_build recomputes it. */
const char *scopes_main_file(const CmmFile *f, Arena *a);

/* The scope tree of group g of f (g points into f->groups).  main_file: the file whose
 * notes win over other files' (NULL: scopes_main_file(f)). */
ScopeTree *scopes_build(const CmmFile *f, const CmmGroup *g, const char *main_file, Arena *a);

/* The node of block `block` of decl `decl` (indices into g->decls and its blocks). */
const ScopeNode *scopes_block_node(const ScopeTree *t, uint32_t decl, uint32_t block);
/* The node whose canonical scope text is `text`; NULL if the group has none. */
const ScopeNode *scopes_find(const ScopeTree *t, const char *text);

/* --emit=scopes: the tree, its blocks, ticks and best notes (format: see scopes.c). */
void scopes_print(FILE *out, const CmmFile *f, const CmmGroup *g, const ScopeTree *t);

#endif
