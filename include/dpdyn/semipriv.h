/* Semi-private learning: a large-margin low-rank data law, Noisy-SGD of Bassily-Smith-Thakurta
 * and Algorithm 1 (public PCA, projection, private training) (docs/math.md §4).
 * SPDX-License-Identifier: MIT
 *
 * References: Pinto, Hu, Yang & Sanyal, "How to make semi-private learning effective" (seed 003;
 * later version "PILLAR", arXiv:2306.03962), Definition 3, Algorithm 1, Theorem 1, Prop. 4;
 * Bassily, Smith & Thakurta, "Private empirical risk minimization: efficient algorithms and
 * tight error bounds", FOCS 2014 (arXiv:1405.7085), Algorithm 1 (Noisy-SGD) and its convex step
 * size; Zwald & Blanchard, "On the convergence of eigenspaces in kernel PCA", NIPS 2005
 * (subspace bound); Mezzadri, Notices AMS 54 (2007) 592 (Haar orthogonal matrices from QR);
 * notes-rf-nc-sp.md C.1-C.5 (the generator, its margin and the corrections used here).
 *
 * ---- The data law (notes C.5) ---------------------------------------------------------------
 * Q = [q_1 .. q_d] is a Haar-random orthogonal d x d matrix: the Q factor of the QR
 * (LAPACKE_dgeqrf + dorgqr) of a d x d standard Gaussian matrix G (one dpd_rng_gaussian_fill of
 * d^2 values, column-major, from block 0 of stream (gen seed, DPD_RNG_STREAM_PROBLEM)), with
 * column j multiplied by sign(R_jj) (Mezzadri's correction, which makes Q exactly Haar). Q is
 * stored explicitly (d^2 doubles) and applied with one dgemm per block of points: an implicit
 * (Householder) Q costs the same 2 d^2 flops per point, so nothing is gained by it; memory
 * bounds d (d = 4000 needs 128 MB for Q). A point in Q coordinates (K = k_true, 1-based j):
 *   z_1 = y (c + s |g_1|),  z_j = sqrt(lambda_j) g_j (2 <= j <= K),  z_{K+1} = tau U,
 *   z_j = nu g_j (j > K + 1),
 * g_j i.i.d. standard Gaussians truncated to |g| <= trunc (exact: rejection), U uniform on
 * (-1, 1), y = +-1 with probability 1/2; then x = Q z / |z| (|x| = 1) and the label is y. The
 * target w* = a q_1 + sqrt(1 - a^2) q_{K+1}.
 * Guaranteed margin (every point): y <w*, x> >= gamma = (a c - sqrt(1 - a^2) tau) / z_max,
 *   z_max^2 = (c + trunc s)^2 + trunc^2 sum_j lambda_j + tau^2 + trunc^2 nu^2 (d - K - 1).
 * Covariance: E[x x^T] = Q diag(m) Q^T, m_j = E[z_j^2 / |z|^2] (each coordinate is symmetric and
 * independent of the others' signs). The m_j are computed by one-dimensional quadrature of
 *   m_j = int_0^inf E[z_j^2 e^{-t z_j^2}] prod_{i != j} E[e^{-t z_i^2}] dt
 * (1/|z|^2 = int_0^inf e^{-t |z|^2} dt and independent coordinates), each factor in closed form
 * (erf, incomplete gamma) except those of z_1 (GSL adaptive quadrature on [0, trunc]); GSL
 * qagiu does the outer integral (relative tolerance 1e-10; sum_j m_j = 1 checks it). The
 * population eigenvalues are the m_j sorted in decreasing order (ties keep coordinate order),
 * A_k the matching columns of Q, Delta_k = lambda_(k) - lambda_(k+1) (lambda_(d+1) = 0) and
 * xi_k = 1 - |A_k A_k^T w*|. When the first K coordinates carry the K largest m_j (the defaults
 * do), A_K = [q_1 .. q_K] and xi_K = 1 - a exactly.
 *
 * ---- Random numbers (stream rule of rng.h) ----------------------------------------------------
 * The generator's Q uses stream (gen seed, DPD_RNG_STREAM_PROBLEM). A run with seed s uses, for
 * replicate r, stream (s, r) cut into regions that start at block
 *   tag 2^62 + index 2^32   (index < 2^30; each region holds 2^32 blocks):
 *   tag 0 (labelled), 1 (public), 2 (test), index i: point i of that set. Block 0 gives two
 *       uniforms (u_a, u_b): y = -1 if u_a < 1/2 else +1, U = 2 u_b - 1. Then one
 *       dpd_rng_gaussian_fill of d values g_0 .. g_{d-1} (coordinate j, 0-based, uses g_j;
 *       g_K is unused); then, in coordinate order, every used g_j with |g_j| > trunc is replaced
 *       by the first of the following scalar dpd_rng_gaussian draws with |g| <= trunc.
 *   tag 3, index 0: the indices of Noisy-SGD: one dpd_rng_uniform_fill of T values u_t
 *       (t = 1..T; drawn in chunks of even length, which equals one fill), sample
 *       i_t = min(floor(u_t n), n - 1).
 *   tag 3, index 1 + c: the noise of the steps t in [1024 c + 1, 1024 (c + 1)]: one
 *       dpd_rng_gaussian_fill of (steps in the group) x k values, step after step (drawn in
 *       chunks of an even number of steps).
 * So a replicate redraws the labelled, public and test samples and the noise; Q (and w*) is
 * fixed by the generator. Point i of a set is the same whatever the other set sizes are.
 * With trainer DPSGD (law or files) region tag 3 as a whole is DP-SGD's (dpsgd.h: stream
 * (seed, r), tag 3), Noisy-SGD's layout above is then unused. File features (which draw no
 * points, so tags 0 .. 2 are otherwise unused) split the features file from tag 2:
 *   tag 2, index 2^29: the public split (public_fraction): one dpd_rng_uniform_fill of N values
 *       u_i (N the file's rows); selection sampling: row i is public iff
 *       u_i (N - i) < m - (rows already taken), m = round(public_fraction N); the rest private;
 *   tag 2, index 2^29 + 1: the private subset (private_fraction < 1): the same over the
 *       n_private private rows in index order, taking round(private_fraction n_private).
 *
 * ---- Threads and BLAS ---------------------------------------------------------------------------
 * Replicates run on the replicate driver's OpenMP threads; each replicate is sequential and
 * every sum has a fixed order, so results are bit-identical for any `threads` provided OpenBLAS
 * itself runs one thread (openblas_set_num_threads(1), as the CLI adapters set: LAPACK's
 * rounding depends on OpenBLAS's thread count). BLAS/LAPACK calls: dgemm (x = Q z, projection),
 * the core PCA's dsyrk and dsyevr (pca.h), dgesvd (subspace distance).
 *
 * ---- PCA ----------------------------------------------------------------------------------------
 * The top k + 1 principal directions of the public sample come from the core PCA (pca.h) through
 * a row accessor that regenerates the public points block by block (no n_public x d matrix):
 * centred, S = (1/(n_public - 1)) sum (x - xbar)(x - xbar)^T (two passes over the points, so the
 * public sample is generated twice), or uncentred, S = (1/n_public) sum x x^T (one pass); the
 * covariance route when d <= n_public, else the Gram route. Each direction's sign makes its
 * largest entry positive, so results do not depend on LAPACK's sign choices. When k + 1 exceeds
 * the sample's numerical rank the top k alone are computed (the empirical eigengap is then
 * NaN). */
#ifndef DPD_SEMIPRIV_H
#define DPD_SEMIPRIV_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/account.h"
#include "dpdyn/dpsgd.h"
#include "dpdyn/replicate.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================= generator ========================================= */

/* The sets of a replicate (region tags of the stream rule). */
typedef enum {
  DPD_SEMIPRIV_SET_LABELLED = 0,
  DPD_SEMIPRIV_SET_PUBLIC = 1,
  DPD_SEMIPRIV_SET_TEST = 2
} dpd_semipriv_set;

typedef struct {
  size_t d;             /* dimension, >= k_true + 1, d^2 < 2^31 */
  size_t k_true;        /* K, the rank of the signal, >= 1 */
  double a;             /* w* = a q_1 + sqrt(1 - a^2) q_{K+1}; in (0, 1) */
  double c, s;          /* z_1 = y (c + s |g|): c finite > 0, s finite >= 0 */
  double tau;           /* z_{K+1} = tau U: finite >= 0 */
  const double *lambda; /* [K - 1] variances of coordinates 2..K, finite > 0 (borrowed; the
                           generator copies them) */
  size_t n_lambda;      /* must equal K - 1 */
  double nu;            /* z_j = nu g_j beyond K + 1: finite >= 0 */
  double trunc;         /* truncation of the Gaussians |g| <= trunc, finite > 0 */
  uint64_t seed;        /* Q (stream (seed, DPD_RNG_STREAM_PROBLEM)) */
} dpd_semipriv_gen_config;

/* The notes' check (C.5): d = 200, k_true = 5, a = 0.95, c = 1, s = 0.3, tau = 0.3,
 * lambda = (0.6, 0.5, 0.4, 0.3) (static storage), nu = 0.02, trunc = 3, seed 1. (The notes'
 * end-to-end run used d = 1000 and nu = 0.05.) */
DPD_API dpd_semipriv_gen_config dpd_semipriv_gen_config_default(void);

/* A built generator (transparent; arrays owned by it). */
typedef struct {
  dpd_semipriv_gen_config cfg; /* copy; cfg.lambda points to this generator's own copy */
  size_t d, k_true;
  double *Q;                /* [d d] column-major: column j is q_{j+1} */
  double *w_star;           /* [d] */
  double *coord_var;        /* [d] m_j = E[(q_j^T x)^2], the population covariance in Q coords */
  double *eig;              /* [d] the m_j in decreasing order (population eigenvalues) */
  size_t *order;            /* [d] eig[i] = coord_var[order[i]] */
  double z_max;             /* max |z| */
  double margin_guaranteed; /* gamma of the header */
  double var_sum_error;     /* |sum_j m_j - 1| (quadrature check) */
} dpd_semipriv_gen;

/* Builds the generator: Q, w*, the margin and the population spectrum. *out is returned-owned
 * (dpd_semipriv_gen_free). DPD_EINVAL names the key ('d', 'k_true', 'a', 'c', 's', 'tau',
 * 'lambda', 'nu', 'trunc'; also when a c - sqrt(1 - a^2) tau <= 0: no margin); DPD_ENOMEM;
 * DPD_ESOLVER when the QR or a quadrature fails. Time O(d^3) (the QR) plus O(K) quadratures.
 * Prints nothing. */
DPD_API int dpd_semipriv_gen_create(const dpd_semipriv_gen_config *cfg, dpd_semipriv_gen **out,
                                    dpd_err *err);

/* Releases a generator; NULL is allowed. */
DPD_API void dpd_semipriv_gen_free(dpd_semipriv_gen *gen);

/* Points first .. first + m - 1 of set `set` of replicate `rep` of a run with seed `seed`:
 * X[i d + l] (m x d row-major, caller memory) and labels y[i] = +-1; work (caller memory, m d
 * doubles) receives the points in Q coordinates z (row-major, unnormalised). Pure (a function of
 * its arguments); calls cblas_dgemm. first + m <= 2^30. */
DPD_API void dpd_semipriv_gen_sample(const dpd_semipriv_gen *gen, uint64_t seed, uint64_t rep,
                                     dpd_semipriv_set set, size_t first, size_t m, double *X,
                                     double *y, double *work);

/* Population eigengap Delta_k = eig[k-1] - eig[k] (1 <= k < d), eig[d-1] for k = d; NaN
 * otherwise. Pure. */
DPD_API double dpd_semipriv_gen_eigengap(const dpd_semipriv_gen *gen, size_t k);

/* xi_k = 1 - |A_k A_k^T w*| of the population top-k (1 <= k <= d; NaN otherwise). Pure. */
DPD_API double dpd_semipriv_gen_xi(const dpd_semipriv_gen *gen, size_t k);

/* The population top-k eigenvectors A_k into A (d x k column-major, caller memory). 1 <= k <= d.
 * Pure. */
DPD_API void dpd_semipriv_gen_top(const dpd_semipriv_gen *gen, size_t k, double *A);

/* ===================================== measurements ======================================== */

/* min_i y_i <w, x_i> / (|w| |x_i|) over the m rows of X (m x d row-major); NaN for m = 0 or
 * w = 0. Pure. */
DPD_API double dpd_semipriv_margin_min(const double *X, const double *y, size_t m, size_t d,
                                       const double *w);

/* xi = 1 - |A A^T w| / |w| for A (d x k column-major) with orthonormal columns. Pure. */
DPD_API double dpd_semipriv_xi(const double *A, size_t d, size_t k, const double *w);

/* The spectral norm |A A^T - B B^T| of two rank-k projections (A, B: d x k column-major,
 * orthonormal columns), computed stably as the largest singular value of B - A (A^T B) (the
 * sine of the largest principal angle). work: dpd_semipriv_subspace_work(d, k) doubles (caller
 * memory). DPD_ESOLVER when dgesvd fails. Allocates nothing. */
DPD_API int dpd_semipriv_subspace_dist(const double *A, const double *B, size_t d, size_t k,
                                       double *dist, double *work, dpd_err *err);

/* Doubles of work dpd_semipriv_subspace_dist needs. */
DPD_API size_t dpd_semipriv_subspace_work(size_t d, size_t k);

/* ====================================== Noisy-SGD =========================================== */

/* How the noise sigma of Noisy-SGD meets (epsilon, delta) (docs/privacy.md, "Semi-private
 * Noisy-SGD accounted by PLD"):
 *  BST: Bassily, Smith & Thakurta's theorem (dpd_semipriv_sgd_sigma: amplification by sampling
 *       and advanced composition over n^2 steps), the paper's calibration;
 *  PLD: the smallest sigma whose PLD accounting of the run's T steps is (epsilon, delta)-DP
 *       (dpd_semipriv_sgd_sigma_pld). */
typedef enum {
  DPD_SEMIPRIV_CALIBRATION_BST = 0,
  DPD_SEMIPRIV_CALIBRATION_PLD = 1
} dpd_semipriv_calibration;

/* "bst", "pld"; NULL outside the enum. Static storage. */
DPD_API const char *dpd_semipriv_calibration_name(dpd_semipriv_calibration c);

typedef struct {
  double epsilon; /* (0, inf]; inf: non-private (sigma = 0, the same steps) */
  double delta;   /* (0, 1) */
  double zeta;    /* margin scale of the hinge loss max(0, 1 - y <w, x> / zeta), finite > 0 */
  size_t steps;   /* T >= 1, T < 2^33; 0: n^2 */
  double radius;  /* the constraint set W = {|w| <= radius}, finite > 0 (1: the unit ball) */
  dpd_semipriv_calibration calibration; /* BST (default): sigma = dpd_semipriv_sgd_sigma; PLD:
                                           sigma is the field below */
  double sigma; /* PLD: the noise standard deviation (from dpd_semipriv_sgd_sigma_pld, computed
                   once per run), finite >= 0; ignored for BST */
} dpd_semipriv_sgd_config;

/* epsilon 1, delta 1e-5, zeta 0.1, steps 0 (= n^2), radius 1, calibration BST, sigma NaN. */
DPD_API dpd_semipriv_sgd_config dpd_semipriv_sgd_config_default(void);

/* The noise standard deviation of Noisy-SGD (notes C.3 with the corrected epsilon^2):
 *   sigma^2 = 32 L^2 n^2 log(n / delta) log(1 / delta) / epsilon^2,
 * 0 for epsilon = inf. NaN for n = 0, L <= 0, epsilon <= 0 or delta outside (0, 1). Pure. */
DPD_API double dpd_semipriv_sgd_sigma(size_t n, double L, double epsilon, double delta);

/* The noise standard deviation of Noisy-SGD by the PLD accountant (account.h): each step draws
 * one record uniformly with replacement (batch 1 of n) and adds N(0, sigma^2 I) to the record's
 * contribution n grad l, of norm <= n L (|x| <= 1); under replace-one neighbours the noise
 * multiplier is sigma / (n L), and T = `steps` such steps are accounted with
 * dpd_account_sigma_for (SUBSAMPLED, REPLACEMENT, batch 1, REPLACE_ONE): *sigma = n L z for the
 * smallest z (relative 1e-4) whose PLD upper bound of eps(delta) is <= epsilon, rounded up.
 * `at` (NULL allowed): the accounting at z (at->epsilon <= epsilon). epsilon = inf: *sigma = 0
 * and `at` untouched. DPD_EINVAL names 'n', 'zeta' (L), 'steps', 'epsilon' or 'delta' (also
 * when no z in the accountant's bracket reaches epsilon). n >= 1, L finite > 0, steps >= 1,
 * epsilon in (0, inf], delta in (0, 1). */
DPD_API int dpd_semipriv_sgd_sigma_pld(size_t n, double L, size_t steps, double epsilon,
                                       double delta, double *sigma, dpd_account_result *at,
                                       dpd_err *err);

/* Step size of step t >= 1 (Bassily et al.'s convex choice, notes C.3):
 *   eta(t) = D / sqrt(t (n^2 L^2 + k sigma^2)),  D = 2 radius the diameter of W. Pure. */
DPD_API double dpd_semipriv_sgd_eta(size_t t, size_t n, double L, size_t k, double sigma,
                                    double radius);

/* What a run used and saw. */
typedef struct {
  size_t steps;           /* T */
  double L;               /* 1 / zeta */
  double sigma;           /* dpd_semipriv_sgd_sigma(n, L, epsilon, delta) */
  double eta1;            /* eta(1) */
  double active_fraction; /* fraction of steps with a non-zero hinge gradient */
} dpd_semipriv_sgd_info;

/* Doubles of work dpd_semipriv_sgd_run needs for dimension k. */
DPD_API size_t dpd_semipriv_sgd_work(size_t k);

/* Noisy-SGD (Bassily et al. Alg. 1 on the sum loss; notes C.3): from w_0 = 0, for t = 1..T,
 *   w_t = Proj_W( w_{t-1} - eta(t) ( n grad l(w_{t-1}; x_{i_t}, y_{i_t}) + sigma xi_t ) ),
 * grad l = -(y / zeta) x when y <w, x> < zeta and 0 otherwise, xi_t ~ N(0, I_k), i_t uniform
 * with replacement (stream rule: tag 3 of stream (seed, rep)). Output w = w_T (k values, caller
 * memory). P: n x k row-major features (borrowed; |x| <= 1 for the privacy of sigma), y: +-1.
 * work: dpd_semipriv_sgd_work(k) doubles. info may be NULL. DPD_EINVAL names 'epsilon',
 * 'delta', 'zeta', 'steps', 'radius', 'n' or 'k'; DPD_ENONFINITE if w stops being finite.
 * Allocates nothing; prints nothing; thread-safe. */
DPD_API int dpd_semipriv_sgd_run(const dpd_semipriv_sgd_config *cfg, const double *P,
                                 const double *y, size_t n, size_t k, uint64_t seed, uint64_t rep,
                                 double *w, double *work, dpd_semipriv_sgd_info *info,
                                 dpd_err *err);

/* The average hinge loss (1/m) sum_i max(0, 1 - y_i <w, x_i> / zeta) and the accuracy (fraction
 * with y_i <w, x_i> > 0) of the m rows of X (m x k row-major). Pure. */
DPD_API void dpd_semipriv_hinge(const double *X, const double *y, size_t m, size_t k,
                                const double *w, double zeta, double *hinge, double *accuracy);

/* ===================================== Algorithm 1 ========================================== */

/* Algorithm 1 on given data: P = X A (n x k; A = NULL means the identity, k = d), Noisy-SGD on
 * (P, y) with `cfg` and the noise of stream (seed, rep), and w_hat = A w (d values, caller
 * memory; w itself into w_k when not NULL, k values). X: n x d row-major, y: +-1 (borrowed).
 * work: n k + k + dpd_semipriv_sgd_work(k) doubles. Errors as dpd_semipriv_sgd_run. */
DPD_API int dpd_semipriv_alg1_execute(const double *A, size_t d, size_t k, const double *X,
                                      const double *y, size_t n, const dpd_semipriv_sgd_config *cfg,
                                      uint64_t seed, uint64_t rep, double *w_hat, double *w_k,
                                      double *work, dpd_semipriv_sgd_info *info, dpd_err *err);

/* The private trainer of Algorithm 1 (docs/semipriv.md, "DP-SGD trainer (trainer=dpsgd)"):
 *  BST: Noisy-SGD of Bassily, Smith & Thakurta above (the theorem's algorithm, binary hinge);
 *  DPSGD: the DP-SGD trainer of dpsgd.h on the projected labelled rows (n x k, materialised per
 *       replicate), labels 0 .. K-1 (the law's +-1 as 1 / 0), randomness from region tag 3 of
 *       stream (seed, r) (Noisy-SGD's tag, unused then); z calibrated once per run
 *       (dpd_dpsgd_calibrate at the n rows trained on) unless given; test accuracy by
 *       dpd_dpsgd_evaluate on the projected test rows. */
typedef enum { DPD_SEMIPRIV_TRAINER_BST = 0, DPD_SEMIPRIV_TRAINER_DPSGD = 1 } dpd_semipriv_trainer;

/* "bst", "dpsgd"; NULL outside the enum. Static storage. */
DPD_API const char *dpd_semipriv_trainer_name(dpd_semipriv_trainer t);

/* DP-SGD's own per-replicate measurements (DPSGD runs: dpd_semipriv_result.dpsgd_replicates). */
typedef enum {
  DPD_SEMIPRIV_DPSGD_CLIPPED_FRACTION = 0, /* fraction of the batches' gradients clipped */
  DPD_SEMIPRIV_DPSGD_MEAN_BATCH,           /* mean drawn batch size */
  DPD_SEMIPRIV_DPSGD_TRAIN_LOSS,           /* mean loss over the rows trained on, last W */
  DPD_SEMIPRIV_DPSGD_TEST_LOSS,            /* mean loss over the test rows */
  DPD_SEMIPRIV_DPSGD_COUNT
} dpd_semipriv_dpsgd_metric;

/* "clipped_fraction", "mean_batch", "train_loss", "test_loss"; NULL outside the enum. */
DPD_API const char *dpd_semipriv_dpsgd_metric_name(dpd_semipriv_dpsgd_metric metric);

/* Per-replicate measurements of dpd_semipriv_run (columns of its tables). With trainer DPSGD the
 * hinge columns and active_fraction are NaN (the trainer's losses are in the DPSGD table) and
 * w_norm is the Frobenius norm of W (intercepts included). */
typedef enum {
  DPD_SEMIPRIV_TEST_ACCURACY = 0, /* fraction of the n_test test points with y <w_hat, x> > 0 */
  DPD_SEMIPRIV_TRAIN_ACCURACY,    /* the same on the labelled points */
  DPD_SEMIPRIV_TRAIN_HINGE,       /* mean hinge loss of the labelled points at w_hat */
  DPD_SEMIPRIV_TEST_HINGE,        /* mean hinge loss of the test points */
  DPD_SEMIPRIV_XI_HAT,            /* xi_k of span(A_hat): 1 - |A_hat A_hat^T w*| */
  DPD_SEMIPRIV_SUBSPACE_ERROR,    /* |A_k A_k^T - A_hat A_hat^T| (spectral); 0 when k = d, NaN
                                     when the population Delta_k = 0 (A_k is not unique) */
  DPD_SEMIPRIV_EIGENGAP_HAT,      /* lambda_hat_k - lambda_hat_{k+1} of the public covariance
                                     (NaN when k = d) */
  DPD_SEMIPRIV_MARGIN_MIN,        /* min over the labelled points of y <w*, x> */
  DPD_SEMIPRIV_W_NORM,            /* |w_T| */
  DPD_SEMIPRIV_ACTIVE_FRACTION,   /* fraction of SGD steps with a non-zero gradient */
  DPD_SEMIPRIV_METRIC_COUNT
} dpd_semipriv_metric;

/* "test_accuracy", "train_accuracy", "train_hinge", "test_hinge", "xi_k_hat",
 * "subspace_error", "eigengap_hat", "margin_min", "w_norm", "active_fraction"; NULL outside the
 * enum. Static storage. */
DPD_API const char *dpd_semipriv_metric_name(dpd_semipriv_metric metric);

typedef struct {
  size_t n;                 /* labelled points, >= 1, < 2^30 */
  size_t n_public;          /* public unlabelled points, >= k + 1 (>= 2 when centred), < 2^30 */
  size_t n_test;            /* test points, >= 1, < 2^30 */
  size_t k;                 /* 1 <= k <= d; k = d: no PCA (A = I, the baseline) */
  int center;               /* non-zero: PCA of the centred public covariance (the proof's), else of
                               (1/n) sum x x^T (the algorithm as printed) */
  double epsilon;           /* (0, inf] */
  double delta;             /* (0, 1) */
  size_t steps;             /* 0: n^2 */
  double zeta;              /* NaN: gamma0 (1 - xi0 - 0.1 gamma0) (notes C.2); else finite > 0 */
  double gamma0;            /* NaN: the generator's guaranteed margin */
  double xi0;               /* NaN: the population xi_k of the generator at this k */
  double beta;              /* failure probability of the Zwald-Blanchard bound, in (0, 1) */
  size_t seeds;             /* replicates, >= 1 */
  uint64_t seed;            /* replicate r uses stream (seed, r) */
  int threads;              /* OpenMP threads over replicates (<= 0: all) */
  dpd_progress_fn progress; /* replicates done, calling thread only; non-zero stops */
  void *progress_user;      /* borrowed */
  /* the noise's calibration (default BST) */
  dpd_semipriv_calibration calibration;
  /* the private trainer (default BST: Noisy-SGD above; DPSGD: dpd_dpsgd_train, dpsgd.h) */
  dpd_semipriv_trainer trainer;
  dpd_dpsgd_config dpsgd;  /* DPSGD: loss, sampling, q, batch, epochs, steps, lr, schedule
                              (borrowed), clip; classes, noise_multiplier, seed, stream and tag are
                              set by the run (classes 2 for the law, stream r, tag 3) */
  double noise_multiplier; /* DPSGD: z given (finite >= 0; the accountant's epsilon is reported
                              at it), or NaN: calibrated to (epsilon, delta) once per run */
} dpd_semipriv_run_config;

/* n 500, n_public 5000, n_test 1000, k 5, center 1, epsilon 1, delta 1e-5, steps 0 (= n^2),
 * zeta, gamma0, xi0 NaN, beta 0.05, calibration BST, seeds 8, seed 1, threads 0, no progress. */
DPD_API dpd_semipriv_run_config dpd_semipriv_run_config_default(void);

typedef struct {
  size_t seeds, k, d, steps;
  double *replicates; /* [seeds * DPD_SEMIPRIV_METRIC_COUNT] row-major by replicate */
  double mean[DPD_SEMIPRIV_METRIC_COUNT];
  double se[DPD_SEMIPRIV_METRIC_COUNT]; /* sample sd / sqrt(seeds) */
  double zeta, gamma0, xi0, L, sigma, eta1;
  double xi_k;              /* population xi_k (dpd_semipriv_gen_xi) */
  double eigengap;          /* population Delta_k (dpd_semipriv_gen_eigengap) */
  double margin_guaranteed; /* the generator's gamma */
  double zb_bound;          /* 4 (1 + sqrt(log(2/beta)/2)) / (Delta_k sqrt(n_public)); 0 at k = d */
  dpd_semipriv_calibration calibration; /* how sigma was calibrated */
  double sigma_bst;        /* Bassily et al.'s sigma (dpd_semipriv_sgd_sigma; = sigma for BST) */
  double noise_multiplier; /* sigma / (n L) */
  double epsilon_pld;      /* PLD: the accountant's upper bound of eps(delta) at sigma (<= the
                              target epsilon); its estimate and lower bound; NaN for BST */
  double epsilon_pld_estimate, epsilon_pld_lower;
  /* DPSGD (trainer): noise_multiplier is z, sigma = z clip, epsilon_pld.. the accountant's
     epsilons at z (NaN for epsilon = inf with z = 0), steps T */
  dpd_semipriv_trainer trainer;
  double *dpsgd_replicates; /* DPSGD: [seeds * DPD_SEMIPRIV_DPSGD_COUNT]; NULL for BST */
  double dpsgd_mean[DPD_SEMIPRIV_DPSGD_COUNT], dpsgd_se[DPD_SEMIPRIV_DPSGD_COUNT];
  size_t classes;             /* DPSGD: K */
  dpd_dpsgd_config dpsgd;     /* DPSGD: the trainer's configuration as run (z, K, batch set;
                                 schedule borrowed from the run's configuration) */
  size_t batch;               /* DPSGD, FIXED sampling: the batch size; else 0 */
  size_t n_private, n_public; /* the rows trained on and the public rows of the PCA */
} dpd_semipriv_result;

/* Runs cfg->seeds replicates of Algorithm 1 on data of `gen` (borrowed): per replicate the
 * public sample, its PCA (top k + 1 eigenpairs), the labelled sample projected, Noisy-SGD,
 * w_hat = A_hat w, and the measurements on the labelled and n_test test points. *out is
 * returned-owned (dpd_semipriv_result_free). DPD_EINVAL names the key; DPD_ENOMEM;
 * DPD_ESOLVER (an eigen-solver failed); DPD_ENONFINITE; DPD_ECANCELLED. Memory per thread:
 * dpd_semipriv_run_work doubles (about d^2 + (512 + 2 k + 10) d + n (k + 1) for k < d: two
 * blocks of 256 points, the eigenvectors and the projected labelled points in the workspace; the
 * public covariance and the PCA's blocks allocated by pca.h per replicate; no n x d or
 * n_public x d matrix). Bit-identical for any thread
 * count (see "Threads and BLAS"). Prints nothing. */
DPD_API int dpd_semipriv_run(const dpd_semipriv_gen *gen, const dpd_semipriv_run_config *cfg,
                             dpd_semipriv_result **out, dpd_err *err);

/* The memory one thread of dpd_semipriv_run uses, in doubles: its workspace and the PCA's own
 * allocation (dpd_pca_memory of the top k + 1 directions); 0 for an invalid k. Pure. */
DPD_API size_t dpd_semipriv_run_work(const dpd_semipriv_gen *gen,
                                     const dpd_semipriv_run_config *cfg);

/* Releases a result; NULL is allowed. */
DPD_API void dpd_semipriv_result_free(dpd_semipriv_result *res);

/* ======================================= theory ============================================= */

/* Zwald-Blanchard subspace bound as used in the proof of Theorem 1 (notes C.2):
 *   |A_k A_k^T - A_hat A_hat^T| <= 4 (1 + sqrt(log(2/beta) / 2)) / (Delta_k sqrt(n_public))
 * with probability >= 1 - beta/2 (Zwald-Blanchard with xi = log(2/beta), for the uncentred
 * second-moment matrix of points with |x| <= 1; the notes' "sqrt(beta/2)" is a misprint: the
 * 1600 of Theorem 1 requires log(2/beta)). INFINITY when Delta_k <= 0. Pure. */
DPD_API double dpd_semipriv_theory_zb_bound(double eigengap, size_t n_public, double beta);

/* Theorem 1's public sample size: n_public >= 1600 (1 + sqrt(log(2/beta)/2))^2 /
 * (gamma0^2 Delta_k^2), which makes the bound above <= gamma0 / 10. Pure. */
DPD_API double dpd_semipriv_theory_n_public(double gamma0, double eigengap, double beta);

/* Theorem 1's labelled error bound at n labelled points (a bound up to the constant of Bassily
 * et al.'s Lemma, taken as 1; notes C.3): the empirical zero-one error after Noisy-SGD is at
 * most the excess sum hinge loss over n,
 *   alpha_priv(n) = L D log(n/delta)^{3/2} sqrt(k log(1/delta)) / (n epsilon),  L = 1/zeta,
 * D = 2 the diameter of the unit ball; 0 for epsilon = inf. Pure. */
DPD_API double dpd_semipriv_theory_alpha_private(size_t n, size_t k, double epsilon, double delta,
                                                 double zeta);

/* Proposition 4 (non-private): n = 1 / (zeta alpha^2), i.e. alpha_np(n) = 1 / sqrt(zeta n)
 * (logarithmic factors and the O-constant dropped). Pure. */
DPD_API double dpd_semipriv_theory_alpha_nonprivate(size_t n, double zeta);

/* The smallest n with alpha_priv(n) <= alpha (Theorem 1's n^L ~ sqrt(k) / (alpha epsilon
 * zeta), solved with its logarithms; bisection on the monotone part n >= e^{3/2} delta);
 * INFINITY when no n < 2^52 meets it. Pure. */
DPD_API double dpd_semipriv_theory_n_labelled(double alpha, size_t k, double epsilon, double delta,
                                              double zeta);

#ifdef __cplusplus
}
#endif
#endif /* DPD_SEMIPRIV_H */
