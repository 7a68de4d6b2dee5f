/* test_infotable.c — info tables as words (infotable.c).
 *
 * Unit cases build one symbolic table of each shape and check its words against GHC
 * 9.0.2's layout.  The corpus test is the real check: for every program and optimisation
 * level, GHC printed the same code with symbolic tables (X.dump-cmm) and with their words
 * (X.dump-cmm-raw, and again in llvm-backend/); the words built from each symbolic
 * table must equal the raw dump's words for the same (proc, block), and the sections
 * they refer to (constructor descriptions, large bitmaps) must hold the same contents. */
#include "support.h"

#include <dirent.h>
#include <sys/stat.h>

#include "infotable.h"

/* ---- comparing words ------------------------------------------------------------ */

typedef struct PairStats {
  unsigned tables;   /* symbolic tables compared */
  unsigned equal;    /* … whose words equal the raw ones */
  unsigned aux;      /* referred-to sections compared (and equal) */
  unsigned unmatched_sym, unmatched_raw; /* tables with no counterpart */
  unsigned failed;   /* lw_info_table_words returned false */
  unsigned differ;   /* words differ */
  bool refused;      /* both files hold an ambiguous bitwise chain strobe refuses */
} PairStats;

static void print_static(FILE *out, const CmmStatic *s) {
  if (s->kind == CMM_STATIC_LIT) {
    fputs("const ", out);
    cmm_print_expr(out, s->lit);
    fprintf(out, " (W%u)", s->lit->type.width);
  } else if (s->kind == CMM_STATIC_STRING) {
    fputs("I8[] ", out);
    cmm_print_string(out, s->bytes, s->len);
  } else {
    fprintf(out, "I8[%u]", s->len);
  }
}

static void print_statics(FILE *out, const char *what, const CmmStatic *s, uint32_t n) {
  fprintf(out, "    %s (%u):", what, n);
  for (uint32_t i = 0; i < n; i++) {
    fputs(i ? "; " : " ", out);
    print_static(out, &s[i]);
  }
  fputc('\n', out);
}

static const CmmData *file_data(const CmmFile *f, const char *label) {
  for (uint32_t g = 0; g < f->ngroups; g++)
    for (uint32_t d = 0; d < f->groups[g].ndecls; d++)
      if (f->groups[g].decls[d].kind == CMM_DECL_DATA &&
          strcmp(f->groups[g].decls[d].u.data.label, label) == 0)
        return &f->groups[g].decls[d].u.data;
  return NULL;
}

static const LwInfoAux *find_aux(const LwInfoCtx *ctx, const char *label) {
  for (uint32_t i = 0; i < ctx->naux; i++)
    if (strcmp(ctx->aux[i].label, label) == 0) return &ctx->aux[i];
  return NULL;
}

/* Equal statics; a label difference whose first label is one of ours (an aux section)
 * matches the raw one when the sections they name hold equal statics. */
static bool same_statics(const CmmStatic *x, uint32_t nx, const CmmStatic *y, uint32_t ny,
                         const LwInfoCtx *ctx, const CmmFile *raw, unsigned *naux,
                         char *msg, size_t msglen) {
  if (nx != ny) {
    snprintf(msg, msglen, "%u words, raw has %u", nx, ny);
    return false;
  }
  for (uint32_t i = 0; i < nx; i++) {
    const CmmStatic *s = &x[i], *t = &y[i];
    if (s->kind != t->kind) {
      snprintf(msg, msglen, "word %u: static kinds differ", i);
      return false;
    }
    if (s->kind == CMM_STATIC_STRING || s->kind == CMM_STATIC_UNINIT) {
      if (s->len != t->len || (s->kind == CMM_STATIC_STRING && memcmp(s->bytes, t->bytes, s->len))) {
        snprintf(msg, msglen, "word %u: strings differ", i);
        return false;
      }
      continue;
    }
    const CmmExpr *e = s->lit, *f = t->lit;
    if (e->kind != f->kind) {
      snprintf(msg, msglen, "word %u: literal kinds differ (%u, raw %u)", i, e->kind, f->kind);
      return false;
    }
    if (e->type.width != f->type.width || e->type.cat != f->type.cat) {
      snprintf(msg, msglen, "word %u: W%u, raw W%u", i, e->type.width, f->type.width);
      return false;
    }
    if (e->kind == CMM_E_INT) {
      if (e->u.i.mag != f->u.i.mag || e->u.i.neg != f->u.i.neg) {
        snprintf(msg, msglen, "word %u: %s%llu, raw %s%llu", i, e->u.i.neg ? "-" : "",
                 (unsigned long long)e->u.i.mag, f->u.i.neg ? "-" : "",
                 (unsigned long long)f->u.i.mag);
        return false;
      }
    } else if (e->kind == CMM_E_LABEL || e->kind == CMM_E_LABEL_DIFF) {
      if (e->u.label.offset != f->u.label.offset ||
          (e->kind == CMM_E_LABEL_DIFF && strcmp(e->u.label.name2, f->u.label.name2))) {
        snprintf(msg, msglen, "word %u: label differences differ", i);
        return false;
      }
      if (strcmp(e->u.label.name, f->u.label.name) == 0) continue;
      const LwInfoAux *ax = ctx ? find_aux(ctx, e->u.label.name) : NULL;
      const CmmData *rd = raw ? file_data(raw, f->u.label.name) : NULL;
      if (!ax || !rd) {
        snprintf(msg, msglen, "word %u: label %s, raw %s", i, e->u.label.name,
                 f->u.label.name);
        return false;
      }
      if (strcmp(ax->section, rd->section) != 0) {
        snprintf(msg, msglen, "word %u: section %s \"%s\", raw %s \"%s\"", i, ax->label,
                 ax->section, rd->label, rd->section);
        return false;
      }
      char sub[200];
      if (!same_statics(ax->statics, ax->nstatics, rd->statics, rd->nstatics, NULL, NULL,
                        naux, sub, sizeof sub)) {
        snprintf(msg, msglen, "word %u: section %s differs from raw %s: %s", i, ax->label,
                 rd->label, sub);
        return false;
      }
      ++*naux;
    } else {
      snprintf(msg, msglen, "word %u: unexpected literal kind %u", i, e->kind);
      return false;
    }
  }
  return true;
}

/* Reads a file, through gzip -dc when its name ends in .gz; NULL if it cannot. */
static CmmSource *read_dump(const char *path) {
  size_t n = strlen(path);
  Diag d = {.out = stderr};
  if (n < 3 || strcmp(path + n - 3, ".gz") != 0) return cmm_source_read(path, &d);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 1 << 20, len = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, p)) > 0) {
    len += got;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  int rc = pclose(p);
  if (!buf || rc != 0) {
    free(buf);
    return NULL;
  }
  CmmSource *s = cmm_source_from_memory(path, buf, len);
  free(buf);
  return s;
}

static CmmFile *parse_quiet(CmmSource *src, bool *refused) {
  Diag d = {.out = stderr, .no_warnings = true};
  CmmFile *f = cmm_parse(src, &d);
  *refused = d.refusals > 0;
  if (!f || d.errors) return f ? (cmm_file_free(f), NULL) : NULL;
  /* The lowering sees typed files: label differences then carry I64, which the raw path
   * must correct for the SRT field. */
  Diag quiet = {.out = NULL};
  cmm_infer_types(f, &quiet);
  return f;
}

static const char *key(Arena *a, const CmmProc *p, const CmmInfoTable *it) {
  return arena_printf(a, "%s\x01%s", p->label, it->block.name);
}

/* Compares the tables of one (dump-cmm, dump-cmm-raw) pair; false if a file cannot be
 * read or parsed.  Differences go to out (at most `show` of them). */
static bool compare_pair(const char *sym_path, const char *raw_path, PairStats *st,
                         FILE *out, unsigned show) {
  memset(st, 0, sizeof *st);
  CmmSource *ss = read_dump(sym_path), *rs = read_dump(raw_path);
  bool srefused = false, rrefused = false;
  CmmFile *sf = ss ? parse_quiet(ss, &srefused) : NULL, *rf = rs ? parse_quiet(rs, &rrefused) : NULL;
  bool ok = sf && rf;
  /* The same Cmm in both flavours: both are refused, or neither. */
  st->refused = srefused && rrefused;
  if (!ok && !st->refused)
    fprintf(out, "  cannot read or parse %s\n", sf ? raw_path : sym_path);
  Arena *a = arena_new();
  if (ok) {
    StrMap raw_tables;
    strmap_init(&raw_tables, a, 1024);
    VEC(const CmmInfoTable *) rt = {0};
    VEC(const CmmProc *) rp = {0};
    VEC(bool) used = {0};
    for (uint32_t g = 0; g < rf->ngroups; g++)
      for (uint32_t d = 0; d < rf->groups[g].ndecls; d++) {
        const CmmDecl *decl = &rf->groups[g].decls[d];
        if (decl->kind != CMM_DECL_PROC) continue;
        for (uint32_t t = 0; t < decl->u.proc.ntables; t++) {
          strmap_put(&raw_tables, a, key(a, &decl->u.proc, &decl->u.proc.tables[t]), rt.n,
                     NULL);
          vec_push(a, &rt, &decl->u.proc.tables[t]);
          vec_push(a, &rp, &decl->u.proc);
          vec_push(a, &used, false);
        }
      }
    LwInfoCtx ctx, rctx;
    lw_info_ctx_init(&ctx, sf);
    lw_info_ctx_init(&rctx, rf);
    for (uint32_t g = 0; g < sf->ngroups; g++)
      for (uint32_t d = 0; d < sf->groups[g].ndecls; d++) {
        const CmmDecl *decl = &sf->groups[g].decls[d];
        if (decl->kind != CMM_DECL_PROC) continue;
        const CmmProc *p = &decl->u.proc;
        for (uint32_t t = 0; t < p->ntables; t++) {
          const CmmInfoTable *it = &p->tables[t];
          uint32_t ri;
          if (!strmap_get(&raw_tables, key(a, p, it), &ri)) {
            st->unmatched_sym++;
            if (show && show--) fprintf(out, "  %s %s: no raw table\n", p->label, it->label);
            continue;
          }
          used.v[ri] = true;
          st->tables++;
          CmmStatic *sw, *rw;
          uint32_t sn, rn;
          char *why = NULL;
          if (!lw_info_table_words(p, it, a, &sw, &sn, &why, &ctx) ||
              !lw_info_table_words(rp.v[ri], rt.v[ri], a, &rw, &rn, &why, &rctx)) {
            st->failed++;
            if (show && show--) fprintf(out, "  %s: failed: %s\n", it->label, why);
            free(why);
            continue;
          }
          char msg[400];
          if (same_statics(sw, sn, rw, rn, &ctx, rf, &st->aux, msg, sizeof msg)) {
            st->equal++;
          } else {
            st->differ++;
            if (show && show--) {
              fprintf(out, "  %s (proc %s): %s\n", it->label, p->label, msg);
              print_statics(out, "ours", sw, sn);
              print_statics(out, "raw ", rw, rn);
            }
          }
        }
      }
    for (uint32_t i = 0; i < used.n; i++) st->unmatched_raw += !used.v[i];
  }
  arena_free(a);
  if (sf) cmm_file_free(sf);
  if (rf) cmm_file_free(rf);
  if (ss) cmm_source_free(ss);
  if (rs) cmm_source_free(rs);
  return ok;
}

static bool pair_clean(const PairStats *st) {
  return st->failed == 0 && st->differ == 0 && st->unmatched_sym == 0 &&
         st->unmatched_raw == 0;
}

#ifndef TEST_INFOTABLE_NO_MAIN

/* ---- unit cases ----------------------------------------------------------------- */

#define TABLE(block, label, rep, srt)                                              \
  "(" block ",\n label: " label "\n rep: " rep "\n srt: " srt ")"

/* A group with one proc f_entry whose only table is `table` for block c1, and the data
 * sections `data` (NEXT-separated, may be ""). */
#define ONE(table, data)                                                           \
  HEAD "[" PROC_WITH("f_entry", "[R1]", table) BLOCK("c1", "c1") RET END_PROC data "]\n"

typedef struct Words {
  Parsed p;
  LwInfoCtx ctx;
  CmmStatic *w;
  uint32_t n;
  bool ok;
  char *why;
} Words;

static Words words_of(Arena *a, const char *text, bool with_ctx) {
  Words r = {.p = parse_dump(text, INFER_TYPES)};
  assert_true(r.p.ok);
  const CmmProc *p = &r.p.f->groups[0].decls[0].u.proc;
  assert_int_equal(p->ntables, 1);
  lw_info_ctx_init(&r.ctx, r.p.f);
  r.ok = lw_info_table_words(p, &p->tables[0], a, &r.w, &r.n, &r.why,
                             with_ctx ? &r.ctx : NULL);
  if (r.ok) assert_null(r.why);
  return r;
}

static void words_free(Words *r) {
  free(r->why);
  parsed_free(r->p);
}

static void is_word(const CmmStatic *s, uint64_t v, unsigned width) {
  assert_int_equal(s->kind, CMM_STATIC_LIT);
  assert_int_equal(s->lit->kind, CMM_E_INT);
  if (s->lit->u.i.mag != v)
    fail_msg("word %llu, expected %llu", (unsigned long long)s->lit->u.i.mag,
             (unsigned long long)v);
  assert_false(s->lit->u.i.neg);
  assert_int_equal(s->lit->type.cat, CMM_BITS);
  assert_int_equal(s->lit->type.width, width);
}

static void is_diff(const CmmStatic *s, const char *x, const char *y, unsigned width) {
  assert_int_equal(s->kind, CMM_STATIC_LIT);
  assert_int_equal(s->lit->kind, CMM_E_LABEL_DIFF);
  assert_string_equal(s->lit->u.label.name, x);
  assert_string_equal(s->lit->u.label.name2, y);
  assert_true(s->lit->u.label.offset == 0);
  assert_int_equal(s->lit->type.width, width);
}

static void fails_with(Words *r, const char *what) {
  assert_false(r->ok);
  assert_non_null(r->why);
  if (!strstr(r->why, what)) fail_msg("why is '%s', expected it to mention '%s'", r->why, what);
}

/* Thunks: ptrs | nonptrs << 32, THUNK_m_n for the small layouts, no extra words. */
static void test_thunk(void **state) {
  static const struct { const char *rep; uint64_t layout; unsigned type; } cases[] = {
      {"HeapRep { Thunk }", 0, LW_THUNK},
      {"HeapRep 1 ptrs { Thunk }", 1, LW_THUNK_1_0},
      {"HeapRep 1 nonptrs { Thunk }", 1ull << 32, LW_THUNK_0_1},
      {"HeapRep 2 ptrs { Thunk }", 2, LW_THUNK_2_0},
      {"HeapRep 1 ptrs 1 nonptrs { Thunk }", 1 | 1ull << 32, 19},
      {"HeapRep 2 nonptrs { Thunk }", 2ull << 32, LW_THUNK_0_2},
      {"HeapRep 3 ptrs 2 nonptrs { Thunk }", 3 | 2ull << 32, LW_THUNK},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024];
    snprintf(text, sizeof text, ONE(TABLE("c1", "sat_s1_info", "%s", "Nothing"), ""),
             cases[i].rep);
    Words r = words_of(*state, text, true);
    assert_true(r.ok);
    assert_int_equal(r.n, 3);
    is_word(&r.w[0], cases[i].layout, 64);
    is_word(&r.w[1], cases[i].type, 32);
    is_word(&r.w[2], 0, 32);
    assert_int_equal(r.ctx.naux, 0);
    words_free(&r);
  }
}

/* A CAF: THUNK_STATIC, layout 0 (its counts are not printed and are always 0), and the
 * SRT as a half-word offset from the info table. */
static void test_static_thunk_srt(void **state) {
  Words r = words_of(*state, ONE(TABLE("c1", "Main.main_info", "HeapRep static { Thunk }",
                                       "Just _u1Se_srt"), ""), false);
  assert_true(r.ok);
  assert_int_equal(r.n, 3);
  is_word(&r.w[0], 0, 64);
  is_word(&r.w[1], LW_THUNK_STATIC, 32);
  is_diff(&r.w[2], "_u1Se_srt", "Main.main_info", 32);
  words_free(&r);
}

/* A static function: ArgSpec packs fun_type | arity << 32 into the one extra word; its
 * pointer count is the SRT entries in its closure (fib_ack/O0 fact_rgr). */
static void test_fun_static(void **state) {
  Words r = words_of(*state,
      ONE(TABLE("c1", "fact_rgr_info",
                "HeapRep static { Fun {arity: 1 fun_type: ArgSpec 5} }", "Nothing"),
          NEXT "section \"\"data\" . fact_rgr_closure\" {\n"
               "     fact_rgr_closure:\n"
               "         const fact_rgr_info;\n"
               "         const GHC.Num.Integer.$fEqInteger_closure;\n"
               "         const GHC.Num.$fNumInteger_closure;\n"
               "         const 0;\n }"), true);
  assert_true(r.ok);
  assert_int_equal(r.n, 4);
  is_word(&r.w[0], 4294967301ull, 64);
  is_word(&r.w[1], 2, 64);
  is_word(&r.w[2], LW_FUN_STATIC, 32);
  is_word(&r.w[3], 0, 32);
  words_free(&r);

  /* No SRT entries in the closure (and no static link: not CAFfy). */
  r = words_of(*state,
      ONE(TABLE("c1", "g_info", "HeapRep static { Fun {arity: 2 fun_type: ArgSpec 12} }",
                "Just g_srt"),
          NEXT "section \"\"data\" . g_closure\" {\n     g_closure:\n"
               "         const g_info;\n }"), true);
  assert_true(r.ok);
  assert_int_equal(r.n, 4);
  is_word(&r.w[0], 12 | 2ull << 32, 64);
  is_word(&r.w[1], 0, 64);
  is_word(&r.w[2], LW_FUN_STATIC, 32);
  is_diff(&r.w[3], "g_srt", "g_info", 32);
  words_free(&r);

  /* Without its closure the pointer count is unknown. */
  r = words_of(*state,
      ONE(TABLE("c1", "h_info", "HeapRep static { Fun {arity: 1 fun_type: ArgSpec 5} }",
                "Nothing"), ""), true);
  fails_with(&r, "h_closure");
  words_free(&r);
  r = words_of(*state,
      ONE(TABLE("c1", "h_info", "HeapRep static { Fun {arity: 1 fun_type: ArgSpec 5} }",
                "Nothing"), NEXT DATA("h_closure")), true);
  fails_with(&r, "info pointer");
  words_free(&r);
}

/* Dynamic functions: FUN_m_n by their free variables. */
static void test_fun_dynamic(void **state) {
  static const struct { const char *rep; uint64_t layout; unsigned type; } cases[] = {
      {"HeapRep 1 ptrs { Fun {arity: 1 fun_type: ArgSpec 5} }", 1, LW_FUN_1_0},
      {"HeapRep 1 nonptrs { Fun {arity: 1 fun_type: ArgSpec 5} }", 1ull << 32, LW_FUN_0_1},
      {"HeapRep 2 ptrs { Fun {arity: 1 fun_type: ArgSpec 5} }", 2, LW_FUN_2_0},
      {"HeapRep 1 ptrs 1 nonptrs { Fun {arity: 1 fun_type: ArgSpec 5} }", 1 | 1ull << 32,
       LW_FUN_1_1},
      {"HeapRep 2 nonptrs { Fun {arity: 1 fun_type: ArgSpec 5} }", 2ull << 32, LW_FUN_0_2},
      {"HeapRep 4 ptrs { Fun {arity: 1 fun_type: ArgSpec 5} }", 4, LW_FUN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024];
    snprintf(text, sizeof text, ONE(TABLE("c1", "f_s1_info", "%s", "Just f_srt"), ""),
             cases[i].rep);
    Words r = words_of(*state, text, false);
    assert_true(r.ok);
    assert_int_equal(r.n, 4);
    is_word(&r.w[0], 5 | 1ull << 32, 64);
    is_word(&r.w[1], cases[i].layout, 64);
    is_word(&r.w[2], cases[i].type, 32);
    is_diff(&r.w[3], "f_srt", "f_s1_info", 32);
    words_free(&r);
  }
}

/* ArgGen: [slow entry, bitmap, ARG_GEN | arity << 32] reversed before the standard part
 * (loops/O1 Main.$wgo). */
static void test_fun_arg_gen(void **state) {
  Words r = words_of(*state,
      ONE(TABLE("c1", "Main.$wgo_info",
                "HeapRep static { Fun {arity: 3 fun_type: ArgGen [True, True, False]} }",
                "Nothing"),
          NEXT "section \"\"data\" . Main.$wgo_closure\" {\n     Main.$wgo_closure:\n"
               "         const Main.$wgo_info;\n }"), true);
  assert_true(r.ok);
  assert_int_equal(r.n, 6);
  is_diff(&r.w[0], "Main.$wgo_slow", "Main.$wgo_info", 64);
  is_word(&r.w[1], 195, 64);
  is_word(&r.w[2], 12884901888ull, 64);
  is_word(&r.w[3], 0, 64);
  is_word(&r.w[4], LW_FUN_STATIC, 32);
  is_word(&r.w[5], 0, 32);
  assert_int_equal(r.ctx.naux, 0);
  words_free(&r);
}

/* A bitmap of more than 58 slots is a section of its own: ARG_GEN_BIG, RET_BIG. */
static void test_large_bitmaps(void **state) {
  char bits[70 * 7 + 1] = "", text[2048];
  for (int i = 0; i < 70; i++) strcat(bits, i ? (i % 3 ? ", False" : ", True") : "True");
  snprintf(text, sizeof text,
           ONE(TABLE("c1", "f_s2_info", "HeapRep 1 ptrs { Fun {arity: 70 fun_type: ArgGen [%s]} }",
                     "Nothing"), ""), bits);
  Words r = words_of(*state, text, true);
  assert_true(r.ok);
  assert_int_equal(r.n, 6);
  is_diff(&r.w[0], "f_s2_slow", "f_s2_info", 64);
  is_diff(&r.w[1], "f_s2_info_btm", "f_s2_info", 64);
  is_word(&r.w[2], LW_ARG_GEN_BIG | 70ull << 32, 64);
  is_word(&r.w[3], 1, 64);
  is_word(&r.w[4], LW_FUN_1_0, 32);
  is_word(&r.w[5], 0, 32);
  assert_int_equal(r.ctx.naux, 1);
  const LwInfoAux *x = &r.ctx.aux[0];
  assert_string_equal(x->section, "readonly");
  assert_string_equal(x->label, "f_s2_info_btm");
  assert_int_equal(x->nstatics, 3);
  uint64_t w0 = 0, w1 = 0;
  for (int i = 0; i < 64; i++) if (i % 3 == 0) w0 |= 1ull << i;
  for (int i = 64; i < 70; i++) if (i % 3 == 0) w1 |= 1ull << (i - 64);
  is_word(&x->statics[0], 70, 64);
  is_word(&x->statics[1], w0, 64);
  is_word(&x->statics[2], w1, 64);
  words_free(&r);

  snprintf(text, sizeof text, ONE(TABLE("c1", "block_c1_info", "StackRep [%s]", "Just f_closure"),
                                  ""), bits);
  r = words_of(*state, text, true);
  assert_true(r.ok);
  assert_int_equal(r.n, 3);
  is_diff(&r.w[0], "block_c1_info_btm", "block_c1_info", 64);
  is_word(&r.w[1], LW_RET_BIG, 32);
  is_diff(&r.w[2], "f_closure", "block_c1_info", 32);
  assert_int_equal(r.ctx.naux, 1);
  words_free(&r);
  r = words_of(*state, text, false);
  fails_with(&r, "70-slot");
  words_free(&r);

  /* 58 slots still fit. */
  char b58[58 * 7 + 1] = "";
  for (int i = 0; i < 58; i++) strcat(b58, i ? ", True" : "True");
  snprintf(text, sizeof text, ONE(TABLE("c1", "block_c1_info", "StackRep [%s]", "Nothing"),
                                  ""), b58);
  r = words_of(*state, text, false);
  assert_true(r.ok);
  is_word(&r.w[0], 58 | ((1ull << 58) - 1) << 6, 64);
  is_word(&r.w[1], LW_RET_SMALL, 32);
  words_free(&r);
}

/* Constructors: the tag in the SRT field, the description as `<info>_descr-<info>`, its
 * bytes a cstring section (adt_tree Main.Node). */
static void test_con(void **state) {
  Words r = words_of(*state,
      ONE(TABLE("c1", "Main.Node_con_info",
                "HeapRep 3 ptrs { Con {tag: 1 descr:\"main:Main.Node\"} }", "Nothing"), ""),
      true);
  assert_true(r.ok);
  assert_int_equal(r.n, 4);
  is_diff(&r.w[0], "Main.Node_con_info_descr", "Main.Node_con_info", 64);
  is_word(&r.w[1], 3, 64);
  is_word(&r.w[2], LW_CONSTR, 32);
  is_word(&r.w[3], 1, 32);
  assert_int_equal(r.ctx.naux, 1);
  assert_string_equal(r.ctx.aux[0].section, "cstring");
  assert_string_equal(r.ctx.aux[0].label, "Main.Node_con_info_descr");
  assert_int_equal(r.ctx.aux[0].nstatics, 1);
  assert_int_equal(r.ctx.aux[0].statics[0].kind, CMM_STATIC_STRING);
  assert_int_equal(r.ctx.aux[0].statics[0].len, 14);
  assert_memory_equal(r.ctx.aux[0].statics[0].bytes, "main:Main.Node", 14);
  words_free(&r);

  static const struct { const char *counts; uint64_t layout; unsigned type; } cases[] = {
      {"", 0, LW_CONSTR_NOCAF},
      {"1 ptrs", 1, LW_CONSTR_1_0},
      {"1 nonptrs", 1ull << 32, LW_CONSTR_0_1},
      {"2 ptrs", 2, LW_CONSTR_2_0},
      {"1 ptrs 1 nonptrs", 1 | 1ull << 32, LW_CONSTR_1_1},
      {"2 nonptrs", 2ull << 32, LW_CONSTR_0_2},
      {"3 nonptrs", 3ull << 32, LW_CONSTR_NOCAF},
      {"2 ptrs 1 nonptrs", 2 | 1ull << 32, LW_CONSTR},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             ONE(TABLE("c1", "M.K_con_info",
                       "HeapRep %s { Con {tag: 7 descr:\"p:M.K\\195\\188\"} }", "Nothing"), ""),
             cases[i].counts);
    r = words_of(*state, text, true);
    assert_true(r.ok);
    assert_int_equal(r.n, 4);
    is_word(&r.w[1], cases[i].layout, 64);
    is_word(&r.w[2], cases[i].type, 32);
    is_word(&r.w[3], 7, 32);
    assert_int_equal(r.ctx.aux[0].statics[0].len, 7);
    assert_memory_equal(r.ctx.aux[0].statics[0].bytes, "p:M.K\xc3\xbc", 7);
    words_free(&r);
  }
  r = words_of(*state, ONE(TABLE("c1", "M.K_con_info",
                                 "HeapRep { Con {tag: 0 descr:\"p:M.K\"} }", "Nothing"), ""),
               false);
  fails_with(&r, "context");
  words_free(&r);
}

/* Return points: the small bitmap nbits | bits << 6 (True: a non-pointer), RET_SMALL. */
static void test_stack(void **state) {
  static const struct { const char *rep, *srt; uint64_t bitmap; } cases[] = {
      {"StackRep []", "Nothing", 0},
      {"StackRep [False]", "Just fact_rgr_closure", 1},
      {"StackRep [True]", "Nothing", 1 | 1 << 6},
      {"StackRep [False, False]", "Nothing", 2},
      {"StackRep [True, False, True]", "Nothing", 3 | 5 << 6},
      {"StackRep [False, True, True, False]", "Just _u1_srt", 4 | 6 << 6},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024];
    snprintf(text, sizeof text, ONE(TABLE("c1", "block_c1_info", "%s", "%s"), ""),
             cases[i].rep, cases[i].srt);
    Words r = words_of(*state, text, false);
    assert_true(r.ok);
    assert_int_equal(r.n, 3);
    is_word(&r.w[0], cases[i].bitmap, 64);
    is_word(&r.w[1], LW_RET_SMALL, 32);
    if (strcmp(cases[i].srt, "Nothing") == 0) is_word(&r.w[2], 0, 32);
    else is_diff(&r.w[2], cases[i].srt + 5, "block_c1_info", 32);
    words_free(&r);
  }
}

/* Selector thunks, RTSRep, and the shapes GHC does not lay out. */
static void test_other_reps(void **state) {
  Words r = words_of(*state, ONE(TABLE("c1", "sel_info", "HeapRep 1 ptrs { ThunkSel 2 }",
                                       "Just x_srt"), ""), false);
  assert_true(r.ok);
  assert_int_equal(r.n, 3);
  is_word(&r.w[0], 2, 64);
  is_word(&r.w[1], LW_THUNK_SELECTOR, 32);
  is_word(&r.w[2], 0, 32);
  words_free(&r);

  r = words_of(*state, ONE(TABLE("c1", "frame_info", "tag: 33 StackRep [False]", "Nothing"),
                           ""), false);
  assert_true(r.ok);
  is_word(&r.w[0], 1, 64);
  is_word(&r.w[1], 33, 32);
  words_free(&r);

  r = words_of(*state, ONE(TABLE("c1", "bh_info", "HeapRep { BlackHole }", "Nothing"), ""),
               false);
  fails_with(&r, "BlackHole");
  words_free(&r);
  r = words_of(*state, ONE(TABLE("c1", "K_con_info",
                                 "HeapRep static { Con {tag: 0 descr:\"p:M.K\"} }", "Nothing"),
                           ""), true);
  fails_with(&r, "static");
  words_free(&r);
}

/* A raw table is returned as printed, with GHC's widths on label differences. */
static void test_raw(void **state) {
  Parsed p = parse_dump(HEAD "[f_entry() { //  [R2]\n"
                        "         { [(c1,\n"
                        "             block_c1_info:\n"
                        "                 const 1;\n"
                        "                 const 30 :: W32;\n"
                        "                 const f_closure-block_c1_info;),\n"
                        "            (c2,\n"
                        "             Main.Node_con_info:\n"
                        "                 const i2HR_str-Main.Node_con_info;\n"
                        "                 const 3;\n"
                        "                 const 1 :: W32;\n"
                        "                 const 1 :: W32;)]\n"
                        "         }\n"
                        "     {offset\n" BLOCK("c1", "c1") RET BLOCK("c2", "c2") RET
                        END_PROC "]\n",
                        INFER_TYPES);
  const CmmProc *pr = &p.f->groups[0].decls[0].u.proc;
  assert_true(pr->raw);
  CmmStatic *w;
  uint32_t n;
  char *why;
  assert_true(lw_info_table_words(pr, &pr->tables[0], *state, &w, &n, &why, NULL));
  assert_int_equal(n, 3);
  is_word(&w[0], 1, 64);
  is_word(&w[1], 30, 32);
  is_diff(&w[2], "f_closure", "block_c1_info", 32);
  assert_int_equal(pr->tables[0].statics[2].lit->type.width, 64); /* not changed */
  assert_true(lw_info_table_words(pr, &pr->tables[1], *state, &w, &n, &why, NULL));
  assert_int_equal(n, 4);
  assert_ptr_equal(w, pr->tables[1].statics); /* nothing to correct */
  is_diff(&w[0], "i2HR_str", "Main.Node_con_info", 64);
  parsed_free(p);
}

/* ---- the corpus ----------------------------------------------------------------- */

static bool is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int cmp_names(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every (dump-cmm, dump-cmm-raw) pair under STROBE_CORPUS_DIR, which the build makes from
 * the programs in corpus/: <p>/O<n>/<p>.dump-cmm{,-raw} and
 * <p>/O<n>/llvm-backend/<p>.dump-cmm{,-raw}. */
static void test_corpus(void **state) {
  (void)state;
  DIR *dir = opendir(STROBE_CORPUS_DIR);
  if (!dir) fail_msg("no corpus at %s", STROBE_CORPUS_DIR);
  char *progs[256];
  unsigned nprogs = 0;
  struct dirent *de;
  while ((de = readdir(dir)) && nprogs < 256)
    if (de->d_name[0] != '.') progs[nprogs++] = strdup(de->d_name);
  closedir(dir);
  qsort(progs, nprogs, sizeof *progs, cmp_names);

  unsigned pairs = 0, bad = 0, refused = 0;
  PairStats sum = {0};
  for (unsigned i = 0; i < nprogs; i++) {
    for (int o = 0; o <= 2; o++)
      for (int llvm = 0; llvm <= 1; llvm++) {
        char sym[4096], raw[4200];
        snprintf(sym, sizeof sym, "%s/%s/O%d/%s%s.dump-cmm", STROBE_CORPUS_DIR, progs[i], o,
                 llvm ? "llvm-backend/" : "", progs[i]);
        snprintf(raw, sizeof raw, "%s-raw", sym);
        if (!is_file(sym) || !is_file(raw)) continue;
        PairStats st;
        bool ok = compare_pair(sym, raw, &st, stdout, 10);
        pairs++;
        if (st.refused) { /* docs/cmm-syntax.md: loops/O1 holds one such chain */
          printf("%-12s O%d %-5s refused (an ambiguous bitwise expression)\n", progs[i], o,
                 llvm ? "llvm" : "ncg");
          refused++;
          continue;
        }
        printf("%-12s O%d %-5s tables %4u equal %4u aux %3u | differ %u failed %u "
               "unmatched %u/%u\n", progs[i], o, llvm ? "llvm" : "ncg", st.tables, st.equal,
               st.aux, st.differ, st.failed, st.unmatched_sym, st.unmatched_raw);
        if (!ok || !pair_clean(&st) || st.tables == 0) bad++;
        sum.tables += st.tables;
        sum.equal += st.equal;
        sum.aux += st.aux;
      }
    free(progs[i]);
  }
  printf("%u pairs: %u tables, %u equal, %u sections compared; %u pairs not clean, %u "
         "refused\n", pairs, sum.tables, sum.equal, sum.aux, bad, refused);
  assert_true(pairs - refused >= 12);
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      ARENA_TEST(test_thunk),
      ARENA_TEST(test_static_thunk_srt),
      ARENA_TEST(test_fun_static),
      ARENA_TEST(test_fun_dynamic),
      ARENA_TEST(test_fun_arg_gen),
      ARENA_TEST(test_large_bitmaps),
      ARENA_TEST(test_con),
      ARENA_TEST(test_stack),
      ARENA_TEST(test_other_reps),
      ARENA_TEST(test_raw),
      cmocka_unit_test(test_corpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
