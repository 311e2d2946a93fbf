/* The output of a run: summary, tables, figure (model.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/text_impl.h"
#include "dpdyn/model.h"
#include "core/output_impl.h"

int dpd_output_create(dpd_output **out, dpd_err *err) {
  dpd_output *o = calloc(1, sizeof *o);
  *out = NULL;
  if (o == NULL || (o->summary = cJSON_CreateObject()) == NULL) {
    free(o);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  *out = o;
  return DPD_OK;
}

static void table_clear(dpd_table *t) {
  if (t->columns != NULL) {
    for (size_t k = 0; k < t->ncols; k++) {
      free(t->columns[k]);
    }
  }
  free(t->columns);
  free(t->data);
  free(t->name);
  free(t->figure);
  free(t->comment);
}

void dpd_output_free(dpd_output *out) {
  if (out == NULL) {
    return;
  }
  for (size_t i = 0; i < out->ntables; i++) {
    table_clear(&out->tables[i]);
  }
  free(out->tables);
  for (size_t i = 0; i < out->nnotes; i++) {
    free(out->notes[i]);
  }
  free(out->notes);
  free(out->report);
  free(out->headline);
  free(out->figure);
  cJSON_Delete(out->summary);
  free(out);
}

int dpd_output_table_add(dpd_output *out, const char *name, const char *figure, const char *columns,
                         size_t rows, size_t ncols, const double *const *cols, dpd_err *err) {
  dpd_table *grown, *t;
  const char *c = columns;
  if (rows > 0 && ncols > SIZE_MAX / sizeof(double) / rows) {
    return DPD_FAIL(err, DPD_ENOMEM, "table '%s' too large", name);
  }
  grown = realloc(out->tables, (out->ntables + 1) * sizeof *grown);
  if (grown == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  out->tables = grown;
  t = &out->tables[out->ntables];
  memset(t, 0, sizeof *t);
  t->rows = rows;
  t->name = dpd__text_dup(name);
  t->figure = dpd__text_dup(figure != NULL ? figure : "");
  t->columns = calloc(ncols > 0 ? ncols : 1, sizeof *t->columns);
  t->data = malloc((ncols * rows > 0 ? ncols * rows : 1) * sizeof *t->data);
  if (t->name == NULL || t->figure == NULL || t->columns == NULL || t->data == NULL) {
    table_clear(t);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < ncols; k++) {
    size_t w;
    while (*c == ' ') {
      c++;
    }
    w = strcspn(c, " ");
    if (w == 0 || (t->columns[k] = malloc(w + 1)) == NULL) {
      t->ncols = k;
      table_clear(t);
      return w == 0 ? DPD_FAIL(err, DPD_EINVAL, "table '%s': %zu column names for %zu columns",
                               name, k, ncols)
                    : DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    memcpy(t->columns[k], c, w);
    t->columns[k][w] = '\0';
    c += w;
    if (rows > 0) {
      memcpy(t->data + k * rows, cols[k], rows * sizeof *t->data);
    }
  }
  t->ncols = ncols;
  out->ntables++;
  return DPD_OK;
}

const dpd_table *dpd_output_table_get(const dpd_output *out, const char *name) {
  for (size_t i = 0; i < out->ntables; i++) {
    if (strcmp(out->tables[i].name, name) == 0) {
      return &out->tables[i];
    }
  }
  return NULL;
}

const double *dpd_table_column_get(const dpd_table *t, const char *column) {
  for (size_t k = 0; k < t->ncols; k++) {
    if (strcmp(t->columns[k], column) == 0) {
      return t->data + k * t->rows;
    }
  }
  return NULL;
}

void dpd__json_na(cJSON *obj, const char *key, const char *reason) {
  cJSON *why = cJSON_GetObjectItemCaseSensitive(obj, "not_available");
  cJSON_AddNullToObject(obj, key);
  if (why == NULL) {
    why = cJSON_AddObjectToObject(obj, "not_available");
  }
  if (why != NULL) {
    cJSON_AddStringToObject(why, key, reason);
  }
}

void dpd__json_number(cJSON *obj, const char *key, double v) {
  if (isfinite(v)) {
    cJSON_AddNumberToObject(obj, key, v);
  } else if (isnan(v)) {
    dpd__json_na(obj, key, "undefined for these parameters");
  } else {
    cJSON_AddStringToObject(obj, key, v > 0 ? "inf" : "-inf");
  }
}

void dpd_output_na_set(dpd_output *out, const char *key, const char *reason) {
  dpd__json_na(out->summary, key, reason);
}

void dpd_output_number_set(dpd_output *out, const char *key, double v) {
  dpd__json_number(out->summary, key, v);
}

void dpd__keys_json(const dpd_keys *keys, cJSON *obj) {
  for (size_t i = 0; i < dpd_keys_count(keys); i++) {
    const dpd_key_desc *d = dpd_keys_desc_get(keys, i);
    char buf[512];
    double x;
    int kind;
    if (dpd_keys_value_get(keys, i) == NULL || d->kind == DPD_KEY_BYTES) {
      continue;
    }
    kind = dpd_keys_record_get(keys, i, buf, sizeof buf, &x);
    if (kind == 1) {
      cJSON_AddNumberToObject(obj, d->name, x);
    } else if (kind == 2) {
      cJSON_AddStringToObject(obj, d->name, "inf");
    } else {
      cJSON_AddStringToObject(obj, d->name, dpd_keys_value_get(keys, i));
    }
  }
}

int dpd_output_params_set(dpd_output *out, const dpd_keys *keys, dpd_err *err) {
  cJSON *params = cJSON_CreateObject();
  if (params == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  dpd__keys_json(keys, params);
  cJSON_AddItemToObject(out->summary, "params", params);
  return DPD_OK;
}
