/* Data-driven clipping factors of a dataset (docs/real_data_theory.md, declared in
 * linreg/data_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * Model (docs/real_data_theory.md §2): x = sqrt(a) g~ with g~ ~ N(0, Sigma) independent of the
 * row's a = |x|^2/d and residual z, u = g~^T (theta - theta^*) ~ N(0, 2R), r = sqrt(a) u - z.
 * Clipping g = r x at C = c sqrt(d) clips w = r at b = c/sqrt(a) (|g| = |r| sqrt(a d)). Given the
 * row, w ~ N(-z, s^2) with s^2 = 2 a R (file targets) or w ~ N(0, s^2), s^2 = 2 a R + zeta^2 (model
 * targets: z Gaussian, z NULL), and |w| has the law of |X|, X ~ N(m, s^2), m = |z| (0). Per row,
 * with alpha = (b - m)/s, beta = (b + m)/s (Johnson, Kotz & Balakrishnan, Continuous Univariate
 * Distributions vol. 1, 2nd ed., Wiley 1994, ch. 13, the truncated normal's moments):
 *   p_in  = P(|X| <= b)      = Phi(alpha) - Phi(-beta),
 *   e_min = E min(X^2, b^2)  = b^2 (1 - p_in) + (m^2 + s^2) p_in - s [(b - m) phi(beta)
 *                              + (b + m) phi(alpha)],
 * and their derivatives in s^2 from the heat equation d/d(s^2) E f(X) = (1/2) E f''(X):
 *   d p_in / d(s^2)  = -[alpha phi(alpha) + beta phi(beta)] / (2 s^2),
 *   d e_min / d(s^2) = p_in - (b/s) [phi(alpha) + phi(beta)].
 * The factors are the row means (ds^2/dR = 2a):
 *   mu = mean a p_in,  N = nu P = (1/2) mean a e_min,
 *   dmu/dR = mean 2 a^2 d p_in/d(s^2),  dN/dR = mean a^2 d e_min/d(s^2),
 *   nu = N / P,  dnu/dR = (dN/dR - nu) / P,  P = R + zeta^2/2.
 * Accuracy. The probabilities come from erfc (gauss_window: no tail computed as 1 - something
 * close to 1), e_min from whichever of two equivalent forms has no cancellation (as in
 * src/core/clip.c), phi(beta) as phi(alpha) e^{-2bm/s^2} (never larger than phi(alpha)), and
 * alpha phi(alpha) + beta phi(beta) as (b/s)(phi(alpha) + phi(beta)) + (m/s) phi(alpha)
 * expm1(-2bm/s^2), whose terms do not cancel when m > b. A window narrower than 0.05 s is
 * integrated by a 12-point Gauss-Legendre rule instead (exact to rounding there, see clip.c).
 * Limits: c = INFINITY gives mu = mean a, N = (1/2) mean a (m^2 + s^2), dmu = 0, dN = mean a^2
 * (no clipping); s = 0 (R = 0 with file targets, or zeta = 0) the deterministic w = -z; P = 0
 * (R = 0, zeta^2 = 0) nu = dN/dR (the limit N/P as R -> 0+ when N(0) = 0) and dnu/dR = 0.
 * Rows with a = 0 contribute nothing (every term carries a factor a).
 * Sums: over fixed chunks of FACTORS_CHUNK rows (more when n > FACTORS_CHUNK FACTORS_MAXCHUNKS),
 * each summed in row order, the chunks' sums added in chunk order: the result depends on the rows
 * only, not on the thread count. */
#include <math.h>
#include <stddef.h>

#include <omp.h>

#include "linreg/data_impl.h"

/* Rows per chunk, and the most chunks one evaluation uses (their partial sums live on the stack:
 * nothing is allocated per evaluation; beyond FACTORS_CHUNK FACTORS_MAXCHUNKS rows the chunks
 * grow). */
#define FACTORS_CHUNK 4096
#define FACTORS_MAXCHUNKS 256

static const double inv_sqrt2 = 0.70710678118654752440084436210485;
static const double inv_sqrt_2pi = 0.39894228040143267793994605993438;

/* Below this b/s the closed forms lose (s/b)^2 eps to cancellation; a 12-point Gauss-Legendre
 * rule over [-b, b] is exact to rounding there (clip.c, narrow_window). */
static const double narrow_window = 0.05;

/* Gauss-Legendre, 12 points on [-1, 1]: the positive nodes and their weights (Abramowitz &
 * Stegun table 25.4, as in clip.c). */
static const double gl12_x[6] = {0.12523340851146891, 0.36783149899818018, 0.58731795428661748,
                                 0.76990267419430469, 0.90411725637047491, 0.98156063424671924};
static const double gl12_w[6] = {0.24914704581340277, 0.23349253653835481, 0.20316742672306592,
                                 0.16007832854334622, 0.10693932599531843, 0.047175336386511828};

/* Partial sums of one chunk (or of all rows): sum a p_in, sum a e_min / 2, sum 2 a^2 dp_in,
 * sum a^2 de_min. */
typedef struct {
  double mu, N, dmu, dN;
} factor_sums;

static double std_normal_pdf(double x) {
  return inv_sqrt_2pi * exp(-0.5 * x * x);
}

/* One row: X ~ N(m, s^2), m >= 0, s > 0, window |X| <= b, b > 0 finite. Writes p_in, e_min and
 * their derivatives in s^2. */
static void row_moments(double m, double s, double b, double *p_in, double *e_min, double *dp_s2,
                        double *de) {
  const double al = (b - m) / s, be = (b + m) / s;
  const double pa = std_normal_pdf(al);
  const double ex = expm1(-2.0 * (b / s) * (m / s)); /* phi(beta) / phi(alpha) - 1 */
  const double pb = pa + pa * ex;
  /* alpha phi(alpha) + beta phi(beta) without cancellation */
  *dp_s2 = -0.5 * ((b / s) * (pa + pb) + (m / s) * pa * ex) / (s * s);
  if (b <= narrow_window * s) {
    /* nodes w = +-b x_i: the density (1/s) phi((w - m)/s) at both; de_min/ds^2 =
     * int_{-b}^{b} w (w - m) p(w) dw / s^2 (p_in - b [p(b) + p(-b)], integrated by parts) */
    double p = 0.0, q = 0.0, t = 0.0;
    for (size_t i = 0; i < 6; i++) {
      const double w = b * gl12_x[i];
      const double fp = std_normal_pdf((w - m) / s), fm = std_normal_pdf((w + m) / s);
      p += gl12_w[i] * (fp + fm);
      q += gl12_w[i] * w * w * (fp + fm);
      t += gl12_w[i] * w * ((w - m) * fp + (w + m) * fm);
    }
    *p_in = p * b / s;
    *e_min = b * b * (1.0 - *p_in) + q * b / s; /* p_in <= 0.04: no cancellation */
    *de = t * b / (s * s * s);
    return;
  }
  /* P(U > |alpha|) and P(U > beta) from erfc; p_in = P(-beta <= U <= alpha) */
  const double e1 = erfc(fabs(al) * inv_sqrt2), e2 = erfc(be * inv_sqrt2);
  const double qb = 0.5 * e2;
  double qa, pin;
  if (al >= 0.0) {
    qa = 0.5 * e1;
    pin = 1.0 - 0.5 * (e1 + e2);
  } else {
    qa = 1.0 - 0.5 * e1;
    pin = 0.5 * (e1 - e2);
  }
  *p_in = pin;
  if (pin <= 0.5) { /* mostly clipped */
    *e_min = b * b * (qa + qb) + (m * m + s * s) * pin - s * (s * al * pb + (m + b) * pa);
  } else { /* mostly inside: m^2 + s^2 minus the two tails' E[(X^2 - b^2) 1{...}] */
    const double excess = s * (s - al * (b + m)); /* m^2 + s^2 - b^2 */
    const double t_up = (qa > 0.0 ? excess * qa : 0.0) + s * (b + m) * pa;
    const double t_low = (qb > 0.0 ? excess * qb : 0.0) + s * s * al * pb;
    *e_min = m * m + s * s - t_up - t_low;
  }
  *de = pin - (b * (pa + pb)) / s;
}

/* row_moments for m = 0 (model targets: w ~ N(0, s^2)), alpha = beta = b/s: one erf or erfc and
 * one exp instead of two erfc, an exp and an expm1. */
static void row_moments_centred(double s, double b, double *p_in, double *e_min, double *dp_s2,
                                double *de) {
  const double al = b / s, x = al * inv_sqrt2, pa = std_normal_pdf(al);
  *dp_s2 = -al * pa / (s * s);
  if (b <= narrow_window * s) {
    double p = 0.0, q = 0.0; /* the symmetric density: the nodes +-w weigh alike */
    for (size_t i = 0; i < 6; i++) {
      const double w = b * gl12_x[i], fp = std_normal_pdf(w / s);
      p += gl12_w[i] * fp;
      q += gl12_w[i] * w * w * fp;
    }
    *p_in = 2.0 * p * b / s;
    *e_min = b * b * (1.0 - *p_in) + 2.0 * q * b / s;
    *de = 2.0 * q * b / (s * s * s); /* int w^2 p(w) dw / s^2 */
    return;
  }
  /* p_in = erf(x) and the two tails' mass e = erfc(x), whichever is the smaller computed */
  double pin, tails;
  if (x < 0.5) {
    pin = erf(x);
    tails = 1.0 - pin;
  } else {
    tails = erfc(x);
    pin = 1.0 - tails;
  }
  *p_in = pin;
  if (pin <= 0.5) {
    *e_min = b * b * tails + s * s * pin - 2.0 * s * b * pa;
  } else {
    const double excess = s * s - b * b;
    *e_min = s * s - (tails > 0.0 ? excess * tails : 0.0) - 2.0 * s * b * pa;
  }
  *de = pin - 2.0 * al * pa;
}

/* The sums over rows [lo, hi) at R (>= 0, finite), c finite. */
static void chunk_sums(const dpd__lrdata_factors_ctx *ctx, double R, size_t lo, size_t hi,
                       factor_sums *out) {
  const double *a = ctx->a, *z = ctx->z, c = ctx->c, two_r = 2.0 * R;
  double smu = 0.0, sn = 0.0, sdmu = 0.0, sdn = 0.0;
  for (size_t j = lo; j < hi; j++) {
    const double aj = a[j];
    if (!(aj > 0.0)) {
      continue;
    }
    const double m = z != NULL ? fabs(z[j]) : 0.0;
    const double s2 = z != NULL ? two_r * aj : two_r * aj + ctx->zeta2;
    const double b = c / sqrt(aj);
    double pin, emin, dpin, de;
    if (s2 > 0.0 && z == NULL) {
      row_moments_centred(sqrt(s2), b, &pin, &emin, &dpin, &de);
    } else if (s2 > 0.0) {
      row_moments(m, sqrt(s2), b, &pin, &emin, &dpin, &de);
    } else { /* the deterministic w = -z */
      pin = m <= b ? 1.0 : 0.0;
      emin = m < b ? m * m : b * b;
      dpin = 0.0;
      de = m < b ? 1.0 : 0.0;
    }
    smu += aj * pin;
    sn += aj * emin;
    sdmu += aj * aj * dpin;
    sdn += aj * aj * de;
  }
  out->mu = smu;
  out->N = 0.5 * sn;
  out->dmu = 2.0 * sdmu;
  out->dN = sdn;
}

/* The same without clipping (c = INFINITY): p_in = 1, e_min = m^2 + s^2, derivatives 0 and 1. */
static void chunk_sums_unclipped(const dpd__lrdata_factors_ctx *ctx, double R, size_t lo, size_t hi,
                                 factor_sums *out) {
  const double *a = ctx->a, *z = ctx->z, two_r = 2.0 * R;
  double smu = 0.0, sn = 0.0, sdn = 0.0;
  for (size_t j = lo; j < hi; j++) {
    const double aj = a[j];
    if (!(aj > 0.0)) {
      continue;
    }
    const double m2 = z != NULL ? z[j] * z[j] : ctx->zeta2;
    smu += aj;
    sn += aj * (m2 + two_r * aj);
    sdn += aj * aj;
  }
  out->mu = smu;
  out->N = 0.5 * sn;
  out->dmu = 0.0;
  out->dN = sdn;
}

int dpd__lrdata_factors(void *user, double c, double R, double *mu, double *nu, double *dmu_dR,
                        double *dnu_dR) {
  dpd__lrdata_factors_ctx local;
  const dpd__lrdata_factors_ctx *ctx = user;
  factor_sums part[FACTORS_MAXCHUNKS], tot = {0.0, 0.0, 0.0, 0.0};
  size_t chunk = FACTORS_CHUNK, nchunks;
  int threads;
  if (!(R >= 0.0) || !isfinite(R)) {
    return 1;
  }
  if (ctx == NULL || ctx->a == NULL || ctx->n == 0 || !(c > 0.0) || !(ctx->zeta2 >= 0.0) ||
      !isfinite(ctx->zeta2)) {
    return DPD_EINVAL;
  }
  local = *ctx; /* the call's c (the tuner varies it) */
  local.c = c;
  ctx = &local;
  if (ctx->n > (size_t)FACTORS_CHUNK * FACTORS_MAXCHUNKS) {
    chunk = (ctx->n + FACTORS_MAXCHUNKS - 1) / FACTORS_MAXCHUNKS;
  }
  nchunks = (ctx->n + chunk - 1) / chunk;
  threads = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
  if ((size_t)threads > nchunks) {
    threads = (int)nchunks;
  }
  const int clipped = isfinite(ctx->c);
#pragma omp parallel for num_threads(threads) schedule(static) if (nchunks > 1)
  for (size_t k = 0; k < nchunks; k++) {
    const size_t lo = k * chunk, hi = lo + chunk < ctx->n ? lo + chunk : ctx->n;
    if (clipped) {
      chunk_sums(ctx, R, lo, hi, &part[k]);
    } else {
      chunk_sums_unclipped(ctx, R, lo, hi, &part[k]);
    }
  }
  for (size_t k = 0; k < nchunks; k++) {
    tot.mu += part[k].mu;
    tot.N += part[k].N;
    tot.dmu += part[k].dmu;
    tot.dN += part[k].dN;
  }
  {
    const double inv_n = 1.0 / (double)ctx->n, P = R + 0.5 * ctx->zeta2;
    const double m = tot.mu * inv_n, N = tot.N * inv_n, dm = tot.dmu * inv_n, dN = tot.dN * inv_n;
    double v, dv;
    if (P > 0.0) {
      v = N / P;
      dv = (dN - v) / P;
    } else { /* R = 0, zeta = 0: the limit N/P -> dN/dR as R -> 0+ (N(0) = 0) */
      v = N > 0.0 ? INFINITY : dN;
      dv = 0.0;
    }
    if (mu != NULL) {
      *mu = m;
    }
    if (nu != NULL) {
      *nu = v;
    }
    if (dmu_dR != NULL) {
      *dmu_dR = dm;
    }
    if (dnu_dR != NULL) {
      *dnu_dR = dv;
    }
  }
  return 0;
}
