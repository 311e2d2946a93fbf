/* The output of a run: summary, tables, figure (model.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/text_impl.h"
#include "dpdyn/model.h"
#include "core/output_impl.h"
#include "dpdyn/io.h"

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
    cJSON_AddNumberToObject(obj, key, v); /* +-inf: null + "nonfinite" when written */
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
      cJSON_AddNumberToObject(obj, d->name, INFINITY);
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

/* Walks `item`'s members: every non-finite number becomes null, its value recorded in `nf` under
 * its dotted path (array elements by index). */
static int nonfinite_walk(cJSON *item, char *path, size_t len, size_t cap, cJSON *nf) {
  cJSON *sub;
  size_t i = 0;
  cJSON_ArrayForEach(sub, item) {
    int w = sub->string != NULL
                ? snprintf(path + len, cap - len, "%s%s", len ? "." : "", sub->string)
                : snprintf(path + len, cap - len, "%s%zu", len ? "." : "", i);
    i++;
    if (w < 0 || (size_t)w >= cap - len) {
      return -1;
    }
    if (cJSON_IsNumber(sub) && !isfinite(sub->valuedouble)) {
      const char *token = isnan(sub->valuedouble) ? "nan" : sub->valuedouble > 0 ? "inf" : "-inf";
      sub->type = cJSON_NULL;
      sub->valuedouble = 0.0;
      sub->valueint = 0;
      if (cJSON_AddStringToObject(nf, path, token) == NULL) {
        return -1;
      }
    } else if ((cJSON_IsObject(sub) || cJSON_IsArray(sub)) &&
               !(len == 0 && sub->string != NULL && strcmp(sub->string, "nonfinite") == 0) &&
               nonfinite_walk(sub, path, len + (size_t)w, cap, nf) < 0) {
      return -1;
    }
    path[len] = '\0';
  }
  return 0;
}

int dpd__json_nonfinite_encode(cJSON *root) {
  char path[1024] = "";
  cJSON *nf = cJSON_GetObjectItemCaseSensitive(root, "nonfinite");
  int fresh = nf == NULL;
  if (fresh && (nf = cJSON_CreateObject()) == NULL) {
    return -1;
  }
  if (nonfinite_walk(root, path, 0, sizeof path, nf) < 0) {
    if (fresh) {
      cJSON_Delete(nf);
    }
    return -1;
  }
  if (fresh && cJSON_GetArraySize(nf) > 0) {
    cJSON_AddItemToObject(root, "nonfinite", nf);
  } else if (fresh) {
    cJSON_Delete(nf);
  }
  return 0;
}

/* The item at a dotted path (object keys or array indices; a key holding a dot is matched whole
 * first). */
static cJSON *path_item(cJSON *obj, const char *path) {
  cJSON *hit = cJSON_GetObjectItemCaseSensitive(obj, path);
  const char *dot = path;
  if (hit != NULL) {
    return hit;
  }
  while ((dot = strchr(dot, '.')) != NULL) {
    char head[256];
    size_t n = (size_t)(dot - path);
    cJSON *sub;
    if (n < sizeof head) {
      memcpy(head, path, n);
      head[n] = '\0';
      if (cJSON_IsArray(obj)) {
        char *end;
        long k = strtol(head, &end, 10);
        sub = *end == '\0' && k >= 0 ? cJSON_GetArrayItem(obj, (int)k) : NULL;
      } else {
        sub = cJSON_GetObjectItemCaseSensitive(obj, head);
      }
      if (sub != NULL && (hit = path_item(sub, dot + 1)) != NULL) {
        return hit;
      }
    }
    dot++;
  }
  if (cJSON_IsArray(obj)) {
    char *end;
    long k = strtol(path, &end, 10);
    return *end == '\0' && k >= 0 ? cJSON_GetArrayItem(obj, (int)k) : NULL;
  }
  return NULL;
}

void dpd__json_nonfinite_decode(cJSON *root) {
  cJSON *nf = cJSON_DetachItemFromObjectCaseSensitive(root, "nonfinite"), *e;
  if (nf == NULL) {
    return;
  }
  cJSON_ArrayForEach(e, nf) {
    cJSON *item = e->string != NULL && cJSON_IsString(e) ? path_item(root, e->string) : NULL;
    if (item != NULL && cJSON_IsNull(item)) {
      const char *t = e->valuestring;
      item->type = cJSON_Number;
      item->valuedouble = strcmp(t, "inf") == 0    ? INFINITY
                          : strcmp(t, "-inf") == 0 ? -INFINITY
                                                   : NAN;
      item->valueint = 0;
    }
  }
  cJSON_Delete(nf);
}

char *dpd__json_print(const cJSON *obj) {
  cJSON *copy = cJSON_Duplicate(obj, 1);
  char *text = NULL;
  if (copy != NULL && dpd__json_nonfinite_encode(copy) == 0) {
    text = cJSON_Print(copy);
  }
  cJSON_Delete(copy);
  return text;
}

char *dpd_output_summary_print(const dpd_output *out) {
  return dpd__json_print(out->summary);
}

/* ---- the public face of the JSON helpers (dpdyn/io.h) ---- */

void dpd_io_json_number_set(cJSON *obj, const char *key, double v) {
  dpd__json_number(obj, key, v);
}

void dpd_io_json_na_set(cJSON *obj, const char *key, const char *reason) {
  dpd__json_na(obj, key, reason);
}

void dpd_io_json_keys_set(const dpd_keys *keys, cJSON *obj) {
  dpd__keys_json(keys, obj);
}

char *dpd_io_json_print(const cJSON *obj) {
  return dpd__json_print(obj);
}

void dpd_io_json_nonfinite_decode(cJSON *root) {
  dpd__json_nonfinite_decode(root);
}
