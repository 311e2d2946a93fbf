/* Learning-rate schedules and calibrated noise (docs/math.md §1.4 and §1.8).
 * SPDX-License-Identifier: MIT
 *
 * The per-step noise is calibrated so that the one-pass algorithm is
 * rho^2/2-zCDP by privacy amplification by iteration (Feldman et al. 2018):
 *   rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2,  eta_n := 0,
 * computed as (eta_k - eta_{k+1})(eta_k + eta_{k+1}) to keep relative accuracy
 * when consecutive steps are close. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/schedule.h"

struct dpd_schedule {
  dpd_schedule_config cfg; /* table pointers replaced by the owned copies below */
  double *t;
  double *eta;
  size_t len;
  double offset; /* optimal: gamma max(c2, c3/rho) */
};

dpd_schedule_config dpd_schedule_config_default(void) {
  dpd_schedule_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.kind = DPD_SCHEDULE_CONST;
  cfg.eta0 = 1.0;
  cfg.a = 1.0;
  cfg.c1 = 1.0;
  cfg.c2 = 1.0;
  cfg.c3 = 0.0;
  cfg.factor = 0.5;
  cfg.drops = 1;
  cfg.eta_min = 0.0;
  cfg.gamma = 1.0;
  cfg.rho = INFINITY;
  return cfg;
}

void dpd_schedule_free(dpd_schedule *s) {
  if (s != NULL) {
    free(s->t);
    free(s->eta);
    free(s);
  }
}

static int check_positive(const char *name, double v, dpd_err *err) {
  if (!(v > 0.0) || !isfinite(v)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %g (allowed: finite, > 0)", name, v);
  }
  return DPD_OK;
}

static int validate(const dpd_schedule_config *cfg, dpd_err *err) {
  int status = DPD_OK;
  switch (cfg->kind) {
  case DPD_SCHEDULE_CONST:
  case DPD_SCHEDULE_SQRT:
    return check_positive("eta0", cfg->eta0, err);
  case DPD_SCHEDULE_HYPERBOLIC:
    if ((status = check_positive("eta0", cfg->eta0, err)) < 0) {
      return status;
    }
    if (!(cfg->a > -1.0) || !isfinite(cfg->a)) {
      return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'a': %g (allowed: finite, > -1)", cfg->a);
    }
    return DPD_OK;
  case DPD_SCHEDULE_OPTIMAL:
    if ((status = check_positive("c1", cfg->c1, err)) < 0 ||
        (status = check_positive("c2", cfg->c2, err)) < 0 ||
        (status = check_positive("gamma", cfg->gamma, err)) < 0) {
      return status;
    }
    if (!(cfg->c3 >= 0.0) || !isfinite(cfg->c3)) {
      return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c3': %g (allowed: finite, >= 0)",
                      cfg->c3);
    }
    if (!(cfg->rho > 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'rho': %g (allowed: > 0 or inf)",
                      cfg->rho);
    }
    return DPD_OK;
  case DPD_SCHEDULE_STEP:
    if ((status = check_positive("eta0", cfg->eta0, err)) < 0 ||
        (status = check_positive("factor", cfg->factor, err)) < 0) {
      return status;
    }
    if (cfg->drops < 1 || cfg->drops > 1000000) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'drops': %zu (allowed: 1 <= drops <= 1e6)", cfg->drops);
    }
    return DPD_OK;
  case DPD_SCHEDULE_COSINE:
    if ((status = check_positive("eta0", cfg->eta0, err)) < 0) {
      return status;
    }
    if (!(cfg->eta_min >= 0.0) || !isfinite(cfg->eta_min)) {
      return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'eta_min': %g (allowed: finite, >= 0)",
                      cfg->eta_min);
    }
    return DPD_OK;
  case DPD_SCHEDULE_TABLE:
    if (cfg->table_len < 2 || cfg->table_t == NULL || cfg->table_eta == NULL) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'schedule': table with %zu rows (allowed: >= 2 rows)",
                      cfg->table_len);
    }
    for (size_t k = 0; k < cfg->table_len; k++) {
      double tk = cfg->table_t[k], ek = cfg->table_eta[k];
      if (!isfinite(tk) || !isfinite(ek)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'schedule': row %zu has a non-finite entry", k + 1);
      }
      if (ek < 0.0) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'schedule': eta = %g at row %zu (allowed: >= 0)", ek,
                        k + 1);
      }
      if (k > 0 && !(tk > cfg->table_t[k - 1])) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'schedule': t = %g at row %zu is not above the "
                        "previous t = %g (allowed: strictly increasing t)",
                        tk, k + 1, cfg->table_t[k - 1]);
      }
    }
    if (cfg->table_t[0] > 0.0 || cfg->table_t[cfg->table_len - 1] < 1.0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'schedule': table covers [%g, %g] (allowed: a range "
                      "containing [0, 1])",
                      cfg->table_t[0], cfg->table_t[cfg->table_len - 1]);
    }
    return DPD_OK;
  }
  return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'schedule': unknown kind %d", (int)cfg->kind);
}

int dpd_schedule_create(const dpd_schedule_config *cfg, dpd_schedule **out, dpd_err *err) {
  dpd_schedule *s;
  int status;
  *out = NULL;
  if ((status = validate(cfg, err)) < 0) {
    return status;
  }
  s = calloc(1, sizeof *s);
  if (s == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating a schedule");
  }
  s->cfg = *cfg;
  s->cfg.table_t = NULL;
  s->cfg.table_eta = NULL;
  if (cfg->kind == DPD_SCHEDULE_TABLE) {
    s->len = cfg->table_len;
    s->t = malloc(s->len * sizeof *s->t);
    s->eta = malloc(s->len * sizeof *s->eta);
    if (s->t == NULL || s->eta == NULL) {
      dpd_schedule_free(s);
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory copying a schedule table");
    }
    memcpy(s->t, cfg->table_t, s->len * sizeof *s->t);
    memcpy(s->eta, cfg->table_eta, s->len * sizeof *s->eta);
  }
  if (cfg->kind == DPD_SCHEDULE_OPTIMAL) {
    double c3_over_rho = isinf(cfg->rho) ? 0.0 : cfg->c3 / cfg->rho;
    s->offset = cfg->gamma * fmax(cfg->c2, c3_over_rho);
  }
  *out = s;
  return DPD_OK;
}

const char *dpd_schedule_name(const dpd_schedule *s) {
  static const char *const names[] = {"const", "sqrt", "hyperbolic", "optimal",
                                      "file",  "step", "cosine"};
  return names[s->cfg.kind];
}

/* Segment k of the table with t in [t_k, t_{k+1}] (binary search). */
static size_t table_segment(const dpd_schedule *s, double t) {
  size_t lo = 0, hi = s->len - 1;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->t[mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

static const double pi = 3.14159265358979323846264338327950288;

/* Number of drops at or before t: drop j sits at t_j = j/(drops+1). */
static size_t step_index(const dpd_schedule_config *c, double t) {
  double u = t * (double)(c->drops + 1);
  size_t j;
  if (!(u > 0.0)) {
    return 0;
  }
  j = u >= (double)c->drops ? c->drops : (size_t)u;
  /* (size_t)u can be one short when j/(drops+1) rounds above t*(drops+1); check exactly. */
  while (j < c->drops && (double)(j + 1) / (double)(c->drops + 1) <= t) {
    j++;
  }
  while (j > 0 && (double)j / (double)(c->drops + 1) > t) {
    j--;
  }
  return j;
}

double dpd_schedule_eval(const dpd_schedule *s, double t) {
  const dpd_schedule_config *c = &s->cfg;
  switch (c->kind) {
  case DPD_SCHEDULE_CONST:
    return c->eta0;
  case DPD_SCHEDULE_SQRT:
    return c->eta0 * sqrt(fmax(0.0, 1.0 - t));
  case DPD_SCHEDULE_HYPERBOLIC:
    return c->eta0 / (1.0 + c->a * t);
  case DPD_SCHEDULE_OPTIMAL:
    return c->c1 / (t + s->offset);
  case DPD_SCHEDULE_TABLE: {
    size_t k = table_segment(s, t);
    double w = (t - s->t[k]) / (s->t[k + 1] - s->t[k]);
    return s->eta[k] + w * (s->eta[k + 1] - s->eta[k]);
  }
  case DPD_SCHEDULE_STEP:
    return c->eta0 * pow(c->factor, (double)step_index(c, t));
  case DPD_SCHEDULE_COSINE:
    return c->eta_min + (c->eta0 - c->eta_min) * 0.5 * (1.0 + cos(pi * t));
  }
  return NAN;
}

double dpd_schedule_dsq_eval(const dpd_schedule *s, double t) {
  const dpd_schedule_config *c = &s->cfg;
  switch (c->kind) {
  case DPD_SCHEDULE_CONST:
    return 0.0;
  case DPD_SCHEDULE_SQRT:
    return -c->eta0 * c->eta0;
  case DPD_SCHEDULE_HYPERBOLIC: {
    double u = 1.0 + c->a * t;
    return -2.0 * c->eta0 * c->eta0 * c->a / (u * u * u);
  }
  case DPD_SCHEDULE_OPTIMAL: {
    double u = t + s->offset;
    return -2.0 * c->c1 * c->c1 / (u * u * u);
  }
  case DPD_SCHEDULE_TABLE: {
    size_t k = table_segment(s, t);
    double slope = (s->eta[k + 1] - s->eta[k]) / (s->t[k + 1] - s->t[k]);
    return 2.0 * dpd_schedule_eval(s, t) * slope;
  }
  case DPD_SCHEDULE_STEP:
    return 0.0; /* between drops; the drops themselves are dpd_schedule_jumps */
  case DPD_SCHEDULE_COSINE:
    return -2.0 * dpd_schedule_eval(s, t) * (c->eta0 - c->eta_min) * 0.5 * pi * sin(pi * t);
  }
  return NAN;
}

size_t dpd_schedule_jumps(const dpd_schedule *s, double *t, double *dsq, size_t cap) {
  const dpd_schedule_config *c = &s->cfg;
  if (c->kind != DPD_SCHEDULE_STEP) {
    return 0;
  }
  for (size_t j = 1; j <= c->drops && j <= cap; j++) {
    double before = c->eta0 * pow(c->factor, (double)(j - 1));
    double after = before * c->factor;
    t[j - 1] = (double)j / (double)(c->drops + 1);
    dsq[j - 1] = (before - after) * (before + after);
  }
  return c->drops;
}

double dpd_schedule_sup(const dpd_schedule *s) {
  const dpd_schedule_config *c = &s->cfg;
  switch (c->kind) {
  case DPD_SCHEDULE_CONST:
  case DPD_SCHEDULE_SQRT:
    return c->eta0;
  case DPD_SCHEDULE_HYPERBOLIC:
    return c->a >= 0.0 ? c->eta0 : c->eta0 / (1.0 + c->a);
  case DPD_SCHEDULE_OPTIMAL:
    return c->c1 / s->offset;
  case DPD_SCHEDULE_STEP:
    return c->factor <= 1.0 ? c->eta0 : c->eta0 * pow(c->factor, (double)c->drops);
  case DPD_SCHEDULE_COSINE:
    return fmax(c->eta0, c->eta_min);
  case DPD_SCHEDULE_TABLE: {
    /* The interpolant is piecewise linear: its maximum on [0, 1] is at a node
     * inside [0, 1] or at an end point. */
    double m = fmax(dpd_schedule_eval(s, 0.0), dpd_schedule_eval(s, 1.0));
    for (size_t k = 0; k < s->len; k++) {
      if (s->t[k] > 0.0 && s->t[k] < 1.0) {
        m = fmax(m, s->eta[k]);
      }
    }
    return m;
  }
  }
  return NAN;
}

int dpd_schedule_is_nonincreasing(const dpd_schedule *s) {
  switch (s->cfg.kind) {
  case DPD_SCHEDULE_HYPERBOLIC:
    return s->cfg.a >= 0.0;
  case DPD_SCHEDULE_STEP:
    return s->cfg.factor <= 1.0;
  case DPD_SCHEDULE_COSINE:
    return s->cfg.eta_min <= s->cfg.eta0;
  case DPD_SCHEDULE_TABLE: {
    double prev = dpd_schedule_eval(s, 0.0);
    for (size_t k = 0; k < s->len; k++) {
      if (s->t[k] > 0.0 && s->t[k] < 1.0) {
        if (s->eta[k] > prev) {
          return 0;
        }
        prev = s->eta[k];
      }
    }
    return dpd_schedule_eval(s, 1.0) <= prev;
  }
  default:
    return 1;
  }
}

void dpd_schedule_steps(const dpd_schedule *s, size_t n, double rho, double *eta, double *sigma) {
  for (size_t k = 0; k < n; k++) {
    eta[k] = dpd_schedule_eval(s, (double)k / (double)n) / (double)n;
  }
  for (size_t k = 0; k < n; k++) {
    double next = k + 1 < n ? eta[k + 1] : 0.0;
    double diff2 = (eta[k] - next) * (eta[k] + next);
    sigma[k] = isinf(rho) ? 0.0 : sqrt(fmax(0.0, diff2)) / rho;
  }
}
