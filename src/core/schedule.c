/* Learning-rate schedules and calibrated noise (docs/math.md §1.4 and §1.8).
 * SPDX-License-Identifier: MIT
 *
 * The per-step noise is calibrated so that the one-pass algorithm is
 * rho^2/2-zCDP by privacy amplification by iteration (Feldman et al. 2018):
 *   rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2,  eta_n := 0,
 * computed as (eta_k - eta_{k+1})(eta_k + eta_{k+1}) to keep relative accuracy
 * when consecutive steps are close.
 *
 * The object is generic: its family (families.c, or a registered one) validates the config and
 * evaluates the formulas; this file copies the config (and a file table) and dispatches. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/schedule.h"

struct dpd_schedule {
  dpd_schedule_config cfg; /* table pointers replaced by the owned copies below */
  const dpd_schedule_family *family; /* of cfg.kind (static) */
  double *t;
  double *eta;
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

int dpd_schedule_create(const dpd_schedule_config *cfg, dpd_schedule **out, dpd_err *err) {
  const dpd_schedule_family *family = dpd_schedule_family_get(cfg->kind);
  dpd_schedule *s;
  int status;
  *out = NULL;
  if (family == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'schedule': unknown kind %d",
                    (int)cfg->kind);
  }
  if ((status = family->validate(cfg, err)) < 0) {
    return status;
  }
  s = calloc(1, sizeof *s);
  if (s == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating a schedule");
  }
  s->cfg = *cfg;
  s->family = family;
  s->cfg.table_t = NULL;
  s->cfg.table_eta = NULL;
  if (family->takes_path) {
    const size_t len = cfg->table_len;
    s->t = malloc(len * sizeof *s->t);
    s->eta = malloc(len * sizeof *s->eta);
    if (s->t == NULL || s->eta == NULL) {
      dpd_schedule_free(s);
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory copying a schedule table");
    }
    memcpy(s->t, cfg->table_t, len * sizeof *s->t);
    memcpy(s->eta, cfg->table_eta, len * sizeof *s->eta);
    s->cfg.table_t = s->t;
    s->cfg.table_eta = s->eta;
  }
  *out = s;
  return DPD_OK;
}

const char *dpd_schedule_name(const dpd_schedule *s) { return s->family->name; }

double dpd_schedule_eval(const dpd_schedule *s, double t) { return s->family->eval(&s->cfg, t); }

double dpd_schedule_dsq_eval(const dpd_schedule *s, double t) {
  return s->family->dsq_eval(&s->cfg, t);
}

size_t dpd_schedule_jumps(const dpd_schedule *s, double *t, double *dsq, size_t cap) {
  return s->family->jumps != NULL ? s->family->jumps(&s->cfg, t, dsq, cap) : 0;
}

double dpd_schedule_sup(const dpd_schedule *s) { return s->family->sup(&s->cfg); }

int dpd_schedule_is_nonincreasing(const dpd_schedule *s) {
  return s->family->is_nonincreasing(&s->cfg);
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
