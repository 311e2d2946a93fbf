/* Accuracy of Algorithm 1 at k = 5 and k = d (docs/semipriv.md's table), until the
 * model=semipriv adapter exposes it on the command line.
 * SPDX-License-Identifier: MIT
 *
 * Generator: the defaults of dpd_semipriv_gen_config_default (seed 1) with the given d and nu;
 * run: dpd_semipriv_run_config_default (n 500, n_public 5000, n_test 1000, seed 1) with R
 * replicates, epsilon, k. OpenBLAS on one thread; replicates on all OpenMP threads.
 * Usage: dpd_semipriv_accuracy d R epsilon nu [k ...]   (epsilon "inf"; k defaults to 5 and d) */
#include <gsl/gsl_errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "dpdyn/semipriv.h"

void openblas_set_num_threads(int num_threads);

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: dpd_semipriv_accuracy d R epsilon nu [k ...]\n");
    return 1;
  }
  gsl_set_error_handler_off();
  openblas_set_num_threads(1);
  dpd_semipriv_gen_config c = dpd_semipriv_gen_config_default();
  c.d = (size_t)strtoul(argv[1], NULL, 10);
  const size_t R = (size_t)strtoul(argv[2], NULL, 10);
  const double eps = strtod(argv[3], NULL);
  c.nu = strtod(argv[4], NULL);
  dpd_semipriv_gen *g = NULL;
  dpd_err e;
  if (dpd_semipriv_gen_create(&c, &g, &e) != DPD_OK) {
    fprintf(stderr, "dpd_semipriv_accuracy: %s\n", e.reason);
    return 1;
  }
  const int nk = argc > 5 ? argc - 5 : 2;
  printf("# d=%zu nu=%g epsilon=%g replicates=%zu n=500 n_public=5000 n_test=1000 seed=1\n", c.d,
         c.nu, eps, R);
  printf("# k test_accuracy se train_accuracy train_hinge xi_k_hat subspace_error zeta seconds\n");
  for (int a = 0; a < nk; a++) {
    dpd_semipriv_run_config rc = dpd_semipriv_run_config_default();
    rc.seeds = R;
    rc.epsilon = eps;
    rc.k = argc > 5 ? (size_t)strtoul(argv[5 + a], NULL, 10) : (a == 0 ? 5 : c.d);
    dpd_semipriv_result *r = NULL;
    const double t0 = omp_get_wtime();
    if (dpd_semipriv_run(g, &rc, &r, &e) != DPD_OK) {
      fprintf(stderr, "dpd_semipriv_accuracy: %s\n", e.reason);
      dpd_semipriv_gen_free(g);
      return 2;
    }
    printf("%zu %.4f %.4f %.4f %.4f %.5f %.4f %.4f %.2f\n", rc.k,
           r->mean[DPD_SEMIPRIV_TEST_ACCURACY], r->se[DPD_SEMIPRIV_TEST_ACCURACY],
           r->mean[DPD_SEMIPRIV_TRAIN_ACCURACY], r->mean[DPD_SEMIPRIV_TRAIN_HINGE],
           r->mean[DPD_SEMIPRIV_XI_HAT], r->mean[DPD_SEMIPRIV_SUBSPACE_ERROR], r->zeta,
           omp_get_wtime() - t0);
    dpd_semipriv_result_free(r);
  }
  dpd_semipriv_gen_free(g);
  return 0;
}
