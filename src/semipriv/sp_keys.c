/* model=semipriv: its keys, and those of the DP-SGD trainer and the splits of file features read
 * into the run's configuration (sp_files_impl.h; docs/semipriv.md).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "semipriv/sp_files_impl.h"

#define SP_RUN "simulate compare"

const dpd_key_desc dpd__sp_keys[] = {
    {"features", DPD_KEY_TEXT, "law", 0, 0, 0, NULL, NULL,
     "law (the synthetic large-margin low-rank law of the keys d .. trunc) | file:PATH (.npy or "
     "text: `label x_1 ... x_p` per row, or x_1 .. x_p with labels; docs/semipriv.md)"},
    {"labels", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL,
     "file:PATH: the labels of the features file (then it holds the features alone)"},
    {"public_features", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, SP_RUN,
     "file:PATH: the public unlabelled rows (all columns are features); required for k < d"},
    {"test_features", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, SP_RUN,
     "file:PATH: the test rows of file features (required by simulate and compare with them)"},
    {"test_labels", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, SP_RUN,
     "file:PATH: the labels of the test_features file"},
    {"positive_class", DPD_KEY_REAL, NULL, -9007199254740992.0, 9007199254740992.0, 0, NULL, NULL,
     "file labels: this integer label is +1, every other -1 (one-vs-rest); unset: labels must be "
     "+-1"},
    {"d", DPD_KEY_INT, "200", 2, 46340, 0, NULL, NULL,
     "dimension (file features: the files' width)"},
    {"k_true", DPD_KEY_INT, "5", 1, 64, 0, NULL, NULL, "rank K of the law's signal, < d"},
    {"a", DPD_KEY_REAL, "0.95", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "w* = a q_1 + sqrt(1 - a^2) q_{K+1}: 1 - a is the population xi_K"},
    {"c", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "z_1 = y (c + s |g|): the class offset"},
    {"s", DPD_KEY_REAL, "0.3", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "z_1 = y (c + s |g|): the spread along q_1"},
    {"tau", DPD_KEY_REAL, "0.3", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "z_{K+1} = tau U(-1, 1); tau < a c / sqrt(1 - a^2) (else no margin)"},
    {"lambda", DPD_KEY_TEXT, "0.6,0.5,0.4,0.3", 0, 0, 0, NULL, NULL,
     "variances of z_2 .. z_K, a comma list of k_true - 1 numbers > 0 (k_true = 1: none)"},
    {"nu", DPD_KEY_REAL, "0.02", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "z_j = nu g_j beyond K + 1: the noise coordinates"},
    {"trunc", DPD_KEY_REAL, "3", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "the law's Gaussians are truncated to |g| <= trunc"},
    {"k", DPD_KEY_TEXT, "5", 0, 0, 0, NULL, NULL,
     "PCA dimension, 1 <= k <= d; k = d or none: no PCA (the baseline)"},
    {"n", DPD_KEY_INT, "500", 1, 92681, 0, NULL, NULL,
     "labelled (private) points (file features: the file's rows)"},
    {"n_public", DPD_KEY_INT, "5000", 1, 1073741823.0, 0, NULL, SP_RUN,
     "public unlabelled points for the PCA, >= k + 1 (file features: the file's rows)"},
    {"n_test", DPD_KEY_INT, "1000", 1, 1073741823.0, 0, NULL, SP_RUN,
     "test points (file features: the file's rows)"},
    {"center", DPD_KEY_TEXT, "yes", 0, 0, 0, "no|yes", SP_RUN,
     "PCA of the centred public covariance (yes, as in the proof) or of sum x x^T / n_public"},
    {"epsilon", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NULL,
     "(epsilon, delta)-DP of Noisy-SGD (Bassily et al.'s sigma); inf = non-private, same steps"},
    {"delta", DPD_KEY_REAL, "1e-5", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "delta of the guarantee"},
    {"calibration", DPD_KEY_TEXT, "bst", 0, 0, 0, "bst|pld", NULL, "sigma: bst (the paper) | pld"},
    {"steps", DPD_KEY_INT, NULL, 1, 8589934591.0, 0, NULL, NULL,
     "Noisy-SGD steps T [n^2]; at most n^2 with a finite epsilon (the calibration's T); "
     "trainer = dpsgd: T < 2^29, default ceil(epochs / q)"},
    {"zeta", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "margin scale of the hinge loss max(0, 1 - y <w, x> / zeta), L = 1/zeta [law: gamma0 (1 - "
     "xi0 - 0.1 gamma0); required with file features]"},
    {"beta", DPD_KEY_REAL, "0.05", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, "compare",
     "failure probability of the Zwald-Blanchard bound and of Theorem 1's n_public"},
    {"alpha", DPD_KEY_REAL, "0.1", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, "compare",
     "target error of the theory's sample sizes n^L(alpha)"},
    {"seeds", DPD_KEY_INT, "8", 1, 16777216.0, 0, NULL, SP_RUN, "replicates"},
    {"save_replicates", DPD_KEY_INT, "1", 0, 1, 0, NULL, SP_RUN,
     "per-replicate values: 1 = replicates.tsv (each replicate's metrics), 0 = none"},
    {"seed", DPD_KEY_INT, "1", 0, 18446744073709551615.0, 0, NULL, NULL,
     "master seed: the law's Q and w*, and replicate r's stream (seed, r)"},
    {"threads", DPD_KEY_INT, "0", 0, 4096, 0, NULL, SP_RUN,
     "worker threads (0 = all cores); results do not depend on it"},
    {"trainer", DPD_KEY_TEXT, NULL, 0, 0, 0, "bst|dpsgd", NULL,
     "the private trainer (default bst): bst (Noisy-SGD of Bassily et al., the theorem's) | dpsgd "
     "(DP-SGD: "
     "minibatches, clipping, K classes; docs/semipriv.md)"},
    {"loss", DPD_KEY_TEXT, NULL, 0, 0, 0, "ce|hinge|logistic", NULL,
     "dpsgd: ce (softmax cross-entropy over K classes) (default ce) | hinge | logistic (binary)"},
    {"sampling", DPD_KEY_TEXT, NULL, 0, 0, 0, "poisson|fixed", NULL,
     "dpsgd: poisson (rate q; add/remove neighbours) (default poisson) | fixed (batch rows; "
     "replace-one)"},
    {"q", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN, NULL, NULL,
     "dpsgd: Poisson sampling rate (default 0.01); fixed: batch = round(q n) unless batch is "
     "given"},
    {"batch", DPD_KEY_INT, NULL, 1, 1073741823.0, 0, NULL, NULL,
     "dpsgd, sampling = fixed: the batch size, 1 .. n (default round(q n))"},
    {"epochs", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "dpsgd: T = ceil(epochs / q) steps (default 10); steps given overrides"},
    {"eta", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "dpsgd: the learning rate (default 1)"},
    {"lr_schedule", DPD_KEY_TEXT, NULL, 0, 0, 0, "const|cosine|step|sqrt", NULL,
     "dpsgd: lr_s = eta family(s / T) (default const); cosine to 0; step: 2 drops by 0.1"},
    {"clip", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "dpsgd: the per-sample gradient clipping norm G (default 1)"},
    {"noise_multiplier", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_HI_OPEN, NULL, NULL,
     "dpsgd: z given (the accountant reports its epsilon) (default: calibrated to epsilon, delta)"},
    {"public_fraction", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "file features: the public set is a random round(fraction rows) of the features file's "
     "rows, redrawn per replicate (instead of public_features)"},
    {"private_fraction", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN, NULL, NULL,
     "file features: train on a random subset of this fraction of the private rows, redrawn per "
     "replicate (default 1)"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

/* The keys of trainer = dpsgd, in the order of the key table. */
static const char *const dpsgd_only[] = {"loss", "sampling",    "q",    "batch",           "epochs",
                                         "eta",  "lr_schedule", "clip", "noise_multiplier"};
#define DPSGD_ONLY (sizeof dpsgd_only / sizeof *dpsgd_only)

int dpd__sp_trainer_is_dpsgd(const dpd_keys *keys) {
  const char *t = dpd_keys_text_get(keys, "trainer");
  return t != NULL && strcmp(t, "dpsgd") == 0;
}

/* public_fraction and private_fraction (file features only). */
static int fraction_keys(const dpd_keys *keys, dpd__sp_files *f, dpd_err *err) {
  static const char *const names[2] = {"public_fraction", "private_fraction"};
  double *vals[2] = {&f->public_fraction, &f->private_fraction};
  int status = DPD_OK;
  f->public_fraction = 0.0;
  f->private_fraction = 1.0;
  for (size_t i = 0; status == DPD_OK && i < 2; i++) {
    if (!dpd_keys_given(keys, names[i])) {
      continue;
    }
    if (!f->from_file) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given with features = law (allowed: only with "
                      "features = file:PATH; the law has n, n_public)",
                      names[i]);
    }
    status = dpd_keys_real_get(keys, names[i], vals[i], err);
  }
  if (status == DPD_OK && f->public_fraction > 0.0 && dpd_keys_given(keys, "public_features")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'public_fraction': %g given with public_features (allowed: "
                    "one of them: the public set is a split of the features file or a file)",
                    f->public_fraction);
  }
  return status;
}

/* loss, sampling, q, batch, epochs, steps, eta, clip into c; lr_schedule into f->schedule. */
static int dpsgd_config_keys(const dpd_keys *keys, dpd_semipriv_run_config *rc, dpd__sp_files *f,
                             dpd_dpsgd_config *c, dpd_err *err) {
  static const dpd_schedule_kind kinds[4] = {DPD_SCHEDULE_CONST, DPD_SCHEDULE_COSINE,
                                             DPD_SCHEDULE_STEP, DPD_SCHEDULE_SQRT};
  size_t loss = 0, sampling = 0, sched = 0;
  int status;
  if ((dpd_keys_given(keys, "loss") &&
       (status = dpd_keys_choice_get(keys, "loss", &loss, err)) < 0) ||
      (dpd_keys_given(keys, "sampling") &&
       (status = dpd_keys_choice_get(keys, "sampling", &sampling, err)) < 0) ||
      (dpd_keys_given(keys, "lr_schedule") &&
       (status = dpd_keys_choice_get(keys, "lr_schedule", &sched, err)) < 0) ||
      (dpd_keys_given(keys, "q") && (status = dpd_keys_real_get(keys, "q", &c->q, err)) < 0) ||
      (dpd_keys_given(keys, "batch") &&
       (status = dpd_keys_size_get(keys, "batch", &c->batch, err)) < 0) ||
      (dpd_keys_given(keys, "epochs") &&
       (status = dpd_keys_real_get(keys, "epochs", &c->epochs, err)) < 0) ||
      (dpd_keys_given(keys, "eta") && (status = dpd_keys_real_get(keys, "eta", &c->lr, err)) < 0) ||
      (dpd_keys_given(keys, "clip") &&
       (status = dpd_keys_real_get(keys, "clip", &c->clip, err)) < 0)) {
    return status;
  }
  c->loss = loss == 0 ? DPD_DPSGD_SOFTMAX : loss == 1 ? DPD_DPSGD_HINGE : DPD_DPSGD_LOGISTIC;
  c->sampling = sampling == 0 ? DPD_DPSGD_POISSON : DPD_DPSGD_FIXED;
  c->steps = rc->steps;
  if (c->sampling == DPD_DPSGD_POISSON && dpd_keys_given(keys, "batch")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'batch': %zu with sampling = poisson (allowed: only with "
                    "sampling = fixed; Poisson batches have the rate q)",
                    c->batch);
  }
  if (sched != 0) { /* lr_s = eta family(s / T), eta0 = 1 */
    dpd_schedule_config sc = dpd_schedule_config_default();
    sc.kind = kinds[sched];
    sc.eta0 = 1.0;
    sc.eta_min = 0.0;
    sc.drops = 2;
    sc.factor = 0.1;
    if ((status = dpd_schedule_create(&sc, &f->schedule, err)) < 0) {
      return status;
    }
    c->schedule = f->schedule;
  }
  return DPD_OK;
}

int dpd__sp_trainer_keys(const dpd_keys *keys, dpd_semipriv_run_config *rc, dpd__sp_files *f,
                         dpd_err *err) {
  size_t trainer = 0;
  int status = fraction_keys(keys, f, err);
  if (status < 0 || (dpd_keys_given(keys, "trainer") &&
                     (status = dpd_keys_choice_get(keys, "trainer", &trainer, err)) < 0)) {
    return status;
  }
  if (!dpd__sp_trainer_is_dpsgd(keys)) {
    for (size_t i = 0; i < DPSGD_ONLY; i++) {
      if (dpd_keys_given(keys, dpsgd_only[i])) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': given with trainer = bst (allowed: only with "
                        "trainer = dpsgd, the DP-SGD trainer: these keys need trainer=dpsgd)",
                        dpsgd_only[i]);
      }
    }
    return DPD_OK;
  }
  static const char *const bst_only[2] = {"zeta", "calibration"};
  for (size_t i = 0; i < 2; i++) {
    if (dpd_keys_given(keys, bst_only[i])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': given with trainer = dpsgd (allowed: only with "
                      "trainer = bst, Noisy-SGD's %s)",
                      bst_only[i], i == 0 ? "hinge margin scale" : "noise calibration");
    }
  }
  rc->trainer = DPD_SEMIPRIV_TRAINER_DPSGD;
  rc->dpsgd = dpd_dpsgd_config_default();
  if ((status = dpsgd_config_keys(keys, rc, f, &rc->dpsgd, err)) < 0) {
    return status;
  }
  rc->noise_multiplier = NAN;
  if (dpd_keys_given(keys, "noise_multiplier")) {
    if (dpd_keys_given(keys, "epsilon") && isfinite(rc->epsilon)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'noise_multiplier': given with epsilon = %g (allowed: "
                      "one of them: noise_multiplier z, whose epsilon the accountant reports, or "
                      "epsilon, which calibrates z; choose one)",
                      rc->epsilon);
    }
    if ((status = dpd_keys_real_get(keys, "noise_multiplier", &rc->noise_multiplier, err)) < 0) {
      return status;
    }
  }
  f->multiclass = f->from_file && !f->has_positive;
  return DPD_OK;
}

size_t dpd__sp_steps_default(const dpd_semipriv_run_config *rc) {
  if (rc->trainer != DPD_SEMIPRIV_TRAINER_DPSGD) {
    return rc->n * rc->n;
  }
  dpd_dpsgd_config c = rc->dpsgd;
  if (c.sampling == DPD_DPSGD_FIXED && c.batch == 0) {
    const long long b = llround(c.q * (double)rc->n);
    c.batch = b < 1 ? 1 : (size_t)b;
  }
  return dpd_dpsgd_steps(&c, rc->n);
}
