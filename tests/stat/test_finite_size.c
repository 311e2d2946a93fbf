/* Statistical test: the finite-size-corrected risk ODE (docs/finite_size.md) against DP-SGD.
 * SPDX-License-Identifier: MIT
 *
 * Setting: n = 4d, zeta = 0.5, aggressive clipping c = 0.5 = zeta, rho = 2, the sqrt (constant
 * noise) schedule with eta0 = 1, theta* random, 1024 replicates (the simulator's seeds redraw the
 * data, the label noise and the privacy noise; theta* is fixed), grid of 101 times.
 * Criteria (SE = the simulation's standard error at that time):
 *  - steep spectra (power law alpha = 1 and 1.5): the corrected ODE within 2.5 SE on the released
 *    risk and within 4 SE at every one of the 100 grid times, while the uncorrected ODE is more
 *    than 4 SE off on the released risk (negative control). The grid bound is the family-wise one:
 *    on steep spectra the top directions relax within a few steps, so the simulated mean is
 *    nearly independent from one grid time to the next (n/100 steps apart), and the largest of
 *    100 independent |z| exceeds 3.5 with probability 4.6 % for an exact theory (4.0: 0.6 %).
 *    Measured: power law 1.5, d = 2000 reached 3.20 with 1024 replicates of this seed
 *    (docs/finite_size.md §4) and 3.05 with the 512 that the slow variant now runs; the others
 *    stay within 3.01. The grid starts at the first step: at alpha = 1.5 the top
 *    direction carries up to 40 % of the risk (lambda_1/d = 0.39); its exact integral over g_1
 *    and the conditioning of every other factor on it (docs/finite_size.md §2) follow it there
 *    (the first-order expansion in a_1^2/(2P) was 8.5 SE off at t = 0.01). theta* is the draw of
 *    problem seed 7. Other draws (or theta* flat) show an early-time gap of the ODE at power law
 *    1.5, 0.5-1 % below DP-SGD and up to 4.0 SE at t <= 0.05, most likely the continuous-time
 *    equation against the discrete step (docs/finite_size.md §4, "An early-time gap"). The
 *    released risk stays within 1.3 SE.
 *  - isotropic and two-level spectra: the corrected ODE within 2 SE on the released risk and
 *    4 SE on the grid; it moves the released risk by O(1/d) (printed).
 * This file runs the steep spectra at d = 400; test_finite_size_flat.c the flat ones, and the slow
 * variant test_finite_size_slow.c d = 1000 and 2000 and the corrected SDE (label "slow"). */
#include <stdlib.h>

#include "dpd_test.h"
#include "dpdyn/dpd.h"

typedef struct {
  const char *name;
  dpd_spectrum_kind spectrum;
  double alpha;
  size_t d;
  int steep; /* 1: the uncorrected ODE must be > 4 SE off */
  int flat;  /* theta* flat (equal energy in every direction) in place of problem seed 7's draw */
  size_t seeds; /* replicates of DP-SGD (0: SEEDS) */
} fs_case;

enum { SEEDS = 1024, GRID = 101 };

static void run_case(const fs_case *cs) {
  static const double values[] = {4.0, 0.5};
  size_t mult[2];
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_linreg_sim_config simc = dpd_linreg_sim_config_default();
  dpd_ode_config oc = dpd_ode_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_linreg_sim_result *sim = NULL;
  dpd_ode_result *on = NULL, *off = NULL;
  dpd_err err;
  const size_t d = cs->d, n = 4 * d;
  const double gamma = 0.25, rho = 2.0, zeta = 0.5, c = 0.5;
  double z_on, z_off, worst = 0.0, t_worst = 0.0;

  mult[0] = d / 10;
  mult[1] = d - d / 10;
  pc.d = d;
  pc.spectrum = cs->spectrum;
  pc.alpha = cs->alpha;
  pc.values = values;
  pc.mult = mult;
  pc.nvalues = 2;
  pc.seed = 7;
  if (cs->flat) {
    pc.theta = DPD_THETA_FLAT;
  }
  assert_int_equal(dpd_linreg_problem_create(&pc, &problem, &err), DPD_OK);
  sc.kind = DPD_SCHEDULE_SQRT;
  sc.eta0 = 1.0;
  sc.gamma = gamma;
  sc.rho = rho;
  assert_int_equal(dpd_schedule_create(&sc, &schedule, &err), DPD_OK);

  simc.n = n;
  simc.zeta = zeta;
  simc.c = c;
  simc.rho = rho;
  simc.seeds = cs->seeds > 0 ? cs->seeds : SEEDS;
  simc.seed = 15;
  simc.grid = GRID;
  assert_int_equal(dpd_linreg_sim_run(problem, schedule, &simc, &sim, &err), DPD_OK);

  oc.gamma = gamma;
  oc.zeta = zeta;
  oc.c = c;
  oc.rho = rho;
  oc.grid = GRID;
  assert_int_equal(dpd_ode_solve(problem, schedule, &oc, &off, &err), DPD_OK);
  oc.finite_size = DPD_FINITE_ON;
  assert_int_equal(dpd_ode_solve(problem, schedule, &oc, &on, &err), DPD_OK);

  z_on = (on->final_risk - sim->final_risk) / sim->final_risk_se;
  z_off = (off->final_risk - sim->final_risk) / sim->final_risk_se;
  for (size_t j = 1; j < GRID; j++) {
    const double s = j + 1 == GRID ? sim->before_release : sim->risk_mean[j];
    const double se = j + 1 == GRID ? sim->before_release_se : sim->risk_se[j];
    const double z = (on->risk[j] - s) / se;
    if (fabs(z) > worst) {
      worst = fabs(z);
      t_worst = sim->t[j];
    }
  }
  print_message("[%s] sqrt(m2) = %.3f: released risk %.6g +- %.2g; corrected %+.2f SE (grid "
                "max %.3f SE at t = %.2f), uncorrected %+.2f SE; the correction moves it by "
                "%+.3f %%\n",
                cs->name, sqrt(dpd_linreg_m2(problem)), sim->final_risk, sim->final_risk_se, z_on,
                worst, t_worst, z_off, 100.0 * (on->final_risk / off->final_risk - 1.0));
  if (cs->steep) {
    assert_true(fabs(z_on) <= 2.5);
    assert_true(worst <= 4.0);
    assert_true(fabs(z_off) > 4.0); /* negative control: the asymptotic equivalent is rejected */
  } else {
    assert_true(fabs(z_on) <= 2.0);
    assert_true(worst <= 4.0);
  }
  dpd_ode_result_free(on);
  dpd_ode_result_free(off);
  dpd_linreg_sim_result_free(sim);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
}

#ifdef FS_SLOW
/* The SDE with the same corrected factors (dpd_linreg_sde_config.finite_size) against DP-SGD on
 * the power laws alpha = 1 and 1.5, d = 400 (the setting of run_case; independent seeds): the
 * released risk within 3 combined SE and every one of the 100 grid times within 4 combined SE
 * (the family-wise bound of run_case), where the uncorrected SDE is more than 4 combined SE off
 * on the released risk. At alpha = 1.5 the top directions are integrated exactly over their own
 * coordinate (docs/finite_size.md §2). */
static void sde_case(double alpha) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_linreg_sim_config simc = dpd_linreg_sim_config_default();
  dpd_linreg_sde_config ec = dpd_linreg_sde_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_linreg_sim_result *sim = NULL, *on = NULL, *off = NULL;
  dpd_err err;
  double z_on, z_off, worst = 0.0, t_worst = 0.0;
  pc.d = 400;
  pc.spectrum = DPD_SPECTRUM_POWERLAW;
  pc.alpha = alpha;
  pc.seed = 7;
  assert_int_equal(dpd_linreg_problem_create(&pc, &problem, &err), DPD_OK);
  sc.kind = DPD_SCHEDULE_SQRT;
  sc.eta0 = 1.0;
  sc.gamma = 0.25;
  sc.rho = 2.0;
  assert_int_equal(dpd_schedule_create(&sc, &schedule, &err), DPD_OK);
  simc.n = 1600;
  simc.zeta = 0.5;
  simc.c = 0.5;
  simc.rho = 2.0;
  simc.seeds = SEEDS;
  simc.seed = 15;
  simc.grid = GRID;
  assert_int_equal(dpd_linreg_sim_run(problem, schedule, &simc, &sim, &err), DPD_OK);
  ec.n = 1600;
  ec.zeta = 0.5;
  ec.c = 0.5;
  ec.rho = 2.0;
  ec.seeds = SEEDS;
  ec.seed = 16;
  ec.grid = GRID;
  assert_int_equal(dpd_linreg_sde_run(problem, schedule, &ec, &off, &err), DPD_OK);
  ec.finite_size = DPD_FINITE_ON;
  assert_int_equal(dpd_linreg_sde_run(problem, schedule, &ec, &on, &err), DPD_OK);
  z_on = (on->final_risk - sim->final_risk) / hypot(on->final_risk_se, sim->final_risk_se);
  z_off = (off->final_risk - sim->final_risk) / hypot(off->final_risk_se, sim->final_risk_se);
  for (size_t j = 1; j + 1 < GRID; j++) {
    const double z =
        (on->risk_mean[j] - sim->risk_mean[j]) / hypot(on->risk_se[j], sim->risk_se[j]);
    if (fabs(z) > worst) {
      worst = fabs(z);
      t_worst = sim->t[j];
    }
  }
  print_message("[sde, powerlaw %g, d = 400] released risk: corrected SDE %+.2f SE (grid max "
                "%.2f SE at t = %.2f), uncorrected %+.2f SE (combined SE)\n",
                alpha, z_on, worst, t_worst, z_off);
  assert_true(fabs(z_on) <= 3.0);
  assert_true(worst <= 4.0);
  assert_true(fabs(z_off) > 4.0);
  dpd_linreg_sim_result_free(on);
  dpd_linreg_sim_result_free(off);
  dpd_linreg_sim_result_free(sim);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
}

static void sde_corrected_matches_simulation(void **state) {
  (void)state;
  sde_case(1.0);
  sde_case(1.5);
}

static void steep_spectra_large_d(void **state) {
  /* 512 replicates (the first half of the 1024 streams): the simulation is 8 d^2 Gaussians per
   * replicate, 98 % of this test's time. The uncorrected ODE was 9.3, 21.8, 11.8 and 18-22 SE
   * off with 1024; with 512 its expected offset is those / sqrt 2 >= 6.6 SE, so the negative
   * control keeps its power (it misses 4 SE with probability < 1 %), and the corrected
   * criteria are in units of the larger SE. */
  static const fs_case cases[] = {
      {"powerlaw 1, d = 1000", DPD_SPECTRUM_POWERLAW, 1.0, 1000, 1, 0, 512},
      {"powerlaw 1.5, d = 1000", DPD_SPECTRUM_POWERLAW, 1.5, 1000, 1, 0, 512},
      {"powerlaw 1, d = 2000", DPD_SPECTRUM_POWERLAW, 1.0, 2000, 1, 0, 512},
      {"powerlaw 1.5, d = 2000", DPD_SPECTRUM_POWERLAW, 1.5, 2000, 1, 0, 512},
  };
  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    run_case(&cases[k]);
  }
}
#elif !defined(FS_FLAT)
static void steep_spectra_d400(void **state) {
  static const fs_case cases[] = {
      {"powerlaw 1, d = 400", DPD_SPECTRUM_POWERLAW, 1.0, 400, 1, 0, 0},
      {"powerlaw 1.5, d = 400", DPD_SPECTRUM_POWERLAW, 1.5, 400, 1, 0, 0},
      /* theta* flat: the top direction holds 31 % of the residual at t = 0; without the
       * conditioning on it the grid maximum was 4.26 SE at t = 0.02 */
      {"powerlaw 1.5, d = 400, theta* flat", DPD_SPECTRUM_POWERLAW, 1.5, 400, 1, 1, 0},
  };
  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    run_case(&cases[k]);
  }
}
#else
static void flat_spectra_d400(void **state) {
  static const fs_case cases[] = {
      {"iso, d = 400", DPD_SPECTRUM_ISO, 1.0, 400, 0, 0, 0},
      {"levels 4*40,0.5*360", DPD_SPECTRUM_LEVELS, 1.0, 400, 0, 0, 0},
  };
  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    run_case(&cases[k]);
  }
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
#if defined(FS_SLOW)
    cmocka_unit_test(sde_corrected_matches_simulation),
    cmocka_unit_test(steep_spectra_large_d),
#elif defined(FS_FLAT)
    cmocka_unit_test(flat_spectra_d400),
#else
    cmocka_unit_test(steep_spectra_d400),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
