/* Tests of the data matrices read from files (core/datamat_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * Hand-written .npy files (float64 and float32 in C and Fortran order, int32) and text give the
 * same 4 x 3 matrix exactly, through dpd__datamat_row and dpd__datamat_at; C-order float files
 * are mapped (no copy) unless their data offset is misaligned (then copied), float32 stays
 * float32; the byte counts before opening match the precision. Refused, each naming the key and the
 * file: a big-endian '>f8', a NaN (by row and column, 1-based), an inf in float32, a truncated
 * file, ragged text rows, fewer rows than min_rows, more bytes than max_bytes; dpd__datamat_close
 * is safe after every failure. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/datamat_impl.h"
#include "core/error_impl.h"
#include "dpd_test.h"

static char dir[64];

static const char *path_of(const char *name) {
  static char buf[8][160];
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

/* A version-1.0 .npy file: the header dict padded so that the data start at a multiple of 64 plus
 * `skew` bytes (numpy writes skew 0), then `nbytes` of data. */
static void write_npy_skewed(const char *name, const char *dict, const void *data, size_t nbytes,
                             size_t skew) {
  FILE *f = fopen(path_of(name), "wb");
  size_t hlen = strlen(dict) + 1;
  assert_non_null(f);
  hlen += (64 - (10 + hlen) % 64) % 64 + skew;
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc((int)(hlen & 0xff), f);
  fputc((int)((hlen >> 8) & 0xff), f);
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

static void write_npy(const char *name, const char *dict, const void *data, size_t nbytes) {
  write_npy_skewed(name, dict, data, nbytes, 0);
}

static int setup_dir(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/dpd_test_datamat_XXXXXX");
  return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state) {
  char cmd[128];
  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Expects failure with a message containing every given fragment, then closes *m. */
static void expect_fail(int status, const dpd_err *err, dpd__datamat *m, const char *a,
                        const char *b) {
  if (status == DPD_OK) {
    print_error("expected an error containing '%s'\n", a);
    fail();
  }
  assert_int_equal(status, DPD_EINVAL);
  if (strstr(err->reason, a) == NULL || (b != NULL && strstr(err->reason, b) == NULL) ||
      strstr(err->reason, "invalid value for 'features'") == NULL) {
    print_error("error '%s' lacks '%s' / '%s'\n", err->reason, a, b != NULL ? b : "");
    fail();
  }
  assert_null(m->data);
  assert_null(m->map);
  assert_null(m->owned);
  dpd__datamat_close(m); /* safe after a failure */
}

/* Values exact in float32 too. */
static const double hand[4][3] = {{1.5, -2, 0.25}, {3, 4.75, -5}, {0, 6, 7.125}, {-8, 9, 10}};

static void check_hand(const dpd__datamat *m) {
  double row[3];
  assert_int_equal(m->rows, 4);
  assert_int_equal(m->cols, 3);
  for (size_t i = 0; i < 4; i++) {
    dpd__datamat_row(m, i, row);
    for (size_t j = 0; j < 3; j++) {
      assert_true(row[j] == hand[i][j]);
      assert_true(dpd__datamat_at(m, i, j) == hand[i][j]);
    }
  }
}

static void open_ok(const char *name, dpd__datamat *m) {
  dpd_err err;
  dpd_err_reset(&err);
  if (dpd__datamat_open("features", path_of(name), 2, 0, m, &err) != DPD_OK) {
    print_error("open %s: %s\n", name, err.reason);
    fail();
  }
}

static void every_format_gives_the_same_rows(void **state) {
  double c8[12], f8[12], bytes = 0;
  float c4[12], f4[12];
  int32_t i4[12];
  dpd__datamat m;
  dpd_err err;
  (void)state;
  for (size_t i = 0; i < 4; i++) {
    for (size_t j = 0; j < 3; j++) {
      c8[i * 3 + j] = hand[i][j];
      f8[j * 4 + i] = hand[i][j];
      c4[i * 3 + j] = (float)hand[i][j];
      f4[j * 4 + i] = (float)hand[i][j];
      i4[i * 3 + j] = (int32_t)floor(hand[i][j]);
    }
  }
  write_npy("c8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }", c8, sizeof c8);
  write_npy("f8.npy", "{'descr': '<f8', 'fortran_order': True, 'shape': (4, 3), }", f8, sizeof f8);
  write_npy("c4.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", c4, sizeof c4);
  write_npy("f4.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (4, 3), }", f4, sizeof f4);
  write_npy("i4.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (4, 3), }", i4, sizeof i4);
  write_text("hand.txt", "# a hand-made matrix\n1.5 -2 0.25\n3, 4.75, -5\n\n0 6 7.125\n-8 9 1e1\n");

  open_ok("c8.npy", &m);
  check_hand(&m);
  assert_int_equal(m.f32, 0);
  assert_int_equal(m.mapped, 1);
  assert_non_null(m.map);
  assert_null(m.owned);
  dpd__datamat_close(&m);
  assert_null(m.map);

  open_ok("c4.npy", &m);
  check_hand(&m);
  assert_int_equal(m.f32, 1);
  assert_int_equal(m.mapped, 1);
  assert_null(m.owned);
  dpd__datamat_close(&m);

  open_ok("f8.npy", &m);
  check_hand(&m);
  assert_int_equal(m.f32, 0);
  assert_int_equal(m.mapped, 0);
  assert_null(m.map);
  assert_non_null(m.owned);
  dpd__datamat_close(&m);

  open_ok("f4.npy", &m);
  check_hand(&m);
  assert_int_equal(m.f32, 1);
  assert_int_equal(m.mapped, 0);
  assert_non_null(m.owned);
  dpd__datamat_close(&m);

  open_ok("hand.txt", &m);
  check_hand(&m);
  assert_int_equal(m.f32, 0);
  assert_int_equal(m.mapped, 0);
  dpd__datamat_close(&m);

  open_ok("i4.npy", &m);
  assert_int_equal(m.f32, 0);
  assert_int_equal(m.mapped, 0);
  for (size_t i = 0; i < 4; i++) {
    for (size_t j = 0; j < 3; j++) {
      assert_true(dpd__datamat_at(&m, i, j) == floor(hand[i][j]));
    }
  }
  dpd__datamat_close(&m);

  /* data not aligned to the element size (a hand-made header): copied, not mapped */
  write_npy_skewed("skew8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }", c8,
                   sizeof c8, 4);
  open_ok("skew8.npy", &m);
  check_hand(&m);
  assert_int_equal(m.mapped, 0);
  assert_null(m.map);
  assert_non_null(m.owned);
  dpd__datamat_close(&m);
  write_npy_skewed("skew4.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", c4,
                   sizeof c4, 2);
  open_ok("skew4.npy", &m);
  check_hand(&m);
  assert_int_equal(m.f32, 1);
  assert_int_equal(m.mapped, 0);
  dpd__datamat_close(&m);

  /* a 1-D array is N x 1 */
  write_npy("v.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", c8,
            4 * sizeof *c8);
  open_ok("v.npy", &m);
  assert_int_equal(m.rows, 4);
  assert_int_equal(m.cols, 1);
  assert_true(dpd__datamat_at(&m, 3, 0) == c8[3]);
  dpd__datamat_close(&m);

  /* bytes before opening: the file's own precision, doubles for integers */
  dpd_err_reset(&err);
  assert_int_equal(dpd__datamat_bytes("features", path_of("c8.npy"), &bytes, &err), DPD_OK);
  assert_true(bytes == 96.0);
  assert_int_equal(dpd__datamat_bytes("features", path_of("f4.npy"), &bytes, &err), DPD_OK);
  assert_true(bytes == 48.0);
  assert_int_equal(dpd__datamat_bytes("features", path_of("i4.npy"), &bytes, &err), DPD_OK);
  assert_true(bytes == 96.0);
  assert_int_equal(dpd__datamat_bytes("features", path_of("hand.txt"), &bytes, &err), DPD_OK);
  assert_true(bytes >= 96.0);
  assert_int_not_equal(dpd__datamat_bytes("features", path_of("none.npy"), &bytes, &err), DPD_OK);
  assert_non_null(strstr(err.reason, "'features'"));

  /* exactly max_bytes is allowed */
  dpd_err_reset(&err);
  assert_int_equal(dpd__datamat_open("features", path_of("c4.npy"), 4, 48, &m, &err), DPD_OK);
  dpd__datamat_close(&m);
  dpd__datamat_close(&m); /* twice is harmless */
}

static void bad_files_are_refused(void **state) {
  double v[12];
  float v4[12];
  dpd__datamat m;
  dpd_err err;
  (void)state;
  for (size_t e = 0; e < 12; e++) {
    v[e] = (double)e;
    v4[e] = (float)e;
  }
  /* big-endian */
  write_npy("be.npy", "{'descr': '>f8', 'fortran_order': False, 'shape': (4, 3), }", v, sizeof v);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("be.npy"), 2, 0, &m, &err), &err, &m,
              "big-endian (dtype '>f8')", "allowed: little-endian");
  /* unsupported dtype */
  write_npy("c16.npy", "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", v, 16);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("c16.npy"), 1, 0, &m, &err), &err, &m,
              "dtype '<c16'", "allowed: little-endian f8, f4");
  /* NaN at (row 2, column 3): element 1 * 3 + 2, in C and in Fortran order */
  v[5] = NAN;
  write_npy("nan.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }", v, sizeof v);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("nan.npy"), 2, 0, &m, &err), &err, &m,
              "nan.npy' row 2, column 3 is nan", "allowed: finite");
  v[5] = 5;
  v[2 * 4 + 1] = NAN;
  write_npy("nanf.npy", "{'descr': '<f8', 'fortran_order': True, 'shape': (4, 3), }", v, sizeof v);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("nanf.npy"), 2, 0, &m, &err), &err, &m,
              "row 2, column 3 is nan", NULL);
  v[2 * 4 + 1] = 9;
  /* -inf in float32 at (4, 1) */
  v4[9] = -INFINITY;
  write_npy("inf4.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }", v4,
            sizeof v4);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("inf4.npy"), 2, 0, &m, &err), &err, &m,
              "row 4, column 1 is -inf", NULL);
  /* truncated */
  write_npy("short.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }", v,
            sizeof v - 8);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("short.npy"), 2, 0, &m, &err), &err, &m,
              "the file is truncated", NULL);
  /* ragged text */
  write_text("ragged.txt", "1 2 3\n4 5\n");
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("ragged.txt"), 2, 0, &m, &err), &err, &m,
              "line 2 has 2 columns", "the same on every line");
  /* nan in text (dpd__read_matrix names the line and column) */
  write_text("nan.txt", "1 2 3\n4 nan 6\n");
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("nan.txt"), 2, 0, &m, &err), &err, &m,
              "line 2 column 2 is not a finite", NULL);
  /* one row, min_rows 2: text and .npy */
  write_text("one.txt", "1 2 3\n");
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("one.txt"), 2, 0, &m, &err), &err, &m,
              "N = 1 rows (allowed: at least 2)", NULL);
  write_npy("one.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3), }", v,
            3 * sizeof *v);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("one.npy"), 2, 0, &m, &err), &err, &m,
              "N = 1 rows (allowed: at least 2)", NULL);
  /* over max_bytes: 96 bytes of f8, 48 of f4, 96 of converted i4, text */
  write_npy("ok8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }", v, sizeof v);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("ok8.npy"), 2, 95, &m, &err), &err, &m,
              "need 96 bytes, more than max_memory = 95 bytes", "raise max_memory");
  v4[9] = 9;
  write_npy("ok4.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (4, 3), }", v4, sizeof v4);
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("ok4.npy"), 2, 47, &m, &err), &err, &m,
              "max_memory = 47 bytes", NULL);
  write_text("big.txt", "1 2 3\n4 5 6\n7 8 9\n");
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("big.txt"), 2, 64, &m, &err), &err, &m,
              "max_memory = 64 bytes", NULL);
  /* missing file */
  dpd_err_reset(&err);
  expect_fail(dpd__datamat_open("features", path_of("none.txt"), 2, 0, &m, &err), &err, &m,
              "none.txt", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_format_gives_the_same_rows),
      cmocka_unit_test(bad_files_are_refused),
  };
  return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
