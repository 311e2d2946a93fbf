/* Gaussian-generation limit of this machine: dpd_rng_gaussian_fill per path and on every thread.
 * SPDX-License-Identifier: MIT
 *
 * Each thread owns its stream (seed, thread) and refills an L1/L2-resident buffer, so the
 * figure is the generator's own throughput without memory traffic. Per-thread rates of each
 * instruction-set path this CPU has (scalar, AVX2, AVX-512) are measured in `rounds` rounds of
 * short windows (2 ms by default: shorter than a time slice of a loaded machine), the paths
 * taking turns within a round, so that a change of load hits every path alike; the best window
 * is the figure (a descheduled window is slow, never fast) and the median and 10th-percentile
 * windows give the spread. bench/bench_gauss.sh adds NumPy's generator in the same run.
 * Prints human-readable lines ('#') and machine-readable key=value lines:
 *   cpu_model=..., isa_flags=...
 *   gaussians_per_second_<path>=best, ..._<path>_median=..., ..._<path>_p10=...  (one thread)
 *   gaussians_per_second_single_thread=...  (the selected path, one thread)
 *   gaussians_per_second_all_threads=...
 * Usage: dpd_bench_gauss [seconds per figure (default 2)] [buffer length (default 4096)]
 *                        [rounds (default 1000)] */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_impl.h"
#include "dpdyn/dpd.h"

/* Gaussians per second on `threads` threads, each filling its own buffer of `len`. */
static double measure(int threads, double seconds, size_t len, dpd_rng_isa isa) {
  double total = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    double *buf = malloc(len * sizeof *buf);
    dpd_rng rng;
    double sink = 0.0;
    dpd_rng_init(&rng, 12345u, (uint64_t)omp_get_thread_num());
    if (buf != NULL) {
      (void)dpd_rng_gaussian_fill_isa(&rng, buf, len, isa); /* warm-up */
#pragma omp barrier
      double t0 = omp_get_wtime();
      size_t reps = 0;
      do {
        for (int k = 0; k < 4; k++) {
          (void)dpd_rng_gaussian_fill_isa(&rng, buf, len, isa);
          sink += buf[len / 2];
          reps++;
        }
      } while (omp_get_wtime() - t0 < seconds);
      double dt = omp_get_wtime() - t0;
      total += (double)(reps * len) / dt;
      free(buf);
    }
    if (sink == 1234.5) { /* keep the fills observable */
      printf("#");
    }
  }
  return total;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The CPU's model name from /proc/cpuinfo ("unknown" elsewhere), newline removed. */
static void cpu_model(char *out, size_t size) {
  snprintf(out, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) {
    return;
  }
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "model name", 10) == 0) {
      const char *v = strchr(line, ':');
      if (v != NULL) {
        v++;
        while (*v == ' ' || *v == '\t') {
          v++;
        }
        snprintf(out, size, "%s", v);
        out[strcspn(out, "\n")] = '\0';
      }
      break;
    }
  }
  fclose(f);
}

#define MAX_ROUNDS 100000

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 2.0;
  size_t len = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 4096;
  int rounds = argc > 3 ? atoi(argv[3]) : 1000;
  int nthreads = omp_get_max_threads();
  if (!(seconds > 0.0) || len < 2 || rounds < 1 || rounds > MAX_ROUNDS) {
    fprintf(stderr,
            "usage: dpd_bench_gauss [seconds > 0] [buffer length >= 2] "
            "[rounds 1..%d]\n",
            MAX_ROUNDS);
    return 1;
  }
  char model[256];
  cpu_model(model, sizeof model);
  char flags[128] = "";
#if DPD__ISA_X86
  snprintf(flags, sizeof flags, "x86-64%s%s%s%s", __builtin_cpu_supports("avx2") ? " avx2" : "",
           __builtin_cpu_supports("fma") ? " fma" : "",
           __builtin_cpu_supports("avx512f") ? " avx512f" : "",
           __builtin_cpu_supports("avx512dq") ? " avx512dq" : "");
#else
  snprintf(flags, sizeof flags, "not x86");
#endif
  dpd_rng_isa best = dpd_rng_isa_get();
  printf("# dpdyn %s Gaussian-generation limit: buffer %zu doubles, %.2f s per figure\n",
         dpd_version(), len, seconds);
  printf("# CPU: %s; ISA flags: %s; %d threads\n", model, flags, nthreads);
  printf("cpu_model=%s\nisa_flags=%s\n", model, flags);

  const dpd_rng_isa paths[] = {DPD_RNG_ISA_SCALAR, DPD_RNG_ISA_AVX2, DPD_RNG_ISA_AVX512};
  enum { NPATHS = sizeof paths / sizeof paths[0] };
  int have[NPATHS];
  static double rate[NPATHS][MAX_ROUNDS];
  for (int p = 0; p < NPATHS; p++) {
    dpd_rng probe;
    double tmp[2];
    dpd_rng_init(&probe, 1u, 0u);
    have[p] = dpd_rng_gaussian_fill_isa(&probe, tmp, 2, paths[p]) == DPD_OK;
    if (!have[p]) {
      printf("# path %-6s: not supported by this CPU\n", dpd_rng_isa_name(paths[p]));
    }
  }
  /* Per-thread rates: the paths take turns within each round. */
  double window = seconds / rounds;
  for (int r = 0; r < rounds; r++) {
    for (int p = 0; p < NPATHS; p++) {
      if (have[p]) {
        rate[p][r] = measure(1, window, len, paths[p]);
      }
    }
  }
  for (int p = 0; p < NPATHS; p++) {
    if (!have[p]) {
      continue;
    }
    const char *name = dpd_rng_isa_name(paths[p]);
    qsort(rate[p], (size_t)rounds, sizeof rate[p][0], cmp_double);
    double hi = rate[p][rounds - 1], lo = rate[p][rounds / 10], med = rate[p][rounds / 2];
    printf("# path %-6s: %7.1f M Gaussians/s per thread (best of %d windows of %.3f s; "
           "median %.1f, 10th percentile %.1f)\n",
           name, hi / 1e6, rounds, window, med / 1e6, lo / 1e6);
    printf("gaussians_per_second_%s=%.6e\n", name, hi);
    printf("gaussians_per_second_%s_median=%.6e\n", name, med);
    printf("gaussians_per_second_%s_p10=%.6e\n", name, lo);
  }
  double single = measure(1, seconds, len, DPD_RNG_ISA_AUTO);
  double all = measure(nthreads, seconds, len, DPD_RNG_ISA_AUTO);
  printf("# selected path %s, %d threads\n", dpd_rng_isa_name(best), nthreads);
  printf("gaussians_per_second_single_thread=%.6e\n", single);
  printf("gaussians_per_second_all_threads=%.6e\n", all);
  printf("threads=%d\n", nthreads);
  return 0;
}
