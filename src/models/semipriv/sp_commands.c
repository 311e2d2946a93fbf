/* model=semipriv: the commands simulate, compare (its theory gives bounds, not predictions, so
 * no gap is measured) and account on the context of sp_model.c. SPDX-License-Identifier: MIT */
#include <string.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "dpdyn/compare.h"
#include "models/semipriv/sp_model_impl.h"

/* What every command reports first: command, model, version, seed, k, d, the guarantee and
 * sigma, the features. */
static int begin(const dpd_keys *keys, const dpd__sp_ctx *x, const dpd_semipriv_result *res,
                 dpd_output **out, dpd_err *err) {
  dpd__sp_member m[DPD__SP_MEMBERS_MAX];
  cJSON *p;
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
  dpd__sp_constants_members(res, m); /* k, d, then sigma .. steps after the privacy object */
  dpd__sp_members_add((*out)->summary, m, 2);
  p = cJSON_AddObjectToObject((*out)->summary, "privacy");
  dpd__sp_members_add((*out)->summary, m + 2, 5);
  dpd__sp_members_add(p, m, dpd__sp_privacy_members(&x->rc, res, m));
  dpd__sp_members_add(cJSON_AddObjectToObject((*out)->summary, "features"), m,
                      dpd__sp_files_members(&x->files, m));
  return DPD_OK;
}

/* The figure (NULL: none, account) and in the summary its name and data files, the tables it
 * draws in their order (dpdyn plot DIR draws it again from them); plot = 1 is told of none. */
static int figure_add(dpd_output *out, const dpd__sp_ctx *x, const char *figure, dpd_err *err) {
  const char *none = figure == NULL ? "account has nothing to draw (sigma and the guarantee alone)"
                     : x->save_replicates
                         ? NULL
                         : "nothing to draw without replicates.tsv (save_replicates = 0)";
  cJSON *f = none == NULL ? cJSON_AddObjectToObject(out->summary, "figure") : NULL;
  cJSON *list = cJSON_AddStringToObject(f, "name", figure) ? cJSON_AddArrayToObject(f, "data") : 0;
  if (none != NULL) {
    return x->plot ? dpd__output_note_add(out, err, "note: plot = 1: no figure: %s", none) : 0;
  }
  for (size_t k = 0; list != NULL && k < out->ntables; k++) {
    if (out->tables[k].figure != NULL && strcmp(out->tables[k].figure, figure) == 0) {
      cJSON_AddItemToArray(list, cJSON_CreateString(out->tables[k].name));
    }
  }
  if (list == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return dpd__output_figure_set(out, figure, err);
}

/* simulate and compare: the replicates, their summary, replicates.tsv drawn by `figure`. */
static int run_replicates(const dpd__sp_ctx *x, const dpd_keys *keys, const char *figure,
                          dpd_semipriv_result **res, dpd_output **out, dpd_err *err) {
  const int law = !x->files.from_file;
  dpd_semipriv_gen *gen = NULL;
  dpd_table_builder *b = NULL;
  dpd__sp_member m[DPD__SP_MEMBERS_MAX];
  int status;
  /* LAPACK's rounding depends on OpenBLAS's thread count: one thread keeps the bits fixed for
   * any `threads` (the replicates run on dpdyn's OpenMP threads), as model=rf and nc do. */
  openblas_set_num_threads(1);
  if (!law) {
    status = dpd__sp_files_run(&x->files, &x->rc, res, err);
  } else if ((status = dpd_semipriv_gen_create(&x->gc, &gen, err)) == DPD_OK) {
    status = dpd_semipriv_run(gen, &x->rc, res, err);
  }
  dpd_semipriv_gen_free(gen);
  if (status < 0 || (status = begin(keys, x, *res, out, err)) < 0) {
    return status;
  }
  dpd__sp_members_add((*out)->summary, m, dpd__sp_result_members(*res, law, m));
  if (x->save_replicates &&
      ((status = dpd__sp_replicates_table(*res, &b, err)) < 0 ||
       (status = dpd_output_table_add_built(*out, "replicates.tsv", figure, b, err)) < 0)) {
    return status;
  }
  return dpd__output_note_add(*out, err, "%s", dpd__sp_run_note(*res, law));
}

int dpd__sp_cmd_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                         dpd_err *err) {
  dpd_semipriv_result *res = NULL;
  int status = run_replicates(ctx, keys, "semipriv_simulate", &res, out, err);
  (void)env;
  dpd_semipriv_result_free(res);
  return status < 0 ? status : figure_add(*out, ctx, "semipriv_simulate", err);
}

/* compare: the theory object, theory.tsv (the bounds against n), and the seeds warning. */
int dpd__sp_cmd_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                        dpd_err *err) {
  const dpd__sp_ctx *x = ctx;
  dpd_semipriv_result *res = NULL;
  dpd_table_builder *b = NULL;
  dpd__sp_member m[DPD__SP_MEMBERS_MAX];
  /* trainer = dpsgd: no bound to draw (Theorem 1 is Noisy-SGD's), the accuracies alone */
  const char *fig = x->rc.trainer ? "semipriv_simulate" : "semipriv_compare";
  int status = run_replicates(x, keys, fig, &res, out, err);
  (void)env;
  if (status == DPD_OK) {
    dpd__sp_members_add(cJSON_AddObjectToObject((*out)->summary, "theory"), m,
                        dpd__sp_theory_members(res, &x->rc, x->alpha, !x->files.from_file, m));
    status = dpd__sp_theory_table(res, &x->rc, &b, err);
  }
  dpd_semipriv_result_free(res);
  if (status < 0 ||
      (status = dpd_output_table_add_built(*out, "theory.tsv", x->rc.trainer ? NULL : fig, b,
                                           err)) < 0 ||
      (status = dpd__output_table_comment_set(*out, dpd__sp_note(DPD__SP_NOTE_THEORY_TABLE), err)) <
          0 ||
      (status = dpd__output_note_add(*out, err, "%s", dpd__sp_note(DPD__SP_NOTE_THEORY))) < 0 ||
      (status = figure_add(*out, x, fig, err)) < 0) {
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
  if ((x->files.from_file || (status = dpd_semipriv_gen_create(&x->gc, &gen, err)) == DPD_OK) &&
      (status = dpd__sp_account_eval(gen, &x->rc, x->files.from_file ? x->files.train.p : x->gc.d,
                                     &acc, err)) == DPD_OK &&
      (status = begin(keys, x, &acc, out, err)) == DPD_OK) {
    const dpd__sp_member m[] = {{.name = "n", .value = (double)x->rc.n},
                                {.name = "gamma0", .value = acc.gamma0},
                                {.name = "xi0", .value = acc.xi0}};
    dpd__sp_members_add((*out)->summary, m, gen != NULL ? 3 : 1);
    status = figure_add(*out, x, NULL, err);
  }
  dpd_semipriv_gen_free(gen);
  return status;
}
