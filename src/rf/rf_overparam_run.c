/* model=rf, interpolate and sensitivity: the runs over the sizes and replicates, their tables,
 * summaries and figures (rf_overparam_impl.h, docs/overparameterization.md).
 * SPDX-License-Identifier: MIT
 *
 * Replicate r of every size is draw r of the problem (rf.h): its own inputs, labels, features V
 * and test points, so the standard errors are those of independent runs. Within a replicate the
 * sizes share the draw's streams: the training inputs do not change with p, and the features of
 * a smaller p are the first rows of V of a larger one. Dense algebra on one OpenBLAS thread:
 * bit-identical for any `threads`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "dpdyn/rf_overparam.h"
#include "rf/rf_overparam_impl.h"

/* mean and standard error of x[0..m) (stride s) */
static void mean_se(const double *x, size_t m, size_t s, double *mean, double *se) {
  double sum = 0.0, ss = 0.0;
  for (size_t i = 0; i < m; i++) {
    sum += x[i * s];
  }
  const double mu = sum / (double)m;
  for (size_t i = 0; i < m; i++) {
    ss += (x[i * s] - mu) * (x[i * s] - mu);
  }
  *mean = mu;
  *se = m > 1 ? sqrt(ss / (double)(m - 1) / (double)m) : NAN;
}

static int progress(const dpd_run_env *env, size_t done, size_t total, dpd_err *err) {
  return env->progress != NULL && env->progress(env->progress_user, "problems", done, total) != 0
             ? DPD_FAIL(err, DPD_ECANCELLED, "cancelled")
             : DPD_OK;
}

static dpd_rf_config size_config(const dpd_rf_config *pc, const dpd__rf_ovp *o, size_t k,
                                 size_t rep) {
  dpd_rf_config c = *pc;
  c.n = o->n[k];
  c.p = o->p[k];
  c.d = o->d[k];
  c.seed = o->seed;
  c.draw = rep;
  return c;
}

/* ---- interpolate ---- */

enum { I_LMIN, I_LMAX, I_LMINC, I_LMAXC, I_RES, I_NORM, I_RISK, I_FIELDS };

static void interp_store(const dpd_rf_interp_result *r, double *v) {
  v[I_LMIN] = r->lambda_min;
  v[I_LMAX] = r->lambda_max;
  v[I_LMINC] = r->lambda_min_centred;
  v[I_LMAXC] = r->lambda_max_centred;
  v[I_RES] = r->residual;
  v[I_NORM] = r->theta_star_norm;
  v[I_RISK] = r->theta_star_test_risk;
}

/* The replicates: vals[(k seeds + rep) I_FIELDS + f], bounds[rep]. */
static int interp_compute(const dpd_rf_config *pc, const dpd__rf_ovp *o, const dpd_run_env *env,
                          double *vals, dpd_rf_hermite_bound *bounds, dpd_err *err) {
  int status = DPD_OK;
  for (size_t rep = 0; status == DPD_OK && rep < o->seeds; rep++) {
    for (size_t k = 0; status == DPD_OK && k < o->count; k++) {
      const dpd_rf_config c = size_config(pc, o, k, rep);
      dpd_rf_problem *pr = NULL;
      dpd_rf_interp_result r;
      if ((status = dpd_rf_problem_create(&c, &pr, err)) == DPD_OK && k == 0) {
        double *X = malloc(c.n * c.d * sizeof *X);
        if (X == NULL) {
          status = DPD_FAIL(err, DPD_ENOMEM, "rf: out of memory (inputs, n = %zu)", c.n);
        } else {
          dpd_rf_problem_inputs_get(pr, 0, X);
          status = dpd_rf_hermite_bound_eval(c.activation, X, c.n, c.d, &bounds[rep], err);
          free(X);
        }
      }
      if (status == DPD_OK && (status = dpd_rf_interp_eval(pr, &r, err)) == DPD_OK) {
        interp_store(&r, vals + (k * o->seeds + rep) * I_FIELDS);
        status = progress(env, rep * o->count + k + 1, o->seeds * o->count, err);
      }
      dpd_rf_problem_free(pr);
    }
  }
  return status;
}

#define BOUND_STRIDE (sizeof(dpd_rf_hermite_bound) / sizeof(double))

static int interp_tables(dpd_output *out, const dpd__rf_ovp *o, const double *vals,
                         const dpd_rf_hermite_bound *bounds, double *bound_mean, dpd_err *err) {
  static const char *const names[] = {"lambda_min",          "lambda_max", "lambda_min_centred",
                                      "lambda_max_centred",  "residual",   "theta_star_norm",
                                      "theta_star_test_risk"};
  static const char *const bnames[] = {"bound", "kernel_lambda_min", "kernel_lambda_max",
                                       "hermite_sum"};
  const size_t m = o->count, s = o->seeds;
  const double *bfield[] = {&bounds[0].bound, &bounds[0].kernel_lambda_min,
                            &bounds[0].kernel_lambda_max, &bounds[0].hermite_sum};
  double mean[DPD__RF_OVP_SIZES_MAX], se[DPD__RF_OVP_SIZES_MAX], hcol[5][DPD_RF_HERMITE_MAX + 1];
  dpd_table_builder *b = NULL, *h = NULL;
  int status = dpd_table_builder_create(m, &b, err);
  for (size_t k = 0; k < m; k++) {
    mean[k] = (double)o->p[k];
  }
  if (status == DPD_OK &&
      (status = dpd_table_builder_add(b, "p_over_n", o->ratio, err)) == DPD_OK) {
    status = dpd_table_builder_add(b, "p", mean, err);
  }
  for (size_t f = 0; status == DPD_OK && f < I_FIELDS; f++) {
    char se_name[64];
    snprintf(se_name, sizeof se_name, "%s_se", names[f]);
    for (size_t k = 0; k < m; k++) {
      mean_se(vals + k * s * I_FIELDS + f, s, I_FIELDS, &mean[k], &se[k]);
    }
    if ((status = dpd_table_builder_add(b, names[f], mean, err)) == DPD_OK) {
      status = dpd_table_builder_add(b, se_name, se, err);
    }
  }
  for (size_t f = 0; f < 4; f++) {
    double bse;
    mean_se(bfield[f], s, BOUND_STRIDE, &bound_mean[f], &bse);
  }
  for (size_t f = 0; status == DPD_OK && f < 4; f++) {
    for (size_t k = 0; k < m; k++) {
      mean[k] = bound_mean[f];
    }
    status = dpd_table_builder_add(b, bnames[f], mean, err);
  }
  if (status == DPD_OK) {
    status = dpd_output_table_add_built(out, "interpolate.tsv", "rf_interpolate", b, err);
    b = NULL;
  }
  /* hermite.tsv: r, mu_r, mu_r^2, lambda_min(K1^(r)) (mean over replicates), mu_r^2 lambda_r */
  for (unsigned r = 0; r <= DPD_RF_HERMITE_MAX; r++) {
    double lam, lse;
    const double mu = bounds[0].mu_r[r];
    mean_se(&bounds[0].lambda_r[r], s, BOUND_STRIDE, &lam, &lse);
    hcol[0][r] = (double)r;
    hcol[1][r] = mu;
    hcol[2][r] = mu * mu;
    hcol[3][r] = lam;
    hcol[4][r] = r == 0 || mu == 0.0 ? 0.0 : mu * mu * lam;
  }
  static const char *const hn[] = {"r", "mu_r", "mu_r_sq", "lambda_r", "contribution"};
  if (status == DPD_OK) {
    status = dpd_table_builder_create(DPD_RF_HERMITE_MAX + 1, &h, err);
  }
  for (size_t f = 0; status == DPD_OK && f < 5; f++) {
    status = dpd_table_builder_add(h, hn[f], hcol[f], err);
  }
  if (status == DPD_OK) {
    status = dpd_output_table_add_built(out, "hermite.tsv", NULL, h, err);
    h = NULL;
  }
  dpd_table_builder_free(b);
  dpd_table_builder_free(h);
  return status;
}

static void interp_summary(dpd_output *out, const dpd__rf_ovp *o, const double *vals,
                           const double *bound_mean, const dpd_rf_config *pc) {
  const size_t k = o->count - 1, s = o->seeds;
  double mean, se;
  mean_se(vals + k * s * I_FIELDS + I_LMIN, s, I_FIELDS, &mean, &se);
  dpd_output_number_set(out, "lambda_min", mean);
  dpd_output_number_set(out, "lambda_min_se", se);
  mean_se(vals + k * s * I_FIELDS + I_LMAX, s, I_FIELDS, &mean, &se);
  dpd_output_number_set(out, "lambda_max", mean);
  dpd_output_number_set(out, "lambda_max_se", se);
  mean_se(vals + k * s * I_FIELDS + I_LMINC, s, I_FIELDS, &mean, &se);
  dpd_output_number_set(out, "lambda_min_centred", mean);
  mean_se(vals + k * s * I_FIELDS + I_LMAXC, s, I_FIELDS, &mean, &se);
  dpd_output_number_set(out, "lambda_max_centred", mean);
  mean_se(vals + k * s * I_FIELDS + I_RES, s, I_FIELDS, &mean, &se);
  dpd_output_number_set(out, "residual", mean);
  mean_se(vals + k * s * I_FIELDS + I_NORM, s, I_FIELDS, &mean, &se);
  dpd_output_number_set(out, "theta_star_norm", mean);
  dpd_output_number_set(out, "theta_star_norm_se", se);
  mean_se(vals + k * s * I_FIELDS + I_RISK, s, I_FIELDS, &mean, &se);
  dpd_output_number_set(out, "theta_star_test_risk", mean);
  dpd__output_numbers_set(out, "", "bound kernel_lambda_min kernel_lambda_max hermite_sum",
                          bound_mean, NULL);
  dpd_output_number_set(out, "mu_1", dpd_rf_activation_hermite(pc->activation, 1));
  dpd_output_number_set(out, "p", (double)o->p[k]);
  dpd_output_number_set(out, "p_over_n", (double)o->p[k] / (double)o->n[k]);
  cJSON_AddNumberToObject(out->summary, "seeds", (double)s);
}

int dpd__rf_interp_run(const dpd_rf_config *pc, const dpd__rf_ovp *o, const dpd_keys *keys,
                       const dpd_run_env *env, int plot, dpd_output **out, dpd_err *err) {
  double *vals = malloc(o->count * o->seeds * I_FIELDS * sizeof *vals), bound_mean[4];
  dpd_rf_hermite_bound *bounds = malloc(o->seeds * sizeof *bounds);
  int status = DPD_OK;
  *out = NULL;
  if (vals == NULL || bounds == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  openblas_set_num_threads(1);
  if (status == DPD_OK && (status = interp_compute(pc, o, env, vals, bounds, err)) == DPD_OK &&
      (status = dpd__output_begin(dpd_keys_command_get(keys), "rf", plot, o->seed, out, err)) ==
          DPD_OK &&
      (status = dpd__output_headline_set(
           *out, err, "model rf interpolate, d = %zu, n = %zu, %zu values of p, %s, seed %llu",
           pc->d, pc->n, o->count, dpd_rf_activation_name(pc->activation),
           (unsigned long long)o->seed)) == DPD_OK &&
      (status = interp_tables(*out, o, vals, bounds, bound_mean, err)) == DPD_OK) {
    interp_summary(*out, o, vals, bound_mean, pc);
    status = dpd__output_figure_record(*out, "rf_interpolate", "interpolate.tsv",
                                       "interpolate.tsv", err);
    if (status == DPD_OK && pc->input != DPD_RF_INPUT_SPHERE) {
      status = dpd__output_note_add(*out, err,
                                    "note: the Hermite bound and kernel limit assume |x_i|^2 = d "
                                    "(input = sphere); with input = %s they hold approximately",
                                    dpd_rf_input_name(pc->input));
    }
  }
  free(vals);
  free(bounds);
  if (status < 0) {
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}
