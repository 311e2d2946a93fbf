/* Renyi DP accounting of the (Poisson-subsampled) Gaussian mechanism (include/dpdyn/rdp.h).
 * SPDX-License-Identifier: MIT
 *
 * The sampled Gaussian mechanism [MTZ19 = Mironov, Talwar, Zhang 2019, "Renyi differential
 * privacy of the sampled Gaussian mechanism"]. With add/remove neighbours and sensitivity 1 the
 * output distributions reduce to mu0 = N(0, sigma^2) and the mixture
 * mu1 = (1-q) N(0, sigma^2) + q N(1, sigma^2) (the added record contributes 1 along its
 * direction with probability q). [MTZ19, Thm 4 and §3.3] show that the RDP at order alpha is
 * max(D_alpha(mu1 || mu0), D_alpha(mu0 || mu1)) = D_alpha(mu1 || mu0) for integer alpha >= 2,
 * and D_alpha(mu1 || mu0) = log(A_alpha) / (alpha - 1) with
 *   A_alpha = E_{z ~ mu0} [(mu1(z)/mu0(z))^alpha],  mu1(z)/mu0(z) = 1 - q + q exp((2z - 1)/(2
 * sigma^2)). The binomial theorem (alpha integer) gives A_alpha = sum_k binom(alpha, k)
 * (1-q)^(alpha-k) q^k E[exp(k (2z - 1) / (2 sigma^2))], and E[exp(k z / sigma^2)] = exp(k^2 / (2
 * sigma^2)) for z ~ N(0, sigma^2), so the k-th expectation is exp((k^2 - k) / (2 sigma^2)): the sum
 * of rdp.h.
 *
 * Evaluation without cancellation. The weights p_k = binom(alpha, k) (1-q)^(alpha-k) q^k sum to
 * 1 and the exponent c_k = (k^2 - k)/(2 sigma^2) vanishes at k = 0 and k = 1, so
 *   A_alpha - 1 = sum_{k=2}^{alpha} p_k expm1(c_k),
 * a sum of positive terms (the plain sum of A_alpha loses everything to cancellation when
 * q^2 / sigma^2 is below the rounding of 1). Each term is taken in log space,
 *   log p_k = lnchoose(alpha, k) + (alpha-k) log1p(-q) + k log q,
 *   log expm1(c) = c + log1p(-e^{-c})  (c > log 2),   log(expm1(c))  (else),
 * (lnchoose from GSL's lgamma, thread-safe), summed by log-sum-exp into L = log(A_alpha - 1), and
 * log A_alpha = log1p(e^L) (L <= 0) or L + log1p(e^{-L}) (L > 0): nothing overflows for large
 * alpha or small sigma. q = 1 keeps only k = alpha ((alpha - k) log1p(-q) is taken as 0 there). */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_gamma.h>

#include "core/error_impl.h"
#include "core/privacy_impl.h"
#include "dpdyn/rdp.h"

/* 2..64, then larger orders for small eps, many steps or small delta. */
static const double default_orders[] = {
    2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,  14,  15,  16,  17,  18,  19,
    20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,  32,  33,  34,  35,  36,  37,
    38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49,  50,  51,  52,  53,  54,  55,
    56, 57, 58, 59, 60, 61, 62, 63, 64, 80, 96, 128, 192, 256, 384, 512, 768, 1024};

const double *dpd_rdp_orders_default(size_t *n) {
  if (n != NULL) {
    *n = sizeof default_orders / sizeof default_orders[0];
  }
  return default_orders;
}

/* ------------------------------------------------------------------------------------------ */
/* Argument checks. */

static int check_sigma(double sigma, dpd_err *err) {
  if (!(sigma > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma = %g is invalid: the allowed range is (0, inf]", sigma);
  }
  return DPD_OK;
}

static int check_orders(const double *alphas, size_t n, int integer, dpd_err *err) {
  if (n > 0 && alphas == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "alphas input pointer is NULL");
  }
  for (size_t i = 0; i < n; i++) {
    double a = alphas[i];
    if (!(a > 1.0 && a <= DPD_RDP_ORDER_MAX)) {
      return DPD_FAIL(err, DPD_EINVAL, "alphas[%zu] = %g is invalid: the allowed range is (1, %g]",
                      i, a, DPD_RDP_ORDER_MAX);
    }
    if (integer && a != floor(a)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "alphas[%zu] = %g is invalid: the subsampled Gaussian (q < 1) is computed "
                      "at integer orders only, the allowed values are the integers 2..%g",
                      i, a, DPD_RDP_ORDER_MAX);
    }
  }
  return DPD_OK;
}

static int check_curve(const double *alphas, const double *rdp, size_t n, dpd_err *err) {
  int status;
  if (n == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "n = 0 is invalid: the allowed range is n >= 1 orders");
  }
  status = check_orders(alphas, n, 0, err);
  if (status < 0) {
    return status;
  }
  if (rdp == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rdp input pointer is NULL");
  }
  for (size_t i = 0; i < n; i++) {
    if (!(rdp[i] >= 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL, "rdp[%zu] = %g is invalid: the allowed range is [0, inf]", i,
                      rdp[i]);
    }
  }
  return DPD_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* RDP of one step. */

int dpd_rdp_gaussian(double sigma, const double *alphas, size_t n, double *rdp, dpd_err *err) {
  int status = check_sigma(sigma, err);
  if (status < 0) {
    return status;
  }
  status = check_orders(alphas, n, 0, err);
  if (status < 0) {
    return status;
  }
  if (n > 0 && rdp == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rdp output pointer is NULL");
  }
  for (size_t i = 0; i < n; i++) {
    rdp[i] = isinf(sigma) ? 0.0 : alphas[i] / (2.0 * sigma * sigma);
  }
  return DPD_OK;
}

/* log(e^a + e^b) for a >= b (a may be -inf only if b is too). */
static double log_add(double a, double b) {
  if (a < b) {
    double t = a;
    a = b;
    b = t;
  }
  if (isinf(a) && a < 0.0) {
    return a;
  }
  return a + log1p(exp(b - a));
}

/* log(expm1(c)) for c > 0, without overflow or cancellation. */
static double log_expm1(double c) {
  return (c > M_LN2) ? c + log1p(-exp(-c)) : log(expm1(c));
}

/* log A_alpha of the header at integer alpha >= 2, q in (0, 1], finite sigma > 0. */
static double log_a_int(double sigma, double q, unsigned int alpha) {
  double inv_2s2 = 1.0 / (2.0 * sigma * sigma);
  double log_q = log(q);
  double log_1mq = log1p(-q); /* -inf at q = 1 */
  double l = -INFINITY;       /* log(A_alpha - 1) */
  for (unsigned int k = 2; k <= alpha; k++) {
    double dk = (double)k;
    double c = (dk * dk - dk) * inv_2s2;
    double log_p = gsl_sf_lnchoose(alpha, k) + dk * log_q;
    if (k < alpha) {
      log_p += (double)(alpha - k) * log_1mq;
    }
    l = log_add(l, log_p + log_expm1(c));
  }
  if (l > 0.0) {
    return l + log1p(exp(-l));
  }
  return log1p(exp(l));
}

int dpd_rdp_subsampled_gaussian(double sigma, double q, const double *alphas, size_t n, double *rdp,
                                dpd_err *err) {
  int status = check_sigma(sigma, err);
  if (status < 0) {
    return status;
  }
  if (!(q > 0.0 && q <= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "q = %g is invalid: the allowed range is (0, 1]", q);
  }
  status = check_orders(alphas, n, q < 1.0, err);
  if (status < 0) {
    return status;
  }
  if (n > 0 && rdp == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rdp output pointer is NULL");
  }
  for (size_t i = 0; i < n; i++) {
    double a = alphas[i];
    if (isinf(sigma)) {
      rdp[i] = 0.0;
    } else if (a != floor(a)) { /* q = 1 and a fractional order: the plain Gaussian */
      rdp[i] = a / (2.0 * sigma * sigma);
    } else {
      rdp[i] = log_a_int(sigma, q, (unsigned int)a) / (a - 1.0);
    }
  }
  return DPD_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Composition and conversions. */

int dpd_rdp_compose(const double *rdp, size_t n, size_t steps, double *total, dpd_err *err) {
  if (steps < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "steps = %zu is invalid: the allowed range is steps >= 1",
                    steps);
  }
  if (n > 0 && (rdp == NULL || total == NULL)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s pointer is NULL", rdp == NULL ? "rdp input" : "total");
  }
  for (size_t i = 0; i < n; i++) {
    if (!(rdp[i] >= 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL, "rdp[%zu] = %g is invalid: the allowed range is [0, inf]", i,
                      rdp[i]);
    }
    if (!(total[i] >= 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "total[%zu] = %g is invalid: the allowed range is [0, inf] (initialise the "
                      "total to zeros)",
                      i, total[i]);
    }
  }
  for (size_t i = 0; i < n; i++) {
    total[i] += (double)steps * rdp[i];
  }
  return DPD_OK;
}

typedef enum { CONVERT_TIGHT, CONVERT_CLASSIC } convert_kind;

static int rdp_epsilon(const double *alphas, const double *rdp, size_t n, double delta,
                       convert_kind kind, double *eps, double *best_alpha, dpd_err *err) {
  double best = INFINITY;
  double arg = alphas != NULL && n > 0 ? alphas[0] : NAN;
  double log_inv_delta;
  int status;
  if (eps == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "eps output pointer is NULL");
  }
  status = check_curve(alphas, rdp, n, err);
  if (status < 0) {
    return status;
  }
  status = dpd__privacy_check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  log_inv_delta = -log(delta);
  for (size_t i = 0; i < n; i++) {
    double a = alphas[i];
    double e = (kind == CONVERT_TIGHT)
                   ? dpd__privacy_tight_eps_at_order(rdp[i], a - 1.0, log(a), log1p(-1.0 / a),
                                                     log_inv_delta)
                   : rdp[i] + log_inv_delta / (a - 1.0);
    if (e < best) {
      best = e;
      arg = a;
    }
  }
  *eps = (best > 0.0) ? best : 0.0;
  if (best_alpha != NULL) {
    *best_alpha = arg;
  }
  return DPD_OK;
}

int dpd_rdp_epsilon(const double *alphas, const double *rdp, size_t n, double delta, double *eps,
                    double *best_alpha, dpd_err *err) {
  return rdp_epsilon(alphas, rdp, n, delta, CONVERT_TIGHT, eps, best_alpha, err);
}

int dpd_rdp_epsilon_classic(const double *alphas, const double *rdp, size_t n, double delta,
                            double *eps, double *best_alpha, dpd_err *err) {
  return rdp_epsilon(alphas, rdp, n, delta, CONVERT_CLASSIC, eps, best_alpha, err);
}

int dpd_rdp_delta(const double *alphas, const double *rdp, size_t n, double eps, double *delta,
                  double *best_alpha, dpd_err *err) {
  double best = INFINITY; /* log delta */
  double arg = alphas != NULL && n > 0 ? alphas[0] : NAN;
  int status;
  if (delta == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "delta output pointer is NULL");
  }
  status = check_curve(alphas, rdp, n, err);
  if (status < 0) {
    return status;
  }
  if (!(eps >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is [0, inf]", eps);
  }
  if (isinf(eps)) {
    *delta = 0.0;
    if (best_alpha != NULL) {
      *best_alpha = arg;
    }
    return DPD_OK;
  }
  for (size_t i = 0; i < n; i++) {
    double a = alphas[i];
    double ld = isinf(rdp[i]) ? INFINITY
                              : dpd__privacy_tight_log_delta_at_order(rdp[i], a - 1.0, log(a),
                                                                      log1p(-1.0 / a), eps);
    if (ld < best) {
      best = ld;
      arg = a;
    }
  }
  *delta = (best < 0.0) ? exp(best) : 1.0;
  if (best_alpha != NULL) {
    *best_alpha = arg;
  }
  return DPD_OK;
}

int dpd_rdp_subsampled_gaussian_epsilon(double sigma, double q, size_t steps, double delta,
                                        double *eps, double *best_alpha, dpd_err *err) {
  size_t n;
  const double *alphas = dpd_rdp_orders_default(&n);
  double step[sizeof default_orders / sizeof default_orders[0]];
  double total[sizeof default_orders / sizeof default_orders[0]] = {0};
  int status = dpd_rdp_subsampled_gaussian(sigma, q, alphas, n, step, err);
  if (status < 0) {
    return status;
  }
  status = dpd_rdp_compose(step, n, steps, total, err);
  if (status < 0) {
    return status;
  }
  return dpd_rdp_epsilon(alphas, total, n, delta, eps, best_alpha, err);
}
