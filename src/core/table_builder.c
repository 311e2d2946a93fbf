/* Tables built column by column (model.h: dpd_table_builder).
 * SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/model.h"

struct dpd_table_builder {
  size_t rows, ncols, cap;
  char **names;
  double **cols; /* each column its own allocation: a pointer handed out stays valid */
};

int dpd_table_builder_create(size_t rows, dpd_table_builder **b, dpd_err *err) {
  *b = calloc(1, sizeof **b);
  if (*b == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  (*b)->rows = rows;
  return DPD_OK;
}

void dpd_table_builder_free(dpd_table_builder *b) {
  if (b == NULL) {
    return;
  }
  for (size_t k = 0; k < b->ncols; k++) {
    free(b->names[k]);
    free(b->cols[k]);
  }
  free(b->names);
  free(b->cols);
  free(b);
}

size_t dpd_table_builder_rows(const dpd_table_builder *b) {
  return b->rows;
}

double *dpd_table_builder_find(dpd_table_builder *b, const char *name) {
  for (size_t k = 0; k < b->ncols; k++) {
    if (strcmp(b->names[k], name) == 0) {
      return b->cols[k];
    }
  }
  return NULL;
}

int dpd_table_builder_add(dpd_table_builder *b, const char *name, const double *col,
                          dpd_err *err) {
  size_t len = strlen(name);
  if (len == 0 || strpbrk(name, " \t\n\r") != NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "table column name '%s': empty or with a blank", name);
  }
  if (dpd_table_builder_find(b, name) != NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "table column '%s' added twice", name);
  }
  if (b->ncols == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 16;
    char **names = realloc(b->names, cap * sizeof *names);
    double **cols = names != NULL ? realloc(b->cols, cap * sizeof *cols) : NULL;
    if (names != NULL) {
      b->names = names;
    }
    if (cols == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    b->cols = cols;
    b->cap = cap;
  }
  char *nm = malloc(len + 1);
  double *data = calloc(b->rows > 0 ? b->rows : 1, sizeof *data);
  if (nm == NULL || data == NULL) {
    free(nm);
    free(data);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for column '%s' (%zu rows)", name, b->rows);
  }
  memcpy(nm, name, len + 1);
  if (col != NULL && b->rows > 0) {
    memcpy(data, col, b->rows * sizeof *data);
  }
  b->names[b->ncols] = nm;
  b->cols[b->ncols] = data;
  b->ncols++;
  return DPD_OK;
}

double *dpd_table_builder_column(dpd_table_builder *b, const char *name, dpd_err *err) {
  return dpd_table_builder_add(b, name, NULL, err) < 0 ? NULL : b->cols[b->ncols - 1];
}

int dpd_output_table_add_built(dpd_output *out, const char *name, const char *figure,
                               dpd_table_builder *b, dpd_err *err) {
  size_t len = 1;
  char *names;
  int status;
  for (size_t k = 0; k < b->ncols; k++) {
    len += strlen(b->names[k]) + 1;
  }
  if ((names = malloc(len)) == NULL) {
    dpd_table_builder_free(b);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  names[0] = '\0';
  for (size_t k = 0, at = 0; k < b->ncols; k++) {
    size_t w = strlen(b->names[k]);
    if (k > 0) {
      names[at++] = ' ';
    }
    memcpy(names + at, b->names[k], w + 1);
    at += w;
  }
  status = dpd_output_table_add(out, name, figure, names, b->rows, b->ncols,
                                (const double *const *)b->cols, err);
  free(names);
  dpd_table_builder_free(b);
  return status;
}
