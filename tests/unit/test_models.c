/* The registry contract: every model of the registry, every command of it with a run hook.
 * SPDX-License-Identifier: MIT
 *
 * For each model: the key table is well formed (unique names, defaults inside their ranges and
 * choices, commands that exist); the default keys validate for every command; the model's small
 * problem runs `simulate` into a well-formed output (a trajectory table whose first column t
 * rises from 0 to 1, finite values, a summary with the keys in effect); and the run is
 * bit-identical with 1 and 3 threads. Plus the key set itself (keys.h). */
#include "dpd_test.h"

#include <string.h>

#include "dpdyn/model.h"

static int keys_small(const dpd_model_type *m, const char *command, const char *threads,
                      dpd_keys **keys) {
  dpd_err err;
  int status = dpd_model_keys_create(m, command, keys, &err);
  assert_int_equal(status, DPD_OK);
  for (const char *const *kv = m->small; kv != NULL && kv[0] != NULL; kv += 2) {
    assert_int_equal(dpd_keys_set(*keys, kv[0], kv[1], &err), DPD_OK);
  }
  if (threads != NULL) {
    assert_int_equal(dpd_keys_set(*keys, "threads", threads, &err), DPD_OK);
  }
  return status;
}

/* Help placeholders: the lists come from the tables; other braces stay as written. */
static void key_help_lists_the_tables(void **state) {
  static const dpd_key_desc d = {"k", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL,
                                 "x {schedules}; {noise_laws}; {schedules:a}; q_{K+1} {x} {"};
  static const char want[] =
      "x const | sqrt | hyperbolic | optimal | step | cosine | file:PATH; gaussian | laplace | "
      "rademacher | student:NU (NU > 2); hyperbolic; q_{K+1} {x} {";
  char buf[512], allowed[512];
  const dpd_model_type *m;
  (void)state;
  assert_int_equal(dpd_key_desc_help_get(&d, buf, sizeof buf), strlen(want));
  assert_string_equal(buf, want);
  dpd_key_desc_allowed(&d, allowed, sizeof allowed);
  assert_string_equal(allowed, want);
  assert_int_equal(dpd_key_desc_help_get(&d, buf, 1), strlen(want));
  assert_string_equal(buf, "");
  /* every help of every model expands (no placeholder left) */
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    for (const dpd_key_desc *k = m->keys; k->name != NULL; k++) {
      assert_true(dpd_key_desc_help_get(k, buf, sizeof buf) < sizeof buf);
      assert_null(strstr(buf, "{schedules"));
      assert_null(strstr(buf, "{noise_laws"));
    }
  }
}

static void every_key_table_is_well_formed(void **state) {
  const dpd_model_type *m;
  (void)state;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    assert_ptr_equal(dpd_model_lookup(m->name), m);
    assert_non_null(m->commands);
    for (const dpd_key_desc *d = m->keys; d->name != NULL; d++) {
      int applies_somewhere = 0;
      assert_non_null(d->help);
      for (const dpd_key_desc *e = d + 1; e->name != NULL; e++) {
        if (strcmp(d->name, e->name) == 0) {
          print_error("model %s: key '%s' twice\n", m->name, d->name);
          fail();
        }
      }
      for (const dpd_key_desc *c = dpd_model_common_keys(); c->name != NULL; c++) {
        assert_string_not_equal(d->name, c->name);
      }
      for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
        applies_somewhere |= dpd_key_desc_applies(d, c->name);
      }
      if (!applies_somewhere) {
        print_error("model %s: key '%s' applies to none of its commands\n", m->name, d->name);
        fail();
      }
    }
    for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
      dpd_keys *keys;
      dpd_err err;
      /* every default is accepted by its own getter */
      assert_int_equal(dpd_model_keys_create(m, c->name, &keys, &err), DPD_OK);
      for (size_t k = 0; k < dpd_keys_count(keys); k++) {
        const dpd_key_desc *d = dpd_keys_desc_get(keys, k);
        double x;
        size_t s;
        int status = DPD_OK;
        if (d->def == NULL) {
          continue;
        }
        if (d->kind == DPD_KEY_REAL) {
          status = dpd_keys_real_get(keys, d->name, &x, &err);
        } else if (d->kind == DPD_KEY_INT) {
          status = dpd_keys_size_get(keys, d->name, &s, &err);
        } else if (d->kind == DPD_KEY_TEXT && d->choices != NULL) {
          status = dpd_keys_choice_get(keys, d->name, &s, &err);
        }
        if (status != DPD_OK) {
          print_error("model %s: default of '%s': %s\n", m->name, d->name, err.reason);
          fail();
        }
      }
      dpd_keys_free(keys);
    }
  }
}

/* The default keys validate for every command that has a run hook, or fail only for a key
 * without default that the user must give (linreg's d and n); with the model's small problem
 * they validate. */
static void default_keys_validate_for_every_command(void **state) {
  const dpd_model_type *m;
  (void)state;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
      dpd_keys *keys;
      dpd_output *out = NULL;
      dpd_run_env env = dpd_run_env_default();
      dpd_err err;
      if (c->run == NULL) {
        continue;
      }
      env.validate_only = 1;
      assert_int_equal(dpd_model_keys_create(m, c->name, &keys, &err), DPD_OK);
      if (dpd_model_run(m, c->name, keys, &env, &out, &err) != DPD_OK) {
        int required = 0;
        for (const dpd_key_desc *d = m->keys; d->name != NULL; d++) {
          char missing[96];
          snprintf(missing, sizeof missing, "missing value for '%s'", d->name);
          required |= d->def == NULL && strstr(err.reason, missing) == err.reason;
        }
        if (!required) {
          print_error("model %s %s with default keys: %s\n", m->name, c->name, err.reason);
          fail();
        }
      }
      assert_null(out);
      dpd_keys_free(keys);
      keys_small(m, c->name, NULL, &keys);
      if (dpd_model_run(m, c->name, keys, &env, &out, &err) != DPD_OK) {
        print_error("model %s %s with its small problem: %s\n", m->name, c->name, err.reason);
        fail();
      }
      dpd_keys_free(keys);
    }
  }
}

/* At least one table; every value finite, except columns that are NaN throughout (a quantity the
 * command does not compute, e.g. the ODE columns of linreg's release.tsv in simulate); a
 * trajectory's first column t rises from 0 to 1. */
static void check_well_formed(const dpd_model_type *m, const dpd_output *out) {
  const dpd_table *t = dpd_output_table_get(out, "trajectory.tsv");
  assert_non_null(out->summary);
  assert_non_null(out->headline);
  assert_true(out->ntables >= 1);
  if (t != NULL) {
    const double *time = t->data;
    assert_true(t->rows >= 2);
    assert_string_equal(t->columns[0], "t");
    assert_true(time[0] == 0.0);
    assert_true(time[t->rows - 1] == 1.0);
    for (size_t j = 1; j < t->rows; j++) {
      assert_true(time[j] > time[j - 1]);
    }
  }
  for (size_t i = 0; i < out->ntables; i++) {
    const dpd_table *u = &out->tables[i];
    assert_true(u->rows >= 1 && u->ncols >= 1);
    for (size_t c = 0; c < u->ncols; c++) {
      const double *col = u->data + c * u->rows;
      size_t nan = 0;
      for (size_t k = 0; k < u->rows; k++) {
        nan += isnan(col[k]) != 0;
      }
      for (size_t k = 0; k < u->rows && nan < u->rows; k++) {
        if (!isfinite(col[k])) {
          print_error("model %s: %s value %zu of column %s not finite\n", m->name, u->name, k,
                      u->columns[c]);
          fail();
        }
      }
    }
  }
  assert_non_null(cJSON_GetObjectItemCaseSensitive(out->summary, "command"));
}

static void same_output(const dpd_output *a, const dpd_output *b) {
  assert_int_equal(a->ntables, b->ntables);
  for (size_t i = 0; i < a->ntables; i++) {
    assert_int_equal(a->tables[i].rows, b->tables[i].rows);
    assert_int_equal(a->tables[i].ncols, b->tables[i].ncols);
    assert_memory_equal(a->tables[i].data, b->tables[i].data,
                        a->tables[i].rows * a->tables[i].ncols * sizeof(double));
  }
}

/* simulate on the model's small problem: well formed, and the same bits for 1 and 3 threads. */
static void simulate_is_well_formed_and_thread_independent(void **state) {
  const dpd_model_type *m;
  (void)state;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    const dpd_model_command *c = dpd_model_command_get(m, "simulate");
    dpd_output *one = NULL, *three = NULL;
    dpd_keys *k1, *k3;
    dpd_run_env env = dpd_run_env_default();
    dpd_err err;
    if (c == NULL) {
      continue; /* a model without simulate (privacy: the accountant alone) */
    }
    if (c->run == NULL) {
      continue; /* run by the CLI still (linreg) */
    }
    keys_small(m, "simulate", "1", &k1);
    keys_small(m, "simulate", "3", &k3);
    if (dpd_model_run(m, "simulate", k1, &env, &one, &err) != DPD_OK ||
        dpd_model_run(m, "simulate", k3, &env, &three, &err) != DPD_OK) {
      print_error("model %s simulate: %s\n", m->name, err.reason);
      fail();
    }
    check_well_formed(m, one);
    same_output(one, three);
    dpd_output_free(one);
    dpd_output_free(three);
    dpd_keys_free(k1);
    dpd_keys_free(k3);
  }
}

static const dpd_key_desc demo_keys[] = {
    {"x", DPD_KEY_REAL, "1.5", 0, 10, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, NULL, "a real"},
    {"k", DPD_KEY_INT, "3", 1, 5, 0, NULL, "a b", "an integer"},
    {"law", DPD_KEY_TEXT, "up", 0, 0, 0, "up|down|sideways", "b", "a choice"},
    {"mem", DPD_KEY_BYTES, NULL, 0, 0, 0, NULL, NULL, "a limit"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

static void keys_validate_and_name_the_key(void **state) {
  const dpd_key_desc *tables[1] = {demo_keys};
  dpd_keys *keys;
  dpd_err err;
  double x;
  size_t s;
  (void)state;
  assert_int_equal(dpd_keys_create(tables, 1, "a", &keys, &err), DPD_OK);
  assert_int_equal(dpd_keys_real_get(keys, "x", &x, &err), DPD_OK);
  assert_true(x == 1.5);
  assert_int_equal(dpd_keys_set(keys, "x", "0", &err), DPD_OK);
  assert_int_equal(dpd_keys_real_get(keys, "x", &x, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'x': 0 (allowed: 0 < x <= 10, or inf)"));
  assert_int_equal(dpd_keys_set(keys, "x", " inf ", &err), DPD_OK);
  assert_int_equal(dpd_keys_real_get(keys, "x", &x, &err), DPD_OK);
  assert_true(isinf(x));
  assert_int_equal(dpd_keys_set(keys, "x", "0x1p3", &err), DPD_OK); /* no hexadecimal */
  assert_int_equal(dpd_keys_real_get(keys, "x", &x, &err), DPD_EINVAL);
  assert_int_equal(dpd_keys_set(keys, "k", "6", &err), DPD_OK);
  assert_int_equal(dpd_keys_size_get(keys, "k", &s, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "integer 1 <= k <= 5"));
  assert_int_equal(dpd_keys_set(keys, "law", "left", &err), DPD_OK);
  assert_int_equal(dpd_keys_choice_get(keys, "law", &s, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "(allowed: up, down, sideways)"));
  assert_int_equal(dpd_keys_set(keys, "law", "sideways", &err), DPD_OK);
  assert_int_equal(dpd_keys_choice_get(keys, "law", &s, &err), DPD_OK);
  assert_int_equal(s, 2);
  assert_int_equal(dpd_keys_set(keys, "nope", "1", &err), DPD_EINVAL);
  /* restrict: law applies only to command b; given, it is an error when strict */
  assert_int_equal(dpd_keys_restrict(keys, 1, "command a", &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "key 'law' does not apply to command a"));
  assert_int_equal(dpd_keys_restrict(keys, 0, "command a", &err), DPD_OK);
  assert_null(dpd_keys_text_get(keys, "law"));
  assert_int_equal(dpd_keys_bytes_get(keys, "mem", 7 << 20, &s, &err), DPD_OK);
  assert_int_equal(s, 7 << 20);
  assert_int_equal(dpd_keys_set(keys, "mem", "2G", &err), DPD_OK);
  assert_int_equal(dpd_keys_bytes_get(keys, "mem", 0, &s, &err), DPD_OK);
  assert_int_equal(s, (size_t)2 << 30);
  dpd_keys_free(keys);
}

static void keys_record_values_in_effect(void **state) {
  const dpd_key_desc *tables[1] = {demo_keys};
  dpd_keys *keys;
  dpd_err err;
  char buf[64];
  double x;
  (void)state;
  assert_int_equal(dpd_keys_create(tables, 1, "b", &keys, &err), DPD_OK);
  assert_int_equal(dpd_keys_set(keys, "x", " 007.50 ", &err), DPD_OK);
  assert_int_equal(dpd_keys_record_get(keys, 0, buf, sizeof buf, &x), 1);
  assert_string_equal(buf, "7.5");
  assert_int_equal(dpd_keys_effective_real_set(keys, "k", 0.1 + 0.2, &err), DPD_OK);
  assert_false(dpd_keys_given(keys, "k"));
  assert_string_equal(dpd_keys_text_get(keys, "k"), "0.30000000000000004");
  assert_int_equal(dpd_keys_default_set(keys, "x", "2", &err), DPD_OK); /* given: kept */
  assert_string_equal(dpd_keys_text_get(keys, "x"), " 007.50 ");
  dpd_keys_free(keys);
}

/* Whether `name` is a word of the space-separated list. */
static int listed(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *w = list; *w != '\0';) {
    size_t wl = strcspn(w, " ");
    if (wl == len && strncmp(w, name, len) == 0) {
      return 1;
    }
    w += wl + (w[wl] == ' ');
  }
  return 0;
}

/* Every number of a summary (one level down in objects but params and not_available, named
 * "object.key", as dpdyn sweep names them) is in `list`; returns how many were checked. */
static size_t summary_numbers_listed(const char *what, const cJSON *summary, const char *list) {
  const cJSON *item;
  size_t n = 0;
  cJSON_ArrayForEach(item, summary) {
    const cJSON *sub;
    if (cJSON_IsObject(item) && strcmp(item->string, "params") != 0 &&
        strcmp(item->string, "not_available") != 0) {
      cJSON_ArrayForEach(sub, item) {
        char name[256];
        if (cJSON_IsNumber(sub) || cJSON_IsNull(sub) || cJSON_IsBool(sub)) {
          snprintf(name, sizeof name, "%s.%s", item->string, sub->string);
          if (!listed(list, name)) {
            print_error("%s: summary number '%s' missing from its numbers\n", what, name);
            fail();
          }
          n++;
        }
      }
    } else if ((cJSON_IsNumber(item) || cJSON_IsNull(item) || cJSON_IsBool(item)) &&
               strcmp(item->string, "wall_seconds") != 0 &&
               strcmp(item->string, "memory_estimate_bytes") != 0) {
      if (!listed(list, item->string)) {
        print_error("%s: summary number '%s' missing from its numbers\n", what, item->string);
        fail();
      }
      n++;
    }
  }
  return n;
}

/* Every command declares the numbers its summary can hold (dpd_model_command.numbers, which
 * dpdyn sweep checks plot_y against): words of [A-Za-z0-9_] with at most one '.', one space
 * apart, each once, none of the run's own (wall_seconds, memory_estimate_bytes, status); and
 * simulate's small problem produces only declared numbers (tests/cli/test_sweep_plot_y.sh runs
 * every command over its text keys). */
static void every_command_declares_its_summary_numbers(void **state) {
  const dpd_model_type *m;
  (void)state;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
      const char *w = c->numbers;
      size_t count = 0;
      if (w == NULL || w[0] == '\0') {
        print_error("model %s %s: no numbers declared\n", m->name, c->name);
        fail();
      }
      while (*w != '\0') {
        size_t wl = strcspn(w, " "), dots = 0;
        char word[128];
        assert_true(wl > 0 && wl < sizeof word);
        memcpy(word, w, wl);
        word[wl] = '\0';
        for (size_t k = 0; k < wl; k++) {
          int ok = (word[k] >= 'a' && word[k] <= 'z') || (word[k] >= 'A' && word[k] <= 'Z') ||
                   (word[k] >= '0' && word[k] <= '9') || word[k] == '_' || word[k] == '.';
          dots += word[k] == '.';
          if (!ok) {
            print_error("model %s %s: bad number name '%s'\n", m->name, c->name, word);
            fail();
          }
        }
        assert_true(dots <= 1 && word[0] != '.' && word[wl - 1] != '.');
        assert_string_not_equal(word, "wall_seconds");
        assert_string_not_equal(word, "memory_estimate_bytes");
        assert_string_not_equal(word, "status");
        for (const char *v = w + wl + (w[wl] == ' '); *v != '\0';) {
          size_t vl = strcspn(v, " ");
          if (vl == wl && strncmp(v, word, wl) == 0) {
            print_error("model %s %s: number '%s' twice\n", m->name, c->name, word);
            fail();
          }
          v += vl + (v[vl] == ' ');
        }
        w += wl;
        if (*w == ' ') {
          w++;
          assert_true(*w != ' ' && *w != '\0');
        }
        count++;
      }
      assert_true(count >= 3);
    }
    {
      const dpd_model_command *c = dpd_model_command_get(m, "simulate");
      dpd_output *out = NULL;
      dpd_keys *keys;
      dpd_run_env env = dpd_run_env_default();
      dpd_err err;
      char what[64];
      if (c == NULL || c->run == NULL) {
        continue;
      }
      keys_small(m, "simulate", "1", &keys);
      if (dpd_model_run(m, "simulate", keys, &env, &out, &err) != DPD_OK) {
        print_error("model %s simulate: %s\n", m->name, err.reason);
        fail();
      }
      snprintf(what, sizeof what, "model %s simulate", m->name);
      assert_true(summary_numbers_listed(what, out->summary, c->numbers) >= 3);
      dpd_output_free(out);
      dpd_keys_free(keys);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(key_help_lists_the_tables),
      cmocka_unit_test(every_key_table_is_well_formed),
      cmocka_unit_test(default_keys_validate_for_every_command),
      cmocka_unit_test(simulate_is_well_formed_and_thread_independent),
      cmocka_unit_test(keys_validate_and_name_the_key),
      cmocka_unit_test(keys_record_values_in_effect),
      cmocka_unit_test(every_command_declares_its_summary_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
