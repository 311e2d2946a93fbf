/* DP-SGD for linear classifiers on features (dpsgd.h; docs/dpsgd.md).
 * SPDX-License-Identifier: MIT
 *
 * A step reads the rows of its batch once each, in index order: the scores of the row (R
 * fixed-order dot products with the rows of W), its residual, the norm of its per-sample gradient
 * |r| sqrt(|x|^2 + bias) (|x|^2 computed once per training), and the clipped residual added to
 * the gradient sum, G_r += c r_r x (one sequential sum per entry of G, in batch order). The batch
 * kernel is compiled for scalar, AVX2 and AVX-512 (isa_impl.h); with -ffp-contract=off and the
 * fixed orders every copy gives the same bits. exp and log1p are libm's, called through one
 * function on every path. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dot_impl.h"
#include "core/error_impl.h"
#include "dpdyn/dpsgd.h"
#include "dpdyn/rng.h"
#include "isa/isa_impl.h"

/* Uniforms drawn per fill of the sampling (even, so chunked fills equal one fill). */
#define DPSGD_FILL 4096
/* T < 2^29: the regions 2 s and 2 s + 1 stay below index 2^30. */
#define DPSGD_STEPS_MAX ((size_t)1 << 29)

const char *dpd_dpsgd_loss_name(dpd_dpsgd_loss loss) {
  return loss == DPD_DPSGD_SOFTMAX    ? "ce"
         : loss == DPD_DPSGD_HINGE    ? "hinge"
         : loss == DPD_DPSGD_LOGISTIC ? "logistic"
                                      : NULL;
}

const char *dpd_dpsgd_sampling_name(dpd_dpsgd_sampling s) {
  return s == DPD_DPSGD_POISSON ? "poisson" : s == DPD_DPSGD_FIXED ? "fixed" : NULL;
}

dpd_dpsgd_config dpd_dpsgd_config_default(void) {
  dpd_dpsgd_config c = {.loss = DPD_DPSGD_SOFTMAX,
                        .classes = 2,
                        .bias = 1,
                        .sampling = DPD_DPSGD_POISSON,
                        .q = 0.01,
                        .batch = 0,
                        .epochs = 10.0,
                        .steps = 0,
                        .lr = 1.0,
                        .schedule = NULL,
                        .clip = 1.0,
                        .noise_multiplier = 0.0,
                        .seed = 1,
                        .stream = 0,
                        .tag = 0,
                        .progress = NULL,
                        .progress_user = NULL};
  return c;
}

static size_t rows_of(const dpd_dpsgd_config *cfg) {
  return cfg->loss == DPD_DPSGD_SOFTMAX ? cfg->classes : 1;
}

/* The sampling rate q (FIXED: batch / n). */
static double rate_of(const dpd_dpsgd_config *cfg, size_t n) {
  return cfg->sampling == DPD_DPSGD_FIXED ? (double)cfg->batch / (double)n : cfg->q;
}

static size_t steps_unchecked(const dpd_dpsgd_config *cfg, size_t n) {
  double t;
  if (cfg->steps > 0) {
    return cfg->steps;
  }
  t = ceil(cfg->epochs / rate_of(cfg, n) * (1.0 - 1e-12));
  return t >= (double)DPSGD_STEPS_MAX ? DPSGD_STEPS_MAX : t < 1.0 ? 1 : (size_t)t;
}

int dpd_dpsgd_check(const dpd_dpsgd_config *cfg, size_t n, size_t d, dpd_err *err) {
  if (dpd_dpsgd_loss_name(cfg->loss) == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'loss': %d (allowed: ce, hinge, logistic)",
                    (int)cfg->loss);
  }
  if (cfg->classes < 2 || (cfg->loss != DPD_DPSGD_SOFTMAX && cfg->classes != 2)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'classes': %zu (allowed: %s)",
                    cfg->classes,
                    cfg->loss == DPD_DPSGD_SOFTMAX ? ">= 2" : "2 with loss hinge or logistic");
  }
  if (n < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n': 0 (allowed: >= 1 training rows)");
  }
  if (d < 1 || (double)rows_of(cfg) * ((double)d + 1.0) >= 8589934592.0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'd': %zu (allowed: >= 1 with classes (d + 1) < 2^33)", d);
  }
  if (dpd_dpsgd_sampling_name(cfg->sampling) == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'sampling': %d (allowed: poisson, fixed)",
                    (int)cfg->sampling);
  }
  if (cfg->sampling == DPD_DPSGD_POISSON && !(cfg->q > 0.0 && cfg->q <= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'q': %g (allowed: 0 < q <= 1)", cfg->q);
  }
  if (cfg->sampling == DPD_DPSGD_FIXED && (cfg->batch < 1 || cfg->batch > n)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'batch': %zu (allowed: 1 .. %zu, the training rows)",
                    cfg->batch, n);
  }
  if (cfg->steps == 0 && !(cfg->epochs > 0.0 && isfinite(cfg->epochs))) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'epochs': %g (allowed: finite, > 0)",
                    cfg->epochs);
  }
  if (cfg->steps >= DPSGD_STEPS_MAX ||
      (cfg->steps == 0 && cfg->epochs / rate_of(cfg, n) >= (double)DPSGD_STEPS_MAX)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %g steps (allowed: fewer than 2^29 steps)",
                    cfg->steps > 0 ? "steps" : "epochs",
                    cfg->steps > 0 ? (double)cfg->steps : cfg->epochs / rate_of(cfg, n));
  }
  if (!(cfg->lr > 0.0 && isfinite(cfg->lr))) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'eta': %g (allowed: finite, > 0)",
                    cfg->lr);
  }
  if (!(cfg->clip > 0.0 && isfinite(cfg->clip))) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'clip': %g (allowed: finite, > 0)",
                    cfg->clip);
  }
  if (!(cfg->noise_multiplier >= 0.0 && isfinite(cfg->noise_multiplier))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'noise_multiplier': %g (allowed: finite, >= 0)",
                    cfg->noise_multiplier);
  }
  if (cfg->tag > 3) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'tag': %u (allowed: 0 .. 3)", cfg->tag);
  }
  return DPD_OK;
}

size_t dpd_dpsgd_steps(const dpd_dpsgd_config *cfg, size_t n) {
  return dpd_dpsgd_check(cfg, n, 1, NULL) < 0 ? 0 : steps_unchecked(cfg, n);
}

void dpd_dpsgd_account_of(const dpd_dpsgd_config *cfg, size_t n, double z, dpd_account *a,
                          dpd_account_segment *seg) {
  const int fixed = cfg->sampling == DPD_DPSGD_FIXED;
  memset(a, 0, sizeof *a);
  memset(seg, 0, sizeof *seg);
  seg->sigma = z;
  seg->q = fixed ? 1.0 : cfg->q;
  seg->batch = fixed ? cfg->batch : 1;
  seg->steps = steps_unchecked(cfg, n);
  a->mechanism = DPD_MECHANISM_SUBSAMPLED;
  a->sampling = fixed ? DPD_SAMPLING_FIXED : DPD_SAMPLING_POISSON;
  a->neighbours = fixed ? DPD_NEIGHBOURS_REPLACE_ONE : DPD_NEIGHBOURS_ADD_REMOVE;
  a->n = n;
  a->segments = seg;
  a->nsegments = 1;
}

int dpd_dpsgd_calibrate(const dpd_dpsgd_config *cfg, size_t n, double epsilon, double delta,
                        double *z, dpd_account_result *at, dpd_err *err) {
  dpd_account a;
  dpd_account_segment seg;
  dpd_account_result r;
  double zz;
  int status;
  if ((status = dpd_dpsgd_check(cfg, n, 1, err)) < 0) {
    return status;
  }
  if (!(epsilon > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'epsilon': %g (allowed: > 0, or inf)",
                    epsilon);
  }
  if (!(delta > 0.0 && delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'delta': %g (allowed: 0 < delta < 1)",
                    delta);
  }
  if (isinf(epsilon)) {
    *z = 0.0;
    return DPD_OK;
  }
  dpd_dpsgd_account_of(cfg, n, 1.0, &a, &seg);
  if ((status = dpd_account_sigma_for(&a, epsilon, delta, &zz, &r, err)) < 0) {
    return status;
  }
  *z = zz;
  if (at != NULL) {
    *at = r;
  }
  return DPD_OK;
}

/* ------------------------------------------------------------------------------------------ */

/* What the batch and evaluation kernels read. */
typedef struct {
  const double *X;   /* n x d */
  const double *xn2; /* |x_i|^2 + bias (training only) */
  const int32_t *y;
  size_t d, R, ld; /* ld = d + bias */
  int bias;
  dpd_dpsgd_loss loss;
  const double *W;
  double *G;     /* R x ld gradient sum (training only) */
  double *s;     /* R scores */
  double clip;
} kern;

/* The residual of a row from its scores s (R values) into r, and its loss; libm's exp/log1p
 * (the same function on every path). label outside 0 .. K-1 (evaluation only): residual
 * untouched, loss NaN. */
static __attribute__((noinline)) double residual(dpd_dpsgd_loss loss, const double *s, size_t R,
                                                 int32_t label, double *r) {
  if (loss == DPD_DPSGD_SOFTMAX) {
    double mx = s[0], sum = 0.0;
    if (label < 0 || (size_t)label >= R) {
      return NAN;
    }
    for (size_t k = 1; k < R; k++) {
      mx = s[k] > mx ? s[k] : mx;
    }
    for (size_t k = 0; k < R; k++) {
      r[k] = exp(s[k] - mx);
      sum += r[k];
    }
    for (size_t k = 0; k < R; k++) {
      r[k] /= sum;
    }
    r[label] -= 1.0;
    return log(sum) - (s[label] - mx);
  } else {
    const double yy = label == 1 ? 1.0 : -1.0, m = yy * s[0];
    if (label != 0 && label != 1) {
      return NAN;
    }
    if (loss == DPD_DPSGD_HINGE) {
      r[0] = m < 1.0 ? -yy : 0.0;
      return m < 1.0 ? 1.0 - m : 0.0;
    }
    r[0] = -yy / (1.0 + exp(m));
    return m > 0.0 ? log1p(exp(-m)) : -m + log1p(exp(m));
  }
}

static inline __attribute__((always_inline)) void scores_body(const kern *a, const double *x) {
  for (size_t k = 0; k < a->R; k++) {
    const double *w = a->W + k * a->ld;
    a->s[k] = dpd__dot8(x, w, a->d) + (a->bias ? w[a->d] : 0.0);
  }
}

/* The clipped gradient sum of the batch idx[0..m) added to a->G; returns the number of clipped
 * per-sample gradients. r: R doubles. */
static inline __attribute__((always_inline)) size_t batch_body(const kern *a, const size_t *idx,
                                                               size_t m, double *r) {
  size_t clipped = 0;
  for (size_t b = 0; b < m; b++) {
    const size_t i = idx[b];
    const double *x = a->X + i * a->d;
    double rn2 = 0.0, c = 1.0, gn;
    scores_body(a, x);
    (void)residual(a->loss, a->s, a->R, a->y[i], r);
    for (size_t k = 0; k < a->R; k++) {
      rn2 += r[k] * r[k];
    }
    gn = sqrt(rn2 * a->xn2[i]);
    if (gn > a->clip) {
      c = a->clip / gn;
      clipped++;
    }
    for (size_t k = 0; k < a->R; k++) {
      double *g = a->G + k * a->ld;
      const double coef = c * r[k];
      if (coef == 0.0) {
        continue;
      }
      for (size_t j = 0; j < a->d; j++) {
        g[j] += coef * x[j];
      }
      if (a->bias) {
        g[a->d] += coef;
      }
    }
  }
  return clipped;
}
DPD__ISA_CLONES(size_t, dpsgd_batch, (const kern *a, const size_t *idx, size_t m, double *r),
                batch_body(a, idx, m, r))

/* |x_i|^2 for rows first .. first + m - 1 into out. */
static inline __attribute__((always_inline)) int norms_body(const double *X, size_t d, size_t m,
                                                            double *out) {
  for (size_t i = 0; i < m; i++) {
    out[i] = dpd__dot8(X + i * d, X + i * d, d);
  }
  return 0;
}
DPD__ISA_CLONES(int, dpsgd_norms, (const double *X, size_t d, size_t m, double *out),
                norms_body(X, d, m, out))

/* Evaluation of rows 0 .. m-1: correct predictions (labels compared when y != NULL), the loss sum
 * into *loss (when y != NULL), predictions into pred (NULL allowed). r: R doubles. */
static inline __attribute__((always_inline)) size_t eval_body(const kern *a, size_t m, double *r,
                                                              double *loss, int32_t *pred) {
  size_t correct = 0;
  double sum = 0.0;
  for (size_t i = 0; i < m; i++) {
    int32_t p = 0;
    scores_body(a, a->X + i * a->d);
    if (a->loss == DPD_DPSGD_SOFTMAX) {
      for (size_t k = 1; k < a->R; k++) {
        p = a->s[k] > a->s[p] ? (int32_t)k : p;
      }
    } else {
      p = a->s[0] > 0.0 ? 1 : 0;
    }
    if (pred != NULL) {
      pred[i] = p;
    }
    if (a->y != NULL) {
      correct += a->y[i] == p;
      sum += residual(a->loss, a->s, a->R, a->y[i], r);
    }
  }
  *loss = sum;
  return correct;
}
DPD__ISA_CLONES(size_t, dpsgd_eval, (const kern *a, size_t m, double *r, double *loss,
                                     int32_t *pred),
                eval_body(a, m, r, loss, pred))

/* ------------------------------------------------------------------------------------------ */

static void region(dpd_rng *rng, const dpd_dpsgd_config *cfg, uint64_t index) {
  dpd_rng_init(rng, cfg->seed, cfg->stream);
  rng->counter = ((uint64_t)cfg->tag << 62) | (index << 32);
}

/* The batch of step s into idx; returns its size. u: DPSGD_FILL doubles. */
static size_t draw_batch(const dpd_dpsgd_config *cfg, size_t n, size_t s, size_t *idx,
                         double *u) {
  dpd_rng rng;
  size_t m = 0;
  region(&rng, cfg, 2 * (uint64_t)s);
  for (size_t first = 0; first < n; first += DPSGD_FILL) {
    const size_t len = n - first < DPSGD_FILL ? n - first : DPSGD_FILL;
    dpd_rng_uniform_fill(&rng, u, len);
    if (cfg->sampling == DPD_DPSGD_POISSON) {
      for (size_t j = 0; j < len; j++) {
        if (u[j] < cfg->q) {
          idx[m++] = first + j;
        }
      }
    } else {
      for (size_t j = 0; j < len; j++) {
        const size_t i = first + j;
        if (u[j] * (double)(n - i) < (double)(cfg->batch - m)) {
          idx[m++] = i;
        }
      }
    }
  }
  return m;
}

static dpd_dpsgd_model *model_new(const dpd_dpsgd_config *cfg, size_t d) {
  dpd_dpsgd_model *m = calloc(1, sizeof *m);
  if (m == NULL) {
    return NULL;
  }
  m->loss = cfg->loss;
  m->classes = cfg->classes;
  m->d = d;
  m->rows = rows_of(cfg);
  m->bias = cfg->bias != 0;
  m->noise_multiplier = cfg->noise_multiplier;
  m->clip = cfg->clip;
  m->lr = cfg->lr;
  m->W = calloc(m->rows * (d + (size_t)m->bias), sizeof *m->W);
  if (m->W == NULL) {
    free(m);
    return NULL;
  }
  return m;
}

void dpd_dpsgd_model_free(dpd_dpsgd_model *m) {
  if (m != NULL) {
    free(m->W);
    free(m);
  }
}

static kern kern_of(const dpd_dpsgd_model *m, const double *X, const int32_t *y, double *s) {
  kern a = {.X = X,
            .y = y,
            .d = m->d,
            .R = m->rows,
            .ld = m->d + (size_t)m->bias,
            .bias = m->bias,
            .loss = m->loss,
            .W = m->W,
            .s = s,
            .clip = m->clip};
  return a;
}

/* Evaluates rows 0 .. rows-1 (see eval_body); SIZE_MAX when out of memory. */
static size_t evaluate(const dpd_dpsgd_model *m, const double *X, const int32_t *y, size_t rows,
                       double *loss, int32_t *pred) {
  size_t (*kernel)(const kern *, size_t, double *, double *, int32_t *) =
      DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, dpsgd_eval);
  double *sr = malloc(2 * m->rows * sizeof *sr);
  size_t correct = SIZE_MAX;
  if (sr != NULL) {
    kern a = kern_of(m, X, y, sr);
    correct = kernel(&a, rows, sr + m->rows, loss, pred);
  }
  free(sr);
  return correct;
}

void dpd_dpsgd_evaluate(const dpd_dpsgd_model *m, const double *X, const int32_t *y,
                        size_t m_rows, double *accuracy, double *loss) {
  double sum = NAN;
  size_t correct = m_rows > 0 ? evaluate(m, X, y, m_rows, &sum, NULL) : SIZE_MAX;
  if (accuracy != NULL) {
    *accuracy = correct != SIZE_MAX ? (double)correct / (double)m_rows : NAN;
  }
  if (loss != NULL) {
    *loss = correct != SIZE_MAX ? sum / (double)m_rows : NAN;
  }
}

void dpd_dpsgd_predict(const dpd_dpsgd_model *m, const double *X, size_t m_rows, int32_t *pred) {
  double sum;
  if (m_rows > 0 && evaluate(m, X, NULL, m_rows, &sum, pred) == SIZE_MAX) {
    for (size_t i = 0; i < m_rows; i++) {
      pred[i] = -1;
    }
  }
}

/* The labels in 0 .. K-1 (binary losses: 0 or 1). */
static int labels_check(const int32_t *y, size_t n, size_t K, dpd_err *err) {
  for (size_t i = 0; i < n; i++) {
    if (y[i] < 0 || (size_t)y[i] >= K) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'labels': %ld in row %zu (allowed: integers 0 .. %zu)",
                      (long)y[i], i + 1, K - 1);
    }
  }
  return DPD_OK;
}

/* The steps, with every buffer allocated by the caller. */
static int train_steps(const dpd_dpsgd_config *cfg, kern *a, dpd_dpsgd_model *m, size_t n,
                       size_t *idx, double *u, double *xi, double *r, dpd_err *err) {
  size_t (*kernel)(const kern *, const size_t *, size_t, double *) =
      DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, dpsgd_batch);
  const size_t T = steps_unchecked(cfg, n), P = m->rows * a->ld;
  const double b = cfg->sampling == DPD_DPSGD_FIXED ? (double)cfg->batch : cfg->q * (double)n;
  const double zc = cfg->noise_multiplier * cfg->clip;
  double batch_sum = 0.0, clipped = 0.0;
  for (size_t s = 0; s < T; s++) {
    const double lr =
        cfg->lr * (cfg->schedule != NULL ? dpd_schedule_eval(cfg->schedule, (double)s / T) : 1.0);
    const size_t mb = draw_batch(cfg, n, s, idx, u);
    dpd_rng rng;
    int finite = 1;
    memset(a->G, 0, P * sizeof *a->G);
    clipped += (double)kernel(a, idx, mb, r);
    batch_sum += (double)mb;
    if (zc > 0.0) {
      region(&rng, cfg, 2 * (uint64_t)s + 1);
      dpd_rng_gaussian_fill(&rng, xi, P);
    }
    for (size_t j = 0; j < P; j++) {
      const double g = zc > 0.0 ? a->G[j] + zc * xi[j] : a->G[j];
      m->W[j] -= lr / b * g;
      finite &= isfinite(m->W[j]);
    }
    if (!finite) {
      return DPD_FAIL(err, DPD_ENONFINITE,
                      "DP-SGD diverged: the weights are not finite after step %zu of %zu "
                      "(eta = %g: try a smaller 'eta')",
                      s + 1, T, cfg->lr);
    }
    if (cfg->progress != NULL && cfg->progress(cfg->progress_user, s + 1, T) != 0) {
      return DPD_FAIL(err, DPD_ECANCELLED, "DP-SGD stopped after step %zu of %zu", s + 1, T);
    }
  }
  m->steps = T;
  m->mean_batch = batch_sum / (double)T;
  m->clipped_fraction = batch_sum > 0.0 ? clipped / batch_sum : 0.0;
  return DPD_OK;
}

int dpd_dpsgd_train(const dpd_dpsgd_config *cfg, const double *X, const int32_t *y, size_t n,
                    size_t d, dpd_dpsgd_model **out, dpd_err *err) {
  dpd_dpsgd_model *m = NULL;
  size_t *idx = NULL;
  double *xn2 = NULL, *u = NULL, *xi = NULL, *G = NULL, *sr = NULL;
  int status;
  if ((status = dpd_dpsgd_check(cfg, n, d, err)) < 0 ||
      (status = labels_check(y, n, cfg->classes, err)) < 0) {
    return status;
  }
  m = model_new(cfg, d);
  idx = malloc(n * sizeof *idx);
  xn2 = malloc(n * sizeof *xn2);
  u = malloc(DPSGD_FILL * sizeof *u);
  if (m != NULL) {
    const size_t P = m->rows * (d + (size_t)m->bias);
    xi = malloc(P * sizeof *xi);
    G = malloc(P * sizeof *G);
    sr = malloc(2 * m->rows * sizeof *sr);
  }
  if (m == NULL || idx == NULL || xn2 == NULL || u == NULL || xi == NULL || G == NULL ||
      sr == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory for DP-SGD (n = %zu, d = %zu)", n, d);
  } else {
    int (*norms)(const double *, size_t, size_t, double *) =
        DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, dpsgd_norms);
    kern a = kern_of(m, X, y, sr);
    (void)norms(X, d, n, xn2);
    for (size_t i = 0; i < n; i++) {
      xn2[i] += (double)m->bias;
    }
    a.xn2 = xn2;
    a.G = G;
    status = train_steps(cfg, &a, m, n, idx, u, xi, sr + m->rows, err);
    if (status == DPD_OK) {
      dpd_dpsgd_evaluate(m, X, y, n, &m->train_accuracy, &m->train_loss);
    }
  }
  free(idx);
  free(xn2);
  free(u);
  free(xi);
  free(G);
  free(sr);
  if (status < 0) {
    dpd_dpsgd_model_free(m);
    return status;
  }
  *out = m;
  return DPD_OK;
}
