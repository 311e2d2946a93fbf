/* Full-batch DP-GD with per-sample clipping on random features, and the min-norm solution
 * (docs/math.md §2.2).
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
 * cannot be pinned per call. Here the rows are cut into blocks whose number depends on n alone
 * (blocks_of: n / 16 blocks, at most 64), each with its own partial gradient, added in block
 * order; dot products use eight partial sums in a fixed order. With at least as many replicates
 * as threads, replicates run in parallel (OpenMP, dynamic schedule) and each runs its blocks in
 * series; with fewer, the blocks of one replicate run on all threads (static schedule, so a
 * thread keeps its rows from step to step) and the partials are added on all threads, each
 * thread a range of columns. The arithmetic is the same in both cases, and reductions over
 * replicates are serial in replicate order, so results are bit-identical for any thread
 * count. */
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "isa/isa_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "dpdyn/rng.h"
#include "core/dot_impl.h"
#include "rf/rf_sim_impl.h"
#include "rf/rf_run_impl.h"

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
  cfg.progress = NULL;
  cfg.progress_user = NULL;
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

/* Row blocking, from the shape alone (never from the thread count). The rows are cut into
 * K = blocks_of(n) fixed blocks [c n / K, (c + 1) n / K): at least RF_BLOCK_ROWS rows each
 * (zeroing and adding a block's partial gradient costs 2 p operations in cache, against the
 * block's >= RF_BLOCK_ROWS p entries of Phi read from memory) and at most RF_BLOCKS_MAX blocks (4
 * per thread at 16 threads, so static schedules stay balanced at 1, 2, 4, 8 and 16 threads). Block
 * c accumulates its own partial gradient from zero, rows in order; the partials are added into g in
 * block order. How many partials are held at once (1 when the blocks run in series, up to K when
 * they run in parallel, fewer when K p would exceed RF_PARTS_BUDGET doubles) changes only the
 * memory, never the arithmetic, so every thread count gives the same bits. */
#define RF_BLOCK_ROWS 16
#define RF_BLOCKS_MAX 64
#define RF_PARTS_BUDGET ((size_t)1 << 21) /* doubles (16 MiB) of partials held at once */

static size_t blocks_of(size_t rows) {
  const size_t K = rows / RF_BLOCK_ROWS;
  return K < 1 ? 1 : K > RF_BLOCKS_MAX ? RF_BLOCKS_MAX : K;
}

/* Partial gradients held at once by a replicate whose blocks run on `threads` threads: all K
 * when K p fits the budget, otherwise a multiple of the thread count (at least one per thread). */
static size_t parts_held(size_t n, size_t p, int threads) {
  const size_t K = blocks_of(n), t = threads > 1 ? (size_t)threads : 1;
  if (t == 1) {
    return 1;
  }
  const size_t m = RF_PARTS_BUDGET / (p > 0 ? p : 1);
  if (K <= m) {
    return K;
  }
  const size_t h = m < t ? t : m - m % t;
  return h < K ? h : K;
}

/* Rows handled together by the kernel: their dot products share the loads of theta and their
 * axpys share the loads and stores of the partial gradient. */
#define RF_GROUP 4

/* out[q] = rows[q] . theta for q < RF_GROUP, each with exactly dpd__dot8's arithmetic (eight
 * lane sums in index order, combined pairwise), so grouping never changes a bit. */
static inline __attribute__((always_inline)) void
dot8_group(const double *restrict row, size_t p, const double *restrict theta, double *out) {
  double acc[RF_GROUP][8] = {{0}};
  size_t k = 0;
  for (; k + 8 <= p; k += 8) {
    for (size_t q = 0; q < RF_GROUP; q++) {
      for (size_t j = 0; j < 8; j++) {
        acc[q][j] += row[q * p + k + j] * theta[k + j];
      }
    }
  }
  for (size_t q = 0; q < RF_GROUP; q++) {
    for (size_t j = 0; k + j < p; j++) {
      acc[q][j] += row[q * p + k + j] * theta[k + j];
    }
    const double *a = acc[q];
    out[q] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  }
}

/* Residual of row i into r[i] and its clipped weight factor 2 w_i r_i / n into *coef; returns 1
 * if the row is clipped. */
static inline __attribute__((always_inline)) size_t
row_coef(const dpd_rf_problem *problem, size_t i, double dot, double C, double *r, double *coef) {
  const double ri = dot - problem->y[i];
  r[i] = ri;
  const double norm = 2.0 * fabs(ri) * problem->row_norm[i]; /* ||grad_i|| */
  double w = 1.0;
  size_t clipped = 0;
  if (norm > C) {
    w = C / norm;
    clipped = 1;
  }
  *coef = 2.0 * w * ri * (1.0 / (double)problem->n);
  return clipped;
}

/* Rows [i0, i1): r_i = phi_i . theta - y_i into r, gp = sum_i (2 w_i r_i / n) phi_i from zero,
 * rows in order (overwritten). Returns the number of clipped rows. Compiled once per instruction
 * set (below); the loops are lane-wise with a fixed reduction order and the file is built
 * without FMA contraction, so every version gives the same bits. Rows go RF_GROUP at a time:
 * gp[k] = (((gp[k] + c_0 a_0[k]) + c_1 a_1[k]) + ...) is the row-by-row order, in one pass. */
static inline __attribute__((always_inline)) size_t
block_pass_body(const dpd_rf_problem *problem, const double *theta, double C, size_t i0, size_t i1,
                double *restrict gp, double *r) {
  const size_t p = problem->p;
  size_t clipped = 0;
  memset(gp, 0, p * sizeof *gp);
  size_t i = i0;
  for (; i + RF_GROUP <= i1; i += RF_GROUP) {
    const double *restrict row = problem->phi + i * p;
    double dot[RF_GROUP], c[RF_GROUP];
    dot8_group(row, p, theta, dot);
    for (size_t q = 0; q < RF_GROUP; q++) {
      clipped += row_coef(problem, i + q, dot[q], C, r, &c[q]);
    }
    for (size_t k = 0; k < p; k++) {
      double s = gp[k];
      for (size_t q = 0; q < RF_GROUP; q++) {
        s += c[q] * row[q * p + k];
      }
      gp[k] = s;
    }
  }
  for (; i < i1; i++) {
    const double *restrict row = problem->phi + i * p;
    double c;
    clipped += row_coef(problem, i, dpd__dot8(row, theta, p), C, r, &c);
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

DPD__ISA_CLONES(size_t, block_pass,
                (const dpd_rf_problem *problem, const double *theta, double C, size_t i0, size_t i1,
                 double *gp, double *r),
                block_pass_body(problem, theta, C, i0, i1, gp, r))
DPD__ISA_CLONES(double, sq_resid,
                (const double *phi, const double *y, size_t p, const double *theta, size_t i0,
                 size_t i1),
                sq_resid_body(phi, y, p, theta, i0, i1))

/* Columns per task when the partials are added into g on several threads (any width gives the
 * same bits: each column is summed over the blocks in block order). */
#define RF_SUM_COLUMNS 128

/* g = clipped mean gradient, the blocks on `threads` threads (1: in series) with `held`
 * (parts_held) partials in parts[held p] (work), with the kernels of `isa`. */
static size_t gradient_pass_isa(const dpd_rf_problem *problem, const double *theta, double C,
                                double *g, double *parts, size_t held, double *r, int threads,
                                dpd_isa isa) {
  const size_t n = problem->n, p = problem->p, K = blocks_of(n);
  size_t counts[RF_BLOCKS_MAX] = {0};
  size_t (*const block)(const dpd_rf_problem *, const double *, double, size_t, size_t, double *,
                        double *) = DPD__ISA_CLONE_PICK(isa, block_pass);
  memset(g, 0, p * sizeof *g);
  if (threads <= 1 || held <= 1) {
    for (size_t c = 0; c < K; c++) {
      counts[c] = block(problem, theta, C, c * n / K, (c + 1) * n / K, parts, r);
      for (size_t k = 0; k < p; k++) {
        g[k] += parts[k];
      }
    }
  } else {
    const size_t tiles = (p + RF_SUM_COLUMNS - 1) / RF_SUM_COLUMNS;
#pragma omp parallel num_threads(threads)
    for (size_t c0 = 0; c0 < K; c0 += held) {
      const size_t c1 = c0 + held < K ? c0 + held : K;
#pragma omp for schedule(static)
      for (size_t c = c0; c < c1; c++) {
        counts[c] = block(problem, theta, C, c * n / K, (c + 1) * n / K, parts + (c - c0) * p, r);
      }
#pragma omp for schedule(static)
      for (size_t t = 0; t < tiles; t++) {
        const size_t k0 = t * RF_SUM_COLUMNS,
                     k1 = k0 + RF_SUM_COLUMNS < p ? k0 + RF_SUM_COLUMNS : p;
        for (size_t c = c0; c < c1; c++) {
          const double *restrict q = parts + (c - c0) * p;
          for (size_t k = k0; k < k1; k++) {
            g[k] += q[k];
          }
        }
      }
    }
  }
  size_t clipped = 0;
  for (size_t c = 0; c < K; c++) {
    clipped += counts[c];
  }
  return clipped;
}

static size_t gradient_pass(const dpd_rf_problem *problem, const double *theta, double C, double *g,
                            double *parts, size_t held, double *r, int threads) {
  return gradient_pass_isa(problem, theta, C, g, parts, held, r, threads, DPD_ISA_AUTO);
}

size_t dpd__rf_clipped_gradient_isa(const dpd_rf_problem *problem, const double *theta, double C,
                                    double *g, double *r, dpd_isa isa) {
  double *parts = malloc(problem->p * sizeof *parts);
  if (parts == NULL) {
    return SIZE_MAX;
  }
  size_t clipped = gradient_pass_isa(problem, theta, C, g, parts, 1, r, 1, isa);
  free(parts);
  return clipped;
}

size_t dpd__rf_blocks(size_t rows) {
  return blocks_of(rows);
}

size_t dpd__rf_clipped_gradient_threads(const dpd_rf_problem *problem, const double *theta,
                                        double C, double *g, double *r, int threads, size_t held) {
  held = held < 1 ? 1 : held;
  double *parts = malloc(held * problem->p * sizeof *parts);
  if (parts == NULL) {
    return SIZE_MAX;
  }
  size_t clipped = gradient_pass_isa(problem, theta, C, g, parts, held, r, threads, DPD_ISA_AUTO);
  free(parts);
  return clipped;
}

size_t dpd_rf_clipped_gradient_eval(const dpd_rf_problem *problem, const double *theta, double C,
                                    double *g, double *r) {
  return dpd__rf_clipped_gradient_isa(problem, theta, C, g, r, DPD_ISA_AUTO);
}

/* (1/rows) sum_i (phi_i . theta - y_i)^2 with the same fixed row blocks (partial sums added in
 * block order), blocks on `threads` threads. */
static double risk_pass(const dpd_rf_problem *problem, const double *theta, int test, int threads) {
  const size_t rows = test ? problem->n_test : problem->n, p = problem->p, K = blocks_of(rows);
  const double *phi = test ? problem->phi_test : problem->phi;
  const double *y = test ? problem->y_test : problem->y;
  double part[RF_BLOCKS_MAX] = {0};
  double (*const sq)(const double *, const double *, size_t, const double *, size_t, size_t) =
      DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, sq_resid);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
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

/* The config against problems with p features. */
static int validate(size_t p, const dpd_rf_sim_config *cfg, dpd_err *err) {
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
      p > max_doubles) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'seeds': sizes too large (seeds = %zu, T = %zu, grid = %zu)",
                    cfg->seeds, cfg->T, cfg->grid);
  }
  return DPD_OK;
}

/* Everything a replicate needs, shared by all threads: read-only but for the output slots of
 * each replicate. */
typedef struct {
  const dpd_rf_problem *problem;
  const size_t *kgrid; /* [grid] */
  size_t T, grid;
  double eta, C, noise_scale; /* noise_scale = sqrt(eta) (2 C / n) sigma, 0: none */
  uint64_t seed;
  size_t rep0;          /* replicate index of the driver's replicate 0 (one replicate per draw) */
  int noise_shared;     /* 1: every replicate draws noise stream (seed, 0) (resample = data) */
  int inner;            /* threads on the row blocks of one replicate */
  size_t held;          /* partial gradients held at once (parts_held) */
  double *train, *test; /* [seeds * grid] outputs: replicate r writes row r of each */
  double *clips;        /* [seeds * T] */
  size_t *fail;         /* [seeds] failing step + 1, 0: none */
  double *theta_last;   /* [p] theta_T of replicate 0 */
} plan;

/* Steps between two progress reports of a replicate. */
#define RF_PROGRESS_STEPS 16

/* One replicate: writes its train/test rows [grid], clip counts [T], and theta_T into theta.
 * Returns the failing step + 1 on a non-finite risk, 0 otherwise, and SIZE_MAX when a stop
 * was requested. */
static size_t replicate(const plan *pl, size_t rep, double *theta, double *g, double *xi, double *r,
                        double *parts, double *train, double *test, double *clips,
                        dpd__replicate_slot *slot) {
  const dpd_rf_problem *pr = pl->problem;
  const size_t n = pr->n, p = pr->p;
  const int inner = pl->inner;
  dpd_rng rng;
  dpd_rng_init(&rng, pl->seed, pl->noise_shared ? 0 : (uint64_t)rep);
  memset(theta, 0, p * sizeof *theta);
  size_t j = 0;
  for (size_t t = 0; t < pl->T; t++) {
    clips[t] = (double)gradient_pass(pr, theta, pl->C, g, parts, pl->held, r, inner);
    double train_risk = dpd__dot8(r, r, n) / (double)n;
    if (!isfinite(train_risk)) {
      return t + 1;
    }
    while (j < pl->grid && pl->kgrid[j] == t) {
      train[j] = train_risk;
      test[j] = risk_pass(pr, theta, 1, inner);
      j++;
    }
    if ((t + 1) % RF_PROGRESS_STEPS == 0 && dpd__replicate_progress(slot, RF_PROGRESS_STEPS)) {
      return SIZE_MAX;
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

static size_t rf_pad8(size_t n) {
  return (n + 7) / 8 * 8;
}

/* Replicate `rep` on this thread's workspace (dpd__replicate_fn); the driver's index is offset
 * by pl->rep0. */
static int run_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  const plan *pl = job;
  rep += pl->rep0;
  const size_t n = pl->problem->n, p = pl->problem->p, grid = pl->grid;
  /* parts starts on a 64-byte boundary like work: n rounded up to a multiple of 8. */
  double *theta = work, *g = theta + p, *xi = g + p, *r = xi + p, *parts = r + rf_pad8(n);
  const size_t fail = replicate(pl, rep, theta, g, xi, r, parts, pl->train + rep * grid,
                                pl->test + rep * grid, pl->clips + rep * pl->T, slot);
  if (fail == SIZE_MAX) {
    return DPD_ECANCELLED;
  }
  pl->fail[rep] = fail;
  if (rep == 0) {
    memcpy(pl->theta_last, theta, p * sizeof *theta);
  }
  return fail > 0 ? DPD_ENONFINITE : DPD_OK;
}

/* Progress of one draw's replicate (DATA, ALL) as steps over the whole run. */
typedef struct {
  dpd_progress_fn fn;
  void *user;
  size_t offset, total;
} progress_offset;

static int progress_offset_fn(void *user, size_t done, size_t total) {
  const progress_offset *o = user;
  (void)total;
  return o->fn(o->user, o->offset + done, o->total);
}

/* The replicates: on `problem` for all of them (NOISE), or, with problem = NULL, replicate r on
 * its own problem, draw pc->draw + r, built here (DATA, ALL). on_draw sees every problem. */
static int sim_core(const dpd_rf_problem *problem, const dpd_rf_config *pc,
                    dpd_rf_resample resample, dpd_rf_draw_fn on_draw, void *user,
                    const dpd_rf_sim_config *cfg, dpd_rf_sim_result **out, dpd_err *err) {
  const size_t n = problem != NULL ? problem->n : pc->n, p = problem != NULL ? problem->p : pc->p;
  const size_t T = cfg->T, seeds = cfg->seeds, grid = cfg->grid;
  int status = validate(p, cfg, err);
  if (status < 0) {
    return status;
  }
  int nthreads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
  /* Enough replicates: one per thread, row blocks in series. Fewer replicates than threads, or
   * one replicate per problem: one replicate at a time, its row blocks on all threads. Same
   * arithmetic either way. */
  int inner = 1;
  if ((size_t)nthreads > seeds || problem == NULL) {
    inner = nthreads;
    nthreads = 1;
  }

  dpd_rf_problem *own = NULL;
  dpd_rf_sim_result *res = calloc(1, sizeof *res);
  double *clip_rows = malloc(seeds * T * sizeof *clip_rows);
  size_t *fail = malloc(seeds * sizeof *fail);
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
  if (res == NULL || clip_rows == NULL || fail == NULL || res->step == NULL ||
      res->train_mean == NULL || res->train_se == NULL || res->test_mean == NULL ||
      res->test_se == NULL || res->train_replicates == NULL || res->test_replicates == NULL ||
      res->clip_fraction == NULL || res->theta_last == NULL || res->first_clip == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "rf_sim: out of memory (p = %zu, T = %zu, seeds = %zu)", p,
                      T, seeds);
    goto cleanup;
  }
  dpd_rf_sim_grid_steps(T, grid, res->step);

  const double C = isfinite(cfg->clip) ? cfg->clip * sqrt((double)p) : INFINITY;
  plan pl = {.problem = problem,
             .kgrid = res->step,
             .T = T,
             .grid = grid,
             .eta = cfg->eta,
             .C = C,
             .noise_scale =
                 cfg->sigma > 0.0 ? sqrt(cfg->eta) * (2.0 * C / (double)n) * cfg->sigma : 0.0,
             .seed = cfg->seed,
             .rep0 = 0,
             .noise_shared = resample == DPD_RF_RESAMPLE_DATA,
             .inner = inner,
             .held = parts_held(n, p, inner),
             .train = res->train_replicates,
             .test = res->test_replicates,
             .clips = clip_rows,
             .fail = fail,
             .theta_last = res->theta_last};
  dpd__replicate_plan reps = {.n = seeds,
                              .threads = nthreads,
                              .work_doubles = (3 + parts_held(n, p, inner)) * p + rf_pad8(n),
                              .units = T,
                              .progress = cfg->progress,
                              .progress_user = cfg->progress_user,
                              .what = "rf_sim"};
  size_t rep = seeds;
  if (problem != NULL) {
    status = dpd__replicate_run(&reps, run_replicate, &pl, &rep, err);
  } else {
    progress_offset po = {cfg->progress, cfg->progress_user, 0, seeds * T};
    reps.n = 1;
    if (cfg->progress != NULL) {
      reps.progress = progress_offset_fn;
      reps.progress_user = &po;
    }
    for (size_t r = 0; r < seeds && status >= 0; r++) {
      dpd_rf_config pcr = *pc;
      size_t failed;
      pcr.draw = pc->draw + (uint64_t)r;
      if ((status = dpd_rf_problem_create(&pcr, &own, err)) < 0 ||
          (on_draw != NULL && (status = on_draw(user, r, own, err)) < 0)) {
        break;
      }
      pl.problem = own;
      pl.rep0 = r;
      po.offset = r * T;
      status = dpd__replicate_run(&reps, run_replicate, &pl, &failed, err);
      if (status < 0 && failed < 1) {
        rep = r;
      }
      dpd_rf_problem_free(own);
      own = NULL;
    }
  }
  if (status < 0 && rep < seeds) {
    if (problem != NULL) {
      status = DPD_FAIL(err, DPD_ENONFINITE,
                        "rf_sim: replicate %zu (stream (%llu, %zu)) diverged at step %zu of %zu: "
                        "non-finite risk (eta = %g; plain GD is stable only for eta < 2 / "
                        "lambda_max((2/n) Phi^T Phi))",
                        rep, (unsigned long long)cfg->seed, rep, fail[rep] - 1, T, cfg->eta);
    } else {
      status = DPD_FAIL(err, DPD_ENONFINITE,
                        "rf_sim: replicate %zu (data draw %llu, noise stream (%llu, %zu)) "
                        "diverged at step %zu of %zu: non-finite risk (eta = %g; plain GD is "
                        "stable only for eta < 2 / lambda_max((2/n) Phi^T Phi))",
                        rep, (unsigned long long)(pc->draw + (uint64_t)rep),
                        (unsigned long long)cfg->seed, pl.noise_shared ? (size_t)0 : rep,
                        fail[rep] - 1, T, cfg->eta);
    }
  }
  if (status < 0) {
    goto cleanup;
  }
  /* Serial reductions in replicate order: identical for any thread count. */
  dpd__stats_columns_mean_se(res->train_replicates, seeds, grid, res->train_mean, res->train_se);
  dpd__stats_columns_mean_se(res->test_replicates, seeds, grid, res->test_mean, res->test_se);
  double total = 0.0;
  for (size_t t = 0; t < T; t++) {
    const double c = dpd__stats_sum(clip_rows + t, seeds, T);
    total += c;
    res->clip_fraction[t] = c / ((double)n * (double)seeds);
  }
  for (size_t r = 0; r < seeds; r++) {
    res->first_clip[r] = T;
    for (size_t t = 0; t < T; t++) {
      if (clip_rows[r * T + t] > 0.0) {
        res->first_clip[r] = t;
        break;
      }
    }
  }
  res->clip_fraction_total = total / ((double)n * (double)seeds * (double)T);
  *out = res;
  res = NULL;
  status = DPD_OK;

cleanup:
  dpd_rf_problem_free(own);
  dpd_rf_sim_result_free(res);
  free(clip_rows);
  free(fail);
  return status;
}

int dpd_rf_sim_run(const dpd_rf_problem *problem, const dpd_rf_sim_config *cfg,
                   dpd_rf_sim_result **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (problem == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rf_sim: NULL problem, config or output pointer");
  }
  return sim_core(problem, NULL, DPD_RF_RESAMPLE_NOISE, NULL, NULL, cfg, out, err);
}

static const char *const resample_names[] = {"noise", "data", "all"};
#define RESAMPLE_ALLOWED "noise, data, all"

int dpd_rf_resample_get(const char *name, dpd_rf_resample *out, dpd_err *err) {
  for (size_t k = 0; k < sizeof resample_names / sizeof *resample_names; k++) {
    if (name != NULL && strcmp(name, resample_names[k]) == 0) {
      *out = (dpd_rf_resample)k;
      return DPD_OK;
    }
  }
  return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'resample': '%s' (allowed: %s)",
                  name != NULL ? name : "(null)", RESAMPLE_ALLOWED);
}

const char *dpd_rf_resample_name(dpd_rf_resample resample) {
  const size_t k = (size_t)resample;
  return k < sizeof resample_names / sizeof *resample_names ? resample_names[k] : "unknown";
}

int dpd_rf_sim_resample_run(const dpd_rf_config *pc, const dpd_rf_sim_config *cfg,
                            dpd_rf_resample resample, dpd_rf_draw_fn on_draw, void *user,
                            dpd_rf_sim_result **out, dpd_err *err) {
  dpd_rf_problem *problem = NULL;
  int status;
  if (out != NULL) {
    *out = NULL;
  }
  if (pc == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rf_sim: NULL problem config, config or output pointer");
  }
  if (strcmp(dpd_rf_resample_name(resample), "unknown") == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'resample': %d (allowed: %s)",
                    (int)resample, RESAMPLE_ALLOWED);
  }
  if (resample == DPD_RF_RESAMPLE_NOISE) {
    if ((status = validate(pc->p, cfg, err)) < 0 ||
        (status = dpd_rf_problem_create(pc, &problem, err)) < 0 ||
        (on_draw != NULL && (status = on_draw(user, 0, problem, err)) < 0)) {
      dpd_rf_problem_free(problem);
      return status;
    }
    status = sim_core(problem, NULL, resample, NULL, NULL, cfg, out, err);
    dpd_rf_problem_free(problem);
    return status;
  }
  if (cfg->seeds > 0 &&
      (pc->draw > DPD_RF_DRAW_MAX || cfg->seeds - 1 > DPD_RF_DRAW_MAX - pc->draw)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'seeds': %zu from draw %llu (allowed: draws up to 2^56)",
                    cfg->seeds, (unsigned long long)pc->draw);
  }
  return sim_core(NULL, pc, resample, on_draw, user, cfg, out, err);
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

void dpd__rf_theta_star_bytes(const dpd_rf_config *pc, dpd__rf_bytes *b) {
  const double n = (double)pc->n, p = (double)pc->p, small = fmin(n, p);
  b->p += 8.0 * 2.0 * n * p;
  b->n += 8.0 * (small * small + 13.0 * small);
}

void dpd__rf_sim_bytes(const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                       dpd_rf_resample resample, dpd__rf_bytes *b) {
  const double p = (double)pc->p, T = (double)sc->T, seeds = (double)sc->seeds;
  const double threads = sc->threads > 0 ? sc->threads : omp_get_max_threads();
  if (resample == DPD_RF_RESAMPLE_NOISE) {
    b->p += 8.0 * threads * 4.0 * p + 8.0 * p;
  } else {
    /* one replicate at a time (one workspace), with up to 64 row blocks' partial gradients
     * held at once (at most 2^21 doubles of them, or one per thread) */
    b->p += 8.0 * (4.0 + fmin(64.0, fmax(2097152.0 / p, threads))) * p + 8.0 * p;
  }
  b->seeds += 8.0 * seeds * (T + 2.0 * (double)sc->grid + 2.0);
  b->steps += 8.0 * 3.0 * T;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

int dpd__rf_sim_first_clip_stats(const dpd_rf_sim_result *res, double *min, double *median,
                                 dpd_err *err) {
  const size_t S = res->seeds, T = res->T;
  size_t *fc = malloc(S * sizeof *fc);
  if (fc == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  memcpy(fc, res->first_clip, S * sizeof *fc);
  qsort(fc, S, sizeof *fc, cmp_size);
  *min = fc[0] < T ? (double)fc[0] : -1.0; /* T means "never clipped" */
  *median = fc[S / 2] < T ? (double)fc[S / 2] : -1.0;
  free(fc);
  return DPD_OK;
}
