/* The last-iterate GDP of one-pass linreg and its assumption check (report_impl.h;
 * docs/privacy.md, "Last-iterate GDP of one-pass linreg").
 * SPDX-License-Identifier: MIT
 *
 * The guarantee. Per-sample clipping of the squared loss is the gradient of a Huber loss of
 * r = x^T theta - y, so the step theta -> theta - eta_k clip(g_k) is non-expansive when
 * eta_k |x_k|^2 <= 2. Under that condition for every row, privacy amplification by iteration in
 * the f-DP (shifted-interpolation) form makes the released last iterate mu_k-GDP for the record
 * of step k, mu_k = eta_k / sqrt(sum_{j>=k} sigma_j^2); with the calibrated schedule
 * (rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2, eta_n = 0) the sum telescopes to eta_k^2 / rho^2 and
 * every record's mu_k is rho. The (eps, delta) statement is the exact one of mu-GDP
 * (dpd_privacy_gdp_eps), never larger than the tight zCDP conversion of rho^2/2-zCDP.
 *
 * The check. B = 2 / max_k eta_k = 2 n / sup eta~ (sup: dpd_schedule_sup, which is eta~(0) for
 * the non-increasing schedules a private run needs). Data files: max |x|^2 over the population
 * rows (as the kernel makes them) against B: holds or fails. Gaussian rows (x ~ N(0, Sigma),
 * tr Sigma = d) are unbounded: the guarantee is conditional on |x|^2 <= B, and one row exceeds B
 * with probability at most the Chernoff bound
 *   P(sum_i lambda_i z_i^2 > B) <= min_{0 <= t < 1/(2 lambda_max)} e^{-t B} prod_i (1 - 2 t
 * lambda_i)^{-1/2} (exact groups), or, when groups are quadrature nodes (a compressed spectral
 * problem), its relaxation through -log(1 - 2 t lambda) <= (lambda / lambda_max) (-log(1 - 2 t
 * lambda_max)), which needs only tr Sigma = d and lambda_max: with k = d / lambda_max, u = B /
 * lambda_max, P <= exp(-(u - k)/2) (u/k)^{k/2}  (u > k; else 1). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "dpdyn/privacy.h"
#include "linreg/report_impl.h"

/* Bisection steps on the Chernoff exponent's derivative: any t gives a valid bound, so these
 * only make it tighter (2^-80 of the bracket is below double precision). */
#define CHERNOFF_STEPS 80

/* log of the Chernoff bound at t (exact groups). */
static double chernoff_log(const dpd_linreg_problem *p, double B, double t) {
  double s = -t * B;
  for (size_t g = 0; g < p->ngroups; g++) {
    s -= 0.5 * p->group_mult[g] * log1p(-2.0 * t * p->group_lambda[g]);
  }
  return s;
}

/* d/dt of chernoff_log: -B + sum_g m_g lambda_g / (1 - 2 t lambda_g), increasing in t. */
static double chernoff_slope(const dpd_linreg_problem *p, double B, double t) {
  double s = -B;
  for (size_t g = 0; g < p->ngroups; g++) {
    s += p->group_mult[g] * p->group_lambda[g] / (1.0 - 2.0 * t * p->group_lambda[g]);
  }
  return s;
}

double dpd__linreg_norm2_tail(const dpd_linreg_problem *p, double B) {
  const double d = (double)p->d, lmax = p->lambda_max;
  double lo = 0.0, hi, t;
  if (!(B > d) || !(lmax > 0.0)) {
    return 1.0; /* B at or below the mean |x|^2 = tr Sigma = d: no useful bound */
  }
  if (isinf(B)) {
    return 0.0;
  }
  if (p->spectral && p->compressed_bands > 0) {
    const double k = d / lmax, u = B / lmax;
    return fmin(1.0, exp(-0.5 * (u - k) + 0.5 * k * log(u / k)));
  }
  hi = 0.5 / lmax;
  for (int i = 0; i < CHERNOFF_STEPS; i++) {
    t = 0.5 * (lo + hi);
    if (chernoff_slope(p, B, t) < 0.0) {
      lo = t;
    } else {
      hi = t;
    }
  }
  return fmin(1.0, exp(chernoff_log(p, B, lo)));
}

double dpd__linreg_max_row_norm2(const dpd__lrdata *D) {
  double m = 0.0;
  for (size_t j = 0; j < D->n_pop; j++) {
    m = fmax(m, D->a[j]);
  }
  return m * (double)D->d;
}

void dpd__linreg_gdp_check_eval(double eta_max, size_t n, const dpd_linreg_problem *p,
                                const dpd__lrdata *D, dpd__linreg_gdp_check *c) {
  memset(c, 0, sizeof *c);
  c->bound = eta_max > 0.0 ? 2.0 / eta_max : INFINITY;
  c->max_norm2 = c->mean_norm2 = c->row_tail = c->run_tail = NAN;
  c->rows = D != NULL ? "data" : p != NULL ? "gaussian" : "unknown";
  if (D != NULL) {
    c->max_norm2 = dpd__linreg_max_row_norm2(D);
    if (D->with_replacement) {
      c->status = DPD__GDP_FAILS;
      snprintf(c->why, sizeof c->why,
               "replacement = 1 draws rows with replacement: a row may be used at several "
               "steps, and the one-pass analysis (each record used once) does not apply");
    } else if (c->max_norm2 > c->bound) {
      c->status = DPD__GDP_FAILS;
      snprintf(c->why, sizeof c->why,
               "a data row has |x|^2 = %.6g > %.6g = 2 / max_k eta_k: that row's steps are not "
               "non-expansive (eta_k |x|^2 > 2), so amplification by iteration does not apply",
               c->max_norm2, c->bound);
    } else {
      c->status = DPD__GDP_HOLDS;
    }
  } else if (p != NULL) {
    c->status = DPD__GDP_CONDITIONAL;
    c->mean_norm2 = (double)p->d;
    c->row_tail = dpd__linreg_norm2_tail(p, c->bound);
    c->run_tail = fmin(1.0, (double)n * c->row_tail);
  } else {
    c->status = DPD__GDP_CONDITIONAL;
  }
}

const char *dpd__linreg_gdp_status_name(int status) {
  return status == DPD__GDP_HOLDS ? "holds" : status == DPD__GDP_FAILS ? "fails" : "conditional";
}

/* Removes key (and its not_available reason) from the summary: the block can be written again
 * (tune, with the optimum's schedule). */
static void drop(cJSON *summary, const char *key) {
  cJSON *why = cJSON_GetObjectItemCaseSensitive(summary, "not_available");
  cJSON_DeleteItemFromObjectCaseSensitive(summary, key);
  if (why != NULL) {
    cJSON_DeleteItemFromObjectCaseSensitive(why, key);
  }
}

static const char *const gdp_keys[] = {
    "gdp_mu",           "epsilon_gdp",     "epsilon_tight_over_gdp",
    "last_iterate_gdp", "gdp_norm2_bound", "gdp_max_row_norm2",
    "gdp_row_tail",     "gdp_run_tail",    NULL};

/* key: v when c does not fail, else null with the reason. */
static void guarded(dpd_output *out, const char *key, double v, const dpd__linreg_gdp_check *c,
                    const char *why) {
  if (c->status == DPD__GDP_FAILS) {
    dpd_output_na_set(out, key, why);
  } else {
    dpd_output_number_set(out, key, v);
  }
}

int dpd__linreg_report_gdp_block(dpd_output *out, double mu, int have_delta, double delta,
                                 const dpd__linreg_gdp_check *c, dpd_err *err) {
  char why[400];
  double eps_gdp = NAN, eps_tight = NAN;
  cJSON *o;
  for (size_t k = 0; gdp_keys[k] != NULL; k++) {
    drop(out->summary, gdp_keys[k]);
  }
  if (have_delta && isfinite(mu) && mu > 0.0 &&
      (dpd_privacy_gdp_eps(mu, delta, &eps_gdp, err) < 0 ||
       dpd_privacy_eps_tight(0.5 * mu * mu, delta, &eps_tight, err) < 0)) {
    return DPD_FAIL(err, DPD_EINVAL, "the last-iterate GDP at mu = %g, delta = %g failed", mu,
                    delta);
  }
  snprintf(why, sizeof why, "no last-iterate GDP guarantee: %s", c->why);
  guarded(out, "gdp_mu", mu, c, why);
  if (have_delta) {
    guarded(out, "epsilon_gdp", eps_gdp, c, why);
    guarded(out, "epsilon_tight_over_gdp", eps_tight / eps_gdp, c, why);
  }
  dpd_output_number_set(out, "gdp_norm2_bound", c->bound);
  if (!isnan(c->max_norm2)) {
    dpd_output_number_set(out, "gdp_max_row_norm2", c->max_norm2);
  }
  if (!isnan(c->row_tail)) {
    dpd_output_number_set(out, "gdp_row_tail", c->row_tail);
    dpd_output_number_set(out, "gdp_run_tail", c->run_tail);
  }
  if ((o = cJSON_AddObjectToObject(out->summary, "last_iterate_gdp")) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(o, "assumption",
                          "every step non-expansive: eta_k |x|^2 <= 2 for every row, i.e. "
                          "|x|^2 <= gdp_norm2_bound = 2 / max_k eta_k (docs/privacy.md)");
  cJSON_AddStringToObject(o, "rows", c->rows);
  cJSON_AddStringToObject(o, "status", dpd__linreg_gdp_status_name(c->status));
  if (c->status == DPD__GDP_FAILS) {
    char note[600];
    cJSON_AddStringToObject(o, "why", c->why);
    snprintf(note, sizeof note,
             "note: %s; epsilon_gdp is not reported (the zCDP epsilons rest on the same "
             "assumption)",
             why);
    for (size_t i = 0; i < out->nnotes; i++) {
      if (strcmp(out->notes[i], note) == 0) {
        return DPD_OK; /* written again (tune): the note is there already */
      }
    }
    return dpd__output_note_add(out, err, "%s", note);
  }
  if (c->status == DPD__GDP_CONDITIONAL) {
    cJSON_AddStringToObject(
        o, "why",
        strcmp(c->rows, "gaussian") == 0
            ? "Gaussian rows are unbounded: the guarantee holds for data whose rows all have "
              "|x|^2 <= gdp_norm2_bound; a Gaussian row exceeds it with probability at most "
              "gdp_row_tail (n rows: gdp_run_tail)"
            : "no rows to check: the guarantee holds for data whose rows all have |x|^2 <= "
              "gdp_norm2_bound");
  }
  return DPD_OK;
}

int dpd__linreg_report_gdp(dpd_output *out, const dpd__linreg_privacy *priv, size_t n,
                           const dpd_schedule *s, const dpd_linreg_problem *p, const dpd__lrdata *D,
                           dpd_err *err) {
  dpd__linreg_gdp_check c;
  if (!isfinite(priv->rho)) {
    return DPD_OK; /* non-private: nothing to claim */
  }
  dpd__linreg_gdp_check_eval(dpd_schedule_sup(s) / (double)n, n, p, D, &c);
  /* the calibrated schedule: sum_{j>=k} sigma_j^2 = eta_k^2 / rho^2, so every mu_k is rho */
  return dpd__linreg_report_gdp_block(out, priv->rho, priv->have_delta, priv->delta, &c, err);
}
