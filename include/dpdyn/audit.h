/* Empirical privacy audit: lower bounds on epsilon and mu from the outputs of a private
 * algorithm run many times on two neighbouring datasets (docs/privacy.md, "Empirical audit").
 * SPDX-License-Identifier: MIT
 *
 * References: Jagielski, Ullman & Oprea, "Auditing differentially private machine learning: how
 * private is private SGD?", NeurIPS 2020 (the (FPR, FNR) bound with Clopper-Pearson intervals);
 * Nasr, Song, Thakurta, Papernot & Carlini, "Adversary instantiation: lower bounds for
 * differentially private machine learning", IEEE S&P 2021 (canaries, the last iterate); Dong,
 * Roth & Su, "Gaussian differential privacy", JRSS-B 2022 (trade-off functions, G_mu);
 * Clopper & Pearson, Biometrika 26 (1934) 404 (exact binomial bounds).
 *
 * A test that tells run outputs of dataset D (side 0) from those of its neighbour D' (side 1)
 * by "side 1 when the statistic s > t" has false-positive rate FPR = P_0(s > t) and
 * false-negative rate FNR = P_1(s <= t). (eps, delta)-DP implies
 *
 *   FPR + e^eps FNR >= 1 - delta   and   FNR + e^eps FPR >= 1 - delta,
 *
 * so with upper confidence bounds FPR+ and FNR+ (both holding with probability >= 1 - alpha,
 * each one-sided Clopper-Pearson at alpha/2: a union bound, valid whatever the dependence)
 *
 *   eps >= max( log((1 - delta - FNR+)/FPR+), log((1 - delta - FPR+)/FNR+) )
 *
 * at confidence 1 - alpha. mu-GDP implies FNR >= G_mu(FPR) = Phi(Phi^-1(1 - FPR) - mu), so
 * mu >= Phi^-1(1 - FPR+) - Phi^-1(FNR+) at the same confidence. The threshold t must not be
 * chosen on the runs the bound is computed on: dpd_audit_stats_eval chooses it on the first half
 * of each side's runs and evaluates the bounds on the second half (a held-out evaluation).
 *
 * Every function here is pure and thread-safe. */
#ifndef DPD_AUDIT_H
#define DPD_AUDIT_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default confidence of the bounds, delta of the epsilon bound, threshold candidates of the
 * selection half, and the fraction of the upper bound that runs_needed aims at. */
#define DPD_AUDIT_CONFIDENCE_DEFAULT 0.95
#define DPD_AUDIT_CANDIDATES_DEFAULT 199
#define DPD_AUDIT_TARGET_FRACTION_DEFAULT 0.5
/* Fewest runs per side: two halves of at least 5 runs each. */
#define DPD_AUDIT_RUNS_MIN 10

/* One-sided Clopper-Pearson bounds for k successes in n trials at level alpha in (0, 1): the
 * upper bound p+ with P(Bin(n, p+) <= k) = alpha (1 when k = n) and the lower bound p- with
 * P(Bin(n, p-) >= k) = alpha (0 when k = 0), from GSL's beta quantiles. Either output may be
 * NULL. DPD_EINVAL for n = 0, k > n or alpha outside (0, 1). */
DPD_API int dpd_audit_cp_eval(size_t k, size_t n, double alpha, double *lower, double *upper,
                              dpd_err *err);

/* The epsilon lower bound of a pair of (upper bounds on the) error rates at delta:
 * max(log((1 - delta - fnr)/fpr), log((1 - delta - fpr)/fnr), 0); +inf when a rate is 0 and the
 * other below 1 - delta. Pure. */
DPD_API double dpd_audit_epsilon_eval(double fpr, double fnr, double delta);

/* The mu lower bound of a pair of error rates: max(Phi^-1(1 - fpr) - Phi^-1(fnr), 0); +inf when
 * both are 0. Pure. */
DPD_API double dpd_audit_mu_eval(double fpr, double fnr);

/* The Gaussian trade-off G_mu(a) = Phi(Phi^-1(1 - a) - mu), a in [0, 1], mu in [0, inf]: the
 * smallest FNR of a test with FPR a against a mu-GDP mechanism. Pure. */
DPD_API double dpd_audit_tradeoff_eval(double mu, double a);

typedef struct {
  double confidence; /* of every bound, in (0, 1) (default DPD_AUDIT_CONFIDENCE_DEFAULT) */
  double delta;      /* of the epsilon bound, in (0, 1) (default 1e-5) */
  size_t candidates; /* thresholds tried on the selection half: its pooled quantiles (>= 1;
                        default DPD_AUDIT_CANDIDATES_DEFAULT) */
} dpd_audit_config;

DPD_API dpd_audit_config dpd_audit_config_default(void);

/* What the runs show. Side 1 is the side whose statistic is larger in the mean (its test says
 * "side 1" above the threshold). */
typedef struct {
  size_t runs;          /* per side */
  size_t select_runs;   /* per side, the first half: the thresholds are chosen there */
  size_t eval_runs;     /* per side, the second half: the bounds are computed there */
  double threshold_eps; /* t of the epsilon bound */
  double fpr, fnr;      /* its empirical rates on the evaluation half */
  double fpr_upper, fnr_upper; /* their Clopper-Pearson upper bounds (each at (1-conf)/2) */
  double epsilon_lower;        /* the epsilon lower bound at delta, at the confidence */
  double threshold_mu;         /* t of the mu bound (chosen separately on the first half) */
  double mu_lower;             /* the mu lower bound at the confidence */
  double mu_hat;               /* (mean_1 - mean_0) / pooled sd, on every run: the mu of the
                                  Gaussian trade-off that fits the two samples */
  double mu_hat_lo, mu_hat_hi; /* its normal-approximation interval at the confidence, SE^2 =
                                  1/n0 + 1/n1 + mu_hat^2 / (2 (n0 + n1)) */
  double mean0, mean1, sd_pooled;
} dpd_audit_result;

/* Analyses the statistics s0[0..runs) (side 0, dataset D) and s1[0..runs) (side 1, D'), in run
 * order (the halves are runs [0, runs/2) and [runs/2, runs)), as explained above. DPD_EINVAL
 * naming the key for runs < DPD_AUDIT_RUNS_MIN ('runs'), confidence or delta outside (0, 1),
 * candidates = 0, a non-finite statistic, or two samples with no spread; DPD_ENOMEM. */
DPD_API int dpd_audit_stats_eval(const double *s0, const double *s1, size_t runs,
                                 const dpd_audit_config *cfg, dpd_audit_result *res,
                                 dpd_err *err);

/* The empirical trade-off curve on every run: at `points` thresholds, increasing (the order
 * statistics of side 0 at FPRs log-spaced from 1/runs to 1/2, and of side 1 at FNRs log-spaced
 * the same, half each: both tails), fpr[j] and fnr[j] with two-sided
 * Clopper-Pearson intervals at `confidence` (each end at (1 - confidence)/2). Each output array
 * has room for `points` entries (caller's); thresholds that coincide are kept once, and *rows
 * receives the number of rows written (<= points). DPD_EINVAL for runs or points = 0, confidence outside
 * (0, 1); DPD_ENOMEM. */
DPD_API int dpd_audit_tradeoff_curve_eval(const double *s0, const double *s1, size_t runs,
                                          size_t points, double confidence, double *threshold,
                                          double *fpr, double *fpr_lo, double *fpr_hi,
                                          double *fnr, double *fnr_lo, double *fnr_hi,
                                          size_t *rows, dpd_err *err);

/* The epsilon lower bound expected from `runs` runs per side of a mechanism whose statistic is
 * exactly N(0, 1) on side 0 and N(mu, 1) on side 1, with the procedure of dpd_audit_stats_eval
 * (threshold on the first half, bounds on the second half at the expected counts, rounded): the
 * best threshold is taken on the expected counts (an optimistic choice for the first half).
 * Pure. */
DPD_API double dpd_audit_epsilon_expected_eval(double mu, size_t runs, double delta,
                                               double confidence);

/* The fewest runs per side (a power of two times 10, then refined by bisection to 1 %) whose
 * expected epsilon lower bound (dpd_audit_epsilon_expected_eval) reaches `target` at mu,
 * delta, confidence; 0 when none up to `max_runs` does (target out of reach: the bound can never
 * exceed log(runs/2) for lack of runs, nor the true epsilon). Pure. */
DPD_API size_t dpd_audit_runs_needed_eval(double mu, double target, double delta,
                                          double confidence, size_t max_runs);

#ifdef __cplusplus
}
#endif
#endif /* DPD_AUDIT_H */
