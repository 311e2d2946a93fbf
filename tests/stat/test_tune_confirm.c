/* Statistical test: the tuned optimum of the deterministic equivalent, re-simulated.
 * SPDX-License-Identifier: MIT
 *
 * For each schedule family (output perturbation = const, constant noise = sqrt, optimal) the
 * tuner minimises the ODE's released risk R_out over (c, schedule parameters) at d = 400,
 * gamma = 0.25 (n = 1600), rho = 1, zeta = 0.5, on an anisotropic three-level spectrum and on
 * the isotropic one; DP-SGD is then simulated at the optimum with 64 replicates (fixed seeds).
 * Criterion: |R_out(optimum) - mean_sim| <= 3 SE of the simulated released risk. Power: the
 * same simulation compared with R_out of the ODE solved with rho * 0.8 (privacy-noise variance
 * off by 56%) must violate the criterion, so a tuner that optimised a wrong objective, or an
 * ODE/simulation mismatch at the tuned point, would be detected. */
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "dpd_test.h"
#include "dpdyn/dpd.h"

enum { D = 400, N = 4 * D, SEEDS = 64 };

typedef struct {
  const char *name;
  dpd_schedule_kind kind;
  int levels;
} case_def;

static void run_case(const case_def *cs, uint64_t seed) {
  static const double level_values[] = {0.4, 1.0, 2.2};
  static const size_t level_mult[] = {160, 160, 80};
  const double gamma = (double)D / (double)N, rho = 1.0, zeta = 0.5;
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_linreg_sim_config simc = dpd_linreg_sim_config_default();
  dpd_tune_config tc = dpd_tune_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_linreg_sim_result *sim = NULL;
  dpd_tune_result res;
  dpd_err err;
  double gap_se, wrong, wrong_se;

  pc.d = D;
  if (cs->levels) {
    pc.spectrum = DPD_SPECTRUM_LEVELS;
    pc.values = level_values;
    pc.mult = level_mult;
    pc.nvalues = 3;
  }
  pc.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&pc, &problem, &err), DPD_OK);

  sc.kind = cs->kind;
  sc.gamma = gamma;
  sc.rho = rho;
  tc.ode.gamma = gamma;
  tc.ode.zeta = zeta;
  tc.ode.rho = rho;
  tc.ode.c = 1.0;
  assert_int_equal(dpd_tune_run(problem, &sc, &tc, &res, &err), DPD_OK);
  assert_int_equal(dpd_schedule_create(&res.schedule, &schedule, &err), DPD_OK);

  simc.n = N;
  simc.zeta = zeta;
  simc.c = res.c;
  simc.rho = rho;
  simc.seeds = SEEDS;
  simc.seed = seed;
  simc.grid = 2;
  assert_int_equal(dpd_linreg_sim_run(problem, schedule, &simc, &sim, &err), DPD_OK);
  gap_se = fabs(res.risk - sim->final_risk) / sim->final_risk_se;

  tc.ode.rho = 0.8 * rho;
  if (cs->kind == DPD_SCHEDULE_OPTIMAL) {
    res.schedule.rho = tc.ode.rho;
    res.schedule.c3 *= 0.8; /* keep the same schedule: c3/rho unchanged */
  }
  assert_int_equal(dpd_tune_risk_eval(problem, &res.schedule, res.c, &tc, &wrong, &err), DPD_OK);
  wrong_se = fabs(wrong - sim->final_risk) / sim->final_risk_se;

  print_message("[%s] seed %llu: c = %.4g, eta~(0) = %.4g: R_out = %.6g, simulated %.6g +- %.2g "
                "(gap %.2f SE); ODE with rho*0.8: %.6g (gap %.1f SE)\n",
                cs->name, (unsigned long long)seed, res.c, res.eta0, res.risk, sim->final_risk,
                sim->final_risk_se, gap_se, wrong, wrong_se);
  if (!(gap_se <= 3.0)) {
    print_error("[%s] seed %llu: tuned prediction %.6g is %.2f SE from the simulation %.6g\n",
                cs->name, (unsigned long long)seed, res.risk, gap_se, sim->final_risk);
    fail();
  }
  if (!(wrong_se > 3.0)) {
    print_error("[%s] the criterion does not detect a wrong ODE (%.2f SE)\n", cs->name, wrong_se);
    fail();
  }
  dpd_linreg_sim_result_free(sim);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
}

static void tuned_output_perturbation_is_confirmed(void **state) {
  static const case_def cs = {"const iso", DPD_SCHEDULE_CONST, 0};
  (void)state;
  run_case(&cs, 101);
}

static void tuned_constant_noise_is_confirmed(void **state) {
  static const case_def cs = {"sqrt levels", DPD_SCHEDULE_SQRT, 1};
  (void)state;
  run_case(&cs, 202);
}

static void tuned_optimal_schedule_is_confirmed(void **state) {
  static const case_def iso = {"optimal iso", DPD_SCHEDULE_OPTIMAL, 0};
  static const case_def levels = {"optimal levels", DPD_SCHEDULE_OPTIMAL, 1};
  (void)state;
  run_case(&iso, 303);
  run_case(&levels, 404);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tuned_output_perturbation_is_confirmed),
      cmocka_unit_test(tuned_constant_noise_is_confirmed),
      cmocka_unit_test(tuned_optimal_schedule_is_confirmed),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
