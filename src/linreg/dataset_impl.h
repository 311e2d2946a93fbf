/* A linreg run on a dataset (features=file:PATH; internal; docs/real_data.md): its keys, the
 * prepared data (data_impl.h) bound to the run's problem and configurations, the second
 * deterministic equivalent of compare (both kinds of clipping factors) and the summary's "data"
 * object. The model adapter (src/models/linreg) calls these few functions; the science is here.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_LINREG_DATASET_IMPL_H
#define DPD_LINREG_DATASET_IMPL_H

#include "dpdyn/keys.h"
#include "dpdyn/linreg.h"
#include "dpdyn/model.h"
#include "dpdyn/noise.h"
#include "dpdyn/ode.h"
#include "dpdyn/sde.h"
#include "linreg/data_impl.h"
#include "linreg/ode_estimate_impl.h"
#include "linreg/report_impl.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

typedef struct {
  int on;           /* features=file:PATH */
  int factors_data; /* factors=data (else the Gaussian closed forms) */
  int theory;       /* the command solves the ODE (scale=none refused) */
  int replacement;  /* replacement=1: rows drawn i.i.d. (with replacement) */
  dpd__lrdata_config cfg;
  size_t N, d;  /* the file's shape */
  double bytes; /* the data in memory, O(d^2) and O(N) (dpd__lrdata_check) */
  dpd__lrdata *D;
  dpd__lrdata_factors_ctx fctx;
  double *theta_model; /* [d] targets=model: theta* in the original coordinates */
  double *test_risk;   /* [seeds] held-out risk of each replicate's released iterate */
} dpd__linreg_dataset;

/* The keys features, targets, center, scale, target_scale, test_fraction, factors and their
 * conflicts (spectrum with a dataset; theta_star, theta_norm, zeta, noise with targets=file:),
 * the files checked (shape, finite values) before any heavy work. theory: the command solves the
 * ODE. ds->on = 0 when features is the Gaussian model. */
DPD_HIDDEN_FN int dpd__linreg_dataset_keys(const dpd_keys *keys, uint64_t seed, size_t max_memory,
                                           int threads, int theory, dpd__linreg_dataset *ds,
                                           dpd_err *err);

/* Drops the keys that describe a Gaussian model's population (spectrum; with targets=file: also
 * theta_star, theta_norm, noise): the data's replace them in the keys in effect. */
DPD_HIDDEN_FN void dpd__linreg_dataset_keys_in_effect(dpd_keys *keys,
                                                      const dpd__linreg_dataset *ds);

/* n: the key n (or gamma), at most the population's rows; default all of them. */
DPD_HIDDEN_FN int dpd__linreg_dataset_n(const dpd_keys *keys, const dpd__linreg_dataset *ds,
                                        size_t *n, dpd_err *err);

/* Reads and prepares the data (dpd__lrdata_create) and fills pc's spectrum (and theta* for file
 * targets) from it; pc's theta rule (targets=model) is kept. */
DPD_HIDDEN_FN int dpd__linreg_dataset_build(dpd__linreg_dataset *ds, dpd_linreg_problem_config *pc,
                                            dpd_err *err);

/* After the problem is built: theta* in original coordinates (targets=model), zeta from the fit
 * (targets=file: zeta^2 = the mean squared residual, Gaussian law in the theory), the
 * data-driven factors' context, into the configurations (oc, simc, sdec; the ODE's factors when
 * factors=data: the SDE keeps the Gaussian closed forms), *zeta the run's label-noise scale. */
DPD_HIDDEN_FN int dpd__linreg_dataset_bind(dpd__linreg_dataset *ds, const dpd_linreg_problem *p,
                                           double c, size_t seeds, double *zeta,
                                           dpd_ode_config *oc, dpd_linreg_sim_config *simc,
                                           dpd_linreg_sde_config *sdec, dpd_err *err);

/* The DP-SGD simulation on the rows (dpd__lrdata_sim_run) with the run's configuration. */
DPD_HIDDEN_FN int dpd__linreg_dataset_sim(dpd__linreg_dataset *ds, const dpd_schedule *schedule,
                                          const dpd_linreg_sim_config *simc,
                                          dpd_linreg_sim_result **out, dpd_err *err);

/* compare on a dataset: the deterministic equivalent with the other kind of factors too, so that
 * both are reported: ode_gaussian_excess_risk and ode_data_excess_risk on the grid, their final
 * values and gaps in SE (prefixes "gaussian_" and "data_"), `ode` being the run's own solve. */
DPD_HIDDEN_FN void dpd__linreg_dataset_compare(dpd__linreg_report *rp, dpd__linreg_dataset *ds,
                                               dpd__linreg_spectral *spectral,
                                               dpd_linreg_problem **ode_problem,
                                               const dpd_schedule *schedule,
                                               const dpd_ode_config *oc, double compress_tol,
                                               const dpd_ode_result *ode,
                                               const dpd_linreg_sim_result *sim, size_t seeds);

/* The summary's "data" object: the file, rows, split, preprocessing factors, the fit, the
 * diagnostics, the factors in use, what replicates redraw, the held-out risk when any. */
DPD_HIDDEN_FN void dpd__linreg_dataset_report(dpd_output *out, const dpd__linreg_dataset *ds,
                                              size_t n, size_t seeds, int simulated);

DPD_HIDDEN_FN void dpd__linreg_dataset_free(dpd__linreg_dataset *ds);

#endif
