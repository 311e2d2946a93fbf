/* Unit tests for the label-noise laws: clipping factors mu, nu and their R-derivatives for
 * Laplace, Rademacher and Student-t noise (clip.h), the label-noise draws of the simulator and
 * the gamma sampler under them (rng.h, noise_impl.h), and the simulator's and the ODE's
 * handling of the laws (linreg.h, ode.h).
 * SPDX-License-Identifier: MIT
 *
 * Independent references (docs/math.md §1.5; the factors must agree with Monte Carlo to 1e-4):
 *  (a) Stratified conditional Monte Carlo. Given z the residual is N(-z, 2R), and the test's
 *      own truncated-Gaussian formulas (written here in the "body" form with GSL's
 *      gsl_cdf_ugaussian_P, not the library's forms) give P(|r| <= c | z) and
 *      E[min(r^2, c^2) | z]. z is drawn by inversion (gsl_cdf_laplace_Pinv,
 *      gsl_cdf_tdist_Pinv) of two uniforms per stratum [i/n, (i+1)/n) from GSL's MT19937
 *      (Matsumoto & Nishimura 1998), independent of the library's Philox streams; the
 *      within-stratum differences give the standard error (Cochran, Sampling Techniques,
 *      3rd ed., 1977, section 5A). With n = 40000 strata the SE is 1e-8 to 1.3e-5 (the
 *      largest for mild clipping, where the heavy tails of z reach c), at least 8 times below
 *      the 1e-4 the specification asks for; the tests require SE < 2.5e-5 and check both
 *      |library - MC| <= 1e-4 and <= 4 SE.
 *  (b) Brute-force Monte Carlo of (Z, z) with MT19937 (gsl_ran_gaussian, gsl_ran_laplace,
 *      gsl_ran_tdist), 10^6 samples, within 4 SE (SE about 4e-4): checks (a)'s formulas.
 *  (c) Closed forms at R = 0 (r = -z) and c = inf, the Gaussian closed form at zeta = 0,
 *      and Student-t -> Gaussian as nu -> inf (difference O(1/nu)).
 *  (d) Centred finite differences in R for the derivatives.
 * Samplers (GSL randist style): moments within 4 SE and interval frequencies against the
 * law's CDF (gsl_cdf_gamma_P, gsl_cdf_tdist_P, the Laplace CDF) within 4 sigma per interval
 * (a Bonferroni-safe margin over the handful of intervals per law). */
#include "dpd_test.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "dpdyn/dpd.h"
#include "core/noise_impl.h"

static const unsigned long test_seed = 20240611UL;
static const double zeta_test = 0.5;

/* The laws under test: Laplace, Rademacher, Student-t with nu = 3 and nu = 5. */
static const dpd_noise_spec laws[] = {{DPD_NOISE_LAPLACE, 0.5, 0.0},
                                      {DPD_NOISE_RADEMACHER, 0.5, 0.0},
                                      {DPD_NOISE_STUDENT, 0.5, 3.0},
                                      {DPD_NOISE_STUDENT, 0.5, 5.0}};
#define NLAWS (sizeof laws / sizeof laws[0])

/* (c, R) pairs: aggressive to mild clipping, small to large risk, R = 0. */
static const double cases[][2] = {{0.5, 0.1},  {0.5, 0.01},     {3.0, 0.1}, {1.3, 1.0},
                                  {0.2, 0.02}, {2.385, 0.4187}, {0.7, 0.0}};
#define NCASES (sizeof cases / sizeof cases[0])

static const char *law_label(const dpd_noise_spec *ns, char *buf, size_t len) {
  if (ns->law == DPD_NOISE_STUDENT) {
    snprintf(buf, len, "student(nu = %g)", ns->nu);
  } else {
    snprintf(buf, len, "%s", dpd_noise_law_name(ns->law));
  }
  return buf;
}

static void factors(const dpd_noise_spec *ns, double c, double R, double *mu, double *nu,
                    double *dmu, double *dnu) {
  dpd_err err;
  int status = dpd_clip_noise_factors_eval(ns, c, R, mu, nu, dmu, dnu, &err);
  if (status != DPD_OK) {
    print_error("c = %g, R = %g: %s\n", c, R, err.reason);
    fail();
  }
}

/* P(|r| <= c | z) and E[min(r^2, c^2) | z] for r ~ N(-z, s^2), s > 0, in the body form:
 * with U = (r + z)/s on [lo, hi] = [(z - c)/s, (z + c)/s],
 *   E[r^2 1{|r| <= c}] = z^2 P - 2 z s (phi(lo) - phi(hi)) + s^2 (P + lo phi(lo) - hi phi(hi)). */
static void conditional(double z, double c, double s, double *p_in, double *clipped_sq) {
  if (s == 0.0) {
    *p_in = fabs(z) <= c ? 1.0 : 0.0;
    *clipped_sq = fmin(z * z, c * c);
    return;
  }
  double lo = (z - c) / s, hi = (z + c) / s;
  double P = lo > 0.0 ? gsl_cdf_ugaussian_Q(lo) - gsl_cdf_ugaussian_Q(hi)
                      : gsl_cdf_ugaussian_P(hi) - gsl_cdf_ugaussian_P(lo);
  double plo = gsl_ran_ugaussian_pdf(lo), phi_hi = gsl_ran_ugaussian_pdf(hi);
  double in2 = z * z * P - 2.0 * z * s * (plo - phi_hi) + s * s * (P + lo * plo - hi * phi_hi);
  *p_in = P;
  *clipped_sq = in2 + c * c * (1.0 - P);
}

/* Quantile of the law at u in (0, 1). */
static double law_quantile(const dpd_noise_spec *ns, double u) {
  switch (ns->law) {
  case DPD_NOISE_LAPLACE:
    return gsl_cdf_laplace_Pinv(u, ns->zeta / sqrt(2.0));
  case DPD_NOISE_STUDENT:
    return ns->zeta * sqrt((ns->nu - 2.0) / ns->nu) * gsl_cdf_tdist_Pinv(u, ns->nu);
  case DPD_NOISE_RADEMACHER:
    return u < 0.5 ? -ns->zeta : ns->zeta;
  default:
    return ns->zeta * gsl_cdf_ugaussian_Pinv(u);
  }
}

static void factors_match_stratified_conditional_monte_carlo(void **state) {
  const size_t n = 40000;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  double worst = 0.0, worst_se = 0.0;
  char name[64];
  (void)state;
  assert_non_null(rng);
  for (size_t l = 0; l < NLAWS; l++) {
    if (laws[l].law == DPD_NOISE_RADEMACHER) {
      continue; /* exact: tested against the two-point average below */
    }
    for (size_t k = 0; k < NCASES; k++) {
      const double c = cases[k][0], R = cases[k][1], s = sqrt(2.0 * R);
      const double second = 2.0 * R + laws[l].zeta * laws[l].zeta;
      double sum_mu = 0.0, sum_nu = 0.0, var_mu = 0.0, var_nu = 0.0;
      double mu, nu, mc_mu, mc_nu, se_mu, se_nu;
      gsl_rng_set(rng, test_seed + 97 * l + k);
      for (size_t i = 0; i < n; i++) {
        double p1, p2, q1, q2;
        double u1 = ((double)i + gsl_rng_uniform_pos(rng)) / (double)n;
        double u2 = ((double)i + gsl_rng_uniform_pos(rng)) / (double)n;
        conditional(law_quantile(&laws[l], u1), c, s, &p1, &q1);
        conditional(law_quantile(&laws[l], u2), c, s, &p2, &q2);
        sum_mu += p1 + p2;
        sum_nu += q1 + q2;
        var_mu += 0.25 * (p1 - p2) * (p1 - p2);
        var_nu += 0.25 * (q1 - q2) * (q1 - q2);
      }
      mc_mu = sum_mu / (2.0 * (double)n);
      mc_nu = sum_nu / (2.0 * (double)n) / second;
      se_mu = sqrt(var_mu) / (double)n;
      se_nu = sqrt(var_nu) / (double)n / second;
      factors(&laws[l], c, R, &mu, &nu, NULL, NULL);
      print_message("%-16s c = %5.3f R = %6.4f: mu %.10f MC %.10f (SE %.1e), nu %.10f MC %.10f "
                    "(SE %.1e)\n",
                    law_label(&laws[l], name, sizeof name), c, R, mu, mc_mu, se_mu, nu, mc_nu,
                    se_nu);
      worst = fmax(worst, fmax(fabs(mu - mc_mu), fabs(nu - mc_nu)));
      worst_se = fmax(worst_se, fmax(se_mu, se_nu));
      /* At R = 0 the conditional P(|r| <= c | z) is the indicator of |z| <= c: only the two
       * strata holding z = +-c vary, which the within-stratum SE can miss; they bound the
       * error by 2/n = 5e-5. */
      const double jump = R == 0.0 ? 2.0 / (double)n : 0.0;
      if (!(fabs(mu - mc_mu) <= fmin(1e-4, 4.0 * se_mu + jump + 1e-10) &&
            fabs(nu - mc_nu) <= fmin(1e-4, 4.0 * se_nu + 1e-10) && se_mu < 2.5e-5 &&
            se_nu < 2.5e-5)) {
        print_error("%s, c = %g, R = %g, seed %lu: disagreement beyond min(1e-4, 4 SE)\n", name, c,
                    R, test_seed + 97 * l + k);
        fail();
      }
    }
  }
  print_message("stratified MC: largest |library - MC| = %.2e, largest SE = %.2e\n", worst,
                worst_se);
  gsl_rng_free(rng);
}

static void rademacher_factors_are_the_two_point_average(void **state) {
  const dpd_noise_spec *ns = &laws[1];
  (void)state;
  for (size_t k = 0; k < NCASES; k++) {
    const double c = cases[k][0], R = cases[k][1], s = sqrt(2.0 * R);
    double p1, p2, q1, q2, mu, nu;
    conditional(ns->zeta, c, s, &p1, &q1);
    conditional(-ns->zeta, c, s, &p2, &q2);
    factors(ns, c, R, &mu, &nu, NULL, NULL);
    assert_abs(mu, 0.5 * (p1 + p2), 1e-13);
    assert_abs(nu, 0.5 * (q1 + q2) / (2.0 * R + ns->zeta * ns->zeta), 1e-13);
  }
}

/* One draw of the label noise with GSL's generators. */
static double gsl_law_draw(const dpd_noise_spec *ns, gsl_rng *rng) {
  switch (ns->law) {
  case DPD_NOISE_LAPLACE:
    return gsl_ran_laplace(rng, ns->zeta / sqrt(2.0));
  case DPD_NOISE_STUDENT:
    return ns->zeta * sqrt((ns->nu - 2.0) / ns->nu) * gsl_ran_tdist(rng, ns->nu);
  case DPD_NOISE_RADEMACHER:
    return gsl_rng_uniform_int(rng, 2) ? ns->zeta : -ns->zeta;
  default:
    return gsl_ran_gaussian(rng, ns->zeta);
  }
}

static void factors_match_brute_force_monte_carlo_within_four_standard_errors(void **state) {
  static const double bf_cases[][2] = {{0.5, 0.1}, {1.3, 0.4187}};
  const size_t n = 1000000;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  char name[64];
  (void)state;
  assert_non_null(rng);
  for (size_t l = 0; l < NLAWS; l++) {
    for (size_t k = 0; k < sizeof bf_cases / sizeof bf_cases[0]; k++) {
      const double c = bf_cases[k][0], R = bf_cases[k][1], s = sqrt(2.0 * R);
      const double second = 2.0 * R + laws[l].zeta * laws[l].zeta;
      double inside = 0.0, sum = 0.0, sum2 = 0.0, mu, nu, mc_mu, mc_nu, se_mu, se_nu, mean;
      gsl_rng_set(rng, test_seed + 1000 + 10 * l + k);
      for (size_t i = 0; i < n; i++) {
        double r = gsl_ran_gaussian(rng, s) - gsl_law_draw(&laws[l], rng);
        double q = fmin(r * r, c * c);
        inside += fabs(r) <= c ? 1.0 : 0.0;
        sum += q;
        sum2 += q * q;
      }
      factors(&laws[l], c, R, &mu, &nu, NULL, NULL);
      mc_mu = inside / (double)n;
      se_mu = sqrt(mc_mu * (1.0 - mc_mu) / (double)n);
      mean = sum / (double)n;
      mc_nu = mean / second;
      se_nu = sqrt((sum2 / (double)n - mean * mean) / (double)n) / second;
      print_message("%-16s c = %5.3f R = %6.4f: mu %.6f brute MC %.6f (SE %.1e), nu %.6f brute "
                    "MC %.6f (SE %.1e)\n",
                    law_label(&laws[l], name, sizeof name), c, R, mu, mc_mu, se_mu, nu, mc_nu,
                    se_nu);
      if (!(fabs(mu - mc_mu) <= 4.0 * se_mu && fabs(nu - mc_nu) <= 4.0 * se_nu)) {
        print_error("%s, c = %g, R = %g, seed %lu, n = %zu: beyond 4 SE\n", name, c, R,
                    test_seed + 1000 + 10 * l + k, n);
        fail();
      }
    }
  }
  gsl_rng_free(rng);
}

static void derivatives_match_centred_finite_differences(void **state) {
  static const double c_grid[] = {0.3, 1.3, 4.0};
  static const double r_grid[] = {0.03, 0.4187, 2.385};
  char name[64];
  (void)state;
  for (size_t l = 0; l < NLAWS; l++) {
    for (size_t i = 0; i < 3; i++) {
      for (size_t j = 0; j < 3; j++) {
        const double c = c_grid[i], R = r_grid[j], h = 1e-4 * R;
        double mu, nu, dmu, dnu, mp, np, mm, nm;
        factors(&laws[l], c, R, &mu, &nu, &dmu, &dnu);
        factors(&laws[l], c, R + h, &mp, &np, NULL, NULL);
        factors(&laws[l], c, R - h, &mm, &nm, NULL, NULL);
        double fd_mu = (mp - mm) / (2.0 * h), fd_nu = (np - nm) / (2.0 * h);
        /* Truncation (h/R)^2 = 1e-8 relative; quadrature noise 1e-11 / h. */
        if (!(fabs(dmu - fd_mu) <= 1e-6 * fabs(fd_mu) + 1e-7 / R &&
              fabs(dnu - fd_nu) <= 1e-6 * fabs(fd_nu) + 1e-7 / R)) {
          print_error("%s c = %g R = %g: dmu %.10g fd %.10g, dnu %.10g fd %.10g\n",
                      law_label(&laws[l], name, sizeof name), c, R, dmu, fd_mu, dnu, fd_nu);
          fail();
        }
      }
    }
  }
}

static void values_do_not_depend_on_which_outputs_are_requested(void **state) {
  (void)state;
  for (size_t l = 0; l < NLAWS; l++) {
    for (size_t k = 0; k < NCASES; k++) {
      double mu, nu, dmu, dnu, mu2, nu2, only;
      factors(&laws[l], cases[k][0], cases[k][1], &mu, &nu, &dmu, &dnu);
      factors(&laws[l], cases[k][0], cases[k][1], &mu2, &nu2, NULL, NULL);
      assert_true(mu == mu2 && nu == nu2);
      factors(&laws[l], cases[k][0], cases[k][1], NULL, NULL, NULL, &only);
      assert_true(only == dnu);
      factors(&laws[l], cases[k][0], cases[k][1], NULL, NULL, NULL, NULL);
      assert_true(mu >= 0.0 && mu <= 1.0 && nu >= 0.0 && nu <= 1.0);
    }
  }
}

static void gaussian_law_and_zero_zeta_give_the_gaussian_closed_form_bitwise(void **state) {
  static const double c_grid[] = {0.0137, 0.5, 2.385, INFINITY};
  static const double r_grid[] = {0.0, 1e-9, 0.4187, 17.0};
  (void)state;
  for (size_t i = 0; i < 4; i++) {
    for (size_t j = 0; j < 4; j++) {
      const double c = c_grid[i], R = r_grid[j];
      double w[4], g[4];
      dpd_noise_spec gauss = {DPD_NOISE_GAUSSIAN, 0.7, 0.0};
      dpd_clip_factors_eval(c, R + 0.5 * 0.7 * 0.7, &w[0], &w[1], &w[2], &w[3]);
      factors(&gauss, c, R, &g[0], &g[1], &g[2], &g[3]);
      assert_memory_equal(w, g, sizeof w);
      dpd_clip_factors_eval(c, R, &w[0], &w[1], &w[2], &w[3]);
      for (size_t l = 0; l < NLAWS; l++) {
        dpd_noise_spec ns = laws[l];
        ns.zeta = 0.0;
        factors(&ns, c, R, &g[0], &g[1], &g[2], &g[3]);
        assert_memory_equal(w, g, sizeof w);
      }
    }
  }
}

static void no_clipping_gives_one_one_zero_zero(void **state) {
  static const double r_grid[] = {0.0, 1e-12, 0.4187, 1e6};
  (void)state;
  for (size_t l = 0; l < NLAWS; l++) {
    for (size_t j = 0; j < 4; j++) {
      double mu, nu, dmu, dnu;
      factors(&laws[l], INFINITY, r_grid[j], &mu, &nu, &dmu, &dnu);
      assert_true(mu == 1.0 && nu == 1.0 && dmu == 0.0 && dnu == 0.0);
    }
  }
}

static void zero_risk_gives_the_law_of_the_noise_itself(void **state) {
  static const double c_grid[] = {0.1, 0.5, 1.3, 3.0};
  const double zeta = zeta_test;
  (void)state;
  for (size_t i = 0; i < 4; i++) {
    const double c = c_grid[i];
    double mu, nu, dmu, dnu, e;
    /* Laplace, b = zeta/sqrt 2: P(|z| <= c) = 1 - e^{-c/b}, E min(z^2, c^2) = zeta^2 (1 -
     * e^{-c/b} (1 + c/b)), d mu/dR = 2 p'(c) = -e^{-c/b}/b^2, d nu/dR = 0. */
    const double b = zeta / sqrt(2.0);
    e = exp(-c / b);
    factors(&laws[0], c, 0.0, &mu, &nu, &dmu, &dnu);
    assert_abs(mu, 1.0 - e, 1e-15);
    assert_abs(nu, 1.0 - e * (1.0 + c / b), 1e-15);
    assert_rel(dmu, -e / (b * b), 1e-13);
    assert_abs(dnu, 0.0, 1e-13);
    /* Student-t (z = a T): mu = P(|T| <= c/a), d mu/dR = 2 p'(c). */
    for (size_t l = 2; l < 4; l++) {
      const double nuv = laws[l].nu, a = zeta * sqrt((nuv - 2.0) / nuv);
      const double pc = gsl_ran_tdist_pdf(c / a, nuv) / a;
      const double dp = -(nuv + 1.0) * (c / a) / (nuv + (c / a) * (c / a)) / a * pc;
      factors(&laws[l], c, 0.0, &mu, &nu, &dmu, &dnu);
      assert_abs(mu, 1.0 - 2.0 * gsl_cdf_tdist_Q(c / a, nuv), 1e-14);
      assert_rel(dmu, 2.0 * dp, 1e-12);
      assert_rel(dnu, (2.0 * mu - 4.0 * c * pc - 2.0 * nu) / (zeta * zeta), 1e-12);
    }
    /* Rademacher: r = -+zeta. */
    factors(&laws[1], c, 0.0, &mu, &nu, &dmu, &dnu);
    assert_true(mu == (zeta <= c ? 1.0 : 0.0));
    assert_abs(nu, fmin(zeta * zeta, c * c) / (zeta * zeta), 1e-15);
    /* The continuous laws are continuous at R = 0: values and derivatives at R = 1e-10. */
    for (size_t l = 0; l < NLAWS; l++) {
      double mu1, nu1, dmu1, dnu1;
      if (laws[l].law == DPD_NOISE_RADEMACHER) {
        continue;
      }
      factors(&laws[l], c, 0.0, &mu, &nu, &dmu, &dnu);
      factors(&laws[l], c, 1e-10, &mu1, &nu1, &dmu1, &dnu1);
      assert_abs(mu1, mu, 1e-8);
      assert_abs(nu1, nu, 1e-8);
      assert_abs(dmu1, dmu, 1e-3 * fabs(dmu) + 1e-6);
      assert_abs(dnu1, dnu, 1e-3 * fabs(dnu) + 1e-6);
    }
  }
}

static void student_tends_to_gaussian_like_one_over_nu(void **state) {
  static const double c_grid[] = {0.5, 1.3};
  (void)state;
  for (size_t i = 0; i < 2; i++) {
    const double c = c_grid[i], R = 0.1;
    double g[4], diff[3];
    dpd_noise_spec gauss = {DPD_NOISE_GAUSSIAN, zeta_test, 0.0};
    factors(&gauss, c, R, &g[0], &g[1], &g[2], &g[3]);
    for (size_t k = 0; k < 3; k++) {
      const double nuv = 50.0 * pow(10.0, (double)k);
      dpd_noise_spec st = {DPD_NOISE_STUDENT, zeta_test, nuv};
      double t[4];
      factors(&st, c, R, &t[0], &t[1], &t[2], &t[3]);
      diff[k] = fmax(fabs(t[0] - g[0]), fabs(t[1] - g[1]));
      print_message("c = %g: nu = %6g, |student - gaussian| = %.3e (nu x diff = %.4f), dmu %.6f "
                    "vs %.6f\n",
                    c, nuv, diff[k], nuv * diff[k], t[2], g[2]);
      assert_true(diff[k] <= 1.0 / nuv);
      assert_abs(t[2], g[2], 10.0 / nuv);
    }
    /* O(1/nu): ten times the degrees of freedom, a tenth of the difference. */
    assert_true(diff[1] / diff[2] > 8.0 && diff[1] / diff[2] < 12.0);
    assert_true(diff[0] / diff[1] > 7.0 && diff[0] / diff[1] < 13.0);
  }
}

static void expect_einval(const dpd_noise_spec *ns, double c, double R, const char *param,
                          const char *value) {
  dpd_err err;
  double mu = 0.0;
  dpd_err_reset(&err);
  assert_int_equal(dpd_clip_noise_factors_eval(ns, c, R, &mu, NULL, NULL, NULL, &err), DPD_EINVAL);
  assert_int_equal(err.status, DPD_EINVAL);
  if (strstr(err.reason, param) == NULL || strstr(err.reason, value) == NULL ||
      strstr(err.reason, "allowed") == NULL) {
    print_error("reason '%s' should name %s, %s and the allowed range\n", err.reason, param, value);
    fail();
  }
}

static void invalid_inputs_are_rejected_naming_the_parameter(void **state) {
  dpd_noise_spec st = {DPD_NOISE_STUDENT, 0.5, 3.0};
  (void)state;
  expect_einval(NULL, 1.0, 0.1, "'noise'", "NULL");
  st.law = (dpd_noise_law)7;
  expect_einval(&st, 1.0, 0.1, "'noise'", "7");
  st.law = DPD_NOISE_STUDENT;
  st.nu = 2.0;
  expect_einval(&st, 1.0, 0.1, "'nu'", "2");
  st.nu = 1.5;
  expect_einval(&st, 1.0, 0.1, "'nu'", "1.5");
  st.nu = NAN;
  expect_einval(&st, 1.0, 0.1, "'nu'", "nan");
  st.nu = INFINITY;
  expect_einval(&st, 1.0, 0.1, "'nu'", "inf");
  st.nu = 3.0;
  st.zeta = NAN;
  expect_einval(&st, 1.0, 0.1, "'zeta'", "nan");
  st.zeta = -0.5;
  expect_einval(&st, 1.0, 0.1, "'zeta'", "-0.5");
  st.zeta = 0.5;
  expect_einval(&st, NAN, 0.1, "'c'", "nan");
  expect_einval(&st, 0.0, 0.1, "'c'", "0");
  expect_einval(&st, -1.0, 0.1, "'c'", "-1");
  expect_einval(&st, 1.0, NAN, "'R'", "nan");
  expect_einval(&st, 1.0, -1e-3, "'R'", "-0.001");
  expect_einval(&st, 1.0, INFINITY, "'R'", "inf");
  /* nu is read only by the Student-t law. */
  {
    dpd_noise_spec lap = {DPD_NOISE_LAPLACE, 0.5, NAN};
    double mu;
    assert_int_equal(dpd_clip_noise_factors_eval(&lap, 1.0, 0.1, &mu, NULL, NULL, NULL, NULL),
                     DPD_OK);
  }
}

static void extreme_parameters_give_finite_factors_in_range(void **state) {
  static const double c_grid[] = {1e-6, 1e-3, 1.0, 1e3, 1e6};
  static const double r_grid[] = {0.0, 1e-20, 1e-6, 1.0, 1e6};
  static const double z_grid[] = {1e-6, 1.0, 1e3};
  static const double nu_grid[] = {2.0001, 2.5, 30.0, 1e6};
  (void)state;
  for (size_t l = 1; l <= 3; l++) {
    for (size_t q = 0; q < (l == 3 ? 4u : 1u); q++) {
      for (size_t i = 0; i < 5; i++) {
        for (size_t j = 0; j < 5; j++) {
          for (size_t k = 0; k < 3; k++) {
            dpd_noise_spec ns = {(dpd_noise_law)l, z_grid[k], nu_grid[q]};
            double mu, nu, dmu, dnu;
            dpd_err err;
            int status =
                dpd_clip_noise_factors_eval(&ns, c_grid[i], r_grid[j], &mu, &nu, &dmu, &dnu, &err);
            if (status != DPD_OK || !(mu >= 0.0 && mu <= 1.0 && nu >= 0.0 && nu <= 1.0) ||
                isnan(dmu) || isnan(dnu)) {
              print_error("%s zeta = %g nu = %g c = %g R = %g: status %d (%s), mu %g nu %g\n",
                          dpd_noise_law_name(ns.law), ns.zeta, ns.nu, c_grid[i], r_grid[j], status,
                          status < 0 ? err.reason : "", mu, nu);
              fail();
            }
          }
        }
      }
    }
  }
}

/* ---- Samplers ----------------------------------------------------------------------------- */

static void gamma_sampler_matches_moments_and_deciles(void **state) {
  static const double shapes[] = {0.37, 1.0, 2.5, 7.9};
  const size_t n = 200000;
  double *x = malloc(n * sizeof *x);
  (void)state;
  assert_non_null(x);
  for (size_t k = 0; k < 4; k++) {
    const double a = shapes[k];
    dpd_rng rng;
    double sum = 0.0, ss = 0.0, mean, var;
    dpd_rng_init(&rng, test_seed, 100 + k);
    for (size_t i = 0; i < n; i++) {
      x[i] = dpd_rng_gamma_sample(&rng, a);
      assert_true(x[i] >= 0.0 && isfinite(x[i]));
      sum += x[i];
    }
    mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) {
      ss += (x[i] - mean) * (x[i] - mean);
    }
    var = ss / (double)(n - 1);
    /* SE of the mean sqrt(a/n); of the variance sqrt((mu4 - a^2)/n), mu4 = 3a^2 + 6a. */
    assert_abs(mean, a, 4.0 * sqrt(a / (double)n));
    assert_abs(var, a, 4.0 * sqrt((2.0 * a * a + 6.0 * a) / (double)n));
    for (size_t q = 0; q < 10; q++) {
      double lo = q == 0 ? 0.0 : gsl_cdf_gamma_Pinv(0.1 * (double)q, a, 1.0);
      double hi = q == 9 ? INFINITY : gsl_cdf_gamma_Pinv(0.1 * (double)(q + 1), a, 1.0);
      double count = 0.0;
      for (size_t i = 0; i < n; i++) {
        count += (x[i] >= lo && x[i] < hi) ? 1.0 : 0.0;
      }
      if (!(fabs(count / (double)n - 0.1) <= 4.0 * sqrt(0.09 / (double)n))) {
        print_error("gamma(%g), seed %lu stream %zu: decile %zu has frequency %.5f\n", a, test_seed,
                    100 + k, q, count / (double)n);
        fail();
      }
    }
  }
  free(x);
}

static void gamma_sampler_rejects_invalid_shapes_without_touching_the_stream(void **state) {
  static const double bad[] = {0.0, -1.0, NAN, INFINITY};
  dpd_rng rng, copy;
  (void)state;
  dpd_rng_init(&rng, test_seed, 7);
  (void)dpd_rng_uniform(&rng);
  copy = rng;
  for (size_t k = 0; k < 4; k++) {
    assert_true(isnan(dpd_rng_gamma_sample(&rng, bad[k])));
    assert_memory_equal(&rng, &copy, sizeof rng);
  }
}

/* CDF of the law at x. */
static double law_cdf(const dpd_noise_spec *ns, double x) {
  if (ns->law == DPD_NOISE_LAPLACE) {
    double b = ns->zeta / sqrt(2.0);
    return x < 0.0 ? 0.5 * exp(x / b) : 1.0 - 0.5 * exp(-x / b);
  }
  return gsl_cdf_tdist_P(x / (ns->zeta * sqrt((ns->nu - 2.0) / ns->nu)), ns->nu);
}

static void label_noise_draws_follow_their_laws(void **state) {
  static const double thresholds[] = {-3.5, -2.0, -1.0, -0.25, 0.0, 0.25, 1.0, 2.0, 3.5};
  const size_t n = 1000000;
  double *z = malloc(n * sizeof *z);
  char name[64];
  (void)state;
  assert_non_null(z);
  for (size_t l = 0; l < NLAWS; l++) {
    const dpd_noise_spec *ns = &laws[l];
    const double zeta = ns->zeta;
    dpd_rng rng;
    double sum = 0.0, sum2 = 0.0, sum4 = 0.0, mean, var, se_var;
    dpd_rng_init(&rng, test_seed, 200 + l);
    for (size_t i = 0; i < n; i++) {
      z[i] = dpd__noise_from_gaussian(ns, dpd_rng_gaussian(&rng), &rng);
      sum += z[i];
      sum2 += z[i] * z[i];
      sum4 += z[i] * z[i] * z[i] * z[i];
    }
    mean = sum / (double)n;
    var = sum2 / (double)n;
    se_var = sqrt((sum4 / (double)n - var * var) / (double)n);
    print_message("%-16s mean %+.5f (SE %.1e), E z^2 %.5f vs zeta^2 %.5f (SE %.1e)\n",
                  law_label(ns, name, sizeof name), mean, sqrt(var / (double)n), var, zeta * zeta,
                  se_var);
    assert_abs(mean, 0.0, 4.0 * sqrt(zeta * zeta / (double)n));
    if (!(ns->law == DPD_NOISE_STUDENT && ns->nu <= 4.0)) {
      /* A finite fourth moment makes the SE of E z^2 meaningful (not for nu <= 4). */
      assert_abs(var, zeta * zeta, 4.0 * se_var);
    }
    if (ns->law == DPD_NOISE_RADEMACHER) {
      double plus = 0.0;
      for (size_t i = 0; i < n; i++) {
        assert_true(z[i] == zeta || z[i] == -zeta);
        plus += z[i] > 0.0 ? 1.0 : 0.0;
      }
      assert_abs(plus / (double)n, 0.5, 4.0 * sqrt(0.25 / (double)n));
      continue;
    }
    for (size_t t = 0; t < sizeof thresholds / sizeof thresholds[0]; t++) {
      const double x = thresholds[t] * zeta, p = law_cdf(ns, x);
      double count = 0.0;
      for (size_t i = 0; i < n; i++) {
        count += z[i] <= x ? 1.0 : 0.0;
      }
      if (!(fabs(count / (double)n - p) <= 4.0 * sqrt(p * (1.0 - p) / (double)n))) {
        print_error("%s, seed %lu stream %zu: P(z <= %g) = %.6f, law %.6f\n", name, test_seed,
                    200 + l, x, count / (double)n, p);
        fail();
      }
    }
  }
  free(z);
}

/* ---- Simulator and ODE with the laws ------------------------------------------------------ */

static dpd_linreg_problem *small_problem(size_t d) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  static const double values[] = {0.5, 2.0};
  size_t m[2] = {d / 2, d - d / 2};
  pc.d = d;
  pc.spectrum = DPD_SPECTRUM_LEVELS;
  pc.values = values;
  pc.mult = m;
  pc.nvalues = 2;
  pc.seed = 5;
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, NULL), DPD_OK);
  return p;
}

static dpd_schedule *const_schedule(void) {
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  sc.kind = DPD_SCHEDULE_CONST;
  sc.eta0 = 1.1;
  assert_int_equal(dpd_schedule_create(&sc, &s, NULL), DPD_OK);
  return s;
}

static dpd_linreg_sim_result *simulate_threads(const dpd_linreg_problem *p, const dpd_schedule *s,
                                               dpd_noise_law law, double zeta, double nu,
                                               int threads) {
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  cfg.n = 200;
  cfg.seeds = 4;
  cfg.grid = 5;
  cfg.c = 0.6;
  cfg.rho = 1.5;
  cfg.zeta = zeta;
  cfg.noise = law;
  cfg.noise_nu = nu;
  cfg.threads = threads;
  if (dpd_linreg_sim_run(p, s, &cfg, &res, &err) != DPD_OK) {
    print_error("simulate (%s): %s\n", dpd_noise_law_name(law), err.reason);
    fail();
  }
  return res;
}

static dpd_linreg_sim_result *simulate(const dpd_linreg_problem *p, const dpd_schedule *s,
                                       dpd_noise_law law, double zeta, double nu) {
  return simulate_threads(p, s, law, zeta, nu, 2);
}

static void simulator_runs_every_law_and_validates_nu(void **state) {
  dpd_linreg_problem *p = small_problem(50);
  dpd_schedule *s = const_schedule();
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  dpd_linreg_sim_result *res = NULL, *g = NULL, *g2 = NULL;
  dpd_err err;
  (void)state;
  for (size_t l = 0; l < NLAWS; l++) {
    res = simulate(p, s, laws[l].law, 0.5, laws[l].nu);
    assert_true(isfinite(res->final_risk) && res->final_risk > 0.0);
    /* The same numbers with one thread (per-replicate streams, also for Student-t's
     * variable number of chi-square blocks). */
    g = simulate_threads(p, s, laws[l].law, 0.5, laws[l].nu, 1);
    assert_memory_equal(g->risk_replicates, res->risk_replicates,
                        g->seeds * g->grid * sizeof *g->risk_replicates);
    dpd_linreg_sim_result_free(g);
    dpd_linreg_sim_result_free(res);
  }
  /* The Gaussian law ignores noise_nu (even an invalid one), bit for bit. */
  g = simulate(p, s, DPD_NOISE_GAUSSIAN, 0.5, 5.0);
  g2 = simulate(p, s, DPD_NOISE_GAUSSIAN, 0.5, -1.0);
  assert_memory_equal(g->risk_replicates, g2->risk_replicates,
                      g->seeds * g->grid * sizeof *g->risk_replicates);
  dpd_linreg_sim_result_free(g2);
  dpd_linreg_sim_result_free(g);
  /* With zeta = 0 Laplace and Rademacher noise is 0 and uses the stream as the Gaussian law
   * does: the runs are identical. */
  g = simulate(p, s, DPD_NOISE_GAUSSIAN, 0.0, 5.0);
  for (size_t l = 0; l < 2; l++) {
    res = simulate(p, s, laws[l].law, 0.0, 5.0);
    assert_memory_equal(g->risk_replicates, res->risk_replicates,
                        g->seeds * g->grid * sizeof *g->risk_replicates);
    dpd_linreg_sim_result_free(res);
  }
  dpd_linreg_sim_result_free(g);
  /* Student-t needs finite nu > 2; unknown laws are rejected. */
  cfg.n = 100;
  cfg.noise = DPD_NOISE_STUDENT;
  cfg.noise_nu = 2.0;
  res = NULL;
  assert_int_equal(dpd_linreg_sim_run(p, s, &cfg, &res, &err), DPD_EINVAL);
  assert_null(res);
  assert_non_null(strstr(err.reason, "noise_nu"));
  cfg.noise_nu = NAN;
  assert_int_equal(dpd_linreg_sim_run(p, s, &cfg, &res, &err), DPD_EINVAL);
  cfg.noise = (dpd_noise_law)9;
  assert_int_equal(dpd_linreg_sim_run(p, s, &cfg, &res, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "noise law"));
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static dpd_ode_config ode_cfg(dpd_noise_law law, double zeta, double nu) {
  dpd_ode_config oc = dpd_ode_config_default();
  oc.gamma = 0.25;
  oc.zeta = zeta;
  oc.noise = law;
  oc.noise_nu = nu;
  oc.c = 0.6;
  oc.rho = 1.5;
  oc.grid = 11;
  return oc;
}

static void ode_with_zero_zeta_or_gaussian_law_is_unchanged(void **state) {
  dpd_linreg_problem *p = small_problem(80);
  dpd_schedule *s = const_schedule();
  dpd_ode_result *g = NULL, *r = NULL;
  dpd_ode_config oc = ode_cfg(DPD_NOISE_GAUSSIAN, 0.0, 5.0);
  (void)state;
  assert_int_equal(dpd_ode_solve(p, s, &oc, &g, NULL), DPD_OK);
  for (size_t l = 0; l < NLAWS; l++) {
    oc = ode_cfg(laws[l].law, 0.0, laws[l].nu);
    assert_int_equal(dpd_ode_solve(p, s, &oc, &r, NULL), DPD_OK);
    assert_memory_equal(g->risk, r->risk, g->grid * sizeof *g->risk);
    dpd_ode_result_free(r);
  }
  dpd_ode_result_free(g);
  oc = ode_cfg(DPD_NOISE_GAUSSIAN, 0.5, 5.0);
  assert_int_equal(dpd_ode_solve(p, s, &oc, &g, NULL), DPD_OK);
  oc.noise_nu = -3.0; /* ignored by the Gaussian law */
  assert_int_equal(dpd_ode_solve(p, s, &oc, &r, NULL), DPD_OK);
  assert_memory_equal(g->risk, r->risk, g->grid * sizeof *g->risk);
  dpd_ode_result_free(r);
  dpd_ode_result_free(g);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void ode_jacobian_matches_finite_differences_for_every_law(void **state) {
  dpd_linreg_problem *p = small_problem(80);
  dpd_schedule *s = const_schedule();
  const size_t m = p->ngroups;
  double S[2], v[2] = {0.7, -0.3}, Jv[2], fp[2], fm[2];
  (void)state;
  assert_int_equal(m, 2);
  S[0] = 0.37 * p->group_S0[0] + 1.1;
  S[1] = 0.81 * p->group_S0[1] + 0.4;
  for (size_t l = 0; l < NLAWS; l++) {
    dpd_ode_config oc = ode_cfg(laws[l].law, 0.5, laws[l].nu);
    const double h = 1e-5;
    double Sp[2], Sm[2];
    for (size_t j = 0; j < m; j++) {
      Sp[j] = S[j] + h * v[j];
      Sm[j] = S[j] - h * v[j];
    }
    assert_int_equal(dpd_ode_jtimes_eval(p, s, &oc, 0.3, S, v, Jv), 0);
    assert_int_equal(dpd_ode_rhs_eval(p, s, &oc, 0.3, Sp, fp), 0);
    assert_int_equal(dpd_ode_rhs_eval(p, s, &oc, 0.3, Sm, fm), 0);
    for (size_t j = 0; j < m; j++) {
      assert_abs(Jv[j], (fp[j] - fm[j]) / (2.0 * h), 1e-6 * fabs(Jv[j]) + 1e-8);
    }
  }
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void ode_solvers_agree_and_bounds_bracket_for_every_law(void **state) {
  dpd_linreg_problem *p = small_problem(80);
  dpd_schedule *s = const_schedule();
  dpd_err err;
  (void)state;
  for (size_t l = 0; l < NLAWS; l++) {
    dpd_ode_config oc = ode_cfg(laws[l].law, 0.5, laws[l].nu);
    dpd_ode_result *bdf = NULL, *spgmr = NULL, *adams = NULL;
    oc.bounds = 1;
    if (dpd_ode_solve(p, s, &oc, &bdf, &err) != DPD_OK) {
      print_error("%s: %s\n", dpd_noise_law_name(oc.noise), err.reason);
      fail();
    }
    oc.bounds = 0;
    oc.linsol = DPD_ODE_LINSOL_SPGMR;
    assert_int_equal(dpd_ode_solve(p, s, &oc, &spgmr, &err), DPD_OK);
    oc.method = DPD_ODE_ADAMS;
    assert_int_equal(dpd_ode_solve(p, s, &oc, &adams, &err), DPD_OK);
    for (size_t j = 0; j < bdf->grid; j++) {
      assert_rel(spgmr->risk[j], bdf->risk[j], 1e-6);
      assert_rel(adams->risk[j], bdf->risk[j], 1e-6);
      assert_true(bdf->lower[j] <= bdf->risk[j] * (1.0 + 1e-7));
      assert_true(bdf->risk[j] <= bdf->upper[j] * (1.0 + 1e-7));
    }
    dpd_ode_result_free(bdf);
    dpd_ode_result_free(spgmr);
    dpd_ode_result_free(adams);
  }
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void ode_rejects_invalid_noise_naming_the_key(void **state) {
  dpd_linreg_problem *p = small_problem(20);
  dpd_schedule *s = const_schedule();
  dpd_ode_result *r = NULL;
  dpd_err err;
  dpd_ode_config oc = ode_cfg(DPD_NOISE_STUDENT, 0.5, 2.0);
  (void)state;
  assert_int_equal(dpd_ode_solve(p, s, &oc, &r, &err), DPD_EINVAL);
  assert_null(r);
  assert_non_null(strstr(err.reason, "'noise_nu'"));
  assert_non_null(strstr(err.reason, "allowed"));
  oc.noise_nu = NAN;
  assert_int_equal(dpd_ode_solve(p, s, &oc, &r, &err), DPD_EINVAL);
  oc.noise = (dpd_noise_law)5;
  assert_int_equal(dpd_ode_solve(p, s, &oc, &r, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'noise'"));
  assert_true(dpd_ode_config_default().noise == DPD_NOISE_GAUSSIAN);
  assert_true(dpd_ode_config_default().noise_nu > 2.0);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* The law table parses every law it lists, and names the allowed forms otherwise. */
static void noise_spec_parse_follows_the_table(void **state) {
  const dpd_noise_law_type *t;
  dpd_noise_spec spec;
  dpd_err err;
  (void)state;
  for (size_t i = 0; (t = dpd_noise_law_type_at(i)) != NULL; i++) {
    char text[64];
    snprintf(text, sizeof text, t->parameter != NULL ? "%s:4.5" : "%s", t->name);
    assert_int_equal(dpd_noise_spec_parse(text, &spec, &err), DPD_OK);
    assert_int_equal(spec.law, t->law);
    assert_true(spec.nu == (t->parameter != NULL ? 4.5 : 0.0));
  }
  assert_int_equal(dpd_noise_spec_parse("student:2", &spec, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "finite NU > 2"));
  assert_int_equal(dpd_noise_spec_parse("student:0x10", &spec, &err), DPD_EINVAL);
  assert_int_equal(dpd_noise_spec_parse("cauchy", &spec, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "(allowed: gaussian, laplace, rademacher, student:NU)"));
  assert_int_equal(dpd_noise_spec_parse("gaussian:1", &spec, &err), DPD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(factors_match_stratified_conditional_monte_carlo),
      cmocka_unit_test(rademacher_factors_are_the_two_point_average),
      cmocka_unit_test(factors_match_brute_force_monte_carlo_within_four_standard_errors),
      cmocka_unit_test(derivatives_match_centred_finite_differences),
      cmocka_unit_test(values_do_not_depend_on_which_outputs_are_requested),
      cmocka_unit_test(gaussian_law_and_zero_zeta_give_the_gaussian_closed_form_bitwise),
      cmocka_unit_test(no_clipping_gives_one_one_zero_zero),
      cmocka_unit_test(zero_risk_gives_the_law_of_the_noise_itself),
      cmocka_unit_test(student_tends_to_gaussian_like_one_over_nu),
      cmocka_unit_test(invalid_inputs_are_rejected_naming_the_parameter),
      cmocka_unit_test(extreme_parameters_give_finite_factors_in_range),
      cmocka_unit_test(gamma_sampler_matches_moments_and_deciles),
      cmocka_unit_test(gamma_sampler_rejects_invalid_shapes_without_touching_the_stream),
      cmocka_unit_test(label_noise_draws_follow_their_laws),
      cmocka_unit_test(simulator_runs_every_law_and_validates_nu),
      cmocka_unit_test(ode_with_zero_zeta_or_gaussian_law_is_unchanged),
      cmocka_unit_test(ode_jacobian_matches_finite_differences_for_every_law),
      cmocka_unit_test(ode_solvers_agree_and_bounds_bracket_for_every_law),
      cmocka_unit_test(ode_rejects_invalid_noise_naming_the_key),
      cmocka_unit_test(noise_spec_parse_follows_the_table),
  };
  gsl_set_error_handler_off();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
