/* DP-SGD for linear classifiers on features (issue 29; docs/dpsgd.md): the trainer shared by
 * model=semipriv (trainer=dpsgd) and model=nc (trainer=dpsgd).
 * SPDX-License-Identifier: MIT
 *
 * References: Abadi et al., "Deep learning with differential privacy", CCS 2016 (DP-SGD:
 * per-sample clipping, Gaussian noise, Poisson subsampling); the accountant of account.h.
 *
 * ---- The model and the losses ------------------------------------------------------------------
 * Features x in R^d (rows of a dense row-major n x d matrix), labels y in {0, .., K-1}.
 * Parameters: R rows of d weights and, with `bias`, one intercept per row (W: R x (d + bias),
 * row-major, row r = (w_r, b_r)); the score of row r is s_r = w_r . x + b_r.
 *  - SOFTMAX (multi-class cross-entropy): R = K, loss -log softmax(s)_y; residual
 *    r = softmax(s) - e_y (K values); prediction argmax_r s_r (the first index of the largest).
 *  - HINGE (binary, K = 2): R = 1, y~ = +1 for label 1 and -1 for label 0, loss
 *    max(0, 1 - y~ s); residual r = -y~ 1{y~ s < 1}; prediction 1 if s > 0 else 0.
 *  - LOGISTIC (binary, K = 2): R = 1, loss log(1 + e^{-y~ s}); residual r = -y~ / (1 + e^{y~ s}).
 * The per-sample gradient is the outer product g_i = r_i (x_i, 1)^T (the 1 with `bias`), so its
 * norm is |r_i| sqrt(|x_i|^2 + bias), computed without forming g_i.
 *
 * ---- One step (s = 0 .. T-1) ----------------------------------------------------------------------
 *   B_s = the batch (POISSON: each record independently with probability q; FIXED: a uniformly
 *         random subset of `batch` records, independent across steps),
 *   c_i = min(1, clip / |g_i|)  (c_i = 1 when g_i = 0),
 *   W  <- W - lr_s / b (sum_{i in B_s} c_i g_i + noise_multiplier clip xi_s),  xi_s ~ N(0, I),
 * b = q n (POISSON, the expected batch) or `batch` (FIXED): the sum is divided by a constant, never
 * by the drawn batch size (whose size is private). lr_s = lr dpd_schedule_eval(schedule, s / T)
 * (schedule NULL: lr). W_0 = 0. The released parameters are the last W; every iterate is
 * accounted (the accountant's epsilon is an upper bound for the last iterate).
 * T = `steps`, or ceil(epochs / q) when steps = 0 (q = batch / n for FIXED).
 *
 * ---- Privacy ------------------------------------------------------------------------------------
 * Each step is the subsampled Gaussian mechanism on a sum of contributions of norm <= clip with
 * noise multiplier z: POISSON under add/remove neighbours, FIXED under replace-one neighbours
 * (account.h: SUBSAMPLED, POISSON or FIXED). dpd_dpsgd_calibrate gives the smallest z (relative
 * 1e-4, rounded up) whose PLD upper bound of eps(delta) over T steps is <= the target: never above.
 *
 * ---- Random numbers (stream rule of rng.h) ---------------------------------------------------------
 * The caller gives a stream (seed, stream) and a region tag (0 .. 3). Step s (s < 2^29) uses
 *   block tag 2^62 + (2 s) 2^32:     one dpd_rng_uniform_fill of n values u_i (in chunks of even
 *                                    length, which equals one fill); POISSON: i in B_s iff
 *                                    u_i < q; FIXED: selection sampling in index order, i in B_s
 *                                    iff u_i (n - i) < batch - (records already selected);
 *   block tag 2^62 + (2 s + 1) 2^32: one dpd_rng_gaussian_fill of R (d + bias) values xi_s
 *                                    (row-major like W).
 * So a run depends on (seed, stream, tag) and its inputs alone.
 *
 * ---- Bits and speed ---------------------------------------------------------------------------
 * Scores are fixed-order dot products (dpd__dot8), the gradient sum runs over the batch in index
 * order, one sequential sum per entry of W; the kernels are compiled for scalar, AVX2 and AVX-512
 * (isa_impl.h) with -ffp-contract=off: the same bits on every path and every CPU (no BLAS call,
 * whose last bits depend on OpenBLAS's kernels and blocking). The work of a step is that of the
 * two products S = X_B W^T (scores) and G = R_B^T X_B (gradient), read row by row from X (no copy
 * of the batch). One training is sequential; run replicates in parallel. */
#ifndef DPD_DPSGD_H
#define DPD_DPSGD_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/account.h"
#include "dpdyn/replicate.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_DPSGD_SOFTMAX = 0, /* K classes, cross-entropy */
  DPD_DPSGD_HINGE = 1,   /* K = 2 */
  DPD_DPSGD_LOGISTIC = 2 /* K = 2 */
} dpd_dpsgd_loss;

typedef enum {
  DPD_DPSGD_POISSON = 0, /* each record with probability q (add/remove neighbours) */
  DPD_DPSGD_FIXED = 1    /* `batch` records without replacement (replace-one neighbours) */
} dpd_dpsgd_sampling;

/* "ce" (SOFTMAX), "hinge", "logistic" / "poisson", "fixed"; NULL out of range. Static storage. */
DPD_API const char *dpd_dpsgd_loss_name(dpd_dpsgd_loss loss);
DPD_API const char *dpd_dpsgd_sampling_name(dpd_dpsgd_sampling s);

typedef struct {
  dpd_dpsgd_loss loss;
  size_t classes;              /* K >= 2 (HINGE, LOGISTIC: 2) */
  int bias;                    /* 1: an intercept per row (default), 0: none */
  dpd_dpsgd_sampling sampling; /* POISSON (default) or FIXED */
  double q;                    /* POISSON: the sampling rate, (0, 1] */
  size_t batch;                /* FIXED: the batch size, [1, n] */
  double epochs;               /* > 0: T = ceil(epochs / q) when steps = 0 */
  size_t steps;                /* T >= 1; 0: from epochs. T < 2^29 */
  double lr;                   /* learning rate, finite > 0 */
  const dpd_schedule *schedule; /* borrowed; NULL: constant lr. lr_s = lr eta~(s / T) */
  double clip;                 /* the clipping norm, finite > 0 */
  double noise_multiplier;     /* z, finite >= 0 (0: non-private, the same steps) */
  uint64_t seed, stream;       /* the random stream (see above) */
  unsigned tag;                /* its region tag, 0 .. 3 */
  dpd_progress_fn progress;    /* NULL: none; else called after every step with (user, s + 1,
                                  T); a non-zero return stops the training (DPD_ECANCELLED) */
  void *progress_user;
} dpd_dpsgd_config;

/* softmax, 2 classes, bias 1, poisson, q 0.01, batch 0, epochs 10, steps 0, lr 1, no schedule,
 * clip 1, noise multiplier 0, seed 1, stream 0, tag 0, no progress callback. */
DPD_API dpd_dpsgd_config dpd_dpsgd_config_default(void);

/* Checks cfg for a data set of n records of dimension d (before any work). DPD_EINVAL names the
 * key: 'loss', 'classes' (< 2, or != 2 with a binary loss), 'q' (outside (0, 1]), 'batch' (0 or
 * > n), 'epochs' (<= 0 with steps = 0), 'steps' (T >= 2^29), 'lr', 'clip', 'noise_multiplier',
 * 'tag', 'n' (0), 'd' (0, or R (d + bias) >= 2^33). */
DPD_API int dpd_dpsgd_check(const dpd_dpsgd_config *cfg, size_t n, size_t d, dpd_err *err);

/* T of cfg for n records (0 when cfg is invalid). Pure. */
DPD_API size_t dpd_dpsgd_steps(const dpd_dpsgd_config *cfg, size_t n);

/* The accountant's description of cfg's run on n records (segments: one segment, owned by the
 * caller: *seg is filled and a->segments points to it) at noise multiplier z. */
DPD_API void dpd_dpsgd_account_of(const dpd_dpsgd_config *cfg, size_t n, double z,
                                  dpd_account *a, dpd_account_segment *seg);

/* The smallest noise multiplier (relative 1e-4, rounded up) whose PLD upper bound of eps(delta)
 * for cfg's T steps on n records is <= epsilon: *z and `at` (NULL allowed; at->epsilon <=
 * epsilon). epsilon = inf: *z = 0, `at` untouched. DPD_EINVAL names 'epsilon' or 'delta' (also
 * when no z <= 1e6 meets the target), or cfg's key (dpd_dpsgd_check). */
DPD_API int dpd_dpsgd_calibrate(const dpd_dpsgd_config *cfg, size_t n, double epsilon,
                                double delta, double *z, dpd_account_result *at, dpd_err *err);

/* A trained linear classifier and what its training saw. */
typedef struct {
  dpd_dpsgd_loss loss;
  size_t classes, d, rows; /* rows R = classes (SOFTMAX) or 1 */
  int bias;
  double *W;               /* [R (d + bias)] row-major */
  size_t steps;            /* T */
  double mean_batch;       /* the drawn batch sizes' mean */
  double clipped_fraction; /* fraction of the per-sample gradients in the batches with |g| > clip */
  double noise_multiplier, clip, lr;
  double train_loss;       /* mean loss over the n training records at the last W */
  double train_accuracy;   /* fraction of them classified correctly */
} dpd_dpsgd_model;

/* Trains on X (n x d row-major, borrowed) with labels y[i] in 0 .. K-1 (borrowed). *out is
 * returned-owned (dpd_dpsgd_model_free). DPD_EINVAL: cfg (dpd_dpsgd_check) or a label outside
 * 0 .. K-1 ('labels', naming the row); DPD_ENOMEM; DPD_ENONFINITE when W stops being finite
 * (naming the step); DPD_ECANCELLED when cfg->progress returns non-zero.
 * Memory: R (d + bias) doubles for W and the gradient, the noise and n uniforms in chunks. Pure
 * apart from the allocation: the same inputs give the same bits on every path and CPU. Prints
 * nothing. */
DPD_API int dpd_dpsgd_train(const dpd_dpsgd_config *cfg, const double *X, const int32_t *y,
                            size_t n, size_t d, dpd_dpsgd_model **out, dpd_err *err);

/* Releases a model; NULL is allowed. */
DPD_API void dpd_dpsgd_model_free(dpd_dpsgd_model *m);

/* The accuracy and mean loss of `m` on m_rows rows of X (m_rows x d row-major) with labels y
 * (either output may be NULL). Labels outside 0 .. K-1 count as errors. Pure. */
DPD_API void dpd_dpsgd_evaluate(const dpd_dpsgd_model *m, const double *X, const int32_t *y,
                                size_t m_rows, double *accuracy, double *loss);

/* Predicted labels of m_rows rows into pred (caller memory). Pure. */
DPD_API void dpd_dpsgd_predict(const dpd_dpsgd_model *m, const double *X, size_t m_rows,
                               int32_t *pred);

#ifdef __cplusplus
}
#endif
#endif /* DPD_DPSGD_H */
