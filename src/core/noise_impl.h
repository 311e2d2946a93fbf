/* Private: label-noise draws of the simulator (noise.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NOISE_IMPL_H
#define DPD_NOISE_IMPL_H

#include "dpdyn/noise.h"
#include "dpdyn/rng.h"

/* One label noise z of the law in `noise` (mean 0, variance zeta^2) from a standard Gaussian
 * g, drawn by the caller, and, for Student-t only, a chi-square variate drawn here from
 * `rng` (borrowed, advanced):
 *   gaussian:   z = zeta g;
 *   rademacher: z = zeta sign(g) (+zeta for g = 0);
 *   laplace:    z = sign(g) b E, b = zeta / sqrt(2), E = -log(2 Phi(-|g|)) ~ Exp(1)
 *               (inversion of the uniform 2 Phi(-|g|), independent of sign(g));
 *   student:    z = zeta sqrt((nu - 2) / V) g, V = 2 Gamma(nu/2) ~ chi^2_nu from
 *               dpd_rng_gamma_sample(rng, nu/2).
 * The law must be valid (nu > 2 for Student-t); no validation here. Thread-safe. */
__attribute__((visibility("hidden"))) double dpd__noise_from_gaussian(const dpd_noise_spec *noise,
                                                                      double g, dpd_rng *rng);

#endif /* DPD_NOISE_IMPL_H */
