/* Unit tests for the reconstruction attack on random features (rf_reconstruct.h): the
 * closed-form gradient of the loss against central differences, the attack recovering a small
 * training set from theta* at p >> n d, the matching's arithmetic, and the argument checks.
 * SPDX-License-Identifier: MIT */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "dpdyn/rf_reconstruct.h"
#include "dpdyn/rf_sim.h"
#include "dpdyn/rng.h"

/* A problem on the sphere (the attack's data model) with theta* = Phi^+ y. */
static dpd_rf_problem *problem_make(size_t n, size_t d, size_t p, dpd_rf_activation act,
                                    uint64_t seed, double *theta) {
  dpd_rf_config c = dpd_rf_config_default();
  dpd_rf_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  c.n = n;
  c.d = d;
  c.p = p;
  c.n_test = 1;
  c.input = DPD_RF_INPUT_SPHERE;
  c.target = DPD_RF_TARGET_SIGN;
  c.activation = act;
  c.seed = seed;
  assert_int_equal(dpd_rf_problem_create(&c, &pr, &err), DPD_OK);
  assert_int_equal(dpd_rf_theta_star_get(pr, -1.0, theta, NULL, NULL, &err), DPD_OK);
  return pr;
}

/* The training inputs of the problem made by problem_make (regenerated from its streams). */
static void inputs_of(uint64_t seed, size_t n, size_t d, double *X) {
  dpd_rf_config c = dpd_rf_config_default();
  c.n = n;
  c.d = d;
  c.input = DPD_RF_INPUT_SPHERE;
  c.seed = seed;
  assert_int_equal(dpd_rf_reconstruct_inputs_get(&c, X, NULL), DPD_OK);
}

/* dL/dX against (L(X + h e) - L(X - h e)) / 2h at a random X, for the smooth activations, in
 * every coordinate: the difference of a wrong gradient (a sign, a factor 2, a missing phi') is
 * O(|grad|), far above the tolerance 1e-5 |grad|_inf. */
static void gradient_matches_central_differences(void **state) {
  const size_t n = 3, d = 4, p = 50, nd = n * d;
  const dpd_rf_activation acts[] = {DPD_RF_ACT_TANH, DPD_RF_ACT_HERMITE13};
  (void)state;
  for (size_t a = 0; a < 2; a++) {
    double *theta = malloc(p * sizeof *theta), X[12], g[12];
    dpd_rf_problem *pr = problem_make(n, d, p, acts[a], 7, theta);
    dpd_rf_features f = {pr->V, p, d, acts[a]};
    dpd_rf_reconstruct_work *w = NULL;
    dpd_err err;
    dpd_rng rng;
    assert_int_equal(dpd_rf_reconstruct_work_create(&f, n, 1e-6, &w, &err), DPD_OK);
    dpd_rng_init(&rng, 2385, 0);
    dpd_rng_gaussian_fill(&rng, X, nd);
    const double L = dpd_rf_reconstruct_loss_eval(w, theta, X, g, NULL);
    assert_true(L > 0.01 && L < 1.0);
    double gmax = 0.0;
    for (size_t k = 0; k < nd; k++) {
      gmax = fmax(gmax, fabs(g[k]));
    }
    for (size_t k = 0; k < nd; k++) {
      const double h = 1e-5, x0 = X[k];
      X[k] = x0 + h;
      const double up = dpd_rf_reconstruct_loss_eval(w, theta, X, NULL, NULL);
      X[k] = x0 - h;
      const double down = dpd_rf_reconstruct_loss_eval(w, theta, X, NULL, NULL);
      X[k] = x0;
      assert_abs(g[k], (up - down) / (2.0 * h), 1e-5 * gmax);
    }
    dpd_rf_reconstruct_work_free(w);
    dpd_rf_problem_free(pr);
    free(theta);
  }
}

/* At the training inputs theta* lies in the span of their features: the loss is the ridge's
 * O(lambda) alone, while a random X leaves most of theta outside. */
static void loss_vanishes_at_the_training_inputs(void **state) {
  const size_t n = 4, d = 5, p = 400;
  double *theta = malloc(p * sizeof *theta), X[20], res;
  dpd_rf_problem *pr = problem_make(n, d, p, DPD_RF_ACT_TANH, 3, theta);
  dpd_rf_features f = {pr->V, p, d, DPD_RF_ACT_TANH};
  dpd_rf_reconstruct_work *w = NULL;
  (void)state;
  inputs_of(3, n, d, X);
  for (size_t i = 0; i < n; i++) { /* the regenerated inputs are the problem's */
    for (size_t j = 0; j < p; j += 37) {
      double z = 0.0;
      for (size_t k = 0; k < d; k++) {
        z += pr->V[j * d + k] * X[i * d + k];
      }
      assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_TANH, z), pr->phi[i * p + j], 1e-13);
    }
  }
  assert_int_equal(dpd_rf_reconstruct_work_create(&f, n, 1e-12, &w, NULL), DPD_OK);
  assert_true(dpd_rf_reconstruct_loss_eval(w, theta, X, NULL, &res) < 1e-9);
  assert_true(res < 1e-9);
  for (size_t k = 0; k < d; k++) { /* an odd activation: -x_1 spans the same features */
    X[k] = -X[k];
  }
  assert_true(dpd_rf_reconstruct_loss_eval(w, theta, X, NULL, NULL) < 1e-9);
  dpd_rf_reconstruct_work_free(w);
  dpd_rf_problem_free(pr);
  free(theta);
}

/* The attack of the slides at p = 20 n d, no privacy, a fixed seed: every training point is
 * recovered at |cosine| >= 0.9 (the issue asks for >= 90 %). A wrong gradient fails it (checked:
 * dL/dPhi with its sign flipped recovers 0 of 4 points, with phi' dropped 2 of 4). */
static void attack_recovers_a_small_training_set(void **state) {
  const size_t n = 4, d = 5, p = 400;
  double *theta = malloc(p * sizeof *theta), X[20], Xh[20];
  dpd_rf_problem *pr = problem_make(n, d, p, DPD_RF_ACT_HERMITE13, 11, theta);
  dpd_rf_features f = {pr->V, p, d, DPD_RF_ACT_HERMITE13};
  dpd_rf_reconstruct_config cfg = dpd_rf_reconstruct_config_default();
  dpd_rf_reconstruct_info info;
  dpd_rf_reconstruct_score sc;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  inputs_of(11, n, d, X);
  cfg.seed = 11;
  assert_int_equal(dpd_rf_reconstruct_run(&f, theta, n, &cfg, Xh, &info, &err), DPD_OK);
  assert_int_equal(dpd_rf_reconstruct_score_eval(Xh, n, X, n, d, 0.9, &sc, NULL, NULL, &err),
                   DPD_OK);
  print_message("seed 11: loss %.3g, residual %.3g, restarts %zu, iterations %zu, fraction %g, "
                "matched %g, error %.3g, flips %g\n",
                info.loss, info.residual, info.restarts_run, info.iterations,
                sc.reconstructed_fraction, sc.matched_fraction, sc.matching_error,
                sc.sign_flip_fraction);
  assert_true(sc.reconstructed_fraction >= 0.9);
  assert_true(sc.matching_error < 0.2);
  assert_true(info.loss < 1e-4);
  for (size_t k = 0; k < n * d; k++) { /* every row on the sphere */
    if (k % d == 0) {
      double q = 0.0;
      for (size_t c = 0; c < d; c++) {
        q += Xh[k + c] * Xh[k + c];
      }
      assert_rel(q, (double)d, 1e-12);
    }
  }
  /* the same bits a second time */
  double Xh2[20];
  dpd_rf_reconstruct_info info2;
  assert_int_equal(dpd_rf_reconstruct_run(&f, theta, n, &cfg, Xh2, &info2, &err), DPD_OK);
  assert_memory_equal(Xh, Xh2, sizeof Xh);
  dpd_rf_problem_free(pr);
  free(theta);
}

/* The score's arithmetic on hand-made rows: x_hat_0 = -x_1 (a sign flip), x_hat_1 = x_0 tilted,
 * x_hat_2 a duplicate of x_0. */
static void score_counts_fractions_flips_and_duplicates(void **state) {
  const double X[] = {2.385, 0.0, 0.0, 0.0, 1.7, 0.0, 0.0, 0.0, 3.1};
  const double Xh[] = {0.0, -1.7, 0.0, 2.385, 0.1, 0.0, 2.385, 0.0, 0.05};
  dpd_rf_reconstruct_score sc;
  size_t match[3];
  double cosine[3];
  (void)state;
  assert_int_equal(dpd_rf_reconstruct_score_eval(Xh, 3, X, 3, 3, 0.9, &sc, match, cosine, NULL),
                   DPD_OK);
  assert_abs(sc.reconstructed_fraction, 2.0 / 3.0, 1e-15);
  assert_abs(sc.matched_fraction, 2.0 / 3.0, 1e-15);
  assert_abs(sc.sign_flip_fraction, 0.5, 1e-15);
  assert_int_equal(match[1], 0);
  assert_true(match[0] == 1 || match[0] == 2);
  assert_abs(cosine[1], -1.0, 1e-15);
  assert_true(fabs(cosine[2]) < 0.1); /* x_2 gets the leftover row */
  /* errors: 0 for x_1, |(0, 0.1, 0)| / sqrt 3 or |(0, 0, .05)| for x_0, |x_hat - x_2| for x_2 */
  assert_true(sc.matching_error > 0.5 && sc.matching_error < 2.0);
}

static void rejects_invalid_arguments(void **state) {
  const size_t n = 2, d = 3, p = 10;
  double theta[10] = {0}, X[6] = {1, 2, 3, 4, 5, 6};
  double V[30] = {0.3};
  dpd_rf_features f = {V, p, d, DPD_RF_ACT_TANH};
  dpd_rf_reconstruct_config cfg = dpd_rf_reconstruct_config_default();
  dpd_rf_reconstruct_info info;
  dpd_rf_reconstruct_work *w = NULL;
  dpd_rf_reconstruct_score sc;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_reconstruct_run(&f, theta, n, &cfg, X, &info, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'theta'"));
  theta[3] = 1.0;
  cfg.restarts = 0;
  assert_int_equal(dpd_rf_reconstruct_run(&f, theta, n, &cfg, X, &info, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'restarts'"));
  cfg = dpd_rf_reconstruct_config_default();
  cfg.line_tol = 1.0;
  assert_int_equal(dpd_rf_reconstruct_run(&f, theta, n, &cfg, X, &info, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'line_tol'"));
  assert_int_equal(dpd_rf_reconstruct_work_create(&f, n, 0.0, &w, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'ridge'"));
  f.activation = (dpd_rf_activation)99;
  assert_int_equal(dpd_rf_reconstruct_work_create(&f, n, 1e-10, &w, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'activation'"));
  assert_null(w);
  assert_int_equal(dpd_rf_reconstruct_score_eval(X, 2, X, 2, 3, 1.5, &sc, NULL, NULL, &err),
                   DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'threshold'"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gradient_matches_central_differences),
      cmocka_unit_test(loss_vanishes_at_the_training_inputs),
      cmocka_unit_test(attack_recovers_a_small_training_set),
      cmocka_unit_test(score_counts_fractions_flips_and_duplicates),
      cmocka_unit_test(rejects_invalid_arguments),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
