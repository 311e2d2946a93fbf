/* Statistical tests of Algorithm 1 (include/dpdyn/semipriv.h) on the exact generator of notes
 * C.5 at the setting: d = 200, n = 500 labelled points, n_public = 5000, n_test = 1000,
 * n^2 = 250000 Noisy-SGD steps, delta = 1e-5, R = 30 replicates (seed 20261124).
 * SPDX-License-Identifier: MIT
 *
 * What is redrawn: every replicate r draws its labelled, public and test samples and the SGD
 * noise and indices from stream (seed, r); the generator (Q, w*) is fixed (seed 7). Runs at
 * different k or epsilon use the same seed, so they share their samples replicate by replicate
 * (a paired design; the SEs below are nevertheless the unpaired sqrt(se_1^2 + se_2^2), which is
 * conservative).
 *
 * Asserted (each criterion from the replicates' standard errors):
 *  - privacy costs accuracy: at k = 5 and at k = d, acc(eps = inf) - acc(eps = 0.1) > 5 SE;
 *  - the non-private accuracy is flat in k >= k_true: |acc(k) - acc(d)| <= 3 SE + 0.005 for
 *    k = 5, 6, 20 (the 0.005 floor because the SEs are 0 when every replicate is perfect);
 *  - negative control: the flatness criterion rejects acc(k = 5, eps = 0.1) against
 *    acc(k = 5, eps = inf) (so it is not vacuous).
 *  - how k acts on the private accuracy (docs/semipriv.md, "Does PCA help? (measured)"): under
 *    the Bassily-Smith-Thakurta step size the signal-to-noise ratio of <w, x> does not depend on
 *    k, and projecting to k = 5 < d only adds the hinge's zero region and loses the signal share
 *    outside the top 5, so at eps = 0.7 (R = 100) k = d beats k = 5 by more than 5 SE of the
 *    paired difference (measured 0.17, 6-7 SE); a code whose k = 5 run were as good as k = d, or
 *    better, fails it.
 * Measured and printed, not asserted: the PCA gain acc(k = 5) - acc(k = d) at eps = 0.1. The
 * issue expected it to exceed 5 SE (notes C.5: 0.873 vs 0.624 at d = 1000, one seed); with this
 * algorithm it cannot (docs/semipriv.md derives and measures why: at eps = 0.1, n = 500 every k
 * is within a few points of chance, and the replicate spread is about 0.3). */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>

#include "dpd_test.h"
#include "dpdyn/semipriv.h"

void openblas_set_num_threads(int num_threads);

#define R 30
#define SEED 20261124u

static dpd_semipriv_gen *gen;

static dpd_semipriv_result *run_r(size_t k, double eps, size_t seeds) {
  dpd_semipriv_run_config c = dpd_semipriv_run_config_default();
  c.n = 500;
  c.n_public = 5000;
  c.n_test = 1000;
  c.k = k;
  c.epsilon = eps;
  c.seeds = seeds;
  c.seed = SEED;
  dpd_semipriv_result *r = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  const int st = dpd_semipriv_run(gen, &c, &r, &err);
  if (st != DPD_OK) {
    print_error("dpd_semipriv_run(k = %zu, eps = %g): %s\n", k, eps, err.reason);
  }
  assert_int_equal(st, DPD_OK);
  print_message("k = %3zu eps = %-4g: test accuracy %.4f +- %.4f (train %.4f, hinge %.3f, "
                "xi_hat %.4f, |A A^T - A_hat A_hat^T| %.4f, zeta %.4f, sigma %.4g)\n",
                k, eps, r->mean[DPD_SEMIPRIV_TEST_ACCURACY], r->se[DPD_SEMIPRIV_TEST_ACCURACY],
                r->mean[DPD_SEMIPRIV_TRAIN_ACCURACY], r->mean[DPD_SEMIPRIV_TRAIN_HINGE],
                r->mean[DPD_SEMIPRIV_XI_HAT], r->mean[DPD_SEMIPRIV_SUBSPACE_ERROR], r->zeta,
                r->sigma);
  return r;
}

static dpd_semipriv_result *run(size_t k, double eps) {
  return run_r(k, eps, R);
}

static double acc(const dpd_semipriv_result *r) {
  return r->mean[DPD_SEMIPRIV_TEST_ACCURACY];
}

static double se2(const dpd_semipriv_result *a, const dpd_semipriv_result *b) {
  const double x = a->se[DPD_SEMIPRIV_TEST_ACCURACY], y = b->se[DPD_SEMIPRIV_TEST_ACCURACY];
  return sqrt(x * x + y * y);
}

static int flat(const dpd_semipriv_result *a, const dpd_semipriv_result *b) {
  return fabs(acc(a) - acc(b)) <= 3.0 * se2(a, b) + 0.005;
}

static void privacy_costs_accuracy_and_nonprivate_is_flat_in_k(void **state) {
  (void)state;
  const size_t d = gen->d;
  dpd_semipriv_result *p5 = run(5, 0.1), *pd = run(d, 0.1);
  dpd_semipriv_result *n5 = run(5, INFINITY), *n6 = run(6, INFINITY), *n20 = run(20, INFINITY),
                      *nd = run(d, INFINITY);
  const double gain = acc(p5) - acc(pd), gse = se2(p5, pd);
  print_message("PCA gain at eps = 0.1: acc(k = 5) - acc(k = d) = %.4f +- %.4f (%.2f SE)\n", gain,
                gse, gain / gse);
  assert_true(acc(n5) - acc(p5) > 5.0 * se2(n5, p5));
  assert_true(acc(nd) - acc(pd) > 5.0 * se2(nd, pd));
  assert_true(flat(n5, nd));
  assert_true(flat(n6, nd));
  assert_true(flat(n20, nd));
  assert_false(flat(p5, n5)); /* negative control */
  /* PCA of 5000 public points finds the signal subspace in every replicate: xi_5 = 1 - a */
  assert_abs(p5->mean[DPD_SEMIPRIV_XI_HAT], 0.05, 0.005);
  assert_true(p5->mean[DPD_SEMIPRIV_SUBSPACE_ERROR] < p5->zb_bound);
  dpd_semipriv_result_free(p5);
  dpd_semipriv_result_free(pd);
  dpd_semipriv_result_free(n5);
  dpd_semipriv_result_free(n6);
  dpd_semipriv_result_free(n20);
  dpd_semipriv_result_free(nd);
}

/* Mean and standard error of the paired differences acc_a - acc_b over the replicates (the two
 * runs share seed and replicate streams, so replicate r of each saw the same samples). */
static void paired(const dpd_semipriv_result *a, const dpd_semipriv_result *b, double *mean,
                   double *se) {
  const size_t m = DPD_SEMIPRIV_METRIC_COUNT, n = a->seeds;
  double s = 0.0, s2 = 0.0;
  for (size_t r = 0; r < n; r++) {
    const double x = a->replicates[r * m + DPD_SEMIPRIV_TEST_ACCURACY] -
                     b->replicates[r * m + DPD_SEMIPRIV_TEST_ACCURACY];
    s += x;
    s2 += x * x;
  }
  *mean = s / (double)n;
  *se = sqrt((s2 - s * s / (double)n) / (double)(n - 1) / (double)n);
}

static void at_eps_07_no_pca_beats_k5_by_5_paired_se(void **state) {
  (void)state;
  dpd_semipriv_result *p5 = run_r(5, 0.7, 100), *pd = run_r(gen->d, 0.7, 100);
  assert_int_equal(p5->seeds, 100);
  assert_int_equal(pd->seeds, 100);
  double diff, se;
  paired(pd, p5, &diff, &se);
  print_message("eps = 0.7: acc(k = d) - acc(k = 5) = %.4f +- %.4f paired (%.2f SE)\n", diff, se,
                diff / se);
  assert_true(se > 0.0);
  assert_true(diff > 5.0 * se);
  dpd_semipriv_result_free(p5);
  dpd_semipriv_result_free(pd);
}

int main(void) {
  gsl_set_error_handler_off();
  openblas_set_num_threads(1);
  dpd_semipriv_gen_config c = dpd_semipriv_gen_config_default();
  c.seed = 7;
  dpd_err err;
  if (dpd_semipriv_gen_create(&c, &gen, &err) != DPD_OK) {
    print_error("dpd_semipriv_gen_create: %s\n", err.reason);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(privacy_costs_accuracy_and_nonprivate_is_flat_in_k),
      cmocka_unit_test(at_eps_07_no_pca_beats_k5_by_5_paired_se),
  };
  const int failed = cmocka_run_group_tests(tests, NULL, NULL);
  dpd_semipriv_gen_free(gen);
  return failed;
}
