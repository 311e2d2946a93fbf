/* model=nc: the keys -> the context (nc_model_impl.h): setup validates every key of a command
 * (reading c->uses), reads feature files, and says what the command will allocate.
 * SPDX-License-Identifier: MIT
 *
 * Privacy: T steps of the Gaussian mechanism on the summed gradient (sensitivity G, noise
 * sigma = G m with noise multiplier m) are sqrt(T)/m-GDP, i.e. T/(2 m^2)-zCDP (docs/privacy.md).
 * Budgets: epsilon + delta (exact GDP calibration), mu, zcdp (total), or sigma (the noise standard
 * deviation itself). None: non-private (sigma = 0). The noise is set once G is known (the run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/privacy.h"
#include "models/nc/nc_model_impl.h"

#define DPD_NC_MAX_NORM 1e150 /* bound on feature norms (and entries of feature files) */

static const char *const budgets[] = {"epsilon", "mu", "zcdp", "sigma"};

/* The noise multiplier of the budget key (epsilon with x->delta, mu, zcdp), or sigma itself. */
static int budget_apply(const dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  double v;
  int status = x->budget < 0 ? 1 : dpd_keys_real_get(keys, budgets[x->budget], &v, err);
  if (status != DPD_OK) {
    return status < 0 ? status : DPD_OK;
  }
  switch (x->budget) {
  case 0:
    return dpd_privacy_sigma_from_eps(v, x->delta, x->sc.steps, DPD_PRIVACY_CONVERSION_GDP,
                                      &x->multiplier, err);
  case 1:
    return dpd_privacy_sigma_from_gdp(v, x->sc.steps, &x->multiplier, err);
  case 2:
    return dpd_privacy_sigma_from_zcdp(v, x->sc.steps, &x->multiplier, err);
  default:
    x->sc.sigma = v; /* given directly; the multiplier follows from G */
    return DPD_OK;
  }
}

static int features_etf(const dpd_keys *keys) {
  const char *features = dpd_keys_text_get(keys, "features");
  return features == NULL || strcmp(features, "etf") == 0; /* files: any p >= 1 */
}

/* The ETF law: K, p, n (and n_test), the basis, the class sizes and the training shifts. */
static int law_keys(const dpd_keys *keys, dpd_nc_problem_config *pc, int with_test, dpd_err *err) {
  size_t choice;
  int status;
  if ((status = dpd_keys_size_get(keys, "K", &pc->K, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "p", &pc->p, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n", &pc->n, err)) < 0 ||
      (with_test && (status = dpd_keys_size_get(keys, "n_test", &pc->n_test, err)) < 0) ||
      (status = dpd_keys_choice_get(keys, "etf", &choice, err)) < 0) {
    return status;
  }
  if (features_etf(keys) && pc->p < pc->K) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': %zu (allowed: p >= K = %zu)", pc->p,
                    pc->K);
  }
  pc->etf = choice == 0 ? DPD_NC_ETF_SPARSE : DPD_NC_ETF_DENSE;
  if ((status = dpd_keys_real_get(keys, "imbalance_ratio", &pc->imbalance_ratio, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "imbalance_fraction", &pc->imbalance_fraction, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "shift", &choice, err)) < 0) {
    return status;
  }
  pc->shift = (dpd_nc_shift)choice; /* none, cube, rademacher: the enum's order */
  if ((status = dpd_keys_real_get(keys, "beta", &pc->beta, err)) < 0) {
    return status;
  }
  return dpd_keys_real_get(keys, "offset", &pc->offset, err);
}

static int shift_check(const dpd_keys *keys, const dpd_nc_problem_config *pc, dpd_err *err) {
  if (pc->shift != DPD_NC_SHIFT_NONE && !(pc->beta > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'beta': 0 with shift = %s (allowed: beta > 0 with a "
                    "shift; or shift = none)",
                    dpd_keys_text_get(keys, "shift"));
  }
  return DPD_OK;
}

/* The test law and normalisation; the shifts bounded so that feature norms stay finite. */
static int test_keys(const dpd_keys *keys, dpd_nc_problem_config *pc, dpd_err *err) {
  static const char *const shift_keys[] = {"beta", "offset", "beta_test"};
  size_t choice;
  int status;
  if ((status = dpd_keys_choice_get(keys, "test_shift", &choice, err)) < 0) {
    return status;
  }
  pc->test_shift = (dpd_nc_shift)choice; /* none, cube, rademacher, adversarial: same order */
  if ((status = dpd_keys_real_get(keys, "beta_test", &pc->beta_test, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "normalize", &choice, err)) < 0) {
    return status;
  }
  pc->normalize = (dpd_nc_normalize)choice; /* none, center, l2, center_l2: same order */
  /* The shifts and the offset add up to (beta + offset) sqrt(p) to a feature's norm, and the run
   * uses squared norms (G, sigma = m G, |W x|): each is bounded so that they stay finite
   * (beta = 1e300 gave "'sigma': inf", a key the user never set). */
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
  if ((status = dpd_keys_choice_get(keys, "offset_at_test", &choice, err)) < 0) {
    return status;
  }
  pc->offset_at_test = choice == 1;
  return DPD_OK;
}

/* The PCA fix (pca_k, n_public, pca_center): x->pca_on = 0 when pca_k = 0. */
static int pca_keys(const dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  dpd_nc_pca_config *cfg = &x->pca;
  size_t choice;
  int status;
  *cfg = dpd_nc_pca_config_default();
  if ((status = dpd_keys_size_get(keys, "pca_k", &cfg->k, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n_public", &cfg->n_public, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "pca_center", &choice, err)) < 0) {
    return status;
  }
  cfg->center = choice == 1; /* no|yes */
  cfg->normalize = x->pc.normalize;
  if (!(x->pca_on = cfg->k > 0)) {
    return DPD_OK;
  }
  if (cfg->k > x->pc.p) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': %zu (allowed: 0 = off, or 1 <= pca_k <= p = %zu)",
                    cfg->k, x->pc.p);
  }
  if (cfg->center && cfg->n_public < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n_public': %zu (allowed: n_public >= 2 with pca_center = "
                    "yes: a sample covariance needs two samples)",
                    cfg->n_public);
  }
  if (x->pc.test_shift == DPD_NC_SHIFT_ADVERSARIAL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_shift': adversarial (allowed with pca_k > 0: none, "
                    "cube or rademacher: the adversarial point is defined in R^p against a "
                    "classifier on R^p, not one trained on projected features)");
  }
  return DPD_OK;
}

/* NoisyGD: the loss, steps, step size, projection, replicates and threads. */
static int train_keys(const dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  size_t choice, threads;
  int status;
  if ((x->pc.normalize == DPD_NC_NORMALIZE_CENTER ||
       x->pc.normalize == DPD_NC_NORMALIZE_CENTER_L2) &&
      x->pc.n < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': %s (allowed with n >= 2; n = %zu)",
                    dpd_keys_text_get(keys, "normalize"), x->pc.n);
  }
  if ((status = dpd_keys_choice_get(keys, "loss", &choice, err)) < 0) {
    return status;
  }
  x->sc.loss = choice == 0 ? DPD_NC_LOSS_CE : DPD_NC_LOSS_SQUARE;
  if ((status = dpd_keys_size_get(keys, "steps", &x->sc.steps, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "eta", &x->sc.eta, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "radius", &x->sc.radius, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "seeds", &x->sc.seeds, err)) < 0 ||
      (status = dpd__model_save_replicates_get(keys, 1, &x->save_replicates, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &x->pc.seed, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "threads", &threads, err)) < 0) {
    return status;
  }
  x->sc.seed = x->pc.seed;
  x->sc.threads = (int)threads;
  return shift_check(keys, &x->pc, err);
}

/* One budget at a time; the delta of the reported epsilon: the given one, else 1/n. */
static int privacy_keys(const dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  int status;
  x->budget = -1;
  for (int k = 0; k < 4; k++) {
    if (!dpd_keys_given(keys, budgets[k])) {
      continue;
    }
    if (x->budget >= 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given together with %s (allowed: one of epsilon "
                      "(with delta), mu, zcdp or sigma)",
                      budgets[k], budgets[x->budget]);
    }
    x->budget = k;
    x->budget_name = budgets[k];
  }
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

/* The feature-file keys: features = file:PATH, labels, test_features, test_labels, x_bound
 * (test_features, and x_bound unless normalize is l2 or center_l2, required when the command
 * runs replicates). The ETF law's keys are dropped with file features (not in effect). */
static int files_keys(dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  static const char *const law[] = {"etf",  "imbalance_ratio", "imbalance_fraction", "shift",
                                    "beta", "offset",          "offset_at_test"};
  static const char *const file_keys[] = {"labels", "test_features", "test_labels", "x_bound"};
  const int diagnose = (x->uses & NC_USES_DIAGNOSE) != 0;
  const int unit = x->pc.normalize == DPD_NC_NORMALIZE_L2 ||
                   x->pc.normalize == DPD_NC_NORMALIZE_CENTER_L2;
  const char *path, *labels, *test, *test_labels;
  double x_bound = INFINITY;
  int status;
  if ((status = dpd__model_features_key(keys, "etf", file_keys, 4, &path, err)) < 0 ||
      path == NULL || (status = dpd__model_file_key(keys, "labels", &labels, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_features", &test, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_labels", &test_labels, err)) < 0) {
    return status;
  }
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
  if (test == NULL && (x->uses & NC_USES_REPLICAS)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'test_features' (allowed: file:PATH; required with "
                    "features = file:PATH: the test error is measured on these rows)");
  }
  if (dpd_keys_given(keys, "x_bound")) {
    if ((status = dpd_keys_real_get(keys, "x_bound", &x_bound, err)) < 0) {
      return status;
    }
    if (!isfinite(x_bound) && !unit && !diagnose) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'x_bound': inf (allowed: a finite public bound R > 0 on "
                      "|x|; inf only with normalize = l2 or center_l2)");
    }
  } else if (!diagnose && !unit) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'x_bound' (allowed: a public bound R > 0 on the feature "
                    "norms |x|; required with features = file:PATH unless normalize = l2 or "
                    "center_l2: training rows are clipped to norm R and the sensitivity is "
                    "G = c R, since a bound read off the data themselves would not be private)");
  }
  x->from_file = 1;
  for (size_t k = 0; k < sizeof law / sizeof *law; k++) {
    dpd_keys_unset(keys, law[k]); /* the ETF law's keys: not in effect */
  }
  return dpd__nc_files_init(&x->files, path, labels, test, test_labels, x_bound, &x->file_bytes,
                            err);
}

/* A size key given by the user must agree with the files; the value in effect is recorded. */
static int size_agrees(dpd_keys *keys, const char *key, size_t value, const char *what,
                       const char *path, dpd_err *err) {
  char buf[32];
  size_t given;
  int status;
  if (dpd_keys_given(keys, key)) {
    if ((status = dpd_keys_size_get(keys, key, &given, err)) < 0) {
      return status;
    }
    if (given != value) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %zu (allowed: %zu, the %s of '%s'; or leave '%s' "
                      "out)",
                      key, given, value, what, path, key);
    }
  }
  snprintf(buf, sizeof buf, "%zu", value);
  return dpd_keys_effective_set(keys, key, buf, err);
}

/* Reads the files (bounded by max_memory) and checks K, p, n, n_test against them. */
static int files_read(dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  dpd__nc_files *f = &x->files;
  const size_t max = x->env->max_memory;
  const double scale = (x->uses & NC_USES_DIAGNOSE) ? 2.0 : 1.0; /* with the diagnostics' */
  const char *lp = f->train_cfg.labels_path != NULL ? f->train_cfg.labels_path : f->train_cfg.path;
  int status;
  if ((status = dpd__model_memory_check(keys, x->env, scale * x->file_bytes, "features", err)) <
          0 ||
      (status = dpd__nc_files_read_train(f, max, err)) < 0 ||
      (status = size_agrees(keys, "K", f->train->K, "number of classes of the labels", lp, err)) <
          0 ||
      (status = size_agrees(keys, "p", f->train->p, "number of feature columns", f->train_cfg.path,
                            err)) < 0 ||
      (status = size_agrees(keys, "n", f->train->n, "number of rows", f->train_cfg.path, err)) <
          0 ||
      (f->test_given && (status = dpd__nc_files_read_test(f, max, err)) < 0) ||
      (f->test_given && dpd_keys_applies(keys, "n_test") &&
       (status = size_agrees(keys, "n_test", f->test->n, "number of rows", f->test_cfg.path,
                             err)) < 0)) {
    return status;
  }
  x->pc.K = f->train->K;
  x->pc.p = f->train->p;
  x->pc.n = f->train->n;
  x->pc.n_test = f->test != NULL ? f->test->n : x->pc.n_test;
  if ((x->uses & NC_USES_TRAIN) && !dpd_keys_given(keys, "delta")) {
    if (!((x->delta = 1.0 / (double)x->pc.n) < 1.0)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'features': 1 training row (allowed: at least 2 rows "
                      "when delta is not given, since its default 1/n must be < 1; or give "
                      "delta)");
    }
    return budget_apply(keys, x, err); /* epsilon's noise for this delta */
  }
  return DPD_OK;
}

/* The keys of a training command, in the order their errors are reported. */
static int train_setup(dpd_keys *keys, nc_ctx *x, dpd_err *err) {
  int status;
  if ((status = law_keys(keys, &x->pc, 1, err)) < 0 || (status = test_keys(keys, &x->pc, err)) < 0 ||
      (status = pca_keys(keys, x, err)) < 0 || (status = train_keys(keys, x, err)) < 0 ||
      (status = privacy_keys(keys, x, err)) < 0 ||
      (status = dpd__model_plot_get(keys, 0, &x->plot, err)) < 0) {
    return status;
  }
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
      (!x->from_file &&
       ((status = law_keys(keys, &x->pc, 0, err)) < 0 ||
        (status = dpd_keys_u64_get(keys, "seed", &x->pc.seed, err)) < 0 ||
        (status = shift_check(keys, &x->pc, err)) < 0)) ||
      (status = dpd__model_plot_get(keys, 0, &x->plot, err)) < 0 ||
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
  status = (c->uses & NC_USES_DIAGNOSE) ? diagnose_setup(keys, x, err) : train_setup(keys, x, err);
  if (status == DPD_OK && x->from_file) {
    status = files_read(keys, x, err);
  }
  return status;
}

void dpd__nc_release(void *ctx) {
  nc_ctx *x = ctx;
  if (x != NULL) {
    dpd__nc_files_free(&x->files);
    free(x);
  }
}

double dpd__nc_workspace_bytes(const void *ctx, const dpd_model_command *c, const char **driver) {
  const nc_ctx *x = ctx;
  const dpd_nc_problem_config *pc = &x->pc;
  (void)c;
  *driver = x->from_file ? "features" : "p";
  if (x->uses & NC_USES_DIAGNOSE) { /* the files, and the diagnostics' own arrays */
    return x->file_bytes + dpd__nc_diagnostics_bytes(pc->n, pc->p, pc->K);
  }
  if (!(x->uses & NC_USES_REPLICAS)) {
    return 0.0; /* account: the problem alone */
  }
  *driver = "p";
  return x->file_bytes + dpd__nc_sim_bytes(pc->K, pc->p, pc->n, pc->n_test, x->sc.threads) +
         dpd__nc_pca_bytes(pc, x->pca_on ? &x->pca : NULL, (size_t)x->sc.threads);
}
