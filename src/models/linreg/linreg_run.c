/* model=linreg: the commands simulate | sde | ode | compare | account (model.h).
 * SPDX-License-Identifier: MIT
 *
 * Each builds the problem set up by linreg_setup.c, calls the library and returns the summary,
 * trajectory.tsv (the training trajectory on the grid; the row at t = 1 is the iterate before
 * the release noise) and release.tsv (before/after the last-iterate noise), tables built by
 * column name (linreg/report_impl.h). */
#include <math.h>
#include <string.h>

#include "dpdyn/compare.h"
#include "linreg/report_impl.h"
#include "models/linreg/linreg_impl.h"

static const double nan_value = NAN, one = 1.0;

/* One run: its results and what it reports. */
typedef struct {
  linreg_run *r;
  dpd_linreg_sim_result *sim, *sde;
  dpd_ode_result *ode;
  dpd__linreg_ode_estimates est;
  dpd__linreg_report rp;
} lr_job;

/* Builds the problem, starts the output and its tables, runs the ODE (ode), the simulation
 * (sim) and the SDE when the run has it. */
static int job_start(lr_job *j, void *ctx, const dpd_keys *keys, int sim, int ode, dpd_err *err) {
  linreg_run *r = ctx;
  dpd__linreg_report *rp = &j->rp;
  memset(j, 0, sizeof *j);
  j->r = r;
  rp->err = err;
  if ((rp->status = dpd__linreg_build(r, err)) < 0 ||
      (rp->status = dpd__linreg_output_begin(keys, r, &rp->out, err)) < 0 ||
      (rp->status = dpd_table_builder_create(r->grid, &rp->traj, err)) < 0 ||
      (rp->status = dpd_table_builder_create(1, &rp->rel, err)) < 0) {
    return rp->status;
  }
  if (ode) {
    dpd_ode_config oc = r->oc;
    oc.bounds = 1; /* NULL when the method does not give them */
    rp->status = dpd__linreg_ode_solve_estimated(&r->spectral, &r->ode_problem, r->schedule, &oc,
                                                 r->compress_tol, &j->ode, &j->est, err);
  }
  if (rp->status >= 0 && sim) {
    dpd_linreg_sim_config sc = r->simc;
    rp->status = r->ds.on ? dpd__linreg_dataset_sim(&r->ds, r->schedule, &sc, &j->sim, err)
                          : dpd_linreg_sim_run(r->problem, r->schedule, &sc, &j->sim, err);
  }
  if (rp->status >= 0 && r->with_sde) {
    dpd_linreg_sde_config ec = r->sdec;
    rp->status = dpd_linreg_sde_run(r->problem, r->schedule, &ec, &j->sde, err);
  }
  if (rp->status >= 0) {
    dpd__linreg_dataset_report(rp->out, &r->ds, r->n, r->seeds, sim);
    dpd__linreg_report_column(rp, rp->traj, "", "t",
                              j->sim != NULL   ? j->sim->t
                              : j->sde != NULL ? j->sde->t
                                               : j->ode->t);
    dpd__linreg_report_column(rp, rp->rel, "", "t", &one);
  }
  return rp->status;
}

/* Publishes the tables drawn by `figure` and frees the job; *outp: the output, NULL on
 * failure. */
static int job_end(lr_job *j, const char *figure, dpd_output **outp) {
  dpd__linreg_report *rp = &j->rp;
  if (rp->status >= 0 && (rp->status = dpd__output_figure_set(rp->out, figure, rp->err)) >= 0) {
    rp->status = dpd_output_table_add_built(rp->out, "trajectory.tsv", figure, rp->traj, rp->err);
    rp->traj = NULL; /* consumed, also on failure */
    if (rp->status >= 0) {
      rp->status = dpd_output_table_add_built(rp->out, "release.tsv", figure, rp->rel, rp->err);
    }
    rp->rel = NULL;
  }
  if (rp->status >= 0 && j->r->save_replicates > 0 && (j->sim != NULL || j->sde != NULL)) {
    rp->status = dpd__linreg_report_replicates(rp->out, j->sim, j->sde, j->r->save_replicates,
                                               j->r->seeds, j->r->grid, rp->err);
  }
  dpd_table_builder_free(rp->traj);
  dpd_table_builder_free(rp->rel);
  dpd_linreg_sim_result_free(j->sim);
  dpd_linreg_sim_result_free(j->sde);
  dpd_ode_result_free(j->ode);
  if (rp->status < 0) {
    dpd_output_free(rp->out);
    rp->out = NULL;
  }
  *outp = rp->out;
  return rp->status;
}

/* The ODE's part of the report (prefix "": the ODE is the run's result). */
static void ode_part(lr_job *j, const char *prefix) {
  dpd__linreg_report_ode(&j->rp, prefix, j->ode, &j->est, j->r->ode_problem, j->r->problem,
                         &j->r->pc, &j->r->oc, j->r->compress == 0);
}

/* A stochastic run against no ODE: its summary, seeds, nan ODE release, clipped fraction. */
static void stochastic_part(lr_job *j, const dpd_linreg_sim_result *res, const char *clip_key) {
  dpd__linreg_report_sim(&j->rp, "", res, clip_key);
  cJSON_AddNumberToObject(j->rp.out->summary, "seeds", (double)j->r->seeds);
  dpd__linreg_report_column(&j->rp, j->rp.rel, "", "ode_before", &nan_value);
  dpd__linreg_report_column(&j->rp, j->rp.rel, "", "ode_after", &nan_value);
  dpd__linreg_report_column(&j->rp, j->rp.traj, "", clip_key, res->clip_fraction);
}

int dpd__linreg_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                         dpd_err *err) {
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 1, 0, err) >= 0) {
    stochastic_part(&j, j.sim, "clipped_fraction");
  }
  return job_end(&j, "simulate", out);
}

int dpd__linreg_sde(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 0, 0, err) >= 0) {
    stochastic_part(&j, j.sde, "expected_clipped_fraction");
    dpd_output_number_set(j.rp.out, "dt", j.r->dt > 0.0 ? j.r->dt : 1.0 / (double)j.r->n);
    if (j.rp.status >= 0) {
      j.rp.status = dpd__linreg_report_finite_size(j.rp.out, j.r->ode_problem, &j.r->oc, err);
    }
  }
  /* plots/sde.gp is not in this tree yet: the CLI draws "sde" with simulate.gp (an alias) */
  return job_end(&j, "sde", out);
}

int dpd__linreg_ode(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  static const char *const no_sim[] = {"before", "before_se", "after", "after_se"};
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 0, 1, err) >= 0) {
    for (size_t k = 0; k < 4; k++) {
      dpd__linreg_report_column(&j.rp, j.rp.rel, "", no_sim[k], &nan_value);
    }
    ode_part(&j, "");
  }
  return job_end(&j, "ode", out);
}

/* The simulation (and the SDE) against the ODE: the gaps of compare.h, the final values those
 * of the released iterate; the SDE against the simulation: two independent means. */
static void gaps(lr_job *j) {
  const dpd_linreg_sim_result *sim = j->sim, *sde = j->sde;
  dpd_compare_spec s = {.prefix = "",
                        .theory = j->ode->risk,
                        .sim = sim->risk_mean,
                        .se = sim->risk_se,
                        .g = j->r->grid,
                        .final_theory = j->ode->final_risk,
                        .final_sim = sim->final_risk,
                        .final_se = sim->final_risk_se};
  dpd__linreg_report *rp = &j->rp;
  if (rp->status >= 0) {
    rp->status = dpd_compare_add(rp->out, rp->traj, &s, j->r->seeds, NULL, rp->err);
  }
  if (sde != NULL && rp->status >= 0) {
    s.prefix = "sde_";
    s.sim = sde->risk_mean;
    s.se = sde->risk_se;
    s.final_sim = sde->final_risk;
    s.final_se = sde->final_risk_se;
    rp->status = dpd_compare_add(rp->out, rp->traj, &s, j->r->seeds, NULL, rp->err);
    dpd_output_number_set(rp->out, "sde_vs_simulate_final_gap_in_se",
                          dpd_gap_in_se(sde->final_risk, sim->final_risk,
                                        hypot(sim->final_risk_se, sde->final_risk_se)));
  }
}

int dpd__linreg_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                        dpd_err *err) {
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 1, 1, err) >= 0) {
    dpd__linreg_report_sim(&j.rp, "", j.sim, "clipped_fraction");
    cJSON_AddNumberToObject(j.rp.out->summary, "seeds", (double)j.r->seeds);
    ode_part(&j, "ode_");
    dpd__linreg_report_column(&j.rp, j.rp.traj, "", "clipped_fraction", j.sim->clip_fraction);
    if (j.sde != NULL) {
      dpd__linreg_report_sim(&j.rp, "sde_", j.sde, "expected_clipped_fraction");
    }
    gaps(&j);
    if (j.r->ds.on) {
      dpd__linreg_dataset_compare(&j.rp, &j.r->ds, &j.r->spectral, &j.r->ode_problem,
                                  j.r->schedule, &j.r->oc, j.r->compress_tol, j.ode, j.sim,
                                  j.r->seeds);
    }
  }
  return job_end(&j, j.r->ds.on ? "compare_data" : j.sde != NULL ? "compare3" : "compare", out);
}

int dpd__linreg_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                        dpd_err *err) {
  linreg_run *r = ctx;
  int status;
  *out = NULL;
  if (r->sequence) {
    return dpd__linreg_report_sequence(dpd_keys_text_get(keys, "sequence"), env->max_memory,
                                       r->priv.have_delta, r->priv.delta, out, err);
  }
  if ((status = dpd__linreg_build(r, err)) >= 0 &&
      (status = dpd__linreg_output_begin(keys, r, out, err)) >= 0) {
    (*out)->plot = 0;
    status = dpd__linreg_report_account(*out, r->schedule, r->n, r->priv.rho, r->priv.have_delta,
                                        r->priv.delta, r->priv.have_epsilon ? r->priv.epsilon : 0.0,
                                        err);
  }
  if (status < 0) {
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}

LR_RUN(dpd__linreg_audit) {
  linreg_run *r = ctx;
  int status = dpd__linreg_build(r, err);
  (void)env;
  return status < 0 || (status = dpd__linreg_output_begin(keys, r, out, err)) < 0
             ? status
             : dpd__linreg_audit_output(*out, r->problem, r->schedule, &r->simc, keys,
                                        r->priv.delta, err);
}
