/* Gamma variates on dpdyn's counter-based streams (Marsaglia-Tsang squeeze method).
 * SPDX-License-Identifier: MIT
 *
 * References:
 *  - G. Marsaglia, W. W. Tsang, "A simple method for generating gamma variables",
 *    ACM Trans. Math. Softw. 26 (2000) 363-372: for shape a >= 1, with d = a - 1/3 and
 *    c = 1/sqrt(9 d), draw x ~ N(0, 1) until v = (1 + c x)^3 > 0, then u ~ U(0, 1), and
 *    accept d v when u < 1 - 0.0331 x^4 (the squeeze) or log u < x^2/2 + d (1 - v + log v);
 *    otherwise start again. The acceptance rate exceeds 95% for every a >= 1.
 *  - The same paper notes the boost for 0 < a < 1: Gamma(a) = Gamma(a + 1) U^{1/a} with U ~ U(0, 1)
 *    independent (the "boost"); the uniform is drawn first, as GSL's gsl_ran_gamma does.
 *
 * Stream use: the Gaussians and uniforms come from dpd_rng_gaussian and dpd_rng_uniform; a
 * scalar call of one kind discards a cached value of the other kind (rng.h), so every draw of
 * the rejection loop takes a fresh Philox block. The number of blocks consumed is random but
 * is a deterministic function of the stream position. */
#include <math.h>

#include "dpdyn/rng.h"

/* The squeeze constant of Marsaglia & Tsang (2000). */
static const double mt_squeeze = 0.0331;

double dpd_rng_gamma_sample(dpd_rng *rng, double shape) {
  if (!(shape > 0.0) || !isfinite(shape)) {
    return NAN;
  }
  if (shape < 1.0) {
    double u = dpd_rng_uniform(rng);
    return dpd_rng_gamma_sample(rng, shape + 1.0) * pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v, u;
    do {
      x = dpd_rng_gaussian(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    u = dpd_rng_uniform(rng);
    if (u < 1.0 - mt_squeeze * (x * x) * (x * x)) {
      return d * v;
    }
    if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) {
      return d * v;
    }
  }
}
