/* Tuning: minimise the released excess risk of the deterministic equivalent over the clipping
 * scale and the schedule parameters (docs/math.md §1.7, §1.8).
 * SPDX-License-Identifier: MIT
 *
 * Objective: R_out(c, schedule) = R(1-) + 2 c^2 gamma^2 eta~(1)^2 / rho^2, the released excess
 * risk of the coupled risk ODEs (dpd_ode_solve), at fixed gamma, rho, zeta, noise law and
 * spectrum, subject to the stability limit sup eta~ < 2/gamma (docs/math.md §1.3).
 *
 * Every tuned parameter x lives in a box [lo, hi] on a log scale and is written through an
 * unconstrained variable u (Nelder-Mead) or a box coordinate s in [0, 1] (Brent):
 *   log x = log lo + (log hi - log lo) s,   s = 1 / (1 + e^{-u}).
 * The boxes are: c in [c_min, c_max]; eta~(0) in [eta_min_fraction L, L] with
 * L = safety (2/gamma) / (sup eta~ / eta~(0)), so that sup eta~ <= safety 2/gamma holds by
 * construction (the transform enforces the stability limit with a safety factor); a, c2, c3 and
 * the offset scale m in [shape_min, shape_max]. For the optimal family,
 * eta~(t) = c1 / (t + gamma m), m = max(c2, c3/rho), the tuned amplitude is eta~(0) = c1/(gamma m)
 * (c1 = eta~(0) gamma m), which turns the sup constraint c1 < 2 m into a box.
 *
 * Non-identifiability (optimal family): at fixed (gamma, rho) the schedule depends on c2 and c3
 * only through m = max(c2, c3/rho). With rho = inf, c3 has no effect and is not tuned
 * (result.ignored). When both c2 and c3 are tuned at finite rho, the tuner searches m and
 * reports the representative c2 = m, c3 = rho m; every (c2, c3) with the same m is equally
 * optimal. The constants are "independent of gamma and rho" (docs/math.md §1.8) only as a claim
 * about rates; at a single (gamma, rho) only (c1, m) can be identified.
 *
 * Search (all documented, every constant a config field):
 *  1. Pre-scan: the objective on a tensor grid of `prescan` points per tuned variable at the box
 *     coordinates s_k = (k + 1/2)/prescan (uniform in log x), evaluated in parallel.
 *  2. Starts: the `starts` lowest pre-scan points that are grid-local minima (lower than their
 *     2 nvars axis neighbours), topped up with the next-lowest points if there are fewer.
 *  3. Local search from every start: one variable: GSL Brent (gsl_min_fminimizer_brent) in s on
 *     the bracket formed by the start's grid neighbours (a box edge when the start is the first
 *     or last grid point; if the edge is lower, the edge is the optimum); several variables: GSL
 *     Nelder-Mead (gsl_multimin_fminimizer_nmsimplex2) in u, initial step `simplex_step`, until
 *     the simplex size is below `xtol` or `max_iter` iterations, then restarted at its best point
 *     up to `restarts` times while a restart still lowers the risk by more than `ftol` R.
 *  4. The best local optimum wins.
 * ODE failures (DPD_ESOLVER, DPD_ENONFINITE) and non-finite risks are rejected: the objective
 * returns `fail_value`, larger than any risk (GSL's simplex refuses non-finite values), and
 * result.failed_evals counts them.
 *
 * Accuracy: the objective carries the ODE's global error (typically 5-50 rtol, ode.h), so the
 * optimum's location is resolved to about sqrt(ODE error / curvature); tighten ode.rtol for an
 * accurately located optimum. */
#ifndef DPD_TUNE_H
#define DPD_TUNE_H

#include <stddef.h>

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/replicate.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tunable parameters (bit flags, combined with |). */
typedef enum {
  DPD_TUNE_C = 1,    /* clipping scale c */
  DPD_TUNE_ETA0 = 2, /* eta0 of const, sqrt, hyperbolic, step, cosine (and registered families
                        that list it) */
  DPD_TUNE_A = 4,    /* hyperbolic decay rate a (tuned in [shape_min, shape_max], so a > 0) */
  DPD_TUNE_C1 = 8,   /* optimal: c1 */
  DPD_TUNE_C2 = 16,  /* optimal: c2 */
  DPD_TUNE_C3 = 32   /* optimal: c3 (no effect when rho = inf) */
} dpd_tune_param;

typedef struct {
  int params;                  /* OR of dpd_tune_param. 0 (sentinel: tuning nothing is meaningless)
                                  = the family's default: C|ETA0 for const, sqrt, hyperbolic,
                                  step, cosine (their other parameters stay as given);
                                  C|C1|C2|C3 for optimal (default 0) */
  double c_min, c_max;         /* box of c, 0 < c_min < c_max < inf (defaults 1e-2, 1e2) */
  double safety;               /* sup eta~ <= safety 2/gamma, 0 < safety < 1 (default 0.99) */
  double eta_min_fraction;     /* eta~(0) >= eta_min_fraction L, 0 < . < 1 (default 1e-6) */
  double shape_min, shape_max; /* box of a, c2, c3, m, 0 < min < max < inf (1e-3, 1e6) */
  size_t prescan;              /* pre-scan points per tuned variable, >= 3 (default 9) */
  size_t starts;               /* local searches, >= 1 (default 3) */
  double simplex_step;         /* initial Nelder-Mead step in u, > 0 (default 0.5) */
  double xtol;                 /* Nelder-Mead: simplex size in u; Brent: bracket width in s; > 0
                                  (default 1e-8) */
  double ftol;                 /* relative improvement that justifies another restart, >= 0
                                  (default 1e-10) */
  size_t max_iter;    /* iterations per local search (and per restart), >= 1 (default 2000) */
  size_t restarts;    /* Nelder-Mead restarts at the best point (default 3) */
  double fail_value;  /* objective value of a failed ODE solve, > any risk (1e300) */
  double bound_tol;   /* an optimum with s < bound_tol or s > 1 - bound_tol is reported
                         in result.at_bound, 0 <= . < 0.5 (default 1e-4) */
  int threads;        /* OpenMP threads of the pre-scan and the surface (<= 0: all);
                         results do not depend on it (default 0) */
  dpd_ode_config ode; /* the fixed problem: gamma, zeta, noise, c (used when c is not
                         tuned), rho (dpd_ode_config_init sets them from a dpd_linreg_setting,
                         the one a confirming simulation runs), tolerances and method. grid and bounds are ignored
                         (the objective needs R_out only). Default: dpd_ode_config_default() */
  dpd_progress_fn progress; /* ODE solves done of at most `total` (replicate.h's contract; for
                               dpd_tune_run the total is the search's budget, reached only by
                               the last call); non-zero stops the run with DPD_ECANCELLED.
                               NULL: none (default) */
  void *progress_user;
} dpd_tune_config;

typedef struct {
  dpd_schedule_config schedule; /* the tuned schedule (family, parameters; gamma and rho set) */
  double c;                     /* tuned (or the fixed) clipping scale */
  double risk;                  /* R_out at the optimum */
  double before_release;        /* R(1-) */
  double release_jump;          /* 2 c^2 gamma^2 eta~(1)^2 / rho^2 */
  double eta0;                  /* eta~(0) at the optimum */
  double eta_sup;               /* sup eta~ at the optimum */
  double eta_limit;             /* the stability limit 2/gamma */
  double offset_scale;          /* optimal family: m = max(c2, c3/rho); else 0 */
  int params;                   /* parameters tuned (after defaults and ignored ones) */
  int ignored;                  /* parameters requested but without effect (c3 when rho = inf) */
  int at_bound;                 /* tuned parameters whose optimum lies within bound_tol of a box
                                   edge (DPD_TUNE_ETA0 / C1 at the top edge: the stability limit) */
  size_t nvars;                 /* number of search variables */
  size_t evals;                 /* objective evaluations (ODE solves) */
  size_t failed_evals;          /* of which rejected (ODE failure or non-finite risk) */
  size_t iterations;            /* Brent / Nelder-Mead iterations over all local searches */
  size_t starts;                /* local searches run */
  int converged;                /* 1 if the winning local search met xtol */
  double start_spread;          /* (worst - best)/best over the local searches' optima */
  double prescan_best;          /* lowest pre-scan value */
} dpd_tune_result;

/* Grid of the (c, eta~(0)) risk surface: c log-spaced on [c_min, c_max] (nc points; nc = 1
 * uses c_min), eta~(0) on [eta_min, eta_max] (neta points), log-spaced if eta_log, else linear.
 * The other schedule parameters are those of the schedule config passed with the grid. */
typedef struct {
  size_t nc, neta;         /* >= 1 each */
  double c_min, c_max;     /* 0 < c_min <= c_max < inf */
  double eta_min, eta_max; /* 0 < eta_min <= eta_max */
  int eta_log;             /* 1: log spacing, 0: linear */
} dpd_tune_grid;

/* Default configuration (values listed next to each field). */
DPD_API dpd_tune_config dpd_tune_config_default(void);

/* The default parameter set of a schedule family (see dpd_tune_config.params), from its
 * tune_default in the family table (schedule.h); 0 for families the tuner does not support
 * (file tables, families without tunables). */
DPD_API int dpd_tune_params_get(dpd_schedule_kind kind);

/* The tunable parameters of the family of a `schedule` value (a name of the family table,
 * registered families included): *kind its kind, *params the dpd_tune_param flags of its
 * tunables (schedule.h: "c eta0 a" -> C|ETA0|A), *defaults the set tuned when none is asked
 * (dpd_tune_params_get), and allowed[cap] its tunables ", "-separated ("c, eta0, a") for
 * messages. Any output may be NULL. Returns DPD_OK; DPD_EINVAL "invalid value for 'schedule':
 * 'NAME' (allowed with tune: const, sqrt, hyperbolic, optimal, step, cosine)" (the families
 * with tunables, from the table) for an unknown family or one without tunables (file), or
 * naming 'tunables' when a family lists a name that is not a dpd_tune_param. This is what a
 * model's `tune` command asks of a family. Thread-safe. */
DPD_API int dpd_tune_family_params_get(const char *schedule, dpd_schedule_kind *kind, int *params,
                                       int *defaults, char *allowed, size_t cap, dpd_err *err);

/* R_out at the given clipping scale `c` and schedule `schedule` (a complete config; for the
 * optimal family its gamma and rho must equal cfg->ode's). Validates like dpd_tune_run,
 * including the stability limit sup eta~ < 2/gamma (exactly, without the safety factor) and a
 * non-increasing schedule when rho is finite, then solves the ODE. `problem`, `schedule`, `cfg`
 * are borrowed. Returns DPD_OK, DPD_EINVAL (reason names the parameter), or the ODE's status
 * (DPD_ESOLVER, DPD_ENONFINITE, DPD_ENOMEM). Thread-safe. */
DPD_API int dpd_tune_risk_eval(const dpd_linreg_problem *problem,
                               const dpd_schedule_config *schedule, double c,
                               const dpd_tune_config *cfg, double *risk, dpd_err *err);

/* Largest eta~(0) whose schedule respects sup eta~ <= safety 2/gamma, the other parameters as in
 * `schedule` (for the optimal family eta~(0) = c1/(gamma m) is varied through c1). Returns
 * DPD_EINVAL for an unsupported family or a bad cfg. */
DPD_API int dpd_tune_eta0_max_get(const dpd_schedule_config *schedule, const dpd_tune_config *cfg,
                                  double *eta0_max, dpd_err *err);

/* The same schedule with eta~(0) set to `eta0` (optimal family: c1 = eta0 gamma m, with the
 * config's own gamma and rho). Pure. */
DPD_API dpd_schedule_config dpd_tune_schedule_eta0_set(const dpd_schedule_config *schedule,
                                                       double eta0);

/* Minimises R_out over cfg->params starting from `family` (kind, and the values of the
 * parameters that are not tuned; the initial values of tuned ones are ignored: the pre-scan
 * picks the starts) and fills *out (caller-owned). `problem`, `family`, `cfg` are borrowed.
 * Returns DPD_OK; DPD_EINVAL for a bad config (reason names the field, value and allowed range:
 * unsupported family, a parameter that does not belong to the family, c = inf with finite rho,
 * a fixed schedule that is unstable or increasing with finite rho); DPD_ENONFINITE when every
 * pre-scan point failed; DPD_ENOMEM. Reaching max_iter is not an error (result.converged = 0).
 * Thread-safe (OpenMP inside, no shared state). */
DPD_API int dpd_tune_run(const dpd_linreg_problem *problem, const dpd_schedule_config *family,
                         const dpd_tune_config *cfg, dpd_tune_result *out, dpd_err *err);

/* Evaluates R_out on `grid`: c_out[nc], eta_out[neta] receive the axes and risk[i neta + j] the
 * risk at (c_out[i], eta_out[j]) (row-major, c outer), NAN where the ODE failed or the point
 * violates the stability limit (sup eta~ >= 2/gamma). `schedule` supplies the family and the
 * other parameters; cfg->ode the fixed problem. Arrays are caller-owned; *failed (optional)
 * counts NAN points. Returns DPD_OK, DPD_EINVAL (bad grid or config). Parallel over points with
 * cfg->threads; the result does not depend on the thread count. */
DPD_API int dpd_tune_surface_eval(const dpd_linreg_problem *problem,
                                  const dpd_schedule_config *schedule, const dpd_tune_config *cfg,
                                  const dpd_tune_grid *grid, double *c_out, double *eta_out,
                                  double *risk, size_t *failed, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_TUNE_H */
