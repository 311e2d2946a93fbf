/* Clipping factors mu_c and nu_c of per-sample clipping (docs/math.md §1.5).
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

#include "dpdyn/noise.h"
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

/* Clipping factors for any label-noise law (docs/math.md §1.5): with the residual
 * r = sqrt(2R) Z - z (Z standard Gaussian, z of the law in `noise`, R the
 * excess risk),
 *   mu = P(|r| <= c),   nu = E[min(r^2, c^2)] / E[r^2],   E[r^2] = 2R + zeta^2,
 * and their derivatives with respect to R,
 *   dmu/dR = 2 p_r'(c),   dnu/dR = (2 mu - 4 c p_r(c) - 2 nu) / (2R + zeta^2),
 * p_r the density of r (the heat equation in R; derivation in clip.c).
 * Every law of the table (noise.h) is served, registered ones included: its clip_moments
 * gives P(|r| <= c), E[min(r^2, c^2)], p_r(c) and p_r'(c), turned into the factors above.
 * Gaussian noise, and every law with zeta = 0, uses the closed forms above
 * with P = R + zeta^2/2 (bit-identical to dpd_clip_factors_eval). Rademacher
 * is the exact average of the two Gaussian closed forms at z = +-zeta. Laplace
 * and Student-t integrate the closed forms in z over the law by GSL adaptive
 * quadrature (QAG) with a stack workspace; each factor is accurate to about
 * 1e-11 relative, and one call costs about 15-20 us (about 25 us with
 * derivatives, which are computed only when dmu_dR or dnu_dR is non-NULL).
 * Edge cases: c = INFINITY (or c^2 overflowing) gives 1, 1, 0, 0; R = 0 gives
 * the values for r = -z exactly (for continuous laws the limit R -> 0+; for
 * Rademacher with zeta == c, mu = nu = 1 there and dnu/dR = -inf).
 * `noise` is borrowed; any output pointer may be NULL; err may be NULL.
 * Returns DPD_OK; DPD_EINVAL naming the parameter, its value and the allowed
 * range for NULL noise, an unknown law, zeta not finite or < 0, nu not finite
 * or <= 2 (Student-t), c NaN or <= 0, R not finite or < 0; DPD_EMAXITER with
 * the GSL reason when a quadrature fails. GSL reports that failure to its
 * error handler too, whose default aborts: callers turn it off
 * (gsl_set_error_handler_off; the CLI does). Pure and thread-safe: no
 * allocation, no shared state. */
DPD_API int dpd_clip_noise_factors_eval(const dpd_noise_spec *noise, double c, double R,
                                        double *mu, double *nu, double *dmu_dR, double *dnu_dR,
                                        dpd_err *err);

/* Name of a noise law ("gaussian", "laplace", "rademacher", "student", or a registered law's;
 * "unknown" for an id no law has), from the law table (noise.h). */
DPD_API const char *dpd_noise_law_name(dpd_noise_law law);

#ifdef __cplusplus
}
#endif
#endif /* DPD_CLIP_H */
