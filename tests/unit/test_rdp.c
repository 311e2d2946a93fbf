/* Unit tests for the RDP accountant (include/dpdyn/rdp.h): the Gaussian and the
 * Poisson-subsampled Gaussian mechanism, composition and the (eps, delta) conversions.
 * SPDX-License-Identifier: MIT
 *
 * Independent references used here:
 *  - q = 1: the sum collapses to its k = alpha term, exp(alpha (alpha-1) / (2 sigma^2)), so the
 *    RDP is alpha / (2 sigma^2) exactly (Mironov 2017, Prop. 7).
 *  - q -> 0: A_alpha - 1 = sum_{k>=2} p_k expm1(c_k) with p_2 = binom(alpha,2) q^2 (1-q)^(alpha-2),
 *    so rdp = (alpha/2) q^2 expm1(1/sigma^2) (1 + R) with the relative remainder
 *      R = -(alpha-2) q + (alpha-2)/3 q expm1(3/sigma^2)/expm1(1/sigma^2) + O(q^2)
 *    (from (1-q)^(alpha-2), the k = 3 term and log1p(x) = x - x^2/2, the last O(q^2)). Hence
 *    |R| <= (alpha-2) q (1 + expm1(3/sigma^2)/(3 expm1(1/sigma^2))) + O(q^2): at q = 1e-4,
 *    sigma = 2, alpha <= 8 that is <= 1.4e-3; the test allows twice the first-order bound plus
 *    1e-6 for the O(q^2) part (q^2 alpha^2 e^{..} ~ 1e-6). Against the textbook
 *    rdp ~ q^2 alpha / sigma^2 (Abadi et al. 2016, Lemma 3: an upper bound, with 1/(1-q)) the
 *    ratio tends to sigma^2 expm1(1/sigma^2)/2 = 0.5681 at sigma = 2: the bound is that loose.
 *  - the sum itself: a direct evaluation of A_alpha in long double (exact binomials, powl, expl)
 *    for alpha <= 24, where its own cancellation (log of 1 + O(q^2/sigma^2)) costs at most
 *    1e-19 / 1e-7 = 1e-12 relative.
 *  - the derivation: A_alpha = E_{mu0}[(mu1/mu0)^alpha] by adaptive quadrature (GSL QAGS) of
 *    the two densities, and the reverse divergence D_alpha(mu0 || mu1) not larger.
 *  - q = 1, T steps: the mechanism is exactly sqrt(T)/sigma-GDP, whose eps (dpd_privacy_gdp_eps)
 *    is the exact one; RDP gives an upper bound, and its discrete minimum over orders is above
 *    the continuous one of dpd_privacy_eps_tight(T/(2 sigma^2)).
 *  - q = 0.01, sigma = 1, T = 1000, delta = 1e-5, the default orders: computed independently by
 *    /usr/bin/python3 (numpy 1.24.2, scipy 1.10.1), the plain log-sum-exp of the whole sum:
 *      import numpy as np
 *      from scipy.special import gammaln, logsumexp
 *      orders = list(range(2, 65)) + [80, 96, 128, 192, 256, 384, 512, 768, 1024]
 *      def rdp_sgm(q, s, a):
 *          k = np.arange(a + 1, dtype=float)
 *          logw = (gammaln(a + 1) - gammaln(k + 1) - gammaln(a - k + 1) + k * np.log(q)
 *                  + (a - k) * np.log1p(-q))
 *          return logsumexp(logw + (k * k - k) / (2 * s * s)) / (a - 1)
 *      q, s, T, delta = 0.01, 1.0, 1000, 1e-5
 *      a = np.array(orders, dtype=float)
 *      r = T * np.array([rdp_sgm(q, s, o) for o in orders])
 *      eps = r + np.log1p(-1 / a) - (np.log(delta) + np.log(a)) / (a - 1)    # tight
 *      epsc = r + np.log(1 / delta) / (a - 1)                                 # classic
 *      ld = (a - 1) * (r - 1.0) + (a - 1) * np.log1p(-1 / a) - np.log(a)       # delta at eps=1
 *      print(repr(eps.min()), orders[eps.argmin()], repr(epsc.min()), orders[epsc.argmin()],
 *            repr(np.exp(ld.min())), orders[ld.argmin()])
 *    -> 2.107753075451571 8  2.5383475454589273 8  0.00834680449557313 6 */
#include "dpd_test.h"

#include <float.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>

#include "dpdyn/privacy.h"
#include "dpdyn/rdp.h"

/* ------------------------------------------------------------------------------------------ */
/* (a) q = 1 is the Gaussian mechanism. */

static void q_one_equals_the_gaussian_at_every_integer_order(void **state) {
  static const double sigmas[] = {0.05, 0.3, 1.0, 2.0, 7.5, 100.0, 1e4};
  double alphas[1024];
  double rdp[1024];
  double gauss[1024];
  (void)state;
  for (size_t i = 0; i < 1024; i++) {
    alphas[i] = (double)(i + 2);
  }
  for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
    double sigma = sigmas[s];
    assert_int_equal(dpd_rdp_subsampled_gaussian(sigma, 1.0, alphas, 1024, rdp, NULL), DPD_OK);
    assert_int_equal(dpd_rdp_gaussian(sigma, alphas, 1024, gauss, NULL), DPD_OK);
    for (size_t i = 0; i < 1024; i++) {
      double want = alphas[i] / (2.0 * sigma * sigma);
      assert_rel(gauss[i], want, 0.0);
      /* Through the sum's log space: a few ulps (log_expm1, log1p, the division). */
      assert_rel(rdp[i], want, 16.0 * DBL_EPSILON);
    }
  }
  /* Fractional orders are accepted at q = 1 (the plain Gaussian). */
  {
    double a[] = {1.25, 1.5, 2.5};
    double r[3];
    assert_int_equal(dpd_rdp_subsampled_gaussian(2.0, 1.0, a, 3, r, NULL), DPD_OK);
    for (size_t i = 0; i < 3; i++) {
      assert_rel(r[i], a[i] / 8.0, 0.0);
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* (b) small q: rdp ~ (alpha/2) q^2 expm1(1/sigma^2), and the textbook q^2 alpha / sigma^2. */

static void small_q_follows_the_quadratic_asymptotics(void **state) {
  const double q = 1e-4;
  const double sigma = 2.0;
  const double e1 = expm1(1.0 / (sigma * sigma));
  const double e3 = expm1(3.0 / (sigma * sigma));
  double alphas[7];
  double rdp[7];
  (void)state;
  for (size_t i = 0; i < 7; i++) {
    alphas[i] = (double)(i + 2);
  }
  assert_int_equal(dpd_rdp_subsampled_gaussian(sigma, q, alphas, 7, rdp, NULL), DPD_OK);
  for (size_t i = 0; i < 7; i++) {
    double a = alphas[i];
    double lead = 0.5 * a * q * q * e1;
    double tol = 2.0 * (a - 2.0) * q * (1.0 + e3 / (3.0 * e1)) + 1e-6;
    double textbook = q * q * a / (sigma * sigma);
    assert_rel(rdp[i], lead, tol);
    /* The textbook form: its ratio tends to sigma^2 expm1(1/sigma^2)/2, below 1/(1-q). */
    assert_rel(rdp[i] / textbook, 0.5 * sigma * sigma * e1, tol);
    assert_true(rdp[i] < textbook / (1.0 - q));
  }
  /* Monotone in q and in alpha (both are known properties of the RDP of the SGM). */
  {
    double r2[7];
    assert_int_equal(dpd_rdp_subsampled_gaussian(sigma, 2.0 * q, alphas, 7, r2, NULL), DPD_OK);
    for (size_t i = 0; i < 7; i++) {
      assert_true(r2[i] > rdp[i]);
      if (i > 0) {
        assert_true(rdp[i] > rdp[i - 1]);
      }
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* (c) the sum against a direct long double evaluation. */

static long double direct_rdp(double sigma, double q, unsigned int alpha) {
  long double a_sum = 0.0L;
  long double binom = 1.0L; /* binom(alpha, k), exact for alpha <= 24 */
  for (unsigned int k = 0; k <= alpha; k++) {
    long double lk = (long double)k;
    a_sum += binom * powl(1.0L - (long double)q, (long double)(alpha - k)) *
             powl((long double)q, lk) *
             expl((lk * lk - lk) / (2.0L * (long double)sigma * (long double)sigma));
    binom = binom * (long double)(alpha - k) / (lk + 1.0L);
  }
  return logl(a_sum) / (long double)(alpha - 1);
}

static void the_sum_matches_a_direct_long_double_evaluation(void **state) {
  static const double sigmas[] = {0.5, 0.8, 1.0, 3.0, 10.0};
  static const double qs[] = {1e-3, 0.01, 0.1, 0.5, 0.9, 1.0};
  double alphas[23];
  double rdp[23];
  (void)state;
  for (size_t i = 0; i < 23; i++) {
    alphas[i] = (double)(i + 2);
  }
  for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
    for (size_t j = 0; j < sizeof qs / sizeof qs[0]; j++) {
      assert_int_equal(dpd_rdp_subsampled_gaussian(sigmas[s], qs[j], alphas, 23, rdp, NULL),
                       DPD_OK);
      for (size_t i = 0; i < 23; i++) {
        double want = (double)direct_rdp(sigmas[s], qs[j], (unsigned int)alphas[i]);
        assert_rel(rdp[i], want, 1e-11);
      }
    }
  }
}

/* From first principles: A_alpha = E_{z ~ mu0}[(mu1(z)/mu0(z))^alpha] by numerical integration
 * (GSL QAGI), mu0 = N(0, sigma^2), mu1 = (1-q) N(0, sigma^2) + q N(1, sigma^2); also checks the
 * other direction, D_alpha(mu0 || mu1), is not larger (MTZ19, Thm 5), so the header's formula is
 * the RDP of the add/remove relation at these orders. */
typedef struct {
  double sigma;
  double q;
  double alpha;
  int reverse; /* 0: E_{mu0}[(mu1/mu0)^alpha]; 1: E_{mu1}[(mu0/mu1)^alpha] */
} moment_params;

static double moment_integrand(double z, void *params) {
  const moment_params *p = params;
  double s2 = p->sigma * p->sigma;
  double log_phi0 = -0.5 * z * z / s2 - log(p->sigma) - 0.5 * log(2.0 * M_PI);
  double log_ratio = log1p(p->q * expm1((2.0 * z - 1.0) / (2.0 * s2))); /* log mu1/mu0 */
  /* mu1^(1-alpha) mu0^alpha = mu0 (mu1/mu0)^(1-alpha) in reverse */
  double v = exp(log_phi0 + (p->reverse ? 1.0 - p->alpha : p->alpha) * log_ratio);
  return isnan(v) ? 0.0 : v; /* -inf + inf at z = +-inf, where the density wins */
}

static double moment_by_quadrature(double sigma, double q, double alpha, int reverse) {
  moment_params p = {sigma, q, alpha, reverse};
  gsl_function fn = {moment_integrand, &p};
  gsl_integration_workspace *w = gsl_integration_workspace_alloc(1000);
  double result = NAN;
  double abserr = NAN;
  /* The mass sits within a few sigma of [0, alpha] (the k-th term of the sum is a Gaussian
   * centred at k), so a finite interval of +-40 sigma around it holds all of it. */
  double lo = -40.0 * sigma - 1.0;
  double hi = alpha + 40.0 * sigma + 1.0;
  int rc;
  assert_non_null(w);
  rc = gsl_integration_qags(&fn, lo, hi, 0.0, 1e-12, 1000, w, &result, &abserr);
  if (rc != GSL_SUCCESS) {
    print_error("qags: %s at sigma %g q %g alpha %g reverse %d (result %.17g, abserr %.3g)\n",
                gsl_strerror(rc), sigma, q, alpha, reverse, result, abserr);
  }
  assert_true(rc == GSL_SUCCESS || (rc == GSL_EROUND && abserr <= 1e-11 * result));
  gsl_integration_workspace_free(w);
  return log(result) / (alpha - 1.0);
}

static void the_sum_matches_the_divergence_by_quadrature(void **state) {
  static const double sigmas[] = {0.8, 1.0, 2.0};
  static const double qs[] = {0.01, 0.1, 0.5};
  double alphas[] = {2.0, 3.0, 5.0, 8.0, 12.0};
  double rdp[5];
  (void)state;
  for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
    for (size_t j = 0; j < sizeof qs / sizeof qs[0]; j++) {
      assert_int_equal(dpd_rdp_subsampled_gaussian(sigmas[s], qs[j], alphas, 5, rdp, NULL), DPD_OK);
      for (size_t i = 0; i < 5; i++) {
        double fwd = moment_by_quadrature(sigmas[s], qs[j], alphas[i], 0);
        double rev = moment_by_quadrature(sigmas[s], qs[j], alphas[i], 1);
        assert_rel(rdp[i], fwd, 1e-9);
        assert_true(rev <= fwd * (1.0 + 1e-9));
      }
    }
  }
}

/* Large alpha and small sigma: exp(c_k) overflows a double, the log space does not. */
static void large_orders_and_small_sigma_stay_finite(void **state) {
  size_t n;
  const double *alphas = dpd_rdp_orders_default(&n);
  double rdp[128];
  (void)state;
  assert_true(n <= 128);
  assert_int_equal(dpd_rdp_subsampled_gaussian(0.1, 0.01, alphas, n, rdp, NULL), DPD_OK);
  for (size_t i = 0; i < n; i++) {
    assert_true(isfinite(rdp[i]) && rdp[i] > 0.0);
    /* Never above the unsubsampled Gaussian. */
    assert_true(rdp[i] <= alphas[i] / (2.0 * 0.01) * (1.0 + 1e-14));
    if (i > 0) {
      assert_true(rdp[i] >= rdp[i - 1]);
    }
  }
  /* At alpha = 1024, sigma = 0.1 the k = alpha term dominates: rdp -> alpha/(2 sigma^2) +
   * alpha log q/(alpha-1). */
  {
    double a = alphas[n - 1];
    assert_rel(rdp[n - 1], a / (2.0 * 0.01) + a * log(0.01) / (a - 1.0), 1e-10);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* (d) q = 1, T steps against the exact GDP eps. */

static void q_one_composed_is_an_upper_bound_on_the_exact_gdp_eps(void **state) {
  static const double sigmas[] = {0.8, 1.0, 2.0, 5.0};
  static const size_t steps[] = {1, 10, 100, 1000};
  static const double deltas[] = {1e-3, 1e-5, 1e-9};
  size_t n;
  const double *alphas = dpd_rdp_orders_default(&n);
  double worst = 1.0;
  double worst_zcdp = 1.0;
  double worst_low = 1.0;
  (void)state;
  for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
    for (size_t t = 0; t < sizeof steps / sizeof steps[0]; t++) {
      double step[128];
      double total[128] = {0};
      assert_int_equal(dpd_rdp_subsampled_gaussian(sigmas[s], 1.0, alphas, n, step, NULL), DPD_OK);
      assert_int_equal(dpd_rdp_compose(step, n, steps[t], total, NULL), DPD_OK);
      for (size_t d = 0; d < sizeof deltas / sizeof deltas[0]; d++) {
        double eps_rdp;
        double eps_classic;
        double eps_gdp;
        double eps_zcdp;
        double mu = sqrt((double)steps[t]) / sigmas[s];
        assert_int_equal(dpd_rdp_epsilon(alphas, total, n, deltas[d], &eps_rdp, NULL, NULL),
                         DPD_OK);
        assert_int_equal(
            dpd_rdp_epsilon_classic(alphas, total, n, deltas[d], &eps_classic, NULL, NULL), DPD_OK);
        assert_int_equal(dpd_privacy_gdp_eps(mu, deltas[d], &eps_gdp, NULL), DPD_OK);
        assert_int_equal(dpd_privacy_eps_tight(0.5 * mu * mu, deltas[d], &eps_zcdp, NULL), DPD_OK);
        assert_true(eps_rdp >= eps_gdp);
        assert_true(eps_classic >= eps_rdp);
        /* Discrete orders vs the continuous minimum of the same formula. */
        assert_true(eps_rdp >= eps_zcdp * (1.0 - 1e-12));
        if (0.5 * mu * mu <= -log(deltas[d]) - M_LN2) {
          /* The continuous optimum order is >= 2 (stationarity: rho_z (alpha-1)^2 + log alpha
           * = log(1/delta)), where the integer orders can follow it. */
          if (eps_rdp / eps_zcdp > worst_zcdp) {
            worst_zcdp = eps_rdp / eps_zcdp;
          }
          if (eps_rdp / eps_gdp > worst) {
            worst = eps_rdp / eps_gdp;
          }
        } else if (eps_rdp / eps_gdp > worst_low) {
          worst_low = eps_rdp / eps_gdp;
        }
      }
    }
  }
  /* Measured on this grid: with the optimum order >= 2, eps_rdp is at most 1.040 x the continuous
   * zCDP minimum (the integer grid near alpha = 2..3) and 1.170 x the exact GDP eps; with the
   * optimum below 2 (eps in the hundreds: rho_z > log(1/delta)) the integer orders lose up to
   * 1.74 x (fractional orders of the subsampled Gaussian are not computed). */
  print_message("worst eps_rdp / eps_zcdp %.4f, eps_rdp / eps_gdp %.4f (optimum order >= 2), "
                "%.4f (below 2)\n",
                worst_zcdp, worst, worst_low);
  assert_true(worst_zcdp <= 1.05);
  assert_true(worst <= 1.2);
  assert_true(worst_low <= 1.8);
}

/* ------------------------------------------------------------------------------------------ */
/* (e) a reference number from an independent Python evaluation (header comment). */

static void reference_numbers_match_an_independent_python_evaluation(void **state) {
  size_t n;
  const double *alphas = dpd_rdp_orders_default(&n);
  double step[128];
  double total[128] = {0};
  double eps;
  double alpha;
  double delta;
  (void)state;
  assert_int_equal(dpd_rdp_subsampled_gaussian(1.0, 0.01, alphas, n, step, NULL), DPD_OK);
  assert_int_equal(dpd_rdp_compose(step, n, 1000, total, NULL), DPD_OK);
  assert_int_equal(dpd_rdp_epsilon(alphas, total, n, 1e-5, &eps, &alpha, NULL), DPD_OK);
  assert_rel(eps, 2.107753075451571, 1e-9);
  assert_rel(alpha, 8.0, 0.0);
  assert_int_equal(dpd_rdp_epsilon_classic(alphas, total, n, 1e-5, &eps, &alpha, NULL), DPD_OK);
  assert_rel(eps, 2.5383475454589273, 1e-9);
  assert_rel(alpha, 8.0, 0.0);
  assert_int_equal(dpd_rdp_delta(alphas, total, n, 1.0, &delta, &alpha, NULL), DPD_OK);
  assert_rel(delta, 0.00834680449557313, 1e-9);
  assert_rel(alpha, 6.0, 0.0);
  /* The one-call recipe gives the same number. */
  assert_int_equal(dpd_rdp_subsampled_gaussian_epsilon(1.0, 0.01, 1000, 1e-5, &eps, &alpha, NULL),
                   DPD_OK);
  assert_rel(eps, 2.107753075451571, 1e-9);
}

/* delta(eps) inverts eps(delta) on the curve, and heterogeneous composition adds per order. */
static void delta_inverts_epsilon_and_composition_adds_per_order(void **state) {
  static const double deltas[] = {1e-12, 1e-8, 1e-5, 1e-2};
  size_t n;
  const double *alphas = dpd_rdp_orders_default(&n);
  double a[128];
  double b[128];
  double total[128] = {0};
  double both[128] = {0};
  (void)state;
  assert_int_equal(dpd_rdp_subsampled_gaussian(1.1, 0.02, alphas, n, a, NULL), DPD_OK);
  assert_int_equal(dpd_rdp_subsampled_gaussian(0.9, 0.005, alphas, n, b, NULL), DPD_OK);
  assert_int_equal(dpd_rdp_compose(a, n, 300, total, NULL), DPD_OK);
  assert_int_equal(dpd_rdp_compose(b, n, 700, total, NULL), DPD_OK);
  for (size_t i = 0; i < n; i++) {
    both[i] = 300.0 * a[i] + 700.0 * b[i];
    assert_rel(total[i], both[i], 4.0 * DBL_EPSILON);
  }
  for (size_t d = 0; d < sizeof deltas / sizeof deltas[0]; d++) {
    double eps;
    double delta;
    double eps_back;
    assert_int_equal(dpd_rdp_epsilon(alphas, total, n, deltas[d], &eps, NULL, NULL), DPD_OK);
    assert_int_equal(dpd_rdp_delta(alphas, total, n, eps, &delta, NULL, NULL), DPD_OK);
    /* At the minimising order delta(eps) is deltas[d] exactly; others can only do better. */
    assert_true(delta <= deltas[d] * (1.0 + 1e-12));
    assert_int_equal(dpd_rdp_epsilon(alphas, total, n, delta, &eps_back, NULL, NULL), DPD_OK);
    assert_rel(eps_back, eps, 1e-12);
  }
  /* Limits. */
  {
    double delta;
    assert_int_equal(dpd_rdp_delta(alphas, total, n, INFINITY, &delta, NULL, NULL), DPD_OK);
    assert_rel(delta, 0.0, 0.0);
    assert_int_equal(dpd_rdp_delta(alphas, total, n, 0.0, &delta, NULL, NULL), DPD_OK);
    assert_true(delta <= 1.0 && delta > 0.0);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* (f) errors. */

static void assert_einval_reason(int status, const dpd_err *err, const char *name,
                                 const char *value, const char *range) {
  assert_int_equal(status, DPD_EINVAL);
  assert_int_equal(err->status, DPD_EINVAL);
  if (strstr(err->reason, name) == NULL || strstr(err->reason, value) == NULL ||
      strstr(err->reason, range) == NULL) {
    print_error("reason '%s' should name '%s', its value '%s' and the range '%s'\n", err->reason,
                name, value, range);
    fail();
  }
}

static void bad_arguments_are_refused_naming_them(void **state) {
  const double ok_alphas[] = {2.0, 3.0};
  const double ok_rdp[] = {0.1, 0.2};
  double out[2] = {-7.0, -7.0};
  double eps = -7.0;
  double total[2] = {0.0, 0.0};
  dpd_err err;
  (void)state;

  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_subsampled_gaussian(-1.0, 0.1, ok_alphas, 2, out, &err), &err,
                       "sigma", "-1", "(0, inf]");
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_subsampled_gaussian(0.0, 0.1, ok_alphas, 2, out, &err), &err,
                       "sigma", "0", "(0, inf]");
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_subsampled_gaussian(NAN, 0.1, ok_alphas, 2, out, &err), &err,
                       "sigma", "nan", "(0, inf]");
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_subsampled_gaussian(1.0, 0.0, ok_alphas, 2, out, &err), &err, "q",
                       "0", "(0, 1]");
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_subsampled_gaussian(1.0, 1.5, ok_alphas, 2, out, &err), &err, "q",
                       "1.5", "(0, 1]");
  {
    const double frac[] = {2.0, 2.5};
    const double low[] = {2.0, 1.0};
    const double big[] = {2e6};
    dpd_err_reset(&err);
    assert_einval_reason(dpd_rdp_subsampled_gaussian(1.0, 0.1, frac, 2, out, &err), &err,
                         "alphas[1]", "2.5", "integer orders only");
    dpd_err_reset(&err);
    assert_einval_reason(dpd_rdp_subsampled_gaussian(1.0, 1.0, low, 2, out, &err), &err,
                         "alphas[1]", "1", "(1, 1.04858e+06]");
    dpd_err_reset(&err);
    assert_einval_reason(dpd_rdp_gaussian(1.0, big, 1, out, &err), &err, "alphas[0]", "2e+06",
                         "(1, 1.04858e+06]");
  }
  assert_rel(out[0], -7.0, 0.0); /* outputs untouched on failure */

  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_compose(ok_rdp, 2, 0, total, &err), &err, "steps", "0", ">= 1");
  {
    const double neg[] = {0.1, -0.2};
    dpd_err_reset(&err);
    assert_einval_reason(dpd_rdp_compose(neg, 2, 3, total, &err), &err, "rdp[1]", "-0.2",
                         "[0, inf]");
    assert_rel(total[0], 0.0, 0.0);
    dpd_err_reset(&err);
    assert_einval_reason(dpd_rdp_epsilon(ok_alphas, neg, 2, 1e-5, &eps, NULL, &err), &err, "rdp[1]",
                         "-0.2", "[0, inf]");
  }
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_epsilon(ok_alphas, ok_rdp, 2, 0.0, &eps, NULL, &err), &err, "delta",
                       "0", "(0, 1)");
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_epsilon_classic(ok_alphas, ok_rdp, 2, 1.0, &eps, NULL, &err), &err,
                       "delta", "1", "(0, 1)");
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_epsilon(ok_alphas, ok_rdp, 0, 1e-5, &eps, NULL, &err), &err, "n",
                       "0", ">= 1");
  assert_rel(eps, -7.0, 0.0);
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_delta(ok_alphas, ok_rdp, 2, -1.0, &eps, NULL, &err), &err, "eps",
                       "-1", "[0, inf]");
  dpd_err_reset(&err);
  assert_einval_reason(dpd_rdp_subsampled_gaussian_epsilon(1.0, 0.01, 0, 1e-5, &eps, NULL, &err),
                       &err, "steps", "0", ">= 1");
  dpd_err_reset(&err);
  assert_int_equal(dpd_rdp_epsilon(ok_alphas, ok_rdp, 2, 1e-5, NULL, NULL, &err), DPD_EINVAL);
  assert_int_equal(dpd_rdp_epsilon(NULL, ok_rdp, 2, 1e-5, &eps, NULL, &err), DPD_EINVAL);
  assert_int_equal(dpd_rdp_subsampled_gaussian(1.0, 0.1, ok_alphas, 2, NULL, &err), DPD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(q_one_equals_the_gaussian_at_every_integer_order),
      cmocka_unit_test(small_q_follows_the_quadratic_asymptotics),
      cmocka_unit_test(the_sum_matches_a_direct_long_double_evaluation),
      cmocka_unit_test(the_sum_matches_the_divergence_by_quadrature),
      cmocka_unit_test(large_orders_and_small_sigma_stay_finite),
      cmocka_unit_test(q_one_composed_is_an_upper_bound_on_the_exact_gdp_eps),
      cmocka_unit_test(reference_numbers_match_an_independent_python_evaluation),
      cmocka_unit_test(delta_inverts_epsilon_and_composition_adds_per_order),
      cmocka_unit_test(bad_arguments_are_refused_naming_them),
  };
  /* As the CLI does at start-up (house rule 16): GSL errors come back as codes. */
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
