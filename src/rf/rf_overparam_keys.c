/* model=rf, interpolate and sensitivity: their keys, validated at setup before any work
 * (rf_overparam_impl.h, docs/overparameterization.md).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/rf_overparam.h"
#include "rf/rf_overparam_impl.h"

/* A list "a,b,..." of 1..DPD__RF_OVP_SIZES_MAX finite numbers > 0 (integers when `integer`). */
static int list_get(const dpd_keys *keys, const char *key, int integer, double *v, size_t *count,
                    dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, key), *s = text;
  *count = 0;
  while (s != NULL && *s != '\0') {
    char *end = NULL;
    const double x = strtod(s, &end);
    if (end == s || !(x > 0.0) || !isfinite(x) || (integer && x != floor(x)) ||
        (*end != ',' && *end != '\0') || *count == DPD__RF_OVP_SIZES_MAX) {
      break;
    }
    v[(*count)++] = x;
    s = *end == ',' ? end + 1 : end;
    if (*end == '\0') {
      return DPD_OK;
    }
  }
  return DPD_FAIL(
      err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: 1 to %d %s > 0 separated by commas)",
      key, text != NULL ? text : "", DPD__RF_OVP_SIZES_MAX, integer ? "integers" : "numbers");
}

/* The commands' own defaults, the budget's value, seeds, seed, threads, DP-GD's given keys. */
static int common_keys(dpd_keys *keys, dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                       const dpd__rf_privacy_plan *plan, dpd__rf_ovp *o, dpd_err *err) {
  static const char *const budget[] = {"epsilon", "sigma", "mu", "zcdp"};
  size_t threads = 0, choice = 0;
  int status;
  if ((status = dpd_keys_default_set(keys, "n", "200", err)) < 0 ||
      (status = dpd_keys_default_set(keys, "n_test", "200", err)) < 0 ||
      (status = dpd_keys_default_set(keys, "seeds", "4", err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n", &pc->n, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n_test", &pc->n_test, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "seeds", &o->seeds, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &o->seed, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "threads", &threads, err)) < 0) {
    return status;
  }
  o->threads = (int)threads;
  o->clip = sc->clip;
  o->budget = plan->budget;
  o->moments = plan->moments;
  if (plan->budget != DPD__RF_BUDGET_NONE &&
      (status = dpd_keys_real_get(keys, budget[plan->budget], &o->budget_value, err)) < 0) {
    return status;
  }
  if (!o->sens) {
    return DPD_OK;
  }
  o->eta = dpd_keys_given(keys, "eta") ? sc->eta : 0.0;
  o->steps = dpd_keys_given(keys, "steps") ? sc->T : 0;
  if ((dpd_keys_given(keys, "delta") &&
       (status = dpd_keys_real_get(keys, "delta", &o->delta, err)) < 0) ||
      (status = dpd_keys_choice_get(keys, "dpgd", &choice, err)) < 0) {
    return status;
  }
  o->dpgd = choice == 0;
  if ((status = dpd_keys_choice_get(keys, "predict", &choice, err)) < 0) {
    return status;
  }
  o->theorem = choice == 1;
  return dpd_keys_real_get(keys, "d_exponent", &o->d_exponent, err);
}

/* interpolate: p_over_n (a list), or p alone, or the default list. */
static int interp_sizes(const dpd_keys *keys, const dpd_rf_config *pc, dpd__rf_ovp *o,
                        const char **driver, dpd_err *err) {
  double v[DPD__RF_OVP_SIZES_MAX];
  int status = DPD_OK;
  *driver = "p_over_n";
  if (dpd_keys_given(keys, "p_over_n")) {
    status = list_get(keys, "p_over_n", 0, v, &o->count, err);
  } else if (dpd_keys_given(keys, "p")) {
    o->count = 1;
    v[0] = NAN;
    *driver = "p";
  } else {
    static const double def[] = {0.5, 1, 2, 4, 8};
    o->count = 5;
    memcpy(v, def, sizeof def);
  }
  for (size_t k = 0; status == DPD_OK && k < o->count; k++) {
    o->ratio[k] = v[k];
    o->n[k] = pc->n;
    o->d[k] = pc->d;
    o->p[k] = isnan(v[k]) ? pc->p : (size_t)fmax(1.0, round(v[k] * (double)pc->n));
  }
  return status;
}

/* sensitivity: n_list (at p_over_n or a fixed p) or p_list (at fixed n), d along n_list. */
static int sens_sizes(const dpd_keys *keys, const dpd_rf_config *pc, dpd__rf_ovp *o,
                      const char **driver, dpd_err *err) {
  double v[DPD__RF_OVP_SIZES_MAX], ratio = 4.0;
  size_t one = 0;
  int status = DPD_OK;
  if (dpd_keys_given(keys, "n_list") && dpd_keys_given(keys, "p_list")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'p_list': given together with n_list (allowed: one of "
                    "n_list (sizes in n) or p_list (sizes in p at fixed n))");
  }
  /* the list is read into v (room for every value a list may hold), then must hold one */
  if (dpd_keys_given(keys, "p_over_n") &&
      ((status = list_get(keys, "p_over_n", 0, v, &one, err)) < 0 || one != 1)) {
    return status < 0 ? status
                      : DPD_FAIL(err, DPD_EINVAL,
                                 "invalid value for 'p_over_n': '%s' (allowed for sensitivity: "
                                 "one number > 0; use p_list for several p)",
                                 dpd_keys_text_get(keys, "p_over_n"));
  }
  if (one == 1) {
    ratio = v[0];
  }
  const int fixed_p = dpd_keys_given(keys, "p") && !dpd_keys_given(keys, "p_over_n");
  o->vary_p = dpd_keys_given(keys, "p_list");
  *driver = o->vary_p ? "p_list" : dpd_keys_given(keys, "n_list") ? "n_list" : "n";
  if (o->vary_p || dpd_keys_given(keys, "n_list")) {
    status = list_get(keys, o->vary_p ? "p_list" : "n_list", 1, v, &o->count, err);
  } else {
    o->count = 1;
    v[0] = (double)pc->n;
  }
  for (size_t k = 0; status == DPD_OK && k < o->count; k++) {
    o->n[k] = o->vary_p ? pc->n : (size_t)v[k];
    o->d[k] = o->vary_p ? pc->d
                        : (size_t)fmax(1.0, round((double)pc->d * pow(v[k] / v[0], o->d_exponent)));
    o->p[k] = o->vary_p ? (size_t)v[k] : fixed_p ? pc->p : (size_t)fmax(1.0, round(ratio * v[k]));
    o->ratio[k] = (double)o->p[k] / (double)o->n[k];
  }
  return status;
}

/* The activations with mu_1 != 0, as a list for a message. */
static void mu1_names(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int a = 0; a < DPD_RF_ACT_COUNT; a++) {
    if (dpd_rf_activation_hermite((dpd_rf_activation)a, 1) != 0.0 && len + 2 < cap) {
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
                              dpd_rf_activation_name((dpd_rf_activation)a));
    }
  }
}

/* Bytes of one size: the problem, theta* (dgelsd's copies), and the command's own work. */
static double size_bytes(const dpd__rf_ovp *o, const dpd_rf_config *pc, size_t k) {
  const double n = (double)o->n[k], p = (double)o->p[k], d = (double)o->d[k];
  const double nt = (double)pc->n_test;
  const double problem = 8.0 * (p * d + (n + nt) * p + 3.0 * p + (n > nt ? n : nt) * d + 4 * n);
  const double star = 8.0 * (2.0 * n * p + p);
  const double own = o->sens ? 8.0 * (DPD_RF_GRAD_BLOCK * p + 2.0 * nt * d + 5.0 * p + 2.0 * n)
                             : 8.0 * (n * p + 6.0 * n * n + n * d);
  return problem + star + own;
}

int dpd__rf_ovp_keys(dpd_keys *keys, int sens, dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                     const dpd__rf_privacy_plan *plan, dpd__rf_ovp *o, double *memory,
                     const char **driver, dpd_err *err) {
  int status;
  memset(o, 0, sizeof *o);
  o->sens = sens;
  if ((status = common_keys(keys, pc, sc, plan, o, err)) < 0 ||
      (status = (sens ? sens_sizes : interp_sizes)(keys, pc, o, driver, err)) < 0) {
    return status;
  }
  const double mu1 = dpd_rf_activation_hermite(pc->activation, 1);
  if (sens && o->theorem && mu1 == 0.0) {
    char names[160];
    mu1_names(names, sizeof names);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'activation': %s with predict = theorem (its Hermite "
                    "coefficient mu_1 = E phi'(G) is 0; allowed: an activation with mu_1 != 0, "
                    "the hypothesis of S_RF = Omega(n^(1/6)): %s; or predict = auto)",
                    dpd_rf_activation_name(pc->activation), names);
  }
  double worst = 0.0;
  for (size_t k = 0; k < o->count; k++) {
    dpd_rf_config c = *pc;
    c.n = o->n[k];
    c.p = o->p[k];
    c.d = o->d[k];
    if (c.n < 2) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %zu (allowed: n >= 2: the Gram's spectrum and the "
                      "sensitivity's fit need two training points)",
                      sens && !o->vary_p && o->count > 1 ? "n_list" : "n", c.n);
    }
    if ((status = dpd__rf_config_check(&c, err)) < 0) {
      return status;
    }
    const double b = size_bytes(o, pc, k);
    worst = b > worst ? b : worst;
  }
  *memory = worst;
  size_t pmax = 0;
  for (size_t k = 0; k < o->count; k++) {
    pmax = o->p[k] > pmax ? o->p[k] : pmax;
  }
  /* the values in effect at the last size (the records, the figure's title): p (interpolate:
   * the largest), and for sensitivity n, d and DP-GD's eta, steps and delta */
  const size_t l = o->count - 1;
  if ((!dpd_keys_given(keys, "p") &&
       (status = dpd_keys_effective_real_set(keys, "p", sens ? (double)o->p[l] : (double)pmax,
                                             err)) < 0) ||
      !sens) {
    return status;
  }
  if ((dpd_keys_given(keys, "n_list") &&
       (status = dpd_keys_effective_real_set(keys, "n", (double)o->n[l], err)) < 0) ||
      (o->d[l] != pc->d &&
       (status = dpd_keys_effective_real_set(keys, "d", (double)o->d[l], err)) < 0) ||
      (o->eta == 0.0 &&
       (status = dpd_keys_effective_real_set(keys, "eta", 1.0 / (double)o->p[l], err)) < 0) ||
      (o->steps == 0 &&
       (status = dpd_keys_effective_real_set(keys, "steps", 5.0 * (double)o->d[l], err)) < 0)) {
    return status;
  }
  return o->delta > 0.0 ? DPD_OK
                        : dpd_keys_effective_real_set(keys, "delta", 1.0 / (double)o->n[l], err);
}
