/* Label-noise laws (docs/math.md §1.1): the model-independent description of the noise a simulator
 * adds to its labels and that the clipping factors (clip.h) average over.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NOISE_H
#define DPD_NOISE_H

#include <stddef.h>

#include "dpdyn/rng.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Label-noise laws, each with mean 0 and variance zeta^2 (docs/math.md §1.1). The built-in
 * laws have these ids; a law registered at run time (dpd_noise_law_register) brings its own id,
 * DPD_NOISE_LAW_USER or above. */
typedef enum {
  DPD_NOISE_GAUSSIAN = 0, /* N(0, zeta^2) */
  DPD_NOISE_LAPLACE,      /* Laplace with scale zeta / sqrt(2) */
  DPD_NOISE_RADEMACHER,   /* +-zeta with probability 1/2 each */
  DPD_NOISE_STUDENT, /* Student-t with nu > 2 degrees of freedom, scaled by zeta sqrt((nu-2)/nu) */
  DPD_NOISE_LAW_USER = 100 /* the first id for laws registered at run time */
} dpd_noise_law;

/* A label-noise law with its parameters. */
typedef struct {
  dpd_noise_law law;
  double zeta; /* standard deviation >= 0 */
  double nu;   /* the law's parameter (Student-t: degrees of freedom, > 2); ignored by the laws
                  without one */
} dpd_noise_spec;

/* A label-noise law as one table entry: everything the library knows about a law comes from
 * here (the key `noise` of a model, its "allowed" list and help, the simulator's draws, the
 * clipping factors of the ODE, the SDE and the finite-size correction, the validation of every
 * configuration that names a law). The built-in laws are entries of the table in noise.c;
 * another law is one such entry, registered with dpd_noise_law_register.
 *
 * Contract of a law z (given zeta >= 0 and, when it has one, a valid parameter nu): symmetric
 * about 0, mean 0, variance zeta^2; zeta = 0 is the point mass at 0 (the library then uses the
 * Gaussian closed forms itself and never calls `clip_moments`). */
typedef struct dpd_noise_law_type {
  const char *name;      /* what users type: "student" (written student:NU) */
  dpd_noise_law law;     /* the id in dpd_noise_spec.law and the configs; unique */
  const char *parameter; /* "NU": the law is written name:VALUE; NULL: a law without parameter */
  const char *summary;   /* one line of help */
  /* The parameter's validity (nu of dpd_noise_spec): 1 when valid. NULL: every finite value.
   * Read only when `parameter` is not NULL. */
  int (*parameter_valid)(double nu);
  /* The allowed values in words, for messages: "finite, > 2" (NULL: "finite"). */
  const char *parameter_allowed;
  /* One draw z of the law from a standard Gaussian g that the simulator draws for it; a law
   * that needs more randomness draws it from `rng` (borrowed, advanced: Student-t's
   * chi-square). Pure but for rng, thread-safe; noise is borrowed and valid. */
  double (*sample)(const dpd_noise_spec *noise, double g, dpd_rng *rng);
  /* The clipping moments of the residual r = sqrt(2R) Z - z (Z standard Gaussian independent of
   * z; docs/math.md §1.5) at the clipping threshold c:
   *   out[0] = P(|r| <= c),  out[1] = E[min(r^2, c^2)],
   * and when `derivs` is non-zero also the density of r at c and its slope,
   *   out[2] = p_r(c),       out[3] = p_r'(c)
   * (R = 0 is the law itself: p(c), p'(c); a point mass at c is p_r(c) = INFINITY). Called with
   * a valid law, zeta > 0, 0 < c with c^2 finite, and 0 <= R finite; dpd_clip_noise_factors_eval
   * turns them into mu, nu and their R-derivatives. NULL only for the Gaussian law, whose
   * factors are the closed forms of clip.h. Returns DPD_OK or a negative status with err
   * filled (err may be NULL). Pure and thread-safe. */
  int (*clip_moments)(const dpd_noise_spec *noise, double c, double R, int derivs, double out[4],
                      dpd_err *err);
} dpd_noise_law_type;

/* The i-th law (NULL past the end): the built-in laws in a fixed order, then the registered
 * ones in the order of registration. */
DPD_API const dpd_noise_law_type *dpd_noise_law_type_at(size_t i);
/* The law with id `law`, NULL if none. */
DPD_API const dpd_noise_law_type *dpd_noise_law_type_get(dpd_noise_law law);
/* The law called `name` (without its parameter: "student"), NULL if none. */
DPD_API const dpd_noise_law_type *dpd_noise_law_type_lookup(const char *name);
/* "gaussian, laplace, rademacher, student:NU": the allowed values of the key `noise`, for
 * messages and help (truncated to cap; always terminated when cap > 0). */
DPD_API void dpd_noise_law_list(char *buf, size_t cap);

/* Registers a law (borrowed: `type` and its strings must outlive every use, static storage in
 * practice). Returns DPD_OK; DPD_EINVAL naming the field for an empty or ':'-holding name, a
 * name or id already in use, an id below DPD_NOISE_LAW_USER, or a missing `sample` or
 * `clip_moments`; DPD_ENOMEM when the registry (32 laws) is full. Registration is
 * process-wide, the documented exception to "no mutable globals" (as FFTW's planner): register
 * before the runs that use the law; it is safe against concurrent registrations and lookups, and
 * a law cannot be removed. */
DPD_API int dpd_noise_law_register(const dpd_noise_law_type *type, dpd_err *err);

/* Parses a `noise` value: NAME, or NAME:VALUE for a law with a parameter (student:NU, finite
 * NU > 2), for every law of the table. On a bad value returns DPD_EINVAL naming the key `noise`,
 * the value and the allowed forms (from the table). spec->zeta is left unchanged. */
DPD_API int dpd_noise_spec_parse(const char *text, dpd_noise_spec *spec, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_NOISE_H */
