/* The science of a model=rf run (internal; the adapter src/models/rf/ calls it): the theory of
 * each draw of a random-features problem, theta* = Phi^+ y and the Ornstein-Uhlenbeck theory of
 * DP-GD (ou.h) conditional on the draw, for one problem or one per replicate (rf_sim.h,
 * dpd_rf_resample), and its summaries over the draws; the memory model of every rf kernel (bytes,
 * by the size that drives them) and of a run; the privacy calibration of a run's sigma.
 * SPDX-License-Identifier: MIT
 *
 *   dpd__rf_draws_create(&cfg, &w, err);
 *   dpd__rf_draws_run(&pc, &sc, resample, 1, w, &sim, err);   // the replicates, each draw's theory
 *   dpd__rf_draws_ou_summary(w, sim->test_replicates, &ou, err);  // over the draws
 *   dpd__rf_ou_summary_free(&ou);  dpd__rf_draws_free(w);
 *
 * With one problem per replicate (resample = data, all) the theory curves are means over the
 * draws of the theory of each draw, and the gap between DP-GD and theory has the standard error
 * of the paired differences (replicate r's DP-GD against draw r's theory): what both share (the
 * data's variance) cancels (docs/rf.md, "Replicates: what varies"). */
#ifndef DPD_RF_RUN_IMPL_H
#define DPD_RF_RUN_IMPL_H

#include <stddef.h>

#include "dpdyn/model.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* What to evaluate on each draw. */
typedef struct {
  int theta_star;          /* theta* = Phi^+ y of each draw (dgelsd) */
  int ou;                  /* the OU theory of each draw */
  double eta, clip, sigma; /* DP-GD's (dpd_rf_sim_config: clip relative, INFINITY: none) */
  size_t T;                /* DP-GD steps */
  size_t g;                /* grid points (dpd_rf_sim_grid_steps) */
  size_t draws;            /* problems evaluated: 1, or one per replicate */
  /* Polled between the dense phases of a draw (its features, theta*, the OU eigenproblem, the
   * test projection: each one LAPACK or BLAS call that cannot be interrupted) with "problem
   * phases", done of DPD__RF_DRAW_POLLS per draw; non-zero stops (DPD_ECANCELLED). NULL: none. */
  dpd_run_progress_fn progress;
  void *progress_user;
} dpd__rf_draws_config;

#define DPD__RF_DRAW_POLLS 4

/* The values of each draw, filled by dpd__rf_draws_eval. */
typedef struct {
  dpd__rf_draws_config cfg;
  size_t *kgrid;                     /* [g] the recorded steps (dpd_rf_sim_grid_steps) */
  double *ts_train, *ts_test;        /* [draws] theta*'s risks (NAN without theta_star) */
  double *ou_d, *ou_bias, *ou_noise; /* [draws * g] discrete OU: risk, bias, noise */
  double *ou_c;                      /* [draws * g] continuous OU risk */
  double *a_max, *a_min;             /* [draws] 2 s^2 / n, largest and smallest kept */
  size_t *rank, *exit_step;          /* [draws]; exit_step T + 1: never leaves the no-clip set */
  double *rows_hash;                 /* [draws] dpd__rf_rows_hash of the draw's data rows (NAN:
                                        inputs not from a file) */
  size_t polls;                      /* progress polls so far */
} dpd__rf_draws;

/* *w: returned-owned (dpd__rf_draws_free); cfg copied. DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__rf_draws_create(const dpd__rf_draws_config *cfg, dpd__rf_draws **w,
                                       dpd_err *err);
DPD_HIDDEN_FN void dpd__rf_draws_free(dpd__rf_draws *w);
/* theta* and (cfg.ou) the OU theory of draw `rep` (a dpd_rf_draw_fn; user = the dpd__rf_draws).
 * DPD_ENONFINITE when eta is above the stability limit 2 / a_max of the draw, DPD_ENOMEM,
 * DPD_ESOLVER, DPD_ECANCELLED, or what the ou.h functions return. */
DPD_HIDDEN_FN int dpd__rf_draws_eval(void *user, size_t rep, const dpd_rf_problem *problem,
                                     dpd_err *err);

/* Runs the draws: with sim, the DP-GD replicates of dpd_rf_sim_resample_run with
 * dpd__rf_draws_eval on every draw (w->cfg.draws = 1 for resample = noise, seeds otherwise;
 * *res returned-owned); without, the one problem of pc evaluated as draw 0 (*res = NULL). Returns
 * what those return. */
DPD_HIDDEN_FN int dpd__rf_draws_run(const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                                    dpd_rf_resample resample, int sim, dpd__rf_draws *w,
                                    dpd_rf_sim_result **res, dpd_err *err);

/* Mean and standard error over `draws` rows of each of the g columns of x [draws * g]; one draw:
 * the values themselves and SE 0 (pure). */
DPD_HIDDEN_FN void dpd__rf_draws_mean_se(const double *x, size_t draws, size_t g, double *mean,
                                         double *se);

/* The OU theory over the draws: the curves (means over the draws), the SE of the discrete risk
 * over the draws, the extremes (smallest rank and a_min, largest a_max, earliest exit), and
 * with the replicates of one draw each the SE of the paired differences DP-GD - theory. */
typedef struct {
  double *risk, *bias, *noise, *risk_continuous; /* [g] */
  double *risk_se;                               /* [g] */
  double *gap_se; /* [g] the SE over the draws of sim[r * g + j] - ou_d[r * g + j]; NULL: none */
  size_t rank, exit_step; /* exit_step T + 1: never */
  double a_max, a_min;
} dpd__rf_ou_summary;
/* sim: each replicate's DP-GD test risk on the grid, [draws * g], one replicate per draw (NULL:
 * no gap_se). s: its arrays returned-owned (dpd__rf_ou_summary_free). DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__rf_draws_ou_summary(const dpd__rf_draws *w, const double *sim,
                                           dpd__rf_ou_summary *s, dpd_err *err);
DPD_HIDDEN_FN void dpd__rf_ou_summary_free(dpd__rf_ou_summary *s);

/* The path of the data's inputs file (target = 0) or targets file (1; NULL: none), for
 * messages (rf_data.c). */
DPD_HIDDEN_FN const char *dpd__rf_data_path(const dpd_rf_data *data, int target);
/* The checks of dpd_rf_problem_create on a config, without building anything (rf.c): the
 * adapter's setup runs them so that bad sizes against a data file stop before any work. */
DPD_HIDDEN_FN int dpd__rf_config_check(const dpd_rf_config *cfg, dpd_err *err);
/* A hash of the data rows a problem drew (input = FILE; NAN otherwise): FNV-1a (64 bits) over
 * the n + n_test row indices in order, its top 32 bits as an integer (ten digits: printed
 * exactly in the tables) (rf.c). Equal for two problems on the same rows in the same order. */
DPD_HIDDEN_FN double dpd__rf_rows_hash(const dpd_rf_problem *problem);

/* The keys `input` (gaussian | sphere | file:PATH) and `target` (linear | sign | hermite2 |
 * file:PATH; a file only with input = file) into pc->input, pc->target (rf_data_keys.c). With
 * input = file:PATH and `open` (a command that builds a problem): the files read and preprocessed
 * (dpd_rf_data_create, bounded by env->max_memory; *data returned-owned, pc->data = *data), d from
 * the file (a d given must agree; the value in effect recorded) and pc's sizes checked against it
 * (dpd__rf_config_check), so that bad input stops at setup. pc->d, n, n_test: read before.
 * DPD_EINVAL naming the key, value and allowed range; DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__rf_inputs_keys(dpd_keys *keys, const dpd_run_env *env, int open,
                                      dpd_rf_config *pc, dpd_rf_data **data, dpd_err *err);
/* input = file: the data's numbers in the summary (data_rows, data_input_scale,
 * data_input_mean_norm; with targets data_target_mean, data_target_scale; the files and dtype as
 * text) and a note on the rows each of the `draws` data draws takes (rf_data_keys.c). */
DPD_HIDDEN_FN int dpd__rf_data_report(dpd_output *out, const dpd_rf_config *pc, size_t draws,
                                      dpd_err *err);

/* The memory model of the rf kernels: bytes by the size that drives them. Each kernel's function
 * (beside the kernel) adds its bytes to the terms. */
typedef struct {
  double p, n, d, steps, seeds;
} dpd__rf_bytes;
/* The problem (rf.c): Phi, Phi_test and the weights (p), the inputs and labels (d). */
DPD_HIDDEN_FN void dpd__rf_problem_bytes(const dpd_rf_config *pc, dpd__rf_bytes *b);
/* theta* by dgelsd (rf_sim.c): LAPACKE's column-major copy of Phi and dgelsd's own (p), an
 * m x m factor, m = min(n, p) (n). */
DPD_HIDDEN_FN void dpd__rf_theta_star_bytes(const dpd_rf_config *pc, dpd__rf_bytes *b);
/* The DP-GD replicates of dpd_rf_sim_resample_run (rf_sim.c): workspaces (p), the replicates'
 * curves and first clipped steps (seeds), the per-step clipped fractions (steps). */
DPD_HIDDEN_FN void dpd__rf_sim_bytes(const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                                     dpd_rf_resample resample, dpd__rf_bytes *b);
/* The OU eigenproblem (ou.c): Gram, eigenvectors, dsyevd's workspace, the test projection (n),
 * the exit scan (steps). */
DPD_HIDDEN_FN void dpd__ou_bytes(size_t n, size_t n_test, size_t T, dpd__rf_bytes *b);
/* The values of `draws` draws on a grid of g points (rf_draws.c), the paired differences
 * included (seeds). */
DPD_HIDDEN_FN void dpd__rf_draws_bytes(size_t draws, size_t g, dpd__rf_bytes *b);
/* The first clipped steps of the replicates: the smallest and the median (the upper one for an
 * even count), -1 standing for "never" (step T). DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__rf_sim_first_clip_stats(const dpd_rf_sim_result *res, double *min,
                                               double *median, dpd_err *err);

/* The memory of a run (bytes, estimated before anything is built): the problem stays for the
 * whole run; on top of it come, one after the other, theta* by dgelsd and then the DP-GD
 * replicates (sim: dpd__rf_sim_bytes, and the draws' values with one draw per replicate) with
 * `replicates_bytes` of per-replicate tables, and the OU eigenproblem (ou); `grid_bytes` are the
 * run's own grid columns. *driver: the size whose term dominates, "p", "n", "d", "steps" or
 * "seeds" (the replicates x steps term). */
DPD_HIDDEN_FN double dpd__rf_memory_eval(const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                                         dpd_rf_resample resample, int sim, int ou,
                                         double replicates_bytes, const char **driver);

/* The calibration of a run's noise multiplier (docs/math.md §2.3) from one budget: epsilon (with
 * delta; sigma calibrated exactly or by the seed's moments bound), sigma itself, or mu-GDP or
 * zCDP, which fix sigma exactly (T steps of DP-GD are sqrt(eta T)/sigma-GDP, i.e.
 * (eta T / (2 sigma^2))-zCDP); none: not private. */
typedef enum {
  DPD__RF_BUDGET_EPSILON = 0,
  DPD__RF_BUDGET_SIGMA,
  DPD__RF_BUDGET_MU,
  DPD__RF_BUDGET_ZCDP,
  DPD__RF_BUDGET_NONE
} dpd__rf_budget;
typedef struct {
  dpd__rf_budget budget;
  int moments;          /* epsilon calibrated by the moments bound (else exactly) */
  double sigma;         /* in use (0: non-private) */
  double sigma_exact;   /* the exact calibration of epsilon (sigma itself when sigma is given) */
  double sigma_moments; /* the seed's moments bound for epsilon (NAN outside its range) */
  double eps_moments;   /* the epsilon that sigma_moments delivers (NAN when n/a) */
  double epsilon;       /* the target epsilon, or the one sigma delivers (INFINITY: none) */
  double epsilon_exact; /* the epsilon sigma delivers by the exact accounting */
} dpd__rf_privacy_plan;
/* Step 1: plan->sigma from the budget's `value` (ignored for NONE). DPD_EINVAL naming the
 * budget ('epsilon', 'mu', 'zcdp') for mu or zcdp = 0 and for moments outside the bound's range
 * (epsilon < 8 log(1/delta)). */
DPD_HIDDEN_FN int dpd__rf_privacy_plan_sigma(double eta, size_t T, double delta,
                                             dpd__rf_budget budget, double value, int moments,
                                             dpd__rf_privacy_plan *plan, dpd_err *err);
/* Step 2: the epsilons that plan->sigma delivers (and, for a sigma not from epsilon, both
 * calibrations of it). */
DPD_HIDDEN_FN int dpd__rf_privacy_plan_delivered(double eta, size_t T, double delta,
                                                 dpd__rf_privacy_plan *plan, dpd_err *err);

/* One run of simulate, ou or compare: what the adapter hands to dpd__rf_job_output. */
typedef struct {
  int sim, ou, per_draw; /* per_draw: one problem per replicate */
  size_t g, T;
  size_t seeds;          /* the run's replicates and master seed, DP-GD's eta */
  uint64_t seed;
  double eta;
  dpd_rf_resample resample;
  int save_replicates;   /* 0 none, 1 replicates.tsv, 2 also replicates_trajectory.tsv */
  int has_data;          /* input = file:PATH */
  int theta_star;        /* theta* reported */
  const dpd_rf_config *pc;
  dpd__rf_draws *w;
  dpd_rf_sim_result *s;  /* the replicates (NULL: ou) */
  dpd__rf_ou_summary th; /* the theory over the draws */
  dpd_output *out;       /* begun by the adapter */
  dpd_table_builder *tb; /* trajectory.tsv */
} dpd__rf_job;

/* The output of simulate (j->sim), ou (j->ou) or compare (both) after the draws ran, into the
 * output j->out the adapter began: the figure `figure`, the data report, theta*'s, the
 * replicates' and the OU theory's numbers, trajectory.tsv (j->tb, handed to the output), the
 * gaps of compare, clipping.tsv and the per-replicate tables (rf_report.c). DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__rf_job_output(dpd__rf_job *j, const char *figure, dpd_err *err);

#endif
