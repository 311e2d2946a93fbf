/* model=rf: the output of simulate | ou | compare after the computation (rf_run_impl.h,
 * dpd__rf_job_output): the replicates' and the OU theory's numbers, trajectory.tsv, the gaps of
 * compare, clipping.tsv and the per-replicate tables. The adapter (src/models/rf/rf_run.c) runs the
 * draws and writes the output's beginning. SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "dpdyn/compare.h"
#include "rf/rf_run_impl.h"


/* The DP-GD replicates' numbers and the notes on what they vary. */
static int sim_summary(dpd__rf_job *j, dpd_err *err) {
    const dpd_rf_sim_result *s = j->s;
  const size_t g = j->g;
  double v[8] = {s->test_mean[g - 1], s->test_se[g - 1],          s->train_mean[g - 1],
                 s->train_se[g - 1],  s->clip_fraction[j->T - 1], s->clip_fraction_total};
  int status = dpd__rf_sim_first_clip_stats(s, &v[6], &v[7], err);
  if (status < 0) {
    return status;
  }
  cJSON_AddNumberToObject(j->out->summary, "seeds", (double)j->seeds);
  cJSON_AddStringToObject(j->out->summary, "resample", dpd_rf_resample_name(j->resample));
  cJSON_AddNumberToObject(j->out->summary, "data_draws", (double)j->w->cfg.draws);
  dpd__output_numbers_set(j->out, "",
              "final_test_risk final_test_risk_se final_train_risk final_train_risk_se "
              "clipped_fraction_final clipped_fraction_mean first_clip_step_min "
              "first_clip_step_median",
              v, NULL);
  if (j->resample == DPD_RF_RESAMPLE_NOISE) {
    return dpd__output_note_add(
        j->out, err,
        "note: resample = noise: every replicate trains on the same data set (seed %llu), so the "
        "standard errors measure the noise alone, conditional on that data set; resample = all "
        "gives the spread of independent runs",
        (unsigned long long)j->seed);
  }
  return j->resample != DPD_RF_RESAMPLE_DATA
             ? DPD_OK
             : dpd__output_note_add(j->out, err,
                                    "note: resample = data: every replicate draws the same noise "
                                    "path, so the standard errors%s measure the data alone, "
                                    "conditional on that path; resample = all gives the spread "
                                    "of independent runs",
                                    j->ou ? " (and the gaps measured in them)" : "");
}

/* The OU theory over the draws and its numbers. */
static int ou_summary(dpd__rf_job *j, dpd_err *err) {
  const double eta = j->eta;
  const size_t g = j->g, T = j->T;
  const dpd__rf_ou_summary *th = &j->th;
  int status =
      dpd__rf_draws_ou_summary(j->w, j->per_draw ? j->s->test_replicates : NULL, &j->th, err);
  if (status < 0) {
    return status;
  }
  const double v[] = {th->a_max,
                      th->a_min,
                      eta * th->a_max,
                      th->exit_step <= T ? (double)th->exit_step : -1.0,
                      th->exit_step <= T ? eta * (double)th->exit_step : INFINITY,
                      th->risk[g - 1],
                      th->risk_se[g - 1],
                      th->bias[g - 1],
                      th->noise[g - 1],
                      th->risk_continuous[g - 1]};
  cJSON_AddNumberToObject(j->out->summary, "ou_rank", (double)th->rank);
  dpd__output_numbers_set(j->out, "ou_", "a_max a_min eta_a_max exit_step exit_tau", v, NULL);
  dpd__output_numbers_set(j->out, j->sim ? "ou_" : "", "final_test_risk", v + 5, NULL);
  if (!j->sim) {
    dpd_output_number_set(j->out, "final_test_risk_se", 0.0);
  }
  if (j->per_draw) {
    dpd_output_number_set(j->out, "ou_final_test_risk_se", v[6]);
  }
  dpd__output_numbers_set(j->out, j->sim ? "ou_" : "", "final_bias final_noise final_test_risk_continuous",
              v + 7, NULL);
  return DPD_OK;
}

/* trajectory.tsv on the grid: t, step, the DP-GD risks, the OU curves, theta*, the SEs. */
static int trajectory(dpd__rf_job *j, const double *t, const double *kk, double ts_test, dpd_err *err) {
  const dpd_rf_sim_result *s = j->s;
  const size_t g = j->g;
  const double *grid[2] = {t, kk},
               *th[4] = {j->th.risk, j->th.bias, j->th.noise, j->th.risk_continuous};
  const double *se[2] = {j->th.risk_se, j->th.gap_se};
  double *col;
  int status;
  if ((status = dpd_table_builder_create(g, &j->tb, err)) < 0 ||
      (status = dpd__table_builder_add_named(j->tb, "", "t step", grid, err)) < 0) {
    return status;
  }
  if (s != NULL) {
    const double *sim[4] = {s->train_mean, s->train_se, s->test_mean, s->test_se};
    if ((status = dpd__table_builder_add_named(j->tb, "", "train_risk train_risk_se test_risk test_risk_se", sim,
                              err)) < 0 ||
        (col = dpd_table_builder_column(j->tb, "clipped_fraction", err)) == NULL) {
      return status < 0 ? status : DPD_ENOMEM;
    }
    for (size_t i = 0; i < g; i++) {
      col[i] = s->clip_fraction[j->w->kgrid[i] < j->T ? j->w->kgrid[i] : j->T - 1];
    }
  }
  if ((j->ou && (status = dpd__table_builder_add_named(j->tb, s != NULL ? "ou_" : "",
                                      "test_risk bias noise test_risk_continuous", th, err)) < 0) ||
      (col = dpd_table_builder_column(j->tb, "theta_star_test_risk", err)) == NULL) {
    return status < 0 ? status : DPD_ENOMEM;
  }
  for (size_t i = 0; i < g; i++) {
    col[i] = ts_test;
  }
  return j->th.gap_se == NULL ? DPD_OK : dpd__table_builder_add_named(j->tb, "", "ou_test_risk_se gap_se", se, err);
}

/* save_replicates: replicates.tsv (each replicate's final test and train risk, and its first
 * clipped step, -1 if none, as the summary's first_clip_step_*; with one draw per replicate
 * also the theta* test risk of its own draw and, for compare, that draw's OU final test risk)
 * and, at 2, replicates_trajectory.tsv (each replicate's risks on the grid, named as
 * trajectory.tsv's columns they average to). */
static int add_replicates(const dpd__rf_job *j, const double *t, const double *kk, dpd_err *err) {
  const dpd_rf_sim_result *s = j->s;
  const size_t S = s->seeds, g = j->g;
  double *buf = malloc(6 * S * sizeof *buf);
  const double *fin[6] = {buf, buf + S, buf + 2 * S, buf + 3 * S, buf + 4 * S, buf + 5 * S};
  const double *shared[2] = {t, kk}, *per[2] = {s->train_replicates, s->test_replicates};
  int status;
  if (buf == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (seeds = %zu)", S);
  }
  for (size_t i = 0; i < S; i++) {
    buf[i] = s->test_replicates[i * g + g - 1];
    buf[S + i] = s->train_replicates[i * g + g - 1];
    buf[2 * S + i] = s->first_clip[i] < j->T ? (double)s->first_clip[i] : -1.0;
    buf[3 * S + i] = j->per_draw ? j->w->ts_test[i] : NAN;
    buf[4 * S + i] = j->per_draw && j->ou ? j->w->ou_d[i * g + g - 1] : NAN;
    buf[5 * S + i] = j->w->rows_hash[j->per_draw ? i : 0];
  }
  status = dpd__output_replicates_add(j->out, NULL,
                                      "final_test_risk final_train_risk first_clip_step "
                                      "theta_star_test_risk ou_final_test_risk data_rows_hash",
                                      S,
                                      j->has_data ? 6 /* file: the draw's rows as well */
                                      : !j->per_draw     ? 3
                                      : j->ou            ? 5
                                                         : 4,
                                      fin, err);
  free(buf);
  if (status == DPD_OK && j->save_replicates >= 2) {
    status = dpd__output_replicate_trajectory_add(j->out, NULL, "t step train_risk test_risk", S, g,
                                                  2, shared, 2, per, err);
  }
  return status;
}

/* clipping.tsv (every step) and the per-replicate tables. */
static int replicate_tables(const dpd__rf_job *j, const char *figure, const double *t, const double *kk,
                            dpd_err *err) {
  const size_t T = j->T;
  double *steps_all = malloc(2 * T * sizeof *steps_all);
  int status;
  if (steps_all == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < T; k++) {
    steps_all[k] = (double)k / (double)T;
    steps_all[T + k] = (double)k;
  }
  const double *ccols[3] = {steps_all, steps_all + T, j->s->clip_fraction};
  status = dpd_output_table_add(j->out, "clipping.tsv", figure, "t step clipped_fraction", T, 3,
                                ccols, err);
  free(steps_all);
  return status == DPD_OK && j->save_replicates > 0 ? add_replicates(j, t, kk, err) : status;
}

/* The gaps of compare (compare.h): DP-GD's mean test risk against the theory's, in the SE of the
 * paired differences when the theory is per draw, else in the simulation's SE. */
static int gaps(dpd__rf_job *j, dpd_err *err) {
  const double *se = j->th.gap_se != NULL ? j->th.gap_se : j->s->test_se;
  const dpd_compare_spec spec = {.theory = j->th.risk,
                                 .sim = j->s->test_mean,
                                 .se = se,
                                 .g = j->g,
                                 .final_theory = j->th.risk[j->g - 1],
                                 .final_sim = j->s->test_mean[j->g - 1],
                                 .final_se = se[j->g - 1]};
  return dpd_compare_add(j->out, j->tb, &spec, j->seeds, NULL, err);
}

int dpd__rf_job_output(dpd__rf_job *j, const char *figure, dpd_err *err) {
  const size_t g = j->g, draws = j->w->cfg.draws;
  double ts_train, ts_test, ts_train_se, ts_test_se, *t = malloc(2 * g * sizeof *t), *kk = t + g;
  int status = t == NULL ? DPD_FAIL(err, DPD_ENOMEM, "out of memory") : DPD_OK;
  for (size_t i = 0; t != NULL && i < g; i++) {
    t[i] = (double)j->w->kgrid[i] / (double)j->T;
    kk[i] = (double)j->w->kgrid[i];
  }
  dpd__rf_draws_mean_se(j->w->ts_train, draws, 1, &ts_train, &ts_train_se);
  dpd__rf_draws_mean_se(j->w->ts_test, draws, 1, &ts_test, &ts_test_se);
  if (status < 0 || (status = dpd__output_figure_set(j->out, figure, err)) < 0 ||
      (j->has_data && (status = dpd__rf_data_report(j->out, j->pc, draws, err)) < 0)) {
    free(t);
    return status;
  }
  if (j->theta_star) {
    const double v[] = {ts_train, ts_test, ts_test_se};
    dpd__output_numbers_set(j->out, "theta_star_",
                j->per_draw ? "train_risk test_risk test_risk_se" : "train_risk test_risk", v,
                NULL);
  }
  if ((!j->sim || (status = sim_summary(j, err)) == DPD_OK) &&
      (!j->ou || (status = ou_summary(j, err)) == DPD_OK) &&
      (status = trajectory(j, t, kk, ts_test, err)) == DPD_OK &&
      (!(j->sim && j->ou) || (status = gaps(j, err)) == DPD_OK)) {
    status = dpd_output_table_add_built(j->out, "trajectory.tsv", figure, j->tb, err);
    j->tb = NULL;
  }
  if (status == DPD_OK && j->s != NULL) {
    status = replicate_tables(j, figure, t, kk, err);
  }
  free(t);
  return status;
}

