/* model=rf: random-features regression trained by full-batch DP-GD with per-sample clipping
 * (docs/math.md §2), as a model type: keys, setup (keys -> the context of rf_impl.h), and the
 * commands simulate | ou | compare | account (their run functions: rf_run.c; the science they
 * call: src/rf/, rf_run_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * simulate  DP-GD replicates (rf_sim.h): train and test risk with standard errors on the grid,
 *           the clipped fraction at every step, and the test risk of theta* = Phi^+ y.
 * ou        the Ornstein-Uhlenbeck theory of unclipped DP-GD (ou.h): expected test risk (bias +
 *           noise), exact discrete-step and continuous-time, and the first step at which the
 *           mean path leaves the no-clip set.
 * compare   both on the same problem, the gap in standard errors, one figure with the clipped
 *           fraction on a second axis.
 * account   the privacy calibration alone (no problem is built).
 *
 * Privacy: T steps of size eta with noise sqrt(eta)(2C/n) sigma compose to mu-GDP with
 * mu = sqrt(eta T)/sigma. Given epsilon (and delta, default 1/n) sigma comes from the exact
 * calibration or the seed's moments bound (key calibration); both are always reported with the
 * epsilon the moments sigma actually delivers. Given sigma instead, the epsilon it delivers is
 * reported. Defaults follow the seed's random-features experiment (Bombari & Mondelli, PNAS 122
 * (2025) e2423072122, released code): d = 100, n = 2000, n_test = 1000, p = 4000, sign target,
 * no label noise, tanh, eta = 1/p, T = 5 d (tau = eta T = 5 d/p). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "models/rf/rf_impl.h"
#include "rf/rf_run_impl.h"

#define TWO24 16777216.0
#define OVP " interpolate sensitivity" /* the commands of rf_overparam_impl.h */

static const dpd_key_desc rf_keys[] = {
    {"d", DPD_KEY_INT, "100", 1, TWO24, 0, NULL, NULL, "input dimension d (file: its columns)"},
    {"n", DPD_KEY_INT, "2000", 1, TWO24, 0, NULL, NULL, "training samples n"},
    {"n_test", DPD_KEY_INT, "1000", 1, TWO24, 0, NULL, "simulate ou compare" OVP, "test samples"},
    {"p", DPD_KEY_INT, "4000", 1, 2147483648.0, 0, NULL, NULL, "number of random features p"},
    {"activation", DPD_KEY_TEXT, "tanh", 0, 0, 0,
     "tanh|relu_centered|hermite13|relu|abs_centered|hermite134",
     "simulate ou compare audit reconstruct" OVP, "activation of the features"},
    {"target", DPD_KEY_TEXT, "sign", 0, 0, 0, NULL, "simulate ou compare audit" OVP,
     "linear | sign | hermite2 (of u^T x) | file:PATH (N values; only with input = file:PATH)"},
    {"input", DPD_KEY_TEXT, "gaussian", 0, 0, 0, NULL, "simulate ou compare" OVP,
     "gaussian | sphere (radius sqrt(d)) | file:PATH (N x d, .npy or text; features centred, one "
     "scale to mean |x|^2 = d; each data draw takes n + n_test distinct rows: docs/rf.md)"},
    {"zeta", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, "simulate ou compare audit" OVP,
     "label-noise standard deviation"},
    {"eta", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "DP-GD step size [1/p]"},
    {"steps", DPD_KEY_INT, NULL, 1, 1099511627776.0, 0, NULL, NULL,
     "DP-GD iterations T [5 d, i.e. tau = eta T = 5 d/p]"},
    {"clip", DPD_KEY_REAL, "inf", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN | DPD_KEY_INF,
     NULL, NULL, "C_clip / sqrt(p); inf = no clipping"},
    {"sigma", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "noise multiplier given directly instead of epsilon"},
    {"mu", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_INF, NULL, NULL,
     "privacy of the whole run as mu-GDP: sigma = sqrt(eta T)/mu; inf = none"},
    {"zcdp", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_INF, NULL, NULL,
     "privacy of the whole run as zCDP rho_z (= mu^2/2 for DP-GD's Gaussian noise)"},
    {"epsilon", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "target epsilon (with delta): sigma is calibrated"},
    {"delta", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "delta of the (epsilon, delta) guarantee [1/n]"},
    {"calibration", DPD_KEY_TEXT, "exact", 0, 0, 0, "exact|moments", NULL,
     "sigma from epsilon by exact (mu-GDP composition) or moments (the seed's bound)"},
    {"seeds", DPD_KEY_INT, "16", 1, TWO24, 0, NULL, "simulate compare reconstruct" OVP,
     "replicates"},
    {"theta_star", DPD_KEY_TEXT, "on", 0, 0, 0, "on|off", "simulate ou compare",
     "the minimum-norm interpolator theta* = Phi^+ y of each draw, reported beside DP-GD; off "
     "skips its SVD (O(n^2 p), most of the set-up for large p): no theta_star_* in the summary, "
     "nan in the tables"},
    {"resample", DPD_KEY_TEXT, "all", 0, 0, 0, "noise|data|all", "simulate compare",
     "what each replicate redraws: all = data, features, test set and noise (independent runs; "
     "the SE is the spread of runs); noise = the noise only, on one data set (the SE ignores "
     "the data's variance); data = data, features and test set, one noise path shared by all "
     "replicates (the SE ignores the noise's variance)"},
    {"save_replicates", DPD_KEY_INT, "0", 0, 2, 0, NULL, "simulate compare",
     "per-replicate values: 0 = none, 1 = replicates.tsv (each replicate's final values), 2 = "
     "also replicates_trajectory.tsv (each replicate on the grid)"},
    {"seed", DPD_KEY_INT, "1", 0, 18446744073709551615.0, 0, NULL, NULL, "master seed"},
    {"threads", DPD_KEY_INT, "0", 0, 4096, 0, NULL, "simulate ou compare audit reconstruct" OVP,
     "worker threads (0 = all cores); results do not depend on it"},
    {"grid", DPD_KEY_INT, "101", 2, TWO24, 0, NULL, "simulate ou compare",
     "recorded points on [0, T] (at most one per step)"},
    DPD__AUDIT_KEY_LINES,
    DPD__RF_OVP_KEY_LINES,
    DPD__RF_RECONSTRUCT_KEY_LINES,
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

/* An enumerated key: validated against the table's choices, then mapped by the rf module. */
#define RF_ENUM(key, getter, field)                                                                \
  ((status = dpd_keys_choice_get(keys, key, &choice, err)) < 0                                     \
       ? status                                                                                    \
       : getter(dpd_keys_text_get(keys, key), field, err))

/* The problem's keys. */
static int setup_problem(dpd_keys *keys, const dpd_model_command *c, const dpd_run_env *env,
                         dpd__rf_ctx *r, dpd_err *err) {
  size_t choice;
  int status;
  r->pc = dpd_rf_config_default();
  if ((status = dpd_keys_size_get(keys, "d", &r->pc.d, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n", &r->pc.n, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n_test", &r->pc.n_test, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "p", &r->pc.p, err)) < 0 ||
      (status = RF_ENUM("activation", dpd_rf_activation_get, &r->pc.activation)) < 0 ||
      (status = dpd_keys_real_get(keys, "zeta", &r->pc.zeta, err)) < 0 ||
      (status = dpd__rf_inputs_keys(keys, env, c->uses != 0, &r->pc, &r->data, err)) < 0) {
    return status;
  }
  if (!dpd_keys_given(keys, "delta") && r->pc.n < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: n >= 2 when delta is not given, since "
                    "its default 1/n must be < 1; or give delta)",
                    r->pc.n);
  }
  return DPD_OK;
}

/* DP-GD's keys (their defaults depend on the problem's sizes), the replicates and the grid. */
static int setup_dpgd(dpd_keys *keys, dpd__rf_ctx *r, dpd_err *err) {
  size_t threads, grid, choice, star;
  int status;
  r->sc = dpd_rf_sim_config_default();
  if ((!dpd_keys_given(keys, "eta") &&
       (status = dpd_keys_effective_real_set(keys, "eta", 1.0 / (double)r->pc.p, err)) < 0) ||
      (!dpd_keys_given(keys, "steps") &&
       (status = dpd_keys_effective_real_set(keys, "steps", 5.0 * (double)r->pc.d, err)) < 0) ||
      (!dpd_keys_given(keys, "delta") &&
       (status = dpd_keys_effective_real_set(keys, "delta", 1.0 / (double)r->pc.n, err)) < 0) ||
      (status = dpd_keys_real_get(keys, "eta", &r->sc.eta, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "steps", &r->sc.T, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "clip", &r->sc.clip, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "delta", &r->delta, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "seeds", &r->sc.seeds, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &r->sc.seed, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "threads", &threads, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "grid", &grid, err)) < 0 ||
      (status = RF_ENUM("resample", dpd_rf_resample_get, &r->resample)) < 0 ||
      (status = dpd_keys_choice_get(keys, "calibration", &choice, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "theta_star", &star, err)) < 0) {
    return status;
  }
  r->privacy.moments = choice == 1;
  r->theta_star = star == 0;
  r->pc.seed = r->sc.seed;
  r->sc.threads = (int)threads;
  if (grid > r->sc.T + 1) {
    grid = r->sc.T + 1; /* one point per step at most */
    if ((status = dpd_keys_effective_real_set(keys, "grid", (double)grid, err)) < 0) {
      return status;
    }
  }
  r->sc.grid = grid;
  return dpd__model_save_replicates_get(keys, 2, &r->save_replicates, err);
}

/* The privacy keys: one budget, epsilon (with delta), sigma, mu or zcdp (rf_run_impl.h), sigma
 * calibrated from it, and the epsilons it delivers. */
static int setup_privacy(dpd_keys *keys, const dpd_model_command *c, dpd__rf_ctx *r, dpd_err *err) {
  static const char *const budget[] = {"epsilon", "sigma", "mu", "zcdp"};
  dpd__rf_budget first = DPD__RF_BUDGET_NONE;
  double value = 0.0;
  int status;
  if (dpd_keys_given(keys, "epsilon") && dpd_keys_given(keys, "sigma")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'sigma': given together with epsilon (allowed: one of "
                    "epsilon (sigma is calibrated) or sigma (its epsilon is reported))");
  }
  for (dpd__rf_budget k = DPD__RF_BUDGET_EPSILON; k < DPD__RF_BUDGET_NONE; k++) {
    if (dpd_keys_given(keys, budget[k]) && first != DPD__RF_BUDGET_NONE) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given together with %s (allowed: one of "
                      "epsilon (with delta), mu, zcdp or sigma)",
                      budget[k], budget[first]);
    }
    first = dpd_keys_given(keys, budget[k]) ? k : first;
  }
  if ((first != DPD__RF_BUDGET_NONE &&
       (status = dpd_keys_real_get(keys, budget[first], &value, err)) < 0) ||
      (status = dpd__rf_privacy_plan_sigma(r->sc.eta, r->sc.T, r->delta, first, value,
                                           r->privacy.moments, &r->privacy, err)) < 0) {
    return status;
  }
  if (r->privacy.sigma > 0.0 && !isfinite(r->sc.clip) && c->uses != 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'clip': inf with %s (allowed: finite clip > 0 when the "
                    "run is private: the noise scale is 2 C sigma / n)",
                    first == DPD__RF_BUDGET_EPSILON ? "epsilon given" : "sigma > 0");
  }
  r->sc.sigma = r->privacy.sigma;
  return dpd__rf_privacy_plan_delivered(r->sc.eta, r->sc.T, r->delta, &r->privacy, err);
}

/* The memory the command needs (checked against peak RSS in tests/cli/test_limits.sh), and the
 * key named when it is too much: seeds x steps names the factor the user set (steps when both or
 * neither). */
static void setup_memory(const dpd_keys *keys, unsigned uses, dpd__rf_ctx *r) {
  const int sim = (uses & DPD__RF_USES_SIM) != 0;
  const double reps =
      sim ? dpd__model_replicates_bytes(r->save_replicates, r->sc.seeds, r->sc.grid, 5, 4) : 0.0;
  const char *driver;
  r->memory_estimate = dpd__rf_memory_eval(&r->pc, &r->sc, r->resample, sim,
                                           (uses & DPD__RF_USES_OU) != 0, reps, &driver);
  if (strcmp(driver, "seeds") == 0) {
    driver = dpd_keys_given(keys, "seeds") && !dpd_keys_given(keys, "steps") ? "seeds" : "steps";
  }
  r->driver = driver;
}

/* Validates every key of model=rf for command c (c->uses) and makes the context. */
static int setup(const dpd_model_command *c, dpd_keys *keys, const dpd_run_env *env, void **ctx,
                 dpd_err *err) {
  dpd__rf_ctx *r = calloc(1, sizeof *r);
  int status;
  if ((*ctx = r) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  const int attack = (c->uses & DPD__RF_USES_RECONSTRUCT) != 0;
  if ((attack && (status = dpd__rf_reconstruct_defaults(keys, err)) < 0) ||
      (status = setup_problem(keys, c, env, r, err)) < 0 ||
      (status = setup_dpgd(keys, r, err)) < 0 ||
      (attack && (status = dpd__rf_reconstruct_keys(keys, &r->pc, err)) < 0) ||
      (status = setup_privacy(keys, c, r, err)) < 0 ||
      (status = dpd__model_plot_get(keys, c->plot_default, &r->plot, err)) < 0) {
    return status;
  }
  /* the keys of other commands (account has no data, replicates or grid) are not in effect */
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  r->progress = (dpd__progress_bridge){env, "DP-GD steps"};
  r->sc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  r->sc.progress_user = &r->progress;
  if (c->uses != 0) {
    setup_memory(keys, c->uses, r);
  }
  if (c->uses & (DPD__RF_USES_INTERP | DPD__RF_USES_SENS)) {
    return dpd__rf_ovp_keys(keys, (c->uses & DPD__RF_USES_SENS) != 0, &r->pc, &r->sc, &r->privacy,
                            &r->ovp, &r->memory_estimate, &r->driver, err);
  }
  if (attack) {
    r->memory_estimate = dpd__rf_reconstruct_bytes(&r->pc, &r->sc);
    r->driver = "n";
  }
  return (c->uses & DPD__RF_USES_AUDIT)
             ? dpd__rf_audit_keys(keys, &r->pc, &r->sc, &r->memory_estimate, err)
             : DPD_OK;
}

static void release(void *ctx) {
  dpd_rf_data_free(ctx != NULL ? ((dpd__rf_ctx *)ctx)->data : NULL);
  free(ctx);
}

static double workspace_bytes(const void *ctx, const dpd_model_command *c, const char **driver) {
  const dpd__rf_ctx *r = ctx;
  (void)c;
  *driver = r->driver;
  return r->memory_estimate;
}

/* The numbers each command's summary can hold, as dpdyn sweep names them
 * (dpd_model_command.numbers): the union over the command's configurations, checked by
 * tests/cli/test_sweep_plot_y.sh. Every command reports the calibration and its privacy;
 * simulate and compare the DP-GD replicates. */
#define RF_PRIVACY_NUMBERS                                                                         \
  "seed eta steps tau clip_norm sigma sigma_exact sigma_moments "                                  \
  "sigma_ratio_moments_over_exact epsilon epsilon_exact epsilon_of_sigma_moments delta "           \
  "mu_gdp privacy.mu privacy.zcdp privacy.delta privacy.epsilon privacy.epsilon_gdp "              \
  "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke "
#define RF_DPGD_NUMBERS                                                                            \
  "theta_star_train_risk theta_star_test_risk theta_star_test_risk_se seeds data_draws "           \
  "final_test_risk final_test_risk_se final_train_risk final_train_risk_se "                       \
  "clipped_fraction_final clipped_fraction_mean first_clip_step_min first_clip_step_median"
#define RF_DATA_NUMBERS /* input = file:PATH (and target = file:PATH) */                           \
  " data_rows data_input_scale data_input_mean_norm data_target_mean data_target_scale"

static const dpd_model_command rf_commands[] = {
    {.name = "simulate",
     .summary = "DP-GD replicates: train and test risk with standard errors, clipped fraction",
     .files = "trajectory.tsv clipping.tsv [replicates.tsv replicates_trajectory.tsv] summary.json",
     .example = "dpdyn simulate --model=rf --p=500 --n=400 --epsilon=2 --clip=1",
     .numbers = RF_PRIVACY_NUMBERS RF_DPGD_NUMBERS RF_DATA_NUMBERS,
     .run = dpd__rf_run_simulate,
     .uses = DPD__RF_USES_SIM},
    {.name = "ou",
     .summary =
         "Ornstein-Uhlenbeck theory of DP-GD: test risk (bias + noise), exit from no-clip set",
     .files = "trajectory.tsv summary.json",
     .example = "dpdyn ou --model=rf --p=500 --n=400 --sigma=1",
     .numbers = RF_PRIVACY_NUMBERS
     "theta_star_train_risk theta_star_test_risk ou_rank ou_a_max ou_a_min ou_eta_a_max "
     "ou_exit_step ou_exit_tau final_test_risk final_test_risk_se final_bias final_noise "
     "final_test_risk_continuous ou_final_test_risk_se" RF_DATA_NUMBERS,
     .run = dpd__rf_run_ou,
     .uses = DPD__RF_USES_OU},
    {.name = "compare",
     .summary = "DP-GD replicates against the OU theory: gaps in standard errors, figure",
     .files = "trajectory.tsv clipping.tsv [replicates.tsv replicates_trajectory.tsv] summary.json "
              "rf_compare.png",
     .example = "dpdyn compare --model=rf --p=500 --n=400 --epsilon=2 --clip=1",
     .numbers = RF_PRIVACY_NUMBERS RF_DPGD_NUMBERS
     " ou_rank ou_a_max ou_a_min ou_eta_a_max ou_exit_step ou_exit_tau ou_final_test_risk "
     "ou_final_test_risk_se ou_final_bias ou_final_noise ou_final_test_risk_continuous sup_gap "
     "sup_gap_in_se final_gap final_gap_se final_gap_in_se" RF_DATA_NUMBERS,
     .run = dpd__rf_run_compare,
     .uses = DPD__RF_USES_SIM | DPD__RF_USES_OU,
     .plot_default = 1},
    {.name = "account",
     .summary = "privacy calibration: sigma of epsilon (exact and moments), epsilon of sigma",
     .files = "summary.json",
     .example = "dpdyn account --model=rf --epsilon=2 --steps=500 --eta=0.002",
     .numbers = RF_PRIVACY_NUMBERS "mu_exact",
     .run = dpd__rf_run_account},
    DPD__AUDIT_COMMAND(dpd__rf_run_audit, DPD__RF_USES_AUDIT,
                       RF_PRIVACY_NUMBERS DPD__RF_AUDIT_NUMBERS,
                       "dpdyn audit --model=rf --d=100 --n=40 --p=1000 --steps=50 --mu=1 --clip=1"),
    DPD__RF_OVP_COMMANDS(dpd__rf_run_interpolate, dpd__rf_run_sensitivity, DPD__RF_USES_INTERP,
                         DPD__RF_USES_SENS),
    DPD__RF_RECONSTRUCT_COMMAND(dpd__rf_run_reconstruct, DPD__RF_USES_RECONSTRUCT,
                                RF_PRIVACY_NUMBERS DPD__RF_RECONSTRUCT_NUMBERS),
    {.name = NULL}};

static const char *const rf_small[] = {"d",       "8",     "n",    "40",    "n_test", "30",   "p",
                                       "60",      "steps", "50",   "seeds", "3",      "grid", "11",
                                       "epsilon", "2",     "clip", "1",     NULL};

const dpd_model_type dpd__model_rf = {
    .name = "rf",
    .summary = "random-features regression, full-batch DP-GD with per-sample clipping "
               "(docs/math.md section 2)",
    .keys = rf_keys,
    .commands = rf_commands,
    .small = rf_small,
    .setup = setup,
    .release = release,
    .workspace_bytes = workspace_bytes};
