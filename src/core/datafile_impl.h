/* Numeric data files of either kind: NumPy .npy (npy_impl.h) or text (table_impl.h), chosen by
 * the extension (internal; documented in docs/input.md). Files are opened by file_impl.h.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_DATAFILE_IMPL_H
#define DPD_DATAFILE_IMPL_H

#include <stddef.h>
#include <stdio.h>

#include "dpdyn/status.h"

/* 1 when `path` ends in ".npy" (read as NumPy), 0 otherwise (read as text). */
__attribute__((visibility("hidden"))) int dpd__datafile_is_npy(const char *path);

/* The bytes the file's matrix takes once read, before reading it: exact for .npy (its header's
 * shape), for text at most one 8-byte number per 2 bytes of the file (a digit and a separator).
 * DPD_EINVAL naming `key` when the file cannot be opened or its header is bad. */
__attribute__((visibility("hidden"))) int dpd__datafile_bytes(const char *key, const char *path,
                                                              double *bytes, dpd_err *err);

/* Reads the file's matrix (dpd__read_npy or dpd__read_matrix, at most max_bytes): rows x cols
 * doubles, row-major, *data returned-owned; *ndim (may be NULL) receives 1 for a 1-D .npy array
 * and 2 otherwise. Errors name `key` and the file. */
__attribute__((visibility("hidden"))) int dpd__datafile_read(const char *key, const char *path,
                                                             size_t max_bytes, double **data,
                                                             size_t *rows, size_t *cols,
                                                             size_t *ndim, dpd_err *err);

#endif
