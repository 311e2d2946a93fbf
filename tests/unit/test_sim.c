/* Tests of the DP-SGD simulator dpd_linreg_sim_run (docs/math.md §1.3).
 * SPDX-License-Identifier: MIT
 *
 * Exact mean-risk recursion used below (isotropic Gaussian data, no clipping). With
 * e' = e - eta (x.e - z) x + b xi, x ~ N(0, I_d), z ~ N(0, zeta^2), xi ~ N(0, I_d) independent:
 *   E (x.e)^2 = |e|^2,   E (x.e)^2 |x|^2 = (d + 2) |e|^2   (Isserlis),   E z^2 |x|^2 = d zeta^2,
 * and every odd term vanishes, so for R = |e|^2 / 2
 *   E[R' | e] = R (1 - 2 eta + eta^2 (d + 2)) + eta^2 d zeta^2 / 2 + b^2 d / 2.
 * Iterating with the simulator's own (eta_k, sigma_k) and b_k = 2 C sigma_k gives E R_k exactly;
 * the simulated means must agree within 4 standard errors. Seeds are fixed. */
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/linreg.h"
#include "dpdyn/rng.h"
#include "dpdyn/schedule.h"

#define SEED UINT64_C(2385)

typedef struct {
  dpd_linreg_problem *problem;
  dpd_schedule *schedule;
} fixture;

static void make(fixture *f, size_t d, dpd_schedule_kind kind, double eta0) {
  dpd_linreg_problem_config pcfg = dpd_linreg_problem_config_default();
  pcfg.d = d;
  pcfg.seed = SEED;
  pcfg.theta_norm = 1.3;
  dpd_schedule_config scfg = dpd_schedule_config_default();
  scfg.kind = kind;
  scfg.eta0 = eta0;
  f->problem = NULL;
  f->schedule = NULL;
  assert_int_equal(dpd_linreg_problem_create(&pcfg, &f->problem, NULL), DPD_OK);
  assert_int_equal(dpd_schedule_create(&scfg, &f->schedule, NULL), DPD_OK);
}

static void unmake(fixture *f) {
  dpd_linreg_problem_free(f->problem);
  dpd_schedule_free(f->schedule);
}

static dpd_linreg_sim_result *run_ok(const fixture *f, const dpd_linreg_sim_config *cfg) {
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_linreg_sim_run(f->problem, f->schedule, cfg, &res, &err);
  if (st != DPD_OK) {
    print_error("dpd_linreg_sim_run: %s: %s (seed %llu)\n", dpd_status_str(st), err.reason,
                (unsigned long long)cfg->seed);
  }
  assert_int_equal(st, DPD_OK);
  assert_non_null(res);
  return res;
}

/* E R_k for k = 0..n (isotropic, unclipped), written into ER[0..n]. */
/* E R_k for k = 0..n into ER[n + 1] (ER[n]: the released iterate), and E R_n before the last
 * step's privacy noise into *before (the release convention of linreg.h). */
static void exact_mean_risk(const fixture *f, const dpd_linreg_sim_config *cfg, double *ER,
                            double *before) {
  size_t d = f->problem->d, n = cfg->n;
  double *eta = malloc(n * sizeof *eta), *sigma = malloc(n * sizeof *sigma);
  assert_non_null(eta);
  assert_non_null(sigma);
  dpd_schedule_steps(f->schedule, n, cfg->rho, eta, sigma);
  double C = isfinite(cfg->c) ? cfg->c * sqrt((double)d) : 0.0;
  double D = (double)d;
  ER[0] = dpd_linreg_initial_risk(f->problem);
  for (size_t k = 0; k < n; k++) {
    double e = eta[k], b = 2.0 * C * sigma[k];
    ER[k + 1] = ER[k] * (1.0 - 2.0 * e + e * e * (D + 2.0)) +
                e * e * D * cfg->zeta * cfg->zeta / 2.0 + b * b * D / 2.0;
    if (k + 1 == n) {
      *before = ER[k + 1] - b * b * D / 2.0;
    }
  }
  free(eta);
  free(sigma);
}

static size_t grid_step(size_t j, size_t grid, size_t n) {
  return (size_t)floor((double)j * (double)n / (double)(grid - 1) + 0.5);
}

/* Compares the simulated mean at every grid point with the exact E R_k within 4 SE (at step
 * n: E R_n before release, the release convention), and the released final_risk with E R_n. */
static void check_against_recursion(const fixture *f, const dpd_linreg_sim_config *cfg,
                                    const dpd_linreg_sim_result *res, const double *ER,
                                    double before) {
  for (size_t j = 0; j < res->grid; j++) {
    size_t k = grid_step(j, res->grid, cfg->n);
    double want = k == cfg->n ? before : ER[k];
    double tol = 4.0 * res->risk_se[j] + 1e-12 * want;
    if (!(fabs(res->risk_mean[j] - want) <= tol)) {
      print_error("grid %zu (step %zu): mean %.10g, exact %.10g, se %.3g (seed %llu, d %zu)\n", j,
                  k, res->risk_mean[j], want, res->risk_se[j], (unsigned long long)cfg->seed,
                  f->problem->d);
      fail();
    }
  }
  assert_true(res->risk_mean[res->grid - 1] == res->before_release);
  assert_true(res->risk_se[res->grid - 1] == res->before_release_se);
  assert_abs(res->final_risk, ER[cfg->n], 4.0 * res->final_risk_se + 1e-12 * ER[cfg->n]);
}

static void plain_sgd_mean_risk_follows_the_exact_recursion(void **state) {
  (void)state;
  const dpd_schedule_kind kinds[] = {DPD_SCHEDULE_CONST, DPD_SCHEDULE_SQRT};
  for (size_t s = 0; s < 2; s++) {
    fixture f;
    make(&f, 50, kinds[s], 0.85);
    dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
    cfg.n = 200;
    cfg.seeds = 3000;
    cfg.seed = SEED + s;
    cfg.grid = 11;
    cfg.zeta = 1.0;
    dpd_linreg_sim_result *res = run_ok(&f, &cfg);
    double *ER = malloc((cfg.n + 1) * sizeof *ER), before, before0;
    assert_non_null(ER);
    exact_mean_risk(&f, &cfg, ER, &before);
    check_against_recursion(&f, &cfg, res, ER, before);
    /* Power: without label noise the recursion ends far from the simulation. */
    dpd_linreg_sim_config cfg0 = cfg;
    cfg0.zeta = 0.0;
    double *ER0 = malloc((cfg.n + 1) * sizeof *ER0);
    assert_non_null(ER0);
    exact_mean_risk(&f, &cfg0, ER0, &before0);
    assert_true(fabs(res->final_risk - ER0[cfg.n]) > 10.0 * res->final_risk_se);
    /* Nothing is clipped and there is no privacy noise. */
    assert_true(res->clip_fraction_total == 0.0);
    assert_true(res->before_release == res->final_risk);
    assert_true(res->final_risk == res->risk_mean[cfg.grid - 1]);
    assert_true(res->release_jump == 0.0 && res->release_jump_se == 0.0);
    free(ER);
    free(ER0);
    dpd_linreg_sim_result_free(res);
    unmake(&f);
  }
}

/* Privacy noise with a clipping threshold far above every gradient: the recursion gains
 * b_k^2 d / 2 with b_k = 2 C sigma_k. Constant schedule: all noise in the last step, so
 * before_release follows the noiseless recursion and the final risk jumps by b^2 d / 2. */
static void privacy_noise_adds_the_calibrated_variance(void **state) {
  (void)state;
  const dpd_schedule_kind kinds[] = {DPD_SCHEDULE_SQRT, DPD_SCHEDULE_CONST};
  for (size_t s = 0; s < 2; s++) {
    fixture f;
    make(&f, 40, kinds[s], 0.9);
    dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
    cfg.n = 160;
    cfg.seeds = 3000;
    cfg.seed = SEED + 10 + s;
    cfg.grid = 9;
    cfg.zeta = 0.4;
    cfg.c = 1000.0;
    cfg.rho = 1500.0;
    dpd_linreg_sim_result *res = run_ok(&f, &cfg);
    assert_true(res->clip_fraction_total == 0.0);
    double *ER = malloc((cfg.n + 1) * sizeof *ER), before, before_np;
    assert_non_null(ER);
    exact_mean_risk(&f, &cfg, ER, &before);
    check_against_recursion(&f, &cfg, res, ER, before);
    /* The privacy term is large in SE units (the check above has power). */
    dpd_linreg_sim_config np = cfg;
    np.rho = INFINITY;
    double *ERnp = malloc((cfg.n + 1) * sizeof *ERnp);
    assert_non_null(ERnp);
    exact_mean_risk(&f, &np, ERnp, &before_np);
    assert_true(fabs(res->final_risk - ERnp[cfg.n]) > 10.0 * res->final_risk_se);
    if (kinds[s] == DPD_SCHEDULE_CONST) {
      /* Before the release noise: the non-private recursion (no noise before step n - 1). */
      assert_abs(res->before_release, ERnp[cfg.n], 4.0 * res->before_release_se);
      double jump =
          2.0 * 1000.0 * 1000.0 * 40.0 * 40.0 * (0.9 / 160.0) * (0.9 / 160.0) / (1500.0 * 1500.0);
      assert_rel(ER[cfg.n] - ERnp[cfg.n], jump, 1e-9);
      assert_true(jump > 10.0 * res->final_risk_se);
      /* The trajectory's last point is before release; the jump is the release's. */
      assert_abs(res->risk_mean[cfg.grid - 1], ERnp[cfg.n], 4.0 * res->risk_se[cfg.grid - 1]);
      assert_abs(res->release_jump, jump, 4.0 * res->release_jump_se);
      assert_true(fabs(res->risk_mean[cfg.grid - 1] - ER[cfg.n]) > 10.0 * res->final_risk_se);
    } else {
      /* sqrt schedule: the last step's noise is tiny but present. */
      assert_true(res->before_release != res->final_risk);
      assert_abs(res->before_release, res->final_risk, 4.0 * res->final_risk_se);
    }
    free(ER);
    free(ERnp);
    dpd_linreg_sim_result_free(res);
    unmake(&f);
  }
}

static void results_are_bit_identical_for_any_thread_count(void **state) {
  (void)state;
  fixture f;
  make(&f, 37, DPD_SCHEDULE_SQRT, 1.1); /* d not a multiple of 8: vector tails */
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  cfg.n = 300;
  cfg.seeds = 7;
  cfg.seed = SEED + 20;
  cfg.grid = 13;
  cfg.c = 0.8;
  cfg.rho = 2.0;
  cfg.threads = 1;
  dpd_linreg_sim_result *a = run_ok(&f, &cfg);
  const int threads[] = {2, 3, 0};
  for (size_t i = 0; i < 3; i++) {
    cfg.threads = threads[i];
    dpd_linreg_sim_result *b = run_ok(&f, &cfg);
    size_t g = cfg.grid;
    assert_memory_equal(a->risk_replicates, b->risk_replicates,
                        cfg.seeds * g * sizeof *a->risk_replicates);
    assert_memory_equal(a->risk_mean, b->risk_mean, g * sizeof *a->risk_mean);
    assert_memory_equal(a->risk_se, b->risk_se, g * sizeof *a->risk_se);
    assert_memory_equal(a->clip_fraction, b->clip_fraction, g * sizeof *a->clip_fraction);
    assert_memory_equal(&a->final_risk, &b->final_risk, sizeof a->final_risk);
    assert_memory_equal(&a->before_release, &b->before_release, sizeof a->before_release);
    assert_memory_equal(&a->before_release_se, &b->before_release_se, sizeof a->before_release_se);
    assert_memory_equal(&a->clip_fraction_total, &b->clip_fraction_total,
                        sizeof a->clip_fraction_total);
    assert_memory_equal(a->clip_replicates, b->clip_replicates,
                        cfg.seeds * g * sizeof *a->clip_replicates);
    assert_memory_equal(a->clip_total_replicates, b->clip_total_replicates,
                        cfg.seeds * sizeof *a->clip_total_replicates);
    assert_memory_equal(a->before_release_replicates, b->before_release_replicates,
                        cfg.seeds * sizeof *a->before_release_replicates);
    assert_memory_equal(a->final_replicates, b->final_replicates,
                        cfg.seeds * sizeof *a->final_replicates);
    dpd_linreg_sim_result_free(b);
  }
  /* The per-replicate values average to the reported means (the same doubles, reduced in
   * replicate order: equal to rounding). */
  {
    double before = 0.0, clip = 0.0;
    for (size_t r = 0; r < cfg.seeds; r++) {
      before += a->before_release_replicates[r];
      clip += a->clip_total_replicates[r];
    }
    assert_rel(before / (double)cfg.seeds, a->before_release, 1e-13);
    assert_rel(clip / (double)cfg.seeds, a->clip_fraction_total, 1e-13);
    for (size_t j = 1; j < cfg.grid; j++) {
      double cj = 0.0;
      for (size_t r = 0; r < cfg.seeds; r++) {
        cj += a->clip_replicates[r * cfg.grid + j];
      }
      assert_rel(cj / (double)cfg.seeds, a->clip_fraction[j], 1e-13);
    }
  }
  /* Clipping was active in this run (the comparison covers that branch). */
  assert_true(a->clip_fraction_total > 0.05 && a->clip_fraction_total < 0.95);
  /* Replicate r depends on stream (seed, r) only: a run with fewer seeds reproduces the first
   * rows exactly. */
  cfg.seeds = 3;
  cfg.threads = 2;
  dpd_linreg_sim_result *c = run_ok(&f, &cfg);
  assert_memory_equal(a->risk_replicates, c->risk_replicates,
                      3 * cfg.grid * sizeof *a->risk_replicates);
  dpd_linreg_sim_result_free(c);
  dpd_linreg_sim_result_free(a);
  unmake(&f);
}

/* Replicate `rep` of a run by the algorithm as MATH.md 1.3 and sim.c's header state it, in
 * plain loops: per step one dpd_rng_gaussian_fill of all m_k values (g, the label Gaussian,
 * xi) and, for Student-t, the chi-square from the blocks after them. `xi_offset` = 1 is the
 * documented layout; 0 or 2 (xi taken one value too early or too late) are negative controls.
 * Writes the risk at the grid steps into risk[grid] (at step n before the last step's privacy
 * noise, the release convention) and the released risk into *released. */
static void reference_replicate(const fixture *f, const dpd_linreg_sim_config *cfg, size_t rep,
                                size_t xi_offset, double *risk, double *released) {
  const size_t d = f->problem->d, n = cfg->n;
  const double *lambda = f->problem->lambda, *sl = f->problem->sqrt_lambda;
  double *eta = malloc(n * sizeof *eta), *sigma = malloc(n * sizeof *sigma);
  double *e = malloc(d * sizeof *e), *v = malloc((2 * d + 4) * sizeof *v);
  assert_true(eta != NULL && sigma != NULL && e != NULL && v != NULL);
  dpd_schedule_steps(f->schedule, n, cfg->rho, eta, sigma);
  const double C = cfg->c * sqrt((double)d);
  dpd_rng rng;
  dpd_rng_init(&rng, cfg->seed, (uint64_t)rep);
  for (size_t i = 0; i < d; i++) {
    e[i] = -f->problem->theta_star[i];
  }
  size_t j = 0;
  double before = 0.0; /* R_n without the last step's privacy noise */
  for (size_t k = 0; k <= n; k++) {
    double R = 0.0;
    for (size_t i = 0; i < d; i++) {
      R += 0.5 * lambda[i] * e[i] * e[i];
    }
    for (; j < cfg->grid && grid_step(j, cfg->grid, n) == k; j++) {
      risk[j] = k == n ? before : R;
    }
    if (k == n) {
      *released = R;
      break;
    }
    const size_t m = d + 1 + (sigma[k] > 0.0 ? d : 0);
    dpd_rng_gaussian_fill(&rng, v, m + 1);
    double z = cfg->zeta * v[d];
    if (cfg->noise == DPD_NOISE_STUDENT) {
      rng.counter -= 1 - (m & 1u); /* the blocks right after the m values */
      double chi2 = 2.0 * dpd_rng_gamma_sample(&rng, 0.5 * cfg->noise_nu);
      z = cfg->zeta * sqrt((cfg->noise_nu - 2.0) / chi2) * v[d];
    }
    double dot = 0.0, xx = 0.0;
    for (size_t i = 0; i < d; i++) {
      dot += sl[i] * v[i] * e[i];
      xx += sl[i] * v[i] * sl[i] * v[i];
    }
    const double r = dot - z, gnorm = fabs(r) * sqrt(xx);
    const double a = eta[k] * r * (gnorm > C ? C / gnorm : 1.0);
    for (size_t i = 0; i < d; i++) {
      e[i] -= a * sl[i] * v[i];
      if (k + 1 == n) {
        before += 0.5 * lambda[i] * e[i] * e[i];
      }
      if (sigma[k] > 0.0) {
        e[i] += 2.0 * C * sigma[k] * v[d + xi_offset + i];
      }
    }
  }
  free(eta);
  free(sigma);
  free(e);
  free(v);
}

/* Largest relative difference between the simulator's rows and the reference's. */
static double reference_gap(const fixture *f, const dpd_linreg_sim_config *cfg,
                            const dpd_linreg_sim_result *res, size_t xi_offset) {
  double *risk = malloc(cfg->grid * sizeof *risk), gap = 0.0;
  assert_non_null(risk);
  for (size_t rep = 0; rep < cfg->seeds; rep++) {
    double released = NAN;
    reference_replicate(f, cfg, rep, xi_offset, risk, &released);
    double gf = fabs(res->final_replicates[rep] - released) / fabs(released);
    gap = gf > gap ? gf : gap;
    for (size_t j = 0; j < cfg->grid; j++) {
      double got = res->risk_replicates[rep * cfg->grid + j];
      double g = fabs(got - risk[j]) / fabs(risk[j]);
      gap = g > gap ? g : gap;
    }
  }
  free(risk);
  return gap;
}

/* The simulator makes its Gaussians chunk by chunk (sim.c) but must use exactly the values of
 * the documented stream layout. Dimensions around the chunk length (1024) and of both
 * parities, clipping active, privacy noise, Gaussian and Student-t label noise. The reference
 * sums in another order, so agreement is to 1e-9 relative (measured: below 4e-15; the negative
 * controls differ by 1-8 %); laying xi one value off either way must break it. */
static void replicates_use_the_documented_gaussian_stream(void **state) {
  (void)state;
  const size_t dims[] = {1, 8, 1023, 1024, 1025, 2048, 2051};
  for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
    for (int student = 0; student < 2; student++) {
      const size_t d = dims[t];
      fixture f;
      make(&f, d, DPD_SCHEDULE_SQRT, 1.0);
      dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
      cfg.n = d < 100 ? 200 : d;
      cfg.seeds = 2;
      cfg.seed = SEED + 30 + d;
      cfg.grid = 11;
      cfg.c = 0.7;
      cfg.rho = 1.5;
      if (student) {
        cfg.noise = DPD_NOISE_STUDENT;
        cfg.noise_nu = 4.0;
      }
      dpd_linreg_sim_result *res = run_ok(&f, &cfg);
      assert_true(res->clip_fraction_total > 0.01);
      double gap = reference_gap(&f, &cfg, res, 1);
      if (!(gap < 1e-9)) {
        print_error("d = %zu, student %d: relative gap %g to the reference\n", d, student, gap);
      }
      assert_true(gap < 1e-9);
      if (d >= 8 && student == 0) {
        assert_true(reference_gap(&f, &cfg, res, 0) > 1e-3);
        assert_true(reference_gap(&f, &cfg, res, 2) > 1e-3);
      }
      dpd_linreg_sim_result_free(res);
      unmake(&f);
    }
  }
}

static void grid_records_initial_risk_times_and_clip_fractions(void **state) {
  (void)state;
  fixture f;
  make(&f, 23, DPD_SCHEDULE_CONST, 0.6);
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  cfg.n = 7; /* grid finer than the steps: several grid points share a step */
  cfg.seeds = 5;
  cfg.seed = SEED + 30;
  cfg.grid = 16;
  cfg.c = 0.35;
  dpd_linreg_sim_result *res = run_ok(&f, &cfg);
  assert_int_equal(res->grid, 16);
  assert_int_equal(res->seeds, 5);
  double R0 = dpd_linreg_initial_risk(f.problem);
  double weighted = 0.0;
  for (size_t j = 0; j < cfg.grid; j++) {
    assert_true(res->t[j] == (double)j / 15.0);
    assert_true(res->clip_fraction[j] >= 0.0 && res->clip_fraction[j] <= 1.0);
    size_t k = grid_step(j, cfg.grid, cfg.n);
    size_t prev = j > 0 ? grid_step(j - 1, cfg.grid, cfg.n) : 0;
    if (k == prev) {
      assert_true(res->clip_fraction[j] == 0.0); /* empty interval */
      if (j > 0) {
        for (size_t r = 0; r < cfg.seeds; r++) {
          assert_true(res->risk_replicates[r * cfg.grid + j] ==
                      res->risk_replicates[r * cfg.grid + j - 1]);
        }
      }
    }
    weighted += res->clip_fraction[j] * (double)(k - prev);
  }
  for (size_t r = 0; r < cfg.seeds; r++) {
    assert_rel(res->risk_replicates[r * cfg.grid], R0, 1e-13);
  }
  assert_true(res->risk_se[0] == 0.0);
  assert_rel(res->clip_fraction_total, weighted / (double)cfg.n, 1e-12);
  dpd_linreg_sim_result_free(res);

  /* One replicate: standard errors are 0. Tiny c: every step is clipped. */
  cfg.seeds = 1;
  cfg.c = 1e-9;
  res = run_ok(&f, &cfg);
  assert_true(res->final_risk_se == 0.0 && res->before_release_se == 0.0);
  assert_true(res->clip_fraction_total == 1.0);
  dpd_linreg_sim_result_free(res);
  unmake(&f);
}

static void expect_einval(const fixture *f, const dpd_linreg_sim_config *cfg, const char *what) {
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_linreg_sim_run(f->problem, f->schedule, cfg, &res, &err);
  if (st != DPD_EINVAL) {
    print_error("%s: got status %d\n", what, st);
    dpd_linreg_sim_result_free(res);
    fail();
  }
  assert_int_equal(err.status, DPD_EINVAL);
  assert_true(strlen(err.reason) > 0);
  assert_null(res);
}

static void invalid_configurations_are_rejected(void **state) {
  (void)state;
  fixture f;
  make(&f, 10, DPD_SCHEDULE_CONST, 0.5);
  dpd_linreg_sim_config base = dpd_linreg_sim_config_default();
  base.n = 20;
  base.seeds = 2;
  dpd_linreg_sim_config cfg;

  cfg = base;
  cfg.n = 0;
  expect_einval(&f, &cfg, "n = 0");
  cfg = base;
  cfg.seeds = 0;
  expect_einval(&f, &cfg, "seeds = 0");
  cfg = base;
  cfg.grid = 1;
  expect_einval(&f, &cfg, "grid = 1");
  cfg = base;
  cfg.grid = 0;
  expect_einval(&f, &cfg, "grid = 0");
  cfg = base;
  cfg.rho = 1.5;
  cfg.c = INFINITY;
  expect_einval(&f, &cfg, "rho finite with c = inf");
  cfg = base;
  cfg.c = 0.0;
  expect_einval(&f, &cfg, "c = 0");
  cfg = base;
  cfg.c = NAN;
  expect_einval(&f, &cfg, "c = nan");
  cfg = base;
  cfg.rho = 0.0;
  expect_einval(&f, &cfg, "rho = 0");
  cfg = base;
  cfg.rho = NAN;
  expect_einval(&f, &cfg, "rho = nan");
  cfg = base;
  cfg.zeta = -0.1;
  expect_einval(&f, &cfg, "zeta < 0");
  cfg = base;
  cfg.zeta = INFINITY;
  expect_einval(&f, &cfg, "zeta = inf");

  /* NULL arguments. */
  dpd_linreg_sim_result *res = NULL;
  assert_int_equal(dpd_linreg_sim_run(NULL, f.schedule, &base, &res, NULL), DPD_EINVAL);
  assert_int_equal(dpd_linreg_sim_run(f.problem, NULL, &base, &res, NULL), DPD_EINVAL);
  assert_int_equal(dpd_linreg_sim_run(f.problem, f.schedule, NULL, &res, NULL), DPD_EINVAL);
  assert_int_equal(dpd_linreg_sim_run(f.problem, f.schedule, &base, NULL, NULL), DPD_EINVAL);
  assert_null(res);

  /* An increasing schedule is refused with privacy on, accepted without. */
  dpd_schedule_config scfg = dpd_schedule_config_default();
  scfg.kind = DPD_SCHEDULE_HYPERBOLIC;
  scfg.eta0 = 0.5;
  scfg.a = -0.5;
  dpd_schedule *up = NULL;
  assert_int_equal(dpd_schedule_create(&scfg, &up, NULL), DPD_OK);
  fixture g = {f.problem, up};
  cfg = base;
  cfg.c = 1.0;
  cfg.rho = 1.0;
  expect_einval(&g, &cfg, "increasing schedule with privacy");
  cfg.rho = INFINITY;
  res = run_ok(&g, &cfg);
  dpd_linreg_sim_result_free(res);
  dpd_schedule_free(up);
  unmake(&f);
}

static void divergence_is_reported_with_replicate_and_step(void **state) {
  (void)state;
  fixture f;
  make(&f, 50, DPD_SCHEDULE_CONST, 400.0); /* eta = 0.4 per step: eta (d + 2) >> 2 */
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  cfg.n = 1000;
  cfg.seeds = 3;
  cfg.seed = SEED + 40;
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_linreg_sim_run(f.problem, f.schedule, &cfg, &res, &err), DPD_ENONFINITE);
  assert_null(res);
  assert_int_equal(err.status, DPD_ENONFINITE);
  assert_non_null(strstr(err.reason, "replicate 0"));
  assert_non_null(strstr(err.reason, "step"));
  unmake(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plain_sgd_mean_risk_follows_the_exact_recursion),
      cmocka_unit_test(privacy_noise_adds_the_calibrated_variance),
      cmocka_unit_test(results_are_bit_identical_for_any_thread_count),
      cmocka_unit_test(replicates_use_the_documented_gaussian_stream),
      cmocka_unit_test(grid_records_initial_risk_times_and_clip_fractions),
      cmocka_unit_test(invalid_configurations_are_rejected),
      cmocka_unit_test(divergence_is_reported_with_replicate_and_step),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
