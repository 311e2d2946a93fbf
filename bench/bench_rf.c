/* Benchmark of full-batch DP-GD on random features (dpd_rf_sim_run) against OpenBLAS dgemv.
 * SPDX-License-Identifier: MIT
 *
 * One DP-GD step reads Phi (n x p) once (fused residual and clipped-gradient pass, rf_sim.c);
 * the textbook step is two dgemv (r = Phi theta, then Phi^T v). This driver measures, in the
 * same run and on the same Phi:
 *   (a) sim1:  seconds per step of one replicate (one thread, dpd_rf_sim_run with seeds = 1);
 *   (b) simN:  seconds per replicate-step with seeds = threads replicates in parallel;
 *   (c) gemv2: seconds of two cblas_dgemv (NoTrans then Trans) with OpenBLAS's own threads;
 * and prints key=value lines plus the effective bandwidth of each (bytes of Phi read per second).
 * Each timing is the fastest of `reps` repeats. It also prints the shared library that provides
 * cblas_dgemv (gemv_library=...), since GSL's reference CBLAS exports the same symbols.
 *
 * With --scaling, for each thread count t in 1, 2, 4, ... and `threads` itself it measures, in
 * the same run and alternating within each repeat: one replicate (seeds = 1) on t threads (its
 * row blocks in parallel), and two OpenBLAS dgemv with t OpenBLAS threads; it prints one line
 * per t with both times and fraction = dgemv2 time / replicate time (the replicate's share of
 * the two-dgemv throughput), and whether the replicate's final iterate has the same bits at
 * every t (bit_identical_across_threads=yes|no). Usage:
 *   dpd_bench_rf [--scaling] [n p d T [threads [reps]]]   (defaults 2000 5000 200 50, all
 *                                                           threads, 3) */
#define _GNU_SOURCE /* dladdr */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"

/* FNV-1a hash of the bytes of x[0..m). */
static unsigned long long fnv1a(const double *x, size_t m) {
  unsigned long long hash = 1469598103934665603ULL;
  for (size_t k = 0; k < m; k++) {
    unsigned char bytes_k[sizeof(double)];
    memcpy(bytes_k, &x[k], sizeof bytes_k);
    for (size_t b = 0; b < sizeof bytes_k; b++) {
      hash = (hash ^ bytes_k[b]) * 1099511628211ULL;
    }
  }
  return hash;
}

/* Seconds of one dpd_rf_sim_run of T steps; *risk = final test risk, *hash = bits of the final
 * iterate of replicate 0. */
static double sim_run_seconds(const dpd_rf_problem *pr, size_t T, size_t seeds, int threads,
                              double *risk, unsigned long long *hash) {
  dpd_rf_sim_config cfg = dpd_rf_sim_config_default();
  cfg.T = T;
  cfg.eta = 0.05;
  cfg.clip = 0.5;
  cfg.sigma = 1.0;
  cfg.seeds = seeds;
  cfg.grid = 2;
  cfg.threads = threads;
  dpd_rf_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  double t0 = omp_get_wtime();
  int st = dpd_rf_sim_run(pr, &cfg, &res, &err);
  double t1 = omp_get_wtime();
  if (st != DPD_OK) {
    fprintf(stderr, "bench_rf: %s\n", err.reason);
    exit(2);
  }
  *risk = res->test_mean[1];
  *hash = fnv1a(res->theta_last, pr->p);
  dpd_rf_sim_result_free(res);
  return t1 - t0;
}

static double sim_seconds(const dpd_rf_problem *pr, size_t T, size_t seeds, int threads,
                          double *risk) {
  unsigned long long hash;
  return sim_run_seconds(pr, T, seeds, threads, risk, &hash);
}

/* Seconds of T steps of the textbook step: v = (2/n) (Phi theta - y) and g = Phi^T v by two
 * cblas_dgemv on OpenBLAS's current thread count. */
static double gemv2_seconds(const dpd_rf_problem *pr, size_t T, const double *theta, double *v,
                            double *g) {
  const size_t n = pr->n, p = pr->p;
  double t0 = omp_get_wtime();
  for (size_t t = 0; t < T; t++) {
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)p, 1.0, pr->phi, (int)p, theta, 1, 0.0, v,
                1);
    for (size_t i = 0; i < n; i++) {
      v[i] = 2.0 * (v[i] - pr->y[i]) / (double)n;
    }
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)p, 1.0, pr->phi, (int)p, v, 1, 0.0, g, 1);
  }
  return omp_get_wtime() - t0;
}

/* --scaling: one replicate on t threads against two dgemv on t OpenBLAS threads, t = 1, 2, 4,
 * ..., and max_threads. */
static void scaling(const dpd_rf_problem *pr, size_t T, int max_threads, int reps,
                    const double *theta, double *v, double *g) {
  const double bytes = (double)pr->n * (double)pr->p * sizeof(double);
  unsigned long long hash0 = 0;
  int identical = 1;
  for (int t = 1; t <= max_threads;
       t = (t < max_threads && 2 * t > max_threads) ? max_threads : 2 * t) {
    double best_sim = INFINITY, best_gemv = INFINITY, risk = 0.0;
    unsigned long long hash = 0;
    openblas_set_num_threads(t);
    for (int r = 0; r < reps; r++) {
      best_sim = fmin(best_sim, sim_run_seconds(pr, T, 1, t, &risk, &hash) / (double)T);
      best_gemv = fmin(best_gemv, gemv2_seconds(pr, T, theta, v, g) / (double)T);
    }
    if (t == 1) {
      hash0 = hash;
    }
    identical &= hash == hash0;
    printf("threads=%d rep1_step_s=%.6g gemv2_step_s=%.6g fraction=%.3g rep1_GBps=%.3g "
           "gemv2_GBps=%.3g theta_hash=%016llx\n",
           t, best_sim, best_gemv, best_gemv / best_sim, bytes / best_sim / 1e9,
           2.0 * bytes / best_gemv / 1e9, hash);
    fflush(stdout);
    if (t == max_threads) {
      break;
    }
  }
  printf("bit_identical_across_threads=%s\n", identical ? "yes" : "no");
}

/* Path of the shared object that cblas_dgemv resolved to ("unknown" if dladdr cannot tell). */
static const char *gemv_library(void) {
  void (*fn)(void) = (void (*)(void))cblas_dgemv;
  void *addr = NULL;
  memcpy(&addr, &fn, sizeof addr); /* ISO C has no function-to-object pointer cast */
  Dl_info info;
  if (dladdr(addr, &info) != 0 && info.dli_fname != NULL) {
    return info.dli_fname;
  }
  return "unknown";
}

int main(int argc, char **argv) {
  size_t n = 2000, p = 5000, d = 200, T = 50;
  int threads = 0, reps = 3, scale = 0;
  if (argc > 1 && strcmp(argv[1], "--scaling") == 0) {
    scale = 1;
    argv++;
    argc--;
  }
  if (argc > 1 && argc < 5) {
    fprintf(stderr, "usage: dpd_bench_rf [--scaling] [n p d T [threads [reps]]]\n");
    return 1;
  }
  if (argc >= 5) {
    n = (size_t)strtoul(argv[1], NULL, 10);
    p = (size_t)strtoul(argv[2], NULL, 10);
    d = (size_t)strtoul(argv[3], NULL, 10);
    T = (size_t)strtoul(argv[4], NULL, 10);
  }
  if (argc >= 6) {
    threads = atoi(argv[5]);
  }
  if (argc >= 7) {
    reps = atoi(argv[6]);
  }
  if (threads <= 0) {
    threads = omp_get_max_threads();
  }
  dpd_rf_config pcfg = dpd_rf_config_default();
  pcfg.n = n;
  pcfg.p = p;
  pcfg.d = d;
  pcfg.n_test = 100;
  dpd_rf_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  if (dpd_rf_problem_create(&pcfg, &pr, &err) != DPD_OK) {
    fprintf(stderr, "bench_rf: %s\n", err.reason);
    return 2;
  }
  double risk1 = 0.0, riskN = 0.0, riskT = 0.0;
  double best1 = INFINITY, bestN = INFINITY, bestT = INFINITY, best_gemv = INFINITY;
  double *theta = calloc(p, sizeof *theta), *v = malloc(n * sizeof *v), *g = malloc(p * sizeof *g);
  if (theta == NULL || v == NULL || g == NULL) {
    return 2;
  }
  for (size_t k = 0; k < p; k++) {
    theta[k] = 1e-3 * sin((double)k);
  }
  if (scale) {
    printf("n=%zu p=%zu d=%zu T=%zu max_threads=%d reps=%d gemv_library=%s\n", n, p, d, T, threads,
           reps, gemv_library());
    scaling(pr, T, threads, reps, theta, v, g);
    free(theta);
    free(v);
    free(g);
    dpd_rf_problem_free(pr);
    return 0;
  }
  for (int r = 0; r < reps; r++) {
    best1 = fmin(best1, sim_seconds(pr, T, 1, 1, &risk1) / (double)T);
    bestT = fmin(bestT, sim_seconds(pr, T, 1, threads, &riskT) / (double)T);
    bestN =
        fmin(bestN, sim_seconds(pr, T, (size_t)threads, threads, &riskN) / ((double)T * threads));
    best_gemv = fmin(best_gemv, gemv2_seconds(pr, T, theta, v, g) / (double)T);
  }
  const double bytes = (double)n * (double)p * sizeof(double);
  printf("n=%zu p=%zu np=%.3g d=%zu T=%zu threads=%d openblas_threads=%d reps=%d\n", n, p,
         (double)n * (double)p, d, T, threads, openblas_get_num_threads(), reps);
  printf("sim1_step_s=%.6g sim1_GBps=%.3g (one replicate, one thread, Phi read once)\n", best1,
         bytes / best1 / 1e9);
  printf("simT_step_s=%.6g simT_GBps=%.3g (one replicate, its row blocks on %d threads)\n", bestT,
         bytes / bestT / 1e9, threads);
  printf("simN_step_s=%.6g simN_GBps=%.3g (per replicate-step, %d replicates on %d threads)\n",
         bestN, bytes / bestN / 1e9, threads, threads);
  printf("gemv2_step_s=%.6g gemv2_GBps=%.3g (two OpenBLAS dgemv, Phi read twice)\n", best_gemv,
         2.0 * bytes / best_gemv / 1e9);
  printf("gemv_library=%s\n", gemv_library());
  printf("ratio_sim1_over_gemv2=%.3g ratio_simN_over_gemv2=%.3g\n", best1 / best_gemv,
         bestN / best_gemv);
  printf("check_test_risk sim1=%.6g simT=%.6g simN=%.6g (sim1 and simT must be equal)\n", risk1,
         riskT, riskN);
  /* Bit patterns of the last dgemv result and of Phi (built with an OpenBLAS dgemm), to compare
   * runs with different OPENBLAS_NUM_THREADS: a gemv_hash change means something only when
   * phi_hash is unchanged. */
  printf("gemv_hash=%016llx\n", fnv1a(g, p));
  printf("phi_hash=%016llx\n", fnv1a(pr->phi, n * p));
  free(theta);
  free(v);
  free(g);
  dpd_rf_problem_free(pr);
  return 0;
}
