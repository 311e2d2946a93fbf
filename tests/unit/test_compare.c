/* Theory against simulation (compare.h) and tables built by name (model.h: dpd_table_builder).
 * SPDX-License-Identifier: MIT
 *
 * dpd_gap_in_se: the ratio for se > 0; se = 0 counts a gap at rounding level as none and any
 * other (an infinite one included) as infinite; NaN for NaN inputs or se < 0.
 * dpd_compare_add: the five summary numbers (prefix + name), the gap column appended to the
 * table (its default name, a prefix's, a given one), the "seeds < 8" warning once per output for
 * 2..7 replicates and never for 1 or >= 8. The builder: names checked, a duplicate refused, the
 * columns in the order added, the built table moved into an output. */
#include "dpd_test.h"

#include <string.h>

#include "dpdyn/compare.h"
#include "dpdyn/model.h"

static double number(const dpd_output *out, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(out->summary, key);
  if (!cJSON_IsNumber(v)) {
    print_error("summary key '%s' is not a number\n", key);
    fail();
  }
  return v->valuedouble;
}

static size_t warnings(const dpd_output *out) {
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(out->summary, "warnings");
  size_t notes = 0;
  for (size_t k = 0; k < out->nnotes; k++) {
    notes += strstr(out->notes[k], "seeds") != NULL;
  }
  assert_int_equal(notes, w != NULL ? (size_t)cJSON_GetArraySize(w) : 0);
  return notes;
}

static void gap_in_se_is_the_ratio_for_positive_se(void **state) {
  (void)state;
  assert_rel(dpd_gap_in_se(1.385, 1.2, 0.0617), 0.185 / 0.0617, 1e-13);
  assert_rel(dpd_gap_in_se(1.2, 1.385, 0.0617), 0.185 / 0.0617, 1e-13); /* |theory - sim| */
  assert_abs(dpd_gap_in_se(2.385, 2.385, 0.31), 0.0, 0.0);
  assert_true(isinf(dpd_gap_in_se(INFINITY, 1.0, 0.5)));
}

static void gap_in_se_with_zero_se_is_zero_or_inf(void **state) {
  (void)state;
  /* no randomness left: a rounding-level gap is none, a real one infinitely many SEs */
  assert_abs(dpd_gap_in_se(0.7319, 0.7319 * (1.0 + 3e-12), 0.0), 0.0, 0.0);
  assert_abs(dpd_gap_in_se(0.0, 0.0, 0.0), 0.0, 0.0);
  assert_true(isinf(dpd_gap_in_se(0.7319, 0.7320, 0.0)));
  assert_true(dpd_gap_in_se(0.7319, 0.7320, 0.0) > 0.0);
  /* a divergent side is a real gap, not a rounding one */
  assert_true(isinf(dpd_gap_in_se(INFINITY, 0.5, 0.0)));
  assert_true(isinf(dpd_gap_in_se(0.5, -INFINITY, 0.0)));
}

static void gap_in_se_is_nan_for_nan_inputs(void **state) {
  (void)state;
  assert_true(isnan(dpd_gap_in_se(NAN, 1.0, 0.2)));
  assert_true(isnan(dpd_gap_in_se(1.0, NAN, 0.2)));
  assert_true(isnan(dpd_gap_in_se(1.0, 1.1, NAN)));
  assert_true(isnan(dpd_gap_in_se(1.0, 1.1, -0.2)));
  assert_true(isnan(dpd_gap_in_se(NAN, NAN, 0.0)));
  assert_true(isnan(dpd_gap_in_se(INFINITY, INFINITY, 0.0))); /* inf - inf: no gap defined */
}

/* theory, sim, se on a grid of 4: gaps 0.1, 0.3 (the largest, 2.5 SE: the largest in SE),
 * 0.2, 0.05 (2 SE: the final values). */
static const double theory[4] = {1.0, 0.9, 0.8, 0.75};
static const double sim[4] = {1.1, 1.2, 0.6, 0.7};
static const double se[4] = {0.1, 0.12, 0.2, 0.025};

static dpd_compare_spec spec(const char *prefix, const char *column) {
  dpd_compare_spec s = {.prefix = prefix,
                        .theory = theory,
                        .sim = sim,
                        .se = se,
                        .g = 4,
                        .final_theory = 0.75,
                        .final_sim = 0.7,
                        .final_se = 0.025,
                        .column = column};
  return s;
}

static void compare_add_writes_the_five_numbers_and_the_column(void **state) {
  dpd_output *out;
  dpd_table_builder *b;
  dpd_gap_stats gap;
  dpd_err err;
  const double t[4] = {0.0, 0.25, 0.5, 1.0};
  dpd_compare_spec s = spec("", NULL);
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_create(4, &b, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_add(b, "t", t, &err), DPD_OK);
  assert_int_equal(dpd_compare_add(out, b, &s, 16, &gap, &err), DPD_OK);
  assert_rel(number(out, "sup_gap"), 0.3, 1e-14);
  assert_rel(number(out, "sup_gap_in_se"), 2.5, 1e-14);
  assert_rel(number(out, "final_gap"), 0.05, 1e-13);
  assert_rel(number(out, "final_gap_se"), 0.025, 0.0);
  assert_rel(number(out, "final_gap_in_se"), 2.0, 1e-13);
  assert_rel(gap.sup_gap_in_se, 2.5, 1e-14);
  assert_rel(gap.final_gap_in_se, number(out, "final_gap_in_se"), 0.0);
  assert_int_equal(warnings(out), 0);
  assert_int_equal(dpd_output_table_add_built(out, "trajectory.tsv", "fig", b, &err), DPD_OK);
  {
    const dpd_table *tab = dpd_output_table_get(out, "trajectory.tsv");
    const double *z = dpd_table_column_get(tab, "gap_in_se");
    assert_non_null(z);
    assert_int_equal(tab->ncols, 2);
    assert_string_equal(tab->columns[1], "gap_in_se"); /* appended at the end */
    for (size_t j = 0; j < 4; j++) {
      assert_rel(z[j], fabs(theory[j] - sim[j]) / se[j], 1e-14);
    }
    /* the residual panel's numbers are the summary's */
    assert_rel(fmax(fmax(z[0], z[1]), fmax(z[2], z[3])), number(out, "sup_gap_in_se"), 0.0);
  }
  dpd_output_free(out);
}

/* A table of another length than the grid is refused (the column would overrun it). */
static void compare_add_refuses_a_table_of_other_rows(void **state) {
  dpd_output *out;
  dpd_table_builder *b;
  dpd_err err;
  dpd_compare_spec s = spec("", NULL);
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_create(3, &b, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_rows(b), 3);
  assert_int_equal(dpd_compare_add(out, b, &s, 16, NULL, &err), DPD_EINVAL);
  assert_null(dpd_table_builder_find(b, "gap_in_se"));
  dpd_table_builder_free(b);
  dpd_output_free(out);
}

static void compare_add_names_by_prefix_or_column(void **state) {
  dpd_output *out;
  dpd_table_builder *b;
  dpd_err err;
  dpd_compare_spec s1 = spec("sde_", NULL), s2 = spec("", "residual"), s3 = spec("x_", NULL);
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_create(4, &b, &err), DPD_OK);
  assert_int_equal(dpd_compare_add(out, b, &s1, 1, NULL, &err), DPD_OK);
  assert_int_equal(dpd_compare_add(out, b, &s2, 1, NULL, &err), DPD_OK);
  assert_int_equal(dpd_compare_add(out, NULL, &s3, 1, NULL, &err), DPD_OK); /* no table */
  assert_rel(number(out, "sde_sup_gap_in_se"), 2.5, 1e-14);
  assert_rel(number(out, "sup_gap_in_se"), 2.5, 1e-14);
  assert_rel(number(out, "x_final_gap"), 0.05, 1e-13);
  assert_non_null(dpd_table_builder_find(b, "sde_gap_in_se"));
  assert_non_null(dpd_table_builder_find(b, "residual"));
  assert_null(dpd_table_builder_find(b, "gap_in_se"));
  assert_null(dpd_table_builder_find(b, "x_gap_in_se"));
  /* the same column twice is refused */
  assert_int_equal(dpd_compare_add(out, b, &s1, 1, NULL, &err), DPD_EINVAL);
  dpd_table_builder_free(b);
  dpd_output_free(out);
}

static void compare_add_zero_se_and_nan(void **state) {
  dpd_output *out;
  dpd_err err;
  const double th[3] = {1.0, 2.0, 3.0}, si[3] = {1.0, 2.5, 3.0}, z0[3] = {0.0, 0.0, 0.0};
  dpd_compare_spec s = {.theory = th,
                        .sim = si,
                        .se = z0,
                        .g = 3,
                        .final_theory = 3.0,
                        .final_sim = 3.0,
                        .final_se = 0.0};
  const cJSON *na;
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  assert_int_equal(dpd_compare_add(out, NULL, &s, 1, NULL, &err), DPD_OK);
  assert_true(isinf(number(out, "sup_gap_in_se")));
  assert_abs(number(out, "final_gap_in_se"), 0.0, 0.0);
  /* a final SE not available: null with a reason, never NaN in the summary */
  s.prefix = "n_";
  s.final_se = NAN;
  assert_int_equal(dpd_compare_add(out, NULL, &s, 1, NULL, &err), DPD_OK);
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(out->summary, "n_final_gap_in_se")));
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(out->summary, "n_final_gap_se")));
  na = cJSON_GetObjectItemCaseSensitive(out->summary, "not_available");
  assert_non_null(cJSON_GetObjectItemCaseSensitive(na, "n_final_gap_in_se"));
  dpd_output_free(out);
}

static void seeds_warning_once_for_two_to_seven(void **state) {
  dpd_err err;
  (void)state;
  for (size_t seeds = 1; seeds <= 9; seeds++) {
    dpd_output *out;
    dpd_compare_spec s1 = spec("", NULL), s2 = spec("sde_", NULL);
    assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
    assert_int_equal(dpd_compare_add(out, NULL, &s1, seeds, NULL, &err), DPD_OK);
    assert_int_equal(dpd_compare_add(out, NULL, &s2, seeds, NULL, &err), DPD_OK);
    if (seeds >= 2 && seeds < 8) {
      char want[32];
      snprintf(want, sizeof want, "seeds = %zu < 8", seeds);
      assert_int_equal(warnings(out), 1);
      assert_non_null(strstr(out->notes[0], want));
      assert_non_null(strstr(out->notes[0], "warning: "));
    } else {
      assert_int_equal(warnings(out), 0);
    }
    dpd_output_free(out);
  }
}

static void builder_checks_names_and_keeps_the_order(void **state) {
  dpd_table_builder *b;
  dpd_output *out;
  dpd_err err;
  const double a[3] = {1.5, 2.5, 3.5};
  double *c;
  (void)state;
  assert_int_equal(dpd_table_builder_create(3, &b, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_add(b, "", a, &err), DPD_EINVAL);
  assert_int_equal(dpd_table_builder_add(b, "two words", a, &err), DPD_EINVAL);
  assert_int_equal(dpd_table_builder_add(b, "tab\tname", a, &err), DPD_EINVAL);
  for (int k = 0; k < 40; k++) { /* past the first growth */
    char name[16];
    snprintf(name, sizeof name, "c%02d", k);
    assert_int_equal(dpd_table_builder_add(b, name, k % 2 ? a : NULL, &err), DPD_OK);
  }
  assert_int_equal(dpd_table_builder_add(b, "c07", a, &err), DPD_EINVAL); /* duplicate */
  assert_null(dpd_table_builder_column(b, "c07", &err));
  assert_non_null(c = dpd_table_builder_column(b, "last", &err));
  c[2] = 9.25;
  assert_ptr_equal(dpd_table_builder_find(b, "last"), c);
  assert_null(dpd_table_builder_find(b, "absent"));
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  assert_int_equal(dpd_output_table_add_built(out, "t.tsv", NULL, b, &err), DPD_OK);
  {
    const dpd_table *t = dpd_output_table_get(out, "t.tsv");
    assert_int_equal(t->ncols, 41);
    assert_int_equal(t->rows, 3);
    for (size_t k = 0; k < 40; k++) {
      char name[16];
      snprintf(name, sizeof name, "c%02zu", k);
      assert_string_equal(t->columns[k], name);
      assert_abs(t->data[k * 3 + 1], k % 2 ? 2.5 : 0.0, 0.0); /* NULL: zeros */
    }
    assert_string_equal(t->columns[40], "last");
    assert_abs(dpd_table_column_get(t, "last")[2], 9.25, 0.0);
  }
  dpd_output_free(out);
}

static void builder_of_no_rows_or_columns(void **state) {
  dpd_table_builder *b;
  dpd_output *out;
  dpd_err err;
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_create(0, &b, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_add(b, "t", NULL, &err), DPD_OK);
  assert_int_equal(dpd_output_table_add_built(out, "empty.tsv", NULL, b, &err), DPD_OK);
  assert_int_equal(dpd_table_builder_create(5, &b, &err), DPD_OK);
  assert_int_equal(dpd_output_table_add_built(out, "none.tsv", NULL, b, &err), DPD_OK);
  assert_int_equal(dpd_output_table_get(out, "empty.tsv")->rows, 0);
  assert_int_equal(dpd_output_table_get(out, "none.tsv")->ncols, 0);
  dpd_table_builder_free(NULL);
  dpd_output_free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gap_in_se_is_the_ratio_for_positive_se),
      cmocka_unit_test(gap_in_se_with_zero_se_is_zero_or_inf),
      cmocka_unit_test(gap_in_se_is_nan_for_nan_inputs),
      cmocka_unit_test(compare_add_writes_the_five_numbers_and_the_column),
      cmocka_unit_test(compare_add_refuses_a_table_of_other_rows),
      cmocka_unit_test(compare_add_names_by_prefix_or_column),
      cmocka_unit_test(compare_add_zero_se_and_nan),
      cmocka_unit_test(seeds_warning_once_for_two_to_seven),
      cmocka_unit_test(builder_checks_names_and_keeps_the_order),
      cmocka_unit_test(builder_of_no_rows_or_columns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
