/* Unit tests for privacy accounting (docs/math.md §1.4): rho_eff, Bun-Steinke, tight conversion,
 * inverse.
 * SPDX-License-Identifier: MIT
 *
 * Independent references used here:
 *  - rho_eff: sequences calibrated by rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 telescope to
 *    sum_{j>=k} sigma_j^2 = eta_k^2 / rho^2, so every ratio equals rho.
 *  - tight conversion (Balle et al. 2020, Thm 21): (a) a brute-force minimisation of the
 *    objective, written in the alpha form of docs/math.md §1.4, over a fine log grid in alpha - 1;
 *    (b) the stationarity condition f'(alpha) = 0 <=> rho_z (alpha-1)^2 + log alpha = log(1/delta)
 *    (its left side is increasing in alpha), solved by plain bisection. */
#include "dpd_test.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_rng.h>

#include "dpdyn/privacy.h"

static const unsigned long test_seed = 20240517UL;

/* ------------------------------------------------------------------------------------------ */
/* Independent references. */

/* docs/math.md §1.4 objective, written exactly as documented, at alpha > 1. */
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
/* Gaussian DP (Dong-Roth-Su 2022) */

static double delta_reference(double eps, double mu) {
  return gsl_cdf_ugaussian_P(-eps / mu + 0.5 * mu) -
         exp(eps) * gsl_cdf_ugaussian_P(-eps / mu - 0.5 * mu);
}

static double mills_series(double x) {
  double r = 1.0 / (x * x);
  return (1.0 / x) * (1.0 - r * (1.0 - 3.0 * r * (1.0 - 5.0 * r * (1.0 - 7.0 * r))));
}

/* The helpers keep the argument order of the formula delta(eps; mu) and of its inverses. */
static double delta_or_fail(double eps, double mu) {
  dpd_err err;
  double d = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_privacy_gdp_delta(mu, eps, &d, &err);
  if (status != DPD_OK) {
    print_error("gdp_delta(mu = %.17g, eps = %.17g): %s\n", mu, eps, err.reason);
    fail();
  }
  return d;
}

static double eps_or_fail(double delta, double mu) {
  dpd_err err;
  double e = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_privacy_gdp_eps(mu, delta, &e, &err);
  if (status != DPD_OK) {
    print_error("gdp_eps(mu = %.17g, delta = %.17g): %s\n", mu, delta, err.reason);
    fail();
  }
  return e;
}

static double mu_or_fail(double eps, double delta) {
  dpd_err err;
  double m = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_privacy_gdp_mu(eps, delta, &m, &err);
  if (status != DPD_OK) {
    print_error("gdp_mu(eps = %.17g, delta = %.17g): %s\n", eps, delta, err.reason);
    fail();
  }
  return m;
}

static void delta_matches_gsl_cdf_at_known_values(void **state) {
  static const double pts[][2] = {{1.0, 1.0},     {0.5, 1.0},  {2.385, 1.7},  {0.137, 0.41},
                                  {3.7, 2.9},     {0.0, 1.0},  {0.0, 0.283},  {1.9, 0.93},
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
      assert_true(delta_or_fail(eps, mu) <= delta);               /* never overshoots */
      assert_true(delta_or_fail(eps, mu * (1.0 + 1e-9)) > delta); /* and is tight */
      assert_rel(eps_or_fail(delta, mu), eps, 1e-9);              /* round trip */
    }
  }
}

static void eps_is_zero_when_delta_at_zero_already_suffices(void **state) {
  (void)state;
  /* delta(0; 0.1) = erf(0.05 / sqrt 2) ~ 0.0399 */
  assert_true(eps_or_fail(0.05, 0.1) == 0.0);
  assert_true(eps_or_fail(0.03, 0.1) > 0.0);
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

/* ------------------------------------------------------------------------------------------ */
/* Known values, mu-GDP and zCDP deltas, composition and directed rounding */

/* References computed with mpmath 1.3 at 50 digits (bisection on the literal formulas):
 * DRS22 Cor. 2.13 for GDP, CKS20 Prop. 12 (delta form) for zCDP. */
static void gdp_known_values_from_the_literal_formula(void **state) {
  (void)state;
  /* mu = 1 at delta = 1e-5 (the example of the brief): eps = 4.37717809568122463. */
  assert_rel(eps_or_fail(1e-5, 1.0), 4.3771780956812246277, 1e-12);
  assert_rel(eps_or_fail(1e-5, 0.5), 1.9930914044151196311, 1e-12);
  assert_rel(eps_or_fail(1e-5, 2.0), 9.9972561464343003965, 1e-12);
  assert_rel(mu_or_fail(1.0, 1e-5), 0.2680511232112942179, 1e-12);
  /* The same mu = 1 mechanism through zCDP (rho_z = 1/2): tight 4.7284, Bun-Steinke 5.2985. */
  assert_true(eps_or_fail(1e-5, 1.0) < eps_tight_or_fail(0.5, 1e-5));
}

/* (1, 1e-4)-DP with sensitivity 1, one step: the noise of the three conversions as tabulated in
 * notes-rf-nc-sp.md B.6 (check_nc.py): analytic Gaussian mechanism (Balle-Wang 2018, Thm 8, the
 * same curve as GDP) 3.186, Canonne-Kamath-Steinke rho = 0.0406 -> 3.508, Bun-Steinke
 * rho = 0.02576 -> 4.405. 50-digit values: 3.18570298996067, 3.50789751993671, 4.40542839286864. */
static void sigma_for_one_at_1e_minus_4_matches_the_tabulated_conversions(void **state) {
  static const double want[] = {3.1857029899606700589, 3.5078975199367097662,
                                4.4054283928686384576};
  dpd_err err;
  (void)state;
  for (int c = 0; c < DPD_PRIVACY_CONVERSION_COUNT; c++) {
    double sigma = -1.0;
    dpd_err_reset(&err);
    assert_int_equal(
        dpd_privacy_sigma_from_eps(1.0, 1e-4, 1, (dpd_privacy_conversion)c, &sigma, &err), DPD_OK);
    assert_rel(sigma, want[c], 1e-10);
    assert_true(sigma >= want[c] * (1.0 - 1e-14)); /* never below the exact calibration */
  }
}

static double zcdp_delta_or_fail(double rho_z, double eps) {
  dpd_err err;
  double d = -1.0;
  int status;
  dpd_err_reset(&err);
  status = dpd_privacy_zcdp_delta(rho_z, eps, &d, &err);
  if (status != DPD_OK) {
    print_error("zcdp_delta(rho_z = %.17g, eps = %.17g): %s\n", rho_z, eps, err.reason);
    fail();
  }
  return d;
}

static void zcdp_delta_known_values_and_limits(void **state) {
  (void)state;
  assert_rel(zcdp_delta_or_fail(0.5, 1.0), 0.24684633078294448707, 1e-12);
  assert_rel(zcdp_delta_or_fail(0.5, 3.0), 0.0051431840638621492912, 1e-12);
  assert_rel(zcdp_delta_or_fail(0.01, 0.5), 3.505878060052390974e-5, 1e-12);
  assert_true(zcdp_delta_or_fail(0.0, 0.0) == 0.0);
  assert_true(zcdp_delta_or_fail(0.3, INFINITY) == 0.0);
  assert_true(zcdp_delta_or_fail(INFINITY, 5.0) == 1.0);
  assert_true(zcdp_delta_or_fail(1e10, 1.0) == 1.0); /* capped */
  assert_true(zcdp_delta_or_fail(1e-300, 1.0) == 0.0);
  assert_true(dpd_privacy_zcdp_delta_bun_steinke(0.5, 0.4) == 1.0);
  assert_true(dpd_privacy_zcdp_delta_bun_steinke(0.0, 0.4) == 0.0);
  assert_true(isnan(dpd_privacy_zcdp_delta_bun_steinke(-1.0, 0.4)));
  assert_true(isnan(dpd_privacy_zcdp_delta_bun_steinke(0.5, NAN)));
}

/* delta(eps) and eps(delta) of the tight conversion describe one boundary: each inverts the
 * other; GDP (exact for a Gaussian) <= tight zCDP <= Bun-Steinke at every point; delta falls
 * with eps and rises with rho_z. */
static void zcdp_delta_inverts_eps_tight_and_sits_between_gdp_and_bun_steinke(void **state) {
  static const double rhos[] = {1e-6, 1e-3, 0.0406, 0.5, 3.7, 60.0};
  static const double deltas[] = {1e-12, 1e-5, 1e-2, 0.3};
  (void)state;
  for (size_t i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
    double prev = 2.0;
    for (size_t j = 0; j < sizeof deltas / sizeof deltas[0]; j++) {
      double eps = eps_tight_or_fail(rhos[i], deltas[j]);
      if (eps > 0.0) {
        double back = zcdp_delta_or_fail(rhos[i], eps);
        assert_rel(back, deltas[j], 1e-9);
      }
    }
    for (double eps = 0.0; eps < 60.0; eps = 1.7 * eps + 0.01) {
      double d = zcdp_delta_or_fail(rhos[i], eps);
      double d_gdp = delta_or_fail(eps, sqrt(2.0 * rhos[i]));
      double d_bs = dpd_privacy_zcdp_delta_bun_steinke(rhos[i], eps);
      assert_true(d <= prev);
      assert_true(d_gdp <= d * (1.0 + 1e-12));
      assert_true(d <= d_bs * (1.0 + 1e-12));
      assert_true(zcdp_delta_or_fail(rhos[i] * 1.1, eps) >= d);
      prev = d;
    }
  }
}

static void composition_adds_rho_and_squares_of_mu(void **state) {
  static const double mu[] = {3.0, 4.0};
  static const double rho[] = {0.1, 0.2};
  double many[1000];
  (void)state;
  assert_true(dpd_privacy_gdp_compose(mu, 2) == 5.0);
  assert_true(dpd_privacy_gdp_compose(mu, 0) == 0.0);
  assert_true(dpd_privacy_gdp_compose(NULL, 0) == 0.0);
  assert_true(isnan(dpd_privacy_gdp_compose(NULL, 2)));
  /* 0.1 + 0.2 rounds to nearest above 0.3; upward rounding keeps it at least that. */
  assert_true(dpd_privacy_zcdp_compose(rho, 2) >= 0.1 + 0.2);
  assert_true((long double)dpd_privacy_zcdp_compose(rho, 2) >= 0.1L + 0.2L);
  for (size_t i = 0; i < 1000; i++) {
    many[i] = 0.37;
  }
  /* T steps of one mechanism: composition = the T-step Gaussian formulas. */
  assert_rel(dpd_privacy_gdp_compose(many, 1000), dpd_privacy_gdp_gaussian(1.0 / 0.37, 1000),
             1e-13);
  assert_true(dpd_privacy_gdp_compose(many, 1000) >= 0.37 * sqrt(1000.0) * (1.0 - 1e-15));
  for (size_t i = 0; i < 1000; i++) {
    many[i] = 0.5 * 0.37 * 0.37;
  }
  assert_rel(dpd_privacy_zcdp_compose(many, 1000), dpd_privacy_zcdp_gaussian(1.0 / 0.37, 1000),
             1e-12);
  many[3] = INFINITY;
  assert_true(isinf(dpd_privacy_zcdp_compose(many, 1000)));
  many[3] = -1.0;
  assert_true(isnan(dpd_privacy_zcdp_compose(many, 1000)));
}

/* mu = sqrt(T)/sigma and mu^2/2 are rounded up: compared with an 80-bit long double evaluation,
 * a round-to-nearest result falls below the exact value in about half of the random cases, so
 * this test fails for a rounding that is not upward. */
static void derived_budgets_are_rounded_up(void **state) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  int above = 0;
  (void)state;
  assert_non_null(rng);
  gsl_rng_set(rng, test_seed);
  for (int i = 0; i < 2000; i++) {
    double sigma = exp(10.0 * (gsl_rng_uniform(rng) - 0.5));
    size_t steps = 1 + gsl_rng_uniform_int(rng, 100000);
    double mu = dpd_privacy_gdp_gaussian(sigma, steps);
    double rz = dpd_privacy_zcdp_from_gdp(mu);
    long double exact = sqrtl((long double)steps) / (long double)sigma;
    assert_true((long double)mu >= exact);
    assert_true(fma(mu, mu, -2.0 * rz) <= 0.0); /* 2 rz >= mu^2 exactly */
    assert_rel(mu, (double)exact, 5e-16); /* two upward roundings, sqrt and division */
    assert_rel(rz, 0.5 * mu * mu, 4e-16);
    above += (long double)mu > exact;
  }
  gsl_rng_free(rng);
  assert_true(above > 0);
  assert_true(isinf(dpd_privacy_gdp_gaussian(0.0, 3)));
  assert_true(dpd_privacy_gdp_gaussian(INFINITY, 3) == 0.0);
  assert_true(isnan(dpd_privacy_gdp_gaussian(1.0, 0)));
  assert_true(isnan(dpd_privacy_gdp_gaussian(NAN, 3)));
  assert_true(isinf(dpd_privacy_zcdp_from_gdp(INFINITY)));
  assert_true(dpd_privacy_zcdp_from_gdp(0.0) == 0.0);
  assert_true(isnan(dpd_privacy_zcdp_from_gdp(-0.5)));
}

/* ------------------------------------------------------------------------------------------ */
/* Calibration of T Gaussian steps */

static void sigma_from_gdp_and_zcdp_meet_the_budget_and_are_tight(void **state) {
  static const size_t steps_list[] = {1, 7, 1000, 123457};
  dpd_err err;
  (void)state;
  for (size_t j = 0; j < sizeof steps_list / sizeof steps_list[0]; j++) {
    size_t steps = steps_list[j];
    for (double b = 1e-3; b < 1e3; b *= 3.7) {
      double s_mu = -1.0;
      double s_rho = -1.0;
      dpd_err_reset(&err);
      assert_int_equal(dpd_privacy_sigma_from_gdp(b, steps, &s_mu, &err), DPD_OK);
      assert_int_equal(dpd_privacy_sigma_from_zcdp(b, steps, &s_rho, &err), DPD_OK);
      assert_true(dpd_privacy_gdp_gaussian(s_mu, steps) <= b);
      assert_true(dpd_privacy_gdp_gaussian(s_mu * (1.0 - 1e-14), steps) > b);
      assert_true(dpd_privacy_zcdp_gaussian(s_rho, steps) <= b);
      assert_true(dpd_privacy_zcdp_gaussian(s_rho * (1.0 - 1e-14), steps) > b);
      assert_rel(s_mu, sqrt((double)steps) / b, 1e-15);
      assert_rel(s_rho, sqrt((double)steps / (2.0 * b)), 1e-15);
    }
  }
  {
    double s = -1.0;
    assert_int_equal(dpd_privacy_sigma_from_gdp(INFINITY, 5, &s, &err), DPD_OK);
    assert_true(s == 0.0);
    assert_int_equal(dpd_privacy_sigma_from_gdp(0.0, 5, &s, &err), DPD_OK);
    assert_true(isinf(s));
    assert_int_equal(dpd_privacy_sigma_from_zcdp(INFINITY, 5, &s, &err), DPD_OK);
    assert_true(s == 0.0);
    assert_int_equal(dpd_privacy_sigma_from_zcdp(0.0, 5, &s, &err), DPD_OK);
    assert_true(isinf(s));
    assert_int_equal(
        dpd_privacy_sigma_from_eps(INFINITY, 1e-5, 5, DPD_PRIVACY_CONVERSION_GDP, &s, &err),
        DPD_OK);
    assert_true(s == 0.0);
  }
}

/* For every conversion the calibrated sigma delivers at most the target eps by that conversion
 * (as the guarantee report computes it) and is tight; GDP needs the least noise, Bun-Steinke the
 * most. */
static void sigma_from_eps_meets_the_target_by_its_conversion_and_orders_them(void **state) {
  static const double deltas[] = {1e-10, 1e-5, 1.0 / 60000.0, 1e-2};
  static const size_t steps_list[] = {1, 50, 20000};
  dpd_err err;
  (void)state;
  for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) {
    for (size_t j = 0; j < sizeof steps_list / sizeof steps_list[0]; j++) {
      for (double eps = 0.01; eps < 60.0; eps *= 2.3) {
        double s[DPD_PRIVACY_CONVERSION_COUNT];
        for (int c = 0; c < DPD_PRIVACY_CONVERSION_COUNT; c++) {
          dpd_privacy_guarantee g;
          double got;
          dpd_err_reset(&err);
          if (dpd_privacy_sigma_from_eps(eps, deltas[i], steps_list[j], (dpd_privacy_conversion)c,
                                         &s[c], &err) != DPD_OK) {
            print_error("sigma_from_eps(%g, %g, %zu, %d): %s\n", eps, deltas[i], steps_list[j], c,
                        err.reason);
            fail();
          }
          assert_int_equal(
              dpd_privacy_guarantee_from_gaussian(s[c], steps_list[j], deltas[i], &g, &err),
              DPD_OK);
          got = (c == DPD_PRIVACY_CONVERSION_GDP)          ? g.epsilon_gdp
                : (c == DPD_PRIVACY_CONVERSION_ZCDP_TIGHT) ? g.epsilon_zcdp
                                                           : g.epsilon_bun_steinke;
          if (!(got <= eps && got >= eps * (1.0 - 1e-9))) {
            print_error("conversion %s, eps %g delta %g T %zu: sigma %.17g delivers %.17g\n",
                        dpd_privacy_conversion_name((dpd_privacy_conversion)c), eps, deltas[i],
                        steps_list[j], s[c], got);
            fail();
          }
          if (c == DPD_PRIVACY_CONVERSION_GDP) {
            assert_true(delta_or_fail(eps, g.mu) <= deltas[i]);
            assert_true(g.epsilon == g.epsilon_gdp);
          }
        }
        assert_true(s[DPD_PRIVACY_CONVERSION_GDP] <= s[DPD_PRIVACY_CONVERSION_ZCDP_TIGHT]);
        assert_true(s[DPD_PRIVACY_CONVERSION_ZCDP_TIGHT] <=
                    s[DPD_PRIVACY_CONVERSION_BUN_STEINKE] * (1.0 + 1e-12));
      }
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* The guarantee report */

static dpd_privacy_guarantee guarantee_gdp_or_fail(double mu, double delta) {
  dpd_privacy_guarantee g;
  dpd_err err;
  dpd_err_reset(&err);
  if (dpd_privacy_guarantee_from_gdp(mu, delta, &g, &err) != DPD_OK) {
    print_error("guarantee_from_gdp(%g, %g): %s\n", mu, delta, err.reason);
    fail();
  }
  return g;
}

static void guarantee_from_gdp_is_consistent(void **state) {
  static const double deltas[] = {1e-12, 1e-5, 0.01};
  dpd_err err;
  (void)state;
  for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) {
    double prev = -1.0;
    for (double mu = 1e-3; mu < 30.0; mu *= 1.9) {
      dpd_privacy_guarantee g = guarantee_gdp_or_fail(mu, deltas[i]);
      assert_true(g.source == DPD_PRIVACY_SOURCE_GDP);
      assert_true(g.mu == mu && g.delta == deltas[i]);
      assert_true(g.zcdp == dpd_privacy_zcdp_from_gdp(mu));
      assert_rel(g.zcdp, 0.5 * mu * mu, 4e-16);
      assert_true(isnan(g.sigma) && g.steps == 0);
      assert_true(g.epsilon_gdp == eps_or_fail(deltas[i], mu));
      assert_true(g.epsilon_zcdp == eps_tight_or_fail(g.zcdp, deltas[i]));
      assert_true(g.epsilon_bun_steinke == dpd_privacy_eps_bun_steinke(g.zcdp, deltas[i]));
      /* exact GDP <= tight zCDP <= Bun-Steinke; the tightest is reported */
      assert_true(g.epsilon_gdp <= g.epsilon_zcdp);
      assert_true(g.epsilon_zcdp <= g.epsilon_bun_steinke);
      assert_true(g.epsilon == g.epsilon_gdp);
      assert_true(g.epsilon_conversion == DPD_PRIVACY_CONVERSION_GDP);
      assert_true(isnan(g.at_epsilon) && isnan(g.delta_at_epsilon));
      assert_true(g.epsilon >= prev); /* monotone in mu */
      prev = g.epsilon;
      /* delta at the reported eps is the delta asked for (and never above it). */
      dpd_err_reset(&err);
      if (g.epsilon > 0.0) {
        assert_int_equal(dpd_privacy_guarantee_at_epsilon(&g, g.epsilon, &err), DPD_OK);
        assert_true(g.at_epsilon == g.epsilon);
        assert_true(g.delta_at_epsilon <= deltas[i]);
        assert_rel(g.delta_at_epsilon, deltas[i], 1e-8);
        assert_true(g.delta_conversion == DPD_PRIVACY_CONVERSION_GDP);
        assert_true(g.delta_at_epsilon_gdp <= g.delta_at_epsilon_zcdp);
        assert_true(g.delta_at_epsilon_zcdp <= g.delta_at_epsilon_bun_steinke * (1.0 + 1e-12));
      }
    }
  }
  /* mu = 1 at 1e-5: 4.3772 (GDP) < 4.7284 (tight zCDP of 1/2) < 5.2985 (Bun-Steinke). */
  {
    dpd_privacy_guarantee g = guarantee_gdp_or_fail(1.0, 1e-5);
    assert_rel(g.epsilon, 4.3771780956812246277, 1e-12);
    assert_rel(g.epsilon_zcdp, 4.72838698494331390, 1e-13);
    assert_rel(g.epsilon_bun_steinke, 5.29852591218808121, 1e-15);
  }
}

static void guarantee_from_zcdp_has_no_mu_and_uses_the_tight_conversion(void **state) {
  dpd_privacy_guarantee g;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd_privacy_guarantee_from_zcdp(0.5, 1e-5, &g, &err), DPD_OK);
  assert_true(g.source == DPD_PRIVACY_SOURCE_ZCDP);
  assert_true(isnan(g.mu) && isnan(g.epsilon_gdp) && g.zcdp == 0.5);
  assert_true(g.epsilon == g.epsilon_zcdp);
  assert_true(g.epsilon_conversion == DPD_PRIVACY_CONVERSION_ZCDP_TIGHT);
  assert_rel(g.epsilon, 4.72838698494331390, 1e-13);
  assert_true(g.epsilon <= g.epsilon_bun_steinke);
  assert_int_equal(dpd_privacy_guarantee_at_epsilon(&g, 1.0, &err), DPD_OK);
  assert_true(isnan(g.delta_at_epsilon_gdp));
  assert_rel(g.delta_at_epsilon, 0.24684633078294448707, 1e-12);
  assert_true(g.delta_conversion == DPD_PRIVACY_CONVERSION_ZCDP_TIGHT);
  assert_true(g.delta_at_epsilon <= g.delta_at_epsilon_bun_steinke);
}

static void guarantee_from_gaussian_equals_gdp_of_sqrt_t_over_sigma(void **state) {
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  for (size_t steps = 1; steps < 100000; steps = 7 * steps + 3) {
    double prev = INFINITY;
    for (double sigma = 0.05; sigma < 5000.0; sigma *= 2.9) {
      dpd_privacy_guarantee g;
      dpd_privacy_guarantee h;
      assert_int_equal(dpd_privacy_guarantee_from_gaussian(sigma, steps, 1e-6, &g, &err), DPD_OK);
      h = guarantee_gdp_or_fail(dpd_privacy_gdp_gaussian(sigma, steps), 1e-6);
      assert_true(g.source == DPD_PRIVACY_SOURCE_GAUSSIAN);
      assert_true(g.sigma == sigma && g.steps == steps);
      assert_true(g.mu == h.mu && g.zcdp == h.zcdp && g.epsilon == h.epsilon);
      assert_true(g.epsilon_zcdp == h.epsilon_zcdp);
      assert_rel(g.zcdp, (double)steps / (2.0 * sigma * sigma), 1e-15);
      assert_true(g.epsilon <= prev); /* more noise, less leakage */
      prev = g.epsilon;
    }
  }
}

static void guarantee_handles_non_private_and_perfectly_private_runs(void **state) {
  dpd_privacy_guarantee g;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  /* sigma = 0: no noise, nothing guaranteed. */
  assert_int_equal(dpd_privacy_guarantee_from_gaussian(0.0, 10, 1e-5, &g, &err), DPD_OK);
  assert_true(isinf(g.mu) && isinf(g.zcdp) && isinf(g.epsilon) && isinf(g.epsilon_gdp));
  assert_true(isinf(g.epsilon_zcdp) && isinf(g.epsilon_bun_steinke));
  assert_int_equal(dpd_privacy_guarantee_at_epsilon(&g, 3.0, &err), DPD_OK);
  assert_true(g.delta_at_epsilon == 1.0 && g.delta_at_epsilon_bun_steinke == 1.0);
  assert_int_equal(dpd_privacy_guarantee_at_epsilon(&g, INFINITY, &err), DPD_OK);
  assert_true(g.delta_at_epsilon == 0.0);
  assert_int_equal(dpd_privacy_guarantee_from_zcdp(INFINITY, 1e-5, &g, &err), DPD_OK);
  assert_true(isinf(g.epsilon) && isnan(g.mu));
  /* sigma = inf, mu = 0, zcdp = 0: nothing leaks. */
  assert_int_equal(dpd_privacy_guarantee_from_gaussian(INFINITY, 10, 1e-5, &g, &err), DPD_OK);
  assert_true(g.mu == 0.0 && g.zcdp == 0.0 && g.epsilon == 0.0 && g.epsilon_bun_steinke == 0.0);
  assert_int_equal(dpd_privacy_guarantee_at_epsilon(&g, 0.0, &err), DPD_OK);
  assert_true(g.delta_at_epsilon == 0.0 && g.delta_at_epsilon_zcdp == 0.0);
  assert_int_equal(dpd_privacy_guarantee_from_zcdp(0.0, 1e-5, &g, &err), DPD_OK);
  assert_true(g.epsilon == 0.0);
}

static void budget_eval_calibrates_every_key_and_reports_it(void **state) {
  dpd_privacy_budget b = dpd_privacy_budget_default();
  dpd_privacy_guarantee g;
  dpd_err err;
  double sigma = -1.0;
  (void)state;
  dpd_err_reset(&err);
  assert_true(b.kind == DPD_PRIVACY_BUDGET_NONE && b.delta == DPD_PRIVACY_DELTA_DEFAULT);
  assert_true(b.conversion == DPD_PRIVACY_CONVERSION_GDP);
  assert_int_equal(dpd_privacy_budget_eval(b, 100, &sigma, &g, &err), DPD_OK);
  assert_true(sigma == 0.0 && isinf(g.epsilon));

  b.kind = DPD_PRIVACY_BUDGET_EPSILON;
  b.epsilon = 2.0;
  assert_int_equal(dpd_privacy_budget_eval(b, 100, &sigma, &g, &err), DPD_OK);
  assert_true(g.epsilon <= 2.0 && g.epsilon_conversion == DPD_PRIVACY_CONVERSION_GDP);
  assert_rel(g.epsilon, 2.0, 1e-9);
  assert_true(g.sigma == sigma && g.steps == 100);
  b.conversion = DPD_PRIVACY_CONVERSION_BUN_STEINKE;
  assert_int_equal(dpd_privacy_budget_eval(b, 100, &sigma, &g, &err), DPD_OK);
  assert_rel(g.epsilon_bun_steinke, 2.0, 1e-9);
  assert_true(g.epsilon_bun_steinke <= 2.0 && g.epsilon < 2.0);

  b = dpd_privacy_budget_default();
  b.kind = DPD_PRIVACY_BUDGET_MU;
  b.mu = 0.8;
  assert_int_equal(dpd_privacy_budget_eval(b, 9, &sigma, &g, &err), DPD_OK);
  assert_true(g.mu <= 0.8);
  assert_rel(sigma, 3.0 / 0.8, 1e-15);

  b.kind = DPD_PRIVACY_BUDGET_ZCDP;
  b.zcdp = 0.01;
  assert_int_equal(dpd_privacy_budget_eval(b, 8, &sigma, NULL, &err), DPD_OK);
  assert_rel(sigma, 20.0, 1e-15); /* 8 / (2 sigma^2) = 0.01 */
  assert_true(dpd_privacy_zcdp_gaussian(sigma, 8) <= 0.01);

  b.kind = DPD_PRIVACY_BUDGET_SIGMA;
  b.sigma = 4.0;
  assert_int_equal(dpd_privacy_budget_eval(b, 16, &sigma, &g, &err), DPD_OK);
  assert_true(sigma == 4.0 && g.mu == 1.0 && g.zcdp == 0.5);
}

static void new_functions_reject_invalid_arguments_naming_them(void **state) {
  dpd_privacy_guarantee g;
  dpd_privacy_budget b = dpd_privacy_budget_default();
  dpd_err err;
  double out = 123.0;
  (void)state;
#define EXPECT_EINVAL(call, name, range)                                                           \
  do {                                                                                             \
    dpd_err_reset(&err);                                                                           \
    assert_einval_reason((call), &err, (name), (range));                                           \
  } while (0)
  EXPECT_EINVAL(dpd_privacy_gdp_delta(1.0, -1.0, &out, &err), "eps = -1", "[0, inf]");
  EXPECT_EINVAL(dpd_privacy_gdp_delta(0.0, 1.0, &out, &err), "mu = 0", "(0, inf]");
  EXPECT_EINVAL(dpd_privacy_gdp_delta(NAN, 1.0, &out, &err), "mu = nan", "(0, inf]");
  EXPECT_EINVAL(dpd_privacy_gdp_eps(-1.0, 1e-5, &out, &err), "mu = -1", "(0, inf]");
  EXPECT_EINVAL(dpd_privacy_gdp_eps(1.0, 2.0, &out, &err), "delta = 2", "(0, 1)");
  EXPECT_EINVAL(dpd_privacy_gdp_mu(0.0, 1e-5, &out, &err), "eps = 0", "(0, inf]");
  EXPECT_EINVAL(dpd_privacy_gdp_mu(1.0, 0.0, &out, &err), "delta = 0", "(0, 1)");
  EXPECT_EINVAL(dpd_privacy_zcdp_delta(-0.5, 1.0, &out, &err), "rho_z = -0.5", "[0, inf]");
  EXPECT_EINVAL(dpd_privacy_zcdp_delta(0.5, NAN, &out, &err), "eps = nan", "[0, inf]");
  EXPECT_EINVAL(dpd_privacy_sigma_from_gdp(-2.0, 3, &out, &err), "mu = -2", "[0, inf]");
  EXPECT_EINVAL(dpd_privacy_sigma_from_gdp(1.0, 0, &out, &err), "steps = 0", "steps >= 1");
  EXPECT_EINVAL(dpd_privacy_sigma_from_zcdp(NAN, 3, &out, &err), "rho_z = nan", "[0, inf]");
  EXPECT_EINVAL(dpd_privacy_sigma_from_eps(0.0, 1e-5, 3, DPD_PRIVACY_CONVERSION_GDP, &out, &err),
                "eps = 0", "(0, inf]");
  EXPECT_EINVAL(dpd_privacy_sigma_from_eps(1.0, 1.0, 3, DPD_PRIVACY_CONVERSION_GDP, &out, &err),
                "delta = 1", "(0, 1)");
  EXPECT_EINVAL(dpd_privacy_sigma_from_eps(1.0, 1e-5, 3, DPD_PRIVACY_CONVERSION_COUNT, &out, &err),
                "conversion = 3", "gdp, zcdp_tight and bun_steinke");
  EXPECT_EINVAL(dpd_privacy_guarantee_from_gdp(-1.0, 1e-5, &g, &err), "mu = -1", "[0, inf]");
  EXPECT_EINVAL(dpd_privacy_guarantee_from_zcdp(0.5, 0.0, &g, &err), "delta = 0", "(0, 1)");
  EXPECT_EINVAL(dpd_privacy_guarantee_from_gaussian(-1.0, 3, 1e-5, &g, &err), "sigma = -1",
                "[0, inf]");
  EXPECT_EINVAL(dpd_privacy_guarantee_from_gaussian(1.0, 0, 1e-5, &g, &err), "steps = 0",
                "steps >= 1");
  assert_int_equal(dpd_privacy_guarantee_from_gdp(1.0, 1e-5, &g, &err), DPD_OK);
  EXPECT_EINVAL(dpd_privacy_guarantee_at_epsilon(&g, -0.5, &err), "eps = -0.5", "[0, inf]");
  assert_true(isnan(g.at_epsilon)); /* unchanged on failure */
  b.delta = 1.5;
  EXPECT_EINVAL(dpd_privacy_budget_eval(b, 3, &out, &g, &err), "delta = 1.5", "(0, 1)");
  b = dpd_privacy_budget_default();
  b.kind = DPD_PRIVACY_BUDGET_SIGMA;
  b.sigma = -3.0;
  EXPECT_EINVAL(dpd_privacy_budget_eval(b, 3, &out, &g, &err), "sigma = -3", "[0, inf]");
  b.kind = (dpd_privacy_budget_kind)17;
  EXPECT_EINVAL(dpd_privacy_budget_eval(b, 3, &out, &g, &err), "kind = 17", "none, epsilon");
#undef EXPECT_EINVAL
  assert_true(out == 123.0); /* outputs untouched on failure */
  dpd_err_reset(&err);
  assert_int_equal(dpd_privacy_gdp_delta(1.0, 1.0, NULL, &err), DPD_EINVAL);
  assert_int_equal(dpd_privacy_guarantee_from_gdp(1.0, 1e-5, NULL, NULL), DPD_EINVAL);
  assert_string_equal(dpd_privacy_conversion_name(DPD_PRIVACY_CONVERSION_GDP), "gdp");
  assert_string_equal(dpd_privacy_conversion_name(DPD_PRIVACY_CONVERSION_ZCDP_TIGHT), "zcdp_tight");
  assert_string_equal(dpd_privacy_conversion_name(DPD_PRIVACY_CONVERSION_BUN_STEINKE),
                      "bun_steinke");
  assert_null(dpd_privacy_conversion_name(DPD_PRIVACY_CONVERSION_COUNT));
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
      cmocka_unit_test(delta_matches_gsl_cdf_at_known_values),
      cmocka_unit_test(delta_mills_branch_is_accurate_in_the_deep_tail),
      cmocka_unit_test(delta_is_continuous_across_the_branch_switch),
      cmocka_unit_test(delta_is_monotone_in_eps_and_mu),
      cmocka_unit_test(eps_and_mu_inverses_round_trip_without_overshoot),
      cmocka_unit_test(eps_is_zero_when_delta_at_zero_already_suffices),
      cmocka_unit_test(eps_tight_rejects_invalid_arguments),
      cmocka_unit_test(rho_from_eps_rejects_invalid_arguments),
      cmocka_unit_test(gdp_known_values_from_the_literal_formula),
      cmocka_unit_test(sigma_for_one_at_1e_minus_4_matches_the_tabulated_conversions),
      cmocka_unit_test(zcdp_delta_known_values_and_limits),
      cmocka_unit_test(zcdp_delta_inverts_eps_tight_and_sits_between_gdp_and_bun_steinke),
      cmocka_unit_test(composition_adds_rho_and_squares_of_mu),
      cmocka_unit_test(derived_budgets_are_rounded_up),
      cmocka_unit_test(sigma_from_gdp_and_zcdp_meet_the_budget_and_are_tight),
      cmocka_unit_test(sigma_from_eps_meets_the_target_by_its_conversion_and_orders_them),
      cmocka_unit_test(guarantee_from_gdp_is_consistent),
      cmocka_unit_test(guarantee_from_zcdp_has_no_mu_and_uses_the_tight_conversion),
      cmocka_unit_test(guarantee_from_gaussian_equals_gdp_of_sqrt_t_over_sigma),
      cmocka_unit_test(guarantee_handles_non_private_and_perfectly_private_runs),
      cmocka_unit_test(budget_eval_calibrates_every_key_and_reports_it),
      cmocka_unit_test(new_functions_reject_invalid_arguments_naming_them),
  };
  /* As the CLI does at start-up (house rule 16): GSL errors come back as codes. */
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
