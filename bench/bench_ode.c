/* Timing driver for the risk ODE (dpd_ode_solve) on power-law spectra.
 * SPDX-License-Identifier: MIT
 *
 * Usage: dpd_bench_ode D ALPHA [METHOD [RTOL]]
 *   D       dimension = number of distinct eigenvalues (lambda_i ~ i^-ALPHA)
 *   ALPHA   power-law exponent > 0
 *   METHOD  bdf (default: BDF + Sherman-Morrison), bdf-spgmr, or adams
 *   RTOL    relative tolerance (default: the library default, 1e-8)
 * Fixed parameters: gamma = 0.5, zeta = 0.5, c = 1, rho = 1, schedule sqrt
 * with eta0 = 1, theta* random (seed 1), grid = 101.
 * Prints one line: d alpha lambda_max wall_s steps rhs_evals nonlin_iters
 * lin_iters ns_per_step_per_d final_risk. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdyn/dpd.h"
#include "dpdyn/ode.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  dpd_linreg_problem_config pcfg = dpd_linreg_problem_config_default();
  dpd_schedule_config scfg = dpd_schedule_config_default();
  dpd_ode_config ocfg = dpd_ode_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_ode_result *res = NULL;
  dpd_err err;
  double t0, wall;
  int status;

  if (argc < 3) {
    fprintf(stderr, "usage: %s D ALPHA [bdf|bdf-spgmr|adams [RTOL]]\n", argv[0]);
    return 1;
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
  if (argc > 4) {
    ocfg.rtol = strtod(argv[4], NULL);
  }
  dpd_err_reset(&err);
  if ((status = dpd_linreg_problem_create(&pcfg, &problem, &err)) < 0 ||
      (status = dpd_schedule_create(&scfg, &schedule, &err)) < 0) {
    fprintf(stderr, "dpd_bench_ode: %s\n", err.reason);
    dpd_linreg_problem_free(problem);
    return 1;
  }
  t0 = now_seconds();
  status = dpd_ode_solve(problem, schedule, &ocfg, &res, &err);
  wall = now_seconds() - t0;
  if (status < 0) {
    fprintf(stderr, "dpd_bench_ode: %s: %s\n", dpd_status_str(status), err.reason);
  } else {
    printf("%zu %g %.6g %.4f %ld %ld %ld %ld %.3f %.10g\n", pcfg.d, pcfg.alpha, problem->lambda_max,
           wall, res->steps, res->rhs_evals, res->nonlin_iters, res->lin_iters,
           1e9 * wall / ((double)res->steps * (double)problem->ngroups), res->final_risk);
  }
  dpd_ode_result_free(res);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
  return status < 0 ? 2 : 0;
}
