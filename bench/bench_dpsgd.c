/* DP-SGD trainer speed (issue 29 s4): one epoch of dpd_dpsgd_train beside the two GEMMs it needs.
 * SPDX-License-Identifier: MIT
 *
 * Reads a data set written by bench/bench_dpsgd_numpy.py export (raw little-endian float64
 * rows x d, int32 labels) and, for the given Poisson rate q (softmax cross-entropy over K classes
 * with a bias, clip 1, noise multiplier z, lr 1, one epoch: T = ceil(1 / q)):
 *   - dpd_dpsgd_train's time (the whole call: training, then the final loss and accuracy over
 *     the n rows), median and minimum of `repeats`, and its steps, mean batch, clipped fraction,
 *     train loss and accuracy;
 *   - the cost of the two GEMMs one epoch needs, with OpenBLAS (cblas_dgemm, the threads as
 *     OPENBLAS_NUM_THREADS says; bench_dpsgd.sh sets 1): S = X W^T (n x d by d x K) and
 *     G = R^T X (K x n by n x d), median of `repeats`;
 *   - where the time goes: the same epoch with noise multiplier 0 (the noise's share), with
 *     K = 2 (the per-class work), and the final evaluation alone (dpd_dpsgd_evaluate over the n
 *     rows: a forward pass, which the training's time includes), median of `repeats`; and a
 *     training of 5 epochs: (t5 - t1) / 4 is the marginal cost of an epoch, without what a
 *     training pays once (the final evaluation, the pass for the row norms);
 *   - the uniform fill of n values per step that the stream rule makes (dpd_rng_uniform_fill of
 *     n, T times: the sampling's floor), median of `repeats`.
 * Prints '#' lines and key=value lines (bench_dpsgd.sh reads them):
 *   dpd_seconds_median, dpd_seconds_min, dpd_steps, dpd_mean_batch, dpd_clipped_fraction,
 *   dpd_train_loss, dpd_train_accuracy, gemm_seconds_median, gemm_gflops, dpd_z0_seconds_median,
 *   dpd_k2_seconds_median, eval_seconds_median, uniform_seconds_median, dpd_e5_seconds_median,
 *   dpd_epoch_marginal_seconds, dpd_w_fnv1a (a hash of the trained W's bytes: compares builds)
 * Usage: dpd_bench_dpsgd X.f64 Y.i32 ROWS D [q (256/54000)] [classes (10)] [z (1)]
 *                        [repeats (5)] [isa (auto)] */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dpdyn/dpsgd.h"
#include "dpdyn/isa.h"
#include "dpdyn/rng.h"

#include "bench_timing.h"

#define MAX_REPEATS 101


static double min_of(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = fmin(m, v[i]);
  return m;
}

static void *read_raw(const char *path, size_t bytes) {
  FILE *f = fopen(path, "rb");
  void *p = f ? malloc(bytes) : NULL;
  if (p && fread(p, 1, bytes, f) != bytes) {
    free(p);
    p = NULL;
  }
  if (f)
    fclose(f);
  return p;
}

/* FNV-1a over the bytes of W: two builds (or paths) trained the same bits iff equal. */
static unsigned long long w_hash(const dpd_dpsgd_model *m) {
  const unsigned char *p = (const unsigned char *)m->W;
  const size_t bytes = m->rows * (m->d + (size_t)m->bias) * sizeof *m->W;
  unsigned long long h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; i++) {
    h = (h ^ p[i]) * 1099511628211ull;
  }
  return h;
}

/* One training; its time, or NAN on failure (the reason on stderr). */
static double train_once(const dpd_dpsgd_config *cfg, const double *X, const int32_t *y,
                         size_t n, size_t d, dpd_dpsgd_model **keep) {
  dpd_dpsgd_model *m = NULL;
  dpd_err err;
  double t0 = now_s();
  int st = dpd_dpsgd_train(cfg, X, y, n, d, &m, &err);
  double t = now_s() - t0;
  if (st != DPD_OK) {
    fprintf(stderr, "dpd_bench_dpsgd: %s\n", err.reason);
    return NAN;
  }
  if (keep) {
    dpd_dpsgd_model_free(*keep);
    *keep = m;
  } else {
    dpd_dpsgd_model_free(m);
  }
  return t;
}

static double train_median(const dpd_dpsgd_config *cfg, const double *X, const int32_t *y,
                           size_t n, size_t d, int repeats) {
  double t[MAX_REPEATS];
  for (int r = 0; r < repeats; r++)
    t[r] = train_once(cfg, X, y, n, d, NULL);
  return median(t, repeats);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: dpd_bench_dpsgd X.f64 Y.i32 ROWS D [q] [classes] [z] [repeats] "
                    "[isa]\n");
    return 1;
  }
  const size_t n = (size_t)strtoull(argv[3], NULL, 10), d = (size_t)strtoull(argv[4], NULL, 10);
  const double q = argc > 5 ? atof(argv[5]) : 256.0 / 54000.0;
  const size_t K = argc > 6 ? (size_t)strtoull(argv[6], NULL, 10) : 10;
  const double z = argc > 7 ? atof(argv[7]) : 1.0;
  const int repeats = argc > 8 ? atoi(argv[8]) : 5;
  dpd_isa isa = DPD_ISA_AUTO;
  if (argc > 9 && (dpd_isa_parse(argv[9], &isa) != DPD_OK || dpd_isa_set(isa) != DPD_OK)) {
    fprintf(stderr, "dpd_bench_dpsgd: isa '%s' unknown or not on this CPU\n", argv[9]);
    return 1;
  }
  if (n == 0 || d == 0 || K < 2 || repeats < 1 || repeats > MAX_REPEATS) {
    fprintf(stderr, "dpd_bench_dpsgd: ROWS, D >= 1, classes >= 2, repeats in [1, %d]\n",
            MAX_REPEATS);
    return 1;
  }
  double *X = read_raw(argv[1], n * d * sizeof *X);
  int32_t *y = read_raw(argv[2], n * sizeof *y);
  if (!X || !y) {
    fprintf(stderr, "dpd_bench_dpsgd: cannot read %s or %s (%zu x %zu)\n", argv[1], argv[2], n, d);
    return 1;
  }
  int32_t *y2 = malloc(n * sizeof *y2); /* labels folded to 2 classes for the K = 2 run */
  for (size_t i = 0; i < n; i++)
    y2[i] = y[i] % 2;

  dpd_dpsgd_config cfg = dpd_dpsgd_config_default();
  cfg.loss = DPD_DPSGD_SOFTMAX;
  cfg.classes = K;
  cfg.q = q;
  cfg.epochs = 1;
  cfg.lr = 1;
  cfg.clip = 1;
  cfg.noise_multiplier = z;
  cfg.seed = 12345;
  printf("# dpd_bench_dpsgd: n=%zu d=%zu K=%zu q=%.6g (expected batch %.1f) z=%g clip=1 lr=1 "
         "bias=1, one epoch, isa=%s, median of %d\n",
         n, d, K, q, q * (double)n, z, dpd_isa_name(dpd_isa_get()), repeats);

  dpd_dpsgd_model *m = NULL;
  double t[MAX_REPEATS];
  (void)train_once(&cfg, X, y, n, d, NULL); /* warm-up: page in X */
  for (int r = 0; r < repeats; r++)
    t[r] = train_once(&cfg, X, y, n, d, &m);
  if (!m)
    return 2;
  const double tmin = min_of(t, repeats), tmed = median(t, repeats);

  /* the two GEMMs of one epoch (every row once in expectation) */
  const size_t R = K;
  double *W = malloc(R * d * sizeof *W), *S = malloc(n * R * sizeof *S);
  double *G = malloc(R * d * sizeof *G);
  for (size_t i = 0; i < R * d; i++)
    W[i] = 1e-3 * (double)(i % 7);
  for (size_t i = 0; i < n * R; i++)
    S[i] = 1e-3 * (double)(i % 5);
  double tg[MAX_REPEATS];
  for (int r = 0; r <= repeats; r++) { /* r = 0: warm-up */
    double t0 = now_s();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)R, (int)d, 1.0, X, (int)d,
                W, (int)d, 0.0, S, (int)R);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)R, (int)d, (int)n, 1.0, S, (int)R,
                X, (int)d, 0.0, G, (int)d);
    if (r > 0)
      tg[r - 1] = now_s() - t0;
  }
  const double tgemm = median(tg, repeats);
  const double gflops = 4.0 * (double)n * (double)d * (double)R / tgemm * 1e-9;

  /* where the time goes */
  dpd_dpsgd_config c0 = cfg;
  c0.noise_multiplier = 0;
  const double tz0 = train_median(&c0, X, y, n, d, repeats);
  dpd_dpsgd_config c2 = cfg;
  c2.classes = 2;
  const double tk2 = train_median(&c2, X, y2, n, d, repeats);
  dpd_dpsgd_config c5 = cfg;
  c5.epochs = 5;
  const double te5 = train_median(&c5, X, y, n, d, repeats);
  double te[MAX_REPEATS], acc = 0, loss = 0;
  for (int r = 0; r < repeats; r++) {
    double t0 = now_s();
    dpd_dpsgd_evaluate(m, X, y, n, &acc, &loss);
    te[r] = now_s() - t0;
  }
  const double teval = median(te, repeats);
  const size_t T = dpd_dpsgd_steps(&cfg, n);
  double *u = malloc(n * sizeof *u), tu[MAX_REPEATS];
  for (int r = 0; r < repeats; r++) {
    dpd_rng rng;
    dpd_rng_init(&rng, 1, 2);
    double t0 = now_s();
    for (size_t s = 0; s < T; s++)
      dpd_rng_uniform_fill(&rng, u, n);
    tu[r] = now_s() - t0;
  }
  const double tunif = median(tu, repeats);

  printf("# %10s %10s %7s %10s %8s %10s %10s %10s %8s %10s %10s %10s %10s %12s\n", "dpd_med_s",
         "dpd_min_s", "steps", "mean_batch", "clipped", "loss", "accuracy", "gemm_s", "GF/s",
         "z0_s", "K2_s", "eval_s", "uniform_s", "epoch_marg_s");
  printf("# %10.4f %10.4f %7zu %10.2f %8.4f %10.5f %10.5f %10.4f %8.2f %10.4f %10.4f %10.4f "
         "%10.4f %12.4f\n",
         tmed, tmin, m->steps, m->mean_batch, m->clipped_fraction, m->train_loss,
         m->train_accuracy, tgemm, gflops, tz0, tk2, teval, tunif, (te5 - tmed) / 4);
  printf("dpd_seconds_median=%.6g\ndpd_seconds_min=%.6g\ndpd_steps=%zu\ndpd_mean_batch=%.6g\n"
         "dpd_clipped_fraction=%.6g\ndpd_train_loss=%.6g\ndpd_train_accuracy=%.6g\n"
         "gemm_seconds_median=%.6g\ngemm_gflops=%.4g\ndpd_z0_seconds_median=%.6g\n"
         "dpd_k2_seconds_median=%.6g\neval_seconds_median=%.6g\nuniform_seconds_median=%.6g\n"
         "dpd_e5_seconds_median=%.6g\ndpd_epoch_marginal_seconds=%.6g\ndpd_isa=%s\n"
         "dpd_w_fnv1a=%016llx\n",
         tmed, tmin, m->steps, m->mean_batch, m->clipped_fraction, m->train_loss,
         m->train_accuracy, tgemm, gflops, tz0, tk2, teval, tunif, te5, (te5 - tmed) / 4,
         dpd_isa_name(dpd_isa_get()), w_hash(m));
  dpd_dpsgd_model_free(m);
  free(X);
  free(y);
  free(y2);
  free(W);
  free(S);
  free(G);
  free(u);
  return 0;
}
