/* Sensitivity of the random-features model: the input gradient of f(x) = phi(V x)^T theta in
 * closed form, grad_x f = V^T diag(phi'(V x)) theta, batched as two GEMMs per block of points,
 * and S(x) = |x| |grad_x f(x)| (include/dpdyn/rf_overparam.h, docs/overparameterization.md
 * "Sensitivity").
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "dpdyn/rf_overparam.h"

int dpd_rf_input_gradient_eval(dpd_rf_activation act, const double *V, size_t p, size_t d,
                               const double *theta, const double *X, size_t m, double *grad,
                               double *f, dpd_err *err) {
  const size_t block = DPD_RF_GRAD_BLOCK;
  double *z = malloc(block * p * sizeof *z);
  if (z == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "rf: out of memory (input gradient, p = %zu)", p);
  }
  for (size_t i0 = 0; i0 < m; i0 += block) {
    const size_t b = m - i0 < block ? m - i0 : block;
    /* Z = X_b V^T (b x p) */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)b, (int)p, (int)d, 1.0, X + i0 * d,
                (int)d, V, (int)d, 0.0, z, (int)p);
    for (size_t i = 0; i < b; i++) {
      double *zi = z + i * p, fi = 0.0;
      for (size_t j = 0; j < p; j++) {
        if (f != NULL) {
          fi += dpd_rf_activation_eval(act, zi[j]) * theta[j];
        }
        zi[j] = dpd_rf_activation_deriv(act, zi[j]) * theta[j]; /* W = phi'(Z) theta */
      }
      if (f != NULL) {
        f[i0 + i] = fi;
      }
    }
    /* grad_b = W V (b x d) */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)b, (int)d, (int)p, 1.0, z, (int)p,
                V, (int)d, 0.0, grad + i0 * d, (int)d);
  }
  free(z);
  return DPD_OK;
}

int dpd_rf_sensitivity_eval(dpd_rf_activation act, const double *V, size_t p, size_t d,
                            const double *theta, const double *X, size_t m, double *S,
                            dpd_err *err) {
  double *grad = malloc(m * d * sizeof *grad);
  if (grad == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "rf: out of memory (sensitivity, m = %zu, d = %zu)", m, d);
  }
  int status = dpd_rf_input_gradient_eval(act, V, p, d, theta, X, m, grad, NULL, err);
  for (size_t i = 0; status == DPD_OK && i < m; i++) {
    S[i] = cblas_dnrm2((int)d, X + i * d, 1) * cblas_dnrm2((int)d, grad + i * d, 1);
  }
  free(grad);
  return status;
}
