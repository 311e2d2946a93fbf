/* model=nc: the commands, each on the context made by setup (nc_setup.c) (docs/nc.md).
 * SPDX-License-Identifier: MIT
 *
 * simulate  NoisyGD replicates (nc.h) that redraw the training shifts, the noise and the test
 *           points: the test error with its standard error, per class and per replicate.
 * compare   the same and the exact one-step error of notes B.5 on the same replicates, the
 *           paired gap, and the papers' bounds where they apply (src/nc/nc_compare.c).
 * account   the privacy of the run alone.
 * diagnose  the collapse diagnostics (nc_features.h) of the features. */
#include <math.h>

#include "core/error_impl.h"
#include "models/nc/nc_model_impl.h"

/* sigma from the multiplier and G (or the multiplier from a given sigma). */
static void noise_set(nc_ctx *x, double G) {
  x->sc.clip = 0.0; /* steps > 1: per-sample gradients clipped to G */
  if (x->budget == 3) { /* sigma */
    x->multiplier = G > 0.0 ? x->sc.sigma / G : 0.0;
  } else {
    x->sc.sigma = isfinite(x->multiplier) ? G * x->multiplier : INFINITY;
  }
}

/* The output of a training command: the problem (not built for account on files), G, the noise
 * and every guarantee of the run. */
typedef struct {
  dpd_nc_problem *problem, *base;
  dpd_nc_pca *pca;
  dpd_nc_sim_result *sim;
  dpd_table_builder *t[2]; /* classes, replicates */
} nc_built;

static int begin(nc_ctx *x, const dpd_keys *keys, const char *figure, nc_built *b,
                 dpd_output **outp, dpd_err *err) {
  const double T = (double)x->sc.steps;
  double G;
  int status = DPD_OK;
  if ((status = dpd__nc_problem_make(x->from_file ? &x->files : NULL, &x->pc,
                                     x->pca_on ? &x->pca : NULL, &x->resize,
                                     (x->uses & NC_USES_REPLICAS) != 0, &b->problem, &b->base,
                                     &b->pca, err)) < 0) {
    return status;
  }
  G = b->problem != NULL ? dpd_nc_sensitivity(b->problem, x->sc.loss) /* account on files: */
                         : dpd_nc_sensitivity_bound(x->pc.K, x->pc.n, x->files.x_bound,
                                                    x->files.x_bound, x->pc.normalize, x->sc.loss);
  noise_set(x, G);
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "nc", x->plot, x->pc.seed, outp,
                                  err)) < 0 ||
      (status = dpd__output_headline_set(
           *outp, err, "model nc, K = %zu, p = %zu, n = %zu, %zu step%s, seed %llu", x->pc.K,
           x->pc.p, x->pc.n, x->sc.steps, x->sc.steps == 1 ? "" : "s",
           (unsigned long long)x->pc.seed)) < 0 ||
      (figure != NULL &&
       (status = dpd__nc_figure_report(*outp, figure, "classes.tsv",
                            x->save_replicates > 0 ? "replicates.tsv" : "classes.tsv", err)) < 0)) {
    return status;
  }
  cJSON_AddNumberToObject((*outp)->summary, "steps", T);
  if (b->problem != NULL) {
    dpd_output_number_set(*outp, "x_norm_max", b->problem->x_norm_max);
  }
  if ((status = x->dpsgd.on ? dpd__nc_dpsgd_privacy(*outp, &x->dpsgd, x->pc.n, x->delta, err)
                            : dpd__nc_privacy_report(*outp, G, x->sc.sigma, x->multiplier,
                                                     x->budget_name, x->delta, x->sc.steps,
                                                     err)) < 0 ||
      (x->from_file && (status = dpd__nc_files_report(*outp, &x->files, 1, 0,
                                                      (x->uses & NC_USES_REPLICAS) != 0, err)) < 0)) {
    return status;
  }
  /* zCDP of the whole run: T steps of multiplier m are T / (2 m^2)-zCDP (inf: non-private) */
  return b->pca == NULL ? DPD_OK
                        : dpd__nc_pca_report(b->pca, x->multiplier > 0.0 && !x->dpsgd.on
                                                 ? T / (2.0 * x->multiplier * x->multiplier)
                                                 : INFINITY,
                                     *outp, err);
}

/* Frees what a command built; on failure the output too. */
static int end(nc_built *b, int status, dpd_output **out) {
  dpd_nc_sim_result_free(b->sim);
  dpd__nc_problem_release(b->problem, b->base, b->pca);
  dpd_table_builder_free(b->t[0]);
  dpd_table_builder_free(b->t[1]);
  if (status < 0) {
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}

/* The replicates, the summary's test error and the tables' columns (classes, replicates). */
static int simulate(nc_ctx *x, const dpd_keys *keys, const char *figure, nc_built *b,
                    dpd_output **out, dpd_err *err) {
  int status;
  if ((status = begin(x, keys, figure, b, out, err)) < 0 ||
      (status = x->dpsgd.on ? dpd_nc_dpsgd_run(b->problem, &x->sc, &x->dpsgd.cfg, &b->sim, err)
                            : dpd_nc_sim_run(b->problem, &x->sc, &b->sim, err)) < 0 ||
      (status = dpd__nc_sim_report(*out, b->problem, b->sim, b->t, err)) < 0 || !x->dpsgd.on) {
    return status;
  }
  status = dpd__nc_dpsgd_tables(*out, b->sim, b->t, err);
  return status < 0 || !x->from_file ? status : dpd__nc_collapse_report(*out, &x->files, err);
}

/* classes.tsv, and replicates.tsv when save_replicates = 1 (the builders are consumed). */
static int tables_add(dpd_output *out, const nc_ctx *x, const char *figure,
                      dpd_table_builder **t, dpd_err *err) {
  dpd_table_builder *reps = x->save_replicates > 0 ? t[1] : NULL;
  int status = dpd_output_table_add_built(out, "classes.tsv", figure, t[0], err);
  if (reps != t[1]) {
    dpd_table_builder_free(t[1]);
  }
  t[0] = t[1] = NULL;
  if (status == DPD_OK && reps != NULL) {
    status = dpd_output_table_add_built(out, "replicates.tsv", figure, reps, err);
  }
  return status;
}

int dpd__nc_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                     dpd_err *err) {
  nc_built b = {0};
  int status = simulate(ctx, keys, "nc_simulate", &b, out, err);
  (void)env;
  if (status == DPD_OK) {
    status = tables_add(*out, ctx, "nc_simulate", b.t, err);
  }
  return end(&b, status, out);
}

int dpd__nc_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  nc_ctx *x = ctx;
  nc_built b = {0};
  dpd__nc_comparison c = {0};
  int status = simulate(x, keys, "nc_compare", &b, out, err);
  (void)env;
  if (status == DPD_OK && x->dpsgd.on) {
    dpd__nc_dpsgd_comparison(&c); /* the exact one-step error is NoisyGD's: n/a */
  } else if (status == DPD_OK) {
    status = dpd__nc_compare_eval(b.problem, &x->sc, b.sim, &c, err);
  }
  if (status == DPD_OK &&
      (status = dpd__nc_compare_report(*out, &c, b.t, x->pc.K, x->sc.seeds, b.sim->test_error,
                                       err)) == DPD_OK) {
    status = tables_add(*out, x, "nc_compare", b.t, err);
  }
  dpd__nc_comparison_free(&c);
  return end(&b, status, out);
}

/* The noise and the guarantees alone. G needs the problem's features: the ETF law (built
 * without replicates), or, with file features, the public bound x_bound and the training set's
 * size and classes (the training file is read; test files are not needed). */
int dpd__nc_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                    dpd_err *err) {
  nc_ctx *x = ctx;
  nc_built b = {0};
  int status = begin(x, keys, NULL, &b, out, err);
  (void)env;
  if (status == DPD_OK && x->plot) {
    status = dpd__output_note_add(*out, err,
                                  "note: nothing to draw for account (its result is summary.json "
                                  "alone): plot = 1 has no effect");
  }
  return end(&b, status, out);
}

int dpd__nc_diagnose(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **outp,
                     dpd_err *err) {
  nc_ctx *x = ctx;
  const dpd__nc_files *f = &x->files;
  dpd_nc_diagnostics *train = NULL, *test = NULL;
  (void)keys;
  int status = x->from_file ? dpd__nc_diagnostics_files(f, env->progress, env->progress_user,
                                                        &train, &test, err)
                            : dpd__nc_diagnostics_law(&x->pc, &x->resize, env->progress,
                                                      env->progress_user, &train, err);
  if (status == DPD_OK &&
      (status = dpd__output_begin("diagnose", "nc", x->plot, x->pc.seed, outp, err)) == DPD_OK &&
      (status = dpd__output_headline_set(*outp, err,
                                         "model nc diagnose, %s, K = %zu, p = %zu, n = %zu",
                                         x->from_file ? f->train_cfg.path : "ETF law", train->K,
                                         train->p, train->n)) == DPD_OK &&
      (status = dpd__nc_figure_report(*outp, "nc_diagnose", "classes.tsv", "cosines.tsv",
                                      err)) == DPD_OK &&
      (status = dpd__nc_files_report(*outp, f, x->from_file, 1, 0, err)) == DPD_OK) {
    status = dpd__nc_diagnose_report(*outp, train, test, !x->from_file, err);
  }
  dpd_nc_diagnostics_free(train);
  dpd_nc_diagnostics_free(test);
  return end(&(nc_built){0}, status, outp);
}
