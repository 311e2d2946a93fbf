/* Principal component analysis: the top-k principal directions of m samples in R^p.
 * SPDX-License-Identifier: MIT
 *
 * References: Golub & Van Loan, Matrix Computations (4th ed.), 8.1 and 8.6 (symmetric
 * eigenproblem; the SVD through X^T X or X X^T); LAPACK dsyevr (MRRR, Dhillon & Parlett 2004)
 * for the top k eigenpairs only.
 *
 * Data. Sample i (0 <= i < m) is a row x_i in R^p, given by a row accessor that writes the
 * coordinates [a, a + len) of row i (so no m x p matrix is needed when p is large: the rows can
 * be regenerated), or by a dense row-major matrix (dpd_pca_compute_dense). The matrix analysed:
 *   center != 0:  S = (1/(m-1)) sum_i (x_i - xbar)(x_i - xbar)^T   (sample covariance, m >= 2),
 *   center == 0:  S = (1/m)     sum_i x_i x_i^T                     (second moment, m >= 1).
 * The result: the k largest eigenvalues of S in descending order and orthonormal eigenvectors
 * V (p x k, row-major: V[l k + j] is coordinate l of direction j, so a row-major block of rows
 * times V is one dgemm), each with the sign that makes its entry of largest |.| (the first
 * one among ties) positive, so the result does not depend on LAPACK's sign choices.
 *
 * Two routes, the same result up to rounding (tests/unit/test_pca.c: 1e-10):
 *   covariance (p <= m): S is formed (p x p) by cblas_dsyrk over blocks of `block` rows (each
 *       block of centred rows is generated, then added), and LAPACKE_dsyevr returns its top k
 *       eigenpairs only. Time O(m p^2 + p^2 k), memory p^2 + block p + p k doubles.
 *   gram (p > m): the m x m matrix T = Y Y^T / d (Y the centred or raw rows, d = m - 1 or m),
 *       which has the same non-zero eigenvalues as S, is accumulated by cblas_dsyrk over chunks
 *       of `chunk` coordinates (each chunk of all m rows generated, then added); its top k
 *       eigenvectors u_j give the directions v_j = Y^T u_j / sqrt(d lambda_j), formed chunk by
 *       chunk with cblas_dgemm. Time O(m^2 p + m^3), memory m^2 + m chunk + p (k + 1) + m k
 *       doubles. Here k <= m (centred: k <= m - 1, the rank bound)
 * Both routes refuse (DPD_EINVAL naming 'k') when lambda_k <= n DBL_EPSILON lambda_1 (n the
 * order of the matrix decomposed): beyond the numerical rank a direction is not determined by
 * the data. Centring takes one extra pass over the data for the mean (two-pass: no cancellation
 * when the mean is large, e.g. an offset). route = auto picks covariance when p <= m, else gram:
 * the cheaper in time (m p min(m, p)) and in memory (min(m, p)^2).
 *
 * Reproducibility: the passes visit rows and coordinates in a fixed order and call BLAS and
 * LAPACK on fixed shapes; nothing runs in OpenMP. The bits are therefore fixed once OpenBLAS's own
 * thread count is (OpenBLAS may split a dsyrk or dgemm across its threads); the library never
 * changes that process-wide setting, and the CLI sets it to 1 before a run (as model=rf does). */
#ifndef DPD_PCA_H
#define DPD_PCA_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_PCA_ROUTE_AUTO = 0,   /* covariance when p <= m, else gram */
  DPD_PCA_ROUTE_COVARIANCE, /* p x p covariance */
  DPD_PCA_ROUTE_GRAM        /* m x m Gram matrix */
} dpd_pca_route;

/* Writes coordinates [a, a + len) of row i (0 <= i < m) into x[0..len). The passes ask for
 * whole rows (a = 0, len = p) or chunks that start at a multiple of `chunk` (even when chunk
 * is). Returns 0, or < 0 with err set (the error is passed on). */
typedef int (*dpd_pca_rows_fn)(void *user, size_t i, size_t a, size_t len, double *x, dpd_err *err);

typedef struct {
  size_t m;            /* samples, >= 1 (>= 2 centred) */
  size_t p;            /* dimension, >= 1 */
  size_t k;            /* directions, 1 <= k <= p (gram: k <= m, centred k <= m - 1) */
  int center;          /* non-zero: sample covariance; 0: second moment */
  dpd_pca_route route; /* auto, covariance or gram */
  size_t block;        /* rows per dsyrk block of the covariance route, >= 1 */
  size_t chunk;        /* coordinates per chunk of the gram route, >= 2 and even */
} dpd_pca_config;

/* Defaults: m = p = k = 1, center 1, route auto, block 256, chunk 1024. */
DPD_API dpd_pca_config dpd_pca_config_default(void);

typedef struct {
  size_t m, p, k;
  int center;
  dpd_pca_route route; /* the route taken (never auto) */
  double *eigenvalues; /* [k] descending */
  double *V;           /* [p k] row-major, orthonormal columns */
  double *mean;        /* [p] the sample mean (zeros when not centred) */
  double trace;        /* trace of S: the total variance (sum of all p eigenvalues) */
} dpd_pca_result;

/* The route auto resolves to for cfg (never auto). Pure. */
DPD_API dpd_pca_route dpd_pca_route_get(const dpd_pca_config *cfg);

/* Bytes the computation allocates for cfg (its route resolved), the result included; a pure
 * function of the sizes, so a caller can check a memory limit first. +inf on overflow. */
DPD_API double dpd_pca_memory(const dpd_pca_config *cfg);

/* Runs the PCA on the rows of `rows` (called in this thread only; user is borrowed). *out is
 * returned-owned (dpd_pca_result_free). DPD_EINVAL names 'm', 'p', 'k', 'block' or 'chunk';
 * DPD_ENOMEM; DPD_ENONFINITE for a non-finite entry of S; DPD_ESOLVER when LAPACK fails or
 * k exceeds the numerical rank (DPD_EINVAL, 'k'); the error of `rows`. Prints nothing. Thread-safe.
 */
DPD_API int dpd_pca_compute(const dpd_pca_config *cfg, dpd_pca_rows_fn rows, void *user,
                            dpd_pca_result **out, dpd_err *err);

/* The same on a dense row-major m x p matrix X with leading dimension ld >= p (borrowed). */
DPD_API int dpd_pca_compute_dense(const dpd_pca_config *cfg, const double *X, size_t ld,
                                  dpd_pca_result **out, dpd_err *err);

/* Releases a result; NULL is allowed. */
DPD_API void dpd_pca_result_free(dpd_pca_result *res);

#ifdef __cplusplus
}
#endif
#endif /* DPD_PCA_H */
