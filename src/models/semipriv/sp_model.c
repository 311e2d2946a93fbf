/* model=semipriv: semi-private learning (docs/math.md §4; notes C), as a model type: keys, and the
 * commands simulate | compare | account (file features: sp_files.c).
 * SPDX-License-Identifier: MIT
 *
 * References: Pinto, Hu, Yang & Sanyal (seed 003; arXiv:2306.03962), Algorithm 1, Theorem 1,
 * Proposition 4; Bassily, Smith & Thakurta (arXiv:1405.7085), Noisy-SGD and its (epsilon, delta)
 * calibration; Zwald & Blanchard, NIPS 2005 (subspace bound). The library: semipriv.h.
 *
 * simulate  Algorithm 1 over `seeds` replicates: test accuracy and hinge loss with standard
 *           errors, xi_k of the estimated subspace, the eigengap, the minimum margin, sigma.
 *           With the data law (features = law) a replicate redraws the labelled, public and test
 *           samples and the noise (Q and w* are fixed by `seed`); with files only the noise.
 * compare   the same, and the theory beside it: Theorem 1's and Proposition 4's error bounds and
 *           sample sizes, and the Zwald-Blanchard bound against the measured |A A^T - A_hat
 * A_hat^T|. account   sigma and the guarantee alone.
 *
 * Privacy. Noisy-SGD with sigma^2 = 32 L^2 n^2 log(n/delta) log(1/delta) / epsilon^2 over at most
 * n^2 steps on rows with |x| <= 1 is (epsilon, delta)-DP by Bassily et al.'s theorem (sampling
 * with replacement amplifies each Gaussian step; advanced composition over the steps). That is the
 * guarantee reported. It is not a Gaussian-mechanism composition without sampling, so no zCDP or
 * GDP figure is derived from it; more than n^2 steps are not covered and are refused. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "core/text_impl.h"
#include "models/semipriv/sp_model_impl.h"

#define SP_RUN "simulate compare"
#define SP_MAX_LAMBDA 64 /* entries of the lambda list (k_true - 1) */

static const dpd_key_desc sp_keys[] = {
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
    {"steps", DPD_KEY_INT, NULL, 1, 8589934591.0, 0, NULL, NULL,
     "Noisy-SGD steps T [n^2]; at most n^2 with a finite epsilon (the calibration's T)"},
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
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

typedef struct {
  dpd_semipriv_gen_config gc;
  double lambda[SP_MAX_LAMBDA];
  dpd_semipriv_run_config rc;
  dpd__sp_files files;
  int k_none;         /* k = none */
  size_t steps_given; /* 0: n^2 */
  double alpha;       /* compare */
  int plot;
  int save_replicates; /* 1: replicates.tsv */
  dpd__progress_bridge progress;
} sp_run;

/* The comma list of lambda: k_true - 1 finite numbers > 0 (the decimal grammar of keys). */
static int lambda_parse(const dpd_keys *keys, sp_run *r, dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, "lambda");
  const size_t want = r->gc.k_true - 1;
  size_t count = 0;
  const char *p = text != NULL ? text : "";
  while (*p == ' ') {
    p++;
  }
  if (*p != '\0' && strcmp(p, "none") != 0) {
    for (;;) {
      const char *end = strchr(p, ',');
      char tok[64];
      size_t len;
      if (end == NULL) {
        end = p + strlen(p);
      }
      len = (size_t)(end - p);
      if (len >= sizeof tok) {
        len = sizeof tok - 1;
      }
      memcpy(tok, p, len);
      tok[len] = '\0';
      char trimmed[64];
      double v;
      if (dpd__trim_copy(trimmed, sizeof trimmed, tok) < 0 ||
          !dpd__decimal_span(trimmed, trimmed + strlen(trimmed)) ||
          !((v = strtod(trimmed, NULL)) > 0.0) || !isfinite(v)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'lambda': '%s' (allowed: a comma list of k_true - 1 = "
                        "%zu finite numbers > 0; entry %zu is '%s')",
                        text, want, count + 1, trimmed);
      }
      if (count >= SP_MAX_LAMBDA) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'lambda': more than %d entries (allowed: k_true - 1 = "
                        "%zu)",
                        SP_MAX_LAMBDA, want);
      }
      r->lambda[count++] = v;
      if (*end == '\0') {
        break;
      }
      p = end + 1;
    }
  }
  if (count != want) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'lambda': '%s' has %zu entr%s (allowed: k_true - 1 = %zu "
                    "finite numbers > 0, comma-separated%s)",
                    text, count, count == 1 ? "y" : "ies", want,
                    want == 0 ? "; none for k_true = 1" : "");
  }
  r->gc.lambda = r->lambda;
  r->gc.n_lambda = count;
  return DPD_OK;
}

/* k: an integer in 1 .. d, or none (= d). */
static int k_parse(const dpd_keys *keys, sp_run *r, size_t d, dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, "k");
  unsigned long long v;
  if (text != NULL && strcmp(text, "none") == 0) {
    r->k_none = 1;
    r->rc.k = d;
    return DPD_OK;
  }
  if (text == NULL || dpd__parse_u64(text, &v) < 0 || v < 1 || v > (unsigned long long)d) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'k': '%s' (allowed: an integer 1 .. d = %zu, or none)",
                    text != NULL ? text : "", d);
  }
  r->rc.k = (size_t)v;
  return DPD_OK;
}

#define SP_MAX_ZMAX 1e150 /* the law's bound z_max: its square and the margins stay finite */

/* The law's bound z_max = sqrt((c + trunc s)^2 + trunc^2 sum(lambda) + tau^2 + trunc^2 nu^2 m),
 * m = d - k_true - 1, must stay below 1e150 (c = 1e300 made it inf, the margin 0, and the error
 * named 'zeta', a key the user never set). Names the key of the largest term, with the largest
 * value it may take with the other keys as given. */
static int zmax_check(const dpd_semipriv_gen_config *g, dpd_err *err) {
  const double T = g->trunc, m = (double)(g->d - g->k_true - 1);
  double lam_sum = 0.0, ta, tb, tc, td, top, limit;
  const char *key;
  for (size_t j = 0; j < g->n_lambda; j++) {
    lam_sum += g->lambda[j];
  }
  ta = g->c + T * g->s;
  tb = T * sqrt(lam_sum);
  tc = g->tau;
  td = T * g->nu * sqrt(m);
  if (sqrt(ta * ta + tb * tb + tc * tc + td * td) < SP_MAX_ZMAX) {
    return DPD_OK;
  }
  top = fmax(fmax(ta, tb), fmax(tc, td));
  if (top == ta && g->c >= T * g->s) {
    key = "c";
    limit = SP_MAX_ZMAX - T * g->s;
  } else if (top == ta && g->s >= T) {
    key = "s";
    limit = (SP_MAX_ZMAX - g->c) / T;
  } else if (top == tb && sqrt(lam_sum) >= T) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'lambda': sum %g (allowed: sum(lambda) <= (1e150 / "
                    "trunc)^2 = %g: the law's bound z_max must stay below 1e150)",
                    lam_sum, (SP_MAX_ZMAX / T) * (SP_MAX_ZMAX / T));
  } else if (top == tc) {
    key = "tau";
    limit = SP_MAX_ZMAX;
  } else if (top == td && g->nu * sqrt(m) >= T) {
    key = "nu";
    limit = SP_MAX_ZMAX / (T * sqrt(m));
  } else {
    key = "trunc";
    limit = SP_MAX_ZMAX / sqrt(g->s * g->s + lam_sum + g->nu * g->nu * m);
  }
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for '%s': %g (allowed: %s <= %g with the other keys as given: "
                  "the law's bound z_max = sqrt((c + trunc s)^2 + trunc^2 sum(lambda) + tau^2 + "
                  "trunc^2 nu^2 (d - k_true - 1)) must stay below 1e150)",
                  key,
                  key[0] == 'c'   ? g->c
                  : key[0] == 's' ? g->s
                  : key[1] == 'a' ? g->tau
                  : key[0] == 'n' ? g->nu
                                  : T,
                  key, limit);
}

/* Every key but those of the files' sizes; d and k are re-checked once the files are read. */
static int setup(dpd_keys *keys, const dpd_run_env *env, sp_run *r, dpd_err *err) {
  size_t choice, threads;
  int status;
  memset(r, 0, sizeof *r);
  r->gc = dpd_semipriv_gen_config_default();
  r->rc = dpd_semipriv_run_config_default();
  if ((status = dpd__sp_files_setup(keys, &r->files, err)) < 0) {
    return status;
  }
  const int law = !r->files.from_file;
  if (law) {
    if ((status = dpd_keys_size_get(keys, "d", &r->gc.d, err)) < 0 ||
        (status = dpd_keys_size_get(keys, "k_true", &r->gc.k_true, err)) < 0 ||
        (status = dpd_keys_real_get(keys, "a", &r->gc.a, err)) < 0 ||
        (status = dpd_keys_real_get(keys, "c", &r->gc.c, err)) < 0 ||
        (status = dpd_keys_real_get(keys, "s", &r->gc.s, err)) < 0 ||
        (status = dpd_keys_real_get(keys, "tau", &r->gc.tau, err)) < 0 ||
        (status = dpd_keys_real_get(keys, "nu", &r->gc.nu, err)) < 0 ||
        (status = dpd_keys_real_get(keys, "trunc", &r->gc.trunc, err)) < 0 ||
        (status = lambda_parse(keys, r, err)) < 0) {
      return status;
    }
    if (r->gc.d < r->gc.k_true + 1) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'd': %zu (allowed: k_true + 1 = %zu .. 46340)", r->gc.d,
                      r->gc.k_true + 1);
    }
    if (!(r->gc.a * r->gc.c - sqrt(1.0 - r->gc.a * r->gc.a) * r->gc.tau > 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'tau': %g (allowed: tau < a c / sqrt(1 - a^2) = %g, "
                      "else the law has no margin)",
                      r->gc.tau, r->gc.a * r->gc.c / sqrt(1.0 - r->gc.a * r->gc.a));
    }
    if ((status = zmax_check(&r->gc, err)) < 0) {
      return status;
    }
    if ((status = k_parse(keys, r, r->gc.d, err)) < 0 ||
        (status = dpd_keys_size_get(keys, "n", &r->rc.n, err)) < 0) {
      return status;
    }
    if (dpd_keys_applies(keys, "n_public") &&
        ((status = dpd_keys_size_get(keys, "n_public", &r->rc.n_public, err)) < 0 ||
         (status = dpd_keys_size_get(keys, "n_test", &r->rc.n_test, err)) < 0)) {
      return status;
    }
  } else {
    /* d unknown until the files are read: k's syntax now, its range later */
    const char *text = dpd_keys_text_get(keys, "k");
    unsigned long long v;
    if (text == NULL ||
        (strcmp(text, "none") != 0 && (dpd__parse_u64(text, &v) < 0 || v < 1 || v > 46340))) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'k': '%s' (allowed: an integer 1 .. d, or none)",
                      text != NULL ? text : "");
    }
  }
  if ((status = dpd_keys_real_get(keys, "epsilon", &r->rc.epsilon, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "delta", &r->rc.delta, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &r->rc.seed, err)) < 0) {
    return status;
  }
  r->gc.seed = r->rc.seed;
  if (dpd_keys_given(keys, "zeta") &&
      (status = dpd_keys_real_get(keys, "zeta", &r->rc.zeta, err)) < 0) {
    return status;
  }
  if (dpd_keys_given(keys, "steps") &&
      (status = dpd_keys_size_get(keys, "steps", &r->steps_given, err)) < 0) {
    return status;
  }
  if (dpd_keys_applies(keys, "seeds")) {
    if ((status = dpd_keys_choice_get(keys, "center", &choice, err)) < 0 ||
        (status = dpd_keys_size_get(keys, "seeds", &r->rc.seeds, err)) < 0 ||
        (status = dpd__model_save_replicates_get(keys, 1, &r->save_replicates, err)) < 0 ||
        (status = dpd_keys_size_get(keys, "threads", &threads, err)) < 0) {
      return status;
    }
    r->rc.center = choice == 1;
    r->rc.threads = (int)threads;
  }
  if (dpd_keys_applies(keys, "beta") &&
      ((status = dpd_keys_real_get(keys, "beta", &r->rc.beta, err)) < 0 ||
       (status = dpd_keys_real_get(keys, "alpha", &r->alpha, err)) < 0)) {
    return status;
  }
  if ((status = dpd__model_plot_get(keys, 0, &r->plot, err)) < 0) {
    return status;
  }
  if (!law) {
    static const char *const unset[] = {"k_true", "a", "c", "s", "tau", "lambda", "nu", "trunc"};
    for (size_t k = 0; k < sizeof unset / sizeof *unset; k++) {
      dpd_keys_unset(keys, unset[k]);
    }
  }
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  r->progress = (dpd__progress_bridge){env, "replicates"};
  r->rc.progress = env->progress != NULL ? dpd__model_progress : NULL;
  r->rc.progress_user = &r->progress;
  return DPD_OK;
}

/* The checks that need n, d, k (after the files are read, when they are files). */
static int sizes_check(dpd_keys *keys, sp_run *r, int run, dpd_err *err) {
  const size_t d = r->files.from_file ? r->files.train.p : r->gc.d;
  const size_t n = r->files.from_file ? r->files.train.n : r->rc.n;
  int status;
  r->rc.n = n;
  if (r->files.from_file) {
    if ((status = k_parse(keys, r, d, err)) < 0) {
      return status;
    }
    if (r->files.has_public) {
      r->rc.n_public = r->files.pub.n;
    }
    if (r->files.has_test) {
      r->rc.n_test = r->files.test.n;
    }
  }
  const size_t n2 = n * n;
  if (r->steps_given == 0 && n2 >= ((size_t)1 << 33)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: n^2 < 2^33 when steps is not given; or "
                    "give steps)",
                    n);
  }
  if (r->steps_given > n2 && isfinite(r->rc.epsilon)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'steps': %zu (allowed: 1 .. n^2 = %zu with a finite "
                    "epsilon: Bassily et al.'s sigma covers n^2 steps; or epsilon = inf)",
                    r->steps_given, n2);
  }
  r->rc.steps = r->steps_given;
  if (r->steps_given == 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", n2);
    if ((status = dpd_keys_effective_set(keys, "steps", buf, err)) < 0) {
      return status;
    }
  }
  if (run && r->rc.k < d) {
    if (r->files.from_file && !r->files.has_public) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "missing value for 'public_features' (allowed: file:PATH; required with "
                      "features = file:PATH and k = %zu < d = %zu; or k = none)",
                      r->rc.k, d);
    }
    if (r->rc.n_public < r->rc.k + 1) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'n_public': %zu (allowed: >= k + 1 = %zu public points "
                      "for the top-k PCA)",
                      r->rc.n_public, r->rc.k + 1);
    }
  }
  return DPD_OK;
}

/* Memory of a law run: Q and the generator's arrays, and per thread the library's workspace
 * (about d^2 + (512 + 3 k + 45) d + n (k + 1) doubles, semipriv.h). */
static double law_bytes(const sp_run *r, int run) {
  const double d = (double)r->gc.d, k = (double)r->rc.k, n = (double)r->rc.n;
  double t = 1.0;
  if (run) {
    const int max = r->rc.threads > 0 ? r->rc.threads : omp_get_max_threads();
    t = (double)((size_t)max < r->rc.seeds ? (size_t)max : r->rc.seeds);
  }
  double bytes = 8.0 * (2.0 * d * d + 8.0 * d);
  if (run) {
    bytes += 8.0 * t * (d * d + (512.0 + 3.0 * k + 45.0) * d + n * (k + 1.0)) +
             8.0 * (double)r->rc.seeds * DPD_SEMIPRIV_METRIC_COUNT;
  }
  return bytes;
}

/* The guarantee of Noisy-SGD: Bassily et al.'s (epsilon, delta), no conversion. */
static void add_privacy(dpd_output *out, const sp_run *r, const dpd_semipriv_result *res) {
  cJSON *p = cJSON_AddObjectToObject(out->summary, "privacy");
  dpd_output_number_set(out, "sigma", res->sigma);
  dpd_output_number_set(out, "L", res->L);
  dpd_output_number_set(out, "zeta", res->zeta);
  dpd_output_number_set(out, "eta1", res->eta1);
  cJSON_AddNumberToObject(out->summary, "steps", (double)res->steps);
  if (p == NULL) {
    return;
  }
  if (isinf(r->rc.epsilon)) {
    cJSON_AddStringToObject(p, "guarantee", "none (epsilon = inf: non-private, sigma = 0)");
    cJSON_AddNumberToObject(p, "epsilon", INFINITY);
    return;
  }
  cJSON_AddStringToObject(p, "guarantee", "(epsilon, delta)-DP");
  dpd__json_number(p, "epsilon", r->rc.epsilon);
  dpd__json_number(p, "delta", r->rc.delta);
  cJSON_AddStringToObject(
      p, "source",
      "Bassily, Smith & Thakurta (arXiv:1405.7085): Noisy-SGD with sigma^2 = 32 L^2 n^2 "
      "log(n/delta) log(1/delta) / epsilon^2, at most n^2 steps sampled with replacement, "
      "|x| <= 1 (amplification by sampling and advanced composition); no zCDP or GDP "
      "conversion applies");
}

static int output_begin(const dpd_keys *keys, const sp_run *r, const dpd_semipriv_result *res,
                        dpd_output **outp, dpd_err *err) {
  int status;
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "semipriv", r->plot, r->rc.seed, outp,
                                  err)) < 0) {
    return status;
  }
  const size_t d = res->d;
  if ((status = dpd__output_headline_set(
           *outp, err, "model semipriv, %s, d = %zu, k = %zu%s, n = %zu, epsilon = %g, seed %llu",
           r->files.from_file ? r->files.train.path : "law", d, res->k,
           res->k == d ? " (no PCA)" : "", r->rc.n, r->rc.epsilon,
           (unsigned long long)r->rc.seed)) < 0) {
    return status;
  }
  cJSON_AddNumberToObject((*outp)->summary, "k", (double)res->k);
  cJSON_AddNumberToObject((*outp)->summary, "d", (double)d);
  add_privacy(*outp, r, res);
  return DPD_OK;
}

/* The summary's results and (save_replicates = 1) replicates.tsv. */
static int add_results(dpd_output *out, const sp_run *r, const dpd_semipriv_result *res,
                       dpd_err *err) {
  const int law = !r->files.from_file;
  const size_t S = res->seeds, M = DPD_SEMIPRIV_METRIC_COUNT;
  cJSON *s = out->summary;
  int status;
  cJSON_AddNumberToObject(s, "seeds", (double)S);
  dpd_output_number_set(out, "test_accuracy", res->mean[DPD_SEMIPRIV_TEST_ACCURACY]);
  dpd_output_number_set(out, "test_accuracy_se", res->se[DPD_SEMIPRIV_TEST_ACCURACY]);
  dpd_output_number_set(out, "test_hinge", res->mean[DPD_SEMIPRIV_TEST_HINGE]);
  dpd_output_number_set(out, "test_hinge_se", res->se[DPD_SEMIPRIV_TEST_HINGE]);
  dpd_output_number_set(out, "train_accuracy", res->mean[DPD_SEMIPRIV_TRAIN_ACCURACY]);
  dpd_output_number_set(out, "train_hinge", res->mean[DPD_SEMIPRIV_TRAIN_HINGE]);
  dpd_output_number_set(out, "w_norm", res->mean[DPD_SEMIPRIV_W_NORM]);
  dpd_output_number_set(out, "active_fraction", res->mean[DPD_SEMIPRIV_ACTIVE_FRACTION]);
  if (law) {
    dpd_output_number_set(out, "xi_k", res->mean[DPD_SEMIPRIV_XI_HAT]);
    dpd_output_number_set(out, "xi_k_se", res->se[DPD_SEMIPRIV_XI_HAT]);
    dpd_output_number_set(out, "xi_k_population", res->xi_k);
    dpd_output_number_set(out, "eigengap", res->eigengap);
    if (res->k < res->d) {
      dpd_output_number_set(out, "eigengap_hat", res->mean[DPD_SEMIPRIV_EIGENGAP_HAT]);
    } else {
      dpd_output_na_set(out, "eigengap_hat", "k = d: no PCA");
    }
    dpd_output_number_set(out, "margin_min", res->mean[DPD_SEMIPRIV_MARGIN_MIN]);
    dpd_output_number_set(out, "margin_guaranteed", res->margin_guaranteed);
    dpd_output_number_set(out, "subspace_error", res->mean[DPD_SEMIPRIV_SUBSPACE_ERROR]);
    dpd_output_number_set(out, "gamma0", res->gamma0);
    dpd_output_number_set(out, "xi0", res->xi0);
  } else {
    dpd_output_na_set(out, "xi_k", "file features: no target w*");
    dpd_output_na_set(out, "margin_min", "file features: no target w*");
    if (res->k < res->d && isfinite(res->eigengap)) {
      dpd_output_number_set(out, "eigengap", res->eigengap);
      cJSON_AddStringToObject(s, "eigengap_of", "the public sample (lambda_k - lambda_{k+1})");
    } else {
      dpd_output_na_set(out, "eigengap",
                        res->k == res->d ? "k = d: no PCA"
                                         : "k + 1 exceeds the public sample's numerical rank");
    }
  }
  if (r->save_replicates > 0) {
    double *cols = malloc(S * sizeof *cols), *data = malloc(S * M * sizeof *data);
    const double *cc[1 + DPD_SEMIPRIV_METRIC_COUNT];
    char names[512];
    size_t len = (size_t)snprintf(names, sizeof names, "replicate");
    if (cols == NULL || data == NULL) {
      free(cols);
      free(data);
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < S; i++) {
      cols[i] = (double)i;
      for (size_t m = 0; m < M; m++) {
        data[m * S + i] = res->replicates[i * M + m];
      }
    }
    cc[0] = cols;
    for (size_t m = 0; m < M; m++) {
      cc[1 + m] = data + m * S;
      len += (size_t)snprintf(names + len, sizeof names - len, " %s",
                              dpd_semipriv_metric_name((dpd_semipriv_metric)m));
    }
    status = dpd_output_table_add(out, "replicates.tsv", NULL, names, S, 1 + M, cc, err);
    free(cols);
    free(data);
    if (status < 0) {
      return status;
    }
  }
  if (law) {
    return dpd__output_note_add(
        out, err,
        "note: each replicate redraws the labelled, public and test samples and the noise of "
        "Noisy-SGD (stream (seed, r)); Q and w* are fixed by seed. xi_k is that of the estimated "
        "subspace, 1 - |A_hat A_hat^T w*|; margin_min the smallest y <w*, x> of the labelled "
        "sample");
  }
  return DPD_OK;
}

/* compare: Theorem 1 and Proposition 4 beside the run, and the Zwald-Blanchard bound against
 * the measured subspace error; theory.tsv: the bounds against n. */
static int add_theory(dpd_output *out, const sp_run *r, const dpd_semipriv_result *res,
                      dpd_err *err) {
  cJSON *t = cJSON_AddObjectToObject(out->summary, "theory");
  const size_t n = r->rc.n, k = res->k, d = res->d;
  const double eps = r->rc.epsilon, delta = r->rc.delta, zeta = res->zeta;
  int status;
  if (t == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(t, "kind",
                          "bounds (Theorem 1, Proposition 4; the notes' constants, logarithms "
                          "kept, Bassily et al.'s lemma constant taken as 1)");
  dpd__json_number(t, "alpha_private", dpd_semipriv_theory_alpha_private(n, k, eps, delta, zeta));
  dpd__json_number(t, "alpha_private_no_pca",
                   dpd_semipriv_theory_alpha_private(n, d, eps, delta, zeta));
  dpd__json_number(t, "alpha_nonprivate", dpd_semipriv_theory_alpha_nonprivate(n, zeta));
  dpd__json_number(t, "alpha", r->alpha);
  dpd__json_number(t, "n_labelled", dpd_semipriv_theory_n_labelled(r->alpha, k, eps, delta, zeta));
  dpd__json_number(t, "n_labelled_no_pca",
                   dpd_semipriv_theory_n_labelled(r->alpha, d, eps, delta, zeta));
  dpd__json_number(t, "n_labelled_nonprivate", 1.0 / (zeta * r->alpha * r->alpha));
  dpd__json_number(t, "test_error", 1.0 - res->mean[DPD_SEMIPRIV_TEST_ACCURACY]);
  dpd__json_number(t, "test_error_se", res->se[DPD_SEMIPRIV_TEST_ACCURACY]);
  dpd__json_number(t, "beta", r->rc.beta);
  if (k < d) {
    dpd__json_number(t, "zb_bound", res->zb_bound);
    if (!r->files.from_file) {
      double max = 0.0;
      size_t within = 0;
      for (size_t i = 0; i < res->seeds; i++) {
        const double v =
            res->replicates[i * DPD_SEMIPRIV_METRIC_COUNT + DPD_SEMIPRIV_SUBSPACE_ERROR];
        max = v > max ? v : max;
        within += v <= res->zb_bound;
      }
      dpd__json_number(t, "subspace_error", res->mean[DPD_SEMIPRIV_SUBSPACE_ERROR]);
      dpd__json_number(t, "subspace_error_se", res->se[DPD_SEMIPRIV_SUBSPACE_ERROR]);
      dpd__json_number(t, "subspace_error_max", max);
      dpd__json_number(t, "zb_bound_holds_fraction", (double)within / (double)res->seeds);
      dpd__json_number(t, "n_public_theorem1",
                       dpd_semipriv_theory_n_public(res->gamma0, res->eigengap, r->rc.beta));
    } else {
      cJSON_AddStringToObject(t, "zb_bound_of",
                              "the public sample's own eigengap (no population subspace to "
                              "measure against with file features)");
    }
  }
  /* theory.tsv: the bounds against n on a log grid 10 .. 1e9 */
  enum { G = 33 };
  double cols[4][G];
  for (size_t i = 0; i < G; i++) {
    const size_t ni = (size_t)llround(pow(10.0, 1.0 + 8.0 * (double)i / (double)(G - 1)));
    cols[0][i] = (double)ni;
    cols[1][i] = dpd_semipriv_theory_alpha_private(ni, k, eps, delta, zeta);
    cols[2][i] = dpd_semipriv_theory_alpha_private(ni, d, eps, delta, zeta);
    cols[3][i] = dpd_semipriv_theory_alpha_nonprivate(ni, zeta);
  }
  const double *cc[4] = {cols[0], cols[1], cols[2], cols[3]};
  if ((status = dpd_output_table_add(out, "theory.tsv", NULL,
                                     "n alpha_private alpha_private_no_pca alpha_nonprivate", G, 4,
                                     cc, err)) < 0 ||
      (status = dpd__output_table_comment_set(
           out,
           "error bounds against n: Theorem 1 at k and at d, Proposition 4 (bounds, not "
           "predictions)",
           err)) < 0) {
    return status;
  }
  return dpd__output_note_add(
      out, err,
      "note: the theory gives upper bounds (Theorem 1, Proposition 4, Zwald-Blanchard), often "
      "vacuous at these sizes (> 1); they are not predictions of the measured accuracy");
}

static int run_problem(dpd_keys *keys, const dpd_run_env *env, dpd_output **outp, dpd_err *err) {
  const char *command = dpd_keys_command_get(keys);
  const int compare = strcmp(command, "compare") == 0;
  const int account = strcmp(command, "account") == 0;
  sp_run r;
  dpd_semipriv_gen *gen = NULL;
  dpd_semipriv_result *res = NULL, acc;
  dpd_output *out = NULL;
  int status;
  *outp = NULL;
  if ((status = setup(keys, env, &r, err)) < 0) {
    goto done;
  }
  if (r.files.from_file) {
    if ((status = dpd__model_memory_check(keys, env, r.files.bytes, "features", err)) < 0 ||
        (status = dpd__sp_files_read(keys, env, &r.files, !account, err)) < 0 ||
        (status = sizes_check(keys, &r, !account, err)) < 0) {
      goto done;
    }
    const double d = (double)r.files.train.p, k = (double)r.rc.k;
    const double more = 8.0 * ((double)(r.files.train.n + r.files.test.n) * k + 2.0 * d * d +
                               (double)r.rc.seeds * DPD_SEMIPRIV_METRIC_COUNT);
    if ((status = dpd__model_memory_check(keys, env, r.files.bytes + more, "features", err)) < 0) {
      goto done;
    }
  } else if ((status = sizes_check(keys, &r, !account, err)) < 0 ||
             (status = dpd__model_memory_check(keys, env, law_bytes(&r, !account), "d", err)) < 0) {
    goto done;
  }
  if (r.k_none) {
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", r.rc.k);
    if ((status = dpd_keys_effective_set(keys, "k", buf, err)) < 0) {
      goto done;
    }
  }
  if ((status = dpd__model_validated(env, err)) != 0) {
    status = status < 0 ? status : DPD_OK;
    goto done;
  }
  /* LAPACK's rounding depends on OpenBLAS's thread count: one thread keeps the bits fixed for any
   * `threads` (the replicates run on dpdyn's OpenMP threads), as model=rf and nc do. */
  openblas_set_num_threads(1);
  if (!r.files.from_file && (status = dpd_semipriv_gen_create(&r.gc, &gen, err)) < 0) {
    goto done;
  }
  if (account) {
    /* sigma and the constants alone: no replicate */
    memset(&acc, 0, sizeof acc);
    acc.k = r.rc.k;
    acc.d = r.files.from_file ? r.files.train.p : r.gc.d;
    acc.steps = r.rc.steps == 0 ? r.rc.n * r.rc.n : r.rc.steps;
    if (gen != NULL) {
      acc.gamma0 = gen->margin_guaranteed;
      acc.xi0 = dpd_semipriv_gen_xi(gen, acc.k);
      acc.zeta = isnan(r.rc.zeta) ? acc.gamma0 * (1.0 - acc.xi0 - 0.1 * acc.gamma0) : r.rc.zeta;
    } else {
      acc.gamma0 = acc.xi0 = NAN;
      acc.zeta = r.rc.zeta;
    }
    if (!(acc.zeta > 0.0)) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'zeta': %g = gamma0 (1 - xi0 - 0.1 gamma0) (allowed: "
                        "> 0; give 'zeta')",
                        acc.zeta);
      goto done;
    }
    acc.L = 1.0 / acc.zeta;
    acc.sigma = dpd_semipriv_sgd_sigma(r.rc.n, acc.L, r.rc.epsilon, r.rc.delta);
    acc.eta1 = dpd_semipriv_sgd_eta(1, r.rc.n, acc.L, acc.k, acc.sigma, 1.0);
    if ((status = output_begin(keys, &r, &acc, &out, err)) < 0 ||
        (status = dpd__sp_files_output(out, &r.files, 0, err)) < 0) {
      goto done;
    }
    cJSON_AddNumberToObject(out->summary, "n", (double)r.rc.n);
    if (gen != NULL) {
      dpd_output_number_set(out, "gamma0", acc.gamma0);
      dpd_output_number_set(out, "xi0", acc.xi0);
    }
    goto done;
  }
  status = r.files.from_file ? dpd__sp_files_run(&r.files, &r.rc, &res, err)
                             : dpd_semipriv_run(gen, &r.rc, &res, err);
  if (status < 0 || (status = output_begin(keys, &r, res, &out, err)) < 0 ||
      (status = dpd__sp_files_output(out, &r.files, 1, err)) < 0 ||
      (status = add_results(out, &r, res, err)) < 0 ||
      (compare && (status = add_theory(out, &r, res, err)) < 0)) {
    goto done;
  }
done:
  dpd_semipriv_result_free(res);
  dpd_semipriv_gen_free(gen);
  dpd__sp_files_free(&r.files);
  if (status < 0) {
    dpd_output_free(out);
    out = NULL;
  }
  *outp = out;
  return status;
}

/* The numbers each command's summary can hold, as dpdyn sweep names them
 * (dpd_model_command.numbers): the union over the command's configurations, checked by
 * tests/cli/test_sweep_plot_y.sh. */
static const char sp_simulate_numbers[] =
    "seed k d privacy.epsilon privacy.delta sigma L zeta eta1 steps seeds test_accuracy "
    "test_accuracy_se test_hinge test_hinge_se train_accuracy train_hinge w_norm active_fraction "
    "xi_k xi_k_se xi_k_population eigengap eigengap_hat margin_min margin_guaranteed "
    "subspace_error gamma0 xi0 features.n features.d features.n_public features.n_test "
    "features.positive_class";

static const char sp_compare_numbers[] =
    "seed k d privacy.epsilon privacy.delta sigma L zeta eta1 steps seeds test_accuracy "
    "test_accuracy_se test_hinge test_hinge_se train_accuracy train_hinge w_norm active_fraction "
    "xi_k xi_k_se xi_k_population eigengap eigengap_hat margin_min margin_guaranteed "
    "subspace_error gamma0 xi0 theory.alpha_private theory.alpha_private_no_pca "
    "theory.alpha_nonprivate theory.alpha theory.n_labelled theory.n_labelled_no_pca "
    "theory.n_labelled_nonprivate theory.test_error theory.test_error_se theory.beta "
    "theory.zb_bound theory.subspace_error theory.subspace_error_se theory.subspace_error_max "
    "theory.zb_bound_holds_fraction theory.n_public_theorem1 features.n features.d "
    "features.n_public features.n_test features.positive_class";

static const char sp_account_numbers[] =
    "seed k d privacy.epsilon privacy.delta sigma L zeta eta1 steps n gamma0 xi0 features.n "
    "features.d features.positive_class";

static const dpd_model_command sp_commands[] = {
    {"simulate", "Algorithm 1 (public PCA + Noisy-SGD) over replicates: accuracy, hinge, xi_k",
     "replicates.tsv summary.json",
     "dpdyn simulate --model=semipriv --d=200 --k=5 --n=500 --n_public=5000 --epsilon=1",
     run_problem, sp_simulate_numbers},
    {"compare", "the same beside Theorem 1, Proposition 4 and the Zwald-Blanchard bound",
     "replicates.tsv theory.tsv summary.json",
     "dpdyn compare --model=semipriv --d=200 --k=5 --epsilon=0.1", run_problem, sp_compare_numbers},
    {"account", "the noise sigma of Noisy-SGD and its (epsilon, delta) guarantee", "summary.json",
     "dpdyn account --model=semipriv --n=500 --epsilon=0.1 --delta=1e-5", run_problem,
     sp_account_numbers},
    {NULL, NULL, NULL, NULL, NULL, NULL}};

static const char *const sp_small[] = {"d",   "20",     "k",  "3",     "n", "40", "n_public",
                                       "100", "n_test", "50", "seeds", "3", NULL};

const dpd_model_type dpd__model_semipriv = {
    "semipriv", "semi-private learning: public PCA + Noisy-SGD (docs/math.md section 4)", sp_keys,
    sp_commands, sp_small};
