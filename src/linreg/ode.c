/* The deterministic equivalent of one-pass DP-SGD: grouped risk ODEs, bounds and release jump.
 * SPDX-License-Identifier: MIT
 *
 * Equations: docs/math.md §1.7 (arXiv:2505.16329). For the groups j of
 * equal eigenvalues lambda_j (multiplicity m_j), S_j = sum of D_i over the group:
 *   dS_j/dt = lambda_j (A S_j + m_j B) + m_j C,
 *   A = -2 eta~ mu_c(P),  B = gamma eta~^2 nu_c(P) P,  C = 2 c^2 gamma^2 sigma~^2(t),
 *   R = (1/d) sum_j lambda_j S_j,  P = R + zeta^2/2,  rho^2 sigma~^2 = -d/dt[eta~^2].
 * The reduction is exact because the right-hand side of D_i depends on i only
 * through lambda_i. The Jacobian is diagonal plus rank one, since all coupling
 * goes through the scalar P (dP/dS_k = lambda_k/d):
 *   J = diag(lambda_j A) + a b^T,  b_k = lambda_k/d,  a_j = lambda_j (A' S_j + m_j B'),
 *   A' = -2 eta~ mu_c'(P),  B' = gamma eta~^2 (nu_c'(P) P + nu_c(P)).
 *
 * Solver: SUNDIALS CVODE (Hindmarsh et al., ACM TOMS 31 (2005) 363; CVODE
 * user guide v6.4, sections 2.1-2.2 for BDF/Adams and the Newton iteration
 * with M = I - gamma_cv J).
 *  - BDF (default, stiff: lambda_max eta~ reaches 4e5 for power-law spectra)
 *    with Newton. Two O(m) linear solvers, neither of which forms a matrix:
 *    * DPD_ODE_LINSOL_SM (default): the exact Sherman-Morrison solve of
 *      (E - gamma_cv a b^T) x = r, E = I - gamma_cv diag(lambda_j A), with the
 *      Jacobian at the current Newton iterate (Golub & Van Loan, Matrix
 *      Computations, 4th ed., eq. 2.1.4), wrapped as a SUNDIALS
 *      "matrix-embedded" linear solver.
 *    * DPD_ODE_LINSOL_SPGMR: SUNDIALS SPGMR (Saad & Schultz, SIAM J. Sci.
 *      Stat. Comput. 7 (1986) 856), matrix-free through the exact J v above,
 *      with the left preconditioner E^{-1} applied exactly. The preconditioned
 *      Newton matrix is I - gamma_cv E^{-1} a b^T, identity plus rank one, whose
 *      minimal polynomial has degree 2: GMRES converges in at most two
 *      iterations (Campbell, Ipsen, Kelley & Meyer, BIT 36 (1996) 664). E uses
 *      A at the current Newton iterate, evaluated by the Jacobian-times setup
 *      that CVODE calls before every linear solve.
 *  - Adams (non-stiff): fixed-point iteration, no linear algebra.
 *  - Bounds (two decoupled scalar ODEs): a separate 2-component CVODE BDF
 *    instance with a dense linear solver and the analytic (diagonal)
 *    Jacobian, for either method: the lower bound carries lambda_max and is as
 *    stiff as the full system.
 * Every evaluation is O(m) and evaluates the schedule and the clipping factors
 * once: the label-noise law's (clip.h), or the caller's (dpd_ode_config.factors, e.g. the
 * data-driven factors of a dataset, docs/real_data_theory.md) in the main system and the bounds.
 * For schedules ending like sqrt(1 - t), CVODE integrates in tau with
 * t = 1 - (1 - tau)^4 (see time_map), in which they are smooth at t = 1.
 * Tolerances: the scalar atol is on R; since R = (1/d) sum lambda_j S_j, group
 * j gets atol_j = atol m_j / lambda_j, so that the absolute tolerances of all
 * groups together contribute at most atol to R. The serial N_Vector's hot
 * kernels are replaced by optimised ones (ode_nvector.c, and why there).
 *
 * The integration stops exactly at t = 1 (CVodeSetStopTime): for the sqrt
 * schedule eta~'(t) -> -inf there and nothing beyond t = 1 is defined. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "core/error_impl.h"
#include "dpdyn/clip.h"
#include "dpdyn/ode.h"
#include "linreg/finite_impl.h"
#include "linreg/ode_impl.h"


/* ---- Pure model functions ------------------------------------------------------------------ */

/* Read-only description of the grouped system; borrows the arrays. */
typedef struct {
  size_t m;                     /* number of groups */
  double inv_d;                 /* 1/d */
  const double *lambda;         /* [m] group eigenvalues (borrowed) */
  const double *mult;           /* [m] multiplicities (borrowed) */
  const dpd_schedule *schedule; /* borrowed */
  double gamma;
  double half_zeta2;    /* zeta^2 / 2 */
  dpd_noise_spec noise; /* label-noise law */
  int gaussian_noise;   /* noise.law == DPD_NOISE_GAUSSIAN: closed-form factors of P */
  double c;             /* clipping scale, INFINITY = none */
  double noise_scale;   /* 2 c^2 gamma^2 / rho^2; 0 when rho = INFINITY */

  /* Overrides (dpd_ode_config): NAN = the model of docs/math.md §1.7. */
  double noise_const;          /* 2 c^2 gamma^2 sigma2_const */
  double mu_frozen, nu_frozen; /* in place of mu_c(P), nu_c(P) */
  const dpd__fs_law *fs;       /* finite-size correction (docs/finite_size.md); NULL: off */
  /* the caller's clipping factors (dpd_ode_config.factors, e.g. a dataset's); NULL: the law's */
  int (*factors)(void *user, double c, double R, double *mu, double *nu, double *dmu_dR,
                 double *dnu_dR);
  void *factors_user;
} ode_model;

/* Scalar coefficients at one (t, S), computed once per evaluation. */
typedef struct {
  double eta;      /* eta~(t) */
  double R, P;     /* excess and full risk */
  double mu, nu;   /* clipping factors at P */
  double dmu, dnu; /* their P-derivatives (= R-derivatives); NaN when not requested */
  double A, B, C;  /* see the file comment */
  double dA, dB;   /* A'(P), B'(P) */
  dpd__fs_coef fs; /* per-group A_j, B_j when model->fs (A, B, dA, dB then unused) */
  double lbar;     /* sum lambda^2 S / sum lambda S (finite-size rank-one term) */
  double lbar_s1;  /* its denominator sum lambda S (0: lbar held at 0) */
  /* conditioning on the first exact direction (docs/finite_size.md §2): its share a1 of the
   * residual (0: off); lbar then leaves out its lambda^2 S */
  int cond;
  double a1;
  double tscale; /* dt/dtau applied by coef_scale (finite-size: the per-step rate) */
  /* exact directions (docs/finite_size.md §2, "top directions"), when ex_on[e]: A_j, B_j, their
   * P-derivatives and their derivatives in the direction's own S_j */
  int ex_on[DPD_FS_MAXEXACT];
  double exA[DPD_FS_MAXEXACT], exB[DPD_FS_MAXEXACT], exdA[DPD_FS_MAXEXACT], exdB[DPD_FS_MAXEXACT],
      exAs[DPD_FS_MAXEXACT], exBs[DPD_FS_MAXEXACT];
  /* conditioning: their derivatives in the partner's S (exact direction 0 for e > 0, 1 for e = 0)
   */
  double exAq[DPD_FS_MAXEXACT], exBq[DPD_FS_MAXEXACT];
} ode_coef;

static void model_init(ode_model *model, const dpd_linreg_problem *problem,
                       const dpd_schedule *schedule, const dpd_ode_config *cfg) {
  model->m = problem->ngroups;
  model->inv_d = 1.0 / (double)problem->d;
  model->lambda = problem->group_lambda;
  model->mult = problem->group_mult;
  model->schedule = schedule;
  model->gamma = cfg->gamma;
  model->half_zeta2 = 0.5 * cfg->zeta * cfg->zeta;
  model->noise.law = cfg->noise;
  model->noise.zeta = cfg->zeta;
  model->noise.nu = cfg->noise_nu;
  model->gaussian_noise = cfg->noise == DPD_NOISE_GAUSSIAN;
  model->c = cfg->c;
  model->noise_scale =
      isinf(cfg->rho) ? 0.0
                      : 2.0 * cfg->c * cfg->c * cfg->gamma * cfg->gamma / (cfg->rho * cfg->rho);
  model->noise_const = NAN;
  if (!isnan(cfg->sigma2_const)) {
    model->noise_const = cfg->sigma2_const > 0.0
                             ? 2.0 * cfg->c * cfg->c * cfg->gamma * cfg->gamma * cfg->sigma2_const
                             : 0.0;
  }
  model->mu_frozen = cfg->mu_frozen;
  model->nu_frozen = cfg->nu_frozen;
  model->fs = NULL;
  model->factors = cfg->factors;
  model->factors_user = cfg->factors_user;
}

/* The largest per-step decay rate -log(1 + x_j) the factor rho_j gives a group (below it 1 + x_j
 * <= e^{-8}: the direction has forgotten its state within one step whatever the exact rate). */
#define FS_RATE_MAX 8.0

/* rho(x) = log1p(x)/x with the rate -log1p(x) capped at FS_RATE_MAX, and rho'(x) in *slope. */
static double rho_of_rate(double x, double *slope) {
  if (fabs(x) < 1e-3) {
    *slope = -0.5 + x * (2.0 / 3.0 - 0.75 * x);
    return 1.0 + x * (-0.5 + x * (1.0 / 3.0 - 0.25 * x));
  }
  if (x > -1.0 && log1p(x) > -FS_RATE_MAX) {
    const double l = log1p(x);
    *slope = (x / (1.0 + x) - l) / (x * x);
    return l / x;
  }
  *slope = FS_RATE_MAX / (x * x); /* capped rate: rho x = -FS_RATE_MAX */
  return -FS_RATE_MAX / x;
}

/* x_j / A_j: the per-step rate of group j per unit of A_j. */
static double rate_per_A(const ode_model *model, const ode_coef *co, size_t j) {
  return model->lambda[j] * model->gamma * model->inv_d / co->tscale;
}

/* The group's coefficients A_j, B_j (and their P-derivatives) of the finite-size-corrected
 * system (docs/finite_size.md §2), and the factor rho_j = log1p(x_j)/x_j, x_j = lambda_j A_j / n
 * (the per-step rate), that makes the ODE with frozen coefficients reproduce the one-step
 * recursion exactly (docs/finite_size.md §2, "one step"); rho_j multiplies the whole group
 * equation. Its derivative in A_j (rho_A, times dA_j for the P column) goes into the Jacobian,
 * which is exact (see fs_dfdL for the term whose absence stalled CVODE): near x_j = -1 (a top
 * direction at a step near 1/lambda_j) rho_j changes fast with P. The rate -log1p(x_j) is capped at
 * FS_RATE_MAX, continuously (rho_j = FS_RATE_MAX/|x_j| beyond). diag (may be NULL): the diagonal
 * entry d f_j / d S_j of the Jacobian at S_j, C the noise term: rho_j lambda_j A_j, plus for an
 * exact direction its own S_j-dependence (co->exAs, exBs). */
static void fs_group(const ode_model *model, const ode_coef *co, size_t j, double *A, double *B,
                     double *dA, double *dB, double *rho, double *rho_A, double Sj, double *diag) {
  const dpd__fs_coef *f = &co->fs;
  const int k = model->fs->tilt_of[j];
  const int e = k >= 0 ? model->fs->exact_of_tilt[k] : -1;
  const double xa = rate_per_A(model, co, j);
  double slope;
  if (e >= 0 && co->ex_on[e]) {
    const double lj = model->lambda[j];
    *A = co->exA[e];
    *B = co->exB[e];
    *dA = co->exdA[e];
    *dB = co->exdB[e];
    *rho = rho_of_rate(*A * xa, &slope);
    *rho_A = slope * xa;
    if (diag != NULL) {
      *diag = *rho * lj * (*A + Sj * co->exAs[e] + co->exBs[e]) +
              *rho_A * co->exAs[e] * (lj * (*A * Sj + *B) + model->mult[j] * co->C);
    }
    return;
  }
  if (k >= 0) {
    *A = f->At[k];
    *B = f->Bt[k];
    *dA = f->dAt[k];
    *dB = f->dBt[k];
  } else {
    const double beta = model->lambda[j] * model->inv_d;
    *A = f->A0 + beta * f->A1;
    *B = f->B0 + beta * f->B1;
    *dA = f->dA0 + beta * f->dA1;
    *dB = f->dB0 + beta * f->dB1;
  }
  *rho = rho_of_rate(*A * xa, &slope);
  *rho_A = slope * xa;
  if (diag != NULL) {
    *diag = *rho * model->lambda[j] * *A;
  }
}

/* Frozen clipping factors (dpd_ode_config.mu_frozen, nu_frozen) replace mu_c(P), nu_c(P);
 * their P-derivatives are then 0. */
static void factors_freeze(const ode_model *model, double *mu, double *nu, double *dmu,
                           double *dnu) {
  if (!isnan(model->mu_frozen)) {
    *mu = model->mu_frozen;
    *dmu = 0.0;
  }
  if (!isnan(model->nu_frozen)) {
    *nu = model->nu_frozen;
    *dnu = 0.0;
  }
}

/* 1 when both clipping factors are frozen (nothing to evaluate). */
static int factors_frozen(const ode_model *model) {
  return !isnan(model->mu_frozen) && !isnan(model->nu_frozen);
}

/* The privacy-noise term C = 2 c^2 gamma^2 sigma~^2(t). */
static double noise_term(const ode_model *model, double t) {
  if (!isnan(model->noise_const)) {
    return model->noise_const;
  }
  return model->noise_scale > 0.0 ? -model->noise_scale * dpd_schedule_dsq_eval(model->schedule, t)
                                  : 0.0;
}

/* Four partial sums: breaks the add-latency chain of a single accumulator
 * (about 4x faster for large m) without changing the accuracy class. */
static double model_risk(const ode_model *model, const double *S) {
  const double *lambda = model->lambda;
  double r0 = 0.0, r1 = 0.0, r2 = 0.0, r3 = 0.0;
  size_t m = model->m, j = 0;
  for (; j + 4 <= m; j += 4) {
    r0 += lambda[j] * S[j];
    r1 += lambda[j + 1] * S[j + 1];
    r2 += lambda[j + 2] * S[j + 2];
    r3 += lambda[j + 3] * S[j + 3];
  }
  for (; j < m; j++) {
    r0 += lambda[j] * S[j];
  }
  return ((r0 + r1) + (r2 + r3)) * model->inv_d;
}

/* Clipping factors of a non-Gaussian label-noise law at the excess risk R (clip.h; GSL
 * quadrature for Laplace and Student-t), or the caller's (model->factors: a status > 0 of theirs
 * is 1, a negative one is returned with a reason naming 'factors'). Returns 0; 1 (recoverable:
 * CVODE retries with a smaller step) when R is negative or not finite, a trial state outside the
 * model's domain; or the negative status of a failed quadrature, with its reason in *err. The
 * derivatives cost as much again as the factors and are computed only when `derivs`. */
static int coef_factors_law(const ode_model *model, double R, int derivs, ode_coef *co,
                            dpd_err *err) {
  co->dmu = NAN;
  co->dnu = NAN;
  if (!(R >= 0.0) || !isfinite(R)) {
    co->mu = NAN;
    co->nu = NAN;
    return 1;
  }
  if (model->factors != NULL) {
    int status = model->factors(model->factors_user, model->c, R, &co->mu, &co->nu, derivs ? &co->dmu : NULL,
                                derivs ? &co->dnu : NULL);
    if (status < 0) {
      return DPD_FAIL(err, status, "the caller's clipping factors ('factors') failed at R = %.17g",
                      R);
    }
    return status > 0 ? 1 : 0;
  }
  return dpd_clip_noise_factors_eval(&model->noise, model->c, R, &co->mu, &co->nu,
                                     derivs ? &co->dmu : NULL, derivs ? &co->dnu : NULL, err);
}

/* Coefficients that depend on t and the full risk P only. The Gaussian law keeps the closed
 * forms in P (with derivatives, which cost nothing there); the other laws, and the caller's
 * factors (dpd_ode_config.factors, which replace the law's whatever it is), evaluate the
 * derivatives only when `derivs` (Jacobian paths). Returns 0, or coef_factors_law's 1 or
 * negative status (Gaussian noise: always 0, callers test P as before). */
static int coef_at(const ode_model *model, double t, double R, int derivs, ode_coef *co,
                   dpd_err *err) {
  double eta;
  co->R = R;
  co->P = R + model->half_zeta2;
  eta = dpd_schedule_eval(model->schedule, t);
  co->eta = eta;
  if (model->fs != NULL) {
    memset(co->ex_on, 0, sizeof co->ex_on); /* exact directions: exact_eval, given the state */
    int status = dpd__fs_coef_eval(model->fs, &model->noise, model->c, R, co->lbar, co->a1, eta,
                                   model->gamma, derivs, &co->fs, err);
    if (status != 0) {
      co->mu = co->nu = NAN;
      return status;
    }
    co->mu = co->fs.mu;
    co->nu = co->fs.nu;
    co->tscale = 1.0;
    co->dmu = co->dnu = NAN;
    co->A = co->fs.A0;
    co->B = co->fs.B0;
    co->dA = co->fs.dA0;
    co->dB = co->fs.dB0;
    co->C = noise_term(model, t);
    return 0;
  }
  if (model->gaussian_noise && model->factors == NULL) {
    dpd_clip_factors_eval(model->c, co->P, &co->mu, &co->nu, &co->dmu, &co->dnu);
  } else if (!factors_frozen(model)) {
    int status = coef_factors_law(model, R, derivs, co, err);
    if (status != 0) {
      return status;
    }
  }
  factors_freeze(model, &co->mu, &co->nu, &co->dmu, &co->dnu);
  co->A = -2.0 * eta * co->mu;
  co->B = model->gamma * eta * eta * co->nu * co->P;
  co->dA = -2.0 * eta * co->dmu;
  co->dB = model->gamma * eta * eta * (co->dnu * co->P + co->nu);
  co->C = noise_term(model, t);
  return 0;
}

/* The exact directions' A_j, B_j (docs/finite_size.md §2, "top directions"): with a =
 * sqrt(2 beta S_j) the direction's share of the residual, dS_j/dt = lambda_j (A_j S_j + B_j) + C
 * holds exactly for A_j = -2 eta~ (K1(a)/a + delta mu_{-j}) and B_j = (gamma eta~^2/2)(K2(a) +
 * delta N_{-j}), the rank-one terms without the direction's own share lambda_j^2 S_j of s2.
 * Gaussian label noise only; a direction whose share is below 1e-6 of the residual's scale keeps
 * the first-order form (the two agree to O(a^2) there). */
static void exact_eval(const ode_model *model, const double *S, ode_coef *co) {
  const dpd__fs_law *law = model->fs;
  const double eta = co->eta, g2 = model->gamma * eta * eta;
  for (size_t e = 0; e < law->nexact; e++) {
    const size_t j = law->exact_group[e];
    const double beta = law->exact_beta[e], lj2 = model->lambda[j] * model->lambda[j];
    const double Sj = S[j] > 0.0 ? S[j] : 0.0, a = sqrt(2.0 * beta * Sj);
    /* conditioning: the integral runs jointly with a partner (exact direction 0 for e > 0, 1 for
     * e = 0), whose share the rank-one term then leaves out as well */
    const int partner = dpd__fs_partner(law, e), joint = co->cond && partner >= 0;
    const size_t jp = joint ? law->exact_group[partner] : j;
    const double Sp = S[jp] > 0.0 ? S[jp] : 0.0, beta_p = joint ? law->exact_beta[partner] : 0.0;
    const double ap = joint ? sqrt(2.0 * beta_p * Sp) : 0.0;
    dpd__fs_exact_k k;
    co->ex_on[e] = 0;
    if (!model->gaussian_noise || isinf(model->c) || !(a > 1e-6 * sqrt(2.0 * co->P)) ||
        dpd__fs_exact_eval(law, e, model->c, co->P, a, ap, &k) != 0) {
      continue;
    }
    const double dadS = beta / a, k1a = k.k1 / a;
    /* the Jacobian's variables are (S_j, R, lbar) as for every group: lbar s1 = lbar R d is s2
     * without direction 0's share when conditioning (then direction 0's own share is already out
     * of it, and its partner's is taken out here), else all of it */
    const double s2 = co->lbar * co->lbar_s1, ld = co->lbar / model->inv_d;
    const double own = co->cond && e == 0 ? 0.0 : lj2; /* own share still in s2 */
    /* e = 0 with a partner: the partner's share, also still in s2 */
    const double lp2 = e == 0 && joint ? model->lambda[jp] * model->lambda[jp] : 0.0;
    const double sub = own * Sj + lp2 * Sp;
    co->ex_on[e] = 1;
    co->exA[e] = -2.0 * eta * (k1a + co->fs.r1_mu * (s2 - sub));
    co->exB[e] = 0.5 * g2 * (k.k2 + co->fs.r1_N * (s2 - sub));
    co->exdA[e] = -2.0 * eta * (k.k1p / a + co->fs.dr1_mu * (s2 - sub) + co->fs.r1_mu * ld);
    co->exdB[e] = 0.5 * g2 * (k.k2p + co->fs.dr1_N * (s2 - sub) + co->fs.r1_N * ld);
    co->exAs[e] = -2.0 * eta * ((k.k1a - k1a) / a * dadS - co->fs.r1_mu * own);
    co->exBs[e] = 0.5 * g2 * (k.k2a * dadS - co->fs.r1_N * own);
    { /* the partner's S: through its share in the joint integral and (e = 0) the rank-one term */
      const double dapdS = joint && ap > 0.0 ? beta_p / ap : 0.0;
      co->exAq[e] = -2.0 * eta * (k.k1q / a * dapdS - co->fs.r1_mu * lp2);
      co->exBq[e] = 0.5 * g2 * (k.k2q * dapdS - co->fs.r1_N * lp2);
    }
  }
}

static int coef_eval(const ode_model *model, double t, const double *S, int derivs, ode_coef *co,
                     dpd_err *err) {
  co->lbar = 0.0;
  co->lbar_s1 = 0.0;
  if (model->fs != NULL) { /* sum lambda^2 S / sum lambda S: the residual's mean eigenvalue */
    double s1 = 0.0, s2 = 0.0;
    for (size_t j = 0; j < model->m; j++) {
      s1 += model->lambda[j] * S[j];
      s2 += model->lambda[j] * model->lambda[j] * S[j];
    }
    co->cond = 0;
    co->a1 = 0.0;
    if (model->fs->cond && dpd__fs_cond_applies(model->fs, &model->noise, model->c, 1.0)) {
      const size_t j0 = model->fs->exact_group[0];
      const double S0 = S[j0] > 0.0 ? S[j0] : 0.0;
      co->cond = 1;
      co->a1 = sqrt(2.0 * model->fs->exact_beta[0] * S0);
      s2 -= model->lambda[j0] * model->lambda[j0] * S0;
    }
    if (s1 > 0.0 && isfinite(s2 / s1)) {
      co->lbar = s2 / s1;
      co->lbar_s1 = s1;
    }
  }
  int status = coef_at(model, t, model_risk(model, S), derivs, co, err);
  if (status == 0 && model->fs != NULL) {
    exact_eval(model, S, co);
  }
  return status;
}

/* Multiplies the right-hand side (and so its Jacobian) by `factor`: the whole
 * system is linear in A, B, C and their derivatives. Used for dt/dtau. */
static void coef_scale(ode_coef *co, double factor) {
  co->A *= factor;
  co->B *= factor;
  co->C *= factor;
  co->dA *= factor;
  co->fs.dA_lbar *= factor;
  co->fs.dB_lbar *= factor;
  for (int e = 0; e < DPD_FS_MAXEXACT; e++) {
    co->exA[e] *= factor;
    co->exB[e] *= factor;
    co->exdA[e] *= factor;
    co->exdB[e] *= factor;
    co->exAs[e] *= factor;
    co->exBs[e] *= factor;
    co->exAq[e] *= factor;
    co->exBq[e] *= factor;
  }
  co->fs.aA0 *= factor;
  co->fs.aA1 *= factor;
  co->fs.aB0 *= factor;
  co->fs.aB1 *= factor;
  co->dB *= factor;
  co->tscale *= factor;
  co->fs.A0 *= factor;
  co->fs.A1 *= factor;
  co->fs.B0 *= factor;
  co->fs.B1 *= factor;
  co->fs.dA0 *= factor;
  co->fs.dA1 *= factor;
  co->fs.dB0 *= factor;
  co->fs.dB1 *= factor;
  for (int k = 0; k < DPD_FS_MAXTILT; k++) {
    co->fs.At[k] *= factor;
    co->fs.Bt[k] *= factor;
    co->fs.dAt[k] *= factor;
    co->fs.dBt[k] *= factor;
    co->fs.aAt[k] *= factor;
    co->fs.aBt[k] *= factor;
  }
}

/* Returns 0, or 1 when some derivative is not finite (the state is about to
 * overflow). The check is an integer OR, which the compiler vectorises with
 * the loop (a floating-point running sum would serialise it). */
static int model_rhs_apply(const ode_model *model, const ode_coef *co, const double *S,
                           double *dSdt) {
  const double *lambda = model->lambda, *mult = model->mult;
  double A = co->A, B = co->B, C = co->C;
  int bad = 0;
  if (model->fs != NULL) {
    for (size_t j = 0; j < model->m; j++) {
      double Aj, Bj, dAj, dBj, rho, rho_A, f;
      fs_group(model, co, j, &Aj, &Bj, &dAj, &dBj, &rho, &rho_A, S[j], NULL);
      f = rho * (lambda[j] * (Aj * S[j] + mult[j] * Bj) + mult[j] * C);
      dSdt[j] = f;
      bad |= !(fabs(f) <= DBL_MAX);
    }
    return bad ? 1 : 0;
  }
  for (size_t j = 0; j < model->m; j++) {
    double f = lambda[j] * (A * S[j] + mult[j] * B) + mult[j] * C;
    dSdt[j] = f;
    bad |= !(fabs(f) <= DBL_MAX);
  }
  return bad ? 1 : 0;
}

/* CVODE's callback contract: 0 ok, 1 recoverable (P not finite or, for a non-Gaussian law,
 * R < 0: retry smaller h), < 0 fatal (a failed quadrature, reason in *err). */
static int model_rhs(const ode_model *model, double t, const double *S, double *dSdt,
                     dpd_err *err) {
  ode_coef co;
  int status = coef_eval(model, t, S, 0, &co, err);
  if (status != 0) {
    return status;
  }
  if (!isfinite(co.P)) {
    return 1;
  }
  return model_rhs_apply(model, &co, S, dSdt);
}

/* ---- Integration variable ------------------------------------------------------------------
 * Schedules that vanish like sqrt(1 - t) at the end (eta~(1) = 0 with
 * d/dt eta~^2 != 0 there: the constant-noise schedule, docs/math.md §1.8) make the
 * right-hand side non-smooth at t = 1 (eta~' -> -inf); the BDF error
 * estimates assume smoothness, and the global error at t = 1 grew to ~100 rtol
 * for 10^4 power-law groups. For those schedules CVODE integrates in tau in
 * [0, 1] with t = 1 - (1 - tau)^4, dt/dtau = 4 (1 - tau)^3, in which
 * sqrt(1 - t) = (1 - tau)^2 is a polynomial. The fourth power (the square
 * already makes the system smooth) also concentrates the steps towards t = 1,
 * where the modes of a wide spectrum stop being stiff one after the other:
 * measured on power-law spectra with 10^4 and 10^5 groups, it cut the error at
 * t = 1 from 150-230 rtol (tau = t) to 4-23 rtol, for 5% more steps than
 * tau = t. Other schedules keep tau = t (the map would cost steps for
 * nothing). */
typedef struct {
  int on; /* 1: t = 1 - (1 - tau)^4; 0: t = tau */
} time_map;

static time_map time_map_choose(const dpd_schedule *schedule) {
  time_map map;
  map.on = dpd_schedule_eval(schedule, 1.0) == 0.0 && dpd_schedule_dsq_eval(schedule, 1.0) != 0.0;
  return map;
}

/* 1 - u^4 = (1 - u^2)(1 + u^2) with 1 - u^2 = tau (2 - tau): no cancellation. */
static double time_of_tau(time_map map, double tau) {
  double u = 1.0 - tau;
  return map.on ? tau * (2.0 - tau) * (1.0 + u * u) : tau;
}

static double dt_dtau(time_map map, double tau) {
  double u = 1.0 - tau;
  return map.on ? 4.0 * u * u * u : 1.0;
}

/* tau(t) = 1 - (1 - t)^{1/4}, written without cancellation for small t. */
static double tau_of_time(time_map map, double t) {
  return map.on ? -expm1(0.25 * log1p(-t)) : t;
}

/* Coefficients of the tau-system dS/dtau = (dt/dtau) f(t(tau), S). Returns coef_eval's
 * status. */
static int coef_eval_tau(const ode_model *model, time_map map, double tau, const double *S,
                         int derivs, ode_coef *co, dpd_err *err) {
  int status = coef_eval(model, time_of_tau(map, tau), S, derivs, co, err);
  if (status == 0 && map.on) {
    coef_scale(co, dt_dtau(map, tau));
  }
  return status;
}

/* d f_j / dP of the corrected group equation f_j = rho_j (lambda_j (A_j S_j + m_j B_j) + m_j C):
 * the rank-one column of its Jacobian (times b^T = lambda^T/d). */
static double fs_dfdP(const ode_model *model, const ode_coef *co, size_t j, double Sj, double Aj,
                      double Bj, double dAj, double dBj, double rho, double drho) {
  const double lj = model->lambda[j], mj = model->mult[j];
  return rho * lj * (dAj * Sj + mj * dBj) + drho * (lj * (Aj * Sj + mj * Bj) + mj * co->C);
}

/* d f_j / d lbar: lbar (the residual's mean eigenvalue, coef_eval) enters every A_j and B_j
 * through the rank-one terms, linearly (dA_lbar, dB_lbar, common to all groups), and rho_j
 * through A_j (rho_A = d rho_j / d A_j, from fs_group). With
 * d lbar / d S_k = lambda_k (lambda_k - lbar) / sum lambda S it is the second rank-one term of the
 * Jacobian. Without it the Newton matrix missed the top group's strongest self-coupling (lbar is
 * mostly that group's share), and CVODE stalled (CV_TOO_MUCH_WORK) on steep spectra at large
 * steps. */
static double fs_dfdL(const ode_model *model, const ode_coef *co, size_t j, double Sj, double Aj,
                      double Bj, double rho, double rho_A) {
  const double lj = model->lambda[j], mj = model->mult[j], dAL = co->fs.dA_lbar;
  const double drhoL = rho_A * dAL;
  return rho * lj * (dAL * Sj + mj * co->fs.dB_lbar) +
         drhoL * (lj * (Aj * Sj + mj * Bj) + mj * co->C);
}

/* u_k = d lbar / d S_k = lambda_k (lambda_k - lbar) / sum lambda S (0 when lbar is held at 0;
 * conditioning: -lambda_k lbar / sum lambda S for direction 0, whose share lbar leaves out). The
 * dependence of every group on direction 0's S through a1 is the column of fs_cols. */
static double fs_dLdS(const ode_model *model, const ode_coef *co, size_t k) {
  const double lk2 =
      co->cond && k == model->fs->exact_group[0] ? 0.0 : model->lambda[k] * model->lambda[k];
  return co->lbar_s1 > 0.0 ? (lk2 - model->lambda[k] * co->lbar) / co->lbar_s1 : 0.0;
}

/* Conditioning (docs/finite_size.md §2): every group but exact direction 0 depends on S_0
 * (direction 0's S) through a1 = sqrt(2 beta_0 S_0), and exact direction 0 on exact direction 1's
 * S through its joint integral: two more rank-one terms of the Jacobian, a column each with a unit
 * row. fs_col_S0 gives group j's d A_j / d S_0, d B_j / d S_0 (0: none). */
static int fs_col_S0(const ode_model *model, const ode_coef *co, size_t j, double *aA, double *aB) {
  const dpd__fs_law *law = model->fs;
  const int k = law->tilt_of[j];
  const int e = k >= 0 ? law->exact_of_tilt[k] : -1;
  double da;
  if (!co->cond || !(co->a1 > 0.0)) {
    return 0;
  }
  if (e >= 0 && co->ex_on[e]) {
    if (e == 0) {
      return 0;
    }
    *aA = co->exAq[e];
    *aB = co->exBq[e];
    return 1;
  }
  da = law->exact_beta[0] / co->a1;
  if (k >= 0) {
    *aA = co->fs.aAt[k] * da;
    *aB = co->fs.aBt[k] * da;
  } else {
    const double beta = model->lambda[j] * model->inv_d;
    *aA = (co->fs.aA0 + beta * co->fs.aA1) * da;
    *aB = (co->fs.aB0 + beta * co->fs.aB1) * da;
  }
  return 1;
}

/* The two extra columns at row j: c3 (times v[S_0]) and c4 (exact direction 0's row, times
 * v[S of exact direction 1]). */
static void fs_cols(const ode_model *model, const ode_coef *co, size_t j, double Sj, double Aj,
                    double Bj, double rho, double rho_A, double *c3, double *c4) {
  const dpd__fs_law *law = model->fs;
  double aA, aB;
  *c3 = *c4 = 0.0;
  if (fs_col_S0(model, co, j, &aA, &aB)) {
    *c3 = fs_dfdP(model, co, j, Sj, Aj, Bj, aA, aB, rho, rho_A * aA);
  }
  if (co->cond && law->nexact > 1 && co->ex_on[0] && j == law->exact_group[0]) {
    *c4 = fs_dfdP(model, co, j, Sj, Aj, Bj, co->exAq[0], co->exBq[0], rho, rho_A * co->exAq[0]);
  }
}

static void model_jtimes(const ode_model *model, const ode_coef *co, const double *S,
                         const double *v, double *Jv) {
  double w = model_risk(model, v); /* b^T v */
  if (model->fs != NULL) {
    double wl = 0.0; /* u^T v: the change of lbar */
    for (size_t k = 0; k < model->m; k++) {
      wl += fs_dLdS(model, co, k) * v[k];
    }
    for (size_t j = 0; j < model->m; j++) {
      double Aj, Bj, dAj, dBj, rho, rho_A, dg;
      fs_group(model, co, j, &Aj, &Bj, &dAj, &dBj, &rho, &rho_A, S[j], &dg);
      double c3, c4;
      fs_cols(model, co, j, S[j], Aj, Bj, rho, rho_A, &c3, &c4);
      Jv[j] = dg * v[j] + fs_dfdP(model, co, j, S[j], Aj, Bj, dAj, dBj, rho, rho_A * dAj) * w +
              fs_dfdL(model, co, j, S[j], Aj, Bj, rho, rho_A) * wl;
      if (co->cond) {
        const dpd__fs_law *law = model->fs;
        Jv[j] +=
            c3 * v[law->exact_group[0]] + (law->nexact > 1 ? c4 * v[law->exact_group[1]] : 0.0);
      }
    }
    return;
  }
  for (size_t j = 0; j < model->m; j++) {
    double aj = co->dA * S[j] + model->mult[j] * co->dB;
    Jv[j] = model->lambda[j] * (co->A * v[j] + aj * w);
  }
}

/* z = (I - gamma_cv diag(lambda_j A))^{-1} r; A <= 0, so each divisor is >= 1. */
static void model_psolve(const ode_model *model, const ode_coef *co, double gamma_cv,
                         const double *r, double *z) {
  double ga = gamma_cv * co->A;
  if (model->fs != NULL) {
    for (size_t j = 0; j < model->m; j++) {
      double Aj, Bj, dAj, dBj, rho, rho_A; /* the diagonal without an exact direction's own
                                              S_j-dependence: a preconditioner */
      fs_group(model, co, j, &Aj, &Bj, &dAj, &dBj, &rho, &rho_A, 0.0, NULL);
      z[j] = r[j] / (1.0 - gamma_cv * rho * Aj * model->lambda[j]);
    }
    return;
  }
  for (size_t j = 0; j < model->m; j++) {
    z[j] = r[j] / (1.0 - ga * model->lambda[j]);
  }
}

/* Exact Newton solve x = (I - gamma_cv J)^{-1} r by Sherman-Morrison
 * (Golub & Van Loan, Matrix Computations, 4th ed., eq. 2.1.4): with
 * E = I - gamma_cv diag(lambda_j A) and J = diag(lambda_j A) + a b^T,
 *   x = E^{-1} r + gamma_cv E^{-1} a (b^T E^{-1} r) / (1 - gamma_cv b^T E^{-1} a).
 * Two passes, O(m); ea[m] is workspace for E^{-1} a. A <= 0, so every
 * diagonal entry of E is >= 1. Returns 0, or 1 when the Newton matrix is
 * singular (a non-finite update: CVODE retries with a smaller step). */
static int model_sm_solve(const ode_model *model, const ode_coef *co, double gamma_cv,
                          const double *S, const double *r, double *x, double *ea, double *ee) {
  const double *lambda = model->lambda, *mult = model->mult;
  double ga = gamma_cv * co->A, dA = co->dA, dB = co->dB, br = 0.0, ba = 0.0, coef;
  size_t m = model->m;
  if (model->fs != NULL && co->cond) {
    /* rank four (Woodbury): J = diag + a b^T + e u^T + c3 e_{S_0}^T + c4 e_{S_1}^T (fs_cols);
     * the 4 x 4 capacitance matrix K = I - gamma_cv V^T E^{-1} U, V = [b u e_{S_0} e_{S_1}],
     * U = [a e c3 c4], solved by LAPACK (dgesv) */
    const dpd__fs_law *law = model->fs;
    const size_t j0 = law->exact_group[0], j1 = law->nexact > 1 ? law->exact_group[1] : m;
    double *col[4] = {ea, ee, ea + 2 * m, ea + 3 * m};
    double K[16], c[4], vx[4] = {0, 0, 0, 0};
    lapack_int ipiv[4];
    memset(K, 0, sizeof K);
    for (size_t j = 0; j < m; j++) {
      double Aj, Bj, dAj, dBj, rho, rho_A, dg, inv_e, c3, c4;
      fs_group(model, co, j, &Aj, &Bj, &dAj, &dBj, &rho, &rho_A, S[j], &dg);
      fs_cols(model, co, j, S[j], Aj, Bj, rho, rho_A, &c3, &c4);
      inv_e = 1.0 / (1.0 - gamma_cv * dg);
      x[j] = r[j] * inv_e;
      col[0][j] = fs_dfdP(model, co, j, S[j], Aj, Bj, dAj, dBj, rho, rho_A * dAj) * inv_e;
      col[1][j] = fs_dfdL(model, co, j, S[j], Aj, Bj, rho, rho_A) * inv_e;
      col[2][j] = c3 * inv_e;
      col[3][j] = c4 * inv_e;
    }
    /* V^T y for y = x and the four columns, in one pass (each sum in the order of j) */
    {
      const double *ys[5] = {x, col[0], col[1], col[2], col[3]};
      double bt[5] = {0, 0, 0, 0, 0}, ut[5] = {0, 0, 0, 0, 0};
      for (size_t j = 0; j < m; j++) {
        const double lj = lambda[j], uj = fs_dLdS(model, co, j);
        for (int q = 0; q < 5; q++) {
          bt[q] += lj * ys[q][j];
          ut[q] += uj * ys[q][j];
        }
      }
      for (int q = 0; q < 5; q++) {
        const double vy[4] = {bt[q] * model->inv_d, ut[q], ys[q][j0], j1 < m ? ys[q][j1] : 0.0};
        for (int p = 0; p < 4; p++) {
          if (q == 0) {
            vx[p] = vy[p];
          } else {
            K[4 * p + q - 1] = (p == q - 1 ? 1.0 : 0.0) - gamma_cv * vy[p];
          }
        }
      }
    }
    for (int p = 0; p < 4; p++) {
      c[p] = gamma_cv * vx[p];
    }
    if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, 4, 1, K, 4, ipiv, c, 1) != 0 || !isfinite(c[0]) ||
        !isfinite(c[1]) || !isfinite(c[2]) || !isfinite(c[3])) {
      return 1;
    }
    for (size_t j = 0; j < m; j++) {
      x[j] += c[0] * col[0][j] + c[1] * col[1][j] + c[2] * col[2][j] + c[3] * col[3][j];
    }
    return 0;
  }
  if (model->fs != NULL) {
    /* rank two (Woodbury): J = diag + a b^T + e u^T (fs_dfdP, fs_dfdL, fs_dLdS); the 2 x 2
     * capacitance matrix K = I - gamma_cv [b u]^T E^{-1} [a e] */
    double ur = 0.0, ue = 0.0, ua = 0.0, be = 0.0, k11, k12, k21, k22, det, c1, c2;
    for (size_t j = 0; j < m; j++) {
      double Aj, Bj, dAj, dBj, rho, rho_A, dg, inv_e, lj = lambda[j], uj = fs_dLdS(model, co, j);
      fs_group(model, co, j, &Aj, &Bj, &dAj, &dBj, &rho, &rho_A, S[j], &dg);
      inv_e = 1.0 / (1.0 - gamma_cv * dg);
      x[j] = r[j] * inv_e;
      ea[j] = fs_dfdP(model, co, j, S[j], Aj, Bj, dAj, dBj, rho, rho_A * dAj) * inv_e;
      ee[j] = fs_dfdL(model, co, j, S[j], Aj, Bj, rho, rho_A) * inv_e;
      br += lj * x[j];
      ba += lj * ea[j];
      be += lj * ee[j];
      ur += uj * x[j];
      ua += uj * ea[j];
      ue += uj * ee[j];
    }
    br *= model->inv_d;
    ba *= model->inv_d;
    be *= model->inv_d;
    k11 = 1.0 - gamma_cv * ba;
    k12 = -gamma_cv * be;
    k21 = -gamma_cv * ua;
    k22 = 1.0 - gamma_cv * ue;
    det = k11 * k22 - k12 * k21;
    c1 = gamma_cv * (k22 * br - k12 * ur) / det;
    c2 = gamma_cv * (k11 * ur - k21 * br) / det;
    if (!isfinite(c1) || !isfinite(c2)) {
      return 1;
    }
    for (size_t j = 0; j < m; j++) {
      x[j] += c1 * ea[j] + c2 * ee[j];
    }
    return 0;
  }
  for (size_t j = 0; j < m; j++) {
    double inv_e = 1.0 / (1.0 - ga * lambda[j]);
    double lj = lambda[j];
    x[j] = r[j] * inv_e;
    ea[j] = lj * (dA * S[j] + mult[j] * dB) * inv_e;
    br += lj * x[j];
    ba += lj * ea[j];
  }
  br *= model->inv_d;
  ba *= model->inv_d;
  coef = gamma_cv * br / (1.0 - gamma_cv * ba);
  if (!isfinite(coef)) {
    return 1;
  }
  for (size_t j = 0; j < m; j++) {
    x[j] += coef * ea[j];
  }
  return 0;
}

/* The two bounds y = (upper, lower) and the diagonal of their Jacobian (jac may be NULL).
 * Returns 0, 1 (recoverable: a bound not finite, or negative with a non-Gaussian law) or the
 * negative status of a failed quadrature (reason in *err). */
static int model_bounds_rhs(const ode_model *model, double lambda_min, double lambda_max, double t,
                            const double y[2], double dydt[2], double jac[2], dpd_err *err) {
  const double descent[2] = {lambda_min, lambda_max};
  const double noise[2] = {lambda_max, 1.0};
  double eta = dpd_schedule_eval(model->schedule, t);
  double C = noise_term(model, t);
  for (size_t k = 0; k < 2; k++) {
    double P = y[k] + model->half_zeta2, mu, nu, dmu, dnu;
    if (!isfinite(P)) {
      return 1;
    }
    if (model->gaussian_noise && model->factors == NULL) {
      dpd_clip_factors_eval(model->c, P, &mu, &nu, &dmu, &dnu);
    } else if (!factors_frozen(model)) {
      ode_coef co;
      int status = coef_factors_law(model, y[k], jac != NULL, &co, err);
      if (status != 0) {
        return status;
      }
      mu = co.mu;
      nu = co.nu;
      dmu = co.dmu;
      dnu = co.dnu;
    }
    factors_freeze(model, &mu, &nu, &dmu, &dnu);
    dydt[k] =
        -2.0 * descent[k] * eta * mu * y[k] + noise[k] * model->gamma * eta * eta * nu * P + C;
    if (jac != NULL) {
      jac[k] = -2.0 * descent[k] * eta * (dmu * y[k] + mu) +
               noise[k] * model->gamma * eta * eta * (dnu * P + nu);
    }
  }
  return 0;
}

/* ---- Public pure evaluations --------------------------------------------------------------- */

double dpd_linreg_m2(const dpd_linreg_problem *problem) {
  return problem == NULL ? NAN : dpd__fs_m2(problem);
}

int dpd_ode_finite_size_applies(const dpd_linreg_problem *problem, const dpd_ode_config *cfg) {
  if (problem == NULL || cfg == NULL || cfg->finite_size == DPD_FINITE_OFF) {
    return 0;
  }
  if (cfg->finite_size == DPD_FINITE_ON) {
    return 1;
  }
  return cfg->finite_size == DPD_FINITE_AUTO && cfg->method != DPD_ODE_VOLTERRA &&
         cfg->factors == NULL && isnan(cfg->mu_frozen) && isnan(cfg->nu_frozen) &&
         dpd_linreg_finite_size_matters(problem);
}

int dpd_linreg_finite_size_matters(const dpd_linreg_problem *problem) {
  return problem != NULL && sqrt(dpd__fs_m2(problem)) > DPD_FINITE_AUTO_THRESHOLD &&
         problem->lambda_max / (double)problem->d > DPD_FINITE_AUTO_LMAX;
}

int dpd__ode_rhs_eval(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                      const dpd_ode_config *cfg, double t, const double *S, double *dSdt) {
  ode_model model;
  int status;
  model_init(&model, problem, schedule, cfg);
  if (dpd_ode_finite_size_applies(problem, cfg)) {
    const dpd__fs_law *law = NULL;
    if ((status = dpd__fs_law_get(problem, &law, NULL)) < 0) {
      return status;
    }
    model.fs = law;
    status = model_rhs(&model, t, S, dSdt, NULL);
    dpd__fs_law_release(law);
    return status;
  }
  return model_rhs(&model, t, S, dSdt, NULL);
}

int dpd__ode_jtimes_eval(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                         const dpd_ode_config *cfg, double t, const double *S, const double *v,
                         double *Jv) {
  ode_model model;
  ode_coef co;
  int status;
  const dpd__fs_law *law = NULL;
  model_init(&model, problem, schedule, cfg);
  if (dpd_ode_finite_size_applies(problem, cfg)) {
    if ((status = dpd__fs_law_get(problem, &law, NULL)) < 0) {
      return status;
    }
    model.fs = law;
  }
  status = coef_eval(&model, t, S, 1, &co, NULL);
  if (status == 0 && !isfinite(co.P)) {
    status = 1;
  }
  if (status == 0) {
    model_jtimes(&model, &co, S, v, Jv);
  }
  dpd__fs_law_release(law);
  return status;
}

/* ---- CVODE shell --------------------------------------------------------------------------- */

/* What the CVODE callbacks share (user_data). */
typedef struct {
  ode_model model;
  time_map map; /* CVODE's time variable tau -> t */
  double lambda_min, lambda_max;
  void *cvode_mem;  /* the main solver (read by the Sherman-Morrison solver) */
  double *sm_ea;    /* [4m] Sherman-Morrison (Woodbury) workspace (owned by ode_run) */
  ode_coef jt;      /* coefficients at the latest Jacobian-times setup */
  int nonfinite;    /* a right-hand side met a non-finite risk */
  int outside;      /* a right-hand side met R < 0 (non-Gaussian laws: outside the domain) */
  int fatal_status; /* < 0: a clipping-factor quadrature failed, reason in `fatal` */
  dpd_err fatal;
  char msg[256];        /* the last error CVODE reported (its own printing is off) */
  double rtol;          /* the main solve's relative tolerance (cv_ewt) */
  const double *abstol; /* [m] its absolute tolerances (owned by ode_run) */
} ode_work;

/* Records why a callback asked CVODE to retry with a smaller step (for the message if it
 * gives up): a negative risk (status 1 from a non-Gaussian law) or a non-finite one. */
static void note_retry(ode_work *w, int status, double R) {
  if (status > 0 && R < 0.0) {
    w->outside = 1;
  } else {
    w->nonfinite = 1;
  }
}

/* Records a fatal status of a callback (a failed quadrature) and returns CVODE's fatal code. */
static int note_fatal(ode_work *w, int status) {
  w->fatal_status = status;
  return -1;
}

/* Everything solve() allocates, released by run_free() on every path. */
typedef struct {
  ode_work work;
  SUNContext ctx;
  N_Vector y, abstol, by;
  void *mem, *bmem;
  int bounds_lost; /* the bounds' solver failed or overflowed: no bounds from then on */
  SUNLinearSolver ls, bls;
  SUNNonlinearSolver nls;
  SUNMatrix bmat;
  dpd__ode_fuse *fuse;       /* the deferred vector operations of y and its clones (freed last) */
  const dpd__fs_law *fs_law; /* the finite-size law, shared (NULL: correction off) */
} ode_run;

static void run_free(ode_run *run) {
  free(run->work.sm_ea);
  if (run->mem != NULL) {
    CVodeFree(&run->mem);
  }
  if (run->bmem != NULL) {
    CVodeFree(&run->bmem);
  }
  if (run->ls != NULL) {
    SUNLinSolFree(run->ls);
  }
  if (run->bls != NULL) {
    SUNLinSolFree(run->bls);
  }
  if (run->nls != NULL) {
    SUNNonlinSolFree(run->nls);
  }
  if (run->bmat != NULL) {
    SUNMatDestroy(run->bmat);
  }
  if (run->y != NULL) {
    N_VDestroy(run->y);
  }
  if (run->abstol != NULL) {
    N_VDestroy(run->abstol);
  }
  if (run->by != NULL) {
    N_VDestroy(run->by);
  }
  if (run->ctx != NULL) {
    SUNContext_Free(&run->ctx);
  }
  dpd__ode_fuse_free(run->fuse);
  dpd__fs_law_release(run->fs_law);
}

static void cv_err_handler(int error_code, const char *module, const char *function, char *msg,
                           void *user_data) {
  ode_work *w = user_data;
  (void)module;
  if (error_code < 0) {
    snprintf(w->msg, sizeof w->msg, "%s: %s", function, msg);
  }
}

/* CVODE's time variable is tau (see time_of_tau). */
/* CVODE's error weights (CVodeWFtolerances): the usual 1 / (rtol |y_j| + atol_j), scaled by
 * sqrt(m / m_eff), m_eff = (sum_j c_j)^2 / sum_j c_j^2 with c_j = lambda_j |y_j| the groups'
 * shares of the risk. CVODE's weighted RMS norm averages the local error over the m groups; when
 * a few of them carry the risk their error is diluted by about sqrt(m / m_eff) (measured: a
 * global error of 1.4e-7 at rtol 1e-10 with 10^5 groups). With the scaling the local error test
 * bounds the relative local error of R itself (Cauchy-Schwarz), for any number of groups. */
static int cv_ewt(N_Vector y, N_Vector ewt, void *user_data) {
  const ode_work *w = user_data;
  const double *Y = N_VGetArrayPointer(y), *lambda = w->model.lambda;
  double *E = N_VGetArrayPointer(ewt), s1 = 0.0, s2 = 0.0, f = 1.0;
  const size_t m = w->model.m;
  for (size_t j = 0; j < m; j++) {
    const double c = lambda[j] * fabs(Y[j]);
    s1 += c;
    s2 += c * c;
  }
  if (s1 > 0.0 && isfinite(s1) && isfinite(s2)) {
    f = sqrt((double)m * s2) / s1; /* in [1, sqrt(m)] */
  }
  for (size_t j = 0; j < m; j++) {
    const double den = w->rtol * fabs(Y[j]) + w->abstol[j];
    if (!(den > 0.0)) {
      return -1;
    }
    E[j] = f / den;
  }
  return 0;
}

static int cv_rhs(sunrealtype tau, N_Vector y, N_Vector ydot, void *user_data) {
  ode_work *w = user_data;
  const double *S = N_VGetArrayPointer(y);
  ode_coef co;
  int status = coef_eval_tau(&w->model, w->map, tau, S, 0, &co, &w->fatal);
  if (status < 0) {
    return note_fatal(w, status);
  }
  if (status > 0 || !isfinite(co.P) ||
      model_rhs_apply(&w->model, &co, S, N_VGetArrayPointer(ydot)) != 0) {
    note_retry(w, status, co.R);
    return 1;
  }
  return 0;
}

/* Called by CVODE before every linear solve, at the current Newton iterate. */
static int cv_jtsetup(sunrealtype tau, N_Vector y, N_Vector fy, void *user_data) {
  ode_work *w = user_data;
  int status;
  (void)fy;
  status = coef_eval_tau(&w->model, w->map, tau, N_VGetArrayPointer(y), 1, &w->jt, &w->fatal);
  if (status < 0) {
    return note_fatal(w, status);
  }
  if (status > 0 || !isfinite(w->jt.P)) {
    note_retry(w, status, w->jt.R);
    return 1;
  }
  return 0;
}

static int cv_jtimes(N_Vector v, N_Vector Jv, sunrealtype t, N_Vector y, N_Vector fy,
                     void *user_data, N_Vector tmp) {
  ode_work *w = user_data;
  (void)t;
  (void)fy;
  (void)tmp;
  model_jtimes(&w->model, &w->jt, N_VGetArrayPointer(y), N_VGetArrayPointer(v),
               N_VGetArrayPointer(Jv));
  return 0;
}

static int cv_psolve(sunrealtype t, N_Vector y, N_Vector fy, N_Vector r, N_Vector z,
                     sunrealtype gamma_cv, sunrealtype delta, int lr, void *user_data) {
  ode_work *w = user_data;
  (void)t;
  (void)y;
  (void)fy;
  (void)delta;
  (void)lr;
  model_psolve(&w->model, &w->jt, gamma_cv, N_VGetArrayPointer(r), N_VGetArrayPointer(z));
  return 0;
}

/* The Sherman-Morrison solver as a SUNDIALS matrix-embedded linear solver:
 * CVODE hands it only the right-hand side; gamma_cv and the current Newton
 * iterate come from the integrator (CVodeGetCurrentGamma/State), so each
 * solve is exact with the Jacobian at the current iterate. The content is
 * the borrowed ode_work. */
static SUNLinearSolver_Type sm_gettype(SUNLinearSolver ls) {
  (void)ls;
  return SUNLINEARSOLVER_MATRIX_EMBEDDED;
}

static int sm_noop_setup(SUNLinearSolver ls, SUNMatrix A) {
  (void)ls;
  (void)A;
  return SUNLS_SUCCESS;
}

/* Accepting the scaling vectors (and ignoring them: the solve is exact)
 * spares CVODE the norm of the weights it would otherwise compute per solve. */
static int sm_set_scaling(SUNLinearSolver ls, N_Vector s1, N_Vector s2) {
  (void)ls;
  (void)s1;
  (void)s2;
  return SUNLS_SUCCESS;
}

static int sm_solve(SUNLinearSolver ls, SUNMatrix A, N_Vector x, N_Vector b, sunrealtype tol) {
  ode_work *w = ls->content;
  N_Vector ycur = NULL;
  sunrealtype gamma_cv = 0.0, tau = 0.0;
  const double *y;
  int status;
  (void)A;
  (void)tol;
  if (CVodeGetCurrentGamma(w->cvode_mem, &gamma_cv) < 0 ||
      CVodeGetCurrentTime(w->cvode_mem, &tau) < 0 ||
      CVodeGetCurrentState(w->cvode_mem, &ycur) < 0) {
    return SUNLS_MEM_NULL;
  }
  y = N_VGetArrayPointer(ycur);
  status = coef_eval_tau(&w->model, w->map, tau, y, 1, &w->jt, &w->fatal);
  if (status < 0) {
    note_fatal(w, status);
    return SUNLS_PACKAGE_FAIL_UNREC;
  }
  if (status > 0 || !isfinite(w->jt.P)) {
    note_retry(w, status, w->jt.R);
    return SUNLS_PACKAGE_FAIL_REC;
  }
  if (model_sm_solve(&w->model, &w->jt, gamma_cv, y, N_VGetArrayPointer(b), N_VGetArrayPointer(x),
                     w->sm_ea, w->sm_ea + w->model.m) != 0) {
    return SUNLS_PACKAGE_FAIL_REC;
  }
  return SUNLS_SUCCESS;
}

static int sm_free(SUNLinearSolver ls) {
  if (ls != NULL) {
    ls->content = NULL; /* borrowed */
    SUNLinSolFreeEmpty(ls);
  }
  return SUNLS_SUCCESS;
}

static int cv_bounds_rhs(sunrealtype tau, N_Vector y, N_Vector ydot, void *user_data) {
  ode_work *w = user_data;
  double *dydt = N_VGetArrayPointer(ydot), factor = dt_dtau(w->map, tau);
  const double *yv = N_VGetArrayPointer(y);
  int status = model_bounds_rhs(&w->model, w->lambda_min, w->lambda_max, time_of_tau(w->map, tau),
                                yv, dydt, NULL, &w->fatal);
  if (status < 0) {
    return note_fatal(w, status);
  }
  if (status != 0) {
    note_retry(w, status, fmin(yv[0], yv[1]));
    return status;
  }
  dydt[0] *= factor;
  dydt[1] *= factor;
  return 0;
}

static int cv_bounds_jac(sunrealtype tau, N_Vector y, N_Vector fy, SUNMatrix J, void *user_data,
                         N_Vector tmp1, N_Vector tmp2, N_Vector tmp3) {
  ode_work *w = user_data;
  double dydt[2], jac[2], factor = dt_dtau(w->map, tau);
  int status;
  (void)fy;
  (void)tmp1;
  (void)tmp2;
  (void)tmp3;
  const double *yv = N_VGetArrayPointer(y);
  status = model_bounds_rhs(&w->model, w->lambda_min, w->lambda_max, time_of_tau(w->map, tau), yv,
                            dydt, jac, &w->fatal);
  if (status < 0) {
    return note_fatal(w, status);
  }
  if (status != 0) {
    note_retry(w, status, fmin(yv[0], yv[1]));
    return status;
  }
  SUNMatZero(J);
  SM_ELEMENT_D(J, 0, 0) = factor * jac[0];
  SM_ELEMENT_D(J, 1, 1) = factor * jac[1];
  return 0;
}

/* Turns a failed CVODE call into DPD_ESOLVER (or DPD_ENONFINITE when the
 * right-hand side met a non-finite state, or the status of a failed
 * clipping-factor quadrature with its reason) with CVODE's flag name and the
 * time t (and tau when mapped: CVODE's own message quotes its variable tau). */
static int cv_fail(const ode_run *run, int flag, const char *what, double tau, dpd_err *err) {
  char *name = CVodeGetReturnFlagName(flag);
  const char *flag_name = name != NULL ? name : "unknown flag";
  char when[96];
  int status;
  if (run->work.map.on) {
    snprintf(when, sizeof when, "t = %.17g (tau = %.17g)", time_of_tau(run->work.map, tau), tau);
  } else {
    snprintf(when, sizeof when, "t = %.17g", tau);
  }
  if (run->work.fatal_status < 0) {
    status = DPD_FAIL(err, run->work.fatal_status, "%s near %s: %s (%s)", what, when,
                      run->work.fatal.reason, flag_name);
  } else if (run->work.nonfinite) {
    status = DPD_FAIL(err, DPD_ENONFINITE, "%s: the risk became non-finite near %s (%s)", what,
                      when, flag_name);
  } else if (run->work.outside && run->work.model.factors != NULL) {
    status = DPD_FAIL(err, DPD_ESOLVER,
                      "%s: the risk became negative near %s (%s); the caller's clipping factors "
                      "('factors') are defined for R >= 0",
                      what, when, flag_name);
  } else if (run->work.outside) {
    status = DPD_FAIL(err, DPD_ESOLVER,
                      "%s: the risk became negative near %s (%s); the clipping factors of the "
                      "%s law are defined for R >= 0",
                      what, when, flag_name, dpd_noise_law_name(run->work.model.noise.law));
  } else {
    status = DPD_FAIL(err, DPD_ESOLVER, "%s failed at %s: %s%s%s", what, when, flag_name,
                      run->work.msg[0] ? ": " : "", run->work.msg);
  }
  free(name);
  return status;
}

/* A failed set-up call (before any time stepping). */
static int cv_setup_fail(const ode_run *run, int flag, const char *what, dpd_err *err) {
  char *name = CVodeGetReturnFlagName(flag);
  int status =
      DPD_FAIL(err, DPD_ESOLVER, "%s failed: %s%s%s", what, name != NULL ? name : "unknown flag",
               run->work.msg[0] ? ": " : "", run->work.msg);
  free(name);
  return status;
}

#define CV_TRY(call, what)                                                                         \
  do {                                                                                             \
    int cv_flag_ = (call);                                                                         \
    if (cv_flag_ < 0) {                                                                            \
      return cv_setup_fail(run, cv_flag_, (what), err);                                            \
    }                                                                                              \
  } while (0)

static int setup_main(ode_run *run, const dpd_linreg_problem *problem, const dpd_ode_config *cfg,
                      dpd_err *err) {
  size_t m = problem->ngroups;
  double *y, *abstol;
  run->fuse = dpd__ode_fuse_new(m);
  run->y = N_VNew_Serial((sunindextype)m, run->ctx);
  run->abstol = N_VNew_Serial((sunindextype)m, run->ctx);
  if (run->fuse == NULL || run->y == NULL || run->abstol == NULL ||
      dpd__ode_nvector_speedup(run->y, run->fuse) != 0 ||
      dpd__ode_nvector_speedup(run->abstol, run->fuse) != 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for %zu ODE groups", m);
  }
  y = N_VGetArrayPointer(run->y);
  abstol = N_VGetArrayPointer(run->abstol);
  for (size_t j = 0; j < m; j++) {
    y[j] = problem->group_S0[j];
    const double share =
        problem->group_tol != NULL ? problem->group_tol[j] : problem->group_mult[j];
    abstol[j] = cfg->atol * share / problem->group_lambda[j];
  }
  run->mem = CVodeCreate(cfg->method == DPD_ODE_ADAMS ? CV_ADAMS : CV_BDF, run->ctx);
  if (run->mem == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating the CVODE solver");
  }
  CV_TRY(CVodeSetErrHandlerFn(run->mem, cv_err_handler, &run->work), "CVodeSetErrHandlerFn");
  CV_TRY(CVodeInit(run->mem, cv_rhs, 0.0, run->y), "CVodeInit");
  CV_TRY(CVodeSetUserData(run->mem, &run->work), "CVodeSetUserData");
  run->work.rtol = cfg->rtol;
  run->work.abstol = abstol;
  CV_TRY(CVodeWFtolerances(run->mem, cv_ewt), "CVodeWFtolerances");
  CV_TRY(CVodeSetMaxNumSteps(run->mem, cfg->max_steps), "CVodeSetMaxNumSteps");
  CV_TRY(CVodeSetStopTime(run->mem, 1.0), "CVodeSetStopTime");
  run->work.cvode_mem = run->mem;
  if (cfg->method == DPD_ODE_BDF && cfg->linsol == DPD_ODE_LINSOL_SM) {
    run->work.sm_ea = malloc(4 * m * sizeof *run->work.sm_ea);
    run->ls = SUNLinSolNewEmpty(run->ctx);
    if (run->work.sm_ea == NULL || run->ls == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating the linear solver");
    }
    run->ls->content = &run->work;
    run->ls->ops->gettype = sm_gettype;
    run->ls->ops->setup = sm_noop_setup;
    run->ls->ops->setscalingvectors = sm_set_scaling;
    run->ls->ops->solve = sm_solve;
    run->ls->ops->free = sm_free;
    CV_TRY(CVodeSetLinearSolver(run->mem, run->ls, NULL), "CVodeSetLinearSolver");
  } else if (cfg->method == DPD_ODE_BDF) {
    run->ls = SUNLinSol_SPGMR(run->y, SUN_PREC_LEFT, cfg->krylov_maxl, run->ctx);
    if (run->ls == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating the SPGMR solver");
    }
    CV_TRY(CVodeSetLinearSolver(run->mem, run->ls, NULL), "CVodeSetLinearSolver");
    CV_TRY(CVodeSetJacTimes(run->mem, cv_jtsetup, cv_jtimes), "CVodeSetJacTimes");
    CV_TRY(CVodeSetPreconditioner(run->mem, NULL, cv_psolve), "CVodeSetPreconditioner");
  } else {
    run->nls = SUNNonlinSol_FixedPoint(run->y, 0, run->ctx);
    if (run->nls == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating the fixed-point solver");
    }
    CV_TRY(CVodeSetNonlinearSolver(run->mem, run->nls), "CVodeSetNonlinearSolver");
  }
  return DPD_OK;
}

static int setup_bounds(ode_run *run, double R0, const dpd_ode_config *cfg, dpd_err *err) {
  double *by;
  run->by = N_VNew_Serial(2, run->ctx);
  run->bmat = SUNDenseMatrix(2, 2, run->ctx);
  if (run->by == NULL || run->bmat == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for the bounds");
  }
  by = N_VGetArrayPointer(run->by);
  by[0] = R0;
  by[1] = R0;
  run->bls = SUNLinSol_Dense(run->by, run->bmat, run->ctx);
  run->bmem = CVodeCreate(CV_BDF, run->ctx);
  if (run->bls == NULL || run->bmem == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory creating the bounds solver");
  }
  CV_TRY(CVodeSetErrHandlerFn(run->bmem, cv_err_handler, &run->work), "CVodeSetErrHandlerFn");
  CV_TRY(CVodeInit(run->bmem, cv_bounds_rhs, 0.0, run->by), "CVodeInit (bounds)");
  CV_TRY(CVodeSetUserData(run->bmem, &run->work), "CVodeSetUserData");
  /* Two scalars: a near-relative control costs little and keeps the lower bound accurate where
   * it is many orders below R(0) */
  CV_TRY(CVodeSStolerances(run->bmem, cfg->rtol, 1e-6 * cfg->atol), "CVodeSStolerances (bounds)");
  CV_TRY(CVodeSetMaxNumSteps(run->bmem, cfg->max_steps), "CVodeSetMaxNumSteps");
  CV_TRY(CVodeSetStopTime(run->bmem, 1.0), "CVodeSetStopTime");
  CV_TRY(CVodeSetLinearSolver(run->bmem, run->bls, run->bmat), "CVodeSetLinearSolver (bounds)");
  CV_TRY(CVodeSetJacFn(run->bmem, cv_bounds_jac), "CVodeSetJacFn (bounds)");
  return DPD_OK;
}

static void collect_stats(const ode_run *run, const dpd_ode_config *cfg, dpd_ode_result *res) {
  CVodeGetNumSteps(run->mem, &res->steps);
  CVodeGetNumRhsEvals(run->mem, &res->rhs_evals);
  CVodeGetNumNonlinSolvIters(run->mem, &res->nonlin_iters);
  CVodeGetNumErrTestFails(run->mem, &res->err_test_fails);
  if (cfg->method == DPD_ODE_BDF && cfg->linsol == DPD_ODE_LINSOL_SPGMR) {
    CVodeGetNumLinIters(run->mem, &res->lin_iters);
    CVodeGetNumPrecSolves(run->mem, &res->prec_solves);
    CVodeGetNumJtimesEvals(run->mem, &res->jtimes_evals);
  }
}

/* Advances the main system (and the bounds) to tau_out. */
static int advance(ode_run *run, double tau_out, double tout, dpd_err *err) {
  double tret = 0.0;
  int flag;
  run->work.nonfinite = 0;
  run->work.outside = 0;
  flag = CVode(run->mem, tau_out, run->y, &tret, CV_NORMAL);
  if (flag < 0) {
    CVodeGetCurrentTime(run->mem, &tret);
    return cv_fail(run, flag, "CVode", tret, err);
  }
  run->work.nonfinite = 0; /* a recovered trial step is not a failure */
  run->work.outside = 0;
  (void)tout;
  if (run->bmem != NULL && !run->bounds_lost) {
    /* The upper bound grows like exp(lambda_max gamma int eta~^2) without clipping and can
     * overflow on steep spectra although R itself is tame: losing the bounds is not a failure
     * of the solve. From then on they are reported as upper = inf, lower = NaN. */
    const double *by = N_VGetArrayPointer(run->by);
    flag = CVode(run->bmem, tau_out, run->by, &tret, CV_NORMAL);
    run->work.nonfinite = 0;
    if (flag < 0 || !isfinite(by[0]) || !isfinite(by[1])) {
      run->bounds_lost = 1;
    }
  }
  return DPD_OK;
}

/* The impulse of calibrated noise at a drop of a step schedule (docs/math.md §1.4:
 * rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 is concentrated on the step before
 * the drop): every D_i jumps by J = 2 c^2 gamma^2 dsq / rho^2, so S_j by m_j J
 * and R (and both bounds) by J, exactly as at the release. CVODE restarts
 * from the new state. Step schedules keep tau = t (no time map). */
static int apply_jump(ode_run *run, double t_jump, double dsq, dpd_err *err) {
  const ode_model *model = &run->work.model;
  double J = model->noise_scale * dsq;
  double *S = N_VGetArrayPointer(run->y);
  if (!(J > 0.0)) {
    return DPD_OK;
  }
  for (size_t j = 0; j < model->m; j++) {
    S[j] += model->mult[j] * J;
  }
  CV_TRY(CVodeReInit(run->mem, t_jump, run->y), "CVodeReInit");
  CV_TRY(CVodeSetStopTime(run->mem, 1.0), "CVodeSetStopTime");
  if (run->bmem != NULL && !run->bounds_lost) {
    double *by = N_VGetArrayPointer(run->by);
    by[0] += J;
    by[1] += J;
    CV_TRY(CVodeReInit(run->bmem, t_jump, run->by), "CVodeReInit (bounds)");
    CV_TRY(CVodeSetStopTime(run->bmem, 1.0), "CVodeSetStopTime (bounds)");
  }
  return DPD_OK;
}

static int integrate(ode_run *run, const dpd_schedule *schedule, const dpd_ode_config *cfg,
                     dpd_ode_result *res, dpd_err *err) {
  size_t grid = cfg->grid, njumps = dpd_schedule_jumps(schedule, NULL, NULL, 0), next_jump = 0;
  double *jt = NULL, *jdsq = NULL, tau_now = 0.0;
  int status = DPD_OK;
  if (njumps > 0) {
    jt = malloc(njumps * sizeof *jt);
    jdsq = malloc(njumps * sizeof *jdsq);
    if (jt == NULL || jdsq == NULL) {
      free(jt);
      free(jdsq);
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory for %zu schedule drops", njumps);
    }
    dpd_schedule_jumps(schedule, jt, jdsq, njumps);
  }
  for (size_t j = 1; j < grid && status == DPD_OK; j++) {
    double tout = res->t[j];
    double tau_out = j + 1 == grid ? 1.0 : tau_of_time(run->work.map, tout);
    double R;
    /* Drops at or before this output time (right-continuous: a drop at tout counts). */
    while (status == DPD_OK && next_jump < njumps && jt[next_jump] <= tout) {
      if (jt[next_jump] > tau_now) {
        status = advance(run, jt[next_jump], jt[next_jump], err);
        tau_now = jt[next_jump];
      }
      if (status == DPD_OK) {
        status = apply_jump(run, jt[next_jump], jdsq[next_jump], err);
      }
      next_jump++;
    }
    if (status == DPD_OK && tau_out > tau_now) {
      status = advance(run, tau_out, tout, err);
      tau_now = tau_out;
    }
    if (status != DPD_OK) {
      break;
    }
    R = model_risk(&run->work.model, N_VGetArrayPointer(run->y));
    if (!isfinite(R)) {
      status = DPD_FAIL(err, DPD_ENONFINITE, "CVode: the risk is %g at t = %.17g", R, tout);
      break;
    }
    res->risk[j] = R;
    if (run->bmem != NULL) {
      const double *by = N_VGetArrayPointer(run->by);
      res->upper[j] = run->bounds_lost ? INFINITY : by[0];
      res->lower[j] = run->bounds_lost ? NAN : by[1];
    }
  }
  free(jt);
  free(jdsq);
  return status;
}

/* ---- Results ------------------------------------------------------------------------------- */

void dpd_ode_result_free(dpd_ode_result *r) {
  if (r != NULL) {
    free(r->t);
    free(r->risk);
    free(r->lower);
    free(r->upper);
    free(r);
  }
}

static dpd_ode_result *result_alloc(size_t grid, int bounds) {
  dpd_ode_result *r = calloc(1, sizeof *r);
  if (r == NULL) {
    return NULL;
  }
  r->grid = grid;
  r->t = malloc(grid * sizeof *r->t);
  r->risk = malloc(grid * sizeof *r->risk);
  if (bounds) {
    r->lower = malloc(grid * sizeof *r->lower);
    r->upper = malloc(grid * sizeof *r->upper);
  }
  if (r->t == NULL || r->risk == NULL || (bounds && (r->lower == NULL || r->upper == NULL))) {
    dpd_ode_result_free(r);
    return NULL;
  }
  return r;
}

/* Methods bdf and adams (cfg->method picks CVODE's multistep family); called by dpd_ode_solve
 * (ode_method.c) with a validated configuration and *out = NULL. */
static int cvode_solve(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                       const dpd_ode_config *cfg, dpd_ode_result **out, dpd_err *err) {
  ode_run run;
  dpd_ode_result *res = NULL;
  int status;
  double R0, eta1;

  memset(&run, 0, sizeof run);
  model_init(&run.work.model, problem, schedule, cfg);
  if (dpd_ode_finite_size_applies(problem, cfg)) {
    if ((status = dpd__fs_law_get(problem, &run.fs_law, err)) < 0) {
      goto cleanup;
    }
    run.work.model.fs = run.fs_law;
  }
  run.work.map = time_map_choose(schedule);
  run.work.lambda_min = problem->lambda_min;
  run.work.lambda_max = problem->lambda_max;
  R0 = model_risk(&run.work.model, problem->group_S0);
  /* The Jacobian-times setup refreshes this before every linear solve. A failed quadrature
   * of the clipping factors (non-Gaussian laws) fails here already. */
  if ((status = coef_at(&run.work.model, 0.0, R0, 1, &run.work.jt, err)) < 0) {
    goto cleanup;
  }

  res = result_alloc(cfg->grid, cfg->bounds);
  if (res == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory for a grid of %zu points", cfg->grid);
    goto cleanup;
  }
  for (size_t j = 0; j < cfg->grid; j++) {
    res->t[j] = (double)j / (double)(cfg->grid - 1);
  }
  res->risk[0] = R0;
  if (cfg->bounds) {
    res->lower[0] = R0;
    res->upper[0] = R0;
  }

  if (SUNContext_Create(NULL, &run.ctx) != 0) {
    run.ctx = NULL;
    status = DPD_FAIL(err, DPD_ENOMEM, "cannot create a SUNDIALS context");
    goto cleanup;
  }
  if ((status = setup_main(&run, problem, cfg, err)) < 0) {
    goto cleanup;
  }
  if (cfg->bounds && (status = setup_bounds(&run, R0, cfg, err)) < 0) {
    goto cleanup;
  }
  if ((status = integrate(&run, schedule, cfg, res, err)) < 0) {
    goto cleanup;
  }

  collect_stats(&run, cfg, res);
  eta1 = dpd_schedule_eval(schedule, 1.0);
  res->before_release = res->risk[cfg->grid - 1];
  res->release_jump = run.work.model.noise_scale * eta1 * eta1;
  res->final_risk = res->before_release + res->release_jump;
  status = DPD_OK;

cleanup:
  run_free(&run);
  if (status < 0) {
    dpd_ode_result_free(res);
  } else {
    *out = res;
  }
  return status;
}

/* ---- Method types (listed in ode_method.c) ------------------------------------------------- */

__attribute__((visibility("hidden"))) const dpd_ode_method_type dpd__ode_method_bdf = {
    "bdf",
    "CVODE BDF with Newton iterations (Sherman-Morrison or SPGMR), O(ngroups) per step; any "
    "schedule and clipping; gives the bounds",
    DPD_ODE_BDF, DPD_ODE_GIVES_BOUNDS | DPD_ODE_THREAD_SAFE, cvode_solve};

__attribute__((visibility("hidden"))) const dpd_ode_method_type dpd__ode_method_adams = {
    "adams",
    "CVODE Adams-Moulton with fixed-point iterations, O(ngroups) per step; for non-stiff "
    "problems; any schedule and clipping; gives the bounds",
    DPD_ODE_ADAMS, DPD_ODE_GIVES_BOUNDS | DPD_ODE_THREAD_SAFE, cvode_solve};
