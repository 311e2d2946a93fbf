/* What a user gives (dpd_model_find, dpd_model_key_set): the model of a command and the keys,
 * with the messages the CLI prints and the Python package raises.
 * SPDX-License-Identifier: MIT */
#include "dpd_test.h"

#include <string.h>

#include "dpdyn/model.h"

static void the_model_of_a_command(void **state) {
  const dpd_model_type *m = NULL;
  dpd_err err;
  (void)state;
  assert_int_equal(dpd_model_find(NULL, "simulate", &m, &err), DPD_OK);
  assert_string_equal(m->name, "linreg");
  assert_int_equal(dpd_model_find(NULL, "ou", &m, &err), DPD_OK); /* linreg has no ou */
  assert_string_equal(m->name, "rf");
  assert_int_equal(dpd_model_find("nc", "diagnose", &m, &err), DPD_OK);
  assert_string_equal(m->name, "nc");
  assert_int_equal(dpd_model_find("mlp", "simulate", &m, &err), DPD_EINVAL);
  assert_null(m);
  assert_string_equal(
      err.reason, "invalid value for 'model': 'mlp' (allowed: linreg, rf, nc, semipriv, privacy)");
  assert_int_equal(dpd_model_find("linreg", "ou", &m, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "(allowed for ou: rf; model=linreg has simulate, "));
  assert_int_equal(dpd_model_find(NULL, "fly", &m, &err), DPD_EINVAL);
  assert_string_equal(err.reason, "unknown command 'fly'");
}

static void a_key_the_model_lacks_is_named(void **state) {
  const dpd_model_type *m = dpd_model_lookup("linreg");
  dpd_keys *keys;
  dpd_err err;
  (void)state;
  assert_int_equal(dpd_model_keys_create(m, "ode", &keys, &err), DPD_OK);
  assert_int_equal(dpd_model_key_set(m, keys, "d", "20", &err), DPD_OK);
  assert_string_equal(dpd_keys_text_get(keys, "d"), "20");
  assert_true(dpd_keys_given(keys, "d"));
  assert_true(dpd_model_key_known("p"));
  assert_false(dpd_model_key_known("frobnicate"));
  assert_int_equal(dpd_model_key_set(m, keys, "p", "3", &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "key 'p' does not apply to model=linreg ode (allowed keys: "
                                     "d, n, gamma, "));
  assert_null(strstr(err.reason, "seeds")); /* simulate's key, not ode's */
  assert_int_equal(dpd_model_key_set(m, keys, "frobnicate", "1", &err), DPD_EINVAL);
  assert_string_equal(err.reason, "unknown key 'frobnicate' (see 'dpdyn ode --help' for the keys)");
  assert_null(dpd_keys_text_get(keys, "p"));
  dpd_keys_free(keys);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_model_of_a_command),
      cmocka_unit_test(a_key_the_model_lacks_is_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
