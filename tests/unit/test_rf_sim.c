/* Tests of full-batch DP-GD on random features and of theta* (include/dpdyn/rf_sim.h).
 * SPDX-License-Identifier: MIT
 *
 * Reference computations are written densely and naively here: per-sample gradients
 * 2 r_i phi_i clipped by min(1, C / ||.||), plain GD theta <- theta - eta (2/n) Phi^T (Phi theta
 * - y), and theta* = Phi^T (Phi Phi^T)^{-1} y by Gaussian elimination (p > n). Seeds are fixed. */
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpd_test.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "dpdyn/rng.h"
#include "rf/rf_sim_impl.h"

#define SEED UINT64_C(2385)

static dpd_rf_problem *make(size_t d, size_t n, size_t n_test, size_t p, uint64_t seed) {
  dpd_rf_config cfg = dpd_rf_config_default();
  cfg.d = d;
  cfg.n = n;
  cfg.n_test = n_test;
  cfg.p = p;
  cfg.zeta = 0.31;
  cfg.seed = seed;
  dpd_rf_problem *pr = NULL;
  assert_int_equal(dpd_rf_problem_create(&cfg, &pr, NULL), DPD_OK);
  return pr;
}

static dpd_rf_sim_result *run_ok(const dpd_rf_problem *pr, const dpd_rf_sim_config *cfg) {
  dpd_rf_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_rf_sim_run(pr, cfg, &res, &err);
  if (st != DPD_OK) {
    print_error("dpd_rf_sim_run: %s (seed %llu)\n", err.reason, (unsigned long long)cfg->seed);
  }
  assert_int_equal(st, DPD_OK);
  assert_non_null(res);
  return res;
}

static void clipped_gradient_equals_brute_force(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(5, 9, 4, 13, SEED);
  const size_t n = pr->n, p = pr->p;
  double theta[13], g[13], want[13], r[9], norms[9] = {0};
  for (size_t k = 0; k < p; k++) {
    theta[k] = 0.37 * sin(1.7 * (double)k + 0.3);
  }
  /* Per-sample gradients, densely. */
  double grads[9][13];
  for (size_t i = 0; i < n; i++) {
    double ri = -pr->y[i];
    for (size_t k = 0; k < p; k++) {
      ri += pr->phi[i * p + k] * theta[k];
    }
    double s = 0.0;
    for (size_t k = 0; k < p; k++) {
      grads[i][k] = 2.0 * ri * pr->phi[i * p + k];
      s += grads[i][k] * grads[i][k];
    }
    norms[i] = sqrt(s);
  }
  /* C between the smallest and largest norm, so that some samples are clipped. */
  double lo = norms[0], hi = norms[0];
  for (size_t i = 1; i < n; i++) {
    lo = fmin(lo, norms[i]);
    hi = fmax(hi, norms[i]);
  }
  const double Cs[3] = {INFINITY, 0.5 * (lo + hi), 0.5 * lo};
  for (size_t c = 0; c < 3; c++) {
    const double C = Cs[c];
    size_t want_clipped = 0;
    double scale = 0.0;
    for (size_t k = 0; k < p; k++) {
      want[k] = 0.0;
    }
    for (size_t i = 0; i < n; i++) {
      double w = norms[i] > C ? C / norms[i] : 1.0;
      want_clipped += norms[i] > C;
      for (size_t k = 0; k < p; k++) {
        want[k] += w * grads[i][k] / (double)n;
      }
    }
    size_t got_clipped = dpd_rf_clipped_gradient_eval(pr, theta, C, g, r);
    assert_int_equal(got_clipped, want_clipped);
    for (size_t k = 0; k < p; k++) {
      scale = fmax(scale, fabs(want[k]));
    }
    for (size_t k = 0; k < p; k++) {
      assert_abs(g[k], want[k], 1e-12 * fmax(scale, 1.0));
    }
  }
  assert_true(dpd_rf_clipped_gradient_eval(pr, theta, Cs[1], g, r) > 0);
  assert_int_equal(dpd_rf_clipped_gradient_eval(pr, theta, Cs[2], g, r), n);
  dpd_rf_problem_free(pr);
}

/* The gradient kernel is compiled for several instruction sets: all give the same bits (odd
 * sizes exercise the vector tails), with clipping active. */
static void gradient_kernels_agree_bit_for_bit_across_isas(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(13, 37, 5, 203, SEED + 21);
  const size_t n = pr->n, p = pr->p;
  double *theta = malloc(p * sizeof *theta), *g0 = malloc(p * sizeof *g0),
         *g1 = malloc(p * sizeof *g1), *r0 = malloc(n * sizeof *r0), *r1 = malloc(n * sizeof *r1);
  for (size_t k = 0; k < p; k++) {
    theta[k] = 0.01 * sin(0.7 * (double)k);
  }
  const double C = 0.3;
  size_t c0 = dpd__rf_clipped_gradient_isa(pr, theta, C, g0, r0, DPD_RNG_ISA_SCALAR);
  assert_true(c0 > 0 && c0 < n);
  const dpd_rng_isa isas[2] = {DPD_RNG_ISA_AVX2, DPD_RNG_ISA_AVX512};
  for (size_t k = 0; k < 2; k++) {
    size_t c1 = dpd__rf_clipped_gradient_isa(pr, theta, C, g1, r1, isas[k]);
    assert_int_equal(c0, c1);
    assert_memory_equal(g0, g1, p * sizeof *g0);
    assert_memory_equal(r0, r1, n * sizeof *r0);
  }
  free(theta);
  free(g0);
  free(g1);
  free(r0);
  free(r1);
  dpd_rf_problem_free(pr);
}

static void unclipped_noiseless_iterate_equals_dense_gd(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(6, 10, 7, 23, SEED + 1);
  const size_t n = pr->n, p = pr->p;
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 40;
  cfg.eta = 0.083;
  cfg.seeds = 2;
  cfg.grid = 5;
  dpd_rf_sim_result *res = run_ok(pr, &cfg);
  double theta[23] = {0}, r[10];
  double train_at[41], test_at[41];
  for (size_t t = 0; t <= cfg.T; t++) {
    double tr = 0.0;
    for (size_t i = 0; i < n; i++) {
      r[i] = -pr->y[i];
      for (size_t k = 0; k < p; k++) {
        r[i] += pr->phi[i * p + k] * theta[k];
      }
      tr += r[i] * r[i];
    }
    train_at[t] = tr / (double)n;
    double te = 0.0;
    for (size_t i = 0; i < pr->n_test; i++) {
      double ri = -pr->y_test[i];
      for (size_t k = 0; k < p; k++) {
        ri += pr->phi_test[i * p + k] * theta[k];
      }
      te += ri * ri;
    }
    test_at[t] = te / (double)pr->n_test;
    for (size_t k = 0; k < p; k++) {
      double gk = 0.0;
      for (size_t i = 0; i < n; i++) {
        gk += 2.0 * r[i] * pr->phi[i * p + k] / (double)n;
      }
      theta[k] -= cfg.eta * gk;
    }
  }
  /* theta now holds theta_{T+1}: compared below with the final iterate of a run of T + 1 steps. */
  for (size_t j = 0; j < res->grid; j++) {
    size_t t = res->step[j];
    assert_rel(res->train_mean[j], train_at[t], 1e-12);
    assert_rel(res->test_mean[j], test_at[t], 1e-12);
    assert_abs(res->train_se[j], 0.0, 0.0); /* no noise: replicates identical */
  }
  assert_int_equal(res->step[0], 0);
  assert_int_equal(res->step[res->grid - 1], cfg.T);
  assert_abs(res->clip_fraction_total, 0.0, 0.0);
  dpd_rf_sim_config cfg1 = cfg;
  cfg1.T = cfg.T + 1;
  dpd_rf_sim_result *res1 = run_ok(pr, &cfg1);
  for (size_t k = 0; k < p; k++) {
    assert_abs(res1->theta_last[k], theta[k], 1e-12 * (1.0 + fabs(theta[k])));
  }
  dpd_rf_sim_result_free(res);
  dpd_rf_sim_result_free(res1);
  dpd_rf_problem_free(pr);
}

static void results_are_bit_identical_for_any_thread_count(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(8, 30, 20, 57, SEED + 2);
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 60;
  cfg.eta = 0.05;
  cfg.clip = 0.2;
  cfg.sigma = 0.7;
  cfg.seeds = 5;
  cfg.grid = 7;
  cfg.seed = SEED;
  cfg.threads = 1;
  dpd_rf_sim_result *a = run_ok(pr, &cfg);
  cfg.threads = 2;
  dpd_rf_sim_result *b = run_ok(pr, &cfg);
  dpd_rf_sim_result *c = run_ok(pr, &cfg);
  const size_t sg = cfg.seeds * cfg.grid;
  assert_memory_equal(a->train_replicates, b->train_replicates, sg * sizeof *a->train_replicates);
  assert_memory_equal(a->test_replicates, b->test_replicates, sg * sizeof *a->train_replicates);
  assert_memory_equal(a->clip_fraction, b->clip_fraction, cfg.T * sizeof *a->clip_fraction);
  assert_memory_equal(a->theta_last, b->theta_last, pr->p * sizeof *a->theta_last);
  assert_memory_equal(a->first_clip, b->first_clip, cfg.seeds * sizeof *a->first_clip);
  assert_memory_equal(a->test_mean, b->test_mean, cfg.grid * sizeof *a->test_mean);
  assert_memory_equal(b->test_replicates, c->test_replicates, sg * sizeof *a->train_replicates);
  /* The recorded steps are the documented grid: 0, 10, 20, ..., 60 for T = 60, grid = 7. */
  size_t steps[7];
  dpd_rf_sim_grid_steps(cfg.T, cfg.grid, steps);
  assert_memory_equal(steps, a->step, cfg.grid * sizeof *steps);
  assert_int_equal(steps[1], 10);
  assert_int_equal(steps[6], 60);
  /* More threads than replicates: the row blocks of each replicate run in parallel instead
   * (8 threads on 5 replicates, 3 on 1); the arithmetic, and so every bit, is the same. (At
   * n = 30 there is one block; the many_blocks_* tests below run 64.) */
  cfg.threads = 8;
  dpd_rf_sim_result *d = run_ok(pr, &cfg);
  assert_memory_equal(a->train_replicates, d->train_replicates, sg * sizeof *a->train_replicates);
  assert_memory_equal(a->test_replicates, d->test_replicates, sg * sizeof *a->train_replicates);
  assert_memory_equal(a->clip_fraction, d->clip_fraction, cfg.T * sizeof *a->clip_fraction);
  assert_memory_equal(a->theta_last, d->theta_last, pr->p * sizeof *a->theta_last);
  dpd_rf_sim_result_free(d);
  cfg.seeds = 1;
  cfg.threads = 1;
  dpd_rf_sim_result *s1 = run_ok(pr, &cfg);
  cfg.threads = 3;
  dpd_rf_sim_result *s3 = run_ok(pr, &cfg);
  assert_memory_equal(s1->theta_last, s3->theta_last, pr->p * sizeof *s1->theta_last);
  assert_memory_equal(s1->test_replicates, s3->test_replicates, cfg.grid * sizeof(double));
  /* Replicate 0 does not depend on how many replicates run beside it. */
  assert_memory_equal(s1->theta_last, a->theta_last, pr->p * sizeof *s1->theta_last);
  assert_memory_equal(s1->test_replicates, a->test_replicates, cfg.grid * sizeof(double));
  dpd_rf_sim_result_free(s1);
  dpd_rf_sim_result_free(s3);
  cfg.seeds = 5;
  cfg.threads = 2;
  /* Noise makes replicates differ, clipping is active somewhere. */
  assert_true(a->test_se[cfg.grid - 1] > 0.0);
  assert_true(a->clip_fraction_total > 0.0);
  /* Another seed gives other noise. */
  cfg.seed = SEED + 7;
  dpd_rf_sim_result *e = run_ok(pr, &cfg);
  assert_true(memcmp(a->theta_last, e->theta_last, pr->p * sizeof *a->theta_last) != 0);
  dpd_rf_sim_result_free(a);
  dpd_rf_sim_result_free(b);
  dpd_rf_sim_result_free(c);
  dpd_rf_sim_result_free(e);
  dpd_rf_problem_free(pr);
}

/* A shape with many row blocks (n = 1100: 64 blocks of 17-18 rows) and odd p (vector tails):
 * the gradient has the same bits for every thread count and every number of partials held at
 * once (rounds of blocks, a partial last round included), and equals the dense per-sample
 * gradient to rounding. The check can fail: summing the same rows without the blocks (one
 * running sum in row order) gives other bits here. */
static void many_blocks_gradient_bit_identical_for_threads_and_held(void **state) {
  (void)state;
  assert_int_equal(dpd__rf_blocks(1), 1);
  assert_int_equal(dpd__rf_blocks(31), 1);
  assert_int_equal(dpd__rf_blocks(100), 6);
  assert_int_equal(dpd__rf_blocks(1100), 64);
  assert_int_equal(dpd__rf_blocks(2000), 64);
  dpd_rf_problem *pr = make(6, 1100, 5, 45, SEED + 31);
  const size_t n = pr->n, p = pr->p;
  double *theta = malloc(p * sizeof *theta), *g0 = malloc(p * sizeof *g0),
         *g1 = malloc(p * sizeof *g1), *want = calloc(p, sizeof *want),
         *r0 = malloc(n * sizeof *r0), *r1 = malloc(n * sizeof *r1);
  assert_non_null(theta);
  assert_non_null(g0);
  assert_non_null(g1);
  assert_non_null(want);
  assert_non_null(r0);
  assert_non_null(r1);
  for (size_t k = 0; k < p; k++) {
    theta[k] = 0.05 * cos(0.9 * (double)k + 0.2);
  }
  const double C = 0.4;
  const size_t c0 = dpd__rf_clipped_gradient_threads(pr, theta, C, g0, r0, 1, 1);
  assert_true(c0 > 0 && c0 < n);
  const int threads[] = {2, 3, 4, 7, 16, 2, 3, 5, 16};
  const size_t held[] = {64, 64, 64, 64, 64, 5, 7, 1, 16};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    memset(g1, 0xff, p * sizeof *g1);
    const size_t c1 = dpd__rf_clipped_gradient_threads(pr, theta, C, g1, r1, threads[t], held[t]);
    if (c1 != c0 || memcmp(g0, g1, p * sizeof *g0) != 0 || memcmp(r0, r1, n * sizeof *r0) != 0) {
      print_error("threads %d, held %zu: other bits than 1 thread\n", threads[t], held[t]);
      fail();
    }
  }
  assert_int_equal(dpd_rf_clipped_gradient_eval(pr, theta, C, g1, r1), c0);
  assert_memory_equal(g0, g1, p * sizeof *g0);
  /* Dense reference in row order, one running sum: the same value to rounding, other bits. */
  size_t want_clipped = 0;
  for (size_t i = 0; i < n; i++) {
    double ri = -pr->y[i], s = 0.0;
    for (size_t k = 0; k < p; k++) {
      ri += pr->phi[i * p + k] * theta[k];
      s += pr->phi[i * p + k] * pr->phi[i * p + k];
    }
    const double norm = 2.0 * fabs(ri) * sqrt(s), w = norm > C ? C / norm : 1.0;
    want_clipped += norm > C;
    for (size_t k = 0; k < p; k++) {
      want[k] += w * 2.0 * ri * pr->phi[i * p + k] / (double)n;
    }
  }
  assert_int_equal(c0, want_clipped);
  double scale = 0.0;
  for (size_t k = 0; k < p; k++) {
    scale = fmax(scale, fabs(want[k]));
  }
  for (size_t k = 0; k < p; k++) {
    assert_abs(g0[k], want[k], 1e-12 * scale);
  }
  assert_true(memcmp(g0, want, p * sizeof *g0) != 0);
  free(theta);
  free(g0);
  free(g1);
  free(want);
  free(r0);
  free(r1);
  dpd_rf_problem_free(pr);
}

/* The same shape through the simulator: one replicate with its 64 blocks on 1, 2, 3 and 16
 * threads, and replicate 0 of three run in parallel on 2 threads (blocks in series), all give
 * the same bits. */
static void many_blocks_simulation_bit_identical_for_any_thread_count(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(6, 1100, 40, 45, SEED + 32);
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 25;
  cfg.eta = 0.05;
  cfg.clip = 0.3;
  cfg.sigma = 0.5;
  cfg.seeds = 1;
  cfg.grid = 6;
  cfg.seed = SEED + 33;
  cfg.threads = 1;
  dpd_rf_sim_result *a = run_ok(pr, &cfg);
  assert_true(a->clip_fraction_total > 0.0 && a->clip_fraction_total < 1.0);
  const int threads[] = {2, 3, 16};
  for (size_t t = 0; t < 3; t++) {
    cfg.threads = threads[t];
    dpd_rf_sim_result *b = run_ok(pr, &cfg);
    assert_memory_equal(a->theta_last, b->theta_last, pr->p * sizeof *a->theta_last);
    assert_memory_equal(a->train_replicates, b->train_replicates, cfg.grid * sizeof(double));
    assert_memory_equal(a->test_replicates, b->test_replicates, cfg.grid * sizeof(double));
    assert_memory_equal(a->clip_fraction, b->clip_fraction, cfg.T * sizeof(double));
    dpd_rf_sim_result_free(b);
  }
  cfg.seeds = 3;
  cfg.threads = 2;
  dpd_rf_sim_result *c = run_ok(pr, &cfg);
  assert_memory_equal(a->theta_last, c->theta_last, pr->p * sizeof *a->theta_last);
  assert_memory_equal(a->test_replicates, c->test_replicates, cfg.grid * sizeof(double));
  dpd_rf_sim_result_free(a);
  dpd_rf_sim_result_free(c);
  dpd_rf_problem_free(pr);
}

/* Tiny clip: every sample is clipped at every step; theta_0 = 0 gives train risk mean y^2. */
static void clip_fraction_and_initial_risk(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(4, 12, 6, 19, SEED + 3);
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 10;
  cfg.eta = 0.1;
  cfg.clip = 1e-6;
  cfg.seeds = 3;
  cfg.grid = 3;
  dpd_rf_sim_result *res = run_ok(pr, &cfg);
  for (size_t t = 0; t < cfg.T; t++) {
    assert_abs(res->clip_fraction[t], 1.0, 0.0);
  }
  for (size_t rep = 0; rep < cfg.seeds; rep++) {
    assert_int_equal(res->first_clip[rep], 0);
  }
  double y2 = 0.0;
  for (size_t i = 0; i < pr->n; i++) {
    y2 += pr->y[i] * pr->y[i];
  }
  assert_rel(res->train_mean[0], y2 / (double)pr->n, 1e-14);
  dpd_rf_sim_result_free(res);
  dpd_rf_problem_free(pr);
}

/* One step: theta_1 = -eta g_0 - sqrt(eta) (2 C / n) sigma xi_0 with xi_0 the first p Gaussians
 * of stream (seed, r) (rf_sim.h), here for replicate 0; the clip is large enough to be inactive. */
static void noise_has_documented_scale_and_stream(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(7, 15, 4, 101, SEED + 6);
  const size_t n = pr->n, p = pr->p;
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 1;
  cfg.eta = 0.037;
  cfg.clip = 1e6;
  cfg.sigma = 2.385;
  cfg.seeds = 1;
  cfg.seed = SEED + 11;
  dpd_rf_sim_result *noisy = run_ok(pr, &cfg);
  cfg.sigma = 0.0;
  dpd_rf_sim_result *plain = run_ok(pr, &cfg);
  double xi[101];
  dpd_rng rng;
  dpd_rng_init(&rng, SEED + 11, 0);
  dpd_rng_gaussian_fill(&rng, xi, p);
  const double C = 1e6 * sqrt((double)p);
  const double ns = sqrt(0.037) * (2.0 * C / (double)n) * 2.385;
  for (size_t k = 0; k < p; k++) {
    double got = (plain->theta_last[k] - noisy->theta_last[k]) / ns;
    assert_abs(got, xi[k], 1e-9);
  }
  dpd_rf_sim_result_free(noisy);
  dpd_rf_sim_result_free(plain);
  dpd_rf_problem_free(pr);
}

/* Solves the m x m system A x = b in place by Gaussian elimination with partial pivoting. */
static void solve(double *A, double *b, size_t m) {
  for (size_t c = 0; c < m; c++) {
    size_t piv = c;
    for (size_t i = c + 1; i < m; i++) {
      if (fabs(A[i * m + c]) > fabs(A[piv * m + c])) {
        piv = i;
      }
    }
    for (size_t k = 0; k < m; k++) {
      double t = A[c * m + k];
      A[c * m + k] = A[piv * m + k];
      A[piv * m + k] = t;
    }
    double t = b[c];
    b[c] = b[piv];
    b[piv] = t;
    for (size_t i = c + 1; i < m; i++) {
      double f = A[i * m + c] / A[c * m + c];
      for (size_t k = c; k < m; k++) {
        A[i * m + k] -= f * A[c * m + k];
      }
      b[i] -= f * b[c];
    }
  }
  for (size_t c = m; c-- > 0;) {
    for (size_t k = c + 1; k < m; k++) {
      b[c] -= A[c * m + k] * b[k];
    }
    b[c] /= A[c * m + c];
  }
}

static void theta_star_equals_dense_min_norm_solution(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(5, 6, 11, 17, SEED + 4);
  const size_t n = pr->n, p = pr->p;
  double G[36], a[6], want[17], got[17];
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < n; j++) {
      double s = 0.0;
      for (size_t k = 0; k < p; k++) {
        s += pr->phi[i * p + k] * pr->phi[j * p + k];
      }
      G[i * n + j] = s;
    }
    a[i] = pr->y[i];
  }
  solve(G, a, n);
  for (size_t k = 0; k < p; k++) {
    want[k] = 0.0;
    for (size_t i = 0; i < n; i++) {
      want[k] += pr->phi[i * p + k] * a[i];
    }
  }
  double train = -1.0, test = -1.0;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_theta_star_get(pr, -1.0, got, &train, &test, &err), DPD_OK);
  for (size_t k = 0; k < p; k++) {
    assert_abs(got[k], want[k], 1e-9 * (1.0 + fabs(want[k])));
  }
  assert_abs(train, 0.0, 1e-16);
  assert_rel(test, dpd_rf_risk_eval(pr, want, 1), 1e-9);
  dpd_rf_problem_free(pr);
}

/* Plain GD from theta_0 = 0 stays in the row space of Phi and converges to Phi^+ y (p > n). */
static void gradient_descent_converges_to_theta_star(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(9, 20, 30, 80, SEED + 8);
  double ts[80], train = -1.0, test = -1.0;
  assert_int_equal(dpd_rf_theta_star_get(pr, -1.0, ts, &train, &test, NULL), DPD_OK);
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 30000;
  cfg.eta = 0.1;
  cfg.seeds = 1;
  cfg.grid = 2;
  dpd_rf_sim_result *res = run_ok(pr, &cfg);
  assert_abs(res->train_mean[1], 0.0, 1e-12);
  assert_rel(res->test_mean[1], test, 1e-8);
  for (size_t k = 0; k < pr->p; k++) {
    assert_abs(res->theta_last[k], ts[k], 1e-6 * (1.0 + fabs(ts[k])));
  }
  dpd_rf_sim_result_free(res);
  dpd_rf_problem_free(pr);
}

/* Unclipped DP-GD is GD plus a linear noise recursion N_{t+1} = B N_t - s xi_t, B = I - eta A,
 * A = (2/n) Phi^T Phi, s = sqrt(eta) (2C/n) sigma, so for any feature matrix F with m rows
 *   E (1/m) ||F theta_T - y_F||^2 = (1/m) ||F theta^GD_T - y_F||^2 + (s^2/m) sum_{t<T} ||F
 * B^t||_F^2. Simulated means over 4000 replicates must agree within 4 SE (train and test). */
static double noise_term(const dpd_rf_problem *pr, const double *F, size_t m, size_t T, double eta,
                         double s) {
  const size_t n = pr->n, p = pr->p;
  double *B = malloc(p * p * sizeof *B), *M = malloc(m * p * sizeof *M);
  double *next = malloc(m * p * sizeof *next);
  assert_non_null(B);
  assert_non_null(M);
  assert_non_null(next);
  for (size_t a = 0; a < p; a++) {
    for (size_t b = 0; b < p; b++) {
      double v = 0.0;
      for (size_t i = 0; i < n; i++) {
        v += pr->phi[i * p + a] * pr->phi[i * p + b];
      }
      B[a * p + b] = (a == b ? 1.0 : 0.0) - eta * 2.0 * v / (double)n;
    }
  }
  memcpy(M, F, m * p * sizeof *M);
  double acc = 0.0;
  for (size_t t = 0; t < T; t++) {
    for (size_t k = 0; k < m * p; k++) {
      acc += M[k] * M[k];
    }
    for (size_t i = 0; i < m; i++) {
      for (size_t b = 0; b < p; b++) {
        double v = 0.0;
        for (size_t a = 0; a < p; a++) {
          v += M[i * p + a] * B[a * p + b];
        }
        next[i * p + b] = v;
      }
    }
    memcpy(M, next, m * p * sizeof *M);
  }
  free(B);
  free(M);
  free(next);
  return s * s * acc / (double)m;
}

static void unclipped_noisy_mean_risk_matches_exact_formula(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(6, 12, 10, 30, SEED + 10);
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 50;
  cfg.eta = 0.07;
  cfg.clip = 1e3;
  cfg.sigma = 2e-4;
  cfg.seeds = 4000;
  cfg.grid = 2;
  cfg.seed = SEED + 12;
  dpd_rf_sim_result *noisy = run_ok(pr, &cfg);
  assert_abs(noisy->clip_fraction_total, 0.0, 0.0);
  assert_int_equal(noisy->first_clip[cfg.seeds - 1], cfg.T);
  dpd_rf_sim_config plain_cfg = cfg;
  plain_cfg.sigma = 0.0;
  plain_cfg.seeds = 1;
  dpd_rf_sim_result *plain = run_ok(pr, &plain_cfg);
  const double C = cfg.clip * sqrt((double)pr->p);
  const double s = sqrt(cfg.eta) * (2.0 * C / (double)pr->n) * cfg.sigma;
  double want_train = plain->train_mean[1] + noise_term(pr, pr->phi, pr->n, cfg.T, cfg.eta, s);
  double want_test =
      plain->test_mean[1] + noise_term(pr, pr->phi_test, pr->n_test, cfg.T, cfg.eta, s);
  /* The noise must matter for the check to mean something. */
  assert_true(want_test > 1.5 * plain->test_mean[1]);
  if (!(fabs(noisy->train_mean[1] - want_train) <= 4.0 * noisy->train_se[1]) ||
      !(fabs(noisy->test_mean[1] - want_test) <= 4.0 * noisy->test_se[1])) {
    print_error("seed %llu: train %.6g want %.6g (se %.3g); test %.6g want %.6g (se %.3g)\n",
                (unsigned long long)cfg.seed, noisy->train_mean[1], want_train, noisy->train_se[1],
                noisy->test_mean[1], want_test, noisy->test_se[1]);
    fail();
  }
  dpd_rf_sim_result_free(noisy);
  dpd_rf_sim_result_free(plain);
  dpd_rf_problem_free(pr);
}

static void expect_einval(const dpd_rf_problem *pr, const dpd_rf_sim_config *cfg, const char *key) {
  dpd_rf_sim_result *res = (dpd_rf_sim_result *)1;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_sim_run(pr, cfg, &res, &err), DPD_EINVAL);
  assert_null(res);
  assert_non_null(strstr(err.reason, key));
  assert_non_null(strstr(err.reason, "allowed"));
}

static void bad_configs_are_rejected_and_divergence_reported(void **state) {
  (void)state;
  dpd_rf_problem *pr = make(4, 8, 5, 16, SEED + 5);
  dpd_rf_sim_config base = dpd_rf_sim_config_default(), cfg;
  base.T = 20;
  base.seeds = 2;
  cfg = base;
  cfg.T = 0;
  expect_einval(pr, &cfg, "'T'");
  cfg = base;
  cfg.seeds = 0;
  expect_einval(pr, &cfg, "'seeds'");
  cfg = base;
  cfg.grid = 1;
  expect_einval(pr, &cfg, "'grid'");
  cfg = base;
  cfg.eta = 0.0;
  expect_einval(pr, &cfg, "'eta'");
  cfg = base;
  cfg.eta = NAN;
  expect_einval(pr, &cfg, "'eta'");
  cfg = base;
  cfg.clip = -1.5;
  expect_einval(pr, &cfg, "'clip'");
  cfg = base;
  cfg.sigma = -0.5;
  expect_einval(pr, &cfg, "'sigma'");
  cfg = base;
  cfg.sigma = 1.0; /* with clip = INFINITY */
  expect_einval(pr, &cfg, "'sigma'");

  cfg = base;
  cfg.eta = 1e3;
  cfg.T = 500;
  dpd_rf_sim_result *res = (dpd_rf_sim_result *)1;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_sim_run(pr, &cfg, &res, &err), DPD_ENONFINITE);
  assert_null(res);
  assert_non_null(strstr(err.reason, "diverged"));
  dpd_rf_problem_free(pr);
}

/* resample (dpd_rf_sim_resample_run): what each replicate redraws, checked replicate by
 * replicate against dpd_rf_sim_run on a problem built alone. */
typedef struct {
  size_t calls, reps[8];
  uint64_t draws[8];
  double phi0[8]; /* first feature of each problem seen */
} draw_log;

static int log_draw(void *user, size_t rep, const dpd_rf_problem *problem, dpd_err *err) {
  draw_log *log = user;
  (void)err;
  if (log->calls < 8) {
    log->reps[log->calls] = rep;
    log->draws[log->calls] = problem->cfg.draw;
    log->phi0[log->calls] = problem->phi[0];
  }
  log->calls++;
  return DPD_OK;
}

static dpd_rf_config resample_problem(void) {
  dpd_rf_config pc = dpd_rf_config_default();
  pc.d = 6;
  pc.n = 40;
  pc.n_test = 25;
  pc.p = 53;
  pc.zeta = 0.31;
  pc.seed = SEED + 11;
  return pc;
}

static dpd_rf_sim_config resample_sim(void) {
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = 30;
  cfg.eta = 0.05;
  cfg.clip = 0.3;
  cfg.sigma = 0.8;
  cfg.seeds = 4;
  cfg.grid = 6;
  cfg.seed = SEED;
  cfg.threads = 1;
  return cfg;
}

static dpd_rf_sim_result *resample_ok(const dpd_rf_config *pc, const dpd_rf_sim_config *cfg,
                                      dpd_rf_resample mode, draw_log *log) {
  dpd_rf_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_rf_sim_resample_run(pc, cfg, mode, log != NULL ? log_draw : NULL, log, &res, &err);
  if (st != DPD_OK) {
    print_error("dpd_rf_sim_resample_run(%s): %s (seed %llu)\n", dpd_rf_resample_name(mode),
                err.reason, (unsigned long long)cfg->seed);
  }
  assert_int_equal(st, DPD_OK);
  return res;
}

static void problem_draws_are_independent_and_draw_0_is_the_default(void **state) {
  (void)state;
  dpd_rf_config pc = resample_problem();
  dpd_rf_problem *a = NULL, *b = NULL, *c = NULL;
  assert_int_equal(dpd_rf_problem_create(&pc, &a, NULL), DPD_OK);
  pc.draw = 1;
  assert_int_equal(dpd_rf_problem_create(&pc, &b, NULL), DPD_OK);
  /* Draw 0 (the default) uses the streams of earlier versions: V from (S, M); draw 1 from
   * (S, M - DPD_RF_DRAW_STREAMS), and shares no stream with draw 0. */
  dpd_rng rng;
  double x0;
  dpd_rng_init(&rng, pc.seed, DPD_RNG_STREAM_PROBLEM);
  dpd_rng_gaussian_fill(&rng, &x0, 1);
  assert_true(a->V[0] == x0 / sqrt((double)pc.d));
  dpd_rng_init(&rng, pc.seed, DPD_RNG_STREAM_PROBLEM - DPD_RF_DRAW_STREAMS);
  dpd_rng_gaussian_fill(&rng, &x0, 1);
  assert_true(b->V[0] == x0 / sqrt((double)pc.d));
  for (size_t k = 0; k < 5; k++) {
    assert_true(a->phi[k] != b->phi[k]);
    assert_true(a->y_test[k] != b->y_test[k]);
  }
  assert_true(a->u[0] != b->u[0]);
  /* The same draw again: the same bits. */
  assert_int_equal(dpd_rf_problem_create(&pc, &c, NULL), DPD_OK);
  assert_memory_equal(b->phi, c->phi, pc.n * pc.p * sizeof *b->phi);
  dpd_rf_problem_free(c);
  c = (dpd_rf_problem *)1;
  pc.draw = DPD_RF_DRAW_MAX + 1;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_problem_create(&pc, &c, &err), DPD_EINVAL);
  assert_null(c);
  assert_non_null(strstr(err.reason, "'draw'"));
  dpd_rf_problem_free(a);
  dpd_rf_problem_free(b);
}

static void resample_noise_is_dpd_rf_sim_run_bit_for_bit(void **state) {
  (void)state;
  const dpd_rf_config pc = resample_problem();
  const dpd_rf_sim_config cfg = resample_sim();
  draw_log log = {0};
  dpd_rf_problem *pr = NULL;
  assert_int_equal(dpd_rf_problem_create(&pc, &pr, NULL), DPD_OK);
  dpd_rf_sim_result *a = run_ok(pr, &cfg);
  dpd_rf_sim_result *b = resample_ok(&pc, &cfg, DPD_RF_RESAMPLE_NOISE, &log);
  const size_t sg = cfg.seeds * cfg.grid;
  assert_int_equal(log.calls, 1); /* one problem */
  assert_int_equal(log.reps[0], 0);
  assert_memory_equal(a->test_replicates, b->test_replicates, sg * sizeof(double));
  assert_memory_equal(a->train_replicates, b->train_replicates, sg * sizeof(double));
  assert_memory_equal(a->test_se, b->test_se, cfg.grid * sizeof(double));
  assert_memory_equal(a->clip_fraction, b->clip_fraction, cfg.T * sizeof(double));
  assert_memory_equal(a->theta_last, b->theta_last, pc.p * sizeof(double));
  dpd_rf_sim_result_free(a);
  dpd_rf_sim_result_free(b);
  dpd_rf_problem_free(pr);
}

/* Replicate r of `all` is DP-GD on draw r with noise stream (seed, r): replicate r of
 * dpd_rf_sim_run on the problem of draw r; of `data`, its replicate 0 (stream (seed, 0)). Means,
 * SEs and clipped fractions are over those rows. Bit-identical for 1 and 3 threads. */
static void resample_all_and_data_replicates_are_runs_on_their_own_draws(void **state) {
  (void)state;
  const dpd_rf_config pc = resample_problem();
  dpd_rf_sim_config cfg = resample_sim();
  const size_t g = cfg.grid, S = cfg.seeds;
  for (int m = 0; m < 2; m++) {
    const dpd_rf_resample mode = m == 0 ? DPD_RF_RESAMPLE_ALL : DPD_RF_RESAMPLE_DATA;
    draw_log log = {0};
    cfg.threads = 1;
    dpd_rf_sim_result *a = resample_ok(&pc, &cfg, mode, &log);
    cfg.threads = 3;
    dpd_rf_sim_result *b = resample_ok(&pc, &cfg, mode, NULL);
    assert_int_equal(log.calls, S);
    for (size_t r = 0; r < S; r++) {
      assert_int_equal(log.reps[r], r);
      assert_int_equal(log.draws[r], r);
      if (r > 0) {
        assert_true(log.phi0[r] != log.phi0[r - 1]);
      }
      dpd_rf_config pcr = pc;
      dpd_rf_problem *pr = NULL;
      pcr.draw = r;
      assert_int_equal(dpd_rf_problem_create(&pcr, &pr, NULL), DPD_OK);
      dpd_rf_sim_config one = cfg;
      one.seeds = mode == DPD_RF_RESAMPLE_ALL ? r + 1 : 1;
      dpd_rf_sim_result *ref = run_ok(pr, &one);
      const size_t row = one.seeds - 1;
      assert_memory_equal(a->test_replicates + r * g, ref->test_replicates + row * g,
                          g * sizeof(double));
      assert_memory_equal(a->train_replicates + r * g, ref->train_replicates + row * g,
                          g * sizeof(double));
      assert_int_equal(a->first_clip[r], ref->first_clip[row]);
      if (r == 0) {
        assert_memory_equal(a->theta_last, ref->theta_last, pc.p * sizeof(double));
      }
      dpd_rf_sim_result_free(ref);
      dpd_rf_problem_free(pr);
    }
    const size_t sg = S * g;
    assert_memory_equal(a->test_replicates, b->test_replicates, sg * sizeof(double));
    assert_memory_equal(a->train_replicates, b->train_replicates, sg * sizeof(double));
    assert_memory_equal(a->test_mean, b->test_mean, g * sizeof(double));
    assert_memory_equal(a->test_se, b->test_se, g * sizeof(double));
    assert_memory_equal(a->clip_fraction, b->clip_fraction, cfg.T * sizeof(double));
    assert_memory_equal(a->theta_last, b->theta_last, pc.p * sizeof(double));
    /* mean and SE are those of the rows */
    double mean = 0.0, ss = 0.0;
    for (size_t r = 0; r < S; r++) {
      mean += a->test_replicates[r * g + g - 1] / (double)S;
    }
    for (size_t r = 0; r < S; r++) {
      const double dv = a->test_replicates[r * g + g - 1] - mean;
      ss += dv * dv;
    }
    assert_rel(a->test_mean[g - 1], mean, 1e-13);
    assert_rel(a->test_se[g - 1], sqrt(ss / (double)(S - 1) / (double)S), 1e-13);
    assert_true(a->test_se[g - 1] > 0.0);
    dpd_rf_sim_result_free(a);
    dpd_rf_sim_result_free(b);
  }
}

typedef struct {
  size_t calls, last, total;
  int monotone;
} progress_log;

static int log_progress(void *user, size_t done, size_t total) {
  progress_log *p = user;
  /* done == last: a heartbeat (replicate.h), allowed */
  p->monotone = p->monotone && done >= p->last && done <= total;
  p->last = done;
  p->total = total;
  p->calls++;
  return 0;
}

static int stop_at_draw_2(void *user, size_t rep, const dpd_rf_problem *problem, dpd_err *err) {
  (void)user;
  (void)problem;
  return rep == 2 ? DPD_FAIL(err, DPD_ESOLVER, "stopped at draw %zu", rep) : DPD_OK;
}

static void resample_progress_errors_and_bad_values(void **state) {
  (void)state;
  const dpd_rf_config pc = resample_problem();
  dpd_rf_sim_config cfg = resample_sim();
  progress_log pl = {0, 0, 0, 1};
  cfg.progress = log_progress;
  cfg.progress_user = &pl;
  dpd_rf_sim_result *a = resample_ok(&pc, &cfg, DPD_RF_RESAMPLE_ALL, NULL);
  assert_true(pl.monotone);
  assert_int_equal(pl.last, cfg.seeds * cfg.T);
  assert_int_equal(pl.total, cfg.seeds * cfg.T);
  dpd_rf_sim_result_free(a);
  cfg.progress = NULL;

  dpd_err err;
  dpd_rf_sim_result *res = (dpd_rf_sim_result *)1;
  dpd_err_reset(&err);
  assert_int_equal(
      dpd_rf_sim_resample_run(&pc, &cfg, DPD_RF_RESAMPLE_DATA, stop_at_draw_2, NULL, &res, &err),
      DPD_ESOLVER);
  assert_null(res);
  assert_non_null(strstr(err.reason, "draw 2"));
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_sim_resample_run(&pc, &cfg, (dpd_rf_resample)7, NULL, NULL, &res, &err),
                   DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'resample'"));
  dpd_rf_config far = pc;
  far.draw = DPD_RF_DRAW_MAX - 1; /* draws MAX - 1 .. MAX + 2 */
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_sim_resample_run(&far, &cfg, DPD_RF_RESAMPLE_ALL, NULL, NULL, &res, &err),
                   DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'seeds'"));
  cfg.T = 0;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_sim_resample_run(&pc, &cfg, DPD_RF_RESAMPLE_ALL, NULL, NULL, &res, &err),
                   DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'T'"));
  /* A diverging replicate names its draw and noise stream. */
  cfg = resample_sim();
  cfg.eta = 1e3;
  cfg.T = 300;
  cfg.sigma = 0.0;
  cfg.clip = INFINITY;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_sim_resample_run(&pc, &cfg, DPD_RF_RESAMPLE_ALL, NULL, NULL, &res, &err),
                   DPD_ENONFINITE);
  assert_null(res);
  assert_non_null(strstr(err.reason, "replicate 0 (data draw 0, noise stream"));
  /* Names */
  dpd_rf_resample m = DPD_RF_RESAMPLE_NOISE;
  assert_int_equal(dpd_rf_resample_get("all", &m, NULL), DPD_OK);
  assert_int_equal(m, DPD_RF_RESAMPLE_ALL);
  assert_int_equal(dpd_rf_resample_get("data", &m, NULL), DPD_OK);
  assert_int_equal(m, DPD_RF_RESAMPLE_DATA);
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_resample_get("both", &m, &err), DPD_EINVAL);
  assert_int_equal(m, DPD_RF_RESAMPLE_DATA);
  assert_non_null(strstr(err.reason, "'resample': 'both' (allowed: noise, data, all)"));
  assert_string_equal(dpd_rf_resample_name(DPD_RF_RESAMPLE_NOISE), "noise");
  assert_string_equal(dpd_rf_resample_name((dpd_rf_resample)9), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(clipped_gradient_equals_brute_force),
      cmocka_unit_test(gradient_kernels_agree_bit_for_bit_across_isas),
      cmocka_unit_test(unclipped_noiseless_iterate_equals_dense_gd),
      cmocka_unit_test(results_are_bit_identical_for_any_thread_count),
      cmocka_unit_test(many_blocks_gradient_bit_identical_for_threads_and_held),
      cmocka_unit_test(many_blocks_simulation_bit_identical_for_any_thread_count),
      cmocka_unit_test(clip_fraction_and_initial_risk),
      cmocka_unit_test(noise_has_documented_scale_and_stream),
      cmocka_unit_test(theta_star_equals_dense_min_norm_solution),
      cmocka_unit_test(gradient_descent_converges_to_theta_star),
      cmocka_unit_test(unclipped_noisy_mean_risk_matches_exact_formula),
      cmocka_unit_test(bad_configs_are_rejected_and_divergence_reported),
      cmocka_unit_test(problem_draws_are_independent_and_draw_0_is_the_default),
      cmocka_unit_test(resample_noise_is_dpd_rf_sim_run_bit_for_bit),
      cmocka_unit_test(resample_all_and_data_replicates_are_runs_on_their_own_draws),
      cmocka_unit_test(resample_progress_errors_and_bad_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
