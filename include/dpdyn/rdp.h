/* Renyi differential privacy (RDP) accounting of the Gaussian and the Poisson-subsampled Gaussian
 * mechanism, with add/remove neighbours (issue 28 §1: "RDP with the tight conversion as a second
 * opinion" beside the PLD accountant of dpdyn/pld.h).
 * SPDX-License-Identifier: MIT
 *
 * Words. A mechanism M is (alpha, r)-RDP when the Renyi divergence of order alpha > 1 between
 * M(D) and M(D') is at most r for all neighbours D, D'. An RDP curve is a list of orders
 * alphas[0..n-1] with the bound rdp[i] at alphas[i]; every function below works on such curves,
 * order by order. sigma is the noise multiplier (noise standard deviation over the l2
 * sensitivity of one step); q is the Poisson sampling rate (each record is in a step's batch
 * independently with probability q). Neighbours differ by adding or removing one record.
 *
 * Recipe: rdp of one step at the orders of dpd_rdp_orders_default (dpd_rdp_subsampled_gaussian),
 * composed over T steps (dpd_rdp_compose: RDP adds up, order by order; a heterogeneous schedule
 * is one compose call per segment), converted to (eps, delta) by dpd_rdp_epsilon (or delta at a
 * given eps by dpd_rdp_delta), minimised over the orders. dpd_rdp_subsampled_gaussian_epsilon
 * does all of it for a homogeneous run.
 *
 * Orders. The subsampled Gaussian is computed at integer orders alpha >= 2 only (the closed
 * binomial sum below); fractional orders are refused with DPD_EINVAL, not approximated. The
 * plain Gaussian (q = 1) takes any real alpha > 1. Orders above DPD_RDP_ORDER_MAX are refused.
 *
 * Rounding. Every formula is evaluated in log space without cancellation (relative error a few
 * ulps times log2(alpha)); results are not directed-rounded, so a bound can sit an ulp-level
 * relative amount below the exact one, far below the slack of the conversion itself.
 *
 * All functions are pure and thread-safe; they report errors through the optional `dpd_err`
 * (NULL allowed) and a negative status, DPD_EINVAL naming the parameter, its value and the
 * allowed range. Outputs (borrowed pointers) are written only on success. */
#ifndef DPD_RDP_H
#define DPD_RDP_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest order accepted (the binomial sum has alpha - 1 terms). */
#define DPD_RDP_ORDER_MAX 1048576.0

/* The default orders, minimised over by the conversions: the integers 2, 3, ..., 64, then 80,
 * 96, 128, 192, 256, 384, 512, 768, 1024 (integers only: the subsampled Gaussian is computed at
 * integer orders; the large orders serve small eps, large T, small delta). Returns static storage
 * and writes their number to `n` (borrowed output, not NULL). */
DPD_API const double *dpd_rdp_orders_default(size_t *n);

/* RDP of one Gaussian step of noise multiplier sigma in (0, inf] at each order alphas[i] > 1
 * (any real, finite): rdp[i] = alphas[i] / (2 sigma^2) (Mironov 2017, Prop. 7). sigma = inf
 * gives 0. `alphas` borrowed input, `rdp` borrowed output of n values; n = 0 does nothing. */
DPD_API int dpd_rdp_gaussian(double sigma, const double *alphas, size_t n, double *rdp,
                             dpd_err *err);

/* RDP of one step of the Poisson-subsampled Gaussian mechanism, rate q in (0, 1], noise
 * multiplier sigma in (0, inf], add/remove neighbours (Mironov, Talwar, Zhang 2019, "Renyi
 * differential privacy of the sampled Gaussian mechanism", §3.3), at integer orders alpha >= 2:
 *   rdp = log(A_alpha) / (alpha - 1),
 *   A_alpha = sum_{k=0}^{alpha} binom(alpha, k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 sigma^2)).
 * q = 1 reduces to alpha / (2 sigma^2) (the only term is k = alpha; then fractional alpha > 1 is
 * accepted too, through dpd_rdp_gaussian). sigma = inf gives 0. `alphas` borrowed input, `rdp`
 * borrowed output of n values. */
DPD_API int dpd_rdp_subsampled_gaussian(double sigma, double q, const double *alphas, size_t n,
                                        double *rdp, dpd_err *err);

/* Composition (Mironov 2017, Prop. 1): total[i] += steps * rdp[i] for i < n, for `steps` >= 1
 * identical steps with per-step curve rdp (each value in [0, inf]). Initialise `total` to zeros
 * and call once per segment of a heterogeneous sequence (same orders in every call). `rdp`
 * borrowed input, `total` borrowed in/out. */
DPD_API int dpd_rdp_compose(const double *rdp, size_t n, size_t steps, double *total, dpd_err *err);

/* (eps, delta)-DP from an RDP curve by the tight conversion (Canonne-Kamath-Steinke 2020;
 * Balle et al. 2020, Thm 21; the formula of dpd_privacy_eps_tight, evaluated by the same code):
 *   eps = min_i [rdp[i] + log1p(-1/alpha_i) - (log delta + log alpha_i) / (alpha_i - 1)],
 * clamped at 0. Orders alphas[i] > 1 (any real, finite), rdp[i] in [0, inf], delta in (0, 1),
 * n >= 1. `best_alpha` (borrowed output, NULL allowed) receives the minimising order. */
DPD_API int dpd_rdp_epsilon(const double *alphas, const double *rdp, size_t n, double delta,
                            double *eps, double *best_alpha, dpd_err *err);

/* The classic conversion (Mironov 2017, Prop. 3), for comparison; never below dpd_rdp_epsilon:
 *   eps = min_i [rdp[i] + log(1/delta) / (alpha_i - 1)].  Arguments as dpd_rdp_epsilon. */
DPD_API int dpd_rdp_epsilon_classic(const double *alphas, const double *rdp, size_t n, double delta,
                                    double *eps, double *best_alpha, dpd_err *err);

/* delta at `eps` in [0, inf] by the same tight conversion solved for delta (Canonne-Kamath-
 * Steinke 2020, Prop. 12; the form of dpd_privacy_zcdp_delta):
 *   delta = min_i exp((alpha_i - 1)(rdp[i] - eps)) (1 - 1/alpha_i)^(alpha_i - 1) / alpha_i,
 * capped at 1 (eps = inf gives 0). For each order the term is the smallest delta at which that
 * order's eps above reaches `eps`, so dpd_rdp_epsilon(delta) <= eps (up to rounding) and the two
 * functions are inverses on the curve's lower envelope. Other arguments as dpd_rdp_epsilon. */
DPD_API int dpd_rdp_delta(const double *alphas, const double *rdp, size_t n, double eps,
                          double *delta, double *best_alpha, dpd_err *err);

/* All of the recipe for `steps` >= 1 homogeneous Poisson-subsampled Gaussian steps at the
 * default orders: eps (tight conversion) at delta in (0, 1); best_alpha may be NULL. */
DPD_API int dpd_rdp_subsampled_gaussian_epsilon(double sigma, double q, size_t steps, double delta,
                                                double *eps, double *best_alpha, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RDP_H */
