/* Homogenized DP-SGD (H-DP-SGD): Euler-Maruyama integration of the SDE of docs/math.md §1.6 in the
 * eigenbasis of Sigma, O(d) per step, replicates in parallel.
 * SPDX-License-Identifier: MIT
 *
 * The SDE (docs/math.md §1.6; arXiv:2505.16329, homogenized DP-SGD), written for the
 * error e = Theta - theta* in the eigenbasis (e_0 = -theta*, i.e. Theta_0 = 0):
 *
 *   de_i = -eta~(t) mu_c(P) lambda_i e_i dt + eta~(t) sqrt(2 nu_c(P) P / n) sqrt(lambda_i) dB^s_i
 *          + (2 sqrt(d) / n) c sigma~(t) dB^p_i,
 *   R = (1/2) sum_i lambda_i e_i^2,  P = R + zeta^2/2,  rho^2 sigma~^2(t) = -d/dt[eta~(t)^2],
 *
 * mu_c, nu_c from dpd_clip_noise_factors_eval (any label-noise law; closed forms for Gaussian
 * noise, docs/math.md §1.5). At t = 1 the private last-step noise is added (docs/math.md §1.7,
 * "Last iterate"): every coordinate gets 2 C sigma_{n-1} xi_i, C = c sqrt(d), xi ~ N(0, I_d), with
 * sigma_{n-1} = eta_{n-1} / rho, eta_{n-1} = eta~((n-1)/n) / n, exactly the last noise of
 * dpd_schedule_steps and so of the simulator's last step. Its expected risk increase is
 * 2 c^2 gamma^2 eta~((n-1)/n)^2 / rho^2, which differs from the ODE's jump
 * 2 c^2 gamma^2 eta~(1)^2 / rho^2 by O(1/n) (the simulator's choice is kept on purpose: the
 * SDE is meant to track the simulation). Likewise each drop of a step schedule at t_d in (0, 1)
 * (dpd_schedule_jumps), where sigma~ has a Dirac part, adds the impulse 2 C sigma xi with
 * sigma^2 = (eta~(t_d-)^2 - eta~(t_d+)^2) / (n^2 rho^2) right after the step that reaches t_d, as
 * the simulator puts that noise on the step before the drop.
 *
 * Scheme: Euler-Maruyama (Kloeden & Platen, Numerical Solution of Stochastic Differential
 * Equations, Springer 1992, sec. 10.2 (strong order 1/2, Thm 10.2.2) and sec. 14.1 (weak order
 * 1, Thm 14.1.5); D. J. Higham, SIAM Review 43 (2001) 525), with every coefficient (eta~,
 * sigma~, mu_c, nu_c, P) evaluated at the left end of the step (Ito). The step is the generic
 * diagonal stepper of sde_impl.h with a = lambda, b = sqrt(lambda).
 *
 * Time grid: with cfg->dt = 0 the step is 1/n and t_k = k/n (the simulator's step times). A
 * user dt gives t_k = k dt for k < N and t_N = 1, N = ceil(1/dt): the last step is shortened to
 * land on t = 1 exactly. If 1/dt is an integer m up to rounding (|m dt - 1| <= 2 DBL_EPSILON),
 * the grid is t_k = k/m instead, so that dt = 1/m is exactly uniform.
 * Recording: grid point j (t_j = j/(grid-1)) records the state at the step time t_{k_j}
 * nearest to t_j (ties to the later step; for the uniform grid k_j = round(j N / (grid - 1)),
 * the simulator's rule), and k_{grid-1} = N. Rows with k_j = N hold the released value (after the
 * last-step noise). clip_fraction[j] is the time average of 1 - mu_c(P) over
 * [t_{k_{j-1}}, t_{k_j}) (left-point values weighted by the step lengths; the plain mean over
 * the steps for a uniform grid), 0 for j = 0 and for empty intervals.
 *
 * Random numbers (stream rule of rng.h): replicate r uses stream (seed, r). Step k makes one
 * dpd_rng_gaussian_fill of d values (B^s increments), plus d more (B^p) when sigma~(t_k) > 0,
 * the length rounded up to even; every impulse (drop of a step schedule, release) makes one fill
 * of d (rounded up to even).
 *
 * Performance: 2d Gaussians per step (d without privacy noise) and one fused pass that updates
 * e and returns the new risk (which the next step needs for P), in eight fixed-order partial
 * sums. As in sim.c the replicate kernel is compiled for AVX-512, AVX2 and baseline x86-64 and
 * this file is built without FMA contraction, so every path gives bit-identical results;
 * replicates run in parallel, each writes its own rows, and the reductions over replicates are
 * serial in replicate order: results do not depend on the number of threads. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "isa/isa_impl.h"
#include "core/replicate_impl.h"

/* Steps of a replicate between two polls of a stop request. */
#define POLL_STEPS 64
#include "core/stats_impl.h"
#include "dpdyn/clip.h"
#include "dpdyn/ode.h"
#include "dpdyn/rng.h"
#include "dpdyn/sde.h"
#include "linreg/finite_impl.h"
#include "linreg/result_impl.h"
#include "linreg/sde_impl.h"
#include "linreg/setting_impl.h"

/* Defaults of dpd_linreg_sde_config (those of dpd_linreg_sim_config where shared). */
#define SDE_N_DEFAULT 1000
#define SDE_ZETA_DEFAULT 0.5
#define SDE_SEEDS_DEFAULT 16
#define SDE_SEED_DEFAULT 1
#define SDE_GRID_DEFAULT 101
#define SDE_DT_DEFAULT 0.0 /* sentinel: 1/n */
#define SDE_NOISE_NU_DEFAULT 5.0

/* Relative rounding slack under which 1/dt counts as an integer (uniform grid). */
#define SDE_DT_INTEGER_SLACK (2.0 * DBL_EPSILON)
/* Largest number of steps: step indices stay exact in doubles. */
#define SDE_MAX_STEPS 9007199254740992.0 /* 2^53 */

/* Length of one thread's buffers in doubles is rounded up to a cache line. */
#define CACHE_DOUBLES 8

#define ALWAYS_INLINE static inline __attribute__((always_inline))

dpd_linreg_sde_config dpd_linreg_sde_config_default(void) {
  dpd_linreg_sde_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.n = SDE_N_DEFAULT;
  cfg.zeta = SDE_ZETA_DEFAULT;
  cfg.noise = DPD_NOISE_GAUSSIAN;
  cfg.noise_nu = SDE_NOISE_NU_DEFAULT; /* only read for DPD_NOISE_STUDENT */
  cfg.c = INFINITY;
  cfg.rho = INFINITY;
  cfg.seeds = SDE_SEEDS_DEFAULT;
  cfg.seed = SDE_SEED_DEFAULT;
  cfg.grid = SDE_GRID_DEFAULT;
  cfg.dt = SDE_DT_DEFAULT;
  cfg.threads = 0;
  cfg.progress = NULL;
  cfg.progress_user = NULL;
  return cfg;
}

/* ---- The Euler-Maruyama step (sde_impl.h) -------------------------------------------------- */

/* Sum of eight partial sums in a fixed order (the same in every instruction set). */
ALWAYS_INLINE double sum8(const double s[8]) {
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* One component of the step. `mult` and `iso` are compile-time constants at every call. */
ALWAYS_INLINE void em_one(const double *restrict a, const double *restrict b,
                          const double *restrict z, const double *restrict v, double *restrict x,
                          size_t i, double kh, double sq, double sh, double m, double q, double ph,
                          int mult, int iso, double *acc) {
  const double xi = x[i];
  double t;
  if (mult) {
    t = xi + (kh * a[i]) * xi + (sh * b[i]) * ((q + m * xi) * z[i]);
  } else {
    t = xi + (kh * a[i]) * xi + (sq * b[i]) * z[i];
  }
  if (iso) {
    t = t + ph * v[i];
  }
  *acc += a[i] * (t * t);
  x[i] = t;
}

/* The step of sde_impl.h; returns (1/2) sum a_i x_i^2 of the new state. */
ALWAYS_INLINE double em_body(size_t dim, const double *restrict a, const double *restrict b,
                             const dpd__sde_em_coef *coef, const double *restrict z,
                             const double *restrict v, double *restrict x, int mult, int iso) {
  const double sh = sqrt(coef->h);
  const double kh = coef->k * coef->h, sq = coef->q * sh, ph = coef->p * sh;
  const double m = coef->m, q = coef->q;
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= dim; i += 8) {
    for (size_t j = 0; j < 8; j++) {
      em_one(a, b, z, v, x, i + j, kh, sq, sh, m, q, ph, mult, iso, &acc[j]);
    }
  }
  for (size_t j = 0; i + j < dim; j++) {
    em_one(a, b, z, v, x, i + j, kh, sq, sh, m, q, ph, mult, iso, &acc[j]);
  }
  return 0.5 * sum8(acc);
}

double dpd__sde_em_step(size_t dim, const double *a, const double *b, const dpd__sde_em_coef *coef,
                        const double *z, const double *v, double *x) {
  const int mult = coef->m != 0.0;
  const int iso = coef->p != 0.0 && v != NULL;
  if (mult && iso) {
    return em_body(dim, a, b, coef, z, v, x, 1, 1);
  }
  if (mult) {
    return em_body(dim, a, b, coef, z, v, x, 1, 0);
  }
  if (iso) {
    return em_body(dim, a, b, coef, z, v, x, 0, 1);
  }
  return em_body(dim, a, b, coef, z, v, x, 0, 0);
}

/* ---- The H-DP-SGD integrator --------------------------------------------------------------- */

/* What one replicate reports besides its rows. */
typedef struct {
  double before_release; /* risk at t = 1 without the last-step noise */
  double released;       /* risk at t = 1 with it */
  double fail_t;         /* time at which a non-finite value appeared */
  size_t fail_step;
  double fail_R; /* risk at which the clipping factors failed (re-evaluated for the reason) */
  int status;    /* DPD_OK, DPD_ENONFINITE, or the clipping factors' failure */
} replicate_info;

/* Everything a replicate needs, shared by all threads: read-only but for the output rows of
 * each replicate. */
typedef struct {
  size_t d, n, nsteps, grid;
  const double *lambda;      /* [d] */
  const double *sqrt_lambda; /* [d] */
  const double *theta_star;  /* [d] */
  const dpd_schedule *schedule;
  const size_t *kgrid; /* [grid] recorded step indices, non-decreasing, kgrid[grid-1] = nsteps */
  dpd_noise_spec noise;
  double c;              /* clipping scale (INFINITY: none) */
  double inv_rho2;       /* 1/rho^2; 0 when rho = INFINITY */
  double priv_scale;     /* (2 sqrt(d) / n) c; 0 without privacy */
  double release_sd;     /* 2 C sigma_{n-1}; 0 without privacy */
  const double *jump_t;  /* [njumps] drops of a step schedule (dpd_schedule_jumps) */
  const double *jump_sd; /* [njumps] their impulse of calibrated noise, per coordinate */
  size_t njumps;
  double dt;   /* step of the non-uniform grid */
  int uniform; /* 1: t_k = k / nsteps */
  uint64_t seed;
  size_t e_len;          /* the workspace: e [e_len], then the Gaussian buffer [2d + 2] */
  double *risk_rows;     /* [seeds * grid] outputs: replicate r writes row r of each */
  double *clip_rows;     /* [seeds * grid] */
  replicate_info *info;  /* [seeds] */
  const dpd__fs_law *fs; /* finite-size correction (docs/finite_size.md); NULL: off */
  const int *coord_tilt; /* [d] the tilted rule of each coordinate's group, or -1 */
  size_t ex_coord[DPD_FS_MAXEXACT]; /* the coordinate of each exact direction */
} sde_plan;

/* One Euler-Maruyama step with the finite-size-corrected factors (docs/finite_size.md §2):
 * coordinate i of group j drifts by -eta mu_j lambda_i e_i and diffuses with variance
 * (eta^2/n) lambda_i (N_j + lambda_i e_i^2 (sigma_j - mu_j^2)) per unit time (the one-step
 * variance of x_i psi), plus the privacy noise p. A coordinate of an exact direction (a group of
 * multiplicity 1 with lambda/d > DPD_FS_EXACT_EPS; Gaussian label noise) uses, with a =
 * sqrt(lambda_i) |e_i| its share of the residual, mu = K1(a)/a + delta mu_{-i} and N + lambda_i
 * e_i^2 sigma = K2(a) + delta N_{-i}, the rank-one terms without its own share lambda_i^2 e_i^2 of
 * s2, as the ODE does (where S_i = d e_i^2 / 2). P = R + zeta^2/2 and s2 = sum lambda^2 e^2 are
 * those of the state before the step. Returns the new risk. */
static double fs_em_step(const sde_plan *plan, const dpd__fs_coef *co, double eta, double h,
                         double p, double P, double s2, double a1, const double *z, const double *v,
                         double *e) {
  const double sh = sqrt(h), inv_n = 1.0 / (double)plan->n, inv_d = 1.0 / (double)plan->d;
  const dpd__fs_law *law = plan->fs;
  const int exact_ok = plan->noise.law == DPD_NOISE_GAUSSIAN && isfinite(plan->c);
  double acc = 0.0;
  for (size_t i = 0; i < plan->d; i++) {
    const double l = plan->lambda[i], beta = l * inv_d;
    const int k = plan->coord_tilt[i];
    double mu = k >= 0 ? co->mut[k] : co->mu0 + beta * co->mu1;
    const double sig = k >= 0 ? co->sigt[k] : co->sig0;
    const double N = k >= 0 ? co->Nt[k] : co->N0 + beta * co->N1;
    double var = N + l * e[i] * e[i] * (sig - mu * mu);
    if (exact_ok && k >= 0 && law->exact_of_tilt[k] >= 0) {
      const size_t ex = (size_t)law->exact_of_tilt[k];
      const double a = sqrt(l) * fabs(e[i]);
      /* conditioning (a1 > 0): jointly with the partner (dpd__fs_partner) */
      const int partner = dpd__fs_partner(law, ex), joint = a1 > 0.0 && partner >= 0;
      const size_t ip = joint ? plan->ex_coord[partner] : i;
      const double lp = plan->lambda[ip], ap = joint ? sqrt(lp) * fabs(e[ip]) : 0.0;
      dpd__fs_exact_k kx;
      if (a > 1e-6 * sqrt(2.0 * P) && dpd__fs_exact_eval(law, ex, plan->c, P, a, ap, &kx) == 0) {
        const double s2_other =
            0.5 * (double)plan->d *
            (s2 - l * l * e[i] * e[i] - (joint ? lp * lp * e[ip] * e[ip] : 0.0));
        mu = kx.k1 / a + co->r1_mu * s2_other;
        var = kx.k2 + co->r1_N * s2_other - a * a * mu * mu;
      }
    }
    var = fmax(0.0, var);
    double x =
        e[i] - h * eta * mu * l * e[i] + sh * plan->sqrt_lambda[i] * eta * sqrt(var * inv_n) * z[i];
    if (v != NULL) {
      x += p * sh * v[i];
    }
    e[i] = x;
    acc += l * x * x;
  }
  return 0.5 * acc;
}

/* Step time t_k, k = 0..nsteps. */
ALWAYS_INLINE double step_time(const sde_plan *plan, size_t k) {
  if (plan->uniform) {
    return (double)k / (double)plan->nsteps;
  }
  return k < plan->nsteps ? (double)k * plan->dt : 1.0;
}

/* (1/2) sum lambda_i e_i^2, eight fixed-order partial sums. */
ALWAYS_INLINE double risk_of(const double *restrict lambda, const double *restrict e, size_t d) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    for (size_t j = 0; j < 8; j++) {
      acc[j] += lambda[i + j] * (e[i + j] * e[i + j]);
    }
  }
  for (size_t j = 0; i + j < d; j++) {
    acc[j] += lambda[i + j] * (e[i + j] * e[i + j]);
  }
  return 0.5 * sum8(acc);
}

/* e += s xi; returns the new risk. */
ALWAYS_INLINE double release_pass(const double *restrict lambda, const double *restrict xi,
                                  double *restrict e, size_t d, double s) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= d; i += 8) {
    for (size_t j = 0; j < 8; j++) {
      double t = e[i + j] + s * xi[i + j];
      acc[j] += lambda[i + j] * (t * t);
      e[i + j] = t;
    }
  }
  for (size_t j = 0; i + j < d; j++) {
    double t = e[i + j] + s * xi[i + j];
    acc[j] += lambda[i + j] * (t * t);
    e[i + j] = t;
  }
  return 0.5 * sum8(acc);
}

/* Runs replicate `rep`: writes risk_row[grid] and clip_row[grid] (integral of 1 - mu over each
 * grid interval). `e` [d] and `buf` [2d + 2] are the caller's workspace. */
ALWAYS_INLINE void run_replicate_body(const sde_plan *plan, size_t rep, double *restrict e,
                                      double *restrict buf, double *risk_row, double *clip_row,
                                      replicate_info *info, dpd__replicate_slot *slot) {
  const size_t d = plan->d, nsteps = plan->nsteps, grid = plan->grid;
  const double *lambda = plan->lambda, *sl = plan->sqrt_lambda;
  const double half_zeta2 = 0.5 * plan->noise.zeta * plan->noise.zeta;
  const double inv_n = 1.0 / (double)plan->n;
  const int private_run = plan->priv_scale > 0.0;
  const double *z = buf, *v = buf + d;
  dpd_rng rng;
  size_t next = 0; /* next grid index to record */
  size_t next_jump = 0;
  double clip = 0.0; /* integral of 1 - mu since the last recorded grid point */
  double R;

  dpd_rng_init(&rng, plan->seed, (uint64_t)rep);
  info->status = DPD_OK;
  info->fail_step = 0;
  info->fail_t = 0.0;
  info->before_release = NAN;
  info->released = NAN;
  for (size_t i = 0; i < d; i++) {
    e[i] = -plan->theta_star[i];
  }
  R = risk_of(lambda, e, d);
  for (; next < grid && plan->kgrid[next] == 0; next++) {
    risk_row[next] = R;
    clip_row[next] = 0.0;
  }
  double t = 0.0;
  for (size_t k = 0; k < nsteps; k++) {
    /* A stop request (a binding's Ctrl-C) is heard between steps: every POLL_STEPS steps the
     * calling thread lets the driver call the progress callback (its heartbeat). */
    if (k % POLL_STEPS == POLL_STEPS - 1 && dpd__replicate_progress(slot, 0)) {
      info->status = DPD_ECANCELLED;
      return;
    }
    const double t_next = step_time(plan, k + 1);
    const double h = t_next - t;
    const double eta = dpd_schedule_eval(plan->schedule, t);
    double mu, nu, s2 = 0.0, a1 = 0.0;
    dpd__fs_coef fco;
    int st;
    if (plan->fs != NULL) {
      double s1 = 0.0, s2_rest;
      for (size_t i = 0; i < d; i++) {
        s1 += lambda[i] * e[i] * e[i];
        s2 += lambda[i] * lambda[i] * e[i] * e[i];
      }
      s2_rest = s2;
      if (dpd__fs_cond_applies(plan->fs, &plan->noise, plan->c, 1.0)) {
        /* conditioning on exact direction 0: its share a1; lbar without it */
        const size_t i0 = plan->ex_coord[0];
        a1 = sqrt(lambda[i0]) * fabs(e[i0]);
        s2_rest -= lambda[i0] * lambda[i0] * e[i0] * e[i0];
      }
      st = dpd__fs_coef_eval(plan->fs, &plan->noise, plan->c, R, s1 > 0.0 ? s2_rest / s1 : 0.0, a1,
                             eta, (double)d * inv_n, 0, &fco, NULL);
      if (st > 0) {
        st = DPD_ENONFINITE;
      }
      mu = fco.mu;
      nu = fco.nu;
    } else {
      st = dpd_clip_noise_factors_eval(&plan->noise, plan->c, R, &mu, &nu, NULL, NULL, NULL);
    }
    if (st < 0) {
      info->status = st;
      info->fail_step = k;
      info->fail_t = t;
      info->fail_R = R;
      return;
    }
    const double P = R + half_zeta2;
    double sig2 = 0.0;
    if (private_run) {
      sig2 = fmax(0.0, -dpd_schedule_dsq_eval(plan->schedule, t)) * plan->inv_rho2;
    }
    const dpd__sde_em_coef coef = {.h = h,
                                   .k = -eta * mu,
                                   .q = eta * sqrt(2.0 * nu * P * inv_n),
                                   .m = 0.0,
                                   .p = plan->priv_scale * sqrt(sig2)};
    const int noisy = coef.p > 0.0;
    const size_t count = noisy ? 2 * d : d + (d & 1u);

    dpd_rng_gaussian_fill(&rng, buf, count);
    if (plan->fs != NULL) {
      R = fs_em_step(plan, &fco, eta, h, coef.p, P, s2, a1, z, noisy ? v : NULL, e);
    } else if (noisy) {
      R = em_body(d, lambda, sl, &coef, z, v, e, 0, 1);
    } else {
      R = em_body(d, lambda, sl, &coef, z, NULL, e, 0, 0);
    }
    clip += (1.0 - mu) * h;
    t = t_next;
    /* A drop of a step schedule inside (t_k, t_{k+1}]: its calibrated noise is an impulse
     * (rho^2 sigma^2 = eta_k^2 - eta_{k+1}^2 on the step before the drop), added like the
     * release noise. */
    while (next_jump < plan->njumps && plan->jump_t[next_jump] <= t && isfinite(R)) {
      dpd_rng_gaussian_fill(&rng, buf, d + (d & 1u));
      R = release_pass(lambda, buf, e, d, plan->jump_sd[next_jump]);
      next_jump++;
    }
    if (!isfinite(R)) {
      info->status = DPD_ENONFINITE;
      info->fail_step = k;
      info->fail_t = t;
      return;
    }
    if (k + 1 == nsteps) {
      break; /* the rows of t = 1 are written after the release below */
    }
    if (next < grid && plan->kgrid[next] == k + 1) {
      risk_row[next] = R;
      clip_row[next] = clip;
      clip = 0.0;
      /* Grid points that map to the same step: an empty interval. */
      for (next++; next < grid && plan->kgrid[next] == k + 1; next++) {
        risk_row[next] = R;
        clip_row[next] = 0.0;
      }
    }
  }
  info->before_release = R;
  if (plan->release_sd > 0.0) {
    dpd_rng_gaussian_fill(&rng, buf, d + (d & 1u));
    R = release_pass(lambda, buf, e, d, plan->release_sd);
    if (!isfinite(R)) {
      info->status = DPD_ENONFINITE;
      info->fail_step = nsteps;
      info->fail_t = 1.0;
      return;
    }
  }
  info->released = R;
  /* The release convention (linreg.h): the rows of t = 1 hold the value before release. */
  if (next < grid) {
    risk_row[next] = info->before_release;
    clip_row[next] = clip;
    for (next++; next < grid; next++) {
      risk_row[next] = info->before_release;
      clip_row[next] = 0.0;
    }
  }
}

/* Replicate `rep` of the run (dpd__replicate_fn): its rows and info, its status. */
ALWAYS_INLINE int run_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  const sde_plan *plan = job;
  const size_t grid = plan->grid;
  run_replicate_body(plan, rep, work, work + plan->e_len, plan->risk_rows + rep * grid,
                     plan->clip_rows + rep * grid, plan->info + rep, slot);
  return plan->info[rep].status;
}

DPD__ISA_CLONES(int, replicate_kernel,
                (void *job, size_t rep, double *work, dpd__replicate_slot *slot),
                (run_replicate(job, rep, work, slot)))

/* ---- Driver ---------------------------------------------------------------------------------- */

/* Number of steps and grid kind for cfg->dt (validated). */
static void time_steps(const dpd_linreg_sde_config *cfg, size_t *nsteps, int *uniform, double *dt) {
  if (cfg->dt == 0.0) {
    *nsteps = cfg->n;
    *uniform = 1;
    *dt = 1.0 / (double)cfg->n;
    return;
  }
  double m = nearbyint(1.0 / cfg->dt);
  if (m >= 1.0 && fabs(m * cfg->dt - 1.0) <= SDE_DT_INTEGER_SLACK) {
    *nsteps = (size_t)m;
    *uniform = 1;
    *dt = cfg->dt;
    return;
  }
  double N = ceil(1.0 / cfg->dt);
  while (N > 1.0 && (N - 1.0) * cfg->dt >= 1.0) {
    N -= 1.0; /* rounding of 1/dt: the last step must have positive length */
  }
  while (N * cfg->dt < 1.0) {
    N += 1.0;
  }
  *nsteps = (size_t)N;
  *uniform = 0;
  *dt = cfg->dt;
}

static int validate(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                    const dpd_linreg_sde_config *cfg, dpd_linreg_sim_result **out, dpd_err *err) {
  if (problem == NULL || schedule == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': NULL (allowed: a created object)",
                    problem == NULL    ? "problem"
                    : schedule == NULL ? "schedule"
                    : cfg == NULL      ? "config"
                                       : "out");
  }
  if (problem->spectral) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'problem': a spectral (groups-only) problem (allowed: one "
                    "from dpd_linreg_problem_create, with its per-coordinate arrays)");
  }
  if (problem->d < 1 || problem->lambda == NULL || problem->sqrt_lambda == NULL ||
      problem->theta_star == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'problem': d = %zu or missing arrays (allowed: a created "
                    "problem)",
                    problem->d);
  }
  if (cfg->n < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n': %zu (allowed: integer >= 1)", cfg->n);
  }
  if (cfg->seeds < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'seeds': %zu (allowed: integer >= 1)",
                    cfg->seeds);
  }
  if (cfg->grid < 2) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'grid': %zu (allowed: integer >= 2)",
                    cfg->grid);
  }
  if (!(cfg->zeta >= 0.0) || !isfinite(cfg->zeta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'zeta': %g (allowed: finite, >= 0)",
                    cfg->zeta);
  }
  if (dpd__setting_clip_privacy_check(cfg->c, cfg->rho, err) < 0) {
    return DPD_EINVAL;
  }
  if (!(cfg->dt >= 0.0 && cfg->dt <= 1.0) || (cfg->dt > 0.0 && 1.0 / cfg->dt > SDE_MAX_STEPS)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'dt': %g (allowed: 0 < dt <= 1, at most 2^53 steps; "
                    "0 selects 1/n)",
                    cfg->dt);
  }
  if (!isinf(cfg->rho) && !dpd_schedule_is_nonincreasing(schedule)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': %s increases somewhere on [0, 1] with rho = %g "
                    "(allowed: non-increasing when rho is finite)",
                    dpd_schedule_name(schedule), cfg->rho);
  }
  const size_t max_doubles = SIZE_MAX / sizeof problem->lambda[0];
  if (cfg->seeds > max_doubles / cfg->grid || problem->d > (max_doubles - 4 * CACHE_DOUBLES) / 4 ||
      cfg->n > max_doubles) {
    return DPD_FAIL(err, DPD_EINVAL, "sde: sizes too large (d = %zu, seeds = %zu, grid = %zu)",
                    problem->d, cfg->seeds, cfg->grid);
  }
  /* The label-noise law and its parameters, checked once where the run starts. */
  const dpd_noise_spec noise = {.law = cfg->noise, .zeta = cfg->zeta, .nu = cfg->noise_nu};
  double mu, nu;
  int status = dpd_clip_noise_factors_eval(&noise, cfg->c, dpd_linreg_initial_risk(problem), &mu,
                                           &nu, NULL, NULL, err);
  if (status < 0) {
    return status;
  }
  return DPD_OK;
}

/* Step index k_j of grid point j of `grid`: the step time nearest to t_j = j/(grid-1), ties to
 * the later step. The uniform grid uses the simulator's exact rule round(j N / (grid - 1)). */
static size_t nearest_step(const sde_plan *plan, size_t j, size_t grid) {
  if (plan->uniform) {
    return (size_t)floor((double)j * (double)plan->nsteps / (double)(grid - 1) + 0.5);
  }
  const double tj = (double)j / (double)(grid - 1);
  double k = floor(tj / plan->dt + 0.5);
  size_t kk = k >= (double)plan->nsteps ? plan->nsteps : (size_t)k;
  if (kk + 1 == plan->nsteps &&
      fabs(step_time(plan, kk + 1) - tj) <= fabs(tj - step_time(plan, kk))) {
    kk++;
  }
  return kk;
}

int dpd_linreg_sde_run(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                       const dpd_linreg_sde_config *cfg, dpd_linreg_sim_result **out,
                       dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  int status = validate(problem, schedule, cfg, out, err);
  if (status < 0) {
    return status;
  }
  const size_t d = problem->d, n = cfg->n, seeds = cfg->seeds, grid = cfg->grid;
  size_t nsteps;
  int uniform;
  double dt;
  time_steps(cfg, &nsteps, &uniform, &dt);
  /* Per thread: e [d] and the Gaussian buffer [2d + 2], each starting on a cache line. */
  const size_t e_len = (d + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES;
  const size_t buf_len = (2 * d + 2 + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES;

  dpd_linreg_sim_result *res = dpd__sim_result_create(grid, seeds);
  double *eta = malloc(n * sizeof *eta);
  double *sigma = malloc(n * sizeof *sigma);
  size_t *kgrid = malloc(grid * sizeof *kgrid);
  size_t njumps = isinf(cfg->rho) ? 0 : dpd_schedule_jumps(schedule, NULL, NULL, 0);
  double *jump_t = malloc((njumps + 1) * sizeof *jump_t);
  double *jump_sd = malloc((njumps + 1) * sizeof *jump_sd);
  double *clip_rows = res != NULL ? res->clip_replicates : NULL; /* owned by res */
  replicate_info *info = malloc(seeds * sizeof *info);
  dpd__fs_law *fs_law = NULL;
  int *coord_tilt = NULL;
  size_t ex_coord[DPD_FS_MAXEXACT] = {0};
  if (cfg->finite_size != DPD_FINITE_OFF) {
    dpd_ode_config oc = dpd_ode_config_default();
    oc.finite_size = cfg->finite_size;
    if (dpd_ode_finite_size_applies(problem, &oc)) {
      if ((status = dpd__fs_law_create(problem, &fs_law, err)) < 0) {
        goto cleanup;
      }
      coord_tilt = malloc(d * sizeof *coord_tilt);
      if (coord_tilt == NULL) {
        status = DPD_FAIL(err, DPD_ENOMEM, "sde: out of memory (d = %zu)", d);
        goto cleanup;
      }
      for (size_t i = 0, j = 0; i < d; i++) { /* groups: runs of equal eigenvalues, in order */
        if (i > 0 && problem->lambda[i] != problem->lambda[i - 1]) {
          j++;
        }
        coord_tilt[i] = fs_law->tilt_of[j];
        for (size_t e = 0; e < fs_law->nexact; e++) {
          if (fs_law->exact_group[e] == j) {
            ex_coord[e] = i; /* a group of multiplicity 1: its one coordinate */
          }
        }
      }
    }
  }
  if (res == NULL || eta == NULL || sigma == NULL || kgrid == NULL || clip_rows == NULL ||
      info == NULL || jump_t == NULL || jump_sd == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "sde: out of memory (d = %zu, n = %zu, seeds = %zu)", d, n,
                      seeds);
    goto cleanup;
  }

  /* The release noise: the simulator's last sigma_{n-1} = eta_{n-1} / rho. */
  const int private_run = !isinf(cfg->rho);
  dpd_schedule_steps(schedule, n, cfg->rho, eta, sigma);
  const double C = isfinite(cfg->c) ? cfg->c * sqrt((double)d) : INFINITY;
  sde_plan plan = {.d = d,
                   .n = n,
                   .nsteps = nsteps,
                   .grid = grid,
                   .lambda = problem->lambda,
                   .sqrt_lambda = problem->sqrt_lambda,
                   .theta_star = problem->theta_star,
                   .schedule = schedule,
                   .kgrid = kgrid,
                   .noise = {.law = cfg->noise, .zeta = cfg->zeta, .nu = cfg->noise_nu},
                   .c = cfg->c,
                   .inv_rho2 = private_run ? 1.0 / (cfg->rho * cfg->rho) : 0.0,
                   .priv_scale = private_run ? 2.0 * sqrt((double)d) / (double)n * cfg->c : 0.0,
                   .release_sd = private_run ? 2.0 * C * sigma[n - 1] : 0.0,
                   .jump_t = jump_t,
                   .jump_sd = jump_sd,
                   .njumps = njumps,
                   .dt = dt,
                   .uniform = uniform,
                   .seed = cfg->seed,
                   .e_len = e_len,
                   .risk_rows = res->risk_replicates,
                   .clip_rows = clip_rows,
                   .info = info,
                   .fs = fs_law,
                   .coord_tilt = coord_tilt};
  memcpy(plan.ex_coord, ex_coord, sizeof ex_coord);
  /* Impulse of a drop: 2 C sigma with sigma^2 = (eta~(t-)^2 - eta~(t+)^2) / (n^2 rho^2). */
  dpd_schedule_jumps(schedule, jump_t, jump_sd, njumps);
  for (size_t j = 0; j < njumps; j++) {
    jump_sd[j] = plan.priv_scale * sqrt(fmax(0.0, jump_sd[j]) * plan.inv_rho2);
  }
  for (size_t j = 0; j < grid; j++) {
    res->t[j] = (double)j / (double)(grid - 1);
    kgrid[j] = nearest_step(&plan, j, grid);
  }
  kgrid[grid - 1] = nsteps;

  const dpd__replicate_plan reps = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = e_len + buf_len,
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "sde"};
  size_t rep;
  status = dpd__replicate_run(&reps, DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, replicate_kernel), &plan,
                              &rep, err);
  if (status == DPD_ENONFINITE && rep < seeds) {
    double sup = dpd_schedule_sup(schedule);
    status = DPD_FAIL(err, DPD_ENONFINITE,
                      "sde: replicate %zu (stream (%llu, %zu)) became non-finite at t = %.6g "
                      "(step %zu of %zu): non-finite risk (sup eta~ = %g; plain SGD is stable "
                      "only for eta~ < 2/gamma = %g)",
                      rep, (unsigned long long)cfg->seed, rep, info[rep].fail_t,
                      info[rep].fail_step + 1, nsteps, sup, 2.0 * (double)n / (double)d);
  } else if (status < 0 && rep < seeds) {
    /* The clipping factors are pure: evaluated again at the same R, they fail again and give
     * their reason. */
    dpd_err why;
    double mu, nu;
    dpd_err_reset(&why);
    (void)dpd_clip_noise_factors_eval(&plan.noise, plan.c, info[rep].fail_R, &mu, &nu, NULL, NULL,
                                      &why);
    status =
        DPD_FAIL(err, status, "sde: replicate %zu, t = %.6g, R = %g: clipping factors failed: %s",
                 rep, info[rep].fail_t, info[rep].fail_R, why.reason);
  }
  if (status < 0) {
    goto cleanup;
  }

  /* Serial reduction in replicate order: identical for any thread count. */
  dpd__stats_columns_mean_se(res->risk_replicates, seeds, grid, res->risk_mean, res->risk_se);
  double clip_total = 0.0;
  for (size_t j = 0; j < grid; j++) {
    const double clip = dpd__stats_sum(clip_rows + j, seeds, grid);
    clip_total += clip;
    double length = j > 0 ? step_time(&plan, kgrid[j]) - step_time(&plan, kgrid[j - 1]) : 0.0;
    res->clip_fraction[j] = length > 0.0 ? clip / (length * (double)seeds) : 0.0;
  }
  res->clip_fraction_total = clip_total / (double)seeds;
  for (size_t r = 0; r < seeds; r++) {
    /* each replicate's own fractions, from its integrals (already reduced above) */
    double *row = clip_rows + r * grid, total = 0.0;
    for (size_t j = 0; j < grid; j++) {
      double length = j > 0 ? step_time(&plan, kgrid[j]) - step_time(&plan, kgrid[j - 1]) : 0.0;
      total += row[j];
      row[j] = length > 0.0 ? row[j] / length : 0.0;
    }
    res->clip_total_replicates[r] = total;
    res->before_release_replicates[r] = info[r].before_release;
    res->final_replicates[r] = info[r].released;
  }
  dpd__sim_result_release_set(res, dpd_linreg_sde_config_setting_get(cfg));
  *out = res;
  res = NULL;
  status = DPD_OK;

cleanup:
  dpd_linreg_sim_result_free(res);
  free(eta);
  free(sigma);
  free(jump_t);
  free(jump_sd);
  free(kgrid);
  free(info);
  free(coord_tilt);
  dpd__fs_law_free(fs_law);
  return status;
}

dpd_linreg_setting dpd_linreg_sde_config_setting_get(const dpd_linreg_sde_config *cfg) {
  dpd_linreg_setting s = {.n = cfg->n};
  DPD__SETTING_COPY_COMMON(s, *cfg);
  return s;
}
