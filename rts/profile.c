/* profile.c — sampling the dynamic stack into a CPU profile (docs/profiling.md).
 *
 * STROBE_OPTIONS=profile=FILE starts it when the runtime sets its options (the first
 * tick, or the first run of a Haskell thread).  Then:
 *   - setitimer(ITIMER_PROF) every 1/profile_rate seconds of the process's CPU time
 *     sends SIGPROF, which the kernel delivers to the thread that was running (GHC's
 *     runtime uses SIGVTALRM or a timerfd for its own ticks: no collision).  A handler
 *     the program had for SIGPROF is called after ours.
 *   - The handler reads the thread-local head (the stack of the Haskell thread that
 *     this OS thread runs now, newest first), keeps one frame per function (the
 *     nested notes of one function at one watermark are one frame), at most
 *     profile_depth of them, adds where the PC was as a leaf frame unless it is in
 *     instrumented code, and counts the stack in a fixed table (rt_prof_add): atomic
 *     operations only, no allocation, no lock.
 *   - At exit (atexit: a normal end, exitWith and an uncaught Haskell exception all
 *     reach exit(3) through hs_exit), the timer stops, the handlers in flight finish,
 *     and FILE gets the folded stacks, written to FILE.tmp and renamed.
 *
 * Where the PC was: the start reads the executable's symbol table (/proc/self/exe)
 * and the loaded libraries' segments (dl_iterate_phdr) into a sorted array of address
 * ranges, each with a class, which the handler searches: see rt_prof_symbol_label and
 * docs/profiling.md for the names. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "profile.h"
#include "rt_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

_Thread_local volatile int rt_profile_in_gc;

/* ---- the table -------------------------------------------------------------------- */

/* The memory: nslots slots of stride bytes, then the used index (nslots uint32_t). */
size_t rt_prof_table_bytes(uint32_t nslots, uint32_t max_depth) {
  return (size_t)nslots * (sizeof(RtProfSlot) + (size_t)max_depth * sizeof(const char *) +
                           sizeof(uint32_t));
}

void rt_prof_table_init(RtProfTable *t, void *mem, uint32_t nslots, uint32_t max_depth) {
  t->slots = mem;
  t->nslots = nslots;
  t->max_depth = max_depth;
  t->stride = sizeof(RtProfSlot) + (size_t)max_depth * sizeof(const char *);
  t->used = (uint32_t *)(void *)(t->slots + (size_t)nslots * t->stride);
  t->nused = 0;
  t->lost = 0;
}

static RtProfSlot *slot_at(const RtProfTable *t, uint32_t i) {
  return (RtProfSlot *)(void *)(t->slots + (size_t)i * t->stride);
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15u + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9u;
}

enum { PROBES = 512 }; /* slots tried before a sample is lost */

bool rt_prof_add(RtProfTable *t, const char *const *frames, uint32_t n, uint16_t leaf,
                 uint16_t flags) {
  uint64_t h = mix(mix(0, n), (uint64_t)leaf << 16 | flags);
  for (uint32_t i = 0; i < n; i++) h = mix(h, (uint64_t)(uintptr_t)frames[i]);
  uint64_t key = h | 2; /* never 0 (empty) nor 1 (being filled) */
  if (t->nslots == 0 || n > t->max_depth) goto lost;
  uint32_t at = (uint32_t)(h % t->nslots);
  for (uint32_t probe = 0; probe < PROBES && probe < t->nslots; probe++) {
    uint32_t i = (at + probe) % t->nslots;
    RtProfSlot *s = slot_at(t, i);
    uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    if (st == 0) {
      uint64_t expected = 0;
      if (__atomic_compare_exchange_n(&s->state, &expected, 1, false, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED)) {
        /* the slot is claimed once: the writer reads the claimed ones only */
        uint32_t k = __atomic_fetch_add(&t->nused, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->used[k], i + 1, __ATOMIC_RELAXED);
        s->depth = n;
        s->leaf = leaf;
        s->flags = flags;
        for (uint32_t i = 0; i < n; i++) s->frames[i] = frames[i];
        s->count = 1;
        __atomic_store_n(&s->state, key, __ATOMIC_RELEASE);
        return true;
      }
      st = expected;
    }
    /* A slot being filled (1) is passed over: the same stack may then get a second
       slot, which the writer merges. */
    if (st == key && s->depth == n && s->leaf == leaf && s->flags == flags &&
        memcmp(s->frames, frames, n * sizeof *frames) == 0) {
      __atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
      return true;
    }
  }
lost:
  __atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
  return false;
}

/* ---- the folded file -------------------------------------------------------------- */

typedef struct Line {
  char *text;
  uint64_t count;
} Line;

static int compare_lines(const void *a, const void *b) {
  return strcmp(((const Line *)a)->text, ((const Line *)b)->text);
}

/* Appends s to buf (at *len, of *cap bytes), with `;`, spaces and newlines made `_`
 * unless raw (a folded frame is one word without `;`).  False when out of memory. */
static bool append_as(char **buf, size_t *len, size_t *cap, const char *s, bool raw) {
  size_t n = strlen(s);
  if (*len + n + 2 > *cap) {
    size_t c = (*len + n + 2) * 2;
    char *b = realloc(*buf, c);
    if (!b) return false;
    *buf = b;
    *cap = c;
  }
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    (*buf)[(*len)++] = !raw && (ch == ';' || ch == ' ' || ch == '\n' || ch == '\t') ? '_' : ch;
  }
  (*buf)[*len] = 0;
  return true;
}

static bool append(char **buf, size_t *len, size_t *cap, const char *s) {
  return append_as(buf, len, cap, s, false);
}

long rt_prof_write_folded(const RtProfTable *t, FILE *out, const char *const *leaf_names) {
  /* The claimed slots only (used): the table's untouched pages stay untouched. */
  uint32_t nused = __atomic_load_n(&t->nused, __ATOMIC_ACQUIRE);
  if (nused > t->nslots) nused = t->nslots;
  Line *lines = calloc((size_t)nused + 1, sizeof *lines);
  if (!lines) return -1;
  size_t n = 0;
  bool ok = true;
  for (uint32_t k = 0; k < nused && ok; k++) {
    uint32_t i = __atomic_load_n(&t->used[k], __ATOMIC_RELAXED);
    if (i == 0) continue; /* claimed by a handler that had not written it yet */
    const RtProfSlot *s = slot_at(t, i - 1);
    uint64_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    if (st < 2 || s->count == 0) continue;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    bool first = true;
    ok = append(&buf, &len, &cap, "");
    if (ok && (s->flags & RT_PROF_TRUNCATED)) {
      ok = append(&buf, &len, &cap, "[truncated]");
      first = false;
    }
    for (uint32_t f = 0; f < s->depth && ok; f++) {
      if (!first) ok = append_as(&buf, &len, &cap, ";", true);
      if (ok) ok = append(&buf, &len, &cap, s->frames[f]);
      first = false;
    }
    if (ok && s->leaf != RT_PROF_INSTRUMENTED) {
      if (!first) ok = append_as(&buf, &len, &cap, ";", true);
      if (ok) ok = append(&buf, &len, &cap, leaf_names[s->leaf]);
      first = false;
    }
    if (ok && first) ok = append(&buf, &len, &cap, "[nostack]");
    if (!ok) {
      free(buf);
      break;
    }
    lines[n++] = (Line){buf, s->count};
  }
  long written = -1;
  if (ok) {
    qsort(lines, n, sizeof *lines, compare_lines);
    written = 0;
    for (size_t i = 0; i < n;) {
      uint64_t count = lines[i].count;
      size_t j = i + 1;
      while (j < n && strcmp(lines[j].text, lines[i].text) == 0) count += lines[j++].count;
      if (fprintf(out, "%s %llu\n", lines[i].text, (unsigned long long)count) < 0) {
        written = -1;
        break;
      }
      written++;
      i = j;
    }
    uint64_t lost = __atomic_load_n(&t->lost, __ATOMIC_RELAXED);
    if (written >= 0 && lost > 0) {
      if (fprintf(out, "[lost] %llu\n", (unsigned long long)lost) < 0) written = -1;
      else written++;
    }
  }
  for (size_t i = 0; i < n; i++) free(lines[i].text);
  free(lines);
  return written;
}

/* ---- symbol names ----------------------------------------------------------------- */

/* Z-decodes z[0..n) into buf (GHC's encoding of names in symbols: zi is `.`, zm `-`,
 * zu `_`, zz `z`, ZZ `Z`, zd `$`, zq `'`; others are kept as they are). */
static void zdecode(const char *z, size_t n, char *buf, size_t size) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < size; i++) {
    char c = z[i];
    if ((c == 'z' || c == 'Z') && i + 1 < n) {
      char d = z[i + 1], r = 0;
      if (c == 'z') {
        switch (d) {
        case 'i': r = '.'; break;
        case 'm': r = '-'; break;
        case 'u': r = '_'; break;
        case 'z': r = 'z'; break;
        case 'd': r = '$'; break;
        case 'q': r = '\''; break;
        }
      } else if (d == 'Z') {
        r = 'Z';
      }
      if (r) {
        buf[o++] = r;
        i++;
        continue;
      }
    }
    buf[o++] = c;
  }
  buf[o] = 0;
}

/* buf = `[` s `]` (cut to fit bufsize, at least 3); returns buf.  (No snprintf: the
 * start labels every symbol of the executable.) */
static char *bracketed(char *buf, size_t bufsize, const char *s) {
  size_t n = strlen(s);
  if (n > bufsize - 3) n = bufsize - 3;
  buf[0] = '[';
  memcpy(buf + 1, s, n);
  buf[n + 1] = ']';
  buf[n + 2] = 0;
  return buf;
}

const char *rt_prof_symbol_label(const char *symbol, const char *const *modules,
                                 size_t nmodules, char *buf, size_t bufsize) {
  size_t head = strcspn(symbol, "_");
  char name[256];
  zdecode(symbol, head, name, sizeof name);
  if (head > 0 && symbol[head] == '_' && symbol[0] >= 'A' && symbol[0] <= 'Z') {
    /* A module of the program's own unit (no unit prefix); `ZCMain` is `:Main`, the
       program's entry (`ZCMain_main_info`), which GHC puts in Main's object */
    const char *module = strncmp(name, "ZC", 2) == 0 ? name + 2 : name;
    for (size_t i = 0; i < nmodules; i++)
      if (strcmp(modules[i], module) == 0) return NULL;
    return bracketed(buf, bufsize, "main");
  }
  bool unit = head > 0 && symbol[head] == '_' &&
              (strstr(name, "-") || strcmp(name, "base") == 0 || strcmp(name, "ghc") == 0);
  if (unit && symbol[0] >= 'a' && symbol[0] <= 'z') {
    /* a package's unit id: its name without the version (and a hash after it) */
    char *p = name;
    for (char *dash = strchr(p, '-'); dash; dash = strchr(dash + 1, '-')) {
      if (dash[1] >= '0' && dash[1] <= '9') {
        *dash = 0;
        break;
      }
    }
    return bracketed(buf, bufsize, name);
  }
  return bracketed(buf, bufsize, "rts");
}

/* ---- the process's profiler ------------------------------------------------------- */

typedef RtProfSym Range;

static struct {
  int started;            /* rt_profile_start ran (under start_lock) */
  int on;                 /* the handler samples (atomic) */
  int in_flight;          /* handlers sampling now (atomic) */
  char path[sizeof ((StrobeOptions *)0)->profile];
  RtProfTable table;
  uint32_t max_depth;
  Range *ranges;
  size_t nranges;
  const char *names[RT_PROF_MAX_CLASSES];
  uint32_t nnames;
  const StrobeTickDesc *desc_lo, *desc_hi; /* the program's descriptors */
  struct sigaction previous;
  pid_t pid;
} prof;

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t class_of_name(const char *name) {
  static uint32_t last; /* consecutive symbols are mostly of one unit */
  if (last && strcmp(prof.names[last], name) == 0) return last;
  for (uint32_t i = 1; i < prof.nnames; i++)
    if (strcmp(prof.names[i], name) == 0) return last = i;
  if (prof.nnames == RT_PROF_MAX_CLASSES) return RT_PROF_RTS;
  char *copy = strdup(name);
  if (!copy) return RT_PROF_RTS;
  prof.names[prof.nnames] = copy;
  return last = prof.nnames++;
}

/* The class of pc: a binary search of the sorted ranges (async-signal-safe). */
static uint32_t classify(uintptr_t pc) {
  size_t lo = 0, hi = prof.nranges;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (prof.ranges[mid].lo <= pc) lo = mid + 1;
    else hi = mid;
  }
  return lo == 0 ? RT_PROF_LIB : prof.ranges[lo - 1].cls;
}

/* The ranges array being built (at start, not in a handler). */
typedef struct Ranges {
  Range *r;
  size_t n, cap;
} Ranges;

/* Room for n more entries (one allocation for the symbol table's: fresh pages cost a
 * page fault each, a few microseconds). */
static void reserve(Ranges *rs, size_t n) {
  if (rs->n + n <= rs->cap) return;
  Range *r = realloc(rs->r, (rs->n + n) * sizeof *r);
  if (!r) return;
  rs->r = r;
  rs->cap = rs->n + n;
}

static void add_range(Ranges *rs, uintptr_t lo, uint32_t cls, uint32_t prio, int32_t group) {
  if (rs->n == rs->cap) {
    size_t c = rs->cap ? rs->cap * 2 : 1024;
    Range *r = realloc(rs->r, c * sizeof *r);
    if (!r) return;
    rs->r = r;
    rs->cap = c;
  }
  rs->r[rs->n++] = (Range){lo, cls, prio, group};
}

static int compare_ranges(const void *a, const void *b) {
  const Range *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  return x->prio < y->prio ? -1 : x->prio > y->prio;
}

/* The sort's key: the address, then prio (0 to 2); user-space addresses are below 2^47 */
static uint64_t range_key(const Range *r) { return (uint64_t)r->lo << 2 | (r->prio & 3); }

/* Sorts r[0..n) by address, then prio (tmp: room for n): a least-significant-digit
 * radix sort on lo * 4 + prio, a byte at a time, which skips the bytes that all the
 * entries share (an executable's code addresses differ in their low three bytes). */
static void radix_sort(Range *r, size_t n, Range *tmp) {
  uint64_t all_or = 0, all_and = ~(uint64_t)0;
  for (size_t i = 0; i < n; i++) {
    all_or |= range_key(&r[i]);
    all_and &= range_key(&r[i]);
  }
  Range *src = r, *dst = tmp;
  for (unsigned shift = 0; shift < 64; shift += 8) {
    if ((((all_or ^ all_and) >> shift) & 0xff) == 0) continue; /* one value: in order */
    uint32_t count[257] = {0};
    for (size_t i = 0; i < n; i++) count[(range_key(&src[i]) >> shift & 0xff) + 1]++;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (size_t i = 0; i < n; i++) dst[count[range_key(&src[i]) >> shift & 0xff]++] = src[i];
    Range *t = src;
    src = dst;
    dst = t;
  }
  if (src != r) memcpy(r, src, n * sizeof *r);
}

/* r[0..nexe) (the executable's) and the rest (the libraries', far above it) each by
 * radix_sort, then merged.  glibc's qsort took about 0.2 ms for the 1,900 entries of a
 * small GHC program, a third of the start's time then. */
void rt_prof_sort_syms(RtProfSym *r, size_t nexe, size_t n) {
  Range *tmp = n > 1 && n <= UINT32_MAX ? malloc(n * sizeof *tmp) : NULL;
  if (!tmp) {
    if (n > 1) qsort(r, n, sizeof *r, compare_ranges);
    return;
  }
  radix_sort(r, nexe, tmp);
  radix_sort(r + nexe, n - nexe, tmp);
  size_t i = 0, j = nexe, k = 0;
  while (i < nexe && j < n) tmp[k++] = range_key(&r[j]) < range_key(&r[i]) ? r[j++] : r[i++];
  while (i < nexe) tmp[k++] = r[i++];
  while (j < n) tmp[k++] = r[j++];
  memcpy(r, tmp, n * sizeof *r);
  free(tmp);
}

void rt_prof_resolve_locals(RtProfSym *syms, size_t n, const uintptr_t *code, size_t ncode) {
  /* instrumented code: the symbol each code address lies in (the last one at or
     before it) */
  for (size_t k = 0; k < ncode; k++) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (syms[mid].lo <= code[k]) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && syms[lo - 1].cls == RT_PROF_UNRESOLVED && syms[lo - 1].prio == 0)
      syms[lo - 1].cls = RT_PROF_INSTRUMENTED;
  }
  /* the others, a run of unresolved entries at a time, between `before` and `after` */
  for (size_t i = 0; i < n;) {
    if (syms[i].cls != RT_PROF_UNRESOLVED) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && syms[j].cls == RT_PROF_UNRESOLVED) j++;
    const RtProfSym *before = i > 0 ? &syms[i - 1] : NULL, *after = j < n ? &syms[j] : NULL;
    for (size_t k = i; k < j; k++) {
      int32_t g = syms[k].group;
      bool next = g >= 0 && after && after->group == g && !(before && before->group == g);
      syms[k].cls = next ? after->cls : before ? before->cls : RT_PROF_RTS;
    }
    i = j;
  }
}

/* The instrumented modules: those of the program's tick descriptors. */
static const char **instrumented_modules(size_t *count) {
  size_t n = 0;
  const StrobeTickDesc *d = strobe_tick_descs(&n);
  const char **mods = calloc(n + 1, sizeof *mods);
  size_t m = 0;
  if (!mods) {
    *count = 0;
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    const char *f = d[i].function, *end = f;
    if (!f) continue;
    /* Module components: an upper-case letter, then name characters, then `.` */
    for (const char *p = f; *p >= 'A' && *p <= 'Z';) {
      const char *q = p;
      while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ||
             *q == '_' || *q == '\'')
        q++;
      if (*q != '.') break;
      end = q;
      p = q + 1;
    }
    if (end == f) continue;
    size_t len = (size_t)(end - f);
    bool seen = false;
    for (size_t j = 0; j < m && !seen; j++)
      seen = strlen(mods[j]) == len && memcmp(mods[j], f, len) == 0;
    if (!seen && (mods[m] = strndup(f, len))) m++;
  }
  *count = m;
  return mods;
}

/* The executable's code symbols, by class, from its own file's symbol table. */
static void exe_ranges(Ranges *rs, uintptr_t bias) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  off_t size = lseek(fd, 0, SEEK_END);
  void *map = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return;
  const unsigned char *base = map;
  const Elf64_Ehdr *eh = map;
  if ((size_t)size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > (size_t)size) {
    munmap(map, (size_t)size);
    return;
  }
  const Elf64_Shdr *sh = (const void *)(base + eh->e_shoff);
  int32_t group = 0; /* the STT_FILE symbols seen: a local symbol's object */
  size_t nsyms_all = 2 * (size_t)eh->e_shnum + 64; /* the sections' ends, the libraries */
  for (unsigned i = 0; i < eh->e_shnum; i++)
    if (sh[i].sh_type == SHT_SYMTAB) nsyms_all += sh[i].sh_size / sizeof(Elf64_Sym);
  reserve(rs, nsyms_all);
  size_t nmods = 0;
  const char **mods = instrumented_modules(&nmods);
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr *str = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > (size_t)size ||
        str->sh_offset + str->sh_size > (size_t)size)
      continue;
    const Elf64_Sym *syms = (const void *)(base + sh[i].sh_offset);
    const char *strs = (const char *)(base + str->sh_offset);
    size_t nsyms = sh[i].sh_size / sizeof *syms;
    for (size_t k = 0; k < nsyms; k++) {
      const Elf64_Sym *y = &syms[k];
      if (ELF64_ST_TYPE(y->st_info) == STT_FILE) {
        group++;
        continue;
      }
      if (y->st_shndx == SHN_UNDEF || y->st_shndx >= eh->e_shnum || y->st_value == 0 ||
          y->st_name >= str->sh_size || !(sh[y->st_shndx].sh_flags & SHF_EXECINSTR))
        continue;
      int type = ELF64_ST_TYPE(y->st_info);
      if (type != STT_FUNC && type != STT_NOTYPE && type != STT_OBJECT) continue;
      const char *name = strs + y->st_name;
      if (!*name || name[0] == '.' || name[0] == '$') continue;
      /* A local symbol (a static C function; a Haskell binding the module does not
         export, `zdwgo1_r4c0_info`; a procedure's continuation or thunk,
         `block_c3ra_info`, `sat_s3nf_info`) names no module: rt_prof_resolve_locals
         gives it its class. */
      if (ELF64_ST_BIND(y->st_info) == STB_LOCAL) {
        add_range(rs, (uintptr_t)y->st_value + bias, RT_PROF_UNRESOLVED, 0, group);
        continue;
      }
      char buf[128];
      const char *label = rt_prof_symbol_label(name, mods, nmods, buf, sizeof buf);
      add_range(rs, (uintptr_t)y->st_value + bias,
                label ? class_of_name(label) : RT_PROF_INSTRUMENTED, 0, -1);
    }
  }
  /* The code sections themselves: code before a section's first symbol is the RTS's,
     past the last section is a library's. */
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (!(sh[i].sh_flags & SHF_EXECINSTR) || !(sh[i].sh_flags & SHF_ALLOC)) continue;
    add_range(rs, (uintptr_t)sh[i].sh_addr + bias, RT_PROF_RTS, 1, -1);
    add_range(rs, (uintptr_t)(sh[i].sh_addr + sh[i].sh_size) + bias, RT_PROF_LIB, 2, -1);
  }
  for (size_t j = 0; j < nmods; j++) free((void *)mods[j]);
  free(mods);
  munmap(map, (size_t)size);
}

/* The shared libraries' code segments: `[libc]` for libc.so.6, `[vdso]`… */
static int lib_ranges(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  Ranges *rs = data;
  if (!info->dlpi_name || !*info->dlpi_name) return 0; /* the executable */
  const char *base = strrchr(info->dlpi_name, '/');
  base = base ? base + 1 : info->dlpi_name;
  char name[64];
  size_t n = strcspn(base, ".");
  if (strncmp(base, "linux-vdso", 10) == 0) snprintf(name, sizeof name, "[vdso]");
  else snprintf(name, sizeof name, "[%.*s]", (int)(n < 40 ? n : 40), base);
  uint32_t cls = class_of_name(name);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)) continue;
    add_range(rs, info->dlpi_addr + p->p_vaddr, cls, 1, -1);
    add_range(rs, info->dlpi_addr + p->p_vaddr + p->p_memsz, RT_PROF_LIB, 2, -1);
  }
  return 0;
}

static int exe_bias(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  *(uintptr_t *)data = info->dlpi_addr;
  return 1; /* the first object is the executable */
}

static void build_ranges(void) {
  static const char *const fixed[] = {"", "[gc]", "[rts]", "[lib]", "[main]", "[nostack]"};
  for (uint32_t i = 0; i < RT_PROF_FIRST_NAMED; i++) prof.names[i] = fixed[i];
  prof.nnames = RT_PROF_FIRST_NAMED;
  Ranges rs = {0};
  uintptr_t bias = 0;
  dl_iterate_phdr(exe_bias, &bias);
  exe_ranges(&rs, bias);
  size_t nexe = rs.n;
  dl_iterate_phdr(lib_ranges, &rs);
  rt_prof_sort_syms(rs.r, nexe, rs.n);
  /* The local symbols' classes, from the code addresses of the tick descriptors */
  size_t ndescs = 0, ncode = 0;
  const StrobeTickDesc *d = strobe_tick_descs(&ndescs);
  uintptr_t *code = malloc((ndescs ? ndescs : 1) * sizeof *code);
  for (size_t i = 0; code && i < ndescs; i++)
    if (d[i].code) code[ncode++] = (uintptr_t)d[i].code;
  rt_prof_resolve_locals(rs.r, rs.n, code, ncode);
  free(code);
  /* One range per address (the lowest prio), then runs of one class merged. */
  size_t m = 0;
  for (size_t i = 0; i < rs.n; i++) {
    if (m > 0 && rs.r[m - 1].lo == rs.r[i].lo) continue;
    if (m > 0 && rs.r[m - 1].cls == rs.r[i].cls) continue;
    rs.r[m++] = rs.r[i];
  }
  prof.ranges = rs.r;
  prof.nranges = m;
}

static bool valid_desc(const StrobeTickDesc *d) {
  if (!d || d == &strobe_dynstack_no_desc) return false;
  if (prof.desc_lo == prof.desc_hi) return true; /* a shared runtime: no bounds known */
  return d >= prof.desc_lo && d < prof.desc_hi &&
         ((uintptr_t)d - (uintptr_t)prof.desc_lo) % sizeof *d == 0;
}

/* b (newer) is a note strictly inside a's span (older), in the same file. */
static bool inside(const StrobeTickDesc *b, const StrobeTickDesc *a) {
  if (!a || b->file != a->file || b->kind != STROBE_TICK_SOURCE_NOTE ||
      a->kind != STROBE_TICK_SOURCE_NOTE)
    return false;
  bool starts = b->line1 > a->line1 || (b->line1 == a->line1 && b->col1 >= a->col1);
  bool ends = b->line2 < a->line2 || (b->line2 == a->line2 && b->col2 <= a->col2);
  bool same = b->line1 == a->line1 && b->col1 == a->col1 && b->line2 == a->line2 &&
              b->col2 == a->col2;
  return starts && ends && !same;
}

enum { MAX_DEPTH = 1024 };

static void sample(uintptr_t pc) {
  const char *frames[MAX_DEPTH];
  uint32_t n = 0, max = prof.max_depth;
  uint16_t flags = 0;
  StrobeDynStackHead *h = &strobe_dynstack_head;
  const StrobeThreadStack *s = __atomic_load_n(&h->stack, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (s) {
    const StrobeEntry *top = __atomic_load_n(&h->top, __ATOMIC_RELAXED), *base = h->base;
    if (top > h->limit) top = h->limit;
    const char *prev = NULL;
    const StrobeTickDesc *prev_desc = NULL;
    uintptr_t prev_wm = 0;
    for (const StrobeEntry *e = top; e > base; e--) {
      const StrobeTickDesc *d = e->desc;
      if (d == &strobe_dynstack_dropped_desc) flags |= RT_PROF_TRUNCATED; /* entries folded */
      if (!valid_desc(d) || !d->function) continue;
      /* One frame per function, from the newest entry down: the entry just newer than
         this one (prev_desc) is of the same frame if it is of the same function and at
         the same watermark, or a note inside another note of the function (it has a
         parent: an expression that pushed a continuation, a local loop); the
         function's outermost note entered again (a recursive call) starts a frame. */
      if (d->function == prev &&
          (e->wm == prev_wm || prev_desc->parent || inside(prev_desc, d))) {
        prev_desc = d;
        continue;
      }
      if (n == max) {
        flags |= RT_PROF_TRUNCATED;
        break;
      }
      frames[n++] = d->function;
      prev = d->function;
      prev_desc = d;
      prev_wm = e->wm;
    }
  }
  for (uint32_t i = 0; i < n / 2; i++) { /* root first */
    const char *x = frames[i];
    frames[i] = frames[n - 1 - i];
    frames[n - 1 - i] = x;
  }
  uint32_t leaf = rt_profile_in_gc ? RT_PROF_GC : classify(pc);
  if (n == 0 && leaf == RT_PROF_INSTRUMENTED) leaf = RT_PROF_NOSTACK;
  rt_prof_add(&prof.table, frames, n, (uint16_t)leaf, flags);
}

static void on_sigprof(int sig, siginfo_t *info, void *context) {
  int saved = errno;
  if (__atomic_load_n(&prof.on, __ATOMIC_ACQUIRE)) {
    __atomic_fetch_add(&prof.in_flight, 1, __ATOMIC_ACQ_REL);
    if (__atomic_load_n(&prof.on, __ATOMIC_ACQUIRE)) {
      const ucontext_t *uc = context;
      sample((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]);
    }
    __atomic_fetch_sub(&prof.in_flight, 1, __ATOMIC_ACQ_REL);
  }
  /* chain a handler the program had */
  if (prof.previous.sa_flags & SA_SIGINFO) {
    if (prof.previous.sa_sigaction) prof.previous.sa_sigaction(sig, info, context);
  } else if (prof.previous.sa_handler != SIG_DFL && prof.previous.sa_handler != SIG_IGN) {
    prof.previous.sa_handler(sig);
  }
  errno = saved;
}

static void stop_timer(void) {
  struct itimerval off = {0};
  setitimer(ITIMER_PROF, &off, NULL);
  __atomic_store_n(&prof.on, 0, __ATOMIC_RELEASE);
  /* the handlers already sampling finish (a few microseconds) */
  for (int i = 0; i < 1000000 && __atomic_load_n(&prof.in_flight, __ATOMIC_ACQUIRE); i++)
    sched_yield();
}

static void write_at_exit(void) {
  if (getpid() != prof.pid || !prof.table.slots) return; /* a forked child's exit */
  stop_timer();
  size_t len = strlen(prof.path);
  char *tmp = malloc(len + 5);
  if (!tmp) return;
  snprintf(tmp, len + 5, "%s.tmp", prof.path);
  FILE *out = fopen(tmp, "w");
  long lines = out ? rt_prof_write_folded(&prof.table, out, prof.names) : -1;
  if (out && fclose(out) != 0) lines = -1;
  if (lines < 0 || rename(tmp, prof.path) != 0) {
    fprintf(stderr, "strobe: cannot write the profile %s: %s\n", prof.path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
}

static void after_fork_child(void) {
  __atomic_store_n(&prof.on, 0, __ATOMIC_RELEASE); /* the child does not profile */
}

void rt_profile_start(const StrobeOptions *o) {
  if (!o->profile.path[0]) return;
  pthread_mutex_lock(&start_lock);
  if (prof.started) {
    pthread_mutex_unlock(&start_lock);
    return;
  }
  prof.started = 1;
  pthread_mutex_unlock(&start_lock);
  if (o->profile_rate < 1 || o->profile_rate > 10000 || o->profile_depth < 1 ||
      o->profile_depth > MAX_DEPTH || o->profile_stacks < 1) {
    fprintf(stderr, "strobe: not profiling: profile_rate must be 1 to 10000, "
                    "profile_depth 1 to %d and profile_stacks at least 1\n", MAX_DEPTH);
    return;
  }
  memcpy(prof.path, o->profile.path, sizeof prof.path);
  prof.max_depth = o->profile_depth;
  size_t bytes = rt_prof_table_bytes(o->profile_stacks, o->profile_depth);
  void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    fprintf(stderr, "strobe: not profiling: no memory for %u stacks\n", o->profile_stacks);
    return;
  }
  rt_prof_table_init(&prof.table, mem, o->profile_stacks, o->profile_depth);
  size_t ndescs = 0;
  prof.desc_lo = strobe_tick_descs(&ndescs);
  prof.desc_hi = prof.desc_lo ? prof.desc_lo + ndescs : NULL;
  build_ranges();
  prof.pid = getpid();
  pthread_atfork(NULL, NULL, after_fork_child);
  atexit(write_at_exit);
  struct sigaction sa = {0};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  __atomic_store_n(&prof.on, 1, __ATOMIC_RELEASE);
  if (sigaction(SIGPROF, &sa, &prof.previous) != 0) {
    fprintf(stderr, "strobe: not profiling: sigaction: %s\n", strerror(errno));
    __atomic_store_n(&prof.on, 0, __ATOMIC_RELEASE);
    return;
  }
  long us = 1000000L / (long)o->profile_rate; /* 1 s at most: tv_usec stays below 1e6 */
  struct timeval period = {.tv_sec = us / 1000000, .tv_usec = us % 1000000};
  struct itimerval every = {.it_interval = period, .it_value = period};
  if (setitimer(ITIMER_PROF, &every, NULL) != 0) {
    fprintf(stderr, "strobe: not profiling: setitimer: %s\n", strerror(errno));
    __atomic_store_n(&prof.on, 0, __ATOMIC_RELEASE);
  }
}
