/* Clipping factors mu_c(P) and nu_c(P) for Gaussian residuals (MATH.md 1.5).
 * SPDX-License-Identifier: MIT
 *
 * With r ~ N(0, 2P) and k = c / (2 sqrt(P)) (so that |r| <= c iff |N(0,1)| <= sqrt(2) k):
 *   mu = P(|r| <= c) = erf(k),
 *   nu = E[min(r^2, c^2)] / (2P) = erf(k) - (2k/sqrt(pi)) e^{-k^2} + 2 k^2 erfc(k).
 * Derivatives, from dk/dP = -k/(2P):
 *   d mu/dP = -k e^{-k^2} / (sqrt(pi) P),
 *   d nu/dP = -2 k^2 erfc(k) / P    (the e^{-k^2} terms cancel: d nu/dk = 4 k erfc(k)).
 * For small k the first two terms of nu cancel (both are 2k/sqrt(pi) + O(k^3));
 * there nu is evaluated as P(3/2, k^2) + 2 k^2 erfc(k), with P the regularised
 * lower incomplete gamma function (E[Z^2 1{Z^2 <= 2k^2}] = P(3/2, k^2) for a
 * standard Gaussian Z), which carries no cancellation. For large k erfc(k)
 * underflows gracefully to 0 so that both factors tend to 1. */
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_sf_gamma.h>

#include "core/error_impl.h"
#include "dpdyn/clip.h"

static const double inv_sqrt_pi = 0.56418958354775628694807945156077;

void dpd_clip_factors_eval(double c, double P, double *mu, double *nu, double *dmu_dP,
                           double *dnu_dP) {
  double m = 1.0, v = 1.0, dm = 0.0, dv = 0.0;
  double k = (isfinite(c) && P > 0.0) ? c / (2.0 * sqrt(P)) : INFINITY;
  if (isnan(c) || isnan(P)) {
    /* Propagate NaN so that a non-finite state is noticed by the caller. */
    m = v = dm = dv = NAN;
  } else if (isfinite(k)) {
    /* k = inf (c = inf, P = 0, or c / sqrt(P) overflowing) keeps the limits 1, 1, 0, 0.
     * k^2 erfc(k) is evaluated as k (k erfc(k)): k * k overflows for k > 1.3e154, where
     * erfc(k) = 0, and inf * 0 would give NaN. */
    double ek = exp(-k * k);
    double kerfck = k * erfc(k);
    m = erf(k);
    if (k < 1.0) {
      v = gsl_sf_gamma_inc_P(1.5, k * k) + 2.0 * k * kerfck;
    } else {
      v = m - 2.0 * k * inv_sqrt_pi * ek + 2.0 * k * kerfck;
    }
    dm = -k * ek * inv_sqrt_pi / P;
    dv = -2.0 * k * kerfck / P;
  }
  if (mu != NULL) {
    *mu = m;
  }
  if (nu != NULL) {
    *nu = v;
  }
  if (dmu_dP != NULL) {
    *dmu_dP = dm;
  }
  if (dnu_dP != NULL) {
    *dnu_dP = dv;
  }
}

double dpd_clip_mu_eval(double c, double P) {
  double mu;
  dpd_clip_factors_eval(c, P, &mu, NULL, NULL, NULL);
  return mu;
}

double dpd_clip_nu_eval(double c, double P) {
  double nu;
  dpd_clip_factors_eval(c, P, NULL, &nu, NULL, NULL);
  return nu;
}

const char *dpd_noise_law_name(dpd_noise_law law) {
  switch (law) {
  case DPD_NOISE_GAUSSIAN:
    return "gaussian";
  case DPD_NOISE_LAPLACE:
    return "laplace";
  case DPD_NOISE_RADEMACHER:
    return "rademacher";
  case DPD_NOISE_STUDENT:
    return "student";
  }
  return "unknown";
}

int dpd_clip_noise_factors_eval(const dpd_noise_spec *noise, double c, double R, double *mu,
                                double *nu, double *dmu_dR, double *dnu_dR, dpd_err *err) {
  if (!(R >= 0.0) || !(noise->zeta >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "clipping factors: R = %g, zeta = %g (allowed: R >= 0, zeta >= 0)", R,
                    noise->zeta);
  }
  if (noise->law != DPD_NOISE_GAUSSIAN) {
    return DPD_FAIL(err, DPD_EINVAL, "clipping factors: noise law '%s' (allowed: gaussian)",
                    dpd_noise_law_name(noise->law));
  }
  dpd_clip_factors_eval(c, R + 0.5 * noise->zeta * noise->zeta, mu, nu, dmu_dR, dnu_dR);
  return DPD_OK;
}
