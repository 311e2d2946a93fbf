/* Tests of the SDE integrator: the Euler-Maruyama step (sde_impl.h) and dpd_linreg_sde_run.
 * SPDX-License-Identifier: MIT
 *
 * Convergence orders of the stepper (Kloeden & Platen 1992, Thm 10.2.2 and Thm 14.1.5;
 * Higham, SIAM Review 43 (2001) 525, secs. 6-7), measured on the very code the integrator
 * runs, with the paths of all replicates batched into one long diagonal system:
 *  - strong order 1/2 on geometric Brownian motion dX = a X dt + b X dW (multiplicative noise;
 *    with additive noise Euler-Maruyama coincides with Milstein and has strong order 1), exact
 *    X(T) = X0 exp((a - b^2/2) T + b W(T)) driven by the same Brownian path;
 *  - weak order 1 on the Ornstein-Uhlenbeck process dX = -A X dt + B dW through E[X(T)^2],
 *    with the exact solution sampled on the same path.
 * Every level h = 2^-4 .. 2^-9 uses the same paths: the Brownian increments are drawn on the
 * finest level and summed for the coarser ones.
 *
 * The integrator: bit-identical results for any thread count, the validation errors, the exact
 * mean recursion of its Euler-Maruyama steps when nothing is clipped (a non-divisible dt and
 * the release noise included), agreement of its mean with the risk ODE without clipping or
 * privacy, and the divergence report. Seeds are fixed and printed on failure. */
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/dpd.h"
#include "linreg/sde_impl.h"

#define SEED UINT64_C(2385)

/* ---- Helpers --------------------------------------------------------------------------------- */

/* Least-squares slope of log(err) against log(h). */
static double loglog_slope(const double *h, const double *err, size_t count) {
  double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  for (size_t l = 0; l < count; l++) {
    double x = log(h[l]), y = log(err[l]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  double m = (double)count;
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

static double *alloc_doubles(size_t count) {
  double *p = malloc(count * sizeof *p);
  assert_non_null(p);
  return p;
}

/* Levels of the order tests: h_l = 2^-(4 + l), l = 0..LEVELS-1; the finest has FINE steps. */
enum { LEVELS = 6, COMPONENTS = 3, FINE = 1 << (4 + LEVELS - 1) };

/* ---- The Euler-Maruyama step ----------------------------------------------------------------- */

static void em_step_applies_the_documented_formula(void **state) {
  (void)state;
  const double a[3] = {0.713, -1.29, 2.385};
  const double b[3] = {0.417, 1.733, 0.0821};
  const double z[3] = {-1.127, 0.391, 2.017};
  const double v[3] = {0.583, -0.267, -1.461};
  const double x0[3] = {1.37, -0.442, 0.0913};
  const dpd__sde_em_coef coefs[4] = {{.h = 0.0173, .k = -0.83, .q = 0.61, .m = 0.0, .p = 0.0},
                                     {.h = 0.0173, .k = -0.83, .q = 0.61, .m = 0.0, .p = 0.29},
                                     {.h = 0.0311, .k = 1.21, .q = 0.0, .m = 1.0, .p = 0.0},
                                     {.h = 0.0311, .k = 1.21, .q = 0.37, .m = 0.77, .p = 0.29}};
  for (size_t c = 0; c < 4; c++) {
    const dpd__sde_em_coef *co = &coefs[c];
    double x[3], want[3], quad = 0.0;
    memcpy(x, x0, sizeof x);
    for (size_t i = 0; i < 3; i++) {
      want[i] = x0[i] + co->k * a[i] * x0[i] * co->h +
                b[i] * (co->q + co->m * x0[i]) * sqrt(co->h) * z[i] + co->p * sqrt(co->h) * v[i];
      quad += 0.5 * a[i] * want[i] * want[i];
    }
    double got = dpd__sde_em_step(3, a, b, co, z, v, x);
    for (size_t i = 0; i < 3; i++) {
      assert_rel(x[i], want[i], 1e-14);
    }
    assert_rel(got, quad, 1e-13);
  }
  /* v = NULL is allowed when p = 0. */
  double x[3];
  memcpy(x, x0, sizeof x);
  double got = dpd__sde_em_step(3, a, b, &coefs[0], z, NULL, x);
  assert_true(isfinite(got));
}

/* Strong order 1/2 on geometric Brownian motion. The strong error at level h is the mean of
 * |X_h(T) - X(T)| over PATHS paths (per component). Its Monte-Carlo error relative to its value
 * is cv / sqrt(PATHS) with cv (the coefficient of variation of |X_h - X|) about 1-1.5 here, so
 * 2^15 paths give < 1% at every h, far below the 2^{5/2} = 5.7-fold change of the error over
 * the fitted range: the fitted slope moves by less than 0.01. The levels share their paths, so
 * the errors at different h are positively correlated and the slope is steadier still. The
 * test checks SE / error < 0.03 at the finest level. */
static void em_has_strong_order_one_half_on_geometric_brownian_motion(void **state) {
  (void)state;
  enum { PATHS = 1 << 15 };
  const double x0[COMPONENTS] = {1.13, 0.87, 1.41};
  const double drift[COMPONENTS] = {0.37, -0.52, 0.21};
  const double vol[COMPONENTS] = {0.63, 0.91, 0.48};
  const double T = 1.0, hf = T / FINE;
  const size_t dim = (size_t)PATHS * COMPONENTS;
  double *a = alloc_doubles(dim), *b = alloc_doubles(dim), *dw = alloc_doubles(dim);
  double *wsum = alloc_doubles(dim), *z = alloc_doubles(dim);
  double *x[LEVELS], *acc[LEVELS];
  double h[LEVELS], err[LEVELS][COMPONENTS + 1], se[LEVELS][COMPONENTS + 1];
  dpd_rng rng;

  for (size_t i = 0; i < dim; i++) {
    a[i] = drift[i % COMPONENTS];
    b[i] = vol[i % COMPONENTS];
    wsum[i] = 0.0;
  }
  for (size_t l = 0; l < LEVELS; l++) {
    x[l] = alloc_doubles(dim);
    acc[l] = alloc_doubles(dim);
    h[l] = ldexp(1.0, -(int)(4 + l));
    for (size_t i = 0; i < dim; i++) {
      x[l][i] = x0[i % COMPONENTS];
      acc[l][i] = 0.0;
    }
  }
  dpd_rng_init(&rng, SEED, 1);
  for (size_t k = 0; k < FINE; k++) {
    dpd_rng_gaussian_fill(&rng, dw, dim);
    for (size_t i = 0; i < dim; i++) {
      dw[i] *= sqrt(hf);
      wsum[i] += dw[i];
    }
    for (size_t l = 0; l < LEVELS; l++) {
      const size_t ratio = (size_t)1 << (LEVELS - 1 - l); /* fine steps per step of level l */
      for (size_t i = 0; i < dim; i++) {
        acc[l][i] += dw[i];
      }
      if ((k + 1) % ratio == 0) {
        const dpd__sde_em_coef coef = {.h = h[l], .k = 1.0, .q = 0.0, .m = 1.0, .p = 0.0};
        for (size_t i = 0; i < dim; i++) {
          z[i] = acc[l][i] / sqrt(h[l]);
          acc[l][i] = 0.0;
        }
        (void)dpd__sde_em_step(dim, a, b, &coef, z, NULL, x[l]);
      }
    }
  }
  for (size_t l = 0; l < LEVELS; l++) {
    for (size_t c = 0; c <= COMPONENTS; c++) {
      double s = 0.0, ss = 0.0;
      for (size_t p = 0; p < PATHS; p++) {
        double e = 0.0;
        for (size_t cc = 0; cc < COMPONENTS; cc++) {
          if (c == COMPONENTS || cc == c) {
            size_t i = p * COMPONENTS + cc;
            double exact =
                x0[cc] * exp((drift[cc] - 0.5 * vol[cc] * vol[cc]) * T + vol[cc] * wsum[i]);
            e += fabs(x[l][i] - exact);
          }
        }
        s += e;
        ss += e * e;
      }
      double mean = s / PATHS;
      err[l][c] = mean;
      se[l][c] = sqrt((ss / PATHS - mean * mean) / (PATHS - 1));
    }
  }
  for (size_t c = 0; c <= COMPONENTS; c++) {
    double e[LEVELS];
    for (size_t l = 0; l < LEVELS; l++) {
      e[l] = err[l][c];
    }
    double slope = loglog_slope(h, e, LEVELS);
    print_message("GBM %s: strong errors", c == COMPONENTS ? "sum of components" : "component");
    if (c < COMPONENTS) {
      print_message(" %zu (a = %.2f, b = %.2f)", c, drift[c], vol[c]);
    }
    for (size_t l = 0; l < LEVELS; l++) {
      print_message(" %.3e", e[l]);
    }
    print_message("; measured strong order %.3f (SE/err at h = 2^-9: %.4f)\n", slope,
                  se[LEVELS - 1][c] / err[LEVELS - 1][c]);
    assert_true(se[LEVELS - 1][c] < 0.03 * err[LEVELS - 1][c]);
    if (!(slope >= 0.4 && slope <= 0.6)) {
      print_error("strong order %.3f outside [0.4, 0.6] (seed %llu)\n", slope,
                  (unsigned long long)SEED);
      fail();
    }
  }
  for (size_t l = 0; l < LEVELS; l++) {
    free(x[l]);
    free(acc[l]);
  }
  free(a);
  free(b);
  free(dw);
  free(wsum);
  free(z);
}

/* Weak order 1 on a three-component OU process, through E[X(T)^2]. The exact solution is sampled
 * on the same Brownian path: over each fine step the pair (dW, I), I = int e^{-A(t_{k+1}-s)} dW_s,
 * is jointly Gaussian with Var dW = hf, Cov = (1 - e^{-A hf}) / A, Var I = (1 - e^{-2 A hf})/(2A),
 * and X(t_{k+1}) = e^{-A hf} X(t_k) + B I. The weak error E[X_h(T)^2] - E[X(T)^2] is estimated
 * as the mean of the coupled differences X_h(T)^2 - X(T)^2 (unbiased). With additive noise the
 * pathwise error X_h - X is O(h) (strong order 1), so the standard error of that mean is
 * O(h / sqrt(PATHS)) while the weak error is c1 h: their ratio does not shrink with h, and
 * 2^15 paths make it a few per cent at every level (checked: SE < err / 10 at h = 2^-9).
 * The measured errors must also agree, within 4 SE, with the exact weak error of the scheme,
 * known in closed form for this linear SDE: m_{k+1} = (1 - A h)^2 m_k + B^2 h for m = E X^2. */
static void em_has_weak_order_one_on_ornstein_uhlenbeck(void **state) {
  (void)state;
  enum { PATHS = 1 << 15 };
  const double x0[COMPONENTS] = {1.3, -0.8, 0.45};
  const double A[COMPONENTS] = {0.7, 1.9, 3.1};
  const double B[COMPONENTS] = {0.6, 1.1, 0.8};
  const double T = 1.0, hf = T / FINE;
  const size_t dim = (size_t)PATHS * COMPONENTS;
  double *a = alloc_doubles(dim), *b = alloc_doubles(dim), *g = alloc_doubles(2 * dim);
  double *xe = alloc_doubles(dim), *z = alloc_doubles(dim);
  double *x[LEVELS], *acc[LEVELS];
  double h[LEVELS], decay[COMPONENTS], cw[COMPONENTS], ci[COMPONENTS];
  dpd_rng rng;

  for (size_t c = 0; c < COMPONENTS; c++) {
    double cov = -expm1(-A[c] * hf) / A[c], var_i = -expm1(-2.0 * A[c] * hf) / (2.0 * A[c]);
    decay[c] = exp(-A[c] * hf);
    cw[c] = cov / hf;                     /* I = cw dW + ci zeta */
    ci[c] = sqrt(var_i - cov * cov / hf); /* conditional sd of I given dW */
  }
  for (size_t i = 0; i < dim; i++) {
    a[i] = A[i % COMPONENTS];
    b[i] = B[i % COMPONENTS];
    xe[i] = x0[i % COMPONENTS];
  }
  for (size_t l = 0; l < LEVELS; l++) {
    x[l] = alloc_doubles(dim);
    acc[l] = alloc_doubles(dim);
    h[l] = ldexp(1.0, -(int)(4 + l));
    for (size_t i = 0; i < dim; i++) {
      x[l][i] = x0[i % COMPONENTS];
      acc[l][i] = 0.0;
    }
  }
  dpd_rng_init(&rng, SEED, 2);
  for (size_t k = 0; k < FINE; k++) {
    dpd_rng_gaussian_fill(&rng, g, 2 * dim);
    for (size_t i = 0; i < dim; i++) {
      size_t c = i % COMPONENTS;
      double dw = sqrt(hf) * g[i];
      xe[i] = decay[c] * xe[i] + B[c] * (cw[c] * dw + ci[c] * g[dim + i]);
      g[i] = dw;
    }
    for (size_t l = 0; l < LEVELS; l++) {
      const size_t ratio = (size_t)1 << (LEVELS - 1 - l);
      for (size_t i = 0; i < dim; i++) {
        acc[l][i] += g[i];
      }
      if ((k + 1) % ratio == 0) {
        const dpd__sde_em_coef coef = {.h = h[l], .k = -1.0, .q = 1.0, .m = 0.0, .p = 0.0};
        for (size_t i = 0; i < dim; i++) {
          z[i] = acc[l][i] / sqrt(h[l]);
          acc[l][i] = 0.0;
        }
        (void)dpd__sde_em_step(dim, a, b, &coef, z, NULL, x[l]);
      }
    }
  }
  for (size_t c = 0; c < COMPONENTS; c++) {
    double exact =
        x0[c] * x0[c] * exp(-2.0 * A[c] * T) + B[c] * B[c] / (2.0 * A[c]) * -expm1(-2.0 * A[c] * T);
    double err[LEVELS], se[LEVELS], scheme[LEVELS];
    /* The exact sampler itself: its second moment against the closed form. */
    {
      double s = 0.0, ss = 0.0;
      for (size_t p = 0; p < PATHS; p++) {
        double v = xe[p * COMPONENTS + c] * xe[p * COMPONENTS + c];
        s += v;
        ss += v * v;
      }
      double mean = s / PATHS, sev = sqrt((ss / PATHS - mean * mean) / (PATHS - 1));
      print_message("OU component %zu (A = %.1f, B = %.1f): E X(T)^2 sampled %.5f +- %.5f, "
                    "exact %.5f\n",
                    c, A[c], B[c], mean, sev, exact);
      assert_true(fabs(mean - exact) <= 4.0 * sev);
    }
    for (size_t l = 0; l < LEVELS; l++) {
      double s = 0.0, ss = 0.0;
      for (size_t p = 0; p < PATHS; p++) {
        size_t i = p * COMPONENTS + c;
        double diff = x[l][i] * x[l][i] - xe[i] * xe[i];
        s += diff;
        ss += diff * diff;
      }
      double mean = s / PATHS;
      err[l] = mean;
      se[l] = sqrt((ss / PATHS - mean * mean) / (PATHS - 1));
      double m = x0[c] * x0[c], f = 1.0 - A[c] * h[l];
      for (long k = lround(T / h[l]); k > 0; k--) {
        m = f * f * m + B[c] * B[c] * h[l];
      }
      scheme[l] = m - exact;
    }
    double abs_err[LEVELS];
    print_message("OU component %zu: weak errors", c);
    for (size_t l = 0; l < LEVELS; l++) {
      abs_err[l] = fabs(err[l]);
      print_message(" %.3e(+-%.1e; scheme %.3e)", err[l], se[l], scheme[l]);
      if (!(fabs(err[l] - scheme[l]) <= 4.0 * se[l])) {
        print_error("level %zu: measured weak error %.4e, scheme's exact %.4e, SE %.2e\n", l,
                    err[l], scheme[l], se[l]);
        fail();
      }
    }
    double slope = loglog_slope(h, abs_err, LEVELS);
    print_message("; measured weak order %.3f (SE/err at h = 2^-9: %.3f)\n", slope,
                  se[LEVELS - 1] / abs_err[LEVELS - 1]);
    assert_true(se[LEVELS - 1] < 0.1 * abs_err[LEVELS - 1]);
    if (!(slope >= 0.85 && slope <= 1.15)) {
      print_error("weak order %.3f outside [0.85, 1.15] (seed %llu)\n", slope,
                  (unsigned long long)SEED);
      fail();
    }
  }
  for (size_t l = 0; l < LEVELS; l++) {
    free(x[l]);
    free(acc[l]);
  }
  free(a);
  free(b);
  free(g);
  free(xe);
  free(z);
}

/* ---- The H-DP-SGD integrator ----------------------------------------------------------------- */

typedef struct {
  dpd_linreg_problem *problem;
  dpd_schedule *schedule;
} fixture;

static void make(fixture *f, size_t d, dpd_spectrum_kind spectrum, dpd_schedule_kind kind,
                 double eta0) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  pc.d = d;
  pc.spectrum = spectrum;
  pc.alpha = 1.0;
  pc.seed = SEED;
  pc.theta_norm = 1.3;
  dpd_schedule_config sc = dpd_schedule_config_default();
  sc.kind = kind;
  sc.eta0 = eta0;
  sc.a = -0.3;      /* hyperbolic: increasing */
  sc.factor = 0.55; /* step: two drops, at t = 1/3 and 2/3 */
  sc.drops = 2;
  f->problem = NULL;
  f->schedule = NULL;
  assert_int_equal(dpd_linreg_problem_create(&pc, &f->problem, NULL), DPD_OK);
  assert_int_equal(dpd_schedule_create(&sc, &f->schedule, NULL), DPD_OK);
}

static void unmake(fixture *f) {
  dpd_linreg_problem_free(f->problem);
  dpd_schedule_free(f->schedule);
}

static dpd_linreg_sim_result *run_ok(const fixture *f, const dpd_linreg_sde_config *cfg) {
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_linreg_sde_run(f->problem, f->schedule, cfg, &res, &err);
  if (st != DPD_OK) {
    print_error("dpd_linreg_sde_run: %s: %s (seed %llu)\n", dpd_status_str(st), err.reason,
                (unsigned long long)cfg->seed);
  }
  assert_int_equal(st, DPD_OK);
  assert_non_null(res);
  return res;
}

static void same_result(const dpd_linreg_sim_result *x, const dpd_linreg_sim_result *y) {
  size_t grid = x->grid, seeds = x->seeds;
  assert_int_equal(grid, y->grid);
  assert_int_equal(seeds, y->seeds);
  assert_memory_equal(x->risk_replicates, y->risk_replicates,
                      seeds * grid * sizeof *x->risk_replicates);
  assert_memory_equal(x->risk_mean, y->risk_mean, grid * sizeof *x->risk_mean);
  assert_memory_equal(x->risk_se, y->risk_se, grid * sizeof *x->risk_se);
  assert_memory_equal(x->clip_fraction, y->clip_fraction, grid * sizeof *x->clip_fraction);
  assert_memory_equal(&x->before_release, &y->before_release, sizeof x->before_release);
  assert_memory_equal(&x->before_release_se, &y->before_release_se, sizeof x->before_release_se);
  assert_memory_equal(&x->clip_fraction_total, &y->clip_fraction_total,
                      sizeof x->clip_fraction_total);
  assert_memory_equal(x->clip_replicates, y->clip_replicates,
                      seeds * grid * sizeof *x->clip_replicates);
  assert_memory_equal(x->clip_total_replicates, y->clip_total_replicates,
                      seeds * sizeof *x->clip_total_replicates);
  assert_memory_equal(x->before_release_replicates, y->before_release_replicates,
                      seeds * sizeof *x->before_release_replicates);
  assert_memory_equal(x->final_replicates, y->final_replicates,
                      seeds * sizeof *x->final_replicates);
}

/* The per-replicate values average to the reported means (equal to rounding). */
static void replicates_average_to_the_means(const dpd_linreg_sim_result *x) {
  double before = 0.0, clip = 0.0;
  for (size_t r = 0; r < x->seeds; r++) {
    before += x->before_release_replicates[r];
    clip += x->clip_total_replicates[r];
  }
  assert_rel(before / (double)x->seeds, x->before_release, 1e-13);
  assert_rel(clip / (double)x->seeds, x->clip_fraction_total, 1e-13);
  for (size_t j = 1; j < x->grid; j++) {
    double cj = 0.0;
    for (size_t r = 0; r < x->seeds; r++) {
      cj += x->clip_replicates[r * x->grid + j];
    }
    assert_rel(cj / (double)x->seeds, x->clip_fraction[j], 1e-12);
  }
}

static void results_are_bit_identical_for_any_thread_count(void **state) {
  (void)state;
  fixture f;
  make(&f, 45, DPD_SPECTRUM_POWERLAW, DPD_SCHEDULE_SQRT, 1.1);
  const double dts[] = {0.0, 0.0037};
  for (size_t k = 0; k < 2; k++) {
    dpd_linreg_sde_config cfg = dpd_linreg_sde_config_default();
    cfg.n = 300;
    cfg.seeds = 7;
    cfg.grid = 13;
    cfg.c = 0.7;
    cfg.rho = 1.3;
    cfg.seed = SEED;
    cfg.dt = dts[k];
    cfg.threads = 1;
    dpd_linreg_sim_result *ref = run_ok(&f, &cfg);
    assert_true(ref->clip_fraction_total > 0.05); /* clipping is active */
    replicates_average_to_the_means(ref);
    const int threads[] = {2, 3, 0};
    for (size_t i = 0; i < 3; i++) {
      cfg.threads = threads[i];
      dpd_linreg_sim_result *res = run_ok(&f, &cfg);
      same_result(ref, res);
      dpd_linreg_sim_result_free(res);
    }
    /* A replicate does not depend on how many others run: replicate 0 of a 3-replicate run. */
    cfg.seeds = 3;
    cfg.threads = 2;
    dpd_linreg_sim_result *res = run_ok(&f, &cfg);
    assert_memory_equal(res->risk_replicates, ref->risk_replicates,
                        cfg.grid * sizeof *res->risk_replicates);
    dpd_linreg_sim_result_free(res);
    dpd_linreg_sim_result_free(ref);
  }
  unmake(&f);
}

static void expect_einval(const fixture *f, const dpd_linreg_sde_config *cfg, const char *what) {
  dpd_linreg_sim_result dummy;
  dpd_linreg_sim_result *res = &dummy; /* must be reset to NULL */
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_linreg_sde_run(f->problem, f->schedule, cfg, &res, &err);
  if (st != DPD_EINVAL || strstr(err.reason, what) == NULL) {
    print_error("expected DPD_EINVAL naming \"%s\", got %s: %s\n", what, dpd_status_str(st),
                err.reason);
    fail();
  }
  assert_null(res);
}

static void invalid_configurations_are_rejected(void **state) {
  (void)state;
  fixture f, inc;
  make(&f, 20, DPD_SPECTRUM_ISO, DPD_SCHEDULE_SQRT, 1.0);
  make(&inc, 20, DPD_SPECTRUM_ISO, DPD_SCHEDULE_HYPERBOLIC, 1.0);
  dpd_linreg_sde_config base = dpd_linreg_sde_config_default();
  base.n = 50;
  base.seeds = 2;
  base.c = 0.8;
  base.rho = 1.0;
  dpd_linreg_sde_config cfg;

  const double bad_dt[] = {-0.1, 1.5, NAN, INFINITY, -INFINITY, 1e-300};
  for (size_t k = 0; k < sizeof bad_dt / sizeof *bad_dt; k++) {
    cfg = base;
    cfg.dt = bad_dt[k];
    expect_einval(&f, &cfg, "invalid value for 'dt'");
    expect_einval(&f, &cfg, "(allowed: 0 < dt <= 1");
  }
  cfg = base;
  cfg.n = 0;
  expect_einval(&f, &cfg, "'n'");
  cfg = base;
  cfg.seeds = 0;
  expect_einval(&f, &cfg, "'seeds'");
  cfg = base;
  cfg.grid = 1;
  expect_einval(&f, &cfg, "'grid'");
  cfg = base;
  cfg.zeta = -0.2;
  expect_einval(&f, &cfg, "'zeta'");
  cfg = base;
  cfg.c = 0.0;
  expect_einval(&f, &cfg, "'c'");
  cfg = base;
  cfg.rho = -1.0;
  expect_einval(&f, &cfg, "'rho'");
  cfg = base;
  cfg.c = INFINITY;
  expect_einval(&f, &cfg, "'c': inf");
  cfg = base;
  expect_einval(&inc, &cfg, "'schedule'");
  cfg = base;
  cfg.noise = DPD_NOISE_STUDENT;
  cfg.noise_nu = 1.5; /* Student-t needs nu > 2 */
  {
    dpd_linreg_sim_result *res = NULL;
    assert_int_equal(dpd_linreg_sde_run(f.problem, f.schedule, &cfg, &res, NULL), DPD_EINVAL);
    assert_null(res);
  }
  {
    dpd_linreg_sim_result *res = NULL;
    dpd_err err;
    assert_int_equal(dpd_linreg_sde_run(NULL, f.schedule, &base, &res, &err), DPD_EINVAL);
    assert_int_equal(dpd_linreg_sde_run(f.problem, NULL, &base, &res, &err), DPD_EINVAL);
    assert_int_equal(dpd_linreg_sde_run(f.problem, f.schedule, NULL, &res, &err), DPD_EINVAL);
    assert_int_equal(dpd_linreg_sde_run(f.problem, f.schedule, &base, NULL, &err), DPD_EINVAL);
  }
  /* Boundary values that are valid: one step (dt = 1), an increasing schedule without privacy. */
  cfg = base;
  cfg.dt = 1.0;
  dpd_linreg_sim_result *res = run_ok(&f, &cfg);
  dpd_linreg_sim_result_free(res);
  cfg = base;
  cfg.c = INFINITY;
  cfg.rho = INFINITY;
  res = run_ok(&inc, &cfg);
  dpd_linreg_sim_result_free(res);
  unmake(&f);
  unmake(&inc);
}

/* Step times of the documented grid: t_k = k dt for k < N, t_N = 1 (or k/m for dt = 1/m). */
static size_t step_times(const dpd_linreg_sde_config *cfg, double *tk, size_t cap) {
  size_t N;
  if (cfg->dt == 0.0) {
    N = cfg->n;
    assert_true(N + 1 <= cap);
    for (size_t k = 0; k <= N; k++) {
      tk[k] = (double)k / (double)N;
    }
    return N;
  }
  N = (size_t)ceil(1.0 / cfg->dt);
  assert_true(N + 1 <= cap);
  for (size_t k = 0; k < N; k++) {
    tk[k] = (double)k * cfg->dt;
  }
  tk[N] = 1.0;
  return N;
}

/* With c large enough that mu_c = nu_c = 1 to 1e-12 (kappa = c / (2 sqrt P) > 7; asserted below
 * with a factor-2 margin on P), the
 * Euler-Maruyama steps have an exact closed mean recursion per eigendirection (E over the
 * Gaussians of one step; P is linear in the m_i = E e_i^2):
 *   m_i <- (1 - eta~_k lambda_i h_k)^2 m_i + eta~_k^2 (2 P / n) lambda_i h_k + p_k^2 h_k,
 *   P = (1/2) sum_i lambda_i m_i + zeta^2/2,  p_k = (2 sqrt(d) / n) c sigma~(t_k),
 * and the release adds (2 C sigma_{n-1})^2 to every m_i (sigma_{n-1} = eta~((n-1)/n) / (n rho)),
 * i.e. 2 c^2 d^2 sigma_{n-1}^2 to the risk since sum lambda_i = d. The recorded means (at the step
 * nearest to each t_j) must agree within 4 SE, on a power-law spectrum with a non-divisible dt
 * (1/dt = 270.3, last step 0.001) and with dt = 1/n, and with four steps of 0.25. A drop of a
 * step schedule adds the impulse (2 sqrt(d) c / n)^2 (eta~(t-)^2 - eta~(t+)^2) / rho^2 to every
 * m_i after the step that reaches it (the simulator's sigma_k on the step before the drop). */
static void mean_risk_follows_the_exact_euler_maruyama_recursion(void **state) {
  (void)state;
  enum { D = 100, N = 400, CAP = 4096 };
  const dpd_spectrum_kind spectra[] = {DPD_SPECTRUM_POWERLAW, DPD_SPECTRUM_POWERLAW,
                                       DPD_SPECTRUM_ISO, DPD_SPECTRUM_POWERLAW};
  const dpd_schedule_kind kinds[] = {DPD_SCHEDULE_SQRT, DPD_SCHEDULE_CONST, DPD_SCHEDULE_SQRT,
                                     DPD_SCHEDULE_STEP};
  const double dts[] = {0.0037, 0.0, 0.25, 0.0037};
  double *tk = alloc_doubles(CAP), *ER = alloc_doubles(CAP), *m = alloc_doubles(D);
  double jump_t[4], jump_dsq[4];
  for (size_t s = 0; s < 4; s++) {
    fixture f;
    make(&f, D, spectra[s], kinds[s], 1.2);
    dpd_linreg_sde_config cfg = dpd_linreg_sde_config_default();
    cfg.n = N;
    cfg.zeta = 0.43;
    cfg.c = 30.0;
    cfg.rho = 10.0;
    cfg.seeds = 400;
    cfg.seed = SEED + s;
    cfg.grid = 11;
    cfg.dt = dts[s];
    dpd_linreg_sim_result *res = run_ok(&f, &cfg);
    const double *lambda = f.problem->lambda, c = cfg.c, rho = cfg.rho;
    const double pscale = 2.0 * sqrt((double)D) / N * c;
    size_t nsteps = step_times(&cfg, tk, CAP);
    size_t njumps = dpd_schedule_jumps(f.schedule, jump_t, jump_dsq, 4), next_jump = 0;
    double Pmax = 0.0;
    for (size_t i = 0; i < D; i++) {
      m[i] = f.problem->theta_star[i] * f.problem->theta_star[i];
    }
    ER[0] = dpd_linreg_initial_risk(f.problem);
    for (size_t k = 0; k < nsteps; k++) {
      double h = tk[k + 1] - tk[k], eta = dpd_schedule_eval(f.schedule, tk[k]);
      double sig2 = -dpd_schedule_dsq_eval(f.schedule, tk[k]) / (rho * rho);
      double P = ER[k] + 0.5 * cfg.zeta * cfg.zeta, R = 0.0;
      Pmax = fmax(Pmax, P);
      double impulse = 0.0; /* drops of a step schedule in (t_k, t_{k+1}] */
      for (; next_jump < njumps && jump_t[next_jump] <= tk[k + 1]; next_jump++) {
        impulse += pscale * pscale * jump_dsq[next_jump] / (rho * rho);
      }
      for (size_t i = 0; i < D; i++) {
        double g = 1.0 - eta * lambda[i] * h;
        m[i] = g * g * m[i] + eta * eta * (2.0 * P / N) * lambda[i] * h +
               pscale * pscale * sig2 * h + impulse;
        R += 0.5 * lambda[i] * m[i];
      }
      ER[k + 1] = R;
    }
    {
      double mu, nu; /* at twice the largest mean P: the replicates' P stay well below */
      dpd_clip_factors_eval(c, 2.0 * Pmax, &mu, &nu, NULL, NULL);
      assert_true(1.0 - mu < 1e-12 && 1.0 - nu < 1e-12);
    }
    double sigma_last = dpd_schedule_eval(f.schedule, (double)(N - 1) / N) / N / rho;
    double jump = 2.0 * c * c * (double)D * (double)D * sigma_last * sigma_last;
    double worst = 0.0;
    for (size_t j = 0; j < cfg.grid; j++) {
      double t = (double)j / (double)(cfg.grid - 1);
      size_t kj = 0;
      for (size_t k = 1; k <= nsteps; k++) {
        if (fabs(tk[k] - t) <= fabs(tk[kj] - t)) {
          kj = k;
        }
      }
      double want = ER[kj]; /* at t = 1 before release (the release convention of linreg.h) */
      double gap = fabs(res->risk_mean[j] - want);
      if (kj == 0) { /* the initial risk, the same in every replicate */
        assert_rel(res->risk_mean[j], want, 1e-14);
        assert_true(res->risk_se[j] == 0.0);
        continue;
      }
      worst = fmax(worst, gap / res->risk_se[j]);
      if (!(gap <= 4.0 * res->risk_se[j])) {
        print_error("case %zu, t = %.2f (step %zu): sde %.6g +- %.2g, recursion %.6g\n", s, t, kj,
                    res->risk_mean[j], res->risk_se[j], want);
        fail();
      }
      assert_true(res->clip_fraction[j] == 0.0);
    }
    double gap_b = fabs(res->before_release - ER[nsteps]);
    print_message("EM recursion, %s spectrum, %s, dt = %g (%zu steps): worst grid gap %.2f SE, "
                  "before release %.2f SE, jump %.4g\n",
                  f.problem->isotropic ? "iso" : "power-law", dpd_schedule_name(f.schedule), cfg.dt,
                  nsteps, worst, gap_b / res->before_release_se, jump);
    assert_true(gap_b <= 4.0 * res->before_release_se);
    assert_true(res->before_release == res->risk_mean[cfg.grid - 1]);
    assert_abs(res->final_risk, ER[nsteps] + jump, 4.0 * res->final_risk_se);
    assert_abs(res->release_jump, jump, 4.0 * res->release_jump_se);
    dpd_linreg_sim_result_free(res);
    unmake(&f);
  }
  free(tk);
  free(ER);
  free(m);
}

/* Without clipping or privacy the mean risk of the SDE solves the risk ODE exactly in continuous
 * time (the ODE is linear in D then); Euler-Maruyama with dt = 1/n adds a relative bias of order
 * eta~^2 / n (0.2% here), well under the 4 SE tolerance (SE ~ 1% of R with 64 replicates). */
static void mean_risk_matches_the_ode_without_clipping_or_privacy(void **state) {
  (void)state;
  enum { D = 200, N = 800, GRID = 21 };
  const dpd_schedule_kind kinds[] = {DPD_SCHEDULE_CONST, DPD_SCHEDULE_SQRT};
  for (size_t s = 0; s < 2; s++) {
    fixture f;
    make(&f, D, DPD_SPECTRUM_ISO, kinds[s], 1.3);
    dpd_linreg_sde_config cfg = dpd_linreg_sde_config_default();
    cfg.n = N;
    cfg.zeta = 0.5;
    cfg.seeds = 64;
    cfg.seed = SEED + 10 + s;
    cfg.grid = GRID;
    dpd_linreg_sim_result *res = run_ok(&f, &cfg);
    dpd_ode_config oc = dpd_ode_config_default();
    oc.gamma = (double)D / N;
    oc.zeta = cfg.zeta;
    oc.grid = GRID;
    dpd_ode_result *ode = NULL;
    assert_int_equal(dpd_ode_solve(f.problem, f.schedule, &oc, &ode, NULL), DPD_OK);
    double worst = 0.0;
    assert_rel(res->risk_mean[0], ode->risk[0], 1e-12);
    for (size_t j = 1; j < GRID; j++) {
      double gap = fabs(res->risk_mean[j] - ode->risk[j]);
      worst = fmax(worst, gap / res->risk_se[j]);
      if (!(gap <= 4.0 * res->risk_se[j])) {
        print_error("%s, t = %.2f: sde %.6g +- %.2g, ode %.6g (seed %llu)\n",
                    dpd_schedule_name(f.schedule), res->t[j], res->risk_mean[j], res->risk_se[j],
                    ode->risk[j], (unsigned long long)cfg.seed);
        fail();
      }
    }
    print_message("SDE mean vs ODE (%s, c = rho = inf): worst gap %.2f SE; final %.5g vs %.5g\n",
                  dpd_schedule_name(f.schedule), worst, res->final_risk, ode->final_risk);
    assert_true(res->final_risk == res->before_release); /* no release noise */
    assert_true(res->clip_fraction_total == 0.0);
    dpd_ode_result_free(ode);
    dpd_linreg_sim_result_free(res);
    unmake(&f);
  }
}

/* One replicate regenerated by hand from the documented stream rule (sde.c, "Random numbers")
 * and the documented step, for every label-noise law: two steps of dt = 0.5 and the release.
 * This pins the coefficients (mu_c, nu_c of the law at the left point, P = R + zeta^2/2, the
 * SGD and privacy noise scales), the order in which the Gaussians are used, and the release
 * noise sigma_{n-1} = eta~((n-1)/n) / (n rho). Agreement to rounding (1e-12). */
static void one_replicate_follows_the_documented_step_for_every_noise_law(void **state) {
  (void)state;
  enum { D = 37, N = 50 };
  const dpd_noise_law laws[] = {DPD_NOISE_GAUSSIAN, DPD_NOISE_LAPLACE, DPD_NOISE_RADEMACHER,
                                DPD_NOISE_STUDENT};
  fixture f;
  make(&f, D, DPD_SPECTRUM_POWERLAW, DPD_SCHEDULE_SQRT, 1.1);
  double e[D], buf[2 * D + 2];
  for (size_t l = 0; l < 4; l++) {
    dpd_linreg_sde_config cfg = dpd_linreg_sde_config_default();
    cfg.n = N;
    cfg.zeta = 0.37;
    cfg.noise = laws[l];
    cfg.noise_nu = 4.5;
    cfg.c = 0.7;
    cfg.rho = 1.3;
    cfg.seeds = 1;
    cfg.seed = SEED + l;
    cfg.grid = 2;
    cfg.dt = 0.5;
    dpd_linreg_sim_result *res = run_ok(&f, &cfg);
    const dpd_noise_spec noise = {.law = cfg.noise, .zeta = cfg.zeta, .nu = cfg.noise_nu};
    const double *lambda = f.problem->lambda, *sl = f.problem->sqrt_lambda;
    dpd_rng rng;
    dpd_rng_init(&rng, cfg.seed, 0);
    for (size_t i = 0; i < D; i++) {
      e[i] = -f.problem->theta_star[i];
    }
    double R = dpd_linreg_excess_risk(f.problem, e);
    for (size_t k = 0; k < 2; k++) {
      const double t = 0.5 * (double)k, h = 0.5;
      double mu, nu;
      assert_int_equal(dpd_clip_noise_factors_eval(&noise, cfg.c, R, &mu, &nu, NULL, NULL, NULL),
                       DPD_OK);
      const double eta = dpd_schedule_eval(f.schedule, t);
      const double P = R + 0.5 * cfg.zeta * cfg.zeta;
      const double sig2 = -dpd_schedule_dsq_eval(f.schedule, t) / (cfg.rho * cfg.rho);
      const double p = 2.0 * sqrt((double)D) / N * cfg.c * sqrt(sig2);
      assert_true(p > 0.0);
      dpd_rng_gaussian_fill(&rng, buf, 2 * D);
      for (size_t i = 0; i < D; i++) {
        e[i] += -eta * mu * lambda[i] * e[i] * h +
                eta * sqrt(2.0 * nu * P / N) * sl[i] * sqrt(h) * buf[i] + p * sqrt(h) * buf[D + i];
      }
      R = dpd_linreg_excess_risk(f.problem, e);
    }
    assert_rel(res->before_release, R, 1e-12);
    assert_rel(res->risk_replicates[1], R, 1e-12); /* t = 1 before release */
    const double sigma_last = dpd_schedule_eval(f.schedule, (double)(N - 1) / N) / N / cfg.rho;
    dpd_rng_gaussian_fill(&rng, buf, D + 1);
    for (size_t i = 0; i < D; i++) {
      e[i] += 2.0 * cfg.c * sqrt((double)D) * sigma_last * buf[i];
    }
    R = dpd_linreg_excess_risk(f.problem, e);
    assert_rel(res->final_risk, R, 1e-12);
    assert_rel(res->final_replicates[0], R, 1e-12);
    print_message("%s: replicate reproduced, released risk %.10g\n", dpd_noise_law_name(laws[l]),
                  R);
    dpd_linreg_sim_result_free(res);
  }
  unmake(&f);
}

static void divergence_is_reported_with_replicate_and_time(void **state) {
  (void)state;
  fixture f;
  make(&f, 64, DPD_SPECTRUM_ISO, DPD_SCHEDULE_CONST, 5000.0);
  dpd_linreg_sde_config cfg = dpd_linreg_sde_config_default();
  cfg.n = 1000;
  cfg.seeds = 3;
  cfg.seed = SEED;
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_linreg_sde_run(f.problem, f.schedule, &cfg, &res, &err), DPD_ENONFINITE);
  assert_null(res);
  print_message("divergence: %s\n", err.reason);
  assert_non_null(strstr(err.reason, "replicate 0"));
  assert_non_null(strstr(err.reason, "t = "));
  unmake(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(em_step_applies_the_documented_formula),
      cmocka_unit_test(em_has_strong_order_one_half_on_geometric_brownian_motion),
      cmocka_unit_test(em_has_weak_order_one_on_ornstein_uhlenbeck),
      cmocka_unit_test(results_are_bit_identical_for_any_thread_count),
      cmocka_unit_test(invalid_configurations_are_rejected),
      cmocka_unit_test(mean_risk_follows_the_exact_euler_maruyama_recursion),
      cmocka_unit_test(mean_risk_matches_the_ode_without_clipping_or_privacy),
      cmocka_unit_test(one_replicate_follows_the_documented_step_for_every_noise_law),
      cmocka_unit_test(divergence_is_reported_with_replicate_and_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
