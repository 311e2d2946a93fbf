/* Tuning the clipping scale and the schedule on the deterministic equivalent
 * (docs/math.md §1.7-1.8).
 * SPDX-License-Identifier: MIT
 *
 * Minimises the released excess risk R_out of the risk ODEs (dpd_ode_solve) over box-constrained
 * parameters written through unconstrained variables (tune.h gives the transforms and the search
 * strategy). Methods and references:
 *  - Nelder-Mead simplex: J. A. Nelder and R. Mead, Computer Journal 7 (1965) 308-313, as
 *    GSL's gsl_multimin_fminimizer_nmsimplex2 (GSL manual 2.7, section 39.8); restarting a
 *    converged simplex at its best point guards against the premature collapse described by
 *    K. I. M. McKinnon, SIAM J. Optim. 9 (1998) 148-158, and recommended by J. C. Lagarias et
 *    al., SIAM J. Optim. 9 (1998) 112-147.
 *  - Brent's minimiser (golden section + parabolic interpolation): R. P. Brent, Algorithms for
 *    Minimization without Derivatives (1973), ch. 5, as gsl_min_fminimizer_brent.
 *  - Bounds by smooth transforms (logistic of the log-box coordinate): e.g. J. Nocedal and
 *    S. J. Wright, Numerical Optimization (2006), section 17 introduction; the simplex works
 *    on an unconstrained space, every point of which is feasible.
 * Why a pre-scan: R_out is not convex in (c, eta~(0)): small c and large eta~ trade off along a
 * curved valley (for c -> 0 the dynamics depend on eta~ c only), so a local method started
 * blindly may stop on the valley floor far from the optimum. A coarse tensor grid in the box
 * coordinates picks the starts; its cost (prescan^nvars ODE solves) is small next to the local
 * searches for nvars <= 3. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_multimin.h>

#include "core/error_impl.h"
#include "dpdyn/tune.h"
#include "linreg/ode_impl.h"

/* Defaults (STYLE 25: one place). */
static const double tune_c_min_default = 1e-2;
static const double tune_c_max_default = 1e2;
static const double tune_safety_default = 0.99;
static const double tune_eta_min_fraction_default = 1e-6;
static const double tune_shape_min_default = 1e-3;
static const double tune_shape_max_default = 1e6;
static const size_t tune_prescan_default = 9;
static const size_t tune_starts_default = 3;
static const double tune_simplex_step_default = 0.5;
static const double tune_xtol_default = 1e-8;
static const double tune_ftol_default = 1e-10;
static const size_t tune_max_iter_default = 2000;
static const size_t tune_restarts_default = 3;
static const double tune_fail_value_default = 1e300;
static const double tune_bound_tol_default = 1e-4;
/* Brent at a box edge: halvings towards the edge that look for a bracket (see brent_search). */
enum { EDGE_HALVINGS = 12 };
/* Relative bracket width Brent can reach: 4 sqrt(DBL_EPSILON) (see brent_search). */
static const double brent_rel_floor = 4.0 * 1.4901161193847656e-08;
/* Most search variables (c, amplitude, two shape parameters) and pre-scan points. */
enum { NVARS_MAX = 4 };
static const size_t prescan_points_max = 1000000;

dpd_tune_config dpd_tune_config_default(void) {
  dpd_tune_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.params = 0;
  cfg.c_min = tune_c_min_default;
  cfg.c_max = tune_c_max_default;
  cfg.safety = tune_safety_default;
  cfg.eta_min_fraction = tune_eta_min_fraction_default;
  cfg.shape_min = tune_shape_min_default;
  cfg.shape_max = tune_shape_max_default;
  cfg.prescan = tune_prescan_default;
  cfg.starts = tune_starts_default;
  cfg.simplex_step = tune_simplex_step_default;
  cfg.xtol = tune_xtol_default;
  cfg.ftol = tune_ftol_default;
  cfg.max_iter = tune_max_iter_default;
  cfg.restarts = tune_restarts_default;
  cfg.fail_value = tune_fail_value_default;
  cfg.bound_tol = tune_bound_tol_default;
  cfg.threads = 0;
  cfg.ode = dpd_ode_config_default();
  return cfg;
}

/* The tunable parameters by name (dpd_schedule_family.tunables). */
static const struct {
  const char *name;
  int flag;
} tune_param_names[] = {{"c", DPD_TUNE_C},   {"eta0", DPD_TUNE_ETA0}, {"a", DPD_TUNE_A},
                        {"c1", DPD_TUNE_C1}, {"c2", DPD_TUNE_C2},     {"c3", DPD_TUNE_C3}};
enum { NTUNE_PARAM_NAMES = sizeof tune_param_names / sizeof tune_param_names[0] };

/* The flags of a space-separated list of names (NULL: 0); -1 when a name is not a tunable
 * parameter, its position in *bad. */
static int flags_of(const char *list, const char **bad) {
  int flags = 0;
  const char *p = list;
  while (p != NULL && *p != '\0') {
    size_t len = strcspn(p, " ");
    int found = 0;
    for (size_t i = 0; i < NTUNE_PARAM_NAMES && len > 0; i++) {
      if (strlen(tune_param_names[i].name) == len && strncmp(tune_param_names[i].name, p, len) == 0) {
        flags |= tune_param_names[i].flag;
        found = 1;
      }
    }
    if (len > 0 && !found) {
      *bad = p;
      return -1;
    }
    p += len;
    p += strspn(p, " ");
  }
  return flags;
}

/* Parameters that belong to a family (its tunables), and its default set; 0 for families the
 * tuner does not support (file, unknown kinds, names outside dpd_tune_param). */
static int family_params(dpd_schedule_kind kind) {
  const char *bad = NULL;
  const dpd_schedule_family *f = dpd_schedule_family_get(kind);
  int flags = f != NULL ? flags_of(f->tunables, &bad) : 0;
  return flags < 0 ? 0 : flags;
}

int dpd_tune_params_get(dpd_schedule_kind kind) {
  const char *bad = NULL;
  const dpd_schedule_family *f = dpd_schedule_family_get(kind);
  int flags = f != NULL && family_params(kind) != 0 ? flags_of(f->tune_default, &bad) : 0;
  return flags < 0 ? 0 : flags;
}

static const char *family_name(dpd_schedule_kind kind) {
  const dpd_schedule_family *f = dpd_schedule_family_get(kind);
  return f != NULL ? f->name : "unknown";
}

/* "const, sqrt, ...": the families tune supports, for messages. */
static void tunable_families(char *buf, size_t cap) {
  const dpd_schedule_family *f;
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; (f = dpd_schedule_family_at(i)) != NULL && len < cap; i++) {
    if (family_params(f->kind) != 0) {
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", f->name);
    }
  }
}

static int unsupported_family(dpd_schedule_kind kind, dpd_err *err) {
  char allowed[256];
  tunable_families(allowed, sizeof allowed);
  return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'schedule': '%s' (allowed for tuning: %s)",
                  family_name(kind), allowed);
}

int dpd_tune_family_params_get(const char *schedule, dpd_schedule_kind *kind, int *params,
                               int *defaults, char *allowed, size_t cap, dpd_err *err) {
  const dpd_schedule_family *f = schedule != NULL ? dpd_schedule_family_lookup(schedule) : NULL;
  const char *bad = NULL;
  int flags = f != NULL ? flags_of(f->tunables, &bad) : 0;
  if (flags <= 0) {
    char families[256];
    tunable_families(families, sizeof families);
    if (flags < 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'tunables': '%s' of family '%s' (allowed: names among "
                      "c, eta0, a, c1, c2, c3)",
                      f->tunables, f->name);
    }
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': '%s' (allowed with tune: %s)",
                    schedule != NULL ? schedule : "(null)", families);
  }
  if (kind != NULL) {
    *kind = f->kind;
  }
  if (params != NULL) {
    *params = flags;
  }
  if (defaults != NULL) {
    *defaults = dpd_tune_params_get(f->kind);
  }
  if (allowed != NULL && cap > 0) {
    size_t len = 0;
    const char *p = f->tunables;
    allowed[0] = '\0';
    while (*p != '\0' && len < cap) {
      size_t n = strcspn(p, " ");
      if (n > 0) {
        len += (size_t)snprintf(allowed + len, cap - len, "%s%.*s", len ? ", " : "", (int)n, p);
      }
      p += n;
      p += strspn(p, " ");
    }
  }
  return DPD_OK;
}

/* m = max(c2, c3/rho) of the optimal family (c3/rho = 0 when rho = inf). */
static double offset_scale(const dpd_schedule_config *sc) {
  double c3_over_rho = isinf(sc->rho) ? 0.0 : sc->c3 / sc->rho;
  return fmax(sc->c2, c3_over_rho);
}

/* eta~(0) and sup eta~ / eta~(0) of a supported family (closed forms of schedule.h). */
static double schedule_eta0(const dpd_schedule_config *sc) {
  if (sc->kind == DPD_SCHEDULE_OPTIMAL) {
    return sc->c1 / (sc->gamma * offset_scale(sc));
  }
  return sc->eta0;
}

/* sup eta~ / eta~(0) of a supported family, from its table entry (1 when it has none: the
 * sup then depends on eta0, as for cosine, and the limit is checked at each point). */
static double sup_ratio(const dpd_schedule_config *sc) {
  const dpd_schedule_family *f = dpd_schedule_family_get(sc->kind);
  return f != NULL && f->sup_ratio != NULL ? f->sup_ratio(sc) : 1.0;
}

dpd_schedule_config dpd_tune_schedule_eta0_set(const dpd_schedule_config *schedule, double eta0) {
  dpd_schedule_config sc = *schedule;
  if (sc.kind == DPD_SCHEDULE_OPTIMAL) {
    sc.c1 = eta0 * sc.gamma * offset_scale(&sc);
  } else {
    sc.eta0 = eta0;
  }
  return sc;
}

static int check_box(const char *lo_name, double lo, const char *hi_name, double hi, dpd_err *err) {
  if (!(lo > 0.0) || !isfinite(lo)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %g (allowed: finite, > 0)", lo_name,
                    lo);
  }
  if (!(hi > lo) || !isfinite(hi)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %g (allowed: finite, > %s = %g)",
                    hi_name, hi, lo_name, lo);
  }
  return DPD_OK;
}

/* Validates the fields of cfg that do not depend on the family. */
static int validate_config(const dpd_tune_config *cfg, dpd_err *err) {
  int status;
  const dpd_ode_config *oc = &cfg->ode;
  if ((status = check_box("c_min", cfg->c_min, "c_max", cfg->c_max, err)) < 0 ||
      (status = check_box("shape_min", cfg->shape_min, "shape_max", cfg->shape_max, err)) < 0) {
    return status;
  }
  if (!(cfg->safety > 0.0 && cfg->safety < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'safety': %g (allowed: 0 < safety < 1)",
                    cfg->safety);
  }
  if (!(cfg->eta_min_fraction > 0.0 && cfg->eta_min_fraction < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'eta_min_fraction': %g (allowed: 0 < eta_min_fraction < 1)",
                    cfg->eta_min_fraction);
  }
  if (cfg->prescan < 3) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'prescan': %zu (allowed: integer >= 3)",
                    cfg->prescan);
  }
  if (cfg->starts < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'starts': %zu (allowed: integer >= 1)",
                    cfg->starts);
  }
  if (cfg->max_iter < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'max_iter': %zu (allowed: integer >= 1)",
                    cfg->max_iter);
  }
  if (!(cfg->simplex_step > 0.0) || !isfinite(cfg->simplex_step)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'simplex_step': %g (allowed: finite, > 0)",
                    cfg->simplex_step);
  }
  if (!(cfg->xtol > 0.0) || !isfinite(cfg->xtol)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'xtol': %g (allowed: finite, > 0)",
                    cfg->xtol);
  }
  if (!(cfg->ftol >= 0.0) || !isfinite(cfg->ftol)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'ftol': %g (allowed: finite, >= 0)",
                    cfg->ftol);
  }
  if (!(cfg->fail_value > 0.0) || !isfinite(cfg->fail_value)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'fail_value': %g (allowed: finite, > 0)",
                    cfg->fail_value);
  }
  if (!(cfg->bound_tol >= 0.0 && cfg->bound_tol < 0.5)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'bound_tol': %g (allowed: 0 <= bound_tol < 0.5)",
                    cfg->bound_tol);
  }
  if (!(oc->gamma > 0.0) || !isfinite(oc->gamma)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'gamma': %g (allowed: finite, > 0)",
                    oc->gamma);
  }
  if (!(oc->rho > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'rho': %g (allowed: > 0, or inf)", oc->rho);
  }
  {
    /* The objective is evaluated from several threads at varying c and schedules. */
    const unsigned needs = DPD_ODE_NEEDS_CONST_SCHEDULE | DPD_ODE_NEEDS_NO_CLIPPING;
    const dpd_ode_method_type *type = dpd_ode_method_type_get(oc->method);
    if (type != NULL && ((type->flags & DPD_ODE_THREAD_SAFE) == 0 || (type->flags & needs) != 0)) {
      char allowed[128];
      dpd__ode_method_names(DPD_ODE_THREAD_SAFE, needs, allowed, sizeof allowed);
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'method': %s (allowed for tuning: %s; tuning solves "
                      "from several threads at varying c and schedules)",
                      type->name, allowed);
    }
  }
  return DPD_OK;
}

/* R_out of (c, sc) without the argument checks of the public wrapper. `sup_limit` is the
 * largest admissible sup eta~ (2/gamma, exclusive). */
static int eval_risk(const dpd_linreg_problem *problem, const dpd_schedule_config *sc, double c,
                     const dpd_ode_config *base, double *risk, double *before, double *jump,
                     dpd_err *err) {
  dpd_schedule *schedule = NULL;
  dpd_ode_result *res = NULL;
  dpd_ode_config oc = *base;
  double sup;
  int status;
  if ((status = dpd_schedule_create(sc, &schedule, err)) < 0) {
    return status;
  }
  sup = dpd_schedule_sup(schedule);
  if (!(sup < 2.0 / oc.gamma)) {
    dpd_schedule_free(schedule);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': sup eta~ = %g (allowed: sup eta~ < 2/gamma = "
                    "%g, the stability limit)",
                    sup, 2.0 / oc.gamma);
  }
  if (isfinite(oc.rho) && !dpd_schedule_is_nonincreasing(schedule)) {
    dpd_schedule_free(schedule);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': %s increases on [0, 1] (allowed: a "
                    "non-increasing schedule when rho is finite)",
                    family_name(sc->kind));
  }
  oc.c = c;
  oc.grid = 2;
  oc.bounds = 0;
  status = dpd_ode_solve(problem, schedule, &oc, &res, err);
  dpd_schedule_free(schedule);
  if (status < 0) {
    return status;
  }
  *risk = res->final_risk;
  if (before != NULL) {
    *before = res->before_release;
  }
  if (jump != NULL) {
    *jump = res->release_jump;
  }
  dpd_ode_result_free(res);
  if (!isfinite(*risk)) {
    return DPD_FAIL(err, DPD_ENONFINITE, "released risk is not finite (%g)", *risk);
  }
  return DPD_OK;
}

/* Checks c against rho and the family's support. */
static int check_problem(const dpd_schedule_config *sc, double c, const dpd_tune_config *cfg,
                         dpd_err *err) {
  if (family_params(sc->kind) == 0) {
    return unsupported_family(sc->kind, err);
  }
  if (!(c > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c': %g (allowed: > 0, or inf)", c);
  }
  if (isinf(c) && isfinite(cfg->ode.rho)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': inf with rho = %g (allowed: finite c > 0 when rho is "
                    "finite: the noise is calibrated to the clipping threshold)",
                    cfg->ode.rho);
  }
  if (sc->kind == DPD_SCHEDULE_OPTIMAL &&
      (sc->gamma != cfg->ode.gamma || !(sc->rho == cfg->ode.rho))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': optimal with gamma = %g, rho = %g but the "
                    "problem has gamma = %g, rho = %g (allowed: the same gamma and rho)",
                    sc->gamma, sc->rho, cfg->ode.gamma, cfg->ode.rho);
  }
  return DPD_OK;
}

int dpd_tune_risk_eval(const dpd_linreg_problem *problem, const dpd_schedule_config *schedule,
                       double c, const dpd_tune_config *cfg, double *risk, dpd_err *err) {
  int status;
  if ((status = validate_config(cfg, err)) < 0 ||
      (status = check_problem(schedule, c, cfg, err)) < 0) {
    return status;
  }
  return eval_risk(problem, schedule, c, &cfg->ode, risk, NULL, NULL, err);
}

int dpd_tune_eta0_max_get(const dpd_schedule_config *schedule, const dpd_tune_config *cfg,
                          double *eta0_max, dpd_err *err) {
  int status;
  if ((status = validate_config(cfg, err)) < 0) {
    return status;
  }
  if (family_params(schedule->kind) == 0) {
    return unsupported_family(schedule->kind, err);
  }
  *eta0_max = cfg->safety * (2.0 / cfg->ode.gamma) / sup_ratio(schedule);
  return DPD_OK;
}

/* ---- the search ---- */

typedef enum { VAR_C, VAR_ETA0, VAR_A, VAR_C2, VAR_C3, VAR_M } var_kind;

typedef struct {
  const dpd_linreg_problem *problem;
  const dpd_tune_config *cfg;
  dpd_schedule_config base; /* family; fixed parameters */
  double c_fixed;
  size_t nvars;
  var_kind kind[NVARS_MAX];
  double log_lo[NVARS_MAX], log_hi[NVARS_MAX];
  size_t evals, failed; /* serial counters (the parallel pre-scan adds its own) */
  size_t budget;        /* the most ODE solves the run can make: progress's total */
  size_t reported;      /* evals at the last progress call */
  int stopped;          /* the progress callback asked for a stop */
} search;

/* Serial phases: reports sr->evals to the progress callback; 1 when a stop was asked for. */
static int search_poll(search *sr) {
  const dpd_tune_config *cfg = sr->cfg;
  if (cfg->progress != NULL && !sr->stopped && sr->evals > sr->reported &&
      sr->evals < sr->budget) {
    sr->reported = sr->evals;
    sr->stopped = cfg->progress(cfg->progress_user, sr->evals, sr->budget) != 0;
  }
  return sr->stopped;
}

/* A parallel loop's progress: units done and the stop request (both OpenMP atomics); the
 * callback is called from thread 0 of the team, the calling thread, only. */
typedef struct {
  const dpd_tune_config *cfg;
  size_t done, reported, offset, total;
  int stop;
} loop_progress;

static int loop_stopped(loop_progress *lp) {
  int stop;
#pragma omp atomic read
  stop = lp->stop;
  return stop;
}

static void loop_done(loop_progress *lp) {
  size_t done;
#pragma omp atomic capture
  done = ++lp->done;
  if (lp->cfg->progress != NULL && omp_get_thread_num() == 0 && done > lp->reported &&
      !loop_stopped(lp)) {
    lp->reported = done;
    if (lp->cfg->progress(lp->cfg->progress_user, lp->offset + done, lp->total) != 0) {
#pragma omp atomic write
      lp->stop = 1;
    }
  }
}

/* Box coordinates s -> (c, schedule config). The amplitude eta~(0) is set last: for the
 * optimal family c1 = eta~(0) gamma m needs the final m. */
static void map_point(const search *sr, const double *s, double *c, dpd_schedule_config *sc) {
  double eta0 = -1.0;
  *sc = sr->base;
  *c = sr->c_fixed;
  for (size_t v = 0; v < sr->nvars; v++) {
    double x = exp(sr->log_lo[v] + (sr->log_hi[v] - sr->log_lo[v]) * s[v]);
    switch (sr->kind[v]) {
    case VAR_C:
      *c = x;
      break;
    case VAR_ETA0:
      eta0 = x;
      break;
    case VAR_A:
      sc->a = x;
      break;
    case VAR_C2:
      sc->c2 = x;
      break;
    case VAR_C3:
      sc->c3 = x;
      break;
    case VAR_M:
      sc->c2 = x;
      sc->c3 = sc->rho * x;
      break;
    }
  }
  if (eta0 > 0.0) {
    *sc = dpd_tune_schedule_eta0_set(sc, eta0);
  }
}

/* Objective at box coordinates s; failures (ODE or constraint) give fail_value. */
static double objective_s(const search *sr, const double *s, int *failed) {
  dpd_schedule_config sc;
  double c, risk;
  map_point(sr, s, &c, &sc);
  if (eval_risk(sr->problem, &sc, c, &sr->cfg->ode, &risk, NULL, NULL, NULL) < 0) {
    *failed = 1;
    return sr->cfg->fail_value;
  }
  *failed = 0;
  return risk;
}

static double counted_objective(search *sr, const double *s) {
  int failed;
  if (sr->stopped) {
    return sr->cfg->fail_value; /* winding down after a stop request: no more ODE solves */
  }
  double f = objective_s(sr, s, &failed);
  sr->evals++;
  sr->failed += (size_t)failed;
  (void)search_poll(sr);
  return f;
}

static int cancelled(dpd_err *err) {
  return DPD_FAIL(err, DPD_ECANCELLED, "tune: stopped by the progress callback");
}

static double logistic(double u) {
  return u >= 0.0 ? 1.0 / (1.0 + exp(-u)) : exp(u) / (1.0 + exp(u));
}

static double logit(double s) {
  return log(s) - log1p(-s);
}

/* gsl_multimin adapter: u -> s -> objective. */
static double nm_f(const gsl_vector *u, void *params) {
  search *sr = params;
  double s[NVARS_MAX];
  for (size_t v = 0; v < sr->nvars; v++) {
    s[v] = logistic(gsl_vector_get(u, v));
  }
  return counted_objective(sr, s);
}

/* gsl_min adapter (one variable, box coordinate s directly). */
static double brent_f(double s, void *params) {
  return counted_objective(params, &s);
}

typedef struct {
  double s[NVARS_MAX];
  double f;
  size_t iterations;
  int converged;
} local_result;

/* Nelder-Mead from s0 (nmsimplex2 in u), restarted at the best point while that helps. */
static int nm_search(search *sr, const double *s0, local_result *out, dpd_err *err) {
  const dpd_tune_config *cfg = sr->cfg;
  const gsl_multimin_fminimizer_type *type = gsl_multimin_fminimizer_nmsimplex2;
  gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(type, sr->nvars);
  gsl_vector *u = gsl_vector_alloc(sr->nvars);
  gsl_vector *step = gsl_vector_alloc(sr->nvars);
  gsl_multimin_function fn;
  double best_f = INFINITY;
  int status = DPD_OK;
  if (m == NULL || u == NULL || step == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory for the simplex");
    goto done;
  }
  fn.n = sr->nvars;
  fn.f = nm_f;
  fn.params = sr;
  for (size_t v = 0; v < sr->nvars; v++) {
    gsl_vector_set(u, v, logit(s0[v]));
  }
  gsl_vector_set_all(step, cfg->simplex_step);
  out->iterations = 0;
  out->converged = 0;
  for (size_t v = 0; v < sr->nvars; v++) {
    out->s[v] = s0[v];
  }
  out->f = cfg->fail_value;
  for (size_t round = 0; round <= cfg->restarts; round++) {
    int converged = 0;
    double f;
    if (gsl_multimin_fminimizer_set(m, &fn, u, step) != GSL_SUCCESS) {
      break; /* only on a non-finite value, which the objective never returns */
    }
    for (size_t it = 0; it < cfg->max_iter; it++) {
      int gs = gsl_multimin_fminimizer_iterate(m);
      out->iterations++;
      if (sr->stopped) {
        status = cancelled(err);
        goto done;
      }
      if (gs != GSL_SUCCESS) {
        break;
      }
      if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), cfg->xtol) == GSL_SUCCESS) {
        converged = 1;
        break;
      }
    }
    f = gsl_multimin_fminimizer_minimum(m);
    gsl_vector_memcpy(u, gsl_multimin_fminimizer_x(m));
    out->converged = converged;
    for (size_t v = 0; v < sr->nvars; v++) {
      out->s[v] = logistic(gsl_vector_get(u, v));
    }
    out->f = f;
    /* Stop when a restart no longer improves on the previous round by more than ftol. */
    if (round > 0 && !(f < best_f - cfg->ftol * fabs(best_f))) {
      best_f = fmin(best_f, f);
      break;
    }
    best_f = fmin(best_f, f);
  }
done:
  gsl_multimin_fminimizer_free(m);
  gsl_vector_free(u);
  gsl_vector_free(step);
  return status;
}

/* Brent in s on [lo, hi] around mid, where the caller knows f(mid) = fmid, f(lo) = flo,
 * f(hi) = fhi. Without a strict bracket the start itself (or the lower edge value) is kept. */
static int brent_search(search *sr, double lo, double flo, double mid, double fmid, double hi,
                        double fhi, local_result *out, dpd_err *err) {
  const dpd_tune_config *cfg = sr->cfg;
  gsl_min_fminimizer *m;
  gsl_function fn;
  out->iterations = 0;
  out->converged = 0;
  /* At a box edge that is not higher than the start, look for a bracket between them by
   * halving towards the edge; if none is found, the edge is the optimum. */
  if (!(fmid < flo) || !(fmid < fhi)) {
    int left = !(fmid < flo) && flo <= fhi; /* edge to approach */
    double edge = left ? lo : hi, fedge = left ? flo : fhi;
    double far = mid, ffar = fmid;
    int found = 0;
    for (int h = 1; h <= EDGE_HALVINGS; h++) {
      double x = edge + (far - edge) * ldexp(1.0, -h);
      double fx = counted_objective(sr, &x);
      if (sr->stopped) {
        return cancelled(err);
      }
      if (fx < fedge && fx < ffar) {
        found = 1;
        mid = x;
        fmid = fx;
        break;
      }
    }
    if (!found) {
      out->s[0] = fedge <= fmid ? edge : mid;
      out->f = fmin(fedge, fmid);
      out->converged = 1;
      return DPD_OK;
    }
    if (left) {
      lo = edge;
      flo = fedge;
      hi = far;
      fhi = ffar;
    } else {
      lo = far;
      flo = ffar;
      hi = edge;
      fhi = fedge;
    }
  }
  m = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
  if (m == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the Brent minimiser");
  }
  fn.function = brent_f;
  fn.params = sr;
  if (gsl_min_fminimizer_set_with_values(m, &fn, mid, fmid, lo, flo, hi, fhi) != GSL_SUCCESS) {
    gsl_min_fminimizer_free(m);
    out->s[0] = mid;
    out->f = fmid;
    return DPD_OK;
  }
  for (size_t it = 0; it < cfg->max_iter; it++) {
    int gs = gsl_min_fminimizer_iterate(m);
    out->iterations++;
    if (sr->stopped) {
      gsl_min_fminimizer_free(m);
      return cancelled(err);
    }
    if (gs != GSL_SUCCESS) {
      break;
    }
    /* Brent never steps closer than sqrt(DBL_EPSILON) |s| to a known point (GSL brent.c,
     * Brent 1973 ch. 5), so the bracket cannot shrink below about twice that: the relative
     * part of the test accepts it. */
    if (gsl_min_test_interval(gsl_min_fminimizer_x_lower(m), gsl_min_fminimizer_x_upper(m),
                              cfg->xtol, brent_rel_floor) == GSL_SUCCESS) {
      out->converged = 1;
      break;
    }
  }
  out->s[0] = gsl_min_fminimizer_x_minimum(m);
  out->f = gsl_min_fminimizer_f_minimum(m);
  gsl_min_fminimizer_free(m);
  return DPD_OK;
}

/* Sets up the search variables of `params` for `family`. */
static int setup_search(search *sr, const dpd_linreg_problem *problem,
                        const dpd_schedule_config *family, const dpd_tune_config *cfg, int *params,
                        int *ignored, dpd_err *err) {
  double eta_hi;
  int p = cfg->params != 0 ? cfg->params : dpd_tune_params_get(family->kind);
  int allowed = family_params(family->kind);
  memset(sr, 0, sizeof *sr);
  sr->problem = problem;
  sr->cfg = cfg;
  sr->base = *family;
  if (family->kind == DPD_SCHEDULE_OPTIMAL) {
    sr->base.gamma = cfg->ode.gamma;
    sr->base.rho = cfg->ode.rho;
  }
  if (allowed == 0) {
    return unsupported_family(family->kind, err);
  }
  if ((p & ~allowed) != 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'params': %d has parameters that do not belong to "
                    "schedule '%s' (allowed: a subset of %d)",
                    p, family_name(family->kind), allowed);
  }
  *ignored = 0;
  if (family->kind == DPD_SCHEDULE_OPTIMAL && isinf(cfg->ode.rho) && (p & DPD_TUNE_C3)) {
    *ignored = DPD_TUNE_C3; /* c3/rho = 0: no effect */
    p &= ~DPD_TUNE_C3;
  }
  if (p == 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'params': nothing to tune (allowed: at least one "
                    "parameter with an effect)");
  }
  *params = p;
  sr->c_fixed = cfg->ode.c;
  if ((p & DPD_TUNE_C) == 0) {
    int status = check_problem(&sr->base, cfg->ode.c, cfg, err);
    if (status < 0) {
      return status;
    }
  } else if (family->kind == DPD_SCHEDULE_OPTIMAL) {
    int status = check_problem(&sr->base, cfg->c_min, cfg, err);
    if (status < 0) {
      return status;
    }
  }
  if (family->kind == DPD_SCHEDULE_HYPERBOLIC && (p & DPD_TUNE_A) == 0 && isfinite(cfg->ode.rho) &&
      family->a < 0.0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'a': %g with rho = %g (allowed: a >= 0 when rho is finite: "
                    "the schedule must not increase)",
                    family->a, cfg->ode.rho);
  }
  eta_hi = cfg->safety * (2.0 / cfg->ode.gamma) / sup_ratio(&sr->base);
  /* Variables in a fixed order: c, shape parameters, amplitude. */
  if (p & DPD_TUNE_C) {
    sr->kind[sr->nvars] = VAR_C;
    sr->log_lo[sr->nvars] = log(cfg->c_min);
    sr->log_hi[sr->nvars++] = log(cfg->c_max);
  }
  if (p & DPD_TUNE_A) {
    sr->kind[sr->nvars] = VAR_A;
    sr->log_lo[sr->nvars] = log(cfg->shape_min);
    sr->log_hi[sr->nvars++] = log(cfg->shape_max);
    eta_hi = cfg->safety * (2.0 / cfg->ode.gamma); /* a > 0: sup = eta~(0) */
  }
  if ((p & DPD_TUNE_C2) && (p & DPD_TUNE_C3)) {
    sr->kind[sr->nvars] = VAR_M;
  } else if (p & DPD_TUNE_C2) {
    sr->kind[sr->nvars] = VAR_C2;
  } else if (p & DPD_TUNE_C3) {
    sr->kind[sr->nvars] = VAR_C3;
  }
  if (p & (DPD_TUNE_C2 | DPD_TUNE_C3)) {
    double scale = (sr->kind[sr->nvars] == VAR_C3) ? cfg->ode.rho : 1.0;
    sr->log_lo[sr->nvars] = log(cfg->shape_min * scale);
    sr->log_hi[sr->nvars++] = log(cfg->shape_max * scale);
  }
  if (p & (DPD_TUNE_ETA0 | DPD_TUNE_C1)) {
    sr->kind[sr->nvars] = VAR_ETA0;
    sr->log_lo[sr->nvars] = log(cfg->eta_min_fraction * eta_hi);
    sr->log_hi[sr->nvars++] = log(eta_hi);
  } else {
    /* A fixed amplitude: the schedule must be stable at least somewhere; when nothing but c is
     * tuned it is checked here, with a message naming the parameter. */
    if (!(p & (DPD_TUNE_A | DPD_TUNE_C2 | DPD_TUNE_C3))) {
      double sup = schedule_eta0(&sr->base) * sup_ratio(&sr->base);
      if (!(sup < 2.0 / cfg->ode.gamma)) {
        const char *key = family->kind == DPD_SCHEDULE_OPTIMAL ? "c1" : "eta0";
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': the fixed schedule has sup eta~ = %g (allowed: "
                        "sup eta~ < 2/gamma = %g, the stability limit)",
                        key, sup, 2.0 / cfg->ode.gamma);
      }
    }
  }
  return DPD_OK;
}

static int nthreads_of(const dpd_tune_config *cfg, size_t work) {
  int n = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
  if (work < (size_t)n) {
    n = work > 0 ? (int)work : 1;
  }
  return n;
}

/* Pre-scan coordinate of grid index k. */
static double prescan_s(size_t k, size_t points) {
  return ((double)k + 0.5) / (double)points;
}

static void unflatten(size_t flat, size_t points, size_t nvars, size_t *idx) {
  for (size_t v = nvars; v-- > 0;) {
    idx[v] = flat % points;
    flat /= points;
  }
}

/* 1 if grid point `flat` is not higher than any axis neighbour. */
static int is_grid_min(const double *f, size_t flat, size_t points, size_t nvars) {
  size_t idx[NVARS_MAX], stride = 1;
  unflatten(flat, points, nvars, idx);
  for (size_t v = nvars; v-- > 0;) {
    if (idx[v] > 0 && f[flat - stride] < f[flat]) {
      return 0;
    }
    if (idx[v] + 1 < points && f[flat + stride] < f[flat]) {
      return 0;
    }
    stride *= points;
  }
  return 1;
}

/* Indices of the `want` starts: grid-local minima first (by value), then the lowest others. */
static size_t pick_starts(const double *f, size_t total, size_t points, size_t nvars, size_t want,
                          double fail_value, size_t *starts) {
  size_t count = 0;
  for (int pass = 0; pass < 2 && count < want; pass++) {
    while (count < want) {
      size_t best = total;
      for (size_t k = 0; k < total; k++) {
        int taken = 0;
        if (!(f[k] < fail_value)) {
          continue;
        }
        if (pass == 0 && !is_grid_min(f, k, points, nvars)) {
          continue;
        }
        for (size_t q = 0; q < count; q++) {
          taken |= starts[q] == k;
        }
        if (!taken && (best == total || f[k] < f[best])) {
          best = k;
        }
      }
      if (best == total) {
        break;
      }
      starts[count++] = best;
    }
    if (nvars == 1) {
      break; /* Brent needs a bracket: only grid minima (and edges) make sense */
    }
  }
  return count;
}

int dpd_tune_run(const dpd_linreg_problem *problem, const dpd_schedule_config *family,
                 const dpd_tune_config *cfg, dpd_tune_result *out, dpd_err *err) {
  search sr;
  int params = 0, ignored = 0, status;
  size_t total = 1, nstarts, *starts = NULL;
  double *fscan = NULL, worst = -INFINITY;
  local_result best;
  size_t prescan_failed = 0;
  int nthreads;
  memset(out, 0, sizeof *out);
  if ((status = validate_config(cfg, err)) < 0 ||
      (status = setup_search(&sr, problem, family, cfg, &params, &ignored, err)) < 0) {
    return status;
  }
  for (size_t v = 0; v < sr.nvars; v++) {
    if (total > prescan_points_max / cfg->prescan) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'prescan': %zu^%zu points (allowed: at most %zu)",
                      cfg->prescan, sr.nvars, prescan_points_max);
    }
    total *= cfg->prescan;
  }
  fscan = malloc(total * sizeof *fscan);
  starts = malloc(cfg->starts * sizeof *starts);
  if (fscan == NULL || starts == NULL) {
    free(fscan);
    free(starts);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for %zu pre-scan points", total);
  }

  /* 1. Pre-scan (parallel; each point is independent, so the values do not depend on the
   * thread count). */
  /* The budget: the pre-scan, each start's searches (a Nelder-Mead iteration solves at most
   * nvars + 1 ODEs; Brent one, after at most EDGE_HALVINGS + 2 at the edge), the winner. */
  sr.budget = total + 1 +
              cfg->starts * ((cfg->restarts + 1) * (cfg->max_iter + 1) * (sr.nvars + 1) +
                             EDGE_HALVINGS + 2);
  nthreads = nthreads_of(cfg, total);
  loop_progress lp = {cfg, 0, 0, 0, sr.budget, 0};
#pragma omp parallel for num_threads(nthreads) schedule(dynamic) reduction(+ : prescan_failed)
  for (size_t k = 0; k < total; k++) {
    size_t idx[NVARS_MAX];
    double s[NVARS_MAX];
    int failed;
    if (loop_stopped(&lp)) {
      continue; /* a stop was asked for: skip the rest */
    }
    unflatten(k, cfg->prescan, sr.nvars, idx);
    for (size_t v = 0; v < sr.nvars; v++) {
      s[v] = prescan_s(idx[v], cfg->prescan);
    }
    fscan[k] = objective_s(&sr, s, &failed);
    prescan_failed += (size_t)failed;
    loop_done(&lp);
  }
  if (lp.stop) {
    free(fscan);
    free(starts);
    return cancelled(err);
  }
  sr.evals += total;
  sr.reported = lp.reported;
  sr.failed += prescan_failed;
  out->prescan_best = INFINITY;
  for (size_t k = 0; k < total; k++) {
    out->prescan_best = fmin(out->prescan_best, fscan[k]);
  }
  if (prescan_failed == total) {
    free(fscan);
    free(starts);
    return DPD_FAIL(err, DPD_ENONFINITE,
                    "every one of the %zu pre-scan points failed (ODE failure or stability "
                    "limit): no feasible start",
                    total);
  }

  /* 2. Starts, 3. local searches. */
  nstarts = pick_starts(fscan, total, cfg->prescan, sr.nvars, cfg->starts, cfg->fail_value, starts);
  memset(&best, 0, sizeof best);
  best.f = INFINITY;
  for (size_t q = 0; q < nstarts; q++) {
    local_result lr;
    size_t idx[NVARS_MAX];
    double s0[NVARS_MAX];
    unflatten(starts[q], cfg->prescan, sr.nvars, idx);
    for (size_t v = 0; v < sr.nvars; v++) {
      s0[v] = prescan_s(idx[v], cfg->prescan);
    }
    if (sr.nvars == 1) {
      size_t k = idx[0], n = cfg->prescan;
      double lo = k > 0 ? prescan_s(k - 1, n) : 0.0, hi = k + 1 < n ? prescan_s(k + 1, n) : 1.0;
      double flo = k > 0 ? fscan[k - 1] : counted_objective(&sr, &lo);
      double fhi = k + 1 < n ? fscan[k + 1] : counted_objective(&sr, &hi);
      status = brent_search(&sr, lo, flo, s0[0], fscan[k], hi, fhi, &lr, err);
    } else {
      status = nm_search(&sr, s0, &lr, err);
    }
    if (status < 0) {
      free(fscan);
      free(starts);
      return status;
    }
    out->iterations += lr.iterations;
    out->starts++;
    worst = fmax(worst, lr.f);
    if (lr.f < best.f) {
      best = lr;
    }
  }
  free(fscan);
  free(starts);

  /* 4. The winner, re-evaluated for the release decomposition. */
  {
    double c, risk = NAN, before = NAN, jump = NAN;
    dpd_schedule_config sc;
    map_point(&sr, best.s, &c, &sc);
    status = eval_risk(problem, &sc, c, &cfg->ode, &risk, &before, &jump, err);
    sr.evals++;
    if (status < 0) {
      return status;
    }
    if (cfg->progress != NULL && cfg->progress(cfg->progress_user, sr.budget, sr.budget) != 0) {
      return cancelled(err);
    }
    out->schedule = sc;
    out->c = c;
    out->risk = risk;
    out->before_release = before;
    out->release_jump = jump;
    out->eta0 = schedule_eta0(&sc);
    out->eta_sup = out->eta0 * sup_ratio(&sc);
    out->eta_limit = 2.0 / cfg->ode.gamma;
    out->offset_scale = sc.kind == DPD_SCHEDULE_OPTIMAL ? offset_scale(&sc) : 0.0;
  }
  out->params = params;
  out->ignored = ignored;
  out->nvars = sr.nvars;
  out->evals = sr.evals;
  out->failed_evals = sr.failed;
  out->converged = best.converged;
  out->start_spread = (worst - best.f) / best.f;
  for (size_t v = 0; v < sr.nvars; v++) {
    if (best.s[v] < cfg->bound_tol || best.s[v] > 1.0 - cfg->bound_tol) {
      static const int flag_of[] = {DPD_TUNE_C,  DPD_TUNE_ETA0, DPD_TUNE_A,
                                    DPD_TUNE_C2, DPD_TUNE_C3,   DPD_TUNE_C2 | DPD_TUNE_C3};
      int flag = flag_of[sr.kind[v]];
      if (sr.kind[v] == VAR_ETA0 && family->kind == DPD_SCHEDULE_OPTIMAL) {
        flag = DPD_TUNE_C1;
      }
      out->at_bound |= flag;
    }
  }
  return DPD_OK;
}

int dpd_tune_surface_eval(const dpd_linreg_problem *problem, const dpd_schedule_config *schedule,
                          const dpd_tune_config *cfg, const dpd_tune_grid *grid, double *c_out,
                          double *eta_out, double *risk, size_t *failed, dpd_err *err) {
  int status, nthreads;
  size_t total, nfailed = 0;
  dpd_schedule_config base = *schedule;
  if ((status = validate_config(cfg, err)) < 0) {
    return status;
  }
  if (grid->nc < 1 || grid->neta < 1 || grid->nc > prescan_points_max / grid->neta) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'grid': %zu x %zu points (allowed: 1 to %zu points in all)",
                    grid->nc, grid->neta, prescan_points_max);
  }
  if (!(grid->c_min > 0.0) || !(grid->c_max >= grid->c_min) || !isfinite(grid->c_max)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c_max': c range [%g, %g] (allowed: 0 < c_min <= c_max < "
                    "inf)",
                    grid->c_min, grid->c_max);
  }
  if (!(grid->eta_min > 0.0) || !(grid->eta_max >= grid->eta_min) || !isfinite(grid->eta_max)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'eta_max': eta range [%g, %g] (allowed: 0 < eta_min <= "
                    "eta_max < inf)",
                    grid->eta_min, grid->eta_max);
  }
  if (base.kind == DPD_SCHEDULE_OPTIMAL) {
    base.gamma = cfg->ode.gamma;
    base.rho = cfg->ode.rho;
  }
  if ((status = check_problem(&base, grid->c_min, cfg, err)) < 0) {
    return status;
  }
  for (size_t i = 0; i < grid->nc; i++) {
    double f = grid->nc > 1 ? (double)i / (double)(grid->nc - 1) : 0.0;
    c_out[i] = exp(log(grid->c_min) + (log(grid->c_max) - log(grid->c_min)) * f);
  }
  for (size_t j = 0; j < grid->neta; j++) {
    double f = grid->neta > 1 ? (double)j / (double)(grid->neta - 1) : 0.0;
    eta_out[j] = grid->eta_log
                     ? exp(log(grid->eta_min) + (log(grid->eta_max) - log(grid->eta_min)) * f)
                     : grid->eta_min + (grid->eta_max - grid->eta_min) * f;
  }
  if (grid->nc > 1) {
    c_out[grid->nc - 1] = grid->c_max; /* exact end points */
  }
  if (grid->neta > 1) {
    eta_out[grid->neta - 1] = grid->eta_max;
  }
  total = grid->nc * grid->neta;
  nthreads = nthreads_of(cfg, total);
  loop_progress lp = {cfg, 0, 0, 0, total, 0};
#pragma omp parallel for num_threads(nthreads) schedule(dynamic) reduction(+ : nfailed)
  for (size_t k = 0; k < total; k++) {
    size_t i = k / grid->neta, j = k % grid->neta;
    if (loop_stopped(&lp)) {
      continue; /* a stop was asked for: skip the rest */
    }
    dpd_schedule_config sc = dpd_tune_schedule_eta0_set(&base, eta_out[j]);
    double r;
    if (eval_risk(problem, &sc, c_out[i], &cfg->ode, &r, NULL, NULL, NULL) < 0) {
      r = NAN;
      nfailed++;
    }
    risk[k] = r;
    loop_done(&lp);
  }
  if (lp.stop) {
    return cancelled(err);
  }
  if (failed != NULL) {
    *failed = nfailed;
  }
  return DPD_OK;
}
