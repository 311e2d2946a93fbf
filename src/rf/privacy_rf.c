/* Privacy accounting for full-batch DP-GD on random features: the seed's moments bound and the
 * exact calibration through the core's mu-GDP conversions (src/core/privacy.c).
 * SPDX-License-Identifier: MIT
 *
 * References
 *  [ACGMMTZ16] M. Abadi et al., "Deep learning with differential privacy", CCS 2016, Thm 1 and
 *              Sec. 3.1 (moments accountant); its adaptation to full-batch DP-GD,
 *              sigma >= sqrt(eta T) sqrt(8 log(1/delta)) / eps for eps < 8 log(1/delta), is the
 *              proposition of Bombari & Mondelli, "Privacy for free in the overparameterized
 *              regime", PNAS 122 (2025) e2423072122 (derivation in notes-rf-nc-sp.md A.3).
 *  [DRS22]     J. Dong, A. Roth, W. Su, "Gaussian differential privacy", JRSS B 84 (2022):
 *              Cor. 3.3 (T steps of sensitivity/noise ratio sqrt(eta)/sigma compose to
 *              sqrt(eta T)/sigma-GDP) and Cor. 2.13 (its exact delta(eps)). */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include "core/error_impl.h"
#include "core/privacy_impl.h"
#include "dpdyn/privacy.h"
#include "dpdyn/rf_privacy.h"
#include "rf/rf_run_impl.h"

/* Cap on the one-ulp nudges of sigma_exact after the division sqrt(eta T) / mu. */
#define DPD_RF_PRIVACY_MAX_NUDGE 64

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

/* delta(eps; mu) > delta for mu > 0, eps > 0 (arguments already checked). */
static int gdp_delta_exceeds(double mu, double eps, double delta) {
  double d = 1.0;
  (void)dpd_privacy_gdp_delta(mu, eps, &d, NULL);
  return d > delta;
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
  status = dpd__privacy_check_eps_positive(eps, err);
  if (status < 0) {
    return status;
  }
  return dpd__privacy_check_delta(delta, err);
}

int dpd_rf_privacy_sigma_moments(double eta, size_t steps, double eps, double delta, double *sigma,
                                 dpd_err *err) {
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
  status = dpd_privacy_gdp_mu(eps, delta, &mu, err);
  if (status < 0) {
    return status;
  }
  rt = sqrt(eta * (double)steps);
  s = rt / mu;
  /* The division rounds; nudge up until the delivered mu is admissible. */
  for (i = 0; gdp_delta_exceeds(rt / s, eps, delta); i++) {
    if (i >= DPD_RF_PRIVACY_MAX_NUDGE) {
      return DPD_FAIL(err, DPD_ESOLVER,
                      "sigma_exact: cannot round sigma = %.17g up to a valid value", s);
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
  status = dpd__privacy_check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  return dpd_privacy_gdp_eps(sqrt(eta * (double)steps) / sigma, delta, eps, err);
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
  status =
      dpd_rf_privacy_eps_delivered(eta, steps, r.sigma_moments, delta, &r.eps_moments_exact, err);
  if (status < 0) {
    return status;
  }
  *report = r;
  return DPD_OK;
}

int dpd_rf_privacy_guarantee_eval(double eta, size_t steps, double sigma, double delta,
                                  dpd_privacy_guarantee *g, dpd_err *err) {
  dpd_privacy_guarantee r;
  int status;
  if (g == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "guarantee output pointer is NULL");
  }
  if ((status = check_eta(eta, err)) < 0 || (status = check_steps(steps, err)) < 0) {
    return status;
  }
  if (!(sigma >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma = %g is invalid: the allowed range is [0, inf]", sigma);
  }
  /* mu as dpd_rf_privacy_eps_delivered computes it, so epsilon_gdp is its eps bit for bit. */
  status = dpd_privacy_guarantee_from_gdp(sqrt(eta * (double)steps) / sigma, delta, &r, err);
  if (status < 0) {
    return status;
  }
  r.source = DPD_PRIVACY_SOURCE_GAUSSIAN;
  r.sigma = sigma / sqrt(eta); /* the per-step noise multiplier of the core's vocabulary */
  r.steps = steps;
  *g = r;
  return DPD_OK;
}

/* The seed's moments sigma for plan->epsilon and the epsilon it really delivers; left NAN where
 * its bound does not hold (epsilon >= 8 log(1/delta)). */
static int moments_eval(double eta, size_t T, double delta, dpd__rf_privacy_plan *plan,
                        dpd_err *err) {
  dpd_rf_privacy_report rep;
  int status;
  if (!(plan->epsilon < 8.0 * log(1.0 / delta))) {
    return DPD_OK;
  }
  if ((status = dpd_rf_privacy_report_eval(eta, T, plan->epsilon, delta, &rep, err)) < 0) {
    return status;
  }
  plan->sigma_moments = rep.sigma_moments;
  plan->eps_moments = rep.eps_moments_exact;
  return DPD_OK;
}

int dpd__rf_privacy_plan_sigma(double eta, size_t T, double delta, dpd__rf_budget budget,
                               double value, int moments, dpd__rf_privacy_plan *plan,
                               dpd_err *err) {
  static const char *const names[] = {"epsilon", "sigma", "mu", "zcdp"};
  const int have_epsilon = budget == DPD__RF_BUDGET_EPSILON;
  int status;
  *plan = (dpd__rf_privacy_plan){.budget = budget, .moments = moments, .sigma_moments = NAN,
                                 .eps_moments = NAN, .epsilon = have_epsilon ? value : 0.0};
  if (budget == DPD__RF_BUDGET_SIGMA) {
    plan->sigma = value;
  } else if (budget == DPD__RF_BUDGET_MU || budget == DPD__RF_BUDGET_ZCDP) {
    const double mu = budget == DPD__RF_BUDGET_MU ? value : sqrt(2.0 * value);
    if (!(mu > 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': 0 (allowed: > 0, or inf for a non-private run)",
                      names[budget]);
    }
    plan->sigma = isinf(mu) ? 0.0 : sqrt(eta * (double)T) / mu;
  }
  if (!have_epsilon) {
    return DPD_OK;
  }
  if ((status = dpd_rf_privacy_sigma_exact(eta, T, value, delta, &plan->sigma_exact, err)) < 0 ||
      (status = moments_eval(eta, T, delta, plan, err)) < 0) {
    return status;
  }
  if (moments && isnan(plan->sigma_moments)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'epsilon': %g with calibration = moments (allowed: 0 < "
                    "epsilon < 8 log(1/delta) = %g, where the seed's bound holds)",
                    value, 8.0 * log(1.0 / delta));
  }
  plan->sigma = moments ? plan->sigma_moments : plan->sigma_exact;
  return DPD_OK;
}

int dpd__rf_privacy_plan_delivered(double eta, size_t T, double delta,
                                   dpd__rf_privacy_plan *plan, dpd_err *err) {
  int status;
  if (!(plan->sigma > 0.0)) {
    plan->epsilon = INFINITY;
    plan->epsilon_exact = INFINITY;
    return DPD_OK;
  }
  if ((status = dpd_rf_privacy_eps_delivered(eta, T, plan->sigma, delta, &plan->epsilon_exact,
                                             err)) < 0) {
    return status;
  }
  if (plan->budget != DPD__RF_BUDGET_EPSILON) {
    /* sigma given: both calibrations of the epsilon it delivers, for comparison. */
    plan->epsilon = plan->epsilon_exact;
    plan->sigma_exact = plan->sigma;
    (void)moments_eval(eta, T, delta, plan, NULL); /* epsilon = 0 (huge sigma): left NAN */
  }
  return DPD_OK;
}
