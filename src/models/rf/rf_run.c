/* model=rf: the commands simulate | ou | compare | account on the context of rf_model.c.
 * SPDX-License-Identifier: MIT
 *
 * simulate, ou and compare build the problem (one, or one per replicate as `resample` says),
 * then the DP-GD replicates and/or the OU theory of each draw (src/rf/rf_draws.c); compare hands
 * both to dpd_compare_add (compare.h), in the standard error of the paired differences when the
 * theory is per draw: docs/rf.md, "Replicates: what varies". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "dpdyn/compare.h"
#include "dpdyn/privacy.h"
#include "models/rf/rf_impl.h"
#include "rf/rf_run_impl.h"

/* The output every rf command starts from: headline, the run's scalars and its privacy (the
 * moments calibration is undefined without privacy and outside its bound's range). */
static int output_begin(const dpd_keys *keys, const dpd__rf_ctx *r, dpd_output **out,
                        dpd_err *err) {
  const double eta = r->sc.eta, T = (double)r->sc.T, sigma = r->sc.sigma;
  const double mu = sigma > 0.0 ? sqrt(eta * T) / sigma : INFINITY;
  const dpd__rf_privacy_plan *pl = &r->privacy;
  const double v[] = {
      sigma,       pl->sigma_exact,   pl->sigma_moments, pl->sigma_moments / pl->sigma_exact,
      pl->epsilon, pl->epsilon_exact, pl->eps_moments,   r->delta,
      mu};
  dpd_privacy_guarantee g;
  int status;
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "rf", r->plot, r->sc.seed, out,
                                  err)) < 0 ||
      (status = dpd__output_headline_set(
           *out, err, "model rf, d = %zu, n = %zu, p = %zu, %s, seed %llu", r->pc.d, r->pc.n,
           r->pc.p, dpd_rf_activation_name(r->pc.activation), (unsigned long long)r->sc.seed)) <
          0) {
    return status;
  }
  dpd_output_number_set(*out, "eta", eta);
  cJSON_AddNumberToObject((*out)->summary, "steps", T);
  dpd_output_number_set(*out, "tau", eta * T);
  if (r->memory_estimate > 0.0) {
    cJSON_AddNumberToObject((*out)->summary, "memory_estimate_bytes", round(r->memory_estimate));
  }
  dpd_output_number_set(*out, "clip_norm",
                        isfinite(r->sc.clip) ? r->sc.clip * sqrt((double)r->pc.p) : INFINITY);
  dpd__output_numbers_set(*out, "",
              "sigma sigma_exact sigma_moments sigma_ratio_moments_over_exact epsilon "
              "epsilon_exact epsilon_of_sigma_moments delta mu_gdp",
              v,
              sigma > 0.0 ? "the moments bound holds only for epsilon < 8 log(1/delta)"
                          : "the run is not private (sigma = 0): no moments calibration");
  /* Every guarantee of the run (docs/privacy.md): mu-GDP exactly (Gaussian noise). */
  if (dpd_privacy_guarantee_from_gdp(mu, r->delta, &g, NULL) == DPD_OK) {
    dpd__output_guarantee(*out, &g);
  }
  cJSON_AddStringToObject((*out)->summary, "calibration",
                          pl->budget != DPD__RF_BUDGET_EPSILON ? "none"
                          : pl->moments                        ? "moments"
                                                               : "exact");
  return DPD_OK;
}

int dpd__rf_run_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                        dpd_err *err) {
  const dpd__rf_ctx *r = ctx;
  int status = output_begin(keys, r, out, err);
  (void)env;
  if (status == DPD_OK) {
    const double s = r->privacy.sigma_exact;
    dpd_output_number_set(*out, "mu_exact",
                          s > 0.0 ? sqrt(r->sc.eta * (double)r->sc.T) / s : INFINITY);
  }
  return status;
}

int dpd__rf_run_audit(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                      dpd_err *err) {
  const dpd__rf_ctx *r = ctx;
  int status = output_begin(keys, r, out, err);
  (void)env;
  return status < 0 ? status : dpd__rf_audit_output(*out, &r->pc, &r->sc, keys, r->delta, err);
}

/* simulate (uses SIM), ou (OU), compare (both). */
static int run(const dpd__rf_ctx *r, unsigned uses, const dpd_keys *keys, const dpd_run_env *env,
               dpd_output **out, dpd_err *err) {
  dpd__rf_job j = {.sim = (uses & DPD__RF_USES_SIM) != 0,
                   .ou = (uses & DPD__RF_USES_OU) != 0,
                   .seeds = r->sc.seeds,
                   .seed = r->sc.seed,
                   .eta = r->sc.eta,
                   .resample = r->resample,
                   .save_replicates = r->save_replicates,
                   .has_data = r->data != NULL,
                   .theta_star = r->theta_star,
                   .pc = &r->pc};
  j.g = r->sc.grid;
  j.T = r->sc.T;
  j.per_draw = j.sim && r->resample != DPD_RF_RESAMPLE_NOISE;
  const dpd__rf_draws_config dc = {.theta_star = r->theta_star,
                                   .ou = j.ou,
                                   .eta = r->sc.eta,
                                   .clip = r->sc.clip,
                                   .sigma = r->sc.sigma,
                                   .T = j.T,
                                   .g = j.g,
                                   .draws = j.per_draw ? r->sc.seeds : 1,
                                   .progress = env->progress,
                                   .progress_user = env->progress_user};
  /* theta* (dgelsd) and the OU eigenproblem (dsyevd) run in LAPACK, whose rounding depends on
   * OpenBLAS's thread count; one thread keeps every output bit-identical for any `threads`
   * (dpdyn's own kernels use OpenMP). On two cores this costs nothing measurable. */
  openblas_set_num_threads(1);
  int status = dpd__rf_draws_create(&dc, &j.w, err);
  if (status == DPD_OK &&
      (status = dpd__rf_draws_run(&r->pc, &r->sc, r->resample, j.sim, j.w, &j.s, err)) == DPD_OK) {
    const char *figure = j.sim && j.ou ? "rf_compare" : j.sim ? "rf_simulate" : "rf_ou";
    if ((status = output_begin(keys, r, &j.out, err)) == DPD_OK) {
      status = dpd__rf_job_output(&j, figure, err);
    }
  }
  dpd__rf_draws_free(j.w);
  dpd_rf_sim_result_free(j.s);
  dpd__rf_ou_summary_free(&j.th);
  dpd_table_builder_free(j.tb);
  if (status < 0) {
    dpd_output_free(j.out);
    j.out = NULL;
  }
  *out = j.out;
  return status;
}

int dpd__rf_run_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                         dpd_err *err) {
  return run(ctx, DPD__RF_USES_SIM, keys, env, out, err);
}

int dpd__rf_run_ou(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                   dpd_err *err) {
  return run(ctx, DPD__RF_USES_OU, keys, env, out, err);
}

int dpd__rf_run_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                        dpd_err *err) {
  return run(ctx, DPD__RF_USES_SIM | DPD__RF_USES_OU, keys, env, out, err);
}
