/* dpdyn tune: optimise the clipping scale and the schedule on the deterministic equivalent.
 * SPDX-License-Identifier: MIT
 *
 *  1. minimises the ODE's released excess risk R_out over the parameters listed in `tune`
 *     (dpd_tune_run: pre-scan, Brent or Nelder-Mead on box transforms; tune.h),
 *  2. evaluates the risk surface on a heatmap x heatmap grid of (c, eta~(0)) and counts the
 *     grid points below the optimum (a check of the search: there should be none;
 *     tune_surface_impl.h),
 *  3. re-solves the ODE at the optimum and confirms it with `confirm_seeds` replicates of the
 *     DP-SGD simulation (the gaps of compare.h, in standard errors),
 * and returns summary.json, heatmap.tsv (c eta0 excess_risk, one scanline per c separated by
 * blank lines: gnuplot `splot ... with pm3d` ready), trajectory.tsv and release.tsv (the
 * confirmation, with the columns of `compare`; release.tsv adds the optimum's c and eta~(0)),
 * and tune.png (plots/tune.gp). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/compare.h"
#include "linreg/report_impl.h"
#include "linreg/tune_surface_impl.h"
#include "models/linreg/linreg_impl.h"

/* What tune computes beside the optimum. */
typedef struct {
  linreg_run *r;
  dpd_tune_config tc;
  dpd_tune_result res;
  dpd_schedule *schedule; /* the optimum's */
  dpd_ode_result *ode;
  dpd_linreg_sim_result *sim;
  dpd__tune_surface_stats st;
  dpd_output *out;
} lr_tune;

/* JSON array of the parameter names in `mask`. */
static cJSON *names_json(int mask) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; k < LR_NTUNE_NAMES; k++) {
    if (mask & lr_tune_names[k].flag) {
      cJSON_AddItemToArray(a, cJSON_CreateString(lr_tune_names[k].name));
    }
  }
  return a;
}

/* The optimum and the keys of tune as the values in effect (summary params, data headers). */
static int record_keys(const lr_tune *u, dpd_err *err) {
  const char *names[LR_NTUNE_NAMES];
  double values[LR_NTUNE_NAMES];
  const size_t n = dpd__linreg_tuned_values(u->r->tune.family, &u->res.schedule, names, values);
  dpd_keys *keys = u->r->keys;
  int status = dpd_keys_effective_real_set(keys, "c", u->res.c, NULL);
  for (size_t k = 0; k < n && status == DPD_OK; k++) {
    status = dpd_keys_effective_real_set(keys, names[k], values[k], NULL);
  }
  if (status < 0 ||
      (status = dpd_keys_effective_real_set(keys, "c_min", u->r->tune.c_min, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "c_max", u->r->tune.c_max, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "heatmap", (double)u->r->tune.heatmap, err)) <
          0) {
    return status;
  }
  return dpd_keys_effective_real_set(keys, "confirm_seeds", (double)u->r->tune.confirm_seeds,
                                     err);
}

/* heatmap.tsv: the surface, one scanline per c (eta~(0) varying). */
static int surface_table(lr_tune *u, dpd_err *err) {
  const size_t n = u->r->tune.heatmap;
  double *c = malloc(n * sizeof *c), *eta = malloc(n * sizeof *eta);
  double *cc = NULL, *ee = NULL, *risk = NULL;
  dpd_table_builder *b = NULL;
  int status = c == NULL || eta == NULL ? DPD_FAIL(err, DPD_ENOMEM, "out of memory") : DPD_OK;
  if (status == DPD_OK && (status = dpd_table_builder_create(n * n, &b, err)) == DPD_OK &&
      ((cc = dpd_table_builder_column(b, "c", err)) == NULL ||
       (ee = dpd_table_builder_column(b, "eta0", err)) == NULL ||
       (risk = dpd_table_builder_column(b, "excess_risk", err)) == NULL)) {
    status = DPD_ENOMEM;
  }
  if (status == DPD_OK &&
      (status = dpd__tune_surface(u->r->ode_problem, &u->tc, &u->res, n, u->r->tune.c_min,
                                  u->r->tune.c_max, u->r->tune.eta_log, c, eta, risk, &u->st,
                                  err)) == DPD_OK) {
    for (size_t k = 0; k < n * n; k++) {
      cc[k] = c[k / n];
      ee[k] = eta[k % n];
    }
    status = dpd_output_table_add_built(u->out, "heatmap.tsv", "tune", b, err);
    b = NULL;
  }
  if (status == DPD_OK) {
    u->out->tables[u->out->ntables - 1].block = n;
    status = dpd__output_table_comment_set(
        u->out,
        "eta0 is eta~(0); the other schedule parameters are at the optimum. R_out of the ODE; "
        "nan = ODE failure",
        err);
  }
  dpd_table_builder_free(b);
  free(c);
  free(eta);
  return status;
}

/* The ODE at the optimum (with bounds) and the confirming simulation. */
static int confirm(lr_tune *u, dpd_err *err) {
  dpd_ode_config oc = u->tc.ode;
  dpd_linreg_sim_config simc = dpd__linreg_sim_config(u->r);
  int status;
  oc.c = u->res.c;
  oc.bounds = 1;
  simc.c = u->res.c;
  simc.seeds = u->r->tune.confirm_seeds;
  if ((status = dpd_schedule_create(&u->res.schedule, &u->schedule, err)) < 0 ||
      (status = dpd_ode_solve(u->r->ode_problem, u->schedule, &oc, &u->ode, err)) < 0 ||
      simc.seeds == 0) {
    return status;
  }
  return dpd_linreg_sim_run(u->r->problem, u->schedule, &simc, &u->sim, err);
}

/* The optimum: the parameters, eta~ at 0 and 1, sup eta~ and the limit. */
static void optimum_summary(const lr_tune *u, const char *const *names, const double *values,
                            size_t n) {
  cJSON *opt;
  cJSON_AddItemToObject(u->out->summary, "tuned", names_json(u->res.params));
  cJSON_AddItemToObject(u->out->summary, "ignored", names_json(u->res.ignored));
  cJSON_AddItemToObject(u->out->summary, "at_bound", names_json(u->res.at_bound));
  opt = cJSON_AddObjectToObject(u->out->summary, "optimum");
  dpd__json_number(opt, "c", u->res.c);
  for (size_t k = 0; k < n; k++) {
    dpd__json_number(opt, names[k], values[k]);
  }
  if (u->res.offset_scale > 0.0) { /* the optimal family's m = max(c2, c3/rho) */
    dpd__json_number(opt, "offset_scale", u->res.offset_scale);
  }
  dpd__json_number(opt, "eta_at_0", u->res.eta0);
  dpd__json_number(opt, "eta_at_1", dpd_schedule_eval(u->schedule, 1.0));
  dpd__json_number(opt, "eta_sup", u->res.eta_sup);
  dpd__json_number(opt, "stability_limit", u->res.eta_limit);
}

/* The risk at the optimum, the confirmation (gaps of compare.h) and the surface's check. */
static void result_summary(const lr_tune *u) {
  dpd_output *out = u->out;
  const dpd_linreg_problem *p = u->r->ode_problem;
  const size_t g = u->ode->grid;
  dpd_output_number_set(out, "final_excess_risk", u->res.risk);
  dpd_output_number_set(out, "final_excess_risk_se", 0.0);
  dpd_output_number_set(out, "excess_risk_before_release", u->res.before_release);
  dpd_output_number_set(out, "release_jump", u->res.release_jump);
  dpd_output_number_set(out, "lower_bound_before_release", u->ode->lower[g - 1]);
  dpd_output_number_set(out, "upper_bound_before_release", u->ode->upper[g - 1]);
  cJSON_AddNumberToObject(out->summary, "confirm_seeds", (double)u->r->tune.confirm_seeds);
  cJSON_AddNumberToObject(out->summary, "ode_groups", (double)p->ngroups);
  cJSON_AddBoolToObject(out->summary, "compressed", p->compressed_bands > 0);
  if (u->sim != NULL) {
    dpd_gap_stats gap;
    dpd_gap_measure(u->ode->risk, u->sim->risk_mean, u->sim->risk_se, g, u->res.risk,
                    u->sim->final_risk, u->sim->final_risk_se, NULL, &gap);
    dpd_output_number_set(out, "confirm_final_excess_risk", u->sim->final_risk);
    dpd_output_number_set(out, "confirm_final_excess_risk_se", u->sim->final_risk_se);
    dpd_output_number_set(out, "confirm_gap", gap.final_gap);
    dpd_output_number_set(out, "confirm_gap_in_se", gap.final_gap_in_se);
    dpd_output_number_set(out, "confirm_sup_gap", gap.sup_gap);
    dpd_output_number_set(out, "confirm_sup_gap_in_se", gap.sup_gap_in_se);
    dpd_output_number_set(out, "clipped_fraction", u->sim->clip_fraction_total);
  }
  cJSON_AddNumberToObject(out->summary, "heatmap", (double)u->r->tune.heatmap);
  if (u->r->tune.heatmap > 0) {
    cJSON_AddStringToObject(out->summary, "heatmap_eta", u->r->tune.eta_log ? "log" : "linear");
    cJSON_AddNumberToObject(out->summary, "heatmap_points", (double)u->st.points);
    cJSON_AddNumberToObject(out->summary, "heatmap_failed", (double)u->st.failed);
    cJSON_AddNumberToObject(out->summary, "heatmap_beating_optimum", (double)u->st.beating);
    dpd_output_number_set(out, "heatmap_best_excess_risk", u->st.best);
    dpd_output_number_set(out, "heatmap_best_c", u->st.best_c);
    dpd_output_number_set(out, "heatmap_best_eta0", u->st.best_eta);
  }
}

/* The search: its counts and the tuner's settings. */
static void search_summary(const lr_tune *u) {
  const dpd_tune_config def = dpd_tune_config_default();
  cJSON *s = u->out->summary, *tj;
  cJSON_AddNumberToObject(s, "iterations", (double)u->res.iterations);
  cJSON_AddNumberToObject(s, "evaluations", (double)u->res.evals);
  cJSON_AddNumberToObject(s, "failed_evaluations", (double)u->res.failed_evals);
  cJSON_AddNumberToObject(s, "local_searches", (double)u->res.starts);
  cJSON_AddBoolToObject(s, "converged", u->res.converged);
  dpd_output_number_set(u->out, "start_spread", u->res.start_spread);
  dpd_output_number_set(u->out, "prescan_best", u->res.prescan_best);
  tj = cJSON_AddObjectToObject(s, "tuner");
  dpd__json_number(tj, "safety", def.safety);
  dpd__json_number(tj, "eta_min_fraction", def.eta_min_fraction);
  dpd__json_number(tj, "shape_min", def.shape_min);
  dpd__json_number(tj, "shape_max", def.shape_max);
  cJSON_AddNumberToObject(tj, "prescan", (double)def.prescan);
  cJSON_AddNumberToObject(tj, "starts", (double)def.starts);
  dpd__json_number(tj, "xtol", u->tc.xtol);
  cJSON_AddNumberToObject(tj, "max_iter", (double)def.max_iter);
  cJSON_AddNumberToObject(tj, "restarts", (double)u->tc.restarts);
  cJSON_AddStringToObject(tj, "method", u->res.nvars == 1 ? "gsl_min_fminimizer_brent"
                                                          : "gsl_multimin_fminimizer_nmsimplex2");
}

/* trajectory.tsv and release.tsv: the columns of `compare` (nan simulation columns when the
 * confirmation is skipped); release.tsv adds the optimum for the figure. */
static int tables(const lr_tune *u, dpd_err *err) {
  static const char *const traj_names[] = {"t", "excess_risk", "excess_risk_se", "ode_excess_risk",
                                           "ode_lower_bound", "ode_upper_bound",
                                           "clipped_fraction"};
  static const char *const rel_names[] = {"t",         "sim_before", "sim_before_se", "sim_after",
                                          "sim_after_se", "ode_before", "ode_after",   "c",
                                          "eta0"};
  const dpd_linreg_sim_result *sim = u->sim;
  const double one = 1.0, nan_value = NAN;
  const double *traj[] = {u->ode->t,  sim ? sim->risk_mean : NULL, sim ? sim->risk_se : NULL,
                          u->ode->risk, u->ode->lower, u->ode->upper,
                          sim ? sim->clip_fraction : NULL};
  const double *rel[] = {&one, sim ? &sim->before_release : &nan_value,
                         sim ? &sim->before_release_se : &nan_value,
                         sim ? &sim->final_risk : &nan_value,
                         sim ? &sim->final_risk_se : &nan_value, &u->ode->before_release,
                         &u->ode->final_risk, &u->res.c, &u->res.eta0};
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
  status = dpd_output_table_add_built(u->out, "trajectory.tsv", "tune", b[0], err);
  if (status < 0) {
    dpd_table_builder_free(b[1]);
    return status;
  }
  return dpd_output_table_add_built(u->out, "release.tsv", "tune", b[1], err);
}

/* What a reader sees on stdout, and the warnings. */
static int report(const lr_tune *u, const char *const *names, const double *values, size_t n,
                  dpd_err *err) {
  static const char line[] = "%-32s %.10g\n";
  const dpd_tune_result *res = &u->res;
  dpd_output *out = u->out;
  char at_bound[128] = "";
  int status = dpd__output_headline_set(
      out, err, "model linreg, d = %zu, n = %zu, gamma = %g, schedule %s, seed %llu", u->r->d,
      u->r->n, u->tc.ode.gamma, dpd_schedule_name(u->schedule), (unsigned long long)u->r->seed);
  if (status < 0 || (status = dpd__output_report_add(out, err, line, "c", res->c)) < 0) {
    return status;
  }
  for (size_t k = 0; k < n; k++) {
    dpd__output_report_add(out, err, line, names[k], values[k]);
  }
  dpd__output_report_add(out, err, line, "eta_sup / stability_limit", res->eta_sup / res->eta_limit);
  dpd__output_report_add(out, err, line, "final_excess_risk (ODE)", res->risk);
  dpd__output_report_add(out, err, line, "excess_risk_before_release", res->before_release);
  dpd__output_report_add(out, err, line, "release_jump", res->release_jump);
  if (u->sim != NULL) {
    dpd__output_report_add(out, err, "%-32s %.10g +- %.3g (%zu replicates; gap %.2f SE)\n",
                           "confirm_final_excess_risk", u->sim->final_risk, u->sim->final_risk_se,
                           u->r->tune.confirm_seeds,
                           fabs(res->risk - u->sim->final_risk) / u->sim->final_risk_se);
  }
  if (u->r->tune.heatmap > 0) {
    dpd__output_report_add(out, err, "%-32s %zu of %zu (best grid value %.10g)\n",
                           "heatmap_beating_optimum", u->st.beating, u->st.points, u->st.best);
  }
  dpd__output_report_add(out, err, "%-32s %zu evaluations, %zu iterations, %zu local searches\n",
                         "search", res->evals, res->iterations, res->starts);
  for (size_t k = 0; k < LR_NTUNE_NAMES; k++) {
    if (res->at_bound & lr_tune_names[k].flag) {
      strcat(at_bound, " ");
      strcat(at_bound, lr_tune_names[k].name);
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
  if (u->st.beating > 0) {
    dpd__output_note_add(out, err,
                         "warning: %zu surface points lie below the optimum (best %.10g < %.10g)",
                         u->st.beating, u->st.best, res->risk);
  }
  return DPD_OK;
}

int dpd__linreg_tune(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **outp,
                     dpd_err *err) {
  lr_tune u = {.r = ctx};
  dpd__progress_bridge solves = {env, "ODE solves"};
  const char *names[LR_NTUNE_NAMES];
  double values[LR_NTUNE_NAMES];
  size_t n = 0;
  int status;
  u.tc = dpd_tune_config_default();
  u.tc.params = u.r->tune.mask;
  u.tc.c_min = u.r->tune.c_min;
  u.tc.c_max = u.r->tune.c_max;
  u.tc.xtol = u.r->tune.xtol;
  u.tc.restarts = u.r->tune.restarts;
  u.tc.ode = dpd__linreg_ode_config(u.r);
  u.tc.threads = u.r->threads;
  u.tc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  u.tc.progress_user = &solves;
  if ((status = dpd__linreg_build(u.r, err)) == DPD_OK &&
      (status = dpd_tune_run(u.r->ode_problem, &u.r->schedule_cfg, &u.tc, &u.res, err)) == DPD_OK &&
      (status = record_keys(&u, err)) == DPD_OK &&
      (status = dpd__linreg_output_begin(keys, u.r, &u.out, err)) == DPD_OK &&
      (status = dpd__linreg_report_finite_size(u.out, u.r->ode_problem, &u.tc.ode, err)) == DPD_OK &&
      (u.r->tune.heatmap == 0 || (status = surface_table(&u, err)) == DPD_OK) &&
      (status = confirm(&u, err)) == DPD_OK) {
    n = dpd__linreg_tuned_values(u.r->tune.family, &u.res.schedule, names, values);
    optimum_summary(&u, names, values, n);
    result_summary(&u);
    search_summary(&u);
    if ((status = tables(&u, err)) == DPD_OK &&
        (status = dpd__output_figure_set(u.out, "tune", err)) == DPD_OK) {
      status = report(&u, names, values, n, err);
    }
  }
  dpd_linreg_sim_result_free(u.sim);
  dpd_ode_result_free(u.ode);
  dpd_schedule_free(u.schedule);
  if (status < 0) {
    dpd_output_free(u.out);
    u.out = NULL;
  }
  *outp = u.out;
  return status;
}
