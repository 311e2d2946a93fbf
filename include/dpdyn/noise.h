/* Label-noise laws (MATH.md 1.1): the model-independent description of the noise a simulator
 * adds to its labels and that the clipping factors (clip.h) average over.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NOISE_H
#define DPD_NOISE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Label-noise laws, each with mean 0 and variance zeta^2 (MATH.md 1.1). */
typedef enum {
  DPD_NOISE_GAUSSIAN = 0, /* N(0, zeta^2) */
  DPD_NOISE_LAPLACE,      /* Laplace with scale zeta / sqrt(2) */
  DPD_NOISE_RADEMACHER,   /* +-zeta with probability 1/2 each */
  DPD_NOISE_STUDENT /* Student-t with nu > 2 degrees of freedom, scaled by zeta sqrt((nu-2)/nu) */
} dpd_noise_law;

/* A label-noise law with its parameters. */
typedef struct {
  dpd_noise_law law;
  double zeta; /* standard deviation >= 0 */
  double nu;   /* Student-t degrees of freedom, > 2 (ignored by the other laws) */
} dpd_noise_spec;

#ifdef __cplusplus
}
#endif
#endif /* DPD_NOISE_H */
