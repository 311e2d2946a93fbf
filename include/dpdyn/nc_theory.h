/* Exact one-step theory of NoisyGD on a linear last layer under neural collapse
 * (docs/math.md §3.3).
 * SPDX-License-Identifier: MIT
 *
 * References: Wang, Zhu, Su & Wang, "Neural Collapse Meets Differential Privacy: Curious Behaviors
 * of NoisyGD with Near-perfect Representation Learning" (arXiv 2405.08920, seeds 000-002); the
 * derivations and the corrections of the papers' formulas are in notes-rf-nc-sp.md part B
 * (B.3 sensitivity, B.4 the papers' bounds, B.5 the exact formulas used here).
 *
 * Setting (notes B.5). K classes, features in R^p, class counts n_j and training class means
 * xbar_j. One NoisyGD step from W = 0 on the sum loss (cross-entropy or square loss) with noise
 * N(0, sigma^2) per entry of the K x p gradient gives, for a test point x of class k, logits
 *     W x ~ eta N(m(x), sigma^2 ||x||^2 I_K),   m_j(x) = n_j xbar_j^T x - c(x),
 * where c(x) is common to all j (the cross-entropy centring; 0 for the square loss) and cancels in
 * the argmax. With gaps g_j = m_k(x) - m_j(x) (j != k, any sign) and s = sigma ||x||:
 *     P[err | x] = 1 - int phi(z) prod_{j != k} Phi(z + g_j / s) dz.                     (B.5)
 * The error is independent of eta and depends on p only through ||x||, the xbar and sigma.
 *
 * Numerics (dpd_nc_error_gaps and everything built on it). The integral is computed as
 * int phi(z) [-expm1(sum_j log Phi(z + a_j))] dz, a_j = g_j / s, so an error of 1e-150 keeps its
 * relative accuracy; log Phi(x) is log1p(-Q(x)) for x > 0 (gsl_cdf_ugaussian_Q) and
 * log(erfc(-x/sqrt 2)) - log 2 otherwise (gsl_sf_log_erfc). With amin = min_j a_j and
 * c = max(amin, 0) / 2 the integrand is integrated over [-c - 15, -c + 14] by GSL's adaptive
 * Gauss-Kronrod rule (qag, 41 points) with relative tolerance 1e-11 (absolute 1e-300). The tails
 * left out are below (K - 1) * 1e-21 relative to the result: the integrand is at most
 * min(phi(z), (K - 1) phi(z) Phi(-z - amin)) and the result at least Phi(-amin/sqrt 2) (notes in
 * nc_theory.c). So the result has relative error ~1e-11 (absolute ~1e-11 at worst); it
 * underflows to 0 (or a denormal) only when the error is below ~1e-300.
 *
 * Non-private limit s = 0: the classifier is argmax m(x). The error is 1 if some gap is negative;
 * otherwise, with t >= 0 gaps equal to 0 (ties), it is t / (t + 1): the limit s -> 0+ of (B.5),
 * which is also the error of an argmax that breaks ties uniformly at random. (A deterministic
 * tie rule would give 0 or 1 depending on the labels; under noise s > 0 ties have probability 0.)
 *
 * Every function is pure and thread-safe. Errors are reported through the optional `dpd_err`
 * (NULL allowed) and a negative status; outputs are written only on success. Arrays are borrowed.
 * Matrices are column-major: `means` is p x K with column j = xbar_j (leading dimension p). */
#ifndef DPD_NC_THEORY_H
#define DPD_NC_THEORY_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 1. The boxed one-step formula (notes B.5) ----------------------------------------------
 */

/* P[err | x] of (B.5) from the `ngaps` = K - 1 gaps g_j (finite, any sign) and the noise scale
 * s = sigma ||x|| >= 0 (s = 0: the non-private answer above). ngaps = 0 (a single class) gives 0.
 * DPD_EINVAL for a NULL pointer, a non-finite gap or s, s < 0; DPD_ENOMEM; DPD_EMAXITER if the
 * quadrature misses its tolerance. */
DPD_API int dpd_nc_error_gaps(const double *gaps, size_t ngaps, double s, double *p_err,
                              dpd_err *err);

/* The same from the K mean logits m[0..K-1] (any common shift; e.g. the noiseless W x of a
 * simulator) and the true class k < K: gaps m[k] - m[j], j != k. K >= 1. */
DPD_API int dpd_nc_error_logits(const double *m, size_t K, size_t k, double s, double *p_err,
                                dpd_err *err);

/* ---- 2a. From the training statistics --------------------------------------------------------
 */

/* Mean logits m_j = counts[j] * xbar_j^T x (j < K, without the common c(x)) and ||x||_2, for a
 * test point x in R^p; `means` p x K column-major, counts[j] >= 0 finite (doubles so that
 * fractional counts, e.g. n/K, are allowed). Passing the class sums sum_{y_i = j} x_i as `means`
 * with all counts 1 gives the same. `m` (K entries) and `xnorm` are borrowed outputs. */
DPD_API int dpd_nc_mean_logits(size_t K, size_t p, const double *counts, const double *means,
                               const double *x, double *m, double *xnorm, dpd_err *err);

/* Gaps g (K - 1 entries, j = 0..K-1 skipping k, borrowed output) and noise scale s = sigma ||x||
 * of a test point x of class k < K; sigma >= 0 is the per-entry noise std of the summed gradient.
 */
DPD_API int dpd_nc_point_gaps(size_t K, size_t p, const double *counts, const double *means,
                              const double *x, size_t k, double sigma, double *gaps, double *s,
                              dpd_err *err);

/* P[err | x] of a test point x of class k: dpd_nc_point_gaps then dpd_nc_error_gaps. */
DPD_API int dpd_nc_error_point(size_t K, size_t p, const double *counts, const double *means,
                               const double *x, size_t k, double sigma, double *p_err,
                               dpd_err *err);

/* ---- 2b-e. Closed forms (notes B.5) ----------------------------------------------------------
 */

/* Perfect collapse, K >= 2 balanced classes of n/K samples, test x = M_k (||M_k|| = 1): all K - 1
 * gaps n/(K - 1), s = sigma: 1 - int phi(z) Phi(z + n/((K - 1) sigma))^{K-1} dz. n >= 0,
 * sigma >= 0. (Domain adaptation, K of K0 ETF columns: gap (n/K) K0/(K0 - 1) in
 * dpd_nc_error_gaps.) */
DPD_API int dpd_nc_error_collapse(size_t K, double n, double sigma, double *p_err, dpd_err *err);

/* Binary model theta in R^p, perfect collapse, any labels: theta = eta (c n e_1 + xi),
 * xi ~ N(0, sigma^2 I): error Phi(-c n / sigma) (c = 1 square loss or the papers' convention,
 * c = 1/2 logistic at 0). c > 0, n >= 0, sigma >= 0 (sigma = 0: 0 when c n > 0, 1/2 when n = 0).
 * Note: this is the K = 2 formula with s = sigma / sqrt 2, since one theta stands for the
 * difference of the two rows of W: dpd_nc_error_gaps({c n}, sigma / sqrt 2) = Phi(-c n / sigma).
 */
DPD_API int dpd_nc_error_binary(double c, double n, double sigma, double *p_err, dpd_err *err);

/* Training offset + imbalance, K >= 2 classes, clean test x = M_k (notes B.5 last part): with
 * xbar_j = M_j + nu and t = nu^T M_k, the gaps are
 *     n_k + n_j/(K - 1) + (n_k - n_j) t    (j != k),
 * and s = sigma. counts[0..K-1] >= 0; `gaps` (K - 1 entries) is a borrowed output. The matching
 * sigma uses G = sqrt((K - 1)/K) max_j ||M_j + nu|| (dpd_nc_sensitivity_ce). */
DPD_API int dpd_nc_offset_gaps(size_t K, const double *counts, size_t k, double t, double *gaps,
                               dpd_err *err);
DPD_API int dpd_nc_error_offset(size_t K, const double *counts, size_t k, double t, double sigma,
                                double *p_err, dpd_err *err);

/* Test perturbation x = M_k + nu, balanced perfect training (n/K per class): gaps
 *     n/(K - 1) + (n/K) (u_k - u_j),  u_j = M_j^T nu   (all K projections in `u`),
 * and s = sigma sqrt(1 + 2 u_k + nu2), nu2 = ||nu||^2 (1 + 2 u_k + nu2 = ||M_k + nu||^2 >= 0). */
DPD_API int dpd_nc_perturb_gaps(size_t K, double n, size_t k, const double *u, double nu2,
                                double sigma, double *gaps, double *s, dpd_err *err);
DPD_API int dpd_nc_error_perturb(size_t K, double n, size_t k, const double *u, double nu2,
                                 double sigma, double *p_err, dpd_err *err);

/* Binary stochastic shifts (Thm 3.2 setting), conditionally on the training shifts
 * (S = sum_i y_i v_i, v_i orthogonal to e_1) and the test shift v:
 *     Phi(-(n + Sv) / (sigma sqrt(1 + v2))),  Sv = S^T v, v2 = ||v||^2.
 * sigma > 0, n >= 0, v2 >= 0. */
DPD_API int dpd_nc_error_binary_shift(double n, double Sv, double v2, double sigma, double *p_err,
                                      dpd_err *err);

/* Its CLT average for i.i.d. +-beta coordinates (notes B.5, [D, U]):
 *     E_Z Phi(-(n + beta^2 sqrt(n p) Z) / (sigma sqrt(1 + p beta^2)))
 *   = Phi(-n / sqrt(sigma^2 (1 + p beta^2) + beta^4 n p))
 * (E Phi(a + b Z) = Phi(a / sqrt(1 + b^2)), so no quadrature is needed; the unit test checks the
 * identity by quadrature). n >= 0, beta >= 0, p >= 1, sigma > 0. */
DPD_API int dpd_nc_error_binary_shift_clt(double n, double beta, double p, double sigma,
                                          double *p_err, dpd_err *err);

/* ---- 3. Sensitivity and noise (notes B.3) ----------------------------------------------------
 */

/* Per-sample l2 (Frobenius) sensitivity G of the summed gradient at W = 0:
 *  - cross-entropy: the gradient is (softmax(0) - e_y) x^T = (1/K - e_y) x^T, of norm
 *    sqrt((K - 1)/K) ||x||, so G = sqrt((K - 1)/K) xmax (K >= 2, xmax = max_i ||x_i|| >= 0);
 *  - square loss l = ||W x - e_y||^2 / 2: gradient (W x - e_y) x^T = -e_y x^T at W = 0, of norm
 *    ||x||, so G = xmax (the notes B.3 state only the CE value and "square loss also works"; this
 *    definition, with the factor 1/2, makes the one-step mean logits n_j xbar_j^T x, those of CE
 *    up to the common c(x), so the two losses differ only through G);
 *  - binary theta in R^p on e_1 + v, ||v||_inf <= beta: G = sup ||x|| = sqrt(1 + beta^2 p).
 * Beyond one step the gradient is no longer at W = 0: a multi-step caller must clip to G. */
DPD_API int dpd_nc_sensitivity_ce(size_t K, double xmax, double *G, dpd_err *err);
DPD_API int dpd_nc_sensitivity_square(double xmax, double *G, dpd_err *err);
DPD_API int dpd_nc_sensitivity_binary(double beta, double p, double *G, dpd_err *err);

/* Noise std of one rho_step-zCDP step: sigma = G / sqrt(2 rho_step); G >= 0, rho_step > 0. */
DPD_API int dpd_nc_sigma(double G, double rho_step, double *sigma, dpd_err *err);

/* ---- 4. The papers' bounds, as printed and as corrected (notes B.4) ------------------------- */
/* Pure functions returning the value of a bound (a probability bound may exceed 1: it is returned
 * as printed, not clipped) or a sample complexity n. Outside a theorem's hypotheses or for invalid
 * input (negative n, rho <= 0, gamma outside (0, 1), ...) they return NaN: "no bound here".
 * "printed" is the formula of the seed (arXiv 2405.08920 v3 numbering); "corrected" applies the
 * correction of notes B.4/B.5 named at each function. beta is the l_inf shift size, p the
 * dimension, rho the zCDP parameter of the step, sigma the noise std, gamma the target error. */

/* Thm 3.1 (GD, zero init, binary): 0 when beta^2 p <= 1 (separable), otherwise
 * exp(-n / (2 (beta^4 p^2 + beta^2 p / 3))); with independent coordinates (`independent` != 0)
 * exp(-n / (2 (beta^4 p + beta^2 / 3))). As printed (no correction in notes B.4). */
DPD_API double dpd_nc_bound_thm31(double n, double beta, double p, int independent);

/* Thm 3.2 (NoisyGD, stochastic shifts), as printed:
 * exp(-n^2 rho / (2 (1 + beta^2 p)^2)) + exp(-n / (8 (beta^4 p^2 + beta^2 p / 3))), the second
 * term with beta^4 p + beta^2 / 3 for independent coordinates. (Needs beta > 0.) */
DPD_API double dpd_nc_bound_thm32(double n, double beta, double p, double rho, int independent);

/* Thm 3.3 (deterministic shifts, needs beta^2 p < 1): exp(-n^2 (1 - beta^2 p)^2 / (c (1 + beta^2 p)
 * sigma^2)) with c = 1 as printed and c = 2 corrected (the Chernoff bound Phi(-a) <= e^{-a^2/2};
 * notes B.4: "the paper drops the 2"). */
DPD_API double dpd_nc_bound_thm33_printed(double n, double beta, double p, double sigma);
DPD_API double dpd_nc_bound_thm33_corrected(double n, double beta, double p, double sigma);

/* Thm D.1 (perfect collapse, K balanced classes) AS PRINTED, which is wrong (notes B.5: wrong
 * off-diagonal mean, variance sigma^2 instead of 2 sigma^2 for a difference, and a union bound
 * stated as an equality): (K - 1) Phi(-(n/(K sigma)) (1 + (K - 2)/(K (K - 1)))); at K = 10,
 * n = 100, sigma = 10 it gives 1.24 where the exact error is 0.6231. Its exponential form
 * (K - 1) exp(-C_K n^2 / (K sigma^2)), C_K = (1 + (K - 2)/(K (K - 1)))^2, and its printed sample
 * complexity G K sqrt(log((K - 1)/gamma)) / (C_K sqrt(2 rho)). K >= 2. */
DPD_API double dpd_nc_bound_d1_printed(size_t K, double n, double sigma);
DPD_API double dpd_nc_bound_d1_printed_exp(size_t K, double n, double sigma);
DPD_API double dpd_nc_samples_d1_printed(size_t K, double G, double rho, double gamma);
/* The corrected D.1 (a bound, not an equality): the union bound
 * (K - 1) Phi(-n / (sqrt 2 (K - 1) sigma)) over the K - 1 gaps n/(K - 1) of the exact formula
 * (dpd_nc_error_collapse); 1.94 at K = 10, n = 100, sigma = 10. */
DPD_API double dpd_nc_bound_d1_union(size_t K, double n, double sigma);

/* Thm D.3 (binary perfect collapse, logistic factor 1/2, G = 1): the equality Phi(-n/(2 sigma))
 * (= dpd_nc_error_binary(0.5, n, sigma)) is bounded as printed by exp(-n^2/(2 sigma^2)), which is
 * NOT a bound (it is below Phi(-n/(2 sigma)) for large n); corrected exp(-n^2/(8 sigma^2))
 * (Phi(-a) <= e^{-a^2/2}, notes B.4). */
DPD_API double dpd_nc_bound_d3_printed(double n, double sigma);
DPD_API double dpd_nc_bound_d3_corrected(double n, double sigma);

/* Sample complexities of Table 1 (v3; Table 2 of seed 000), rho-zCDP, error gamma, as printed.
 * Rows (L = log(1/gamma)):
 *   PERFECT       2 sqrt(L) / sqrt(rho)
 *   APPROX        p beta^2 L + max(p beta^2, 1) sqrt(L) / sqrt(2 rho)
 *   APPROX_INDEP  the same with p beta^4 in the first term (separable, independent coordinates)
 *   TEST_STOCH    max(sqrt(p) beta, 1) sqrt(L) / sqrt(2 rho)   (stochastic test perturbation)
 *   TEST_ADV      max(p beta, 1) sqrt(L) / sqrt(2 rho)         (adversarial test perturbation)
 *   OFFSET        max(sqrt(p) beta, 1) sqrt(L) / sqrt(2 rho)   (training offset)
 *   OFFSET_IMBAL  the OFFSET row / (1 - beta + 2 beta alpha)   (offset + alpha-imbalance) */
typedef enum {
  DPD_NC_TABLE1_PERFECT = 0,
  DPD_NC_TABLE1_APPROX,
  DPD_NC_TABLE1_APPROX_INDEP,
  DPD_NC_TABLE1_TEST_STOCH,
  DPD_NC_TABLE1_TEST_ADV,
  DPD_NC_TABLE1_OFFSET,
  DPD_NC_TABLE1_OFFSET_IMBAL
} dpd_nc_table1_row;

/* The row's n for (beta, p, rho, gamma, alpha); alpha (imbalance in [0, 1]) is used by
 * OFFSET_IMBAL only. NaN for an unknown row or invalid input. */
DPD_API double dpd_nc_samples_table1(dpd_nc_table1_row row, double beta, double p, double rho,
                                     double gamma, double alpha);

/* Sample complexities solved from the bounds themselves (notes B.4 corrections): Thm 3.2's
 * privacy term exp(-n^2 rho / (2 (1 + beta^2 p)^2)) <= gamma gives
 * n = (1 + beta^2 p) sqrt(2 log(1/gamma) / rho) (neither printed version, sqrt(log) in the main
 * text and log in the appendix, matches); the corrected Thm 3.3 bound with
 * sigma^2 = (1 + beta^2 p)/(2 rho) gives n = (1 + beta^2 p) sqrt(log(1/gamma) / rho) /
 * (1 - beta^2 p) (the printed one lacks the square root), NaN unless beta^2 p < 1. */
DPD_API double dpd_nc_samples_thm32_privacy(double beta, double p, double rho, double gamma);
DPD_API double dpd_nc_samples_thm33_corrected(double beta, double p, double rho, double gamma);
/* Thm 3.3's sample complexity as printed: (1 + beta^2 p) log(1/gamma) / (2 rho (1 - beta^2 p)^2).
 */
DPD_API double dpd_nc_samples_thm33_printed(double beta, double p, double rho, double gamma);

/* Thm 3.4 (multi-iteration projected NoisyGD, ball radius R, k >= 1 iterations, needs
 * beta^2 p < 1), as printed: exp(-n^2 / (C^2 sigma^2 (1 + beta^2 p))) + k e^{-t}, t > 0, with
 *     C = C_{p,k} = (1 + 2^-k)/(1 - 2^-k) * (1/2)/(3/2) * (1 + e^{R (1 + beta^2 p)})^2
 *                   / (1 - beta^2 p)^2
 * (notes B.4: the appendix calls this C_{p,k}^2; the theorem's form is used). Its step size as
 * printed, eta = R / (n (1 + beta^2 p) + (p + sqrt(p t) + t)), and as the proof needs it (the
 * square root of the noise-norm term: R / (n (1 + beta^2 p) + (p + sqrt(p t) + t)^(1/2)),
 * notes B.4 "the theorem omits the square root"). */
DPD_API double dpd_nc_bound_thm34(double n, double beta, double p, double sigma, double R, size_t k,
                                  double t);
DPD_API double dpd_nc_eta_thm34_printed(double n, double beta, double p, double R, double t);
DPD_API double dpd_nc_eta_thm34_corrected(double n, double beta, double p, double R, double t);

/* Thm 4.1 (projection / PCA fix, K = 2; v3 and seed 000 with rho, v1 lacks it), as printed:
 * n = sqrt(G^2 log(2/gamma) / (M rho)) with G = 1 + beta (1 + beta0 + p beta0) and
 * M = (1 - beta0)^2 - p beta beta0 - (1 + beta0)(beta + beta0 p)
 *     - (beta + beta0 p)(1 + beta + beta0 + beta beta0 p);  NaN unless M > 0. */
DPD_API double dpd_nc_samples_thm41(double beta, double beta0, double p, double rho, double gamma);

/* Appendix B.1 (binary, training offset v with v_1 = e_1^T v, alpha-imbalance, G = sqrt(1 +
 * beta^2 p), sigma = G/sqrt(2 rho)): the error printed as Phi(+n (1 - (1 - 2 alpha) v_1)/(2 sigma))
 * has the wrong sign; corrected Phi(-n (1 - (1 - 2 alpha) v_1)/(2 sigma)) (notes B.4). The printed
 * exponential bound exp(-n^2 (1 - beta + 2 alpha beta)^2 rho / (4 G^2)) is returned by
 * dpd_nc_bound_b1_exp. alpha in [0, 1], |v_1| <= 1, sigma > 0. */
DPD_API double dpd_nc_error_b1_printed(double n, double alpha, double v1, double sigma);
DPD_API double dpd_nc_error_b1_corrected(double n, double alpha, double v1, double sigma);
DPD_API double dpd_nc_bound_b1_exp(double n, double alpha, double beta, double p, double rho);

#ifdef __cplusplus
}
#endif
#endif /* DPD_NC_THEORY_H */
