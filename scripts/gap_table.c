/* Gap table: distance of the DP-SGD simulation and of the homogenized SDE from the
 * deterministic equivalent (risk ODE), as n grows at fixed gamma = d/n.
 * SPDX-License-Identifier: MIT
 *
 * MATH.md 1.6-1.7: sup_{t<1} |R(t) - R(theta_{floor(tn)})| = O(log^2 n / sqrt n) for both the
 * simulated risk and the SDE's, so gap * sqrt(n) should stay bounded (up to the log factor).
 * Workload (defaults of scripts/sde_gap_table.sh): n in {500, 2000, 8000}, gamma = 0.25 (d = n/4),
 * isotropic spectrum, random theta* with |theta*| = 1, c = 0.5, rho = 1, zeta = 0.5, schedule
 * sqrt with eta0 = 1, 64 replicates, grid 101, dt = 1/n. For each n and each of sim and SDE:
 *   sup_gap   = max over the grid of |mean(t_j) - R_ode(t_j)| (t = 1 before release, against
 * R(1-)), sup_se    = the standard error of the mean at the maximising t_j (sup_gap / sup_se in
 * SE), final_gap = |mean final released risk - R_out|, with its SE, and sup_gap * sqrt(n),
 * final_gap * sqrt(n). The means carry Monte-Carlo noise: a gap of a few SE is noise, not bias (the
 * sup over 101 correlated grid points of pure noise is typically 2-3 SE). Usage: dpd_gap_table
 * [seeds [grid [threads [n1 n2 ...]]]] Prints a gnuplot-ready table (whitespace columns, '#' header
 * lines) on stdout. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "dpdyn/dpd.h"

typedef struct {
  double sup_gap, sup_se, sup_t, final_gap, final_se;
} gap_stats;

static gap_stats gaps(const dpd_linreg_sim_result *r, const dpd_ode_result *ode) {
  gap_stats g = {0.0, 0.0, 0.0, 0.0, 0.0};
  for (size_t j = 0; j < r->grid; j++) {
    const int last = j + 1 == r->grid;
    double m = last ? r->before_release : r->risk_mean[j];
    double se = last ? r->before_release_se : r->risk_se[j];
    double gap = fabs(m - ode->risk[j]);
    if (gap > g.sup_gap) {
      g.sup_gap = gap;
      g.sup_se = se;
      g.sup_t = r->t[j];
    }
  }
  g.final_gap = fabs(r->final_risk - ode->final_risk);
  g.final_se = r->final_risk_se;
  return g;
}

static void print_row(const char *what, size_t n, size_t d, double seconds, const gap_stats *g) {
  double sn = sqrt((double)n);
  printf("%-4s %6zu %5zu %11.4e %10.3e %7.2f %5.2f %11.4e %10.3e %7.2f %10.4f %10.4f %8.2f\n", what,
         n, d, g->sup_gap, g->sup_se, g->sup_se > 0.0 ? g->sup_gap / g->sup_se : 0.0, g->sup_t,
         g->final_gap, g->final_se, g->final_se > 0.0 ? g->final_gap / g->final_se : 0.0,
         g->sup_gap * sn, g->final_gap * sn, seconds);
}

int main(int argc, char **argv) {
  size_t seeds = 64, grid = 101;
  int threads = 0;
  size_t ns[16] = {500, 2000, 8000};
  size_t count = 3;
  const double gamma = 0.25, c = 0.5, rho = 1.0, zeta = 0.5, eta0 = 1.0;
  const uint64_t seed = 1;
  if (argc > 1) {
    seeds = (size_t)strtoul(argv[1], NULL, 10);
  }
  if (argc > 2) {
    grid = (size_t)strtoul(argv[2], NULL, 10);
  }
  if (argc > 3) {
    threads = atoi(argv[3]);
  }
  if (argc > 4) {
    count = 0;
    for (int a = 4; a < argc && count < sizeof ns / sizeof *ns; a++) {
      ns[count++] = (size_t)strtoul(argv[a], NULL, 10);
    }
  }
  printf("# dpd_gap_table (dpdyn %s): |mean - ODE| for the DP-SGD simulation and the SDE\n",
         dpd_version());
  printf("# gamma=%g spectrum=iso theta_star=random theta_norm=1 c=%g rho=%g zeta=%g "
         "schedule=sqrt eta0=%g seeds=%zu grid=%zu seed=%llu dt=1/n threads=%d\n",
         gamma, c, rho, zeta, eta0, seeds, grid, (unsigned long long)seed,
         threads > 0 ? threads : omp_get_max_threads());
  printf("# sup over the grid (t = 1: before release, vs R(1-)); final: released risk vs R_out\n");
  printf("# columns: what n d sup_gap sup_se sup_in_se sup_t final_gap final_se final_in_se "
         "sup_gap*sqrt(n) final_gap*sqrt(n) seconds\n");
  for (size_t k = 0; k < count; k++) {
    const size_t n = ns[k], d = (size_t)llround(gamma * (double)n);
    dpd_err err;
    dpd_err_reset(&err);
    dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
    pc.d = d;
    pc.seed = seed;
    dpd_schedule_config sc = dpd_schedule_config_default();
    sc.kind = DPD_SCHEDULE_SQRT;
    sc.eta0 = eta0;
    dpd_linreg_sim_config simc = dpd_linreg_sim_config_default();
    simc.n = n;
    simc.zeta = zeta;
    simc.c = c;
    simc.rho = rho;
    simc.seeds = seeds;
    simc.seed = seed;
    simc.grid = grid;
    simc.threads = threads;
    dpd_linreg_sde_config sdec = dpd_linreg_sde_config_default();
    sdec.n = n;
    sdec.zeta = zeta;
    sdec.c = c;
    sdec.rho = rho;
    sdec.seeds = seeds;
    sdec.seed = seed + 1; /* streams independent of the simulation's */
    sdec.grid = grid;
    sdec.threads = threads;
    dpd_ode_config oc = dpd_ode_config_default();
    oc.gamma = (double)d / (double)n;
    oc.zeta = zeta;
    oc.c = c;
    oc.rho = rho;
    oc.grid = grid;
    dpd_linreg_problem *problem = NULL;
    dpd_schedule *schedule = NULL;
    dpd_linreg_sim_result *sim = NULL, *sde = NULL;
    dpd_ode_result *ode = NULL;
    double t_sim = 0.0, t_sde = 0.0;
    int status = dpd_linreg_problem_create(&pc, &problem, &err);
    if (status >= 0) {
      status = dpd_schedule_create(&sc, &schedule, &err);
    }
    if (status >= 0) {
      status = dpd_ode_solve(problem, schedule, &oc, &ode, &err);
    }
    if (status >= 0) {
      double t0 = omp_get_wtime();
      status = dpd_linreg_sim_run(problem, schedule, &simc, &sim, &err);
      t_sim = omp_get_wtime() - t0;
    }
    if (status >= 0) {
      double t0 = omp_get_wtime();
      status = dpd_linreg_sde_run(problem, schedule, &sdec, &sde, &err);
      t_sde = omp_get_wtime() - t0;
    }
    if (status < 0) {
      fprintf(stderr, "dpd_gap_table: n = %zu: %s: %s\n", n, dpd_status_str(status), err.reason);
    } else {
      gap_stats gs = gaps(sim, ode), ge = gaps(sde, ode);
      print_row("sim", n, d, t_sim, &gs);
      print_row("sde", n, d, t_sde, &ge);
      fflush(stdout);
    }
    dpd_linreg_sim_result_free(sim);
    dpd_linreg_sim_result_free(sde);
    dpd_ode_result_free(ode);
    dpd_schedule_free(schedule);
    dpd_linreg_problem_free(problem);
    if (status < 0) {
      return 2;
    }
  }
  return 0;
}
