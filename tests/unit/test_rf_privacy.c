/* Unit tests for the random-features DP-GD privacy accounting (MATH.md 2): mu-GDP delta, its
 * inverses, the exact and moments calibrations of sigma.
 * SPDX-License-Identifier: MIT
 *
 * Independent reference: delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
 * (Dong-Roth-Su 2022, Cor. 2.13) evaluated literally with gsl_cdf_ugaussian_P, where the two terms
 * do not cancel badly. */
#include "dpd_test.h"

#include <float.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>

#include "dpdyn/rf_privacy.h"

static double delta_reference(double eps, double mu) {
  return gsl_cdf_ugaussian_P(-eps / mu + 0.5 * mu) -
         exp(eps) * gsl_cdf_ugaussian_P(-eps / mu - 0.5 * mu);
}

static double mills_series(double x) {
  double r = 1.0 / (x * x);
  return (1.0 / x) * (1.0 - r * (1.0 - 3.0 * r * (1.0 - 5.0 * r * (1.0 - 7.0 * r))));
}

static double delta_or_fail(double eps, double mu) {
  dpd_err err;
  double d = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_rf_privacy_delta_gdp(eps, mu, &d, &err);
  if (status != DPD_OK) {
    print_error("delta_gdp(%.17g, %.17g): %s\n", eps, mu, err.reason);
    fail();
  }
  return d;
}

static double eps_or_fail(double delta, double mu) {
  dpd_err err;
  double e = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_rf_privacy_eps_gdp(delta, mu, &e, &err);
  if (status != DPD_OK) {
    print_error("eps_gdp(%.17g, %.17g): %s\n", delta, mu, err.reason);
    fail();
  }
  return e;
}

static double mu_or_fail(double eps, double delta) {
  dpd_err err;
  double m = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_rf_privacy_mu_gdp(eps, delta, &m, &err);
  if (status != DPD_OK) {
    print_error("mu_gdp(%.17g, %.17g): %s\n", eps, delta, err.reason);
    fail();
  }
  return m;
}

static void delta_matches_gsl_cdf_at_known_values(void **state) {
  static const double pts[][2] = {{1.0, 1.0},    {0.5, 1.0},   {2.385, 1.7},  {0.137, 0.41},
                                  {3.7, 2.9},    {0.0, 1.0},   {0.0, 0.283},  {1.9, 0.93},
                                  {0.71, 0.0835}, {5.3, 3.31}, {0.25, 0.6125}};
  (void)state;
  for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
    double eps = pts[i][0];
    double mu = pts[i][1];
    assert_rel(delta_or_fail(eps, mu), delta_reference(eps, mu), 1e-12);
  }
  /* mu = 1, eps = 1 by hand: Phi(-1/2) - e Phi(-3/2). */
  assert_rel(delta_or_fail(1.0, 1.0), 0.12693673750664397, 1e-12);
  /* eps = 0: delta = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)). */
  assert_rel(delta_or_fail(0.0, 0.7391), erf(0.7391 / (2.0 * M_SQRT2)), 1e-13);
}

static void delta_mills_branch_is_accurate_in_the_deep_tail(void **state) {
  (void)state;
  /* Moderate tail: the literal formula is still good to ~1e-11 there. */
  assert_rel(delta_or_fail(3.1, 0.9), delta_reference(3.1, 0.9), 1e-9);
  assert_rel(delta_or_fail(8.3, 1.37), delta_reference(8.3, 1.37), 1e-8);
  /* Deep tail: the literal formula underflows to 0 or noise; ours stays positive and matches the
   * asymptotic Mills series R(x) ~ 1/x - 1/x^3 + 3/x^5 - 15/x^7 + 105/x^9 (A&S 26.2.12):
   * delta = phi(a) [R(x) - R(x + mu)], x = -a. */
  {
    double eps = 100.0;
    double mu = 3.0;
    double a = -eps / mu + 0.5 * mu;
    double x = -a;
    double approx = exp(-0.5 * a * a) / sqrt(2.0 * M_PI) * (mills_series(x) - mills_series(x + mu));
    double d = delta_or_fail(eps, mu);
    assert_true(d > 0.0);
    assert_rel(d, approx, 1e-9);
  }
}

/* The two evaluation branches meet at a = -eps/mu + mu/2 = -1 without a jump. */
static void delta_is_continuous_across_the_branch_switch(void **state) {
  static const double mus[] = {0.137, 1.0, 2.385, 6.1};
  (void)state;
  for (size_t i = 0; i < sizeof mus / sizeof mus[0]; i++) {
    double mu = mus[i];
    double eps = mu * (0.5 * mu + 1.0); /* a = -1 */
    double below = delta_or_fail(eps * (1.0 + 1e-12), mu);
    double above = delta_or_fail(eps * (1.0 - 1e-12), mu);
    assert_rel(below, above, 1e-10);
    assert_rel(below, delta_reference(eps, mu), 1e-10);
  }
}

static void delta_is_monotone_in_eps_and_mu(void **state) {
  (void)state;
  for (double mu = 0.05; mu < 8.0; mu *= 1.37) {
    double prev = 2.0;
    for (double eps = 0.0; eps < 40.0; eps += 0.173) {
      double d = delta_or_fail(eps, mu);
      assert_true(d <= prev);
      prev = d;
    }
  }
  for (double eps = 0.01; eps < 20.0; eps *= 1.61) {
    double prev = -1.0;
    for (double mu = 0.02; mu < 10.0; mu *= 1.093) {
      double d = delta_or_fail(eps, mu);
      assert_true(d >= prev);
      prev = d;
    }
  }
}

static void eps_and_mu_inverses_round_trip_without_overshoot(void **state) {
  static const double deltas[] = {1e-2, 1e-5, 1.0 / 3000.0, 1e-9, 1e-15};
  (void)state;
  for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) {
    double delta = deltas[i];
    for (double mu = 0.03; mu < 6.0; mu *= 1.41) {
      double eps = eps_or_fail(delta, mu);
      double d = delta_or_fail(eps, mu);
      assert_true(d <= delta); /* valid */
      if (eps > 0.0) {
        /* minimal: slightly smaller eps is not valid */
        assert_true(delta_or_fail(eps * (1.0 - 1e-9), mu) > delta);
        assert_rel(d, delta, 1e-8);
      }
    }
    for (double eps = 0.02; eps < 30.0; eps *= 1.53) {
      double mu = mu_or_fail(eps, delta);
      assert_true(delta_or_fail(eps, mu) <= delta);              /* never overshoots */
      assert_true(delta_or_fail(eps, mu * (1.0 + 1e-9)) > delta); /* and is tight */
      assert_rel(eps_or_fail(delta, mu), eps, 1e-9);             /* round trip */
    }
  }
}

static void eps_is_zero_when_delta_at_zero_already_suffices(void **state) {
  (void)state;
  /* delta(0; 0.1) = erf(0.05 / sqrt 2) ~ 0.0399 */
  assert_true(eps_or_fail(0.05, 0.1) == 0.0);
  assert_true(eps_or_fail(0.03, 0.1) > 0.0);
}

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
    assert_int_equal(dpd_rf_privacy_sigma_exact(eta, steps, eps, delta, &sigma, &err), DPD_OK);
    assert_int_equal(dpd_rf_privacy_eps_delivered(eta, steps, sigma, delta, &eps_got, &err),
                     DPD_OK);
    assert_true(eps_got <= eps * (1.0 + 1e-12));
    assert_rel(eps_got, eps, 1e-9);
    assert_true(delta_or_fail(eps, sqrt(eta * (double)steps) / sigma) <= delta);
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
          int status =
              dpd_rf_privacy_report_eval(etas[j], steps_list[k], eps, deltas[i], &r, &err);
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
      assert_int_equal(dpd_rf_privacy_report_eval(0.05, 200, epss[j], deltas[i], &r, &err),
                       DPD_OK);
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

static void rejects_invalid_arguments_naming_them(void **state) {
  dpd_err err;
  double out = 0.0;
  dpd_rf_privacy_report r;
  (void)state;
#define EXPECT_EINVAL(call, needle)                                                               \
  do {                                                                                            \
    dpd_err_reset(&err);                                                                          \
    assert_int_equal((call), DPD_EINVAL);                                                         \
    if (strstr(err.reason, (needle)) == NULL) {                                                   \
      print_error("reason '%s' lacks '%s'\n", err.reason, (needle));                              \
      fail();                                                                                     \
    }                                                                                             \
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
  EXPECT_EINVAL(dpd_rf_privacy_delta_gdp(-1.0, 1.0, &out, &err), "eps = -1");
  EXPECT_EINVAL(dpd_rf_privacy_delta_gdp(1.0, 0.0, &out, &err), "mu = 0");
  EXPECT_EINVAL(dpd_rf_privacy_delta_gdp(1.0, NAN, &out, &err), "mu = nan");
  EXPECT_EINVAL(dpd_rf_privacy_eps_gdp(1e-5, -1.0, &out, &err), "mu = -1");
  EXPECT_EINVAL(dpd_rf_privacy_eps_gdp(2.0, 1.0, &out, &err), "delta = 2");
  EXPECT_EINVAL(dpd_rf_privacy_mu_gdp(0.0, 1e-5, &out, &err), "eps = 0");
  EXPECT_EINVAL(dpd_rf_privacy_report_eval(0.1, 10, 1.0, 1e-5, NULL, &err), "NULL");
  EXPECT_EINVAL(dpd_rf_privacy_report_eval(0.1, 10, 30.0, 1e-1, &r, &err), "8 log(1/delta)");
#undef EXPECT_EINVAL
  /* NULL error record is allowed. */
  assert_int_equal(dpd_rf_privacy_mu_gdp(1.0, 0.0, &out, NULL), DPD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(delta_matches_gsl_cdf_at_known_values),
      cmocka_unit_test(delta_mills_branch_is_accurate_in_the_deep_tail),
      cmocka_unit_test(delta_is_continuous_across_the_branch_switch),
      cmocka_unit_test(delta_is_monotone_in_eps_and_mu),
      cmocka_unit_test(eps_and_mu_inverses_round_trip_without_overshoot),
      cmocka_unit_test(eps_is_zero_when_delta_at_zero_already_suffices),
      cmocka_unit_test(sigma_exact_is_minimal_and_valid),
      cmocka_unit_test(moments_sigma_is_valid_but_loose_over_a_grid),
      cmocka_unit_test(moments_ratio_table),
      cmocka_unit_test(calibrations_scale_as_sqrt_eta_t),
      cmocka_unit_test(rejects_invalid_arguments_naming_them),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
