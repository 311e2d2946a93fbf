/* Timing driver for the finite-size correction's node loops (docs/finite_size.md, "Cost"): the
 * conditioned coefficients of every group (dpd__fs_coef_eval) and the joint integrals of every
 * exact direction (dpd__fs_exact_eval), i.e. one right-hand side of the corrected ODE without
 * the O(groups) rest, on each instruction-set path (isa.h). The scalar path is the baseline
 * measured in the same run; every path gives the same bits (checked here too).
 *
 * usage: dpd_bench_finite [ALPHA D REPS]   (default 1.5 1000000 2000)
 * Prints per path: microseconds per right-hand side (best of 5 rounds of REPS, CPU time of this
 * thread), the ratio scalar / path, and whether the results equal the scalar path's bit for bit.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdyn/isa.h"
#include "dpdyn/linreg.h"
#include "linreg/finite_impl.h"

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One right-hand side's node loops at a state with the residual spread over the spectrum and
 * the top direction holding `share` of it; the outputs are summed into *check (all of them, so
 * that nothing is optimised away and a path that differs shows). */
static int rhs_loops(const dpd__fs_law *law, const dpd_noise_spec *noise, double R, double share,
                     dpd_isa isa, double *check) {
  const double c = 0.4, P = R + 0.5 * noise->zeta * noise->zeta, a1 = sqrt(2.0 * P * share);
  dpd__fs_coef co;
  dpd_err err;
  double s = 0.0;
  if (dpd__fs_coef_eval_isa(law, noise, c, R, 0.3, a1, 0.7, 1e-3, 1, isa, &co, &err) != 0) {
    return 1;
  }
  s += co.A0 + co.A1 + co.B0 + co.B1 + co.dA0 + co.dB0 + co.aA0 + co.aB0;
  for (size_t k = 0; k < law->ntilt; k++) {
    s += co.At[k] + co.Bt[k] + co.dAt[k] + co.aAt[k];
  }
  for (size_t e = 0; e < law->nexact; e++) {
    const double a = sqrt(2.0 * P * (e == 0 ? share : 0.02)), ap = e == 0 ? sqrt(0.04 * P) : a1;
    dpd__fs_exact_k k;
    if (dpd__fs_exact_eval_isa(law, e, c, P, a, ap, isa, &k) != 0) {
      return 1;
    }
    s += k.k1 + k.k2 + k.k1a + k.k2a + k.k1p + k.k2p + k.k1q + k.k2q;
  }
  *check += s;
  return 0;
}

int main(int argc, char **argv) {
  const double alpha = argc > 1 ? atof(argv[1]) : 1.5;
  const long reps = argc > 3 ? atol(argv[3]) : 2000;
  const dpd_noise_spec noise = {.law = DPD_NOISE_GAUSSIAN, .zeta = 0.5};
  const dpd_isa paths[] = {DPD_ISA_SCALAR, DPD_ISA_AVX2, DPD_ISA_AVX512};
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  dpd__fs_law *law = NULL;
  dpd_err err;
  double base = 0.0, base_check = 0.0;
  pc.d = argc > 2 ? (size_t)atol(argv[2]) : 1000000;
  pc.spectrum = DPD_SPECTRUM_POWERLAW;
  pc.alpha = alpha;
  pc.theta = DPD_THETA_FLAT;
  if (!(alpha > 0.0) || pc.d < 2 || reps < 1 ||
      dpd_linreg_problem_create(&pc, &p, &err) != DPD_OK ||
      dpd__fs_law_create(p, &law, &err) != 0) {
    fprintf(stderr, "usage: dpd_bench_finite [ALPHA > 0] [D >= 2] [REPS >= 1]\n");
    return 1;
  }
  printf("# power law %g, d = %zu: %zu exact directions, %zu size-biased groups, conditioning %s; "
         "microseconds per right-hand side's node loops (best of 5 x %ld, CPU)\n",
         alpha, pc.d, law->nexact, law->ntilt, law->cond ? "on" : "off", reps);
  printf("# path\tus_per_rhs\tspeedup_vs_scalar\tsame_bits\n");
  for (size_t q = 0; q < 3; q++) {
    double best = INFINITY, check = 0.0;
    if (!dpd_isa_available(paths[q])) {
      printf("%s\tnot available on this CPU\n", dpd_isa_name(paths[q]));
      continue;
    }
    for (int round = 0; round < 5; round++) {
      const double t0 = cpu_seconds();
      check = 0.0;
      for (long r = 0; r < reps; r++) {
        const double R = 0.05 + 0.5 * (double)(r % 16) / 16.0,
                     share = 0.1 + 0.05 * (double)(r % 13);
        if (rhs_loops(law, &noise, R, share, paths[q], &check) != 0) {
          fprintf(stderr, "dpd_bench_finite: a node loop failed\n");
          return 1;
        }
      }
      best = fmin(best, cpu_seconds() - t0);
    }
    if (q == 0) {
      base = best;
      base_check = check;
    }
    printf("%s\t%.2f\t%.2f\t%s\n", dpd_isa_name(paths[q]), 1e6 * best / (double)reps, base / best,
           memcmp(&check, &base_check, sizeof check) == 0 ? "yes" : "NO");
  }
  dpd__fs_law_free(law);
  dpd_linreg_problem_free(p);
  return 0;
}
