/* The finite-size-corrected factors at t = 0 (docs/finite_size.md §4, "Its cause"): for a power
 * law, theta* flat, clipping c and label noise zeta, prints per coordinate i the model's drift
 * factor mu_i (E[x_i psi] = lambda_i e_i mu_i) and second moment M2_i = E[g_i^2 psi^2], and the
 * pieces common to every coordinate. bench/fs_coupling_mc.py measures the same by Monte Carlo.
 * usage: dpd_fs_coupling [ALPHA D C ZETA COND]   (default 1.5 400 0.5 0.5 1; COND = 0: the
 * factors without conditioning on the top direction, as before that existed)
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dpdyn/dpd.h"
#include "linreg/finite_impl.h"

int main(int argc, char **argv) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  dpd__fs_law *law = NULL;
  dpd__fs_coef co;
  dpd_err err;
  const double alpha = argc > 1 ? atof(argv[1]) : 1.5, c = argc > 3 ? atof(argv[3]) : 0.5;
  const double zeta = argc > 4 ? atof(argv[4]) : 0.5;
  const dpd_noise_spec noise = {.law = DPD_NOISE_GAUSSIAN, .zeta = zeta};
  double R = 0.0, s1 = 0.0, s2 = 0.0, P, a1 = 0.0, s2_1 = 0.0, a2 = 0.0, s2_2 = 0.0;
  const int cond = argc > 5 ? atoi(argv[5]) : 1;
  pc.d = argc > 2 ? (size_t)atol(argv[2]) : 400;
  pc.spectrum = DPD_SPECTRUM_POWERLAW;
  pc.alpha = alpha;
  pc.theta = DPD_THETA_FLAT;
  if (dpd_linreg_problem_create(&pc, &p, &err) != DPD_OK || dpd__fs_law_create(p, &law, &err)) {
    fprintf(stderr, "dpd_fs_coupling: %s\n", err.reason);
    return 1;
  }
  for (size_t i = 0; i < p->d; i++) {
    const double e2 = p->theta_star[i] * p->theta_star[i];
    R += 0.5 * p->lambda[i] * e2;
    s1 += p->lambda[i] * e2;
    s2 += p->lambda[i] * p->lambda[i] * e2;
  }
  P = R + 0.5 * zeta * zeta;
  if (cond && law->nexact > 0) { /* the top direction's share a1; lbar without it */
    const size_t j1 = law->exact_group[0];
    const double l1 = p->group_lambda[j1], e1 = p->theta_star[j1];
    a1 = sqrt(l1) * fabs(e1);
    s2_1 = l1 * l1 * e1 * e1;
    if (law->nexact > 1) { /* the partner of the top direction's own integral */
      const size_t j2 = law->exact_group[1];
      const double l2 = p->group_lambda[j2], e2 = p->theta_star[j2];
      a2 = sqrt(l2) * fabs(e2);
      s2_2 = l2 * l2 * e2 * e2;
    }
  }
  if (dpd__fs_coef_eval(law, &noise, c, R, (s2 - s2_1) / s1, a1, 1.0, 1.0, 0, &co, &err) != 0) {
    fprintf(stderr, "dpd_fs_coupling: %s\n", err.reason);
    return 1;
  }
  printf("# alpha %g d %zu c %g zeta %g: R %.6f P %.6f kappa %.6f; E_s F_mu %.6f, rank-one mu "
         "%+.6f; E_s F_nu %.6f, rank-one N %+.6f; exact directions %zu\n",
         alpha, p->d, c, zeta, R, P, s2 / (double)p->d / (2.0 * P), co.mu, co.rank_one_mu,
         co.nu * 2.0 * P, co.rank_one_nu * 2.0 * P, law->nexact);
  printf("i\tlambda\tmu_model\tM2_model\n");
  for (size_t j = 0; j < p->ngroups; j++) { /* groups of multiplicity 1: group j = coordinate j */
    const double l = p->group_lambda[j], beta = l / (double)p->d, e = p->theta_star[j];
    const int k = law->tilt_of[j];
    double mu = k >= 0 ? co.mut[k] : co.mu0 + beta * co.mu1;
    double M2 =
        (k >= 0 ? co.Nt[k] : co.N0 + beta * co.N1) + l * e * e * (k >= 0 ? co.sigt[k] : co.sig0);
    if (k >= 0 && law->exact_of_tilt[k] >= 0) {
      const size_t ex = (size_t)law->exact_of_tilt[k];
      const double a = sqrt(l) * fabs(e);
      const double other =
          0.5 * (double)p->d * (s2 - l * l * e * e - (ex > 0 ? s2_1 : (a2 > 0.0 ? s2_2 : 0.0)));
      dpd__fs_exact_k kx;
      if (dpd__fs_exact_eval(law, ex, c, P, a, ex > 0 ? a1 : a2, &kx) == 0) {
        mu = kx.k1 / a + co.r1_mu * other;
        M2 = kx.k2 + co.r1_N * other;
      }
    }
    printf("%zu\t%.8g\t%.8f\t%.8f\n", j, l, mu, M2);
  }
  dpd__fs_law_free(law);
  dpd_linreg_problem_free(p);
  return 0;
}
