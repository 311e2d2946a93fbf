/* model=linreg: the keys turned into the context every command runs on (linreg_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * Validates every key before anything runs (what a command uses is in its `uses` bits), then
 * records the keys in effect: those of the command and of the schedule family; the others are
 * dropped (the CLI notes the flags that had no effect). Nothing large is built before the run. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/noise_impl.h"
#include "core/table_impl.h"
#include "dpdyn/clip.h"
#include "dpdyn/linreg_setting.h"
#include "linreg/report_impl.h"
#include "models/linreg/linreg_impl.h"

/* The keys of the ODE (compression, finite size) and of the SDE. */
static int solver_keys(const dpd_model_command *c, const dpd_keys *keys, linreg_run *r,
                       dpd_err *err) {
  static const int finite[] = {DPD_FINITE_OFF, DPD_FINITE_ON, DPD_FINITE_AUTO}; /* off|on|auto */
  size_t choice, nodes, bands, v;
  int status;
  r->spectral.cc = dpd_linreg_compress_config_default();
  if (r->uses_ode) {
    if ((status = dpd_keys_choice_get(keys, "compress", &choice, err)) < 0 ||
        (status = dpd_keys_real_range_get(keys, "compress_tol", 0.0, 0, 1.0, 0, 0, &r->compress_tol,
                                          err)) < 0 ||
        (status = dpd_keys_size_range_get(keys, "compress_nodes", 1, 30, &nodes, err)) < 0 ||
        (status = dpd_keys_size_range_get(keys, "compress_bands", 1, 100, &bands, err)) < 0) {
      return status;
    }
    r->compress = choice == 0 ? 2 : choice == 1 ? 1 : 0; /* auto|on|off */
    r->spectral.cc.nodes = (int)nodes;
    r->spectral.cc.bands_per_decade = (int)bands;
  }
  r->finite_size = DPD_FINITE_OFF;
  if (c->uses & (LR_USES_ODE | LR_USES_SDE)) {
    if ((status = dpd_keys_choice_get(keys, "finite_size", &choice, err)) < 0) {
      return status;
    }
    r->finite_size = finite[choice];
  }
  r->noise.zeta = r->zeta;
  if (dpd_keys_given(keys, "dt") &&
      (status = dpd_keys_real_range_get(keys, "dt", 0.0, 0, 1.0, 1, 0, &r->dt, err)) < 0) {
    return status;
  }
  if ((status = dpd_keys_size_range_get(keys, "sde", 0, 1, &v, err)) < 0) {
    return status;
  }
  r->with_sde = (c->uses & LR_USES_SDE) || ((c->uses & LR_USES_SDE_KEY) && v == 1);
  if (isfinite(r->priv.rho) && isinf(r->c)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': inf with rho = %g (allowed: finite c > 0 when rho is "
                    "finite: the noise is calibrated to the clipping threshold)",
                    r->priv.rho);
  }
  return DPD_OK;
}

/* The memory the command needs (the kernels' own models, problem_spec_impl.h) and the key
 * whose term dominates. */
static void memory_estimate(const dpd_model_command *c, const dpd_keys *keys, linreg_run *r) {
  const double threads = r->threads > 0 ? r->threads : omp_get_max_threads();
  const double ode_groups = dpd__linreg_ode_groups(&r->pc, r->uses_ode && r->compress != 0,
                                                   r->spectral.cc.bands_per_decade);
  double by_d = dpd__linreg_problem_bytes(&r->pc, r->full, ode_groups), by_n = 0.0, by_seeds = 0.0;
  if ((c->uses & (LR_USES_SIM | LR_USES_SDE)) || r->with_sde) {
    dpd__linreg_sim_bytes(r->d, r->n, r->seeds, r->grid, threads, r->with_sde, &by_d, &by_n,
                          &by_seeds);
    by_seeds += dpd__model_replicates_bytes(r->save_replicates, r->seeds, r->grid,
                                            r->with_sde ? 6 : 3, r->with_sde ? 5 : 3);
  }
  if (r->uses_ode) {
    by_d += dpd__linreg_ode_bytes(ode_groups);
  }
  if (c->uses & LR_USES_SEQUENCE) {
    by_n += 16.0 * (double)r->n; /* the steps and noise scales */
  }
  by_d += r->ds.bytes; /* the dataset (0 without one) */
  if (by_n >= by_d && by_n >= by_seeds) {
    r->driver = dpd_keys_given(keys, "n") || !dpd_keys_given(keys, "gamma") ? "n" : "gamma";
  } else {
    r->driver = by_seeds >= by_d   ? "seeds"
                : r->ds.on           ? "features"
                : r->d_from_spectrum ? "spectrum"
                                     : "d";
  }
  r->memory_estimate = by_d + by_n + by_seeds + 8.0 * 8.0 * (double)r->grid;
}

/* Drops the keys not in effect: those of other commands (table) and the parameters of the
 * schedule families other than the run's, so that summaries and headers record only what the
 * run used. */
static void keys_in_effect(dpd_keys *keys, const dpd__linreg_dataset *ds) {
  dpd__linreg_dataset_keys_in_effect(keys, ds);
  const char *schedule = dpd_keys_text_get(keys, "schedule");
  const dpd_schedule_family *own = schedule != NULL ? dpd_schedule_family_lookup(schedule) : NULL;
  const dpd_schedule_family *f;
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  for (size_t i = 0; own != NULL && (f = dpd_schedule_family_at(i)) != NULL; i++) {
    for (const dpd_schedule_param *q = f->params; q->key != NULL; q++) {
      if (!dpd_schedule_family_reads(own, q->key)) {
        dpd_keys_unset(keys, q->key);
      }
    }
  }
}

/* The configurations of the runs, from the one setting of the run (linreg_setting.h): simulate,
 * sde and ode (and tune) cannot disagree. */
static void configs(linreg_run *r) {
  dpd_linreg_setting s = dpd_linreg_setting_default();
  s.n = r->n;
  s.zeta = r->zeta;
  s.noise = r->noise.law;
  s.noise_nu = r->noise.nu;
  s.c = r->c;
  s.rho = r->priv.rho;
  r->oc = dpd_ode_config_init(&s, r->d); /* gamma = d/n = r->gamma */
  r->oc.grid = r->grid;
  r->oc.method = r->method;
  r->oc.rtol = r->rtol;
  r->oc.atol = r->atol;
  r->oc.finite_size = r->finite_size;
  r->simc = dpd_linreg_sim_config_init(&s);
  r->sdec = dpd_linreg_sde_config_init(&s);
  r->simc.seeds = r->sdec.seeds = r->seeds;
  r->simc.seed = r->sdec.seed = r->seed;
  r->simc.grid = r->sdec.grid = r->grid;
  r->simc.threads = r->sdec.threads = r->threads;
  r->simc.progress = r->sdec.progress = r->env->progress != NULL ? dpd__model_progress : NULL;
  r->simc.progress_user = r->sdec.progress_user = &r->progress;
  r->sdec.dt = r->dt;
  r->sdec.finite_size = r->finite_size;
}

/* Every key, in the order of the messages (which key is reported first). */
static int setup(const dpd_model_command *c, dpd_keys *keys, linreg_run *r, dpd_err *err) {
  const char *method = dpd_keys_text_get(keys, "method");
  size_t threads;
  int status;
  if (((c->uses & LR_USES_TUNE) && (status = dpd__tune_keys(keys, &r->tune, err)) < 0) ||
      (status = dpd_noise_spec_parse(dpd_keys_text_get(keys, "noise"), &r->noise, err)) < 0 ||
      (status = dpd__linreg_privacy_keys(keys, &r->priv, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "zeta", 0.0, 1, INFINITY, 0, 0, &r->zeta, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "c", 0.0, 0, INFINITY, 0, 1, &r->c, err)) < 0 ||
      (status = dpd_keys_size_range_get(keys, "seeds", 1, (size_t)1 << 24, &r->seeds, err)) < 0 ||
      (status = dpd_keys_size_range_get(keys, "grid", 2, (size_t)1 << 24, &r->grid, err)) < 0 ||
      (status = dpd_keys_size_range_get(keys, "threads", 0, 4096, &threads, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &r->seed, err)) < 0 ||
      (status = dpd__model_save_replicates_get(keys, 2, &r->save_replicates, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "rtol", 0.0, 0, 1.0, 0, 0, &r->rtol, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "atol", 0.0, 0, INFINITY, 0, 0, &r->atol, err)) < 0 ||
      (status = solver_keys(c, keys, r, err)) < 0) {
    return status;
  }
  r->threads = (int)threads;
  if (dpd_ode_method_lookup(method) == NULL) {
    char allowed[128];
    dpd__linreg_method_names(0, 0, allowed, sizeof allowed);
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'method': '%s' (allowed: %s)", method,
                    allowed);
  }
  r->method = dpd_ode_method_lookup(method)->id;
  if ((status = dpd__model_plot_get(keys, c->plot_default, &r->plot, err)) < 0 ||
      (status = dpd__linreg_dataset_keys(keys, r->seed, r->env->max_memory, r->threads,
                                         (c->uses & (LR_USES_ODE | LR_USES_TUNE)) != 0, &r->ds,
                                         err)) < 0 ||
      (status = dpd__linreg_problem_keys(keys, r->seed, r->env->max_memory, r->ds.d, &r->inputs,
                                         &r->pc, &r->d_from_spectrum, err)) < 0) {
    return status;
  }
  r->d = r->pc.d;
  if ((status = r->ds.on ? dpd__linreg_dataset_n(keys, &r->ds, &r->n, err)
                         : dpd__linreg_size_keys(keys, r->d, &r->n, err)) < 0) {
    return status;
  }
  r->gamma = (double)r->d / (double)r->n;
  /* the per-coordinate problem: a simulation, or an ODE that a spectral problem cannot do */
  r->full = !(c->uses & LR_USES_ODE_ONLY) || r->compress == 0 || r->ds.on ||
            !dpd__linreg_spectral_direct(&r->pc);
  if ((status = dpd_keys_effective_real_set(keys, "d", (double)r->d, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "n", (double)r->n, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "gamma", r->gamma, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "rho", r->priv.rho, err)) < 0 ||
      (status = dpd__linreg_schedule_keys(keys, r->gamma, r->priv.rho, r->env->max_memory,
                                          r->sched_cols, &r->schedule_cfg, &r->schedule, err)) <
          0) {
    return status;
  }
  /* the ODE method's requirements: tune's, or the schedule and c of the other ODE commands */
  if (((c->uses & LR_USES_TUNE) || r->uses_ode) &&
      (status = dpd__linreg_method_check(dpd_ode_method_type_get(r->method),
                                         (c->uses & LR_USES_TUNE) != 0, r->schedule,
                                         dpd_keys_text_get(keys, "schedule"), r->c, err)) < 0) {
    return status;
  }
  memory_estimate(c, keys, r);
  if ((c->uses & LR_USES_AUDIT) &&
      (status = dpd__linreg_audit_keys(keys, &r->priv, r->d, r->n, r->threads, &r->memory_estimate,
                                       err)) < 0) {
    return status;
  }
  configs(r);
  keys_in_effect(keys, &r->ds);
  return DPD_OK;
}

int dpd__linreg_setup(const dpd_model_command *c, dpd_keys *keys, const dpd_run_env *env,
                      void **ctx, dpd_err *err) {
  linreg_run *r = calloc(1, sizeof *r);
  int status;
  *ctx = r;
  if (r == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  r->env = env;
  r->keys = keys;
  r->progress = (dpd__progress_bridge){env, "replicates"};
  r->uses_ode = (c->uses & LR_USES_ODE) != 0;
  r->spectral.pc = &r->pc;
  if ((c->uses & LR_USES_SEQUENCE) && dpd_keys_given(keys, "sequence")) {
    r->sequence = 1;
    return dpd__linreg_sequence_keys(keys, &r->priv, err);
  }
  if ((status = setup(c, keys, r, err)) < 0) {
    dpd__linreg_release(r);
    *ctx = NULL;
  }
  return status;
}

void dpd__linreg_release(void *ctx) {
  linreg_run *r = ctx;
  if (r == NULL) {
    return;
  }
  if (r->ode_problem != r->problem) {
    dpd_linreg_problem_free(r->ode_problem);
  }
  dpd_linreg_problem_free(r->problem);
  dpd__linreg_spectral_free(&r->spectral);
  dpd_schedule_free(r->schedule);
  free(r->sched_cols[0]);
  free(r->sched_cols[1]);
  dpd__linreg_inputs_free(&r->inputs);
  dpd__linreg_dataset_free(&r->ds);
  free(r);
}

double dpd__linreg_workspace_bytes(const void *ctx, const dpd_model_command *c,
                                   const char **driver) {
  const linreg_run *r = ctx;
  (void)c;
  *driver = r->driver;
  return r->sequence ? 0.0 : r->memory_estimate;
}

int dpd__linreg_build(linreg_run *r, dpd_err *err) {
  dpd_linreg_problem *sp = NULL;
  int status;
  if ((r->ds.on && (status = dpd__linreg_dataset_build(&r->ds, &r->pc, err)) < 0) ||
      (r->full && (status = dpd_linreg_problem_create(&r->pc, &r->problem, err)) < 0) ||
      (r->ds.on && (status = dpd__linreg_dataset_bind(&r->ds, r->problem, r->c, r->seeds, &r->zeta,
                                                      &r->oc, &r->simc, &r->sdec, err)) < 0) ||
      (r->ds.on && (status = dpd_keys_effective_real_set(r->keys, "zeta", r->zeta, err)) < 0)) {
    return status;
  }
  r->ode_problem = r->problem;
  r->spectral.full = r->problem;
  r->spectral.threads = r->threads;
  if (!r->uses_ode || r->compress == 0) {
    return DPD_OK;
  }
  if ((status = dpd__linreg_spectral_problem(&r->spectral, r->spectral.cc.nodes, &sp, err)) < 0) {
    return status;
  }
  /* auto: only when it at least halves the groups (a spectral problem built straight from the
   * configuration is used in any case: it is exact where it does not compress) */
  if (r->compress == 1 || r->problem == NULL || 2 * sp->ngroups <= r->problem->ngroups) {
    r->ode_problem = sp;
  } else {
    dpd_linreg_problem_free(sp);
  }
  return DPD_OK;
}

int dpd__linreg_output_begin(const dpd_keys *keys, const linreg_run *r, dpd_output **outp,
                             dpd_err *err) {
  const dpd_linreg_problem *p = r->problem != NULL ? r->problem : r->ode_problem;
  cJSON *s;
  int status;
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "linreg", r->plot, r->seed, outp,
                                  err)) < 0 ||
      (status = dpd__output_headline_set(
           *outp, err, "model linreg, d = %zu, n = %zu, schedule %s, seed %llu", r->d, r->n,
           dpd_schedule_name(r->schedule), (unsigned long long)r->seed)) < 0) {
    return status;
  }
  s = (*outp)->summary;
  cJSON_AddNumberToObject(s, "d", (double)r->d);
  cJSON_AddNumberToObject(s, "n", (double)r->n);
  cJSON_AddNumberToObject(s, "gamma", r->gamma);
  cJSON_AddStringToObject(s, "noise_law", dpd_noise_law_name(r->noise.law));
  if (dpd__noise_law_has_parameter(r->noise.law)) {
    cJSON_AddNumberToObject(s, "noise_nu", r->noise.nu);
  }
  cJSON_AddStringToObject(s, "schedule", dpd_schedule_name(r->schedule));
  cJSON_AddNumberToObject(s, "initial_excess_risk", dpd_linreg_initial_risk(p));
  cJSON_AddNumberToObject(s, "memory_estimate_bytes", round(r->memory_estimate));
  return dpd__linreg_report_privacy(*outp, &r->priv, r->n, r->schedule, p, r->ds.D, err);
}
