/* bench_parse FILE [SECONDS] — front-end throughput on one dump.
 *
 * Reads FILE once, then parses, infers widths and prints canonical Cmm (to an
 * in-memory buffer) again and again for about SECONDS (default 3), and reports the
 * best and the median rate in MB of input per second, for parse alone and for
 * parse + types + print.  File I/O and process start-up are not measured. */
#define _POSIX_C_SOURCE 200809L
#include "cmm.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One run; returns seconds.  print: also infer types and print. */
static double run(const CmmSource *src, bool print) {
  Diag d = {.out = stderr};
  double t0 = now();
  CmmFile *f = cmm_parse(src, &d);
  if (!f) exit(1);
  if (print) {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!cmm_infer_types(f, &d)) exit(1);
    cmm_print_file(out, f);
    fclose(out);
    free(buf);
  }
  cmm_file_free(f);
  return now() - t0;
}

static void measure(const CmmSource *src, bool print, double seconds) {
  enum { MAX_RUNS = 100000 };
  static double times[MAX_RUNS];
  int n = 0;
  double start = now();
  while (n < MAX_RUNS && (n < 5 || now() - start < seconds)) times[n++] = run(src, print);
  qsort(times, (size_t)n, sizeof *times, cmp_double);
  double mb = (double)src->len / 1e6;
  printf("%-22s %6d runs  best %7.1f MB/s  median %7.1f MB/s  (%.2f ms per run)\n",
         print ? "parse+types+print:" : "parse:", n, mb / times[0], mb / times[n / 2],
         times[n / 2] * 1e3);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_parse FILE [SECONDS]\n");
    return 1;
  }
  double seconds = argc > 2 ? atof(argv[2]) : 3.0;
  Diag d = {.out = stderr};
  CmmSource *src = cmm_source_read(argv[1], &d);
  if (!src) return 1;
  printf("%s: %.3f MB\n", argv[1], (double)src->len / 1e6);
  measure(src, false, seconds);
  measure(src, true, seconds);
  cmm_source_free(src);
  return 0;
}
