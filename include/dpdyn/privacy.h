/* Privacy accounting for the one-pass DP-SGD (MATH.md 1.4).
 * SPDX-License-Identifier: MIT
 *
 * rho is the "privacy rho" of MATH.md: the algorithm is rho^2/2-zCDP. The
 * zCDP parameter rho_z = rho^2/2 is what the (eps, delta) conversions take.
 * All functions are pure and thread-safe. */
#ifndef DPD_PRIVACY_H
#define DPD_PRIVACY_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Privacy amplification by iteration for given sequences (eta_k, sigma_k),
 * k = 0..n-1: rho_eff = max_k eta_k / sqrt(sum_{j>=k} sigma_j^2).
 * Returns INFINITY when some eta_k > 0 has no noise after it, 0 when all eta_k = 0. */
DPD_API double dpd_privacy_rho_eff(const double *eta, const double *sigma, size_t n);

/* Bun-Steinke conversion: eps = rho_z + 2 sqrt(rho_z log(1/delta)). */
DPD_API double dpd_privacy_eps_bun_steinke(double rho_z, double delta);

/* Tight conversion (Canonne-Kamath-Steinke 2020; Balle et al. 2020, Thm 21):
 * eps = min_{alpha>1} [alpha rho_z + log1p(-1/alpha) - (log delta + log alpha)/(alpha-1)],
 * clamped at 0. Minimised with GSL's Brent minimiser. */
DPD_API int dpd_privacy_eps_tight(double rho_z, double delta, double *eps, dpd_err *err);

/* Largest rho (privacy rho, zCDP rho^2/2) whose tight eps does not exceed
 * `eps` at `delta`. Monotone bisection that never overshoots: the returned
 * rho always satisfies eps_tight(rho^2/2, delta) <= eps. */
DPD_API int dpd_privacy_rho_from_eps(double eps, double delta, double *rho, dpd_err *err);

/* Closed-form inverse of Bun-Steinke: rho_z = (sqrt(log(1/delta) + eps) - sqrt(log(1/delta)))^2;
 * returns the privacy rho = sqrt(2 rho_z). */
DPD_API double dpd_privacy_rho_from_eps_bun_steinke(double eps, double delta);

#ifdef __cplusplus
}
#endif
#endif /* DPD_PRIVACY_H */
