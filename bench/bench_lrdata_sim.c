/* Library-level benchmark of the simulation on a dataset's rows (dpd__lrdata_sim_run, issue 27
 * §5), with its two limits measured in the same run.
 * SPDX-License-Identifier: MIT
 *
 * The dataset is synthetic, of Fashion-MNIST's shape and storage (N x d float32, image-like:
 * values in [0, 1], about half of them 0), built in memory (no file): the speed of a step does
 * not depend on the values. Sigma^ is a dense stand-in (the identity stored as d x d: the risk's
 * O(d^2) cost at the grid points is the real one), theta^* a fixed vector.
 * Usage: dpd_bench_lrdata_sim [N d n seeds threads grid]   (defaults 60000 784 60000 1 1 101)
 * Prints key=value lines, for three settings (plain SGD: c = rho = inf; clipping only: c = 1;
 * private: c = 1, rho = 1): seconds, steps/s, and the checksum of the risks (the same on every
 * instruction-set path, DPD_ISA=scalar|avx2|avx512); then the limits on the same threads:
 * gauss_seconds (dpd_rng_gaussian_fill of n d values per replicate, in fills of d values, as the
 * private run draws them), stream_seconds (one pass over the rows, in file order and in the
 * order of a random permutation: the memory-bandwidth limit of reading them). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdyn/dpd.h"
#include "linreg/data_impl.h"

static double now(void) {
  return omp_get_wtime();
}

/* CPU seconds of the process (all threads): on a machine shared with other jobs, the time this
 * run was given, less disturbed than the wall clock. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* FNV-1a over the bytes of n doubles: a checksum of the results. */
static uint64_t checksum(const double *x, size_t n, uint64_t h) {
  const unsigned char *p = (const unsigned char *)x;
  for (size_t i = 0; i < n * sizeof *x; i++) {
    h = (h ^ p[i]) * UINT64_C(1099511628211);
  }
  return h;
}

/* Sum of all rows' values (in `order`, or in file order when NULL), each row converted to
 * double and summed in eight independent lanes as the kernel does (so that the pass is limited
 * by memory, not by the latency of one chain of additions), over `threads` threads. */
static double stream_rows(const float *X, size_t N, size_t d, const size_t *order, int threads) {
  double total = 0.0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static)
  for (size_t r = 0; r < N; r++) {
    const float *row = X + (order != NULL ? order[r] : r) * d;
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= d; i += 8) {
      for (size_t l = 0; l < 8; l++) {
        s[l] += (double)row[i + l];
      }
    }
    for (; i < d; i++) {
      s[0] += (double)row[i];
    }
    total += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  }
  return total;
}

int main(int argc, char **argv) {
  size_t N = 60000, d = 784, n = 60000, seeds = 1, grid = 101;
  int threads = 1;
  if (argc > 1) {
    N = (size_t)strtoull(argv[1], NULL, 10);
  }
  if (argc > 2) {
    d = (size_t)strtoull(argv[2], NULL, 10);
  }
  n = N;
  if (argc > 3) {
    n = (size_t)strtoull(argv[3], NULL, 10);
  }
  if (argc > 4) {
    seeds = (size_t)strtoull(argv[4], NULL, 10);
  }
  if (argc > 5) {
    threads = atoi(argv[5]);
  }
  if (argc > 6) {
    grid = (size_t)strtoull(argv[6], NULL, 10);
  }
  if (N < 2 || d < 1 || n < 1 || n > N || seeds < 1 || threads < 1 || grid < 2) {
    fprintf(stderr, "usage: dpd_bench_lrdata_sim [N d n seeds threads grid] (n <= N)\n");
    return 1;
  }
  float *X = malloc(N * d * sizeof *X);
  float *Y = malloc(N * sizeof *Y);
  size_t *pop = malloc(N * sizeof *pop), *order = malloc(N * sizeof *order);
  double *mean = calloc(d, sizeof *mean), *sigma = calloc(d * d, sizeof *sigma);
  double *theta_hat = malloc(d * sizeof *theta_hat);
  if (X == NULL || Y == NULL || pop == NULL || order == NULL || mean == NULL || sigma == NULL ||
      theta_hat == NULL) {
    fprintf(stderr, "out of memory\n");
    return 2;
  }
  dpd_rng rng;
  dpd_rng_init(&rng, 20260, 1);
  for (size_t r = 0; r < N; r++) {
    for (size_t i = 0; i < d; i++) {
      const double g = dpd_rng_gaussian(&rng);
      X[r * d + i] = g > 0.0 ? (float)fmin(1.0, 0.45 * g) : 0.0f;
    }
    Y[r] = (float)dpd_rng_gaussian(&rng);
    pop[r] = r;
    order[r] = r;
  }
  for (size_t r = N - 1; r > 0; r--) {
    const size_t j = (size_t)(dpd_rng_uniform(&rng) * (double)(r + 1));
    const size_t t = order[r];
    order[r] = order[j];
    order[j] = t;
  }
  double tr = 0.0;
  for (size_t r = 0; r < N; r++) {
    for (size_t i = 0; i < d; i++) {
      mean[i] += X[r * d + i];
    }
  }
  for (size_t i = 0; i < d; i++) {
    mean[i] /= (double)N;
  }
  for (size_t r = 0; r < N; r++) {
    for (size_t i = 0; i < d; i++) {
      tr += ((double)X[r * d + i] - mean[i]) * ((double)X[r * d + i] - mean[i]);
    }
  }
  for (size_t i = 0; i < d; i++) {
    sigma[i * d + i] = 1.0;
    theta_hat[i] = 0.3 * sin(1.7 * (double)i);
  }
  dpd__lrdata D;
  memset(&D, 0, sizeof D);
  D.X = (dpd__datamat){.rows = N, .cols = d, .f32 = 1, .data = X};
  D.Y = (dpd__datamat){.rows = N, .cols = 1, .f32 = 1, .data = Y};
  D.N = N;
  D.d = d;
  D.n_pop = N;
  D.pop_idx = pop;
  D.mean = mean;
  D.scale = sqrt((double)d / (tr / (double)N));
  D.y_mean = 0.0;
  D.y_scale = 1.0;
  D.sigma = sigma;
  D.theta_hat = theta_hat;

  dpd_schedule_config sc = dpd_schedule_config_default();
  sc.kind = DPD_SCHEDULE_SQRT;
  sc.eta0 = 0.5;
  dpd_schedule *sch = NULL;
  if (dpd_schedule_create(&sc, &sch, NULL) != DPD_OK) {
    return 2;
  }
  printf("N=%zu d=%zu n=%zu seeds=%zu threads=%d grid=%zu isa=%s\n", N, d, n, seeds, threads, grid,
         dpd_isa_name(dpd_isa_get()));
  const char *names[3] = {"plain", "clip", "private"};
  const double cs[3] = {INFINITY, 1.0, 1.0}, rhos[3] = {INFINITY, INFINITY, 1.0};
  for (int s = 0; s < 3; s++) {
    dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
    cfg.n = n;
    cfg.c = cs[s];
    cfg.rho = rhos[s];
    cfg.seeds = seeds;
    cfg.seed = 1;
    cfg.threads = threads;
    cfg.grid = grid;
    dpd_linreg_sim_result *res = NULL;
    dpd_err err;
    dpd_err_reset(&err);
    const double t0 = now(), c0 = cpu_now();
    const int st = dpd__lrdata_sim_run(&D, NULL, sch, &cfg, &res, NULL, &err);
    const double dt = now() - t0, dc = cpu_now() - c0;
    if (st != DPD_OK) {
      fprintf(stderr, "%s: %s\n", names[s], err.reason);
      return 2;
    }
    uint64_t h = checksum(res->risk_replicates, res->grid * seeds, UINT64_C(14695981039346656037));
    h = checksum(res->final_replicates, seeds, h);
    printf("%s_seconds=%.4f %s_cpu_seconds=%.4f %s_steps_per_s=%.4g %s_final_risk=%.6g "
           "%s_clip=%.4f %s_checksum=%016llx\n",
           names[s], dt, names[s], dc, names[s], (double)(n * seeds) / dt, names[s],
           res->final_risk, names[s], res->clip_fraction_total, names[s], (unsigned long long)h);
    dpd_linreg_sim_result_free(res);
  }
  /* The Gaussian-generation limit: n fills of d values per replicate, on `threads` threads. */
  {
    const double t0 = now(), c0 = cpu_now();
    double keep = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : keep)
    {
      double *buf = malloc((d + 2) * sizeof *buf);
      dpd_rng r2;
#pragma omp for schedule(dynamic, 1)
      for (size_t rep = 0; rep < seeds; rep++) {
        dpd_rng_init(&r2, 1, rep);
        for (size_t k = 0; k < n; k++) {
          dpd_rng_gaussian_fill(&r2, buf, d);
          keep += buf[d / 2];
        }
      }
      free(buf);
    }
    const double dt = now() - t0, dc = cpu_now() - c0;
    printf("gauss_seconds=%.4f gauss_cpu_seconds=%.4f gauss_values_per_s=%.4g (checksum %g)\n", dt,
           dc, (double)(n * seeds) * (double)d / dt, keep);
  }
  /* The memory limit: one pass over the rows per replicate (file order, random order). */
  for (int o = 0; o < 2; o++) {
    const size_t passes = (seeds + (size_t)threads - 1) / (size_t)threads;
    const double t0 = now(), c0 = cpu_now();
    double keep = 0.0;
    for (size_t p = 0; p < passes; p++) {
      keep += stream_rows(X, N, d, o ? order : NULL, threads);
    }
    const double dt = (now() - t0) * (double)n / (double)N;
    const double dc = (cpu_now() - c0) * (double)n / (double)N;
    printf("stream_%s_seconds=%.4f stream_%s_cpu_seconds=%.4f stream_%s_GB_per_s=%.4g "
           "(checksum %g)\n",
           o ? "random" : "file", dt, o ? "random" : "file", dc, o ? "random" : "file",
           (double)passes * (double)n * (double)d * sizeof(float) / dt * 1e-9, keep);
  }
  dpd_schedule_free(sch);
  free(X);
  free(Y);
  free(pop);
  free(order);
  free(mean);
  free(sigma);
  free(theta_hat);
  return 0;
}
