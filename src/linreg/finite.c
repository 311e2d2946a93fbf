/* Finite-size correction of the clipping factors (docs/finite_size.md).
 * SPDX-License-Identifier: MIT
 *
 * The law of s^2 = |x|^2/d = sum lambda_i g_i^2 / d is inverted from its characteristic function
 * phi(t) = prod_i (1 - 2i lambda_i t/d)^{-1/2} on a uniform grid (trapezoidal rule in t), reduced
 * to a DPD_FS_NODES-point Gauss rule by the Stieltjes procedure on that discrete measure (Gautschi,
 * Orthogonal Polynomials: Computation and Approximation, 2004, §2.2.3) and the eigen-decomposition
 * of its Jacobi matrix (Golub & Welsch, Math. Comp. 23 (1969) 221; LAPACK dstev). The size-biased
 * laws s^2 + (lambda_j/d) chi^2_2 of the top groups are the Gauss rules of the product of the base
 * rule with a Gauss-Laguerre rule (GSL), exact for their first 2 DPD_FS_NODES moments. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_integration.h>
#include <lapacke.h>

#include "core/error_impl.h"
#include "isa/isa_impl.h"
#include "dpdyn/clip.h"
#include "linreg/finite_impl.h"

enum {
  FS_GRID = 1024,       /* points of the inverted density */
  FS_TAYLOR = 40,       /* power sums of the bulk groups in log phi */
  FS_CHAIN_GROUPS = 64, /* at most this many groups ... */
  FS_CHAIN_MULT = 200   /* ... of at most this multiplicity (GSL weights Gamma(m/2) stay finite) */
};

double dpd__fs_m2(const dpd_linreg_problem *p) {
  return 2.0 * p->mean_lambda_sq / (double)p->d;
}

/* ---- Gauss rule of a discrete measure ------------------------------------------------------ */

/* The n-point Gauss rule of the discrete measure (x[k], w[k]), k < N, sum w = 1, by the
 * Stieltjes procedure with orthonormal polynomials (in y = x - 1); p0, p1, q are workspace [N].
 * Fewer nodes when the measure is numerically supported on fewer points. Returns the node count
 * (>= 1), or 0 when even the one-point rule fails. */
static int gauss_of_discrete(const double *x, const double *w, size_t N, int n, double *p0,
                             double *p1, double *q, dpd__fs_rule *rule) {
  double alpha[DPD_FS_NODES] = {0}, beta[DPD_FS_NODES + 1] = {0}, z[DPD_FS_NODES * DPD_FS_NODES],
         diag[DPD_FS_NODES], off[DPD_FS_NODES];
  int k, got = n;
  for (size_t i = 0; i < N; i++) {
    p0[i] = 0.0;
    p1[i] = 1.0;
  }
  beta[0] = 0.0;
  for (k = 0; k < n; k++) {
    double a = 0.0, b = 0.0, sb;
    for (size_t i = 0; i < N; i++) {
      a += w[i] * (x[i] - 1.0) * p1[i] * p1[i];
    }
    alpha[k] = a;
    sb = sqrt(beta[k]);
    for (size_t i = 0; i < N; i++) {
      q[i] = (x[i] - 1.0 - a) * p1[i] - sb * p0[i];
      b += w[i] * q[i] * q[i];
    }
    beta[k + 1] = b;
    if (k + 1 < n) {
      if (!(b > 1e-28) || !isfinite(b)) {
        got = k + 1;
        break;
      }
      sb = sqrt(b);
      for (size_t i = 0; i < N; i++) {
        p0[i] = p1[i];
        p1[i] = q[i] / sb;
      }
    }
  }
  for (; got >= 1; got--) {
    int ok = 1;
    for (k = 0; k < got; k++) {
      diag[k] = alpha[k];
      off[k] = k + 1 < got ? sqrt(beta[k + 1]) : 0.0;
    }
    if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', got, diag, off, z, got) != 0) {
      continue;
    }
    for (k = 0; k < got && ok; k++) {
      rule->x[k] = 1.0 + diag[k];
      rule->w[k] = z[k * got] * z[k * got];
      ok = rule->x[k] > 0.0 && rule->w[k] > 0.0;
    }
    if (ok) {
      rule->n = got;
      return got;
    }
  }
  return 0;
}

/* ---- The characteristic function of s^2 ---------------------------------------------------- */

typedef struct {
  const double *lambda, *mult;
  size_t m;
  double inv_d;
  double lambda_cut;        /* groups above it are summed exactly; the rest by power sums */
  double t_taylor;          /* power sums valid for t <= t_taylor */
  double pw[FS_TAYLOR + 1]; /* pw[k] = sum_{bulk} m_j (2 lambda_j/d)^k */
  size_t skip, skip2;       /* groups left out (the law without them), or m */
} charfn;

/* log phi(t) = sum_j m_j [-(1/4) log1p(a_j^2) + (i/2) atan(a_j)], a_j = 2 lambda_j t/d. */
static void charfn_log(const charfn *cf, double t, double *re, double *im) {
  double r = 0.0, s = 0.0;
  const int exact_all = t > cf->t_taylor;
  for (size_t j = 0; j < cf->m; j++) {
    if (j != cf->skip && j != cf->skip2 && (exact_all || cf->lambda[j] > cf->lambda_cut)) {
      const double a = 2.0 * cf->lambda[j] * cf->inv_d * t;
      r -= 0.25 * cf->mult[j] * log1p(a * a);
      s += 0.5 * cf->mult[j] * atan(a);
    }
  }
  if (!exact_all) {
    double tk = t; /* t^k */
    for (int k = 1; k <= FS_TAYLOR; k++) {
      const double term = cf->pw[k] * tk;
      if (k % 2 == 0) { /* log1p(a^2) = sum_{l>=1} (-1)^{l+1} a^{2l}/l, k = 2l */
        r -= 0.25 * ((k / 2) % 2 == 1 ? 1.0 : -1.0) * term / (double)(k / 2);
      } else { /* atan(a) = sum_{l>=0} (-1)^l a^{2l+1}/(2l+1), k = 2l+1 */
        s += 0.5 * (((k - 1) / 2) % 2 == 0 ? 1.0 : -1.0) * term / (double)k;
      }
      tk *= t;
    }
  }
  *re = r;
  *im = s;
}

/* ---- The law ------------------------------------------------------------------------------- */

/* The law of s^2 for a few groups of small multiplicity (tiny d, short level lists), where the
 * characteristic function decays too slowly to invert: s^2 = sum_j (2 lambda_j/d) Gamma(m_j/2),
 * built one group at a time as the Gauss rule of (rule so far) x (generalized Gauss-Laguerre rule
 * of Gamma(m_j/2), GSL), each step exact for the first 2 DPD_FS_NODES moments. px, pw, pq:
 * [DPD_FS_NODES^2], p0, p1: workspace of the same size. Returns 0 or -1. */
static int base_by_chain(const dpd_linreg_problem *p, size_t skip, size_t skip2, dpd__fs_rule *rule,
                         double *px, double *pw, double *pq, double *p0, double *p1) {
  rule->n = 1;
  rule->x[0] = 0.0;
  rule->w[0] = 1.0;
  for (size_t j = 0; j < p->ngroups; j++) {
    const double k = 0.5 * p->group_mult[j], scale = 2.0 * p->group_lambda[j] / (double)p->d;
    gsl_integration_fixed_workspace *lag;
    const double *ly, *lw;
    double usum = 0.0;
    size_t np = 0;
    if (!(k > 0.0) || j == skip || j == skip2) {
      continue; /* a node of the initial-energy measure of a compressed problem, or left out */
    }
    lag = gsl_integration_fixed_alloc(gsl_integration_fixed_laguerre, DPD_FS_NODES, 0.0, 1.0,
                                      k - 1.0, 0.0);
    if (lag == NULL) {
      return -1;
    }
    ly = gsl_integration_fixed_nodes(lag);
    lw = gsl_integration_fixed_weights(lag);
    for (int l = 0; l < DPD_FS_NODES; l++) {
      usum += lw[l];
    }
    for (int r = 0; r < rule->n; r++) {
      for (int l = 0; l < DPD_FS_NODES; l++) {
        px[np] = rule->x[r] + scale * ly[l];
        pw[np] = rule->w[r] * lw[l] / usum;
        np++;
      }
    }
    gsl_integration_fixed_free(lag);
    if (!(usum > 0.0) || !isfinite(usum) ||
        gauss_of_discrete(px, pw, np, DPD_FS_NODES, p0, p1, pq, rule) == 0) {
      return -1;
    }
  }
  return 0;
}

void dpd__fs_law_free(dpd__fs_law *law) {
  if (law != NULL) {
    free(law->tilt_of);
    free(law->key_groups);
    free(law);
  }
}

/* ---- The shared law (dpd__fs_law_get) ------------------------------------------------------ */

static pthread_mutex_t law_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static dpd__fs_law *law_cache; /* the last law built (holds one reference), or NULL */

static int law_matches(const dpd__fs_law *law, const dpd_linreg_problem *p) {
  const size_t m = p->ngroups;
  if (law->key_groups == NULL || law->m != m || law->key_d != p->d ||
      law->key_lmax != p->lambda_max || law->key_ml2 != p->mean_lambda_sq) {
    return 0;
  }
  return memcmp(law->key_groups, p->group_lambda, m * sizeof *p->group_lambda) == 0 &&
         memcmp(law->key_groups + m, p->group_mult, m * sizeof *p->group_mult) == 0;
}

/* Drops one reference; the caller holds law_cache_lock. */
static void law_unref_locked(dpd__fs_law *law) {
  if (law != NULL && --law->refs == 0) {
    dpd__fs_law_free(law);
  }
}

int dpd__fs_law_get(const dpd_linreg_problem *p, const dpd__fs_law **out, dpd_err *err) {
  dpd__fs_law *law = NULL;
  int status;
  pthread_mutex_lock(&law_cache_lock);
  if (law_cache != NULL && law_matches(law_cache, p)) {
    law_cache->refs++;
    *out = law_cache;
    pthread_mutex_unlock(&law_cache_lock);
    return DPD_OK;
  }
  pthread_mutex_unlock(&law_cache_lock);
  if ((status = dpd__fs_law_create(p, &law, err)) < 0) {
    *out = NULL;
    return status;
  }
  law->refs = 1;
  law->key_d = p->d;
  law->key_lmax = p->lambda_max;
  law->key_ml2 = p->mean_lambda_sq;
  law->key_groups = malloc((2 * p->ngroups + 1) * sizeof *law->key_groups);
  if (law->key_groups != NULL) { /* without the key the law is used once, not cached */
    memcpy(law->key_groups, p->group_lambda, p->ngroups * sizeof *p->group_lambda);
    memcpy(law->key_groups + p->ngroups, p->group_mult, p->ngroups * sizeof *p->group_mult);
    pthread_mutex_lock(&law_cache_lock);
    law_unref_locked(law_cache);
    law_cache = law;
    law->refs++;
    pthread_mutex_unlock(&law_cache_lock);
  }
  *out = law;
  return DPD_OK;
}

void dpd__fs_law_release(const dpd__fs_law *law) {
  if (law != NULL) {
    pthread_mutex_lock(&law_cache_lock);
    law_unref_locked((dpd__fs_law *)law);
    pthread_mutex_unlock(&law_cache_lock);
  }
}

/* Workspace of the inversions: x, w [FS_GRID]; px, pw, pq [DPD_FS_NODES^2]; p0, p1, q
 * [FS_GRID]. */
typedef struct {
  double *x, *w, *px, *pw, *pq, *p0, *p1, *q;
} law_work;

/* The DPD_FS_NODES-point Gauss rule of s^2 = sum_j lambda_j g_j^2/d, or (skip < m) of the same
 * sum without group `skip`: a Gamma chain for few groups of small multiplicity, otherwise the
 * inversion of the characteristic function (file comment). m2 and lmax_over_d are those of the
 * full law (they set the grid). Returns DPD_OK or DPD_ESOLVER. */
static int rule_of_law(const dpd_linreg_problem *p, size_t skip, size_t skip2, double m2,
                       double lmax_over_d, law_work *wk, dpd__fs_rule *rule, dpd_err *err) {
  const size_t m = p->ngroups, N = FS_GRID;
  const double inv_d = 1.0 / (double)p->d, sd = sqrt(m2);
  double *x = wk->x, *w = wk->w;
  charfn cf;
  double a, b, dx, ht, total = 0.0;
  if (m <= FS_CHAIN_GROUPS) {
    double mmax = 0.0;
    for (size_t j = 0; j < m; j++) {
      mmax = fmax(mmax, p->group_mult[j]);
    }
    if (mmax <= FS_CHAIN_MULT) {
      if (base_by_chain(p, skip, skip2, rule, wk->px, wk->pw, wk->pq, wk->p0, wk->p1) != 0) {
        return DPD_FAIL(err, DPD_ESOLVER, "finite-size law: no Gauss rule (m2 = %g)", m2);
      }
      return DPD_OK;
    }
  }

  /* characteristic function: groups above lambda_cut exactly, the rest by power sums */
  memset(&cf, 0, sizeof cf);
  cf.lambda = p->group_lambda;
  cf.mult = p->group_mult;
  cf.m = m;
  cf.skip = skip;
  cf.skip2 = skip2;
  cf.inv_d = inv_d;
  cf.t_taylor = 12.0 / fmax(sd, 1e-300);
  cf.lambda_cut = 0.25 / (2.0 * inv_d * cf.t_taylor); /* 2 lambda t/d <= 1/4 below the cut */
  for (size_t j = 0; j < m; j++) {
    if (j != skip && j != skip2 && p->group_lambda[j] <= cf.lambda_cut) {
      const double a1 = 2.0 * p->group_lambda[j] * inv_d;
      double ak = a1;
      for (int k = 1; k <= FS_TAYLOR; k++) {
        cf.pw[k] += p->group_mult[j] * ak;
        ak *= a1;
      }
    }
  }

  /* density on [a, b] by the trapezoidal rule in t (aliases fall outside [a, b]) */
  a = fmax(0.0, 1.0 - 12.0 * sd);
  b = 1.0 + 12.0 * sd + 24.0 * lmax_over_d;
  dx = (b - a) / (double)(N - 1);
  ht = 2.0 * M_PI / (1.05 * (b - a));
  for (size_t i = 0; i < N; i++) {
    x[i] = a + dx * (double)i;
    w[i] = 0.5;
  }
  for (long k = 1;; k++) {
    const double t = ht * (double)k;
    double re, im, mod;
    charfn_log(&cf, t, &re, &im);
    mod = exp(re);
    if (mod < 1e-14) {
      break;
    }
    if (k > 2000000) {
      return DPD_FAIL(err, DPD_ESOLVER,
                      "finite-size law: the characteristic function of |x|^2/d does not decay "
                      "(m2 = %g)",
                      m2);
    }
    { /* mod cos(im - t x_i), x_i = a + i dx: the phase rotated by a complex multiplication,
         restarted every 64 points against the rounding drift */
      const double cr = cos(t * dx), sr = -sin(t * dx);
      for (size_t i0 = 0; i0 < N; i0 += 64) {
        double zr = mod * cos(im - t * x[i0]), zi = mod * sin(im - t * x[i0]);
        const size_t i1 = i0 + 64 < N ? i0 + 64 : N;
        for (size_t i = i0; i < i1; i++) {
          const double nr = zr * cr - zi * sr;
          w[i] += zr;
          zi = zr * sr + zi * cr;
          zr = nr;
        }
      }
    }
  }
  for (size_t i = 0; i < N; i++) {
    w[i] = fmax(0.0, w[i] * ht / M_PI) * dx;
    total += w[i];
  }
  if (!(total > 0.5 && total < 1.5)) {
    return DPD_FAIL(err, DPD_ESOLVER,
                    "finite-size law: the inverted density of |x|^2/d has mass %g (m2 = %g)", total,
                    m2);
  }
  for (size_t i = 0; i < N; i++) {
    w[i] /= total;
  }
  if (gauss_of_discrete(x, w, N, DPD_FS_NODES, wk->p0, wk->p1, wk->q, rule) == 0) {
    return DPD_FAIL(err, DPD_ESOLVER, "finite-size law: no Gauss rule (m2 = %g)", m2);
  }
  return DPD_OK;
}

/* The law `from` size-biased by a group of lambda/d = beta: from x (beta chi^2_2), the
 * Gauss-Laguerre rule `lag` of Exp(1) (chi^2_2 = 2 y), reduced to DPD_FS_TILT_NODES nodes. px, pw:
 * [DPD_FS_NODES^2] workspace; pq, p0, p1 the reduction's. Returns 0 or -1. */
static int tilt_rule(const dpd__fs_rule *from, double beta, gsl_integration_fixed_workspace *lag,
                     size_t nodes, double *px, double *pw, double *pq, double *p0, double *p1,
                     dpd__fs_rule *out) {
  const double *ly = gsl_integration_fixed_nodes(lag), *lw = gsl_integration_fixed_weights(lag);
  size_t np = 0;
  for (int k = 0; k < from->n; k++) {
    for (int l = 0; l < DPD_FS_NODES; l++) {
      px[np] = from->x[k] + 2.0 * beta * ly[l];
      pw[np] = from->w[k] * lw[l];
      np++;
    }
  }
  return gauss_of_discrete(px, pw, np, nodes, p0, p1, pq, out) == 0 ? -1 : 0;
}

/* `from` with at most `nodes` nodes: itself when it has no more, else the Gauss rule of its
 * discrete measure (the same first 2 nodes moments; the integrands are smooth). p0, p1, q:
 * workspace [DPD_FS_NODES]. Returns 0 or -1. */
static int fewer_nodes(const dpd__fs_rule *from, int nodes, double *p0, double *p1, double *q,
                       dpd__fs_rule *out) {
  if (from->n <= nodes) {
    *out = *from;
    return 0;
  }
  return gauss_of_discrete(from->x, from->w, (size_t)from->n, nodes, p0, p1, q, out) == 0 ? -1 : 0;
}

static void nt_ensure(void);

/* The n-point Gauss-Hermite rule of g ~ N(0, 1) (GSL: weight exp(-x^2), g = sqrt(2) x): all nodes,
 * or (positive) the n/2 positive ones, each weight that of one of +-g. Returns 0 or -1. */
static int hermite_rule(size_t n, int positive, double *g, double *w) {
  gsl_integration_fixed_workspace *her =
      gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, n, 0.0, 1.0, 0.0, 0.0);
  const double *hx, *hw;
  if (her == NULL) {
    return -1;
  }
  hx = gsl_integration_fixed_nodes(her);
  hw = gsl_integration_fixed_weights(her);
  for (size_t i = 0, h = 0; i < n; i++) {
    if (!positive || (hx[i] > 0.0 && h < n / 2)) {
      g[h] = M_SQRT2 * hx[i];
      w[h] = hw[i] / sqrt(M_PI);
      h++;
    }
  }
  gsl_integration_fixed_free(her);
  return 0;
}

int dpd__fs_law_create(const dpd_linreg_problem *p, dpd__fs_law **out, dpd_err *err) {
  nt_ensure();
  const size_t m = p->ngroups, N = FS_GRID;
  const double inv_d = 1.0 / (double)p->d;
  dpd__fs_law *law = calloc(1, sizeof *law);
  double *x = malloc(2 * N * sizeof *x), *w = x + N;
  double *px = malloc(3 * DPD_FS_NODES * DPD_FS_NODES * sizeof *px);
  double *pw = px + DPD_FS_NODES * DPD_FS_NODES, *pq = pw + DPD_FS_NODES * DPD_FS_NODES;
  double *p0 = NULL, *p1, *q;
  gsl_integration_fixed_workspace *lag = NULL;
  int status = DPD_OK;
  law_work wk;
  *out = NULL;
  p0 = malloc(3 * N * sizeof *p0);
  if (law == NULL || x == NULL || px == NULL || p0 == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (finite-size law of %zu groups)", m);
    goto done;
  }
  p1 = p0 + N;
  q = p1 + N;
  wk = (law_work){x, w, px, pw, pq, p0, p1, q};
  law->m = m;
  law->inv_d = inv_d;
  law->m2 = dpd__fs_m2(p);
  law->lmax_over_d = p->lambda_max * inv_d;
  law->tilt_of = malloc((m > 0 ? m : 1) * sizeof *law->tilt_of);
  if (law->tilt_of == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (finite-size law of %zu groups)", m);
    goto done;
  }
  if ((status = rule_of_law(p, m, m, law->m2, law->lmax_over_d, &wk, &law->base, err)) < 0) {
    goto done;
  }

  /* size-biased laws of the top groups: base rule x Gauss-Laguerre (eta = 2 y, y ~ Exp(1)) */
  lag =
      gsl_integration_fixed_alloc(gsl_integration_fixed_laguerre, DPD_FS_NODES, 0.0, 1.0, 0.0, 0.0);
  if (lag == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (Gauss-Laguerre rule)");
    goto done;
  }
  for (size_t j = 0; j < m; j++) {
    law->tilt_of[j] = -1;
  }
  for (;;) { /* the largest remaining lambda/d above DPD_FS_EPS, up to DPD_FS_MAXTILT groups */
    size_t best = m;
    double beta;
    for (size_t j = 0; j < m; j++) {
      if (law->tilt_of[j] < 0 && p->group_lambda[j] * inv_d > DPD_FS_EPS &&
          (best == m || p->group_lambda[j] > p->group_lambda[best])) {
        best = j;
      }
    }
    if (best == m || law->ntilt == DPD_FS_MAXTILT) {
      break;
    }
    beta = p->group_lambda[best] * inv_d;
    if (tilt_rule(&law->base, beta, lag, DPD_FS_TILT_NODES, px, pw, pq, p0, p1,
                  &law->tilt[law->ntilt]) != 0) {
      status = DPD_FAIL(err, DPD_ESOLVER, "finite-size law: no Gauss rule for lambda/d = %g", beta);
      goto done;
    }
    law->tilt_of[best] = (int)law->ntilt;
    law->tilt_beta[law->ntilt] = beta;
    law->ntilt++;
  }
  /* exact directions: the tilted groups of multiplicity 1 (largest first), the law without each,
   * and the Gauss-Hermite rule of g (GSL: weight exp(-x^2), g = sqrt(2) x) */
  for (size_t k = 0; k < law->ntilt; k++) {
    law->exact_of_tilt[k] = -1;
  }
  for (size_t j = 0; j < m && law->nexact < DPD_FS_MAXEXACT; j++) {
    const int k = law->tilt_of[j];
    if (k >= 0 && p->group_mult[j] == 1.0 && law->tilt_beta[k] > DPD_FS_EXACT_EPS) {
      const size_t e = law->nexact;
      dpd__fs_rule full;
      if ((status = rule_of_law(p, j, m, law->m2, law->lmax_over_d, &wk, &full, err)) < 0) {
        goto done;
      }
      if (e == 0) {
        if (fewer_nodes(&full, DPD_FS_COND_NODES, p0, p1, q, &law->cminus) != 0) {
          status =
              DPD_FAIL(err, DPD_ESOLVER, "finite-size law: no Gauss rule without group %zu", j);
          goto done;
        }
      } else { /* without the first exact direction and this one */
        dpd__fs_rule both;
        if ((status = rule_of_law(p, law->exact_group[0], j, law->m2, law->lmax_over_d, &wk, &both,
                                  err)) < 0) {
          goto done;
        }
        if (fewer_nodes(&both, DPD_FS_JOINT_NODES, p0, p1, q, &law->minus2[e]) != 0) {
          status =
              DPD_FAIL(err, DPD_ESOLVER, "finite-size law: no Gauss rule without groups %zu, %zu",
                       law->exact_group[0], j);
          goto done;
        }
      }
      /* a law of fewer nodes, e.g. the point mass at 0 when the direction is all of s^2, is kept
       * as it is */
      if (fewer_nodes(&full, DPD_FS_EXACT_NODES, p0, p1, q, &law->minus[e]) != 0) {
        status = DPD_FAIL(err, DPD_ESOLVER, "finite-size law: no Gauss rule without group %zu", j);
        goto done;
      }
      law->exact_group[e] = j;
      law->exact_beta[e] = law->tilt_beta[k];
      law->exact_of_tilt[k] = (int)e;
      law->nexact++;
    }
  }
  if (law->nexact > 0) { /* conditioning on exact direction 0: its size-biased laws */
    law->cond = 1;
    for (size_t k = 0; k < law->ntilt; k++) {
      if (tilt_rule(&law->cminus, law->tilt_beta[k], lag, DPD_FS_COND_TILT, px, pw, pq, p0, p1,
                    &law->ctilt[k]) != 0) {
        status = DPD_FAIL(err, DPD_ESOLVER, "finite-size law: no Gauss rule for lambda/d = %g",
                          law->tilt_beta[k]);
        goto done;
      }
    }
  }
  if (law->nexact > 0 && (hermite_rule(2 * DPD_FS_GH_HALF, 1, law->gh_g, law->gh_w) != 0 ||
                          hermite_rule(DPD_FS_GH_PARTNER, 0, law->gp_g, law->gp_w) != 0 ||
                          hermite_rule(DPD_FS_GH_PARTNER_SMALL, 0, law->gs_g, law->gs_w) != 0 ||
                          hermite_rule(2 * DPD_FS_GP_HALF, 1, law->gq_g, law->gq_w) != 0)) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (Gauss-Hermite rule)");
    goto done;
  }
  *out = law;
  law = NULL;
done:
  if (lag != NULL) {
    gsl_integration_fixed_free(lag);
  }
  free(p0);
  free(px);
  free(x);
  dpd__fs_law_free(law);
  return status;
}

double dpd__fs_rule_expect(const dpd__fs_rule *rule, double (*h)(double, void *), void *arg) {
  double s = 0.0;
  for (int k = 0; k < rule->n; k++) {
    s += rule->w[k] * h(rule->x[k], arg);
  }
  return s;
}

/* ---- Corrected coefficients ---------------------------------------------------------------- */

/* F_mu, F_nu, G = T F_mu'(T) at T = c/sqrt(x) and their R-derivatives; H2 = T^2 F_mu''(T),
 * H3 = T^3 F_mu'''(T) (the rank-one terms). */
typedef struct {
  double Fmu, Fnu, G, dFmu, dFnu, dG, H2, H3, dH2, dH3;
} fs_node;

static int node_eval(const dpd_noise_spec *noise, double c, double x, double R, int derivs,
                     fs_node *o, dpd_err *err) {
  const double T = c / sqrt(x), P = R + 0.5 * noise->zeta * noise->zeta;
  if (isinf(T)) {
    o->Fmu = 1.0;
    o->Fnu = 2.0 * P;
    o->G = o->dFmu = o->dG = o->H2 = o->H3 = o->dH2 = o->dH3 = 0.0;
    o->dFnu = 2.0;
    return 0;
  }
  if (noise->law == DPD_NOISE_GAUSSIAN) {
    double mu, nu, dmu, dnu;
    const double kappa = T / (2.0 * sqrt(P));
    if (kappa >= 0.05 && kappa <= 30.0) {
      /* the closed forms of clip.h (dpd_clip_factors_eval) without its incomplete-gamma branch
       * for kappa < 1: the cancellation in nu costs at most 1e-13 relative for kappa >= 0.05 */
      const double ek = exp(-kappa * kappa), m = erf(kappa);
      const double kerfck = kappa * (kappa < 0.5 ? 1.0 - m : erfc(kappa));
      mu = m;
      nu = m - 2.0 * kappa * ek / sqrt(M_PI) + 2.0 * kappa * kerfck;
      dmu = -kappa * ek / (sqrt(M_PI) * P);
      dnu = -2.0 * kappa * kerfck / P;
    } else {
      dpd_clip_factors_eval(T, P, &mu, &nu, &dmu, &dnu);
    }
    o->Fmu = mu;
    o->dFmu = dmu;
    o->Fnu = 2.0 * P * nu;
    o->dFnu = 2.0 * nu + 2.0 * P * dnu;
    if (kappa > 30.0) {
      o->G = o->dG = o->H2 = o->H3 = o->dH2 = o->dH3 = 0.0;
    } else {
      /* with y = T/sqrt(2P) = sqrt(2) kappa: T F' = 2 y phi(y), T^2 F'' = -2 y^3 phi(y),
       * T^3 F''' = 2 y^3 phi(y) (y^2 - 1) */
      const double e = exp(-kappa * kappa) * M_2_SQRTPI, y2 = 2.0 * kappa * kappa;
      const double dk = -kappa / (2.0 * P), dGk = e * (1.0 - y2); /* d kappa/dR, dG/d kappa */
      o->G = kappa * e;
      o->dG = dGk * dk;
      o->H2 = -y2 * o->G;
      o->H3 = y2 * (y2 - 1.0) * o->G;
      o->dH2 = (-4.0 * kappa * o->G - y2 * dGk) * dk;
      o->dH3 = ((16.0 * kappa * kappa - 4.0) * kappa * o->G + y2 * (y2 - 1.0) * dGk) * dk;
    }
    return 0;
  } else {
    /* log-T derivatives by central differences: D1 = T F', D2 = T^2 F'' + T F',
     * D3 = T^3 F''' + 3 T^2 F'' + T F' */
    double mu, nu, dmu = 0.0, dnu = 0.0, mup, mum, mupp, mumm, D1, D2, D3;
    const double h = 0.01;
    int status;
    if (!(R >= 0.0) || !isfinite(R)) {
      return 1;
    }
    status = dpd_clip_noise_factors_eval(noise, T, R, &mu, &nu, derivs ? &dmu : NULL,
                                         derivs ? &dnu : NULL, err);
    if (status == DPD_OK) {
      status = dpd_clip_noise_factors_eval(noise, T * exp(h), R, &mup, NULL, NULL, NULL, err);
    }
    if (status == DPD_OK) {
      status = dpd_clip_noise_factors_eval(noise, T * exp(-h), R, &mum, NULL, NULL, NULL, err);
    }
    if (status == DPD_OK) {
      status =
          dpd_clip_noise_factors_eval(noise, T * exp(2.0 * h), R, &mupp, NULL, NULL, NULL, err);
    }
    if (status == DPD_OK) {
      status =
          dpd_clip_noise_factors_eval(noise, T * exp(-2.0 * h), R, &mumm, NULL, NULL, NULL, err);
    }
    if (status != DPD_OK) {
      return status;
    }
    o->Fmu = mu;
    o->dFmu = dmu;
    o->Fnu = 2.0 * P * nu;
    o->dFnu = 2.0 * nu + 2.0 * P * dnu;
    D1 = (mup - mum) / (2.0 * h);
    D2 = (mup - 2.0 * mu + mum) / (h * h);
    D3 = (mupp - 2.0 * mup + 2.0 * mum - mumm) / (2.0 * h * h * h);
    o->G = D1;
    o->dG = 0.0;
    o->H2 = D2 - D1;
    o->H3 = D3 - 3.0 * D2 + 2.0 * D1;
    o->dH2 = o->dH3 = 0.0; /* left out of the Jacobian, as dG */
    return 0;
  }
}

/* Sums over one rule: E F_mu, E F_nu, E[G/x], E[2 F_mu - 2 G], E[c^2 (1 - F_mu)/x^2] and their
 * R-derivatives. */
typedef struct {
  double mu, nu, g, sig, n1, h2, h3; /* h2 = E[H2/x], h3 = E[H3] */
  double dmu, dnu, dg, dsig, dn1, dh2, dh3;
  double amu, anu, ag, asig, an1; /* a1-derivatives (conditioning; 0 otherwise) */
} fs_sums;

static int rule_sums(const dpd__fs_rule *rule, const dpd_noise_spec *noise, double c, double R,
                     int derivs, fs_sums *s, dpd_err *err) {
  memset(s, 0, sizeof *s);
  for (int k = 0; k < rule->n; k++) {
    fs_node o;
    const double x = rule->x[k], w = rule->w[k];
    const double c2x2 = isinf(c) ? 0.0 : c * c / (x * x);
    int status = node_eval(noise, c, x, R, derivs, &o, err);
    if (status != 0) {
      return status;
    }
    s->mu += w * o.Fmu;
    s->h2 += w * o.H2 / x;
    s->h3 += w * o.H3;
    s->dh2 += w * o.dH2 / x;
    s->dh3 += w * o.dH3;
    s->nu += w * o.Fnu;
    s->g += w * o.G / x;
    s->sig += w * (2.0 * o.Fmu - 2.0 * o.G);
    s->n1 += isinf(c) ? 0.0 : w * c2x2 * (1.0 - o.Fmu);
    s->dmu += w * o.dFmu;
    s->dnu += w * o.dFnu;
    s->dg += w * o.dG / x;
    s->dsig += w * (2.0 * o.dFmu - 2.0 * o.dG);
    s->dn1 -= isinf(c) ? 0.0 : w * c2x2 * o.dFmu;
  }
  return 0;
}

static int cond_sums(const dpd__fs_law *law, const dpd__fs_rule *rule, double c, double P,
                     double a1, dpd_isa isa, fs_sums *s);

int dpd__fs_coef_eval(const dpd__fs_law *law, const dpd_noise_spec *noise, double c, double R,
                      double lbar, double a1, double eta, double gamma, int derivs,
                      dpd__fs_coef *co, dpd_err *err) {
  return dpd__fs_coef_eval_isa(law, noise, c, R, lbar, a1, eta, gamma, derivs, DPD_ISA_AUTO, co,
                               err);
}

int dpd__fs_coef_eval_isa(const dpd__fs_law *law, const dpd_noise_spec *noise, double c, double R,
                          double lbar, double a1, double eta, double gamma, int derivs, dpd_isa isa,
                          dpd__fs_coef *co, dpd_err *err) {
  fs_sums b;
  double dmu_r1, dN_r1, ddmu_r1, ddN_r1;
  const double g2 = gamma * eta * eta;
  const double P = R + 0.5 * noise->zeta * noise->zeta;
  int status = rule_sums(&law->base, noise, c, R, derivs, &b, err);
  const int cond = dpd__fs_cond_applies(law, noise, c, a1);
  if (status != 0) {
    return status;
  }
  if (cond) { /* every factor but the rank-one moments conditioned on the top direction */
    fs_sums bc;
    if (cond_sums(law, &law->cminus, c, P, a1, isa, &bc) != 0) {
      return 1;
    }
    bc.h2 = b.h2;
    bc.h3 = b.h3;
    bc.dh2 = b.dh2;
    bc.dh3 = b.dh3;
    b = bc;
  }
  /* the rank-one interaction of |x| with the residual direction (common to all groups):
   * delta mu = -(lbar/d) R E[T F'''/s^2] = -(lbar/d) (R/c^2) E[H3],
   * delta N = (lbar/d) 2R E[T^2 F''/s^2] = (lbar/d) 2R E[H2/x] */
  dmu_r1 = isinf(c) ? 0.0 : -lbar * law->inv_d * R / (c * c) * b.h3;
  dN_r1 = isinf(c) ? 0.0 : lbar * law->inv_d * 2.0 * R * b.h2;
  co->rank_one_mu = dmu_r1;
  co->r1_mu = isinf(c) ? 0.0 : -law->inv_d * law->inv_d / (c * c) * b.h3;
  co->r1_N = isinf(c) ? 0.0 : 2.0 * law->inv_d * law->inv_d * b.h2;
  co->dr1_mu = isinf(c) ? 0.0 : -law->inv_d * law->inv_d / (c * c) * b.dh3;
  co->dr1_N = isinf(c) ? 0.0 : 2.0 * law->inv_d * law->inv_d * b.dh2;
  co->dA_lbar = isinf(c) ? 0.0 : 2.0 * eta * law->inv_d * R / (c * c) * b.h3;
  /* R-derivatives of the rank-one terms (R h3(R), R h2(R)), for the Jacobian */
  ddmu_r1 = isinf(c) ? 0.0 : -lbar * law->inv_d / (c * c) * (b.h3 + R * b.dh3);
  ddN_r1 = isinf(c) ? 0.0 : lbar * law->inv_d * 2.0 * (b.h2 + R * b.dh2);
  co->dB_lbar = isinf(c) ? 0.0 : 0.5 * g2 * law->inv_d * 2.0 * R * b.h2;
  co->rank_one_nu = P > 0.0 ? dN_r1 / (2.0 * P) : 0.0;
  /* first-order groups: mu_j = E F_mu - beta E[G/x], sigma_j = E sig, N_j = E F_nu - 2 beta n1 */
  co->A0 = -2.0 * eta * (b.mu + dmu_r1);
  co->A1 = 2.0 * eta * b.g + g2 * b.sig;
  co->B0 = 0.5 * g2 * (b.nu + dN_r1);
  co->B1 = -g2 * b.n1;
  co->dA0 = -2.0 * eta * (b.dmu + ddmu_r1);
  co->dA1 = 2.0 * eta * b.dg + g2 * b.dsig;
  co->dB0 = 0.5 * g2 * (b.dnu + ddN_r1);
  co->dB1 = -g2 * b.dn1;
  co->aA0 = -2.0 * eta * b.amu;
  co->aA1 = 2.0 * eta * b.ag + g2 * b.asig;
  co->aB0 = 0.5 * g2 * b.anu;
  co->aB1 = -g2 * b.an1;
  co->mu = b.mu;
  co->nu = P > 0.0 ? b.nu / (2.0 * P) : 1.0;
  co->mu0 = b.mu + dmu_r1;
  co->mu1 = -b.g;
  co->sig0 = b.sig;
  co->N0 = b.nu + dN_r1;
  co->N1 = -2.0 * b.n1;
  for (size_t k = 0; k < law->ntilt; k++) {
    fs_sums t;
    status = cond ? cond_sums(law, &law->ctilt[k], c, P, a1, isa, &t)
                  : rule_sums(&law->tilt[k], noise, c, R, derivs, &t, err);
    if (status != 0) {
      return status;
    }
    const double beta = law->tilt_beta[k];
    co->At[k] = -2.0 * eta * (b.mu + dmu_r1 - beta * t.g) + g2 * beta * t.sig;
    co->Bt[k] = 0.5 * g2 * (t.nu + dN_r1);
    co->dAt[k] = -2.0 * eta * (b.dmu + ddmu_r1 - beta * t.dg) + g2 * beta * t.dsig;
    co->dBt[k] = 0.5 * g2 * (t.dnu + ddN_r1);
    co->aAt[k] = -2.0 * eta * (b.amu - beta * t.ag) + g2 * beta * t.asig;
    co->aBt[k] = 0.5 * g2 * t.anu;
    co->mut[k] = b.mu + dmu_r1 - beta * t.g;
    co->sigt[k] = t.sig;
    co->Nt[k] = t.nu + dN_r1;
  }
  return 0;
}

/* ---- Exact directions ------------------------------------------------------------------------ */

/* The standard normal tail Q(u) = P(Z > u) and density phi(u), by cubic Hermite interpolation
 * of a table on [-NT_MAX, NT_MAX] with step 1/NT_PER (the derivatives Q' = -phi and
 * phi' = -u phi are exact): error below 2e-11 absolute; beyond the table Q is 0 or 1 and phi 0
 * (< 1e-18). Every clipped-moment node needs two of each; the table replaces an erfc and an exp
 * per value. Built once (pthread_once). */
enum { NT_PER = 128, NT_MAX = 9, NT_N = 2 * NT_MAX * NT_PER + 1 };
static double nt_q[NT_N], nt_phi[NT_N];
static pthread_once_t nt_once = PTHREAD_ONCE_INIT;

static void nt_build(void) {
  for (int k = 0; k < NT_N; k++) {
    const double u = -NT_MAX + (double)k / NT_PER;
    nt_q[k] = 0.5 * erfc(u * M_SQRT1_2);
    nt_phi[k] = exp(-0.5 * u * u) * 0.5 * M_2_SQRTPI * M_SQRT1_2;
  }
}

static void nt_ensure(void) {
  pthread_once(&nt_once, nt_build);
}

/* Q and phi at u in two steps, so that the node loops vectorise without gathers (which gcc
 * leaves out of its tunings): nt_index, the table row (scalar), and nt_interp, the cubic
 * Hermite interpolation from the row's four values (branch-free; outside the table it runs at
 * u = 0 and is replaced). */
static inline __attribute__((always_inline)) double nt_clamp(double u) {
  const int lo = !(u > -NT_MAX), hi = !(u < NT_MAX);
  return (lo | hi) ? 0.0 : u;
}

static inline __attribute__((always_inline)) int nt_index(double u) {
  const int k = (int)((nt_clamp(u) + NT_MAX) * NT_PER);
  return k > NT_N - 2 ? NT_N - 2 : k;
}

/* row: Q(u_k), Q(u_{k+1}), phi(u_k), phi(u_{k+1}) */
static inline __attribute__((always_inline)) void
nt_interp(double u, double q0, double q1, double p0, double p1, double *q, double *phi) {
  const int lo = !(u > -NT_MAX), hi = !(u < NT_MAX), k = nt_index(u);
  const double x = (nt_clamp(u) + NT_MAX) * NT_PER;
  const double t = x - k, h = 1.0 / NT_PER, u0 = -NT_MAX + (double)k / NT_PER, u1 = u0 + h;
  const double t2 = t * t, t3 = t2 * t;
  const double h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + t, h01 = -2 * t3 + 3 * t2,
               h11 = t3 - t2;
  const double qi = h00 * q0 + h * h10 * (-p0) + h01 * q1 + h * h11 * (-p1);
  const double fi = h00 * p0 + h * h10 * (-u0 * p0) + h01 * p1 + h * h11 * (-u1 * p1);
  *q = lo ? 1.0 : hi ? 0.0 : qi;
  *phi = (lo | hi) ? 0.0 : fi;
}

int dpd__fs_cond_applies(const dpd__fs_law *law, const dpd_noise_spec *noise, double c, double a1) {
  return law->cond && noise->law == DPD_NOISE_GAUSSIAN && isfinite(c) && a1 > 0.0;
}

/* The node loops below are the finite-size correction's whole cost (a tune at d = 1e6 spends
 * 85 % of its time in them). Each runs in chunks of FS_CHUNK nodes: the nodes' inputs are laid
 * out, a kernel computes every node's terms (vectorised by gcc in the clones of isa_impl.h:
 * scalar, AVX2, AVX-512, the same bits, -ffp-contract=off), and the terms are summed in node
 * order, so the sums are the same bits as a plain loop over the nodes. */
enum { FS_CHUNK = 64 };

/* A chunk's clip thresholds T = c/sqrt(x), standardised edges u+ = (T - y)/sigma and
 * u- = (-T - y)/sigma, and the table rows of Q and phi at u+ and at -u- (the reads are a scalar
 * loop; the arithmetic around them vectorises). */
typedef struct {
  double T[FS_CHUNK], up[FS_CHUNK], um[FS_CHUNK];
  double row[8][FS_CHUNK]; /* Q(u_k), Q(u_{k+1}), phi(u_k), phi(u_{k+1}) at u+, then at -u- */
} nt_rows;

static inline __attribute__((always_inline)) void
chunk_rows(const double *x, const double *y, int n, double c, double sigma, nt_rows *r) {
  for (int i = 0; i < n; i++) {
    const double T = c / sqrt(x[i]);
    r->T[i] = T;
    r->up[i] = (T - y[i]) / sigma;
    r->um[i] = (-T - y[i]) / sigma;
  }
  for (int i = 0; i < n; i++) {
    const int kp = nt_index(r->up[i]), km = nt_index(-r->um[i]);
    r->row[0][i] = nt_q[kp];
    r->row[1][i] = nt_q[kp + 1];
    r->row[2][i] = nt_phi[kp];
    r->row[3][i] = nt_phi[kp + 1];
    r->row[4][i] = nt_q[km];
    r->row[5][i] = nt_q[km + 1];
    r->row[6][i] = nt_phi[km];
    r->row[7][i] = nt_phi[km + 1];
  }
}

/* Q(u+), phi(u+), Phi(u-) = Q(-u-), phi(u-) of node i */
static inline __attribute__((always_inline)) void chunk_q_phi(const nt_rows *r, int i, double *Qp,
                                                              double *fp, double *Pm, double *fm) {
  nt_interp(r->up[i], r->row[0][i], r->row[1][i], r->row[2][i], r->row[3][i], Qp, fp);
  nt_interp(-r->um[i], r->row[4][i], r->row[5][i], r->row[6][i], r->row[7][i], Pm, fm);
}

/* One non-central node per lane: the residual y + U, U ~ N(0, sigma^2), clipped at T = c/sqrt(x),
 * s^2 = x. With F_mu = P(|y+U| < T), F_nu = E psi^2, G = T dF_mu/dT and their sigma- and
 * y-derivatives (prefix s, y), the terms of cond_sums' sums (COND_* below), each times the
 * node's weight w. */
enum {
  COND_MU,
  COND_NU,
  COND_G,
  COND_SIG,
  COND_N1,
  COND_DMU,
  COND_DNU,
  COND_DG,
  COND_DSIG,
  COND_DN1,
  COND_AMU,
  COND_ANU,
  COND_AG,
  COND_ASIG,
  COND_AN1,
  COND_TERMS
};

typedef struct {
  double x[FS_CHUNK], y[FS_CHUNK], w[FS_CHUNK], g[FS_CHUNK]; /* s^2, a1 g, weight, g */
} cond_in;

static inline __attribute__((always_inline)) int cond_chunk_body(const cond_in *in, int n, double c,
                                                                 double a1, double sigma,
                                                                 double (*t)[FS_CHUNK]) {
  const double r = a1 / sigma;
  nt_rows rows;
  chunk_rows(in->x, in->y, n, c, sigma, &rows);
  for (int i = 0; i < n; i++) {
    const double x = in->x[i], w = in->w[i], g = in->g[i], y = in->y[i];
    const double c2x2 = c * c / (x * x), T = rows.T[i];
    const double up = rows.up[i], um = rows.um[i];
    double Qp, Pm, fp, fm;
    chunk_q_phi(&rows, i, &Qp, &fp, &Pm, &fm);
    const double in_ = 1.0 - Qp - Pm;
    const double z2 = in_ + um * fm - up * fp;
    const double Fmu = in_;
    const double Fnu =
        y * y * in_ + 2.0 * y * sigma * (fm - fp) + sigma * sigma * z2 + T * T * (Qp + Pm);
    const double sFnu = 2.0 * (y * (fm - fp) + sigma * z2);
    const double G = T * (fp + fm) / sigma;
    const double sFmu = -(fp * up - fm * um) / sigma;
    const double sG = T * ((up * up - 1.0) * fp + (um * um - 1.0) * fm) / (sigma * sigma);
    const double yFmu = (fm - fp) / sigma;
    const double yFnu = 2.0 * (y * in_ + sigma * (fm - fp));
    const double yG = T * (up * fp + um * fm) / (sigma * sigma);
    /* d/d a1 = g d/dy - (a1/sigma) d/dsigma */
    const double aFmu = g * yFmu - r * sFmu, aG = g * yG - r * sG;
    t[COND_MU][i] = w * Fmu;
    t[COND_NU][i] = w * Fnu;
    t[COND_G][i] = w * G / x;
    t[COND_SIG][i] = w * (2.0 * Fmu - 2.0 * G);
    t[COND_N1][i] = w * c2x2 * (1.0 - Fmu);
    t[COND_DMU][i] = w * sFmu / sigma;
    t[COND_DNU][i] = w * sFnu / sigma;
    t[COND_DG][i] = w * sG / (sigma * x);
    t[COND_DSIG][i] = w * (2.0 * sFmu - 2.0 * sG) / sigma;
    t[COND_DN1][i] = w * c2x2 * sFmu / sigma;
    t[COND_AMU][i] = w * aFmu;
    t[COND_ANU][i] = w * (g * yFnu - r * sFnu);
    t[COND_AG][i] = w * aG / x;
    t[COND_ASIG][i] = w * (2.0 * aFmu - 2.0 * aG);
    t[COND_AN1][i] = w * c2x2 * aFmu;
  }
  return 0;
}

DPD__ISA_CLONES(int, cond_chunk,
                (const cond_in *in, int n, double c, double a1, double sigma,
                 double (*t)[FS_CHUNK]),
                cond_chunk_body(in, n, c, a1, sigma, t))

typedef int (*cond_chunk_fn)(const cond_in *, int, double, double, double, double (*)[FS_CHUNK]);

/* Adds a chunk's terms to the sums, node by node. */
static void cond_accumulate(double (*t)[FS_CHUNK], int n, fs_sums *s) {
  for (int i = 0; i < n; i++) {
    s->mu += t[COND_MU][i];
    s->nu += t[COND_NU][i];
    s->g += t[COND_G][i];
    s->sig += t[COND_SIG][i];
    s->n1 += t[COND_N1][i];
    s->dmu += t[COND_DMU][i];
    s->dnu += t[COND_DNU][i];
    s->dg += t[COND_DG][i];
    s->dsig += t[COND_DSIG][i];
    s->dn1 -= t[COND_DN1][i];
    s->amu += t[COND_AMU][i];
    s->anu += t[COND_ANU][i];
    s->ag += t[COND_AG][i];
    s->asig += t[COND_ASIG][i];
    s->an1 -= t[COND_AN1][i];
  }
}

/* The sums of rule_sums (not the rank-one moments h2, h3), conditioned on the top direction's
 * g: its share a1 of the residual, the rest U ~ N(0, 2P - a1^2), s^2 = beta_1 g^2 + s^2_{-1} with
 * s^2_{-1} ~ rule. F_mu, F_nu and G are even in g (the Gauss-Hermite nodes g > 0 weighted twice).
 * R-derivatives through sigma (d sigma/dR = 1/sigma). Returns 0, or 1 when 2P <= a1^2. */
static int cond_sums(const dpd__fs_law *law, const dpd__fs_rule *rule, double c, double P,
                     double a1, dpd_isa isa, fs_sums *s) {
  const double var = 2.0 * P - a1 * a1, beta = law->exact_beta[0];
  const cond_chunk_fn kernel = DPD__ISA_CLONE_PICK(isa, cond_chunk);
  double sigma, t[COND_TERMS][FS_CHUNK];
  cond_in in;
  int n = 0;
  memset(s, 0, sizeof *s);
  if (!(var > 0.0)) {
    return 1;
  }
  sigma = sqrt(var);
  for (int h = 0; h < DPD_FS_GH_HALF; h++) {
    const double g = law->gh_g[h], wg = 2.0 * law->gh_w[h];
    for (int k = 0; k < rule->n; k++) {
      in.x[n] = rule->x[k] + beta * g * g;
      in.y[n] = a1 * g;
      in.w[n] = wg * rule->w[k];
      in.g[n] = g;
      if (++n == FS_CHUNK) {
        kernel(&in, n, c, a1, sigma, t);
        cond_accumulate(t, n, s);
        n = 0;
      }
    }
  }
  if (n > 0) {
    kernel(&in, n, c, a1, sigma, t);
    cond_accumulate(t, n, s);
  }
  return 0;
}

/* One exact-direction node per lane: y + U, U ~ N(0, sigma^2), clipped at +-T with
 * T = c/sqrt(x): m = E psi, s2 = E psi^2 and their y- and sigma-derivatives (Stein:
 * d/dsigma E h(y + sigma Z) = E[Z h'(y + sigma Z)]), and the terms of dpd__fs_exact_eval's sums
 * (EX_* below), each times the node's weight w and powers of its own g and the partner's g1. */
enum { EX_K1, EX_K1Y, EX_K1S, EX_K2, EX_K2Y, EX_K2S, EX_K1Q, EX_K2Q, EX_TERMS };

typedef struct {
  double x[FS_CHUNK], y[FS_CHUNK], w[FS_CHUNK], g[FS_CHUNK], g1[FS_CHUNK];
} ex_in;

static inline __attribute__((always_inline)) int
ex_chunk_body(const ex_in *in, int n, double c, double sigma, double (*t)[FS_CHUNK]) {
  nt_rows rows;
  chunk_rows(in->x, in->y, n, c, sigma, &rows);
  for (int i = 0; i < n; i++) {
    const double T = rows.T[i], y = in->y[i], w = in->w[i], g = in->g[i], g1 = in->g1[i];
    const double up = rows.up[i], um = rows.um[i];
    double Qp, Pm, fp, fm;
    chunk_q_phi(&rows, i, &Qp, &fp, &Pm, &fm);
    const double in_ = 1.0 - Qp - Pm;          /* P(|y+U| < T) */
    const double z2 = in_ + um * fm - up * fp; /* E[Z^2 1{inside}] */
    const double m = y * in_ + sigma * (fm - fp) + T * (Qp - Pm);
    const double my = in_, ms = fm - fp;
    const double s2 =
        (y * y) * in_ + 2.0 * y * sigma * (fm - fp) + sigma * sigma * z2 + T * T * (Qp + Pm);
    const double s2y = 2.0 * (y * in_ + sigma * (fm - fp));
    const double s2s = 2.0 * (y * (fm - fp) + sigma * z2);
    t[EX_K1][i] = w * g * m;
    t[EX_K1Y][i] = w * g * g * my;
    t[EX_K1S][i] = w * g * ms;
    t[EX_K2][i] = w * g * g * s2;
    t[EX_K2Y][i] = w * g * g * g * s2y;
    t[EX_K2S][i] = w * g * g * s2s;
    t[EX_K1Q][i] = w * g * g1 * my;
    t[EX_K2Q][i] = w * g * g * g1 * s2y;
  }
  return 0;
}

DPD__ISA_CLONES(int, ex_chunk,
                (const ex_in *in, int n, double c, double sigma, double (*t)[FS_CHUNK]),
                ex_chunk_body(in, n, c, sigma, t))

typedef int (*ex_chunk_fn)(const ex_in *, int, double, double, double (*)[FS_CHUNK]);

static void ex_accumulate(double (*t)[FS_CHUNK], int n, double *k) {
  for (int i = 0; i < n; i++) {
    for (int q = 0; q < EX_TERMS; q++) {
      k[q] += t[q][i];
    }
  }
}

int dpd__fs_exact_eval(const dpd__fs_law *law, size_t e, double c, double P, double a, double a1,
                       dpd__fs_exact_k *o) {
  return dpd__fs_exact_eval_isa(law, e, c, P, a, a1, DPD_ISA_AUTO, o);
}

int dpd__fs_exact_eval_isa(const dpd__fs_law *law, size_t e, double c, double P, double a,
                           double a1, dpd_isa isa, dpd__fs_exact_k *o) {
  const int partner = dpd__fs_partner(law, e);
  const int joint = a1 > 0.0 && partner >= 0;
  const dpd__fs_rule *rule = joint ? &law->minus2[e > 0 ? e : 1] : &law->minus[e];
  const double ap = joint ? a1 : 0.0; /* without a partner: one node g1 = 0 of weight 1 */
  const double beta = law->exact_beta[e], var = 2.0 * P - a * a - ap * ap;
  const double beta1 = joint ? law->exact_beta[partner] : 0.0;
  /* e = 0 (the largest share) keeps its 12-point rule and pairs with the smaller direction 1 on
   * 6 points; e > 0 uses 8 points and pairs with direction 0 on 12 */
  static const double none_g = 0.0, none_w = 1.0;
  const int np = !joint ? 1 : e > 0 ? DPD_FS_GH_PARTNER : DPD_FS_GH_PARTNER_SMALL;
  const int nh = joint && e > 0 ? DPD_FS_GP_HALF : DPD_FS_GH_HALF;
  const double *pg = !joint ? &none_g : e > 0 ? law->gp_g : law->gs_g;
  const double *pw = !joint ? &none_w : e > 0 ? law->gp_w : law->gs_w;
  const double *og = joint && e > 0 ? law->gq_g : law->gh_g;
  const double *ow = joint && e > 0 ? law->gq_w : law->gh_w;
  const ex_chunk_fn kernel = DPD__ISA_CLONE_PICK(isa, ex_chunk);
  double sigma, k[EX_TERMS] = {0}, t[EX_TERMS][FS_CHUNK];
  ex_in in;
  int n = 0;
  if (!(var > 0.0)) {
    o->k1q = o->k2q = 0.0;
    return 1;
  }
  sigma = sqrt(var);
  /* (g_1, g) and (-g_1, -g) give the same terms (m, s2y, ms odd in y; my, s2, s2s even; T the
   * same), so g > 0 twice */
  for (int h1 = 0; h1 < np; h1++) {
    const double g1 = pg[h1], w1 = pw[h1];
    for (int h = 0; h < nh; h++) {
      const double g = og[h], wg = 2.0 * w1 * ow[h];
      for (int r = 0; r < rule->n; r++) {
        in.x[n] = beta1 * g1 * g1 + beta * g * g + rule->x[r];
        in.y[n] = ap * g1 + a * g;
        in.w[n] = wg * rule->w[r];
        in.g[n] = g;
        in.g1[n] = g1;
        if (++n == FS_CHUNK) {
          kernel(&in, n, c, sigma, t);
          ex_accumulate(t, n, k);
          n = 0;
        }
      }
    }
  }
  if (n > 0) {
    kernel(&in, n, c, sigma, t);
    ex_accumulate(t, n, k);
  }
  /* d sigma/da = -a/sigma, d sigma/dP = 1/sigma; the partner's share: d/d a1 = g1 d/dy -
   * (a1/sigma) d/dsigma (0 without a partner) */
  o->k1q = joint ? k[EX_K1Q] - ap / sigma * k[EX_K1S] : 0.0;
  o->k2q = joint ? k[EX_K2Q] - ap / sigma * k[EX_K2S] : 0.0;
  o->k1 = k[EX_K1];
  o->k2 = k[EX_K2];
  o->k1a = k[EX_K1Y] - a / sigma * k[EX_K1S];
  o->k2a = k[EX_K2Y] - a / sigma * k[EX_K2S];
  o->k1p = k[EX_K1S] / sigma;
  o->k2p = k[EX_K2S] / sigma;
  return 0;
}
