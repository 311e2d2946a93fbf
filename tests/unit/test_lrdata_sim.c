/* Tests of the simulation on a dataset's rows, dpd__lrdata_sim_run (src/linreg/data_sim.c;
 * docs/math.md §1.3-1.4, issue 27 §1 "simulate").
 * SPDX-License-Identifier: MIT
 *
 * The dataset is built by hand here (the raw rows in float and double arrays, the preprocessing,
 * Sigma^ = (1/n_pop) sum x x^T and the least-squares theta^* by a Cholesky solve), so that the
 * simulation is tested apart from the file reader. The reference runs are plain double loops
 * written from the documented algorithm and stream rule: the same streams for the exact
 * comparisons, other streams and another way of drawing the rows for the statistical one. Seeds
 * are fixed and printed on failure. */
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "core/noise_impl.h"
#include "dpdyn/isa.h"
#include "dpdyn/linreg.h"
#include "dpdyn/rng.h"
#include "dpdyn/schedule.h"
#include "linreg/data_impl.h"
#include "linreg/data_sim_impl.h"

#define SEED UINT64_C(2385)
#define DATA_SEED UINT64_C(7411)

/* A hand-made dataset: the raw values and everything dpd__lrdata holds for the simulation. */
typedef struct {
  dpd__lrdata D;
  float *xf, *yf;  /* raw values as float (f32 storage) */
  double *xd, *yd; /* the same values as double (f64 storage) */
  size_t *pop, *test;
  double *mean, *sigma, *theta_hat;
} dataset;

/* The preprocessed row and target, as data_impl.h defines them. */
static void pre_row(const dataset *s, size_t row, double *x) {
  for (size_t i = 0; i < s->D.d; i++) {
    x[i] = s->D.scale * (s->xd[row * s->D.d + i] - s->mean[i]);
  }
}

static double pre_target(const dataset *s, size_t row) {
  return s->D.y_scale * (s->yd[row] - s->D.y_mean);
}

/* Solves A t = b (A symmetric positive definite, d x d) by Cholesky; A and b are overwritten. */
static void chol_solve(double *A, double *b, size_t d, double *t) {
  for (size_t j = 0; j < d; j++) {
    double s = A[j * d + j];
    for (size_t k = 0; k < j; k++) {
      s -= A[j * d + k] * A[j * d + k];
    }
    assert_true(s > 0.0);
    A[j * d + j] = sqrt(s);
    for (size_t i = j + 1; i < d; i++) {
      double v = A[i * d + j];
      for (size_t k = 0; k < j; k++) {
        v -= A[i * d + k] * A[j * d + k];
      }
      A[i * d + j] = v / A[j * d + j];
    }
  }
  for (size_t i = 0; i < d; i++) {
    double v = b[i];
    for (size_t k = 0; k < i; k++) {
      v -= A[i * d + k] * b[k];
    }
    b[i] = v / A[i * d + i];
  }
  for (size_t i = d; i-- > 0;) {
    double v = b[i];
    for (size_t k = i + 1; k < d; k++) {
      v -= A[k * d + i] * t[k];
    }
    t[i] = v / A[i * d + i];
  }
}

/* N rows of d skewed, unevenly scaled features (float-representable), a linear target with
 * noise; every q-th row (from row 1) held out, n_test of them; f32 selects the storage. */
static void make_data(dataset *s, size_t N, size_t d, size_t n_test, int f32) {
  memset(s, 0, sizeof *s);
  s->xf = malloc(N * d * sizeof *s->xf);
  s->xd = malloc(N * d * sizeof *s->xd);
  s->yf = malloc(N * sizeof *s->yf);
  s->yd = malloc(N * sizeof *s->yd);
  s->pop = malloc(N * sizeof *s->pop);
  s->test = malloc((n_test > 0 ? n_test : 1) * sizeof *s->test);
  s->mean = calloc(d, sizeof *s->mean);
  s->sigma = calloc(d * d, sizeof *s->sigma);
  s->theta_hat = calloc(d, sizeof *s->theta_hat);
  double *A = calloc(d * d, sizeof *A), *b = calloc(d, sizeof *b), *x = malloc(d * sizeof *x);
  assert_non_null(s->xf);
  assert_non_null(s->theta_hat);
  assert_non_null(A);
  assert_non_null(b);
  assert_non_null(x);
  dpd_rng rng;
  dpd_rng_init(&rng, DATA_SEED, 7);
  for (size_t r = 0; r < N; r++) {
    double y = 3.1;
    for (size_t j = 0; j < d; j++) {
      const double g = dpd_rng_gaussian(&rng);
      const float v = (float)((0.3 + 0.2 * (double)j) * (g + 0.4 * (g * g - 1.0)) + 1.7);
      s->xf[r * d + j] = v;
      s->xd[r * d + j] = (double)v;
      y += cos(1.3 * (double)j + 0.4) * (double)v;
    }
    s->yf[r] = (float)(y + 0.6 * dpd_rng_gaussian(&rng));
    s->yd[r] = (double)s->yf[r];
  }
  const size_t q = n_test > 0 ? N / n_test : N + 1;
  size_t n_pop = 0, nt = 0;
  for (size_t r = 0; r < N; r++) {
    if (nt < n_test && r % q == 1) {
      s->test[nt++] = r;
    } else {
      s->pop[n_pop++] = r;
    }
  }
  assert_int_equal(nt, n_test);
  dpd__lrdata *D = &s->D;
  D->X = (dpd__datamat){.rows = N, .cols = d, .f32 = f32};
  D->X.data = f32 ? (const void *)s->xf : (const void *)s->xd;
  D->Y = (dpd__datamat){.rows = N, .cols = 1, .f32 = f32};
  D->Y.data = f32 ? (const void *)s->yf : (const void *)s->yd;
  D->N = N;
  D->d = d;
  D->n_pop = n_pop;
  D->n_test = n_test;
  D->pop_idx = s->pop;
  D->test_idx = n_test > 0 ? s->test : NULL;
  D->mean = s->mean;
  D->sigma = s->sigma;
  D->theta_hat = s->theta_hat;
  double ym = 0.0, yv = 0.0, tr = 0.0;
  for (size_t p = 0; p < n_pop; p++) {
    for (size_t j = 0; j < d; j++) {
      s->mean[j] += s->xd[s->pop[p] * d + j];
    }
    ym += s->yd[s->pop[p]];
  }
  for (size_t j = 0; j < d; j++) {
    s->mean[j] /= (double)n_pop;
  }
  ym /= (double)n_pop;
  for (size_t p = 0; p < n_pop; p++) {
    for (size_t j = 0; j < d; j++) {
      const double c = s->xd[s->pop[p] * d + j] - s->mean[j];
      tr += c * c;
    }
    yv += (s->yd[s->pop[p]] - ym) * (s->yd[s->pop[p]] - ym);
  }
  D->trace_raw = tr / (double)n_pop;
  D->scale = sqrt((double)d / D->trace_raw);
  D->y_mean = ym;
  D->y_scale = 1.0 / sqrt(yv / (double)n_pop);
  for (size_t p = 0; p < n_pop; p++) {
    pre_row(s, s->pop[p], x);
    const double y = pre_target(s, s->pop[p]);
    for (size_t i = 0; i < d; i++) {
      for (size_t j = 0; j < d; j++) {
        s->sigma[i * d + j] += x[i] * x[j] / (double)n_pop;
      }
      b[i] += x[i] * y / (double)n_pop;
    }
  }
  memcpy(A, s->sigma, d * d * sizeof *A);
  chol_solve(A, b, d, s->theta_hat);
  free(A);
  free(b);
  free(x);
}

static void free_data(dataset *s) {
  free(s->xf);
  free(s->xd);
  free(s->yf);
  free(s->yd);
  free(s->pop);
  free(s->test);
  free(s->mean);
  free(s->sigma);
  free(s->theta_hat);
}

static dpd_schedule *make_schedule(dpd_schedule_kind kind, double eta0) {
  dpd_schedule_config sc = dpd_schedule_config_default();
  sc.kind = kind;
  sc.eta0 = eta0;
  dpd_schedule *sch = NULL;
  assert_int_equal(dpd_schedule_create(&sc, &sch, NULL), DPD_OK);
  return sch;
}

/* (1/2) v^T Sigma^ v, v = theta - ref, in plain loops. */
static double direct_risk(const dataset *s, const double *theta, const double *ref) {
  const size_t d = s->D.d;
  double q = 0.0;
  for (size_t i = 0; i < d; i++) {
    for (size_t j = 0; j < d; j++) {
      q += (theta[i] - ref[i]) * s->sigma[i * d + j] * (theta[j] - ref[j]);
    }
  }
  return 0.5 * q;
}

/* What a direct run reports. */
typedef struct {
  double *theta; /* [d] released theta_n */
  double *risk;  /* [grid] before release at step n */
  double before, released;
  double scale; /* max_i sum_k |theta_{k+1,i} - theta_{k,i}|: the scale of rounding errors */
  size_t clipped;
} direct_out;

/* Replicate `rep` of the documented algorithm with the documented streams, in plain loops. */
static void direct_run(const dataset *s, const double *theta_star, const dpd_schedule *sch,
                       const dpd_linreg_sim_config *cfg, size_t rep, direct_out *o) {
  const size_t d = s->D.d, n = cfg->n, n_pop = s->D.n_pop, grid = cfg->grid;
  size_t *p = malloc(n_pop * sizeof *p), *rows = malloc(n * sizeof *rows);
  double *eta = malloc(n * sizeof *eta), *sig = malloc(n * sizeof *sig);
  double *x = malloc(d * sizeof *x), *buf = malloc((d + 2) * sizeof *buf);
  double *mag = calloc(d, sizeof *mag);
  assert_non_null(mag);
  assert_non_null(p);
  assert_non_null(rows);
  assert_non_null(eta);
  assert_non_null(sig);
  assert_non_null(x);
  assert_non_null(buf);
  const int model = theta_star != NULL;
  const double *ref = model ? theta_star : s->theta_hat;
  const double C = isfinite(cfg->c) ? cfg->c * sqrt((double)d) : INFINITY;
  const dpd_noise_spec noise = {.law = cfg->noise, .zeta = cfg->zeta, .nu = cfg->noise_nu};
  dpd_rng rng;
  dpd_rng_init(&rng, cfg->seed, rep);
  for (size_t i = 0; i < n_pop; i++) {
    p[i] = i;
  }
  for (size_t k = 0; k < n; k++) {
    const size_t m = n_pop - k;
    size_t off = (size_t)(dpd_rng_uniform(&rng) * (double)m);
    off = off > m - 1 ? m - 1 : off;
    const size_t t = p[k];
    p[k] = p[k + off];
    p[k + off] = t;
    rows[k] = s->pop[p[k]];
  }
  dpd_rng_init(&rng, cfg->seed, rep);
  rng.counter = (n + 1) / 2;
  dpd_schedule_steps(sch, n, cfg->rho, eta, sig);
  for (size_t i = 0; i < d; i++) {
    o->theta[i] = 0.0;
  }
  o->clipped = 0;
  o->before = NAN;
  size_t next = 0;
  for (; next < grid && (size_t)floor((double)next * (double)n / (double)(grid - 1) + 0.5) == 0;
       next++) {
    o->risk[next] = direct_risk(s, o->theta, ref);
  }
  for (size_t k = 0; k < n; k++) {
    const int noisy = sig[k] > 0.0;
    const size_t m = (size_t)model + (noisy ? d : 0);
    if (m > 0) {
      dpd_rng_gaussian_fill(&rng, buf, m);
    }
    pre_row(s, rows[k], x);
    double y;
    if (model) {
      y = 0.0;
      for (size_t i = 0; i < d; i++) {
        y += x[i] * theta_star[i];
      }
      y += dpd__noise_from_gaussian(&noise, buf[0], &rng);
    } else {
      y = pre_target(s, rows[k]);
    }
    double r = -y, xx = 0.0;
    for (size_t i = 0; i < d; i++) {
      r += x[i] * o->theta[i];
      xx += x[i] * x[i];
    }
    double sc = 1.0;
    if (fabs(r) * sqrt(xx) > C) {
      sc = C / (fabs(r) * sqrt(xx));
      o->clipped++;
    }
    for (size_t i = 0; i < d; i++) {
      o->theta[i] -= eta[k] * r * sc * x[i];
      mag[i] += fabs(eta[k] * r * sc * x[i]);
    }
    o->before = direct_risk(s, o->theta, ref);
    if (noisy) {
      for (size_t i = 0; i < d; i++) {
        o->theta[i] += 2.0 * C * sig[k] * buf[(size_t)model + i];
        mag[i] += fabs(2.0 * C * sig[k] * buf[(size_t)model + i]);
      }
    }
    for (; next < grid &&
           (next == grid - 1
                ? n
                : (size_t)floor((double)next * (double)n / (double)(grid - 1) + 0.5)) == k + 1;
         next++) {
      o->risk[next] = k + 1 == n ? o->before : direct_risk(s, o->theta, ref);
    }
  }
  o->released = direct_risk(s, o->theta, ref);
  o->scale = 0.0;
  for (size_t i = 0; i < d; i++) {
    o->scale = fmax(o->scale, mag[i]);
  }
  free(mag);
  free(p);
  free(rows);
  free(eta);
  free(sig);
  free(x);
  free(buf);
}

static dpd_linreg_sim_config base_cfg(size_t n, double c, double rho) {
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  cfg.n = n;
  cfg.c = c;
  cfg.rho = rho;
  cfg.seeds = 1;
  cfg.seed = SEED;
  cfg.grid = 11;
  cfg.threads = 1;
  cfg.zeta = 0.37;
  return cfg;
}

/* Runs replicate `rep` through dpd__lrdata_sim_theta and compares theta_n (to rtol times the
 * sum of the steps' sizes) and every recorded risk (to rtol) with the direct loop. */
static void check_against_direct(const dataset *s, const double *theta_star,
                                 const dpd_schedule *sch, const dpd_linreg_sim_config *cfg,
                                 size_t rep, double rtol, direct_out *o) {
  const size_t d = s->D.d, grid = cfg->grid;
  double *theta = malloc(d * sizeof *theta);
  assert_non_null(theta);
  o->theta = malloc(d * sizeof *o->theta);
  o->risk = malloc(grid * sizeof *o->risk);
  assert_non_null(o->theta);
  assert_non_null(o->risk);
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  const int st = dpd__lrdata_sim_theta(&s->D, theta_star, sch, cfg, rep, theta, &res, NULL, &err);
  if (st != DPD_OK) {
    print_error("sim_theta: %s (seed %llu)\n", err.reason, (unsigned long long)cfg->seed);
  }
  assert_int_equal(st, DPD_OK);
  direct_run(s, theta_star, sch, cfg, rep, o);
  /* theta_n is a sum of n steps: its rounding errors scale with the sum of their sizes */
  for (size_t i = 0; i < d; i++) {
    assert_abs(theta[i], o->theta[i], rtol * o->scale);
  }
  for (size_t j = 0; j < grid; j++) {
    assert_rel(res->risk_replicates[j], o->risk[j], rtol);
  }
  assert_rel(res->final_risk, o->released, rtol);
  assert_rel(res->before_release, o->before, rtol);
  assert_rel(res->clip_fraction_total, (double)o->clipped / (double)cfg->n, 1e-15);
  dpd_linreg_sim_result_free(res);
  free(theta);
}

static void free_direct(direct_out *o) {
  free(o->theta);
  free(o->risk);
}

/* (a) No clipping, no noise: theta_n and the risks are those of the direct loop over the same
 * drawn rows, with n = n_pop (the dense shuffle) and n << n_pop (the hashed one; n = 1 too),
 * several replicates, float32 and float64 storage, d not a multiple of 8. */
static void plain_sgd_on_the_rows_equals_the_direct_loop(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_SQRT, 1.3);
  for (int f32 = 0; f32 <= 1; f32++) {
    dataset s;
    make_data(&s, 200, 13, 0, f32);
    const size_t ns[3] = {200, 20, 1};
    for (size_t a = 0; a < 3; a++) {
      for (size_t rep = 0; rep < 3; rep++) {
        dpd_linreg_sim_config cfg = base_cfg(ns[a], INFINITY, INFINITY);
        direct_out o;
        check_against_direct(&s, NULL, sch, &cfg, rep, 1e-12, &o);
        assert_rel(o.released, o.before, 0.0);
        free_direct(&o);
      }
    }
    free_data(&s);
  }
  dpd_schedule_free(sch);
}

/* (b) Every step clipped (c tiny), with and without privacy noise, file and model targets
 * (Gaussian and Student-t label noise: the chi-square's draws after the fill): the direct loop
 * with the documented streams. */
static void clipped_private_steps_equal_the_direct_loop(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_CONST, 0.9);
  dataset s;
  make_data(&s, 150, 17, 0, 1);
  double theta_star[17];
  for (size_t i = 0; i < 17; i++) {
    theta_star[i] = 0.4 * sin(2.3 * (double)i + 0.7);
  }
  const double rhos[2] = {INFINITY, 1.7};
  const dpd_noise_law laws[2] = {DPD_NOISE_GAUSSIAN, DPD_NOISE_STUDENT};
  for (size_t a = 0; a < 2; a++) {
    for (int model = 0; model <= 1; model++) {
      for (size_t l = 0; l < (model ? 2u : 1u); l++) {
        dpd_linreg_sim_config cfg = base_cfg(120, 1e-3, rhos[a]);
        cfg.noise = laws[l];
        direct_out o;
        check_against_direct(&s, model ? theta_star : NULL, sch, &cfg, 2, 1e-12, &o);
        assert_int_equal(o.clipped, cfg.n);
        free_direct(&o);
      }
    }
  }
  free_data(&s);
  dpd_schedule_free(sch);
}

static dpd_linreg_sim_result *run_ok(const dataset *s, const double *theta_star,
                                     const dpd_schedule *sch, const dpd_linreg_sim_config *cfg,
                                     double *test_risk) {
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  const int st = dpd__lrdata_sim_run(&s->D, theta_star, sch, cfg, &res, test_risk, &err);
  if (st != DPD_OK) {
    print_error("dpd__lrdata_sim_run: %s: %s (seed %llu)\n", dpd_status_str(st), err.reason,
                (unsigned long long)cfg->seed);
  }
  assert_int_equal(st, DPD_OK);
  assert_non_null(res);
  return res;
}

static void assert_same_result(const dpd_linreg_sim_result *a, const dpd_linreg_sim_result *b) {
  const size_t g = a->grid, s = a->seeds;
  assert_int_equal(g, b->grid);
  assert_int_equal(s, b->seeds);
  assert_memory_equal(a->t, b->t, g * sizeof *a->t);
  assert_memory_equal(a->risk_mean, b->risk_mean, g * sizeof *a->risk_mean);
  assert_memory_equal(a->risk_se, b->risk_se, g * sizeof *a->risk_se);
  assert_memory_equal(a->clip_fraction, b->clip_fraction, g * sizeof *a->clip_fraction);
  assert_memory_equal(a->risk_replicates, b->risk_replicates, g * s * sizeof(double));
  assert_memory_equal(a->clip_replicates, b->clip_replicates, g * s * sizeof(double));
  assert_memory_equal(a->final_replicates, b->final_replicates, s * sizeof(double));
  assert_memory_equal(a->before_release_replicates, b->before_release_replicates,
                      s * sizeof(double));
  assert_memory_equal(a->clip_total_replicates, b->clip_total_replicates, s * sizeof(double));
  assert_memory_equal(&a->final_risk, &b->final_risk, sizeof a->final_risk);
  assert_memory_equal(&a->final_risk_se, &b->final_risk_se, sizeof a->final_risk_se);
  assert_memory_equal(&a->release_jump_se, &b->release_jump_se, sizeof a->release_jump_se);
  assert_memory_equal(&a->clip_fraction_total, &b->clip_fraction_total,
                      sizeof a->clip_fraction_total);
}

/* (c) One thread or two: the same bytes in every result array and held-out risk; replicate r of
 * a run is dpd__lrdata_sim_theta's replicate r. */
static void results_are_bit_identical_for_any_thread_count(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_SQRT, 1.1);
  dataset s;
  make_data(&s, 240, 21, 30, 1);
  for (int model = 0; model <= 1; model++) {
    double theta_star[21];
    for (size_t i = 0; i < 21; i++) {
      theta_star[i] = 0.3 * cos(1.1 * (double)i + 0.2);
    }
    const double *ts = model ? theta_star : NULL;
    dpd_linreg_sim_config cfg = base_cfg(150, 0.7, 2.2);
    cfg.seeds = 7;
    cfg.grid = 16;
    double t1[7], t2[7];
    cfg.threads = 1;
    dpd_linreg_sim_result *a = run_ok(&s, ts, sch, &cfg, t1);
    cfg.threads = 2;
    dpd_linreg_sim_result *b = run_ok(&s, ts, sch, &cfg, t2);
    assert_same_result(a, b);
    assert_memory_equal(t1, t2, sizeof t1);
    for (size_t r = 0; r < 7; r++) {
      assert_true(isfinite(t1[r]));
    }
    double theta[21], t3;
    dpd_linreg_sim_result *c = NULL;
    assert_int_equal(dpd__lrdata_sim_theta(&s.D, ts, sch, &cfg, 4, theta, &c, &t3, NULL), DPD_OK);
    assert_memory_equal(c->risk_replicates, a->risk_replicates + 4 * cfg.grid,
                        cfg.grid * sizeof(double));
    assert_memory_equal(&c->final_replicates[0], &a->final_replicates[4], sizeof(double));
    assert_memory_equal(&t3, &t1[4], sizeof t3);
    dpd_linreg_sim_result_free(a);
    dpd_linreg_sim_result_free(b);
    dpd_linreg_sim_result_free(c);
  }
  free_data(&s);
  dpd_schedule_free(sch);
}

/* Every instruction-set path (scalar, AVX2, AVX-512, those this CPU has) gives the same bytes:
 * the kernels' fixed-order sums without FMA contraction. d = 29 has a tail of 5 coordinates. */
static void results_are_bit_identical_on_every_kernel_path(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_SQRT, 1.1);
  dataset s;
  make_data(&s, 200, 29, 25, 1);
  double theta_star[29];
  for (size_t i = 0; i < 29; i++) {
    theta_star[i] = 0.3 * cos(0.7 * (double)i + 0.2);
  }
  const dpd_isa paths[3] = {DPD_ISA_SCALAR, DPD_ISA_AVX2, DPD_ISA_AVX512};
  for (int model = 0; model <= 1; model++) {
    dpd_linreg_sim_config cfg = base_cfg(170, 0.8, 2.6);
    cfg.seeds = 3;
    cfg.noise = DPD_NOISE_LAPLACE;
    double t0[3], t1[3];
    assert_int_equal(dpd_isa_set(DPD_ISA_SCALAR), DPD_OK);
    dpd_linreg_sim_result *a = run_ok(&s, model ? theta_star : NULL, sch, &cfg, t0);
    for (size_t p = 1; p < 3; p++) {
      if (!dpd_isa_available(paths[p])) {
        continue;
      }
      assert_int_equal(dpd_isa_set(paths[p]), DPD_OK);
      dpd_linreg_sim_result *b = run_ok(&s, model ? theta_star : NULL, sch, &cfg, t1);
      assert_same_result(a, b);
      assert_memory_equal(t0, t1, sizeof t0);
      dpd_linreg_sim_result_free(b);
    }
    dpd_linreg_sim_result_free(a);
  }
  assert_int_equal(dpd_isa_set(DPD_ISA_AUTO), DPD_OK);
  free_data(&s);
  dpd_schedule_free(sch);
}

/* (d) The same (float-representable) data stored as float32 or float64: identical results. */
static void float32_and_float64_storage_give_identical_results(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_CONST, 1.2);
  dataset s32, s64;
  make_data(&s32, 180, 19, 20, 1);
  make_data(&s64, 180, 19, 20, 0);
  dpd_linreg_sim_config cfg = base_cfg(160, 0.9, 3.0);
  cfg.seeds = 5;
  double t32[5], t64[5];
  dpd_linreg_sim_result *a = run_ok(&s32, NULL, sch, &cfg, t32);
  dpd_linreg_sim_result *b = run_ok(&s64, NULL, sch, &cfg, t64);
  assert_same_result(a, b);
  assert_memory_equal(t32, t64, sizeof t32);
  dpd_linreg_sim_result_free(a);
  dpd_linreg_sim_result_free(b);
  free_data(&s32);
  free_data(&s64);
  dpd_schedule_free(sch);
}

/* An independent Monte Carlo of the same law: other streams (seed 99991), the rows drawn
 * without replacement by rejection, Gaussians one at a time. Returns the mean and SE of the
 * released risk and of the risk at step n/2 over `reps` replicates. */
static void reference_mc(const dataset *s, const double *theta_star, const dpd_schedule *sch,
                         const dpd_linreg_sim_config *cfg, size_t reps, double out[4]) {
  const size_t d = s->D.d, n = cfg->n, n_pop = s->D.n_pop;
  double *eta = malloc(n * sizeof *eta), *sig = malloc(n * sizeof *sig);
  double *theta = malloc(d * sizeof *theta), *x = malloc(d * sizeof *x);
  int *used = malloc(n_pop * sizeof *used);
  assert_non_null(eta);
  assert_non_null(sig);
  assert_non_null(theta);
  assert_non_null(x);
  assert_non_null(used);
  dpd_schedule_steps(sch, n, cfg->rho, eta, sig);
  const double C = cfg->c * sqrt((double)d);
  const double *ref = theta_star != NULL ? theta_star : s->theta_hat;
  double sf = 0.0, sf2 = 0.0, sm = 0.0, sm2 = 0.0;
  for (size_t r = 0; r < reps; r++) {
    dpd_rng rng;
    dpd_rng_init(&rng, UINT64_C(99991), r);
    memset(used, 0, n_pop * sizeof *used);
    memset(theta, 0, d * sizeof *theta);
    double mid = 0.0;
    for (size_t k = 0; k < n; k++) {
      size_t j;
      do {
        j = (size_t)(dpd_rng_uniform(&rng) * (double)n_pop);
      } while (j >= n_pop || used[j]);
      used[j] = 1;
      pre_row(s, s->pop[j], x);
      double y = 0.0;
      if (theta_star != NULL) {
        for (size_t i = 0; i < d; i++) {
          y += x[i] * theta_star[i];
        }
        y += cfg->zeta * dpd_rng_gaussian(&rng);
      } else {
        y = pre_target(s, s->pop[j]);
      }
      double res = -y, nx = 0.0;
      for (size_t i = 0; i < d; i++) {
        res += x[i] * theta[i];
        nx += x[i] * x[i];
      }
      const double g = fabs(res) * sqrt(nx);
      const double f = g > C ? C / g : 1.0;
      for (size_t i = 0; i < d; i++) {
        theta[i] += -eta[k] * f * res * x[i] + 2.0 * C * sig[k] * dpd_rng_gaussian(&rng);
      }
      if (k + 1 == n / 2) {
        mid = direct_risk(s, theta, ref);
      }
    }
    const double fin = direct_risk(s, theta, ref);
    sf += fin;
    sf2 += fin * fin;
    sm += mid;
    sm2 += mid * mid;
  }
  const double R = (double)reps;
  out[0] = sf / R;
  out[1] = sqrt(fmax(0.0, sf2 / R - out[0] * out[0]) / (R - 1.0));
  out[2] = sm / R;
  out[3] = sqrt(fmax(0.0, sm2 / R - out[2] * out[2]) / (R - 1.0));
  free(eta);
  free(sig);
  free(theta);
  free(x);
  free(used);
}

/* (e) The mean released risk (and the risk at t = 1/2) over many replicates agrees with an
 * independent Monte Carlo of the same law within 4 SE (SE of both sides), file and model
 * targets, with partial clipping and privacy noise; n close to n_pop, so that drawing without
 * replacement matters. */
static void mean_risk_agrees_with_an_independent_monte_carlo(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_SQRT, 3.0);
  dataset s;
  make_data(&s, 52, 5, 0, 1);
  const double theta_star[5] = {0.71, -0.33, 0.52, 0.18, -0.64};
  const size_t reps = 6000;
  for (int model = 0; model <= 1; model++) {
    const double *ts = model ? theta_star : NULL;
    dpd_linreg_sim_config cfg = base_cfg(44, 0.6, 2.5);
    cfg.seeds = reps;
    cfg.grid = 3; /* t = 0, 1/2, 1: step 22 = n / 2 */
    cfg.threads = 2;
    dpd_linreg_sim_result *res = run_ok(&s, ts, sch, &cfg, NULL);
    double ref[4];
    reference_mc(&s, ts, sch, &cfg, reps, ref);
    const double zf = (res->final_risk - ref[0]) /
                      sqrt(res->final_risk_se * res->final_risk_se + ref[1] * ref[1]);
    const double zm =
        (res->risk_mean[1] - ref[2]) / sqrt(res->risk_se[1] * res->risk_se[1] + ref[3] * ref[3]);
    if (!(fabs(zf) < 4.0 && fabs(zm) < 4.0)) {
      print_error("targets %s: released %.6g +- %.2g vs %.6g +- %.2g (z %.2f); t = 1/2 %.6g +- "
                  "%.2g vs %.6g +- %.2g (z %.2f) (seed %llu)\n",
                  model ? "model" : "file", res->final_risk, res->final_risk_se, ref[0], ref[1], zf,
                  res->risk_mean[1], res->risk_se[1], ref[2], ref[3], zm,
                  (unsigned long long)cfg.seed);
      fail();
    }
    assert_true(res->clip_fraction_total > 0.05 && res->clip_fraction_total < 0.95);
    dpd_linreg_sim_result_free(res);
  }
  free_data(&s);
  dpd_schedule_free(sch);
}

/* (f) The held-out risk is (1/2) mean over the held-out rows of (x . theta_n - y)^2 (file
 * targets) or (x . (theta_n - theta*))^2 + zeta^2 (model targets), of the released theta_n. */
static void held_out_risk_is_the_direct_formula(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_CONST, 1.0);
  dataset s;
  make_data(&s, 160, 11, 40, 0);
  double theta_star[11], theta[11], x[11];
  for (size_t i = 0; i < 11; i++) {
    theta_star[i] = 0.5 * sin(0.9 * (double)i + 1.3);
  }
  for (int model = 0; model <= 1; model++) {
    const double *ts = model ? theta_star : NULL;
    dpd_linreg_sim_config cfg = base_cfg(100, 1.1, 4.0);
    double tr = NAN;
    dpd_linreg_sim_result *res = NULL;
    assert_int_equal(dpd__lrdata_sim_theta(&s.D, ts, sch, &cfg, 3, theta, &res, &tr, NULL), DPD_OK);
    double sum = 0.0;
    for (size_t t = 0; t < s.D.n_test; t++) {
      pre_row(&s, s.test[t], x);
      double r = model ? 0.0 : -pre_target(&s, s.test[t]);
      for (size_t i = 0; i < 11; i++) {
        r += x[i] * (model ? theta[i] - theta_star[i] : theta[i]);
      }
      sum += r * r;
    }
    const double want = 0.5 * sum / (double)s.D.n_test + (model ? 0.5 * cfg.zeta * cfg.zeta : 0.0);
    assert_rel(tr, want, 1e-12);
    dpd_linreg_sim_result_free(res);
  }
  free_data(&s);
  dpd_schedule_free(sch);
}

static int stop_at_once(void *user, size_t done, size_t total) {
  (void)user;
  (void)done;
  (void)total;
  return 1;
}

/* Bad configurations are refused with DPD_EINVAL, a divergence names the replicate and the step,
 * a stop request gives DPD_ECANCELLED; nothing is returned. */
static void errors_are_reported(void **state) {
  (void)state;
  dpd_schedule *sch = make_schedule(DPD_SCHEDULE_CONST, 1.0);
  dataset s;
  make_data(&s, 100, 9, 0, 1);
  dpd_linreg_sim_result *res = NULL;
  dpd_err err;
  dpd_linreg_sim_config cfg = base_cfg(101, INFINITY, INFINITY);
  dpd_err_reset(&err);
  assert_int_equal(dpd__lrdata_sim_run(&s.D, NULL, sch, &cfg, &res, NULL, &err), DPD_EINVAL);
  assert_null(res);
  assert_non_null(strstr(err.reason, "n = 101"));
  cfg = base_cfg(50, INFINITY, 2.0);
  assert_int_equal(dpd__lrdata_sim_run(&s.D, NULL, sch, &cfg, &res, NULL, NULL), DPD_EINVAL);
  cfg = base_cfg(50, 0.0, INFINITY);
  assert_int_equal(dpd__lrdata_sim_run(&s.D, NULL, sch, &cfg, &res, NULL, NULL), DPD_EINVAL);
  cfg = base_cfg(50, INFINITY, INFINITY);
  s.D.model_targets = 1;
  assert_int_equal(dpd__lrdata_sim_run(&s.D, NULL, sch, &cfg, &res, NULL, NULL), DPD_EINVAL);
  s.D.model_targets = 0;
  assert_null(res);

  dpd_schedule *big = make_schedule(DPD_SCHEDULE_CONST, 1e6);
  cfg = base_cfg(100, INFINITY, INFINITY);
  cfg.seeds = 3;
  dpd_err_reset(&err);
  assert_int_equal(dpd__lrdata_sim_run(&s.D, NULL, big, &cfg, &res, NULL, &err), DPD_ENONFINITE);
  assert_null(res);
  assert_non_null(strstr(err.reason, "replicate 0"));
  assert_non_null(strstr(err.reason, "diverged at step"));
  dpd_schedule_free(big);

  cfg = base_cfg(100, INFINITY, INFINITY);
  cfg.progress = stop_at_once;
  assert_int_equal(dpd__lrdata_sim_run(&s.D, NULL, sch, &cfg, &res, NULL, NULL), DPD_ECANCELLED);
  assert_null(res);
  free_data(&s);
  dpd_schedule_free(sch);
}

/* The memory model grows with the threads, n and the replicates' rows. */
static void memory_model_counts_threads_steps_and_replicates(void **state) {
  (void)state;
  const double base = dpd__lrdata_sim_bytes(784, 60000, 64, 101, 1.0);
  assert_true(base > 8.0 * (2.0 * 64 * 101 + 2.0 * 60000 + 4.0 * 784));
  assert_true(dpd__lrdata_sim_bytes(784, 60000, 64, 101, 2.0) > base + 8.0 * 4 * 784);
  assert_true(dpd__lrdata_sim_bytes(784, 60000, 128, 101, 1.0) > base + 8.0 * 64 * 2 * 101);
  assert_true(dpd__lrdata_sim_bytes(784, 120000, 64, 101, 1.0) > base + 16.0 * 60000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plain_sgd_on_the_rows_equals_the_direct_loop),
      cmocka_unit_test(clipped_private_steps_equal_the_direct_loop),
      cmocka_unit_test(results_are_bit_identical_for_any_thread_count),
      cmocka_unit_test(results_are_bit_identical_on_every_kernel_path),
      cmocka_unit_test(float32_and_float64_storage_give_identical_results),
      cmocka_unit_test(mean_risk_agrees_with_an_independent_monte_carlo),
      cmocka_unit_test(held_out_risk_is_the_direct_formula),
      cmocka_unit_test(errors_are_reported),
      cmocka_unit_test(memory_model_counts_threads_steps_and_replicates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
