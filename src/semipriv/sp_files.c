/* Semi-private learning on a user's features: the sets read and scaled, Algorithm 1 on them
 * (sp_files_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Pinto, Hu, Yang & Sanyal (seed 003; arXiv:2306.03962), Algorithm 1; Bassily, Smith
 * & Thakurta (arXiv:1405.7085), Noisy-SGD (semipriv.h).
 *
 * Files are read by the core's bounded readers (.npy: npy.c; text: dpd__read_matrix of table.c),
 * the layout of docs/input.md: features `x_1 .. x_p` per row with a labels file, else
 * `label x_1 .. x_p`; the public set has no labels (all columns are features). Labels are +-1,
 * or any integers with positive_class = C (C -> +1, every other label -> -1: one-vs-rest).
 *
 * The unit sphere. Noisy-SGD's sigma is calibrated for |x| <= 1 (L = 1/zeta bounds the hinge
 * gradient), and the algorithm's margin assumes |x| = 1: every row of every set is scaled to
 * norm 1 (a zero row stays 0). This map is applied row by row and does not depend on the other
 * rows, so it is part of the mechanism, not a bound read off the data. The PCA of the public set
 * and the projection keep |A^T x| <= |x| = 1.
 *
 * Replicates. The files are the same in every replicate: a replicate redraws only the sampled
 * indices and the Gaussian noise of Noisy-SGD (region tag 3 of stream (seed, r), semipriv.h), so
 * the standard error measures the noise alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/datafile_impl.h"
#include "core/error_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/pca.h"
#include "semipriv/sp_files_impl.h"

/* The labels of rows 0..rows) as +-1 into y: column 0 of raw (first = 1) or lab. */
static int labels_convert(double *y, const double *raw, size_t cols, const double *lab, size_t rows,
                          const dpd__sp_files *f, const char *lkey, const char *lpath,
                          dpd_err *err) {
  for (size_t i = 0; i < rows; i++) {
    const double v = lab == NULL ? raw[i * cols] : lab[i];
    if (f->multiclass) { /* trainer = dpsgd: class indices 0 .. K-1 (K from the training set) */
      if (!(v >= 0.0 && v < (f->classes > 0 ? (double)f->classes : 2147483647.0)) ||
          v != floor(v)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': label %.17g in row %zu of '%s' (allowed: "
                        "integers 0 .. K-1%s with trainer = dpsgd; or positive_class = C)",
                        f->classes > 0 ? "test_labels" : "labels", v, i + 1, lpath,
                        f->classes > 0 ? ", K from the training labels" : "");
      }
      y[i] = v;
    } else if (f->has_positive) {
      if (!isfinite(v) || v != floor(v)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': label %.17g in row %zu of '%s' (allowed: "
                        "integers, with positive_class)",
                        lkey, v, i + 1, lpath);
      }
      y[i] = v == f->positive_class ? 1.0 : -1.0;
    } else if (v == 1.0 || v == -1.0) {
      y[i] = v;
    } else {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': label %.17g in row %zu of '%s' (allowed: -1 "
                      "or +1; or any integers with positive_class = C for one-vs-rest)",
                      lkey, v, i + 1, lpath);
    }
  }
  return DPD_OK;
}

/* Features: finite; the label column (first = 1) dropped in place; each row scaled to norm 1. */
static int rows_normalise(double *raw, size_t rows, size_t cols, size_t first, const char *key,
                          const char *path, dpd_err *err) {
  const size_t p = cols - first;
  for (size_t i = 0; i < rows; i++) {
    double ss = 0.0;
    for (size_t l = 0; l < p; l++) {
      const double v = raw[i * cols + first + l];
      if (!(fabs(v) <= 1e150)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': %g in row %zu, feature column %zu of '%s' "
                        "(allowed: finite features with |x| <= 1e150, so that the squared "
                        "norms stay finite)",
                        key, v, i + 1, l + 1, path);
      }
      raw[i * p + l] = v; /* never ahead of the reads */
      ss += v * v;
    }
    const double norm = sqrt(ss);
    if (norm > 0.0) {
      for (size_t l = 0; l < p; l++) {
        raw[i * p + l] /= norm;
      }
    }
  }
  return DPD_OK;
}

/* The labels file of a labelled set: one label per row of the features. */
static int labels_read(const dpd__sp_set *s, const char *lkey, size_t rows, size_t max_bytes,
                       double **lab, dpd_err *err) {
  size_t lrows = 0, lcols = 0;
  int status = dpd__datafile_read(lkey, s->labels_path, max_bytes, lab, &lrows, &lcols, NULL, err);
  if (status == DPD_OK && (lcols != 1 || lrows != rows)) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' has %zu x %zu values for the %zu rows of "
                      "'%s' (allowed: one label per row, a 1-D array or one column)",
                      lkey, s->labels_path, lrows, lcols, rows, s->path);
  }
  return status;
}

/* Both classes in the training set. */
static int classes_check(const double *y, size_t rows, const dpd__sp_files *f, const char *lkey,
                         const char *lpath, dpd_err *err) {
  size_t pos = 0;
  if (f->multiclass) {
    return dpd__sp_classes_count(y, rows, lpath, NULL, err);
  }
  for (size_t i = 0; i < rows; i++) {
    pos += y[i] > 0.0;
  }
  if (pos == 0 || pos == rows) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': every label of '%s' is %s (allowed: both classes "
                    "in the training set%s)",
                    f->has_positive ? "positive_class" : lkey, lpath, pos == 0 ? "-1" : "+1",
                    f->has_positive ? ": positive_class must be a label of the file" : "");
  }
  return DPD_OK;
}

int dpd__sp_set_read(dpd__sp_set *s, const char *key, const char *labels_key, int labelled,
                     const dpd__sp_files *f, size_t width, size_t max_bytes, dpd_err *err) {
  double *raw = NULL, *lab = NULL;
  size_t rows, cols, first = 0;
  const int own_labels = labelled && s->labels_path != NULL;
  const char *lkey = own_labels ? labels_key : key, *lpath = own_labels ? s->labels_path : s->path;
  int status = dpd__datafile_read(key, s->path, max_bytes, &raw, &rows, &cols, NULL, err);
  if (status < 0) {
    return status;
  }
  if (own_labels) {
    status = labels_read(s, lkey, rows, max_bytes, &lab, err);
  } else if (labelled) {
    first = 1;
    if (cols < 2) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' has 1 column (allowed: `label x_1 ... x_p` "
                        "per row, or give the labels in a labels file)",
                        key, s->path);
    }
  }
  if (status == DPD_OK && width != 0 && cols - first != width) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' has %zu features per row (allowed: %zu, as "
                      "in 'features')",
                      key, s->path, cols - first, width);
  }
  if (status == DPD_OK && labelled) {
    if ((s->y = malloc(rows * sizeof *s->y)) == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", lpath);
    } else if ((status = labels_convert(s->y, raw, cols, lab, rows, f, lkey, lpath, err)) == 0 &&
               width == 0) {
      status = classes_check(s->y, rows, f, lkey, lpath, err);
    }
  }
  if (status == DPD_OK &&
      (status = rows_normalise(raw, rows, cols, first, key, s->path, err)) == DPD_OK) {
    s->n = rows;
    s->p = cols - first;
    s->X = raw;
    raw = NULL;
  }
  free(raw);
  free(lab);
  return status;
}

void dpd__sp_files_free(dpd__sp_files *f) {
  dpd__sp_set *sets[3] = {&f->train, &f->pub, &f->test};
  for (size_t k = 0; k < 3; k++) {
    free(sets[k]->X);
    free(sets[k]->y);
    sets[k]->X = sets[k]->y = NULL;
  }
  dpd_schedule_free(f->schedule);
  f->schedule = NULL;
}

double dpd__sp_files_run_bytes(const dpd__sp_files *f, size_t k, size_t seeds) {
  const double d = (double)f->train.p;
  return f->bytes + 8.0 * ((double)(f->train.n + f->test.n) * (double)k + 2.0 * d * d +
                           (double)seeds * DPD_SEMIPRIV_METRIC_COUNT);
}

/* ---- Algorithm 1 on the files ---------------------------------------------------------------- */

typedef struct {
  const double *P, *y, *Pt, *yt; /* projected training and test rows (n x k, n_test x k) */
  size_t n, n_test, k;
  dpd_semipriv_sgd_config sgd;
  uint64_t seed;
  double *rows;  /* [seeds METRIC_COUNT] */
  dpd_err *errs; /* [seeds] */
} files_job;

static int files_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  files_job *j = job;
  double *row = j->rows + rep * DPD_SEMIPRIV_METRIC_COUNT;
  double *w = work, *sgdw = work + j->k, h, acc;
  dpd_semipriv_sgd_info info;
  (void)slot;
  int st = dpd_semipriv_sgd_run(&j->sgd, j->P, j->y, j->n, j->k, j->seed, rep, w, sgdw, &info,
                                &j->errs[rep]);
  if (st < 0) {
    return st;
  }
  dpd_semipriv_hinge(j->P, j->y, j->n, j->k, w, j->sgd.zeta, &h, &acc);
  row[DPD_SEMIPRIV_TRAIN_HINGE] = h;
  row[DPD_SEMIPRIV_TRAIN_ACCURACY] = acc;
  dpd_semipriv_hinge(j->Pt, j->yt, j->n_test, j->k, w, j->sgd.zeta, &h, &acc);
  row[DPD_SEMIPRIV_TEST_HINGE] = h;
  row[DPD_SEMIPRIV_TEST_ACCURACY] = acc;
  double s = 0.0;
  for (size_t l = 0; l < j->k; l++) {
    s += w[l] * w[l];
  }
  row[DPD_SEMIPRIV_W_NORM] = sqrt(s);
  row[DPD_SEMIPRIV_ACTIVE_FRACTION] = info.active_fraction;
  row[DPD_SEMIPRIV_XI_HAT] = NAN; /* no w* for file features */
  row[DPD_SEMIPRIV_SUBSPACE_ERROR] = NAN;
  row[DPD_SEMIPRIV_MARGIN_MIN] = NAN;
  row[DPD_SEMIPRIV_EIGENGAP_HAT] = NAN; /* filled by the caller: one PCA for all replicates */
  return DPD_OK;
}

/* P = X V for the n x d rows X and the first k of the vk directions V (d x vk row-major). */
static void project(const double *X, size_t n, size_t d, const double *V, size_t vk, size_t k,
                    double *P) {
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < k; j++) {
      double s = 0.0;
      for (size_t l = 0; l < d; l++) {
        s += X[i * d + l] * V[l * vk + j];
      }
      P[i * k + j] = s;
    }
  }
}

/* The PCA of the public set and the training and test rows projected on its top k directions
 * (*P, *Pt returned-owned); *gap: lambda_k - lambda_{k+1}, NaN when k + 1 exceeds the public
 * sample's numerical rank (then the top k alone). */
static int files_project(const dpd__sp_files *f, const dpd_semipriv_run_config *cfg, double **P,
                         double **Pt, double *gap, dpd_err *err) {
  const size_t d = f->train.p, k = cfg->k;
  dpd_pca_config pc = dpd_pca_config_default();
  dpd_pca_result *pr = NULL;
  dpd_err e2;
  pc.m = f->pub.n;
  pc.p = d;
  pc.k = k + 1;
  pc.center = cfg->center;
  int status = dpd_pca_compute_dense(&pc, f->pub.X, d, &pr, &e2);
  if (status < 0) {
    pc.k = k;
    if ((status = dpd_pca_compute_dense(&pc, f->pub.X, d, &pr, err)) < 0) {
      return status;
    }
  } else {
    *gap = pr->eigenvalues[k - 1] - pr->eigenvalues[k];
  }
  if ((*P = malloc(f->train.n * k * sizeof **P)) == NULL ||
      (*Pt = malloc(f->test.n * k * sizeof **Pt)) == NULL) {
    dpd_pca_result_free(pr);
    return DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (n = %zu, k = %zu)", f->train.n, k);
  }
  project(f->train.X, f->train.n, d, pr->V, pr->k, k, *P);
  project(f->test.X, f->test.n, d, pr->V, pr->k, k, *Pt);
  dpd_pca_result_free(pr);
  return DPD_OK;
}

/* The result's means and constants once the replicates ran. */
static void files_result(dpd_semipriv_result *res, const dpd__sp_files *f,
                         const dpd_semipriv_run_config *cfg, double gap, double radius) {
  const size_t n = f->train.n, k = cfg->k, seeds = cfg->seeds;
  const int pca = k < f->train.p;
  for (size_t r = 0; r < seeds; r++) {
    res->replicates[r * DPD_SEMIPRIV_METRIC_COUNT + DPD_SEMIPRIV_EIGENGAP_HAT] = gap;
  }
  res->seeds = seeds;
  res->k = k;
  res->d = f->train.p;
  res->steps = cfg->steps == 0 ? n * n : cfg->steps;
  dpd__stats_columns_mean_se(res->replicates, seeds, DPD_SEMIPRIV_METRIC_COUNT, res->mean, res->se);
  res->zeta = cfg->zeta;
  res->gamma0 = NAN;
  res->xi0 = NAN;
  res->L = 1.0 / cfg->zeta;
  res->eta1 = dpd_semipriv_sgd_eta(1, n, res->L, k, res->sigma, radius);
  res->xi_k = NAN;
  res->eigengap = gap;
  res->margin_guaranteed = NAN;
  res->zb_bound = pca ? dpd_semipriv_theory_zb_bound(gap, f->pub.n, cfg->beta) : 0.0;
}

int dpd__sp_files_run(const dpd__sp_files *f, const dpd_semipriv_run_config *cfg,
                      dpd_semipriv_result **out, dpd_err *err) {
  const size_t k = cfg->k, seeds = cfg->seeds;
  const int pca = k < f->train.p;
  dpd_semipriv_result *res = calloc(1, sizeof *res);
  double *P = NULL, *Pt = NULL, gap = NAN;
  dpd_err *errs = calloc(seeds, sizeof *errs);
  size_t failed = seeds;
  int status = DPD_OK;
  *out = NULL;
  if (cfg->trainer == DPD_SEMIPRIV_TRAINER_DPSGD || f->public_fraction > 0.0 ||
      f->private_fraction < 1.0) { /* sp_dpsgd.c */
    free(errs);
    free(res);
    return dpd__sp_split_run(f, cfg, out, err);
  }
  if (res == NULL || errs == NULL ||
      (res->replicates = malloc(seeds * DPD_SEMIPRIV_METRIC_COUNT * sizeof *res->replicates)) ==
          NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (seeds = %zu)", seeds);
  } else if (pca) {
    status = files_project(f, cfg, &P, &Pt, &gap, err);
  }
  files_job job = {.P = pca ? P : f->train.X,
                   .y = f->train.y,
                   .Pt = pca ? Pt : f->test.X,
                   .yt = f->test.y,
                   .n = f->train.n,
                   .n_test = f->test.n,
                   .k = k,
                   .seed = cfg->seed,
                   .rows = res != NULL ? res->replicates : NULL,
                   .errs = errs};
  job.sgd = dpd_semipriv_sgd_config_default();
  job.sgd.epsilon = cfg->epsilon;
  job.sgd.delta = cfg->delta;
  job.sgd.zeta = cfg->zeta;
  job.sgd.steps = cfg->steps;
  if (status == DPD_OK && res != NULL) {
    status = dpd__sp_calibrate(cfg, f->train.n, 1.0 / cfg->zeta,
                               cfg->steps == 0 ? f->train.n * f->train.n : cfg->steps, res,
                               &job.sgd, err);
  }
  const dpd__replicate_plan plan = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = k + dpd_semipriv_sgd_work(k),
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "semipriv"};
  if (status == DPD_OK) {
    status = dpd__replicate_run(&plan, files_replicate, &job, &failed, err);
  }
  if (status < 0 && status != DPD_ECANCELLED && failed < seeds) {
    status = errs[failed].status < 0
                 ? DPD_FAIL(err, errs[failed].status, "semipriv: replicate %zu: %s", failed,
                            errs[failed].reason)
                 : DPD_FAIL(err, status, "semipriv: replicate %zu failed", failed);
  }
  if (status == DPD_OK) {
    files_result(res, f, cfg, gap, job.sgd.radius);
    *out = res;
    res = NULL;
  }
  dpd_semipriv_result_free(res);
  free(P);
  free(Pt);
  free(errs);
  return status;
}

int dpd__sp_files_bytes(dpd__sp_files *f, int run, dpd_err *err) {
  /* each file twice: the text or .npy read, then the matrix */
  const char *const keys[5] = {"features", "labels", "public_features", "test_features",
                               "test_labels"};
  const char *const paths[5] = {f->train.path, f->train.labels_path, run ? f->pub.path : NULL,
                                f->has_test ? f->test.path : NULL,
                                f->has_test ? f->test.labels_path : NULL};
  f->bytes = 0.0;
  for (size_t k = 0; k < 5; k++) {
    double b = 0.0;
    int status = paths[k] != NULL ? dpd__datafile_bytes(keys[k], paths[k], &b, err) : DPD_OK;
    if (status < 0) {
      return status;
    }
    f->bytes += 2.0 * b;
  }
  return DPD_OK;
}

int dpd__sp_files_check(const dpd__sp_files *f, int run, int zeta_given, dpd_err *err) {
  if (f->test.labels_path != NULL && f->test.path == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_labels': given without test_features (allowed: the "
                    "labels of the test_features file)");
  }
  if (f->test.path == NULL && run) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'test_features' (allowed: file:PATH; required with "
                    "features = file:PATH: the test accuracy is measured on these rows)");
  }
  if (!zeta_given) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'zeta' (allowed: finite > 0; required with features = "
                    "file:PATH: the hinge loss's margin scale must be chosen without the data, "
                    "which give no guaranteed margin)");
  }
  return DPD_OK;
}

int dpd__sp_files_read(dpd__sp_files *f, size_t max_bytes, int run, dpd__sp_size_fn record,
                       void *user, dpd_err *err) {
  const size_t p = 0, mb = max_bytes;
  int status;
  if ((status = dpd__sp_set_read(&f->train, "features", "labels", 1, f, p, mb, err)) < 0 ||
      (f->multiclass ? (status = dpd__sp_classes_count(f->train.y, f->train.n, f->train.path,
                                                       &f->classes, err)) < 0
                     : (f->classes = 2) == 0) ||
      (status = record(user, "d", f->train.p, f->train.path, err)) < 0 ||
      (status = record(user, "n", f->train.n, f->train.path, err)) < 0) {
    return status;
  }
  if (f->has_public && ((status = dpd__sp_set_read(&f->pub, "public_features", NULL, 0, f,
                                                   f->train.p, mb, err)) < 0 ||
                        (status = record(user, "n_public", f->pub.n, f->pub.path, err)) < 0)) {
    return status;
  }
  if (run && f->has_test &&
      ((status = dpd__sp_set_read(&f->test, "test_features", "test_labels", 1, f, f->train.p, mb,
                                  err)) < 0 ||
       (status = record(user, "n_test", f->test.n, f->test.path, err)) < 0)) {
    return status;
  }
  return DPD_OK;
}

int dpd__sp_positive_check(const dpd__sp_files *f, dpd_err *err) {
  if (f->has_positive && f->positive_class != floor(f->positive_class)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'positive_class': %.17g (allowed: an integer label)",
                    f->positive_class);
  }
  return DPD_OK;
}
