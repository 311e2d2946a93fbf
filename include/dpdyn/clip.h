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

#include "dpdyn/linreg.h"
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

/* Clipping factors for any label-noise law (MATH.md 1.5): with the residual
 * r = sqrt(2R) Z - z (Z standard Gaussian, z of the law in `noise`, R the
 * excess risk),
 *   mu = P(|r| <= c),   nu = E[min(r^2, c^2)] / E[r^2],   E[r^2] = 2R + zeta^2.
 * Gaussian noise uses the closed forms above with P = R + zeta^2/2; the other
 * laws integrate the Gaussian closed forms over the law of z (GSL quadrature;
 * a finite sum for Rademacher). Derivatives are with respect to R; any output
 * pointer may be NULL. Returns DPD_EINVAL for an invalid law/parameter or
 * R < 0, and the GSL failure as DPD_EMAXITER with a reason. Pure, thread-safe. */
DPD_API int dpd_clip_noise_factors_eval(const dpd_noise_spec *noise, double c, double R,
                                        double *mu, double *nu, double *dmu_dR, double *dnu_dR,
                                        dpd_err *err);

/* Name of a noise law ("gaussian", "laplace", "rademacher", "student"). */
DPD_API const char *dpd_noise_law_name(dpd_noise_law law);

#ifdef __cplusplus
}
#endif
#endif /* DPD_CLIP_H */
