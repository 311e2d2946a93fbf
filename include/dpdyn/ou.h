/* Ornstein-Uhlenbeck theory of unclipped full-batch DP-GD on random features (docs/math.md §2.4).
 * SPDX-License-Identifier: MIT
 *
 * For a feature matrix Phi (n x p), labels y (n), A = (2/n) Phi^T Phi and theta* = Phi^+ y:
 *   mean        theta_bar(t) = (I - e^{-A t}) theta*                         (continuous)
 *               theta_bar_k  = sum_j (1 - g_j^k) v_j v_j^T theta*,  g_j = 1 - eta a_j (discrete)
 *   covariance  Cov(t) = Sigma_n^2 [ sum_j n (1 - e^{-4 s_j^2 t/n}) / (4 s_j^2) v_j v_j^T
 *                                    + t (I - P_row) ]                           (continuous)
 *               Cov_k  = eta Sigma_n^2 [ sum_j (1 - g_j^{2k}) / (1 - g_j^2) v_j v_j^T
 *                                    + k (I - P_row) ]                           (discrete)
 * with Sigma_n = 2 C sigma / n, a_j = 2 s_j^2 / n, (s_j, v_j) the singular values / right singular
 * vectors of Phi and P_row = Phi^+ Phi. Continuous time at step k is t = eta k.
 * Everything is computed from the n x n eigenproblem of Phi Phi^T (LAPACK dsyevd); no p x p
 * matrix is ever formed.
 *
 * Thread-safety: a dpd_ou object is read-only after creation; the eval functions may be called
 * concurrently on one object. They allocate O(n) (mean) or O(m n) (risk) scratch memory. */
#ifndef DPD_OU_H
#define DPD_OU_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default relative singular-value cutoff: modes with s_j <= rcond s_max are treated as zero.
 * The Gram eigenvalues s_j^2 carry an absolute error of about DBL_EPSILON s_max^2, so singular
 * values below ~sqrt(DBL_EPSILON) s_max ~ 1.5e-8 s_max are rounding noise; 1e-6 leaves margin. */
#define DPD_OU_RCOND_DEFAULT 1e-6

typedef struct {
  double rcond; /* relative cutoff on s_j / s_max, in [0, 1) */
} dpd_ou_config;

/* Default configuration (rcond = DPD_OU_RCOND_DEFAULT). */
DPD_API dpd_ou_config dpd_ou_config_default(void);

typedef struct dpd_ou dpd_ou;

/* Eigendecomposes Phi Phi^T and prepares theta* = Phi^+ y (min-norm least squares).
 *  config  borrowed (copied); NULL means the defaults.
 *  phi     borrowed, n x p row-major; it must outlive the object (it is read by the evals).
 *  y       borrowed (copied), n labels.
 *  out     returned-owned; free with dpd_ou_free.
 * Returns DPD_OK, DPD_EINVAL (NULL pointers, zero sizes, non-finite entries, bad rcond),
 * DPD_ENOMEM, or DPD_ESOLVER (LAPACK failure). */
DPD_API int dpd_ou_create(const dpd_ou_config *config, const double *phi, size_t n, size_t p,
                          const double *y, dpd_ou **out, dpd_err *err);

/* Releases the object; NULL is allowed. */
DPD_API void dpd_ou_free(dpd_ou *ou);

/* Number of kept modes r (singular values above the cutoff). */
DPD_API size_t dpd_ou_rank_get(const dpd_ou *ou);

/* Writes the n singular values of Phi in decreasing order into s (borrowed, length n); modes
 * below the cutoff are written as 0. */
DPD_API void dpd_ou_singular_values_get(const dpd_ou *ou, double *s);

/* Writes theta* = Phi^+ y into theta (borrowed, length p). */
DPD_API void dpd_ou_theta_star_get(const dpd_ou *ou, double *theta);

typedef enum {
  DPD_OU_CONTINUOUS = 0, /* OU process at t = eta k */
  DPD_OU_DISCRETE = 1    /* exact moments of k unclipped DP-GD steps of size eta */
} dpd_ou_time;

typedef struct {
  double eta;       /* step size, > 0 */
  double clip;      /* clipping norm C, > 0 (Sigma_n = 2 C sigma / n) */
  double sigma;     /* noise multiplier, >= 0 */
  dpd_ou_time time; /* continuous or exact discrete */
} dpd_ou_params;

/* Mean path theta_bar after `steps` steps (continuous: at t = eta steps) into theta (borrowed,
 * length p). Returns DPD_OK, DPD_EINVAL or DPD_ENOMEM. */
DPD_API int dpd_ou_mean_eval(const dpd_ou *ou, const dpd_ou_params *par, size_t steps,
                             double *theta, dpd_err *err);

typedef struct {
  double bias;  /* (1/m) sum_i (phi_test_i^T theta_bar - y_test_i)^2 */
  double noise; /* Tr(Cov Sigma_phi), Sigma_phi = Phi_test^T Phi_test / m */
  double risk;  /* bias + noise: the expected test risk under the OU law */
} dpd_ou_risk;

/* Expected test risk on a test set at each of the nt step counts steps[0..nt-1].
 *  phi_test  borrowed, m x p row-major test features; y_test borrowed, m labels.
 *  out       borrowed, nt entries.
 * Cost O(m n p) once (Phi_test Phi^T), then O(m r) per time point; the (I - P_row) part uses
 * ||Phi_test||_F^2 - sum_j ||Phi_test v_j||^2. Returns DPD_OK, DPD_EINVAL or DPD_ENOMEM. */
DPD_API int dpd_ou_risk_eval(const dpd_ou *ou, const dpd_ou_params *par, const double *phi_test,
                             size_t m, const double *y_test, const size_t *steps, size_t nt,
                             dpd_ou_risk *out, dpd_err *err);

/* The same, with the O(m n p) projection of the test set done once and reused: for evaluating
 * several parameter sets (e.g. the discrete and the continuous curve) on one test set.
 *  dpd_ou_test_create  phi_test borrowed (read during the call only), y_test copied; *out
 *                      returned-owned (dpd_ou_test_free); `ou` is borrowed and must outlive it.
 *  dpd_ou_test_risk_eval  as dpd_ou_risk_eval, O(m r) per time point.
 * Return DPD_OK, DPD_EINVAL or DPD_ENOMEM. */
typedef struct dpd_ou_test dpd_ou_test;
DPD_API int dpd_ou_test_create(const dpd_ou *ou, const double *phi_test, size_t m,
                               const double *y_test, dpd_ou_test **out, dpd_err *err);
DPD_API int dpd_ou_test_risk_eval(const dpd_ou_test *t, const dpd_ou_params *par,
                                  const size_t *steps, size_t nt, dpd_ou_risk *out, dpd_err *err);
/* Releases a test set; NULL is allowed. */
DPD_API void dpd_ou_test_free(dpd_ou_test *t);

/* First grid index i (steps[i], scanned in the given order) at which the mean path leaves the
 * no-clip set {theta : |phi_i^T theta - y_i| < C / (2 ||phi_i||) for all i}; *index = nt when it
 * never does on the grid. Rows with phi_i = 0 are never clipped. Returns DPD_OK, DPD_EINVAL or
 * DPD_ENOMEM. */
DPD_API int dpd_ou_exit_step(const dpd_ou *ou, const dpd_ou_params *par, const size_t *steps,
                             size_t nt, size_t *index, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_OU_H */
