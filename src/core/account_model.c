/* model=privacy: the accountant of subsampled DP-SGD (dpdyn/account.h; docs/privacy.md,
 * "Accounting subsampled DP-SGD") as the pieces of a model type: its keys, setup (keys -> the
 * query), the command `account` (the run and its output: account_report.c), and the type,
 * listed in src/models/registry.c. It lives here, beside the accountant, rather than in a folder
 * of src/models/: that folder's line budget (scripts/check_structure.py) is spent.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>

#include "core/account_report_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"

#define BIG 1099511627776.0 /* 2^40 */

const dpd_key_desc dpd__account_keys[] = {
    {"mechanism", DPD_KEY_TEXT, "subsampled_gaussian", 0, 0, 0,
     "gaussian|subsampled_gaussian|shuffle", NULL,
     "gaussian: every record in every step; subsampled_gaussian: batches picked by `sampling`; "
     "shuffle: epochs over a shuffled data set (one Gaussian step per epoch)"},
    {"sampling", DPD_KEY_TEXT, "poisson", 0, 0, 0, "poisson|fixed|replacement", NULL,
     "subsampled_gaussian: poisson (each record with probability q), fixed (batch distinct "
     "records of n), replacement (batch draws from n); fixed and replacement: replace_one"},
    {"neighbours", DPD_KEY_TEXT, "add_remove", 0, 0, 0, "add_remove|replace_one", NULL,
     "the neighbouring relation: add/remove one record, or replace one (sensitivity 2C)"},
    {"noise_multiplier", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL,
     NULL, "sigma: the noise standard deviation over the clipping norm C"},
    {"q", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN, NULL, NULL, "sampling = poisson: the rate"},
    {"batch", DPD_KEY_INT, NULL, 1, BIG, 0, NULL, NULL, "sampling = fixed or replacement: b <= n"},
    {"n", DPD_KEY_INT, NULL, 1, BIG, 0, NULL, NULL, "sampling = fixed or replacement: records"},
    {"steps", DPD_KEY_INT, NULL, 1, BIG, 0, NULL, NULL, "steps T (not shuffle)"},
    {"epochs", DPD_KEY_INT, NULL, 1, BIG, 0, NULL, NULL, "shuffle: epochs"},
    {"delta", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "delta: the summary's epsilon is eps(delta)"},
    {"epsilon", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "without delta: the summary's delta is delta(epsilon); with solve: the target"},
    {"solve", DPD_KEY_TEXT, "none", 0, 0, 0, "none|noise_multiplier|steps", NULL,
     "noise_multiplier: the smallest, steps: the most, for (epsilon, delta); never overshoots"},
    {"segments", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL,
     "file:PATH: a schedule, one row `noise_multiplier q steps [batch]` per segment"},
    {"accuracy", DPD_KEY_REAL, "0.01", 0, 0.5, DPD_KEY_LO_OPEN, NULL, NULL,
     "target relative width (epsilon - epsilon_lower) / epsilon of the PLD bounds"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

/* A key given where it does not apply: DPD_EINVAL naming it and where it applies. */
static int refuse(const dpd_keys *keys, const char *key, const char *allowed, dpd_err *err) {
  return dpd_keys_given(keys, key)
             ? DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %s given (allowed: only %s)",
                        key, dpd_keys_text_get(keys, key), allowed)
             : DPD_OK;
}

static int size_key(const dpd_keys *keys, const char *key, int needed, size_t *v, dpd_err *err) {
  return needed ? dpd_keys_size_get(keys, key, v, err)
                : refuse(keys, key, "with the mechanism and sampling that use it", err);
}

/* The segment of the keys (or the file's), the sampling sizes and the solve target. */
static int run_keys(dpd_keys *keys, dpd__account_query *q, size_t max_bytes, dpd_err *err) {
  dpd_account *a = &q->a;
  const int sub = a->mechanism == DPD_MECHANISM_SUBSAMPLED;
  const int pois = sub && a->sampling == DPD_SAMPLING_POISSON, shuffle = !sub && a->mechanism;
  const char *path = NULL, *unit = shuffle ? "epochs" : "steps";
  int status;
  q->one = (dpd_account_segment){1.0, 1.0, 1, 1};
  a->segments = &q->one;
  a->nsegments = 1;
  if ((status = dpd__model_file_key(keys, "segments", &path, err)) < 0 ||
      (status = size_key(keys, "n", sub && !pois, &a->n, err)) < 0 ||
      (status = refuse(keys, shuffle ? "steps" : "epochs", shuffle ? "without shuffle" : "with "
                       "shuffle", err)) < 0) {
    return status;
  }
  if (path != NULL) {
    static const char *const own[] = {"noise_multiplier", "q", "steps", "epochs", "batch"};
    for (size_t k = 0; k < 5 && status == DPD_OK; k++) {
      status = refuse(keys, own[k], "without segments = file:PATH (a column of the file)", err);
    }
    return status < 0 ? status
           : q->solve ? refuse(keys, "solve", "none with segments = file:PATH", err)
                      : dpd__account_segments_read(q, path, max_bytes, err);
  }
  if ((status = q->solve == DPD__SOLVE_SIGMA
                    ? refuse(keys, "noise_multiplier", "without solve = noise_multiplier", err)
                    : dpd_keys_real_get(keys, "noise_multiplier", &q->one.sigma, err)) < 0 ||
      (status = q->solve == DPD__SOLVE_STEPS
                    ? refuse(keys, unit, "without solve = steps", err)
                    : dpd_keys_size_get(keys, unit, &q->one.steps, err)) < 0 ||
      (status = pois ? dpd_keys_real_get(keys, "q", &q->one.q, err)
                     : refuse(keys, "q", "with sampling = poisson", err)) < 0 ||
      (status = size_key(keys, "batch", sub && !pois, &q->one.batch, err)) < 0) {
    return status;
  }
  return q->one.batch > a->n && sub && !pois
             ? DPD_FAIL(err, DPD_EINVAL, "invalid value for 'batch': %zu (allowed: 1 <= batch "
                        "<= n = %zu)", q->one.batch, a->n)
             : DPD_OK;
}

/* delta and epsilon: delta (eps at delta), epsilon alone (delta at eps), or both with solve. */
static int target_keys(dpd_keys *keys, dpd__account_query *q, dpd_err *err) {
  int status = DPD_OK;
  q->delta = q->epsilon = NAN;
  if (q->solve != DPD__SOLVE_NONE || !dpd_keys_given(keys, "epsilon")) {
    status = dpd_keys_real_get(keys, "delta", &q->delta, err);
  } else if (dpd_keys_given(keys, "delta")) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'epsilon': given with delta (allowed: "
                    "one of epsilon or delta, or both with solve = noise_multiplier or steps)");
  }
  if (status == DPD_OK && (q->solve != DPD__SOLVE_NONE || dpd_keys_given(keys, "epsilon"))) {
    status = dpd_keys_real_get(keys, "epsilon", &q->epsilon, err);
  }
  return status;
}

void dpd__account_release(void *ctx) {
  if (ctx != NULL) {
    dpd__account_query_release(ctx);
    free(ctx);
  }
}

int dpd__account_setup(const dpd_model_command *c, dpd_keys *keys, const dpd_run_env *env,
                       void **ctx, dpd_err *err) {
  dpd__account_query *q = calloc(1, sizeof *q);
  size_t mech = 0, samp = 0, nb = 0, solve = 0;
  int status;
  if ((*ctx = q) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if ((status = dpd_keys_choice_get(keys, "mechanism", &mech, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "sampling", &samp, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "neighbours", &nb, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "solve", &solve, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "accuracy", &q->a.accuracy, err)) < 0 ||
      (status = dpd__model_plot_get(keys, c->plot_default, &q->plot, err)) < 0) {
    return status;
  }
  q->a.mechanism = (dpd_mechanism)mech;
  q->a.sampling = (dpd_sampling)samp;
  q->a.neighbours = (dpd_neighbours)nb;
  q->solve = (dpd__account_solve)solve;
  if (mech != DPD_MECHANISM_SUBSAMPLED) {
    if ((status = refuse(keys, "sampling", "with mechanism = subsampled_gaussian", err)) < 0) {
      return status;
    }
    dpd_keys_unset(keys, "sampling");
  }
  if ((status = run_keys(keys, q, env->max_memory, err)) < 0 ||
      (status = target_keys(keys, q, err)) < 0) {
    return status;
  }
  return dpd_account_check(&q->a, err);
}

double dpd__account_workspace_bytes(const void *ctx, const dpd_model_command *c,
                                    const char **driver) {
  const dpd__account_query *q = ctx;
  (void)c;
  *driver = q->file != NULL ? "segments" : q->a.mechanism == DPD_MECHANISM_SHUFFLE ? "epochs"
                                                                                    : "steps";
  return dpd__account_bytes(q);
}

static int cmd_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                       dpd_err *err) {
  (void)env;
  return dpd__account_report(ctx, keys, out, err);
}

const dpd_model_command dpd__account_commands[] = {
    {.name = "account",
     .summary = "epsilon (PLD bounds, RDP, CLT) of subsampled DP-SGD; delta(epsilon); the inverse",
     .files = "curve.tsv summary.json",
     .example = "dpdyn account --noise_multiplier=1 --q=0.01 --steps=1000 "
                "--delta=1e-5",
     .numbers = "noise_multiplier steps delta epsilon epsilon_estimate epsilon_lower epsilon_rdp "
                "best_alpha mu_clt epsilon_clt relative_width relative_gap_estimate delta_lower delta_rdp delta_clt h "
                "points total_steps accuracy",
     .run = cmd_account,
     .plot_default = 1,
     /* dpdyn account --noise_multiplier=... needs no --model (dpd_model_find_keyed) */
     .selected_by = "mechanism sampling neighbours noise_multiplier q batch epochs solve "
                    "segments accuracy"},
    {.name = NULL}};

const char *const dpd__account_small[] = {"noise_multiplier", "1", "q", "0.05", "steps", "20",
                                         "delta", "1e-5", "plot", "0", NULL};

/* The model type (listed in src/models/registry.c). */
const dpd_model_type dpd__model_privacy = {
    .name = "privacy",
    .summary = "the accountant of subsampled DP-SGD: PLD, RDP, CLT (docs/privacy.md)",
    .keys = dpd__account_keys,
    .commands = dpd__account_commands,
    .small = dpd__account_small,
    .setup = dpd__account_setup,
    .release = dpd__account_release,
    .workspace_bytes = dpd__account_workspace_bytes};
