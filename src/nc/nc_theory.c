/* Exact one-step theory of NoisyGD under neural collapse (include/dpdyn/nc_theory.h).
 * SPDX-License-Identifier: MIT
 *
 * References: notes-rf-nc-sp.md B.3 (sensitivity) and B.5 (the boxed formula and its closed
 * forms, derived there and checked by Monte Carlo); R. Piessens et al., QUADPACK (Springer 1983)
 * for GSL's qag.
 *
 * The integral. With a_j = g_j / s and L(z) = sum_j log Phi(z + a_j),
 *     P = int f,   f(z) = phi(z) (1 - prod_j Phi(z + a_j)) = phi(z) (-expm1(L(z))).
 * Range. Let amin = min_j a_j, S = Z1 + Z2 and D = Z1 - Z2 for independent standard normals, and
 * h(z) = phi(z) Phi(-z - amin) (the joint density of Z1 = z and S < -amin). Then
 *  (i)  f <= phi and f <= sum_j phi(z) Phi(-z - a_j) <= (K - 1) h (union bound; h falls with a);
 *  (ii) P >= int h = Phi(-amin / sqrt 2) (the term of the smallest gap alone).
 * For amin <= 0, P >= 1/2 and the tails of phi beyond [-15, 14] are below 1e-44. For amin > 0:
 *  upper: Z1 | S = t is N(t/2, 1/2), so int_U^inf h <= P[S < -amin] Phi(-(U + amin/2) sqrt 2),
 *         which is Phi(-14 sqrt 2) < 1e-44 relative to (ii) at U = -amin/2 + 14;
 *  lower: {Z1 < L, S < -amin} lies in {S < -amin - m} or {S < -amin, D < 2L + amin + m}; with
 *         m = 14 and L = -amin/2 - 15 the first is below exp(-amin m/2 - m^2/4) < e^-49 relative
 *         to (ii) (Q(x + d) <= exp(-x d - d^2/2) Q(x)) and the second Phi(-16/sqrt 2) < 1e-29.
 * So with c = max(amin, 0)/2 the range [-c - 15, -c + 14] leaves out under (K - 1) 1e-21
 * relative. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_erf.h>

#include "core/error_impl.h"
#include "dpdyn/nc_theory.h"

enum { NC_QUAD_LIMIT = 400 };
static const double nc_quad_epsrel = 1e-11;
static const double nc_quad_epsabs = 1e-300;

/* log Phi(x) without losing the tiny 1 - Phi(x) for x > 0 or underflowing for x << 0. */
static double log_Phi(double x) {
  if (x > 0.0) {
    return log1p(-gsl_cdf_ugaussian_Q(x));
  }
  if (x == -INFINITY) {
    return -INFINITY;
  }
  return gsl_sf_log_erfc(-x * M_SQRT1_2) - M_LN2;
}

/* The a_j: a_j = sign (v_j - ref) / s over v[0..n-1] except index `skip` (SIZE_MAX: none), each
 * counted `mult` times (the K - 1 equal gaps of perfect collapse are one value counted K - 1
 * times). */
typedef struct {
  const double *v;
  size_t n;
  size_t skip;
  double ref;
  double sign;
  double s;
  double mult;
} gap_set;

static double gap_a(const gap_set *g, size_t j) {
  return g->sign * (g->v[j] - g->ref) / g->s;
}

static double integrand(double z, void *params) {
  const gap_set *g = params;
  double L = 0.0;
  for (size_t j = 0; j < g->n; j++) {
    if (j != g->skip) {
      L += log_Phi(z + gap_a(g, j));
    }
  }
  L *= g->mult;
  return exp(-0.5 * z * z) / sqrt(2.0 * M_PI) * -expm1(L);
}

static int validate_gap_set(const gap_set *g, const char *what, dpd_err *err) {
  if (!(isfinite(g->s) && g->s >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: noise scale s = %g must be finite and >= 0", what, g->s);
  }
  for (size_t j = 0; j < g->n; j++) {
    if (!isfinite(g->v[j])) {
      return DPD_FAIL(err, DPD_EINVAL, "%s: entry %zu = %g is not finite", what, j, g->v[j]);
    }
  }
  if (!isfinite(g->ref)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: reference value %g is not finite", what, g->ref);
  }
  return DPD_OK;
}

/* P[err] of (B.5) for a validated gap set. */
static int error_of_gaps(const gap_set *g, const char *what, double *p_err, dpd_err *err) {
  double amin = INFINITY;
  size_t count = 0;
  if (g->s == 0.0) {
    /* Non-private: 1 if a gap is negative, else t/(t+1) for t ties (the limit s -> 0+). */
    double ties = 0.0;
    for (size_t j = 0; j < g->n; j++) {
      double d = j == g->skip ? 1.0 : g->sign * (g->v[j] - g->ref);
      if (d < 0.0) {
        *p_err = 1.0;
        return DPD_OK;
      }
      if (d == 0.0) {
        ties += g->mult;
      }
    }
    *p_err = ties / (ties + 1.0);
    return DPD_OK;
  }
  for (size_t j = 0; j < g->n; j++) {
    if (j != g->skip) {
      amin = fmin(amin, gap_a(g, j));
      count++;
    }
  }
  if (count == 0 || g->mult == 0.0) {
    *p_err = 0.0;
    return DPD_OK;
  }
  if (amin == INFINITY) { /* every gap/s overflowed: the error is far below DBL_MIN */
    *p_err = 0.0;
    return DPD_OK;
  }
  {
    double c = 0.5 * fmax(amin, 0.0);
    double lo = -c - 15.0;
    double hi = -c + 14.0;
    double result = 0.0;
    double abserr = 0.0;
    int status;
    gsl_function f;
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(NC_QUAD_LIMIT);
    if (w == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "%s: no memory for the quadrature workspace", what);
    }
    f.function = integrand;
    f.params = (void *)g;
    status = gsl_integration_qag(&f, lo, hi, nc_quad_epsabs, nc_quad_epsrel, NC_QUAD_LIMIT,
                                 GSL_INTEG_GAUSS41, w, &result, &abserr);
    gsl_integration_workspace_free(w);
    if (status != GSL_SUCCESS || !isfinite(result)) {
      return DPD_FAIL(err, DPD_EMAXITER,
                      "%s: quadrature over [%g, %g] (smallest gap/s %g) failed: %s (result %g, "
                      "estimated error %g)",
                      what, lo, hi, amin,
                      status != GSL_SUCCESS ? gsl_strerror(status) : "not finite", result, abserr);
    }
    *p_err = fmin(fmax(result, 0.0), 1.0);
  }
  return DPD_OK;
}

int dpd_nc_error_gaps(const double *gaps, size_t ngaps, double s, double *p_err, dpd_err *err) {
  gap_set g = {gaps, ngaps, SIZE_MAX, 0.0, 1.0, s, 1.0};
  int status;
  if ((gaps == NULL && ngaps > 0) || p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc error from gaps: NULL %s",
                    p_err == NULL ? "p_err" : "gaps");
  }
  status = validate_gap_set(&g, "nc error from gaps", err);
  if (status != DPD_OK) {
    return status;
  }
  return error_of_gaps(&g, "nc error from gaps", p_err, err);
}

int dpd_nc_error_logits(const double *m, size_t K, size_t k, double s, double *p_err,
                        dpd_err *err) {
  gap_set g = {m, K, k, 0.0, -1.0, s, 1.0};
  int status;
  if (m == NULL || p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc error from logits: NULL %s", m == NULL ? "m" : "p_err");
  }
  if (K < 1 || k >= K) {
    return DPD_FAIL(err, DPD_EINVAL, "nc error from logits: class k = %zu must be < K = %zu", k, K);
  }
  g.ref = m[k];
  status = validate_gap_set(&g, "nc error from logits", err);
  if (status != DPD_OK) {
    return status;
  }
  return error_of_gaps(&g, "nc error from logits", p_err, err);
}

static int check_counts(size_t K, const double *counts, const char *what, dpd_err *err) {
  if (counts == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL counts", what);
  }
  for (size_t j = 0; j < K; j++) {
    if (!(isfinite(counts[j]) && counts[j] >= 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL, "%s: counts[%zu] = %g must be finite and >= 0", what, j,
                      counts[j]);
    }
  }
  return DPD_OK;
}

static int check_sigma(double sigma, const char *what, dpd_err *err) {
  if (!(isfinite(sigma) && sigma >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: sigma = %g must be finite and >= 0", what, sigma);
  }
  return DPD_OK;
}

int dpd_nc_mean_logits(size_t K, size_t p, const double *counts, const double *means,
                       const double *x, double *m, double *xnorm, dpd_err *err) {
  static const char what[] = "nc mean logits";
  double nx = 0.0;
  int status;
  if (means == NULL || x == NULL || m == NULL || xnorm == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL %s", what,
                    means == NULL ? "means"
                    : x == NULL   ? "x"
                    : m == NULL   ? "m"
                                  : "xnorm");
  }
  if (K < 1 || p < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: K = %zu and p = %zu must be >= 1", what, K, p);
  }
  status = check_counts(K, counts, what, err);
  if (status != DPD_OK) {
    return status;
  }
  for (size_t i = 0; i < p; i++) {
    if (!isfinite(x[i])) {
      return DPD_FAIL(err, DPD_EINVAL, "%s: x[%zu] = %g is not finite", what, i, x[i]);
    }
  }
  {
    double scale = 0.0;
    double ssq = 0.0;
    for (size_t i = 0; i < p; i++) {
      scale = fmax(scale, fabs(x[i]));
    }
    if (scale > 0.0) {
      for (size_t i = 0; i < p; i++) {
        double r = x[i] / scale;
        ssq += r * r;
      }
    }
    nx = scale * sqrt(ssq);
  }
  for (size_t j = 0; j < K; j++) {
    const double *col = means + j * p;
    double dot = 0.0;
    for (size_t i = 0; i < p; i++) {
      dot += col[i] * x[i];
    }
    if (!isfinite(dot)) {
      return DPD_FAIL(err, DPD_EINVAL, "%s: xbar_%zu^T x = %g is not finite (check means)", what, j,
                      dot);
    }
    m[j] = counts[j] * dot;
  }
  *xnorm = nx;
  return DPD_OK;
}

int dpd_nc_point_gaps(size_t K, size_t p, const double *counts, const double *means,
                      const double *x, size_t k, double sigma, double *gaps, double *s,
                      dpd_err *err) {
  static const char what[] = "nc point gaps";
  double *m;
  double xnorm = 0.0;
  int status;
  if (gaps == NULL || s == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL %s", what, gaps == NULL ? "gaps" : "s");
  }
  if (K < 1 || k >= K) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: class k = %zu must be < K = %zu", what, k, K);
  }
  status = check_sigma(sigma, what, err);
  if (status != DPD_OK) {
    return status;
  }
  m = malloc(K * sizeof *m);
  if (m == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "%s: no memory for %zu logits", what, K);
  }
  status = dpd_nc_mean_logits(K, p, counts, means, x, m, &xnorm, err);
  if (status == DPD_OK) {
    size_t i = 0;
    for (size_t j = 0; j < K; j++) {
      if (j != k) {
        gaps[i++] = m[k] - m[j];
      }
    }
    *s = sigma * xnorm;
  }
  free(m);
  return status;
}

int dpd_nc_error_point(size_t K, size_t p, const double *counts, const double *means,
                       const double *x, size_t k, double sigma, double *p_err, dpd_err *err) {
  double *m;
  double xnorm = 0.0;
  int status;
  if (p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc error of a point: NULL p_err");
  }
  if (K < 1 || k >= K) {
    return DPD_FAIL(err, DPD_EINVAL, "nc error of a point: class k = %zu must be < K = %zu", k, K);
  }
  status = check_sigma(sigma, "nc error of a point", err);
  if (status != DPD_OK) {
    return status;
  }
  m = malloc(K * sizeof *m);
  if (m == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "nc error of a point: no memory for %zu logits", K);
  }
  status = dpd_nc_mean_logits(K, p, counts, means, x, m, &xnorm, err);
  if (status == DPD_OK) {
    status = dpd_nc_error_logits(m, K, k, sigma * xnorm, p_err, err);
  }
  free(m);
  return status;
}

int dpd_nc_error_collapse(size_t K, double n, double sigma, double *p_err, dpd_err *err) {
  static const char what[] = "nc perfect-collapse error";
  double gap;
  gap_set g = {&gap, 1, SIZE_MAX, 0.0, 1.0, sigma, 0.0};
  int status;
  if (p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL p_err", what);
  }
  if (K < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: K = %zu must be >= 2", what, K);
  }
  if (!(isfinite(n) && n >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: n = %g must be finite and >= 0", what, n);
  }
  status = check_sigma(sigma, what, err);
  if (status != DPD_OK) {
    return status;
  }
  gap = n / (double)(K - 1);
  g.mult = (double)(K - 1);
  return error_of_gaps(&g, what, p_err, err);
}

int dpd_nc_error_binary(double c, double n, double sigma, double *p_err, dpd_err *err) {
  static const char what[] = "nc binary perfect-collapse error";
  int status;
  if (p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL p_err", what);
  }
  if (!(isfinite(c) && c > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: c = %g must be finite and > 0", what, c);
  }
  if (!(isfinite(n) && n >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: n = %g must be finite and >= 0", what, n);
  }
  status = check_sigma(sigma, what, err);
  if (status != DPD_OK) {
    return status;
  }
  if (sigma == 0.0) {
    *p_err = n > 0.0 ? 0.0 : 0.5;
    return DPD_OK;
  }
  *p_err = gsl_cdf_ugaussian_Q(c * n / sigma);
  return DPD_OK;
}

int dpd_nc_offset_gaps(size_t K, const double *counts, size_t k, double t, double *gaps,
                       dpd_err *err) {
  static const char what[] = "nc offset gaps";
  size_t i = 0;
  int status;
  if (gaps == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL gaps", what);
  }
  if (K < 2 || k >= K) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: need K = %zu >= 2 and class k = %zu < K", what, K, k);
  }
  if (!isfinite(t)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: t = nu^T M_k = %g is not finite", what, t);
  }
  status = check_counts(K, counts, what, err);
  if (status != DPD_OK) {
    return status;
  }
  for (size_t j = 0; j < K; j++) {
    if (j != k) {
      gaps[i++] = counts[k] + counts[j] / (double)(K - 1) + (counts[k] - counts[j]) * t;
    }
  }
  return DPD_OK;
}

int dpd_nc_error_offset(size_t K, const double *counts, size_t k, double t, double sigma,
                        double *p_err, dpd_err *err) {
  double *gaps;
  int status;
  if (p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc offset error: NULL p_err");
  }
  status = check_sigma(sigma, "nc offset error", err);
  if (status != DPD_OK) {
    return status;
  }
  if (K < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "nc offset error: K = %zu must be >= 2", K);
  }
  gaps = malloc((K - 1) * sizeof *gaps);
  if (gaps == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "nc offset error: no memory for %zu gaps", K - 1);
  }
  status = dpd_nc_offset_gaps(K, counts, k, t, gaps, err);
  if (status == DPD_OK) {
    status = dpd_nc_error_gaps(gaps, K - 1, sigma, p_err, err);
  }
  free(gaps);
  return status;
}

int dpd_nc_perturb_gaps(size_t K, double n, size_t k, const double *u, double nu2, double sigma,
                        double *gaps, double *s, dpd_err *err) {
  static const char what[] = "nc test-perturbation gaps";
  double norm2;
  size_t i = 0;
  int status;
  if (u == NULL || gaps == NULL || s == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL %s", what,
                    u == NULL      ? "u"
                    : gaps == NULL ? "gaps"
                                   : "s");
  }
  if (K < 2 || k >= K) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: need K = %zu >= 2 and class k = %zu < K", what, K, k);
  }
  if (!(isfinite(n) && n >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: n = %g must be finite and >= 0", what, n);
  }
  status = check_sigma(sigma, what, err);
  if (status != DPD_OK) {
    return status;
  }
  for (size_t j = 0; j < K; j++) {
    if (!isfinite(u[j])) {
      return DPD_FAIL(err, DPD_EINVAL, "%s: u[%zu] = M_%zu^T nu = %g is not finite", what, j, j,
                      u[j]);
    }
  }
  norm2 = 1.0 + 2.0 * u[k] + nu2;
  if (!(isfinite(nu2) && nu2 >= 0.0 && norm2 >= -1e-12)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "%s: ||nu||^2 = %g must be >= 0 with ||M_k + nu||^2 = 1 + 2 u_k + ||nu||^2 "
                    "= %g >= 0",
                    what, nu2, norm2);
  }
  for (size_t j = 0; j < K; j++) {
    if (j != k) {
      gaps[i++] = n / (double)(K - 1) + n / (double)K * (u[k] - u[j]);
    }
  }
  *s = sigma * sqrt(fmax(norm2, 0.0));
  return DPD_OK;
}

int dpd_nc_error_perturb(size_t K, double n, size_t k, const double *u, double nu2, double sigma,
                         double *p_err, dpd_err *err) {
  double *gaps;
  double s = 0.0;
  int status;
  if (p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc test-perturbation error: NULL p_err");
  }
  if (K < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "nc test-perturbation error: K = %zu must be >= 2", K);
  }
  gaps = malloc((K - 1) * sizeof *gaps);
  if (gaps == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "nc test-perturbation error: no memory for %zu gaps", K - 1);
  }
  status = dpd_nc_perturb_gaps(K, n, k, u, nu2, sigma, gaps, &s, err);
  if (status == DPD_OK) {
    status = dpd_nc_error_gaps(gaps, K - 1, s, p_err, err);
  }
  free(gaps);
  return status;
}

int dpd_nc_error_binary_shift(double n, double Sv, double v2, double sigma, double *p_err,
                              dpd_err *err) {
  static const char what[] = "nc binary shift error";
  if (p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL p_err", what);
  }
  if (!(isfinite(n) && n >= 0.0) || !isfinite(Sv) || !(isfinite(v2) && v2 >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: need finite n = %g >= 0, S^T v = %g, ||v||^2 = %g >= 0",
                    what, n, Sv, v2);
  }
  if (!(isfinite(sigma) && sigma > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: sigma = %g must be finite and > 0", what, sigma);
  }
  *p_err = gsl_cdf_ugaussian_Q((n + Sv) / (sigma * sqrt(1.0 + v2)));
  return DPD_OK;
}

int dpd_nc_error_binary_shift_clt(double n, double beta, double p, double sigma, double *p_err,
                                  dpd_err *err) {
  static const char what[] = "nc binary shift error (CLT)";
  double b2;
  if (p_err == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: NULL p_err", what);
  }
  if (!(isfinite(n) && n >= 0.0) || !(isfinite(beta) && beta >= 0.0) ||
      !(isfinite(p) && p >= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: need finite n = %g >= 0, beta = %g >= 0, p = %g >= 1",
                    what, n, beta, p);
  }
  if (!(isfinite(sigma) && sigma > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s: sigma = %g must be finite and > 0", what, sigma);
  }
  b2 = beta * beta;
  *p_err = gsl_cdf_ugaussian_Q(n / sqrt(sigma * sigma * (1.0 + p * b2) + b2 * b2 * n * p));
  return DPD_OK;
}

int dpd_nc_sensitivity_ce(size_t K, double xmax, double *G, dpd_err *err) {
  if (G == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc CE sensitivity: NULL G");
  }
  if (K < 2 || !(isfinite(xmax) && xmax >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "nc CE sensitivity: need K = %zu >= 2 and finite xmax = %g >= 0", K, xmax);
  }
  *G = sqrt((double)(K - 1) / (double)K) * xmax;
  return DPD_OK;
}

int dpd_nc_sensitivity_square(double xmax, double *G, dpd_err *err) {
  if (G == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc square-loss sensitivity: NULL G");
  }
  if (!(isfinite(xmax) && xmax >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "nc square-loss sensitivity: xmax = %g must be finite and >= 0", xmax);
  }
  *G = xmax;
  return DPD_OK;
}

int dpd_nc_sensitivity_binary(double beta, double p, double *G, dpd_err *err) {
  if (G == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc binary sensitivity: NULL G");
  }
  if (!(isfinite(beta) && beta >= 0.0) || !(isfinite(p) && p >= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "nc binary sensitivity: need beta = %g >= 0 and p = %g >= 1",
                    beta, p);
  }
  *G = sqrt(1.0 + beta * beta * p);
  return DPD_OK;
}

int dpd_nc_sigma(double G, double rho_step, double *sigma, dpd_err *err) {
  if (sigma == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc sigma: NULL sigma");
  }
  if (!(isfinite(G) && G >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "nc sigma: G = %g must be finite and >= 0", G);
  }
  if (!(isfinite(rho_step) && rho_step > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "nc sigma: rho_step = %g must be finite and > 0", rho_step);
  }
  *sigma = G / sqrt(2.0 * rho_step);
  return DPD_OK;
}

/* ---- The papers' bounds (notes B.4; header for each formula and its correction) ------------- */

static int bad_n_beta_p(double n, double beta, double p) {
  return !(isfinite(n) && n >= 0.0) || !(isfinite(beta) && beta >= 0.0) ||
         !(isfinite(p) && p >= 1.0);
}

static int bad_rho_gamma(double rho, double gamma) {
  return !(isfinite(rho) && rho > 0.0) || !(gamma > 0.0 && gamma < 1.0);
}

/* beta^4 p^2 + beta^2 p / 3, or beta^4 p + beta^2 / 3 with independent coordinates (Bernstein). */
static double bernstein_scale(double beta, double p, int independent) {
  double b2 = beta * beta;
  return independent ? b2 * b2 * p + b2 / 3.0 : b2 * b2 * p * p + b2 * p / 3.0;
}

double dpd_nc_bound_thm31(double n, double beta, double p, int independent) {
  if (bad_n_beta_p(n, beta, p)) {
    return NAN;
  }
  if (beta * beta * p <= 1.0) {
    return 0.0;
  }
  return exp(-n / (2.0 * bernstein_scale(beta, p, independent)));
}

double dpd_nc_bound_thm32(double n, double beta, double p, double rho, int independent) {
  double g2;
  if (bad_n_beta_p(n, beta, p) || !(beta > 0.0) || !(isfinite(rho) && rho > 0.0)) {
    return NAN;
  }
  g2 = 1.0 + beta * beta * p;
  return exp(-n * n * rho / (2.0 * g2 * g2)) +
         exp(-n / (8.0 * bernstein_scale(beta, p, independent)));
}

static double thm33(double n, double beta, double p, double sigma, double c) {
  double bp = beta * beta * p;
  if (bad_n_beta_p(n, beta, p) || !(isfinite(sigma) && sigma > 0.0) || !(bp < 1.0)) {
    return NAN;
  }
  return exp(-n * n * (1.0 - bp) * (1.0 - bp) / (c * (1.0 + bp) * sigma * sigma));
}

double dpd_nc_bound_thm33_printed(double n, double beta, double p, double sigma) {
  return thm33(n, beta, p, sigma, 1.0);
}

double dpd_nc_bound_thm33_corrected(double n, double beta, double p, double sigma) {
  return thm33(n, beta, p, sigma, 2.0);
}

static int bad_k_n_sigma(size_t K, double n, double sigma) {
  return K < 2 || !(isfinite(n) && n >= 0.0) || !(isfinite(sigma) && sigma > 0.0);
}

/* 1 + (K - 2)/(K (K - 1)): the printed D.1 factor (from the wrong off-diagonal mean). */
static double d1_factor(size_t K) {
  double k = (double)K;
  return 1.0 + (k - 2.0) / (k * (k - 1.0));
}

double dpd_nc_bound_d1_printed(size_t K, double n, double sigma) {
  if (bad_k_n_sigma(K, n, sigma)) {
    return NAN;
  }
  return (double)(K - 1) * gsl_cdf_ugaussian_P(-n / ((double)K * sigma) * d1_factor(K));
}

double dpd_nc_bound_d1_printed_exp(size_t K, double n, double sigma) {
  double ck;
  if (bad_k_n_sigma(K, n, sigma)) {
    return NAN;
  }
  ck = d1_factor(K) * d1_factor(K);
  return (double)(K - 1) * exp(-ck * n * n / ((double)K * sigma * sigma));
}

double dpd_nc_samples_d1_printed(size_t K, double G, double rho, double gamma) {
  double ck;
  if (K < 2 || !(isfinite(G) && G > 0.0) || bad_rho_gamma(rho, gamma)) {
    return NAN;
  }
  ck = d1_factor(K) * d1_factor(K);
  return G * (double)K * sqrt(log((double)(K - 1) / gamma)) / (ck * sqrt(2.0 * rho));
}

double dpd_nc_bound_d1_union(size_t K, double n, double sigma) {
  if (bad_k_n_sigma(K, n, sigma)) {
    return NAN;
  }
  return (double)(K - 1) * gsl_cdf_ugaussian_P(-n / (M_SQRT2 * (double)(K - 1) * sigma));
}

double dpd_nc_bound_d3_printed(double n, double sigma) {
  if (!(isfinite(n) && n >= 0.0) || !(isfinite(sigma) && sigma > 0.0)) {
    return NAN;
  }
  return exp(-n * n / (2.0 * sigma * sigma));
}

double dpd_nc_bound_d3_corrected(double n, double sigma) {
  if (!(isfinite(n) && n >= 0.0) || !(isfinite(sigma) && sigma > 0.0)) {
    return NAN;
  }
  return exp(-n * n / (8.0 * sigma * sigma));
}

double dpd_nc_samples_table1(dpd_nc_table1_row row, double beta, double p, double rho, double gamma,
                             double alpha) {
  double l, sl, b2;
  if (bad_n_beta_p(0.0, beta, p) || bad_rho_gamma(rho, gamma)) {
    return NAN;
  }
  l = log(1.0 / gamma);
  sl = sqrt(l) / sqrt(2.0 * rho);
  b2 = beta * beta;
  switch (row) {
  case DPD_NC_TABLE1_PERFECT:
    return 2.0 * sqrt(l) / sqrt(rho);
  case DPD_NC_TABLE1_APPROX:
    return p * b2 * l + fmax(p * b2, 1.0) * sl;
  case DPD_NC_TABLE1_APPROX_INDEP:
    return p * b2 * b2 * l + fmax(p * b2, 1.0) * sl;
  case DPD_NC_TABLE1_TEST_STOCH:
  case DPD_NC_TABLE1_OFFSET:
    return fmax(sqrt(p) * beta, 1.0) * sl;
  case DPD_NC_TABLE1_TEST_ADV:
    return fmax(p * beta, 1.0) * sl;
  case DPD_NC_TABLE1_OFFSET_IMBAL: {
    double d = 1.0 - beta + 2.0 * beta * alpha;
    if (!(alpha >= 0.0 && alpha <= 1.0) || !(d > 0.0)) {
      return NAN;
    }
    return fmax(sqrt(p) * beta, 1.0) * sl / d;
  }
  }
  return NAN;
}

double dpd_nc_samples_thm32_privacy(double beta, double p, double rho, double gamma) {
  if (bad_n_beta_p(0.0, beta, p) || bad_rho_gamma(rho, gamma)) {
    return NAN;
  }
  return (1.0 + beta * beta * p) * sqrt(2.0 * log(1.0 / gamma) / rho);
}

double dpd_nc_samples_thm33_corrected(double beta, double p, double rho, double gamma) {
  double bp = beta * beta * p;
  if (bad_n_beta_p(0.0, beta, p) || bad_rho_gamma(rho, gamma) || !(bp < 1.0)) {
    return NAN;
  }
  return (1.0 + bp) * sqrt(log(1.0 / gamma) / rho) / (1.0 - bp);
}

double dpd_nc_samples_thm33_printed(double beta, double p, double rho, double gamma) {
  double bp = beta * beta * p;
  if (bad_n_beta_p(0.0, beta, p) || bad_rho_gamma(rho, gamma) || !(bp < 1.0)) {
    return NAN;
  }
  return (1.0 + bp) * log(1.0 / gamma) / (2.0 * rho * (1.0 - bp) * (1.0 - bp));
}

double dpd_nc_bound_thm34(double n, double beta, double p, double sigma, double R, size_t k,
                          double t) {
  double bp = beta * beta * p;
  double h, c;
  if (bad_n_beta_p(n, beta, p) || !(bp < 1.0) || !(isfinite(sigma) && sigma > 0.0) ||
      !(isfinite(R) && R > 0.0) || k < 1 || !(isfinite(t) && t > 0.0)) {
    return NAN;
  }
  h = ldexp(1.0, -(int)(k < 1000 ? k : 1000));
  c = (1.0 + h) / (1.0 - h) * (0.5 / 1.5) * pow(1.0 + exp(R * (1.0 + bp)), 2.0) /
      ((1.0 - bp) * (1.0 - bp));
  return exp(-n * n / (c * c * sigma * sigma * (1.0 + bp))) + (double)k * exp(-t);
}

static double eta34(double n, double beta, double p, double R, double t, int root) {
  double noise;
  if (bad_n_beta_p(n, beta, p) || !(isfinite(R) && R > 0.0) || !(isfinite(t) && t > 0.0)) {
    return NAN;
  }
  noise = p + sqrt(p * t) + t;
  return R / (n * (1.0 + beta * beta * p) + (root ? sqrt(noise) : noise));
}

double dpd_nc_eta_thm34_printed(double n, double beta, double p, double R, double t) {
  return eta34(n, beta, p, R, t, 0);
}

double dpd_nc_eta_thm34_corrected(double n, double beta, double p, double R, double t) {
  return eta34(n, beta, p, R, t, 1);
}

double dpd_nc_samples_thm41(double beta, double beta0, double p, double rho, double gamma) {
  double G, M, q;
  if (bad_n_beta_p(0.0, beta, p) || !(isfinite(beta0) && beta0 >= 0.0) ||
      bad_rho_gamma(rho, gamma)) {
    return NAN;
  }
  G = 1.0 + beta * (1.0 + beta0 + p * beta0);
  q = beta + beta0 * p;
  M = (1.0 - beta0) * (1.0 - beta0) - p * beta * beta0 - (1.0 + beta0) * q -
      q * (1.0 + beta + beta0 + beta * beta0 * p);
  if (!(M > 0.0)) {
    return NAN;
  }
  return sqrt(G * G * log(2.0 / gamma) / (M * rho));
}

static int bad_b1(double n, double alpha, double v1, double sigma) {
  return !(isfinite(n) && n >= 0.0) || !(alpha >= 0.0 && alpha <= 1.0) || !(fabs(v1) <= 1.0) ||
         !(isfinite(sigma) && sigma > 0.0);
}

double dpd_nc_error_b1_printed(double n, double alpha, double v1, double sigma) {
  if (bad_b1(n, alpha, v1, sigma)) {
    return NAN;
  }
  return gsl_cdf_ugaussian_P(n * (1.0 - (1.0 - 2.0 * alpha) * v1) / (2.0 * sigma));
}

double dpd_nc_error_b1_corrected(double n, double alpha, double v1, double sigma) {
  if (bad_b1(n, alpha, v1, sigma)) {
    return NAN;
  }
  return gsl_cdf_ugaussian_P(-n * (1.0 - (1.0 - 2.0 * alpha) * v1) / (2.0 * sigma));
}

double dpd_nc_bound_b1_exp(double n, double alpha, double beta, double p, double rho) {
  double d;
  if (bad_n_beta_p(n, beta, p) || !(alpha >= 0.0 && alpha <= 1.0) ||
      !(isfinite(rho) && rho > 0.0)) {
    return NAN;
  }
  d = 1.0 - beta + 2.0 * alpha * beta;
  return exp(-n * n * d * d * rho / (4.0 * (1.0 + beta * beta * p)));
}
