/* Neural collapse on a user's features: the feature-file loader and the collapse diagnostics
 * (nc_features.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Papyan, Han & Donoho, PNAS 117 (2020), arXiv:2008.08186, §3 (NC1, NC2);
 * Wang, Zhu, Su & Wang, arXiv:2405.08920, §3 (beta, G).
 *
 * NC1 without a p x p matrix. With C = [Mhat_1 - mu_G, ..., Mhat_K - mu_G] (p x K),
 * Sigma_B = C C^T / K and Sigma_W = (1/n) sum_i r_i r_i^T (r_i = x_i - Mhat_{y_i}). Let
 * C^T C = V diag(lambda) V^T (K x K, LAPACKE_dsyev). Then (C C^T)^+ = C V diag(lambda^-2) V^T C^T
 * over the nonzero lambda_j, so
 *   NC1 = tr(Sigma_W Sigma_B^+) / K = tr(Sigma_W (C C^T)^+) = (1/n) sum_i sum_j (b_j . r_i)^2,
 * b_j = C v_j / lambda_j: one p-vector per nonzero eigenvalue, O(p K) per row. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <lapacke.h>

#include "core/datafile_impl.h"
#include "core/error_impl.h"
#include "core/npy_impl.h"
#include "core/table_impl.h"
#include "dpdyn/nc_features.h"

#define DPD_NC_MAX_FEATURE 1e150 /* |entry| of a feature file (docs/input.md) */

dpd_nc_features_config dpd_nc_features_config_default(void) {
  dpd_nc_features_config c;
  memset(&c, 0, sizeof c);
  c.key = "features";
  c.labels_key = "labels";
  c.K_key = "K";
  c.p_key = "p";
  return c;
}

void dpd_nc_features_free(dpd_nc_features *f) {
  if (f == NULL) {
    return;
  }
  free(f->X);
  free(f->y);
  free(f->counts);
  free(f);
}
int dpd_nc_features_bytes(const dpd_nc_features_config *cfg, double *bytes, dpd_err *err) {
  double b = 0.0, lb = 0.0;
  int status = dpd__datafile_bytes(cfg->key, cfg->path, &b, err);
  if (status == DPD_OK && cfg->labels_path != NULL) {
    status = dpd__datafile_bytes(cfg->labels_key, cfg->labels_path, &lb, err);
  }
  /* the read matrix, the labels as size_t, the feature matrix without its label column */
  *bytes = b + 2.0 * lb + (cfg->labels_path == NULL ? b : 0.0);
  return status;
}

/* A label value: an integer in [0, 2^53). */
static int label_check(double v, const char *key, const char *path, size_t row, dpd_err *err) {
  if (!(v >= 0.0) || v != floor(v) || v >= 9007199254740992.0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': label %.17g in row %zu of '%s' (allowed: integers "
                    "0..K-1)",
                    key, v, row + 1, path);
  }
  return DPD_OK;
}

int dpd_nc_features_read(const dpd_nc_features_config *cfg, dpd_nc_features **out, dpd_err *err) {
  dpd_nc_features *f = NULL;
  double *raw = NULL, *lab = NULL;
  size_t rows, cols, ndim, lrows = 0, lcols = 0, lndim = 0, first, p, K;
  const char *lkey, *lpath;
  double max_label = -1.0;
  int status;
  *out = NULL;
  if (cfg->path == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "missing value for '%s' (allowed: file:PATH)", cfg->key);
  }
  if ((status = dpd__datafile_read(cfg->key, cfg->path, cfg->max_bytes, &raw, &rows, &cols, &ndim,
                                   err)) < 0) {
    return status;
  }
  if (cfg->labels_path != NULL) {
    lkey = cfg->labels_key;
    lpath = cfg->labels_path;
    first = 0;
    if (ndim != 2) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' holds a 1-D array (allowed: a 2-D (n, p) "
                        "features array when '%s' gives the labels)",
                        cfg->key, cfg->path, lkey);
      goto done;
    }
    if ((status = dpd__datafile_read(lkey, lpath, cfg->max_bytes, &lab, &lrows, &lcols, &lndim,
                                     err)) < 0) {
      goto done;
    }
    if (lcols != 1) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' has %zu columns (allowed: one label per "
                        "row: a 1-D array or one column)",
                        lkey, lpath, lcols);
      goto done;
    }
    if (lrows != rows) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' has %zu labels for the %zu rows of '%s' "
                        "(allowed: one label per row)",
                        lkey, lpath, lrows, rows, cfg->path);
      goto done;
    }
  } else {
    lkey = cfg->key;
    lpath = cfg->path;
    first = 1;
    if (ndim != 2 || cols < 2) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' has %zu column%s (allowed: `label x_1 ... "
                        "x_p` per row, p >= 1, or give the labels in a labels file)",
                        cfg->key, cfg->path, cols, cols == 1 ? "" : "s");
      goto done;
    }
  }
  p = cols - first;
  if (cfg->p != 0 && p != cfg->p) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' has %zu features per row (allowed: p = %zu, "
                      "as in '%s')",
                      cfg->key, cfg->path, p, cfg->p, cfg->p_key);
    goto done;
  }
  /* labels: integers; K */
  for (size_t i = 0; i < rows; i++) {
    const double v = first ? raw[i * cols] : lab[i];
    if ((status = label_check(v, lkey, lpath, i, err)) < 0) {
      goto done;
    }
    max_label = v > max_label ? v : max_label;
  }
  if (cfg->K != 0 && max_label >= (double)cfg->K) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' has label %.0f (allowed: 0..%zu, K = %zu as "
                      "in '%s')",
                      lkey, lpath, max_label, cfg->K - 1, cfg->K, cfg->K_key);
    goto done;
  }
  if (cfg->K == 0 && max_label >= (double)rows) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' has label %.0f but only %zu rows, so some "
                      "class has no row (allowed: labels 0..K-1, every class present)",
                      lkey, lpath, max_label, rows);
    goto done;
  }
  K = cfg->K != 0 ? cfg->K : (size_t)max_label + 1;
  if (K < 2) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' has a single class (label 0) (allowed: K >= "
                      "2 classes, labels 0..K-1)",
                      lkey, lpath);
    goto done;
  }
  f = calloc(1, sizeof *f);
  if (f == NULL || (f->y = malloc(rows * sizeof *f->y)) == NULL ||
      (f->counts = calloc(K, sizeof *f->counts)) == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", cfg->path);
    goto done;
  }
  f->n = rows;
  f->p = p;
  f->K = K;
  for (size_t i = 0; i < rows; i++) {
    f->y[i] = (size_t)(first ? raw[i * cols] : lab[i]);
    f->counts[f->y[i]]++;
  }
  for (size_t k = 0; k < K; k++) {
    if (f->counts[k] == 0) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': class %zu has no row in '%s' (allowed: labels "
                        "0..K-1 with every class present, K = %zu)",
                        lkey, k, lpath, K);
      goto done;
    }
  }
  /* features: finite; drop the label column in place */
  for (size_t i = 0; i < rows; i++) {
    for (size_t l = 0; l < p; l++) {
      const double v = raw[i * cols + first + l];
      if (!(fabs(v) <= DPD_NC_MAX_FEATURE)) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': %g in row %zu, feature column %zu of '%s' "
                          "(allowed: finite features with |x| <= 1e150, so that the squares "
                          "and products the run forms stay finite)",
                          cfg->key, v, i + 1, l + 1, cfg->path);
        goto done;
      }
      raw[i * p + l] = v; /* i * p + l <= i * cols + first + l: never ahead of the reads */
    }
  }
  if (first) {
    double *shrunk = realloc(raw, rows * p * sizeof *shrunk);
    if (shrunk != NULL) {
      raw = shrunk;
    }
  }
  f->X = raw;
  raw = NULL;
  status = DPD_OK;
done:
  free(raw);
  free(lab);
  if (status < 0) {
    dpd_nc_features_free(f);
    return status;
  }
  *out = f;
  return DPD_OK;
}

size_t dpd_nc_features_row(void *features, size_t i, double *x) {
  const dpd_nc_features *f = features;
  memcpy(x, f->X + i * f->p, f->p * sizeof *x);
  return f->y[i];
}

/* ---- diagnostics ---- */

void dpd_nc_diagnostics_free(dpd_nc_diagnostics *d) {
  if (d == NULL) {
    return;
  }
  free(d->counts);
  free(d->means);
  free(d->global_mean);
  free(d->centred_norm);
  free(d->within_rms);
  free(d->cosines);
  free(d);
}

static double dot(const double *a, const double *b, size_t p) {
  double s = 0.0;
  for (size_t l = 0; l < p; l++) {
    s += a[l] * b[l];
  }
  return s;
}

/* The row i with its label checked. */
static int row_get(dpd_nc_row_fn row, void *user, size_t i, size_t p, size_t K, double *x,
                   size_t *k, dpd_err *err) {
  *k = row(user, i, x);
  if (*k >= K) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'labels': row %zu has label %zu (allowed: "
                    "0..K-1, K = %zu)",
                    i + 1, *k, K);
  }
  for (size_t l = 0; l < p; l++) {
    if (!(fabs(x[l]) <= DPD_NC_MAX_FEATURE)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'features': %g in row %zu, column %zu (allowed: finite "
                      "features with |x| <= 1e150, so that the squares and products the run "
                      "forms stay finite)",
                      x[l], i + 1, l + 1);
    }
  }
  return DPD_OK;
}

int dpd_nc_diagnostics_create(size_t n, size_t p, size_t K, dpd_nc_row_fn row, void *user,
                              dpd_nc_diagnostics **out, dpd_err *err) {
  static const double probs[DPD_NC_BETA_QUANTILES] = {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0};
  dpd_nc_diagnostics *d = NULL;
  double *x = NULL, *C = NULL, *gram = NULL, *lambda = NULL, *B = NULL, *beta = NULL;
  double *within = NULL;
  size_t rank = 0, k;
  int status = DPD_OK;
  *out = NULL;
  if (K < 2 || p == 0 || n == 0 || row == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'K': %zu (allowed: K >= 2 classes, p >= 1, n >= 1 rows)", K);
  }
  if (K > SIZE_MAX / 2 / K || p > SIZE_MAX / sizeof(double) / (2 * K + 2)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': %zu (allowed: K p doubles in memory)",
                    p);
  }
  d = calloc(1, sizeof *d);
  if (d == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  d->n = n;
  d->p = p;
  d->K = K;
  d->npairs = K * (K - 1) / 2;
  d->counts = calloc(K, sizeof *d->counts);
  d->means = calloc(K * p, sizeof *d->means);
  d->global_mean = calloc(p, sizeof *d->global_mean);
  d->centred_norm = calloc(K, sizeof *d->centred_norm);
  d->within_rms = calloc(K, sizeof *d->within_rms);
  d->cosines = malloc(d->npairs * sizeof *d->cosines);
  x = malloc(p * sizeof *x);
  C = malloc(K * p * sizeof *C);
  gram = malloc(K * K * sizeof *gram);
  lambda = malloc(K * sizeof *lambda);
  B = calloc(K * p, sizeof *B);
  beta = malloc(n * sizeof *beta);
  within = calloc(K, sizeof *within);
  if (d->counts == NULL || d->means == NULL || d->global_mean == NULL || d->centred_norm == NULL ||
      d->within_rms == NULL || d->cosines == NULL || x == NULL || C == NULL || gram == NULL ||
      lambda == NULL || B == NULL || beta == NULL || within == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (diagnostics: n = %zu, p = %zu, K = %zu)", n,
                      p, K);
    goto done;
  }
  /* pass 1: class sums, norms */
  d->x_norm_max = 0.0;
  {
    double norm_sum = 0.0;
    for (size_t i = 0; i < n; i++) {
      double nx;
      if ((status = row_get(row, user, i, p, K, x, &k, err)) < 0) {
        goto done;
      }
      d->counts[k]++;
      for (size_t l = 0; l < p; l++) {
        d->means[k * p + l] += x[l];
      }
      nx = sqrt(dot(x, x, p));
      norm_sum += nx;
      d->x_norm_max = nx > d->x_norm_max ? nx : d->x_norm_max;
    }
    d->x_norm_mean = norm_sum / (double)n;
  }
  for (k = 0; k < K; k++) {
    if (d->counts[k] == 0) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'labels': class %zu has no row (allowed: labels "
                        "0..K-1 with every class present, K = %zu)",
                        k, K);
      goto done;
    }
  }
  for (size_t l = 0; l < p; l++) { /* mu_G = (sum of all rows) / n, classes in order */
    double s = 0.0;
    for (k = 0; k < K; k++) {
      s += d->means[k * p + l];
    }
    d->global_mean[l] = s / (double)n;
  }
  for (k = 0; k < K; k++) {
    for (size_t l = 0; l < p; l++) {
      d->means[k * p + l] /= (double)d->counts[k];
      C[k * p + l] = d->means[k * p + l] - d->global_mean[l]; /* column k of C, column-major */
    }
    d->centred_norm[k] = sqrt(dot(C + k * p, C + k * p, p));
  }
  /* between: cosines, trace, Gram matrix */
  d->cos_etf = -1.0 / (double)(K - 1);
  d->cos_min = INFINITY;
  d->cos_max = -INFINITY;
  d->cos_max_dev = 0.0;
  {
    size_t m = 0, finite = 0;
    double sum = 0.0, bt = 0.0;
    for (size_t j = 0; j < K; j++) {
      for (k = j; k < K; k++) {
        gram[j * K + k] = gram[k * K + j] = dot(C + j * p, C + k * p, p);
      }
      bt += gram[j * K + j];
    }
    for (size_t j = 0; j < K; j++) {
      for (k = j + 1; k < K; k++, m++) {
        const double den = d->centred_norm[j] * d->centred_norm[k];
        const double c = den > 0.0 ? gram[j * K + k] / den : NAN;
        d->cosines[m] = c;
        if (!isnan(c)) {
          finite++;
          sum += c;
          d->cos_min = c < d->cos_min ? c : d->cos_min;
          d->cos_max = c > d->cos_max ? c : d->cos_max;
          d->cos_max_dev = fmax(d->cos_max_dev, fabs(c - d->cos_etf));
        }
      }
    }
    d->cos_mean = finite > 0 ? sum / (double)finite : NAN;
    if (finite == 0) {
      d->cos_min = d->cos_max = d->cos_max_dev = NAN;
    }
    d->between_trace = bt / (double)K;
  }
  {
    lapack_int info =
        LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)K, gram, (lapack_int)K, lambda);
    double top;
    if (info != 0) {
      status = DPD_FAIL(err, DPD_ESOLVER, "diagnostics: LAPACKE_dsyev failed (info %d)", (int)info);
      goto done;
    }
    top = lambda[K - 1]; /* ascending */
    for (size_t j = 0; j < K; j++) {
      if (top > 0.0 && lambda[j] > DPD_NC_RANK_RTOL * top) {
        double *b = B + rank * p; /* b = C v_j / lambda_j */
        for (k = 0; k < K; k++) {
          const double vk = gram[j * K + k] / lambda[j];
          for (size_t l = 0; l < p; l++) {
            b[l] += C[k * p + l] * vk;
          }
        }
        rank++;
      }
    }
    d->between_rank = rank;
  }
  /* pass 2: residuals */
  {
    double wsum = 0.0, nc1 = 0.0, bsum = 0.0;
    for (size_t i = 0; i < n; i++) {
      double r2 = 0.0, binf = 0.0;
      if ((status = row_get(row, user, i, p, K, x, &k, err)) < 0) {
        goto done;
      }
      for (size_t l = 0; l < p; l++) {
        x[l] -= d->means[k * p + l];
        r2 += x[l] * x[l];
        binf = fmax(binf, fabs(x[l]));
      }
      for (size_t j = 0; j < rank; j++) {
        const double z = dot(B + j * p, x, p);
        nc1 += z * z;
      }
      within[k] += r2;
      wsum += r2;
      beta[i] = binf;
      bsum += binf;
    }
    d->within_trace = wsum / (double)n;
    d->nc1 = nc1 / (double)n;
    d->beta_mean = bsum / (double)n;
    d->trace_ratio = d->between_trace > 0.0 ? d->within_trace / d->between_trace : INFINITY;
    for (k = 0; k < K; k++) {
      d->within_rms[k] = sqrt(within[k] / (double)d->counts[k]);
    }
  }
  gsl_sort(beta, 1, n);
  for (size_t q = 0; q < DPD_NC_BETA_QUANTILES; q++) {
    d->beta_prob[q] = probs[q];
    d->beta_quantile[q] = gsl_stats_quantile_from_sorted_data(beta, 1, n, probs[q]);
  }
  d->G_ce = sqrt((double)(K - 1) / (double)K) * d->x_norm_max;
done:
  free(x);
  free(C);
  free(gram);
  free(lambda);
  free(B);
  free(beta);
  free(within);
  if (status < 0) {
    dpd_nc_diagnostics_free(d);
    return status;
  }
  *out = d;
  return DPD_OK;
}
