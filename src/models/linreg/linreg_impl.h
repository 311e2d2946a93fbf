/* Pieces shared by the linreg commands (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_LINREG_IMPL_H
#define DPD_LINREG_IMPL_H

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/privacy.h"
#include "dpdyn/schedule.h"
#include "dpdyn/tune.h"
#include "core/model_impl.h"

/* Largest dimension (d, sum of multiplicities) a run accepts. */
#define LINREG_MAX_DIM ((size_t)1 << 31)

/* Everything a linreg command needs, validated from the keys (opaque). */
typedef struct linreg_run linreg_run;

/* Validates every linreg key for the keys' command (the values in effect recorded in `keys`,
 * the keys not in effect dropped) and, with build = 1, builds the problem and the schedule.
 * *out: returned-owned (dpd__linreg_free). */
DPD_HIDDEN_FN int dpd__linreg_setup(dpd_keys *keys, const dpd_run_env *env, int build,
                                    linreg_run **out, dpd_err *err);
DPD_HIDDEN_FN void dpd__linreg_free(linreg_run *r);
/* The build step of a set-up made with build = 0 (keys in effect recorded, problem built). */
DPD_HIDDEN_FN int dpd__linreg_build(dpd_keys *keys, linreg_run *r, dpd_err *err);
DPD_HIDDEN_FN const dpd_linreg_problem *dpd__linreg_problem(const linreg_run *r);
/* The problem the ODE solves: spectral (compressed) or the full problem. */
DPD_HIDDEN_FN const dpd_linreg_problem *dpd__linreg_ode_problem(const linreg_run *r);
DPD_HIDDEN_FN const dpd_schedule_config *dpd__linreg_schedule_config(const linreg_run *r);
DPD_HIDDEN_FN int dpd__linreg_plot(const linreg_run *r);
/* ODE and simulation configurations of the keys in effect (bounds off). */
DPD_HIDDEN_FN dpd_ode_config dpd__linreg_ode_config(const linreg_run *r);
DPD_HIDDEN_FN dpd_linreg_sim_config dpd__linreg_sim_config(const linreg_run *r);
/* The finite-size diagnostics of the ODE problem in the summary, and the warning when the
 * correction is off where it matters (docs/finite_size.md). */
DPD_HIDDEN_FN int dpd__linreg_finite_size_report(dpd_output *out, const linreg_run *r,
                                                 dpd_err *err);
/* The output every linreg command starts from: headline, the run's scalars, privacy. */
DPD_HIDDEN_FN int dpd__linreg_output_begin(const dpd_keys *keys, const linreg_run *r,
                                           dpd_output **out, dpd_err *err);
/* Drops the keys not in effect (other commands', other schedule families'). */
DPD_HIDDEN_FN void dpd__linreg_keys_in_effect(dpd_keys *keys);

/* dpdyn tune (linreg_tune.c). */
DPD_HIDDEN_FN int dpd__linreg_tune(dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                                   dpd_err *err);

extern const dpd_model_command dpd__linreg_commands[] DPD_HIDDEN_FN;

#endif
