/* Tests of semipriv's DP-SGD trainer and file splits (semipriv.h trainer DPSGD; sp_dpsgd.c,
 * sp_split.c): the random subsets of the splits (sizes, determinism, uniformity), their
 * refusals, multi-class label parsing, and Algorithm 1 with DP-SGD on the data law (same bits
 * for any thread count; the calibrated z never above the target).
 * SPDX-License-Identifier: MIT
 *
 * Seeds are fixed; the uniformity check uses 4 binomial standard errors of its own sample. */
#define _POSIX_C_SOURCE 200809L
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dpd_test.h"
#include "dpdyn/semipriv.h"
#include "semipriv/sp_files_impl.h"

void openblas_set_num_threads(int num_threads);

/* m of N rows, in order, disjoint from the rest; the same draw for the same (seed, rep, index);
 * another replicate draws another subset; and every row is taken with probability m / N (rows
 * 0 and N - 1 over R replicates, within 4 SE: selection sampling biased toward either end
 * would fail). */
static void select_is_a_uniform_subset(void **state) {
  enum { N = 200, M = 20, R = 4000 };
  size_t out[M], rest[N - M], out2[M];
  double u[N];
  size_t first = 0, last = 0, mid = 0;
  (void)state;
  for (size_t r = 0; r < R; r++) {
    dpd__sp_select(7, r, DPD__SP_SPLIT_PUBLIC, NULL, N, M, out, rest, u);
    char seen[N] = {0};
    for (size_t i = 0; i < M; i++) {
      assert_true(i == 0 || out[i] > out[i - 1]);
      seen[out[i]]++;
    }
    for (size_t i = 0; i < N - M; i++) {
      assert_true(i == 0 || rest[i] > rest[i - 1]);
      seen[rest[i]]++;
    }
    for (size_t i = 0; i < N; i++) {
      assert_int_equal(seen[i], 1);
    }
    first += out[0] == 0;
    last += out[M - 1] == N - 1;
    for (size_t i = 0; i < M; i++) {
      mid += out[i] == N / 2;
    }
    if (r == 3) {
      dpd__sp_select(7, r, DPD__SP_SPLIT_PUBLIC, NULL, N, M, out2, NULL, u);
      assert_memory_equal(out, out2, sizeof out);
      dpd__sp_select(7, r + 1, DPD__SP_SPLIT_PUBLIC, NULL, N, M, out2, NULL, u);
      assert_true(memcmp(out, out2, sizeof out) != 0);
      dpd__sp_select(7, r, DPD__SP_SPLIT_PRIVATE, NULL, N, M, out2, NULL, u);
      assert_true(memcmp(out, out2, sizeof out) != 0); /* its own region */
    }
  }
  const double p = (double)M / N, se = sqrt(p * (1.0 - p) / R);
  assert_abs((double)first / R, p, 4.0 * se);
  assert_abs((double)last / R, p, 4.0 * se);
  assert_abs((double)mid / R, p, 4.0 * se);
  /* a subset of a list keeps its entries */
  size_t from[N];
  for (size_t i = 0; i < N; i++) {
    from[i] = 1000 + 3 * i;
  }
  dpd__sp_select(7, 0, DPD__SP_SPLIT_PRIVATE, from, N, M, out, NULL, u);
  for (size_t i = 0; i < M; i++) {
    assert_true(out[i] >= 1000 && (out[i] - 1000) % 3 == 0);
  }
}

/* Sizes of the splits and their refusals, naming the key and the count. */
static void split_sizes_and_refusals(void **state) {
  dpd__sp_files f = {.from_file = 1, .public_fraction = 0.1, .private_fraction = 0.5};
  size_t np = 0, npriv = 0, n = 0;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(dpd__sp_split_sizes(&f, 1000, 5, 1, &np, &npriv, &n, &err), DPD_OK);
  assert_true(np == 100 && npriv == 900 && n == 450);
  f.public_fraction = 0.0;
  f.private_fraction = 1.0;
  assert_int_equal(dpd__sp_split_sizes(&f, 1000, 5, 1, &np, &npriv, &n, &err), DPD_OK);
  assert_true(np == 0 && npriv == 1000 && n == 1000);
  f.public_fraction = 0.004; /* 4 public rows < k + 1 = 6 */
  assert_int_equal(dpd__sp_split_sizes(&f, 1000, 5, 1, &np, &npriv, &n, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'public_fraction': 0.004 gives 4 public rows of 1000"));
  assert_int_equal(dpd__sp_split_sizes(&f, 1000, 5, 0, &np, &npriv, &n, &err), DPD_OK);
  f.public_fraction = 0.5;
  f.private_fraction = 0.001; /* round(0.5) of 500 ... */
  assert_int_equal(dpd__sp_split_sizes(&f, 1000, 5, 1, &np, &npriv, &n, &err), DPD_OK);
  assert_true(n == 1); /* llround(0.5) = 1 */
  f.private_fraction = 0.0009;
  assert_int_equal(dpd__sp_split_sizes(&f, 1000, 5, 1, &np, &npriv, &n, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'private_fraction'"));
}

/* Writes `text` to a temporary file (path: returned in buf). */
static void write_file(char *path, const char *text) {
  const int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* trainer = dpsgd without positive_class: class indices 0 .. K-1, K = max + 1; non-integer,
 * negative and one-class labels refused naming 'labels'; test labels >= K name 'test_labels';
 * with positive_class the +-1 of one-vs-rest. */
static void multiclass_labels(void **state) {
  char good[] = "/tmp/dpd_sp_mc_XXXXXX", frac[] = "/tmp/dpd_sp_mc_XXXXXX",
       neg[] = "/tmp/dpd_sp_mc_XXXXXX", one[] = "/tmp/dpd_sp_mc_XXXXXX",
       big[] = "/tmp/dpd_sp_mc_XXXXXX";
  dpd__sp_files files = {.multiclass = 1};
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  write_file(good, "0 1 0\n2 0 1\n1 1 1\n0 2 2\n");
  write_file(frac, "0 1 0\n1.5 0 1\n");
  write_file(neg, "0 1 0\n-1 0 1\n");
  write_file(one, "3 1 0\n3 0 1\n");
  write_file(big, "0 1 0\n3 0 1\n");
  files.train.path = good;
  assert_int_equal(
      dpd__sp_set_read(&files.train, "features", "labels", 1, &files, 0, 1 << 20, &err), DPD_OK);
  assert_true(files.train.y[0] == 0.0 && files.train.y[1] == 2.0 && files.train.y[2] == 1.0);
  assert_int_equal(dpd__sp_classes_count(files.train.y, 4, good, &files.classes, &err), DPD_OK);
  assert_int_equal(files.classes, 3);
  files.test.path = big; /* label 3 >= K = 3 */
  assert_int_equal(
      dpd__sp_set_read(&files.test, "test_features", "test_labels", 1, &files, 2, 1 << 20, &err),
      DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'test_labels': label 3 in row 2"));
  dpd__sp_files_free(&files);
  files.classes = 0;
  const char *bad[3] = {frac, neg, one};
  const char *why[3] = {"label 1.5 in row 2", "label -1 in row 2", "at least two distinct"};
  for (size_t i = 0; i < 3; i++) {
    files.train.path = bad[i];
    assert_int_equal(
        dpd__sp_set_read(&files.train, "features", "labels", 1, &files, 0, 1 << 20, &err),
        DPD_EINVAL);
    assert_non_null(strstr(err.reason, "'labels'"));
    assert_non_null(strstr(err.reason, why[i]));
    dpd__sp_files_free(&files);
  }
  files.multiclass = 0; /* one-vs-rest: class 2 -> +1 */
  files.has_positive = 1;
  files.positive_class = 2.0;
  files.train.path = good;
  assert_int_equal(
      dpd__sp_set_read(&files.train, "features", "labels", 1, &files, 0, 1 << 20, &err), DPD_OK);
  assert_true(files.train.y[0] == -1.0 && files.train.y[1] == 1.0 && files.train.y[2] == -1.0);
  dpd__sp_files_free(&files);
  remove(good);
  remove(frac);
  remove(neg);
  remove(one);
  remove(big);
}

static dpd_semipriv_result *law_run(const dpd_semipriv_gen *g, dpd_semipriv_run_config *c) {
  dpd_semipriv_result *r = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  const int st = dpd_semipriv_run(g, c, &r, &err);
  if (st != DPD_OK) {
    print_error("dpd_semipriv_run: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return r;
}

/* Algorithm 1 with DP-SGD on the law: the same bits for 1 and 3 threads; z calibrated once with
 * the accountant's epsilon <= the target; T = ceil(epochs / q); the DP-SGD columns filled;
 * non-private training on the large-margin law classifies the test sample. */
static void law_dpsgd_is_reproducible_and_calibrated(void **state) {
  dpd_semipriv_gen_config gc = dpd_semipriv_gen_config_default();
  dpd_semipriv_gen *g = NULL;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  gc.d = 30;
  assert_int_equal(dpd_semipriv_gen_create(&gc, &g, &err), DPD_OK);
  dpd_semipriv_run_config c = dpd_semipriv_run_config_default();
  c.n = 300;
  c.n_public = 200;
  c.n_test = 300;
  c.k = 5;
  c.seeds = 4;
  c.epsilon = 1.0;
  c.trainer = DPD_SEMIPRIV_TRAINER_DPSGD;
  c.dpsgd.q = 0.05;
  c.dpsgd.epochs = 5;
  c.threads = 1;
  dpd_semipriv_result *a = law_run(g, &c);
  c.threads = 3;
  dpd_semipriv_result *b = law_run(g, &c);
  assert_memory_equal(a->replicates, b->replicates, 4 * DPD_SEMIPRIV_METRIC_COUNT * sizeof(double));
  assert_memory_equal(a->dpsgd_replicates, b->dpsgd_replicates,
                      4 * DPD_SEMIPRIV_DPSGD_COUNT * sizeof(double));
  assert_int_equal(a->trainer, DPD_SEMIPRIV_TRAINER_DPSGD);
  assert_int_equal(a->steps, 100);
  assert_true(a->noise_multiplier > 0.0 && a->epsilon_pld <= 1.0 && a->epsilon_pld > 0.99);
  assert_true(a->epsilon_pld_lower <= a->epsilon_pld);
  assert_abs(a->dpsgd_mean[DPD_SEMIPRIV_DPSGD_MEAN_BATCH], 15.0, 1.0); /* q n */
  assert_true(isnan(a->mean[DPD_SEMIPRIV_TRAIN_HINGE]));
  dpd_semipriv_result_free(a);
  dpd_semipriv_result_free(b);
  c.epsilon = INFINITY;
  c.dpsgd.epochs = 20;
  a = law_run(g, &c);
  assert_true(a->noise_multiplier == 0.0);
  assert_true(a->mean[DPD_SEMIPRIV_TEST_ACCURACY] > 0.9);
  dpd_semipriv_result_free(a);
  dpd_semipriv_gen_free(g);
  assert_string_equal(dpd_semipriv_trainer_name(DPD_SEMIPRIV_TRAINER_DPSGD), "dpsgd");
  assert_string_equal(dpd_semipriv_dpsgd_metric_name(DPD_SEMIPRIV_DPSGD_TEST_LOSS), "test_loss");
  assert_null(dpd_semipriv_dpsgd_metric_name(DPD_SEMIPRIV_DPSGD_COUNT));
}

int main(void) {
  gsl_set_error_handler_off();
  openblas_set_num_threads(1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(select_is_a_uniform_subset),
      cmocka_unit_test(split_sizes_and_refusals),
      cmocka_unit_test(multiclass_labels),
      cmocka_unit_test(law_dpsgd_is_reproducible_and_calibrated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
