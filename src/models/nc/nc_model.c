/* model=nc: NoisyGD on a linear last layer under neural collapse (docs/math.md §3; notes B), as a
 * model type: keys, and the commands simulate | compare | account (diagnose, and the feature-file
 * keys features | labels | test_features | test_labels | x_bound: nc_features_model.c).
 * SPDX-License-Identifier: MIT
 *
 * simulate  NoisyGD replicates (nc.h): test misclassification rate with its standard error over
 *           `seeds` replicates that redraw the training shifts, the noise and the test points
 *           (the ETF basis, the offset signs and the class counts are the problem's, fixed by
 *           `seed`), per-class errors, the sensitivity G and the noise sigma.
 * compare   the same and the exact one-step error of notes B.5 (nc_theory.h) on the same
 *           replicates' training data and test points, the gap in standard errors, and the
 *           papers' bounds where they apply (nc_compare.c).
 * account   the privacy of the run alone.
 *
 * Privacy: T steps of the Gaussian mechanism on the summed gradient (sensitivity G, noise
 * sigma = G m with noise multiplier m) are sqrt(T)/m-GDP, i.e. T/(2 m^2)-zCDP (docs/privacy.md).
 * Budgets: epsilon + delta (exact GDP calibration), mu, zcdp (total), or sigma (the noise standard
 * deviation itself). None: non-private (sigma = 0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/nc.h"
#include "dpdyn/privacy.h"
#include "core/model_impl.h"
#include "models/nc/nc_impl.h"
#include "models/nc/nc_model_impl.h"
#include "models/nc/nc_pca_model.h"

#define NC_RUN "simulate compare"
#define NC_DATA "simulate compare diagnose"
#define NC_TRAIN "simulate compare account"        /* not diagnose */
#define NC_LAW "simulate compare diagnose account" /* the features and their law (G) */

static const dpd_key_desc nc_keys[] = {
    {"K", DPD_KEY_INT, "10", 2, 1e6, 0, NULL, NULL, "classes"},
    {"p", DPD_KEY_INT, "100", 2, 8589934592.0, 0, NULL, NULL, "feature dimension, >= K"},
    {"n", DPD_KEY_INT, "1000", 1, 1073741823.0, 0, NULL, NULL, "training samples"},
    {"n_test", DPD_KEY_INT, "1000", 1, 1073741823.0, 0, NULL, NC_RUN, "test points"},
    {"features", DPD_KEY_TEXT, "etf", 0, 0, 0, NULL, NC_LAW,
     "etf (the synthetic law of the keys below) | file:PATH (.npy or text: `label x_1 ... x_p` "
     "per row; docs/nc.md)"},
    {"labels", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NC_LAW,
     "file:PATH: the labels of the features file (then it holds the features alone)"},
    {"test_features", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NC_DATA,
     "file:PATH: test rows of file features (required by simulate and compare with them)"},
    {"test_labels", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NC_DATA,
     "file:PATH: the labels of the test_features file"},
    {"x_bound", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_LAW,
     "public bound R on |x| of file features: training rows clipped to norm R, G = c R "
     "(required unless normalize = l2 or center_l2)"},
    {"etf", DPD_KEY_TEXT, "sparse", 0, 0, 0, "sparse|dense", NC_LAW,
     "simplex ETF basis P: the first K basis vectors, or the QR of a seeded Gaussian p x K"},
    {"imbalance_ratio", DPD_KEY_REAL, "1", 1, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "size ratio of the large to the small classes (1: balanced)"},
    {"imbalance_fraction", DPD_KEY_REAL, "0", 0, 1, DPD_KEY_HI_OPEN, NULL, NULL,
     "fraction of the classes that are small (the last ones)"},
    {"shift", DPD_KEY_TEXT, "none", 0, 0, 0, "none|cube|rademacher", NC_LAW,
     "training feature shifts, i.i.d. per sample and coordinate (uniform on [-beta, beta] or "
     "+-beta)"},
    {"beta", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "size |v|_inf of the training shifts"},
    {"offset", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "|nu|_inf of one common training offset nu (0: none)"},
    {"test_shift", DPD_KEY_TEXT, "none", 0, 0, 0, "none|cube|rademacher|adversarial", NC_RUN,
     "test-time perturbation of size beta_test"},
    {"beta_test", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NC_RUN,
     "size |u|_inf of the test perturbation"},
    {"offset_at_test", DPD_KEY_TEXT, "no", 0, 0, 0, "no|yes", NC_RUN,
     "whether test points carry the training offset nu too (a bias of the feature extractor)"},
    {"normalize", DPD_KEY_TEXT, "none", 0, 0, 0, "none|center|l2|center_l2", NC_TRAIN,
     "feature normalisation (seed section 4): subtract the training mean from training and test "
     "features (center; G = 2 c X (1 + n/(n-1))), scale training features to norm 1 (l2; "
     "G = c), or both (center_l2; G = c (2 n - 1): the mean moves every unit feature)"},
    {"pca_k", DPD_KEY_INT, "0", 0, 8589934592.0, 0, NULL, NC_TRAIN,
     "PCA fix (seed section 4): train on the projection onto the top pca_k principal directions "
     "of a public sample (0 = off; 1 <= pca_k <= p)"},
    {"n_public", DPD_KEY_INT, "1000", 1, 1073741823.0, 0, NULL, NC_TRAIN,
     "size of the public unlabelled sample of the PCA fix (same law as training; part of the "
     "problem)"},
    {"pca_center", DPD_KEY_TEXT, "yes", 0, 0, 0, "no|yes", NC_TRAIN,
     "PCA of the public sample's covariance (yes) or of its uncentred second moment (no, where an "
     "offset nu is a top direction)"},
    {"loss", DPD_KEY_TEXT, "ce", 0, 0, 0, "ce|square", NC_TRAIN, "cross-entropy or square loss"},
    {"steps", DPD_KEY_INT, "1", 1, 1e9, 0, NULL, NC_TRAIN, "NoisyGD steps T (1: one-step)"},
    {"eta", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NC_RUN,
     "step size (the one-step classifier does not depend on it)"},
    {"radius", DPD_KEY_REAL, "inf", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_RUN,
     "projection of W onto the Frobenius ball of this radius after each step; inf = none"},
    {"epsilon", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_TRAIN,
     "(epsilon, delta)-DP of the whole run (exact GDP calibration)"},
    {"delta", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NC_TRAIN,
     "delta of the (epsilon, delta) guarantee [1/n]"},
    {"mu", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_TRAIN,
     "privacy of the whole run as mu-GDP"},
    {"zcdp", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NC_TRAIN,
     "privacy of the whole run as zCDP (T steps of rho_step: zcdp = T rho_step)"},
    {"sigma", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NC_TRAIN,
     "noise standard deviation on the summed gradient, given directly"},
    {"seeds", DPD_KEY_INT, "16", 1, 16777216.0, 0, NULL, NC_RUN, "replicates"},
    {"save_replicates", DPD_KEY_INT, "1", 0, 1, 0, NULL, NC_RUN,
     "per-replicate values: 1 = replicates.tsv (each replicate's test error and |W|), 0 = none"},
    {"seed", DPD_KEY_INT, "1", 0, 18446744073709551615.0, 0, NULL, NULL, "master seed"},
    {"threads", DPD_KEY_INT, "0", 0, 4096, 0, NULL, NC_RUN,
     "worker threads (0 = all cores); results do not depend on it"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

typedef struct {
  dpd_nc_problem_config pc;
  dpd_nc_sim_config sc;
  dpd_nc_pca_config pca; /* the PCA fix (pca_on: pca_k > 0) */
  int pca_on;
  double delta;       /* of the reported epsilon */
  double multiplier;  /* noise multiplier m = sigma / G (0: non-private) */
  const char *budget; /* the key that set the noise, NULL: non-private */
  int plot;
  int save_replicates; /* 1: replicates.tsv */
  dpd__progress_bridge progress;
} nc_run;

#define DPD_NC_MAX_NORM 1e150 /* bound on feature norms (and entries of feature files) */

/* The noise multiplier of the budget key (epsilon with r->delta, mu, zcdp), or sigma itself. */
static int budget_apply(const dpd_keys *keys, nc_run *r, dpd_err *err) {
  double v;
  int status;
  if (r->budget == NULL) {
    return DPD_OK;
  }
  if ((status = dpd_keys_real_get(keys, r->budget, &v, err)) < 0) {
    return status;
  }
  if (strcmp(r->budget, "epsilon") == 0) {
    status = dpd_privacy_sigma_from_eps(v, r->delta, r->sc.steps, DPD_PRIVACY_CONVERSION_GDP,
                                        &r->multiplier, err);
  } else if (strcmp(r->budget, "mu") == 0) {
    status = dpd_privacy_sigma_from_gdp(v, r->sc.steps, &r->multiplier, err);
  } else if (strcmp(r->budget, "zcdp") == 0) {
    status = dpd_privacy_sigma_from_zcdp(v, r->sc.steps, &r->multiplier, err);
  } else {
    r->sc.sigma = v; /* given directly; the multiplier follows from G */
  }
  return status;
}

/* Validates every key; the noise is set once G is known (noise_set). */
static int setup(dpd_keys *keys, const dpd_run_env *env, nc_run *r, dpd_err *err) {
  static const char *const budgets[] = {"epsilon", "mu", "zcdp", "sigma"};
  size_t choice, threads;
  int status;
  memset(r, 0, sizeof *r);
  r->pc = dpd_nc_problem_config_default();
  r->sc = dpd_nc_sim_config_default();
  if ((status = dpd_keys_size_get(keys, "K", &r->pc.K, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "p", &r->pc.p, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n", &r->pc.n, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n_test", &r->pc.n_test, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "etf", &choice, err)) < 0) {
    return status;
  }
  {
    const char *features = dpd_keys_text_get(keys, "features");
    const int etf = features == NULL || strcmp(features, "etf") == 0; /* files: any p >= 1 */
    if (etf && r->pc.p < r->pc.K) {
      return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': %zu (allowed: p >= K = %zu)",
                      r->pc.p, r->pc.K);
    }
  }
  r->pc.etf = choice == 0 ? DPD_NC_ETF_SPARSE : DPD_NC_ETF_DENSE;
  if ((status = dpd_keys_real_get(keys, "imbalance_ratio", &r->pc.imbalance_ratio, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "imbalance_fraction", &r->pc.imbalance_fraction, err)) <
          0 ||
      (status = dpd_keys_choice_get(keys, "shift", &choice, err)) < 0) {
    return status;
  }
  r->pc.shift = choice == 0   ? DPD_NC_SHIFT_NONE
                : choice == 1 ? DPD_NC_SHIFT_CUBE
                              : DPD_NC_SHIFT_RADEMACHER;
  if ((status = dpd_keys_real_get(keys, "beta", &r->pc.beta, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "offset", &r->pc.offset, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "test_shift", &choice, err)) < 0) {
    return status;
  }
  r->pc.test_shift = (dpd_nc_shift)choice; /* none, cube, rademacher, adversarial: same order */
  if ((status = dpd_keys_real_get(keys, "beta_test", &r->pc.beta_test, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "normalize", &choice, err)) < 0) {
    return status;
  }
  r->pc.normalize = (dpd_nc_normalize)choice; /* none, center, l2, center_l2: same order */
  {
    /* The shifts and the offset add up to (beta + offset) sqrt(p) to a feature's norm, and the
     * run uses squared norms (G, sigma = m G, |W x|): each is bounded so that they stay finite
     * (beta = 1e300 gave "'sigma': inf", a key the user never set). */
    static const char *const shift_keys[] = {"beta", "offset", "beta_test"};
    const double v[3] = {r->pc.beta, r->pc.offset, r->pc.beta_test};
    const double limit = DPD_NC_MAX_NORM / sqrt((double)r->pc.p);
    for (size_t k = 0; k < 3; k++) {
      if (v[k] > limit) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': %g (allowed: 0 <= %s <= 1e150 / sqrt(p) = %g "
                        "with p = %zu: feature norms, whose squares the run uses, must stay "
                        "finite)",
                        shift_keys[k], v[k], shift_keys[k], limit, r->pc.p);
      }
    }
  }
  if ((status = dpd_keys_choice_get(keys, "offset_at_test", &choice, err)) < 0) {
    return status;
  }
  r->pc.offset_at_test = choice == 1;
  if ((status = dpd__nc_pca_keys(keys, &r->pc, &r->pca, &r->pca_on, err)) < 0) {
    return status;
  }
  if ((r->pc.normalize == DPD_NC_NORMALIZE_CENTER ||
       r->pc.normalize == DPD_NC_NORMALIZE_CENTER_L2) &&
      r->pc.n < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': %s (allowed with n >= 2; n = %zu)",
                    dpd_keys_text_get(keys, "normalize"), r->pc.n);
  }
  if ((status = dpd_keys_choice_get(keys, "loss", &choice, err)) < 0) {
    return status;
  }
  r->sc.loss = choice == 0 ? DPD_NC_LOSS_CE : DPD_NC_LOSS_SQUARE;
  if ((status = dpd_keys_size_get(keys, "steps", &r->sc.steps, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "eta", &r->sc.eta, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "radius", &r->sc.radius, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "seeds", &r->sc.seeds, err)) < 0 ||
      (status = dpd__model_save_replicates_get(keys, 1, &r->save_replicates, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &r->pc.seed, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "threads", &threads, err)) < 0) {
    return status;
  }
  r->sc.seed = r->pc.seed;
  r->sc.threads = (int)threads;
  if (r->pc.shift != DPD_NC_SHIFT_NONE && !(r->pc.beta > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'beta': 0 with shift = %s (allowed: beta > 0 with a "
                    "shift; or shift = none)",
                    dpd_keys_text_get(keys, "shift"));
  }
  /* One budget at a time; the delta of the reported epsilon: the given one, else 1/n. */
  for (size_t k = 0; k < 4; k++) {
    if (!dpd_keys_given(keys, budgets[k])) {
      continue;
    }
    if (r->budget != NULL) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given together with %s (allowed: one of epsilon "
                      "(with delta), mu, zcdp or sigma)",
                      budgets[k], r->budget);
    }
    r->budget = budgets[k];
  }
  if (dpd_keys_given(keys, "delta")) {
    if ((status = dpd_keys_real_get(keys, "delta", &r->delta, err)) < 0) {
      return status;
    }
  } else {
    /* the documented default (help: delta [1/n]), also for epsilon; with file features n is
     * known once the files are read, and files_read sets delta and the noise again */
    r->delta = 1.0 / (double)r->pc.n;
    if (!(r->delta < 1.0)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'n': 1 (allowed: n >= 2 when delta is not given, since "
                      "its default 1/n must be < 1; or give delta)");
    }
  }
  if ((status = budget_apply(keys, r, err)) < 0) {
    return status;
  }
  if ((status = dpd__model_plot_get(keys, 0, &r->plot, err)) < 0) {
    return status;
  }
  /* the keys of other commands are not in effect (account has no data or replicates) */
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  r->progress = (dpd__progress_bridge){env, "replicates"};
  r->sc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  r->sc.progress_user = &r->progress;
  return DPD_OK;
}

/* sigma from the multiplier and G (or the multiplier from a given sigma). */
static void noise_set(nc_run *r, double G) {
  r->sc.clip = 0.0; /* steps > 1: per-sample gradients clipped to G */
  if (r->budget != NULL && strcmp(r->budget, "sigma") == 0) {
    r->multiplier = G > 0.0 ? r->sc.sigma / G : 0.0;
  } else {
    r->sc.sigma = isfinite(r->multiplier) ? G * r->multiplier : INFINITY;
  }
}

/* zCDP of the whole run: T steps of multiplier m are T / (2 m^2)-zCDP (inf: non-private). */
static double run_rho(const nc_run *r) {
  return r->multiplier > 0.0 ? (double)r->sc.steps / (2.0 * r->multiplier * r->multiplier)
                             : INFINITY;
}

/* The guarantees of the run: T Gaussian steps of multiplier m are sqrt(T)/m-GDP. */
static int add_privacy(dpd_output *out, const nc_run *r, double G, dpd_err *err) {
  dpd_privacy_guarantee g;
  double mu = r->multiplier > 0.0 ? sqrt((double)r->sc.steps) / r->multiplier : INFINITY;
  int status;
  dpd_output_number_set(out, "G", G);
  dpd_output_number_set(out, "sigma", r->sc.sigma);
  dpd_output_number_set(out, "noise_multiplier", r->multiplier);
  cJSON_AddStringToObject(out->summary, "budget", r->budget != NULL ? r->budget : "none");
  if ((status = dpd_privacy_guarantee_from_gdp(mu, r->delta, &g, err)) < 0) {
    return status;
  }
  dpd__output_guarantee(out, &g);
  dpd_output_number_set(out, "zcdp_per_step", g.zcdp / (double)r->sc.steps);
  return DPD_OK;
}

static int output_begin(const dpd_keys *keys, const nc_run *r, const dpd_nc_problem *problem,
                        double G, dpd_output **outp, dpd_err *err) {
  dpd_output *out;
  int status;
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "nc", r->plot, r->pc.seed, outp,
                                  err)) < 0) {
    return status;
  }
  out = *outp;
  if ((status = dpd__output_headline_set(
           out, err, "model nc, K = %zu, p = %zu, n = %zu, %zu step%s, seed %llu", r->pc.K, r->pc.p,
           r->pc.n, r->sc.steps, r->sc.steps == 1 ? "" : "s", (unsigned long long)r->pc.seed)) <
      0) {
    return status;
  }
  cJSON_AddNumberToObject(out->summary, "steps", (double)r->sc.steps);
  if (problem != NULL) {
    dpd_output_number_set(out, "x_norm_max", problem->x_norm_max);
  }
  return add_privacy(out, r, G, err);
}

/* File features (nc_features_model.c): read, and K, p, n, n_test, delta from the files. */
static int files_read(dpd_keys *keys, const dpd_run_env *env, dpd__nc_files *f, nc_run *r,
                      dpd_err *err) {
  int status = dpd__model_memory_check(keys, env, f->bytes, "features", err);
  if (status == DPD_OK && (status = dpd__nc_files_read(keys, env, f, err)) == DPD_OK) {
    r->pc.K = f->train->K;
    r->pc.p = f->train->p;
    r->pc.n = f->train->n;
    r->pc.n_test = f->test != NULL ? f->test->n : r->pc.n_test;
    if (!dpd_keys_given(keys, "delta")) {
      r->delta = 1.0 / (double)r->pc.n;
      if (!(r->delta < 1.0)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'features': 1 training row (allowed: at least 2 rows "
                        "when delta is not given, since its default 1/n must be < 1; or give "
                        "delta)");
      }
      status = budget_apply(keys, r, err); /* epsilon's noise for this delta */
    }
  }
  return status;
}

static int run_problem(dpd_keys *keys, const dpd_run_env *env, dpd_output **outp, dpd_err *err) {
  const char *command = dpd_keys_command_get(keys);
  const int compare = strcmp(command, "compare") == 0;
  nc_run r;
  dpd__nc_files files;
  dpd_nc_problem *problem = NULL, *base = NULL;
  dpd_nc_pca *pca = NULL;
  dpd_nc_sim_result *sim = NULL;
  dpd_output *out = NULL;
  double G;
  int status;
  *outp = NULL;
  memset(&files, 0, sizeof files);
  if ((status = setup(keys, env, &r, err)) < 0 ||
      (status = dpd__nc_files_setup(keys, r.pc.normalize, &files, err)) < 0 ||
      (files.from_file && (status = files_read(keys, env, &files, &r, err)) < 0) ||
      (status = dpd__model_memory_check(
           keys, env,
           files.bytes +
               8.0 * ((double)r.pc.K * (double)r.pc.p *
                          (4.0 + (r.sc.threads > 0 ? r.sc.threads : 2)) +
                      8.0 * (double)r.pc.p +
                      2.0 * (double)(r.pc.K + 1) * (double)(r.pc.n + r.pc.n_test)) +
               dpd__nc_pca_bytes(&r.pc, &r.pca, r.pca_on, (size_t)r.sc.threads),
           "p", err)) < 0 ||
      (status = dpd__model_validated(env, err)) != 0) {
    dpd__nc_files_free(&files);
    return status < 0 ? status : DPD_OK;
  }
  if (files.from_file && r.pca_on) {
    dpd__nc_files_free(&files);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': %zu (allowed: 0 with features = file; the PCA fix "
                    "draws its public sample from the ETF law)",
                    r.pca.k);
  }
  status = files.from_file
               ? dpd__nc_files_problem(&files, &r.pc, &problem, err)
               : dpd__nc_problem_build(&r.pc, &r.pca, r.pca_on, &problem, &base, &pca, err);
  if (status < 0) {
    goto done;
  }
  G = dpd_nc_sensitivity(problem, r.sc.loss);
  noise_set(&r, G);
  if ((status = output_begin(keys, &r, problem, G, &out, err)) < 0 ||
      (files.from_file && (status = dpd__nc_files_output(out, &files, err)) < 0) ||
      (status = dpd__nc_pca_output(pca, run_rho(&r), out, err)) < 0 ||
      (status = dpd_nc_sim_run(problem, &r.sc, &sim, err)) < 0) {
    goto done;
  }
  cJSON_AddNumberToObject(out->summary, "seeds", (double)r.sc.seeds);
  dpd_output_number_set(out, "test_error", sim->test_error);
  dpd_output_number_set(out, "test_error_se", sim->test_error_se);
  dpd_output_number_set(out, "w_norm", sim->w_norm);
  {
    const size_t K = r.pc.K, S = r.sc.seeds;
    double *cols = malloc((4 * K + 2 * S) * sizeof *cols);
    if (cols == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      goto done;
    }
    for (size_t k = 0; k < K; k++) {
      cols[k] = (double)k;
      cols[K + k] = (double)problem->counts[k];
      cols[2 * K + k] = (double)problem->test_counts[k];
      cols[3 * K + k] = sim->class_error_se[k];
    }
    for (size_t s = 0; s < S; s++) {
      cols[4 * K + s] = (double)s;
      cols[4 * K + S + s] = sim->test_error_replicates[s];
    }
    {
      const double *cc[5] = {cols, cols + K, cols + 2 * K, sim->class_error, cols + 3 * K};
      const double *rc[3] = {cols + 4 * K, sim->test_error_replicates, sim->w_norm_replicates};
      status = dpd_output_table_add(out, "classes.tsv", "nc",
                                    "class train_count test_count test_error test_error_se", K, 5,
                                    cc, err);
      if (status == DPD_OK && r.save_replicates > 0) {
        status = dpd_output_table_add(out, "replicates.tsv", "nc", "replicate test_error w_norm", S,
                                      3, rc, err);
      }
    }
    free(cols);
    if (status < 0) {
      goto done;
    }
  }
  if (compare && (status = dpd__nc_compare(out, problem, &r.sc, sim, err)) < 0) {
    goto done;
  }
done:
  dpd_nc_sim_result_free(sim);
  if (pca != NULL) {
    dpd_nc_pca_free(pca); /* frees the projected problem */
    dpd_nc_problem_free(base);
  } else {
    dpd_nc_problem_free(problem);
  }
  dpd__nc_files_free(&files);
  if (status < 0) {
    dpd_output_free(out);
    out = NULL;
  }
  *outp = out;
  return status;
}

/* dpdyn account --model=nc: the noise and the guarantees alone. G needs the problem's features:
 * the ETF law (built without replicates), or, with file features, the public bound x_bound and
 * the training set's size and classes (the training file is read; test files are not needed). */
static int run_account(dpd_keys *keys, const dpd_run_env *env, dpd_output **out, dpd_err *err) {
  nc_run r;
  dpd__nc_files files;
  dpd_nc_problem *problem = NULL, *base = NULL;
  dpd_nc_pca *pca = NULL;
  double G;
  int status;
  *out = NULL;
  memset(&files, 0, sizeof files);
  if ((status = setup(keys, env, &r, err)) < 0 ||
      (status = dpd__nc_files_setup(keys, r.pc.normalize, &files, err)) < 0 ||
      (files.from_file && (status = files_read(keys, env, &files, &r, err)) < 0) ||
      (status = dpd__model_validated(env, err)) != 0) {
    dpd__nc_files_free(&files);
    return status < 0 ? status : DPD_OK;
  }
  if (files.from_file) {
    if (r.pca_on) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'pca_k': %zu (allowed: 0 with features = file; the PCA "
                        "fix draws its public sample from the ETF law)",
                        r.pca.k);
    } else {
      G = dpd_nc_sensitivity_bound(r.pc.K, r.pc.n, files.x_bound, files.x_bound, r.pc.normalize,
                                   r.sc.loss);
      noise_set(&r, G);
      if ((status = output_begin(keys, &r, NULL, G, out, err)) == DPD_OK) {
        status = dpd__nc_files_output(*out, &files, err);
      }
    }
  } else if ((status = dpd__nc_problem_build(&r.pc, &r.pca, r.pca_on, &problem, &base, &pca,
                                             err)) == DPD_OK) {
    G = dpd_nc_sensitivity(problem, r.sc.loss);
    noise_set(&r, G);
    if ((status = output_begin(keys, &r, problem, G, out, err)) == DPD_OK) {
      status = dpd__nc_pca_output(pca, run_rho(&r), *out, err);
    }
  }
  if (pca != NULL) {
    dpd_nc_pca_free(pca);
    dpd_nc_problem_free(base);
  } else {
    dpd_nc_problem_free(problem);
  }
  dpd__nc_files_free(&files);
  if (status < 0) {
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}

/* The numbers each command's summary can hold, as dpdyn sweep names them
 * (dpd_model_command.numbers): the union over the command's configurations, checked by
 * tests/cli/test_sweep_plot_y.sh. */
static const char nc_simulate_numbers[] =
    "seed steps x_norm_max G sigma noise_multiplier privacy.mu privacy.zcdp privacy.delta "
    "privacy.epsilon privacy.epsilon_gdp privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke "
    "zcdp_per_step seeds test_error test_error_se w_norm pca_k n_public pca_trace pca_x_bound "
    "pca_etf_residual pca_etf_energy pca_beta0 features.n features.p features.K features.n_test "
    "features.x_bound features.clipped_fraction samples_thm41 samples_thm41_gamma";

static const char nc_compare_numbers[] =
    "seed steps x_norm_max G sigma noise_multiplier privacy.mu privacy.zcdp privacy.delta "
    "privacy.epsilon privacy.epsilon_gdp privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke "
    "zcdp_per_step seeds test_error test_error_se w_norm theory_test_error theory_test_error_se "
    "gap gap_se gap_in_se bound_d1_printed bound_d1_union bound_thm34 pca_k n_public pca_trace "
    "pca_x_bound pca_etf_residual pca_etf_energy pca_beta0 features.n features.p features.K "
    "features.n_test features.x_bound features.clipped_fraction bound_thm34_t "
    "bound_thm34_printed_eta samples_thm41 samples_thm41_gamma";

static const char nc_diagnose_numbers[] =
    "seed n p K cos_etf cos_mean cos_min cos_max cos_max_dev beta_quantiles.min "
    "beta_quantiles.q10 beta_quantiles.q25 beta_quantiles.median beta_quantiles.q75 "
    "beta_quantiles.q90 beta_quantiles.q99 beta_quantiles.max beta_mean x_norm_max x_norm_mean "
    "G_estimated within_trace between_trace trace_ratio nc1 between_rank features.n features.p "
    "features.K features.n_test features.x_bound features.clipped_fraction test.n test.p test.K "
    "test.cos_etf test.cos_mean test.cos_min test.cos_max test.cos_max_dev test.beta_mean "
    "test.x_norm_max test.x_norm_mean test.G_estimated test.within_trace test.between_trace "
    "test.trace_ratio test.nc1 test.between_rank";

static const char nc_account_numbers[] =
    "seed steps x_norm_max G sigma noise_multiplier privacy.mu privacy.zcdp privacy.delta "
    "privacy.epsilon privacy.epsilon_gdp privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke "
    "zcdp_per_step pca_k n_public pca_trace pca_x_bound pca_etf_residual pca_etf_energy pca_beta0 "
    "features.n features.p features.K features.x_bound features.clipped_fraction samples_thm41 "
    "samples_thm41_gamma";

static const dpd_model_command nc_commands[] = {
    {"simulate", "NoisyGD replicates: test error with standard errors, per class and replicate",
     "classes.tsv replicates.tsv summary.json",
     "dpdyn simulate --model=nc --K=10 --p=1000 --n=1000 --epsilon=1 --delta=1e-4", run_problem,
     nc_simulate_numbers},
    {"compare", "NoisyGD replicates against the exact one-step error and the papers' bounds",
     "classes.tsv replicates.tsv summary.json",
     "dpdyn compare --model=nc --K=10 --p=1000 --n=100 --sigma=10", run_problem,
     nc_compare_numbers},
    {"diagnose", "collapse diagnostics of the features (file or ETF law): means, cosines, beta, G",
     "classes.tsv cosines.tsv beta_quantiles.tsv summary.json",
     "dpdyn diagnose --model=nc --features=file:feats.npy --labels=file:labels.npy",
     dpd__nc_diagnose, nc_diagnose_numbers},
    {"account", "the noise of the run and every guarantee it satisfies", "summary.json",
     "dpdyn account --model=nc --K=10 --p=1000 --epsilon=1 --delta=1e-4", run_account,
     nc_account_numbers},
    {NULL, NULL, NULL, NULL, NULL, NULL}};

static const char *const nc_small[] = {"K",  "3",     "p", "12",   "n", "30", "n_test",
                                       "40", "seeds", "3", "zcdp", "2", NULL};

const dpd_model_type dpd__model_nc = {
    "nc", "NoisyGD on a last layer under neural collapse (docs/math.md section 3)", nc_keys,
    nc_commands, nc_small};
