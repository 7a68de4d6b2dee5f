/* standalone.c — what a standalone Cmm program runs on (docs/standalone.md).
 *
 * strobe_rt_main maps the Cmm stack, with a PROT_NONE guard page below it, and the heap
 * nursery, fills the register table and calls the program's entry.  Memory layout:
 *
 *   stack mapping:  [guard page][reserve, 1 KiB][ ... usable ... ][stop frame word]
 *                               ^lowest         ^SpLim                ^Sp
 *   nursery:        [first word ... last word]      Hp = first - 1 word (empty),
 *                                  ^HpLim           so a heap check `Hp + n > HpLim`
 *                                                   fails exactly when n would not fit
 *
 * A program that skips its stack checks runs into the guard page; the fatal-signal
 * handler (report.c) recognises the address and turns the fault into `strobe: Cmm
 * stack overflow`, followed by the dynamic stack.  Failed
 * checks call strobe_heap_exhausted / strobe_stack_exhausted.  Nothing is collected.
 *
 * strobe_rt_run runs Cmm code again, from any thread, on memory of its own: each run
 * maps its stack and nursery and allocates its capability, and frees them after.  Only
 * strobe_rt_main's guard page is recognised by the fault handler; a run that overflows
 * its stack is an ordinary crash. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, sigaltstack */
#include "rt_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the capability's layout is intrinsics/globalregs.def's ---------------------------------- */

_Static_assert(sizeof(void *) == 8, "the register table has GHC's x86-64 layout");

/* Where the capability keeps each register of globalregs.def, as an offset from
 * BaseReg, or -1 for a register with no slot.  A register added to the table without
 * a line here does not compile (SLOT_<ID> is undeclared). */
#define AT(member)                                                                     \
  ((long)offsetof(StrobeCapability, member) - (long)offsetof(StrobeCapability, r))
#define SLOT_R1 AT(r.R1)
#define SLOT_R2 AT(r.R2)
#define SLOT_R3 AT(r.R3)
#define SLOT_R4 AT(r.R4)
#define SLOT_R5 AT(r.R5)
#define SLOT_R6 AT(r.R6)
#define SLOT_R7 AT(r.R7)
#define SLOT_R8 AT(r.R8)
#define SLOT_R9 AT(r.R9)
#define SLOT_R10 AT(r.R10)
#define SLOT_F1 AT(r.F1)
#define SLOT_F2 AT(r.F2)
#define SLOT_F3 AT(r.F3)
#define SLOT_F4 AT(r.F4)
#define SLOT_F5 AT(r.F5)
#define SLOT_F6 AT(r.F6)
#define SLOT_D1 AT(r.D1)
#define SLOT_D2 AT(r.D2)
#define SLOT_D3 AT(r.D3)
#define SLOT_D4 AT(r.D4)
#define SLOT_D5 AT(r.D5)
#define SLOT_D6 AT(r.D6)
#define SLOT_L1 AT(r.L1)
#define SLOT_SP AT(r.Sp)
#define SLOT_SPLIM AT(r.SpLim)
#define SLOT_HP AT(r.Hp)
#define SLOT_HPLIM AT(r.HpLim)
#define SLOT_CCCS AT(r.CCCS)
#define SLOT_CURRENT_TSO AT(r.CurrentTSO)
#define SLOT_CURRENT_NURSERY AT(r.CurrentNursery)
#define SLOT_HPALLOC AT(r.HpAlloc)
#define SLOT_GCENTER1 AT(f.GCEnter1)
#define SLOT_GCFUN AT(f.GCFun)
#define SLOT_EAGER_BLACKHOLE_INFO AT(f.EagerBlackholeInfo)
#define SLOT_BASEREG (-1)
#define SLOT_MACHSP (-1)
#define SLOT_UNWIND_RETURN_REG (-1)
#define SLOT_PICBASEREG (-1)

#define X(id, name, type, offset)                                                      \
  _Static_assert(SLOT_##id == (offset), name " is not where globalregs.def puts it");
#include "globalregs.def"
#undef X

/* The slots no Cmm register names, as GHC has them. */
_Static_assert(offsetof(StrobeRegTable, Nursery) == 880, "Nursery");
_Static_assert(offsetof(StrobeRegTable, CurrentAlloc) == 896, "CurrentAlloc");
_Static_assert(offsetof(StrobeRegTable, Ret) == 912, "Ret");
_Static_assert(sizeof(StrobeRegTable) == 920, "StgRegTable is 920 bytes");

/* ---- ending the program ----------------------------------------------------------- */

/* Programs print with printf: flush what they printed before the message, so that
 * the two come out in order when stdout and stderr are the same file. */
static _Noreturn void die(const char *msg) {
  fflush(stdout);
  fputs(msg, stderr);
  exit(2);
}

void strobe_heap_exhausted(void) { die("strobe: heap exhausted\n"); }

void strobe_stack_exhausted(void) { die("strobe: Cmm stack exhausted\n"); }

void strobe_print_int(int64_t n) { printf("%" PRId64 "\n", n); }

/* ---- the guard page --------------------------------------------------------------- */

/* report.c's fatal-signal handler runs here, so that it runs even when the machine
 * stack overflowed. */
static char fault_stack[64 * 1024];

static int catch_faults(uintptr_t guard_lo, uintptr_t guard_hi) {
  rt_set_guard_page(guard_lo, guard_hi);
  stack_t ss = {.ss_sp = fault_stack, .ss_size = sizeof fault_stack};
  if (sigaltstack(&ss, NULL) != 0 || rt_install_fatal_handlers() != 0) {
    fprintf(stderr, "strobe: cannot install the stack overflow handler: %s\n",
            strerror(errno));
    return 0;
  }
  return 1;
}

/* ---- the memory of one run -------------------------------------------------------- */

/* Maps *size bytes, rounded up to whole pages (*size is updated), read-write, above
 * `guard` bytes of PROT_NONE; returns the first read-write byte.  On failure says
 * what could not be mapped and returns NULL. */
static char *map(size_t *size, size_t guard, size_t page, const char *what) {
  char *p = MAP_FAILED;
  if (*size <= SIZE_MAX - guard - page) {
    *size = (*size + page - 1) / page * page;
    p = mmap(NULL, guard + *size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
  }
  if (p != MAP_FAILED && guard > 0 && mprotect(p, guard, PROT_NONE) != 0) {
    munmap(p, guard + *size);
    p = MAP_FAILED;
  }
  if (p == MAP_FAILED) {
    fprintf(stderr, "strobe: cannot map %zu bytes for the %s: %s\n", *size, what,
            strerror(errno ? errno : ENOMEM));
    return NULL;
  }
  return p + guard;
}

/* What one run of Cmm code runs on: its stack (above a guard page of `page` bytes) and
 * its nursery.  The register table lives with the caller. */
typedef struct Memory {
  size_t page;
  char *stack, *heap; /* the first usable byte of each */
  size_t stack_size, heap_size;
} Memory;

/* Maps the stack and the nursery that opts asks for and points r's registers at them
 * (docs/standalone.md, "The contract"); 0 on success, else 2 with a message. */
static int map_memory(const StrobeOptions *opts, Memory *m, StrobeRegTable *r) {
  m->page = (size_t)sysconf(_SC_PAGESIZE);
  m->stack_size = opts->stack;
  m->heap_size = opts->heap;
  errno = 0;
  m->stack = map(&m->stack_size, m->page, m->page, "Cmm stack");
  m->heap = m->stack ? map(&m->heap_size, 0, m->page, "heap nursery") : NULL;
  if (!m->heap) {
    if (m->stack) munmap(m->stack - m->page, m->page + m->stack_size);
    return 2;
  }
  *r = (StrobeRegTable){0};
  r->Sp = (StrobeWord *)(m->stack + m->stack_size) - 1; /* the stop frame's word */
  r->SpLim = (StrobeWord *)(m->stack + STROBE_STACK_RESERVE);
  r->Hp = (StrobeWord *)m->heap - 1;
  r->HpLim = (StrobeWord *)(m->heap + m->heap_size) - 1;
  return 0;
}

static void unmap_memory(const Memory *m) {
  munmap(m->stack - m->page, m->page + m->stack_size);
  munmap(m->heap, m->heap_size);
}

/* Reads STROBE_OPTIONS into *opts; 0 on success, else 2 with what is wrong. */
static int read_options(StrobeOptions *opts) {
  const char *bad = strobe_options_parse(getenv("STROBE_OPTIONS"), opts);
  if (!bad) return 0;
  fprintf(stderr, "strobe: bad STROBE_OPTIONS entry '%.*s'\n", (int)strcspn(bad, ","), bad);
  fputs("note: ", stderr);
  strobe_options_describe(stderr);
  return 2;
}

/* ---- main ------------------------------------------------------------------------- */

static StrobeCapability cap;

int strobe_rt_main(int argc, char **argv, int64_t (*entry)(StrobeRegTable *base)) {
  (void)argc;
  (void)argv;
  StrobeOptions opts;
  if (read_options(&opts)) return 2;
  if (!entry) {
    fputs("strobe: the program has no strobe_entry (build its Cmm with "
          "strobec --entry=LABEL)\n",
          stderr);
    return 2;
  }

  Memory m;
  if (map_memory(&opts, &m, &cap.r)) return 2;
  if (!catch_faults((uintptr_t)(m.stack - m.page), (uintptr_t)m.stack)) return 2;
  strobe_dynstack_configure(&opts);
  /* The mappings live until the process exits. */
  return (int)(entry(&cap.r) & 0xff);
}

/* ---- more runs, from any thread --------------------------------------------------- */

int strobe_rt_run(int64_t (*entry)(StrobeRegTable *base), int64_t *result) {
  StrobeOptions opts;
  if (read_options(&opts)) return 2;
  /* The function table sits below the register table, as in strobe_rt_main's. */
  StrobeCapability *c = calloc(1, sizeof *c);
  Memory m;
  if (!c) {
    fputs("strobe: cannot allocate a register table\n", stderr);
    return 2;
  }
  if (map_memory(&opts, &m, &c->r)) {
    free(c);
    return 2;
  }
  *result = entry(&c->r);
  unmap_memory(&m);
  free(c);
  return 0;
}
