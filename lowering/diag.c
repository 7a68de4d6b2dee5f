/* diag.c — diagnostics a person can act on.
 *
 * User errors: `file:line:col: error: message`, then the source line and a caret under
 * the column, as cproc and chibicc print them.  The sink counts; the caller decides.
 * Internal errors are strobe's own bugs: strobe's file and line, exit status 70. */
#define _POSIX_C_SOURCE 200809L
#include "cmm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static CmmSource *source_new(const char *name, char *text, size_t len) {
  CmmSource *s = calloc(1, sizeof *s);
  if (!s) internal_error("out of memory");
  s->name = strdup(name);
  s->text = text;
  s->len = len;
  uint32_t cap = 1024, n = 0;
  uint32_t *starts = malloc(cap * sizeof *starts);
  if (!starts || !s->name) internal_error("out of memory");
  starts[n++] = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '\n') continue;
    if (n == cap) {
      cap *= 2;
      starts = realloc(starts, cap * sizeof *starts);
      if (!starts) internal_error("out of memory");
    }
    starts[n++] = (uint32_t)(i + 1);
  }
  s->line_starts = starts;
  s->nlines = n;
  return s;
}

CmmSource *cmm_source_from_memory(const char *name, const char *text, size_t len) {
  char *copy = malloc(len + 1);
  if (!copy) internal_error("out of memory");
  memcpy(copy, text, len);
  copy[len] = '\0';
  return source_new(name, copy, len);
}

CmmSource *cmm_source_read(const char *path, Diag *d) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    diag_tool_error(d, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) internal_error("out of memory");
  for (;;) {
    if (cap - len < 4096) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) internal_error("out of memory");
    }
    size_t got = fread(buf + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  bool bad = ferror(f);
  if (f != stdin) fclose(f);
  if (bad || len > UINT32_MAX - 1) {
    diag_tool_error(d, "cannot read '%s': %s", path, bad ? strerror(errno) : "file larger than 4 GiB");
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  return source_new(strcmp(path, "-") == 0 ? "<stdin>" : path, buf, len);
}

void cmm_source_free(CmmSource *s) {
  if (!s) return;
  free((char *)s->name);
  free((char *)s->text);
  free(s->line_starts);
  free(s);
}

void cmm_source_linecol(const CmmSource *s, CmmLoc loc, uint32_t *line, uint32_t *col) {
  uint32_t lo = 0, hi = s->nlines; /* the last line start <= loc */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (s->line_starts[mid] <= loc) lo = mid;
    else hi = mid;
  }
  *line = lo + 1;
  /* Columns count characters, not bytes: UTF-8 continuation bytes don't advance. */
  uint32_t c = 1;
  for (uint32_t i = s->line_starts[lo]; i < loc && i < s->len; i++)
    if (((unsigned char)s->text[i] & 0xC0) != 0x80) c++;
  *col = c;
}

static void report(Diag *d, const char *what, const CmmSource *s, CmmLoc loc,
                   const char *fmt, va_list ap) {
  if (!d->out) return;
  uint32_t line, col;
  cmm_source_linecol(s, loc, &line, &col);
  fprintf(d->out, "%s:%u:%u: %s: ", s->name, line, col, what);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  /* The source line (tabs kept so the caret lines up), then the caret.  A very long
   * line is cut to a window around the column. */
  enum { WINDOW = 160 };
  const char *start = s->text + s->line_starts[line - 1];
  const char *at = s->text + (loc < s->len ? loc : s->len);
  const char *end = start;
  while (end < s->text + s->len && *end != '\n' && *end != '\r') end++;
  const char *from = start, *to = end;
  if (end - start > WINDOW) {
    if (at - from > WINDOW / 2) from = at - WINDOW / 2;
    if (to - from > WINDOW) to = from + WINDOW;
  }
  while (from > start && ((unsigned char)*from & 0xC0) == 0x80) from--; /* whole characters */
  while (to < end && ((unsigned char)*to & 0xC0) == 0x80) to++;
  const char *dots = from > start ? "..." : "";
  fputs(dots, d->out);
  fwrite(from, 1, (size_t)(to - from), d->out);
  fprintf(d->out, "%s\n", to < end ? "..." : "");
  fputs(dots, d->out);
  for (const char *p = from; p < at && p < to; p++)
    if (((unsigned char)*p & 0xC0) != 0x80) fputc(*p == '\t' ? '\t' : ' ', d->out);
  fputs("^\n", d->out);
}

void diag_verror(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, va_list ap) {
  d->errors++;
  report(d, "error", s, loc, fmt, ap);
}

void diag_error(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_verror(d, s, loc, fmt, ap);
  va_end(ap);
}

void diag_refusal(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...) {
  d->refusals++;
  va_list ap;
  va_start(ap, fmt);
  diag_verror(d, s, loc, fmt, ap);
  va_end(ap);
}

void diag_warning(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...) {
  d->warnings++;
  if (d->no_warnings) return;
  va_list ap;
  va_start(ap, fmt);
  report(d, "warning", s, loc, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(d, "note", s, loc, fmt, ap);
  va_end(ap);
}

void diag_tool_error(Diag *d, const char *fmt, ...) {
  d->errors++;
  if (!d->out) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("strobec: error: ", d->out);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  va_end(ap);
}

_Noreturn void internal_error_at(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: internal error: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputs("\nthis is a bug in strobe; please report it with the input that caused it\n", stderr);
  va_end(ap);
  exit(70);
}
