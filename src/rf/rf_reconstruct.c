/* The data-reconstruction attack on random features (rf_reconstruct.h): the loss, its
 * closed-form gradient, the restarted BFGS minimiser and the matching to the training inputs.
 * SPDX-License-Identifier: MIT
 *
 * References: M. Mondelli, lectures (seed 004), "How many parameters to reconstruct training
 * data?" (the attack, argmin over |x_hat_i| = sqrt(d) of |P-perp_{X_hat} theta*|^2); GSL 2.7
 * manual, section 39 (vector_bfgs2: Fletcher, "Practical methods of optimization", 2nd ed.,
 * algorithms 2.6.2 and 2.6.4); Nocedal & Wright, "Numerical Optimization", 2nd ed., §6.1.
 *
 * One evaluation of the loss at X (n x d), all products in BLAS:
 *   Z = X V^T (dgemm, n p d),  Phi = phi(Z), D = phi'(Z),
 *   G = Phi Phi^T + lambda I (dsyrk, n^2 p),  b = Phi theta (dgemv),
 *   a = G^{-1} b (dposv: Cholesky, n^3 / 3),  r = theta - Phi^T a (dgemv),
 *   L = (|r|^2 + lambda |a|^2) / |theta|^2,
 *   M = -2 / |theta|^2 (a r^T) .* D (one pass over n p),  dL/dX = M V (dgemm, n p d).
 * Cost O(n p d + n^2 p + n^3), memory 3 n p + n^2 + p + 2 n d doubles.
 *
 * Why the gradient is exact with the ridge: a minimises N(a) = |theta - Phi^T a|^2 +
 * lambda |a|^2 for the given Phi, so dL/dPhi is the partial derivative at fixed a (envelope
 * theorem): d/dPhi_kj |theta - Phi^T a|^2 = -2 a_k r_j. lambda is ridge p, fixed: it does not
 * depend on X (tests/unit/test_rf_reconstruct.c checks the gradient against central differences).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cblas.h> /* the CBLAS declarations; OpenBLAS provides them (CMakeLists.txt) */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <lapacke.h>

#include "core/error_impl.h"
#include "dpdyn/rf_reconstruct.h"
#include "dpdyn/rng.h"

struct dpd_rf_reconstruct_work {
  dpd_rf_features f;
  size_t n;
  double lambda; /* ridge p */
  double *Z;     /* [n p] pre-activations, then M */
  double *Phi;   /* [n p] */
  double *D;     /* [n p] phi'(Z) */
  double *G;     /* [n n] Gram + lambda I, then its Cholesky factor */
  double *a;     /* [n] */
  double *r;     /* [p] */
  double *X;     /* [n d] the rows on the sphere (run) */
  double *gX;    /* [n d] dL/dX (run) */
};

dpd_rf_reconstruct_config dpd_rf_reconstruct_config_default(void) {
  return (dpd_rf_reconstruct_config){.restarts = DPD_RF_RECONSTRUCT_RESTARTS,
                                     .max_iter = DPD_RF_RECONSTRUCT_MAX_ITER,
                                     .gtol = DPD_RF_RECONSTRUCT_GTOL,
                                     .stop_loss = DPD_RF_RECONSTRUCT_STOP_LOSS,
                                     .ridge = DPD_RF_RECONSTRUCT_RIDGE,
                                     .step = DPD_RF_RECONSTRUCT_STEP,
                                     .line_tol = DPD_RF_RECONSTRUCT_LINE_TOL,
                                     .stall_window = DPD_RF_RECONSTRUCT_STALL_WINDOW,
                                     .stall_tol = DPD_RF_RECONSTRUCT_STALL_TOL,
                                     .seed = 1,
                                     .stream = DPD_RF_RECONSTRUCT_STREAM};
}

void dpd_rf_reconstruct_work_free(dpd_rf_reconstruct_work *w) {
  if (w == NULL) {
    return;
  }
  free(w->Z);
  free(w->Phi);
  free(w->D);
  free(w->G);
  free(w->a);
  free(w->r);
  free(w->X);
  free(w->gX);
  free(w);
}

int dpd_rf_reconstruct_work_create(const dpd_rf_features *f, size_t n, double ridge,
                                   dpd_rf_reconstruct_work **out, dpd_err *err) {
  *out = NULL;
  if (f == NULL || f->V == NULL || f->p < 1 || f->d < 1 || n < 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: n, p, d >= 1 and the features' V)", n);
  }
  if (!(ridge > 0.0) || !isfinite(ridge)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'ridge': %g (allowed: finite > 0)", ridge);
  }
  if (isnan(dpd_rf_activation_deriv(f->activation, 0.0))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'activation': %d (allowed: an activation of rf.h)",
                    (int)f->activation);
  }
  const size_t p = f->p, d = f->d;
  if ((double)n * (double)p * 3.0 > (double)SIZE_MAX / 16.0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': %zu (allowed: n p below 2^59)", p);
  }
  dpd_rf_reconstruct_work *w = calloc(1, sizeof *w);
  if (w == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "reconstruct: out of memory");
  }
  w->f = *f;
  w->n = n;
  w->lambda = ridge * (double)p;
  w->Z = malloc(n * p * sizeof *w->Z);
  w->Phi = malloc(n * p * sizeof *w->Phi);
  w->D = malloc(n * p * sizeof *w->D);
  w->G = malloc(n * n * sizeof *w->G);
  w->a = malloc(n * sizeof *w->a);
  w->r = malloc(p * sizeof *w->r);
  w->X = malloc(n * d * sizeof *w->X);
  w->gX = malloc(n * d * sizeof *w->gX);
  if (w->Z == NULL || w->Phi == NULL || w->D == NULL || w->G == NULL || w->a == NULL ||
      w->r == NULL || w->X == NULL || w->gX == NULL) {
    dpd_rf_reconstruct_work_free(w);
    return DPD_FAIL(err, DPD_ENOMEM, "reconstruct: out of memory (n = %zu, p = %zu)", n, p);
  }
  *out = w;
  return DPD_OK;
}

double dpd_rf_reconstruct_loss_eval(dpd_rf_reconstruct_work *w, const double *theta,
                                    const double *X, double *grad, double *residual) {
  const size_t n = w->n, p = w->f.p, d = w->f.d, np = n * p;
  const int N = (int)n, P = (int)p, Dm = (int)d;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, P, Dm, 1.0, X, Dm, w->f.V, Dm, 0.0, w->Z,
              P);
  if (w->f.activation == DPD_RF_ACT_TANH) { /* tanh' = 1 - tanh^2: one tanh per entry, the bits
                                               of dpd_rf_activation_deriv */
    for (size_t k = 0; k < np; k++) {
      const double t = dpd_rf_activation_eval(DPD_RF_ACT_TANH, w->Z[k]);
      w->Phi[k] = t;
      w->D[k] = 1.0 - t * t;
    }
  } else {
    for (size_t k = 0; k < np; k++) {
      w->Phi[k] = dpd_rf_activation_eval(w->f.activation, w->Z[k]);
      w->D[k] = dpd_rf_activation_deriv(w->f.activation, w->Z[k]);
    }
  }
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, N, P, 1.0, w->Phi, P, 0.0, w->G, N);
  for (size_t i = 0; i < n; i++) {
    w->G[i * n + i] += w->lambda;
  }
  cblas_dgemv(CblasRowMajor, CblasNoTrans, N, P, 1.0, w->Phi, P, theta, 1, 0.0, w->a, 1);
  if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', N, 1, w->G, N, w->a, 1) != 0) {
    return NAN;
  }
  memcpy(w->r, theta, p * sizeof *w->r);
  cblas_dgemv(CblasRowMajor, CblasTrans, N, P, -1.0, w->Phi, P, w->a, 1, 1.0, w->r, 1);
  const double t2 = cblas_ddot(P, theta, 1, theta, 1);
  const double r2 = cblas_ddot(P, w->r, 1, w->r, 1);
  const double a2 = cblas_ddot(N, w->a, 1, w->a, 1);
  if (residual != NULL) {
    *residual = r2 / t2;
  }
  if (grad != NULL) {
    const double c = -2.0 / t2;
    for (size_t i = 0; i < n; i++) {
      const double ai = c * w->a[i];
      double *m = w->Z + i * p;
      const double *dd = w->D + i * p;
      for (size_t j = 0; j < p; j++) {
        m[j] = ai * w->r[j] * dd[j];
      }
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, Dm, P, 1.0, w->Z, P, w->f.V, Dm, 0.0,
                grad, Dm);
  }
  return (r2 + w->lambda * a2) / t2;
}

/* The minimiser's problem: z (n d) -> X on the spheres -> L, and dL/dz. */
typedef struct {
  dpd_rf_reconstruct_work *w;
  const double *theta;
  size_t evaluations;
} objective;

/* x_i = sqrt(d) z_i / |z_i| into w->X; the norms |z_i| into nz (may be NULL). */
static void to_sphere(const objective *o, const double *z, double *nz) {
  const size_t n = o->w->n, d = o->w->f.d;
  const double s = sqrt((double)d);
  for (size_t i = 0; i < n; i++) {
    double q = 0.0;
    for (size_t k = 0; k < d; k++) {
      q += z[i * d + k] * z[i * d + k];
    }
    const double norm = sqrt(q);
    for (size_t k = 0; k < d; k++) {
      o->w->X[i * d + k] = s * z[i * d + k] / norm;
    }
    if (nz != NULL) {
      nz[i] = norm;
    }
  }
}

static double obj_f(const gsl_vector *z, void *params) {
  objective *o = params;
  to_sphere(o, z->data, NULL);
  o->evaluations++;
  const double L = dpd_rf_reconstruct_loss_eval(o->w, o->theta, o->w->X, NULL, NULL);
  return isfinite(L) ? L : GSL_POSINF;
}

/* dL/dz_i = (sqrt(d) / |z_i|) (g_i - u_i (u_i . g_i)), u_i = z_i / |z_i|, g_i = dL/dx_i. */
static void obj_fdf(const gsl_vector *z, void *params, double *f, gsl_vector *g) {
  objective *o = params;
  const size_t n = o->w->n, d = o->w->f.d;
  const double s = sqrt((double)d);
  double *gz = g->data;
  to_sphere(o, z->data, NULL);
  o->evaluations++;
  const double L = dpd_rf_reconstruct_loss_eval(o->w, o->theta, o->w->X, o->w->gX, NULL);
  *f = isfinite(L) ? L : GSL_POSINF;
  for (size_t i = 0; i < n; i++) {
    const double *x = o->w->X + i * d, *gx = o->w->gX + i * d;
    double ug = 0.0, q = 0.0;
    for (size_t k = 0; k < d; k++) {
      ug += x[k] * gx[k];
      q += z->data[i * d + k] * z->data[i * d + k];
    }
    ug /= s; /* u . g with u = x / sqrt(d) */
    const double scale = s / sqrt(q);
    for (size_t k = 0; k < d; k++) {
      gz[i * d + k] = isfinite(L) ? scale * (gx[k] - x[k] / s * ug) : 0.0;
    }
  }
}

static void obj_df(const gsl_vector *z, void *params, gsl_vector *g) {
  double f;
  obj_fdf(z, params, &f, g);
}

static int check_config(const dpd_rf_reconstruct_config *c, dpd_err *err) {
  const char *bad = c->restarts < 1                                     ? "restarts"
                    : c->max_iter < 1                                   ? "max_iter"
                    : !(c->gtol >= 0.0) || !isfinite(c->gtol)           ? "gtol"
                    : !(c->stop_loss >= 0.0) || !isfinite(c->stop_loss) ? "stop_loss"
                    : !(c->ridge > 0.0) || !isfinite(c->ridge)          ? "ridge"
                    : !(c->step > 0.0) || !isfinite(c->step)            ? "step"
                    : !(c->line_tol > 0.0 && c->line_tol < 1.0)         ? "line_tol"
                    : !(c->stall_tol >= 0.0) || !isfinite(c->stall_tol) ? "stall_tol"
                                                                        : NULL;
  return bad == NULL
             ? DPD_OK
             : DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s' (allowed: restarts, max_iter >= 1; gtol, "
                        "stop_loss finite >= 0; ridge, step finite > 0; line_tol in (0, 1))",
                        bad);
}

/* One start from z0 (n d): BFGS until the gradient test, max_iter, no progress, or a stall (the
 * loss fell by less than stall_tol of its value stall_window iterations before; hist: the last
 * stall_window + 1 losses, a ring); the final point's rows on the sphere in X_out, its loss
 * returned. */
static double one_start(objective *o, gsl_multimin_fdfminimizer *m, gsl_vector *z0,
                        const dpd_rf_reconstruct_config *cfg, double *hist, double *X_out,
                        size_t *iterations) {
  const size_t nd = o->w->n * o->w->f.d;
  gsl_multimin_function_fdf fdf = {.f = obj_f, .df = obj_df, .fdf = obj_fdf, .n = nd, .params = o};
  if (gsl_multimin_fdfminimizer_set(m, &fdf, z0, cfg->step, cfg->line_tol) != GSL_SUCCESS) {
    return NAN;
  }
  size_t it = 0;
  int status = GSL_CONTINUE;
  while (status == GSL_CONTINUE && it < cfg->max_iter) {
    it++;
    if (gsl_multimin_fdfminimizer_iterate(m) != GSL_SUCCESS) {
      break; /* GSL_ENOPROG: no lower point along the line; keep the last point */
    }
    status = gsl_multimin_test_gradient(gsl_multimin_fdfminimizer_gradient(m), cfg->gtol);
    const size_t W = cfg->stall_window;
    if (W > 0) {
      const double L = gsl_multimin_fdfminimizer_minimum(m);
      hist[it % (W + 1)] = L;
      if (it > W && hist[(it - W) % (W + 1)] - L < cfg->stall_tol * hist[(it - W) % (W + 1)]) {
        break;
      }
    }
  }
  *iterations += it;
  const gsl_vector *z = gsl_multimin_fdfminimizer_x(m);
  to_sphere(o, z->data, NULL);
  memcpy(X_out, o->w->X, nd * sizeof *X_out);
  return dpd_rf_reconstruct_loss_eval(o->w, o->theta, X_out, NULL, NULL);
}

int dpd_rf_reconstruct_run(const dpd_rf_features *f, const double *theta, size_t n,
                           const dpd_rf_reconstruct_config *cfg, double *X_hat,
                           dpd_rf_reconstruct_info *info, dpd_err *err) {
  int status = check_config(cfg, err);
  if (status < 0) {
    return status;
  }
  double t2 = 0.0;
  for (size_t j = 0; j < f->p; j++) {
    t2 += theta[j] * theta[j];
  }
  if (!(t2 > 0.0) || !isfinite(t2)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta': |theta|^2 = %g (allowed: finite > 0)", t2);
  }
  dpd_rf_reconstruct_work *w = NULL;
  if ((status = dpd_rf_reconstruct_work_create(f, n, cfg->ridge, &w, err)) < 0) {
    return status;
  }
  const size_t d = f->d, nd = n * d;
  const double s = sqrt((double)d);
  gsl_multimin_fdfminimizer *m =
      gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, nd);
  gsl_vector *z0 = gsl_vector_alloc(nd);
  double *X = malloc(nd * sizeof *X), *hist = malloc((cfg->stall_window + 1) * sizeof *hist);
  if (m == NULL || z0 == NULL || X == NULL || hist == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "reconstruct: out of memory (n d = %zu)", nd);
  }
  objective o = {.w = w, .theta = theta};
  *info = (dpd_rf_reconstruct_info){.loss = NAN, .residual = NAN};
  for (size_t k = 0; status == DPD_OK && k < cfg->restarts; k++) {
    dpd_rng rng;
    dpd_rng_init(&rng, cfg->seed, cfg->stream + k);
    dpd_rng_gaussian_fill(&rng, z0->data, nd);
    for (size_t i = 0; i < n; i++) { /* rows on the sphere of radius sqrt(d) */
      double q = 0.0;
      for (size_t c = 0; c < d; c++) {
        q += z0->data[i * d + c] * z0->data[i * d + c];
      }
      for (size_t c = 0; c < d; c++) {
        z0->data[i * d + c] *= s / sqrt(q);
      }
    }
    const double L = one_start(&o, m, z0, cfg, hist, X, &info->iterations);
    info->restarts_run = k + 1;
    if (isfinite(L) && !(L >= info->loss)) {
      info->loss = L;
      info->best_restart = k;
      memcpy(X_hat, X, nd * sizeof *X_hat);
    }
    if (info->loss < cfg->stop_loss) {
      break;
    }
  }
  info->evaluations = o.evaluations;
  if (status == DPD_OK && !isfinite(info->loss)) {
    status = DPD_FAIL(err, DPD_ESOLVER, "reconstruct: every start failed (non-finite loss)");
  }
  if (status == DPD_OK) {
    (void)dpd_rf_reconstruct_loss_eval(w, theta, X_hat, NULL, &info->residual);
  }
  gsl_multimin_fdfminimizer_free(m);
  gsl_vector_free(z0);
  free(X);
  free(hist);
  dpd_rf_reconstruct_work_free(w);
  return status;
}

int dpd_rf_reconstruct_score_eval(const double *X_hat, size_t n_hat, const double *X, size_t n,
                                  size_t d, double threshold, dpd_rf_reconstruct_score *score,
                                  size_t *match, double *cosine, dpd_err *err) {
  if (n < 1 || n_hat < 1 || d < 1 || !(threshold > 0.0 && threshold <= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'threshold': %g (allowed: (0, 1], with n, n_hat, d >= 1)",
                    threshold);
  }
  double *C = malloc(n * n_hat * sizeof *C), *nx = malloc((n + n_hat) * sizeof *nx);
  size_t *m = malloc(n * sizeof *m), *used = calloc(n_hat, sizeof *used);
  if (C == NULL || nx == NULL || m == NULL || used == NULL) {
    free(C);
    free(nx);
    free(m);
    free(used);
    return DPD_FAIL(err, DPD_ENOMEM, "reconstruct: out of memory (n = %zu)", n);
  }
  for (size_t i = 0; i < n + n_hat; i++) {
    const double *x = i < n ? X + i * d : X_hat + (i - n) * d;
    double q = 0.0;
    for (size_t k = 0; k < d; k++) {
      q += x[k] * x[k];
    }
    nx[i] = sqrt(q);
  }
  size_t any = 0;
  for (size_t i = 0; i < n; i++) {
    double best = 0.0;
    for (size_t j = 0; j < n_hat; j++) {
      double q = 0.0;
      for (size_t k = 0; k < d; k++) {
        q += X[i * d + k] * X_hat[j * d + k];
      }
      C[i * n_hat + j] = q / (nx[i] * nx[n + j]);
      best = fmax(best, fabs(C[i * n_hat + j]));
    }
    any += best >= threshold;
    m[i] = SIZE_MAX;
  }
  /* greedy one-to-one matching by |cosine|, min(n, n_hat) pairs */
  const size_t pairs = n < n_hat ? n : n_hat;
  for (size_t k = 0; k < pairs; k++) {
    size_t bi = SIZE_MAX, bj = 0;
    double best = -1.0;
    for (size_t i = 0; i < n; i++) {
      for (size_t j = 0; j < n_hat && m[i] == SIZE_MAX; j++) {
        if (!used[j] && fabs(C[i * n_hat + j]) > best) {
          best = fabs(C[i * n_hat + j]);
          bi = i;
          bj = j;
        }
      }
    }
    m[bi] = bj;
    used[bj] = 1;
  }
  size_t matched = 0, flips = 0;
  double err_sum = 0.0, cos_sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    const double c = m[i] != SIZE_MAX ? C[i * n_hat + m[i]] : 0.0;
    double e = 0.0;
    for (size_t k = 0; k < d; k++) {
      const double diff = m[i] != SIZE_MAX
                              ? X_hat[m[i] * d + k] - (c < 0.0 ? -1.0 : 1.0) * X[i * d + k]
                              : X[i * d + k];
      e += diff * diff;
    }
    err_sum += sqrt(e) / sqrt((double)d);
    cos_sum += fabs(c);
    matched += fabs(c) >= threshold;
    flips += fabs(c) >= threshold && c < 0.0;
    if (match != NULL) {
      match[i] = m[i];
    }
    if (cosine != NULL) {
      cosine[i] = c;
    }
  }
  *score = (dpd_rf_reconstruct_score){.reconstructed_fraction = (double)any / (double)n,
                                      .matched_fraction = (double)matched / (double)n,
                                      .matching_error = err_sum / (double)n,
                                      .sign_flip_fraction =
                                          matched > 0 ? (double)flips / (double)matched : NAN,
                                      .cosine_mean = cos_sum / (double)n};
  free(C);
  free(nx);
  free(m);
  free(used);
  return DPD_OK;
}

int dpd_rf_reconstruct_inputs_get(const dpd_rf_config *cfg, double *X, dpd_err *err) {
  if (cfg->input != DPD_RF_INPUT_GAUSSIAN && cfg->input != DPD_RF_INPUT_SPHERE) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'input': %s (allowed: gaussian, sphere: inputs drawn from "
                    "the problem's streams)",
                    dpd_rf_input_name(cfg->input));
  }
  const size_t n = cfg->n, d = cfg->d;
  dpd_rng rng;
  dpd_rng_init(&rng, cfg->seed, DPD_RNG_STREAM_PROBLEM - DPD_RF_DRAW_STREAMS * cfg->draw - 2);
  dpd_rng_gaussian_fill(&rng, X, n * d);
  for (size_t i = 0; i < n && cfg->input == DPD_RF_INPUT_SPHERE; i++) {
    double q = 0.0; /* the order of rf.c's build_set: norm, scale, rows times scale */
    for (size_t k = 0; k < d; k++) {
      q += X[i * d + k] * X[i * d + k];
    }
    const double norm = sqrt(q), scale = norm > 0.0 ? sqrt((double)d) / norm : 0.0;
    for (size_t k = 0; k < d; k++) {
      X[i * d + k] *= scale;
    }
  }
  return DPD_OK;
}
