/* Label-noise draws for the simulator: Gaussian, Rademacher, Laplace and Student-t laws with
 * mean 0 and variance zeta^2 (docs/math.md §1.1).
 * SPDX-License-Identifier: MIT
 *
 * Every law is a function of the one standard Gaussian g the simulator already draws per step
 * (its Gaussian fill), so the Gaussian, Rademacher and Laplace laws consume the stream
 * identically and differ only in z:
 *  - Rademacher: zeta sign(g); sign(g) is a fair coin.
 *  - Laplace (density exp(-|z|/b) / (2b), b = zeta/sqrt 2, variance 2 b^2 = zeta^2):
 *    U = 2 Phi(-|g|) = erfc(|g|/sqrt 2) is uniform on (0, 1] and independent of sign(g), so
 *    E = -log U is Exp(1) (inversion; L. Devroye, Non-Uniform Random Variate Generation,
 *    Springer 1986, section II.2) and sign(g) b E is Laplace. For |g| < 1/2 it is evaluated as
 *    -log1p(-erf(|g|/sqrt 2)), which keeps full relative accuracy for small |g|.
 *  - Student-t with nu > 2 scaled to variance zeta^2: t = g / sqrt(V/nu) with V ~ chi^2_nu
 *    independent of g (the classical representation; Devroye 1986, chapter IX), V = 2 Gamma(nu/2)
 * by the Marsaglia-Tsang sampler (dpd_rng_gamma_sample), and z = zeta sqrt((nu - 2)/nu) t = zeta
 * sqrt((nu-2)/V) g (Var t = nu/(nu - 2)). */
#include <math.h>

#include "dpdyn/rng.h"
#include "core/noise_impl.h"

static const double inv_sqrt2 = 0.70710678118654752440084436210485;

double dpd__noise_from_gaussian(const dpd_noise_spec *noise, double g, dpd_rng *rng) {
  switch (noise->law) {
  case DPD_NOISE_RADEMACHER:
    return g < 0.0 ? -noise->zeta : noise->zeta;
  case DPD_NOISE_LAPLACE: {
    double x = fabs(g) * inv_sqrt2;
    double e = x < 0.5 ? -log1p(-erf(x)) : -log(erfc(x));
    return copysign(noise->zeta * inv_sqrt2 * e, g);
  }
  case DPD_NOISE_STUDENT: {
    double v = 2.0 * dpd_rng_gamma_sample(rng, 0.5 * noise->nu);
    return noise->zeta * sqrt((noise->nu - 2.0) / v) * g;
  }
  case DPD_NOISE_GAUSSIAN:
  default:
    return noise->zeta * g;
  }
}
