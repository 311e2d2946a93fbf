/* Private: the result object shared by the stochastic drivers (simulate, sde) and the checks of a
 * simulation configuration; the replicate statistics are in core/stats_impl.h.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RESULT_IMPL_H
#define DPD_RESULT_IMPL_H

#include <stddef.h>

#include "dpdyn/linreg.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

/* A result with every array allocated for `grid` points and `seeds`
 * replicates (contents unset); NULL when out of memory. */
__attribute__((visibility("hidden"))) dpd_linreg_sim_result *dpd__sim_result_create(size_t grid,
                                                                                    size_t seeds);

/* Completes a result whose risk_replicates, risk_mean, risk_se (before release) and
 * final_replicates are set: before_release (the last grid column, so that
 * risk_mean[grid-1] == before_release), final_risk, release_jump (final_risk -
 * before_release) with the standard error of the paired per-replicate jumps, and the setting
 * it was computed with. */
__attribute__((visibility("hidden"))) void dpd__sim_result_release_set(dpd_linreg_sim_result *res,
                                                                       dpd_linreg_setting setting);

/* The recorded steps of a simulation of n steps: res->t[j] = j/(grid - 1) and kgrid[j] =
 * round(t_j n) (exact in doubles while j n < 2^53), kgrid[grid - 1] = n. */
__attribute__((visibility("hidden"))) void dpd__sim_result_grid(dpd_linreg_sim_result *res,
                                                                size_t n, size_t *kgrid);

/* The reductions every simulator shares, serial in replicate order (identical for any thread
 * count): risk_mean and risk_se from risk_replicates, and from clip_rows (res->clip_replicates:
 * replicate r's clipped-step counts per grid interval, turned here into fractions) the
 * clip_fraction of each interval, clip_fraction_total and clip_total_replicates. kgrid: the grid's
 * steps (kgrid[grid - 1] = n). */
__attribute__((visibility("hidden"))) void dpd__sim_result_reduce(dpd_linreg_sim_result *res,
                                                                  const size_t *kgrid, size_t n);

/* The checks of a simulation configuration shared by the Gaussian and the dataset simulators
 * (sim.c, data_sim.c): seeds, grid, zeta, the noise law, c, rho, a finite c with finite rho and a
 * non-increasing schedule with finite rho; messages start with "simulate: ". */
__attribute__((visibility("hidden"))) int
dpd__linreg_sim_config_check(const dpd_linreg_sim_config *cfg, const dpd_schedule *schedule,
                             dpd_err *err);

#endif
