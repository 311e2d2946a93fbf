/* Clipping factors mu_c and nu_c of per-sample clipping (MATH.md 1.5).
 * SPDX-License-Identifier: MIT
 *
 * For a residual r ~ N(0, 2P) (Gaussian features and Gaussian label noise,
 * P the full risk) and clipping of |r| at c:
 *   mu_c(P) = P(|r| <= c)                  = erf(k)
 *   nu_c(P) = E[min(r^2, c^2)] / E[r^2]    = erf(k) - (2k/sqrt(pi)) e^{-k^2} + 2 k^2 erfc(k)
 * with k = c / (2 sqrt(P)). Both tend to 1 as c -> inf and equal 1 for c = inf.
 * Pure functions: thread-safe, no allocation. */
#ifndef DPD_CLIP_H
#define DPD_CLIP_H

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Descent-reduction factor mu_c(P). c > 0 (INFINITY allowed), P > 0. */
DPD_API double dpd_clip_mu_eval(double c, double P);

/* Variance-reduction factor nu_c(P). c > 0 (INFINITY allowed), P > 0. */
DPD_API double dpd_clip_nu_eval(double c, double P);

/* Both factors and their derivatives with respect to P (any output pointer
 * may be NULL). Used by the ODE Jacobian. */
DPD_API void dpd_clip_factors_eval(double c, double P, double *mu, double *nu,
                                   double *dmu_dP, double *dnu_dP);

#ifdef __cplusplus
}
#endif
#endif /* DPD_CLIP_H */
