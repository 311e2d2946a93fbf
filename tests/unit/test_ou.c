/* Unit tests for the OU theory of unclipped full-batch DP-GD on random features
 * (docs/math.md §2.4).
 * SPDX-License-Identifier: MIT
 *
 * Independent references, all dense and brute force on small problems (n = 30, p = 50 and 20):
 *  - theta* from LAPACK dgelsd (SVD-based minimum-norm least squares);
 *  - the discrete mean from plain iteration of noiseless full-batch GD;
 *  - the continuous mean and covariance from the eigendecomposition of the p x p matrix
 *    A = (2/n) Phi^T Phi (gsl_eigen_symmv): e^{-At} and Sigma^2 int_0^t e^{-2As} ds;
 *  - the discrete covariance from the recursion Cov_{k+1} = G Cov_k G^T + eta Sigma_n^2 I,
 *    G = I - eta A. */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <lapacke.h>

#include "dpdyn/ou.h"

static const unsigned long test_seed = 20251122UL;

typedef struct {
  size_t n;
  size_t p;
  size_t m;
  double *phi;
  double *y;
  double *phi_test;
  double *y_test;
} problem;

static problem problem_make(size_t n, size_t p, size_t m, unsigned long seed) {
  problem pr;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, seed);
  pr.n = n;
  pr.p = p;
  pr.m = m;
  pr.phi = malloc(n * p * sizeof *pr.phi);
  pr.y = malloc(n * sizeof *pr.y);
  pr.phi_test = malloc(m * p * sizeof *pr.phi_test);
  pr.y_test = malloc(m * sizeof *pr.y_test);
  assert_non_null(pr.phi);
  assert_non_null(pr.y);
  assert_non_null(pr.phi_test);
  assert_non_null(pr.y_test);
  /* tanh random features of Gaussian pre-activations, as in docs/math.md §2.1 (scale ~ 1). */
  for (size_t i = 0; i < n * p; i++) {
    pr.phi[i] = tanh(1.3 * gsl_ran_gaussian(rng, 1.0));
  }
  for (size_t i = 0; i < n; i++) {
    pr.y[i] = 0.7 + gsl_ran_gaussian(rng, 1.1);
  }
  for (size_t i = 0; i < m * p; i++) {
    pr.phi_test[i] = tanh(1.3 * gsl_ran_gaussian(rng, 1.0));
  }
  for (size_t i = 0; i < m; i++) {
    pr.y_test[i] = 0.7 + gsl_ran_gaussian(rng, 1.1);
  }
  gsl_rng_free(rng);
  return pr;
}

static void problem_free(problem *pr) {
  free(pr->phi);
  free(pr->y);
  free(pr->phi_test);
  free(pr->y_test);
}

static dpd_ou *ou_or_fail(const problem *pr) {
  dpd_err err;
  dpd_ou *ou = NULL;
  int status;
  dpd_err_reset(&err);
  status = dpd_ou_create(NULL, pr->phi, pr->n, pr->p, pr->y, &ou, &err);
  if (status != DPD_OK) {
    print_error("dpd_ou_create (seed %lu): %s\n", test_seed, err.reason);
    fail();
  }
  return ou;
}

static double norm2(const double *x, size_t len) {
  double s = 0.0;
  for (size_t i = 0; i < len; i++) {
    s += x[i] * x[i];
  }
  return sqrt(s);
}

static double diff_norm(const double *x, const double *z, size_t len) {
  double s = 0.0;
  for (size_t i = 0; i < len; i++) {
    s += (x[i] - z[i]) * (x[i] - z[i]);
  }
  return sqrt(s);
}

/* A = (2/n) Phi^T Phi, dense p x p, and its eigendecomposition (eval, evec columns). */
typedef struct {
  gsl_matrix *a;
  gsl_vector *eval;
  gsl_matrix *evec;
} dense_a;

static dense_a dense_a_make(const problem *pr) {
  dense_a d;
  gsl_matrix *tmp = gsl_matrix_alloc(pr->p, pr->p);
  gsl_eigen_symmv_workspace *w = gsl_eigen_symmv_alloc(pr->p);
  gsl_matrix_const_view ph = gsl_matrix_const_view_array(pr->phi, pr->n, pr->p);
  d.a = gsl_matrix_alloc(pr->p, pr->p);
  d.eval = gsl_vector_alloc(pr->p);
  d.evec = gsl_matrix_alloc(pr->p, pr->p);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 2.0 / (double)pr->n, &ph.matrix, &ph.matrix, 0.0, d.a);
  gsl_matrix_memcpy(tmp, d.a);
  assert_int_equal(gsl_eigen_symmv(tmp, d.eval, d.evec, w), GSL_SUCCESS);
  gsl_eigen_symmv_free(w);
  gsl_matrix_free(tmp);
  return d;
}

static void dense_a_free(dense_a *d) {
  gsl_matrix_free(d->a);
  gsl_vector_free(d->eval);
  gsl_matrix_free(d->evec);
}

/* out = V diag(f(lambda)) V^T x */
static void dense_apply(const dense_a *d, double (*f)(double, double), double t, const double *x,
                        double *out, size_t p) {
  for (size_t k = 0; k < p; k++) {
    out[k] = 0.0;
  }
  for (size_t j = 0; j < p; j++) {
    double dot = 0.0;
    double lam = gsl_vector_get(d->eval, j);
    for (size_t k = 0; k < p; k++) {
      dot += gsl_matrix_get(d->evec, k, j) * x[k];
    }
    dot *= f(lam, t);
    for (size_t k = 0; k < p; k++) {
      out[k] += gsl_matrix_get(d->evec, k, j) * dot;
    }
  }
}

static double f_exp(double lam, double t) {
  return exp(-lam * t);
}

static double f_cov(double lam, double t) {
  return (lam == 0.0) ? t : -expm1(-2.0 * lam * t) / (2.0 * lam);
}

static void run_theta_star_matches_dgelsd(size_t p) {
  problem pr = problem_make(30, p, 7, test_seed + p);
  dpd_ou *ou = ou_or_fail(&pr);
  size_t n = pr.n;
  size_t ld = (n > p) ? n : p;
  double *a = malloc(n * p * sizeof *a);
  double *b = calloc(ld, sizeof *b);
  double *sv = malloc(((n < p) ? n : p) * sizeof *sv);
  double *theta = malloc(p * sizeof *theta);
  lapack_int rank = 0;
  memcpy(a, pr.phi, n * p * sizeof *a);
  memcpy(b, pr.y, n * sizeof *b);
  assert_int_equal(LAPACKE_dgelsd(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)p, 1, a,
                                  (lapack_int)p, b, 1, sv, DPD_OU_RCOND_DEFAULT, &rank),
                   0);
  dpd_ou_theta_star_get(ou, theta);
  assert_int_equal((size_t)rank, dpd_ou_rank_get(ou));
  assert_abs(diff_norm(theta, b, p) / norm2(b, p), 0.0, 1e-10);
  free(a);
  free(b);
  free(sv);
  free(theta);
  dpd_ou_free(ou);
  problem_free(&pr);
}

static void theta_star_matches_lapack_dgelsd_min_norm(void **state) {
  (void)state;
  run_theta_star_matches_dgelsd(50);
  run_theta_star_matches_dgelsd(20);
}

static void run_mean_paths(size_t p) {
  problem pr = problem_make(30, p, 7, test_seed + 3 * p);
  dpd_ou *ou = ou_or_fail(&pr);
  dense_a d = dense_a_make(&pr);
  size_t n = pr.n;
  double eta = 0.0413;
  double *theta = calloc(p, sizeof *theta);
  double *resid = malloc(n * sizeof *resid);
  double *mean = malloc(p * sizeof *mean);
  double *ts = malloc(p * sizeof *ts);
  double *et = malloc(p * sizeof *et);
  dpd_err err;
  dpd_ou_params par = {eta, 1.0, 0.0, DPD_OU_DISCRETE};
  dpd_err_reset(&err);
  dpd_ou_theta_star_get(ou, ts);
  for (size_t k = 0; k <= 300; k++) {
    if (k % 37 == 0 || k == 1 || k == 300) {
      double scale = norm2(ts, p);
      /* discrete: brute-force GD */
      par.time = DPD_OU_DISCRETE;
      assert_int_equal(dpd_ou_mean_eval(ou, &par, k, mean, &err), DPD_OK);
      assert_abs(diff_norm(mean, theta, p) / scale, 0.0, 1e-10);
      /* continuous at t = eta k: (I - e^{-At}) theta* from the dense eigendecomposition */
      par.time = DPD_OU_CONTINUOUS;
      assert_int_equal(dpd_ou_mean_eval(ou, &par, k, mean, &err), DPD_OK);
      dense_apply(&d, f_exp, eta * (double)k, ts, et, p);
      for (size_t q = 0; q < p; q++) {
        et[q] = ts[q] - et[q];
      }
      assert_abs(diff_norm(mean, et, p) / scale, 0.0, 1e-9);
    }
    /* theta <- theta - eta (2/n) Phi^T (Phi theta - y) */
    for (size_t i = 0; i < n; i++) {
      double acc = -pr.y[i];
      for (size_t q = 0; q < p; q++) {
        acc += pr.phi[i * p + q] * theta[q];
      }
      resid[i] = acc;
    }
    for (size_t q = 0; q < p; q++) {
      double g = 0.0;
      for (size_t i = 0; i < n; i++) {
        g += pr.phi[i * p + q] * resid[i];
      }
      theta[q] -= eta * 2.0 / (double)n * g;
    }
  }
  free(theta);
  free(resid);
  free(mean);
  free(ts);
  free(et);
  dense_a_free(&d);
  dpd_ou_free(ou);
  problem_free(&pr);
}

static void mean_path_matches_gd_iteration_and_matrix_exponential(void **state) {
  (void)state;
  run_mean_paths(50);
  run_mean_paths(20);
}

/* (1/m) sum_i phi_test_i^T Cov phi_test_i = Tr(Cov Sigma_phi). */
static double trace_cov_sigma_phi(const gsl_matrix *cov, const problem *pr) {
  double acc = 0.0;
  size_t p = pr->p;
  for (size_t i = 0; i < pr->m; i++) {
    const double *x = pr->phi_test + i * p;
    for (size_t a = 0; a < p; a++) {
      double row = 0.0;
      for (size_t b = 0; b < p; b++) {
        row += gsl_matrix_get(cov, a, b) * x[b];
      }
      acc += x[a] * row;
    }
  }
  return acc / (double)pr->m;
}

static void run_covariance(size_t p) {
  problem pr = problem_make(30, p, 11, test_seed + 5 * p);
  dpd_ou *ou = ou_or_fail(&pr);
  dense_a d = dense_a_make(&pr);
  size_t n = pr.n;
  double eta = 0.0291;
  double clip = 1.87;
  double sigma = 0.613;
  double sn = 2.0 * clip * sigma / (double)n;
  static const size_t grid[] = {0, 1, 2, 17, 60, 150};
  size_t nt = sizeof grid / sizeof grid[0];
  dpd_ou_risk risk_d[6];
  dpd_ou_risk risk_c[6];
  gsl_matrix *cov = gsl_matrix_calloc(p, p);
  gsl_matrix *g = gsl_matrix_alloc(p, p);
  gsl_matrix *tmp = gsl_matrix_alloc(p, p);
  gsl_matrix *covc = gsl_matrix_alloc(p, p);
  double *theta = calloc(p, sizeof *theta);
  double *resid = malloc(n * sizeof *resid);
  double *col = malloc(p * sizeof *col);
  double *e = calloc(p, sizeof *e);
  dpd_err err;
  dpd_ou_params par = {eta, clip, sigma, DPD_OU_DISCRETE};
  size_t gi = 0;
  dpd_err_reset(&err);

  assert_int_equal(dpd_ou_risk_eval(ou, &par, pr.phi_test, pr.m, pr.y_test, grid, nt, risk_d, &err),
                   DPD_OK);
  par.time = DPD_OU_CONTINUOUS;
  assert_int_equal(dpd_ou_risk_eval(ou, &par, pr.phi_test, pr.m, pr.y_test, grid, nt, risk_c, &err),
                   DPD_OK);
  for (size_t a = 0; a < p; a++) {
    for (size_t b = 0; b < p; b++) {
      gsl_matrix_set(g, a, b, (a == b ? 1.0 : 0.0) - eta * gsl_matrix_get(d.a, a, b));
    }
  }
  for (size_t k = 0; k <= grid[nt - 1]; k++) {
    if (k == grid[gi]) {
      /* discrete: noise from the dense recursion, bias from brute GD */
      double bias = 0.0;
      double want = trace_cov_sigma_phi(cov, &pr);
      double t = eta * (double)k;
      for (size_t i = 0; i < pr.m; i++) {
        double pred = 0.0;
        for (size_t q = 0; q < p; q++) {
          pred += pr.phi_test[i * p + q] * theta[q];
        }
        bias += (pred - pr.y_test[i]) * (pred - pr.y_test[i]);
      }
      bias /= (double)pr.m;
      assert_rel(risk_d[gi].noise, want, 1e-9);
      assert_rel(risk_d[gi].bias, bias, 1e-9);
      assert_rel(risk_d[gi].risk, bias + want, 1e-9);
      /* continuous: Sigma^2 V diag((1 - e^{-2 lambda t}) / (2 lambda)) V^T */
      for (size_t b = 0; b < p; b++) {
        e[b] = 1.0;
        dense_apply(&d, f_cov, t, e, col, p);
        e[b] = 0.0;
        for (size_t a = 0; a < p; a++) {
          gsl_matrix_set(covc, a, b, sn * sn * col[a]);
        }
      }
      assert_rel(risk_c[gi].noise, trace_cov_sigma_phi(covc, &pr), 1e-9);
      gi++;
      if (gi == nt) {
        break;
      }
    }
    /* Cov <- G Cov G^T + eta Sigma_n^2 I */
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, g, cov, 0.0, tmp);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, tmp, g, 0.0, cov);
    for (size_t a = 0; a < p; a++) {
      gsl_matrix_set(cov, a, a, gsl_matrix_get(cov, a, a) + eta * sn * sn);
    }
    for (size_t i = 0; i < n; i++) {
      double acc = -pr.y[i];
      for (size_t q = 0; q < p; q++) {
        acc += pr.phi[i * p + q] * theta[q];
      }
      resid[i] = acc;
    }
    for (size_t q = 0; q < p; q++) {
      double gr = 0.0;
      for (size_t i = 0; i < n; i++) {
        gr += pr.phi[i * p + q] * resid[i];
      }
      theta[q] -= eta * 2.0 / (double)n * gr;
    }
  }
  assert_int_equal(gi, nt);
  print_message("p = %zu: risk at k = %zu: bias %.6g noise %.6g (continuous noise %.6g)\n", p,
                grid[nt - 1], risk_d[nt - 1].bias, risk_d[nt - 1].noise, risk_c[nt - 1].noise);
  gsl_matrix_free(cov);
  gsl_matrix_free(g);
  gsl_matrix_free(tmp);
  gsl_matrix_free(covc);
  free(theta);
  free(resid);
  free(col);
  free(e);
  dense_a_free(&d);
  dpd_ou_free(ou);
  problem_free(&pr);
}

static void covariance_trace_matches_dense_recursion_and_integral(void **state) {
  (void)state;
  run_covariance(50);
  run_covariance(20);
}

/* Brute-force first grid index where some |phi_i^T theta_k - y_i| >= C / (2 ||phi_i||), on
 * the GD iterates. */
static size_t brute_exit(const problem *pr, double eta, double clip, const size_t *grid,
                         size_t nt, double *path_max) {
  size_t n = pr->n;
  size_t p = pr->p;
  double *theta = calloc(p, sizeof *theta);
  double *resid = malloc(n * sizeof *resid);
  size_t gi = 0;
  size_t found = nt;
  for (size_t k = 0; gi < nt && found == nt; k++) {
    for (size_t i = 0; i < n; i++) {
      double acc = -pr->y[i];
      for (size_t q = 0; q < p; q++) {
        acc += pr->phi[i * p + q] * theta[q];
      }
      resid[i] = acc;
    }
    if (k == grid[gi]) {
      for (size_t i = 0; i < n; i++) {
        double nrm = norm2(pr->phi + i * p, p);
        if (path_max != NULL && 2.0 * fabs(resid[i]) * nrm > *path_max) {
          *path_max = 2.0 * fabs(resid[i]) * nrm;
        }
        if (fabs(resid[i]) >= clip / (2.0 * nrm)) {
          found = gi;
          break;
        }
      }
      gi++;
    }
    for (size_t q = 0; q < p; q++) {
      double gr = 0.0;
      for (size_t i = 0; i < n; i++) {
        gr += pr->phi[i * p + q] * resid[i];
      }
      theta[q] -= eta * 2.0 / (double)n * gr;
    }
  }
  free(theta);
  free(resid);
  return found;
}

static void exit_step_matches_brute_force_scan(void **state) {
  problem pr = problem_make(30, 20, 3, test_seed + 11);
  dpd_ou *ou;
  size_t grid[80];
  size_t idx = 0;
  double eta = 0.0377;
  double c0 = 0.0;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  /* Labels built so that the path leaves the no-clip set strictly after t = 0. In the row space
   * the residual is r(t) = -e^{-K t} y, K = (2/n) Phi Phi^T. With p < n, z = P_S e_i (P_S the
   * projector on the null space of K, which never decays) and y = z - z_i e_i, y_i = 0, the fast part of y
   * is -z_i P_F e_i and decays first, so r_i(t) rises towards about -(1 - z_i) z_i while the
   * other initial labels z_k are smaller. The sample i with the largest rise (weighted by
   * ||phi_i||, relative to max_k 2 |y_k| ||phi_k||) is chosen. */
  {
    size_t n = pr.n;
    size_t half = n - pr.p; /* p < n: the n - p zero modes of K never decay */
    double *g = malloc(n * n * sizeof *g);
    double *lam = malloc(n * sizeof *lam);
    double *yy = malloc(n * sizeof *yy);
    double best = 0.0;
    size_t bi = 0;
    assert_non_null(g);
    assert_non_null(lam);
    assert_non_null(yy);
    for (size_t a = 0; a < n; a++) {
      for (size_t b = 0; b < n; b++) {
        double acc = 0.0;
        for (size_t q = 0; q < pr.p; q++) {
          acc += pr.phi[a * pr.p + q] * pr.phi[b * pr.p + q];
        }
        g[a * n + b] = acc;
      }
    }
    assert_int_equal(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)n, g, (lapack_int)n,
                                   lam),
                     0);
    for (size_t pass = 0; pass < 2; pass++) {
      for (size_t i = 0; i < n; i++) {
        double init = 0.0;
        double peak = 0.0;
        size_t ii = (pass == 0) ? i : bi;
        for (size_t k = 0; k < n; k++) {
          double zk = 0.0;
          for (size_t j = 0; j < half; j++) {
            zk += g[k * n + j] * g[ii * n + j];
          }
          yy[k] = (k == ii) ? 0.0 : zk;
          init = fmax(init, 2.0 * fabs(yy[k]) * norm2(pr.phi + k * pr.p, pr.p));
        }
        if (pass == 1) {
          memcpy(pr.y, yy, n * sizeof *yy);
          break;
        }
        for (size_t it = 0; it < 80; it++) {
          double t = eta * 3.0 * (double)it;
          for (size_t k = 0; k < n; k++) {
            double rk = 0.0;
            for (size_t j = 0; j < n; j++) {
              double uy = 0.0;
              for (size_t l = 0; l < n; l++) {
                uy += g[l * n + j] * yy[l];
              }
              rk += g[k * n + j] * exp(-2.0 * lam[j] / (double)n * t) * uy;
            }
            peak = fmax(peak, 2.0 * fabs(rk) * norm2(pr.phi + k * pr.p, pr.p));
          }
        }
        if (peak / init > best) {
          best = peak / init;
          bi = i;
        }
      }
    }
    print_message("label construction: sample %zu, rise ratio %.4f\n", bi, best);
    free(g);
    free(lam);
    free(yy);
  }
  ou = ou_or_fail(&pr);
  for (size_t i = 0; i < 80; i++) {
    grid[i] = 3 * i;
  }
  /* c0: the smallest C for which theta = 0 is inside the no-clip set. */
  for (size_t i = 0; i < pr.n; i++) {
    double v = 2.0 * fabs(pr.y[i]) * norm2(pr.phi + i * pr.p, pr.p);
    if (v > c0) {
      c0 = v;
    }
  }
  {
    static const double factors[] = {0.5, 1.0001, 1.05, 1.3, 2.0, 50.0};
    for (size_t f = 0; f < sizeof factors / sizeof factors[0]; f++) {
      dpd_ou_params par = {eta, factors[f] * c0, 1.0, DPD_OU_DISCRETE};
      size_t want = brute_exit(&pr, eta, par.clip, grid, 80, NULL);
      assert_int_equal(dpd_ou_exit_step(ou, &par, grid, 80, &idx, &err), DPD_OK);
      print_message("C = %.4f c0: exit index %zu (brute %zu)\n", factors[f], idx, want);
      assert_int_equal(idx, want);
    }
  }
  {
    /* A C between c0 and the largest value along the path: the exit is strictly inside. */
    double cmax = 0.0;
    dpd_ou_params par = {eta, 0.0, 1.0, DPD_OU_DISCRETE};
    size_t want;
    (void)brute_exit(&pr, eta, 1e300, grid, 80, &cmax);
    print_message("c0 = %.6g, path max of 2 |r_i| ||phi_i|| = %.6g\n", c0, cmax);
    assert_true(cmax > c0 * (1.0 + 1e-6));
    par.clip = 0.5 * (c0 + cmax);
    want = brute_exit(&pr, eta, par.clip, grid, 80, NULL);
    assert_int_equal(dpd_ou_exit_step(ou, &par, grid, 80, &idx, &err), DPD_OK);
    print_message("C = (c0 + cmax)/2: exit index %zu (brute %zu)\n", idx, want);
    assert_true(want > 0 && want < 80);
    assert_int_equal(idx, want);
  }
  {
    dpd_ou_params par = {eta, 0.5 * c0, 1.0, DPD_OU_CONTINUOUS};
    assert_int_equal(dpd_ou_exit_step(ou, &par, grid, 80, &idx, &err), DPD_OK);
    assert_int_equal(idx, 0);
    par.clip = 1e6 * c0;
    assert_int_equal(dpd_ou_exit_step(ou, &par, grid, 80, &idx, &err), DPD_OK);
    assert_int_equal(idx, 80);
  }
  dpd_ou_free(ou);
  problem_free(&pr);
}

/* Discrete moments tend to the continuous ones as eta -> 0 at fixed t = eta k, with an O(eta)
 * gap (notes A.5): halving eta roughly halves the gap. */
static void discrete_tends_to_continuous_at_first_order_in_eta(void **state) {
  problem pr = problem_make(30, 50, 13, test_seed + 23);
  dpd_ou *ou = ou_or_fail(&pr);
  double t = 0.731;
  double gap_prev = 0.0;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  for (size_t level = 0; level < 4; level++) {
    size_t k = (size_t)100 << level;
    dpd_ou_params par = {t / (double)k, 1.3, 0.9, DPD_OU_DISCRETE};
    dpd_ou_risk rd;
    dpd_ou_risk rc;
    double gap;
    assert_int_equal(dpd_ou_risk_eval(ou, &par, pr.phi_test, pr.m, pr.y_test, &k, 1, &rd, &err),
                     DPD_OK);
    par.time = DPD_OU_CONTINUOUS;
    assert_int_equal(dpd_ou_risk_eval(ou, &par, pr.phi_test, pr.m, pr.y_test, &k, 1, &rc, &err),
                     DPD_OK);
    gap = fabs(rd.risk - rc.risk);
    print_message("eta = %.3g: |risk_discrete - risk_continuous| = %.3e\n", par.eta, gap);
    if (level > 0) {
      assert_true(gap < 0.6 * gap_prev && gap > 0.4 * gap_prev);
    }
    gap_prev = gap;
  }
  dpd_ou_free(ou);
  problem_free(&pr);
}

static void rejects_invalid_arguments(void **state) {
  problem pr = problem_make(6, 9, 2, test_seed + 17);
  dpd_ou *ou = NULL;
  dpd_err err;
  dpd_ou_config cfg = dpd_ou_config_default();
  dpd_ou_params par = {0.1, 1.0, 1.0, DPD_OU_DISCRETE};
  dpd_ou_risk r[1];
  size_t steps[1] = {3};
  size_t idx = 0;
  double theta[9];
  (void)state;
#define EXPECT_EINVAL(call, needle)                                                               \
  do {                                                                                            \
    dpd_err_reset(&err);                                                                          \
    assert_int_equal((call), DPD_EINVAL);                                                         \
    if (strstr(err.reason, (needle)) == NULL) {                                                   \
      print_error("reason '%s' lacks '%s'\n", err.reason, (needle));                              \
      fail();                                                                                     \
    }                                                                                             \
  } while (0)
  EXPECT_EINVAL(dpd_ou_create(NULL, NULL, 6, 9, pr.y, &ou, &err), "NULL");
  EXPECT_EINVAL(dpd_ou_create(NULL, pr.phi, 0, 9, pr.y, &ou, &err), "n = 0");
  EXPECT_EINVAL(dpd_ou_create(NULL, pr.phi, 6, 0, pr.y, &ou, &err), "p = 0");
  EXPECT_EINVAL(dpd_ou_create(NULL, pr.phi, 6, 9, pr.y, NULL, &err), "NULL");
  cfg.rcond = -0.25;
  EXPECT_EINVAL(dpd_ou_create(&cfg, pr.phi, 6, 9, pr.y, &ou, &err), "rcond = -0.25");
  cfg.rcond = NAN;
  EXPECT_EINVAL(dpd_ou_create(&cfg, pr.phi, 6, 9, pr.y, &ou, &err), "rcond = nan");
  pr.phi[13] = NAN;
  EXPECT_EINVAL(dpd_ou_create(NULL, pr.phi, 6, 9, pr.y, &ou, &err), "phi");
  pr.phi[13] = 0.25;
  pr.y[2] = INFINITY;
  EXPECT_EINVAL(dpd_ou_create(NULL, pr.phi, 6, 9, pr.y, &ou, &err), "y has");
  pr.y[2] = 0.5;
  assert_null(ou);
  dpd_err_reset(&err);
  assert_int_equal(dpd_ou_create(NULL, pr.phi, 6, 9, pr.y, &ou, &err), DPD_OK);
  par.eta = 0.0;
  EXPECT_EINVAL(dpd_ou_mean_eval(ou, &par, 3, theta, &err), "eta = 0");
  par.eta = NAN;
  EXPECT_EINVAL(dpd_ou_mean_eval(ou, &par, 3, theta, &err), "eta = nan");
  par.eta = 0.1;
  par.clip = -1.5;
  EXPECT_EINVAL(dpd_ou_risk_eval(ou, &par, pr.phi_test, 2, pr.y_test, steps, 1, r, &err),
                "clip C = -1.5");
  par.clip = 1.0;
  par.sigma = -0.5;
  EXPECT_EINVAL(dpd_ou_exit_step(ou, &par, steps, 1, &idx, &err), "sigma = -0.5");
  par.sigma = 1.0;
  par.time = (dpd_ou_time)7;
  EXPECT_EINVAL(dpd_ou_mean_eval(ou, &par, 3, theta, &err), "time = 7");
  par.time = DPD_OU_CONTINUOUS;
  EXPECT_EINVAL(dpd_ou_risk_eval(ou, &par, pr.phi_test, 0, pr.y_test, steps, 1, r, &err), "m = 0");
  EXPECT_EINVAL(dpd_ou_risk_eval(ou, &par, NULL, 2, pr.y_test, steps, 1, r, &err), "NULL");
  EXPECT_EINVAL(dpd_ou_exit_step(ou, &par, steps, 1, NULL, &err), "NULL");
  EXPECT_EINVAL(dpd_ou_mean_eval(ou, &par, 3, NULL, &err), "NULL");
#undef EXPECT_EINVAL
  dpd_ou_free(ou);
  dpd_ou_free(NULL);
  problem_free(&pr);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(theta_star_matches_lapack_dgelsd_min_norm),
      cmocka_unit_test(mean_path_matches_gd_iteration_and_matrix_exponential),
      cmocka_unit_test(covariance_trace_matches_dense_recursion_and_integral),
      cmocka_unit_test(exit_step_matches_brute_force_scan),
      cmocka_unit_test(discrete_tends_to_continuous_at_first_order_in_eta),
      cmocka_unit_test(rejects_invalid_arguments),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
