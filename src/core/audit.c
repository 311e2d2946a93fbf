/* Empirical privacy audit: the statistics (audit.h, docs/privacy.md "Empirical audit").
 * SPDX-License-Identifier: MIT
 *
 * References: Clopper & Pearson, Biometrika 26 (1934) 404: the exact binomial bounds are beta
 * quantiles, p+ = B^-1(1 - a; k + 1, n - k) and p- = B^-1(a; k, n - k + 1) (Newton on GSL's
 * gsl_cdf_beta_P, safeguarded by bisection); Jagielski, Ullman &
 * Oprea, NeurIPS 2020, and Nasr et al., IEEE S&P 2021, for the epsilon bound from (FPR, FNR);
 * Dong, Roth & Su, JRSS-B 2022, Def. 2.5 (G_mu) and the mu bound.
 *
 * Why the held-out threshold: the bound at a threshold chosen after seeing the runs would be the
 * maximum of many bounds, each valid at the confidence alone, so it would hold less often than
 * stated. Choosing t on the first half of the runs and counting errors on the second half keeps
 * the stated confidence exactly (the second half is independent of t). It halves the runs the
 * bound sees, which costs less than a Bonferroni correction over the ~200 candidates would. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "core/error_impl.h"
#include "dpdyn/audit.h"

/* Newton-bisection of the beta quantile: relative tolerance and iteration cap. */
#define BETA_RTOL 1e-13
#define BETA_MAX_ITER 200

/* Threshold grid of the expected bound (in units of the noise sd) and its reach. */
#define EXPECTED_STEP 0.01
#define EXPECTED_SPAN 12.0

dpd_audit_config dpd_audit_config_default(void) {
  dpd_audit_config c = {.confidence = DPD_AUDIT_CONFIDENCE_DEFAULT,
                        .delta = 1e-5,
                        .candidates = DPD_AUDIT_CANDIDATES_DEFAULT};
  return c;
}

/* The beta quantile x with I_x(a, b) = q (a, b >= 1): Newton's method on the regularised
 * incomplete beta gsl_cdf_beta_P with its derivative, the beta density, safeguarded by bisection
 * on the bracket [lo, hi] that every evaluation narrows, to a relative 1e-13. Not GSL's inverse
 * gsl_cdf_beta_Pinv: it fails to converge for some large a, b and then calls GSL's error handler,
 * which aborts unless the caller turned it off (the library never changes that global). */
static double beta_quantile(double q, double a, double b) {
  double lo = 0.0, hi = 1.0, x = a / (a + b);
  for (int it = 0; it < BETA_MAX_ITER; it++) {
    const double f = gsl_cdf_beta_P(x, a, b) - q;
    if (f < 0.0) {
      lo = x;
    } else {
      hi = x;
    }
    if (f == 0.0 || hi - lo <= BETA_RTOL * hi) {
      break;
    }
    const double dens = gsl_ran_beta_pdf(x, a, b);
    double next = dens > 0.0 ? x - f / dens : -1.0;
    if (!(next > lo && next < hi)) {
      next = 0.5 * (lo + hi); /* Newton left the bracket: bisect */
    }
    if (fabs(next - x) <= BETA_RTOL * x) {
      x = next;
      break;
    }
    x = next;
  }
  return x;
}

/* Clopper-Pearson bounds without argument checks: p+ = B^-1(1 - alpha; k + 1, n - k),
 * p- = B^-1(alpha; k, n - k + 1). */
static double cp_upper(size_t k, size_t n, double alpha) {
  if (k >= n) {
    return 1.0;
  }
  return beta_quantile(1.0 - alpha, (double)k + 1.0, (double)(n - k));
}

static double cp_lower(size_t k, size_t n, double alpha) {
  if (k == 0) {
    return 0.0;
  }
  return beta_quantile(alpha, (double)k, (double)(n - k) + 1.0);
}

int dpd_audit_cp_eval(size_t k, size_t n, double alpha, double *lower, double *upper,
                      dpd_err *err) {
  if (n == 0 || k > n) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'runs': %zu successes in %zu trials (allowed: n >= 1, "
                    "k <= n)",
                    k, n);
  }
  if (!(alpha > 0.0 && alpha < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'alpha': %g (allowed: (0, 1))", alpha);
  }
  if (lower != NULL) {
    *lower = cp_lower(k, n, alpha);
  }
  if (upper != NULL) {
    *upper = cp_upper(k, n, alpha);
  }
  return DPD_OK;
}

/* log((1 - delta - b) / a), at least 0. */
static double eps_one(double a, double b, double delta) {
  const double num = 1.0 - delta - b;
  if (!(num > 0.0)) {
    return 0.0;
  }
  if (a <= 0.0) {
    return INFINITY;
  }
  const double e = log(num / a);
  return e > 0.0 ? e : 0.0;
}

double dpd_audit_epsilon_eval(double fpr, double fnr, double delta) {
  const double a = eps_one(fpr, fnr, delta), b = eps_one(fnr, fpr, delta);
  return a > b ? a : b;
}

/* Phi^-1(p) with the ends: -inf at 0, +inf at 1. */
static double probit(double p) {
  if (p <= 0.0) {
    return -INFINITY;
  }
  if (p >= 1.0) {
    return INFINITY;
  }
  return gsl_cdf_ugaussian_Pinv(p);
}

double dpd_audit_mu_eval(double fpr, double fnr) {
  if (fpr <= 0.0 && fnr <= 0.0) {
    return INFINITY;
  }
  /* Phi^-1(1 - fpr) = -Phi^-1(fpr), kept accurate for a small fpr */
  const double m = -probit(fpr) - probit(fnr);
  return m > 0.0 ? m : 0.0;
}

double dpd_audit_tradeoff_eval(double mu, double a) {
  if (a <= 0.0) {
    return 1.0;
  }
  if (a >= 1.0 || isinf(mu)) {
    return 0.0;
  }
  return gsl_cdf_ugaussian_P(-probit(a) - mu);
}

static int cmp_double(const void *pa, const void *pb) {
  const double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* Values of the sorted v[0..n) that are > t. */
static size_t count_above(const double *v, size_t n, double t) {
  size_t lo = 0, hi = n; /* first index with v > t */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (v[mid] > t) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return n - lo;
}

static int check_config(const dpd_audit_config *cfg, dpd_err *err) {
  if (!(cfg->confidence > 0.0 && cfg->confidence < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'confidence': %g (allowed: (0, 1))",
                    cfg->confidence);
  }
  if (!(cfg->delta > 0.0 && cfg->delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'delta': %g (allowed: (0, 1))",
                    cfg->delta);
  }
  if (cfg->candidates == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'candidates': 0 (allowed: >= 1)");
  }
  return DPD_OK;
}

/* Mean and sum of squared deviations of sign * v[0..n). */
static void moments(const double *v, size_t n, double sign, double *mean, double *ss) {
  double m = 0.0, s = 0.0;
  for (size_t i = 0; i < n; i++) {
    m += sign * v[i];
  }
  m /= (double)n;
  for (size_t i = 0; i < n; i++) {
    s += (sign * v[i] - m) * (sign * v[i] - m);
  }
  *mean = m;
  *ss = s;
}

/* The best thresholds on the selection half (sorted a0, a1 of h values each; pooled sorted p of
 * 2h): the candidate maximising the epsilon bound and the one maximising the mu bound. */
static void choose(const double *a0, const double *a1, const double *p, size_t h,
                   const dpd_audit_config *cfg, double *t_eps, double *t_mu) {
  const double alpha = 0.5 * (1.0 - cfg->confidence);
  double best_eps = -1.0, best_mu = -1.0;
  *t_eps = *t_mu = p[h];
  for (size_t j = 0; j < cfg->candidates; j++) {
    size_t q = (size_t)(((double)j + 0.5) / (double)cfg->candidates * (double)(2 * h));
    q = q < 2 * h ? q : 2 * h - 1;
    const double t = p[q];
    const size_t fp = count_above(a0, h, t), fn = h - count_above(a1, h, t);
    const double fpu = cp_upper(fp, h, alpha), fnu = cp_upper(fn, h, alpha);
    const double e = dpd_audit_epsilon_eval(fpu, fnu, cfg->delta), m = dpd_audit_mu_eval(fpu, fnu);
    if (e > best_eps) {
      best_eps = e;
      *t_eps = t;
    }
    if (m > best_mu) {
      best_mu = m;
      *t_mu = t;
    }
  }
}

/* Errors of threshold t on the evaluation half (unsorted b0, b1 of m values each). */
static void errors_at(const double *b0, const double *b1, size_t m, double t, size_t *fp,
                      size_t *fn) {
  *fp = *fn = 0;
  for (size_t i = 0; i < m; i++) {
    *fp += b0[i] > t;
    *fn += b1[i] <= t;
  }
}

int dpd_audit_stats_eval(const double *s0, const double *s1, size_t runs,
                         const dpd_audit_config *cfg, dpd_audit_result *res, dpd_err *err) {
  int status;
  if (s0 == NULL || s1 == NULL || cfg == NULL || res == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "audit: NULL argument (s0, s1, cfg, res)");
  }
  if ((status = check_config(cfg, err)) < 0) {
    return status;
  }
  if (runs < DPD_AUDIT_RUNS_MIN) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'runs': %zu (allowed: >= %d per side: two halves of at "
                    "least 5 runs, the first to choose the threshold, the second to bound the "
                    "errors)",
                    runs, DPD_AUDIT_RUNS_MIN);
  }
  for (size_t i = 0; i < runs; i++) {
    if (!isfinite(s0[i]) || !isfinite(s1[i])) {
      return DPD_FAIL(err, DPD_EINVAL, "audit: run %zu has a non-finite statistic", i);
    }
  }
  memset(res, 0, sizeof *res);
  double ss0, ss1;
  moments(s0, runs, 1.0, &res->mean0, &ss0);
  moments(s1, runs, 1.0, &res->mean1, &ss1);
  res->sd_pooled = sqrt((ss0 + ss1) / (2.0 * (double)runs - 2.0));
  if (!(res->sd_pooled > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "audit: the statistics have no spread (every run equal)");
  }
  /* side 1 above: flip the sign when side 0 is larger in the mean */
  const double sign = res->mean1 >= res->mean0 ? 1.0 : -1.0;
  const size_t h = runs / 2, m = runs - h;
  double *w = malloc((4 * h + 2 * m) * sizeof *w);
  if (w == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (runs = %zu)", runs);
  }
  double *a0 = w, *a1 = a0 + h, *p = a1 + h, *b0 = p + 2 * h, *b1 = b0 + m;
  for (size_t i = 0; i < h; i++) {
    a0[i] = p[i] = sign * s0[i];
    a1[i] = p[h + i] = sign * s1[i];
  }
  for (size_t i = 0; i < m; i++) {
    b0[i] = sign * s0[h + i];
    b1[i] = sign * s1[h + i];
  }
  qsort(a0, h, sizeof *a0, cmp_double);
  qsort(a1, h, sizeof *a1, cmp_double);
  qsort(p, 2 * h, sizeof *p, cmp_double);
  const double alpha = 0.5 * (1.0 - cfg->confidence);
  size_t fp, fn;
  choose(a0, a1, p, h, cfg, &res->threshold_eps, &res->threshold_mu);
  res->runs = runs;
  res->select_runs = h;
  res->eval_runs = m;
  errors_at(b0, b1, m, res->threshold_eps, &fp, &fn);
  res->fpr = (double)fp / (double)m;
  res->fnr = (double)fn / (double)m;
  res->fpr_upper = cp_upper(fp, m, alpha);
  res->fnr_upper = cp_upper(fn, m, alpha);
  res->epsilon_lower = dpd_audit_epsilon_eval(res->fpr_upper, res->fnr_upper, cfg->delta);
  errors_at(b0, b1, m, res->threshold_mu, &fp, &fn);
  res->mu_lower = dpd_audit_mu_eval(cp_upper(fp, m, alpha), cp_upper(fn, m, alpha));
  res->threshold_eps *= sign;
  res->threshold_mu *= sign;
  free(w);
  /* the fitted Gaussian trade-off */
  const double n0 = (double)runs, n1 = (double)runs;
  const double z = gsl_cdf_ugaussian_Qinv(0.5 * (1.0 - cfg->confidence));
  res->mu_hat = fabs(res->mean1 - res->mean0) / res->sd_pooled;
  const double se = sqrt(1.0 / n0 + 1.0 / n1 + res->mu_hat * res->mu_hat / (2.0 * (n0 + n1)));
  res->mu_hat_lo = fmax(0.0, res->mu_hat - z * se);
  res->mu_hat_hi = res->mu_hat + z * se;
  return DPD_OK;
}

int dpd_audit_tradeoff_curve_eval(const double *s0, const double *s1, size_t runs,
                                  size_t points, double confidence, double *threshold,
                                  double *fpr, double *fpr_lo, double *fpr_hi, double *fnr,
                                  double *fnr_lo, double *fnr_hi, size_t *rows, dpd_err *err) {
  if (runs == 0 || points == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'runs': %zu runs, %zu points (allowed: >= 1)",
                    runs, points);
  }
  if (!(confidence > 0.0 && confidence < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'confidence': %g (allowed: (0, 1))",
                    confidence);
  }
  double mean0, mean1, ss;
  moments(s0, runs, 1.0, &mean0, &ss);
  moments(s1, runs, 1.0, &mean1, &ss);
  const double sign = mean1 >= mean0 ? 1.0 : -1.0;
  double *w = malloc(2 * runs * sizeof *w);
  if (w == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (runs = %zu)", runs);
  }
  double *a0 = w, *a1 = a0 + runs;
  for (size_t i = 0; i < runs; i++) {
    a0[i] = sign * s0[i];
    a1[i] = sign * s1[i];
  }
  qsort(a0, runs, sizeof *a0, cmp_double);
  qsort(a1, runs, sizeof *a1, cmp_double);
  const double alpha = 0.5 * (1.0 - confidence);
  /* thresholds: order statistics of side 0 at FPRs log-spaced from 1/runs to 1/2, then of side
   * 1 at FNRs the same, sorted (both tails of the trade-off, where the bounds come from) */
  const size_t half = points / 2;
  for (size_t j = 0; j < points; j++) {
    const int first = j < points - half;
    const size_t jj = first ? j : j - (points - half), nj = first ? points - half : half;
    const double f = nj > 1 ? pow((double)runs, -1.0 + (double)jj / (double)(nj - 1) *
                                                         (1.0 - log(2.0) / log((double)runs)))
                            : 0.5;
    size_t c = (size_t)ceil(f * (double)runs - 1e-9);
    c = c < 1 ? 1 : c > runs ? runs : c;
    /* side 0: c runs above t (FPR c/runs); side 1: c runs at or below t (FNR c/runs) */
    threshold[j] = first ? (c < runs ? a0[runs - c - 1] : a0[0] - 1.0) : a1[c - 1];
  }
  qsort(threshold, points, sizeof *threshold, cmp_double);
  size_t kept = 0; /* distinct thresholds */
  for (size_t j = 0; j < points; j++) {
    if (kept == 0 || threshold[j] != threshold[kept - 1]) {
      threshold[kept++] = threshold[j];
    }
  }
  *rows = kept;
  for (size_t j = 0; j < kept; j++) {
    const double t = threshold[j];
    const size_t fp = count_above(a0, runs, t), fn = runs - count_above(a1, runs, t);
    threshold[j] = sign * t;
    fpr[j] = (double)fp / (double)runs;
    fnr[j] = (double)fn / (double)runs;
    fpr_lo[j] = cp_lower(fp, runs, alpha);
    fpr_hi[j] = cp_upper(fp, runs, alpha);
    fnr_lo[j] = cp_lower(fn, runs, alpha);
    fnr_hi[j] = cp_upper(fn, runs, alpha);
  }
  free(w);
  return DPD_OK;
}

/* Expected count of m trials at rate r, rounded. */
static size_t expected_count(size_t m, double r) {
  const double c = floor((double)m * r + 0.5);
  return c <= 0.0 ? 0 : c >= (double)m ? m : (size_t)c;
}

double dpd_audit_epsilon_expected_eval(double mu, size_t runs, double delta, double confidence) {
  if (runs < 2 || !(mu > 0.0) || !(confidence > 0.0 && confidence < 1.0) ||
      !(delta > 0.0 && delta < 1.0)) {
    return 0.0;
  }
  const size_t m = runs - runs / 2;
  const double alpha = 0.5 * (1.0 - confidence);
  double best = 0.0;
  /* by the symmetry of the two Gaussians, thresholds above mu/2 suffice */
  const double mu_fin = isinf(mu) ? EXPECTED_SPAN : mu;
  for (double t = 0.5 * mu_fin; t <= 0.5 * mu_fin + EXPECTED_SPAN; t += EXPECTED_STEP) {
    const double fpr = gsl_cdf_ugaussian_Q(t), fnr = gsl_cdf_ugaussian_P(t - mu_fin);
    const size_t fp = expected_count(m, fpr), fn = expected_count(m, fnr);
    const double e = dpd_audit_epsilon_eval(cp_upper(fp, m, alpha), cp_upper(fn, m, alpha), delta);
    best = e > best ? e : best;
    if (fp == 0) { /* further thresholds only raise the FNR */
      break;
    }
  }
  return best;
}

size_t dpd_audit_runs_needed_eval(double mu, double target, double delta, double confidence,
                                  size_t max_runs) {
  size_t hi = DPD_AUDIT_RUNS_MIN;
  if (!(target > 0.0)) {
    return hi;
  }
  while (dpd_audit_epsilon_expected_eval(mu, hi, delta, confidence) < target) {
    if (hi > max_runs / 2) {
      return 0;
    }
    hi *= 2;
  }
  size_t lo = hi / 2 < DPD_AUDIT_RUNS_MIN ? DPD_AUDIT_RUNS_MIN : hi / 2;
  while (hi - lo > hi / 100 + 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (dpd_audit_epsilon_expected_eval(mu, mid, delta, confidence) >= target) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}
