/* symbols.c — Cmm labels to object symbols and to Haskell names, in one place.
 *
 * A dump prints labels without their package (`GHC.Num.$fNumInteger_closure`, whose
 * object symbol is `base_GHCziNum_zdfNumInteger_closure`), so the symbols here are what
 * GHC would print for a module of the main package:
 *
 *   - a module-qualified label is GHC's z-encoding of the module, `_`, the z-encoding of
 *     the name, and the label's kind suffix: `Main.$wgo_info` -> `Main_zdwgo_info`,
 *     `GHC.Types.[]_closure` -> `GHCziTypes_ZMZN_closure`, `:Main.main_info` ->
 *     `ZCMain_main_info`;
 *   - any other label (the RTS's `stg_upd_frame_info`, C's `printf`, a module-internal
 *     `fact_rgr_closure`) keeps its spelling, with only the characters a symbol cannot
 *     hold z-encoded (`$trModule3_r1Gm_bytes` -> `zdtrModule3_r1Gm_bytes`).
 *
 * Linking against GHC's own libraries needs the package too (a later phase): it goes
 * here, and nowhere else.
 */
#include "lower.h"

#include <string.h>

/* Kind suffixes of GHC's code and data labels, longest first where one ends another. */
static const char *const suffixes[] = {
    "_static_info", "_static_entry", "_con_info", "_con_entry", "_closure_tbl",
    "_info", "_entry", "_closure", "_slow", "_fast", "_ret", "_srt", "_str", "_bytes",
};

static size_t suffix_len(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    size_t l = strlen(suffixes[i]);
    if (n > l && memcmp(s + n - l, suffixes[i], l) == 0) return l;
  }
  return 0;
}

/* The length of the module prefix of a label, with its final '.', or 0: components
 * `[:]Upper[alnum_']*` each followed by '.', e.g. `GHC.Num.` of `GHC.Num.-_info`. */
static size_t module_len(const char *s, size_t n) {
  size_t i = 0, end = 0;
  while (i < n) {
    size_t j = i;
    if (j < n && s[j] == ':' && j == 0) j++;
    if (j >= n || s[j] < 'A' || s[j] > 'Z') break;
    while (j < n && (((s[j] | 32) >= 'a' && (s[j] | 32) <= 'z') || (s[j] >= '0' && s[j] <= '9') ||
                     s[j] == '_' || s[j] == '\''))
      j++;
    if (j >= n || s[j] != '.' || j + 1 >= n) break;
    end = i = j + 1;
  }
  return end;
}

typedef VEC(char) Str;

static void put(Arena *a, Str *out, const char *s) {
  for (; *s; s++) vec_push(a, out, *s);
}

/* GHC's z-encoding (GHC.Utils.Encoding): letters and digits stand for themselves except
 * z and Z, which double; symbols become z- or Z-escapes; tuples become Z<n>T.  With
 * full false, only what a symbol cannot hold is encoded (z, Z and _ stay). */
static void zencode(Arena *a, Str *out, const char *s, size_t n, bool full) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '(' || c == '[') { /* (,,) -> Z3T, () -> Z0T, [] -> ZMZN handled below */
      size_t j = i + 1, commas = 0;
      while (c == '(' && j < n && s[j] == ',') commas++, j++;
      if (c == '(' && j < n && s[j] == ')') {
        char buf[32];
        snprintf(buf, sizeof buf, "Z%zuT", commas ? commas + 1 : 0);
        put(a, out, buf);
        i = j;
        continue;
      }
    }
    static const char from[] = "zZ()[]:&|^$=>#.<-!+'\\/*%_,";
    static const char *const to[] = {"zz", "ZZ", "ZL", "ZR", "ZM", "ZN", "ZC", "za", "zb",
                                     "zc", "zd", "ze", "zg", "zh", "zi", "zl", "zm", "zn",
                                     "zp", "zq", "zr", "zs", "zt", "zv", "zu", "ZC"};
    const char *k = c ? strchr(from, c) : NULL;
    bool symbol_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_';
    if (k && (full || !symbol_char)) {
      put(a, out, to[k - from]);
    } else if (symbol_char) {
      vec_push(a, out, c);
    } else { /* anything else: its code, as GHC does (z<hex>U) */
      char buf[16];
      snprintf(buf, sizeof buf, "z%02xU", (unsigned char)c);
      put(a, out, buf);
    }
  }
}

static char *finish(Arena *a, Str *s) {
  vec_push(a, s, '\0');
  return s->v;
}

char *lw_symbol(Arena *a, const char *label) {
  size_t n = strlen(label), m = module_len(label, n), suf = suffix_len(label, n);
  Str out = {0};
  if (m == 0 || m + suf >= n) {
    zencode(a, &out, label, n, false);
    return finish(a, &out);
  }
  zencode(a, &out, label, m - 1, true); /* the module, without its final '.' */
  vec_push(a, &out, '_');
  zencode(a, &out, label + m, n - m - suf, true);
  put(a, &out, label + n - suf);
  return finish(a, &out);
}

char *lw_label_module(Arena *a, const char *label) {
  size_t m = module_len(label, strlen(label));
  return m ? arena_strndup(a, label, m - 1) : NULL;
}

char *lw_haskell_name(Arena *a, const char *label, const char *module) {
  size_t n = strlen(label), m = module_len(label, n), suf = suffix_len(label, n);
  const char *occ = label + m;
  size_t occ_n = n - m - suf;
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
