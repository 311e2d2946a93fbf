/* Noisy-SGD speed of the semi-private model (dpd_semipriv_sgd_run): steps per second.
 * SPDX-License-Identifier: MIT
 *
 * Data shared with bench/bench_semipriv_numpy.py (the same rows on both sides): n rows in R^k,
 * P_ij = sin(0.37 (i k + j) + 1.1) scaled to |x_i| = 1, y_i = +1 if P_i0 >= 0 else -1; zeta 0.18,
 * delta 1e-5, T steps (default n^2), the unit ball. One untimed warm-up run, then `reps` timed
 * runs (streams (seed, r)); the fastest counts. Prints key=value lines:
 *   dpdyn_steps_per_s, dpdyn_gaussians_per_s (k per step when sigma > 0), active_fraction, w0.
 * Usage: dpd_bench_semipriv [n k epsilon T reps]   (epsilon "inf" for non-private) */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "dpdyn/dpd.h"

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 500;
  const size_t k = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 5;
  const double eps = argc > 3 ? strtod(argv[3], NULL) : 0.1;
  const size_t T = argc > 4 ? (size_t)strtoul(argv[4], NULL, 10) : n * n;
  const int reps = argc > 5 ? atoi(argv[5]) : 3;
  if (n < 1 || k < 1 || !(eps > 0.0) || T < 1 || reps < 1) {
    fprintf(stderr, "usage: dpd_bench_semipriv [n >= 1] [k >= 1] [epsilon > 0 | inf] [T] [reps]\n");
    return 1;
  }
  double *P = malloc(n * k * sizeof *P), *y = malloc(n * sizeof *y), *w = malloc(k * sizeof *w);
  double *work = malloc(dpd_semipriv_sgd_work(k) * sizeof *work);
  if (P == NULL || y == NULL || w == NULL || work == NULL) {
    fprintf(stderr, "dpd_bench_semipriv: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++) {
    double s = 0.0;
    for (size_t j = 0; j < k; j++) {
      P[i * k + j] = sin(0.37 * (double)(i * k + j) + 1.1);
      s += P[i * k + j] * P[i * k + j];
    }
    for (size_t j = 0; j < k; j++) {
      P[i * k + j] /= sqrt(s);
    }
    y[i] = P[i * k] >= 0.0 ? 1.0 : -1.0;
  }
  dpd_semipriv_sgd_config c = dpd_semipriv_sgd_config_default();
  c.epsilon = eps;
  c.zeta = 0.18;
  c.steps = T;
  dpd_semipriv_sgd_info info;
  dpd_err err;
  double best = INFINITY;
  for (int r = 0; r <= reps; r++) {
    const double t0 = omp_get_wtime();
    if (dpd_semipriv_sgd_run(&c, P, y, n, k, 1, (uint64_t)r, w, work, &info, &err) != DPD_OK) {
      fprintf(stderr, "dpd_bench_semipriv: %s\n", err.reason);
      return 2;
    }
    const double dt = omp_get_wtime() - t0;
    if (r > 0 && dt < best) {
      best = dt;
    }
  }
  printf("# dpdyn Noisy-SGD: n=%zu k=%zu epsilon=%g T=%zu sigma=%.6g isa=%s, fastest of %d\n", n, k,
         eps, T, info.sigma, dpd_isa_name(dpd_isa_get()), reps);
  printf("dpdyn_seconds=%.6g\n", best);
  printf("dpdyn_steps_per_s=%.6g\n", (double)T / best);
  printf("dpdyn_gaussians_per_s=%.6g\n", info.sigma > 0.0 ? (double)(T * k) / best : 0.0);
  printf("active_fraction=%.4f\n", info.active_fraction);
  printf("w0=%.6g\n", w[0]);
  free(P);
  free(y);
  free(w);
  free(work);
  return 0;
}
