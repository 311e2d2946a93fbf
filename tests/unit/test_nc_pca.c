/* Tests of the PCA fix of the neural-collapse model (nc_pca.h): the projected problem's feature
 * bound, the recovery of the ETF span, the blocked projection against a naive one, and
 * bit-identical runs for any thread count.
 * SPDX-License-Identifier: MIT
 *
 * Fixed seeds. The public sample is part of the problem (problem seed); replicates redraw the
 * private training shifts, the noise and the test points. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/nc_pca.h"

static dpd_nc_problem *make_base(size_t K, size_t p, size_t n, dpd_nc_shift shift, double beta,
                                 double offset) {
  dpd_nc_problem_config pc = dpd_nc_problem_config_default();
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  pc.K = K;
  pc.p = p;
  pc.n = n;
  pc.n_test = 97;
  pc.shift = shift;
  pc.beta = beta;
  pc.offset = offset;
  pc.seed = 2385;
  dpd_err_reset(&err);
  int st = dpd_nc_problem_create(&pc, &pr, &err);
  if (st != DPD_OK) {
    print_error("dpd_nc_problem_create: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return pr;
}

static dpd_nc_pca *make_pca(const dpd_nc_problem *base, size_t k, size_t n_public, int center) {
  dpd_nc_pca_config c = dpd_nc_pca_config_default();
  dpd_nc_pca *pc = NULL;
  dpd_err err;
  c.k = k;
  c.n_public = n_public;
  c.center = center;
  dpd_err_reset(&err);
  int st = dpd_nc_pca_create(base, &c, &pc, &err);
  if (st != DPD_OK) {
    print_error("dpd_nc_pca_create: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return pc;
}

/* max |row| of the replicates' projected training features, against x_bound; and the same
 * bound without its shift term must fail (the shifts do reach beyond it). */
static void feature_bound_holds_on_every_point(void **state) {
  (void)state;
  const dpd_nc_shift shifts[2] = {DPD_NC_SHIFT_CUBE, DPD_NC_SHIFT_RADEMACHER};
  for (int s = 0; s < 2; s++) {
    dpd_nc_problem *base = make_base(4, 60, 200, shifts[s], 0.21, 0.13);
    dpd_nc_pca *pc = make_pca(base, 6, 150, 1);
    const size_t k = 6, n = base->n;
    double *X = malloc(n * k * sizeof *X), *Xt = malloc(base->n_test * k * sizeof *Xt);
    double worst = 0.0, centre = 0.0;
    dpd_err err;
    for (size_t cls = 0; cls < base->K; cls++) { /* max_k |P^T (M_k + nu)| */
      double s2 = 0.0;
      for (size_t j = 0; j < k; j++) {
        double c = 0.0;
        for (size_t l = 0; l < base->p; l++) {
          c += pc->pca->V[l * k + j] * (base->M[cls * base->p + l] + base->nu[l]);
        }
        s2 += c * c;
      }
      centre = fmax(centre, sqrt(s2));
    }
    for (size_t rep = 0; rep < 20; rep++) {
      dpd_err_reset(&err);
      assert_int_equal(pc->data.fill(pc->data.user, 77, rep, X, Xt, &err), 0);
      for (size_t i = 0; i < n; i++) {
        double s2 = 0.0;
        for (size_t j = 0; j < k; j++) {
          s2 += X[i * k + j] * X[i * k + j];
        }
        worst = fmax(worst, sqrt(s2));
      }
    }
    if (!(worst <= pc->x_bound)) {
      print_error("shift %d: max |P^T x| = %.17g > x_bound %.17g\n", s, worst, pc->x_bound);
    }
    assert_true(worst <= pc->x_bound);
    assert_true(worst > centre); /* negative control: the shift term is needed */
    assert_true(dpd_nc_sensitivity(pc->problem, DPD_NC_LOSS_CE) == sqrt(3.0 / 4.0) * pc->x_bound);
    free(X);
    free(Xt);
    dpd_nc_pca_free(pc);
    dpd_nc_problem_free(base);
  }
}

/* The fill equals the naive projection P^T x of dpd_nc_train_sample / dpd_nc_test_point. */
static void fill_is_the_projection(void **state) {
  (void)state;
  dpd_nc_problem_config pc0 = dpd_nc_problem_config_default();
  dpd_nc_problem *base = NULL;
  dpd_err err;
  pc0.K = 3;
  pc0.p = 3000; /* 3000 > n_public: the Gram route; blocks of 349 rows, so several */
  pc0.n = 800;
  pc0.n_test = 50;
  pc0.shift = DPD_NC_SHIFT_CUBE;
  pc0.beta = 0.05;
  pc0.test_shift = DPD_NC_SHIFT_RADEMACHER;
  pc0.beta_test = 0.07;
  pc0.etf = DPD_NC_ETF_DENSE;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_problem_create(&pc0, &base, &err), DPD_OK);
  dpd_nc_pca *pc = make_pca(base, 2, 120, 1);
  assert_int_equal(pc->pca->route, DPD_PCA_ROUTE_GRAM);
  const size_t p = base->p, k = 2;
  double *X = malloc(base->n * k * sizeof *X), *Xt = malloc(base->n_test * k * sizeof *Xt);
  double *x = malloc(p * sizeof *x), dmax = 0.0, tmax = 0.0;
  assert_int_equal(pc->data.fill(pc->data.user, 5, 3, X, Xt, &err), 0);
  for (size_t i = 0; i < base->n + base->n_test; i += 7) {
    const int test = i >= base->n;
    const size_t row = test ? i - base->n : i;
    size_t cls;
    if (test) {
      assert_int_equal(dpd_nc_test_point(base, 5, 3, row, NULL, x, &cls, &err), DPD_OK);
    } else {
      (void)dpd_nc_train_sample(base, 5, 3, row, x);
    }
    for (size_t j = 0; j < k; j++) {
      double c = 0.0, cm = 0.0;
      for (size_t l = 0; l < p; l++) {
        c += pc->pca->V[l * k + j] * x[l];
        if (test) {
          cm += pc->pca->V[l * k + j] * base->M[(size_t)cls * p + l];
        }
      }
      dmax = fmax(dmax, fabs(c - (test ? Xt : X)[row * k + j]));
      if (test) { /* the test perturbation reaches the projected test points */
        tmax = fmax(tmax, fabs(c - cm));
      }
    }
  }
  assert_true(dmax < 1e-12);
  assert_true(tmax > 1e-3);
  free(X);
  free(Xt);
  free(x);
  dpd_nc_pca_free(pc);
  dpd_nc_problem_free(base);
}

/* Perfect collapse (no shift) with an offset: the centred PCA with k = K - 1 spans the ETF
 * exactly; the uncentred one puts the offset (eigenvalue offset^2 p = 4.8 > 1/(K - 1)) first and
 * loses an ETF direction (negative control). */
static void centred_pca_recovers_the_etf_span(void **state) {
  (void)state;
  const size_t K = 5, p = 300;
  dpd_nc_problem *base = make_base(K, p, 100, DPD_NC_SHIFT_NONE, 0.0, 0.1265);
  dpd_nc_pca *pc = make_pca(base, K - 1, 50, 1);
  assert_true(pc->etf_residual < 1e-10);
  assert_true(pc->beta0 < 1e-10);
  assert_true(fabs(pc->etf_energy - 1.0) < 1e-10);
  for (size_t j = 0; j < K - 1; j++) { /* balanced: eigenvalues K/(K-1) (K-1)/K ... = 1/(K-1)
                                          times m / (m - 1) */
    assert_true(fabs(pc->pca->eigenvalues[j] - (50.0 / 49.0) / (double)(K - 1)) < 1e-10);
  }
  dpd_nc_pca_free(pc);
  pc = make_pca(base, K - 1, 50, 0);
  assert_true(pc->etf_residual > 0.5);
  { /* Weyl: |nu|^2 <= lambda_1 <= |nu|^2 + 1/(K-1) (the ETF part is PSD with norm 1/(K-1)) */
    const double nu2 = 0.1265 * 0.1265 * (double)p;
    assert_true(pc->pca->eigenvalues[0] >= nu2 - 1e-10);
    assert_true(pc->pca->eigenvalues[0] <= nu2 + 1.0 / (double)(K - 1) + 1e-10);
  }
  dpd_nc_pca_free(pc);
  dpd_nc_problem_free(base);
}

static void bit_identical_for_any_thread_count(void **state) {
  (void)state;
  dpd_nc_problem *base = make_base(3, 1500, 300, DPD_NC_SHIFT_CUBE, 0.05, 0.1);
  dpd_nc_pca *pc = make_pca(base, 4, 200, 1);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  dpd_nc_sim_result *r1 = NULL, *r2 = NULL;
  dpd_err err;
  sc.seeds = 6;
  sc.sigma = 30.0;
  sc.seed = 11;
  sc.threads = 1;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_sim_run(pc->problem, &sc, &r1, &err), DPD_OK);
  sc.threads = 3;
  assert_int_equal(dpd_nc_sim_run(pc->problem, &sc, &r2, &err), DPD_OK);
  assert_memory_equal(r1->test_error_replicates, r2->test_error_replicates,
                      sc.seeds * sizeof(double));
  assert_memory_equal(r1->w_norm_replicates, r2->w_norm_replicates, sc.seeds * sizeof(double));
  /* and the noise matters (the run is not trivially constant) */
  assert_true(r1->w_norm_replicates[0] != r1->w_norm_replicates[1]);
  dpd_nc_sim_result_free(r1);
  dpd_nc_sim_result_free(r2);
  dpd_nc_pca_free(pc);
  dpd_nc_problem_free(base);
}

static void bad_inputs_are_named(void **state) {
  (void)state;
  dpd_nc_problem *base = make_base(3, 20, 30, DPD_NC_SHIFT_CUBE, 0.1, 0.0);
  dpd_nc_pca_config c = dpd_nc_pca_config_default();
  dpd_nc_pca *pc = NULL;
  dpd_err err;
  c.k = 21;
  c.n_public = 40;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_pca_create(base, &c, &pc, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'pca_k'"));
  assert_null(pc);
  c.k = 2;
  c.n_public = 1;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_pca_create(base, &c, &pc, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'n_public'"));
  c.k = 1;
  c.n_public = 2; /* a class would get no public sample */
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_pca_create(base, &c, &pc, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'n_public'"));
  dpd_nc_problem_free(base);
  /* no shift: the centred public covariance has rank K - 1 = 2 */
  base = make_base(3, 20, 30, DPD_NC_SHIFT_NONE, 0.0, 0.1);
  c.k = 3;
  c.n_public = 30;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_pca_create(base, &c, &pc, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'pca_k'"));
  dpd_nc_problem_free(base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(feature_bound_holds_on_every_point),
      cmocka_unit_test(fill_is_the_projection),
      cmocka_unit_test(centred_pca_recovers_the_etf_span),
      cmocka_unit_test(bit_identical_for_any_thread_count),
      cmocka_unit_test(bad_inputs_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
