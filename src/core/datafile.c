/* Numeric data files of either kind (datafile_impl.h).
 * SPDX-License-Identifier: MIT */
#include "core/datafile_impl.h"

#include <stdio.h>
#include <string.h>

#include "core/file_impl.h"
#include "core/npy_impl.h"
#include "core/table_impl.h"

int dpd__datafile_is_npy(const char *path) {
  const size_t len = strlen(path);
  return len >= 4 && strcmp(path + len - 4, ".npy") == 0;
}

int dpd__datafile_bytes(const char *key, const char *path, double *bytes, dpd_err *err) {
  if (dpd__datafile_is_npy(path)) {
    dpd__npy_info info;
    int status = dpd__npy_header(key, path, &info, err);
    if (status == DPD_OK) {
      *bytes = 8.0 * (double)info.rows * (double)info.cols;
    }
    return status;
  }
  FILE *f;
  unsigned long long size = 0;
  int status = dpd__file_open_regular(key, 1, path, DPD_MAX_DATA_BYTES, &f, &size, err);
  if (status < 0) {
    return status;
  }
  fclose(f);
  *bytes = 4.0 * (double)size; /* at most one 8-byte number per 2 bytes of text */
  return DPD_OK;
}

int dpd__datafile_read(const char *key, const char *path, size_t max_bytes, double **data,
                       size_t *rows, size_t *cols, size_t *ndim, dpd_err *err) {
  if (dpd__datafile_is_npy(path)) {
    dpd__npy_info info;
    int status = dpd__read_npy(key, path, max_bytes, data, &info, err);
    if (status == DPD_OK) {
      *rows = info.rows;
      *cols = info.cols;
      if (ndim != NULL) {
        *ndim = info.ndim;
      }
    }
    return status;
  }
  if (ndim != NULL) {
    *ndim = 2;
  }
  return dpd__read_matrix(key, path, 1, max_bytes, data, rows, cols, err);
}
