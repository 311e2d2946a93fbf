/* The science of a model=rf run (src/rf/rf_run_impl.h): the theory of each draw, its summaries
 * over the draws, the memory model and the privacy plan.
 * SPDX-License-Identifier: MIT
 *
 * The per-draw theory is checked against direct calls of ou.h and rf_sim.h on the same problem
 * (bit for bit), the summaries against naive means and standard errors over the draws, the
 * paired SE against the sample SD of the differences, the polls and the stop, the stability
 * error; the memory model by the key it names; the privacy plan by its closed forms. */
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/ou.h"
#include "dpdyn/rf_privacy.h"
#include "rf/rf_run_impl.h"

#define SEED UINT64_C(2385)

static dpd_rf_config small_problem(void) {
  dpd_rf_config pc = dpd_rf_config_default();
  pc.d = 6;
  pc.n = 24;
  pc.n_test = 17;
  pc.p = 37;
  pc.zeta = 0.31;
  pc.seed = SEED;
  return pc;
}

static dpd_rf_sim_config small_dpgd(void) {
  dpd_rf_sim_config sc = dpd_rf_sim_config_default();
  sc.eta = 0.0385;
  sc.T = 23;
  sc.clip = 0.9;
  sc.sigma = 0.7;
  sc.seeds = 5;
  sc.seed = SEED;
  sc.grid = 6;
  sc.threads = 1;
  return sc;
}

static dpd__rf_draws_config draws_config(const dpd_rf_sim_config *sc, size_t draws) {
  dpd__rf_draws_config c = {.theta_star = 1,
                            .ou = 1,
                            .eta = sc->eta,
                            .clip = sc->clip,
                            .sigma = sc->sigma,
                            .T = sc->T,
                            .g = sc->grid,
                            .draws = draws};
  return c;
}

typedef struct {
  size_t calls, stop_at;
} polls;

static int count_polls(void *user, const char *what, size_t done, size_t total) {
  polls *p = user;
  assert_string_equal(what, "problem phases");
  assert_true(done <= total);
  p->calls++;
  return p->stop_at != 0 && done >= p->stop_at;
}

static void one_draw_is_the_ou_theory_of_the_problem(void **state) {
  const dpd_rf_config pc = small_problem();
  const dpd_rf_sim_config sc = small_dpgd();
  dpd__rf_draws_config cfg = draws_config(&sc, 1);
  dpd__rf_draws *w;
  dpd_rf_sim_result *res;
  dpd_rf_problem *pr;
  dpd_ou *ou;
  dpd_ou_test *ot;
  dpd_ou_risk risk[6];
  double *theta = malloc(pc.p * sizeof *theta), train, test;
  polls p = {0, 0};
  dpd_ou_params par = {.eta = sc.eta,
                       .clip = sc.clip * sqrt((double)pc.p),
                       .sigma = sc.sigma,
                       .time = DPD_OU_DISCRETE};
  (void)state;
  cfg.progress = count_polls;
  cfg.progress_user = &p;
  assert_int_equal(dpd__rf_draws_create(&cfg, &w, NULL), DPD_OK);
  assert_int_equal(dpd__rf_draws_run(&pc, &sc, DPD_RF_RESAMPLE_NOISE, 0, w, &res, NULL), DPD_OK);
  assert_null(res);
  assert_int_equal(p.calls, DPD__RF_DRAW_POLLS);
  assert_int_equal(dpd_rf_problem_create(&pc, &pr, NULL), DPD_OK);
  assert_int_equal(dpd_ou_create(NULL, pr->phi, pr->n, pr->p, pr->y, &ou, NULL), DPD_OK);
  assert_int_equal(dpd_ou_test_create(ou, pr->phi_test, pr->n_test, pr->y_test, &ot, NULL), DPD_OK);
  assert_int_equal(dpd_ou_test_risk_eval(ot, &par, w->kgrid, 6, risk, NULL), DPD_OK);
  assert_int_equal(w->kgrid[5], sc.T);
  for (size_t j = 0; j < 6; j++) {
    assert_true(w->ou_d[j] == risk[j].risk); /* the same calls: the same bits */
    assert_true(w->ou_bias[j] == risk[j].bias);
    assert_true(w->ou_noise[j] == risk[j].noise);
  }
  assert_int_equal(w->rank[0], dpd_ou_rank_get(ou));
  assert_true(w->a_max[0] >= w->a_min[0] && w->a_min[0] > 0.0);
  assert_true(w->exit_step[0] <= sc.T + 1);
  assert_int_equal(dpd_rf_theta_star_get(pr, -1.0, theta, &train, &test, NULL), DPD_OK);
  assert_true(w->ts_train[0] == train && w->ts_test[0] == test);
  {
    dpd__rf_ou_summary s = {0};
    assert_int_equal(dpd__rf_draws_ou_summary(w, NULL, &s, NULL), DPD_OK);
    assert_null(s.gap_se);
    for (size_t j = 0; j < 6; j++) {
      assert_true(s.risk[j] == risk[j].risk);
      assert_abs(s.risk_se[j], 0.0, 0.0); /* one draw: SE 0 */
    }
    assert_int_equal(s.rank, w->rank[0]);
    dpd__rf_ou_summary_free(&s);
  }
  dpd_ou_test_free(ot);
  dpd_ou_free(ou);
  dpd_rf_problem_free(pr);
  dpd__rf_draws_free(w);
  free(theta);
}

static double mean_of(const double *x, size_t n, size_t stride) {
  double s = 0.0;
  for (size_t r = 0; r < n; r++) {
    s += x[r * stride];
  }
  return s / (double)n;
}

static double se_of(const double *x, size_t n, size_t stride) {
  const double m = mean_of(x, n, stride);
  double q = 0.0;
  for (size_t r = 0; r < n; r++) {
    q += (x[r * stride] - m) * (x[r * stride] - m);
  }
  return sqrt(q / (double)(n - 1) / (double)n);
}

static void draws_per_replicate_summarise_and_pair(void **state) {
  const dpd_rf_config pc = small_problem();
  const dpd_rf_sim_config sc = small_dpgd();
  const size_t S = sc.seeds, g = sc.grid;
  dpd__rf_draws_config cfg = draws_config(&sc, S);
  dpd__rf_draws *w;
  dpd_rf_sim_result *res;
  dpd__rf_ou_summary s = {0};
  double *diff = malloc(S * g * sizeof *diff);
  (void)state;
  assert_int_equal(dpd__rf_draws_create(&cfg, &w, NULL), DPD_OK);
  assert_int_equal(dpd__rf_draws_run(&pc, &sc, DPD_RF_RESAMPLE_ALL, 1, w, &res, NULL), DPD_OK);
  assert_int_equal(dpd__rf_draws_ou_summary(w, res->test_replicates, &s, NULL), DPD_OK);
  for (size_t k = 0; k < S * g; k++) {
    diff[k] = res->test_replicates[k] - w->ou_d[k];
  }
  for (size_t j = 0; j < g; j++) {
    assert_rel(s.risk[j], mean_of(w->ou_d + j, S, g), 1e-13);
    assert_rel(s.risk_continuous[j], mean_of(w->ou_c + j, S, g), 1e-13);
    if (j > 0) { /* at step 0 every draw has risk ||y_test||^2 / n_test: spread, no noise */
      assert_rel(s.risk_se[j], se_of(w->ou_d + j, S, g), 1e-10);
      assert_rel(s.gap_se[j], se_of(diff + j, S, g), 1e-10);
      assert_true(s.gap_se[j] > 0.0);
    }
  }
  for (size_t r = 0; r < S; r++) {
    assert_true(s.rank <= w->rank[r] && s.exit_step <= w->exit_step[r]);
    assert_true(s.a_max >= w->a_max[r] && s.a_min <= w->a_min[r]);
  }
  {
    double m, se;
    dpd__rf_draws_mean_se(w->ts_test, S, 1, &m, &se);
    assert_rel(m, mean_of(w->ts_test, S, 1), 1e-13);
    assert_rel(se, se_of(w->ts_test, S, 1), 1e-10);
  }
  dpd__rf_ou_summary_free(&s);
  dpd_rf_sim_result_free(res);
  dpd__rf_draws_free(w);
  free(diff);
}

static void unstable_step_and_stop_are_errors(void **state) {
  const dpd_rf_config pc = small_problem();
  dpd_rf_sim_config sc = small_dpgd();
  dpd__rf_draws_config cfg;
  dpd__rf_draws *w;
  dpd_rf_sim_result *res;
  polls p = {0, 6}; /* stop in the second draw */
  dpd_err err;
  (void)state;
  sc.eta = 50.0; /* above 2 / a_max */
  cfg = draws_config(&sc, sc.seeds);
  assert_int_equal(dpd__rf_draws_create(&cfg, &w, NULL), DPD_OK);
  assert_int_equal(dpd__rf_draws_run(&pc, &sc, DPD_RF_RESAMPLE_DATA, 1, w, &res, &err),
                   DPD_ENONFINITE);
  assert_non_null(strstr(err.reason, "stability limit"));
  assert_non_null(strstr(err.reason, "data draw 0"));
  dpd__rf_draws_free(w);
  sc = small_dpgd();
  cfg = draws_config(&sc, sc.seeds);
  cfg.progress = count_polls;
  cfg.progress_user = &p;
  assert_int_equal(dpd__rf_draws_create(&cfg, &w, NULL), DPD_OK);
  assert_int_equal(dpd__rf_draws_run(&pc, &sc, DPD_RF_RESAMPLE_ALL, 1, w, &res, &err),
                   DPD_ECANCELLED);
  assert_int_equal(p.calls, 6);
  dpd__rf_draws_free(w);
}

static void memory_model_names_the_dominant_key(void **state) {
  dpd_rf_config pc = small_problem();
  dpd_rf_sim_config sc = small_dpgd();
  const char *driver;
  double b;
  (void)state;
  pc.p = 400000; /* Phi */
  b = dpd__rf_memory_eval(&pc, &sc, DPD_RF_RESAMPLE_ALL, 1, 1, 0.0, &driver);
  assert_string_equal(driver, "p");
  assert_true(b > 8.0 * (double)pc.n * (double)pc.p);
  pc = small_problem();
  pc.n = 30000; /* the OU Gram */
  dpd__rf_memory_eval(&pc, &sc, DPD_RF_RESAMPLE_NOISE, 0, 1, 0.0, &driver);
  assert_string_equal(driver, "n");
  pc = small_problem();
  pc.d = 3000000; /* the inputs: n x d against p x d of the weights, n > p */
  pc.n = 400;
  dpd__rf_memory_eval(&pc, &sc, DPD_RF_RESAMPLE_NOISE, 1, 0, 0.0, &driver);
  assert_string_equal(driver, "d");
  pc = small_problem();
  sc.T = 50000000; /* the clipped fractions of every step (one replicate: else seeds x steps) */
  sc.seeds = 1;
  dpd__rf_memory_eval(&pc, &sc, DPD_RF_RESAMPLE_NOISE, 1, 0, 0.0, &driver);
  assert_string_equal(driver, "steps");
  sc = small_dpgd();
  sc.seeds = 1000000; /* the replicates' curves */
  b = dpd__rf_memory_eval(&pc, &sc, DPD_RF_RESAMPLE_ALL, 1, 1, 0.0, &driver);
  assert_string_equal(driver, "seeds");
  /* the per-replicate tables count */
  assert_true(dpd__rf_memory_eval(&pc, &sc, DPD_RF_RESAMPLE_ALL, 1, 1, 1e9, &driver) == b + 1e9);
}

static void privacy_plan_from_each_budget(void **state) {
  const double eta = 0.0025, delta = 1e-4;
  const size_t T = 400;
  dpd__rf_privacy_plan pl;
  dpd_err err;
  double eps;
  (void)state;
  assert_int_equal(
      dpd__rf_privacy_plan_sigma(eta, T, delta, DPD__RF_BUDGET_MU, 1.385, 0, &pl, NULL), DPD_OK);
  assert_rel(pl.sigma, sqrt(eta * (double)T) / 1.385, 1e-15);
  assert_int_equal(
      dpd__rf_privacy_plan_sigma(eta, T, delta, DPD__RF_BUDGET_ZCDP, 0.5, 0, &pl, NULL), DPD_OK);
  assert_rel(pl.sigma, sqrt(eta * (double)T), 1e-15); /* zCDP 0.5 = 1-GDP */
  assert_int_equal(dpd__rf_privacy_plan_delivered(eta, T, delta, &pl, NULL), DPD_OK);
  assert_int_equal(dpd_rf_privacy_eps_delivered(eta, T, pl.sigma, delta, &eps, NULL), DPD_OK);
  assert_true(pl.epsilon == eps && pl.epsilon_exact == eps && pl.sigma_exact == pl.sigma);
  assert_int_equal(
      dpd__rf_privacy_plan_sigma(eta, T, delta, DPD__RF_BUDGET_ZCDP, 0.0, 0, &pl, &err),
      DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'zcdp': 0"));
  assert_int_equal(
      dpd__rf_privacy_plan_sigma(eta, T, delta, DPD__RF_BUDGET_EPSILON, 2.385, 1, &pl, NULL),
      DPD_OK);
  assert_true(pl.sigma == pl.sigma_moments && pl.sigma_moments > pl.sigma_exact);
  assert_int_equal(dpd__rf_privacy_plan_delivered(eta, T, delta, &pl, NULL), DPD_OK);
  assert_rel(pl.epsilon, 2.385, 0.0); /* the target stays; the exact one is smaller */
  assert_true(pl.epsilon_exact < 2.385);
  assert_int_equal(
      dpd__rf_privacy_plan_sigma(eta, T, delta, DPD__RF_BUDGET_EPSILON, 100.0, 1, &pl, &err),
      DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'epsilon': 100 with calibration = moments"));
  assert_int_equal(
      dpd__rf_privacy_plan_sigma(eta, T, delta, DPD__RF_BUDGET_NONE, 0.0, 0, &pl, NULL), DPD_OK);
  assert_int_equal(dpd__rf_privacy_plan_delivered(eta, T, delta, &pl, NULL), DPD_OK);
  assert_true(pl.sigma == 0.0 && isinf(pl.epsilon) && isnan(pl.sigma_moments));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_draw_is_the_ou_theory_of_the_problem),
      cmocka_unit_test(draws_per_replicate_summarise_and_pair),
      cmocka_unit_test(unstable_step_and_stop_are_errors),
      cmocka_unit_test(memory_model_names_the_dominant_key),
      cmocka_unit_test(privacy_plan_from_each_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
