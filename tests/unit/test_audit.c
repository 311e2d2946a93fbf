/* Unit tests of the empirical privacy audit's statistics (include/dpdyn/audit.h, src/core/audit.c)
 * and of the linreg audit's runs (src/linreg/audit.c).
 * SPDX-License-Identifier: MIT */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>

#include "core/audit_impl.h"
#include "dpdyn/audit.h"
#include "dpdyn/linreg.h"
#include "dpdyn/privacy.h"
#include "dpdyn/rng.h"
#include "dpdyn/schedule.h"
#include "linreg/audit_impl.h"

/* Clopper-Pearson against closed forms and textbook values: k = 0 gives 1 - alpha^(1/n), k = n
 * gives alpha^(1/n); 5 of 10 at 95 % (two-sided) is [0.187086, 0.812914] (Clopper & Pearson;
 * e.g. R's binom.test(5, 10)). */
static void clopper_pearson_matches_known_values(void **state) {
  double lo, hi;
  (void)state;
  assert_int_equal(dpd_audit_cp_eval(0, 10, 0.025, &lo, &hi, NULL), DPD_OK);
  assert_abs(lo, 0.0, 0.0);
  assert_rel(hi, 1.0 - pow(0.025, 0.1), 1e-10);
  assert_int_equal(dpd_audit_cp_eval(10, 10, 0.025, &lo, &hi, NULL), DPD_OK);
  assert_rel(lo, pow(0.025, 0.1), 1e-10);
  assert_abs(hi, 1.0, 0.0);
  assert_int_equal(dpd_audit_cp_eval(5, 10, 0.025, &lo, &hi, NULL), DPD_OK);
  assert_abs(lo, 0.187086, 1e-6);
  assert_abs(hi, 0.812914, 1e-6);
  /* 17 of 1385 (large n, small k): the defining equations P(Bin <= k | hi) = alpha and
   * P(Bin >= k | lo) = alpha */
  assert_int_equal(dpd_audit_cp_eval(17, 1385, 0.05, &lo, &hi, NULL), DPD_OK);
  assert_rel(gsl_cdf_binomial_P(17, hi, 1385), 0.05, 1e-8);
  assert_rel(gsl_cdf_binomial_Q(16, lo, 1385), 0.05, 1e-8);
}

/* Where GSL's beta inverse fails (NaN: seen at k = 1848 of n = 2000) the bisection answers, and
 * satisfies the defining equation. */
static void clopper_pearson_is_finite_where_gsl_inverse_fails(void **state) {
  (void)state;
  for (size_t k = 1800; k < 2000; k += 3) {
    double lo, hi;
    assert_int_equal(dpd_audit_cp_eval(k, 2000, 0.025, &lo, &hi, NULL), DPD_OK);
    assert_true(lo > 0.0 && lo < (double)k / 2000.0 && hi > (double)k / 2000.0 && hi <= 1.0);
    assert_rel(gsl_cdf_binomial_Q((unsigned)k - 1, lo, 2000), 0.025, 1e-6);
  }
}

/* The bounds of a pair of rates, by hand. */
static void epsilon_and_mu_of_rates_by_hand(void **state) {
  (void)state;
  assert_rel(dpd_audit_epsilon_eval(0.01, 0.5, 1e-5), log((1.0 - 1e-5 - 0.5) / 0.01), 1e-14);
  assert_rel(dpd_audit_epsilon_eval(0.5, 0.01, 1e-5), log((1.0 - 1e-5 - 0.5) / 0.01), 1e-14);
  assert_abs(dpd_audit_epsilon_eval(0.5, 0.5, 1e-5), 0.0, 0.0); /* no better than guessing */
  assert_true(isinf(dpd_audit_epsilon_eval(0.0, 0.5, 1e-5)));
  /* Phi^-1(1 - Phi(-1)) - Phi^-1(Phi(-1.5)) = 1 + 1.5 */
  assert_rel(dpd_audit_mu_eval(gsl_cdf_ugaussian_P(-1.0), gsl_cdf_ugaussian_P(-1.5)), 2.5, 1e-12);
  assert_abs(dpd_audit_mu_eval(0.6, 0.6), 0.0, 0.0);
  /* G_0(a) = 1 - a; G_mu(Phi(-mu/2)) = Phi(-mu/2) (the symmetric point) */
  assert_rel(dpd_audit_tradeoff_eval(0.0, 0.3125), 1.0 - 0.3125, 1e-14);
  assert_rel(dpd_audit_tradeoff_eval(1.7, gsl_cdf_ugaussian_P(-0.85)), gsl_cdf_ugaussian_P(-0.85),
             1e-12);
}

/* Two Gaussian samples, N(0, 1) and N(mu, 1), of `runs` each, from stream (seed, 0). */
static void gaussian_samples(double mu, size_t runs, uint64_t seed, double *s0, double *s1) {
  dpd_rng rng;
  dpd_rng_init(&rng, seed, 0);
  dpd_rng_gaussian_fill(&rng, s0, runs);
  dpd_rng_gaussian_fill(&rng, s1, runs);
  for (size_t i = 0; i < runs; i++) {
    s1[i] += mu;
  }
}

/* On samples of a mu = 1.3 Gaussian mechanism the lower bounds hold at the stated confidence:
 * over 60 seeds the epsilon bound exceeds the true epsilon (dpd_privacy_gdp_eps) and the mu bound
 * exceeds mu at most as often as 5 % allows (binomial: P(more than 8 of 60) < 0.01). */
static void lower_bounds_hold_at_their_confidence(void **state) {
  const double mu = 1.3, delta = 1e-3;
  const size_t runs = 400, seeds = 60;
  double *s = malloc(2 * runs * sizeof *s), eps_true;
  dpd_audit_config cfg = dpd_audit_config_default();
  size_t over_eps = 0, over_mu = 0, mu_outside = 0;
  (void)state;
  cfg.delta = delta;
  assert_int_equal(dpd_privacy_gdp_eps(mu, delta, &eps_true, NULL), DPD_OK);
  for (uint64_t seed = 1; seed <= seeds; seed++) {
    dpd_audit_result r;
    gaussian_samples(mu, runs, 1000 + seed, s, s + runs);
    assert_int_equal(dpd_audit_stats_eval(s, s + runs, runs, &cfg, &r, NULL), DPD_OK);
    over_eps += r.epsilon_lower > eps_true;
    over_mu += r.mu_lower > mu;
    mu_outside += !(r.mu_hat_lo <= mu && mu <= r.mu_hat_hi);
    if (r.epsilon_lower > eps_true) {
      print_message("seed %llu: epsilon_lower %g > %g\n", (unsigned long long)(1000 + seed),
                    r.epsilon_lower, eps_true);
    }
  }
  assert_true(over_eps <= 8);
  assert_true(over_mu <= 8);
  assert_true(mu_outside <= 8);
  free(s);
}

/* With many runs the bounds come close to the truth: 2 x 10^5 runs of mu = 1, delta = 0.01. */
static void lower_bounds_approach_the_truth_with_many_runs(void **state) {
  const double mu = 1.0, delta = 0.01;
  const size_t runs = 200000;
  double *s = malloc(2 * runs * sizeof *s), eps_true;
  dpd_audit_config cfg = dpd_audit_config_default();
  dpd_audit_result r;
  (void)state;
  cfg.delta = delta;
  assert_int_equal(dpd_privacy_gdp_eps(mu, delta, &eps_true, NULL), DPD_OK);
  gaussian_samples(mu, runs, 77, s, s + runs);
  assert_int_equal(dpd_audit_stats_eval(s, s + runs, runs, &cfg, &r, NULL), DPD_OK);
  print_message("eps_true %g eps_lower %g mu_lower %g mu_hat %g [%g, %g]\n", eps_true,
                r.epsilon_lower, r.mu_lower, r.mu_hat, r.mu_hat_lo, r.mu_hat_hi);
  assert_true(r.epsilon_lower <= eps_true && r.epsilon_lower >= 0.75 * eps_true);
  assert_true(r.mu_lower <= mu && r.mu_lower >= 0.93 * mu);
  assert_abs(r.mu_hat, mu, 0.01);
  assert_true(r.eval_runs == runs / 2 && r.select_runs == runs / 2);
  free(s);
}

/* The expected bound grows with the runs, and runs_needed reaches its target. */
static void runs_needed_reaches_the_target(void **state) {
  const double mu = 1.0, delta = 1e-5, conf = 0.95;
  double eps_true;
  (void)state;
  assert_int_equal(dpd_privacy_gdp_eps(mu, delta, &eps_true, NULL), DPD_OK);
  const double e1 = dpd_audit_epsilon_expected_eval(mu, 1000, delta, conf);
  const double e2 = dpd_audit_epsilon_expected_eval(mu, 100000, delta, conf);
  assert_true(e1 > 0.0 && e1 < e2 && e2 < eps_true);
  const size_t need = dpd_audit_runs_needed_eval(mu, 0.5 * eps_true, delta, conf, (size_t)1 << 30);
  assert_true(need > 1000);
  assert_true(dpd_audit_epsilon_expected_eval(mu, need, delta, conf) >= 0.5 * eps_true);
  /* beyond the truth: never */
  assert_int_equal(dpd_audit_runs_needed_eval(mu, 1.01 * eps_true, delta, conf, 1000000), 0);
}

/* Bad input names the key. */
static void bad_input_names_the_key(void **state) {
  double s[20] = {0};
  dpd_audit_config cfg = dpd_audit_config_default();
  dpd_audit_result r;
  dpd_err err;
  (void)state;
  for (size_t i = 0; i < 20; i++) {
    s[i] = 0.1 * (double)i;
  }
  assert_int_equal(dpd_audit_stats_eval(s, s + 10, 5, &cfg, &r, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'runs'"));
  cfg.confidence = 1.0;
  assert_int_equal(dpd_audit_stats_eval(s, s + 10, 10, &cfg, &r, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'confidence'"));
  cfg = dpd_audit_config_default();
  cfg.delta = 0.0;
  assert_int_equal(dpd_audit_stats_eval(s, s + 10, 10, &cfg, &r, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'delta'"));
  assert_int_equal(dpd_audit_cp_eval(3, 2, 0.05, NULL, NULL, &err), DPD_EINVAL);
}

/* The linreg audit with the constant schedule: <theta_n, u> differs by exactly 2 C eta between
 * the sides for the same noise stream index (the iterate before the last step is noiseless and
 * the canary is clipped), has sd 2 C sigma_{n-1}, and its runs do not depend on the threads. */
static void linreg_audit_is_a_gaussian_mechanism_of_mu_rho(void **state) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  dpd_schedule_config scfg = dpd_schedule_config_default();
  dpd_schedule *sch = NULL;
  dpd_linreg_setting st = dpd_linreg_setting_default();
  const size_t runs = 400;
  double *s = malloc(4 * runs * sizeof *s);
  dpd__linreg_audit_info info;
  (void)state;
  pc.d = 12;
  st.n = 60;
  st.c = 0.7;
  st.rho = 1.3;
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, NULL), DPD_OK);
  assert_int_equal(dpd_schedule_create(&scfg, &sch, NULL), DPD_OK);
  dpd_linreg_sim_config sc = dpd_linreg_sim_config_init(&st);
  sc.seed = 5;
  sc.threads = 1;
  assert_int_equal(dpd__linreg_audit_run(p, sch, &sc, runs, 0, s, s + runs, &info, NULL), DPD_OK);
  assert_rel(info.mu_canary, 1.3, 1e-12);
  sc.threads = 3;
  assert_int_equal(
      dpd__linreg_audit_run(p, sch, &sc, runs, 0, s + 2 * runs, s + 3 * runs, &info, NULL), DPD_OK);
  assert_memory_equal(s, s + 2 * runs, 2 * runs * sizeof *s);
  double m0 = 0.0, m1 = 0.0, v = 0.0;
  for (size_t i = 0; i < runs; i++) {
    m0 += s[i] / (double)runs;
    m1 += s[runs + i] / (double)runs;
  }
  for (size_t i = 0; i < runs; i++) {
    v += (s[i] - m0) * (s[i] - m0) / (double)(runs - 1);
  }
  const double C = 0.7 * sqrt(12.0);
  /* means differ by 2 C eta_{n-1} up to sampling (sd of the difference 2 C sigma sqrt(2/runs)) */
  assert_abs(m1 - m0, 2.0 * C * info.eta_last, 4.0 * 2.0 * C * info.sigma_last * sqrt(2.0 / runs));
  assert_rel(sqrt(v), 2.0 * C * info.sigma_last, 0.15);
  free(s);
  dpd_schedule_free(sch);
  dpd_linreg_problem_free(p);
}

int main(void) {
  gsl_set_error_handler_off();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(clopper_pearson_matches_known_values),
      cmocka_unit_test(clopper_pearson_is_finite_where_gsl_inverse_fails),
      cmocka_unit_test(epsilon_and_mu_of_rates_by_hand),
      cmocka_unit_test(lower_bounds_hold_at_their_confidence),
      cmocka_unit_test(lower_bounds_approach_the_truth_with_many_runs),
      cmocka_unit_test(runs_needed_reaches_the_target),
      cmocka_unit_test(bad_input_names_the_key),
      cmocka_unit_test(linreg_audit_is_a_gaussian_mechanism_of_mu_rho),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
