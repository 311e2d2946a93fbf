/* Unit tests for the exact one-step NoisyGD theory under neural collapse (notes-rf-nc-sp.md B.5):
 * the reference numbers of the notes, Monte Carlo of the one-step classifier itself, the K = 2
 * closed form, tiny probabilities, monotonicity, K = 1000, the closed forms against the general
 * point formula, sensitivities and bad input.
 * SPDX-License-Identifier: MIT */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "dpdyn/nc_theory.h"

static double collapse(size_t K, double n, double sigma) {
  double p = -1.0;
  dpd_err err;
  dpd_err_reset(&err);
  if (dpd_nc_error_collapse(K, n, sigma, &p, &err) != DPD_OK) {
    print_error("collapse(K = %zu, n = %g, sigma = %g): %s\n", K, n, sigma, err.reason);
    fail();
  }
  return p;
}

static double from_gaps(const double *g, size_t ng, double s) {
  double p = -1.0;
  dpd_err err;
  dpd_err_reset(&err);
  if (dpd_nc_error_gaps(g, ng, s, &p, &err) != DPD_OK) {
    print_error("error_gaps(ngaps = %zu, s = %g): %s\n", ng, s, err.reason);
    fail();
  }
  return p;
}

/* Sparse simplex ETF in R^p (p >= K), column-major p x K: M = sqrt(K/(K-1)) (I - 11^T/K) on the
 * first K coordinates. */
static void sparse_etf(size_t K, size_t p, double *M) {
  double c = sqrt((double)K / (double)(K - 1));
  memset(M, 0, K * p * sizeof *M);
  for (size_t j = 0; j < K; j++) {
    for (size_t i = 0; i < K; i++) {
      M[j * p + i] = c * ((i == j ? 1.0 : 0.0) - 1.0 / (double)K);
    }
  }
}

/* Notes B.5: K = 10, sigma = 10: exact 0.6231 (n = 100), 5.8e-2 (n = 300), 3.6e-4 (n = 500). The
 * notes print 4 and 2 significant digits, so the tolerance is half a unit of the last digit. */
static void notes_reference_numbers(void **state) {
  (void)state;
  assert_abs(collapse(10, 100.0, 10.0), 0.6231, 0.5e-4);
  assert_abs(collapse(10, 300.0, 10.0), 5.8e-2, 0.05e-2);
  assert_abs(collapse(10, 500.0, 10.0), 3.6e-4, 0.05e-4);
}

/* Monte Carlo of the one-step classifier itself, not of the formula: W = sum_k n_k (e_k - 1/K)
 * xbar_k^T + Xi with Xi_ij ~ N(0, sigma^2), test x of class k, error iff argmax W x != k. One
 * fresh Xi per draw. Returns the error rate over N draws. */
static double mc_one_step(size_t K, size_t p, const double *counts, const double *means,
                          const double *x, size_t k, double sigma, size_t N, unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  double *mean_logit = malloc(K * sizeof *mean_logit);
  size_t errors = 0;
  assert_non_null(r);
  assert_non_null(mean_logit);
  gsl_rng_set(r, seed);
  /* (sum_k n_k (e_k - 1/K) xbar_k^T) x, the CE one-step signal with its common centring. */
  {
    double c = 0.0;
    for (size_t j = 0; j < K; j++) {
      double dot = 0.0;
      for (size_t i = 0; i < p; i++) {
        dot += means[j * p + i] * x[i];
      }
      mean_logit[j] = counts[j] * dot;
      c += counts[j] * dot / (double)K;
    }
    for (size_t j = 0; j < K; j++) {
      mean_logit[j] -= c;
    }
  }
  for (size_t d = 0; d < N; d++) {
    double best = -INFINITY;
    size_t arg = 0;
    for (size_t j = 0; j < K; j++) {
      double l = mean_logit[j];
      for (size_t i = 0; i < p; i++) {
        l += gsl_ran_gaussian_ziggurat(r, sigma) * x[i];
      }
      if (l > best) {
        best = l;
        arg = j;
      }
    }
    errors += arg != k;
  }
  free(mean_logit);
  gsl_rng_free(r);
  return (double)errors / (double)N;
}

/* Perfect collapse K = 10, n = 100, sigma = 10, sparse ETF in p = 12: the Monte Carlo error agrees
 * with the exact value within 4 SE (SE = sqrt(p(1 - p)/N)), and a sigma off by 1.2 is rejected:
 * its exact value is more than 4 SE away from the same Monte Carlo. */
static void monte_carlo_of_the_one_step_classifier(void **state) {
  enum { K = 10, P = 12 };
  const size_t N = 100000;
  double M[K * P];
  double counts[K];
  double exact, wrong, point, mc, se;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  sparse_etf(K, P, M);
  for (size_t j = 0; j < K; j++) {
    counts[j] = 10.0;
  }
  exact = collapse(K, 100.0, 10.0);
  wrong = collapse(K, 100.0, 12.0);
  assert_int_equal(dpd_nc_error_point(K, P, counts, M, M + 3 * P, 3, 10.0, &point, &err), DPD_OK);
  assert_rel(point, exact, 1e-10);
  mc = mc_one_step(K, P, counts, M, M + 3 * P, 3, 10.0, N, 20261124UL);
  se = sqrt(exact * (1.0 - exact) / (double)N);
  print_message("K = 10, n = 100, sigma = 10: exact %.6f, MC %.6f (SE %.2g, %.2f SE); sigma x1.2: "
                "exact %.6f (%.1f SE from MC)\n",
                exact, mc, se, (mc - exact) / se, wrong, (wrong - mc) / se);
  assert_abs(mc, exact, 4.0 * se);
  assert_true(fabs(mc - wrong) > 4.0 * se);
}

/* Arbitrary class means, imbalanced counts, an arbitrary test point: dpd_nc_error_point against
 * the Monte Carlo of the one-step classifier (4 SE), and the same with sigma x1.2 rejected. */
static void monte_carlo_general_point(void **state) {
  enum { K = 3, P = 5 };
  const size_t N = 100000;
  const double counts[K] = {30.0, 50.0, 20.0};
  double means[K * P], x[P];
  double gaps[K - 1], s = 0.0, xnorm;
  double exact, wrong, mc, se, sigma;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  gsl_rng_set(r, 7);
  for (size_t i = 0; i < K * P; i++) {
    means[i] = gsl_ran_gaussian(r, 1.0);
  }
  for (size_t i = 0; i < P; i++) {
    x[i] = means[1 * P + i] + gsl_ran_gaussian(r, 0.3);
  }
  gsl_rng_free(r);
  assert_int_equal(dpd_nc_point_gaps(K, P, counts, means, x, 1, 1.0, gaps, &xnorm, &err), DPD_OK);
  /* a sigma that puts the error in the middle range */
  sigma = 0.5 * fmax(fabs(gaps[0]), fabs(gaps[1])) / xnorm;
  assert_int_equal(dpd_nc_point_gaps(K, P, counts, means, x, 1, sigma, gaps, &s, &err), DPD_OK);
  assert_rel(s, sigma * xnorm, 1e-15);
  assert_int_equal(dpd_nc_error_point(K, P, counts, means, x, 1, sigma, &exact, &err), DPD_OK);
  assert_rel(from_gaps(gaps, K - 1, s), exact, 1e-12);
  assert_int_equal(dpd_nc_error_point(K, P, counts, means, x, 1, 1.2 * sigma, &wrong, &err),
                   DPD_OK);
  mc = mc_one_step(K, P, counts, means, x, 1, sigma, N, 99UL);
  se = sqrt(exact * (1.0 - exact) / (double)N);
  print_message("K = 3 general point (gaps %.3f, %.3f, s %.3f): exact %.6f, MC %.6f (%.2f SE); "
                "sigma x1.2: %.6f (%.1f SE)\n",
                gaps[0], gaps[1], s, exact, mc, (mc - exact) / se, wrong, (wrong - mc) / se);
  assert_true(exact > 0.05 && exact < 0.95);
  assert_abs(mc, exact, 4.0 * se);
  assert_true(fabs(mc - wrong) > 4.0 * se);
}

/* K = 2: 1 - int phi(z) Phi(z + a) dz = P[Z2 - Z1 > a] = Phi(-a/sqrt 2), any sign of a; the
 * binary theta model with noise sigma is the K = 2 W model with s = sigma/sqrt 2. */
static void two_classes_closed_form(void **state) {
  static const double as[] = {-30.0, -5.0, -1.0, -1e-3, 0.0, 1e-3, 0.3, 1.0, 2.5, 7.0, 15.0};
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
    for (double s = 0.25; s < 5.0; s *= 2.0) {
      double g = as[i] * s;
      assert_rel(from_gaps(&g, 1, s), gsl_cdf_ugaussian_P(-as[i] / M_SQRT2), 1e-12);
    }
  }
  for (double n = 1.0; n < 200.0; n *= 3.0) {
    double sigma = 7.0, pb = -1.0, g = n;
    assert_int_equal(dpd_nc_error_binary(1.0, n, sigma, &pb, &err), DPD_OK);
    assert_rel(pb, gsl_cdf_ugaussian_P(-n / sigma), 1e-15);
    assert_rel(from_gaps(&g, 1, sigma / M_SQRT2), pb, 1e-12);
    assert_rel(collapse(2, n, sigma / M_SQRT2), pb, 1e-12);
  }
}

/* Tiny probabilities keep their relative accuracy: g/s = 20, 40, 50 with K = 2, where
 * Phi(-g/(s sqrt 2)) is down to ~1e-274. */
static void tiny_probabilities(void **state) {
  static const double as[] = {20.0, 40.0, 50.0};
  (void)state;
  for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
    double g = as[i] * 3.0;
    double want = gsl_cdf_ugaussian_P(-as[i] / M_SQRT2);
    double got = from_gaps(&g, 1, 3.0);
    print_message("K = 2, g/s = %g: %.10e (closed form %.10e)\n", as[i], got, want);
    assert_rel(got, want, 1e-9);
  }
}

/* K = 1000 equal gaps: the gap-list and the multiplicity paths agree, the result lies between the
 * single-gap lower bound Phi(-a/sqrt 2) and the union bound (K - 1) Phi(-a/sqrt 2), and is
 * finite for gaps from tiny to huge. */
static void thousand_classes_stable(void **state) {
  enum { K = 1000 };
  static double g[K - 1];
  static const double as[] = {0.0, 0.5, 2.0, 5.0, 10.0, 30.0, 60.0};
  (void)state;
  for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
    double s = 2.0, lo, got, got_list;
    for (size_t j = 0; j < K - 1; j++) {
      g[j] = as[i] * s;
    }
    got = collapse(K, as[i] * s * (K - 1), s);
    got_list = from_gaps(g, K - 1, s);
    lo = gsl_cdf_ugaussian_P(-as[i] / M_SQRT2);
    print_message("K = 1000, gap/s = %g: %.10e\n", as[i], got);
    assert_true(isfinite(got) && got >= 0.0 && got <= 1.0);
    assert_rel(got_list, got, 1e-10);
    assert_true(got >= lo * (1.0 - 1e-10));
    assert_true(got <= fmin(1.0, (K - 1) * lo) * (1.0 + 1e-10));
  }
  /* a = 0: 999 ties in distribution, error 1 - 1/K exactly */
  assert_rel(collapse(K, 0.0, 1.0), 1.0 - 1.0 / K, 1e-10);
}

/* Error falls strictly as any gap grows and rises strictly with s (positive gaps). */
static void monotone_in_gaps_and_noise(void **state) {
  double g[4] = {1.0, 2.5, -0.5, 4.0};
  double prev = 2.0;
  (void)state;
  for (double t = 0.0; t < 6.0; t += 0.5) {
    double p;
    g[2] = -0.5 + t;
    p = from_gaps(g, 4, 1.3);
    assert_true(p < prev);
    prev = p;
  }
  g[2] = 1.5;
  prev = -1.0;
  for (double s = 0.1; s < 50.0; s *= 1.5) {
    double p = from_gaps(g, 4, s);
    assert_true(p > prev);
    prev = p;
  }
  assert_true(prev < 1.0 - 1.0 / 5.0 + 1e-3);
}

/* s = 0: 1 with a negative gap, t/(t+1) with t ties, 0 otherwise; and the formula tends to it. */
static void non_private_limit_and_ties(void **state) {
  double ties[3] = {1.0, 0.0, 0.0};
  double neg[2] = {1.0, -1e-9};
  double pos[2] = {1.0, 2.0};
  (void)state;
  assert_abs(from_gaps(ties, 3, 0.0), 2.0 / 3.0, 1e-15);
  assert_abs(from_gaps(neg, 2, 0.0), 1.0, 0.0);
  assert_abs(from_gaps(pos, 2, 0.0), 0.0, 0.0);
  assert_abs(from_gaps(ties, 3, 1e-6), 2.0 / 3.0, 1e-9);
  assert_abs(from_gaps(pos, 2, 1e-3), 0.0, 1e-100);
  assert_abs(from_gaps(NULL, 0, 1.0), 0.0, 0.0);
  assert_abs(collapse(10, 100.0, 0.0), 0.0, 0.0);
}

/* The logits form equals the gaps form and ignores a common shift. */
static void logits_form(void **state) {
  double m[4] = {0.3, 2.0, -1.0, 1.1};
  double g[3] = {2.0 - 0.3, 2.0 + 1.0, 2.0 - 1.1};
  double a = -1.0, b = -1.0;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_error_logits(m, 4, 1, 0.9, &a, &err), DPD_OK);
  assert_rel(a, from_gaps(g, 3, 0.9), 1e-13);
  for (size_t j = 0; j < 4; j++) {
    m[j] += 1234.5;
  }
  assert_int_equal(dpd_nc_error_logits(m, 4, 1, 0.9, &b, &err), DPD_OK);
  assert_rel(b, a, 1e-10);
}

/* The offset + imbalance and test-perturbation closed forms against the general point formula on
 * explicitly built means and test points (sparse ETF, p = 40, nu with i.i.d. +-0.1 entries). */
static void closed_forms_match_the_point_formula(void **state) {
  enum { K = 5, P = 40 };
  const double counts[K] = {180.0, 20.0, 180.0, 20.0, 100.0};
  double M[K * P], means[K * P], nu[P], x[P], u[K], balanced[K];
  double nu2 = 0.0, sigma = 3.0;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  gsl_rng_set(r, 3);
  sparse_etf(K, P, M);
  for (size_t i = 0; i < P; i++) {
    nu[i] = gsl_rng_uniform(r) < 0.5 ? -0.1 : 0.1;
    nu2 += nu[i] * nu[i];
  }
  gsl_rng_free(r);
  for (size_t j = 0; j < K; j++) {
    u[j] = 0.0;
    balanced[j] = 300.0 / K;
    for (size_t i = 0; i < P; i++) {
      means[j * P + i] = M[j * P + i] + nu[i];
      u[j] += M[j * P + i] * nu[i];
    }
  }
  for (size_t k = 0; k < K; k++) {
    double off = -1.0, pt = -1.0, pert = -1.0;
    assert_int_equal(dpd_nc_error_offset(K, counts, k, u[k], sigma, &off, &err), DPD_OK);
    assert_int_equal(dpd_nc_error_point(K, P, counts, means, M + k * P, k, sigma, &pt, &err),
                     DPD_OK);
    assert_rel(off, pt, 1e-10);
    for (size_t i = 0; i < P; i++) {
      x[i] = M[k * P + i] + nu[i];
    }
    assert_int_equal(dpd_nc_error_perturb(K, 300.0, k, u, nu2, 10.0, &pert, &err), DPD_OK);
    assert_int_equal(dpd_nc_error_point(K, P, balanced, M, x, k, 10.0, &pt, &err), DPD_OK);
    assert_rel(pert, pt, 1e-10);
  }
}

static double clt_integrand(double z, void *params) {
  const double *q = params; /* n, beta, p, sigma */
  double b2 = q[1] * q[1];
  return gsl_ran_ugaussian_pdf(z) *
         gsl_cdf_ugaussian_P(-(q[0] + b2 * sqrt(q[0] * q[2]) * z) / (q[3] * sqrt(1.0 + q[2] * b2)));
}

/* The binary shift formulas: the conditional one at v = 0 is Phi(-n/sigma); the CLT average's
 * closed form equals its defining expectation computed by quadrature. */
static void binary_shift_formulas(void **state) {
  gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
  dpd_err err;
  double pr = -1.0;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_error_binary_shift(50.0, 0.0, 0.0, 20.0, &pr, &err), DPD_OK);
  assert_rel(pr, gsl_cdf_ugaussian_P(-2.5), 1e-14);
  assert_int_equal(dpd_nc_error_binary_shift(50.0, -10.0, 3.0, 20.0, &pr, &err), DPD_OK);
  assert_rel(pr, gsl_cdf_ugaussian_P(-40.0 / 40.0), 1e-14);
  for (double beta = 0.01; beta < 0.5; beta *= 3.0) {
    for (double p = 10.0; p <= 1e5; p *= 100.0) {
      double q[4] = {200.0, beta, p, 30.0};
      double quad = 0.0, abserr = 0.0, closed = -1.0;
      gsl_function f = {clt_integrand, q};
      assert_int_equal(gsl_integration_qagi(&f, 0.0, 1e-12, 200, w, &quad, &abserr), GSL_SUCCESS);
      assert_int_equal(dpd_nc_error_binary_shift_clt(200.0, beta, p, 30.0, &closed, &err), DPD_OK);
      assert_rel(closed, quad, 1e-8);
    }
  }
  gsl_integration_workspace_free(w);
}

/* G for CE at W = 0 is the Frobenius norm of (softmax(0) - e_y) x^T; square loss ||x||. */
static void sensitivities(void **state) {
  const double x[3] = {0.3, -1.2, 2.0};
  const double xn = sqrt(0.09 + 1.44 + 4.0);
  dpd_err err;
  double G = -1.0, sigma = -1.0;
  (void)state;
  dpd_err_reset(&err);
  for (size_t K = 2; K < 20; K += 5) {
    double fro = 0.0;
    for (size_t j = 0; j < K; j++) {
      double a = 1.0 / (double)K - (j == 0 ? 1.0 : 0.0);
      for (size_t i = 0; i < 3; i++) {
        fro += a * a * x[i] * x[i];
      }
    }
    assert_int_equal(dpd_nc_sensitivity_ce(K, xn, &G, &err), DPD_OK);
    assert_rel(G, sqrt(fro), 1e-14);
  }
  assert_int_equal(dpd_nc_sensitivity_square(xn, &G, &err), DPD_OK);
  assert_rel(G, xn, 0.0);
  assert_int_equal(dpd_nc_sensitivity_binary(0.1, 1e4, &G, &err), DPD_OK);
  assert_rel(G, sqrt(101.0), 1e-15);
  assert_int_equal(dpd_nc_sigma(2.0, 0.5, &sigma, &err), DPD_OK);
  assert_rel(sigma, 2.0, 1e-15);
}

static void rejects_invalid_arguments(void **state) {
  dpd_err err;
  double out = 0.0, g[2] = {1.0, NAN}, gaps[2], s;
  const double counts[3] = {1.0, 2.0, -1.0};
  const double M[6] = {1, 0, 0, 1, 1, 1};
  (void)state;
#define EXPECT_EINVAL(call, needle)                                                                \
  do {                                                                                             \
    dpd_err_reset(&err);                                                                           \
    assert_int_equal((call), DPD_EINVAL);                                                          \
    if (strstr(err.reason, (needle)) == NULL) {                                                    \
      print_error("reason '%s' lacks '%s'\n", err.reason, (needle));                               \
      fail();                                                                                      \
    }                                                                                              \
  } while (0)
  EXPECT_EINVAL(dpd_nc_error_gaps(g, 2, 1.0, &out, &err), "entry 1");
  EXPECT_EINVAL(dpd_nc_error_gaps(g, 1, -1.0, &out, &err), "s = -1");
  EXPECT_EINVAL(dpd_nc_error_gaps(g, 1, 1.0, NULL, &err), "NULL");
  EXPECT_EINVAL(dpd_nc_error_logits(g, 1, 1, 1.0, &out, &err), "k = 1");
  EXPECT_EINVAL(dpd_nc_error_collapse(1, 10.0, 1.0, &out, &err), "K = 1");
  EXPECT_EINVAL(dpd_nc_error_collapse(3, -10.0, 1.0, &out, &err), "n = -10");
  EXPECT_EINVAL(dpd_nc_error_collapse(3, 10.0, INFINITY, &out, &err), "sigma = inf");
  EXPECT_EINVAL(dpd_nc_error_offset(3, counts, 0, 0.1, 1.0, &out, &err), "counts[2]");
  EXPECT_EINVAL(dpd_nc_point_gaps(3, 2, counts, M, M, 5, 1.0, gaps, &s, &err), "k = 5");
  EXPECT_EINVAL(dpd_nc_error_point(2, 2, counts, M, g, 0, 1.0, &out, &err), "x[1]");
  EXPECT_EINVAL(dpd_nc_error_perturb(2, 10.0, 0, M, -1.0, 1.0, &out, &err), "||nu||^2");
  EXPECT_EINVAL(dpd_nc_error_binary(0.0, 10.0, 1.0, &out, &err), "c = 0");
  EXPECT_EINVAL(dpd_nc_error_binary_shift(10.0, 0.0, 0.0, 0.0, &out, &err), "sigma = 0");
  EXPECT_EINVAL(dpd_nc_error_binary_shift_clt(10.0, -0.1, 5.0, 1.0, &out, &err), "beta = -0.1");
  EXPECT_EINVAL(dpd_nc_sensitivity_ce(1, 1.0, &out, &err), "K = 1");
  EXPECT_EINVAL(dpd_nc_sensitivity_binary(0.1, 0.5, &out, &err), "p = 0.5");
  EXPECT_EINVAL(dpd_nc_sigma(1.0, 0.0, &out, &err), "rho_step = 0");
#undef EXPECT_EINVAL
  assert_int_equal(dpd_nc_sigma(1.0, 0.0, &out, NULL), DPD_EINVAL);
}

/* Thm D.1 as printed vs the exact error and the corrected union bound (notes B.5 table: paper
 * 1.24, union 1.94 at n = 100; paper 4.9e-3 and 2.3e-7 at n = 300, 500, K = 10, sigma = 10). */
static void bounds_d1(void **state) {
  (void)state;
  assert_abs(dpd_nc_bound_d1_printed(10, 100.0, 10.0), 1.24, 0.005);
  assert_abs(dpd_nc_bound_d1_union(10, 100.0, 10.0), 1.94, 0.005);
  assert_abs(dpd_nc_bound_d1_printed(10, 300.0, 10.0), 4.9e-3, 0.05e-3);
  assert_abs(dpd_nc_bound_d1_printed(10, 500.0, 10.0), 2.3e-7, 0.05e-7);
  for (size_t K = 2; K <= 50; K += 6) {
    for (double n = 10.0; n < 3000.0; n *= 2.0) {
      double exact = collapse(K, n, 10.0);
      /* the union bound holds; the printed "equality" is below the truth once the error is small */
      assert_true(dpd_nc_bound_d1_union(K, n, 10.0) >= exact * (1.0 - 1e-12));
      if (K > 2 && exact < 0.1 && exact > 1e-300) {
        assert_true(dpd_nc_bound_d1_printed(K, n, 10.0) < exact);
      }
    }
  }
  {
    double ck = pow(1.0 + 8.0 / 90.0, 2.0);
    assert_rel(dpd_nc_bound_d1_printed_exp(10, 100.0, 10.0), 9.0 * exp(-ck * 10.0), 1e-13);
    assert_rel(dpd_nc_samples_d1_printed(10, 1.0, 0.5, 1e-3), 10.0 * sqrt(log(9e3)) / ck, 1e-14);
  }
  assert_true(isnan(dpd_nc_bound_d1_printed(1, 100.0, 10.0)));
  assert_true(isnan(dpd_nc_bound_d1_union(10, 100.0, 0.0)));
}

/* D.3: the corrected exponential bound holds for Phi(-n/(2 sigma)); the printed one does not. */
static void bounds_d3(void **state) {
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  for (double n = 1.0; n < 400.0; n *= 1.7) {
    double exact = -1.0;
    assert_int_equal(dpd_nc_error_binary(0.5, n, 10.0, &exact, &err), DPD_OK);
    assert_true(dpd_nc_bound_d3_corrected(n, 10.0) >= exact);
  }
  {
    double exact = -1.0;
    assert_int_equal(dpd_nc_error_binary(0.5, 100.0, 10.0, &exact, &err), DPD_OK);
    assert_true(dpd_nc_bound_d3_printed(100.0, 10.0) < exact);
  }
}

/* Thm 3.1-3.3 values; the corrected 3.3 bounds the exact deterministic-shift error
 * Phi(-n (1 - beta^2 p) / (sigma sqrt(1 + beta^2 p))) (notes B.5), the printed one fails to. */
static void bounds_thm31_to_33(void **state) {
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_abs(dpd_nc_bound_thm31(100.0, 0.01, 1e4, 0), 0.0, 0.0);
  assert_rel(dpd_nc_bound_thm31(100.0, 0.1, 1e4, 0), exp(-100.0 / (2.0 * (1e4 + 100.0 / 3.0))),
             1e-14);
  assert_rel(dpd_nc_bound_thm31(100.0, 0.1, 1e4, 1), exp(-100.0 / (2.0 * (1.0 + 0.01 / 3.0))),
             1e-12);
  assert_rel(dpd_nc_bound_thm32(100.0, 0.1, 1e4, 0.5, 0),
             exp(-1e4 * 0.5 / (2.0 * 101.0 * 101.0)) + exp(-100.0 / (8.0 * (1e4 + 100.0 / 3.0))),
             1e-14);
  for (double n = 1.0; n < 200.0; n *= 1.5) {
    double beta = 0.05, p = 100.0, sigma = 3.0, bp = 0.25, exact = -1.0;
    assert_int_equal(dpd_nc_error_binary_shift(n * (1.0 - bp), 0.0, bp, sigma, &exact, &err),
                     DPD_OK);
    assert_true(dpd_nc_bound_thm33_corrected(n, beta, p, sigma) >= exact);
    if (n > 20.0 && exact > 1e-300) {
      assert_true(dpd_nc_bound_thm33_printed(n, beta, p, sigma) < exact);
    }
  }
  assert_true(isnan(dpd_nc_bound_thm33_corrected(10.0, 0.1, 100.0, 1.0))); /* beta^2 p = 1 */
  assert_true(isnan(dpd_nc_bound_thm32(10.0, 0.0, 100.0, 1.0, 0)));
}

/* Table 1 spot values; the sample complexities solved from Thm 3.2's privacy term and the
 * corrected Thm 3.3 bound put those bounds exactly at gamma. */
static void sample_complexities(void **state) {
  const double rho = 0.3, gamma = 1e-4, l = log(1e4);
  (void)state;
  assert_rel(dpd_nc_samples_table1(DPD_NC_TABLE1_PERFECT, 0.1, 100.0, rho, gamma, 0.0),
             2.0 * sqrt(l / rho), 1e-14);
  assert_rel(dpd_nc_samples_table1(DPD_NC_TABLE1_APPROX, 0.1, 1e4, rho, gamma, 0.0),
             100.0 * l + 100.0 * sqrt(l / (2.0 * rho)), 1e-14);
  assert_rel(dpd_nc_samples_table1(DPD_NC_TABLE1_APPROX_INDEP, 0.1, 1e4, rho, gamma, 0.0),
             1.0 * l + 100.0 * sqrt(l / (2.0 * rho)), 1e-14);
  assert_rel(dpd_nc_samples_table1(DPD_NC_TABLE1_TEST_STOCH, 0.1, 1e4, rho, gamma, 0.0),
             10.0 * sqrt(l / (2.0 * rho)), 1e-14);
  assert_rel(dpd_nc_samples_table1(DPD_NC_TABLE1_TEST_ADV, 0.1, 1e4, rho, gamma, 0.0),
             1000.0 * sqrt(l / (2.0 * rho)), 1e-14);
  assert_rel(dpd_nc_samples_table1(DPD_NC_TABLE1_OFFSET, 0.001, 1e4, rho, gamma, 0.0),
             sqrt(l / (2.0 * rho)), 1e-14);
  assert_rel(dpd_nc_samples_table1(DPD_NC_TABLE1_OFFSET_IMBAL, 0.1, 1e4, rho, gamma, 0.25),
             10.0 * sqrt(l / (2.0 * rho)) / 0.95, 1e-14);
  assert_true(isnan(dpd_nc_samples_table1((dpd_nc_table1_row)99, 0.1, 1e4, rho, gamma, 0.0)));
  assert_true(isnan(dpd_nc_samples_table1(DPD_NC_TABLE1_PERFECT, 0.1, 1e4, rho, 1.0, 0.0)));
  {
    double n = dpd_nc_samples_thm32_privacy(0.1, 1e3, rho, gamma);
    assert_rel(exp(-n * n * rho / (2.0 * 11.0 * 11.0)), gamma, 1e-12);
  }
  {
    double beta = 0.05, p = 100.0, bp = 0.25;
    double n = dpd_nc_samples_thm33_corrected(beta, p, rho, gamma);
    double sigma = sqrt((1.0 + bp) / (2.0 * rho));
    assert_rel(dpd_nc_bound_thm33_corrected(n, beta, p, sigma), gamma, 1e-12);
    assert_rel(dpd_nc_samples_thm33_printed(beta, p, rho, gamma),
               1.25 * l / (2.0 * rho * 0.75 * 0.75), 1e-14);
  }
}

/* High-precision references (mpmath 1.3, 150 digits, the same integral with breakpoints): the
 * quadrature is accurate to ~1e-15 relative, the test asks for 1e-10. */
static void high_precision_references(void **state) {
  const double g[3] = {1.0, -0.5, 3.0};
  (void)state;
  assert_rel(collapse(10, 100.0, 10.0), 0.62314254427072197762, 1e-10);
  assert_rel(collapse(10, 300.0, 10.0), 0.057710808583274752485, 1e-10);
  assert_rel(collapse(10, 500.0, 10.0), 3.6288103288668741920e-4, 1e-10);
  assert_rel(collapse(1000, 5.0 * 999.0 * 2.0, 2.0), 0.049293889822043964703, 1e-10);
  assert_rel(collapse(1000, 30.0 * 999.0 * 2.0, 2.0), 3.6028905891393777299e-97, 1e-10);
  assert_rel(from_gaps(g, 3, 0.7), 0.70526767191083635931, 1e-10);
}

/* Thm 3.4, Thm 4.1 and appendix B.1: formula values and the B.1 sign correction (the corrected
 * error is the exact one-step error of the binary offset model, below 1/2; the printed is above).
 */
static void bounds_thm34_41_b1(void **state) {
  (void)state;
  {
    double bp = 0.25, h = 0.25, c;
    c = (1.0 + h) / (1.0 - h) / 3.0 * pow(1.0 + exp(0.5 * 1.25), 2.0) / (0.75 * 0.75);
    assert_rel(dpd_nc_bound_thm34(100.0, 0.05, 100.0, 2.0, 0.5, 2, 20.0),
               exp(-1e4 / (c * c * 4.0 * (1.0 + bp))) + 2.0 * exp(-20.0), 1e-12);
    assert_rel(dpd_nc_eta_thm34_printed(10.0, 0.05, 100.0, 0.5, 4.0),
               0.5 / (12.5 + 100.0 + 20.0 + 4.0), 1e-14);
    assert_rel(dpd_nc_eta_thm34_corrected(10.0, 0.05, 100.0, 0.5, 4.0), 0.5 / (12.5 + sqrt(124.0)),
               1e-14);
    assert_true(isnan(dpd_nc_bound_thm34(100.0, 0.1, 100.0, 2.0, 0.5, 2, 20.0)));
  }
  {
    double beta = 0.01, b0 = 0.001, p = 10.0, q = beta + b0 * p;
    double G = 1.0 + beta * (1.0 + b0 + p * b0);
    double M = (1.0 - b0) * (1.0 - b0) - p * beta * b0 - (1.0 + b0) * q -
               q * (1.0 + beta + b0 + beta * b0 * p);
    assert_rel(dpd_nc_samples_thm41(beta, b0, p, 0.2, 0.01), sqrt(G * G * log(200.0) / (M * 0.2)),
               1e-14);
    assert_true(isnan(dpd_nc_samples_thm41(0.5, 0.5, 10.0, 0.2, 0.01)));
  }
  {
    double sigma = 5.0, v1 = 0.1, alpha = 0.2, n = 40.0;
    double corr = dpd_nc_error_b1_corrected(n, alpha, v1, sigma);
    double printed = dpd_nc_error_b1_printed(n, alpha, v1, sigma);
    assert_rel(corr, gsl_cdf_ugaussian_P(-40.0 * (1.0 - 0.6 * 0.1) / 10.0), 1e-14);
    assert_rel(printed, 1.0 - corr, 1e-14);
    assert_true(corr < 0.5 && printed > 0.5);
    /* the exponential bound (v1 = beta, sigma = G / sqrt(2 rho)) holds for the corrected error */
    {
      double beta = 0.1, p = 50.0, rho = 0.1, G = sqrt(1.0 + beta * beta * p);
      double err = dpd_nc_error_b1_corrected(n, alpha, beta, G / sqrt(2.0 * rho));
      assert_true(dpd_nc_bound_b1_exp(n, alpha, beta, p, rho) >= err);
    }
  }
}

/* Random gap sets over many scales: the quadrature always succeeds and the result lies between
 * max_j Phi(-a_j/sqrt 2) (one gap alone) and min(1, sum_j Phi(-a_j/sqrt 2)) (union bound). */
static void random_gap_sets_within_bounds(void **state) {
  static double g[200];
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  (void)state;
  gsl_rng_set(r, 11);
  for (int it = 0; it < 300; it++) {
    size_t ng = 1 + gsl_rng_uniform_int(r, 200);
    double scale = pow(10.0, gsl_rng_uniform(r) * 6.0 - 3.0);
    double shift = gsl_ran_gaussian(r, 3.0) * scale;
    double s = pow(10.0, gsl_rng_uniform(r) * 4.0 - 2.0) * scale;
    double lo = 0.0, hi = 0.0, got;
    for (size_t j = 0; j < ng; j++) {
      double q;
      g[j] = shift + gsl_ran_gaussian(r, scale);
      q = gsl_cdf_ugaussian_P(-g[j] / s / M_SQRT2);
      lo = fmax(lo, q);
      hi += q;
    }
    got = from_gaps(g, ng, s);
    /* (below 1e-300 the values are denormal or 0: absolute slack 1e-300, as documented) */
    if (!(got >= lo * (1.0 - 1e-10) - 1e-300 && got <= fmin(1.0, hi) * (1.0 + 1e-10) + 1e-300)) {
      print_error("ngaps %zu, s %g: %.17g outside [%.17g, %.17g]\n", ng, s, got, lo, hi);
      fail();
    }
  }
  gsl_rng_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(notes_reference_numbers),
      cmocka_unit_test(monte_carlo_of_the_one_step_classifier),
      cmocka_unit_test(monte_carlo_general_point),
      cmocka_unit_test(two_classes_closed_form),
      cmocka_unit_test(tiny_probabilities),
      cmocka_unit_test(thousand_classes_stable),
      cmocka_unit_test(monotone_in_gaps_and_noise),
      cmocka_unit_test(non_private_limit_and_ties),
      cmocka_unit_test(logits_form),
      cmocka_unit_test(closed_forms_match_the_point_formula),
      cmocka_unit_test(binary_shift_formulas),
      cmocka_unit_test(sensitivities),
      cmocka_unit_test(rejects_invalid_arguments),
      cmocka_unit_test(bounds_d1),
      cmocka_unit_test(bounds_d3),
      cmocka_unit_test(bounds_thm31_to_33),
      cmocka_unit_test(sample_complexities),
      cmocka_unit_test(high_precision_references),
      cmocka_unit_test(bounds_thm34_41_b1),
      cmocka_unit_test(random_gap_sets_within_bounds),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
