/* Spectrum and theta* of the Gaussian linear-regression model (docs/math.md §1.1).
 * SPDX-License-Identifier: MIT
 *
 * Everything is expressed in the eigenbasis of Sigma. Because the data law,
 * the clipping rule and the isotropic privacy noise are all invariant under
 * rotations, simulating with Sigma = diag(lambda) and theta* rotated into the
 * eigenbasis gives the same law for every risk as the original coordinates. A
 * uniformly random direction for theta* is drawn directly in the eigenbasis
 * (its law is rotation invariant). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/linreg.h"
#include "dpdyn/rng.h"

dpd_linreg_problem_config dpd_linreg_problem_config_default(void) {
  dpd_linreg_problem_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.d = 0;
  cfg.spectrum = DPD_SPECTRUM_ISO;
  cfg.alpha = 1.0;
  cfg.theta = DPD_THETA_RANDOM;
  cfg.theta_norm = 1.0;
  cfg.seed = 1;
  return cfg;
}

void dpd_linreg_problem_free(dpd_linreg_problem *p) {
  if (p != NULL) {
    free(p->lambda);
    free(p->sqrt_lambda);
    free(p->theta_star);
    free(p->group_lambda);
    free(p->group_mult);
    free(p->group_S0);
    free(p->group_tol);
    free(p);
  }
}

typedef struct {
  double value;
  size_t mult;
} level;

static int level_desc(const void *a, const void *b) {
  double x = ((const level *)a)->value, y = ((const level *)b)->value;
  return (x < y) - (x > y);
}

static int validate(const dpd_linreg_problem_config *cfg, dpd_err *err) {
  if (cfg->d == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'd': 0 (allowed: integer >= 1)");
  }
  if (cfg->spectrum == DPD_SPECTRUM_POWERLAW && (!(cfg->alpha > 0.0) || !isfinite(cfg->alpha))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': powerlaw exponent %g (allowed: finite, > 0)",
                    cfg->alpha);
  }
  if (cfg->spectrum == DPD_SPECTRUM_LEVELS || cfg->spectrum == DPD_SPECTRUM_LIST) {
    size_t total = 0;
    if (cfg->nvalues == 0 || cfg->values == NULL || cfg->mult == NULL) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': no eigenvalues given (allowed: >= 1)");
    }
    for (size_t k = 0; k < cfg->nvalues; k++) {
      if (!(cfg->values[k] > 0.0) || !isfinite(cfg->values[k])) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': eigenvalue %g (allowed: finite, > 0)",
                        cfg->values[k]);
      }
      if (cfg->mult[k] == 0) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': multiplicity 0 (allowed: >= 1)");
      }
      if (cfg->mult[k] > cfg->d - total) { /* overflow-safe: total <= d here */
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': multiplicities sum to more than d = %zu "
                        "(allowed: sum equal to d)",
                        cfg->d);
      }
      total += cfg->mult[k];
    }
    if (total != cfg->d) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': multiplicities sum to %zu but d = %zu "
                      "(allowed: sum equal to d)",
                      total, cfg->d);
    }
  }
  if (cfg->theta == DPD_THETA_GIVEN) {
    int nonzero = 0;
    if (cfg->theta_given == NULL) {
      return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'theta_star': no components given");
    }
    for (size_t i = 0; i < cfg->d; i++) {
      if (!isfinite(cfg->theta_given[i])) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'theta_star': component %zu is %g (allowed: finite)",
                        i + 1, cfg->theta_given[i]);
      }
      nonzero |= cfg->theta_given[i] != 0.0;
    }
    if (!nonzero) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'theta_star': every component is 0 (allowed: a nonzero "
                      "theta*: the initial excess risk would be 0)");
    }
    if (cfg->theta_norm < 0.0 || !isfinite(cfg->theta_norm)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'theta_norm': %g (allowed: finite, > 0; 0 keeps the "
                      "given components)",
                      cfg->theta_norm);
    }
  } else if (!(cfg->theta_norm > 0.0) || !isfinite(cfg->theta_norm)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'theta_norm': %g (allowed: finite, > 0)",
                    cfg->theta_norm);
  }
  return DPD_OK;
}

/* Fills p->lambda (non-increasing, mean 1). */
static int fill_spectrum(const dpd_linreg_problem_config *cfg, dpd_linreg_problem *p,
                         dpd_err *err) {
  size_t d = cfg->d;
  double sum = 0.0;
  switch (cfg->spectrum) {
  case DPD_SPECTRUM_ISO:
    for (size_t i = 0; i < d; i++) {
      p->lambda[i] = 1.0;
    }
    return DPD_OK;
  case DPD_SPECTRUM_POWERLAW:
    /* Summed from the smallest term up for accuracy. */
    for (size_t i = d; i-- > 0;) {
      p->lambda[i] = pow((double)(i + 1), -cfg->alpha);
      sum += p->lambda[i];
    }
    break;
  case DPD_SPECTRUM_LEVELS:
  case DPD_SPECTRUM_LIST: {
    size_t i = 0;
    level *lv = malloc(cfg->nvalues * sizeof *lv);
    if (lv == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory sorting the spectrum");
    }
    for (size_t k = 0; k < cfg->nvalues; k++) {
      lv[k].value = cfg->values[k];
      lv[k].mult = cfg->mult[k];
    }
    qsort(lv, cfg->nvalues, sizeof *lv, level_desc);
    for (size_t k = 0; k < cfg->nvalues; k++) {
      for (size_t m = 0; m < lv[k].mult; m++) {
        p->lambda[i++] = lv[k].value;
      }
    }
    free(lv);
    for (size_t j = d; j-- > 0;) {
      sum += p->lambda[j];
    }
    break;
  }
  default:
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'spectrum': unknown kind %d",
                    (int)cfg->spectrum);
  }
  /* lambda[0] is the largest. Eigenvalues near the ends of the double range (a sum that
   * overflows, a mean below the normal range) are first divided by the largest; the ordinary
   * path keeps its exact operations. */
  if (!(isfinite(sum) && isfinite((double)d / sum))) {
    const double top = p->lambda[0];
    sum = 0.0;
    for (size_t j = d; j-- > 0;) {
      p->lambda[j] /= top;
      sum += p->lambda[j];
    }
  }
  if (!(sum > 0.0 && isfinite(sum) && isfinite((double)d / sum))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': the eigenvalues cannot be renormalised to mean "
                    "1 in double precision (allowed: eigenvalues within a factor 1e300 of each "
                    "other)");
  }
  for (size_t i = 0; i < d; i++) {
    p->lambda[i] *= (double)d / sum;
  }
  return DPD_OK;
}

static void fill_theta(const dpd_linreg_problem_config *cfg, dpd_linreg_problem *p) {
  size_t d = cfg->d;
  double norm2 = 0.0;
  if (cfg->theta == DPD_THETA_FLAT) {
    for (size_t i = 0; i < d; i++) {
      p->theta_star[i] = cfg->theta_norm / sqrt((double)d);
    }
    return;
  }
  if (cfg->theta == DPD_THETA_RANDOM) {
    dpd_rng rng;
    dpd_rng_init(&rng, cfg->seed, DPD_RNG_STREAM_PROBLEM);
    dpd_rng_gaussian_fill(&rng, p->theta_star, d);
  } else {
    memcpy(p->theta_star, cfg->theta_given, d * sizeof *p->theta_star);
    if (!(cfg->theta_norm > 0.0)) {
      return;
    }
  }
  for (size_t i = 0; i < d; i++) {
    norm2 += p->theta_star[i] * p->theta_star[i];
  }
  if (norm2 > 0.0) {
    double scale = cfg->theta_norm / sqrt(norm2);
    for (size_t i = 0; i < d; i++) {
      p->theta_star[i] *= scale;
    }
  }
}

static int fill_groups(dpd_linreg_problem *p, dpd_err *err) {
  size_t d = p->d, g = 0;
  for (size_t i = 0; i < d; i++) {
    if (i == 0 || p->lambda[i] != p->lambda[i - 1]) {
      g++;
    }
  }
  p->ngroups = g;
  p->group_lambda = malloc(g * sizeof *p->group_lambda);
  p->group_mult = calloc(g, sizeof *p->group_mult);
  p->group_S0 = calloc(g, sizeof *p->group_S0);
  if (p->group_lambda == NULL || p->group_mult == NULL || p->group_S0 == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory grouping %zu eigenvalues", d);
  }
  g = 0;
  for (size_t i = 0; i < d; i++) {
    if (i > 0 && p->lambda[i] != p->lambda[i - 1]) {
      g++;
    }
    p->group_lambda[g] = p->lambda[i];
    p->group_mult[g] += 1.0;
    p->group_S0[g] += 0.5 * (double)d * p->theta_star[i] * p->theta_star[i];
  }
  return DPD_OK;
}

int dpd_linreg_problem_create(const dpd_linreg_problem_config *cfg, dpd_linreg_problem **out,
                              dpd_err *err) {
  dpd_linreg_problem *p;
  int status;
  size_t d = cfg->d;
  double sumsq = 0.0;
  *out = NULL;
  if ((status = validate(cfg, err)) < 0) {
    return status;
  }
  p = calloc(1, sizeof *p);
  if (p == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating a problem");
  }
  p->d = d;
  p->lambda = malloc(d * sizeof *p->lambda);
  p->sqrt_lambda = malloc(d * sizeof *p->sqrt_lambda);
  p->theta_star = malloc(d * sizeof *p->theta_star);
  if (p->lambda == NULL || p->sqrt_lambda == NULL || p->theta_star == NULL) {
    dpd_linreg_problem_free(p);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for d = %zu", d);
  }
  if ((status = fill_spectrum(cfg, p, err)) < 0) {
    dpd_linreg_problem_free(p);
    return status;
  }
  fill_theta(cfg, p);
  if ((status = fill_groups(p, err)) < 0) {
    dpd_linreg_problem_free(p);
    return status;
  }
  p->isotropic = 1;
  for (size_t i = 0; i < d; i++) {
    p->sqrt_lambda[i] = sqrt(p->lambda[i]);
    sumsq += p->lambda[i] * p->lambda[i];
    if (p->lambda[i] != 1.0) {
      p->isotropic = 0;
    }
  }
  p->lambda_max = p->lambda[0];
  p->lambda_min = p->lambda[d - 1];
  p->mean_lambda_sq = sumsq / (double)d;
  *out = p;
  return DPD_OK;
}

double dpd_linreg_excess_risk(const dpd_linreg_problem *p, const double *e) {
  double r = 0.0;
  for (size_t i = 0; i < p->d; i++) {
    r += p->lambda[i] * e[i] * e[i];
  }
  return 0.5 * r;
}

double dpd_linreg_initial_risk(const dpd_linreg_problem *p) {
  if (p->spectral) {
    double r = 0.0;
    for (size_t j = 0; j < p->ngroups; j++) {
      r += p->group_lambda[j] * p->group_S0[j];
    }
    return r / (double)p->d;
  }
  return dpd_linreg_excess_risk(p, p->theta_star);
}
