/* model=rf, sensitivity: S(x) = |x| |grad_x f(x; theta)| at the test points of each replicate,
 * for theta* = Phi^+ y and for DP-GD's last iterate, over a list of sizes (n or p); the growth
 * exponent of the mean against the slides' prediction (rf_overparam_impl.h,
 * docs/overparameterization.md "Sensitivity").
 * SPDX-License-Identifier: MIT
 *
 * Replicates as in rf_overparam_run.c: replicate r is draw r of the problem; DP-GD's noise of
 * replicate r is stream 0 of the master key seed XOR (r + 1) * 0x9E3779B97F4A7C15. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "dpdyn/rf_overparam.h"
#include "rf/rf_overparam_impl.h"

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

/* Per size and replicate: S of theta* (mean, q10, q50, q90), the same for DP-GD, the test risks,
 * sigma and epsilon. */
enum { S_MEAN, S_Q10, S_Q50, S_Q90, D_MEAN, D_Q10, D_Q50, D_Q90, R_STAR, R_DPGD, SIGMA, EPS, NF };

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* mean and the 10/50/90 % quantiles (linear interpolation between order statistics) of S[0..m),
 * sorted in place. */
static void describe(double *S, size_t m, double *v) {
  double sum = 0.0;
  for (size_t i = 0; i < m; i++) {
    sum += S[i];
  }
  qsort(S, m, sizeof *S, cmp_double);
  v[0] = sum / (double)m;
  const double q[] = {0.1, 0.5, 0.9};
  for (int k = 0; k < 3; k++) {
    const double h = q[k] * (double)(m - 1);
    const size_t lo = (size_t)floor(h), hi = lo + 1 < m ? lo + 1 : lo;
    v[1 + k] = S[lo] + (h - (double)lo) * (S[hi] - S[lo]);
  }
}

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

/* DP-GD on the problem: eta, T, delta of this size (given, or 1/p, 5 d, 1/n), sigma from the
 * budget; its last iterate into theta, sigma and the delivered epsilon into v. */
static int dpgd_run(const dpd_rf_problem *pr, const dpd__rf_ovp *o, size_t rep, double *theta,
                    double *v, dpd_err *err) {
  dpd_rf_sim_config sc = dpd_rf_sim_config_default();
  dpd__rf_privacy_plan plan;
  dpd_rf_sim_result *res = NULL;
  sc.eta = o->eta > 0.0 ? o->eta : 1.0 / (double)pr->p;
  sc.T = o->steps > 0 ? o->steps : 5 * pr->d;
  sc.clip = o->clip;
  sc.seeds = 1;
  sc.grid = 2;
  sc.threads = o->threads;
  sc.seed = o->seed ^ ((uint64_t)(rep + 1) * GOLDEN);
  const double delta = o->delta > 0.0 ? o->delta : 1.0 / (double)pr->n;
  int status = dpd__rf_privacy_plan_sigma(sc.eta, sc.T, delta, o->budget, o->budget_value,
                                          o->moments, &plan, err);
  if (status == DPD_OK) {
    status = dpd__rf_privacy_plan_delivered(sc.eta, sc.T, delta, &plan, err);
  }
  sc.sigma = plan.sigma;
  if (status == DPD_OK && (status = dpd_rf_sim_run(pr, &sc, &res, err)) == DPD_OK) {
    memcpy(theta, res->theta_last, pr->p * sizeof *theta);
    v[SIGMA] = plan.sigma;
    v[EPS] = plan.sigma > 0.0 ? plan.epsilon_exact : INFINITY;
  }
  dpd_rf_sim_result_free(res);
  return status;
}

/* One size and replicate into v[NF]. */
static int sens_one(const dpd_rf_config *c, const dpd__rf_ovp *o, size_t rep, double *v,
                    dpd_err *err) {
  dpd_rf_problem *pr = NULL;
  int status = dpd_rf_problem_create(c, &pr, err);
  if (status < 0) {
    return status;
  }
  const size_t nt = pr->n_test, d = pr->d, p = pr->p;
  double *X = malloc(nt * d * sizeof *X), *S = malloc(nt * sizeof *S);
  double *theta = malloc(p * sizeof *theta);
  if (X == NULL || S == NULL || theta == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "rf: out of memory (sensitivity, n_test = %zu)", nt);
  }
  if (status == DPD_OK) {
    dpd_rf_problem_inputs_get(pr, 1, X);
    status = dpd_rf_theta_star_get(pr, -1.0, theta, NULL, &v[R_STAR], err);
  }
  if (status == DPD_OK && (status = dpd_rf_sensitivity_eval(c->activation, pr->V, p, d, theta, X,
                                                            nt, S, err)) == DPD_OK) {
    describe(S, nt, v + S_MEAN);
  }
  for (int k = D_MEAN; k <= R_DPGD; k++) {
    v[k] = k == R_STAR ? v[k] : NAN;
  }
  v[SIGMA] = NAN;
  v[EPS] = NAN;
  if (status == DPD_OK && o->dpgd && (status = dpgd_run(pr, o, rep, theta, v, err)) == DPD_OK &&
      (status = dpd_rf_sensitivity_eval(c->activation, pr->V, p, d, theta, X, nt, S, err)) ==
          DPD_OK) {
    describe(S, nt, v + D_MEAN);
    v[R_DPGD] = dpd_rf_risk_eval(pr, theta, 1);
  }
  free(X);
  free(S);
  free(theta);
  dpd_rf_problem_free(pr);
  return status;
}

/* Least squares of log S_k on log x_k: slope b, its SE propagated from the replicates' SE of
 * each mean (se_rep; independent sizes) and from the residuals (se_fit; NAN below 3 sizes). */
static void fit(const double *x, const double *S, const double *se, size_t m, double *b,
                double *se_rep, double *se_fit, double *a) {
  double mx = 0.0, my = 0.0, sxx = 0.0, sxy = 0.0, var = 0.0, rss = 0.0;
  for (size_t k = 0; k < m; k++) {
    mx += log(x[k]) / (double)m;
    my += log(S[k]) / (double)m;
  }
  for (size_t k = 0; k < m; k++) {
    const double dx = log(x[k]) - mx;
    sxx += dx * dx;
    sxy += dx * (log(S[k]) - my);
    var += dx * dx * (se[k] / S[k]) * (se[k] / S[k]);
  }
  *b = m >= 2 && sxx > 0.0 ? sxy / sxx : NAN;
  *a = my - *b * mx;
  for (size_t k = 0; k < m; k++) {
    const double r = log(S[k]) - *a - *b * log(x[k]);
    rss += r * r;
  }
  *se_rep = m >= 2 && sxx > 0.0 ? sqrt(var) / sxx : NAN;
  *se_fit = m >= 3 && sxx > 0.0 ? sqrt(rss / (double)(m - 2) / sxx) : NAN;
}

/* The slides' exponent of the lower bound on S along the sizes: sqrt(n) when n <= d; d/sqrt(n)
 * when n > d (n^(1/6) along d = n^(2/3)); none in p (S_RF = Omega(n^(1/6)) for any p); NAN when
 * mu_1 = E phi'(G) = 0 (no prediction) or the sizes straddle n = d. */
static double predicted(const dpd__rf_ovp *o, double mu1) {
  size_t below = 0;
  if (mu1 == 0.0 || o->count < 2) {
    return NAN;
  }
  if (o->vary_p) {
    return 0.0;
  }
  for (size_t k = 0; k < o->count; k++) {
    below += o->n[k] <= o->d[k];
  }
  return below == o->count ? 0.5 : below == 0 ? o->d_exponent - 0.5 : NAN;
}

typedef struct {
  double mean[NF][DPD__RF_OVP_SIZES_MAX], se[NF][DPD__RF_OVP_SIZES_MAX];
  double x[DPD__RF_OVP_SIZES_MAX];
  double b, b_se, b_se_fit, a, bd, bd_se, bd_se_fit, ad, predicted, mu1;
} sens_stats;

static int sens_output(dpd_output *out, const dpd__rf_ovp *o, const sens_stats *st, dpd_err *err) {
  static const char *const names[NF] = {
      "sensitivity_mean", "sensitivity_q10", "sensitivity_q50",
      "sensitivity_q90",  "dpgd_mean",       "dpgd_q10",
      "dpgd_q50",         "dpgd_q90",        "theta_star_test_risk",
      "dpgd_test_risk",   "sigma",           "epsilon"};
  const size_t m = o->count, last = m - 1;
  double col[3][DPD__RF_OVP_SIZES_MAX];
  dpd_table_builder *b = NULL;
  int status = dpd_table_builder_create(m, &b, err);
  for (size_t k = 0; k < m; k++) {
    col[0][k] = (double)o->n[k];
    col[1][k] = (double)o->p[k];
    col[2][k] = (double)o->d[k];
  }
  if (status == DPD_OK && (status = dpd_table_builder_add(b, "x", st->x, err)) == DPD_OK &&
      (status = dpd_table_builder_add(b, "n", col[0], err)) == DPD_OK &&
      (status = dpd_table_builder_add(b, "p", col[1], err)) == DPD_OK) {
    status = dpd_table_builder_add(b, "d", col[2], err);
  }
  for (int f = 0; status == DPD_OK && f < NF; f++) {
    char se_name[64];
    snprintf(se_name, sizeof se_name, "%s_se", names[f]);
    if ((status = dpd_table_builder_add(b, names[f], st->mean[f], err)) == DPD_OK &&
        (f == S_MEAN || f == D_MEAN)) {
      status = dpd_table_builder_add(b, se_name, st->se[f], err);
    }
  }
  for (size_t k = 0; k < m; k++) { /* the fitted power laws */
    col[0][k] = exp(st->a + st->b * log(st->x[k]));
    col[1][k] = exp(st->ad + st->bd * log(st->x[k]));
  }
  if (status == DPD_OK && (status = dpd_table_builder_add(b, "fit", col[0], err)) == DPD_OK) {
    status = dpd_table_builder_add(b, "fit_dpgd", col[1], err);
  }
  if (status == DPD_OK) {
    status = dpd_output_table_add_built(out, "sensitivity.tsv", "rf_sensitivity", b, err);
    b = NULL;
  }
  dpd_table_builder_free(b);
  if (status < 0) {
    return status;
  }
  const double v[] = {st->mean[S_MEAN][last],
                      st->se[S_MEAN][last],
                      st->mean[S_Q10][last],
                      st->mean[S_Q50][last],
                      st->mean[S_Q90][last],
                      st->mean[D_MEAN][last],
                      st->se[D_MEAN][last],
                      st->mean[D_Q50][last],
                      st->b,
                      st->b_se,
                      st->b_se_fit,
                      st->bd,
                      st->bd_se,
                      st->predicted,
                      st->mu1,
                      st->mean[R_STAR][last],
                      st->mean[R_DPGD][last],
                      (double)o->n[last],
                      (double)o->p[last],
                      (double)o->d[last],
                      st->mean[SIGMA][last],
                      st->mean[EPS][last]};
  dpd__output_numbers_set(out, "",
                          "sensitivity_mean sensitivity_se sensitivity_q10 sensitivity_q50 "
                          "sensitivity_q90 sensitivity_dpgd_mean sensitivity_dpgd_se "
                          "sensitivity_dpgd_q50",
                          v, "dpgd = off, or one replicate (no SE)");
  dpd__output_numbers_set(out, "",
                          "exponent exponent_se exponent_se_fit exponent_dpgd "
                          "exponent_dpgd_se predicted_exponent mu_1",
                          v + 8, "one size (no fit), dpgd = off, or no prediction (see notes)");
  dpd__output_numbers_set(out, "", "theta_star_test_risk dpgd_test_risk n p d sigma epsilon",
                          v + 15, "dpgd = off");
  cJSON_AddNumberToObject(out->summary, "seeds", (double)o->seeds);
  return DPD_OK;
}

int dpd__rf_sens_run(const dpd_rf_config *pc, const dpd__rf_ovp *o, const dpd_keys *keys,
                     const dpd_run_env *env, int plot, dpd_output **out, dpd_err *err) {
  const size_t m = o->count, s = o->seeds;
  double *vals = malloc(m * s * NF * sizeof *vals);
  sens_stats *st = calloc(1, sizeof *st);
  int status = vals == NULL || st == NULL ? DPD_FAIL(err, DPD_ENOMEM, "out of memory") : DPD_OK;
  *out = NULL;
  openblas_set_num_threads(1);
  for (size_t rep = 0; status == DPD_OK && rep < s; rep++) {
    for (size_t k = 0; status == DPD_OK && k < m; k++) {
      dpd_rf_config c = *pc;
      c.n = o->n[k];
      c.p = o->p[k];
      c.d = o->d[k];
      c.seed = o->seed;
      c.draw = rep;
      if ((status = sens_one(&c, o, rep, vals + (k * s + rep) * NF, err)) == DPD_OK &&
          env->progress != NULL &&
          env->progress(env->progress_user, "problems", rep * m + k + 1, s * m) != 0) {
        status = DPD_FAIL(err, DPD_ECANCELLED, "cancelled");
      }
    }
  }
  if (status == DPD_OK) {
    for (size_t k = 0; k < m; k++) {
      st->x[k] = o->vary_p ? (double)o->p[k] : (double)o->n[k];
      for (int f = 0; f < NF; f++) {
        mean_se(vals + k * s * NF + f, s, NF, &st->mean[f][k], &st->se[f][k]);
      }
    }
    fit(st->x, st->mean[S_MEAN], st->se[S_MEAN], m, &st->b, &st->b_se, &st->b_se_fit, &st->a);
    fit(st->x, st->mean[D_MEAN], st->se[D_MEAN], m, &st->bd, &st->bd_se, &st->bd_se_fit, &st->ad);
    st->mu1 = dpd_rf_activation_hermite(pc->activation, 1);
    st->predicted = predicted(o, st->mu1);
    status = dpd__output_begin(dpd_keys_command_get(keys), "rf", plot, o->seed, out, err);
  }
  if (status == DPD_OK &&
      (status = dpd__output_headline_set(
           *out, err, "model rf sensitivity, %zu sizes in %s, %s, seed %llu", m,
           o->vary_p ? "p" : "n", dpd_rf_activation_name(pc->activation),
           (unsigned long long)o->seed)) == DPD_OK &&
      (status = sens_output(*out, o, st, err)) == DPD_OK) {
    cJSON_AddStringToObject((*out)->summary, "vary", o->vary_p ? "p" : "n");
    status = dpd__output_figure_record(*out, "rf_sensitivity", "sensitivity.tsv",
                                       "sensitivity.tsv", err);
  }
  if (status == DPD_OK && m >= 2 && isnan(st->predicted)) {
    status = dpd__output_note_add(
        *out, err, "note: no predicted exponent: %s",
        st->mu1 == 0.0 ? "E phi'(G) = mu_1 = 0, where the slides predict only that S can be "
                         "much smaller"
                       : "the sizes straddle n = d (sqrt(n) below, d/sqrt(n) above)");
  }
  free(vals);
  free(st);
  if (status < 0) {
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}
