/* Privacy accounting for full-batch DP-GD on random features: moments bound and exact mu-GDP.
 * SPDX-License-Identifier: MIT
 *
 * References
 *  [ACGMMTZ16] M. Abadi et al., "Deep learning with differential privacy", CCS 2016, Thm 1 and
 *              Sec. 3.1 (moments accountant); its adaptation to full-batch DP-GD,
 *              sigma >= sqrt(eta T) sqrt(8 log(1/delta)) / eps for eps < 8 log(1/delta), is the
 *              proposition of Bombari & Mondelli, "Privacy for free in the overparameterized
 *              regime", PNAS 122 (2025) e2423072122 (derivation in notes-rf-nc-sp.md A.3).
 *  [DRS22]     J. Dong, A. Roth, W. Su, "Gaussian differential privacy", JRSS B 84 (2022):
 *              Thm 2.7 / Cor. 2.13 (mu-GDP <=> (eps, delta(eps))-DP for all eps, with
 *              delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)) and Cor. 3.3
 *              (composition of mu_i-GDP is sqrt(sum mu_i^2)-GDP).
 *  [AS64]      M. Abramowitz, I. Stegun, Handbook, 26.2.12 (Mills ratio asymptotics), as used by
 *              gsl_sf_hazard.
 *
 * Stable evaluation of delta(eps; mu). With a = -eps/mu + mu/2 and b = a - mu one has
 * b^2 = a^2 + 2 eps, hence e^eps phi(b) = phi(a) (phi the standard normal density). Writing
 * Phi(z) = phi(z) R(-z) with the Mills ratio R(x) = Q(x)/phi(x) = 1/hazard(x):
 *     delta = phi(a) [R(-a) - R(-b)],
 * a difference of two O(1/|a|) numbers rather than of two numbers that both underflow. It is used
 * when a < DPD_RFPRIV_MILLS_SWITCH; for larger a the direct form, with e^eps Phi(b) evaluated as
 * exp(eps + log Phi(b)) through log erfc, has no harmful cancellation (Phi(a) >= Phi(-1)).
 *
 * The inverses (eps of delta, mu of eps) bisect with an invariant that keeps the returned end on
 * the private side, so they never overshoot even where rounding makes delta locally non-monotone. */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_erf.h>

#include "core/error_impl.h"
#include "dpdyn/rf_privacy.h"

/* Below this value of a = -eps/mu + mu/2 the Mills-ratio form of delta is used. */
#define DPD_RFPRIV_MILLS_SWITCH (-1.0)
/* Bisection: relative width of the final bracket, iteration cap, bracket-expansion cap. */
#define DPD_RFPRIV_BISECT_RTOL 1e-13
#define DPD_RFPRIV_BISECT_MAX_ITER 4000
#define DPD_RFPRIV_MAX_EXPAND 2100
/* Cap on the one-ulp nudges of sigma_exact after the division sqrt(eta T) / mu. */
#define DPD_RFPRIV_MAX_NUDGE 64

/* log Phi(z) for any finite z (log erfc keeps it finite far in the lower tail). */
static double log_norm_cdf(double z) {
  return gsl_sf_log_erfc(-z / M_SQRT2) - M_LN2;
}

/* delta(eps; mu) for eps >= 0 (or +inf), mu > 0 (or +inf); no validation. */
static double delta_raw(double eps, double mu) {
  double a;
  double b;
  double d;
  if (isinf(eps)) {
    return 0.0;
  }
  if (isinf(mu)) {
    return 1.0;
  }
  a = -eps / mu + 0.5 * mu;
  b = a - mu;
  if (a >= DPD_RFPRIV_MILLS_SWITCH) {
    double t1 = 0.5 * erfc(-a / M_SQRT2);
    double t2 = exp(eps + log_norm_cdf(b));
    d = t1 - t2;
  } else {
    double x1 = -a; /* > 1 */
    double x2 = -b; /* x1 + mu */
    double r1 = 1.0 / gsl_sf_hazard(x1);
    double r2 = 1.0 / gsl_sf_hazard(x2);
    double log_phi_a = -0.5 * a * a - 0.5 * log(2.0 * M_PI);
    d = exp(log_phi_a) * (r1 - r2);
  }
  if (d < 0.0) {
    d = 0.0;
  }
  if (d > 1.0) {
    d = 1.0;
  }
  return d;
}

static int check_eta(double eta, dpd_err *err) {
  if (!(eta > 0.0) || isinf(eta)) {
    return DPD_FAIL(err, DPD_EINVAL, "eta = %g is invalid: the allowed range is (0, inf)", eta);
  }
  return DPD_OK;
}

static int check_steps(size_t steps, dpd_err *err) {
  if (steps < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "T = %zu steps is invalid: the allowed range is T >= 1",
                    steps);
  }
  return DPD_OK;
}

static int check_eps_positive(double eps, dpd_err *err) {
  if (!(eps > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is (0, inf)", eps);
  }
  return DPD_OK;
}

static int check_delta(double delta, dpd_err *err) {
  if (!(delta > 0.0 && delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)", delta);
  }
  return DPD_OK;
}

static int check_mu(double mu, dpd_err *err) {
  if (!(mu > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "mu = %g is invalid: the allowed range is (0, inf]", mu);
  }
  return DPD_OK;
}

int dpd_rf_privacy_delta_gdp(double eps, double mu, double *delta, dpd_err *err) {
  int status;
  if (delta == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "delta output pointer is NULL");
  }
  if (!(eps >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is [0, inf]", eps);
  }
  status = check_mu(mu, err);
  if (status < 0) {
    return status;
  }
  *delta = delta_raw(eps, mu);
  return DPD_OK;
}

/* Boundary of a monotone predicate on (0, inf): "low" holds below it and not above. Starting
 * from [0, 1], doubles hi until low(hi) fails, then bisects to a relative width
 * DPD_RFPRIV_BISECT_RTOL. On return low(*lo) holds (or *lo = 0) and low(*hi) does not, so the
 * caller picks the side that never overshoots. `what` names the caller in failures. */
typedef struct {
  double eps, mu, delta;
  int mu_is_variable; /* 1: x is mu (low: delta(eps; x) <= delta); 0: x is eps (low: delta(x; mu) > delta) */
} gdp_search;

static int gdp_low(const gdp_search *s, double x) {
  return s->mu_is_variable ? delta_raw(s->eps, x) <= s->delta : delta_raw(x, s->mu) > s->delta;
}

static int expand_bisect(const gdp_search *s, const char *what, double *lo_out, double *hi_out,
                         dpd_err *err) {
  double lo = 0.0, hi = 1.0;
  int iter;
  for (iter = 0; gdp_low(s, hi); iter++) {
    if (iter >= DPD_RFPRIV_MAX_EXPAND) {
      return DPD_FAIL(err, DPD_EMAXITER, "%s: no bracket found (eps = %g, mu = %g, delta = %g)",
                      what, s->eps, s->mu, s->delta);
    }
    lo = hi;
    hi *= 2.0;
  }
  for (iter = 0; hi - lo > DPD_RFPRIV_BISECT_RTOL * hi; iter++) {
    double mid = lo + 0.5 * (hi - lo);
    if (mid <= lo || mid >= hi) {
      break;
    }
    if (iter >= DPD_RFPRIV_BISECT_MAX_ITER) {
      return DPD_FAIL(err, DPD_EMAXITER,
                      "%s: bisection did not converge (eps = %g, mu = %g, delta = %g)", what,
                      s->eps, s->mu, s->delta);
    }
    if (gdp_low(s, mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  *lo_out = lo;
  *hi_out = hi;
  return DPD_OK;
}

int dpd_rf_privacy_eps_gdp(double delta, double mu, double *eps, dpd_err *err) {
  double lo = 0.0;
  double hi = 1.0;
  int status;

  if (eps == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "eps output pointer is NULL");
  }
  status = check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  status = check_mu(mu, err);
  if (status < 0) {
    return status;
  }
  if (isinf(mu)) {
    *eps = INFINITY;
    return DPD_OK;
  }
  if (delta_raw(0.0, mu) <= delta) {
    *eps = 0.0;
    return DPD_OK;
  }
  /* Invariant: delta(lo) > delta >= delta(hi); delta decreases to 0 as eps -> inf. */
  {
    gdp_search search = {NAN, mu, delta, 0};
    status = expand_bisect(&search, "eps_gdp", &lo, &hi, err);
    if (status < 0) {
      return status;
    }
  }
  *eps = hi;
  return DPD_OK;
}

int dpd_rf_privacy_mu_gdp(double eps, double delta, double *mu, dpd_err *err) {
  double lo = 0.0;
  double hi = 1.0;
  int status;

  if (mu == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "mu output pointer is NULL");
  }
  status = check_eps_positive(eps, err);
  if (status < 0) {
    return status;
  }
  status = check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  if (isinf(eps)) {
    *mu = INFINITY;
    return DPD_OK;
  }
  /* Invariant: delta(eps; lo) <= delta < delta(eps; hi) (delta(eps; 0+) = 0, increasing in mu). */
  {
    gdp_search search = {eps, NAN, delta, 1};
    status = expand_bisect(&search, "mu_gdp", &lo, &hi, err);
    if (status < 0) {
      return status;
    }
  }
  if (!(lo > 0.0)) {
    return DPD_FAIL(err, DPD_ESOLVER, "mu_gdp: no positive mu satisfies delta = %g at eps = %g",
                    delta, eps);
  }
  *mu = lo;
  return DPD_OK;
}

static int check_common(double eta, size_t steps, double eps, double delta, dpd_err *err) {
  int status = check_eta(eta, err);
  if (status < 0) {
    return status;
  }
  status = check_steps(steps, err);
  if (status < 0) {
    return status;
  }
  status = check_eps_positive(eps, err);
  if (status < 0) {
    return status;
  }
  return check_delta(delta, err);
}

int dpd_rf_privacy_sigma_moments(double eta, size_t steps, double eps, double delta,
                                 double *sigma, dpd_err *err) {
  double l;
  int status;
  if (sigma == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma output pointer is NULL");
  }
  status = check_common(eta, steps, eps, delta, err);
  if (status < 0) {
    return status;
  }
  l = -log(delta);
  if (!(eps < 8.0 * l)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "eps = %g is invalid for the moments-accountant bound: it requires "
                    "0 < eps < 8 log(1/delta) = %g (delta = %g)",
                    eps, 8.0 * l, delta);
  }
  *sigma = sqrt(eta * (double)steps) * sqrt(8.0 * l) / eps;
  return DPD_OK;
}

int dpd_rf_privacy_sigma_exact(double eta, size_t steps, double eps, double delta, double *sigma,
                               dpd_err *err) {
  double mu = NAN;
  double rt;
  double s;
  int status;
  int i;
  if (sigma == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma output pointer is NULL");
  }
  status = check_common(eta, steps, eps, delta, err);
  if (status < 0) {
    return status;
  }
  status = dpd_rf_privacy_mu_gdp(eps, delta, &mu, err);
  if (status < 0) {
    return status;
  }
  rt = sqrt(eta * (double)steps);
  s = rt / mu;
  /* The division rounds; nudge up until the delivered mu is admissible. */
  for (i = 0; delta_raw(eps, rt / s) > delta; i++) {
    if (i >= DPD_RFPRIV_MAX_NUDGE) {
      return DPD_FAIL(err, DPD_ESOLVER, "sigma_exact: cannot round sigma = %.17g up to a valid value",
                      s);
    }
    s = nextafter(s, INFINITY);
  }
  *sigma = s;
  return DPD_OK;
}

int dpd_rf_privacy_eps_delivered(double eta, size_t steps, double sigma, double delta, double *eps,
                                 dpd_err *err) {
  int status;
  if (eps == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "eps output pointer is NULL");
  }
  status = check_eta(eta, err);
  if (status < 0) {
    return status;
  }
  status = check_steps(steps, err);
  if (status < 0) {
    return status;
  }
  if (!(sigma > 0.0) || isinf(sigma)) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma = %g is invalid: the allowed range is (0, inf)", sigma);
  }
  status = check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  return dpd_rf_privacy_eps_gdp(delta, sqrt(eta * (double)steps) / sigma, eps, err);
}

int dpd_rf_privacy_report_eval(double eta, size_t steps, double eps, double delta,
                               dpd_rf_privacy_report *report, dpd_err *err) {
  dpd_rf_privacy_report r;
  int status;
  if (report == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "report output pointer is NULL");
  }
  status = dpd_rf_privacy_sigma_moments(eta, steps, eps, delta, &r.sigma_moments, err);
  if (status < 0) {
    return status;
  }
  status = dpd_rf_privacy_sigma_exact(eta, steps, eps, delta, &r.sigma_exact, err);
  if (status < 0) {
    return status;
  }
  r.ratio = r.sigma_moments / r.sigma_exact;
  r.mu_moments = sqrt(eta * (double)steps) / r.sigma_moments;
  status = dpd_rf_privacy_eps_delivered(eta, steps, r.sigma_moments, delta, &r.eps_moments_exact,
                                        err);
  if (status < 0) {
    return status;
  }
  *report = r;
  return DPD_OK;
}
