/* Clipping factors mu_c and nu_c for Gaussian and non-Gaussian label noise (docs/math.md §1.5).
 * SPDX-License-Identifier: MIT
 *
 * With r ~ N(0, 2P) and k = c / (2 sqrt(P)) (so that |r| <= c iff |N(0,1)| <= sqrt(2) k):
 *   mu = P(|r| <= c) = erf(k),
 *   nu = E[min(r^2, c^2)] / (2P) = erf(k) - (2k/sqrt(pi)) e^{-k^2} + 2 k^2 erfc(k).
 * Derivatives, from dk/dP = -k/(2P):
 *   d mu/dP = -k e^{-k^2} / (sqrt(pi) P),
 *   d nu/dP = -2 k^2 erfc(k) / P    (the e^{-k^2} terms cancel: d nu/dk = 4 k erfc(k)).
 * For small k the first two terms of nu cancel (both are 2k/sqrt(pi) + O(k^3));
 * there nu is evaluated as P(3/2, k^2) + 2 k^2 erfc(k), with P the regularised
 * lower incomplete gamma function (E[Z^2 1{Z^2 <= 2k^2}] = P(3/2, k^2) for a
 * standard Gaussian Z), which carries no cancellation. For large k erfc(k)
 * underflows gracefully to 0 so that both factors tend to 1.
 *
 * Non-Gaussian label noise (dpd_clip_noise_factors_eval). The residual is r = s Z - z with
 * s = sqrt(2R), Z ~ N(0, 1) independent of the label noise z (symmetric law, variance zeta^2).
 * Given z, r ~ N(-z, s^2), and |r| has the law of |X| with X ~ N(|z|, s^2). With
 * a = (c - |z|)/s and b = (c + |z|)/s the moments of the truncated Gaussian (N. L. Johnson,
 * S. Kotz, N. Balakrishnan, Continuous Univariate Distributions, vol. 1, 2nd ed., Wiley 1994,
 * chapter 13) give closed forms:
 *   P(|r| <= c | z)        = Phi(a) - Phi(-b),
 *   E[min(r^2, c^2) | z]   = c^2 [Phi(-a) + Phi(-b)] + (z^2 + s^2) [Phi(a) - Phi(-b)]
 *                            + s [(|z| - c) phi(b) - (|z| + c) phi(a)]
 * (computed in whichever of two equivalent forms has no cancellation, see
 * clipped_second_moment). Integrated over z:
 *   mu = E_z P(|r| <= c | z),   nu = E_z E[min(r^2, c^2) | z] / (2R + zeta^2).
 * Derivatives in R: the density p_r of r is the density of -z smoothed by N(0, 2R), so it
 * solves the heat equation d p_r/dR = p_r''; integrating against 1{|r| <= c} and
 * min(r^2, c^2) (whose second derivative is 2 1{|r| < c} - 2c [delta(r - c) + delta(r + c)]):
 *   d mu/dR = 2 p_r'(c),   d E[min(r^2, c^2)]/dR = 2 mu - 4 c p_r(c),
 *   d nu/dR = (2 mu - 4 c p_r(c) - 2 nu) / (2R + zeta^2),
 * with p_r(c) = E_z phi_s(c - z) and, by parts, p_r'(c) = E_z[(log p)'(z) phi_s(c - z)]
 * (phi_s the N(0, s^2) density). These stay regular as R -> 0, where they become p(c) and
 * p'(c) of the law itself (differentiating the closed forms in z under the integral instead
 * gives kernels of width s and height 1/s^2, which cancel). The limit s -> 0 of the kernels
 * is the deterministic r = -z.
 *  - Rademacher: the average of the two values z = +-zeta, exact (they are equal by symmetry).
 *  - Laplace (scale b = zeta/sqrt 2) and Student-t (z = a t_nu, a = zeta sqrt((nu-2)/nu)):
 *    for |z| < c - 12 s and |z| > c + 12 s the conditional quantities are 1 and z^2 + s^2,
 *    resp. 0 and c^2, to 1e-33 relative, and those regions are integrated in closed form
 *    (the law's tail mass and its truncated second moment, tail_second_moment). On
 *    [c - 12 s, c] and [c, c + 12 s] (or [0, c] when c < 12 s) GSL adaptive Gauss-Kronrod
 *    quadrature (QAG, 61 points; R. Piessens et al., QUADPACK, Springer 1983) integrates in
 *    u = (|z| - c)/s when s is at most the law's scale, and otherwise in the angle
 *    theta = atan(|z|/l) (l = b, or a sqrt(nu)), in which the law's weight is bounded and
 *    smooth whatever its tails (integrand). At R = 0 everything is closed form.
 *  - zeta = 0: every law is z = 0 and the Gaussian closed form with P = R applies. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_gamma.h>

#include "core/error_impl.h"
#include "core/noise_impl.h"
#include "dpdyn/clip.h"

static const double inv_sqrt_pi = 0.56418958354775628694807945156077;

void dpd_clip_factors_eval(double c, double P, double *mu, double *nu, double *dmu_dP,
                           double *dnu_dP) {
  double m = 1.0, v = 1.0, dm = 0.0, dv = 0.0;
  double k = (isfinite(c) && P > 0.0) ? c / (2.0 * sqrt(P)) : INFINITY;
  if (isnan(c) || isnan(P)) {
    /* Propagate NaN so that a non-finite state is noticed by the caller. */
    m = v = dm = dv = NAN;
  } else if (isfinite(k)) {
    /* k = inf (c = inf, P = 0, or c / sqrt(P) overflowing) keeps the limits 1, 1, 0, 0.
     * k^2 erfc(k) is evaluated as k (k erfc(k)): k * k overflows for k > 1.3e154, where
     * erfc(k) = 0, and inf * 0 would give NaN. */
    double ek = exp(-k * k);
    double kerfck = k * erfc(k);
    m = erf(k);
    if (k < 1.0) {
      v = gsl_sf_gamma_inc_P(1.5, k * k) + 2.0 * k * kerfck;
    } else {
      v = m - 2.0 * k * inv_sqrt_pi * ek + 2.0 * k * kerfck;
    }
    dm = -k * ek * inv_sqrt_pi / P;
    dv = -2.0 * k * kerfck / P;
  }
  if (mu != NULL) {
    *mu = m;
  }
  if (nu != NULL) {
    *nu = v;
  }
  if (dmu_dP != NULL) {
    *dmu_dP = dm;
  }
  if (dnu_dP != NULL) {
    *dnu_dP = dv;
  }
}

double dpd_clip_mu_eval(double c, double P) {
  double mu;
  dpd_clip_factors_eval(c, P, &mu, NULL, NULL, NULL);
  return mu;
}

double dpd_clip_nu_eval(double c, double P) {
  double nu;
  dpd_clip_factors_eval(c, P, NULL, &nu, NULL, NULL);
  return nu;
}

/* ---- Non-Gaussian label noise (derivation in the file comment) ----------------------------- */

/* Quadrature settings. They are named constants rather than config fields because
 * dpd_clip_noise_factors_eval is a pure, config-free formula; they give every factor to about
 * 1e-11 relative accuracy, far below the ODE tolerances (rtol >= 1e-10 in practice). */
#define NOISE_QUAD_LIMIT 128                   /* subintervals per piece (stack workspace) */
static const double noise_quad_epsrel = 1e-11; /* relative tolerance of each integral */
static const double noise_quad_epsabs = 1e-15; /* absolute tolerance, in units of the scale */
static const double noise_kernel_width = 12.0; /* K: Phi(-12) = 1.8e-33 */

static const double inv_sqrt2 = 0.70710678118654752440084436210485;
static const double inv_sqrt_2pi = 0.39894228040143267793994605993438;

typedef enum {
  KERNEL_INSIDE,       /* P(|X| <= c) */
  KERNEL_CLIPPED_SQ,   /* E[min(X^2, c^2)] */
  KERNEL_DENSITY,      /* phi_s(c - z) + phi_s(c + z) */
  KERNEL_DENSITY_SLOPE /* l(z) (phi_s(c - z) - phi_s(c + z)), l = (log p)' */
} kernel_kind;

/* Everything the integrands need, for one (law, c, R). */
typedef struct {
  dpd_noise_law law;
  double c;            /* clipping scale, finite */
  double s;            /* sqrt(2R) >= 0 */
  double nu;           /* Student-t degrees of freedom */
  double laplace_b;    /* Laplace scale zeta / sqrt(2) */
  double student_a;    /* Student-t scale zeta sqrt((nu - 2) / nu) */
  double student_w;    /* zeta sqrt(nu - 2) = a sqrt(nu): z = w tan(theta) */
  double student_norm; /* 2 / B(1/2, nu/2) */
  double law_scale;    /* b (Laplace) or a (Student-t): the width of the law's features */
  kernel_kind kind;
  int in_u; /* the integration variable: 1 u = (z - c)/s, 0 the law's angle (integrand) */
} noise_ctx;

/* A GSL workspace on the stack: the same fields gsl_integration_workspace_alloc fills, with
 * arrays of NOISE_QUAD_LIMIT entries (no allocation per call, nothing shared). */
typedef struct {
  gsl_integration_workspace w;
  double alist[NOISE_QUAD_LIMIT], blist[NOISE_QUAD_LIMIT];
  double rlist[NOISE_QUAD_LIMIT], elist[NOISE_QUAD_LIMIT];
  size_t order[NOISE_QUAD_LIMIT], level[NOISE_QUAD_LIMIT];
} quad_workspace;

static void quad_workspace_init(quad_workspace *q) {
  q->w.limit = NOISE_QUAD_LIMIT;
  q->w.size = 0;
  q->w.nrmax = 0;
  q->w.i = 0;
  q->w.maximum_level = 0;
  q->w.alist = q->alist;
  q->w.blist = q->blist;
  q->w.rlist = q->rlist;
  q->w.elist = q->elist;
  q->w.order = q->order;
  q->w.level = q->level;
}

static double std_normal_pdf(double x) {
  return inv_sqrt_2pi * exp(-0.5 * x * x);
}

/* Gauss-Legendre rule with 12 points on [-1, 1] (the positive nodes and their weights; GSL's
 * precomputed gsl_integration_glfixed table, Abramowitz & Stegun table 25.4). */
static const double gl12_x[6] = {0.12523340851146891, 0.36783149899818018, 0.58731795428661748,
                                 0.76990267419430469, 0.90411725637047491, 0.98156063424671924};
static const double gl12_w[6] = {0.24914704581340277, 0.23349253653835481, 0.20316742672306592,
                                 0.16007832854334622, 0.10693932599531843, 0.047175336386511828};

/* Below this c/s the clipping window [-c, c] is narrow next to the residual's spread, the
 * closed forms lose (s/c)^2 eps to cancellation, and a 12-point Gauss-Legendre rule over the
 * window is exact to rounding instead: the integrand x^k phi((x - m)/s) is entire and varies
 * by at most exp(2 c m / s^2) <= e^4 across it while phi(m/s) has not underflowed (m/s < 40). */
static const double narrow_window = 0.05;

/* The functions below take X ~ N(m, s^2), m >= 0, s > 0, together with a = (c - m)/s, which
 * the caller computes without cancellation where it matters (in the variable u = (z - c)/s it
 * is -u exactly; from z = c + s u it would carry the rounding of c + s u, eps c / s). */

/* P(|X| <= c) and E[X^2 1{|X| <= c}] for c <= narrow_window s. The nodes x = c x_i give
 * (x - m)/s = a - c (1 - x_i)/s and (-x - m)/s = -(x + m)/s, both without cancellation. */
static void narrow_window_moments(double m, double a, double c, double s, double *p_in,
                                  double *in2) {
  double p = 0.0, q = 0.0;
  for (size_t i = 0; i < 6; i++) {
    double x = c * gl12_x[i];
    double f =
        gl12_w[i] * (std_normal_pdf(a - c * (1.0 - gl12_x[i]) / s) + std_normal_pdf(-(x + m) / s));
    p += f;
    q += x * x * f;
  }
  *p_in = p * c / s;
  *in2 = q * c / s;
}

/* P_in = P(-b <= U <= a), Q(a) = P(U > a) and Q(b) for U ~ N(0, 1), b - a >= 2 narrow_window,
 * b > 0, from two erfc: e1 = erfc(|a|/sqrt 2), e2 = erfc(b/sqrt 2). For a >= 0,
 * P_in = 1 - (e1 + e2)/2 >= P(0 <= U <= 0.1) = 0.04 (so at most 25 ulp of cancellation); for
 * a < 0, P_in = (e1 - e2)/2 with e1 > e2 (|a| < b). */
static void gauss_window(double a, double b, double *p_in, double *q_a, double *q_b) {
  double e1 = erfc(fabs(a) * inv_sqrt2), e2 = erfc(b * inv_sqrt2);
  *q_b = 0.5 * e2;
  if (a >= 0.0) {
    *q_a = 0.5 * e1;
    *p_in = 1.0 - 0.5 * (e1 + e2);
  } else {
    *q_a = 1.0 - 0.5 * e1;
    *p_in = 0.5 * (e1 - e2);
  }
}

/* P(|X| <= c) = P(-b <= U <= a), b = (c + m)/s. */
static double prob_inside(double m, double a, double c, double s) {
  double p_in, q_a, q_b;
  if (c <= narrow_window * s) {
    double in2;
    narrow_window_moments(m, a, c, s, &p_in, &in2);
    return p_in;
  }
  gauss_window(a, (c + m) / s, &p_in, &q_a, &q_b);
  return p_in;
}

/* E[min(X^2, c^2)] from the truncated-Gaussian moments (b = (c + m)/s):
 *   mostly clipped:   c^2 P(|X| > c) + (m^2 + s^2) P_in + s [(m - c) phi(b) - (m + c) phi(a)],
 *   mostly inside:    m^2 + s^2 - T(a, c + m) - T(b, c - m),
 *                     T(x, y) = (m^2 + s^2 - c^2) Phi(-x) + s y phi(x),
 * where T are E[(X^2 - c^2) 1{X > c}] and E[(X^2 - c^2) 1{X < -c}]. Each form is used where
 * its terms are small next to the result (the mean m can be far beyond c in the tails of z);
 * m - c = -s a and m^2 + s^2 - c^2 = s (s - a (c + m)) carry no cancellation. */
static double clipped_second_moment(double m, double a, double c, double s) {
  double b = (c + m) / s;
  double pin, qa, qb;
  if (c <= narrow_window * s) {
    double in2;
    narrow_window_moments(m, a, c, s, &pin, &in2);
    return c * c * (1.0 - pin) + in2; /* pin <= 0.04: no cancellation */
  }
  gauss_window(a, b, &pin, &qa, &qb);
  double pa = std_normal_pdf(a), pb = std_normal_pdf(b);
  if (pin <= 0.5) {
    return c * c * (qa + qb) + (m * m + s * s) * pin - s * (s * a * pb + (m + c) * pa);
  }
  double excess = s * (s - a * (c + m));
  double t_up = (qa > 0.0 ? excess * qa : 0.0) + s * (c + m) * pa;
  double t_low = (qb > 0.0 ? excess * qb : 0.0) + s * s * a * pb;
  return m * m + s * s - t_up - t_low;
}

/* d/dz log p(z) of the law, z >= 0 (right derivative at 0 for Laplace). */
static double log_density_slope(const noise_ctx *ctx, double z) {
  if (ctx->law == DPD_NOISE_LAPLACE) {
    return -1.0 / ctx->laplace_b;
  }
  return -(ctx->nu + 1.0) * z / (ctx->student_w * ctx->student_w + z * z);
}

/* The conditional quantity of ctx->kind at a label noise z >= 0 with a = (c - z)/s: the
 * residual given z is N(-z, s^2), and |r| has the law of |X| with X ~ N(z, s^2). s = 0 only
 * for the two value kernels (r = -z exactly). */
static double kernel_eval(const noise_ctx *ctx, double z, double a) {
  const double c = ctx->c, s = ctx->s;
  if (s == 0.0) {
    if (ctx->kind == KERNEL_INSIDE) {
      return z <= c ? 1.0 : 0.0;
    }
    return z < c ? z * z : c * c;
  }
  switch (ctx->kind) {
  case KERNEL_INSIDE:
    return prob_inside(z, a, c, s);
  case KERNEL_CLIPPED_SQ:
    return clipped_second_moment(z, a, c, s);
  case KERNEL_DENSITY:
    return (std_normal_pdf(a) + std_normal_pdf((c + z) / s)) / s;
  case KERNEL_DENSITY_SLOPE:
    /* phi_s(c - z) - phi_s(c + z) = phi_s(c - z) (1 - exp(-2 c z / s^2)): no cancellation. */
    return log_density_slope(ctx, z) * std_normal_pdf(a) / s * -expm1(-2.0 * c * z / (s * s));
  }
  return NAN;
}

/* Density p(x) of the law at x >= 0. Student-t: p(x) = (1 + (x/w)^2)^{-(nu+1)/2} / (w B),
 * B = B(1/2, nu/2), w = a sqrt(nu). */
static double law_density(const noise_ctx *ctx, double x) {
  if (ctx->law == DPD_NOISE_LAPLACE) {
    return exp(-x / ctx->laplace_b) / (2.0 * ctx->laplace_b);
  }
  double y = x / ctx->student_w;
  /* (1 + y^2)^{-(nu+1)/2} through log1p: exact to rounding also for large nu. */
  return 0.5 * ctx->student_norm / ctx->student_w * exp(-0.5 * (ctx->nu + 1.0) * log1p(y * y));
}

/* a = (c - z)/s of kernel_eval (unused, and 0, when s = 0). */
static double kernel_offset(const noise_ctx *ctx, double z) {
  return ctx->s > 0.0 ? (ctx->c - z) / ctx->s : 0.0;
}

/* The integrand of E h(|z|) = 2 int_0^inf h(z) p(z) dz in one of two variables:
 *  - the law's angle theta = atan(z / l), in which the law has a bounded, smooth weight on
 *    [0, pi/2) whatever its tails (l = b for Laplace, l = w = a sqrt(nu) for Student-t):
 *      Laplace:   E h = int_0^{pi/2} h(b tan theta) e^{-tan theta} (1 + tan^2 theta) dtheta,
 *      Student-t: E h = (2 / B(1/2, nu/2)) int_0^{pi/2} h(w tan theta) cos^{nu-1} theta dtheta;
 *  - u = (z - c)/s, for the pieces next to c when s <= the law's scale: there the kernels have
 *    width 1 and the density is smooth on a scale >= 1, while in theta a kernel narrower than
 *    about 1e-8 z would drown in the rounding of z(theta). E h = 2 s int h(c + s u) p(c + s u). */
static double integrand(double t, void *params) {
  const noise_ctx *ctx = params;
  if (ctx->in_u) {
    double z = ctx->c + ctx->s * t;
    return 2.0 * ctx->s * law_density(ctx, z) * kernel_eval(ctx, z, -t);
  }
  double u = tan(t), z;
  if (ctx->law == DPD_NOISE_LAPLACE) {
    double e = exp(-u); /* 0 long before u * u overflows */
    z = ctx->laplace_b * u;
    return e > 0.0 ? e * (1.0 + u * u) * kernel_eval(ctx, z, kernel_offset(ctx, z)) : 0.0;
  }
  /* cos^{nu-1} theta = (1 + u^2)^{-(nu-1)/2}, through log1p: exact to rounding for large nu. */
  z = ctx->student_w * u;
  return ctx->student_norm * exp(-0.5 * (ctx->nu - 1.0) * log1p(u * u)) *
         kernel_eval(ctx, z, kernel_offset(ctx, z));
}

/* The integration variable of a label-noise value z >= 0 (see integrand). */
static double variable_of(const noise_ctx *ctx, double z) {
  if (ctx->in_u) {
    return (z - ctx->c) / ctx->s;
  }
  return atan(z / (ctx->law == DPD_NOISE_LAPLACE ? ctx->laplace_b : ctx->student_w));
}

/* P(|z| > x) of the law. */
static double tail_mass(const noise_ctx *ctx, double x) {
  if (ctx->law == DPD_NOISE_LAPLACE) {
    return exp(-x / ctx->laplace_b);
  }
  return 2.0 * gsl_cdf_tdist_Q(x / ctx->student_a, ctx->nu);
}

/* E[z^2 1{|z| > x}] of the law, in closed form.
 *  - Laplace: 2 int_x^inf z^2 e^{-z/b} / (2b) dz = e^{-x/b} (x^2 + 2 b x + 2 b^2).
 *  - Student-t, z = a T, T ~ t_nu: from t^2 f_nu(t) = nu (1 + t^2/nu) f_nu(t) - nu f_nu(t)
 *    and (1 + t^2/nu) f_nu(t) = (nu - 1)/(nu - 2) sqrt((nu - 2)/nu) f_{nu-2}(t sqrt((nu-2)/nu))
 *    (ratio of the normalising constants),
 *      E[T^2 1{|T| > y}] = nu (nu - 1)/(nu - 2) P(|T_{nu-2}| > y sqrt((nu - 2)/nu))
 *                          - nu P(|T_nu| > y),
 *    so with a^2 = zeta^2 (nu - 2)/nu and y = x/a:
 *      E[z^2 1{|z| > x}] = zeta^2 [(nu - 1) P(|T_{nu-2}| > x/zeta) - (nu - 2) P(|T_nu| > x/a)],
 *    which tends to zeta^2 at x = 0 and keeps its accuracy as nu -> 2 (no 1/(nu - 2)). The
 *    first term dominates for large x (tail x^{2-nu} against x^{-nu}): no cancellation. */
static double tail_second_moment(const noise_ctx *ctx, double x, double zeta) {
  if (ctx->law == DPD_NOISE_LAPLACE) {
    double b = ctx->laplace_b;
    return exp(-x / b) * (x * x + 2.0 * b * x + 2.0 * b * b);
  }
  return zeta * zeta *
         ((ctx->nu - 1.0) * 2.0 * gsl_cdf_tdist_Q(x / zeta, ctx->nu - 2.0) -
          (ctx->nu - 2.0) * 2.0 * gsl_cdf_tdist_Q(x / ctx->student_a, ctx->nu));
}

static const char *kernel_name(kernel_kind kind) {
  switch (kind) {
  case KERNEL_INSIDE:
    return "P(|r| <= c)";
  case KERNEL_CLIPPED_SQ:
    return "E[min(r^2, c^2)]";
  case KERNEL_DENSITY:
    return "the residual density at c";
  case KERNEL_DENSITY_SLOPE:
    return "the residual density slope at c";
  }
  return "?";
}

/* E over the law of the kernel of `kind` restricted to |z| in [zpts[0], zpts[npts - 1]], as
 * the sum of the pieces between consecutive points (at most NOISE_MAX_PIECES), each by GSL's
 * adaptive QAG with the 61-point Gauss-Kronrod rule (R. Piessens et al., QUADPACK, Springer
 * 1983). The points put every narrow feature of the integrand (the Gaussian kernels of width s
 * around z = c) at the end of a piece, where the adaptive bisection finds it. The tolerance is
 * global: a first 61-point Kronrod pass over every piece estimates int |f|, and each piece
 * must reach noise_quad_epsrel times its own value or times that total (split over the
 * pieces), so that a piece carrying almost nothing is not refined to full relative accuracy
 * (and cannot stall on rounding). A piece whose first pass already meets its tolerance (QAG's
 * own first-step test) keeps that value; the others go to QAG. */
#define NOISE_MAX_PIECES 4
static int integrate_law(noise_ctx *ctx, kernel_kind kind, const double *zpts, size_t npts,
                         double scale, double R, double *out, dpd_err *err) {
  quad_workspace q;
  gsl_function f;
  double lo[NOISE_MAX_PIECES], hi[NOISE_MAX_PIECES], first[NOISE_MAX_PIECES];
  double first_err[NOISE_MAX_PIECES], first_asc[NOISE_MAX_PIECES];
  double total = 0.0, total_abs = 0.0, epsabs;
  int in_u[NOISE_MAX_PIECES];
  size_t npieces = 0;
  ctx->kind = kind;
  f.function = integrand;
  f.params = ctx;
  for (size_t i = 0; i + 1 < npts && npieces < NOISE_MAX_PIECES; i++) {
    double t0, t1, resabs;
    ctx->in_u = ctx->s > 0.0 && ctx->s <= ctx->law_scale;
    t0 = variable_of(ctx, zpts[i]);
    t1 = variable_of(ctx, zpts[i + 1]);
    if (!(fmax(t0, t1) > fmin(t0, t1))) {
      continue;
    }
    lo[npieces] = fmin(t0, t1);
    hi[npieces] = fmax(t0, t1);
    in_u[npieces] = ctx->in_u;
    gsl_integration_qk61(&f, lo[npieces], hi[npieces], &first[npieces], &first_err[npieces],
                         &resabs, &first_asc[npieces]);
    total_abs += resabs;
    npieces++;
  }
  if (npieces == 0) {
    *out = 0.0;
    return DPD_OK;
  }
  epsabs = fmax(noise_quad_epsabs * scale, noise_quad_epsrel * total_abs) / (double)npieces;
  for (size_t i = 0; i < npieces; i++) {
    double result = first[i], abserr = first_err[i];
    int status = GSL_SUCCESS;
    double tolerance = fmax(epsabs, noise_quad_epsrel * fabs(result));
    if (!((abserr <= tolerance && abserr != first_asc[i]) || abserr == 0.0)) {
      ctx->in_u = in_u[i];
      quad_workspace_init(&q);
      status = gsl_integration_qag(&f, lo[i], hi[i], epsabs, noise_quad_epsrel, NOISE_QUAD_LIMIT,
                                   GSL_INTEG_GAUSS61, &q.w, &result, &abserr);
    }
    if (status != GSL_SUCCESS || !isfinite(result)) {
      return DPD_FAIL(err, DPD_EMAXITER,
                      "clipping factors (%s noise, c = %g, R = %g): quadrature of %s over [%g, %g] "
                      "(in %s) failed: %s (result %g, estimated error %g)",
                      ctx->law == DPD_NOISE_LAPLACE ? "laplace" : "student", ctx->c, R, kernel_name(kind), lo[i], hi[i],
                      in_u[i] ? "u = (z - c)/s" : "the angle atan(|z|/l)",
                      status != GSL_SUCCESS ? gsl_strerror(status) : "not finite", result, abserr);
    }
    total += result;
  }
  *out = total;
  return DPD_OK;
}

/* Rademacher: the average over z = +-zeta, which by symmetry is the value at z = zeta. */
static void rademacher_factors(double c, double s, double zeta, double out[4]) {
  if (s == 0.0) {
    /* r = -z exactly: |r| = zeta. The density of r at c is a point mass when zeta = c. */
    out[0] = zeta <= c ? 1.0 : 0.0;
    out[1] = zeta <= c ? zeta * zeta : c * c;
    out[2] = zeta == c ? INFINITY : 0.0;
    out[3] = 0.0;
    return;
  }
  double a = (c - zeta) / s, b = (c + zeta) / s;
  out[0] = prob_inside(zeta, a, c, s);
  out[1] = clipped_second_moment(zeta, a, c, s);
  /* p_r(c) and p_r'(c) of the two-component Gaussian mixture (phi_s'(x) = -x phi_s(x)/s^2). */
  out[2] = 0.5 * (std_normal_pdf(a) + std_normal_pdf(b)) / s;
  out[3] = -0.5 * (a * std_normal_pdf(a) + b * std_normal_pdf(b)) / (s * s);
}

/* Laplace and Student-t: out = {mu, E[min(r^2, c^2)], p_r(c), p_r'(c)}; the last two only
 * when `derivs`. */
static int continuous_factors(const dpd_noise_spec *noise, double c, double R, int derivs,
                              double out[4], dpd_err *err) {
  noise_ctx ctx;
  double zpts[3];
  size_t npts = 0;
  double second = 2.0 * R + noise->zeta * noise->zeta;
  int status;

  memset(&ctx, 0, sizeof ctx);
  ctx.law = noise->law;
  ctx.c = c;
  ctx.s = sqrt(2.0 * R);
  ctx.nu = noise->nu;
  ctx.laplace_b = noise->zeta * inv_sqrt2;
  ctx.law_scale = ctx.laplace_b;
  if (noise->law == DPD_NOISE_STUDENT) {
    ctx.student_a = noise->zeta * sqrt((noise->nu - 2.0) / noise->nu);
    ctx.student_w = noise->zeta * sqrt(noise->nu - 2.0);
    ctx.student_norm = 2.0 * exp(-gsl_sf_lnbeta(0.5, 0.5 * noise->nu));
    ctx.law_scale = ctx.student_a;
  }
  /* Regions of |z| (K = noise_kernel_width):
   *  - body |z| <= L = c - K s: P(|r| <= c | z) = 1 and E[min(r^2, c^2) | z] = z^2 + s^2 up to
   *    Phi(-K) = 1.8e-33 relative, and the density kernels are below phi(K)/s = 5e-32/s; its
   *    contributions are P(|z| <= L) and s^2 P(|z| <= L) + zeta^2 - E[z^2 1{|z| > L}] in
   *    closed form (no quadrature of the heavy z^2 tail of Student-t);
   *  - [max(L, 0), c] and [c, c + K s]: quadrature (the kernels change there);
   *  - beyond c + K s: P(|r| <= c | z) = 0 and E[min(r^2, c^2) | z] = c^2 (same accuracy),
   *    contributing c^2 P(|z| > c + K s).
   * With s = 0 (R = 0) only the closed forms remain, split at L = c. */
  const double L = c - noise_kernel_width * ctx.s, zmax = c + noise_kernel_width * ctx.s;
  double body_mass = 0.0, body_second = 0.0;
  if (L > 0.0) {
    body_mass = 1.0 - tail_mass(&ctx, L);
    body_second = ctx.s * ctx.s * body_mass +
                  (noise->zeta * noise->zeta - tail_second_moment(&ctx, L, noise->zeta));
  }
  zpts[npts++] = L > 0.0 ? L : 0.0;
  if (ctx.s > 0.0) {
    zpts[npts++] = c;
    zpts[npts++] = zmax;
  }
  out[0] = out[1] = out[2] = out[3] = 0.0;
  if (npts > 1) {
    if ((status = integrate_law(&ctx, KERNEL_INSIDE, zpts, npts, 1.0, R, &out[0], err)) < 0) {
      return status;
    }
    if ((status = integrate_law(&ctx, KERNEL_CLIPPED_SQ, zpts, npts, fmin(c * c, second), R,
                                &out[1], err)) < 0) {
      return status;
    }
  }
  out[0] += body_mass;
  out[1] += body_second + c * c * tail_mass(&ctx, zmax);
  if (!derivs) {
    return DPD_OK;
  }
  if (ctx.s == 0.0) {
    /* The residual density is the law's: p_r(c) = p(c), p_r'(c) = p'(c). */
    out[2] = law_density(&ctx, c);
    out[3] = log_density_slope(&ctx, c) * out[2];
    return DPD_OK;
  }
  /* p_r(c) = E phi_s(c - z) = (1/2) E[phi_s(c - |z|) + phi_s(c + |z|)], and, integrating by
   * parts, p_r'(c) = E[p'(z) ...] = (1/2) E[l(|z|) (phi_s(c - |z|) - phi_s(c + |z|))]. */
  if ((status = integrate_law(&ctx, KERNEL_DENSITY, zpts, npts, 1.0 / sqrt(second), R, &out[2],
                              err)) < 0) {
    return status;
  }
  if ((status = integrate_law(&ctx, KERNEL_DENSITY_SLOPE, zpts, npts, 1.0 / second, R, &out[3],
                              err)) < 0) {
    return status;
  }
  out[2] *= 0.5;
  out[3] *= 0.5;
  return DPD_OK;
}

/* The clipping moments of the built-in non-Gaussian laws (dpd_noise_law_type.clip_moments,
 * listed in the law table of noise.c). */
int dpd__clip_moments_rademacher(const dpd_noise_spec *noise, double c, double R, int derivs,
                                 double out[4], dpd_err *err) {
  (void)derivs;
  (void)err;
  rademacher_factors(c, sqrt(2.0 * R), noise->zeta, out);
  return DPD_OK;
}

int dpd__clip_moments_quadrature(const dpd_noise_spec *noise, double c, double R, int derivs,
                                 double out[4], dpd_err *err) {
  return continuous_factors(noise, c, R, derivs, out, err);
}
