/* symbols.c — Cmm labels to object symbols and to Haskell names, in one place.
 *
 * A dump prints a label as GHC's `-ddump-*` style prints it (`GHC.Base.map_closure`,
 * `stg_decodeDouble_Int64#`, `(,)_con_info`); GHC's object file has the symbol its
 * assembly style prints (`base_GHCziBase_map_closure`, `stg_decodeDoublezuInt64zh`,
 * `ghczmprim_GHCziTuple_Z2T_con_info`).  This file turns the one into the other, with
 * GHC 9.0.2's rules (Note [Label kinds]):
 *
 *   - A module-qualified label `M.occ_kind` is `<unit>_<M>_<occ>_kind`: the z-encoded
 *     unit id of the module's package and `_` (nothing for the unit `main`), the
 *     z-encoded module, `_`, the z-encoded name, and the label's kind suffix.  The unit
 *     comes from the package map (--package-map), else it is the unit being compiled
 *     (--this-unit, default `main`).
 *   - Built-in syntax is printed without its module (`:_con_info`, `[]_closure`,
 *     `(,)_con_info`); it belongs to ghc-prim's GHC.Types (`:`, `[]`) or GHC.Tuple
 *     (`()`, tuples; GHC.Tuple.Prim in GHC 9.6's dumps, --ghc-version, and GHC.Tuple
 *     again in 9.10's), or GHC.Classes
 *     (`(%,%)`, constraint tuples, bare in 9.6's dumps), so
 *     `[]_closure` and `GHC.Types.[]_closure` are one symbol.
 *   - A label `stg_<primop>` naming an out-of-line primop (`stg_newMutVar#`) is the
 *     RTS's code for it: GHC z-encodes the primop's whole name
 *     (`stg_decodeDouble_Int64#` -> `stg_decodeDoublezuInt64zh`).
 *   - Any other label is the RTS's or C's own name (`stg_upd_frame_info`,
 *     `stg_gc_unpt_r1`, `newCAF`), printed verbatim by GHC and kept verbatim here, or a
 *     module-internal name (`fact_rgr_closure`, `block_c1JV_info`, `i4gJ_str`), local
 *     to the object, whose characters a symbol cannot hold are z-encoded.
 *
 * Visibility follows GHC's `externallyVisibleCLabel`: module-internal labels are local,
 * and so are the info table and entry code of a data constructor's worker
 * (`Main.Cell_info`: other modules allocate with `Main.Cell_con_info` or refer to
 * `Main.Cell_closure`), in GHC 9.0's objects; every other module-qualified label is
 * global, and in 9.6's and 9.10's those too.
 *
 * Note [Label kinds]: the kind suffix is the text after the name (`_info`,
 * `_con_info`, `_closure`, …).  The dump does not mark where the name ends, so
 * `_con_info`, `_con_entry` and `_static_info` are taken as kinds only after a data
 * constructor's name (capitalised, `:`-operator or built-in syntax), where GHC uses
 * them; after any other name `_info` is the kind (`Main.x_con_info` is `x_con`'s
 * info table).  A constructor whose own name ends in `_con` (`Foo_con_info`) reads as
 * `Foo`'s constructor table: that one spelling is ambiguous in GHC's text.
 */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

typedef VEC(char) Str;

static void put(Arena *a, Str *out, const char *s) {
  for (; *s; s++) vec_push(a, out, *s);
}

static char *finish(Arena *a, Str *s) {
  vec_push(a, s, '\0');
  return s->v;
}

static bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ---- z-encoding ------------------------------------------------------------------- */

/* One code point from UTF-8 at s (n bytes left); *len gets its length.  A malformed
 * sequence stands for its first byte. */
static uint32_t utf8_char(const char *s, size_t n, size_t *len) {
  const unsigned char *u = (const unsigned char *)s;
  unsigned extra = u[0] >= 0xF0 ? 3 : u[0] >= 0xE0 ? 2 : u[0] >= 0xC0 ? 1 : 0;
  uint32_t c = extra == 3 ? u[0] & 7u : extra == 2 ? u[0] & 15u : extra == 1 ? u[0] & 31u : u[0];
  if (extra >= n) extra = 0, c = u[0];
  for (unsigned i = 1; i <= extra; i++) {
    if ((u[i] & 0xC0) != 0x80) {
      *len = 1;
      return u[0];
    }
    c = c << 6 | (u[i] & 0x3Fu);
  }
  *len = extra + 1;
  return c;
}

/* `z<hex>U`, the hex with a leading 0 if it would start with a letter. */
static void put_code(Arena *a, Str *out, uint32_t c) {
  char hex[16];
  snprintf(hex, sizeof hex, "%x", (unsigned)c);
  vec_push(a, out, 'z');
  if (hex[0] > '9') vec_push(a, out, '0');
  put(a, out, hex);
  vec_push(a, out, 'U');
}

/* The tuple code of a whole name: `()` Z0T, `(,)` Z2T, `(# #)` Z1H, `(#,#)` Z2H.  As in
 * GHC, only the start of the name is looked at; NULL if it is not a tuple. */
static const char *tuple_code(Arena *a, const char *s, size_t n) {
  if (n == 5 && memcmp(s, "(# #)", 5) == 0) return "Z1H";
  if (n == 2 && memcmp(s, "()", 2) == 0) return "Z0T";
  if (n < 2 || s[0] != '(') return NULL;
  bool unboxed = s[1] == '#';
  size_t i = unboxed ? 2 : 1, commas = 0;
  while (i < n && s[i] == ',') commas++, i++;
  if (unboxed ? i + 1 < n && s[i] == '#' && s[i + 1] == ')' : i < n && s[i] == ')')
    return arena_printf(a, "Z%zu%c", commas + 1, unboxed ? 'H' : 'T');
  return NULL;
}

/* GHC's z-encoding of one character (or UTF-8 sequence) at s; returns the bytes used. */
static size_t zencode_char(Arena *a, Str *out, const char *s, size_t n, bool first) {
  static const char from[] = "()[]:Zz&|^$=>#.<-!+'\\/*_%";
  static const char *const to[] = {"ZL", "ZR", "ZM", "ZN", "ZC", "ZZ", "zz", "za", "zb",
                                   "zc", "zd", "ze", "zg", "zh", "zi", "zl", "zm", "zn",
                                   "zp", "zq", "zr", "zs", "zt", "zu", "zv"};
  _Static_assert(sizeof from - 1 == sizeof to / sizeof *to, "one code per character");
  char c = s[0];
  if (first && c >= '0' && c <= '9') { /* a leading digit: `9pH-0.1` would not assemble */
    put_code(a, out, (unsigned char)c);
    return 1;
  }
  if (is_alnum(c) && c != 'z' && c != 'Z') {
    vec_push(a, out, c);
    return 1;
  }
  const char *k = c ? strchr(from, c) : NULL;
  if (k) {
    put(a, out, to[k - from]);
    return 1;
  }
  size_t len;
  put_code(a, out, utf8_char(s, n, &len));
  return len;
}

static void zencode(Arena *a, Str *out, const char *s, size_t n) {
  const char *t = tuple_code(a, s, n);
  if (t) {
    put(a, out, t);
    return;
  }
  for (size_t i = 0; i < n;) i += zencode_char(a, out, s + i, n - i, i == 0);
}

char *lw_zencode(Arena *a, const char *s, size_t n) {
  Str out = {0};
  zencode(a, &out, s, n);
  return finish(a, &out);
}

/* ---- the parts of a label ------------------------------------------------------------ */

/* Kind suffixes of GHC's labels, longest first where one ends another; the first three
 * only after a constructor's name (Note [Label kinds]). */
static const char *const con_suffixes[] = {"_static_info", "_static_entry", "_con_info",
                                            "_con_entry"};
static const char *const suffixes[] = {
    "_closure_tbl", "_info", "_entry", "_closure", "_slow", "_bytes", "_ct",
};

/* The length of the module prefix of a label, with its final '.', or 0: components
 * `[:]Upper[alnum_']*` each followed by '.', e.g. `GHC.Num.` of `GHC.Num.-_info`. */
static size_t module_len(const char *s, size_t n) {
  size_t i = 0, end = 0;
  while (i < n) {
    size_t j = i;
    if (j < n && s[j] == ':' && j == 0) j++;
    if (j >= n || s[j] < 'A' || s[j] > 'Z') break;
    while (j < n && (is_alnum(s[j]) || s[j] == '_' || s[j] == '\'')) j++;
    if (j >= n || s[j] != '.' || j + 1 >= n) break;
    end = i = j + 1;
  }
  return end;
}

/* Built-in syntax printed bare: the module it belongs to, or NULL. */
static const char *builtin_module(const char *occ, size_t n) {
  if ((n == 1 && occ[0] == ':') || (n == 2 && memcmp(occ, "[]", 2) == 0)) return "GHC.Types";
  if (n < 2 || occ[0] != '(' || occ[n - 1] != ')') return NULL;
  size_t i = 1, j = n - 1;
  if (occ[1] == '#') { /* (# #), (#,#), (#|#) …: unboxed tuples and sums */
    if (n < 4 || occ[n - 2] != '#') return NULL;
    i = 2, j = n - 2;
    if (j - i == 1 && occ[i] == ' ') return "GHC.Prim";
    for (size_t k = i; k < j; k++)
      if (occ[k] != ',' && occ[k] != '|' && occ[k] != '_') return NULL;
    return "GHC.Prim";
  }
  if (occ[1] == '%') { /* (%%), (%,%) …: constraint tuples, printed bare by GHC 9.6 */
    if (n < 4 || occ[n - 2] != '%') return NULL;
    for (size_t k = 2; k < n - 2; k++)
      if (occ[k] != ',') return NULL;
    return "GHC.Classes";
  }
  for (size_t k = i; k < j; k++)
    if (occ[k] != ',') return NULL;
  return "GHC.Tuple";
}

/* A data constructor's name: capitalised, a `:` operator, or built-in syntax.  (Non-ASCII
 * capitals are not recognised: GHC asks Unicode, strobe does not.) */
static bool is_constructor(const char *occ, size_t n) {
  return n > 0 && ((occ[0] >= 'A' && occ[0] <= 'Z') || occ[0] == ':' || builtin_module(occ, n));
}

static bool ends_with(const char *s, size_t n, const char *suf) {
  size_t l = strlen(suf);
  return n > l && memcmp(s + n - l, suf, l) == 0;
}

/* Splits the text after the module into name and kind; false if it has no kind. */
static bool split_kind(const char *s, size_t n, size_t *occ_n, const char **kind) {
  for (size_t i = 0; i < sizeof con_suffixes / sizeof *con_suffixes; i++)
    if (ends_with(s, n, con_suffixes[i]) && is_constructor(s, n - strlen(con_suffixes[i]))) {
      *kind = con_suffixes[i];
      *occ_n = n - strlen(*kind);
      return true;
    }
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
    if (ends_with(s, n, suffixes[i])) {
      *kind = suffixes[i];
      *occ_n = n - strlen(*kind);
      return true;
    }
  return false;
}

/* The old spelling of a label that is not a Haskell module's: symbol characters kept,
 * the rest z-encoded (`$trModule3_r1Gm_bytes` -> `zdtrModule3_r1Gm_bytes`). */
static char *verbatim(Arena *a, const char *s, size_t n) {
  Str out = {0};
  for (size_t i = 0; i < n;) {
    if (is_alnum(s[i]) || s[i] == '_') vec_push(a, &out, s[i++]);
    else i += zencode_char(a, &out, s + i, n - i, false);
  }
  return finish(a, &out);
}

/* ---- the package map ----------------------------------------------------------------- */

enum { AMBIGUOUS = UINT32_MAX };

struct LwSymbols {
  Arena *a;
  const char *this_unit;
  StrMap module_unit;           /* module -> index into unit, or AMBIGUOUS */
  StrMap unit_index;            /* unit id -> index into unit */
  VEC(const char *) unit;       /* unit ids */
  VEC(const char *) prefix;     /* their symbol prefixes: `base_`, or "" for main */
  StrMap ambiguous;             /* module -> index into units_of: "a, b" */
  VEC(const char *) units_of;
  StrMap table;                 /* label -> index into rows: the plugin's symbols tables */
  VEC(CmmSymbol) rows;
  unsigned ghc;                 /* the dump's GHC: 900 (9.0), 906 (9.6), 910 (9.10) */
};

static uint32_t intern_unit(LwSymbols *S, const char *unit, size_t n) {
  char *u = arena_strndup(S->a, unit, n);
  uint32_t i;
  if (strmap_get(&S->unit_index, u, &i)) return i;
  i = S->unit.n;
  strmap_put(&S->unit_index, S->a, u, i, NULL);
  vec_push(S->a, &S->unit, u);
  Str p = {0};
  if (strcmp(u, "main") != 0) {
    zencode(S->a, &p, u, n);
    vec_push(S->a, &p, '_');
  }
  vec_push(S->a, &S->prefix, finish(S->a, &p));
  return i;
}

LwSymbols *lw_symbols_new(const char *this_unit) {
  LwSymbols *S = calloc(1, sizeof *S);
  if (!S) internal_error("out of memory");
  S->a = arena_new();
  strmap_init(&S->module_unit, S->a, 2048);
  strmap_init(&S->unit_index, S->a, 64);
  strmap_init(&S->table, S->a, 1024);
  S->this_unit = arena_strndup(S->a, this_unit, strlen(this_unit));
  intern_unit(S, this_unit, strlen(this_unit)); /* unit 0 */
  S->ghc = 900;
  return S;
}

void lw_symbols_set_ghc(LwSymbols *S, unsigned ghc) { S->ghc = ghc; }

void lw_symbols_free(LwSymbols *S) {
  if (!S) return;
  arena_free(S->a);
  free(S);
}

size_t lw_symbols_modules(const LwSymbols *S) { return S->module_unit.n; }

/* Whether the list "a, b, c" holds w. */
static bool contains_word(const char *list, const char *w) {
  size_t n = strlen(w);
  for (const char *p = list; (p = strstr(p, w)); p++)
    if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0')) return true;
  return false;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* A Haskell module name: `Upper[alnum_']*` components joined by '.'; its length or 0. */
static size_t module_name_len(const char *s, size_t n) {
  size_t i = 0;
  for (;;) {
    if (i >= n || s[i] < 'A' || s[i] > 'Z') return 0;
    while (i < n && (is_alnum(s[i]) || s[i] == '_' || s[i] == '\'')) i++;
    if (i < n && s[i] == '.') i++;
    else return i;
  }
}

bool lw_symbols_add_map(LwSymbols *S, const CmmSource *src, Diag *d) {
  const char *t = src->text;
  size_t len = src->len;
  for (size_t line = 0; line < len;) {
    size_t eol = line;
    while (eol < len && t[eol] != '\n') eol++;
    size_t i = line;
    while (i < eol && is_space(t[i])) i++;
    if (i < eol && t[i] != '#') {
      size_t m = module_name_len(t + i, eol - i);
      if (m == 0 || (i + m < eol && !is_space(t[i + m]))) {
        diag_error(d, src, (CmmLoc)(i + m), "expected a module name (like Data.Map.Internal)");
        return false;
      }
      size_t u = i + m;
      while (u < eol && is_space(t[u])) u++;
      size_t ue = u;
      while (ue < eol && !is_space(t[ue]) && t[ue] != '#') ue++;
      if (ue == u) {
        diag_error(d, src, (CmmLoc)u, "expected the unit id of module '%.*s' (like base)",
                   (int)m, t + i);
        return false;
      }
      size_t e = ue;
      while (e < eol && is_space(t[e])) e++;
      if (e < eol) {
        diag_error(d, src, (CmmLoc)e, "expected the end of the line: a line is 'MODULE UNIT-ID'");
        return false;
      }
      char *mod = arena_strndup(S->a, t + i, m);
      uint32_t unit = intern_unit(S, t + u, ue - u), old, k;
      if (!strmap_put(&S->module_unit, S->a, mod, unit, &old) && old != unit) {
        /* Listed under two units: only an error if a label of it is used. */
        const char *units = old == AMBIGUOUS && strmap_get(&S->ambiguous, mod, &k)
                                ? S->units_of.v[k]
                                : S->unit.v[old];
        const char *now = S->unit.v[unit];
        if (old == AMBIGUOUS && !contains_word(units, now)) units = arena_printf(S->a, "%s, %s", units, now);
        else if (old != AMBIGUOUS) units = arena_printf(S->a, "%s, %s", units, now);
        strmap_put(&S->ambiguous, S->a, mod, S->units_of.n, NULL);
        vec_push(S->a, &S->units_of, units);
        strmap_put(&S->module_unit, S->a, mod, AMBIGUOUS, NULL);
      }
    }
    line = eol + 1;
  }
  return true;
}

/* ---- the plugin's symbols table ------------------------------------------------------- */

bool lw_symbols_add_table(LwSymbols *S, const CmmFile *f, Diag *d) {
  for (uint32_t i = 0; i < f->nsymbols; i++) {
    const CmmSymbol *r = &f->symbols[i];
    uint32_t k;
    if (strmap_get(&S->table, r->label, &k)) {
      if (strcmp(S->rows.v[k].symbol, r->symbol) == 0 && S->rows.v[k].global == r->global) continue;
      diag_error(d, f->src, r->loc,
                 "label '%s' is symbol '%s' here, but another input made it '%s'", r->label,
                 r->symbol, S->rows.v[k].symbol);
      return false;
    }
    CmmSymbol row = {.label = arena_strndup(S->a, r->label, strlen(r->label)),
                     .symbol = arena_strndup(S->a, r->symbol, strlen(r->symbol)),
                     .global = r->global};
    strmap_put(&S->table, S->a, row.label, S->rows.n, NULL);
    vec_push(S->a, &S->rows, row);
  }
  return true;
}

/* ---- labels to symbols ----------------------------------------------------------------- */

/* Note [Symbols from the table]: a label in a symbols table gets the table's symbol,
 * GHC's own, which needs no package map and no reading of the label's spelling.  The
 * exception is a symbol GHC makes assembler-local (`.Lr2X3_closure`), which is no
 * symbol at all in GHC's object: strobe's is local, and keeps the name the label's
 * spelling gives it (`zdwhotA_r2X3_closure`, the Haskell name), which profiles and
 * debuggers show, and which split.c's parts link through. */
static bool from_table(const LwSymbols *S, Arena *a, const char *label, LwSymbol *out) {
  uint32_t k;
  if (!S || !S->table.n || !strmap_get(&S->table, label, &k)) return false;
  const CmmSymbol *r = &S->rows.v[k];
  if (!r->global && strncmp(r->symbol, ".L", 2) == 0) return false;
  out->symbol = r->symbol;
  out->global = r->global;
  size_t m = module_len(label, strlen(label));
  out->module = m ? arena_strndup(a, label, m - 1) : NULL;
  return true;
}

bool lw_resolve(const LwSymbols *S, Arena *a, const char *label, LwSymbol *out, const char **why) {
  size_t n = strlen(label), m = module_len(label, n), occ_n;
  const char *kind, *occ = label + m, *module = NULL;
  out->global = false;
  out->module = NULL;
  if (from_table(S, a, label, out)) return true; /* Note [Symbols from the table] */
  if (m == 0) {
    if (strncmp(label, "stg_", 4) == 0 && strchr(label, '#')) { /* an out-of-line primop */
      Str s = {0};
      put(a, &s, "stg_");
      zencode(a, &s, label + 4, n - 4);
      out->symbol = finish(a, &s);
      out->global = true;
      return true;
    }
    bool syntax = label[0] == ':' || label[0] == '[' || label[0] == '(';
    if (!syntax) { /* the RTS's, C's, or a module-internal name */
      out->symbol = verbatim(a, label, n);
      return true;
    }
    if (!split_kind(label, n, &occ_n, &kind) || !(module = builtin_module(label, occ_n))) {
      *why = arena_printf(a,
                          "cannot resolve label '%s': it is not a module's name, built-in "
                          "syntax of GHC.Types or GHC.Tuple, or a name of the RTS",
                          label);
      return false;
    }
    /* GHC 9.6 moved the tuples to GHC.Tuple.Prim (GHC.Tuple re-exports them), and 9.10
     * back to GHC.Tuple. */
    if (strcmp(module, "GHC.Tuple") == 0 && S && S->ghc >= 906 && S->ghc < 910)
      module = "GHC.Tuple.Prim";
  } else {
    if (!split_kind(occ, n - m, &occ_n, &kind)) {
      const char *block = strrchr(label, '_');
      if (block && block > occ && split_kind(occ, (size_t)(block - occ), &occ_n, &kind)) {
        /* `Main.fact_entry_c1JV`: strobe's name for a proc point of that code. */
        out->symbol = verbatim(a, label, n);
        return true;
      }
      *why = arena_printf(a,
                          "cannot resolve label '%s' of module '%.*s': the name has no kind "
                          "suffix (_info, _closure, _entry, …)",
                          label, (int)(m - 1), label);
      return false;
    }
    module = arena_strndup(a, label, m - 1);
  }
  uint32_t unit = 0;
  if (S && strmap_get(&S->module_unit, module, &unit) && unit == AMBIGUOUS) {
    uint32_t k = 0;
    strmap_get(&S->ambiguous, module, &k);
    *why = arena_printf(a,
                        "cannot resolve label '%s': its module '%s' is in several units of the "
                        "package map (%s)",
                        label, module, S->units_of.v[k]);
    return false;
  }
  Str s = {0};
  if (S) put(a, &s, S->prefix.v[unit]);
  zencode(a, &s, module, strlen(module));
  vec_push(a, &s, '_');
  zencode(a, &s, occ, occ_n);
  put(a, &s, kind);
  out->symbol = finish(a, &s);
  out->module = module;
  /* A constructor worker's info table and entry are local (LocalInfoTable) in GHC 9.0's
   * objects, global in 9.6's. */
  out->global = (S && S->ghc >= 906) ||
                !(is_constructor(occ, occ_n) && (strcmp(kind, "_info") == 0 || strcmp(kind, "_entry") == 0));
  return true;
}

char *lw_symbol(Arena *a, const char *label) {
  LwSymbol s;
  const char *why;
  if (lw_resolve(NULL, a, label, &s, &why)) return (char *)s.symbol;
  return verbatim(a, label, strlen(label));
}

CmmLoc lw_label_loc(const CmmSource *src, const char *label) {
  size_t n = strlen(label);
  for (const char *p = src->text; (p = strstr(p, label)); p++) {
    char after = p[n];
    if (!(is_alnum(after) || after == '_' || after == '#' || after == '\'' || after == '.'))
      return (CmmLoc)(p - src->text);
  }
  return 0;
}

/* ---- Haskell names ------------------------------------------------------------------- */

static size_t suffix_len(const char *s, size_t n) {
  size_t occ_n;
  const char *kind;
  if (split_kind(s, n, &occ_n, &kind)) return n - occ_n;
  for (const char *const *k = (const char *const[]){"_fast", "_ret", "_srt", "_str", NULL}; *k; k++)
    if (ends_with(s, n, *k)) return strlen(*k);
  return 0;
}

char *lw_label_module(Arena *a, const char *label) {
  size_t m = module_len(label, strlen(label));
  return m ? arena_strndup(a, label, m - 1) : NULL;
}

char *lw_haskell_name(Arena *a, const char *label, const char *module) {
  size_t n = strlen(label), m = module_len(label, n);
  const char *occ = label + m;
  size_t occ_n = n - m - suffix_len(label + m, n - m);
  if (m) return arena_strndup(a, label, m + occ_n); /* `Main.fact` */
  /* A module-internal top-level name carries its unique: `fact_rgr` is `fact`. */
  for (size_t i = occ_n; i > 1; i--)
    if (occ[i - 1] == '_' && i < occ_n && occ[i] == 'r') {
      occ_n = i - 1;
      break;
    } else if (!((occ[i - 1] | 32) >= 'a' && (occ[i - 1] | 32) <= 'z') &&
               !(occ[i - 1] >= '0' && occ[i - 1] <= '9')) {
      break;
    }
  return module ? arena_printf(a, "%s.%.*s", module, (int)occ_n, occ)
                : arena_strndup(a, occ, occ_n);
}
