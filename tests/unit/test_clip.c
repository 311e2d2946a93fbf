/* Unit tests for the clipping factors mu_c(P), nu_c(P) and their P-derivatives (docs/math.md §1.5).
 * SPDX-License-Identifier: MIT
 *
 * Independent references, all from the defining expectations over r ~ N(0, 2P):
 *   mu = P(|r| <= c),   nu = E[min(r^2, c^2)] / E[r^2],   E[r^2] = 2P,
 *  (a) GSL adaptive quadrature (QAGS on [0, c], QAGIU on [c, inf); GSL manual, "Numerical
 *      Integration", QUADPACK of Piessens et al. 1983);
 *  (b) Monte Carlo with GSL's MT19937 (Matsumoto & Nishimura 1998) and gsl_ran_gaussian, a
 *      generator independent of the library's Philox stream, within 4 standard errors;
 *  (c) the limits c -> inf;
 *  (d) centred finite differences in P for the derivatives. */
#include "dpd_test.h"

#include <float.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "dpdyn/clip.h"

static const unsigned long test_seed = 20240517UL;

static const double c_grid[] = {0.0137, 0.3, 1.0, 2.385, 7.1};
static const double p_grid[] = {0.05, 0.4187, 1.0, 3.3, 17.0};

#define QUAD_LIMIT 1000
#define QUAD_EPSABS 1e-15
#define QUAD_EPSREL 1e-13

/* Density of r ~ N(0, 2P). */
static double residual_pdf(double r, double P) {
  return exp(-r * r / (4.0 * P)) / sqrt(4.0 * M_PI * P);
}

static double integrand_pdf(double r, void *params) {
  return residual_pdf(r, *(const double *)params);
}

static double integrand_r2_pdf(double r, void *params) {
  return r * r * residual_pdf(r, *(const double *)params);
}

static double integrate(gsl_function *f, double a, double b, gsl_integration_workspace *w) {
  double result = NAN;
  double abserr = NAN;
  int status;
  if (isinf(b)) {
    status = gsl_integration_qagiu(f, a, QUAD_EPSABS, QUAD_EPSREL, QUAD_LIMIT, w, &result, &abserr);
  } else {
    status =
        gsl_integration_qags(f, a, b, QUAD_EPSABS, QUAD_EPSREL, QUAD_LIMIT, w, &result, &abserr);
  }
  if (status != GSL_SUCCESS) {
    print_error("quadrature on [%g, %g] failed: %s\n", a, b, gsl_strerror(status));
    fail();
  }
  return result;
}

/* mu and nu by quadrature of their definitions (symmetry: integrals over r >= 0, doubled). */
static void factors_by_quadrature(double c, double P, double *mu, double *mu_tail, double *nu,
                                  gsl_integration_workspace *w) {
  gsl_function pdf = {integrand_pdf, &P};
  gsl_function r2pdf = {integrand_r2_pdf, &P};
  double body = 2.0 * integrate(&pdf, 0.0, c, w);
  double tail = 2.0 * integrate(&pdf, c, INFINITY, w);
  double second = 2.0 * integrate(&r2pdf, 0.0, c, w);
  *mu = body;
  *mu_tail = 1.0 - tail;
  *nu = (second + c * c * tail) / (2.0 * P);
}

static void factors_match_quadrature_of_the_definitions(void **state) {
  gsl_integration_workspace *w = gsl_integration_workspace_alloc(QUAD_LIMIT);
  (void)state;
  assert_non_null(w);
  for (size_t i = 0; i < sizeof c_grid / sizeof c_grid[0]; i++) {
    for (size_t j = 0; j < sizeof p_grid / sizeof p_grid[0]; j++) {
      double c = c_grid[i];
      double P = p_grid[j];
      double mu_q;
      double mu_q_tail;
      double nu_q;
      double mu;
      double nu;
      factors_by_quadrature(c, P, &mu_q, &mu_q_tail, &nu_q, w);
      mu = dpd_clip_mu_eval(c, P);
      nu = dpd_clip_nu_eval(c, P);
      assert_abs(mu, mu_q, 1e-10);
      assert_abs(mu, mu_q_tail, 1e-10);
      assert_abs(nu, nu_q, 1e-10);
      /* Relative agreement too: small c makes both factors small. */
      assert_rel(mu, mu_q, 1e-10);
      assert_rel(nu, nu_q, 1e-10);
    }
  }
  gsl_integration_workspace_free(w);
}

static void factors_eval_agrees_with_single_evaluators_and_accepts_null(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof c_grid / sizeof c_grid[0]; i++) {
    for (size_t j = 0; j < sizeof p_grid / sizeof p_grid[0]; j++) {
      double c = c_grid[i];
      double P = p_grid[j];
      double mu = NAN;
      double nu = NAN;
      double dmu = NAN;
      double dnu = NAN;
      double only = NAN;
      dpd_clip_factors_eval(c, P, &mu, &nu, &dmu, &dnu);
      assert_true(mu == dpd_clip_mu_eval(c, P));
      assert_true(nu == dpd_clip_nu_eval(c, P));
      /* Every output may be NULL. */
      dpd_clip_factors_eval(c, P, NULL, NULL, NULL, NULL);
      dpd_clip_factors_eval(c, P, NULL, NULL, &only, NULL);
      assert_true(only == dmu);
      dpd_clip_factors_eval(c, P, NULL, NULL, NULL, &only);
      assert_true(only == dnu);
      /* Ranges: 0 < nu < mu < 1 for finite c (clipping removes more variance than mean). */
      assert_true(nu > 0.0 && nu <= mu && mu <= 1.0);
      assert_true(dmu <= 0.0 && dnu <= 0.0);
    }
  }
}

static void factors_match_monte_carlo_within_four_standard_errors(void **state) {
  static const double cases[][2] = {{0.7, 0.4187}, {2.385, 1.0}, {1.0, 3.3}, {0.3, 0.05}};
  const size_t n = 1000000;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  (void)state;
  assert_non_null(rng);
  gsl_rng_set(rng, test_seed);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double c = cases[i][0];
    double P = cases[i][1];
    double sd = sqrt(2.0 * P);
    double inside = 0.0;
    double sum = 0.0;
    double sum2 = 0.0;
    double mu_hat;
    double nu_hat;
    double se_mu;
    double se_nu;
    double mean;
    double mu = dpd_clip_mu_eval(c, P);
    double nu = dpd_clip_nu_eval(c, P);
    for (size_t s = 0; s < n; s++) {
      double r = gsl_ran_gaussian(rng, sd);
      double q = fmin(r * r, c * c);
      inside += (fabs(r) <= c) ? 1.0 : 0.0;
      sum += q;
      sum2 += q * q;
    }
    mu_hat = inside / (double)n;
    se_mu = sqrt(mu * (1.0 - mu) / (double)n);
    mean = sum / (double)n;
    nu_hat = mean / (2.0 * P);
    se_nu = sqrt((sum2 / (double)n - mean * mean) / (double)n) / (2.0 * P);
    if (!(fabs(mu_hat - mu) <= 4.0 * se_mu && fabs(nu_hat - nu) <= 4.0 * se_nu)) {
      print_error("c = %g, P = %g, seed %lu, n = %zu: mu = %.10g vs MC %.10g (se %.3g), "
                  "nu = %.10g vs MC %.10g (se %.3g)\n",
                  c, P, test_seed, n, mu, mu_hat, se_mu, nu, nu_hat, se_nu);
      fail();
    }
  }
  gsl_rng_free(rng);
}

static void factors_tend_to_one_as_c_grows_and_equal_one_at_infinity(void **state) {
  static const double c_big[] = {0.5, 1.0,  3.0,   10.0,  30.0,  100.0,
                                 1e4, 1e10, 1e100, 1e200, 1e300, DBL_MAX};
  static const double p_any[] = {1e-300, 1e-10, 0.05, 1.0, 17.0, 1e10};
  (void)state;
  for (size_t j = 0; j < sizeof p_any / sizeof p_any[0]; j++) {
    double P = p_any[j];
    double prev_mu = 0.0;
    double prev_nu = 0.0;
    double mu;
    double nu;
    double dmu;
    double dnu;
    for (size_t i = 0; i < sizeof c_big / sizeof c_big[0]; i++) {
      double c = c_big[i];
      double k = c / (2.0 * sqrt(P));
      dpd_clip_factors_eval(c, P, &mu, &nu, &dmu, &dnu);
      if (!(isfinite(mu) && isfinite(nu) && isfinite(dmu) && isfinite(dnu))) {
        print_error("c = %g, P = %g: mu = %g, nu = %g, dmu = %g, dnu = %g\n", c, P, mu, nu, dmu,
                    dnu);
        fail();
      }
      assert_true(mu >= prev_mu && nu >= prev_nu && mu <= 1.0 && nu <= 1.0);
      if (k >= 30.0) {
        /* erfc(30) ~ 2e-393 underflows: the factors are 1 to double precision. */
        assert_true(mu == 1.0);
        assert_true(nu == 1.0);
      } else {
        /* Tail of a Gaussian: 1 - mu = erfc(k). */
        assert_abs(1.0 - mu, erfc(k), 2.0 * DBL_EPSILON);
      }
      prev_mu = mu;
      prev_nu = nu;
    }
    dpd_clip_factors_eval(INFINITY, P, &mu, &nu, &dmu, &dnu);
    assert_true(mu == 1.0);
    assert_true(nu == 1.0);
    assert_true(dmu == 0.0);
    assert_true(dnu == 0.0);
    assert_true(dpd_clip_mu_eval(INFINITY, P) == 1.0);
    assert_true(dpd_clip_nu_eval(INFINITY, P) == 1.0);
  }
}

static void derivatives_match_centred_finite_differences(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof c_grid / sizeof c_grid[0]; i++) {
    for (size_t j = 0; j < sizeof p_grid / sizeof p_grid[0]; j++) {
      double c = c_grid[i];
      double P = p_grid[j];
      double h = 1e-4 * P;
      double dmu;
      double dnu;
      double fd_mu = (dpd_clip_mu_eval(c, P + h) - dpd_clip_mu_eval(c, P - h)) / (2.0 * h);
      double fd_nu = (dpd_clip_nu_eval(c, P + h) - dpd_clip_nu_eval(c, P - h)) / (2.0 * h);
      dpd_clip_factors_eval(c, P, NULL, NULL, &dmu, &dnu);
      /* Truncation ~ (h/P)^2 = 1e-8 relative; rounding ~ DBL_EPSILON / (h |f'|). The floor
       * 1e-12 / P covers derivatives that are themselves ~0 (c >> sqrt(P)). */
      assert_abs(dmu, fd_mu, 1e-7 * fabs(fd_mu) + 1e-12 / P);
      assert_abs(dnu, fd_nu, 1e-7 * fabs(fd_nu) + 1e-12 / P);
    }
  }
}

static void nan_inputs_give_nan(void **state) {
  double mu = 0.0;
  double nu = 0.0;
  double dmu = 0.0;
  double dnu = 0.0;
  (void)state;
  assert_true(isnan(dpd_clip_mu_eval(NAN, 1.0)));
  assert_true(isnan(dpd_clip_nu_eval(1.0, NAN)));
  dpd_clip_factors_eval(NAN, 0.5, &mu, &nu, &dmu, &dnu);
  assert_true(isnan(mu) && isnan(nu) && isnan(dmu) && isnan(dnu));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(factors_match_quadrature_of_the_definitions),
      cmocka_unit_test(factors_eval_agrees_with_single_evaluators_and_accepts_null),
      cmocka_unit_test(factors_match_monte_carlo_within_four_standard_errors),
      cmocka_unit_test(factors_tend_to_one_as_c_grows_and_equal_one_at_infinity),
      cmocka_unit_test(derivatives_match_centred_finite_differences),
      cmocka_unit_test(nan_inputs_give_nan),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
