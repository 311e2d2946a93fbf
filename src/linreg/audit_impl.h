/* The privacy audit of one-pass DP-SGD (internal; src/linreg/audit.c, docs/privacy.md
 * "Empirical audit").
 * SPDX-License-Identifier: MIT */
#ifndef DPD_LINREG_AUDIT_IMPL_H
#define DPD_LINREG_AUDIT_IMPL_H

#include <stddef.h>

#include "core/audit_impl.h"
#include "dpdyn/keys.h"
#include "dpdyn/linreg.h"
#include "dpdyn/model.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"
#include "linreg/problem_spec_impl.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* The canary's label is this many times a bound on |x_c . theta| + C/|x_c| (audit.c). */
#define DPD_LINREG_AUDIT_LABEL_FACTOR 1e3

/* What the audit reports beside the statistics. */
typedef struct {
  double label;       /* |y| of the canary */
  double eta_last;    /* eta of the canary's step (eta_{n-1}; eta_0 with `first`) */
  double sigma_last;  /* sigma of the canary's step */
  double max_eta_x2;  /* max over the other rows of eta_k |x_k|^2 (non-expansive when <= 2) */
  double mu_canary;   /* eta_{n-1} / sigma_{n-1} (= rho calibrated) when the canary is at the last
                         step and the iterate before it is noiseless (sigma_k = 0 for k < n-1);
                         NAN otherwise */
} dpd__linreg_audit_info;

/* Runs the library's DP-SGD on rows (data_sim.c, dpd__lrdata_sim_thetas) `runs` times on each
 * of two neighbouring datasets and writes the statistic <theta_n, u> of run i of side 0 to
 * s0[i] and of side 1 to s1[i] (u: the top eigendirection of Sigma).
 *
 * The dataset: n - 1 rows drawn once from the model of `p` (x = Lambda^{1/2} g, y = x . theta*
 * + z with cfg's label-noise law; stream (cfg->seed, DPD_RNG_STREAM_PROBLEM - 8), row by row a
 * Gaussian fill of d + 1: g then the label noise's Gaussian), in the eigenbasis of Sigma, and
 * the canary as row n - 1, the LAST step (no later step shrinks its effect; with `first`, row 0,
 * the step of the largest eta with the calibrated schedules, whose effect the later steps
 * contract, as they contract the noise added before them): x_c = sqrt(d) u and
 * y_c = -Y (side 0) or +Y (side 1), Y so large that its gradient is clipped in every run, so
 * clip(g_c) = +C u or -C u (replace-one neighbours at the largest distance, 2C). Every run uses
 * that dataset in that order; side s's run i draws the privacy noise of stream
 * (dpd__audit_seed_mix(cfg->seed, s), i). Bit-identical for any cfg->threads.
 * cfg: n, c (finite), rho (finite), zeta, noise, noise_nu, seed, threads, progress (the
 * simulator's, called per chunk of runs of each side: it may stop the run, DPD_ECANCELLED);
 * seeds and grid are ignored. Returns what dpd__lrdata_sim_run returns, DPD_EINVAL for rho or c not
 * finite, DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__linreg_audit_run(const dpd_linreg_problem *p, const dpd_schedule *schedule,
                                        const dpd_linreg_sim_config *cfg, size_t runs, int first,
                                        double *s0, double *s1, dpd__linreg_audit_info *info,
                                        dpd_err *err);

/* The audit command's run on a built problem: the keys runs, confidence and canary (validated by
 * dpd__linreg_audit_keys), dpd__linreg_audit_run, then the audit's output (dpd__audit_output at
 * `delta`, upper bound mu = cfg->rho) and the canary's numbers (canary_label, canary_eta,
 * canary_sigma, max_eta_x2, nonexpansive; a warning when some eta_k |x_k|^2 > 2). */
DPD_HIDDEN_FN int dpd__linreg_audit_output(dpd_output *out, const dpd_linreg_problem *p,
                                           const dpd_schedule *schedule,
                                           const dpd_linreg_sim_config *cfg, const dpd_keys *keys,
                                           double delta, dpd_err *err);

/* The numbers of linreg audit's summary besides LR_BASE_NUMBERS (dpd_model_command.numbers). */
#define DPD__LINREG_AUDIT_NUMBERS                                                                  \
  "delta noise_nu canary_label canary_eta canary_sigma max_eta_x2 " DPD__AUDIT_NUMBERS

/* The audit's keys for model=linreg (setup): runs and confidence (dpd__audit_keys_get), canary, a
 * private run (rho = inf is DPD_EINVAL naming 'rho'), delta (1/n when not given; recorded as
 * in effect, and in *priv for the privacy report and the run); adds the bytes of dpd__linreg_audit_run for d, n on `threads` threads (<= 0: all) to
 * *memory. */
DPD_HIDDEN_FN int dpd__linreg_audit_keys(dpd_keys *keys, dpd__linreg_privacy *priv, size_t d,
                                         size_t n, int threads, double *memory, dpd_err *err);

/* Bytes dpd__linreg_audit_run allocates (the dataset, Sigma, a chunk of iterates per thread). */
DPD_HIDDEN_FN double dpd__linreg_audit_bytes(size_t d, size_t n, size_t runs, double threads);

#endif
