/* The risk surface around a tuned optimum (tune_surface_impl.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"

#include "linreg/tune_surface_impl.h"

int dpd__tune_surface(const dpd_linreg_problem *problem, const dpd_tune_config *tc,
                      const dpd_tune_result *res, size_t n, double c_min, double c_max, int eta_log,
                      double *c, double *eta, double *risk, dpd__tune_surface_stats *st,
                      dpd_err *err) {
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

/* heatmap.tsv: the surface, one scanline per c (eta~(0) varying). */
int dpd__tune_surface_table(dpd_output *out, const dpd_linreg_problem *problem,
                            const dpd_tune_config *tc, const dpd_tune_result *res,
                            const dpd__tune_options *t, dpd__tune_surface_stats *st, dpd_err *err) {
  const size_t n = t->heatmap;
  double *c = malloc(n * sizeof *c), *eta = malloc(n * sizeof *eta);
  double *cc = NULL, *ee = NULL, *risk = NULL;
  dpd_table_builder *b = NULL;
  int status = c == NULL || eta == NULL ? DPD_FAIL(err, DPD_ENOMEM, "out of memory") : DPD_OK;
  if (status == DPD_OK && (status = dpd_table_builder_create(n * n, &b, err)) == DPD_OK &&
      ((cc = dpd_table_builder_column(b, "c", err)) == NULL ||
       (ee = dpd_table_builder_column(b, "eta0", err)) == NULL ||
       (risk = dpd_table_builder_column(b, "excess_risk", err)) == NULL)) {
    status = DPD_ENOMEM;
  }
  if (status == DPD_OK &&
      (status = dpd__tune_surface(problem, tc, res, n, t->c_min, t->c_max, t->eta_log, c, eta, risk,
                                  st, err)) == DPD_OK) {
    for (size_t k = 0; k < n * n; k++) {
      cc[k] = c[k / n];
      ee[k] = eta[k % n];
    }
    status = dpd_output_table_add_built(out, "heatmap.tsv", "tune", b, err);
    b = NULL;
  }
  if (status == DPD_OK) {
    out->tables[out->ntables - 1].block = n;
    status = dpd__output_table_comment_set(
        out,
        "eta0 is eta~(0); the other schedule parameters are at the optimum. R_out of the ODE; "
        "nan = ODE failure",
        err);
  }
  dpd_table_builder_free(b);
  free(c);
  free(eta);
  return status;
}
