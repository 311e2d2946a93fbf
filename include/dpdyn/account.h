/* The privacy accountant of DP-SGD as practitioners run it (issue 28 §1; docs/privacy.md,
 * "Accounting subsampled DP-SGD"): (eps, delta) of a sequence of subsampled Gaussian steps.
 * SPDX-License-Identifier: MIT
 *
 * Three answers, each labelled where it is reported:
 *  - PLD (dpdyn/pld.h): the answer. `epsilon` is an upper bound of the true eps(delta) of the
 *    mechanism (pessimistic discretisation, composed by FFT), with an estimate and a lower bound
 *    beside it; the grid step is chosen so that the bounds are within `accuracy` of each other
 *    (or as given).
 *  - RDP (dpdyn/rdp.h), tight conversion: a second opinion, an upper bound too (Poisson sampling
 *    and the plain Gaussian only; NAN otherwise).
 *  - mu-GDP by the central limit theorem (Bu, Dong, Long, Su 2020): mu = q sqrt(T (e^{1/s^2} - 1))
 *    for Poisson steps: an approximation, neither bound; NAN where not defined.
 *
 * The mechanism: every step adds Gaussian noise of standard deviation sigma C to a sum of
 * per-record contributions of norm <= C (C: the clipping norm; sigma: the noise multiplier).
 * A run is a list of segments, each `steps` identical steps; segments of different sigma, q or
 * batch make a heterogeneous sequence (a learning-rate/noise/batch schedule). The neighbouring
 * relation (dpd_neighbours) is named in every output.
 *
 * Shuffling: a pass over a random permutation in batches puts each record in exactly one batch
 * per epoch; dpdyn accounts it as one Gaussian step per epoch (no amplification by shuffling is
 * claimed: accounting shuffled batches as Poisson can be optimistic).
 *
 * Functions report errors through the optional `dpd_err` (NULL allowed) and a negative status:
 * DPD_EINVAL naming the member ("segments[1].q = 2 is invalid: the allowed range is (0, 1]"),
 * DPD_ENOMEM. Outputs (borrowed pointers) are written only on success. PLDs use FFTW's planner:
 * call from one thread at a time. The library never prints. */
#ifndef DPD_ACCOUNT_H
#define DPD_ACCOUNT_H

#include <stddef.h>

#include "dpdyn/pld.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_MECHANISM_GAUSSIAN = 0,   /* every record in every step (q = 1) */
  DPD_MECHANISM_SUBSAMPLED = 1, /* each step's batch picked as `sampling` says */
  DPD_MECHANISM_SHUFFLE = 2     /* epochs over a shuffled data set: `steps` = epochs */
} dpd_mechanism;

/* `steps` identical steps. */
typedef struct {
  double sigma; /* noise multiplier, (0, inf) */
  double q;     /* SUBSAMPLED + POISSON: the sampling rate, (0, 1] */
  size_t batch; /* SUBSAMPLED + FIXED or REPLACEMENT: the batch size, [1, n] */
  size_t steps; /* >= 1 (SHUFFLE: epochs) */
} dpd_account_segment;

typedef struct {
  dpd_mechanism mechanism;
  dpd_sampling sampling;     /* SUBSAMPLED only */
  dpd_neighbours neighbours; /* FIXED and REPLACEMENT need REPLACE_ONE */
  size_t n;                  /* the data set size (FIXED, REPLACEMENT) */
  const dpd_account_segment *segments; /* borrowed */
  size_t nsegments;                    /* >= 1 */
  double accuracy; /* the target relative width (eps_up - eps_low) / eps_up; 0: 0.01 */
  double h;        /* the PLD grid step; 0: chosen from `accuracy` */
} dpd_account;

typedef struct {
  double epsilon;          /* PLD upper bound: the reported epsilon */
  double epsilon_estimate; /* PLD estimate, epsilon_lower <= estimate <= epsilon */
  double epsilon_lower;    /* PLD lower bound */
  double epsilon_rdp;      /* RDP, tight conversion (upper bound); NAN where not computed */
  double best_alpha;       /* its order; NAN with it */
  double mu_clt;           /* CLT mu-GDP (approximation); NAN where not defined */
  double epsilon_clt;      /* eps of mu_clt-GDP at delta (approximation); NAN with it */
  double h;                /* the grid step used */
  size_t points;           /* the largest grid of the composed PLD */
  size_t total_steps;      /* sum of the segments' steps */
} dpd_account_result;

/* The name of a mechanism / sampling / relation as keys and outputs spell them ("gaussian",
 * "subsampled_gaussian", "shuffle"; "poisson", "fixed", "replacement"; "add_remove",
 * "replace_one"); NULL out of range. Static storage. */
DPD_API const char *dpd_mechanism_name(dpd_mechanism m);
DPD_API const char *dpd_sampling_name(dpd_sampling s);
DPD_API const char *dpd_neighbours_name(dpd_neighbours r);

/* Validates `a` (every member, naming the first invalid one), before any work. */
DPD_API int dpd_account_check(const dpd_account *a, dpd_err *err);

/* The PLD of the whole run (for repeated queries). *pld: returned-owned (dpd_pld_free); *h_used
 * (NULL allowed): its grid step. */
DPD_API int dpd_account_pld(const dpd_account *a, double delta_hint, dpd_pld **pld,
                            double *h_used, dpd_err *err);

/* eps at delta in (0, 1): every member of `r`. */
DPD_API int dpd_account_epsilon(const dpd_account *a, double delta, dpd_account_result *r,
                                dpd_err *err);

/* delta at eps in [0, inf]: the PLD upper and lower bounds (either may be NULL) and the RDP one
 * (NULL allowed; NAN where not computed). */
DPD_API int dpd_account_delta(const dpd_account *a, double eps, double *delta_up,
                              double *delta_low, double *delta_rdp, dpd_err *err);

/* The privacy curve: delta_up[i], delta_low[i] at eps[i] (n >= 1 values in [0, inf]) from one
 * PLD. Borrowed arrays of n; delta_low may be NULL. */
DPD_API int dpd_account_curve(const dpd_account *a, const double *eps, size_t n,
                              double *delta_up, double *delta_low, dpd_err *err);

/* The inverse for a target (eps, delta), eps in (0, inf), delta in (0, 1), one segment only
 * (nsegments = 1; that segment's sigma or steps is the unknown, its given value ignored):
 * sigma_for: the smallest noise multiplier (to a relative 1e-4) whose PLD upper bound is <= eps;
 * steps_for: the most steps whose PLD upper bound is <= eps (0 when even one step exceeds it).
 * Never overshoots: `at` (NULL allowed) holds the accounting at the returned value, and
 * at->epsilon <= eps. DPD_EINVAL when no sigma in [1e-2, 1e6] (no step count <= 2^40) meets the
 * target, naming eps. */
DPD_API int dpd_account_sigma_for(const dpd_account *a, double eps, double delta, double *sigma,
                                  dpd_account_result *at, dpd_err *err);
DPD_API int dpd_account_steps_for(const dpd_account *a, double eps, double delta, size_t *steps,
                                  dpd_account_result *at, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_ACCOUNT_H */
