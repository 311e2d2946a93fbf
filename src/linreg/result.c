/* Result object and replicate statistics of the stochastic drivers.
 * SPDX-License-Identifier: MIT */
#include <math.h>
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
  if (res->t == NULL || res->risk_mean == NULL || res->risk_se == NULL ||
      res->clip_fraction == NULL || res->risk_replicates == NULL) {
    dpd_linreg_sim_result_free(res);
    return NULL;
  }
  return res;
}

void dpd__mean_se(const double *x, size_t count, size_t stride, double *mean, double *se) {
  double shift = x[0], sum = 0.0, ss = 0.0, m;
  for (size_t r = 0; r < count; r++) {
    sum += x[r * stride] - shift;
  }
  m = shift + sum / (double)count;
  for (size_t r = 0; r < count; r++) {
    double dev = x[r * stride] - m;
    ss += dev * dev;
  }
  *mean = m;
  *se = count > 1 ? sqrt(ss / (double)(count - 1) / (double)count) : 0.0;
}
