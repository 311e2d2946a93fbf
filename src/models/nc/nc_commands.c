/* model=nc: the commands, each on the context made by setup (nc_setup.c).
 * SPDX-License-Identifier: MIT
 *
 * simulate  NoisyGD replicates (nc.h): test misclassification rate with its standard error over
 *           `seeds` replicates that redraw the training shifts, the noise and the test points
 *           (the ETF basis, the offset signs and the class counts are the problem's, fixed by
 *           `seed`), per-class errors, the sensitivity G and the noise sigma.
 * compare   the same and the exact one-step error of notes B.5 on the same replicates' training
 *           data and test points (overall and per class), the gap in standard errors of the
 *           paired differences, and the papers' bounds where they apply (src/nc/nc_compare.c).
 * account   the privacy of the run alone.
 * diagnose  the collapse diagnostics (nc_features.h) of the training features (and of the test
 *           features when given), or of replicate 0's training sample of the ETF law. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/compare.h"
#include "dpdyn/nc_theory.h"
#include "dpdyn/privacy.h"
#include "models/nc/nc_model_impl.h"

/* sigma from the multiplier and G (or the multiplier from a given sigma). */
static void noise_set(nc_ctx *x, double G) {
  x->sc.clip = 0.0; /* steps > 1: per-sample gradients clipped to G */
  if (x->budget == 3) { /* sigma */
    x->multiplier = G > 0.0 ? x->sc.sigma / G : 0.0;
  } else {
    x->sc.sigma = isfinite(x->multiplier) ? G * x->multiplier : INFINITY;
  }
}

/* The summary's "features" object (files, sizes, x_bound, clipped fraction) and the note on
 * what replicates redraw. */
static int files_output(dpd_output *out, const nc_ctx *x, dpd_err *err) {
  const dpd__nc_files *f = &x->files;
  cJSON *o = cJSON_AddObjectToObject(out->summary, "features");
  if (o == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(o, "source", x->from_file ? "file" : "etf");
  if (!x->from_file) {
    return DPD_OK;
  }
  cJSON_AddStringToObject(o, "path", f->train_cfg.path);
  if (f->train_cfg.labels_path != NULL) {
    cJSON_AddStringToObject(o, "labels", f->train_cfg.labels_path);
  }
  cJSON_AddNumberToObject(o, "n", (double)f->train->n);
  cJSON_AddNumberToObject(o, "p", (double)f->train->p);
  cJSON_AddNumberToObject(o, "K", (double)f->train->K);
  if (f->test != NULL) {
    cJSON_AddStringToObject(o, "test_path", f->test_cfg.path);
    if (f->test_cfg.labels_path != NULL) {
      cJSON_AddStringToObject(o, "test_labels", f->test_cfg.labels_path);
    }
    cJSON_AddNumberToObject(o, "n_test", (double)f->test->n);
  }
  if (isfinite(f->x_bound)) {
    cJSON_AddNumberToObject(o, "x_bound", f->x_bound);
    cJSON_AddNumberToObject(o, "clipped_fraction", dpd__nc_files_clipped_fraction(f, f->x_bound));
  } else if (!(x->uses & NC_USES_DIAGNOSE)) {
    cJSON_AddNumberToObject(o, "x_bound", INFINITY); /* normalize = l2 or center_l2 */
  }
  if (!(x->uses & NC_USES_REPLICAS)) {
    return DPD_OK;
  }
  return dpd__output_note_add(
      out, err,
      "note: features from files: the replicates redraw only the noise (and the test "
      "perturbation u when test_shift is random); the training and test rows are the "
      "files' in every replicate, so the standard error measures the noise alone");
}

/* summary.json facts of the PCA fix, and (K = 2, rho the finite zCDP of the run) Thm 4.1's
 * sample count at gamma = 0.05. */
static int pca_output(const dpd_nc_pca *pca, double rho, dpd_output *out, dpd_err *err) {
  const dpd_pca_result *res = pca->pca;
  cJSON *ev;
  cJSON_AddNumberToObject(out->summary, "pca_k", (double)pca->cfg.k);
  cJSON_AddNumberToObject(out->summary, "n_public", (double)pca->cfg.n_public);
  cJSON_AddStringToObject(out->summary, "pca_center", pca->cfg.center ? "yes" : "no");
  cJSON_AddStringToObject(out->summary, "pca_route",
                          res->route == DPD_PCA_ROUTE_GRAM ? "gram" : "covariance");
  if ((ev = cJSON_CreateDoubleArray(res->eigenvalues, (int)res->k)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddItemToObject(out->summary, "pca_eigenvalues", ev);
  dpd_output_number_set(out, "pca_trace", res->trace);
  dpd_output_number_set(out, "pca_x_bound", pca->x_bound);
  dpd_output_number_set(out, "pca_etf_residual", pca->etf_residual);
  dpd_output_number_set(out, "pca_etf_energy", pca->etf_energy);
  dpd_output_number_set(out, "pca_beta0", pca->beta0);
  if (pca->base->K == 2 && isfinite(rho) && rho > 0.0) {
    const double b = pca->base->cfg.shift == DPD_NC_SHIFT_NONE ? 0.0 : pca->base->cfg.beta;
    const double s = dpd_nc_samples_thm41(b, pca->beta0, (double)pca->base->p, rho, 0.05);
    if (isfinite(s)) {
      dpd_output_number_set(out, "samples_thm41", s);
    } else {
      dpd_output_na_set(out, "samples_thm41",
                        "Thm 4.1 needs M(beta, beta0, p) > 0 (beta0 too large for its proof)");
    }
    dpd_output_number_set(out, "samples_thm41_gamma", 0.05);
  }
  return DPD_OK;
}

/* The figure of the run and, in the summary, its script and data files (dpdyn plot DIR draws it
 * again from them). */
static int figure_add(dpd_output *out, const char *figure, const char *first, const char *second,
                      dpd_err *err) {
  cJSON *f = cJSON_AddObjectToObject(out->summary, "figure"), *list;
  if (f == NULL || cJSON_AddStringToObject(f, "name", figure) == NULL ||
      (list = cJSON_AddArrayToObject(f, "data")) == NULL ||
      !cJSON_AddItemToArray(list, cJSON_CreateString(first)) ||
      !cJSON_AddItemToArray(list, cJSON_CreateString(second))) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return dpd__output_figure_set(out, figure, err);
}

/* The output of a training command: the problem (ETF law, with the PCA fix, or the files; not
 * built for account on files), G, the noise and every guarantee of the run (T Gaussian steps of
 * multiplier m are sqrt(T)/m-GDP). */
typedef struct {
  dpd_nc_problem *problem, *base;
  dpd_nc_pca *pca;
  dpd_nc_sim_result *sim;
} nc_built;

static int begin(nc_ctx *x, const dpd_keys *keys, const char *figure, nc_built *b,
                 dpd_output **outp, dpd_err *err) {
  const double T = (double)x->sc.steps;
  dpd_privacy_guarantee g;
  double G, mu;
  int status = DPD_OK;
  if (x->from_file && x->pca_on) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': %zu (allowed: 0 with features = file; the PCA fix "
                    "draws its public sample from the ETF law)",
                    x->pca.k);
  }
  if (x->from_file && !(x->uses & NC_USES_REPLICAS)) { /* account: G from the public bound */
    G = dpd_nc_sensitivity_bound(x->pc.K, x->pc.n, x->files.x_bound, x->files.x_bound,
                                 x->pc.normalize, x->sc.loss);
  } else if ((status = x->from_file ? dpd__nc_files_problem(&x->files, &x->pc, &b->problem, err)
                                    : dpd__nc_problem_build(&x->pc, x->pca_on ? &x->pca : NULL,
                                                            &b->problem, &b->base, &b->pca,
                                                            err)) < 0) {
    return status;
  } else {
    G = dpd_nc_sensitivity(b->problem, x->sc.loss);
  }
  noise_set(x, G);
  mu = x->multiplier > 0.0 ? sqrt(T) / x->multiplier : INFINITY;
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "nc", x->plot, x->pc.seed, outp,
                                  err)) < 0 ||
      (status = dpd__output_headline_set(
           *outp, err, "model nc, K = %zu, p = %zu, n = %zu, %zu step%s, seed %llu", x->pc.K,
           x->pc.p, x->pc.n, x->sc.steps, x->sc.steps == 1 ? "" : "s",
           (unsigned long long)x->pc.seed)) < 0 ||
      (figure != NULL &&
       (status = figure_add(*outp, figure, "classes.tsv",
                            x->save_replicates > 0 ? "replicates.tsv" : "classes.tsv", err)) < 0)) {
    return status;
  }
  cJSON_AddNumberToObject((*outp)->summary, "steps", T);
  if (b->problem != NULL) {
    dpd_output_number_set(*outp, "x_norm_max", b->problem->x_norm_max);
  }
  dpd_output_number_set(*outp, "G", G);
  dpd_output_number_set(*outp, "sigma", x->sc.sigma);
  dpd_output_number_set(*outp, "noise_multiplier", x->multiplier);
  cJSON_AddStringToObject((*outp)->summary, "budget",
                          x->budget >= 0 ? x->budget_name : "none");
  if ((status = dpd_privacy_guarantee_from_gdp(mu, x->delta, &g, err)) < 0) {
    return status;
  }
  dpd__output_guarantee(*outp, &g);
  dpd_output_number_set(*outp, "zcdp_per_step", g.zcdp / T);
  if (x->from_file && (status = files_output(*outp, x, err)) < 0) {
    return status;
  }
  /* zCDP of the whole run: T steps of multiplier m are T / (2 m^2)-zCDP (inf: non-private) */
  return b->pca == NULL ? DPD_OK
                        : pca_output(b->pca, x->multiplier > 0.0
                                                 ? T / (2.0 * x->multiplier * x->multiplier)
                                                 : INFINITY,
                                     *outp, err);
}

/* Frees what a command built; on failure the output too. */
static int end(nc_built *b, int status, dpd_output **out) {
  dpd_nc_sim_result_free(b->sim);
  dpd__nc_problem_release(b->problem, b->base, b->pca);
  if (status < 0) {
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}

/* The replicates, the summary's test error and the tables' columns (classes, replicates). */
static int simulate(nc_ctx *x, const dpd_keys *keys, const char *figure, nc_built *b,
                    dpd_table_builder **t, dpd_output **out, dpd_err *err) {
  const size_t K = x->pc.K, S = x->sc.seeds;
  double *c;
  int status;
  if ((status = begin(x, keys, figure, b, out, err)) < 0 ||
      (status = dpd_nc_sim_run(b->problem, &x->sc, &b->sim, err)) < 0) {
    return status;
  }
  cJSON_AddNumberToObject((*out)->summary, "seeds", (double)S);
  dpd_output_number_set(*out, "test_error", b->sim->test_error);
  dpd_output_number_set(*out, "test_error_se", b->sim->test_error_se);
  dpd_output_number_set(*out, "w_norm", b->sim->w_norm);
  if ((status = dpd_table_builder_create(K, &t[0], err)) < 0 ||
      (status = dpd_table_builder_create(S, &t[1], err)) < 0) {
    return status;
  }
  double *cls = dpd_table_builder_column(t[0], "class", err);
  double *train = dpd_table_builder_column(t[0], "train_count", err);
  double *test = dpd_table_builder_column(t[0], "test_count", err);
  double *rep = dpd_table_builder_column(t[1], "replicate", err);
  if (cls == NULL || train == NULL || test == NULL || rep == NULL) {
    return DPD_ENOMEM;
  }
  for (size_t k = 0; k < K; k++) {
    cls[k] = (double)k;
    train[k] = (double)b->problem->counts[k];
    test[k] = (double)b->problem->test_counts[k];
  }
  for (size_t s = 0; s < S; s++) {
    rep[s] = (double)s;
  }
  if ((c = dpd_table_builder_column(t[0], "test_error", err)) != NULL) {
    memcpy(c, b->sim->class_error, K * sizeof *c);
  }
  return c == NULL ||
                 dpd_table_builder_add(t[0], "test_error_se", b->sim->class_error_se, err) < 0 ||
                 dpd_table_builder_add(t[1], "test_error", b->sim->test_error_replicates, err) <
                     0 ||
                 dpd_table_builder_add(t[1], "w_norm", b->sim->w_norm_replicates, err) < 0
             ? DPD_ENOMEM
             : DPD_OK;
}

/* classes.tsv, and replicates.tsv when save_replicates = 1 (the builders are consumed). */
static int tables_add(dpd_output *out, const nc_ctx *x, const char *figure,
                      dpd_table_builder **t, dpd_err *err) {
  dpd_table_builder *reps = x->save_replicates > 0 ? t[1] : NULL;
  int status = dpd_output_table_add_built(out, "classes.tsv", figure, t[0], err);
  if (reps != t[1]) {
    dpd_table_builder_free(t[1]);
  }
  t[0] = t[1] = NULL;
  if (status == DPD_OK && reps != NULL) {
    status = dpd_output_table_add_built(out, "replicates.tsv", figure, reps, err);
  }
  return status;
}

int dpd__nc_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                     dpd_err *err) {
  nc_built b = {0};
  dpd_table_builder *t[2] = {NULL, NULL};
  int status = simulate(ctx, keys, "nc_simulate", &b, t, out, err);
  (void)env;
  if (status == DPD_OK) {
    status = tables_add(*out, ctx, "nc_simulate", t, err);
  }
  dpd_table_builder_free(t[0]);
  dpd_table_builder_free(t[1]);
  return end(&b, status, out);
}

/* compare's numbers: the exact error and the paired gap (the names theory_test_error, gap,
 * gap_se, gap_in_se, and the standard ones of dpd_compare_add), the bounds, and the theory's
 * columns of the tables (NaN when the exact error is not available). */
static int compare_add(dpd_output *out, const nc_ctx *x, const dpd__nc_comparison *c,
                       dpd_table_builder **t, double final_sim, dpd_err *err) {
  static const char *const gaps[] = {"sup_gap", "sup_gap_in_se", "final_gap", "final_gap_se",
                                     "final_gap_in_se"};
  const dpd_compare_spec spec = {.theory = &c->theory, .sim = &final_sim, .se = &c->gap_se,
                                 .g = 1, .final_theory = c->theory, .final_sim = final_sim,
                                 .final_se = c->gap_se};
  const size_t K = x->pc.K, S = x->sc.seeds;
  double *ct = dpd_table_builder_column(t[0], "theory_test_error", err);
  double *cse = dpd_table_builder_column(t[0], "theory_test_error_se", err);
  double *rt = dpd_table_builder_column(t[1], "theory_test_error", err);
  int status = DPD_OK;
  if (ct == NULL || cse == NULL || rt == NULL) {
    return DPD_ENOMEM;
  }
  for (size_t k = 0; k < K; k++) {
    ct[k] = c->why_not == NULL ? c->class_theory[k] : NAN;
    cse[k] = c->why_not == NULL ? c->class_theory_se[k] : NAN;
  }
  for (size_t r = 0; r < S; r++) {
    rt[r] = c->why_not == NULL ? c->replicate_theory[r] : NAN;
  }
  if (c->why_not != NULL) {
    dpd_output_na_set(out, "theory_test_error", c->why_not);
    dpd_output_na_set(out, "gap_in_se", c->why_not);
    for (size_t k = 0; k < sizeof gaps / sizeof *gaps; k++) {
      dpd_output_na_set(out, gaps[k], c->why_not);
    }
    status = dpd__compare_seeds_warning(out, S, err);
  } else {
    dpd_output_number_set(out, "theory_test_error", c->theory);
    dpd_output_number_set(out, "theory_test_error_se", c->theory_se);
    dpd_output_number_set(out, "gap", c->gap);
    dpd_output_number_set(out, "gap_se", c->gap_se);
    if (c->gap_se > 0.0) {
      dpd_output_number_set(out, "gap_in_se", c->gap / c->gap_se);
    } else {
      dpd_output_na_set(out, "gap_in_se",
                        "the paired differences sim - theory have standard error 0 (e.g. no "
                        "simulated error in any replicate): the gap in SE is undefined; see gap");
    }
    status = dpd_compare_add(out, NULL, &spec, S, NULL, err);
  }
  if (c->d1) {
    dpd_output_number_set(out, "bound_d1_printed", c->d1_printed);
    dpd_output_number_set(out, "bound_d1_union", c->d1_union);
  }
  if (c->thm34_why != NULL) {
    dpd_output_na_set(out, "bound_thm34", c->thm34_why);
    return status;
  }
  dpd_output_number_set(out, "bound_thm34", c->thm34);
  dpd_output_number_set(out, "bound_thm34_t", c->thm34_t);
  if (isfinite(c->thm34_printed_eta)) {
    dpd_output_number_set(out, "bound_thm34_printed_eta", c->thm34_printed_eta);
  } else {
    dpd_output_na_set(out, "bound_thm34_printed_eta",
                      "eta is too large for the printed step rule (no t > 0)");
  }
  return status;
}

int dpd__nc_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  nc_ctx *x = ctx;
  nc_built b = {0};
  dpd_table_builder *t[2] = {NULL, NULL};
  dpd__nc_comparison c = {0};
  int status = simulate(x, keys, "nc_compare", &b, t, out, err);
  (void)env;
  if (status == DPD_OK &&
      (status = dpd__nc_compare_eval(b.problem, &x->sc, b.sim, &c, err)) == DPD_OK &&
      (status = compare_add(*out, x, &c, t, b.sim->test_error, err)) == DPD_OK) {
    status = tables_add(*out, x, "nc_compare", t, err);
  }
  dpd__nc_comparison_free(&c);
  dpd_table_builder_free(t[0]);
  dpd_table_builder_free(t[1]);
  return end(&b, status, out);
}

/* The noise and the guarantees alone. G needs the problem's features: the ETF law (built
 * without replicates), or, with file features, the public bound x_bound and the training set's
 * size and classes (the training file is read; test files are not needed). */
int dpd__nc_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  nc_ctx *x = ctx;
  nc_built b = {0};
  int status = begin(x, keys, NULL, &b, out, err);
  (void)env;
  if (status == DPD_OK && x->plot) {
    status = dpd__output_note_add(*out, err,
                                  "note: nothing to draw for account (its result is summary.json "
                                  "alone): plot = 1 has no effect");
  }
  return end(&b, status, out);
}

/* The diagnostics' scalars into a JSON object. */
static void diag_json(cJSON *o, const dpd_nc_diagnostics *d) {
  static const char *const names[DPD_NC_BETA_QUANTILES] = {"min", "q10", "q25", "median",
                                                           "q75", "q90", "q99", "max"};
  cJSON *q;
  cJSON_AddNumberToObject(o, "n", (double)d->n);
  cJSON_AddNumberToObject(o, "p", (double)d->p);
  cJSON_AddNumberToObject(o, "K", (double)d->K);
  dpd__json_number(o, "cos_etf", d->cos_etf);
  dpd__json_number(o, "cos_mean", d->cos_mean);
  dpd__json_number(o, "cos_min", d->cos_min);
  dpd__json_number(o, "cos_max", d->cos_max);
  dpd__json_number(o, "cos_max_dev", d->cos_max_dev);
  q = cJSON_AddObjectToObject(o, "beta_quantiles");
  for (size_t k = 0; k < DPD_NC_BETA_QUANTILES && q != NULL; k++) {
    dpd__json_number(q, names[k], d->beta_quantile[k]);
  }
  dpd__json_number(o, "beta_mean", d->beta_mean);
  dpd__json_number(o, "x_norm_max", d->x_norm_max);
  dpd__json_number(o, "x_norm_mean", d->x_norm_mean);
  dpd__json_number(o, "G_estimated", d->G_ce);
  dpd__json_number(o, "within_trace", d->within_trace);
  dpd__json_number(o, "between_trace", d->between_trace);
  if (isfinite(d->trace_ratio)) {
    dpd__json_number(o, "trace_ratio", d->trace_ratio);
  } else {
    cJSON_AddNumberToObject(o, "trace_ratio", INFINITY);
  }
  dpd__json_number(o, "nc1", d->nc1);
  cJSON_AddNumberToObject(o, "between_rank", (double)d->between_rank);
}

/* classes.tsv, cosines.tsv (with the ETF value in its header) and beta_quantiles.tsv. */
static int diag_tables(dpd_output *out, const dpd_nc_diagnostics *d, dpd_err *err) {
  const size_t K = d->K, P = d->npairs, Q = DPD_NC_BETA_QUANTILES;
  dpd_table_builder *t[3] = {NULL, NULL, NULL};
  double *cls, *cnt, *pj, *pk;
  char line[96];
  int status;
  if ((status = dpd_table_builder_create(K, &t[0], err)) < 0 ||
      (status = dpd_table_builder_create(P, &t[1], err)) < 0 ||
      (status = dpd_table_builder_create(Q, &t[2], err)) < 0 ||
      (cls = dpd_table_builder_column(t[0], "class", err)) == NULL ||
      (cnt = dpd_table_builder_column(t[0], "count", err)) == NULL ||
      (pj = dpd_table_builder_column(t[1], "class_j", err)) == NULL ||
      (pk = dpd_table_builder_column(t[1], "class_k", err)) == NULL) {
    status = status < 0 ? status : DPD_ENOMEM;
    goto done;
  }
  for (size_t k = 0, m = 0; k < K; k++) {
    cls[k] = (double)k;
    cnt[k] = (double)d->counts[k];
    for (size_t j = k + 1; j < K; j++, m++) {
      pj[m] = (double)k;
      pk[m] = (double)j;
    }
  }
  snprintf(line, sizeof line, "ETF value -1/(K-1) = %.17g", d->cos_etf);
  if ((status = dpd_table_builder_add(t[0], "centred_mean_norm", d->centred_norm, err)) < 0 ||
      (status = dpd_table_builder_add(t[0], "within_rms", d->within_rms, err)) < 0 ||
      (status = dpd_table_builder_add(t[1], "cosine", d->cosines, err)) < 0 ||
      (status = dpd_table_builder_add(t[2], "probability", d->beta_prob, err)) < 0 ||
      (status = dpd_table_builder_add(t[2], "beta", d->beta_quantile, err)) < 0) {
    goto done;
  }
  status = dpd_output_table_add_built(out, "classes.tsv", "nc_diagnose", t[0], err);
  t[0] = NULL;
  if (status == DPD_OK &&
      (status = dpd_output_table_add_built(out, "cosines.tsv", "nc_diagnose", t[1], err)) == DPD_OK &&
      (status = dpd__output_table_comment_set(out, line, err)) == DPD_OK) {
    status = dpd_output_table_add_built(out, "beta_quantiles.tsv", "nc_diagnose", t[2], err);
  }
  t[1] = t[2] = NULL;
done:
  for (size_t k = 0; k < 3; k++) {
    dpd_table_builder_free(t[k]);
  }
  return status;
}

int dpd__nc_diagnose(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **outp,
                     dpd_err *err) {
  nc_ctx *x = ctx;
  const dpd__nc_files *f = &x->files;
  dpd_nc_diagnostics *train = NULL, *test = NULL;
  int status;
  (void)keys;
  if (x->from_file) {
    status = dpd__nc_diagnostics_polled(f->train->n, f->train->p, f->train->K,
                                        dpd_nc_features_row, f->train, env->progress,
                                        env->progress_user, &train, err);
    if (status == DPD_OK && f->test != NULL) {
      status = dpd__nc_diagnostics_polled(f->test->n, f->test->p, f->test->K,
                                          dpd_nc_features_row, f->test, env->progress,
                                          env->progress_user, &test, err);
    }
  } else {
    status = dpd__nc_diagnostics_law(&x->pc, env->progress, env->progress_user, &train, err);
  }
  if (status < 0 ||
      (status = dpd__output_begin("diagnose", "nc", x->plot, x->pc.seed, outp, err)) < 0 ||
      (status = dpd__output_headline_set(*outp, err,
                                         "model nc diagnose, %s, K = %zu, p = %zu, n = %zu",
                                         x->from_file ? f->train_cfg.path : "ETF law", train->K,
                                         train->p, train->n)) < 0 ||
      (status = figure_add(*outp, "nc_diagnose", "classes.tsv", "cosines.tsv", err)) < 0 ||
      (status = files_output(*outp, x, err)) < 0) {
    goto done;
  }
  diag_json((*outp)->summary, train);
  if (!x->from_file) {
    cJSON_AddStringToObject((*outp)->summary, "sample",
                            "replicate 0's training sample of the ETF law (stream (seed, 0))");
  }
  if (test != NULL) {
    cJSON *o = cJSON_AddObjectToObject((*outp)->summary, "test");
    if (o != NULL) {
      diag_json(o, test);
    }
  }
  if ((status = diag_tables(*outp, train, err)) == DPD_OK) {
    status = dpd__output_note_add(
        *outp, err,
        "note: G_estimated = sqrt((K-1)/K) max |x_i| = %.6g is the CE sensitivity at W = 0 "
        "that these rows attain; it depends on the data, so a run that used it would not be "
        "private: simulate uses a public bound instead (x_bound for file features, the "
        "sup of |x| over the law for features = etf)",
        train->G_ce);
  }
done:
  dpd_nc_diagnostics_free(train);
  dpd_nc_diagnostics_free(test);
  return end(&(nc_built){0}, status, outp);
}
