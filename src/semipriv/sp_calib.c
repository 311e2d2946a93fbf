/* Semi-private learning: the noise of Noisy-SGD by Bassily-Smith-Thakurta's theorem or by the
 * PLD accountant (semipriv.h, sp_files_impl.h; docs/privacy.md, "Semi-private Noisy-SGD
 * accounted by PLD").
 * SPDX-License-Identifier: MIT
 *
 * The mechanism the accountant sees. Step t of Noisy-SGD draws one index i_t uniformly from the
 * n labelled points, independently (with replacement), and moves w by -eta(t) (n grad l(w; x_i)
 * + sigma xi_t): a Gaussian mechanism on the one sampled record's contribution n grad l, whose
 * norm is <= n L (the hinge loss is L = 1/zeta-Lipschitz in w and |x| <= 1), followed by the
 * projection (post-processing); w_{t-1} is released to the next step (adaptive composition).
 * Replace-one neighbours (n fixed): a replaced record moves a step's contribution by up to 2 n L
 * when it is drawn, with probability 1/n. In account.h's words: SUBSAMPLED, REPLACEMENT,
 * batch 1 of n, REPLACE_ONE, noise multiplier z = sigma / (n L), T steps. Accounting every
 * iterate over-counts what the released last iterate reveals, so the PLD's epsilon is an upper
 * bound for the algorithm as run. */
#include <math.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/keys.h"
#include "semipriv/sp_files_impl.h"

const char *dpd_semipriv_calibration_name(dpd_semipriv_calibration c) {
  return c == DPD_SEMIPRIV_CALIBRATION_BST   ? "bst"
         : c == DPD_SEMIPRIV_CALIBRATION_PLD ? "pld"
                                             : NULL;
}

int dpd_semipriv_sgd_sigma_pld(size_t n, double L, size_t steps, double epsilon, double delta,
                               double *sigma, dpd_account_result *at, dpd_err *err) {
  dpd_account_segment seg = {.sigma = 1.0, .q = 1.0, .batch = 1, .steps = steps};
  dpd_account a = {.mechanism = DPD_MECHANISM_SUBSAMPLED,
                   .sampling = DPD_SAMPLING_REPLACEMENT,
                   .neighbours = DPD_NEIGHBOURS_REPLACE_ONE,
                   .n = n,
                   .segments = &seg,
                   .nsegments = 1};
  dpd_account_result r;
  double z;
  int status;
  if (n < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n': %zu (allowed: integer >= 1)", n);
  }
  if (!(L > 0.0) || !isfinite(L)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'zeta': 1/L = %g (allowed: finite, > 0)",
                    1.0 / L);
  }
  if (steps < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'steps': 0 (allowed: integer >= 1)");
  }
  if (!(epsilon > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'epsilon': %g (allowed: > 0, or inf)",
                    epsilon);
  }
  if (!(delta > 0.0 && delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'delta': %g (allowed: 0 < delta < 1)",
                    delta);
  }
  if (isinf(epsilon)) {
    *sigma = 0.0;
    return DPD_OK;
  }
  if ((status = dpd_account_sigma_for(&a, epsilon, delta, &z, &r, err)) < 0) {
    return status;
  }
  /* the private side of the rounding: sigma / (n L) >= z */
  *sigma = nextafter((double)n * L * z, INFINITY);
  if (at != NULL) {
    *at = r;
  }
  return DPD_OK;
}

int dpd__sp_calibrate(const dpd_semipriv_run_config *cfg, size_t n, double L, size_t steps,
                      dpd_semipriv_result *res, dpd_semipriv_sgd_config *sgd, dpd_err *err) {
  dpd_account_result at;
  int status = DPD_OK;
  res->calibration = cfg->calibration;
  res->sigma_bst = dpd_semipriv_sgd_sigma(n, L, cfg->epsilon, cfg->delta);
  res->epsilon_pld = res->epsilon_pld_estimate = res->epsilon_pld_lower = NAN;
  if (cfg->calibration == DPD_SEMIPRIV_CALIBRATION_PLD) {
    if ((status = dpd_semipriv_sgd_sigma_pld(n, L, steps, cfg->epsilon, cfg->delta, &res->sigma,
                                             &at, err)) < 0) {
      return status;
    }
    if (isfinite(cfg->epsilon)) {
      res->epsilon_pld = at.epsilon;
      res->epsilon_pld_estimate = at.epsilon_estimate;
      res->epsilon_pld_lower = at.epsilon_lower;
    }
  } else {
    res->sigma = res->sigma_bst;
  }
  res->noise_multiplier = res->sigma / ((double)n * L);
  if (sgd != NULL) {
    sgd->calibration = cfg->calibration;
    sgd->sigma = res->sigma;
  }
  return DPD_OK;
}

int dpd__sp_privacy_keys(const dpd_keys *keys, dpd_semipriv_run_config *rc, dpd_err *err) {
  size_t choice = 0;
  int status;
  if ((status = dpd_keys_real_get(keys, "epsilon", &rc->epsilon, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "delta", &rc->delta, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "calibration", &choice, err)) < 0) {
    return status;
  }
  rc->calibration = choice == 1 ? DPD_SEMIPRIV_CALIBRATION_PLD : DPD_SEMIPRIV_CALIBRATION_BST;
  return DPD_OK;
}
