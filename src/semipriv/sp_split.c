/* Semi-private learning on file features with a split or the DP-SGD trainer: Algorithm 1 with
 * the public set a random part of the features file (public_fraction), a random part of the
 * private rows trained on (private_fraction), and either trainer (sp_files_impl.h;
 * docs/semipriv.md, "DP-SGD trainer (trainer=dpsgd)").
 * SPDX-License-Identifier: MIT
 *
 * A replicate r redraws, from stream (seed, r): the public split (region (tag 2, index 2^29)),
 * the private subset (region (tag 2, index 2^29 + 1)), the trainer's batches and noise (tag 3);
 * see dpd__sp_select and semipriv.h's "Random numbers". The PCA of the public rows is computed
 * per replicate with a split, once per run with public_features; the test rows are projected
 * once when the PCA is. The sizes (n_public, n_private, n) do not depend on the replicate, so the
 * noise is calibrated once per run at the n rows trained on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dot_impl.h"
#include "core/error_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/pca.h"
#include "semipriv/sp_files_impl.h"

/* ---- Algorithm 1 on split files ----------------------------------------------------------- */

typedef struct {
  const dpd__sp_files *f;
  const dpd_semipriv_run_config *cfg;
  int dpsgd;
  dpd_semipriv_sgd_config sgd; /* bst */
  dpd_dpsgd_config dp;         /* dpsgd */
  size_t N, n_public, n_private, n, k, d;
  const double *V; /* the PCA of public_features (d x vk row-major), once per run; NULL: none or
                      per replicate */
  size_t vk;
  double gap;
  const double *Pt;        /* the test rows projected once; NULL: per replicate */
  const int32_t *yi, *yti; /* classes of the file's rows and of the test rows (dpsgd) */
  double *rows, *drows;
  dpd_err *errs;
} split_job;

/* The PCA's rows: the public subset of the features file. */
typedef struct {
  const double *X;
  size_t d;
  const size_t *idx;
} subset_rows;

static int subset_row(void *user, size_t i, size_t a, size_t len, double *x, dpd_err *err) {
  const subset_rows *u = user;
  (void)err;
  memcpy(x, u->X + u->idx[i] * u->d + a, len * sizeof *x);
  return 0;
}

/* P = X[idx] V (idx NULL: rows 0 .. m-1) on the first k of the vk directions (V: d x vk
 * row-major); V NULL: a copy. Each entry one fixed-order dpd__dot8 with the direction's column
 * (copied to a contiguous k x d block first). */
static int project_rows(const double *X, const size_t *idx, size_t m, size_t d, const double *V,
                        size_t vk, size_t k, double *P, dpd_err *err) {
  double *Vt = V != NULL ? malloc(k * d * sizeof *Vt) : NULL;
  if (V != NULL && Vt == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (d = %zu, k = %zu)", d, k);
  }
  for (size_t j = 0; V != NULL && j < k; j++) {
    for (size_t l = 0; l < d; l++) {
      Vt[j * d + l] = V[l * vk + j];
    }
  }
  for (size_t i = 0; i < m; i++) {
    const double *x = X + (idx != NULL ? idx[i] : i) * d;
    if (V == NULL) {
      memcpy(P + i * d, x, d * sizeof *P);
      continue;
    }
    for (size_t j = 0; j < k; j++) {
      P[i * k + j] = dpd__dot8(x, Vt + j * d, d);
    }
  }
  free(Vt);
  return DPD_OK;
}

/* The top k (+ 1 for the gap) principal directions of rows idx of X. */
static int subset_pca(const split_job *j, const size_t *idx, dpd_pca_result **pr, double *gap,
                      dpd_err *err) {
  subset_rows u = {j->f->train.X, j->d, idx};
  dpd_pca_config pc = dpd_pca_config_default();
  dpd_err e1;
  pc.m = j->n_public;
  pc.p = j->d;
  pc.k = j->k + 1;
  pc.center = j->cfg->center;
  *gap = NAN;
  int st = dpd_pca_compute(&pc, subset_row, &u, pr, &e1);
  if (st == DPD_EINVAL || st == DPD_ESOLVER) {
    pc.k = j->k;
    st = dpd_pca_compute(&pc, subset_row, &u, pr, err);
  } else if (st < 0) {
    *err = e1;
  } else {
    *gap = (*pr)->eigenvalues[j->k - 1] - (*pr)->eigenvalues[j->k];
  }
  return st;
}

/* The trainer on P (n x k) and the metrics of the replicate. */
static int split_train(const split_job *j, size_t rep, const size_t *idx, const double *P,
                       const double *Pt, double *row, dpd_err *err) {
  const size_t n = j->n, k = j->k;
  int st = DPD_OK;
  if (j->dpsgd) {
    int32_t *yi = malloc(n * sizeof *yi);
    if (yi == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (n = %zu)", n);
    }
    for (size_t i = 0; i < n; i++) {
      yi[i] = j->yi[idx[i]];
    }
    st = dpd__sp_dpsgd_fit(&j->dp, rep, P, yi, n, Pt, j->yti, j->f->test.n, k, row,
                           j->drows + rep * DPD_SEMIPRIV_DPSGD_COUNT, NULL, err);
    free(yi);
    return st;
  }
  double *y = malloc(n * sizeof *y), *w = malloc((k + dpd_semipriv_sgd_work(k)) * sizeof *w), h,
         acc;
  dpd_semipriv_sgd_info info;
  if (y == NULL || w == NULL) {
    st = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (n = %zu)", n);
  }
  for (size_t i = 0; st == DPD_OK && i < n; i++) {
    y[i] = j->f->train.y[idx[i]];
  }
  if (st == DPD_OK && (st = dpd_semipriv_sgd_run(&j->sgd, P, y, n, k, j->cfg->seed, rep, w, w + k,
                                                 &info, err)) == DPD_OK) {
    dpd_semipriv_hinge(P, y, n, k, w, j->sgd.zeta, &h, &acc);
    row[DPD_SEMIPRIV_TRAIN_HINGE] = h;
    row[DPD_SEMIPRIV_TRAIN_ACCURACY] = acc;
    dpd_semipriv_hinge(Pt, j->f->test.y, j->f->test.n, k, w, j->sgd.zeta, &h, &acc);
    row[DPD_SEMIPRIV_TEST_HINGE] = h;
    row[DPD_SEMIPRIV_TEST_ACCURACY] = acc;
    double s = 0.0;
    for (size_t l = 0; l < k; l++) {
      s += w[l] * w[l];
    }
    row[DPD_SEMIPRIV_W_NORM] = sqrt(s);
    row[DPD_SEMIPRIV_ACTIVE_FRACTION] = info.active_fraction;
  }
  free(y);
  free(w);
  return st;
}

static int split_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  const split_job *j = job;
  const size_t N = j->N, n = j->n, k = j->k, d = j->d, nt = j->f->test.n;
  double *row = j->rows + rep * DPD_SEMIPRIV_METRIC_COUNT, gap = j->gap;
  dpd_err *err = &j->errs[rep];
  size_t *pub = malloc((j->n_public + 1) * sizeof *pub), *priv = malloc(N * sizeof *priv);
  size_t *idx = malloc(n * sizeof *idx);
  double *u = malloc(N * sizeof *u), *P = malloc(n * k * sizeof *P), *Pt = NULL;
  dpd_pca_result *pr = NULL;
  int st = DPD_OK;
  (void)work;
  if (pub == NULL || priv == NULL || idx == NULL || u == NULL || P == NULL ||
      (j->Pt == NULL && (Pt = malloc(nt * k * sizeof *Pt)) == NULL)) {
    st = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (rows = %zu, k = %zu)", N, k);
  } else if (dpd__replicate_progress(slot, 0)) {
    st = DPD_ECANCELLED;
  }
  if (st == DPD_OK && j->n_public > 0) { /* the public split */
    dpd__sp_select(j->cfg->seed, rep, DPD__SP_SPLIT_PUBLIC, NULL, N, j->n_public, pub, priv, u);
  } else if (st == DPD_OK) {
    for (size_t i = 0; i < N; i++) {
      priv[i] = i;
    }
  }
  if (st == DPD_OK && n < j->n_private) { /* the private subset */
    dpd__sp_select(j->cfg->seed, rep, DPD__SP_SPLIT_PRIVATE, priv, j->n_private, n, idx, NULL, u);
  } else if (st == DPD_OK) {
    memcpy(idx, priv, n * sizeof *idx);
  }
  const double *V = j->V;
  size_t vk = j->vk;
  if (st == DPD_OK && j->n_public > 0 && k < d && (st = subset_pca(j, pub, &pr, &gap, err)) == 0) {
    V = pr->V;
    vk = pr->k;
  }
  if (st == DPD_OK && (st = project_rows(j->f->train.X, idx, n, d, V, vk, k, P, err)) == 0 &&
      (Pt == NULL || (st = project_rows(j->f->test.X, NULL, nt, d, V, vk, k, Pt, err)) == 0)) {
    st = split_train(j, rep, idx, P, Pt != NULL ? Pt : j->Pt, row, err);
  }
  row[DPD_SEMIPRIV_XI_HAT] = NAN; /* no w* for file features */
  row[DPD_SEMIPRIV_SUBSPACE_ERROR] = NAN;
  row[DPD_SEMIPRIV_MARGIN_MIN] = NAN;
  row[DPD_SEMIPRIV_EIGENGAP_HAT] = gap;
  dpd_pca_result_free(pr);
  free(pub);
  free(priv);
  free(idx);
  free(u);
  free(P);
  free(Pt);
  return st;
}

/* Once per run: the PCA of public_features, the test rows projected (when not per replicate),
 * the class labels. */
static int split_shared(split_job *j, dpd_pca_result **pr, double **Pt, int32_t **yi, int32_t **yti,
                        dpd_err *err) {
  const dpd__sp_files *f = j->f;
  if (j->k < j->d && j->n_public == 0) {
    dpd_pca_config pc = dpd_pca_config_default();
    dpd_err e2;
    pc.m = f->pub.n;
    pc.p = j->d;
    pc.k = j->k + 1;
    pc.center = j->cfg->center;
    int st = dpd_pca_compute_dense(&pc, f->pub.X, j->d, pr, &e2);
    if (st < 0) {
      pc.k = j->k;
      if ((st = dpd_pca_compute_dense(&pc, f->pub.X, j->d, pr, err)) < 0) {
        return st;
      }
    } else {
      j->gap = (*pr)->eigenvalues[j->k - 1] - (*pr)->eigenvalues[j->k];
    }
    j->V = (*pr)->V;
    j->vk = (*pr)->k;
  }
  if (j->k == j->d || j->n_public == 0) {
    if ((*Pt = malloc(f->test.n * j->k * sizeof **Pt)) == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (n_test = %zu)", f->test.n);
    }
    int st = project_rows(f->test.X, NULL, f->test.n, j->d, j->V, j->vk, j->k, *Pt, err);
    if (st < 0) {
      return st;
    }
    j->Pt = *Pt;
  }
  if (j->dpsgd) {
    if ((*yi = malloc(f->train.n * sizeof **yi)) == NULL ||
        (*yti = malloc(f->test.n * sizeof **yti)) == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (n = %zu)", f->train.n);
    }
    for (size_t i = 0; i < f->train.n; i++) { /* +-1 (positive_class) -> 1 / 0 */
      (*yi)[i] = f->multiclass ? (int32_t)f->train.y[i] : f->train.y[i] > 0.0;
    }
    for (size_t i = 0; i < f->test.n; i++) {
      (*yti)[i] = f->multiclass ? (int32_t)f->test.y[i] : f->test.y[i] > 0.0;
    }
    j->yi = *yi;
    j->yti = *yti;
  }
  return DPD_OK;
}

/* The result's constants once the replicates ran. */
static void split_result(dpd_semipriv_result *res, const split_job *j) {
  const dpd_semipriv_run_config *cfg = j->cfg;
  const size_t seeds = cfg->seeds;
  res->seeds = seeds;
  res->k = j->k;
  res->d = j->d;
  dpd__stats_columns_mean_se(res->replicates, seeds, DPD_SEMIPRIV_METRIC_COUNT, res->mean, res->se);
  dpd__sp_dpsgd_finish(res);
  res->eigengap = j->n_public > 0 ? res->mean[DPD_SEMIPRIV_EIGENGAP_HAT] : j->gap;
  res->gamma0 = res->xi0 = res->xi_k = res->margin_guaranteed = NAN;
  res->n_private = j->n;
  res->n_public = j->n_public > 0 ? j->n_public : j->f->pub.n;
  res->zb_bound =
      j->k < j->d ? dpd_semipriv_theory_zb_bound(res->eigengap, res->n_public, cfg->beta) : 0.0;
  if (j->dpsgd) {
    res->zeta = res->L = NAN;
    return;
  }
  res->steps = cfg->steps == 0 ? j->n * j->n : cfg->steps;
  res->zeta = cfg->zeta;
  res->L = 1.0 / cfg->zeta;
  res->eta1 = dpd_semipriv_sgd_eta(1, j->n, res->L, j->k, res->sigma, j->sgd.radius);
}

int dpd__sp_split_run(const dpd__sp_files *f, const dpd_semipriv_run_config *cfg,
                      dpd_semipriv_result **out, dpd_err *err) {
  const size_t seeds = cfg->seeds;
  split_job j = {.f = f,
                 .cfg = cfg,
                 .dpsgd = cfg->trainer == DPD_SEMIPRIV_TRAINER_DPSGD,
                 .N = f->train.n,
                 .k = cfg->k,
                 .d = f->train.p,
                 .gap = NAN};
  dpd_semipriv_result *res = calloc(1, sizeof *res);
  dpd_pca_result *pr = NULL;
  double *Pt = NULL;
  int32_t *yi = NULL, *yti = NULL;
  size_t failed = seeds;
  j.errs = calloc(seeds, sizeof *j.errs);
  *out = NULL;
  int status = dpd__sp_split_sizes(f, j.N, j.k, 1, &j.n_public, &j.n_private, &j.n, err);
  if (status == DPD_OK &&
      (res == NULL || j.errs == NULL ||
       (res->replicates = malloc(seeds * DPD_SEMIPRIV_METRIC_COUNT * sizeof(double))) == NULL ||
       (j.dpsgd && (res->dpsgd_replicates =
                        malloc(seeds * DPD_SEMIPRIV_DPSGD_COUNT * sizeof(double))) == NULL))) {
    status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (seeds = %zu)", seeds);
  }
  if (status == DPD_OK) {
    j.rows = res->replicates;
    j.drows = res->dpsgd_replicates;
    j.sgd = dpd_semipriv_sgd_config_default();
    j.sgd.epsilon = cfg->epsilon;
    j.sgd.delta = cfg->delta;
    j.sgd.zeta = cfg->zeta;
    j.sgd.steps = cfg->steps;
    status = j.dpsgd
                 ? dpd__sp_dpsgd_prepare(cfg, j.n, f->classes, res, &j.dp, err)
                 : dpd__sp_calibrate(cfg, j.n, 1.0 / cfg->zeta,
                                     cfg->steps == 0 ? j.n * j.n : cfg->steps, res, &j.sgd, err);
  }
  if (status == DPD_OK) {
    status = split_shared(&j, &pr, &Pt, &yi, &yti, err);
  }
  const dpd__replicate_plan plan = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = 0,
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "semipriv"};
  if (status == DPD_OK) {
    status = dpd__replicate_run(&plan, split_replicate, &j, &failed, err);
  }
  if (status < 0 && status != DPD_ECANCELLED && failed < seeds) {
    status = j.errs[failed].status < 0
                 ? DPD_FAIL(err, j.errs[failed].status, "semipriv: replicate %zu: %s", failed,
                            j.errs[failed].reason)
                 : DPD_FAIL(err, status, "semipriv: replicate %zu failed", failed);
  }
  if (status == DPD_OK) {
    split_result(res, &j);
    *out = res;
    res = NULL;
  }
  dpd_semipriv_result_free(res);
  dpd_pca_result_free(pr);
  free(Pt);
  free(yi);
  free(yti);
  free(j.errs);
  return status;
}
