/* The ODE with its a-posteriori error estimates (ode_estimate_impl.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>

#include "core/error_impl.h"

#include "linreg/ode_estimate_impl.h"

/* Nodes per band the spectrum keeps moments for: the first count and three refinements. */
#define SPECTRUM_EXTRA_NODES 6

int dpd__linreg_spectral_problem(dpd__linreg_spectral *s, int nodes, dpd_linreg_problem **out,
                                 dpd_err *err) {
  int status;
  if (s->spectrum == NULL || nodes > s->spectrum_nodes) {
    dpd_linreg_compress_config cc = s->cc;
    cc.nodes = nodes + SPECTRUM_EXTRA_NODES > DPD_COMPRESS_MAX_NODES ? DPD_COMPRESS_MAX_NODES
                                                                     : nodes + SPECTRUM_EXTRA_NODES;
    dpd_linreg_spectrum_free(s->spectrum);
    s->spectrum = NULL;
    status = s->full != NULL
                 ? dpd_linreg_spectrum_from_problem(s->full, &cc, &s->spectrum, err)
                 : dpd_linreg_spectrum_from_config(s->pc, &cc, s->threads, &s->spectrum, err);
    if (status < 0) {
      return status;
    }
    s->spectrum_nodes = cc.nodes;
  }
  return dpd_linreg_spectrum_problem(s->spectrum, nodes, out, err);
}

void dpd__linreg_spectral_free(dpd__linreg_spectral *s) {
  dpd_linreg_spectrum_free(s->spectrum);
  s->spectrum = NULL;
}

/* Largest relative difference |a - b| / |b| over the grid of the risk and, when both have
 * them, of the finite bounds. */
static double max_rel_diff(const dpd_ode_result *a, const dpd_ode_result *b, int bounds) {
  double m = 0.0;
  for (size_t i = 0; i < a->grid; i++) {
    m = fmax(m, fabs(a->risk[i] - b->risk[i]) / fabs(b->risk[i]));
    if (bounds && a->lower != NULL && b->lower != NULL) {
      if (isfinite(a->lower[i]) && isfinite(b->lower[i])) {
        m = fmax(m, fabs(a->lower[i] - b->lower[i]) / fabs(b->lower[i]));
      }
      if (isfinite(a->upper[i]) && isfinite(b->upper[i])) {
        m = fmax(m, fabs(a->upper[i] - b->upper[i]) / fabs(b->upper[i]));
      }
    }
  }
  m = fmax(m, fabs(a->final_risk - b->final_risk) / fabs(b->final_risk));
  return m;
}

/* The compression refinement: *a (the solve on *problem) replaced by finer solves. */
static int refine(dpd__linreg_spectral *s, dpd_linreg_problem **problem,
                  const dpd_schedule *schedule, const dpd_ode_config *oc, double compress_tol,
                  dpd_ode_result **a, double *compress_est, dpd_err *err) {
  int n = (*problem)->nodes_per_band;
  while (n + 2 <= DPD_COMPRESS_MAX_NODES) {
    dpd_linreg_problem *finer = NULL;
    dpd_ode_result *b = NULL;
    int status;
    if ((status = dpd__linreg_spectral_problem(s, n + 2, &finer, err)) < 0 ||
        (status = dpd_ode_solve(finer, schedule, oc, &b, err)) < 0) {
      dpd_linreg_problem_free(finer);
      return status;
    }
    *compress_est = max_rel_diff(*a, b, 0);
    dpd_ode_result_free(*a);
    *a = b;
    if (*problem != s->full) {
      dpd_linreg_problem_free(*problem);
    }
    *problem = finer;
    n += 2;
    if (*compress_est <= compress_tol) {
      break;
    }
  }
  return DPD_OK;
}

int dpd__linreg_ode_solve_estimated(dpd__linreg_spectral *s, dpd_linreg_problem **problem,
                                    const dpd_schedule *schedule, const dpd_ode_config *oc,
                                    double compress_tol, dpd_ode_result **res,
                                    dpd__linreg_ode_estimates *est, dpd_err *err) {
  int status;
  dpd_ode_result *a = NULL;
  est->compress_est = NAN;
  est->ode_est = NAN;
  est->ode_est_why = NULL;
  *res = NULL;
  if ((status = dpd_ode_solve(*problem, schedule, oc, &a, err)) < 0) {
    return status;
  }
  if ((*problem)->spectral && (*problem)->compressed_bands > 0 &&
      (status = refine(s, problem, schedule, oc, compress_tol, &a, &est->compress_est, err)) < 0) {
    dpd_ode_result_free(a);
    return status;
  }
  if (oc->method == DPD_ODE_VOLTERRA) {
    est->ode_est_why = "method volterra: its error is not set by rtol";
  } else if ((*problem)->ngroups > DPD_ODE_ESTIMATE_MAX_GROUPS) {
    est->ode_est_why = "more than 20000 groups: a second solve would double the cost";
  } else {
    dpd_ode_config fine = *oc;
    dpd_ode_result *c = NULL;
    fine.rtol = oc->rtol / 10.0;
    fine.atol = oc->atol / 10.0;
    if ((status = dpd_ode_solve(*problem, schedule, &fine, &c, err)) < 0) {
      dpd_ode_result_free(a);
      return status;
    }
    est->ode_est = max_rel_diff(a, c, 1);
    dpd_ode_result_free(c);
  }
  *res = a;
  return DPD_OK;
}

void dpd__linreg_method_names(unsigned with, unsigned without, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL; m++) {
    if (((*m)->flags & with) == with && ((*m)->flags & without) == 0 && used < size) {
      int k = snprintf(buf + used, size - used, "%s%s", used > 0 ? ", " : "", (*m)->name);
      used += k > 0 ? (size_t)k : 0;
    }
  }
}

int dpd__linreg_method_check(const dpd_ode_method_type *type, int tune, const dpd_schedule *s,
                             const char *schedule, double c, dpd_err *err) {
  const unsigned needs = DPD_ODE_NEEDS_CONST_SCHEDULE | DPD_ODE_NEEDS_NO_CLIPPING;
  const unsigned tune_gives = DPD_ODE_THREAD_SAFE | DPD_ODE_GIVES_BOUNDS;
  const char *fallback = dpd_ode_method_type_get(dpd_ode_config_default().method)->name;
  const double eta0 = dpd_schedule_eval(s, 0.0), eta1 = dpd_schedule_eval(s, 1.0);
  char allowed[128];
  if (tune) {
    if ((type->flags & needs) == 0 && (type->flags & tune_gives) == tune_gives) {
      return DPD_OK;
    }
    dpd__linreg_method_names(tune_gives, needs, allowed, sizeof allowed);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'method': '%s' with tune (allowed for tune: %s; tune "
                    "solves from several threads at varying c and schedules, and writes the "
                    "bounds)",
                    type->name, allowed);
  }
  if ((type->flags & DPD_ODE_NEEDS_CONST_SCHEDULE) &&
      (!dpd_schedule_is_nonincreasing(s) || eta0 != eta1)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': %s with eta~(0) = %g, eta~(1) = %g is not "
                    "constant (allowed with method = %s: a constant schedule; use "
                    "method = %s otherwise)",
                    schedule, eta0, eta1, type->name, fallback);
  }
  if ((type->flags & DPD_ODE_NEEDS_NO_CLIPPING) && isfinite(c)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': %g with method = %s (allowed: c = inf; "
                    "clipping makes the equation nonlinear, use method = %s)",
                    c, type->name, fallback);
  }
  return DPD_OK;
}
