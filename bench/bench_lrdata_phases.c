/* The phases of preparing a dataset (dpd__lrdata_create, src/linreg/data.c), timed apart
 * (issue 27 §5: Sigma^ and its eigen-decomposition at d = 784 in < 1 s). White-box: it compiles
 * data.c itself to call its phases one by one, then times the whole create.
 * SPDX-License-Identifier: MIT
 *
 * Usage: dpd_bench_lrdata_phases FEATURES.npy [TARGETS.npy]
 * Prints: open, feature means, Sigma^ (blocked dsyrk), dsyevr, Sigma^ + eigen, and the full
 * create (fit, residuals, diagnostics with the leverage dgemm), in wall seconds. */
#include "linreg/data.c"

#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  dpd__lrdata_config c;
  dpd_err err;
  dpd__lrdata *D;
  double *b, t[7];
  if (argc < 2) {
    fprintf(stderr, "usage: %s FEATURES.npy [TARGETS.npy]\n", argv[0]);
    return 2;
  }
  memset(&c, 0, sizeof c);
  c.features_key = "features";
  c.features_path = argv[1];
  c.targets_key = "targets";
  c.targets_path = argc > 2 ? argv[2] : NULL;
  c.center = c.scale_trace = c.target_unit = 1;
  c.seed = 1;
  if ((D = calloc(1, sizeof *D)) == NULL) {
    return 1;
  }
  t[0] = omp_get_wtime();
  D->model_targets = c.targets_path == NULL;
  if (open_files(&c, &D->X, &D->Y, &err) < 0) {
    fprintf(stderr, "%s\n", err.reason);
    return 1;
  }
  D->N = D->X.rows;
  D->d = D->X.cols;
  D->scale = D->y_scale = 1;
  if (split_counts(&c, D->N, &D->n_pop, &D->n_test, &err) < 0 || make_split(D, 1, &err) < 0 ||
      allocate(D, &err) < 0) {
    fprintf(stderr, "%s\n", err.reason);
    return 1;
  }
  t[1] = omp_get_wtime();
  if (feature_means(D, &c, &err) < 0 || (!D->model_targets && target_factors(D, &c, &err) < 0)) {
    fprintf(stderr, "%s\n", err.reason);
    return 1;
  }
  t[2] = omp_get_wtime();
  if ((b = calloc(D->d, sizeof *b)) == NULL || covariance(D, &c, b, &err) < 0) {
    return 1;
  }
  t[3] = omp_get_wtime();
  if (eigen(D, &err) < 0) {
    fprintf(stderr, "%s\n", err.reason);
    return 1;
  }
  t[4] = omp_get_wtime();
  dpd__lrdata_free(D);
  free(b);
  D = NULL;
  t[5] = omp_get_wtime();
  if (dpd__lrdata_create(&c, &D, &err) < 0) {
    fprintf(stderr, "%s\n", err.reason);
    return 1;
  }
  t[6] = omp_get_wtime();
  printf("rows=%zu\nd=%zu\nfloat32=%d\n", D->N, D->d, D->X.f32);
  printf("open_seconds=%.3f\nmeans_seconds=%.3f\nsigma_dsyrk_seconds=%.3f\ndsyevr_seconds=%.3f\n",
         t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3]);
  printf("sigma_plus_eigen_seconds=%.3f   # target < 1\ncreate_seconds=%.3f\n", t[4] - t[2],
         t[6] - t[5]);
  dpd__lrdata_free(D);
  return 0;
}
