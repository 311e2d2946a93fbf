/* Private: statistics over the replicates of a stochastic run (stats.c), shared by every
 * simulator. Each is a serial loop in replicate order, so a result never depends on the thread
 * count that produced the replicates.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_STATS_IMPL_H
#define DPD_STATS_IMPL_H

#include <stddef.h>

/* Mean and standard error (sample sd / sqrt(count); 0 for one value) of x[0], x[stride], ...,
 * x[(count - 1) stride], count >= 1, shifted by the first value so that identical replicates
 * (e.g. at t = 0) give their value exactly and an SE of exactly 0. Pure. */
__attribute__((visibility("hidden"))) void
dpd__stats_mean_se(const double *x, size_t count, size_t stride, double *mean, double *se);

/* dpd__stats_mean_se of every column of the row-major table x[count][cols] (one row per
 * replicate): mean[j] and se[j] for j < cols. Pure. */
__attribute__((visibility("hidden"))) void
dpd__stats_columns_mean_se(const double *x, size_t count, size_t cols, double *mean, double *se);

/* 0.0 + x[0] + x[stride] + ... + x[(count - 1) stride], added in that order. Pure. */
__attribute__((visibility("hidden"))) double dpd__stats_sum(const double *x, size_t count,
                                                            size_t stride);

#endif /* DPD_STATS_IMPL_H */
