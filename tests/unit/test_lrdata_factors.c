/* Tests of the data-driven clipping factors (dpd__lrdata_factors, linreg/data_impl.h; derivation
 * in docs/real_data_theory.md) and of the ODE's caller-supplied factors (dpd_ode_config.factors).
 * SPDX-License-Identifier: MIT
 *
 * References used here:
 *  - Gaussian limit (a_j = 1, z NULL): the published closed forms (dpd_clip_factors_eval, clip.h)
 *    at P = R + zeta^2/2, to 1e-13 (derivatives relative to max(|value|, 1/P), their scale).
 *  - Exact limits: c = INFINITY (mu = mean a, nu P = R mean a^2 + mean a z^2 / 2) and R = 0 with
 *    file residuals (w = -z), against direct sums.
 *  - Derivatives: central finite differences.
 *  - One-step Monte Carlo of the clipped gradient on synthetic elliptical rows for which the
 *    model is exact (docs/real_data_theory.md §6): mu = E[e^T clip(g)] / (e^T Sigma e) and
 *    2 nu P = E|clip(g)|^2 / d, within 4 standard errors; the Gaussian closed forms applied to
 *    the same rows' second moments are more than 10 standard errors off.
 *  - The ODE: a factors function returning the Gaussian closed forms reproduces the default solve
 *    bit for bit; unclipped data factors reproduce the default solve of a rescaled setting. */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "dpdyn/clip.h"
#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/rng.h"
#include "dpdyn/schedule.h"
#include "dpdyn/volterra.h"
#include "linreg/data_impl.h"

/* ---- Helpers ------------------------------------------------------------------------------- */

typedef struct {
  double mu, nu, dmu, dnu;
} factors4;

static factors4 eval_data(dpd__lrdata_factors_ctx *ctx, double R) {
  factors4 f;
  assert_int_equal(dpd__lrdata_factors(ctx, ctx->c, R, &f.mu, &f.nu, &f.dmu, &f.dnu), 0);
  return f;
}

/* |got - want| <= tol max(|want|, scale) */
static void check_scaled(double got, double want, double tol, double scale, const char *what,
                         double c, double R, double zeta) {
  const double lim = tol * fmax(fabs(want), scale);
  if (!(fabs(got - want) <= lim)) {
    print_error("%s at c = %.17g, R = %.17g, zeta = %.17g: %.17g, want %.17g (err %.3g > %.3g)\n",
                what, c, R, zeta, got, want, fabs(got - want), lim);
    fail();
  }
}

/* Rows with a = chi^2_5 / 5 (renormalised to mean 1) and skewed residuals z = 0.7 (E - 1),
 * E ~ Exp(1), centred. */
static void skewed_rows(size_t n, uint64_t seed, double *a, double *z) {
  dpd_rng rng;
  double sa = 0.0, sz = 0.0;
  dpd_rng_init(&rng, seed, 0);
  for (size_t j = 0; j < n; j++) {
    a[j] = 2.0 * dpd_rng_gamma_sample(&rng, 2.5) / 5.0;
    z[j] = 0.7 * (-log1p(-dpd_rng_uniform(&rng)) - 1.0);
    sa += a[j];
    sz += z[j];
  }
  for (size_t j = 0; j < n; j++) {
    a[j] /= sa / (double)n;
    z[j] -= sz / (double)n;
  }
}

static double mean_sq(const double *z, size_t n) {
  double s = 0.0;
  for (size_t j = 0; j < n; j++) {
    s += z[j] * z[j];
  }
  return s / (double)n;
}

/* ---- (a) The Gaussian limit and the exact limits ------------------------------------------- */

static void gaussian_rows_give_the_published_closed_forms(void **state) {
  static const double cs[] = {0.013, 0.05, 0.3, 1.1, 2.385, 7.3, 40.0, INFINITY};
  static const double Rs[] = {0.0, 1e-7, 1e-3, 0.0713, 0.5, 1.9, 40.0, 3e3};
  static const double zetas[] = {0.0, 0.31, 0.9};
  double a[5] = {1.0, 1.0, 1.0, 1.0, 1.0};
  dpd__lrdata_factors_ctx ctx = {a, NULL, 5, 1.0, 0.0, 1};
  size_t count = 0;
  (void)state;
  for (size_t iz = 0; iz < sizeof zetas / sizeof *zetas; iz++) {
    for (size_t ic = 0; ic < sizeof cs / sizeof *cs; ic++) {
      for (size_t ir = 0; ir < sizeof Rs / sizeof *Rs; ir++) {
        const double c = cs[ic], R = Rs[ir], zeta = zetas[iz], P = R + 0.5 * zeta * zeta;
        double mu, nu, dmu, dnu;
        ctx.c = c;
        ctx.zeta2 = zeta * zeta;
        factors4 f = eval_data(&ctx, R);
        dpd_clip_factors_eval(c, P, &mu, &nu, &dmu, &dnu);
        check_scaled(f.mu, mu, 1e-13, 1.0, "mu", c, R, zeta);
        check_scaled(f.nu, nu, 1e-13, 1.0, "nu", c, R, zeta);
        check_scaled(f.dmu, dmu, 1e-13, P > 0.0 ? 1.0 / P : 0.0, "dmu/dR", c, R, zeta);
        check_scaled(f.dnu, dnu, 1e-13, P > 0.0 ? 1.0 / P : 0.0, "dnu/dR", c, R, zeta);
        count++;
      }
    }
  }
  print_message("Gaussian limit: %zu (c, R, zeta) points agree with clip.h to 1e-13\n", count);
}

static void limits_are_exact(void **state) {
  enum { N = 1000 };
  double *a = malloc(N * sizeof *a), *z = malloc(N * sizeof *z);
  (void)state;
  assert_non_null(a);
  assert_non_null(z);
  skewed_rows(N, 2385, a, z);
  const double zeta2 = mean_sq(z, N);
  dpd__lrdata_factors_ctx ctx = {a, z, N, INFINITY, zeta2, 1};
  /* no clipping: mu = mean a, nu P = R mean a^2 + mean a z^2 / 2 */
  {
    const double R = 0.437, P = R + 0.5 * zeta2;
    double sa = 0.0, sa2 = 0.0, saz2 = 0.0;
    for (size_t j = 0; j < N; j++) {
      sa += a[j];
      sa2 += a[j] * a[j];
      saz2 += a[j] * z[j] * z[j];
    }
    const double ea2 = sa2 / N, nuP = R * ea2 + 0.5 * saz2 / N;
    factors4 f = eval_data(&ctx, R);
    assert_rel(f.mu, sa / N, 1e-14);
    assert_rel(f.nu * P, nuP, 1e-14);
    assert_true(f.dmu == 0.0);
    assert_rel(f.dnu, (ea2 - f.nu) / P, 1e-13);
    /* the kurtosis of the norms enters unclipped: nu != 1 although mu = 1 */
    assert_true(fabs(f.nu - 1.0) > 1e-2);
  }
  /* R = 0 with file residuals: w = -z exactly */
  {
    const double c = 0.61, P = 0.5 * zeta2;
    double smu = 0.0, sn = 0.0;
    ctx.c = c;
    for (size_t j = 0; j < N; j++) {
      const double b = c / sqrt(a[j]);
      smu += fabs(z[j]) <= b ? a[j] : 0.0;
      sn += a[j] * fmin(z[j] * z[j], b * b);
    }
    factors4 f = eval_data(&ctx, 0.0);
    assert_rel(f.mu, smu / N, 1e-14);
    assert_rel(f.nu * P, 0.5 * sn / N, 1e-14);
    assert_true(f.dmu == 0.0);
  }
  /* outside the domain, and a bad context */
  {
    double mu = 7.0;
    assert_int_equal(dpd__lrdata_factors(&ctx, ctx.c, -1e-300, &mu, NULL, NULL, NULL), 1);
    assert_int_equal(dpd__lrdata_factors(&ctx, ctx.c, NAN, &mu, NULL, NULL, NULL), 1);
    assert_int_equal(dpd__lrdata_factors(&ctx, ctx.c, INFINITY, &mu, NULL, NULL, NULL), 1);
    assert_true(mu == 7.0);
    /* any output may be NULL */
    assert_int_equal(dpd__lrdata_factors(&ctx, ctx.c, 0.3, NULL, NULL, NULL, NULL), 0);
    ctx.n = 0;
    assert_int_equal(dpd__lrdata_factors(&ctx, ctx.c, 0.3, &mu, NULL, NULL, NULL), DPD_EINVAL);
    assert_int_equal(dpd__lrdata_factors(NULL, 1.0, 0.3, &mu, NULL, NULL, NULL), DPD_EINVAL);
  }
  free(a);
  free(z);
}

/* The sums go over fixed chunks added in order: the same bits for every thread count (also
 * beyond 4096 x 256 rows, where the chunks grow). */
static void thread_count_does_not_change_a_bit(void **state) {
  static const size_t ns[] = {50000, 1100000};
  (void)state;
  for (size_t in = 0; in < 2; in++) {
    const size_t n = ns[in];
    double *a = malloc(n * sizeof *a), *z = malloc(n * sizeof *z);
    assert_non_null(a);
    assert_non_null(z);
    skewed_rows(n, 77 + in, a, z);
    for (int withz = 0; withz < 2; withz++) {
      dpd__lrdata_factors_ctx ctx = {a, withz ? z : NULL, n, 0.83, mean_sq(z, n), 1};
      factors4 ref = eval_data(&ctx, 0.291);
      static const int threads[] = {2, 3, 7, 0};
      for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        ctx.threads = threads[t];
        factors4 got = eval_data(&ctx, 0.291);
        assert_memory_equal(&ref, &got, sizeof ref);
      }
    }
    free(a);
    free(z);
  }
}

/* ---- (b) Derivatives ----------------------------------------------------------------------- */

static void derivatives_match_finite_differences(void **state) {
  enum { N = 3000 };
  /* (c, R): a window narrower than 0.05 s for most rows, moderate and mild clipping, small R */
  static const double cases[][2] = {{0.01, 2.0}, {0.4, 0.05}, {1.3, 0.7},
                                    {3.0, 0.2},  {0.8, 1e-4}, {0.25, 37.0}};
  double *a = malloc(N * sizeof *a), *z = malloc(N * sizeof *z);
  (void)state;
  assert_non_null(a);
  assert_non_null(z);
  skewed_rows(N, 4242, a, z);
  for (int withz = 0; withz < 2; withz++) {
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
      const double c = cases[k][0], R = cases[k][1], h = 1e-5 * R;
      dpd__lrdata_factors_ctx ctx = {a, withz ? z : NULL, N, c, mean_sq(z, N), 1};
      factors4 f = eval_data(&ctx, R), fp = eval_data(&ctx, R + h), fm = eval_data(&ctx, R - h);
      const double fd_mu = (fp.mu - fm.mu) / (2.0 * h), fd_nu = (fp.nu - fm.nu) / (2.0 * h);
      check_scaled(f.dmu, fd_mu, 1e-6, f.mu / R, "dmu/dR vs finite differences", c, R, withz);
      check_scaled(f.dnu, fd_nu, 1e-6, f.nu / R, "dnu/dR vs finite differences", c, R, withz);
    }
  }
  free(a);
  free(z);
}

/* The two evaluations of a row (Gauss-Legendre below b = 0.05 s, the closed forms above) agree
 * across the seam. */
static void narrow_window_seam_is_continuous(void **state) {
  double a[1] = {1.0}, z[1] = {0.37};
  const double c = 0.2, Rseam = 0.5 * (c / 0.05) * (c / 0.05); /* s = sqrt(2R) = c / 0.05 */
  (void)state;
  for (int withz = 0; withz < 2; withz++) {
    dpd__lrdata_factors_ctx ctx = {a, withz ? z : NULL, 1, c, withz ? 0.0 : 0.37 * 0.37, 1};
    const double R = withz ? Rseam : Rseam - 0.5 * ctx.zeta2; /* s^2 = 2R + zeta^2 */
    const double rlo = R * (1.0 - 1e-10), rhi = R * (1.0 + 1e-10);
    factors4 lo = eval_data(&ctx, rlo), hi = eval_data(&ctx, rhi);
    /* the change beyond the first-order one: O(1e-20) for smooth factors; the closed forms
     * carry (s/b)^2 eps = 400 eps of rounding at the seam (measured: up to 2.4e-14 of nu) */
    assert_abs(hi.mu - lo.mu - 0.5 * (lo.dmu + hi.dmu) * (rhi - rlo), 0.0, 1e-13 * lo.mu);
    assert_abs(hi.nu - lo.nu - 0.5 * (lo.dnu + hi.dnu) * (rhi - rlo), 0.0, 1e-13 * lo.nu);
    assert_rel(hi.dmu, lo.dmu, 1e-9);
    assert_rel(hi.dnu, lo.dnu, 1e-9);
  }
}

/* ---- (c) One-step Monte Carlo on elliptical rows ------------------------------------------- */

/* Rows x = sqrt(a_j) g~ in d = 50 dimensions, for which the model is exact: g~ = (v, w) with
 * v ~ N(0, diag(lv)) on K = 4 coordinates that carry e = theta - theta^*, and w uniform on the
 * sphere of radius sqrt(d - |v|^2) in the other 46, so |g~|^2 = d (|x|^2 = a_j d exactly),
 * u = g~^T e = v^T e ~ N(0, 2R) independent of the row, Sigma = Cov(g~) diagonal and
 * non-isotropic (lv, then (d - sum lv)/46). a_j = 0.3 or 1.7 (alternating: mean 1, so Cov(x) =
 * Sigma), z_j skewed (0.9 (E - 1), E ~ Exp(1), centred). A draw takes a row uniformly and a fresh
 * g~; r = x^T e - z_j, g = r x, clip(g) = g min(1, C / |g|), C = c sqrt(d). Then, exactly under
 * the model (Stein's lemma in u for the first; |clip g|^2 = min(r^2 |x|^2, C^2) for the second):
 *   E[e^T clip(g)] / (e^T Sigma e) = mu,   E[|clip(g)|^2] / d = E min(a r^2, c^2) = 2 nu P. */
enum { MC_D = 50, MC_K = 4, MC_ROWS = 2000 };

static void monte_carlo_on_elliptical_rows_matches(void **state) {
  static const double lv[MC_K] = {0.9, 0.35, 0.6, 0.15};
  static const double edir[MC_K] = {0.5, -1.1, 0.8, 1.7};
  const uint64_t seed = 20261128;
  const size_t M = 1000000;
  const double R = 0.35, c = 0.9, C = c * sqrt((double)MC_D);
  double a[MC_ROWS], z[MC_ROWS], e[MC_K], x[MC_D];
  double sx = 0.0, sxx = 0.0, sy = 0.0, syy = 0.0, sz = 0.0;
  dpd_rng rng;
  (void)state;
  dpd_rng_init(&rng, seed, 0);
  for (size_t j = 0; j < MC_ROWS; j++) {
    a[j] = j % 2 == 0 ? 0.3 : 1.7;
    z[j] = 0.9 * (-log1p(-dpd_rng_uniform(&rng)) - 1.0);
    sz += z[j];
  }
  for (size_t j = 0; j < MC_ROWS; j++) {
    z[j] -= sz / MC_ROWS;
  }
  { /* e on the K coordinates with e^T Sigma e = 2R */
    double q = 0.0;
    for (size_t k = 0; k < MC_K; k++) {
      q += lv[k] * edir[k] * edir[k];
    }
    for (size_t k = 0; k < MC_K; k++) {
      e[k] = edir[k] * sqrt(2.0 * R / q);
    }
  }
  dpd_rng_init(&rng, seed, 1);
  for (size_t i = 0; i < M; i++) {
    size_t j = (size_t)(dpd_rng_uniform(&rng) * MC_ROWS);
    double v2 = 0.0, w2 = 0.0, u = 0.0, x2 = 0.0;
    j = j < MC_ROWS ? j : MC_ROWS - 1;
    for (size_t k = 0; k < MC_K; k++) {
      x[k] = sqrt(lv[k]) * dpd_rng_gaussian(&rng);
      v2 += x[k] * x[k];
      u += e[k] * x[k];
    }
    assert_true(v2 < MC_D); /* P(|v|^2 >= d) < 1e-10: never met with this seed */
    for (size_t k = MC_K; k < MC_D; k++) {
      x[k] = dpd_rng_gaussian(&rng);
      w2 += x[k] * x[k];
    }
    const double wscale = sqrt((MC_D - v2) / w2), sa = sqrt(a[j]);
    for (size_t k = 0; k < MC_D; k++) {
      x[k] *= (k < MC_K ? 1.0 : wscale) * sa;
      x2 += x[k] * x[k];
    }
    const double r = sa * u - z[j]; /* x^T e - z_j */
    const double gnorm = fabs(r) * sqrt(x2), f = gnorm > C ? C / gnorm : 1.0;
    const double X = f * r * sa * u / (2.0 * R); /* e^T clip(g) / (e^T Sigma e) */
    const double Y = f * f * r * r * x2 / MC_D;  /* |clip(g)|^2 / d */
    sx += X;
    sxx += X * X;
    sy += Y;
    syy += Y * Y;
  }
  const double mx = sx / M, my = sy / M;
  const double se_x = sqrt((sxx / M - mx * mx) / (M - 1)),
               se_y = sqrt((syy / M - my * my) / (M - 1));
  const double zeta2 = mean_sq(z, MC_ROWS), P = R + 0.5 * zeta2;
  dpd__lrdata_factors_ctx ctx = {a, z, MC_ROWS, c, zeta2, 1};
  factors4 f = eval_data(&ctx, R);
  double mu_g, nu_g;
  dpd_clip_factors_eval(c, P, &mu_g, &nu_g, NULL, NULL);
  const double gap_mu = (mx - f.mu) / se_x, gap_n = (my - 2.0 * f.nu * P) / se_y;
  const double gauss_mu = (mx - mu_g) / se_x, gauss_n = (my - 2.0 * nu_g * P) / se_y;
  print_message("MC (seed %llu, %zu draws): mu %.6f +- %.6f (data %.6f: %+.2f SE; Gaussian %.6f: "
                "%+.1f SE); 2 nu P %.6f +- %.6f (data %.6f: %+.2f SE; Gaussian %.6f: %+.1f SE)\n",
                (unsigned long long)seed, M, mx, se_x, f.mu, gap_mu, mu_g, gauss_mu, my, se_y,
                2.0 * f.nu * P, gap_n, 2.0 * nu_g * P, gauss_n);
  assert_true(fabs(gap_mu) < 4.0);
  assert_true(fabs(gap_n) < 4.0);
  assert_true(fabs(gauss_mu) > 10.0);
  assert_true(fabs(gauss_n) > 10.0);
}

/* ---- (d) The ODE with caller-supplied factors ---------------------------------------------- */

typedef struct {
  double c, half_zeta2;
} gauss_user;

/* The published closed forms, as the solver evaluates them by default (P = R + zeta^2/2). */
static int gauss_factors(void *user, double c, double R, double *mu, double *nu, double *dmu,
                         double *dnu) {
  const gauss_user *g = user;
  dpd_clip_factors_eval(c, R + g->half_zeta2, mu, nu, dmu, dnu);
  return 0;
}

static int failing_factors(void *user, double c, double R, double *mu, double *nu, double *dmu,
                           double *dnu) {
  (void)user;
  (void)c;
  (void)dmu;
  (void)dnu;
  if (R < 0.3) { /* fails once the risk has come down from R(0) */
    return DPD_EMAXITER;
  }
  *mu = 1.0;
  *nu = 1.0;
  return 0;
}

static dpd_linreg_problem *make_levels(size_t d) {
  static const double values[3] = {3.1, 1.0, 0.21};
  static const size_t mult[3] = {5, 15, 20};
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = d;
  cfg.spectrum = DPD_SPECTRUM_LEVELS;
  cfg.values = values;
  cfg.mult = mult;
  cfg.nvalues = 3;
  cfg.theta_norm = 1.21;
  cfg.seed = 5;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static dpd_schedule *make_schedule(dpd_schedule_kind kind, double eta0) {
  dpd_schedule_config cfg = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  cfg.kind = kind;
  cfg.eta0 = eta0;
  assert_int_equal(dpd_schedule_create(&cfg, &s, NULL), DPD_OK);
  return s;
}

static dpd_ode_result *solve_ok(const dpd_linreg_problem *p, const dpd_schedule *s,
                                const dpd_ode_config *cfg) {
  dpd_ode_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int status = dpd_ode_solve(p, s, cfg, &res, &err);
  if (status != DPD_OK) {
    print_error("dpd_ode_solve: %s: %s\n", dpd_status_str(status), err.reason);
  }
  assert_int_equal(status, DPD_OK);
  assert_non_null(res);
  return res;
}

static void gaussian_factors_function_reproduces_the_default_bit_for_bit(void **state) {
  static const dpd_schedule_kind kinds[] = {DPD_SCHEDULE_CONST, DPD_SCHEDULE_SQRT};
  static const struct {
    dpd_ode_method method;
    dpd_ode_linsol linsol;
  } solvers[] = {{DPD_ODE_BDF, DPD_ODE_LINSOL_SM},
                 {DPD_ODE_BDF, DPD_ODE_LINSOL_SPGMR},
                 {DPD_ODE_ADAMS, DPD_ODE_LINSOL_SM}};
  dpd_linreg_problem *p = make_levels(40);
  (void)state;
  for (size_t ik = 0; ik < 2; ik++) {
    dpd_schedule *s = make_schedule(kinds[ik], 0.9);
    for (size_t is = 0; is < sizeof solvers / sizeof *solvers; is++) {
      dpd_ode_config cfg = dpd_ode_config_default();
      cfg.gamma = 0.5;
      cfg.zeta = 0.63;
      cfg.c = 0.8;
      cfg.rho = 1.7;
      cfg.grid = 41;
      cfg.bounds = 1;
      cfg.method = solvers[is].method;
      cfg.linsol = solvers[is].linsol;
      dpd_ode_result *ref = solve_ok(p, s, &cfg);
      gauss_user g = {cfg.c, 0.5 * cfg.zeta * cfg.zeta};
      cfg.factors = gauss_factors;
      cfg.factors_user = &g;
      dpd_ode_result *got = solve_ok(p, s, &cfg);
      assert_memory_equal(ref->risk, got->risk, cfg.grid * sizeof *ref->risk);
      assert_memory_equal(ref->lower, got->lower, cfg.grid * sizeof *ref->lower);
      assert_memory_equal(ref->upper, got->upper, cfg.grid * sizeof *ref->upper);
      assert_true(ref->final_risk == got->final_risk);
      assert_int_equal(ref->steps, got->steps);
      /* the pure evaluations too */
      {
        double S[3], f0[3], f1[3], v[3] = {0.3, -1.2, 0.7}, j0[3], j1[3];
        for (size_t k = 0; k < p->ngroups; k++) {
          S[k] = 0.7 * p->group_S0[k];
        }
        assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, 0.41, S, f1), 0);
        assert_int_equal(dpd_ode_jtimes_eval(p, s, &cfg, 0.41, S, v, j1), 0);
        cfg.factors = NULL;
        assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, 0.41, S, f0), 0);
        assert_int_equal(dpd_ode_jtimes_eval(p, s, &cfg, 0.41, S, v, j0), 0);
        assert_memory_equal(f0, f1, sizeof f0);
        assert_memory_equal(j0, j1, sizeof j0);
      }
      dpd_ode_result_free(ref);
      dpd_ode_result_free(got);
    }
    dpd_schedule_free(s);
  }
  dpd_linreg_problem_free(p);
}

/* Gaussian rows (a = 1, z NULL) through dpd__lrdata_factors: the same factors to 1e-13, the same
 * risk to the solver's tolerance. */
static void gaussian_rows_reproduce_the_default_solve(void **state) {
  enum { N = 9000 };
  dpd_linreg_problem *p = make_levels(40);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 0.9);
  double *a = malloc(N * sizeof *a);
  (void)state;
  assert_non_null(a);
  for (size_t j = 0; j < N; j++) {
    a[j] = 1.0;
  }
  dpd_ode_config cfg = dpd_ode_config_default();
  cfg.gamma = 0.5;
  cfg.zeta = 0.63;
  cfg.c = 0.8;
  cfg.rho = 1.7;
  cfg.grid = 41;
  cfg.bounds = 1;
  dpd_ode_result *ref = solve_ok(p, s, &cfg);
  dpd__lrdata_factors_ctx ctx = {a, NULL, N, cfg.c, cfg.zeta * cfg.zeta, 1};
  cfg.factors = dpd__lrdata_factors;
  cfg.factors_user = &ctx;
  dpd_ode_result *got = solve_ok(p, s, &cfg);
  for (size_t k = 0; k < cfg.grid; k++) {
    assert_rel(got->risk[k], ref->risk[k], 1e-9);
    assert_rel(got->lower[k], ref->lower[k], 1e-9);
    assert_rel(got->upper[k], ref->upper[k], 1e-9);
  }
  assert_rel(got->final_risk, ref->final_risk, 1e-9);
  dpd_ode_result_free(ref);
  dpd_ode_result_free(got);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
  free(a);
}

/* Without clipping the data factors are mu = mean a = 1 and nu P = R E[a^2] + E[a z^2]/2: the
 * SGD-noise term gamma eta~^2 nu P is the default one of gamma' = gamma E[a^2] and
 * zeta'^2 = E[a z^2] / E[a^2] (rho = inf: gamma enters nowhere else). */
static void unclipped_data_factors_rescale_the_sgd_noise(void **state) {
  enum { N = 5000 };
  dpd_linreg_problem *p = make_levels(40);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 1.1);
  double *a = malloc(N * sizeof *a), *z = malloc(N * sizeof *z), ea2 = 0.0, eaz2 = 0.0;
  (void)state;
  assert_non_null(a);
  assert_non_null(z);
  skewed_rows(N, 99, a, z);
  for (size_t j = 0; j < N; j++) {
    ea2 += a[j] * a[j] / N;
    eaz2 += a[j] * z[j] * z[j] / N;
  }
  dpd__lrdata_factors_ctx ctx = {a, z, N, INFINITY, mean_sq(z, N), 1};
  dpd_ode_config cfg = dpd_ode_config_default();
  cfg.gamma = 0.4;
  cfg.zeta = sqrt(ctx.zeta2); /* the ODE's P = R + zeta^2/2 is the factors' */
  cfg.grid = 21;
  cfg.factors = dpd__lrdata_factors;
  cfg.factors_user = &ctx;
  dpd_ode_result *got = solve_ok(p, s, &cfg);
  dpd_ode_config ref_cfg = dpd_ode_config_default();
  ref_cfg.gamma = cfg.gamma * ea2;
  ref_cfg.zeta = sqrt(eaz2 / ea2);
  ref_cfg.grid = 21;
  dpd_ode_result *ref = solve_ok(p, s, &ref_cfg);
  for (size_t k = 0; k < cfg.grid; k++) {
    assert_rel(got->risk[k], ref->risk[k], 1e-8);
  }
  {
    dpd_ode_config gauss_cfg = cfg;
    gauss_cfg.factors = NULL;
    dpd_ode_result *gauss = solve_ok(p, s, &gauss_cfg);
    print_message("unclipped: E[a^2] = %.4f, R(1-) = %.6f with the data factors, %.6f with the "
                  "Gaussian ones of the same second moments\n",
                  ea2, got->risk[cfg.grid - 1], gauss->risk[cfg.grid - 1]);
    dpd_ode_result_free(gauss);
  }
  dpd_ode_result_free(ref);
  dpd_ode_result_free(got);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
  free(a);
  free(z);
}

/* The Jacobian-vector product with data factors (their derivatives in R) against central
 * differences of the right-hand side. */
static void jacobian_with_data_factors_matches_finite_differences(void **state) {
  enum { N = 4000 };
  dpd_linreg_problem *p = make_levels(40);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_SQRT, 0.9);
  double *a = malloc(N * sizeof *a), *z = malloc(N * sizeof *z);
  (void)state;
  assert_non_null(a);
  assert_non_null(z);
  skewed_rows(N, 31, a, z);
  for (int withz = 0; withz < 2; withz++) {
    dpd__lrdata_factors_ctx ctx = {a, withz ? z : NULL, N, 0.7, mean_sq(z, N), 1};
    dpd_ode_config cfg = dpd_ode_config_default();
    cfg.gamma = 0.5;
    cfg.zeta = sqrt(ctx.zeta2);
    cfg.c = ctx.c;
    cfg.rho = 2.3;
    cfg.factors = dpd__lrdata_factors;
    cfg.factors_user = &ctx;
    double S[3], Sp[3], Sm[3], fp[3], fm[3], Jv[3], v[3] = {0.31, -0.87, 1.4};
    const double h = 1e-6;
    for (size_t k = 0; k < 3; k++) {
      S[k] = 0.61 * p->group_S0[k];
      Sp[k] = S[k] + h * v[k];
      Sm[k] = S[k] - h * v[k];
    }
    assert_int_equal(dpd_ode_jtimes_eval(p, s, &cfg, 0.37, S, v, Jv), 0);
    assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, 0.37, Sp, fp), 0);
    assert_int_equal(dpd_ode_rhs_eval(p, s, &cfg, 0.37, Sm, fm), 0);
    for (size_t k = 0; k < 3; k++) {
      assert_rel(Jv[k], (fp[k] - fm[k]) / (2.0 * h), 1e-6);
    }
  }
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
  free(a);
  free(z);
}

static void expect_refused(const dpd_linreg_problem *p, const dpd_schedule *s,
                           const dpd_ode_config *cfg, int want, const char *needle) {
  dpd_ode_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int status = dpd_ode_solve(p, s, cfg, &res, &err);
  if (status != want || strstr(err.reason, needle) == NULL) {
    print_error("status %d (want %d), reason: %s (want it to name %s)\n", status, want, err.reason,
                needle);
    fail();
  }
  assert_null(res);
}

static void factors_with_volterra_frozen_or_finite_size_are_refused(void **state) {
  dpd_linreg_problem *p = make_levels(40);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.9);
  gauss_user g = {INFINITY, 0.5 * 0.63 * 0.63};
  dpd_ode_config cfg = dpd_ode_config_default();
  (void)state;
  cfg.zeta = 0.63;
  cfg.factors = gauss_factors;
  cfg.factors_user = &g;
  cfg.method = DPD_ODE_VOLTERRA;
  expect_refused(p, s, &cfg, DPD_EINVAL, "'factors'");
  {
    dpd_ode_result *res = NULL;
    dpd_err err;
    dpd_err_reset(&err);
    dpd_volterra_config vc = dpd_volterra_config_default();
    cfg.method = DPD_ODE_BDF; /* the Volterra form solves whatever the method says */
    assert_int_equal(dpd_volterra_solve(p, s, &cfg, &vc, &res, &err), DPD_EINVAL);
    assert_non_null(strstr(err.reason, "'factors'"));
    assert_null(res);
  }
  cfg.method = DPD_ODE_BDF;
  cfg.mu_frozen = 0.7;
  expect_refused(p, s, &cfg, DPD_EINVAL, "'factors'");
  cfg.mu_frozen = NAN;
  cfg.finite_size = DPD_FINITE_ON;
  expect_refused(p, s, &cfg, DPD_EINVAL, "'factors'");
  /* a failing factors function: its status, with a reason naming 'factors' */
  cfg.finite_size = DPD_FINITE_OFF;
  cfg.factors = failing_factors;
  cfg.c = 1.0;
  expect_refused(p, s, &cfg, DPD_EMAXITER, "'factors'");
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* finite_size = auto does not apply with caller-supplied factors (they are the law of the rows
 * already), where it would without. */
static void finite_size_auto_steps_aside_for_factors(void **state) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  gauss_user g = {1.0, 0.125};
  (void)state;
  pc.d = 40;
  pc.spectrum = DPD_SPECTRUM_POWERLAW;
  pc.alpha = 1.5;
  pc.seed = 3;
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, NULL), DPD_OK);
  assert_int_equal(dpd_linreg_finite_size_matters(p), 1);
  dpd_ode_config cfg = dpd_ode_config_default();
  cfg.finite_size = DPD_FINITE_AUTO;
  assert_int_equal(dpd_ode_finite_size_applies(p, &cfg), 1);
  cfg.factors = gauss_factors;
  cfg.factors_user = &g;
  assert_int_equal(dpd_ode_finite_size_applies(p, &cfg), 0);
  dpd_linreg_problem_free(p);
}

int main(void) {
  gsl_set_error_handler_off();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gaussian_rows_give_the_published_closed_forms),
      cmocka_unit_test(limits_are_exact),
      cmocka_unit_test(thread_count_does_not_change_a_bit),
      cmocka_unit_test(derivatives_match_finite_differences),
      cmocka_unit_test(narrow_window_seam_is_continuous),
      cmocka_unit_test(monte_carlo_on_elliptical_rows_matches),
      cmocka_unit_test(gaussian_factors_function_reproduces_the_default_bit_for_bit),
      cmocka_unit_test(gaussian_rows_reproduce_the_default_solve),
      cmocka_unit_test(unclipped_data_factors_rescale_the_sgd_noise),
      cmocka_unit_test(jacobian_with_data_factors_matches_finite_differences),
      cmocka_unit_test(factors_with_volterra_frozen_or_finite_size_are_refused),
      cmocka_unit_test(finite_size_auto_steps_aside_for_factors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
