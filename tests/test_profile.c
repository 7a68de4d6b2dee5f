/* test_profile.c — the profile's table of stacks and its folded output, and the leaf
 * names of code symbols (rts/profile.c, docs/profiling.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile.h"

static const char *const leaf_names[] = {"", "[gc]", "[rts]", "[lib]", "[main]", "[nostack]"};

typedef struct Table {
  RtProfTable t;
  void *mem;
} Table;

static Table *table(uint32_t nslots, uint32_t depth) {
  Table *tb = calloc(1, sizeof *tb);
  tb->mem = calloc(1, rt_prof_table_bytes(nslots, depth));
  rt_prof_table_init(&tb->t, tb->mem, nslots, depth);
  return tb;
}

static void drop(Table *tb) {
  free(tb->mem);
  free(tb);
}

/* The folded text of t. */
static char *folded(const RtProfTable *t, long *lines) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  *lines = rt_prof_write_folded(t, out, leaf_names);
  fclose(out);
  return buf;
}

static const char f_main[] = "Main.main", f_a[] = "Main.a", f_b[] = "Main.b";

static void test_counts_and_merges(void **state) {
  (void)state;
  Table *tb = table(64, 8);
  const char *ab[] = {f_main, f_a, f_b}, *a[] = {f_main, f_a};
  for (int i = 0; i < 5; i++) assert_true(rt_prof_add(&tb->t, ab, 3, 0, 0));
  for (int i = 0; i < 2; i++) assert_true(rt_prof_add(&tb->t, a, 2, 0, 0));
  assert_true(rt_prof_add(&tb->t, a, 2, RT_PROF_GC, 0));
  assert_true(rt_prof_add(&tb->t, NULL, 0, RT_PROF_LIB, 0));
  assert_true(rt_prof_add(&tb->t, ab, 3, 0, RT_PROF_TRUNCATED));
  /* the same names at other addresses: one line in the file */
  char other_b[sizeof f_b];
  memcpy(other_b, f_b, sizeof f_b);
  const char *ab2[] = {f_main, f_a, other_b};
  assert_true(rt_prof_add(&tb->t, ab2, 3, 0, 0));
  long lines;
  char *text = folded(&tb->t, &lines);
  assert_string_equal(text, "Main.main;Main.a 2\n"
                            "Main.main;Main.a;Main.b 6\n"
                            "Main.main;Main.a;[gc] 1\n"
                            "[lib] 1\n"
                            "[truncated];Main.main;Main.a;Main.b 1\n");
  assert_int_equal(lines, 5);
  free(text);
  drop(tb);
}

static void test_bounded(void **state) {
  (void)state;
  Table *tb = table(4, 2);
  static char names[10][8];
  for (int i = 0; i < 10; i++) {
    snprintf(names[i], sizeof names[i], "M.f%d", i);
    const char *fr[] = {f_main, names[i]};
    bool kept = rt_prof_add(&tb->t, fr, 2, 0, 0);
    assert_int_equal(kept, i < 4); /* 4 slots: the others are lost */
  }
  const char *deep[] = {f_main, f_a, f_b};
  assert_false(rt_prof_add(&tb->t, deep, 3, 0, 0)); /* deeper than the table's frames */
  assert_int_equal(tb->t.lost, 7);
  long lines;
  char *text = folded(&tb->t, &lines);
  assert_int_equal(lines, 5);
  assert_non_null(strstr(text, "[lost] 7\n"));
  free(text);
  drop(tb);
}

/* The writer reads the slots that samples claimed (the table's used index), not every
 * slot: the pages of the others are never touched. */
static void test_writes_claimed_slots_only(void **state) {
  (void)state;
  Table *tb = table(64, 4);
  const char *fr[] = {f_main, f_a};
  for (int i = 0; i < 3; i++) assert_true(rt_prof_add(&tb->t, fr, 2, 0, 0));
  assert_int_equal(tb->t.nused, 1);
  /* a slot no sample claimed, made to look full: not written */
  for (uint32_t i = 0; i < tb->t.nslots; i++) {
    RtProfSlot *s = (RtProfSlot *)(void *)(tb->t.slots + (size_t)i * tb->t.stride);
    if (s->state == 0) {
      s->state = 6;
      s->count = 9;
      s->depth = 1;
      s->frames[0] = f_b;
      break;
    }
  }
  long lines;
  char *text = folded(&tb->t, &lines);
  assert_string_equal(text, "Main.main;Main.a 3\n");
  assert_int_equal(lines, 1);
  free(text);
  drop(tb);
}

static void test_frame_names_are_words(void **state) {
  (void)state;
  Table *tb = table(8, 4);
  const char *fr[] = {"Main.a b;c"};
  assert_true(rt_prof_add(&tb->t, fr, 1, 0, 0));
  assert_true(rt_prof_add(&tb->t, NULL, 0, 0, 0));
  long lines;
  char *text = folded(&tb->t, &lines);
  assert_string_equal(text, "Main.a_b_c 1\n[nostack] 1\n");
  free(text);
  drop(tb);
}

static void test_symbol_labels(void **state) {
  (void)state;
  const char *mods[] = {"Main", "Data.Tree"};
  char buf[64];
  assert_null(rt_prof_symbol_label("Main_zdwloop_info", mods, 2, buf, sizeof buf));
  assert_null(rt_prof_symbol_label("DataziTree_build_info", mods, 2, buf, sizeof buf));
  assert_string_equal(rt_prof_symbol_label("Other_f_info", mods, 2, buf, sizeof buf), "[main]");
  assert_string_equal(rt_prof_symbol_label("base_GHCziShow_zdwshowSignedInt_info", mods, 2,
                                           buf, sizeof buf), "[base]");
  assert_string_equal(rt_prof_symbol_label("ghczmprim_GHCziClasses_modIntzh_info", mods, 2,
                                           buf, sizeof buf), "[ghc-prim]");
  assert_string_equal(rt_prof_symbol_label("containerszm0zi6zi5zi1_DataziMapziInternal_insert_info",
                                           mods, 2, buf, sizeof buf), "[containers]");
  assert_string_equal(rt_prof_symbol_label("textzm1zi2zi4zi1zmabc_DataziText_pack_info", mods,
                                           2, buf, sizeof buf), "[text]");
  assert_string_equal(rt_prof_symbol_label("stg_upd_frame_info", mods, 2, buf, sizeof buf),
                      "[rts]");
  assert_string_equal(rt_prof_symbol_label("evacuate", mods, 2, buf, sizeof buf), "[rts]");
  assert_string_equal(rt_prof_symbol_label("rts_evalIO", mods, 2, buf, sizeof buf), "[rts]");
  /* `:Main.main`, the program's entry, is of Main's object */
  assert_null(rt_prof_symbol_label("ZCMain_main_info", mods, 2, buf, sizeof buf));
  const char *other[] = {"Data.Tree"};
  assert_string_equal(rt_prof_symbol_label("ZCMain_main_info", other, 1, buf, sizeof buf),
                      "[main]");
}

/* Local symbols get their classes from the code addresses of the tick descriptors and
 * from their neighbours (rt_prof_resolve_locals). */
static void test_resolve_locals(void **state) {
  (void)state;
  enum { U = RT_PROF_UNRESOLVED, BASE = RT_PROF_FIRST_NAMED };
  RtProfSym s[] = {
      {0x100, RT_PROF_RTS, 0, -1},  /* _start (global) */
      {0x110, U, 0, 1},             /* crt's frame_dummy: the RTS before it */
      {0x200, U, 0, 2},             /* sat_s1_info, Main's first code: Main's */
      {0x240, U, 0, 2},             /* block_c1_info: Main's */
      {0x280, U, 0, 2},             /* $wgo1_r1_info, holding a descriptor's code */
      {0x300, U, 0, 2},             /* block_c2_info, after it */
      {0x380, RT_PROF_INSTRUMENTED, 0, -1}, /* Main_main1_info (global) */
      {0x400, U, 0, 2},             /* lvl_r2_info: the global before it, Main's */
      {0x500, BASE, 0, -1},         /* base_GHCziList_..._info */
      {0x540, U, 0, 2},             /* a local of another object in the same group, no
                                       resolved entry of its group after it: base's */
      {0x600, RT_PROF_LIB, 2, -1},  /* the section's end */
  };
  const uintptr_t code[] = {0x2a0, 0x900};
  rt_prof_resolve_locals(s, sizeof s / sizeof *s, code, 2);
  const uint32_t want[] = {RT_PROF_RTS, RT_PROF_RTS, RT_PROF_INSTRUMENTED,
                           RT_PROF_INSTRUMENTED, RT_PROF_INSTRUMENTED, RT_PROF_INSTRUMENTED,
                           RT_PROF_INSTRUMENTED, RT_PROF_INSTRUMENTED, BASE, BASE,
                           RT_PROF_LIB};
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) assert_int_equal(s[i].cls, want[i]);
  /* an uninstrumented object's locals (no code address) after another's: their own
     global's class when it follows, else the one before */
  RtProfSym t[] = {
      {0x100, RT_PROF_INSTRUMENTED, 0, -1}, {0x180, U, 0, 3}, {0x200, U, 0, 4},
      {0x240, RT_PROF_MAIN, 0, -1},         {0x280, U, 0, 4},
  };
  rt_prof_resolve_locals(t, 5, NULL, 0);
  assert_int_equal(t[1].cls, RT_PROF_INSTRUMENTED);
  assert_int_equal(t[2].cls, RT_PROF_INSTRUMENTED); /* a global is of no group */
  assert_int_equal(t[4].cls, RT_PROF_MAIN);
  /* nothing before: the RTS */
  RtProfSym u[] = {{0x100, U, 0, 0}};
  rt_prof_resolve_locals(u, 1, NULL, 0);
  assert_int_equal(u[0].cls, RT_PROF_RTS);
}

static int by_address(const void *a, const void *b) {
  const RtProfSym *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  return x->prio < y->prio ? -1 : x->prio > y->prio;
}

/* The code map's sort (a radix sort of two parts, merged) orders as qsort does, equal
 * addresses by prio; the executable's part and the libraries' may interleave. */
static void test_sort_syms(void **state) {
  (void)state;
  enum { N = 3000, NEXE = 2600 };
  RtProfSym *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
  uint64_t x = 88172645463325252u;
  for (int round = 0; round < 4; round++) {
    for (size_t i = 0; i < N; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift */
      uintptr_t lo = i < NEXE ? 0x400000 + (x % (round == 3 ? 64 : 0x100000))
                              : (round & 1 ? 0x7f0000000000 + (x >> 20) : 0x401000 + x % 4096);
      a[i] = (RtProfSym){lo & ~(uintptr_t)round, (uint32_t)i, (uint32_t)(x >> 40) % 3, -1};
    }
    memcpy(b, a, N * sizeof *a);
    rt_prof_sort_syms(a, NEXE, N);
    qsort(b, N, sizeof *b, by_address);
    for (size_t i = 0; i < N; i++) {
      assert_int_equal(a[i].lo, b[i].lo);
      assert_int_equal(a[i].prio, b[i].prio);
    }
  }
  RtProfSym one = {5, 0, 0, -1};
  rt_prof_sort_syms(&one, 1, 1);
  rt_prof_sort_syms(NULL, 0, 0);
  free(a);
  free(b);
}

static void test_options(void **state) {
  (void)state;
  StrobeOptions o;
  assert_null(strobe_options_parse(NULL, &o));
  assert_string_equal(o.profile.path, "");
  assert_int_equal(o.profile_rate, 99);
  assert_null(strobe_options_parse("profile=/tmp/x.folded,profile_rate=997", &o));
  assert_string_equal(o.profile.path, "/tmp/x.folded");
  assert_int_equal(o.profile_rate, 997);
  char long_path[1100];
  memset(long_path, 'a', sizeof long_path);
  memcpy(long_path, "profile=", 8);
  long_path[sizeof long_path - 1] = 0;
  assert_non_null(strobe_options_parse(long_path, &o)); /* over 1023 bytes */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_and_merges), cmocka_unit_test(test_bounded),
      cmocka_unit_test(test_writes_claimed_slots_only),
      cmocka_unit_test(test_frame_names_are_words), cmocka_unit_test(test_symbol_labels),
      cmocka_unit_test(test_resolve_locals), cmocka_unit_test(test_sort_syms),
      cmocka_unit_test(test_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
