/* model=rf (internal): the context setup makes (rf_model.c) and the commands' run functions
 * (rf_run.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_MODELS_RF_IMPL_H
#define DPD_MODELS_RF_IMPL_H

#include "core/model_impl.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "rf/audit_rf_impl.h"
#include "rf/rf_overparam_impl.h"
#include "rf/rf_reconstruct_impl.h"
#include "rf/rf_run_impl.h"

/* What a command uses (dpd_model_command.uses): the DP-GD replicates, the OU theory; account
 * uses neither (no problem is built). */
enum {
  DPD__RF_USES_SIM = 1u,
  DPD__RF_USES_OU = 2u,
  DPD__RF_USES_AUDIT = 4u,
  DPD__RF_USES_INTERP = 8u, /* interpolate, sensitivity: rf_overparam_impl.h */
  DPD__RF_USES_SENS = 16u
};
enum { DPD__RF_USES_RECONSTRUCT = 64u }; /* the attack (src/rf/rf_reconstruct_impl.h) */

typedef struct {
  dpd_rf_config pc;             /* problem (pc.data: `data` below) */
  dpd_rf_data *data;            /* input = file:PATH: the data files (setup); NULL otherwise */
  dpd_rf_sim_config sc;         /* DP-GD (eta, T, clip, sigma, seeds, seed, grid, threads) */
  double delta;                 /* privacy delta (default 1/n) */
  dpd__rf_privacy_plan privacy; /* the budget, sigma (sc.sigma) and the epsilons it delivers */
  int theta_star;               /* theta_star = on: theta* = Phi^+ y of each draw */
  dpd_rf_resample resample;     /* what the replicates redraw (simulate, compare) */
  int plot;
  int save_replicates;           /* 0 none, 1 replicates.tsv, 2 also replicates_trajectory.tsv */
  double memory_estimate;        /* bytes the command is expected to need (0: not estimated) */
  const char *driver;            /* the key whose value drives memory_estimate */
  dpd__progress_bridge progress; /* DP-GD steps to env->progress (sc.progress_user) */
  dpd__rf_ovp ovp;               /* interpolate, sensitivity (rf_overparam_impl.h) */
} dpd__rf_ctx;

/* The commands (dpd_model_command.run) on the context. */
DPD_HIDDEN_FN int dpd__rf_run_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                       dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_run_ou(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                 dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_run_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                      dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_run_audit(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                    dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_run_interpolate(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                          dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_run_sensitivity(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                          dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_run_reconstruct(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                          dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_run_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                      dpd_output **out, dpd_err *err);

#endif
