/* The audit command's keys and output, shared by the models (audit_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * summary.json: epsilon_lower (at audit_delta, audit_confidence, from the held-out half of the
 * runs), mu_lower, mu_hat with its interval, the accountant's mu_upper and epsilon_upper (mu-GDP
 * converted exactly at the same delta, privacy.h), their ratios, and runs_needed (the runs per
 * side whose expected epsilon lower bound reaches half of epsilon_upper if the statistic were
 * exactly Gaussian with the accountant's mu). Tables: audit_runs.tsv (run, side, statistic),
 * audit_tradeoff.tsv (the empirical trade-off on every run with Clopper-Pearson intervals, and
 * G_mu at each FPR for mu_upper and mu_hat), audit_curve.tsv (G_mu on a fine grid of FPR for
 * the figure's curves and the constants its title reads). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "core/audit_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"

uint64_t dpd__audit_seed_mix(uint64_t seed, uint64_t k) {
  uint64_t z = seed + (k + 1) * UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

int dpd__audit_keys_get(const dpd_keys *keys, dpd__audit_keys *a, dpd_err *err) {
  int status;
  if ((status = dpd_keys_size_range_get(keys, "runs", DPD_AUDIT_RUNS_MIN, (size_t)1 << 24,
                                        &a->runs, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "confidence", 0.0, 0, 1.0, 0, 0, &a->confidence,
                                        err)) < 0) {
    return status;
  }
  return DPD_OK;
}

/* audit_runs.tsv: run, side, statistic (side 0 first). */
static int runs_table(dpd_output *out, const double *s0, const double *s1, size_t runs,
                      dpd_err *err) {
  dpd_table_builder *b;
  int status;
  if ((status = dpd_table_builder_create(2 * runs, &b, err)) < 0) {
    return status;
  }
  double *run = dpd_table_builder_column(b, "run", err);
  double *side = run != NULL ? dpd_table_builder_column(b, "side", err) : NULL;
  double *stat = side != NULL ? dpd_table_builder_column(b, "statistic", err) : NULL;
  if (stat == NULL) {
    dpd_table_builder_free(b);
    return DPD_ENOMEM;
  }
  for (size_t i = 0; i < runs; i++) {
    run[i] = run[runs + i] = (double)i;
    side[i] = 0.0;
    side[runs + i] = 1.0;
    stat[i] = s0[i];
    stat[runs + i] = s1[i];
  }
  return dpd_output_table_add_built(out, "audit_runs.tsv", NULL, b, err);
}

/* audit_tradeoff.tsv: the empirical trade-off with its intervals, G_mu at each FPR. */
static int tradeoff_table(dpd_output *out, const double *s0, const double *s1,
                          const dpd__audit_keys *a, double mu_upper, double mu_hat, dpd_err *err) {
  const size_t m = DPD__AUDIT_TRADEOFF_POINTS;
  static const char *const names[] = {"threshold", "fpr",    "fpr_lo", "fpr_hi",
                                      "fnr",       "fnr_lo", "fnr_hi", "fnr_gdp_upper",
                                      "fnr_gdp_hat"};
  double *w = malloc(9 * m * sizeof *w);
  dpd_table_builder *b = NULL;
  size_t rows = 0;
  int status;
  if (w == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if ((status = dpd_audit_tradeoff_curve_eval(s0, s1, a->runs, m, a->confidence, w, w + m,
                                              w + 2 * m, w + 3 * m, w + 4 * m, w + 5 * m,
                                              w + 6 * m, &rows, err)) >= 0) {
    for (size_t j = 0; j < rows; j++) {
      w[7 * m + j] = dpd_audit_tradeoff_eval(mu_upper, w[m + j]);
      w[8 * m + j] = dpd_audit_tradeoff_eval(mu_hat, w[m + j]);
    }
    status = dpd_table_builder_create(rows, &b, err);
  }
  for (size_t k = 0; k < 9 && status >= 0; k++) {
    status = dpd_table_builder_add(b, names[k], w + k * m, err);
  }
  free(w);
  if (status < 0) {
    dpd_table_builder_free(b);
    return status;
  }
  return dpd_output_table_add_built(out, "audit_tradeoff.tsv", "audit", b, err);
}

/* audit_curve.tsv: G_mu for mu_upper, mu_hat and mu_lower on FPRs from 1e-4 to 1 (log-spaced
 * below 0.01, linear above), and the run's constants for the figure's title. */
static int curve_table(dpd_output *out, const dpd__audit_keys *a, const dpd_audit_result *r,
                       double mu_upper, double eps_upper, dpd_err *err) {
  const size_t m = DPD__AUDIT_CURVE_POINTS, half = m / 4;
  static const char *const names[] = {"fpr",        "fnr_gdp_upper", "fnr_gdp_hat",
                                      "fnr_gdp_lower", "mu_upper",   "mu_hat",
                                      "mu_lower",   "epsilon_upper", "epsilon_lower",
                                      "delta",      "runs",          "confidence"};
  const double consts[] = {mu_upper,         r->mu_hat, r->mu_lower,     eps_upper,
                           r->epsilon_lower, a->delta,  (double)a->runs, a->confidence};
  double *col[12];
  dpd_table_builder *b;
  int status;
  if ((status = dpd_table_builder_create(m, &b, err)) < 0) {
    return status;
  }
  for (size_t k = 0; k < 12; k++) {
    if ((col[k] = dpd_table_builder_column(b, names[k], err)) == NULL) {
      dpd_table_builder_free(b);
      return DPD_ENOMEM;
    }
  }
  for (size_t j = 0; j < m; j++) {
    const double x = j < half ? pow(10.0, -4.0 + 2.0 * (double)j / (double)half)
                              : 0.01 + 0.99 * (double)(j - half) / (double)(m - 1 - half);
    col[0][j] = x;
    col[1][j] = dpd_audit_tradeoff_eval(mu_upper, x);
    col[2][j] = dpd_audit_tradeoff_eval(r->mu_hat, x);
    col[3][j] = dpd_audit_tradeoff_eval(r->mu_lower, x);
    for (size_t k = 0; k < 8; k++) {
      col[4 + k][j] = consts[k];
    }
  }
  return dpd_output_table_add_built(out, "audit_curve.tsv", "audit", b, err);
}

/* The summary's numbers and strings. */
static size_t summary(dpd_output *out, const dpd__audit_keys *a, const dpd__audit_upper *u,
                      const dpd_audit_result *r, double eps_upper) {
  cJSON *s = out->summary;
  const double target = DPD_AUDIT_TARGET_FRACTION_DEFAULT * eps_upper;
  const size_t needed = dpd_audit_runs_needed_eval(u->mu_upper, target, a->delta, a->confidence,
                                                   DPD__AUDIT_RUNS_NEEDED_MAX);
  cJSON_AddStringToObject(s, "audit_bound", u->bound);
  cJSON_AddStringToObject(s, "audit_canary", u->canary);
  cJSON_AddStringToObject(s, "audit_statistic", u->statistic);
  cJSON_AddStringToObject(s, "threshold_selection",
                          "split-half: thresholds chosen on runs [0, runs/2) of each side, "
                          "errors counted on runs [runs/2, runs)");
  dpd_output_number_set(out, "runs", (double)a->runs);
  dpd_output_number_set(out, "eval_runs", (double)r->eval_runs);
  dpd_output_number_set(out, "audit_confidence", a->confidence);
  dpd_output_number_set(out, "audit_delta", a->delta);
  dpd_output_number_set(out, "epsilon_lower", r->epsilon_lower);
  dpd_output_number_set(out, "epsilon_upper", eps_upper);
  dpd_output_number_set(out, "epsilon_ratio", r->epsilon_lower / eps_upper);
  dpd_output_number_set(out, "mu_lower", r->mu_lower);
  dpd_output_number_set(out, "mu_hat", r->mu_hat);
  dpd_output_number_set(out, "mu_hat_lo", r->mu_hat_lo);
  dpd_output_number_set(out, "mu_hat_hi", r->mu_hat_hi);
  dpd_output_number_set(out, "mu_upper", u->mu_upper);
  dpd_output_number_set(out, "mu_ratio", r->mu_hat / u->mu_upper);
  if (isnan(u->mu_canary)) {
    dpd_output_na_set(out, "mu_canary", "not known in closed form for this setting");
  } else {
    dpd_output_number_set(out, "mu_canary", u->mu_canary);
  }
  if (needed == 0) {
    dpd_output_na_set(out, "runs_needed", "more than 2^30 runs per side");
  } else {
    dpd_output_number_set(out, "runs_needed", (double)needed);
  }
  cJSON_AddNumberToObject(s, "runs_needed_fraction", DPD_AUDIT_TARGET_FRACTION_DEFAULT);
  dpd_output_number_set(out, "epsilon_lower_expected",
                        dpd_audit_epsilon_expected_eval(u->mu_upper, a->runs, a->delta,
                                                        a->confidence));
  dpd_output_number_set(out, "fpr", r->fpr);
  dpd_output_number_set(out, "fnr", r->fnr);
  dpd_output_number_set(out, "fpr_upper", r->fpr_upper);
  dpd_output_number_set(out, "fnr_upper", r->fnr_upper);
  dpd_output_number_set(out, "threshold_epsilon", r->threshold_eps);
  dpd_output_number_set(out, "threshold_mu", r->threshold_mu);
  dpd_output_number_set(out, "mean0", r->mean0);
  dpd_output_number_set(out, "mean1", r->mean1);
  dpd_output_number_set(out, "sd_pooled", r->sd_pooled);
  return needed;
}

int dpd__audit_output(dpd_output *out, const double *s0, const double *s1,
                      const dpd__audit_keys *a, const dpd__audit_upper *u, dpd_err *err) {
  dpd_audit_config cfg = dpd_audit_config_default();
  dpd_audit_result r;
  double eps_upper;
  int status;
  cfg.confidence = a->confidence;
  cfg.delta = a->delta;
  if ((status = dpd_audit_stats_eval(s0, s1, a->runs, &cfg, &r, err)) < 0 ||
      (status = dpd_privacy_gdp_eps(u->mu_upper, a->delta, &eps_upper, err)) < 0) {
    return status;
  }
  const size_t needed = summary(out, a, u, &r, eps_upper);
  char needed_text[64];
  if (needed > 0) {
    snprintf(needed_text, sizeof needed_text, "%zu", needed);
  } else {
    snprintf(needed_text, sizeof needed_text, "more than 2^30");
  }
  if ((status = runs_table(out, s0, s1, a->runs, err)) < 0 ||
      (status = tradeoff_table(out, s0, s1, a, u->mu_upper, r.mu_hat, err)) < 0 ||
      (status = curve_table(out, a, &r, u->mu_upper, eps_upper, err)) < 0 ||
      /* the figure and its data files, for dpdyn plot DIR */
      (status = dpd__output_figure_record(out, "audit", "audit_tradeoff.tsv", "audit_curve.tsv",
                                          err)) < 0) {
    return status;
  }
  return dpd__output_report_add(
      out, err,
      "audit of model=%s (%s), %zu runs per side, confidence %g, delta %g\n"
      "  epsilon: lower %.4g (empirical, held-out half)  <=  upper %.4g (%s)   ratio %.3f\n"
      "  mu:      lower %.4g, fitted mu_hat %.4g [%.4g, %.4g]  vs  upper %.4g   ratio %.3f\n"
      "  runs per side for an expected lower bound of %g x the upper bound: %s\n",
      u->model, u->privacy, a->runs, a->confidence, a->delta, r.epsilon_lower, eps_upper,
      u->bound, r.epsilon_lower / eps_upper, r.mu_lower, r.mu_hat, r.mu_hat_lo, r.mu_hat_hi,
      u->mu_upper, r.mu_hat / u->mu_upper, DPD_AUDIT_TARGET_FRACTION_DEFAULT, needed_text);
}
