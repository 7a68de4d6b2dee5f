/* fuzz_parse.c — libFuzzer target for the Cmm front end.
 *
 * Any input must end in diagnostics or in output, never in a crash, a sanitizer report
 * or a leak.  An input that is accepted must also satisfy the printer's contract: its
 * canonical Cmm is accepted again and prints back byte for byte (a fixed point).  The
 * scope trees are built and printed too.  Built only with -DSTROBE_FUZZ=ON (clang); run
 * by scripts/fuzz.sh.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmm.h"
#include "scopes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses and types text; prints its canonical Cmm into *out (malloc'd). */
static CmmFile *accept(const char *name, const char *text, size_t size, char **out,
                       size_t *out_len, CmmSource **src) {
  *src = cmm_source_from_memory(name, text, size);
  Diag d = {.out = NULL};
  CmmFile *f = cmm_parse(*src, &d);
  if (!f || !cmm_infer_types(f, &d)) {
    cmm_file_free(f);
    return NULL;
  }
  FILE *mem = open_memstream(out, out_len);
  if (!mem) abort();
  cmm_print_file(mem, f);
  fclose(mem);
  return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");

  CmmSource *src, *src2;
  char *first = NULL, *second = NULL;
  size_t first_len = 0, second_len = 0;
  CmmFile *f = accept("fuzz", (const char *)data, size, &first, &first_len, &src);
  if (f) {
    const char *main_file = scopes_main_file(f, f->arena);
    for (uint32_t g = 0; g < f->ngroups; g++)
      scopes_print(devnull, f, &f->groups[g], scopes_build(f, &f->groups[g], main_file, f->arena));

    CmmFile *f2 = accept("canonical", first, first_len, &second, &second_len, &src2);
    if (!f2) {
      fprintf(stderr, "canonical Cmm not accepted:\n%.*s\n", (int)first_len, first);
      abort();
    }
    if (second_len != first_len || memcmp(first, second, first_len) != 0) {
      fprintf(stderr, "printing is not a fixed point:\n%.*s\n---\n%.*s\n", (int)first_len, first,
              (int)second_len, second);
      abort();
    }
    cmm_file_free(f2);
    cmm_source_free(src2);
  }
  free(first);
  free(second);
  cmm_file_free(f);
  cmm_source_free(src);
  return 0;
}
