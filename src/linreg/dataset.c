/* A linreg run on a dataset: keys, build, binding, the two equivalents, the report
 * (dataset_impl.h; docs/real_data.md).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/compare.h"
#include "dpdyn/io.h"
#include "linreg/dataset_impl.h"
#include "linreg/problem_spec_impl.h"

/* Keys that apply only with features=file:PATH. */
static const char *const data_only[] = {"targets",       "center",  "scale",      "target_scale",
                                        "test_fraction", "factors", "replacement"};
/* Keys that describe the Gaussian model's population (none applies to a dataset). */
static const char *const gaussian_only[] = {"spectrum"};
/* Keys of the label model (none applies with targets=file:). */
static const char *const model_only[] = {"theta_star", "theta_norm", "zeta", "noise"};

static int refuse_given(const dpd_keys *keys, const char *const *names, size_t n, const char *with,
                        dpd_err *err) {
  for (size_t k = 0; k < n; k++) {
    if (dpd_keys_given(keys, names[k])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given with %s (allowed: not given; %s)", names[k],
                      with,
                      names == model_only ? "the targets are the file's and zeta^2 is the mean "
                                            "squared residual of their least-squares fit"
                                          : "the population is the file's rows");
    }
  }
  return DPD_OK;
}

/* targets, the preprocessing switches, test_fraction, factors. */
static int data_keys(const dpd_keys *keys, int theory, dpd__linreg_dataset *ds, dpd_err *err) {
  const char *targets = dpd_keys_text_get(keys, "targets");
  size_t center, scale, tscale, factors, replacement;
  int status;
  if (strcmp(targets, "model") != 0) {
    if ((status = dpd__model_file_key(keys, "targets", &ds->cfg.targets_path, err)) < 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'targets': '%s' (allowed: model, "
                      "file:PATH)",
                      targets);
    }
    if ((status = refuse_given(keys, model_only, 4, "targets = file:PATH", err)) < 0) {
      return status;
    }
  }
  if ((status = dpd_keys_choice_get(keys, "center", &center, err)) < 0 ||
      (status = dpd_keys_size_range_get(keys, "replacement", 0, 1, &replacement, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "scale", &scale, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "target_scale", &tscale, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "factors", &factors, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "test_fraction", 0.0, 1, 0.9, 1, 0,
                                        &ds->cfg.test_fraction, err)) < 0) {
    return status;
  }
  ds->cfg.center = center == 1;      /* no|yes */
  ds->cfg.scale_trace = scale == 0;  /* trace|none */
  ds->cfg.target_unit = tscale == 0; /* unit|none */
  ds->factors_data = factors == 1;   /* gaussian|data */
  ds->replacement = (int)replacement;
  if (theory && !ds->cfg.scale_trace) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'scale': none with a command that solves the deterministic "
                    "equivalent (allowed: trace; the theory needs tr Sigma^ = d, C = c sqrt(d); "
                    "scale = none is for simulate)");
  }
  return DPD_OK;
}

int dpd__linreg_dataset_keys(const dpd_keys *keys, uint64_t seed, size_t max_memory, int threads,
                             int theory, dpd__linreg_dataset *ds, dpd_err *err) {
  const char *path;
  int status;
  memset(ds, 0, sizeof *ds);
  if ((status = dpd__model_features_key(keys, "gaussian", data_only, 7, &path, err)) < 0) {
    return status;
  }
  if (path == NULL) {
    return DPD_OK;
  }
  if ((status = refuse_given(keys, gaussian_only, 1, "features = file:PATH", err)) < 0) {
    return status;
  }
  ds->on = 1;
  ds->theory = theory;
  ds->cfg.features_key = "features";
  ds->cfg.features_path = path;
  ds->cfg.targets_key = "targets";
  ds->cfg.seed = seed;
  ds->cfg.max_bytes = max_memory;
  ds->cfg.threads = threads;
  if ((status = data_keys(keys, theory, ds, err)) < 0 ||
      (status = dpd__lrdata_check(&ds->cfg, &ds->N, &ds->d, &ds->bytes, err)) < 0) {
    return status;
  }
  if (dpd_keys_given(keys, "d")) {
    size_t d;
    if ((status = dpd_keys_size_range_get(keys, "d", 1, (size_t)1 << 31, &d, err)) < 0) {
      return status;
    }
    if (d != ds->d) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'd': %zu but the features file has %zu columns "
                      "(allowed: %zu, or leave d out)",
                      d, ds->d, ds->d);
    }
  }
  return DPD_OK;
}

void dpd__linreg_dataset_keys_in_effect(dpd_keys *keys, const dpd__linreg_dataset *ds) {
  static const char *const population[] = {"spectrum", "theta_star", "theta_norm", "noise"};
  for (size_t k = 0; ds->on && k < (ds->cfg.targets_path != NULL ? 4u : 1u); k++) {
    dpd_keys_unset(keys, population[k]); /* the data's, not a Gaussian model's */
  }
}

int dpd__linreg_dataset_n(const dpd_keys *keys, const dpd__linreg_dataset *ds, size_t *n,
                          dpd_err *err) {
  size_t test =
      ds->cfg.test_fraction > 0.0 ? (size_t)floor(ds->cfg.test_fraction * (double)ds->N) : 0;
  size_t pop;
  int status;
  test = ds->cfg.test_fraction > 0.0 && test == 0 ? 1 : test;
  pop = ds->N - test;
  if (!dpd_keys_given(keys, "n") && !dpd_keys_given(keys, "gamma")) {
    *n = pop;
    return DPD_OK;
  }
  if ((status = dpd__linreg_size_keys(keys, ds->d, n, err)) < 0) {
    return status;
  }
  if (*n > pop && !ds->replacement) {
    const char *key = dpd_keys_given(keys, "n") ? "n" : "gamma";
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': n = %zu rows per replicate but the population has "
                    "%zu rows (N = %zu, %zu held out) (allowed: 1 <= n <= %zu; rows are drawn "
                    "without replacement unless replacement = 1)",
                    key, *n, pop, ds->N, test, pop);
  }
  return DPD_OK;
}

int dpd__linreg_dataset_build(dpd__linreg_dataset *ds, dpd_linreg_problem_config *pc,
                              dpd_err *err) {
  int status;
  if ((status = dpd__lrdata_create(&ds->cfg, &ds->D, err)) < 0) {
    return status;
  }
  return dpd__lrdata_problem_config(ds->D, pc, err);
}

int dpd__linreg_dataset_bind(dpd__linreg_dataset *ds, const dpd_linreg_problem *p, double c,
                             size_t seeds, double *zeta, dpd_ode_config *oc,
                             dpd_linreg_sim_config *simc, dpd_linreg_sde_config *sdec,
                             dpd_err *err) {
  dpd__lrdata *D = ds->D;
  D->with_replacement = ds->replacement;
  if (D->model_targets) {
    if ((ds->theta_model = malloc(D->d * sizeof *ds->theta_model)) == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    dpd__lrdata_to_original(D, p->theta_star, ds->theta_model);
  } else {
    *zeta = sqrt(D->zeta2);
    oc->zeta = simc->zeta = sdec->zeta = *zeta;
    oc->noise = simc->noise = sdec->noise = DPD_NOISE_GAUSSIAN;
  }
  if (D->n_test > 0 && (ds->test_risk = malloc(seeds * sizeof *ds->test_risk)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  ds->fctx = (dpd__lrdata_factors_ctx){.a = D->a,
                                       .z = D->z,
                                       .n = D->n_pop,
                                       .c = c,
                                       .zeta2 = D->model_targets ? *zeta * *zeta : D->zeta2,
                                       .threads = ds->cfg.threads};
  if (ds->factors_data) {
    oc->factors = dpd__lrdata_factors;
    oc->factors_user = &ds->fctx;
    oc->finite_size = DPD_FINITE_OFF;
  }
  return DPD_OK;
}

int dpd__linreg_dataset_sim(dpd__linreg_dataset *ds, const dpd_schedule *schedule,
                            const dpd_linreg_sim_config *simc, dpd_linreg_sim_result **out,
                            dpd_err *err) {
  return dpd__lrdata_sim_run(ds->D, ds->theta_model, schedule, simc, out, ds->test_risk, err);
}

void dpd__linreg_dataset_compare(dpd__linreg_report *rp, dpd__linreg_dataset *ds,
                                 dpd__linreg_spectral *spectral, dpd_linreg_problem **ode_problem,
                                 const dpd_schedule *schedule, const dpd_ode_config *oc,
                                 double compress_tol, const dpd_ode_result *ode,
                                 const dpd_linreg_sim_result *sim, size_t seeds) {
  dpd_ode_config other = *oc;
  dpd_ode_result *res = NULL;
  dpd__linreg_ode_estimates est;
  const dpd_ode_result *by[2]; /* gaussian, data */
  static const char *const prefix[2] = {"gaussian_", "data_"};
  static const char *const column[2] = {"ode_gaussian_excess_risk", "ode_data_excess_risk"};
  if (rp->status < 0) {
    return;
  }
  other.bounds = 0;
  if (ds->factors_data) {
    other.factors = NULL;
    other.factors_user = NULL;
  } else {
    other.factors = dpd__lrdata_factors;
    other.factors_user = &ds->fctx;
    other.finite_size = DPD_FINITE_OFF;
  }
  if ((rp->status = dpd__linreg_ode_solve_estimated(spectral, ode_problem, schedule, &other,
                                                    compress_tol, &res, &est, rp->err)) < 0) {
    return;
  }
  by[0] = ds->factors_data ? res : ode;
  by[1] = ds->factors_data ? ode : res;
  for (size_t k = 0; k < 2 && rp->status >= 0; k++) {
    dpd_compare_spec s = {.prefix = prefix[k],
                          .theory = by[k]->risk,
                          .sim = sim->risk_mean,
                          .se = sim->risk_se,
                          .g = sim->grid,
                          .final_theory = by[k]->final_risk,
                          .final_sim = sim->final_risk,
                          .final_se = sim->final_risk_se};
    char name[64];
    dpd__linreg_report_column(rp, rp->traj, "", column[k], by[k]->risk);
    snprintf(name, sizeof name, "ode_%safter", prefix[k]);
    dpd__linreg_report_column(rp, rp->rel, "", name, &by[k]->final_risk);
    snprintf(name, sizeof name, "ode_%sfinal_excess_risk", prefix[k]);
    dpd_output_number_set(rp->out, name, by[k]->final_risk);
    snprintf(name, sizeof name, "ode_%sexcess_risk_before_release", prefix[k]);
    dpd_output_number_set(rp->out, name, by[k]->before_release);
    if (rp->status >= 0) {
      rp->status = dpd_compare_add(rp->out, rp->traj, &s, seeds, NULL, rp->err);
    }
  }
  dpd_ode_result_free(res);
}

/* Mean and standard error of v[0 .. n). */
static void mean_se(const double *v, size_t n, double *mean, double *se) {
  double s = 0.0, s2 = 0.0;
  for (size_t i = 0; i < n; i++) {
    s += v[i];
  }
  *mean = s / (double)n;
  for (size_t i = 0; i < n; i++) {
    s2 += (v[i] - *mean) * (v[i] - *mean);
  }
  *se = n > 1 ? sqrt(s2 / (double)(n - 1) / (double)n) : NAN;
}

void dpd__linreg_dataset_report(dpd_output *out, const dpd__linreg_dataset *ds, size_t n,
                                size_t seeds, int simulated) {
  const dpd__lrdata *D = ds->D;
  cJSON *o, *pre, *diag, *top;
  if (!ds->on || D == NULL || (o = cJSON_AddObjectToObject(out->summary, "data")) == NULL) {
    return;
  }
  cJSON_AddStringToObject(o, "features", ds->cfg.features_path);
  cJSON_AddStringToObject(o, "targets",
                          D->model_targets ? "model (y = <x, theta*> + label noise, drawn per step)"
                                           : ds->cfg.targets_path);
  dpd_io_json_number_set(o, "rows", (double)D->N);
  dpd_io_json_number_set(o, "population_rows", (double)D->n_pop);
  dpd_io_json_number_set(o, "held_out_rows", (double)D->n_test);
  dpd_io_json_number_set(o, "rows_per_replicate", (double)n);
  cJSON_AddStringToObject(o, "factors", ds->factors_data ? "data" : "gaussian");
  if (simulated) {
    char redraw[96];
    snprintf(redraw, sizeof redraw, "rows (%s)%s and privacy noise",
             ds->replacement ? "i.i.d., with replacement" : "without replacement",
             D->model_targets ? ", label noise" : "");
    cJSON_AddStringToObject(o, "replicates_redraw", redraw);
    cJSON_AddBoolToObject(o, "with_replacement", ds->replacement);
  }
  if ((pre = cJSON_AddObjectToObject(o, "preprocessing")) != NULL) {
    cJSON_AddBoolToObject(pre, "center", ds->cfg.center);
    cJSON_AddStringToObject(pre, "scale", ds->cfg.scale_trace ? "trace" : "none");
    dpd_io_json_number_set(pre, "feature_scale", D->scale);
    dpd_io_json_number_set(pre, "trace_before_scaling", D->trace_raw);
    if (!D->model_targets) {
      cJSON_AddStringToObject(pre, "target_scale", ds->cfg.target_unit ? "unit" : "none");
      dpd_io_json_number_set(pre, "target_mean", D->y_mean);
      dpd_io_json_number_set(pre, "target_factor", D->y_scale);
    }
  }
  if (!D->model_targets) {
    double norm2 = 0.0;
    for (size_t i = 0; i < D->d; i++) {
      norm2 += D->theta_hat[i] * D->theta_hat[i];
    }
    dpd_io_json_number_set(o, "theta_hat_norm", sqrt(norm2));
    dpd_io_json_number_set(o, "zeta_hat", sqrt(D->zeta2));
  }
  dpd_io_json_number_set(o, "floored_eigenvalues", (double)D->n_floored);
  if ((diag = cJSON_AddObjectToObject(o, "diagnostics")) != NULL) {
    dpd_io_json_number_set(diag, "norm_cv", D->diag.norm_cv);
    if ((top = cJSON_AddArrayToObject(diag, "excess_kurtosis_top")) != NULL) {
      for (size_t k = 0; k < D->diag.ntop; k++) {
        cJSON_AddItemToArray(top, cJSON_CreateNumber(D->diag.kurt_top[k]));
      }
    }
    if (D->model_targets) {
      dpd_io_json_na_set(diag, "excess_kurtosis_residuals", "targets = model");
    } else {
      dpd_io_json_number_set(diag, "excess_kurtosis_residuals", D->diag.kurt_resid);
    }
    dpd_io_json_number_set(diag, "effective_rank", D->diag.eff_rank);
    dpd_io_json_number_set(diag, "rank", (double)D->diag.rank);
    dpd_io_json_number_set(diag, "leverage_max", D->diag.leverage_max);
    dpd_io_json_number_set(diag, "leverage_max_over_mean", D->diag.leverage_ratio);
  }
  if (simulated && ds->test_risk != NULL) {
    double m, se;
    mean_se(ds->test_risk, seeds, &m, &se);
    dpd_io_json_number_set(o, "held_out_risk", m);
    dpd_io_json_number_set(o, "held_out_risk_se", se);
  }
}

void dpd__linreg_dataset_free(dpd__linreg_dataset *ds) {
  dpd__lrdata_free(ds->D);
  free(ds->theta_model);
  free(ds->test_risk);
  memset(ds, 0, sizeof *ds);
}
