/* Unit tests for the random-features DP-GD privacy accounting (docs/math.md §2.3): the exact and
 * moments calibrations of sigma and the guarantee report of a run. The mu-GDP conversions
 * themselves are tested in test_privacy.c.
 * SPDX-License-Identifier: MIT */
#include "dpd_test.h"

#include <float.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>

#include "dpdyn/rf_privacy.h"

static void sigma_exact_is_minimal_and_valid(void **state) {
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  for (double eps = 0.1; eps < 12.0; eps *= 1.7) {
    double eta = 0.0137;
    size_t steps = 731;
    double delta = 1e-5;
    double sigma = -1.0;
    double eps_got = -1.0;
    double d = 1.0;
    assert_int_equal(dpd_rf_privacy_sigma_exact(eta, steps, eps, delta, &sigma, &err), DPD_OK);
    assert_int_equal(dpd_rf_privacy_eps_delivered(eta, steps, sigma, delta, &eps_got, &err),
                     DPD_OK);
    assert_true(eps_got <= eps * (1.0 + 1e-12));
    assert_rel(eps_got, eps, 1e-9);
    assert_int_equal(dpd_privacy_gdp_delta(sqrt(eta * (double)steps) / sigma, eps, &d, &err),
                     DPD_OK);
    assert_true(d <= delta);
  }
}

static void moments_sigma_is_valid_but_loose_over_a_grid(void **state) {
  static const double deltas[] = {1e-3, 1e-5, 1.0 / 50000.0, 1e-8, 1e-12};
  static const double etas[] = {0.01, 0.37, 2.5};
  static const size_t steps_list[] = {1, 40, 12345};
  dpd_err err;
  double rmin = INFINITY;
  double rmax = 0.0;
  (void)state;
  dpd_err_reset(&err);
  for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) {
    double l = -log(deltas[i]);
    for (double eps = 0.01; eps < 8.0 * l; eps *= 1.9) {
      for (size_t j = 0; j < sizeof etas / sizeof etas[0]; j++) {
        for (size_t k = 0; k < sizeof steps_list / sizeof steps_list[0]; k++) {
          dpd_rf_privacy_report r;
          int status = dpd_rf_privacy_report_eval(etas[j], steps_list[k], eps, deltas[i], &r, &err);
          if (status != DPD_OK) {
            print_error("report(eps = %g, delta = %g): %s\n", eps, deltas[i], err.reason);
            fail();
          }
          assert_true(r.eps_moments_exact <= eps);
          assert_true(r.ratio >= 1.0);
          if (r.ratio < rmin) {
            rmin = r.ratio;
          }
          if (r.ratio > rmax) {
            rmax = r.ratio;
          }
        }
      }
      /* The ratio depends on (eps, delta) only, not on eta T. */
    }
  }
  print_message("sigma_moments / sigma_exact over the grid: min %.4f, max %.4f\n", rmin, rmax);
  assert_true(rmin > 1.0);
}

static void moments_ratio_table(void **state) {
  static const double deltas[] = {1e-5, 1e-8};
  static const double epss[] = {0.1, 0.5, 1.0, 2.0, 4.0, 8.0};
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  for (size_t i = 0; i < 2; i++) {
    for (size_t j = 0; j < 6; j++) {
      dpd_rf_privacy_report r;
      assert_int_equal(dpd_rf_privacy_report_eval(0.05, 200, epss[j], deltas[i], &r, &err), DPD_OK);
      print_message("delta %g eps %4.2f: sigma_moments %.5f sigma_exact %.5f ratio %.4f "
                    "eps_true(sigma_moments) %.5f\n",
                    deltas[i], epss[j], r.sigma_moments, r.sigma_exact, r.ratio,
                    r.eps_moments_exact);
    }
  }
}

/* Both calibrations scale as sqrt(eta T): the ratio depends on (eps, delta) only. */
static void calibrations_scale_as_sqrt_eta_t(void **state) {
  dpd_err err;
  dpd_rf_privacy_report r1;
  dpd_rf_privacy_report r2;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_privacy_report_eval(0.0123, 457, 1.37, 2e-6, &r1, &err), DPD_OK);
  assert_int_equal(dpd_rf_privacy_report_eval(0.0123 * 3.0, 457 * 12, 1.37, 2e-6, &r2, &err),
                   DPD_OK);
  assert_rel(r2.sigma_moments, 6.0 * r1.sigma_moments, 1e-14);
  assert_rel(r2.sigma_exact, 6.0 * r1.sigma_exact, 1e-12);
  assert_rel(r2.ratio, r1.ratio, 1e-12);
  assert_rel(r2.eps_moments_exact, r1.eps_moments_exact, 1e-11);
  assert_rel(r1.mu_moments, 1.37 / sqrt(8.0 * log(1.0 / 2e-6)), 1e-14);
}

/* The run's guarantee in the core's vocabulary: its epsilon_gdp is the eps the rf CLI reports
 * (dpd_rf_privacy_eps_delivered) bit for bit, and it agrees with T Gaussian steps of noise
 * multiplier sigma / sqrt(eta). */
static void guarantee_matches_eps_delivered_and_the_core_gaussian(void **state) {
  static const double etas[] = {0.0137, 0.5, 2.0};
  static const size_t steps_list[] = {1, 731, 20000};
  static const double sigmas[] = {0.05, 1.3, 40.0};
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  for (size_t i = 0; i < 3; i++) {
    for (size_t j = 0; j < 3; j++) {
      for (size_t k = 0; k < 3; k++) {
        double eta = etas[i];
        size_t steps = steps_list[j];
        double sigma = sigmas[k];
        double eps = -1.0;
        dpd_privacy_guarantee g;
        dpd_privacy_guarantee core;
        assert_int_equal(dpd_rf_privacy_eps_delivered(eta, steps, sigma, 1e-5, &eps, &err), DPD_OK);
        assert_int_equal(dpd_rf_privacy_guarantee_eval(eta, steps, sigma, 1e-5, &g, &err), DPD_OK);
        assert_true(g.epsilon_gdp == eps);
        assert_true(g.mu == sqrt(eta * (double)steps) / sigma);
        assert_true(g.source == DPD_PRIVACY_SOURCE_GAUSSIAN && g.steps == steps);
        assert_rel(g.sigma, sigma / sqrt(eta), 1e-15);
        assert_int_equal(dpd_privacy_guarantee_from_gaussian(g.sigma, steps, 1e-5, &core, &err),
                         DPD_OK);
        assert_rel(core.mu, g.mu, 1e-14);
        assert_rel(core.zcdp, g.zcdp, 1e-14);
        assert_rel(core.epsilon, g.epsilon, 1e-11);
        assert_rel(core.epsilon_zcdp, g.epsilon_zcdp, 1e-11);
      }
    }
  }
  {
    dpd_privacy_guarantee g;
    assert_int_equal(dpd_rf_privacy_guarantee_eval(0.1, 10, 0.0, 1e-5, &g, &err), DPD_OK);
    assert_true(isinf(g.mu) && isinf(g.zcdp) && isinf(g.epsilon));
  }
}

static void rejects_invalid_arguments_naming_them(void **state) {
  dpd_err err;
  double out = 0.0;
  dpd_rf_privacy_report r;
  dpd_privacy_guarantee g;
  (void)state;
#define EXPECT_EINVAL(call, needle)                                                                \
  do {                                                                                             \
    dpd_err_reset(&err);                                                                           \
    assert_int_equal((call), DPD_EINVAL);                                                          \
    if (strstr(err.reason, (needle)) == NULL) {                                                    \
      print_error("reason '%s' lacks '%s'\n", err.reason, (needle));                               \
      fail();                                                                                      \
    }                                                                                              \
  } while (0)
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.0, 10, 1.0, 1e-5, &out, &err), "eta = 0");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(-0.3, 10, 1.0, 1e-5, &out, &err), "eta = -0.3");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(NAN, 10, 1.0, 1e-5, &out, &err), "eta = nan");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.1, 0, 1.0, 1e-5, &out, &err), "T = 0");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.1, 10, 0.0, 1e-5, &out, &err), "eps = 0");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.1, 10, NAN, 1e-5, &out, &err), "eps = nan");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.1, 10, 1.0, 0.0, &out, &err), "delta = 0");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.1, 10, 1.0, 1.0, &out, &err), "(0, 1)");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.1, 10, 1.0, NAN, &out, &err), "delta = nan");
  /* eps >= 8 log(1/delta) = 8 log 10 ~ 18.42 */
  EXPECT_EINVAL(dpd_rf_privacy_sigma_moments(0.1, 10, 18.5, 0.1, &out, &err), "8 log(1/delta)");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_exact(0.1, 10, -2.5, 1e-5, &out, &err), "eps = -2.5");
  EXPECT_EINVAL(dpd_rf_privacy_sigma_exact(0.1, 10, 1.0, 1.5, &out, &err), "delta = 1.5");
  EXPECT_EINVAL(dpd_rf_privacy_eps_delivered(0.1, 10, 0.0, 1e-5, &out, &err), "sigma = 0");
  EXPECT_EINVAL(dpd_rf_privacy_eps_delivered(0.1, 0, 1.0, 1e-5, &out, &err), "T = 0");
  EXPECT_EINVAL(dpd_rf_privacy_report_eval(0.1, 10, 1.0, 1e-5, NULL, &err), "NULL");
  EXPECT_EINVAL(dpd_rf_privacy_report_eval(0.1, 10, 30.0, 1e-1, &r, &err), "8 log(1/delta)");
  EXPECT_EINVAL(dpd_rf_privacy_guarantee_eval(0.1, 10, -1.0, 1e-5, &g, &err), "sigma = -1");
  EXPECT_EINVAL(dpd_rf_privacy_guarantee_eval(0.1, 10, 1.0, 0.0, &g, &err), "delta = 0");
  EXPECT_EINVAL(dpd_rf_privacy_guarantee_eval(0.0, 10, 1.0, 1e-5, &g, &err), "eta = 0");
  EXPECT_EINVAL(dpd_rf_privacy_guarantee_eval(0.1, 10, 1.0, 1e-5, NULL, &err), "NULL");
#undef EXPECT_EINVAL
  /* NULL error record is allowed. */
  assert_int_equal(dpd_rf_privacy_sigma_exact(0.1, 10, 1.0, 0.0, &out, NULL), DPD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sigma_exact_is_minimal_and_valid),
      cmocka_unit_test(moments_sigma_is_valid_but_loose_over_a_grid),
      cmocka_unit_test(moments_ratio_table),
      cmocka_unit_test(calibrations_scale_as_sqrt_eta_t),
      cmocka_unit_test(guarantee_matches_eps_delivered_and_the_core_gaussian),
      cmocka_unit_test(rejects_invalid_arguments_naming_them),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
