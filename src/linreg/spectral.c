/* Spectral compression of the risk ODE's groups (linreg.h, "Spectral compression").
 * SPDX-License-Identifier: MIT
 *
 * A band of the spectrum holding more distinct eigenvalues than `nodes` is replaced, for each of
 * the two measures (initial energy mu_0, forcing mu_f), by the Gauss rule of the measure
 * restricted to the band. The rule comes from 2 nodes modified moments against the Chebyshev
 * polynomials of the band's interval (Gautschi, "Orthogonal Polynomials: Computation and
 * Approximation", Oxford 2004, Sec. 2.1.7: the modified Chebyshev algorithm, well conditioned
 * for measures on a finite interval with Chebyshev moments) and the eigen-decomposition of its
 * Jacobi matrix (Golub & Welsch, Math. Comp. 23 (1969) 221; LAPACK dstev). Moments are linear in
 * the measure, so they are accumulated in one pass over the eigenvalues, or, for long power-law
 * bands, from Gregory's summation formula, which needs a fixed number of points per band. */
#include <gsl/gsl_integration.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/linreg.h"
#include "dpdyn/rng.h"

#define MAXN DPD_COMPRESS_MAX_NODES
#define MOMS (2 * MAXN)
/* Power-law bands with at least this first index and this many eigenvalues take their moments
 * from Gregory's formula; shorter or earlier ones are summed term by term. */
#define GREGORY_MIN_FIRST 2048
#define GREGORY_MIN_COUNT 4096
#define GL_POINTS 24 /* Gauss-Legendre points per piece of the integral in log i */
#define GL_RATIO 1.5 /* pieces span a factor of at most 1.5 in i */
#define CHUNK 4096   /* Gaussians of a random theta* drawn at a time (even: same stream) */

dpd_linreg_compress_config dpd_linreg_compress_config_default(void) {
  dpd_linreg_compress_config c;
  c.nodes = 6;
  c.bands_per_decade = 3;
  return c;
}

static int check_cc(const dpd_linreg_compress_config *cc, dpd_err *err) {
  if (cc->nodes < 1 || cc->nodes > MAXN) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'compress_nodes': %d (allowed: 1 .. %d)",
                    cc->nodes, MAXN);
  }
  if (cc->bands_per_decade < 1 || cc->bands_per_decade > 1000) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'compress_bands': %d (allowed: 1 .. 1000)",
                    cc->bands_per_decade);
  }
  return DPD_OK;
}

/* ---- Moments of one band ----------------------------------------------------------------------
 */

typedef struct {
  double lo, hi;    /* the band's interval (its smallest and largest eigenvalue) */
  int n;            /* moments 0 .. 2n - 1 */
  double mom[MOMS]; /* sum_i w_i T_k(x_i), x = (2 lambda - hi - lo) / (hi - lo) */
} band_mom;

static void mom_init(band_mom *b, double lo, double hi, int n) {
  memset(b, 0, sizeof *b);
  b->lo = lo;
  b->hi = hi;
  b->n = n;
}

static void mom_add(band_mom *b, double lambda, double w) {
  const double x = b->hi > b->lo ? (2.0 * lambda - b->hi - b->lo) / (b->hi - b->lo) : 0.0;
  double t0 = 1.0, t1 = x;
  b->mom[0] += w;
  b->mom[1] += w * x;
  for (int k = 2; k < 2 * b->n; k++) {
    const double t2 = 2.0 * x * t1 - t0;
    b->mom[k] += w * t2;
    t0 = t1;
    t1 = t2;
  }
}

/* The m-point Gauss rule of the band's measure from its first 2m Chebyshev moments (monic
 * Chebyshev recurrence a_k = 0, b_1 = 1/2, b_k = 1/4). Returns the number of nodes written to
 * x[], w[] (eigenvalue scale): m, or fewer when the recurrence breaks down (a measure
 * numerically supported on fewer points), down to the one-point rule at the mean. */
static int mom_gauss(const band_mom *b, double *x, double *w) {
  const double m0 = b->mom[0];
  if (!(m0 > 0.0)) {
    return 0;
  }
  for (int m = b->n; m >= 1; m--) {
    double nu[MOMS], alpha[MAXN], beta[MAXN], sprev[MOMS], scur[MOMS], snext[MOMS];
    double diag[MAXN], off[MAXN], z[MAXN * MAXN];
    int ok = 1;
    memset(snext, 0, sizeof snext);
    /* modified moments of the monic Chebyshev polynomials: T_k / 2^(k-1) */
    for (int k = 0; k < 2 * m; k++) {
      nu[k] = k == 0 ? b->mom[0] : ldexp(b->mom[k], 1 - k);
    }
    for (int l = 0; l < 2 * m; l++) {
      sprev[l] = 0.0;
      scur[l] = nu[l];
    }
    alpha[0] = nu[1] / nu[0];
    beta[0] = nu[0];
    for (int k = 1; k < m && ok; k++) {
      for (int l = k; l <= 2 * m - k - 1; l++) {
        const double bl = l == 1 ? 0.5 : 0.25;
        snext[l] = scur[l + 1] - alpha[k - 1] * scur[l] - beta[k - 1] * sprev[l] + bl * scur[l - 1];
      }
      alpha[k] = snext[k + 1] / snext[k] - scur[k] / scur[k - 1];
      beta[k] = snext[k] / scur[k - 1];
      ok = isfinite(alpha[k]) && beta[k] > 0.0 && isfinite(beta[k]);
      for (int l = 0; l < 2 * m; l++) {
        sprev[l] = scur[l];
        scur[l] = snext[l];
      }
    }
    if (!ok) {
      continue;
    }
    for (int k = 0; k < m; k++) {
      diag[k] = alpha[k];
      off[k] = k + 1 < m ? sqrt(beta[k + 1]) : 0.0;
    }
    if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', m, diag, off, z, m) != 0) {
      continue;
    }
    for (int k = 0; k < m && ok; k++) {
      const double weight = m0 * z[k * m] * z[k * m];
      ok = diag[k] > -1.0 - 1e-12 && diag[k] < 1.0 + 1e-12 && weight > 0.0;
      x[k] = 0.5 * ((b->hi - b->lo) * fmin(1.0, fmax(-1.0, diag[k])) + b->hi + b->lo);
      w[k] = weight;
    }
    if (ok) {
      return m;
    }
  }
  return 0; /* unreachable for m0 > 0: the one-point rule at the mean always exists */
}

/* ---- The spectral problem under construction ---------------------------------------------- */

typedef struct {
  size_t d;
  size_t n, cap;
  double *lambda, *mult, *S0, *tol;
  double init_total; /* R(0) = mu_0's total mass */
  size_t compressed_bands;
} builder;

static int builder_push(builder *bd, double lambda, double mult, double S0, double tol,
                        dpd_err *err) {
  if (bd->n == bd->cap) {
    size_t cap = bd->cap ? 2 * bd->cap : 256;
    double *a = realloc(bd->lambda, cap * sizeof *a), *b, *c, *e;
    if (a != NULL) {
      bd->lambda = a;
    }
    b = realloc(bd->mult, cap * sizeof *b);
    if (b != NULL) {
      bd->mult = b;
    }
    c = realloc(bd->S0, cap * sizeof *c);
    if (c != NULL) {
      bd->S0 = c;
    }
    e = realloc(bd->tol, cap * sizeof *e);
    if (e != NULL) {
      bd->tol = e;
    }
    if (a == NULL || b == NULL || c == NULL || e == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the compressed spectrum");
    }
    bd->cap = cap;
  }
  bd->lambda[bd->n] = lambda;
  bd->mult[bd->n] = mult;
  bd->S0[bd->n] = S0;
  bd->tol[bd->n] = tol;
  bd->n++;
  return DPD_OK;
}

static void builder_free(builder *bd) {
  free(bd->lambda);
  free(bd->mult);
  free(bd->S0);
  free(bd->tol);
}

/* The Gauss nodes of the two measures of one band become groups. The tolerance share of an
 * initial-energy node is d times its share of R(0), that of a forcing node its multiplicity;
 * both halved, so that all nodes together keep the uncompressed budget (about atol on R). The
 * initial-energy shares are fixed after the last band (builder_finish), when R(0) is known. */
static int band_emit(builder *bd, const band_mom *init, const band_mom *force, dpd_err *err) {
  double x[MAXN], w[MAXN];
  const double d = (double)bd->d;
  int m, status;
  m = mom_gauss(force, x, w);
  for (int k = 0; k < m; k++) {
    const double mult = d * w[k] / x[k];
    if ((status = builder_push(bd, x[k], mult, 0.0, 0.5 * mult, err)) < 0) {
      return status;
    }
  }
  m = mom_gauss(init, x, w);
  for (int k = 0; k < m; k++) {
    if ((status = builder_push(bd, x[k], 0.0, d * w[k] / x[k], -w[k], err)) < 0) {
      return status;
    }
  }
  bd->compressed_bands++;
  return DPD_OK;
}

/* An exact group (one distinct eigenvalue with its multiplicity and initial energy). */
static int group_emit(builder *bd, double lambda, double mult, double S0, dpd_err *err) {
  return builder_push(bd, lambda, mult, S0, mult, err);
}

static int builder_finish(builder *bd, const dpd_linreg_compress_config *cc, double lambda_min,
                          double lambda_max, dpd_linreg_problem **out, dpd_err *err) {
  dpd_linreg_problem *p = calloc(1, sizeof *p);
  double r0 = 0.0, sq = 0.0;
  if (p == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the compressed spectrum");
  }
  for (size_t j = 0; j < bd->n; j++) {
    r0 += bd->lambda[j] * bd->S0[j];
    sq += bd->lambda[j] * bd->lambda[j] * bd->mult[j];
  }
  r0 /= (double)bd->d;
  for (size_t j = 0; j < bd->n; j++) {
    if (bd->tol[j] < 0.0) { /* an initial-energy node: -W, its mass */
      bd->tol[j] = r0 > 0.0 ? 0.5 * (double)bd->d * (-bd->tol[j]) / r0 : 0.0;
    }
  }
  p->d = bd->d;
  p->spectral = 1;
  p->ngroups = bd->n;
  p->group_lambda = bd->lambda;
  p->group_mult = bd->mult;
  p->group_S0 = bd->S0;
  p->group_tol = bd->tol;
  p->lambda_min = lambda_min;
  p->lambda_max = lambda_max;
  p->mean_lambda_sq = sq / (double)bd->d;
  p->isotropic = lambda_min == 1.0 && lambda_max == 1.0;
  p->compressed_bands = bd->compressed_bands;
  p->nodes_per_band = bd->compressed_bands > 0 ? cc->nodes : 0;
  memset(bd, 0, sizeof *bd);
  *out = p;
  return DPD_OK;
}

/* Band of an eigenvalue: floor(B log10(lambda_max / lambda)). */
static long band_of(double lambda, double lambda_max, int bpd) {
  const double k = floor((double)bpd * log10(lambda_max / lambda));
  if (!(k < 1e15)) { /* lambda = 0 (an underflowed eigenvalue) or NaN: a band of its own */
    return LONG_MAX;
  }
  return k > 0.0 ? (long)k : 0;
}

/* ---- From a built problem ------------------------------------------------------------------ */

int dpd_linreg_problem_compress(const dpd_linreg_problem *p, const dpd_linreg_compress_config *cc,
                                dpd_linreg_problem **out, dpd_err *err) {
  builder bd;
  int status;
  size_t j = 0, m = p->ngroups;
  *out = NULL;
  if ((status = check_cc(cc, err)) < 0) {
    return status;
  }
  memset(&bd, 0, sizeof bd);
  bd.d = p->d;
  while (j < m) {
    /* groups are in non-increasing order of lambda: a band is a run of consecutive groups */
    const long band = band_of(p->group_lambda[j], p->lambda_max, cc->bands_per_decade);
    size_t e = j + 1;
    while (e < m && band_of(p->group_lambda[e], p->lambda_max, cc->bands_per_decade) == band) {
      e++;
    }
    if (e - j <= (size_t)cc->nodes) {
      for (size_t g = j; g < e; g++) {
        if ((status = group_emit(&bd, p->group_lambda[g], p->group_mult[g], p->group_S0[g], err)) <
            0) {
          goto fail;
        }
      }
    } else {
      band_mom init, force;
      const double inv_d = 1.0 / (double)p->d;
      mom_init(&init, p->group_lambda[e - 1], p->group_lambda[j], cc->nodes);
      mom_init(&force, p->group_lambda[e - 1], p->group_lambda[j], cc->nodes);
      for (size_t g = j; g < e; g++) {
        const double lam = p->group_lambda[g];
        mom_add(&init, lam, lam * p->group_S0[g] * inv_d);
        mom_add(&force, lam, lam * p->group_mult[g] * inv_d);
      }
      if ((status = band_emit(&bd, &init, &force, err)) < 0) {
        goto fail;
      }
    }
    j = e;
  }
  return builder_finish(&bd, cc, p->lambda_min, p->lambda_max, out, err);
fail:
  builder_free(&bd);
  return status;
}

/* ---- Straight from a configuration ---------------------------------------------------------- */

/* Gregory's formula for sum_{i=a}^{b} g(i) (b - a >= 12) as a fixed set of points x_q with
 * coefficients c_q: the integral of g over [a, b] by Gauss-Legendre in log x (pieces of ratio
 * <= GL_RATIO), plus (g(a) + g(b))/2 and the difference corrections
 * G_1 (nabla g_b - Delta g_a) + G_2 (nabla^2 g_b + Delta^2 g_a) + ... + G_5 (nabla^5 g_b - Delta^5
 * g_a) with G = 1/12, 1/24, 19/720, 3/160, 863/60480. visit(x, c, user) is called for each point.
 */
typedef void (*point_fn)(double x, double c, void *user);

static void gregory_points(double a, double b, const gsl_integration_glfixed_table *gl,
                           point_fn visit, void *user) {
  static const double G[5] = {1.0 / 12.0, 1.0 / 24.0, 19.0 / 720.0, 3.0 / 160.0, 863.0 / 60480.0};
  double cl[6] = {0.5, 0, 0, 0, 0, 0}, cr[6] = {0.5, 0, 0, 0, 0, 0};
  const double la = log(a), lb = log(b);
  const int pieces = (int)ceil((lb - la) / log(GL_RATIO));
  for (int p = 0; p < pieces; p++) {
    const double u0 = la + (lb - la) * p / pieces, u1 = la + (lb - la) * (p + 1) / pieces;
    for (size_t i = 0; i < GL_POINTS; i++) {
      double u, wu;
      gsl_integration_glfixed_point(u0, u1, i, &u, &wu, gl);
      const double x = exp(u);
      visit(x, wu * x, user);
    }
  }
  /* Delta^k g_a = sum_j (-1)^(k-j) C(k, j) g_{a+j}; nabla^k g_b = sum_j (-1)^j C(k, j) g_{b-j} */
  for (int k = 1; k <= 5; k++) {
    double binom = 1.0;
    const double sl = (k % 2 == 1) ? -1.0 : 1.0; /* the sign of the Delta term */
    for (int j = 0; j <= k; j++) {
      cl[j] += sl * G[k - 1] * (((k - j) % 2) ? -binom : binom);
      cr[j] += G[k - 1] * ((j % 2) ? -binom : binom);
      binom = binom * (double)(k - j) / (double)(j + 1);
    }
  }
  for (int j = 0; j < 6; j++) {
    visit(a + j, cl[j], user);
    visit(b - j, cr[j], user);
  }
}

typedef struct {
  double alpha, scale;   /* lambda(i) = scale i^-alpha */
  double inv_d, S0_each; /* flat theta*: S_0 of each eigenvalue */
  band_mom *init, *force;
  double sum; /* for the normaliser */
} pl_visit;

static void visit_norm(double x, double c, void *user) {
  pl_visit *v = user;
  v->sum += c * pow(x, -v->alpha);
}

static void visit_moments(double x, double c, void *user) {
  pl_visit *v = user;
  const double lam = v->scale * pow(x, -v->alpha);
  mom_add(v->force, lam, c * lam * v->inv_d);
  if (v->init != NULL) {
    mom_add(v->init, lam, c * lam * v->S0_each * v->inv_d);
  }
}

/* sum_{i=1}^{d} i^-alpha: terms up to GREGORY_MIN_COUNT summed from the smallest, the rest by
 * Gregory's formula. */
static double powerlaw_norm(size_t d, double alpha, const gsl_integration_glfixed_table *gl) {
  pl_visit v;
  size_t head = d <= 2 * GREGORY_MIN_COUNT ? d : GREGORY_MIN_COUNT;
  double s = 0.0;
  memset(&v, 0, sizeof v);
  v.alpha = alpha;
  if (head < d) {
    gregory_points((double)(head + 1), (double)d, gl, visit_norm, &v);
  }
  for (size_t i = head; i >= 1; i--) {
    s += pow((double)i, -alpha);
  }
  return s + v.sum;
}

/* The d Gaussians of a random theta*, in order, CHUNK at a time (the draws of
 * dpd_linreg_problem_create: one stream, consumed in index order). */
typedef struct {
  dpd_rng rng;
  double buf[CHUNK];
  size_t have, next, left;
} gauss_stream;

static double gauss_next(gauss_stream *g) {
  if (g->next == g->have) {
    g->have = g->left < CHUNK ? g->left : CHUNK;
    dpd_rng_gaussian_fill(&g->rng, g->buf, g->have);
    g->left -= g->have;
    g->next = 0;
  }
  return g->buf[g->next++];
}

static int levels_sorted(const dpd_linreg_problem_config *cfg, double **vals, double **mults,
                         size_t *count, dpd_err *err);

int dpd_linreg_problem_create_spectral(const dpd_linreg_problem_config *cfg,
                                       const dpd_linreg_compress_config *cc,
                                       dpd_linreg_problem **out, dpd_err *err) {
  builder bd;
  int status = DPD_OK;
  const size_t d = cfg->d;
  const int random = cfg->theta == DPD_THETA_RANDOM;
  const double dd = (double)d, norm2 = cfg->theta_norm * cfg->theta_norm;
  gauss_stream *gs = NULL;
  double g2sum = 0.0, lambda_min, lambda_max;
  *out = NULL;
  if ((status = check_cc(cc, err)) < 0) {
    return status;
  }
  if (d == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'd': 0 (allowed: integer >= 1)");
  }
  if (cfg->theta != DPD_THETA_RANDOM && cfg->theta != DPD_THETA_FLAT) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta_star': a given vector (allowed here: random, flat; "
                    "build the problem and compress it)");
  }
  if (!(cfg->theta_norm > 0.0) || !isfinite(cfg->theta_norm)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'theta_norm': %g (allowed: finite, > 0)",
                    cfg->theta_norm);
  }
  memset(&bd, 0, sizeof bd);
  bd.d = d;
  if (random) {
    if ((gs = malloc(sizeof *gs)) == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    dpd_rng_init(&gs->rng, cfg->seed, DPD_RNG_STREAM_PROBLEM);
    gs->have = gs->next = 0;
    gs->left = d;
  }
  if (cfg->spectrum == DPD_SPECTRUM_POWERLAW) {
    gsl_integration_glfixed_table *gl;
    double H;
    if (!(cfg->alpha > 0.0) || !isfinite(cfg->alpha)) {
      free(gs);
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': powerlaw exponent %g (allowed: finite, > 0)",
                      cfg->alpha);
    }
    if ((gl = gsl_integration_glfixed_table_alloc(GL_POINTS)) == NULL) {
      free(gs);
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    if (cfg->alpha * log10(dd) > 250.0) {
      gsl_integration_glfixed_table_free(gl);
      free(gs);
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': powerlaw exponent %g spans a factor d^alpha "
                      "above 1e250 (allowed here: alpha log10(d) <= 250; build the problem and "
                      "compress it)",
                      cfg->alpha);
    }
    H = powerlaw_norm(d, cfg->alpha, gl);
    const double scale = dd / H, ba = (double)cc->bands_per_decade * cfg->alpha;
    lambda_max = scale;
    lambda_min = scale * pow(dd, -cfg->alpha);
    /* The band of index i is k = floor(B alpha log10 i); it holds [i, ceil(10^((k+1)/(B alpha))))
     * (at least i itself). */
    size_t i = 1;
    while (i <= d) {
      const double edge = ceil(pow(10.0, (floor(ba * log10((double)i)) + 1.0) / ba));
      size_t e = edge > dd ? d + 1 : (size_t)edge;
      if (e <= i) {
        e = i + 1;
      }
      const size_t count = e - i;
      if (count <= (size_t)cc->nodes) {
        for (size_t q = i; q < e; q++) {
          const double th2 = random ? gauss_next(gs) : 1.0;
          g2sum += th2 * th2;
          /* S_0 of a random theta* is scaled once the norm of the draw is known */
          status = group_emit(&bd, scale * pow((double)q, -cfg->alpha), 1.0,
                              random ? th2 * th2 : 0.5 * norm2, err);
          if (status < 0) {
            break;
          }
        }
      } else {
        band_mom init, force;
        pl_visit v;
        const double hi = scale * pow((double)i, -cfg->alpha),
                     lo = scale * pow((double)(e - 1), -cfg->alpha);
        mom_init(&init, lo, hi, cc->nodes);
        mom_init(&force, lo, hi, cc->nodes);
        memset(&v, 0, sizeof v);
        v.alpha = cfg->alpha;
        v.scale = scale;
        v.inv_d = 1.0 / dd;
        v.S0_each = 0.5 * norm2;
        v.force = &force;
        v.init = random ? NULL : &init;
        if (i >= GREGORY_MIN_FIRST && count >= GREGORY_MIN_COUNT) {
          gregory_points((double)i, (double)(e - 1), gl, visit_moments, &v);
        } else {
          for (size_t q = i; q < e; q++) {
            visit_moments((double)q, 1.0, &v);
          }
        }
        if (random) { /* S_0 = g_i^2 for now (d/2 theta_i^2 once the norm is known) */
          for (size_t q = i; q < e; q++) {
            const double g = gauss_next(gs), lam = scale * pow((double)q, -cfg->alpha);
            g2sum += g * g;
            mom_add(&init, lam, lam * g * g / dd);
          }
        }
        status = band_emit(&bd, &init, &force, err);
      }
      if (status < 0) {
        break;
      }
      i = e;
    }
    gsl_integration_glfixed_table_free(gl);
    if (status < 0) {
      goto fail;
    }
  } else if (cfg->spectrum == DPD_SPECTRUM_ISO || cfg->spectrum == DPD_SPECTRUM_LEVELS) {
    double *vals = NULL, *mults = NULL;
    size_t count = 0;
    if (cfg->spectrum == DPD_SPECTRUM_ISO) {
      if ((status = group_emit(&bd, 1.0, dd, 0.0, err)) < 0) {
        goto fail;
      }
      lambda_min = lambda_max = 1.0;
      count = 1;
    } else {
      double sum = 0.0;
      if ((status = levels_sorted(cfg, &vals, &mults, &count, err)) < 0) {
        goto fail;
      }
      /* relative to the largest, so that values near the ends of the double range stay finite */
      for (size_t k = count; k-- > 0;) {
        vals[k] /= vals[0];
        sum += vals[k] * mults[k];
      }
      lambda_max = vals[0] * dd / sum;
      lambda_min = vals[count - 1] * dd / sum;
      for (size_t k = 0; k < count; k++) {
        if ((status = group_emit(&bd, vals[k] * dd / sum, mults[k], 0.0, err)) < 0) {
          break;
        }
      }
      free(vals);
      free(mults);
      if (status < 0) {
        goto fail;
      }
    }
    for (size_t k = 0; k < count; k++) {
      double s = 0.5 * norm2 * bd.mult[k];
      if (random) {
        s = 0.0;
        for (size_t q = 0; q < (size_t)bd.mult[k]; q++) {
          const double g = gauss_next(gs);
          s += g * g;
        }
        g2sum += s;
      }
      bd.S0[k] = s;
    }
  } else {
    free(gs);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': kind %d (allowed here: iso, levels, powerlaw; "
                    "build the problem and compress it)",
                    (int)cfg->spectrum);
  }
  if (random) {
    /* theta_i = norm g_i / |g|: S_0 = (d/2) theta_i^2 = (d/2) norm^2 g_i^2 / |g|^2; the random
     * band moments hold lambda g^2 / d and are scaled alike (the nodes scale linearly). */
    const double f = 0.5 * dd * norm2 / g2sum;
    for (size_t j = 0; j < bd.n; j++) {
      bd.S0[j] *= f;
      if (bd.tol[j] < 0.0) {
        bd.tol[j] *= f;
      }
    }
  }
  free(gs);
  return builder_finish(&bd, cc, lambda_min, lambda_max, out, err);
fail:
  free(gs);
  builder_free(&bd);
  return status;
}

typedef struct {
  double v, m;
} vm_pair;

static int vm_desc(const void *a, const void *b) {
  const double x = ((const vm_pair *)a)->v, y = ((const vm_pair *)b)->v;
  return (x < y) - (x > y);
}

/* The levels in non-increasing order, equal values merged (the groups of
 * dpd_linreg_problem_create), validated as there. */
static int levels_sorted(const dpd_linreg_problem_config *cfg, double **vals, double **mults,
                         size_t *count, dpd_err *err) {
  size_t total = 0, n = 0;
  vm_pair *p;
  if (cfg->nvalues == 0 || cfg->values == NULL || cfg->mult == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': no eigenvalues given (allowed: >= 1)");
  }
  if ((p = malloc(cfg->nvalues * sizeof *p)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < cfg->nvalues; k++) {
    if (!(cfg->values[k] > 0.0) || !isfinite(cfg->values[k]) || cfg->mult[k] == 0) {
      free(p);
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': eigenvalue %g with multiplicity %zu "
                      "(allowed: finite eigenvalue > 0, multiplicity >= 1)",
                      cfg->values[k], cfg->mult[k]);
    }
    total += cfg->mult[k];
    p[k].v = cfg->values[k];
    p[k].m = (double)cfg->mult[k];
  }
  if (total != cfg->d) {
    free(p);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': multiplicities sum to %zu but d = %zu (allowed: "
                    "sum equal to d)",
                    total, cfg->d);
  }
  qsort(p, cfg->nvalues, sizeof *p, vm_desc);
  for (size_t k = 0; k < cfg->nvalues; k++) {
    if (n > 0 && p[n - 1].v == p[k].v) {
      p[n - 1].m += p[k].m;
    } else {
      p[n++] = p[k];
    }
  }
  *vals = malloc(n * sizeof **vals);
  *mults = malloc(n * sizeof **mults);
  if (*vals == NULL || *mults == NULL) {
    free(*vals);
    free(*mults);
    free(p);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < n; k++) {
    (*vals)[k] = p[k].v;
    (*mults)[k] = p[k].m;
  }
  *count = n;
  free(p);
  return DPD_OK;
}
