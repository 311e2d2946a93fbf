/* Tests of the tuner (dpd_tune_run, dpd_tune_surface_eval; docs/math.md §1.7-1.8).
 * SPDX-License-Identifier: MIT
 *
 * Reference with a known optimum: isotropic spectrum, no clipping, no privacy, constant
 * schedule eta~ = eta. docs/math.md §1.7 ("sanity limits") gives the linear ODE
 *   dR/dt = a R + b,  a = -2 eta + gamma eta^2,  b = gamma eta^2 zeta^2 / 2,
 * so R_out(eta) = R(1) = e^a R0 + b (e^a - 1)/a in closed form, with the analytic derivative
 *   dR/deta = a' e^a R0 + b' (e^a - 1)/a + b (a a' e^a - a' (e^a - 1)) / a^2,
 *   a' = -2 + 2 gamma eta,  b' = gamma eta zeta^2.
 * The optimum eta* is the root of dR/deta on (0, 2/gamma), found independently of the tuner by
 * bisection to machine precision and confirmed against a fine grid. */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"
#include "dpdyn/tune.h"

/* ---- Helpers ------------------------------------------------------------------------------- */

static dpd_linreg_problem *make_iso(size_t d, double theta_norm) {
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = d;
  cfg.spectrum = DPD_SPECTRUM_ISO;
  cfg.theta = DPD_THETA_FLAT;
  cfg.theta_norm = theta_norm;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static dpd_linreg_problem *make_levels(void) {
  static const double values[] = {0.35, 1.1, 2.6};
  static const size_t mult[] = {40, 30, 10};
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = 80;
  cfg.spectrum = DPD_SPECTRUM_LEVELS;
  cfg.values = values;
  cfg.mult = mult;
  cfg.nvalues = 3;
  cfg.theta_norm = 1.21;
  cfg.seed = 11;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static double closed_risk(double eta, double gamma, double zeta, double r0) {
  double a = -2.0 * eta + gamma * eta * eta, b = 0.5 * gamma * eta * eta * zeta * zeta;
  return exp(a) * r0 + b * expm1(a) / a;
}

static double closed_risk_deriv(double eta, double gamma, double zeta, double r0) {
  double a = -2.0 * eta + gamma * eta * eta, b = 0.5 * gamma * eta * eta * zeta * zeta;
  double da = -2.0 + 2.0 * gamma * eta, db = gamma * eta * zeta * zeta;
  double ea = exp(a), em1 = expm1(a);
  return da * ea * r0 + db * em1 / a + b * (a * da * ea - da * em1) / (a * a);
}

/* eta* by bisection on the analytic derivative (negative at 0+, positive near 2/gamma). */
static double closed_argmin(double gamma, double zeta, double r0) {
  double lo = 1e-6, hi = 2.0 / gamma * (1.0 - 1e-9);
  assert_true(closed_risk_deriv(lo, gamma, zeta, r0) < 0.0);
  assert_true(closed_risk_deriv(hi, gamma, zeta, r0) > 0.0);
  for (int it = 0; it < 200; it++) {
    double mid = 0.5 * (lo + hi);
    if (closed_risk_deriv(mid, gamma, zeta, r0) < 0.0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

static dpd_tune_config private_config(double gamma, double rho) {
  dpd_tune_config cfg = dpd_tune_config_default();
  cfg.ode.gamma = gamma;
  cfg.ode.zeta = 0.55;
  cfg.ode.rho = rho;
  cfg.ode.c = 1.0;
  cfg.ode.rtol = 1e-10;
  cfg.ode.atol = 1e-14;
  return cfg;
}

static dpd_schedule_config family(dpd_schedule_kind kind, double gamma, double rho) {
  dpd_schedule_config sc = dpd_schedule_config_default();
  sc.kind = kind;
  sc.gamma = gamma;
  sc.rho = rho;
  return sc;
}

/* ---- Known optimum ------------------------------------------------------------------------- */

static void check_closed_form_optimum(double gamma, double zeta, double theta_norm) {
  dpd_linreg_problem *p = make_iso(7, theta_norm);
  double r0 = dpd_linreg_initial_risk(p);
  double eta_star = closed_argmin(gamma, zeta, r0), r_star = closed_risk(eta_star, gamma, zeta, r0);
  dpd_tune_config cfg = dpd_tune_config_default();
  dpd_schedule_config sc = family(DPD_SCHEDULE_CONST, gamma, INFINITY);
  dpd_tune_result res;
  dpd_err err;
  /* The fine grid agrees with the bisection: no grid point below R(eta*). */
  for (int k = 1; k < 20000; k++) {
    double eta = (2.0 / gamma) * k / 20000.0;
    assert_true(closed_risk(eta, gamma, zeta, r0) >= r_star * (1.0 - 1e-15));
  }
  cfg.params = DPD_TUNE_ETA0;
  cfg.ode.gamma = gamma;
  cfg.ode.zeta = zeta;
  cfg.ode.rtol = 1e-11;
  cfg.ode.atol = 1e-15;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  print_message("gamma %.3g: eta* = %.12g, tuned %.12g (rel %.2g); R* = %.15g, tuned %.15g "
                "(rel %.2g); %zu evaluations, %zu Brent iterations\n",
                gamma, eta_star, res.eta0, fabs(res.eta0 - eta_star) / eta_star, r_star, res.risk,
                fabs(res.risk - r_star) / r_star, res.evals, res.iterations);
  assert_rel(res.eta0, eta_star, 1e-6);
  assert_rel(res.risk, r_star, 1e-8);
  assert_int_equal(res.nvars, 1);
  assert_int_equal(res.params, DPD_TUNE_ETA0);
  assert_int_equal(res.at_bound, 0);
  assert_true(res.converged);
  assert_true(isinf(res.c));
  assert_true(res.release_jump == 0.0);
  dpd_linreg_problem_free(p);
}

static void tuner_finds_the_closed_form_optimum_of_eta0(void **state) {
  (void)state;
  check_closed_form_optimum(0.137, 0.61, 1.3);
  check_closed_form_optimum(0.0213, 0.47, 0.83);
  check_closed_form_optimum(0.71, 0.38, 1.9);
}

static void objective_is_the_ode_released_risk(void **state) {
  dpd_linreg_problem *p = make_iso(5, 1.3);
  dpd_tune_config cfg = dpd_tune_config_default();
  dpd_schedule_config sc = family(DPD_SCHEDULE_CONST, 0.137, INFINITY);
  double r0 = dpd_linreg_initial_risk(p), risk;
  (void)state;
  cfg.ode.gamma = 0.137;
  cfg.ode.zeta = 0.61;
  cfg.ode.rtol = 1e-11;
  cfg.ode.atol = 1e-15;
  sc.eta0 = 3.17;
  assert_int_equal(dpd_tune_risk_eval(p, &sc, INFINITY, &cfg, &risk, NULL), DPD_OK);
  assert_rel(risk, closed_risk(3.17, 0.137, 0.61, r0), 1e-9);
  dpd_linreg_problem_free(p);
}

/* ---- The optimum against the surface ------------------------------------------------------- */

static void check_not_beaten(const dpd_linreg_problem *p, dpd_schedule_kind kind, double gamma,
                             double rho) {
  enum { NC = 25, NE = 25 };
  dpd_tune_config cfg = private_config(gamma, rho);
  dpd_schedule_config sc = family(kind, gamma, rho);
  dpd_tune_result res;
  dpd_tune_grid grid;
  double c[NC], eta[NE], risk[NC * NE], best = INFINITY, eta_max;
  size_t failed = 99, beat = 0;
  dpd_err err;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  assert_int_equal(dpd_tune_eta0_max_get(&res.schedule, &cfg, &eta_max, &err), DPD_OK);
  grid.nc = NC;
  grid.neta = NE;
  grid.c_min = cfg.c_min;
  grid.c_max = cfg.c_max;
  grid.eta_min = eta_max * cfg.eta_min_fraction;
  grid.eta_max = eta_max;
  grid.eta_log = 1;
  for (int pass = 0; pass < 2; pass++) {
    grid.eta_log = pass == 0;
    if (pass == 1) {
      grid.eta_min = eta_max / NE; /* linear axis */
    }
    assert_int_equal(
        dpd_tune_surface_eval(p, &res.schedule, &cfg, &grid, c, eta, risk, &failed, &err), DPD_OK);
    assert_int_equal(failed, 0);
    assert_rel(c[0], cfg.c_min, 1e-15);
    assert_rel(c[NC - 1], cfg.c_max, 1e-15);
    assert_rel(eta[NE - 1], eta_max, 1e-15);
    for (size_t k = 0; k < NC * NE; k++) {
      best = fmin(best, risk[k]);
      beat += risk[k] < res.risk;
    }
  }
  print_message("%s gamma %.3g rho %.3g: optimum R_out %.10g at c %.4g eta~(0) %.4g (sup %.4g "
                "of limit %.4g); best grid value %.10g (%.3g%% above); %zu evaluations\n",
                kind == DPD_SCHEDULE_CONST    ? "const"
                : kind == DPD_SCHEDULE_SQRT   ? "sqrt"
                : kind == DPD_SCHEDULE_STEP   ? "step"
                : kind == DPD_SCHEDULE_COSINE ? "cosine"
                                              : "optimal",
                gamma, rho, res.risk, res.c, res.eta0, res.eta_sup, res.eta_limit, best,
                100.0 * (best / res.risk - 1.0), res.evals);
  assert_int_equal(beat, 0);
  assert_true(res.eta_sup <= cfg.safety * res.eta_limit * (1.0 + 1e-12));
  assert_true(res.c >= cfg.c_min && res.c <= cfg.c_max);
  assert_true(res.converged);
}

static void optimum_is_never_beaten_by_the_surface(void **state) {
  dpd_linreg_problem *iso = make_iso(9, 1.1), *levels = make_levels();
  (void)state;
  check_not_beaten(iso, DPD_SCHEDULE_CONST, 0.083, 1.3);
  check_not_beaten(iso, DPD_SCHEDULE_SQRT, 0.083, 1.3);
  check_not_beaten(iso, DPD_SCHEDULE_OPTIMAL, 0.083, 1.3);
  check_not_beaten(levels, DPD_SCHEDULE_SQRT, 0.21, 0.7);
  check_not_beaten(levels, DPD_SCHEDULE_OPTIMAL, 0.021, 2.3);
  check_not_beaten(iso, DPD_SCHEDULE_STEP, 0.057, 0.9);
  check_not_beaten(levels, DPD_SCHEDULE_COSINE, 0.057, 0.9);
  dpd_linreg_problem_free(iso);
  dpd_linreg_problem_free(levels);
}

/* ---- Constraints --------------------------------------------------------------------------- */

static void stability_limit_is_respected_when_it_binds(void **state) {
  /* With a small safety factor the unconstrained optimum lies beyond the admissible box: the
   * tuner must stop at the box edge, flag it, and never exceed it. */
  dpd_linreg_problem *p = make_iso(6, 1.4);
  dpd_tune_config cfg = dpd_tune_config_default();
  dpd_schedule_config sc = family(DPD_SCHEDULE_CONST, 0.137, INFINITY);
  dpd_tune_result res;
  dpd_err err;
  double limit;
  (void)state;
  cfg.params = DPD_TUNE_ETA0;
  cfg.ode.gamma = 0.137;
  cfg.safety = 0.13;
  limit = cfg.safety * 2.0 / cfg.ode.gamma; /* 1.9 < eta* = 2.6 */
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  assert_true(res.eta_sup <= limit * (1.0 + 1e-12));
  assert_rel(res.eta_sup, limit, 1e-3);
  assert_int_equal(res.at_bound, DPD_TUNE_ETA0);

  /* Increasing hyperbolic schedule (non-private): the sup is eta~(1) = eta0 / (1 + a). */
  sc = family(DPD_SCHEDULE_HYPERBOLIC, 0.137, INFINITY);
  sc.a = -0.4;
  cfg.safety = 0.99;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  assert_rel(res.eta_sup, res.eta0 / 0.6, 1e-12);
  assert_true(res.eta_sup <= 0.99 * 2.0 / 0.137 * (1.0 + 1e-12));

  /* Optimal family: sup eta~ = c1 / (gamma m). */
  sc = family(DPD_SCHEDULE_OPTIMAL, 0.137, 1.7);
  cfg = private_config(0.137, 1.7);
  cfg.safety = 0.3;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  assert_rel(res.eta_sup, res.schedule.c1 / (0.137 * res.offset_scale), 1e-12);
  assert_true(res.eta_sup <= 0.3 * 2.0 / 0.137 * (1.0 + 1e-12));
  dpd_linreg_problem_free(p);
}

static void optimal_family_tunes_the_identifiable_offset(void **state) {
  dpd_linreg_problem *p = make_iso(8, 1.05);
  dpd_tune_config cfg = private_config(0.047, 1.9);
  dpd_schedule_config sc = family(DPD_SCHEDULE_OPTIMAL, 0.047, 1.9);
  dpd_tune_result res, res_c2;
  dpd_err err;
  (void)state;
  /* c2 and c3 together: one variable m, reported as c2 = m, c3 = rho m. */
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  assert_int_equal(res.nvars, 3);
  assert_int_equal(res.params, DPD_TUNE_C | DPD_TUNE_C1 | DPD_TUNE_C2 | DPD_TUNE_C3);
  assert_int_equal(res.ignored, 0);
  assert_rel(res.schedule.c2, res.offset_scale, 1e-15);
  assert_rel(res.schedule.c3, 1.9 * res.offset_scale, 1e-15);
  /* c2 alone with c3 = 0 reaches the same optimum (the same two-parameter schedule). */
  cfg.params = DPD_TUNE_C | DPD_TUNE_C1 | DPD_TUNE_C2;
  sc.c3 = 0.0;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res_c2, &err), DPD_OK);
  assert_rel(res_c2.risk, res.risk, 1e-7);
  assert_rel(res_c2.offset_scale, res.offset_scale, 1e-2);
  /* rho = inf: c3 has no effect and is reported as ignored. */
  cfg = private_config(0.047, INFINITY);
  sc = family(DPD_SCHEDULE_OPTIMAL, 0.047, INFINITY);
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  assert_int_equal(res.ignored, DPD_TUNE_C3);
  assert_int_equal(res.params, DPD_TUNE_C | DPD_TUNE_C1 | DPD_TUNE_C2);
  dpd_linreg_problem_free(p);
}

static void results_do_not_depend_on_threads(void **state) {
  dpd_linreg_problem *p = make_levels();
  dpd_tune_config cfg = private_config(0.11, 1.3);
  dpd_schedule_config sc = family(DPD_SCHEDULE_SQRT, 0.11, 1.3);
  dpd_tune_result one, two;
  (void)state;
  cfg.threads = 1;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &one, NULL), DPD_OK);
  cfg.threads = 2;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &two, NULL), DPD_OK);
  assert_true(one.risk == two.risk && one.c == two.c && one.eta0 == two.eta0);
  assert_int_equal(one.evals, two.evals);
  dpd_linreg_problem_free(p);
}

static void ode_failures_are_rejected_not_fatal(void **state) {
  /* A tiny CVODE step budget makes the solves with large rates fail: the tuner must reject
   * those points and still return a finite optimum that is a valid evaluation. */
  dpd_linreg_problem *p = make_iso(6, 1.2);
  dpd_tune_config cfg = private_config(0.137, 1.0);
  dpd_schedule_config sc = family(DPD_SCHEDULE_CONST, 0.137, 1.0);
  dpd_tune_result res;
  double risk;
  dpd_err err;
  (void)state;
  cfg.ode.rtol = 1e-8;
  cfg.ode.max_steps = 60;
  cfg.max_iter = 300;
  cfg.restarts = 1;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_OK);
  print_message("%zu of %zu evaluations failed; R_out %.6g\n", res.failed_evals, res.evals,
                res.risk);
  assert_true(res.failed_evals > 0);
  assert_true(res.failed_evals < res.evals);
  assert_true(isfinite(res.risk) && res.risk < 1.0);
  assert_int_equal(dpd_tune_risk_eval(p, &res.schedule, res.c, &cfg, &risk, &err), DPD_OK);
  assert_true(risk == res.risk);
  /* Every solve failing is an error, not a result. */
  cfg.ode.max_steps = 1;
  assert_int_equal(dpd_tune_run(p, &sc, &cfg, &res, &err), DPD_ENONFINITE);
  assert_non_null(strstr(err.reason, "pre-scan"));
  dpd_linreg_problem_free(p);
}

/* ---- Errors -------------------------------------------------------------------------------- */

static void expect_error(int status, const dpd_err *err, const char *needle) {
  assert_int_equal(status, DPD_EINVAL);
  if (strstr(err->reason, needle) == NULL) {
    print_error("reason '%s' lacks '%s'\n", err->reason, needle);
    fail();
  }
}

static void invalid_input_is_rejected_with_a_reason(void **state) {
  dpd_linreg_problem *p = make_iso(5, 1.0);
  dpd_tune_config cfg = private_config(0.2, 1.0), bad;
  dpd_schedule_config sc = family(DPD_SCHEDULE_CONST, 0.2, 1.0), bs;
  dpd_tune_result res;
  dpd_tune_grid grid = {3, 3, 0.1, 1.0, 0.1, 1.0, 0};
  double c[3], eta[3], risk[9], v;
  dpd_err err;
  static const double tt[] = {0.0, 1.0}, te[] = {1.0, 0.5};
  (void)state;

  bad = cfg;
  bad.ode.c = INFINITY;
  bad.params = DPD_TUNE_ETA0;
  expect_error(dpd_tune_run(p, &sc, &bad, &res, &err), &err, "'c': inf with rho");
  bad = cfg;
  bad.params = DPD_TUNE_A;
  expect_error(dpd_tune_run(p, &sc, &bad, &res, &err), &err, "do not belong to schedule 'const'");
  bs = sc;
  bs.kind = DPD_SCHEDULE_TABLE;
  bs.table_t = tt;
  bs.table_eta = te;
  bs.table_len = 2;
  expect_error(dpd_tune_run(p, &bs, &cfg, &res, &err), &err, "allowed for tuning");
  bad = cfg;
  bad.c_max = bad.c_min;
  expect_error(dpd_tune_run(p, &sc, &bad, &res, &err), &err, "'c_max'");
  bad = cfg;
  bad.safety = 1.0;
  expect_error(dpd_tune_run(p, &sc, &bad, &res, &err), &err, "'safety': 1");
  bad = cfg;
  bad.prescan = 2;
  expect_error(dpd_tune_run(p, &sc, &bad, &res, &err), &err, "'prescan': 2");
  bad = cfg;
  bad.xtol = 0.0;
  expect_error(dpd_tune_run(p, &sc, &bad, &res, &err), &err, "'xtol'");
  bad = cfg;
  bad.ode.rho = 0.0;
  expect_error(dpd_tune_run(p, &sc, &bad, &res, &err), &err, "'rho'");
  /* A fixed schedule beyond the stability limit (only c tuned). */
  bad = cfg;
  bad.params = DPD_TUNE_C;
  bs = sc;
  bs.eta0 = 10.5;
  expect_error(dpd_tune_run(p, &bs, &bad, &res, &err), &err, "'eta0'");
  /* An increasing schedule with privacy. */
  bs = family(DPD_SCHEDULE_HYPERBOLIC, 0.2, 1.0);
  bs.a = -0.5;
  expect_error(dpd_tune_run(p, &bs, &cfg, &res, &err), &err, "'a': -0.5");
  /* An optimal schedule whose gamma differs from the problem's. */
  bs = family(DPD_SCHEDULE_OPTIMAL, 0.3, 1.0);
  expect_error(dpd_tune_risk_eval(p, &bs, 1.0, &cfg, &v, &err), &err, "same gamma and rho");
  /* Direct evaluation beyond the stability limit. */
  bs = sc;
  bs.eta0 = 10.0;
  expect_error(dpd_tune_risk_eval(p, &bs, 1.0, &cfg, &v, &err), &err, "stability limit");
  /* Surface grids. */
  grid.nc = 0;
  expect_error(dpd_tune_surface_eval(p, &sc, &cfg, &grid, c, eta, risk, NULL, &err), &err,
               "'grid'");
  grid.nc = 3;
  grid.eta_min = 2.0;
  expect_error(dpd_tune_surface_eval(p, &sc, &cfg, &grid, c, eta, risk, NULL, &err), &err,
               "'eta_max'");
  /* Points beyond the stability limit are NAN, not errors. */
  grid.eta_min = 9.0;
  grid.eta_max = 11.0;
  {
    size_t failed = 0;
    assert_int_equal(dpd_tune_surface_eval(p, &sc, &cfg, &grid, c, eta, risk, &failed, &err),
                     DPD_OK);
    assert_int_equal(failed, 6);
    assert_true(isnan(risk[2]) && isnan(risk[1]) && isfinite(risk[0]));
  }
  dpd_linreg_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tuner_finds_the_closed_form_optimum_of_eta0),
      cmocka_unit_test(objective_is_the_ode_released_risk),
      cmocka_unit_test(optimum_is_never_beaten_by_the_surface),
      cmocka_unit_test(stability_limit_is_respected_when_it_binds),
      cmocka_unit_test(optimal_family_tunes_the_identifiable_offset),
      cmocka_unit_test(results_do_not_depend_on_threads),
      cmocka_unit_test(ode_failures_are_rejected_not_fatal),
      cmocka_unit_test(invalid_input_is_rejected_with_a_reason),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
