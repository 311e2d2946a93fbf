/* Bounded reader of numeric data files (internal; documented in docs/input.md).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_TABLE_IMPL_H
#define DPD_TABLE_IMPL_H

#include <stddef.h>
#include <stdio.h>

#include "dpdyn/status.h"

#define DPD_MAX_DATA_BYTES ((unsigned long long)1 << 32) /* a data file */
#define DPD_MAX_DATA_LINE 65536                          /* a data line, comment excluded */
#define DPD_TABLE_MAX_COLS 16
#define DPD_MAX_MATRIX_LINE ((size_t)1 << 24) /* a data line of dpd__read_matrix (16 MiB) */

/* Data-line iterator over a text file: '#' starts a comment (of any length) that runs to the
 * end of the line; blank lines are skipped; NUL bytes, over-long data lines and files larger
 * than DPD_MAX_DATA_BYTES are errors naming `key`. */
typedef struct {
  FILE *f;
  const char *key, *path;
  char *line;
  size_t cap;
  size_t lineno;            /* number of the line last returned (1-based) */
  unsigned long long bytes; /* bytes read so far */
  int at_eof;
  size_t max_line; /* longest data line + 1 (0: DPD_MAX_DATA_LINE); set after open */
} dpd__lines;

__attribute__((visibility("hidden"))) int dpd__lines_open(dpd__lines *r, const char *key,
                                                          const char *path, dpd_err *err);
/* 1: a line in *line; 0: end; < 0: error */
__attribute__((visibility("hidden"))) int dpd__lines_next(dpd__lines *r, char **line, dpd_err *err);
__attribute__((visibility("hidden"))) void dpd__lines_close(dpd__lines *r);

/* Reads a whitespace- (or comma-) separated numeric table with ncols_min..ncols_max columns
 * per row (the same on every row), '#' comments allowed; decimal numbers only. The rows may
 * take at most `max_bytes` of memory (0: no limit). Returns column-major arrays owned by the
 * caller (free each of cols[0..*ncols_found)). Errors name `key` and the file. */
__attribute__((visibility("hidden"))) int
dpd__read_table(const char *key, const char *path, size_t ncols_min, size_t ncols_max,
                size_t max_bytes, double **cols, size_t *nrows, size_t *ncols_found, dpd_err *err);

/* Reads a numeric matrix of any width: whitespace- (or comma-) separated decimal numbers, the
 * same number of columns on every row (at least ncols_min), '#' comments allowed (the data-line
 * rules of dpd__lines, with data lines up to DPD_MAX_MATRIX_LINE bytes). Returns the rows row-major
 * in *data (returned-owned, free()) with *nrows x *ncols. The matrix may take at most `max_bytes`
 * of memory (0: no limit), checked before it grows. Errors name `key` and the file: a non-finite
 * value (nan, inf, overflow) with its line and column, a malformed token, ragged rows, an empty
 * file. */
__attribute__((visibility("hidden"))) int dpd__read_matrix(const char *key, const char *path,
                                                           size_t ncols_min, size_t max_bytes,
                                                           double **data, size_t *nrows,
                                                           size_t *ncols, dpd_err *err);

#endif
