/* The keys of a linreg problem and its schedule (problem_spec_impl.h): the values of
 * spectrum, d, theta_star, theta_norm, n, gamma and the schedule family's keys, validated in the
 * order of the messages.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/table_impl.h"
#include "dpdyn/privacy.h"
#include "linreg/problem_spec_impl.h"

/* The problem: spectrum, d (given, or implied by a levels:/file: spectrum), theta*. */
int dpd__linreg_problem_keys(dpd_keys *keys, uint64_t seed, size_t max_memory, size_t data_d,
                             dpd__linreg_inputs *in, dpd_linreg_problem_config *pc,
                             int *d_from_spectrum, dpd_err *err) {
  size_t spectrum_d = data_d, d;
  double norm;
  int status;
  *pc = dpd_linreg_problem_config_default();
  if (data_d == 0 &&
      (status = dpd__linreg_spectrum_parse(dpd_keys_text_get(keys, "spectrum"), max_memory, in, pc,
                                           &spectrum_d, err)) < 0) {
    return status;
  }
  *d_from_spectrum = !dpd_keys_given(keys, "d") && spectrum_d != 0 && data_d == 0;
  d = spectrum_d;
  if (data_d == 0 && !*d_from_spectrum &&
      (status = dpd_keys_size_range_get(keys, "d", 1, LINREG_MAX_DIM, &d, err)) < 0) {
    return status;
  }
  if (spectrum_d != 0 && spectrum_d != d) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': multiplicities sum to %zu but d = %zu "
                    "(allowed: sum equal to d)",
                    spectrum_d, d);
  }
  pc->d = d;
  pc->seed = seed;
  if ((status = dpd_keys_real_range_get(keys, "theta_norm", 0.0, 0, INFINITY, 0, 0, &pc->theta_norm,
                                        err)) < 0 ||
      (status = dpd__linreg_theta_parse(dpd_keys_text_get(keys, "theta_star"), d, max_memory,
                                        !dpd_keys_given(keys, "theta_norm"), in, pc, &norm, err)) <
          0) {
    return status;
  }
  if (!isnan(norm) && dpd_keys_effective_real_set(keys, "theta_norm", norm, NULL) < 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

/* n, or gamma = d/n. */
int dpd__linreg_size_keys(const dpd_keys *keys, size_t d, size_t *n, dpd_err *err) {
  double g, nn;
  int status;
  if (dpd_keys_given(keys, "n")) {
    if ((status = dpd_keys_size_range_get(keys, "n", 1, (size_t)1 << 40, n, err)) < 0 ||
        !dpd_keys_given(keys, "gamma") ||
        (status = dpd_keys_real_range_get(keys, "gamma", 0.0, 0, INFINITY, 0, 0, &g, err)) < 0) {
      return status;
    }
    if (fabs(g * (double)*n - (double)d) > 0.5) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'gamma': %g is inconsistent with d/n = %zu/%zu "
                      "(allowed: give n or gamma, or both with gamma = d/n)",
                      g, d, *n);
    }
    return DPD_OK;
  }
  if (!dpd_keys_given(keys, "gamma")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'n' (allowed: integer n >= 1, or give gamma = d/n > 0)");
  }
  if ((status = dpd_keys_real_range_get(keys, "gamma", 0.0, 0, INFINITY, 0, 0, &g, err)) < 0) {
    return status;
  }
  nn = round((double)d / g);
  if (!(nn >= 1.0) || nn > 1e12) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'gamma': %g gives n = d/gamma = %g (allowed: 1 <= n <= "
                    "1e12)",
                    g, nn);
  }
  *n = (size_t)nn;
  return DPD_OK;
}

/* The key that makes the schedule grow above eta0 (family knowledge: the one place the adapter
 * names families; a behaviour table of families can carry it). */
static const char *growth_key(const dpd_schedule_config *sc) {
  return sc->kind == DPD_SCHEDULE_STEP && sc->factor > 1.0           ? "factor"
         : sc->kind == DPD_SCHEDULE_COSINE && sc->eta_min > sc->eta0 ? "eta_min"
         : sc->kind == DPD_SCHEDULE_HYPERBOLIC && sc->a < 0.0        ? "a"
                                                                     : NULL;
}

/* The schedule: its family's parameters (each validated by the range of its key), a file's
 * table, the stability limit and, with finite rho, no increase. */
int dpd__linreg_schedule_keys(const dpd_keys *keys, double gamma, double rho, size_t max_memory,
                              double **cols, dpd_schedule_config *config, dpd_schedule **schedule,
                              dpd_err *err) {
  dpd_schedule_config sc = dpd_schedule_config_default();
  const char *name = dpd_keys_text_get(keys, "schedule"), *limit_key = "eta0";
  const dpd_schedule_family *family = dpd_schedule_family_lookup(name);
  int status = DPD_OK;
  size_t rows, ncols;
  if (family == NULL) {
    char allowed[256];
    dpd_schedule_family_list(allowed, sizeof allowed);
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'schedule': '%s' (allowed: %s)", name,
                    allowed);
  }
  sc.kind = family->kind;
  for (const dpd_schedule_param *q = family->params; q->key != NULL && status == DPD_OK; q++) {
    void *field = (char *)&sc + q->offset;
    status = q->integer ? dpd_keys_size_get(keys, q->key, (size_t *)field, err)
                        : dpd_keys_real_get(keys, q->key, (double *)field, err);
  }
  if (sc.kind == DPD_SCHEDULE_OPTIMAL) { /* the family that reads gamma and rho */
    limit_key = "c1";
    sc.gamma = gamma;
    sc.rho = rho;
  } else if (status == DPD_OK && family->takes_path) {
    limit_key = "schedule";
    status = dpd__read_table("schedule", name + strlen(family->name) + 1, 2, 2, max_memory, cols,
                             &rows, &ncols, err);
    sc.table_t = cols[0];
    sc.table_eta = cols[1];
    sc.table_len = rows;
  }
  *config = sc;
  if (status < 0 || (status = dpd_schedule_create(&sc, schedule, err)) < 0) {
    return status;
  }
  /* Name the key that pushes sup eta~ over the limit: eta0 when it alone is too large, else
   * the key that makes the schedule grow above eta0. */
  if (sc.eta0 < 2.0 / gamma && growth_key(&sc) != NULL) {
    limit_key = growth_key(&sc);
  }
  if (!(dpd_schedule_sup(*schedule) < 2.0 / gamma)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %s gives sup eta~ = %g (allowed: sup eta~ < 2/gamma "
                    "= %g, the stability limit)",
                    limit_key, dpd_keys_text_get(keys, limit_key), dpd_schedule_sup(*schedule),
                    2.0 / gamma);
  }
  if (isfinite(rho) && !dpd_schedule_is_nonincreasing(*schedule)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': '%s' increases on [0, 1] (allowed: a "
                    "non-increasing schedule when rho is finite)",
                    name);
  }
  return DPD_OK;
}

/* rho from rho, zcdp or (epsilon, delta). */
int dpd__linreg_privacy_keys(const dpd_keys *keys, dpd__linreg_privacy *r, dpd_err *err) {
  int status;
  double zcdp;
  if (dpd_keys_given(keys, "delta")) {
    if ((status = dpd_keys_real_range_get(keys, "delta", 0.0, 0, 1.0, 0, 0, &r->delta, err)) < 0) {
      return status;
    }
    r->have_delta = 1;
  }
  if (dpd_keys_given(keys, "epsilon")) {
    if ((status = dpd_keys_real_range_get(keys, "epsilon", 0.0, 0, INFINITY, 0, 0, &r->epsilon,
                                          err)) < 0) {
      return status;
    }
    if (!r->have_delta) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "missing value for 'delta' (allowed: 0 < delta < 1; required with epsilon)");
    }
    if (dpd_keys_given(keys, "rho") || dpd_keys_given(keys, "zcdp")) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'epsilon': give either %s or (epsilon, delta), not both",
                      dpd_keys_given(keys, "rho") ? "rho" : "zcdp");
    }
    r->have_epsilon = 1;
    return dpd_privacy_rho_from_eps(r->epsilon, r->delta, &r->rho, err);
  }
  if (!dpd_keys_given(keys, "zcdp")) {
    return dpd_keys_real_range_get(keys, "rho", 0.0, 0, INFINITY, 0, 1, &r->rho, err);
  }
  if (dpd_keys_given(keys, "rho")) { /* the whole run is zcdp-zCDP: rho^2/2 = zcdp */
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'zcdp': give one of rho, zcdp or (epsilon, delta), not "
                    "two (rho is the alias sqrt(2 zcdp))");
  }
  if ((status = dpd_keys_real_get(keys, "zcdp", &zcdp, err)) == DPD_OK) {
    r->rho = sqrt(2.0 * zcdp);
  }
  return status;
}

/* account --sequence FILE: only the keys of this mode apply (a --d or --rho here would be
 * silently ignored otherwise). */
int dpd__linreg_sequence_keys(dpd_keys *keys, dpd__linreg_privacy *priv, dpd_err *err) {
  static const char *const allowed[] = {"model", "sequence", "delta", "out", "max_memory", NULL};
  for (size_t i = 0; i < dpd_keys_count(keys); i++) {
    const char *name = dpd_keys_desc_get(keys, i)->name;
    int in = 0;
    for (size_t k = 0; allowed[k] != NULL; k++) {
      in |= strcmp(allowed[k], name) == 0;
    }
    if (!in && dpd_keys_given_at(keys, i)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "key '%s' does not apply to account --sequence (allowed keys: model, "
                      "sequence, delta, out, max_memory)",
                      name);
    }
    if (!in) {
      dpd_keys_unset(keys, name);
    }
  }
  priv->have_delta = dpd_keys_given(keys, "delta");
  return priv->have_delta
             ? dpd_keys_real_range_get(keys, "delta", 0.0, 0, 1.0, 0, 0, &priv->delta, err)
             : DPD_OK;
}
