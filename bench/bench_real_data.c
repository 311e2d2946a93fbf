/* Library-level benchmark of linreg on a dataset (issue 27 §5; bench/bench_real_data.sh).
 * SPDX-License-Identifier: MIT
 *
 * Usage: dpd_bench_real_data FEATURES TARGETS SEEDS [THREADS]
 * Prints key=value lines, all measured in this one process:
 *   create_seconds       dpd__lrdata_create: the file mapped and checked, the preprocessing,
 *                        Sigma^ (blocked dsyrk), its eigen-decomposition (dsyevr), the fit, the
 *                        residuals and the diagnostics (leverage: one blocked dgemm)
 *   sim_noisy_seconds    SEEDS replicates of DP-SGD on all population rows (c = 1, rho = 2,
 *                        schedule sqrt, eta0 = 1): d + d Gaussians per step
 *   sim_plain_seconds    the same with c = inf, rho = inf (no privacy noise): the rows only
 *   stream_seconds       the memory-bandwidth baseline: every replicate reads the same rows
 *                        in file order (the bytes the simulation reads), on THREADS; and
 *   stream_random_order_seconds  the same in each replicate's own random order
 *   gauss_seconds        dpd_rng_gaussian_fill of the noisy run's Gaussians on THREADS
 * and the ratios: plain_over_bandwidth = stream_seconds / sim_plain_seconds (the fraction of the
 * bandwidth limit the simulation reaches), noisy_over_gauss = gauss_seconds / sim_noisy_seconds. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdyn/dpd.h"
#include "linreg/data_impl.h"

static double now(void) { return omp_get_wtime(); }

/* One row's floats (or doubles) summed in 16 independent lanes (vectorisable without reordering
 * a dependent chain): the read rate, not the add latency, limits it. */
static double row_sum(const dpd__lrdata *D, size_t row) {
  const size_t d = D->d;
  double acc[16] = {0};
  size_t i = 0;
  if (D->X.f32) {
    const float *x = (const float *)D->X.data + row * d;
    for (; i + 16 <= d; i += 16) {
      for (size_t j = 0; j < 16; j++) {
        acc[j] += (double)x[i + j];
      }
    }
    for (; i < d; i++) {
      acc[0] += (double)x[i];
    }
  } else {
    const double *x = (const double *)D->X.data + row * d;
    for (; i + 16 <= d; i += 16) {
      for (size_t j = 0; j < 16; j++) {
        acc[j] += x[i + j];
      }
    }
    for (; i < d; i++) {
      acc[0] += x[i];
    }
  }
  double s = 0.0;
  for (size_t j = 0; j < 16; j++) {
    s += acc[j];
  }
  return s;
}

/* The memory-bandwidth baseline: every replicate reads the population rows once, in file order
 * (streaming; `random` = 1: in its own random order, the simulation's access pattern), replicates
 * in parallel on `threads`. */
static double stream_rows(const dpd__lrdata *D, size_t seeds, int threads, int random,
                          double *sink) {
  const size_t n = D->n_pop;
  double total = 0.0, t0 = now();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : total)
  for (size_t r = 0; r < seeds; r++) {
    size_t *order = random ? malloc(n * sizeof *order) : NULL;
    double acc = 0.0;
    if (random && order == NULL) {
      continue;
    }
    if (random) {
      dpd_rng rng;
      dpd_rng_init(&rng, 99u, (uint64_t)r);
      for (size_t i = 0; i < n; i++) {
        order[i] = i;
      }
      for (size_t i = 0; i + 1 < n; i++) {
        size_t j = i + (size_t)(dpd_rng_uniform(&rng) * (double)(n - i));
        j = j < n ? j : n - 1;
        const size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
    }
    for (size_t k = 0; k < n; k++) {
      acc += row_sum(D, D->pop_idx[random ? order[k] : k]);
    }
    free(order);
    total += acc;
  }
  *sink = total;
  return now() - t0;
}

static double gauss(size_t count, int threads) {
  double t0 = now();
#pragma omp parallel num_threads(threads)
  {
    const size_t len = 4096;
    double *buf = malloc(len * sizeof *buf);
    dpd_rng rng;
    dpd_rng_init(&rng, 7u, (uint64_t)omp_get_thread_num());
    const size_t per = count / (size_t)omp_get_num_threads() / len + 1;
    for (size_t k = 0; buf != NULL && k < per; k++) {
      dpd_rng_gaussian_fill(&rng, buf, len);
    }
    if (buf != NULL && buf[0] == 1234.5) {
      printf("#");
    }
    free(buf);
  }
  return now() - t0;
}

static int sim(const dpd__lrdata *D, size_t seeds, int threads, double c, double rho,
               double *seconds, double *risk, double *se) {
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  dpd_linreg_sim_result *res = NULL;
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  dpd_err err = {0};
  double t0;
  sc.kind = DPD_SCHEDULE_SQRT;
  sc.eta0 = 1.0;
  if (dpd_schedule_create(&sc, &s, &err) < 0) {
    fprintf(stderr, "schedule: %s\n", err.reason);
    return 1;
  }
  cfg.n = D->n_pop;
  cfg.c = c;
  cfg.rho = rho;
  cfg.seeds = seeds;
  cfg.threads = threads;
  t0 = now();
  if (dpd__lrdata_sim_run(D, NULL, s, &cfg, &res, NULL, &err) < 0) {
    fprintf(stderr, "simulate: %s\n", err.reason);
    dpd_schedule_free(s);
    return 1;
  }
  *seconds = now() - t0;
  *risk = res->final_risk;
  *se = res->final_risk_se;
  dpd_linreg_sim_result_free(res);
  dpd_schedule_free(s);
  return 0;
}

int main(int argc, char **argv) {
  dpd__lrdata_config cfg = {0};
  dpd__lrdata *D = NULL;
  dpd_err err = {0};
  double t0, t_create, t_noisy, t_plain, t_stream, t_gauss, risk, se, sink;
  size_t seeds;
  int threads;
  if (argc < 4) {
    fprintf(stderr, "usage: %s FEATURES TARGETS SEEDS [THREADS]\n", argv[0]);
    return 2;
  }
  seeds = (size_t)strtoull(argv[3], NULL, 10);
  threads = argc > 4 ? atoi(argv[4]) : omp_get_max_threads();
  cfg.features_key = "features";
  cfg.features_path = argv[1];
  cfg.targets_key = "targets";
  cfg.targets_path = argv[2];
  cfg.center = cfg.scale_trace = cfg.target_unit = 1;
  cfg.seed = 1;
  cfg.threads = threads;
  t0 = now();
  if (dpd__lrdata_create(&cfg, &D, &err) < 0) {
    fprintf(stderr, "create: %s\n", err.reason);
    return 1;
  }
  t_create = now() - t0;
  printf("rows=%zu\nd=%zu\nfloat32=%d\nthreads=%d\nseeds=%zu\n", D->N, D->d, D->X.f32, threads,
         seeds);
  printf("create_seconds=%.4f\n", t_create);
  if (sim(D, seeds, threads, 1.0, 2.0, &t_noisy, &risk, &se) ||
      printf("noisy_final_risk=%.6g +- %.2g\n", risk, se) < 0 ||
      sim(D, seeds, threads, INFINITY, INFINITY, &t_plain, &risk, &se)) {
    dpd__lrdata_free(D);
    return 1;
  }
  t_stream = stream_rows(D, seeds, threads, 0, &sink);
  const double t_random = stream_rows(D, seeds, threads, 1, &sink);
  t_gauss = gauss((size_t)D->d * D->n_pop * seeds, threads);
  printf("sim_noisy_seconds=%.4f\nsim_plain_seconds=%.4f\n", t_noisy, t_plain);
  printf("plain_final_risk=%.6g +- %.2g\n", risk, se);
  printf("stream_random_order_seconds=%.4f\n", t_random);
  printf("stream_seconds=%.4f\nstream_bytes=%.6e\n", t_stream,
         (double)seeds * (double)D->n_pop * (double)D->d * (D->X.f32 ? 4.0 : 8.0));
  printf("gauss_seconds=%.4f\n", t_gauss);
  printf("plain_over_bandwidth=%.3f   # target >= 0.5\n", t_stream / t_plain);
  printf("noisy_over_gauss=%.3f\n", t_gauss / t_noisy);
  if (sink == 1234.5) {
    printf("#\n");
  }
  dpd__lrdata_free(D);
  return 0;
}
