/* Unit tests for the privacy loss distribution accountant (include/dpdyn/pld.h).
 * SPDX-License-Identifier: MIT
 *
 * Independent references used here:
 *  (a) q = 1: T Gaussian steps of noise multiplier sigma are exactly mu-GDP, mu = sqrt(T)/sigma,
 *      and dpd_privacy_gdp_eps is the exact conversion. The discretisation moves each loss by
 *      less than h, so eps_up - eps <= T h and eps - eps_low <= T h (rigorous); observed: T h / 2.
 *  (b) q < 1: the RDP of the Poisson-subsampled Gaussian at integer orders (Mironov, Talwar,
 *      Zhang 2019, Thm 11 / Cor. 7: add/remove, an upper bound valid for both orders)
 *        eps_R(alpha) = log(sum_k binom(alpha,k) (1-q)^{alpha-k} q^k exp((k^2-k)/(2 sigma^2)))
 *                       / (alpha - 1),
 *      converted by eps = eps_R + log(1/delta)/(alpha - 1), minimised over alpha = 2..512: the
 *      PLD's eps_up must not exceed it. And a numerical reference computed apart, by
 *      tests/pld_reference.py (numpy/scipy, its own discretisation and FFT power):
 *        q = 0.01, sigma = 1, T = 1000, delta = 1e-5:
 *          h = 1e-5: eps in [1.823237, 1.833237]; h = 5e-6: eps in [1.825737, 1.830737]
 *      (`/usr/bin/python3 tests/pld_reference.py 0.01 1 1000 1e-5 5e-6`, 20 s), so the true
 *      eps >= 1.825737 (REF_LOW below, the reference's lower bound) and <= 1.830737.
 *  (c) composing a PLD with itself by convolution equals its self-composition by FFT power, up to
 *      the FFTs' rounding (a relative 1e-6 on eps and delta: the two paths round differently,
 *      and at delta = 1e-10 the tail points that decide eps are ~1e-5 of the peak, where an
 *      FFT's absolute error of ~1e-17 is visible: observed 1.4e-7). */
#include "dpd_test.h"

#include <string.h>

#include "dpdyn/pld.h"
#include "dpdyn/privacy.h"

static double exact_gdp_eps(double sigma, size_t T, double delta) {
  double eps = NAN;
  assert_int_equal(dpd_privacy_gdp_eps(dpd_privacy_gdp_gaussian(sigma, T), delta, &eps, NULL),
                   DPD_OK);
  return eps;
}

static void pld_eps(double sigma, double q, double h, size_t T, double delta, double *up,
                    double *low) {
  dpd_pld *one = NULL, *all = NULL;
  dpd_err err;
  assert_int_equal(dpd_pld_subsampled_gaussian(sigma, q, h, &one, &err), DPD_OK);
  assert_int_equal(dpd_pld_compose_self(one, T, &all, &err), DPD_OK);
  assert_int_equal(dpd_pld_epsilon(all, delta, up, low, &err), DPD_OK);
  double dup = NAN, dlow = NAN;
  assert_int_equal(dpd_pld_delta(all, *up, &dup, &dlow, &err), DPD_OK);
  assert_true(dup <= delta); /* eps_up re-checked: its pessimistic delta meets the target */
  assert_true(dlow <= dup);
  dpd_pld_free(one);
  dpd_pld_free(all);
}

/* (a) q = 1 against the exact GDP conversion. */
static void test_gaussian_exact(void **state) {
  (void)state;
  const double sigmas[] = {0.8, 2.0, 20.0}, deltas[] = {1e-5, 1e-10};
  const size_t Ts[] = {1, 10, 1000};
  double worst = 0.0;
  for (size_t i = 0; i < 3; i++)
    for (size_t j = 0; j < 3; j++) {
      /* h = 1e-3, finer where T h would exceed 1 % of eps */
      double e5 = exact_gdp_eps(sigmas[i], Ts[j], 1e-5);
      double h = fmin(1e-3, 0.01 * e5 / (double)Ts[j]);
      dpd_pld *one = NULL, *all = NULL;
      assert_int_equal(dpd_pld_gaussian(sigmas[i], h, &one, NULL), DPD_OK);
      assert_int_equal(dpd_pld_compose_self(one, Ts[j], &all, NULL), DPD_OK);
      for (size_t k = 0; k < 2; k++) {
        double exact = exact_gdp_eps(sigmas[i], Ts[j], deltas[k]), up = NAN, low = NAN;
        assert_int_equal(dpd_pld_epsilon(all, deltas[k], &up, &low, NULL), DPD_OK);
        assert_true(low <= exact);
        assert_true(up >= exact);
        assert_true(up - exact <= (double)Ts[j] * h + 1e-9);
        assert_true(exact - low <= (double)Ts[j] * h + 1e-9);
        assert_true(up - exact <= 1e-2 * exact);
        worst = fmax(worst, (up - exact) / exact);
        /* delta side: the exact delta at the exact eps lies between the bounds */
        double dexact = NAN, dup = NAN, dlow = NAN;
        assert_int_equal(dpd_privacy_gdp_delta(dpd_privacy_gdp_gaussian(sigmas[i], Ts[j]), exact,
                                               &dexact, NULL),
                         DPD_OK);
        assert_int_equal(dpd_pld_delta(all, exact, &dup, &dlow, NULL), DPD_OK);
        assert_true(dlow <= dexact * (1 + 1e-9));
        assert_true(dup >= dexact * (1 - 1e-9));
      }
      dpd_pld_free(one);
      dpd_pld_free(all);
    }
  print_message("  (a) worst relative eps_up - exact: %.3g\n", worst);
}

/* RDP of T Poisson-subsampled Gaussian steps at integer orders, converted to eps at delta. */
static double rdp_eps(double sigma, double q, size_t T, double delta) {
  double best = INFINITY;
  for (int alpha = 2; alpha <= 512; alpha++) {
    double terms[513], top = -INFINITY;
    for (int k = 0; k <= alpha; k++) {
      double lb = lgamma(alpha + 1.0) - lgamma(k + 1.0) - lgamma(alpha - k + 1.0);
      terms[k] = lb + (alpha - k) * log1p(-q) + (q > 0 ? k * log(q) : 0.0) +
                 ((double)k * k - k) / (2.0 * sigma * sigma);
      if (q == 1.0 && k < alpha)
        terms[k] = -INFINITY;
      top = fmax(top, terms[k]);
    }
    double sum = 0.0;
    for (int k = 0; k <= alpha; k++)
      sum += exp(terms[k] - top);
    double eps = (double)T * (top + log(sum)) / (alpha - 1.0) + log(1.0 / delta) / (alpha - 1.0);
    best = fmin(best, eps);
  }
  return best;
}

/* (b) q < 1: below the RDP bound, and the numerical reference. */
static void test_subsampled(void **state) {
  (void)state;
  const double qs[] = {0.01, 0.1, 0.5}, sigmas[] = {1.0, 2.0};
  const size_t Ts[] = {100, 1000};
  for (size_t i = 0; i < 3; i++)
    for (size_t j = 0; j < 2; j++)
      for (size_t k = 0; k < 2; k++) {
        double up = NAN, low = NAN, rdp = rdp_eps(sigmas[j], qs[i], Ts[k], 1e-5);
        pld_eps(sigmas[j], qs[i], 1e-4, Ts[k], 1e-5, &up, &low);
        assert_true(low <= up);
        assert_true(up <= rdp);
        print_message("  (b) q=%g sigma=%g T=%zu: PLD eps in [%.4f, %.4f], RDP %.4f\n", qs[i],
                      sigmas[j], Ts[k], low, up, rdp);
      }
  /* the reference setting */
  const double REF_LOW = 1.825737, REF_UP = 1.830737;
  double up = NAN, low = NAN;
  pld_eps(1.0, 0.01, 2e-5, 1000, 1e-5, &up, &low);
  print_message("  (b) reference q=0.01 sigma=1 T=1000 delta=1e-5: PLD [%.6f, %.6f], "
                "reference >= %.6f\n",
                low, up, REF_LOW);
  assert_true(up >= REF_LOW);
  assert_true(up <= 1.01 * REF_LOW);
  assert_true(low <= REF_UP);
}

/* (c) compose(a, a) == compose_self(a, 2); compose(a^3, a^2) == a^5. */
static void test_compose_equal(void **state) {
  (void)state;
  const double qs[] = {1.0, 0.05};
  for (size_t i = 0; i < 2; i++) {
    dpd_pld *a = NULL, *a2 = NULL, *aa = NULL, *a3 = NULL, *a5 = NULL, *a32 = NULL;
    assert_int_equal(dpd_pld_subsampled_gaussian(1.5, qs[i], 1e-3, &a, NULL), DPD_OK);
    assert_int_equal(dpd_pld_compose_self(a, 2, &a2, NULL), DPD_OK);
    assert_int_equal(dpd_pld_compose(a, a, &aa, NULL), DPD_OK);
    assert_int_equal(dpd_pld_compose_self(a, 3, &a3, NULL), DPD_OK);
    assert_int_equal(dpd_pld_compose_self(a, 5, &a5, NULL), DPD_OK);
    assert_int_equal(dpd_pld_compose(a3, a2, &a32, NULL), DPD_OK);
    const double deltas[] = {1e-3, 1e-5, 1e-10};
    for (size_t k = 0; k < 3; k++) {
      double u1, l1, u2, l2, u3, l3, u4, l4;
      assert_int_equal(dpd_pld_epsilon(a2, deltas[k], &u1, &l1, NULL), DPD_OK);
      assert_int_equal(dpd_pld_epsilon(aa, deltas[k], &u2, &l2, NULL), DPD_OK);
      assert_int_equal(dpd_pld_epsilon(a5, deltas[k], &u3, &l3, NULL), DPD_OK);
      assert_int_equal(dpd_pld_epsilon(a32, deltas[k], &u4, &l4, NULL), DPD_OK);
      /* at 1e-10 the FFT rounding allowances of the two paths differ (a composed input brings
       * its own): the brackets must overlap and agree to 1e-3 */
      double tol = k < 2 ? 1e-6 : 1e-3;
      assert_rel(u2, u1, tol);
      assert_rel(l2, l1, tol);
      assert_rel(u4, u3, tol);
      assert_rel(l4, l3, tol);
      assert_true(l3 <= u4 && l4 <= u3 && l1 <= u2 && l2 <= u1);
      double d1, d2;
      assert_int_equal(dpd_pld_delta(a5, 1.0, &d1, NULL, NULL), DPD_OK);
      assert_int_equal(dpd_pld_delta(a32, 1.0, &d2, NULL, NULL), DPD_OK);
      assert_rel(d2, d1, d1 > 1e-6 ? 1e-6 : 1e-3); /* small delta: the allowances differ */
    }
    dpd_pld_free(a);
    dpd_pld_free(a2);
    dpd_pld_free(aa);
    dpd_pld_free(a3);
    dpd_pld_free(a5);
    dpd_pld_free(a32);
  }
}

static void expect_einval(int status, const dpd_err *err, const char *name) {
  assert_int_equal(status, DPD_EINVAL);
  assert_non_null(strstr(err->reason, name));
}

/* (d) errors name the parameter, its value and the allowed range. */
static void test_errors(void **state) {
  (void)state;
  dpd_err err;
  dpd_pld *p = NULL, *g = NULL, *g2 = NULL;
  expect_einval(dpd_pld_gaussian(0.0, 1e-3, &p, &err), &err, "sigma = 0");
  expect_einval(dpd_pld_gaussian(-1.0, 1e-3, &p, &err), &err, "sigma");
  expect_einval(dpd_pld_gaussian(NAN, 1e-3, &p, &err), &err, "sigma");
  expect_einval(dpd_pld_gaussian(INFINITY, 1e-3, &p, &err), &err, "(0, inf)");
  expect_einval(dpd_pld_subsampled_gaussian(1.0, 0.0, 1e-3, &p, &err), &err, "q = 0");
  expect_einval(dpd_pld_subsampled_gaussian(1.0, 1.5, 1e-3, &p, &err), &err, "(0, 1]");
  expect_einval(dpd_pld_gaussian(1.0, 0.0, &p, &err), &err, "h = 0");
  expect_einval(dpd_pld_gaussian(1.0, 10.0, &p, &err), &err, "h = 10");
  expect_einval(dpd_pld_gaussian(0.5, 1e-7, &p, &err), &err, "grid points");
  assert_null(p);
  assert_int_equal(dpd_pld_gaussian(1.0, 1e-3, &g, &err), DPD_OK);
  expect_einval(dpd_pld_compose_self(g, 0, &p, &err), &err, "T = 0");
  expect_einval(dpd_pld_epsilon(g, 0.0, NULL, NULL, &err), &err, "delta = 0");
  expect_einval(dpd_pld_epsilon(g, 1.0, NULL, NULL, &err), &err, "(0, 1)");
  expect_einval(dpd_pld_delta(g, -1.0, NULL, NULL, &err), &err, "eps = -1");
  assert_int_equal(dpd_pld_gaussian(1.0, 2e-3, &g2, &err), DPD_OK);
  expect_einval(dpd_pld_compose(g, g2, &p, &err), &err, "h = 0.002");
  dpd_pld_free(g);
  dpd_pld_free(g2);
  /* a composition whose grid would not fit in memory */
  assert_int_equal(dpd_pld_gaussian(5.0, 1e-5, &g, &err), DPD_OK);
  expect_einval(dpd_pld_compose_self(g, 10000000, &p, &err), &err, "memory");
  assert_null(p);
  dpd_pld_free(g);
  dpd_pld_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gaussian_exact),
      cmocka_unit_test(test_subsampled),
      cmocka_unit_test(test_compose_equal),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
