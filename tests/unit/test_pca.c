/* Tests of the principal component analysis (pca.h): the covariance and Gram routes against each
 * other and against a naive LAPACKE_dsyev of the explicit matrix, a planted spike, k = p, and
 * the errors that name 'k' and 'm'.
 * SPDX-License-Identifier: MIT
 *
 * Deterministic data: Gaussian entries from dpd_rng streams with fixed seeds (printed on
 * failure through the assertion's values). */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/pca.h"
#include "dpdyn/rng.h"

/* m x p row-major data: column l scaled by 1 / (1 + 0.37 l) (distinct variances, so distinct
 * eigenvalues), plus a mean 0.813 + 0.1 l (centring matters). */
static double *make_data(size_t m, size_t p, uint64_t seed) {
  double *X = malloc(m * p * sizeof *X);
  dpd_rng rng;
  assert_non_null(X);
  dpd_rng_init(&rng, seed, 7);
  dpd_rng_gaussian_fill(&rng, X, m * p);
  for (size_t i = 0; i < m; i++) {
    for (size_t l = 0; l < p; l++) {
      X[i * p + l] = X[i * p + l] / (1.0 + 0.37 * (double)l) + 0.813 + 0.1 * (double)l;
    }
  }
  return X;
}

static dpd_pca_result *pca_ok(size_t m, size_t p, size_t k, int center, dpd_pca_route route,
                              const double *X) {
  dpd_pca_config c = dpd_pca_config_default();
  dpd_pca_result *res = NULL;
  dpd_err err;
  c.m = m;
  c.p = p;
  c.k = k;
  c.center = center;
  c.route = route;
  c.block = 7;  /* several blocks with a short last one */
  c.chunk = 10; /* likewise */
  dpd_err_reset(&err);
  int st = dpd_pca_compute_dense(&c, X, p, &res, &err);
  if (st != DPD_OK) {
    print_error("dpd_pca_compute_dense(m %zu, p %zu, k %zu): %s\n", m, p, k, err.reason);
  }
  assert_int_equal(st, DPD_OK);
  assert_int_equal(res->route, route == DPD_PCA_ROUTE_AUTO ? dpd_pca_route_get(&c) : route);
  return res;
}

/* The naive reference: S formed entry by entry, all eigenpairs by LAPACKE_dsyev; top k with the
 * same sign rule. */
static void naive(const double *X, size_t m, size_t p, size_t k, int center, double *lambda,
                  double *V) {
  double *S = calloc(p * p, sizeof *S), *w = malloc(p * sizeof *w), *mu = calloc(p, sizeof *mu);
  const double d = center ? (double)(m - 1) : (double)m;
  assert_true(S != NULL && w != NULL && mu != NULL);
  if (center) {
    for (size_t i = 0; i < m; i++) {
      for (size_t l = 0; l < p; l++) {
        mu[l] += X[i * p + l] / (double)m;
      }
    }
  }
  for (size_t a = 0; a < p; a++) {
    for (size_t b = 0; b < p; b++) {
      double s = 0.0;
      for (size_t i = 0; i < m; i++) {
        s += (X[i * p + a] - mu[a]) * (X[i * p + b] - mu[b]);
      }
      S[a * p + b] = s / d;
    }
  }
  assert_int_equal(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)p, S, (lapack_int)p, w),
                   0);
  for (size_t j = 0; j < k; j++) {
    size_t best = 0;
    lambda[j] = w[p - 1 - j];
    for (size_t l = 0; l < p; l++) {
      V[l * k + j] = S[l * p + (p - 1 - j)];
      if (fabs(V[l * k + j]) > fabs(V[best * k + j])) {
        best = l;
      }
    }
    if (V[best * k + j] < 0.0) {
      for (size_t l = 0; l < p; l++) {
        V[l * k + j] = -V[l * k + j];
      }
    }
  }
  free(S);
  free(w);
  free(mu);
}

static double max_diff(const double *a, const double *b, size_t n) {
  double d = 0.0;
  for (size_t i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
  }
  return d;
}

static void check_against_naive(size_t m, size_t p, size_t k, int center) {
  double *X = make_data(m, p, 2385 + m + p);
  double *lambda = malloc(k * sizeof *lambda), *V = malloc(p * k * sizeof *V);
  const dpd_pca_route routes[2] = {DPD_PCA_ROUTE_COVARIANCE, DPD_PCA_ROUTE_GRAM};
  naive(X, m, p, k, center, lambda, V);
  for (int r = 0; r < 2; r++) {
    dpd_pca_result *res = pca_ok(m, p, k, center, routes[r], X);
    const double de = max_diff(res->eigenvalues, lambda, k), dv = max_diff(res->V, V, p * k);
    if (de > 1e-10 || dv > 1e-10) {
      print_error("m %zu p %zu k %zu center %d route %d: eigenvalues %.3g, vectors %.3g\n", m, p, k,
                  center, r, de, dv);
    }
    assert_true(de <= 1e-10 * fmax(1.0, lambda[0]));
    assert_true(dv <= 1e-10);
    for (size_t j = 1; j < k; j++) {
      assert_true(res->eigenvalues[j] <= res->eigenvalues[j - 1]);
    }
    dpd_pca_result_free(res);
  }
  free(X);
  free(lambda);
  free(V);
}

static void both_routes_match_naive_dsyev(void **state) {
  (void)state;
  check_against_naive(40, 23, 5, 1); /* p < m */
  check_against_naive(40, 23, 5, 0);
  check_against_naive(19, 33, 4, 1); /* p > m: the Gram route's home */
  check_against_naive(19, 33, 4, 0);
}

static void auto_route_picks_the_smaller_matrix(void **state) {
  (void)state;
  dpd_pca_config c = dpd_pca_config_default();
  c.m = 100;
  c.p = 100;
  assert_int_equal(dpd_pca_route_get(&c), DPD_PCA_ROUTE_COVARIANCE);
  c.p = 101;
  assert_int_equal(dpd_pca_route_get(&c), DPD_PCA_ROUTE_GRAM);
  /* the memory estimate grows with the matrix the route forms */
  c.k = 3;
  c.p = 100000;
  assert_true(dpd_pca_memory(&c) < 8.0 * (100.0 * 100 + 100000.0 * 6 + 100.0 * 1024));
  c.route = DPD_PCA_ROUTE_COVARIANCE;
  assert_true(dpd_pca_memory(&c) > 8.0 * 1e10);
}

/* x_i = sqrt(3.7) g_i e_s + z_i (z ~ N(0, 0.09 I)), s = 11: the top direction is +e_s (sign rule),
 * eigenvalue ~ 3.79; the angle error ~ sqrt(p / m) * 0.3 / sqrt(3.7) is small at m = 4000. */
static void planted_spike_is_recovered(void **state) {
  (void)state;
  const size_t m = 4000, p = 60, s = 11;
  double *X = malloc(m * p * sizeof *X);
  dpd_rng rng;
  dpd_rng_init(&rng, 4242, 3);
  dpd_rng_gaussian_fill(&rng, X, m * p);
  for (size_t i = 0; i < m; i++) {
    for (size_t l = 0; l < p; l++) {
      X[i * p + l] *= 0.3;
    }
    X[i * p + s] += sqrt(3.7) * dpd_rng_gaussian(&rng);
  }
  for (int center = 0; center < 2; center++) {
    dpd_pca_result *res = pca_ok(m, p, 2, center, DPD_PCA_ROUTE_AUTO, X);
    double off = 0.0;
    for (size_t l = 0; l < p; l++) {
      if (l != s) {
        off += res->V[l * 2] * res->V[l * 2];
      }
    }
    assert_true(res->V[s * 2] > 0.99);
    assert_true(sqrt(off) < 0.05);
    assert_true(fabs(res->eigenvalues[0] - 3.79) < 0.3); /* SE ~ 3.8 sqrt(2/m) = 0.085 */
    assert_true(res->eigenvalues[1] < 0.2);
    /* negative control: the second direction is not the spike */
    assert_true(fabs(res->V[s * 2 + 1]) < 0.1);
    dpd_pca_result_free(res);
  }
  free(X);
}

/* k = p: all directions, an orthogonal matrix; eigenvalues sum to the trace. */
static void k_equals_p(void **state) {
  (void)state;
  const size_t m = 30, p = 9;
  double *X = make_data(m, p, 99);
  dpd_pca_result *res = pca_ok(m, p, p, 1, DPD_PCA_ROUTE_AUTO, X);
  double sum = 0.0;
  for (size_t a = 0; a < p; a++) {
    sum += res->eigenvalues[a];
    for (size_t b = 0; b < p; b++) {
      double g = 0.0;
      for (size_t l = 0; l < p; l++) {
        g += res->V[l * p + a] * res->V[l * p + b];
      }
      assert_true(fabs(g - (a == b ? 1.0 : 0.0)) < 1e-12);
    }
  }
  assert_true(fabs(sum - res->trace) < 1e-12 * res->trace);
  dpd_pca_result_free(res);
  check_against_naive(m, p, p, 0);
  /* p = 1, k = 1 */
  res = pca_ok(m, 1, 1, 1, DPD_PCA_ROUTE_AUTO, X);
  assert_true(res->V[0] == 1.0);
  dpd_pca_result_free(res);
  free(X);
}

static void bad_k_and_m_are_named(void **state) {
  (void)state;
  double X[12] = {1.1, 2.3, 0.4, 5.0, 1.7, 2.2, 0.3, 0.9, 1.4, 2.8, 3.3, 0.1};
  dpd_pca_config c = dpd_pca_config_default();
  dpd_pca_result *res = NULL;
  dpd_err err;
  c.m = 4;
  c.p = 3;
  c.k = 4; /* > p */
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'k'"));
  assert_null(res);
  c.k = 0;
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'k'"));
  c.k = 1;
  c.m = 1; /* centring needs two samples */
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'m'"));
  c.center = 0; /* one sample, uncentred: fine */
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_OK);
  dpd_pca_result_free(res);
  /* Gram route: k beyond the rank bound m - 1 of centred samples */
  c.center = 1;
  c.m = 2;
  c.k = 2;
  c.route = DPD_PCA_ROUTE_GRAM;
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'k'"));
  /* the covariance route refuses it too: two centred samples have rank 1 */
  c.route = DPD_PCA_ROUTE_COVARIANCE;
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "numerical rank"));
  c.k = 1; /* and accepts k = 1 */
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_OK);
  dpd_pca_result_free(res);
  c.k = 2;
  c.chunk = 3;
  dpd_err_reset(&err);
  assert_int_equal(dpd_pca_compute_dense(&c, X, 3, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'chunk'"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(both_routes_match_naive_dsyev),
      cmocka_unit_test(auto_route_picks_the_smaller_matrix),
      cmocka_unit_test(planted_spike_is_recovered),
      cmocka_unit_test(k_equals_p),
      cmocka_unit_test(bad_k_and_m_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
