/* Private: what the nc adapter's commands share (nc_model.c runs, nc_compare.c compares).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NC_IMPL_H
#define DPD_NC_IMPL_H

#include <stddef.h>

#include "dpdyn/model.h"
#include "dpdyn/nc.h"
#include "core/model_impl.h"

/* Why the exact one-step error of notes B.5 is not available for this run (a sentence for the
 * summary's n/a), or NULL when it is: one step, a test law that does not depend on the noise
 * (not adversarial), and features the theory can see (not a per-replicate fill). Pure. */
DPD_HIDDEN_FN const char *dpd__nc_theory_why_not(const dpd_nc_problem *problem,
                                                 const dpd_nc_sim_config *sc);

/* The exact one-step error of each replicate rep < sc->seeds, into e[rep] (caller memory):
 * replicate rep's training class sums as trained (dpd_nc_train_sums: feature clipping and
 * normalize applied) and its own test points as the classifier sees them (dpd_nc_test_point),
 * e[rep] = (1/n_test) sum_j P[err | x_j] (B.5). Exact given the replicate's training data and
 * test points (the same as the simulation's): only the noise is integrated out. A clean test on
 * the ETF law evaluates one point per class (all points of a class are equal). The projection
 * (radius) rescales W_1 by a positive factor, which leaves the argmax alone. When no replicate
 * redraws anything but the noise (no training shift or fixed rows, clean test) one replicate is
 * computed and copied. Replicates run on
 * sc->threads OpenMP threads, each value computed alone: bit-identical for any thread count.
 * Progress through sc->progress. DPD_EINVAL when dpd__nc_theory_why_not is not NULL; DPD_ENOMEM;
 * the quadrature's status. */
DPD_HIDDEN_FN int dpd__nc_theory_replicates(const dpd_nc_problem *problem,
                                            const dpd_nc_sim_config *sc, double *e, dpd_err *err);

/* compare's additions to the summary of a finished simulation `sim` of (problem, sc):
 * theory_test_error (+ _se), gap, gap_in_se, or their n/a with the reason; the papers' D.1
 * bounds on balanced perfect collapse; Thm 3.4's bound for binary projected NoisyGD, or its n/a
 * with the reason. */
DPD_HIDDEN_FN int dpd__nc_compare(dpd_output *out, const dpd_nc_problem *problem,
                                  const dpd_nc_sim_config *sc, const dpd_nc_sim_result *sim,
                                  dpd_err *err);

#endif
