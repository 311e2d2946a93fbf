/* Neural collapse with trainer = dpsgd: DP-SGD (dpsgd.h) on each replicate's features as the
 * NoisyGD simulator sees them (nc.h, dpd_nc_dpsgd_run), its keys, privacy and reports
 * (nc_impl.h). docs/nc.md, "DP-SGD trainer and the real-feature protocol".
 * SPDX-License-Identifier: MIT
 *
 * References: Abadi et al., CCS 2016 (DP-SGD); Wang, Zhu, Su & Wang, arXiv:2405.08920 (v3),
 * §5.2 (last-layer fine-tuning with NoisySGD for 10 epochs at (1, 1e-4)).
 *
 * Privacy. Each step of dpd_dpsgd_train is the subsampled Gaussian mechanism on a sum of
 * per-sample gradients clipped to `clip`; a row's gradient depends on that row alone when the
 * features of a row are a function of the row (the feature clip, l2, the resize map and the PCA
 * directions are: the latter two are public). normalize = center / center_l2 subtract the
 * private training mean from every row, which per-sample clipping does not bound: refused. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dot_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "nc/nc_impl.h"

/* The noise region of the replicate stream (nc.h: tag 2, NoisyGD's noise). */
#define NC_DPSGD_TAG 2u

typedef struct {
  const dpd_nc_problem *pr;
  const dpd_dpsgd_config *dc;
  uint64_t seed;
  size_t work_nc; /* doubles of the simulator's work space; then the rows and labels */
  dpd_nc_sim_result *res;
  int *status; /* [seeds] */
} dpsgd_plan;

/* One replicate on its own work space; err NULL inside the parallel run (reworded after). */
static int dpsgd_replicate(const dpsgd_plan *pl, size_t rep, double *work, dpd_err *err) {
  const dpd_nc_problem *pr = pl->pr;
  const size_t K = pr->K, p = pr->p, n = pr->n;
  double *X = work + pl->work_nc;
  int32_t *y = (int32_t *)(void *)(X + n * p);
  dpd_dpsgd_config c = *pl->dc;
  dpd_dpsgd_model *m = NULL;
  int status;
  c.seed = pl->seed;
  c.stream = (uint64_t)rep;
  c.tag = NC_DPSGD_TAG;
  if ((status = dpd__nc_replicate_rows(pr, pl->seed, rep, work, X, y, err)) < 0 ||
      (status = dpd_dpsgd_train(&c, X, y, n, p, &m, err)) < 0) {
    return status;
  }
  dpd_nc_sim_result *r = pl->res;
  const size_t wrong =
      dpd__nc_replicate_test(pr, pl->seed, rep, work, m->W, r->class_error_replicates + rep * K);
  r->test_error_replicates[rep] = (double)wrong / (double)pr->n_test;
  r->w_norm_replicates[rep] = sqrt(dpd__dot8(m->W, m->W, K * p));
  r->clipped_fraction_replicates[rep] = m->clipped_fraction;
  r->mean_batch_replicates[rep] = m->mean_batch;
  r->train_loss_replicates[rep] = m->train_loss;
  dpd_dpsgd_model_free(m);
  return DPD_OK;
}

static int run_one(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  const dpsgd_plan *pl = job;
  (void)slot;
  return pl->status[rep] = dpsgd_replicate(pl, rep, work, NULL);
}

static int check(const dpd_nc_problem *pr, const dpd_nc_sim_config *sc, const dpd_dpsgd_config *dc,
                 dpd_err *err) {
  const dpd_nc_normalize nz = pr->cfg.normalize;
  if (sc->seeds < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'seeds': 0 (allowed: integer >= 1)");
  }
  if (dc->loss != DPD_DPSGD_SOFTMAX) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'loss': %s (allowed with trainer = dpsgd: ce)",
                    dpd_dpsgd_loss_name(dc->loss) != NULL ? dpd_dpsgd_loss_name(dc->loss) : "?");
  }
  if (dc->bias != 0 || dc->classes != pr->K) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %zu (allowed: %s)",
                    dc->bias ? "bias" : "classes", dc->bias ? (size_t)dc->bias : dc->classes,
                    dc->bias ? "0: the nc classifier has no bias" : "K of the problem");
  }
  if (nz == DPD_NC_NORMALIZE_CENTER || nz == DPD_NC_NORMALIZE_CENTER_L2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': %s (allowed with trainer = dpsgd: none, l2: "
                    "the training mean moves every row when one sample is removed, which "
                    "per-sample clipping does not bound)",
                    nz == DPD_NC_NORMALIZE_CENTER ? "center" : "center_l2");
  }
  return dpd_dpsgd_check(dc, pr->n, pr->p, err);
}

int dpd_nc_dpsgd_run(const dpd_nc_problem *problem, const dpd_nc_sim_config *sc,
                     const dpd_dpsgd_config *dc, dpd_nc_sim_result **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (problem == NULL || sc == NULL || dc == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc_dpsgd: NULL problem, config or output pointer");
  }
  int status = check(problem, sc, dc, err);
  if (status < 0) {
    return status;
  }
  const size_t K = problem->K, S = sc->seeds, n = problem->n, p = problem->p;
  dpd_nc_sim_result *res = calloc(1, sizeof *res);
  int *st = calloc(S, sizeof *st);
  if (res != NULL) {
    res->seeds = S;
    res->K = K;
    res->n_test = problem->n_test;
    res->class_error = malloc(K * sizeof *res->class_error);
    res->class_error_se = malloc(K * sizeof *res->class_error_se);
    res->test_error_replicates = malloc(S * sizeof *res->test_error_replicates);
    res->class_error_replicates = malloc(S * K * sizeof *res->class_error_replicates);
    res->w_norm_replicates = malloc(S * sizeof *res->w_norm_replicates);
    res->clipped_fraction_replicates = malloc(S * sizeof *res->clipped_fraction_replicates);
    res->mean_batch_replicates = malloc(S * sizeof *res->mean_batch_replicates);
    res->train_loss_replicates = malloc(S * sizeof *res->train_loss_replicates);
  }
  if (res == NULL || st == NULL || res->class_error == NULL || res->class_error_se == NULL ||
      res->test_error_replicates == NULL || res->class_error_replicates == NULL ||
      res->w_norm_replicates == NULL || res->clipped_fraction_replicates == NULL ||
      res->mean_batch_replicates == NULL || res->train_loss_replicates == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "nc_dpsgd: out of memory (seeds = %zu, K = %zu)", S, K);
    goto cleanup;
  }
  res->sigma = dc->noise_multiplier * dc->clip;
  res->clip = dc->clip;
  res->G = dc->clip;
  dpsgd_plan pl = {.pr = problem,
                   .dc = dc,
                   .seed = sc->seed,
                   .work_nc = dpd__nc_work_doubles(problem),
                   .res = res,
                   .status = st};
  const dpd__replicate_plan reps = {.n = S,
                                    .threads = sc->threads,
                                    .work_doubles = pl.work_nc + n * p + (n + 1) / 2,
                                    .units = 1,
                                    .progress = sc->progress,
                                    .progress_user = sc->progress_user,
                                    .what = "nc_dpsgd"};
  size_t rep;
  status = dpd__replicate_run(&reps, run_one, &pl, &rep, err);
  if (status < 0 && status != DPD_ECANCELLED && rep < S) {
    /* a replicate is pure: running it again alone words its reason */
    double *work = malloc(reps.work_doubles * sizeof *work);
    if (work == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "nc_dpsgd: out of memory");
    } else {
      const int again = dpsgd_replicate(&pl, rep, work, err);
      status = again < 0 ? again
                         : DPD_FAIL(err, status,
                                    "nc_dpsgd: replicate %zu (stream (%llu, %zu)) "
                                    "failed",
                                    rep, (unsigned long long)sc->seed, rep);
      free(work);
    }
  }
  if (status < 0) {
    goto cleanup;
  }
  dpd__stats_mean_se(res->test_error_replicates, S, 1, &res->test_error, &res->test_error_se);
  dpd__stats_columns_mean_se(res->class_error_replicates, S, K, res->class_error,
                             res->class_error_se);
  dpd__stats_mean_se(res->w_norm_replicates, S, 1, &res->w_norm, &res->w_norm_se);
  *out = res;
  res = NULL;
cleanup:
  dpd_nc_sim_result_free(res);
  free(st);
  return status;
}

/* ---- the adapter's side: keys, privacy, reports ---- */

static const char *const dpsgd_only[] = {"q",           "batch", "sampling",        "epochs",
                                         "lr_schedule", "clip",  "noise_multiplier"};
static const char *const noisygd_only[] = {"mu", "zcdp", "sigma"};

/* lr_schedule's families (the key's choices, in order) as dpd_schedule configs: eta0 = 1;
 * cosine to 0; step: two drops by 0.1. */
static int schedule_make(size_t kind, dpd_schedule **out, dpd_err *err) {
  static const dpd_schedule_kind kinds[] = {DPD_SCHEDULE_CONST, DPD_SCHEDULE_COSINE,
                                            DPD_SCHEDULE_STEP, DPD_SCHEDULE_SQRT};
  dpd_schedule_config c = dpd_schedule_config_default();
  *out = NULL;
  if (kind == 0) {
    return DPD_OK; /* const: no schedule */
  }
  c.kind = kinds[kind];
  c.eta0 = 1.0;
  c.eta_min = 0.0;
  c.drops = 2;
  c.factor = 0.1;
  return dpd_schedule_create(&c, out, err);
}

int dpd__nc_dpsgd_keys(const dpd_keys *keys, const dpd_nc_problem_config *pc,
                       const dpd_nc_sim_config *sc, dpd__nc_dpsgd *d, dpd_err *err) {
  const char *trainer = dpd_keys_text_get(keys, "trainer");
  size_t v = 0;
  int status = DPD_OK;
  memset(d, 0, sizeof *d);
  d->cfg = dpd_dpsgd_config_default();
  d->budget = -1;
  d->on = trainer != NULL && strcmp(trainer, "dpsgd") == 0;
  for (size_t k = 0; k < sizeof dpsgd_only / sizeof *dpsgd_only && !d->on; k++) {
    if (dpd_keys_given(keys, dpsgd_only[k])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %s (allowed: with trainer = dpsgd only; the "
                      "trainer is noisygd)",
                      dpsgd_only[k], dpd_keys_text_get(keys, dpsgd_only[k]));
    }
  }
  if (!d->on) {
    return trainer == NULL || strcmp(trainer, "noisygd") == 0
               ? DPD_OK
               : dpd_keys_choice_get(keys, "trainer", &v, err); /* words the error */
  }
  for (size_t k = 0; k < sizeof noisygd_only / sizeof *noisygd_only; k++) {
    if (dpd_keys_given(keys, noisygd_only[k])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': %s (allowed: with trainer = noisygd only; "
                      "trainer = dpsgd takes epsilon (+ delta) or noise_multiplier)",
                      noisygd_only[k], dpd_keys_text_get(keys, noisygd_only[k]));
    }
  }
  if (dpd_keys_given(keys, "epsilon") && dpd_keys_given(keys, "noise_multiplier")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'noise_multiplier': given together with epsilon "
                    "(allowed: one of epsilon (with delta) or noise_multiplier)");
  }
  if (isfinite(sc->radius)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'radius': %g (allowed with trainer = dpsgd: inf, no "
                    "projection)",
                    sc->radius);
  }
  if (sc->loss != DPD_NC_LOSS_CE) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'loss': square (allowed with trainer = dpsgd: ce)");
  }
  if (pc->normalize == DPD_NC_NORMALIZE_CENTER || pc->normalize == DPD_NC_NORMALIZE_CENTER_L2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': %s (allowed with trainer = dpsgd: none, l2: "
                    "the training mean moves every row when one sample is removed, which "
                    "per-sample clipping does not bound)",
                    pc->normalize == DPD_NC_NORMALIZE_CENTER ? "center" : "center_l2");
  }
  d->cfg.classes = pc->K;
  d->cfg.bias = 0;
  d->cfg.lr = sc->eta;
  d->cfg.steps = dpd_keys_given(keys, "steps") ? sc->steps : 0;
  if (dpd_keys_given(keys, "sampling") &&
      (status = dpd_keys_choice_get(keys, "sampling", &v, err)) == DPD_OK) {
    d->cfg.sampling = v == 1 ? DPD_DPSGD_FIXED : DPD_DPSGD_POISSON;
  }
  if (status == DPD_OK && d->cfg.sampling == DPD_DPSGD_POISSON && dpd_keys_given(keys, "batch")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'batch': %s (allowed with sampling = fixed only; Poisson "
                    "batches have the random size of rate q)",
                    dpd_keys_text_get(keys, "batch"));
  }
  if (status == DPD_OK && dpd_keys_given(keys, "q")) {
    status = dpd_keys_real_get(keys, "q", &d->cfg.q, err);
  }
  if (status == DPD_OK && dpd_keys_given(keys, "batch")) {
    status = dpd_keys_size_get(keys, "batch", &d->cfg.batch, err);
  }
  if (status == DPD_OK && dpd_keys_given(keys, "epochs")) {
    status = dpd_keys_real_get(keys, "epochs", &d->cfg.epochs, err);
  }
  if (status == DPD_OK && dpd_keys_given(keys, "clip")) {
    status = dpd_keys_real_get(keys, "clip", &d->cfg.clip, err);
  }
  if (status == DPD_OK && dpd_keys_given(keys, "noise_multiplier")) {
    d->budget = 1;
    status = dpd_keys_real_get(keys, "noise_multiplier", &d->cfg.noise_multiplier, err);
  }
  if (status == DPD_OK && dpd_keys_given(keys, "epsilon")) {
    d->budget = 0;
    status = dpd_keys_real_get(keys, "epsilon", &d->epsilon, err);
  }
  if (status == DPD_OK && dpd_keys_given(keys, "lr_schedule") &&
      (status = dpd_keys_choice_get(keys, "lr_schedule", &d->schedule_kind, err)) == DPD_OK) {
    status = schedule_make(d->schedule_kind, &d->schedule, err);
  }
  d->cfg.schedule = d->schedule;
  return status;
}

int dpd__nc_dpsgd_sizes(dpd_keys *keys, dpd__nc_dpsgd *d, size_t n, size_t p, dpd_err *err) {
  static const char *const schedules[] = {"const", "cosine", "step", "sqrt"};
  dpd_dpsgd_config *c = &d->cfg;
  int status;
  if (c->sampling == DPD_DPSGD_FIXED && c->batch == 0) { /* round(q n), at least 1 */
    const double b = floor(c->q * (double)n + 0.5);
    c->batch = b < 1.0 ? 1 : (size_t)b;
  }
  if (c->sampling == DPD_DPSGD_FIXED && c->batch > n) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'batch': %zu (allowed: 1 <= batch <= n = %zu training "
                    "rows)",
                    c->batch, n);
  }
  if ((status = dpd_dpsgd_check(c, n, p, err)) < 0) {
    return status;
  }
  const size_t T = dpd_dpsgd_steps(c, n);
  char buf[32];
  snprintf(buf, sizeof buf, "%zu", T);
  if ((status = dpd_keys_effective_set(keys, "trainer", "dpsgd", err)) < 0 ||
      (status = dpd_keys_effective_set(keys, "steps", buf, err)) < 0 ||
      (status = dpd_keys_effective_set(keys, "sampling", dpd_dpsgd_sampling_name(c->sampling),
                                       err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "clip", c->clip, err)) < 0 ||
      (status = dpd_keys_effective_set(keys, "lr_schedule", schedules[d->schedule_kind], err)) <
          0 ||
      (c->steps == 0 &&
       (status = dpd_keys_effective_real_set(keys, "epochs", c->epochs, err)) < 0)) {
    return status;
  }
  if (c->sampling == DPD_DPSGD_FIXED) {
    snprintf(buf, sizeof buf, "%zu", c->batch);
    return dpd_keys_effective_set(keys, "batch", buf, err);
  }
  return dpd_keys_effective_real_set(keys, "q", c->q, err);
}

int dpd__nc_dpsgd_privacy(dpd_output *out, dpd__nc_dpsgd *d, size_t n, double delta, dpd_err *err) {
  dpd_dpsgd_config *c = &d->cfg;
  dpd_account a;
  dpd_account_segment seg;
  const size_t T = dpd_dpsgd_steps(c, n);
  int status = DPD_OK;
  if (d->budget == 0 && isfinite(d->epsilon)) {
    status = dpd_dpsgd_calibrate(c, n, d->epsilon, delta, &c->noise_multiplier, &d->at, err);
  } else if (d->budget == 1 && c->noise_multiplier > 0.0) {
    dpd_dpsgd_account_of(c, n, c->noise_multiplier, &a, &seg);
    status = dpd_account_epsilon(&a, delta, &d->at, err);
  } else {
    c->noise_multiplier = 0.0; /* epsilon = inf, noise_multiplier = 0 or no budget */
    d->at.epsilon = d->at.epsilon_estimate = d->at.epsilon_lower = INFINITY;
  }
  if (status < 0) {
    return status;
  }
  const int fixed = c->sampling == DPD_DPSGD_FIXED;
  cJSON *s = out->summary;
  cJSON *xm = cJSON_GetObjectItemCaseSensitive(s, "x_norm_max");
  if (cJSON_IsNumber(xm) && xm->valuedouble >= DBL_MAX) { /* files without x_bound: no clip */
    cJSON_SetNumberHelper(xm, INFINITY);
  }
  cJSON_AddStringToObject(s, "trainer", "dpsgd");
  dpd_output_number_set(out, "noise_multiplier", c->noise_multiplier);
  dpd_output_number_set(out, "q", fixed ? (double)c->batch / (double)n : c->q);
  if (fixed) {
    cJSON_AddNumberToObject(s, "batch", (double)c->batch);
  }
  dpd_output_number_set(out, "epochs", (double)T * (fixed ? (double)c->batch / (double)n : c->q));
  dpd_output_number_set(out, "clip", c->clip);
  dpd_output_number_set(out, "eta", c->lr);
  cJSON_AddStringToObject(s, "loss", "ce");
  cJSON_AddStringToObject(s, "sampling", dpd_dpsgd_sampling_name(c->sampling));
  cJSON_AddStringToObject(s, "lr_schedule",
                          d->schedule != NULL ? dpd_schedule_name(d->schedule) : "const");
  cJSON_AddStringToObject(s, "budget",
                          d->budget == 0   ? "epsilon"
                          : d->budget == 1 ? "noise_multiplier"
                                           : "none");
  dpd_output_number_set(out, "epsilon", d->at.epsilon);
  dpd_output_number_set(out, "epsilon_estimate", d->at.epsilon_estimate);
  dpd_output_number_set(out, "epsilon_lower", d->at.epsilon_lower);
  dpd_output_number_set(out, "delta", delta);
  if (d->budget == 0 && isfinite(d->epsilon)) {
    dpd_output_number_set(out, "epsilon_target", d->epsilon);
  }
  cJSON_AddStringToObject(s, "neighbours", fixed ? "replace_one" : "add_remove");
  cJSON_AddStringToObject(
      s, "neighbours_words",
      fixed ? "data sets of the same size n that differ in one record (replace one); each step "
              "a uniformly random batch of fixed size"
            : "data sets that differ by adding or removing one record; each step a Poisson "
              "sample of rate q");
  if (!isfinite(d->at.epsilon)) {
    return dpd__output_note_add(out, err,
                                "note: trainer = dpsgd without noise (%s): not private; %zu "
                                "steps, each replicate with its own batches (region tag 2 of its "
                                "stream)",
                                d->budget == 0   ? "epsilon = inf"
                                : d->budget == 1 ? "noise_multiplier = 0"
                                                 : "no epsilon or noise_multiplier given",
                                T);
  }
  return dpd__output_note_add(
      out, err,
      "note: trainer = dpsgd: (epsilon, delta)-DP by the PLD accountant of %zu subsampled Gaussian "
      "steps (epsilon is its upper bound at delta = %g; noise multiplier %g, clip %g); nc's G, "
      "sigma and the GDP guarantees of NoisyGD do not apply; each replicate draws its own batches "
      "and noise (region tag 2 of its stream)",
      T, delta, c->noise_multiplier, c->clip);
}

int dpd__nc_dpsgd_tables(dpd_output *out, const dpd_nc_sim_result *sim, dpd_table_builder **t,
                         dpd_err *err) {
  static const char *const names[] = {"clipped_fraction", "mean_batch", "train_loss"};
  const double *cols[] = {sim->clipped_fraction_replicates, sim->mean_batch_replicates,
                          sim->train_loss_replicates};
  char se[64];
  for (size_t k = 0; k < 3; k++) {
    double mean, sd;
    if (dpd_table_builder_add(t[1], names[k], cols[k], err) < 0) {
      return DPD_ENOMEM;
    }
    dpd__stats_mean_se(cols[k], sim->seeds, 1, &mean, &sd);
    snprintf(se, sizeof se, "%s_se", names[k]);
    dpd_output_number_set(out, names[k], mean);
    dpd_output_number_set(out, se, sd);
  }
  return DPD_OK;
}

void dpd__nc_dpsgd_comparison(dpd__nc_comparison *c) {
  static const char why[] =
      "trainer = dpsgd: the exact one-step error is NoisyGD's (full batch, one step from W = 0); "
      "DP-SGD's minibatches, clipping and many steps make the logits non-Gaussian, so no exact "
      "error is available; the simulation is the estimate";
  memset(c, 0, sizeof *c);
  c->theory = c->theory_se = c->gap = c->gap_se = NAN;
  c->thm34 = c->thm34_t = c->thm34_printed_eta = NAN;
  c->why_not = why;
  c->thm34_why = why;
}

int dpd__nc_collapse_report(dpd_output *out, const dpd__nc_files *f, dpd_err *err) {
  dpd_nc_diagnostics *d = NULL;
  int status = dpd_nc_diagnostics_create(f->train->n, f->train->p, f->train->K, dpd_nc_features_row,
                                         f->train, &d, err);
  if (status < 0) {
    return status;
  }
  cJSON *o = cJSON_AddObjectToObject(out->summary, "collapse");
  if (o == NULL) {
    dpd_nc_diagnostics_free(d);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  static const char *const names[] = {"nc1",         "within_trace", "between_trace", "trace_ratio",
                                      "cos_max_dev", "beta_mean",    "beta_median",   "x_norm_max"};
  const double v[] = {d->nc1,         d->within_trace, d->between_trace,    d->trace_ratio,
                      d->cos_max_dev, d->beta_mean,    d->beta_quantile[3], d->x_norm_max};
  for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
    if (isfinite(v[k])) {
      dpd__json_number(o, names[k], v[k]);
    } else {
      cJSON_AddNumberToObject(o, names[k], v[k]);
    }
  }
  dpd_nc_diagnostics_free(d);
  return DPD_OK;
}

void dpd__nc_dpsgd_free(dpd__nc_dpsgd *d) {
  dpd_schedule_free(d->schedule);
  d->schedule = NULL;
}

/* resize and resize_p: the mode and the new dimension (the map is made later). */
static int resize_keys(const dpd_keys *keys, dpd__nc_resize *rs, size_t pca_k, dpd_err *err) {
  size_t v = 0;
  int status = DPD_OK;
  if (dpd_keys_given(keys, "resize") &&
      (status = dpd_keys_choice_get(keys, "resize", &v, err)) < 0) {
    return status;
  }
  rs->mode = v == 1 ? DPD_NC_RESIZE_SUBSET : v == 2 ? DPD_NC_RESIZE_COPIES : DPD_NC_RESIZE_NONE;
  if (rs->mode == DPD_NC_RESIZE_NONE && dpd_keys_given(keys, "resize_p")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'resize_p': %s (allowed: with resize = subset or copies "
                    "only)",
                    dpd_keys_text_get(keys, "resize_p"));
  }
  if (rs->mode == DPD_NC_RESIZE_NONE) {
    return DPD_OK;
  }
  if (!dpd_keys_given(keys, "resize_p")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'resize_p' (allowed: 1 <= resize_p <= p with resize = "
                    "subset, resize_p >= p with copies)");
  }
  if (pca_k > 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'resize': %s (allowed with pca_k > 0: none; the PCA fix "
                    "projects the ETF law itself)",
                    rs->mode == DPD_NC_RESIZE_SUBSET ? "subset" : "copies");
  }
  return dpd_keys_size_get(keys, "resize_p", &rs->P, err);
}

int dpd__nc_setup_finish(dpd_keys *keys, const dpd_run_env *env, dpd__nc_files *files,
                         dpd_nc_problem_config *pc, size_t pca_k, dpd__nc_resize *rs,
                         dpd__nc_dpsgd *d, size_t *steps, dpd_err *err) {
  int status = resize_keys(keys, rs, pca_k, err);
  if (status == DPD_OK && rs->mode != DPD_NC_RESIZE_NONE) {
    const double rows = files == NULL ? 0.0
                                      : (double)files->train->n +
                                            (files->test != NULL ? (double)files->test->n : 0.0);
    if ((status = dpd__nc_resize_init(rs, files != NULL ? files->train->p : pc->p, pc->seed, err)) <
            0 ||
        (files != NULL && ((status = dpd__model_memory_check(keys, env, 8.0 * rows * (double)rs->P,
                                                             "resize_p", err)) < 0 ||
                           (status = dpd__nc_files_resize(files, rs, err)) < 0))) {
      return status;
    }
    if (files != NULL) {
      pc->p = rs->P;
    }
  }
  if (status < 0 || !d->on) {
    return status;
  }
  const size_t dim = pca_k > 0 ? pca_k : rs->mode != DPD_NC_RESIZE_NONE ? rs->P : pc->p;
  d->cfg.classes = pc->K; /* K of the files once read */
  if ((status = dpd__nc_dpsgd_sizes(keys, d, pc->n, dim, err)) == DPD_OK) {
    *steps = dpd_dpsgd_steps(&d->cfg, pc->n);
  }
  return status;
}

double dpd__nc_more_bytes(const dpd_nc_problem_config *pc, size_t pca_k, const dpd__nc_resize *rs,
                          const dpd__nc_dpsgd *d, int from_file, size_t seeds, int threads) {
  const int resized = rs->mode != DPD_NC_RESIZE_NONE;
  const double P = resized ? (double)rs->P : (double)pc->p;
  const double t = (double)(threads > 0 ? (size_t)threads : (seeds < 2 ? seeds : 2));
  double b = 0.0;
  if (resized && !from_file) { /* the fill of each replicate in flight */
    b += 8.0 * t * ((double)pc->n + (double)pc->n_test) * P;
  }
  if (d->on) { /* the rows; the trainer's W, gradient and noise */
    const double dim = pca_k > 0 ? (double)pca_k : P;
    b += 8.0 * t * ((double)pc->n * dim + 4.0 * (double)pc->K * dim);
  }
  return b;
}
