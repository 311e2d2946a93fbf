/* model=rf: random-features regression trained by full-batch DP-GD with per-sample clipping
 * (docs/math.md §2), as a model type: keys, and the commands simulate | ou | compare | account.
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
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/ou.h"
#include "dpdyn/privacy.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_privacy.h"
#include "dpdyn/rf_sim.h"
#include "core/model_impl.h"

#define TWO24 16777216.0

static const dpd_key_desc rf_keys[] = {
    {"d", DPD_KEY_INT, "100", 1, TWO24, 0, NULL, NULL, "input dimension d"},
    {"n", DPD_KEY_INT, "2000", 1, TWO24, 0, NULL, NULL, "training samples n"},
    {"n_test", DPD_KEY_INT, "1000", 1, TWO24, 0, NULL, "simulate ou compare", "test samples"},
    {"p", DPD_KEY_INT, "4000", 1, 2147483648.0, 0, NULL, NULL, "number of random features p"},
    {"activation", DPD_KEY_TEXT, "tanh", 0, 0, 0, "tanh|relu_centered|hermite13",
     "simulate ou compare", "activation of the features"},
    {"target", DPD_KEY_TEXT, "sign", 0, 0, 0, "linear|sign|hermite2", "simulate ou compare",
     "target function"},
    {"input", DPD_KEY_TEXT, "gaussian", 0, 0, 0, "gaussian|sphere", "simulate ou compare",
     "input law (sphere: radius sqrt(d))"},
    {"zeta", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, "simulate ou compare",
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
    {"seeds", DPD_KEY_INT, "16", 1, TWO24, 0, NULL, "simulate compare", "replicates"},
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
    {"threads", DPD_KEY_INT, "0", 0, 4096, 0, NULL, "simulate ou compare",
     "worker threads (0 = all cores); results do not depend on it"},
    {"grid", DPD_KEY_INT, "101", 2, TWO24, 0, NULL, "simulate ou compare",
     "recorded points on [0, T] (at most one per step)"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

typedef struct {
  dpd_rf_config pc;         /* problem */
  dpd_rf_sim_config sc;     /* DP-GD (eta, T, clip, sigma, seeds, seed, grid, threads) */
  double delta;             /* privacy delta (default 1/n) */
  double epsilon;           /* target epsilon (INFINITY: non-private) */
  int have_epsilon;         /* epsilon given: sigma calibrated from it */
  int moments;              /* calibration = moments */
  int theta_star;           /* theta_star = on: theta* = Phi^+ y of each draw */
  dpd_rf_resample resample; /* what the replicates redraw (simulate, compare) */
  double sigma_exact;       /* exact calibration for epsilon (0 when non-private) */
  double sigma_moments;     /* seed's bound for epsilon (NAN outside its range) */
  double eps_moments;       /* epsilon that sigma_moments delivers (NAN when n/a) */
  double epsilon_exact;     /* epsilon that the sigma in use delivers (exact accounting) */
  int plot;
  int save_replicates;    /* 0 none, 1 replicates.tsv, 2 also replicates_trajectory.tsv */
  double memory_estimate; /* bytes the command is expected to need (check_memory) */

  dpd__progress_bridge progress; /* DP-GD steps to env->progress (sc.progress_user) */
} rf_run;

/* The seed's moments sigma for r->epsilon and the epsilon it really delivers; left NAN where
 * its bound does not hold (epsilon >= 8 log(1/delta)). */
static int moments_eval(rf_run *r, dpd_err *err) {
  dpd_rf_privacy_report rep;
  int status;
  if (!(r->epsilon < 8.0 * log(1.0 / r->delta))) {
    return DPD_OK;
  }
  if ((status = dpd_rf_privacy_report_eval(r->sc.eta, r->sc.T, r->epsilon, r->delta, &rep, err)) <
      0) {
    return status;
  }
  r->sigma_moments = rep.sigma_moments;
  r->eps_moments = rep.eps_moments_exact;
  return DPD_OK;
}

/* The memory a model=rf command needs, estimated before anything is built (bytes; checked
 * against peak RSS in tests/cli/test_limits.sh). The problem (Phi, Phi_test, the weights) stays
 * for the whole run; on top of it come, one after the other, theta* by dgelsd (LAPACKE's
 * column-major copy of Phi, dgelsd's own copy and an n x n factor) and then the DP-GD
 * replicates and the OU eigenproblem. The key named in an error is the one whose term
 * dominates. */
static int check_memory(const dpd_keys *keys, const dpd_run_env *env, const char *command,
                        rf_run *r, dpd_err *err) {
  const double d = (double)r->pc.d, n = (double)r->pc.n, nt = (double)r->pc.n_test;
  const double pp = (double)r->pc.p, T = (double)r->sc.T, seeds = (double)r->sc.seeds;
  const double grid = (double)r->sc.grid;
  const double threads = r->sc.threads > 0 ? r->sc.threads : omp_get_max_threads();
  const double small = fmin(n, pp);
  const int sim = strcmp(command, "simulate") == 0 || strcmp(command, "compare") == 0;
  const int ou = strcmp(command, "ou") == 0 || strcmp(command, "compare") == 0;
  const double base_p = 8.0 * (pp * d + (n + nt) * pp + 2.0 * pp);
  const double base_d = 8.0 * ((n > nt ? n : nt) * d + 4.0 * n + 2.0 * nt);
  const double ts_p = 8.0 * 2.0 * n * pp, ts_n = 8.0 * (small * small + 13.0 * small);
  double later_p = 0.0, later_n = 0.0, later_steps = 8.0 * 3.0 * grid, later_seeds = 0.0;
  double phase_ts, phase_later, extra_p, extra_n, extra_steps, extra_seeds, top;
  const char *driver = "p";
  if (sim && r->resample == DPD_RF_RESAMPLE_NOISE) {
    later_p += 8.0 * threads * 4.0 * pp + 8.0 * pp;
  } else if (sim) {
    /* one replicate at a time (one workspace), with up to 64 row blocks' partial gradients
     * held at once (rf_sim.c: at most 2^21 doubles of them, or one per thread) */
    later_p += 8.0 * (4.0 + fmin(64.0, fmax(2097152.0 / pp, threads))) * pp + 8.0 * pp;
    later_seeds += 8.0 * seeds * (6.0 * grid + 8.0); /* each draw's theta* and OU curves */
  }
  if (sim) {
    later_seeds += 8.0 * seeds * (T + 2.0 * grid + 2.0);
    later_seeds += dpd__model_replicates_bytes(r->save_replicates, r->sc.seeds, r->sc.grid, 5, 4);
    later_steps += 8.0 * 3.0 * T;
  }
  if (ou) {
    later_n += 8.0 * (4.0 * n * n + 2.0 * nt * n); /* Gram, eigenvectors, dsyevd's workspace */
    later_steps += 8.0 * (T + 1.0);
  }
  phase_ts = ts_p + ts_n;
  phase_later = later_p + later_n + later_steps + later_seeds;
  if (phase_ts >= phase_later) {
    extra_p = ts_p;
    extra_n = ts_n;
    extra_steps = extra_seeds = 0.0;
  } else {
    extra_p = later_p;
    extra_n = later_n;
    extra_steps = later_steps;
    extra_seeds = later_seeds;
  }
  r->memory_estimate = base_p + base_d + fmax(phase_ts, phase_later);
  top = base_p + extra_p;
  if (extra_n > top) {
    top = extra_n;
    driver = "n";
  }
  if (base_d > top) {
    top = base_d;
    driver = "d";
  }
  if (extra_steps > top) {
    top = extra_steps;
    driver = "steps";
  }
  if (extra_seeds > top) {
    /* seeds x steps: name the factor the user set (steps when both or neither) */
    driver = dpd_keys_given(keys, "seeds") && !dpd_keys_given(keys, "steps") ? "seeds" : "steps";
  }
  return dpd__model_memory_check(keys, env, r->memory_estimate, driver, err);
}

/* An enumerated key: validated against the table's choices, then mapped by the rf module. */
#define RF_ENUM(key, getter, field)                                                                \
  ((status = dpd_keys_choice_get(keys, key, &choice, err)) < 0                                     \
       ? status                                                                                    \
       : getter(dpd_keys_text_get(keys, key), field, err))

/* Validates every key of model=rf and fills the run. Nothing is built. */
static int setup(dpd_keys *keys, const dpd_run_env *env, rf_run *r, dpd_err *err) {
  const char *command = dpd_keys_command_get(keys);
  size_t threads, grid, choice, star;
  uint64_t seed;
  double clip, sigma = 0.0;
  int status, have_sigma;
  memset(r, 0, sizeof *r);
  r->pc = dpd_rf_config_default();
  r->sc = dpd_rf_sim_config_default();
  if ((status = dpd_keys_size_get(keys, "d", &r->pc.d, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n", &r->pc.n, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n_test", &r->pc.n_test, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "p", &r->pc.p, err)) < 0 ||
      (status = RF_ENUM("activation", dpd_rf_activation_get, &r->pc.activation)) < 0 ||
      (status = RF_ENUM("target", dpd_rf_target_get, &r->pc.target)) < 0 ||
      (status = RF_ENUM("input", dpd_rf_input_get, &r->pc.input)) < 0 ||
      (status = dpd_keys_real_get(keys, "zeta", &r->pc.zeta, err)) < 0) {
    return status;
  }
  if (!dpd_keys_given(keys, "delta") && r->pc.n < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: n >= 2 when delta is not given, since "
                    "its default 1/n must be < 1; or give delta)",
                    r->pc.n);
  }
  if ((!dpd_keys_given(keys, "eta") &&
       (status = dpd_keys_effective_real_set(keys, "eta", 1.0 / (double)r->pc.p, err)) < 0) ||
      (!dpd_keys_given(keys, "steps") &&
       (status = dpd_keys_effective_real_set(keys, "steps", 5.0 * (double)r->pc.d, err)) < 0) ||
      (!dpd_keys_given(keys, "delta") &&
       (status = dpd_keys_effective_real_set(keys, "delta", 1.0 / (double)r->pc.n, err)) < 0) ||
      (status = dpd_keys_real_get(keys, "eta", &r->sc.eta, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "steps", &r->sc.T, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "clip", &clip, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "delta", &r->delta, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "seeds", &r->sc.seeds, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &seed, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "threads", &threads, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "grid", &grid, err)) < 0 ||
      (status = RF_ENUM("resample", dpd_rf_resample_get, &r->resample)) < 0 ||
      (status = dpd_keys_choice_get(keys, "calibration", &choice, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "theta_star", &star, err)) < 0) {
    return status;
  }
  r->moments = choice == 1;
  r->theta_star = star == 0;
  r->pc.seed = seed;
  r->sc.clip = clip;
  r->sc.seed = seed;
  r->sc.threads = (int)threads;
  if (grid > r->sc.T + 1) {
    grid = r->sc.T + 1; /* one point per step at most */
    if ((status = dpd_keys_effective_real_set(keys, "grid", (double)grid, err)) < 0) {
      return status;
    }
  }
  r->sc.grid = grid;
  if ((status = dpd__model_save_replicates_get(keys, 2, &r->save_replicates, err)) < 0) {
    return status;
  }

  r->have_epsilon = dpd_keys_given(keys, "epsilon");
  have_sigma = dpd_keys_given(keys, "sigma");
  if (r->have_epsilon && have_sigma) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'sigma': given together with epsilon (allowed: one of "
                    "epsilon (sigma is calibrated) or sigma (its epsilon is reported))");
  }
  {
    /* One budget: epsilon (with delta), mu, zcdp or sigma. mu and zcdp fix sigma exactly: T steps
     * of DP-GD are sqrt(eta T)/sigma-GDP, i.e. (eta T / (2 sigma^2))-zCDP. */
    const char *const budget[] = {"epsilon", "sigma", "mu", "zcdp"};
    const char *first = NULL;
    for (size_t k = 0; k < 4; k++) {
      if (!dpd_keys_given(keys, budget[k])) {
        continue;
      }
      if (first != NULL) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': given together with %s (allowed: one of "
                        "epsilon (with delta), mu, zcdp or sigma)",
                        budget[k], first);
      }
      first = budget[k];
    }
    if (first != NULL && (strcmp(first, "mu") == 0 || strcmp(first, "zcdp") == 0)) {
      double v, mu;
      if ((status = dpd_keys_real_get(keys, first, &v, err)) < 0) {
        return status;
      }
      mu = strcmp(first, "mu") == 0 ? v : sqrt(2.0 * v);
      if (!(mu > 0.0)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': 0 (allowed: > 0, or inf for a non-private run)",
                        first);
      }
      sigma = isinf(mu) ? 0.0 : sqrt(r->sc.eta * (double)r->sc.T) / mu;
      have_sigma = 2; /* sigma derived, as if given */
    }
  }
  r->sigma_moments = NAN;
  r->eps_moments = NAN;
  if (r->have_epsilon) {
    if ((status = dpd_keys_real_get(keys, "epsilon", &r->epsilon, err)) < 0 ||
        (status = dpd_rf_privacy_sigma_exact(r->sc.eta, r->sc.T, r->epsilon, r->delta,
                                             &r->sigma_exact, err)) < 0 ||
        (status = moments_eval(r, err)) < 0) {
      return status;
    }
    if (r->moments && isnan(r->sigma_moments)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'epsilon': %g with calibration = moments (allowed: 0 < "
                      "epsilon < 8 log(1/delta) = %g, where the seed's bound holds)",
                      r->epsilon, 8.0 * log(1.0 / r->delta));
    }
    sigma = r->moments ? r->sigma_moments : r->sigma_exact;
  } else if (have_sigma == 1) {
    if ((status = dpd_keys_real_get(keys, "sigma", &sigma, err)) < 0) {
      return status;
    }
  }
  if (sigma > 0.0 && !isfinite(clip) && strcmp(command, "account") != 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'clip': inf with %s (allowed: finite clip > 0 when the "
                    "run is private: the noise scale is 2 C sigma / n)",
                    r->have_epsilon ? "epsilon given" : "sigma > 0");
  }
  r->sc.sigma = sigma;
  if (sigma > 0.0) {
    if ((status = dpd_rf_privacy_eps_delivered(r->sc.eta, r->sc.T, sigma, r->delta,
                                               &r->epsilon_exact, err)) < 0) {
      return status;
    }
    if (!r->have_epsilon) {
      /* sigma given: both calibrations of the epsilon it delivers, for comparison. */
      r->epsilon = r->epsilon_exact;
      r->sigma_exact = sigma;
      (void)moments_eval(r, NULL); /* epsilon = 0 (huge sigma): no moments sigma, left NAN */
    }
  } else {
    r->epsilon = INFINITY;
    r->epsilon_exact = INFINITY;
  }
  if ((status = dpd__model_plot_get(keys, strcmp(command, "compare") == 0, &r->plot, err)) < 0) {
    return status;
  }
  /* the keys of other commands (account has no data, replicates or grid) are not in effect */
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  r->progress = (dpd__progress_bridge){env, "DP-GD steps"};
  r->sc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  r->sc.progress_user = &r->progress;
  return strcmp(command, "account") == 0 ? DPD_OK : check_memory(keys, env, command, r, err);
}

/* The moments calibration is undefined without privacy and outside its bound's range: those
 * keys are null with the reason in "not_available" (summary.json has no NaN). */
static void add_privacy(dpd_output *out, const rf_run *r) {
  double mu = r->sc.sigma > 0.0 ? sqrt(r->sc.eta * (double)r->sc.T) / r->sc.sigma : INFINITY;
  const char *why_moments = r->sc.sigma > 0.0
                                ? "the moments bound holds only for epsilon < 8 log(1/delta)"
                                : "the run is not private (sigma = 0): no moments calibration";
  dpd_output_number_set(out, "sigma", r->sc.sigma);
  dpd_output_number_set(out, "sigma_exact", r->sigma_exact);
  if (isnan(r->sigma_moments)) {
    dpd_output_na_set(out, "sigma_moments", why_moments);
    dpd_output_na_set(out, "sigma_ratio_moments_over_exact", why_moments);
  } else {
    dpd_output_number_set(out, "sigma_moments", r->sigma_moments);
    dpd_output_number_set(out, "sigma_ratio_moments_over_exact", r->sigma_moments / r->sigma_exact);
  }
  dpd_output_number_set(out, "epsilon", r->epsilon);
  dpd_output_number_set(out, "epsilon_exact", r->epsilon_exact);
  if (isnan(r->eps_moments)) {
    dpd_output_na_set(out, "epsilon_of_sigma_moments", why_moments);
  } else {
    dpd_output_number_set(out, "epsilon_of_sigma_moments", r->eps_moments);
  }
  dpd_output_number_set(out, "delta", r->delta);
  dpd_output_number_set(out, "mu_gdp", mu);
  {
    /* Every guarantee of the run (docs/privacy.md): mu-GDP exactly (Gaussian noise). */
    dpd_privacy_guarantee g;
    if (dpd_privacy_guarantee_from_gdp(mu, r->delta, &g, NULL) == DPD_OK) {
      dpd__output_guarantee(out, &g);
    }
  }
  cJSON_AddStringToObject(out->summary, "calibration",
                          !r->have_epsilon ? "none"
                          : r->moments     ? "moments"
                                           : "exact");
}

/* The output every rf command starts from: headline and the run's scalars. */
static int output_begin(const char *command, const rf_run *r, dpd_output **out, dpd_err *err) {
  dpd_output *o;
  int status;
  if ((status = dpd__output_begin(command, "rf", r->plot, r->sc.seed, out, err)) < 0) {
    return status;
  }
  o = *out;
  if ((status = dpd__output_headline_set(
           o, err, "model rf, d = %zu, n = %zu, p = %zu, %s, seed %llu", r->pc.d, r->pc.n, r->pc.p,
           dpd_rf_activation_name(r->pc.activation), (unsigned long long)r->sc.seed)) < 0) {
    return status;
  }
  dpd_output_number_set(o, "eta", r->sc.eta);
  cJSON_AddNumberToObject(o->summary, "steps", (double)r->sc.T);
  dpd_output_number_set(o, "tau", r->sc.eta * (double)r->sc.T);
  if (r->memory_estimate > 0.0) {
    cJSON_AddNumberToObject(o->summary, "memory_estimate_bytes", round(r->memory_estimate));
  }
  dpd_output_number_set(o, "clip_norm",
                        isfinite(r->sc.clip) ? r->sc.clip * sqrt((double)r->pc.p) : INFINITY);
  add_privacy(o, r);
  return DPD_OK;
}

/* dpdyn account --model=rf: the calibration alone. */
static int run_account(dpd_keys *keys, const dpd_run_env *env, dpd_output **out, dpd_err *err) {
  rf_run r;
  int status;
  *out = NULL;
  if ((status = setup(keys, env, &r, err)) < 0 || (status = dpd__model_validated(env, err)) != 0) {
    return status < 0 ? status : DPD_OK;
  }
  if ((status = output_begin("account", &r, out, err)) < 0) {
    return status;
  }
  dpd_output_number_set(*out, "mu_exact",
                        r.sigma_exact > 0.0 ? sqrt(r.sc.eta * (double)r.sc.T) / r.sigma_exact
                                            : INFINITY);
  return DPD_OK;
}

/* Sup over the grid of |a - b| and of |a - b| / se (se = 0 with a gap: infinity). */
static void sup_gaps(const double *a, const double *b, const double *se, size_t g, double *sup,
                     double *sup_se) {
  *sup = 0.0;
  *sup_se = 0.0;
  for (size_t j = 0; j < g; j++) {
    double gap = fabs(a[j] - b[j]);
    /* Without noise both sides are deterministic: a gap at rounding level counts as none. */
    double z = se[j] > 0.0                                 ? gap / se[j]
               : gap > 1e-9 * fmax(fabs(a[j]), fabs(b[j])) ? INFINITY
                                                           : 0.0;
    *sup = fmax(*sup, gap);
    *sup_se = fmax(*sup_se, z);
  }
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* What each draw of the problem gives (rf_draw_eval): theta*'s risks, and for ou and compare the
 * OU theory conditional on that draw. One draw (resample = noise, and ou) or one per replicate. */
typedef struct {
  const rf_run *r;
  int do_ou;
  size_t g, draws;
  const size_t *kgrid;               /* [g] recorded steps */
  double *ts_train, *ts_test;        /* [draws] theta* = Phi^+ y */
  double *ou_d, *ou_bias, *ou_noise; /* [draws * g] discrete OU: risk, bias, noise */
  double *ou_c;                      /* [draws * g] continuous OU risk */
  double *a_max, *a_min;             /* [draws] 2 s^2 / n, largest and smallest kept */
  size_t *rank, *exit_step;          /* [draws]; exit_step T + 1: never leaves */
  size_t polls;                      /* stop polls so far (draw_poll) */
} rf_draws;

/* Polls between the dense phases of a draw (its features, theta*, the OU eigenproblem, the test
 * projection: each one LAPACK or BLAS call that cannot be interrupted): env->progress with the
 * phases done of DRAW_POLLS per draw ("problem phases"); DPD_ECANCELLED when it asks to stop. */
#define DRAW_POLLS 4
static int draw_poll(rf_draws *w, dpd_err *err) {
  const dpd_run_env *env = w->r->progress.env;
  w->polls++;
  if (env->progress != NULL && env->progress(env->progress_user, "problem phases", w->polls,
                                             w->draws * DRAW_POLLS) != 0) {
    return DPD_FAIL(err, DPD_ECANCELLED, "stopped by the progress callback");
  }
  return DPD_OK;
}

static void rf_draws_free(rf_draws *w) {
  free(w->ts_train);
  free(w->ts_test);
  free(w->ou_d);
  free(w->ou_bias);
  free(w->ou_noise);
  free(w->ou_c);
  free(w->a_max);
  free(w->a_min);
  free(w->rank);
  free(w->exit_step);
}

static int rf_draws_alloc(rf_draws *w, dpd_err *err) {
  const size_t m = w->draws, mg = w->draws * w->g;
  w->ts_train = malloc(m * sizeof *w->ts_train);
  w->ts_test = malloc(m * sizeof *w->ts_test);
  w->ou_d = malloc(mg * sizeof *w->ou_d);
  w->ou_bias = malloc(mg * sizeof *w->ou_bias);
  w->ou_noise = malloc(mg * sizeof *w->ou_noise);
  w->ou_c = malloc(mg * sizeof *w->ou_c);
  w->a_max = malloc(m * sizeof *w->a_max);
  w->a_min = malloc(m * sizeof *w->a_min);
  w->rank = malloc(m * sizeof *w->rank);
  w->exit_step = malloc(m * sizeof *w->exit_step);
  if (w->ts_train == NULL || w->ts_test == NULL || w->ou_d == NULL || w->ou_bias == NULL ||
      w->ou_noise == NULL || w->ou_c == NULL || w->a_max == NULL || w->a_min == NULL ||
      w->rank == NULL || w->exit_step == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (%zu draws of the problem)", m);
  }
  return DPD_OK;
}

/* theta* and, for ou and compare, the OU theory of one draw (dpd_rf_draw_fn). */
static int rf_draw_eval(void *user, size_t rep, const dpd_rf_problem *problem, dpd_err *err) {
  rf_draws *w = user;
  const rf_run *r = w->r;
  const size_t g = w->g, T = r->sc.T, n = problem->n, pp = problem->p;
  dpd_ou *ou = NULL;
  dpd_ou_test *ou_test = NULL;
  dpd_ou_risk *risk_d = NULL, *risk_c = NULL;
  size_t *ksteps = NULL;
  double *s = NULL;
  int status = DPD_OK;
  w->ts_train[rep] = NAN;
  w->ts_test[rep] = NAN;
  if ((w->do_ou || r->theta_star) && (status = draw_poll(w, err)) < 0) {
    return status;
  }
  if (r->theta_star) {
    double *theta_star = malloc(pp * sizeof *theta_star);
    if (theta_star == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory (p = %zu)", pp);
    }
    status =
        dpd_rf_theta_star_get(problem, -1.0, theta_star, &w->ts_train[rep], &w->ts_test[rep], err);
    free(theta_star);
  }
  if (status >= 0 && (w->do_ou || r->theta_star)) {
    status = draw_poll(w, err);
  }
  if (status < 0 || !w->do_ou) {
    return status;
  }
  dpd_ou_params par = {.eta = r->sc.eta,
                       .clip = isfinite(r->sc.clip) ? r->sc.clip * sqrt((double)pp) : 1.0,
                       .sigma = r->sc.sigma,
                       .time = DPD_OU_DISCRETE};
  size_t exit_idx;
  s = malloc(n * sizeof *s);
  risk_d = malloc(g * sizeof *risk_d);
  risk_c = malloc(g * sizeof *risk_c);
  if (s == NULL || risk_d == NULL || risk_c == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    goto done;
  }
  if ((status = dpd_ou_create(NULL, problem->phi, n, pp, problem->y, &ou, err)) < 0 ||
      (status = draw_poll(w, err)) < 0) {
    goto done;
  }
  w->rank[rep] = dpd_ou_rank_get(ou);
  dpd_ou_singular_values_get(ou, s);
  w->a_max[rep] = 2.0 * s[0] * s[0] / (double)n;
  w->a_min[rep] =
      w->rank[rep] > 0 ? 2.0 * s[w->rank[rep] - 1] * s[w->rank[rep] - 1] / (double)n : 0.0;
  if (!(r->sc.eta * w->a_max[rep] < 2.0)) {
    char which[64] = "";
    if (w->draws > 1) {
      snprintf(which, sizeof which, "data draw %zu: ", rep);
    }
    status = DPD_FAIL(err, DPD_ENONFINITE,
                      "ou: eta = %g is above the stability limit 2 / a_max = %g of gradient "
                      "descent on this problem (%sa_max = 2 s_max^2 / n = %g): DP-GD diverges",
                      r->sc.eta, 2.0 / w->a_max[rep], which, w->a_max[rep]);
    goto done;
  }
  /* One projection of the test set serves the discrete and the continuous curve. */
  if ((status = dpd_ou_test_create(ou, problem->phi_test, problem->n_test, problem->y_test,
                                   &ou_test, err)) < 0 ||
      (status = draw_poll(w, err)) < 0 ||
      (status = dpd_ou_test_risk_eval(ou_test, &par, w->kgrid, g, risk_d, err)) < 0) {
    goto done;
  }
  par.time = DPD_OU_CONTINUOUS;
  if ((status = dpd_ou_test_risk_eval(ou_test, &par, w->kgrid, g, risk_c, err)) < 0) {
    goto done;
  }
  /* First exit of the mean path from the no-clip set, scanned at every step. */
  exit_idx = T + 1;
  if (isfinite(r->sc.clip)) {
    ksteps = malloc((T + 1) * sizeof *ksteps);
    if (ksteps == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      goto done;
    }
    for (size_t k = 0; k <= T; k++) {
      ksteps[k] = k;
    }
    par.time = DPD_OU_DISCRETE;
    par.clip = r->sc.clip * sqrt((double)pp);
    if ((status = dpd_ou_exit_step(ou, &par, ksteps, T + 1, &exit_idx, err)) < 0) {
      goto done;
    }
  }
  w->exit_step[rep] = exit_idx;
  for (size_t j = 0; j < g; j++) {
    w->ou_d[rep * g + j] = risk_d[j].risk;
    w->ou_bias[rep * g + j] = risk_d[j].bias;
    w->ou_noise[rep * g + j] = risk_d[j].noise;
    w->ou_c[rep * g + j] = risk_c[j].risk;
  }
done:
  free(s);
  free(risk_d);
  free(risk_c);
  free(ksteps);
  dpd_ou_test_free(ou_test);
  dpd_ou_free(ou);
  return status;
}

/* Mean and standard error over the draws of column j of x [draws * g] (one draw: the value
 * itself and SE 0, as the single-draw outputs have always been). */
static void draws_mean_se(const double *x, size_t draws, size_t g, double *mean, double *se) {
  if (draws == 1) {
    memcpy(mean, x, g * sizeof *mean);
    for (size_t j = 0; j < g; j++) {
      se[j] = 0.0;
    }
  } else {
    dpd__stats_columns_mean_se(x, draws, g, mean, se);
  }
}

/* save_replicates: replicates.tsv (each replicate's final test and train risk, and its first
 * clipped step, -1 if none, as the summary's first_clip_step_*; with resample = all or data
 * also the theta* test risk of its own draw and, for compare, that draw's OU final test risk)
 * and, at 2,
 * replicates_trajectory.tsv (each replicate's risks on the grid, named as trajectory.tsv's
 * columns they average to). */
static int add_replicates(dpd_output *out, const rf_run *r, const dpd_rf_sim_result *sim,
                          const rf_draws *w, const size_t *kgrid, dpd_err *err) {
  const size_t S = r->sc.seeds, g = r->sc.grid, T = r->sc.T;
  const int per_draw = w->draws == S && r->resample != DPD_RF_RESAMPLE_NOISE;
  double *buf = malloc((5 * S + 2 * g) * sizeof *buf);
  int status;
  if (buf == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (seeds = %zu)", S);
  }
  for (size_t i = 0; i < S; i++) {
    buf[i] = sim->test_replicates[i * g + g - 1];
    buf[S + i] = sim->train_replicates[i * g + g - 1];
    buf[2 * S + i] = sim->first_clip[i] < T ? (double)sim->first_clip[i] : -1.0;
  }
  if (per_draw) {
    /* each replicate's own draw: its theta* and, for compare, its OU theory */
    for (size_t i = 0; i < S; i++) {
      buf[3 * S + i] = w->ts_test[i];
      buf[4 * S + i] = w->do_ou ? w->ou_d[i * g + g - 1] : NAN;
    }
  }
  {
    const double *fin[5] = {buf, buf + S, buf + 2 * S, buf + 3 * S, buf + 4 * S};
    status = dpd__output_replicates_add(
        out, NULL,
        !per_draw   ? "final_test_risk final_train_risk first_clip_step"
        : !w->do_ou ? "final_test_risk final_train_risk first_clip_step theta_star_test_risk"
                    : "final_test_risk final_train_risk first_clip_step theta_star_test_risk "
                      "ou_final_test_risk",
        S,
        !per_draw  ? 3
        : w->do_ou ? 5
                   : 4,
        fin, err);
  }
  if (status == DPD_OK && r->save_replicates >= 2) {
    double *t = buf + 5 * S, *kk = t + g;
    for (size_t j = 0; j < g; j++) {
      t[j] = (double)kgrid[j] / (double)T;
      kk[j] = (double)kgrid[j];
    }
    const double *shared[2] = {t, kk}, *per[2] = {sim->train_replicates, sim->test_replicates};
    status = dpd__output_replicate_trajectory_add(out, NULL, "t step train_risk test_risk", S, g, 2,
                                                  shared, 2, per, err);
  }
  free(buf);
  return status;
}

/* simulate, ou and compare: the problem (one, or one per replicate as `resample` says), then
 * DP-GD replicates and/or the OU theory. With one problem per replicate, the OU curves are the
 * means over the draws of the theory conditional on each, and the gaps are measured in the
 * standard error of the paired differences (replicate r's DP-GD against draw r's theory):
 * docs/rf.md, "Replicates: what varies". */
static int run_problem(dpd_keys *keys, const dpd_run_env *env, dpd_output **outp, dpd_err *err) {
  const char *command = dpd_keys_command_get(keys);
  rf_run r;
  rf_draws w;
  dpd_rf_problem *problem = NULL;
  dpd_rf_sim_result *sim = NULL;
  double *cols_buf = NULL, *steps_all = NULL;
  size_t *kgrid = NULL;
  dpd_output *out = NULL;
  int status;
  const int do_sim = strcmp(command, "simulate") == 0 || strcmp(command, "compare") == 0;
  const int do_ou = strcmp(command, "ou") == 0 || strcmp(command, "compare") == 0;
  const char *figure = do_sim && do_ou ? "rf_compare" : do_sim ? "rf_simulate" : "rf_ou";
  double ts_train, ts_test, ts_train_se, ts_test_se;

  *outp = NULL;
  memset(&w, 0, sizeof w);
  if ((status = setup(keys, env, &r, err)) < 0 || (status = dpd__model_validated(env, err)) != 0) {
    return status < 0 ? status : DPD_OK;
  }
  /* theta* (dgelsd) and the OU eigenproblem (dsyevd) run in LAPACK, whose rounding depends on
   * OpenBLAS's thread count; one thread keeps every output bit-identical for any `threads`
   * (dpdyn's own kernels use OpenMP). On two cores this costs nothing measurable. */
  openblas_set_num_threads(1);
  const size_t g = r.sc.grid, T = r.sc.T;
  /* One problem per replicate (resample = data, all) or one for the run. */
  const int per_draw = do_sim && r.resample != DPD_RF_RESAMPLE_NOISE;
  const size_t draws = per_draw ? r.sc.seeds : 1;
  w = (rf_draws){.r = &r, .do_ou = do_ou, .g = g, .draws = draws};
  kgrid = malloc(g * sizeof *kgrid);
  if (kgrid == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (grid = %zu)", g);
    goto done;
  }
  dpd_rf_sim_grid_steps(T, g, kgrid);
  w.kgrid = kgrid;
  if ((status = rf_draws_alloc(&w, err)) < 0) {
    goto done;
  }
  if (do_sim) {
    status = dpd_rf_sim_resample_run(&r.pc, &r.sc, r.resample, rf_draw_eval, &w, &sim, err);
  } else if ((status = dpd_rf_problem_create(&r.pc, &problem, err)) >= 0) {
    status = rf_draw_eval(&w, 0, problem, err);
  }
  if (status < 0) {
    goto done;
  }
  draws_mean_se(w.ts_train, draws, 1, &ts_train, &ts_train_se);
  draws_mean_se(w.ts_test, draws, 1, &ts_test, &ts_test_se);

  if ((status = output_begin(command, &r, &out, err)) < 0 ||
      (status = dpd__output_figure_set(out, figure, err)) < 0) {
    goto done;
  }
  if (r.theta_star) {
    dpd_output_number_set(out, "theta_star_train_risk", ts_train);
    dpd_output_number_set(out, "theta_star_test_risk", ts_test);
  }
  if (per_draw && r.theta_star) {
    dpd_output_number_set(out, "theta_star_test_risk_se", ts_test_se);
  }

  if (do_sim) {
    size_t *fc;
    cJSON_AddNumberToObject(out->summary, "seeds", (double)r.sc.seeds);
    cJSON_AddStringToObject(out->summary, "resample", dpd_rf_resample_name(r.resample));
    cJSON_AddNumberToObject(out->summary, "data_draws", (double)draws);
    dpd_output_number_set(out, "final_test_risk", sim->test_mean[g - 1]);
    dpd_output_number_set(out, "final_test_risk_se", sim->test_se[g - 1]);
    dpd_output_number_set(out, "final_train_risk", sim->train_mean[g - 1]);
    dpd_output_number_set(out, "final_train_risk_se", sim->train_se[g - 1]);
    dpd_output_number_set(out, "clipped_fraction_final", sim->clip_fraction[T - 1]);
    dpd_output_number_set(out, "clipped_fraction_mean", sim->clip_fraction_total);
    fc = malloc(r.sc.seeds * sizeof *fc);
    if (fc == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      goto done;
    }
    memcpy(fc, sim->first_clip, r.sc.seeds * sizeof *fc);
    qsort(fc, r.sc.seeds, sizeof *fc, cmp_size);
    /* T means "never clipped": reported as -1. */
    dpd_output_number_set(out, "first_clip_step_min", fc[0] < T ? (double)fc[0] : -1.0);
    dpd_output_number_set(out, "first_clip_step_median",
                          fc[r.sc.seeds / 2] < T ? (double)fc[r.sc.seeds / 2] : -1.0);
    free(fc);
    if (r.resample == DPD_RF_RESAMPLE_NOISE &&
        (status = dpd__output_note_add(
             out, err,
             "note: resample = noise: every replicate trains on the same data set (seed %llu), "
             "so the standard errors measure the noise alone, conditional on that data set; "
             "resample = all gives the spread of independent runs",
             (unsigned long long)r.sc.seed)) < 0) {
      goto done;
    }
    if (r.resample == DPD_RF_RESAMPLE_DATA &&
        (status = dpd__output_note_add(
             out, err,
             "note: resample = data: every replicate draws the same noise path, so the "
             "standard errors%s measure the data alone, conditional on that path; resample = "
             "all gives the spread of independent runs",
             do_ou ? " (and the gaps measured in them)" : "")) < 0) {
      goto done;
    }
  }

  /* t, step, clipped fraction, theta*, the 4 OU curves (means over the draws), their SE, the
   * gap's SE, scratch, and the paired differences of the draws. */
  cols_buf = malloc((11 + draws) * g * sizeof *cols_buf);
  if (cols_buf == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    goto done;
  }
  double *t = cols_buf, *kk = t + g, *clipg = kk + g, *tsc = clipg + g, *oud = tsc + g;
  double *oud_se = oud + 4 * g, *gap_se = oud_se + g, *scratch = gap_se + g, *diff = scratch + g;
  const double *se_of_gap = sim != NULL ? sim->test_se : NULL;
  if (do_ou) {
    size_t rank = w.rank[0], exit_idx = w.exit_step[0];
    double a_max = w.a_max[0], a_min = w.a_min[0];
    const char *pre = do_sim ? "ou_" : "";
    char key[64];
    /* Over the draws: the smallest rank and a_min, the largest a_max, the earliest exit. */
    for (size_t k = 1; k < draws; k++) {
      rank = w.rank[k] < rank ? w.rank[k] : rank;
      exit_idx = w.exit_step[k] < exit_idx ? w.exit_step[k] : exit_idx;
      a_max = fmax(a_max, w.a_max[k]);
      a_min = fmin(a_min, w.a_min[k]);
    }
    cJSON_AddNumberToObject(out->summary, "ou_rank", (double)rank);
    dpd_output_number_set(out, "ou_a_max", a_max);
    dpd_output_number_set(out, "ou_a_min", a_min);
    dpd_output_number_set(out, "ou_eta_a_max", r.sc.eta * a_max);
    dpd_output_number_set(out, "ou_exit_step", exit_idx <= T ? (double)exit_idx : -1.0);
    dpd_output_number_set(out, "ou_exit_tau",
                          exit_idx <= T ? r.sc.eta * (double)exit_idx : INFINITY);
    draws_mean_se(w.ou_d, draws, g, oud, oud_se);
    draws_mean_se(w.ou_bias, draws, g, oud + g, scratch);
    draws_mean_se(w.ou_noise, draws, g, oud + 2 * g, scratch);
    draws_mean_se(w.ou_c, draws, g, oud + 3 * g, scratch);
    snprintf(key, sizeof key, "%sfinal_test_risk", pre);
    dpd_output_number_set(out, key, oud[g - 1]);
    if (!do_sim) {
      dpd_output_number_set(out, "final_test_risk_se", 0.0);
    }
    if (per_draw) {
      dpd_output_number_set(out, "ou_final_test_risk_se", oud_se[g - 1]);
    }
    snprintf(key, sizeof key, "%sfinal_bias", pre);
    dpd_output_number_set(out, key, oud[2 * g - 1]);
    snprintf(key, sizeof key, "%sfinal_noise", pre);
    dpd_output_number_set(out, key, oud[3 * g - 1]);
    snprintf(key, sizeof key, "%sfinal_test_risk_continuous", pre);
    dpd_output_number_set(out, key, oud[4 * g - 1]);
    if (per_draw) {
      /* Paired: replicate r's DP-GD risk minus the theory of its own draw r. The data's
       * variance, common to both, cancels; what is left is the noise's (and, with clipping,
       * the theory's error). */
      for (size_t k = 0; k < draws * g; k++) {
        diff[k] = sim->test_replicates[k] - w.ou_d[k];
      }
      dpd__stats_columns_mean_se(diff, draws, g, scratch, gap_se);
      se_of_gap = gap_se;
    }
  }

  /* Tables: trajectory.tsv on the grid, clipping.tsv at every step (simulations). */
  {
    const double *cols[16];
    char names[512] = "t step";
    size_t ncols = 0;
    for (size_t j = 0; j < g; j++) {
      t[j] = (double)kgrid[j] / (double)T;
      kk[j] = (double)kgrid[j];
      clipg[j] = sim != NULL ? sim->clip_fraction[kgrid[j] < T ? kgrid[j] : T - 1] : NAN;
      tsc[j] = ts_test;
    }
    cols[ncols++] = t;
    cols[ncols++] = kk;
#define ADD_COL(arr, name)                                                                         \
  do {                                                                                             \
    cols[ncols++] = (arr);                                                                         \
    strcat(names, " " name);                                                                       \
  } while (0)
    if (sim != NULL) {
      ADD_COL(sim->train_mean, "train_risk");
      ADD_COL(sim->train_se, "train_risk_se");
      ADD_COL(sim->test_mean, "test_risk");
      ADD_COL(sim->test_se, "test_risk_se");
      ADD_COL(clipg, "clipped_fraction");
    }
    if (do_ou) {
      if (sim != NULL) {
        ADD_COL(oud, "ou_test_risk");
        ADD_COL(oud + g, "ou_bias");
        ADD_COL(oud + 2 * g, "ou_noise");
        ADD_COL(oud + 3 * g, "ou_test_risk_continuous");
      } else {
        ADD_COL(oud, "test_risk");
        ADD_COL(oud + g, "bias");
        ADD_COL(oud + 2 * g, "noise");
        ADD_COL(oud + 3 * g, "test_risk_continuous");
      }
    }
    ADD_COL(tsc, "theta_star_test_risk");
    if (per_draw && do_ou) {
      ADD_COL(oud_se, "ou_test_risk_se");
      ADD_COL(gap_se, "gap_se");
    }
#undef ADD_COL
    if (sim != NULL && do_ou) {
      double sup, sup_se, fz, final_gap = fabs(oud[g - 1] - sim->test_mean[g - 1]);
      sup_gaps(oud, sim->test_mean, se_of_gap, g, &sup, &sup_se);
      dpd_output_number_set(out, "sup_gap", sup);
      dpd_output_number_set(out, "sup_gap_in_se", sup_se);
      dpd_output_number_set(out, "final_gap", final_gap);
      if (per_draw) {
        dpd_output_number_set(out, "final_gap_se", se_of_gap[g - 1]);
      }
      sup_gaps(oud + g - 1, sim->test_mean + g - 1, se_of_gap + g - 1, 1, &final_gap, &fz);
      dpd_output_number_set(out, "final_gap_in_se", fz);
    }
    if ((status = dpd_output_table_add(out, "trajectory.tsv", figure, names, g, ncols, cols, err)) <
        0) {
      goto done;
    }
    if (sim != NULL) {
      steps_all = malloc(2 * T * sizeof *steps_all);
      if (steps_all == NULL) {
        status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
        goto done;
      }
      for (size_t k = 0; k < T; k++) {
        steps_all[k] = (double)k / (double)T;
        steps_all[T + k] = (double)k;
      }
      const double *ccols[3] = {steps_all, steps_all + T, sim->clip_fraction};
      if ((status = dpd_output_table_add(out, "clipping.tsv", figure, "t step clipped_fraction", T,
                                         3, ccols, err)) < 0) {
        goto done;
      }
      if (r.save_replicates > 0 && (status = add_replicates(out, &r, sim, &w, kgrid, err)) < 0) {
        goto done;
      }
    }
  }
done:
  free(kgrid);
  free(cols_buf);
  free(steps_all);
  rf_draws_free(&w);
  dpd_rf_sim_result_free(sim);
  dpd_rf_problem_free(problem);
  if (status < 0) {
    dpd_output_free(out);
    out = NULL;
  }
  *outp = out;
  return status;
}

/* The numbers each command's summary can hold, as dpdyn sweep names them
 * (dpd_model_command.numbers): the union over the command's configurations, checked by
 * tests/cli/test_sweep_plot_y.sh. Every command reports the calibration and its privacy;
 * simulate and compare the DP-GD replicates. */
#define RF_PRIVACY_NUMBERS \
    "seed eta steps tau clip_norm sigma sigma_exact sigma_moments " \
    "sigma_ratio_moments_over_exact epsilon epsilon_exact epsilon_of_sigma_moments delta " \
    "mu_gdp privacy.mu privacy.zcdp privacy.delta privacy.epsilon privacy.epsilon_gdp " \
    "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke "
#define RF_DPGD_NUMBERS \
    "theta_star_train_risk theta_star_test_risk theta_star_test_risk_se seeds data_draws " \
    "final_test_risk final_test_risk_se final_train_risk final_train_risk_se " \
    "clipped_fraction_final clipped_fraction_mean first_clip_step_min first_clip_step_median"

static const char rf_simulate_numbers[] = RF_PRIVACY_NUMBERS RF_DPGD_NUMBERS;

static const char rf_ou_numbers[] =
    RF_PRIVACY_NUMBERS
    "theta_star_train_risk theta_star_test_risk ou_rank ou_a_max ou_a_min ou_eta_a_max "
    "ou_exit_step ou_exit_tau final_test_risk final_test_risk_se final_bias final_noise "
    "final_test_risk_continuous ou_final_test_risk_se";

static const char rf_compare_numbers[] =
    RF_PRIVACY_NUMBERS RF_DPGD_NUMBERS
    " ou_rank ou_a_max ou_a_min ou_eta_a_max ou_exit_step ou_exit_tau ou_final_test_risk "
    "ou_final_test_risk_se ou_final_bias ou_final_noise ou_final_test_risk_continuous sup_gap "
    "sup_gap_in_se final_gap final_gap_se final_gap_in_se";

static const char rf_account_numbers[] = RF_PRIVACY_NUMBERS "mu_exact";

static const dpd_model_command rf_commands[] = {
    {"simulate", "DP-GD replicates: train and test risk with standard errors, clipped fraction",
     "trajectory.tsv clipping.tsv [replicates.tsv replicates_trajectory.tsv] summary.json",
     "dpdyn simulate --model=rf --p=500 --n=400 --epsilon=2 --clip=1", run_problem,
     rf_simulate_numbers},
    {"ou", "Ornstein-Uhlenbeck theory of DP-GD: test risk (bias + noise), exit from no-clip set",
     "trajectory.tsv summary.json", "dpdyn ou --model=rf --p=500 --n=400 --sigma=1", run_problem,
     rf_ou_numbers},
    {"compare", "DP-GD replicates against the OU theory: gaps in standard errors, figure",
     "trajectory.tsv clipping.tsv [replicates.tsv replicates_trajectory.tsv] summary.json "
     "rf_compare.png",
     "dpdyn compare --model=rf --p=500 --n=400 --epsilon=2 --clip=1", run_problem,
     rf_compare_numbers},
    {"account", "privacy calibration: sigma of epsilon (exact and moments), epsilon of sigma",
     "summary.json", "dpdyn account --model=rf --epsilon=2 --steps=500 --eta=0.002", run_account,
     rf_account_numbers},
    {NULL, NULL, NULL, NULL, NULL, NULL}};

static const char *const rf_small[] = {"d",       "8",     "n",    "40",    "n_test", "30",   "p",
                                       "60",      "steps", "50",   "seeds", "3",      "grid", "11",
                                       "epsilon", "2",     "clip", "1",     NULL};

const dpd_model_type dpd__model_rf = {"rf",
                                      "random-features regression, full-batch DP-GD with "
                                      "per-sample clipping (docs/math.md section 2)",
                                      rf_keys, rf_commands, rf_small};
