/* Linear regression on a dataset from a file (internal; docs/real_data.md, the derivations in
 * docs/real_data_theory.md): the population is the file's N preprocessed rows with equal
 * weights; DP-SGD draws n of them per replicate, the deterministic equivalent is built from the
 * empirical covariance Sigma^ = X^T X / N and the least-squares fit.
 * SPDX-License-Identifier: MIT
 *
 * Preprocessing (each switchable): centre every feature and the targets by their means over the
 * population rows; scale all features by ONE factor so that tr Sigma^ = d (1/N normalisation);
 * scale the targets to unit variance (1/N). Rows are never copied: a row is converted, centred and
 * scaled in the kernel (x = scale (row - mean)). */
#ifndef DPD_LINREG_DATA_IMPL_H
#define DPD_LINREG_DATA_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/datamat_impl.h"
#include "dpdyn/linreg.h"
#include "dpdyn/noise.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* Eigenvalues of Sigma^ below this fraction of the largest (rank deficiency, e.g. constant
 * pixels) are raised to it in the ODE's problem (the ODE needs lambda > 0); their directions carry
 * no part of theta^* (minimum-norm fit) and add at most this fraction of the privacy noise's
 * energy to R. The count is reported (data_floored_eigenvalues). */
#define DPD_LRDATA_LAMBDA_FLOOR 1e-12

/* How many top eigen-directions the kurtosis diagnostic reports. */
#define DPD_LRDATA_TOP 5

typedef struct {
  const char *features_key;  /* key named in errors ("features") */
  const char *features_path; /* N x d matrix */
  const char *targets_key;   /* "targets" */
  const char *targets_path;  /* N values; NULL: targets=model (labels drawn per step) */
  int center;                /* 1: centre features (and file targets) by their means */
  int scale_trace;           /* 1: one factor on all features so that tr Sigma^ = d */
  int target_unit;           /* 1: file targets scaled to unit variance */
  double test_fraction;      /* [0, 1): rows held out by a seeded split (stream
                                DPD_RNG_STREAM_PROBLEM - 1 of seed; linreg only, rf has its own) */
  uint64_t seed;
  size_t max_bytes; /* memory limit of the inputs (0: none) */
  int threads;      /* OpenMP threads (<= 0: all); results do not depend on it */
} dpd__lrdata_config;

/* Diagnostics: whether to expect the deterministic equivalent to hold (docs/real_data.md). */
typedef struct {
  double norm_cv;        /* coefficient of variation of |x_j|^2 / tr Sigma^ over the rows */
  size_t ntop;           /* min(DPD_LRDATA_TOP, d) */
  double kurt_top[DPD_LRDATA_TOP]; /* excess kurtosis of u_k^T x_j over the rows, k = 1..ntop */
  double kurt_resid;     /* excess kurtosis of the residuals (file targets; NAN for model) */
  double eff_rank;       /* (tr Sigma^)^2 / tr(Sigma^2) */
  size_t rank;           /* eigenvalues above DPD_LRDATA_LAMBDA_FLOOR lambda_max */
  double leverage_max;   /* max_j h_j, h_j = x_j^T Sigma^+ x_j / N (the hat matrix's diagonal) */
  double leverage_ratio; /* leverage_max / mean_j h_j (mean h = rank / N) */
} dpd__lrdata_diag;

/* A prepared dataset (dpd__lrdata_create; dpd__lrdata_free). */
typedef struct {
  dpd__datamat X;       /* the raw features (mapped or owned) */
  dpd__datamat Y;       /* the raw targets (rows = N, cols = 1); zeroed for model targets */
  int model_targets;    /* 1: targets=model */
  size_t N, d;          /* rows and columns of the file */
  size_t n_pop, n_test; /* population (training) rows and held-out rows, n_pop + n_test = N */
  size_t *pop_idx;      /* [n_pop] file rows of the population, increasing */
  size_t *test_idx;     /* [n_test] held-out file rows, increasing (NULL when none) */
  double *mean;         /* [d] feature means over the population (zeros when center = 0) */
  double scale;         /* the one feature factor (1 when scale_trace = 0) */
  double y_mean, y_scale; /* target centring and factor: y = y_scale (y_raw - y_mean) */
  double trace_raw;     /* tr Sigma^ of the centred, unscaled features */
  double *sigma;        /* [d * d] Sigma^ of the preprocessed population, row-major symmetric */
  double *lambda;       /* [d] its eigenvalues, non-increasing (not floored) */
  double *U;            /* [d * d] eigenvectors: column k (U[i * d + k]) belongs to lambda[k] */
  double *theta_hat;    /* [d] least-squares theta^* (file targets; min norm), NULL for model */
  double zeta2;         /* mean squared residual of theta^* over the population (file targets) */
  double *a;            /* [n_pop] |x_j|^2 / d of the population rows (preprocessed) */
  double *z;            /* [n_pop] residuals y_j - x_j^T theta^* (file targets), NULL for model */
  size_t n_floored;     /* eigenvalues raised to the floor in the ODE's problem */
  int with_replacement; /* set by the caller before dpd__lrdata_sim_run: 1 = each step draws a
                           population row uniformly at random, independently (the i.i.d. sampling
                           the deterministic equivalent assumes; n may exceed n_pop); 0 (default,
                           as created) = n distinct rows (one pass without replacement) */
  int fixed_order;      /* set by the caller: 1 = step k uses population row k (n <= n_pop) in
                           every replicate, whose streams then vary only the noise (the privacy
                           audit, src/linreg/audit.c); 0 (default, as created) = drawn rows */
  dpd__lrdata_diag diag;
  /* storage that dpd__lrdata_problem_config lends to the problem's configuration */
  double *theta_eig;    /* [d] U^T theta^* (file targets; 0 beyond the rank), NULL for model */
  double *pc_values;    /* [d] lambda floored at DPD_LRDATA_LAMBDA_FLOOR lambda_max */
  size_t *pc_mult;      /* [d] ones */
} dpd__lrdata;

/* Reads, validates and prepares the dataset: the files (dpd__datamat_open; min 2 rows), row
 * counts agreeing, a non-constant dataset (every feature constant after centring: refused), the
 * split, the preprocessing, Sigma^ (blocked dsyrk over the rows converted in blocks: memory
 * O(block d + d^2)), its eigen-decomposition (LAPACK dsyevr), theta^* and zeta^2, a and z, and
 * the diagnostics. Errors name the key, the value and the allowed range; nothing is returned on
 * failure. Serial around the BLAS/LAPACK calls, which use OpenBLAS's threads (cfg->threads is not
 * read); every sum over rows runs in row order. */
DPD_HIDDEN_FN int dpd__lrdata_create(const dpd__lrdata_config *cfg, dpd__lrdata **out,
                                     dpd_err *err);
DPD_HIDDEN_FN void dpd__lrdata_free(dpd__lrdata *D);

/* Only the files' checks of dpd__lrdata_create (opened, validated, counted) and the bytes the
 * run will hold (the data, O(d^2) and O(N)): for setup, before any heavy work. *N and *d receive
 * the shape. */
DPD_HIDDEN_FN int dpd__lrdata_check(const dpd__lrdata_config *cfg, size_t *N, size_t *d,
                                    double *bytes, dpd_err *err);

/* Population row j (0 .. n_pop) preprocessed into x[0 .. d); its target into *y (file targets;
 * untouched for model targets). */
DPD_HIDDEN_FN void dpd__lrdata_row(const dpd__lrdata *D, size_t j, double *x, double *y);

/* The ODE's problem: lambda = Sigma^'s eigenvalues (floored), theta* components in its
 * eigenbasis (U^T theta^*, as they are: theta_norm = 0) for file targets. For model targets pc
 * must already hold the theta* rule (random/flat/given in the eigenbasis, theta_norm). Fills
 * pc->d, spectrum = LIST, values, mult, nvalues (storage in D, borrowed by pc). DPD_EINVAL when
 * tr Sigma^ differs from d by more than 1e-6 d (scale_trace off): dpd_linreg_problem_create
 * renormalises the eigenvalues to mean 1, so its problem would not be these rows'. */
DPD_HIDDEN_FN int dpd__lrdata_problem_config(dpd__lrdata *D, dpd_linreg_problem_config *pc,
                                             dpd_err *err);

/* theta* in the original coordinates from its components in Sigma^'s eigenbasis: out = U th. */
DPD_HIDDEN_FN void dpd__lrdata_to_original(const dpd__lrdata *D, const double *th_eig,
                                           double *out);

/* ---- data-driven clipping factors (docs/real_data_theory.md) ----
 * With a_j = |x_j|^2/d and z_j the population's residuals (file targets) or z ~ N(0, zeta^2)
 * (model targets), u ~ N(0, 2R) independent of the row, r_j = sqrt(a_j) u - z_j:
 *   mu(R)     = mean_j a_j P(|r_j| <= c / sqrt(a_j))
 *   nu(R) P   = (1/2) mean_j E[min(a_j r_j^2, c^2)],   P = R + zeta^2/2
 * (a_j = 1 with z NULL gives the published closed forms mu_c(P), nu_c(P) of clip.h; the ODE's
 * P = R + zeta^2/2 must use the same zeta^2 as the context, since it multiplies nu back). */
typedef struct {
  const double *a, *z; /* [n] (z NULL: Gaussian label noise of sd zeta) */
  size_t n;
  double c;     /* clipping scale (INFINITY: none); a call's own c replaces it */
  double zeta2; /* the zeta^2 of P = R + zeta^2/2 (mean z^2, or the model's zeta^2) */
  int threads;  /* OpenMP threads; the sum is over fixed chunks added in order */
} dpd__lrdata_factors_ctx;

/* The factors and their derivatives in R (any output may be NULL). The signature of
 * dpd_ode_config.factors (ode.h). Returns 0; 1 for R < 0 or not finite. */
DPD_HIDDEN_FN int dpd__lrdata_factors(void *ctx, double c, double R, double *mu, double *nu, double *dmu_dR,
                                      double *dnu_dR);

/* ---- the simulation on the rows (data_sim.c) ----
 * cfg's n (rows per replicate, <= n_pop, drawn without replacement, in the drawn order), c, rho,
 * seeds, seed, grid, threads, progress; zeta and noise for model targets (file targets ignore
 * them, but they are validated as by dpd_linreg_sim_run). Replicate r uses stream (seed, r):
 * first the n row indices (a partial Fisher-Yates shuffle of the population driven by the first
 * n uniforms), then per step one Gaussian fill of, in this order, the label-noise Gaussian (model
 * targets) and the privacy noise (d Gaussians when sigma_k > 0); the exact rule is in data_sim.c.
 * Replicates redraw the rows and the noise. The risks are R(theta) = (1/2)(theta - theta^*)^T
 * Sigma^ (theta - theta^*) on the grid (before release) and of the released iterate; with held-out
 * rows, test_risk[r] = (1/2) mean over them of (x^T theta_n - y)^2 (released; model targets: the
 * label-noise-free target plus zeta^2/2). theta_star: [d] original coordinates (model targets:
 * given, the labels are drawn, D's targets are not read), NULL for file targets (theta^* =
 * D->theta_hat). test_risk: [cfg->seeds] caller's, or NULL; set on DPD_OK only (NAN when
 * D->n_test = 0). Reads D->X, Y, pop_idx, test_idx, mean, scale, y_mean, y_scale, sigma and
 * theta_hat only. *out is returned-owned (dpd_linreg_sim_result_free), the same result as
 * dpd_linreg_sim_run's (setting from cfg). Returns DPD_EINVAL as dpd_linreg_sim_run does and
 * for n > n_pop, an incomplete dataset, or file targets without theta^* (or D->model_targets
 * with theta_star NULL); DPD_ENONFINITE naming the replicate and the step; DPD_ECANCELLED;
 * DPD_ENOMEM. Bit-identical for any thread count and kernel path. */
DPD_HIDDEN_FN int dpd__lrdata_sim_run(const dpd__lrdata *D, const double *theta_star,
                                      const dpd_schedule *schedule,
                                      const dpd_linreg_sim_config *cfg,
                                      dpd_linreg_sim_result **out, double *test_risk,
                                      dpd_err *err);

/* dpd__lrdata_sim_run's replicates rep0 .. rep0 + cfg->seeds - 1 (streams (cfg->seed, rep)),
 * file targets (theta^* = D->theta_hat), keeping only each replicate's released iterate theta_n
 * (original coordinates): row i of thetas[cfg->seeds * D->d] (caller's) is replicate rep0 + i.
 * The same run as dpd__lrdata_sim_run replicate by replicate (the privacy audit runs the
 * library's own DP-SGD); same statuses. */
DPD_HIDDEN_FN int dpd__lrdata_sim_thetas(const dpd__lrdata *D, const dpd_schedule *schedule,
                                         const dpd_linreg_sim_config *cfg, size_t rep0,
                                         double *thetas, dpd_err *err);

/* Memory of dpd__lrdata_sim_run beyond the dataset (bytes), for the memory check: n = cfg->n
 * (steps; the per-thread row shuffle is bounded in n whatever n_pop), threads = the threads
 * that will run (at most seeds). */
DPD_HIDDEN_FN double dpd__lrdata_sim_bytes(size_t d, size_t n, size_t seeds, size_t grid,
                                           double threads);

#endif
