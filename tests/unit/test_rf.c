/* Tests of the random-features problem (include/dpdyn/rf.h, docs/math.md §2.1).
 * SPDX-License-Identifier: MIT
 *
 * Feature statistics: given V, the pre-activation of feature j is s_j g with s_j = |v_j| and
 * g ~ N(0, 1), so E phi_ij = E phi(s_j g) and E phi_ij^2 = E phi(s_j g)^2, computed here by
 * composite Simpson quadrature against the Gaussian density on [-12, 12] (the kink of ReLU
 * is at a grid node). Rows are independent given V, so the row averages
 * a_i = (1/p) sum_j phi_ij give the standard error of their mean. Seeds are fixed. */
#include <cblas.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/rf.h"

#define SEED UINT64_C(2385)
#define PI 3.14159265358979323846
#define QUAD_HALF 6000 /* Simpson intervals on each side of 0 */
#define QUAD_RANGE 12.0

static dpd_rf_problem *make(const dpd_rf_config *cfg) {
  dpd_rf_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_rf_problem_create(cfg, &pr, &err);
  if (st != DPD_OK) {
    print_error("dpd_rf_problem_create: %s (seed %llu)\n", err.reason,
                (unsigned long long)cfg->seed);
  }
  assert_int_equal(st, DPD_OK);
  assert_non_null(pr);
  return pr;
}

/* E phi(s g)^k, k = 1, 2, by Simpson's rule. */
static double gauss_moment(dpd_rf_activation act, double s, int k) {
  const size_t m = 2 * QUAD_HALF;
  const double h = 2.0 * QUAD_RANGE / (double)m;
  double sum = 0.0;
  for (size_t i = 0; i <= m; i++) {
    double z = -QUAD_RANGE + (double)i * h;
    double f = dpd_rf_activation_eval(act, s * z);
    double v = (k == 1 ? f : f * f) * exp(-0.5 * z * z);
    double wgt = (i == 0 || i == m) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    sum += wgt * v;
  }
  return sum * h / 3.0 / sqrt(2.0 * PI);
}

static void mean_se(const double *x, size_t m, double *mean, double *se) {
  double s = 0.0;
  for (size_t i = 0; i < m; i++) {
    s += x[i];
  }
  double mu = s / (double)m, v = 0.0;
  for (size_t i = 0; i < m; i++) {
    v += (x[i] - mu) * (x[i] - mu);
  }
  *mean = mu;
  *se = sqrt(v / (double)(m - 1) / (double)m);
}

static void check_activation_moments(dpd_rf_activation act) {
  dpd_rf_config cfg = dpd_rf_config_default();
  cfg.d = 37;
  cfg.n = 3000;
  cfg.n_test = 5;
  cfg.p = 64;
  cfg.activation = act;
  cfg.seed = SEED;
  dpd_rf_problem *pr = make(&cfg);
  const size_t n = pr->n, p = pr->p, d = pr->d;
  double want1 = 0.0, want2 = 0.0;
  for (size_t j = 0; j < p; j++) {
    double s2 = 0.0;
    for (size_t k = 0; k < d; k++) {
      s2 += pr->V[j * d + k] * pr->V[j * d + k];
    }
    want1 += gauss_moment(act, sqrt(s2), 1) / (double)p;
    want2 += gauss_moment(act, sqrt(s2), 2) / (double)p;
  }
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  assert_non_null(a);
  assert_non_null(b);
  for (size_t i = 0; i < n; i++) {
    double s1 = 0.0, s2 = 0.0;
    for (size_t j = 0; j < p; j++) {
      double f = pr->phi[i * p + j];
      s1 += f;
      s2 += f * f;
    }
    a[i] = s1 / (double)p;
    b[i] = s2 / (double)p;
  }
  double m1, se1, m2, se2;
  mean_se(a, n, &m1, &se1);
  mean_se(b, n, &m2, &se2);
  if (!(fabs(m1 - want1) <= 4.0 * se1) || !(fabs(m2 - want2) <= 4.0 * se2)) {
    print_error("%s (seed %llu): mean %.6g want %.6g (se %.3g); second moment %.6g want %.6g "
                "(se %.3g)\n",
                dpd_rf_activation_name(act), (unsigned long long)cfg.seed, m1, want1, se1, m2,
                want2, se2);
    fail();
  }
  if (act == DPD_RF_ACT_RELU_CENTERED) {
    /* Centred at scale 1; the row scales s_j = |v_j| ~ 1 leave a small offset. */
    assert_true(fabs(m1) < 0.03);
  }
  free(a);
  free(b);
  dpd_rf_problem_free(pr);
}

static void activation_moments_match_gaussian_expectations_tanh(void **state) {
  (void)state;
  check_activation_moments(DPD_RF_ACT_TANH);
}

static void activation_moments_match_gaussian_expectations_relu_centered(void **state) {
  (void)state;
  check_activation_moments(DPD_RF_ACT_RELU_CENTERED);
}

static void activation_moments_match_gaussian_expectations_hermite13(void **state) {
  (void)state;
  check_activation_moments(DPD_RF_ACT_HERMITE13);
}

static void activations_have_their_formulas(void **state) {
  (void)state;
  const double z = 0.7385;
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_TANH, z), tanh(z), 0.0);
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_RELU_CENTERED, z), z - 1.0 / sqrt(2.0 * PI), 1e-15);
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_RELU_CENTERED, -z), -1.0 / sqrt(2.0 * PI), 1e-15);
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_HERMITE13, z), z + (z * z * z - 3 * z) / 6.0, 1e-15);
  /* Hermite coefficients mu_0 = 0 and, for the odd ones, mu_2 = 0: E phi(g) = 0. */
  assert_abs(gauss_moment(DPD_RF_ACT_RELU_CENTERED, 1.0, 1), 0.0, 1e-9);
  assert_abs(gauss_moment(DPD_RF_ACT_HERMITE13, 1.0, 2), 1.0 + 6.0 / 36.0, 1e-9);
}

/* E y^2 = 1 + zeta^2 for the linear target and He_2/sqrt 2 (E He_2(g)^2 = 2); y^2 = 1 for sign. */
static void labels_have_unit_signal_variance(void **state) {
  (void)state;
  const dpd_rf_input inputs[] = {DPD_RF_INPUT_GAUSSIAN, DPD_RF_INPUT_SPHERE};
  const dpd_rf_target targets[] = {DPD_RF_TARGET_LINEAR, DPD_RF_TARGET_SIGN,
                                   DPD_RF_TARGET_HERMITE2};
  for (size_t a = 0; a < 2; a++) {
    for (size_t b = 0; b < 3; b++) {
      dpd_rf_config cfg = dpd_rf_config_default();
      cfg.d = 23;
      cfg.n = 4000;
      cfg.n_test = 3;
      cfg.p = 3;
      cfg.zeta = 0.0;
      cfg.input = inputs[a];
      cfg.target = targets[b];
      cfg.seed = SEED + 3;
      dpd_rf_problem *pr = make(&cfg);
      double *sq = malloc(pr->n * sizeof *sq);
      assert_non_null(sq);
      for (size_t i = 0; i < pr->n; i++) {
        sq[i] = pr->y[i] * pr->y[i];
      }
      double m, se;
      mean_se(sq, pr->n, &m, &se);
      if (targets[b] == DPD_RF_TARGET_SIGN) {
        assert_abs(m, 1.0, 0.0);
      } else if (!(fabs(m - 1.0) <= 4.0 * se + 1e-12)) {
        print_error("%s/%s: E y^2 = %g (se %g), want 1\n", dpd_rf_input_name(inputs[a]),
                    dpd_rf_target_name(targets[b]), m, se);
        fail();
      }
      free(sq);
      dpd_rf_problem_free(pr);
    }
  }
}

static void row_norms_and_v_scaling_are_correct(void **state) {
  (void)state;
  dpd_rf_config cfg = dpd_rf_config_default();
  cfg.d = 41;
  cfg.n = 17;
  cfg.n_test = 9;
  cfg.p = 300;
  cfg.seed = SEED;
  dpd_rf_problem *pr = make(&cfg);
  for (size_t i = 0; i < pr->n; i++) {
    double s = 0.0;
    for (size_t j = 0; j < pr->p; j++) {
      s += pr->phi[i * pr->p + j] * pr->phi[i * pr->p + j];
    }
    assert_rel(pr->row_norm[i], sqrt(s), 1e-13);
  }
  double v2 = 0.0, u2 = 0.0;
  for (size_t k = 0; k < pr->p * pr->d; k++) {
    v2 += pr->V[k] * pr->V[k];
  }
  for (size_t k = 0; k < pr->d; k++) {
    u2 += pr->u[k] * pr->u[k];
  }
  /* sum V_jk^2 ~ chi^2_{pd} / d: mean p, sd sqrt(2 p d) / d. */
  assert_abs(v2, (double)pr->p, 4.0 * sqrt(2.0 * (double)(pr->p * pr->d)) / (double)pr->d);
  assert_abs(u2, 1.0, 1e-14);
  dpd_rf_problem_free(pr);
}

static int same(const double *a, const double *b, size_t m) {
  return memcmp(a, b, m * sizeof *a) == 0;
}

static void same_seed_gives_identical_bits(void **state) {
  (void)state;
  dpd_rf_config cfg = dpd_rf_config_default();
  cfg.d = 19;
  cfg.n = 33;
  cfg.n_test = 21;
  cfg.p = 75;
  cfg.input = DPD_RF_INPUT_SPHERE;
  cfg.target = DPD_RF_TARGET_HERMITE2;
  cfg.activation = DPD_RF_ACT_HERMITE13;
  cfg.seed = SEED;
  dpd_rf_problem *a = make(&cfg), *b = make(&cfg);
  assert_true(same(a->V, b->V, a->p * a->d));
  assert_true(same(a->phi, b->phi, a->n * a->p));
  assert_true(same(a->phi_test, b->phi_test, a->n_test * a->p));
  assert_true(same(a->y, b->y, a->n));
  assert_true(same(a->y_test, b->y_test, a->n_test));
  assert_true(same(a->row_norm, b->row_norm, a->n));
  cfg.seed = SEED + 1;
  dpd_rf_problem *c = make(&cfg);
  assert_false(same(a->phi, c->phi, a->n * a->p));
  /* More training samples leave V and the first rows unchanged (one fill per stream). */
  cfg.seed = SEED;
  cfg.n = 40;
  dpd_rf_problem *e = make(&cfg);
  assert_true(same(a->V, e->V, a->p * a->d));
  assert_true(same(a->phi, e->phi, a->n * a->p));
  dpd_rf_problem_free(a);
  dpd_rf_problem_free(b);
  dpd_rf_problem_free(c);
  dpd_rf_problem_free(e);
}

/* The features are built with OpenMP over tiles: their bits must not depend on the thread
 * count (checked for 1 and 3 threads; omp_set_num_threads is process-global, fine in a test
 * program). */
static void problem_bits_do_not_depend_on_threads(void **state) {
  (void)state;
  dpd_rf_config cfg = dpd_rf_config_default();
  cfg.d = 131;
  cfg.n = 257;
  cfg.n_test = 65;
  cfg.p = 515;
  cfg.seed = SEED + 9;
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  dpd_rf_problem *a = make(&cfg);
  omp_set_num_threads(3);
  dpd_rf_problem *b = make(&cfg);
  omp_set_num_threads(saved);
  assert_true(same(a->phi, b->phi, a->n * a->p));
  assert_true(same(a->phi_test, b->phi_test, a->n_test * a->p));
  assert_true(same(a->row_norm, b->row_norm, a->n));
  dpd_rf_problem_free(a);
  dpd_rf_problem_free(b);
}

static void expect_einval(const dpd_rf_config *cfg, const char *key) {
  dpd_rf_problem *pr = (dpd_rf_problem *)1;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_problem_create(cfg, &pr, &err), DPD_EINVAL);
  assert_null(pr);
  assert_non_null(strstr(err.reason, key));
  assert_non_null(strstr(err.reason, "allowed"));
}

static void bad_configs_and_names_are_rejected(void **state) {
  (void)state;
  dpd_rf_config base = dpd_rf_config_default(), cfg;
  cfg = base;
  cfg.p = 0;
  expect_einval(&cfg, "'p'");
  cfg = base;
  cfg.n = 0;
  expect_einval(&cfg, "'n'");
  cfg = base;
  cfg.d = 0;
  expect_einval(&cfg, "'d'");
  cfg = base;
  cfg.n_test = 0;
  expect_einval(&cfg, "'n_test'");
  cfg = base;
  cfg.zeta = -0.25;
  expect_einval(&cfg, "'zeta'");
  cfg = base;
  cfg.activation = (dpd_rf_activation)7;
  expect_einval(&cfg, "'activation'");
  cfg = base;
  cfg.input = (dpd_rf_input)5;
  expect_einval(&cfg, "'input'");
  cfg = base;
  cfg.target = (dpd_rf_target)9;
  expect_einval(&cfg, "'target'");
  cfg = base;
  cfg.p = SIZE_MAX / 4;
  expect_einval(&cfg, "too large");

  dpd_err err;
  dpd_rf_activation act = DPD_RF_ACT_TANH;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_activation_get("softplus", &act, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'activation': 'softplus'"));
  assert_non_null(strstr(err.reason, "relu_centered"));
  assert_int_equal(dpd_rf_activation_get("hermite13", &act, NULL), DPD_OK);
  assert_int_equal(act, DPD_RF_ACT_HERMITE13);
  dpd_rf_input in = DPD_RF_INPUT_GAUSSIAN;
  assert_int_equal(dpd_rf_input_get("cube", &in, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'input'"));
  assert_int_equal(dpd_rf_input_get("sphere", &in, NULL), DPD_OK);
  assert_int_equal(in, DPD_RF_INPUT_SPHERE);
  dpd_rf_target tg = DPD_RF_TARGET_LINEAR;
  assert_int_equal(dpd_rf_target_get(NULL, &tg, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'target'"));
  assert_int_equal(dpd_rf_target_get("sign", &tg, NULL), DPD_OK);
  assert_int_equal(tg, DPD_RF_TARGET_SIGN);
  assert_string_equal(dpd_rf_target_name((dpd_rf_target)42), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(activations_have_their_formulas),
      cmocka_unit_test(activation_moments_match_gaussian_expectations_tanh),
      cmocka_unit_test(activation_moments_match_gaussian_expectations_relu_centered),
      cmocka_unit_test(activation_moments_match_gaussian_expectations_hermite13),
      cmocka_unit_test(labels_have_unit_signal_variance),
      cmocka_unit_test(row_norms_and_v_scaling_are_correct),
      cmocka_unit_test(same_seed_gives_identical_bits),
      cmocka_unit_test(problem_bits_do_not_depend_on_threads),
      cmocka_unit_test(bad_configs_and_names_are_rejected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
