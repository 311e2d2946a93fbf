/* The keys of dpdyn tune (tune_surface_impl.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "linreg/tune_surface_impl.h"

/* Defaults of the tune keys (their table entries carry no default so that other commands'
 * headers stay unchanged). */
static const double tune_c_min_default = 0.01;
static const double tune_c_max_default = 100.0;
static const size_t tune_heatmap_default = 41;
static const size_t tune_confirm_seeds_default = 64;
static const size_t tune_heatmap_max = 1001;

const dpd__tune_name dpd__tune_names[DPD_TUNE_NNAMES] = {
    {"c", DPD_TUNE_C},   {"eta0", DPD_TUNE_ETA0}, {"a", DPD_TUNE_A},
    {"c1", DPD_TUNE_C1}, {"c2", DPD_TUNE_C2},     {"c3", DPD_TUNE_C3}};

/* The parameters tune may optimise for a schedule family (DPD_TUNE_* flags; 0: the tuner does
 * not take the family): the family table's tunables (dpd_tune_family_params_get), registered
 * families included. */
static int tunables_of(const dpd_schedule_family *f) {
  int params = 0;
  dpd_err e;
  if (f == NULL || dpd_tune_params_get(f->kind) == 0 ||
      dpd_tune_family_params_get(f->name, NULL, &params, NULL, NULL, 0, &e) < 0) {
    return 0;
  }
  return params | DPD_TUNE_C;
}

size_t dpd__tune_values(const dpd_schedule_family *f, const dpd_schedule_config *sc,
                        const char **names, double *values) {
  size_t n = 0;
  for (const dpd_schedule_param *q = f->params; q->key != NULL; q++) {
    for (size_t k = 1; k < DPD_TUNE_NNAMES; k++) { /* c aside */
      if (strcmp(q->key, dpd__tune_names[k].name) == 0 && !q->integer) {
        names[n] = q->key;
        values[n++] = *(const double *)((const char *)sc + q->offset);
      }
    }
  }
  return n;
}

/* "c, eta0" (the names of mask), or the families tune takes for mask 0. */
static void tunables_list(int mask, char *buf, size_t cap) {
  const dpd_schedule_family *f;
  size_t len = 0;
  buf[0] = '\0';
  for (size_t k = 0; mask != 0 && k < DPD_TUNE_NNAMES && len < cap; k++) {
    if (mask & dpd__tune_names[k].flag) {
      len +=
          (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", dpd__tune_names[k].name);
    }
  }
  for (size_t i = 0; mask == 0 && (f = dpd_schedule_family_at(i)) != NULL && len < cap; i++) {
    if (tunables_of(f) != 0) {
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", f->name);
    }
  }
}

/* The schedule family and the comma list of `tune` (its parameters, no repeats). */
static int tune_list(const dpd_keys *keys, dpd__tune_options *t, dpd_err *err) {
  const char *schedule = dpd_keys_text_get(keys, "schedule"), *text, *s;
  const dpd_schedule_family *f = dpd_schedule_family_lookup(schedule);
  const int allowed = tunables_of(f);
  char list[128];
  size_t len;
  tunables_list(allowed, list, sizeof list);
  if (allowed == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'schedule': '%s' (allowed with tune: %s)",
                    schedule, list);
  }
  t->family = f;
  t->mask = dpd_tune_params_get(f->kind);
  if (!dpd_keys_given(keys, "tune")) {
    return DPD_OK;
  }
  t->mask = 0;
  for (text = s = dpd_keys_text_get(keys, "tune");; s += len + 1) {
    size_t k = 0;
    len = strcspn(s, ",");
    while (k < DPD_TUNE_NNAMES && !(strlen(dpd__tune_names[k].name) == len &&
                                    strncmp(s, dpd__tune_names[k].name, len) == 0)) {
      k++;
    }
    if (k == DPD_TUNE_NNAMES || (dpd__tune_names[k].flag & allowed) == 0 ||
        (dpd__tune_names[k].flag & t->mask) != 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'tune': '%s' (allowed: a comma list without repeats of "
                      "%s for schedule %s)",
                      text, list, schedule);
    }
    t->mask |= dpd__tune_names[k].flag;
    if (s[len] == '\0') {
      return DPD_OK;
    }
  }
}

/* A key of tune when given, else its default. */
static int size_key(const dpd_keys *keys, const char *name, size_t def, size_t hi, size_t *v,
                    dpd_err *err) {
  *v = def;
  return dpd_keys_given(keys, name) ? dpd_keys_size_range_get(keys, name, 0, hi, v, err) : DPD_OK;
}

static int real_key(const dpd_keys *keys, const char *name, double def, double lo, double hi,
                    double *v, dpd_err *err) {
  *v = def;
  return dpd_keys_given(keys, name) ? dpd_keys_real_range_get(keys, name, lo, 0, hi, 0, 0, v, err)
                                    : DPD_OK;
}

int dpd__tune_keys(dpd_keys *keys, dpd__tune_options *t, dpd_err *err) {
  const char *eta_axis = dpd_keys_text_get(keys, "heatmap_eta");
  const dpd_tune_config def = dpd_tune_config_default();
  int status;
  if ((status = tune_list(keys, t, err)) < 0 ||
      (status = real_key(keys, "c_min", tune_c_min_default, 0.0, INFINITY, &t->c_min, err)) < 0 ||
      (status = real_key(keys, "c_max", tune_c_max_default, t->c_min, INFINITY, &t->c_max, err)) <
          0) {
    return status;
  }
  if (!(t->c_max > t->c_min)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c_min': %g (allowed: c_min < c_max = %g)",
                    t->c_min, t->c_max);
  }
  if ((status = size_key(keys, "heatmap", tune_heatmap_default, tune_heatmap_max, &t->heatmap,
                         err)) < 0) {
    return status;
  }
  if (t->heatmap == 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'heatmap': 1 (allowed: 0 = none, or 2 <= heatmap <= %zu)",
                    tune_heatmap_max);
  }
  if (eta_axis != NULL && strcmp(eta_axis, "log") != 0 && strcmp(eta_axis, "linear") != 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'heatmap_eta': '%s' (allowed: log, linear)",
                    eta_axis);
  }
  t->eta_log = eta_axis == NULL || strcmp(eta_axis, "log") == 0;
  if ((status = size_key(keys, "confirm_seeds", tune_confirm_seeds_default, (size_t)1 << 24,
                         &t->confirm_seeds, err)) < 0 ||
      (status = real_key(keys, "xtol", def.xtol, 0.0, 1.0, &t->xtol, err)) < 0 ||
      (status = size_key(keys, "restarts", def.restarts, 100, &t->restarts, err)) < 0) {
    return status;
  }
  /* A tuned c needs no value; a finite placeholder lets the set-up accept finite rho. */
  if ((t->mask & DPD_TUNE_C) && !dpd_keys_given(keys, "c") &&
      dpd_keys_effective_real_set(keys, "c", sqrt(t->c_min * t->c_max), NULL) < 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}
