/* The risk surface around a tuned optimum (tune_surface_impl.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "linreg/tune_surface_impl.h"

int dpd__tune_surface(const dpd_linreg_problem *problem, const dpd_tune_config *tc,
                      const dpd_tune_result *res, size_t n, double c_min, double c_max,
                      int eta_log, double *c, double *eta, double *risk,
                      dpd__tune_surface_stats *st, dpd_err *err) {
  dpd_tune_grid grid;
  double eta_max;
  int status;
  memset(st, 0, sizeof *st);
  st->best = INFINITY;
  if ((status = dpd_tune_eta0_max_get(&res->schedule, tc, &eta_max, err)) < 0) {
    return status;
  }
  grid.nc = n;
  grid.neta = n;
  grid.c_min = c_min;
  grid.c_max = c_max;
  grid.eta_max = eta_max;
  if (eta_log) {
    /* so that every grid point is a point the tuner could have chosen */
    grid.eta_min =
        fmin(eta_max * DPD_TUNE_HEATMAP_ETA_DECADES, res->eta0 * DPD_TUNE_HEATMAP_ETA_BELOW_OPT);
    grid.eta_min = fmax(grid.eta_min, eta_max * tc->eta_min_fraction);
  } else {
    grid.eta_min = eta_max / (double)n;
  }
  grid.eta_log = eta_log;
  if ((status = dpd_tune_surface_eval(problem, &res->schedule, tc, &grid, c, eta, risk, &st->failed,
                                      err)) < 0) {
    return status;
  }
  st->points = n * n;
  for (size_t k = 0; k < n * n; k++) {
    if (risk[k] < st->best) {
      st->best = risk[k];
      st->best_c = c[k / n];
      st->best_eta = eta[k % n];
    }
    st->beating += risk[k] < res->risk;
  }
  return DPD_OK;
}
