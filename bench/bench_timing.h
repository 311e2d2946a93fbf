/* What the C benchmarks share (bench/bench_*.c): a monotonic clock and the median of timings.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_BENCH_TIMING_H
#define DPD_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Wall-clock seconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n), n >= 1 (v is sorted in place). */
static inline double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
