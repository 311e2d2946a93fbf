/* Neural collapse: the feature dimension changed before anything else (nc.h, "Resizing the
 * features"): the map, resized rows, resized feature files and the resized ETF law.
 * SPDX-License-Identifier: MIT
 *
 * References: Wang, Zhu, Su & Wang, arXiv:2405.08920 (v3), §5.2 ("To simulate different feature
 * dimensions, we randomly sample a subset of coordinates or make copies of the entire feature
 * space"); Knuth, TAOCP vol. 2, §3.4.2 Algorithm S (selection sampling).
 *
 * The ETF law resized is a problem on per-replicate features (dpd_nc_data_config.fill): the
 * replicate's training samples and clean test points of the law in R^p (dpd_nc_train_sample,
 * dpd_nc_test_point of a base problem without test perturbation or normalisation), mapped to
 * R^P. The test perturbation and normalize then act in R^P, as for file features. Its public
 * bound x_bound is the sup of |x| over the resized law's support (the vertex argument of
 * dpd_nc_sensitivity, coordinate by coordinate), so the feature clip never acts. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/rng.h"
#include "nc/nc_impl.h"

#define RESIZE_MAX_P ((size_t)1 << 40)

int dpd_nc_resize_index(dpd_nc_resize mode, size_t p, size_t P, uint64_t seed, size_t *index,
                        dpd_err *err) {
  if (p < 1 || index == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc_resize: p = 0 or NULL index");
  }
  switch (mode) {
  case DPD_NC_RESIZE_NONE:
    if (P != p) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'resize_p': %zu (allowed: p = %zu with resize = none)", P,
                      p);
    }
    for (size_t l = 0; l < P; l++) {
      index[l] = l;
    }
    return DPD_OK;
  case DPD_NC_RESIZE_SUBSET: {
    if (P < 1 || P > p) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'resize_p': %zu (allowed: 1 <= resize_p <= p = %zu with "
                      "resize = subset)",
                      P, p);
    }
    double u[1024];
    dpd_rng rng;
    dpd_rng_init(&rng, seed, DPD_RNG_STREAM_PROBLEM);
    rng.counter = (uint64_t)2 << 32; /* region tag 0, index 2 */
    size_t kept = 0;
    for (size_t a = 0; a < p; a += 1024) { /* even chunks: one fill of p values */
      const size_t m = p - a < 1024 ? p - a : 1024;
      dpd_rng_uniform_fill(&rng, u, m);
      for (size_t l = 0; l < m && kept < P; l++) {
        if (u[l] * (double)(p - a - l) < (double)(P - kept)) {
          index[kept++] = a + l;
        }
      }
    }
    return DPD_OK;
  }
  case DPD_NC_RESIZE_COPIES:
    if (P < p || P > RESIZE_MAX_P) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'resize_p': %zu (allowed: p = %zu <= resize_p <= 2^40 "
                      "with resize = copies)",
                      P, p);
    }
    for (size_t l = 0; l < P; l++) {
      index[l] = l % p;
    }
    return DPD_OK;
  default:
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'resize': %d (allowed: none, subset, copies)", (int)mode);
  }
}

void dpd_nc_resize_rows(const double *X, size_t n, size_t p, const size_t *index, size_t P,
                        double *out) {
  for (size_t i = 0; i < n; i++) {
    const double *row = X + i * p;
    double *o = out + i * P;
    for (size_t l = 0; l < P; l++) {
      o[l] = row[index[l]];
    }
  }
}

int dpd__nc_resize_init(dpd__nc_resize *rs, size_t p, uint64_t seed, dpd_err *err) {
  free(rs->index);
  rs->index = NULL;
  if (rs->mode == DPD_NC_RESIZE_NONE) {
    return DPD_OK;
  }
  if (rs->mode == DPD_NC_RESIZE_SUBSET ? rs->P > p : rs->P < p) { /* before the allocation */
    size_t none = 0;
    return dpd_nc_resize_index(rs->mode, p, rs->P, seed, &none, err);
  }
  if (rs->P > RESIZE_MAX_P || (rs->index = malloc(rs->P * sizeof *rs->index)) == NULL) {
    return rs->P > RESIZE_MAX_P
               ? DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for 'resize_p': %zu (allowed: at most 2^40)", rs->P)
               : DPD_FAIL(err, DPD_ENOMEM, "out of memory (resize_p = %zu)", rs->P);
  }
  rs->p = p;
  return dpd_nc_resize_index(rs->mode, p, rs->P, seed, rs->index, err);
}

/* One feature set resized in place (a new matrix of n P doubles). */
static int features_resize(dpd_nc_features *f, const dpd__nc_resize *rs, dpd_err *err) {
  double *X = malloc(f->n * rs->P * sizeof *X);
  if (X == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (%zu rows of resize_p = %zu)", f->n, rs->P);
  }
  dpd_nc_resize_rows(f->X, f->n, f->p, rs->index, rs->P, X);
  free(f->X);
  f->X = X;
  f->p = rs->P;
  return DPD_OK;
}

int dpd__nc_files_resize(dpd__nc_files *f, const dpd__nc_resize *rs, dpd_err *err) {
  int status = DPD_OK;
  if (rs->mode == DPD_NC_RESIZE_NONE) {
    return DPD_OK;
  }
  if (f->test != NULL && f->test->p != f->train->p) { /* read with p fixed: never */
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_features': %zu columns (allowed: p = %zu, the "
                    "width of features)",
                    f->test->p, f->train->p);
  }
  if ((status = features_resize(f->train, rs, err)) == DPD_OK && f->test != NULL) {
    status = features_resize(f->test, rs, err);
  }
  return status;
}

/* The fill of the resized law: rows in R^p from the base problem, mapped to R^P. */
static int law_fill(void *user, uint64_t seed, size_t rep, double *X, double *X_test,
                    dpd_err *err) {
  const dpd__nc_resize *rs = user;
  const dpd_nc_problem *pr = rs->base;
  const size_t p = pr->p;
  double *x = malloc(p * sizeof *x);
  int status = DPD_OK;
  if (x == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (p = %zu)", p);
  }
  for (size_t i = 0; i < pr->n; i++) {
    (void)dpd_nc_train_sample(pr, seed, rep, i, x);
    dpd_nc_resize_rows(x, 1, p, rs->index, rs->P, X + i * rs->P);
  }
  for (size_t j = 0; j < pr->n_test && status == DPD_OK; j++) {
    size_t k;
    status = dpd_nc_test_point(pr, seed, rep, j, NULL, x, &k, err);
    dpd_nc_resize_rows(x, 1, p, rs->index, rs->P, X_test + j * rs->P);
  }
  free(x);
  return status;
}

int dpd__nc_resize_law(dpd__nc_resize *rs, const dpd_nc_problem_config *pc,
                       dpd_nc_problem **problem, dpd_nc_problem **base, dpd_err *err) {
  dpd_nc_problem_config bc = *pc;
  int status;
  *problem = *base = NULL;
  bc.test_shift = DPD_NC_SHIFT_NONE; /* the perturbation acts in R^P */
  bc.beta_test = 0.0;
  bc.normalize = DPD_NC_NORMALIZE_NONE;
  if ((status = dpd_nc_problem_create(&bc, base, err)) < 0) {
    return status;
  }
  const dpd_nc_problem *b = *base;
  const size_t K = b->K, p = b->p;
  const double beta = bc.shift == DPD_NC_SHIFT_NONE ? 0.0 : bc.beta;
  double best = 0.0;
  free(rs->y);
  rs->y = malloc((b->n + b->n_test) * sizeof *rs->y);
  if (rs->y == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (n = %zu)", b->n);
  }
  for (size_t k = 0, i = 0, j = b->n; k < K; k++) {
    for (size_t s = 0; s < b->counts[k]; s++) {
      rs->y[i++] = k;
    }
    for (size_t s = 0; s < b->test_counts[k]; s++) {
      rs->y[j++] = k;
    }
    double s2 = 0.0; /* sup |x| over the resized support: coordinate l' holds old index[l'] */
    for (size_t l = 0; l < rs->P; l++) {
      const double a = fabs(b->M[k * p + rs->index[l]] + b->nu[rs->index[l]]) + beta;
      s2 += a * a;
    }
    best = s2 > best ? s2 : best;
  }
  rs->base = b;
  rs->data = (dpd_nc_data_config){.K = K,
                                  .p = rs->P,
                                  .n = b->n,
                                  .n_test = b->n_test,
                                  .y = rs->y,
                                  .y_test = rs->y + b->n,
                                  .fill = law_fill,
                                  .user = rs,
                                  /* a sup of 0 (every kept coordinate 0): any bound holds */
                                  .x_bound = best > 0.0 ? sqrt(best) : 1.0,
                                  .normalize = pc->normalize,
                                  .test_shift = pc->test_shift,
                                  .beta_test = pc->beta_test};
  return dpd_nc_problem_from_data(&rs->data, problem, err);
}

void dpd__nc_resize_free(dpd__nc_resize *rs) {
  free(rs->index);
  free(rs->y);
  rs->index = NULL;
  rs->y = NULL;
}
