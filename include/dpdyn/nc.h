/* Neural collapse: the last-layer problem and its NoisyGD simulator (docs/math.md §3.1-3.2).
 * SPDX-License-Identifier: MIT
 *
 * References: Wang, Zhu, Su & Wang, "Neural Collapse Meets Differential Privacy: Curious
 * Behaviors of NoisyGD with Near-perfect Representation Learning", arXiv:2405.08920 (v3), §2-5
 * and App. D; Papyan, Han & Donoho, PNAS 117 (2020) (the simplex ETF); notes-rf-nc-sp.md B.1-B.5.
 *
 * Features. K >= 2 classes in R^p, p >= K. The simplex ETF
 *   M = sqrt(K / (K - 1)) P (I_K - 1 1^T / K)        (p x K, columns M_k: |M_k| = 1,
 *                                                     M_j^T M_k = -1/(K-1), sum_k M_k = 0)
 * with P = [e_1 .. e_K] (etf = sparse) or P = the Q factor (LAPACKE_dgeqrf + dorgqr, signs as
 * LAPACK returns them) of a p x K Gaussian matrix (etf = dense).
 * Training sample i of class y_i:  x_i = M_{y_i} + nu + v_i,   test point of class k:
 * x = M_k + u (no offset at test time; x = M_k + nu + u with offset_at_test), where
 *   nu   = 0, or with offset: the common training offset nu_l = +-offset (a Rademacher sign
 *          pattern of the problem seed, fixed for all replicates), |nu|_inf = offset;
 *   v_i  = 0 (shift = none), i.i.d. uniform on [-beta, beta] per coordinate (cube), or i.i.d.
 *          +-beta (rademacher), independent across samples and replicates;
 *   u    = 0 (test = none), cube or rademacher of size beta_test (i.i.d. per test point),
 *          gaussian: i.i.d. N(0, beta_test^2) per coordinate (beta_test is the standard
 *          deviation), or
 *          adversarial: for the trained W and the class k, let
 *            a_j = (W_j - W_k)^T M_k + beta_test |W_j - W_k|_1     (j != k)
 *          (the largest wrong-class margin over |u|_inf <= beta_test, attained at
 *          u = beta_test sign(W_j - W_k), sign(0) = 0); j* = the first argmax of a_j, and
 *          u = beta_test sign(W_j* - W_k). The point is then classified like any other.
 * Prediction: the first index of the largest logit of W x; an error when it is not the class.
 *
 * Class sizes (training with n, test with n_test, same rule): weights w_k = imbalance_ratio for
 * the first K - m classes and 1 for the last m = floor(imbalance_fraction K + 1e-9) classes;
 * n_k = floor(n w_k / sum w), and the remainder n - sum n_k adds one sample to each of classes
 * 0, 1, ... in order. Balanced (ratio 1 or fraction 0): n / K each, remainder to the first
 * classes. Example: K = 10, n = 10^4, ratio 9, fraction 0.5: 5 classes x 1800, 5 x 200.
 * Samples are ordered by class: samples 0..n_0-1 are class 0, and so on (test points alike).
 *
 * Random numbers (stream rule of rng.h). The problem uses stream (problem seed,
 * DPD_RNG_STREAM_PROBLEM): the Gaussian matrix of P (one dpd_rng_gaussian_fill of p K values,
 * column-major, from block 0) and the offset signs (one dpd_rng_uniform_fill of p values from
 * block 2^32; nu_l = -offset when u_l < 1/2, +offset otherwise), and with pca_k the public
 * sample of nc_pca.h (point i: region tag 1, index i, block 2^62 + i 2^32). Replicate r of a
 * simulation with seed s uses stream (s, r), cut into regions that start at block tag 2^62 + index
 * 2^32      (index < 2^30; each region holds 2^32 blocks): tag 0, index i: training shift v_i: one
 * dpd_rng_uniform_fill of p values u_l, cube v_l = beta (2 u_l - 1), rademacher v_l = -beta if u_l
 * < 1/2 else beta; tag 1, index j: test shift of test point j, the same way with beta_test
 * (gaussian: one dpd_rng_gaussian_fill of p values g_l, u_l = beta_test g_l, from the same region);
 * tag 2, index t: the noise of step t: dpd_rng_gaussian_fill of K p values (row-major K x p, drawn
 * in chunks of even length, which equals one fill). A fill may start at an even coordinate a of a
 * region (block a / 2): the passes over the data draw each point in chunks of 1024 coordinates,
 * which give the values of one fill. So a replicate redraws the training shifts, the noise and the
 * test shifts; P, nu and the class sizes are fixed by the problem. No n x p matrix is ever stored:
 * a sample's features are regenerated from its region whenever a pass over the data needs them
 * (each step makes one pass at W = 0, two passes afterwards: logits and norms, then the gradient;
 * the test makes one). Passes go chunk of coordinates by chunk (outer) and point by point (inner),
 * and every sum over points runs in index order, so the bits depend only on the problem, the seed
 * and the replicate.
 *
 * Binary K = 2: the same K-class code. The papers' theta in R^p corresponds to W_1 - W_2
 * (decision sign((W_1 - W_2)^T x)); with the sparse ETF M_1 = -M_2 = (e_1 - e_2) / sqrt(2).
 * One CE step at W = 0 gives W_1 - W_2 = eta (sum_i s_i x_i - sigma (Xi_1 - Xi_2)), s_i = +-1 by
 * class: the papers' theta_hat = eta (sum_i y_i x_i + N(0, 2 sigma^2 I)), so with the exact
 * G = 1/sqrt(2) the perfect-collapse error is Phi(-n sqrt(2 rho)) (notes B.5). */
#ifndef DPD_NC_H
#define DPD_NC_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/dpsgd.h"
#include "dpdyn/replicate.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DPD_NC_ETF_SPARSE = 0, DPD_NC_ETF_DENSE } dpd_nc_etf;

typedef enum {
  DPD_NC_SHIFT_NONE = 0,
  DPD_NC_SHIFT_CUBE,        /* i.i.d. uniform on [-b, b] per coordinate */
  DPD_NC_SHIFT_RADEMACHER,  /* i.i.d. +-b per coordinate */
  DPD_NC_SHIFT_ADVERSARIAL, /* test only: the worst u for the trained W (see above) */
  DPD_NC_SHIFT_GAUSSIAN     /* test only: u ~ N(0, b^2 I), i.i.d. per coordinate (seed 000
                               §5.2's perturbed test features: variance 0.1 is b = sqrt(0.1)) */
} dpd_nc_shift;

typedef enum {
  DPD_NC_LOSS_CE = 0, /* cross-entropy: per-sample gradient (softmax(W x) - e_y) x^T */
  DPD_NC_LOSS_SQUARE  /* (1/2) |W x - e_y|^2: per-sample gradient (W x - e_y) x^T */
} dpd_nc_loss;

/* Feature normalisation (seed section 4, notes B.4), applied per replicate to the training
 * features and the test points:
 *   center: x -> x - mu, mu = (1/n) sum_j x_j the training mean of the replicate (computed
 *           from the class sums in one streaming pass; one p-vector stored), subtracted from
 *           every training AND test point (mu is a function of the private data);
 *   l2:     every training feature x -> x / |x| (a zero feature is left as it is); test points
 *           are not rescaled: a positive rescaling does not change the argmax of W x.
 *   center_l2: both: x -> (x - mu) / |x - mu| for training points (mu the raw training mean);
 *           test points x -> x - mu (a positive rescaling does not change the argmax).
 *           Its sensitivity grows with n (dpd_nc_sensitivity): mu moves every normalised
 *           feature when one sample is removed. */
typedef enum {
  DPD_NC_NORMALIZE_NONE = 0,
  DPD_NC_NORMALIZE_CENTER,
  DPD_NC_NORMALIZE_L2,
  DPD_NC_NORMALIZE_CENTER_L2 /* x -> (x - mu) / |x - mu| (a zero vector is left as it is) */
} dpd_nc_normalize;

typedef struct {
  size_t K;      /* classes, >= 2 */
  size_t p;      /* feature dimension, >= K, p K < 2^33 */
  size_t n;      /* training samples, every class count >= 1, n < 2^30 */
  size_t n_test; /* test points, every class count >= 1, n_test < 2^30 */
  dpd_nc_etf etf;
  double imbalance_ratio;     /* finite >= 1 (1: balanced) */
  double imbalance_fraction;  /* in [0, 1): the last floor(fraction K) classes are the small ones */
  dpd_nc_shift shift;         /* training shifts: none, cube or rademacher */
  double beta;                /* their size, finite >= 0 */
  double offset;              /* |nu|_inf of the common training offset, finite >= 0 (0: none) */
  dpd_nc_shift test_shift;    /* none, cube, rademacher or adversarial */
  double beta_test;           /* its size, finite >= 0 */
  int offset_at_test;         /* non-zero: test points carry the offset too, x = M_k + nu + u
                                 (a feature-extractor bias; what normalize = center cancels) */
  dpd_nc_normalize normalize; /* none, center, l2 or center_l2 (center*: n >= 2) */
  uint64_t seed;              /* problem seed: P (dense) and the offset signs */
} dpd_nc_problem_config;

/* A built problem (transparent; arrays owned by it). */
typedef struct {
  dpd_nc_problem_config cfg; /* copy */
  size_t K, p, n, n_test;
  double *M;               /* [K * p]: row k is the ETF column M_k */
  double *nu;              /* [p] common training offset (zeros when offset = 0) */
  size_t *counts;          /* [K] training class counts */
  size_t *test_counts;     /* [K] test class counts */
  double x_norm_max;       /* sup of |x| over the training feature law (see dpd_nc_sensitivity) */
  double x_norm_max_clean; /* the same without the common offset nu: sup |x - nu| */
  /* Problems on given features (dpd_nc_problem_from_data); zero for the ETF law: */
  int from_data;                     /* non-zero: features are data, not the ETF law */
  struct dpd_nc_data_config_s *data; /* a copy of the data config (borrowed arrays) */
  size_t *order;                     /* [n] row of X of the i-th training sample in class order */
  size_t *test_order; /* [n_test] row of X_test of the j-th test point in class order */
} dpd_nc_problem;

/* Features given as data instead of the ETF law: a user's feature file, or features projected
 * per replicate (PCA). Samples are taken in class order: sample i of the problem is row
 * order[i] of X, the rows of class 0 first, each class in row order (the same for test points).
 * Replicates redraw the noise (and the test perturbation u when test_shift is random); the data
 * themselves are redrawn only through `fill`.
 * Sensitivity: every training row x with |x| > x_bound is scaled to norm x_bound before
 * anything else (feature clipping, part of the mechanism), so X = x_bound in dpd_nc_sensitivity
 * (normalize l2: G = c whatever x_bound). Test rows are not clipped. normalize center and l2 act
 * as for the ETF law (center: mu is the mean of the clipped training rows). Test point j is
 * row + u, u the test perturbation of the ETF law's rule (cube / rademacher / gaussian from region
 * tag 1, index j; adversarial against the trained W). */
typedef struct dpd_nc_data_config_s {
  size_t K, p, n, n_test; /* K >= 2, p >= 1, every class has >= 1 training and test row */
  const double *X;        /* [n p] row-major training features (borrowed, must outlive the
                             problem), or NULL with fill */
  const size_t *y;        /* [n] training labels in 0..K-1 (borrowed) */
  const double *X_test;   /* [n_test p] row-major test features, or NULL with fill */
  const size_t *y_test;   /* [n_test] test labels (borrowed) */
  /* Per-replicate features (X and X_test NULL): fills X [n p] and X_test [n_test p] (row-major,
   * rows in the order of y and y_test) for replicate rep of a run with seed `seed`. Called from
   * worker threads: a pure function of (seed, rep) and user; < 0 with err set on failure. */
  int (*fill)(void *user, uint64_t seed, size_t rep, double *X, double *X_test, dpd_err *err);
  void *user;
  double x_bound; /* public bound R on |x|, finite > 0 (INFINITY only with l2, center_l2) */
  dpd_nc_normalize normalize; /* none, center, l2 or center_l2 (center*: n >= 2) */
  dpd_nc_shift test_shift;    /* none, cube, rademacher or adversarial */
  double beta_test;           /* its size, finite >= 0 */
} dpd_nc_data_config;

/* Builds a problem on given features; cfg and its arrays are borrowed (they must outlive the
 * problem; nothing n x p is copied). DPD_EINVAL names the key ('K', 'p', a label out of range
 * or a class with no row ('labels' / 'test_labels'), a non-finite feature ('features' /
 * 'test_features', with its row and column), 'x_bound', 'normalize', 'beta_test'); DPD_ENOMEM.
 * problem->M holds the class means of the training rows (zeros with fill), problem->nu zeros,
 * x_norm_max = x_norm_max_clean = x_bound. Prints nothing. */
DPD_API int dpd_nc_problem_from_data(const dpd_nc_data_config *cfg, dpd_nc_problem **out,
                                     dpd_err *err);

/* The training class sums of replicate `rep` of the features as the simulator trains on them
 * (clip to x_bound, normalize applied): sums[k p + l] (K p doubles, caller memory), and with
 * normalize = center the training mean mu[0..p) (mu may be NULL otherwise; it is filled with
 * zeros when not centring). Bit-identical to the simulator's first step. Allocates (n + n_test) p
 * doubles only for a problem with fill. DPD_ENOMEM, or the fill's error. */
DPD_API int dpd_nc_train_sums(const dpd_nc_problem *problem, uint64_t seed, size_t rep,
                              double *sums, double *mu, dpd_err *err);

/* Test point j (0 <= j < n_test, class order) of replicate `rep` as the classifier sees it:
 * x[0..p) = M_k (+ nu with offset_at_test) or the test row, plus the random test perturbation
 * (cube / rademacher; none for none and adversarial), minus mu when mu is not NULL (pass the mu
 * of dpd_nc_train_sums under normalize = center). *k receives the class. DPD_EINVAL for a
 * problem with fill (its test points exist only inside a replicate). */
DPD_API int dpd_nc_test_point(const dpd_nc_problem *problem, uint64_t seed, size_t rep, size_t j,
                              const double *mu, double *x, size_t *k, dpd_err *err);

/* Defaults: K = 10, p = 100, n = 1000, n_test = 1000, sparse ETF, balanced (ratio 1, fraction
 * 0), shift none, beta 0, offset 0, test none, beta_test 0, offset_at_test 0, normalize none,
 * seed 1. */
DPD_API dpd_nc_problem_config dpd_nc_problem_config_default(void);

/* Builds the problem; *out is returned-owned (dpd_nc_problem_free). DPD_EINVAL names the key
 * (K < 2, p < K, beta < 0, an unknown or misplaced shift, a class with no sample, sizes too
 * large), DPD_ENOMEM, DPD_ESOLVER when the QR fails. Memory (K + 1) p doubles. Prints nothing. */
DPD_API int dpd_nc_problem_create(const dpd_nc_problem_config *cfg, dpd_nc_problem **out,
                                  dpd_err *err);

/* Releases a problem; NULL is allowed. */
DPD_API void dpd_nc_problem_free(dpd_nc_problem *problem);

/* Class counts of the documented rule for `total` samples into counts[0..K) (caller memory).
 * Returns DPD_EINVAL (naming `what`) when a class would be empty or the rule is invalid. */
DPD_API int dpd_nc_class_counts(size_t K, size_t total, double imbalance_ratio,
                                double imbalance_fraction, const char *what, size_t *counts,
                                dpd_err *err);

/* An l2 sensitivity G of the summed gradient at W = 0 under add/remove-one (pure). With
 * c = sqrt((K - 1) / K) (CE; |softmax(0) - e_y| = c) or c = 1 (square; |0 - e_y| = 1):
 *   normalize none:   G = c X (exact),
 *   normalize l2:     G = c (every feature has norm 1; exact),
 *   normalize center_l2: G = c (2 n - 1) (n the larger data set's size): removing sample j
 *                     removes its unit term (norm <= c) and moves mu, which may turn every other
 *                     unit vector (x_i - mu) / |x_i - mu| by up to 2 (|u - u'| <= 2 for unit u,
 * u'), so each of the n - 1 other terms changes by at most 2 c. Without a lower bound on |x_i - mu|
 * nothing smaller holds for every pair of neighbouring data sets; the noise then grows like the
 * signal (n), and the error does not fall with n. (The seed's re-normalised G_alpha, notes B.4,
 * assumes the collapsed structure of the data, not a worst case over neighbours.) normalize center:
 * G = 2 c X0 (1 + n / (n - 1)),  X0 = sup |x - nu| (an upper bound; n the larger data set's size).
 * Derivation (center): the summed gradient is sum_i c_{y_i} (x_i - mu)^T. Removing sample j
 * (class y) from a set of n with coefficient sum s = sum_i c_{y_i} changes mu to
 * mu' = (n mu - x_j) / (n - 1), so mu - mu' = (x_j - mu) / (n - 1) and the difference is
 *   c_y (x_j - mu')^T - s (x_j - mu)^T / (n - 1),
 * two rank-one terms: |c_y| |x_j - mu'| <= 2 c X and |s| |x_j - mu| / (n - 1) <= 2 c X n / (n - 1)
 * (|s| <= n c). Both x_j - mu' and x_j - mu are differences of points of the law's support,
 * in which the common offset nu cancels: |x_j - mu| <= 2 X0, X0 = sup |x - nu| (x_norm_max_clean;
 * like X, a sup over the support of the feature law, the convention of the whole model). So
 * centring removes the offset's sqrt(p) growth of G. Here X = sup |x| over the training feature law
 * = max_k sqrt(sum_l (|M_kl + nu_l| + b)^2) (b = beta for cube and rademacher shifts, 0 for none;
 * the sup of a convex function over the cube is at a vertex). Binary K = 2 with a sparse ETF and no
 * shift: X = 1, G = 1/sqrt(2) (CE). For steps > 1 the simulator clips every per-sample gradient g_i
 * to G by min(1, G / |g_i|_F), so G bounds the sensitivity at every step (normalize none or l2;
 * with center the clip bounds each sample's own term, not the change of mu in every other term: the
 * bound above holds for steps = 1 only). */
DPD_API double dpd_nc_sensitivity(const dpd_nc_problem *problem, dpd_nc_loss loss);

/* The same formulas from a feature bound alone: X = sup |x| (X0 = sup |x - nu|; for features
 * without an offset X0 = X), n the data set's size, K the classes. dpd_nc_sensitivity(pr, loss)
 * = dpd_nc_sensitivity_bound(K, n, x_norm_max, x_norm_max_clean, normalize, loss). For file
 * features with a public bound R: X = X0 = R. Pure; NAN for K < 2 or n < 1. */
DPD_API double dpd_nc_sensitivity_bound(size_t K, size_t n, double X, double X0,
                                        dpd_nc_normalize normalize, dpd_nc_loss loss);

/* Raw training features (normalize not applied) of sample i (0 <= i < n, class order) of
 * replicate `rep` of a run with seed `seed`:
 * x[0..p) = M_{y_i} + nu + v_i (caller memory); returns y_i. A problem on data: the row
 * order[i] of X, unclipped; with fill: returns K and leaves x alone (use dpd_nc_train_sums). Pure.
 */
DPD_API size_t dpd_nc_train_sample(const dpd_nc_problem *problem, uint64_t seed, size_t rep,
                                   size_t i, double *x);

/* Training class sums of replicate `rep` (what the exact one-step error needs; B.5), of the
 * raw features (normalize is not applied):
 * sums[k p + l] = sum_{i: y_i = k} x_il (caller memory, K p doubles); the counts are
 * problem->counts (the class means are sums / counts). Samples are added in index order
 * per coordinate (shift none: n_k (M_k + nu), the simulator's own shortcut); the same pass as
 * the simulator's first step, so bit-identical to it. Pure; O(n p) time, no heap memory. */
DPD_API void dpd_nc_class_sums(const dpd_nc_problem *problem, uint64_t seed, size_t rep,
                               double *sums);

typedef struct {
  size_t steps;     /* T, >= 1 */
  double eta;       /* step size, finite > 0 (the argmax at T = 1 does not depend on it) */
  dpd_nc_loss loss; /* ce or square */
  double radius;    /* projection onto {|W|_F <= radius} after each step; INFINITY: none */
  double sigma;     /* noise standard deviation on the summed gradient, finite >= 0 */
  double clip;      /* per-sample clip (steps > 1 only): 0 = dpd_nc_sensitivity(problem,
                       loss), > 0 a given value, INFINITY none */
  size_t seeds;     /* replicates, >= 1 */
  uint64_t seed;    /* replicate r uses stream (seed, r) */
  int threads;      /* OpenMP threads over replicates (<= 0: all); results do not depend on it */
  dpd_progress_fn progress; /* replicates done (total seeds), calling thread only; non-zero
                               return stops the run (DPD_ECANCELLED) */
  void *progress_user;      /* passed to progress (borrowed) */
} dpd_nc_sim_config;

/* Update, from W_0 = 0 (K x p):
 *   W_{t+1} = Proj_radius( W_t - eta ( sum_i c_i g_i(W_t) + sigma Xi_t ) ),
 * g_i the per-sample gradient of the loss, c_i = min(1, clip / |g_i|_F) for steps > 1 and 1 for
 * steps = 1, Xi_t i.i.d. N(0, 1) entries (region tag 2 of the stream). Step 0 adds the samples
 * of a class as class sums (the per-sample coefficient depends only on the class at W = 0
 * unless clipping weights differ); with shift none the n_k identical samples of a class count
 * as n_k times one sample. */
typedef struct {
  size_t seeds, K, n_test;
  double test_error;              /* mean over replicates of the test misclassification rate */
  double test_error_se;           /* its standard error (sample sd / sqrt(seeds)) */
  double *class_error;            /* [K] mean over replicates of the class-k test error */
  double *class_error_se;         /* [K] */
  double *test_error_replicates;  /* [seeds] */
  double *class_error_replicates; /* [seeds * K] row-major by replicate */
  double *w_norm_replicates;      /* [seeds] |W_T|_F */
  double w_norm;                  /* mean of |W_T|_F */
  double w_norm_se;
  double sigma; /* as configured (dpd_nc_dpsgd_run: noise_multiplier clip) */
  double clip;  /* the clip used (INFINITY: none; steps = 1 never clips) */
  double G;     /* dpd_nc_sensitivity(problem, loss) (dpd_nc_dpsgd_run: the clip) */
  /* dpd_nc_dpsgd_run only (NULL from dpd_nc_sim_run), [seeds] each, dpd_dpsgd_model's: */
  double *clipped_fraction_replicates; /* fraction of the batches' gradients clipped */
  double *mean_batch_replicates;       /* the drawn batch sizes' mean */
  double *train_loss_replicates;       /* mean CE over the training rows at the last W */
} dpd_nc_sim_result;

/* Defaults: steps 1, eta 1, ce, radius INFINITY, sigma 0, clip 0 (= G), seeds 8, seed 1,
 * threads 0, no progress. */
DPD_API dpd_nc_sim_config dpd_nc_sim_config_default(void);

/* Runs cfg->seeds replicates on `problem` (borrowed). *out is returned-owned
 * (dpd_nc_sim_result_free). DPD_EINVAL names the key; DPD_ENOMEM; DPD_ENONFINITE when W
 * diverges; DPD_ECANCELLED on a stop request. Bit-identical for any thread count. Memory per
 * thread (2 K + 1) p + (K + 1) max(n, n_test) + K^2 + 4 K + 5120 doubles (W, gradient, a point,
 * per-point logits and norms, chunks); the problem holds (K + 1) p; nothing n x p. Prints
 * nothing. Thread-safe. */
DPD_API int dpd_nc_sim_run(const dpd_nc_problem *problem, const dpd_nc_sim_config *cfg,
                           dpd_nc_sim_result **out, dpd_err *err);

/* Releases a result; NULL is allowed. */
DPD_API void dpd_nc_sim_result_free(dpd_nc_sim_result *res);

/* ---- DP-SGD on the last layer (trainer = dpsgd; docs/nc.md, "DP-SGD trainer and the
 * real-feature protocol") ----------------------------------------------------------------------
 * Replicate r: the replicate's n training features exactly as the NoisyGD simulator sees them
 * (its training shifts, the feature clip to x_bound, normalize, the PCA projection) are written
 * into an n x p matrix in class order, and dpd_dpsgd_train (dpsgd.h) trains a linear layer
 * W (K x p, no bias: the ETF setting's classifier, which the test evaluation and the
 * adversarial test point use as they are) on them with stream (sc->seed, r) and region tag 2
 * (NoisyGD's noise region, unused by this trainer). The test points are those of the simulator
 * (the replicate's test perturbations, region tag 1; adversarial against the trained W), so
 * test errors are comparable with dpd_nc_sim_run's on the same replicates.
 * sc: seeds, seed, threads, progress (steps, eta, loss, radius, sigma, clip are not read).
 * dc: the trainer's config: loss SOFTMAX, classes = K, bias 0; its seed, stream and tag are set
 * per replicate as above; noise_multiplier as calibrated by the caller (dpd_dpsgd_calibrate).
 * The result: test errors as dpd_nc_sim_run's, w_norm |W|_F, sigma = noise_multiplier clip,
 * G = clip, and the per-replicate clipped_fraction, mean_batch, train_loss.
 * DPD_EINVAL: dc (dpd_dpsgd_check for n, p; 'loss' not SOFTMAX, 'bias' not 0, 'classes' != K),
 * 'seeds' 0, 'normalize' center or center_l2 (the training mean moves every row when one sample
 * is removed, which per-sample clipping does not bound); DPD_ENOMEM; the trainer's errors (the
 * lowest failing replicate's, worded by running it again); DPD_ECANCELLED.
 * Memory per thread: n p doubles for the rows, the simulator's scratch and the trainer's.
 * Bit-identical for any thread count. Prints nothing. */
DPD_API int dpd_nc_dpsgd_run(const dpd_nc_problem *problem, const dpd_nc_sim_config *sc,
                             const dpd_dpsgd_config *dc, dpd_nc_sim_result **out, dpd_err *err);

/* ---- Resizing the features (seed 000 §5.2: "randomly sample a subset of coordinates or make
 * copies of the entire feature space") ----------------------------------------------------------
 * A map from the new coordinates l' = 0 .. P-1 to the old ones, index[l'] in 0 .. p-1:
 *   SUBSET  P <= p: a uniformly random subset of P coordinates, kept in increasing order:
 *           one dpd_rng_uniform_fill of p values u_l from stream (seed, DPD_RNG_STREAM_PROBLEM)
 *           at block 2^33 (region tag 0, index 2: after the dense ETF's and the offset signs'
 *           blocks), then selection sampling in index order: coordinate l is kept iff
 *           u_l (p - l) < P - (coordinates already kept). Fixed by the problem seed: the same
 *           subset in every replicate.
 *   COPIES  P >= p: the coordinates tiled, index[l'] = l' mod p (whole copies of the feature
 *           vector one after another, the last one cut when p does not divide P).
 *   NONE    P = p, index[l'] = l'. */
typedef enum { DPD_NC_RESIZE_NONE = 0, DPD_NC_RESIZE_SUBSET, DPD_NC_RESIZE_COPIES } dpd_nc_resize;

/* Fills index[0..P) (caller memory). DPD_EINVAL naming 'resize_p' when P is out of range
 * (SUBSET 1 .. p, COPIES p .. 2^33 / K is the caller's; here p .. 2^40, NONE p) or 'resize'. */
DPD_API int dpd_nc_resize_index(dpd_nc_resize mode, size_t p, size_t P, uint64_t seed,
                                size_t *index, dpd_err *err);

/* out[i P + l'] = X[i p + index[l']] for n rows (caller memory; out must not overlap X). Pure. */
DPD_API void dpd_nc_resize_rows(const double *X, size_t n, size_t p, const size_t *index, size_t P,
                                double *out);

#ifdef __cplusplus
}
#endif
#endif /* DPD_NC_H */
