/* Unit tests of the DP-SGD trainer (include/dpdyn/dpsgd.h).
 * SPDX-License-Identifier: MIT
 *
 * Against independent loops written here from the header's formulas (nothing shared with
 * src/core/dpsgd.c): with q = 1 (every record in every batch), noise 0 and the clipping norm
 * huge, DP-SGD is plain gradient descent, W <- W - lr/n sum_i r_i (x_i, 1); with clipping
 * active, the per-sample gradients formed explicitly as R x (d + bias) arrays, their norms
 * summed entry by entry, clipped and summed. The noise's scale with a data-free design (all-zero
 * features, no bias: every gradient is 0, so W_T = -(clip z / b) sum_s lr_s xi_s). Poisson batch
 * sizes against their mean (SE from the binomial variance), fixed batches exactly `batch`.
 * Calibration never overshoots and 0.02 % less noise does. Every kernel path this CPU has gives
 * the same bits. Seeds are fixed and printed on failure. */
#include "dpd_test.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dpdyn/dpsgd.h"
#include "dpdyn/isa.h"
#include "dpdyn/rng.h"

#define SEED 20291u

/* ---- helpers -------------------------------------------------------------------------------- */

/* `key` occurs in `text` as a whole word (not inside a longer identifier). */
static int names_key(const char *text, const char *key) {
  size_t len = strlen(key);
  for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
    int before = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    int after = !(isalnum((unsigned char)p[len]) || p[len] == '_');
    if (before && after) {
      return 1;
    }
  }
  return 0;
}

/* The library names the learning rate by the CLI's key 'eta'. */
static void expect_refused(const dpd_dpsgd_config *cfg, size_t n, size_t d, const char *key) {
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_dpsgd_check(cfg, n, d, &err);
  if (st != DPD_EINVAL || !names_key(err.reason, key)) {
    print_error("check: status %d, reason '%s': want DPD_EINVAL naming '%s'\n", st, err.reason,
                key);
    fail();
  }
  if (strcmp(key, "d") != 0) { /* steps does not read d */
    assert_int_equal(dpd_dpsgd_steps(cfg, n), 0);
  }
}

/* A reproducible data set: n x d features N(0, 1) scaled by `scale`, labels 0 .. K-1 shifted by
 * the first coordinate's sign (so that there is something to learn). */
static void make_data(size_t n, size_t d, size_t K, double scale, uint64_t seed, double *X,
                      int32_t *y) {
  dpd_rng rng;
  dpd_rng_init(&rng, seed, 7);
  dpd_rng_gaussian_fill(&rng, X, n * d);
  for (size_t i = 0; i < n; i++) {
    size_t c = (size_t)(dpd_rng_uniform(&rng) * (double)K) % K;
    if (X[i * d] > 0.5 && K > 2) {
      c = (c + 1) % K;
    }
    y[i] = (int32_t)c;
    for (size_t j = 0; j < d; j++) {
      X[i * d + j] = scale * X[i * d + j] + (j == c % d ? 0.8 : 0.0);
    }
  }
}

static size_t rows_of(dpd_dpsgd_loss loss, size_t K) {
  return loss == DPD_DPSGD_SOFTMAX ? K : 1;
}

/* The per-sample residual r (rows values) and loss of one record at W (the header's formulas). */
static double naive_residual(dpd_dpsgd_loss loss, size_t R, size_t d, int bias, const double *W,
                             const double *x, int32_t y, double *r) {
  const size_t P = d + (size_t)bias;
  double s[64] = {0};
  for (size_t k = 0; k < R; k++) {
    double acc = 0;
    for (size_t j = 0; j < d; j++) {
      acc += W[k * P + j] * x[j];
    }
    s[k] = acc + (bias ? W[k * P + d] : 0.0);
  }
  if (loss == DPD_DPSGD_SOFTMAX) {
    double m = s[0], z = 0;
    for (size_t k = 1; k < R; k++) {
      m = fmax(m, s[k]);
    }
    for (size_t k = 0; k < R; k++) {
      z += exp(s[k] - m);
    }
    for (size_t k = 0; k < R; k++) {
      r[k] = exp(s[k] - m) / z - (k == (size_t)y ? 1.0 : 0.0);
    }
    return m + log(z) - s[y];
  }
  const double yt = y == 1 ? 1.0 : -1.0, m = yt * s[0];
  if (loss == DPD_DPSGD_HINGE) {
    r[0] = m < 1 ? -yt : 0.0;
    return fmax(0.0, 1 - m);
  }
  r[0] = -yt / (1 + exp(m));
  return m > 0 ? log1p(exp(-m)) : -m + log1p(exp(m));
}

/* Full-batch DP-SGD without noise (q = 1: every record in every step, b = n), the per-sample
 * gradients formed explicitly (g_i[k][j] = r_k x_j, with x_d = 1 for the bias) and clipped by
 * their norm computed from those entries. W (R (d + bias), zeroed here) out; *clipped: the
 * fraction of per-sample gradients with norm > clip. */
static void naive_full_batch(dpd_dpsgd_loss loss, size_t K, int bias, const double *X,
                             const int32_t *y, size_t n, size_t d, size_t T, double lr,
                             double clip, double *W, double *clipped) {
  const size_t R = rows_of(loss, K), P = d + (size_t)bias;
  double *sum = calloc(R * P, sizeof *sum), *g = calloc(R * P, sizeof *g), r[64];
  size_t nclipped = 0;
  memset(W, 0, R * P * sizeof *W);
  for (size_t s = 0; s < T; s++) {
    memset(sum, 0, R * P * sizeof *sum);
    for (size_t i = 0; i < n; i++) {
      const double *x = X + i * d;
      (void)naive_residual(loss, R, d, bias, W, x, y[i], r);
      double sq = 0;
      for (size_t k = 0; k < R; k++) {
        for (size_t j = 0; j < P; j++) {
          g[k * P + j] = r[k] * (j < d ? x[j] : 1.0);
          sq += g[k * P + j] * g[k * P + j];
        }
      }
      const double norm = sqrt(sq), c = norm > clip ? clip / norm : 1.0;
      nclipped += norm > clip;
      for (size_t e = 0; e < R * P; e++) {
        sum[e] += c * g[e];
      }
    }
    for (size_t e = 0; e < R * P; e++) {
      W[e] -= lr / (double)n * sum[e];
    }
  }
  *clipped = (double)nclipped / (double)(n * T);
  free(sum);
  free(g);
}

static double naive_mean_loss(dpd_dpsgd_loss loss, size_t K, int bias, const double *W,
                              const double *X, const int32_t *y, size_t n, size_t d,
                              double *accuracy) {
  const size_t R = rows_of(loss, K), P = d + (size_t)bias;
  double total = 0, r[64];
  size_t right = 0;
  for (size_t i = 0; i < n; i++) {
    total += naive_residual(loss, R, d, bias, W, X + i * d, y[i], r);
    double best = -INFINITY;
    size_t arg = 0;
    for (size_t k = 0; k < R; k++) {
      double s = bias ? W[k * P + d] : 0.0;
      for (size_t j = 0; j < d; j++) {
        s += W[k * P + j] * X[i * d + j];
      }
      if (s > best) {
        best = s;
        arg = k;
      }
    }
    size_t pred = R == 1 ? (best > 0 ? 1 : 0) : arg;
    right += pred == (size_t)y[i];
  }
  *accuracy = (double)right / (double)n;
  return total / (double)n;
}

/* max |a - b| / max |b| over m entries. */
static double max_rel_diff(const double *a, const double *b, size_t m) {
  double num = 0, den = 0;
  for (size_t e = 0; e < m; e++) {
    num = fmax(num, fabs(a[e] - b[e]));
    den = fmax(den, fabs(b[e]));
  }
  return den > 0 ? num / den : num;
}

static dpd_dpsgd_model *train_ok(const dpd_dpsgd_config *cfg, const double *X, const int32_t *y,
                                 size_t n, size_t d) {
  dpd_dpsgd_model *m = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_dpsgd_train(cfg, X, y, n, d, &m, &err);
  if (st != DPD_OK) {
    print_error("train (seed %llu): status %d: %s\n", (unsigned long long)cfg->seed, st,
                err.reason);
    fail();
  }
  return m;
}

/* ---- names, defaults, checks ----------------------------------------------------------------- */

static void names_and_defaults_are_the_documented_ones(void **state) {
  (void)state;
  assert_string_equal(dpd_dpsgd_loss_name(DPD_DPSGD_SOFTMAX), "ce");
  assert_string_equal(dpd_dpsgd_loss_name(DPD_DPSGD_HINGE), "hinge");
  assert_string_equal(dpd_dpsgd_loss_name(DPD_DPSGD_LOGISTIC), "logistic");
  assert_null(dpd_dpsgd_loss_name((dpd_dpsgd_loss)3));
  assert_string_equal(dpd_dpsgd_sampling_name(DPD_DPSGD_POISSON), "poisson");
  assert_string_equal(dpd_dpsgd_sampling_name(DPD_DPSGD_FIXED), "fixed");
  assert_null(dpd_dpsgd_sampling_name((dpd_dpsgd_sampling)2));
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  assert_int_equal(c.loss, DPD_DPSGD_SOFTMAX);
  assert_int_equal(c.classes, 2);
  assert_int_equal(c.bias, 1);
  assert_int_equal(c.sampling, DPD_DPSGD_POISSON);
  assert_true(c.q == 0.01 && c.epochs == 10 && c.lr == 1 && c.clip == 1);
  assert_true(c.noise_multiplier == 0 && c.seed == 1 && c.stream == 0 && c.tag == 0);
  assert_int_equal(c.batch, 0);
  assert_int_equal(c.steps, 0);
  assert_null(c.schedule);
  dpd_err err;
  assert_int_equal(dpd_dpsgd_check(&c, 100, 5, &err), DPD_OK);
}

static void check_refuses_each_key_by_name(void **state) {
  (void)state;
  const dpd_dpsgd_config ok = dpd_dpsgd_config_default();
  const size_t n = 100, d = 5;
  dpd_dpsgd_config c;
  c = ok, c.loss = (dpd_dpsgd_loss)3, expect_refused(&c, n, d, "loss");
  c = ok, c.classes = 1, expect_refused(&c, n, d, "classes");
  c = ok, c.classes = 0, expect_refused(&c, n, d, "classes");
  c = ok, c.loss = DPD_DPSGD_HINGE, c.classes = 3, expect_refused(&c, n, d, "classes");
  c = ok, c.loss = DPD_DPSGD_LOGISTIC, c.classes = 10, expect_refused(&c, n, d, "classes");
  c = ok, c.q = 0, expect_refused(&c, n, d, "q");
  c = ok, c.q = -0.25, expect_refused(&c, n, d, "q");
  c = ok, c.q = 1.0000001, expect_refused(&c, n, d, "q");
  c = ok, c.q = NAN, expect_refused(&c, n, d, "q");
  c = ok, c.sampling = DPD_DPSGD_FIXED, c.batch = 0, expect_refused(&c, n, d, "batch");
  c = ok, c.sampling = DPD_DPSGD_FIXED, c.batch = n + 1, expect_refused(&c, n, d, "batch");
  c = ok, c.epochs = 0, expect_refused(&c, n, d, "epochs");
  c = ok, c.epochs = -2.5, expect_refused(&c, n, d, "epochs");
  c = ok, c.epochs = NAN, expect_refused(&c, n, d, "epochs");
  c = ok, c.steps = (size_t)1 << 29, expect_refused(&c, n, d, "steps");
  c = ok, c.epochs = 1e9, expect_refused(&c, n, d, "steps"); /* T = 1e11 >= 2^29 */
  c = ok, c.lr = 0, expect_refused(&c, n, d, "eta");
  c = ok, c.lr = -1.5, expect_refused(&c, n, d, "eta");
  c = ok, c.lr = INFINITY, expect_refused(&c, n, d, "eta");
  c = ok, c.lr = NAN, expect_refused(&c, n, d, "eta");
  c = ok, c.clip = 0, expect_refused(&c, n, d, "clip");
  c = ok, c.clip = INFINITY, expect_refused(&c, n, d, "clip");
  c = ok, c.clip = NAN, expect_refused(&c, n, d, "clip");
  c = ok, c.noise_multiplier = -0.1, expect_refused(&c, n, d, "noise_multiplier");
  c = ok, c.noise_multiplier = INFINITY, expect_refused(&c, n, d, "noise_multiplier");
  c = ok, c.noise_multiplier = NAN, expect_refused(&c, n, d, "noise_multiplier");
  c = ok, c.tag = 4, expect_refused(&c, n, d, "tag");
  expect_refused(&ok, 0, d, "n");
  expect_refused(&ok, n, 0, "d");
  /* the largest accepted: q = 1, batch = n, tag 3, steps 2^29 - 1, noise 0 */
  c = ok, c.q = 1, c.tag = 3, c.steps = ((size_t)1 << 29) - 1;
  dpd_err err;
  assert_int_equal(dpd_dpsgd_check(&c, n, d, &err), DPD_OK);
  c = ok, c.sampling = DPD_DPSGD_FIXED, c.batch = n;
  assert_int_equal(dpd_dpsgd_check(&c, n, d, &err), DPD_OK);
}

static void train_refuses_bad_labels_naming_the_row(void **state) {
  (void)state;
  const size_t n = 12, d = 3;
  double X[36];
  int32_t y[12];
  make_data(n, d, 3, 1.0, SEED, X, y);
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  c.classes = 3;
  c.steps = 2;
  const int32_t bad[3] = {3, -1, 1000};
  for (size_t k = 0; k < 3; k++) {
    int32_t yy[12];
    memcpy(yy, y, sizeof yy);
    yy[7] = bad[k];
    dpd_dpsgd_model *m = NULL;
    dpd_err err;
    dpd_err_reset(&err);
    assert_int_equal(dpd_dpsgd_train(&c, X, yy, n, d, &m, &err), DPD_EINVAL);
    assert_null(m);
    if (!names_key(err.reason, "labels") || !strstr(err.reason, "row 8")) {
      print_error("reason '%s': want 'labels' and the row 8 (1-based)\n", err.reason);
      fail();
    }
  }
  /* a config error is reported by train too, before any work */
  c.q = 2;
  dpd_dpsgd_model *m = NULL;
  dpd_err err;
  assert_int_equal(dpd_dpsgd_train(&c, X, y, n, d, &m, &err), DPD_EINVAL);
  assert_true(names_key(err.reason, "q"));
  assert_null(m);
  dpd_dpsgd_model_free(NULL);
}

static void steps_come_from_epochs_unless_given(void **state) {
  (void)state;
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  c.q = 0.25, c.epochs = 2;
  assert_int_equal(dpd_dpsgd_steps(&c, 1000), 8);
  c.q = 0.3, c.epochs = 2.5; /* 8.33 -> 9 */
  assert_int_equal(dpd_dpsgd_steps(&c, 1000), 9);
  c.q = 0.013, c.epochs = 10; /* 769.2 -> 770 */
  assert_int_equal(dpd_dpsgd_steps(&c, 1000), 770);
  c.q = 1, c.epochs = 0.37; /* less than one epoch: one step */
  assert_int_equal(dpd_dpsgd_steps(&c, 1000), 1);
  c.steps = 17; /* given: overrides */
  assert_int_equal(dpd_dpsgd_steps(&c, 1000), 17);
  c = dpd_dpsgd_config_default();
  c.sampling = DPD_DPSGD_FIXED, c.batch = 7, c.epochs = 3; /* q = 7/100: 42.86 -> 43 */
  assert_int_equal(dpd_dpsgd_steps(&c, 100), 43);
  c.batch = 25, c.epochs = 2; /* q = 1/4: 8 */
  assert_int_equal(dpd_dpsgd_steps(&c, 100), 8);
  assert_int_equal(dpd_dpsgd_steps(&c, 10), 0); /* batch > n: invalid */
}

/* ---- against plain gradient descent ------------------------------------------------------------ */

/* q = 1, noise 0, clip huge: DP-SGD is gradient descent with the step lr (sum / n). */
static void full_batch_equals_gradient_descent(dpd_dpsgd_loss loss, int bias,
                                               dpd_dpsgd_sampling sampling) {
  const size_t n = 97, d = 13, K = loss == DPD_DPSGD_SOFTMAX ? 4 : 2, T = 31;
  const size_t R = rows_of(loss, K), P = d + (size_t)bias;
  double *X = malloc(n * d * sizeof *X), W[64 * 16], acc_naive;
  int32_t *y = malloc(n * sizeof *y);
  make_data(n, d, K, 0.7, SEED + (uint64_t)loss, X, y);
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  c.loss = loss;
  c.classes = K;
  c.bias = bias;
  c.sampling = sampling;
  c.q = 1;
  c.batch = n;
  c.steps = T;
  c.lr = 0.37;
  c.clip = 1e300;
  c.noise_multiplier = 0;
  c.seed = SEED;
  dpd_dpsgd_model *m = train_ok(&c, X, y, n, d);
  double clipped;
  naive_full_batch(loss, K, bias, X, y, n, d, T, c.lr, c.clip, W, &clipped);
  assert_int_equal(m->rows, R);
  assert_int_equal(m->d, d);
  assert_int_equal(m->classes, K);
  assert_int_equal(m->bias, bias);
  assert_int_equal(m->steps, T);
  assert_true(m->mean_batch == (double)n);
  assert_true(m->clipped_fraction == 0);
  assert_true(m->noise_multiplier == 0 && m->clip == c.clip && m->lr == c.lr);
  const double rel = max_rel_diff(m->W, W, R * P);
  if (!(rel <= 1e-13)) {
    print_error("loss %s bias %d sampling %s: max rel diff of W %.3g > 1e-13\n",
                dpd_dpsgd_loss_name(loss), bias, dpd_dpsgd_sampling_name(sampling), rel);
    fail();
  }
  const double want_loss = naive_mean_loss(loss, K, bias, W, X, y, n, d, &acc_naive);
  assert_rel(m->train_loss, want_loss, 1e-12);
  assert_true(m->train_accuracy == acc_naive);
  assert_true(acc_naive > 0.5); /* it learned something */
  double acc, l;
  dpd_dpsgd_evaluate(m, X, y, n, &acc, &l);
  assert_true(acc == m->train_accuracy);
  assert_rel(l, m->train_loss, 1e-14);
  int32_t *pred = malloc(n * sizeof *pred);
  dpd_dpsgd_predict(m, X, n, pred);
  size_t right = 0;
  for (size_t i = 0; i < n; i++) {
    assert_true(pred[i] >= 0 && (size_t)pred[i] < K);
    right += pred[i] == y[i];
  }
  assert_true((double)right / (double)n == acc);
  /* a label outside 0 .. K-1 counts as an error in the accuracy */
  int32_t *yb = malloc(n * sizeof *yb);
  memcpy(yb, y, n * sizeof *yb);
  const size_t wrong_row = pred[5] == y[5] ? 5 : 6;
  yb[wrong_row] = (int32_t)K;
  dpd_dpsgd_evaluate(m, X, yb, n, &acc, NULL);
  assert_true(acc == (double)(right - (pred[wrong_row] == y[wrong_row])) / (double)n);
  free(yb);
  dpd_dpsgd_model_free(m);
  free(pred);
  free(X);
  free(y);
}

static void full_batch_ce_is_gradient_descent(void **state) {
  (void)state;
  full_batch_equals_gradient_descent(DPD_DPSGD_SOFTMAX, 1, DPD_DPSGD_POISSON);
  full_batch_equals_gradient_descent(DPD_DPSGD_SOFTMAX, 0, DPD_DPSGD_POISSON);
  full_batch_equals_gradient_descent(DPD_DPSGD_SOFTMAX, 1, DPD_DPSGD_FIXED);
}

static void full_batch_hinge_is_gradient_descent(void **state) {
  (void)state;
  full_batch_equals_gradient_descent(DPD_DPSGD_HINGE, 1, DPD_DPSGD_POISSON);
  full_batch_equals_gradient_descent(DPD_DPSGD_HINGE, 0, DPD_DPSGD_FIXED);
}

static void full_batch_logistic_is_gradient_descent(void **state) {
  (void)state;
  full_batch_equals_gradient_descent(DPD_DPSGD_LOGISTIC, 1, DPD_DPSGD_POISSON);
  full_batch_equals_gradient_descent(DPD_DPSGD_LOGISTIC, 0, DPD_DPSGD_POISSON);
}

/* Clipping active (most per-sample gradients longer than clip): the same as the explicit
 * per-sample gradients, clipped by their norms computed entry by entry. */
static void clipping_matches_explicit_per_sample_gradients(void **state) {
  (void)state;
  const dpd_dpsgd_loss losses[3] = {DPD_DPSGD_SOFTMAX, DPD_DPSGD_HINGE, DPD_DPSGD_LOGISTIC};
  for (size_t li = 0; li < 3; li++) {
    for (int bias = 0; bias <= 1; bias++) {
      const dpd_dpsgd_loss loss = losses[li];
      const size_t n = 83, d = 11, K = loss == DPD_DPSGD_SOFTMAX ? 5 : 2, T = 23;
      const size_t R = rows_of(loss, K), P = d + (size_t)bias;
      double *X = malloc(n * d * sizeof *X), W[64 * 16], clipped;
      int32_t *y = malloc(n * sizeof *y);
      make_data(n, d, K, 1.9, SEED + 11 * li, X, y);
      dpd_dpsgd_config c = dpd_dpsgd_config_default();
      c.loss = loss, c.classes = K, c.bias = bias, c.q = 1, c.steps = T, c.lr = 0.61;
      c.clip = 0.43, c.noise_multiplier = 0, c.seed = SEED;
      dpd_dpsgd_model *m = train_ok(&c, X, y, n, d);
      naive_full_batch(loss, K, bias, X, y, n, d, T, c.lr, c.clip, W, &clipped);
      const double rel = max_rel_diff(m->W, W, R * P);
      if (!(rel <= 1e-12)) {
        print_error("loss %s bias %d: max rel diff of W %.3g > 1e-12\n",
                    dpd_dpsgd_loss_name(loss), bias, rel);
        fail();
      }
      assert_true(clipped > 0.2);
      assert_abs(m->clipped_fraction, clipped, 0.5 / (double)(n * T));
      dpd_dpsgd_model_free(m);
      free(X);
      free(y);
    }
  }
}

/* ---- sampling ---------------------------------------------------------------------------------- */

static void poisson_batches_have_mean_qn_and_fixed_exactly_batch(void **state) {
  (void)state;
  const size_t n = 2000, d = 3, T = 400;
  double *X = malloc(n * d * sizeof *X);
  int32_t *y = malloc(n * sizeof *y);
  make_data(n, d, 2, 1.0, SEED, X, y);
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  c.steps = T, c.lr = 0.01, c.noise_multiplier = 0.5;
  const double qs[3] = {0.05, 0.0031, 0.5};
  for (size_t k = 0; k < 3; k++) {
    c.q = qs[k];
    c.seed = SEED + k;
    dpd_dpsgd_model *m = train_ok(&c, X, y, n, d);
    const double mean = (double)n * c.q, se = sqrt((double)n * c.q * (1 - c.q) / (double)T);
    if (!(fabs(m->mean_batch - mean) <= 4 * se)) {
      print_error("q %g seed %u: mean batch %.4f, want %.4f +- 4 x %.4f\n", c.q, SEED + (unsigned)k,
                  m->mean_batch, mean, se);
      fail();
    }
    dpd_dpsgd_model_free(m);
  }
  c.sampling = DPD_DPSGD_FIXED;
  const size_t batches[3] = {37, 1, n};
  for (size_t k = 0; k < 3; k++) {
    c.batch = batches[k];
    dpd_dpsgd_model *m = train_ok(&c, X, y, n, d);
    assert_true(m->mean_batch == (double)batches[k]);
    dpd_dpsgd_model_free(m);
  }
  free(X);
  free(y);
}

/* ---- bits ---------------------------------------------------------------------------------------- */

static int same_model(const dpd_dpsgd_model *a, const dpd_dpsgd_model *b) {
  return a->rows == b->rows && a->d == b->d && a->bias == b->bias &&
         memcmp(a->W, b->W, a->rows * (a->d + (size_t)a->bias) * sizeof *a->W) == 0 &&
         memcmp(&a->train_loss, &b->train_loss, sizeof a->train_loss) == 0 &&
         a->train_accuracy == b->train_accuracy && a->mean_batch == b->mean_batch &&
         a->clipped_fraction == b->clipped_fraction;
}

static void same_bits_on_every_path_and_every_call(void **state) {
  (void)state;
  const size_t n = 301, d = 37, K = 3;
  double *X = malloc(n * d * sizeof *X);
  int32_t *y = malloc(n * sizeof *y);
  make_data(n, d, K, 1.3, SEED, X, y);
  dpd_schedule_config sc = dpd_schedule_config_default();
  sc.kind = DPD_SCHEDULE_COSINE;
  sc.eta_min = 0;
  dpd_schedule *sched = NULL;
  assert_int_equal(dpd_schedule_create(&sc, &sched, NULL), DPD_OK);
  const dpd_isa paths[3] = {DPD_ISA_SCALAR, DPD_ISA_AVX2, DPD_ISA_AVX512};
  for (int variant = 0; variant < 4; variant++) {
    dpd_dpsgd_config c = dpd_dpsgd_config_default();
    c.loss = variant == 3 ? DPD_DPSGD_LOGISTIC : DPD_DPSGD_SOFTMAX;
    c.classes = variant == 3 ? 2 : K;
    c.bias = variant != 1;
    c.sampling = variant == 2 ? DPD_DPSGD_FIXED : DPD_DPSGD_POISSON;
    c.q = 0.1, c.batch = 29, c.epochs = 3, c.lr = 0.8, c.clip = 0.7, c.noise_multiplier = 1.3;
    c.schedule = variant == 2 ? sched : NULL;
    c.seed = SEED, c.stream = 5, c.tag = 2;
    int32_t *yy = malloc(n * sizeof *yy);
    for (size_t i = 0; i < n; i++) {
      yy[i] = c.classes == 2 ? y[i] % 2 : y[i];
    }
    assert_int_equal(dpd_isa_set(DPD_ISA_SCALAR), DPD_OK);
    dpd_dpsgd_model *ref = train_ok(&c, X, yy, n, d);
    assert_true(ref->clipped_fraction > 0 && ref->clipped_fraction < 1);
    for (size_t p = 0; p < 3; p++) {
      if (!dpd_isa_available(paths[p])) {
        continue;
      }
      assert_int_equal(dpd_isa_set(paths[p]), DPD_OK);
      for (int again = 0; again < 2; again++) {
        dpd_dpsgd_model *m = train_ok(&c, X, yy, n, d);
        if (!same_model(m, ref)) {
          print_error("variant %d: path %s (call %d) differs from scalar\n", variant,
                      dpd_isa_name(paths[p]), again);
          fail();
        }
        dpd_dpsgd_model_free(m);
      }
    }
    assert_int_equal(dpd_isa_set(DPD_ISA_AUTO), DPD_OK);
    /* another seed, stream or tag: another run */
    dpd_dpsgd_config o = c;
    o.seed = SEED + 1;
    dpd_dpsgd_model *m1 = train_ok(&o, X, yy, n, d);
    o = c, o.stream = 6;
    dpd_dpsgd_model *m2 = train_ok(&o, X, yy, n, d);
    o = c, o.tag = 1;
    dpd_dpsgd_model *m3 = train_ok(&o, X, yy, n, d);
    const size_t m = ref->rows * (d + (size_t)c.bias) * sizeof *ref->W;
    assert_true(memcmp(m1->W, ref->W, m) != 0);
    assert_true(memcmp(m2->W, ref->W, m) != 0);
    assert_true(memcmp(m3->W, ref->W, m) != 0);
    dpd_dpsgd_model_free(m1);
    dpd_dpsgd_model_free(m2);
    dpd_dpsgd_model_free(m3);
    dpd_dpsgd_model_free(ref);
    free(yy);
  }
  dpd_schedule_free(sched);
  free(X);
  free(y);
}

/* ---- the noise --------------------------------------------------------------------------------- */

/* All-zero features and no bias: every per-sample gradient is 0, so W_T = -(z clip / b)
 * sum_s lr_s xi_s: each of the R d entries is N(0, (z clip / b)^2 sum_s lr_s^2), independently.
 * The sample variance of the entries against it within 4 SE (SE = var sqrt(2 / (m - 1))), the
 * mean within 4 SE. With the cosine schedule, lr_s = lr (1 + cos(pi s / T)) / 2. */
static void noise_has_the_documented_scale(void **state) {
  (void)state;
  const size_t n = 300, d = 250, K = 4;
  double *X = calloc(n * d, sizeof *X);
  int32_t *y = calloc(n, sizeof *y);
  for (size_t i = 0; i < n; i++) {
    y[i] = (int32_t)(i % K);
  }
  dpd_schedule_config sc = dpd_schedule_config_default();
  sc.kind = DPD_SCHEDULE_COSINE;
  sc.eta_min = 0;
  dpd_schedule *sched = NULL;
  assert_int_equal(dpd_schedule_create(&sc, &sched, NULL), DPD_OK);
  for (int variant = 0; variant < 3; variant++) {
    dpd_dpsgd_config c = dpd_dpsgd_config_default();
    c.classes = K, c.bias = 0, c.steps = 50, c.lr = 0.9, c.clip = 0.6, c.noise_multiplier = 1.7;
    c.seed = SEED + (uint64_t)variant;
    double b = 0, sum_lr2 = 0;
    if (variant == 1) {
      c.sampling = DPD_DPSGD_FIXED, c.batch = 45, b = 45;
    } else {
      c.q = 0.2, b = 0.2 * (double)n;
    }
    if (variant == 2) {
      c.schedule = sched;
    }
    for (size_t s = 0; s < c.steps; s++) {
      const double lr = c.schedule ? c.lr * dpd_schedule_eval(sched, (double)s / (double)c.steps)
                                   : c.lr;
      sum_lr2 += lr * lr;
    }
    const double want = c.noise_multiplier * c.noise_multiplier * c.clip * c.clip * sum_lr2 /
                        (b * b);
    dpd_dpsgd_model *m = train_ok(&c, X, y, n, d);
    const size_t mm = K * d;
    double mean = 0, var = 0;
    for (size_t e = 0; e < mm; e++) {
      mean += m->W[e];
    }
    mean /= (double)mm;
    for (size_t e = 0; e < mm; e++) {
      var += (m->W[e] - mean) * (m->W[e] - mean);
    }
    var /= (double)(mm - 1);
    const double se_var = want * sqrt(2.0 / (double)(mm - 1)), se_mean = sqrt(want / (double)mm);
    if (!(fabs(var - want) <= 4 * se_var) || !(fabs(mean) <= 4 * se_mean)) {
      print_error("variant %d seed %llu: var %.6g want %.6g (SE %.3g), mean %.3g (SE %.3g)\n",
                  variant, (unsigned long long)c.seed, var, want, se_var, mean, se_mean);
      fail();
    }
    assert_true(m->clipped_fraction == 0);
    dpd_dpsgd_model_free(m);
  }
  dpd_schedule_free(sched);
  free(X);
  free(y);
}

/* ---- calibration ---------------------------------------------------------------------------------- */

static void calibrate_one(const dpd_dpsgd_config *c, size_t n, double eps, double delta) {
  double z = 0;
  dpd_account_result at;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_dpsgd_calibrate(c, n, eps, delta, &z, &at, &err);
  if (st != DPD_OK) {
    print_error("calibrate eps %g delta %g: %s\n", eps, delta, err.reason);
    fail();
  }
  if (!(at.epsilon <= eps && at.epsilon >= eps * (1 - 1e-3))) {
    print_error("calibrate eps %g: at z = %.8g the accountant's eps %.8g (want in [%.8g, %g])\n",
                eps, z, at.epsilon, eps * (1 - 1e-3), eps);
    fail();
  }
  /* re-account at z and at 0.02 % less noise, on the calibration's grid (at.h): the first
   * within the target, the second above it. At the automatic grid the accountant's answer at z
   * is another upper bound, within its accuracy (1 %) of the target but not always below it
   * (measured: 0.70007 for the target 0.7 at q = 256/54000, T = 211): what a run reports as
   * its epsilon must be `at`, the calibration's own accounting. */
  dpd_account a;
  dpd_account_segment seg;
  dpd_account_result r;
  dpd_dpsgd_account_of(c, n, z, &a, &seg);
  assert_int_equal(a.nsegments, 1);
  assert_ptr_equal(a.segments, &seg);
  assert_int_equal(seg.steps, dpd_dpsgd_steps(c, n));
  assert_int_equal(dpd_account_epsilon(&a, delta, &r, &err), DPD_OK);
  assert_true(r.epsilon <= eps * 1.01);
  a.h = at.h;
  assert_int_equal(dpd_account_epsilon(&a, delta, &r, &err), DPD_OK);
  if (!(r.epsilon <= eps)) {
    print_error("calibrate eps %g: z %.10g (at: eps %.10g, h %.4g); re-accounted on its grid: "
                "eps %.10g (h %.4g) > target\n",
                eps, z, at.epsilon, at.h, r.epsilon, r.h);
    fail();
  }
  dpd_dpsgd_account_of(c, n, z * (1 - 2e-4), &a, &seg);
  a.h = at.h;
  assert_int_equal(dpd_account_epsilon(&a, delta, &r, &err), DPD_OK);
  if (!(r.epsilon > eps)) {
    print_error("calibrate eps %g: 0.02 %% less noise (z %.8g, h %.4g) gives eps %.8g <= target\n",
                eps, z * (1 - 2e-4), at.h, r.epsilon);
    fail();
  }
}

static void calibration_meets_the_target_and_never_overshoots(void **state) {
  (void)state;
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  c.q = 0.02, c.epochs = 2; /* T = 100 */
  calibrate_one(&c, 5000, 1.5, 1e-5);
  c.q = 256.0 / 54000.0, c.epochs = 1;
  calibrate_one(&c, 54000, 0.7, 1e-5);
  c.sampling = DPD_DPSGD_FIXED, c.batch = 100, c.epochs = 3; /* replace-one */
  calibrate_one(&c, 5000, 2.0, 1e-6);
  /* the accountant's description */
  dpd_account a;
  dpd_account_segment seg;
  dpd_dpsgd_account_of(&c, 5000, 1.25, &a, &seg);
  assert_int_equal(a.mechanism, DPD_MECHANISM_SUBSAMPLED);
  assert_int_equal(a.sampling, DPD_SAMPLING_FIXED);
  assert_int_equal(a.neighbours, DPD_NEIGHBOURS_REPLACE_ONE);
  assert_int_equal(a.n, 5000);
  assert_int_equal(seg.batch, 100);
  assert_true(seg.sigma == 1.25);
  c = dpd_dpsgd_config_default();
  c.q = 0.03;
  dpd_dpsgd_account_of(&c, 5000, 0.9, &a, &seg);
  assert_int_equal(a.sampling, DPD_SAMPLING_POISSON);
  assert_int_equal(a.neighbours, DPD_NEIGHBOURS_ADD_REMOVE);
  assert_true(seg.q == 0.03 && seg.sigma == 0.9);
  assert_int_equal(seg.steps, 334);
}

static void calibration_refusals_and_infinity(void **state) {
  (void)state;
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  double z = 7;
  dpd_account_result at;
  at.epsilon = -3;
  dpd_err err;
  assert_int_equal(dpd_dpsgd_calibrate(&c, 1000, INFINITY, 1e-5, &z, &at, &err), DPD_OK);
  assert_true(z == 0);
  assert_true(at.epsilon == -3); /* untouched */
  const double bad_eps[3] = {0, -1, NAN};
  for (size_t k = 0; k < 3; k++) {
    dpd_err_reset(&err);
    assert_int_equal(dpd_dpsgd_calibrate(&c, 1000, bad_eps[k], 1e-5, &z, NULL, &err), DPD_EINVAL);
    assert_true(names_key(err.reason, "epsilon"));
  }
  const double bad_delta[3] = {0, 1, NAN};
  for (size_t k = 0; k < 3; k++) {
    dpd_err_reset(&err);
    assert_int_equal(dpd_dpsgd_calibrate(&c, 1000, 1, bad_delta[k], &z, NULL, &err), DPD_EINVAL);
    assert_true(names_key(err.reason, "delta"));
  }
  c.q = 0;
  dpd_err_reset(&err);
  assert_int_equal(dpd_dpsgd_calibrate(&c, 1000, 1, 1e-5, &z, NULL, &err), DPD_EINVAL);
  assert_true(names_key(err.reason, "q"));
}

/* Divergence is reported, naming the step: logistic loss on huge features (|x|^2 still finite,
 * so that the clipping weights stay 1) with a huge rate. */
static void nonfinite_weights_are_reported(void **state) {
  (void)state;
  const size_t n = 40, d = 4;
  double X[160];
  int32_t y[40];
  make_data(n, d, 2, 1.0, SEED, X, y);
  for (size_t e = 0; e < n * d; e++) {
    X[e] *= 1e150;
  }
  dpd_dpsgd_config c = dpd_dpsgd_config_default();
  c.q = 1, c.steps = 5, c.lr = 1e300, c.clip = 1e300;
  dpd_dpsgd_model *m = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_dpsgd_train(&c, X, y, n, d, &m, &err), DPD_ENONFINITE);
  assert_null(m);
  assert_true(names_key(err.reason, "step"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_and_defaults_are_the_documented_ones),
      cmocka_unit_test(check_refuses_each_key_by_name),
      cmocka_unit_test(train_refuses_bad_labels_naming_the_row),
      cmocka_unit_test(steps_come_from_epochs_unless_given),
      cmocka_unit_test(full_batch_ce_is_gradient_descent),
      cmocka_unit_test(full_batch_hinge_is_gradient_descent),
      cmocka_unit_test(full_batch_logistic_is_gradient_descent),
      cmocka_unit_test(clipping_matches_explicit_per_sample_gradients),
      cmocka_unit_test(poisson_batches_have_mean_qn_and_fixed_exactly_batch),
      cmocka_unit_test(same_bits_on_every_path_and_every_call),
      cmocka_unit_test(noise_has_the_documented_scale),
      cmocka_unit_test(calibration_meets_the_target_and_never_overshoots),
      cmocka_unit_test(calibration_refusals_and_infinity),
      cmocka_unit_test(nonfinite_weights_are_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
