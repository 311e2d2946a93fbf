/* Statistical test: the deterministic equivalent with non-Gaussian label noise (Laplace,
 * Rademacher, Student-t) against the DP-SGD simulation drawing z from the same law.
 * SPDX-License-Identifier: MIT
 *
 * Criterion (as tests/stat/test_linreg_ode_vs_sim.c; fixed seeds, d = 400, n = 4d,
 * 64 replicates, rho = 1, zeta = 0.5):
 *   |R_ode(final) - mean_sim(final)| <= 3 SE(final)   (released iterate), and
 *   |R_ode(t_j) - mean_sim(t_j)| <= max(3 SE(t_j), 3% of R_ode(t_j)) on the grid,
 * for every law at aggressive (c = 0.5 = zeta) and mild (c = 3 = 6 zeta) clipping on the
 * isotropic spectrum, plus anisotropic (three-level) cases. The ODE uses the clipping
 * factors of the law (clip.h: dpd_clip_noise_factors_eval), the simulation draws z from it
 * (linreg.h: the label-noise stream rule).
 * Power: the same simulation against the ODE solved with Gaussian label noise of the same
 * variance (the factors the ODE used before the laws existed). With aggressive clipping the
 * residual r = sqrt(2R) Z - z is dominated by z late in training and the laws' P(|r| <= c)
 * differ (at R = 0.085: mu = 0.560 Gaussian, 0.596 Laplace, 0.492 Rademacher, whose |z| = c
 * exactly, 0.627 Student nu = 3, 0.589 nu = 5), so the criterion must reject the Gaussian
 * ODE there; measured violations 3.3x-6.7x. With mild clipping the laws differ only through
 * the mass of |z| beyond c = 6 zeta; the violation is printed for every case and asserted
 * only where it is visible at this size (see the comment at mild_cases). */
#include <stdlib.h>

#include "dpd_test.h"
#include "dpdyn/dpd.h"

#include <gsl/gsl_errno.h>

typedef struct {
  const char *name;
  dpd_noise_law law;
  double nu; /* Student-t degrees of freedom */
  dpd_spectrum_kind spectrum;
  double c;
  int power; /* 1: the Gaussian-law ODE must violate the criterion */
} case_def;

enum { D = 400, N = 4 * D, SEEDS = 64, GRID = 21 };

static const double zeta = 0.5, rho = 1.0, eta0 = 3.0;

/* Largest violation ratio of the criterion (> 1 means the criterion fails). */
static double violation(const dpd_linreg_sim_result *sim, const dpd_ode_result *ode) {
  double worst = fabs(ode->final_risk - sim->final_risk) / (3.0 * sim->final_risk_se);
  for (size_t j = 0; j < GRID; j++) {
    double s = sim->risk_mean[j], se = sim->risk_se[j]; /* t = 1: before release, as the ODE */
    worst = fmax(worst, fabs(ode->risk[j] - s) / fmax(3.0 * se, 0.03 * ode->risk[j]));
  }
  return worst;
}

static void run_case(const case_def *cs, uint64_t seed) {
  static const double level_values[] = {0.4, 1.0, 2.2};
  static const size_t level_mult[] = {160, 160, 80};
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_linreg_sim_config simc = dpd_linreg_sim_config_default();
  dpd_ode_config oc = dpd_ode_config_default(), gauss;
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_linreg_sim_result *sim = NULL;
  dpd_ode_result *ode = NULL, *ode_gauss = NULL;
  dpd_err err;
  const double gamma = (double)D / (double)N;
  double worst = 0.0, v_gauss, gap;

  pc.d = D;
  pc.spectrum = cs->spectrum;
  pc.values = level_values;
  pc.mult = level_mult;
  pc.nvalues = 3;
  pc.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&pc, &problem, &err), DPD_OK);

  /* Output perturbation (docs/math.md §1.8), eta~ = 3 < 2/gamma = 8: training carries no privacy
   * noise, so the risk before release is set by the clipping factors alone (the balance of
   * descent mu R and SGD noise nu P), and all privacy noise comes in the release jump
   * 2 c^2 gamma^2 eta~^2 / rho^2 (0.28 at c = 0.5, 10.1 at c = 3). With privacy noise during
   * training (sqrt or optimal schedules) it dominates the risk and the laws' final risks at
   * c = 0.5 differ by only 1-3% (measured with the ODE), below the 3 SE resolution. */
  sc.kind = DPD_SCHEDULE_CONST;
  sc.eta0 = eta0;
  sc.gamma = gamma;
  sc.rho = rho;
  assert_int_equal(dpd_schedule_create(&sc, &schedule, &err), DPD_OK);

  /* One setting feeds both (linreg_setting.h). */
  dpd_linreg_setting st = dpd_linreg_setting_default();
  st.n = N;
  st.zeta = zeta;
  st.noise = cs->law;
  st.noise_nu = cs->nu;
  st.c = cs->c;
  st.rho = rho;
  simc = dpd_linreg_sim_config_init(&st);
  simc.seeds = SEEDS;
  simc.seed = seed;
  simc.grid = GRID;
  assert_int_equal(dpd_linreg_sim_run(problem, schedule, &simc, &sim, &err), DPD_OK);

  oc = dpd_ode_config_init(&st, problem->d);
  assert_true(oc.gamma == gamma);
  oc.grid = GRID;
  if (dpd_ode_solve(problem, schedule, &oc, &ode, &err) != DPD_OK) {
    print_error("[%s] ODE: %s\n", cs->name, err.reason);
    fail();
  }
  gauss = oc;
  gauss.noise = DPD_NOISE_GAUSSIAN;
  assert_int_equal(dpd_ode_solve(problem, schedule, &gauss, &ode_gauss, &err), DPD_OK);

  for (size_t j = 0; j < GRID; j++) {
    double s = sim->risk_mean[j], se = sim->risk_se[j]; /* t = 1: before release, as the ODE */
    double tol = fmax(3.0 * se, 0.03 * ode->risk[j]);
    double g = fabs(ode->risk[j] - s);
    worst = fmax(worst, g / tol);
    if (g > tol) {
      print_error("[%s seed %llu] t = %.3f: ode %.6g sim %.6g +- %.3g (gap %.3g > tol %.3g)\n",
                  cs->name, (unsigned long long)seed, sim->t[j], ode->risk[j], s, se, g, tol);
      fail();
    }
  }
  gap = fabs(ode->final_risk - sim->final_risk);
  v_gauss = violation(sim, ode_gauss);
  print_message("[%-22s] final: ode %.6g sim %.6g +- %.3g -> %.2f SE; worst grid gap %.2f of "
                "tolerance; clipped %.3f | Gaussian-law ODE %.6g: %.2f SE, violation %.2fx\n",
                cs->name, ode->final_risk, sim->final_risk, sim->final_risk_se,
                gap / sim->final_risk_se, worst, sim->clip_fraction_total, ode_gauss->final_risk,
                fabs(ode_gauss->final_risk - sim->final_risk) / sim->final_risk_se, v_gauss);
  if (gap > 3.0 * sim->final_risk_se) {
    print_error("[%s seed %llu] final gap %.3g > 3 SE = %.3g\n", cs->name, (unsigned long long)seed,
                gap, 3.0 * sim->final_risk_se);
    fail();
  }
  if (cs->power && !(v_gauss > 1.0)) {
    print_error("[%s seed %llu] the criterion does not reject the Gaussian-law ODE (%.2f)\n",
                cs->name, (unsigned long long)seed, v_gauss);
    fail();
  }
  dpd_ode_result_free(ode_gauss);
  dpd_ode_result_free(ode);
  dpd_linreg_sim_result_free(sim);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
}

static const case_def aggressive_cases[] = {
    {"laplace/aggressive", DPD_NOISE_LAPLACE, 5.0, DPD_SPECTRUM_ISO, 0.5, 1},
    {"rademacher/aggressive", DPD_NOISE_RADEMACHER, 5.0, DPD_SPECTRUM_ISO, 0.5, 1},
    {"student3/aggressive", DPD_NOISE_STUDENT, 3.0, DPD_SPECTRUM_ISO, 0.5, 1},
    {"student5/aggressive", DPD_NOISE_STUDENT, 5.0, DPD_SPECTRUM_ISO, 0.5, 1},
};

/* Mild clipping, c = 3 = 6 zeta: only the mass of |z| beyond about c matters. At the risk
 * reached late in training (R = 0.085) the ratio nu/mu that sets the stationary risk is
 * 1.0000 (Gaussian), 0.9981 (Laplace), 1.0000 (Rademacher: |z| = zeta, never clipped),
 * 0.9904 (Student nu = 5) and 0.9154 (Student nu = 3), and the ODE's risk before release is
 * 0.0850, 0.0847, 0.0850, 0.0838 and 0.0746. Laplace, Rademacher and Student nu = 5 differ
 * from the Gaussian law by 0-1.4%, under the criterion's 3% floor on the grid, and the
 * released risk (10.2) is dominated by the law-independent release noise (SE 0.09): at this
 * size they are indistinguishable from Gaussian noise (measured violations of the
 * Gaussian-law ODE 0.39x, 0.89x and 0.42x), and the power check is not asserted for them.
 * Student nu = 3 (12% lower) is rejected (3.9x) and asserted. The released risk of
 * rademacher/mild (seed 42) lies 2.7 SE above the ODE; the Gaussian law with the same seed,
 * which shares g and xi with it (linreg.h stream rule), lies 2.8 SE above too: that is the
 * release noise of this seed, not the law. */
static const case_def mild_cases[] = {
    {"laplace/mild", DPD_NOISE_LAPLACE, 5.0, DPD_SPECTRUM_ISO, 3.0, 0},
    {"rademacher/mild", DPD_NOISE_RADEMACHER, 5.0, DPD_SPECTRUM_ISO, 3.0, 0},
    {"student3/mild", DPD_NOISE_STUDENT, 3.0, DPD_SPECTRUM_ISO, 3.0, 1},
    {"student5/mild", DPD_NOISE_STUDENT, 5.0, DPD_SPECTRUM_ISO, 3.0, 0},
};

static const case_def level_cases[] = {
    {"levels/rademacher/aggr", DPD_NOISE_RADEMACHER, 5.0, DPD_SPECTRUM_LEVELS, 0.5, 1},
    {"levels/student3/aggr", DPD_NOISE_STUDENT, 3.0, DPD_SPECTRUM_LEVELS, 0.5, 1},
};

static void ode_matches_simulation_aggressive_clipping(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof aggressive_cases / sizeof *aggressive_cases; k++) {
    run_case(&aggressive_cases[k], 21 + k);
  }
}

static void ode_matches_simulation_mild_clipping(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof mild_cases / sizeof *mild_cases; k++) {
    run_case(&mild_cases[k], 41 + k);
  }
}

static void ode_matches_simulation_three_levels(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof level_cases / sizeof *level_cases; k++) {
    run_case(&level_cases[k], 61 + k);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ode_matches_simulation_aggressive_clipping),
      cmocka_unit_test(ode_matches_simulation_mild_clipping),
      cmocka_unit_test(ode_matches_simulation_three_levels),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
