/* deep_env.c — the C side of deep.cmm for a program of one thread (main is
 * libstrobe-rt's): the depth comes from $DEEP_DEPTH (3 if unset), and nothing happens
 * at the bottom. */
#include <stdint.h>
#include <stdlib.h>

int64_t deep_depth(void) {
  const char *s = getenv("DEEP_DEPTH");
  return s ? strtol(s, NULL, 10) : 3;
}

int64_t deep_bottom(int64_t n) { return n; }
