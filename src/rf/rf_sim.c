/* Full-batch DP-GD with per-sample clipping on random features, and the min-norm solution
 * (MATH.md 2).
 * SPDX-License-Identifier: MIT
 *
 * References: Bombari & Mondelli, PNAS 122 (2025) e2423072122 (arXiv:2410.14787), DP-GD of §3;
 * Abadi et al., CCS 2016 (per-sample clipping); notes-rf-nc-sp.md A.2. Min-norm least squares:
 * LAPACK xGELSD (Anderson et al., LAPACK Users' Guide, 3rd ed., SIAM 1999, §2.4.2).
 *
 * Per step (rf_sim.h): r = Phi theta - y, w_i = min(1, C / (2 |r_i| ||phi_i||)),
 * g = (1/n) Phi^T (2 w .* r). Because g needs only r_i for row i, one pass over the rows does
 * both products: r_i = phi_i . theta, then g += (2 w_i r_i / n) phi_i while the row is still in
 * cache. Phi (n x p, row-major) is thus read once per step instead of twice (two dgemv), which
 * halves the traffic when Phi does not fit in cache; no n x p per-sample gradient is
 * ever formed. bench/bench_rf.sh compares this pass with two OpenBLAS dgemv and NumPy.
 *
 * Why not OpenBLAS dgemv: its result may depend on its own thread count (it splits the
 * reduction of Phi^T v across threads), and openblas_set_num_threads is process-global, so it
 * cannot be pinned per call. Here the rows are cut into RF_CHUNKS fixed blocks, each with its
 * own partial gradient, added in block order; dot products use eight partial sums in a fixed
 * order. With at least as many replicates as threads, replicates run in parallel (OpenMP,
 * dynamic schedule) and each runs its blocks in series; with fewer, the blocks of one replicate
 * run on all threads. The arithmetic is the same in both cases, and reductions over replicates
 * are serial in replicate order, so results are bit-identical for any thread count. */
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "dpdyn/rng.h"
#include "linreg/result_impl.h"
#include "rf/dot_impl.h"
#include "rf/rf_sim_impl.h"

#define RF_SIM_T_DEFAULT 1000
#define RF_SIM_ETA_DEFAULT 0.1
#define RF_SIM_SEEDS_DEFAULT 8
#define RF_SIM_SEED_DEFAULT 1
#define RF_SIM_GRID_DEFAULT 101

dpd_rf_sim_config dpd_rf_sim_config_default(void) {
  dpd_rf_sim_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.T = RF_SIM_T_DEFAULT;
  cfg.eta = RF_SIM_ETA_DEFAULT;
  cfg.clip = INFINITY;
  cfg.sigma = 0.0;
  cfg.seeds = RF_SIM_SEEDS_DEFAULT;
  cfg.seed = RF_SIM_SEED_DEFAULT;
  cfg.grid = RF_SIM_GRID_DEFAULT;
  cfg.threads = 0;
  cfg.progress = 0;
  return cfg;
}

void dpd_rf_sim_result_free(dpd_rf_sim_result *res) {
  if (res == NULL) {
    return;
  }
  free(res->step);
  free(res->train_mean);
  free(res->train_se);
  free(res->test_mean);
  free(res->test_se);
  free(res->train_replicates);
  free(res->test_replicates);
  free(res->clip_fraction);
  free(res->theta_last);
  free(res->first_clip);
  free(res);
}

void dpd_rf_sim_grid_steps(size_t T, size_t grid, size_t *steps) {
  for (size_t j = 0; j < grid; j++) {
    steps[j] = (size_t)floor((double)j * (double)T / (double)(grid - 1) + 0.5);
  }
  steps[grid - 1] = T;
}

/* Rows are split into RF_CHUNKS fixed blocks [c n / K, (c + 1) n / K); block c accumulates its
 * own partial gradient, and the partials are added in block order. The arithmetic is therefore
 * the same whether the blocks run one after the other (replicates in parallel) or on several
 * threads (one replicate, many threads): bit-identical for any thread count. */
#define RF_CHUNKS 8

static size_t chunks_of(size_t n) {
  return n < RF_CHUNKS ? n : RF_CHUNKS;
}

/* Rows [i0, i1): r_i = phi_i . theta - y_i into r, gp = sum_i (2 w_i r_i / n) phi_i (overwritten).
 * Returns the number of clipped rows. Compiled once per instruction set (below); the loops are
 * lane-wise with a fixed reduction order and the file is built without FMA contraction, so
 * every version gives the same bits. */
static inline __attribute__((always_inline)) size_t
chunk_pass_body(const dpd_rf_problem *problem, const double *theta, double C, size_t i0, size_t i1,
                double *restrict gp, double *r) {
  const size_t p = problem->p;
  const double inv_n = 1.0 / (double)problem->n;
  size_t clipped = 0;
  memset(gp, 0, p * sizeof *gp);
  for (size_t i = i0; i < i1; i++) {
    const double *restrict row = problem->phi + i * p;
    double ri = dpd__dot8(row, theta, p) - problem->y[i];
    r[i] = ri;
    double norm = 2.0 * fabs(ri) * problem->row_norm[i]; /* ||grad_i|| */
    double w = 1.0;
    if (norm > C) {
      w = C / norm;
      clipped++;
    }
    const double c = 2.0 * w * ri * inv_n;
    for (size_t k = 0; k < p; k++) {
      gp[k] += c * row[k];
    }
  }
  return clipped;
}

/* (1/rows) sum over rows [i0, i1) of (phi_i . theta - y_i)^2, unnormalised. */
static inline __attribute__((always_inline)) double sq_resid_body(const double *phi,
                                                                  const double *y, size_t p,
                                                                  const double *theta, size_t i0,
                                                                  size_t i1) {
  double sum = 0.0;
  for (size_t i = i0; i < i1; i++) {
    double ri = dpd__dot8(phi + i * p, theta, p) - y[i];
    sum += ri * ri;
  }
  return sum;
}

typedef size_t (*chunk_fn)(const dpd_rf_problem *, const double *, double, size_t, size_t, double *,
                           double *);
typedef double (*sq_fn)(const double *, const double *, size_t, const double *, size_t, size_t);

static size_t chunk_pass_generic(const dpd_rf_problem *problem, const double *theta, double C,
                                 size_t i0, size_t i1, double *gp, double *r) {
  return chunk_pass_body(problem, theta, C, i0, i1, gp, r);
}
static double sq_resid_generic(const double *phi, const double *y, size_t p, const double *theta,
                               size_t i0, size_t i1) {
  return sq_resid_body(phi, y, p, theta, i0, i1);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static size_t chunk_pass_avx2(const dpd_rf_problem *problem,
                                                              const double *theta, double C,
                                                              size_t i0, size_t i1, double *gp,
                                                              double *r) {
  return chunk_pass_body(problem, theta, C, i0, i1, gp, r);
}
__attribute__((target("avx2"))) static double sq_resid_avx2(const double *phi, const double *y,
                                                            size_t p, const double *theta,
                                                            size_t i0, size_t i1) {
  return sq_resid_body(phi, y, p, theta, i0, i1);
}
__attribute__((target("avx512f,prefer-vector-width=512"))) static size_t
chunk_pass_avx512(const dpd_rf_problem *problem, const double *theta, double C, size_t i0,
                  size_t i1, double *gp, double *r) {
  return chunk_pass_body(problem, theta, C, i0, i1, gp, r);
}
__attribute__((target("avx512f,prefer-vector-width=512"))) static double
sq_resid_avx512(const double *phi, const double *y, size_t p, const double *theta, size_t i0,
                size_t i1) {
  return sq_resid_body(phi, y, p, theta, i0, i1);
}
#endif

/* The kernels for `isa` (falls back to generic when this CPU cannot run it). */
static void select_kernels(dpd_rng_isa isa, chunk_fn *chunk, sq_fn *sq) {
  *chunk = chunk_pass_generic;
  *sq = sq_resid_generic;
#if defined(__x86_64__) || defined(__i386__)
  dpd_rng_isa best = dpd_rng_isa_get();
  if (isa == DPD_RNG_ISA_AVX512 && best == DPD_RNG_ISA_AVX512) {
    *chunk = chunk_pass_avx512;
    *sq = sq_resid_avx512;
  } else if (isa != DPD_RNG_ISA_SCALAR &&
             (best == DPD_RNG_ISA_AVX2 || best == DPD_RNG_ISA_AVX512)) {
    *chunk = chunk_pass_avx2;
    *sq = sq_resid_avx2;
  }
#else
  (void)isa;
#endif
}

/* g = clipped mean gradient with the block partials in parts[(K - 1) p] (work), blocks run on
 * `threads` threads (1: serially), with the kernels of `isa`. */
static size_t gradient_pass_isa(const dpd_rf_problem *problem, const double *theta, double C,
                                double *g, double *parts, double *r, int threads, dpd_rng_isa isa) {
  const size_t n = problem->n, p = problem->p, K = chunks_of(n);
  size_t counts[RF_CHUNKS] = {0};
  chunk_fn chunk;
  sq_fn unused;
  select_kernels(isa, &chunk, &unused);
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (threads > 1)
  for (size_t c = 0; c < K; c++) {
    counts[c] =
        chunk(problem, theta, C, c * n / K, (c + 1) * n / K, c == 0 ? g : parts + (c - 1) * p, r);
  }
  size_t clipped = counts[0];
  for (size_t c = 1; c < K; c++) {
    const double *restrict q = parts + (c - 1) * p;
    for (size_t k = 0; k < p; k++) {
      g[k] += q[k];
    }
    clipped += counts[c];
  }
  return clipped;
}

static size_t gradient_pass(const dpd_rf_problem *problem, const double *theta, double C, double *g,
                            double *parts, double *r, int threads) {
  return gradient_pass_isa(problem, theta, C, g, parts, r, threads, dpd_rng_isa_get());
}

size_t dpd__rf_clipped_gradient_isa(const dpd_rf_problem *problem, const double *theta, double C,
                                    double *g, double *r, dpd_rng_isa isa) {
  const size_t K = chunks_of(problem->n);
  double *parts = K > 1 ? malloc((K - 1) * problem->p * sizeof *parts) : NULL;
  if (K > 1 && parts == NULL) {
    return SIZE_MAX;
  }
  size_t clipped = gradient_pass_isa(problem, theta, C, g, parts, r, 1, isa);
  free(parts);
  return clipped;
}

size_t dpd_rf_clipped_gradient_eval(const dpd_rf_problem *problem, const double *theta, double C,
                                    double *g, double *r) {
  return dpd__rf_clipped_gradient_isa(problem, theta, C, g, r, dpd_rng_isa_get());
}

/* (1/rows) sum_i (phi_i . theta - y_i)^2 with the same fixed row blocks (partial sums added in
 * block order), blocks on `threads` threads. */
static double risk_pass(const dpd_rf_problem *problem, const double *theta, int test, int threads) {
  const size_t rows = test ? problem->n_test : problem->n, p = problem->p, K = chunks_of(rows);
  const double *phi = test ? problem->phi_test : problem->phi;
  const double *y = test ? problem->y_test : problem->y;
  double part[RF_CHUNKS] = {0};
  chunk_fn unused;
  sq_fn sq;
  select_kernels(dpd_rng_isa_get(), &unused, &sq);
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (threads > 1)
  for (size_t c = 0; c < K; c++) {
    part[c] = sq(phi, y, p, theta, c * rows / K, (c + 1) * rows / K);
  }
  double sum = 0.0;
  for (size_t c = 0; c < K; c++) {
    sum += part[c];
  }
  return sum / (double)rows;
}

double dpd_rf_risk_eval(const dpd_rf_problem *problem, const double *theta, int test) {
  return risk_pass(problem, theta, test, 1);
}

static int validate(const dpd_rf_problem *problem, const dpd_rf_sim_config *cfg,
                    dpd_rf_sim_result **out, dpd_err *err) {
  if (problem == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rf_sim: NULL problem, config or output pointer");
  }
  if (cfg->T < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'T': %zu (allowed: integer >= 1)", cfg->T);
  }
  if (cfg->seeds < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'seeds': %zu (allowed: integer >= 1)",
                    cfg->seeds);
  }
  if (cfg->grid < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'grid': %zu (allowed: integer >= 2)",
                    cfg->grid);
  }
  if (!(cfg->eta > 0.0) || !isfinite(cfg->eta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'eta': %g (allowed: finite, > 0)",
                    cfg->eta);
  }
  if (!(cfg->clip > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'clip': %g (allowed: > 0, or inf)",
                    cfg->clip);
  }
  if (!(cfg->sigma >= 0.0) || !isfinite(cfg->sigma)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'sigma': %g (allowed: finite, >= 0)",
                    cfg->sigma);
  }
  if (cfg->sigma > 0.0 && !isfinite(cfg->clip)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'sigma': %g with clip = inf (allowed: 0 without clipping; "
                    "noise needs a finite clip)",
                    cfg->sigma);
  }
  const size_t max_doubles = SIZE_MAX / sizeof(double) / 4;
  if (cfg->seeds > max_doubles / cfg->grid || cfg->seeds > max_doubles / cfg->T ||
      problem->p > max_doubles) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'seeds': sizes too large (seeds = %zu, T = %zu, grid = %zu)",
                    cfg->seeds, cfg->T, cfg->grid);
  }
  return DPD_OK;
}

typedef struct {
  const dpd_rf_problem *problem;
  const size_t *kgrid; /* [grid] */
  size_t T, grid;
  double eta, C, noise_scale; /* noise_scale = sqrt(eta) (2 C / n) sigma, 0: none */
  uint64_t seed;
  int progress;       /* progress line on stderr */
  size_t total_steps; /* seeds * T */
  size_t *steps_done; /* shared counter (progress only) */
} plan;

/* Adds `k` finished steps to the shared count and redraws the progress line (at most every
 * percent). Output only; the results never depend on it. */
static void progress_add(const plan *pl, size_t k) {
#pragma omp critical(dpd_rf_progress)
  {
    size_t before = *pl->steps_done, after = before + k;
    *pl->steps_done = after;
    if (after * 100 / pl->total_steps != before * 100 / pl->total_steps ||
        after == pl->total_steps) {
      fprintf(stderr, "\rdpdyn rf: %3zu%% of %zu DP-GD steps", after * 100 / pl->total_steps,
              pl->total_steps);
      if (after == pl->total_steps) {
        fputc('\n', stderr);
      }
    }
  }
}

/* One replicate: writes its train/test rows [grid], clip counts [T], and theta_T into theta.
 * Returns the failing step + 1 on a non-finite risk, 0 otherwise. */
static size_t replicate(const plan *pl, size_t rep, double *theta, double *g, double *xi, double *r,
                        double *parts, int inner, double *train, double *test, double *clips) {
  const dpd_rf_problem *pr = pl->problem;
  const size_t n = pr->n, p = pr->p;
  dpd_rng rng;
  dpd_rng_init(&rng, pl->seed, (uint64_t)rep);
  memset(theta, 0, p * sizeof *theta);
  size_t j = 0;
  for (size_t t = 0; t < pl->T; t++) {
    clips[t] = (double)gradient_pass(pr, theta, pl->C, g, parts, r, inner);
    double train_risk = dpd__dot8(r, r, n) / (double)n;
    if (!isfinite(train_risk)) {
      return t + 1;
    }
    while (j < pl->grid && pl->kgrid[j] == t) {
      train[j] = train_risk;
      test[j] = risk_pass(pr, theta, 1, inner);
      j++;
    }
    if (pl->progress && ((t + 1) % 16 == 0 || t + 1 == pl->T)) {
      progress_add(pl, (t + 1) % 16 == 0 ? 16 : (t + 1) % 16);
    }
    const double eta = pl->eta;
    if (pl->noise_scale > 0.0) {
      const double ns = pl->noise_scale;
      dpd_rng_gaussian_fill(&rng, xi, p);
      for (size_t k = 0; k < p; k++) {
        theta[k] -= eta * g[k] + ns * xi[k];
      }
    } else {
      for (size_t k = 0; k < p; k++) {
        theta[k] -= eta * g[k];
      }
    }
  }
  if (j < pl->grid) {
    double train_risk = risk_pass(pr, theta, 0, inner);
    double test_risk = risk_pass(pr, theta, 1, inner);
    if (!isfinite(train_risk) || !isfinite(test_risk)) {
      return pl->T + 1;
    }
    for (; j < pl->grid; j++) {
      train[j] = train_risk;
      test[j] = test_risk;
    }
  }
  return 0;
}

int dpd_rf_sim_run(const dpd_rf_problem *problem, const dpd_rf_sim_config *cfg,
                   dpd_rf_sim_result **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  int status = validate(problem, cfg, out, err);
  if (status < 0) {
    return status;
  }
  const size_t n = problem->n, p = problem->p, T = cfg->T, seeds = cfg->seeds, grid = cfg->grid;
  int nthreads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
  /* Enough replicates: one per thread, row blocks in series. Fewer replicates than threads: one
   * replicate at a time, its row blocks on all threads. Same arithmetic either way. */
  int inner = 1;
  if ((size_t)nthreads > seeds) {
    inner = nthreads;
    nthreads = 1;
  }
  const size_t stride = (2 + chunks_of(n)) * p + n;

  dpd_rf_sim_result *res = calloc(1, sizeof *res);
  double *clip_rows = malloc(seeds * T * sizeof *clip_rows);
  size_t *fail = malloc(seeds * sizeof *fail);
  double *work = malloc((size_t)nthreads * stride * sizeof *work);
  if (res != NULL) {
    res->grid = grid;
    res->seeds = seeds;
    res->T = T;
    res->p = p;
    res->step = malloc(grid * sizeof *res->step);
    res->train_mean = malloc(grid * sizeof *res->train_mean);
    res->train_se = malloc(grid * sizeof *res->train_se);
    res->test_mean = malloc(grid * sizeof *res->test_mean);
    res->test_se = malloc(grid * sizeof *res->test_se);
    res->train_replicates = malloc(seeds * grid * sizeof *res->train_replicates);
    res->test_replicates = malloc(seeds * grid * sizeof *res->test_replicates);
    res->clip_fraction = malloc(T * sizeof *res->clip_fraction);
    res->theta_last = malloc(p * sizeof *res->theta_last);
    res->first_clip = malloc(seeds * sizeof *res->first_clip);
  }
  if (res == NULL || clip_rows == NULL || fail == NULL || work == NULL || res->step == NULL ||
      res->train_mean == NULL || res->train_se == NULL || res->test_mean == NULL ||
      res->test_se == NULL || res->train_replicates == NULL || res->test_replicates == NULL ||
      res->clip_fraction == NULL || res->theta_last == NULL || res->first_clip == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "rf_sim: out of memory (p = %zu, T = %zu, seeds = %zu)", p,
                      T, seeds);
    goto cleanup;
  }
  dpd_rf_sim_grid_steps(T, grid, res->step);

  const double C = isfinite(cfg->clip) ? cfg->clip * sqrt((double)p) : INFINITY;
  size_t steps_done = 0;
  const plan pl = {.problem = problem,
                   .kgrid = res->step,
                   .T = T,
                   .grid = grid,
                   .eta = cfg->eta,
                   .C = C,
                   .noise_scale =
                       cfg->sigma > 0.0 ? sqrt(cfg->eta) * (2.0 * C / (double)n) * cfg->sigma : 0.0,
                   .seed = cfg->seed,
                   .progress = cfg->progress,
                   .total_steps = seeds * T,
                   .steps_done = &steps_done};

#pragma omp parallel num_threads(nthreads)
  {
    double *theta = work + (size_t)omp_get_thread_num() * stride;
    double *g = theta + p, *xi = g + p, *r = xi + p, *parts = r + n;
#pragma omp for schedule(dynamic, 1)
    for (size_t rep = 0; rep < seeds; rep++) {
      fail[rep] =
          replicate(&pl, rep, theta, g, xi, r, parts, inner, res->train_replicates + rep * grid,
                    res->test_replicates + rep * grid, clip_rows + rep * T);
      if (rep == 0) {
        memcpy(res->theta_last, theta, p * sizeof *theta);
      }
    }
  }

  for (size_t rep = 0; rep < seeds; rep++) {
    if (fail[rep] > 0) {
      status = DPD_FAIL(err, DPD_ENONFINITE,
                        "rf_sim: replicate %zu (stream (%llu, %zu)) diverged at step %zu of %zu: "
                        "non-finite risk (eta = %g; plain GD is stable only for eta < 2 / "
                        "lambda_max((2/n) Phi^T Phi))",
                        rep, (unsigned long long)cfg->seed, rep, fail[rep] - 1, T, cfg->eta);
      goto cleanup;
    }
  }
  /* Serial reductions in replicate order: identical for any thread count. */
  for (size_t j = 0; j < grid; j++) {
    dpd__mean_se(res->train_replicates + j, seeds, grid, &res->train_mean[j], &res->train_se[j]);
    dpd__mean_se(res->test_replicates + j, seeds, grid, &res->test_mean[j], &res->test_se[j]);
  }
  double total = 0.0;
  for (size_t t = 0; t < T; t++) {
    double c = 0.0;
    for (size_t rep = 0; rep < seeds; rep++) {
      c += clip_rows[rep * T + t];
    }
    total += c;
    res->clip_fraction[t] = c / ((double)n * (double)seeds);
  }
  for (size_t rep = 0; rep < seeds; rep++) {
    res->first_clip[rep] = T;
    for (size_t t = 0; t < T; t++) {
      if (clip_rows[rep * T + t] > 0.0) {
        res->first_clip[rep] = t;
        break;
      }
    }
  }
  res->clip_fraction_total = total / ((double)n * (double)seeds * (double)T);
  *out = res;
  res = NULL;
  status = DPD_OK;

cleanup:
  dpd_rf_sim_result_free(res);
  free(clip_rows);
  free(fail);
  free(work);
  return status;
}

int dpd_rf_theta_star_get(const dpd_rf_problem *problem, double rcond, double *theta_star,
                          double *train_risk, double *test_risk, dpd_err *err) {
  if (problem == NULL || theta_star == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rf theta*: NULL problem or output");
  }
  const size_t n = problem->n, p = problem->p;
  const size_t m = n > p ? n : p, k = n < p ? n : p;
  double *A = malloc(n * p * sizeof *A);
  double *b = malloc(m * sizeof *b);
  double *s = malloc(k * sizeof *s);
  int status = DPD_OK;
  if (A == NULL || b == NULL || s == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "rf theta*: out of memory (n = %zu, p = %zu)", n, p);
    goto cleanup;
  }
  memcpy(A, problem->phi, n * p * sizeof *A);
  memset(b, 0, m * sizeof *b);
  memcpy(b, problem->y, n * sizeof *b);
  lapack_int rank = 0;
  lapack_int info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)p, 1, A,
                                   (lapack_int)p, b, 1, s, rcond, &rank);
  if (info != 0) {
    status =
        DPD_FAIL(err, info > 0 ? DPD_ESOLVER : DPD_EINVAL,
                 "rf theta*: LAPACKE_dgelsd failed (info = %d; n = %zu, p = %zu)", (int)info, n, p);
    goto cleanup;
  }
  memcpy(theta_star, b, p * sizeof *theta_star);
  if (train_risk != NULL) {
    *train_risk = dpd_rf_risk_eval(problem, theta_star, 0);
  }
  if (test_risk != NULL) {
    *test_risk = dpd_rf_risk_eval(problem, theta_star, 1);
  }

cleanup:
  free(A);
  free(b);
  free(s);
  return status;
}
