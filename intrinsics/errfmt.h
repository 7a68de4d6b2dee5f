/* errfmt.h — the one formatter of strobe's error messages (docs/design.md, "Parts").
 *
 * Library code never prints: a phase that fails without a source location (emit.c,
 * infotable.c, plugin/instrument.c) formats its message with strobe_fail into a
 * malloc'd string and returns false; the caller decides where it goes (strobec hands it
 * to its Diag, diag_tool_error; opt's plugin to LLVM's error stream).  Messages with a
 * location go through diag.c's Diag instead.  Header-only, so that the plugin, which
 * links nothing of strobe's, shares it.  C17. */
#ifndef STROBE_ABI_ERRFMT_H
#define STROBE_ABI_ERRFMT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Sets *error (if error is not NULL) to the formatted message, malloc'd (NULL if memory
 * runs out); returns false. */
static inline bool strobe_vfail(char **error, const char *fmt, va_list ap) {
  if (!error) return false;
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  *error = n < 0 ? NULL : malloc((size_t)n + 1);
  if (*error) vsnprintf(*error, (size_t)n + 1, fmt, again);
  va_end(again);
  return false;
}

static inline bool strobe_fail(char **error, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline bool strobe_fail(char **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strobe_vfail(error, fmt, ap);
  va_end(ap);
  return false;
}

#endif
