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


/* ---- dpd_pld_step_create ---------------------------------------------------------------- */

static dpd_pld *step_pld(dpd_sampling sampling, dpd_neighbours nb, double sigma, double q,
                         size_t b, size_t n, double h) {
  dpd_pld_step st = {sampling, nb, sigma, q, b, n};
  dpd_pld *p = NULL;
  dpd_err err;
  int status = dpd_pld_step_create(&st, h, &p, &err);
  if (status != DPD_OK)
    print_error("%s\n", err.reason);
  assert_int_equal(status, DPD_OK);
  return p;
}

/* (e) q = 1 replace-one (Poisson q = 1, fixed b = n) is N(1, s^2) vs N(-1, s^2): exactly GDP
 * with mu = 2 sqrt(T) / sigma (sigma / 2 in dpd_privacy_gdp_gaussian). */
static void test_step_replace_gaussian(void **state) {
  (void)state;
  const double sigma = 3.0, delta = 1e-6;
  const size_t T = 50;
  double exact = exact_gdp_eps(0.5 * sigma, T, delta);
  dpd_pld *ones[2] = {step_pld(DPD_SAMPLING_POISSON, DPD_NEIGHBOURS_REPLACE_ONE, sigma, 1.0, 0, 0, 1e-3),
                      step_pld(DPD_SAMPLING_FIXED, DPD_NEIGHBOURS_REPLACE_ONE, sigma, 0.0, 7, 7, 1e-3)};
  for (int i = 0; i < 2; i++) {
    dpd_pld *all = NULL;
    double up = NAN, low = NAN, est = NAN;
    assert_int_equal(dpd_pld_compose_self(ones[i], T, &all, NULL), DPD_OK);
    assert_int_equal(dpd_pld_epsilon(all, delta, &up, &low, NULL), DPD_OK);
    assert_int_equal(dpd_pld_epsilon_estimate(all, delta, &est, NULL), DPD_OK);
    assert_true(low <= exact && exact <= up);
    assert_true(low <= est && est <= up);
    assert_true(up - exact <= 1e-4 * exact);
    assert_true(fabs(est - exact) <= up - exact); /* the extrapolation does not do worse */
    print_message("  (e) q=1 replace-one: [%.7f, est %.7f, %.7f], exact %.7f\n", low, est, up,
                  exact);
    dpd_pld_free(all);
    dpd_pld_free(ones[i]);
  }
}

/* The hockey-stick divergence H_eps(P || Q) = int (p - e^eps q)_+ of two Gaussian mixtures
 * (weights w, means m, common sd s), by the trapezoid rule on a fine grid: written apart from
 * src/core/pld.c (no loss variable, no inversion). */
static double mix_pdf(const double *w, const double *m, int n, double s, double x) {
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += w[i] * exp(-0.5 * (x - m[i]) * (x - m[i]) / (s * s));
  return sum / (s * 2.50662827463100050242); /* sqrt(2 pi) */
}

static double hockey(const double *wp, const double *mp, int np, const double *wq,
                     const double *mq, int nq, double s, double eps) {
  double lo = -14.0 * s - 2.0, hi = 14.0 * s + 2.0 * (double)(np > nq ? np : nq), sum = 0.0;
  const int N = 400000;
  double dx = (hi - lo) / N;
  for (int k = 0; k <= N; k++) {
    double x = lo + k * dx;
    double v = mix_pdf(wp, mp, np, s, x) - exp(eps) * mix_pdf(wq, mq, nq, s, x);
    sum += (k == 0 || k == N ? 0.5 : 1.0) * fmax(v, 0.0);
  }
  return sum * dx;
}

/* (f) one step of each pair: delta_low <= delta(eps) <= delta_up against the direct
 * integration (max over the two orders), and close (second order in h). */
static void test_step_pairs(void **state) {
  (void)state;
  const double eps_list[] = {0.0, 0.3, 1.0, 2.0};
  /* POISSON replace-one q = 0.1, sigma = 1: (0.9 N(0) + 0.1 N(1), 0.9 N(0) + 0.1 N(-1)) */
  double w2[2] = {0.9, 0.1}, mP[2] = {0.0, 1.0}, mQ[2] = {0.0, -1.0};
  /* FIXED b = 10 of n = 100, sigma = 2: (0.9 N(0) + 0.1 N(2), N(0)) and the reverse */
  double mF[2] = {0.0, 2.0}, one[1] = {1.0}, zero[1] = {0.0};
  /* REPLACEMENT b = 5 of n = 10, sigma = 2: (sum_k Bin(5, 0.1)(k) N(2k), N(0)) and reverse */
  double wB[6], mB[6];
  for (int k = 0; k <= 5; k++) {
    wB[k] = exp(lgamma(6.0) - lgamma(k + 1.0) - lgamma(6.0 - k) + k * log(0.1) +
                (5 - k) * log(0.9));
    mB[k] = 2.0 * k;
  }
  dpd_pld *pl[3] = {
      step_pld(DPD_SAMPLING_POISSON, DPD_NEIGHBOURS_REPLACE_ONE, 1.0, 0.1, 0, 0, 1e-3),
      step_pld(DPD_SAMPLING_FIXED, DPD_NEIGHBOURS_REPLACE_ONE, 2.0, 0.0, 10, 100, 1e-3),
      step_pld(DPD_SAMPLING_REPLACEMENT, DPD_NEIGHBOURS_REPLACE_ONE, 2.0, 0.0, 5, 10, 1e-3)};
  for (int i = 0; i < 3; i++)
    for (size_t e = 0; e < 4; e++) {
      double eps = eps_list[e], ref;
      if (i == 0)
        ref = fmax(hockey(w2, mP, 2, w2, mQ, 2, 1.0, eps), hockey(w2, mQ, 2, w2, mP, 2, 1.0, eps));
      else if (i == 1)
        ref = fmax(hockey(w2, mF, 2, one, zero, 1, 2.0, eps),
                   hockey(one, zero, 1, w2, mF, 2, 2.0, eps));
      else
        ref = fmax(hockey(wB, mB, 6, one, zero, 1, 2.0, eps),
                   hockey(one, zero, 1, wB, mB, 6, 2.0, eps));
      double up = NAN, low = NAN;
      assert_int_equal(dpd_pld_delta(pl[i], eps, &up, &low, NULL), DPD_OK);
      print_message("  (f) pair %d eps %.1f: delta in [%.9g, %.9g], integral %.9g\n", i, eps, low,
                    up, ref);
      assert_true(low <= ref * (1.0 + 1e-7) + 1e-15);
      assert_true(up >= ref * (1.0 - 1e-7) - 1e-15);
      assert_true(up - low <= 1e-3 * ref + 1e-12);
    }
  for (int i = 0; i < 3; i++)
    dpd_pld_free(pl[i]);
}

/* (g) REPLACEMENT with b = 1 is FIXED with b = 1 (one draw: Binomial(1, 1/n) copies), and both
 * lie above POISSON replace-one at q = 1/n (its pair has the replaced record's two
 * contributions at distance 2 only when it is drawn, and no fixed n). */
static void test_step_agree(void **state) {
  (void)state;
  const size_t n = 50, T = 400;
  dpd_pld *a = step_pld(DPD_SAMPLING_REPLACEMENT, DPD_NEIGHBOURS_REPLACE_ONE, 1.5, 0, 1, n, 1e-3);
  dpd_pld *b = step_pld(DPD_SAMPLING_FIXED, DPD_NEIGHBOURS_REPLACE_ONE, 1.5, 0, 1, n, 1e-3);
  dpd_pld *c = step_pld(DPD_SAMPLING_POISSON, DPD_NEIGHBOURS_REPLACE_ONE, 1.5, 1.0 / n, 0, 0,
                        1e-3);
  dpd_pld *aT = NULL, *bT = NULL, *cT = NULL;
  assert_int_equal(dpd_pld_compose_self(a, T, &aT, NULL), DPD_OK);
  assert_int_equal(dpd_pld_compose_self(b, T, &bT, NULL), DPD_OK);
  assert_int_equal(dpd_pld_compose_self(c, T, &cT, NULL), DPD_OK);
  double ua, la, ub, lb, uc, lc;
  assert_int_equal(dpd_pld_epsilon(aT, 1e-6, &ua, &la, NULL), DPD_OK);
  assert_int_equal(dpd_pld_epsilon(bT, 1e-6, &ub, &lb, NULL), DPD_OK);
  assert_int_equal(dpd_pld_epsilon(cT, 1e-6, &uc, &lc, NULL), DPD_OK);
  assert_true(ua == ub && la == lb);
  print_message("  (g) n=%zu T=%zu: replacement/fixed b=1 [%.5f, %.5f], Poisson q=1/n [%.5f, "
                "%.5f]\n",
                n, T, la, ua, lc, uc);
  assert_true(lc <= ua);
  dpd_pld_free(a);
  dpd_pld_free(b);
  dpd_pld_free(c);
  dpd_pld_free(aT);
  dpd_pld_free(bT);
  dpd_pld_free(cT);
}

/* (h) bad steps name the member and the allowed range. */
static void test_step_errors(void **state) {
  (void)state;
  dpd_err err;
  dpd_pld *p = NULL;
  dpd_pld_step st = {DPD_SAMPLING_FIXED, DPD_NEIGHBOURS_REPLACE_ONE, 1.0, 0.0, 5, 3};
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err,
                "step.batch = 5 is invalid: the allowed range is [1, n = 3]");
  st.batch = 0;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "step.batch = 0");
  st.batch = 1;
  st.n = 0;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "step.n = 0");
  st.n = 10;
  st.neighbours = DPD_NEIGHBOURS_ADD_REMOVE;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "step.neighbours");
  st.sampling = DPD_SAMPLING_REPLACEMENT;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "DPD_NEIGHBOURS_REPLACE_ONE");
  st.sampling = DPD_SAMPLING_POISSON;
  st.q = 0.0;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "step.q = 0");
  st.q = 1.5;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "(0, 1]");
  st.q = 0.5;
  st.sigma = -1.0;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "step.sigma = -1");
  st.sigma = 1.0;
  st.sampling = (dpd_sampling)7;
  expect_einval(dpd_pld_step_create(&st, 1e-3, &p, &err), &err, "step.sampling = 7");
  st.sampling = DPD_SAMPLING_POISSON;
  expect_einval(dpd_pld_step_create(&st, 0.0, &p, &err), &err, "h = 0");
  expect_einval(dpd_pld_step_create(NULL, 1e-3, &p, &err), &err, "NULL");
  assert_null(p);
  double h = NAN;
  expect_einval(dpd_pld_step_h_for(&st, 10, 1e-5, 0.0, &h, &err), &err, "rel = 0");
  expect_einval(dpd_pld_step_h_for(&st, 0, 1e-5, 0.01, &h, &err), &err, "T = 0");
}

/* (i) small delta and large eps: delta = 1e-18 after 1000 steps is refused naming the FFT
 * rounding; eps >> 10 (sigma = 0.5, q = 1, T = 20: eps ~ 90) brackets the exact value. */
static void test_limits(void **state) {
  (void)state;
  dpd_err err;
  dpd_pld *one = NULL, *all = NULL;
  assert_int_equal(dpd_pld_subsampled_gaussian(1.0, 0.01, 1e-3, &one, NULL), DPD_OK);
  assert_int_equal(dpd_pld_compose_self(one, 1000, &all, NULL), DPD_OK);
  double up = NAN;
  expect_einval(dpd_pld_epsilon(all, 1e-18, &up, NULL, &err), &err, "FFT rounding");
  dpd_pld_free(one);
  dpd_pld_free(all);
  assert_int_equal(dpd_pld_gaussian(0.5, 1e-3, &one, NULL), DPD_OK);
  assert_int_equal(dpd_pld_compose_self(one, 20, &all, NULL), DPD_OK);
  double exact = exact_gdp_eps(0.5, 20, 1e-8), low = NAN;
  assert_int_equal(dpd_pld_epsilon(all, 1e-8, &up, &low, NULL), DPD_OK);
  print_message("  (i) sigma=0.5 T=20 delta=1e-8: [%.6f, %.6f], exact %.6f\n", low, up, exact);
  assert_true(exact > 50.0);
  assert_true(low <= exact && exact <= up && up - exact <= 1e-4 * exact);
  dpd_pld_free(one);
  dpd_pld_free(all);
}

/* (j) dpd_pld_step_h_for: the h it picks meets about the asked relative width. */
static void test_h_for(void **state) {
  (void)state;
  dpd_pld_step st = {DPD_SAMPLING_POISSON, DPD_NEIGHBOURS_ADD_REMOVE, 1.0, 0.01, 0, 0};
  double h = NAN, up = NAN, est = NAN;
  assert_int_equal(dpd_pld_step_h_for(&st, 2000, 1e-5, 0.003, &h, NULL), DPD_OK);
  assert_true(h >= DPD_PLD_H_MIN && h <= DPD_PLD_H_MAX);
  dpd_pld *one = NULL, *all = NULL;
  assert_int_equal(dpd_pld_step_create(&st, h, &one, NULL), DPD_OK);
  assert_int_equal(dpd_pld_compose_self(one, 2000, &all, NULL), DPD_OK);
  assert_int_equal(dpd_pld_epsilon(all, 1e-5, &up, NULL, NULL), DPD_OK);
  assert_int_equal(dpd_pld_epsilon_estimate(all, 1e-5, &est, NULL), DPD_OK);
  print_message("  (j) h_for(rel 0.003) = %g: eps_up %.6f, est %.6f\n", h, up, est);
  assert_true(up - est <= 0.006 * est);
  dpd_pld_free(one);
  dpd_pld_free(all);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gaussian_exact),
      cmocka_unit_test(test_subsampled),
      cmocka_unit_test(test_compose_equal),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_step_replace_gaussian),
      cmocka_unit_test(test_step_pairs),
      cmocka_unit_test(test_step_agree),
      cmocka_unit_test(test_step_errors),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_h_for),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
