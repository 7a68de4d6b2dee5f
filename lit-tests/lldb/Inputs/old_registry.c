/* old_registry.c — a program whose strobe_registry has another layout than the lldb
 * module reads: version 1's header (magic, version and sizes), as a program linked
 * with an older libstrobe-rt would have it. */
#include <stdint.h>
#include <stdio.h>

struct {
  uint32_t magic, version, header_size, thread_size, entry_size, desc_size;
  void *threads;
} strobe_registry = {0x42525453, 1, 144, 136, 32, 48, NULL};

int main(void) {
  puts("old registry");
  return 0;
}
