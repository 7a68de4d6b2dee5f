/* span.h — a source span and strobe's one rule for comparing two (docs/design.md,
 * "Tick scopes and source notes").
 *
 * A span is GHC's `src<file:(line1,col1)-(line2,col2)>` without its file: lines and
 * columns as printed, both ends inclusive.  Span a contains span b when b starts at or
 * after a's start and ends at or before a's end; a encloses b when it contains b and
 * the two differ (strictly contains).  Spans of different files are never compared:
 * callers check the file first.
 *
 * Every part uses these: the scopes (a node's most specific note), the debug info (a
 * tick within the current note), the ticks stage (a descriptor's parent), the runtime
 * (rule 2b of the dynamic stack) and the tests.  Header-only, no LLVM, C17. */
#ifndef STROBE_ABI_SPAN_H
#define STROBE_ABI_SPAN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct StrobeSpan {
  uint32_t line1, col1, line2, col2;
} StrobeSpan;

/* The span of anything with fields line1, col1, line2, col2 (CmmSrcNote, StrobeTickDesc). */
#define STROBE_SPAN_OF(x) ((StrobeSpan){(x)->line1, (x)->col1, (x)->line2, (x)->col2})

/* The order of two positions (line, column): -1, 0 or 1. */
static inline int strobe_pos_cmp(uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2) {
  if (l1 != l2) return l1 < l2 ? -1 : 1;
  if (c1 != c2) return c1 < c2 ? -1 : 1;
  return 0;
}

static inline bool strobe_span_equal(StrobeSpan a, StrobeSpan b) {
  return a.line1 == b.line1 && a.col1 == b.col1 && a.line2 == b.line2 && a.col2 == b.col2;
}

/* a contains b: b lies within a, equal spans included. */
static inline bool strobe_span_contains(StrobeSpan a, StrobeSpan b) {
  return strobe_pos_cmp(a.line1, a.col1, b.line1, b.col1) <= 0 &&
         strobe_pos_cmp(b.line2, b.col2, a.line2, a.col2) <= 0;
}

/* a encloses b: a contains b and is not b (strictly contains). */
static inline bool strobe_span_encloses(StrobeSpan a, StrobeSpan b) {
  return !strobe_span_equal(a, b) && strobe_span_contains(a, b);
}

#endif
