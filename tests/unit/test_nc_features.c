/* Tests of the feature files and the collapse diagnostics (nc_features.h, core/npy_impl.h,
 * dpd__read_matrix of core/table_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * Readers: a hand-made file in text and in .npy (every supported version, dtype and order) gives
 * the same rows; every malformed case named in nc_features.h is refused with the user's key.
 * Diagnostics: hand-computed values on a 5-row file; the ETF law without shifts gives cosines
 * -1/(K-1) and beta = 0 to rounding; rademacher shifts give beta_i within max |Mhat_k - M_k|_inf
 * of beta and the exact within-class trace identity; NC1 against its large-n value. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error_impl.h"
#include "core/npy_impl.h"
#include "core/table_impl.h"
#include "dpd_test.h"
#include "dpdyn/nc.h"
#include "dpdyn/nc_features.h"

static char dir[64];

static const char *path_of(const char *name) {
  static char buf[8][160]; /* callers that keep a path copy it */
  static int slot;
  slot = (slot + 1) % 8;
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", dir, name);
  return buf[slot];
}

static void write_text(const char *name, const char *text) {
  FILE *f = fopen(path_of(name), "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A .npy file: version major.0, the header dict padded to a multiple of 64 (as numpy writes),
 * then `nbytes` of data. */
static void write_npy(const char *name, int major, const char *dict, const void *data,
                      size_t nbytes) {
  FILE *f = fopen(path_of(name), "wb");
  const size_t pre = major == 1 ? 10 : 12;
  size_t hlen = strlen(dict) + 1;
  assert_non_null(f);
  hlen += (64 - (pre + hlen) % 64) % 64;
  fwrite("\x93NUMPY", 1, 6, f);
  fputc(major, f);
  fputc(0, f);
  fputc((int)(hlen & 0xff), f);
  fputc((int)((hlen >> 8) & 0xff), f);
  if (major != 1) {
    fputc(0, f);
    fputc(0, f);
  }
  fputs(dict, f);
  for (size_t k = strlen(dict) + 1; k < hlen; k++) {
    fputc(' ', f);
  }
  fputc('\n', f);
  if (nbytes > 0) {
    fwrite(data, 1, nbytes, f);
  }
  fclose(f);
}

static int setup_dir(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/dpd_test_ncf_XXXXXX");
  return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state) {
  char cmd[128];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Expects failure with a message containing every given fragment. */
static void expect_fail(int status, const dpd_err *err, const char *a, const char *b) {
  if (status == DPD_OK) {
    print_error("expected an error containing '%s'\n", a);
    fail();
  }
  if (strstr(err->reason, a) == NULL || (b != NULL && strstr(err->reason, b) == NULL)) {
    print_error("error '%s' lacks '%s' / '%s'\n", err->reason, a, b != NULL ? b : "");
    fail();
  }
}

/* ---- the hand-made set: K = 3, p = 2, five rows ---- */

static const double hand_rows[5][3] = {{0, 2, 0}, {1, 0, 1}, {0, 4, 0}, {2, -3, -3}, {1, 0, 5}};

static const char hand_text[] = "# label x1 x2: a hand-made set\n"
                                "0, 2, 0\n"
                                "1  0   1   # comment after data\n"
                                "\n"
                                "0,4,0.0\n"
                                "2 -3 -3e0\n"
                                "1 0 5";

static void check_hand(const dpd_nc_features *f) {
  assert_int_equal(f->n, 5);
  assert_int_equal(f->p, 2);
  assert_int_equal(f->K, 3);
  assert_int_equal(f->counts[0], 2);
  assert_int_equal(f->counts[1], 2);
  assert_int_equal(f->counts[2], 1);
  for (size_t i = 0; i < 5; i++) {
    assert_int_equal(f->y[i], (size_t)hand_rows[i][0]);
    assert_true(f->X[i * 2] == hand_rows[i][1] && f->X[i * 2 + 1] == hand_rows[i][2]);
  }
}

static dpd_nc_features *read_ok(const char *path, const char *labels) {
  dpd_nc_features_config c = dpd_nc_features_config_default();
  dpd_nc_features *f = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  c.path = path;
  c.labels_path = labels;
  if (dpd_nc_features_read(&c, &f, &err) != DPD_OK) {
    print_error("read %s: %s\n", path, err.reason);
    fail();
  }
  return f;
}

static void text_and_npy_files_give_the_same_rows(void **state) {
  double c_order[15], f_order[15], feats[10];
  float f4[10];
  int64_t i8[5];
  int32_t i4[5];
  unsigned char u1[5];
  dpd_nc_features *f;
  (void)state;
  for (size_t i = 0; i < 5; i++) {
    for (size_t c = 0; c < 3; c++) {
      c_order[i * 3 + c] = hand_rows[i][c];
      f_order[c * 5 + i] = hand_rows[i][c];
    }
    feats[2 * i] = hand_rows[i][1];
    feats[2 * i + 1] = hand_rows[i][2];
    f4[2 * i] = (float)hand_rows[i][1];
    f4[2 * i + 1] = (float)hand_rows[i][2];
    i8[i] = (int64_t)hand_rows[i][0];
    i4[i] = (int32_t)hand_rows[i][0];
    u1[i] = (unsigned char)hand_rows[i][0];
  }
  write_text("hand.csv", hand_text);
  f = read_ok(path_of("hand.csv"), NULL);
  check_hand(f);
  dpd_nc_features_free(f);
  write_npy("c.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5, 3), }", c_order,
            sizeof c_order);
  f = read_ok(path_of("c.npy"), NULL);
  check_hand(f);
  dpd_nc_features_free(f);
  write_npy("f.npy", 2, "{'descr': '<f8', 'fortran_order': True, 'shape': (5, 3), }", f_order,
            sizeof f_order);
  f = read_ok(path_of("f.npy"), NULL);
  check_hand(f);
  dpd_nc_features_free(f);
  /* separate labels: f4 features, i8 / i4 / u1 labels (1-D; 3.0 header), a text label column */
  write_npy("x4.npy", 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 2), }", f4,
            sizeof f4);
  write_npy("x8.npy", 1, "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (5, 2)}", feats,
            sizeof feats);
  write_npy("y8.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", i8,
            sizeof i8);
  write_npy("y4.npy", 3, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", i4,
            sizeof i4);
  write_npy("y1.npy", 2, "{'descr': '|u1', 'fortran_order': False, 'shape': (5, 1), }", u1,
            sizeof u1);
  write_text("y.txt", "0\n1\n0\n2\n1\n");
  f = read_ok(path_of("x4.npy"), path_of("y8.npy"));
  check_hand(f);
  dpd_nc_features_free(f);
  f = read_ok(path_of("x8.npy"), path_of("y4.npy"));
  check_hand(f);
  dpd_nc_features_free(f);
  f = read_ok(path_of("x8.npy"), path_of("y1.npy"));
  check_hand(f);
  dpd_nc_features_free(f);
  f = read_ok(path_of("x8.npy"), path_of("y.txt"));
  check_hand(f);
  dpd_nc_features_free(f);
}

static void npy_reader_refuses_malformed_files(void **state) {
  double v[6] = {1, 2, 3, 4, 5, 6};
  dpd__npy_info info;
  double *data = NULL;
  dpd_err err;
  FILE *f;
  (void)state;
  /* bad magic, version */
  write_text("magic.npy", "NUMPY not really");
  dpd_err_reset(&err);
  expect_fail(dpd__read_npy("features", path_of("magic.npy"), 0, &data, &info, &err), &err,
              "'features'", "magic");
  write_npy("v4.npy", 4, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", v, sizeof v);
  expect_fail(dpd__read_npy("features", path_of("v4.npy"), 0, &data, &info, &err), &err,
              "version 4.0", NULL);
  /* byte order, dtype, shape */
  write_npy("be.npy", 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (6,), }", v, sizeof v);
  expect_fail(dpd__read_npy("labels", path_of("be.npy"), 0, &data, &info, &err), &err, "'labels'",
              "big-endian");
  write_npy("c16.npy", 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }", v,
            sizeof v);
  expect_fail(dpd__read_npy("features", path_of("c16.npy"), 0, &data, &info, &err), &err,
              "dtype '<c16'", NULL);
  write_npy("obj.npy", 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (6,), }", v,
            sizeof v);
  expect_fail(dpd__read_npy("features", path_of("obj.npy"), 0, &data, &info, &err), &err,
              "structured", NULL);
  write_npy("3d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", v,
            sizeof v);
  expect_fail(dpd__read_npy("features", path_of("3d.npy"), 0, &data, &info, &err), &err,
              "3 dimensions", NULL);
  write_npy("0d.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", v, 8);
  expect_fail(dpd__read_npy("features", path_of("0d.npy"), 0, &data, &info, &err), &err, "0-D",
              NULL);
  write_npy("empty.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", v, 0);
  expect_fail(dpd__read_npy("features", path_of("empty.npy"), 0, &data, &info, &err), &err,
              "empty array", NULL);
  /* sizes against the file: truncated, trailing bytes, a shape larger than any file (refused
   * before any allocation), the memory limit */
  write_npy("short.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", v,
            sizeof v - 3);
  expect_fail(dpd__read_npy("features", path_of("short.npy"), 0, &data, &info, &err), &err,
              "truncated", NULL);
  write_npy("long.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", v,
            sizeof v);
  expect_fail(dpd__read_npy("features", path_of("long.npy"), 0, &data, &info, &err), &err,
              "trailing bytes", NULL);
  write_npy("huge.npy", 1,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", v,
            sizeof v);
  expect_fail(dpd__read_npy("features", path_of("huge.npy"), 0, &data, &info, &err), &err,
              "larger than any file", NULL);
  write_npy("big.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }",
            v, sizeof v);
  expect_fail(dpd__read_npy("features", path_of("big.npy"), 0, &data, &info, &err), &err,
              "truncated", NULL);
  write_npy("ok.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", v, sizeof v);
  expect_fail(dpd__read_npy("features", path_of("ok.npy"), 40, &data, &info, &err), &err,
              "max_memory", NULL);
  assert_int_equal(dpd__read_npy("features", path_of("ok.npy"), 48, &data, &info, &err), DPD_OK);
  assert_true(info.ndim == 1 && info.rows == 6 && info.cols == 1 && data[5] == 6.0);
  free(data);
  /* malformed dicts, a header that stops early */
  write_npy("dict.npy", 1, "{'descr': '<f8', 'fortran_order': maybe, 'shape': (6,), }", v,
            sizeof v);
  expect_fail(dpd__read_npy("features", path_of("dict.npy"), 0, &data, &info, &err), &err,
              "fortran_order", NULL);
  write_npy("noshape.npy", 1, "{'descr': '<f8', 'fortran_order': False}", v, sizeof v);
  expect_fail(dpd__read_npy("features", path_of("noshape.npy"), 0, &data, &info, &err), &err,
              "lacks", NULL);
  f = fopen(path_of("cut.npy"), "wb");
  fwrite("\x93NUMPY\x01\x00\x76\x00{'descr'", 1, 19, f);
  fclose(f);
  expect_fail(dpd__read_npy("features", path_of("cut.npy"), 0, &data, &info, &err), &err,
              "truncated header", NULL);
  assert_null(data);
}

static void matrix_reader_refuses_malformed_text(void **state) {
  double *data = NULL;
  size_t rows, cols;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  write_text("ragged.txt", "0 1 2\n1 3\n");
  expect_fail(dpd__read_matrix("features", path_of("ragged.txt"), 1, 0, &data, &rows, &cols, &err),
              &err, "'features'", "line 2 has 2 columns");
  write_text("nan.txt", "0 1 2\n1 3 nan\n");
  expect_fail(dpd__read_matrix("features", path_of("nan.txt"), 1, 0, &data, &rows, &cols, &err),
              &err, "line 2 column 3", "not a finite number");
  write_text("inf.txt", "0 1e999 2\n");
  expect_fail(dpd__read_matrix("features", path_of("inf.txt"), 1, 0, &data, &rows, &cols, &err),
              &err, "line 1 column 2", "not a finite number");
  write_text("word.txt", "0 1 x2\n");
  expect_fail(dpd__read_matrix("features", path_of("word.txt"), 1, 0, &data, &rows, &cols, &err),
              &err, "column 3 is malformed", NULL);
  write_text("empty.txt", "# nothing\n\n");
  expect_fail(dpd__read_matrix("features", path_of("empty.txt"), 1, 0, &data, &rows, &cols, &err),
              &err, "no data rows", NULL);
  write_text("wide.txt", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n"
                         "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n");
  expect_fail(dpd__read_matrix("features", path_of("wide.txt"), 1, 200, &data, &rows, &cols, &err),
              &err, "max_memory", NULL);
  assert_int_equal(
      dpd__read_matrix("features", path_of("wide.txt"), 1, 320, &data, &rows, &cols, &err), DPD_OK);
  assert_true(rows == 2 && cols == 20 && data[39] == 20.0);
  free(data);
}

static void loader_refuses_inconsistent_features_and_labels(void **state) {
  dpd_nc_features_config c = dpd_nc_features_config_default();
  dpd_nc_features *f = NULL;
  double nanrow[6] = {0, 1, 1, 2, 0, NAN};
  char x8[160], ytxt[160];
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  snprintf(x8, sizeof x8, "%s", path_of("x8.npy")); /* from the first test: 5 x 2 */
  snprintf(ytxt, sizeof ytxt, "%s", path_of("y.txt"));
  c.path = x8;
  write_text("y4rows.txt", "0\n1\n0\n2\n");
  c.labels_path = path_of("y4rows.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'labels'", "4 labels for the 5 rows");
  write_text("y2col.txt", "0 1\n1 1\n0 1\n2 1\n1 1\n");
  c.labels_path = path_of("y2col.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'labels'", "2 columns");
  write_text("yfrac.txt", "0\n1\n0.5\n2\n1\n");
  c.labels_path = path_of("yfrac.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'labels'", "label 0.5 in row 3");
  write_text("yneg.txt", "0\n1\n-1\n2\n1\n");
  c.labels_path = path_of("yneg.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'labels'", "label -1 in row 3");
  write_text("ygap.txt", "0\n3\n0\n3\n1\n");
  c.labels_path = path_of("ygap.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'labels'", "class 2 has no row");
  write_text("yone.txt", "0\n0\n0\n0\n0\n");
  c.labels_path = path_of("yone.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'labels'", "single class");
  write_text("ybig.txt", "0\n1\n0\n9\n1\n");
  c.labels_path = path_of("ybig.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'labels'", "only 5 rows");
  /* K and p fixed by the training set (a test file) */
  c.labels_path = ytxt;
  c.key = "test_features";
  c.labels_key = "test_labels";
  c.K = 2;
  c.K_key = "features";
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'test_labels'", "K = 2 as in 'features'");
  c.K = 4;
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'test_labels'", "class 3 has no row");
  c.K = 3;
  c.p = 7;
  c.p_key = "features";
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'test_features'",
              "2 features per row (allowed: p = 7");
  c.p = 2;
  assert_int_equal(dpd_nc_features_read(&c, &f, &err), DPD_OK);
  dpd_nc_features_free(f);
  /* a NaN feature in a .npy file, a label column alone, a 1-D features array with labels */
  write_npy("nan.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", nanrow,
            sizeof nanrow);
  c = dpd_nc_features_config_default();
  c.path = path_of("nan.npy");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'features'",
              "nan in row 3, feature column 1");
  write_text("onecol.txt", "0\n1\n");
  c.path = path_of("onecol.txt");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'features'", "1 column");
  c.path = path_of("y8.npy");
  c.labels_path = path_of("y8.npy");
  expect_fail(dpd_nc_features_read(&c, &f, &err), &err, "'features'", "1-D array");
  assert_null(f);
}

/* ---- diagnostics ---- */

static dpd_nc_diagnostics *diag_ok(size_t n, size_t p, size_t K, dpd_nc_row_fn row, void *user) {
  dpd_nc_diagnostics *d = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  if (dpd_nc_diagnostics_create(n, p, K, row, user, &d, &err) != DPD_OK) {
    print_error("diagnostics: %s\n", err.reason);
    fail();
  }
  return d;
}

static void diagnostics_of_the_hand_made_set(void **state) {
  dpd_nc_features *f;
  dpd_nc_diagnostics *d;
  (void)state;
  write_text("hand2.csv", hand_text);
  f = read_ok(path_of("hand2.csv"), NULL);
  d = diag_ok(f->n, f->p, f->K, dpd_nc_features_row, f);
  /* means (3, 0), (0, 3), (-3, -3); global mean (0.6, 0.6); centred 0.6 (4, -1), 0.6 (-1, 4),
   * -3.6 (1, 1) */
  assert_abs(d->means[0], 3.0, 1e-15);
  assert_abs(d->means[3], 3.0, 1e-15);
  assert_abs(d->global_mean[0], 0.6, 1e-15);
  assert_abs(d->global_mean[1], 0.6, 1e-15);
  assert_rel(d->centred_norm[0], 0.6 * sqrt(17.0), 1e-14);
  assert_rel(d->centred_norm[2], 3.6 * sqrt(2.0), 1e-14);
  assert_rel(d->cosines[0], -8.0 / 17.0, 1e-14);
  assert_rel(d->cosines[1], -3.0 / sqrt(34.0), 1e-14);
  assert_rel(d->cosines[2], -3.0 / sqrt(34.0), 1e-14);
  assert_rel(d->cos_min, -3.0 / sqrt(34.0), 1e-14);
  assert_rel(d->cos_max, -8.0 / 17.0, 1e-14);
  assert_rel(d->cos_mean, (-8.0 / 17.0 - 6.0 / sqrt(34.0)) / 3.0, 1e-14);
  assert_rel(d->cos_max_dev, 0.5 - 8.0 / 17.0, 1e-13); /* the pair (0, 1) */
  /* beta = 1, 2, 1, 0, 2: sorted 0 1 1 2 2; quantiles at (n - 1) q = 4 q */
  {
    const double want[DPD_NC_BETA_QUANTILES] = {0, 0.4, 1, 1, 2, 2, 2, 2};
    for (size_t q = 0; q < DPD_NC_BETA_QUANTILES; q++) {
      assert_abs(d->beta_quantile[q], want[q], 1e-15);
    }
  }
  assert_abs(d->beta_mean, 1.2, 1e-15);
  assert_abs(d->within_rms[0], 1.0, 1e-15);
  assert_abs(d->within_rms[1], 2.0, 1e-15);
  assert_abs(d->within_rms[2], 0.0, 1e-15);
  assert_rel(d->x_norm_max, 5.0, 1e-15);
  assert_rel(d->G_ce, sqrt(2.0 / 3.0) * 5.0, 1e-15);
  assert_rel(d->within_trace, 2.0, 1e-14);
  assert_rel(d->between_trace, 38.16 / 3.0, 1e-14);
  /* Sigma_W = diag(0.4, 1.6), Sigma_B = [[6.36, 3.36], [3.36, 6.36]] (full rank, p = K - 1):
   * NC1 = tr(Sigma_W Sigma_B^-1) / 3 = (0.4 + 1.6) 6.36 / (6.36^2 - 3.36^2) / 3 */
  assert_int_equal(d->between_rank, 2);
  assert_rel(d->nc1, 2.0 * 6.36 / (6.36 * 6.36 - 3.36 * 3.36) / 3.0, 1e-12);
  dpd_nc_diagnostics_free(d);
  dpd_nc_features_free(f);
}

typedef struct {
  const dpd_nc_problem *pr;
  uint64_t seed;
} law;

static size_t law_row(void *user, size_t i, double *x) {
  const law *l = user;
  return dpd_nc_train_sample(l->pr, l->seed, 0, i, x);
}

static dpd_nc_problem *law_problem(size_t K, size_t p, size_t n, dpd_nc_etf etf, dpd_nc_shift shift,
                                   double beta, double ratio) {
  dpd_nc_problem_config c = dpd_nc_problem_config_default();
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  c.K = K;
  c.p = p;
  c.n = n;
  c.n_test = n;
  c.etf = etf;
  c.shift = shift;
  c.beta = beta;
  c.imbalance_ratio = ratio;
  c.imbalance_fraction = ratio > 1.0 ? 0.5 : 0.0;
  c.seed = 7;
  assert_int_equal(dpd_nc_problem_create(&c, &pr, &err), DPD_OK);
  return pr;
}

/* Perfect collapse: every centred mean pair has cosine -1/(K-1), beta = 0, NC1 = 0, G as the
 * law's (|M_k| = 1): for K = 2, 4, 10, sparse and dense. Imbalanced classes move the global
 * mean off the ETF centre, so the cosines then differ (a negative control of the check). */
static void perfect_collapse_gives_the_etf_cosine(void **state) {
  const size_t Ks[3] = {2, 4, 10};
  (void)state;
  for (size_t t = 0; t < 6; t++) {
    const size_t K = Ks[t % 3];
    dpd_nc_problem *pr =
        law_problem(K, 3 * K + 1, 20 * K, t < 3 ? DPD_NC_ETF_SPARSE : DPD_NC_ETF_DENSE,
                    DPD_NC_SHIFT_NONE, 0.0, 1.0);
    law l = {pr, 3};
    dpd_nc_diagnostics *d = diag_ok(pr->n, pr->p, K, law_row, &l);
    for (size_t m = 0; m < d->npairs; m++) {
      assert_abs(d->cosines[m], -1.0 / (double)(K - 1), 1e-13);
    }
    assert_true(d->cos_max_dev < 1e-13);
    assert_abs(d->beta_quantile[DPD_NC_BETA_QUANTILES - 1], 0.0, 1e-14);
    assert_abs(d->nc1, 0.0, 1e-24);
    assert_int_equal(d->between_rank, K - 1);
    assert_rel(d->x_norm_max, 1.0, 1e-14);
    assert_rel(d->G_ce, sqrt((double)(K - 1) / (double)K), 1e-14);
    assert_rel(d->between_trace, 1.0, 1e-13);
    dpd_nc_diagnostics_free(d);
    dpd_nc_problem_free(pr);
  }
  {
    dpd_nc_problem *pr = law_problem(4, 10, 100, DPD_NC_ETF_SPARSE, DPD_NC_SHIFT_NONE, 0.0, 9.0);
    law l = {pr, 3};
    dpd_nc_diagnostics *d = diag_ok(pr->n, pr->p, 4, law_row, &l);
    assert_true(d->cos_max_dev > 0.05);
    assert_abs(d->nc1, 0.0, 1e-24);
    dpd_nc_diagnostics_free(d);
    dpd_nc_problem_free(pr);
  }
}

/* Rademacher shifts of size beta: x_i - Mhat_k = v_i - vbar_k with |v_il| = beta, so every
 * beta_i lies within m = max_{k,l} |Mhat_kl - M_kl| of beta, exactly; and
 * tr(Sigma_W) = p beta^2 - (1/n) sum_k n_k |vbar_k|^2 exactly. NC1 against its population value
 * beta^2 tr((C C^T)^+) = beta^2 (K - 1)^2 / K: the sample NC1 is a mean over n = 8000 rows of
 * |B^T r_i|^2, whose relative SE is about sqrt(2 / (n (K - 1))) = 0.9 %; 5 % is over 5 SE.
 * Negative control: beta x 1.2 is outside both checks. */
static void rademacher_shifts_give_beta(void **state) {
  const size_t K = 4, p = 12, n = 8000;
  const double beta = 0.0731;
  dpd_nc_problem *pr = law_problem(K, p, n, DPD_NC_ETF_SPARSE, DPD_NC_SHIFT_RADEMACHER, beta, 1.0);
  law l = {pr, 11};
  dpd_nc_diagnostics *d = diag_ok(n, p, K, law_row, &l);
  double m = 0.0, vbar2 = 0.0;
  (void)state;
  for (size_t k = 0; k < K; k++) {
    for (size_t j = 0; j < p; j++) {
      const double dv = d->means[k * p + j] - pr->M[k * p + j];
      m = fmax(m, fabs(dv));
      vbar2 += (double)d->counts[k] * dv * dv;
    }
  }
  assert_true(m < 0.1 * beta); /* about 3 sd of a mean of 2000 signs */
  for (size_t q = 0; q < DPD_NC_BETA_QUANTILES; q++) {
    assert_true(d->beta_quantile[q] >= beta - m - 1e-15);
    assert_true(d->beta_quantile[q] <= beta + m + 1e-15);
    assert_false(fabs(d->beta_quantile[q] - 1.2 * beta) <= m);
  }
  assert_rel(d->within_trace, (double)p * beta * beta - vbar2 / (double)n, 1e-12);
  {
    const double want = beta * beta * (double)((K - 1) * (K - 1)) / (double)K;
    assert_rel(d->nc1, want, 0.05);
    assert_false(fabs(d->nc1 - 1.44 * want) <= 0.05 * 1.44 * want);
  }
  dpd_nc_diagnostics_free(d);
  dpd_nc_problem_free(pr);
}

static size_t bad_label_row(void *user, size_t i, double *x) {
  (void)user;
  x[0] = 1.0;
  x[1] = (double)i;
  return i == 2 ? 5 : i % 2;
}

static size_t one_class_row(void *user, size_t i, double *x) {
  (void)user;
  x[0] = (double)i;
  x[1] = 0.0;
  return 0;
}

static void diagnostics_refuse_bad_rows(void **state) {
  dpd_nc_diagnostics *d = NULL;
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  expect_fail(dpd_nc_diagnostics_create(4, 2, 2, bad_label_row, NULL, &d, &err), &err, "'labels'",
              "row 3 has label 5");
  expect_fail(dpd_nc_diagnostics_create(4, 2, 2, one_class_row, NULL, &d, &err), &err, "'labels'",
              "class 1 has no row");
  expect_fail(dpd_nc_diagnostics_create(4, 2, 1, one_class_row, NULL, &d, &err), &err, "'K'", NULL);
  assert_null(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_and_npy_files_give_the_same_rows),
      cmocka_unit_test(npy_reader_refuses_malformed_files),
      cmocka_unit_test(matrix_reader_refuses_malformed_text),
      cmocka_unit_test(loader_refuses_inconsistent_features_and_labels),
      cmocka_unit_test(diagnostics_of_the_hand_made_set),
      cmocka_unit_test(perfect_collapse_gives_the_etf_cosine),
      cmocka_unit_test(rademacher_shifts_give_beta),
      cmocka_unit_test(diagnostics_refuse_bad_rows),
  };
  return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
