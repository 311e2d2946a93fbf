/* Tests of the semi-private learning library (include/dpdyn/semipriv.h): the generator of notes
 * C.5 and its population spectrum, Noisy-SGD's noise and convergence, Algorithm 1's
 * reproducibility, the error paths and the theory's formulas.
 * SPDX-License-Identifier: MIT
 *
 * Seeds are fixed; statistical checks use 4 standard errors of their own sample. OpenBLAS runs
 * one thread (as the CLI adapters set it), so the LAPACK calls give the same bits whatever the
 * replicate driver's thread count. */
#define _POSIX_C_SOURCE 200809L
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dpd_test.h"
#include "dpdyn/rng.h"
#include "dpdyn/semipriv.h"
#include "semipriv/sp_files_impl.h"

void openblas_set_num_threads(int num_threads);

static dpd_semipriv_gen *make_gen(size_t d, uint64_t seed) {
  dpd_semipriv_gen_config c = dpd_semipriv_gen_config_default();
  c.d = d;
  c.seed = seed;
  dpd_semipriv_gen *g = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_semipriv_gen_create(&c, &g, &err);
  if (st != DPD_OK) {
    print_error("dpd_semipriv_gen_create(d = %zu): %s\n", d, err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return g;
}

static dpd_semipriv_result *run_ok(const dpd_semipriv_gen *g, const dpd_semipriv_run_config *c) {
  dpd_semipriv_result *r = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_semipriv_run(g, c, &r, &err);
  if (st != DPD_OK) {
    print_error("dpd_semipriv_run: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return r;
}

/* Notes C.5's table (d = 50, 200, 1000; a = 0.95, k = 5): the guaranteed margin (0.19, 0.19,
 * 0.18), the empirical minimum margin above it, xi_5 of the PCA of a public sample within 0.005
 * of 1 - a = 0.05, and the eigengap (0.074, 0.073, 0.067, measured there). */
static void generator_reproduces_the_notes_table(void **state) {
  (void)state;
  const size_t ds[3] = {50, 200, 1000};
  const double margin_notes[3] = {0.19, 0.19, 0.18}, gap_notes[3] = {0.074, 0.073, 0.067};
  for (size_t a = 0; a < 3; a++) {
    const size_t d = ds[a];
    dpd_semipriv_gen *g = make_gen(d, 11 + a);
    /* the margin formula, recomputed here */
    const double zmax = sqrt(1.9 * 1.9 + 9.0 * 1.8 + 0.09 + 9.0 * 0.0004 * (double)(d - 6));
    const double gamma = (0.95 - sqrt(1.0 - 0.95 * 0.95) * 0.3) / zmax;
    assert_rel(g->margin_guaranteed, gamma, 1e-13);
    assert_abs(g->margin_guaranteed, margin_notes[a], 0.005);
    assert_abs(dpd_semipriv_gen_xi(g, 5), 0.05, 1e-12);
    assert_true(g->var_sum_error < 1e-9);
    assert_abs(dpd_semipriv_gen_eigengap(g, 5), gap_notes[a], 0.001);
    /* the first K = 5 coordinates lead, then the tau coordinate */
    for (size_t i = 0; i < 6; i++) {
      assert_int_equal(g->order[i], i);
    }
    /* empirical minimum margin of 2000 labelled points */
    const size_t m = 2000;
    double *X = malloc(m * d * sizeof *X), *Z = malloc(m * d * sizeof *Z);
    double *y = malloc(m * sizeof *y);
    assert_non_null(X);
    assert_non_null(Z);
    assert_non_null(y);
    dpd_semipriv_gen_sample(g, 5, 0, DPD_SEMIPRIV_SET_LABELLED, 0, m, X, y, Z);
    const double mm = dpd_semipriv_margin_min(X, y, m, d, g->w_star);
    print_message("d = %zu: guaranteed margin %.4f, empirical min margin %.4f, Delta_5 %.4f\n", d,
                  g->margin_guaranteed, mm, dpd_semipriv_gen_eigengap(g, 5));
    assert_true(mm >= g->margin_guaranteed);
    assert_true(mm > 0.0);
    free(X);
    free(Z);
    free(y);
    /* xi_5 of the PCA of 2000 public points (one replicate of Algorithm 1) */
    dpd_semipriv_run_config rc = dpd_semipriv_run_config_default();
    rc.n = 10;
    rc.steps = 10;
    rc.n_test = 1;
    rc.n_public = 2000;
    rc.seeds = 1;
    rc.epsilon = INFINITY;
    dpd_semipriv_result *r = run_ok(g, &rc);
    print_message("d = %zu: empirical xi_5 %.5f, |A A^T - A_hat A_hat^T| %.4f (ZB bound %.3f)\n", d,
                  r->mean[DPD_SEMIPRIV_XI_HAT], r->mean[DPD_SEMIPRIV_SUBSPACE_ERROR], r->zb_bound);
    assert_abs(r->mean[DPD_SEMIPRIV_XI_HAT], 0.05, 0.005);
    assert_true(r->mean[DPD_SEMIPRIV_SUBSPACE_ERROR] < r->zb_bound);
    dpd_semipriv_result_free(r);
    dpd_semipriv_gen_free(g);
  }
}

/* Every point has |x| = 1, x = Q z / |z|, the sign of z_1 is the label, and each coordinate
 * respects its truncation; the truncated Gaussians have the second moment of N(0, 1) cut at
 * |g| <= 3, 1 - 6 phi(3) / (2 Phi(3) - 1) = 0.97334 (the untruncated 1 is 15 SE away). */
static void points_are_unit_norm_and_truncated(void **state) {
  (void)state;
  const size_t d = 200, K = 5, m = 3000;
  dpd_semipriv_gen *g = make_gen(d, 3);
  double *X = malloc(m * d * sizeof *X), *Z = malloc(m * d * sizeof *Z), *y = malloc(m * sizeof *y);
  assert_non_null(X);
  assert_non_null(Z);
  assert_non_null(y);
  dpd_semipriv_gen_sample(g, 9, 2, DPD_SEMIPRIV_SET_TEST, 17, m, X, y, Z);
  const double lam[4] = {0.6, 0.5, 0.4, 0.3};
  double s1 = 0.0, s2 = 0.0, cnt = 0.0, pos = 0.0;
  for (size_t i = 0; i < m; i++) {
    const double *x = X + i * d, *z = Z + i * d;
    double nx = 0.0, nz = 0.0;
    for (size_t l = 0; l < d; l++) {
      nx += x[l] * x[l];
      nz += z[l] * z[l];
    }
    assert_abs(sqrt(nx), 1.0, 1e-13);
    assert_true(z[0] * y[i] >= 1.0 && z[0] * y[i] <= 1.0 + 3.0 * 0.3 + 1e-15);
    pos += y[i] > 0.0;
    for (size_t j = 1; j < K; j++) {
      assert_true(fabs(z[j]) <= 3.0 * sqrt(lam[j - 1]) * (1.0 + 1e-15));
    }
    assert_true(fabs(z[K]) <= 0.3);
    for (size_t j = K + 1; j < d; j++) {
      assert_true(fabs(z[j]) <= 3.0 * 0.02 * (1.0 + 1e-15));
      const double v = (z[j] / 0.02) * (z[j] / 0.02);
      s1 += v;
      s2 += v * v;
      cnt += 1.0;
    }
    if (i < 5) { /* x = Q z / |z| */
      for (size_t l = 0; l < d; l++) {
        double s = 0.0;
        for (size_t j = 0; j < d; j++) {
          s += g->Q[j * d + l] * z[j];
        }
        assert_abs(x[l], s / sqrt(nz), 1e-13);
      }
    }
  }
  const double mean = s1 / cnt, se = sqrt((s2 / cnt - mean * mean) / cnt);
  const double want = 1.0 - 6.0 * exp(-4.5) / sqrt(2.0 * M_PI) / erf(3.0 / M_SQRT2);
  print_message("truncated E[g^2] %.5f +- %.5f (want %.5f)\n", mean, se, want);
  assert_abs(mean, want, 4.0 * se);
  assert_false(fabs(mean - 1.0) <= 4.0 * se); /* an untruncated law would be rejected */
  assert_abs(pos / (double)m, 0.5, 4.0 * 0.5 / sqrt((double)m));
  /* the same point from another call (first index, other sizes) has the same bits */
  double x1[200], y1, z1[200];
  dpd_semipriv_gen_sample(g, 9, 2, DPD_SEMIPRIV_SET_TEST, 17 + 123, 1, x1, &y1, z1);
  assert_memory_equal(x1, X + 123 * d, d * sizeof *x1);
  free(X);
  free(Z);
  free(y);
  dpd_semipriv_gen_free(g);
}

/* The quadrature spectrum m_j = E[(q_j^T x)^2] against the Monte Carlo mean of z_j^2 / |z|^2
 * over 20000 points (4 SE), for the leading coordinates and the nu block; Q is orthonormal. */
static void population_spectrum_matches_monte_carlo(void **state) {
  (void)state;
  const size_t d = 30, m = 20000;
  dpd_semipriv_gen *g = make_gen(d, 4);
  double *X = malloc(m * d * sizeof *X), *Z = malloc(m * d * sizeof *Z), *y = malloc(m * sizeof *y);
  assert_non_null(X);
  assert_non_null(Z);
  assert_non_null(y);
  dpd_semipriv_gen_sample(g, 21, 0, DPD_SEMIPRIV_SET_PUBLIC, 0, m, X, y, Z);
  for (size_t j = 0; j < 8; j++) {
    double s1 = 0.0, s2 = 0.0;
    for (size_t i = 0; i < m; i++) {
      const double *z = Z + i * d;
      double nz = 0.0;
      for (size_t l = 0; l < d; l++) {
        nz += z[l] * z[l];
      }
      const double v = z[j] * z[j] / nz;
      s1 += v;
      s2 += v * v;
    }
    const double mean = s1 / (double)m, se = sqrt((s2 / (double)m - mean * mean) / (double)m);
    assert_abs(g->coord_var[j], mean, 4.0 * se);
  }
  for (size_t i = 0; i < d; i++) {
    for (size_t j = 0; j <= i; j++) {
      double s = 0.0;
      for (size_t l = 0; l < d; l++) {
        s += g->Q[i * d + l] * g->Q[j * d + l];
      }
      assert_abs(s, i == j ? 1.0 : 0.0, 1e-13);
    }
  }
  free(X);
  free(Z);
  free(y);
  dpd_semipriv_gen_free(g);
}

/* sigma of the code equals 32 L^2 n^2 log(n/delta) log(1/delta) / eps^2, and the noise a step
 * adds has that standard deviation: one step from w = 0 that stays inside the ball gives
 * w_1 = eta_1 (n L y x - sigma xi), so (n L y x - w_1 / eta_1) / sigma is N(0, I_k); its sample
 * variance over 2000 replicates is 1 within 4 SE and a sigma 1.2 times too large is rejected.
 * (|w_1| / radius = 2 |n L y x - sigma xi| / sqrt(n^2 L^2 + k sigma^2) does not depend on the
 * radius; it stays below 1 for |x| <= 0.1 and sigma = 0.05 n L, i.e. a large epsilon.) */
static void sgd_noise_has_the_formula_sigma(void **state) {
  (void)state;
  const size_t n = 500, k = 4, R = 2000;
  const double zeta = 0.1768, eps = 0.1, delta = 1e-5, L = 1.0 / zeta;
  const double want2 = 32.0 * L * L * 500.0 * 500.0 * log(500.0 / 1e-5) * log(1e5) / (0.01);
  assert_rel(dpd_semipriv_sgd_sigma(n, L, eps, delta), sqrt(want2), 1e-13);
  assert_true(dpd_semipriv_sgd_sigma(n, L, INFINITY, delta) == 0.0);
  assert_true(isnan(dpd_semipriv_sgd_sigma(n, L, 0.0, delta)));
  assert_rel(dpd_semipriv_sgd_eta(7, n, L, k, 3.0, 1.0),
             2.0 / sqrt(7.0 * (500.0 * 500.0 * L * L + 4.0 * 9.0)), 1e-14);
  double *P = malloc(n * k * sizeof *P), *y = malloc(n * sizeof *y);
  double *work = malloc(dpd_semipriv_sgd_work(k) * sizeof *work);
  assert_non_null(P);
  assert_non_null(y);
  assert_non_null(work);
  for (size_t i = 0; i < n; i++) {
    y[i] = (i % 3) ? 1.0 : -1.0;
    for (size_t j = 0; j < k; j++) {
      P[i * k + j] = 0.05 * sin(1.7 * (double)(i * k + j) + 0.4);
    }
  }
  dpd_semipriv_sgd_config c = dpd_semipriv_sgd_config_default();
  c.epsilon = sqrt(32.0 * log(500.0 / 1e-5) * log(1e5)) / 0.05; /* sigma = 0.05 n L */
  c.delta = delta;
  c.zeta = zeta;
  c.steps = 1;
  double s2 = 0.0, s4 = 0.0, sigma = 0.0, eta1 = 0.0;
  for (size_t r = 0; r < R; r++) {
    double w[4];
    dpd_semipriv_sgd_info info;
    dpd_err err;
    assert_int_equal(dpd_semipriv_sgd_run(&c, P, y, n, k, 77, r, w, work, &info, &err), DPD_OK);
    sigma = info.sigma;
    eta1 = info.eta1;
    /* the sample of step 1 by the documented stream rule: u_1 of region (3, 0) */
    dpd_rng rng;
    dpd_rng_init(&rng, 77, r);
    rng.counter = UINT64_C(3) << 62;
    double u;
    dpd_rng_uniform_fill(&rng, &u, 1);
    const size_t i = (size_t)(u * (double)n);
    for (size_t j = 0; j < k; j++) {
      const double e = ((double)n * L * y[i] * P[i * k + j] - w[j] / eta1) / sigma;
      s2 += e * e;
      s4 += e * e * e * e;
    }
  }
  assert_rel(sigma, 0.05 * 500.0 * L, 1e-13);
  const double N = (double)(R * k), var = s2 / N, se = sqrt((s4 / N - var * var) / N);
  print_message("noise variance / sigma^2 = %.4f +- %.4f\n", var, se);
  assert_abs(var, 1.0, 4.0 * se);
  assert_false(fabs(var * 1.44 - 1.0) <= 4.0 * se * 1.44); /* sigma x 1.2 would be rejected */
  free(P);
  free(y);
  free(work);
}

/* Non-private Noisy-SGD (epsilon = inf, the same n^2 steps) on separable noiseless data reaches
 * zero training hinge loss: the labelled points projected on the true top-5 subspace have margin
 * >= c / z_max > zeta at w = A_5^T w* / a. */
static void sgd_reaches_zero_hinge_on_separable_data(void **state) {
  (void)state;
  const size_t d = 50, k = 5, n = 200;
  dpd_semipriv_gen *g = make_gen(d, 8);
  double *X = malloc(n * d * sizeof *X), *Z = malloc(n * d * sizeof *Z), *y = malloc(n * sizeof *y);
  double *A = malloc(d * k * sizeof *A), *what = malloc(d * sizeof *what);
  double *work = malloc((n * k + k + dpd_semipriv_sgd_work(k)) * sizeof *work);
  double *P = malloc(n * k * sizeof *P);
  assert_non_null(work);
  assert_non_null(P);
  assert_non_null(X);
  assert_non_null(Z);
  assert_non_null(A);
  assert_non_null(what);
  assert_non_null(y);
  dpd_semipriv_gen_sample(g, 3, 0, DPD_SEMIPRIV_SET_LABELLED, 0, n, X, y, Z);
  dpd_semipriv_gen_top(g, k, A);
  dpd_semipriv_sgd_config c = dpd_semipriv_sgd_config_default();
  c.epsilon = INFINITY;
  const double gamma0 = g->margin_guaranteed;
  c.zeta = gamma0 * (1.0 - 0.05 - 0.1 * gamma0);
  double w[5];
  dpd_semipriv_sgd_info info;
  dpd_err err;
  assert_int_equal(
      dpd_semipriv_alg1_execute(A, d, k, X, y, n, &c, 1, 0, what, w, work, &info, &err), DPD_OK);
  assert_int_equal(info.steps, n * n);
  assert_true(info.sigma == 0.0);
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < k; j++) {
      double s = 0.0;
      for (size_t l = 0; l < d; l++) {
        s += X[i * d + l] * A[j * d + l];
      }
      P[i * k + j] = s;
    }
  }
  double h, acc;
  dpd_semipriv_hinge(P, y, n, k, w, c.zeta, &h, &acc);
  print_message("non-private SGD: training hinge %.3g, accuracy %.4f, |w| %.4f\n", h, acc,
                sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2] + w[3] * w[3] + w[4] * w[4]));
  assert_true(h == 0.0);
  assert_true(acc == 1.0);
  /* w_hat = A w on the full points: the same decisions */
  double h2, acc2;
  dpd_semipriv_hinge(X, y, n, d, what, c.zeta, &h2, &acc2);
  assert_true(acc2 == 1.0);
  /* private SGD at epsilon = 0.1 on the same data does not reach it */
  c.epsilon = 0.1;
  assert_int_equal(
      dpd_semipriv_alg1_execute(A, d, k, X, y, n, &c, 1, 0, what, w, work, &info, &err), DPD_OK);
  dpd_semipriv_hinge(P, y, n, k, w, c.zeta, &h, &acc);
  assert_true(h > 0.0);
  free(X);
  free(Z);
  free(y);
  free(A);
  free(what);
  free(work);
  free(P);
  dpd_semipriv_gen_free(g);
}

/* Algorithm 1 over replicates gives the same bits on 1 and 3 threads, with PCA and at k = d. */
static void run_is_bit_identical_for_any_thread_count(void **state) {
  (void)state;
  dpd_semipriv_gen *g = make_gen(40, 2);
  const size_t ks[2] = {5, 40};
  for (size_t a = 0; a < 2; a++) {
    dpd_semipriv_run_config c = dpd_semipriv_run_config_default();
    c.n = 60;
    c.n_public = 300;
    c.n_test = 200;
    c.k = ks[a];
    c.epsilon = 0.7;
    c.seeds = 5;
    c.threads = 1;
    const size_t work = dpd_semipriv_run_work(g, &c);
    assert_true(work >= 2 * 256 * 40 + (a == 0 ? 40 * 40 : 0));
    dpd_semipriv_result *r1 = run_ok(g, &c);
    c.threads = 3;
    dpd_semipriv_result *r3 = run_ok(g, &c);
    assert_memory_equal(r1->replicates, r3->replicates,
                        c.seeds * DPD_SEMIPRIV_METRIC_COUNT * sizeof(double));
    /* replicates differ from each other (data, public sample and noise are redrawn) */
    assert_true(r1->replicates[DPD_SEMIPRIV_MARGIN_MIN] !=
                r1->replicates[DPD_SEMIPRIV_METRIC_COUNT + DPD_SEMIPRIV_MARGIN_MIN]);
    dpd_semipriv_result_free(r1);
    dpd_semipriv_result_free(r3);
  }
  dpd_semipriv_gen_free(g);
}

static void expect_einval(int st, const dpd_err *err, const char *key) {
  assert_int_equal(st, DPD_EINVAL);
  if (strstr(err->reason, key) == NULL) {
    print_error("reason '%s' does not name '%s'\n", err->reason, key);
    fail();
  }
}

static void bad_input_names_the_key(void **state) {
  (void)state;
  dpd_err err;
  dpd_semipriv_gen *g = NULL;
  dpd_semipriv_gen_config c = dpd_semipriv_gen_config_default();
  c.a = 1.0;
  expect_einval(dpd_semipriv_gen_create(&c, &g, &err), &err, "'a'");
  c = dpd_semipriv_gen_config_default();
  c.n_lambda = 3;
  expect_einval(dpd_semipriv_gen_create(&c, &g, &err), &err, "'lambda'");
  c = dpd_semipriv_gen_config_default();
  c.d = 5;
  expect_einval(dpd_semipriv_gen_create(&c, &g, &err), &err, "'d'");
  c = dpd_semipriv_gen_config_default();
  c.tau = 10.0;
  expect_einval(dpd_semipriv_gen_create(&c, &g, &err), &err, "'tau'");
  c = dpd_semipriv_gen_config_default();
  c.nu = NAN;
  expect_einval(dpd_semipriv_gen_create(&c, &g, &err), &err, "'nu'");
  assert_null(g);
  g = make_gen(20, 1);
  dpd_semipriv_result *r = NULL;
  dpd_semipriv_run_config rc = dpd_semipriv_run_config_default();
  rc.k = 21;
  expect_einval(dpd_semipriv_run(g, &rc, &r, &err), &err, "'k'");
  rc.k = 0;
  expect_einval(dpd_semipriv_run(g, &rc, &r, &err), &err, "'k'");
  rc = dpd_semipriv_run_config_default();
  rc.n_public = 5;
  expect_einval(dpd_semipriv_run(g, &rc, &r, &err), &err, "'n_public'");
  rc = dpd_semipriv_run_config_default();
  rc.epsilon = 0.0;
  expect_einval(dpd_semipriv_run(g, &rc, &r, &err), &err, "'epsilon'");
  rc.epsilon = -1.0;
  expect_einval(dpd_semipriv_run(g, &rc, &r, &err), &err, "'epsilon'");
  rc = dpd_semipriv_run_config_default();
  rc.delta = 1.0;
  expect_einval(dpd_semipriv_run(g, &rc, &r, &err), &err, "'delta'");
  rc = dpd_semipriv_run_config_default();
  rc.zeta = -0.1;
  expect_einval(dpd_semipriv_run(g, &rc, &r, &err), &err, "'zeta'");
  assert_null(r);
  dpd_semipriv_gen_free(g);
}

/* The theory: the Zwald-Blanchard bound at Theorem 1's n_public is gamma0 / 10; the labelled
 * sample size inverts the error bound; the subspace distance of two known planes. */
static void theory_formulas_are_consistent(void **state) {
  (void)state;
  const double gamma0 = 0.1887, gap = 0.0731, beta = 0.05;
  const double np = dpd_semipriv_theory_n_public(gamma0, gap, beta);
  const double f = 1.0 + sqrt(log(2.0 / beta) / 2.0);
  assert_rel(np, 1600.0 * f * f / (gamma0 * gamma0 * gap * gap), 1e-14);
  assert_rel(4.0 * f / (gap * sqrt(np)), gamma0 / 10.0, 1e-12);
  assert_rel(dpd_semipriv_theory_zb_bound(gap, 5000, beta), 4.0 * f / (gap * sqrt(5000.0)), 1e-14);
  assert_true(isinf(dpd_semipriv_theory_zb_bound(0.0, 5000, beta)));
  const double alpha = 0.1, eps = 0.1, delta = 1e-5, zeta = 0.17;
  const double n5 = dpd_semipriv_theory_n_labelled(alpha, 5, eps, delta, zeta);
  const double n200 = dpd_semipriv_theory_n_labelled(alpha, 200, eps, delta, zeta);
  assert_true(dpd_semipriv_theory_alpha_private((size_t)n5, 5, eps, delta, zeta) <= alpha);
  assert_true(dpd_semipriv_theory_alpha_private((size_t)n5 - 1, 5, eps, delta, zeta) > alpha);
  assert_true(n200 > 5.0 * n5); /* ~ sqrt(k): sqrt(40) = 6.3 up to the logarithms */
  assert_rel(dpd_semipriv_theory_alpha_nonprivate(400, 0.25), 0.1, 1e-14);
  /* |A A^T - B B^T| for A = [e1, e2], B = [e1, cos t e2 + sin t e3] is sin t */
  const size_t d = 4, k = 2;
  const double t = 0.3871;
  double A[8] = {1, 0, 0, 0, 0, 1, 0, 0}, B[8] = {1, 0, 0, 0, 0, cos(t), sin(t), 0};
  double *work = malloc(dpd_semipriv_subspace_work(d, k) * sizeof *work), dist = 0.0;
  assert_non_null(work);
  dpd_err err;
  assert_int_equal(dpd_semipriv_subspace_dist(A, B, d, k, &dist, work, &err), DPD_OK);
  assert_rel(dist, sin(t), 1e-14);
  assert_int_equal(dpd_semipriv_subspace_dist(A, A, d, k, &dist, work, &err), DPD_OK);
  assert_true(dist < 1e-15);
  assert_rel(dpd_semipriv_xi(B, d, k, (double[4]){0.6, 0, 0.8, 0}),
             1.0 - sqrt(0.36 + 0.64 * sin(t) * sin(t)), 1e-14);
  free(work);
}

/* ---- the parts behind model=semipriv (src/semipriv/sp_files_impl.h) ---- */

static void lambda_list_takes_exactly_k_true_minus_one_entries(void **state) {
  double lam[4];
  size_t count;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd__sp_lambda_parse(" 0.6, 0.5", 2, lam, 4, &count, &err), DPD_OK);
  assert_int_equal(count, 2);
  assert_true(lam[0] == 0.6 && lam[1] == 0.5);
  assert_int_equal(dpd__sp_lambda_parse("none", 0, lam, 4, &count, &err), DPD_OK);
  /* a trailing comma is an empty entry, not the end of the list */
  assert_int_equal(dpd__sp_lambda_parse("0.5,", 1, lam, 4, &count, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "entry 2 is ''"));
  assert_int_equal(dpd__sp_lambda_parse("0.5,none", 1, lam, 4, &count, &err), DPD_EINVAL);
  assert_int_equal(dpd__sp_lambda_parse("1,1,1,1,1", 5, lam, 4, &count, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "more than 4 entries"));
  assert_int_equal(dpd__sp_lambda_parse("0.6", 2, lam, 4, &count, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "has 1 entry"));
}

static void k_is_an_integer_up_to_d_or_none(void **state) {
  size_t k;
  int none;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd__sp_k_parse("none", 30, &k, &none, &err), DPD_OK);
  assert_true(none && k == 30);
  assert_int_equal(dpd__sp_k_parse("7", 30, &k, &none, &err), DPD_OK);
  assert_true(!none && k == 7);
  assert_int_equal(dpd__sp_k_parse("31", 30, &k, &none, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "1 .. d = 30"));
  /* d not known yet (file features): the syntax alone */
  assert_int_equal(dpd__sp_k_parse("500", 0, &k, &none, &err), DPD_OK);
  assert_int_equal(dpd__sp_k_parse("0", 0, &k, &none, &err), DPD_EINVAL);
  assert_int_equal(dpd__sp_steps_check(60, 3601, 1.0, &err), DPD_EINVAL);
  assert_int_equal(dpd__sp_steps_check(60, 3601, INFINITY, &err), DPD_OK);
  assert_int_equal(dpd__sp_steps_check(92682, 0, 1.0, &err), DPD_EINVAL);
}

static void file_set_is_scaled_to_the_unit_sphere_with_one_vs_rest_labels(void **state) {
  char path[] = "/tmp/dpd_sp_set_XXXXXX";
  const int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  dpd__sp_files files = {.has_positive = 1, .positive_class = 2.0};
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_non_null(f);
  fputs("2 3 4\n0 0 0\n1 -1 0\n", f); /* label x_1 x_2 per row; a zero row stays 0 */
  fclose(f);
  files.train.path = path;
  assert_int_equal(
      dpd__sp_set_read(&files.train, "features", "labels", 1, &files, 0, 1 << 20, &err), DPD_OK);
  assert_true(files.train.n == 3 && files.train.p == 2);
  assert_true(files.train.y[0] == 1.0 && files.train.y[1] == -1.0 && files.train.y[2] == -1.0);
  assert_abs(files.train.X[0], 0.6, 1e-15);
  assert_abs(files.train.X[1], 0.8, 1e-15);
  assert_true(files.train.X[2] == 0.0 && files.train.X[3] == 0.0);
  assert_true(files.train.X[4] == -1.0);
  dpd__sp_files_free(&files);
  files.positive_class = 5.0; /* no row of the positive class: one class, refused */
  assert_int_equal(
      dpd__sp_set_read(&files.train, "features", "labels", 1, &files, 0, 1 << 20, &err),
      DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'positive_class': every label"));
  dpd__sp_files_free(&files);
  remove(path);
}

static void file_members_say_what_is_not_available(void **state) {
  dpd_semipriv_result res = {.seeds = 2, .k = 3, .d = 3, .eigengap = NAN};
  dpd__sp_member m[DPD__SP_MEMBERS_MAX];
  const size_t n = dpd__sp_result_members(&res, 0, m);
  size_t na = 0;
  (void)state;
  for (size_t i = 0; i < n; i++) {
    na += m[i].na != NULL;
    assert_true(strcmp(m[i].name, "xi_k_se") != 0); /* no w*: no xi_k at all */
  }
  assert_int_equal(na, 3); /* xi_k, margin_min, eigengap (k = d: no PCA) */
}

/* calibration = pld (issue 28): the noise is the accountant's, never above the target epsilon,
 * below Bassily et al.'s; an sgd config with calibration PLD uses its sigma as given; the
 * default calibration is BST. */
static void pld_calibration_meets_the_target(void **state) {
  (void)state;
  const size_t n = 12, T = n * n;
  const double L = 1.0 / 0.1, eps = 2.0, delta = 1e-5;
  double sigma, check;
  dpd_account_result at;
  assert_int_equal(dpd_semipriv_sgd_sigma_pld(n, L, T, eps, delta, &sigma, &at, NULL), DPD_OK);
  assert_true(at.epsilon <= eps);
  assert_true(at.epsilon_lower <= at.epsilon_estimate && at.epsilon_estimate <= at.epsilon);
  /* an independent accounting at the delivered noise multiplier sigma / (n L) */
  {
    dpd_account_segment seg = {.sigma = sigma / ((double)n * L), .batch = 1, .steps = T};
    dpd_account a = {.mechanism = DPD_MECHANISM_SUBSAMPLED,
                     .sampling = DPD_SAMPLING_REPLACEMENT,
                     .neighbours = DPD_NEIGHBOURS_REPLACE_ONE,
                     .n = n,
                     .segments = &seg,
                     .nsegments = 1};
    dpd_account_result r;
    assert_int_equal(dpd_account_epsilon(&a, delta, &r, NULL), DPD_OK);
    check = r.epsilon;
  }
  print_message("n = %zu, T = %zu, eps = %g: sigma_pld = %.4f (PLD eps %.4f, again %.4f), "
                "sigma_bst = %.4f\n",
                n, T, eps, sigma, at.epsilon, check, dpd_semipriv_sgd_sigma(n, L, eps, delta));
  assert_true(check <= eps * (1.0 + 1e-3));
  assert_true(sigma < dpd_semipriv_sgd_sigma(n, L, eps, delta));
  /* epsilon = inf: no noise */
  assert_int_equal(dpd_semipriv_sgd_sigma_pld(n, L, T, INFINITY, delta, &sigma, NULL, NULL),
                   DPD_OK);
  assert_true(sigma == 0.0);
  /* the sgd config: BST by default, PLD with its sigma as given, PLD without one refused */
  {
    const size_t k = 2;
    double P[24], y[12], w[2], *work = malloc(dpd_semipriv_sgd_work(k) * sizeof *work);
    dpd_semipriv_sgd_config c = dpd_semipriv_sgd_config_default();
    dpd_semipriv_sgd_info info;
    dpd_err err;
    assert_non_null(work);
    for (size_t i = 0; i < n; i++) {
      y[i] = (i % 2) ? 1.0 : -1.0;
      P[2 * i] = 0.5 * y[i];
      P[2 * i + 1] = 0.1;
    }
    c.epsilon = eps;
    assert_int_equal((int)c.calibration, (int)DPD_SEMIPRIV_CALIBRATION_BST);
    assert_int_equal(dpd_semipriv_sgd_run(&c, P, y, n, k, 5, 0, w, work, &info, &err), DPD_OK);
    assert_rel(info.sigma, dpd_semipriv_sgd_sigma(n, L, eps, c.delta), 0.0);
    c.calibration = DPD_SEMIPRIV_CALIBRATION_PLD;
    assert_int_equal(dpd_semipriv_sgd_run(&c, P, y, n, k, 5, 0, w, work, &info, &err), DPD_EINVAL);
    assert_non_null(strstr(err.reason, "'sigma'"));
    c.sigma = 3.25;
    assert_int_equal(dpd_semipriv_sgd_run(&c, P, y, n, k, 5, 0, w, work, &info, &err), DPD_OK);
    assert_true(info.sigma == 3.25);
    free(work);
  }
  assert_string_equal(dpd_semipriv_calibration_name(DPD_SEMIPRIV_CALIBRATION_PLD), "pld");
}

int main(void) {
  gsl_set_error_handler_off();
  openblas_set_num_threads(1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(generator_reproduces_the_notes_table),
      cmocka_unit_test(points_are_unit_norm_and_truncated),
      cmocka_unit_test(population_spectrum_matches_monte_carlo),
      cmocka_unit_test(sgd_noise_has_the_formula_sigma),
      cmocka_unit_test(sgd_reaches_zero_hinge_on_separable_data),
      cmocka_unit_test(run_is_bit_identical_for_any_thread_count),
      cmocka_unit_test(bad_input_names_the_key),
      cmocka_unit_test(theory_formulas_are_consistent),
      cmocka_unit_test(lambda_list_takes_exactly_k_true_minus_one_entries),
      cmocka_unit_test(k_is_an_integer_up_to_d_or_none),
      cmocka_unit_test(file_set_is_scaled_to_the_unit_sphere_with_one_vs_rest_labels),
      cmocka_unit_test(file_members_say_what_is_not_available),
      cmocka_unit_test(pld_calibration_meets_the_target),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
