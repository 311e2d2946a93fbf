/* Privacy accounting, model-independent: zCDP and Gaussian DP (GDP) in one module.
 * SPDX-License-Identifier: MIT
 *
 * Contents: amplification by iteration (rho_eff); rho_z-zCDP -> (eps, delta) by Bun-Steinke and by
 * the tighter RDP conversion, and their inverses; mu-GDP <-> (eps, delta) exactly; mu-GDP ->
 * zCDP; composition; T steps of a Gaussian mechanism; noise calibration; the guarantee report.
 *
 * References
 *  [FMTT18] V. Feldman, I. Mironov, K. Talwar, A. Thakurta, "Privacy amplification by iteration",
 *           FOCS 2018, Thm 22 / Cor. 23 (contractive noisy iteration); the per-sample form
 *           rho_eff = max_k eta_k / sqrt(sum_{j>=k} sigma_j^2) is docs/math.md §1.4.
 *  [BS16]   M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions,
 *           and lower bounds", TCC 2016, Prop. 1.3: rho-zCDP => (rho + 2 sqrt(rho log(1/delta)),
 *           delta)-DP, i.e. delta = exp(-(eps - rho)^2 / (4 rho)) for eps >= rho; Prop. 1.6
 *           (Gaussian mechanism, sensitivity D, noise s: D^2/(2 s^2)-zCDP); Lemma 2.3
 *           (composition adds the rho).
 *  [CKS20]  C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
 *           NeurIPS 2020, Prop. 12 / Cor. 13; [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu,
 *           T. Sato, "Hypothesis testing interpretations and Renyi differential privacy",
 *           AISTATS 2020, Thm 21: (alpha, eps_R)-RDP => (eps_R + log1p(-1/alpha)
 *           - (log delta + log alpha)/(alpha - 1), delta)-DP for every alpha > 1, equivalently
 *           delta = exp((alpha-1)(eps_R - eps)) (1 - 1/alpha)^(alpha-1) / alpha. For rho_z-zCDP
 *           eps_R = alpha rho_z.
 *  [DRS22]  J. Dong, A. Roth, W. Su, "Gaussian differential privacy", JRSS B 84 (2022):
 *           Thm 2.7 / Cor. 2.13 (mu-GDP <=> (eps, delta(eps))-DP for all eps >= 0, with
 *           delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)), Thm 2.10 (Blackwell:
 *           a mu-GDP mechanism is a post-processing of N(0,1) vs N(mu,1), so by the data-processing
 *           inequality of Renyi divergences it is mu^2/2-zCDP), Cor. 3.3 (composition of mu_i-GDP
 *           is sqrt(sum mu_i^2)-GDP), Thm 2.7's Gaussian mechanism (sensitivity/noise = mu).
 *  [BW18]   B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy",
 *           ICML 2018, Thm 8: the same delta(eps) for one Gaussian mechanism ("analytic Gaussian").
 *  [Bre73]  R. P. Brent, "Algorithms for Minimization without Derivatives", Prentice-Hall 1973,
 *           ch. 5 (as implemented by gsl_min_fminimizer_brent).
 *  [And17]  E. Anderson, "Algorithm 978: Safe scaling in the Level 1 BLAS", ACM TOMS 44(1), 2017
 *           (the scaled sum of squares of LAPACK dlassq).
 *  [AS64]   M. Abramowitz, I. Stegun, Handbook, 26.2.12 (Mills ratio asymptotics), as used by
 *           gsl_sf_hazard.
 *
 * Why the tight conversion is a safe 1-D minimisation. With L = -log delta > 0 the objective
 *   f(alpha) = alpha rho_z + log1p(-1/alpha) + (L - log alpha)/(alpha - 1)
 * has derivative f'(alpha) = [rho_z (alpha-1)^2 + log alpha - L] / (alpha-1)^2. The bracket is
 * strictly increasing in alpha, negative at alpha -> 1+ and positive for large alpha, so f has
 * exactly one stationary point, a minimum near alpha* ~ 1 + sqrt(L / rho_z): f is unimodal.
 * We minimise over u = log(alpha - 1) (alpha = 1 + e^u), which keeps the minimiser at O(1)..O(10^2)
 * scale for rho_z anywhere in [1e-300, 1e300] and lets every term be evaluated without
 * cancellation: log1p(-1/alpha) = -log1p(e^{-u}), log alpha = log1p(e^u), 1/(alpha-1) = e^{-u}.
 * Every alpha > 1 gives a valid guarantee, so an imprecise minimiser can only lose tightness,
 * never privacy. The same holds for delta at a given eps: log delta(alpha) =
 * (alpha-1)(alpha rho_z - eps) + (alpha-1) log1p(-1/alpha) - log alpha has derivative
 * (2 alpha - 1) rho_z - eps + log1p(-1/alpha), strictly increasing from -inf to +inf: one root,
 * found by bisection in u.
 *
 * The inverse (eps -> largest rho) bisects on rho with the invariant
 * eps_tight(lo^2/2) <= eps < eps_tight(hi^2/2) and returns lo; it therefore never overshoots, even
 * if rounding made the computed eps_tight slightly non-monotone.
 *
 * Stable evaluation of the GDP delta(eps; mu). With a = -eps/mu + mu/2 and b = a - mu one has
 * b^2 = a^2 + 2 eps, hence e^eps phi(b) = phi(a) (phi the standard normal density). Writing
 * Phi(z) = phi(z) R(-z) with the Mills ratio R(x) = Q(x)/phi(x) = 1/hazard(x):
 *     delta = phi(a) [R(-a) - R(-b)],
 * a difference of two O(1/|a|) numbers rather than of two numbers that both underflow. It is used
 * when a < DPD_PRIVACY_GDP_MILLS_SWITCH; for larger a the direct form, with e^eps Phi(b) evaluated
 * as exp(eps + log Phi(b)) through log erfc, has no harmful cancellation (Phi(a) >= Phi(-1)).
 * The GDP inverses (eps of delta, mu of eps) bisect with an invariant that keeps the returned end
 * on the private side, so they never overshoot even where rounding makes delta locally
 * non-monotone.
 *
 * Rounding. Every derived budget (mu of T Gaussian steps, mu^2/2, sums) is rounded up with an
 * exact residual test (fma, TwoSum), and every calibrated sigma is re-checked against the target
 * with the same functions the guarantee report uses and nudged up until it passes: a reported
 * guarantee is never below the exact one by rounding. */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_sf_erf.h>

#include "core/error_impl.h"
#include "core/privacy_impl.h"
#include "dpdyn/privacy.h"

/* Brent minimiser over v = u - u0 (u0 the analytic guess, so |v| = O(1) and GSL's internal
 * step floor sqrt(DBL_EPSILON)|v| stays small): convergence when the bracket on v is narrower
 * than EPSABS + EPSREL |v|. The minimum value is quadratic in the error of v and
 * f''(v*) ~ eps, so 1e-7 in v gives ~1e-14 relative in eps. EPSREL must exceed
 * 2 sqrt(DBL_EPSILON) ~ 3e-8, below which GSL's Brent cannot shrink the bracket. */
#define DPD_PRIVACY_BRENT_EPSABS 1e-7
#define DPD_PRIVACY_BRENT_EPSREL 1e-7
/* Newton steps polishing Brent's point on the stationarity condition (see newton_polish). */
#define DPD_PRIVACY_NEWTON_STEPS 3
/* Brent iteration cap (it converges in ~10-40 iterations on this smooth unimodal function). */
#define DPD_PRIVACY_BRENT_MAX_ITER 500
/* Bracket search: initial half-width in u and cap on the number of expansions. */
#define DPD_PRIVACY_BRACKET_H0 0.5
#define DPD_PRIVACY_BRACKET_MAX_EXPAND 64
/* Range of u searched: alpha - 1 in [e^-700, e^700] keeps e^{+-u} finite. */
#define DPD_PRIVACY_U_MIN (-700.0)
#define DPD_PRIVACY_U_MAX 700.0
/* Inverse: stop when eps_tight(rho) is within this relative distance below the target eps (or the
 * rho bracket is two adjacent doubles); iteration caps for the bisection and for the bracket
 * search (doubling/halving from the Bun-Steinke inverse). */
#define DPD_PRIVACY_INV_RTOL 1e-12
#define DPD_PRIVACY_INV_MAX_ITER 200
#define DPD_PRIVACY_INV_MAX_EXPAND 2100
/* GDP: below this value of a = -eps/mu + mu/2 the Mills-ratio form of delta is used; bisection
 * relative width, iteration cap and bracket-expansion cap of the GDP inverses. */
#define DPD_PRIVACY_GDP_MILLS_SWITCH (-1.0)
#define DPD_PRIVACY_GDP_BISECT_RTOL 1e-13
#define DPD_PRIVACY_GDP_BISECT_MAX_ITER 4000
#define DPD_PRIVACY_GDP_MAX_EXPAND 2100
/* delta of rho_z-zCDP at eps: bisection steps on the stationarity condition in u (the bracket
 * [U_MIN, U_MAX] has width 1400, so ~60 halvings reach adjacent doubles). */
#define DPD_PRIVACY_DELTA_MAX_ITER 200
/* Calibration: growing nudges of sigma (the k-th multiplies by 1 + 2^k DBL_EPSILON) until the
 * guarantee of the calibrated sigma meets the target; at most this many. */
#define DPD_PRIVACY_MAX_NUDGE 64

double dpd_privacy_rho_eff(const double *eta, const double *sigma, size_t n) {
  /* Backward scaled suffix sum: S_k = sum_{j>=k} sigma_j^2 = scale^2 * ssq, as in dlassq
   * [And17], so sigma_j anywhere in the double range neither overflows nor underflows. */
  double scale = 0.0;
  double ssq = 1.0;
  double best = 0.0;
  size_t k = n;

  if (eta == NULL || sigma == NULL) {
    return (n == 0) ? 0.0 : NAN;
  }
  while (k > 0) {
    double a;
    double e;
    double ratio;
    k--;
    a = fabs(sigma[k]);
    e = fabs(eta[k]);
    if (isnan(a) || isnan(e)) {
      return NAN;
    }
    if (a > 0.0) {
      if (scale < a) {
        double q = scale / a; /* 0 when a = INFINITY */
        ssq = 1.0 + ssq * q * q;
        scale = a;
      } else {
        double q = a / scale;
        ssq += q * q;
      }
    }
    if (e == 0.0) {
      ratio = 0.0; /* sample k is not used: no leakage, whatever the noise after it */
    } else if (scale == 0.0) {
      return INFINITY; /* eta_k > 0 with no noise after it */
    } else if (isinf(e) && isinf(scale)) {
      return INFINITY; /* infinite step against infinite noise: undefined, be conservative */
    } else {
      ratio = (e / scale) / sqrt(ssq);
    }
    if (ratio > best) {
      best = ratio;
    }
  }
  return best;
}

double dpd_privacy_eps_bun_steinke(double rho_z, double delta) {
  double log_inv_delta;
  if (isnan(rho_z) || rho_z < 0.0 || !(delta > 0.0 && delta < 1.0)) {
    return NAN;
  }
  if (isinf(rho_z)) {
    return INFINITY;
  }
  log_inv_delta = -log(delta);
  return rho_z + 2.0 * sqrt(rho_z * log_inv_delta);
}

double dpd_privacy_rho_from_eps_bun_steinke(double eps, double delta) {
  double l;
  double s;
  if (isnan(eps) || eps < 0.0 || !(delta > 0.0 && delta < 1.0)) {
    return NAN;
  }
  if (isinf(eps)) {
    return INFINITY;
  }
  l = -log(delta);
  /* sqrt(rho_z) = sqrt(l + eps) - sqrt(l), written without cancellation for small eps. */
  s = eps / (sqrt(l + eps) + sqrt(l));
  return M_SQRT2 * s; /* rho = sqrt(2 rho_z) */
}

/* The tight conversion at one order (see core/privacy_impl.h): the zCDP objective below and the
 * RDP accountant (core/rdp.c) both evaluate it here, term by term in this order. */
double dpd__privacy_tight_eps_at_order(double rdp, double alpha_m1, double log_alpha,
                                       double log1m_inv_alpha, double log_inv_delta) {
  return rdp + log1m_inv_alpha + (log_inv_delta - log_alpha) / alpha_m1;
}

double dpd__privacy_tight_log_delta_at_order(double rdp, double alpha_m1, double log_alpha,
                                             double log1m_inv_alpha, double eps) {
  return alpha_m1 * (rdp - eps) - alpha_m1 * -log1m_inv_alpha - log_alpha;
}

/* Parameters of the tight-conversion objective, minimised over v with u = u0 + v. */
typedef struct {
  double rho_z;
  double log_inv_delta; /* L = -log delta > 0 */
  double u0;            /* centre of the search: the analytic guess, clamped to [U_MIN, U_MAX] */
  double v_min;         /* U_MIN - u0 */
  double v_max;         /* U_MAX - u0 */
} tight_params;

/* Objective of [BBGHS20, Thm 21] at alpha = 1 + e^u, without cancellation (see header). */
static double tight_objective_u(double u, const tight_params *p) {
  double am1 = exp(u); /* alpha - 1 */
  double log_alpha = log1p(am1);
  double log1m_inv_alpha = -log1p(exp(-u)); /* log1p(-1/alpha) = log((alpha-1)/alpha) */
  return dpd__privacy_tight_eps_at_order((1.0 + am1) * p->rho_z, am1, log_alpha, log1m_inv_alpha,
                                         p->log_inv_delta);
}

/* GSL callback in v = u - u0. Values that overflow are capped at DBL_MAX: GSL rejects non-finite
 * values, and the cap only flattens the far tails of a unimodal function whose minimum is
 * finite. */
static double tight_objective_v(double v, const tight_params *p) {
  double f = tight_objective_u(p->u0 + v, p);
  if (!(f < DBL_MAX)) {
    f = DBL_MAX;
  }
  return f;
}

static double tight_objective_gsl(double v, void *params) {
  return tight_objective_v(v, params);
}

static double clamp(double x, double lo, double hi) {
  if (x < lo) {
    return lo;
  }
  if (x > hi) {
    return hi;
  }
  return x;
}

/* Newton polish of Brent's minimiser on the stationarity condition. Brent compares function
 * values, so near the minimum, where f is flat, it locates v* only to ~sqrt(DBL_EPSILON); the
 * resulting value error f''(v*) dv^2 / 2 is negligible against eps when f'' ~ eps, but not when
 * the terms of f are O(1) and cancel to a tiny eps (delta near 1). df/du = h(u) e^{-u} with
 *   h(u) = rho_z e^{2u} + log1p(e^u) - L,   h'(u) = 2 rho_z e^{2u} + e^u / (1 + e^u) > 0,
 * h increasing: Newton converges quadratically from Brent's point. The iterate is kept inside
 * Brent's final bracket [lo, hi]; the smaller of the two values is used, so the polish can only
 * tighten the bound. Returns f at the polished point (DBL_MAX if it left the bracket). */
static double newton_polish(const tight_params *p, double v, double lo, double hi) {
  double log_rho = log(p->rho_z);
  for (int i = 0; i < DPD_PRIVACY_NEWTON_STEPS; i++) {
    double u = p->u0 + v;
    double eu = exp(u);
    double r2 = exp(2.0 * u + log_rho); /* rho_z e^{2u}, finite near the minimum */
    double h = r2 + log1p(eu) - p->log_inv_delta;
    double dh = 2.0 * r2 + eu / (1.0 + eu);
    double step = h / dh;
    if (!isfinite(step)) {
      return DBL_MAX;
    }
    v -= step;
    if (!(v >= lo && v <= hi)) {
      return DBL_MAX;
    }
  }
  return tight_objective_v(v, p);
}

/* Minimum of the objective. Finds a bracket a < m < b (in v) with f(m) < f(a), f(m) < f(b) by
 * expanding from the analytic guess u0 = log(sqrt(L / rho_z)) (the stationary point when the
 * log alpha term is dropped), then polishes with Brent. When the minimum sits on the edge of
 * [U_MIN, U_MAX] or the function is flat to rounding at the bracket scale, the best value seen is
 * returned: it is still a valid (if less tight) bound. */
static int tight_minimum(double rho_z, double log_inv_delta, double *fmin_out, dpd_err *err) {
  tight_params par;
  gsl_function fn;
  gsl_min_fminimizer *w;
  double h = DPD_PRIVACY_BRACKET_H0;
  double m = 0.0;
  double a;
  double b;
  double fm;
  double fa;
  double fb;
  double best;
  int status;
  int iter;

  par.rho_z = rho_z;
  par.log_inv_delta = log_inv_delta;
  par.u0 = clamp(0.5 * (log(log_inv_delta) - log(rho_z)), DPD_PRIVACY_U_MIN, DPD_PRIVACY_U_MAX);
  par.v_min = DPD_PRIVACY_U_MIN - par.u0;
  par.v_max = DPD_PRIVACY_U_MAX - par.u0;
  fn.function = tight_objective_gsl;
  fn.params = &par;

  fm = tight_objective_gsl(m, &par);
  a = clamp(m - h, par.v_min, par.v_max);
  b = clamp(m + h, par.v_min, par.v_max);
  fa = tight_objective_gsl(a, &par);
  fb = tight_objective_gsl(b, &par);
  for (iter = 0; iter < DPD_PRIVACY_BRACKET_MAX_EXPAND; iter++) {
    if (fa < fm && fa <= fb && a > par.v_min) {
      /* Downhill to the left: slide the bracket left and widen. */
      b = m;
      fb = fm;
      m = a;
      fm = fa;
      h *= 2.0;
      a = clamp(m - h, par.v_min, par.v_max);
      fa = tight_objective_gsl(a, &par);
    } else if (fb < fm && b < par.v_max) {
      a = m;
      fa = fm;
      m = b;
      fm = fb;
      h *= 2.0;
      b = clamp(m + h, par.v_min, par.v_max);
      fb = tight_objective_gsl(b, &par);
    } else {
      break;
    }
  }
  best = fm;
  if (fa < best) {
    best = fa;
  }
  if (fb < best) {
    best = fb;
  }
  if (!(fm < fa && fm < fb)) {
    /* No strict interior bracket: the minimum is at the edge of the u-range (or the function is
     * flat to rounding there). The best value seen is a valid upper bound. */
    if (!isfinite(best)) {
      return DPD_FAIL(err, DPD_ENONFINITE,
                      "tight conversion: non-finite objective %g at rho_z = %g, log(1/delta) = %g",
                      best, rho_z, log_inv_delta);
    }
    *fmin_out = best;
    return DPD_OK;
  }

  w = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
  if (w == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "tight conversion: cannot allocate the Brent minimiser");
  }
  status = gsl_min_fminimizer_set_with_values(w, &fn, m, fm, a, fa, b, fb);
  if (status != GSL_SUCCESS) {
    gsl_min_fminimizer_free(w);
    return DPD_FAIL(err, DPD_ESOLVER, "tight conversion: gsl_min_fminimizer_set failed: %s",
                    gsl_strerror(status));
  }
  status = GSL_CONTINUE;
  for (iter = 0; iter < DPD_PRIVACY_BRENT_MAX_ITER && status == GSL_CONTINUE; iter++) {
    int rc = gsl_min_fminimizer_iterate(w);
    if (rc != GSL_SUCCESS) {
      gsl_min_fminimizer_free(w);
      return DPD_FAIL(err, DPD_ESOLVER, "tight conversion: gsl_min_fminimizer_iterate failed: %s",
                      gsl_strerror(rc));
    }
    status = gsl_min_test_interval(gsl_min_fminimizer_x_lower(w), gsl_min_fminimizer_x_upper(w),
                                   DPD_PRIVACY_BRENT_EPSABS, DPD_PRIVACY_BRENT_EPSREL);
  }
  if (gsl_min_fminimizer_f_minimum(w) < best) {
    best = gsl_min_fminimizer_f_minimum(w);
  }
  if (status == GSL_SUCCESS) {
    double fp = newton_polish(&par, gsl_min_fminimizer_x_minimum(w), gsl_min_fminimizer_x_lower(w),
                              gsl_min_fminimizer_x_upper(w));
    if (fp < best) {
      best = fp;
    }
  }
  gsl_min_fminimizer_free(w);
  if (status != GSL_SUCCESS) {
    return DPD_FAIL(err, DPD_EMAXITER,
                    "tight conversion: Brent minimiser did not converge in %d iterations "
                    "(rho_z = %g, log(1/delta) = %g)",
                    DPD_PRIVACY_BRENT_MAX_ITER, rho_z, log_inv_delta);
  }
  if (!isfinite(best)) {
    return DPD_FAIL(err, DPD_ENONFINITE,
                    "tight conversion: non-finite minimum %g at rho_z = %g, log(1/delta) = %g",
                    best, rho_z, log_inv_delta);
  }
  *fmin_out = best;
  return DPD_OK;
}

int dpd__privacy_check_delta(double delta, dpd_err *err) {
  if (!(delta > 0.0 && delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)", delta);
  }
  return DPD_OK;
}

int dpd__privacy_check_eps_positive(double eps, dpd_err *err) {
  if (!(eps > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is (0, inf]", eps);
  }
  return DPD_OK;
}

int dpd_privacy_eps_tight(double rho_z, double delta, double *eps, dpd_err *err) {
  double v = NAN;
  int status;

  if (eps == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "eps output pointer is NULL");
  }
  if (isnan(rho_z) || rho_z < 0.0) {
    return DPD_FAIL(err, DPD_EINVAL, "rho_z = %g is invalid: the allowed range is [0, inf]", rho_z);
  }
  status = dpd__privacy_check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  if (rho_z == 0.0) {
    *eps = 0.0; /* the objective tends to 0 as alpha -> inf */
    return DPD_OK;
  }
  if (isinf(rho_z)) {
    *eps = INFINITY;
    return DPD_OK;
  }
  status = tight_minimum(rho_z, -log(delta), &v, err);
  if (status < 0) {
    return status;
  }
  *eps = (v > 0.0) ? v : 0.0;
  return DPD_OK;
}

/* eps_tight as a function of the privacy rho (rho_z = rho^2/2). */
static int eps_of_rho(double rho, double delta, double *eps, dpd_err *err) {
  return dpd_privacy_eps_tight(0.5 * rho * rho, delta, eps, err);
}

int dpd_privacy_rho_from_eps(double eps, double delta, double *rho, dpd_err *err) {
  double lo;
  double hi;
  double eps_lo = 0.0; /* eps_tight at lo */
  double e = NAN;
  int status;
  int iter;

  if (rho == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rho output pointer is NULL");
  }
  status = dpd__privacy_check_eps_positive(eps, err);
  if (status < 0) {
    return status;
  }
  status = dpd__privacy_check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  if (isinf(eps)) {
    *rho = INFINITY;
    return DPD_OK;
  }

  /* Lower end: tight <= Bun-Steinke, so the Bun-Steinke inverse is (up to rounding) feasible.
   * Verify it, and fall back towards 0 (eps_tight(0) = 0 < eps) if rounding says otherwise. */
  lo = dpd_privacy_rho_from_eps_bun_steinke(eps, delta);
  for (iter = 0;; iter++) {
    if (iter >= DPD_PRIVACY_INV_MAX_EXPAND || !(lo > 0.0)) {
      lo = 0.0;
      eps_lo = 0.0;
      break;
    }
    status = eps_of_rho(lo, delta, &e, err);
    if (status < 0) {
      return status;
    }
    if (e <= eps) {
      eps_lo = e;
      break;
    }
    lo *= 0.5;
  }

  /* Upper end: double until infeasible. eps_tight -> inf as rho -> inf. */
  hi = (lo > 0.0) ? 2.0 * lo : 1.0;
  for (iter = 0;; iter++) {
    if (iter >= DPD_PRIVACY_INV_MAX_EXPAND) {
      return DPD_FAIL(err, DPD_EMAXITER,
                      "rho_from_eps: no infeasible upper rho found for eps = %g, delta = %g", eps,
                      delta);
    }
    status = eps_of_rho(hi, delta, &e, err);
    if (status < 0) {
      return status;
    }
    if (e > eps) {
      break;
    }
    lo = hi; /* feasible: a better lower end */
    eps_lo = e;
    hi *= 2.0;
  }

  /* Bisection with the invariant eps_tight(lo) <= eps < eps_tight(hi), until eps_tight(lo) is
   * within INV_RTOL of eps or lo and hi are adjacent doubles. The test is on eps, not on rho:
   * where the clamp at 0 is near (delta close to 1), eps is so steep in rho that a relative
   * rho tolerance far above DBL_EPSILON would leave eps_tight(lo) visibly below eps. */
  for (iter = 0; eps - eps_lo > DPD_PRIVACY_INV_RTOL * eps; iter++) {
    double mid = lo + 0.5 * (hi - lo);
    if (mid <= lo || mid >= hi) {
      break; /* adjacent doubles: lo is the largest feasible double */
    }
    if (iter >= DPD_PRIVACY_INV_MAX_ITER) {
      return DPD_FAIL(err, DPD_EMAXITER,
                      "rho_from_eps: bisection did not reach relative eps accuracy %g in %d "
                      "iterations (eps = %g, delta = %g)",
                      DPD_PRIVACY_INV_RTOL, DPD_PRIVACY_INV_MAX_ITER, eps, delta);
    }
    status = eps_of_rho(mid, delta, &e, err);
    if (status < 0) {
      return status;
    }
    if (e <= eps) {
      lo = mid;
      eps_lo = e;
    } else {
      hi = mid;
    }
  }

  /* Final guard: the returned rho must be feasible (recomputed, not taken from the loop). */
  status = eps_of_rho(lo, delta, &e, err);
  if (status < 0) {
    return status;
  }
  if (!(e <= eps)) {
    return DPD_FAIL(err, DPD_ESOLVER,
                    "rho_from_eps: internal error, rho = %.17g gives eps = %.17g > %.17g", lo, e,
                    eps);
  }
  *rho = lo;
  return DPD_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Rounding helpers: results rounded up (towards +inf) for non-negative arguments. */

/* a + b rounded up, a, b >= 0 (TwoSum gives the exact rounding error of the sum). */
static double add_up(double a, double b) {
  double s = a + b;
  double bb;
  double e;
  if (!isfinite(s)) {
    return s;
  }
  bb = s - a;
  e = (a - (s - bb)) + (b - bb);
  return (e > 0.0) ? nextafter(s, INFINITY) : s;
}

/* a b rounded up, a, b >= 0. */
static double mul_up(double a, double b) {
  double p = a * b;
  if (!isfinite(p) || isinf(a) || isinf(b)) {
    return p;
  }
  return (fma(a, b, -p) > 0.0) ? nextafter(p, INFINITY) : p;
}

/* a / b rounded up, a >= 0, b > 0 (a / 0 = inf). */
static double div_up(double a, double b) {
  double q = a / b;
  if (!isfinite(q) || isinf(a) || isinf(b) || b == 0.0) {
    return q;
  }
  return (fma(-q, b, a) > 0.0) ? nextafter(q, INFINITY) : q; /* a - q b, exactly */
}

/* sqrt(x) rounded up, x >= 0. */
static double sqrt_up(double x) {
  double r = sqrt(x);
  if (!isfinite(r)) {
    return r;
  }
  return (fma(r, r, -x) < 0.0) ? nextafter(r, INFINITY) : r;
}

/* (double)steps rounded up (exact below 2^53). */
static double steps_up(size_t steps) {
  double t = (double)steps;
  return (t > 9007199254740992.0) ? nextafter(t, INFINITY) : t;
}

/* ------------------------------------------------------------------------------------------ */
/* Gaussian differential privacy [DRS22]. */

/* log Phi(z) for any finite z (log erfc keeps it finite far in the lower tail). */
static double log_norm_cdf(double z) {
  return gsl_sf_log_erfc(-z / M_SQRT2) - M_LN2;
}

/* delta(eps; mu) for eps >= 0 (or +inf), mu > 0 (or +inf); no validation. */
static double gdp_delta_raw(double eps, double mu) {
  double a;
  double b;
  double d;
  if (isinf(eps)) {
    return 0.0;
  }
  if (isinf(mu)) {
    return 1.0;
  }
  a = -eps / mu + 0.5 * mu;
  b = a - mu;
  if (a >= DPD_PRIVACY_GDP_MILLS_SWITCH) {
    double t1 = 0.5 * erfc(-a / M_SQRT2);
    double t2 = exp(eps + log_norm_cdf(b));
    d = t1 - t2;
  } else {
    double x1 = -a; /* > 1 */
    double x2 = -b; /* x1 + mu */
    double r1 = 1.0 / gsl_sf_hazard(x1);
    double r2 = 1.0 / gsl_sf_hazard(x2);
    double log_phi_a = -0.5 * a * a - 0.5 * log(2.0 * M_PI);
    d = exp(log_phi_a) * (r1 - r2);
  }
  if (d < 0.0) {
    d = 0.0;
  }
  if (d > 1.0) {
    d = 1.0;
  }
  return d;
}

static int check_mu(double mu, dpd_err *err) {
  if (!(mu > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "mu = %g is invalid: the allowed range is (0, inf]", mu);
  }
  return DPD_OK;
}

int dpd_privacy_gdp_delta(double mu, double eps, double *delta, dpd_err *err) {
  int status;
  if (delta == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "delta output pointer is NULL");
  }
  if (!(eps >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is [0, inf]", eps);
  }
  status = check_mu(mu, err);
  if (status < 0) {
    return status;
  }
  *delta = gdp_delta_raw(eps, mu);
  return DPD_OK;
}

/* Boundary of a monotone predicate on (0, inf): "low" holds below it and not above. Starting
 * from [0, 1], doubles hi until low(hi) fails, then bisects to a relative width
 * DPD_PRIVACY_GDP_BISECT_RTOL. On return low(*lo) holds (or *lo = 0) and low(*hi) does not, so
 * the caller picks the side that never overshoots. `what` names the caller in failures. */
typedef struct {
  double eps, mu, delta;
  int mu_is_variable; /* 1: x is mu (low: delta(eps; x) <= delta); 0: x is eps (low: delta(x; mu) >
                         delta) */
} gdp_search;

static int gdp_low(const gdp_search *s, double x) {
  return s->mu_is_variable ? gdp_delta_raw(s->eps, x) <= s->delta
                           : gdp_delta_raw(x, s->mu) > s->delta;
}

static int expand_bisect(const gdp_search *s, const char *what, double *lo_out, double *hi_out,
                         dpd_err *err) {
  double lo = 0.0, hi = 1.0;
  int iter;
  for (iter = 0; gdp_low(s, hi); iter++) {
    if (iter >= DPD_PRIVACY_GDP_MAX_EXPAND) {
      return DPD_FAIL(err, DPD_EMAXITER, "%s: no bracket found (eps = %g, mu = %g, delta = %g)",
                      what, s->eps, s->mu, s->delta);
    }
    lo = hi;
    hi *= 2.0;
  }
  for (iter = 0; hi - lo > DPD_PRIVACY_GDP_BISECT_RTOL * hi; iter++) {
    double mid = lo + 0.5 * (hi - lo);
    if (mid <= lo || mid >= hi) {
      break;
    }
    if (iter >= DPD_PRIVACY_GDP_BISECT_MAX_ITER) {
      return DPD_FAIL(err, DPD_EMAXITER,
                      "%s: bisection did not converge (eps = %g, mu = %g, delta = %g)", what,
                      s->eps, s->mu, s->delta);
    }
    if (gdp_low(s, mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  *lo_out = lo;
  *hi_out = hi;
  return DPD_OK;
}

int dpd_privacy_gdp_eps(double mu, double delta, double *eps, dpd_err *err) {
  double lo = 0.0;
  double hi = 1.0;
  int status;

  if (eps == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "eps output pointer is NULL");
  }
  status = dpd__privacy_check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  status = check_mu(mu, err);
  if (status < 0) {
    return status;
  }
  if (isinf(mu)) {
    *eps = INFINITY;
    return DPD_OK;
  }
  if (gdp_delta_raw(0.0, mu) <= delta) {
    *eps = 0.0;
    return DPD_OK;
  }
  /* Invariant: delta(lo) > delta >= delta(hi); delta decreases to 0 as eps -> inf. */
  {
    gdp_search search = {NAN, mu, delta, 0};
    status = expand_bisect(&search, "gdp_eps", &lo, &hi, err);
    if (status < 0) {
      return status;
    }
  }
  *eps = hi;
  return DPD_OK;
}

int dpd_privacy_gdp_mu(double eps, double delta, double *mu, dpd_err *err) {
  double lo = 0.0;
  double hi = 1.0;
  int status;

  if (mu == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "mu output pointer is NULL");
  }
  status = dpd__privacy_check_eps_positive(eps, err);
  if (status < 0) {
    return status;
  }
  status = dpd__privacy_check_delta(delta, err);
  if (status < 0) {
    return status;
  }
  if (isinf(eps)) {
    *mu = INFINITY;
    return DPD_OK;
  }
  /* Invariant: delta(eps; lo) <= delta < delta(eps; hi) (delta(eps; 0+) = 0, increasing in mu). */
  {
    gdp_search search = {eps, NAN, delta, 1};
    status = expand_bisect(&search, "gdp_mu", &lo, &hi, err);
    if (status < 0) {
      return status;
    }
  }
  if (!(lo > 0.0)) {
    return DPD_FAIL(err, DPD_ESOLVER, "gdp_mu: no positive mu satisfies delta = %g at eps = %g",
                    delta, eps);
  }
  *mu = lo;
  return DPD_OK;
}

double dpd_privacy_gdp_compose(const double *mu, size_t n) {
  double ssq = 0.0;
  if (mu == NULL) {
    return (n == 0) ? 0.0 : NAN;
  }
  for (size_t i = 0; i < n; i++) {
    if (!(mu[i] >= 0.0)) {
      return NAN;
    }
    ssq = add_up(ssq, mul_up(mu[i], mu[i]));
  }
  return sqrt_up(ssq);
}

double dpd_privacy_gdp_gaussian(double sigma, size_t steps) {
  if (!(sigma >= 0.0) || steps < 1) {
    return NAN;
  }
  return div_up(sqrt_up(steps_up(steps)), sigma);
}

/* ------------------------------------------------------------------------------------------ */
/* zCDP: delta at a given eps, composition, from GDP and from the Gaussian mechanism. */

/* log delta of [CKS20, Prop. 12] at alpha = 1 + e^u for rho_z-zCDP at eps (see the header):
 * (alpha-1)(alpha rho_z - eps) + (alpha-1) log1p(-1/alpha) - log alpha. */
static double zcdp_log_delta_u(double u, double rho_z, double eps) {
  double am1 = exp(u);
  return dpd__privacy_tight_log_delta_at_order((1.0 + am1) * rho_z, am1, log1p(am1),
                                               -log1p(exp(-u)), eps);
}

/* Its derivative in alpha, (2 alpha - 1) rho_z - eps + log1p(-1/alpha): increasing in u. */
static double zcdp_log_delta_slope_u(double u, double rho_z, double eps) {
  return (1.0 + 2.0 * exp(u)) * rho_z - eps - log1p(exp(-u));
}

int dpd_privacy_zcdp_delta(double rho_z, double eps, double *delta, dpd_err *err) {
  double lo = DPD_PRIVACY_U_MIN;
  double hi = DPD_PRIVACY_U_MAX;
  double best;
  double v;
  if (delta == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "delta output pointer is NULL");
  }
  if (isnan(rho_z) || rho_z < 0.0) {
    return DPD_FAIL(err, DPD_EINVAL, "rho_z = %g is invalid: the allowed range is [0, inf]", rho_z);
  }
  if (!(eps >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is [0, inf]", eps);
  }
  if (rho_z == 0.0 || isinf(eps)) {
    *delta = 0.0;
    return DPD_OK;
  }
  if (isinf(rho_z)) {
    *delta = 1.0;
    return DPD_OK;
  }
  /* Root of the slope in [U_MIN, U_MAX] by bisection; an end of the range when the slope has
   * one sign there (the minimum is then beyond it and the end still gives a valid delta). */
  if (zcdp_log_delta_slope_u(lo, rho_z, eps) >= 0.0) {
    hi = lo;
  } else if (zcdp_log_delta_slope_u(hi, rho_z, eps) <= 0.0) {
    lo = hi;
  } else {
    for (int iter = 0; iter < DPD_PRIVACY_DELTA_MAX_ITER; iter++) {
      double mid = lo + 0.5 * (hi - lo);
      if (mid <= lo || mid >= hi) {
        break;
      }
      if (zcdp_log_delta_slope_u(mid, rho_z, eps) < 0.0) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
  }
  /* Every alpha gives a valid delta: take the smaller of the two ends. */
  best = zcdp_log_delta_u(lo, rho_z, eps);
  v = zcdp_log_delta_u(hi, rho_z, eps);
  if (v < best || isnan(best)) {
    best = v;
  }
  if (isnan(best)) {
    return DPD_FAIL(err, DPD_ENONFINITE, "zcdp_delta: non-finite exponent at rho_z = %g, eps = %g",
                    rho_z, eps);
  }
  v = exp(best);
  *delta = (v < 1.0) ? v : 1.0;
  return DPD_OK;
}

double dpd_privacy_zcdp_delta_bun_steinke(double rho_z, double eps) {
  double x;
  if (isnan(rho_z) || rho_z < 0.0 || !(eps >= 0.0)) {
    return NAN;
  }
  if (rho_z == 0.0 || isinf(eps)) {
    return 0.0;
  }
  if (isinf(rho_z) || eps <= rho_z) {
    return 1.0;
  }
  x = (eps - rho_z) / (2.0 * sqrt(rho_z));
  return exp(-x * x);
}

double dpd_privacy_zcdp_compose(const double *rho_z, size_t n) {
  double sum = 0.0;
  if (rho_z == NULL) {
    return (n == 0) ? 0.0 : NAN;
  }
  for (size_t i = 0; i < n; i++) {
    if (!(rho_z[i] >= 0.0)) {
      return NAN;
    }
    sum = add_up(sum, rho_z[i]);
  }
  return sum;
}

double dpd_privacy_zcdp_from_gdp(double mu) {
  if (!(mu >= 0.0)) {
    return NAN;
  }
  return mul_up(0.5, mul_up(mu, mu));
}

double dpd_privacy_zcdp_gaussian(double sigma, size_t steps) {
  return dpd_privacy_zcdp_from_gdp(dpd_privacy_gdp_gaussian(sigma, steps));
}

/* ------------------------------------------------------------------------------------------ */
/* Conversions by name, calibration of a Gaussian mechanism, the guarantee report. */

static const char *const conversion_names[DPD_PRIVACY_CONVERSION_COUNT] = {"gdp", "zcdp_tight",
                                                                           "bun_steinke"};

const char *dpd_privacy_conversion_name(dpd_privacy_conversion conversion) {
  if ((int)conversion < 0 || (int)conversion >= DPD_PRIVACY_CONVERSION_COUNT) {
    return NULL;
  }
  return conversion_names[conversion];
}

static int check_steps(size_t steps, dpd_err *err) {
  if (steps < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "steps = %zu is invalid: the allowed range is steps >= 1",
                    steps);
  }
  return DPD_OK;
}

/* Budgets in [0, inf]: mu, rho_z, sigma. `name` names the argument in the reason. */
static int check_nonnegative(const char *name, double x, dpd_err *err) {
  if (!(x >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "%s = %g is invalid: the allowed range is [0, inf]", name, x);
  }
  return DPD_OK;
}

/* The k-th nudge of a calibrated sigma: up by a relative 2^k DBL_EPSILON, at least one ulp. */
static double nudge_up(double s, int k) {
  double t = s * (1.0 + ldexp(DBL_EPSILON, k));
  double next = nextafter(s, INFINITY);
  return (t > next) ? t : next;
}

/* What a calibrated sigma must satisfy: the target, checked with the functions the guarantee
 * report uses. */
typedef struct {
  dpd_privacy_budget_kind kind; /* MU, ZCDP or EPSILON */
  dpd_privacy_conversion conversion;
  double target; /* mu, rho_z or eps */
  double delta;  /* EPSILON only */
  size_t steps;
} calibration_target;

/* *ok = 1 when sigma meets the target. */
static int target_met(const calibration_target *c, double sigma, int *ok, dpd_err *err) {
  double mu = dpd_privacy_gdp_gaussian(sigma, c->steps);
  double rho_z = dpd_privacy_zcdp_from_gdp(mu);
  double eps = NAN;
  int status = DPD_OK;
  if (c->kind == DPD_PRIVACY_BUDGET_MU) {
    *ok = mu <= c->target;
    return DPD_OK;
  }
  if (c->kind == DPD_PRIVACY_BUDGET_ZCDP) {
    *ok = rho_z <= c->target;
    return DPD_OK;
  }
  switch (c->conversion) {
  case DPD_PRIVACY_CONVERSION_GDP:
    /* The definition (delta at the target eps) and the eps the report will show. */
    if (mu == 0.0) {
      *ok = 1;
      return DPD_OK;
    }
    if (!(gdp_delta_raw(c->target, mu) <= c->delta)) {
      *ok = 0;
      return DPD_OK;
    }
    status = dpd_privacy_gdp_eps(mu, c->delta, &eps, err);
    break;
  case DPD_PRIVACY_CONVERSION_ZCDP_TIGHT:
    status = dpd_privacy_eps_tight(rho_z, c->delta, &eps, err);
    break;
  default:
    eps = dpd_privacy_eps_bun_steinke(rho_z, c->delta);
    break;
  }
  if (status < 0) {
    return status;
  }
  *ok = eps <= c->target;
  return DPD_OK;
}

/* Raises sigma from its first guess until the target is met. */
static int calibrate_up(const calibration_target *c, double sigma, double *out, dpd_err *err) {
  for (int k = 0;; k++) {
    int ok = 0;
    int status = target_met(c, sigma, &ok, err);
    if (status < 0) {
      return status;
    }
    if (ok) {
      *out = sigma;
      return DPD_OK;
    }
    if (k >= DPD_PRIVACY_MAX_NUDGE || isinf(sigma)) {
      return DPD_FAIL(err, DPD_ESOLVER,
                      "calibration: cannot round sigma = %.17g up to meet the target %.17g "
                      "(steps = %zu)",
                      sigma, c->target, c->steps);
    }
    sigma = nudge_up(sigma, k);
  }
}

int dpd_privacy_sigma_from_gdp(double mu, size_t steps, double *sigma, dpd_err *err) {
  calibration_target c = {DPD_PRIVACY_BUDGET_MU, DPD_PRIVACY_CONVERSION_GDP, mu, NAN, steps};
  int status;
  if (sigma == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma output pointer is NULL");
  }
  if ((status = check_nonnegative("mu", mu, err)) < 0 || (status = check_steps(steps, err)) < 0) {
    return status;
  }
  if (mu == 0.0 || isinf(mu)) {
    *sigma = (mu == 0.0) ? INFINITY : 0.0;
    return DPD_OK;
  }
  return calibrate_up(&c, sqrt((double)steps) / mu, sigma, err);
}

int dpd_privacy_sigma_from_zcdp(double rho_z, size_t steps, double *sigma, dpd_err *err) {
  calibration_target c = {DPD_PRIVACY_BUDGET_ZCDP, DPD_PRIVACY_CONVERSION_GDP, rho_z, NAN, steps};
  int status;
  if (sigma == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma output pointer is NULL");
  }
  if ((status = check_nonnegative("rho_z", rho_z, err)) < 0 ||
      (status = check_steps(steps, err)) < 0) {
    return status;
  }
  if (rho_z == 0.0 || isinf(rho_z)) {
    *sigma = (rho_z == 0.0) ? INFINITY : 0.0;
    return DPD_OK;
  }
  return calibrate_up(&c, sqrt((double)steps / (2.0 * rho_z)), sigma, err);
}

int dpd_privacy_sigma_from_eps(double eps, double delta, size_t steps,
                               dpd_privacy_conversion conversion, double *sigma, dpd_err *err) {
  calibration_target c = {DPD_PRIVACY_BUDGET_EPSILON, conversion, eps, delta, steps};
  double guess = NAN;
  double rho = NAN;
  int status;
  if (sigma == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma output pointer is NULL");
  }
  if ((status = dpd__privacy_check_eps_positive(eps, err)) < 0 ||
      (status = dpd__privacy_check_delta(delta, err)) < 0 ||
      (status = check_steps(steps, err)) < 0) {
    return status;
  }
  if (dpd_privacy_conversion_name(conversion) == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "conversion = %d is invalid: the allowed values are gdp, zcdp_tight and "
                    "bun_steinke",
                    (int)conversion);
  }
  if (isinf(eps)) {
    *sigma = 0.0;
    return DPD_OK;
  }
  switch (conversion) {
  case DPD_PRIVACY_CONVERSION_GDP:
    status = dpd_privacy_gdp_mu(eps, delta, &rho, err); /* rho holds mu here */
    if (status < 0) {
      return status;
    }
    guess = sqrt((double)steps) / rho;
    break;
  case DPD_PRIVACY_CONVERSION_ZCDP_TIGHT:
    status = dpd_privacy_rho_from_eps(eps, delta, &rho, err);
    if (status < 0) {
      return status;
    }
    guess = sqrt((double)steps) / rho; /* rho_z = rho^2/2 = T / (2 sigma^2) */
    break;
  default:
    rho = dpd_privacy_rho_from_eps_bun_steinke(eps, delta);
    guess = sqrt((double)steps) / rho;
    break;
  }
  return calibrate_up(&c, guess, sigma, err);
}

/* The guarantee of a mechanism that is mu-GDP (mu not NaN) and rho_z-zCDP, at `delta`. */
static int guarantee_fill(double mu, double rho_z, double delta, dpd_privacy_guarantee *g,
                          dpd_err *err) {
  dpd_privacy_guarantee r;
  int status;
  r.source = DPD_PRIVACY_SOURCE_ZCDP;
  r.sigma = NAN;
  r.steps = 0;
  r.mu = mu;
  r.zcdp = rho_z;
  r.delta = delta;
  r.epsilon_gdp = NAN;
  if (!isnan(mu)) {
    r.source = DPD_PRIVACY_SOURCE_GDP;
    r.epsilon_gdp = 0.0;
    if (mu > 0.0 && (status = dpd_privacy_gdp_eps(mu, delta, &r.epsilon_gdp, err)) < 0) {
      return status;
    }
  }
  if ((status = dpd_privacy_eps_tight(rho_z, delta, &r.epsilon_zcdp, err)) < 0) {
    return status;
  }
  r.epsilon_bun_steinke = dpd_privacy_eps_bun_steinke(rho_z, delta);
  /* Both are valid: report the smaller (the exact GDP one whenever GDP applies). */
  r.epsilon = r.epsilon_zcdp;
  r.epsilon_conversion = DPD_PRIVACY_CONVERSION_ZCDP_TIGHT;
  if (!isnan(r.epsilon_gdp) && r.epsilon_gdp <= r.epsilon_zcdp) {
    r.epsilon = r.epsilon_gdp;
    r.epsilon_conversion = DPD_PRIVACY_CONVERSION_GDP;
  }
  r.at_epsilon = NAN;
  r.delta_at_epsilon = NAN;
  r.delta_conversion = DPD_PRIVACY_CONVERSION_ZCDP_TIGHT;
  r.delta_at_epsilon_gdp = NAN;
  r.delta_at_epsilon_zcdp = NAN;
  r.delta_at_epsilon_bun_steinke = NAN;
  *g = r;
  return DPD_OK;
}

int dpd_privacy_guarantee_from_gdp(double mu, double delta, dpd_privacy_guarantee *g,
                                   dpd_err *err) {
  int status;
  if (g == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "guarantee output pointer is NULL");
  }
  if ((status = check_nonnegative("mu", mu, err)) < 0 ||
      (status = dpd__privacy_check_delta(delta, err)) < 0) {
    return status;
  }
  return guarantee_fill(mu, dpd_privacy_zcdp_from_gdp(mu), delta, g, err);
}

int dpd_privacy_guarantee_from_zcdp(double rho_z, double delta, dpd_privacy_guarantee *g,
                                    dpd_err *err) {
  int status;
  if (g == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "guarantee output pointer is NULL");
  }
  if ((status = check_nonnegative("rho_z", rho_z, err)) < 0 ||
      (status = dpd__privacy_check_delta(delta, err)) < 0) {
    return status;
  }
  return guarantee_fill(NAN, rho_z, delta, g, err);
}

int dpd_privacy_guarantee_from_gaussian(double sigma, size_t steps, double delta,
                                        dpd_privacy_guarantee *g, dpd_err *err) {
  dpd_privacy_guarantee r;
  double mu;
  int status;
  if (g == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "guarantee output pointer is NULL");
  }
  if ((status = check_nonnegative("sigma", sigma, err)) < 0 ||
      (status = check_steps(steps, err)) < 0 ||
      (status = dpd__privacy_check_delta(delta, err)) < 0) {
    return status;
  }
  mu = dpd_privacy_gdp_gaussian(sigma, steps);
  if ((status = guarantee_fill(mu, dpd_privacy_zcdp_from_gdp(mu), delta, &r, err)) < 0) {
    return status;
  }
  r.source = DPD_PRIVACY_SOURCE_GAUSSIAN;
  r.sigma = sigma;
  r.steps = steps;
  *g = r;
  return DPD_OK;
}

int dpd_privacy_guarantee_at_epsilon(dpd_privacy_guarantee *g, double eps, dpd_err *err) {
  double d_gdp = NAN;
  double d_zcdp = NAN;
  int status;
  if (g == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "guarantee pointer is NULL");
  }
  if (!(eps >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is [0, inf]", eps);
  }
  if (!isnan(g->mu)) {
    d_gdp = 0.0;
    if (g->mu > 0.0 && (status = dpd_privacy_gdp_delta(g->mu, eps, &d_gdp, err)) < 0) {
      return status;
    }
  }
  if ((status = dpd_privacy_zcdp_delta(g->zcdp, eps, &d_zcdp, err)) < 0) {
    return status;
  }
  g->at_epsilon = eps;
  g->delta_at_epsilon_gdp = d_gdp;
  g->delta_at_epsilon_zcdp = d_zcdp;
  g->delta_at_epsilon_bun_steinke = dpd_privacy_zcdp_delta_bun_steinke(g->zcdp, eps);
  g->delta_at_epsilon = d_zcdp;
  g->delta_conversion = DPD_PRIVACY_CONVERSION_ZCDP_TIGHT;
  if (!isnan(d_gdp) && d_gdp <= d_zcdp) {
    g->delta_at_epsilon = d_gdp;
    g->delta_conversion = DPD_PRIVACY_CONVERSION_GDP;
  }
  return DPD_OK;
}

dpd_privacy_budget dpd_privacy_budget_default(void) {
  dpd_privacy_budget b;
  b.kind = DPD_PRIVACY_BUDGET_NONE;
  b.epsilon = NAN;
  b.delta = DPD_PRIVACY_DELTA_DEFAULT;
  b.mu = NAN;
  b.zcdp = NAN;
  b.sigma = NAN;
  b.conversion = DPD_PRIVACY_CONVERSION_DEFAULT;
  return b;
}

int dpd_privacy_budget_eval(dpd_privacy_budget budget, size_t steps, double *sigma,
                            dpd_privacy_guarantee *g, dpd_err *err) {
  double s = NAN;
  int status;
  if (sigma == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma output pointer is NULL");
  }
  if ((status = check_steps(steps, err)) < 0 ||
      (status = dpd__privacy_check_delta(budget.delta, err)) < 0) {
    return status;
  }
  switch (budget.kind) {
  case DPD_PRIVACY_BUDGET_NONE:
    s = 0.0; /* non-private: no noise */
    break;
  case DPD_PRIVACY_BUDGET_EPSILON:
    status =
        dpd_privacy_sigma_from_eps(budget.epsilon, budget.delta, steps, budget.conversion, &s, err);
    break;
  case DPD_PRIVACY_BUDGET_MU:
    status = dpd_privacy_sigma_from_gdp(budget.mu, steps, &s, err);
    break;
  case DPD_PRIVACY_BUDGET_ZCDP:
    status = dpd_privacy_sigma_from_zcdp(budget.zcdp, steps, &s, err);
    break;
  case DPD_PRIVACY_BUDGET_SIGMA:
    status = check_nonnegative("sigma", budget.sigma, err);
    s = budget.sigma;
    break;
  default:
    return DPD_FAIL(err, DPD_EINVAL,
                    "budget kind = %d is invalid: the allowed kinds are none, epsilon, mu, zcdp "
                    "and sigma",
                    (int)budget.kind);
  }
  if (status < 0) {
    return status;
  }
  if (g != NULL &&
      (status = dpd_privacy_guarantee_from_gaussian(s, steps, budget.delta, g, err)) < 0) {
    return status;
  }
  *sigma = s;
  return DPD_OK;
}
