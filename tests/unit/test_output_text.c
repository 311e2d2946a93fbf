/* The summary as JSON text (dpd_output_summary_get): the text the Python package reads.
 * SPDX-License-Identifier: MIT
 *
 * The text parses back (cJSON) to the same tree, every number to the same double; non-finite
 * numbers come out as Infinity/-Infinity/NaN tokens; the snprintf-style size protocol holds
 * (length reported, truncation NUL-terminated); the output itself is not changed. */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include "dpdyn/model.h"

static char *summary_text(const dpd_output *out) {
  dpd_err err;
  size_t len = 0;
  char *buf;
  assert_int_equal(dpd_output_summary_get(out, NULL, 0, &len, &err), DPD_OK);
  buf = malloc(len + 1);
  assert_non_null(buf);
  assert_int_equal(dpd_output_summary_get(out, buf, len + 1, NULL, &err), DPD_OK);
  assert_int_equal(strlen(buf), len);
  return buf;
}

static void numbers_read_back_as_the_same_double(void **state) {
  const double values[] = {2.385, 0.1, 1.0 / 3.0, 6.02214076e23, -4.9e-324, 0.49999999999999967};
  const char *names[] = {"a", "b", "c", "d", "e", "f"};
  dpd_output *out;
  dpd_err err;
  cJSON *back, *nested;
  char *text;
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  nested = cJSON_AddObjectToObject(out->summary, "privacy");
  for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
    cJSON_AddNumberToObject(out->summary, names[k], values[k]);
    cJSON_AddNumberToObject(nested, names[k], -values[k]);
  }
  cJSON_AddStringToObject(out->summary, "schedule", "const");
  text = summary_text(out);
  back = cJSON_Parse(text);
  assert_non_null(back);
  assert_true(cJSON_Compare(back, out->summary, 1));
  for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
    double got = cJSON_GetObjectItemCaseSensitive(back, names[k])->valuedouble;
    double got_nested = cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(back, "privacy"), names[k])
                            ->valuedouble;
    assert_memory_equal(&got, &values[k], sizeof got);
    assert_true(got_nested == -values[k]);
  }
  assert_null(strchr(text, '\n')); /* compact */
  cJSON_Delete(back);
  free(text);
  dpd_output_free(out);
}

static void nonfinite_numbers_become_tokens_and_the_output_is_unchanged(void **state) {
  dpd_output *out;
  dpd_err err;
  cJSON *arr;
  char *text;
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  cJSON_AddNumberToObject(out->summary, "up", INFINITY);
  cJSON_AddNumberToObject(out->summary, "down", -INFINITY);
  arr = cJSON_AddArrayToObject(out->summary, "list");
  cJSON_AddItemToArray(arr, cJSON_CreateNumber(NAN));
  cJSON_AddItemToArray(arr, cJSON_CreateNumber(1.25));
  text = summary_text(out);
  assert_string_equal(text, "{\"up\":Infinity,\"down\":-Infinity,\"list\":[NaN,1.25]}");
  free(text);
  /* the run's own summary keeps its numbers */
  assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(out->summary, "up")));
  assert_true(isinf(cJSON_GetObjectItemCaseSensitive(out->summary, "down")->valuedouble));
  assert_true(isnan(cJSON_GetArrayItem(arr, 0)->valuedouble));
  dpd_output_free(out);
}

static void a_short_buffer_is_truncated_and_terminated(void **state) {
  dpd_output *out;
  dpd_err err;
  char buf[8];
  size_t len = 0;
  (void)state;
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  cJSON_AddStringToObject(out->summary, "model", "linreg");
  memset(buf, 'x', sizeof buf);
  assert_int_equal(dpd_output_summary_get(out, buf, sizeof buf, &len, &err), DPD_OK);
  assert_int_equal(len, strlen("{\"model\":\"linreg\"}"));
  assert_string_equal(buf, "{\"model");
  dpd_output_free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(numbers_read_back_as_the_same_double),
      cmocka_unit_test(nonfinite_numbers_become_tokens_and_the_output_is_unchanged),
      cmocka_unit_test(a_short_buffer_is_truncated_and_terminated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
