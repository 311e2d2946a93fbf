/* Gaussian-generation limit of this machine: dpd_rng_gaussian_fill on every thread.
 * SPDX-License-Identifier: MIT
 *
 * Each thread owns its stream (seed, thread) and refills an L1/L2-resident buffer for a fixed
 * wall time, so the figure is the generator's own throughput without memory traffic. Prints
 * human-readable lines and, last, machine-readable key=value lines:
 *   gaussians_per_second_single_thread=...
 *   gaussians_per_second_all_threads=...
 * Usage: dpd_bench_gauss [seconds per measurement (default 1)] [buffer length (default 4096)] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "dpdyn/dpd.h"

/* Gaussians per second on `threads` threads, each filling its own buffer of `len`. */
static double measure(int threads, double seconds, size_t len, dpd_rng_isa isa) {
  double total = 0.0, wall = 0.0;
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
        for (int k = 0; k < 16; k++) {
          (void)dpd_rng_gaussian_fill_isa(&rng, buf, len, isa);
          sink += buf[len / 2];
          reps++;
        }
      } while (omp_get_wtime() - t0 < seconds);
      double dt = omp_get_wtime() - t0;
      total += (double)(reps * len) / dt;
#pragma omp master
      wall = dt;
      free(buf);
    }
    if (sink == 1234.5) { /* keep the fills observable */
      printf("#");
    }
  }
  (void)wall;
  return total;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  size_t len = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 4096;
  int nthreads = omp_get_max_threads();
  if (!(seconds > 0.0) || len < 2) {
    fprintf(stderr, "usage: dpd_bench_gauss [seconds > 0] [buffer length >= 2]\n");
    return 1;
  }
  dpd_rng_isa best = dpd_rng_isa_get();
  printf("# dpdyn %s Gaussian-generation limit: buffer %zu doubles, %.2f s per figure\n",
         dpd_version(), len, seconds);
  const dpd_rng_isa paths[] = {DPD_RNG_ISA_SCALAR, DPD_RNG_ISA_AVX2, DPD_RNG_ISA_AVX512};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    dpd_rng probe;
    double tmp[2];
    dpd_rng_init(&probe, 1u, 0u);
    if (dpd_rng_gaussian_fill_isa(&probe, tmp, 2, paths[i]) != DPD_OK) {
      printf("# path %-6s: not supported by this CPU\n", dpd_rng_isa_name(paths[i]));
      continue;
    }
    printf("# path %-6s: %.1f M Gaussians/s on one thread\n", dpd_rng_isa_name(paths[i]),
           measure(1, seconds / 2, len, paths[i]) / 1e6);
  }
  double single = measure(1, seconds, len, DPD_RNG_ISA_AUTO);
  double all = measure(nthreads, seconds, len, DPD_RNG_ISA_AUTO);
  printf("# selected path %s, %d threads\n", dpd_rng_isa_name(best), nthreads);
  printf("gaussians_per_second_single_thread=%.6e\n", single);
  printf("gaussians_per_second_all_threads=%.6e\n", all);
  printf("threads=%d\n", nthreads);
  return 0;
}
