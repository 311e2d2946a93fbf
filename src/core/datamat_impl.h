/* A data matrix of N rows x d columns read from a file, kept in its own precision (internal;
 * documented in docs/input.md, "Data matrices"). The real-data inputs (linreg features=file:,
 * targets=file:, rf input=file:) read their rows through it.
 * SPDX-License-Identifier: MIT
 *
 * A C-order little-endian .npy of float64 or float32 is memory-mapped read-only (no copy: float32
 * stays float32, converted to double row by row by dpd__datamat_row). A Fortran-order .npy is
 * transposed once into memory of its own precision; a text/TSV matrix (table_impl.h's
 * dpd__read_matrix rules) is read as doubles. The integer dtypes of npy_impl.h are converted to
 * float64 in memory. Every value is checked finite when opened (the first bad one is named by row
 * and column, 1-based). */
#ifndef DPD_DATAMAT_IMPL_H
#define DPD_DATAMAT_IMPL_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

typedef struct {
  size_t rows, cols; /* N x d; a 1-D .npy of length N, or a one-column text file, is N x 1 */
  int f32;           /* 1: the values are float (4 bytes), 0: double */
  const void *data;  /* rows x cols values, row-major, of the type f32 says */
  /* storage (dpd__datamat_close releases it) */
  void *map; /* the mmap'd file, or NULL */
  size_t map_len;
  void *owned; /* malloc'd values, or NULL */
  int mapped;  /* 1 when data points into the mapping (no copy) */
} dpd__datamat;

/* The bytes the file's matrix takes in memory once opened, from its header, before reading it:
 * .npy float64/float32: exactly rows x cols x 8 or 4 (its own precision; for a mapped C-order file
 * these are the file's pages, resident once read, with no copy on top), the integer dtypes:
 * rows x cols x 8 (converted to doubles); text: at most one double per 2 bytes of the file (the
 * bound of datafile_impl.h; open compares the matrix it read). For .npy this is the number
 * dpd__datamat_open compares with max_bytes.
 * DPD_EINVAL naming `key` for a file that cannot be opened or a bad header. */
DPD_HIDDEN_FN int dpd__datamat_bytes(const char *key, const char *path, double *bytes,
                                     dpd_err *err);

/* Opens `path` (value of key `key`, named in every error with the file): .npy by extension, else
 * text. Refuses, with DPD_EINVAL and a message naming the key, the value and the allowed range:
 * a file that cannot be opened, a bad or unsupported .npy header (big-endian, complex, object,
 * strings...), a truncated file, ragged text rows, a non-finite value ("row R, column C"), fewer
 * than min_rows rows, more than max_bytes of memory (0: no limit; the mapped pages of a C-order
 * float file count too, as they are resident once read). *m is zero-initialised first, so
 * dpd__datamat_close is safe after a failure. */
DPD_HIDDEN_FN int dpd__datamat_open(const char *key, const char *path, size_t min_rows,
                                    size_t max_bytes, dpd__datamat *m, dpd_err *err);

/* Row i (0-based, < rows) as doubles into out[0 .. cols) (inline: the kernels' inner loop). */
static inline void dpd__datamat_row(const dpd__datamat *m, size_t i, double *out) {
  const size_t d = m->cols;
  if (m->f32) {
    const float *src = (const float *)m->data + i * d;
    for (size_t k = 0; k < d; k++) {
      out[k] = (double)src[k];
    }
  } else {
    const double *src = (const double *)m->data + i * d;
    for (size_t k = 0; k < d; k++) {
      out[k] = src[k];
    }
  }
}

/* Element (i, j) as a double. */
static inline double dpd__datamat_at(const dpd__datamat *m, size_t i, size_t j) {
  return m->f32 ? (double)((const float *)m->data)[i * m->cols + j]
                : ((const double *)m->data)[i * m->cols + j];
}

DPD_HIDDEN_FN void dpd__datamat_close(dpd__datamat *m);

#endif
