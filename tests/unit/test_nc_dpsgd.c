/* Tests of trainer = dpsgd on the nc problem (dpd_nc_dpsgd_run), the resize map and the Gaussian
 * test perturbation (nc.h).
 * SPDX-License-Identifier: MIT
 *
 * Resize: subset maps are increasing, distinct and of size P, every coordinate is kept with
 * probability P/p over problem seeds (each count within 4.5 SE of its binomial mean; a map that
 * favours the first coordinates fails by hundreds of SE); copies tile the coordinates; the
 * ranges are refused naming 'resize_p'.
 * Gaussian test shift: the entries of x - M_k over the test points of one replicate have mean 0
 * and variance beta_test^2 within 4 SE (SE of a sample variance: b^2 sqrt(2 / (N - 1)); the
 * perturbation is redrawn from each test point's region), and two replicates differ.
 * dpd_nc_dpsgd_run against an implementation written here: each replicate's rows from
 * dpd_nc_train_sample (class order), dpd_dpsgd_train with stream (seed, r) and tag 2, and the
 * argmax of W x over dpd_nc_test_point's points give the same test errors exactly; threads 1 and
 * 3 give the same bits; bad configurations are refused naming the key. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpd_test.h"
#include "dpdyn/dpsgd.h"
#include "dpdyn/nc.h"
#include "nc/nc_impl.h"

static void subset_is_uniform(void **state) {
  (void)state;
  enum { p = 10, P = 3, SEEDS = 4000 };
  size_t index[P], count[p] = {0};
  dpd_err err = {0};
  for (uint64_t seed = 0; seed < SEEDS; seed++) {
    assert_int_equal(dpd_nc_resize_index(DPD_NC_RESIZE_SUBSET, p, P, seed, index, &err), DPD_OK);
    for (size_t l = 0; l < P; l++) {
      assert_true(index[l] < p);
      if (l > 0) {
        assert_true(index[l] > index[l - 1]); /* increasing, so distinct */
      }
      count[index[l]]++;
    }
  }
  const double mean = (double)SEEDS * P / p, se = sqrt(mean * (1.0 - (double)P / p));
  for (size_t l = 0; l < p; l++) {
    assert_abs((double)count[l], mean, 4.5 * se);
  }
}

static void copies_tile_and_ranges_are_named(void **state) {
  (void)state;
  size_t index[7];
  const double X[6] = {1.5, -2.25, 3.125, 4.0, 5.5, -6.75}; /* 2 rows of p = 3 */
  double out[14];
  dpd_err err = {0};
  assert_int_equal(dpd_nc_resize_index(DPD_NC_RESIZE_COPIES, 3, 7, 11, index, &err), DPD_OK);
  dpd_nc_resize_rows(X, 2, 3, index, 7, out);
  for (size_t i = 0; i < 2; i++) {
    for (size_t l = 0; l < 7; l++) {
      assert_true(out[i * 7 + l] == X[i * 3 + l % 3]);
    }
  }
  assert_int_equal(dpd_nc_resize_index(DPD_NC_RESIZE_COPIES, 3, 2, 11, index, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'resize_p'"));
  assert_int_equal(dpd_nc_resize_index(DPD_NC_RESIZE_SUBSET, 3, 4, 11, index, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'resize_p'"));
  assert_int_equal(dpd_nc_resize_index(DPD_NC_RESIZE_SUBSET, 3, 0, 11, index, &err), DPD_EINVAL);
  assert_int_equal(dpd_nc_resize_index(DPD_NC_RESIZE_SUBSET, 5, 5, 11, index, &err), DPD_OK);
  for (size_t l = 0; l < 5; l++) {
    assert_int_equal(index[l], l); /* the whole set */
  }
}

static void gaussian_test_shift_has_variance_beta_squared(void **state) {
  (void)state;
  dpd_nc_problem_config c = dpd_nc_problem_config_default();
  dpd_nc_problem *pr = NULL;
  dpd_err err = {0};
  c.K = 5;
  c.p = 400;
  c.n = 50;
  c.n_test = 50;
  c.test_shift = DPD_NC_SHIFT_GAUSSIAN;
  c.beta_test = sqrt(0.1);
  assert_int_equal(dpd_nc_problem_create(&c, &pr, &err), DPD_OK);
  double *x = malloc(c.p * sizeof *x), *y = malloc(c.p * sizeof *y);
  double s = 0.0, s2 = 0.0, same = 0.0;
  size_t k, N = c.n_test * c.p;
  for (size_t j = 0; j < c.n_test; j++) {
    assert_int_equal(dpd_nc_test_point(pr, 7, 2, j, NULL, x, &k, &err), DPD_OK);
    assert_int_equal(dpd_nc_test_point(pr, 7, 3, j, NULL, y, &k, &err), DPD_OK);
    for (size_t l = 0; l < c.p; l++) {
      const double u = x[l] - pr->M[k * c.p + l];
      s += u;
      s2 += u * u;
      same += x[l] == y[l];
    }
  }
  const double mean = s / (double)N, var = (s2 - (double)N * mean * mean) / (double)(N - 1);
  const double b2 = c.beta_test * c.beta_test;
  assert_abs(mean, 0.0, 4.0 * c.beta_test / sqrt((double)N));
  assert_abs(var, b2, 4.0 * b2 * sqrt(2.0 / (double)(N - 1)));
  assert_true(same < 1.0); /* replicates redraw the perturbation */
  free(x);
  free(y);
  dpd_nc_problem_free(pr);
}

static dpd_dpsgd_config small_dpsgd(size_t K) {
  dpd_dpsgd_config d = dpd_dpsgd_config_default();
  d.classes = K;
  d.bias = 0;
  d.q = 0.2;
  d.epochs = 3.0;
  d.lr = 0.7;
  d.clip = 0.8;
  d.noise_multiplier = 1.3;
  return d;
}

/* The problem the replicates run: cube shifts, a Gaussian test perturbation. */
static dpd_nc_problem *small_problem(void) {
  dpd_nc_problem_config c = dpd_nc_problem_config_default();
  dpd_nc_problem *pr = NULL;
  c.K = 3;
  c.p = 17;
  c.n = 60;
  c.n_test = 30;
  c.shift = DPD_NC_SHIFT_CUBE;
  c.beta = 0.35;
  c.test_shift = DPD_NC_SHIFT_GAUSSIAN;
  c.beta_test = 0.4;
  c.seed = 5;
  assert_int_equal(dpd_nc_problem_create(&c, &pr, NULL), DPD_OK);
  return pr;
}

static void run_matches_an_implementation_written_here(void **state) {
  (void)state;
  dpd_nc_problem *pr = small_problem();
  const size_t K = pr->K, p = pr->p, n = pr->n;
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  dpd_dpsgd_config dc = small_dpsgd(K);
  dpd_nc_sim_result *res = NULL, *res3 = NULL;
  dpd_err err = {0};
  sc.seeds = 4;
  sc.seed = 9;
  sc.threads = 1;
  assert_int_equal(dpd_nc_dpsgd_run(pr, &sc, &dc, &res, &err), DPD_OK);
  sc.threads = 3;
  assert_int_equal(dpd_nc_dpsgd_run(pr, &sc, &dc, &res3, &err), DPD_OK);
  double *X = malloc(n * p * sizeof *X), *x = malloc(p * sizeof *x);
  int32_t *y = malloc(n * sizeof *y);
  for (size_t r = 0; r < sc.seeds; r++) {
    dpd_dpsgd_config c = dc;
    dpd_dpsgd_model *m = NULL;
    size_t wrong = 0, k;
    for (size_t i = 0; i < n; i++) {
      y[i] = (int32_t)dpd_nc_train_sample(pr, sc.seed, r, i, X + i * p);
    }
    c.seed = sc.seed;
    c.stream = r;
    c.tag = 2;
    assert_int_equal(dpd_dpsgd_train(&c, X, y, n, p, &m, &err), DPD_OK);
    for (size_t j = 0; j < pr->n_test; j++) {
      assert_int_equal(dpd_nc_test_point(pr, sc.seed, r, j, NULL, x, &k, &err), DPD_OK);
      size_t best = 0;
      double top = -INFINITY;
      for (size_t c2 = 0; c2 < K; c2++) {
        double z = 0.0;
        for (size_t l = 0; l < p; l++) {
          z += m->W[c2 * p + l] * x[l];
        }
        if (z > top) {
          top = z;
          best = c2;
        }
      }
      wrong += best != k;
    }
    assert_abs(res->test_error_replicates[r], (double)wrong / (double)pr->n_test, 1e-12);
    assert_true(res->train_loss_replicates[r] == m->train_loss);
    assert_true(res->mean_batch_replicates[r] == m->mean_batch);
    assert_true(res->clipped_fraction_replicates[r] == m->clipped_fraction);
    assert_true(res3->test_error_replicates[r] == res->test_error_replicates[r]);
    assert_true(res3->w_norm_replicates[r] == res->w_norm_replicates[r]);
    dpd_dpsgd_model_free(m);
  }
  assert_true(res->sigma == dc.noise_multiplier * dc.clip);
  free(X);
  free(x);
  free(y);
  dpd_nc_sim_result_free(res);
  dpd_nc_sim_result_free(res3);
  dpd_nc_problem_free(pr);
}

static void bad_configurations_are_named(void **state) {
  (void)state;
  dpd_nc_problem *pr = small_problem();
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  dpd_dpsgd_config dc = small_dpsgd(pr->K);
  dpd_nc_sim_result *res = NULL;
  dpd_err err = {0};
  dc.bias = 1;
  assert_int_equal(dpd_nc_dpsgd_run(pr, &sc, &dc, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'bias'"));
  dc = small_dpsgd(pr->K + 1);
  assert_int_equal(dpd_nc_dpsgd_run(pr, &sc, &dc, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'classes'"));
  dc = small_dpsgd(pr->K);
  dc.loss = DPD_DPSGD_HINGE;
  assert_int_equal(dpd_nc_dpsgd_run(pr, &sc, &dc, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'loss'"));
  dc = small_dpsgd(pr->K);
  dc.q = 0.0;
  assert_int_equal(dpd_nc_dpsgd_run(pr, &sc, &dc, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'q'"));
  dc = small_dpsgd(pr->K);
  dc.sampling = DPD_DPSGD_FIXED;
  dc.batch = pr->n + 1;
  assert_int_equal(dpd_nc_dpsgd_run(pr, &sc, &dc, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'batch'"));
  assert_null(res);
  dpd_nc_problem_free(pr);
}

/* The rows handed to the trainer are the simulator's features (dpd_nc_train_sample with
 * normalize none; l2: each row of unit norm). */
static void replicate_rows_are_the_simulator_features(void **state) {
  (void)state;
  dpd_nc_problem *pr = small_problem();
  const size_t p = pr->p, n = pr->n;
  double *work = malloc(dpd__nc_work_doubles(pr) * sizeof *work);
  double *X = malloc(n * p * sizeof *X), *x = malloc(p * sizeof *x);
  int32_t *y = malloc(n * sizeof *y);
  assert_int_equal(dpd__nc_replicate_rows(pr, 4, 1, work, X, y, NULL), DPD_OK);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal((size_t)y[i], dpd_nc_train_sample(pr, 4, 1, i, x));
    assert_memory_equal(X + i * p, x, p * sizeof *x);
  }
  dpd_nc_problem_free(pr);
  dpd_nc_problem_config c = dpd_nc_problem_config_default();
  c.K = 3;
  c.p = 17;
  c.n = 60;
  c.n_test = 30; /* the same work size */
  c.shift = DPD_NC_SHIFT_RADEMACHER;
  c.beta = 0.2;
  c.normalize = DPD_NC_NORMALIZE_L2;
  assert_int_equal(dpd_nc_problem_create(&c, &pr, NULL), DPD_OK);
  assert_int_equal(dpd__nc_replicate_rows(pr, 4, 1, work, X, y, NULL), DPD_OK);
  for (size_t i = 0; i < n; i++) {
    double s = 0.0;
    for (size_t l = 0; l < p; l++) {
      s += X[i * p + l] * X[i * p + l];
    }
    assert_abs(s, 1.0, 1e-12);
  }
  free(work);
  free(X);
  free(x);
  free(y);
  dpd_nc_problem_free(pr);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(subset_is_uniform),
      cmocka_unit_test(copies_tile_and_ranges_are_named),
      cmocka_unit_test(gaussian_test_shift_has_variance_beta_squared),
      cmocka_unit_test(run_matches_an_implementation_written_here),
      cmocka_unit_test(bad_configurations_are_named),
      cmocka_unit_test(replicate_rows_are_the_simulator_features),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
