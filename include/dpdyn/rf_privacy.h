/* Privacy calibration of full-batch DP-GD on random features (docs/math.md §2.3), the rf model's
 * API over the core's GDP conversions (dpdyn/privacy.h).
 * SPDX-License-Identifier: MIT
 *
 * Setting: T full-batch steps of step size eta, replace-one sensitivity 2 eta C / n and per-step
 * noise standard deviation sqrt(eta) (2C/n) sigma, so each step is a Gaussian mechanism whose
 * sensitivity/noise ratio is sqrt(eta)/sigma: in the core's words its noise multiplier is
 * sigma / sqrt(eta).
 *
 *  - Moments-accountant bound of the seed (notes A.3):
 *      sigma_moments = sqrt(eta T) sqrt(8 log(1/delta)) / eps, valid for 0 < eps < 8 log(1/delta).
 *  - Exact accounting (Dong-Roth-Su 2022, Cor. 3.3 and Cor. 2.13): the T steps compose to mu-GDP
 *    with mu = sqrt(eta T)/sigma, which is (eps, delta(eps; mu))-DP for every eps >= 0 with
 *      delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
 *    (dpd_privacy_gdp_delta, dpd_privacy_gdp_eps, dpd_privacy_gdp_mu).
 *
 * Every function is pure and thread-safe. Errors are reported through the optional `dpd_err`
 * (NULL allowed) and a negative status; outputs are written only on success. */
#ifndef DPD_RF_PRIVACY_H
#define DPD_RF_PRIVACY_H

#include <stddef.h>

#include "dpdyn/privacy.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seed's moments-accountant noise multiplier sqrt(eta T) sqrt(8 log(1/delta)) / eps.
 * eta > 0, steps >= 1, delta in (0, 1), 0 < eps < 8 log(1/delta) (outside this range the bound
 * is not proved and DPD_EINVAL is returned with the range in the reason). */
DPD_API int dpd_rf_privacy_sigma_moments(double eta, size_t steps, double eps, double delta,
                                         double *sigma, dpd_err *err);

/* Smallest noise multiplier for which the T-step DP-GD is (eps, delta)-DP by the exact GDP
 * accounting: sqrt(eta T) / dpd_privacy_gdp_mu(eps, delta), rounded up so that the delivered mu
 * never exceeds the admissible one. eta > 0, steps >= 1, eps > 0, delta in (0, 1). */
DPD_API int dpd_rf_privacy_sigma_exact(double eta, size_t steps, double eps, double delta,
                                       double *sigma, dpd_err *err);

/* The eps that noise multiplier `sigma` actually delivers at `delta` under the exact accounting:
 * dpd_privacy_gdp_eps(sqrt(eta T) / sigma, delta). eta > 0, steps >= 1, sigma > 0,
 * delta in (0, 1). */
DPD_API int dpd_rf_privacy_eps_delivered(double eta, size_t steps, double sigma, double delta,
                                         double *eps, dpd_err *err);

/* Both calibrations side by side, for reporting (docs/math.md §2.3: both are reported, with their
 * ratio). */
typedef struct {
  double sigma_moments;     /* seed's bound */
  double sigma_exact;       /* exact GDP calibration */
  double ratio;             /* sigma_moments / sigma_exact (>= 1 in practice: the bound is loose) */
  double mu_moments;        /* sqrt(eta T) / sigma_moments */
  double eps_moments_exact; /* eps actually delivered by sigma_moments at delta (<= eps) */
} dpd_rf_privacy_report;

/* Fills `report` (borrowed output) for (eta, steps, eps, delta); same ranges as
 * dpd_rf_privacy_sigma_moments. */
DPD_API int dpd_rf_privacy_report_eval(double eta, size_t steps, double eps, double delta,
                                       dpd_rf_privacy_report *report, dpd_err *err);

/* Every guarantee of T steps with the seed's sigma (>= 0; 0 is non-private) in the core's
 * vocabulary (dpd_privacy_guarantee_from_gdp with mu = sqrt(eta T)/sigma, the mu of
 * dpd_rf_privacy_eps_delivered, so g->epsilon_gdp is its eps exactly); g->source is GAUSSIAN
 * with g->sigma = sigma/sqrt(eta), the per-step noise multiplier. `g` is a borrowed output. */
DPD_API int dpd_rf_privacy_guarantee_eval(double eta, size_t steps, double sigma, double delta,
                                          dpd_privacy_guarantee *g, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RF_PRIVACY_H */
