/* The risk of DP-SGD as a convolution-Volterra equation, solved with FFTs (docs/math.md §1.9).
 * SPDX-License-Identifier: MIT
 *
 * With a constant learning rate eta~, a constant noise profile sigma~^2 and clipping factors
 * that do not depend on the risk (no clipping, mu = nu = 1, or mu, nu frozen at given
 * constants), the grouped ODE system of docs/math.md §1.7 is linear with constant coefficients and
 * the excess risk solves the scalar equation
 *
 *   R(t) = F(t) + int_0^t K(t - s) R(s) ds,                     t in [0, 1),
 *   K(tau) = (1/d) sum_j m_j gamma eta~^2 nu lambda_j^2 e^{-a_j tau},    a_j = 2 lambda_j eta~ mu,
 *   F(t)   = (1/d) sum_j [ lambda_j S_j(0) e^{-a_j t} + m_j g_j (1 - e^{-a_j t}) ],
 *   g_j    = (gamma eta~^2 nu (zeta^2/2) lambda_j^2 + 2 c^2 gamma^2 sigma~^2 lambda_j) / a_j,
 *
 * over the groups j of distinct eigenvalues lambda_j (multiplicity m_j, initial group sum
 * S_j(0)); docs/volterra.md has the derivation. It is solved on a uniform mesh of N steps by
 * trapezoidal product integration (the exponentials integrated exactly against the piecewise
 * linear interpolant of R), with a graded start (segments of halved steps over the first few
 * steps, where the fast modes relax), optionally Richardson-extrapolated from the mesh with
 * every step halved; each uniform segment is a lower-triangular Toeplitz system, solved by a
 * blocked FFT recursion in O(N log^2 N) operations. Tabulating the weights and F costs O(m N)
 * for m groups, against the O(m) per step of the ODE solver (dpdyn/ode.h); it is an
 * independent cross-check of that solver and a fast path for long runs with very many distinct
 * eigenvalues (4x, 7x and 14-16x faster than the ODE for 10^4, 10^5 and 10^6 groups,
 * docs/volterra.md).
 *
 * Plan/execute (FFTW's split): dpd_volterra_plan_create plans every FFT and allocates every
 * array once, for a step count and a number of groups (O(N) doubles and three per group);
 * dpd_volterra_execute then solves any number of models with them and allocates only its
 * result. The FFTW planner is process-wide state (the
 * one exception to "no globals", STYLE 19): create and free plans from one thread at a time.
 * Results: dpd_ode_result (dpdyn/ode.h), with lower = upper = NULL. The same solver is the
 * method DPD_ODE_VOLTERRA of dpd_ode_solve (a default plan per call). */
#ifndef DPD_VOLTERRA_H
#define DPD_VOLTERRA_H

#include <stddef.h>

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FFTW planner effort (FFTW_ESTIMATE, FFTW_MEASURE, FFTW_PATIENT). ESTIMATE plans in
 * microseconds and keeps the timing predictable; the others time candidate algorithms when
 * the plan is created (they overwrite only the plan's own arrays). */
typedef enum {
  DPD_VOLTERRA_FFT_ESTIMATE = 0,
  DPD_VOLTERRA_FFT_MEASURE,
  DPD_VOLTERRA_FFT_PATIENT
} dpd_volterra_fft_effort;

typedef struct {
  size_t steps;       /* N: uniform steps of h = 1/N on [0, 1], 2 <= N <= 2^26 (default 400);
                         the output grid of every model solved with the plan needs (grid - 1)
                         dividing N */
  int richardson;     /* 1 (default): also solve with every step halved and return
                         (4 R_fine - R_coarse) / 3; 0: the second-order solution */
  size_t start_steps; /* n_g: the first n_g steps are replaced by a graded start when the
                         fastest mode is stiff on the step, 0 <= n_g < N (default 32); 0
                         disables it (uniform mesh) */
  double start_x;     /* the graded start refines until a_max h_min <= start_x, a_max =
                         2 lambda_max eta~ mu the fastest decay rate; finite > 0 (default 1) */
  dpd_volterra_fft_effort effort; /* default DPD_VOLTERRA_FFT_ESTIMATE */
  size_t leaf; /* block length below which the Toeplitz recursion substitutes directly,
                  >= 1 (default 64); changes only the rounding */
} dpd_volterra_config;

typedef struct dpd_volterra_plan dpd_volterra_plan; /* opaque */

/* Default configuration (values listed next to each field). */
DPD_API dpd_volterra_config dpd_volterra_config_default(void);

/* Plans the FFTs and allocates the workspace for cfg->steps steps (2 cfg->steps with Richardson
 * extrapolation) and for problems with at most problem->ngroups eigenvalue groups. `cfg` and
 * `problem` are borrowed for the call (cfg is copied). *out is returned-owned
 * (dpd_volterra_plan_free) and NULL on failure. Returns DPD_OK, DPD_EINVAL naming the field,
 * its value and the allowed range, or DPD_ENOMEM (also when FFTW cannot plan). Not
 * thread-safe: calls the FFTW planner. */
DPD_API int dpd_volterra_plan_create(const dpd_volterra_config *cfg,
                                     const dpd_linreg_problem *problem, dpd_volterra_plan **out,
                                     dpd_err *err);

/* Frees a plan (NULL allowed). Not thread-safe: calls the FFTW planner. */
DPD_API void dpd_volterra_plan_free(dpd_volterra_plan *plan);

/* Solves the Volterra form of the risk ODE on the output grid t_j = j/(grid - 1) of `model`.
 *  - problem: borrowed; its groups (lambda_j, m_j, S_j(0)) define K and F; at most as many
 *    groups as the problem the plan was made for.
 *  - schedule: borrowed; must be constant on [0, 1] (kind const, or any schedule whose values
 *    are all equal), eta~ = its value.
 *  - model: borrowed; the model fields of an ODE configuration (dpdyn/ode.h) with the same
 *    validation and meaning: gamma, zeta, c, rho, grid, sigma2_const, mu_frozen, nu_frozen.
 *    sigma~^2 = sigma2_const, or the calibrated profile -d/dt[eta~^2]/rho^2 = 0 of a constant
 *    schedule when it is NAN; the release jump 2 c^2 gamma^2 eta~^2/rho^2 follows rho as in
 *    dpd_ode_solve. c = inf gives mu = nu = 1; with a finite c both mu_frozen and nu_frozen
 *    must be set (clipping at the current risk makes the equation nonlinear); factors must be
 *    NULL (DPD_EINVAL naming 'factors' otherwise). The CVODE
 *    fields (method, rtol, atol, max_steps, bounds, linsol, krylov_maxl) and the label-noise
 *    law (which enters only through mu, nu) are ignored.
 *  - out: *out is returned-owned (dpd_ode_result_free), NULL on failure. risk[j] = R(t_j)
 *    (risk[grid-1] = R(1-), before release), lower = upper = NULL, steps = the finest step
 *    count (2N with Richardson extrapolation), the other counters 0.
 * Returns DPD_OK, DPD_EINVAL (the reason names the field, its value and the allowed range),
 * DPD_ENOMEM, or DPD_ENONFINITE naming t when the discrete solution is not finite or the
 * discrete equation singular (a divergent run, eta~ far beyond 2/gamma). The plan carries the
 * workspace, so it is passed non-const (STYLE 12) and execute allocates nothing but the result:
 * thread-safe for distinct plans (each has its own FFTW plans and arrays; fftw_execute is
 * thread-safe), not for one plan shared between threads. */
DPD_API int dpd_volterra_execute(dpd_volterra_plan *plan, const dpd_linreg_problem *problem,
                                 const dpd_schedule *schedule, const dpd_ode_config *model,
                                 dpd_ode_result **out, dpd_err *err);

/* Convenience driver: plan (cfg), execute, free the plan. Same arguments, ownership and
 * returns as the two calls; not thread-safe (plans). */
DPD_API int dpd_volterra_solve(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                               const dpd_ode_config *model, const dpd_volterra_config *cfg,
                               dpd_ode_result **out, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_VOLTERRA_H */
