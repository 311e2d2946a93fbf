/* The privacy audit of one-pass DP-SGD (audit_impl.h; docs/privacy.md "Empirical audit").
 * SPDX-License-Identifier: MIT
 *
 * References: Nasr, Song, Thakurta, Papernot & Carlini, IEEE S&P 2021 (a canary at the step with
 * the least noise after it; the last iterate); Feldman, Mironov, Talwar & Thakurta, FOCS 2018
 * (privacy amplification by iteration: the upper bound audited here, docs/math.md §1.4).
 *
 * What runs is the library's own DP-SGD on the rows of a dataset (data_sim.c), not a copy: the
 * dataset is built here once (the model's law of docs/math.md §1.1, in the eigenbasis of Sigma,
 * with the canary as the last row) and handed to dpd__lrdata_sim_thetas with fixed_order, so that
 * every run sees the same rows in the same order and only the privacy noise is redrawn.
 *
 * Why the last step: with the calibrated schedule, rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2, every
 * record is rho-GDP; the record of the last step meets only its own noise, 2 C sigma_{n-1}, and
 * moves theta_n by eta_{n-1} (+-C u): the two sides differ by 2 C eta_{n-1} along u, and
 * eta_{n-1} / sigma_{n-1} = rho. When the iterate before that step is noiseless (the constant
 * schedule: all privacy noise at the release) <theta_n, u> is exactly N(m, (2 C sigma_{n-1})^2)
 * with the mean shifted by 2 C eta_{n-1} between the sides: the audit's mu is rho exactly, the
 * accountant's bound is tight, and the audit can only show the statistics' own gap. With noise
 * before the last step (other schedules) theta_{n-1} varies from run to run and this canary shows
 * less than rho. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/audit_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"
#include "dpdyn/noise.h"
#include "dpdyn/rng.h"
#include "linreg/audit_impl.h"
#include "linreg/data_impl.h"

/* Stream of the audit's dataset (below the problem's and the held-out split's). */
#define AUDIT_DATA_STREAM (DPD_RNG_STREAM_PROBLEM - 8)

/* Iterates held at once (doubles) by one call of the simulator: runs are done in chunks. */
#define CHUNK_DOUBLES ((size_t)1 << 22)

/* The storage of the two datasets (they share X; Y differs in the canary's label). */
typedef struct {
  double *X, *Y0, *Y1, *mean, *sigma, *theta;
  size_t *pop;
  double *eta, *sig, *thetas;
} audit_store;

static void store_free(audit_store *s) {
  free(s->X);
  free(s->Y0);
  free(s->Y1);
  free(s->mean);
  free(s->sigma);
  free(s->theta);
  free(s->pop);
  free(s->eta);
  free(s->sig);
  free(s->thetas);
}

/* A dataset of `n` rows over the store (side: which label column). */
static void dataset_init(dpd__lrdata *D, const audit_store *s, size_t n, size_t d, int side) {
  memset(D, 0, sizeof *D);
  D->X = (dpd__datamat){.rows = n, .cols = d, .f32 = 0, .data = s->X};
  D->Y = (dpd__datamat){.rows = n, .cols = 1, .f32 = 0, .data = side ? s->Y1 : s->Y0};
  D->N = D->n_pop = n;
  D->d = d;
  D->pop_idx = s->pop;
  D->mean = s->mean;
  D->scale = 1.0;
  D->y_scale = 1.0;
  D->sigma = s->sigma;
  D->theta_hat = s->theta; /* the risk's reference: theta* */
  D->fixed_order = 1;
}

/* The n - 1 rows of the model (in step order, skipping the canary's step kc) and the canary at
 * step kc; returns the largest eta_k |x_k|^2 of the model's rows. */
static double draw_rows(const dpd_linreg_problem *p, const dpd_linreg_sim_config *cfg, size_t kc,
                        audit_store *s, double *tmp) {
  const size_t d = p->d, n = cfg->n;
  const dpd_noise_spec noise = {.law = cfg->noise, .zeta = cfg->zeta, .nu = cfg->noise_nu};
  double (*sample)(const dpd_noise_spec *, double, dpd_rng *) =
      dpd_noise_law_type_get(cfg->noise)->sample;
  dpd_rng rng;
  double worst = 0.0;
  dpd_rng_init(&rng, cfg->seed, AUDIT_DATA_STREAM);
  for (size_t k = 0; k < n; k++) {
    double *x = s->X + k * d, dot = 0.0, xx = 0.0;
    if (k == kc) {
      continue;
    }
    dpd_rng_gaussian_fill(&rng, tmp, d + 1);
    for (size_t i = 0; i < d; i++) {
      x[i] = p->sqrt_lambda[i] * tmp[i];
      dot += x[i] * p->theta_star[i];
      xx += x[i] * x[i];
    }
    s->Y0[k] = s->Y1[k] = dot + sample(&noise, tmp[d], &rng);
    worst = fmax(worst, s->eta[k] * xx);
  }
  s->X[kc * d] = sqrt((double)d); /* the canary: sqrt(d) u, u = e_1 (largest lambda) */
  return worst;
}

/* Allocates the store and fills everything but the rows. */
static int store_create(const dpd_linreg_problem *p, const dpd_schedule *schedule,
                        const dpd_linreg_sim_config *cfg, size_t chunk, audit_store *s,
                        dpd_err *err) {
  const size_t d = p->d, n = cfg->n;
  memset(s, 0, sizeof *s);
  s->X = calloc(n * d, sizeof *s->X);
  s->Y0 = malloc(n * sizeof *s->Y0);
  s->Y1 = malloc(n * sizeof *s->Y1);
  s->mean = calloc(d, sizeof *s->mean);
  s->sigma = calloc(d * d, sizeof *s->sigma);
  s->theta = malloc(d * sizeof *s->theta);
  s->pop = malloc(n * sizeof *s->pop);
  s->eta = malloc(n * sizeof *s->eta);
  s->sig = malloc(n * sizeof *s->sig);
  s->thetas = malloc(chunk * d * sizeof *s->thetas);
  if (s->X == NULL || s->Y0 == NULL || s->Y1 == NULL || s->mean == NULL || s->sigma == NULL ||
      s->theta == NULL || s->pop == NULL || s->eta == NULL || s->sig == NULL ||
      s->thetas == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (d = %zu, n = %zu)", d, n);
  }
  for (size_t i = 0; i < d; i++) {
    s->sigma[i * d + i] = p->lambda[i];
    s->theta[i] = p->theta_star[i];
  }
  for (size_t k = 0; k < n; k++) {
    s->pop[k] = k;
  }
  dpd_schedule_steps(schedule, n, cfg->rho, s->eta, s->sig);
  return DPD_OK;
}

/* The canary's label: FACTOR times a bound on what |x_c . theta_{n-1}| and C/|x_c| can reach
 * (|theta*| + 1 for the fit, and 2 C sqrt(sum sigma_k^2) for the accumulated noise along u), so
 * that |r_c| |x_c| > C in every run. */
static double canary_label(const dpd_linreg_problem *p, const audit_store *s, size_t n,
                           double C) {
  const double xc = sqrt((double)p->d);
  double th = 0.0, var = 0.0;
  for (size_t i = 0; i < p->d; i++) {
    th += p->theta_star[i] * p->theta_star[i];
  }
  for (size_t k = 0; k < n; k++) {
    var += s->sig[k] * s->sig[k];
  }
  return DPD_LINREG_AUDIT_LABEL_FACTOR *
         (1.0 + C / xc + xc * (sqrt(th) + 1.0 + 2.0 * C * sqrt(var)));
}

int dpd__linreg_audit_run(const dpd_linreg_problem *p, const dpd_schedule *schedule,
                          const dpd_linreg_sim_config *cfg, size_t runs, int first, double *s0,
                          double *s1, dpd__linreg_audit_info *info, dpd_err *err) {
  if (!isfinite(cfg->rho) || !isfinite(cfg->c)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'rho': %g (allowed: finite rho > 0 and finite c: the "
                    "audit measures the privacy of a private run)",
                    cfg->rho);
  }
  const size_t d = p->d, n = cfg->n;
  const double C = cfg->c * sqrt((double)d);
  size_t chunk = CHUNK_DOUBLES / d;
  chunk = chunk < 1 ? 1 : chunk > runs ? runs : chunk;
  audit_store s;
  int status = store_create(p, schedule, cfg, chunk, &s, err);
  double *tmp = status >= 0 ? malloc((d + 2) * sizeof *tmp) : NULL;
  if (status >= 0 && tmp == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (d = %zu)", d);
  }
  if (status >= 0) {
    const size_t kc = first ? 0 : n - 1;
    info->max_eta_x2 = draw_rows(p, cfg, kc, &s, tmp);
    info->label = canary_label(p, &s, n, C);
    info->eta_last = s.eta[kc];
    info->sigma_last = s.sig[kc];
    int quiet = !first; /* the last step, and no noise before it */
    for (size_t k = 0; k + 1 < n; k++) {
      quiet = quiet && s.sig[k] == 0.0;
    }
    info->mu_canary = quiet ? s.eta[kc] / s.sig[kc] : NAN;
    s.Y0[kc] = -info->label;
    s.Y1[kc] = info->label;
  }
  free(tmp);
  for (int side = 0; side < 2 && status >= 0; side++) {
    dpd__lrdata D;
    dpd_linreg_sim_config sc = *cfg;
    double *out = side ? s1 : s0;
    dataset_init(&D, &s, n, d, side);
    sc.seed = dpd__audit_seed_mix(cfg->seed, (uint64_t)side);
    sc.grid = 2; /* progress: replicates of each side's chunks, as the simulator counts them */
    for (size_t r0 = 0; r0 < runs && status >= 0; r0 += chunk) {
      sc.seeds = runs - r0 < chunk ? runs - r0 : chunk;
      status = dpd__lrdata_sim_thetas(&D, schedule, &sc, r0, s.thetas, err);
      for (size_t i = 0; status >= 0 && i < sc.seeds; i++) {
        out[r0 + i] = s.thetas[i * d]; /* <theta_n, u>, u = e_1 */
      }
    }
  }
  store_free(&s);
  return status;
}

double dpd__linreg_audit_bytes(size_t d, size_t n, size_t runs, double threads) {
  const double dd = (double)d, nn = (double)n;
  size_t chunk = CHUNK_DOUBLES / (d > 0 ? d : 1);
  chunk = chunk < 1 ? 1 : chunk > runs ? runs : chunk;
  /* X, labels, Sigma, the schedule, a chunk of iterates, the statistics and the simulator's
   * per-replicate record (with its workspace per thread) */
  return 8.0 * (nn * dd + 5.0 * nn + dd * dd + (double)chunk * dd + 2.0 * (double)runs) +
         dpd__lrdata_sim_bytes(d, n, chunk, 2, threads);
}

int dpd__linreg_audit_output(dpd_output *out, const dpd_linreg_problem *p,
                             const dpd_schedule *schedule, const dpd_linreg_sim_config *cfg,
                             const dpd_keys *keys, double delta, dpd_err *err) {
  dpd__linreg_audit_info info;
  dpd__audit_keys keyed = {.delta = delta}, *a = &keyed;
  double eps = NAN;
  char privacy[128];
  size_t first = 0; /* the key canary: last | first */
  int status = dpd__audit_keys_get(keys, a, err);
  double *s = status >= 0 ? malloc(2 * a->runs * sizeof *s) : NULL;
  if (status < 0 || (status = dpd_keys_choice_get(keys, "canary", &first, err)) < 0) {
    free(s);
    return status;
  }
  if (s == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (runs = %zu)", a->runs);
  }
  if ((status = dpd__linreg_audit_run(p, schedule, cfg, a->runs, first == 1, s, s + a->runs,
                                      &info, err)) < 0 ||
      (status = dpd_privacy_gdp_eps(cfg->rho, a->delta, &eps, err)) < 0) {
    free(s);
    return status;
  }
  snprintf(privacy, sizeof privacy, "rho = %g, %s schedule, canary at the %s step (eps = %.3g at "
           "delta = %g)", cfg->rho, dpd_schedule_name(schedule), first == 1 ? "first" : "last",
           eps, a->delta);
  const dpd__audit_upper u = {
      .model = "linreg",
      .privacy = privacy,
      .bound = "mu = rho: last-iterate GDP of every record by amplification by iteration "
               "(docs/math.md 1.4), exact GDP-to-(eps, delta) conversion",
      .canary = first == 1 ? "the first step's row, x = sqrt(d) u (u: top eigendirection of "
                             "Sigma), label +Y against -Y (clipped gradients -C u and +C u)"
                           : "the last step's row, x = sqrt(d) u (u: top eigendirection of "
                             "Sigma), label +Y against -Y (clipped gradients -C u and +C u)",
      .statistic = "<theta_n, u>, the released iterate's projection on the canary direction",
      .mu_upper = cfg->rho,
      .mu_canary = info.mu_canary};
  status = dpd__audit_output(out, s, s + a->runs, a, &u, err);
  free(s);
  if (status < 0) {
    return status;
  }
  dpd_output_number_set(out, "canary_label", info.label);
  dpd_output_number_set(out, "canary_eta", info.eta_last);
  dpd_output_number_set(out, "canary_sigma", info.sigma_last);
  dpd_output_number_set(out, "max_eta_x2", info.max_eta_x2);
  cJSON_AddBoolToObject(out->summary, "nonexpansive", info.max_eta_x2 <= 2.0);
  if (info.max_eta_x2 > 2.0) {
    return dpd__output_note_add(
        out, err,
        "warning: eta_k |x_k|^2 reaches %.3g > 2 on this dataset: a step is then not "
        "non-expansive, and the upper bound mu = rho (amplification by iteration) is not "
        "guaranteed for records before the last step",
        info.max_eta_x2);
  }
  return DPD_OK;
}

int dpd__linreg_audit_keys(dpd_keys *keys, dpd__linreg_privacy *priv, size_t d, size_t n,
                           int threads, double *memory, dpd_err *err) {
  dpd__audit_keys a;
  size_t canary;
  int status = dpd__audit_keys_get(keys, &a, err);
  if (status >= 0 && (status = dpd_keys_choice_get(keys, "canary", &canary, err)) < 0) {
    return status;
  }
  if (status >= 0 && isinf(priv->rho)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'rho': inf (allowed: a private run, finite rho > 0 (or "
                    "zcdp, or epsilon with delta), with a finite c: the audit bounds its privacy)");
  }
  if (!priv->have_delta) { /* 1/n, as the privacy report of every linreg command */
    priv->delta = 1.0 / (double)n;
    priv->have_delta = 1;
  }
  *memory += dpd__linreg_audit_bytes(d, n, a.runs, threads > 0 ? threads : omp_get_max_threads());
  return status < 0 ? status : dpd_keys_effective_real_set(keys, "delta", priv->delta, err);
}
