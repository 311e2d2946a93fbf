/* Interpolation with random features: the spectrum of Phi Phi^T / p (and of the centred
 * features), the min-norm interpolator, and the slides' Hermite lower bound on lambda_min
 * (include/dpdyn/rf_overparam.h, docs/overparameterization.md "Interpolation").
 * SPDX-License-Identifier: MIT
 *
 * The bound (seed 004, "single wide layer", step 2, for one layer of random features):
 * E_V phi(V x_i)^T phi(V x_j) / p = sum_r mu_r^2 (x_i^T x_j / d)^r when |x_i|^2 = d (Hermite
 * expansion), every Hadamard power of the PSD X X^T / d is PSD (Schur), and the matrix Chernoff
 * bound gives lambda_min(Phi Phi^T) >= lambda_min(E Phi Phi^T) / 4 w.h.p. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "core/error_impl.h"
#include "dpdyn/rf_overparam.h"
#include "dpdyn/rf_sim.h"

#define INV_SQRT_2PI 0.39894228040143267794
#define SQRT_2_OVER_PI 0.79788456080286535588

double dpd_rf_activation_mean_eval(dpd_rf_activation act, double s) {
  switch (act) {
  case DPD_RF_ACT_TANH:
  case DPD_RF_ACT_HERMITE13:
    return 0.0;
  case DPD_RF_ACT_RELU:
    return s * INV_SQRT_2PI;
  case DPD_RF_ACT_RELU_CENTERED:
    return (s - 1.0) * INV_SQRT_2PI;
  case DPD_RF_ACT_ABS_CENTERED:
    return (s - 1.0) * SQRT_2_OVER_PI;
  case DPD_RF_ACT_HERMITE134: /* E He_4(s G) / 24 = (3 s^4 - 6 s^2 + 3) / 24 */
    return (s * s - 1.0) * (s * s - 1.0) / 8.0;
  }
  return NAN;
}

/* The eigenvalues of the symmetric n x n matrix a (destroyed), ascending, into w. */
static int eigenvalues(double *a, size_t n, double *w, dpd_err *err) {
  lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'U', (lapack_int)n, a, (lapack_int)n, w);
  return info == 0 ? DPD_OK
                   : DPD_FAIL(err, DPD_ESOLVER, "LAPACKE_dsyevd failed with info = %d", (int)info);
}

/* Gershgorin's lower bound on lambda_min of the Hadamard power K1^(r) (clamped at 0). */
static double gershgorin_power(const double *k1, size_t n, unsigned r) {
  double lo = INFINITY;
  for (size_t i = 0; i < n; i++) {
    double off = 0.0;
    for (size_t j = 0; j < n; j++) {
      off += j == i ? 0.0 : pow(fabs(k1[i * n + j]), (double)r);
    }
    const double v = pow(k1[i * n + i], (double)r) - off;
    lo = v < lo ? v : lo;
  }
  return lo > 0.0 ? lo : 0.0;
}

int dpd_rf_hermite_bound_eval(dpd_rf_activation act, const double *X, size_t n, size_t d,
                              dpd_rf_hermite_bound *out, dpd_err *err) {
  if (n < 2 || d < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n': %zu (allowed: n >= 2, d >= 1)", n);
  }
  if (isnan(dpd_rf_activation_hermite(act, 0))) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'activation': %d (allowed: 0 to %d)",
                    (int)act, DPD_RF_ACT_COUNT - 1);
  }
  double *k1 = malloc(n * n * sizeof *k1), *a = malloc(n * n * sizeof *a);
  double *kern = calloc(n * n, sizeof *kern), *w = malloc(n * sizeof *w);
  int status = DPD_OK;
  if (k1 == NULL || a == NULL || kern == NULL || w == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "rf: out of memory (hermite bound, n = %zu)", n);
    goto done;
  }
  memset(out, 0, sizeof *out);
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)d, 1.0 / (double)d, X, (int)d,
              0.0, k1, (int)n);
  for (size_t i = 0; i < n; i++) { /* full symmetric K1 */
    for (size_t j = 0; j < i; j++) {
      k1[i * n + j] = k1[j * n + i];
    }
  }
  for (unsigned r = 0; r <= DPD_RF_HERMITE_MAX; r++) {
    const double mu = dpd_rf_activation_hermite(act, r);
    out->mu_r[r] = mu;
    /* kern += mu_r^2 K1^(r); a = K1^(r) for the eigenvalue */
    for (size_t k = 0; k < n * n; k++) {
      const double power = r == 0 ? 1.0 : pow(k1[k], (double)r);
      kern[k] += mu * mu * power;
      a[k] = power;
    }
    if (r == 0) {
      out->lambda_r[0] = 0.0; /* 1 1^T, n >= 2 */
    } else if (r <= DPD_RF_BOUND_EIG_MAX) {
      if (mu == 0.0) {
        out->lambda_r[r] = NAN; /* not needed: no contribution */
        continue;
      }
      if ((status = eigenvalues(a, n, w, err)) < 0) {
        goto done;
      }
      out->lambda_r[r] = w[0] > 0.0 ? w[0] : 0.0;
    } else {
      out->lambda_r[r] = mu == 0.0 ? NAN : gershgorin_power(k1, n, r);
    }
    if (r >= 1 && mu != 0.0) {
      out->hermite_sum += mu * mu * out->lambda_r[r];
    }
  }
  out->bound = out->hermite_sum / 4.0;
  if ((status = eigenvalues(kern, n, w, err)) == DPD_OK) {
    out->kernel_lambda_min = w[0];
    out->kernel_lambda_max = w[n - 1];
  }
done:
  free(k1);
  free(a);
  free(kern);
  free(w);
  return status;
}

int dpd_rf_interp_eval(const dpd_rf_problem *problem, dpd_rf_interp_result *res, dpd_err *err) {
  const size_t n = problem->n, p = problem->p;
  double *g = malloc(n * n * sizeof *g), *w = malloc(n * sizeof *w);
  double *theta = malloc(p * sizeof *theta), *mean = malloc(p * sizeof *mean);
  double *centred = malloc(n * p * sizeof *centred), *r = malloc(n * sizeof *r);
  int status = DPD_OK;
  if (g == NULL || w == NULL || theta == NULL || mean == NULL || centred == NULL || r == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "rf: out of memory (interpolate, n = %zu, p = %zu)", n, p);
    goto done;
  }
  const double inv_p = 1.0 / (double)p;
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)p, inv_p, problem->phi, (int)p,
              0.0, g, (int)n);
  if ((status = eigenvalues(g, n, w, err)) < 0) {
    goto done;
  }
  res->lambda_min = w[0];
  res->lambda_max = w[n - 1];
  for (size_t j = 0; j < p; j++) {
    const double *v = problem->V + j * problem->d;
    mean[j] = dpd_rf_activation_mean_eval(problem->cfg.activation,
                                          sqrt(cblas_ddot((int)problem->d, v, 1, v, 1)));
  }
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < p; j++) {
      centred[i * p + j] = problem->phi[i * p + j] - mean[j];
    }
  }
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)p, inv_p, centred, (int)p, 0.0,
              g, (int)n);
  if ((status = eigenvalues(g, n, w, err)) < 0) {
    goto done;
  }
  res->lambda_min_centred = w[0];
  res->lambda_max_centred = w[n - 1];
  double train = 0.0;
  if ((status = dpd_rf_theta_star_get(problem, -1.0, theta, &train, &res->theta_star_test_risk,
                                      err)) < 0) {
    goto done;
  }
  cblas_dcopy((int)n, problem->y, 1, r, 1);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)p, 1.0, problem->phi, (int)p, theta, 1,
              -1.0, r, 1);
  res->residual = cblas_dnrm2((int)n, r, 1) / cblas_dnrm2((int)n, problem->y, 1);
  res->theta_star_norm = cblas_dnrm2((int)p, theta, 1);
done:
  free(g);
  free(w);
  free(theta);
  free(mean);
  free(centred);
  free(r);
  return status;
}
