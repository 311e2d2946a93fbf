/* Neural collapse: the problem (ETF, class sizes, shifts) and the NoisyGD simulator (nc.h).
 * SPDX-License-Identifier: MIT
 *
 * Every sum has a fixed order that depends on nothing but the problem and the replicate, so a
 * run is bit-identical for any thread count (threads only take whole replicates). */
#include "dpdyn/nc.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/rng.h"
#include "core/dot_impl.h"
#include "nc/nc_impl.h"

/* Region layout of a stream (nc.h): tag in bits 62-63, index in bits 32-61. */
#define NC_TAG_TRAIN UINT64_C(0)
#define NC_TAG_TEST UINT64_C(1)
#define NC_TAG_NOISE UINT64_C(2)
#define NC_INDEX_MAX (UINT64_C(1) << 30)
#define NC_REGION_BLOCKS (UINT64_C(1) << 32)
/* Noise is drawn in chunks of this many values (even, so chunked fills equal one fill). */
#define NC_CHUNK 4096

static void region_init(dpd_rng *rng, uint64_t seed, uint64_t stream, uint64_t tag,
                        uint64_t index) {
  dpd_rng_init(rng, seed, stream);
  rng->counter = (tag << 62) | (index << 32);
}

dpd_nc_problem_config dpd_nc_problem_config_default(void) {
  dpd_nc_problem_config c = {.K = 10,
                             .p = 100,
                             .n = 1000,
                             .n_test = 1000,
                             .etf = DPD_NC_ETF_SPARSE,
                             .imbalance_ratio = 1.0,
                             .imbalance_fraction = 0.0,
                             .shift = DPD_NC_SHIFT_NONE,
                             .beta = 0.0,
                             .offset = 0.0,
                             .test_shift = DPD_NC_SHIFT_NONE,
                             .beta_test = 0.0,
                             .offset_at_test = 0,
                             .normalize = DPD_NC_NORMALIZE_NONE,
                             .seed = 1};
  return c;
}

int dpd_nc_class_counts(size_t K, size_t total, double imbalance_ratio, double imbalance_fraction,
                        const char *what, size_t *counts, dpd_err *err) {
  if (what == NULL) {
    what = "n";
  }
  if (K < 2 || counts == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'K': %zu (allowed: integer >= 2)", K);
  }
  if (!(imbalance_ratio >= 1.0) || !isfinite(imbalance_ratio)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'imbalance_ratio': %g (allowed: finite, >= 1)",
                    imbalance_ratio);
  }
  if (!(imbalance_fraction >= 0.0) || !(imbalance_fraction < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'imbalance_fraction': %g (allowed: in [0, 1))",
                    imbalance_fraction);
  }
  const size_t m = (size_t)floor(imbalance_fraction * (double)K + 1e-9);
  const double wsum = (double)(K - m) * imbalance_ratio + (double)m;
  size_t used = 0;
  for (size_t k = 0; k < K; k++) {
    const double w = k < K - m ? imbalance_ratio : 1.0;
    counts[k] = (size_t)floor((double)total * w / wsum);
    if (counts[k] > total - used) { /* rounding guard */
      counts[k] = total - used;
    }
    used += counts[k];
  }
  for (size_t k = 0; used < total; k = (k + 1) % K) {
    counts[k]++;
    used++;
  }
  for (size_t k = 0; k < K; k++) {
    if (counts[k] == 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %zu (allowed: every class gets >= 1 sample; "
                      "class %zu gets none with K = %zu, imbalance_ratio = %g, "
                      "imbalance_fraction = %g)",
                      what, total, k, K, imbalance_ratio, imbalance_fraction);
    }
  }
  return DPD_OK;
}

static int validate_problem(const dpd_nc_problem_config *c, dpd_err *err) {
  if (c->K < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'K': %zu (allowed: integer >= 2)", c->K);
  }
  if (c->p < c->K || c->p / c->K >= ((size_t)1 << 33) / c->K) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'p': %zu (allowed: integer >= K = %zu, p K < 2^33)", c->p,
                    c->K);
  }
  if (c->n < 1 || c->n >= NC_INDEX_MAX) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n': %zu (allowed: 1 .. 2^30 - 1)", c->n);
  }
  if (c->n_test < 1 || c->n_test >= NC_INDEX_MAX) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n_test': %zu (allowed: 1 .. 2^30 - 1)",
                    c->n_test);
  }
  if (c->etf != DPD_NC_ETF_SPARSE && c->etf != DPD_NC_ETF_DENSE) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'etf': %d (allowed: sparse, dense)",
                    (int)c->etf);
  }
  if (c->shift != DPD_NC_SHIFT_NONE && c->shift != DPD_NC_SHIFT_CUBE &&
      c->shift != DPD_NC_SHIFT_RADEMACHER) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'shift': %d (allowed: none, cube, rademacher)",
                    (int)c->shift);
  }
  if (c->test_shift != DPD_NC_SHIFT_NONE && c->test_shift != DPD_NC_SHIFT_CUBE &&
      c->test_shift != DPD_NC_SHIFT_RADEMACHER && c->test_shift != DPD_NC_SHIFT_ADVERSARIAL &&
      c->test_shift != DPD_NC_SHIFT_GAUSSIAN) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test': %d (allowed: none, cube, rademacher, adversarial, "
                    "gaussian)",
                    (int)c->test_shift);
  }
  if (!(c->beta >= 0.0) || !isfinite(c->beta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'beta': %g (allowed: finite, >= 0)",
                    c->beta);
  }
  if (!(c->offset >= 0.0) || !isfinite(c->offset)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'offset': %g (allowed: finite, >= 0)",
                    c->offset);
  }
  if (!(c->beta_test >= 0.0) || !isfinite(c->beta_test)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'beta_test': %g (allowed: finite, >= 0)",
                    c->beta_test);
  }
  if (c->normalize != DPD_NC_NORMALIZE_NONE && c->normalize != DPD_NC_NORMALIZE_CENTER &&
      c->normalize != DPD_NC_NORMALIZE_L2 && c->normalize != DPD_NC_NORMALIZE_CENTER_L2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': %d (allowed: none, center, l2, center_l2)",
                    (int)c->normalize);
  }
  if ((c->normalize == DPD_NC_NORMALIZE_CENTER || c->normalize == DPD_NC_NORMALIZE_CENTER_L2) &&
      c->n < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: >= 2 with normalize = center or "
                    "center_l2)",
                    c->n);
  }
  return DPD_OK;
}

/* P from the QR of a seeded Gaussian p x K matrix; M_k = s (P_k - mean_j P_j). */
static int dense_etf(const dpd_nc_problem_config *c, double *M, dpd_err *err) {
  const size_t K = c->K, p = c->p;
  double *A = malloc(K * p * sizeof *A), *tau = malloc(K * sizeof *tau);
  int status = DPD_OK;
  if (A == NULL || tau == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "nc: out of memory (dense ETF, p = %zu, K = %zu)", p, K);
    goto done;
  }
  dpd_rng rng;
  dpd_rng_init(&rng, c->seed, DPD_RNG_STREAM_PROBLEM);
  dpd_rng_gaussian_fill(&rng, A, K * p); /* column-major p x K */
  lapack_int info =
      LAPACKE_dgeqrf(LAPACK_COL_MAJOR, (lapack_int)p, (lapack_int)K, A, (lapack_int)p, tau);
  if (info == 0) {
    info = LAPACKE_dorgqr(LAPACK_COL_MAJOR, (lapack_int)p, (lapack_int)K, (lapack_int)K, A,
                          (lapack_int)p, tau);
  }
  if (info != 0) {
    status = DPD_FAIL(err, DPD_ESOLVER, "nc: dense ETF: QR failed (info = %d; p = %zu, K = %zu)",
                      (int)info, p, K);
    goto done;
  }
  const double s = sqrt((double)K / (double)(K - 1));
  for (size_t l = 0; l < p; l++) {
    double mean = 0.0;
    for (size_t k = 0; k < K; k++) {
      mean += A[k * p + l];
    }
    mean /= (double)K;
    for (size_t k = 0; k < K; k++) {
      M[k * p + l] = s * (A[k * p + l] - mean);
    }
  }
done:
  free(A);
  free(tau);
  return status;
}

int dpd_nc_problem_create(const dpd_nc_problem_config *cfg, dpd_nc_problem **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc: NULL config or output pointer");
  }
  int status = validate_problem(cfg, err);
  if (status < 0) {
    return status;
  }
  const size_t K = cfg->K, p = cfg->p;
  dpd_nc_problem *pr = calloc(1, sizeof *pr);
  if (pr == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "nc: out of memory");
  }
  pr->cfg = *cfg;
  pr->K = K;
  pr->p = p;
  pr->n = cfg->n;
  pr->n_test = cfg->n_test;
  pr->M = calloc(K * p, sizeof *pr->M);
  pr->nu = calloc(p, sizeof *pr->nu);
  pr->counts = malloc(K * sizeof *pr->counts);
  pr->test_counts = malloc(K * sizeof *pr->test_counts);
  if (pr->M == NULL || pr->nu == NULL || pr->counts == NULL || pr->test_counts == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "nc: out of memory (p = %zu, K = %zu)", p, K);
    goto fail;
  }
  status = dpd_nc_class_counts(K, cfg->n, cfg->imbalance_ratio, cfg->imbalance_fraction, "n",
                               pr->counts, err);
  if (status < 0) {
    goto fail;
  }
  status = dpd_nc_class_counts(K, cfg->n_test, cfg->imbalance_ratio, cfg->imbalance_fraction,
                               "n_test", pr->test_counts, err);
  if (status < 0) {
    goto fail;
  }
  if (cfg->etf == DPD_NC_ETF_SPARSE) {
    const double s = sqrt((double)K / (double)(K - 1));
    for (size_t k = 0; k < K; k++) {
      for (size_t l = 0; l < K; l++) {
        pr->M[k * p + l] = s * ((l == k ? 1.0 : 0.0) - 1.0 / (double)K);
      }
    }
  } else {
    status = dense_etf(cfg, pr->M, err);
    if (status < 0) {
      goto fail;
    }
  }
  if (cfg->offset > 0.0) {
    dpd_rng rng;
    region_init(&rng, cfg->seed, DPD_RNG_STREAM_PROBLEM, 0, 1);
    dpd_rng_uniform_fill(&rng, pr->nu, p);
    for (size_t l = 0; l < p; l++) {
      pr->nu[l] = pr->nu[l] < 0.5 ? -cfg->offset : cfg->offset;
    }
  }
  const double b = cfg->shift == DPD_NC_SHIFT_NONE ? 0.0 : cfg->beta;
  double best = 0.0, best0 = 0.0;
  for (size_t k = 0; k < K; k++) {
    double s2 = 0.0, s20 = 0.0;
    for (size_t l = 0; l < p; l++) {
      const double a = fabs(pr->M[k * p + l] + pr->nu[l]) + b;
      const double a0 = fabs(pr->M[k * p + l]) + b;
      s2 += a * a;
      s20 += a0 * a0;
    }
    best = s2 > best ? s2 : best;
    best0 = s20 > best0 ? s20 : best0;
  }
  pr->x_norm_max = sqrt(best);
  pr->x_norm_max_clean = sqrt(best0);
  *out = pr;
  return DPD_OK;
fail:
  dpd_nc_problem_free(pr);
  return status;
}

void dpd_nc_problem_free(dpd_nc_problem *problem) {
  if (problem == NULL) {
    return;
  }
  free(problem->M);
  free(problem->nu);
  free(problem->counts);
  free(problem->test_counts);
  free(problem->order);
  free(problem->test_order);
  free(problem->data);
  free(problem);
}

/* Counts per class of `labels` and the class order (stable): order[i] = the row of the i-th
 * sample in class order. */
static int class_order(size_t K, size_t n, const size_t *labels, const char *key, size_t *counts,
                       size_t *order, dpd_err *err) {
  memset(counts, 0, K * sizeof *counts);
  for (size_t i = 0; i < n; i++) {
    if (labels[i] >= K) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': label %zu in row %zu (allowed: 0 .. K - 1 = %zu)",
                      key, labels[i], i + 1, K - 1);
    }
    counts[labels[i]]++;
  }
  size_t *next = malloc(K * sizeof *next);
  if (next == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "nc: out of memory (K = %zu)", K);
  }
  for (size_t k = 0, at = 0; k < K; k++) {
    if (counts[k] == 0) {
      free(next);
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': class %zu has no row (allowed: every class 0 .. "
                      "K - 1 = %zu has >= 1 row)",
                      key, k, K - 1);
    }
    next[k] = at;
    at += counts[k];
  }
  for (size_t i = 0; i < n; i++) {
    order[next[labels[i]]++] = i;
  }
  free(next);
  return DPD_OK;
}

static int finite_rows(const double *X, size_t n, size_t p, const char *key, dpd_err *err) {
  for (size_t i = 0; i < n; i++) {
    for (size_t l = 0; l < p; l++) {
      if (!isfinite(X[i * p + l])) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': %g in row %zu, column %zu (allowed: finite "
                        "features)",
                        key, X[i * p + l], i + 1, l + 1);
      }
    }
  }
  return DPD_OK;
}

int dpd_nc_problem_from_data(const dpd_nc_data_config *cfg, dpd_nc_problem **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (cfg == NULL || out == NULL || cfg->y == NULL || cfg->y_test == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc: NULL data config, labels or output pointer");
  }
  const size_t K = cfg->K, p = cfg->p, n = cfg->n, nt = cfg->n_test;
  if (K < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'K': %zu (allowed: integer >= 2)", K);
  }
  if (p < 1 || p / K >= ((size_t)1 << 33) / K) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': %zu (allowed: 1 <= p, p K < 2^33)", p);
  }
  if (n < K || n >= NC_INDEX_MAX) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: K = %zu .. 2^30 - 1 training rows)", n,
                    K);
  }
  if (nt < K || nt >= NC_INDEX_MAX) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n_test': %zu (allowed: K = %zu .. 2^30 - 1 test rows)", nt,
                    K);
  }
  if ((cfg->fill == NULL) == (cfg->X == NULL || cfg->X_test == NULL) ||
      (cfg->fill != NULL && (cfg->X != NULL || cfg->X_test != NULL))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "nc: give either both feature matrices (X, X_test) or a fill callback");
  }
  const int unit = cfg->normalize == DPD_NC_NORMALIZE_L2 ||
                   cfg->normalize == DPD_NC_NORMALIZE_CENTER_L2; /* G does not need R */
  if (cfg->normalize != DPD_NC_NORMALIZE_NONE && cfg->normalize != DPD_NC_NORMALIZE_CENTER &&
      !unit) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': %d (allowed: none, center, l2, center_l2)",
                    (int)cfg->normalize);
  }
  if (!(cfg->x_bound > 0.0) || (!isfinite(cfg->x_bound) && !unit)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'x_bound': %g (allowed: finite, > 0: a public bound on |x|; "
                    "inf only with normalize = l2 or center_l2)",
                    cfg->x_bound);
  }
  if (cfg->test_shift != DPD_NC_SHIFT_NONE && cfg->test_shift != DPD_NC_SHIFT_CUBE &&
      cfg->test_shift != DPD_NC_SHIFT_RADEMACHER && cfg->test_shift != DPD_NC_SHIFT_ADVERSARIAL &&
      cfg->test_shift != DPD_NC_SHIFT_GAUSSIAN) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_shift': %d (allowed: none, cube, rademacher, "
                    "adversarial, gaussian)",
                    (int)cfg->test_shift);
  }
  if (!(cfg->beta_test >= 0.0) || !isfinite(cfg->beta_test)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'beta_test': %g (allowed: finite, >= 0)",
                    cfg->beta_test);
  }
  int status;
  if (cfg->X != NULL && ((status = finite_rows(cfg->X, n, p, "features", err)) < 0 ||
                         (status = finite_rows(cfg->X_test, nt, p, "test_features", err)) < 0)) {
    return status;
  }
  dpd_nc_problem *pr = calloc(1, sizeof *pr);
  if (pr == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "nc: out of memory");
  }
  pr->cfg = dpd_nc_problem_config_default();
  pr->cfg.K = K;
  pr->cfg.p = p;
  pr->cfg.n = n;
  pr->cfg.n_test = nt;
  pr->cfg.test_shift = cfg->test_shift;
  pr->cfg.beta_test = cfg->beta_test;
  pr->cfg.normalize = cfg->normalize;
  pr->K = K;
  pr->p = p;
  pr->n = n;
  pr->n_test = nt;
  pr->from_data = 1;
  pr->data = malloc(sizeof *pr->data);
  pr->M = calloc(K * p, sizeof *pr->M);
  pr->nu = calloc(p, sizeof *pr->nu);
  pr->counts = malloc(K * sizeof *pr->counts);
  pr->test_counts = malloc(K * sizeof *pr->test_counts);
  pr->order = malloc(n * sizeof *pr->order);
  pr->test_order = malloc(nt * sizeof *pr->test_order);
  if (pr->data == NULL || pr->M == NULL || pr->nu == NULL || pr->counts == NULL ||
      pr->test_counts == NULL || pr->order == NULL || pr->test_order == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "nc: out of memory (p = %zu, K = %zu, n = %zu)", p, K, n);
    goto fail;
  }
  *pr->data = *cfg;
  if ((status = class_order(K, n, cfg->y, "labels", pr->counts, pr->order, err)) < 0 ||
      (status = class_order(K, nt, cfg->y_test, "test_labels", pr->test_counts, pr->test_order,
                            err)) < 0) {
    goto fail;
  }
  if (cfg->X != NULL) { /* class means, in class order */
    for (size_t k = 0, i = 0; k < K; k++) {
      double *Mk = pr->M + k * p;
      for (size_t s = 0; s < pr->counts[k]; s++, i++) {
        const double *row = cfg->X + pr->order[i] * p;
        for (size_t l = 0; l < p; l++) {
          Mk[l] += row[l];
        }
      }
      for (size_t l = 0; l < p; l++) {
        Mk[l] /= (double)pr->counts[k];
      }
    }
  }
  pr->x_norm_max = isfinite(cfg->x_bound) ? cfg->x_bound : 1.0;
  pr->x_norm_max_clean = pr->x_norm_max;
  *out = pr;
  return DPD_OK;
fail:
  dpd_nc_problem_free(pr);
  return status;
}

double dpd_nc_sensitivity_bound(size_t K, size_t n, double X, double X0, dpd_nc_normalize normalize,
                                dpd_nc_loss loss) {
  if (K < 2 || n < 1) {
    return NAN;
  }
  const double k = (double)K, m = (double)n;
  const double cnorm = loss == DPD_NC_LOSS_SQUARE ? 1.0 : sqrt((k - 1.0) / k);
  switch (normalize) {
  case DPD_NC_NORMALIZE_L2:
    return cnorm;
  case DPD_NC_NORMALIZE_CENTER_L2:
    return cnorm * (2.0 * m - 1.0);
  case DPD_NC_NORMALIZE_CENTER:
    return 2.0 * cnorm * X0 * (1.0 + m / (m - 1.0));
  default:
    return cnorm * X;
  }
}

double dpd_nc_sensitivity(const dpd_nc_problem *problem, dpd_nc_loss loss) {
  if (problem == NULL) {
    return NAN;
  }
  return dpd_nc_sensitivity_bound(problem->K, problem->n, problem->x_norm_max,
                                  problem->x_norm_max_clean, problem->cfg.normalize, loss);
}

/* The class of sample i under counts[0..K). */
static size_t class_of(const size_t *counts, size_t K, size_t i) {
  size_t k = 0;
  while (k + 1 < K && i >= counts[k]) {
    i -= counts[k];
    k++;
  }
  return k;
}

/* Passes over the data go chunk by chunk over the coordinates (outer) and point by point
 * (inner), so the chunk of every accumulator stays in cache. NC_SWEEP is even: a fill that
 * starts at coordinate a of a region starts at block a / 2 and returns the values one fill of
 * the whole region would (rng.h). */
#define NC_SWEEP 1024

/* x[0..m) = coordinates [a, a + m) of Mk (+ nu when not NULL) plus the shift of kind `kind`,
 * size b, from region (tag, index) of stream (seed, rep). */
static void chunk_x(const double *Mk, const double *nu, dpd_nc_shift kind, double b, uint64_t seed,
                    size_t rep, uint64_t tag, size_t index, size_t a, size_t m, double *x) {
  const double *restrict Ma = Mk + a;
  const double *restrict na = nu != NULL ? nu + a : NULL;
  if (kind != DPD_NC_SHIFT_CUBE && kind != DPD_NC_SHIFT_RADEMACHER &&
      kind != DPD_NC_SHIFT_GAUSSIAN) {
    if (na != NULL) {
      for (size_t l = 0; l < m; l++) {
        x[l] = Ma[l] + na[l];
      }
    } else {
      memcpy(x, Ma, m * sizeof *x);
    }
    return;
  }
  dpd_rng rng;
  region_init(&rng, seed, (uint64_t)rep, tag, (uint64_t)index);
  rng.counter += (uint64_t)(a / 2);
  if (kind == DPD_NC_SHIFT_GAUSSIAN) { /* test only: b g_l, g the region's Gaussians */
    dpd_rng_gaussian_fill(&rng, x, m);
    for (size_t l = 0; l < m; l++) {
      x[l] = (na != NULL ? Ma[l] + na[l] : Ma[l]) + b * x[l];
    }
    return;
  }
  dpd_rng_uniform_fill(&rng, x, m); /* the uniforms, replaced in place by the point */
  if (kind == DPD_NC_SHIFT_CUBE) {
    if (na != NULL) {
      for (size_t l = 0; l < m; l++) {
        x[l] = (Ma[l] + na[l]) + b * (2.0 * x[l] - 1.0);
      }
    } else {
      for (size_t l = 0; l < m; l++) {
        x[l] = Ma[l] + b * (2.0 * x[l] - 1.0);
      }
    }
  } else {
    if (na != NULL) {
      for (size_t l = 0; l < m; l++) {
        x[l] = (Ma[l] + na[l]) + (x[l] < 0.5 ? -b : b);
      }
    } else {
      for (size_t l = 0; l < m; l++) {
        x[l] = Ma[l] + (x[l] < 0.5 ? -b : b);
      }
    }
  }
}

/* Training unit (k, q): with shift none (ETF law), unit q = k stands for the counts[k]
 * identical samples of class k; otherwise unit q is sample q (class order). */
/* The features of a replicate and the per-replicate transform of normalize and feature
 * clipping (nc.h): x -> x scale[q] - mu; NULL members: no scaling / no centring. */
typedef struct {
  const double *X, *X_test; /* data problems: the replicate's rows (fixed or filled) */
  const double *mu;         /* [p] training mean, or NULL */
  const double *scale;      /* [units] per-unit factor (l2: 1 / |x_q|; clip: min(1, R / |x_q|)) */
  int center_first;         /* center_l2: x -> (x - mu) scale[q] instead */
} nc_xform;

static void train_chunk(const dpd_nc_problem *pr, uint64_t seed, size_t rep, size_t k, size_t q,
                        size_t a, size_t m, double *x, const nc_xform *xf) {
  if (pr->from_data) {
    memcpy(x, xf->X + pr->order[q] * pr->p + a, m * sizeof *x);
  } else {
    const size_t index = pr->cfg.shift == DPD_NC_SHIFT_NONE ? k : q;
    chunk_x(pr->M + k * pr->p, pr->nu, pr->cfg.shift, pr->cfg.beta, seed, rep, NC_TAG_TRAIN, index,
            a, m, x);
  }
  if (xf == NULL) {
    return;
  }
  if (xf->center_first) {
    const double f = xf->scale != NULL ? xf->scale[q] : 1.0;
    for (size_t l = 0; l < m; l++) {
      x[l] = (x[l] - xf->mu[a + l]) * f;
    }
    return;
  }
  if (xf->scale != NULL) {
    const double f = xf->scale[q];
    for (size_t l = 0; l < m; l++) {
      x[l] *= f;
    }
  }
  if (xf->mu != NULL) {
    for (size_t l = 0; l < m; l++) {
      x[l] -= xf->mu[a + l];
    }
  }
}

static size_t units_of(const dpd_nc_problem *pr, size_t k) {
  return pr->cfg.shift == DPD_NC_SHIFT_NONE && !pr->from_data ? 1 : pr->counts[k];
}

size_t dpd_nc_train_sample(const dpd_nc_problem *problem, uint64_t seed, size_t rep, size_t i,
                           double *x) {
  const size_t k = class_of(problem->counts, problem->K, i), p = problem->p;
  if (problem->from_data) {
    if (problem->data->X == NULL) {
      return problem->K;
    }
    memcpy(x, problem->data->X + problem->order[i] * p, p * sizeof *x);
    return k;
  }
  for (size_t a = 0; a < p; a += NC_SWEEP) {
    const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
    train_chunk(problem, seed, rep, k, i, a, m, x + a, NULL);
  }
  return k;
}

/* Scratch of the data passes: xc [NC_SWEEP]; Z [max(n, n_test) K]; w [n]. */
typedef struct {
  double *xc, *Z, *w;
  nc_xform xf;
} nc_scratch;

/* |x_q|^2 of every training unit into w[q]. */
static void unit_norms(const dpd_nc_problem *pr, uint64_t seed, size_t rep, nc_scratch *ws) {
  const size_t K = pr->K, p = pr->p;
  size_t units = 0;
  for (size_t k = 0; k < K; k++) {
    units += units_of(pr, k);
  }
  memset(ws->w, 0, units * sizeof *ws->w);
  for (size_t a = 0; a < p; a += NC_SWEEP) {
    const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
    for (size_t k = 0, q = 0; k < K; k++) {
      for (size_t s = 0; s < units_of(pr, k); s++, q++) {
        train_chunk(pr, seed, rep, k, q, a, m, ws->xc, &ws->xf);
        ws->w[q] += dpd__dot8(ws->xc, ws->xc, m);
      }
    }
  }
}

/* Class sums with per-sample weights: S[k p + l] = sum_{i in k} w_i x_il in index order, where
 * w_i = min(1, clip / (cnorm[k] |x_i|)) (clip = INFINITY: 1); with shift none the class's
 * samples count as counts[k] w times one sample. */
static void weighted_class_sums(const dpd_nc_problem *pr, uint64_t seed, size_t rep,
                                const double *cnorm, double clip, double *S, nc_scratch *ws) {
  const size_t K = pr->K, p = pr->p;
  const int none = pr->cfg.shift == DPD_NC_SHIFT_NONE && !pr->from_data, clipping = isfinite(clip);
  if (clipping) {
    unit_norms(pr, seed, rep, ws);
    for (size_t k = 0, q = 0; k < K; k++) {
      for (size_t s = 0; s < units_of(pr, k); s++, q++) {
        const double gn = cnorm[k] * sqrt(ws->w[q]);
        double w = none ? (double)pr->counts[k] : 1.0;
        if (gn > clip) {
          w *= clip / gn;
        }
        ws->w[q] = w;
      }
    }
  }
  for (size_t a = 0; a < p; a += NC_SWEEP) {
    const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
    for (size_t k = 0; k < K; k++) {
      memset(S + k * p + a, 0, m * sizeof *S);
    }
    for (size_t k = 0, q = 0; k < K; k++) {
      double *Sk = S + k * p + a;
      for (size_t s = 0; s < units_of(pr, k); s++, q++) {
        train_chunk(pr, seed, rep, k, q, a, m, ws->xc, &ws->xf);
        const double w = clipping ? ws->w[q] : (none ? (double)pr->counts[k] : 1.0);
        for (size_t l = 0; l < m; l++) {
          Sk[l] += w * ws->xc[l];
        }
      }
    }
  }
}

void dpd_nc_class_sums(const dpd_nc_problem *problem, uint64_t seed, size_t rep, double *sums) {
  double buf[NC_SWEEP];
  nc_scratch ws = {.xc = buf, .Z = NULL, .w = NULL, .xf = {NULL, NULL, NULL, NULL, 0}};
  if (problem->from_data) {
    if (problem->data->X == NULL) { /* fill: no features outside a replicate */
      for (size_t a = 0; a < problem->K * problem->p; a++) {
        sums[a] = NAN;
      }
      return;
    }
    ws.xf.X = problem->data->X;
    ws.xf.X_test = problem->data->X_test;
  }
  weighted_class_sums(problem, seed, rep, NULL, INFINITY, sums, &ws);
}

/* The replicate's transform (nc.h), with ws->xf.X set: first the unit scales (l2: 1 / |x|;
 * data: the feature clip min(1, R / |x|)), then the training mean mu of the scaled features
 * (center; from the class sums, tmp [K p] scratch). center_l2: mu of the raw features first,
 * then the scales 1 / |x - mu|. */
static void prepare_features(const dpd_nc_problem *pr, uint64_t seed, size_t rep, nc_scratch *ws,
                             double *mu, double *scale, double *tmp) {
  const size_t K = pr->K, p = pr->p;
  const dpd_nc_normalize nz = pr->cfg.normalize;
  size_t units = 0;
  for (size_t k = 0; k < K; k++) {
    units += units_of(pr, k);
  }
  ws->xf.mu = NULL;
  ws->xf.scale = NULL;
  ws->xf.center_first = 0;
  if (nz != DPD_NC_NORMALIZE_CENTER_L2 && (nz == DPD_NC_NORMALIZE_L2 || pr->from_data)) {
    unit_norms(pr, seed, rep, ws);
    for (size_t q = 0; q < units; q++) {
      const double norm = sqrt(ws->w[q]);
      if (nz == DPD_NC_NORMALIZE_L2) {
        scale[q] = norm > 0.0 ? 1.0 / norm : 1.0;
      } else {
        scale[q] = norm > pr->x_norm_max ? pr->x_norm_max / norm : 1.0;
      }
    }
    ws->xf.scale = scale;
  }
  if (nz == DPD_NC_NORMALIZE_CENTER || nz == DPD_NC_NORMALIZE_CENTER_L2) {
    /* mu of the (clipped) raw features */
    weighted_class_sums(pr, seed, rep, NULL, INFINITY, tmp, ws);
    for (size_t l = 0; l < p; l++) {
      double s = 0.0;
      for (size_t k = 0; k < K; k++) {
        s += tmp[k * p + l];
      }
      mu[l] = s / (double)pr->n;
    }
    ws->xf.mu = mu;
  }
  if (nz == DPD_NC_NORMALIZE_CENTER_L2) { /* 1 / |x - mu| */
    ws->xf.center_first = 1;
    unit_norms(pr, seed, rep, ws);
    for (size_t q = 0; q < units; q++) {
      scale[q] = ws->w[q] > 0.0 ? 1.0 / sqrt(ws->w[q]) : 1.0;
    }
    ws->xf.scale = scale;
  }
}

int dpd_nc_train_sums(const dpd_nc_problem *problem, uint64_t seed, size_t rep, double *sums,
                      double *mu, dpd_err *err) {
  if (problem == NULL || sums == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc_train_sums: NULL problem or sums");
  }
  const size_t p = problem->p, n = problem->n, nt = problem->n_test;
  const int fill = problem->from_data && problem->data->X == NULL;
  const size_t extra = fill ? (n + nt) * p : 0;
  double *buf = malloc((NC_SWEEP + 2 * n + p + extra) * sizeof *buf);
  int status = DPD_OK;
  if (buf == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "nc_train_sums: out of memory (n = %zu, p = %zu)", n, p);
  }
  nc_scratch ws = {.xc = buf, .Z = NULL, .w = buf + NC_SWEEP, .xf = {NULL, NULL, NULL, NULL, 0}};
  double *mu_w = ws.w + n, *scale = mu_w + p;
  if (problem->from_data) {
    if (fill) {
      double *X = scale + n;
      status = problem->data->fill(problem->data->user, seed, rep, X, X + n * p, err);
      ws.xf.X = X;
      ws.xf.X_test = X + n * p;
    } else {
      ws.xf.X = problem->data->X;
      ws.xf.X_test = problem->data->X_test;
    }
  }
  if (status == DPD_OK) {
    prepare_features(problem, seed, rep, &ws, mu_w, scale, sums);
    weighted_class_sums(problem, seed, rep, NULL, INFINITY, sums, &ws);
    if (mu != NULL) {
      if (ws.xf.mu != NULL) {
        memcpy(mu, mu_w, p * sizeof *mu);
      } else {
        memset(mu, 0, p * sizeof *mu);
      }
    }
  }
  free(buf);
  return status;
}

int dpd_nc_test_point(const dpd_nc_problem *problem, uint64_t seed, size_t rep, size_t j,
                      const double *mu, double *x, size_t *k, dpd_err *err) {
  if (problem == NULL || x == NULL || k == NULL || j >= problem->n_test) {
    return DPD_FAIL(err, DPD_EINVAL, "nc_test_point: NULL argument or test index out of range");
  }
  if (problem->from_data && problem->data->X_test == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "nc_test_point: the test points of per-replicate features (fill) exist only "
                    "inside a replicate");
  }
  const size_t p = problem->p;
  const size_t kk = class_of(problem->test_counts, problem->K, j);
  const double *base =
      problem->from_data ? problem->data->X_test + problem->test_order[j] * p : problem->M + kk * p;
  const double *nu = !problem->from_data && problem->cfg.offset_at_test ? problem->nu : NULL;
  const dpd_nc_shift ts = problem->cfg.test_shift;
  const dpd_nc_shift kind =
      ts == DPD_NC_SHIFT_CUBE || ts == DPD_NC_SHIFT_RADEMACHER || ts == DPD_NC_SHIFT_GAUSSIAN
          ? ts
          : DPD_NC_SHIFT_NONE;
  for (size_t a = 0; a < p; a += NC_SWEEP) {
    const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
    chunk_x(base, nu, kind, problem->cfg.beta_test, seed, rep, NC_TAG_TEST, j, a, m, x + a);
  }
  if (mu != NULL) {
    for (size_t l = 0; l < p; l++) {
      x[l] -= mu[l];
    }
  }
  *k = kk;
  return DPD_OK;
}

dpd_nc_sim_config dpd_nc_sim_config_default(void) {
  dpd_nc_sim_config c = {.steps = 1,
                         .eta = 1.0,
                         .loss = DPD_NC_LOSS_CE,
                         .radius = INFINITY,
                         .sigma = 0.0,
                         .clip = 0.0,
                         .seeds = 8,
                         .seed = 1,
                         .threads = 0,
                         .progress = NULL,
                         .progress_user = NULL};
  return c;
}

void dpd_nc_sim_result_free(dpd_nc_sim_result *res) {
  if (res == NULL) {
    return;
  }
  free(res->class_error);
  free(res->class_error_se);
  free(res->test_error_replicates);
  free(res->class_error_replicates);
  free(res->w_norm_replicates);
  free(res->clipped_fraction_replicates);
  free(res->mean_batch_replicates);
  free(res->train_loss_replicates);
  free(res);
}

typedef struct {
  const dpd_nc_problem *pr;
  size_t T;
  double eta, sigma, clip, radius;
  dpd_nc_loss loss;
  uint64_t seed;
  double *err_rows; /* [seeds * K] class errors */
  double *test_err; /* [seeds] */
  double *wnorm;    /* [seeds] */
  size_t *fail;     /* [seeds] failing step + 1 */
} nc_plan;

/* Per-sample loss coefficient vector c = dloss/dz at logits z for class y (K values). */
static void loss_coef(dpd_nc_loss loss, const double *z, size_t K, size_t y, double *c) {
  if (loss == DPD_NC_LOSS_SQUARE) {
    for (size_t j = 0; j < K; j++) {
      c[j] = z[j] - (j == y ? 1.0 : 0.0);
    }
    return;
  }
  double zmax = z[0];
  for (size_t j = 1; j < K; j++) {
    zmax = z[j] > zmax ? z[j] : zmax;
  }
  double s = 0.0;
  for (size_t j = 0; j < K; j++) {
    c[j] = exp(z[j] - zmax);
    s += c[j];
  }
  for (size_t j = 0; j < K; j++) {
    c[j] = c[j] / s - (j == y ? 1.0 : 0.0);
  }
}

static double vnorm(const double *c, size_t K) {
  double s = 0.0;
  for (size_t j = 0; j < K; j++) {
    s += c[j] * c[j];
  }
  return sqrt(s);
}

/* logits z = W x. */
static void logits(const double *W, const double *x, size_t K, size_t p, double *z) {
  for (size_t j = 0; j < K; j++) {
    z[j] = dpd__dot8(W + j * p, x, p);
  }
}

static size_t argmax(const double *z, size_t K) {
  size_t b = 0;
  for (size_t j = 1; j < K; j++) {
    if (z[j] > z[b]) {
      b = j;
    }
  }
  return b;
}

/* The gradient sum at W_t for t > 0: one pass for the logits and norms of every unit, then
 * one pass adding the weighted coefficients times the features. */
static void gradient_pass(const nc_plan *pl, size_t rep, const double *W, double *g, double *c,
                          nc_scratch *ws) {
  const dpd_nc_problem *pr = pl->pr;
  const size_t K = pr->K, p = pr->p;
  const int none = pr->cfg.shift == DPD_NC_SHIFT_NONE && !pr->from_data;
  size_t units = 0;
  for (size_t k = 0; k < K; k++) {
    units += units_of(pr, k);
  }
  double *Z = ws->Z;
  memset(Z, 0, units * K * sizeof *Z);
  memset(ws->w, 0, units * sizeof *ws->w);
  for (size_t a = 0; a < p; a += NC_SWEEP) {
    const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
    for (size_t k = 0, q = 0; k < K; k++) {
      for (size_t s = 0; s < units_of(pr, k); s++, q++) {
        train_chunk(pr, pl->seed, rep, k, q, a, m, ws->xc, &ws->xf);
        ws->w[q] += dpd__dot8(ws->xc, ws->xc, m);
        for (size_t j = 0; j < K; j++) {
          Z[q * K + j] += dpd__dot8(W + j * p + a, ws->xc, m);
        }
      }
    }
  }
  for (size_t k = 0, q = 0; k < K; k++) {
    for (size_t s = 0; s < units_of(pr, k); s++, q++) {
      loss_coef(pl->loss, Z + q * K, K, k, c);
      double w = none ? (double)pr->counts[k] : 1.0;
      if (isfinite(pl->clip)) {
        const double gn = vnorm(c, K) * sqrt(ws->w[q]);
        if (gn > pl->clip) {
          w *= pl->clip / gn;
        }
      }
      for (size_t j = 0; j < K; j++) {
        Z[q * K + j] = w * c[j];
      }
    }
  }
  for (size_t a = 0; a < p; a += NC_SWEEP) {
    const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
    for (size_t j = 0; j < K; j++) {
      memset(g + j * p + a, 0, m * sizeof *g);
    }
    for (size_t k = 0, q = 0; k < K; k++) {
      for (size_t s = 0; s < units_of(pr, k); s++, q++) {
        train_chunk(pr, pl->seed, rep, k, q, a, m, ws->xc, &ws->xf);
        for (size_t j = 0; j < K; j++) {
          const double cj = Z[q * K + j];
          double *gj = g + j * p + a;
          for (size_t l = 0; l < m; l++) {
            gj[l] += cj * ws->xc[l];
          }
        }
      }
    }
  }
}

/* The adversarial test perturbation (nc.h) of x (class k) against W, in place. */
static void adversarial_shift(const double *W, size_t K, size_t p, size_t k, double bt, double *x) {
  const double *Wk = W + k * p;
  size_t jstar = k;
  double best = -INFINITY;
  for (size_t j = 0; j < K; j++) {
    if (j == k) {
      continue;
    }
    const double *Wj = W + j * p;
    double mm = 0.0, l1 = 0.0;
    for (size_t l = 0; l < p; l++) {
      const double d = Wj[l] - Wk[l];
      mm += d * x[l];
      l1 += fabs(d);
    }
    const double av = mm + bt * l1;
    if (av > best) {
      best = av;
      jstar = j;
    }
  }
  const double *Wj = W + jstar * p;
  for (size_t l = 0; l < p; l++) {
    const double d = Wj[l] - Wk[l];
    x[l] += d > 0.0 ? bt : (d < 0.0 ? -bt : 0.0);
  }
}

/* Test errors of W: err[k] = misclassified test points of class k / test_counts[k]; returns
 * the number misclassified. x is scratch [p]. */
static size_t test_errors(const nc_plan *pl, size_t rep, const double *W, double *x, double *z,
                          double *err, nc_scratch *ws) {
  const dpd_nc_problem *pr = pl->pr;
  const size_t K = pr->K, p = pr->p, nt = pr->n_test;
  const dpd_nc_shift ts = pr->cfg.test_shift;
  const double bt = pr->cfg.beta_test;
  const double *mu = ws->xf.mu;
  size_t total = 0;
  if (!pr->from_data && (ts == DPD_NC_SHIFT_NONE || ts == DPD_NC_SHIFT_ADVERSARIAL)) {
    /* Every test point of class k is the same point. */
    for (size_t k = 0; k < K; k++) {
      const double *Mk = pr->M + k * p;
      memcpy(x, Mk, p * sizeof *x);
      if (pr->cfg.offset_at_test) {
        for (size_t l = 0; l < p; l++) {
          x[l] += pr->nu[l];
        }
      }
      if (mu != NULL) {
        for (size_t l = 0; l < p; l++) {
          x[l] -= mu[l];
        }
      }
      if (ts == DPD_NC_SHIFT_ADVERSARIAL && bt > 0.0) {
        adversarial_shift(W, K, p, k, bt, x);
      }
      logits(W, x, K, p, z);
      const size_t wrong = argmax(z, K) != k ? pr->test_counts[k] : 0;
      err[k] = (double)wrong / (double)pr->test_counts[k];
      total += wrong;
    }
    return total;
  }
  if (ts == DPD_NC_SHIFT_ADVERSARIAL) { /* data: each row against W */
    for (size_t k = 0, j = 0; k < K; k++) {
      size_t wrong = 0;
      for (size_t s = 0; s < pr->test_counts[k]; s++, j++) {
        const double *row = ws->xf.X_test + pr->test_order[j] * p;
        for (size_t l = 0; l < p; l++) {
          x[l] = mu != NULL ? row[l] - mu[l] : row[l];
        }
        if (bt > 0.0) {
          adversarial_shift(W, K, p, k, bt, x);
        }
        logits(W, x, K, p, z);
        wrong += argmax(z, K) != k;
      }
      err[k] = (double)wrong / (double)pr->test_counts[k];
      total += wrong;
    }
    return total;
  }
  double *Z = ws->Z;
  const double *nu = !pr->from_data && pr->cfg.offset_at_test ? pr->nu : NULL;
  memset(Z, 0, nt * K * sizeof *Z);
  for (size_t a = 0; a < p; a += NC_SWEEP) {
    const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
    for (size_t k = 0, j = 0; k < K; k++) {
      for (size_t s = 0; s < pr->test_counts[k]; s++, j++) {
        const double *base = pr->from_data ? ws->xf.X_test + pr->test_order[j] * p : pr->M + k * p;
        chunk_x(base, nu, ts, bt, pl->seed, rep, NC_TAG_TEST, j, a, m, ws->xc);
        if (mu != NULL) {
          for (size_t l = 0; l < m; l++) {
            ws->xc[l] -= mu[a + l];
          }
        }
        for (size_t c = 0; c < K; c++) {
          Z[j * K + c] += dpd__dot8(W + c * p + a, ws->xc, m);
        }
      }
    }
  }
  for (size_t k = 0, j = 0; k < K; k++) {
    size_t wrong = 0;
    for (size_t s = 0; s < pr->test_counts[k]; s++, j++) {
      wrong += argmax(Z + j * K, K) != k;
    }
    err[k] = (double)wrong / (double)pr->test_counts[k];
    total += wrong;
  }
  return total;
}

static int run_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  const nc_plan *pl = job;
  const dpd_nc_problem *pr = pl->pr;
  const size_t K = pr->K, p = pr->p, Kp = K * p;
  const size_t nmax = pr->n > pr->n_test ? pr->n : pr->n_test;
  double *W = work, *g = W + Kp, *x = g + Kp, *chunk = x + p, *z = chunk + NC_CHUNK, *c = z + K,
         *C = c + K, *tmp = C + K * K, *cnorm = tmp + K;
  nc_scratch ws = {.xc = cnorm + K, .Z = cnorm + K + NC_SWEEP, .xf = {NULL, NULL, NULL, NULL, 0}};
  ws.w = ws.Z + nmax * K;
  double *mu = ws.w + nmax, *scale = mu + p;
  memset(W, 0, Kp * sizeof *W);
  if (pr->from_data) { /* the replicate's rows: fixed, or filled into the work space */
    if (pr->data->X != NULL) {
      ws.xf.X = pr->data->X;
      ws.xf.X_test = pr->data->X_test;
    } else {
      double *X = scale + pr->n, *Xt = X + pr->n * p;
      dpd_err ferr = {0};
      int status = pr->data->fill(pr->data->user, pl->seed, rep, X, Xt, &ferr);
      if (status < 0) { /* reworded by dpd_nc_sim_run, which calls fill again for rep */
        return status;
      }
      ws.xf.X = X;
      ws.xf.X_test = Xt;
    }
  }
  /* normalize and feature clipping (nc.h): unit scales, then the training mean. */
  prepare_features(pr, pl->seed, rep, &ws, mu, scale, g);
  /* At W = 0 the logits are 0: the coefficient vector of a class-k sample is C[k]. */
  for (size_t k = 0; k < K; k++) {
    for (size_t j = 0; j < K; j++) {
      z[j] = 0.0;
    }
    loss_coef(pl->loss, z, K, k, C + k * K);
    cnorm[k] = vnorm(C + k * K, K);
  }
  double wn = 0.0;
  for (size_t t = 0; t < pl->T; t++) {
    if (dpd__replicate_progress(slot, 0)) { /* a stop request, heard between steps */
      return DPD_ECANCELLED;
    }
    if (t == 0) {
      weighted_class_sums(pr, pl->seed, rep, cnorm, pl->clip, g, &ws);
      /* g_j = sum_k C[k][j] S_k, in place per coordinate. */
      for (size_t l = 0; l < p; l++) {
        for (size_t k = 0; k < K; k++) {
          tmp[k] = g[k * p + l];
        }
        for (size_t j = 0; j < K; j++) {
          double s = 0.0;
          for (size_t k = 0; k < K; k++) {
            s += C[k * K + j] * tmp[k];
          }
          g[j * p + l] = s;
        }
      }
    } else {
      gradient_pass(pl, rep, W, g, c, &ws);
    }
    if (pl->sigma > 0.0) {
      dpd_rng rng;
      region_init(&rng, pl->seed, (uint64_t)rep, NC_TAG_NOISE, (uint64_t)t);
      for (size_t a = 0; a < Kp; a += NC_CHUNK) {
        const size_t m = Kp - a < NC_CHUNK ? Kp - a : NC_CHUNK;
        dpd_rng_gaussian_fill(&rng, chunk, m);
        for (size_t b = 0; b < m; b++) {
          W[a + b] -= pl->eta * (g[a + b] + pl->sigma * chunk[b]);
        }
      }
    } else {
      for (size_t a = 0; a < Kp; a++) {
        W[a] -= pl->eta * g[a];
      }
    }
    wn = sqrt(dpd__dot8(W, W, Kp));
    if (!isfinite(wn)) {
      pl->fail[rep] = t + 1;
      return DPD_ENONFINITE;
    }
    if (wn > pl->radius) {
      const double f = pl->radius / wn;
      for (size_t a = 0; a < Kp; a++) {
        W[a] *= f;
      }
      wn = sqrt(dpd__dot8(W, W, Kp));
    }
  }
  pl->wnorm[rep] = wn;
  double *err = pl->err_rows + rep * K;
  const size_t wrong_total = test_errors(pl, rep, W, x, z, err, &ws);
  pl->test_err[rep] = (double)wrong_total / (double)pr->n_test;
  return DPD_OK;
}

int dpd_nc_sim_run(const dpd_nc_problem *problem, const dpd_nc_sim_config *cfg,
                   dpd_nc_sim_result **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (problem == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc_sim: NULL problem, config or output pointer");
  }
  if (cfg->steps < 1 || cfg->steps >= NC_INDEX_MAX) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'steps': %zu (allowed: 1 .. 2^30 - 1)",
                    cfg->steps);
  }
  if (cfg->seeds < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'seeds': %zu (allowed: integer >= 1)",
                    cfg->seeds);
  }
  if (!(cfg->eta > 0.0) || !isfinite(cfg->eta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'eta': %g (allowed: finite, > 0)",
                    cfg->eta);
  }
  if (cfg->loss != DPD_NC_LOSS_CE && cfg->loss != DPD_NC_LOSS_SQUARE) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'loss': %d (allowed: ce, square)",
                    (int)cfg->loss);
  }
  if (!(cfg->radius > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'radius': %g (allowed: > 0, or inf)",
                    cfg->radius);
  }
  if (!(cfg->sigma >= 0.0) || !isfinite(cfg->sigma)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'sigma': %g (allowed: finite, >= 0)",
                    cfg->sigma);
  }
  if (!(cfg->clip >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'clip': %g (allowed: 0 (= G), > 0, or inf)",
                    cfg->clip);
  }
  const size_t K = problem->K, p = problem->p, seeds = cfg->seeds;
  const double G = dpd_nc_sensitivity(problem, cfg->loss);
  const double clip = cfg->steps == 1 ? INFINITY : (cfg->clip == 0.0 ? G : cfg->clip);
  dpd_nc_sim_result *res = calloc(1, sizeof *res);
  size_t *fail = calloc(seeds, sizeof *fail);
  int status = DPD_OK;
  if (res != NULL) {
    res->seeds = seeds;
    res->K = K;
    res->n_test = problem->n_test;
    res->class_error = malloc(K * sizeof *res->class_error);
    res->class_error_se = malloc(K * sizeof *res->class_error_se);
    res->test_error_replicates = malloc(seeds * sizeof *res->test_error_replicates);
    res->class_error_replicates = malloc(seeds * K * sizeof *res->class_error_replicates);
    res->w_norm_replicates = malloc(seeds * sizeof *res->w_norm_replicates);
  }
  if (res == NULL || fail == NULL || res->class_error == NULL || res->class_error_se == NULL ||
      res->test_error_replicates == NULL || res->class_error_replicates == NULL ||
      res->w_norm_replicates == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "nc_sim: out of memory (seeds = %zu, K = %zu)", seeds, K);
    goto cleanup;
  }
  res->sigma = cfg->sigma;
  res->clip = clip;
  res->G = G;
  nc_plan pl = {.pr = problem,
                .T = cfg->steps,
                .eta = cfg->eta,
                .sigma = cfg->sigma,
                .clip = clip,
                .radius = cfg->radius,
                .loss = cfg->loss,
                .seed = cfg->seed,
                .err_rows = res->class_error_replicates,
                .test_err = res->test_error_replicates,
                .wnorm = res->w_norm_replicates,
                .fail = fail};
  const dpd__replicate_plan reps = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = dpd__nc_work_doubles(problem),
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "nc_sim"};
  size_t rep;
  status = dpd__replicate_run(&reps, run_replicate, &pl, &rep, err);
  if (status == DPD_ENONFINITE && rep < seeds) {
    status = DPD_FAIL(err, DPD_ENONFINITE,
                      "nc_sim: replicate %zu (stream (%llu, %zu)) diverged at step %zu of %zu: "
                      "non-finite |W| (eta = %g)",
                      rep, (unsigned long long)cfg->seed, rep, fail[rep] - 1, cfg->steps, cfg->eta);
  }
  if (status < 0 && status != DPD_ECANCELLED && status != DPD_ENONFINITE && rep < seeds &&
      problem->from_data && problem->data->X == NULL) {
    /* a fill failed: it is pure, so calling it again for that replicate words the reason */
    double *X = malloc((problem->n + problem->n_test) * p * sizeof *X);
    if (X == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "nc_sim: out of memory");
    } else {
      const int again =
          problem->data->fill(problem->data->user, cfg->seed, rep, X, X + problem->n * p, err);
      if (again == DPD_OK) {
        status = DPD_FAIL(err, status, "nc_sim: replicate %zu failed", rep);
      } else {
        status = again;
      }
      free(X);
    }
  }
  if (status < 0) {
    goto cleanup;
  }
  dpd__stats_mean_se(res->test_error_replicates, seeds, 1, &res->test_error, &res->test_error_se);
  dpd__stats_columns_mean_se(res->class_error_replicates, seeds, K, res->class_error,
                             res->class_error_se);
  dpd__stats_mean_se(res->w_norm_replicates, seeds, 1, &res->w_norm, &res->w_norm_se);
  *out = res;
  res = NULL;
  status = DPD_OK;
cleanup:
  dpd_nc_sim_result_free(res);
  free(fail);
  return status;
}

/* ---- a replicate's features and test for another trainer (nc_impl.h) ---- */

size_t dpd__nc_work_doubles(const dpd_nc_problem *pr) {
  const size_t K = pr->K, p = pr->p, nmax = pr->n > pr->n_test ? pr->n : pr->n_test;
  return 2 * K * p + p + NC_CHUNK + 4 * K + K * K + NC_SWEEP + nmax * (K + 1) + p + pr->n +
         (pr->from_data && pr->data->X == NULL ? (pr->n + pr->n_test) * pr->p : 0);
}

/* run_replicate's layout of the work space: g (K p scratch), x [p], z [K], the scratch, mu,
 * scale and (fill) the replicate's rows. */
typedef struct {
  double *g, *x, *z, *mu, *scale, *X;
  nc_scratch ws;
} nc_layout;

static void layout(const dpd_nc_problem *pr, double *work, nc_layout *o) {
  const size_t K = pr->K, p = pr->p, Kp = K * p;
  const size_t nmax = pr->n > pr->n_test ? pr->n : pr->n_test;
  o->g = work + Kp;
  o->x = o->g + Kp;
  o->z = o->x + p + NC_CHUNK;
  double *cnorm = o->z + 3 * K + K * K;
  o->ws = (nc_scratch){
      .xc = cnorm + K, .Z = cnorm + K + NC_SWEEP, .w = NULL, .xf = {NULL, NULL, NULL, NULL, 0}};
  o->ws.w = o->ws.Z + nmax * K;
  o->mu = o->ws.w + nmax;
  o->scale = o->mu + p;
  o->X = o->scale + pr->n;
  if (pr->from_data) {
    o->ws.xf.X = pr->data->X != NULL ? pr->data->X : o->X;
    o->ws.xf.X_test = pr->data->X != NULL ? pr->data->X_test : o->X + pr->n * p;
  }
}

int dpd__nc_replicate_rows(const dpd_nc_problem *pr, uint64_t seed, size_t rep, double *work,
                           double *X, int32_t *y, dpd_err *err) {
  const size_t K = pr->K, p = pr->p;
  const int none = pr->cfg.shift == DPD_NC_SHIFT_NONE && !pr->from_data;
  nc_layout o;
  layout(pr, work, &o);
  if (pr->from_data && pr->data->X == NULL) {
    const int status = pr->data->fill(pr->data->user, seed, rep, o.X, o.X + pr->n * p, err);
    if (status < 0) {
      return status;
    }
  }
  prepare_features(pr, seed, rep, &o.ws, o.mu, o.scale, o.g);
  for (size_t k = 0, i = 0; k < K; k++) {
    for (size_t s = 0; s < pr->counts[k]; s++, i++) {
      for (size_t a = 0; a < p; a += NC_SWEEP) {
        const size_t m = p - a < NC_SWEEP ? p - a : NC_SWEEP;
        train_chunk(pr, seed, rep, k, none ? k : i, a, m, X + i * p + a, &o.ws.xf);
      }
      y[i] = (int32_t)k;
    }
  }
  return DPD_OK;
}

size_t dpd__nc_replicate_test(const dpd_nc_problem *pr, uint64_t seed, size_t rep, double *work,
                              const double *W, double *class_err) {
  const dpd_nc_normalize nz = pr->cfg.normalize;
  const nc_plan pl = {.pr = pr, .seed = seed};
  nc_layout o;
  layout(pr, work, &o);
  o.ws.xf.mu = nz == DPD_NC_NORMALIZE_CENTER || nz == DPD_NC_NORMALIZE_CENTER_L2 ? o.mu : NULL;
  return test_errors(&pl, rep, W, o.x, o.z, class_err, &o.ws);
}
