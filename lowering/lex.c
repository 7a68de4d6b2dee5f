/* lex.c — GHC's Cmm text into tokens.
 *
 * GHC prints Cmm for people, not for parsers, and its labels may hold almost any
 * symbol (`GHC.Classes.==_info`, `GHC.Types.[]_closure+1`, `(,)_con_info`).  What
 * works over every dump: binary operators are always surrounded by spaces, so a NAME
 * is a maximal run of label characters, and the parser classifies the run (label,
 * register, number, operator).  A run may also hold GHC's built-in syntax, in any
 * number and order, when a label character follows them (Note [Built-in syntax in
 * names]).  Three things are line-based: a
 * `//` comment runs to the end of its line, a `====` title fills its line, and the
 * timestamp after a title is taken as a line by the parser (cmm_lex_line).
 */
#include "cmm.h"

#include <string.h>

void cmm_lex_init(CmmLexer *lx, const CmmSource *src, Diag *d) {
  lx->src = src;
  lx->p = src->text;
  lx->end = src->text + src->len;
  lx->d = d;
}

/* Bytes of UTF-8 sequences count too: Haskell names may be Unicode, and foreign-call
 * hints print as ‘signed’ (or `signed' in the C locale). */
#define SYM(c) [c] = true
static const bool label_chars[256] = {
    SYM('_'), SYM('$'), SYM('.'), SYM('#'), SYM('\''), SYM('!'), SYM('%'), SYM('&'),
    SYM('*'), SYM('+'), SYM('/'), SYM('<'), SYM('='), SYM('>'), SYM('?'), SYM('@'),
    SYM('\\'), SYM('^'), SYM('|'), SYM('~'), SYM(':'), SYM('-'), SYM('`'),
#define RANGE4(c) SYM(c), SYM(c + 1), SYM(c + 2), SYM(c + 3)
#define RANGE16(c) RANGE4(c), RANGE4(c + 4), RANGE4(c + 8), RANGE4(c + 12)
    RANGE4('0'), RANGE4('4'), SYM('8'), SYM('9'),
    RANGE16('A'), RANGE4('A' + 16), RANGE4('A' + 20), SYM('Y'), SYM('Z'),
    RANGE16('a'), RANGE4('a' + 16), RANGE4('a' + 20), SYM('y'), SYM('z'),
    RANGE16(0x80), RANGE16(0x90), RANGE16(0xA0), RANGE16(0xB0),
    RANGE16(0xC0), RANGE16(0xD0), RANGE16(0xE0), RANGE16(0xF0),
};

bool cmm_is_label_char(int c) { return c >= 0 && c < 256 && label_chars[c]; }

/* Note [Built-in syntax in names]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * GHC 9.0 spells these names of built-in syntax with brackets (GHC.Builtin.Types,
 * mkTupleStr and mkConstraintTupleStr; listTyCon):
 *     []                       the list
 *     () (,) (,,) …            the unit and the tuples
 *     (##) (#,#) (#,,#) …      the unboxed unit and unboxed tuples
 *     (%%) (%,%) (%,,%) …      the constraint unit and constraint tuples
 * (the one-tuples are Solo, Solo# and Solo%, and the unboxed sums Sum2# …: plain
 * label characters).  A name holds them wherever GHC glues names together: an
 * instance's dictionary names its class and each argument's type constructor
 * (`$fRegexContextRegex[][]`, `$fPair()[]`, `$fC[](,,)`), a Typeable
 * representation its type constructor (`GHC.Types.$tc(##)`, `$tc'(,)`), a class
 * its data constructor (`GHC.Classes.C:(%,%)`).  None of them is ever followed by a
 * label character where it is punctuation (`foo() {`, `I8[] "…"`, `hints: [] (…)`),
 * so a run of groups is part of a name exactly when a label character follows the
 * run. */

/* One group of built-in syntax at p, or 0. */
static size_t group_len(const char *p, const char *end) {
  const char *q = p;
  if (*q == '[') return q + 1 < end && q[1] == ']' ? 2 : 0;
  if (*q != '(') return 0;
  q++;
  char inner = q < end && (*q == '#' || *q == '%') ? *q++ : 0; /* unboxed, constraint */
  while (q < end && *q == ',') q++;
  if (inner && (q >= end || *q++ != inner)) return 0;
  return q < end && *q == ')' ? (size_t)(q + 1 - p) : 0;
}

/* A run of groups followed by a label character: part of a name; its length, or 0. */
static size_t builtin_syntax_len(const char *p, const char *end) {
  const char *q = p;
  for (size_t n; q < end && (n = group_len(q, end)) != 0;) q += n;
  return q > p && q < end && cmm_is_label_char((unsigned char)*q) ? (size_t)(q - p) : 0;
}

static bool at_line_start(const CmmLexer *lx, const char *p) {
  return p == lx->src->text || p[-1] == '\n';
}

static const char *line_end(const CmmLexer *lx, const char *p) {
  const char *e = memchr(p, '\n', (size_t)(lx->end - p));
  return e ? e : lx->end;
}

static CmmToken make(const CmmLexer *lx, int kind, const char *p, size_t len) {
  return (CmmToken){.kind = (uint8_t)kind, .loc = (CmmLoc)(p - lx->src->text),
                    .len = (uint32_t)len, .p = p};
}

/* A comment starts with `//` followed by a space, `tick` or the end of the line;
 * otherwise `//` begins a label (the operator `//` is a Haskell name too). */
static bool is_comment(const CmmLexer *lx, const char *p) {
  if (lx->end - p < 2 || p[0] != '/' || p[1] != '/') return false;
  const char *q = p + 2;
  return q == lx->end || *q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' ||
         (lx->end - q >= 4 && memcmp(q, "tick", 4) == 0);
}

CmmToken cmm_lex_next(CmmLexer *lx) {
  const char *p = lx->p;
  while (p < lx->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  if (p >= lx->end) {
    lx->p = p;
    return make(lx, TK_EOF, p, 0);
  }

  /* ==================== Output Cmm ==================== */
  if (*p == '=' && at_line_start(lx, p) && lx->end - p >= 20 &&
      memcmp(p, "====================", 20) == 0) {
    const char *e = line_end(lx, p);
    const char *t = p + 20, *te = e;
    while (te > t && (te[-1] == '\r' || te[-1] == '=' )) te--;
    while (t < te && *t == ' ') t++;
    while (te > t && te[-1] == ' ') te--;
    lx->p = e;
    CmmToken tok = make(lx, TK_TITLE, t, (size_t)(te - t));
    tok.loc = (CmmLoc)(p - lx->src->text);
    return tok;
  }

  if (is_comment(lx, p)) {
    const char *e = line_end(lx, p);
    const char *te = e;
    if (te > p + 2 && te[-1] == '\r') te--;
    lx->p = e;
    return make(lx, TK_COMMENT, p + 2, (size_t)(te - p - 2));
  }

  if (*p == '"') {
    const char *q = p + 1;
    while (q < lx->end && *q != '"' && *q != '\n') q += (*q == '\\' && q + 1 < lx->end) ? 2 : 1;
    if (q >= lx->end || *q != '"') {
      diag_error(lx->d, lx->src, (CmmLoc)(p - lx->src->text),
                 "unterminated string literal");
      lx->p = lx->end;
      return make(lx, TK_ERROR, p, 1);
    }
    lx->p = q + 1;
    return make(lx, TK_STRING, p, (size_t)(q + 1 - p));
  }

  size_t tl;
  if (cmm_is_label_char((unsigned char)*p) || builtin_syntax_len(p, lx->end) != 0) {
    const char *q = p;
    for (;;) {
      if (q < lx->end && cmm_is_label_char((unsigned char)*q)) q++;
      else if (q < lx->end && (tl = builtin_syntax_len(q, lx->end)) != 0) q += tl;
      else break;
    }
    lx->p = q;
    return make(lx, TK_NAME, p, (size_t)(q - p));
  }

  static const char punct[] = "()[]{},;";
  static const uint8_t kinds[] = {TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET,
                                  TK_LBRACE, TK_RBRACE, TK_COMMA, TK_SEMI};
  const char *k = *p ? strchr(punct, *p) : NULL;
  if (k) {
    lx->p = p + 1;
    return make(lx, kinds[k - punct], p, 1);
  }

  unsigned char c = (unsigned char)*p;
  if (c >= 0x20 && c < 0x7f)
    diag_error(lx->d, lx->src, (CmmLoc)(p - lx->src->text), "unexpected character '%c'", c);
  else
    diag_error(lx->d, lx->src, (CmmLoc)(p - lx->src->text),
               "unexpected byte 0x%02x", c);
  lx->p = p + 1;
  return make(lx, TK_ERROR, p, 1);
}

CmmToken cmm_lex_line(CmmLexer *lx) {
  const char *p = lx->p;
  /* Skip the end of the current line, then take the next one. */
  while (p < lx->end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
  if (p < lx->end && *p == '\n') p++;
  const char *e = line_end(lx, p);
  const char *te = e;
  if (te > p && te[-1] == '\r') te--;
  lx->p = e;
  return make(lx, TK_NAME, p, (size_t)(te - p));
}

/* ---- Haskell string literals ----------------------------------------------------- */

static const char *const ascii_names[] = {
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF",
    "VT",  "FF",  "CR",  "SO",  "SI",  "DLE", "DC1", "DC2", "DC3", "DC4", "NAK",
    "SYN", "ETB", "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",  "US",  "SP"};

bool cmm_decode_string(const CmmSource *src, CmmToken t, Arena *a, Diag *d,
                       uint8_t **bytes, uint32_t *len) {
  uint8_t *out = arena_alloc(a, t.len + 1);
  uint32_t n = 0;
  const char *p = t.p + 1, *end = t.p + t.len - 1;
  while (p < end) {
    unsigned char c = (unsigned char)*p;
    if (c != '\\') {
      out[n++] = c;
      p++;
      continue;
    }
    const char *esc = p++;
    if (p >= end) goto bad;
    c = (unsigned char)*p;
    const char *simple = strchr("abfnrtv\\\"'", c);
    if (c && simple) {
      static const char values[] = "\a\b\f\n\r\t\v\\\"'";
      out[n++] = (uint8_t)values[simple - "abfnrtv\\\"'"];
      p++;
    } else if (c == '&') {
      p++; /* an empty escape, separating a numeric escape from a digit */
    } else if (c >= '0' && c <= '9') {
      unsigned long v = 0;
      while (p < end && *p >= '0' && *p <= '9' && v <= 0x10FFFF) v = v * 10 + (unsigned)(*p++ - '0');
      if (v > 255) {
        diag_error(d, src, (CmmLoc)(esc - src->text),
                   "character \\%lu in a string literal is not a byte", v);
        return false;
      }
      out[n++] = (uint8_t)v;
    } else if (c == 'x' || c == 'o') {
      unsigned base = c == 'x' ? 16 : 8, v = 0, digits = 0;
      p++;
      for (; p < end; p++, digits++) {
        int dv = *p >= '0' && *p <= '9' ? *p - '0'
                 : base == 16 && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                 : base == 16 && *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
        if (dv < 0 || dv >= (int)base) break;
        v = v * base + (unsigned)dv;
        if (v > 255) {
          diag_error(d, src, (CmmLoc)(esc - src->text),
                     "character escape in a string literal is not a byte");
          return false;
        }
      }
      if (!digits) goto bad;
      out[n++] = (uint8_t)v;
    } else if (c == '^' && p + 1 < end && p[1] >= '@' && p[1] <= '_') {
      out[n++] = (uint8_t)(p[1] - '@');
      p += 2;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
      if (p >= end || *p != '\\') goto bad; /* a string gap ends with a backslash */
      p++;
    } else {
      /* \SOH before \SO: take the longest name that matches. */
      size_t best = 0;
      int which = -1;
      for (int i = 0; i < (int)(sizeof ascii_names / sizeof *ascii_names); i++) {
        size_t l = strlen(ascii_names[i]);
        if (l > best && (size_t)(end - p) >= l && memcmp(p, ascii_names[i], l) == 0) {
          best = l;
          which = i;
        }
      }
      if (which < 0) {
        if ((size_t)(end - p) >= 3 && memcmp(p, "DEL", 3) == 0) { best = 3; which = 127; }
        else goto bad;
      }
      out[n++] = (uint8_t)(which == 32 ? ' ' : which);
      p += best;
    }
    continue;
  bad:
    diag_error(d, src, (CmmLoc)(esc - src->text), "malformed escape in string literal");
    return false;
  }
  *bytes = out;
  *len = n;
  return true;
}

void cmm_print_string(FILE *out, const uint8_t *bytes, uint32_t len) {
  fputc('"', out);
  for (uint32_t i = 0; i < len; i++) {
    uint8_t c = bytes[i];
    bool next_digit = i + 1 < len && bytes[i + 1] >= '0' && bytes[i + 1] <= '9';
    if (c > 127) {
      fprintf(out, "\\%u%s", c, next_digit ? "\\&" : "");
    } else if (c == 127) {
      fputs("\\DEL", out);
    } else if (c == '\\') {
      fputs("\\\\", out);
    } else if (c == '"') {
      fputs("\\\"", out);
    } else if (c >= ' ') {
      fputc(c, out);
    } else if (c >= '\a' && c <= '\r') {
      fputc('\\', out);
      fputc("abtnvfr"[c - '\a'], out);
    } else if (c == 14) {
      fputs(i + 1 < len && bytes[i + 1] == 'H' ? "\\SO\\&" : "\\SO", out);
    } else {
      fprintf(out, "\\%s", ascii_names[c]);
    }
  }
  fputc('"', out);
}
