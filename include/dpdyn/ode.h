/* The deterministic equivalent of DP-SGD: d coupled risk ODEs (docs/math.md §1.7).
 * SPDX-License-Identifier: MIT
 *
 * Solves, for the groups j of distinct eigenvalues (exact reduction),
 *   dS_j/dt = -2 lambda_j eta~ mu_c(P) S_j
 *             + m_j (gamma lambda_j eta~^2 nu_c(P) P + 2 c^2 gamma^2 sigma~^2),
 *   R = (1/d) sum_j lambda_j S_j,  P = R + zeta^2/2,
 * the two decoupled scalar bounds, and the last-iterate release jump
 * 2 c^2 gamma^2 eta~(1)^2 / rho^2, with SUNDIALS CVODE (methods bdf and adams;
 * method volterra solves the same risk by FFTs, dpdyn/volterra.h). Every CVODE
 * configuration costs O(ngroups) per step: the Jacobian is diagonal plus rank
 * one and is never formed (BDF + Newton with an exact Sherman-Morrison solve
 * or with matrix-free SPGMR preconditioned by the diagonal part, or Adams with
 * fixed-point iteration). */
#ifndef DPD_ODE_H
#define DPD_ODE_H

#include <stddef.h>

#include "dpdyn/linreg.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Methods: dpd_ode_config.method names one entry of the method table below
 * (dpd_ode_method_types). */
typedef enum {
  DPD_ODE_BDF = 0, /* CVODE BDF (variable order 1-5) with Newton iterations: stiff problems */
  DPD_ODE_ADAMS,   /* CVODE Adams-Moulton (order 1-12) with fixed-point iterations */
  DPD_ODE_VOLTERRA /* the convolution-Volterra form solved with FFTs (dpdyn/volterra.h) */
} dpd_ode_method;

/* Linear solver of the BDF Newton iteration (both O(ngroups), matrix-free). */
typedef enum {
  DPD_ODE_LINSOL_SM = 0, /* exact Sherman-Morrison solve of (I - gamma J) x = r (default) */
  DPD_ODE_LINSOL_SPGMR   /* SUNDIALS SPGMR with the exact J v and the diagonal part
                            as left preconditioner (<= 2 iterations per solve) */
} dpd_ode_linsol;

/* gamma, zeta, noise, noise_nu, c and rho are the problem's setting (dpd_linreg_setting,
 * linreg.h, with gamma = d/n): dpd_ode_config_init sets them from one, so that the ODE solves
 * the setting a simulation runs. */
typedef struct {
  double gamma;        /* d/n, finite > 0 (default 0.5; callers normally set it) */
  double zeta;         /* label-noise sd, finite >= 0 (default 0.5) */
  dpd_noise_law noise; /* label-noise law (default Gaussian): mu_c, nu_c follow it (clip.h);
                          non-Gaussian laws evaluate them by GSL quadrature (about 20-40 us per
                          evaluation, against 0.1 us for the Gaussian closed forms) */
  double noise_nu;     /* Student-t degrees of freedom, finite > 2 (default 5; read only for
                          DPD_NOISE_STUDENT) */
  double c;    /* clipping scale > 0, INFINITY = none (default); must be finite when rho is */
  double rho;  /* privacy > 0, INFINITY = none (default); needs a non-increasing schedule */
  size_t grid; /* output times t_j = j/(grid-1), grid >= 2 (default 101) */
  dpd_ode_method method; /* default DPD_ODE_BDF (the method table below) */
  double rtol;           /* relative tolerance, default 1e-10 (CVODE controls the local error:
                            the global error of R is typically 5-50 rtol, so the default gives
                            about 1e-9 on the closed-form cases) */
  double atol;           /* absolute tolerance on R, default 1e-14; group j gets atol s_j / lambda_j
                            with s_j = problem->group_tol[j] (group_mult[j] when NULL), so that all
                            groups together contribute about atol to R */
  long max_steps;        /* CVODE mxstep (steps between two output times), >= 1, default 100000 */
  int bounds;            /* 1: also solve the two bounds (always with CVODE BDF and a dense 2 x 2
                            solver: the lower bound is as stiff as the full system) when the method
                            gives them (DPD_ODE_GIVES_BOUNDS; others leave them NULL); 0 (default) */
  dpd_ode_linsol linsol; /* BDF: default DPD_ODE_LINSOL_SM */
  int krylov_maxl;       /* BDF + SPGMR: Krylov dimension >= 1, default 5 (2 suffice: the
                            preconditioned Newton matrix is identity plus rank one) */
  /* Overrides for cross-checks (dpdyn/volterra.h); NAN (the default) keeps the model of
   * docs/math.md §1.7 unchanged. */
  double sigma2_const; /* constant privacy-noise profile sigma~^2 >= 0 in place of the calibrated
                          -d/dt[eta~^2]/rho^2; > 0 needs finite c (the noise term is
                          2 c^2 gamma^2 sigma~^2). The release jump still follows rho. */
  double mu_frozen;    /* clipping factor mu_c in (0, 1] held constant instead of mu_c(P) */
  double nu_frozen;    /* clipping factor nu_c in [0, 1] held constant instead of nu_c(P) */
  /* Finite-size correction (docs/finite_size.md): the clipping factors averaged over the law of
   * s^2 = |x|^2/d, with the lambda_j/d terms of each eigenvalue group. DPD_FINITE_OFF (default:
   * the asymptotic equivalent of docs/math.md §1.7), DPD_FINITE_ON, or DPD_FINITE_AUTO (on where
   * dpd_linreg_finite_size_matters, see dpd_ode_finite_size_applies). Needs method bdf or adams
   * and no frozen factors; the bounds keep the asymptotic factors. */
  int finite_size;
  /* Clipping factors supplied by the caller (the data-driven factors of a dataset,
   * docs/real_data_theory.md): when non-NULL, mu, nu and their derivatives in the excess risk R
   * come from factors(factors_user, c, R, &mu, &nu, &dmu_dR, &dnu_dR) (c: the solve's
   * clipping scale, which the tuner varies) in place of the label-noise
   * law's, in the main system and in the bounds (P = R + zeta^2/2 as always). It returns 0, 1 for
   * an R outside its domain (CVODE retries with a smaller step), or a negative status (the
   * solve then fails with it, the reason naming 'factors'). Needs method bdf or adams, no frozen
   * factors and finite_size off or auto (auto does not apply with factors: they already average
   * over the rows' norms); DPD_EINVAL naming 'factors' otherwise. NULL (default): the law's. */
  int (*factors)(void *user, double c, double R, double *mu, double *nu, double *dmu_dR,
                 double *dnu_dR);
  void *factors_user; /* borrowed for the solve */
} dpd_ode_config;

enum { DPD_FINITE_OFF = 0, DPD_FINITE_ON = 1, DPD_FINITE_AUTO = 2 };

/* The auto rule's thresholds on sqrt(m2), m2 = E[(|x|^2/d - 1)^2] = 2 sum lambda_i^2 / d^2, and on
 * lambda_max/d (docs/finite_size.md §4: every measured case where the correction moves the
 * released risk by more than 0.1 % exceeds both). */
#define DPD_FINITE_AUTO_THRESHOLD 0.1
#define DPD_FINITE_AUTO_LMAX 0.03

/* 1 when sqrt(m2) > DPD_FINITE_AUTO_THRESHOLD and lambda_max/d > DPD_FINITE_AUTO_LMAX: the
 * asymptotic equivalent is off by its finite-size terms (the CLI warns when the correction is
 * off there). */
DPD_API int dpd_linreg_finite_size_matters(const dpd_linreg_problem *problem);

/* m2 = 2 sum lambda_i^2 / d^2 of a problem (any problem, spectral ones included). */
DPD_API double dpd_linreg_m2(const dpd_linreg_problem *problem);

/* 1 when a solve of `problem` with `cfg` applies the finite-size correction: finite_size on, or
 * auto where dpd_linreg_finite_size_matters, with a method that supports it and no caller-supplied
 * factors; else 0. */
DPD_API int dpd_ode_finite_size_applies(const dpd_linreg_problem *problem,
                                        const dpd_ode_config *cfg);

/* All risks are excess risks. The three curves risk, lower and upper are
 * values *before release* (t -> 1-): the released iterate theta_n carries the
 * last step's noise, which adds release_jump to each of them alike at t = 1
 * (R_out = R(1-) + jump; the bounds of R_out are lower/upper[grid-1] + jump).
 * This is the release convention of the simulation and the SDE too
 * (dpd_linreg_sim_result, linreg.h): risk[grid-1] compares with their
 * risk_mean[grid-1], final_risk with their final_risk. */
typedef struct {
  size_t grid;
  double *t;             /* [grid] t_j = j/(grid-1) */
  double *risk;          /* [grid] R(t); risk[grid-1] = R(1-) (before release) */
  double *lower;         /* [grid] lower bound before release; NULL (absent) if bounds == 0
                            or the method does not give them (DPD_ODE_GIVES_BOUNDS) */
  double *upper;         /* [grid] upper bound before release; NULL exactly when lower is; the
                            upper bound may overflow on steep spectra without clipping (it
                            grows like exp(lambda_max gamma int eta~^2)): from the first
                            output time where its solver fails, upper = INFINITY and
                            lower = NAN, and the solve of R goes on unaffected */
  double before_release; /* R(1-) */
  double release_jump;   /* 2 c^2 gamma^2 eta~(1)^2 / rho^2 (0 if rho = inf) */
  double final_risk;     /* R_out = R(1-) + jump */
  long steps, rhs_evals; /* CVODE statistics of the main system (volterra: steps = the finest
                            step count, the other counters 0) */
  long lin_iters;        /* SPGMR iterations (0 with the exact Sherman-Morrison solve) */
  long nonlin_iters;     /* Newton (BDF) or fixed-point (Adams) iterations */
  long err_test_fails;   /* rejected steps (local error test) */
  long prec_solves;      /* preconditioner solves (BDF + SPGMR only, else 0) */
  long jtimes_evals;     /* Jacobian-vector products (BDF + SPGMR only, else 0) */
  dpd_ode_config config; /* the configuration it was solved with (a copy, set by dpd_ode_solve
                            and dpd_volterra_solve/_execute; gamma, zeta, noise, noise_nu, c,
                            rho are its setting: dpd_linreg_setting_check, linreg_setting.h) */
} dpd_ode_result;

/* Capability flags of a method (dpd_ode_method_type.flags, combined with |). */
enum {
  /* Requirements, checked by dpd_ode_solve (DPD_EINVAL naming the key and the method): */
  DPD_ODE_NEEDS_CONST_SCHEDULE = 1, /* eta~ constant on [0, 1] (eta~(0) = eta~(1) and
                                       non-increasing) */
  DPD_ODE_NEEDS_NO_CLIPPING = 2,    /* clipping factors that do not depend on the risk: c = inf,
                                       or both mu_frozen and nu_frozen set */
  /* Capabilities: */
  DPD_ODE_GIVES_BOUNDS = 4, /* solves the two bounds when cfg->bounds (else lower = upper = NULL) */
  DPD_ODE_THREAD_SAFE = 8   /* dpd_ode_solve may run concurrently for distinct arguments */
};

/* An ODE method (the gsl_odeiv2_step_type idea): a static const description in the library,
 * listed in dpd_ode_method_types. Never created or freed by callers. */
typedef struct dpd_ode_method_type {
  const char *name;        /* "bdf", "adams", "volterra": the CLI's key value */
  const char *description; /* one line, for listings and --help */
  dpd_ode_method id;       /* its value of dpd_ode_config.method */
  unsigned flags;          /* DPD_ODE_NEEDS_* | DPD_ODE_GIVES_BOUNDS | DPD_ODE_THREAD_SAFE */
  /* Solves with cfg->method == id, called by dpd_ode_solve after the common validation and the
   * requirement checks of `flags` (*out is NULL on entry); same contract as dpd_ode_solve. */
  int (*solve)(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
               const dpd_ode_config *cfg, dpd_ode_result **out, dpd_err *err);
} dpd_ode_method_type;

/* The method table: every method, NULL-terminated, in the order of dpd_ode_method (bdf, adams,
 * volterra). Iterate with `for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m;
 * m++)`. Static, read-only, thread-safe. */
DPD_API extern const dpd_ode_method_type *const dpd_ode_method_types[];

/* The method called `name` (exact, case-sensitive), or NULL when there is none (or name is
 * NULL). `name` is borrowed; the result is static. */
DPD_API const dpd_ode_method_type *dpd_ode_method_lookup(const char *name);

/* The method whose id is `method`, or NULL for a value outside the table. */
DPD_API const dpd_ode_method_type *dpd_ode_method_type_get(dpd_ode_method method);

/* Default configuration (values listed next to each field). */
DPD_API dpd_ode_config dpd_ode_config_default(void);

/* dpd_ode_config_default() with the setting's zeta, noise, noise_nu, c and rho, and
 * gamma = d / setting->n, d being the dimension of the problem it will solve (problem->d).
 * `setting` is borrowed for the call. Pure; validation happens in dpd_ode_solve (n = 0 gives
 * gamma = inf, which it rejects). */
DPD_API dpd_ode_config dpd_ode_config_init(const dpd_linreg_setting *setting, size_t d);

/* Solves the grouped ODE system on [0, 1] (and the bounds when cfg->bounds and the method gives
 * them) with the method cfg->method of the table:
 *  - bdf, adams: CVODE, as described at the top of this header.
 *  - volterra: dpd_volterra_solve (dpdyn/volterra.h) with dpd_volterra_config_default(), its
 *    step count rounded up to a multiple of grid - 1 (400 steps, Richardson-extrapolated, for
 *    grid <= 401); needs a constant schedule and c = inf (or frozen mu and nu); rtol, atol,
 *    max_steps, linsol, krylov_maxl and the label-noise law are ignored; lower = upper = NULL.
 * `problem`, `schedule` and `cfg` are borrowed for the call only. *out is
 * returned-owned (dpd_ode_result_free) and NULL on failure; all memory is
 * allocated before the integration starts and released on every path.
 * Returns DPD_OK, DPD_EINVAL for a bad config (the reason names the key, the
 * value and the allowed range; a requirement of the method that is not met names the key and
 * the method), DPD_ENOMEM, DPD_ESOLVER when CVODE fails (the
 * reason includes CVODE's flag name, its message and t), DPD_ENONFINITE when
 * the state becomes non-finite, and the status of dpd_clip_noise_factors_eval
 * (DPD_EMAXITER, with its reason and t) when a quadrature of the clipping
 * factors of a non-Gaussian law fails: the right-hand side then returns
 * CVODE's fatal code. With a non-Gaussian law a trial state with R < 0 is
 * outside the model's domain and CVODE retries with a smaller step. GSL's
 * default error handler aborts on such a failure: callers that use
 * non-Gaussian laws turn it off first (gsl_set_error_handler_off; the CLI
 * does). CVODE never prints. Thread-safe for distinct
 * arguments (no shared state) with the methods flagged DPD_ODE_THREAD_SAFE (bdf,
 * adams); volterra plans FFTs with FFTW's process-wide planner: one thread at a time. */
DPD_API int dpd_ode_solve(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                          const dpd_ode_config *cfg, dpd_ode_result **out, dpd_err *err);

/* Frees a result (NULL allowed). */
DPD_API void dpd_ode_result_free(dpd_ode_result *r);

/* Pure evaluations of the grouped system for testing and analysis: the
 * right-hand side dSdt[ngroups] at (t, S[ngroups]), and the Jacobian-vector
 * product Jv = (df/dS)(t, S) v, computed matrix-free in O(ngroups). Arrays are
 * caller-owned; the other arguments are borrowed. Return 0, 1 when the risk at
 * S (or, for the right-hand side, a derivative) is not finite, or negative with
 * a non-Gaussian law (CVODE's "recoverable" code), DPD_EINVAL for a config that
 * dpd_ode_solve would reject, or the negative status of a failed quadrature
 * of the clipping factors. No allocation; thread-safe. With the finite-size correction applied
 * (dpd_ode_finite_size_applies) each call builds the law of |x|^2/d (allocates, milliseconds), and
 * the Jacobian-vector product is that of the Newton matrix the solver uses: without the state
 * dependence of the rank-one term and of the one-step factors (docs/finite_size.md §2). */
DPD_API int dpd_ode_rhs_eval(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                             const dpd_ode_config *cfg, double t, const double *S, double *dSdt);
DPD_API int dpd_ode_jtimes_eval(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                                const dpd_ode_config *cfg, double t, const double *S,
                                const double *v, double *Jv);

#ifdef __cplusplus
}
#endif
#endif /* DPD_ODE_H */
