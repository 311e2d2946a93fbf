/* dpdyn tune: optimise the clipping scale and the schedule on the deterministic equivalent.
 * SPDX-License-Identifier: MIT
 *
 * Validates every key before anything runs or is written, then
 *  1. minimises the ODE's released excess risk R_out over the parameters listed in `tune`
 *     (dpd_tune_run: pre-scan, Brent or Nelder-Mead on box transforms; tune.h),
 *  2. evaluates the risk surface on a heatmap x heatmap grid of (c, eta~(0)), the other
 *     schedule parameters at the optimum (c log-spaced on [c_min, c_max]; eta~(0) log- or
 *     linearly spaced up to the stability limit with the tuner's safety factor), and counts the
 *     grid points below the optimum (a check of the search: there should be none),
 *  3. re-solves the ODE at the optimum and confirms it with `confirm_seeds` replicates of the
 *     DP-SGD simulation (the gap in standard errors),
 * and returns summary.json, heatmap.tsv (c eta0 excess_risk, one scanline per c separated by
 * blank lines: gnuplot `splot ... with pm3d` ready), trajectory.tsv and release.tsv (the
 * confirmation, with the columns of `compare`; release.tsv adds the optimum's c and eta~(0)),
 * and tune.png (plots/tune.gp). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "models/linreg/linreg_impl.h"

/* Defaults of the tune keys (their table entries carry no default so that other commands'
 * headers stay unchanged). */
static const double tune_c_min_default = 0.01;
static const double tune_c_max_default = 100.0;
static const size_t tune_heatmap_default = 41;
static const size_t tune_confirm_seeds_default = 64;
static const size_t tune_heatmap_max = 1001;
/* Lower end of a log eta~(0) axis: eta_max * 1e-2, or the optimum / 10 if lower. */
static const double heatmap_eta_decades = 1e-2;
static const double heatmap_eta_below_opt = 0.1;

typedef struct {
  const char *name;
  int flag;
} tune_name;

static const tune_name tune_names[] = {{"c", DPD_TUNE_C},   {"eta0", DPD_TUNE_ETA0},
                                       {"a", DPD_TUNE_A},   {"c1", DPD_TUNE_C1},
                                       {"c2", DPD_TUNE_C2}, {"c3", DPD_TUNE_C3}};
enum { NTUNE_NAMES = sizeof tune_names / sizeof tune_names[0] };

typedef struct {
  dpd_schedule_kind kind;
  const char *allowed; /* for messages */
  int params;          /* parameters of the family */
} family_info;

static int family_of(const char *name, family_info *f, dpd_err *err) {
  if (strcmp(name, "const") == 0 || strcmp(name, "sqrt") == 0 || strcmp(name, "step") == 0 ||
      strcmp(name, "cosine") == 0) {
    f->kind = strcmp(name, "const") == 0  ? DPD_SCHEDULE_CONST
              : strcmp(name, "sqrt") == 0 ? DPD_SCHEDULE_SQRT
              : strcmp(name, "step") == 0 ? DPD_SCHEDULE_STEP
                                          : DPD_SCHEDULE_COSINE;
    f->allowed = "c, eta0";
    f->params = DPD_TUNE_C | DPD_TUNE_ETA0;
  } else if (strcmp(name, "hyperbolic") == 0) {
    f->kind = DPD_SCHEDULE_HYPERBOLIC;
    f->allowed = "c, eta0, a";
    f->params = DPD_TUNE_C | DPD_TUNE_ETA0 | DPD_TUNE_A;
  } else if (strcmp(name, "optimal") == 0) {
    f->kind = DPD_SCHEDULE_OPTIMAL;
    f->allowed = "c, c1, c2, c3";
    f->params = DPD_TUNE_C | DPD_TUNE_C1 | DPD_TUNE_C2 | DPD_TUNE_C3;
  } else {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': '%s' (allowed with tune: const, sqrt, "
                    "hyperbolic, optimal, step, cosine)",
                    name);
  }
  return DPD_OK;
}

/* Parses the comma list of `tune` (names of the family's parameters, no repeats). */
static int parse_tune_list(const char *text, const char *schedule, const family_info *f, int *mask,
                           dpd_err *err) {
  const char *s = text;
  *mask = 0;
  for (;;) {
    size_t len = strcspn(s, ",");
    int flag = 0;
    for (size_t k = 0; k < NTUNE_NAMES; k++) {
      if (strlen(tune_names[k].name) == len && strncmp(s, tune_names[k].name, len) == 0) {
        flag = tune_names[k].flag;
      }
    }
    if (flag == 0 || (flag & f->params) == 0 || (flag & *mask) != 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'tune': '%s' (allowed: a comma list without repeats of "
                      "%s for schedule %s)",
                      text, f->allowed, schedule);
    }
    *mask |= flag;
    if (s[len] == '\0') {
      break;
    }
    s += len + 1;
  }
  return DPD_OK;
}

typedef struct {
  int mask;
  double c_min, c_max;
  size_t heatmap, confirm_seeds, restarts;
  double xtol;
  int eta_log;
  int plot;
} tune_options;

/* Validates the tune keys (before the linreg set-up, which they influence). */
static int parse_options(dpd_keys *keys, tune_options *t, family_info *f, dpd_err *err) {
  const char *schedule = dpd_keys_text_get(keys, "schedule");
  const char *eta_axis = dpd_keys_text_get(keys, "heatmap_eta");
  int status;
  if ((status = family_of(schedule, f, err)) < 0) {
    return status;
  }
  if (dpd_keys_given(keys, "tune")) {
    if ((status = parse_tune_list(dpd_keys_text_get(keys, "tune"), schedule, f, &t->mask, err)) <
        0) {
      return status;
    }
  } else {
    t->mask = dpd_tune_params_get(f->kind);
  }
  t->c_min = tune_c_min_default;
  t->c_max = tune_c_max_default;
  if (dpd_keys_given(keys, "c_min") &&
      (status = dpd_keys_real_range_get(keys, "c_min", 0.0, 0, INFINITY, 0, 0, &t->c_min, err)) <
          0) {
    return status;
  }
  if (dpd_keys_given(keys, "c_max") &&
      (status = dpd_keys_real_range_get(keys, "c_max", t->c_min, 0, INFINITY, 0, 0, &t->c_max,
                                        err)) < 0) {
    return status;
  }
  if (!(t->c_max > t->c_min)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c_min': %g (allowed: c_min < c_max = %g)",
                    t->c_min, t->c_max);
  }
  t->heatmap = tune_heatmap_default;
  if (dpd_keys_given(keys, "heatmap")) {
    if ((status = dpd_keys_size_range_get(keys, "heatmap", 0, tune_heatmap_max, &t->heatmap, err)) <
        0) {
      return status;
    }
    if (t->heatmap == 1) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'heatmap': 1 (allowed: 0 = none, or 2 <= heatmap <= %zu)",
                      tune_heatmap_max);
    }
  }
  t->eta_log = 1;
  if (eta_axis != NULL) {
    if (strcmp(eta_axis, "log") != 0 && strcmp(eta_axis, "linear") != 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'heatmap_eta': '%s' (allowed: log, linear)", eta_axis);
    }
    t->eta_log = strcmp(eta_axis, "log") == 0;
  }
  t->confirm_seeds = tune_confirm_seeds_default;
  if (dpd_keys_given(keys, "confirm_seeds") &&
      (status = dpd_keys_size_range_get(keys, "confirm_seeds", 0, (size_t)1 << 24,
                                        &t->confirm_seeds, err)) < 0) {
    return status;
  }
  {
    const dpd_tune_config def = dpd_tune_config_default();
    t->xtol = def.xtol;
    t->restarts = def.restarts;
  }
  if (dpd_keys_given(keys, "xtol") &&
      (status = dpd_keys_real_range_get(keys, "xtol", 0.0, 0, 1.0, 0, 0, &t->xtol, err)) < 0) {
    return status;
  }
  if (dpd_keys_given(keys, "restarts") &&
      (status = dpd_keys_size_range_get(keys, "restarts", 0, 100, &t->restarts, err)) < 0) {
    return status;
  }
  t->plot = 1;
  if (dpd_keys_given(keys, "plot")) {
    size_t v;
    if ((status = dpd_keys_size_range_get(keys, "plot", 0, 1, &v, err)) < 0) {
      return status;
    }
    t->plot = (int)v;
  }
  /* A tuned c needs no value; a finite placeholder lets the linreg set-up accept finite rho. */
  if ((t->mask & DPD_TUNE_C) && !dpd_keys_given(keys, "c") &&
      dpd_keys_effective_real_set(keys, "c", sqrt(t->c_min * t->c_max), NULL) < 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

/* JSON array of the parameter names in `mask`. */
static cJSON *names_json(int mask) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; k < NTUNE_NAMES; k++) {
    if (mask & tune_names[k].flag) {
      cJSON_AddItemToArray(a, cJSON_CreateString(tune_names[k].name));
    }
  }
  return a;
}

/* Records the optimum in the parameters in effect (summary params, data headers). */
static int set_optimum_params(dpd_keys *keys, const dpd_tune_result *res) {
  const dpd_schedule_config *sc = &res->schedule;
  int status = dpd_keys_effective_real_set(keys, "c", res->c, NULL);
  if (sc->kind == DPD_SCHEDULE_OPTIMAL) {
    if (status == DPD_OK) {
      status = dpd_keys_effective_real_set(keys, "c1", sc->c1, NULL);
    }
    if (status == DPD_OK) {
      status = dpd_keys_effective_real_set(keys, "c2", sc->c2, NULL);
    }
    if (status == DPD_OK) {
      status = dpd_keys_effective_real_set(keys, "c3", sc->c3, NULL);
    }
  } else {
    if (status == DPD_OK) {
      status = dpd_keys_effective_real_set(keys, "eta0", sc->eta0, NULL);
    }
    if (status == DPD_OK && sc->kind == DPD_SCHEDULE_HYPERBOLIC) {
      status = dpd_keys_effective_real_set(keys, "a", sc->a, NULL);
    }
  }
  return status;
}

typedef struct {
  size_t points, failed, beating;
  double best, best_c, best_eta;
} surface_stats;

/* The (c, eta~(0)) surface as heatmap.tsv: one scanline per c (eta~(0) varying), blank lines
 * between scanlines (gnuplot `splot ... with pm3d` ready). */
static int run_surface(const dpd_linreg_problem *problem, const dpd_tune_config *tc,
                       const dpd_tune_result *res, const tune_options *t, dpd_output *out,
                       surface_stats *st, dpd_err *err) {
  size_t n = t->heatmap;
  double *c = malloc(n * sizeof *c), *eta = malloc(n * sizeof *eta);
  double *risk = malloc(n * n * sizeof *risk);
  dpd_tune_grid grid;
  double eta_max;
  int status;
  memset(st, 0, sizeof *st);
  st->best = INFINITY;
  if (c == NULL || eta == NULL || risk == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory for a %zu x %zu surface", n, n);
    goto done;
  }
  if ((status = dpd_tune_eta0_max_get(&res->schedule, tc, &eta_max, err)) < 0) {
    goto done;
  }
  grid.nc = n;
  grid.neta = n;
  grid.c_min = t->c_min;
  grid.c_max = t->c_max;
  grid.eta_max = eta_max;
  if (t->eta_log) {
    /* Two decades below the limit, or one below the optimum if that is lower, never below the
     * tuner's own box (so that every grid point is a point the tuner could have chosen). */
    grid.eta_min = fmin(eta_max * heatmap_eta_decades, res->eta0 * heatmap_eta_below_opt);
    grid.eta_min = fmax(grid.eta_min, eta_max * tc->eta_min_fraction);
  } else {
    grid.eta_min = eta_max / (double)n;
  }
  grid.eta_log = t->eta_log;
  if ((status = dpd_tune_surface_eval(problem, &res->schedule, tc, &grid, c, eta, risk, &st->failed,
                                      err)) < 0) {
    goto done;
  }
  st->points = n * n;
  for (size_t k = 0; k < n * n; k++) {
    if (risk[k] < st->best) {
      st->best = risk[k];
      st->best_c = c[k / n];
      st->best_eta = eta[k % n];
    }
    st->beating += risk[k] < res->risk;
  }
  {
    double *cc = malloc(n * n * sizeof *cc), *ee = malloc(n * n * sizeof *ee);
    const double *cols[3] = {cc, ee, risk};
    if (cc == NULL || ee == NULL) {
      free(cc);
      free(ee);
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      goto done;
    }
    for (size_t k = 0; k < n * n; k++) {
      cc[k] = c[k / n];
      ee[k] = eta[k % n];
    }
    status =
        dpd_output_table_add(out, "heatmap.tsv", "tune", "c eta0 excess_risk", n * n, 3, cols, err);
    free(cc);
    free(ee);
    if (status == DPD_OK) {
      out->tables[out->ntables - 1].block = n;
      status = dpd__output_table_comment_set(
          out,
          "eta0 is eta~(0); the other schedule parameters are at the optimum. R_out of the ODE; "
          "nan = ODE failure",
          err);
    }
  }
done:
  free(c);
  free(eta);
  free(risk);
  return status;
}

static int report_line(dpd_output *out, const char *key, double v, dpd_err *err) {
  return dpd__output_report_add(out, err, "%-32s %.10g\n", key, v);
}

int dpd__linreg_tune(dpd_keys *keys, const dpd_run_env *env, dpd_output **outp, dpd_err *err) {
  tune_options t;
  family_info fam = {DPD_SCHEDULE_CONST, "", 0};
  linreg_run *run = NULL;
  dpd_tune_config tc;
  dpd_tune_result res;
  dpd_schedule *schedule = NULL;
  dpd_ode_result *ode = NULL;
  dpd_linreg_sim_result *sim = NULL;
  dpd_linreg_sim_config simc;
  surface_stats st;
  dpd_output *out = NULL;
  cJSON *opt;
  double *sim_traj = NULL;
  int status;
  size_t g;
  dpd__progress_bridge solves = {env, "ODE solves"};

  *outp = NULL;
  memset(&st, 0, sizeof st);
  if ((status = parse_options(keys, &t, &fam, err)) < 0 ||
      (status = dpd__linreg_setup(keys, env, 0, &run, err)) < 0 ||
      (status = dpd__model_validated(env, err)) != 0 ||
      (status = dpd__linreg_build(keys, run, err)) < 0) {
    dpd__linreg_free(run);
    return status < 0 ? status : DPD_OK;
  }
  tc = dpd_tune_config_default();
  tc.params = t.mask;
  tc.c_min = t.c_min;
  tc.c_max = t.c_max;
  tc.xtol = t.xtol;
  tc.restarts = t.restarts;
  tc.ode = dpd__linreg_ode_config(run);
  simc = dpd__linreg_sim_config(run);
  tc.threads = simc.threads;
  tc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  tc.progress_user = &solves;

  /* 1. The optimum. */
  if ((status = dpd_tune_run(dpd__linreg_ode_problem(run), dpd__linreg_schedule_config(run), &tc,
                             &res, err)) < 0) {
    goto done;
  }
  if ((status = set_optimum_params(keys, &res)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "c_min", t.c_min, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "c_max", t.c_max, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "heatmap", (double)t.heatmap, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "confirm_seeds", (double)t.confirm_seeds, err)) <
          0 ||
      (status = dpd__linreg_output_begin(keys, run, &out, err)) < 0 ||
      (status = dpd__linreg_finite_size_report(out, run, err)) < 0) {
    goto done;
  }
  out->plot = t.plot;

  /* 2. The surface. */
  if (t.heatmap > 0 &&
      (status = run_surface(dpd__linreg_ode_problem(run), &tc, &res, &t, out, &st, err)) < 0) {
    goto done;
  }

  /* 3. The confirmation: the ODE trajectory at the optimum (with bounds) and the simulation. */
  if ((status = dpd_schedule_create(&res.schedule, &schedule, err)) < 0) {
    goto done;
  }
  {
    dpd_ode_config oc = tc.ode;
    oc.c = res.c;
    oc.bounds = 1;
    if ((status = dpd_ode_solve(dpd__linreg_ode_problem(run), schedule, &oc, &ode, err)) < 0) {
      goto done;
    }
  }
  g = ode->grid;
  sim_traj = malloc(g * sizeof *sim_traj);
  if (sim_traj == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    goto done;
  }
  if (t.confirm_seeds > 0) {
    simc.c = res.c;
    simc.seeds = t.confirm_seeds;
    if ((status = dpd_linreg_sim_run(dpd__linreg_problem(run), schedule, &simc, &sim, err)) < 0) {
      goto done;
    }
    /* Before release at t = 1, as the ODE's risk (the release convention of linreg.h). */
    memcpy(sim_traj, sim->risk_mean, g * sizeof *sim_traj);
  }

  cJSON_AddItemToObject(out->summary, "tuned", names_json(res.params));
  cJSON_AddItemToObject(out->summary, "ignored", names_json(res.ignored));
  cJSON_AddItemToObject(out->summary, "at_bound", names_json(res.at_bound));
  opt = cJSON_AddObjectToObject(out->summary, "optimum");
  dpd__json_number(opt, "c", res.c);
  if (res.schedule.kind == DPD_SCHEDULE_OPTIMAL) {
    dpd__json_number(opt, "c1", res.schedule.c1);
    dpd__json_number(opt, "c2", res.schedule.c2);
    dpd__json_number(opt, "c3", res.schedule.c3);
    dpd__json_number(opt, "offset_scale", res.offset_scale);
  } else {
    dpd__json_number(opt, "eta0", res.schedule.eta0);
    if (res.schedule.kind == DPD_SCHEDULE_HYPERBOLIC) {
      dpd__json_number(opt, "a", res.schedule.a);
    }
  }
  dpd__json_number(opt, "eta_at_0", res.eta0);
  dpd__json_number(opt, "eta_at_1", dpd_schedule_eval(schedule, 1.0));
  dpd__json_number(opt, "eta_sup", res.eta_sup);
  dpd__json_number(opt, "stability_limit", res.eta_limit);
  dpd_output_number_set(out, "final_excess_risk", res.risk);
  dpd_output_number_set(out, "final_excess_risk_se", 0.0);
  dpd_output_number_set(out, "excess_risk_before_release", res.before_release);
  dpd_output_number_set(out, "release_jump", res.release_jump);
  dpd_output_number_set(out, "lower_bound_before_release", ode->lower[g - 1]);
  dpd_output_number_set(out, "upper_bound_before_release", ode->upper[g - 1]);
  cJSON_AddNumberToObject(out->summary, "confirm_seeds", (double)t.confirm_seeds);
  cJSON_AddNumberToObject(out->summary, "ode_groups",
                          (double)dpd__linreg_ode_problem(run)->ngroups);
  cJSON_AddBoolToObject(out->summary, "compressed",
                        dpd__linreg_ode_problem(run)->compressed_bands > 0);
  if (sim != NULL) {
    double gap = fabs(res.risk - sim->final_risk);
    double sup_gap = 0.0, sup_gap_se = 0.0;
    for (size_t j = 0; j < g; j++) {
      double d = fabs(ode->risk[j] - sim_traj[j]);
      double se = sim->risk_se[j];
      sup_gap = fmax(sup_gap, d);
      if (se > 0.0) {
        sup_gap_se = fmax(sup_gap_se, d / se);
      }
    }
    dpd_output_number_set(out, "confirm_final_excess_risk", sim->final_risk);
    dpd_output_number_set(out, "confirm_final_excess_risk_se", sim->final_risk_se);
    dpd_output_number_set(out, "confirm_gap", gap);
    dpd_output_number_set(out, "confirm_gap_in_se",
                          sim->final_risk_se > 0.0 ? gap / sim->final_risk_se : INFINITY);
    dpd_output_number_set(out, "confirm_sup_gap", sup_gap);
    dpd_output_number_set(out, "confirm_sup_gap_in_se", sup_gap_se);
    dpd_output_number_set(out, "clipped_fraction", sim->clip_fraction_total);
  }
  cJSON_AddNumberToObject(out->summary, "heatmap", (double)t.heatmap);
  if (t.heatmap > 0) {
    cJSON_AddStringToObject(out->summary, "heatmap_eta", t.eta_log ? "log" : "linear");
    cJSON_AddNumberToObject(out->summary, "heatmap_points", (double)st.points);
    cJSON_AddNumberToObject(out->summary, "heatmap_failed", (double)st.failed);
    cJSON_AddNumberToObject(out->summary, "heatmap_beating_optimum", (double)st.beating);
    dpd_output_number_set(out, "heatmap_best_excess_risk", st.best);
    dpd_output_number_set(out, "heatmap_best_c", st.best_c);
    dpd_output_number_set(out, "heatmap_best_eta0", st.best_eta);
  }
  cJSON_AddNumberToObject(out->summary, "iterations", (double)res.iterations);
  cJSON_AddNumberToObject(out->summary, "evaluations", (double)res.evals);
  cJSON_AddNumberToObject(out->summary, "failed_evaluations", (double)res.failed_evals);
  cJSON_AddNumberToObject(out->summary, "local_searches", (double)res.starts);
  cJSON_AddBoolToObject(out->summary, "converged", res.converged);
  dpd_output_number_set(out, "start_spread", res.start_spread);
  dpd_output_number_set(out, "prescan_best", res.prescan_best);
  {
    dpd_tune_config def = dpd_tune_config_default();
    cJSON *tj = cJSON_AddObjectToObject(out->summary, "tuner");
    dpd__json_number(tj, "safety", def.safety);
    dpd__json_number(tj, "eta_min_fraction", def.eta_min_fraction);
    dpd__json_number(tj, "shape_min", def.shape_min);
    dpd__json_number(tj, "shape_max", def.shape_max);
    cJSON_AddNumberToObject(tj, "prescan", (double)def.prescan);
    cJSON_AddNumberToObject(tj, "starts", (double)def.starts);
    dpd__json_number(tj, "xtol", tc.xtol);
    cJSON_AddNumberToObject(tj, "max_iter", (double)def.max_iter);
    cJSON_AddNumberToObject(tj, "restarts", (double)tc.restarts);
    cJSON_AddStringToObject(tj, "method",
                            res.nvars == 1 ? "gsl_min_fminimizer_brent"
                                           : "gsl_multimin_fminimizer_nmsimplex2");
  }

  /* trajectory.tsv and release.tsv: the columns of `compare` (NAN simulation columns when the
   * confirmation is skipped); release.tsv adds the optimum for the figure. */
  if (sim == NULL) {
    for (size_t j = 0; j < g; j++) {
      sim_traj[j] = NAN;
    }
  }
  {
    const double *se = sim != NULL ? sim->risk_se : sim_traj;
    const double *cf = sim != NULL ? sim->clip_fraction : sim_traj;
    const double *cols[] = {ode->t, sim_traj, se, ode->risk, ode->lower, ode->upper, cf};
    double one = 1.0;
    double sb = sim != NULL ? sim->before_release : NAN;
    double sbs = sim != NULL ? sim->before_release_se : NAN;
    double sa = sim != NULL ? sim->final_risk : NAN;
    double sas = sim != NULL ? sim->final_risk_se : NAN;
    const double *rel[] = {
        &one, &sb, &sbs, &sa, &sas, &ode->before_release, &ode->final_risk, &res.c, &res.eta0};
    if ((status = dpd_output_table_add(out, "trajectory.tsv", "tune",
                                       "t excess_risk excess_risk_se ode_excess_risk "
                                       "ode_lower_bound ode_upper_bound clipped_fraction",
                                       g, 7, cols, err)) < 0 ||
        (status = dpd_output_table_add(out, "release.tsv", "tune",
                                       "t sim_before sim_before_se sim_after sim_after_se "
                                       "ode_before ode_after c eta0",
                                       1, 9, rel, err)) < 0 ||
        (status = dpd__output_figure_set(out, "tune", err)) < 0) {
      goto done;
    }
  }

  /* What a reader sees on stdout. */
  if ((status = dpd__output_headline_set(
           out, err, "model linreg, d = %zu, n = %zu, gamma = %g, schedule %s, seed %llu",
           dpd__linreg_problem(run)->d, simc.n, tc.ode.gamma, dpd_schedule_name(schedule),
           (unsigned long long)simc.seed)) < 0 ||
      (status = report_line(out, "c", res.c, err)) < 0) {
    goto done;
  }
  if (res.schedule.kind == DPD_SCHEDULE_OPTIMAL) {
    report_line(out, "c1", res.schedule.c1, err);
    report_line(out, "c2", res.schedule.c2, err);
    report_line(out, "c3", res.schedule.c3, err);
  } else {
    report_line(out, "eta0", res.schedule.eta0, err);
    if (res.schedule.kind == DPD_SCHEDULE_HYPERBOLIC) {
      report_line(out, "a", res.schedule.a, err);
    }
  }
  report_line(out, "eta_sup / stability_limit", res.eta_sup / res.eta_limit, err);
  report_line(out, "final_excess_risk (ODE)", res.risk, err);
  report_line(out, "excess_risk_before_release", res.before_release, err);
  report_line(out, "release_jump", res.release_jump, err);
  if (sim != NULL) {
    dpd__output_report_add(out, err, "%-32s %.10g +- %.3g (%zu replicates; gap %.2f SE)\n",
                           "confirm_final_excess_risk", sim->final_risk, sim->final_risk_se,
                           t.confirm_seeds, fabs(res.risk - sim->final_risk) / sim->final_risk_se);
  }
  if (t.heatmap > 0) {
    dpd__output_report_add(out, err, "%-32s %zu of %zu (best grid value %.10g)\n",
                           "heatmap_beating_optimum", st.beating, st.points, st.best);
  }
  dpd__output_report_add(out, err, "%-32s %zu evaluations, %zu iterations, %zu local searches\n",
                         "search", res.evals, res.iterations, res.starts);
  if (res.at_bound != 0) {
    char names[128] = "";
    for (size_t k = 0; k < NTUNE_NAMES; k++) {
      if (res.at_bound & tune_names[k].flag) {
        strcat(names, " ");
        strcat(names, tune_names[k].name);
      }
    }
    dpd__output_note_add(out, err,
                         "warning: the optimum lies at the edge of the search box for%s "
                         "(c_min/c_max, the stability limit, or the shape box)",
                         names);
  }
  if (res.ignored & DPD_TUNE_C3) {
    dpd__output_note_add(out, err, "note: c3 has no effect with rho = inf and was not tuned");
  }
  if (st.beating > 0) {
    dpd__output_note_add(out, err,
                         "warning: %zu surface points lie below the optimum (best %.10g < %.10g)",
                         st.beating, st.best, res.risk);
  }
done:
  free(sim_traj);
  dpd_linreg_sim_result_free(sim);
  dpd_ode_result_free(ode);
  dpd_schedule_free(schedule);
  dpd__linreg_free(run);
  if (status < 0) {
    dpd_output_free(out);
    out = NULL;
  }
  *outp = out;
  return status;
}
