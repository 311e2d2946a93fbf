/* Tests of the normalisation fixes of the neural-collapse simulator (nc.h: normalize,
 * offset_at_test; seed section 4, notes B.4).
 * SPDX-License-Identifier: MIT
 *
 * Fixed seeds; statistical comparisons use the replicate standard errors. Each replicate
 * redraws the training shifts, the noise and the test shifts; P, nu and the class counts are
 * the problem's. Two runs with the same seed use the same noise. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/nc.h"
#include "nc_test.h"

/* Error of one sim run for the given offset / normalize / imbalance, fixed sigma. */
static dpd_nc_sim_result *offset_run(double offset, dpd_nc_normalize nz, double ratio) {
  dpd_nc_problem_config pc = dpd_nc_problem_config_default();
  pc.K = 10;
  pc.p = 1000;
  pc.n = 200;
  pc.offset = offset;
  pc.offset_at_test = 1;
  pc.normalize = nz;
  pc.imbalance_ratio = ratio;
  pc.imbalance_fraction = 0.5;
  dpd_nc_problem *pr = make(&pc);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.sigma = 8.0;
  sc.seeds = 64;
  sc.seed = 5;
  dpd_nc_sim_result *res = run_ok(pr, &sc);
  dpd_nc_problem_free(pr);
  return res;
}

/* Balanced classes, a common offset |nu|_inf = 0.5 on training and test features (p = 1000:
 * |nu| = 15.8 against |M_k| = 1): centring restores the offset-free error; without it the
 * offset ruins the classifier. Same sigma in all runs (what the fix changes in G is tested
 * below). */
static void center_cancels_common_offset(void **state) {
  (void)state;
  dpd_nc_sim_result *clean = offset_run(0.0, DPD_NC_NORMALIZE_NONE, 1.0);
  dpd_nc_sim_result *cen = offset_run(0.5, DPD_NC_NORMALIZE_CENTER, 1.0);
  dpd_nc_sim_result *raw = offset_run(0.5, DPD_NC_NORMALIZE_NONE, 1.0);
  print_message("balanced, sigma 8: clean %.4f +- %.4f, offset+center %.4f +- %.4f, offset raw "
                "%.4f +- %.4f\n",
                clean->test_error, clean->test_error_se, cen->test_error, cen->test_error_se,
                raw->test_error, raw->test_error_se);
  assert_true(clean->test_error > 0.05); /* a regime where the comparison can fail */
  assert_true(fabs(cen->test_error - clean->test_error) <=
              3.0 * hypot(cen->test_error_se, clean->test_error_se));
  assert_true(raw->test_error - clean->test_error >
              3.0 * hypot(raw->test_error_se, clean->test_error_se));
  dpd_nc_sim_result_free(clean);
  dpd_nc_sim_result_free(cen);
  dpd_nc_sim_result_free(raw);
}

/* Imbalanced (ratio 9, half the classes small): the centred features are M_k - sum_j n_j M_j / n,
 * no longer the ETF (notes B.4: the fix "fails under imbalance"). The offset is still cancelled
 * exactly (centred runs at offset 0 and 0.5 agree), and the printed errors show the size of
 * the distortion against the clean run. */
static void center_under_imbalance(void **state) {
  (void)state;
  dpd_nc_sim_result *clean = offset_run(0.0, DPD_NC_NORMALIZE_NONE, 9.0);
  dpd_nc_sim_result *cen0 = offset_run(0.0, DPD_NC_NORMALIZE_CENTER, 9.0);
  dpd_nc_sim_result *cen = offset_run(0.5, DPD_NC_NORMALIZE_CENTER, 9.0);
  double dsum = 0.0, d2 = 0.0;
  for (size_t r = 0; r < clean->seeds; r++) { /* paired: same noise */
    const double d = cen->test_error_replicates[r] - clean->test_error_replicates[r];
    dsum += d;
    d2 += d * d;
  }
  const double S = (double)clean->seeds, dm = dsum / S;
  const double dse = sqrt((d2 / S - dm * dm) / (S - 1.0));
  print_message("imbalanced, sigma 8: clean %.4f +- %.4f, center (offset 0) %.4f, center "
                "(offset 0.5) %.4f +- %.4f; paired difference %.4f +- %.4f\n",
                clean->test_error, clean->test_error_se, cen0->test_error, cen->test_error,
                cen->test_error_se, dm, dse);
  assert_true(fabs(cen->test_error - cen0->test_error) <=
              1e-9 + 3.0 * hypot(cen->test_error_se, cen0->test_error_se));
  assert_true(dm > 3.0 * dse); /* the centred imbalanced features classify worse */
  dpd_nc_sim_result_free(clean);
  dpd_nc_sim_result_free(cen0);
  dpd_nc_sim_result_free(cen);
}

/* G: l2 does not depend on p (nor on beta, offset); none grows like beta sqrt(p); center does
 * not see the offset. */
static void sensitivity_of_the_fixes(void **state) {
  (void)state;
  const size_t ps[2] = {100, 10000};
  double Gl2[2], Gnone[2], Gc[2][2];
  for (int i = 0; i < 2; i++) {
    dpd_nc_problem_config pc = dpd_nc_problem_config_default();
    pc.p = ps[i];
    pc.shift = DPD_NC_SHIFT_CUBE;
    pc.beta = 0.1;
    pc.normalize = DPD_NC_NORMALIZE_L2;
    dpd_nc_problem *pr = make(&pc);
    Gl2[i] = dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE);
    assert_abs(dpd_nc_sensitivity(pr, DPD_NC_LOSS_SQUARE), 1.0, 1e-15);
    dpd_nc_problem_free(pr);
    pc.normalize = DPD_NC_NORMALIZE_NONE;
    pr = make(&pc);
    Gnone[i] = dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE);
    dpd_nc_problem_free(pr);
    pc.shift = DPD_NC_SHIFT_NONE;
    pc.normalize = DPD_NC_NORMALIZE_CENTER;
    for (int o = 0; o < 2; o++) {
      pc.offset = o ? 0.3 : 0.0;
      pr = make(&pc);
      Gc[i][o] = dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE);
      dpd_nc_problem_free(pr);
    }
  }
  assert_abs(Gl2[0], sqrt(0.9), 1e-15);
  assert_abs(Gl2[1], sqrt(0.9), 1e-15);
  assert_true(Gnone[1] > 5.0 * Gnone[0]);
  /* center, no shift: X0 = 1, G = 2 sqrt(0.9) (1 + n / (n - 1)), whatever p and the offset */
  const double want = 2.0 * sqrt(0.9) * (1.0 + 1000.0 / 999.0);
  for (int i = 0; i < 2; i++) {
    for (int o = 0; o < 2; o++) {
      assert_abs(Gc[i][o], want, 1e-12);
    }
  }
}

/* The centred-G bound holds: for every removed sample j of a small shifted, offset,
 * imbalanced problem, |grad(D) - grad(D - j)|_F <= G, grad = sum_i c_{y_i} (x_i - mu_D)^T at
 * W = 0 (brute force from the raw training samples). */
static void center_bound_holds_under_remove_one(void **state) {
  (void)state;
  dpd_nc_problem_config pc = dpd_nc_problem_config_default();
  pc.K = 3;
  pc.p = 40;
  pc.n = 12;
  pc.shift = DPD_NC_SHIFT_RADEMACHER;
  pc.beta = 0.4;
  pc.offset = 0.7;
  pc.imbalance_ratio = 4.0;
  pc.imbalance_fraction = 0.4;
  pc.normalize = DPD_NC_NORMALIZE_CENTER;
  dpd_nc_problem *pr = make(&pc);
  const size_t K = 3, p = 40, n = 12;
  const double G = dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE);
  double *X = malloc(n * p * sizeof *X), *g = malloc(K * p * sizeof *g),
         *h = malloc(K * p * sizeof *h);
  size_t y[12];
  for (size_t i = 0; i < n; i++) {
    y[i] = dpd_nc_train_sample(pr, 3, 0, i, X + i * p);
  }
  double worst = 0.0;
  for (size_t j = 0; j <= n; j++) { /* j = n: the full set, compared with each removal */
    double *out = j == n ? g : h;
    double mu[40] = {0};
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (i != j) {
        for (size_t l = 0; l < p; l++) {
          mu[l] += X[i * p + l];
        }
        m++;
      }
    }
    memset(out, 0, K * p * sizeof *out);
    for (size_t i = 0; i < n; i++) {
      if (i == j) {
        continue;
      }
      for (size_t k = 0; k < K; k++) {
        const double c = 1.0 / (double)K - (k == y[i] ? 1.0 : 0.0);
        for (size_t l = 0; l < p; l++) {
          out[k * p + l] += c * (X[i * p + l] - mu[l] / (double)m);
        }
      }
    }
  }
  for (size_t j = 0; j < n; j++) { /* recompute each removal against g */
    double mu[40] = {0};
    for (size_t i = 0; i < n; i++) {
      if (i != j) {
        for (size_t l = 0; l < p; l++) {
          mu[l] += X[i * p + l];
        }
      }
    }
    memset(h, 0, K * p * sizeof *h);
    for (size_t i = 0; i < n; i++) {
      if (i == j) {
        continue;
      }
      for (size_t k = 0; k < K; k++) {
        const double c = 1.0 / (double)K - (k == y[i] ? 1.0 : 0.0);
        for (size_t l = 0; l < p; l++) {
          h[k * p + l] += c * (X[i * p + l] - mu[l] / (double)(n - 1));
        }
      }
    }
    double d2 = 0.0;
    for (size_t a = 0; a < K * p; a++) {
      d2 += (g[a] - h[a]) * (g[a] - h[a]);
    }
    worst = sqrt(d2) > worst ? sqrt(d2) : worst;
  }
  print_message("center: largest remove-one change %.4f <= G %.4f\n", worst, G);
  assert_true(worst > 0.0);
  assert_true(worst <= G);
  free(X);
  free(g);
  free(h);
  dpd_nc_problem_free(pr);
}

/* One noiseless CE step (eta 1) gives W = -sum_i c_{y_i} x~_i^T with x~ the normalised
 * features: its Frobenius norm (the simulator's w_norm) against a brute-force computation. */
static void one_step_uses_the_normalised_features(void **state) {
  (void)state;
  const size_t K = 4, p = 30, n = 20;
  for (int nzi = 1; nzi <= 3; nzi++) {
    dpd_nc_problem_config pc = dpd_nc_problem_config_default();
    pc.K = K;
    pc.p = p;
    pc.n = n;
    pc.shift = DPD_NC_SHIFT_CUBE;
    pc.beta = 0.3;
    pc.offset = 0.2;
    pc.imbalance_ratio = 3.0;
    pc.imbalance_fraction = 0.5;
    pc.normalize = (dpd_nc_normalize)nzi;
    dpd_nc_problem *pr = make(&pc);
    dpd_nc_sim_config sc = dpd_nc_sim_config_default();
    sc.seeds = 3;
    sc.seed = 11;
    dpd_nc_sim_result *res = run_ok(pr, &sc);
    for (size_t r = 0; r < 3; r++) {
      double X[20 * 30], mu[30] = {0}, W[4 * 30] = {0};
      size_t y[20];
      for (size_t i = 0; i < n; i++) {
        y[i] = dpd_nc_train_sample(pr, 11, r, i, X + i * p);
        for (size_t l = 0; l < p; l++) {
          mu[l] += X[i * p + l] / (double)n;
        }
      }
      for (size_t i = 0; i < n; i++) {
        double s = 1.0;
        if (pc.normalize == DPD_NC_NORMALIZE_CENTER) {
          for (size_t l = 0; l < p; l++) {
            X[i * p + l] -= mu[l];
          }
        } else if (pc.normalize == DPD_NC_NORMALIZE_CENTER_L2) {
          double q = 0.0;
          for (size_t l = 0; l < p; l++) {
            X[i * p + l] -= mu[l];
            q += X[i * p + l] * X[i * p + l];
          }
          s = 1.0 / sqrt(q);
        } else {
          double q = 0.0;
          for (size_t l = 0; l < p; l++) {
            q += X[i * p + l] * X[i * p + l];
          }
          s = 1.0 / sqrt(q);
        }
        for (size_t k = 0; k < K; k++) {
          const double c = 1.0 / (double)K - (k == y[i] ? 1.0 : 0.0);
          for (size_t l = 0; l < p; l++) {
            W[k * p + l] -= c * s * X[i * p + l];
          }
        }
      }
      double w2 = 0.0;
      for (size_t a = 0; a < K * p; a++) {
        w2 += W[a] * W[a];
      }
      assert_rel(res->w_norm_replicates[r], sqrt(w2), 1e-12);
    }
    dpd_nc_sim_result_free(res);
    dpd_nc_problem_free(pr);
  }
}

/* center_l2's sensitivity grows with n, and c (2 n - 1) holds. Data: n - 2 class-0 rows and
 * one class-1 row at a point a, one class-1 row at a far point b. Without the far row, mu = a and
 * every normalised feature is 0 (a zero vector is left as it is); with it, every row at a becomes
 * the unit vector along a - b: the one-step summed gradient changes by about (n - 2) c. */
static void center_l2_sensitivity_grows_with_n(void **state) {
  (void)state;
  enum { n = 50, p = 3 };
  const size_t K = 2;
  static double X[n * p];
  size_t y[n];
  for (size_t i = 0; i < n; i++) {
    X[i * p + 0] = 0.25; /* dyadic: the mean of equal rows is exact */
    X[i * p + 1] = -0.5;
    X[i * p + 2] = 0.125;
    y[i] = i < n - 2 ? 0 : 1;
  }
  X[(n - 1) * p + 0] = 5.0; /* the far row b */
  const double Xt[] = {1, 0, 0, 0, 1, 0};
  const size_t yt[] = {0, 1};
  double g[2][2 * p];
  dpd_nc_problem *pr[2];
  for (int drop = 0; drop < 2; drop++) {
    dpd_nc_data_config dc = {.K = K,
                             .p = p,
                             .n = drop ? n - 1 : n,
                             .n_test = 2,
                             .X = X,
                             .y = y,
                             .X_test = Xt,
                             .y_test = yt,
                             .x_bound = INFINITY,
                             .normalize = DPD_NC_NORMALIZE_CENTER_L2};
    dpd_err err;
    dpd_err_reset(&err);
    pr[drop] = NULL;
    assert_int_equal(dpd_nc_problem_from_data(&dc, &pr[drop], &err), DPD_OK);
    double S[2 * p];
    assert_int_equal(dpd_nc_train_sums(pr[drop], 1, 0, S, NULL, &err), DPD_OK);
    for (size_t j = 0; j < K; j++) { /* CE at W = 0: g_j = sum_k (1/K - [j = k]) S_k */
      for (size_t l = 0; l < p; l++) {
        g[drop][j * p + l] = 0.5 * (S[l] + S[p + l]) - S[j * p + l];
      }
    }
  }
  double d2 = 0.0;
  for (size_t a = 0; a < K * p; a++) {
    d2 += (g[0][a] - g[1][a]) * (g[0][a] - g[1][a]);
  }
  const double c = sqrt(0.5), G = dpd_nc_sensitivity(pr[0], DPD_NC_LOSS_CE);
  print_message("center_l2: remove-one change %.3f, c (n - 3) = %.3f, G = %.3f\n", sqrt(d2),
                c * (n - 3), G);
  assert_abs(G, c * (2.0 * n - 1.0), 1e-12);
  assert_true(sqrt(d2) >= c * (n - 3));
  assert_true(sqrt(d2) <= G);
  dpd_nc_problem_free(pr[0]);
  dpd_nc_problem_free(pr[1]);
}

static void bit_identical_for_any_thread_count(void **state) {
  (void)state;
  for (int nzi = 1; nzi <= 3; nzi++) {
    dpd_nc_problem_config pc = dpd_nc_problem_config_default();
    pc.K = 5;
    pc.p = 2100; /* more than one chunk of 1024 */
    pc.n = 60;
    pc.n_test = 50;
    pc.shift = DPD_NC_SHIFT_CUBE;
    pc.beta = 0.05;
    pc.offset = 0.1;
    pc.offset_at_test = 1;
    pc.test_shift = DPD_NC_SHIFT_RADEMACHER;
    pc.beta_test = 0.05;
    pc.normalize = (dpd_nc_normalize)nzi;
    dpd_nc_problem *pr = make(&pc);
    dpd_nc_sim_config sc = dpd_nc_sim_config_default();
    sc.steps = 2;
    sc.sigma = 3.0;
    sc.seeds = 6;
    sc.threads = 1;
    dpd_nc_sim_result *a = run_ok(pr, &sc);
    sc.threads = 3;
    dpd_nc_sim_result *b = run_ok(pr, &sc);
    assert_memory_equal(a->test_error_replicates, b->test_error_replicates, 6 * sizeof(double));
    assert_memory_equal(a->w_norm_replicates, b->w_norm_replicates, 6 * sizeof(double));
    dpd_nc_sim_result_free(a);
    dpd_nc_sim_result_free(b);
    dpd_nc_problem_free(pr);
  }
}

static void bad_normalize_names_the_key(void **state) {
  (void)state;
  dpd_nc_problem_config pc = dpd_nc_problem_config_default();
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  pc.normalize = (dpd_nc_normalize)7;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_problem_create(&pc, &pr, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'normalize'"));
  pc.normalize = DPD_NC_NORMALIZE_CENTER;
  pc.K = 2;
  pc.n = 1;
  pc.imbalance_ratio = 1.0;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_problem_create(&pc, &pr, &err), DPD_EINVAL);
  assert_null(pr);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(center_cancels_common_offset),
      cmocka_unit_test(center_under_imbalance),
      cmocka_unit_test(sensitivity_of_the_fixes),
      cmocka_unit_test(center_bound_holds_under_remove_one),
      cmocka_unit_test(center_l2_sensitivity_grows_with_n),
      cmocka_unit_test(one_step_uses_the_normalised_features),
      cmocka_unit_test(bit_identical_for_any_thread_count),
      cmocka_unit_test(bad_normalize_names_the_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
