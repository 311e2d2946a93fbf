/* The summary numbers and tables of linreg results (report_impl.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "core/table_impl.h"
#include "dpdyn/privacy.h"
#include "linreg/report_impl.h"

void dpd__linreg_report_column(dpd__linreg_report *rp, dpd_table_builder *b, const char *prefix,
                               const char *name, const double *v) {
  char key[64];
  snprintf(key, sizeof key, "%s%s", prefix, name);
  if (rp->status >= 0) {
    rp->status = dpd_table_builder_add(b, key, v, rp->err);
  }
}

void dpd__linreg_report_number(dpd_output *out, const char *prefix, const char *name, double v) {
  char key[96];
  snprintf(key, sizeof key, "%s%s", prefix, name);
  dpd_output_number_set(out, key, v);
}

void dpd__linreg_report_sim(dpd__linreg_report *rp, const char *prefix,
                            const dpd_linreg_sim_result *res, const char *clip_key) {
  dpd__linreg_report_number(rp->out, prefix, "final_excess_risk", res->final_risk);
  dpd__linreg_report_number(rp->out, prefix, "final_excess_risk_se", res->final_risk_se);
  dpd__linreg_report_number(rp->out, prefix, "excess_risk_before_release", res->before_release);
  dpd__linreg_report_number(rp->out, prefix, "excess_risk_before_release_se",
                            res->before_release_se);
  dpd__linreg_report_number(rp->out, prefix, "release_jump", res->release_jump);
  dpd__linreg_report_number(rp->out, prefix, clip_key, res->clip_fraction_total);
  dpd__linreg_report_column(rp, rp->traj, prefix, "excess_risk", res->risk_mean);
  dpd__linreg_report_column(rp, rp->traj, prefix, "excess_risk_se", res->risk_se);
  dpd__linreg_report_column(rp, rp->rel, prefix, "before", &res->before_release);
  dpd__linreg_report_column(rp, rp->rel, prefix, "before_se", &res->before_release_se);
  dpd__linreg_report_column(rp, rp->rel, prefix, "after", &res->final_risk);
  dpd__linreg_report_column(rp, rp->rel, prefix, "after_se", &res->final_risk_se);
}

/* Distinct eigenvalues of the spectrum (not of the ODE's groups). */
static double distinct_eigenvalues(const dpd_linreg_problem *problem,
                                   const dpd_linreg_problem *full,
                                   const dpd_linreg_problem_config *pc) {
  if (full != NULL) {
    return (double)full->ngroups;
  }
  if (pc->spectrum == DPD_SPECTRUM_POWERLAW) {
    return (double)pc->d;
  }
  return problem->compressed_bands == 0 ? (double)problem->ngroups : NAN;
}

/* The solver's diagnostics: steps, groups, compression and the error estimates. */
static void solver_report(dpd_output *out, const dpd_ode_result *ode,
                          const dpd__linreg_ode_estimates *est, const dpd_linreg_problem *p,
                          double distinct, int compress_off) {
  cJSON_AddNumberToObject(out->summary, "ode_steps", (double)ode->steps);
  cJSON_AddNumberToObject(out->summary, "distinct_eigenvalues", distinct);
  cJSON_AddNumberToObject(out->summary, "ode_groups", (double)p->ngroups);
  cJSON_AddBoolToObject(out->summary, "compressed", p->spectral && p->compressed_bands > 0);
  if (p->spectral && p->compressed_bands > 0) {
    cJSON_AddNumberToObject(out->summary, "compress_nodes_per_band", (double)p->nodes_per_band);
    cJSON_AddNumberToObject(out->summary, "compressed_bands", (double)p->compressed_bands);
    dpd_output_number_set(out, "compress_error_estimate", est->compress_est);
  } else {
    dpd_output_na_set(out, "compress_error_estimate",
                      compress_off ? "compress = off" : "every group exact (no band compressed)");
  }
  if (isnan(est->ode_est)) {
    dpd_output_na_set(out, "ode_error_estimate", est->ode_est_why);
  } else {
    dpd_output_number_set(out, "ode_error_estimate", est->ode_est);
  }
}

void dpd__linreg_report_ode(dpd__linreg_report *rp, const char *prefix, const dpd_ode_result *ode,
                            const dpd__linreg_ode_estimates *est, const dpd_linreg_problem *problem,
                            const dpd_linreg_problem *full, const dpd_linreg_problem_config *pc,
                            const dpd_ode_config *oc, int compress_off) {
  dpd__linreg_report_number(rp->out, prefix, "final_excess_risk", ode->final_risk);
  if (*prefix == '\0') {
    dpd_output_number_set(rp->out, "final_excess_risk_se", 0.0);
  }
  dpd__linreg_report_number(rp->out, prefix, "excess_risk_before_release", ode->before_release);
  dpd__linreg_report_number(rp->out, prefix, "release_jump", ode->release_jump);
  for (int b = 0; b < 2; b++) {
    const double *bound = b == 0 ? ode->lower : ode->upper;
    char key[64], why[96];
    snprintf(key, sizeof key, "%s%s_bound_before_release", prefix, b == 0 ? "lower" : "upper");
    snprintf(why, sizeof why, "method = %s solves the ODE without its bounds",
             dpd_ode_method_type_get(oc->method)->name);
    if (bound == NULL) {
      dpd_output_na_set(rp->out, key, why);
    } else {
      dpd_output_number_set(rp->out, key, bound[ode->grid - 1]);
    }
  }
  solver_report(rp->out, ode, est, problem, distinct_eigenvalues(problem, full, pc), compress_off);
  if (rp->status >= 0) {
    rp->status = dpd__linreg_report_finite_size(rp->out, problem, oc, rp->err);
  }
  dpd__linreg_report_column(rp, rp->traj, prefix, "excess_risk", ode->risk);
  if (ode->lower != NULL) {
    dpd__linreg_report_column(rp, rp->traj, prefix, "lower_bound", ode->lower);
    dpd__linreg_report_column(rp, rp->traj, prefix, "upper_bound", ode->upper);
  }
  dpd__linreg_report_column(rp, rp->rel, "", "ode_before", &ode->before_release);
  dpd__linreg_report_column(rp, rp->rel, "", "ode_after", &ode->final_risk);
}

int dpd__linreg_report_finite_size(dpd_output *out, const dpd_linreg_problem *p,
                                   const dpd_ode_config *oc, dpd_err *err) {
  const int applied = dpd_ode_finite_size_applies(p, oc);
  const double m2 = dpd_linreg_m2(p), lmax = p->lambda_max / (double)p->d;
  char msg[300];
  cJSON *w;
  cJSON_AddBoolToObject(out->summary, "finite_size", applied);
  cJSON_AddNumberToObject(out->summary, "m2", m2);
  cJSON_AddNumberToObject(out->summary, "lambda_max_over_d", lmax);
  if (applied || oc->factors != NULL || !dpd_linreg_finite_size_matters(p)) {
    return DPD_OK;
  }
  snprintf(msg, sizeof msg,
           "the relative sd of |x|^2/d is %.3g > %g and lambda_max/d = %.3g > %g: the "
           "asymptotic equivalent is off by its finite-size terms here; use finite_size = on "
           "or auto",
           sqrt(m2), DPD_FINITE_AUTO_THRESHOLD, lmax, DPD_FINITE_AUTO_LMAX);
  if ((w = cJSON_GetObjectItemCaseSensitive(out->summary, "warnings")) == NULL) {
    w = cJSON_AddArrayToObject(out->summary, "warnings");
  }
  if (w == NULL || !cJSON_AddItemToArray(w, cJSON_CreateString(msg)) ||
      dpd__output_note_add(out, err, "warning: %s", msg) < 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

int dpd__linreg_report_replicates(dpd_output *out, const dpd_linreg_sim_result *sim,
                                  const dpd_linreg_sim_result *sde, int level, size_t seeds,
                                  size_t grid, dpd_err *err) {
  const dpd_linreg_sim_result *runs[2] = {sim != NULL ? sim : sde, sim != NULL ? sde : NULL};
  const double *fin[6] = {NULL}, *per[4] = {NULL};
  char fin_names[320] = "", per_names[320] = "t";
  size_t nfin = 0, nper = 0;
  int status;
  for (size_t k = 0; k < 2 && runs[k] != NULL; k++) {
    const dpd_linreg_sim_result *res = runs[k];
    const char *prefix = k == 0 ? "" : "sde_";
    const char *clip = res == sim ? "clipped_fraction" : "expected_clipped_fraction";
    size_t len = strlen(fin_names), plen = strlen(per_names);
    fin[nfin++] = res->final_replicates;
    fin[nfin++] = res->before_release_replicates;
    fin[nfin++] = res->clip_total_replicates;
    snprintf(fin_names + len, sizeof fin_names - len,
             "%s%sfinal_excess_risk %sexcess_risk_before_release %s%s", len > 0 ? " " : "", prefix,
             prefix, prefix, clip);
    if (level >= 2) {
      per[nper++] = res->risk_replicates; /* t = 1 before release (the convention of linreg.h) */
      per[nper++] = res->clip_replicates;
      snprintf(per_names + plen, sizeof per_names - plen, " %sexcess_risk %s%s", prefix, prefix,
               clip);
    }
  }
  status = dpd__output_replicates_add(out, NULL, fin_names, seeds, nfin, fin, err);
  if (status == DPD_OK && nper > 0) {
    const double *shared[1] = {runs[0]->t};
    status = dpd__output_replicate_trajectory_add(out, NULL, per_names, seeds, grid, 1, shared,
                                                  nper, per, err);
  }
  return status;
}

/* epsilon at `delta` of a rho^2/2-zCDP run, two ways (suffix: "" or "_eff"). */
static void add_epsilons(dpd_output *out, double rho, double delta, const char *suffix) {
  double rz = 0.5 * rho * rho, eps = INFINITY;
  if (isfinite(rho)) {
    dpd_privacy_eps_tight(rz, delta, &eps, NULL);
  }
  dpd__linreg_report_number(out, "epsilon_bun_steinke", suffix,
                            dpd_privacy_eps_bun_steinke(rz, delta));
  dpd__linreg_report_number(out, "epsilon_tight", suffix, eps);
}

int dpd__linreg_report_privacy(dpd_output *out, const dpd__linreg_privacy *priv, size_t n,
                               const dpd_schedule *s, const dpd_linreg_problem *p,
                               const dpd__lrdata *D, dpd_err *err) {
  const double rho = priv->rho, rho_z = 0.5 * rho * rho;
  dpd_privacy_guarantee g;
  if (dpd_privacy_guarantee_from_zcdp(rho_z, priv->have_delta ? priv->delta : 1.0 / (double)n, &g,
                                      NULL) == DPD_OK) {
    dpd__output_guarantee(out, &g);
  }
  dpd_output_number_set(out, "rho", rho);
  dpd_output_number_set(out, "zcdp", rho_z);
  if (priv->have_delta) {
    dpd_output_number_set(out, "delta", priv->delta);
    add_epsilons(out, rho, priv->delta, "");
  }
  return dpd__linreg_report_gdp(out, priv, n, s, p, D, err);
}

int dpd__linreg_report_account(dpd_output *out, const dpd_schedule *s, size_t n, double rho,
                               int have_delta, double delta, double epsilon, dpd_err *err) {
  double *eta = malloc(n * sizeof *eta), *sigma = malloc(n * sizeof *sigma);
  double rho_eff;
  if (eta == NULL || sigma == NULL) {
    free(eta);
    free(sigma);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for n = %zu steps", n);
  }
  dpd_schedule_steps(s, n, rho, eta, sigma);
  rho_eff = dpd_privacy_rho_eff(eta, sigma, n);
  free(eta);
  free(sigma);
  dpd_output_number_set(out, "rho_target", rho);
  dpd_output_number_set(out, "rho_eff", rho_eff);
  dpd_output_number_set(out, "zcdp_eff", 0.5 * rho_eff * rho_eff);
  if (have_delta) {
    add_epsilons(out, rho_eff, delta, "_eff");
  }
  if (epsilon > 0.0) {
    dpd_output_number_set(out, "epsilon", epsilon);
    dpd_output_number_set(out, "rho_bun_steinke",
                          dpd_privacy_rho_from_eps_bun_steinke(epsilon, delta));
  }
  return DPD_OK;
}

int dpd__linreg_report_sequence(const char *path, size_t max_memory, int have_delta, double delta,
                                dpd_output **outp, dpd_err *err) {
  double *cols[2] = {NULL, NULL}, rho_eff = NAN, eta_max = 0.0;
  size_t rows = 0, ncols = 0;
  dpd__linreg_gdp_check check;
  int status = dpd__read_table("sequence", path, 2, 2, max_memory, cols, &rows, &ncols, err);
  for (size_t k = 0; status == DPD_OK && k < rows; k++) {
    eta_max = fmax(eta_max, cols[0][k]);
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
  if (have_delta) {
    dpd_output_number_set(*outp, "delta", delta);
    add_epsilons(*outp, rho_eff, delta, "_eff");
  }
  if (!isfinite(rho_eff)) {
    return DPD_OK; /* some step has no noise after it: nothing to claim */
  }
  dpd__linreg_gdp_check_eval(eta_max, rows, NULL, NULL, &check);
  return dpd__linreg_report_gdp_block(*outp, rho_eff, have_delta, delta, &check, err);
}
