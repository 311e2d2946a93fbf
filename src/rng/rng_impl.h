/* Private: the Box-Muller transform of rng.c on given uniforms, for the tests.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RNG_IMPL_H
#define DPD_RNG_IMPL_H

#include <stddef.h>

#include "dpdyn/isa.h"

/* out[2i], out[2i + 1] = the Gaussian pair (z0, z1) of the uniforms (ua[i], ub[i]), i < nblocks,
 * on the path that dpd_rng_gaussian_fill_isa takes for `isa` (the same code as the fills, so
 * the paths can be compared on crafted uniforms: the ends of (0, 1), the sqrt(2) boundary of
 * the log reduction, the quadrant boundaries of sincos). u must lie in (0, 1) and be normal.
 * DPD_EINVAL where the CPU lacks the path, else DPD_OK. Thread-safe. */
__attribute__((visibility("hidden"))) int dpd__rng_box_muller_isa(const double *ua,
                                                                  const double *ub, double *out,
                                                                  size_t nblocks, dpd_isa isa);

#endif /* DPD_RNG_IMPL_H */
