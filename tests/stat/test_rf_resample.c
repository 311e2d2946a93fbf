/* Statistical test: what the replicates of random-features DP-GD redraw (rf_sim.h,
 * dpd_rf_sim_resample_run; docs/rf.md, "Replicates: what varies").
 * SPDX-License-Identifier: MIT
 *
 * (1) The reported standard error against the spread of independent runs. Run A: one run of
 *     K = 400 replicates with resample = all (replicate r: its own data set, features, test set
 *     and noise). Runs B: K independent single-replicate runs, seeds 1..K (each the default draw
 *     0 of its seed with noise stream (seed, 0): what a user gets from K runs with different
 *     `seed`). Both are samples of the final test risk of one law, so the reported variance
 *     v_A = K SE_A^2 and the sample variance v_B of the B values estimate the same variance.
 *     Criterion: z = ln(v_A / v_B) / sqrt(V_A + V_B) within +-3.5, where V = 2/(K-1) + kappa/K is
 *     the variance of ln s^2 (delta method: Var s^2 = sigma^4 (2/(K-1) + kappa/K), kappa the excess
 *     kurtosis, estimated from the pooled, centred samples; with kappa = 0 this is the normal
 *     approximation of ln F(K-1, K-1)); also the means agree within 3.5 standard errors of their
 *     difference.
 *     Negative control (the test can fail): resample = noise (one data set, the noise redrawn),
 *     the behaviour before the key existed, on this setting where the data's variance dominates:
 *     its reported variance must be rejected, z < -3.5.
 *     Setting: d = 10, n = 40, n_test = 60, p = 120, tanh, sign target, zeta = 0.3, clip = 0.5
 *     (clipping active, as in the seed's experiment), sigma = 0.1, eta = 1/p, T = 50.
 *     Measured: reported SE 0.00569 against 0.00545 from the independent runs (ratio 1.04,
 *     z = 0.78), means 0.5940 and 0.5944; resample = noise: SE 0.00138, ratio 0.25, z = -27.
 * (2) The theory under resample = all (what `dpdyn compare` reports): with clipping inactive the
 *     discrete OU test risk of draw r (ou.h, computed on that draw's Phi, y and test set) is the
 *     exact expectation over the noise of replicate r's final test risk. The paired differences
 *     D_r = R_sim,r - R_ou,r are independent with mean 0: |mean D| <= 3.5 SE(D) over K2 = 200
 *     replicates. Negative control: the OU theory with sigma * 1.2 (noise part * 1.44) must be
 *     rejected. Setting: d = 10, n = 60, n_test = 80, p = 150, linear target, zeta = 0.5,
 *     clip = 40 (checked: no sample clipped in any replicate), sigma = 0.004, T = 60.
 *     Measured: paired gap -0.0030 +- 0.0017 (z = -1.73; with 1000 replicates of seed 29:
 *     +1.57), sigma * 1.2: z = -6.5; the unpaired SE of DP-GD alone is 0.0043 (the data's
 *     variance, common to both sides, cancels in the pairs).
 *
 * Fixed seeds (A: 17; B: 1..K; control: 17; (2): 23); one thread (thread-count invariance is
 * tested in unit/test_rf_sim and cli/test_regression). Timing (Release, 2 shared cores): 2 s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/dpd.h"

enum { K = 400, K2 = 200 };

static dpd_rf_config setting1(void) {
  dpd_rf_config pc = dpd_rf_config_default();
  pc.d = 10;
  pc.n = 40;
  pc.n_test = 60;
  pc.p = 120;
  pc.target = DPD_RF_TARGET_SIGN;
  pc.activation = DPD_RF_ACT_TANH;
  pc.zeta = 0.3;
  return pc;
}

static dpd_rf_sim_config sim1(void) {
  dpd_rf_sim_config sc = dpd_rf_sim_config_default();
  sc.T = 50;
  sc.eta = 1.0 / 120.0;
  sc.clip = 0.5;
  sc.sigma = 0.1;
  sc.grid = 2;
  sc.threads = 1;
  return sc;
}

/* A run as `dpdyn simulate --model=rf` makes it: the problem's seed is the run's seed. */
static dpd_rf_sim_result *run(const dpd_rf_config *pc0, const dpd_rf_sim_config *sc,
                              dpd_rf_resample mode, dpd_rf_draw_fn fn, void *user) {
  dpd_rf_sim_result *res = NULL;
  dpd_rf_config pc = *pc0;
  dpd_err err;
  dpd_err_reset(&err);
  pc.seed = sc->seed;
  int st = dpd_rf_sim_resample_run(&pc, sc, mode, fn, user, &res, &err);
  if (st != DPD_OK) {
    print_error("resample run (%s, seed %llu): %s\n", dpd_rf_resample_name(mode),
                (unsigned long long)sc->seed, err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return res;
}

/* Sample mean, variance and the fourth central moment of x[0..m). */
static void moments(const double *x, size_t m, double *mean, double *var, double *m4) {
  double s = 0.0, s2 = 0.0, s4 = 0.0;
  for (size_t i = 0; i < m; i++) {
    s += x[i];
  }
  *mean = s / (double)m;
  for (size_t i = 0; i < m; i++) {
    const double e = x[i] - *mean;
    s2 += e * e;
    s4 += e * e * e * e;
  }
  *var = s2 / (double)(m - 1);
  *m4 = s4 / (double)m;
}

/* z of ln(va / vb) for two samples of size m each, with the pooled excess kurtosis. */
static double log_ratio_z(const double *a, const double *b, size_t m, double *kappa_out) {
  double ma, va, m4a, mb, vb, m4b;
  moments(a, m, &ma, &va, &m4a);
  moments(b, m, &mb, &vb, &m4b);
  /* pooled excess kurtosis of the standardised samples (floored at -2 + 2/(m-1) so V > 0) */
  const double kappa = fmax(0.5 * (m4a / (va * va) + m4b / (vb * vb)) - 3.0, -1.0);
  const double V = 2.0 / (double)(m - 1) + kappa / (double)m;
  *kappa_out = kappa;
  return log(va / vb) / sqrt(2.0 * V);
}

static void reported_se_matches_the_spread_of_independent_runs(void **state) {
  (void)state;
  const dpd_rf_config pc = setting1();
  dpd_rf_sim_config sc = sim1();
  const size_t g = sc.grid;
  double a[K], b[K], c[K], kappa, ma, va, m4, mb, vb;

  sc.seeds = K;
  sc.seed = 17;
  dpd_rf_sim_result *A = run(&pc, &sc, DPD_RF_RESAMPLE_ALL, NULL, NULL);
  dpd_rf_sim_result *C = run(&pc, &sc, DPD_RF_RESAMPLE_NOISE, NULL, NULL);
  for (size_t r = 0; r < K; r++) {
    a[r] = A->test_replicates[r * g + g - 1];
    c[r] = C->test_replicates[r * g + g - 1];
  }
  sc.seeds = 1;
  for (size_t i = 0; i < K; i++) {
    sc.seed = 1 + i;
    dpd_rf_sim_result *B = run(&pc, &sc, DPD_RF_RESAMPLE_ALL, NULL, NULL);
    b[i] = B->test_mean[g - 1];
    dpd_rf_sim_result_free(B);
  }
  moments(b, K, &mb, &vb, &m4);
  moments(a, K, &ma, &va, &m4);
  /* The reported SE is the sample SD over replicates / sqrt(K). */
  assert_rel(A->test_se[g - 1], sqrt(va / K), 1e-12);
  const double z = log_ratio_z(a, b, K, &kappa);
  const double zm = (ma - mb) / sqrt(va / K + vb / K);
  printf("# resample=all: reported SE %.5f, independent runs SD/sqrt(K) %.5f, ratio %.3f, "
         "z = %.2f (kurtosis %.2f); means %.4f vs %.4f, z = %.2f\n",
         A->test_se[g - 1], sqrt(vb / K), A->test_se[g - 1] / sqrt(vb / K), z, kappa, ma, mb, zm);
  assert_true(fabs(z) <= 3.5);
  assert_true(fabs(zm) <= 3.5);

  /* Negative control: one data set, the noise redrawn. */
  double kc, mc, vc;
  const double zc = log_ratio_z(c, b, K, &kc);
  moments(c, K, &mc, &vc, &m4);
  printf("# resample=noise: reported SE %.5f, ratio to the independent runs' %.3f, z = %.2f "
         "(kurtosis %.2f): rejected\n",
         C->test_se[g - 1], C->test_se[g - 1] / sqrt(vb / K), zc, kc);
  assert_true(zc < -3.5);
  dpd_rf_sim_result_free(A);
  dpd_rf_sim_result_free(C);
}

/* (2) The OU theory of every draw, at the last step, for sigma and sigma * 1.2. */
typedef struct {
  double sigma, clip_norm, eta;
  size_t T;
  double ou[K2], ou_hi[K2];
} ou_job;

static int ou_of_draw(void *user, size_t rep, const dpd_rf_problem *pr, dpd_err *err) {
  ou_job *job = user;
  dpd_ou *ou = NULL;
  dpd_ou_risk risk;
  int st = dpd_ou_create(NULL, pr->phi, pr->n, pr->p, pr->y, &ou, err);
  if (st < 0) {
    return st;
  }
  dpd_ou_params par = {
      .eta = job->eta, .clip = job->clip_norm, .sigma = job->sigma, .time = DPD_OU_DISCRETE};
  st = dpd_ou_risk_eval(ou, &par, pr->phi_test, pr->n_test, pr->y_test, &job->T, 1, &risk, err);
  job->ou[rep] = risk.risk;
  par.sigma = 1.2 * job->sigma;
  if (st >= 0) {
    st = dpd_ou_risk_eval(ou, &par, pr->phi_test, pr->n_test, pr->y_test, &job->T, 1, &risk, err);
  }
  job->ou_hi[rep] = risk.risk;
  dpd_ou_free(ou);
  return st;
}

static void paired_gap_to_the_ou_theory_of_each_draw(void **state) {
  (void)state;
  dpd_rf_config pc = dpd_rf_config_default();
  pc.d = 10;
  pc.n = 60;
  pc.n_test = 80;
  pc.p = 150;
  pc.target = DPD_RF_TARGET_LINEAR;
  pc.zeta = 0.5;
  dpd_rf_sim_config sc = dpd_rf_sim_config_default();
  sc.T = 60;
  sc.eta = 1.0 / 150.0;
  sc.clip = 40.0;
  sc.sigma = 0.004;
  sc.grid = 2;
  sc.seeds = K2;
  sc.seed = 23;
  sc.threads = 1;
  ou_job job = {.sigma = sc.sigma, .clip_norm = sc.clip * sqrt(150.0), .eta = sc.eta, .T = sc.T};
  dpd_rf_sim_result *S = run(&pc, &sc, DPD_RF_RESAMPLE_ALL, ou_of_draw, &job);
  assert_true(S->clip_fraction_total == 0.0); /* the OU theory is exact only without clipping */
  double d[K2], dh[K2], md, vd, mh, vh, m4, ms = 0.0, mo = 0.0;
  for (size_t r = 0; r < K2; r++) {
    const double x = S->test_replicates[r * 2 + 1];
    d[r] = x - job.ou[r];
    dh[r] = x - job.ou_hi[r];
    ms += x / K2;
    mo += job.ou[r] / K2;
  }
  moments(d, K2, &md, &vd, &m4);
  moments(dh, K2, &mh, &vh, &m4);
  const double z = md / sqrt(vd / K2), zh = mh / sqrt(vh / K2);
  printf("# compare under resample=all: DP-GD %.4f +- %.4f, mean OU of the draws %.4f; paired gap "
         "%.5f +- %.5f (z = %.2f); OU with sigma * 1.2: z = %.2f\n",
         ms, S->test_se[1], mo, md, sqrt(vd / K2), z, zh);
  assert_true(fabs(z) <= 3.5);
  assert_true(fabs(zh) > 3.5);
  dpd_rf_sim_result_free(S);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reported_se_matches_the_spread_of_independent_runs),
      cmocka_unit_test(paired_gap_to_the_ou_theory_of_each_draw),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
