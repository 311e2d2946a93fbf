/* model=nc: what a run builds before it computes: feature files as a problem, the problem with
 * the PCA fix, the diagnostics with progress, and the kernels' memory models (nc_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * Privacy of file features: G = c R with the public bound R = x_bound, every training row with
 * |x| > R clipped to norm R (nc.h, dpd_nc_data_config). A bound read off the data (the
 * diagnostics' G_estimated) would itself depend on every row: it is reported, never used. */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/privacy.h"
#include "nc/nc_impl.h"

int dpd__nc_files_init(dpd__nc_files *f, const char *train, const char *labels, const char *test,
                       const char *test_labels, double x_bound, double *bytes, dpd_err *err) {
  double b = 0.0;
  int status;
  f->x_bound = x_bound;
  f->test_given = test != NULL;
  f->train_cfg = dpd_nc_features_config_default();
  f->train_cfg.path = train;
  f->train_cfg.labels_path = labels;
  f->test_cfg = dpd_nc_features_config_default();
  f->test_cfg.path = test;
  f->test_cfg.labels_path = test_labels;
  f->test_cfg.key = "test_features";
  f->test_cfg.labels_key = "test_labels";
  f->test_cfg.K_key = "features";
  f->test_cfg.p_key = "features";
  if ((status = dpd_nc_features_bytes(&f->train_cfg, bytes, err)) < 0 ||
      (test != NULL && (status = dpd_nc_features_bytes(&f->test_cfg, &b, err)) < 0)) {
    return status;
  }
  *bytes += b;
  return DPD_OK;
}

int dpd__nc_files_problem(dpd__nc_files *f, const dpd_nc_problem_config *pc, dpd_nc_problem **out,
                          dpd_err *err) {
  dpd_nc_data_config *d = &f->data;
  memset(d, 0, sizeof *d);
  d->K = f->train->K;
  d->p = f->train->p;
  d->n = f->train->n;
  d->n_test = f->test->n;
  d->X = f->train->X;
  d->y = f->train->y;
  d->X_test = f->test->X;
  d->y_test = f->test->y;
  /* no bound (trainer = dpsgd, where per-sample clipping bounds the sensitivity): no clip */
  d->x_bound = isfinite(f->x_bound) || pc->normalize == DPD_NC_NORMALIZE_L2 ||
                       pc->normalize == DPD_NC_NORMALIZE_CENTER_L2
                   ? f->x_bound
                   : DBL_MAX;
  d->normalize = pc->normalize;
  d->test_shift = pc->test_shift;
  d->beta_test = pc->beta_test;
  return dpd_nc_problem_from_data(d, out, err);
}

double dpd__nc_files_clipped_fraction(const dpd__nc_files *f, double R) {
  const dpd_nc_features *t = f->train;
  size_t clipped = 0;
  for (size_t i = 0; i < t->n; i++) {
    double s = 0.0;
    for (size_t l = 0; l < t->p; l++) {
      s += t->X[i * t->p + l] * t->X[i * t->p + l];
    }
    clipped += sqrt(s) > R;
  }
  return (double)clipped / (double)t->n;
}

void dpd__nc_files_free(dpd__nc_files *f) {
  dpd_nc_features_free(f->train);
  dpd_nc_features_free(f->test);
  f->train = f->test = NULL;
}

int dpd__nc_problem_build(const dpd_nc_problem_config *pc, const dpd_nc_pca_config *pca_cfg,
                          dpd_nc_problem **problem, dpd_nc_problem **base, dpd_nc_pca **pca,
                          dpd_err *err) {
  dpd_nc_problem_config bc = *pc;
  int status;
  *problem = NULL;
  *base = NULL;
  *pca = NULL;
  if (pca_cfg == NULL) {
    return dpd_nc_problem_create(pc, problem, err);
  }
  /* The PCA's dsyrk/dsyevr and the projection's dgemm: one OpenBLAS thread, so the bits do not
   * depend on OpenBLAS's split (model=rf does the same). */
  openblas_set_num_threads(1);
  bc.normalize = DPD_NC_NORMALIZE_NONE; /* normalize acts on the projected features */
  if ((status = dpd_nc_problem_create(&bc, base, err)) < 0 ||
      (status = dpd_nc_pca_create(*base, pca_cfg, pca, err)) < 0) {
    dpd_nc_problem_free(*base);
    *base = NULL;
    return status;
  }
  *problem = (*pca)->problem;
  return DPD_OK;
}

int dpd__nc_problem_make(dpd__nc_files *files, const dpd_nc_problem_config *pc,
                         const dpd_nc_pca_config *pca_cfg, dpd__nc_resize *rs, int replicas,
                         dpd_nc_problem **problem, dpd_nc_problem **base, dpd_nc_pca **pca,
                         dpd_err *err) {
  *problem = *base = NULL;
  *pca = NULL;
  if (files != NULL && pca_cfg != NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': %zu (allowed: 0 with features = file; the PCA fix "
                    "draws its public sample from the ETF law)",
                    pca_cfg->k);
  }
  if (files == NULL && rs != NULL && rs->mode != DPD_NC_RESIZE_NONE) {
    return dpd__nc_resize_law(rs, pc, problem, base, err);
  }
  if (files == NULL) {
    return dpd__nc_problem_build(pc, pca_cfg, problem, base, pca, err);
  }
  return replicas ? dpd__nc_files_problem(files, pc, problem, err) : DPD_OK;
}

int dpd__nc_diagnostics_files(const dpd__nc_files *f,
                              int (*progress)(void *, const char *, size_t, size_t),
                              void *progress_user, dpd_nc_diagnostics **train,
                              dpd_nc_diagnostics **test, dpd_err *err) {
  int status = dpd__nc_diagnostics_polled(f->train->n, f->train->p, f->train->K,
                                          dpd_nc_features_row, f->train, progress, progress_user,
                                          train, err);
  if (status == DPD_OK && f->test != NULL) {
    status = dpd__nc_diagnostics_polled(f->test->n, f->test->p, f->test->K, dpd_nc_features_row,
                                        f->test, progress, progress_user, test, err);
  }
  return status;
}

void dpd__nc_problem_release(dpd_nc_problem *problem, dpd_nc_problem *base, dpd_nc_pca *pca) {
  if (pca != NULL) {
    dpd_nc_pca_free(pca); /* frees the projected problem */
    dpd_nc_problem_free(base);
  } else {
    dpd_nc_problem_free(problem);
    dpd_nc_problem_free(base); /* the resized law's base (NULL otherwise) */
  }
}

/* Rows that report their count to the progress callback (rows read of 2 n: the diagnostics read
 * each row twice), every POLL_ROWS rows; when the callback asks for a stop, the label K makes
 * the diagnostics return at once, and the caller turns that into DPD_ECANCELLED. */
#define POLL_ROWS 1024
typedef struct {
  dpd_nc_row_fn row;
  void *user;
  int (*progress)(void *, const char *, size_t, size_t);
  void *progress_user;
  size_t K, calls, total;
  int stopped;
} polled_rows;

static size_t polled_row(void *user, size_t i, double *x) {
  polled_rows *r = user;
  r->calls++;
  if (!r->stopped && r->progress != NULL && r->calls % POLL_ROWS == 0 && r->calls < r->total) {
    r->stopped = r->progress(r->progress_user, "rows", r->calls, r->total) != 0;
  }
  return r->stopped ? r->K : r->row(r->user, i, x);
}

int dpd__nc_diagnostics_polled(size_t n, size_t p, size_t K, dpd_nc_row_fn row, void *user,
                               int (*progress)(void *, const char *, size_t, size_t),
                               void *progress_user, dpd_nc_diagnostics **out, dpd_err *err) {
  polled_rows r = {row, user, progress, progress_user, K, 0, 2 * n, 0};
  int status = dpd_nc_diagnostics_create(n, p, K, polled_row, &r, out, err);
  if (r.stopped) {
    dpd_nc_diagnostics_free(*out);
    *out = NULL;
    return DPD_FAIL(err, DPD_ECANCELLED, "diagnose: stopped by the progress callback");
  }
  return status;
}

typedef struct {
  const dpd_nc_problem *problem;
  uint64_t seed;
  const dpd__nc_resize *rs; /* NULL: as it is */
  double *x;                /* [p] with rs */
} law_rows;

static size_t law_row(void *user, size_t i, double *x) {
  const law_rows *l = user;
  if (l->rs == NULL) {
    return dpd_nc_train_sample(l->problem, l->seed, 0, i, x);
  }
  const size_t k = dpd_nc_train_sample(l->problem, l->seed, 0, i, l->x);
  dpd_nc_resize_rows(l->x, 1, l->problem->p, l->rs->index, l->rs->P, x);
  return k;
}

int dpd__nc_diagnostics_law(const dpd_nc_problem_config *pc, const dpd__nc_resize *rs,
                            int (*progress)(void *, const char *, size_t, size_t),
                            void *progress_user, dpd_nc_diagnostics **out, dpd_err *err) {
  dpd_nc_problem *problem = NULL;
  const int resized = rs != NULL && rs->mode != DPD_NC_RESIZE_NONE;
  law_rows rows = {NULL, pc->seed, resized ? rs : NULL, NULL};
  int status = dpd_nc_problem_create(pc, &problem, err);
  if (status == DPD_OK && resized && (rows.x = malloc(pc->p * sizeof *rows.x)) == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (p = %zu)", pc->p);
  }
  if (status == DPD_OK) {
    rows.problem = problem;
    status = dpd__nc_diagnostics_polled(pc->n, resized ? rs->P : pc->p, pc->K, law_row, &rows,
                                        progress, progress_user, out, err);
  }
  free(rows.x);
  dpd_nc_problem_free(problem);
  return status;
}

double dpd__nc_sim_bytes(size_t K, size_t p, size_t n, size_t n_test, int threads) {
  return 8.0 * ((double)K * (double)p * (4.0 + (threads > 0 ? threads : 2)) + 8.0 * (double)p +
                2.0 * (double)(K + 1) * (double)(n + n_test));
}

double dpd__nc_pca_bytes(const dpd_nc_problem_config *pc, const dpd_nc_pca_config *pca,
                         size_t threads) {
  const double t = (double)(threads > 0 ? threads : 2);
  if (pca == NULL) {
    return 0.0;
  }
  return dpd_nc_pca_memory(pc->K, pc->p, pca, threads > 0 ? threads : 2) +
         8.0 * t * (double)(pc->n + pc->n_test) * (double)pca->k;
}

double dpd__nc_diagnostics_bytes(size_t n, size_t p, size_t K) {
  return 8.0 * ((3.0 * (double)K + 3.0) * (double)p + (double)n + (double)K * (double)K);
}

/* ---- the checks of a configuration across its fields ---- */

#define DPD_NC_MAX_NORM 1e150 /* bound on feature norms (and entries of feature files) */

int dpd__nc_shift_check(const dpd_nc_problem_config *pc, dpd_err *err) {
  if (pc->shift != DPD_NC_SHIFT_NONE && !(pc->beta > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'beta': 0 with shift = %s (allowed: beta > 0 with a "
                    "shift; or shift = none)",
                    pc->shift == DPD_NC_SHIFT_CUBE ? "cube" : "rademacher");
  }
  return DPD_OK;
}

int dpd__nc_config_check(const dpd_nc_problem_config *pc, const dpd_nc_pca_config *pca,
                         dpd_err *err) {
  /* The shifts and the offset add up to (beta + offset) sqrt(p) to a feature's norm, and the run
   * uses squared norms (G, sigma = m G, |W x|): each is bounded so that they stay finite
   * (beta = 1e300 gave "'sigma': inf", a key the user never set). */
  static const char *const shift_keys[] = {"beta", "offset", "beta_test"};
  const double v[3] = {pc->beta, pc->offset, pc->beta_test};
  const double limit = DPD_NC_MAX_NORM / sqrt((double)pc->p);
  for (size_t k = 0; k < 3; k++) {
    if (v[k] > limit) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %g (allowed: 0 <= %s <= 1e150 / sqrt(p) = %g with "
                      "p = %zu: feature norms, whose squares the run uses, must stay finite)",
                      shift_keys[k], v[k], shift_keys[k], limit, pc->p);
    }
  }
  if (pca != NULL && pca->k > pc->p) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': %zu (allowed: 0 = off, or 1 <= pca_k <= p = %zu)",
                    pca->k, pc->p);
  }
  if (pca != NULL && pca->center && pca->n_public < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n_public': %zu (allowed: n_public >= 2 with pca_center = "
                    "yes: a sample covariance needs two samples)",
                    pca->n_public);
  }
  if (pca != NULL && pc->test_shift == DPD_NC_SHIFT_ADVERSARIAL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_shift': adversarial (allowed with pca_k > 0: none, "
                    "cube or rademacher: the adversarial point is defined in R^p against a "
                    "classifier on R^p, not one trained on projected features)");
  }
  if ((pc->normalize == DPD_NC_NORMALIZE_CENTER || pc->normalize == DPD_NC_NORMALIZE_CENTER_L2) &&
      pc->n < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': %s (allowed with n >= 2; n = %zu)",
                    pc->normalize == DPD_NC_NORMALIZE_CENTER ? "center" : "center_l2", pc->n);
  }
  return dpd__nc_shift_check(pc, err);
}

int dpd__nc_files_check(const char *labels, const char *test, const char *test_labels,
                        int x_bound_given, double x_bound, int unit, int diagnose, int replicas,
                        dpd_err *err) {
  if (test_labels != NULL && test == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_labels': given without test_features (allowed: the "
                    "labels of the test_features file)");
  }
  if (labels != NULL && test != NULL && test_labels == NULL) {
    /* test_features would be read with its first column as the labels, silently */
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'test_labels' (allowed: file:PATH; required with labels "
                    "and test_features: the training labels are in their own file, so the test "
                    "labels must be too, else test_features' first column would be taken as "
                    "labels)");
  }
  if (test == NULL && replicas) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'test_features' (allowed: file:PATH; required with "
                    "features = file:PATH: the test error is measured on these rows)");
  }
  if (x_bound_given && !isfinite(x_bound) && !unit && !diagnose) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'x_bound': inf (allowed: a finite public bound R > 0 on "
                    "|x|; inf only with normalize = l2 or center_l2)");
  }
  if (!x_bound_given && !diagnose && !unit) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'x_bound' (allowed: a public bound R > 0 on the feature "
                    "norms |x|; required with features = file:PATH unless normalize = l2 or "
                    "center_l2: training rows are clipped to norm R and the sensitivity is "
                    "G = c R, since a bound read off the data themselves would not be private)");
  }
  return DPD_OK;
}

/* A size given for the files (0: not given) must agree with them. */
static int agrees(size_t given, size_t value, const char *key, const char *what,
                  const char *path, dpd_err *err) {
  if (given != 0 && given != value) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %zu (allowed: %zu, the %s of '%s'; or leave '%s' "
                    "out)",
                    key, given, value, what, path, key);
  }
  return DPD_OK;
}

int dpd__nc_files_load(dpd__nc_files *f, size_t max_bytes, const size_t given[4], dpd_err *err) {
  const dpd_nc_features_config *tc = &f->train_cfg;
  int status;
  f->train_cfg.max_bytes = max_bytes;
  if ((status = dpd_nc_features_read(&f->train_cfg, &f->train, err)) < 0 ||
      (status = agrees(given[0], f->train->K, "K", "number of classes of the labels",
                       tc->labels_path != NULL ? tc->labels_path : tc->path, err)) < 0 ||
      (status = agrees(given[1], f->train->p, "p", "number of feature columns", tc->path, err)) <
          0 ||
      (status = agrees(given[2], f->train->n, "n", "number of rows", tc->path, err)) < 0 ||
      !f->test_given) {
    return status;
  }
  f->test_cfg.K = f->train->K;
  f->test_cfg.p = f->train->p;
  f->test_cfg.max_bytes = max_bytes;
  if ((status = dpd_nc_features_read(&f->test_cfg, &f->test, err)) < 0) {
    return status;
  }
  return agrees(given[3], f->test->n, "n_test", "number of rows", f->test_cfg.path, err);
}

int dpd__nc_noise_budget(int budget, double v, double delta, size_t steps, double *multiplier,
                         double *sigma, dpd_err *err) {
  switch (budget) {
  case 0:
    return dpd_privacy_sigma_from_eps(v, delta, steps, DPD_PRIVACY_CONVERSION_GDP, multiplier,
                                      err);
  case 1:
    return dpd_privacy_sigma_from_gdp(v, steps, multiplier, err);
  case 2:
    return dpd_privacy_sigma_from_zcdp(v, steps, multiplier, err);
  default:
    *sigma = v; /* given directly; the multiplier follows from G */
    return DPD_OK;
  }
}

int dpd__nc_keys_read(const dpd_keys *keys, const dpd__nc_read *r, void *base, dpd_err *err) {
  int status = DPD_OK;
  for (; r->key != NULL && status == DPD_OK; r++) {
    char *at = (char *)base + r->at;
    size_t v = 0;
    switch (r->kind) {
    case 'z':
      status = dpd_keys_size_get(keys, r->key, (size_t *)(void *)at, err);
      break;
    case 'r':
      status = dpd_keys_real_get(keys, r->key, (double *)(void *)at, err);
      break;
    case 'u':
      status = dpd_keys_u64_get(keys, r->key, (uint64_t *)(void *)at, err);
      break;
    default: /* c, i */
      status = r->kind == 'c' ? dpd_keys_choice_get(keys, r->key, &v, err)
                              : dpd_keys_size_get(keys, r->key, &v, err);
      *(int *)(void *)at = (int)v;
    }
  }
  return status;
}
