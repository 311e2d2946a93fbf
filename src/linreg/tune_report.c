/* The report of a tuning (tune_surface_impl.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "dpdyn/compare.h"
#include "linreg/tune_surface_impl.h"

/* JSON array of the parameter names in `mask`. */
static cJSON *names_json(int mask) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; k < DPD_TUNE_NNAMES; k++) {
    if (mask & dpd__tune_names[k].flag) {
      cJSON_AddItemToArray(a, cJSON_CreateString(dpd__tune_names[k].name));
    }
  }
  return a;
}

/* The optimum: the parameters, eta~ at 0 and 1, sup eta~ and the limit. */
static void optimum_summary(dpd_output *out, const dpd__tune_report_spec *u,
                            const char *const *names, const double *values, size_t n) {
  cJSON *opt;
  cJSON_AddItemToObject(out->summary, "tuned", names_json(u->res->params));
  cJSON_AddItemToObject(out->summary, "ignored", names_json(u->res->ignored));
  cJSON_AddItemToObject(out->summary, "at_bound", names_json(u->res->at_bound));
  opt = cJSON_AddObjectToObject(out->summary, "optimum");
  dpd__json_number(opt, "c", u->res->c);
  for (size_t k = 0; k < n; k++) {
    dpd__json_number(opt, names[k], values[k]);
  }
  if (u->res->offset_scale > 0.0) { /* the optimal family's m = max(c2, c3/rho) */
    dpd__json_number(opt, "offset_scale", u->res->offset_scale);
  }
  dpd__json_number(opt, "eta_at_0", u->res->eta0);
  dpd__json_number(opt, "eta_at_1", dpd_schedule_eval(u->schedule, 1.0));
  dpd__json_number(opt, "eta_sup", u->res->eta_sup);
  dpd__json_number(opt, "stability_limit", u->res->eta_limit);
}

/* The risk at the optimum, the confirmation (gaps of compare.h) and the surface's check. */
static void result_summary(dpd_output *out, const dpd__tune_report_spec *u) {
  const dpd_linreg_problem *p = u->problem;
  const size_t g = u->ode->grid;
  dpd_output_number_set(out, "final_excess_risk", u->res->risk);
  dpd_output_number_set(out, "final_excess_risk_se", 0.0);
  dpd_output_number_set(out, "excess_risk_before_release", u->res->before_release);
  dpd_output_number_set(out, "release_jump", u->res->release_jump);
  dpd_output_number_set(out, "lower_bound_before_release", u->ode->lower[g - 1]);
  dpd_output_number_set(out, "upper_bound_before_release", u->ode->upper[g - 1]);
  cJSON_AddNumberToObject(out->summary, "confirm_seeds", (double)u->t->confirm_seeds);
  cJSON_AddNumberToObject(out->summary, "ode_groups", (double)p->ngroups);
  cJSON_AddBoolToObject(out->summary, "compressed", p->compressed_bands > 0);
  if (u->sim != NULL) {
    dpd_gap_stats gap;
    dpd_gap_measure(u->ode->risk, u->sim->risk_mean, u->sim->risk_se, g, u->res->risk,
                    u->sim->final_risk, u->sim->final_risk_se, NULL, &gap);
    dpd_output_number_set(out, "confirm_final_excess_risk", u->sim->final_risk);
    dpd_output_number_set(out, "confirm_final_excess_risk_se", u->sim->final_risk_se);
    dpd_output_number_set(out, "confirm_gap", gap.final_gap);
    dpd_output_number_set(out, "confirm_gap_in_se", gap.final_gap_in_se);
    dpd_output_number_set(out, "confirm_sup_gap", gap.sup_gap);
    dpd_output_number_set(out, "confirm_sup_gap_in_se", gap.sup_gap_in_se);
    dpd_output_number_set(out, "clipped_fraction", u->sim->clip_fraction_total);
  }
  cJSON_AddNumberToObject(out->summary, "heatmap", (double)u->t->heatmap);
  if (u->t->heatmap > 0) {
    cJSON_AddStringToObject(out->summary, "heatmap_eta", u->t->eta_log ? "log" : "linear");
    cJSON_AddNumberToObject(out->summary, "heatmap_points", (double)u->st->points);
    cJSON_AddNumberToObject(out->summary, "heatmap_failed", (double)u->st->failed);
    cJSON_AddNumberToObject(out->summary, "heatmap_beating_optimum", (double)u->st->beating);
    dpd_output_number_set(out, "heatmap_best_excess_risk", u->st->best);
    dpd_output_number_set(out, "heatmap_best_c", u->st->best_c);
    dpd_output_number_set(out, "heatmap_best_eta0", u->st->best_eta);
  }
}

/* The search: its counts and the tuner's settings. */
static void search_summary(dpd_output *out, const dpd__tune_report_spec *u) {
  const dpd_tune_config def = dpd_tune_config_default();
  cJSON *s = out->summary, *tj;
  cJSON_AddNumberToObject(s, "iterations", (double)u->res->iterations);
  cJSON_AddNumberToObject(s, "evaluations", (double)u->res->evals);
  cJSON_AddNumberToObject(s, "failed_evaluations", (double)u->res->failed_evals);
  cJSON_AddNumberToObject(s, "local_searches", (double)u->res->starts);
  cJSON_AddBoolToObject(s, "converged", u->res->converged);
  dpd_output_number_set(out, "start_spread", u->res->start_spread);
  dpd_output_number_set(out, "prescan_best", u->res->prescan_best);
  tj = cJSON_AddObjectToObject(s, "tuner");
  dpd__json_number(tj, "safety", def.safety);
  dpd__json_number(tj, "eta_min_fraction", def.eta_min_fraction);
  dpd__json_number(tj, "shape_min", def.shape_min);
  dpd__json_number(tj, "shape_max", def.shape_max);
  cJSON_AddNumberToObject(tj, "prescan", (double)def.prescan);
  cJSON_AddNumberToObject(tj, "starts", (double)def.starts);
  dpd__json_number(tj, "xtol", u->tc->xtol);
  cJSON_AddNumberToObject(tj, "max_iter", (double)def.max_iter);
  cJSON_AddNumberToObject(tj, "restarts", (double)u->tc->restarts);
  cJSON_AddStringToObject(tj, "method",
                          u->res->nvars == 1 ? "gsl_min_fminimizer_brent"
                                             : "gsl_multimin_fminimizer_nmsimplex2");
}

/* trajectory.tsv and release.tsv: the columns of `compare` (nan simulation columns when the
 * confirmation is skipped); release.tsv adds the optimum for the figure. */
static int tables(dpd_output *out, const dpd__tune_report_spec *u, dpd_err *err) {
  static const char *const traj_names[] = {"t",
                                           "excess_risk",
                                           "excess_risk_se",
                                           "ode_excess_risk",
                                           "ode_lower_bound",
                                           "ode_upper_bound",
                                           "clipped_fraction"};
  static const char *const rel_names[] = {
      "t",         "sim_before", "sim_before_se", "sim_after", "sim_after_se", "ode_before",
      "ode_after", "c",          "eta0"};
  const dpd_linreg_sim_result *sim = u->sim;
  const double one = 1.0, nan_value = NAN;
  const double *traj[] = {u->ode->t,
                          sim ? sim->risk_mean : NULL,
                          sim ? sim->risk_se : NULL,
                          u->ode->risk,
                          u->ode->lower,
                          u->ode->upper,
                          sim ? sim->clip_fraction : NULL};
  const double *rel[] = {&one,
                         sim ? &sim->before_release : &nan_value,
                         sim ? &sim->before_release_se : &nan_value,
                         sim ? &sim->final_risk : &nan_value,
                         sim ? &sim->final_risk_se : &nan_value,
                         &u->ode->before_release,
                         &u->ode->final_risk,
                         &u->res->c,
                         &u->res->eta0};
  dpd_table_builder *b[2] = {NULL, NULL};
  int status = DPD_OK;
  if ((status = dpd_table_builder_create(u->ode->grid, &b[0], err)) < 0 ||
      (status = dpd_table_builder_create(1, &b[1], err)) < 0) {
    dpd_table_builder_free(b[0]);
    return status;
  }
  for (size_t k = 0; k < 7 && status == DPD_OK; k++) {
    double *col = dpd_table_builder_column(b[0], traj_names[k], err);
    for (size_t i = 0; col != NULL && i < u->ode->grid; i++) {
      col[i] = traj[k] != NULL ? traj[k][i] : NAN;
    }
    status = col != NULL ? DPD_OK : DPD_ENOMEM;
  }
  for (size_t k = 0; k < 9 && status == DPD_OK; k++) {
    status = dpd_table_builder_add(b[1], rel_names[k], rel[k], err);
  }
  if (status < 0) {
    dpd_table_builder_free(b[0]);
    dpd_table_builder_free(b[1]);
    return status;
  }
  status = dpd_output_table_add_built(out, "trajectory.tsv", "tune", b[0], err);
  if (status < 0) {
    dpd_table_builder_free(b[1]);
    return status;
  }
  return dpd_output_table_add_built(out, "release.tsv", "tune", b[1], err);
}

/* What a reader sees on stdout, and the warnings. */
static int report(dpd_output *out, const dpd__tune_report_spec *u, const char *const *names,
                  const double *values, size_t n, dpd_err *err) {
  static const char line[] = "%-32s %.10g\n";
  const dpd_tune_result *res = u->res;
  char at_bound[128] = "";
  int status = dpd__output_headline_set(
      out, err, "model linreg, d = %zu, n = %zu, gamma = %g, schedule %s, seed %llu", u->d, u->n,
      u->tc->ode.gamma, dpd_schedule_name(u->schedule), u->seed);
  if (status < 0 || (status = dpd__output_report_add(out, err, line, "c", res->c)) < 0) {
    return status;
  }
  for (size_t k = 0; k < n; k++) {
    dpd__output_report_add(out, err, line, names[k], values[k]);
  }
  dpd__output_report_add(out, err, line, "eta_sup / stability_limit",
                         res->eta_sup / res->eta_limit);
  dpd__output_report_add(out, err, line, "final_excess_risk (ODE)", res->risk);
  dpd__output_report_add(out, err, line, "excess_risk_before_release", res->before_release);
  dpd__output_report_add(out, err, line, "release_jump", res->release_jump);
  if (u->sim != NULL) {
    dpd__output_report_add(out, err, "%-32s %.10g +- %.3g (%zu replicates; gap %.2f SE)\n",
                           "confirm_final_excess_risk", u->sim->final_risk, u->sim->final_risk_se,
                           u->t->confirm_seeds,
                           fabs(res->risk - u->sim->final_risk) / u->sim->final_risk_se);
  }
  if (u->t->heatmap > 0) {
    dpd__output_report_add(out, err, "%-32s %zu of %zu (best grid value %.10g)\n",
                           "heatmap_beating_optimum", u->st->beating, u->st->points, u->st->best);
  }
  dpd__output_report_add(out, err, "%-32s %zu evaluations, %zu iterations, %zu local searches\n",
                         "search", res->evals, res->iterations, res->starts);
  for (size_t k = 0; k < DPD_TUNE_NNAMES; k++) {
    if (res->at_bound & dpd__tune_names[k].flag) {
      strcat(at_bound, " ");
      strcat(at_bound, dpd__tune_names[k].name);
    }
  }
  if (res->at_bound != 0) {
    dpd__output_note_add(out, err,
                         "warning: the optimum lies at the edge of the search box for%s "
                         "(c_min/c_max, the stability limit, or the shape box)",
                         at_bound);
  }
  if (res->ignored & DPD_TUNE_C3) {
    dpd__output_note_add(out, err, "note: c3 has no effect with rho = inf and was not tuned");
  }
  if (u->st->beating > 0) {
    dpd__output_note_add(out, err,
                         "warning: %zu surface points lie below the optimum (best %.10g < %.10g)",
                         u->st->beating, u->st->best, res->risk);
  }
  return DPD_OK;
}

int dpd__tune_report(dpd_output *out, const dpd__tune_report_spec *u, dpd_err *err) {
  const char *names[DPD_TUNE_NNAMES];
  double values[DPD_TUNE_NNAMES];
  const size_t n = dpd__tune_values(u->t->family, &u->res->schedule, names, values);
  int status;
  optimum_summary(out, u, names, values, n);
  result_summary(out, u);
  search_summary(out, u);
  if ((status = tables(out, u, err)) < 0 ||
      (status = dpd__output_figure_set(out, "tune", err)) < 0) {
    return status;
  }
  return report(out, u, names, values, n, err);
}
