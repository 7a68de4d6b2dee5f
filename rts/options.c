/* options.c — STROBE_OPTIONS: `key=value` entries separated by commas, each key a row
 * of strobe/options.def.  A value's KIND names its parser (parse_<KIND>) and how its
 * default is shown (show_<KIND>). */
#include "strobe/rt.h"

#include <stdbool.h>
#include <string.h>

/* Digits, then an optional K, M or G (KiB, MiB, GiB; either case); at least 1. */
static bool parse_size(const char *s, size_t n, size_t *out) {
  size_t unit = 1;
  if (n > 0) {
    switch (s[n - 1]) {
    case 'K': case 'k': unit = (size_t)1 << 10; break;
    case 'M': case 'm': unit = (size_t)1 << 20; break;
    case 'G': case 'g': unit = (size_t)1 << 30; break;
    }
    if (unit != 1) n--;
  }
  if (n == 0) return false;
  size_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    size_t d = (size_t)(s[i] - '0');
    if (v > (SIZE_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (v == 0 || v > SIZE_MAX / unit) return false;
  *out = v * unit;
  return true;
}

static void show_size(FILE *out, size_t v) {
  if (v % ((size_t)1 << 20) == 0) fprintf(out, "%zuM", v >> 20);
  else if (v % ((size_t)1 << 10) == 0) fprintf(out, "%zuK", v >> 10);
  else fprintf(out, "%zu", v);
}

/* Digits only, 0 to UINT32_MAX. */
static bool parse_count(const char *s, size_t n, uint32_t *out) {
  if (n == 0) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > UINT32_MAX) return false;
  }
  *out = (uint32_t)v;
  return true;
}

static void show_count(FILE *out, uint32_t v) { fprintf(out, "%u", v); }

static bool parse_bool(const char *s, size_t n, bool *out) {
  static const struct { const char *word; bool value; } words[] = {
      {"1", true},  {"yes", true}, {"true", true},   {"on", true},
      {"0", false}, {"no", false}, {"false", false}, {"off", false},
  };
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    if (strlen(words[i].word) == n && memcmp(s, words[i].word, n) == 0) {
      *out = words[i].value;
      return true;
    }
  }
  return false;
}

static void show_bool(FILE *out, bool v) { fputs(v ? "yes" : "no", out); }

/* Any bytes but a comma (which ends the entry), at most 1023; empty is none. */
static bool parse_path(const char *s, size_t n, StrobePath *out) {
  if (n >= sizeof out->path || memchr(s, 0, n)) return false;
  memcpy(out->path, s, n);
  out->path[n] = 0;
  return true;
}

static void show_path(FILE *out, StrobePath v) { fputs(v.path[0] ? v.path : "none", out); }

/* Applies the entry e[0..n), which is not empty. */
static bool apply(StrobeOptions *o, const char *e, size_t n) {
  const char *eq = memchr(e, '=', n);
  if (!eq) return false;
  size_t klen = (size_t)(eq - e);
#define STROBE_OPTION(name, kind, dflt, help)                                          \
  if (klen == sizeof #name - 1 && memcmp(e, #name, klen) == 0)                         \
    return parse_##kind(eq + 1, n - klen - 1, &o->name);
#include "strobe/options.def"
#undef STROBE_OPTION
  return false;
}

const char *strobe_options_parse(const char *text, StrobeOptions *opts) {
  StrobeOptions o = {
#define STROBE_OPTION(name, kind, dflt, help) .name = (dflt),
#include "strobe/options.def"
#undef STROBE_OPTION
  };
  for (const char *p = text ? text : ""; *p;) {
    size_t n = strcspn(p, ",");
    if (n > 0 && !apply(&o, p, n)) return p; /* empty entries (`a=1,,b=2`) are skipped */
    p += n + (p[n] == ',');
  }
  *opts = o;
  return NULL;
}

void strobe_options_describe(FILE *out) {
  fputs("STROBE_OPTIONS is key=value entries separated by commas (a size is bytes, "
        "with an optional K, M or G suffix; a count is a decimal number; a bool is "
        "1, yes, true, on, 0, no, false or off; a path is a file name without a comma):\n", out);
#define STROBE_OPTION(name, kind, dflt, help)                                          \
  fprintf(out, "  %-22s %s (default ", #name "=<" #kind ">", help);                    \
  show_##kind(out, dflt);                                                              \
  fputs(")\n", out);
#include "strobe/options.def"
#undef STROBE_OPTION
}
