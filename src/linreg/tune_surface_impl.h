/* The (c, eta~(0)) risk surface around a tuned optimum, and how it checks the search
 * (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_TUNE_SURFACE_IMPL_H
#define DPD_TUNE_SURFACE_IMPL_H

#include <stddef.h>

#include "dpdyn/tune.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* Lower end of a log eta~(0) axis: eta_max * 1e-2, or the optimum / 10 if lower. */
#define DPD_TUNE_HEATMAP_ETA_DECADES 1e-2
#define DPD_TUNE_HEATMAP_ETA_BELOW_OPT 0.1

typedef struct {
  size_t points, failed, beating; /* grid points, of which failed, of which below the optimum */
  double best, best_c, best_eta;  /* the lowest risk on the grid and where */
} dpd__tune_surface_stats;

/* Evaluates R_out on an n x n grid of (c, eta~(0)), the other schedule parameters at the
 * optimum `res`: c log-spaced on [c_min, c_max]; eta~(0) up to the stability limit (with the
 * tuner's safety factor), log-spaced from two decades below it (or one below the optimum if
 * lower, never below the tuner's own box) when eta_log, else linearly from eta_max / n.
 * c[n], eta[n], risk[n * n] (c outer): caller-owned; st: the grid points below the optimum
 * (there should be none: a check of the search) and the lowest one. */
DPD_HIDDEN_FN int dpd__tune_surface(const dpd_linreg_problem *problem, const dpd_tune_config *tc,
                                    const dpd_tune_result *res, size_t n, double c_min,
                                    double c_max, int eta_log, double *c, double *eta,
                                    double *risk, dpd__tune_surface_stats *st, dpd_err *err);

#endif
