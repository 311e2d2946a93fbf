/* The ODE solved with its a-posteriori error estimates (docs/ode.md), on a spectral problem
 * refined until the compression error meets its target (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_ODE_ESTIMATE_IMPL_H
#define DPD_ODE_ESTIMATE_IMPL_H

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* Largest system whose error is estimated by a second solve at rtol/10. */
#define DPD_ODE_ESTIMATE_MAX_GROUPS 20000

/* The bands' moments behind spectral problems of any number of Gauss nodes per band, built
 * from the full problem when there is one, else straight from the configuration (zero-
 * initialise; free with dpd__linreg_spectral_free). */
typedef struct {
  const dpd_linreg_problem_config *pc; /* borrowed */
  const dpd_linreg_problem *full;      /* borrowed; NULL: from pc */
  dpd_linreg_compress_config cc;       /* nodes per band in use, bands per decade */
  int threads;
  dpd_linreg_spectrum *spectrum; /* owned */
  int spectrum_nodes;            /* the nodes per band it holds moments for */
} dpd__linreg_spectral;

/* The spectral problem with `nodes` per band (*out: returned-owned). */
DPD_HIDDEN_FN int dpd__linreg_spectral_problem(dpd__linreg_spectral *s, int nodes,
                                               dpd_linreg_problem **out, dpd_err *err);
DPD_HIDDEN_FN void dpd__linreg_spectral_free(dpd__linreg_spectral *s);

typedef struct {
  double compress_est;     /* NAN: not compressed */
  double ode_est;          /* NAN: not estimated (why in ode_est_why) */
  const char *ode_est_why; /* static text */
} dpd__linreg_ode_estimates;

/* Solves the ODE on *problem with the estimates: a compressed problem is solved again with 2
 * more nodes per band until the largest relative change of R (and of the release) is at most
 * compress_tol or 32 nodes are reached; the finer solve is the result (*problem then becomes
 * the finer problem: the previous one is freed unless it is s->full), the last change the
 * compression estimate. The ODE's own error: the result against a solve at rtol/10, atol/10
 * (systems of at most DPD_ODE_ESTIMATE_MAX_GROUPS groups). *res: returned-owned. */
DPD_HIDDEN_FN int dpd__linreg_ode_solve_estimated(dpd__linreg_spectral *s,
                                                  dpd_linreg_problem **problem,
                                                  const dpd_schedule *schedule,
                                                  const dpd_ode_config *oc, double compress_tol,
                                                  dpd_ode_result **res,
                                                  dpd__linreg_ode_estimates *est, dpd_err *err);

/* The names of the ODE methods whose flags include all of `with` and none of `without` (0, 0:
 * all), ", "-separated. */
DPD_HIDDEN_FN void dpd__linreg_method_names(unsigned with, unsigned without, char *buf,
                                            size_t size);

/* The requirements of the ODE method `type` (its capability flags), in messages that name the
 * user's keys: with tune = 1, a thread-safe method that gives the bounds (tune solves from
 * several threads at varying c and schedules); else a constant schedule (`schedule`: the
 * key's value) or no clipping (c = inf) where the method needs them. DPD_EINVAL. */
DPD_HIDDEN_FN int dpd__linreg_method_check(const dpd_ode_method_type *type, int tune,
                                           const dpd_schedule *s, const char *schedule, double c,
                                           dpd_err *err);

#endif
