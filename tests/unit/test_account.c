/* Unit tests for the accountant of subsampled Gaussian runs (include/dpdyn/account.h).
 * SPDX-License-Identifier: MIT
 *
 * References: the Gaussian mechanism (q = 1, T steps) is exactly sqrt(T)/sigma-GDP, converted
 * exactly by dpd_privacy_gdp_eps: it must lie between the PLD bounds; RDP (an upper bound too)
 * is never below the PLD's lower bound; the CLT mu is the formula of Bu, Dong, Long, Su (2020).
 * The inverse never overshoots: at->epsilon <= target, and 0.1 % less noise (or one step more,
 * on the same grid) exceeds the target. */
#include "dpd_test.h"

#include <string.h>

#include "dpdyn/account.h"
#include "dpdyn/privacy.h"

static dpd_account poisson_run(dpd_account_segment *seg, double sigma, double q, size_t steps) {
  dpd_account a;
  memset(&a, 0, sizeof a);
  seg->sigma = sigma;
  seg->q = q;
  seg->batch = 0;
  seg->steps = steps;
  a.mechanism = DPD_MECHANISM_SUBSAMPLED;
  a.sampling = DPD_SAMPLING_POISSON;
  a.neighbours = DPD_NEIGHBOURS_ADD_REMOVE;
  a.segments = seg;
  a.nsegments = 1;
  return a;
}

static void expect_invalid(const dpd_account *a, const char *message) {
  dpd_account_result r;
  dpd_err err;
  assert_int_equal(dpd_account_epsilon(a, 1e-5, &r, &err), DPD_EINVAL);
  if (strstr(err.reason, message) == NULL) {
    print_error("expected '%s' in '%s'\n", message, err.reason);
    fail();
  }
}

static void validation_names_the_member(void **state) {
  dpd_account_segment seg[2];
  dpd_account a = poisson_run(seg, 1.0, 2.0, 10);
  dpd_account_result r;
  dpd_err err;
  double sigma;
  (void)state;
  expect_invalid(&a, "segments[0].q = 2 is invalid: the allowed range is (0, 1]");
  seg[0].q = 0.1;
  seg[0].sigma = 0.0;
  expect_invalid(&a, "segments[0].sigma = 0 is invalid");
  seg[0].sigma = 1.0;
  seg[0].steps = 0;
  expect_invalid(&a, "segments[0].steps = 0 is invalid");
  seg[0].steps = 10;
  a.sampling = DPD_SAMPLING_FIXED;
  a.n = 100;
  seg[0].batch = 10;
  expect_invalid(&a, "neighbours = add_remove is invalid with sampling = fixed");
  a.neighbours = DPD_NEIGHBOURS_REPLACE_ONE;
  seg[0].batch = 200;
  expect_invalid(&a, "segments[0].batch = 200 is invalid: the allowed range is [1, n = 100]");
  a = poisson_run(seg, 1.0, 0.1, 10);
  assert_int_equal(dpd_account_epsilon(&a, 1.0, &r, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "delta = 1 is invalid: the allowed range is (0, 1)"));
  /* a target no noise multiplier in the bracket reaches */
  assert_int_equal(dpd_account_sigma_for(&a, 1e-9, 1e-10, &sigma, &r, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "epsilon = 1e-09 is invalid"));
}

/* q = 1: exact GDP between the bounds; shuffle = Gaussian with steps = epochs; replace-one =
 * add/remove at half the noise multiplier. */
static void gaussian_is_exact_gdp(void **state) {
  dpd_account_segment seg;
  dpd_account a = poisson_run(&seg, 2.0, 1.0, 50);
  dpd_account_result r, s;
  double exact;
  (void)state;
  a.mechanism = DPD_MECHANISM_GAUSSIAN;
  assert_int_equal(dpd_account_epsilon(&a, 1e-6, &r, NULL), DPD_OK);
  assert_int_equal(dpd_privacy_gdp_eps(sqrt(50.0) / 2.0, 1e-6, &exact, NULL), DPD_OK);
  assert_true(r.epsilon_lower <= exact && exact <= r.epsilon);
  assert_true(r.epsilon - r.epsilon_lower <= 0.0101 * r.epsilon);
  assert_true(r.epsilon_rdp >= r.epsilon_lower);
  assert_true(isnan(r.mu_clt));
  a.mechanism = DPD_MECHANISM_SHUFFLE;
  a.h = r.h;
  assert_int_equal(dpd_account_epsilon(&a, 1e-6, &s, NULL), DPD_OK);
  a.mechanism = DPD_MECHANISM_GAUSSIAN;
  assert_int_equal(dpd_account_epsilon(&a, 1e-6, &r, NULL), DPD_OK);
  assert_true(s.epsilon == r.epsilon && s.epsilon_lower == r.epsilon_lower);
  a.neighbours = DPD_NEIGHBOURS_REPLACE_ONE;
  seg.sigma = 4.0;
  assert_int_equal(dpd_account_epsilon(&a, 1e-6, &s, NULL), DPD_OK);
  assert_true(s.epsilon == r.epsilon);
}

/* Poisson: RDP above the lower bound, the CLT mu from its formula, the accuracy met. */
static void poisson_rdp_and_clt(void **state) {
  dpd_account_segment seg;
  dpd_account a = poisson_run(&seg, 1.0, 0.02, 300);
  dpd_account_result r;
  (void)state;
  assert_int_equal(dpd_account_epsilon(&a, 1e-5, &r, NULL), DPD_OK);
  assert_true(r.epsilon_lower <= r.epsilon_estimate && r.epsilon_estimate <= r.epsilon);
  assert_true(r.epsilon_rdp >= r.epsilon_lower && r.best_alpha >= 2.0);
  assert_rel(r.mu_clt, 0.02 * sqrt(300.0 * expm1(1.0)), 1e-12);
  assert_true(r.epsilon_clt > 0.0);
  assert_true(r.epsilon - r.epsilon_lower <= 0.0101 * r.epsilon);
  assert_int_equal((int)r.total_steps, 300);
}

/* Two equal segments = one segment of their steps (the same grid); the curve is monotone. */
static void heterogeneous_and_curve(void **state) {
  dpd_account_segment two[2], one;
  dpd_account a = poisson_run(&one, 1.5, 0.05, 200), b = poisson_run(two, 1.5, 0.05, 100);
  dpd_account_result ra, rb;
  double eps[20], up[20], low[20];
  (void)state;
  two[1] = two[0];
  b.nsegments = 2;
  a.h = b.h = 2e-4;
  assert_int_equal(dpd_account_epsilon(&a, 1e-6, &ra, NULL), DPD_OK);
  assert_int_equal(dpd_account_epsilon(&b, 1e-6, &rb, NULL), DPD_OK);
  assert_rel(ra.epsilon, rb.epsilon, 1e-6);
  assert_rel(ra.epsilon_lower, rb.epsilon_lower, 1e-6);
  for (size_t i = 0; i < 20; i++) {
    eps[i] = 0.1 * (double)i;
  }
  assert_int_equal(dpd_account_curve(&a, eps, 20, up, low, NULL), DPD_OK);
  for (size_t i = 0; i < 20; i++) {
    assert_true(low[i] <= up[i] && up[i] <= 1.0 && low[i] >= 0.0);
    assert_true(i == 0 || (up[i] <= up[i - 1] && low[i] <= low[i - 1]));
  }
}

static void inverse_never_overshoots(void **state) {
  dpd_account_segment seg;
  dpd_account a = poisson_run(&seg, 1.0, 0.02, 200), b;
  dpd_account_result at, r;
  double sigma;
  size_t steps;
  (void)state;
  assert_int_equal(dpd_account_sigma_for(&a, 1.0, 1e-5, &sigma, &at, NULL), DPD_OK);
  assert_true(at.epsilon <= 1.0 && at.epsilon > 0.98);
  b = a;
  b.h = at.h; /* the grid the answer was found on */
  seg.sigma = sigma;
  assert_int_equal(dpd_account_epsilon(&b, 1e-5, &r, NULL), DPD_OK);
  assert_true(r.epsilon == at.epsilon);
  seg.sigma = sigma * (1.0 - 1e-3);
  assert_int_equal(dpd_account_epsilon(&b, 1e-5, &r, NULL), DPD_OK);
  assert_true(r.epsilon > 1.0);
  /* steps on a given grid: the answer meets the target, one step more does not */
  seg.sigma = 1.0;
  a.h = 1e-4;
  assert_int_equal(dpd_account_steps_for(&a, 1.0, 1e-5, &steps, &at, NULL), DPD_OK);
  assert_true(at.epsilon <= 1.0 && steps >= 1 && at.total_steps == steps);
  seg.steps = steps + 1;
  assert_int_equal(dpd_account_epsilon(&a, 1e-5, &r, NULL), DPD_OK);
  assert_true(r.epsilon > 1.0);
  /* even one step exceeds: 0 */
  seg.sigma = 0.3;
  assert_int_equal(dpd_account_steps_for(&a, 0.01, 1e-5, &steps, &at, NULL), DPD_OK);
  assert_int_equal((int)steps, 0);
}

static void names(void **state) {
  (void)state;
  assert_string_equal(dpd_mechanism_name(DPD_MECHANISM_SHUFFLE), "shuffle");
  assert_string_equal(dpd_sampling_name(DPD_SAMPLING_REPLACEMENT), "replacement");
  assert_string_equal(dpd_neighbours_name(DPD_NEIGHBOURS_REPLACE_ONE), "replace_one");
  assert_null(dpd_mechanism_name((dpd_mechanism)7));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(validation_names_the_member), cmocka_unit_test(gaussian_is_exact_gdp),
      cmocka_unit_test(poisson_rdp_and_clt),         cmocka_unit_test(heterogeneous_and_curve),
      cmocka_unit_test(inverse_never_overshoots),    cmocka_unit_test(names)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
