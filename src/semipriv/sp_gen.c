/* Semi-private learning: the large-margin low-rank data law of notes C.5 and its exact
 * population spectrum (semipriv.h).
 * SPDX-License-Identifier: MIT
 *
 * References: notes-rf-nc-sp.md C.5 (construction, margin); Mezzadri, Notices AMS 54 (2007) 592
 * (Haar Q from the QR of a Gaussian matrix with the signs of diag R); Piessens et al., QUADPACK
 * (Springer 1983) through GSL (qagiu for the outer integral); Abramowitz & Stegun 7.1, 6.5
 * (erf, the incomplete gamma function) for the closed-form factors. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_gamma.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "isa/isa_impl.h"
#include "dpdyn/rng.h"
#include "dpdyn/semipriv.h"
#include "core/dot_impl.h"
#include "semipriv/sp_impl.h"

static const double default_lambda[4] = {0.6, 0.5, 0.4, 0.3};

/* Quadrature of the population spectrum: outer relative tolerance, interval limit, and the
 * Gauss-Legendre rule for the z_1 factor (SP_GL_PANELS panels of SP_GL_POINTS points on
 * [0, trunc]). */
#define SP_QUAD_EPSREL 1e-10
#define SP_QUAD_LIMIT 2000
#define SP_GL_POINTS 32
#define SP_GL_PANELS 8

dpd_semipriv_gen_config dpd_semipriv_gen_config_default(void) {
  dpd_semipriv_gen_config c = {.d = 200,
                               .k_true = 5,
                               .a = 0.95,
                               .c = 1.0,
                               .s = 0.3,
                               .tau = 0.3,
                               .lambda = default_lambda,
                               .n_lambda = 4,
                               .nu = 0.02,
                               .trunc = 3.0,
                               .seed = 1};
  return c;
}

void dpd__semipriv_region(dpd_rng *rng, uint64_t seed, uint64_t stream, uint64_t tag,
                          uint64_t index) {
  dpd_rng_init(rng, seed, stream);
  rng->counter = (tag << 62) | (index << 32);
}

static int check_config(const dpd_semipriv_gen_config *c, dpd_err *err) {
  if (c->k_true < 1 || c->k_true > ((size_t)1 << 20)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'k_true': %zu (allowed: 1 .. 2^20)",
                    c->k_true);
  }
  if (c->d < c->k_true + 1 || c->d > 46340) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'd': %zu (allowed: k_true + 1 = %zu .. 46340)", c->d,
                    c->k_true + 1);
  }
  if (!(c->a > 0.0 && c->a < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'a': %g (allowed: 0 < a < 1)", c->a);
  }
  if (!(c->c > 0.0) || !isfinite(c->c)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c': %g (allowed: finite, > 0)", c->c);
  }
  if (!(c->s >= 0.0) || !isfinite(c->s)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 's': %g (allowed: finite, >= 0)", c->s);
  }
  if (!(c->tau >= 0.0) || !isfinite(c->tau)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'tau': %g (allowed: finite, >= 0)", c->tau);
  }
  if (!(c->nu >= 0.0) || !isfinite(c->nu)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'nu': %g (allowed: finite, >= 0)", c->nu);
  }
  if (!(c->trunc > 0.0) || !isfinite(c->trunc)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'trunc': %g (allowed: finite, > 0)",
                    c->trunc);
  }
  if (c->n_lambda != c->k_true - 1 || (c->n_lambda > 0 && c->lambda == NULL)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'lambda': %zu values (allowed: k_true - 1 = %zu values)",
                    c->n_lambda, c->k_true - 1);
  }
  for (size_t j = 0; j < c->n_lambda; j++) {
    if (!(c->lambda[j] > 0.0) || !isfinite(c->lambda[j])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'lambda': entry %zu is %g (allowed: finite, > 0)", j + 1,
                      c->lambda[j]);
    }
  }
  if (!(c->a * c->c - sqrt(1.0 - c->a * c->a) * c->tau > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'tau': %g (allowed: tau < a c / sqrt(1 - a^2) = %g, "
                    "else the law has no margin)",
                    c->tau, c->a * c->c / sqrt(1.0 - c->a * c->a));
  }
  return DPD_OK;
}

/* ---- population spectrum ------------------------------------------------------------------ */

/* The coordinate laws: FIRST z_1 = c + s h (h half-normal truncated to [0, T]; the sign y does
 * not enter z_1^2), GAUSS z = sigma g (g truncated standard normal), UNIF z = tau U. */
typedef enum { SP_FIRST = 0, SP_GAUSS, SP_UNIF } sp_law;

typedef struct {
  sp_law law;
  double scale; /* sigma or tau (FIRST: unused) */
  double mult;  /* how many coordinates share the law */
} sp_class;

typedef struct {
  const dpd_semipriv_gen_config *cfg;
  const sp_class *cls;
  size_t ncls, target;
  double ZT;                               /* erf(T / sqrt 2) = P(|g| <= T) */
  const gsl_integration_glfixed_table *gl; /* SP_GL_POINTS-point rule */
} sp_spec;

/* phi = E[e^{-t z^2}] and psi = E[z^2 e^{-t z^2}] of one coordinate law. */
static void law_moments(const sp_spec *sp, const sp_class *cl, double t, double *phi, double *psi) {
  const double T = sp->cfg->trunc;
  if (cl->law == SP_GAUSS) {
    const double s2 = cl->scale * cl->scale;
    if (s2 == 0.0) {
      *phi = 1.0;
      *psi = 0.0;
      return;
    }
    /* b = 1 + 2 t sigma^2, A = T sqrt(b): E[e^{-t s2 g^2}] = erf(A / sqrt 2) / (sqrt(b) Z_T),
     * E[s2 g^2 e^{-t s2 g^2}] = s2 (erf(A / sqrt 2) - 2 A phi(A)) / (Z_T b^{3/2}). */
    const double b = 1.0 + 2.0 * t * s2, A = T * sqrt(b);
    const double e = erf(A / M_SQRT2);
    *phi = e / (sqrt(b) * sp->ZT);
    *psi = s2 * (e - 2.0 * A * exp(-0.5 * A * A) / sqrt(2.0 * M_PI)) / (sp->ZT * b * sqrt(b));
    return;
  }
  if (cl->law == SP_UNIF) {
    const double tau = cl->scale, x = t * tau * tau, r = sqrt(x);
    if (tau == 0.0) {
      *phi = 1.0;
      *psi = 0.0;
      return;
    }
    if (x < 1e-300) {
      *phi = 1.0;
      *psi = tau * tau / 3.0;
      return;
    }
    /* int_0^1 e^{-x u^2} du = gamma(1/2, x) / (2 r); int_0^1 u^2 e^{-x u^2} du =
     * gamma(3/2, x) / (2 r^3) (lower incomplete gamma, through GSL's regularised P). */
    *phi = sqrt(M_PI) * gsl_sf_gamma_inc_P(0.5, x) / (2.0 * r);
    *psi = tau * tau * 0.5 * sqrt(M_PI) * gsl_sf_gamma_inc_P(1.5, x) / (2.0 * r * x);
    return;
  }
  /* FIRST: (2 / Z_T) int_0^T phi(h) e^{-t (c + s h)^2} (1, (c + s h)^2) dh by Gauss-Legendre. */
  const double c = sp->cfg->c, s = sp->cfg->s;
  if (s == 0.0) {
    *phi = exp(-t * c * c);
    *psi = c * c * *phi;
    return;
  }
  double f0 = 0.0, f2 = 0.0;
  const double width = T / SP_GL_PANELS;
  for (size_t p = 0; p < SP_GL_PANELS; p++) {
    const double lo = (double)p * width;
    for (size_t i = 0; i < SP_GL_POINTS; i++) {
      double h, wgt;
      gsl_integration_glfixed_point(lo, lo + width, i, &h, &wgt, sp->gl);
      const double z = c + s * h, z2 = z * z;
      const double v = wgt * exp(-0.5 * h * h - t * z2);
      f0 += v;
      f2 += v * z2;
    }
  }
  const double norm = 2.0 / (sqrt(2.0 * M_PI) * sp->ZT);
  *phi = norm * f0;
  *psi = norm * f2;
}

/* psi_target(t) prod_i phi_i(t)^mult_i / phi_target(t). */
static double outer_integrand(double t, void *params) {
  const sp_spec *sp = params;
  double logF = 0.0, ratio = 0.0;
  for (size_t i = 0; i < sp->ncls; i++) {
    double phi, psi;
    law_moments(sp, &sp->cls[i], t, &phi, &psi);
    if (!(phi > 0.0)) {
      return 0.0;
    }
    if (i == sp->target) {
      ratio = psi / phi;
      logF += (sp->cls[i].mult - 1.0) * log(phi);
      logF += log(phi);
    } else {
      logF += sp->cls[i].mult * log(phi);
    }
  }
  return ratio * exp(logF);
}

/* m_j = E[z_j^2 / |z|^2] for every coordinate (header). */
static int population_spectrum(const dpd_semipriv_gen_config *cfg, double *m, dpd_err *err) {
  const size_t K = cfg->k_true, d = cfg->d;
  const size_t ncls = K + 2;
  sp_class *cls = malloc(ncls * sizeof *cls);
  gsl_integration_workspace *w = gsl_integration_workspace_alloc(SP_QUAD_LIMIT);
  gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(SP_GL_POINTS);
  int status = DPD_OK;
  if (cls == NULL || w == NULL || gl == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (spectrum, k_true = %zu)", K);
    goto done;
  }
  cls[0] = (sp_class){SP_FIRST, 0.0, 1.0};
  for (size_t j = 1; j < K; j++) {
    cls[j] = (sp_class){SP_GAUSS, sqrt(cfg->lambda[j - 1]), 1.0};
  }
  cls[K] = (sp_class){SP_UNIF, cfg->tau, 1.0};
  cls[K + 1] = (sp_class){SP_GAUSS, cfg->nu, (double)(d - K - 1)};
  sp_spec sp = {.cfg = cfg, .cls = cls, .ncls = ncls, .ZT = erf(cfg->trunc / M_SQRT2), .gl = gl};
  double val[1] = {0.0};
  for (size_t i = 0; i < ncls && status == DPD_OK; i++) {
    if (i == K + 1 && d == K + 1) {
      break; /* no coordinate beyond K + 1 */
    }
    sp.target = i;
    gsl_function f = {.function = outer_integrand, .params = &sp};
    double abserr;
    int gs = gsl_integration_qagiu(&f, 0.0, 0.0, SP_QUAD_EPSREL, SP_QUAD_LIMIT, w, val, &abserr);
    if (gs != GSL_SUCCESS || !isfinite(val[0])) {
      status = DPD_FAIL(err, DPD_ESOLVER,
                        "semipriv: population spectrum: quadrature of coordinate class %zu "
                        "failed (%s)",
                        i, gsl_strerror(gs));
      break;
    }
    if (i < K) {
      m[i] = val[0];
    } else if (i == K) {
      m[K] = val[0];
    } else {
      for (size_t j = K + 1; j < d; j++) {
        m[j] = val[0];
      }
    }
  }
done:
  free(cls);
  gsl_integration_workspace_free(w);
  gsl_integration_glfixed_table_free(gl);
  return status;
}

/* ---- the generator ------------------------------------------------------------------------ */

/* Haar Q: QR of a d x d Gaussian matrix, columns signed by diag R (Mezzadri 2007). */
static int haar_q(size_t d, uint64_t seed, double *Q, dpd_err *err) {
  double *tau = malloc(d * sizeof *tau), *sgn = malloc(d * sizeof *sgn);
  int status = DPD_OK;
  if (tau == NULL || sgn == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (Q, d = %zu)", d);
    goto done;
  }
  dpd_rng rng;
  dpd_rng_init(&rng, seed, DPD_RNG_STREAM_PROBLEM);
  dpd_rng_gaussian_fill(&rng, Q, d * d);
  lapack_int info =
      LAPACKE_dgeqrf(LAPACK_COL_MAJOR, (lapack_int)d, (lapack_int)d, Q, (lapack_int)d, tau);
  if (info == 0) {
    for (size_t j = 0; j < d; j++) {
      sgn[j] = Q[j * d + j] < 0.0 ? -1.0 : 1.0;
    }
    info = LAPACKE_dorgqr(LAPACK_COL_MAJOR, (lapack_int)d, (lapack_int)d, (lapack_int)d, Q,
                          (lapack_int)d, tau);
  }
  if (info != 0) {
    status = DPD_FAIL(err, DPD_ESOLVER, "semipriv: QR of the Gaussian matrix failed (info = %d)",
                      (int)info);
    goto done;
  }
  for (size_t j = 0; j < d; j++) {
    if (sgn[j] < 0.0) {
      for (size_t i = 0; i < d; i++) {
        Q[j * d + i] = -Q[j * d + i];
      }
    }
  }
done:
  free(tau);
  free(sgn);
  return status;
}

void dpd_semipriv_gen_free(dpd_semipriv_gen *gen) {
  if (gen == NULL) {
    return;
  }
  free((double *)gen->cfg.lambda);
  free(gen->Q);
  free(gen->w_star);
  free(gen->coord_var);
  free(gen->eig);
  free(gen->order);
  free(gen);
}

int dpd_semipriv_gen_create(const dpd_semipriv_gen_config *cfg, dpd_semipriv_gen **out,
                            dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "semipriv: NULL config or output pointer");
  }
  int status = check_config(cfg, err);
  if (status < 0) {
    return status;
  }
  const size_t d = cfg->d, K = cfg->k_true;
  dpd_semipriv_gen *g = calloc(1, sizeof *g);
  double *lam = NULL;
  if (g == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory");
  }
  g->cfg = *cfg;
  g->cfg.lambda = NULL;
  g->d = d;
  g->k_true = K;
  lam = malloc((K > 1 ? K - 1 : 1) * sizeof *lam);
  g->cfg.lambda = lam;
  g->Q = malloc(d * d * sizeof *g->Q);
  g->w_star = calloc(d, sizeof *g->w_star);
  g->coord_var = malloc(d * sizeof *g->coord_var);
  g->eig = malloc(d * sizeof *g->eig);
  g->order = malloc(d * sizeof *g->order);
  if (lam == NULL || g->Q == NULL || g->w_star == NULL || g->coord_var == NULL || g->eig == NULL ||
      g->order == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (d = %zu)", d);
    goto fail;
  }
  double lam_sum = 0.0;
  for (size_t j = 0; j + 1 < K; j++) {
    lam[j] = cfg->lambda[j];
    lam_sum += lam[j];
  }
  if ((status = haar_q(d, cfg->seed, g->Q, err)) < 0) {
    goto fail;
  }
  const double b = sqrt(1.0 - cfg->a * cfg->a);
  for (size_t i = 0; i < d; i++) {
    g->w_star[i] = cfg->a * g->Q[i] + b * g->Q[K * d + i];
  }
  const double T = cfg->trunc;
  const double zmax2 = (cfg->c + T * cfg->s) * (cfg->c + T * cfg->s) + T * T * lam_sum +
                       cfg->tau * cfg->tau + T * T * cfg->nu * cfg->nu * (double)(d - K - 1);
  g->z_max = sqrt(zmax2);
  g->margin_guaranteed = (cfg->a * cfg->c - b * cfg->tau) / g->z_max;
  if ((status = population_spectrum(cfg, g->coord_var, err)) < 0) {
    goto fail;
  }
  double total = 0.0;
  for (size_t j = 0; j < d; j++) {
    total += g->coord_var[j];
  }
  g->var_sum_error = fabs(total - 1.0);
  /* decreasing order, ties in coordinate order (insertion sort on the K + 2 distinct values is
   * enough in practice, but d may be large: a stable merge-free approach by ranks) */
  for (size_t j = 0; j < d; j++) {
    g->order[j] = j;
  }
  /* coordinates beyond K + 1 share one value: sort the first K + 1 and merge the block */
  size_t head = K + 1 < d ? K + 1 : d;
  for (size_t i = 1; i < head; i++) {
    size_t v = g->order[i], j = i;
    while (j > 0 && g->coord_var[g->order[j - 1]] < g->coord_var[v]) {
      g->order[j] = g->order[j - 1];
      j--;
    }
    g->order[j] = v;
  }
  if (d > K + 1) {
    /* the block value m_rest: insert it after every head value >= it */
    const double rest = g->coord_var[K + 1];
    size_t *tmp = malloc(d * sizeof *tmp);
    if (tmp == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (d = %zu)", d);
      goto fail;
    }
    size_t pos = 0, h = 0;
    while (h < head && g->coord_var[g->order[h]] >= rest) {
      tmp[pos++] = g->order[h++];
    }
    for (size_t j = K + 1; j < d; j++) {
      tmp[pos++] = j;
    }
    while (h < head) {
      tmp[pos++] = g->order[h++];
    }
    memcpy(g->order, tmp, d * sizeof *tmp);
    free(tmp);
  }
  for (size_t i = 0; i < d; i++) {
    g->eig[i] = g->coord_var[g->order[i]];
  }
  *out = g;
  return DPD_OK;
fail:
  dpd_semipriv_gen_free(g);
  return status;
}

/* x_r = sum_j z_rj q_j for the rows r of a block of at most ROWS_BLOCK rows (one pass over Q
 * per block): every entry accumulates j = 0, 1, ..., d-1 in that order, whatever the block or
 * the vector width, so the bits depend on the row alone. */
#define ROWS_BLOCK 8
static inline __attribute__((always_inline)) int
rows_times_q_body(const double *restrict Z, const double *restrict Q, double *restrict X, size_t m,
                  size_t d) {
  for (size_t i0 = 0; i0 < m; i0 += ROWS_BLOCK) {
    const size_t nb = m - i0 < ROWS_BLOCK ? m - i0 : ROWS_BLOCK;
    for (size_t r = 0; r < nb; r++) {
      memset(X + (i0 + r) * d, 0, d * sizeof *X);
    }
    for (size_t j = 0; j < d; j++) {
      const double *restrict q = Q + j * d;
      for (size_t r = 0; r < nb; r++) {
        const double z = Z[(i0 + r) * d + j];
        double *restrict x = X + (i0 + r) * d;
        for (size_t l = 0; l < d; l++) {
          x[l] += z * q[l];
        }
      }
    }
  }
  return 0;
}
DPD__ISA_CLONES(int, rows_times_q,
                (const double *restrict Z, const double *restrict Q, double *restrict X, size_t m,
                 size_t d),
                rows_times_q_body(Z, Q, X, m, d))

void dpd_semipriv_gen_sample(const dpd_semipriv_gen *gen, uint64_t seed, uint64_t rep,
                             dpd_semipriv_set set, size_t first, size_t m, double *X, double *y,
                             double *work) {
  const size_t d = gen->d, K = gen->k_true;
  const dpd_semipriv_gen_config *c = &gen->cfg;
  const double T = c->trunc;
  for (size_t i = 0; i < m; i++) {
    double *z = work + i * d, u[2];
    dpd_rng rng;
    dpd__semipriv_region(&rng, seed, rep, (uint64_t)set, (uint64_t)(first + i));
    dpd_rng_uniform_fill(&rng, u, 2);
    dpd_rng_gaussian_fill(&rng, z, d);
    for (size_t j = 0; j < d; j++) {
      if (j != K && fabs(z[j]) > T) {
        double g;
        do {
          g = dpd_rng_gaussian(&rng);
        } while (fabs(g) > T);
        z[j] = g;
      }
    }
    const double yy = u[0] < 0.5 ? -1.0 : 1.0;
    z[0] = yy * (c->c + c->s * fabs(z[0]));
    for (size_t j = 1; j < K; j++) {
      z[j] *= sqrt(c->lambda[j - 1]);
    }
    z[K] = c->tau * (2.0 * u[1] - 1.0);
    for (size_t j = K + 1; j < d; j++) {
      z[j] *= c->nu;
    }
    y[i] = yy;
  }
  if (m == 0) {
    return;
  }
  /* X = Z Q (row-major Q whose rows are the q_j): row i is sum_j z_ij q_j, summed in the order
   * j = 0..d-1 for every entry, so a point has the same bits alone or in any batch, on any
   * path (a BLAS dgemm blocks and vectorises differently for different m and CPUs). */
  DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, rows_times_q)(work, gen->Q, X, m, d);
  for (size_t i = 0; i < m; i++) {
    const double *z = work + i * d;
    const double inv = 1.0 / sqrt(dpd__dot8(z, z, d));
    double *x = X + i * d;
    for (size_t l = 0; l < d; l++) {
      x[l] *= inv;
    }
  }
}

double dpd_semipriv_gen_eigengap(const dpd_semipriv_gen *gen, size_t k) {
  if (gen == NULL || k < 1 || k > gen->d) {
    return NAN;
  }
  return k == gen->d ? gen->eig[k - 1] : gen->eig[k - 1] - gen->eig[k];
}

double dpd_semipriv_gen_xi(const dpd_semipriv_gen *gen, size_t k) {
  if (gen == NULL || k < 1 || k > gen->d) {
    return NAN;
  }
  /* w* = a q_1 + b q_{K+1}: |A_k A_k^T w*|^2 = a^2 [q_1 in A_k] + b^2 [q_{K+1} in A_k] */
  const double a = gen->cfg.a;
  double s2 = 0.0;
  for (size_t i = 0; i < k; i++) {
    if (gen->order[i] == 0) {
      s2 += a * a;
    } else if (gen->order[i] == gen->k_true) {
      s2 += 1.0 - a * a;
    }
  }
  return 1.0 - sqrt(s2);
}

void dpd_semipriv_gen_top(const dpd_semipriv_gen *gen, size_t k, double *A) {
  const size_t d = gen->d;
  for (size_t i = 0; i < k && i < d; i++) {
    memcpy(A + i * d, gen->Q + gen->order[i] * d, d * sizeof *A);
  }
}

/* ---- measurements ------------------------------------------------------------------------- */

double dpd_semipriv_margin_min(const double *X, const double *y, size_t m, size_t d,
                               const double *w) {
  if (m == 0) {
    return NAN;
  }
  const double wn = sqrt(dpd__dot8(w, w, d));
  if (!(wn > 0.0)) {
    return NAN;
  }
  double best = INFINITY;
  for (size_t i = 0; i < m; i++) {
    const double *x = X + i * d;
    const double v = y[i] * dpd__dot8(w, x, d) / (wn * sqrt(dpd__dot8(x, x, d)));
    if (v < best) {
      best = v;
    }
  }
  return best;
}

double dpd_semipriv_xi(const double *A, size_t d, size_t k, const double *w) {
  double s2 = 0.0;
  for (size_t j = 0; j < k; j++) {
    const double p = dpd__dot8(A + j * d, w, d);
    s2 += p * p;
  }
  return 1.0 - sqrt(s2 / dpd__dot8(w, w, d));
}

size_t dpd_semipriv_subspace_work(size_t d, size_t k) {
  return d * k + 2 * k + d + 5 * k + 8;
}

int dpd_semipriv_subspace_dist(const double *A, const double *B, size_t d, size_t k, double *dist,
                               double *work, dpd_err *err) {
  /* R = B - A (A^T B), d x k column-major; |A A^T - B B^T| = sigma_max(R) for rank-k
   * projections (the sine of the largest principal angle; Golub & Van Loan 6.4.3). */
  double *R = work, *c = R + d * k, *s = c + k, *sw = s + k;
  memcpy(R, B, d * k * sizeof *R);
  for (size_t j = 0; j < k; j++) {
    const double *b = B + j * d;
    for (size_t i = 0; i < k; i++) {
      c[i] = dpd__dot8(A + i * d, b, d);
    }
    double *r = R + j * d;
    for (size_t i = 0; i < k; i++) {
      const double *ai = A + i * d;
      for (size_t l = 0; l < d; l++) {
        r[l] -= c[i] * ai[l];
      }
    }
  }
  lapack_int info =
      LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'N', (lapack_int)d, (lapack_int)k, R,
                          (lapack_int)d, s, NULL, 1, NULL, 1, sw, (lapack_int)(d + 5 * k + 8));
  if (info != 0) {
    return DPD_FAIL(err, DPD_ESOLVER,
                    "semipriv: dgesvd of the subspace difference failed "
                    "(info = %d)",
                    (int)info);
  }
  *dist = s[0];
  return DPD_OK;
}
