/* Argument checks of the privacy module shared with the models' own calibration code (the rf
 * DP-GD accounting), so that every model words a bad delta or epsilon the same way.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_PRIVACY_IMPL_H
#define DPD_PRIVACY_IMPL_H

#include "dpdyn/status.h"

/* DPD_OK when delta is in (0, 1); DPD_EINVAL naming delta and the range otherwise. */
__attribute__((visibility("hidden"))) int dpd__privacy_check_delta(double delta, dpd_err *err);

/* DPD_OK when eps is in (0, inf]; DPD_EINVAL naming eps and the range (0, inf) otherwise. */
__attribute__((visibility("hidden"))) int dpd__privacy_check_eps_positive(double eps, dpd_err *err);

/* The tight conversion from Renyi DP at one order alpha > 1 (Canonne-Kamath-Steinke 2020;
 * Balle et al. 2020, Thm 21), shared by the zCDP conversion (rdp = alpha rho_z, minimised over
 * continuous alpha) and the RDP accountant (rdp from a curve, minimised over its orders).
 * The caller passes alpha_m1 = alpha - 1 > 0, log_alpha = log(alpha) and
 * log1m_inv_alpha = log1p(-1/alpha), computed as accurately as its alpha parametrisation allows.
 *   eps at delta:  rdp + log1p(-1/alpha) + (log(1/delta) - log alpha)/(alpha - 1);
 *   log delta at eps: (alpha-1)(rdp - eps) + (alpha-1) log1p(-1/alpha) - log alpha
 *                   (= log of exp((alpha-1)(rdp-eps)) (1-1/alpha)^(alpha-1) / alpha). */
__attribute__((visibility("hidden"))) double
dpd__privacy_tight_eps_at_order(double rdp, double alpha_m1, double log_alpha,
                                double log1m_inv_alpha, double log_inv_delta);
__attribute__((visibility("hidden"))) double
dpd__privacy_tight_log_delta_at_order(double rdp, double alpha_m1, double log_alpha,
                                      double log1m_inv_alpha, double eps);

#endif
