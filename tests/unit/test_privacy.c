/* Unit tests for privacy accounting (MATH.md 1.4): rho_eff, Bun-Steinke, tight conversion, inverse.
 * SPDX-License-Identifier: MIT
 *
 * Independent references used here:
 *  - rho_eff: sequences calibrated by rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 telescope to
 *    sum_{j>=k} sigma_j^2 = eta_k^2 / rho^2, so every ratio equals rho.
 *  - tight conversion (Balle et al. 2020, Thm 21): (a) a brute-force minimisation of the
 *    objective, written in the alpha form of MATH.md, over a fine log grid in alpha - 1;
 *    (b) the stationarity condition f'(alpha) = 0 <=> rho_z (alpha-1)^2 + log alpha = log(1/delta)
 *    (its left side is increasing in alpha), solved by plain bisection. */
#include "dpd_test.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "dpdyn/privacy.h"

static const unsigned long test_seed = 20240517UL;

/* ------------------------------------------------------------------------------------------ */
/* Independent references. */

/* MATH.md 1.4 objective, written exactly as documented, at alpha > 1. */
static double tight_objective_alpha(double alpha, double rho_z, double delta) {
  return alpha * rho_z + log1p(-1.0 / alpha) - (log(delta) + log(alpha)) / (alpha - 1.0);
}

/* Brute force: minimum over alpha - 1 = 10^x, x on a uniform grid with `points` points over
 * [xmin, xmax], clamped at 0 as the documented conversion is. */
static double tight_grid_min(double rho_z, double delta, double xmin, double xmax, size_t points) {
  double best = INFINITY;
  for (size_t i = 0; i < points; i++) {
    double x = xmin + (xmax - xmin) * (double)i / (double)(points - 1);
    double v = tight_objective_alpha(1.0 + pow(10.0, x), rho_z, delta);
    if (v < best) {
      best = v;
    }
  }
  return best > 0.0 ? best : 0.0;
}

/* Stationary point: rho_z (alpha-1)^2 + log(alpha) - L = 0, increasing in alpha. */
static double tight_stationary_alpha(double rho_z, double delta) {
  double l = -log(delta);
  double lo = 1.0;
  double hi = 2.0;
  while (rho_z * (hi - 1.0) * (hi - 1.0) + log(hi) - l < 0.0) {
    hi = 1.0 + 2.0 * (hi - 1.0);
  }
  for (int i = 0; i < 2000 && hi - lo > 4.0 * DBL_EPSILON * hi; i++) {
    double mid = lo + 0.5 * (hi - lo);
    if (rho_z * (mid - 1.0) * (mid - 1.0) + log(mid) - l < 0.0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo + 0.5 * (hi - lo);
}

static double eps_tight_or_fail(double rho_z, double delta) {
  dpd_err err;
  double eps = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_privacy_eps_tight(rho_z, delta, &eps, &err);
  if (status != DPD_OK) {
    print_error("eps_tight(rho_z = %.17g, delta = %.17g) failed: %s (%s)\n", rho_z, delta,
                dpd_status_str(status), err.reason);
    fail();
  }
  return eps;
}

static double rho_from_eps_or_fail(double eps, double delta) {
  dpd_err err;
  double rho = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_privacy_rho_from_eps(eps, delta, &rho, &err);
  if (status != DPD_OK) {
    print_error("rho_from_eps(eps = %.17g, delta = %.17g) failed: %s (%s)\n", eps, delta,
                dpd_status_str(status), err.reason);
    fail();
  }
  return rho;
}

/* Fills sigma by the calibration rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2, eta_n = 0. */
static void calibrate(const double *eta, size_t n, double rho, double *sigma) {
  for (size_t k = 0; k < n; k++) {
    double next = (k + 1 < n) ? eta[k + 1] : 0.0;
    sigma[k] = sqrt((eta[k] - next) * (eta[k] + next)) / rho;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* rho_eff */

#define CAL_N 2000

static void rho_eff_equals_rho_for_calibrated_decreasing_sequences(void **state) {
  static const double rhos[] = {0.0371, 0.5, 2.385, 41.7};
  static const size_t lengths[] = {1, 2, 7, 100, CAL_N};
  double *eta = malloc(CAL_N * sizeof *eta);
  double *sigma = malloc(CAL_N * sizeof *sigma);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  (void)state;
  assert_non_null(eta);
  assert_non_null(sigma);
  assert_non_null(rng);
  gsl_rng_set(rng, test_seed);

  for (int family = 0; family < 6; family++) {
    for (size_t il = 0; il < sizeof lengths / sizeof lengths[0]; il++) {
      size_t n = lengths[il];
      for (size_t k = 0; k < n; k++) {
        double t = (double)k / (double)n;
        switch (family) {
        case 0: /* constant (output perturbation) */
          eta[k] = 0.713 / (double)n;
          break;
        case 1: /* sqrt decay (constant noise) */
          eta[k] = 1.37 * sqrt(1.0 - t) / (double)n;
          break;
        case 2: /* hyperbolic */
          eta[k] = 0.91 / (1.0 + 3.7 * t) / (double)n;
          break;
        case 3: /* geometric, spanning many decades */
          eta[k] = 2.3 * pow(1e-6, t);
          break;
        case 4: /* step decay with flat stretches */
          eta[k] = 0.47 * pow(0.31, floor(4.0 * t));
          break;
        default: /* random non-increasing, overall decay at most e^-2 */
          eta[k] = (k == 0) ? 1.9 : eta[k - 1] * (1.0 - 2.0 * gsl_rng_uniform(rng) / (double)n);
          break;
        }
      }
      for (size_t ir = 0; ir < sizeof rhos / sizeof rhos[0]; ir++) {
        double rho = rhos[ir];
        double got;
        calibrate(eta, n, rho, sigma);
        got = dpd_privacy_rho_eff(eta, sigma, n);
        if (!(fabs(got - rho) <= 1e-12 * rho)) {
          print_error("family %d, n = %zu, rho = %g, seed %lu: rho_eff = %.17g\n", family, n, rho,
                      test_seed, got);
        }
        assert_rel(got, rho, 1e-12);
      }
    }
  }
  gsl_rng_free(rng);
  free(sigma);
  free(eta);
}

static void rho_eff_matches_hand_computed_small_case(void **state) {
  /* Suffix sums: S_2 = 0.04, S_1 = 0.13, S_0 = 0.1301; ratios 0.5, 0.2/sqrt(0.13) = 0.5547,
   * 0.5/sqrt(0.1301) = 1.3862: the maximum is at k = 0. */
  static const double eta[] = {0.5, 0.2, 0.1};
  static const double sigma[] = {0.01, 0.3, 0.2};
  /* Suffix sums 0.0025, 0.0425, 0.0525; ratios 0.3/sqrt(0.0525) = 1.309,
   * 0.2/sqrt(0.0425) = 0.970, 0.1/0.05 = 2: the maximum is at the last step. */
  static const double eta2[] = {0.3, 0.2, 0.1};
  static const double sigma2[] = {0.1, 0.2, 0.05};
  (void)state;
  assert_rel(dpd_privacy_rho_eff(eta, sigma, 3), 0.5 / sqrt(0.1301), 1e-15);
  assert_rel(dpd_privacy_rho_eff(eta2, sigma2, 3), 2.0, 1e-15);
  /* Prefixes are independent problems. */
  assert_rel(dpd_privacy_rho_eff(eta, sigma, 1), 0.5 / 0.01, 1e-15);
  assert_rel(dpd_privacy_rho_eff(eta, sigma, 2), fmax(0.5 / sqrt(0.0901), 0.2 / 0.3), 1e-15);
}

static void rho_eff_handles_zero_and_infinite_cases(void **state) {
  static const double eta_zero[] = {0.0, 0.0, 0.0};
  static const double sigma_zero[] = {0.0, 0.0, 0.0};
  static const double sigma_some[] = {0.3, 0.0, 0.2};
  static const double eta_a[] = {0.25, 0.125};
  static const double sigma_no_tail[] = {1.5, 0.0};
  static const double eta_last_zero[] = {0.25, 0.0};
  static const double sigma_inf[] = {0.1, INFINITY, 0.2};
  static const double eta_b[] = {0.3, 0.2, 0.1};
  static const double sigma_nan[] = {0.1, NAN, 0.2};
  static const double eta_nan[] = {0.1, NAN, 0.2};
  static const double eta_inf[] = {0.3, INFINITY, 0.1};
  (void)state;

  assert_true(dpd_privacy_rho_eff(eta_zero, sigma_zero, 0) == 0.0);
  assert_true(dpd_privacy_rho_eff(eta_zero, sigma_zero, 3) == 0.0);
  assert_true(dpd_privacy_rho_eff(eta_zero, sigma_some, 3) == 0.0);
  /* A positive step with no noise after it: no guarantee. */
  assert_true(isinf(dpd_privacy_rho_eff(eta_a, sigma_no_tail, 2)));
  assert_true(isinf(dpd_privacy_rho_eff(eta_a, sigma_zero, 2)));
  /* A zero last step needs no noise after it. */
  assert_rel(dpd_privacy_rho_eff(eta_last_zero, sigma_no_tail, 2), 0.25 / 1.5, 1e-15);
  /* Infinite noise hides everything before it; after it the finite noise counts. */
  assert_rel(dpd_privacy_rho_eff(eta_b, sigma_inf, 3), 0.1 / 0.2, 1e-15);
  /* Infinite step with finite noise after it. */
  assert_true(isinf(dpd_privacy_rho_eff(eta_inf, sigma_some, 3)));
  /* NaN in, NaN out. */
  assert_true(isnan(dpd_privacy_rho_eff(eta_b, sigma_nan, 3)));
  assert_true(isnan(dpd_privacy_rho_eff(eta_nan, sigma_some, 3)));
}

static void rho_eff_is_scale_invariant_over_the_double_range(void **state) {
  static const double eta[] = {0.5, 0.2, 0.1};
  static const double sigma[] = {0.01, 0.3, 0.2};
  static const double scales[] = {1e-300, 1e-160, 1e-20, 1e20, 1e160, 1e300};
  double want = 0.5 / sqrt(0.1301);
  (void)state;
  for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
    double e[3];
    double s[3];
    for (size_t k = 0; k < 3; k++) {
      e[k] = eta[k] * scales[i];
      s[k] = sigma[k] * scales[i];
    }
    assert_rel(dpd_privacy_rho_eff(e, s, 3), want, 1e-14);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* (eps, delta) conversions */

static const double rho_z_grid[] = {1e-8, 3.7e-6, 1e-4, 0.0213, 0.125, 0.5,
                                    1.0,  2.385,  17.3, 250.0,  1e4};
static const double delta_grid[] = {1e-15, 1e-10, 1e-5, 3.3e-3, 0.1, 0.5, 0.97};

static void tight_is_never_above_bun_steinke_and_strictly_below_for_typical_values(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rho_z_grid / sizeof rho_z_grid[0]; i++) {
    for (size_t j = 0; j < sizeof delta_grid / sizeof delta_grid[0]; j++) {
      double rho_z = rho_z_grid[i];
      double delta = delta_grid[j];
      double tight = eps_tight_or_fail(rho_z, delta);
      double bs = dpd_privacy_eps_bun_steinke(rho_z, delta);
      if (!(tight >= 0.0 && tight <= bs)) {
        print_error("rho_z = %g, delta = %g: tight = %.17g, Bun-Steinke = %.17g\n", rho_z, delta,
                    tight, bs);
        fail();
      }
      if (rho_z >= 0.01 && rho_z <= 20.0 && delta <= 1e-3) {
        /* Typical: the gain is a visible fraction of eps. */
        if (!(tight < 0.99 * bs)) {
          print_error("rho_z = %g, delta = %g: tight = %.17g not clearly below %.17g\n", rho_z,
                      delta, tight, bs);
          fail();
        }
      }
    }
  }
}

static void tight_matches_brute_force_grid_minimisation(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rho_z_grid / sizeof rho_z_grid[0]; i++) {
    for (size_t j = 0; j < sizeof delta_grid / sizeof delta_grid[0]; j++) {
      double rho_z = rho_z_grid[i];
      double delta = delta_grid[j];
      double tight = eps_tight_or_fail(rho_z, delta);
      /* alpha - 1 from 1e-9 to 1e9; grid step 1e-4 decades gives a relative value error
       * below ~ (1e-4 ln 10)^2 / 8 ~ 1e-8. */
      double grid = tight_grid_min(rho_z, delta, -9.0, 9.0, 180001);
      double scale = fmax(1.0, tight);
      /* The minimiser can only be better than the grid, and not by more than its spacing. */
      if (!(tight <= grid + 1e-13 * scale && grid - tight <= 1e-6 * scale)) {
        print_error("rho_z = %g, delta = %g: tight = %.17g, grid = %.17g\n", rho_z, delta, tight,
                    grid);
        fail();
      }
    }
  }
}

static void tight_matches_stationary_point_to_near_machine_precision(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rho_z_grid / sizeof rho_z_grid[0]; i++) {
    for (size_t j = 0; j < sizeof delta_grid / sizeof delta_grid[0]; j++) {
      double rho_z = rho_z_grid[i];
      double delta = delta_grid[j];
      double alpha = tight_stationary_alpha(rho_z, delta);
      double want = fmax(0.0, tight_objective_alpha(alpha, rho_z, delta));
      double tight = eps_tight_or_fail(rho_z, delta);
      if (want > 1e-6) {
        assert_rel(tight, want, 1e-13);
      } else {
        assert_abs(tight, want, 1e-16);
      }
    }
  }
}

static void tight_known_value_at_half_and_1e_minus_5(void **state) {
  /* rho_z = 0.5, delta = 1e-5: the stationarity condition 0.5 (alpha-1)^2 + log alpha = 5 log 10
   * solved with 50-digit decimal arithmetic (Python decimal, bisection) gives
   * alpha* = 5.43184967027010247 and eps = 4.72838698494331390. Bun-Steinke gives
   * 0.5 + 2 sqrt(0.5 * 5 log 10) = 5.29852591218808121. */
  double tight = eps_tight_or_fail(0.5, 1e-5);
  (void)state;
  assert_rel(tight, 4.72838698494331390, 1e-13);
  assert_rel(dpd_privacy_eps_bun_steinke(0.5, 1e-5), 5.29852591218808121, 1e-15);
  assert_rel(tight_stationary_alpha(0.5, 1e-5), 5.43184967027010247, 1e-13);
}

static void tight_handles_limits_and_extremes(void **state) {
  static const double tiny_and_huge[] = {1e-300, 1e-30, 1e-12, 1e8, 1e30, 1e300};
  double eps;
  (void)state;
  assert_true(eps_tight_or_fail(0.0, 1e-5) == 0.0);
  assert_true(isinf(eps_tight_or_fail(INFINITY, 1e-5)));
  for (size_t i = 0; i < sizeof tiny_and_huge / sizeof tiny_and_huge[0]; i++) {
    for (size_t j = 0; j < sizeof delta_grid / sizeof delta_grid[0]; j++) {
      double rho_z = tiny_and_huge[i];
      double bs = dpd_privacy_eps_bun_steinke(rho_z, delta_grid[j]);
      eps = eps_tight_or_fail(rho_z, delta_grid[j]);
      assert_true(isfinite(eps));
      assert_true(eps >= 0.0);
      assert_true(eps <= bs * (1.0 + 1e-14));
    }
  }
  /* Large rho_z: eps ~ rho_z + O(sqrt(rho_z log(1/delta))). */
  eps = eps_tight_or_fail(1e30, 1e-5);
  assert_rel(eps, 1e30, 1e-12);
  /* Delta very close to 1 and tiny rho_z: the clamp at 0 takes effect. */
  eps = eps_tight_or_fail(1e-12, 1.0 - 1e-9);
  assert_true(eps >= 0.0 && eps < 1e-6);
}

static void tight_is_increasing_in_rho_z_and_decreasing_in_delta(void **state) {
  (void)state;
  for (size_t j = 0; j < sizeof delta_grid / sizeof delta_grid[0]; j++) {
    double prev = -1.0;
    for (int i = 0; i <= 240; i++) {
      double rho_z = pow(10.0, -8.0 + 12.0 * (double)i / 240.0);
      double eps = eps_tight_or_fail(rho_z, delta_grid[j]);
      if (!(eps > prev || (eps == 0.0 && prev == 0.0))) {
        print_error("delta = %g: eps(%g) = %.17g after %.17g\n", delta_grid[j], rho_z, eps, prev);
        fail();
      }
      prev = eps;
    }
  }
  for (size_t i = 0; i < sizeof rho_z_grid / sizeof rho_z_grid[0]; i++) {
    double prev = INFINITY;
    for (int j = 0; j <= 100; j++) {
      double delta = pow(10.0, -15.0 + 14.9 * (double)j / 100.0);
      double eps = eps_tight_or_fail(rho_z_grid[i], delta);
      assert_true(eps < prev || (eps == 0.0 && prev == 0.0));
      prev = eps;
    }
  }
}

static void bun_steinke_inverse_round_trips_and_rejects_bad_input(void **state) {
  static const double eps_grid[] = {1e-6, 0.0137, 0.5, 1.0, 2.385, 9.1, 120.0};
  (void)state;
  for (size_t i = 0; i < sizeof eps_grid / sizeof eps_grid[0]; i++) {
    for (size_t j = 0; j < sizeof delta_grid / sizeof delta_grid[0]; j++) {
      double rho = dpd_privacy_rho_from_eps_bun_steinke(eps_grid[i], delta_grid[j]);
      assert_rel(dpd_privacy_eps_bun_steinke(0.5 * rho * rho, delta_grid[j]), eps_grid[i], 1e-13);
    }
  }
  assert_true(dpd_privacy_rho_from_eps_bun_steinke(0.0, 1e-5) == 0.0);
  assert_true(isinf(dpd_privacy_rho_from_eps_bun_steinke(INFINITY, 1e-5)));
  assert_true(isnan(dpd_privacy_rho_from_eps_bun_steinke(-1.0, 1e-5)));
  assert_true(isnan(dpd_privacy_rho_from_eps_bun_steinke(NAN, 1e-5)));
  assert_true(isnan(dpd_privacy_rho_from_eps_bun_steinke(1.0, 0.0)));
  assert_true(isnan(dpd_privacy_rho_from_eps_bun_steinke(1.0, 1.0)));
  assert_true(isnan(dpd_privacy_eps_bun_steinke(-0.1, 1e-5)));
  assert_true(isnan(dpd_privacy_eps_bun_steinke(NAN, 1e-5)));
  assert_true(isnan(dpd_privacy_eps_bun_steinke(0.1, 0.0)));
  assert_true(isnan(dpd_privacy_eps_bun_steinke(0.1, 1.0)));
  assert_true(isnan(dpd_privacy_eps_bun_steinke(0.1, NAN)));
  assert_true(isinf(dpd_privacy_eps_bun_steinke(INFINITY, 1e-5)));
}

/* ------------------------------------------------------------------------------------------ */
/* Inverse: eps -> rho */

static void rho_from_eps_never_overshoots_and_is_tight(void **state) {
  static const double eps_grid[] = {1e-6, 1e-3, 0.0137, 0.3, 1.0, 2.385, 8.0, 51.7, 1e3, 1e6};
  static const double deltas[] = {1e-15, 1e-10, 1e-5, 0.01, 0.3, 0.9};
  (void)state;
  for (size_t i = 0; i < sizeof eps_grid / sizeof eps_grid[0]; i++) {
    for (size_t j = 0; j < sizeof deltas / sizeof deltas[0]; j++) {
      double eps = eps_grid[i];
      double delta = deltas[j];
      double rho = rho_from_eps_or_fail(eps, delta);
      double back = eps_tight_or_fail(0.5 * rho * rho, delta);
      double rho_bs = dpd_privacy_rho_from_eps_bun_steinke(eps, delta);
      if (!(back <= eps && back >= eps * (1.0 - 1e-9))) {
        print_error("eps = %g, delta = %g: rho = %.17g gives eps_tight = %.17g\n", eps, delta, rho,
                    back);
        fail();
      }
      /* The tight conversion allows at least the Bun-Steinke rho. */
      assert_true(rho >= rho_bs * (1.0 - 1e-12));
    }
  }
  assert_true(isinf(rho_from_eps_or_fail(INFINITY, 1e-5)));
}

static void rho_from_eps_is_increasing_in_eps(void **state) {
  double prev = 0.0;
  (void)state;
  for (int i = 0; i <= 80; i++) {
    double eps = pow(10.0, -4.0 + 7.0 * (double)i / 80.0);
    double rho = rho_from_eps_or_fail(eps, 1e-6);
    assert_true(rho > prev);
    prev = rho;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Error paths */

static void assert_einval_reason(int status, const dpd_err *err, const char *name,
                                 const char *range) {
  assert_int_equal(status, DPD_EINVAL);
  assert_int_equal(err->status, DPD_EINVAL);
  assert_non_null(err->file);
  if (strstr(err->reason, name) == NULL || strstr(err->reason, range) == NULL) {
    print_error("reason '%s' should name '%s' and the range '%s'\n", err->reason, name, range);
    fail();
  }
}

static void eps_tight_rejects_invalid_arguments(void **state) {
  static const double bad_rho_z[] = {-1e-300, -0.5, -INFINITY, NAN};
  static const double bad_delta[] = {0.0, 1.0, -0.1, 1.5, INFINITY, NAN};
  dpd_err err;
  double eps;
  int status;
  (void)state;
  for (size_t i = 0; i < sizeof bad_rho_z / sizeof bad_rho_z[0]; i++) {
    eps = 123.0;
    dpd_err_reset(&err);
    status = dpd_privacy_eps_tight(bad_rho_z[i], 1e-5, &eps, &err);
    assert_einval_reason(status, &err, "rho_z", "[0, inf]");
    assert_true(eps == 123.0); /* output untouched on failure */
  }
  for (size_t i = 0; i < sizeof bad_delta / sizeof bad_delta[0]; i++) {
    eps = 123.0;
    dpd_err_reset(&err);
    status = dpd_privacy_eps_tight(0.5, bad_delta[i], &eps, &err);
    assert_einval_reason(status, &err, "delta", "(0, 1)");
    assert_true(eps == 123.0);
  }
  /* The value is in the reason. */
  dpd_err_reset(&err);
  (void)dpd_privacy_eps_tight(-2.5, 1e-5, &eps, &err);
  assert_non_null(strstr(err.reason, "-2.5"));
  dpd_err_reset(&err);
  (void)dpd_privacy_eps_tight(0.5, 1.75, &eps, &err);
  assert_non_null(strstr(err.reason, "1.75"));
  /* NULL output and NULL err record. */
  dpd_err_reset(&err);
  assert_int_equal(dpd_privacy_eps_tight(0.5, 1e-5, NULL, &err), DPD_EINVAL);
  assert_int_equal(dpd_privacy_eps_tight(-1.0, 1e-5, &eps, NULL), DPD_EINVAL);
}

static void rho_from_eps_rejects_invalid_arguments(void **state) {
  static const double bad_eps[] = {0.0, -0.0, -1e-300, -3.0, -INFINITY, NAN};
  static const double bad_delta[] = {0.0, 1.0, -1e-5, 2.0, NAN};
  dpd_err err;
  double rho;
  int status;
  (void)state;
  for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
    rho = 123.0;
    dpd_err_reset(&err);
    status = dpd_privacy_rho_from_eps(bad_eps[i], 1e-5, &rho, &err);
    assert_einval_reason(status, &err, "eps", "(0, inf]");
    assert_true(rho == 123.0);
  }
  for (size_t i = 0; i < sizeof bad_delta / sizeof bad_delta[0]; i++) {
    rho = 123.0;
    dpd_err_reset(&err);
    status = dpd_privacy_rho_from_eps(1.0, bad_delta[i], &rho, &err);
    assert_einval_reason(status, &err, "delta", "(0, 1)");
    assert_true(rho == 123.0);
  }
  dpd_err_reset(&err);
  (void)dpd_privacy_rho_from_eps(-3.25, 1e-5, &rho, &err);
  assert_non_null(strstr(err.reason, "-3.25"));
  dpd_err_reset(&err);
  assert_int_equal(dpd_privacy_rho_from_eps(1.0, 1e-5, NULL, &err), DPD_EINVAL);
  assert_int_equal(dpd_privacy_rho_from_eps(0.0, 1e-5, &rho, NULL), DPD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rho_eff_equals_rho_for_calibrated_decreasing_sequences),
      cmocka_unit_test(rho_eff_matches_hand_computed_small_case),
      cmocka_unit_test(rho_eff_handles_zero_and_infinite_cases),
      cmocka_unit_test(rho_eff_is_scale_invariant_over_the_double_range),
      cmocka_unit_test(tight_is_never_above_bun_steinke_and_strictly_below_for_typical_values),
      cmocka_unit_test(tight_matches_brute_force_grid_minimisation),
      cmocka_unit_test(tight_matches_stationary_point_to_near_machine_precision),
      cmocka_unit_test(tight_known_value_at_half_and_1e_minus_5),
      cmocka_unit_test(tight_handles_limits_and_extremes),
      cmocka_unit_test(tight_is_increasing_in_rho_z_and_decreasing_in_delta),
      cmocka_unit_test(bun_steinke_inverse_round_trips_and_rejects_bad_input),
      cmocka_unit_test(rho_from_eps_never_overshoots_and_is_tight),
      cmocka_unit_test(rho_from_eps_is_increasing_in_eps),
      cmocka_unit_test(eps_tight_rejects_invalid_arguments),
      cmocka_unit_test(rho_from_eps_rejects_invalid_arguments),
  };
  /* As the CLI does at start-up (house rule 16): GSL errors come back as codes. */
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
