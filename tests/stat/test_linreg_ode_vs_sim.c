/* Statistical test: the deterministic equivalent (coupled risk ODEs) against
 * the DP-SGD simulation, over spectra, schedule families and clipping levels.
 * SPDX-License-Identifier: MIT
 *
 * Criterion (fixed seeds, d = 400, n = 4d, 64 replicates, rho = 1):
 *   |R_ode(final) - mean_sim(final)| <= 3 SE(final)   (released iterate), and
 *   |R_ode(t_j) - mean_sim(t_j)| <= max(3 SE(t_j), 3% of R_ode(t_j)) on the grid.
 * The ODE is exact only as d, n -> infinity (error O(log^2 n / sqrt n), docs/math.md
 * §1.7); at this size the finite-size bias is well under the tolerance, and a
 * mistake in either side (a wrong factor in a noise term, a wrong clipping
 * factor, a missing release jump) moves the gap by many standard errors.
 * That power is checked in every case: the ODE re-solved with the privacy
 * noise variance off by 56% (rho * 0.8 in the ODE only) and with the clipping
 * scale off by 50% must both violate the criterion. On the power-law spectrum (400 distinct
 * eigenvalues) the spectrally compressed ODE (linreg.h) must meet the same criterion. */
#include <stdlib.h>

#include "dpd_test.h"
#include "dpdyn/dpd.h"

typedef struct {
  const char *name;
  dpd_spectrum_kind spectrum;
  dpd_schedule_kind schedule;
  double c;
} case_def;

enum { D = 400, N = 4 * D, SEEDS = 64, GRID = 21 };

/* Largest violation ratio of the criterion (> 1 means the criterion fails). */
static double violation(const dpd_linreg_sim_result *sim, const dpd_ode_result *ode) {
  double worst = fabs(ode->final_risk - sim->final_risk) / (3.0 * sim->final_risk_se);
  for (size_t j = 0; j < GRID; j++) {
    double s = sim->risk_mean[j], se = sim->risk_se[j]; /* t = 1: before release, as the ODE */
    worst = fmax(worst, fabs(ode->risk[j] - s) / fmax(3.0 * se, 0.03 * ode->risk[j]));
  }
  return worst;
}

/* The criterion must reject an ODE solved with a wrong parameter. */
static void check_power(const case_def *cs, const dpd_linreg_problem *problem,
                        const dpd_schedule *schedule, const dpd_ode_config *oc,
                        const dpd_linreg_sim_result *sim) {
  dpd_ode_config wrong_rho = *oc, wrong_c = *oc;
  dpd_ode_result *ode = NULL;
  dpd_err err;
  double v_rho, v_c;
  wrong_rho.rho = 0.8 * oc->rho;
  wrong_c.c = 1.5 * oc->c;
  assert_int_equal(dpd_ode_solve(problem, schedule, &wrong_rho, &ode, &err), DPD_OK);
  v_rho = violation(sim, ode);
  dpd_ode_result_free(ode);
  assert_int_equal(dpd_ode_solve(problem, schedule, &wrong_c, &ode, &err), DPD_OK);
  v_c = violation(sim, ode);
  dpd_ode_result_free(ode);
  print_message("[%s] power: ODE with rho*0.8 violates by %.1fx, with c*1.5 by %.1fx\n", cs->name,
                v_rho, v_c);
  if (!(v_rho > 1.0) || !(v_c > 1.0)) {
    print_error("[%s] the criterion does not detect a wrong ODE (%.2f, %.2f)\n", cs->name, v_rho,
                v_c);
    fail();
  }
}

static void run_case(const case_def *cs, uint64_t seed) {
  static const double level_values[] = {0.4, 1.0, 2.2};
  static const size_t level_mult[] = {160, 160, 80};
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_linreg_sim_config simc = dpd_linreg_sim_config_default();
  dpd_ode_config oc = dpd_ode_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_linreg_sim_result *sim = NULL;
  dpd_ode_result *ode = NULL;
  dpd_err err;
  double gamma = (double)D / (double)N, rho = 1.0, zeta = 0.5;
  double worst = 0.0;

  pc.d = D;
  pc.spectrum = cs->spectrum;
  pc.alpha = 1.0;
  pc.values = level_values;
  pc.mult = level_mult;
  pc.nvalues = 3;
  pc.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&pc, &problem, &err), DPD_OK);

  sc.kind = cs->schedule;
  sc.eta0 = 1.3;
  sc.a = 2.0;
  sc.c1 = 0.6;
  sc.c2 = 0.5;
  sc.c3 = 0.8;
  sc.factor = 0.5;
  sc.drops = 3;
  sc.eta_min = 0.2;
  sc.gamma = gamma;
  sc.rho = rho;
  assert_int_equal(dpd_schedule_create(&sc, &schedule, &err), DPD_OK);

  /* One setting feeds both (linreg_setting.h): gamma = d/n, zeta, c, rho cannot disagree. */
  dpd_linreg_setting st = dpd_linreg_setting_default();
  st.n = N;
  st.zeta = zeta;
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
  oc.bounds = 1;
  assert_int_equal(dpd_ode_solve(problem, schedule, &oc, &ode, &err), DPD_OK);
  if (problem->ngroups > 100) {
    /* the spectrally compressed ODE (docs/ode.md) meets the same criterion */
    dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
    dpd_linreg_problem *cp = NULL;
    dpd_ode_result *ode_c = NULL;
    assert_int_equal(dpd_linreg_problem_compress(problem, &cc, &cp, &err), DPD_OK);
    assert_true(cp->compressed_bands > 0 && cp->ngroups < problem->ngroups);
    assert_int_equal(dpd_ode_solve(cp, schedule, &oc, &ode_c, &err), DPD_OK);
    print_message("[%s] compressed ODE (%zu of %zu groups): %.3g of the tolerance\n", cs->name,
                  cp->ngroups, problem->ngroups, violation(sim, ode_c));
    assert_true(violation(sim, ode_c) <= 1.0);
    dpd_ode_result_free(ode_c);
    dpd_linreg_problem_free(cp);
  }

  for (size_t j = 0; j < GRID; j++) {
    double s = sim->risk_mean[j], se = sim->risk_se[j]; /* t = 1: before release, as the ODE */
    double tol = fmax(3.0 * se, 0.03 * ode->risk[j]);
    double gap = fabs(ode->risk[j] - s);
    worst = fmax(worst, gap / tol);
    if (gap > tol) {
      print_error("[%s seed %llu] t = %.3f: ode %.6g sim %.6g +- %.3g (gap %.3g > tol %.3g)\n",
                  cs->name, (unsigned long long)seed, sim->t[j], ode->risk[j], s, se, gap, tol);
      fail();
    }
  }
  {
    double gap = fabs(ode->final_risk - sim->final_risk);
    print_message("[%s] final: ode %.6g sim %.6g +- %.3g -> %.2f SE; worst grid gap %.2f of "
                  "tolerance; clipped %.3f\n",
                  cs->name, ode->final_risk, sim->final_risk, sim->final_risk_se,
                  gap / sim->final_risk_se, worst, sim->clip_fraction_total);
    if (gap > 3.0 * sim->final_risk_se) {
      print_error("[%s seed %llu] final gap %.3g > 3 SE = %.3g\n", cs->name,
                  (unsigned long long)seed, gap, 3.0 * sim->final_risk_se);
      fail();
    }
  }
  check_power(cs, problem, schedule, &oc, sim);
  dpd_ode_result_free(ode);
  dpd_linreg_sim_result_free(sim);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
}

#define SCHEDULE_CASES(spec, sname)                                                                \
  {sname "/const/aggressive", spec, DPD_SCHEDULE_CONST, 0.5},                                      \
      {sname "/const/mild", spec, DPD_SCHEDULE_CONST, 3.0},                                        \
      {sname "/sqrt/aggressive", spec, DPD_SCHEDULE_SQRT, 0.5},                                    \
      {sname "/sqrt/mild", spec, DPD_SCHEDULE_SQRT, 3.0},                                          \
      {sname "/optimal/aggressive", spec, DPD_SCHEDULE_OPTIMAL, 0.5},                              \
      {sname "/optimal/mild", spec, DPD_SCHEDULE_OPTIMAL, 3.0},                                    \
      {sname "/hyperbolic/aggressive", spec, DPD_SCHEDULE_HYPERBOLIC, 0.5},                        \
      {sname "/hyperbolic/mild", spec, DPD_SCHEDULE_HYPERBOLIC, 3.0},                              \
      {sname "/step/aggressive", spec, DPD_SCHEDULE_STEP, 0.5},                                    \
      {sname "/step/mild", spec, DPD_SCHEDULE_STEP, 3.0},                                          \
      {sname "/cosine/aggressive", spec, DPD_SCHEDULE_COSINE, 0.5}, {                              \
    sname "/cosine/mild", spec, DPD_SCHEDULE_COSINE, 3.0                                           \
  }

static const case_def iso_cases[] = {SCHEDULE_CASES(DPD_SPECTRUM_ISO, "iso")};
static const case_def level_cases[] = {SCHEDULE_CASES(DPD_SPECTRUM_LEVELS, "levels")};
static const case_def power_cases[] = {SCHEDULE_CASES(DPD_SPECTRUM_POWERLAW, "powerlaw1")};

static void ode_matches_simulation_isotropic(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof iso_cases / sizeof *iso_cases; k++) {
    run_case(&iso_cases[k], 11 + k);
  }
}

static void ode_matches_simulation_three_levels(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof level_cases / sizeof *level_cases; k++) {
    run_case(&level_cases[k], 101 + k);
  }
}

static void ode_matches_simulation_power_law(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof power_cases / sizeof *power_cases; k++) {
    run_case(&power_cases[k], 1001 + k);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ode_matches_simulation_isotropic),
      cmocka_unit_test(ode_matches_simulation_three_levels),
      cmocka_unit_test(ode_matches_simulation_power_law),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
