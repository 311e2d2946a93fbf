/* Timing driver: the Volterra/FFT solver (dpd_volterra_solve) against the risk ODE
 * (dpd_ode_solve) on power-law spectra.
 * SPDX-License-Identifier: MIT
 *
 * Usage: dpd_bench_volterra D ALPHA [ODE_RTOL [STEPS]]
 *   D         dimension = number of distinct eigenvalues (lambda_i ~ i^-ALPHA)
 *   ALPHA     power-law exponent > 0
 *   ODE_RTOL  relative tolerance of the ODE (default: the library default, 1e-8)
 *   STEPS     Volterra steps N (default: the library default, 400, with Richardson
 *             extrapolation from 2N)
 * Fixed parameters: constant schedule eta0 = 1, gamma = 0.5, zeta = 0.5, no clipping
 * (mu = nu = 1 frozen), privacy noise through the constant profile sigma~^2 = 0.3 with c = 1
 * (rho = inf: no release jump), theta* random (seed 1), grid = 101.
 * Prints one line: d alpha lambda_max ode_wall_s ode_cpu_s volterra_wall_s volterra_cpu_s
 * speedup_wall speedup_cpu max_rel_diff ode_steps volterra_steps final_risk_ode
 * final_risk_volterra. CPU times are the process's (both solvers are single-threaded), which
 * the load of other processes disturbs less than wall times. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdyn/dpd.h"

typedef struct {
  double wall, cpu;
} stamp;

static stamp stamp_now(void) {
  struct timespec w, c;
  stamp s;
  clock_gettime(CLOCK_MONOTONIC, &w);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
  s.wall = (double)w.tv_sec + 1e-9 * (double)w.tv_nsec;
  s.cpu = (double)c.tv_sec + 1e-9 * (double)c.tv_nsec;
  return s;
}

static stamp stamp_since(stamp t0) {
  stamp t1 = stamp_now(), d;
  d.wall = t1.wall - t0.wall;
  d.cpu = t1.cpu - t0.cpu;
  return d;
}

int main(int argc, char **argv) {
  dpd_linreg_problem_config pcfg = dpd_linreg_problem_config_default();
  dpd_schedule_config scfg = dpd_schedule_config_default();
  dpd_ode_config ocfg = dpd_ode_config_default();
  dpd_volterra_config vcfg = dpd_volterra_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  dpd_ode_result *ode = NULL, *vol = NULL;
  dpd_err err;
  stamp t0, t_ode = {0.0, 0.0}, t_vol = {0.0, 0.0};
  double diff = 0.0;
  int status;

  if (argc < 3) {
    fprintf(stderr, "usage: %s D ALPHA [ODE_RTOL [STEPS]]\n", argv[0]);
    return 1;
  }
  pcfg.d = (size_t)strtoull(argv[1], NULL, 10);
  pcfg.spectrum = DPD_SPECTRUM_POWERLAW;
  pcfg.alpha = strtod(argv[2], NULL);
  pcfg.seed = 1;
  scfg.kind = DPD_SCHEDULE_CONST;
  scfg.eta0 = 1.0;
  ocfg.gamma = 0.5;
  ocfg.zeta = 0.5;
  ocfg.c = 1.0;
  ocfg.sigma2_const = 0.3;
  ocfg.mu_frozen = 1.0;
  ocfg.nu_frozen = 1.0;
  ocfg.grid = 101;
  if (argc > 3) {
    ocfg.rtol = strtod(argv[3], NULL);
  }
  if (argc > 4) {
    vcfg.steps = (size_t)strtoull(argv[4], NULL, 10);
  }
  dpd_err_reset(&err);
  if ((status = dpd_linreg_problem_create(&pcfg, &problem, &err)) < 0 ||
      (status = dpd_schedule_create(&scfg, &schedule, &err)) < 0) {
    fprintf(stderr, "dpd_bench_volterra: %s\n", err.reason);
    dpd_linreg_problem_free(problem);
    return 1;
  }
  t0 = stamp_now();
  status = dpd_ode_solve(problem, schedule, &ocfg, &ode, &err);
  t_ode = stamp_since(t0);
  if (status >= 0) {
    t0 = stamp_now();
    status = dpd_volterra_solve(problem, schedule, &ocfg, &vcfg, &vol, &err);
    t_vol = stamp_since(t0);
  }
  if (status < 0) {
    fprintf(stderr, "dpd_bench_volterra: %s: %s\n", dpd_status_str(status), err.reason);
  } else {
    for (size_t j = 0; j < ode->grid; j++) {
      diff = fmax(diff, fabs(vol->risk[j] / ode->risk[j] - 1.0));
    }
    printf("%zu %g %.6g %.4f %.4f %.4f %.4f %.2f %.2f %.3e %ld %ld %.12g %.12g\n", pcfg.d,
           pcfg.alpha, problem->lambda_max, t_ode.wall, t_ode.cpu, t_vol.wall, t_vol.cpu,
           t_ode.wall / t_vol.wall, t_ode.cpu / t_vol.cpu, diff, ode->steps, vol->steps,
           ode->final_risk, vol->final_risk);
  }
  dpd_ode_result_free(ode);
  dpd_ode_result_free(vol);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
  return status < 0 ? 2 : 0;
}
