/* model=semipriv: the commands simulate | compare | account on the context of sp_model.c.
 * SPDX-License-Identifier: MIT
 *
 * simulate  Algorithm 1 over `seeds` replicates: test accuracy and hinge loss with standard
 *           errors, xi_k of the estimated subspace, the eigengap, the minimum margin, sigma.
 *           With the data law (features = law) a replicate redraws the labelled, public and test
 *           samples and the noise (Q and w* are fixed by `seed`); with files only the noise.
 * compare   the same, and the theory beside it: Theorem 1's and Proposition 4's error bounds
 *           (bounds, not predictions: no gap is measured) and the Zwald-Blanchard bound against
 *           the measured subspace error.
 * account   sigma and the guarantee alone. */
#include <math.h>
#include <stdlib.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "dpdyn/compare.h"
#include "models/semipriv/sp_model_impl.h"

/* The members into a summary object. */
static void members_add(cJSON *obj, const dpd__sp_member *m, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (m[i].text != NULL) {
      cJSON_AddStringToObject(obj, m[i].name, m[i].text);
    } else if (m[i].na != NULL) {
      dpd__json_na(obj, m[i].name, m[i].na);
    } else {
      dpd__json_number(obj, m[i].name, m[i].value);
    }
  }
}

/* The guarantee of Noisy-SGD: Bassily et al.'s (epsilon, delta), no conversion. */
static void privacy_add(dpd_output *out, const dpd__sp_ctx *x, const dpd_semipriv_result *res) {
  cJSON *p = cJSON_AddObjectToObject(out->summary, "privacy");
  const dpd__sp_member m[] = {{.name = "sigma", .value = res->sigma}, {.name = "L", .value = res->L},
                              {.name = "zeta", .value = res->zeta},
                              {.name = "eta1", .value = res->eta1},
                              {.name = "steps", .value = (double)res->steps}};
  members_add(out->summary, m, 5);
  if (p == NULL || isinf(x->rc.epsilon)) {
    cJSON_AddStringToObject(p, "guarantee", "none (epsilon = inf: non-private, sigma = 0)");
    cJSON_AddNumberToObject(p, "epsilon", INFINITY);
    return;
  }
  cJSON_AddStringToObject(p, "guarantee", "(epsilon, delta)-DP");
  dpd__json_number(p, "epsilon", x->rc.epsilon);
  dpd__json_number(p, "delta", x->rc.delta);
  cJSON_AddStringToObject(
      p, "source",
      "Bassily, Smith & Thakurta (arXiv:1405.7085): Noisy-SGD with sigma^2 = 32 L^2 n^2 "
      "log(n/delta) log(1/delta) / epsilon^2, at most n^2 steps sampled with replacement, "
      "|x| <= 1 (amplification by sampling and advanced composition); no zCDP or GDP "
      "conversion applies");
}

/* The summary's "features" object: the law, or the files read. */
static int features_add(dpd_output *out, const dpd__sp_files *f, dpd_err *err) {
  cJSON *o = cJSON_AddObjectToObject(out->summary, "features");
  const char *const names[] = {"path", "labels", "public_path", "test_path", "test_labels"};
  const char *const paths[] = {f->train.path, f->train.labels_path,
                               f->pub.X != NULL ? f->pub.path : NULL,
                               f->test.X != NULL ? f->test.path : NULL,
                               f->test.X != NULL ? f->test.labels_path : NULL};
  if (o == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(o, "source", f->from_file ? "file" : "law");
  for (size_t k = 0; f->from_file && k < 5; k++) {
    if (paths[k] != NULL) {
      cJSON_AddStringToObject(o, names[k], paths[k]);
    }
    if (k == 1) {
      cJSON_AddNumberToObject(o, "n", (double)f->train.n);
      cJSON_AddNumberToObject(o, "d", (double)f->train.p);
      if (f->has_positive) {
        cJSON_AddNumberToObject(o, "positive_class", f->positive_class);
      }
    }
    if (k == 2 && paths[2] != NULL) {
      cJSON_AddNumberToObject(o, "n_public", (double)f->pub.n);
    }
  }
  if (f->from_file && f->test.X != NULL) {
    cJSON_AddNumberToObject(o, "n_test", (double)f->test.n);
  }
  if (f->from_file) {
    cJSON_AddStringToObject(o, "scaling", "every row scaled to norm 1 (the unit sphere)");
  }
  return DPD_OK;
}

/* The output every command starts from: command, model, version, seed, k, d, privacy, features. */
static int begin(const dpd_keys *keys, const dpd__sp_ctx *x, const dpd_semipriv_result *res,
                 dpd_output **out, dpd_err *err) {
  int status;
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "semipriv", x->plot, x->rc.seed, out,
                                  err)) < 0 ||
      (status = dpd__output_headline_set(
           *out, err, "model semipriv, %s, d = %zu, k = %zu%s, n = %zu, epsilon = %g, seed %llu",
           x->files.from_file ? x->files.train.path : "law", res->d, res->k,
           res->k == res->d ? " (no PCA)" : "", x->rc.n, x->rc.epsilon,
           (unsigned long long)x->rc.seed)) < 0) {
    return status;
  }
  cJSON_AddNumberToObject((*out)->summary, "k", (double)res->k);
  cJSON_AddNumberToObject((*out)->summary, "d", (double)res->d);
  privacy_add(*out, x, res);
  return features_add(*out, &x->files, err);
}

/* replicates.tsv: each replicate's metrics, drawn by `figure`. */
static int replicates_add(dpd_output *out, const dpd_semipriv_result *res, const char *figure,
                          dpd_err *err) {
  dpd_table_builder *b = NULL;
  double *col;
  int status = dpd_table_builder_create(res->seeds, &b, err);
  for (size_t m = 0; status == DPD_OK && m <= DPD_SEMIPRIV_METRIC_COUNT; m++) {
    const char *name = m == 0 ? "replicate" : dpd_semipriv_metric_name((dpd_semipriv_metric)(m - 1));
    if ((col = dpd_table_builder_column(b, name, err)) == NULL) {
      status = err->status;
    }
    for (size_t i = 0; col != NULL && i < res->seeds; i++) {
      col[i] = m == 0 ? (double)i : res->replicates[i * DPD_SEMIPRIV_METRIC_COUNT + m - 1];
    }
  }
  if (status < 0) {
    dpd_table_builder_free(b);
    return status;
  }
  return dpd_output_table_add_built(out, "replicates.tsv", figure, b, err);
}

/* The figure of a run and, in the summary, its script and data files (dpdyn plot DIR draws it
 * again from them); without replicates.tsv nothing to draw, which plot = 1 is told. */
static int figure_add(dpd_output *out, const dpd__sp_ctx *x, const char *figure,
                      const char *const *data, size_t ndata, dpd_err *err) {
  cJSON *f, *list;
  if (!x->save_replicates) {
    return !x->plot ? DPD_OK
                    : dpd__output_note_add(out, err,
                                           "note: plot = 1: no figure without replicates.tsv "
                                           "(save_replicates = 0): nothing to draw");
  }
  if ((f = cJSON_AddObjectToObject(out->summary, "figure")) == NULL ||
      cJSON_AddStringToObject(f, "name", figure) == NULL ||
      (list = cJSON_AddArrayToObject(f, "data")) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < ndata; k++) {
    cJSON_AddItemToArray(list, cJSON_CreateString(data[k]));
  }
  return dpd__output_figure_set(out, figure, err);
}

/* simulate and compare: the replicates, their summary and replicates.tsv. */
static int run_replicates(const dpd__sp_ctx *x, const dpd_keys *keys, const char *figure,
                          dpd_semipriv_result **res, dpd_output **out, dpd_err *err) {
  dpd_semipriv_gen *gen = NULL;
  dpd__sp_member m[DPD__SP_MEMBERS_MAX];
  int status;
  /* LAPACK's rounding depends on OpenBLAS's thread count: one thread keeps the bits fixed for
   * any `threads` (the replicates run on dpdyn's OpenMP threads), as model=rf and nc do. */
  openblas_set_num_threads(1);
  if (x->files.from_file) {
    status = dpd__sp_files_run(&x->files, &x->rc, res, err);
  } else if ((status = dpd_semipriv_gen_create(&x->gc, &gen, err)) == DPD_OK) {
    status = dpd_semipriv_run(gen, &x->rc, res, err);
  }
  dpd_semipriv_gen_free(gen);
  if (status < 0 || (status = begin(keys, x, *res, out, err)) < 0 ||
      (x->files.from_file &&
       (status = dpd__output_note_add(
            *out, err,
            "note: features from files: the replicates redraw only the noise and the sampled "
            "indices of Noisy-SGD; the labelled, public and test rows are the files' in every "
            "replicate, so the standard error measures the noise alone. Every row was scaled to "
            "norm 1 (the algorithm's unit sphere; part of the mechanism)")) < 0)) {
    return status;
  }
  members_add((*out)->summary, m, dpd__sp_result_members(*res, !x->files.from_file, m));
  if (x->save_replicates && (status = replicates_add(*out, *res, figure, err)) < 0) {
    return status;
  }
  return x->files.from_file
             ? DPD_OK
             : dpd__output_note_add(
                   *out, err,
                   "note: each replicate redraws the labelled, public and test samples and the "
                   "noise of Noisy-SGD (stream (seed, r)); Q and w* are fixed by seed. xi_k is "
                   "that of the estimated subspace, 1 - |A_hat A_hat^T w*|; margin_min the "
                   "smallest y <w*, x> of the labelled sample");
}

int dpd__sp_cmd_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                         dpd_output **out, dpd_err *err) {
  static const char *const data[] = {"replicates.tsv"};
  dpd_semipriv_result *res = NULL;
  int status = run_replicates(ctx, keys, "semipriv_simulate", &res, out, err);
  (void)env;
  dpd_semipriv_result_free(res);
  return status < 0 ? status : figure_add(*out, ctx, "semipriv_simulate", data, 1, err);
}

/* compare: Theorem 1 and Proposition 4 beside the run, the Zwald-Blanchard bound against the
 * measured subspace error; theory.tsv: the bounds against n. */
int dpd__sp_cmd_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                        dpd_err *err) {
  static const char *const data[] = {"theory.tsv", "replicates.tsv"};
  static const char *const names[4] = {"n", "alpha_private", "alpha_private_no_pca",
                                       "alpha_nonprivate"};
  const dpd__sp_ctx *x = ctx;
  dpd_semipriv_result *res = NULL;
  dpd_table_builder *b = NULL;
  dpd__sp_member m[DPD__SP_MEMBERS_MAX];
  double *cols[4] = {NULL};
  cJSON *t;
  enum { G = 33 };
  int status = run_replicates(x, keys, "semipriv_compare", &res, out, err);
  (void)env;
  if (status == DPD_OK && (t = cJSON_AddObjectToObject((*out)->summary, "theory")) == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if (status == DPD_OK) {
    members_add(t, m, dpd__sp_theory_members(res, &x->rc, x->alpha, !x->files.from_file, m));
    status = dpd_table_builder_create(G, &b, err);
  }
  for (size_t k = 0; status == DPD_OK && k < 4; k++) {
    status = (cols[k] = dpd_table_builder_column(b, names[k], err)) != NULL ? DPD_OK : err->status;
  }
  if (status == DPD_OK) {
    dpd__sp_theory_curves(res->k, res->d, x->rc.epsilon, x->rc.delta, res->zeta, G, cols);
    status = dpd_output_table_add_built(*out, "theory.tsv", "semipriv_compare", b, err);
    b = NULL;
  }
  dpd_table_builder_free(b);
  dpd_semipriv_result_free(res);
  if (status < 0 ||
      (status = dpd__output_table_comment_set(
           *out,
           "error bounds against n: Theorem 1 at k and at d, Proposition 4 (bounds, not "
           "predictions)",
           err)) < 0 ||
      (status = dpd__output_note_add(
           *out, err,
           "note: the theory gives upper bounds (Theorem 1, Proposition 4, Zwald-Blanchard), "
           "often vacuous at these sizes (> 1); they are not predictions of the measured "
           "accuracy")) < 0 ||
      (status = figure_add(*out, x, "semipriv_compare", data, 2, err)) < 0) {
    return status;
  }
  return dpd_compare_warning_add(*out, x->rc.seeds, err);
}

int dpd__sp_cmd_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                        dpd_err *err) {
  const dpd__sp_ctx *x = ctx;
  dpd_semipriv_gen *gen = NULL;
  dpd_semipriv_result acc;
  int status = DPD_OK;
  (void)env;
  openblas_set_num_threads(1);
  if ((!x->files.from_file && (status = dpd_semipriv_gen_create(&x->gc, &gen, err)) < 0) ||
      (status = dpd__sp_account_eval(gen, &x->rc, x->files.from_file ? x->files.train.p : x->gc.d,
                                     &acc, err)) < 0 ||
      (status = begin(keys, x, &acc, out, err)) < 0) {
    dpd_semipriv_gen_free(gen);
    return status;
  }
  dpd_semipriv_gen_free(gen);
  cJSON_AddNumberToObject((*out)->summary, "n", (double)x->rc.n);
  if (!x->files.from_file) {
    dpd_output_number_set(*out, "gamma0", acc.gamma0);
    dpd_output_number_set(*out, "xi0", acc.xi0);
  }
  return !x->plot ? DPD_OK
                  : dpd__output_note_add(*out, err,
                                         "note: plot = 1: account has no figure (sigma and the "
                                         "guarantee alone: nothing to draw)");
}
