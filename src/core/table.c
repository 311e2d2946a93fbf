/* Bounded reader of the data files a user hands to dpdyn (spectrum, theta_star, schedule,
 * account --sequence): table_impl.h.
 * SPDX-License-Identifier: MIT
 *
 * A data file holds at most DPD_MAX_DATA_BYTES bytes; a data line (what precedes '#') at most
 * DPD_MAX_DATA_LINE bytes; comments may be of any length (they are skipped without being
 * stored); rows are counted against the run's memory limit. A NUL byte anywhere is an error (a
 * binary file, /dev/zero): nothing waits on endless input. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error_impl.h"
#include "core/file_impl.h"
#include "core/table_impl.h"
#include "core/text_impl.h"

/* ---- data lines ---- */

int dpd__lines_open(dpd__lines *r, const char *key, const char *path, dpd_err *err) {
  memset(r, 0, sizeof *r);
  r->key = key;
  r->path = path;
  int status = dpd__file_open_regular(key, 1, path, DPD_MAX_DATA_BYTES, &r->f, NULL, err);
  if (status < 0) {
    return status;
  }
  r->cap = 256;
  r->line = malloc(r->cap);
  if (r->line == NULL) {
    fclose(r->f);
    r->f = NULL;
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

void dpd__lines_close(dpd__lines *r) {
  if (r->f != NULL) {
    fclose(r->f);
  }
  free(r->line);
  memset(r, 0, sizeof *r);
}

/* Next line with data: the text before '#', NUL-terminated, at least one non-space character.
 * Returns 1 (a line in *line, its number in r->lineno), 0 at the end, < 0 on error. */
int dpd__lines_next(dpd__lines *r, char **line, dpd_err *err) {
  const size_t max_line = r->max_line != 0 ? r->max_line : DPD_MAX_DATA_LINE;
  size_t len = 0;
  int in_comment = 0, blank = 1;
  for (;;) {
    int c = getc(r->f);
    if (c == EOF) {
      if (ferror(r->f)) {
        return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': error reading '%s': %s", r->key,
                        r->path, strerror(errno));
      }
      if (len > 0 && !blank) {
        r->lineno++;
        r->line[len] = '\0';
        *line = r->line;
        r->at_eof = 1;
        return 1;
      }
      return 0;
    }
    if (++r->bytes > DPD_MAX_DATA_BYTES) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': file '%s' is larger than %llu bytes (allowed: "
                      "data files up to %llu bytes)",
                      r->key, r->path, (unsigned long long)DPD_MAX_DATA_BYTES,
                      (unsigned long long)DPD_MAX_DATA_BYTES);
    }
    if (c == '\0') {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': file '%s' has a NUL byte on line %zu (allowed: "
                      "a text file of numbers)",
                      r->key, r->path, r->lineno + 1);
    }
    if (c == '\n') {
      r->lineno++;
      if (!blank) {
        r->line[len] = '\0';
        *line = r->line;
        return 1;
      }
      len = 0;
      in_comment = 0;
      continue;
    }
    if (in_comment) {
      continue;
    }
    if (c == '#') {
      in_comment = 1;
      continue;
    }
    if (len + 1 >= max_line) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': line %zu of '%s' is longer than %zu bytes "
                      "(allowed: data lines up to %zu bytes; comments may be longer)",
                      r->key, r->lineno + 1, r->path, max_line - 1, max_line - 1);
    }
    if (len + 1 >= r->cap) {
      size_t cap = 2 * r->cap;
      char *grown = realloc(r->line, cap);
      if (grown == NULL) {
        return DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", r->path);
      }
      r->line = grown;
      r->cap = cap;
    }
    if (!isspace(c) && c != ',') {
      blank = 0;
    }
    r->line[len++] = (char)c;
  }
}

int dpd__read_table(const char *key, const char *path, size_t ncols_min, size_t ncols_max,
                    size_t max_bytes, double **cols, size_t *nrows, size_t *ncols_found,
                    dpd_err *err) {
  dpd__lines rd;
  char *line;
  size_t cap = 0, rows = 0, ncols = 0;
  int status, got;
  if (max_bytes == 0) {
    max_bytes = SIZE_MAX;
  }
  for (size_t c = 0; c < ncols_max; c++) {
    cols[c] = NULL;
  }
  if ((status = dpd__lines_open(&rd, key, path, err)) < 0) {
    return status;
  }
  while ((got = dpd__lines_next(&rd, &line, err)) > 0) {
    char *s = line;
    double vals[DPD_TABLE_MAX_COLS];
    size_t k = 0;
    for (;;) {
      char *end;
      double v;
      while (isspace((unsigned char)*s) || *s == ',') {
        s++;
      }
      if (*s == '\0') {
        break;
      }
      v = strtod(s, &end);
      if (end == s || !dpd__decimal_span(s, end) || !isfinite(v) || k >= ncols_max ||
          k >= DPD_TABLE_MAX_COLS ||
          !(*end == '\0' || isspace((unsigned char)*end) || *end == ',')) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': file '%s' line %zu is malformed (allowed: "
                          "%zu to %zu finite decimal numbers per line)",
                          key, path, rd.lineno, ncols_min, ncols_max);
        goto done;
      }
      vals[k++] = v;
      s = end;
    }
    if (ncols == 0) {
      ncols = k;
    }
    if (k != ncols || k < ncols_min) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': file '%s' line %zu has %zu columns (allowed: "
                        "%zu to %zu, the same on every line)",
                        key, path, rd.lineno, k, ncols_min, ncols_max);
      goto done;
    }
    if (rows == cap) {
      size_t grown_cap = cap ? 2 * cap : 256;
      if (grown_cap > max_bytes / sizeof(double) / ncols_max) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': file '%s' has more than %zu rows, which "
                          "needs more than max_memory = %zu bytes (allowed: raise max_memory)",
                          key, path, rows, max_bytes);
        goto done;
      }
      cap = grown_cap;
      for (size_t c = 0; c < ncols_max; c++) {
        double *grown = realloc(cols[c], cap * sizeof *grown);
        if (grown == NULL) {
          status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", path);
          goto done;
        }
        cols[c] = grown;
      }
    }
    for (size_t c = 0; c < k; c++) {
      cols[c][rows] = vals[c];
    }
    rows++;
  }
  status = got;
  if (status == DPD_OK && rows == 0) {
    status =
        DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': file '%s' has no data rows", key, path);
  }
done:
  dpd__lines_close(&rd);
  if (status < 0) {
    for (size_t c = 0; c < ncols_max; c++) {
      free(cols[c]);
      cols[c] = NULL;
    }
    return status;
  }
  *nrows = rows;
  *ncols_found = ncols;
  return DPD_OK;
}

/* ---- matrices of any width ---- */

/* Whether the token [s, end) reads as a non-finite number (nan, inf, or a decimal that
 * overflows): reported as such rather than as a malformed token. */
static int nonfinite_token(const char *s, const char *end, double v) {
  if (end > s && dpd__decimal_span(s, end)) {
    return !isfinite(v);
  }
  if (*s == '+' || *s == '-') {
    s++;
  }
  return strncasecmp(s, "nan", 3) == 0 || strncasecmp(s, "inf", 3) == 0;
}

int dpd__read_matrix(const char *key, const char *path, size_t ncols_min, size_t max_bytes,
                     double **data, size_t *nrows, size_t *ncols, dpd_err *err) {
  dpd__lines rd;
  char *line;
  double *rows_data = NULL, *row = NULL;
  size_t cap = 0, used = 0, rows = 0, width = 0, row_cap = 0;
  int status, got;
  *data = NULL;
  if (max_bytes == 0) {
    max_bytes = SIZE_MAX;
  }
  if ((status = dpd__lines_open(&rd, key, path, err)) < 0) {
    return status;
  }
  rd.max_line = DPD_MAX_MATRIX_LINE;
  while ((got = dpd__lines_next(&rd, &line, err)) > 0) {
    char *s = line;
    size_t k = 0;
    for (;;) {
      char *end;
      double v;
      while (isspace((unsigned char)*s) || *s == ',') {
        s++;
      }
      if (*s == '\0') {
        break;
      }
      errno = 0;
      v = strtod(s, &end);
      if (nonfinite_token(s, end, v)) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': file '%s' line %zu column %zu is not a finite "
                          "number (allowed: finite decimal numbers)",
                          key, path, rd.lineno, k + 1);
        goto done;
      }
      if (end == s || !dpd__decimal_span(s, end) ||
          !(*end == '\0' || isspace((unsigned char)*end) || *end == ',')) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': file '%s' line %zu column %zu is malformed "
                          "(allowed: decimal numbers separated by blanks or commas)",
                          key, path, rd.lineno, k + 1);
        goto done;
      }
      if (k == row_cap) { /* a line holds fewer than DPD_MAX_DATA_LINE / 2 numbers */
        size_t grown_cap = row_cap ? 2 * row_cap : 64;
        double *grown = realloc(row, grown_cap * sizeof *grown);
        if (grown == NULL) {
          status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", path);
          goto done;
        }
        row = grown;
        row_cap = grown_cap;
      }
      row[k++] = v;
      s = end;
    }
    if (width == 0) {
      width = k;
    }
    if (k != width || k < ncols_min) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': file '%s' line %zu has %zu columns (allowed: "
                        "at least %zu, the same on every line; line 1 of the data has %zu)",
                        key, path, rd.lineno, k, ncols_min, width);
      goto done;
    }
    if (used + width > cap) {
      size_t grown_cap = cap ? 2 * cap : 256 * width;
      if (grown_cap > max_bytes / sizeof(double)) {
        grown_cap = max_bytes / sizeof(double); /* the last growth up to the limit */
      }
      if (grown_cap < used + width) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': file '%s' has more than %zu rows of %zu "
                          "columns, which needs more than max_memory = %zu bytes (allowed: "
                          "raise max_memory)",
                          key, path, rows, width, max_bytes);
        goto done;
      }
      double *grown = realloc(rows_data, grown_cap * sizeof *grown);
      if (grown == NULL) {
        status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", path);
        goto done;
      }
      rows_data = grown;
      cap = grown_cap;
    }
    memcpy(rows_data + used, row, width * sizeof *row);
    used += width;
    rows++;
  }
  status = got;
  if (status == DPD_OK && rows == 0) {
    status =
        DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': file '%s' has no data rows", key, path);
  }
done:
  dpd__lines_close(&rd);
  free(row);
  if (status < 0) {
    free(rows_data);
    return status;
  }
  *data = rows_data;
  *nrows = rows;
  *ncols = width;
  return DPD_OK;
}

/* ---- INI files ---- */
