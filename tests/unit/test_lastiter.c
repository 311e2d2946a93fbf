/* Unit tests for the last-iterate GDP of one-pass linreg (src/linreg/lastiter.c; docs/privacy.md,
 * "Last-iterate GDP of one-pass linreg"), and the cross-check of the exact GDP of rf and nc DP-GD
 * against the PLD accountant (issue 28 §2).
 * SPDX-License-Identifier: MIT
 *
 * Independent references used here:
 *  - mu_k = eta_k / sqrt(sum_{j>=k} sigma_j^2) by a direct O(n^2) double loop over a hand-made
 *    (eta, sigma) sequence, against dpd_privacy_rho_eff (a backward scaled sum);
 *  - the chi-square tail of GSL (gsl_cdf_chisq_Q) below the Chernoff bound for an isotropic
 *    spectrum, and a Monte Carlo estimate (GSL's generator) below it for an anisotropic one;
 *  - T Gaussian steps of noise multiplier m composed by the PLD (dpd_pld_gaussian +
 *    dpd_pld_compose_self), whose (eps_low, eps_up) must bracket the exact GDP eps of
 *    sqrt(T)/m-GDP that rf and nc report. */
#include "dpd_test.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "core/model_impl.h"
#include "dpdyn/pld.h"
#include "dpdyn/privacy.h"
#include "dpdyn/rf_privacy.h"
#include "dpdyn/schedule.h"
#include "linreg/report_impl.h"

/* ---- mu of each record, against the formula ---- */

static void test_mu_formula_hand_made(void **state) {
  (void)state;
  /* a decreasing step size with noise at some steps only, and a large final noise */
  const double eta[8] = {0.5, 0.45, 0.4, 0.4, 0.3, 0.2, 0.2, 0.1};
  const double sigma[8] = {0.0, 0.1, 0.0, 0.3, 0.05, 0.0, 0.2, 0.6};
  double best = 0.0;
  for (size_t k = 0; k < 8; k++) {
    double s = 0.0;
    for (size_t j = k; j < 8; j++) {
      s += sigma[j] * sigma[j];
    }
    best = fmax(best, eta[k] / sqrt(s));
  }
  assert_rel(dpd_privacy_rho_eff(eta, sigma, 8), best, 1e-14);
  /* the record of step 0 meets every later noise: mu_0 = 0.5 / sqrt(0.4725) */
  assert_rel(best, 0.5 / sqrt(0.01 + 0.09 + 0.0025 + 0.04 + 0.36), 1e-14);
}

/* The calibrated schedule telescopes: every record's mu_k is rho (what lastiter.c reports). */
static void test_mu_calibrated_is_rho(void **state) {
  (void)state;
  const char *names[] = {"const", "sqrt", "hyperbolic", "cosine"};
  const double rhos[] = {0.1, 1.0, 2.0, 30.0};
  const size_t n = 997;
  double *eta = malloc(n * sizeof *eta), *sigma = malloc(n * sizeof *sigma);
  assert_non_null(eta);
  assert_non_null(sigma);
  for (size_t f = 0; f < 4; f++) {
    dpd_schedule_config cfg = dpd_schedule_config_default();
    dpd_schedule *s = NULL;
    cfg.kind = dpd_schedule_family_lookup(names[f])->kind;
    cfg.eta0 = 0.8;
    cfg.a = 3.0;
    cfg.eta_min = 0.1;
    assert_int_equal(dpd_schedule_create(&cfg, &s, NULL), DPD_OK);
    for (size_t r = 0; r < 4; r++) {
      double mu_min = INFINITY, mu_max = 0.0, tail = 0.0;
      dpd_schedule_steps(s, n, rhos[r], eta, sigma);
      for (size_t k = n; k-- > 0;) {
        tail += sigma[k] * sigma[k];
        mu_min = fmin(mu_min, eta[k] / sqrt(tail));
        mu_max = fmax(mu_max, eta[k] / sqrt(tail));
      }
      assert_rel(mu_min, rhos[r], 1e-10);
      assert_rel(mu_max, rhos[r], 1e-10);
      assert_rel(dpd_privacy_rho_eff(eta, sigma, n), rhos[r], 1e-10);
    }
    dpd_schedule_free(s);
  }
  free(eta);
  free(sigma);
}

/* ---- eps_gdp <= eps_tight(zCDP), and by how much ---- */

/* The ratio's range over rho on a log grid at each delta, where eps_gdp >= eps_min (below it the
 * ratio of two near-zero epsilons says nothing). */
static void ratio_range(double rho_min, double rho_max, double eps_min, double *lo, double *hi) {
  const double deltas[] = {1e-12, 1e-10, 1e-8, 1e-6, 1e-5, 1e-3, 1e-2};
  *lo = INFINITY;
  *hi = 0.0;
  for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) {
    for (double lr = log10(rho_min); lr <= log10(rho_max) + 1e-9; lr += 0.02) {
      const double rho = pow(10.0, lr);
      double eg, et;
      assert_int_equal(dpd_privacy_gdp_eps(rho, deltas[i], &eg, NULL), DPD_OK);
      assert_int_equal(dpd_privacy_eps_tight(0.5 * rho * rho, deltas[i], &et, NULL), DPD_OK);
      assert_true(eg <= et); /* mu-GDP is mu^2/2-zCDP, and the GDP conversion is exact */
      if (eg >= eps_min) {
        *lo = fmin(*lo, et / eg);
        *hi = fmax(*hi, et / eg);
      }
    }
  }
}

static void test_gdp_below_zcdp_tight(void **state) {
  (void)state;
  double lo, hi;
  ratio_range(0.01, 31.6, 0.0, &lo, &hi); /* eps_gdp <= eps_tight everywhere */
  ratio_range(0.01, 31.6, 0.1, &lo, &hi);
  print_message("eps_tight / eps_gdp, delta in [1e-12, 1e-2], eps_gdp >= 0.1: %.4f .. %.4f\n", lo,
                hi);
  assert_true(lo >= 1.0 && hi < 2.0);
  ratio_range(0.1, 31.6, 0.5, &lo, &hi);
  print_message("eps_tight / eps_gdp, rho in [0.1, 31.6], eps_gdp >= 0.5: %.4f .. %.4f\n", lo, hi);
  assert_true(lo >= 1.0 && hi < 1.5);
}

/* ---- the norm tail bound ---- */

/* A problem with the given groups (only the fields the bound reads). */
static dpd_linreg_problem groups(size_t ng, double *lambda, double *mult, int compressed) {
  dpd_linreg_problem p;
  double d = 0.0, lmax = 0.0, tr = 0.0;
  memset(&p, 0, sizeof p);
  for (size_t g = 0; g < ng; g++) {
    d += mult[g];
    tr += mult[g] * lambda[g];
    lmax = fmax(lmax, lambda[g]);
  }
  for (size_t g = 0; g < ng; g++) {
    lambda[g] *= d / tr; /* mean 1 */
  }
  p.d = (size_t)d;
  p.ngroups = ng;
  p.group_lambda = lambda;
  p.group_mult = mult;
  p.lambda_max = lmax * d / tr;
  p.spectral = compressed;
  p.compressed_bands = (size_t)compressed;
  return p;
}

static void test_tail_iso_against_chisq(void **state) {
  (void)state;
  double lambda[1] = {1.0}, mult[1] = {200.0};
  dpd_linreg_problem p = groups(1, lambda, mult, 0);
  const double Bs[] = {150.0, 200.0, 260.0, 400.0, 800.0, 1600.0};
  for (size_t i = 0; i < 6; i++) {
    const double exact = gsl_cdf_chisq_Q(Bs[i], 200.0), bound = dpd__linreg_norm2_tail(&p, Bs[i]);
    dpd_linreg_problem q = groups(1, lambda, mult, 1); /* the closed form: the same for iso */
    assert_true(bound >= exact);
    if (Bs[i] > 200.0) {
      /* Chernoff is within a factor O(sqrt(d) B/d) of the chi-square tail (measured: 8.4 at
       * B = 260, 176 at B = 1600) */
      assert_true(bound <= 10.0 * sqrt(200.0) * (Bs[i] / 200.0) * exact);
      assert_rel(dpd__linreg_norm2_tail(&q, Bs[i]), bound, 1e-9);
    } else {
      assert_true(bound == 1.0);
    }
  }
}

static void test_tail_anisotropic(void **state) {
  (void)state;
  double lambda[3] = {4.0, 1.0, 0.25}, mult[3] = {5.0, 20.0, 75.0};
  double lambda_c[3] = {4.0, 1.0, 0.25}, mult_c[3] = {5.0, 20.0, 75.0};
  dpd_linreg_problem p = groups(3, lambda, mult, 0), q = groups(3, lambda_c, mult_c, 1);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  const size_t draws = 200000;
  const double B = 180.0;
  size_t over = 0;
  gsl_rng_set(rng, 20261128UL);
  for (size_t s = 0; s < draws; s++) {
    double x2 = 0.0;
    for (size_t g = 0; g < 3; g++) {
      for (size_t m = 0; m < (size_t)mult[g]; m++) {
        const double z = gsl_ran_ugaussian(rng);
        x2 += lambda[g] * z * z;
      }
    }
    over += x2 > B;
  }
  gsl_rng_free(rng);
  {
    const double mc = (double)over / (double)draws, exact_groups = dpd__linreg_norm2_tail(&p, B),
                 relaxed = dpd__linreg_norm2_tail(&q, B);
    print_message("P(|x|^2 > %g), d = 100, lambda = 4, 1, 0.25 (x 5, 20, 75), mean 1: Monte "
                  "Carlo %.3g, Chernoff %.3g, relaxed %.3g\n",
                  B, mc, exact_groups, relaxed);
    assert_true(exact_groups >= mc);
    assert_true(relaxed >= exact_groups);
    assert_true(exact_groups < 1.0);
  }
}

/* ---- the check ---- */

static void test_check_data_and_gaussian(void **state) {
  (void)state;
  double a[4] = {0.5, 1.0, 1.5, 1.0}; /* |x|^2 / d of 4 rows, d = 10: max |x|^2 = 15 */
  dpd__lrdata D;
  dpd__linreg_gdp_check c;
  double lambda[1] = {1.0}, mult[1] = {10.0};
  dpd_linreg_problem p = groups(1, lambda, mult, 0);
  memset(&D, 0, sizeof D);
  D.a = a;
  D.n_pop = 4;
  D.d = 10;
  assert_rel(dpd__linreg_max_row_norm2(&D), 15.0, 1e-15);
  dpd__linreg_gdp_check_eval(2.0 / 16.0, 4, &p, &D, &c); /* B = 16 >= 15 */
  assert_int_equal(c.status, DPD__GDP_HOLDS);
  assert_rel(c.bound, 16.0, 1e-15);
  assert_string_equal(dpd__linreg_gdp_status_name(c.status), "holds");
  dpd__linreg_gdp_check_eval(2.0 / 14.0, 4, &p, &D, &c); /* B = 14 < 15 */
  assert_int_equal(c.status, DPD__GDP_FAILS);
  assert_non_null(strstr(c.why, "|x|^2 = 15 > 14"));
  D.with_replacement = 1;
  dpd__linreg_gdp_check_eval(2.0 / 16.0, 4, &p, &D, &c);
  assert_int_equal(c.status, DPD__GDP_FAILS);
  assert_non_null(strstr(c.why, "replacement"));
  dpd__linreg_gdp_check_eval(2.0 / 40.0, 100, &p, NULL, &c); /* Gaussian rows */
  assert_int_equal(c.status, DPD__GDP_CONDITIONAL);
  assert_rel(c.mean_norm2, 10.0, 1e-15);
  assert_true(c.row_tail >= gsl_cdf_chisq_Q(40.0, 10.0));
  assert_rel(c.run_tail, fmin(1.0, 100.0 * c.row_tail), 1e-15);
}

/* What the summary says: a number where the check holds, null with a reason where it fails. */
static void test_block_in_summary(void **state) {
  (void)state;
  dpd__linreg_gdp_check c;
  dpd_output *out = NULL;
  const cJSON *v, *na;
  double want;
  memset(&c, 0, sizeof c);
  c.bound = 100.0;
  c.rows = "data";
  c.max_norm2 = c.mean_norm2 = c.row_tail = c.run_tail = NAN;
  c.max_norm2 = 50.0;
  c.status = DPD__GDP_HOLDS;
  assert_int_equal(dpd_output_create(&out, NULL), DPD_OK);
  assert_int_equal(dpd__linreg_report_gdp_block(out, 1.5, 1, 1e-6, &c, NULL), DPD_OK);
  assert_int_equal(dpd_privacy_gdp_eps(1.5, 1e-6, &want, NULL), DPD_OK);
  v = cJSON_GetObjectItemCaseSensitive(out->summary, "epsilon_gdp");
  assert_true(cJSON_IsNumber(v));
  assert_rel(v->valuedouble, want, 1e-15);
  /* written again (tune): the keys are replaced, not repeated */
  c.status = DPD__GDP_FAILS;
  snprintf(c.why, sizeof c.why, "a row is too long");
  assert_int_equal(dpd__linreg_report_gdp_block(out, 1.5, 1, 1e-6, &c, NULL), DPD_OK);
  v = cJSON_GetObjectItemCaseSensitive(out->summary, "epsilon_gdp");
  assert_true(cJSON_IsNull(v));
  na = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(out->summary, "not_available"), "epsilon_gdp");
  assert_true(cJSON_IsString(na));
  assert_non_null(strstr(na->valuestring, "a row is too long"));
  assert_int_equal(cJSON_GetArraySize(out->summary) > 0, 1);
  {
    int count = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, out->summary) {
      count += strcmp(it->string, "epsilon_gdp") == 0;
    }
    assert_int_equal(count, 1);
  }
  assert_int_equal((int)out->nnotes, 1);
  /* a third time, failing again: still one note */
  assert_int_equal(dpd__linreg_report_gdp_block(out, 1.5, 1, 1e-6, &c, NULL), DPD_OK);
  assert_int_equal((int)out->nnotes, 1);
  dpd_output_free(out);
}

/* ---- rf and nc DP-GD: the exact GDP eps inside the PLD accountant's bracket ---- */

/* The PLD of T Gaussian steps of noise multiplier m: its (eps_low, eps_up) at delta. */
static void pld_bracket(double m, size_t T, double delta, double h, double *lo, double *up) {
  dpd_pld *one = NULL, *all = NULL;
  assert_int_equal(dpd_pld_gaussian(m, h, &one, NULL), DPD_OK);
  assert_int_equal(dpd_pld_compose_self(one, T, &all, NULL), DPD_OK);
  assert_int_equal(dpd_pld_epsilon(all, delta, up, lo, NULL), DPD_OK);
  dpd_pld_free(one);
  dpd_pld_free(all);
}

static void test_rf_exact_inside_pld(void **state) {
  (void)state;
  /* rf DP-GD: T steps of step eta and noise multiplier sigma: per step sqrt(eta)/sigma-GDP */
  const struct {
    double eta;
    size_t T;
    double eps, delta;
  } cases[] = {{0.5, 100, 1.0, 1e-5}, {1.0, 10, 4.0, 1e-6}, {0.1, 1000, 0.5, 1e-3}};
  for (size_t i = 0; i < 3; i++) {
    double sigma, eps, lo, up;
    assert_int_equal(dpd_rf_privacy_sigma_exact(cases[i].eta, cases[i].T, cases[i].eps,
                                                cases[i].delta, &sigma, NULL),
                     DPD_OK);
    assert_int_equal(
        dpd_rf_privacy_eps_delivered(cases[i].eta, cases[i].T, sigma, cases[i].delta, &eps, NULL),
        DPD_OK);
    pld_bracket(sigma / sqrt(cases[i].eta), cases[i].T, cases[i].delta, 1e-4, &lo, &up);
    print_message("rf eta %g T %zu: exact eps %.6f, PLD [%.6f, %.6f]\n", cases[i].eta, cases[i].T,
                  eps, lo, up);
    assert_true(lo <= eps * (1.0 + 1e-12));
    assert_true(eps <= up * (1.0 + 1e-12));
    assert_true(eps <= cases[i].eps * (1.0 + 1e-12));
  }
}

static void test_nc_exact_inside_pld(void **state) {
  (void)state;
  /* nc NoisyGD: T Gaussian steps of multiplier m (dpd_privacy_sigma_from_eps with the exact GDP
   * conversion, what budget = epsilon does), reported as sqrt(T)/m-GDP */
  const size_t steps[] = {1, 20, 500};
  const double epss[] = {0.3, 2.0, 8.0};
  for (size_t i = 0; i < 3; i++) {
    dpd_privacy_guarantee g;
    double m, lo, up;
    assert_int_equal(
        dpd_privacy_sigma_from_eps(epss[i], 1e-5, steps[i], DPD_PRIVACY_CONVERSION_GDP, &m, NULL),
        DPD_OK);
    assert_int_equal(dpd_privacy_guarantee_from_gdp(sqrt((double)steps[i]) / m, 1e-5, &g, NULL),
                     DPD_OK);
    pld_bracket(m, steps[i], 1e-5, 1e-4, &lo, &up);
    print_message("nc T %zu: exact eps %.6f, PLD [%.6f, %.6f]\n", steps[i], g.epsilon_gdp, lo, up);
    assert_true(lo <= g.epsilon_gdp * (1.0 + 1e-12));
    assert_true(g.epsilon_gdp <= up * (1.0 + 1e-12));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mu_formula_hand_made), cmocka_unit_test(test_mu_calibrated_is_rho),
      cmocka_unit_test(test_gdp_below_zcdp_tight), cmocka_unit_test(test_tail_iso_against_chisq),
      cmocka_unit_test(test_tail_anisotropic),     cmocka_unit_test(test_check_data_and_gaussian),
      cmocka_unit_test(test_block_in_summary),     cmocka_unit_test(test_rf_exact_inside_pld),
      cmocka_unit_test(test_nc_exact_inside_pld),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
