/* Linear regression on a dataset from a file: reading, splitting, preprocessing, the empirical
 * covariance, its eigen-decomposition, the least-squares fit and the diagnostics (data_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Golub & Van Loan, Matrix Computations (4th ed.), 5.5 (minimum-norm least squares
 * through the eigen-decomposition of the normal equations) and 8.1; LAPACK dsyevr (Dhillon &
 * Parlett, Linear Algebra Appl. 387 (2004) 1-28); Knuth, TAOCP vol. 2, 3.4.2 (the shuffle).
 *
 * Three passes over the population rows, none of which copies the data:
 *  1. the feature means (rows added in index order) and which features vary;
 *  2. Sigma_raw = (1/n) sum_j (X_j - mean)(X_j - mean)^T by cblas_dsyrk on blocks of rows
 *     converted to doubles (memory O(block d)), and b_raw = (1/n) sum_j (X_j - mean) y_j by dgemv;
 *     then scale = sqrt(d / tr Sigma_raw), Sigma^ = scale^2 Sigma_raw, b = scale b_raw;
 *  3. after the eigen-decomposition and the fit, per row x_j (exactly as dpd__lrdata_row makes
 *     it): a_j, z_j and the projections u_k^T x_j (blocked dgemm against the first `rank` columns
 *     of U) for the leverage and the kurtosis.
 * Why centre before the product rather than subtract mean mean^T afterwards: the latter loses
 * every digit of a feature whose mean is large against its spread (pixels near 255).
 *
 * Threads: the passes are one thread around the BLAS calls, which run on OpenBLAS's own threads;
 * every sum over rows runs in row order, so the results do not depend on cfg->threads (not read
 * here). Why no OpenMP loop around the BLAS calls: converting a block costs a few percent of the
 * dsyrk/dgemm it feeds, and OpenMP workers spinning after each region (libgomp's default wait
 * policy) took the cores from OpenBLAS's threads: 3x the CPU time of the covariance pass at
 * d = 784, N = 60000 on two cores. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/rng.h"
#include "linreg/data_impl.h"

/* Rows converted per BLAS call: 512 rows of d doubles (3.2 MB at d = 784) keep dsyrk near its
 * peak rate while the buffer stays O(d). */
#define BLOCK_ROWS 512

/* The largest d whose d x d matrices the BLAS index (int) can address. */
#define MAX_D 46340

static size_t min_size(size_t a, size_t b) {
  return a < b ? a : b;
}

static int cmp_size(const void *a, const void *b) {
  const size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

void dpd__lrdata_free(dpd__lrdata *D) {
  if (D == NULL) {
    return;
  }
  dpd__datamat_close(&D->X);
  dpd__datamat_close(&D->Y);
  free(D->pop_idx);
  free(D->test_idx);
  free(D->mean);
  free(D->sigma);
  free(D->lambda);
  free(D->U);
  free(D->theta_hat);
  free(D->a);
  free(D->z);
  free(D->theta_eig);
  free(D->pc_values);
  free(D->pc_mult);
  free(D);
}

/* ---- configuration and files ---- */

static int check_config(const dpd__lrdata_config *cfg, dpd_err *err) {
  if (cfg->features_path == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': no file given (allowed: file:PATH)",
                    cfg->features_key);
  }
  if (!(cfg->test_fraction >= 0.0 && cfg->test_fraction < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_fraction': %g (allowed: 0 <= test_fraction < 1)",
                    cfg->test_fraction);
  }
  return DPD_OK;
}

/* The split's row counts: n_test = floor(test_fraction N), at least 1 when test_fraction > 0;
 * at least 2 population rows. */
static int split_counts(const dpd__lrdata_config *cfg, size_t N, size_t *n_pop, size_t *n_test,
                        dpd_err *err) {
  size_t t = 0;
  if (cfg->test_fraction > 0.0) {
    t = (size_t)floor(cfg->test_fraction * (double)N);
    if (t < 1) {
      t = 1;
    }
  }
  if (t > N || N - t < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_fraction': %g holds out %zu of the %zu rows, leaving "
                    "%zu (allowed: a fraction that leaves at least 2 population rows)",
                    cfg->test_fraction, t, N, t > N ? (size_t)0 : N - t);
  }
  *n_pop = N - t;
  *n_test = t;
  return DPD_OK;
}

/* Opens both files and checks their shapes against each other (X, Y zeroed by the opens, so that
 * dpd__datamat_close is safe on failure). */
static int open_files(const dpd__lrdata_config *cfg, dpd__datamat *X, dpd__datamat *Y,
                      dpd_err *err) {
  int status;
  memset(Y, 0, sizeof *Y);
  if ((status = dpd__datamat_open(cfg->features_key, cfg->features_path, 2, cfg->max_bytes, X,
                                  err)) < 0) {
    return status;
  }
  if (X->cols > MAX_D) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' has %zu columns (allowed: at most %d, the BLAS "
                    "index range of the d x d covariance)",
                    cfg->features_key, cfg->features_path, X->cols, MAX_D);
  }
  if (cfg->targets_path == NULL) {
    return DPD_OK;
  }
  if ((status = dpd__datamat_open(cfg->targets_key, cfg->targets_path, 2, cfg->max_bytes, Y, err)) <
      0) {
    return status;
  }
  if (Y->cols != 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' has %zu columns (allowed: one value per row: a "
                    "1-D .npy or a one-column text file)",
                    cfg->targets_key, cfg->targets_path, Y->cols);
  }
  if (Y->rows != X->rows) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' has %zu rows but '%s' ('%s') has %zu (allowed: "
                    "one target per feature row)",
                    cfg->targets_key, cfg->targets_path, Y->rows, cfg->features_key,
                    cfg->features_path, X->rows);
  }
  return DPD_OK;
}

/* Bytes a prepared dataset holds beyond the files: the d x d matrices (Sigma^, U and dsyevr's
 * copy), dsyevr's workspace, the row blocks, the per-row arrays (indices, a, z, the top
 * projections of the kurtosis). */
static double held_bytes(size_t N, size_t d, int file_targets) {
  const double n = (double)N, dd = (double)d, B = (double)min_size(BLOCK_ROWS, N);
  double doubles = 3.0 * dd * dd + 40.0 * dd + 2.0 * B * dd + 2.0 * B;
  doubles += n * (2.0 + (file_targets ? 1.0 : 0.0) + (double)DPD_LRDATA_TOP);
  return 8.0 * doubles;
}

int dpd__lrdata_check(const dpd__lrdata_config *cfg, size_t *N, size_t *d, double *bytes,
                      dpd_err *err) {
  dpd__datamat X, Y;
  size_t n_pop, n_test;
  double bx = 0.0, by = 0.0;
  int status;
  memset(&X, 0, sizeof X);
  memset(&Y, 0, sizeof Y);
  if ((status = check_config(cfg, err)) < 0 || (status = open_files(cfg, &X, &Y, err)) < 0 ||
      (status = split_counts(cfg, X.rows, &n_pop, &n_test, err)) < 0 ||
      (status = dpd__datamat_bytes(cfg->features_key, cfg->features_path, &bx, err)) < 0 ||
      (cfg->targets_path != NULL &&
       (status = dpd__datamat_bytes(cfg->targets_key, cfg->targets_path, &by, err)) < 0)) {
    dpd__datamat_close(&X);
    dpd__datamat_close(&Y);
    return status;
  }
  *N = X.rows;
  *d = X.cols;
  *bytes = bx + by + held_bytes(X.rows, X.cols, cfg->targets_path != NULL);
  dpd__datamat_close(&X);
  dpd__datamat_close(&Y);
  return DPD_OK;
}

/* ---- the split ---- */

/* test_idx: n_test rows drawn without replacement by a partial Fisher-Yates shuffle of 0..N-1
 * (uniforms of stream (seed, DPD_RNG_STREAM_PROBLEM - 1), one per draw), then sorted; pop_idx:
 * the other rows, increasing. */
static int make_split(dpd__lrdata *D, uint64_t seed, dpd_err *err) {
  const size_t N = D->N;
  D->pop_idx = malloc(D->n_pop * sizeof *D->pop_idx);
  if (D->pop_idx == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (row indices, N = %zu)", N);
  }
  if (D->n_test == 0) {
    for (size_t j = 0; j < N; j++) {
      D->pop_idx[j] = j;
    }
    return DPD_OK;
  }
  size_t *perm = malloc(N * sizeof *perm);
  D->test_idx = malloc(D->n_test * sizeof *D->test_idx);
  if (perm == NULL || D->test_idx == NULL) {
    free(perm);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (the split, N = %zu)", N);
  }
  for (size_t j = 0; j < N; j++) {
    perm[j] = j;
  }
  dpd_rng rng;
  dpd_rng_init(&rng, seed, DPD_RNG_STREAM_PROBLEM - 1);
  for (size_t i = 0; i < D->n_test; i++) {
    const size_t left = N - i;
    size_t k = (size_t)(dpd_rng_uniform(&rng) * (double)left);
    if (k >= left) { /* u (1 - 2^-53) times a large count may round up to the count */
      k = left - 1;
    }
    const size_t tmp = perm[i];
    perm[i] = perm[i + k];
    perm[i + k] = tmp;
  }
  memcpy(D->test_idx, perm, D->n_test * sizeof *perm);
  free(perm);
  qsort(D->test_idx, D->n_test, sizeof *D->test_idx, cmp_size);
  for (size_t r = 0, t = 0, j = 0; r < N; r++) {
    if (t < D->n_test && D->test_idx[t] == r) {
      t++;
    } else {
      D->pop_idx[j++] = r;
    }
  }
  return DPD_OK;
}

/* ---- preprocessing ---- */

/* Pass 1: the feature means over the population (summed in row order) and whether any feature
 * varies. A feature equal in every row gets exactly that value as its mean, so that centring
 * makes it exactly 0 (a sum of n copies divided by n need not return the value). */
static int feature_means(dpd__lrdata *D, const dpd__lrdata_config *cfg, dpd_err *err) {
  const size_t d = D->d, n = D->n_pop;
  double *row = malloc(d * sizeof *row), *first = malloc(d * sizeof *first);
  int *varies = calloc(d, sizeof *varies);
  int status = DPD_OK, any = 0;
  if (row == NULL || first == NULL || varies == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (feature means, d = %zu)", d);
    goto done;
  }
  dpd__datamat_row(&D->X, D->pop_idx[0], first);
  for (size_t k = 0; k < d; k++) {
    D->mean[k] = first[k];
    varies[k] = cfg->center ? 0 : first[k] != 0.0;
  }
  for (size_t j = 1; j < n; j++) {
    dpd__datamat_row(&D->X, D->pop_idx[j], row);
    for (size_t k = 0; k < d; k++) {
      D->mean[k] += row[k];
      varies[k] |= row[k] != first[k];
    }
  }
  for (size_t k = 0; k < d; k++) {
    any |= varies[k];
    if (!cfg->center) {
      D->mean[k] = 0.0;
    } else if (varies[k]) {
      D->mean[k] /= (double)n;
    } else {
      D->mean[k] = first[k];
    }
  }
  if (!any) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s': all features are constant over the %zu "
                      "population rows%s (allowed: at least one feature that varies)",
                      cfg->features_key, cfg->features_path, n,
                      cfg->center ? "" : " (and zero: centring is off)");
  }
done:
  free(row);
  free(first);
  free(varies);
  return status;
}

/* The targets' centre and factor over the population (file targets). */
static int target_factors(dpd__lrdata *D, const dpd__lrdata_config *cfg, dpd_err *err) {
  const size_t n = D->n_pop;
  const double y0 = dpd__datamat_at(&D->Y, D->pop_idx[0], 0);
  double sum = 0.0, ss = 0.0, mean;
  int varies = 0;
  for (size_t j = 0; j < n; j++) {
    const double y = dpd__datamat_at(&D->Y, D->pop_idx[j], 0);
    sum += y;
    varies |= y != y0;
  }
  mean = varies ? sum / (double)n : y0;
  if (!varies && (cfg->target_unit || cfg->center)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s': the targets are constant (%g) over the %zu "
                    "population rows (allowed: targets that vary, when they are %s)",
                    cfg->targets_key, cfg->targets_path, y0, n,
                    cfg->target_unit ? "scaled to unit variance" : "centred");
  }
  for (size_t j = 0; j < n; j++) {
    const double e = dpd__datamat_at(&D->Y, D->pop_idx[j], 0) - mean;
    ss += e * e;
  }
  D->y_mean = cfg->center ? mean : 0.0;
  D->y_scale = cfg->target_unit ? 1.0 / sqrt(ss / (double)n) : 1.0;
  if (!isfinite(D->y_scale)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s': the targets' spread %g cannot be scaled to 1 "
                    "(allowed: a variance within the double range)",
                    cfg->targets_key, cfg->targets_path, sqrt(ss / (double)n));
  }
  return DPD_OK;
}

void dpd__lrdata_row(const dpd__lrdata *D, size_t j, double *x, double *y) {
  const size_t r = D->pop_idx[j], d = D->d;
  dpd__datamat_row(&D->X, r, x);
  for (size_t k = 0; k < d; k++) {
    x[k] = D->scale * (x[k] - D->mean[k]);
  }
  if (!D->model_targets && y != NULL) {
    *y = D->y_scale * (dpd__datamat_at(&D->Y, r, 0) - D->y_mean);
  }
}

/* Population rows [j0, j0 + b) into buf (b x d): centred, times `scale`; their targets into yb
 * (file targets, yb not NULL). */
static void load_block(const dpd__lrdata *D, size_t j0, size_t b, double scale, double *buf,
                       double *yb) {
  const size_t d = D->d;
  for (size_t i = 0; i < b; i++) {
    const size_t r = D->pop_idx[j0 + i];
    double *x = buf + i * d;
    dpd__datamat_row(&D->X, r, x);
    for (size_t k = 0; k < d; k++) {
      x[k] = scale * (x[k] - D->mean[k]);
    }
    if (yb != NULL) {
      yb[i] = D->y_scale * (dpd__datamat_at(&D->Y, r, 0) - D->y_mean);
    }
  }
}

/* ---- Sigma^, its eigen-decomposition, the fit ---- */

/* Pass 2: Sigma^ (full symmetric), trace_raw, scale and b = X^T y / n (file targets). */
static int covariance(dpd__lrdata *D, const dpd__lrdata_config *cfg, double *b, dpd_err *err) {
  const size_t d = D->d, n = D->n_pop, B = min_size(BLOCK_ROWS, n);
  double *buf = malloc(B * d * sizeof *buf), *yb = malloc(B * sizeof *yb);
  if (buf == NULL || yb == NULL) {
    free(buf);
    free(yb);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (row block, d = %zu)", d);
  }
  for (size_t j0 = 0; j0 < n; j0 += B) {
    const size_t nb = min_size(B, n - j0);
    load_block(D, j0, nb, 1.0, buf, D->model_targets ? NULL : yb);
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)d, (int)nb, 1.0 / (double)n, buf,
                (int)d, 1.0, D->sigma, (int)d);
    if (!D->model_targets) {
      cblas_dgemv(CblasRowMajor, CblasTrans, (int)nb, (int)d, 1.0 / (double)n, buf, (int)d, yb, 1,
                  1.0, b, 1);
    }
  }
  free(buf);
  free(yb);
  D->trace_raw = 0.0;
  for (size_t k = 0; k < d; k++) {
    D->trace_raw += D->sigma[k * d + k];
  }
  if (!(D->trace_raw > 0.0) || !isfinite(D->trace_raw)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s': the features' total variance is %g (allowed: "
                    "finite, > 0)",
                    cfg->features_key, cfg->features_path, D->trace_raw);
  }
  D->scale = cfg->scale_trace ? sqrt((double)d / D->trace_raw) : 1.0;
  const double s2 = D->scale * D->scale;
  for (size_t k = 0; k < d; k++) {
    for (size_t l = k; l < d; l++) {
      D->sigma[k * d + l] *= s2;
      D->sigma[l * d + k] = D->sigma[k * d + l];
    }
    b[k] *= D->scale;
  }
  return DPD_OK;
}

/* All eigenpairs of Sigma^ (dsyevr on a copy): lambda non-increasing, U's columns in that order,
 * each column's entry of largest |.| positive (a sign rule, so that U does not depend on the
 * LAPACK build). Row-major upper = column-major lower: no transposition. */
static int eigen(dpd__lrdata *D, dpd_err *err) {
  const size_t d = D->d;
  double *A = malloc(d * d * sizeof *A), *w = malloc(d * sizeof *w), *Z = malloc(d * d * sizeof *Z);
  lapack_int *isuppz = malloc(2 * d * sizeof *isuppz), found = 0, info;
  int status = DPD_OK;
  if (A == NULL || w == NULL || Z == NULL || isuppz == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (eigenproblem, d = %zu)", d);
    goto done;
  }
  memcpy(A, D->sigma, d * d * sizeof *A);
  /* One OpenBLAS thread for the eigensolver: its threaded BLAS-2/3 calls change the last bits of
   * the eigenpairs with the thread count (dsyrk and dgemm here do not), and it takes 0.1 s at
   * d = 784. The count is restored after. */
  const int blas_threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'A', 'L', (lapack_int)d, A, (lapack_int)d, 0.0, 0.0,
                        0, 0, 0.0, &found, w, Z, (lapack_int)d, isuppz);
  openblas_set_num_threads(blas_threads);
  if (info != 0 || (size_t)found != d) {
    status = DPD_FAIL(err, DPD_ESOLVER,
                      "LAPACKE_dsyevr failed on the features' covariance (info = %d, %d of %zu "
                      "eigenvalues found)",
                      (int)info, (int)found, d);
    goto done;
  }
  for (size_t k = 0; k < d; k++) { /* ascending -> non-increasing */
    const double *z = Z + (d - 1 - k) * d;
    size_t best = 0;
    for (size_t i = 1; i < d; i++) {
      if (fabs(z[i]) > fabs(z[best])) {
        best = i;
      }
    }
    const double sign = z[best] < 0.0 ? -1.0 : 1.0;
    D->lambda[k] = w[d - 1 - k];
    for (size_t i = 0; i < d; i++) {
      D->U[i * d + k] = sign * z[i];
    }
  }
done:
  free(A);
  free(w);
  free(Z);
  free(isuppz);
  return status;
}

/* theta^* = sum over the rank of (u_k . b / lambda_k) u_k: the minimum-norm solution of
 * Sigma^ theta = b. theta_eig holds its components. */
static void fit(dpd__lrdata *D, const double *b) {
  const size_t d = D->d;
  for (size_t k = 0; k < d; k++) {
    double ub = 0.0;
    if (k < D->diag.rank) {
      for (size_t i = 0; i < d; i++) {
        ub += D->U[i * d + k] * b[i];
      }
      ub /= D->lambda[k];
    }
    D->theta_eig[k] = ub;
  }
  dpd__lrdata_to_original(D, D->theta_eig, D->theta_hat);
}

void dpd__lrdata_to_original(const dpd__lrdata *D, const double *th_eig, double *out) {
  cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)D->d, (int)D->d, 1.0, D->U, (int)D->d, th_eig, 1,
              0.0, out, 1);
}

/* ---- pass 3: a, z and the diagnostics ---- */

/* Excess kurtosis of v[0 .. n) with stride `stride` (two passes about the mean; NAN when the
 * variance is 0). */
static double excess_kurtosis(const double *v, size_t n, size_t stride) {
  double m = 0.0, m2 = 0.0, m4 = 0.0;
  for (size_t j = 0; j < n; j++) {
    m += v[j * stride];
  }
  m /= (double)n;
  for (size_t j = 0; j < n; j++) {
    const double e = v[j * stride] - m, e2 = e * e;
    m2 += e2;
    m4 += e2 * e2;
  }
  m2 /= (double)n;
  m4 /= (double)n;
  return m2 > 0.0 ? m4 / (m2 * m2) - 3.0 : NAN;
}

static int rows_pass(dpd__lrdata *D, dpd_err *err) {
  const size_t d = D->d, n = D->n_pop, B = min_size(BLOCK_ROWS, n), rank = D->diag.rank;
  const size_t ntop = min_size(D->diag.ntop, rank);
  double *buf = malloc(B * d * sizeof *buf), *yb = malloc(B * sizeof *yb);
  double *P = malloc(B * rank * sizeof *P), *h = malloc(B * sizeof *h);
  double *top = malloc((ntop > 0 ? ntop : 1) * n * sizeof *top), *inv = malloc(rank * sizeof *inv);
  double hsum = 0.0, hmax = 0.0;
  int status = DPD_OK;
  if (buf == NULL || yb == NULL || P == NULL || h == NULL || top == NULL || inv == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (row pass, d = %zu)", d);
    goto done;
  }
  for (size_t k = 0; k < rank; k++) {
    inv[k] = 1.0 / (D->lambda[k] * (double)n);
  }
  for (size_t j0 = 0; j0 < n; j0 += B) {
    const size_t nb = min_size(B, n - j0);
    load_block(D, j0, nb, D->scale, buf, D->model_targets ? NULL : yb);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)rank, (int)d, 1.0, buf,
                (int)d, D->U, (int)d, 0.0, P, (int)rank);
    for (size_t i = 0; i < nb; i++) {
      const double *x = buf + i * d, *p = P + i * rank;
      double q = 0.0, hj = 0.0;
      for (size_t k = 0; k < d; k++) {
        q += x[k] * x[k];
      }
      D->a[j0 + i] = q / (double)d;
      for (size_t k = 0; k < rank; k++) {
        hj += p[k] * p[k] * inv[k];
      }
      h[i] = hj;
      for (size_t k = 0; k < ntop; k++) {
        top[(j0 + i) * ntop + k] = p[k];
      }
      if (!D->model_targets) {
        double fx = 0.0;
        for (size_t k = 0; k < d; k++) {
          fx += x[k] * D->theta_hat[k];
        }
        D->z[j0 + i] = yb[i] - fx;
      }
    }
    for (size_t i = 0; i < nb; i++) { /* in row order */
      hsum += h[i];
      hmax = h[i] > hmax ? h[i] : hmax;
    }
  }
  {
    double am = 0.0, av = 0.0;
    for (size_t j = 0; j < n; j++) {
      am += D->a[j];
    }
    am /= (double)n;
    for (size_t j = 0; j < n; j++) {
      av += (D->a[j] - am) * (D->a[j] - am);
    }
    D->diag.norm_cv = sqrt(av / (double)n) / am;
  }
  for (size_t k = 0; k < D->diag.ntop; k++) {
    D->diag.kurt_top[k] = k < ntop ? excess_kurtosis(top + k, n, ntop) : NAN;
  }
  D->diag.leverage_max = hmax;
  D->diag.leverage_ratio = hmax / (hsum / (double)n);
  D->diag.kurt_resid = NAN;
  D->zeta2 = 0.0;
  if (!D->model_targets) {
    for (size_t j = 0; j < n; j++) {
      D->zeta2 += D->z[j] * D->z[j];
    }
    D->zeta2 /= (double)n;
    D->diag.kurt_resid = excess_kurtosis(D->z, n, 1);
  }
done:
  free(buf);
  free(yb);
  free(P);
  free(h);
  free(top);
  free(inv);
  return status;
}

/* ---- create ---- */

static int allocate(dpd__lrdata *D, dpd_err *err) {
  const size_t d = D->d, n = D->n_pop;
  D->mean = calloc(d, sizeof *D->mean);
  D->sigma = calloc(d * d, sizeof *D->sigma);
  D->lambda = malloc(d * sizeof *D->lambda);
  D->U = malloc(d * d * sizeof *D->U);
  D->a = malloc(n * sizeof *D->a);
  D->pc_values = malloc(d * sizeof *D->pc_values);
  D->pc_mult = malloc(d * sizeof *D->pc_mult);
  int ok = D->mean != NULL && D->sigma != NULL && D->lambda != NULL && D->U != NULL &&
           D->a != NULL && D->pc_values != NULL && D->pc_mult != NULL;
  if (!D->model_targets) {
    D->theta_hat = malloc(d * sizeof *D->theta_hat);
    D->theta_eig = malloc(d * sizeof *D->theta_eig);
    D->z = malloc(n * sizeof *D->z);
    ok = ok && D->theta_hat != NULL && D->theta_eig != NULL && D->z != NULL;
  }
  return ok ? DPD_OK
            : DPD_FAIL(err, DPD_ENOMEM, "out of memory (dataset of %zu x %zu)", D->N, D->d);
}

int dpd__lrdata_create(const dpd__lrdata_config *cfg, dpd__lrdata **out, dpd_err *err) {
  dpd__lrdata *D = calloc(1, sizeof *D);
  double *b = NULL;
  int status;
  *out = NULL;
  if (D == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (dataset)");
  }
  D->model_targets = cfg->targets_path == NULL;
  if ((status = check_config(cfg, err)) < 0 || (status = open_files(cfg, &D->X, &D->Y, err)) < 0) {
    goto fail;
  }
  D->N = D->X.rows;
  D->d = D->X.cols;
  D->scale = D->y_scale = 1.0;
  if ((status = split_counts(cfg, D->N, &D->n_pop, &D->n_test, err)) < 0 ||
      (status = make_split(D, cfg->seed, err)) < 0 || (status = allocate(D, err)) < 0 ||
      (status = feature_means(D, cfg, err)) < 0 ||
      (!D->model_targets && (status = target_factors(D, cfg, err)) < 0)) {
    goto fail;
  }
  b = calloc(D->d, sizeof *b);
  if (b == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory (d = %zu)", D->d);
    goto fail;
  }
  if ((status = covariance(D, cfg, b, err)) < 0 || (status = eigen(D, err)) < 0) {
    goto fail;
  }
  {
    const size_t d = D->d;
    const double cut = DPD_LRDATA_LAMBDA_FLOOR * D->lambda[0];
    double s1 = 0.0, s2 = 0.0;
    D->diag.ntop = min_size(DPD_LRDATA_TOP, d);
    D->diag.rank = 0;
    while (D->diag.rank < d && D->lambda[D->diag.rank] > cut) {
      D->diag.rank++;
    }
    D->n_floored = d - D->diag.rank;
    for (size_t k = d; k-- > 0;) { /* smallest first */
      s1 += D->lambda[k];
      s2 += D->lambda[k] * D->lambda[k];
    }
    D->diag.eff_rank = s1 * s1 / s2;
  }
  if (!D->model_targets) {
    fit(D, b);
  }
  if ((status = rows_pass(D, err)) < 0) {
    goto fail;
  }
  free(b);
  *out = D;
  return DPD_OK;
fail:
  free(b);
  dpd__lrdata_free(D);
  return status;
}

/* ---- the ODE's problem ---- */

int dpd__lrdata_problem_config(dpd__lrdata *D, dpd_linreg_problem_config *pc, dpd_err *err) {
  const size_t d = D->d;
  const double floor_value = DPD_LRDATA_LAMBDA_FLOOR * D->lambda[0];
  double sum = 0.0;
  D->n_floored = 0;
  for (size_t k = 0; k < d; k++) {
    if (D->lambda[k] > floor_value) {
      D->pc_values[k] = D->lambda[k];
    } else {
      D->pc_values[k] = floor_value;
      D->n_floored++;
    }
    D->pc_mult[k] = 1;
  }
  for (size_t k = d; k-- > 0;) {
    sum += D->pc_values[k];
  }
  /* dpd_linreg_problem_create renormalises the eigenvalues to mean 1: without the trace
   * scaling the ODE would describe other data than the rows. */
  if (!(fabs(sum - (double)d) <= 1e-6 * (double)d)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid preprocessing for the deterministic equivalent: tr Sigma^ = %g but d "
                    "= %zu (allowed: features scaled to tr Sigma^ = d)",
                    sum, d);
  }
  pc->d = d;
  pc->spectrum = DPD_SPECTRUM_LIST;
  pc->values = D->pc_values;
  pc->mult = D->pc_mult;
  pc->nvalues = d;
  if (!D->model_targets) {
    pc->theta = DPD_THETA_GIVEN;
    pc->theta_given = D->theta_eig;
    pc->theta_norm = 0.0;
  }
  return DPD_OK;
}
