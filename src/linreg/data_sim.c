/* Monte-Carlo simulation of one-pass DP-SGD with per-sample clipping on the rows of a dataset
 * (linear regression on a data file, issue 27; docs/math.md §1.3-1.4, docs/real_data.md).
 * SPDX-License-Identifier: MIT
 *
 * The algorithm is the one of the Gaussian simulator (sim.c, docs/math.md §1.3) with the samples
 * taken from the file's preprocessed population rows instead of drawn from N(0, Sigma):
 *
 *   x_k      = scale (row(pop_idx[j_k]) - mean),   j_0 .. j_{n-1} distinct, uniformly drawn
 *   y_k      = y_scale (Y(pop_idx[j_k]) - y_mean)      (targets=file:)
 *            = x_k . theta* + z_k,  z_k from the label-noise law   (targets=model)
 *   r_k      = x_k . theta_k - y_k
 *   s_k      = min(1, C / (|r_k| |x_k|)),   C = c sqrt(d)   (c = inf: s_k = 1)
 *   theta_{k+1} = theta_k - eta_k s_k r_k x_k + 2 C sigma_k xi_k,   xi_k ~ N(0, I_d)
 *
 * with theta_0 = 0 and (eta_k, sigma_k) from dpd_schedule_steps (the privacy calibration of
 * docs/math.md §1.4: rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2). The risk is
 * R(theta) = (1/2)(theta - theta^*)^T Sigma^ (theta - theta^*), theta^* = the least-squares fit
 * (file targets) or the model's theta* (model targets). Unlike the Gaussian model, the rows are
 * not rotation-invariant, so the simulation runs in the original coordinates, O(d) per step, and
 * the risk costs O(d^2) at each grid point (half of Sigma^, by symmetry).
 *
 * The iterate is kept as w = theta (file targets) or w = theta - theta* (model targets), so that
 * in both cases r = x . w - t with t = y (file) or t = z (model): one dot product per step.
 *
 * Random numbers (stream rule of rng.h): replicate r uses stream (seed, r).
 *  - The rows: the first n uniforms of the stream, u_0 .. u_{n-1} (blocks 0 .. ceil(n/2) - 1,
 *    as one dpd_rng_uniform_fill of n values would give them), drive a partial Fisher-Yates
 *    shuffle of the population 0 .. n_pop - 1: with p = (0, 1, ..., n_pop - 1), for k = 0..n-1,
 *    m = n_pop - k, i = k + min(floor(u_k m), m - 1), swap p[k] and p[i]; step k uses population
 *    row j_k = p[k] (file row pop_idx[j_k]). The min() only guards the rounding of u_k m to m.
 *    With D->with_replacement the same uniforms draw i.i.d. rows, j_k = min(floor(u_k n_pop),
 *    n_pop - 1), and n may exceed n_pop.
 *  - The steps start at block ceil(n/2). Step k draws one dpd_rng_gaussian_fill of m_k values,
 *    m_k = (model targets ? 1 : 0) + (sigma_k > 0 ? d : 0) (none when m_k = 0), used in that
 *    order as the label-noise Gaussian G (model targets) and xi_k (d). The label noise is the
 *    law's function of G (noise.h; z = zeta G for the Gaussian law); the Student-t law draws its
 *    chi-square from the blocks right after the fill (dpd_rng_gamma_sample); the next step's
 *    fill starts at the next unused block. File targets without privacy noise draw nothing
 *    after the rows.
 *
 * Determinism: every reduction (the dot products, |x|^2, the quadratic form, the held-out risk)
 * is a sum of eight partial sums, lane j taking the terms of index j mod 8, added in a fixed
 * order at the end; the kernels are written with an eight-double vector type and compiled for
 * scalar, AVX2 and AVX-512 (isa_impl.h) without FMA contraction (CMakeLists.txt), so all paths
 * give the same bits. Replicates run in parallel (replicate_impl.h), each writing its own rows;
 * the reduction over replicates is serial in replicate order, so results do not depend on the
 * number of threads.
 *
 * Speed: the rows are read in place in their own precision (float32 converted in the kernel,
 * eight values at a time). A replicate draws its n rows before its first step (the shuffle's
 * random reads overlap there; drawn step by step, each one stalled a step), so that the row of
 * step k + AHEAD is prefetched during step k's pass 1, one line per line read (a burst of
 * prefetches per step was 35 % slower). A step is two passes over the d coordinates (the dot
 * products, storing the preprocessed row; the update), both in L1/L2 for d up to a few
 * thousand; with privacy noise the d Gaussians of a step cost nearly three times as much again
 * (bench/bench_lrdata_sim.c measures both limits). The shuffle needs O(n) memory per thread:
 * the dense permutation when n_pop is at most twice the hash capacity (a power of two >= 2 n),
 * else a hash of the displaced entries (open addressing) and the n drawn rows. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/noise_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/linreg.h"
#include "dpdyn/rng.h"
#include "isa/isa_impl.h"
#include "linreg/data_impl.h"
#include "linreg/data_sim_impl.h"
#include "linreg/result_impl.h"
#include "linreg/setting_impl.h"

/* Steps of a replicate between two polls of a stop request (as sim.c). */
#define POLL_STEPS 64

/* Lengths of the per-thread buffers are rounded up to a cache line (in doubles). */
#define CACHE_DOUBLES 8

/* Bytes of a cache line, for the prefetch of the next row. */
#define LINE_BYTES 64

/* Steps ahead whose rows are prefetched (at d = 784: 2, 4 and 8 alike, 1 slower by 15 %;
 * bench/bench_lrdata_sim.c). */
#define AHEAD 4

/* An empty slot of the index hash. */
#define HASH_EMPTY SIZE_MAX

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* The index storage holds size_t values in the double-typed workspace of the replicate driver. */
_Static_assert(sizeof(size_t) <= sizeof(double), "size_t must fit in a double's slot");

/* What one replicate reports besides its risk and clipping rows. */
typedef struct {
  double before_release; /* risk of theta_n without the last step's noise */
  double released;       /* risk of theta_n, the released iterate */
  double test_risk;      /* held-out risk of theta_n (NAN when none) */
  size_t fail_step;      /* step at which a non-finite value appeared */
  int status;            /* DPD_OK, DPD_ENONFINITE or DPD_ECANCELLED */
} replicate_info;

/* Everything a replicate needs, shared by all threads: read-only but for the output slots of
 * each replicate. */
typedef struct {
  const dpd__lrdata *D;
  size_t d, n, n_pop, grid;
  const double *ref;        /* [d] theta_hat (file targets: R uses w - ref), NULL (model) */
  const double *theta_star; /* [d] model targets (w = theta - theta_star), NULL for file */
  const double *eta;        /* [n] */
  const double *sigma;      /* [n] */
  const size_t *kgrid;      /* [grid] recorded steps, non-decreasing, kgrid[0] = 0, = n at end */
  int model;                /* 1: targets=model */
  dpd_noise_spec noise;     /* label-noise law (model targets) */
  double (*sample)(const dpd_noise_spec *, double, dpd_rng *); /* the law's (noise.h) */
  double half_zeta2; /* zeta^2 / 2 (the held-out risk of model targets) */
  double C;          /* c sqrt(d); INFINITY: no clipping */
  uint64_t seed;
  size_t rep0;   /* replicate i of the driver is replicate rep0 + i of the stream rule */
  int want_test; /* 1: the held-out risk of each replicate */
  /* workspace of a thread (doubles): w [vec_len], x [vec_len], buf [buf_len], v [vec_len],
   * then the index storage [idx_len] (size_t) */
  size_t vec_len, buf_len, idx_len;
  size_t hash_cap;      /* power of two >= 2 n: capacity of the index hash */
  int hash_shift;       /* 64 - log2(hash_cap) */
  int dense;            /* 1: the dense permutation of n_pop entries, 0: the hash */
  double *risk_rows;    /* [seeds * grid] outputs: replicate r writes row r of each */
  double *clip_rows;    /* [seeds * grid] */
  replicate_info *info; /* [seeds] */
  double *theta_out;    /* [d] theta_n of the (only) replicate, or NULL (tests) */
} sim_plan;

/* Eight doubles as one value (GCC/Clang vector extension), as in sim.c: lane j holds the partial
 * sums of the indices j mod 8. Vectors only appear in always-inline code. */
typedef double v8d __attribute__((vector_size(64)));
typedef double v8d_unaligned __attribute__((vector_size(64), aligned(8), may_alias));
typedef float v8f __attribute__((vector_size(32)));
typedef float v8f_unaligned __attribute__((vector_size(32), aligned(4), may_alias));
#define LOAD8(p) (*(const v8d_unaligned *)(p))
#define STORE8(p, v) (*(v8d_unaligned *)(p) = (v))
#define LOAD8F(p) __builtin_convertvector(*(const v8f_unaligned *)(p), v8d)

/* Sum of eight partial sums in a fixed order (the same in every instruction set). */
#define SUM8(s) ((((s)[0] + (s)[1]) + ((s)[2] + (s)[3])) + (((s)[4] + (s)[5]) + ((s)[6] + (s)[7])))

/* ---- the preprocessed population (data_impl.h's convention) ---- */

/* The preprocessed target of file row `row`: y_scale (y_raw - y_mean). */
static inline double data_target(const dpd__lrdata *D, size_t row) {
  return D->y_scale * (dpd__datamat_at(&D->Y, row, 0) - D->y_mean);
}

/* ---- the drawn rows: a partial Fisher-Yates shuffle ---- */

typedef struct {
  size_t *slot; /* dense: p [n_pop]; hash: keys [cap] then values [cap] */
  size_t n_pop, k, cap;
  int shift, dense;
  dpd_rng rng; /* the uniforms: blocks 0 .. of the replicate's stream */
} row_drawer;

ALWAYS_INLINE size_t hash_of(size_t key, int shift) {
  return (size_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> shift);
}

/* p[pos] (hash: the stored value, or pos when never displaced). */
ALWAYS_INLINE size_t drawer_get(const row_drawer *dr, size_t pos) {
  if (dr->dense) {
    return dr->slot[pos];
  }
  const size_t mask = dr->cap - 1;
  for (size_t h = hash_of(pos, dr->shift);; h = (h + 1) & mask) {
    if (dr->slot[h] == pos) {
      return dr->slot[dr->cap + h];
    }
    if (dr->slot[h] == HASH_EMPTY) {
      return pos;
    }
  }
}

/* p[pos] = value. */
ALWAYS_INLINE void drawer_put(row_drawer *dr, size_t pos, size_t value) {
  if (dr->dense) {
    dr->slot[pos] = value;
    return;
  }
  const size_t mask = dr->cap - 1;
  size_t h = hash_of(pos, dr->shift);
  while (dr->slot[h] != pos && dr->slot[h] != HASH_EMPTY) {
    h = (h + 1) & mask;
  }
  dr->slot[h] = pos;
  dr->slot[dr->cap + h] = value;
}

ALWAYS_INLINE void drawer_init(row_drawer *dr, const sim_plan *plan, size_t *slot, size_t rep) {
  dr->slot = slot;
  dr->n_pop = plan->n_pop;
  dr->k = 0;
  dr->cap = plan->hash_cap;
  dr->shift = plan->hash_shift;
  dr->dense = plan->dense;
  dpd_rng_init(&dr->rng, plan->seed, (uint64_t)rep);
  if (dr->dense) {
    for (size_t i = 0; i < dr->n_pop; i++) {
      slot[i] = i;
    }
  } else {
    for (size_t i = 0; i < dr->cap; i++) {
      slot[i] = HASH_EMPTY;
    }
  }
}

/* The population row of the next step (k = 0, 1, ...: at most n calls). Only positions >= k are
 * read after step k, so position k need not be written. */
ALWAYS_INLINE size_t drawer_next(row_drawer *dr) {
  const size_t k = dr->k++;
  const size_t m = dr->n_pop - k;
  const double u = dpd_rng_uniform(&dr->rng);
  size_t off = (size_t)(u * (double)m);
  if (off > m - 1) {
    off = m - 1;
  }
  const size_t i = k + off;
  const size_t pk = drawer_get(dr, k);
  if (i == k) {
    return pk;
  }
  const size_t pi = drawer_get(dr, i);
  drawer_put(dr, i, pk);
  return pi;
}

/* The file rows of the n steps of a replicate into rows[0 .. n), all drawn before the first
 * step: the shuffle's random reads then overlap (out-of-order execution across its short
 * iterations), where drawn one step at a time each would stall a step. For the dense
 * permutation rows may be its own storage (position k is final once step k is drawn). */
ALWAYS_INLINE void draw_rows(row_drawer *dr, const size_t *restrict pop_idx, size_t n,
                             size_t *rows) {
  for (size_t k = 0; k < n; k++) {
    rows[k] = pop_idx[drawer_next(dr)];
  }
}

/* ---- the kernels ---- */

/* Pass 1: x = scale (row - mean) stored into x[0 .. d), returns x . w and |x|^2. With `pf` (the
 * first byte of a row of a later step, or NULL) it prefetches that row, one line per 64 bytes of
 * this one read: spread over the pass, the prefetches keep the memory busy without stalling on
 * a burst of them (35 % faster than a burst per step at d = 784, bench/bench_lrdata_sim.c). */
ALWAYS_INLINE void pass_dot(const dpd__lrdata *D, size_t row, const double *restrict mean,
                            const double *restrict w, double *restrict x, size_t d, double *dot,
                            double *xx, const char *pf) {
  const double scale = D->scale;
  v8d sd = {0, 0, 0, 0, 0, 0, 0, 0}, sx = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  if (D->X.f32) {
    const float *restrict src = (const float *)D->X.data + row * d;
    for (; i + 8 <= d; i += 8) {
      if (pf != NULL && (i & 8u) == 0) {
        __builtin_prefetch(pf + i * sizeof(float), 0, 0);
      }
      const v8d xv = scale * (LOAD8F(src + i) - LOAD8(mean + i));
      STORE8(x + i, xv);
      sd += xv * LOAD8(w + i);
      sx += xv * xv;
    }
    for (size_t j = 0; i + j < d; j++) {
      const double xs = scale * ((double)src[i + j] - mean[i + j]);
      x[i + j] = xs;
      sd[j] += xs * w[i + j];
      sx[j] += xs * xs;
    }
    if (pf != NULL) {
      __builtin_prefetch(pf + d * sizeof(float) - 1, 0, 0);
    }
  } else {
    const double *restrict src = (const double *)D->X.data + row * d;
    for (; i + 8 <= d; i += 8) {
      if (pf != NULL) {
        __builtin_prefetch(pf + i * sizeof(double), 0, 0);
      }
      const v8d xv = scale * (LOAD8(src + i) - LOAD8(mean + i));
      STORE8(x + i, xv);
      sd += xv * LOAD8(w + i);
      sx += xv * xv;
    }
    for (size_t j = 0; i + j < d; j++) {
      const double xs = scale * (src[i + j] - mean[i + j]);
      x[i + j] = xs;
      sd[j] += xs * w[i + j];
      sx[j] += xs * xs;
    }
    if (pf != NULL) {
      __builtin_prefetch(pf + d * sizeof(double) - 1, 0, 0);
    }
  }
  *dot = SUM8(sd);
  *xx = SUM8(sx);
}

/* Pass 2: w = (w - a x) (+ b xi when noisy). `noisy` is a constant at every call. */
ALWAYS_INLINE void pass_update(const double *restrict x, const double *restrict xi,
                               double *restrict w, size_t d, double a, double b, int noisy) {
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    v8d t = LOAD8(w + i) - a * LOAD8(x + i);
    if (noisy) {
      t = t + b * LOAD8(xi + i);
    }
    STORE8(w + i, t);
  }
  for (; i < d; i++) {
    double t = w[i] - a * x[i];
    if (noisy) {
      t = t + b * xi[i];
    }
    w[i] = t;
  }
}

/* w += b xi (the release noise after a separate gradient step). */
ALWAYS_INLINE void add_noise(const double *restrict xi, double *restrict w, size_t d, double b) {
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    STORE8(w + i, LOAD8(w + i) + b * LOAD8(xi + i));
  }
  for (; i < d; i++) {
    w[i] = w[i] + b * xi[i];
  }
}

/* R = (1/2) v^T S v with v = w - ref (ref NULL: v = w, no copy), S symmetric d x d row-major:
 * (1/2) sum_i v_i (S_ii v_i + 2 sum_{j > i} S_ij v_j), each inner sum in eight lanes by the
 * offset j - i - 1, the outer one in eight lanes by i. Reads the upper half of S only. */
ALWAYS_INLINE double risk_of(const double *restrict S, const double *restrict w,
                             const double *restrict ref, double *restrict v, size_t d) {
  const double *u = w;
  if (ref != NULL) {
    size_t i = 0;
    for (; i + 8 <= d; i += 8) {
      STORE8(v + i, LOAD8(w + i) - LOAD8(ref + i));
    }
    for (; i < d; i++) {
      v[i] = w[i] - ref[i];
    }
    u = v;
  }
  v8d outer = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < d; i++) {
    const double *restrict row = S + i * d;
    v8d acc = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t j = i + 1;
    for (; j + 8 <= d; j += 8) {
      acc += LOAD8(row + j) * LOAD8(u + j);
    }
    for (size_t l = 0; j + l < d; l++) {
      acc[l] += row[j + l] * u[j + l];
    }
    outer[i & 7u] += u[i] * (row[i] * u[i] + 2.0 * SUM8(acc));
  }
  return 0.5 * SUM8(outer);
}

/* The held-out risk of w: (1/2) mean over the test rows of (x . w - y)^2 (file targets) or
 * (x . w)^2 + zeta^2 (model targets, w = theta - theta*). Sum over the rows in their order. */
ALWAYS_INLINE double test_risk_of(const sim_plan *plan, const double *restrict w,
                                  double *restrict x) {
  const dpd__lrdata *D = plan->D;
  double sum = 0.0;
  for (size_t t = 0; t < D->n_test; t++) {
    const size_t row = D->test_idx[t];
    double dot, xx;
    pass_dot(D, row, D->mean, w, x, plan->d, &dot, &xx, NULL);
    const double r = plan->model ? dot : dot - data_target(D, row);
    sum += r * r;
  }
  return 0.5 * (sum / (double)D->n_test) + (plan->model ? plan->half_zeta2 : 0.0);
}

/* The first byte of file row `row`. */
ALWAYS_INLINE const char *row_address(const dpd__lrdata *D, size_t row) {
  return (const char *)D->X.data + row * D->d * (D->X.f32 ? sizeof(float) : sizeof(double));
}

/* Prefetches the target of file row `row`. */
ALWAYS_INLINE void prefetch_target(const dpd__lrdata *D, size_t row) {
  __builtin_prefetch((const char *)D->Y.data + row * (D->Y.f32 ? sizeof(float) : sizeof(double)), 0,
                     0);
}

/* Prefetches the d values of file row `row` and its target (the rows of the first steps; later
 * rows are prefetched during pass 1). Rows are read once per replicate, from anywhere in the
 * file: their latency would otherwise stall the step. Non-temporal: not needed again. */
ALWAYS_INLINE void prefetch_row(const dpd__lrdata *D, size_t row, int model) {
  const char *p = row_address(D, row);
  const size_t bytes = D->d * (D->X.f32 ? sizeof(float) : sizeof(double));
  for (size_t o = 0; o < bytes; o += LINE_BYTES) {
    __builtin_prefetch(p + o, 0, 0);
  }
  __builtin_prefetch(p + bytes - 1, 0, 0);
  if (!model) {
    prefetch_target(D, row);
  }
}

/* Runs replicate `rep` (stream (seed, rep)): writes risk_row[grid], clip_row[grid] (clipped
 * steps per grid interval) and *info. `work` is the thread's workspace (sim_plan). */
ALWAYS_INLINE void run_replicate_body(const sim_plan *plan, size_t rep, double *restrict work,
                                      double *risk_row, double *clip_row, replicate_info *info,
                                      dpd__replicate_slot *slot) {
  const dpd__lrdata *D = plan->D;
  const size_t d = plan->d, n = plan->n, grid = plan->grid;
  const double *S = D->sigma, *mean = D->mean, *ref = plan->ref;
  const double C = plan->C;
  const int clipping = isfinite(C), model = plan->model;
  double *restrict w = work;
  double *restrict x = w + plan->vec_len;
  double *restrict buf = x + plan->vec_len;
  double *restrict v = buf + plan->buf_len;
  size_t *idx = (size_t *)(void *)(v + plan->vec_len);
  const double *restrict xi = buf + (model ? 1 : 0);
  row_drawer dr;
  dpd_rng rng;
  size_t next = 0;    /* next grid index to record */
  double nclip = 0.0; /* clipped steps since the last recorded grid point */

  info->status = DPD_OK;
  info->fail_step = 0;
  info->before_release = NAN;
  info->released = NAN;
  info->test_risk = NAN;
  drawer_init(&dr, plan, idx, rep);
  dpd_rng_init(&rng, plan->seed, (uint64_t)rep);
  rng.counter = (uint64_t)((n + 1) / 2); /* after the n uniforms of the rows */
  for (size_t i = 0; i < d; i++) {
    w[i] = model ? -plan->theta_star[i] : 0.0;
  }
  {
    const double r0 = risk_of(S, w, ref, v, d);
    for (; next < grid && plan->kgrid[next] == 0; next++) {
      risk_row[next] = r0;
      clip_row[next] = 0.0;
    }
  }
  /* the steps' file rows (over the dense permutation, or after the hash), the first AHEAD
   * prefetched */
  size_t *rows = plan->dense ? idx : idx + 2 * plan->hash_cap;
  if (D->fixed_order) { /* the audit: one dataset, in its order, for every replicate */
    for (size_t k = 0; k < n; k++) {
      rows[k] = D->pop_idx[k];
    }
  } else if (D->with_replacement) { /* i.i.d. rows: j_k = min(floor(u_k n_pop), n_pop - 1) */
    for (size_t k = 0; k < n; k++) {
      const size_t j = (size_t)(dpd_rng_uniform(&dr.rng) * (double)D->n_pop);
      rows[k] = D->pop_idx[j < D->n_pop ? j : D->n_pop - 1];
    }
  } else {
    draw_rows(&dr, D->pop_idx, n, rows);
  }
  for (size_t j = 0; j < AHEAD && j < n; j++) {
    prefetch_row(D, rows[j], model);
  }
  for (size_t k = 0; k < n; k++) {
    /* A stop request is heard between steps (sim.c). */
    if (k % POLL_STEPS == POLL_STEPS - 1 && dpd__replicate_progress(slot, 0)) {
      info->status = DPD_ECANCELLED;
      return;
    }
    const size_t row = rows[k];
    const char *pf = NULL; /* the row AHEAD steps on, prefetched during pass 1 */
    if (k + AHEAD < n) {
      pf = row_address(D, rows[k + AHEAD]);
      if (!model) {
        prefetch_target(D, rows[k + AHEAD]);
      }
    }
    const double sigma = plan->sigma[k];
    const int noisy = sigma > 0.0;
    const size_t m = (size_t)model + (noisy ? d : 0);
    if (m > 0) {
      dpd_rng_gaussian_fill(&rng, buf, m);
    }
    /* t: the target (file) or the label noise z (model, w = theta - theta*). */
    const double t = model ? plan->sample(&plan->noise, buf[0], &rng) : data_target(D, row);
    double dot, xx;
    pass_dot(D, row, mean, w, x, d, &dot, &xx, pf);
    const double r = dot - t;
    if (!isfinite(r) || !isfinite(xx)) {
      info->status = DPD_ENONFINITE;
      info->fail_step = k;
      return;
    }
    double s = 1.0;
    if (clipping) {
      const double gnorm = fabs(r) * sqrt(xx);
      if (gnorm > C) {
        s = C / gnorm;
        nclip += 1.0;
      }
    }
    const double a = plan->eta[k] * r * s;
    const double b = noisy ? 2.0 * C * sigma : 0.0;
    const int record = next < grid && plan->kgrid[next] == k + 1;
    const int last = k + 1 == n;
    double risk = 0.0, before = 0.0;

    if (record && last && noisy) {
      /* The release convention (linreg.h): the gradient step, its risk, then the noise. */
      pass_update(x, xi, w, d, a, b, 0);
      before = risk_of(S, w, ref, v, d);
      add_noise(xi, w, d, b);
      risk = risk_of(S, w, ref, v, d);
    } else {
      if (noisy) {
        pass_update(x, xi, w, d, a, b, 1);
      } else {
        pass_update(x, xi, w, d, a, b, 0);
      }
      if (record) {
        risk = risk_of(S, w, ref, v, d);
        before = risk;
      }
    }
    if (!record) {
      continue;
    }
    if (!isfinite(risk) || !isfinite(before)) {
      info->status = DPD_ENONFINITE;
      info->fail_step = k;
      return;
    }
    if (last) {
      info->before_release = before;
      info->released = risk;
      risk = before;
    }
    risk_row[next] = risk;
    clip_row[next] = nclip;
    nclip = 0.0;
    /* Grid points that round to the same step: an empty interval, nothing clipped in it. */
    for (next++; next < grid && plan->kgrid[next] == k + 1; next++) {
      risk_row[next] = risk;
      clip_row[next] = 0.0;
    }
  }
  if (plan->want_test) {
    info->test_risk = test_risk_of(plan, w, x);
    if (!isfinite(info->test_risk)) {
      info->status = DPD_ENONFINITE;
      info->fail_step = n - 1;
      return;
    }
  }
  if (plan->theta_out != NULL) { /* row rep - rep0 (one replicate: row 0) */
    double *theta = plan->theta_out + (rep - plan->rep0) * d;
    for (size_t i = 0; i < d; i++) {
      theta[i] = model ? w[i] + plan->theta_star[i] : w[i];
    }
  }
}

/* Replicate i of the driver (dpd__replicate_fn): replicate rep0 + i of the stream rule. */
ALWAYS_INLINE int run_replicate(void *job, size_t i, double *work, dpd__replicate_slot *slot) {
  const sim_plan *plan = job;
  const size_t grid = plan->grid;
  run_replicate_body(plan, plan->rep0 + i, work, plan->risk_rows + i * grid,
                     plan->clip_rows + i * grid, plan->info + i, slot);
  return plan->info[i].status;
}

DPD__ISA_CLONES(int, replicate_kernel,
                (void *job, size_t rep, double *work, dpd__replicate_slot *slot),
                (run_replicate(job, rep, work, slot)))

/* ---- the driver ---- */

/* The index storage of a thread: the hash capacity (power of two >= 2 n) and whether the dense
 * permutation (n_pop entries) fits in the hash's 2 cap entries. */
static size_t hash_capacity(size_t n, int *log2cap) {
  size_t cap = 1;
  int l = 0;
  while (cap < 2 * n) {
    cap *= 2;
    l++;
  }
  *log2cap = l;
  return cap;
}

static int validate(const dpd__lrdata *D, const double *theta_star, const dpd_schedule *schedule,
                    const dpd_linreg_sim_config *cfg, dpd_linreg_sim_result **out, dpd_err *err) {
  int status;
  if (D == NULL || schedule == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: NULL argument (data, schedule, cfg, out)");
  }
  if (D->d < 1 || D->n_pop < 1 || D->X.data == NULL || D->X.cols != D->d || D->pop_idx == NULL ||
      D->mean == NULL || D->sigma == NULL || (D->n_test > 0 && D->test_idx == NULL)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "simulate: the dataset is incomplete (d = %zu, population rows = %zu)", D->d,
                    D->n_pop);
  }
  if (theta_star == NULL && (D->model_targets || D->theta_hat == NULL || D->Y.data == NULL)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "simulate: targets=model needs theta_star; file targets need the targets and "
                    "their least-squares fit");
  }
  if (cfg->n < 1 || (!D->with_replacement && cfg->n > D->n_pop)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "simulate: n = %zu, must be >= 1 and <= the population rows (%zu): the rows "
                    "of a replicate are drawn without replacement",
                    cfg->n, D->n_pop);
  }
  if ((status = dpd__linreg_sim_config_check(cfg, schedule, err)) < 0) {
    return status;
  }
  const size_t max_doubles = SIZE_MAX / sizeof(double) / 8;
  if (cfg->seeds > max_doubles / cfg->grid || D->d > max_doubles || cfg->n > max_doubles / 4) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: sizes too large (d = %zu, seeds = %zu, grid = %zu)",
                    D->d, cfg->seeds, cfg->grid);
  }
  return DPD_OK;
}

/* Per-thread workspace lengths (doubles) for d coordinates and n steps from n_pop rows. */
static size_t work_doubles(size_t d, size_t n, size_t n_pop, int replace, size_t *vec_len,
                           size_t *buf_len, size_t *idx_len, size_t *cap, int *log2cap,
                           int *dense) {
  *vec_len = (d + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES;
  *buf_len = (d + 2 + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES;
  *cap = hash_capacity(n, log2cap);
  *dense = n_pop <= 2 * *cap;
  *idx_len = *dense ? n_pop : 2 * *cap + n;
  if (replace) { /* no permutation: the n drawn rows alone */
    *cap = 0;
    *dense = 0;
    *idx_len = n;
  }
  return 3 * *vec_len + *buf_len + *idx_len;
}

/* dpd__lrdata_sim_run with replicates rep0 .. rep0 + seeds - 1 and, for one replicate, its theta_n
 * into theta_out. */
static int sim_run(const dpd__lrdata *D, const double *theta_star, const dpd_schedule *schedule,
                   const dpd_linreg_sim_config *cfg, size_t rep0, double *theta_out,
                   dpd_linreg_sim_result **out, double *test_risk, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  int status = validate(D, theta_star, schedule, cfg, out, err);
  if (status < 0) {
    return status;
  }
  const size_t d = D->d, n = cfg->n, seeds = cfg->seeds, grid = cfg->grid;
  size_t vec_len, buf_len, idx_len, cap;
  int log2cap, dense;
  const size_t wd = work_doubles(d, n, D->n_pop, D->with_replacement, &vec_len, &buf_len, &idx_len,
                                 &cap, &log2cap, &dense);

  dpd_linreg_sim_result *res = dpd__sim_result_create(grid, seeds);
  double *eta = malloc(n * sizeof *eta);
  double *sigma = malloc(n * sizeof *sigma);
  size_t *kgrid = malloc(grid * sizeof *kgrid);
  double *clip_rows = res != NULL ? res->clip_replicates : NULL; /* owned by res */
  replicate_info *info = malloc(seeds * sizeof *info);
  if (res == NULL || eta == NULL || sigma == NULL || kgrid == NULL || clip_rows == NULL ||
      info == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "simulate: out of memory (d = %zu, n = %zu, seeds = %zu)", d,
                      n, seeds);
    goto cleanup;
  }

  dpd_schedule_steps(schedule, n, cfg->rho, eta, sigma);
  dpd__sim_result_grid(res, n, kgrid);

  const int model = theta_star != NULL;
  sim_plan plan = {.D = D,
                   .d = d,
                   .n = n,
                   .n_pop = D->n_pop,
                   .grid = grid,
                   .ref = model ? NULL : D->theta_hat,
                   .theta_star = theta_star,
                   .eta = eta,
                   .sigma = sigma,
                   .kgrid = kgrid,
                   .model = model,
                   .noise = {.law = cfg->noise, .zeta = cfg->zeta, .nu = cfg->noise_nu},
                   .sample = dpd_noise_law_type_get(cfg->noise)->sample, /* validated */
                   .half_zeta2 = 0.5 * cfg->zeta * cfg->zeta,
                   .C = isfinite(cfg->c) ? cfg->c * sqrt((double)d) : INFINITY,
                   .seed = cfg->seed,
                   .rep0 = rep0,
                   .want_test = D->n_test > 0 && test_risk != NULL,
                   .vec_len = vec_len,
                   .buf_len = buf_len,
                   .idx_len = idx_len,
                   .hash_cap = cap,
                   .hash_shift = 64 - log2cap,
                   .dense = dense,
                   .risk_rows = res->risk_replicates,
                   .clip_rows = clip_rows,
                   .info = info,
                   .theta_out = theta_out};
  const dpd__replicate_plan reps = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = wd,
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "simulate"};
  size_t failed;
  status = dpd__replicate_run(&reps, DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, replicate_kernel), &plan,
                              &failed, err);
  if (status < 0 && failed < seeds) {
    status = DPD_FAIL(err, DPD_ENONFINITE,
                      "simulate: replicate %zu (stream (%llu, %zu)) diverged at step %zu of %zu: "
                      "non-finite residual or risk (sup eta~ = %g; plain SGD on the rows is "
                      "stable only for eta~ < 2 n / max_j |x_j|^2, about 2/gamma = %g)",
                      rep0 + failed, (unsigned long long)cfg->seed, rep0 + failed,
                      info[failed].fail_step, n, dpd_schedule_sup(schedule),
                      2.0 * (double)n / (double)d);
  }
  if (status < 0) {
    goto cleanup;
  }

  /* Serial reduction in replicate order: identical for any thread count (as sim.c). */
  dpd__sim_result_reduce(res, kgrid, n);
  for (size_t r = 0; r < seeds; r++) {
    res->before_release_replicates[r] = info[r].before_release;
    res->final_replicates[r] = info[r].released;
    if (test_risk != NULL) {
      test_risk[r] = info[r].test_risk;
    }
  }
  dpd__sim_result_release_set(res, dpd_linreg_sim_config_setting_get(cfg));
  *out = res;
  res = NULL;
  status = DPD_OK;

cleanup:
  dpd_linreg_sim_result_free(res);
  free(eta);
  free(sigma);
  free(kgrid);
  free(info);
  return status;
}

int dpd__lrdata_sim_run(const dpd__lrdata *D, const double *theta_star,
                        const dpd_schedule *schedule, const dpd_linreg_sim_config *cfg,
                        dpd_linreg_sim_result **out, double *test_risk, dpd_err *err) {
  return sim_run(D, theta_star, schedule, cfg, 0, NULL, out, test_risk, err);
}

int dpd__lrdata_sim_theta(const dpd__lrdata *D, const double *theta_star,
                          const dpd_schedule *schedule, const dpd_linreg_sim_config *cfg,
                          size_t rep, double *theta, dpd_linreg_sim_result **out, double *test_risk,
                          dpd_err *err) {
  if (cfg == NULL || theta == NULL) {
    if (out != NULL) {
      *out = NULL;
    }
    return DPD_FAIL(err, DPD_EINVAL, "simulate: NULL argument (cfg, theta)");
  }
  dpd_linreg_sim_config one = *cfg;
  one.seeds = 1;
  return sim_run(D, theta_star, schedule, &one, rep, theta, out, test_risk, err);
}

int dpd__lrdata_sim_thetas(const dpd__lrdata *D, const dpd_schedule *schedule,
                           const dpd_linreg_sim_config *cfg, size_t rep0, double *thetas,
                           dpd_err *err) {
  dpd_linreg_sim_result *res = NULL;
  if (thetas == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: NULL argument (thetas)");
  }
  const int status = sim_run(D, NULL, schedule, cfg, rep0, thetas, &res, NULL, err);
  dpd_linreg_sim_result_free(res);
  return status;
}

double dpd__lrdata_sim_bytes(size_t d, size_t n, size_t seeds, size_t grid, double threads) {
  int log2cap;
  const double g = (double)grid, s = (double)seeds;
  const double cap = (double)hash_capacity(n, &log2cap);
  const double vec = (double)((d + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES);
  const double buf = (double)((d + 2 + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES);
  /* per thread: w, x, v, the Gaussians and the index storage (at most 2 cap + n entries), one
   * cache line of alignment */
  const double per_thread = 8.0 * (3.0 * vec + buf + 2.0 * cap + (double)n + CACHE_DOUBLES);
  /* the schedule (eta, sigma), the grid steps; the result: t, means, SEs, clip fractions on the
   * grid, each replicate's risk and clipping rows, three numbers and its record here */
  return threads * per_thread + 16.0 * (double)n + 8.0 * g + 8.0 * 4.0 * g +
         s * (8.0 * (2.0 * g + 3.0) + (double)sizeof(replicate_info));
}
