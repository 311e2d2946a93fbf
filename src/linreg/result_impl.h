/* Private helpers shared by the stochastic drivers (simulate, sde): the result
 * object and the replicate statistics.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RESULT_IMPL_H
#define DPD_RESULT_IMPL_H

#include <stddef.h>

#include "dpdyn/linreg.h"

/* A result with every array allocated for `grid` points and `seeds`
 * replicates (contents unset); NULL when out of memory. */
__attribute__((visibility("hidden"))) dpd_linreg_sim_result *
dpd__sim_result_create(size_t grid, size_t seeds);

/* Mean and standard error (sample sd / sqrt(count); 0 for one value) of
 * x[0], x[stride], ..., shifted by the first value so that identical
 * replicates (e.g. at t = 0) give their value exactly and an SE of exactly 0. */
__attribute__((visibility("hidden"))) void dpd__mean_se(const double *x, size_t count,
                                                         size_t stride, double *mean,
                                                         double *se);

#endif
