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

#endif
