/* Ornstein-Uhlenbeck theory of unclipped full-batch DP-GD on random features (docs/math.md §2.4).
 * SPDX-License-Identifier: MIT
 *
 * References
 *  [BM25]  S. Bombari, M. Mondelli, "Privacy for free in the overparameterized regime", PNAS 122
 *          (2025) e2423072122: the OU approximation and its mean (gradient flow); the covariance
 *          and the exact discrete moments are derived in notes-rf-nc-sp.md A.5 (and verified
 *          there by Monte Carlo).
 *  [GVL13] G. Golub, C. Van Loan, "Matrix Computations", 4th ed., Sec. 8.6 (SVD from the
 *          symmetric eigenproblem of A A^T) and Sec. 5.5.4 (minimum-norm least squares).
 *  [LAPACK] E. Anderson et al., LAPACK Users' Guide, 3rd ed. (dsyevd: divide and conquer).
 *
 * Why the n x n eigenproblem. With Phi Phi^T = U diag(s_j^2) U^T, the right singular vectors are
 * v_j = Phi^T u_j / s_j, so every p-vector we need lies in the row space, written Phi^T w with an
 * n-vector w: theta* = sum_j (u_j^T y / s_j) v_j = Phi^T U diag(1/s_j^2) U^T y. Test projections
 * are Phi_test v_j = (Phi_test Phi^T) u_j / s_j. The null-space part of the covariance needs only
 * Tr((I - P_row) Sigma_phi) = (||Phi_test||_F^2 - sum_j ||Phi_test v_j||^2) / m.
 *
 * Per-mode factors are evaluated without cancellation for small eta a_j or small t:
 *   continuous mean 1 - e^{-a t} = -expm1(-a t), variance (1 - e^{-2 a t}) / (2a);
 *   discrete mean 1 - g^k = -expm1(k log1p(-eta a)) (g > 0),
 *   variance eta sum_{i<k} g^{2i} = eta (1 - g^{2k}) / (eta a (2 - eta a)). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "core/error_impl.h"
#include "dpdyn/ou.h"
#include "rf/rf_run_impl.h"

struct dpd_ou {
  dpd_ou_config config;
  size_t n;
  size_t p;
  size_t rank;
  const double *phi;  /* borrowed, n x p */
  double *y;          /* n */
  double *s;          /* n singular values, decreasing, 0 below the cutoff */
  double *u;          /* n x rank, row-major: column j is u_j */
  double *c;          /* rank coefficients u_j^T y / s_j (theta* = sum_j c_j v_j) */
  double *row_norm;   /* n, ||phi_i|| */
  double *theta_star; /* p */
};

dpd_ou_config dpd_ou_config_default(void) {
  dpd_ou_config c;
  c.rcond = DPD_OU_RCOND_DEFAULT;
  return c;
}

void dpd_ou_free(dpd_ou *ou) {
  if (ou == NULL) {
    return;
  }
  free(ou->y);
  free(ou->s);
  free(ou->u);
  free(ou->c);
  free(ou->row_norm);
  free(ou->theta_star);
  free(ou);
}

static int all_finite(const double *x, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (!isfinite(x[i])) {
      return 0;
    }
  }
  return 1;
}

int dpd_ou_create(const dpd_ou_config *config, const double *phi, size_t n, size_t p,
                  const double *y, dpd_ou **out, dpd_err *err) {
  dpd_ou *ou = NULL;
  double *g = NULL;
  double *w = NULL;
  double *tmp = NULL;
  dpd_ou_config cfg = (config != NULL) ? *config : dpd_ou_config_default();
  int status = DPD_OK;
  lapack_int info;
  double smax;

  if (out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "ou output pointer is NULL");
  }
  *out = NULL;
  if (phi == NULL || y == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "phi or y is NULL");
  }
  if (n < 1 || p < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "n = %zu, p = %zu are invalid: both must be >= 1", n, p);
  }
  if (!(cfg.rcond >= 0.0 && cfg.rcond < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "rcond = %g is invalid: the allowed range is [0, 1)",
                    cfg.rcond);
  }
  if (n > (size_t)INT32_MAX || p > (size_t)INT32_MAX) {
    return DPD_FAIL(err, DPD_EINVAL, "n = %zu, p = %zu exceed the LAPACK integer range", n, p);
  }
  if (!all_finite(phi, n * p)) {
    return DPD_FAIL(err, DPD_EINVAL, "phi has a non-finite entry");
  }
  if (!all_finite(y, n)) {
    return DPD_FAIL(err, DPD_EINVAL, "y has a non-finite entry");
  }

  ou = calloc(1, sizeof *ou);
  if (ou == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "ou: out of memory");
  }
  ou->config = cfg;
  ou->n = n;
  ou->p = p;
  ou->phi = phi;
  ou->y = malloc(n * sizeof *ou->y);
  ou->s = calloc(n, sizeof *ou->s);
  ou->u = malloc(n * n * sizeof *ou->u);
  ou->c = malloc(n * sizeof *ou->c);
  ou->row_norm = malloc(n * sizeof *ou->row_norm);
  ou->theta_star = malloc(p * sizeof *ou->theta_star);
  g = malloc(n * n * sizeof *g);
  w = malloc(n * sizeof *w);
  tmp = calloc(n, sizeof *tmp);
  if (ou->y == NULL || ou->s == NULL || ou->u == NULL || ou->c == NULL || ou->row_norm == NULL ||
      ou->theta_star == NULL || g == NULL || w == NULL || tmp == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "ou: out of memory (n = %zu, p = %zu)", n, p);
    goto cleanup;
  }
  for (size_t i = 0; i < n; i++) {
    ou->y[i] = y[i];
    ou->row_norm[i] = cblas_dnrm2((int)p, phi + i * p, 1);
  }

  /* Gram matrix (upper triangle) and its eigendecomposition, ascending eigenvalues. */
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)p, 1.0, phi, (int)p, 0.0, g,
              (int)n);
  info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)n, g, (lapack_int)n, w);
  if (info != 0) {
    status = DPD_FAIL(err, DPD_ESOLVER, "LAPACKE_dsyevd failed with info = %d", (int)info);
    goto cleanup;
  }
  smax = (w[n - 1] > 0.0) ? sqrt(w[n - 1]) : 0.0;
  /* Keep the modes above the cutoff, in decreasing order. */
  ou->rank = 0;
  for (size_t k = n; k-- > 0;) {
    double sk = (w[k] > 0.0) ? sqrt(w[k]) : 0.0;
    if (!(sk > cfg.rcond * smax) || !(sk > 0.0)) {
      break;
    }
    ou->s[ou->rank] = sk;
    for (size_t i = 0; i < n; i++) {
      ou->u[i * n + ou->rank] = g[i * n + k];
    }
    ou->rank++;
  }
  /* Compact u to n x rank. */
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < ou->rank; j++) {
      ou->u[i * ou->rank + j] = ou->u[i * n + j];
    }
  }
  /* c_j = u_j^T y / s_j; theta* = Phi^T (sum_j c_j / s_j u_j). */
  for (size_t j = 0; j < ou->rank; j++) {
    double dot = 0.0;
    for (size_t i = 0; i < n; i++) {
      dot += ou->u[i * ou->rank + j] * y[i];
    }
    ou->c[j] = dot / ou->s[j];
  }
  for (size_t i = 0; i < n; i++) {
    double acc = 0.0;
    for (size_t j = 0; j < ou->rank; j++) {
      acc += ou->u[i * ou->rank + j] * ou->c[j] / ou->s[j];
    }
    tmp[i] = acc;
  }
  cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)p, 1.0, phi, (int)p, tmp, 1, 0.0,
              ou->theta_star, 1);
  *out = ou;
  ou = NULL;

cleanup:
  free(g);
  free(w);
  free(tmp);
  dpd_ou_free(ou);
  return status;
}

size_t dpd_ou_rank_get(const dpd_ou *ou) {
  return ou->rank;
}

void dpd_ou_singular_values_get(const dpd_ou *ou, double *s) {
  for (size_t j = 0; j < ou->n; j++) {
    s[j] = ou->s[j];
  }
}

void dpd_ou_theta_star_get(const dpd_ou *ou, double *theta) {
  for (size_t k = 0; k < ou->p; k++) {
    theta[k] = ou->theta_star[k];
  }
}

static int check_params(const dpd_ou *ou, const dpd_ou_params *par, dpd_err *err) {
  if (ou == NULL || par == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "ou or params is NULL");
  }
  if (!(par->eta > 0.0) || isinf(par->eta)) {
    return DPD_FAIL(err, DPD_EINVAL, "eta = %g is invalid: the allowed range is (0, inf)",
                    par->eta);
  }
  if (!(par->clip > 0.0) || isinf(par->clip)) {
    return DPD_FAIL(err, DPD_EINVAL, "clip C = %g is invalid: the allowed range is (0, inf)",
                    par->clip);
  }
  if (!(par->sigma >= 0.0) || isinf(par->sigma)) {
    return DPD_FAIL(err, DPD_EINVAL, "sigma = %g is invalid: the allowed range is [0, inf)",
                    par->sigma);
  }
  if (par->time != DPD_OU_CONTINUOUS && par->time != DPD_OU_DISCRETE) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "time = %d is invalid: use DPD_OU_CONTINUOUS (0) or DPD_OU_DISCRETE (1)",
                    (int)par->time);
  }
  return DPD_OK;
}

/* Mean factor 1 - e^{-a t} (continuous) or 1 - g^k (discrete) of a mode with rate a. */
static double mean_factor(double a, const dpd_ou_params *par, size_t steps) {
  double k = (double)steps;
  if (par->time == DPD_OU_CONTINUOUS) {
    return -expm1(-a * par->eta * k);
  }
  {
    double ea = par->eta * a;
    double gj = 1.0 - ea;
    if (gj > 0.0) {
      return -expm1(k * log1p(-ea));
    }
    return 1.0 - pow(gj, k);
  }
}

/* Covariance weight per unit Sigma_n^2 of a mode with rate a (a = 0: the null space). */
static double cov_weight(double a, const dpd_ou_params *par, size_t steps) {
  double k = (double)steps;
  double eta = par->eta;
  if (par->time == DPD_OU_CONTINUOUS) {
    double t = eta * k;
    if (a == 0.0) {
      return t;
    }
    return -expm1(-2.0 * a * t) / (2.0 * a);
  }
  {
    double ea = eta * a;
    double gj = 1.0 - ea;
    double one_m_g2 = ea * (2.0 - ea); /* 1 - g^2 without cancellation */
    double log_abs_g;
    if (one_m_g2 == 0.0) {
      return eta * k; /* |g| = 1: every term is 1 */
    }
    if (gj == 0.0) {
      return (steps > 0) ? eta : 0.0;
    }
    log_abs_g = (gj > 0.0) ? log1p(-ea) : log(-gj);
    return eta * (-expm1(2.0 * k * log_abs_g)) / one_m_g2;
  }
}

static double mode_rate(const dpd_ou *ou, size_t j) {
  return 2.0 * ou->s[j] * ou->s[j] / (double)ou->n;
}

int dpd_ou_mean_eval(const dpd_ou *ou, const dpd_ou_params *par, size_t steps, double *theta,
                     dpd_err *err) {
  double *wv;
  size_t n;
  size_t r;
  int status = check_params(ou, par, err);
  if (status < 0) {
    return status;
  }
  if (theta == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "theta output is NULL");
  }
  n = ou->n;
  r = ou->rank;
  wv = calloc(n, sizeof *wv);
  if (wv == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "ou mean: out of memory");
  }
  /* theta_bar = sum_j f_j c_j v_j = Phi^T sum_j (f_j c_j / s_j) u_j. */
  for (size_t j = 0; j < r; j++) {
    double coef = mean_factor(mode_rate(ou, j), par, steps) * ou->c[j] / ou->s[j];
    for (size_t i = 0; i < n; i++) {
      wv[i] += coef * ou->u[i * r + j];
    }
  }
  cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)ou->p, 1.0, ou->phi, (int)ou->p, wv, 1, 0.0,
              theta, 1);
  free(wv);
  return DPD_OK;
}

struct dpd_ou_test {
  const dpd_ou *ou; /* borrowed */
  size_t m;
  double *q;        /* m x r: Phi_test v_j */
  double *qn;       /* r: ||Phi_test v_j||^2 / m */
  double null_part; /* ||Phi_test (I - P_row)||_F^2 / m */
  double *y;        /* m test labels (copy) */
};

void dpd_ou_test_free(dpd_ou_test *t) {
  if (t != NULL) {
    free(t->q);
    free(t->qn);
    free(t->y);
    free(t);
  }
}

int dpd_ou_test_create(const dpd_ou *ou, const double *phi_test, size_t m, const double *y_test,
                       dpd_ou_test **out, dpd_err *err) {
  double *mt = NULL; /* m x n: Phi_test Phi^T */
  double frob = 0.0;
  dpd_ou_test *t;
  size_t n, p, r;
  if (out != NULL) {
    *out = NULL;
  }
  if (ou == NULL || phi_test == NULL || y_test == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "ou, phi_test, y_test or out is NULL");
  }
  if (m < 1 || m > (size_t)INT32_MAX) {
    return DPD_FAIL(err, DPD_EINVAL, "m = %zu test rows is invalid: the allowed range is [1, %d]",
                    m, (int)INT32_MAX);
  }
  n = ou->n;
  p = ou->p;
  r = ou->rank;
  if (!all_finite(phi_test, m * p) || !all_finite(y_test, m)) {
    return DPD_FAIL(err, DPD_EINVAL, "phi_test or y_test has a non-finite entry");
  }
  t = calloc(1, sizeof *t);
  mt = malloc(m * n * sizeof *mt);
  if (t != NULL) {
    t->ou = ou;
    t->m = m;
    t->q = calloc(m * (r > 0 ? r : 1), sizeof *t->q);
    t->qn = calloc(r > 0 ? r : 1, sizeof *t->qn);
    t->y = malloc(m * sizeof *t->y);
  }
  if (t == NULL || mt == NULL || t->q == NULL || t->qn == NULL || t->y == NULL) {
    free(mt);
    dpd_ou_test_free(t);
    return DPD_FAIL(err, DPD_ENOMEM, "ou risk: out of memory (m = %zu, n = %zu)", m, n);
  }
  memcpy(t->y, y_test, m * sizeof *t->y);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)p, 1.0, phi_test,
              (int)p, ou->phi, (int)p, 0.0, mt, (int)n);
  if (r > 0) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)r, (int)n, 1.0, mt, (int)n,
                ou->u, (int)r, 0.0, t->q, (int)r);
  }
  free(mt);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < r; j++) {
      double v = t->q[i * r + j] / ou->s[j];
      t->q[i * r + j] = v;
      t->qn[j] += v * v;
    }
    for (size_t k = 0; k < p; k++) {
      double v = phi_test[i * p + k];
      frob += v * v;
    }
  }
  t->null_part = frob;
  for (size_t j = 0; j < r; j++) {
    t->null_part -= t->qn[j];
    t->qn[j] /= (double)m;
  }
  t->null_part /= (double)m;
  if (r >= p || t->null_part < 0.0) {
    t->null_part = 0.0; /* no null space, or rounding below it */
  }
  *out = t;
  return DPD_OK;
}

int dpd_ou_test_risk_eval(const dpd_ou_test *t, const dpd_ou_params *par, const size_t *steps,
                          size_t nt, dpd_ou_risk *out, dpd_err *err) {
  double *coef = NULL;
  double *pred = NULL;
  double sigma_n;
  size_t m, r;
  const dpd_ou *ou;
  int status;
  if (t == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "test set is NULL");
  }
  ou = t->ou;
  if ((status = check_params(ou, par, err)) < 0) {
    return status;
  }
  if (nt > 0 && (steps == NULL || out == NULL)) {
    return DPD_FAIL(err, DPD_EINVAL, "steps or out is NULL");
  }
  m = t->m;
  r = ou->rank;
  coef = calloc(r > 0 ? r : 1, sizeof *coef);
  pred = malloc(m * sizeof *pred);
  if (coef == NULL || pred == NULL) {
    free(coef);
    free(pred);
    return DPD_FAIL(err, DPD_ENOMEM, "ou risk: out of memory (m = %zu)", m);
  }
  sigma_n = 2.0 * par->clip * par->sigma / (double)ou->n;

  for (size_t it = 0; it < nt; it++) {
    double bias = 0.0;
    double noise;
    for (size_t j = 0; j < r; j++) {
      coef[j] = mean_factor(mode_rate(ou, j), par, steps[it]) * ou->c[j];
    }
    if (r > 0) {
      cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)r, 1.0, t->q, (int)r, coef, 1, 0.0,
                  pred, 1);
    } else {
      for (size_t i = 0; i < m; i++) {
        pred[i] = 0.0;
      }
    }
    for (size_t i = 0; i < m; i++) {
      double e = pred[i] - t->y[i];
      bias += e * e;
    }
    bias /= (double)m;
    noise = cov_weight(0.0, par, steps[it]) * t->null_part;
    for (size_t j = 0; j < r; j++) {
      noise += cov_weight(mode_rate(ou, j), par, steps[it]) * t->qn[j];
    }
    noise *= sigma_n * sigma_n;
    out[it].bias = bias;
    out[it].noise = noise;
    out[it].risk = bias + noise;
  }
  free(coef);
  free(pred);
  return DPD_OK;
}

int dpd_ou_risk_eval(const dpd_ou *ou, const dpd_ou_params *par, const double *phi_test, size_t m,
                     const double *y_test, const size_t *steps, size_t nt, dpd_ou_risk *out,
                     dpd_err *err) {
  dpd_ou_test *t = NULL;
  int status = check_params(ou, par, err);
  if (status < 0) {
    return status;
  }
  if (phi_test == NULL || y_test == NULL || (nt > 0 && (steps == NULL || out == NULL))) {
    return DPD_FAIL(err, DPD_EINVAL, "phi_test, y_test, steps or out is NULL");
  }
  if ((status = dpd_ou_test_create(ou, phi_test, m, y_test, &t, err)) == DPD_OK) {
    status = dpd_ou_test_risk_eval(t, par, steps, nt, out, err);
  }
  dpd_ou_test_free(t);
  return status;
}

int dpd_ou_exit_step(const dpd_ou *ou, const dpd_ou_params *par, const size_t *steps, size_t nt,
                     size_t *index, dpd_err *err) {
  double *coef;
  size_t n;
  size_t r;
  int status = check_params(ou, par, err);
  if (status < 0) {
    return status;
  }
  if (index == NULL || (nt > 0 && steps == NULL)) {
    return DPD_FAIL(err, DPD_EINVAL, "steps or index is NULL");
  }
  n = ou->n;
  r = ou->rank;
  coef = calloc(r > 0 ? r : 1, sizeof *coef);
  if (coef == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "ou exit: out of memory");
  }
  *index = nt;
  for (size_t it = 0; it < nt && *index == nt; it++) {
    /* Training predictions Phi theta_bar = sum_j f_j c_j s_j u_j (Phi v_j = s_j u_j). */
    for (size_t j = 0; j < r; j++) {
      coef[j] = mean_factor(mode_rate(ou, j), par, steps[it]) * ou->c[j] * ou->s[j];
    }
    for (size_t i = 0; i < n; i++) {
      double pred = 0.0;
      double resid;
      for (size_t j = 0; j < r; j++) {
        pred += ou->u[i * r + j] * coef[j];
      }
      resid = fabs(pred - ou->y[i]);
      if (ou->row_norm[i] > 0.0 && resid * 2.0 * ou->row_norm[i] >= par->clip) {
        *index = it;
        break;
      }
    }
  }
  free(coef);
  return DPD_OK;
}

void dpd__ou_bytes(size_t n, size_t n_test, size_t T, dpd__rf_bytes *b) {
  const double nn = (double)n, nt = (double)n_test;
  b->n += 8.0 * (4.0 * nn * nn + 2.0 * nt * nn); /* Gram, eigenvectors, dsyevd's workspace */
  b->steps += 8.0 * ((double)T + 1.0);
}
