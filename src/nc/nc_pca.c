/* Neural collapse: the PCA fix (nc_pca.h): the public sample, its PCA, the projected problem.
 * SPDX-License-Identifier: MIT
 *
 * References: Wang, Zhu, Su & Wang, arXiv:2405.08920 (v3), section 4, Theorem 4.1.
 *
 * The projection of a replicate's features is blocked: `rows` training samples (or test points)
 * are generated in R^p into a rows x p buffer (dpd_nc_train_sample, dpd_nc_test_point), then one
 * cblas_dgemm multiplies the block by P (p x k). The block size is fixed by p alone, so the
 * arithmetic (and its bits) does not depend on the thread that runs the replicate. */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/nc_pca.h"
#include "dpdyn/rng.h"

/* Rows per projection block: about 2^20 doubles (8 MiB) per block, 8 to 256 rows. */
static size_t block_rows(size_t p) {
  size_t b = ((size_t)1 << 20) / (p > 0 ? p : 1);
  return b < 8 ? 8 : b > 256 ? 256 : b;
}

dpd_nc_pca_config dpd_nc_pca_config_default(void) {
  dpd_nc_pca_config c = {.k = 9, .n_public = 1000, .center = 1, .normalize = DPD_NC_NORMALIZE_NONE};
  return c;
}

static dpd_pca_config pca_config(size_t p, const dpd_nc_pca_config *cfg) {
  dpd_pca_config c = dpd_pca_config_default();
  c.m = cfg->n_public;
  c.p = p;
  c.k = cfg->k;
  c.center = cfg->center != 0;
  return c;
}

double dpd_nc_pca_memory(size_t K, size_t p, const dpd_nc_pca_config *cfg, size_t threads) {
  const dpd_pca_config c = pca_config(p, cfg);
  (void)K;
  return dpd_pca_memory(&c) +
         8.0 * (double)(threads > 0 ? threads : 1) * (double)block_rows(p) * (double)p;
}

static size_t class_of(const size_t *counts, size_t K, size_t i) {
  size_t k = 0;
  while (k + 1 < K && i >= counts[k]) {
    i -= counts[k];
    k++;
  }
  return k;
}

/* Coordinates [a, a + len) of public sample i (a even, or a + len = p with one fill). */
static size_t public_chunk(const dpd_nc_pca *pc, size_t i, size_t a, size_t len, double *x) {
  const dpd_nc_problem *pr = pc->base;
  const size_t k = class_of(pc->public_counts, pr->K, i);
  const double *Mk = pr->M + k * pr->p + a, *nu = pr->nu + a;
  const double b = pr->cfg.beta;
  if (pr->cfg.shift != DPD_NC_SHIFT_CUBE && pr->cfg.shift != DPD_NC_SHIFT_RADEMACHER) {
    for (size_t l = 0; l < len; l++) {
      x[l] = Mk[l] + nu[l];
    }
    return k;
  }
  dpd_rng rng;
  dpd_rng_init(&rng, pr->cfg.seed, DPD_RNG_STREAM_PROBLEM);
  rng.counter = ((uint64_t)1 << 62) | ((uint64_t)i << 32);
  rng.counter += (uint64_t)(a / 2);
  dpd_rng_uniform_fill(&rng, x, len);
  if (pr->cfg.shift == DPD_NC_SHIFT_CUBE) {
    for (size_t l = 0; l < len; l++) {
      x[l] = (Mk[l] + nu[l]) + b * (2.0 * x[l] - 1.0);
    }
  } else {
    for (size_t l = 0; l < len; l++) {
      x[l] = (Mk[l] + nu[l]) + (x[l] < 0.5 ? -b : b);
    }
  }
  return k;
}

size_t dpd_nc_pca_public_sample(const dpd_nc_pca *pca, size_t i, double *x) {
  return public_chunk(pca, i, 0, pca->base->p, x);
}

static int public_rows(void *user, size_t i, size_t a, size_t len, double *x, dpd_err *err) {
  (void)err;
  (void)public_chunk(user, i, a, len, x);
  return 0;
}

/* The fill of the projected problem: replicate rep's training samples and test points in R^p,
 * projected on P block by block. */
static int project_fill(void *user, uint64_t seed, size_t rep, double *X, double *X_test,
                        dpd_err *err) {
  const dpd_nc_pca *pc = user;
  const dpd_nc_problem *pr = pc->base;
  const size_t p = pr->p, k = pc->cfg.k, B = block_rows(p);
  double *buf = malloc(B * p * sizeof *buf);
  int status = DPD_OK;
  if (buf == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (PCA projection block, p = %zu)", p);
  }
  for (int part = 0; part < 2 && status == DPD_OK; part++) {
    const size_t total = part == 0 ? pr->n : pr->n_test;
    double *dst = part == 0 ? X : X_test;
    for (size_t i0 = 0; i0 < total && status == DPD_OK; i0 += B) {
      const size_t b = total - i0 < B ? total - i0 : B;
      for (size_t i = 0; i < b && status == DPD_OK; i++) {
        if (part == 0) {
          (void)dpd_nc_train_sample(pr, seed, rep, i0 + i, buf + i * p);
        } else {
          size_t cls;
          status = dpd_nc_test_point(pr, seed, rep, i0 + i, NULL, buf + i * p, &cls, err);
        }
      }
      if (status == DPD_OK) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)b, (int)k, (int)p, 1.0, buf,
                    (int)p, pc->pca->V, (int)k, 0.0, dst + i0 * k, (int)k);
      }
    }
  }
  free(buf);
  return status;
}

void dpd_nc_pca_free(dpd_nc_pca *pca) {
  if (pca == NULL) {
    return;
  }
  dpd_nc_problem_free(pca->problem);
  dpd_pca_result_free(pca->pca);
  free(pca->public_counts);
  free(pca->y);
  free(pca->y_test);
  free(pca);
}

/* x_bound (nc_pca.h) and the ETF diagnostics. */
static int facts(dpd_nc_pca *pc, dpd_err *err) {
  const dpd_nc_problem *pr = pc->base;
  const size_t p = pr->p, k = pc->cfg.k, K = pr->K;
  const double *V = pc->pca->V;
  const double b = pr->cfg.shift == DPD_NC_SHIFT_NONE ? 0.0 : pr->cfg.beta;
  double *x = malloc(p * sizeof *x), *c = malloc(k * sizeof *c), *r = malloc(p * sizeof *r);
  double l1sq = 0.0, centre = 0.0, captured = 0.0, total = 0.0;
  if (x == NULL || c == NULL || r == NULL) {
    free(x);
    free(c);
    free(r);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t j = 0; j < k; j++) {
    double l1 = 0.0;
    for (size_t l = 0; l < p; l++) {
      l1 += fabs(V[l * k + j]);
    }
    l1sq += l1 * l1;
  }
  pc->etf_residual = 0.0;
  pc->beta0 = 0.0;
  for (size_t cls = 0; cls < K; cls++) {
    const double *Mk = pr->M + cls * p;
    double s = 0.0, res2 = 0.0;
    for (size_t l = 0; l < p; l++) {
      x[l] = Mk[l] + pr->nu[l];
    }
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)p, (int)k, 1.0, V, (int)k, x, 1, 0.0, c, 1);
    for (size_t j = 0; j < k; j++) {
      s += c[j] * c[j];
    }
    centre = fmax(centre, sqrt(s));
    /* P P^T M_k against M_k */
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)p, (int)k, 1.0, V, (int)k, Mk, 1, 0.0, c, 1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)p, (int)k, 1.0, V, (int)k, c, 1, 0.0, r, 1);
    for (size_t j = 0; j < k; j++) {
      captured += c[j] * c[j];
    }
    for (size_t l = 0; l < p; l++) {
      const double dlt = r[l] - Mk[l];
      res2 += dlt * dlt;
      pc->beta0 = fmax(pc->beta0, fabs(dlt));
      total += Mk[l] * Mk[l];
    }
    pc->etf_residual = fmax(pc->etf_residual, sqrt(res2));
  }
  pc->etf_energy = captured / total;
  pc->x_bound = (centre + b * sqrt(l1sq)) * (1.0 + 1e-12);
  free(x);
  free(c);
  free(r);
  return DPD_OK;
}

int dpd_nc_pca_create(const dpd_nc_problem *base, const dpd_nc_pca_config *cfg, dpd_nc_pca **out,
                      dpd_err *err) {
  dpd_nc_pca *pc;
  dpd_pca_config c;
  int status;
  *out = NULL;
  if (base == NULL || base->from_data) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': the PCA fix needs the ETF feature law");
  }
  const size_t K = base->K, p = base->p;
  if (cfg->k < 1 || cfg->k > p) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': %zu (allowed: 1 <= pca_k <= p = %zu)", cfg->k, p);
  }
  if (cfg->n_public < (cfg->center ? 2u : 1u)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n_public': %zu (allowed: n_public >= %d%s)", cfg->n_public,
                    cfg->center ? 2 : 1, cfg->center ? " with pca_center = yes" : "");
  }
  if (base->cfg.test_shift == DPD_NC_SHIFT_ADVERSARIAL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_shift': adversarial (allowed with pca_k: none, cube "
                    "or rademacher: the adversarial point is defined in R^p against a classifier "
                    "on R^p, not one trained on P^T x)");
  }
  if (base->cfg.normalize != DPD_NC_NORMALIZE_NONE) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'normalize': the base problem of the PCA fix must be raw "
                    "(the normalisation applies to the projected features)");
  }
  c = pca_config(p, cfg);
  if (dpd_pca_route_get(&c) == DPD_PCA_ROUTE_GRAM) {
    const size_t rank = cfg->center ? cfg->n_public - 1 : cfg->n_public;
    if (cfg->k > rank) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'pca_k': %zu (allowed: pca_k <= %zu, the rank of %zu "
                      "public samples%s in p = %zu > n_public dimensions; or raise n_public)",
                      cfg->k, rank, cfg->n_public, cfg->center ? " centred" : "", p);
    }
  }
  pc = calloc(1, sizeof *pc);
  if (pc == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  pc->base = base;
  pc->cfg = *cfg;
  pc->public_counts = malloc(K * sizeof *pc->public_counts);
  pc->y = malloc(base->n * sizeof *pc->y);
  pc->y_test = malloc(base->n_test * sizeof *pc->y_test);
  if (pc->public_counts == NULL || pc->y == NULL || pc->y_test == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    goto fail;
  }
  if ((status = dpd_nc_class_counts(K, cfg->n_public, base->cfg.imbalance_ratio,
                                    base->cfg.imbalance_fraction, "n_public", pc->public_counts,
                                    err)) < 0 ||
      (status = dpd_pca_compute(&c, public_rows, pc, &pc->pca, err)) < 0 ||
      (status = facts(pc, err)) < 0) {
    if (status == DPD_EINVAL && strstr(err->reason, "numerical rank") != NULL) {
      char why[sizeof err->reason];
      memcpy(why, err->reason, sizeof why);
      why[sizeof why - 1] = '\0';
      status =
          DPD_FAIL(err, DPD_EINVAL,
                   "invalid value for 'pca_k': %zu (allowed: at most the numerical rank of the "
                   "public sample's %s matrix, e.g. K - 1 = %zu with shift = none; the PCA "
                   "says: %s)",
                   cfg->k, cfg->center ? "covariance" : "second-moment", K - 1, why);
    }
    goto fail;
  }
  for (size_t cls = 0, i = 0, j = 0; cls < K; cls++) {
    for (size_t s = 0; s < base->counts[cls]; s++) {
      pc->y[i++] = cls;
    }
    for (size_t s = 0; s < base->test_counts[cls]; s++) {
      pc->y_test[j++] = cls;
    }
  }
  pc->data = (dpd_nc_data_config){.K = K,
                                  .p = cfg->k,
                                  .n = base->n,
                                  .n_test = base->n_test,
                                  .X = NULL,
                                  .y = pc->y,
                                  .X_test = NULL,
                                  .y_test = pc->y_test,
                                  .fill = project_fill,
                                  .user = pc,
                                  .x_bound = pc->x_bound,
                                  .normalize = cfg->normalize,
                                  .test_shift = DPD_NC_SHIFT_NONE,
                                  .beta_test = 0.0};
  if ((status = dpd_nc_problem_from_data(&pc->data, &pc->problem, err)) < 0) {
    goto fail;
  }
  *out = pc;
  return DPD_OK;
fail:
  dpd_nc_pca_free(pc);
  return status;
}
