/* Timing driver for the risk ODE (dpd_ode_solve) on power-law spectra.
 * SPDX-License-Identifier: MIT
 *
 * Usage: dpd_bench_ode D ALPHA [METHOD [RTOL [NVMODE]]]
 *        dpd_bench_ode triad D
 *   D       dimension = number of distinct eigenvalues (lambda_i ~ i^-ALPHA)
 *   ALPHA   power-law exponent > 0
 *   METHOD  bdf (default: BDF + Sherman-Morrison), bdf-spgmr, or adams
 *   RTOL    relative tolerance (default, or "-": the library default, 1e-10)
 *   NVMODE  vector kernels (ode_nvector.c): 1 (the library's default) one pass per operation;
 *           0 queued and cache-blocked from 262144 groups on (same results, bit for bit)
 * "triad D" prints the memory-bandwidth baseline: the best CPU time over repetitions of the
 * STREAM triad a = b + s c over vectors of D doubles, in ns per entry (3 vector passes:
 * two read, one written), and the bandwidth in GB/s counting 24 bytes per entry.
 * Fixed parameters: gamma = 0.5, zeta = 0.5, c = 1, rho = 1, schedule sqrt
 * with eta0 = 1, theta* random (seed 1), grid = 101.
 * Prints one line: d alpha lambda_max cpu_s steps rhs_evals nonlin_iters
 * lin_iters ns_per_step_per_d final_risk wall_s (times of the solve only; cpu_s is the CPU time
 * of the solving thread, which other jobs on the machine do not inflate, and ns_per_step_per_d
 * is computed from it). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdyn/dpd.h"
#include "dpdyn/ode.h"
#include "linreg/ode_impl.h"

#include "bench_timing.h"

/* CPU time of this thread: on a machine shared with other jobs, wall time also counts the
 * time the scheduler gives to them (the solve and the triad are single-threaded). */
static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* STREAM-like triad (McCalpin, "Memory bandwidth and machine balance in current high
 * performance computers", IEEE TCCA Newsletter, 1995): best of 5 timings of enough
 * repetitions to take about 0.2 s in all. */
static int triad(size_t d) {
  double *a = malloc(d * sizeof *a), *b = malloc(d * sizeof *b), *c = malloc(d * sizeof *c);
  double best = INFINITY, check = 0.0;
  size_t reps = d < 200000000 / 5 ? 200000000 / 5 / d : 1;
  if (a == NULL || b == NULL || c == NULL) {
    fprintf(stderr, "dpd_bench_ode: out of memory for the triad at d = %zu\n", d);
    free(a);
    free(b);
    free(c);
    return 1;
  }
  for (size_t i = 0; i < d; i++) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = (double)(i % 7);
  }
  for (int trial = 0; trial < 5; trial++) {
    double t0 = cpu_seconds(), t;
    for (size_t r = 0; r < reps; r++) {
      double s = 0.5 + 1e-3 * (double)r;
      for (size_t i = 0; i < d; i++) {
        a[i] = b[i] + s * c[i];
      }
      check += a[r % d];
    }
    t = (cpu_seconds() - t0) / ((double)reps * (double)d);
    best = t < best ? t : best;
  }
  printf("%zu %.4f %.2f %g\n", d, 1e9 * best, 24.0 / best * 1e-9, check);
  free(a);
  free(b);
  free(c);
  return 0;
}

int main(int argc, char **argv) {
  dpd_linreg_problem_config pcfg = dpd_linreg_problem_config_default();
  dpd_schedule_config scfg = dpd_schedule_config_default();
  dpd_ode_config ocfg = dpd_ode_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_ode_result *res = NULL;
  dpd_err err;
  double t0, c0, wall, cpu;
  int status;

  if (argc < 3) {
    fprintf(stderr, "usage: %s D ALPHA [bdf|bdf-spgmr|adams [RTOL [NVMODE]]] | triad D\n", argv[0]);
    return 1;
  }
  if (strcmp(argv[1], "triad") == 0) {
    return triad((size_t)strtoull(argv[2], NULL, 10));
  }
  pcfg.d = (size_t)strtoull(argv[1], NULL, 10);
  pcfg.spectrum = DPD_SPECTRUM_POWERLAW;
  pcfg.alpha = strtod(argv[2], NULL);
  pcfg.seed = 1;
  scfg.kind = DPD_SCHEDULE_SQRT;
  scfg.eta0 = 1.0;
  ocfg.gamma = 0.5;
  ocfg.zeta = 0.5;
  ocfg.c = 1.0;
  ocfg.rho = 1.0;
  if (argc > 3 && strcmp(argv[3], "adams") == 0) {
    ocfg.method = DPD_ODE_ADAMS;
  } else if (argc > 3 && strcmp(argv[3], "bdf-spgmr") == 0) {
    ocfg.linsol = DPD_ODE_LINSOL_SPGMR;
  } else if (argc > 3 && strcmp(argv[3], "bdf") != 0) {
    fprintf(stderr, "dpd_bench_ode: unknown method '%s' (allowed: bdf, bdf-spgmr, adams)\n",
            argv[3]);
    return 1;
  }
  if (argc > 4 && strcmp(argv[4], "-") != 0) {
    ocfg.rtol = strtod(argv[4], NULL);
  }
  if (argc > 5) {
    dpd__ode_nvector_bench_mode(atoi(argv[5]));
  }
  dpd_err_reset(&err);
  if ((status = dpd_linreg_problem_create(&pcfg, &problem, &err)) < 0 ||
      (status = dpd_schedule_create(&scfg, &schedule, &err)) < 0) {
    fprintf(stderr, "dpd_bench_ode: %s\n", err.reason);
    dpd_linreg_problem_free(problem);
    return 1;
  }
  t0 = now_s();
  c0 = cpu_seconds();
  status = dpd_ode_solve(problem, schedule, &ocfg, &res, &err);
  cpu = cpu_seconds() - c0;
  wall = now_s() - t0;
  if (status < 0) {
    fprintf(stderr, "dpd_bench_ode: %s: %s\n", dpd_status_str(status), err.reason);
  } else {
    printf("%zu %g %.6g %.4f %ld %ld %ld %ld %.3f %.10g %.4f\n", pcfg.d, pcfg.alpha,
           problem->lambda_max, cpu, res->steps, res->rhs_evals, res->nonlin_iters, res->lin_iters,
           1e9 * cpu / ((double)res->steps * (double)problem->ngroups), res->final_risk, wall);
  }
  dpd_ode_result_free(res);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
  return status < 0 ? 2 : 0;
}
