/* plain.c — a C program that has nothing of strobe's, for the lldb module to find
 * nothing in. */
#include <stdio.h>

int main(void) {
  puts("plain");
  return 0;
}
