/* fuzz_parse.c — libFuzzer target for the Cmm front end: parse, infer widths, print,
 * and build and print the scope trees.
 *
 * Any input must end in diagnostics or a printed file, never in a crash, a sanitizer
 * report or a leak.  Built only with -DSTROBE_FUZZ=ON (clang); run by scripts/fuzz.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cmm.h"
#include "scopes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");

  CmmSource *src = cmm_source_from_memory("fuzz", (const char *)data, size);
  if (!src) return 0;
  Diag d = {.out = NULL};
  CmmFile *f = cmm_parse(src, &d);
  if (f && cmm_infer_types(f, &d) && devnull) {
    cmm_print_file(devnull, f);
    const char *main_file = scopes_main_file(f, f->arena);
    for (uint32_t g = 0; g < f->ngroups; g++)
      scopes_print(devnull, f, &f->groups[g], scopes_build(f, &f->groups[g], main_file, f->arena));
  }
  cmm_file_free(f);
  cmm_source_free(src);
  return 0;
}
