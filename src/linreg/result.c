/* Result object of the linear-regression stochastic drivers (simulate, sde).
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "core/stats_impl.h"
#include "linreg/result_impl.h"

dpd_linreg_sim_result *dpd__sim_result_create(size_t grid, size_t seeds) {
  dpd_linreg_sim_result *res = calloc(1, sizeof *res);
  if (res == NULL) {
    return NULL;
  }
  res->grid = grid;
  res->seeds = seeds;
  res->t = malloc(grid * sizeof *res->t);
  res->risk_mean = malloc(grid * sizeof *res->risk_mean);
  res->risk_se = malloc(grid * sizeof *res->risk_se);
  res->clip_fraction = malloc(grid * sizeof *res->clip_fraction);
  res->risk_replicates = malloc(seeds * grid * sizeof *res->risk_replicates);
  res->final_replicates = malloc(seeds * sizeof *res->final_replicates);
  if (res->t == NULL || res->risk_mean == NULL || res->risk_se == NULL ||
      res->clip_fraction == NULL || res->risk_replicates == NULL || res->final_replicates == NULL) {
    dpd_linreg_sim_result_free(res);
    return NULL;
  }
  return res;
}

void dpd__sim_result_release_set(dpd_linreg_sim_result *res, dpd_linreg_setting setting,
                                 double *scratch) {
  const size_t grid = res->grid, seeds = res->seeds;
  double jump_mean;
  res->before_release = res->risk_mean[grid - 1];
  res->before_release_se = res->risk_se[grid - 1];
  dpd__stats_mean_se(res->final_replicates, seeds, 1, &res->final_risk, &res->final_risk_se);
  res->release_jump = res->final_risk - res->before_release;
  for (size_t r = 0; r < seeds; r++) {
    scratch[r] = res->final_replicates[r] - res->risk_replicates[r * grid + grid - 1];
  }
  /* The mean of the paired jumps equals release_jump up to rounding; only its SE is kept. */
  dpd__stats_mean_se(scratch, seeds, 1, &jump_mean, &res->release_jump_se);
  res->setting = setting;
}
