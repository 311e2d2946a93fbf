/* Result object of the linear-regression stochastic drivers (simulate, sde): creation, the
 * release statistics, and dpd_linreg_sim_result_free (linreg.h), which both drivers use.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>

#include "core/error_impl.h"
#include "core/noise_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/schedule.h"
#include "linreg/result_impl.h"

void dpd_linreg_sim_result_free(dpd_linreg_sim_result *r) {
  if (r == NULL) {
    return;
  }
  free(r->t);
  free(r->risk_mean);
  free(r->risk_se);
  free(r->clip_fraction);
  free(r->risk_replicates);
  free(r->clip_replicates);
  free(r->clip_total_replicates);
  free(r->before_release_replicates);
  free(r->final_replicates);
  free(r);
}

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
  res->final_replicates = malloc(seeds * sizeof *res->final_replicates);
  if (res->t == NULL || res->risk_mean == NULL || res->risk_se == NULL ||
      res->clip_fraction == NULL || res->risk_replicates == NULL || res->clip_replicates == NULL ||
      res->clip_total_replicates == NULL || res->before_release_replicates == NULL ||
      res->final_replicates == NULL) {
    dpd_linreg_sim_result_free(res);
    return NULL;
  }
  return res;
}

void dpd__sim_result_release_set(dpd_linreg_sim_result *res, dpd_linreg_setting setting) {
  const size_t grid = res->grid, seeds = res->seeds;
  const double *last = res->risk_replicates + grid - 1; /* stride grid */
  double shift, sum = 0.0, ss = 0.0, mean;
  res->before_release = res->risk_mean[grid - 1];
  res->before_release_se = res->risk_se[grid - 1];
  dpd__stats_mean_se(res->final_replicates, seeds, 1, &res->final_risk, &res->final_risk_se);
  res->release_jump = res->final_risk - res->before_release;
  /* The standard error of the paired jumps J_r = final_r - before_r (dpd__stats_mean_se's
   * shifted two-pass rule, without an array of the J_r); their mean is release_jump up to
   * rounding. */
  shift = res->final_replicates[0] - last[0];
  for (size_t r = 0; r < seeds; r++) {
    sum += (res->final_replicates[r] - last[r * grid]) - shift;
  }
  mean = shift + sum / (double)seeds;
  for (size_t r = 0; r < seeds; r++) {
    const double dev = (res->final_replicates[r] - last[r * grid]) - mean;
    ss += dev * dev;
  }
  res->release_jump_se = seeds > 1 ? sqrt(ss / (double)(seeds - 1) / (double)seeds) : 0.0;
  res->setting = setting;
}

void dpd__sim_result_grid(dpd_linreg_sim_result *res, size_t n, size_t *kgrid) {
  const size_t grid = res->grid;
  for (size_t j = 0; j < grid; j++) {
    res->t[j] = (double)j / (double)(grid - 1);
    kgrid[j] = (size_t)floor((double)j * (double)n / (double)(grid - 1) + 0.5);
  }
  kgrid[grid - 1] = n;
}

void dpd__sim_result_reduce(dpd_linreg_sim_result *res, const size_t *kgrid, size_t n) {
  const size_t seeds = res->seeds, grid = res->grid;
  double *clip_rows = res->clip_replicates, clipped_total = 0.0;
  dpd__stats_columns_mean_se(res->risk_replicates, seeds, grid, res->risk_mean, res->risk_se);
  for (size_t j = 0; j < grid; j++) {
    const double clipped = dpd__stats_sum(clip_rows + j, seeds, grid);
    clipped_total += clipped;
    size_t steps = j > 0 ? kgrid[j] - kgrid[j - 1] : 0;
    res->clip_fraction[j] = steps > 0 ? clipped / ((double)steps * (double)seeds) : 0.0;
  }
  res->clip_fraction_total = clipped_total / ((double)n * (double)seeds);
  for (size_t r = 0; r < seeds; r++) {
    /* each replicate's own fractions, from its counts (already reduced above) */
    double *row = clip_rows + r * grid, total = 0.0;
    for (size_t j = 0; j < grid; j++) {
      size_t steps = j > 0 ? kgrid[j] - kgrid[j - 1] : 0;
      total += row[j];
      row[j] = steps > 0 ? row[j] / (double)steps : 0.0;
    }
    res->clip_total_replicates[r] = total / (double)n;
  }
}

int dpd__linreg_sim_config_check(const dpd_linreg_sim_config *cfg, const dpd_schedule *schedule,
                                 dpd_err *err) {
  int status;
  if (cfg->seeds < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: seeds = %zu, must be >= 1", cfg->seeds);
  }
  if (cfg->grid < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: grid = %zu, must be >= 2", cfg->grid);
  }
  if (!(cfg->zeta >= 0.0) || !isfinite(cfg->zeta)) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: zeta = %g, must be finite and >= 0", cfg->zeta);
  }
  if ((status = dpd__noise_law_check(cfg->noise, cfg->noise_nu, "simulate: ", "noise_nu", NULL,
                                     err)) < 0) {
    return status;
  }
  if (!(cfg->c > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: c = %g, must be > 0 (inf: no clipping)", cfg->c);
  }
  if (!(cfg->rho > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: rho = %g, must be > 0 (inf: no privacy)", cfg->rho);
  }
  if (isfinite(cfg->rho) && !isfinite(cfg->c)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "simulate: rho = %g is finite but c = inf; privacy needs a finite clipping "
                    "scale (the sensitivity is C = c sqrt(d))",
                    cfg->rho);
  }
  if (isfinite(cfg->rho) && !dpd_schedule_is_nonincreasing(schedule)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "simulate: schedule '%s' is increasing somewhere; the privacy calibration "
                    "rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 needs a non-increasing schedule",
                    dpd_schedule_name(schedule));
  }
  return DPD_OK;
}
