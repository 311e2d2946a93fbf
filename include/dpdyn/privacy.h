/* Privacy accounting, model-independent: zCDP and Gaussian DP (GDP) in one module (docs/math.md
 * §1.4, §2.3; docs/privacy.md).
 * SPDX-License-Identifier: MIT
 *
 * Words. rho_z is a zCDP parameter (rho_z-zCDP: Renyi divergence <= alpha rho_z for all
 * alpha > 1). mu is a GDP parameter (mu-GDP: no test separates neighbours better than one between
 * N(0, 1) and N(mu, 1)). sigma is a noise multiplier: the noise standard deviation of one step of
 * a Gaussian mechanism divided by that step's l2 sensitivity; T such steps are
 * sqrt(T)/sigma-GDP and T/(2 sigma^2)-zCDP. A mu-GDP mechanism is mu^2/2-zCDP, not conversely.
 * linreg's historical "privacy rho" (below: `rho`) is on the mu scale: its algorithm is
 * rho^2/2-zCDP (rho_z = rho^2/2), which is what its (eps, delta) conversions take.
 *
 * Rounding is never optimistic: derived budgets are rounded up, inverses never overshoot, and a
 * calibrated sigma is re-checked with the functions the guarantee report uses.
 *
 * All functions are pure and thread-safe. Functions returning int report errors through the
 * optional `dpd_err` (NULL allowed) and a negative status; their outputs (borrowed pointers) are
 * written only on success. Functions returning double return NAN for invalid arguments. */
#ifndef DPD_PRIVACY_H
#define DPD_PRIVACY_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- zCDP ------------------------------------------------------------------------------- */

/* Privacy amplification by iteration for given sequences (eta_k, sigma_k),
 * k = 0..n-1: rho_eff = max_k eta_k / sqrt(sum_{j>=k} sigma_j^2).
 * Returns INFINITY when some eta_k > 0 has no noise after it, 0 when all eta_k = 0. */
DPD_API double dpd_privacy_rho_eff(const double *eta, const double *sigma, size_t n);

/* Bun-Steinke conversion: eps = rho_z + 2 sqrt(rho_z log(1/delta)). */
DPD_API double dpd_privacy_eps_bun_steinke(double rho_z, double delta);

/* Tight conversion (Canonne-Kamath-Steinke 2020; Balle et al. 2020, Thm 21):
 * eps = min_{alpha>1} [alpha rho_z + log1p(-1/alpha) - (log delta + log alpha)/(alpha-1)],
 * clamped at 0. Minimised with GSL's Brent minimiser. The tightest conversion known for a
 * general rho_z-zCDP mechanism (not exact: for a Gaussian mechanism the GDP one below is). */
DPD_API int dpd_privacy_eps_tight(double rho_z, double delta, double *eps, dpd_err *err);

/* Largest rho (privacy rho, zCDP rho^2/2) whose tight eps does not exceed
 * `eps` at `delta`. Monotone bisection that never overshoots: the returned
 * rho always satisfies eps_tight(rho^2/2, delta) <= eps. */
DPD_API int dpd_privacy_rho_from_eps(double eps, double delta, double *rho, dpd_err *err);

/* Closed-form inverse of Bun-Steinke: rho_z = (sqrt(log(1/delta) + eps) - sqrt(log(1/delta)))^2;
 * returns the privacy rho = sqrt(2 rho_z). */
DPD_API double dpd_privacy_rho_from_eps_bun_steinke(double eps, double delta);

/* delta at `eps` of a rho_z-zCDP mechanism by the same tight conversion, in its delta form
 * (Canonne-Kamath-Steinke 2020, Prop. 12):
 *   delta = min_{alpha>1} exp((alpha-1)(alpha rho_z - eps)) (1 - 1/alpha)^(alpha-1) / alpha,
 * capped at 1; the inverse of dpd_privacy_eps_tight in delta. rho_z in [0, inf] (0 gives 0,
 * inf gives 1), eps in [0, inf] (inf gives 0). */
DPD_API int dpd_privacy_zcdp_delta(double rho_z, double eps, double *delta, dpd_err *err);

/* delta at `eps` by Bun-Steinke: exp(-(eps - rho_z)^2 / (4 rho_z)) for eps > rho_z, else 1
 * (reference only: never smaller than dpd_privacy_zcdp_delta). */
DPD_API double dpd_privacy_zcdp_delta_bun_steinke(double rho_z, double eps);

/* Composition (Bun-Steinke 2016, Lemma 2.3): sum of rho_z[0..n-1], each in [0, inf], rounded up.
 * 0 for n = 0. */
DPD_API double dpd_privacy_zcdp_compose(const double *rho_z, size_t n);

/* mu-GDP => mu^2/2-zCDP (Dong-Roth-Su 2022, Thm 2.10 + data processing), rounded up. */
DPD_API double dpd_privacy_zcdp_from_gdp(double mu);

/* T = `steps` Gaussian steps of noise multiplier sigma in [0, inf] (Bun-Steinke 2016, Prop. 1.6
 * and Lemma 2.3): T/(2 sigma^2), computed as dpd_privacy_zcdp_from_gdp(dpd_privacy_gdp_gaussian)
 * (an upper bound by rounding only). sigma = 0 gives inf; steps >= 1. */
DPD_API double dpd_privacy_zcdp_gaussian(double sigma, size_t steps);

/* ---- Gaussian DP (Dong-Roth-Su 2022) ----------------------------------------------------- */

/* delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) of mu-GDP (exact: the
 * smallest delta at which mu-GDP implies (eps, delta)-DP; Cor. 2.13), mu in (0, inf] (inf
 * gives 1), eps in [0, inf] (inf gives 0). Evaluated without cancellation through the Mills
 * ratio when both terms are tiny, so it keeps relative accuracy down to the underflow threshold.
 * DPD_EINVAL for NaN or out-of-range arguments, naming the argument. */
DPD_API int dpd_privacy_gdp_delta(double mu, double eps, double *delta, dpd_err *err);

/* Smallest eps >= 0 with delta(eps; mu) <= delta, by bisection: the returned eps is always
 * valid (delta(eps; mu) <= delta is re-checked) and within a relative 1e-13 of the exact value.
 * 0 when already delta(0; mu) <= delta. mu in (0, inf] (inf gives inf), delta in (0, 1). */
DPD_API int dpd_privacy_gdp_eps(double mu, double delta, double *eps, dpd_err *err);

/* Largest mu with delta(eps; mu) <= delta, by bisection that never overshoots (the returned mu
 * satisfies the constraint, re-checked), within a relative 1e-13. eps in (0, inf] (inf gives
 * inf), delta in (0, 1). */
DPD_API int dpd_privacy_gdp_mu(double eps, double delta, double *mu, dpd_err *err);

/* Composition (Cor. 3.3): sqrt(sum mu[i]^2), each mu[i] in [0, inf], rounded up. 0 for n = 0. */
DPD_API double dpd_privacy_gdp_compose(const double *mu, size_t n);

/* T = `steps` Gaussian steps of noise multiplier sigma in [0, inf]: sqrt(T)/sigma-GDP (each step
 * is 1/sigma-GDP, Thm 2.7; Cor. 3.3), rounded up. sigma = 0 gives inf, inf gives 0; steps >= 1. */
DPD_API double dpd_privacy_gdp_gaussian(double sigma, size_t steps);

/* ---- Conversions, calibration, guarantees ------------------------------------------------- */

/* The (eps, delta) conversions. */
typedef enum {
  DPD_PRIVACY_CONVERSION_GDP = 0,     /* exact for mu-GDP (dpd_privacy_gdp_eps / _delta) */
  DPD_PRIVACY_CONVERSION_ZCDP_TIGHT,  /* tight zCDP (dpd_privacy_eps_tight / zcdp_delta) */
  DPD_PRIVACY_CONVERSION_BUN_STEINKE, /* Bun-Steinke (dpd_privacy_eps_bun_steinke) */
  DPD_PRIVACY_CONVERSION_COUNT
} dpd_privacy_conversion;

/* Default conversion for calibrating a Gaussian mechanism: the exact one. */
#define DPD_PRIVACY_CONVERSION_DEFAULT DPD_PRIVACY_CONVERSION_GDP

/* "gdp", "zcdp_tight", "bun_steinke"; NULL for a value out of range. Static storage. */
DPD_API const char *dpd_privacy_conversion_name(dpd_privacy_conversion conversion);

/* Calibration of T = `steps` >= 1 Gaussian steps: the smallest noise multiplier (up to rounding,
 * always on the private side) whose guarantee meets the target, checked with the functions the
 * guarantee report uses (dpd_privacy_gdp_gaussian, dpd_privacy_zcdp_gaussian and the eps
 * conversions). Total budgets: mu in [0, inf] and rho_z in [0, inf] (0 gives sigma = inf,
 * inf gives 0, non-private). */
DPD_API int dpd_privacy_sigma_from_gdp(double mu, size_t steps, double *sigma, dpd_err *err);
DPD_API int dpd_privacy_sigma_from_zcdp(double rho_z, size_t steps, double *sigma, dpd_err *err);

/* (eps, delta)-DP for the whole run through `conversion`: GDP (exact, the smallest sigma),
 * ZCDP_TIGHT or BUN_STEINKE (what zCDP papers use; larger sigma). eps in (0, inf] (inf gives
 * sigma = 0), delta in (0, 1). With GDP both delta(eps; mu) <= delta and the reported
 * dpd_privacy_gdp_eps <= eps hold for the returned sigma. */
DPD_API int dpd_privacy_sigma_from_eps(double eps, double delta, size_t steps,
                                       dpd_privacy_conversion conversion, double *sigma,
                                       dpd_err *err);

/* What the mechanism is known to be. */
typedef enum {
  DPD_PRIVACY_SOURCE_GDP = 0, /* a total mu-GDP */
  DPD_PRIVACY_SOURCE_ZCDP,    /* a total rho_z-zCDP, GDP unknown (e.g. linreg: rho_z = rho^2/2) */
  DPD_PRIVACY_SOURCE_GAUSSIAN /* T steps of a Gaussian mechanism with noise multiplier sigma */
} dpd_privacy_source;

/* Every guarantee a mechanism satisfies. NaN marks a field that does not apply. Which
 * conversion gives each number:
 *   mu            GDP input as given; Gaussian: dpd_privacy_gdp_gaussian; zCDP input: NaN (a
 *                 zCDP mechanism need not be GDP).
 *   zcdp          zCDP input as given; else dpd_privacy_zcdp_from_gdp(mu) = mu^2/2.
 *   epsilon_gdp   exact GDP eps at delta (dpd_privacy_gdp_eps); NaN without mu.
 *   epsilon_zcdp  tight zCDP eps at delta of `zcdp` (dpd_privacy_eps_tight).
 *   epsilon_bun_steinke  Bun-Steinke eps at delta of `zcdp` (reference, the papers' number).
 *   epsilon       the tightest: min(epsilon_gdp, epsilon_zcdp), i.e. epsilon_gdp whenever mu is
 *                 known; epsilon_conversion says which.
 *   delta_at_epsilon*    the same for delta at `at_epsilon` (dpd_privacy_gdp_delta,
 *                 dpd_privacy_zcdp_delta, dpd_privacy_zcdp_delta_bun_steinke); NaN until
 *                 dpd_privacy_guarantee_at_epsilon is called.
 * Non-private (mu = inf, zcdp = inf or sigma = 0): eps fields inf, delta_at_epsilon 1 for
 * finite eps. Perfectly private (mu = 0, zcdp = 0 or sigma = inf): eps 0, delta 0. */
typedef struct {
  dpd_privacy_source source;
  double sigma; /* GAUSSIAN: the per-step noise multiplier; NaN otherwise */
  size_t steps; /* GAUSSIAN: T; 0 otherwise */
  double mu;    /* total mu-GDP, or NaN */
  double zcdp;  /* total rho_z-zCDP */
  double delta; /* the delta of the epsilon fields */
  double epsilon;
  dpd_privacy_conversion epsilon_conversion;
  double epsilon_gdp;
  double epsilon_zcdp;
  double epsilon_bun_steinke;
  double at_epsilon; /* the eps of the delta fields, NaN when not asked */
  double delta_at_epsilon;
  dpd_privacy_conversion delta_conversion;
  double delta_at_epsilon_gdp;
  double delta_at_epsilon_zcdp;
  double delta_at_epsilon_bun_steinke;
} dpd_privacy_guarantee;

/* Fill `g` (borrowed output) for a total mu-GDP (mu in [0, inf]), a total rho_z-zCDP (rho_z in
 * [0, inf]) or `steps` >= 1 Gaussian steps of noise multiplier sigma in [0, inf], with the
 * epsilon fields at delta in (0, 1). */
DPD_API int dpd_privacy_guarantee_from_gdp(double mu, double delta, dpd_privacy_guarantee *g,
                                           dpd_err *err);
DPD_API int dpd_privacy_guarantee_from_zcdp(double rho_z, double delta, dpd_privacy_guarantee *g,
                                            dpd_err *err);
DPD_API int dpd_privacy_guarantee_from_gaussian(double sigma, size_t steps, double delta,
                                                dpd_privacy_guarantee *g, dpd_err *err);

/* Adds the delta fields at eps in [0, inf] to `g` (borrowed, filled by a _from_ function);
 * on failure `g` is unchanged. */
DPD_API int dpd_privacy_guarantee_at_epsilon(dpd_privacy_guarantee *g, double eps, dpd_err *err);

/* A privacy budget as a user states it: one of the keys of docs/privacy.md. All budgets are for
 * the whole run (T steps). */
typedef enum {
  DPD_PRIVACY_BUDGET_NONE = 0, /* no privacy key: non-private, sigma = 0 */
  DPD_PRIVACY_BUDGET_EPSILON,  /* `epsilon` (with `delta`), calibrated through `conversion` */
  DPD_PRIVACY_BUDGET_MU,       /* `mu`: total mu-GDP */
  DPD_PRIVACY_BUDGET_ZCDP,     /* `zcdp`: total rho_z-zCDP */
  DPD_PRIVACY_BUDGET_SIGMA     /* `sigma`: the per-step noise multiplier itself */
} dpd_privacy_budget_kind;

#define DPD_PRIVACY_DELTA_DEFAULT 1e-5

typedef struct {
  dpd_privacy_budget_kind kind; /* default NONE */
  double epsilon;               /* EPSILON: (0, inf] (inf: non-private) */
  double delta; /* (0, 1): EPSILON's delta and the delta of every reported eps (default 1e-5) */
  double mu;    /* MU: [0, inf] */
  double zcdp;  /* ZCDP: [0, inf] */
  double sigma; /* SIGMA: [0, inf] (0: non-private) */
  dpd_privacy_conversion conversion; /* EPSILON: default DPD_PRIVACY_CONVERSION_DEFAULT */
} dpd_privacy_budget;

/* Kind NONE, delta DPD_PRIVACY_DELTA_DEFAULT, conversion DPD_PRIVACY_CONVERSION_DEFAULT, the
 * other numbers NaN. */
DPD_API dpd_privacy_budget dpd_privacy_budget_default(void);

/* The per-step noise multiplier of `steps` >= 1 Gaussian steps for `budget` (the _sigma_from_
 * functions) and, when `g` (borrowed output) is not NULL, its guarantee
 * (dpd_privacy_guarantee_from_gaussian at budget.delta). */
DPD_API int dpd_privacy_budget_eval(dpd_privacy_budget budget, size_t steps, double *sigma,
                                    dpd_privacy_guarantee *g, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_PRIVACY_H */
