/* Semi-private learning: the numbers a run reports (its metrics and the theory beside them) as
 * named members, and the checks of the run's sizes (sp_files_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Pinto, Hu, Yang & Sanyal (seed 003; arXiv:2306.03962), Theorem 1, Proposition 4;
 * Zwald & Blanchard, NIPS 2005 (the subspace bound); Bassily, Smith & Thakurta
 * (arXiv:1405.7085): sigma covers at most n^2 steps. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/output_impl.h"
#include "core/text_impl.h"
#include "dpdyn/schedule.h"
#include "semipriv/sp_files_impl.h"

static const char no_w_star[] = "file features: no target w*";

#define NUM(n, v)                                                                                  \
  m[c++] = (dpd__sp_member) {                                                                      \
    .name = (n), .value = (v)                                                                      \
  }
#define NA(n, why)                                                                                 \
  m[c++] = (dpd__sp_member) {                                                                      \
    .name = (n), .na = (why)                                                                       \
  }
#define TEXT(n, t)                                                                                 \
  m[c++] = (dpd__sp_member) {                                                                      \
    .name = (n), .text = (t)                                                                       \
  }

/* trainer = dpsgd: the trainer's configuration as run and its own means (the hinge columns and
 * active_fraction are Noisy-SGD's). */
static size_t dpsgd_members(const dpd_semipriv_result *res, dpd__sp_member *m, size_t c) {
  static const char *const se[DPD_SEMIPRIV_DPSGD_COUNT] = {"clipped_fraction_se", "mean_batch_se",
                                                           "train_loss_se", "test_loss_se"};
  const dpd_dpsgd_config *dp = &res->dpsgd;
  TEXT("trainer", "dpsgd");
  TEXT("loss", dpd_dpsgd_loss_name(dp->loss));
  NUM("classes", (double)res->classes);
  if (dp->steps == 0) {
    NUM("epochs", dp->epochs);
  }
  NUM("eta", dp->lr);
  TEXT("lr_schedule", dp->schedule != NULL ? dpd_schedule_name(dp->schedule) : "const");
  for (size_t i = 0; i < DPD_SEMIPRIV_DPSGD_COUNT; i++) {
    NUM(dpd_semipriv_dpsgd_metric_name((dpd_semipriv_dpsgd_metric)i), res->dpsgd_mean[i]);
    NUM(se[i], res->dpsgd_se[i]);
  }
  return c;
}

size_t dpd__sp_result_members(const dpd_semipriv_result *res, int law, dpd__sp_member *m) {
  size_t c = 0;
  const int dpsgd = res->trainer == DPD_SEMIPRIV_TRAINER_DPSGD;
  NUM("seeds", (double)res->seeds);
  NUM("test_accuracy", res->mean[DPD_SEMIPRIV_TEST_ACCURACY]);
  NUM("test_accuracy_se", res->se[DPD_SEMIPRIV_TEST_ACCURACY]);
  if (!dpsgd) {
    NUM("test_hinge", res->mean[DPD_SEMIPRIV_TEST_HINGE]);
    NUM("test_hinge_se", res->se[DPD_SEMIPRIV_TEST_HINGE]);
  }
  NUM("train_accuracy", res->mean[DPD_SEMIPRIV_TRAIN_ACCURACY]);
  if (!dpsgd) {
    NUM("train_hinge", res->mean[DPD_SEMIPRIV_TRAIN_HINGE]);
  }
  NUM("w_norm", res->mean[DPD_SEMIPRIV_W_NORM]);
  if (res->trainer == DPD_SEMIPRIV_TRAINER_DPSGD) {
    c = dpsgd_members(res, m, c);
  } else {
    NUM("active_fraction", res->mean[DPD_SEMIPRIV_ACTIVE_FRACTION]);
  }
  if (res->n_private > 0) {
    NUM("n_private", (double)res->n_private);
    NUM("n_public", (double)res->n_public);
  }
  if (!law) {
    NA("xi_k", no_w_star);
    NA("margin_min", no_w_star);
    if (res->k < res->d && isfinite(res->eigengap)) {
      NUM("eigengap", res->eigengap);
      TEXT("eigengap_of", "the public sample (lambda_k - lambda_{k+1})");
    } else {
      NA("eigengap",
         res->k == res->d ? "k = d: no PCA" : "k + 1 exceeds the public sample's numerical rank");
    }
    return c;
  }
  NUM("xi_k", res->mean[DPD_SEMIPRIV_XI_HAT]);
  NUM("xi_k_se", res->se[DPD_SEMIPRIV_XI_HAT]);
  NUM("xi_k_population", res->xi_k);
  NUM("eigengap", res->eigengap);
  if (res->k < res->d) {
    NUM("eigengap_hat", res->mean[DPD_SEMIPRIV_EIGENGAP_HAT]);
  } else {
    NA("eigengap_hat", "k = d: no PCA");
  }
  NUM("margin_min", res->mean[DPD_SEMIPRIV_MARGIN_MIN]);
  NUM("margin_guaranteed", res->margin_guaranteed);
  NUM("subspace_error", res->mean[DPD_SEMIPRIV_SUBSPACE_ERROR]);
  NUM("gamma0", res->gamma0);
  NUM("xi0", res->xi0);
  return c;
}

static size_t zb_members(const dpd_semipriv_result *res, const dpd_semipriv_run_config *cfg,
                         int law, dpd__sp_member *m, size_t c);

size_t dpd__sp_theory_members(const dpd_semipriv_result *res, const dpd_semipriv_run_config *cfg,
                              double alpha, int law, dpd__sp_member *m) {
  const size_t n = cfg->n, k = res->k, d = res->d;
  const double eps = cfg->epsilon, delta = cfg->delta, zeta = res->zeta;
  size_t c = 0;
  if (res->trainer == DPD_SEMIPRIV_TRAINER_DPSGD) {
    TEXT("kind", "the PCA's bound alone (Zwald-Blanchard): Theorem 1 and Proposition 4 bound "
                 "Noisy-SGD (trainer = bst), not DP-SGD; theory.tsv's bounds are nan");
    NUM("test_error", 1.0 - res->mean[DPD_SEMIPRIV_TEST_ACCURACY]);
    NUM("test_error_se", res->se[DPD_SEMIPRIV_TEST_ACCURACY]);
    NUM("beta", cfg->beta);
    return k == d ? c : zb_members(res, cfg, law, m, c);
  }
  TEXT("kind", "bounds (Theorem 1, Proposition 4; the notes' constants, logarithms kept, Bassily "
               "et al.'s lemma constant taken as 1)");
  NUM("alpha_private", dpd_semipriv_theory_alpha_private(n, k, eps, delta, zeta));
  NUM("alpha_private_no_pca", dpd_semipriv_theory_alpha_private(n, d, eps, delta, zeta));
  NUM("alpha_nonprivate", dpd_semipriv_theory_alpha_nonprivate(n, zeta));
  NUM("alpha", alpha);
  NUM("n_labelled", dpd_semipriv_theory_n_labelled(alpha, k, eps, delta, zeta));
  NUM("n_labelled_no_pca", dpd_semipriv_theory_n_labelled(alpha, d, eps, delta, zeta));
  NUM("n_labelled_nonprivate", 1.0 / (zeta * alpha * alpha));
  NUM("test_error", 1.0 - res->mean[DPD_SEMIPRIV_TEST_ACCURACY]);
  NUM("test_error_se", res->se[DPD_SEMIPRIV_TEST_ACCURACY]);
  NUM("beta", cfg->beta);
  return k == d ? c : zb_members(res, cfg, law, m, c);
}

/* The Zwald-Blanchard bound beside the measured subspace error (k < d). */
static size_t zb_members(const dpd_semipriv_result *res, const dpd_semipriv_run_config *cfg,
                         int law, dpd__sp_member *m, size_t c) {
  NUM("zb_bound", res->zb_bound);
  if (!law) {
    TEXT("zb_bound_of", "the public sample's own eigengap (no population subspace to measure "
                        "against with file features)");
    return c;
  }
  double max = 0.0;
  size_t within = 0;
  for (size_t i = 0; i < res->seeds; i++) {
    const double v = res->replicates[i * DPD_SEMIPRIV_METRIC_COUNT + DPD_SEMIPRIV_SUBSPACE_ERROR];
    max = v > max ? v : max;
    within += v <= res->zb_bound;
  }
  NUM("subspace_error", res->mean[DPD_SEMIPRIV_SUBSPACE_ERROR]);
  NUM("subspace_error_se", res->se[DPD_SEMIPRIV_SUBSPACE_ERROR]);
  NUM("subspace_error_max", max);
  NUM("zb_bound_holds_fraction", (double)within / (double)res->seeds);
  NUM("n_public_theorem1", dpd_semipriv_theory_n_public(res->gamma0, res->eigengap, cfg->beta));
  return c;
}

int dpd__sp_k_parse(const char *text, size_t d, size_t *k, int *none, dpd_err *err) {
  unsigned long long v;
  *none = text != NULL && strcmp(text, "none") == 0;
  *k = d;
  if (*none) {
    return DPD_OK;
  }
  if (text == NULL || dpd__parse_u64(text, &v) < 0 || v < 1 || v > (d != 0 ? d : 46340)) {
    if (d == 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'k': '%s' (allowed: an integer 1 .. d, or none)",
                      text != NULL ? text : "");
    }
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'k': '%s' (allowed: an integer 1 .. d = %zu, or none)",
                    text != NULL ? text : "", d);
  }
  *k = (size_t)v;
  return DPD_OK;
}

int dpd__sp_steps_check(size_t n, size_t steps, double epsilon, dpd_err *err) {
  const size_t n2 = n * n;
  if (steps == 0 && n2 >= ((size_t)1 << 33)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: n^2 < 2^33 when steps is not given; or "
                    "give steps)",
                    n);
  }
  if (steps > n2 && isfinite(epsilon)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'steps': %zu (allowed: 1 .. n^2 = %zu with a finite "
                    "epsilon: Bassily et al.'s sigma covers n^2 steps; or epsilon = inf)",
                    steps, n2);
  }
  return DPD_OK;
}

void dpd__sp_members_add(cJSON *obj, const dpd__sp_member *m, size_t count) {
  for (size_t i = 0; obj != NULL && i < count; i++) {
    if (m[i].text != NULL) {
      cJSON_AddStringToObject(obj, m[i].name, m[i].text);
    } else if (m[i].na != NULL) {
      dpd__json_na(obj, m[i].name, m[i].na);
    } else {
      dpd__json_number(obj, m[i].name, m[i].value);
    }
  }
}

size_t dpd__sp_constants_members(const dpd_semipriv_result *res, dpd__sp_member *m) {
  size_t c = 0;
  NUM("k", (double)res->k);
  NUM("d", (double)res->d);
  NUM("sigma", res->sigma);
  NUM("L", res->L);
  NUM("zeta", res->zeta);
  NUM("eta1", res->eta1);
  NUM("steps", (double)res->steps);
  return c;
}

/* trainer = dpsgd: the subsampled Gaussian mechanism of dpsgd.h and the accountant at z. */
static size_t dpsgd_privacy_members(const dpd_semipriv_run_config *cfg,
                                    const dpd_semipriv_result *res, dpd__sp_member *m) {
  const dpd_dpsgd_config *dp = &res->dpsgd;
  const int poisson = dp->sampling == DPD_DPSGD_POISSON, given = !isnan(cfg->noise_multiplier);
  size_t c = 0;
  TEXT("trainer", "dpsgd");
  if (res->noise_multiplier == 0.0) {
    TEXT("guarantee", given ? "none (noise_multiplier = 0: non-private)"
                            : "none (epsilon = inf: non-private, noise_multiplier = 0)");
    NUM("epsilon", INFINITY);
  } else {
    TEXT("guarantee", "(epsilon, delta)-DP");
    NUM("epsilon", given ? res->epsilon_pld : cfg->epsilon);
    NUM("delta", cfg->delta);
  }
  TEXT("calibration", given ? "noise_multiplier given: epsilon is the accountant's at it"
                            : "the smallest noise_multiplier whose PLD upper bound of "
                              "eps(delta) is <= epsilon (dpd_dpsgd_calibrate, never above)");
  NUM("noise_multiplier", res->noise_multiplier);
  if (res->noise_multiplier > 0.0) {
    NUM("epsilon_pld", res->epsilon_pld);
    NUM("epsilon_pld_estimate", res->epsilon_pld_estimate);
    NUM("epsilon_pld_lower", res->epsilon_pld_lower);
  }
  TEXT("sampling", dpd_dpsgd_sampling_name(dp->sampling));
  if (poisson) {
    NUM("q", dp->q);
  } else {
    NUM("batch", (double)dp->batch);
  }
  NUM("steps", (double)res->steps);
  NUM("clip", dp->clip);
  NUM("n", (double)res->n_private);
  TEXT("neighbours", poisson ? "add/remove one labelled row (Poisson subsampling)"
                             : "replace one labelled row (fixed-size batches)");
  TEXT("source", "PLD accountant (account.h) of the subsampled Gaussian mechanism: T steps, each "
                 "a sum of per-sample gradients clipped to norm clip plus N(0, (z clip)^2 I), "
                 "every iterate accounted (an upper bound for the released last iterate); the "
                 "public PCA uses no labelled row");
  return c;
}

size_t dpd__sp_privacy_members(const dpd_semipriv_run_config *cfg, const dpd_semipriv_result *res,
                               dpd__sp_member *m) {
  size_t c = 0;
  if (res->trainer == DPD_SEMIPRIV_TRAINER_DPSGD) {
    return dpsgd_privacy_members(cfg, res, m);
  }
  if (isinf(cfg->epsilon)) {
    TEXT("guarantee", "none (epsilon = inf: non-private, sigma = 0)");
    NUM("epsilon", INFINITY);
    TEXT("calibration", dpd_semipriv_calibration_name(res->calibration));
    return c;
  }
  TEXT("guarantee", "(epsilon, delta)-DP");
  NUM("epsilon", cfg->epsilon);
  NUM("delta", cfg->delta);
  TEXT("calibration", dpd_semipriv_calibration_name(res->calibration));
  NUM("noise_multiplier", res->noise_multiplier);
  if (res->calibration == DPD_SEMIPRIV_CALIBRATION_PLD) {
    TEXT("source", "PLD accountant (docs/privacy.md, \"Semi-private Noisy-SGD accounted by PLD\"): "
                   "steps of one record drawn uniformly with replacement (batch 1 of n), "
                   "replace-one neighbours, contribution n grad l of norm <= n L, noise "
                   "multiplier sigma / (n L), every iterate accounted; sigma the smallest whose "
                   "PLD upper bound is <= epsilon");
    NUM("epsilon_pld", res->epsilon_pld);
    NUM("epsilon_pld_estimate", res->epsilon_pld_estimate);
    NUM("epsilon_pld_lower", res->epsilon_pld_lower);
    NUM("sigma_bst", res->sigma_bst);
    NUM("sigma_bst_over_sigma", res->sigma_bst / res->sigma);
    return c;
  }
  TEXT("source", "Bassily, Smith & Thakurta (arXiv:1405.7085): Noisy-SGD with sigma^2 = 32 L^2 n^2 "
                 "log(n/delta) log(1/delta) / epsilon^2, at most n^2 steps sampled with "
                 "replacement, |x| <= 1 (amplification by sampling and advanced composition); no "
                 "zCDP or GDP conversion applies");
  return c;
}

size_t dpd__sp_files_members(const dpd__sp_files *f, dpd__sp_member *m) {
  size_t c = 0;
  TEXT("source", f->from_file ? "file" : "law");
  if (!f->from_file) {
    return c;
  }
  TEXT("path", f->train.path);
  if (f->train.labels_path != NULL) {
    TEXT("labels", f->train.labels_path);
  }
  NUM("n", (double)f->train.n);
  NUM("d", (double)f->train.p);
  if (f->has_positive) {
    NUM("positive_class", f->positive_class);
  }
  if (f->pub.X != NULL) {
    TEXT("public_path", f->pub.path);
    NUM("n_public", (double)f->pub.n);
  }
  if (f->test.X != NULL) {
    TEXT("test_path", f->test.path);
    if (f->test.labels_path != NULL) {
      TEXT("test_labels", f->test.labels_path);
    }
    NUM("n_test", (double)f->test.n);
  }
  TEXT("scaling", "every row scaled to norm 1 (the unit sphere)");
  return c;
}

const char *dpd__sp_note(dpd__sp_note_kind kind) {
  static const char *const notes[] = {
      "note: each replicate redraws the labelled, public and test samples and the noise of "
      "Noisy-SGD (stream (seed, r)); Q and w* are fixed by seed. xi_k is that of the estimated "
      "subspace, 1 - |A_hat A_hat^T w*|; margin_min the smallest y <w*, x> of the labelled sample",
      "note: features from files: the replicates redraw only the noise and the sampled indices of "
      "Noisy-SGD; the labelled, public and test rows are the files' in every replicate, so the "
      "standard error measures the noise alone. Every row was scaled to norm 1 (the algorithm's "
      "unit sphere; part of the mechanism)",
      "note: the theory gives upper bounds (Theorem 1, Proposition 4, Zwald-Blanchard), often "
      "vacuous at these sizes (> 1); they are not predictions of the measured accuracy",
      "error bounds against n: Theorem 1 at k and at d, Proposition 4 (bounds, not predictions)"};
  return notes[kind];
}

const char *dpd__sp_run_note(const dpd_semipriv_result *res, int law) {
  const int dpsgd = res->trainer == DPD_SEMIPRIV_TRAINER_DPSGD;
  if (law) {
    return dpsgd ? "note: each replicate redraws the labelled, public and test samples and the "
                   "batches and noise of DP-SGD (stream (seed, r)); Q and w* are fixed by seed; "
                   "the labels +-1 are the classes 1 / 0"
                 : dpd__sp_note(DPD__SP_NOTE_LAW);
  }
  if (res->n_private == 0) { /* Noisy-SGD on the files as they are */
    return dpd__sp_note(DPD__SP_NOTE_FILES);
  }
  return dpsgd ? "note: features from files: each replicate redraws the public split "
                 "(public_fraction), the subset of private rows trained on (private_fraction) and "
                 "the batches and noise of DP-SGD (stream (seed, r)); the test rows are the "
                 "file's. Every row was scaled to norm 1"
               : "note: features from files: each replicate redraws the public split "
                 "(public_fraction), the subset of private rows trained on (private_fraction) and "
                 "the sampled indices and noise of Noisy-SGD (stream (seed, r)); the test rows are "
                 "the file's. Every row was scaled to norm 1";
}

int dpd__sp_replicates_table(const dpd_semipriv_result *res, dpd_table_builder **b, dpd_err *err) {
  int status = dpd_table_builder_create(res->seeds, b, err);
  for (size_t m = 0; status == DPD_OK && m <= DPD_SEMIPRIV_METRIC_COUNT; m++) {
    const char *name =
        m == 0 ? "replicate" : dpd_semipriv_metric_name((dpd_semipriv_metric)(m - 1));
    double *col = dpd_table_builder_column(*b, name, err);
    for (size_t i = 0; col != NULL && i < res->seeds; i++) {
      col[i] = m == 0 ? (double)i : res->replicates[i * DPD_SEMIPRIV_METRIC_COUNT + m - 1];
    }
    status = col != NULL ? DPD_OK : err->status;
  }
  for (size_t m = 0;
       status == DPD_OK && res->dpsgd_replicates != NULL && m < DPD_SEMIPRIV_DPSGD_COUNT;
       m++) { /* trainer = dpsgd: its own columns */
    double *col = dpd_table_builder_column(
        *b, dpd_semipriv_dpsgd_metric_name((dpd_semipriv_dpsgd_metric)m), err);
    for (size_t i = 0; col != NULL && i < res->seeds; i++) {
      col[i] = res->dpsgd_replicates[i * DPD_SEMIPRIV_DPSGD_COUNT + m];
    }
    status = col != NULL ? DPD_OK : err->status;
  }
  if (status < 0) {
    dpd_table_builder_free(*b);
    *b = NULL;
  }
  return status;
}

int dpd__sp_theory_table(const dpd_semipriv_result *res, const dpd_semipriv_run_config *cfg,
                         dpd_table_builder **b, dpd_err *err) {
  enum { G = 33 }; /* a log grid of n, 10 .. 1e9 */
  static const char *const names[4] = {"n", "alpha_private", "alpha_private_no_pca",
                                       "alpha_nonprivate"};
  const double eps = cfg->epsilon, delta = cfg->delta, zeta = res->zeta;
  double *col[4] = {NULL};
  int status = dpd_table_builder_create(G, b, err);
  for (size_t k = 0; status == DPD_OK && k < 4; k++) {
    status = (col[k] = dpd_table_builder_column(*b, names[k], err)) != NULL ? DPD_OK : err->status;
  }
  for (size_t i = 0; status == DPD_OK && i < G; i++) {
    const size_t ni = (size_t)llround(pow(10.0, 1.0 + 8.0 * (double)i / (double)(G - 1)));
    col[0][i] = (double)ni;
    col[1][i] = dpd_semipriv_theory_alpha_private(ni, res->k, eps, delta, zeta);
    col[2][i] = dpd_semipriv_theory_alpha_private(ni, res->d, eps, delta, zeta);
    col[3][i] = dpd_semipriv_theory_alpha_nonprivate(ni, zeta);
  }
  if (status < 0) {
    dpd_table_builder_free(*b);
    *b = NULL;
  }
  return status;
}

int dpd__sp_sizes_check(dpd_semipriv_run_config *rc, size_t d, const dpd__sp_files *f, int run,
                        dpd_err *err) {
  int status;
  size_t n_public = 0, n_private = 0;
  rc->n = f->from_file ? f->train.n : rc->n;
  rc->n_public = f->has_public ? f->pub.n : rc->n_public;
  rc->n_test = f->has_test ? f->test.n : rc->n_test;
  if (f->from_file && (f->public_fraction > 0.0 || f->private_fraction < 1.0)) {
    if ((status = dpd__sp_split_sizes(f, f->train.n, rc->k, run, &n_public, &n_private, &rc->n,
                                      err)) < 0) {
      return status;
    }
    rc->n_public = n_public > 0 ? n_public : rc->n_public;
  }
  if (rc->trainer == DPD_SEMIPRIV_TRAINER_DPSGD) {
    dpd_dpsgd_config c = rc->dpsgd;
    const long long b = llround(c.q * (double)rc->n);
    c.batch = c.sampling == DPD_DPSGD_FIXED && c.batch == 0 ? (b < 1 ? 1 : (size_t)b) : c.batch;
    c.classes = c.loss == DPD_DPSGD_SOFTMAX && f->multiclass ? f->classes : 2;
    if (f->multiclass && c.loss != DPD_DPSGD_SOFTMAX && f->classes != 2) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'loss': %s with %zu classes in the labels (allowed: ce; "
                      "hinge and logistic are binary: give positive_class for one-vs-rest)",
                      dpd_dpsgd_loss_name(c.loss), f->classes);
    }
    if ((status = dpd_dpsgd_check(&c, rc->n, rc->k, err)) < 0) {
      return status;
    }
  } else if ((status = dpd__sp_steps_check(rc->n, rc->steps, rc->epsilon, err)) < 0) {
    return status;
  }
  if (!run) {
    return DPD_OK;
  }
  if (rc->k < d && f->from_file && !f->has_public && !(f->public_fraction > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'public_features' (allowed: file:PATH; required with "
                    "features = file:PATH and k = %zu < d = %zu; or k = none)",
                    rc->k, d);
  }
  if (rc->k < d && rc->n_public < rc->k + 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n_public': %zu (allowed: >= k + 1 = %zu public points for "
                    "the top-k PCA)",
                    rc->n_public, rc->k + 1);
  }
  return DPD_OK;
}
