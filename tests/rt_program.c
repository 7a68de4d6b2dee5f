/* rt_program.c — a standalone program as strobec would leave it, linked with
 * libstrobe-rt: a C function stands in for the strobe_entry that `--entry` emits, and
 * main comes from the library (rts/main.c).  Built once against libstrobe-rt-standalone.a and
 * once against libstrobe-rt-standalone.so; the ctest checks the output. */
#include "strobe/rt.h"

int64_t strobe_entry(StrobeRegTable *base) {
  strobe_print_int(base->Sp > base->SpLim ? 42 : -1);
  return 0;
}
