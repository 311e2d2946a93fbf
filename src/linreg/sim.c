/* Monte-Carlo simulation of one-pass DP-SGD with per-sample clipping on Gaussian linear
 * regression, exactly and in O(d) per step in the eigenbasis of Sigma (docs/math.md §1.3).
 * SPDX-License-Identifier: MIT
 *
 * The algorithm (docs/math.md §1.3; arXiv:2505.16329), written for the error
 * e = theta - theta* in the eigenbasis (x = Lambda^{1/2} g, g ~ N(0, I_d)):
 *
 *   r_k      = x_k . e_k - z_k                      (residual; z_k ~ zeta N(0, 1))
 *   s_k      = min(1, C / (|r_k| |x_k|)),  C = c sqrt(d)   (clipping of g_k = r_k x_k)
 *   e_{k+1}  = e_k - eta_k r_k s_k x_k + 2 C sigma_k xi_k,  xi_k ~ N(0, I_d)
 *
 * with e_0 = -theta* (theta_0 = 0) and (eta_k, sigma_k) from dpd_schedule_steps. Rotation
 * equivariance of clipping (it sees only |g| = |r| |x|) and of the isotropic noise makes the
 * law of every risk the same as for the algorithm in the original basis.
 *
 * Random numbers (stream rule of rng.h): replicate r uses stream (seed, r). Step k draws m_k =
 * d + 1 + (sigma_k > 0 ? d : 0) Gaussians, values 0 ... m_k - 1 of the blocks from the step's
 * first unused one on (ceil(m_k / 2) blocks, as one dpd_rng_gaussian_fill of m_k values would
 * give them), used in that order as g (d), the label-noise Gaussian (1) and xi (d). The label
 * noise z_k is a function of that Gaussian (noise.c): zeta times it for the Gaussian law (the
 * original rule, unchanged), its sign for Rademacher, its inverse-CDF transform for Laplace;
 * so these three laws use the same blocks and the same g and xi. Student-t also needs a
 * chi-square variate, drawn by dpd_rng_gamma_sample from the blocks right after the m_k
 * values (a random number of them); step k + 1 starts at the next unused block.
 *
 * Performance: a step is two passes over the d coordinates, each in chunks of CHUNK
 * coordinates whose data stay in L1/L2. Pass 1 fills the chunk's g (several fills of even
 * length make the same values as one), turns it into x = sqrt(lambda) g in place and
 * accumulates x.e and |x|^2. Pass 2 fills the chunk's xi into a small buffer and updates e
 * from x and xi (also yielding the risk when a grid point is reached), so xi is never
 * written to memory. The passes use an eight-double vector type (one AVX-512 register, two
 * AVX2, four SSE2) and are compiled for all three; lane j holds the partial sums of the
 * coordinates j mod 8, summed in a fixed order at the end, and this file is built without
 * FMA contraction, so all three give bit-identical results. Replicates run in parallel; each
 * writes its own trajectory row, and the reduction over replicates is serial in replicate
 * order, so results do not depend on the number of threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "isa/isa_impl.h"
#include "core/noise_impl.h"
#include "core/replicate_impl.h"

/* Steps of a replicate between two polls of a stop request. */
#define POLL_STEPS 64
#include "core/stats_impl.h"
#include "dpdyn/linreg.h"
#include "dpdyn/rng.h"
#include "linreg/result_impl.h"
#include "linreg/setting_impl.h"

/* Defaults of dpd_linreg_sim_config (docs/INTERFACE.md). */
#define SIM_N_DEFAULT 1000
#define SIM_ZETA_DEFAULT 0.5
#define SIM_SEEDS_DEFAULT 16
#define SIM_SEED_DEFAULT 1
#define SIM_GRID_DEFAULT 101
#define SIM_NOISE_NU_DEFAULT 5.0

/* Lengths of the per-thread buffers are rounded up to a cache line (in doubles). */
#define CACHE_DOUBLES 8

/* Coordinates per chunk of the fused passes (a multiple of 8): the chunk's Gaussians, x, e,
 * sqrt(lambda) and lambda stay in L1/L2 between the fill and their use. */
#define CHUNK 1024

#define ALWAYS_INLINE static inline __attribute__((always_inline))

dpd_linreg_sim_config dpd_linreg_sim_config_default(void) {
  dpd_linreg_sim_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.n = SIM_N_DEFAULT;
  cfg.zeta = SIM_ZETA_DEFAULT;
  cfg.noise = DPD_NOISE_GAUSSIAN;
  cfg.noise_nu = SIM_NOISE_NU_DEFAULT;
  cfg.c = INFINITY;
  cfg.rho = INFINITY;
  cfg.seeds = SIM_SEEDS_DEFAULT;
  cfg.seed = SIM_SEED_DEFAULT;
  cfg.grid = SIM_GRID_DEFAULT;
  cfg.threads = 0;
  cfg.progress = NULL;
  cfg.progress_user = NULL;
  return cfg;
}

/* What one replicate reports besides its risk row. */
typedef struct {
  double before_release; /* risk of theta_n without the last step's noise */
  double released;       /* risk of theta_n, the released iterate */
  size_t fail_step;      /* step at which a non-finite value appeared */
  int status;            /* DPD_OK or DPD_ENONFINITE */
} replicate_info;

/* Everything a replicate needs, shared by all threads: read-only but for the output rows of
 * each replicate. */
typedef struct {
  size_t d, n, grid;
  const double *lambda;      /* [d] */
  const double *sqrt_lambda; /* [d] */
  const double *theta_star;  /* [d] */
  const double *eta;         /* [n] */
  const double *sigma;       /* [n] */
  const size_t *kgrid;       /* [grid] recorded steps, non-decreasing, kgrid[0] = 0, = n at end */
  double zeta;
  dpd_noise_spec noise; /* label-noise law (noise.law == GAUSSIAN: z = zeta * Gaussian) */
  double (*sample)(const dpd_noise_spec *, double, dpd_rng *); /* the law's (noise.h) */
  double C;             /* c sqrt(d); INFINITY: no clipping */
  uint64_t seed;
  size_t e_len;         /* the workspace: e [e_len], x [xbuf_len], xi chunk [CHUNK + 1] */
  size_t xbuf_len;      /* >= d + 2 */
  double *risk_rows;    /* [seeds * grid] outputs: replicate r writes row r of each */
  double *clip_rows;    /* [seeds * grid] */
  replicate_info *info; /* [seeds] */
} sim_plan;

/* Eight doubles as one value (GCC/Clang vector extension): one AVX-512 register, two AVX2 or
 * four SSE2 ones. The eight lanes are the eight partial sums of a reduction, lane j taking
 * the coordinates i = j mod 8; element-wise operations in the same order give the same bits
 * in every instruction set. */
typedef double v8d __attribute__((vector_size(64)));
/* The same at any 8-byte-aligned address, for loads and stores from double arrays. Vectors
 * only appear in always-inline code, never in a call's arguments or result (whose ABI would
 * depend on the instruction set). */
typedef double v8d_unaligned __attribute__((vector_size(64), aligned(8), may_alias));
#define LOAD8(p) (*(const v8d_unaligned *)(p))
#define STORE8(p, v) (*(v8d_unaligned *)(p) = (v))

/* Sum of eight partial sums in a fixed order (the same in every instruction set). */
#define SUM8(s) ((((s)[0] + (s)[1]) + ((s)[2] + (s)[3])) + (((s)[4] + (s)[5]) + ((s)[6] + (s)[7])))

/* (1/2) sum lambda_i e_i^2. */
ALWAYS_INLINE double risk_of(const double *restrict lambda, const double *restrict e, size_t d) {
  v8d acc = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    const v8d ev = LOAD8(e + i);
    acc += LOAD8(lambda + i) * (ev * ev);
  }
  for (size_t j = 0; i + j < d; j++) {
    acc[j] += lambda[i + j] * (e[i + j] * e[i + j]);
  }
  return 0.5 * SUM8(acc);
}

/* Pass 1 on one chunk of `len` coordinates (the chunk starts at a multiple of 8, so lane j
 * collects the coordinates i = j mod 8 as over the whole vector): x = sqrt(lambda) .* g
 * replaces g in place, and x.e and |x|^2 accumulate into sd and sx. */
ALWAYS_INLINE void chunk_dot(const double *restrict sl, double *restrict xg,
                             const double *restrict e, size_t len, v8d *sd, v8d *sx) {
  v8d vd = *sd, vx = *sx;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const v8d x = LOAD8(sl + i) * LOAD8(xg + i);
    STORE8(xg + i, x);
    vd += x * LOAD8(e + i);
    vx += x * x;
  }
  for (size_t j = 0; i + j < len; j++) {
    const double x = sl[i + j] * xg[i + j];
    xg[i + j] = x;
    vd[j] += x * e[i + j];
    vx[j] += x * x;
  }
  *sd = vd;
  *sx = vx;
}

/* Pass 2 on one chunk of `len` coordinates (starting at a multiple of 8): e -= a x (+ b xi
 * when noisy). With `want_risk` it accumulates the risk of the new e into sr and, with
 * `want_before`, that of e - a x before the noise into sb. The flags are compile-time
 * constants at every call, so each combination is its own loop. */
ALWAYS_INLINE void chunk_update(const double *restrict lambda, const double *restrict x,
                                const double *restrict xi, double *restrict e, size_t len, double a,
                                double b, int noisy, int want_risk, int want_before, v8d *sr,
                                v8d *sb) {
  v8d vr = *sr, vb = *sb;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    v8d t = LOAD8(e + i) - a * LOAD8(x + i);
    if (want_before) {
      vb += LOAD8(lambda + i) * (t * t);
    }
    if (noisy) {
      t = t + b * LOAD8(xi + i);
    }
    if (want_risk) {
      vr += LOAD8(lambda + i) * (t * t);
    }
    STORE8(e + i, t);
  }
  for (size_t j = 0; i + j < len; j++) {
    double t = e[i + j] - a * x[i + j];
    if (want_before) {
      vb[j] += lambda[i + j] * (t * t);
    }
    if (noisy) {
      t = t + b * xi[i + j];
    }
    if (want_risk) {
      vr[j] += lambda[i + j] * (t * t);
    }
    e[i + j] = t;
  }
  *sr = vr;
  *sb = vb;
}

/* Pass 1 over all d coordinates: generates g and the label Gaussian chunk by chunk into
 * xbuf [d + 2] (values 0 ... d of the step's draws, the last fill rounded up to an even count,
 * which with d even also makes xi_0 at xbuf[d + 1]), turns g into x while the chunk is in L1
 * and returns x.e and |x|^2. */
ALWAYS_INLINE void pass_dot(dpd_rng *rng, const double *restrict sl, double *restrict xbuf,
                            const double *restrict e, size_t d, double *dot, double *xx) {
  v8d sd = {0, 0, 0, 0, 0, 0, 0, 0}, sx = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t c0 = 0; c0 < d; c0 += CHUNK) {
    const size_t len = d - c0 < CHUNK ? d - c0 : CHUNK;
    const size_t fill = c0 + len == d ? d + 1 - c0 : len;
    dpd_rng_gaussian_fill(rng, xbuf + c0, fill + (fill & 1u));
    chunk_dot(sl + c0, xbuf + c0, e + c0, len, &sd, &sx);
  }
  *dot = SUM8(sd);
  *xx = SUM8(sx);
}

/* Pass 2 over all d coordinates. When noisy, xi is generated chunk by chunk into `tmp`
 * [CHUNK + 2] and used while it is in L1: xi_i is value d + 1 + i of the step's draws. With d
 * odd, xi_0 starts a Philox block and each chunk's xi is one even fill. With d even, xi_0 is
 * the second value of the block that holds the label Gaussian (pass 1 made it: `carry`), and
 * each chunk's fill starts one value later: tmp[0] = carry, tmp[1 ..] = the fill, and the last
 * value of the fill is the next chunk's carry. Every fill has an even length and starts at the
 * next unused block, so the values are those of one fill of all m_k values. */
ALWAYS_INLINE void pass_update(dpd_rng *rng, const double *restrict lambda,
                               const double *restrict x, double *restrict tmp, double carry,
                               double *restrict e, size_t d, double a, double b, int noisy,
                               int want_risk, int want_before, double *risk, double *before) {
  v8d sr = {0, 0, 0, 0, 0, 0, 0, 0}, sb = {0, 0, 0, 0, 0, 0, 0, 0};
  const size_t shift = (d & 1u) ? 0 : 1;
  for (size_t c0 = 0; c0 < d; c0 += CHUNK) {
    const size_t len = d - c0 < CHUNK ? d - c0 : CHUNK;
    if (noisy) {
      /* Values xi_{c0 + shift} ... xi_{c0 + len - 1}, rounded up to an even count (the last
       * chunk's extra value is the one the original fill rounds up to). */
      const size_t want = len - shift;
      dpd_rng_gaussian_fill(rng, tmp + shift, want + (want & 1u));
      if (shift) {
        tmp[0] = carry;
        carry = tmp[len];
      }
    }
    chunk_update(lambda + c0, x + c0, tmp, e + c0, len, a, b, noisy, want_risk, want_before, &sr,
                 &sb);
  }
  if (want_risk) {
    *risk = 0.5 * SUM8(sr);
  }
  if (want_before) {
    *before = 0.5 * SUM8(sb);
  }
}
/* Runs replicate `rep`: writes risk_row[grid] and clip_row[grid] (clipped steps per grid
 * interval). `e` [d], `xbuf` [d + 2] and `tmp` [CHUNK + 1] are the caller's workspace. */
ALWAYS_INLINE void run_replicate_body(const sim_plan *plan, size_t rep, double *restrict e,
                                      double *restrict xbuf, double *restrict tmp, double *risk_row,
                                      double *clip_row, replicate_info *info,
                                      dpd__replicate_slot *slot) {
  const size_t d = plan->d, n = plan->n, grid = plan->grid;
  const double *sl = plan->sqrt_lambda, *lambda = plan->lambda;
  const double C = plan->C;
  const int clipping = isfinite(C);
  /* Values made by pass 1 (g, the label Gaussian, with d even also xi_0). */
  const size_t m_dot = d + 1 + ((d + 1) & 1u);
  dpd_rng rng;
  size_t next = 0;    /* next grid index to record */
  double nclip = 0.0; /* clipped steps since the last recorded grid point */

  dpd_rng_init(&rng, plan->seed, (uint64_t)rep);
  info->status = DPD_OK;
  info->fail_step = 0;
  info->before_release = NAN;
  info->released = NAN;
  for (size_t i = 0; i < d; i++) {
    e[i] = -plan->theta_star[i];
  }
  {
    double r0 = risk_of(lambda, e, d);
    for (; next < grid && plan->kgrid[next] == 0; next++) {
      risk_row[next] = r0;
      clip_row[next] = 0.0;
    }
  }
  for (size_t k = 0; k < n; k++) {
    /* A stop request (a binding's Ctrl-C) is heard between steps: every POLL_STEPS steps the
     * calling thread lets the driver call the progress callback (its heartbeat). */
    if (k % POLL_STEPS == POLL_STEPS - 1 && dpd__replicate_progress(slot, 0)) {
      info->status = DPD_ECANCELLED;
      return;
    }
    const double sigma = plan->sigma[k];
    const int noisy = sigma > 0.0;
    /* The step's m values, rounded up to even: the blocks [counter, counter + m_even / 2). */
    const size_t m = d + 1 + (noisy ? d : 0);
    const size_t m_even = m + (m & 1u);
    double dot, xx, risk = 0.0, before = 0.0, r;
    dpd_rng after;

    pass_dot(&rng, sl, xbuf, e, d, &dot, &xx);
    if (plan->noise.law == DPD_NOISE_GAUSSIAN) {
      /* The Gaussian law keeps its original expression (bit-identical results). */
      r = dot - plan->zeta * xbuf[d];
    } else {
      /* A law that draws more than g (Student-t: its chi-square) draws from the blocks after
       * all m values (after xi, which pass 2 has yet to make): `after` is the stream there, and
       * the stream goes on from it once pass 2 is done. The other laws draw nothing. */
      after = rng;
      after.counter += (uint64_t)((m_even - m_dot) / 2);
      r = dot - plan->sample(&plan->noise, xbuf[d], &after);
    }
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

    const double carry = (d & 1u) ? 0.0 : xbuf[d + 1]; /* xi_0 when d is even */

    if (!record) {
      if (noisy) {
        pass_update(&rng, lambda, xbuf, tmp, carry, e, d, a, b, 1, 0, 0, NULL, NULL);
      } else {
        pass_update(&rng, lambda, xbuf, tmp, carry, e, d, a, b, 0, 0, 0, NULL, NULL);
      }
    } else if (last && noisy) {
      pass_update(&rng, lambda, xbuf, tmp, carry, e, d, a, b, 1, 1, 1, &risk, &before);
    } else if (noisy) {
      pass_update(&rng, lambda, xbuf, tmp, carry, e, d, a, b, 1, 1, 0, &risk, NULL);
    } else {
      pass_update(&rng, lambda, xbuf, tmp, carry, e, d, a, b, 0, 1, 0, &risk, NULL);
      before = risk;
    }
    if (plan->noise.law != DPD_NOISE_GAUSSIAN) {
      rng = after;
    }
    if (!record) {
      continue;
    }
    if (!isfinite(risk)) {
      info->status = DPD_ENONFINITE;
      info->fail_step = k;
      return;
    }
    if (last) {
      /* The release convention (linreg.h): the rows of step n hold theta_n before release. */
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
}

/* Replicate `rep` of the run (dpd__replicate_fn): its rows and info, its status. */
ALWAYS_INLINE int run_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  const sim_plan *plan = job;
  const size_t grid = plan->grid;
  run_replicate_body(plan, rep, work, work + plan->e_len, work + plan->e_len + plan->xbuf_len,
                     plan->risk_rows + rep * grid, plan->clip_rows + rep * grid, plan->info + rep, slot);
  return plan->info[rep].status;
}

DPD__ISA_CLONES(int, replicate_kernel,
                (void *job, size_t rep, double *work, dpd__replicate_slot *slot),
                (run_replicate(job, rep, work, slot)))

static int validate(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                    const dpd_linreg_sim_config *cfg, dpd_linreg_sim_result **out, dpd_err *err) {
  int status;
  if (problem == NULL || schedule == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: NULL argument (problem, schedule, cfg, out)");
  }
  if (problem->d < 1 || problem->lambda == NULL || problem->sqrt_lambda == NULL ||
      problem->theta_star == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "simulate: problem has d = %zu or missing arrays (a spectral problem has only "
                    "the ODE's groups: simulate one from dpd_linreg_problem_create)",
                    problem->d);
  }
  if (cfg->n < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: n = %zu, must be >= 1", cfg->n);
  }
  if ((status = dpd__linreg_sim_config_check(cfg, schedule, err)) < 0) {
    return status;
  }
  const size_t max_doubles = SIZE_MAX / sizeof problem->lambda[0];
  if (cfg->seeds > max_doubles / cfg->grid || problem->d > (max_doubles - 4 * CACHE_DOUBLES) / 4 ||
      cfg->n > max_doubles) {
    return DPD_FAIL(err, DPD_EINVAL, "simulate: sizes too large (d = %zu, seeds = %zu, grid = %zu)",
                    problem->d, cfg->seeds, cfg->grid);
  }
  return DPD_OK;
}

int dpd_linreg_sim_run(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                       const dpd_linreg_sim_config *cfg, dpd_linreg_sim_result **out,
                       dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  int status = validate(problem, schedule, cfg, out, err);
  if (status < 0) {
    return status;
  }
  const size_t d = problem->d, n = cfg->n, seeds = cfg->seeds, grid = cfg->grid;
  /* Per thread: e [d], g then x [d + 2] and one chunk of xi [CHUNK + 1], each starting on a
   * cache line. */
  const size_t e_len = (d + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES;
  const size_t xbuf_len = (d + 2 + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES;
  const size_t tmp_len = CHUNK + CACHE_DOUBLES;

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

  sim_plan plan = {.d = d,
                   .n = n,
                   .grid = grid,
                   .lambda = problem->lambda,
                   .sqrt_lambda = problem->sqrt_lambda,
                   .theta_star = problem->theta_star,
                   .eta = eta,
                   .sigma = sigma,
                   .kgrid = kgrid,
                   .zeta = cfg->zeta,
                   .noise = {.law = cfg->noise, .zeta = cfg->zeta, .nu = cfg->noise_nu},
                   .sample = dpd_noise_law_type_get(cfg->noise)->sample, /* validated */
                   .C = isfinite(cfg->c) ? cfg->c * sqrt((double)d) : INFINITY,
                   .seed = cfg->seed,
                   .e_len = e_len,
                   .xbuf_len = xbuf_len,
                   .risk_rows = res->risk_replicates,
                   .clip_rows = clip_rows,
                   .info = info};
  const dpd__replicate_plan reps = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = e_len + xbuf_len + tmp_len,
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "simulate"};
  size_t rep;
  status = dpd__replicate_run(&reps, DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, replicate_kernel), &plan,
                              &rep, err);
  if (status < 0 && rep < seeds) {
    double sup = dpd_schedule_sup(schedule);
    status = DPD_FAIL(err, DPD_ENONFINITE,
                      "simulate: replicate %zu (stream (%llu, %zu)) diverged at step %zu of %zu: "
                      "non-finite residual or risk (sup eta~ = %g; plain SGD is stable only "
                      "for eta~ < 2/gamma = %g)",
                      rep, (unsigned long long)cfg->seed, rep, info[rep].fail_step, n, sup,
                      2.0 * (double)n / (double)d);
  }
  if (status < 0) {
    goto cleanup;
  }

  /* Serial reduction in replicate order: identical for any thread count. */
  dpd__sim_result_reduce(res, kgrid, n);
  for (size_t r = 0; r < seeds; r++) {
    res->before_release_replicates[r] = info[r].before_release;
    res->final_replicates[r] = info[r].released;
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

dpd_linreg_setting dpd_linreg_sim_config_setting_get(const dpd_linreg_sim_config *cfg) {
  dpd_linreg_setting s = {.n = cfg->n};
  DPD__SETTING_COPY_COMMON(s, *cfg);
  return s;
}
