/* The deterministic equivalent of DP-SGD: d coupled risk ODEs (MATH.md 1.7).
 * SPDX-License-Identifier: MIT
 *
 * Solves, for the groups j of distinct eigenvalues (exact reduction),
 *   dS_j/dt = -2 lambda_j eta~ mu_c(P) S_j + m_j (gamma lambda_j eta~^2 nu_c(P) P + 2 c^2 gamma^2 sigma~^2)
 *   R = (1/d) sum_j lambda_j S_j,  P = R + zeta^2/2,
 * the two decoupled scalar bounds, and the last-iterate release jump
 * 2 c^2 gamma^2 eta~(1)^2 / rho^2, with SUNDIALS CVODE. Every solver
 * configuration costs O(ngroups) per step: the Jacobian is diagonal plus rank
 * one and is never formed (BDF + matrix-free SPGMR preconditioned by the
 * diagonal part, or Adams with fixed-point iteration). */
#ifndef DPD_ODE_H
#define DPD_ODE_H

#include <stddef.h>

#include "dpdyn/linreg.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DPD_ODE_BDF = 0, DPD_ODE_ADAMS } dpd_ode_method;

typedef struct {
  double gamma;   /* d/n > 0 */
  double zeta;    /* label-noise sd >= 0 */
  double c;       /* clipping scale > 0, INFINITY = none */
  double rho;     /* privacy > 0, INFINITY = none */
  size_t grid;    /* output times t_j = j/(grid-1), grid >= 2 */
  dpd_ode_method method;
  double rtol;    /* relative tolerance, default 1e-8 */
  double atol;    /* absolute tolerance on R, default 1e-12 (scaled per group) */
  long max_steps; /* CVODE mxstep, default 100000 */
  int bounds;     /* 1: also solve the two bounds */
} dpd_ode_config;

typedef struct {
  size_t grid;
  double *t;            /* [grid] */
  double *risk;         /* [grid] R(t); risk[grid-1] = R(1-) (before release) */
  double *lower;        /* [grid] lower bound (NULL if bounds == 0) */
  double *upper;        /* [grid] upper bound (NULL if bounds == 0) */
  double before_release; /* R(1-) */
  double release_jump;   /* 2 c^2 gamma^2 eta~(1)^2 / rho^2 (0 if rho = inf) */
  double final_risk;     /* R_out = R(1-) + jump */
  long steps, rhs_evals, lin_iters; /* CVODE statistics of the main system */
} dpd_ode_result;

DPD_API dpd_ode_config dpd_ode_config_default(void);

/* Solves the ODE system on [0, 1]. *out is returned-owned (dpd_ode_result_free).
 * DPD_EINVAL for a bad config, DPD_ESOLVER when CVODE fails (reason includes
 * CVODE's flag and t), DPD_ENONFINITE for a non-finite state. */
DPD_API int dpd_ode_solve(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                          const dpd_ode_config *cfg, dpd_ode_result **out, dpd_err *err);
DPD_API void dpd_ode_result_free(dpd_ode_result *r);

#ifdef __cplusplus
}
#endif
#endif /* DPD_ODE_H */
