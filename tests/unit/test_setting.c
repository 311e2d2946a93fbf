/* The setting shared by the simulation, the SDE and the ODE (linreg_setting.h): configurations
 * built from one setting agree field by field, dpd_linreg_setting_check rejects every mismatch
 * with a message naming the field and both values, and results record what they were computed
 * with and follow one release convention.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/dpd.h"

enum { D = 131 };

/* A setting far from the defaults, every field set. */
static dpd_linreg_setting odd_setting(void) {
  dpd_linreg_setting s = dpd_linreg_setting_default();
  s.n = 347;
  s.zeta = 0.713;
  s.noise = DPD_NOISE_STUDENT;
  s.noise_nu = 4.7;
  s.c = 1.37;
  s.rho = 0.83;
  return s;
}

static void default_setting_is_the_default_of_every_config(void **state) {
  (void)state;
  const dpd_linreg_setting s = dpd_linreg_setting_default();
  const dpd_linreg_sim_config sc = dpd_linreg_sim_config_default();
  const dpd_linreg_sde_config ec = dpd_linreg_sde_config_default();
  const dpd_ode_config oc = dpd_ode_config_default();
  assert_true(s.n == sc.n && s.n == ec.n);
  assert_true(s.zeta == sc.zeta && s.zeta == ec.zeta && s.zeta == oc.zeta);
  assert_true(s.noise == sc.noise && s.noise == ec.noise && s.noise == oc.noise);
  assert_true(s.noise_nu == sc.noise_nu && s.noise_nu == ec.noise_nu && s.noise_nu == oc.noise_nu);
  assert_true(isinf(s.c) && isinf(sc.c) && isinf(ec.c) && isinf(oc.c));
  assert_true(isinf(s.rho) && isinf(sc.rho) && isinf(ec.rho) && isinf(oc.rho));
}

static void configs_built_from_one_setting_share_gamma_zeta_c_rho(void **state) {
  (void)state;
  const dpd_linreg_setting s = odd_setting();
  const dpd_linreg_sim_config sc = dpd_linreg_sim_config_init(&s);
  const dpd_linreg_sde_config ec = dpd_linreg_sde_config_init(&s);
  const dpd_ode_config oc = dpd_ode_config_init(&s, D);
  dpd_err err;

  /* The ODE's gamma is d/n, and the other fields are the simulation's. */
  assert_true(oc.gamma == (double)D / (double)sc.n);
  assert_true(oc.gamma == (double)D / (double)ec.n);
  assert_true(oc.zeta == sc.zeta && oc.zeta == ec.zeta && oc.zeta == 0.713);
  assert_true(oc.noise == sc.noise && oc.noise == ec.noise && oc.noise == DPD_NOISE_STUDENT);
  assert_true(oc.noise_nu == sc.noise_nu && oc.noise_nu == ec.noise_nu && oc.noise_nu == 4.7);
  assert_true(oc.c == sc.c && oc.c == ec.c && oc.c == 1.37);
  assert_true(oc.rho == sc.rho && oc.rho == ec.rho && oc.rho == 0.83);
  assert_true(sc.n == 347 && ec.n == 347);
  /* The rest of each config is its default. */
  assert_true(sc.seeds == dpd_linreg_sim_config_default().seeds);
  assert_true(sc.grid == dpd_linreg_sim_config_default().grid);
  assert_true(ec.dt == dpd_linreg_sde_config_default().dt);
  assert_true(oc.grid == dpd_ode_config_default().grid);
  assert_true(oc.rtol == dpd_ode_config_default().rtol);
  /* The setting comes back out of the configs. */
  const dpd_linreg_setting s1 = dpd_linreg_sim_config_setting_get(&sc);
  const dpd_linreg_setting s2 = dpd_linreg_sde_config_setting_get(&ec);
  assert_true(s1.n == s.n && s1.zeta == s.zeta && s1.noise == s.noise &&
              s1.noise_nu == s.noise_nu && s1.c == s.c && s1.rho == s.rho);
  assert_true(s2.n == s.n && s2.zeta == s.zeta && s2.noise == s.noise &&
              s2.noise_nu == s.noise_nu && s2.c == s.c && s2.rho == s.rho);
  /* Every combination passes the check, with the setting or without it. */
  assert_int_equal(dpd_linreg_setting_check(&s, D, &sc, &ec, &oc, &err), DPD_OK);
  assert_int_equal(dpd_linreg_setting_check(NULL, D, &sc, &ec, &oc, &err), DPD_OK);
  assert_int_equal(dpd_linreg_setting_check(NULL, D, NULL, &ec, &oc, &err), DPD_OK);
  assert_int_equal(dpd_linreg_setting_check(NULL, D, &sc, NULL, &oc, &err), DPD_OK);
  assert_int_equal(dpd_linreg_setting_check(&s, 0, &sc, &ec, NULL, &err), DPD_OK);
  assert_int_equal(dpd_linreg_setting_check(NULL, 0, NULL, NULL, &oc, &err), DPD_OK);
  /* A gamma typed with 15 digits passes; n = 0 gives gamma = inf, which the solver rejects. */
  dpd_ode_config typed = oc;
  typed.gamma = 0.377521613832853; /* 131/347 */
  assert_int_equal(dpd_linreg_setting_check(&s, D, NULL, NULL, &typed, &err), DPD_OK);
  dpd_linreg_setting s0 = s;
  s0.n = 0;
  assert_true(isinf(dpd_ode_config_init(&s0, D).gamma));
}

/* Expects DPD_EINVAL whose reason contains every string of `want` (NULL-terminated). */
static void expect_mismatch(const dpd_linreg_setting *s, size_t d, const dpd_linreg_sim_config *sc,
                            const dpd_linreg_sde_config *ec, const dpd_ode_config *oc,
                            const char *const *want) {
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_linreg_setting_check(s, d, sc, ec, oc, &err), DPD_EINVAL);
  assert_int_equal(err.status, DPD_EINVAL);
  for (const char *const *w = want; *w != NULL; w++) {
    if (strstr(err.reason, *w) == NULL) {
      print_error("reason '%s' lacks \"%s\"\n", err.reason, *w);
      fail();
    }
  }
  print_message("%s\n", err.reason);
}

static void check_names_the_field_and_both_values(void **state) {
  (void)state;
  const dpd_linreg_setting s = odd_setting();
  const dpd_linreg_sim_config sc0 = dpd_linreg_sim_config_init(&s);
  const dpd_linreg_sde_config ec0 = dpd_linreg_sde_config_init(&s);
  const dpd_ode_config oc0 = dpd_ode_config_init(&s, D);
  dpd_linreg_sim_config sc;
  dpd_linreg_sde_config ec;
  dpd_ode_config oc;

  /* Built separately: the simulation at zeta 0.713, the ODE at 0.9. */
  oc = oc0, oc.zeta = 0.9;
  expect_mismatch(NULL, D, &sc0, NULL, &oc,
                  (const char *const[]){"setting mismatch", "'zeta'", "0.713", "0.9",
                                        "simulation config", "ODE config", "allowed", NULL});
  expect_mismatch(&s, D, &sc0, &ec0, &oc,
                  (const char *const[]){"'zeta'", "0.713 in the setting", "0.9 in the ODE", NULL});
  oc = oc0, oc.gamma = 0.5;
  expect_mismatch(NULL, D, &sc0, NULL, &oc,
                  (const char *const[]){"'gamma'", "is 0.5 in the ODE config", "d/n = 131/347",
                                        "0.377521613832853", NULL});
  oc = oc0, oc.c = 1.4;
  expect_mismatch(&s, D, NULL, NULL, &oc, (const char *const[]){"'c'", "1.37", "1.4", NULL});
  oc = oc0, oc.rho = INFINITY;
  expect_mismatch(&s, D, NULL, NULL, &oc, (const char *const[]){"'rho'", "0.83", "inf", NULL});
  oc = oc0, oc.noise = DPD_NOISE_LAPLACE;
  expect_mismatch(&s, D, NULL, NULL, &oc,
                  (const char *const[]){"'noise'", "student", "laplace", NULL});
  oc = oc0, oc.noise_nu = 5.0;
  expect_mismatch(&s, D, NULL, NULL, &oc,
                  (const char *const[]){"'noise_nu'", "4.7", "5 in the ODE", NULL});
  sc = sc0, sc.n = 348;
  expect_mismatch(
      NULL, D, &sc, &ec0, NULL,
      (const char *const[]){"'n'", "348 in the simulation config", "347 in the SDE config", NULL});
  sc = sc0, sc.rho = 0.830001;
  expect_mismatch(&s, D, &sc, NULL, NULL,
                  (const char *const[]){"'rho'", "0.83 in the setting", "0.830001", NULL});
  ec = ec0, ec.c = INFINITY;
  expect_mismatch(&s, D, &sc0, &ec, &oc0,
                  (const char *const[]){"'c'", "1.37 in the setting", "inf in the SDE", NULL});
  /* Values that print alike with 15 digits are shown with 17. */
  sc = sc0, sc.zeta = nextafter(0.713, 1.0);
  expect_mismatch(
      &s, D, &sc, NULL, NULL,
      (const char *const[]){"'zeta'", "0.71299999999999997", "0.71300000000000008", NULL});
  /* noise_nu counts only for the Student-t law. */
  dpd_linreg_setting g = s;
  g.noise = DPD_NOISE_GAUSSIAN;
  oc = dpd_ode_config_init(&g, D), oc.noise_nu = 9.0;
  dpd_err err;
  assert_int_equal(dpd_linreg_setting_check(&g, D, NULL, NULL, &oc, &err), DPD_OK);
  /* gamma needs the problem's d. */
  expect_mismatch(&s, 0, NULL, NULL, &oc0, (const char *const[]){"'d'", "0", NULL});
}

/* Small runs of all three: results record their setting, and the release convention holds
 * (risk_mean[grid-1] is before release, final_risk the mean of final_replicates). */
static void results_record_the_setting_and_the_release_convention(void **state) {
  (void)state;
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_schedule_config shc = dpd_schedule_config_default();
  dpd_linreg_problem *p = NULL;
  dpd_schedule *sched = NULL;
  dpd_err err;
  pc.d = 24;
  pc.seed = 91;
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, &err), DPD_OK);
  shc.kind = DPD_SCHEDULE_CONST;
  shc.eta0 = 0.9;
  assert_int_equal(dpd_schedule_create(&shc, &sched, &err), DPD_OK);

  dpd_linreg_setting s = dpd_linreg_setting_default();
  s.n = 96;
  s.zeta = 0.4;
  s.c = 1.1;
  s.rho = 0.7;
  dpd_linreg_sim_config sc = dpd_linreg_sim_config_init(&s);
  dpd_linreg_sde_config ec = dpd_linreg_sde_config_init(&s);
  dpd_ode_config oc = dpd_ode_config_init(&s, p->d);
  sc.seeds = ec.seeds = 5;
  sc.grid = ec.grid = oc.grid = 7;
  sc.seed = ec.seed = 17;
  dpd_linreg_sim_result *sim = NULL, *sde = NULL;
  dpd_ode_result *ode = NULL;
  assert_int_equal(dpd_linreg_sim_run(p, sched, &sc, &sim, &err), DPD_OK);
  assert_int_equal(dpd_linreg_sde_run(p, sched, &ec, &sde, &err), DPD_OK);
  assert_int_equal(dpd_ode_solve(p, sched, &oc, &ode, &err), DPD_OK);

  const dpd_linreg_sim_result *runs[2] = {sim, sde};
  for (int k = 0; k < 2; k++) {
    const dpd_linreg_sim_result *r = runs[k];
    double mean = 0.0;
    assert_true(r->setting.n == 96 && r->setting.zeta == 0.4 && r->setting.c == 1.1 &&
                r->setting.rho == 0.7 && r->setting.noise == DPD_NOISE_GAUSSIAN);
    assert_true(r->risk_mean[r->grid - 1] == r->before_release);
    assert_true(r->risk_se[r->grid - 1] == r->before_release_se);
    for (size_t rep = 0; rep < r->seeds; rep++) {
      mean += r->final_replicates[rep];
      /* Constant schedule: all the privacy noise is released at the end, so every
       * replicate's released risk differs from its last trajectory point. */
      assert_true(r->final_replicates[rep] != r->risk_replicates[rep * r->grid + r->grid - 1]);
    }
    assert_rel(r->final_risk, mean / (double)r->seeds, 1e-12);
    assert_true(r->release_jump == r->final_risk - r->before_release);
    assert_true(r->release_jump_se > 0.0);
  }
  /* The ODE records its config: the results pass the check, a changed one does not. */
  assert_true(ode->config.gamma == (double)p->d / 96.0 && ode->config.rho == 0.7);
  assert_true(ode->risk[ode->grid - 1] == ode->before_release);
  assert_int_equal(dpd_linreg_setting_check(&sim->setting, p->d, NULL, NULL, &ode->config, &err),
                   DPD_OK);
  assert_int_equal(dpd_linreg_setting_check(&sde->setting, p->d, NULL, NULL, &ode->config, &err),
                   DPD_OK);
  dpd_ode_result *other = NULL;
  oc.rho = 0.8;
  assert_int_equal(dpd_ode_solve(p, sched, &oc, &other, &err), DPD_OK);
  expect_mismatch(&sim->setting, p->d, NULL, NULL, &other->config,
                  (const char *const[]){"'rho'", "0.7", "0.8", NULL});
  dpd_ode_result_free(other);
  dpd_ode_result_free(ode);
  dpd_linreg_sim_result_free(sde);
  dpd_linreg_sim_result_free(sim);
  dpd_schedule_free(sched);
  dpd_linreg_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_setting_is_the_default_of_every_config),
      cmocka_unit_test(configs_built_from_one_setting_share_gamma_zeta_c_rho),
      cmocka_unit_test(check_names_the_field_and_both_values),
      cmocka_unit_test(results_record_the_setting_and_the_release_convention),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
