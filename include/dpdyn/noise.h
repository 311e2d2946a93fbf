/* Label-noise laws (docs/math.md §1.1): the model-independent description of the noise a simulator
 * adds to its labels and that the clipping factors (clip.h) average over.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NOISE_H
#define DPD_NOISE_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Label-noise laws, each with mean 0 and variance zeta^2 (docs/math.md §1.1). */
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

/* The laws as a table (the key `noise` of a model, its "allowed" list and its help come from
 * it): name, law, the name of its parameter when the law has one (written name:VALUE, e.g.
 * student:5), and one line. */
typedef struct {
  const char *name;
  dpd_noise_law law;
  const char *parameter; /* "NU" for student, NULL for a law without parameter */
  const char *summary;
} dpd_noise_law_type;

/* The i-th law (NULL past the end), in a fixed order. */
DPD_API const dpd_noise_law_type *dpd_noise_law_type_at(size_t i);
/* Parses a `noise` value: gaussian | laplace | rademacher | student:NU (finite NU > 2). On a bad
 * value returns DPD_EINVAL naming the key `noise`, the value and the allowed forms (from the
 * table). */
DPD_API int dpd_noise_spec_parse(const char *text, dpd_noise_spec *spec, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_NOISE_H */
