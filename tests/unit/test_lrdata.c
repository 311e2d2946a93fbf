/* Tests of a linear-regression dataset from files (linreg/data_impl.h, src/linreg/data.c).
 * SPDX-License-Identifier: MIT
 *
 * Small synthetic sets (correlated Gaussian rows with a mean, linear targets plus noise) are
 * written to temporary .npy files; every quantity the dataset prepares is recomputed here by the
 * direct formula (O(N d^2) loops, the normal equations by Cholesky) and compared. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/linreg.h"
#include "dpdyn/rng.h"
#include "linreg/data_impl.h"

static char dir[64];

static const char *path_of(const char *name) {
  static char buf[8][160];
  static int slot;
  slot = (slot + 1) % 8;
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", dir, name);
  return buf[slot];
}

/* A version-1.0 .npy of doubles (f4: floats) of shape (rows, cols), or (rows,) when cols = 0. */
static void write_npy(const char *name, const double *v, size_t rows, size_t cols, int f4) {
  char dict[128];
  FILE *f = fopen(path_of(name), "wb");
  size_t hlen, n = rows * (cols > 0 ? cols : 1);
  assert_non_null(f);
  if (cols > 0) {
    snprintf(dict, sizeof dict, "{'descr': '<f%d', 'fortran_order': False, 'shape': (%zu, %zu), }",
             f4 ? 4 : 8, rows, cols);
  } else {
    snprintf(dict, sizeof dict, "{'descr': '<f%d', 'fortran_order': False, 'shape': (%zu,), }",
             f4 ? 4 : 8, rows);
  }
  hlen = strlen(dict) + 1;
  hlen += (64 - (10 + hlen) % 64) % 64;
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc((int)(hlen & 0xff), f);
  fputc((int)((hlen >> 8) & 0xff), f);
  fputs(dict, f);
  for (size_t k = strlen(dict) + 1; k < hlen; k++) {
    fputc(' ', f);
  }
  fputc('\n', f);
  for (size_t i = 0; i < n; i++) {
    if (f4) {
      const float x = (float)v[i];
      fwrite(&x, sizeof x, 1, f);
    } else {
      fwrite(&v[i], sizeof v[i], 1, f);
    }
  }
  fclose(f);
}

static int setup_dir(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/dpd_test_lrdata_XXXXXX");
  return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state) {
  char cmd[128];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Rows x_i = mu + A g_i (A lower triangular with high-entropy entries), targets
 * y_i = 3.17 + x_i . w + 0.43 e_i (e Gaussian; student-like when heavy != 0: e cubed). */
static void make_set(size_t N, size_t d, uint64_t seed, int heavy, double *X, double *y) {
  dpd_rng rng;
  double *g = malloc(d * sizeof *g);
  assert_non_null(g);
  dpd_rng_init(&rng, seed, 7);
  for (size_t i = 0; i < N; i++) {
    dpd_rng_gaussian_fill(&rng, g, d);
    double t = 3.17;
    for (size_t k = 0; k < d; k++) {
      double v = 2.385 * (double)(k + 1) - 1.3;
      for (size_t l = 0; l <= k; l++) {
        v += (0.71 + 0.137 * (double)((k * 7 + l * 3) % 5)) / (double)(1 + k - l) * g[l];
      }
      X[i * d + k] = v;
      t += (0.9 - 0.31 * (double)k) * v;
    }
    const double e = dpd_rng_gaussian(&rng);
    y[i] = t + 0.43 * (heavy ? e * e * e : e);
  }
  free(g);
}

static dpd__lrdata_config config(const char *xname, const char *yname) {
  dpd__lrdata_config c;
  memset(&c, 0, sizeof c);
  c.features_key = "features";
  c.features_path = path_of(xname);
  c.targets_key = "targets";
  c.targets_path = yname != NULL ? path_of(yname) : NULL;
  c.center = 1;
  c.scale_trace = 1;
  c.target_unit = 1;
  c.seed = 20261128;
  c.threads = 2;
  return c;
}

static dpd__lrdata *create_ok(const dpd__lrdata_config *c) {
  dpd__lrdata *D = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  if (dpd__lrdata_create(c, &D, &err) != DPD_OK) {
    print_error("dpd__lrdata_create(%s): %s\n", c->features_path, err.reason);
    fail();
  }
  return D;
}

/* The preprocessed population rows and targets, by dpd__lrdata_row. */
static void rows_of(const dpd__lrdata *D, double *x, double *y) {
  for (size_t j = 0; j < D->n_pop; j++) {
    dpd__lrdata_row(D, j, x + j * D->d, y != NULL ? y + j : NULL);
  }
}

/* Sigma = (1/n) sum_j x_j x_j^T by the direct loop. */
static void direct_sigma(const double *x, size_t n, size_t d, double *S) {
  for (size_t k = 0; k < d; k++) {
    for (size_t l = 0; l < d; l++) {
      double s = 0.0;
      for (size_t j = 0; j < n; j++) {
        s += x[j * d + k] * x[j * d + l];
      }
      S[k * d + l] = s / (double)n;
    }
  }
}

/* Solves S v = r (S symmetric positive definite, d x d) by Cholesky; S is copied. */
static void chol_solve(const double *S, size_t d, const double *r, double *v) {
  double *L = calloc(d * d, sizeof *L);
  assert_non_null(L);
  for (size_t i = 0; i < d; i++) {
    for (size_t j = 0; j <= i; j++) {
      double s = S[i * d + j];
      for (size_t k = 0; k < j; k++) {
        s -= L[i * d + k] * L[j * d + k];
      }
      if (i == j) {
        assert_true(s > 0.0);
        L[i * d + i] = sqrt(s);
      } else {
        L[i * d + j] = s / L[j * d + j];
      }
    }
  }
  for (size_t i = 0; i < d; i++) { /* L u = r */
    double s = r[i];
    for (size_t k = 0; k < i; k++) {
      s -= L[i * d + k] * v[k];
    }
    v[i] = s / L[i * d + i];
  }
  for (size_t i = d; i-- > 0;) { /* L^T v = u */
    double s = v[i];
    for (size_t k = i + 1; k < d; k++) {
      s -= L[k * d + i] * v[k];
    }
    v[i] = s / L[i * d + i];
  }
  free(L);
}

static double kurtosis(const double *v, size_t n) {
  double m = 0.0, m2 = 0.0, m4 = 0.0;
  for (size_t j = 0; j < n; j++) {
    m += v[j];
  }
  m /= (double)n;
  for (size_t j = 0; j < n; j++) {
    m2 += (v[j] - m) * (v[j] - m);
    m4 += pow(v[j] - m, 4.0);
  }
  m2 /= (double)n;
  m4 /= (double)n;
  return m4 / (m2 * m2) - 3.0;
}

static void expect_fail(int status, const dpd_err *err, const char *a, const char *b) {
  if (status == DPD_OK) {
    print_error("expected an error containing '%s'\n", a);
    fail();
  }
  if (strstr(err->reason, a) == NULL || (b != NULL && strstr(err->reason, b) == NULL)) {
    print_error("error '%s' lacks '%s' / '%s'\n", err->reason, a, b != NULL ? b : "");
    fail();
  }
}

enum { N0 = 157, D0 = 6 };

static void preprocessing_factors_are_exact(void **state) {
  double X[N0 * D0], y[N0], x[D0], yy;
  (void)state;
  make_set(N0, D0, 11, 0, X, y);
  write_npy("x.npy", X, N0, D0, 0);
  write_npy("y.npy", y, N0, 0, 0);
  dpd__lrdata_config c = config("x.npy", "y.npy");
  dpd__lrdata *D = create_ok(&c);
  assert_int_equal(D->N, N0);
  assert_int_equal(D->d, D0);
  assert_int_equal(D->n_pop, N0);
  assert_int_equal(D->n_test, 0);
  assert_null(D->test_idx);
  double mean[D0], tr = 0.0, ym = 0.0, yv = 0.0;
  for (size_t k = 0; k < D0; k++) {
    double s = 0.0, v = 0.0;
    for (size_t i = 0; i < N0; i++) {
      s += X[i * D0 + k];
    }
    mean[k] = s / N0;
    for (size_t i = 0; i < N0; i++) {
      v += (X[i * D0 + k] - mean[k]) * (X[i * D0 + k] - mean[k]);
    }
    tr += v / N0;
    assert_rel(D->mean[k], mean[k], 1e-14);
  }
  for (size_t i = 0; i < N0; i++) {
    ym += y[i];
  }
  ym /= N0;
  for (size_t i = 0; i < N0; i++) {
    yv += (y[i] - ym) * (y[i] - ym);
  }
  yv /= N0;
  assert_rel(D->trace_raw, tr, 1e-13);
  assert_rel(D->scale, sqrt(D0 / tr), 1e-13);
  assert_rel(D->y_mean, ym, 1e-14);
  assert_rel(D->y_scale, 1.0 / sqrt(yv), 1e-13);
  double trace = 0.0;
  for (size_t k = 0; k < D0; k++) {
    trace += D->sigma[k * D0 + k];
  }
  assert_rel(trace, (double)D0, 1e-14);
  dpd__lrdata_row(D, 17, x, &yy);
  for (size_t k = 0; k < D0; k++) {
    assert_true(x[k] == D->scale * (X[17 * D0 + k] - D->mean[k]));
  }
  assert_true(yy == D->y_scale * (y[17] - D->y_mean));
  dpd__lrdata_free(D);

  /* every switch off: the raw rows */
  c.center = c.scale_trace = c.target_unit = 0;
  D = create_ok(&c);
  assert_true(D->scale == 1.0 && D->y_scale == 1.0 && D->y_mean == 0.0);
  dpd__lrdata_row(D, 3, x, &yy);
  for (size_t k = 0; k < D0; k++) {
    assert_true(D->mean[k] == 0.0 && x[k] == X[3 * D0 + k]);
  }
  assert_true(yy == y[3]);
  dpd__lrdata_free(D);
}

static void sigma_and_eigenpairs_match_the_direct_loop(void **state) {
  double X[N0 * D0], y[N0], x[N0 * D0], S[D0 * D0];
  (void)state;
  make_set(N0, D0, 12, 0, X, y);
  write_npy("x.npy", X, N0, D0, 0);
  dpd__lrdata_config c = config("x.npy", NULL);
  dpd__lrdata *D = create_ok(&c);
  assert_true(D->model_targets);
  assert_null(D->theta_hat);
  assert_null(D->z);
  rows_of(D, x, NULL);
  direct_sigma(x, N0, D0, S);
  for (size_t k = 0; k < D0 * D0; k++) {
    assert_abs(D->sigma[k], S[k], 1e-12);
  }
  for (size_t k = 0; k < D0; k++) { /* U^T Sigma U = diag(lambda), U orthonormal */
    if (k > 0) {
      assert_true(D->lambda[k] <= D->lambda[k - 1]);
    }
    for (size_t l = 0; l < D0; l++) {
      double q = 0.0, uu = 0.0;
      for (size_t i = 0; i < D0; i++) {
        uu += D->U[i * D0 + k] * D->U[i * D0 + l];
        for (size_t m = 0; m < D0; m++) {
          q += D->U[i * D0 + k] * S[i * D0 + m] * D->U[m * D0 + l];
        }
      }
      assert_abs(q, k == l ? D->lambda[k] : 0.0, 1e-12);
      assert_abs(uu, k == l ? 1.0 : 0.0, 1e-13);
    }
  }
  assert_int_equal(D->diag.rank, D0);
  assert_int_equal(D->n_floored, 0);
  dpd__lrdata_free(D);
}

static void theta_is_the_least_squares_fit(void **state) {
  double X[N0 * D0], y[N0], x[N0 * D0], yy[N0], S[D0 * D0], b[D0] = {0}, th[D0];
  (void)state;
  make_set(N0, D0, 13, 0, X, y);
  write_npy("x.npy", X, N0, D0, 0);
  write_npy("y.npy", y, N0, 0, 0);
  dpd__lrdata_config c = config("x.npy", "y.npy");
  dpd__lrdata *D = create_ok(&c);
  rows_of(D, x, yy);
  direct_sigma(x, N0, D0, S);
  for (size_t j = 0; j < N0; j++) {
    for (size_t k = 0; k < D0; k++) {
      b[k] += x[j * D0 + k] * yy[j] / N0;
    }
  }
  chol_solve(S, D0, b, th);
  for (size_t k = 0; k < D0; k++) {
    assert_rel(D->theta_hat[k], th[k], 1e-10);
  }
  double z2 = 0.0;
  for (size_t j = 0; j < N0; j++) {
    double f = 0.0;
    for (size_t k = 0; k < D0; k++) {
      f += x[j * D0 + k] * th[k];
    }
    assert_abs(D->z[j], yy[j] - f, 1e-11);
    z2 += (yy[j] - f) * (yy[j] - f);
  }
  assert_rel(D->zeta2, z2 / N0, 1e-11);
  dpd__lrdata_free(D);
}

/* A duplicated column: Sigma^ has rank d - 1, theta^* is the minimum-norm fit (the duplicated
 * coefficient split in two equal halves). */
static void theta_is_minimum_norm_on_a_duplicated_column(void **state) {
  enum { E = D0 + 1 };
  double X[N0 * D0], X2[N0 * E], y[N0];
  (void)state;
  make_set(N0, D0, 14, 0, X, y);
  for (size_t i = 0; i < N0; i++) {
    memcpy(X2 + i * E, X + i * D0, D0 * sizeof *X);
    X2[i * E + D0] = X[i * D0 + 2];
  }
  write_npy("x.npy", X, N0, D0, 0);
  write_npy("x2.npy", X2, N0, E, 0);
  write_npy("y.npy", y, N0, 0, 0);
  dpd__lrdata_config c = config("x.npy", "y.npy");
  c.scale_trace = 0; /* the same x in both sets */
  dpd__lrdata *D = create_ok(&c);
  c.features_path = path_of("x2.npy");
  dpd__lrdata *D2 = create_ok(&c);
  assert_int_equal(D2->diag.rank, D0);
  assert_int_equal(D2->n_floored, 1);
  assert_true(fabs(D2->lambda[D0]) <= 1e-13 * D2->lambda[0]);
  for (size_t k = 0; k < D0; k++) {
    const double want = k == 2 ? D->theta_hat[k] / 2.0 : D->theta_hat[k];
    assert_rel(D2->theta_hat[k], want, 1e-9);
  }
  assert_rel(D2->theta_hat[D0], D->theta_hat[2] / 2.0, 1e-9);
  assert_rel(D2->zeta2, D->zeta2, 1e-10);
  assert_rel(D2->diag.leverage_max, D->diag.leverage_max, 1e-9);
  /* the ODE's problem: the null direction raised to the floor, no part of theta^* */
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_err err;
  dpd_err_reset(&err);
  c.scale_trace = 1;
  dpd__lrdata *D3 = create_ok(&c);
  assert_int_equal(dpd__lrdata_problem_config(D3, &pc, &err), DPD_OK);
  assert_true(D3->pc_values[D0] == DPD_LRDATA_LAMBDA_FLOOR * D3->lambda[0]);
  assert_true(D3->theta_eig[D0] == 0.0);
  assert_int_equal(D3->n_floored, 1);
  dpd__lrdata_free(D);
  dpd__lrdata_free(D2);
  dpd__lrdata_free(D3);
}

static void diagnostics_follow_their_formulas(void **state) {
  double X[N0 * D0], y[N0], x[N0 * D0], yy[N0], S[D0 * D0], v[D0], p[N0];
  (void)state;
  make_set(N0, D0, 15, 1, X, y);
  write_npy("x.npy", X, N0, D0, 0);
  write_npy("y.npy", y, N0, 0, 0);
  dpd__lrdata_config c = config("x.npy", "y.npy");
  dpd__lrdata *D = create_ok(&c);
  rows_of(D, x, yy);
  direct_sigma(x, N0, D0, S);
  /* a and the coefficient of variation of |x|^2 / tr Sigma^ */
  double qm = 0.0, qv = 0.0, hmax = 0.0, hsum = 0.0;
  for (size_t j = 0; j < N0; j++) {
    double q = 0.0;
    for (size_t k = 0; k < D0; k++) {
      q += x[j * D0 + k] * x[j * D0 + k];
    }
    assert_rel(D->a[j], q / D0, 1e-13);
    qm += q / D0;
  }
  qm /= N0;
  for (size_t j = 0; j < N0; j++) {
    double q = 0.0;
    for (size_t k = 0; k < D0; k++) {
      q += x[j * D0 + k] * x[j * D0 + k];
    }
    qv += (q / D0 - qm) * (q / D0 - qm);
  }
  assert_rel(D->diag.norm_cv, sqrt(qv / N0) / qm, 1e-12);
  /* leverage: h_j = x_j^T Sigma^-1 x_j / N */
  for (size_t j = 0; j < N0; j++) {
    double h = 0.0;
    chol_solve(S, D0, x + j * D0, v);
    for (size_t k = 0; k < D0; k++) {
      h += x[j * D0 + k] * v[k];
    }
    h /= N0;
    hsum += h;
    hmax = h > hmax ? h : hmax;
  }
  assert_rel(hsum, (double)D0, 1e-11); /* the hat matrix's trace is the rank */
  assert_rel(D->diag.leverage_max, hmax, 1e-11);
  assert_rel(D->diag.leverage_ratio, hmax / (hsum / N0), 1e-11);
  /* kurtosis along the top eigenvectors and of the residuals; the effective rank */
  assert_int_equal(D->diag.ntop, 5);
  for (size_t k = 0; k < 5; k++) {
    for (size_t j = 0; j < N0; j++) {
      p[j] = 0.0;
      for (size_t i = 0; i < D0; i++) {
        p[j] += D->U[i * D0 + k] * x[j * D0 + i];
      }
    }
    assert_rel(D->diag.kurt_top[k], kurtosis(p, N0), 1e-9);
  }
  assert_rel(D->diag.kurt_resid, kurtosis(D->z, N0), 1e-12);
  assert_true(D->diag.kurt_resid > 3.0); /* cubed Gaussians: heavy tails */
  double s1 = 0.0, s2 = 0.0;
  for (size_t k = 0; k < D0; k++) {
    s1 += S[k * D0 + k];
    for (size_t l = 0; l < D0; l++) {
      s2 += S[k * D0 + l] * S[k * D0 + l];
    }
  }
  assert_rel(D->diag.eff_rank, s1 * s1 / s2, 1e-12);
  dpd__lrdata_free(D);
}

/* Gaussian rows: the excess kurtosis along every top direction is 0 within 4 standard errors
 * (SE = sqrt(24 / N)), the norm's CV near sqrt(2 tr Sigma^2) / tr Sigma. */
static void gaussian_rows_have_no_excess_kurtosis(void **state) {
  enum { N = 20000, d = 5 };
  double *X = malloc(N * d * sizeof *X), *y = malloc(N * sizeof *y);
  dpd_rng rng;
  (void)state;
  assert_non_null(X);
  assert_non_null(y);
  dpd_rng_init(&rng, 2385, 3);
  dpd_rng_gaussian_fill(&rng, X, N * d);
  for (size_t i = 0; i < N; i++) {
    for (size_t k = 0; k < d; k++) {
      X[i * d + k] *= 1.0 + 0.6 * (double)k;
    }
  }
  write_npy("g.npy", X, N, d, 0);
  dpd__lrdata_config c = config("g.npy", NULL);
  dpd__lrdata *D = create_ok(&c);
  const double se = sqrt(24.0 / N);
  for (size_t k = 0; k < d; k++) {
    if (fabs(D->diag.kurt_top[k]) > 4.0 * se) {
      print_error("kurt_top[%zu] = %g, SE %g (seed 2385)\n", k, D->diag.kurt_top[k], se);
      fail();
    }
  }
  assert_true(isnan(D->diag.kurt_resid));
  double s2 = 0.0;
  for (size_t k = 0; k < d; k++) {
    s2 += D->lambda[k] * D->lambda[k];
  }
  assert_rel(D->diag.norm_cv, sqrt(2.0 * s2) / d, 0.05);
  assert_rel(D->diag.leverage_ratio * d / N, D->diag.leverage_max, 1e-10);
  dpd__lrdata_free(D);
  free(X);
  free(y);
}

static void split_is_seeded_sorted_and_disjoint(void **state) {
  double X[N0 * D0], y[N0], x[D0];
  (void)state;
  make_set(N0, D0, 16, 0, X, y);
  write_npy("x.npy", X, N0, D0, 0);
  write_npy("y.npy", y, N0, 0, 0);
  dpd__lrdata_config c = config("x.npy", "y.npy");
  c.test_fraction = 0.3;
  dpd__lrdata *D = create_ok(&c), *D2 = create_ok(&c);
  assert_int_equal(D->n_test, 47); /* floor(0.3 * 157) */
  assert_int_equal(D->n_pop, N0 - 47);
  size_t seen[N0] = {0};
  for (size_t j = 0; j < D->n_pop; j++) {
    assert_true(j == 0 || D->pop_idx[j] > D->pop_idx[j - 1]);
    seen[D->pop_idx[j]]++;
  }
  for (size_t j = 0; j < D->n_test; j++) {
    assert_true(j == 0 || D->test_idx[j] > D->test_idx[j - 1]);
    seen[D->test_idx[j]]++;
    assert_true(D->test_idx[j] == D2->test_idx[j]);
  }
  for (size_t i = 0; i < N0; i++) {
    assert_int_equal(seen[i], 1);
  }
  /* the means are over the population only */
  for (size_t k = 0; k < D0; k++) {
    double s = 0.0;
    for (size_t j = 0; j < D->n_pop; j++) {
      s += X[D->pop_idx[j] * D0 + k];
    }
    assert_rel(D->mean[k], s / (double)D->n_pop, 1e-14);
  }
  dpd__lrdata_row(D, 5, x, NULL);
  assert_true(x[0] == D->scale * (X[D->pop_idx[5] * D0] - D->mean[0]));
  /* another seed, another split; a tiny fraction still holds out one row */
  c.seed++;
  dpd__lrdata *D3 = create_ok(&c);
  assert_memory_not_equal(D3->test_idx, D->test_idx, D->n_test * sizeof *D->test_idx);
  c.test_fraction = 1e-9;
  dpd__lrdata *D4 = create_ok(&c);
  assert_int_equal(D4->n_test, 1);
  dpd__lrdata_free(D);
  dpd__lrdata_free(D2);
  dpd__lrdata_free(D3);
  dpd__lrdata_free(D4);
}

/* The ODE's problem from the dataset: lambda in the same order, R(0) = (1/2) theta^*T Sigma^
 * theta^*, R(e) = (1/2) e^T Sigma^ e. */
static void problem_config_gives_the_data_risk(void **state) {
  double X[N0 * D0], y[N0], e[D0], eo[D0];
  dpd_linreg_problem *p = NULL;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  make_set(N0, D0, 17, 0, X, y);
  write_npy("x.npy", X, N0, D0, 0);
  write_npy("y.npy", y, N0, 0, 0);
  dpd__lrdata_config c = config("x.npy", "y.npy");
  dpd__lrdata *D = create_ok(&c);
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  assert_int_equal(dpd__lrdata_problem_config(D, &pc, &err), DPD_OK);
  assert_int_equal(pc.spectrum, DPD_SPECTRUM_LIST);
  assert_int_equal(pc.theta, DPD_THETA_GIVEN);
  assert_true(pc.theta_norm == 0.0);
  if (dpd_linreg_problem_create(&pc, &p, &err) != DPD_OK) {
    print_error("problem: %s\n", err.reason);
    fail();
  }
  for (size_t k = 0; k < D0; k++) {
    assert_rel(p->lambda[k], D->lambda[k], 1e-12);
  }
  double r0 = 0.0, re = 0.0;
  dpd_rng rng;
  dpd_rng_init(&rng, 99, 0);
  dpd_rng_gaussian_fill(&rng, e, D0);
  dpd__lrdata_to_original(D, e, eo);
  for (size_t k = 0; k < D0; k++) {
    for (size_t l = 0; l < D0; l++) {
      r0 += 0.5 * D->theta_hat[k] * D->sigma[k * D0 + l] * D->theta_hat[l];
      re += 0.5 * eo[k] * D->sigma[k * D0 + l] * eo[l];
    }
  }
  assert_rel(dpd_linreg_initial_risk(p), r0, 1e-12);
  assert_rel(dpd_linreg_excess_risk(p, e), re, 1e-12);
  dpd_linreg_problem_free(p);
  dpd__lrdata_free(D);

  /* model targets: the theta* rule is the caller's; without the trace scaling: refused */
  c.targets_path = NULL;
  c.scale_trace = 0;
  D = create_ok(&c);
  pc = dpd_linreg_problem_config_default();
  pc.theta = DPD_THETA_FLAT;
  expect_fail(dpd__lrdata_problem_config(D, &pc, &err), &err, "tr Sigma^", NULL);
  dpd__lrdata_free(D);
  c.scale_trace = 1;
  D = create_ok(&c);
  assert_int_equal(dpd__lrdata_problem_config(D, &pc, &err), DPD_OK);
  assert_int_equal(pc.theta, DPD_THETA_FLAT);
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, &err), DPD_OK);
  dpd_linreg_problem_free(p);
  dpd__lrdata_free(D);
}

/* float32 rows give the results of the same values in float64; the thread count changes no bit. */
static void float32_and_thread_count_change_nothing(void **state) {
  double X[N0 * D0], y[N0];
  (void)state;
  make_set(N0, D0, 18, 0, X, y);
  for (size_t i = 0; i < N0 * D0; i++) {
    /* through a volatile float: GCC 12.2 at -O3 leaves the last elements of the vectorised loop
     * X[i] = (double)(float)X[i] unrounded */
    volatile float f = (float)X[i];
    X[i] = f;
  }
  write_npy("x8.npy", X, N0, D0, 0);
  write_npy("x4.npy", X, N0, D0, 1);
  write_npy("y.npy", y, N0, 0, 0);
  dpd__lrdata_config c = config("x8.npy", "y.npy");
  c.threads = 1;
  dpd__lrdata *A = create_ok(&c);
  c.features_path = path_of("x4.npy");
  c.threads = 3;
  dpd__lrdata *B = create_ok(&c);
  assert_true(B->X.f32 == 1 && A->X.f32 == 0);
  assert_memory_equal(A->sigma, B->sigma, D0 * D0 * sizeof *A->sigma);
  assert_memory_equal(A->U, B->U, D0 * D0 * sizeof *A->U);
  assert_memory_equal(A->theta_hat, B->theta_hat, D0 * sizeof *A->theta_hat);
  assert_memory_equal(A->a, B->a, N0 * sizeof *A->a);
  assert_memory_equal(A->z, B->z, N0 * sizeof *A->z);
  assert_memory_equal(&A->diag, &B->diag, sizeof A->diag);
  dpd__lrdata_free(A);
  dpd__lrdata_free(B);
}

static void bad_data_is_refused_naming_the_key(void **state) {
  double X[N0 * D0], y[N0], Z[N0 * 3], y2[2 * N0];
  dpd__lrdata *D = NULL;
  dpd_err err;
  size_t N = 0, d = 0;
  double bytes = 0.0;
  (void)state;
  dpd_err_reset(&err);
  make_set(N0, D0, 19, 0, X, y);
  write_npy("x.npy", X, N0, D0, 0);
  write_npy("y30.npy", y, 30, 0, 0);
  dpd__lrdata_config c = config("x.npy", "y30.npy");
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'targets'", "has 30 rows");
  assert_non_null(strstr(err.reason, "'features'"));
  assert_non_null(strstr(err.reason, "157"));
  expect_fail(dpd__lrdata_check(&c, &N, &d, &bytes, &err), &err, "'targets'", "has 30 rows");
  /* two target columns */
  for (size_t i = 0; i < 2 * N0; i++) {
    y2[i] = y[i / 2] + (double)(i % 2);
  }
  write_npy("y2.npy", y2, N0, 2, 0);
  c = config("x.npy", "y2.npy");
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'targets'", "2 columns");
  /* constant features (after centring), also constant and zero without centring */
  for (size_t i = 0; i < N0 * 3; i++) {
    Z[i] = 0.1 * (double)(i % 3 + 1);
  }
  write_npy("const.npy", Z, N0, 3, 0);
  write_npy("y.npy", y, N0, 0, 0);
  c = config("const.npy", "y.npy");
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'features'", "all features are constant");
  c.center = 0; /* constant but not zero: a valid (rank-one) set */
  c.target_unit = 0;
  D = create_ok(&c);
  assert_int_equal(D->diag.rank, 1);
  dpd__lrdata_free(D);
  D = NULL;
  memset(Z, 0, sizeof Z);
  write_npy("zero.npy", Z, N0, 3, 0);
  c = config("zero.npy", "y.npy");
  c.center = 0;
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'features'", "all features are constant");
  /* constant targets scaled to unit variance */
  for (size_t i = 0; i < N0; i++) {
    y[i] = 2.385;
  }
  write_npy("yc.npy", y, N0, 0, 0);
  c = config("x.npy", "yc.npy");
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'targets'", "constant");
  /* test_fraction: out of range, or leaving fewer than 2 rows */
  make_set(N0, D0, 19, 0, X, y);
  write_npy("x3.npy", X, 3, D0, 0);
  write_npy("y3.npy", y, 3, 0, 0);
  c = config("x3.npy", "y3.npy");
  c.test_fraction = 0.5; /* one row held out, two left */
  D = create_ok(&c);
  assert_int_equal(D->n_pop, 2);
  dpd__lrdata_free(D);
  D = NULL;
  c.test_fraction = 0.7;
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'test_fraction'", "leaving 1");
  expect_fail(dpd__lrdata_check(&c, &N, &d, &bytes, &err), &err, "'test_fraction'", NULL);
  c.test_fraction = 1.0;
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'test_fraction'", "< 1");
  /* a file that does not exist: the datamat error names the key */
  c = config("missing.npy", NULL);
  expect_fail(dpd__lrdata_create(&c, &D, &err), &err, "'features'", NULL);
  assert_null(D);
  /* check: the shape and the bytes */
  c = config("x.npy", "y.npy");
  assert_int_equal(dpd__lrdata_check(&c, &N, &d, &bytes, &err), DPD_OK);
  assert_int_equal(N, N0);
  assert_int_equal(d, D0);
  assert_true(bytes >= (double)(N0 * D0 + N0) * 8.0);
}

/* The OpenBLAS thread count changes no bit either (d = 160, N = 3000: the threaded BLAS paths). */
static void openblas_thread_count_changes_nothing(void **state) {
  enum { N = 3000, d = 160 };
  double *X = malloc(N * d * sizeof *X), *y = malloc(N * sizeof *y);
  dpd_rng rng;
  (void)state;
  assert_non_null(X);
  assert_non_null(y);
  dpd_rng_init(&rng, 4242, 5);
  dpd_rng_gaussian_fill(&rng, X, N * d);
  dpd_rng_gaussian_fill(&rng, y, N);
  for (size_t i = 0; i < N; i++) {
    for (size_t k = 0; k < d; k++) {
      X[i * d + k] = X[i * d + k] * (1.0 + 0.05 * (double)k) + 0.3 * X[i * d + (k * 7) % d];
      y[i] += 0.01 * (double)k * X[i * d + k];
    }
  }
  write_npy("t.npy", X, N, d, 0);
  write_npy("ty.npy", y, N, 0, 0);
  dpd__lrdata_config c = config("t.npy", "ty.npy");
  const int saved = openblas_get_num_threads();
  openblas_set_num_threads(1);
  dpd__lrdata *A = create_ok(&c);
  openblas_set_num_threads(2);
  dpd__lrdata *B = create_ok(&c);
  openblas_set_num_threads(saved);
  assert_memory_equal(A->sigma, B->sigma, d * d * sizeof *A->sigma);
  assert_memory_equal(A->lambda, B->lambda, d * sizeof *A->lambda);
  assert_memory_equal(A->U, B->U, d * d * sizeof *A->U);
  assert_memory_equal(A->theta_hat, B->theta_hat, d * sizeof *A->theta_hat);
  assert_memory_equal(A->z, B->z, N * sizeof *A->z);
  assert_memory_equal(&A->diag, &B->diag, sizeof A->diag);
  dpd__lrdata_free(A);
  dpd__lrdata_free(B);
  free(X);
  free(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(preprocessing_factors_are_exact),
      cmocka_unit_test(sigma_and_eigenpairs_match_the_direct_loop),
      cmocka_unit_test(theta_is_the_least_squares_fit),
      cmocka_unit_test(theta_is_minimum_norm_on_a_duplicated_column),
      cmocka_unit_test(diagnostics_follow_their_formulas),
      cmocka_unit_test(gaussian_rows_have_no_excess_kurtosis),
      cmocka_unit_test(split_is_seeded_sorted_and_disjoint),
      cmocka_unit_test(problem_config_gives_the_data_risk),
      cmocka_unit_test(float32_and_thread_count_change_nothing),
      cmocka_unit_test(openblas_thread_count_changes_nothing),
      cmocka_unit_test(bad_data_is_refused_naming_the_key),
  };
  return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
