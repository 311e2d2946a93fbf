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
#include <omp.h>
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

/* ---- The spectrum: bands with their exact eigenvalues or their moments ---------------------- */

typedef struct {
  double lo, hi;             /* the band's smallest and largest eigenvalue */
  size_t count;              /* distinct eigenvalues in the band */
  size_t atom0;              /* count <= max_nodes: index of its first atom (kept exactly) */
  double mi[MOMS], mf[MOMS]; /* count > max_nodes: Chebyshev moments of mu_0 and mu_f */
} band_rec;

struct dpd_linreg_spectrum {
  size_t d;
  int max_nodes, bpd;
  double lambda_min, lambda_max;
  size_t nbands, cap_bands;
  band_rec *bands;
  size_t natoms, cap_atoms;
  double *alam, *amult, *aS0; /* the exact atoms: eigenvalue, multiplicity, S_0 */
};

void dpd_linreg_spectrum_free(dpd_linreg_spectrum *s) {
  if (s != NULL) {
    free(s->bands);
    free(s->alam);
    free(s->amult);
    free(s->aS0);
    free(s);
  }
}

static int spec_new(size_t d, const dpd_linreg_compress_config *cc, dpd_linreg_spectrum **out,
                    dpd_err *err) {
  int status;
  *out = NULL;
  if ((status = check_cc(cc, err)) < 0) {
    return status;
  }
  if ((*out = calloc(1, sizeof **out)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the spectrum");
  }
  (*out)->d = d;
  (*out)->max_nodes = cc->nodes;
  (*out)->bpd = cc->bands_per_decade;
  return DPD_OK;
}

/* A new band (zeroed moments); NULL when out of memory. */
static band_rec *spec_band(dpd_linreg_spectrum *s, double lo, double hi, size_t count) {
  band_rec *b;
  if (s->nbands == s->cap_bands) {
    size_t cap = s->cap_bands ? 2 * s->cap_bands : 64;
    band_rec *nb = realloc(s->bands, cap * sizeof *nb);
    if (nb == NULL) {
      return NULL;
    }
    s->bands = nb;
    s->cap_bands = cap;
  }
  b = &s->bands[s->nbands++];
  memset(b, 0, sizeof *b);
  b->lo = lo;
  b->hi = hi;
  b->count = count;
  b->atom0 = s->natoms;
  return b;
}

/* Appends one value to each of `k` parallel arrays of length *n, doubling their capacity *cap
 * when full (the arrays keep their contents when a realloc fails). */
static int push_parallel(double **arrays[], const double *values, int k, size_t *n, size_t *cap) {
  if (*n == *cap) {
    const size_t c = *cap ? 2 * *cap : 256;
    int ok = 1;
    for (int a = 0; a < k; a++) {
      double *grown = realloc(*arrays[a], c * sizeof *grown);
      if (grown == NULL) {
        ok = 0;
      } else {
        *arrays[a] = grown;
      }
    }
    if (!ok) {
      return DPD_ENOMEM;
    }
    *cap = c;
  }
  for (int a = 0; a < k; a++) {
    (*arrays[a])[*n] = values[a];
  }
  (*n)++;
  return DPD_OK;
}

static int spec_atom(dpd_linreg_spectrum *s, double lambda, double mult, double S0) {
  double **arrays[3] = {&s->alam, &s->amult, &s->aS0};
  const double v[3] = {lambda, mult, S0};
  return push_parallel(arrays, v, 3, &s->natoms, &s->cap_atoms);
}

/* ---- The spectral problem of a spectrum at `nodes` per band ------------------------------- */

typedef struct {
  size_t d;
  size_t n, cap;
  double *lambda, *mult, *S0, *tol;
  size_t compressed_bands;
} builder;

static int builder_push(builder *bd, double lambda, double mult, double S0, double tol) {
  double **arrays[4] = {&bd->lambda, &bd->mult, &bd->S0, &bd->tol};
  const double v[4] = {lambda, mult, S0, tol};
  return push_parallel(arrays, v, 4, &bd->n, &bd->cap);
}

/* The Gauss nodes of the two measures of one band become groups. The tolerance share of a
 * forcing node is half its multiplicity; that of an initial-energy node, d/2 times its share of
 * R(0), set once R(0) is known (here -W, its mass). Together they keep the uncompressed budget of
 * about atol on R. */
static int band_emit(builder *bd, const band_mom *init, const band_mom *force) {
  double x[MAXN], w[MAXN];
  const double d = (double)bd->d;
  int m = mom_gauss(force, x, w);
  for (int k = 0; k < m; k++) {
    const double mult = d * w[k] / x[k];
    if (builder_push(bd, x[k], mult, 0.0, 0.5 * mult) < 0) {
      return DPD_ENOMEM;
    }
  }
  m = mom_gauss(init, x, w);
  for (int k = 0; k < m; k++) {
    if (builder_push(bd, x[k], 0.0, d * w[k] / x[k], -w[k]) < 0) {
      return DPD_ENOMEM;
    }
  }
  bd->compressed_bands++;
  return DPD_OK;
}

int dpd_linreg_spectrum_problem(const dpd_linreg_spectrum *s, int nodes, dpd_linreg_problem **out,
                                dpd_err *err) {
  builder bd;
  dpd_linreg_problem *p;
  const double inv_d = 1.0 / (double)s->d;
  double r0 = 0.0, sq = 0.0;
  *out = NULL;
  if (nodes < 1 || nodes > s->max_nodes) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'compress_nodes': %d (allowed: 1 .. %d, the nodes this "
                    "spectrum was built for)",
                    nodes, s->max_nodes);
  }
  memset(&bd, 0, sizeof bd);
  bd.d = s->d;
  for (size_t k = 0; k < s->nbands; k++) {
    const band_rec *b = &s->bands[k];
    int st = DPD_OK;
    if (b->count <= (size_t)nodes) {
      for (size_t a = b->atom0; a < b->atom0 + b->count && st == DPD_OK; a++) {
        st = builder_push(&bd, s->alam[a], s->amult[a], s->aS0[a], s->amult[a]);
      }
    } else {
      band_mom init, force;
      mom_init(&init, b->lo, b->hi, nodes);
      mom_init(&force, b->lo, b->hi, nodes);
      if (b->count <= (size_t)s->max_nodes) { /* kept exactly: moments from the atoms */
        for (size_t a = b->atom0; a < b->atom0 + b->count; a++) {
          mom_add(&init, s->alam[a], s->alam[a] * s->aS0[a] * inv_d);
          mom_add(&force, s->alam[a], s->alam[a] * s->amult[a] * inv_d);
        }
      } else {
        memcpy(init.mom, b->mi, 2 * (size_t)nodes * sizeof *init.mom);
        memcpy(force.mom, b->mf, 2 * (size_t)nodes * sizeof *force.mom);
      }
      st = band_emit(&bd, &init, &force);
    }
    if (st < 0) {
      free(bd.lambda);
      free(bd.mult);
      free(bd.S0);
      free(bd.tol);
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the compressed spectrum");
    }
  }
  if ((p = calloc(1, sizeof *p)) == NULL) {
    free(bd.lambda);
    free(bd.mult);
    free(bd.S0);
    free(bd.tol);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the compressed spectrum");
  }
  for (size_t j = 0; j < bd.n; j++) {
    r0 += bd.lambda[j] * bd.S0[j];
    sq += bd.lambda[j] * bd.lambda[j] * bd.mult[j];
  }
  r0 *= inv_d;
  for (size_t j = 0; j < bd.n; j++) {
    if (bd.tol[j] < 0.0) {
      bd.tol[j] = r0 > 0.0 ? 0.5 * (double)bd.d * (-bd.tol[j]) / r0 : 0.0;
    }
  }
  p->d = s->d;
  p->spectral = 1;
  p->ngroups = bd.n;
  p->group_lambda = bd.lambda;
  p->group_mult = bd.mult;
  p->group_S0 = bd.S0;
  p->group_tol = bd.tol;
  p->lambda_min = s->lambda_min;
  p->lambda_max = s->lambda_max;
  p->mean_lambda_sq = sq * inv_d;
  p->isotropic = s->lambda_min == 1.0 && s->lambda_max == 1.0;
  p->compressed_bands = bd.compressed_bands;
  p->nodes_per_band = bd.compressed_bands > 0 ? nodes : 0;
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

int dpd_linreg_spectrum_from_problem(const dpd_linreg_problem *p,
                                     const dpd_linreg_compress_config *cc,
                                     dpd_linreg_spectrum **out, dpd_err *err) {
  dpd_linreg_spectrum *s;
  int status;
  size_t j = 0, m = p->ngroups;
  const double inv_d = 1.0 / (double)p->d;
  if ((status = spec_new(p->d, cc, out, err)) < 0) {
    return status;
  }
  s = *out;
  s->lambda_min = p->lambda_min;
  s->lambda_max = p->lambda_max;
  while (j < m) {
    /* groups are in non-increasing order of lambda: a band is a run of consecutive groups */
    const long band = band_of(p->group_lambda[j], p->lambda_max, cc->bands_per_decade);
    size_t e = j + 1;
    band_rec *b;
    while (e < m && band_of(p->group_lambda[e], p->lambda_max, cc->bands_per_decade) == band) {
      e++;
    }
    if ((b = spec_band(s, p->group_lambda[e - 1], p->group_lambda[j], e - j)) == NULL) {
      goto nomem;
    }
    if (e - j <= (size_t)cc->nodes) {
      for (size_t g = j; g < e; g++) {
        if (spec_atom(s, p->group_lambda[g], p->group_mult[g], p->group_S0[g]) < 0) {
          goto nomem;
        }
      }
    } else {
      band_mom init, force;
      mom_init(&init, b->lo, b->hi, cc->nodes);
      mom_init(&force, b->lo, b->hi, cc->nodes);
      for (size_t g = j; g < e; g++) {
        const double lam = p->group_lambda[g];
        mom_add(&init, lam, lam * p->group_S0[g] * inv_d);
        mom_add(&force, lam, lam * p->group_mult[g] * inv_d);
      }
      memcpy(b->mi, init.mom, sizeof b->mi);
      memcpy(b->mf, force.mom, sizeof b->mf);
    }
    j = e;
  }
  return DPD_OK;
nomem:
  dpd_linreg_spectrum_free(s);
  *out = NULL;
  return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the spectrum");
}

int dpd_linreg_problem_compress(const dpd_linreg_problem *p, const dpd_linreg_compress_config *cc,
                                dpd_linreg_problem **out, dpd_err *err) {
  dpd_linreg_spectrum *s = NULL;
  int status;
  *out = NULL;
  if ((status = dpd_linreg_spectrum_from_problem(p, cc, &s, err)) < 0) {
    return status;
  }
  status = dpd_linreg_spectrum_problem(s, cc->nodes, out, err);
  dpd_linreg_spectrum_free(s);
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

/* The Gaussians number first .. first + count - 1 (0-based) of the stream of a random theta*
 * (the draws of dpd_linreg_problem_create): the counter jumps to the pair holding `first`.
 * buf holds count + 1 doubles; returns a pointer to the first. */
static const double *gauss_range(uint64_t seed, size_t first, size_t count, double *buf) {
  dpd_rng rng;
  dpd_rng_init(&rng, seed, DPD_RNG_STREAM_PROBLEM);
  rng.counter = (uint64_t)(first / 2);
  dpd_rng_gaussian_fill(&rng, buf, count + (first % 2));
  return buf + (first % 2);
}

/* Adds sum_q w_q T_k(x_q), k < nm, over n points to mom (vector loops over the points; the order
 * of the additions depends only on n). t0, t1 are work arrays of n doubles; x is overwritten by
 * the map to [-1, 1]. */
static void cheb_moments(double *x, const double *w, size_t n, double lo, double hi, int nm,
                         double *t0, double *t1, double *mom) {
  const double a = hi > lo ? 2.0 / (hi - lo) : 0.0, c = hi > lo ? (hi + lo) / (hi - lo) : 0.0;
  double s0 = 0.0, s1 = 0.0;
#pragma omp simd reduction(+ : s0, s1)
  for (size_t q = 0; q < n; q++) {
    x[q] = a * x[q] - c;
    t0[q] = 1.0;
    t1[q] = x[q];
    s0 += w[q];
    s1 += w[q] * x[q];
  }
  mom[0] += s0;
  mom[1] += s1;
  for (int k = 2; k < nm; k++) {
    double sk = 0.0;
#pragma omp simd reduction(+ : sk)
    for (size_t q = 0; q < n; q++) {
      const double t2 = 2.0 * x[q] * t1[q] - t0[q];
      t0[q] = t1[q];
      t1[q] = t2;
      sk += w[q] * t2;
    }
    mom[k] += sk;
  }
}

/* The initial-energy moments of the power-law band [i, e) (1-based indices) for a random theta*,
 * with weights lambda_q g_q^2 / d (scaled to theta_norm once |g| is known), and sum g_q^2: in
 * chunks aligned to multiples of RCHUNK of the global index, on `threads` threads, the partial
 * sums of the chunks added in chunk order (the same bits for any thread count). */
#define RCHUNK 65536
#define CHEB_BLOCK 512
static int random_band(uint64_t seed, double scale, double alpha, size_t d, size_t i, size_t e,
                       double lo, double hi, int nm, int threads, double *mom, double *g2) {
  const size_t z0 = i - 1, z1 = e - 1, c0 = z0 / RCHUNK, c1 = (z1 - 1) / RCHUNK;
  const size_t nch = c1 - c0 + 1;
  double *part = calloc(nch * (MOMS + 1), sizeof *part);
  int failed = 0;
  if (part == NULL) {
    return DPD_ENOMEM;
  }
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads())
  {
    double *buf = malloc((4 * RCHUNK + 1) * sizeof *buf);
    double *x = buf != NULL ? buf + RCHUNK + 1 : NULL, *w = x != NULL ? x + RCHUNK : NULL;
    double *t0 = w != NULL ? w + RCHUNK : NULL, *t1 = NULL;
    double *t1buf = malloc(RCHUNK * sizeof *t1buf);
    t1 = t1buf;
#pragma omp for schedule(static)
    for (size_t c = 0; c < nch; c++) {
      if (buf == NULL || t1buf == NULL) {
#pragma omp atomic write
        failed = 1;
      } else {
        const size_t a = (c0 + c) * RCHUNK > z0 ? (c0 + c) * RCHUNK : z0;
        const size_t b = (c0 + c + 1) * RCHUNK < z1 ? (c0 + c + 1) * RCHUNK : z1;
        const double *g = gauss_range(seed, a, b - a, buf);
        double *pc = part + c * (MOMS + 1), s2 = 0.0;
        for (size_t q = 0; q < b - a; q++) {
          const double lam = scale * exp(-alpha * log((double)(a + q + 1)));
          x[q] = lam;
          w[q] = lam * g[q] * g[q] / (double)d;
          s2 += g[q] * g[q];
        }
        for (size_t o = 0; o < b - a; o += CHEB_BLOCK) { /* blocks that stay in L1 */
          const size_t len = b - a - o < CHEB_BLOCK ? b - a - o : CHEB_BLOCK;
          cheb_moments(x + o, w + o, len, lo, hi, nm, t0, t1, pc);
        }
        pc[MOMS] = s2;
      }
    }
    free(buf);
    free(t1buf);
  }
  if (!failed) {
    for (size_t c = 0; c < nch; c++) {
      for (int k = 0; k < nm; k++) {
        mom[k] += part[c * (MOMS + 1) + k];
      }
      *g2 += part[c * (MOMS + 1) + MOMS];
    }
  }
  free(part);
  return failed ? DPD_ENOMEM : DPD_OK;
}

static int levels_sorted(const dpd_linreg_problem_config *cfg, double **vals, double **mults,
                         size_t *count, dpd_err *err);

int dpd_linreg_spectrum_from_config(const dpd_linreg_problem_config *cfg,
                                    const dpd_linreg_compress_config *cc, int threads,
                                    dpd_linreg_spectrum **out, dpd_err *err) {
  dpd_linreg_spectrum *s;
  int status = DPD_OK;
  const size_t d = cfg->d;
  const int random = cfg->theta == DPD_THETA_RANDOM;
  const double dd = (double)d, norm2 = cfg->theta_norm * cfg->theta_norm;
  double g2sum = 0.0;
  double *gb = NULL;
  *out = NULL;
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
  if (cfg->spectrum == DPD_SPECTRUM_POWERLAW &&
      !(cfg->alpha > 0.0 && isfinite(cfg->alpha) && cfg->alpha * log10(dd) <= 250.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': powerlaw exponent %g (allowed here: finite "
                    "alpha > 0 with alpha log10(d) <= 250; build the problem and compress it)",
                    cfg->alpha);
  }
  if (cfg->spectrum != DPD_SPECTRUM_POWERLAW && cfg->spectrum != DPD_SPECTRUM_ISO &&
      cfg->spectrum != DPD_SPECTRUM_LEVELS) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': kind %d (allowed here: iso, levels, powerlaw; "
                    "build the problem and compress it)",
                    (int)cfg->spectrum);
  }
  if ((status = spec_new(d, cc, out, err)) < 0) {
    return status;
  }
  s = *out;
  if (random && (gb = malloc((size_t)(2 * MAXN + 2) * sizeof *gb)) == NULL) {
    status = DPD_ENOMEM;
    goto fail;
  }
  if (cfg->spectrum == DPD_SPECTRUM_POWERLAW) {
    gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(GL_POINTS);
    if (gl == NULL) {
      status = DPD_ENOMEM;
      goto fail;
    }
    const double H = powerlaw_norm(d, cfg->alpha, gl);
    const double scale = dd / H, ba = (double)cc->bands_per_decade * cfg->alpha;
    s->lambda_max = scale;
    s->lambda_min = scale * pow(dd, -cfg->alpha);
    /* The band of index i is k = floor(B alpha log10 i); it holds [i, ceil(10^((k+1)/(B alpha))))
     * (at least i itself). */
    size_t i = 1;
    while (i <= d && status == DPD_OK) {
      const double edge = ceil(pow(10.0, (floor(ba * log10((double)i)) + 1.0) / ba));
      size_t e = edge > dd ? d + 1 : (size_t)edge;
      if (e <= i) {
        e = i + 1;
      }
      const size_t count = e - i;
      const double hi = scale * pow((double)i, -cfg->alpha),
                   lo = scale * pow((double)(e - 1), -cfg->alpha);
      band_rec *b = spec_band(s, lo, hi, count);
      if (b == NULL) {
        status = DPD_ENOMEM;
        break;
      }
      if (count <= (size_t)cc->nodes) {
        const double *g = random ? gauss_range(cfg->seed, i - 1, count, gb) : NULL;
        for (size_t q = 0; q < count && status == DPD_OK; q++) {
          /* S_0 of a random theta* is g^2 here, scaled once |g| is known */
          if (random) {
            g2sum += g[q] * g[q];
          }
          status = spec_atom(s, scale * pow((double)(i + q), -cfg->alpha), 1.0,
                             random ? g[q] * g[q] : 0.5 * norm2);
        }
      } else {
        band_mom init, force;
        pl_visit v;
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
        if (random) {
          status = random_band(cfg->seed, scale, cfg->alpha, d, i, e, lo, hi, 2 * cc->nodes,
                               threads, init.mom, &g2sum);
        }
        memcpy(b->mi, init.mom, sizeof b->mi);
        memcpy(b->mf, force.mom, sizeof b->mf);
      }
      i = e;
    }
    gsl_integration_glfixed_table_free(gl);
    if (status < 0) {
      goto fail;
    }
  } else {
    double *vals = NULL, *mults = NULL, sum = 0.0;
    size_t count = 1, first = 0;
    if (cfg->spectrum == DPD_SPECTRUM_ISO) {
      if ((vals = malloc(sizeof *vals)) == NULL || (mults = malloc(sizeof *mults)) == NULL) {
        free(vals);
        status = DPD_ENOMEM;
        goto fail;
      }
      vals[0] = 1.0;
      mults[0] = dd;
    } else if ((status = levels_sorted(cfg, &vals, &mults, &count, err)) < 0) {
      goto fail_reported;
    }
    /* relative to the largest, so that values near the ends of the double range stay finite */
    for (size_t k = count; k-- > 0;) {
      vals[k] /= vals[0];
      sum += vals[k] * mults[k];
    }
    s->lambda_max = vals[0] * dd / sum;
    s->lambda_min = vals[count - 1] * dd / sum;
    for (size_t k = 0; k < count && status == DPD_OK; k++) {
      /* one band per level: every level is an exact group */
      double S0 = 0.5 * norm2 * mults[k];
      const size_t m = (size_t)mults[k];
      if (spec_band(s, vals[k] * dd / sum, vals[k] * dd / sum, 1) == NULL) {
        status = DPD_ENOMEM;
        break;
      }
      if (random) { /* sum of g^2 over the level's coordinates, in chunks */
        double *buf = malloc((RCHUNK + 1) * sizeof *buf);
        S0 = 0.0;
        if (buf == NULL) {
          status = DPD_ENOMEM;
          break;
        }
        for (size_t q = 0; q < m; q += RCHUNK) {
          const size_t len = m - q < RCHUNK ? m - q : RCHUNK;
          const double *g = gauss_range(cfg->seed, first + q, len, buf);
          for (size_t t = 0; t < len; t++) {
            S0 += g[t] * g[t];
          }
        }
        free(buf);
        g2sum += S0;
      }
      first += m;
      status = spec_atom(s, vals[k] * dd / sum, mults[k], S0);
    }
    free(vals);
    free(mults);
    if (status < 0) {
      goto fail;
    }
  }
  if (random) {
    /* theta_i = norm g_i / |g|: S_0 = (d/2) theta_i^2 = (d/2) norm^2 g_i^2 / |g|^2; the band
     * moments of mu_0 hold lambda g^2 / d and scale alike (the Gauss weights are linear in them).
     */
    const double f = 0.5 * dd * norm2 / g2sum;
    for (size_t a = 0; a < s->natoms; a++) {
      s->aS0[a] *= f;
    }
    for (size_t k = 0; k < s->nbands; k++) {
      for (int m = 0; m < MOMS; m++) {
        s->bands[k].mi[m] *= f;
      }
    }
  }
  free(gb);
  return DPD_OK;
fail:
  DPD_FAIL(err, DPD_ENOMEM, "out of memory for the spectrum");
fail_reported:
  free(gb);
  dpd_linreg_spectrum_free(s);
  *out = NULL;
  return status;
}

int dpd_linreg_problem_create_spectral(const dpd_linreg_problem_config *cfg,
                                       const dpd_linreg_compress_config *cc,
                                       dpd_linreg_problem **out, dpd_err *err) {
  dpd_linreg_spectrum *s = NULL;
  int status;
  *out = NULL;
  if ((status = dpd_linreg_spectrum_from_config(cfg, cc, 0, &s, err)) < 0) {
    return status;
  }
  status = dpd_linreg_spectrum_problem(s, cc->nodes, out, err);
  dpd_linreg_spectrum_free(s);
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
