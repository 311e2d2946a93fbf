/* Private: the result object shared by the stochastic drivers (simulate, sde); the replicate
 * statistics are in core/stats_impl.h.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RESULT_IMPL_H
#define DPD_RESULT_IMPL_H

#include <stddef.h>

#include "dpdyn/linreg.h"

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

#endif
