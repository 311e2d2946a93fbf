/* model=linreg: the commands simulate | sde | ode | compare | account (model.h).
 * SPDX-License-Identifier: MIT
 *
 * Each builds the problem set up by linreg_setup.c, calls the library and returns the summary,
 * trajectory.tsv (the training trajectory on the grid; the row at t = 1 is the iterate before
 * the release noise) and release.tsv (before/after the last-iterate noise), tables built by
 * column name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/table_impl.h"
#include "dpdyn/compare.h"
#include "dpdyn/privacy.h"
#include "models/linreg/linreg_impl.h"

static const double nan_value = NAN, one = 1.0;

/* One run: its results, output and tables (a failed step leaves status < 0, later steps skip). */
typedef struct {
  linreg_run *r;
  dpd_linreg_sim_result *sim, *sde;
  dpd_ode_result *ode;
  dpd__linreg_ode_estimates est;
  dpd_output *out;
  dpd_table_builder *traj, *rel; /* trajectory.tsv, release.tsv */
  dpd_err *err;
  int status;
} lr_job;

/* Appends the column prefix + name (rows of the builder from v; NULL: zeros). */
static void put(lr_job *j, dpd_table_builder *b, const char *prefix, const char *name,
                const double *v) {
  char key[64];
  snprintf(key, sizeof key, "%s%s", prefix, name);
  if (j->status >= 0) {
    j->status = dpd_table_builder_add(b, key, v, j->err);
  }
}

/* Builds the problem, runs the ODE (ode), the simulation (sim) and the SDE when the run has it,
 * and starts the output and its tables. */
static int job_start(lr_job *j, void *ctx, const dpd_keys *keys, int sim, int ode, dpd_err *err) {
  linreg_run *r = ctx;
  memset(j, 0, sizeof *j);
  j->r = r;
  j->err = err;
  if ((j->status = dpd__linreg_build(r, err)) < 0 ||
      (j->status = dpd__linreg_output_begin(keys, r, &j->out, err)) < 0 ||
      (j->status = dpd_table_builder_create(r->grid, &j->traj, err)) < 0 ||
      (j->status = dpd_table_builder_create(1, &j->rel, err)) < 0) {
    return j->status;
  }
  if (ode) {
    dpd_ode_config oc = dpd__linreg_ode_config(r);
    oc.bounds = 1; /* NULL when the method does not give them */
    j->status = dpd__linreg_ode_solve_estimated(&r->spectral, &r->ode_problem, r->schedule, &oc,
                                                r->compress_tol, &j->ode, &j->est, err);
  }
  if (j->status >= 0 && sim) {
    dpd_linreg_sim_config sc = dpd__linreg_sim_config(r);
    j->status = dpd_linreg_sim_run(r->problem, r->schedule, &sc, &j->sim, err);
  }
  if (j->status >= 0 && r->with_sde) {
    dpd_linreg_sde_config ec = dpd__linreg_sde_config(r);
    j->status = dpd_linreg_sde_run(r->problem, r->schedule, &ec, &j->sde, err);
  }
  if (j->status >= 0) {
    put(j, j->traj, "", "t", j->sim != NULL ? j->sim->t : j->sde != NULL ? j->sde->t : j->ode->t);
    put(j, j->rel, "", "t", &one);
  }
  return j->status;
}

/* save_replicates: replicates.tsv (each replicate's final values, named as the summary's means
 * of them) and, at 2, replicates_trajectory.tsv (each replicate on the grid, named as the
 * trajectory.tsv columns they average to: the row t = 1 is the risk before the release noise).
 * The main run (no prefix), then compare's SDE ("sde_"). */
static int add_replicates(const lr_job *j, dpd_err *err) {
  const dpd_linreg_sim_result *runs[2] = {j->sim != NULL ? j->sim : j->sde,
                                          j->sim != NULL ? j->sde : NULL};
  const double *fin[6] = {NULL}, *per[4] = {NULL};
  char fin_names[320] = "", per_names[320] = "t";
  size_t nfin = 0, nper = 0;
  int status;
  for (size_t k = 0; k < 2 && runs[k] != NULL; k++) {
    const dpd_linreg_sim_result *res = runs[k];
    const char *prefix = k == 0 ? "" : "sde_";
    const char *clip = res == j->sim ? "clipped_fraction" : "expected_clipped_fraction";
    size_t len = strlen(fin_names), plen = strlen(per_names);
    fin[nfin++] = res->final_replicates;
    fin[nfin++] = res->before_release_replicates;
    fin[nfin++] = res->clip_total_replicates;
    snprintf(fin_names + len, sizeof fin_names - len,
             "%s%sfinal_excess_risk %sexcess_risk_before_release %s%s", len > 0 ? " " : "", prefix,
             prefix, prefix, clip);
    if (j->r->save_replicates >= 2) {
      per[nper++] = res->risk_replicates; /* t = 1 before release (the convention of linreg.h) */
      per[nper++] = res->clip_replicates;
      snprintf(per_names + plen, sizeof per_names - plen, " %sexcess_risk %s%s", prefix, prefix,
               clip);
    }
  }
  status = dpd__output_replicates_add(j->out, NULL, fin_names, j->r->seeds, nfin, fin, err);
  if (status == DPD_OK && nper > 0) {
    const double *shared[1] = {runs[0]->t};
    status = dpd__output_replicate_trajectory_add(j->out, NULL, per_names, j->r->seeds,
                                                  j->r->grid, 1, shared, nper, per, err);
  }
  return status;
}

/* Publishes the tables drawn by `figure` and frees the job; *outp: the output, NULL on
 * failure. */
static int job_end(lr_job *j, const char *figure, dpd_output **outp) {
  if (j->status >= 0 && (j->status = dpd__output_figure_set(j->out, figure, j->err)) >= 0) {
    j->status = dpd_output_table_add_built(j->out, "trajectory.tsv", figure, j->traj, j->err);
    j->traj = NULL; /* consumed, also on failure */
    if (j->status >= 0) {
      j->status = dpd_output_table_add_built(j->out, "release.tsv", figure, j->rel, j->err);
    }
    j->rel = NULL;
  }
  if (j->status >= 0 && j->r->save_replicates > 0 && (j->sim != NULL || j->sde != NULL)) {
    j->status = add_replicates(j, j->err);
  }
  dpd_table_builder_free(j->traj);
  dpd_table_builder_free(j->rel);
  dpd_linreg_sim_result_free(j->sim);
  dpd_linreg_sim_result_free(j->sde);
  dpd_ode_result_free(j->ode);
  if (j->status < 0) {
    dpd_output_free(j->out);
    j->out = NULL;
  }
  *outp = j->out;
  return j->status;
}

/* A stochastic run's summary (prefix + its names), its mean and SE on the grid and at the
 * release. */
static void stochastic(lr_job *j, const char *prefix, const dpd_linreg_sim_result *res,
                       const char *clip_key) {
  dpd__linreg_number(j->out, prefix, "final_excess_risk", res->final_risk);
  dpd__linreg_number(j->out, prefix, "final_excess_risk_se", res->final_risk_se);
  dpd__linreg_number(j->out, prefix, "excess_risk_before_release", res->before_release);
  dpd__linreg_number(j->out, prefix, "excess_risk_before_release_se", res->before_release_se);
  dpd__linreg_number(j->out, prefix, "release_jump", res->release_jump);
  dpd__linreg_number(j->out, prefix, clip_key, res->clip_fraction_total);
  put(j, j->traj, prefix, "excess_risk", res->risk_mean);
  put(j, j->traj, prefix, "excess_risk_se", res->risk_se);
  put(j, j->rel, prefix, "before", &res->before_release);
  put(j, j->rel, prefix, "before_se", &res->before_release_se);
  put(j, j->rel, prefix, "after", &res->final_risk);
  put(j, j->rel, prefix, "after_se", &res->final_risk_se);
}

/* Distinct eigenvalues of the spectrum (not of the ODE's groups). */
static double distinct_eigenvalues(const linreg_run *r) {
  if (r->problem != NULL) {
    return (double)r->problem->ngroups;
  }
  if (r->pc.spectrum == DPD_SPECTRUM_POWERLAW) {
    return (double)r->d;
  }
  return r->ode_problem->compressed_bands == 0 ? (double)r->ode_problem->ngroups : NAN;
}

/* The ODE's diagnostics: steps, groups, compression and the error estimates. */
static void ode_report(lr_job *j) {
  const dpd_linreg_problem *p = j->r->ode_problem;
  cJSON *s = j->out->summary;
  cJSON_AddNumberToObject(s, "ode_steps", (double)j->ode->steps);
  cJSON_AddNumberToObject(s, "distinct_eigenvalues", distinct_eigenvalues(j->r));
  cJSON_AddNumberToObject(s, "ode_groups", (double)p->ngroups);
  cJSON_AddBoolToObject(s, "compressed", p->spectral && p->compressed_bands > 0);
  if (p->spectral && p->compressed_bands > 0) {
    cJSON_AddNumberToObject(s, "compress_nodes_per_band", (double)p->nodes_per_band);
    cJSON_AddNumberToObject(s, "compressed_bands", (double)p->compressed_bands);
    dpd_output_number_set(j->out, "compress_error_estimate", j->est.compress_est);
  } else {
    dpd_output_na_set(j->out, "compress_error_estimate",
                      j->r->compress == 0 ? "compress = off"
                                          : "every group exact (no band compressed)");
  }
  if (isnan(j->est.ode_est)) {
    dpd_output_na_set(j->out, "ode_error_estimate", j->est.ode_est_why);
  } else {
    dpd_output_number_set(j->out, "ode_error_estimate", j->est.ode_est);
  }
}

/* The ODE's summary (prefix "": it is the run's result), its trajectory and bounds, its
 * release. */
static void ode_part(lr_job *j, const char *prefix) {
  const dpd_ode_result *ode = j->ode;
  dpd__linreg_number(j->out, prefix, "final_excess_risk", ode->final_risk);
  if (*prefix == '\0') {
    dpd_output_number_set(j->out, "final_excess_risk_se", 0.0);
  }
  dpd__linreg_number(j->out, prefix, "excess_risk_before_release", ode->before_release);
  dpd__linreg_number(j->out, prefix, "release_jump", ode->release_jump);
  for (int b = 0; b < 2; b++) {
    const double *bound = b == 0 ? ode->lower : ode->upper;
    char key[64], why[96];
    snprintf(key, sizeof key, "%s%s_bound_before_release", prefix, b == 0 ? "lower" : "upper");
    snprintf(why, sizeof why, "method = %s solves the ODE without its bounds",
             dpd_ode_method_type_get(j->r->method)->name);
    if (bound == NULL) {
      dpd_output_na_set(j->out, key, why);
    } else {
      dpd_output_number_set(j->out, key, bound[j->r->grid - 1]);
    }
  }
  ode_report(j);
  if (j->status >= 0) {
    j->status = dpd__linreg_finite_size_report(j->out, j->r, j->err);
  }
  put(j, j->traj, prefix, "excess_risk", ode->risk);
  if (ode->lower != NULL) {
    put(j, j->traj, prefix, "lower_bound", ode->lower);
    put(j, j->traj, prefix, "upper_bound", ode->upper);
  }
  put(j, j->rel, "", "ode_before", &ode->before_release);
  put(j, j->rel, "", "ode_after", &ode->final_risk);
}

/* The release columns of a run without the ODE. */
static void no_ode(lr_job *j) {
  put(j, j->rel, "", "ode_before", &nan_value);
  put(j, j->rel, "", "ode_after", &nan_value);
}

int dpd__linreg_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                         dpd_output **out, dpd_err *err) {
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 1, 0, err) >= 0) {
    stochastic(&j, "", j.sim, "clipped_fraction");
    cJSON_AddNumberToObject(j.out->summary, "seeds", (double)j.r->seeds);
    no_ode(&j);
    put(&j, j.traj, "", "clipped_fraction", j.sim->clip_fraction);
  }
  return job_end(&j, "simulate", out);
}

int dpd__linreg_sde(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 0, 0, err) >= 0) {
    stochastic(&j, "", j.sde, "expected_clipped_fraction");
    cJSON_AddNumberToObject(j.out->summary, "seeds", (double)j.r->seeds);
    no_ode(&j);
    put(&j, j.traj, "", "expected_clipped_fraction", j.sde->clip_fraction);
    dpd_output_number_set(j.out, "dt", j.r->dt > 0.0 ? j.r->dt : 1.0 / (double)j.r->n);
    if (j.status >= 0) {
      j.status = dpd__linreg_finite_size_report(j.out, j.r, err);
    }
  }
  /* plots/sde.gp is not in this tree yet: the CLI draws "sde" with simulate.gp (an alias) */
  return job_end(&j, "sde", out);
}

int dpd__linreg_ode(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 0, 1, err) >= 0) {
    put(&j, j.rel, "", "before", &nan_value);
    put(&j, j.rel, "", "before_se", &nan_value);
    put(&j, j.rel, "", "after", &nan_value);
    put(&j, j.rel, "", "after_se", &nan_value);
    ode_part(&j, "");
  }
  return job_end(&j, "ode", out);
}

/* The simulation against the ODE (and the SDE against the ODE and the simulation): the gaps
 * of compare.h, the final values those of the released iterate. */
static void gaps(lr_job *j) {
  const dpd_linreg_sim_result *sim = j->sim, *sde = j->sde;
  dpd_compare_spec s = {.prefix = "", .theory = j->ode->risk, .sim = sim->risk_mean,
                        .se = sim->risk_se, .g = j->r->grid, .final_theory = j->ode->final_risk,
                        .final_sim = sim->final_risk, .final_se = sim->final_risk_se};
  if (j->status >= 0) {
    j->status = dpd_compare_add(j->out, j->traj, &s, j->r->seeds, NULL, j->err);
  }
  if (sde != NULL && j->status >= 0) {
    s.prefix = "sde_";
    s.sim = sde->risk_mean;
    s.se = sde->risk_se;
    s.final_sim = sde->final_risk;
    s.final_se = sde->final_risk_se;
    j->status = dpd_compare_add(j->out, j->traj, &s, j->r->seeds, NULL, j->err);
    /* two independent means: the SE of their difference */
    dpd_output_number_set(j->out, "sde_vs_simulate_final_gap_in_se",
                          dpd_gap_in_se(sde->final_risk, sim->final_risk,
                                        hypot(sim->final_risk_se, sde->final_risk_se)));
  }
}

int dpd__linreg_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                        dpd_output **out, dpd_err *err) {
  lr_job j;
  (void)env;
  if (job_start(&j, ctx, keys, 1, 1, err) >= 0) {
    stochastic(&j, "", j.sim, "clipped_fraction");
    cJSON_AddNumberToObject(j.out->summary, "seeds", (double)j.r->seeds);
    ode_part(&j, "ode_");
    put(&j, j.traj, "", "clipped_fraction", j.sim->clip_fraction);
    if (j.sde != NULL) {
      stochastic(&j, "sde_", j.sde, "expected_clipped_fraction");
    }
    gaps(&j);
  }
  return job_end(&j, j.sde != NULL ? "compare3" : "compare", out);
}

/* account --sequence: rho_eff of an arbitrary (eta_k, sigma_k) sequence. */
static int account_sequence(const linreg_run *r, const dpd_keys *keys, dpd_output **outp,
                            dpd_err *err) {
  const char *path = dpd_keys_text_get(keys, "sequence");
  double *cols[2] = {NULL, NULL}, rho_eff = NAN;
  size_t rows = 0, ncols = 0;
  int status = dpd__read_table("sequence", path, 2, 2, r->env->max_memory, cols, &rows, &ncols,
                               err);
  for (size_t k = 0; status == DPD_OK && k < rows; k++) {
    if (cols[0][k] < 0.0 || cols[1][k] < 0.0) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'sequence': row %zu of '%s' has eta = %g, sigma = %g "
                        "(allowed: eta >= 0, sigma >= 0)",
                        k + 1, path, cols[0][k], cols[1][k]);
    }
  }
  if (status == DPD_OK) {
    rho_eff = dpd_privacy_rho_eff(cols[0], cols[1], rows);
  }
  free(cols[0]);
  free(cols[1]);
  if (status < 0 || (status = dpd_output_create(outp, err)) < 0 ||
      (status = dpd__output_headline_set(*outp, err, "sequence '%s', %zu steps", path, rows)) < 0) {
    return status;
  }
  cJSON_AddStringToObject((*outp)->summary, "command", "account");
  cJSON_AddStringToObject((*outp)->summary, "version", dpd_version());
  cJSON_AddStringToObject((*outp)->summary, "sequence", path);
  cJSON_AddNumberToObject((*outp)->summary, "steps", (double)rows);
  dpd_output_number_set(*outp, "rho_eff", rho_eff);
  dpd_output_number_set(*outp, "zcdp_eff", 0.5 * rho_eff * rho_eff);
  if (r->have_delta) {
    dpd_output_number_set(*outp, "delta", r->delta);
    dpd__linreg_epsilons(*outp, rho_eff, r->delta, "_eff");
  }
  return DPD_OK;
}

/* dpdyn account: the privacy of the schedule (no simulation). */
static int account_summary(linreg_run *r, dpd_output *out, dpd_err *err) {
  double *eta = malloc(r->n * sizeof *eta), *sigma = malloc(r->n * sizeof *sigma);
  double rho_eff;
  if (eta == NULL || sigma == NULL) {
    free(eta);
    free(sigma);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for n = %zu steps", r->n);
  }
  dpd_schedule_steps(r->schedule, r->n, r->rho, eta, sigma);
  rho_eff = dpd_privacy_rho_eff(eta, sigma, r->n);
  free(eta);
  free(sigma);
  dpd_output_number_set(out, "rho_target", r->rho);
  dpd_output_number_set(out, "rho_eff", rho_eff);
  dpd_output_number_set(out, "zcdp_eff", 0.5 * rho_eff * rho_eff);
  if (r->have_delta) {
    dpd__linreg_epsilons(out, rho_eff, r->delta, "_eff");
  }
  if (r->have_epsilon) {
    dpd_output_number_set(out, "epsilon", r->epsilon);
    dpd_output_number_set(out, "rho_bun_steinke",
                          dpd_privacy_rho_from_eps_bun_steinke(r->epsilon, r->delta));
  }
  return DPD_OK;
}

int dpd__linreg_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                        dpd_output **out, dpd_err *err) {
  linreg_run *r = ctx;
  int status;
  (void)env;
  *out = NULL;
  if (r->sequence) {
    status = account_sequence(r, keys, out, err);
  } else if ((status = dpd__linreg_build(r, err)) >= 0 &&
             (status = dpd__linreg_output_begin(keys, r, out, err)) >= 0) {
    (*out)->plot = 0;
    status = account_summary(r, *out, err);
  }
  if (status < 0) {
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}
