/* Private: the label-noise laws' checks and the built-in clipping moments (noise.c, clip.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NOISE_IMPL_H
#define DPD_NOISE_IMPL_H

#include "dpdyn/noise.h"
#include "dpdyn/rng.h"

/* The law of `law` with its parameter `nu` checked against the table (noise.h): DPD_OK and
 * *type (borrowed, static) set; DPD_EINVAL with "invalid value for 'noise': noise law L
 * (allowed: gaussian, ...)" for an unknown id, or "invalid value for 'KEY': NU (allowed: RANGE
 * for the NAME law)" for a bad parameter, KEY = `parameter_key` ("nu", "noise_nu"); `prefix`
 * ("simulate: " or "") starts the reason. type may be NULL. Thread-safe. */
__attribute__((visibility("hidden"))) int dpd__noise_law_check(dpd_noise_law law, double nu,
                                                               const char *prefix,
                                                               const char *parameter_key,
                                                               const dpd_noise_law_type **type,
                                                               dpd_err *err);

/* One label noise z of the law in `noise` (mean 0, variance zeta^2) from a standard Gaussian g
 * drawn by the caller: the law's sampler (noise.h; Student-t draws its chi-square from `rng`,
 * borrowed, advanced); an unknown law gives zeta g. The law must be valid; no validation here.
 * The simulator calls the sampler of its law directly; this is for tests. Thread-safe. */
__attribute__((visibility("hidden"))) double dpd__noise_from_gaussian(const dpd_noise_spec *noise,
                                                                      double g, dpd_rng *rng);

/* The clipping moments of the built-in non-Gaussian laws (clip.c; the contract of
 * dpd_noise_law_type.clip_moments): Rademacher in closed form, Laplace and Student-t by
 * quadrature. */
__attribute__((visibility("hidden"))) int dpd__clip_moments_rademacher(const dpd_noise_spec *noise,
                                                                       double c, double R,
                                                                       int derivs, double out[4],
                                                                       dpd_err *err);
__attribute__((visibility("hidden"))) int dpd__clip_moments_quadrature(const dpd_noise_spec *noise,
                                                                       double c, double R,
                                                                       int derivs, double out[4],
                                                                       dpd_err *err);

/* 1 when the law `law` of the table has a parameter (student:NU), else 0 (unknown laws too). */
__attribute__((visibility("hidden"))) int dpd__noise_law_has_parameter(dpd_noise_law law);

#endif /* DPD_NOISE_IMPL_H */
