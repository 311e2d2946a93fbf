/* Neural collapse: the PCA fix (seed section 4, notes B.4 Thm 4.1): project the features on the
 * top-k principal directions of a public sample, then train privately in k dimensions.
 * SPDX-License-Identifier: MIT
 *
 * References: Wang, Zhu, Su & Wang, arXiv:2405.08920 (v3), section 4 and Theorem 4.1; the PCA
 * itself is pca.h.
 *
 * Public sample. n_public unlabelled features from the training law of the problem: class
 * counts by the problem's rule (dpd_nc_class_counts with n_public), sample i of class k is
 *   x = M_k + nu + v,   v the problem's training shift (none, cube or rademacher, size beta),
 * drawn once per problem from the problem stream (problem seed, DPD_RNG_STREAM_PROBLEM), region
 * tag 1, index i (block 2^62 + i 2^32; one dpd_rng_uniform_fill of p values, the shift rule of
 * nc.h; the PCA's passes ask for chunks from even coordinates, which give the values of one
 * fill). This region is disjoint from the problem's other draws (the Gaussian of the dense ETF
 * from block 0, fewer than 2^32 blocks; the offset signs from block 2^32). So the public data are
 * part of the problem: replicates share P (the projection) and redraw the private training
 * shifts, the noise and the test points.
 *
 * Projection. P (p x k) = the top-k principal directions of the public sample: of its sample
 * covariance (center, the default) or of its uncentred second moment. Centring is the default
 * because an offset nu, common to all samples, is a rank-one term nu nu^T of the second moment
 * with eigenvalue |nu|^2 = offset^2 p: for large p it is the top uncentred direction and pushes
 * an ETF direction out of the top k = K - 1; the covariance does not see it. Training sample i
 * becomes P^T x_i and test point j becomes P^T x_j (x_j with its test perturbation in R^p), and
 * the simulator trains on these k-dimensional features (dpd_nc_problem_from_data with a fill).
 *
 * Sensitivity. The projected problem's x_bound (the feature clip, so the sensitivity G) is
 *   R = max_k |P^T (M_k + nu)| + b sqrt(sum_j |p_j|_1^2),   b = beta (cube, rademacher), 0 (none).
 * Proof: for |v|_inf <= b, |P^T v| = max_{|w| = 1} w^T P^T v = max_w (P w)^T v <= b max_w |P w|_1,
 * and |P w|_1 <= sum_j |w_j| |p_j|_1 <= |w| (sum_j |p_j|_1^2)^{1/2} (Cauchy-Schwarz); the
 * triangle inequality adds |P^T (M_k + nu)|. So R bounds |P^T x| on the whole support of the
 * training law, clipping never acts on a training point (up to rounding: R is raised by a
 * relative 1e-12), and G is that of the unclipped features. Note the price: a dense direction
 * has |p_j|_1 up to sqrt(p), so R (and G) grows with p unless P is close to sparse, the
 * condition beta beta_0 p <= 1 of Thm 4.1. */
#ifndef DPD_NC_PCA_H
#define DPD_NC_PCA_H

#include <stddef.h>

#include "dpdyn/nc.h"
#include "dpdyn/pca.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  size_t k;                   /* directions kept, 1 <= k <= p */
  size_t n_public;            /* public samples, >= 2 (centred) or >= 1; every class count >= 1 */
  int center;                 /* non-zero: sample covariance (default); 0: second moment */
  dpd_nc_normalize normalize; /* applied to the projected features (none, center or l2) */
} dpd_nc_pca_config;

/* Defaults: k = 9, n_public = 1000, center 1, normalize none. */
DPD_API dpd_nc_pca_config dpd_nc_pca_config_default(void);

/* A projected problem (transparent; owns everything but `base`). */
typedef struct {
  const dpd_nc_problem *base; /* the ETF problem (borrowed; must outlive this object) */
  dpd_nc_pca_config cfg;
  dpd_pca_result *pca;     /* the PCA of the public sample */
  size_t *public_counts;   /* [K] class counts of the public sample */
  size_t *y, *y_test;      /* [n], [n_test] labels in class order */
  dpd_nc_data_config data; /* the projected problem's data config */
  dpd_nc_problem *problem; /* the problem the simulator runs (K, k, n, n_test) */
  double x_bound;          /* R above */
  double etf_residual;     /* max_k |M_k - P P^T M_k| (in [0, 1]: 0 when span(P) holds the ETF) */
  double beta0;            /* max_{k,l} |(P P^T M - M)_{kl}|: the beta_0 of Thm 4.1 */
  double etf_energy;       /* sum_k |P^T M_k|^2 / sum_k |M_k|^2: the ETF's share captured */
} dpd_nc_pca;

/* Draws the public sample of `base` (whose test_shift may be none, cube or rademacher and whose
 * normalize must be none; its n, n_test and shifts are those of the run), computes its PCA and
 * builds the projected problem. DPD_EINVAL names 'pca_k' (k > p, or beyond the rank of the
 * public sample when p > n_public), 'n_public' (< 2 centred, an empty class), 'test_shift'
 * (adversarial is refused: its point is defined in R^p against a classifier on R^p, not one
 * trained in k dimensions) or 'normalize'; DPD_ENOMEM; the PCA's errors. Memory: dpd_nc_pca_memory.
 * Prints nothing. Not thread-safe on one object; the projected problem's fill is. */
DPD_API int dpd_nc_pca_create(const dpd_nc_problem *base, const dpd_nc_pca_config *cfg,
                              dpd_nc_pca **out, dpd_err *err);

/* Bytes of the PCA (dpd_pca_memory) plus the fill's block buffers for `threads` threads. Pure. */
DPD_API double dpd_nc_pca_memory(size_t K, size_t p, const dpd_nc_pca_config *cfg, size_t threads);

/* Public sample i (0 <= i < n_public, class order) of the problem: x[0..p) (caller memory);
 * returns its class. Pure. */
DPD_API size_t dpd_nc_pca_public_sample(const dpd_nc_pca *pca, size_t i, double *x);

/* Releases the object (and its projected problem); NULL is allowed. */
DPD_API void dpd_nc_pca_free(dpd_nc_pca *pca);

#ifdef __cplusplus
}
#endif
#endif /* DPD_NC_PCA_H */
