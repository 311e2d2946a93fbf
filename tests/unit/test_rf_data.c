/* Tests of random features on inputs from a file (include/dpdyn/rf.h, dpd_rf_data; docs/rf.md,
 * "Inputs from a file").
 * SPDX-License-Identifier: MIT
 *
 * The files are written here: a float64 .npy of N(0, I_d) rows times 3 plus 5 (so the
 * preprocessing has something to undo), and one of targets. Sanity: on Gaussian rows the
 * preprocessed inputs are N(0, I_d)-like, and DP-GD's test risk over independent draws agrees
 * with the drawn Gaussian inputs' within the combined standard error (fixed seeds). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dpd_test.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "dpdyn/rng.h"

#define D 10
#define N 2000

/* Writes rows x cols doubles as a C-order little-endian float64 .npy (cols = 0: 1-D). */
static void npy_write(const char *path, const double *x, size_t rows, size_t cols) {
  char dict[128];
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  int len =
      cols > 0
          ? snprintf(dict, sizeof dict,
                     "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, %zu), }", rows, cols)
          : snprintf(dict, sizeof dict,
                     "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }", rows);
  const size_t total = (10 + (size_t)len + 1 + 63) / 64 * 64, hlen = total - 10;
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  pre[8] = (unsigned char)(hlen & 0xff);
  pre[9] = (unsigned char)(hlen >> 8);
  assert_int_equal(fwrite(pre, 1, 10, f), 10);
  assert_int_equal(fwrite(dict, 1, (size_t)len, f), (size_t)len);
  for (size_t k = (size_t)len; k + 1 < hlen; k++) {
    fputc(' ', f);
  }
  fputc('\n', f);
  assert_int_equal(fwrite(x, sizeof *x, rows * (cols > 0 ? cols : 1), f),
                   rows * (cols > 0 ? cols : 1));
  assert_int_equal(fclose(f), 0);
}

typedef struct {
  char dir[64], x[96], t[96];
} files;

static void files_write(files *fs) {
  dpd_rng rng;
  double *x = malloc(N * D * sizeof *x), *t = malloc(N * sizeof *t);
  assert_non_null(x);
  assert_non_null(t);
  snprintf(fs->dir, sizeof fs->dir, "/tmp/dpd_test_rfdata_XXXXXX");
  assert_non_null(mkdtemp(fs->dir));
  snprintf(fs->x, sizeof fs->x, "%s/x.npy", fs->dir);
  snprintf(fs->t, sizeof fs->t, "%s/t.npy", fs->dir);
  dpd_rng_init(&rng, 77, 3);
  dpd_rng_gaussian_fill(&rng, x, N * D);
  for (size_t i = 0; i < N * D; i++) {
    x[i] = 3.0 * x[i] + 5.0;
  }
  for (size_t i = 0; i < N; i++) {
    t[i] = 10.0 + 2.0 * x[i * D];
  }
  npy_write(fs->x, x, N, D);
  npy_write(fs->t, t, N, 0);
  free(x);
  free(t);
}

static void files_remove(const files *fs) {
  unlink(fs->x);
  unlink(fs->t);
  rmdir(fs->dir);
}

static dpd_rf_data *data_open(const files *fs, int targets) {
  dpd_rf_data *data = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_rf_data_create(fs->x, targets ? fs->t : NULL, 0, &data, &err);
  if (st != DPD_OK) {
    print_error("dpd_rf_data_create: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return data;
}

static dpd_rf_config file_config(const dpd_rf_data *data) {
  dpd_rf_config cfg = dpd_rf_config_default();
  cfg.d = D;
  cfg.n = 100;
  cfg.n_test = 200;
  cfg.p = 150;
  cfg.zeta = 0.0;
  cfg.input = DPD_RF_INPUT_FILE;
  cfg.data = data;
  cfg.seed = 5;
  return cfg;
}

/* The factors undo the affine map, the preprocessed rows have mean 0 and mean |x|^2 = d. */
static void preprocessing_centres_and_scales_to_mean_norm_d(void **state) {
  files fs;
  dpd_rf_data_info info;
  double x[D], mean[D] = {0}, sq = 0.0, tsum = 0.0, tsq = 0.0;
  (void)state;
  files_write(&fs);
  dpd_rf_data *data = data_open(&fs, 1);
  dpd_rf_data_info_get(data, &info);
  assert_int_equal(info.rows, N);
  assert_int_equal(info.d, D);
  assert_int_equal(info.has_targets, 1);
  assert_rel(info.input_scale, 1.0 / 3.0, 0.03);         /* the rows' sd is 3 */
  assert_rel(info.input_mean_norm, 5.0 * sqrt(D), 0.02); /* their mean is 5 (1, ..., 1) */
  assert_rel(info.target_mean, 20.0, 0.02);
  assert_rel(info.target_scale, 1.0 / 6.0, 0.1); /* 1 / (2 * 3); the sample's is 1 / 5.68 */
  for (size_t i = 0; i < N; i++) {
    dpd_rf_data_row_get(data, i, x);
    for (size_t k = 0; k < D; k++) {
      mean[k] += x[k] / N;
      sq += x[k] * x[k] / N;
    }
    const double y = dpd_rf_data_target_get(data, i);
    tsum += y;
    tsq += y * y;
  }
  for (size_t k = 0; k < D; k++) {
    assert_abs(mean[k], 0.0, 1e-12);
  }
  assert_rel(sq, (double)D, 1e-12);
  assert_abs(tsum / N, 0.0, 1e-12);
  assert_rel(tsq / N, 1.0, 1e-12);
  dpd_rf_data_free(data);
  files_remove(&fs);
}

/* The rows of a draw are distinct, training and test apart, the features those of the rows, the
 * labels the rows' targets; the same draw gives the same rows, another draw other rows. */
static void draws_take_distinct_rows_reproducibly(void **state) {
  files fs;
  double x[D];
  (void)state;
  files_write(&fs);
  dpd_rf_data *data = data_open(&fs, 1);
  dpd_rf_config cfg = file_config(data);
  dpd_rf_problem *a = NULL, *b = NULL, *c = NULL;
  cfg.target = DPD_RF_TARGET_FILE;
  assert_int_equal(dpd_rf_problem_create(&cfg, &a, NULL), DPD_OK);
  assert_int_equal(dpd_rf_problem_create(&cfg, &b, NULL), DPD_OK);
  cfg.draw = 1;
  assert_int_equal(dpd_rf_problem_create(&cfg, &c, NULL), DPD_OK);
  const size_t m = a->n + a->n_test;
  char *seen = calloc(N, 1);
  size_t differ = 0;
  assert_non_null(seen);
  for (size_t k = 0; k < m; k++) {
    assert_true(a->rows[k] < N);
    assert_int_equal(seen[a->rows[k]], 0);
    seen[a->rows[k]] = 1;
    assert_int_equal(a->rows[k], b->rows[k]);
    differ += a->rows[k] != c->rows[k];
  }
  assert_true(differ > m / 2);
  assert_memory_equal(a->phi, b->phi, a->n * a->p * sizeof *a->phi);
  for (size_t i = 0; i < a->n; i += 37) {
    double s = 0.0;
    dpd_rf_data_row_get(data, a->rows[i], x);
    for (size_t k = 0; k < D; k++) {
      s += a->V[3 * D + k] * x[k];
    }
    assert_rel(a->phi[i * a->p + 3], tanh(s), 1e-12);
    assert_rel(a->y[i], dpd_rf_data_target_get(data, a->rows[i]), 1e-15);
  }
  for (size_t i = 0; i < a->n_test; i += 41) {
    assert_rel(a->y_test[i], dpd_rf_data_target_get(data, a->rows[a->n + i]), 1e-15);
  }
  free(seen);
  dpd_rf_problem_free(a);
  dpd_rf_problem_free(b);
  dpd_rf_problem_free(c);
  dpd_rf_data_free(data);
  files_remove(&fs);
}

/* d, n + n_test and target = file are checked against the data, naming the key. */
static void sizes_are_checked_against_the_file(void **state) {
  files fs;
  dpd_err err;
  dpd_rf_problem *pr = NULL;
  (void)state;
  files_write(&fs);
  dpd_rf_data *data = data_open(&fs, 0);
  dpd_rf_config cfg = file_config(data);
  cfg.d = D + 1;
  assert_int_equal(dpd_rf_problem_create(&cfg, &pr, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'d': 11"));
  cfg.d = D;
  cfg.n = N;
  assert_int_equal(dpd_rf_problem_create(&cfg, &pr, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'n'"));
  cfg.n = N - 10;
  cfg.n_test = 11;
  assert_int_equal(dpd_rf_problem_create(&cfg, &pr, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'n_test'"));
  cfg.n_test = 10;
  cfg.target = DPD_RF_TARGET_FILE;
  assert_int_equal(dpd_rf_problem_create(&cfg, &pr, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'target'"));
  cfg.data = NULL;
  cfg.target = DPD_RF_TARGET_LINEAR;
  assert_int_equal(dpd_rf_problem_create(&cfg, &pr, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'input'"));
  assert_null(pr);
  dpd_rf_data_free(data);
  files_remove(&fs);
}

/* Mean final test risk and its SE over `seeds` independent draws (resample = all). */
static void risk_over_draws(const dpd_rf_config *pc, double *mean, double *se) {
  dpd_rf_sim_config sc = dpd_rf_sim_config_default();
  dpd_rf_sim_result *res = NULL;
  dpd_err err;
  sc.T = 100;
  sc.eta = 1.0 / (double)pc->p * 5.0;
  sc.seeds = 24;
  sc.grid = 2;
  sc.threads = 1;
  sc.seed = pc->seed;
  int st = dpd_rf_sim_resample_run(pc, &sc, DPD_RF_RESAMPLE_ALL, NULL, NULL, &res, &err);
  if (st != DPD_OK) {
    print_error("dpd_rf_sim_resample_run: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  *mean = res->test_mean[1];
  *se = res->test_se[1];
  assert_true(isfinite(*mean) && *mean > 0.0 && *mean < 1.0);
  dpd_rf_sim_result_free(res);
}

/* On Gaussian rows, DP-GD (linear target, no noise) reaches the test risk of drawn Gaussian
 * inputs within 4 combined SE. */
static void gaussian_rows_behave_like_gaussian_inputs(void **state) {
  files fs;
  double m_file, se_file, m_law, se_law;
  (void)state;
  files_write(&fs);
  dpd_rf_data *data = data_open(&fs, 0);
  dpd_rf_config cfg = file_config(data);
  cfg.target = DPD_RF_TARGET_LINEAR;
  risk_over_draws(&cfg, &m_file, &se_file);
  cfg.input = DPD_RF_INPUT_GAUSSIAN;
  cfg.data = NULL;
  risk_over_draws(&cfg, &m_law, &se_law);
  print_message("file rows %.4f +- %.4f, Gaussian law %.4f +- %.4f\n", m_file, se_file, m_law,
                se_law);
  assert_true(fabs(m_file - m_law) < 4.0 * sqrt(se_file * se_file + se_law * se_law));
  dpd_rf_data_free(data);
  files_remove(&fs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(preprocessing_centres_and_scales_to_mean_norm_d),
      cmocka_unit_test(draws_take_distinct_rows_reproducibly),
      cmocka_unit_test(sizes_are_checked_against_the_file),
      cmocka_unit_test(gaussian_rows_behave_like_gaussian_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
