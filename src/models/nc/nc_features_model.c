/* model=nc on a user's features: the keys features = file:PATH, labels, test_features,
 * test_labels, x_bound (nc_model_impl.h), and the command diagnose.
 * SPDX-License-Identifier: MIT
 *
 * diagnose  the collapse diagnostics (nc_features.h) of the training features (and of the test
 *           features when given): class means, cosines of the centred class means against the
 *           simplex ETF value -1/(K-1), the distribution of beta_i = |x_i - Mhat_{y_i}|_inf, the
 *           data's own G and NC1 (Papyan, Han & Donoho, arXiv:2008.08186). With features = etf
 *           it diagnoses replicate 0's training sample of the ETF law (the training shifts of
 *           stream (seed, 0), dpd_nc_train_sample).
 *
 * Privacy of file features: G = c R with the public bound R = x_bound, every training row with
 * |x| > R clipped to norm R (nc.h, dpd_nc_data_config). A bound read off the data (the
 * diagnostics' G_estimated) would itself depend on every row: it is reported, never used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/nc_theory.h"
#include "models/nc/nc_model_impl.h"
int dpd__nc_files_setup(dpd_keys *keys, dpd_nc_normalize normalize, dpd__nc_files *f,
                        dpd_err *err) {
  static const char *const law_keys[] = {"etf",  "imbalance_ratio", "imbalance_fraction", "shift",
                                         "beta", "offset",          "offset_at_test"};
  static const char *const file_keys[] = {"labels", "test_features", "test_labels", "x_bound"};
  const char *command = dpd_keys_command_get(keys);
  const int diagnose = strcmp(command, "diagnose") == 0;
  const int account = strcmp(command, "account") == 0; /* needs no test rows */
  const char *path, *labels, *test, *test_labels;
  int status;
  memset(f, 0, sizeof *f);
  f->x_bound = INFINITY;
  if ((status = dpd__model_features_key(keys, "etf", file_keys,
                                        sizeof file_keys / sizeof *file_keys, &path, err)) < 0 ||
      path == NULL) {
    return status;
  }
  if ((status = dpd__model_file_key(keys, "labels", &labels, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_features", &test, err)) < 0 ||
      (status = dpd__model_file_key(keys, "test_labels", &test_labels, err)) < 0) {
    return status;
  }
  if (test_labels != NULL && test == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_labels': given without test_features (allowed: the "
                    "labels of the test_features file)");
  }
  if (labels != NULL && test != NULL && test_labels == NULL) {
    /* test_features would be read with its first column as the labels, silently */
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'test_labels' (allowed: file:PATH; required with labels "
                    "and test_features: the training labels are in their own file, so the test "
                    "labels must be too, else test_features' first column would be taken as "
                    "labels)");
  }
  if (test == NULL && !diagnose && !account) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'test_features' (allowed: file:PATH; required with "
                    "features = file:PATH: the test error is measured on these rows)");
  }
  if (dpd_keys_given(keys, "x_bound")) {
    if ((status = dpd_keys_real_get(keys, "x_bound", &f->x_bound, err)) < 0) {
      return status;
    }
    if (!isfinite(f->x_bound) && normalize != DPD_NC_NORMALIZE_L2 &&
        normalize != DPD_NC_NORMALIZE_CENTER_L2 && !diagnose) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'x_bound': inf (allowed: a finite public bound R > 0 on "
                      "|x|; inf only with normalize = l2 or center_l2)");
    }
  } else if (!diagnose && normalize != DPD_NC_NORMALIZE_L2 &&
             normalize != DPD_NC_NORMALIZE_CENTER_L2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'x_bound' (allowed: a public bound R > 0 on the feature "
                    "norms |x|; required with features = file:PATH unless normalize = l2 or "
                    "center_l2: training rows are clipped to norm R and the sensitivity is "
                    "G = c R, since a bound read off the data themselves would not be private)");
  }
  f->from_file = 1;
  f->test_given = test != NULL;
  f->train_cfg = dpd_nc_features_config_default();
  f->train_cfg.path = path;
  f->train_cfg.labels_path = labels;
  f->test_cfg = dpd_nc_features_config_default();
  f->test_cfg.path = test;
  f->test_cfg.labels_path = test_labels;
  f->test_cfg.key = "test_features";
  f->test_cfg.labels_key = "test_labels";
  f->test_cfg.K_key = "features";
  f->test_cfg.p_key = "features";
  {
    double b = 0.0;
    if ((status = dpd_nc_features_bytes(&f->train_cfg, &f->bytes, err)) < 0 ||
        (test != NULL && (status = dpd_nc_features_bytes(&f->test_cfg, &b, err)) < 0)) {
      return status;
    }
    f->bytes += b;
  }
  for (size_t k = 0; k < sizeof law_keys / sizeof *law_keys; k++) {
    dpd_keys_unset(keys, law_keys[k]); /* the ETF law's keys: not in effect */
  }
  return DPD_OK;
}

/* A size key given by the user must agree with the files; the value in effect is recorded. */
static int size_agrees(dpd_keys *keys, const char *key, size_t value, const char *what,
                       const char *path, dpd_err *err) {
  char buf[32];
  int status;
  if (dpd_keys_given(keys, key)) {
    size_t given;
    if ((status = dpd_keys_size_get(keys, key, &given, err)) < 0) {
      return status;
    }
    if (given != value) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %zu (allowed: %zu, the %s of '%s'; or leave '%s' "
                      "out)",
                      key, given, value, what, path, key);
    }
  }
  snprintf(buf, sizeof buf, "%zu", value);
  return dpd_keys_effective_set(keys, key, buf, err);
}

int dpd__nc_files_read(dpd_keys *keys, const dpd_run_env *env, dpd__nc_files *f, dpd_err *err) {
  int status;
  f->train_cfg.max_bytes = env->max_memory;
  if ((status = dpd_nc_features_read(&f->train_cfg, &f->train, err)) < 0) {
    return status;
  }
  if ((status = size_agrees(
           keys, "K", f->train->K, "number of classes of the labels",
           f->train_cfg.labels_path != NULL ? f->train_cfg.labels_path : f->train_cfg.path, err)) <
          0 ||
      (status = size_agrees(keys, "p", f->train->p, "number of feature columns", f->train_cfg.path,
                            err)) < 0 ||
      (status = size_agrees(keys, "n", f->train->n, "number of rows", f->train_cfg.path, err)) <
          0) {
    return status;
  }
  if (f->test_given) {
    f->test_cfg.K = f->train->K;
    f->test_cfg.p = f->train->p;
    f->test_cfg.max_bytes = env->max_memory;
    if ((status = dpd_nc_features_read(&f->test_cfg, &f->test, err)) < 0) {
      return status;
    }
    if (dpd_keys_applies(keys, "n_test") &&
        (status = size_agrees(keys, "n_test", f->test->n, "number of rows", f->test_cfg.path,
                              err)) < 0) {
      return status;
    }
  }
  return DPD_OK;
}

int dpd__nc_files_problem(dpd__nc_files *f, const dpd_nc_problem_config *pc, dpd_nc_problem **out,
                          dpd_err *err) {
  dpd_nc_data_config *d = &f->data;
  memset(d, 0, sizeof *d);
  d->K = f->train->K;
  d->p = f->train->p;
  d->n = f->train->n;
  d->n_test = f->test->n;
  d->X = f->train->X;
  d->y = f->train->y;
  d->X_test = f->test->X;
  d->y_test = f->test->y;
  d->x_bound = f->x_bound;
  d->normalize = pc->normalize;
  d->test_shift = pc->test_shift;
  d->beta_test = pc->beta_test;
  return dpd_nc_problem_from_data(d, out, err);
}

/* The fraction of training rows longer than x_bound (clipped by the mechanism). */
static double clipped_fraction(const dpd_nc_features *t, double R) {
  size_t clipped = 0;
  for (size_t i = 0; i < t->n; i++) {
    double s = 0.0;
    for (size_t l = 0; l < t->p; l++) {
      s += t->X[i * t->p + l] * t->X[i * t->p + l];
    }
    clipped += sqrt(s) > R;
  }
  return (double)clipped / (double)t->n;
}

int dpd__nc_files_output(dpd_output *out, const dpd__nc_files *f, dpd_err *err) {
  cJSON *o = cJSON_AddObjectToObject(out->summary, "features");
  if (o == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(o, "source", f->from_file ? "file" : "etf");
  if (!f->from_file) {
    return DPD_OK;
  }
  cJSON_AddStringToObject(o, "path", f->train_cfg.path);
  if (f->train_cfg.labels_path != NULL) {
    cJSON_AddStringToObject(o, "labels", f->train_cfg.labels_path);
  }
  cJSON_AddNumberToObject(o, "n", (double)f->train->n);
  cJSON_AddNumberToObject(o, "p", (double)f->train->p);
  cJSON_AddNumberToObject(o, "K", (double)f->train->K);
  if (f->test != NULL) {
    cJSON_AddStringToObject(o, "test_path", f->test_cfg.path);
    if (f->test_cfg.labels_path != NULL) {
      cJSON_AddStringToObject(o, "test_labels", f->test_cfg.labels_path);
    }
    cJSON_AddNumberToObject(o, "n_test", (double)f->test->n);
  }
  const char *command =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out->summary, "command"));
  const int diagnose = strcmp(command, "diagnose") == 0;
  const int account = strcmp(command, "account") == 0; /* no replicates */
  if (isfinite(f->x_bound)) {
    cJSON_AddNumberToObject(o, "x_bound", f->x_bound);
    cJSON_AddNumberToObject(o, "clipped_fraction", clipped_fraction(f->train, f->x_bound));
  } else if (!diagnose) {
    cJSON_AddNumberToObject(o, "x_bound", INFINITY); /* normalize = l2 or center_l2 */
  }
  if (!diagnose && !account) {
    return dpd__output_note_add(
        out, err,
        "note: features from files: the replicates redraw only the noise (and the test "
        "perturbation u when test_shift is random); the training and test rows are the "
        "files' in every replicate, so the standard error measures the noise alone");
  }
  return DPD_OK;
}

void dpd__nc_files_free(dpd__nc_files *f) {
  dpd_nc_features_free(f->train);
  dpd_nc_features_free(f->test);
  f->train = f->test = NULL;
}

/* ---- diagnose ---- */

/* The ETF law of the keys (the same keys and checks as simulate's). */
static int law_config(const dpd_keys *keys, dpd_nc_problem_config *pc, dpd_err *err) {
  size_t choice;
  int status;
  *pc = dpd_nc_problem_config_default();
  if ((status = dpd_keys_size_get(keys, "K", &pc->K, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "p", &pc->p, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n", &pc->n, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "etf", &choice, err)) < 0) {
    return status;
  }
  if (pc->p < pc->K) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': %zu (allowed: p >= K = %zu)", pc->p,
                    pc->K);
  }
  pc->etf = choice == 0 ? DPD_NC_ETF_SPARSE : DPD_NC_ETF_DENSE;
  if ((status = dpd_keys_real_get(keys, "imbalance_ratio", &pc->imbalance_ratio, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "imbalance_fraction", &pc->imbalance_fraction, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "shift", &choice, err)) < 0) {
    return status;
  }
  pc->shift = choice == 0   ? DPD_NC_SHIFT_NONE
              : choice == 1 ? DPD_NC_SHIFT_CUBE
                            : DPD_NC_SHIFT_RADEMACHER;
  if ((status = dpd_keys_real_get(keys, "beta", &pc->beta, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "offset", &pc->offset, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &pc->seed, err)) < 0) {
    return status;
  }
  if (pc->shift != DPD_NC_SHIFT_NONE && !(pc->beta > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'beta': 0 with shift = %s (allowed: beta > 0 with a "
                    "shift; or shift = none)",
                    dpd_keys_text_get(keys, "shift"));
  }
  pc->n_test = pc->n; /* not used: the test law is not diagnosed */
  return DPD_OK;
}

typedef struct {
  const dpd_nc_problem *problem;
  uint64_t seed;
} law_rows;

static size_t law_row(void *user, size_t i, double *x) {
  const law_rows *l = user;
  return dpd_nc_train_sample(l->problem, l->seed, 0, i, x);
}

/* Rows that report their count to env->progress (rows read of 2 n: the diagnostics read each row
 * twice), every POLL_ROWS rows; when the callback asks for a stop, the label K makes the
 * diagnostics return at once, and the caller turns that into DPD_ECANCELLED. */
#define POLL_ROWS 1024
typedef struct {
  dpd_nc_row_fn row;
  void *user;
  const dpd_run_env *env;
  size_t K, calls, total;
  int stopped;
} polled_rows;

static size_t polled_row(void *user, size_t i, double *x) {
  polled_rows *r = user;
  r->calls++;
  if (!r->stopped && r->env->progress != NULL && r->calls % POLL_ROWS == 0 &&
      r->calls < r->total) {
    r->stopped = r->env->progress(r->env->progress_user, "rows", r->calls, r->total) != 0;
  }
  return r->stopped ? r->K : r->row(r->user, i, x);
}

static int diagnostics_polled(size_t n, size_t p, size_t K, dpd_nc_row_fn row, void *user,
                              const dpd_run_env *env, dpd_nc_diagnostics **out, dpd_err *err) {
  polled_rows r = {row, user, env, K, 0, 2 * n, 0};
  int status = dpd_nc_diagnostics_create(n, p, K, polled_row, &r, out, err);
  if (r.stopped) {
    dpd_nc_diagnostics_free(*out);
    *out = NULL;
    return DPD_FAIL(err, DPD_ECANCELLED, "diagnose: stopped by the progress callback");
  }
  return status;
}

/* The diagnostics' scalars into a JSON object. */
static void diag_json(cJSON *o, const dpd_nc_diagnostics *d) {
  static const char *const names[DPD_NC_BETA_QUANTILES] = {"min", "q10", "q25", "median",
                                                           "q75", "q90", "q99", "max"};
  cJSON *q;
  cJSON_AddNumberToObject(o, "n", (double)d->n);
  cJSON_AddNumberToObject(o, "p", (double)d->p);
  cJSON_AddNumberToObject(o, "K", (double)d->K);
  dpd__json_number(o, "cos_etf", d->cos_etf);
  dpd__json_number(o, "cos_mean", d->cos_mean);
  dpd__json_number(o, "cos_min", d->cos_min);
  dpd__json_number(o, "cos_max", d->cos_max);
  dpd__json_number(o, "cos_max_dev", d->cos_max_dev);
  q = cJSON_AddObjectToObject(o, "beta_quantiles");
  for (size_t k = 0; k < DPD_NC_BETA_QUANTILES && q != NULL; k++) {
    dpd__json_number(q, names[k], d->beta_quantile[k]);
  }
  dpd__json_number(o, "beta_mean", d->beta_mean);
  dpd__json_number(o, "x_norm_max", d->x_norm_max);
  dpd__json_number(o, "x_norm_mean", d->x_norm_mean);
  dpd__json_number(o, "G_estimated", d->G_ce);
  dpd__json_number(o, "within_trace", d->within_trace);
  dpd__json_number(o, "between_trace", d->between_trace);
  if (isfinite(d->trace_ratio)) {
    dpd__json_number(o, "trace_ratio", d->trace_ratio);
  } else {
    cJSON_AddNumberToObject(o, "trace_ratio", INFINITY);
  }
  dpd__json_number(o, "nc1", d->nc1);
  cJSON_AddNumberToObject(o, "between_rank", (double)d->between_rank);
}

static int diag_tables(dpd_output *out, const dpd_nc_diagnostics *d, dpd_err *err) {
  const size_t K = d->K, P = d->npairs, Q = DPD_NC_BETA_QUANTILES;
  double *buf = malloc((2 * K + 2 * P) * sizeof *buf);
  int status;
  if (buf == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  double *cls = buf, *cnt = buf + K, *pj = buf + 2 * K, *pk = pj + P;
  for (size_t k = 0, m = 0; k < K; k++) {
    cls[k] = (double)k;
    cnt[k] = (double)d->counts[k];
    for (size_t j = k + 1; j < K; j++, m++) {
      pj[m] = (double)k;
      pk[m] = (double)j;
    }
  }
  {
    const double *cc[4] = {cls, cnt, d->centred_norm, d->within_rms};
    const double *pc[3] = {pj, pk, d->cosines};
    const double *qc[2] = {d->beta_prob, d->beta_quantile};
    if ((status = dpd_output_table_add(out, "classes.tsv", NULL,
                                       "class count centred_mean_norm within_rms", K, 4, cc,
                                       err)) == DPD_OK &&
        (status = dpd_output_table_add(out, "cosines.tsv", NULL, "class_j class_k cosine", P, 3, pc,
                                       err)) == DPD_OK) {
      char line[96];
      snprintf(line, sizeof line, "ETF value -1/(K-1) = %.17g", d->cos_etf);
      if ((status = dpd__output_table_comment_set(out, line, err)) == DPD_OK) {
        status = dpd_output_table_add(out, "beta_quantiles.tsv", NULL, "probability beta", Q, 2, qc,
                                      err);
      }
    }
  }
  free(buf);
  return status;
}

int dpd__nc_diagnose(dpd_keys *keys, const dpd_run_env *env, dpd_output **outp, dpd_err *err) {
  dpd__nc_files files;
  dpd_nc_problem_config pc;
  dpd_nc_problem *problem = NULL;
  dpd_nc_diagnostics *train = NULL, *test = NULL;
  dpd_output *out = NULL;
  int plot, status;
  double bytes;
  uint64_t seed;
  *outp = NULL;
  memset(&files, 0, sizeof files);
  if ((status = dpd__nc_files_setup(keys, DPD_NC_NORMALIZE_NONE, &files, err)) < 0) {
    goto done;
  }
  if (!files.from_file && (status = law_config(keys, &pc, err)) < 0) {
    goto done;
  }
  if ((status = dpd__model_plot_get(keys, 0, &plot, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &seed, err)) < 0) {
    goto done;
  }
  (void)dpd_keys_restrict(keys, 0, "", NULL); /* training and privacy keys: not in effect */
  if (files.from_file) {
    bytes = 2.0 * files.bytes; /* the files, and the diagnostics' arrays (at most as large) */
  } else {
    bytes = 8.0 * ((3.0 * (double)pc.K + 3.0) * (double)pc.p + (double)pc.n +
                   (double)pc.K * (double)pc.K);
  }
  if ((status = dpd__model_memory_check(keys, env, bytes, files.from_file ? "features" : "p",
                                        err)) < 0) {
    goto done;
  }
  if (files.from_file) {
    if ((status = dpd__nc_files_read(keys, env, &files, err)) < 0) {
      goto done;
    }
    /* with K p known: the diagnostics' own arrays */
    bytes = files.bytes + 8.0 * (3.0 * (double)files.train->K + 3.0) * (double)files.train->p +
            8.0 * (double)files.train->n + 8.0 * (double)files.train->K * (double)files.train->K;
    if ((status = dpd__model_memory_check(keys, env, bytes, "features", err)) < 0) {
      goto done;
    }
  }
  if ((status = dpd__model_validated(env, err)) != 0) {
    status = status < 0 ? status : DPD_OK;
    goto done;
  }
  if (files.from_file) {
    status = diagnostics_polled(files.train->n, files.train->p, files.train->K,
                                dpd_nc_features_row, files.train, env, &train, err);
    if (status == DPD_OK && files.test != NULL) {
      status = diagnostics_polled(files.test->n, files.test->p, files.test->K,
                                  dpd_nc_features_row, files.test, env, &test, err);
    }
  } else {
    law_rows rows;
    if ((status = dpd_nc_problem_create(&pc, &problem, err)) == DPD_OK) {
      rows.problem = problem;
      rows.seed = pc.seed;
      status = diagnostics_polled(pc.n, pc.p, pc.K, law_row, &rows, env, &train, err);
    }
  }
  if (status < 0) {
    goto done;
  }
  if ((status = dpd__output_begin("diagnose", "nc", plot, seed, &out, err)) < 0 ||
      (status = dpd__output_headline_set(
           out, err, "model nc diagnose, %s, K = %zu, p = %zu, n = %zu",
           files.from_file ? files.train_cfg.path : "ETF law", train->K, train->p, train->n)) < 0 ||
      (status = dpd__nc_files_output(out, &files, err)) < 0) {
    goto done;
  }
  diag_json(out->summary, train);
  if (!files.from_file) {
    cJSON_AddStringToObject(out->summary, "sample",
                            "replicate 0's training sample of the ETF law (stream (seed, 0))");
  }
  if (test != NULL) {
    cJSON *o = cJSON_AddObjectToObject(out->summary, "test");
    if (o != NULL) {
      diag_json(o, test);
    }
  }
  if ((status = diag_tables(out, train, err)) < 0 ||
      (status = dpd__output_note_add(
           out, err,
           "note: G_estimated = sqrt((K-1)/K) max |x_i| = %.6g is the CE sensitivity at W = 0 "
           "that these rows attain; it depends on the data, so a run that used it would not be "
           "private: simulate uses a public bound instead (x_bound for file features, the "
           "sup of |x| over the law for features = etf)",
           train->G_ce)) < 0) {
    goto done;
  }
done:
  dpd_nc_diagnostics_free(train);
  dpd_nc_diagnostics_free(test);
  dpd_nc_problem_free(problem);
  dpd__nc_files_free(&files);
  if (status < 0) {
    dpd_output_free(out);
    out = NULL;
  }
  *outp = out;
  return status;
}
