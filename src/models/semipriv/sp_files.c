/* model=semipriv on a user's features: the keys features, labels, public_features, test_features,
 * test_labels, positive_class, and Algorithm 1 on the files.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/npy_impl.h"
#include "core/replicate_impl.h"
#include "core/datafile_impl.h"
#include "core/stats_impl.h"
#include "core/table_impl.h"
#include "dpdyn/pca.h"
#include "models/semipriv/sp_model_impl.h"

static const char *const gen_keys[] = {"d",   "k_true", "a",  "c",    "s",
                                       "tau", "lambda", "nu", "trunc"};
/* The bytes a file's matrix takes once read: the .npy header's shape, or for text at most one
 * double per 2 bytes (a digit and a separator). */
/* A matrix from either kind of file (the core readers): rows x cols, row-major, returned-owned. */
int dpd__sp_files_setup(dpd_keys *keys, dpd__sp_files *f, dpd_err *err) {
  static const char *const file_keys[] = {"labels", "public_features", "test_features",
                                          "test_labels", "positive_class"};
  const char *command = dpd_keys_command_get(keys);
  const int account = strcmp(command, "account") == 0;
  const char *path, *labels, *pub, *test, *test_labels;
  int status;
  memset(f, 0, sizeof *f);
  if ((status = dpd__model_features_key(keys, "law", file_keys,
                                        sizeof file_keys / sizeof *file_keys, &path, err)) < 0 ||
      path == NULL) {
    return status;
  }
  for (size_t k = 0; k < sizeof gen_keys / sizeof *gen_keys; k++) {
    if (dpd_keys_given(keys, gen_keys[k]) && strcmp(gen_keys[k], "d") != 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given with features = file:PATH (allowed: only "
                      "with features = law, the synthetic data law)",
                      gen_keys[k]);
    }
  }
  if ((status = dpd__model_file_key(keys, "labels", &labels, err)) < 0 ||
      (status = dpd__model_file_key(keys, "public_features", &pub, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_features", &test, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_labels", &test_labels, err)) < 0) {
    return status;
  }
  if (test_labels != NULL && test == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_labels': given without test_features (allowed: the "
                    "labels of the test_features file)");
  }
  if (test == NULL && !account) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'test_features' (allowed: file:PATH; required with "
                    "features = file:PATH: the test accuracy is measured on these rows)");
  }
  if (!dpd_keys_given(keys, "zeta")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'zeta' (allowed: finite > 0; required with features = "
                    "file:PATH: the hinge loss's margin scale must be chosen without the data, "
                    "which give no guaranteed margin)");
  }
  if (dpd_keys_given(keys, "positive_class")) {
    if ((status = dpd_keys_real_get(keys, "positive_class", &f->positive_class, err)) < 0) {
      return status;
    }
    if (f->positive_class != floor(f->positive_class)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'positive_class': %.17g (allowed: an integer label)",
                      f->positive_class);
    }
    f->has_positive = 1;
  }
  f->from_file = 1;
  f->train.path = path;
  f->train.labels_path = labels;
  f->pub.path = pub;
  f->test.path = test;
  f->test.labels_path = test_labels;
  f->has_public = pub != NULL;
  f->has_test = test != NULL && !account;
  {
    double b = 0.0;
    if ((status = dpd__datafile_bytes("features", path, &b, err)) < 0) {
      return status;
    }
    f->bytes = 2.0 * b;
    if (labels != NULL && (status = dpd__datafile_bytes("labels", labels, &b, err)) == DPD_OK) {
      f->bytes += 2.0 * b;
    }
    if (status == DPD_OK && pub != NULL && !account &&
        (status = dpd__datafile_bytes("public_features", pub, &b, err)) == DPD_OK) {
      f->bytes += 2.0 * b;
    }
    if (status == DPD_OK && f->has_test &&
        (status = dpd__datafile_bytes("test_features", test, &b, err)) == DPD_OK) {
      f->bytes += 2.0 * b;
    }
    if (status == DPD_OK && f->has_test && test_labels != NULL &&
        (status = dpd__datafile_bytes("test_labels", test_labels, &b, err)) == DPD_OK) {
      f->bytes += 2.0 * b;
    }
    if (status < 0) {
      return status;
    }
  }
  if (account) {
    f->has_public = 0; /* account needs the training set's size alone */
  }
  return DPD_OK;
}

/* One set: key/labels_key name it in errors; labelled sets take their labels from the labels
 * file or column 0. width: 0 any, else the features per row must be width (the training set's).
 */
static int read_set(dpd__sp_set *s, const char *key, const char *labels_key, int labelled,
                    const dpd__sp_files *f, size_t width, size_t max_bytes, dpd_err *err) {
  double *raw = NULL, *lab = NULL;
  size_t rows, cols, lrows = 0, lcols = 0, first = 0;
  int status;
  if ((status = dpd__datafile_read(key, s->path, max_bytes, &raw, &rows, &cols, NULL, err)) < 0) {
    return status;
  }
  const char *lkey = key, *lpath = s->path;
  if (labelled && s->labels_path != NULL) {
    lkey = labels_key;
    lpath = s->labels_path;
    if ((status = dpd__datafile_read(lkey, lpath, max_bytes, &lab, &lrows, &lcols, NULL, err)) <
        0) {
      goto done;
    }
    if (lcols != 1 || lrows != rows) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' has %zu x %zu values for the %zu rows of "
                        "'%s' (allowed: one label per row, a 1-D array or one column)",
                        lkey, lpath, lrows, lcols, rows, s->path);
      goto done;
    }
  } else if (labelled) {
    first = 1;
    if (cols < 2) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' has 1 column (allowed: `label x_1 ... x_p` "
                        "per row, or give the labels in a labels file)",
                        key, s->path);
      goto done;
    }
  }
  const size_t p = cols - first;
  if (width != 0 && p != width) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' has %zu features per row (allowed: %zu, as "
                      "in 'features')",
                      key, s->path, p, width);
    goto done;
  }
  if (labelled) {
    if ((s->y = malloc(rows * sizeof *s->y)) == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", lpath);
      goto done;
    }
    for (size_t i = 0; i < rows; i++) {
      const double v = first ? raw[i * cols] : lab[i];
      if (f->has_positive) {
        if (!isfinite(v) || v != floor(v)) {
          status = DPD_FAIL(err, DPD_EINVAL,
                            "invalid value for '%s': label %.17g in row %zu of '%s' (allowed: "
                            "integers, with positive_class)",
                            lkey, v, i + 1, lpath);
          goto done;
        }
        s->y[i] = v == f->positive_class ? 1.0 : -1.0;
      } else if (v == 1.0 || v == -1.0) {
        s->y[i] = v;
      } else {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': label %.17g in row %zu of '%s' (allowed: -1 "
                          "or +1; or any integers with positive_class = C for one-vs-rest)",
                          lkey, v, i + 1, lpath);
        goto done;
      }
    }
  }
  if (labelled && width == 0) { /* the training set: both classes */
    size_t pos = 0;
    for (size_t i = 0; i < rows; i++) {
      pos += s->y[i] > 0.0;
    }
    if (pos == 0 || pos == rows) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': every label of '%s' is %s (allowed: both "
                        "classes in the training set%s)",
                        f->has_positive ? "positive_class" : lkey, lpath, pos == 0 ? "-1" : "+1",
                        f->has_positive ? ": positive_class must be a label of the file" : "");
      goto done;
    }
  }
  /* features: finite; drop the label column in place; scale each row to the unit sphere */
  for (size_t i = 0; i < rows; i++) {
    double ss = 0.0;
    for (size_t l = 0; l < p; l++) {
      const double v = raw[i * cols + first + l];
      if (!(fabs(v) <= 1e150)) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': %g in row %zu, feature column %zu of '%s' "
                          "(allowed: finite features with |x| <= 1e150, so that the squared "
                          "norms stay finite)",
                          key, v, i + 1, l + 1, s->path);
        goto done;
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
  s->n = rows;
  s->p = p;
  s->X = raw;
  raw = NULL;
  status = DPD_OK;
done:
  free(raw);
  free(lab);
  return status;
}

static int size_record(dpd_keys *keys, const char *key, size_t value, const char *path,
                       dpd_err *err) {
  char buf[32];
  if (dpd_keys_given(keys, key)) {
    size_t given;
    int status = dpd_keys_size_get(keys, key, &given, err);
    if (status < 0) {
      return status;
    }
    if (given != value) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %zu (allowed: %zu, from '%s'; or leave '%s' out)",
                      key, given, value, path, key);
    }
  }
  snprintf(buf, sizeof buf, "%zu", value);
  return dpd_keys_effective_set(keys, key, buf, err);
}

int dpd__sp_files_read(dpd_keys *keys, const dpd_run_env *env, dpd__sp_files *f, int need_test,
                       dpd_err *err) {
  const size_t mb = env->max_memory;
  int status;
  if ((status = read_set(&f->train, "features", "labels", 1, f, 0, mb, err)) < 0) {
    return status;
  }
  if ((status = size_record(keys, "d", f->train.p, f->train.path, err)) < 0 ||
      (status = size_record(keys, "n", f->train.n, f->train.path, err)) < 0) {
    return status;
  }
  if (f->has_public) {
    if ((status = read_set(&f->pub, "public_features", NULL, 0, f, f->train.p, mb, err)) < 0 ||
        (status = size_record(keys, "n_public", f->pub.n, f->pub.path, err)) < 0) {
      return status;
    }
  }
  if (need_test && f->has_test) {
    if ((status = read_set(&f->test, "test_features", "test_labels", 1, f, f->train.p, mb, err)) <
            0 ||
        (status = size_record(keys, "n_test", f->test.n, f->test.path, err)) < 0) {
      return status;
    }
  }
  return DPD_OK;
}

void dpd__sp_files_free(dpd__sp_files *f) {
  dpd__sp_set *sets[3] = {&f->train, &f->pub, &f->test};
  for (size_t k = 0; k < 3; k++) {
    free(sets[k]->X);
    free(sets[k]->y);
    sets[k]->X = sets[k]->y = NULL;
  }
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

/* P = X V for the n x d rows X and the d x k row-major directions V. */
static void project(const double *X, size_t n, size_t d, const double *V, size_t k, double *P) {
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < k; j++) {
      double s = 0.0;
      for (size_t l = 0; l < d; l++) {
        s += X[i * d + l] * V[l * k + j];
      }
      P[i * k + j] = s;
    }
  }
}

int dpd__sp_files_run(const dpd__sp_files *f, const dpd_semipriv_run_config *cfg,
                      dpd_semipriv_result **out, dpd_err *err) {
  const size_t d = f->train.p, k = cfg->k, n = f->train.n, nt = f->test.n, seeds = cfg->seeds;
  const int pca = k < d;
  dpd_pca_result *pr = NULL;
  dpd_semipriv_result *res = calloc(1, sizeof *res);
  double *P = NULL, *Pt = NULL, gap = NAN;
  dpd_err *errs = calloc(seeds, sizeof *errs);
  int status;
  *out = NULL;
  if (res == NULL || errs == NULL ||
      (res->replicates = malloc(seeds * DPD_SEMIPRIV_METRIC_COUNT * sizeof *res->replicates)) ==
          NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (seeds = %zu)", seeds);
    goto done;
  }
  if (pca) {
    /* the top k + 1 directions give the sample's eigengap; k + 1 beyond the numerical rank of the
     * public sample: the top k alone (gap not available) */
    dpd_pca_config pc = dpd_pca_config_default();
    dpd_err e2;
    pc.m = f->pub.n;
    pc.p = d;
    pc.k = k + 1;
    pc.center = cfg->center;
    status = dpd_pca_compute_dense(&pc, f->pub.X, d, &pr, &e2);
    if (status < 0) {
      pc.k = k;
      if ((status = dpd_pca_compute_dense(&pc, f->pub.X, d, &pr, err)) < 0) {
        goto done;
      }
    } else {
      gap = pr->eigenvalues[k - 1] - pr->eigenvalues[k];
    }
    if ((P = malloc(n * k * sizeof *P)) == NULL || (Pt = malloc(nt * k * sizeof *Pt)) == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (n = %zu, k = %zu)", n, k);
      goto done;
    }
    /* V is d x pc.k row-major: take its first k columns */
    double *V = malloc(d * k * sizeof *V);
    if (V == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (d = %zu)", d);
      goto done;
    }
    for (size_t l = 0; l < d; l++) {
      memcpy(V + l * k, pr->V + l * pr->k, k * sizeof *V);
    }
    project(f->train.X, n, d, V, k, P);
    project(f->test.X, nt, d, V, k, Pt);
    free(V);
  }
  files_job job = {.P = pca ? P : f->train.X,
                   .y = f->train.y,
                   .Pt = pca ? Pt : f->test.X,
                   .yt = f->test.y,
                   .n = n,
                   .n_test = nt,
                   .k = k,
                   .seed = cfg->seed,
                   .rows = res->replicates,
                   .errs = errs};
  job.sgd = dpd_semipriv_sgd_config_default();
  job.sgd.epsilon = cfg->epsilon;
  job.sgd.delta = cfg->delta;
  job.sgd.zeta = cfg->zeta;
  job.sgd.steps = cfg->steps;
  const dpd__replicate_plan plan = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = k + dpd_semipriv_sgd_work(k),
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "semipriv"};
  size_t failed = seeds;
  status = dpd__replicate_run(&plan, files_replicate, &job, &failed, err);
  if (status < 0 && status != DPD_ECANCELLED && failed < seeds) {
    status = errs[failed].status < 0
                 ? DPD_FAIL(err, errs[failed].status, "semipriv: replicate %zu: %s", failed,
                            errs[failed].reason)
                 : DPD_FAIL(err, status, "semipriv: replicate %zu failed", failed);
  }
  if (status < 0) {
    goto done;
  }
  for (size_t r = 0; r < seeds; r++) {
    res->replicates[r * DPD_SEMIPRIV_METRIC_COUNT + DPD_SEMIPRIV_EIGENGAP_HAT] = gap;
    if (!pca) {
      res->replicates[r * DPD_SEMIPRIV_METRIC_COUNT + DPD_SEMIPRIV_XI_HAT] = NAN;
    }
  }
  res->seeds = seeds;
  res->k = k;
  res->d = d;
  res->steps = cfg->steps == 0 ? n * n : cfg->steps;
  dpd__stats_columns_mean_se(res->replicates, seeds, DPD_SEMIPRIV_METRIC_COUNT, res->mean, res->se);
  res->zeta = cfg->zeta;
  res->gamma0 = NAN;
  res->xi0 = NAN;
  res->L = 1.0 / cfg->zeta;
  res->sigma = dpd_semipriv_sgd_sigma(n, res->L, cfg->epsilon, cfg->delta);
  res->eta1 = dpd_semipriv_sgd_eta(1, n, res->L, k, res->sigma, job.sgd.radius);
  res->xi_k = NAN;
  res->eigengap = gap;
  res->margin_guaranteed = NAN;
  res->zb_bound = pca ? dpd_semipriv_theory_zb_bound(gap, f->pub.n, cfg->beta) : 0.0;
  *out = res;
  res = NULL;
  status = DPD_OK;
done:
  dpd_semipriv_result_free(res);
  dpd_pca_result_free(pr);
  free(P);
  free(Pt);
  free(errs);
  return status;
}

int dpd__sp_files_output(dpd_output *out, const dpd__sp_files *f, int replicates, dpd_err *err) {
  cJSON *o = cJSON_AddObjectToObject(out->summary, "features");
  if (o == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(o, "source", f->from_file ? "file" : "law");
  if (!f->from_file) {
    return DPD_OK;
  }
  cJSON_AddStringToObject(o, "path", f->train.path);
  if (f->train.labels_path != NULL) {
    cJSON_AddStringToObject(o, "labels", f->train.labels_path);
  }
  cJSON_AddNumberToObject(o, "n", (double)f->train.n);
  cJSON_AddNumberToObject(o, "d", (double)f->train.p);
  if (f->has_positive) {
    cJSON_AddNumberToObject(o, "positive_class", f->positive_class);
  }
  if (f->pub.X != NULL) {
    cJSON_AddStringToObject(o, "public_path", f->pub.path);
    cJSON_AddNumberToObject(o, "n_public", (double)f->pub.n);
  }
  if (f->test.X != NULL) {
    cJSON_AddStringToObject(o, "test_path", f->test.path);
    if (f->test.labels_path != NULL) {
      cJSON_AddStringToObject(o, "test_labels", f->test.labels_path);
    }
    cJSON_AddNumberToObject(o, "n_test", (double)f->test.n);
  }
  cJSON_AddStringToObject(o, "scaling", "every row scaled to norm 1 (the unit sphere)");
  if (replicates) {
    return dpd__output_note_add(
        out, err,
        "note: features from files: the replicates redraw only the noise and the sampled "
        "indices of Noisy-SGD; the labelled, public and test rows are the files' in every "
        "replicate, so the standard error measures the noise alone. Every row was scaled to "
        "norm 1 (the algorithm's unit sphere; part of the mechanism)");
  }
  return DPD_OK;
}
