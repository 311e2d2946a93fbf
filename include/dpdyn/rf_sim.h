/* Full-batch DP-GD with per-sample clipping on random features (docs/math.md §2.2).
 * SPDX-License-Identifier: MIT
 *
 * References: Bombari & Mondelli, PNAS 122 (2025) e2423072122 (arXiv:2410.14787), DP-GD of §3;
 * Abadi et al., "Deep learning with differential privacy", CCS 2016 (per-sample clipping);
 * notes-rf-nc-sp.md A.2.
 *
 *   theta_0 = 0,   r = Phi theta_t - y,   C = clip sqrt(p),
 *   w_i = min(1, C / (2 |r_i| ||phi_i||)),   g = (1/n) Phi^T (2 w .* r),
 *   theta_{t+1} = theta_t - eta g + sqrt(eta) (2 C / n) sigma xi_t,   xi_t ~ N(0, I_p).
 *
 * Random numbers: replicate r uses stream (cfg.seed, r) (rng.h); step t (t = 0..T-1) makes one
 * dpd_rng_gaussian_fill of p values, xi_t, when sigma > 0 (none otherwise). In dpd_rf_sim_run
 * the data (the dpd_rf_problem) are the same for every replicate; dpd_rf_sim_resample_run can
 * give every replicate its own draw of the problem (dpd_rf_resample).
 *
 * Reproducibility: results are bit-identical for any number of threads. Every product with Phi
 * is computed by this library's own loops in a fixed order (not by OpenBLAS, whose summation
 * order may depend on its thread count): the rows are cut into blocks fixed by n alone
 * (min(64, max(1, floor(n / 16))) blocks, [c n / K, (c + 1) n / K)) whose partial gradients are
 * added in block order. Replicates run in parallel (OpenMP) when there are at least as many as
 * threads; otherwise the blocks of one replicate run in parallel. Reductions over replicates
 * are serial in replicate order. */
#ifndef DPD_RF_SIM_H
#define DPD_RF_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/replicate.h"
#include "dpdyn/rf.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  size_t T;      /* iterations, >= 1 */
  double eta;    /* step size, finite > 0 */
  double clip;   /* C = clip sqrt(p), finite > 0; INFINITY: no clipping */
  double sigma;  /* noise multiplier, finite >= 0 (0: no noise); > 0 needs finite clip */
  size_t seeds;  /* replicates, >= 1 */
  uint64_t seed; /* replicate r uses stream (seed, r) */
  size_t grid;   /* recorded steps k_j = round(j T / (grid - 1)), j = 0..grid-1, grid >= 2 */
  int threads;   /* OpenMP threads (<= 0: all); results do not depend on it */
  dpd_progress_fn progress; /* DP-GD steps done over all replicates (total seeds * T), from the
                               calling thread (replicate.h); NULL: none. Returning non-zero
                               stops the run (DPD_ECANCELLED) */
  void *progress_user;      /* passed to progress (borrowed) */
} dpd_rf_sim_config;

typedef struct {
  size_t grid, seeds, T, p;
  size_t *step;               /* [grid] recorded steps k_j (k_0 = 0, k_{grid-1} = T) */
  double *train_mean;         /* [grid] mean over replicates of (1/n) ||Phi theta - y||^2 */
  double *train_se;           /* [grid] standard error of the mean */
  double *test_mean;          /* [grid] mean of (1/n_test) ||Phi_test theta - y_test||^2 */
  double *test_se;            /* [grid] */
  double *train_replicates;   /* [seeds * grid] row-major by replicate */
  double *test_replicates;    /* [seeds * grid] */
  double *clip_fraction;      /* [T] fraction of clipped samples at step t, mean over replicates */
  double clip_fraction_total; /* over all steps and replicates */
  size_t *first_clip;         /* [seeds] first step t at which some sample is clipped (the
                                 iterate left the no-clip set); T if never */
  double *theta_last;         /* [p] final iterate theta_T of replicate 0 */
} dpd_rf_sim_result;

/* Defaults: T = 1000, eta = 0.1, clip = INFINITY, sigma = 0, seeds = 8, seed = 1, grid = 101,
 * threads = 0, progress = NULL, progress_user = NULL. */
DPD_API dpd_rf_sim_config dpd_rf_sim_config_default(void);

/* Runs cfg->seeds replicates of DP-GD on `problem` (borrowed). *out is returned-owned
 * (dpd_rf_sim_result_free). Returns DPD_EINVAL naming the key, value and allowed range (T,
 * seeds or grid too small, eta or clip not > 0, sigma < 0, sigma > 0 with clip = INFINITY),
 * DPD_ENOMEM, DPD_ENONFINITE naming replicate and step when an iterate diverges, and
 * DPD_ECANCELLED when cfg->progress asks for a stop. Prints nothing. Memory:
 * 4 p + n doubles per thread when replicates run in parallel (iterate, gradient, noise, one
 * block partial); when one replicate's blocks run on t threads, (3 + h) p + n with h block
 * partials held at once: all blocks when that is at most 2^21 doubles (16 MiB), otherwise a
 * multiple of t (at least t). Nothing n x p is allocated. Thread-safe. */
DPD_API int dpd_rf_sim_run(const dpd_rf_problem *problem, const dpd_rf_sim_config *cfg,
                           dpd_rf_sim_result **out, dpd_err *err);

/* Releases a result; NULL is allowed. */
DPD_API void dpd_rf_sim_result_free(dpd_rf_sim_result *res);

/* What the replicates of dpd_rf_sim_resample_run redraw (docs/rf.md, "Replicates: what varies").
 * With D = pc.draw (rf.h) and S = cfg.seed: */
typedef enum {
  DPD_RF_RESAMPLE_NOISE = 0, /* one problem, draw D, for every replicate; replicate r draws its
                                noise from stream (S, r). Exactly dpd_rf_sim_run: the standard
                                errors measure the noise alone, conditional on the data */
  DPD_RF_RESAMPLE_DATA,      /* replicate r: its own problem, draw D + r (data, target direction,
                                features, test set); every replicate draws the same noise,
                                stream (S, 0). The standard errors measure the data alone,
                                conditional on one noise path */
  DPD_RF_RESAMPLE_ALL        /* replicate r: problem draw D + r and noise stream (S, r), so the
                                replicates are independent runs and the standard errors measure
                                the whole spread (data and noise) */
} dpd_rf_resample;

/* Called once for every problem a run builds, in order and from the calling thread, after the
 * problem is built and before DP-GD runs on it. `rep` is the replicate that uses it (0 for the
 * one problem of DPD_RF_RESAMPLE_NOISE, which every replicate uses); `problem` is borrowed and
 * freed after its replicates. For quantities of each draw (theta*, the OU theory). `user` is
 * passed through. Returns DPD_OK to go on, or a negative status (err filled) that stops the
 * run with that status. */
typedef int (*dpd_rf_draw_fn)(void *user, size_t rep, const dpd_rf_problem *problem, dpd_err *err);

/* Runs cfg->seeds replicates of DP-GD, each on the problem that `resample` says: builds the
 * problem of pc (borrowed; pc->draw is D above) once (NOISE, then exactly dpd_rf_sim_run) or once
 * per replicate (DATA, ALL), calls on_draw (may be NULL) on each, and collects the replicates in
 * one result, whose means, standard errors, clipped fractions and first clipped steps are over
 * the replicates as in dpd_rf_sim_run; theta_last is replicate 0's (on draw D with noise stream
 * (S, 0) in every mode, so replicate 0 is the same run in all three).
 * Threads: NOISE as dpd_rf_sim_run; DATA and ALL run one replicate at a time (its problem built,
 * then its row blocks on all cfg->threads threads), so memory is that of one problem, as for
 * NOISE. Results are bit-identical for any thread count in every mode.
 * Progress counts DP-GD steps over all replicates (seeds * T), as in dpd_rf_sim_run.
 * Returns what dpd_rf_problem_create and dpd_rf_sim_run return (an error of a replicate names
 * it, its draw and its noise stream), DPD_EINVAL for an unknown `resample` or D + seeds - 1 above
 * DPD_RF_DRAW_MAX, or the status on_draw returned. *out is returned-owned
 * (dpd_rf_sim_result_free). Prints nothing. Thread-safe. */
DPD_API int dpd_rf_sim_resample_run(const dpd_rf_config *pc, const dpd_rf_sim_config *cfg,
                                    dpd_rf_resample resample, dpd_rf_draw_fn on_draw, void *user,
                                    dpd_rf_sim_result **out, dpd_err *err);

/* Names "noise", "data", "all". dpd_rf_resample_get returns DPD_EINVAL naming the key
 * "resample", the value and the allowed names (*out unchanged then); dpd_rf_resample_name
 * returns "unknown" for an unknown enumerator. */
DPD_API int dpd_rf_resample_get(const char *name, dpd_rf_resample *out, dpd_err *err);
DPD_API const char *dpd_rf_resample_name(dpd_rf_resample resample);

/* The recorded steps of a run: steps[j] = round(j T / (grid - 1)), j = 0..grid-1 (grid >= 2;
 * steps[grid - 1] = T), the grid of dpd_rf_sim_result.step, for evaluating a theory (ou.h) at
 * the same steps (pure). */
DPD_API void dpd_rf_sim_grid_steps(size_t T, size_t grid, size_t *steps);

/* The clipped mean gradient at theta (pure): r_i = phi_i^T theta - y_i written to r[0..n),
 * g[0..p) = (1/n) sum_i 2 w_i r_i phi_i with w_i = min(1, C / (2 |r_i| ||phi_i||)) (C =
 * INFINITY: w = 1). Returns the number of clipped samples (w_i < 1), or SIZE_MAX when its
 * scratch memory (p doubles) cannot be allocated. One pass over Phi with the simulator's fixed
 * blocks and block order, so it reproduces the simulator's gradient bit for bit. */
DPD_API size_t dpd_rf_clipped_gradient_eval(const dpd_rf_problem *problem, const double *theta,
                                            double C, double *g, double *r);

/* (1/n) ||Phi theta - y||^2 (test = 0) or (1/n_test) ||Phi_test theta - y_test||^2 (test = 1),
 * in a fixed summation order (pure). */
DPD_API double dpd_rf_risk_eval(const dpd_rf_problem *problem, const double *theta, int test);

/* theta* = Phi^+ y (minimum-norm least squares) by LAPACKE_dgelsd (SVD, divide and conquer);
 * singular values s <= rcond s_max are treated as zero (rcond < 0: machine precision).
 * theta_star[0..p) is written (caller memory); train_risk and test_risk (either may be NULL)
 * receive its risks. Cost O(min(n,p)^2 max(n,p)), memory n p doubles (a copy of Phi).
 * Returns DPD_ENOMEM, or DPD_ESOLVER when the SVD does not converge. */
DPD_API int dpd_rf_theta_star_get(const dpd_rf_problem *problem, double rcond, double *theta_star,
                                  double *train_risk, double *test_risk, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RF_SIM_H */
