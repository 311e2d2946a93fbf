/* Privacy accounting for the one-pass DP-SGD: amplification by iteration and zCDP -> (eps, delta).
 * SPDX-License-Identifier: MIT
 *
 * References
 *  [FMTT18] V. Feldman, I. Mironov, K. Talwar, A. Thakurta, "Privacy amplification by iteration",
 *           FOCS 2018, Thm 22 / Cor. 23 (contractive noisy iteration); the per-sample form
 *           rho_eff = max_k eta_k / sqrt(sum_{j>=k} sigma_j^2) is MATH.md 1.4 (seed 004).
 *  [BS16]   M. Bun, T. Steinke, "Concentrated differential privacy: simplifications, extensions,
 *           and lower bounds", TCC 2016, Prop. 1.3: rho-zCDP => (rho + 2 sqrt(rho log(1/delta)),
 *           delta)-DP.
 *  [CKS20]  C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
 *           NeurIPS 2020, Prop. 12 / Cor. 13; [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu,
 *           T. Sato, "Hypothesis testing interpretations and Renyi differential privacy",
 *           AISTATS 2020, Thm 21: (alpha, eps_R)-RDP => (eps_R + log1p(-1/alpha)
 *           - (log delta + log alpha)/(alpha - 1), delta)-DP for every alpha > 1. For rho_z-zCDP
 *           eps_R = alpha rho_z.
 *  [Bre73]  R. P. Brent, "Algorithms for Minimization without Derivatives", Prentice-Hall 1973,
 *           ch. 5 (as implemented by gsl_min_fminimizer_brent).
 *  [And17]  E. Anderson, "Algorithm 978: Safe scaling in the Level 1 BLAS", ACM TOMS 44(1), 2017
 *           (the scaled sum of squares of LAPACK dlassq).
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
 * never privacy.
 *
 * The inverse (eps -> largest rho) bisects on rho with the invariant
 * eps_tight(lo^2/2) <= eps < eps_tight(hi^2/2) and returns lo; it therefore never overshoots, even
 * if rounding made the computed eps_tight slightly non-monotone. */
#include <float.h>
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_min.h>

#include "core/error_impl.h"
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
  return (1.0 + am1) * p->rho_z + log1m_inv_alpha + (p->log_inv_delta - log_alpha) / am1;
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

static int check_delta(double delta, dpd_err *err) {
  if (!(delta > 0.0 && delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)", delta);
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
  status = check_delta(delta, err);
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
  if (!(eps > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is (0, inf]", eps);
  }
  status = check_delta(delta, err);
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
