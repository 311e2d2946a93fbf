/* model=semipriv: semi-private learning (docs/semipriv.md; docs/math.md section 4) as a model
 * type: its keys, setup (keys -> the law's or the files' configuration, by c->uses) and the
 * command table; the commands run in sp_commands.c, the science is src/semipriv/ (semipriv.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error_impl.h"
#include "models/semipriv/sp_model_impl.h"

/* A size read off a file (dpd__sp_size_fn): in effect; refused when the user gave another. */
static int size_record(void *keys, const char *key, size_t value, const char *path, dpd_err *err) {
  char buf[32];
  size_t given = value;
  int status = dpd_keys_given(keys, key) ? dpd_keys_size_get(keys, key, &given, err) : DPD_OK;
  if (status == DPD_OK && given != value) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %zu (allowed: %zu, from '%s'; or leave '%s' out)", key,
                    given, value, path, key);
  }
  snprintf(buf, sizeof buf, "%zu", value);
  return status < 0 ? status : dpd_keys_effective_set(keys, key, buf, err);
}

/* features = file:PATH: the file keys (no file read; their sizes give f->bytes). */
static int files_keys(dpd_keys *keys, int run, dpd__sp_files *f, dpd_err *err) {
  static const char *const file_keys[] = {"labels", "public_features", "test_features",
                                          "test_labels", "positive_class"};
  static const char *const law_only[] = {"k_true", "a", "c", "s", "tau", "lambda", "nu", "trunc"};
  int status = dpd__model_features_key(keys, "law", file_keys, 5, &f->train.path, err);
  for (size_t k = 0; status == DPD_OK && f->train.path != NULL && k < 8; k++) {
    if (dpd_keys_given(keys, law_only[k])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given with features = file:PATH (allowed: only "
                      "with features = law, the synthetic data law)",
                      law_only[k]);
    }
  }
  if (status < 0 || f->train.path == NULL ||
      (status = dpd__model_file_key(keys, "labels", &f->train.labels_path, err)) < 0 ||
      (status = dpd__model_file_key(keys, "public_features", &f->pub.path, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_features", &f->test.path, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_labels", &f->test.labels_path, err)) < 0 ||
      (status = dpd__sp_files_check(
           f, run, dpd_keys_given(keys, "zeta") || dpd__sp_trainer_is_dpsgd(keys), err)) < 0 ||
      ((f->has_positive = dpd_keys_given(keys, "positive_class")) &&
       (status = dpd_keys_real_get(keys, "positive_class", &f->positive_class, err)) < 0) ||
      (status = dpd__sp_positive_check(f, err)) < 0) {
    return status;
  }
  for (size_t k = 0; k < 8; k++) {
    dpd_keys_unset(keys, law_only[k]);
  }
  f->from_file = 1;
  f->has_public = f->pub.path != NULL && run;
  f->has_test = f->test.path != NULL && run;
  return dpd__sp_files_bytes(f, run, err);
}

/* features = law: the generator's keys, k, n and the sizes of the public and test samples. */
static int law_keys(dpd_keys *keys, dpd__sp_ctx *x, int *k_none, dpd_err *err) {
  dpd_semipriv_gen_config *g = &x->gc;
  int status;
  if ((status = dpd_keys_size_get(keys, "d", &g->d, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "k_true", &g->k_true, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "a", &g->a, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "c", &g->c, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "s", &g->s, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "tau", &g->tau, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "nu", &g->nu, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "trunc", &g->trunc, err)) < 0 ||
      (status = dpd__sp_lambda_parse(dpd_keys_text_get(keys, "lambda"), g->k_true - 1, x->lambda,
                                     64, &g->n_lambda, err)) < 0) {
    return status;
  }
  g->lambda = x->lambda;
  if ((status = dpd__sp_law_check(g, err)) < 0 ||
      (status = dpd__sp_k_parse(dpd_keys_text_get(keys, "k"), g->d, &x->rc.k, k_none, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n", &x->rc.n, err)) < 0 ||
      (dpd_keys_applies(keys, "n_public") &&
       ((status = dpd_keys_size_get(keys, "n_public", &x->rc.n_public, err)) < 0 ||
        (status = dpd_keys_size_get(keys, "n_test", &x->rc.n_test, err)) < 0))) {
    return status;
  }
  return DPD_OK;
}

/* The keys of both kinds of features: privacy, steps, replicates, theory, plot. */
static int common_keys(const dpd_model_command *c, dpd_keys *keys, dpd__sp_ctx *x, dpd_err *err) {
  size_t choice = 1, threads = 0;
  int status;
  if ((status = dpd__sp_privacy_keys(keys, &x->rc, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &x->rc.seed, err)) < 0 ||
      (dpd_keys_given(keys, "zeta") &&
       (status = dpd_keys_real_get(keys, "zeta", &x->rc.zeta, err)) < 0) ||
      (dpd_keys_given(keys, "steps") &&
       (status = dpd_keys_size_get(keys, "steps", &x->rc.steps, err)) < 0) ||
      (status = dpd__sp_trainer_keys(keys, &x->rc, &x->files, err)) < 0 ||
      ((c->uses & DPD__SP_USES_RUN) &&
       ((status = dpd_keys_choice_get(keys, "center", &choice, err)) < 0 ||
        (status = dpd_keys_size_get(keys, "seeds", &x->rc.seeds, err)) < 0 ||
        (status = dpd__model_save_replicates_get(keys, 1, &x->save_replicates, err)) < 0 ||
        (status = dpd_keys_size_get(keys, "threads", &threads, err)) < 0)) ||
      ((c->uses & DPD__SP_USES_THEORY) &&
       ((status = dpd_keys_real_get(keys, "beta", &x->rc.beta, err)) < 0 ||
        (status = dpd_keys_real_get(keys, "alpha", &x->alpha, err)) < 0))) {
    return status;
  }
  x->gc.seed = x->rc.seed;
  x->rc.center = choice == 1;
  x->rc.threads = (int)threads;
  return dpd__model_plot_get(keys, c->plot_default, &x->plot, err);
}

static void release(void *ctx) {
  if (ctx != NULL) {
    dpd__sp_files_free(&((dpd__sp_ctx *)ctx)->files);
    free(ctx);
  }
}

/* Every key validated (the files read when they are files), the context made. */
static int setup(const dpd_model_command *c, dpd_keys *keys, const dpd_run_env *env, void **ctx,
                 dpd_err *err) {
  const int run = (c->uses & DPD__SP_USES_RUN) != 0;
  dpd__sp_ctx *x = calloc(1, sizeof *x);
  const dpd__sp_files *f = x != NULL ? &x->files : NULL;
  int status, k_none = 0;
  char buf[32], steps[32];
  if ((*ctx = x) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  x->gc = dpd_semipriv_gen_config_default();
  x->rc = dpd_semipriv_run_config_default();
  x->progress = (dpd__progress_bridge){env, "replicates"};
  x->rc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  x->rc.progress_user = &x->progress;
  if ((status = files_keys(keys, run, &x->files, err)) < 0 ||
      (status = f->from_file
                    ? dpd__sp_k_parse(dpd_keys_text_get(keys, "k"), 0, &x->rc.k, &k_none, err)
                    : law_keys(keys, x, &k_none, err)) < 0 ||
      (status = common_keys(c, keys, x, err)) < 0) {
    return status;
  }
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  if (f->from_file &&
      ((status = dpd__model_memory_check(keys, env, f->bytes, "features", err)) < 0 ||
       (status = dpd__sp_files_read(&x->files, env->max_memory, run, size_record, keys, err)) < 0 ||
       (status = dpd__sp_k_parse(dpd_keys_text_get(keys, "k"), f->train.p, &x->rc.k, &k_none,
                                 err)) < 0)) {
    return status;
  }
  if ((status = dpd__sp_sizes_check(&x->rc, f->from_file ? f->train.p : x->gc.d, f, run, err)) <
      0) {
    return status;
  }
  snprintf(steps, sizeof steps, "%zu", dpd__sp_steps_default(&x->rc));
  snprintf(buf, sizeof buf, "%zu", x->rc.k);
  if (x->rc.steps == 0 && (status = dpd_keys_effective_set(keys, "steps", steps, err)) < 0) {
    return status;
  }
  return k_none ? dpd_keys_effective_set(keys, "k", buf, err) : DPD_OK;
}

static double workspace_bytes(const void *ctx, const dpd_model_command *c, const char **driver) {
  const dpd__sp_ctx *x = ctx;
  *driver = x->files.from_file ? "features" : "d";
  return x->files.from_file ? dpd__sp_files_run_bytes(&x->files, x->rc.k, x->rc.seeds)
                            : dpd__sp_law_bytes(x->gc.d, x->rc.k, x->rc.n, x->rc.seeds,
                                                x->rc.threads, (c->uses & DPD__SP_USES_RUN) != 0);
}

static const dpd_model_command sp_commands[] = {
    {.name = "simulate",
     .summary = "Algorithm 1 (public PCA + Noisy-SGD) over replicates: accuracy, hinge, xi_k",
     .files = "replicates.tsv summary.json",
     .example = "dpdyn simulate --model=semipriv --d=200 --k=5 --n=500 --n_public=5000 --epsilon=1",
     .numbers = DPD__SP_NUMBERS_SIMULATE,
     .run = dpd__sp_cmd_simulate,
     .uses = DPD__SP_USES_RUN},
    {.name = "compare",
     .summary = "the same beside Theorem 1, Proposition 4 and the Zwald-Blanchard bound",
     .files = "replicates.tsv theory.tsv summary.json",
     .example = "dpdyn compare --model=semipriv --d=200 --k=5 --epsilon=0.1",
     .numbers = DPD__SP_NUMBERS_COMPARE,
     .run = dpd__sp_cmd_compare,
     .uses = DPD__SP_USES_RUN | DPD__SP_USES_THEORY},
    {.name = "account",
     .summary = "the noise sigma of Noisy-SGD and its (epsilon, delta) guarantee",
     .files = "summary.json",
     .example = "dpdyn account --model=semipriv --n=500 --epsilon=0.1 --delta=1e-5",
     .numbers = DPD__SP_NUMBERS_ACCOUNT,
     .run = dpd__sp_cmd_account},
    {.name = NULL}};

static const char *const sp_small[] = {"d",   "20",     "k",  "3",     "n", "40", "n_public",
                                       "100", "n_test", "50", "seeds", "3", NULL};

const dpd_model_type dpd__model_semipriv = {
    .name = "semipriv",
    .summary = "semi-private learning: public PCA + Noisy-SGD (docs/math.md section 4)",
    .keys = dpd__sp_keys,
    .commands = sp_commands,
    .small = sp_small,
    .setup = setup,
    .release = release,
    .workspace_bytes = workspace_bytes};
