/* Statistical tests of model=nc: the exact one-step error (notes B.5) against the NoisyGD
 * simulation, and perfect collapse against its closed forms.
 * SPDX-License-Identifier: MIT
 *
 * The theory (models/nc/nc_impl.h: dpd__nc_theory_replicates) is evaluated on each replicate's
 * own training data and test points, so the mean over replicates of (simulated error - theory)
 * has expectation 0 exactly: only the noise is integrated out by the theory. Every tolerance is
 * 3 standard errors, where the SE is that of the simulation's mean test error over `seeds`
 * replicates, each of which redraws the training shifts, the noise and the test perturbations
 * (streams (seed, r), r < seeds; the ETF basis, the offset signs and the class counts are fixed
 * by the problem). That SE bounds the SE of the paired gap: the theory is the conditional mean of
 * the simulation given the data, so var(sim - theory) = var(sim) - var(theory). Seeds are fixed.
 * Each configuration also has a negative control: the theory at a wrong sigma (x 1.2) must be
 * more than 3 SE away from the same simulation; the noise levels are chosen so that the error
 * is mid-range (about 0.1 - 0.5), where that test has power. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "core/error_impl.h"
#include "core/stats_impl.h"
#include "dpd_test.h"
#include "dpdyn/nc.h"
#include "dpdyn/nc_theory.h"
#include "dpdyn/rng.h"
#include "nc/nc_impl.h"

#define SEED 20261124u

typedef struct {
  const char *name;
  size_t K, p, n, n_test;
  double ratio, fraction; /* imbalance */
  dpd_nc_shift shift;
  double beta, offset;
  dpd_nc_shift test_shift;
  double beta_test;
  int offset_at_test;
  dpd_nc_normalize normalize;
  dpd_nc_loss loss;
  double radius, sigma;
  size_t seeds;
} row;

static dpd_nc_problem *make(const row *r) {
  dpd_nc_problem_config c = dpd_nc_problem_config_default();
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  c.K = r->K;
  c.p = r->p;
  c.n = r->n;
  c.n_test = r->n_test;
  c.imbalance_ratio = r->ratio;
  c.imbalance_fraction = r->fraction;
  c.shift = r->shift;
  c.beta = r->beta;
  c.offset = r->offset;
  c.test_shift = r->test_shift;
  c.beta_test = r->beta_test;
  c.offset_at_test = r->offset_at_test;
  c.normalize = r->normalize;
  c.seed = 7;
  const int st = dpd_nc_problem_create(&c, &pr, &err);
  if (st != DPD_OK) {
    print_error("%s: dpd_nc_problem_create: %s\n", r->name, err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return pr;
}

/* Each configuration has its own master seed (SEED + index): rows of equal K and p would
 * otherwise share their noise draws, and their gaps would be correlated. */
static dpd_nc_sim_config sim_config(const row *r, uint64_t index) {
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.loss = r->loss;
  sc.radius = r->radius;
  sc.sigma = r->sigma;
  sc.seeds = r->seeds;
  sc.seed = SEED + index;
  sc.threads = 0;
  return sc;
}

/* The mean over replicates of the exact error at noise sigma. */
static double theory_mean(const dpd_nc_problem *pr, dpd_nc_sim_config sc, double sigma, double *e) {
  dpd_err err;
  double mean, se;
  dpd_err_reset(&err);
  sc.sigma = sigma;
  const int st = dpd__nc_theory_replicates(pr, &sc, e, &err);
  if (st != DPD_OK) {
    print_error("theory: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  dpd__stats_mean_se(e, sc.seeds, 1, &mean, &se);
  return mean;
}

/* Simulation vs the exact theory on one problem: within 3 SE at the true sigma, more than 3 SE
 * away at 1.2 sigma; the error is mid-range so that the control has power. */
static void check_problem(const char *name, const dpd_nc_problem *pr, const dpd_nc_sim_config *sc) {
  dpd_nc_sim_result *sim = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  double *e = malloc(sc->seeds * sizeof *e);
  assert_non_null(e);
  const int st = dpd_nc_sim_run(pr, sc, &sim, &err);
  if (st != DPD_OK) {
    print_error("%s: dpd_nc_sim_run: %s\n", name, err.reason);
  }
  assert_int_equal(st, DPD_OK);
  const double th = theory_mean(pr, *sc, sc->sigma, e);
  const double wrong = theory_mean(pr, *sc, 1.2 * sc->sigma, e);
  const double se = sim->test_error_se;
  print_message("%-34s sim %.4f +- %.4f  theory %.4f (gap %+.2f SE)  theory(1.2 sigma) %.4f "
                "(gap %+.2f SE)\n",
                name, sim->test_error, se, th, (sim->test_error - th) / se, wrong,
                (sim->test_error - wrong) / se);
  assert_true(sim->test_error > 0.05 && sim->test_error < 0.6);
  assert_true(se > 0.0);
  assert_true(fabs(sim->test_error - th) <= 3.0 * se);
  assert_true(fabs(sim->test_error - wrong) > 3.0 * se);
  dpd_nc_sim_result_free(sim);
  free(e);
}

static void check_row(const row *r, uint64_t index) {
  dpd_nc_problem *pr = make(r);
  const dpd_nc_sim_config sc = sim_config(r, index);
  check_problem(r->name, pr, &sc);
  dpd_nc_problem_free(pr);
}

#define NONE DPD_NC_SHIFT_NONE
#define CUBE DPD_NC_SHIFT_CUBE
#define RADE DPD_NC_SHIFT_RADEMACHER
#define CE DPD_NC_LOSS_CE
#define SQ DPD_NC_LOSS_SQUARE

/* Together the rows cover K in {2, 3, 10}; balanced and imbalanced; training shifts none, cube,
 * rademacher and offset; test perturbations cube, rademacher and offset_at_test (and clean);
 * CE and square loss; normalize none, center and l2; a projection radius. */
static const row rows[] = {
    /* name                 K  p    n    nt   ratio frac  shift beta  off   test b_t  oat  norm loss
       radius sigma seeds */
    {"K2 balanced clean ce", 2, 40, 20, 2, 1, 0, NONE, 0, 0, NONE, 0, 0, DPD_NC_NORMALIZE_NONE, CE,
     INFINITY, 14.0, 3000},
    {"K2 imbal cube/cube sq", 2, 60, 40, 60, 3, 0.5, CUBE, 0.15, 0, CUBE, 0.3, 0,
     DPD_NC_NORMALIZE_NONE, SQ, INFINITY, 18.0, 2000},
    {"K3 imbal rade/rade ce", 3, 50, 60, 150, 2, 0.34, RADE, 0.1, 0, RADE, 0.2, 0,
     DPD_NC_NORMALIZE_NONE, CE, INFINITY, 14.0, 500},
    {"K3 offset, offset_at_test, center", 3, 50, 60, 150, 1, 0, NONE, 0, 0.3, CUBE, 0.1, 1,
     DPD_NC_NORMALIZE_CENTER, CE, INFINITY, 14.0, 800},
    {"K10 balanced rade/cube sq", 10, 100, 200, 200, 1, 0, RADE, 0.05, 0, CUBE, 0.1, 0,
     DPD_NC_NORMALIZE_NONE, SQ, INFINITY, 10.0, 200},
    {"K10 imbal cube/clean l2", 10, 100, 300, 100, 4, 0.5, CUBE, 0.1, 0, NONE, 0, 0,
     DPD_NC_NORMALIZE_L2, CE, INFINITY, 15.0, 400},
    {"K10 offset only, rade test", 10, 100, 200, 200, 1, 0, NONE, 0, 0.1, RADE, 0.05, 0,
     DPD_NC_NORMALIZE_NONE, CE, INFINITY, 8.0, 200},
    {"K3 cube/cube, radius 0.05, l2", 3, 50, 60, 150, 1, 0, CUBE, 0.2, 0, CUBE, 0.1, 0,
     DPD_NC_NORMALIZE_L2, SQ, 0.05, 14.0, 300},
};

static void theory_matches_simulation(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    check_row(&rows[i], i);
  }
}

/* Given features (dpd_nc_problem_from_data): rows of a noisy ETF drawn here, some clipped to
 * x_bound, centred, with a cube test perturbation: the same per-row theory. */
static void theory_matches_simulation_on_given_features(void **state) {
  (void)state;
  const size_t K = 4, p = 30, n = 80, nt = 120;
  double *X = malloc(n * p * sizeof *X), *Xt = malloc(nt * p * sizeof *Xt);
  size_t *y = malloc(n * sizeof *y), *yt = malloc(nt * sizeof *yt);
  dpd_rng rng;
  assert_true(X != NULL && Xt != NULL && y != NULL && yt != NULL);
  dpd_rng_init(&rng, 99, 0);
  for (size_t i = 0; i < n + nt; i++) { /* x = 1.2 e_y + 0.3 N(0, I) + 0.2 */
    double *x = i < n ? X + i * p : Xt + (i - n) * p;
    const size_t k = (i * 7) % K;
    dpd_rng_gaussian_fill(&rng, x, p);
    for (size_t l = 0; l < p; l++) {
      x[l] = 0.3 * x[l] + 0.2 + (l == k ? 1.2 : 0.0);
    }
    if (i < n) {
      y[i] = k;
    } else {
      yt[i - n] = k;
    }
  }
  dpd_nc_data_config dc = {.K = K,
                           .p = p,
                           .n = n,
                           .n_test = nt,
                           .X = X,
                           .y = y,
                           .X_test = Xt,
                           .y_test = yt,
                           .fill = NULL,
                           .user = NULL,
                           .x_bound = 2.4, /* about a third of the rows are clipped */
                           .normalize = DPD_NC_NORMALIZE_CENTER,
                           .test_shift = DPD_NC_SHIFT_CUBE,
                           .beta_test = 0.2};
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_problem_from_data(&dc, &pr, &err), DPD_OK);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.sigma = 9.0;
  sc.seeds = 300;
  sc.seed = SEED + 50;
  check_problem("given features, clip, center, cube", pr, &sc);
  dpd_nc_problem_free(pr);
  free(X);
  free(Xt);
  free(y);
  free(yt);
}

/* The theory does not depend on the thread count (each replicate computed alone). */
static void theory_is_bit_identical_for_any_thread_count(void **state) {
  (void)state;
  const row r = rows[4];
  dpd_nc_problem *pr = make(&r);
  dpd_nc_sim_config sc = sim_config(&r, 0);
  sc.seeds = 6;
  double a[6], b[6];
  sc.threads = 1;
  (void)theory_mean(pr, sc, sc.sigma, a);
  sc.threads = 3;
  (void)theory_mean(pr, sc, sc.sigma, b);
  assert_memory_equal(a, b, sizeof a);
  dpd_nc_problem_free(pr);
}

/* Where the theory is not exact it says why. */
static void theory_refuses_adversarial_tests_and_several_steps(void **state) {
  (void)state;
  row r = rows[2];
  r.test_shift = DPD_NC_SHIFT_ADVERSARIAL;
  dpd_nc_problem *pr = make(&r);
  dpd_nc_sim_config sc = sim_config(&r, 0);
  double e[1];
  dpd_err err;
  dpd_err_reset(&err);
  sc.seeds = 1;
  assert_non_null(dpd__nc_theory_why_not(pr, &sc));
  assert_int_equal(dpd__nc_theory_replicates(pr, &sc, e, &err), DPD_EINVAL);
  dpd_nc_problem_free(pr);
  r = rows[2];
  pr = make(&r);
  sc.steps = 2;
  assert_non_null(dpd__nc_theory_why_not(pr, &sc));
  sc.steps = 1;
  assert_null(dpd__nc_theory_why_not(pr, &sc));
  dpd_nc_problem_free(pr);
}

/* Perfect collapse, balanced, clean test, CE, sigma = G / sqrt(2 rho) with the exact G: the
 * simulated error at p = 10 and p = 1e5 agree within 3 SE (of their difference) and each equals
 * the closed form within 3 SE of its simulation: Phi(-n sqrt(2 rho)) for K = 2 (notes B.5), the
 * K-class integral 1 - int phi(z) Phi(z + n / ((K - 1) sigma))^{K-1} dz for K = 10. A test point
 * per class (all the points of a class are M_k): a replicate's error is a multiple of 1/K (for
 * K = 2 it is 0 or 1, as M_2 = -M_1: hence 3000 replicates). The negative control: the closed form
 * at 1.2 sigma is rejected at p = 1e5. */
static void perfect_collapse_is_dimension_free(void **state) {
  (void)state;
  static const struct {
    size_t K, n, seeds;
    double rho;
  } cases[] = {{2, 10, 3000, 0.0035}, {10, 60, 400, 0.05}};
  for (size_t c = 0; c < 2; c++) {
    const size_t K = cases[c].K, n = cases[c].n;
    double err_p[2], se_p[2], exact = NAN, wrong = NAN;
    for (size_t d = 0; d < 2; d++) {
      row r = {"collapse",
               K,
               d == 0 ? 10 : 100000,
               n,
               K,
               1,
               0,
               NONE,
               0,
               0,
               NONE,
               0,
               0,
               DPD_NC_NORMALIZE_NONE,
               CE,
               INFINITY,
               0,
               cases[c].seeds};
      dpd_nc_problem *pr = make(&r);
      const double G = dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE);
      dpd_nc_sim_config sc = sim_config(&r, 100 + 10 * c + d);
      dpd_nc_sim_result *sim = NULL;
      dpd_err err;
      dpd_err_reset(&err);
      assert_rel(G, sqrt((double)(K - 1) / (double)K), 1e-12);
      sc.sigma = G / sqrt(2.0 * cases[c].rho);
      assert_int_equal(dpd_nc_sim_run(pr, &sc, &sim, &err), DPD_OK);
      err_p[d] = sim->test_error;
      se_p[d] = sim->test_error_se;
      if (K == 2) {
        exact = gsl_cdf_ugaussian_P(-(double)n * sqrt(2.0 * cases[c].rho));
        double check;
        assert_int_equal(dpd_nc_error_collapse(K, (double)n, sc.sigma, &check, &err), DPD_OK);
        assert_rel(check, exact, 1e-9); /* the K-class integral at K = 2 is the binary form */
      } else {
        assert_int_equal(dpd_nc_error_collapse(K, (double)n, sc.sigma, &exact, &err), DPD_OK);
      }
      assert_int_equal(dpd_nc_error_collapse(K, (double)n, 1.2 * sc.sigma, &wrong, &err), DPD_OK);
      print_message("collapse K = %zu p = %zu: sim %.4f +- %.4f  exact %.4f  (1.2 sigma: %.4f)\n",
                    K, r.p, err_p[d], se_p[d], exact, wrong);
      assert_true(err_p[d] > 0.05 && err_p[d] < 0.6);
      assert_true(fabs(err_p[d] - exact) <= 3.0 * se_p[d]);
      if (d == 1) {
        assert_true(fabs(err_p[d] - wrong) > 3.0 * se_p[d]);
      }
      dpd_nc_sim_result_free(sim);
      dpd_nc_problem_free(pr);
    }
    assert_true(fabs(err_p[0] - err_p[1]) <= 3.0 * hypot(se_p[0], se_p[1]));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(theory_matches_simulation),
      cmocka_unit_test(theory_matches_simulation_on_given_features),
      cmocka_unit_test(theory_is_bit_identical_for_any_thread_count),
      cmocka_unit_test(theory_refuses_adversarial_tests_and_several_steps),
      cmocka_unit_test(perfect_collapse_is_dimension_free),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
