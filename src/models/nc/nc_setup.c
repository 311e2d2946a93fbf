/* model=nc: the keys -> the context (nc_model_impl.h): setup validates every key of a command
 * (reading c->uses), reads feature files, and says what the command will allocate.
 * SPDX-License-Identifier: MIT
 *
 * Privacy: T steps of the Gaussian mechanism on the summed gradient (sensitivity G, noise
 * sigma = G m with noise multiplier m) are sqrt(T)/m-GDP (docs/privacy.md). Budgets: epsilon +
 * delta (exact GDP calibration), mu, zcdp (total), or sigma itself; none: non-private. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "models/nc/nc_model_impl.h"

static const char *const budgets[] = {"epsilon", "mu", "zcdp", "sigma"};

/* The keys read into the context (dpd__nc_keys_read). */
#define AT(field) offsetof(nc_ctx, field)
static const dpd__nc_read law_reads[] = {
    {"K", 'z', AT(pc.K)}, {"p", 'z', AT(pc.p)}, {"n", 'z', AT(pc.n)}, {"etf", 'c', AT(pc.etf)},
    {"imbalance_ratio", 'r', AT(pc.imbalance_ratio)}, {"shift", 'c', AT(pc.shift)},
    {"imbalance_fraction", 'r', AT(pc.imbalance_fraction)}, {"beta", 'r', AT(pc.beta)},
    {"offset", 'r', AT(pc.offset)}, {NULL, 0, 0}};
static const dpd__nc_read train_reads[] = {
    {"n_test", 'z', AT(pc.n_test)}, {"test_shift", 'c', AT(pc.test_shift)},
    {"beta_test", 'r', AT(pc.beta_test)}, {"normalize", 'c', AT(pc.normalize)},
    {"offset_at_test", 'c', AT(pc.offset_at_test)}, {"pca_k", 'z', AT(pca.k)},
    {"n_public", 'z', AT(pca.n_public)}, {"pca_center", 'c', AT(pca.center)},
    {"loss", 'c', AT(sc.loss)}, {"steps", 'z', AT(sc.steps)}, {"eta", 'r', AT(sc.eta)},
    {"radius", 'r', AT(sc.radius)}, {"seeds", 'z', AT(sc.seeds)}, {"seed", 'u', AT(pc.seed)},
    {"threads", 'i', AT(sc.threads)}, {NULL, 0, 0}};

/* The noise of the budget key (dpd__nc_noise_budget), for x->delta. */
static int budget_apply(const dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  double v;
  int status = x->budget < 0 ? 1 : dpd_keys_real_get(keys, budgets[x->budget], &v, err);
  return status != DPD_OK ? (status < 0 ? status : DPD_OK)
                          : dpd__nc_noise_budget(x->budget, v, x->delta, x->sc.steps,
                                                 &x->multiplier, &x->sc.sigma, err);
}

/* The ETF law (p >= K; file features: any p). */
static int law_keys(const dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  const char *features = dpd_keys_text_get(keys, "features");
  int status = dpd__nc_keys_read(keys, law_reads, x, err);
  if (status == DPD_OK && (features == NULL || strcmp(features, "etf") == 0) && x->pc.p < x->pc.K) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': %zu (allowed: p >= K = %zu)",
                    x->pc.p, x->pc.K);
  }
  return status;
}

/* One budget at a time; the delta of the reported epsilon: the given one, else 1/n. */
static int privacy_keys(const dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  int status;
  x->budget = -1;
  for (int k = 0; k < 4; k++) {
    if (dpd_keys_given(keys, budgets[k]) && x->budget >= 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given together with %s (allowed: one of epsilon "
                      "(with delta), mu, zcdp or sigma)",
                      budgets[k], budgets[x->budget]);
    }
    x->budget = dpd_keys_given(keys, budgets[k]) ? k : x->budget;
  }
  x->budget_name = x->budget >= 0 ? budgets[x->budget] : "none";
  if (dpd_keys_given(keys, "delta")) {
    if ((status = dpd_keys_real_get(keys, "delta", &x->delta, err)) < 0) {
      return status;
    }
  } else if (!((x->delta = 1.0 / (double)x->pc.n) < 1.0)) {
    /* the documented default (help: delta [1/n]), also for epsilon; with file features n is
     * known once the files are read, and files_read sets delta and the noise again */
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': 1 (allowed: n >= 2 when delta is not given, since "
                    "its default 1/n must be < 1; or give delta)");
  }
  return budget_apply(keys, x, err);
}

/* The feature-file keys (docs/nc.md, "Your own features"); the ETF law's keys are dropped with
 * file features (not in effect). */
static int files_keys(dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  static const char *const law[] = {"etf",  "imbalance_ratio", "imbalance_fraction", "shift",
                                    "beta", "offset",          "offset_at_test"};
  static const char *const file_keys[] = {"labels", "test_features", "test_labels", "x_bound"};
  const int given = dpd_keys_given(keys, "x_bound");
  const char *path, *labels, *test, *test_labels;
  double x_bound = INFINITY;
  int status;
  if ((status = dpd__model_features_key(keys, "etf", file_keys, 4, &path, err)) < 0 ||
      path == NULL || (status = dpd__model_file_key(keys, "labels", &labels, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_features", &test, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_labels", &test_labels, err)) < 0 ||
      (given && (status = dpd_keys_real_get(keys, "x_bound", &x_bound, err)) < 0) ||
      (status = dpd__nc_files_check(labels, test, test_labels, given, x_bound,
                                    x->pc.normalize == DPD_NC_NORMALIZE_L2 || x->dpsgd.on ||
                                        x->pc.normalize == DPD_NC_NORMALIZE_CENTER_L2,
                                    (x->uses & NC_USES_DIAGNOSE) != 0,
                                    (x->uses & NC_USES_REPLICAS) != 0, err)) < 0) {
    return status;
  }
  x->from_file = 1;
  for (size_t k = 0; k < sizeof law / sizeof *law; k++) {
    dpd_keys_unset(keys, law[k]);
  }
  return dpd__nc_files_init(&x->files, path, labels, test, test_labels, x_bound, &x->file_bytes,
                            err);
}

/* Reads the files (bounded by max_memory; K, p, n, n_test given must agree) and records the
 * sizes in effect; delta's default 1/n and the noise follow the file's n. */
static int files_read(dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  static const char *const names[4] = {"K", "p", "n", "n_test"};
  size_t given[4] = {0, 0, 0, 0}, *in[4] = {&x->pc.K, &x->pc.p, &x->pc.n, &x->pc.n_test};
  const double scale = (x->uses & NC_USES_DIAGNOSE) ? 2.0 : 1.0; /* and the diagnostics' */
  char buf[32];
  int status = dpd__model_memory_check(keys, x->env, scale * x->file_bytes, "features", err);
  for (size_t k = 0; k < 4 && status == DPD_OK; k++) {
    if (dpd_keys_given(keys, names[k]) && (k < 3 || dpd_keys_applies(keys, names[k]))) {
      status = dpd_keys_size_get(keys, names[k], &given[k], err);
    }
  }
  if (status < 0 || (status = dpd__nc_files_load(&x->files, x->env->max_memory, given, err)) < 0) {
    return status;
  }
  x->pc.K = x->files.train->K;
  x->pc.p = x->files.train->p;
  x->pc.n = x->files.train->n;
  x->pc.n_test = x->files.test != NULL ? x->files.test->n : x->pc.n_test;
  for (size_t k = 0; k < 4 && status == DPD_OK; k++) {
    snprintf(buf, sizeof buf, "%zu", *in[k]);
    if (k < 3 || (x->files.test != NULL && dpd_keys_applies(keys, names[k]))) {
      status = dpd_keys_effective_set(keys, names[k], buf, err);
    }
  }
  if (status < 0 || !(x->uses & NC_USES_TRAIN) || dpd_keys_given(keys, "delta")) {
    return status;
  }
  if (!((x->delta = 1.0 / (double)x->pc.n) < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'features': 1 training row (allowed: at least 2 rows when "
                    "delta is not given, since its default 1/n must be < 1; or give delta)");
  }
  return budget_apply(keys, x, err); /* epsilon's noise for this delta */
}

/* A training command: the law, the training and privacy keys, then the files. */
static int train_setup(dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  int status;
  x->pca = dpd_nc_pca_config_default();
  if ((status = law_keys(keys, x, err)) < 0 ||
      (status = dpd__nc_keys_read(keys, train_reads, x, err)) < 0 ||
      (status = dpd__model_save_replicates_get(keys, 1, &x->save_replicates, err)) < 0 ||
      (status = dpd__nc_config_check(&x->pc, x->pca.k > 0 ? &x->pca : NULL, err)) < 0 ||
      (status = dpd__nc_dpsgd_keys(keys, &x->pc, &x->sc, &x->dpsgd, err)) < 0 ||
      (status = privacy_keys(keys, x, err)) < 0 ||
      (status = dpd__model_plot_get(keys, x->plot, &x->plot, err)) < 0) {
    return status;
  }
  x->pca_on = x->pca.k > 0;
  x->pca.normalize = x->pc.normalize;
  x->sc.seed = x->pc.seed;
  /* the keys of other commands are not in effect (account has no data or replicates) */
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  x->progress = (dpd__progress_bridge){x->env, "replicates"};
  x->sc.progress = x->env->progress != NULL ? dpd__model_progress : NULL;
  x->sc.progress_user = &x->progress;
  return files_keys(keys, x, err);
}

/* diagnose: the files, or the ETF law (the same keys and checks as simulate's). */
static int diagnose_setup(dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  int status;
  if ((status = files_keys(keys, x, err)) < 0 ||
      (!x->from_file && ((status = law_keys(keys, x, err)) < 0 ||
                         (status = dpd_keys_u64_get(keys, "seed", &x->pc.seed, err)) < 0 ||
                         (status = dpd__nc_shift_check(&x->pc, err)) < 0)) ||
      (status = dpd__model_plot_get(keys, x->plot, &x->plot, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &x->pc.seed, err)) < 0) {
    return status;
  }
  x->pc.n_test = x->pc.n; /* not used: the test law is not diagnosed */
  (void)dpd_keys_restrict(keys, 0, "", NULL); /* training and privacy keys: not in effect */
  return DPD_OK;
}

int dpd__nc_setup(const dpd_model_command *c, dpd_keys *keys, const dpd_run_env *env, void **ctx,
                  dpd_err *err) {
  nc_ctx *x = calloc(1, sizeof *x);
  int status;
  if ((*ctx = x) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  x->uses = c->uses;
  x->env = env;
  x->pc = dpd_nc_problem_config_default();
  x->sc = dpd_nc_sim_config_default();
  x->files.x_bound = INFINITY;
  x->plot = c->plot_default; /* unless plot is given */
  status = (c->uses & NC_USES_DIAGNOSE) ? diagnose_setup(keys, x, err) : train_setup(keys, x, err);
  status = status == DPD_OK && x->from_file ? files_read(keys, x, err) : status;
  return status < 0 ? status
                    : dpd__nc_setup_finish(keys, env, x->from_file ? &x->files : NULL, &x->pc,
                                           x->pca_on ? x->pca.k : 0, &x->resize, &x->dpsgd,
                                           &x->sc.steps, err);
}

void dpd__nc_release(void *ctx) {
  nc_ctx *x = ctx;
  if (x != NULL) {
    dpd__nc_files_free(&x->files);
    dpd__nc_dpsgd_free(&x->dpsgd);
    dpd__nc_resize_free(&x->resize);
    free(x);
  }
}

double dpd__nc_workspace_bytes(const void *ctx, const dpd_model_command *c, const char **driver) {
  const nc_ctx *x = ctx;
  const dpd_nc_problem_config *pc = &x->pc;
  (void)c;
  *driver = (x->uses & NC_USES_DIAGNOSE) && x->from_file ? "features" : "p";
  if (x->uses & NC_USES_DIAGNOSE) { /* the files, and the diagnostics' own arrays */
    return x->file_bytes + dpd__nc_diagnostics_bytes(pc->n, pc->p, pc->K);
  }
  return !(x->uses & NC_USES_REPLICAS) /* account: the problem alone */
             ? 0.0
             : x->file_bytes + dpd__nc_sim_bytes(pc->K, pc->p, pc->n, pc->n_test, x->sc.threads) +
                   dpd__nc_pca_bytes(pc, x->pca_on ? &x->pca : NULL, (size_t)x->sc.threads) +
                   dpd__nc_more_bytes(pc, x->pca_on ? x->pca.k : 0, &x->resize, &x->dpsgd,
                                      x->from_file, x->sc.seeds, x->sc.threads);
}
