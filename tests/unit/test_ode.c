/* Tests of the risk ODE solver (dpd_ode_solve, docs/math.md §1.7).
 * SPDX-License-Identifier: MIT
 *
 * References used here:
 *  - isotropic, unclipped, non-private: dR/dt = -2 eta R + gamma eta^2 (R + zeta^2/2)
 *    (docs/math.md §1.7, "sanity limits"). Constant eta: exact exponential solution.
 *    eta = eta0 sqrt(1 - t): integrating factor, R(t) = e^{-A(t)} [R0 + int_0^t
 *    e^{A(s)} gamma eta(s)^2 zeta^2/2 ds] with A(t) = int_0^t (2 eta - gamma eta^2)
 *    = (4/3) eta0 (1 - (1-t)^{3/2}) - gamma eta0^2 (t - t^2/2) in closed form and
 *    the remaining integral by GSL QAG (Gauss-Kronrod 61, relative error 1e-12).
 *  - ungrouped d-dimensional system: an independent GSL odeiv2 rk8pd solve
 *    (Prince-Dormand 8(7)) at tolerance 1e-13.
 *  - Jacobian-vector product: central finite differences of the right-hand side. */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_odeiv2.h>

#include "dpdyn/clip.h"
#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"
#include "linreg/ode_impl.h"

/* ---- Helpers ------------------------------------------------------------------------------- */

static dpd_linreg_problem *make_iso(size_t d, uint64_t seed) {
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = d;
  cfg.spectrum = DPD_SPECTRUM_ISO;
  cfg.theta_norm = 1.3;
  cfg.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static dpd_linreg_problem *make_levels(size_t nvalues, const double *values, const size_t *mult,
                                       size_t d, uint64_t seed) {
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = d;
  cfg.spectrum = DPD_SPECTRUM_LEVELS;
  cfg.values = values;
  cfg.mult = mult;
  cfg.nvalues = nvalues;
  cfg.theta_norm = 1.17;
  cfg.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static dpd_linreg_problem *make_powerlaw(size_t d, double alpha, uint64_t seed) {
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = d;
  cfg.spectrum = DPD_SPECTRUM_POWERLAW;
  cfg.alpha = alpha;
  cfg.theta_norm = 0.93;
  cfg.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static dpd_schedule *make_schedule(dpd_schedule_kind kind, double eta0, double a) {
  dpd_schedule_config cfg = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  cfg.kind = kind;
  cfg.eta0 = eta0;
  cfg.a = a;
  assert_int_equal(dpd_schedule_create(&cfg, &s, NULL), DPD_OK);
  return s;
}

static dpd_ode_result *solve_ok(const dpd_linreg_problem *p, const dpd_schedule *s,
                                const dpd_ode_config *cfg) {
  dpd_ode_result *res = NULL;
  dpd_err err;
  int status;
  dpd_err_reset(&err);
  status = dpd_ode_solve(p, s, cfg, &res, &err);
  if (status != DPD_OK) {
    print_error("dpd_ode_solve: %s: %s\n", dpd_status_str(status), err.reason);
  }
  assert_int_equal(status, DPD_OK);
  assert_non_null(res);
  return res;
}

static double max_rel_diff(const double *a, const double *b, size_t n) {
  double m = 0.0;
  for (size_t j = 0; j < n; j++) {
    m = fmax(m, fabs(a[j] - b[j]) / fabs(b[j]));
  }
  return m;
}

/* ---- (1) Closed forms: isotropic, unclipped, non-private ---------------------------------- */

/* The solver configurations every closed-form test runs through: the library's default
 * tolerances (rtol 1e-10; checked to 1e-8), rtol 1e-8 (CVODE controls the local error; the
 * global error is 5-50 rtol: checked to 5e-7) and a tight one (checked to 1e-8), for each
 * method and linear solver. */
typedef struct {
  dpd_ode_method method;
  dpd_ode_linsol linsol;
  double rtol, atol, tol;
  const char *name;
} solver_case;

static const solver_case solver_cases[] = {
    /* rtol = 0: the library's default tolerances, which must deliver 1e-8 (issue 13) */
    {DPD_ODE_BDF, DPD_ODE_LINSOL_SM, 0.0, 0.0, 1e-8, "bdf+sm, default tolerances"},
    {DPD_ODE_BDF, DPD_ODE_LINSOL_SM, 1e-8, 1e-12, 5e-7, "bdf+sm, rtol 1e-8"},
    {DPD_ODE_BDF, DPD_ODE_LINSOL_SM, 1e-10, 1e-14, 1e-8, "bdf+sm, rtol 1e-10"},
    {DPD_ODE_BDF, DPD_ODE_LINSOL_SPGMR, 1e-10, 1e-14, 1e-8, "bdf+spgmr, rtol 1e-10"},
    {DPD_ODE_ADAMS, DPD_ODE_LINSOL_SM, 1e-10, 1e-14, 1e-8, "adams, rtol 1e-10"},
};

static void apply_case(dpd_ode_config *cfg, const solver_case *sc) {
  cfg->method = sc->method;
  cfg->linsol = sc->linsol;
  if (sc->rtol > 0.0) {
    cfg->rtol = sc->rtol;
    cfg->atol = sc->atol;
  }
}

static void iso_const_schedule_matches_exponential_solution(void **state) {
  dpd_linreg_problem *p = make_iso(7, 11);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.83, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  (void)state;
  cfg.gamma = 0.37;
  cfg.zeta = 0.71;
  cfg.grid = 21;
  for (size_t k = 0; k < sizeof solver_cases / sizeof solver_cases[0]; k++) {
    dpd_ode_result *res;
    double eta = 0.83, R0 = dpd_linreg_initial_risk(p);
    double a = 2.0 * eta - cfg.gamma * eta * eta;
    double b = cfg.gamma * eta * eta * cfg.zeta * cfg.zeta / 2.0, worst = 0.0;
    apply_case(&cfg, &solver_cases[k]);
    res = solve_ok(p, s, &cfg);
    for (size_t j = 0; j < cfg.grid; j++) {
      double t = (double)j / (double)(cfg.grid - 1);
      double want = b / a + (R0 - b / a) * exp(-a * t);
      assert_true(res->t[j] == t);
      assert_rel(res->risk[j], want, solver_cases[k].tol);
      worst = fmax(worst, fabs(res->risk[j] / want - 1.0));
    }
    print_message("const eta, %s: max relative error %.3g (%ld steps)\n", solver_cases[k].name,
                  worst, res->steps);
    dpd_ode_result_free(res);
  }
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* Frozen clipping factors and a constant noise profile (the Volterra cross-check fields): the
 * isotropic system is dR/dt = -2 eta mu R + gamma eta^2 nu (R + zeta^2/2) + 2 c^2 gamma^2 s2,
 * again an exponential; the Jacobian-vector product is exact with mu', nu' = 0. */
static void frozen_factors_and_constant_noise_match_exponential_solution(void **state) {
  dpd_linreg_problem *p = make_iso(6, 17);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.91, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  const double eta = 0.91, mu = 0.683, nu = 0.547, s2 = 0.0371;
  double S[1], v[1] = {0.417}, Jv[1], dSdt[1];
  (void)state;
  cfg.gamma = 0.43;
  cfg.zeta = 0.62;
  cfg.c = 1.37; /* finite: the noise scales with c^2; mu, nu frozen override mu_c(P), nu_c(P) */
  cfg.sigma2_const = s2;
  cfg.mu_frozen = mu;
  cfg.nu_frozen = nu;
  cfg.grid = 17;
  for (size_t k = 0; k < sizeof solver_cases / sizeof solver_cases[0]; k++) {
    dpd_ode_result *res;
    double R0 = dpd_linreg_initial_risk(p);
    double a = 2.0 * eta * mu - cfg.gamma * eta * eta * nu;
    double b = cfg.gamma * eta * eta * nu * cfg.zeta * cfg.zeta / 2.0 +
               2.0 * cfg.c * cfg.c * cfg.gamma * cfg.gamma * s2;
    apply_case(&cfg, &solver_cases[k]);
    res = solve_ok(p, s, &cfg);
    for (size_t j = 0; j < cfg.grid; j++) {
      assert_rel(res->risk[j], b / a + (R0 - b / a) * exp(-a * res->t[j]), solver_cases[k].tol);
    }
    assert_true(res->release_jump == 0.0); /* rho = inf: no release noise */
    dpd_ode_result_free(res);
  }
  /* One group (lambda = 1, m = d): J = A + (1/d) m gamma eta^2 nu. */
  S[0] = 2.71;
  assert_int_equal(dpd_ode_jtimes_eval(p, s, &cfg, 0.3, S, v, Jv), 0);
  assert_rel(Jv[0], (-2.0 * eta * mu + cfg.gamma * eta * eta * nu) * v[0], 1e-14);
  assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, 0.3, S, dSdt), 0);
  assert_rel(dSdt[0],
             -2.0 * eta * mu * S[0] +
                 6.0 * (cfg.gamma * eta * eta * nu * (S[0] / 6.0 + cfg.zeta * cfg.zeta / 2.0) +
                        2.0 * cfg.c * cfg.c * cfg.gamma * cfg.gamma * s2),
             1e-14);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

typedef struct {
  double eta0, gamma, zeta, t;
} sqrt_params;

/* A(t) = int_0^t (2 eta - gamma eta^2) ds for eta = eta0 sqrt(1 - s). */
static double sqrt_exponent(const sqrt_params *q, double t) {
  double u = 1.0 - t;
  return (4.0 / 3.0) * q->eta0 * (1.0 - u * sqrt(u)) -
         q->gamma * q->eta0 * q->eta0 * (t - 0.5 * t * t);
}

static double sqrt_integrand(double s, void *params) {
  const sqrt_params *q = params;
  double eta2 = q->eta0 * q->eta0 * (1.0 - s);
  return exp(sqrt_exponent(q, s) - sqrt_exponent(q, q->t)) * q->gamma * eta2 * q->zeta * q->zeta /
         2.0;
}

static void iso_sqrt_schedule_matches_integrating_factor(void **state) {
  dpd_linreg_problem *p = make_iso(5, 23);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 1.37, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
  sqrt_params q = {1.37, 0.61, 0.53, 0.0};
  double R0 = dpd_linreg_initial_risk(p);
  double want[26];
  (void)state;
  gsl_set_error_handler_off();
  cfg.gamma = q.gamma;
  cfg.zeta = q.zeta;
  cfg.grid = 26;
  for (size_t j = 0; j < cfg.grid; j++) {
    gsl_function f = {sqrt_integrand, &q};
    double integral = 0.0, abserr = 0.0;
    q.t = (double)j / (double)(cfg.grid - 1);
    if (q.t > 0.0) {
      assert_int_equal(gsl_integration_qag(&f, 0.0, q.t, 1e-16, 1e-12, 1000, GSL_INTEG_GAUSS61, ws,
                                           &integral, &abserr),
                       GSL_SUCCESS);
    }
    want[j] = R0 * exp(-sqrt_exponent(&q, q.t)) + integral;
  }
  for (size_t k = 0; k < sizeof solver_cases / sizeof solver_cases[0]; k++) {
    dpd_ode_result *res;
    double worst = 0.0;
    apply_case(&cfg, &solver_cases[k]);
    res = solve_ok(p, s, &cfg);
    for (size_t j = 0; j < cfg.grid; j++) {
      assert_rel(res->risk[j], want[j], solver_cases[k].tol);
      worst = fmax(worst, fabs(res->risk[j] / want[j] - 1.0));
    }
    print_message("sqrt eta, %s: max relative error %.3g (%ld steps)\n", solver_cases[k].name,
                  worst, res->steps);
    assert_true(res->before_release == res->risk[cfg.grid - 1]);
    dpd_ode_result_free(res);
  }
  gsl_integration_workspace_free(ws);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (2) Grouping is exact: against the ungrouped system (GSL rk8pd) ---------------------- */

typedef struct {
  const dpd_linreg_problem *problem;
  const dpd_schedule *schedule;
  double gamma, zeta, c, rho;
} full_params;

/* dD_i/dt = -2 lambda_i eta mu D_i + gamma lambda_i eta^2 nu P + 2 c^2 gamma^2 sigma~^2. */
static int full_rhs(double t, const double *D, double *dDdt, void *params) {
  const full_params *q = params;
  const dpd_linreg_problem *p = q->problem;
  double R = 0.0, P, mu, nu, eta, noise = 0.0;
  for (size_t i = 0; i < p->d; i++) {
    R += p->lambda[i] * D[i];
  }
  R /= (double)p->d;
  P = R + q->zeta * q->zeta / 2.0;
  dpd_clip_factors_eval(q->c, P, &mu, &nu, NULL, NULL);
  eta = dpd_schedule_eval(q->schedule, t);
  if (!isinf(q->rho)) {
    noise = -2.0 * q->c * q->c * q->gamma * q->gamma * dpd_schedule_dsq_eval(q->schedule, t) /
            (q->rho * q->rho);
  }
  for (size_t i = 0; i < p->d; i++) {
    dDdt[i] = -2.0 * p->lambda[i] * eta * mu * D[i] + q->gamma * p->lambda[i] * eta * eta * nu * P +
              noise;
  }
  return GSL_SUCCESS;
}

static void check_against_ungrouped(dpd_schedule_kind kind, double tol) {
  static const double values[3] = {2.7, 1.1, 0.35};
  static const size_t mult[3] = {9, 17, 24};
  dpd_linreg_problem *p = make_levels(3, values, mult, 50, 7);
  dpd_schedule *s = make_schedule(kind, 0.9, 1.3);
  dpd_ode_config cfg = dpd_ode_config_default();
  full_params q;
  gsl_odeiv2_system sys;
  gsl_odeiv2_driver *drv;
  dpd_ode_result *res;
  double *D = malloc(p->d * sizeof *D), t = 0.0, worst = 0.0;
  assert_non_null(D);
  gsl_set_error_handler_off();
  assert_int_equal(p->ngroups, 3);
  cfg.gamma = 0.43;
  cfg.zeta = 0.6;
  cfg.c = 0.9;
  cfg.rho = 1.7;
  cfg.grid = 11;
  cfg.bounds = 1;
  res = solve_ok(p, s, &cfg);
  q.problem = p;
  q.schedule = s;
  q.gamma = cfg.gamma;
  q.zeta = cfg.zeta;
  q.c = cfg.c;
  q.rho = cfg.rho;
  sys.function = full_rhs;
  sys.jacobian = NULL;
  sys.dimension = p->d;
  sys.params = &q;
  drv = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-6, 1e-13, 1e-13);
  assert_non_null(drv);
  for (size_t i = 0; i < p->d; i++) {
    D[i] = 0.5 * (double)p->d * p->theta_star[i] * p->theta_star[i];
  }
  for (size_t j = 1; j < cfg.grid; j++) {
    double R = 0.0;
    assert_int_equal(gsl_odeiv2_driver_apply(drv, &t, res->t[j], D), GSL_SUCCESS);
    for (size_t i = 0; i < p->d; i++) {
      R += p->lambda[i] * D[i];
    }
    R /= (double)p->d;
    assert_rel(res->risk[j], R, tol);
    worst = fmax(worst, fabs(res->risk[j] / R - 1.0));
  }
  print_message("grouped vs ungrouped (%s): max relative difference %.3g\n", dpd_schedule_name(s),
                worst);
  gsl_odeiv2_driver_free(drv);
  free(D);
  dpd_ode_result_free(res);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void grouped_system_matches_ungrouped_rk8pd_hyperbolic(void **state) {
  (void)state;
  check_against_ungrouped(DPD_SCHEDULE_HYPERBOLIC, 1e-7);
}

static void grouped_system_matches_ungrouped_rk8pd_sqrt(void **state) {
  (void)state;
  check_against_ungrouped(DPD_SCHEDULE_SQRT, 1e-7);
}

/* ---- (3) Bounds ---------------------------------------------------------------------------- */

static void check_bracket(const dpd_linreg_problem *p, const dpd_schedule *s) {
  dpd_ode_config cfg = dpd_ode_config_default();
  dpd_ode_result *res;
  double slack = 1e-7, gap_lo = 0.0, gap_hi = 0.0;
  cfg.gamma = 0.52;
  cfg.zeta = 0.45;
  cfg.c = 0.8;
  cfg.rho = 2.3;
  cfg.grid = 41;
  cfg.bounds = 1;
  res = solve_ok(p, s, &cfg);
  assert_non_null(res->lower);
  assert_non_null(res->upper);
  assert_true(res->lower[0] == res->risk[0] && res->upper[0] == res->risk[0]);
  for (size_t j = 0; j < cfg.grid; j++) {
    assert_true(res->lower[j] <= res->risk[j] * (1.0 + slack));
    assert_true(res->risk[j] <= res->upper[j] * (1.0 + slack));
    gap_lo = fmax(gap_lo, 1.0 - res->lower[j] / res->risk[j]);
    gap_hi = fmax(gap_hi, res->upper[j] / res->risk[j] - 1.0);
  }
  /* The bracket is not trivially tight for an anisotropic spectrum. */
  assert_true(gap_lo > 1e-3);
  assert_true(gap_hi > 1e-3);
  print_message("bounds (%s, %zu groups): lower up to %.3g below, upper up to %.3g above\n",
                dpd_schedule_name(s), p->ngroups, gap_lo, gap_hi);
  dpd_ode_result_free(res);
}

static void bounds_bracket_risk_for_levels_and_powerlaw(void **state) {
  static const double values[3] = {3.1, 0.9, 0.23};
  static const size_t mult[3] = {40, 100, 160};
  dpd_linreg_problem *levels = make_levels(3, values, mult, 300, 5);
  dpd_linreg_problem *power = make_powerlaw(200, 1.2, 9);
  dpd_schedule *sq = make_schedule(DPD_SCHEDULE_SQRT, 1.1, 1.0);
  dpd_schedule *hy = make_schedule(DPD_SCHEDULE_HYPERBOLIC, 1.3, 2.2);
  (void)state;
  check_bracket(levels, sq);
  check_bracket(levels, hy);
  check_bracket(power, sq);
  check_bracket(power, hy);
  dpd_schedule_free(hy);
  dpd_schedule_free(sq);
  dpd_linreg_problem_free(power);
  dpd_linreg_problem_free(levels);
}

static void bounds_equal_risk_for_isotropic_spectrum(void **state) {
  dpd_linreg_problem *p = make_iso(30, 17);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 1.2, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  dpd_ode_result *res;
  (void)state;
  cfg.gamma = 0.45;
  cfg.zeta = 0.3;
  cfg.c = 0.75;
  cfg.rho = 1.9;
  cfg.grid = 21;
  cfg.bounds = 1;
  cfg.rtol = 1e-12; /* both solves carry a global error of ~10 rtol */
  cfg.atol = 1e-16;
  res = solve_ok(p, s, &cfg);
  assert_true(max_rel_diff(res->lower, res->risk, cfg.grid) <= 1e-9);
  assert_true(max_rel_diff(res->upper, res->risk, cfg.grid) <= 1e-9);
  print_message("iso bounds: max relative difference %.3g (lower), %.3g (upper)\n",
                max_rel_diff(res->lower, res->risk, cfg.grid),
                max_rel_diff(res->upper, res->risk, cfg.grid));
  dpd_ode_result_free(res);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (4) Jacobian-vector product ----------------------------------------------------------- */

static void jtimes_matches_finite_differences(void **state) {
  dpd_linreg_problem *p = make_powerlaw(40, 1.4, 3);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_HYPERBOLIC, 1.15, 0.8);
  dpd_ode_config cfg = dpd_ode_config_default();
  size_t m = p->ngroups;
  double *S = malloc(m * sizeof *S), *v = malloc(m * sizeof *v), *Jv = malloc(m * sizeof *Jv);
  double *Sp = malloc(m * sizeof *Sp), *Sm = malloc(m * sizeof *Sm);
  double *fp = malloc(m * sizeof *fp), *fm = malloc(m * sizeof *fm);
  const double clips[3] = {0.35, 1.3, INFINITY};
  const double rhos[3] = {1.4, 0.8, INFINITY};
  (void)state;
  assert_true(S && v && Jv && Sp && Sm && fp && fm);
  cfg.gamma = 0.47;
  cfg.zeta = 0.38;
  for (size_t k = 0; k < 3; k++) {
    double h = 1e-5, scale = 0.0, worst = 0.0, t = 0.37;
    cfg.c = clips[k];
    cfg.rho = rhos[k];
    for (size_t j = 0; j < m; j++) {
      S[j] = p->group_S0[j] * (1.0 + 0.3 * sin(1.7 * (double)j + 0.2));
      v[j] = cos(2.3 * (double)j + 0.4) * (1.0 + 0.1 * (double)j);
    }
    assert_int_equal(dpd_ode_jtimes_eval(p, s, &cfg, t, S, v, Jv), 0);
    for (size_t j = 0; j < m; j++) {
      Sp[j] = S[j] + h * v[j];
      Sm[j] = S[j] - h * v[j];
    }
    assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, t, Sp, fp), 0);
    assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, t, Sm, fm), 0);
    for (size_t j = 0; j < m; j++) {
      scale = fmax(scale, fabs(Jv[j]));
    }
    for (size_t j = 0; j < m; j++) {
      double fd = (fp[j] - fm[j]) / (2.0 * h);
      assert_abs(Jv[j], fd, 1e-6 * scale);
      worst = fmax(worst, fabs(Jv[j] - fd) / scale);
    }
    print_message("jtimes vs central differences (c = %g, rho = %g): max error %.3g of max|Jv|\n",
                  cfg.c, cfg.rho, worst);
  }
  free(S);
  free(v);
  free(Jv);
  free(Sp);
  free(Sm);
  free(fp);
  free(fm);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void spgmr_converges_in_two_iterations_and_matches_sherman_morrison(void **state) {
  dpd_linreg_problem *p = make_powerlaw(500, 1.5, 4);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 1.0, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  dpd_ode_result *sm, *gm;
  (void)state;
  cfg.gamma = 0.5;
  cfg.c = 1.0;
  cfg.rho = 1.0;
  cfg.grid = 11;
  sm = solve_ok(p, s, &cfg);
  cfg.linsol = DPD_ODE_LINSOL_SPGMR;
  gm = solve_ok(p, s, &cfg);
  assert_true(gm->lin_iters > 0);
  assert_true(gm->lin_iters <= 2 * gm->nonlin_iters);
  assert_true(gm->jtimes_evals > 0 && gm->prec_solves > 0);
  assert_int_equal(sm->lin_iters, 0);
  assert_true(max_rel_diff(gm->risk, sm->risk, cfg.grid) <= 1e-6);
  print_message("SPGMR: %ld iterations for %ld Newton iterations; SM vs SPGMR %.3g\n",
                gm->lin_iters, gm->nonlin_iters, max_rel_diff(gm->risk, sm->risk, cfg.grid));
  dpd_ode_result_free(gm);
  dpd_ode_result_free(sm);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (5) BDF and Adams agree --------------------------------------------------------------- */

static void bdf_and_adams_agree(void **state) {
  static const double values[3] = {2.5, 1.0, 0.4};
  static const size_t mult[3] = {20, 50, 80};
  dpd_linreg_problem *p = make_levels(3, values, mult, 150, 13);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_HYPERBOLIC, 1.05, 1.7);
  dpd_ode_config cfg = dpd_ode_config_default();
  dpd_ode_result *bdf, *adams;
  (void)state;
  cfg.gamma = 0.35;
  cfg.zeta = 0.5;
  cfg.c = 1.1;
  cfg.rho = 1.5;
  cfg.grid = 51;
  bdf = solve_ok(p, s, &cfg);
  cfg.method = DPD_ODE_ADAMS;
  adams = solve_ok(p, s, &cfg);
  assert_true(max_rel_diff(adams->risk, bdf->risk, cfg.grid) <= 1e-6);
  assert_rel(adams->final_risk, bdf->final_risk, 1e-6);
  print_message("BDF vs Adams: max relative difference %.3g (%ld vs %ld steps)\n",
                max_rel_diff(adams->risk, bdf->risk, cfg.grid), bdf->steps, adams->steps);
  dpd_ode_result_free(adams);
  dpd_ode_result_free(bdf);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (6b) Queued vector kernels -------------------------------------------------------------
 * From 262144 groups on, CVODE's element-wise vector operations are queued and run
 * cache-blocked (ode_nvector.c); the results must equal, bit for bit, those of executing every
 * operation at once (dpd__ode_nvector_bench_mode(1)), for the Sherman-Morrison and the SPGMR
 * linear solvers (the latter adds the dot products and linear combinations of GMRES), with the
 * time map, clipping, privacy noise and the bounds. A queue that reordered, dropped or
 * misplaced an operation would change the risk and the step counts. */
static void queued_vector_kernels_match_immediate_bit_for_bit(void **state) {
  dpd_linreg_problem *p = make_powerlaw(300000, 1.0, 5);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 1.5, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  (void)state;
  cfg.c = 0.7;
  cfg.rho = 1.2;
  cfg.grid = 11;
  cfg.rtol = 1e-5;
  cfg.bounds = 1;
  for (int ls = 0; ls < 2; ls++) {
    dpd_ode_result *queued, *direct;
    cfg.linsol = ls == 0 ? DPD_ODE_LINSOL_SM : DPD_ODE_LINSOL_SPGMR;
    dpd__ode_nvector_bench_mode(0);
    queued = solve_ok(p, s, &cfg);
    dpd__ode_nvector_bench_mode(1); /* the default */
    direct = solve_ok(p, s, &cfg);
    assert_int_equal(queued->steps, direct->steps);
    assert_int_equal(queued->rhs_evals, direct->rhs_evals);
    assert_int_equal(queued->nonlin_iters, direct->nonlin_iters);
    assert_int_equal(queued->lin_iters, direct->lin_iters);
    assert_memory_equal(queued->risk, direct->risk, cfg.grid * sizeof(double));
    assert_memory_equal(queued->upper, direct->upper, cfg.grid * sizeof(double));
    assert_memory_equal(queued->lower, direct->lower, cfg.grid * sizeof(double));
    assert_memory_equal(&queued->final_risk, &direct->final_risk, sizeof(double));
    print_message("%s: %ld steps, R_out %.17g in both modes\n", ls == 0 ? "sm" : "spgmr",
                  queued->steps, queued->final_risk);
    dpd_ode_result_free(queued);
    dpd_ode_result_free(direct);
  }
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (6) Release jump ---------------------------------------------------------------------- */

static void release_jump_follows_last_step_noise(void **state) {
  dpd_linreg_problem *p = make_powerlaw(60, 1.1, 21);
  dpd_schedule *cst = make_schedule(DPD_SCHEDULE_CONST, 0.83, 1.0);
  dpd_schedule *hyp = make_schedule(DPD_SCHEDULE_HYPERBOLIC, 1.2, 0.7);
  dpd_schedule *sq = make_schedule(DPD_SCHEDULE_SQRT, 1.2, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  dpd_ode_result *res;
  double c = 0.9, gamma = 0.41, rho = 1.3, eta1;
  (void)state;
  cfg.gamma = gamma;
  cfg.c = c;
  cfg.rho = rho;
  cfg.grid = 5;

  res = solve_ok(p, cst, &cfg);
  assert_rel(res->release_jump, 2.0 * c * c * gamma * gamma * 0.83 * 0.83 / (rho * rho), 1e-15);
  assert_true(res->before_release == res->risk[cfg.grid - 1]);
  assert_rel(res->final_risk, res->before_release + res->release_jump, 1e-15);
  dpd_ode_result_free(res);

  res = solve_ok(p, hyp, &cfg);
  eta1 = 1.2 / 1.7;
  assert_rel(res->release_jump, 2.0 * c * c * gamma * gamma * eta1 * eta1 / (rho * rho), 1e-15);
  assert_rel(res->final_risk, res->before_release + res->release_jump, 1e-15);
  dpd_ode_result_free(res);

  res = solve_ok(p, sq, &cfg); /* eta~(1) = 0: all noise spent before the end */
  assert_true(res->release_jump == 0.0);
  assert_true(res->final_risk == res->before_release);
  dpd_ode_result_free(res);

  cfg.rho = INFINITY;
  res = solve_ok(p, cst, &cfg);
  assert_true(res->release_jump == 0.0);
  assert_true(res->final_risk == res->before_release);
  assert_true(res->steps > 0 && res->rhs_evals > 0 && res->nonlin_iters > 0);
  dpd_ode_result_free(res);

  dpd_schedule_free(sq);
  dpd_schedule_free(hyp);
  dpd_schedule_free(cst);
  dpd_linreg_problem_free(p);
}

/* ---- (7) Error paths ----------------------------------------------------------------------- */

static void expect_einval(const dpd_linreg_problem *p, const dpd_schedule *s,
                          const dpd_ode_config *cfg, const char *key) {
  dpd_ode_result *res = (dpd_ode_result *)&res; /* must be reset to NULL */
  dpd_err err;
  char want[64];
  dpd_err_reset(&err);
  assert_int_equal(dpd_ode_solve(p, s, cfg, &res, &err), DPD_EINVAL);
  assert_null(res);
  assert_int_equal(err.status, DPD_EINVAL);
  snprintf(want, sizeof want, "invalid value for '%s'", key);
  if (strstr(err.reason, want) == NULL || strstr(err.reason, "allowed") == NULL) {
    print_error("reason '%s' lacks \"%s\" or the allowed range\n", err.reason, want);
    fail();
  }
}

static void invalid_config_is_rejected_with_key_value_and_range(void **state) {
  dpd_linreg_problem *p = make_iso(4, 1);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.9, 1.0);
  dpd_schedule *up = make_schedule(DPD_SCHEDULE_HYPERBOLIC, 0.9, -0.5);
  dpd_ode_config base = dpd_ode_config_default(), cfg;
  double S[1] = {1.0}, out[1];
  (void)state;
  base.c = 1.2;
  base.rho = 2.0;

  cfg = base, cfg.gamma = 0.0, expect_einval(p, s, &cfg, "gamma");
  cfg = base, cfg.gamma = INFINITY, expect_einval(p, s, &cfg, "gamma");
  cfg = base, cfg.gamma = NAN, expect_einval(p, s, &cfg, "gamma");
  cfg = base, cfg.zeta = -0.1, expect_einval(p, s, &cfg, "zeta");
  cfg = base, cfg.zeta = INFINITY, expect_einval(p, s, &cfg, "zeta");
  cfg = base, cfg.c = 0.0, expect_einval(p, s, &cfg, "c");
  cfg = base, cfg.c = NAN, expect_einval(p, s, &cfg, "c");
  cfg = base, cfg.c = INFINITY, expect_einval(p, s, &cfg, "c"); /* with finite rho */
  cfg = base, cfg.rho = -1.0, expect_einval(p, s, &cfg, "rho");
  cfg = base, cfg.rho = 0.0, expect_einval(p, s, &cfg, "rho");
  cfg = base, cfg.grid = 1, expect_einval(p, s, &cfg, "grid");
  cfg = base, cfg.grid = 0, expect_einval(p, s, &cfg, "grid");
  cfg = base, cfg.rtol = 0.0, expect_einval(p, s, &cfg, "rtol");
  cfg = base, cfg.rtol = NAN, expect_einval(p, s, &cfg, "rtol");
  cfg = base, cfg.atol = -1e-9, expect_einval(p, s, &cfg, "atol");
  cfg = base, cfg.max_steps = 0, expect_einval(p, s, &cfg, "max_steps");
  cfg = base, cfg.krylov_maxl = 0, expect_einval(p, s, &cfg, "krylov_maxl");
  cfg = base, cfg.method = (dpd_ode_method)7, expect_einval(p, s, &cfg, "method");
  cfg = base, cfg.linsol = (dpd_ode_linsol)7, expect_einval(p, s, &cfg, "linsol");
  cfg = base, cfg.bounds = 2, expect_einval(p, s, &cfg, "bounds");
  cfg = base, cfg.sigma2_const = -0.1, expect_einval(p, s, &cfg, "sigma2_const");
  cfg = base, cfg.sigma2_const = INFINITY, expect_einval(p, s, &cfg, "sigma2_const");
  cfg = base, cfg.c = INFINITY, cfg.rho = INFINITY, cfg.sigma2_const = 0.2,
  expect_einval(p, s, &cfg, "sigma2_const");
  cfg = base, cfg.mu_frozen = 0.0, expect_einval(p, s, &cfg, "mu_frozen");
  cfg = base, cfg.mu_frozen = 1.5, expect_einval(p, s, &cfg, "mu_frozen");
  cfg = base, cfg.nu_frozen = -0.1, expect_einval(p, s, &cfg, "nu_frozen");
  cfg = base, cfg.nu_frozen = INFINITY, expect_einval(p, s, &cfg, "nu_frozen");
  cfg = base, expect_einval(p, up, &cfg, "schedule"); /* increasing and private */
  cfg = base, expect_einval(NULL, s, &cfg, "problem");
  cfg = base, expect_einval(p, NULL, &cfg, "schedule");
  expect_einval(p, s, NULL, "config");
  assert_int_equal(dpd_ode_solve(p, s, &base, NULL, NULL), DPD_EINVAL);

  /* The pure evaluations reject the same configs, and c = inf is fine without privacy. */
  cfg = base, cfg.gamma = -1.0;
  assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, 0.5, S, out), DPD_EINVAL);
  assert_int_equal(dpd_ode_jtimes_eval(p, s, &cfg, 0.5, S, S, out), DPD_EINVAL);
  cfg = base, cfg.c = INFINITY, cfg.rho = INFINITY;
  assert_int_equal(dpd_ode_rhs_eval(p, up, &cfg, 0.5, S, out), 0);

  dpd_ode_result_free(NULL);
  dpd_schedule_free(up);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void solver_failure_reports_cvode_flag_and_time(void **state) {
  dpd_linreg_problem *p = make_powerlaw(100, 1.5, 2);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 1.0, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  dpd_ode_result *res = NULL;
  dpd_err err;
  (void)state;
  cfg.c = 1.0;
  cfg.rho = 1.0;
  cfg.grid = 3;
  cfg.max_steps = 5;
  dpd_err_reset(&err);
  assert_int_equal(dpd_ode_solve(p, s, &cfg, &res, &err), DPD_ESOLVER);
  assert_null(res);
  assert_int_equal(err.status, DPD_ESOLVER);
  assert_non_null(strstr(err.reason, "CV_TOO_MUCH_WORK"));
  assert_non_null(strstr(err.reason, "t = "));
  print_message("reported: %s\n", err.reason);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void divergent_risk_is_reported_as_nonfinite(void **state) {
  dpd_linreg_problem *p = make_iso(3, 5);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 40.0, 1.0); /* far beyond 2/gamma */
  dpd_ode_config cfg = dpd_ode_config_default();
  const dpd_ode_method methods[2] = {DPD_ODE_BDF, DPD_ODE_ADAMS};
  (void)state;
  cfg.gamma = 1.0;
  for (size_t k = 0; k < 2; k++) {
    dpd_ode_result *res = NULL;
    dpd_err err;
    dpd_err_reset(&err);
    cfg.method = methods[k];
    assert_int_equal(dpd_ode_solve(p, s, &cfg, &res, &err), DPD_ENONFINITE);
    assert_null(res);
    assert_non_null(strstr(err.reason, "t = "));
    print_message("reported: %s\n", err.reason);
  }
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (8) The method table ------------------------------------------------------------------ */

/* The table is well formed: NULL-terminated, in the order of dpd_ode_method, names unique and
 * found by lookup, every entry with a description and a solve function; an unknown name or id is
 * not found. */
static void method_table_is_consistent_and_lookup_rejects_unknown_names(void **state) {
  size_t n = 0;
  (void)state;
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL; m++, n++) {
    assert_int_equal((int)(*m)->id, (int)n);
    assert_non_null((*m)->name);
    assert_true((*m)->name[0] != '\0');
    assert_non_null((*m)->description);
    assert_true((*m)->description[0] != '\0');
    assert_non_null((*m)->solve);
    assert_ptr_equal(dpd_ode_method_lookup((*m)->name), *m);
    assert_ptr_equal(dpd_ode_method_type_get((*m)->id), *m);
    print_message("%-9s flags %u: %s\n", (*m)->name, (*m)->flags, (*m)->description);
  }
  assert_int_equal(n, 3);
  assert_string_equal(dpd_ode_method_types[DPD_ODE_BDF]->name, "bdf");
  assert_string_equal(dpd_ode_method_types[DPD_ODE_ADAMS]->name, "adams");
  assert_string_equal(dpd_ode_method_types[DPD_ODE_VOLTERRA]->name, "volterra");
  assert_null(dpd_ode_method_lookup("rk4"));
  assert_null(dpd_ode_method_lookup("BDF")); /* case-sensitive */
  assert_null(dpd_ode_method_lookup("bdf "));
  assert_null(dpd_ode_method_lookup(""));
  assert_null(dpd_ode_method_lookup(NULL));
  assert_null(dpd_ode_method_type_get((dpd_ode_method)n));
  assert_null(dpd_ode_method_type_get((dpd_ode_method)-1));
  assert_int_equal((int)dpd_ode_config_default().method, (int)DPD_ODE_BDF);
}

/* Every method of the table solves a small constant-schedule, unclipped problem that meets
 * every requirement (three eigenvalue levels, eta~ = 0.9, c = rho = inf), and agrees with bdf.
 * Tolerance: both CVODE methods run at rtol = 1e-10; their global error is typically 5-50 rtol
 * (ode.h), so two of them differ by at most 100 rtol = 1e-8. Volterra's error is not set by
 * rtol: with 400 Richardson-extrapolated steps on this non-stiff spectrum (a_max h = 2 lambda_max
 * eta~ / 400 = 0.011) it is below 1e-9 (docs/volterra.md: 3e-10 on the isotropic case, where the
 * remainder is the ODE's own error), inside the same 100 rtol. The bounds exist exactly for the
 * methods that give them. */
static void every_method_solves_const_unclipped_problem_like_bdf(void **state) {
  const double values[3] = {2.5, 0.8, 0.15};
  const size_t mult[3] = {3, 7, 20};
  const double rtol = 1e-10, tol = 100.0 * rtol;
  dpd_linreg_problem *p = make_levels(3, values, mult, 30, 23);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.9, 1.0);
  dpd_ode_config cfg = dpd_ode_config_default();
  dpd_ode_result *ref;
  size_t n = 0;
  (void)state;
  cfg.gamma = 0.6;
  cfg.zeta = 0.45;
  cfg.grid = 21;
  cfg.rtol = rtol;
  cfg.atol = 1e-15;
  cfg.bounds = 1;
  ref = solve_ok(p, s, &cfg);
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL; m++, n++) {
    dpd_ode_result *res;
    double worst = 0.0;
    cfg.method = (*m)->id;
    res = solve_ok(p, s, &cfg);
    assert_int_equal(res->grid, cfg.grid);
    for (size_t j = 0; j < cfg.grid; j++) {
      assert_true(res->t[j] == ref->t[j]);
      worst = fmax(worst, fabs(res->risk[j] / ref->risk[j] - 1.0));
    }
    print_message("%-9s max relative difference to bdf %.3g (tolerance %.3g), %ld steps\n",
                  (*m)->name, worst, tol, res->steps);
    assert_true(worst <= tol);
    assert_rel(res->final_risk, ref->final_risk, tol);
    assert_true(res->release_jump == 0.0); /* rho = inf */
    if ((*m)->flags & DPD_ODE_GIVES_BOUNDS) {
      assert_non_null(res->lower);
      assert_non_null(res->upper);
      for (size_t j = 0; j < cfg.grid; j++) {
        assert_true(res->lower[j] <= res->risk[j] * (1.0 + tol));
        assert_true(res->risk[j] <= res->upper[j] * (1.0 + tol));
      }
    } else {
      assert_null(res->lower);
      assert_null(res->upper);
    }
    dpd_ode_result_free(res);
    /* Without bounds asked for, no method gives them. */
    cfg.bounds = 0;
    res = solve_ok(p, s, &cfg);
    assert_null(res->lower);
    assert_null(res->upper);
    dpd_ode_result_free(res);
    cfg.bounds = 1;
  }
  assert_int_equal(n, 3);
  dpd_ode_result_free(ref);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* A requirement of a method's flags that is not met is DPD_EINVAL naming the key and the
 * method; a method without that requirement solves the same configuration. */
static void method_requirement_violation_is_einval_naming_key_and_method(void **state) {
  dpd_linreg_problem *p = make_iso(5, 29);
  dpd_schedule *cst = make_schedule(DPD_SCHEDULE_CONST, 0.8, 1.0);
  dpd_schedule *sqrt_s = make_schedule(DPD_SCHEDULE_SQRT, 0.8, 1.0);
  size_t violations = 0;
  (void)state;
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL; m++) {
    static const struct {
      unsigned flag;
      const char *key;
    } reqs[2] = {{DPD_ODE_NEEDS_CONST_SCHEDULE, "schedule"}, {DPD_ODE_NEEDS_NO_CLIPPING, "c"}};
    for (size_t k = 0; k < 2; k++) {
      dpd_ode_config cfg = dpd_ode_config_default();
      const dpd_schedule *s = cst;
      cfg.method = (*m)->id;
      cfg.grid = 5;
      if (reqs[k].flag == DPD_ODE_NEEDS_CONST_SCHEDULE) {
        s = sqrt_s; /* decreasing: eta~(1) = 0 */
      } else {
        cfg.c = 1.1; /* clipping at the current risk (mu, nu not frozen) */
      }
      if ((*m)->flags & reqs[k].flag) {
        char name[64];
        expect_einval(p, s, &cfg, reqs[k].key);
        {
          dpd_ode_result *res = NULL;
          dpd_err err;
          dpd_err_reset(&err);
          assert_int_equal(dpd_ode_solve(p, s, &cfg, &res, &err), DPD_EINVAL);
          snprintf(name, sizeof name, "method = %s", (*m)->name);
          if (strstr(err.reason, name) == NULL) {
            print_error("reason '%s' does not name \"%s\"\n", err.reason, name);
            fail();
          }
          print_message("%s: %s\n", (*m)->name, err.reason);
        }
        /* Frozen factors lift the clipping requirement. */
        if (reqs[k].flag == DPD_ODE_NEEDS_NO_CLIPPING) {
          dpd_ode_result *res;
          cfg.mu_frozen = 0.9;
          cfg.nu_frozen = 0.8;
          res = solve_ok(p, s, &cfg);
          dpd_ode_result_free(res);
        }
        violations++;
      } else {
        dpd_ode_result *res = solve_ok(p, s, &cfg);
        dpd_ode_result_free(res);
      }
    }
  }
  assert_int_equal(violations, 2); /* volterra: both */
  dpd_schedule_free(sqrt_s);
  dpd_schedule_free(cst);
  dpd_linreg_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(iso_const_schedule_matches_exponential_solution),
      cmocka_unit_test(frozen_factors_and_constant_noise_match_exponential_solution),
      cmocka_unit_test(iso_sqrt_schedule_matches_integrating_factor),
      cmocka_unit_test(grouped_system_matches_ungrouped_rk8pd_hyperbolic),
      cmocka_unit_test(grouped_system_matches_ungrouped_rk8pd_sqrt),
      cmocka_unit_test(bounds_bracket_risk_for_levels_and_powerlaw),
      cmocka_unit_test(bounds_equal_risk_for_isotropic_spectrum),
      cmocka_unit_test(jtimes_matches_finite_differences),
      cmocka_unit_test(spgmr_converges_in_two_iterations_and_matches_sherman_morrison),
      cmocka_unit_test(bdf_and_adams_agree),
      cmocka_unit_test(queued_vector_kernels_match_immediate_bit_for_bit),
      cmocka_unit_test(release_jump_follows_last_step_noise),
      cmocka_unit_test(invalid_config_is_rejected_with_key_value_and_range),
      cmocka_unit_test(solver_failure_reports_cvode_flag_and_time),
      cmocka_unit_test(divergent_risk_is_reported_as_nonfinite),
      cmocka_unit_test(method_table_is_consistent_and_lookup_rejects_unknown_names),
      cmocka_unit_test(every_method_solves_const_unclipped_problem_like_bdf),
      cmocka_unit_test(method_requirement_violation_is_einval_naming_key_and_method),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
