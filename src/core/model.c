/* The generic model runner (model.h): common keys, commands, the run driver.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "core/text_impl.h"

static const dpd_key_desc common_keys[] = {
    {"model", DPD_KEY_TEXT, "linreg", 0, 0, 0, NULL, NULL, "the model (dpdyn --help lists them)"},
    {"out", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL,
     "output directory (default ./dpdyn-out/<command>-<model>, e.g. ./dpdyn-out/simulate-linreg)"},
    /* no table default: each command has its own (dpd_model_command.plot_default), which
     * `dpdyn COMMAND --help` shows */
    {"plot", DPD_KEY_INT, NULL, 0, 1, 0, NULL, NULL, "1 = render the figure with gnuplot"},
    {"max_memory", DPD_KEY_BYTES, NULL, 0, 0, 0, NULL, NULL,
     "most memory a run may allocate, in bytes or with K/M/G/T (default: half the RAM)"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

const dpd_key_desc *dpd_model_common_keys(void) {
  return common_keys;
}

const dpd_model_command *dpd_model_command_get(const dpd_model_type *m, const char *name) {
  if (m->commands == NULL) {
    return NULL;
  }
  for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
    if (strcmp(c->name, name) == 0) {
      return c;
    }
  }
  return NULL;
}

void dpd_model_command_list(const dpd_model_type *m, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (const dpd_model_command *c = m->commands; c != NULL && c->name != NULL && len < cap; c++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", c->name);
  }
}

int dpd_model_keys_create(const dpd_model_type *m, const char *command, dpd_keys **keys,
                          dpd_err *err) {
  const dpd_key_desc *tables[2] = {m->keys, common_keys};
  int status = dpd_keys_create(tables, 2, command, keys, err);
  if (status == DPD_OK && (status = dpd_keys_effective_set(*keys, "model", m->name, err)) < 0) {
    dpd_keys_free(*keys);
    *keys = NULL;
  }
  return status;
}

int dpd_run_progress_flag(void *flag, const char *what, size_t done, size_t total) {
  (void)what;
  (void)done;
  (void)total;
  return __atomic_load_n((const int *)flag, __ATOMIC_RELAXED) != 0;
}

dpd_run_env dpd_run_env_default(void) {
  dpd_run_env env = {0, NULL, NULL, 0, NULL, NULL};
  return env;
}

/* Whether `name` ends in "_se": a standard error over the replicates, or a gap measured in
 * one ("_in_se"). */
static int is_se_name(const char *name) {
  size_t n = strlen(name);
  return n >= 3 && strcmp(name + n - 3, "_se") == 0;
}

/* One replicate has no standard error: every number of the summary named *_se (and *_in_se, a
 * gap measured in one) becomes null with its reason under "not_available", in every object but
 * the parameters; every *_se column of the tables becomes nan (the figures leave out what they
 * cannot draw). Returns a DPD status. */
static int single_replicate(cJSON *obj, dpd_err *err) {
  static const char reason[] = "needs at least 2 replicates (one was run)";
  for (cJSON *item = obj->child; item != NULL;) {
    cJSON *next = item->next;
    if (cJSON_IsObject(item) && strcmp(item->string, "params") != 0 &&
        strcmp(item->string, "not_available") != 0 && strcmp(item->string, "nonfinite") != 0) {
      if (single_replicate(item, err) < 0) {
        return DPD_ENOMEM;
      }
    } else if (cJSON_IsNumber(item) && item->string != NULL && is_se_name(item->string)) {
      cJSON *why = cJSON_GetObjectItemCaseSensitive(obj, "not_available");
      char *name = dpd__text_dup(item->string);
      cJSON *null = cJSON_CreateNull();
      int ok = name != NULL && null != NULL &&
               cJSON_ReplaceItemInObjectCaseSensitive(obj, name, null); /* frees item */
      if (ok && why == NULL) {
        ok = (why = cJSON_AddObjectToObject(obj, "not_available")) != NULL;
      }
      if (ok && cJSON_GetObjectItemCaseSensitive(why, name) == NULL) {
        ok = cJSON_AddStringToObject(why, name, reason) != NULL;
      }
      if (!ok && (name == NULL || null == NULL)) {
        cJSON_Delete(null);
      }
      free(name);
      if (!ok) {
        return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      }
    }
    item = next;
  }
  return DPD_OK;
}

/* The data files of the run, in the order of its tables (docs/output.md). */
static int data_files(dpd_output *out, dpd_err *err) {
  cJSON *files = cJSON_AddArrayToObject(out->summary, "data_files");
  for (size_t k = 0; files != NULL && k < out->ntables; k++) {
    if (!cJSON_AddItemToArray(files, cJSON_CreateString(out->tables[k].name))) {
      files = NULL;
    }
  }
  return files == NULL ? DPD_FAIL(err, DPD_ENOMEM, "out of memory") : DPD_OK;
}

/* One replicate (the command's replicates key = 1): no standard errors anywhere. */
static int standard_errors(dpd_output *out, const dpd_model_command *c, const dpd_keys *keys,
                           dpd_err *err) {
  const char *rkey = c->replicates_key != NULL ? c->replicates_key : "seeds";
  const char *reps = dpd_keys_find(keys, rkey) >= 0 ? dpd_keys_text_get(keys, rkey) : NULL;
  if (reps == NULL || strtod(reps, NULL) != 1.0) {
    return DPD_OK;
  }
  if (single_replicate(out->summary, err) < 0) {
    return DPD_ENOMEM;
  }
  for (size_t k = 0; k < out->ntables; k++) {
    const dpd_table *t = &out->tables[k];
    for (size_t j = 0; j < t->ncols; j++) {
      for (size_t r = 0; is_se_name(t->columns[j]) && r < t->rows; r++) {
        t->data[j * t->rows + r] = NAN;
      }
    }
  }
  return DPD_OK;
}

/* setup, the memory check, validate_only, env->validated, run, release (model.h). */
static int run_command(const dpd_model_type *m, const dpd_model_command *c, dpd_keys *keys,
                       const dpd_run_env *env, dpd_output **out, dpd_err *err) {
  void *ctx = NULL;
  const char *driver = NULL;
  int status = m->setup(c, keys, env, &ctx, err);
  if (status == DPD_OK) {
    const double bytes = m->workspace_bytes(ctx, c, &driver);
    if (bytes > 0.0 && driver != NULL) {
      status = dpd__model_memory_check(keys, env, bytes, driver, err);
    }
  }
  if (status == DPD_OK && !env->validate_only) {
    if (env->validated == NULL || (status = env->validated(env->validated_user, err)) >= 0) {
      status = c->run(ctx, keys, env, out, err);
    }
  }
  m->release(ctx);
  return status;
}

int dpd_model_run(const dpd_model_type *m, const char *command, dpd_keys *keys,
                  const dpd_run_env *env, dpd_output **out, dpd_err *err) {
  const dpd_model_command *c = dpd_model_command_get(m, command);
  dpd_run_env none = dpd_run_env_default();
  int status;
  *out = NULL;
  if (c == NULL) {
    char list[256];
    dpd_model_command_list(m, list, sizeof list);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'model': '%s' (model=%s has no command '%s'; it has %s)",
                    m->name, m->name, command, list);
  }
  if (env == NULL) {
    env = &none;
  }
  status = run_command(m, c, keys, env, out, err);
  if (status == DPD_OK && *out != NULL && (*out)->ntables > 0) {
    status = data_files(*out, err);
  }
  if (status == DPD_OK && *out != NULL) {
    status = standard_errors(*out, c, keys, err);
  }
  if (status < 0 && *out != NULL) { /* a run's failure, or the two steps above */
    dpd_output_free(*out);
    *out = NULL;
  }
  return status;
}

