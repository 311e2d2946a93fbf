/* Bounded reader of NumPy .npy files (internal; documented in docs/input.md).
 * SPDX-License-Identifier: MIT
 *
 * Format: numpy/lib/format.py (NEP 1, "A simple file format for NumPy arrays"): the magic
 * "\x93NUMPY", a major and a minor version byte, the header length (2 bytes little-endian in
 * version 1.0, 4 bytes in 2.0 and 3.0), and the header: a Python dict literal with the keys
 * 'descr', 'fortran_order' and 'shape' (ASCII in 1.0 and 2.0, UTF-8 in 3.0), then the raw data. */
#ifndef DPD_NPY_IMPL_H
#define DPD_NPY_IMPL_H

#include <stddef.h>

#include "dpdyn/status.h"

#define DPD_NPY_MAX_HEADER 65536 /* bytes of the header dict (numpy writes < 4096 for 2-D) */

/* What the header says (dpd__npy_header). */
typedef struct {
  size_t ndim;        /* 1 or 2 */
  size_t rows, cols;  /* shape (rows,) -> cols = 1; (rows, cols) */
  size_t itemsize;    /* bytes per element */
  char kind;          /* 'f' float, 'i' signed, 'u' unsigned, 'b' bool */
  int fortran_order;  /* column-major data */
  size_t data_offset; /* bytes before the data */
} dpd__npy_info;

/* Reads and checks the header of `path` (naming `key` in errors): magic, version 1.0 / 2.0 /
 * 3.0, a little-endian (or one-byte) dtype among f8 f4 i8 i4 i2 i1 u8 u4 u2 u1 b1, a 1-D or 2-D
 * shape with at least one element, and the file size: exactly data_offset + rows cols itemsize
 * bytes (a truncated file or trailing bytes are errors), at most DPD_MAX_DATA_BYTES. Sizes are
 * overflow-checked. Reads only the header. */
__attribute__((visibility("hidden"))) int dpd__npy_header(const char *key, const char *path,
                                                          dpd__npy_info *info, dpd_err *err);

/* Reads a 1-D or 2-D array as doubles, row-major (*data returned-owned, free()): rows x cols
 * (a 1-D array of length n is n x 1). The rows x cols doubles may take at most `max_bytes`
 * (0: no limit); this is checked against the header before anything is allocated. Values are
 * converted exactly (f4, the integers up to 2^53); f8 and f4 NaN and inf are returned as they
 * are (the caller decides). Errors name `key` and the file. */
__attribute__((visibility("hidden"))) int dpd__read_npy(const char *key, const char *path,
                                                        size_t max_bytes, double **data,
                                                        dpd__npy_info *info, dpd_err *err);

#endif
