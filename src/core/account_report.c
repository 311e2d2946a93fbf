/* The accountant as a run (account_report_impl.h): the segments file, the memory estimate, the
 * summary, curve.tsv and the figure `account` (plots/account.gp).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/account_impl.h"
#include "core/account_report_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"
#include "core/table_impl.h"
#include "dpdyn/privacy.h"

/* The curve's eps grid: log-spaced from E 10^CURVE_LO_DECADES to E 10^CURVE_HI_DECADES around the
 * reported epsilon E. */
#define CURVE_LO_DECADES (-2.0)
#define CURVE_HI_DECADES 0.5
#define CURVE_AT 32 /* the row of eps = E: 40 * 2 / 2.5 */
#define BYTES_PER_POINT 48.0 /* the composed grid: pessimistic + optimistic, FFT buffers */

static int row_fail(dpd_err *err, const char *path, size_t row, const char *what, double v,
                    const char *allowed) {
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for 'segments': row %zu of '%s': %s = %g (allowed: %s)", row + 1,
                  path, what, v, allowed);
}

static int whole(double v, double lo, double hi) { return v >= lo && v <= hi && v == floor(v); }

int dpd__account_segments_read(dpd__account_query *q, const char *path, size_t max_bytes,
                               dpd_err *err) {
  double *cols[4] = {NULL, NULL, NULL, NULL};
  size_t rows = 0, ncols = 0;
  const int batch = q->a.mechanism == DPD_MECHANISM_SUBSAMPLED &&
                    q->a.sampling != DPD_SAMPLING_POISSON;
  int status = dpd__read_table("segments", path, batch ? 4 : 3, 4, max_bytes, cols, &rows, &ncols,
                               err);
  if (status == DPD_OK && (q->file = calloc(rows, sizeof *q->file)) == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory for %zu segments", rows);
  }
  for (size_t i = 0; i < rows && status == DPD_OK; i++) {
    dpd_account_segment *s = &q->file[i];
    s->sigma = cols[0][i];
    s->q = cols[1][i];
    if (!(s->sigma > 0.0 && s->sigma < INFINITY)) {
      status = row_fail(err, path, i, "noise_multiplier", s->sigma, "0 < noise_multiplier < inf");
    } else if (!(s->q > 0.0 && s->q <= 1.0)) {
      status = row_fail(err, path, i, "q", s->q, "0 < q <= 1");
    } else if (!whole(cols[2][i], 1.0, (double)DPD_ACCOUNT_STEPS_MAX)) {
      status = row_fail(err, path, i, "steps", cols[2][i], "an integer 1 <= steps <= 2^40");
    } else if (ncols == 4 && !whole(cols[3][i], 1.0, (double)(batch ? q->a.n : SIZE_MAX))) {
      status = row_fail(err, path, i, "batch", cols[3][i], "an integer 1 <= batch <= n");
    }
    s->steps = (size_t)cols[2][i];
    s->batch = ncols == 4 ? (size_t)cols[3][i] : 0;
  }
  for (size_t k = 0; k < 4; k++) {
    free(cols[k]);
  }
  q->a.segments = q->file;
  q->a.nsegments = rows;
  q->file_path = path;
  return status;
}

void dpd__account_query_release(dpd__account_query *q) {
  free(q->file);
  q->file = NULL;
}

double dpd__account_bytes(const dpd__account_query *q) {
  /* The composed loss of a mu-GDP-like run spans about 24 mu (its window of +-12 standard
   * deviations) and eps is about mu^2 / 2 + 4 mu; the bounds are about T h / 2 apart, so the
   * accuracy needs h = 2 accuracy eps / T: points ~ 12 mu T / (accuracy (mu^2 / 2 + 4 mu)) (mu:
   * the GDP or CLT mu of the run; within a factor 2 of the grids measured). Not clamped to the
   * PLD's largest grid: a run that needs far more memory than max_memory is refused before any
   * work, one within it but above DPD_PLD_MAX_POINTS runs on the largest grid and reports the
   * width it reached. Plus one step's grid (2^23 points at most). */
  double mu2 = 0.0, total = 0.0, mu, points;
  for (size_t i = 0; i < q->a.nsegments; i++) {
    const dpd_account_segment *s = &q->a.segments[i];
    double sg = q->a.neighbours == DPD_NEIGHBOURS_REPLACE_ONE ? 0.5 * s->sigma : s->sigma;
    double rate = q->a.mechanism != DPD_MECHANISM_SUBSAMPLED ? 1.0
                  : q->a.sampling == DPD_SAMPLING_POISSON
                      ? s->q
                      : fmin(1.0, 2.0 * (double)s->batch / (double)(q->a.n > 0 ? q->a.n : 1));
    mu2 += (double)s->steps * rate * rate *
           (rate < 1.0 ? expm1(fmin(700.0, 1.0 / (sg * sg))) : 1.0 / (sg * sg));
    total += (double)s->steps;
  }
  mu = sqrt(mu2);
  points = mu > 0.0 ? 12.0 * mu * total / (dpd__account_accuracy(&q->a) * (0.5 * mu2 + 4.0 * mu))
                    : 0.0;
  return BYTES_PER_POINT * (fmin(points, 1e30) + 8388608.0);
}

/* ---- words ------------------------------------------------------------------------------- */

static const char *mechanism_words(const dpd_account *a) {
  static const char *const sub[] = {"Poisson-subsampled Gaussian",
                                    "Gaussian on fixed-size batches (without replacement)",
                                    "Gaussian on batches drawn with replacement"};
  return a->mechanism == DPD_MECHANISM_GAUSSIAN ? "Gaussian mechanism (every record, every step)"
         : a->mechanism == DPD_MECHANISM_SHUFFLE
             ? "shuffled epochs (one Gaussian step per epoch)"
             : sub[a->sampling];
}

static const char *relation_words(const dpd_account *a) {
  return a->neighbours == DPD_NEIGHBOURS_ADD_REMOVE ? "add/remove neighbours"
                                                    : "replace-one neighbours";
}

/* "σ = 1, q = 0.01, T = 1000 steps" (one segment) or "3 segments from FILE, T = 3000 steps". */
static void run_words(const dpd__account_query *q, const dpd_account *a, char *buf, size_t cap) {
  const dpd_account_segment *s = a->segments;
  const char *unit = a->mechanism == DPD_MECHANISM_SHUFFLE ? "epoch" : "step";
  size_t total = 0, len;
  for (size_t i = 0; i < a->nsegments; i++) {
    total += a->segments[i].steps;
  }
  if (a->nsegments > 1 || q->file != NULL) {
    const char *slash = q->file_path != NULL ? strrchr(q->file_path, '/') : NULL;
    snprintf(buf, cap, "%zu segment%s from %.40s, T = %zu %ss", a->nsegments,
             a->nsegments == 1 ? "" : "s", slash != NULL ? slash + 1 : q->file_path, total, unit);
    return;
  }
  len = (size_t)snprintf(buf, cap, "σ = %.6g", s->sigma);
  if (a->mechanism == DPD_MECHANISM_SUBSAMPLED && a->sampling == DPD_SAMPLING_POISSON) {
    len += (size_t)snprintf(buf + len, cap - len, ", q = %.6g", s->q);
  } else if (a->mechanism == DPD_MECHANISM_SUBSAMPLED && len < cap) {
    len += (size_t)snprintf(buf + len, cap - len, ", batch %zu of n = %zu", s->batch, a->n);
  }
  if (len < cap) {
    snprintf(buf + len, cap - len, ", T = %zu %s%s", s->steps, unit, s->steps == 1 ? "" : "s");
  }
}

/* ---- summary ----------------------------------------------------------------------------- */

static void number(dpd_output *out, const char *key, double v, const char *why_nan) {
  if (isnan(v)) {
    dpd_output_na_set(out, key, why_nan);
  } else {
    dpd_output_number_set(out, key, v);
  }
}

static const char *rdp_why(const dpd_account *a) {
  return a->mechanism == DPD_MECHANISM_SUBSAMPLED && a->sampling != DPD_SAMPLING_POISSON
             ? "RDP is computed for Poisson sampling and the plain Gaussian only"
             : "no RDP bound of Poisson sampling under replace-one neighbours is implemented";
}

static const char *clt_why(void) {
  return "the CLT mu is defined for Poisson-subsampled steps with add/remove neighbours only "
         "(the Gaussian and shuffle mechanisms are exact GDP: see epsilon)";
}

static void result_members(dpd_output *out, const dpd_account *a, const dpd_account_result *r) {
  number(out, "epsilon", r->epsilon, "");
  number(out, "epsilon_estimate", r->epsilon_estimate, "");
  number(out, "epsilon_lower", r->epsilon_lower, "");
  number(out, "epsilon_rdp", r->epsilon_rdp, rdp_why(a));
  number(out, "best_alpha", r->best_alpha, rdp_why(a));
  number(out, "mu_clt", r->mu_clt, clt_why());
  number(out, "epsilon_clt", r->epsilon_clt, clt_why());
  dpd_output_number_set(out, "relative_width",
                        r->epsilon > 0.0 && r->epsilon < INFINITY
                            ? (r->epsilon - r->epsilon_lower) / r->epsilon
                            : 0.0);
  dpd_output_number_set(out, "relative_gap_estimate",
                        r->epsilon_estimate > 0.0 && r->epsilon < INFINITY
                            ? (r->epsilon - r->epsilon_estimate) / r->epsilon_estimate
                            : 0.0);
  /* met: the upper bound within accuracy/2 of the estimate (the automatic grid's target), or
   * the rigorous bounds within accuracy of each other */
  cJSON_AddBoolToObject(out->summary, "accuracy_met",
                        !(r->epsilon > 0.0 && r->epsilon < INFINITY) ||
                            r->epsilon - r->epsilon_estimate <=
                                0.5 * dpd__account_accuracy(a) * r->epsilon_estimate *
                                    (1.0 + 1e-9) ||
                            r->epsilon - r->epsilon_lower <=
                                dpd__account_accuracy(a) * r->epsilon * (1.0 + 1e-9));
}

static int begin(const dpd__account_query *q, const dpd_account *a, const dpd_keys *keys,
                 dpd_output **out, dpd_err *err) {
  char words[256];
  int status = dpd__output_begin(dpd_keys_command_get(keys), "privacy", q->plot, 0, out, err);
  if (status < 0) {
    return status;
  }
  cJSON_DeleteItemFromObjectCaseSensitive((*out)->summary, "seed");
  run_words(q, a, words, sizeof words);
  cJSON_AddStringToObject((*out)->summary, "mechanism", dpd_mechanism_name(a->mechanism));
  if (a->mechanism == DPD_MECHANISM_SUBSAMPLED) {
    cJSON_AddStringToObject((*out)->summary, "sampling", dpd_sampling_name(a->sampling));
  }
  cJSON_AddStringToObject((*out)->summary, "neighbours", dpd_neighbours_name(a->neighbours));
  cJSON_AddStringToObject((*out)->summary, "mechanism_words", mechanism_words(a));
  cJSON_AddStringToObject((*out)->summary, "neighbours_words", relation_words(a));
  return dpd__output_headline_set(*out, err, "model privacy, %s, %s, %s", mechanism_words(a),
                                  relation_words(a), words);
}

/* ---- the run ----------------------------------------------------------------------------- */

/* The run's PLD *p and, with delta, the accounting the summary reports (r: eps at delta, or at
 * the solved noise multiplier / steps); *final: the run they are of (seg: its segment). */
static int account(const dpd__account_query *q, dpd_account *final, dpd_account_segment *seg,
                   dpd_account_result *r, dpd_pld **p, dpd_output *out, dpd_err *err) {
  double sigma = 0.0, h, hint = isnan(q->delta) ? dpd__account_rdp_delta(&q->a, q->epsilon) : 0;
  size_t steps = 0, points;
  int status = DPD_OK;
  *final = q->a;
  if (isnan(q->delta)) { /* epsilon without delta: the grid for delta(epsilon) */
    hint = isnan(hint) ? 1e-5 : fmin(1e-2, fmax(1e-12, hint));
    return dpd__account_run(final, hint, p, &h, &points, err);
  }
  if (q->solve == DPD__SOLVE_NONE) {
    if ((status = dpd__account_run(final, q->delta, p, &h, &points, err)) < 0) {
      return status;
    }
    return dpd__account_fill(final, *p, q->delta, h, points, r, err);
  }
  status = q->solve == DPD__SOLVE_SIGMA
               ? dpd_account_sigma_for(&q->a, q->epsilon, q->delta, &sigma, r, err)
               : dpd_account_steps_for(&q->a, q->epsilon, q->delta, &steps, r, err);
  if (status == DPD_OK && q->solve == DPD__SOLVE_STEPS && steps == 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'epsilon': %g at delta = %g: even one step exceeds it "
                    "(allowed: a larger epsilon, or less privacy loss per step)",
                    q->epsilon, q->delta);
  }
  if (status < 0) {
    return status;
  }
  seg->sigma = q->solve == DPD__SOLVE_SIGMA ? sigma : seg->sigma;
  seg->steps = q->solve == DPD__SOLVE_STEPS ? steps : seg->steps;
  final->segments = seg;
  final->h = r->h;
  dpd_output_number_set(out, q->solve == DPD__SOLVE_SIGMA ? "noise_multiplier" : "steps",
                        q->solve == DPD__SOLVE_SIGMA ? sigma : (double)steps);
  return dpd__account_run(final, q->delta, p, &h, &points, err);
}

/* curve.tsv from the run's PLD p: eps, delta_up, delta_low, delta_rdp, delta_clt, and
 * `reported` (1 on the row of the reported (epsilon, delta), eps = center exactly). */
static int curve(const dpd_account *a, const dpd_pld *p, double center, dpd_output *out,
                 dpd_err *err) {
  const size_t n = DPD_ACCOUNT_CURVE_POINTS;
  const double mu = dpd__account_clt_mu(a);
  dpd_table_builder *b = NULL;
  double *e, *up, *low, *rdp, *clt, *at;
  int status = dpd_table_builder_create(n, &b, err);
  if (status < 0) {
    return status;
  }
  e = dpd_table_builder_column(b, "eps", err);
  up = e != NULL ? dpd_table_builder_column(b, "delta_up", err) : NULL;
  low = up != NULL ? dpd_table_builder_column(b, "delta_low", err) : NULL;
  rdp = low != NULL ? dpd_table_builder_column(b, "delta_rdp", err) : NULL;
  clt = rdp != NULL ? dpd_table_builder_column(b, "delta_clt", err) : NULL;
  at = clt != NULL ? dpd_table_builder_column(b, "reported", err) : NULL;
  status = at != NULL ? DPD_OK : DPD_ENOMEM;
  for (size_t i = 0; i < n && status == DPD_OK; i++) {
    e[i] = center * pow(10.0, CURVE_LO_DECADES +
                                  (CURVE_HI_DECADES - CURVE_LO_DECADES) * (double)i / (double)(n - 1));
    e[i] = i == CURVE_AT ? center : e[i];
    at[i] = i == CURVE_AT;
    status = dpd_pld_delta(p, e[i], &up[i], &low[i], err);
    rdp[i] = dpd__account_rdp_delta(a, e[i]);
    if (!(mu >= 0.0) || dpd_privacy_gdp_delta(mu, e[i], &clt[i], NULL) < 0) {
      clt[i] = NAN;
    }
  }
  if (status < 0) {
    dpd_table_builder_free(b);
    return status;
  }
  return dpd_output_table_add_built(out, "curve.tsv", "account", b, err);
}

/* eps given without delta: delta(eps) from the PLD (upper, lower), RDP and the CLT. */
static int delta_members(const dpd__account_query *q, const dpd_pld *p, dpd_output *out,
                         dpd_err *err) {
  double up, low, mu = dpd__account_clt_mu(&q->a), clt = NAN;
  int status = dpd_pld_delta(p, q->epsilon, &up, &low, err);
  if (status < 0) {
    return status;
  }
  if (mu >= 0.0 && dpd_privacy_gdp_delta(mu, q->epsilon, &clt, NULL) < 0) {
    clt = NAN;
  }
  dpd_output_number_set(out, "delta", up);
  dpd_output_number_set(out, "delta_lower", low);
  number(out, "delta_rdp", dpd__account_rdp_delta(&q->a, q->epsilon), rdp_why(&q->a));
  number(out, "delta_clt", clt, clt_why());
  number(out, "mu_clt", mu, clt_why());
  return DPD_OK;
}

/* The figure's title (curve.tsv's comment line, read by plots/account.gp as data). */
static int title(const dpd__account_query *q, const dpd_account *a, const dpd_account_result *r,
                 dpd_output *out, dpd_err *err) {
  char words[256], line[600];
  run_words(q, a, words, sizeof words);
  if (isnan(q->delta)) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(out->summary, "delta");
    snprintf(line, sizeof line, "title: %s, %s | %s: δ = %.4g at ε = %.6g (upper bound)",
             mechanism_words(a), relation_words(a), words, cJSON_GetNumberValue(d), q->epsilon);
  } else {
    snprintf(line, sizeof line, "title: %s, %s | %s: ε = %.4g at δ = %.3g (upper bound)",
             mechanism_words(a), relation_words(a), words, r->epsilon, q->delta);
  }
  return dpd__output_table_comment_set(out, line, err);
}

static int figure(dpd_output *out, dpd_err *err) {
  cJSON *f = cJSON_AddObjectToObject(out->summary, "figure");
  cJSON *list = cJSON_AddStringToObject(f, "name", "account") ? cJSON_AddArrayToObject(f, "data")
                                                              : NULL;
  if (list == NULL || !cJSON_AddItemToArray(list, cJSON_CreateString("curve.tsv"))) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return dpd__output_figure_set(out, "account", err);
}

static int notes(const dpd__account_query *q, const dpd_account_result *r, dpd_output *out,
                 dpd_err *err) {
  int status = dpd__output_note_add(
      out, err, "note: epsilon is the PLD upper bound (never below the true epsilon); "
                "epsilon_lower the PLD lower bound; epsilon_clt a CLT approximation, neither "
                "bound");
  if (status == DPD_OK && q->a.mechanism == DPD_MECHANISM_SHUFFLE) {
    status = dpd__output_note_add(out, err,
                                  "note: shuffle: one Gaussian step per epoch (each record is "
                                  "in one batch of an epoch); no amplification by shuffling "
                                  "is claimed");
  }
  /* the automatic grid stops when the upper bound is within accuracy/2 of the estimate
   * (account.c, auto_pld); the rigorous lower bound may stay wider */
  const double acc = dpd__account_accuracy(&q->a);
  if (status == DPD_OK && !isnan(q->delta) &&
      !(r->epsilon - r->epsilon_estimate <= 0.5 * acc * r->epsilon_estimate) &&
      !(r->epsilon - r->epsilon_lower <= acc * r->epsilon)) {
    status = dpd__output_note_add(out, err,
                                  "warning: the PLD upper bound is %.3g above the estimate "
                                  "(relative %.3g), more than accuracy/2 = %g: a finer grid "
                                  "needs more memory",
                                  r->epsilon - r->epsilon_estimate,
                                  (r->epsilon - r->epsilon_estimate) / r->epsilon_estimate,
                                  0.5 * acc);
  }
  return status;
}

int dpd__account_report(const dpd__account_query *q, const dpd_keys *keys, dpd_output **out,
                        dpd_err *err) {
  dpd_account final;
  dpd_account_segment seg = q->a.segments[0];
  dpd_account_result r;
  dpd_pld *p = NULL;
  size_t total = 0;
  double center;
  int status = begin(q, &q->a, keys, out, err);
  memset(&r, 0, sizeof r);
  if (status == DPD_OK) {
    status = account(q, &final, &seg, &r, &p, *out, err);
  }
  if (status == DPD_OK && isnan(q->delta)) {
    status = delta_members(q, p, *out, err);
  } else if (status == DPD_OK) {
    dpd_output_number_set(*out, "delta", q->delta);
    result_members(*out, &final, &r);
  }
  for (size_t i = 0; status == DPD_OK && i < final.nsegments; i++) {
    total += final.segments[i].steps;
  }
  if (status == DPD_OK) {
    dpd_output_number_set(*out, "h", dpd_pld_h(p));
    dpd_output_number_set(*out, "points", (double)dpd_pld_points(p));
    dpd_output_number_set(*out, "total_steps", (double)total);
    dpd_output_number_set(*out, "accuracy", dpd__account_accuracy(&q->a));
    center = !isnan(q->delta) && r.epsilon > 0.0 && r.epsilon < INFINITY ? r.epsilon
             : isnan(q->delta) ? q->epsilon
                               : 1.0;
    status = curve(&final, p, center, *out, err);
  }
  dpd_pld_free(p);
  if (status == DPD_OK && (status = title(q, &final, &r, *out, err)) == DPD_OK) {
    status = notes(q, &r, *out, err);
  }
  return status == DPD_OK ? figure(*out, err) : status;
}
