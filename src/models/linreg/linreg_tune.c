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

/* The optimum and the keys of tune as the values in effect (summary params, data headers). */
static int record_keys(const lr_tune *u, dpd_err *err) {
  const char *names[DPD_TUNE_NNAMES];
  double values[DPD_TUNE_NNAMES];
  const size_t n = dpd__tune_values(u->r->tune.family, &u->res.schedule, names, values);
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
  return dpd_keys_effective_real_set(keys, "confirm_seeds", (double)u->r->tune.confirm_seeds, err);
}

/* The ODE at the optimum (with bounds) and the confirming simulation. */
static int confirm(lr_tune *u, dpd_err *err) {
  dpd_ode_config oc = u->tc.ode;
  dpd_linreg_sim_config simc = u->r->simc;
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
  return u->r->ds.on ? dpd__linreg_dataset_sim(&u->r->ds, u->schedule, &simc, &u->sim, err)
                     : dpd_linreg_sim_run(u->r->problem, u->schedule, &simc, &u->sim, err);
}

int dpd__linreg_tune(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **outp,
                     dpd_err *err) {
  lr_tune u = {.r = ctx};
  dpd__progress_bridge solves = {env, "ODE solves"};
  const dpd__tune_options *t = &u.r->tune;
  int status;
  u.tc = dpd_tune_config_default();
  u.tc.params = t->mask;
  u.tc.c_min = t->c_min;
  u.tc.c_max = t->c_max;
  u.tc.xtol = t->xtol;
  u.tc.restarts = t->restarts;
  u.tc.threads = u.r->threads;
  u.tc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  u.tc.progress_user = &solves;
  if ((status = dpd__linreg_build(u.r, err)) == DPD_OK &&
      (u.tc.ode = u.r->oc, status = dpd_tune_run(u.r->ode_problem, &u.r->schedule_cfg, &u.tc, &u.res, err)) == DPD_OK &&
      (status = record_keys(&u, err)) == DPD_OK &&
      (status = dpd__linreg_output_begin(keys, u.r, &u.out, err)) == DPD_OK &&
      (status = dpd__linreg_report_finite_size(u.out, u.r->ode_problem, &u.tc.ode, err)) ==
          DPD_OK &&
      (t->heatmap == 0 || (status = dpd__tune_surface_table(u.out, u.r->ode_problem, &u.tc, &u.res,
                                                            t, &u.st, err)) == DPD_OK) &&
      (status = confirm(&u, err)) == DPD_OK &&
      (status = dpd__linreg_report_gdp(u.out, &u.r->priv, u.r->n, u.schedule, u.r->ode_problem,
                                       u.r->ds.D, err)) == DPD_OK) {
    const dpd__tune_report_spec spec = {.t = t,
                                        .tc = &u.tc,
                                        .res = &u.res,
                                        .schedule = u.schedule,
                                        .ode = u.ode,
                                        .sim = u.sim,
                                        .st = &u.st,
                                        .problem = u.r->ode_problem,
                                        .d = u.r->d,
                                        .n = u.r->n,
                                        .seed = u.r->seed};
    status = dpd__tune_report(u.out, &spec, err);
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
