/* The data-reconstruction attack on random features: from released parameters theta, find n
 * inputs whose features span theta (docs/overparameterization.md, "Reconstruction").
 * SPDX-License-Identifier: MIT
 *
 * References: M. Mondelli, lectures on overparameterization and privacy (seed 004, "How many
 * parameters to reconstruct training data?"): for f(x) = phi(V x)^T theta with V_jk ~ N(0, 1/d),
 * inputs on the sphere |x| = sqrt(d), p = Omega~(n d) and phi with phi_0 = phi_2 = 0,
 * phi_1 != 0 and two non-zero Hermite coefficients of order >= 3 of different parity
 * (assumption B2), every X_hat with phi(V x_i) in span{phi(V x_hat_1), ..., phi(V x_hat_n)}
 * has each row within o(sqrt(d)) of a training input; the attack replaces the unknown
 * phi(V x_i) by theta* = Phi^T (Phi Phi^T)^{-1} y, a combination of them, and minimises
 *
 *   L(X_hat) = |P-perp_{Phi(X_hat)} theta|^2 / |theta|^2   over |x_hat_i| = sqrt(d),
 *   Phi(X_hat) = phi(X_hat V^T) (n x p).
 *
 * With a = (Phi Phi^T + lambda I)^{-1} Phi theta and r = theta - Phi^T a, this file minimises
 * the ridge form L = (|r|^2 + lambda |a|^2) / |theta|^2 (lambda = ridge p, a constant: the n x n
 * Cholesky solve stays defined when two rows of X_hat coincide); a minimises the numerator, so
 * by the envelope theorem dL/dPhi = -2 a r^T / |theta|^2 exactly, and
 *   dL/dX_hat = ((dL/dPhi) .* phi'(X_hat V^T)) V.
 * lambda -> 0 gives |P-perp theta|^2 / |theta|^2. The constraint |x_hat_i| = sqrt(d) is kept
 * exactly by the parametrisation x_hat_i = sqrt(d) z_i / |z_i| (z free; the gradient is
 * projected on the tangent space of each sphere and scaled by sqrt(d) / |z_i|). Minimiser: GSL's
 * gsl_multimin_fdfminimizer_vector_bfgs2 over the n d entries of z, from `restarts` random
 * starts, keeping the best.
 *
 * Reproducibility: restart k starts from the rows of dpd_rng_gaussian_fill of n d values of
 * stream (cfg.seed, cfg.stream + k), each row rescaled to norm sqrt(d). The products are
 * OpenBLAS calls (cblas_dgemm, cblas_dsyrk, cblas_dgemv) and LAPACKE_dposv: the results are the
 * same bits for a fixed seed when OpenBLAS runs on one thread (the CLI sets it so), whatever
 * the number of OpenMP threads calling. */
#ifndef DPD_RF_RECONSTRUCT_H
#define DPD_RF_RECONSTRUCT_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/rf.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The feature map x -> phi(V x) of the released model. */
typedef struct {
  const double *V; /* [p * d] row-major (borrowed; must outlive every use) */
  size_t p, d;
  dpd_rf_activation activation;
} dpd_rf_features;

/* Defaults (dpd_rf_reconstruct_config_default). */
#define DPD_RF_RECONSTRUCT_RESTARTS 8
#define DPD_RF_RECONSTRUCT_MAX_ITER 2000
#define DPD_RF_RECONSTRUCT_GTOL 1e-9
#define DPD_RF_RECONSTRUCT_STOP_LOSS 1e-8
#define DPD_RF_RECONSTRUCT_RIDGE 1e-10
#define DPD_RF_RECONSTRUCT_STEP 0.5
#define DPD_RF_RECONSTRUCT_LINE_TOL 0.1
#define DPD_RF_RECONSTRUCT_STALL_WINDOW 200
#define DPD_RF_RECONSTRUCT_STALL_TOL 1e-3
/* First stream of the random starts: far from the simulator's (seed, r) and the problem's
 * streams (2^64 - 1 downwards, rf.h). */
#define DPD_RF_RECONSTRUCT_STREAM ((uint64_t)1 << 60)

typedef struct {
  size_t restarts;     /* random starts, >= 1 */
  size_t max_iter;     /* BFGS iterations per start, >= 1 */
  double gtol;         /* a start stops when |dL/dz| < gtol (gsl_multimin_test_gradient), >= 0 */
  double stop_loss;    /* no further start once the best loss is below it (>= 0; 0: run all) */
  double ridge;        /* lambda = ridge p, finite > 0 */
  double step;         /* BFGS's first trial step (in units of the inputs' entries), finite > 0 */
  double line_tol;     /* BFGS's line-search tolerance, in (0, 1) */
  size_t stall_window; /* a start stops when its loss fell by less than stall_tol times the loss
                          of stall_window iterations before (0: never; a plateau, as when the
                          released theta is mostly noise) */
  double stall_tol;    /* finite >= 0 */
  uint64_t seed;       /* the starts' streams (above) */
  uint64_t stream;     /* restart k uses stream (seed, stream + k) */
} dpd_rf_reconstruct_config;

/* restarts 8, max_iter 2000, gtol 1e-9, stop_loss 1e-8, ridge 1e-10, step 0.5, line_tol 0.1,
 * stall_window 200, stall_tol 1e-3, seed 1, stream DPD_RF_RECONSTRUCT_STREAM. */
DPD_API dpd_rf_reconstruct_config dpd_rf_reconstruct_config_default(void);

/* The loss's workspace for n rows (opaque; every buffer allocated at create). */
typedef struct dpd_rf_reconstruct_work dpd_rf_reconstruct_work;

/* Makes the workspace for n reconstructed rows of the features `f` (borrowed: V must outlive
 * the workspace). *out is returned-owned (dpd_rf_reconstruct_work_free). DPD_EINVAL for n,
 * p or d < 1, a NULL V, ridge not finite > 0, an unknown activation; DPD_ENOMEM. */
DPD_API int dpd_rf_reconstruct_work_create(const dpd_rf_features *f, size_t n, double ridge,
                                           dpd_rf_reconstruct_work **out, dpd_err *err);
/* Releases the workspace; NULL is allowed. */
DPD_API void dpd_rf_reconstruct_work_free(dpd_rf_reconstruct_work *w);

/* The loss L(X_hat) (above) at X[0..n d) (row-major, any norms: the loss does not rescale) for
 * theta[0..p) (|theta| > 0), and its gradient grad[0..n d) with respect to X (NULL: none).
 * *residual (may be NULL) receives |r|^2 / |theta|^2 without the ridge term. Returns NAN when
 * the Cholesky factorisation fails (rows with non-finite features). Not thread-safe on one
 * workspace; distinct workspaces may be used from distinct threads. */
DPD_API double dpd_rf_reconstruct_loss_eval(dpd_rf_reconstruct_work *w, const double *theta,
                                            const double *X, double *grad, double *residual);

/* What dpd_rf_reconstruct_run reports. */
typedef struct {
  double loss;         /* the best start's final L */
  double residual;     /* its |P-perp theta|^2 / |theta|^2 (ridge term left out) */
  size_t best_restart; /* which start it was */
  size_t restarts_run; /* starts run (fewer than restarts when stop_loss was reached) */
  size_t iterations;   /* BFGS iterations, all starts */
  size_t evaluations;  /* loss-and-gradient evaluations, all starts */
} dpd_rf_reconstruct_info;

/* The attack: n rows X_hat[0..n d) (caller memory, row-major, each of norm sqrt(d)) minimising
 * L for theta[0..p) (borrowed). Returns DPD_EINVAL naming the field (restarts, max_iter, gtol,
 * stop_loss, ridge, step, line_tol, stall_tol) or theta = 0; DPD_ENOMEM; DPD_ESOLVER when every
 * start failed. A start whose iteration fails (GSL_ENOPROG, a non-finite loss) keeps its last
 * point. Prints nothing. Thread-safe (one workspace per call). */
DPD_API int dpd_rf_reconstruct_run(const dpd_rf_features *f, const double *theta, size_t n,
                                   const dpd_rf_reconstruct_config *cfg, double *X_hat,
                                   dpd_rf_reconstruct_info *info, dpd_err *err);

/* The attack's score against the training inputs. */
typedef struct {
  double reconstructed_fraction; /* training points with some reconstruction at |cosine| >=
                                    threshold, over n */
  double matched_fraction;       /* the same in the one-to-one matching (duplicates count once) */
  double matching_error;         /* mean over the n training points of |x_hat - s x| / sqrt(d)
                                    in the one-to-one matching, s = sign of the cosine */
  double sign_flip_fraction;     /* among matched pairs at |cosine| >= threshold, those with a
                                    negative cosine (a reconstruction of -x_i), over them (NAN
                                    when there is none) */
  double cosine_mean;            /* mean over the n training points of |cosine| with their
                                    partner (0 without one) */
} dpd_rf_reconstruct_score;

/* Matches the n_hat rows of X_hat to the n rows of X (both row-major, d columns) greedily by
 * |cosine|: repeatedly the pair with the largest |cosine| among rows of both not yet matched
 * (ties: lowest training index, then lowest reconstruction index), min(n, n_hat) pairs; a
 * training point left without a partner has error |x| / sqrt(d) and cosine 0. match[0..n)
 * (may be NULL) receives each training point's reconstruction (SIZE_MAX: none), cosine[0..n)
 * (may be NULL) its signed cosine. Pure; DPD_EINVAL for n, n_hat or d < 1 or a threshold
 * outside (0, 1]; DPD_ENOMEM. */
DPD_API int dpd_rf_reconstruct_score_eval(const double *X_hat, size_t n_hat, const double *X,
                                          size_t n, size_t d, double threshold,
                                          dpd_rf_reconstruct_score *score, size_t *match,
                                          double *cosine, dpd_err *err);

/* The training inputs X[0..n d) of the problem of cfg (gaussian or sphere input) regenerated from
 * its stream (rf.h: stream (seed, 2^64 - 1 - DPD_RF_DRAW_STREAMS draw - 2), one
 * dpd_rng_gaussian_fill of n d values, sphere rows rescaled to norm sqrt(d)): the rows that
 * dpd_rf_problem_create used, which the problem does not keep. Returns DPD_EINVAL naming
 * 'input' for input = file (its rows are pr->rows of the data). Pure. */
DPD_API int dpd_rf_reconstruct_inputs_get(const dpd_rf_config *cfg, double *X, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RF_RECONSTRUCT_H */
