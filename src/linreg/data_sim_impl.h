/* Private: what the simulation on a dataset's rows (data_sim.c) offers beyond data_impl.h's
 * dpd__lrdata_sim_run, for tests.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_LINREG_DATA_SIM_IMPL_H
#define DPD_LINREG_DATA_SIM_IMPL_H

#include <stddef.h>

#include "linreg/data_impl.h"

/* dpd__lrdata_sim_run for replicate `rep` alone (stream (cfg->seed, rep); cfg->seeds is
 * ignored): *out (returned-owned, one replicate) and test_risk[0] as dpd__lrdata_sim_run gives
 * them for that replicate, and its released iterate theta_n, in the original coordinates, into
 * theta[0 .. d). Same statuses. For tests that follow one replicate exactly. */
DPD_HIDDEN_FN int dpd__lrdata_sim_theta(const dpd__lrdata *D, const double *theta_star,
                                        const dpd_schedule *schedule,
                                        const dpd_linreg_sim_config *cfg, size_t rep, double *theta,
                                        dpd_linreg_sim_result **out, double *test_risk,
                                        dpd_err *err);

#endif
