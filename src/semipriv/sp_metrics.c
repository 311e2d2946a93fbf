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
#include "core/text_impl.h"
#include "semipriv/sp_files_impl.h"

static const char no_w_star[] = "file features: no target w*";

#define NUM(n, v) m[c++] = (dpd__sp_member){.name = (n), .value = (v)}
#define NA(n, why) m[c++] = (dpd__sp_member){.name = (n), .na = (why)}
#define TEXT(n, t) m[c++] = (dpd__sp_member){.name = (n), .text = (t)}

size_t dpd__sp_result_members(const dpd_semipriv_result *res, int law, dpd__sp_member *m) {
  size_t c = 0;
  NUM("seeds", (double)res->seeds);
  NUM("test_accuracy", res->mean[DPD_SEMIPRIV_TEST_ACCURACY]);
  NUM("test_accuracy_se", res->se[DPD_SEMIPRIV_TEST_ACCURACY]);
  NUM("test_hinge", res->mean[DPD_SEMIPRIV_TEST_HINGE]);
  NUM("test_hinge_se", res->se[DPD_SEMIPRIV_TEST_HINGE]);
  NUM("train_accuracy", res->mean[DPD_SEMIPRIV_TRAIN_ACCURACY]);
  NUM("train_hinge", res->mean[DPD_SEMIPRIV_TRAIN_HINGE]);
  NUM("w_norm", res->mean[DPD_SEMIPRIV_W_NORM]);
  NUM("active_fraction", res->mean[DPD_SEMIPRIV_ACTIVE_FRACTION]);
  if (!law) {
    NA("xi_k", no_w_star);
    NA("margin_min", no_w_star);
    if (res->k < res->d && isfinite(res->eigengap)) {
      NUM("eigengap", res->eigengap);
      TEXT("eigengap_of", "the public sample (lambda_k - lambda_{k+1})");
    } else {
      NA("eigengap", res->k == res->d ? "k = d: no PCA"
                                      : "k + 1 exceeds the public sample's numerical rank");
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

size_t dpd__sp_theory_members(const dpd_semipriv_result *res, const dpd_semipriv_run_config *cfg,
                              double alpha, int law, dpd__sp_member *m) {
  const size_t n = cfg->n, k = res->k, d = res->d;
  const double eps = cfg->epsilon, delta = cfg->delta, zeta = res->zeta;
  size_t c = 0;
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
  if (k == d) {
    return c;
  }
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
