/* Overparameterization studies of the random-features model (docs/overparameterization.md):
 * interpolation (the spectrum of the kernel Phi Phi^T / p against the Hermite bound of the
 * slides) and sensitivity S(x) = |x| |grad_x f(x; theta)| of f(x) = phi(V x)^T theta.
 * SPDX-License-Identifier: MIT
 *
 * References: Mondelli's lectures (seed 004): lambda_min(Phi Phi^T) through the Hermite
 * coefficients of phi (Nguyen, Mondelli & Montufar 2021, step 2), and S_RF(x) = Omega(n^(1/6))
 * when E phi'(G) != 0 (Bubeck & Sellke 2021; Bombari, Kiyavash & Mondelli 2023).
 *
 * Every function is pure (writes caller memory only) and prints nothing. Dense algebra runs in
 * OpenBLAS / LAPACK: call with one OpenBLAS thread for bit-identical results across thread
 * counts (the rf commands do). */
#ifndef DPD_RF_OVERPARAM_H
#define DPD_RF_OVERPARAM_H

#include <stddef.h>

#include "dpdyn/rf.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The inputs of a problem: its training inputs X (test = 0; n x d, row-major) or its test inputs
 * (test = 1; n_test x d), regenerated bit for bit as dpd_rf_problem_create drew them (rf.h:
 * streams (S, B - 2) and (S, B - 4), the sphere's rescaling, the data file's rows). X: caller
 * memory. */
DPD_API void dpd_rf_problem_inputs_get(const dpd_rf_problem *problem, int test, double *X);

/* E phi(s G), G ~ N(0, 1), s >= 0: the mean over Gaussian inputs x ~ N(0, I_d) of feature
 * phi(v^T x) with |v| = s, in closed form (0 for the odd tanh and hermite13; s/sqrt(2 pi) for
 * relu; (s - 1)/sqrt(2 pi) for relu_centered; (s - 1) sqrt(2/pi) for abs_centered;
 * (s^2 - 1)^2 / 8 for hermite134). NaN for an unknown enumerator. */
DPD_API double dpd_rf_activation_mean_eval(dpd_rf_activation act, double s);

/* The slides' lower bound on lambda_min(Phi Phi^T / p) through the Hermite coefficients mu_r of
 * phi (include/dpdyn/rf.h), for inputs with |x_i|^2 = d (input = sphere; approximately for
 * Gaussian inputs). With K1 = X X^T / d and K1^(r) its r-th Hadamard power:
 *   E_V Phi Phi^T / p = K = sum_{r >= 0} mu_r^2 K1^(r)                  (Hermite expansion)
 *   lambda_min(K) >= hermite_sum = sum_{r=1}^{R} mu_r^2 lambda_min(K1^(r))   (Schur: K1^(r) >= 0)
 *   lambda_min(Phi Phi^T / p) >= hermite_sum / 4 w.h.p. once p >~ n log n   (matrix Chernoff)
 * The r = 0 term adds mu_0^2 1 1^T, whose lambda_min is 0 for n >= 2. lambda_min(K1^(r)) is
 * computed (LAPACK dsyevd) for r <= DPD_RF_BOUND_EIG_MAX and bounded below by Gershgorin's
 * theorem (min_i (K1_ii^r - sum_{j != i} |K1_ij|^r), clamped at 0) for larger r up to
 * R = DPD_RF_HERMITE_MAX. kernel_lambda_min is lambda_min of K truncated at r = R (the limit of
 * lambda_min(Phi Phi^T / p) as p -> infinity, minus at most the mass tail of sum_{r > R}). */
#define DPD_RF_BOUND_EIG_MAX 6
typedef struct {
  double lambda_r[DPD_RF_HERMITE_MAX + 1]; /* lambda_min(K1^(r)) or its Gershgorin bound */
  double mu_r[DPD_RF_HERMITE_MAX + 1];     /* the Hermite coefficients of phi */
  double hermite_sum;                      /* sum_{r=1}^{R} mu_r^2 lambda_r */
  double bound;                            /* hermite_sum / 4, the slides' w.h.p. bound */
  double kernel_lambda_min;                /* lambda_min(sum_{r=0}^{R} mu_r^2 K1^(r)) */
  double kernel_lambda_max;                /* lambda_max of the same */
} dpd_rf_hermite_bound;

/* The bound above for the inputs X (n x d, borrowed) and activation act. Work: three n x n
 * matrices. DPD_EINVAL for n < 2 or d < 1, DPD_ENOMEM, DPD_ESOLVER (dsyevd). */
DPD_API int dpd_rf_hermite_bound_eval(dpd_rf_activation act, const double *X, size_t n, size_t d,
                                      dpd_rf_hermite_bound *out, dpd_err *err);

/* The interpolation numbers of one problem. */
typedef struct {
  double lambda_min, lambda_max;                 /* of Phi Phi^T / p (dsyevd) */
  double lambda_min_centred, lambda_max_centred; /* of Phi~ Phi~^T / p, Phi~_ij = Phi_ij -
                                                    E_g phi(|v_j| g) (gauss_mean above: the
                                                    features' mean over Gaussian inputs, the
                                                    slides' F - E_x F) */
  double residual;             /* |Phi theta* - y| / |y|, theta* = Phi^+ y (dgelsd) */
  double theta_star_norm;      /* |theta*| */
  double theta_star_test_risk; /* (1/n_test) |Phi_test theta* - y_test|^2 */
} dpd_rf_interp_result;

/* Interpolation numbers of `problem` (borrowed). Cost O(n^2 p) (the Gram and dgelsd) plus two
 * n x n eigenproblems; memory n p + 3 n^2 + p doubles. DPD_ENOMEM, DPD_ESOLVER. */
DPD_API int dpd_rf_interp_eval(const dpd_rf_problem *problem, dpd_rf_interp_result *res,
                               dpd_err *err);

/* f(x_i) = phi(V x_i)^T theta and its input gradient grad_i = V^T diag(phi'(V x_i)) theta for m
 * points X (m x d, row-major), in blocks of DPD_RF_GRAD_BLOCK points as GEMMs: Z = X_b V^T
 * (cblas_dgemm), W = phi'(Z) * theta (each row), grad_b = W V (cblas_dgemm). V: p x d
 * row-major; grad: m x d (caller memory); f: m values (NULL: not wanted).
 * DPD_ENOMEM (the block's 2 DPD_RF_GRAD_BLOCK p doubles). */
#define DPD_RF_GRAD_BLOCK 256
DPD_API int dpd_rf_input_gradient_eval(dpd_rf_activation act, const double *V, size_t p, size_t d,
                                       const double *theta, const double *X, size_t m, double *grad,
                                       double *f, dpd_err *err);

/* The sensitivity S(x_i) = |x_i| |grad_x f(x_i; theta)| at the m points X (through
 * dpd_rf_input_gradient_eval), written to S[0..m). DPD_ENOMEM. */
DPD_API int dpd_rf_sensitivity_eval(dpd_rf_activation act, const double *V, size_t p, size_t d,
                                    const double *theta, const double *X, size_t m, double *S,
                                    dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RF_OVERPARAM_H */
