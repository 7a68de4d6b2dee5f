/* infotable.c — info tables as words (see infotable.h).
 *
 * The layout follows GHC 9.0.2 (GHC.Cmm.Info.mkInfoTable, mkInfoTableContents,
 * mkStdInfoTable, mkSRTLit, mkLivenessBits, makeRelativeRefTo; GHC.Runtime.Heap.Layout
 * rtsClosureType; GHC.Cmm.Info.Build updInfoSRTs; rts/storage/InfoTables.h) for x86-64
 * with tables next to code and no profiling.  A table is
 *
 *     reverse <extra bits>  ++  [layout :: W64, closure type :: W32, srt :: W32]
 *
 * and every label in it is made relative to the info label (`L-info`), with the word's
 * width, except the SRT, which is inline: `srt-info` as a half-word, or 0 :: W32.
 *
 *   layout   heap objects: ptrs | nonptrs << 32; stack frames: the liveness bitmap;
 *            a selector thunk: the selector offset
 *   srt      constructors: the tag :: W32; selector thunks: 0 :: W32
 *   extra    constructors: [descr-info]; ArgSpec functions: [fun_type | arity << 32];
 *            ArgGen functions: [ARG_GEN(_BIG) | arity << 32, bitmap, X_slow-X_info];
 *            thunks and stack frames: none (the SRT is inline)
 *
 * A bitmap is small, nbits | bits << 6 with bit i set when slot i is a non-pointer, when
 * nbits <= 58; otherwise it is a label of `const nbits; const w0; …` (64 slots a word). */
#include "infotable.h"

#include "errfmt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Messages are formatted by strobe's one formatter (intrinsics/errfmt.h). */
#define failf strobe_fail

static CmmExpr *int_expr(Arena *a, uint64_t v, unsigned width) {
  CmmExpr *e = arena_alloc(a, sizeof *e);
  e->kind = CMM_E_INT;
  e->type = (CmmType){CMM_BITS, (uint16_t)width};
  e->u.i.mag = v;
  return e;
}

static CmmExpr *diff_expr(Arena *a, const char *x, const char *y, unsigned width) {
  CmmExpr *e = arena_alloc(a, sizeof *e);
  e->kind = CMM_E_LABEL_DIFF;
  e->type = (CmmType){CMM_BITS, (uint16_t)width};
  e->u.label.name = x;
  e->u.label.name2 = y;
  e->u.label.kind = CMM_LABEL_FOREIGN;
  return e;
}

static CmmStatic lit(CmmExpr *e) { return (CmmStatic){.kind = CMM_STATIC_LIT, .lit = e}; }

/* packHalfWordsCLit, little-endian: the first half-word is the low one. */
static uint64_t pack(uint32_t lo, uint32_t hi) { return (uint64_t)lo | (uint64_t)hi << 32; }

/* The label with `suffix` in place of the info label's `_info` (GHC's toSlowEntryLbl,
 * the closure label of the same name); NULL if the label does not end in `_info`. */
static const char *swap_suffix(Arena *a, const char *info, const char *suffix) {
  size_t n = strlen(info);
  if (n < 5 || strcmp(info + n - 5, "_info") != 0) return NULL;
  return arena_printf(a, "%.*s%s", (int)(n - 5), info, suffix);
}

static LwInfoAux *new_aux(Arena *a, LwInfoCtx *ctx, const char *section, const char *label) {
  LwInfoAux *v = arena_alloc(a, (ctx->naux + 1) * sizeof *v);
  if (ctx->naux) memcpy(v, ctx->aux, ctx->naux * sizeof *v);
  ctx->aux = v;
  LwInfoAux *x = &v[ctx->naux++];
  x->section = section;
  x->label = label;
  return x;
}

/* mkLivenessBits: the bitmap word, or (large) `<info>_btm-<info>` and its section. */
static bool liveness(Arena *a, const CmmInfoTable *it, const CmmRep *r, LwInfoCtx *ctx,
                     CmmExpr **word, bool *large, char **why) {
  *large = r->nbits > LW_MAX_SMALL_BITMAP_SIZE;
  if (!*large) {
    uint64_t w = r->nbits;
    for (uint32_t i = 0; i < r->nbits; i++)
      if (r->bits[i]) w |= (uint64_t)1 << (i + LW_BITMAP_BITS_SHIFT);
    *word = int_expr(a, w, CMM_WORD_WIDTH);
    return true;
  }
  if (!ctx) return failf(why, "%s: a %u-slot bitmap needs a section of its own (no context)",
                         it->label, r->nbits);
  const char *label = arena_printf(a, "%s_btm", it->label);
  uint32_t nwords = (r->nbits + CMM_WORD_WIDTH - 1) / CMM_WORD_WIDTH;
  LwInfoAux *x = new_aux(a, ctx, "readonly", label);
  x->nstatics = 1 + nwords;
  x->statics = arena_alloc(a, x->nstatics * sizeof *x->statics);
  x->statics[0] = lit(int_expr(a, r->nbits, CMM_WORD_WIDTH));
  for (uint32_t w = 0; w < nwords; w++) {
    uint64_t bits = 0;
    for (uint32_t i = 0; i < CMM_WORD_WIDTH && w * CMM_WORD_WIDTH + i < r->nbits; i++)
      if (r->bits[w * CMM_WORD_WIDTH + i]) bits |= (uint64_t)1 << i;
    x->statics[1 + w] = lit(int_expr(a, bits, CMM_WORD_WIDTH));
  }
  *word = diff_expr(a, label, it->label, CMM_WORD_WIDTH);
  return true;
}

/* The file's data sections by label. */
static const CmmData *find_data(LwInfoCtx *ctx, Arena *a, const char *label) {
  if (!ctx || !ctx->file) return NULL;
  if (!ctx->indexed) {
    uint32_t n = 0;
    for (uint32_t g = 0; g < ctx->file->ngroups; g++)
      for (uint32_t d = 0; d < ctx->file->groups[g].ndecls; d++)
        n += ctx->file->groups[g].decls[d].kind == CMM_DECL_DATA;
    strmap_init(&ctx->data_index, a, n);
    ctx->datas = arena_alloc(a, (n ? n : 1) * sizeof *ctx->datas);
    uint32_t i = 0;
    for (uint32_t g = 0; g < ctx->file->ngroups; g++)
      for (uint32_t d = 0; d < ctx->file->groups[g].ndecls; d++) {
        const CmmDecl *decl = &ctx->file->groups[g].decls[d];
        if (decl->kind != CMM_DECL_DATA) continue;
        ctx->datas[i] = &decl->u.data;
        strmap_put(&ctx->data_index, a, decl->u.data.label, i, NULL);
        i++;
      }
    ctx->indexed = true;
  }
  uint32_t i;
  return strmap_get(&ctx->data_index, label, &i) ? ctx->datas[i] : NULL;
}

/* A static function's pointer count: the SRT entries GHC moved into its closure
 * (GHC.Cmm.Info.Build updInfoSRTs: HeapRep static (ptrs + length srtEntries) nptrs).
 * The closure is [X_info, srt entries…, static link (if it may refer to CAFs)]. */
static bool static_fun_ptrs(Arena *a, const CmmInfoTable *it, LwInfoCtx *ctx,
                            uint32_t *ptrs, char **why) {
  const char *clo = swap_suffix(a, it->label, "_closure");
  if (!clo) return failf(why, "%s: a static function's info label does not end in _info",
                         it->label);
  const CmmData *d = find_data(ctx, a, clo);
  if (!d)
    return failf(why, "%s: static function: its closure %s is not in the file (its pointer "
                 "count, which -ddump-cmm does not print, comes from the closure)",
                 it->label, clo);
  const CmmStatic *s = d->statics;
  if (d->nstatics < 1 || s[0].kind != CMM_STATIC_LIT || s[0].lit->kind != CMM_E_LABEL ||
      strcmp(s[0].lit->u.label.name, it->label) != 0 || s[0].lit->u.label.offset != 0)
    return failf(why, "%s: the closure %s does not start with its info pointer", it->label,
                 clo);
  uint32_t i = 1;
  while (i < d->nstatics && s[i].kind == CMM_STATIC_LIT && s[i].lit->kind == CMM_E_LABEL) i++;
  uint32_t rest = d->nstatics - i;
  if (rest > 1 || (rest == 1 && (s[i].kind != CMM_STATIC_LIT || s[i].lit->kind != CMM_E_INT)))
    return failf(why, "%s: the closure %s is not [info, SRT entries…, static link]",
                 it->label, clo);
  *ptrs = i - 1;
  return true;
}

/* rtsClosureType for a HeapRep. */
static int closure_type(const CmmRep *r, uint32_t p, uint32_t np) {
  switch (r->closure) {
  case CMM_CLOSURE_CON:
    if (p == 1 && np == 0) return LW_CONSTR_1_0;
    if (p == 0 && np == 1) return LW_CONSTR_0_1;
    if (p == 2 && np == 0) return LW_CONSTR_2_0;
    if (p == 1 && np == 1) return LW_CONSTR_1_1;
    if (p == 0 && np == 2) return LW_CONSTR_0_2;
    if (p == 0) return LW_CONSTR_NOCAF;
    return LW_CONSTR;
  case CMM_CLOSURE_FUN:
    if (r->is_static) return LW_FUN_STATIC;
    if (p == 1 && np == 0) return LW_FUN_1_0;
    if (p == 0 && np == 1) return LW_FUN_0_1;
    if (p == 2 && np == 0) return LW_FUN_2_0;
    if (p == 1 && np == 1) return LW_FUN_1_1;
    if (p == 0 && np == 2) return LW_FUN_0_2;
    return LW_FUN;
  case CMM_CLOSURE_THUNK:
    if (r->is_static) return LW_THUNK_STATIC;
    if (p == 1 && np == 0) return LW_THUNK_1_0;
    if (p == 0 && np == 1) return LW_THUNK_0_1;
    if (p == 2 && np == 0) return LW_THUNK_2_0;
    if (p == 1 && np == 1) return LW_THUNK_1_1;
    if (p == 0 && np == 2) return LW_THUNK_0_2;
    return LW_THUNK;
  case CMM_CLOSURE_THUNK_SELECTOR:
    return r->is_static ? -1 : LW_THUNK_SELECTOR;
  default:
    return -1;
  }
}

static const char *closure_name(int c) {
  switch (c) {
  case CMM_CLOSURE_THUNK: return "Thunk";
  case CMM_CLOSURE_FUN: return "Fun";
  case CMM_CLOSURE_CON: return "Con";
  case CMM_CLOSURE_THUNK_SELECTOR: return "ThunkSel";
  case CMM_CLOSURE_BLACKHOLE: return "BlackHole";
  case CMM_CLOSURE_INDSTATIC: return "IndStatic";
  default: return "?";
  }
}

/* A raw table's statics, with GHC's widths on label differences (see the header). */
static bool raw_words(const CmmInfoTable *it, Arena *a, CmmStatic **statics, uint32_t *n,
                      char **why) {
  CmmStatic *out = it->statics;
  for (uint32_t i = 0; i < it->nstatics; i++) {
    const CmmStatic *s = &it->statics[i];
    if (s->kind != CMM_STATIC_LIT)
      return failf(why, "%s: a raw info table holds something other than constants",
                   it->label);
    if (s->lit->kind != CMM_E_LABEL_DIFF) continue;
    unsigned want = i + 1 == it->nstatics ? 32 : CMM_WORD_WIDTH;
    if (s->lit->type.cat == CMM_BITS && s->lit->type.width == want) continue;
    if (out == it->statics) {
      out = arena_alloc(a, it->nstatics * sizeof *out);
      memcpy(out, it->statics, it->nstatics * sizeof *out);
    }
    CmmExpr *e = arena_alloc(a, sizeof *e);
    *e = *s->lit;
    e->type = (CmmType){CMM_BITS, (uint16_t)want};
    out[i].lit = e;
  }
  *statics = out;
  *n = it->nstatics;
  return true;
}

bool lw_info_table_words(const CmmProc *proc, const CmmInfoTable *it, Arena *a,
                         CmmStatic **statics, uint32_t *n, char **why, LwInfoCtx *ctx) {
  *statics = NULL;
  *n = 0;
  if (why) *why = NULL;
  if (ctx) {
    ctx->aux = NULL;
    ctx->naux = 0;
  }
  if (proc->raw) return raw_words(it, a, statics, n, why);

  /* RTSRep: the (innermost) tag overrides the closure type. */
  const CmmRep *r = &it->rep;
  int rts_type = -1;
  for (unsigned depth = 0; r->kind == CMM_REP_RTS; depth++) {
    if (!r->inner || depth > 16) return failf(why, "%s: malformed RTSRep", it->label);
    rts_type = (int)r->rts_type;
    r = r->inner;
  }
  if (rts_type > 0xffff) return failf(why, "%s: closure type %d out of range", it->label,
                                      rts_type);

  /* mkSRTLit, inline (x86-64 with tables next to code): a half-word offset. */
  CmmExpr *srt = it->srt ? diff_expr(a, it->srt, it->label, 32) : int_expr(a, 0, 32);
  CmmExpr *layout, *extra[3];
  unsigned nextra = 0;
  int type;

  if (r->kind == CMM_REP_STACK) {
    bool large;
    if (!liveness(a, it, r, ctx, &layout, &large, why)) return false;
    type = rts_type >= 0 ? rts_type : large ? LW_RET_BIG : LW_RET_SMALL;
  } else if (r->kind == CMM_REP_HEAP) {
    uint32_t p = r->ptrs, np = r->nonptrs;
    if (r->is_static) {
      /* -ddump-cmm prints no counts after `static`: GHC's SMRep printer parses
       * `if static then "static" else empty <+> counts` as the else branch. */
      if (r->closure == CMM_CLOSURE_FUN) {
        if (!static_fun_ptrs(a, it, ctx, &p, why)) return false;
        np = 0; /* a top-level function has no free variables */
      } else if (r->closure == CMM_CLOSURE_THUNK) {
        p = np = 0; /* a CAF: its SRT is never moved into the closure */
      } else {
        return failf(why, "%s: HeapRep static { %s }: the pointer counts are not printed "
                     "and cannot be recovered", it->label, closure_name(r->closure));
      }
    }
    type = rts_type >= 0 ? rts_type : closure_type(r, p, np);
    if (type < 0)
      return failf(why, "%s: HeapRep%s { %s } has no RTS closure type", it->label,
                   r->is_static ? " static" : "", closure_name(r->closure));
    layout = int_expr(a, pack(p, np), CMM_WORD_WIDTH);
    switch (r->closure) {
    case CMM_CLOSURE_CON: {
      if (!ctx) return failf(why, "%s: a constructor's description string needs a context",
                             it->label);
      if (!r->descr) return failf(why, "%s: constructor without a description", it->label);
      const char *label = arena_printf(a, "%s_descr", it->label);
      LwInfoAux *x = new_aux(a, ctx, "cstring", label);
      x->nstatics = 1;
      x->statics = arena_alloc(a, sizeof *x->statics);
      x->statics[0].kind = CMM_STATIC_STRING;
      x->statics[0].bytes = (const uint8_t *)r->descr;
      x->statics[0].len = (uint32_t)strlen(r->descr);
      srt = int_expr(a, r->tag, 32);
      extra[nextra++] = diff_expr(a, label, it->label, CMM_WORD_WIDTH);
      break;
    }
    case CMM_CLOSURE_THUNK:
      break;
    case CMM_CLOSURE_THUNK_SELECTOR:
      srt = int_expr(a, 0, 32);
      layout = int_expr(a, r->selector, CMM_WORD_WIDTH);
      break;
    case CMM_CLOSURE_FUN:
      if (!r->arg_gen) {
        extra[nextra++] = int_expr(a, pack(r->arg_spec, r->arity), CMM_WORD_WIDTH);
      } else {
        CmmExpr *bitmap;
        bool large;
        if (!liveness(a, it, r, ctx, &bitmap, &large, why)) return false;
        const char *slow = swap_suffix(a, it->label, "_slow");
        if (!slow) return failf(why, "%s: an ArgGen function's info label does not end in "
                                "_info (no slow entry label)", it->label);
        extra[nextra++] = int_expr(a, pack(large ? LW_ARG_GEN_BIG : LW_ARG_GEN, r->arity),
                                   CMM_WORD_WIDTH);
        extra[nextra++] = bitmap;
        extra[nextra++] = diff_expr(a, slow, it->label, CMM_WORD_WIDTH);
      }
      break;
    default: /* GHC's mk_pieces panics on BlackHole and IndStatic */
      return failf(why, "%s: GHC lays out no info table for HeapRep { %s }", it->label,
                   closure_name(r->closure));
    }
  } else {
    return failf(why, "%s: unknown rep kind %u", it->label, r->kind);
  }

  uint32_t total = nextra + 3;
  CmmStatic *out = arena_alloc(a, total * sizeof *out);
  uint32_t k = 0;
  while (nextra) out[k++] = lit(extra[--nextra]);
  out[k++] = lit(layout);
  out[k++] = lit(int_expr(a, (uint64_t)type, 32));
  out[k++] = lit(srt);
  *statics = out;
  *n = total;
  return true;
}

void lw_info_ctx_init(LwInfoCtx *ctx, const CmmFile *file) {
  memset(ctx, 0, sizeof *ctx);
  ctx->file = file;
}
