/* model=nc: the results of the nc science as parts of a run's output (nc_impl.h): summary
 * objects and named table columns. Prints nothing.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "dpdyn/compare.h"
#include "dpdyn/nc_theory.h"
#include "dpdyn/privacy.h"
#include "nc/nc_impl.h"

/* The figure of the run and, in the summary, its script and data files (dpdyn plot DIR draws it
 * again from them). */
int dpd__nc_figure_report(dpd_output *out, const char *figure, const char *first, const char *second,
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

/* G, the noise and every guarantee of the run: T Gaussian steps of multiplier m are
 * sqrt(T)/m-GDP. */
int dpd__nc_privacy_report(dpd_output *out, double G, double sigma, double multiplier,
                           const char *budget, double delta, size_t steps, dpd_err *err) {
  const double T = (double)steps;
  const double mu = multiplier > 0.0 ? sqrt(T) / multiplier : INFINITY;
  dpd_privacy_guarantee g;
  int status;
  dpd_output_number_set(out, "G", G);
  dpd_output_number_set(out, "sigma", sigma);
  dpd_output_number_set(out, "noise_multiplier", multiplier);
  cJSON_AddStringToObject(out->summary, "budget", budget);
  if ((status = dpd_privacy_guarantee_from_gdp(mu, delta, &g, err)) < 0) {
    return status;
  }
  dpd__output_guarantee(out, &g);
  dpd_output_number_set(out, "zcdp_per_step", g.zcdp / T);
  return DPD_OK;
}

/* The summary's "features" object (files, sizes, x_bound, clipped fraction) and the note on
 * what replicates redraw. */
int dpd__nc_files_report(dpd_output *out, const dpd__nc_files *f, int from_file, int diagnose,
                         int replicas, dpd_err *err) {
  cJSON *o = cJSON_AddObjectToObject(out->summary, "features");
  if (o == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(o, "source", from_file ? "file" : "etf");
  if (!from_file) {
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
  } else if (!diagnose) {
    cJSON_AddNumberToObject(o, "x_bound", INFINITY); /* normalize = l2 or center_l2 */
  }
  if (!replicas) {
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
int dpd__nc_pca_report(const dpd_nc_pca *pca, double rho, dpd_output *out, dpd_err *err) {
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

/* The summary's test error and the tables' columns. */
int dpd__nc_sim_report(dpd_output *out, const dpd_nc_problem *problem,
                       const dpd_nc_sim_result *sim, dpd_table_builder **t, dpd_err *err) {
  const size_t K = problem->K, S = sim->seeds;
  double *c;
  int status;
  cJSON_AddNumberToObject(out->summary, "seeds", (double)S);
  dpd_output_number_set(out, "test_error", sim->test_error);
  dpd_output_number_set(out, "test_error_se", sim->test_error_se);
  dpd_output_number_set(out, "w_norm", sim->w_norm);
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
    train[k] = (double)problem->counts[k];
    test[k] = (double)problem->test_counts[k];
  }
  for (size_t s = 0; s < S; s++) {
    rep[s] = (double)s;
  }
  if ((c = dpd_table_builder_column(t[0], "test_error", err)) != NULL) {
    memcpy(c, sim->class_error, K * sizeof *c);
  }
  return c == NULL ||
                 dpd_table_builder_add(t[0], "test_error_se", sim->class_error_se, err) < 0 ||
                 dpd_table_builder_add(t[1], "test_error", sim->test_error_replicates, err) <
                     0 ||
                 dpd_table_builder_add(t[1], "w_norm", sim->w_norm_replicates, err) < 0
             ? DPD_ENOMEM
             : DPD_OK;
}

/* compare's numbers: the exact error and the paired gap (the names theory_test_error, gap,
 * gap_se, gap_in_se, and the standard ones of dpd_compare_add), the bounds, and the theory's
 * columns of the tables (NaN when the exact error is not available). */
int dpd__nc_compare_report(dpd_output *out, const dpd__nc_comparison *c, dpd_table_builder **t,
                           size_t K, size_t S, double final_sim, dpd_err *err) {
  static const char *const gaps[] = {"sup_gap", "sup_gap_in_se", "final_gap", "final_gap_se",
                                     "final_gap_in_se"};
  const dpd_compare_spec spec = {.theory = &c->theory, .sim = &final_sim, .se = &c->gap_se,
                                 .g = 1, .final_theory = c->theory, .final_sim = final_sim,
                                 .final_se = c->gap_se};
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
    status = dpd_compare_warning_add(out, S, err);
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

int dpd__nc_diagnose_report(dpd_output *out, const dpd_nc_diagnostics *train,
                            const dpd_nc_diagnostics *test, int law, dpd_err *err) {
  int status;
  diag_json(out->summary, train);
  if (law) {
    cJSON_AddStringToObject(out->summary, "sample",
                            "replicate 0's training sample of the ETF law (stream (seed, 0))");
  }
  if (test != NULL) {
    cJSON *o = cJSON_AddObjectToObject(out->summary, "test");
    if (o != NULL) {
      diag_json(o, test);
    }
  }
  if ((status = diag_tables(out, train, err)) == DPD_OK) {
    status = dpd__output_note_add(
        out, err,
        "note: G_estimated = sqrt((K-1)/K) max |x_i| = %.6g is the CE sensitivity at W = 0 "
        "that these rows attain; it depends on the data, so a run that used it would not be "
        "private: simulate uses a public bound instead (x_bound for file features, the "
        "sup of |x| over the law for features = etf)",
        train->G_ce);
  }
  return status;
}

/* The numbers each command's summary can hold, as dpdyn sweep names them
 * (dpd_model_command.numbers): the union over the command's configurations, checked by
 * tests/cli/test_sweep_plot_y.sh. */
#define NC_PRIVACY                                                                                \
  "seed steps x_norm_max G sigma noise_multiplier privacy.mu privacy.zcdp privacy.delta "          \
  "privacy.epsilon privacy.epsilon_gdp privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke "    \
  "zcdp_per_step "
#define NC_PCA "pca_k n_public pca_trace pca_x_bound pca_etf_residual pca_etf_energy pca_beta0 "
#define NC_FILES "features.n features.p features.K features.n_test features.x_bound "
#define NC_SIM "seeds test_error test_error_se w_norm "
/* trainer = dpsgd (nc_dpsgd.c) */
#define NC_DPSGD_PRIVACY                                                                           \
  "q batch epochs clip eta epsilon epsilon_estimate epsilon_lower epsilon_target delta "
#define NC_DPSGD                                                                                   \
  NC_DPSGD_PRIVACY "clipped_fraction clipped_fraction_se mean_batch mean_batch_se train_loss "     \
                   "train_loss_se collapse.nc1 collapse.within_trace collapse.between_trace "      \
                   "collapse.trace_ratio collapse.cos_max_dev collapse.beta_mean "                 \
                   "collapse.beta_median collapse.x_norm_max "
const char dpd__nc_simulate_numbers[] = NC_PRIVACY NC_SIM NC_PCA NC_FILES NC_DPSGD
    "features.clipped_fraction samples_thm41 samples_thm41_gamma";
const char dpd__nc_compare_numbers[] =
    NC_PRIVACY NC_SIM NC_DPSGD
    "theory_test_error theory_test_error_se gap gap_se gap_in_se sup_gap "
    "sup_gap_in_se final_gap final_gap_se final_gap_in_se bound_d1_printed bound_d1_union "
    "bound_thm34 " NC_PCA NC_FILES
    "features.clipped_fraction bound_thm34_t bound_thm34_printed_eta samples_thm41 "
    "samples_thm41_gamma";
const char dpd__nc_diagnose_numbers[] =
    "seed n p K cos_etf cos_mean cos_min cos_max cos_max_dev beta_quantiles.min "
    "beta_quantiles.q10 beta_quantiles.q25 beta_quantiles.median beta_quantiles.q75 "
    "beta_quantiles.q90 beta_quantiles.q99 beta_quantiles.max beta_mean x_norm_max x_norm_mean "
    "G_estimated within_trace between_trace trace_ratio nc1 between_rank " NC_FILES
    "features.clipped_fraction test.n test.p test.K test.cos_etf test.cos_mean test.cos_min "
    "test.cos_max test.cos_max_dev test.beta_mean test.x_norm_max test.x_norm_mean "
    "test.G_estimated test.within_trace test.between_trace test.trace_ratio test.nc1 "
    "test.between_rank";
const char dpd__nc_account_numbers[] =
    NC_PRIVACY NC_DPSGD_PRIVACY NC_PCA "features.n features.p features.K features.x_bound "
    "features.clipped_fraction samples_thm41 samples_thm41_gamma";
