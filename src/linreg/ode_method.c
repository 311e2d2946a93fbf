/* The ODE method table and dpd_ode_solve, which dispatches through it (dpdyn/ode.h).
 * SPDX-License-Identifier: MIT
 *
 * Each method is one static const dpd_ode_method_type defined beside its solver (bdf and
 * adams in ode.c, volterra in volterra.c) and listed here once (FFTW's "favor a table"). Adding
 * a method: its solver file with its type, its dpd_ode_method value in dpdyn/ode.h, and one
 * declaration and one table line below. The common validation and the requirement checks of
 * the capability flags live here, so a method's solve function sees a valid configuration.
 * The validation itself is in ode_config.c, which the solvers call too: it takes the method as
 * an argument, so no solver depends on this table and the table depends on the solvers only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/ode.h"
#include "linreg/ode_impl.h"

const dpd_ode_method_type *const dpd_ode_method_types[] = {
    &dpd__ode_method_bdf, &dpd__ode_method_adams, &dpd__ode_method_volterra, NULL};

const dpd_ode_method_type *dpd_ode_method_lookup(const char *name) {
  if (name == NULL) {
    return NULL;
  }
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL; m++) {
    if (strcmp((*m)->name, name) == 0) {
      return *m;
    }
  }
  return NULL;
}

const dpd_ode_method_type *dpd_ode_method_type_get(dpd_ode_method method) {
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL; m++) {
    if ((*m)->id == method) {
      return *m;
    }
  }
  return NULL;
}

void dpd__ode_method_names(unsigned with, unsigned without, char *buf, size_t size) {
  size_t used = 0;
  if (size == 0) {
    return;
  }
  buf[0] = '\0';
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL && used < size; m++) {
    if (((*m)->flags & with) == with && ((*m)->flags & without) == 0) {
      int k = snprintf(buf + used, size - used, "%s%s", used > 0 ? ", " : "", (*m)->name);
      used += k > 0 ? (size_t)k : 0;
    }
  }
}

/* The requirements of the method's flags (DPD_EINVAL naming the key and the method). */
static int check_requirements(const dpd_ode_method_type *type, const dpd_schedule *schedule,
                              const dpd_ode_config *cfg, dpd_err *err) {
  if (type->flags & DPD_ODE_NEEDS_CONST_SCHEDULE) {
    double eta0 = dpd_schedule_eval(schedule, 0.0), eta1 = dpd_schedule_eval(schedule, 1.0);
    if (!dpd_schedule_is_nonincreasing(schedule) || eta0 != eta1) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'schedule': %s with eta~(0) = %g, eta~(1) = %g is not "
                      "constant (allowed with method = %s: a constant schedule)",
                      dpd_schedule_name(schedule), eta0, eta1, type->name);
    }
  }
  if ((type->flags & DPD_ODE_NEEDS_NO_CLIPPING) && isfinite(cfg->c) &&
      (isnan(cfg->mu_frozen) || isnan(cfg->nu_frozen))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': %g with method = %s (allowed: c = inf, or both "
                    "mu_frozen and nu_frozen set: clipping at the current risk makes the "
                    "equation nonlinear)",
                    cfg->c, type->name);
  }
  return DPD_OK;
}

/* The common validation with the method of the table (NULL config: the validation says so). */
static int validate(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                    const dpd_ode_config *cfg, dpd_err *err) {
  char names[128];
  dpd__ode_method_names(0, 0, names, sizeof names);
  return dpd__ode_validate(problem, schedule, cfg,
                           cfg != NULL ? dpd_ode_method_type_get(cfg->method) : NULL, names, err);
}

int dpd_ode_rhs_eval(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                     const dpd_ode_config *cfg, double t, const double *S, double *dSdt) {
  int status = validate(problem, schedule, cfg, NULL);
  return status < 0 ? status : dpd__ode_rhs_eval(problem, schedule, cfg, t, S, dSdt);
}

int dpd_ode_jtimes_eval(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                        const dpd_ode_config *cfg, double t, const double *S, const double *v,
                        double *Jv) {
  int status = validate(problem, schedule, cfg, NULL);
  return status < 0 ? status : dpd__ode_jtimes_eval(problem, schedule, cfg, t, S, v, Jv);
}

int dpd_ode_solve(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                  const dpd_ode_config *cfg, dpd_ode_result **out, dpd_err *err) {
  const dpd_ode_method_type *type;
  int status;
  if (out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'out': NULL (allowed: a pointer)");
  }
  *out = NULL;
  if ((status = validate(problem, schedule, cfg, err)) < 0) {
    return status;
  }
  type = dpd_ode_method_type_get(cfg->method); /* not NULL: validated */
  if ((status = check_requirements(type, schedule, cfg, err)) < 0) {
    return status;
  }
  if ((status = type->solve(problem, schedule, cfg, out, err)) >= 0 && *out != NULL) {
    (*out)->config = *cfg; /* the record of what was solved (linreg_setting.h) */
  }
  return status;
}
