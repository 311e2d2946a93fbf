/* Spectral compression of the risk ODE (linreg.h, "Spectral compression"; docs/ode.md).
 * SPDX-License-Identifier: MIT
 *
 *  - Gauss exactness: the n nodes of each measure integrate lambda^k exactly for k <= 2n - 1,
 *    band by band and so in total (checked on the sums over all groups, relative 1e-11), and a
 *    one-node rule fails the same check (negative control);
 *  - the spectral problem built straight from the configuration (Gregory's formula for long
 *    power-law bands, streamed Gaussians for a random theta*) equals the compression of the full
 *    problem: the same lambda_max, R(0) and moments;
 *  - compressed against uncompressed ODE solves (both at rtol 1e-12) for power laws, clipping,
 *    privacy, random theta*, decaying schedules, agree to 1e-9 relative on the whole grid;
 *  - iso and levels spectra are exact without arrays, including levels near the overflow limit. */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"

static dpd_linreg_problem *full_problem(size_t d, dpd_spectrum_kind kind, double alpha,
                                        dpd_theta_kind theta) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  dpd_err err;
  pc.d = d;
  pc.spectrum = kind;
  pc.alpha = alpha;
  pc.theta = theta;
  pc.seed = 11;
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, &err), DPD_OK);
  return p;
}

/* sum_j w_j lambda_j^k over the groups, w = lambda mult / d (forcing) or lambda S0 / d
 * (initial energy), relative to the same sum over the eigenvalues of the full problem. */
static double moment(const dpd_linreg_problem *p, int k, int initial) {
  double s = 0.0;
  for (size_t j = 0; j < p->ngroups; j++) {
    const double w = (initial ? p->group_S0[j] : p->group_mult[j]) * p->group_lambda[j];
    s += w * pow(p->group_lambda[j], k);
  }
  return s / (double)p->d;
}

static void check_moments(const dpd_linreg_problem *full, const dpd_linreg_problem *cp, int kmax,
                          double tol) {
  for (int k = 0; k <= kmax; k++) {
    /* scaled by lambda_max^k: the relative error of a sum of positive terms */
    const double f = pow(full->lambda_max, -k);
    assert_rel(moment(cp, k, 0) * f, moment(full, k, 0) * f, tol);
    assert_rel(moment(cp, k, 1) * f, moment(full, k, 1) * f, tol);
  }
}

static void gauss_rules_are_exact_to_degree_2n_minus_1(void **state) {
  (void)state;
  dpd_linreg_problem *full = full_problem(20000, DPD_SPECTRUM_POWERLAW, 1.0, DPD_THETA_RANDOM);
  dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
  dpd_linreg_problem *cp = NULL;
  dpd_err err;
  for (int n = 2; n <= 8; n += 3) {
    cc.nodes = n;
    assert_int_equal(dpd_linreg_problem_compress(full, &cc, &cp, &err), DPD_OK);
    assert_true(cp->spectral && cp->compressed_bands > 0 && cp->ngroups < full->ngroups / 10);
    assert_int_equal(cp->nodes_per_band, n);
    check_moments(full, cp, 2 * n - 1, 1e-11);
    assert_rel(cp->lambda_max, full->lambda_max, 0.0);
    assert_rel(cp->lambda_min, full->lambda_min, 0.0);
    assert_rel(cp->mean_lambda_sq, full->mean_lambda_sq, 1e-12);
    dpd_linreg_problem_free(cp);
  }
  /* negative control: one node per band gets lambda^0 and lambda^1 right, not lambda^2 */
  cc.nodes = 1;
  assert_int_equal(dpd_linreg_problem_compress(full, &cc, &cp, &err), DPD_OK);
  check_moments(full, cp, 1, 1e-11);
  {
    const double f = pow(full->lambda_max, -2);
    assert_true(fabs(moment(cp, 2, 0) * f / (moment(full, 2, 0) * f) - 1.0) > 1e-6);
  }
  dpd_linreg_problem_free(cp);
  dpd_linreg_problem_free(full);
}

static void direct_build_equals_compressed_full_problem(void **state) {
  (void)state;
  /* d = 300000: bands beyond index 2048 with more than 4096 eigenvalues use Gregory's formula */
  const double alphas[3] = {0.5, 1.0, 2.0};
  for (int a = 0; a < 3; a++) {
    for (int th = 0; th < 2; th++) {
      const dpd_theta_kind theta = th ? DPD_THETA_RANDOM : DPD_THETA_FLAT;
      dpd_linreg_problem *full = full_problem(300000, DPD_SPECTRUM_POWERLAW, alphas[a], theta);
      dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
      dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
      dpd_linreg_problem *cp = NULL, *dp = NULL;
      dpd_err err;
      pc.d = 300000;
      pc.spectrum = DPD_SPECTRUM_POWERLAW;
      pc.alpha = alphas[a];
      pc.theta = theta;
      pc.seed = 11;
      assert_int_equal(dpd_linreg_problem_compress(full, &cc, &cp, &err), DPD_OK);
      assert_int_equal(dpd_linreg_problem_create_spectral(&pc, &cc, &dp, &err), DPD_OK);
      assert_rel(dp->lambda_max, full->lambda_max, 1e-13);
      assert_rel(dp->lambda_min, full->lambda_min, 1e-13);
      assert_rel(dpd_linreg_initial_risk(dp), dpd_linreg_initial_risk(full), 1e-12);
      check_moments(full, dp, 2 * cc.nodes - 1, 1e-11);
      print_message("alpha %g theta %s: %zu groups (compress of the full problem: %zu)\n",
                    alphas[a], th ? "random" : "flat", dp->ngroups, cp->ngroups);
      dpd_linreg_problem_free(cp);
      dpd_linreg_problem_free(dp);
      dpd_linreg_problem_free(full);
    }
  }
}

static double max_rel(const double *a, const double *b, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) {
    m = fmax(m, fabs(a[i] - b[i]) / fabs(b[i]));
  }
  return m;
}

static void compressed_ode_matches_uncompressed(void **state) {
  (void)state;
  struct {
    double alpha, c, rho;
    dpd_schedule_kind schedule;
    dpd_theta_kind theta;
  } cases[] = {
      {1.0, 0.5, 1.0, DPD_SCHEDULE_SQRT, DPD_THETA_RANDOM},
      {0.5, INFINITY, INFINITY, DPD_SCHEDULE_CONST, DPD_THETA_FLAT},
      {2.0, 1.0, 2.0, DPD_SCHEDULE_HYPERBOLIC, DPD_THETA_RANDOM},
      {1.5, 0.3, INFINITY, DPD_SCHEDULE_COSINE, DPD_THETA_RANDOM},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    dpd_linreg_problem *full =
        full_problem(20000, DPD_SPECTRUM_POWERLAW, cases[c].alpha, cases[c].theta);
    dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
    dpd_linreg_problem *cp = NULL;
    dpd_schedule_config sc = dpd_schedule_config_default();
    dpd_schedule *s = NULL;
    dpd_ode_config oc = dpd_ode_config_default();
    dpd_ode_result *rf = NULL, *rc = NULL;
    dpd_err err;
    cc.nodes = 8;
    sc.kind = cases[c].schedule;
    sc.eta0 = 1.5;
    assert_int_equal(dpd_schedule_create(&sc, &s, &err), DPD_OK);
    oc.gamma = 0.25;
    oc.c = cases[c].c;
    oc.rho = cases[c].rho;
    oc.bounds = 1;
    oc.rtol = 1e-12;
    oc.atol = 1e-16;
    assert_int_equal(dpd_linreg_problem_compress(full, &cc, &cp, &err), DPD_OK);
    assert_int_equal(dpd_ode_solve(full, s, &oc, &rf, &err), DPD_OK);
    assert_int_equal(dpd_ode_solve(cp, s, &oc, &rc, &err), DPD_OK);
    const double e = max_rel(rc->risk, rf->risk, rf->grid);
    print_message("case %zu: %zu -> %zu groups, max relative difference of R %.3g, of the final "
                  "risk %.3g\n",
                  c, full->ngroups, cp->ngroups, e, fabs(rc->final_risk / rf->final_risk - 1.0));
    assert_true(e <= 1e-9);
    assert_rel(rc->final_risk, rf->final_risk, 1e-9);
    assert_true(max_rel(rc->lower, rf->lower, rf->grid) <= 1e-9);
    assert_true(max_rel(rc->upper, rf->upper, rf->grid) <= 1e-9);
    dpd_ode_result_free(rf);
    dpd_ode_result_free(rc);
    dpd_linreg_problem_free(cp);
    dpd_linreg_problem_free(full);
    dpd_schedule_free(s);
  }
}

static void iso_and_levels_are_exact_without_arrays(void **state) {
  (void)state;
  const double values[3] = {1e308, 3e307, 1e308};
  const size_t mult[3] = {2, 5, 3};
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
  dpd_linreg_problem *full = NULL, *dp = NULL;
  dpd_err err;
  pc.d = 10;
  pc.spectrum = DPD_SPECTRUM_LEVELS;
  pc.values = values;
  pc.mult = mult;
  pc.nvalues = 3;
  pc.seed = 5;
  assert_int_equal(dpd_linreg_problem_create(&pc, &full, &err), DPD_OK);
  assert_int_equal(dpd_linreg_problem_create_spectral(&pc, &cc, &dp, &err), DPD_OK);
  assert_int_equal(dp->ngroups, 2);
  assert_int_equal(full->ngroups, 2);
  for (size_t j = 0; j < 2; j++) {
    assert_rel(dp->group_lambda[j], full->group_lambda[j], 1e-15);
    assert_rel(dp->group_mult[j], full->group_mult[j], 0.0);
    assert_rel(dp->group_S0[j], full->group_S0[j], 1e-14);
  }
  assert_int_equal(dp->compressed_bands, 0);
  dpd_linreg_problem_free(dp);
  dpd_linreg_problem_free(full);
  /* iso at a dimension whose arrays would need 24 GB: one group, no per-coordinate memory */
  pc = dpd_linreg_problem_config_default();
  pc.d = 1000000000;
  pc.theta = DPD_THETA_FLAT;
  assert_int_equal(dpd_linreg_problem_create_spectral(&pc, &cc, &dp, &err), DPD_OK);
  assert_int_equal(dp->ngroups, 1);
  assert_null(dp->lambda);
  assert_rel(dpd_linreg_initial_risk(dp), 0.5, 1e-15);
  dpd_linreg_problem_free(dp);
}

static void bad_configurations_are_refused(void **state) {
  (void)state;
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
  dpd_linreg_problem *p = NULL;
  dpd_err err;
  pc.d = 100;
  pc.spectrum = DPD_SPECTRUM_POWERLAW;
  cc.nodes = 0;
  assert_int_equal(dpd_linreg_problem_create_spectral(&pc, &cc, &p, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'compress_nodes'"));
  cc.nodes = 6;
  cc.bands_per_decade = 0;
  assert_int_equal(dpd_linreg_problem_create_spectral(&pc, &cc, &p, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'compress_bands'"));
  cc.bands_per_decade = 3;
  pc.theta = DPD_THETA_GIVEN;
  assert_int_equal(dpd_linreg_problem_create_spectral(&pc, &cc, &p, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'theta_star'"));
  assert_null(p);
}

int main(void) {
  gsl_set_error_handler_off();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gauss_rules_are_exact_to_degree_2n_minus_1),
      cmocka_unit_test(direct_build_equals_compressed_full_problem),
      cmocka_unit_test(compressed_ode_matches_uncompressed),
      cmocka_unit_test(iso_and_levels_are_exact_without_arrays),
      cmocka_unit_test(bad_configurations_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
