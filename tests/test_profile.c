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
      cmocka_unit_test(test_frame_names_are_words), cmocka_unit_test(test_symbol_labels),
      cmocka_unit_test(test_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
