/* Unit tests for the front-end functions of dpdyn/io.h and dpd_err_set (status.h): the public
 * faces of what the CLI used to reach inside the library for.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* mkfifo, mkdtemp */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpdyn/dpd.h"

static int is_decimal(const char *s) {
  return dpd_io_number_is_decimal(s, s + strlen(s));
}

static void decimal_numbers_are_those_keys_take(void **state) {
  (void)state;
  assert_int_equal(is_decimal("2.385"), 1);
  assert_int_equal(is_decimal("-0.75e-3"), 1);
  assert_int_equal(is_decimal("+17"), 1);
  assert_int_equal(is_decimal(".5"), 1);
  assert_int_equal(is_decimal("5."), 1);
  /* strtod reads all of these; the grammar does not */
  assert_int_equal(is_decimal("0x1p3"), 0);
  assert_int_equal(is_decimal("inf"), 0);
  assert_int_equal(is_decimal("nan"), 0);
  assert_int_equal(is_decimal(" 1"), 0);
  assert_int_equal(is_decimal("1e"), 0);
  assert_int_equal(is_decimal("."), 0);
  assert_int_equal(is_decimal(""), 0);
  /* only [s, end) counts */
  assert_int_equal(dpd_io_number_is_decimal("3.25:4", "3.25:4" + 4), 1);
}

static void numbers_are_written_in_the_shortest_form_that_reads_back(void **state) {
  static const double xs[] = {0.1, 2.385, 1.0 / 3.0, -7.25e-300, 1e22, 123456789.0};
  char buf[32];
  (void)state;
  dpd_io_number_format(buf, sizeof buf, 0.1);
  assert_string_equal(buf, "0.1");
  dpd_io_number_format(buf, sizeof buf, 1.0 / 3.0);
  assert_string_equal(buf, "0.33333333333333331"); /* %.15g would not read back */
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    dpd_io_number_format(buf, sizeof buf, xs[i]);
    assert_true(strtod(buf, NULL) == xs[i]);
  }
}

static void only_regular_files_of_bounded_size_are_opened(void **state) {
  char dir[] = "/tmp/dpd_test_io_XXXXXX", path[64], fifo[64];
  FILE *f = NULL;
  unsigned long long size = 0;
  dpd_err err;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/data.txt", dir);
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("1 2.5\n3 4.75\n", f);
  fclose(f);
  assert_int_equal(dpd_io_file_open("spectrum", 1, path, 0, &f, &size, &err), DPD_OK);
  assert_true(size == 13);
  fclose(f);
  /* too large, with the key named */
  assert_int_equal(dpd_io_file_open("spectrum", 1, path, 12, &f, NULL, &err), DPD_EINVAL);
  assert_null(f);
  assert_non_null(strstr(err.reason, "invalid value for 'spectrum'"));
  assert_non_null(strstr(err.reason, "larger than 12 bytes"));
  /* a directory and a FIFO without a writer are refused at once, with the noun named */
  assert_int_equal(dpd_io_file_open("INI file", 0, dir, 0, &f, NULL, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "INI file"));
  assert_non_null(strstr(err.reason, "a directory"));
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(dpd_io_file_open("INI file", 0, fifo, 0, &f, NULL, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "FIFO"));
  unlink(fifo);
  unlink(path);
  rmdir(dir);
}

static void summaries_are_written_and_read_back_with_their_non_finite_numbers(void **state) {
  cJSON *root = cJSON_CreateObject(), *gaps = cJSON_CreateObject(), *back;
  char *text;
  (void)state;
  assert_non_null(root);
  dpd_io_json_number_set(root, "risk", 2.385);
  dpd_io_json_number_set(root, "undefined", NAN);
  dpd_io_json_na_set(root, "epsilon", "no delta given");
  dpd_io_json_number_set(gaps, "final", -INFINITY);
  cJSON_AddItemToObject(root, "gaps", gaps);
  text = dpd_io_json_print(root);
  assert_non_null(text);
  /* the written form: null, and the value under "nonfinite" by its dotted path */
  assert_non_null(strstr(text, "\"final\":\tnull"));
  assert_non_null(strstr(text, "\"gaps.final\":\t\"-inf\""));
  assert_non_null(strstr(text, "\"undefined\":\t\"undefined for these parameters\""));
  assert_non_null(strstr(text, "\"epsilon\":\t\"no delta given\""));
  /* the object printed is unchanged */
  assert_true(cJSON_GetObjectItemCaseSensitive(gaps, "final")->valuedouble == -INFINITY);
  back = cJSON_Parse(text);
  assert_non_null(back);
  dpd_io_json_nonfinite_decode(back);
  assert_null(cJSON_GetObjectItemCaseSensitive(back, "nonfinite"));
  assert_true(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(back, "gaps"), "final")
          ->valuedouble == -INFINITY);
  assert_true(cJSON_GetObjectItemCaseSensitive(back, "risk")->valuedouble == 2.385);
  cJSON_Delete(back);
  free(text);
  cJSON_Delete(root);
}

static void the_keys_record_holds_every_key_in_effect_but_resource_limits(void **state) {
  const dpd_model_type *m = dpd_model_lookup("rf");
  dpd_keys *keys = NULL;
  cJSON *obj = cJSON_CreateObject();
  dpd_err err;
  (void)state;
  assert_non_null(m);
  assert_int_equal(dpd_model_keys_create(m, "account", &keys, &err), DPD_OK);
  assert_int_equal(dpd_keys_set(keys, "mu", "1.75", &err), DPD_OK);
  assert_int_equal(dpd_keys_set(keys, "max_memory", "64M", &err), DPD_OK);
  dpd_io_json_keys_set(keys, obj);
  assert_true(cJSON_GetObjectItemCaseSensitive(obj, "mu")->valuedouble == 1.75);
  assert_null(cJSON_GetObjectItemCaseSensitive(obj, "max_memory")); /* a resource limit */
  cJSON_Delete(obj);
  dpd_keys_free(keys);
}

static void an_error_set_by_a_front_end_reads_as_the_librarys(void **state) {
  dpd_err err;
  (void)state;
  dpd_err_reset(&err);
  assert_int_equal(
      dpd_err_set(&err, DPD_EIO, "front.c", 42, "cannot write '%s': %s", "out", "disk full"),
      DPD_EIO);
  assert_int_equal(err.status, DPD_EIO);
  assert_string_equal(err.file, "front.c");
  assert_int_equal(err.line, 42);
  assert_string_equal(err.reason, "cannot write 'out': disk full");
  assert_int_equal(dpd_err_set(NULL, DPD_EINVAL, "front.c", 1, "ignored"), DPD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decimal_numbers_are_those_keys_take),
      cmocka_unit_test(numbers_are_written_in_the_shortest_form_that_reads_back),
      cmocka_unit_test(only_regular_files_of_bounded_size_are_opened),
      cmocka_unit_test(summaries_are_written_and_read_back_with_their_non_finite_numbers),
      cmocka_unit_test(the_keys_record_holds_every_key_in_effect_but_resource_limits),
      cmocka_unit_test(an_error_set_by_a_front_end_reads_as_the_librarys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
