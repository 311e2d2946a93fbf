/* Privacy loss distributions (PLD): a numerical accountant for the Gaussian and the
 * Poisson-subsampled Gaussian mechanism under add/remove neighbours (docs/privacy.md, "Privacy
 * loss distributions").
 * SPDX-License-Identifier: MIT
 *
 * A dpd_pld holds, for each order of the neighbouring pair (remove: D' = D + {x} vs D; add: the
 * reverse), two discretised distributions of the privacy loss L on the grid L_i = i h: a
 * pessimistic one (every loss rounded up to the grid, tails pushed up or into an "infinity" mass)
 * and an optimistic one (every loss rounded down). delta(eps) of the pessimistic one is an upper
 * bound of the mechanism's true delta(eps), that of the optimistic one a lower bound, after any
 * number of compositions: so every query returns the pair (upper, lower) and the truth lies
 * between. Reported delta is the maximum over the two orders.
 *
 * Noise multiplier sigma: the Gaussian noise standard deviation divided by the l2 sensitivity.
 * Grid step h: the discretisation of the privacy loss, in [DPD_PLD_H_MIN, DPD_PLD_H_MAX]; after
 * T compositions eps_up - eps_low <= about T h (each step's rounding moves a loss by < h).
 *
 * Composition uses FFTW (r2c/c2r, FFTW_ESTIMATE). FFTW's planner is process-wide: create and
 * compose PLDs from one thread at a time. The library never prints. Functions returning int
 * report errors through the optional `dpd_err` (NULL allowed) and a negative status
 * (DPD_EINVAL naming the argument and its allowed range, DPD_ENOMEM); outputs (borrowed
 * pointers) are written only on success. */
#ifndef DPD_PLD_H
#define DPD_PLD_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The allowed range of the grid step h. */
#define DPD_PLD_H_MIN 1e-7
#define DPD_PLD_H_MAX 1.0
/* The largest grid (points of one distribution) a PLD may use: 2^26 (512 MiB of doubles). */
#define DPD_PLD_MAX_POINTS ((size_t)1 << 26)

typedef struct dpd_pld dpd_pld;

/* One Gaussian mechanism of noise multiplier sigma in (0, inf) (sensitivity 1). Its privacy loss
 * L = log(N(1,sigma^2)/N(0,sigma^2))(x), x ~ N(1, sigma^2), is N(1/(2 sigma^2), 1/sigma^2) in both
 * orders. *pld is returned-owned (dpd_pld_free). */
DPD_API int dpd_pld_gaussian(double sigma, double h, dpd_pld **pld, dpd_err *err);

/* One Poisson-subsampled Gaussian step, sampling rate q in (0, 1], noise multiplier sigma in
 * (0, inf), add/remove neighbours: remove order (1-q)N(0,s^2) + qN(1,s^2) vs N(0,s^2), add order
 * the reverse; both are kept and composed, and delta is the larger of the two. q = 1 is the
 * Gaussian mechanism. *pld is returned-owned. */
DPD_API int dpd_pld_subsampled_gaussian(double sigma, double q, double h, dpd_pld **pld,
                                        dpd_err *err);

/* Neighbouring relations. add/remove: D' = D plus or minus one record, one record's contribution
 * to a step's sum has norm <= C (the clipping norm), so the noise multiplier sigma is the noise
 * standard deviation over C. replace-one: one record replaced by another; the two contributions
 * each have norm <= C, so they differ by up to 2C (worst case g' = -g). */
typedef enum { DPD_NEIGHBOURS_ADD_REMOVE = 0, DPD_NEIGHBOURS_REPLACE_ONE = 1 } dpd_neighbours;

/* How one step picks its batch. */
typedef enum {
  DPD_SAMPLING_POISSON = 0,     /* each record independently with probability q in (0, 1] */
  DPD_SAMPLING_FIXED = 1,       /* b distinct records drawn without replacement from n (the
                                   record is in the batch with probability q = b/n); defined for
                                   replace-one neighbours only (n is fixed) */
  DPD_SAMPLING_REPLACEMENT = 2  /* b draws with replacement from n records: the number of copies
                                   of a record is Binomial(b, 1/n); replace-one only */
} dpd_sampling;

/* One step of a subsampled Gaussian mechanism with the noise multiplier sigma in (0, inf). */
typedef struct {
  dpd_sampling sampling;
  dpd_neighbours neighbours;
  double sigma;
  double q;          /* POISSON: the rate in (0, 1]; ignored otherwise */
  size_t batch, n;   /* FIXED, REPLACEMENT: the batch size b in [1, n] and the data set size n */
} dpd_pld_step;

/* The PLD of one step (a dominating pair of it, discretised as dpd_pld_gaussian's is).
 * POISSON + ADD_REMOVE is dpd_pld_subsampled_gaussian. DPD_EINVAL names the member and its
 * allowed range (e.g. FIXED with ADD_REMOVE). *pld: returned-owned. */
DPD_API int dpd_pld_step_create(const dpd_pld_step *step, double h, dpd_pld **pld, dpd_err *err);

/* The estimate of eps(delta) between the two bounds (the value a user reads as "the" epsilon
 * of the discretised mechanism; see docs/privacy.md for how it is made): eps_low <= eps_est <=
 * eps_up. */
DPD_API int dpd_pld_epsilon_estimate(const dpd_pld *pld, double delta, double *eps_est,
                                     dpd_err *err);

/* T >= 1 compositions of `pld` (borrowed) with itself, by an FFT power. *out is returned-owned. */
DPD_API int dpd_pld_compose_self(const dpd_pld *pld, size_t T, dpd_pld **out, dpd_err *err);

/* Composition of two PLDs (borrowed) of the same grid step, by FFT convolution (heterogeneous
 * sequences). *out is returned-owned. */
DPD_API int dpd_pld_compose(const dpd_pld *a, const dpd_pld *b, dpd_pld **out, dpd_err *err);

/* delta(eps) = sum_{L_i > eps} (1 - e^{eps - L_i}) p_i + m_inf, maximised over the orders, of the
 * pessimistic (delta_up) and optimistic (delta_low) distributions; eps in [0, inf]. Either output
 * may be NULL. delta_low <= true delta(eps) <= delta_up. */
DPD_API int dpd_pld_delta(const dpd_pld *pld, double eps, double *delta_up, double *delta_low,
                          dpd_err *err);

/* Smallest eps >= 0 with delta(eps) <= delta, delta in (0, 1): eps_up from the pessimistic
 * distributions (re-checked: delta_up(eps_up) <= delta, so never below the true eps; INFINITY
 * when the infinity mass exceeds delta) and eps_low from the optimistic ones (never above the true
 * eps up to rounding). Either output may be NULL. */
DPD_API int dpd_pld_epsilon(const dpd_pld *pld, double delta, double *eps_up, double *eps_low,
                            dpd_err *err);

/* The grid step of `pld`, and the number of points of its largest distribution. */
DPD_API double dpd_pld_h(const dpd_pld *pld);
DPD_API size_t dpd_pld_points(const dpd_pld *pld);

/* Frees `pld`; NULL allowed. */
DPD_API void dpd_pld_free(dpd_pld *pld);

#ifdef __cplusplus
}
#endif

#endif
