/* Label-noise laws (docs/math.md §1.1): the table of laws, their draws for the simulator, the
 * registry of laws added at run time, and the clipping factors of any law (clip.h).
 * SPDX-License-Identifier: MIT
 *
 * A law is one dpd_noise_law_type (noise.h): its name, its parameter and the parameter's
 * validity, its sampler and its clipping moments. Every consumer (the `noise` key, the
 * simulator, the ODE, the SDE, the finite-size correction, the setting check) finds laws here,
 * so adding a law is one block (a sampler and its clipping moments) and one table line, or one
 * dpd_noise_law_register call from outside the library.
 *
 * Draws. Every law is a function of the one standard Gaussian g the simulator already draws per
 * step (its Gaussian fill), so the Gaussian, Rademacher and Laplace laws consume the stream
 * identically and differ only in z:
 *  - Rademacher: zeta sign(g); sign(g) is a fair coin.
 *  - Laplace (density exp(-|z|/b) / (2b), b = zeta/sqrt 2, variance 2 b^2 = zeta^2):
 *    U = 2 Phi(-|g|) = erfc(|g|/sqrt 2) is uniform on (0, 1] and independent of sign(g), so
 *    E = -log U is Exp(1) (inversion; L. Devroye, Non-Uniform Random Variate Generation,
 *    Springer 1986, section II.2) and sign(g) b E is Laplace. For |g| < 1/2 it is evaluated as
 *    -log1p(-erf(|g|/sqrt 2)), which keeps full relative accuracy for small |g|.
 *  - Student-t with nu > 2 scaled to variance zeta^2: t = g / sqrt(V/nu) with V ~ chi^2_nu
 *    independent of g (the classical representation; Devroye 1986, chapter IX), V = 2 Gamma(nu/2)
 *    by the Marsaglia-Tsang sampler (dpd_rng_gamma_sample), and z = zeta sqrt((nu - 2)/nu) t =
 *    zeta sqrt((nu-2)/V) g (Var t = nu/(nu - 2)). */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/noise_impl.h"
#include "core/text_impl.h"
#include "dpdyn/clip.h"
#include "dpdyn/noise.h"
#include "dpdyn/rng.h"

static const double inv_sqrt2 = 0.70710678118654752440084436210485;

/* ---- The built-in laws --------------------------------------------------------------------- */

static double gaussian_sample(const dpd_noise_spec *noise, double g, dpd_rng *rng) {
  (void)rng;
  return noise->zeta * g;
}

static double rademacher_sample(const dpd_noise_spec *noise, double g, dpd_rng *rng) {
  (void)rng;
  return g < 0.0 ? -noise->zeta : noise->zeta;
}

static double laplace_sample(const dpd_noise_spec *noise, double g, dpd_rng *rng) {
  double x = fabs(g) * inv_sqrt2;
  double e = x < 0.5 ? -log1p(-erf(x)) : -log(erfc(x));
  (void)rng;
  return copysign(noise->zeta * inv_sqrt2 * e, g);
}

static double student_sample(const dpd_noise_spec *noise, double g, dpd_rng *rng) {
  double v = 2.0 * dpd_rng_gamma_sample(rng, 0.5 * noise->nu);
  return noise->zeta * sqrt((noise->nu - 2.0) / v) * g;
}

/* nu > 2: the variance zeta^2 needs it. */
static int student_nu_valid(double nu) { return nu > 2.0; }

static const dpd_noise_law_type laws[] = {
    {"gaussian", DPD_NOISE_GAUSSIAN, NULL, "N(0, zeta^2)", NULL, NULL, gaussian_sample, NULL},
    {"laplace", DPD_NOISE_LAPLACE, NULL, "Laplace with scale zeta / sqrt(2)", NULL, NULL,
     laplace_sample, dpd__clip_moments_quadrature},
    {"rademacher", DPD_NOISE_RADEMACHER, NULL, "+-zeta with probability 1/2 each", NULL, NULL,
     rademacher_sample, dpd__clip_moments_rademacher},
    {"student", DPD_NOISE_STUDENT, "NU", "Student-t, NU > 2 degrees of freedom, variance zeta^2",
     student_nu_valid, "> 2", student_sample, dpd__clip_moments_quadrature}};
enum { NLAWS = sizeof laws / sizeof laws[0] };

/* ---- The registry -------------------------------------------------------------------------- */

/* Laws registered at run time: the one process-wide state of the library's tables (noise.h).
 * Writers serialise on `registering`; a reader sees the first `nregistered` slots, each written
 * before the count that publishes it (release/acquire). */
#define NOISE_REGISTERED_MAX 32
static const dpd_noise_law_type *registered[NOISE_REGISTERED_MAX];
static atomic_size_t nregistered;
static atomic_flag registering = ATOMIC_FLAG_INIT;

const dpd_noise_law_type *dpd_noise_law_type_at(size_t i) {
  if (i < NLAWS) {
    return &laws[i];
  }
  return i - NLAWS < atomic_load_explicit(&nregistered, memory_order_acquire)
             ? registered[i - NLAWS]
             : NULL;
}

const dpd_noise_law_type *dpd_noise_law_type_get(dpd_noise_law law) {
  const dpd_noise_law_type *t;
  for (size_t i = 0; (t = dpd_noise_law_type_at(i)) != NULL; i++) {
    if (t->law == law) {
      return t;
    }
  }
  return NULL;
}

const dpd_noise_law_type *dpd_noise_law_type_lookup(const char *name) {
  const dpd_noise_law_type *t;
  for (size_t i = 0; name != NULL && (t = dpd_noise_law_type_at(i)) != NULL; i++) {
    if (strcmp(t->name, name) == 0) {
      return t;
    }
  }
  return NULL;
}

void dpd_noise_law_list(char *buf, size_t cap) {
  const dpd_noise_law_type *t;
  size_t len = 0;
  if (cap == 0) {
    return;
  }
  buf[0] = '\0';
  for (size_t i = 0; (t = dpd_noise_law_type_at(i)) != NULL && len < cap; i++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%s%s%s", len ? ", " : "", t->name,
                            t->parameter != NULL ? ":" : "",
                            t->parameter != NULL ? t->parameter : "");
  }
}

int dpd_noise_law_register(const dpd_noise_law_type *type, dpd_err *err) {
  int status = DPD_OK;
  size_t n;
  if (type == NULL || type->name == NULL || type->name[0] == '\0' ||
      strchr(type->name, ':') != NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'name': '%s' (allowed: a non-empty name without ':')",
                    type == NULL || type->name == NULL ? "(null)" : type->name);
  }
  if ((int)type->law < DPD_NOISE_LAW_USER) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'law': %d of law '%s' (allowed: DPD_NOISE_LAW_USER = %d or "
                    "above)",
                    (int)type->law, type->name, DPD_NOISE_LAW_USER);
  }
  if (type->sample == NULL || type->clip_moments == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': NULL in law '%s' (allowed: a function: every "
                    "registered law draws its noise and gives its clipping moments)",
                    type->sample == NULL ? "sample" : "clip_moments", type->name);
  }
  while (atomic_flag_test_and_set_explicit(&registering, memory_order_acquire)) {
  }
  n = atomic_load_explicit(&nregistered, memory_order_relaxed);
  if (dpd_noise_law_type_lookup(type->name) != NULL) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'name': '%s' (allowed: a name no other law has)",
                      type->name);
  } else if (dpd_noise_law_type_get(type->law) != NULL) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'law': %d of law '%s' (allowed: an id no other law has)",
                      (int)type->law, type->name);
  } else if (n == NOISE_REGISTERED_MAX) {
    status = DPD_FAIL(err, DPD_ENOMEM, "registering law '%s': the registry holds %d laws already",
                      type->name, NOISE_REGISTERED_MAX);
  } else {
    registered[n] = type;
    atomic_store_explicit(&nregistered, n + 1, memory_order_release);
  }
  atomic_flag_clear_explicit(&registering, memory_order_release);
  return status;
}

const char *dpd_noise_law_name(dpd_noise_law law) {
  const dpd_noise_law_type *t = dpd_noise_law_type_get(law);
  return t != NULL ? t->name : "unknown";
}

double dpd__noise_from_gaussian(const dpd_noise_spec *noise, double g, dpd_rng *rng) {
  const dpd_noise_law_type *t = dpd_noise_law_type_get(noise->law);
  return t != NULL ? t->sample(noise, g, rng) : noise->zeta * g;
}

/* ---- Parsing and checks -------------------------------------------------------------------- */

static int parameter_ok(const dpd_noise_law_type *t, double nu) {
  return isfinite(nu) && (t->parameter_valid == NULL || t->parameter_valid(nu));
}

static const char *parameter_words(const dpd_noise_law_type *t) {
  return t->parameter_allowed != NULL ? t->parameter_allowed : "";
}

int dpd_noise_spec_parse(const char *text, dpd_noise_spec *spec, dpd_err *err) {
  const dpd_noise_law_type *t;
  char allowed[512];
  spec->nu = 0.0;
  for (size_t i = 0; (t = dpd_noise_law_type_at(i)) != NULL; i++) {
    size_t n = strlen(t->name);
    if (strncmp(text, t->name, n) != 0) {
      continue;
    }
    if (t->parameter == NULL && text[n] == '\0') {
      spec->law = t->law;
      return DPD_OK;
    }
    if (t->parameter != NULL && text[n] == ':') {
      const char *v = text + n + 1;
      double nu = dpd__decimal_span(v, v + strlen(v)) ? strtod(v, NULL) : NAN;
      if (!parameter_ok(t, nu)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'noise': '%s' (allowed: %s:%s with finite %s%s%s)",
                        text, t->name, t->parameter, t->parameter,
                        t->parameter_allowed != NULL ? " " : "", parameter_words(t));
      }
      spec->law = t->law;
      spec->nu = nu;
      return DPD_OK;
    }
  }
  dpd_noise_law_list(allowed, sizeof allowed);
  return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'noise': '%s' (allowed: %s)", text, allowed);
}

static int unknown_law(dpd_noise_law law, const char *prefix, dpd_err *err) {
  char allowed[512];
  const dpd_noise_law_type *t;
  size_t len = 0;
  allowed[0] = '\0';
  for (size_t i = 0; (t = dpd_noise_law_type_at(i)) != NULL && len < sizeof allowed; i++) {
    len += (size_t)snprintf(allowed + len, sizeof allowed - len, "%s%s", len ? ", " : "", t->name);
  }
  return DPD_FAIL(err, DPD_EINVAL, "%sinvalid value for 'noise': noise law %d (allowed: %s)",
                  prefix, (int)law, allowed);
}

static int bad_parameter(const dpd_noise_law_type *t, double nu, const char *prefix,
                         const char *key, dpd_err *err) {
  return DPD_FAIL(err, DPD_EINVAL, "%sinvalid value for '%s': %g (allowed: finite%s%s for the %s law)",
                  prefix, key, nu, t->parameter_allowed != NULL ? ", " : "", parameter_words(t),
                  t->name);
}

int dpd__noise_law_check(dpd_noise_law law, double nu, const char *prefix,
                         const char *parameter_key, const dpd_noise_law_type **type,
                         dpd_err *err) {
  const dpd_noise_law_type *t = dpd_noise_law_type_get(law);
  if (t == NULL) {
    return unknown_law(law, prefix, err);
  }
  if (t->parameter != NULL && !parameter_ok(t, nu)) {
    return bad_parameter(t, nu, prefix, parameter_key, err);
  }
  if (type != NULL) {
    *type = t;
  }
  return DPD_OK;
}

/* ---- Clipping factors of any law (clip.h; derivation in clip.c) ----------------------------- */

static int validate_noise(const dpd_noise_spec *noise, double c, double R,
                          const dpd_noise_law_type **type, dpd_err *err) {
  if (noise == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'noise': NULL (allowed: a dpd_noise_spec)");
  }
  if ((*type = dpd_noise_law_type_get(noise->law)) == NULL) {
    return unknown_law(noise->law, "", err);
  }
  if (!(noise->zeta >= 0.0) || !isfinite(noise->zeta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'zeta': %g (allowed: finite, >= 0)",
                    noise->zeta);
  }
  if ((*type)->parameter != NULL && !parameter_ok(*type, noise->nu)) {
    return bad_parameter(*type, noise->nu, "", "nu", err);
  }
  if (!(c > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c': %g (allowed: > 0 or inf)", c);
  }
  if (!(R >= 0.0) || !isfinite(R)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'R': %g (allowed: finite, >= 0)", R);
  }
  return DPD_OK;
}

int dpd_clip_noise_factors_eval(const dpd_noise_spec *noise, double c, double R, double *mu,
                                double *nu, double *dmu_dR, double *dnu_dR, dpd_err *err) {
  double f[4]; /* mu, E[min(r^2, c^2)], p_r(c), p_r'(c) */
  double second, m, v, dm, dv;
  const dpd_noise_law_type *type = NULL;
  int status = validate_noise(noise, c, R, &type, err);
  if (status < 0) {
    return status;
  }
  if (type->clip_moments == NULL || noise->zeta * noise->zeta == 0.0) {
    /* Closed form (the Gaussian law); with zeta = 0 every law is the point mass z = 0 and r ~ N(0, 2R) (also
     * when zeta^2 underflows). */
    dpd_clip_factors_eval(c, R + 0.5 * noise->zeta * noise->zeta, mu, nu, dmu_dR, dnu_dR);
    return DPD_OK;
  }
  if (!(c * c <= DBL_MAX)) {
    /* c = inf, or c so large that c^2 overflows: nothing is clipped. */
    m = 1.0;
    v = 1.0;
    dm = 0.0;
    dv = 0.0;
  } else {
    int derivs = dmu_dR != NULL || dnu_dR != NULL;
    second = 2.0 * R + noise->zeta * noise->zeta;
    f[2] = f[3] = 0.0;
    if ((status = type->clip_moments(noise, c, R, derivs, f, err)) < 0) {
      return status;
    }
    /* mu = P(|r| <= c), nu = E[min(r^2, c^2)] / E r^2, and by the heat equation in R (the
     * law of r is that of -z smoothed by N(0, 2R), d/dR = d^2/dr^2 on its density):
     *   d mu/dR = 2 p_r'(c),   d E[min(r^2, c^2)]/dR = 2 mu - 4 c p_r(c). */
    /* Rounding can put a factor an ulp outside [0, 1]. */
    m = fmin(fmax(f[0], 0.0), 1.0);
    v = fmin(fmax(f[1] / second, 0.0), 1.0);
    dm = 2.0 * f[3];
    dv = (2.0 * m - 4.0 * c * f[2] - 2.0 * v) / second;
    if (!isfinite(m) || !isfinite(v) || isnan(dm) || isnan(dv)) {
      return DPD_FAIL(err, DPD_ENONFINITE,
                      "clipping factors (%s noise, c = %g, R = %g, zeta = %g): not finite (mu = "
                      "%g, nu = %g, dmu/dR = %g, dnu/dR = %g); the parameters are beyond the "
                      "range of double precision",
                      type->name, c, R, noise->zeta, m, v, dm, dv);
    }
  }
  if (mu != NULL) {
    *mu = m;
  }
  if (nu != NULL) {
    *nu = v;
  }
  if (dmu_dR != NULL) {
    *dmu_dR = dm;
  }
  if (dnu_dR != NULL) {
    *dnu_dR = dv;
  }
  return DPD_OK;
}

int dpd__noise_law_has_parameter(dpd_noise_law law) {
  const dpd_noise_law_type *t;
  for (size_t i = 0; (t = dpd_noise_law_type_at(i)) != NULL; i++) {
    if (t->law == law) {
      return t->parameter != NULL;
    }
  }
  return 0;
}
