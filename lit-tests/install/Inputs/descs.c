/* A program with its own main that links the dynamic stack alone (-lstrobe-rt): it
 * lists the tick descriptors of the instrumented Cmm object linked with it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strobe/dynstack.h"

/* fact.cmm calls these standalone-runtime functions, which libstrobe-rt.a does not have;
 * this program never runs the Cmm code. */
void strobe_stack_exhausted(void) { abort(); }
void strobe_print_int(int64_t n) { printf("%lld\n", (long long)n); }

int main(void) {
  size_t n = 0;
  const StrobeTickDesc *d = strobe_tick_descs(&n);
  printf("%zu tick descriptors\n", n);
  for (size_t i = 0; i < n; i++)
    if (d[i].line1 == 8) {
      printf("first on line 8: %s at %s\n", d[i].function, d[i].file);
      break;
    }
  return 0;
}
