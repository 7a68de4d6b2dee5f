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
 * checks call strobe_heap_exhausted / strobe_stack_exhausted.  Nothing is collected. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, sigaltstack */
#include "rt_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the capability's layout is lowering/globalregs.def's ------------------------- */

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

/* ---- main ------------------------------------------------------------------------- */

static StrobeCapability cap;

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

int strobe_rt_main(int argc, char **argv, int64_t (*entry)(StrobeRegTable *base)) {
  (void)argc;
  (void)argv;
  StrobeOptions opts;
  const char *bad = strobe_options_parse(getenv("STROBE_OPTIONS"), &opts);
  if (bad) {
    fprintf(stderr, "strobe: bad STROBE_OPTIONS entry '%.*s'\n", (int)strcspn(bad, ","),
            bad);
    fputs("note: ", stderr);
    strobe_options_describe(stderr);
    return 2;
  }
  if (!entry) {
    fputs("strobe: the program has no strobe_entry (build its Cmm with "
          "strobec --entry=LABEL)\n",
          stderr);
    return 2;
  }

  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t stack_size = opts.stack, heap_size = opts.heap;
  errno = 0;
  char *stack = map(&stack_size, page, page, "Cmm stack");
  char *heap = stack ? map(&heap_size, 0, page, "heap nursery") : NULL;
  if (!heap) return 2;
  if (!catch_faults((uintptr_t)(stack - page), (uintptr_t)stack)) return 2;
  strobe_dynstack_configure(&opts);

  cap = (StrobeCapability){0};
  StrobeRegTable *r = &cap.r;
  r->Sp = (StrobeWord *)(stack + stack_size) - 1; /* the stop frame's word */
  r->SpLim = (StrobeWord *)(stack + STROBE_STACK_RESERVE);
  r->Hp = (StrobeWord *)heap - 1;
  r->HpLim = (StrobeWord *)(heap + heap_size) - 1;
  return (int)(entry(r) & 0xff);
}
