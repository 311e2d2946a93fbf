/* Result object of the linear-regression stochastic drivers (simulate, sde).
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>

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
  res->clip_replicates = malloc(seeds * grid * sizeof *res->clip_replicates);
  res->clip_total_replicates = malloc(seeds * sizeof *res->clip_total_replicates);
  res->before_release_replicates = malloc(seeds * sizeof *res->before_release_replicates);
  if (res->t == NULL || res->risk_mean == NULL || res->risk_se == NULL ||
      res->clip_fraction == NULL || res->risk_replicates == NULL || res->clip_replicates == NULL ||
      res->clip_total_replicates == NULL || res->before_release_replicates == NULL) {
    dpd_linreg_sim_result_free(res);
    return NULL;
  }
  return res;
}
