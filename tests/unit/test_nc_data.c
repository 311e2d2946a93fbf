/* Tests of NoisyGD on given features (nc.h: dpd_nc_problem_from_data, dpd_nc_train_sums,
 * dpd_nc_test_point).
 * SPDX-License-Identifier: MIT
 *
 * The main check is exact: rows taken from replicate 0 of the ETF law give, in replicate 0 of a
 * run on data, the same trained W and the same test errors bit for bit (same noise stream, same
 * test perturbations, same summation order), for one and several steps, with and without
 * centring. The rest: feature clipping, row order, fill, errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpd_test.h"
#include "dpdyn/nc.h"
#include "nc_test.h"

/* Training rows of replicate 0 and the clean test points M_k of a synthetic problem, in class
 * order; labels alike. */
typedef struct {
  double *X, *Xt;
  size_t *y, *yt;
} rows;

static rows rows_of(const dpd_nc_problem *pr, uint64_t seed) {
  const size_t p = pr->p, n = pr->n, nt = pr->n_test;
  rows r = {malloc(n * p * sizeof(double)), malloc(nt * p * sizeof(double)),
            malloc(n * sizeof(size_t)), malloc(nt * sizeof(size_t))};
  assert_non_null(r.X);
  assert_non_null(r.Xt);
  assert_non_null(r.y);
  assert_non_null(r.yt);
  for (size_t i = 0; i < n; i++) {
    r.y[i] = dpd_nc_train_sample(pr, seed, 0, i, r.X + i * p);
  }
  for (size_t k = 0, j = 0; k < pr->K; k++) {
    for (size_t s = 0; s < pr->test_counts[k]; s++, j++) {
      memcpy(r.Xt + j * p, pr->M + k * p, p * sizeof(double));
      r.yt[j] = k;
    }
  }
  return r;
}

static void rows_free(rows *r) {
  free(r->X);
  free(r->Xt);
  free(r->y);
  free(r->yt);
}

static dpd_nc_data_config data_of(const dpd_nc_problem *pr, const rows *r) {
  dpd_nc_data_config dc = {.K = pr->K,
                           .p = pr->p,
                           .n = pr->n,
                           .n_test = pr->n_test,
                           .X = r->X,
                           .y = r->y,
                           .X_test = r->Xt,
                           .y_test = r->yt,
                           .x_bound = pr->x_norm_max, /* the law's sup: clipping is a no-op */
                           .normalize = pr->cfg.normalize,
                           .test_shift = pr->cfg.test_shift,
                           .beta_test = pr->cfg.beta_test};
  return dc;
}

/* Replicate 0 on the law's rows equals replicate 0 of the law, bit for bit. */
static void same_as_the_law(dpd_nc_normalize nz, dpd_nc_shift test, size_t steps) {
  dpd_nc_problem_config pc = dpd_nc_problem_config_default();
  pc.K = 4;
  pc.p = 1500; /* more than one chunk of coordinates */
  pc.n = 40;
  pc.n_test = 24;
  pc.etf = DPD_NC_ETF_DENSE;
  pc.shift = DPD_NC_SHIFT_CUBE;
  pc.beta = 0.05;
  pc.imbalance_ratio = 3.0;
  pc.imbalance_fraction = 0.5;
  pc.test_shift = test;
  pc.beta_test = test == DPD_NC_SHIFT_NONE ? 0.0 : 0.03;
  pc.normalize = nz;
  dpd_nc_problem *law = make(&pc);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.steps = steps;
  sc.eta = 0.02;
  sc.sigma = 1.5;
  sc.seeds = 1;
  sc.seed = 77;
  rows r = rows_of(law, sc.seed);
  dpd_nc_data_config dc = data_of(law, &r);
  dpd_nc_problem *data = make_data(&dc);
  assert_true(dpd_nc_sensitivity(data, DPD_NC_LOSS_CE) == dpd_nc_sensitivity(law, DPD_NC_LOSS_CE));
  dpd_nc_sim_result *a = run_ok(law, &sc), *b = run_ok(data, &sc);
  assert_true(a->w_norm_replicates[0] == b->w_norm_replicates[0]);
  assert_memory_equal(a->class_error_replicates, b->class_error_replicates, pc.K * sizeof(double));
  assert_true(a->test_error == b->test_error);
  /* the class sums as trained and the test points as seen agree too */
  double *s1 = malloc(pc.K * pc.p * sizeof(double)), *s2 = malloc(pc.K * pc.p * sizeof(double));
  double *m1 = malloc(pc.p * sizeof(double)), *m2 = malloc(pc.p * sizeof(double));
  double *x1 = malloc(pc.p * sizeof(double)), *x2 = malloc(pc.p * sizeof(double));
  assert_true(s1 != NULL && s2 != NULL && m1 != NULL && m2 != NULL && x1 != NULL && x2 != NULL);
  dpd_err err;
  assert_int_equal(dpd_nc_train_sums(law, sc.seed, 0, s1, m1, &err), DPD_OK);
  assert_int_equal(dpd_nc_train_sums(data, sc.seed, 0, s2, m2, &err), DPD_OK);
  assert_memory_equal(s1, s2, pc.K * pc.p * sizeof(double));
  assert_memory_equal(m1, m2, pc.p * sizeof(double));
  for (size_t j = 0; j < pc.n_test; j += 5) {
    size_t k1, k2;
    assert_int_equal(dpd_nc_test_point(law, sc.seed, 0, j, m1, x1, &k1, &err), DPD_OK);
    assert_int_equal(dpd_nc_test_point(data, sc.seed, 0, j, m2, x2, &k2, &err), DPD_OK);
    assert_int_equal(k1, k2);
    assert_memory_equal(x1, x2, pc.p * sizeof(double));
  }
  free(s1);
  free(s2);
  free(m1);
  free(m2);
  free(x1);
  free(x2);
  dpd_nc_sim_result_free(a);
  dpd_nc_sim_result_free(b);
  dpd_nc_problem_free(data);
  dpd_nc_problem_free(law);
  rows_free(&r);
}

static void one_step_same_as_the_law(void **state) {
  (void)state;
  same_as_the_law(DPD_NC_NORMALIZE_NONE, DPD_NC_SHIFT_NONE, 1);
  same_as_the_law(DPD_NC_NORMALIZE_NONE, DPD_NC_SHIFT_RADEMACHER, 1);
  same_as_the_law(DPD_NC_NORMALIZE_CENTER, DPD_NC_SHIFT_CUBE, 1);
  same_as_the_law(DPD_NC_NORMALIZE_L2, DPD_NC_SHIFT_ADVERSARIAL, 1);
}

static void steps_same_as_the_law(void **state) {
  (void)state;
  same_as_the_law(DPD_NC_NORMALIZE_NONE, DPD_NC_SHIFT_ADVERSARIAL, 4);
  same_as_the_law(DPD_NC_NORMALIZE_CENTER, DPD_NC_SHIFT_NONE, 3);
}

/* The class sums as trained are the sums of the clipped rows: rows with |x| > R scaled to R. */
static void clipping_to_x_bound(void **state) {
  (void)state;
  const size_t K = 2, p = 3, n = 4;
  const double X[] = {3, 4, 0, /* |x| = 5 -> scaled by 2/5 */
                      1, 0, 0, /* kept */
                      0, 0, 1, /* kept */
                      0, 6, 8 /* |x| = 10 -> by 1/5 */};
  const size_t y[] = {0, 1, 0, 1};
  const double Xt[] = {1, 0, 0, 0, 1, 0};
  const size_t yt[] = {0, 1};
  dpd_nc_data_config dc = {.K = K,
                           .p = p,
                           .n = n,
                           .n_test = 2,
                           .X = X,
                           .y = y,
                           .X_test = Xt,
                           .y_test = yt,
                           .x_bound = 2.0};
  dpd_nc_problem *pr = make_data(&dc);
  assert_int_equal(pr->counts[0], 2);
  assert_int_equal(pr->order[0], 0);
  assert_int_equal(pr->order[1], 2);
  assert_int_equal(pr->order[2], 1);
  assert_int_equal(pr->order[3], 3);
  assert_abs(dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE), sqrt(0.5) * 2.0, 1e-15);
  assert_abs(dpd_nc_sensitivity(pr, DPD_NC_LOSS_SQUARE), 2.0, 1e-15);
  double S[6], mu[3];
  dpd_err err;
  assert_int_equal(dpd_nc_train_sums(pr, 1, 0, S, mu, &err), DPD_OK);
  const double want[] = {1.2, 1.6, 1.0, 1.0, 1.2, 1.6};
  for (size_t a = 0; a < 6; a++) {
    assert_abs(S[a], want[a], 1e-15);
  }
  for (size_t l = 0; l < 3; l++) {
    assert_true(mu[l] == 0.0);
  }
  /* the class means of the raw rows, and the raw sample accessor */
  assert_abs(pr->M[0], 1.5, 1e-15);
  assert_abs(pr->M[p + 2], 4.0, 1e-15);
  double x[3];
  assert_int_equal(dpd_nc_train_sample(pr, 1, 0, 3, x), 1);
  assert_true(x[1] == 6.0 && x[2] == 8.0);
  dpd_nc_problem_free(pr);
}

/* Rows may come in any order: interleaving the classes (same order within a class) changes
 * no bit. */
static void row_order_does_not_matter(void **state) {
  (void)state;
  dpd_nc_problem_config pc = dpd_nc_problem_config_default();
  pc.K = 3;
  pc.p = 20;
  pc.n = 30;
  pc.n_test = 30;
  pc.shift = DPD_NC_SHIFT_RADEMACHER;
  pc.beta = 0.1;
  dpd_nc_problem *law = make(&pc);
  rows r = rows_of(law, 5);
  dpd_nc_data_config dc = data_of(law, &r);
  dpd_nc_problem *sorted = make_data(&dc);
  /* interleave: class 0, 1, 2, 0, 1, 2, ... (each class keeps its order) */
  rows s = {malloc(30 * 20 * sizeof(double)), malloc(30 * 20 * sizeof(double)),
            malloc(30 * sizeof(size_t)), malloc(30 * sizeof(size_t))};
  for (size_t i = 0; i < 30; i++) {
    const size_t k = i % 3, from = k * 10 + i / 3;
    memcpy(s.X + i * 20, r.X + from * 20, 20 * sizeof(double));
    memcpy(s.Xt + i * 20, r.Xt + from * 20, 20 * sizeof(double));
    s.y[i] = r.y[from];
    s.yt[i] = r.yt[from];
  }
  dpd_nc_data_config ds = data_of(law, &s);
  dpd_nc_problem *mixed = make_data(&ds);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.steps = 2;
  sc.eta = 0.05;
  sc.sigma = 2.0;
  sc.seeds = 3;
  dpd_nc_sim_result *a = run_ok(sorted, &sc), *b = run_ok(mixed, &sc);
  assert_memory_equal(a->w_norm_replicates, b->w_norm_replicates, 3 * sizeof(double));
  assert_memory_equal(a->class_error_replicates, b->class_error_replicates, 9 * sizeof(double));
  dpd_nc_sim_result_free(a);
  dpd_nc_sim_result_free(b);
  dpd_nc_problem_free(sorted);
  dpd_nc_problem_free(mixed);
  dpd_nc_problem_free(law);
  rows_free(&r);
  rows_free(&s);
}

/* fill: per-replicate rows; here the same fixed rows each time, so it must equal the fixed
 * problem; a failing fill is reported with its own reason. */
typedef struct {
  const rows *r;
  size_t n, nt, p;
  size_t fail_at; /* replicate whose fill fails (SIZE_MAX: none) */
} fill_job;

static int fill_rows(void *user, uint64_t seed, size_t rep, double *X, double *Xt, dpd_err *err) {
  const fill_job *f = user;
  (void)seed;
  if (rep == f->fail_at) {
    return DPD_FAIL(err, DPD_ESOLVER, "test fill: replicate %zu refuses", rep);
  }
  memcpy(X, f->r->X, f->n * f->p * sizeof *X);
  memcpy(Xt, f->r->Xt, f->nt * f->p * sizeof *Xt);
  return DPD_OK;
}

static void fill_equals_fixed_rows(void **state) {
  (void)state;
  dpd_nc_problem_config pc = dpd_nc_problem_config_default();
  pc.K = 3;
  pc.p = 30;
  pc.n = 24;
  pc.n_test = 12;
  pc.shift = DPD_NC_SHIFT_CUBE;
  pc.beta = 0.2;
  pc.test_shift = DPD_NC_SHIFT_CUBE;
  pc.beta_test = 0.2;
  dpd_nc_problem *law = make(&pc);
  rows r = rows_of(law, 3);
  dpd_nc_data_config dc = data_of(law, &r);
  dpd_nc_problem *fixed = make_data(&dc);
  fill_job job = {&r, pc.n, pc.n_test, pc.p, SIZE_MAX};
  dpd_nc_data_config df = dc;
  df.X = NULL;
  df.X_test = NULL;
  df.fill = fill_rows;
  df.user = &job;
  dpd_nc_problem *filled = make_data(&df);
  dpd_nc_sim_config sc = dpd_nc_sim_config_default();
  sc.steps = 2;
  sc.eta = 0.05;
  sc.sigma = 1.0;
  sc.seeds = 5;
  sc.threads = 1;
  dpd_nc_sim_result *a = run_ok(fixed, &sc);
  sc.threads = 2;
  dpd_nc_sim_result *b = run_ok(filled, &sc);
  assert_memory_equal(a->w_norm_replicates, b->w_norm_replicates, 5 * sizeof(double));
  assert_memory_equal(a->class_error_replicates, b->class_error_replicates, 15 * sizeof(double));
  double S1[90], S2[90], x[30];
  size_t k;
  dpd_err err;
  assert_int_equal(dpd_nc_train_sums(fixed, sc.seed, 2, S1, NULL, &err), DPD_OK);
  assert_int_equal(dpd_nc_train_sums(filled, sc.seed, 2, S2, NULL, &err), DPD_OK);
  assert_memory_equal(S1, S2, sizeof S1);
  assert_int_equal(dpd_nc_test_point(filled, sc.seed, 0, 0, NULL, x, &k, &err), DPD_EINVAL);
  assert_int_equal(dpd_nc_train_sample(filled, sc.seed, 0, 0, x), pc.K);
  job.fail_at = 3;
  dpd_nc_sim_result *c = NULL;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_sim_run(filled, &sc, &c, &err), DPD_ESOLVER);
  assert_null(c);
  assert_non_null(strstr(err.reason, "replicate 3 refuses"));
  dpd_nc_sim_result_free(a);
  dpd_nc_sim_result_free(b);
  dpd_nc_problem_free(fixed);
  dpd_nc_problem_free(filled);
  dpd_nc_problem_free(law);
  rows_free(&r);
}

static void expect_error(const dpd_nc_data_config *dc, const char *needle) {
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_nc_problem_from_data(dc, &pr, &err), DPD_EINVAL);
  assert_null(pr);
  if (strstr(err.reason, needle) == NULL) {
    print_error("expected '%s' in: %s\n", needle, err.reason);
  }
  assert_non_null(strstr(err.reason, needle));
}

static void bad_data_names_the_key(void **state) {
  (void)state;
  double X[] = {1, 0, 0, 1, 1, 1};
  const double Xt[] = {1, 0, 0, 1};
  size_t y[] = {0, 1, 1};
  const size_t yt[] = {0, 1};
  dpd_nc_data_config dc = {.K = 2,
                           .p = 2,
                           .n = 3,
                           .n_test = 2,
                           .X = X,
                           .y = y,
                           .X_test = Xt,
                           .y_test = yt,
                           .x_bound = 2.0};
  dpd_nc_problem *pr = make_data(&dc);
  dpd_nc_problem_free(pr);
  y[2] = 2;
  expect_error(&dc, "'labels': label 2 in row 3");
  y[2] = 1;
  dc.K = 3;
  expect_error(&dc, "'n_test': 2"); /* every class needs a test row */
  dc.K = 2;
  y[0] = 1;
  expect_error(&dc, "'labels': class 0 has no row");
  y[0] = 0;
  X[3] = NAN;
  expect_error(&dc, "'features': nan in row 2, column 2");
  X[3] = 1;
  dc.x_bound = INFINITY;
  expect_error(&dc, "'x_bound': inf");
  dc.normalize = DPD_NC_NORMALIZE_L2;
  pr = make_data(&dc);
  assert_abs(dpd_nc_sensitivity(pr, DPD_NC_LOSS_CE), sqrt(0.5), 1e-15);
  dpd_nc_problem_free(pr);
  dc.x_bound = 0.0;
  expect_error(&dc, "'x_bound': 0");
  dc.x_bound = 1.0;
  dc.beta_test = -1.0;
  expect_error(&dc, "'beta_test'");
  dc.beta_test = 0.0;
  dc.fill = fill_rows;
  expect_error(&dc, "either both feature matrices");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_step_same_as_the_law), cmocka_unit_test(steps_same_as_the_law),
      cmocka_unit_test(clipping_to_x_bound),      cmocka_unit_test(row_order_does_not_matter),
      cmocka_unit_test(fill_equals_fixed_rows),   cmocka_unit_test(bad_data_names_the_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
