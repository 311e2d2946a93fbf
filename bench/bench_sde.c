/* Library-level benchmark of the H-DP-SGD integrator (dpd_linreg_sde_run).
 * SPDX-License-Identifier: MIT
 *
 * Default workload: the one of bench/bench_sde.sh (and of dpd_bench_sim), i.e.
 *   d = 1000, n = 4000, seeds = 64, c = 1, rho = 1, schedule sqrt, eta0 = 1, zeta = 0.5,
 *   isotropic spectrum, random theta* with |theta*| = 1, seed 1, grid 101, dt = 1/n.
 * Usage: dpd_bench_sde [d n seeds [threads [dt]]]
 * Prints key=value lines: seconds, steps (Euler-Maruyama steps over all replicates),
 * steps_per_second, gaussians, gaussians_per_second, final_risk, ... */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "dpdyn/dpd.h"

int main(int argc, char **argv) {
  size_t d = 1000, n = 4000, seeds = 64;
  int threads = 0;
  double dt = 0.0;
  if (argc > 1 && argc < 4) {
    fprintf(stderr, "usage: dpd_bench_sde [d n seeds [threads [dt]]]\n");
    return 1;
  }
  if (argc >= 4) {
    d = (size_t)strtoul(argv[1], NULL, 10);
    n = (size_t)strtoul(argv[2], NULL, 10);
    seeds = (size_t)strtoul(argv[3], NULL, 10);
  }
  if (argc >= 5) {
    threads = atoi(argv[4]);
  }
  if (argc >= 6) {
    dt = strtod(argv[5], NULL);
  }
  dpd_err err;
  dpd_err_reset(&err);
  dpd_linreg_problem_config pcfg = dpd_linreg_problem_config_default();
  pcfg.d = d;
  pcfg.seed = 1;
  dpd_linreg_problem *problem = NULL;
  dpd_schedule_config scfg = dpd_schedule_config_default();
  scfg.kind = DPD_SCHEDULE_SQRT;
  scfg.eta0 = 1.0;
  dpd_schedule *schedule = NULL;
  dpd_linreg_sde_config cfg = dpd_linreg_sde_config_default();
  cfg.n = n;
  cfg.seeds = seeds;
  cfg.seed = 1;
  cfg.c = 1.0;
  cfg.rho = 1.0;
  cfg.dt = dt;
  cfg.threads = threads;
  dpd_linreg_sim_result *res = NULL;
  int status = dpd_linreg_problem_create(&pcfg, &problem, &err);
  if (status >= 0) {
    status = dpd_schedule_create(&scfg, &schedule, &err);
  }
  double t0 = omp_get_wtime();
  if (status >= 0) {
    status = dpd_linreg_sde_run(problem, schedule, &cfg, &res, &err);
  }
  double seconds = omp_get_wtime() - t0;
  if (status < 0) {
    fprintf(stderr, "dpd_bench_sde: %s: %s\n", dpd_status_str(status), err.reason);
  } else {
    /* Steps as the integrator takes them: ceil(1/dt) (n for the default dt = 1/n), each with
     * 2d Gaussians (the sqrt schedule has sigma~ > 0 everywhere), plus d for the release. */
    double nsteps = dt > 0.0 ? ceil(1.0 / dt - 1e-9) : (double)n;
    double steps = nsteps * (double)seeds;
    double gaussians = (2.0 * (double)d * nsteps + (double)d) * (double)seeds;
    printf("# dpd_bench_sde d=%zu n=%zu seeds=%zu threads=%d dt=%g rng=%s\n", d, n, seeds,
           threads > 0 ? threads : omp_get_max_threads(), dt > 0.0 ? dt : 1.0 / (double)n,
           dpd_rng_isa_name(dpd_rng_isa_get()));
    printf("seconds=%.6f\n", seconds);
    printf("steps=%.6e\n", steps);
    printf("steps_per_second=%.6e\n", steps / seconds);
    printf("gaussians=%.6e\n", gaussians);
    printf("gaussians_per_second=%.6e\n", gaussians / seconds);
    printf("final_risk=%.10g\nfinal_risk_se=%.10g\n", res->final_risk, res->final_risk_se);
    printf("before_release=%.10g\nclip_fraction_total=%.6f\n", res->before_release,
           res->clip_fraction_total);
  }
  dpd_linreg_sim_result_free(res);
  dpd_schedule_free(schedule);
  dpd_linreg_problem_free(problem);
  return status < 0 ? 2 : 0;
}
