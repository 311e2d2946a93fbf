/* Semi-private learning: Noisy-SGD of Bassily, Smith & Thakurta on the scaled hinge loss, and
 * Algorithm 1 on given data (semipriv.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Bassily, Smith & Thakurta, FOCS 2014 (arXiv:1405.7085), Algorithm 1 and its
 * convex step size; notes-rf-nc-sp.md C.2-C.3 (sigma with epsilon^2, the sum loss's factor n,
 * eta(t) = D / sqrt(t (n^2 L^2 + k sigma^2))).
 *
 * Speed. A step reads one row of P (k doubles), k Gaussians and w: the loop runs at the speed
 * of the Gaussian generator for large k and of its own dependency chain (two dot products, a
 * square root) for small k. The Gaussians of SP_SUB steps (about 4096 values, L1-resident)
 * come from one dpd_rng_gaussian_fill, the sample indices of the same steps from one
 * dpd_rng_uniform_fill; the kernel is compiled for scalar, AVX2 and AVX-512 (isa_impl.h) and,
 * with -ffp-contract=off and a fixed summation order (dpd__dot8), gives the same bits on each. */
#include <math.h>
#include <string.h>

#include "core/error_impl.h"
#include "isa/isa_impl.h"
#include "dpdyn/rng.h"
#include "dpdyn/semipriv.h"
#include "core/dot_impl.h"
#include "semipriv/sp_impl.h"

/* Noise values drawn per fill (the chunk of SP_SUB steps holds at most this many, at least 2
 * steps). */
#define SP_FILL_VALUES 4096

dpd_semipriv_sgd_config dpd_semipriv_sgd_config_default(void) {
  dpd_semipriv_sgd_config c = {.epsilon = 1.0,
                               .delta = 1e-5,
                               .zeta = 0.1,
                               .steps = 0,
                               .radius = 1.0,
                               .calibration = DPD_SEMIPRIV_CALIBRATION_BST,
                               .sigma = NAN};
  return c;
}

double dpd_semipriv_sgd_sigma(size_t n, double L, double epsilon, double delta) {
  if (n == 0 || !(L > 0.0) || !(epsilon > 0.0) || !(delta > 0.0 && delta < 1.0)) {
    return NAN;
  }
  if (isinf(epsilon)) {
    return 0.0;
  }
  const double nd = (double)n;
  return L * nd * sqrt(32.0 * log(nd / delta) * log(1.0 / delta)) / epsilon;
}

/* D / sqrt(n^2 L^2 + k sigma^2): eta(t) = this / sqrt(t). */
static double eta_scale(size_t n, double L, size_t k, double sigma, double radius) {
  const double nL = (double)n * L;
  return 2.0 * radius / sqrt(nL * nL + (double)k * sigma * sigma);
}

double dpd_semipriv_sgd_eta(size_t t, size_t n, double L, size_t k, double sigma, double radius) {
  if (t < 1) {
    return NAN;
  }
  return eta_scale(n, L, k, sigma, radius) / sqrt((double)t);
}

/* Steps per chunk: the largest power of two <= SP_FILL_VALUES / k, between 2 and the group. */
static size_t sub_steps(size_t k) {
  size_t s = 2;
  while (2 * s * k <= SP_FILL_VALUES && 2 * s <= DPD__SP_GROUP_STEPS) {
    s *= 2;
  }
  return s;
}

size_t dpd_semipriv_sgd_work(size_t k) {
  return sub_steps(k) * (k + 1);
}

typedef struct {
  const double *P, *y;
  size_t n, k;
  double a_eta, gscale, zeta, sigma, radius;
} sgd_plan;

/* Steps t0 + 1 .. t0 + m: indices from u[0..m), noise rows noise[s k .. s k + k). Returns the
 * number of steps with a non-zero hinge gradient. */
static inline __attribute__((always_inline)) size_t
sgd_chunk_k(const sgd_plan *pl, double *restrict w, const double *restrict u,
            const double *restrict noise, size_t m, size_t t0, size_t k) {
  const size_t n = pl->n;
  const double *restrict P = pl->P;
  const double r2 = pl->radius * pl->radius;
  size_t active = 0;
  for (size_t s = 0; s < m; s++) {
    const double eta = pl->a_eta / sqrt((double)(t0 + s + 1));
    const double es = eta * pl->sigma;
    size_t i = (size_t)(u[s] * (double)n);
    if (i >= n) {
      i = n - 1;
    }
    const double *restrict x = P + i * k;
    const double *restrict xi = noise + s * k;
    const double yi = pl->y[i];
    if (yi * dpd__dot8(w, x, k) < pl->zeta) {
      const double coef = eta * pl->gscale * yi; /* -eta n grad = eta (n / zeta) y x */
      for (size_t j = 0; j < k; j++) {
        w[j] = w[j] + coef * x[j] - es * xi[j];
      }
      active++;
    } else {
      for (size_t j = 0; j < k; j++) {
        w[j] = w[j] - es * xi[j];
      }
    }
    const double nrm2 = dpd__dot8(w, w, k);
    if (nrm2 > r2) {
      const double f = pl->radius / sqrt(nrm2);
      for (size_t j = 0; j < k; j++) {
        w[j] *= f;
      }
    }
  }
  return active;
}

/* Small k as compile-time constants (the loops unroll and w stays in registers); the same
 * operations in the same order as the general case, so the same bits. */
static inline __attribute__((always_inline)) size_t
sgd_chunk_body(const sgd_plan *pl, double *restrict w, const double *restrict u,
               const double *restrict noise, size_t m, size_t t0) {
  switch (pl->k) {
  case 1:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 1);
  case 2:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 2);
  case 3:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 3);
  case 4:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 4);
  case 5:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 5);
  case 6:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 6);
  case 8:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 8);
  case 10:
    return sgd_chunk_k(pl, w, u, noise, m, t0, 10);
  default:
    return sgd_chunk_k(pl, w, u, noise, m, t0, pl->k);
  }
}

DPD__ISA_CLONES(size_t, sgd_chunk,
                (const sgd_plan *pl, double *restrict w, const double *restrict u,
                 const double *restrict noise, size_t m, size_t t0),
                sgd_chunk_body(pl, w, u, noise, m, t0))

int dpd_semipriv_sgd_run(const dpd_semipriv_sgd_config *cfg, const double *P, const double *y,
                         size_t n, size_t k, uint64_t seed, uint64_t rep, double *w, double *work,
                         dpd_semipriv_sgd_info *info, dpd_err *err) {
  if (cfg == NULL || P == NULL || y == NULL || w == NULL || work == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "semipriv sgd: NULL argument");
  }
  if (n < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n': %zu (allowed: integer >= 1)", n);
  }
  if (k < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'k': %zu (allowed: integer >= 1)", k);
  }
  if (!(cfg->epsilon > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'epsilon': %g (allowed: > 0, or inf)",
                    cfg->epsilon);
  }
  if (!(cfg->delta > 0.0 && cfg->delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'delta': %g (allowed: 0 < delta < 1)",
                    cfg->delta);
  }
  if (!(cfg->zeta > 0.0) || !isfinite(cfg->zeta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'zeta': %g (allowed: finite, > 0)",
                    cfg->zeta);
  }
  if (!(cfg->radius > 0.0) || !isfinite(cfg->radius)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'radius': %g (allowed: finite, > 0)",
                    cfg->radius);
  }
  const double nd = (double)n;
  if (cfg->steps == 0 && nd * nd >= 8589934592.0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n': %zu (allowed: n^2 < 2^33 with the default steps)", n);
  }
  const size_t T = cfg->steps == 0 ? n * n : cfg->steps;
  if (T >= ((size_t)1 << 33)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'steps': %zu (allowed: 1 .. 2^33 - 1)",
                    cfg->steps);
  }
  if (cfg->calibration == DPD_SEMIPRIV_CALIBRATION_PLD &&
      (!(cfg->sigma >= 0.0) || !isfinite(cfg->sigma) ||
       (cfg->sigma == 0.0) != isinf(cfg->epsilon))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'sigma': %g with calibration = pld (allowed: finite, > 0; 0 "
                    "exactly when epsilon = inf)",
                    cfg->sigma);
  }
  if (cfg->calibration != DPD_SEMIPRIV_CALIBRATION_BST &&
      cfg->calibration != DPD_SEMIPRIV_CALIBRATION_PLD) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'calibration': %d (allowed: bst, pld)",
                    (int)cfg->calibration);
  }
  const double L = 1.0 / cfg->zeta;
  const double sigma = cfg->calibration == DPD_SEMIPRIV_CALIBRATION_PLD
                           ? cfg->sigma
                           : dpd_semipriv_sgd_sigma(n, L, cfg->epsilon, cfg->delta);
  const sgd_plan pl = {.P = P,
                       .y = y,
                       .n = n,
                       .k = k,
                       .a_eta = eta_scale(n, L, k, sigma, cfg->radius),
                       .gscale = nd * L,
                       .zeta = cfg->zeta,
                       .sigma = sigma,
                       .radius = cfg->radius};
  size_t (*chunk)(const sgd_plan *, double *restrict, const double *restrict,
                  const double *restrict, size_t, size_t) =
      DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, sgd_chunk);
  const size_t sub = sub_steps(k);
  double *noise = work, *u = work + sub * k;
  memset(w, 0, k * sizeof *w);
  dpd_rng urng, nrng;
  dpd__semipriv_region(&urng, seed, rep, DPD__SP_TAG_SGD, 0);
  size_t active = 0;
  for (size_t g0 = 0; g0 < T; g0 += DPD__SP_GROUP_STEPS) {
    const size_t gsteps = T - g0 < DPD__SP_GROUP_STEPS ? T - g0 : DPD__SP_GROUP_STEPS;
    dpd__semipriv_region(&nrng, seed, rep, DPD__SP_TAG_SGD, 1 + g0 / DPD__SP_GROUP_STEPS);
    for (size_t c0 = 0; c0 < gsteps; c0 += sub) {
      const size_t m = gsteps - c0 < sub ? gsteps - c0 : sub;
      dpd_rng_uniform_fill(&urng, u, m);
      if (sigma > 0.0) {
        dpd_rng_gaussian_fill(&nrng, noise, m * k);
      } else if (c0 == 0 && g0 == 0) {
        memset(noise, 0, sub * k * sizeof *noise); /* sigma = 0: no draws, zero noise */
      }
      active += chunk(&pl, w, u, noise, m, g0 + c0);
    }
    if (!isfinite(dpd__dot8(w, w, k))) {
      return DPD_FAIL(err, DPD_ENONFINITE,
                      "semipriv sgd: w is not finite after step %zu (stream (%llu, %llu))",
                      g0 + gsteps, (unsigned long long)seed, (unsigned long long)rep);
    }
  }
  if (info != NULL) {
    info->steps = T;
    info->L = L;
    info->sigma = sigma;
    info->eta1 = pl.a_eta;
    info->active_fraction = (double)active / (double)T;
  }
  return DPD_OK;
}

void dpd_semipriv_hinge(const double *X, const double *y, size_t m, size_t k, const double *w,
                        double zeta, double *hinge, double *accuracy) {
  double h = 0.0;
  size_t right = 0;
  for (size_t i = 0; i < m; i++) {
    const double v = y[i] * dpd__dot8(w, X + i * k, k);
    const double l = 1.0 - v / zeta;
    h += l > 0.0 ? l : 0.0;
    right += v > 0.0;
  }
  *hinge = m > 0 ? h / (double)m : NAN;
  *accuracy = m > 0 ? (double)right / (double)m : NAN;
}

int dpd_semipriv_alg1_execute(const double *A, size_t d, size_t k, const double *X, const double *y,
                              size_t n, const dpd_semipriv_sgd_config *cfg, uint64_t seed,
                              uint64_t rep, double *w_hat, double *w_k, double *work,
                              dpd_semipriv_sgd_info *info, dpd_err *err) {
  if (X == NULL || y == NULL || w_hat == NULL || work == NULL || cfg == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "semipriv alg1: NULL argument");
  }
  if (k < 1 || k > d || (A == NULL && k != d)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'k': %zu (allowed: 1 .. d = %zu)", k, d);
  }
  double *P = work, *w = P + n * k, *sw = w + k;
  if (A == NULL) {
    memcpy(P, X, n * d * sizeof *P);
  } else {
    for (size_t i = 0; i < n; i++) {
      for (size_t j = 0; j < k; j++) {
        P[i * k + j] = dpd__dot8(X + i * d, A + j * d, d);
      }
    }
  }
  int status = dpd_semipriv_sgd_run(cfg, P, y, n, k, seed, rep, w, sw, info, err);
  if (status < 0) {
    return status;
  }
  if (A == NULL) {
    memcpy(w_hat, w, d * sizeof *w_hat);
  } else {
    for (size_t l = 0; l < d; l++) {
      double s = 0.0;
      for (size_t j = 0; j < k; j++) {
        s += A[j * d + l] * w[j];
      }
      w_hat[l] = s;
    }
  }
  if (w_k != NULL) {
    memcpy(w_k, w, k * sizeof *w_k);
  }
  return DPD_OK;
}
