/* Tests of the neural-collapse problem and NoisyGD simulator (include/dpdyn/nc.h).
 * SPDX-License-Identifier: MIT
 *
 * Statistical checks use fixed seeds and the standard error over the replicates (each
 * replicate redraws the training shifts, the noise and the test shifts; P is fixed). With
 * clean test points every test point of a class is the same point M_k, so a replicate's class
 * error is 0 or 1 and its mean over replicates estimates the exact error of the random W. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/nc.h"
#include "nc_test.h"
#include "dpdyn/rng.h"

static double Phi(double x) {
  return 0.5 * erfc(-x / sqrt(2.0));
}

static void etf_has_simplex_geometry(void **state) {
  (void)state;
  const size_t Ks[3] = {2, 3, 10};
  for (int dense = 0; dense < 2; dense++) {
    for (size_t a = 0; a < 3; a++) {
      dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
      cfg.K = Ks[a];
      cfg.p = 37;
      cfg.n = 100;
      cfg.n_test = 20;
      cfg.etf = dense ? DPD_NC_ETF_DENSE : DPD_NC_ETF_SPARSE;
      cfg.seed = 77;
      dpd_nc_problem *pr = make(&cfg);
      const size_t K = pr->K, p = pr->p;
      for (size_t j = 0; j < K; j++) {
        for (size_t k = 0; k < K; k++) {
          double d = 0.0;
          for (size_t l = 0; l < p; l++) {
            d += pr->M[j * p + l] * pr->M[k * p + l];
          }
          assert_true(fabs(d - (j == k ? 1.0 : -1.0 / (double)(K - 1))) < 1e-12);
        }
      }
      size_t nonzero = 0;
      for (size_t l = 0; l < p; l++) {
        double s = 0.0;
        for (size_t k = 0; k < K; k++) {
          s += pr->M[k * p + l];
          nonzero += pr->M[k * p + l] != 0.0;
        }
        assert_true(fabs(s) < 1e-12);
      }
      if (!dense) {
        assert_true(nonzero == K * K); /* supported on the first K coordinates */
      } else {
        assert_true(nonzero > K * K);
      }
      /* Perfect collapse: sup |x| = 1, so G = sqrt((K-1)/K) (CE) and 1 (square). */
      assert_true(fabs(dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE) - sqrt((double)(K - 1) / (double)K)) <
                  1e-12);
      assert_true(fabs(dpd_nc_sensitivity(pr, DPD_NC_LOSS_SQUARE) - 1.0) < 1e-12);
      dpd_nc_problem_free(pr);
    }
  }
}

static void class_counts_follow_the_rule(void **state) {
  (void)state;
  size_t c[10];
  assert_int_equal(dpd_nc_class_counts(3, 10, 1.0, 0.0, "n", c, NULL), DPD_OK);
  assert_true(c[0] == 4 && c[1] == 3 && c[2] == 3);
  assert_int_equal(dpd_nc_class_counts(10, 10000, 9.0, 0.5, "n", c, NULL), DPD_OK);
  for (size_t k = 0; k < 10; k++) {
    assert_true(c[k] == (k < 5 ? 1800u : 200u));
  }
  /* 3 classes, ratio 4, fraction 0.34 (m = 1): weights 4, 4, 1 of 9; n = 20: 8, 8, 2 + 2. */
  assert_int_equal(dpd_nc_class_counts(3, 20, 4.0, 0.34, "n", c, NULL), DPD_OK);
  assert_true(c[0] == 9 && c[1] == 9 && c[2] == 2);
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_class_counts(10, 30, 100.0, 0.5, "n_test", c, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'n_test'"));
  assert_int_equal(dpd_nc_class_counts(3, 30, 0.5, 0.5, "n", c, NULL), DPD_EINVAL);

  dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
  cfg.K = 10;
  cfg.n = 10000;
  cfg.n_test = 500;
  cfg.imbalance_ratio = 9.0;
  cfg.imbalance_fraction = 0.5;
  dpd_nc_problem *pr = make(&cfg);
  for (size_t k = 0; k < 10; k++) {
    assert_true(pr->counts[k] == (k < 5 ? 1800u : 200u));
    assert_true(pr->test_counts[k] == (k < 5 ? 90u : 10u));
  }
  dpd_nc_problem_free(pr);
}

static void bad_configs_name_the_key(void **state) {
  (void)state;
  dpd_nc_problem_config base = dpd_nc_problem_config_default(), cfg;
  dpd_nc_problem *pr = NULL;
  dpd_err err;
#define EXPECT_BAD(stmt, key)                                                                      \
  do {                                                                                             \
    cfg = base;                                                                                    \
    stmt;                                                                                          \
    dpd_err_reset(&err);                                                                           \
    assert_int_equal(dpd_nc_problem_create(&cfg, &pr, &err), DPD_EINVAL);                          \
    assert_null(pr);                                                                               \
    assert_non_null(strstr(err.reason, key));                                                      \
  } while (0)
  EXPECT_BAD(cfg.K = 1, "'K'");
  EXPECT_BAD(cfg.p = 5, "'p'");
  EXPECT_BAD(cfg.beta = -0.1, "'beta'");
  EXPECT_BAD(cfg.shift = DPD_NC_SHIFT_ADVERSARIAL, "'shift'");
  EXPECT_BAD(cfg.test_shift = (dpd_nc_shift)9, "'test'");
  EXPECT_BAD(cfg.offset = NAN, "'offset'");
  EXPECT_BAD(cfg.n = 5, "'n'");
#undef EXPECT_BAD
  pr = make(&base);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  dpd_nc_sim_result *res = NULL;
  sc.sigma = -1.0;
  assert_int_equal(dpd_nc_sim_run(pr, &sc, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'sigma'"));
  sc = dpd_nc_sim_config_default();
  sc.steps = 0;
  assert_int_equal(dpd_nc_sim_run(pr, &sc, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'steps'"));
  assert_null(res);
  dpd_nc_problem_free(pr);
}

/* Class sums equal the sum of the regenerated samples; the sup-norm bound holds. */
static void class_sums_and_sensitivity(void **state) {
  (void)state;
  dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
  cfg.K = 3;
  cfg.p = 41;
  cfg.n = 17;
  cfg.shift = DPD_NC_SHIFT_CUBE;
  cfg.beta = 0.2;
  cfg.offset = 0.05;
  cfg.etf = DPD_NC_ETF_DENSE;
  dpd_nc_problem *pr = make(&cfg);
  const size_t K = 3, p = 41;
  double sums[3 * 41], want[3 * 41] = {0}, x[41];
  dpd_nc_class_sums(pr, 9, 4, sums);
  double maxnorm = 0.0, m1 = 0.0, m2 = 0.0;
  for (size_t i = 0; i < pr->n; i++) {
    size_t k = dpd_nc_train_sample(pr, 9, 4, i, x);
    double s2 = 0.0;
    for (size_t l = 0; l < p; l++) {
      want[k * p + l] += x[l];
      s2 += x[l] * x[l];
      const double v = x[l] - pr->M[k * p + l] - pr->nu[l];
      assert_true(fabs(v) <= 0.2 + 1e-12);
      m1 += v;
      m2 += v * v;
      assert_true(fabs(fabs(pr->nu[l]) - 0.05) == 0.0);
    }
    maxnorm = fmax(maxnorm, sqrt(s2));
  }
  for (size_t j = 0; j < K * p; j++) {
    assert_true(sums[j] == want[j]);
  }
  assert_true(maxnorm < pr->x_norm_max);
  /* Uniform on [-0.2, 0.2]: mean 0 (sd 0.2/sqrt(3)), second moment 0.04/3 (sd 0.04 sqrt(4/45)). */
  const double N = (double)(pr->n * p);
  assert_true(fabs(m1 / N) < 4.0 * 0.2 / sqrt(3.0 * N));
  assert_true(fabs(m2 / N - 0.04 / 3.0) < 4.0 * 0.04 * sqrt(4.0 / 45.0) / sqrt(N));
  double bound = 0.0;
  for (size_t k = 0; k < K; k++) {
    double s2 = 0.0;
    for (size_t l = 0; l < p; l++) {
      double a = fabs(pr->M[k * p + l] + pr->nu[l]) + 0.2;
      s2 += a * a;
    }
    bound = fmax(bound, sqrt(s2));
  }
  assert_true(fabs(bound - pr->x_norm_max) < 1e-12);
  /* Another replicate redraws the shifts. */
  double other[3 * 41];
  dpd_nc_class_sums(pr, 9, 5, other);
  assert_true(memcmp(other, sums, sizeof sums) != 0);
  dpd_nc_problem_free(pr);
}

static void noiseless_perfect_collapse_is_error_free(void **state) {
  (void)state;
  for (int dense = 0; dense < 2; dense++) {
    for (int loss = 0; loss < 2; loss++) {
      for (size_t T = 1; T <= 4; T += 3) {
        dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
        cfg.K = 10;
        cfg.p = 25;
        cfg.n = 200;
        cfg.n_test = 50;
        cfg.etf = dense ? DPD_NC_ETF_DENSE : DPD_NC_ETF_SPARSE;
        cfg.imbalance_ratio = 3.0;
        cfg.imbalance_fraction = 0.3;
        dpd_nc_problem *pr = make(&cfg);
        dpd_nc_sim_config sc = dpd_nc_sim_config_default();
        sc.loss = loss ? DPD_NC_LOSS_SQUARE : DPD_NC_LOSS_CE;
        sc.steps = T;
        sc.eta = 1e-3;
        sc.seeds = 3;
        dpd_nc_sim_result *res = run_ok(pr, &sc);
        assert_true(res->test_error == 0.0 && res->test_error_se == 0.0);
        assert_true(res->w_norm > 0.0);
        dpd_nc_sim_result_free(res);
        dpd_nc_problem_free(pr);
      }
    }
  }
}

/* Noiseless sparse perfect collapse, balanced, CE, one step: W_j - W_k = eta (n/K) (M_j - M_k)
 * (up to sign conventions), margin eta n/(K-1); the adversary gains beta eta (n/K)
 * |M_j - M_k|_1 = beta eta (n/K) 2 s, s = sqrt(K/(K-1)): it wins iff beta > s/2. */
static void adversarial_threshold_is_exact(void **state) {
  (void)state;
  const double s = sqrt(10.0 / 9.0);
  const double betas[2] = {0.49 * s, 0.51 * s};
  for (int a = 0; a < 2; a++) {
    dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
    cfg.K = 10;
    cfg.p = 30;
    cfg.n = 100;
    cfg.n_test = 10;
    cfg.test_shift = DPD_NC_SHIFT_ADVERSARIAL;
    cfg.beta_test = betas[a];
    dpd_nc_problem *pr = make(&cfg);
    dpd_nc_sim_config sc = dpd_nc_sim_config_default();
    sc.seeds = 2;
    dpd_nc_sim_result *res = run_ok(pr, &sc);
    assert_true(res->test_error == (a == 0 ? 0.0 : 1.0));
    dpd_nc_sim_result_free(res);
    dpd_nc_problem_free(pr);
  }
}

static void bit_identical_for_any_thread_count(void **state) {
  (void)state;
  dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
  cfg.K = 4;
  cfg.p = 64;
  cfg.n = 60;
  cfg.n_test = 40;
  cfg.etf = DPD_NC_ETF_DENSE;
  cfg.shift = DPD_NC_SHIFT_RADEMACHER;
  cfg.beta = 0.05;
  cfg.offset = 0.02;
  cfg.test_shift = DPD_NC_SHIFT_CUBE;
  cfg.beta_test = 0.1;
  dpd_nc_problem *pr = make(&cfg);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.steps = 3;
  sc.eta = 0.01;
  sc.sigma = 4.0;
  sc.radius = 5.0;
  sc.seeds = 7;
  sc.threads = 1;
  dpd_nc_sim_result *a = run_ok(pr, &sc);
  sc.threads = 3;
  dpd_nc_sim_result *b = run_ok(pr, &sc);
  assert_memory_equal(a->test_error_replicates, b->test_error_replicates, 7 * sizeof(double));
  assert_memory_equal(a->class_error_replicates, b->class_error_replicates, 28 * sizeof(double));
  assert_memory_equal(a->w_norm_replicates, b->w_norm_replicates, 7 * sizeof(double));
  assert_true(a->test_error == b->test_error && a->w_norm == b->w_norm);
  for (size_t r = 0; r < 7; r++) {
    assert_true(a->w_norm_replicates[r] <= 5.0 * (1.0 + 1e-12)); /* projected */
  }
  assert_true(a->clip == dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE));
  dpd_nc_sim_result_free(a);
  dpd_nc_sim_result_free(b);
  dpd_nc_problem_free(pr);
}

/* Binary perfect collapse, CE, exact G = 1/sqrt(2), sigma = G / sqrt(2 rho): the logit gap
 * of class-1 point M_1 is n + (xi_2 - xi_1)^T M_1 ~ N(n, 2 sigma^2), so the error is
 * Phi(-n / (sqrt(2) sigma)) = Phi(-n sqrt(2 rho)) (notes B.5), for any p and either ETF. */
static void binary_perfect_collapse_matches_phi(void **state) {
  (void)state;
  const size_t n = 10;
  const double rho = 0.0035;
  const double want = Phi(-(double)n * sqrt(2.0 * rho));
  const size_t ps[2] = {10, 100000};
  for (int a = 0; a < 2; a++) {
    dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
    cfg.K = 2;
    cfg.p = ps[a];
    cfg.n = n;
    cfg.n_test = 2;
    cfg.etf = a ? DPD_NC_ETF_SPARSE : DPD_NC_ETF_DENSE;
    dpd_nc_problem *pr = make(&cfg);
    dpd_nc_sim_config sc = dpd_nc_sim_config_default();
    const double G = dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE);
    assert_true(fabs(G - sqrt(0.5)) < 1e-15);
    sc.sigma = G / sqrt(2.0 * rho);
    sc.seeds = a ? 300 : 3000;
    sc.seed = 31 + (uint64_t)a;
    dpd_nc_sim_result *res = run_ok(pr, &sc);
    const double z = (res->test_error - want) / res->test_error_se;
    print_message("binary p = %zu: sim %.4f +- %.4f, Phi(-n sqrt(2 rho)) = %.4f (z = %.2f)\n",
                  ps[a], res->test_error, res->test_error_se, want, z);
    assert_true(fabs(z) < 3.0);
    /* A sigma 1.2 times too large predicts a clearly different error. */
    if (a == 0) {
      const double wrong = Phi(-(double)n * sqrt(2.0 * rho) / 1.2);
      assert_true(fabs(res->test_error - wrong) > 3.0 * res->test_error_se);
    }
    dpd_nc_sim_result_free(res);
    dpd_nc_problem_free(pr);
  }
}

/* K-class balanced perfect collapse: 1 - int phi(z) Phi(z + n / ((K-1) sigma))^(K-1) dz
 * (notes B.5) by a 4001-point trapezoid on [-10, 10]. */
static void kclass_perfect_collapse_matches_integral(void **state) {
  (void)state;
  const size_t K = 10, n = 100;
  const double sigma = 10.0;
  const double g = (double)n / ((double)(K - 1) * sigma);
  double integral = 0.0;
  const size_t m = 4001;
  for (size_t i = 0; i < m; i++) {
    const double z = -10.0 + 20.0 * (double)i / (double)(m - 1);
    const double f =
        exp(-0.5 * z * z) / sqrt(2.0 * 3.14159265358979323846) * pow(Phi(z + g), (double)(K - 1));
    integral += (i == 0 || i == m - 1 ? 0.5 : 1.0) * f * 20.0 / (double)(m - 1);
  }
  const double want = 1.0 - integral;
  assert_true(fabs(want - 0.6231) < 5e-4); /* the notes' value */
  for (int loss = 0; loss < 2; loss++) {
    dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
    cfg.K = K;
    cfg.p = 50;
    cfg.n = n;
    cfg.n_test = 10;
    cfg.etf = loss ? DPD_NC_ETF_DENSE : DPD_NC_ETF_SPARSE;
    dpd_nc_problem *pr = make(&cfg);
    dpd_nc_sim_config sc = dpd_nc_sim_config_default();
    sc.loss = loss ? DPD_NC_LOSS_SQUARE : DPD_NC_LOSS_CE;
    sc.sigma = sigma;
    sc.seeds = 1000;
    sc.seed = 500 + (uint64_t)loss;
    dpd_nc_sim_result *res = run_ok(pr, &sc);
    const double z = (res->test_error - want) / res->test_error_se;
    print_message("K = 10 (%s): sim %.4f +- %.4f, exact %.4f (z = %.2f)\n", loss ? "square" : "ce",
                  res->test_error, res->test_error_se, want, z);
    assert_true(fabs(z) < 3.0);
    dpd_nc_sim_result_free(res);
    dpd_nc_problem_free(pr);
  }
}

/* P[err | class sums] for a clean test point M_k (notes B.5): 1 - int phi(z) prod_{j != k}
 * Phi(z + (S_k - S_j)^T M_k / (sigma |M_k|)) dz, 4001-point trapezoid on [-10, 10]. */
static double conditional_error(const double *S, const double *M, size_t K, size_t p, size_t k,
                                double sigma) {
  double g[16], mk = 0.0;
  for (size_t l = 0; l < p; l++) {
    mk += M[k * p + l] * M[k * p + l];
  }
  for (size_t j = 0; j < K; j++) {
    double d = 0.0;
    for (size_t l = 0; l < p; l++) {
      d += (S[k * p + l] - S[j * p + l]) * M[k * p + l];
    }
    g[j] = d / (sigma * sqrt(mk));
  }
  const size_t m = 4001;
  double integral = 0.0;
  for (size_t i = 0; i < m; i++) {
    const double z = -10.0 + 20.0 * (double)i / (double)(m - 1);
    double f = exp(-0.5 * z * z) / sqrt(2.0 * 3.14159265358979323846);
    for (size_t j = 0; j < K; j++) {
      if (j != k) {
        f *= Phi(z + g[j]);
      }
    }
    integral += (i == 0 || i == m - 1 ? 0.5 : 1.0) * f * 20.0 / (double)(m - 1);
  }
  return 1.0 - integral;
}

/* Shifted training data (cube / rademacher, offset, imbalance, both losses), clean test, T = 1:
 * per replicate, the simulated test error minus the exact conditional error given that
 * replicate's class sums (dpd_nc_class_sums) has mean 0; checked within 3 SE of the paired
 * differences. A sigma 1.2 times too large in the formula is rejected. */
static void shifted_one_step_matches_conditional_formula(void **state) {
  (void)state;
  for (int c = 0; c < 2; c++) {
    dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
    cfg.K = 3;
    cfg.p = 400;
    cfg.n = 30;
    cfg.n_test = 30;
    cfg.etf = c ? DPD_NC_ETF_DENSE : DPD_NC_ETF_SPARSE;
    cfg.shift = c ? DPD_NC_SHIFT_RADEMACHER : DPD_NC_SHIFT_CUBE;
    cfg.beta = 0.1;
    cfg.offset = c ? 0.03 : 0.0;
    cfg.imbalance_ratio = c ? 2.0 : 1.0;
    cfg.imbalance_fraction = c ? 0.34 : 0.0;
    dpd_nc_problem *pr = make(&cfg);
    const size_t K = pr->K, p = pr->p;
    dpd_nc_sim_config sc = dpd_nc_sim_config_default();
    sc.loss = c ? DPD_NC_LOSS_SQUARE : DPD_NC_LOSS_CE;
    sc.sigma = 12.0;
    sc.seeds = 600;
    sc.seed = 70 + (uint64_t)c;
    dpd_nc_sim_result *res = run_ok(pr, &sc);
    double *S = malloc(K * p * sizeof *S);
    double *d = malloc(sc.seeds * sizeof *d), *dw = malloc(sc.seeds * sizeof *dw);
    double sum = 0.0;
    for (size_t r = 0; r < sc.seeds; r++) {
      dpd_nc_class_sums(pr, sc.seed, r, S);
      double e = 0.0, ew = 0.0;
      for (size_t k = 0; k < K; k++) {
        const double w = (double)pr->test_counts[k] / (double)pr->n_test;
        e += w * conditional_error(S, pr->M, K, p, k, sc.sigma);
        ew += w * conditional_error(S, pr->M, K, p, k, 1.2 * sc.sigma);
      }
      d[r] = res->test_error_replicates[r] - e;
      dw[r] = res->test_error_replicates[r] - ew;
      sum += e;
    }
    double md = 0.0, mw = 0.0, vd = 0.0, vw = 0.0;
    for (size_t r = 0; r < sc.seeds; r++) {
      md += d[r] / (double)sc.seeds;
      mw += dw[r] / (double)sc.seeds;
    }
    for (size_t r = 0; r < sc.seeds; r++) {
      vd += (d[r] - md) * (d[r] - md) / (double)(sc.seeds - 1);
      vw += (dw[r] - mw) * (dw[r] - mw) / (double)(sc.seeds - 1);
    }
    const double se = sqrt(vd / (double)sc.seeds), sew = sqrt(vw / (double)sc.seeds);
    print_message("shifted K = 3 (%s): sim %.4f +- %.4f, exact conditional mean %.4f, paired "
                  "z = %.2f; sigma x 1.2: z = %.2f\n",
                  c ? "rademacher" : "cube", res->test_error, res->test_error_se,
                  sum / (double)sc.seeds, md / se, mw / sew);
    assert_true(fabs(md) < 3.0 * se);
    assert_true(fabs(mw) > 3.0 * sew);
    free(S);
    free(d);
    free(dw);
    dpd_nc_sim_result_free(res);
    dpd_nc_problem_free(pr);
  }
}

/* Multi-step, clipped, noisy, projected: |W_T| equals a naive dense re-implementation of the
 * documented update (per-sample gradients one by one, the noise regenerated from region
 * (tag 2, index t) of stream (seed, r)). */
static void multistep_matches_naive_update(void **state) {
  (void)state;
  for (int loss = 0; loss < 2; loss++) {
    dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
    cfg.K = 3;
    cfg.p = 23;
    cfg.n = 11;
    cfg.n_test = 6;
    cfg.shift = DPD_NC_SHIFT_CUBE;
    cfg.beta = 0.3;
    cfg.offset = 0.1;
    cfg.etf = DPD_NC_ETF_DENSE;
    dpd_nc_problem *pr = make(&cfg);
    enum { K = 3, P = 23 };
    dpd_nc_sim_config sc = dpd_nc_sim_config_default();
    sc.loss = loss ? DPD_NC_LOSS_SQUARE : DPD_NC_LOSS_CE;
    sc.steps = 4;
    sc.eta = 0.7;
    sc.sigma = 0.3;
    sc.clip = 0.8; /* below G: clipping active */
    sc.radius = loss ? 1.5 : INFINITY;
    sc.seeds = 2;
    sc.seed = 5;
    dpd_nc_sim_result *res = run_ok(pr, &sc);
    for (size_t r = 0; r < 2; r++) {
      double W[K * P] = {0}, g[K * P], x[P], z[K], c[K], xi[K * P];
      size_t clipped = 0;
      for (size_t t = 0; t < sc.steps; t++) {
        memset(g, 0, sizeof g);
        for (size_t i = 0; i < pr->n; i++) {
          size_t y = dpd_nc_train_sample(pr, sc.seed, r, i, x);
          double xx = 0.0;
          for (size_t l = 0; l < P; l++) {
            xx += x[l] * x[l];
          }
          double zmax = -INFINITY, s = 0.0, cc = 0.0;
          for (size_t j = 0; j < K; j++) {
            z[j] = 0.0;
            for (size_t l = 0; l < P; l++) {
              z[j] += W[j * P + l] * x[l];
            }
            zmax = fmax(zmax, z[j]);
          }
          for (size_t j = 0; j < K; j++) {
            s += exp(z[j] - zmax);
          }
          for (size_t j = 0; j < K; j++) {
            c[j] = (loss ? z[j] : exp(z[j] - zmax) / s) - (j == y ? 1.0 : 0.0);
            cc += c[j] * c[j];
          }
          const double gn = sqrt(cc * xx);
          const double w = gn > sc.clip ? sc.clip / gn : 1.0;
          clipped += gn > sc.clip;
          for (size_t j = 0; j < K; j++) {
            for (size_t l = 0; l < P; l++) {
              g[j * P + l] += w * c[j] * x[l];
            }
          }
        }
        dpd_rng rng;
        dpd_rng_init(&rng, sc.seed, r);
        rng.counter = (UINT64_C(2) << 62) | ((uint64_t)t << 32);
        dpd_rng_gaussian_fill(&rng, xi, K * P);
        double wn = 0.0;
        for (size_t a = 0; a < K * P; a++) {
          W[a] -= sc.eta * (g[a] + sc.sigma * xi[a]);
          wn += W[a] * W[a];
        }
        wn = sqrt(wn);
        if (wn > sc.radius) {
          for (size_t a = 0; a < K * P; a++) {
            W[a] *= sc.radius / wn;
          }
        }
      }
      double wn = 0.0;
      for (size_t a = 0; a < K * P; a++) {
        wn += W[a] * W[a];
      }
      wn = sqrt(wn);
      assert_true(clipped > 0);
      assert_true(fabs(res->w_norm_replicates[r] - wn) < 1e-10 * wn);
    }
    dpd_nc_sim_result_free(res);
    dpd_nc_problem_free(pr);
  }
}

/* Test points with a negligible random shift are classified like the clean points: the
 * chunked pass over random test points gives the same per-replicate errors as the per-class
 * evaluation (same seeds, so the same W). A large shift changes them. */
static void random_test_pass_agrees_with_clean_pass(void **state) {
  (void)state;
  dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
  cfg.K = 5;
  cfg.p = 3000;
  cfg.n = 50;
  cfg.n_test = 25;
  cfg.shift = DPD_NC_SHIFT_CUBE;
  cfg.beta = 0.05;
  dpd_nc_problem *clean = make(&cfg);
  cfg.test_shift = DPD_NC_SHIFT_RADEMACHER;
  cfg.beta_test = 1e-9;
  dpd_nc_problem *tiny = make(&cfg);
  cfg.beta_test = 0.2;
  dpd_nc_problem *big = make(&cfg);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.sigma = 20.0;
  sc.seeds = 40;
  dpd_nc_sim_result *a = run_ok(clean, &sc), *b = run_ok(tiny, &sc), *c = run_ok(big, &sc);
  assert_memory_equal(a->class_error_replicates, b->class_error_replicates,
                      40 * 5 * sizeof(double));
  assert_true(a->test_error > 0.05 && a->test_error < 0.95);
  assert_true(c->test_error > a->test_error + 3.0 * c->test_error_se);
  print_message("random test pass: clean %.4f, tiny shift %.4f, beta_test 0.2: %.4f +- %.4f\n",
                a->test_error, b->test_error, c->test_error, c->test_error_se);
  dpd_nc_sim_result_free(a);
  dpd_nc_sim_result_free(b);
  dpd_nc_sim_result_free(c);
  dpd_nc_problem_free(clean);
  dpd_nc_problem_free(tiny);
  dpd_nc_problem_free(big);
}

static int stop_at_two(void *user, size_t done, size_t total) {
  size_t *calls = user;
  (*calls)++;
  assert_true(done <= total && total == 6);
  return done >= 2;
}

static void progress_stop_cancels(void **state) {
  (void)state;
  dpd_nc_problem_config cfg = dpd_nc_problem_config_default();
  cfg.p = 20;
  dpd_nc_problem *pr = make(&cfg);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.seeds = 6;
  sc.threads = 1;
  size_t calls = 0;
  sc.progress = stop_at_two;
  sc.progress_user = &calls;
  dpd_nc_sim_result *res = NULL;
  assert_int_equal(dpd_nc_sim_run(pr, &sc, &res, NULL), DPD_ECANCELLED);
  assert_null(res);
  assert_true(calls >= 1);
  dpd_nc_problem_free(pr);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(etf_has_simplex_geometry),
      cmocka_unit_test(class_counts_follow_the_rule),
      cmocka_unit_test(bad_configs_name_the_key),
      cmocka_unit_test(class_sums_and_sensitivity),
      cmocka_unit_test(noiseless_perfect_collapse_is_error_free),
      cmocka_unit_test(adversarial_threshold_is_exact),
      cmocka_unit_test(bit_identical_for_any_thread_count),
      cmocka_unit_test(binary_perfect_collapse_matches_phi),
      cmocka_unit_test(kclass_perfect_collapse_matches_integral),
      cmocka_unit_test(shifted_one_step_matches_conditional_formula),
      cmocka_unit_test(multistep_matches_naive_update),
      cmocka_unit_test(random_test_pass_agrees_with_clean_pass),
      cmocka_unit_test(progress_stop_cancels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
