/* Tests of the Volterra/FFT risk solver (dpd_volterra_*, docs/math.md §1.9) and of its FFT Toeplitz
 * engine.
 * SPDX-License-Identifier: MIT
 *
 * References used here:
 *  - isotropic spectrum, constant eta~, frozen mu, nu, constant sigma~^2: dR/dt = -A R + B
 *    with A = 2 eta mu - gamma eta^2 nu, B = gamma eta^2 nu zeta^2/2 + 2 c^2 gamma^2 sigma~^2,
 *    an exponential (docs/math.md §1.7, sanity limits, with the factors frozen);
 *  - every other spectrum: dpd_ode_solve (CVODE BDF) at rtol 1e-11;
 *  - the FFT engine: direct O(n^2) sums, and the properties FFTW's own verifier checks
 *    (linearity, impulse response, time shift; Funda Ergun, "Testing multivariate linear
 *    functions: overcoming the generator bottleneck", STOC 1995, as used by FFTW's
 *    libbench2/verify-lib.c) applied to the causal convolution;
 *  - phi_a, phi_b: their integrals by GSL QAG (Gauss-Kronrod 61). */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include <fftw3.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/rng.h"
#include "dpdyn/schedule.h"
#include "dpdyn/volterra.h"
#include "linreg/volterra_impl.h"

#define SEED 20250611u

/* ---- Helpers ------------------------------------------------------------------------------- */

static dpd_linreg_problem *make_iso(size_t d, uint64_t seed) {
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = d;
  cfg.spectrum = DPD_SPECTRUM_ISO;
  cfg.theta_norm = 1.27;
  cfg.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static dpd_linreg_problem *make_powerlaw(size_t d, double alpha, uint64_t seed) {
  dpd_linreg_problem_config cfg = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  cfg.d = d;
  cfg.spectrum = DPD_SPECTRUM_POWERLAW;
  cfg.alpha = alpha;
  cfg.theta_norm = 0.93;
  cfg.seed = seed;
  assert_int_equal(dpd_linreg_problem_create(&cfg, &p, NULL), DPD_OK);
  return p;
}

static dpd_schedule *make_schedule(dpd_schedule_kind kind, double eta0, double a) {
  dpd_schedule_config cfg = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  cfg.kind = kind;
  cfg.eta0 = eta0;
  cfg.a = a;
  assert_int_equal(dpd_schedule_create(&cfg, &s, NULL), DPD_OK);
  return s;
}

static dpd_ode_result *volterra_ok(const dpd_linreg_problem *p, const dpd_schedule *s,
                                   const dpd_ode_config *model, const dpd_volterra_config *vcfg) {
  dpd_ode_result *res = NULL;
  dpd_err err;
  int status;
  dpd_err_reset(&err);
  status = dpd_volterra_solve(p, s, model, vcfg, &res, &err);
  if (status != DPD_OK) {
    print_error("dpd_volterra_solve: %s: %s\n", dpd_status_str(status), err.reason);
  }
  assert_int_equal(status, DPD_OK);
  assert_non_null(res);
  return res;
}

static dpd_ode_result *ode_ok(const dpd_linreg_problem *p, const dpd_schedule *s,
                              const dpd_ode_config *model) {
  dpd_ode_config cfg = *model;
  dpd_ode_result *res = NULL;
  dpd_err err;
  int status;
  cfg.rtol = 1e-11;
  cfg.atol = 1e-15;
  dpd_err_reset(&err);
  status = dpd_ode_solve(p, s, &cfg, &res, &err);
  if (status != DPD_OK) {
    print_error("dpd_ode_solve: %s: %s\n", dpd_status_str(status), err.reason);
  }
  assert_int_equal(status, DPD_OK);
  return res;
}

/* Largest |a_j / b_j - 1| and where. */
static double max_rel_diff(const double *a, const double *b, size_t n, size_t *where) {
  double m = 0.0;
  *where = 0;
  for (size_t j = 0; j < n; j++) {
    double e = fabs(a[j] / b[j] - 1.0);
    if (!(e <= m)) {
      m = e;
      *where = j;
    }
  }
  return m;
}

/* ---- (1) Closed form and convergence order ---------------------------------------------- */

/* Isotropic, frozen factors, constant noise: R(t) = B/A + (R0 - B/A) e^{-A t}. Without
 * extrapolation the error is O(h^2) (halving h divides it by about 4); with Richardson
 * extrapolation it is at rounding level. */
static void iso_matches_exponential_with_second_order_convergence(void **state) {
  dpd_linreg_problem *p = make_iso(9, 7);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.87, 1.0);
  dpd_ode_config model = dpd_ode_config_default();
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  const double eta = 0.87, mu = 0.913, nu = 0.781, s2 = 0.0283;
  double R0 = dpd_linreg_initial_risk(p), A, B, err_prev = 0.0;
  (void)state;
  model.gamma = 0.41;
  model.zeta = 0.57;
  model.c = 1.19;
  model.sigma2_const = s2;
  model.mu_frozen = mu;
  model.nu_frozen = nu;
  model.grid = 21;
  A = 2.0 * eta * mu - model.gamma * eta * eta * nu;
  B = model.gamma * eta * eta * nu * model.zeta * model.zeta / 2.0 +
      2.0 * model.c * model.c * model.gamma * model.gamma * s2;
  vcfg.richardson = 0;
  for (size_t n = 40; n <= 640; n *= 2) {
    dpd_ode_result *res;
    double worst = 0.0;
    vcfg.steps = n;
    res = volterra_ok(p, s, &model, &vcfg);
    for (size_t j = 0; j < model.grid; j++) {
      double want = B / A + (R0 - B / A) * exp(-A * res->t[j]);
      worst = fmax(worst, fabs(res->risk[j] / want - 1.0));
    }
    print_message("N = %4zu: max relative error %.3e (ratio %.3f)\n", n, worst,
                  err_prev > 0.0 ? err_prev / worst : 0.0);
    if (err_prev > 0.0) {
      assert_true(err_prev / worst > 3.8 && err_prev / worst < 4.2);
    }
    err_prev = worst;
    dpd_ode_result_free(res);
  }
  vcfg.richardson = 1;
  vcfg.steps = 100;
  {
    dpd_ode_result *res = volterra_ok(p, s, &model, &vcfg);
    for (size_t j = 0; j < model.grid; j++) {
      assert_rel(res->risk[j], B / A + (R0 - B / A) * exp(-A * res->t[j]), 1e-11);
    }
    assert_true(res->steps == 200);
    dpd_ode_result_free(res);
  }
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (2) Agreement with the ODE solver --------------------------------------------------- */

typedef struct {
  double sigma2; /* NAN: no privacy noise */
  double mu, nu; /* NAN: not frozen (c = inf) */
  const char *name;
} model_case;

static const model_case model_cases[] = {
    {NAN, NAN, NAN, "no noise, no clipping"},
    {NAN, 0.834, 0.712, "no noise, frozen mu, nu"},
    {0.0517, 1.0, 1.0, "noise, mu = nu = 1"},
    {0.0517, 0.834, 0.712, "noise, frozen mu, nu"},
};

static void apply_model_case(dpd_ode_config *model, const model_case *mc) {
  model->c = INFINITY;
  model->sigma2_const = NAN;
  model->mu_frozen = mc->mu;
  model->nu_frozen = mc->nu;
  if (!isnan(mc->sigma2) || !isnan(mc->mu)) {
    model->c = 1.31; /* the noise scales with c^2; clipping needs frozen factors */
    model->sigma2_const = isnan(mc->sigma2) ? 0.0 : mc->sigma2;
  }
}

/* Every model case on problem p: the Volterra solution (default configuration) agrees with
 * the ODE solution at rtol 1e-11 to `tol` relative at every grid point. */
static void check_against_ode(const dpd_linreg_problem *p, double eta, double tol,
                              const char *what) {
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, eta, 1.0);
  dpd_ode_config model = dpd_ode_config_default();
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  model.gamma = 0.53;
  model.zeta = 0.61;
  model.grid = 101;
  for (size_t k = 0; k < sizeof model_cases / sizeof model_cases[0]; k++) {
    dpd_ode_result *ode, *vol;
    size_t where;
    double diff;
    apply_model_case(&model, &model_cases[k]);
    ode = ode_ok(p, s, &model);
    vol = volterra_ok(p, s, &model, &vcfg);
    assert_int_equal(vol->grid, ode->grid);
    for (size_t j = 0; j < vol->grid; j++) {
      assert_true(vol->t[j] == ode->t[j]);
    }
    assert_true(vol->risk[0] == ode->risk[0] || fabs(vol->risk[0] / ode->risk[0] - 1) < 1e-14);
    diff = max_rel_diff(vol->risk, ode->risk, vol->grid, &where);
    print_message("%s, %s: max relative difference %.3e at t = %.2f\n", what, model_cases[k].name,
                  diff, vol->t[where]);
    if (!(diff <= tol)) {
      print_error("t = %.2f: volterra %.15g, ode %.15g (seed %u)\n", vol->t[where],
                  vol->risk[where], ode->risk[where], (unsigned)SEED);
      fail();
    }
    assert_true(vol->lower == NULL && vol->upper == NULL);
    dpd_ode_result_free(ode);
    dpd_ode_result_free(vol);
  }
  dpd_schedule_free(s);
}

static void isotropic_spectrum_agrees_with_ode(void **state) {
  dpd_linreg_problem *p = make_iso(500, SEED);
  (void)state;
  check_against_ode(p, 1.13, 1e-9, "isotropic d = 500");
  dpd_linreg_problem_free(p);
}

static void powerlaw_alpha_1_agrees_with_ode(void **state) {
  const size_t dims[2] = {1000, 10000};
  (void)state;
  for (size_t k = 0; k < 2; k++) {
    dpd_linreg_problem *p = make_powerlaw(dims[k], 1.0, SEED + k);
    char what[64];
    snprintf(what, sizeof what, "power law alpha = 1, d = %zu", dims[k]);
    check_against_ode(p, 0.97, 1e-6, what);
    dpd_linreg_problem_free(p);
  }
}

static void powerlaw_alpha_1_5_agrees_with_ode(void **state) {
  const size_t dims[2] = {1000, 10000};
  (void)state;
  for (size_t k = 0; k < 2; k++) {
    dpd_linreg_problem *p = make_powerlaw(dims[k], 1.5, SEED + 10 + k);
    char what[64];
    snprintf(what, sizeof what, "power law alpha = 1.5, d = %zu", dims[k]);
    check_against_ode(p, 1.21, 1e-6, what);
    dpd_linreg_problem_free(p);
  }
}

/* Output perturbation: a constant schedule with finite rho has no continuous noise and the
 * release jump 2 c^2 gamma^2 eta~^2 / rho^2 at t = 1, as in the ODE. */
static void output_perturbation_release_jump_matches_ode(void **state) {
  dpd_linreg_problem *p = make_powerlaw(300, 1.3, SEED);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.77, 1.0);
  dpd_ode_config model = dpd_ode_config_default();
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  dpd_ode_result *ode, *vol;
  size_t where;
  (void)state;
  model.gamma = 0.37;
  model.c = 0.9;
  model.rho = 1.7;
  model.mu_frozen = 0.66;
  model.nu_frozen = 0.59;
  ode = ode_ok(p, s, &model);
  vol = volterra_ok(p, s, &model, &vcfg);
  assert_rel(vol->release_jump, 2.0 * 0.81 * 0.37 * 0.37 * 0.77 * 0.77 / (1.7 * 1.7), 1e-15);
  assert_rel(vol->release_jump, ode->release_jump, 1e-15);
  assert_rel(vol->final_risk, ode->final_risk, 1e-7);
  assert_true(vol->before_release == vol->risk[vol->grid - 1]);
  assert_true(max_rel_diff(vol->risk, ode->risk, vol->grid, &where) < 1e-7);
  dpd_ode_result_free(ode);
  dpd_ode_result_free(vol);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* A plan serves many models, and a problem with fewer groups; repeated executes are
 * bit-identical; FFTW_MEASURE plans agree with FFTW_ESTIMATE ones to rounding; the graded start
 * and the leaf size change only the rounding (leaf) or stay within the tolerance (start). */
static void plan_reuse_and_configuration_variants(void **state) {
  dpd_linreg_problem *big = make_powerlaw(2000, 1.2, SEED), *small = make_powerlaw(700, 1.4, 5);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 1.05, 1.0);
  dpd_ode_config model = dpd_ode_config_default();
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  dpd_volterra_plan *plan = NULL;
  dpd_ode_result *r1 = NULL, *r2 = NULL, *r3 = NULL;
  size_t where;
  (void)state;
  model.grid = 41;
  vcfg.steps = 800;
  assert_int_equal(dpd_volterra_plan_create(&vcfg, big, &plan, NULL), DPD_OK);
  assert_int_equal(dpd_volterra_execute(plan, big, s, &model, &r1, NULL), DPD_OK);
  assert_int_equal(dpd_volterra_execute(plan, big, s, &model, &r2, NULL), DPD_OK);
  assert_memory_equal(r1->risk, r2->risk, model.grid * sizeof *r1->risk);
  dpd_ode_result_free(r2);
  assert_int_equal(dpd_volterra_execute(plan, small, s, &model, &r2, NULL), DPD_OK);
  dpd_volterra_plan_free(plan);
  r3 = volterra_ok(small, s, &model, &vcfg);
  assert_memory_equal(r2->risk, r3->risk, model.grid * sizeof *r2->risk);
  dpd_ode_result_free(r2);
  dpd_ode_result_free(r3);

  vcfg.effort = DPD_VOLTERRA_FFT_MEASURE;
  vcfg.leaf = 3;
  r2 = volterra_ok(big, s, &model, &vcfg);
  assert_true(max_rel_diff(r2->risk, r1->risk, model.grid, &where) < 1e-12);
  dpd_ode_result_free(r2);

  vcfg = dpd_volterra_config_default();
  vcfg.steps = 800;
  vcfg.start_steps = 64;
  vcfg.start_x = 0.5;
  r2 = volterra_ok(big, s, &model, &vcfg);
  print_message("graded start 64 steps, start_x 0.5 vs defaults: %.3e\n",
                max_rel_diff(r2->risk, r1->risk, model.grid, &where));
  assert_true(max_rel_diff(r2->risk, r1->risk, model.grid, &where) < 2e-7);
  dpd_ode_result_free(r2);
  dpd_ode_result_free(r1);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(big);
  dpd_linreg_problem_free(small);
}

/* The tabulation kernels for baseline x86-64, AVX2 and AVX-512 (those the CPU has) give
 * bit-identical results: fixed summation order, no FMA contraction. */
static void simd_kernels_give_bit_identical_results(void **state) {
  dpd_linreg_problem *p = make_powerlaw(3000, 1.5, SEED);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 1.07, 1.0);
  dpd_ode_config model = dpd_ode_config_default();
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  dpd_volterra_plan *plan = NULL;
  dpd_ode_result *ref = NULL;
  int levels = 0;
  (void)state;
  model.c = 0.8;
  model.sigma2_const = 0.137;
  model.mu_frozen = 0.91;
  model.nu_frozen = 0.83;
  assert_int_equal(dpd_volterra_plan_create(&vcfg, p, &plan, NULL), DPD_OK);
  assert_int_equal(dpd__volterra_plan_simd_set(plan, 0), 0);
  assert_int_equal(dpd_volterra_execute(plan, p, s, &model, &ref, NULL), DPD_OK);
  for (int level = 1; level <= 2; level++) {
    dpd_ode_result *res = NULL;
    if (dpd__volterra_plan_simd_set(plan, level) != 0) {
      continue;
    }
    levels++;
    assert_int_equal(dpd_volterra_execute(plan, p, s, &model, &res, NULL), DPD_OK);
    assert_memory_equal(res->risk, ref->risk, model.grid * sizeof *res->risk);
    dpd_ode_result_free(res);
  }
  print_message("baseline kernel matched by %d SIMD kernel(s) bit for bit\n", levels);
  assert_int_equal(dpd__volterra_plan_simd_set(plan, 3), -1);
  assert_int_equal(dpd__volterra_plan_simd_set(plan, -1), -1);
  dpd_ode_result_free(ref);
  dpd_volterra_plan_free(plan);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* ---- (3) The FFT Toeplitz engine --------------------------------------------------------- */

static void fill_uniform(dpd_rng *rng, double *x, size_t n, double lo, double hi) {
  for (size_t i = 0; i < n; i++) {
    x[i] = lo + (hi - lo) * dpd_rng_uniform(rng);
  }
}

/* y[k] = sum_{i <= k} w[k - i] x[i], in long double. */
static void direct_apply(const double *w, const double *x, double *y, size_t n) {
  for (size_t k = 0; k < n; k++) {
    long double s = 0.0L;
    for (size_t i = 0; i <= k; i++) {
      s += (long double)w[k - i] * (long double)x[i];
    }
    y[k] = (double)s;
  }
}

/* max_k |a_k - b_k| / max_k |b_k|. */
static double max_scaled_diff(const double *a, const double *b, size_t n) {
  double d = 0.0, m = 0.0;
  for (size_t k = 0; k < n; k++) {
    d = fmax(d, fabs(a[k] - b[k]));
    m = fmax(m, fabs(b[k]));
  }
  return m > 0.0 ? d / m : d;
}

static const size_t fft_lengths[] = {1, 2, 3, 7, 64, 65, 100, 257, 1000, 4097};
static const size_t fft_leaves[] = {1, 4, 64};

static dpd__ltt *make_ltt(size_t cap, size_t leaf) {
  dpd__ltt *ltt = NULL;
  assert_int_equal(dpd__ltt_create(cap, leaf, FFTW_ESTIMATE, &ltt, NULL), DPD_OK);
  return ltt;
}

static void fast_convolution_matches_direct_sums_on_random_data(void **state) {
  dpd_rng rng;
  double *w = malloc(4097 * sizeof *w), *x = malloc(4097 * sizeof *x);
  double *y = malloc(4097 * sizeof *y), *ref = malloc(4097 * sizeof *ref);
  (void)state;
  dpd_rng_init(&rng, SEED, 1);
  for (size_t a = 0; a < sizeof fft_lengths / sizeof fft_lengths[0]; a++) {
    for (size_t b = 0; b < sizeof fft_leaves / sizeof fft_leaves[0]; b++) {
      size_t n = fft_lengths[a];
      dpd__ltt *ltt = make_ltt(n, fft_leaves[b]);
      double diff;
      fill_uniform(&rng, w, n, -1.0, 1.0);
      fill_uniform(&rng, x, n, -1.0, 1.0);
      dpd__ltt_kernel_set(ltt, w, n);
      dpd__ltt_apply(ltt, x, y);
      direct_apply(w, x, ref, n);
      diff = max_scaled_diff(y, ref, n);
      if (!(diff < 1e-14 * (1.0 + log2((double)n)))) {
        print_error("n = %zu, leaf = %zu: fast vs direct %.3e (seed %u)\n", n, fft_leaves[b], diff,
                    (unsigned)SEED);
        fail();
      }
      dpd__ltt_free(ltt);
    }
  }
  free(w);
  free(x);
  free(y);
  free(ref);
}

/* Linearity T(a x1 + b x2) = a T x1 + b T x2, the impulse response (T e_s = w shifted by s) and
 * time shift ((T x)(k + s) = (T x_s)(k) for x delayed by s). */
static void fast_convolution_is_linear_causal_and_shift_invariant(void **state) {
  const size_t n = 1000, shift = 137;
  const double ca = 0.6180339887, cb = -2.718281828;
  dpd_rng rng;
  double *w = malloc(n * sizeof *w), *x1 = malloc(n * sizeof *x1), *x2 = malloc(n * sizeof *x2);
  double *y1 = malloc(n * sizeof *y1), *y2 = malloc(n * sizeof *y2);
  double *y3 = malloc(n * sizeof *y3), *mix = malloc(n * sizeof *mix);
  dpd__ltt *ltt = make_ltt(n, 16);
  (void)state;
  dpd_rng_init(&rng, SEED, 2);
  fill_uniform(&rng, w, n, -1.0, 1.0);
  fill_uniform(&rng, x1, n, -1.0, 1.0);
  fill_uniform(&rng, x2, n, -1.0, 1.0);
  dpd__ltt_kernel_set(ltt, w, n);

  dpd__ltt_apply(ltt, x1, y1);
  dpd__ltt_apply(ltt, x2, y2);
  for (size_t k = 0; k < n; k++) {
    mix[k] = ca * x1[k] + cb * x2[k];
  }
  dpd__ltt_apply(ltt, mix, y3);
  for (size_t k = 0; k < n; k++) {
    mix[k] = ca * y1[k] + cb * y2[k];
  }
  assert_true(max_scaled_diff(y3, mix, n) < 1e-13);

  for (size_t s = 0; s < n; s += 111) {
    memset(x1, 0, n * sizeof *x1);
    x1[s] = 1.0;
    dpd__ltt_apply(ltt, x1, y1);
    for (size_t k = 0; k < n; k++) {
      double want = k < s ? 0.0 : w[k - s];
      assert_abs(y1[k], want, 1e-13);
    }
  }

  memset(x1, 0, n * sizeof *x1);
  for (size_t k = 0; k + shift < n; k++) {
    x1[k + shift] = x2[k];
  }
  dpd__ltt_apply(ltt, x2, y2);
  dpd__ltt_apply(ltt, x1, y1);
  for (size_t k = 0; k < shift; k++) {
    assert_abs(y1[k], 0.0, 1e-13);
  }
  assert_true(max_scaled_diff(y1 + shift, y2, n - shift) < 1e-13);

  dpd__ltt_free(ltt);
  free(w);
  free(x1);
  free(x2);
  free(y1);
  free(y2);
  free(y3);
  free(mix);
}

/* (I - T) x = g by the blocked recursion: the residual through the fast product and the
 * forward substitution in long double agree; the kernel of a Volterra problem (positive, sum
 * below 1) is used as well as a random one. */
static void toeplitz_solve_matches_forward_substitution(void **state) {
  dpd_rng rng;
  double *w = malloc(4097 * sizeof *w), *g = malloc(4097 * sizeof *g);
  double *x = malloc(4097 * sizeof *x), *tx = malloc(4097 * sizeof *tx);
  double *ref = malloc(4097 * sizeof *ref);
  (void)state;
  dpd_rng_init(&rng, SEED, 3);
  for (size_t a = 0; a < sizeof fft_lengths / sizeof fft_lengths[0]; a++) {
    for (int kind = 0; kind < 2; kind++) {
      size_t n = fft_lengths[a];
      dpd__ltt *ltt = make_ltt(n, 8);
      for (size_t k = 0; k < n; k++) {
        /* kind 0: decaying positive kernel (sum < 1/2); kind 1: random of both signs */
        w[k] = kind == 0 ? 0.25 * exp(-0.01 * (double)k) * 0.01 * (1.0 + dpd_rng_uniform(&rng))
                         : (dpd_rng_uniform(&rng) - 0.5) / (double)n;
      }
      fill_uniform(&rng, g, n, 0.5, 1.5);
      memcpy(x, g, n * sizeof *x);
      dpd__ltt_kernel_set(ltt, w, n);
      dpd__ltt_solve(ltt, x);
      for (size_t k = 0; k < n; k++) {
        long double s = (long double)g[k];
        for (size_t i = 0; i < k; i++) {
          s += (long double)w[k - i] * (long double)ref[i];
        }
        ref[k] = (double)(s / (1.0L - (long double)w[0]));
      }
      assert_true(max_scaled_diff(x, ref, n) < 1e-13);
      dpd__ltt_apply(ltt, x, tx);
      for (size_t k = 0; k < n; k++) {
        tx[k] = x[k] - tx[k];
      }
      assert_true(max_scaled_diff(tx, g, n) < 1e-13);
      dpd__ltt_free(ltt);
    }
  }
  free(w);
  free(g);
  free(x);
  free(tx);
  free(ref);
}

static double phi_a_integrand(double u, void *params) {
  double x = *(const double *)params;
  return exp(-x * u) * (1.0 - u);
}

static double phi_b_integrand(double u, void *params) {
  double x = *(const double *)params;
  return exp(-x * u) * u;
}

/* phi_a(x) = int_0^1 e^{-xu} (1 - u) du and phi_b(x) = int_0^1 e^{-xu} u du, across the switch
 * from the series to the closed forms, and at x = 1e6 where phi_a = 1/x - 1/x^2 and
 * phi_b = 1/x^2 to double precision. */
static void product_weights_match_quadrature(void **state) {
  const double xs[] = {0.0, 1e-12,     3.7e-5, 0.0123, 0.31, 0.4999999,
                       0.5, 0.5000001, 0.77,   2.3,    17.9, 412.0};
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(200);
  (void)state;
  gsl_set_error_handler_off();
  for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
    double x = xs[k], ia, ib, ea, eb;
    gsl_function fa = {phi_a_integrand, &x}, fb = {phi_b_integrand, &x};
    /* epsrel 2e-14: QAG accepts no less than 50 eps. */
    int sa = gsl_integration_qag(&fa, 0.0, 1.0, 0.0, 2e-14, 200, GSL_INTEG_GAUSS61, ws, &ia, &ea);
    int sb = gsl_integration_qag(&fb, 0.0, 1.0, 0.0, 2e-14, 200, GSL_INTEG_GAUSS61, ws, &ib, &eb);
    assert_int_equal(sa, GSL_SUCCESS);
    assert_int_equal(sb, GSL_SUCCESS);
    assert_rel(dpd__volterra_phi_a(x), ia, 4e-15);
    assert_rel(dpd__volterra_phi_b(x), ib, 4e-15);
  }
  assert_rel(dpd__volterra_phi_a(1e6), 1e-6 - 1e-12, 1e-15);
  assert_rel(dpd__volterra_phi_b(1e6), 1e-12, 1e-15);
  gsl_integration_workspace_free(ws);
}

/* ---- (4) Error paths ---------------------------------------------------------------------- */

static void expect_plan_einval(const dpd_volterra_config *cfg, const dpd_linreg_problem *p,
                               const char *key) {
  dpd_volterra_plan *plan = (dpd_volterra_plan *)&plan; /* must be reset to NULL */
  dpd_err err;
  char want[64];
  dpd_err_reset(&err);
  assert_int_equal(dpd_volterra_plan_create(cfg, p, &plan, &err), DPD_EINVAL);
  assert_null(plan);
  snprintf(want, sizeof want, "invalid value for '%s'", key);
  if (strstr(err.reason, want) == NULL || strstr(err.reason, "allowed") == NULL) {
    print_error("reason '%s' lacks \"%s\" or the allowed range\n", err.reason, want);
    fail();
  }
}

static void expect_execute_einval(dpd_volterra_plan *plan, const dpd_linreg_problem *p,
                                  const dpd_schedule *s, const dpd_ode_config *model,
                                  const char *key) {
  dpd_ode_result *res = (dpd_ode_result *)&res; /* must be reset to NULL */
  dpd_err err;
  char want[64];
  dpd_err_reset(&err);
  assert_int_equal(dpd_volterra_execute(plan, p, s, model, &res, &err), DPD_EINVAL);
  assert_null(res);
  assert_int_equal(err.status, DPD_EINVAL);
  snprintf(want, sizeof want, "invalid value for '%s'", key);
  if (strstr(err.reason, want) == NULL || strstr(err.reason, "allowed") == NULL) {
    print_error("reason '%s' lacks \"%s\" or the allowed range\n", err.reason, want);
    fail();
  }
}

static void invalid_plan_config_is_rejected_with_key_value_and_range(void **state) {
  dpd_linreg_problem *p = make_iso(5, 1);
  dpd_volterra_config base = dpd_volterra_config_default(), cfg;
  dpd_volterra_plan *plan = NULL;
  (void)state;
  cfg = base, cfg.steps = 0, expect_plan_einval(&cfg, p, "steps");
  cfg = base, cfg.steps = 1, expect_plan_einval(&cfg, p, "steps");
  cfg = base, cfg.steps = ((size_t)1 << 26) + 1, expect_plan_einval(&cfg, p, "steps");
  cfg = base, cfg.richardson = 2, expect_plan_einval(&cfg, p, "richardson");
  cfg = base, cfg.steps = 40, cfg.start_steps = 40, expect_plan_einval(&cfg, p, "start_steps");
  cfg = base, cfg.start_x = 0.0, expect_plan_einval(&cfg, p, "start_x");
  cfg = base, cfg.start_x = NAN, expect_plan_einval(&cfg, p, "start_x");
  cfg = base, cfg.start_x = INFINITY, expect_plan_einval(&cfg, p, "start_x");
  cfg = base, cfg.effort = (dpd_volterra_fft_effort)9, expect_plan_einval(&cfg, p, "effort");
  cfg = base, cfg.leaf = 0, expect_plan_einval(&cfg, p, "leaf");
  expect_plan_einval(NULL, p, "config");
  expect_plan_einval(&base, NULL, "problem");
  assert_int_equal(dpd_volterra_plan_create(&base, p, NULL, NULL), DPD_EINVAL);
  /* The smallest valid plans: N = 2 (with and without the graded start). */
  cfg = base, cfg.steps = 2, cfg.start_steps = 1;
  assert_int_equal(dpd_volterra_plan_create(&cfg, p, &plan, NULL), DPD_OK);
  dpd_volterra_plan_free(plan);
  dpd_volterra_plan_free(NULL);
  dpd_linreg_problem_free(p);
}

static void invalid_model_is_rejected_with_key_value_and_range(void **state) {
  dpd_linreg_problem *p = make_powerlaw(50, 1.1, 2), *big = make_powerlaw(60, 1.1, 2);
  dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, 0.9, 1.0);
  dpd_schedule *sq = make_schedule(DPD_SCHEDULE_SQRT, 0.9, 1.0);
  dpd_schedule *hyp = make_schedule(DPD_SCHEDULE_HYPERBOLIC, 0.9, 0.5);
  dpd_schedule *flat = make_schedule(DPD_SCHEDULE_HYPERBOLIC, 0.9, 0.0); /* constant */
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  dpd_ode_config base = dpd_ode_config_default(), model;
  dpd_volterra_plan *plan = NULL;
  dpd_ode_result *res = NULL;
  dpd_err err;
  (void)state;
  base.grid = 11;
  assert_int_equal(dpd_volterra_plan_create(&vcfg, p, &plan, NULL), DPD_OK);

  /* A schedule that is not constant: the reason says so. */
  dpd_err_reset(&err);
  assert_int_equal(dpd_volterra_execute(plan, p, sq, &base, &res, &err), DPD_EINVAL);
  assert_null(res);
  assert_non_null(strstr(err.reason, "'schedule'"));
  assert_non_null(strstr(err.reason, "not constant"));
  assert_non_null(strstr(err.reason, "sqrt"));
  print_message("reported: %s\n", err.reason);
  expect_execute_einval(plan, p, hyp, &base, "schedule");
  model = base;
  assert_int_equal(dpd_volterra_execute(plan, p, flat, &model, &res, NULL), DPD_OK);
  dpd_ode_result_free(res);

  model = base, model.c = 1.1, expect_execute_einval(plan, p, s, &model, "mu_frozen");
  model = base, model.c = 1.1, model.mu_frozen = 0.9;
  expect_execute_einval(plan, p, s, &model, "nu_frozen");
  model = base, model.grid = 7,
  expect_execute_einval(plan, p, s, &model, "grid"); /* 6 does not divide 400 */
  model = base, expect_execute_einval(plan, big, s, &model, "problem");
  /* The ODE's own validation of the shared fields. */
  model = base, model.gamma = -1.0, expect_execute_einval(plan, p, s, &model, "gamma");
  model = base, model.grid = 1, expect_execute_einval(plan, p, s, &model, "grid");
  model = base, model.sigma2_const = -0.5, model.c = 1.0, model.mu_frozen = 1.0,
  model.nu_frozen = 1.0, expect_execute_einval(plan, p, s, &model, "sigma2_const");
  model = base, model.mu_frozen = 1.5, expect_execute_einval(plan, p, s, &model, "mu_frozen");
  model = base, expect_execute_einval(plan, NULL, s, &model, "problem");
  model = base, expect_execute_einval(plan, p, NULL, &model, "schedule");
  expect_execute_einval(plan, p, s, NULL, "config");
  expect_execute_einval(NULL, p, s, &base, "plan");
  assert_int_equal(dpd_volterra_execute(plan, p, s, &base, NULL, NULL), DPD_EINVAL);
  assert_int_equal(dpd_volterra_solve(p, s, &base, &vcfg, NULL, NULL), DPD_EINVAL);
  vcfg.steps = 1;
  assert_int_equal(dpd_volterra_solve(p, s, &base, &vcfg, &res, NULL), DPD_EINVAL);
  assert_null(res);

  dpd_volterra_plan_free(plan);
  dpd_schedule_free(s);
  dpd_schedule_free(sq);
  dpd_schedule_free(hyp);
  dpd_schedule_free(flat);
  dpd_linreg_problem_free(p);
  dpd_linreg_problem_free(big);
}

/* Far beyond the stability limit 2/gamma: eta~ = 28 overflows near t = 1; at eta~ = 40 the
 * discrete equation is singular from the first step (W_0 >= 1). */
static void divergent_risk_is_reported_as_nonfinite(void **state) {
  dpd_linreg_problem *p = make_iso(3, 5);
  const double etas[2] = {28.0, 40.0};
  dpd_ode_config model = dpd_ode_config_default();
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  (void)state;
  model.gamma = 1.0;
  for (size_t k = 0; k < 2; k++) {
    dpd_schedule *s = make_schedule(DPD_SCHEDULE_CONST, etas[k], 1.0);
    dpd_ode_result *res = NULL;
    dpd_err err;
    dpd_err_reset(&err);
    assert_int_equal(dpd_volterra_solve(p, s, &model, &vcfg, &res, &err), DPD_ENONFINITE);
    assert_null(res);
    assert_non_null(strstr(err.reason, "t = "));
    print_message("reported: %s\n", err.reason);
    dpd_schedule_free(s);
  }
  dpd_linreg_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(iso_matches_exponential_with_second_order_convergence),
      cmocka_unit_test(isotropic_spectrum_agrees_with_ode),
      cmocka_unit_test(powerlaw_alpha_1_agrees_with_ode),
      cmocka_unit_test(powerlaw_alpha_1_5_agrees_with_ode),
      cmocka_unit_test(output_perturbation_release_jump_matches_ode),
      cmocka_unit_test(plan_reuse_and_configuration_variants),
      cmocka_unit_test(simd_kernels_give_bit_identical_results),
      cmocka_unit_test(fast_convolution_matches_direct_sums_on_random_data),
      cmocka_unit_test(fast_convolution_is_linear_causal_and_shift_invariant),
      cmocka_unit_test(toeplitz_solve_matches_forward_substitution),
      cmocka_unit_test(product_weights_match_quadrature),
      cmocka_unit_test(invalid_plan_config_is_rejected_with_key_value_and_range),
      cmocka_unit_test(invalid_model_is_rejected_with_key_value_and_range),
      cmocka_unit_test(divergent_risk_is_reported_as_nonfinite),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
