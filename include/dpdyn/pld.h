/* Privacy loss distributions (PLD): a numerical accountant for subsampled Gaussian mechanisms
 * (Poisson, fixed-size and with-replacement batches; add/remove and replace-one neighbours);
 * docs/privacy.md, "Privacy loss distributions".
 * SPDX-License-Identifier: MIT
 *
 * A dpd_pld holds, for each order of the neighbouring pair (remove: D' = D + {x} vs D; add: the
 * reverse; one order where the pair is symmetric), two discretised distributions of the privacy
 * loss L on the grid L_i = i h:
 *  - pessimistic ("connect the dots", Doroshenko et al. 2022): each step's delta(eps) equals the
 *    true one at every grid point and is a chord of it in between, so it is above the true curve
 *    everywhere (delta is convex in e^eps), and stays above after any number of compositions;
 *  - optimistic: grid-point deltas lowered by a bound of the chord's excess, then the greatest
 *    convex minorant: a distribution whose delta is below the true curve everywhere.
 * delta(eps) of the pessimistic one is an upper bound of the mechanism's true delta(eps), that of
 * the optimistic one a lower bound, after any number of compositions: every query returns the
 * pair (upper, lower) and the truth lies between. Reported delta is the maximum over the orders.
 * Both errors are second order in h per step (eps_up - eps is about c T h^2 rather than T h);
 * dpd_pld_epsilon_estimate extrapolates it away, dpd_pld_step_h_for picks h for a target.
 *
 * Noise multiplier sigma: the Gaussian noise standard deviation divided by the l2 clipping norm
 * C (the add/remove sensitivity). Grid step h: the discretisation of the privacy loss, in
 * [DPD_PLD_H_MIN, DPD_PLD_H_MAX].
 *
 * FFT rounding. Each composed distribution carries an estimate of its per-point FFT rounding
 * (a few ulps of its peak, growing about like T ulps for T-fold self-composition); delta_up adds
 * it and delta_low subtracts it over the points above eps, and dpd_pld_epsilon refuses a delta
 * (DPD_EINVAL, with the smallest delta it can answer) when that allowance would exceed 10 % of
 * delta. In practice: delta >= ~1e-14 after one step, >= ~1e-11 after 1e4 steps, >= ~1e-9 after
 * 1e5 steps (docs/privacy.md has the table). This allowance is an estimate, not a proven bound.
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

/* The PLD of one step: a dominating pair of it (in units of C, s = sigma), discretised as above.
 *  POISSON + ADD_REMOVE: dpd_pld_subsampled_gaussian (remove (1-q)N(0,s^2)+qN(1,s^2) vs
 *    N(0,s^2), add the reverse; Zhu, Dong, Wang 2022).
 *  POISSON + REPLACE_ONE: (1-q)N(0,s^2)+qN(1,s^2) vs (1-q)N(0,s^2)+qN(-1,s^2) (g' = -g; one
 *    order, the pair is symmetric); q = 1: N(1,s^2) vs N(-1,s^2), mu = 2/sigma.
 *  FIXED + REPLACE_ONE (q = b/n): (1-q)N(0,s^2)+qN(2,s^2) vs N(0,s^2) and the reverse, i.e. the
 *    Poisson add/remove pair at sigma/2 (Zhu, Dong, Wang 2022 for sampling without replacement;
 *    tight: the data set whose other records all have the replacement's gradient attains it;
 *    Lebeda, Regehr, Kamath, Steinke 2024).
 *  REPLACEMENT + REPLACE_ONE: K ~ Binomial(b, 1/n) copies, sum_k Bin(k) N(2k,s^2) vs N(0,s^2)
 *    and the reverse (the tail of K beyond 1e-40 sent to +inf); b = 1 is FIXED with b = 1.
 * DPD_EINVAL names the member and its allowed range (FIXED or REPLACEMENT with ADD_REMOVE,
 * batch outside [1, n], n = 0, q outside (0, 1], sigma <= 0). *pld: returned-owned. */
DPD_API int dpd_pld_step_create(const dpd_pld_step *step, double h, dpd_pld **pld, dpd_err *err);

/* The estimate of eps(delta) between the two bounds: the pessimistic eps on this grid h and on
 * the grid 2h (kept beside it), extrapolated to h -> 0 (Richardson: eps_up(h) - (eps_up(2h) -
 * eps_up(h))/3, the error being second order in h), clamped into [eps_low, eps_up]; eps_up when
 * no 2h grid exists (h > DPD_PLD_H_MAX / 2). Not a bound: report eps_up as the guarantee and
 * eps_up - eps_est as the discretisation error. Same errors as dpd_pld_epsilon. */
DPD_API int dpd_pld_epsilon_estimate(const dpd_pld *pld, double delta, double *eps_est,
                                     dpd_err *err);

/* A grid step h for `step` composed T >= 1 times such that eps_up(delta) exceeds the
 * (extrapolated) eps by about rel in (0, 0.5] relative or less: pilot compositions (from h = 0.02,
 * up to 5, each at 3x the h the previous one suggests while that is 4x finer) fit eps_up - eps_est
 * = c h^2, then h = 0.7 sqrt(rel eps_est / c), at most eps_est / 20, in [DPD_PLD_H_MIN,
 * DPD_PLD_H_MAX]. A heuristic: check (eps_up - eps_est) / eps_est after composing at *h. */
DPD_API int dpd_pld_step_h_for(const dpd_pld_step *step, size_t T, double delta, double rel,
                               double *h, dpd_err *err);

/* T >= 1 compositions of `pld` (borrowed) with itself, by an FFT power. *out is returned-owned. */
DPD_API int dpd_pld_compose_self(const dpd_pld *pld, size_t T, dpd_pld **out, dpd_err *err);

/* Composition of two PLDs (borrowed) of the same grid step, by FFT convolution (heterogeneous
 * sequences). *out is returned-owned. */
DPD_API int dpd_pld_compose(const dpd_pld *a, const dpd_pld *b, dpd_pld **out, dpd_err *err);

/* delta(eps) = sum_{L_i > eps} (1 - e^{eps - L_i}) p_i + m_inf, maximised over the orders, of the
 * pessimistic (delta_up, plus the FFT rounding allowance) and optimistic (delta_low, minus it)
 * distributions; eps in [0, inf]. Either output may be NULL. delta_low <= true delta(eps) <=
 * delta_up. */
DPD_API int dpd_pld_delta(const dpd_pld *pld, double eps, double *delta_up, double *delta_low,
                          dpd_err *err);

/* Smallest eps >= 0 with delta(eps) <= delta, delta in (0, 1): eps_up from the pessimistic
 * distributions (re-checked: delta_up(eps_up) <= delta, so never below the true eps; INFINITY
 * when the infinity mass exceeds delta) and eps_low from the optimistic ones (never above the true
 * eps up to rounding). Either output may be NULL. DPD_EINVAL also when the FFT rounding allowance
 * would exceed 10 % of delta (the message gives the smallest delta this PLD answers). */
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
