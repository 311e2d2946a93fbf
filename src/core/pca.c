/* Principal component analysis by the covariance or the Gram route (pca.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Golub & Van Loan, Matrix Computations (4th ed.), 8.1 and 8.6; LAPACK dsyevr
 * (Dhillon & Parlett, Linear Algebra Appl. 387 (2004) 1-28).
 *
 * Why two routes: S = Y^T Y / d (p x p) and T = Y Y^T / d (m x m) share their non-zero
 * eigenvalues, and v = Y^T u / sqrt(d lambda) maps a unit eigenvector u of T to a unit
 * eigenvector v of S (|Y^T u|^2 = u^T Y Y^T u = d lambda). Forming the smaller of the two costs
 * m p min(m, p) flops and min(m, p)^2 memory. Both are formed by cblas_dsyrk (upper triangle)
 * and handed to dsyevr with range 'I', which computes only the k eigenpairs asked for. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/pca.h"

dpd_pca_config dpd_pca_config_default(void) {
  dpd_pca_config c = {.m = 1,
                      .p = 1,
                      .k = 1,
                      .center = 1,
                      .route = DPD_PCA_ROUTE_AUTO,
                      .block = 256,
                      .chunk = 1024};
  return c;
}

dpd_pca_route dpd_pca_route_get(const dpd_pca_config *cfg) {
  if (cfg->route != DPD_PCA_ROUTE_AUTO) {
    return cfg->route;
  }
  return cfg->p <= cfg->m ? DPD_PCA_ROUTE_COVARIANCE : DPD_PCA_ROUTE_GRAM;
}

double dpd_pca_memory(const dpd_pca_config *cfg) {
  const double m = (double)cfg->m, p = (double)cfg->p, k = (double)cfg->k;
  double doubles = p * (k + 1.0) + k; /* result: V, mean, eigenvalues */
  if (dpd_pca_route_get(cfg) == DPD_PCA_ROUTE_COVARIANCE) {
    const double b = (double)(cfg->block < cfg->m ? cfg->block : cfg->m);
    doubles += p * p + b * p + 2.0 * p + 26.0 * p; /* S, block, eigenvalues, dsyevr work */
  } else {
    const double c = (double)(cfg->chunk < cfg->p ? cfg->chunk : cfg->p);
    doubles += m * m + m * c + m * k + 2.0 * m + 26.0 * m; /* T, chunk, U, dsyevr work */
  }
  return 8.0 * doubles;
}

void dpd_pca_result_free(dpd_pca_result *res) {
  if (res == NULL) {
    return;
  }
  free(res->eigenvalues);
  free(res->V);
  free(res->mean);
  free(res);
}

static int validate(const dpd_pca_config *c, dpd_pca_route route, dpd_err *err) {
  if (c->p < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'p': 0 (allowed: p >= 1)");
  }
  if (c->m < (c->center ? 2u : 1u)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'm': %zu (allowed: m >= %d%s)", c->m,
                    c->center ? 2 : 1, c->center ? " when centring" : "");
  }
  if (c->k < 1 || c->k > c->p) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'k': %zu (allowed: 1 <= k <= p = %zu)",
                    c->k, c->p);
  }
  if (route == DPD_PCA_ROUTE_GRAM) {
    const size_t rank = c->center ? c->m - 1 : c->m;
    if (c->k > rank) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'k': %zu (allowed: k <= %s = %zu on the Gram route, the "
                      "rank bound of %zu samples%s)",
                      c->k, c->center ? "m - 1" : "m", rank, c->m, c->center ? " centred" : "");
    }
  }
  if (c->block < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'block': 0 (allowed: block >= 1)");
  }
  if (c->chunk < 2 || c->chunk % 2 != 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'chunk': %zu (allowed: even, >= 2)",
                    c->chunk);
  }
  if ((double)c->p * (double)c->k > (double)INT32_MAX ||
      (double)(c->p < c->m ? c->p : c->m) > 46340.0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'p': %zu (allowed: p k < 2^31 and min(m, p) <= 46340, the "
                    "BLAS index range; m = %zu, k = %zu)",
                    c->p, c->m, c->k);
  }
  return DPD_OK;
}

/* The sign rule: the entry of largest |.| of column j of V (p x k, row-major) made positive. */
static void fix_signs(double *V, size_t p, size_t k) {
  for (size_t j = 0; j < k; j++) {
    size_t best = 0;
    for (size_t l = 1; l < p; l++) {
      if (fabs(V[l * k + j]) > fabs(V[best * k + j])) {
        best = l;
      }
    }
    if (V[best * k + j] < 0.0) {
      for (size_t l = 0; l < p; l++) {
        V[l * k + j] = -V[l * k + j];
      }
    }
  }
}

/* Top k eigenpairs of the symmetric n x n matrix A (row-major, upper triangle set; destroyed):
 * lambda[0..k) descending, vectors Z (n x k, row-major) in the same order. */
static int top_eigen(double *A, size_t n, size_t k, double *lambda, double *Z, dpd_err *err) {
  lapack_int found = 0, info;
  lapack_int *isuppz = malloc(2 * k * sizeof *isuppz);
  double *w = malloc(n * sizeof *w), *z = malloc(n * k * sizeof *z);
  int status = DPD_OK;
  if (isuppz == NULL || w == NULL || z == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (PCA eigenproblem, n = %zu)", n);
    goto done;
  }
  for (size_t a = 0; a < n * n; a++) {
    if (!isfinite(A[a]) && (a % n) >= a / n) {
      status = DPD_FAIL(err, DPD_ENONFINITE, "non-finite entry of the PCA matrix (row %zu)", a / n);
      goto done;
    }
  }
  info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', (lapack_int)n, A, (lapack_int)n, 0.0, 0.0,
                        (lapack_int)(n - k + 1), (lapack_int)n, 0.0, &found, w, z, (lapack_int)k,
                        isuppz);
  if (info != 0 || (size_t)found != k) {
    status = DPD_FAIL(err, DPD_ESOLVER, "LAPACKE_dsyevr failed (info = %d, %d of %zu found)",
                      (int)info, (int)found, k);
    goto done;
  }
  for (size_t j = 0; j < k; j++) { /* ascending -> descending */
    lambda[j] = w[k - 1 - j];
    for (size_t l = 0; l < n; l++) {
      Z[l * k + j] = z[l * k + (k - 1 - j)];
    }
  }
done:
  free(isuppz);
  free(w);
  free(z);
  return status;
}

/* The numerical rank rule: lambda_k must exceed n DBL_EPSILON lambda_1 (n the order of the matrix
 * decomposed), else the k-th direction is not determined by the data (the covariance route would
 * return an arbitrary null vector, the Gram route cannot form one): both routes refuse. */
static int rank_check(const double *lambda, size_t k, size_t n, dpd_err *err) {
  if (!(lambda[k - 1] > (double)n * DBL_EPSILON * lambda[0]) || !(lambda[0] > 0.0)) {
    size_t r = 0;
    while (r < k && lambda[r] > (double)n * DBL_EPSILON * lambda[0]) {
      r++;
    }
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'k': %zu (allowed: k <= %zu, the numerical rank of the "
                    "samples' %s: eigenvalue %zu is %g, eigenvalue 1 is %g)",
                    k, r, "matrix", k, lambda[k - 1], lambda[0]);
  }
  return DPD_OK;
}

/* Coordinates [a, a + len) of rows [i0, i0 + b) into buf (b x len, row-major), centred. */
static int get_block(dpd_pca_rows_fn rows, void *user, const double *mean, size_t i0, size_t b,
                     size_t a, size_t len, double *buf, dpd_err *err) {
  int status;
  for (size_t i = 0; i < b; i++) {
    double *x = buf + i * len;
    if ((status = rows(user, i0 + i, a, len, x, err)) < 0) {
      return status;
    }
    if (mean != NULL) {
      for (size_t l = 0; l < len; l++) {
        x[l] -= mean[a + l];
      }
    }
  }
  return DPD_OK;
}

int dpd_pca_compute(const dpd_pca_config *cfg, dpd_pca_rows_fn rows, void *user,
                    dpd_pca_result **out, dpd_err *err) {
  const dpd_pca_route route = dpd_pca_route_get(cfg);
  const size_t m = cfg->m, p = cfg->p, k = cfg->k;
  dpd_pca_result *res = NULL;
  double *S = NULL, *buf = NULL, *U = NULL;
  int status;
  *out = NULL;
  if ((status = validate(cfg, route, err)) < 0) {
    return status;
  }
  const double d = cfg->center ? (double)(m - 1) : (double)m;
  res = calloc(1, sizeof *res);
  if (res == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  res->m = m;
  res->p = p;
  res->k = k;
  res->center = cfg->center != 0;
  res->route = route;
  res->eigenvalues = malloc(k * sizeof *res->eigenvalues);
  res->V = malloc(p * k * sizeof *res->V);
  res->mean = calloc(p, sizeof *res->mean);
  if (res->eigenvalues == NULL || res->V == NULL || res->mean == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (PCA result, p = %zu, k = %zu)", p, k);
    goto done;
  }
  if (route == DPD_PCA_ROUTE_COVARIANCE) {
    const size_t B = cfg->block < m ? cfg->block : m;
    S = calloc(p * p, sizeof *S);
    buf = malloc(B * p * sizeof *buf);
    if (S == NULL || buf == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (PCA covariance, p = %zu)", p);
      goto done;
    }
    if (cfg->center) { /* pass 1: the mean, rows added in index order */
      for (size_t i = 0; i < m; i++) {
        if ((status = rows(user, i, 0, p, buf, err)) < 0) {
          goto done;
        }
        for (size_t l = 0; l < p; l++) {
          res->mean[l] += buf[l];
        }
      }
      for (size_t l = 0; l < p; l++) {
        res->mean[l] /= (double)m;
      }
    }
    for (size_t i0 = 0; i0 < m; i0 += B) { /* pass 2: S += Y_b^T Y_b */
      const size_t b = m - i0 < B ? m - i0 : B;
      if ((status = get_block(rows, user, cfg->center ? res->mean : NULL, i0, b, 0, p, buf, err)) <
          0) {
        goto done;
      }
      cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)p, (int)b, 1.0 / d, buf, (int)p, 1.0,
                  S, (int)p);
    }
    for (size_t l = 0; l < p; l++) {
      res->trace += S[l * p + l];
    }
    if ((status = top_eigen(S, p, k, res->eigenvalues, res->V, err)) < 0 ||
        (status = rank_check(res->eigenvalues, k, p, err)) < 0) {
      goto done;
    }
  } else {
    const size_t C = cfg->chunk < p ? cfg->chunk : p;
    S = calloc(m * m, sizeof *S);
    buf = malloc(m * C * sizeof *buf);
    U = malloc(m * k * sizeof *U);
    if (S == NULL || buf == NULL || U == NULL) {
      status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (PCA Gram matrix, m = %zu)", m);
      goto done;
    }
    if (cfg->center) { /* pass 1: the mean, chunk by chunk, rows in index order */
      for (size_t a = 0; a < p; a += C) {
        const size_t len = p - a < C ? p - a : C;
        if ((status = get_block(rows, user, NULL, 0, m, a, len, buf, err)) < 0) {
          goto done;
        }
        for (size_t i = 0; i < m; i++) {
          for (size_t l = 0; l < len; l++) {
            res->mean[a + l] += buf[i * len + l];
          }
        }
        for (size_t l = 0; l < len; l++) {
          res->mean[a + l] /= (double)m;
        }
      }
    }
    for (size_t a = 0; a < p; a += C) { /* pass 2: T += Y_c Y_c^T / d */
      const size_t len = p - a < C ? p - a : C;
      if ((status = get_block(rows, user, cfg->center ? res->mean : NULL, 0, m, a, len, buf, err)) <
          0) {
        goto done;
      }
      cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)m, (int)len, 1.0 / d, buf, (int)len,
                  1.0, S, (int)m);
    }
    for (size_t i = 0; i < m; i++) {
      res->trace += S[i * m + i];
    }
    if ((status = top_eigen(S, m, k, res->eigenvalues, U, err)) < 0 ||
        (status = rank_check(res->eigenvalues, k, m, err)) < 0) {
      goto done;
    }
    for (size_t j = 0; j < k; j++) { /* U's columns scaled: V = Y^T U diag(1/sqrt(d lambda)) */
      const double s = 1.0 / sqrt(d * res->eigenvalues[j]);
      for (size_t i = 0; i < m; i++) {
        U[i * k + j] *= s;
      }
    }
    for (size_t a = 0; a < p; a += C) { /* pass 3: V[a.., :] = Y_c^T U */
      const size_t len = p - a < C ? p - a : C;
      if ((status = get_block(rows, user, cfg->center ? res->mean : NULL, 0, m, a, len, buf, err)) <
          0) {
        goto done;
      }
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)len, (int)k, (int)m, 1.0, buf,
                  (int)len, U, (int)k, 0.0, res->V + a * k, (int)k);
    }
  }
  fix_signs(res->V, p, k);
done:
  free(S);
  free(buf);
  free(U);
  if (status < 0) {
    dpd_pca_result_free(res);
    res = NULL;
  }
  *out = res;
  return status;
}

typedef struct {
  const double *X;
  size_t ld;
} dense_rows;

static int dense_row(void *user, size_t i, size_t a, size_t len, double *x, dpd_err *err) {
  const dense_rows *d = user;
  (void)err;
  memcpy(x, d->X + i * d->ld + a, len * sizeof *x);
  return 0;
}

int dpd_pca_compute_dense(const dpd_pca_config *cfg, const double *X, size_t ld,
                          dpd_pca_result **out, dpd_err *err) {
  dense_rows d = {X, ld};
  *out = NULL;
  if (ld < cfg->p) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'ld': %zu (allowed: ld >= p = %zu)", ld,
                    cfg->p);
  }
  return dpd_pca_compute(cfg, dense_row, &d, out, err);
}
