/* Data matrices from files: datamat_impl.h.
 * SPDX-License-Identifier: MIT
 *
 * Nothing here parses: the .npy header is npy.c's (dpd__npy_header: magic, version, dtype, shape,
 * exact file size), the integer dtypes are converted by dpd__read_npy, text is dpd__read_matrix.
 * What this file adds is the storage: a C-order float file is mapped read-only and used in place
 * (when the data offset is aligned to the element size, as numpy writes it: a multiple of 64,
 * or 16 in old files), a Fortran-order one is transposed into memory of its own precision, and
 * every value is checked finite once. The mapped path reads the values in the host's byte order,
 * so it is taken on little-endian hosts only; elsewhere the file is converted by dpd__read_npy. */
#define _POSIX_C_SOURCE 200809L
#include "core/datamat_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/datafile_impl.h"
#include "core/error_impl.h"
#include "core/file_impl.h"
#include "core/npy_impl.h"
#include "core/table_impl.h"

static int host_little_endian(void) {
  const uint16_t probe = 1;
  unsigned char b;
  memcpy(&b, &probe, 1);
  return b == 1;
}

/* Whether the file's values can be used as floats/doubles of the host as they are. */
static int npy_native_float(const dpd__npy_info *info) {
  return info->kind == 'f' && (info->itemsize == 8 || info->itemsize == 4) && host_little_endian();
}

/* The bytes the opened matrix takes: its own precision for native floats, else doubles. */
static double npy_matrix_bytes(const dpd__npy_info *info) {
  const double elem = npy_native_float(info) ? (double)info->itemsize : 8.0;
  return elem * (double)info->rows * (double)info->cols;
}

int dpd__datamat_bytes(const char *key, const char *path, double *bytes, dpd_err *err) {
  if (dpd__datafile_is_npy(path)) {
    dpd__npy_info info;
    int status = dpd__npy_header(key, path, &info, err);
    if (status == DPD_OK) {
      *bytes = npy_matrix_bytes(&info);
    }
    return status;
  }
  return dpd__datafile_bytes(key, path, bytes, err); /* text: the same bound as every reader */
}

void dpd__datamat_close(dpd__datamat *m) {
  if (m == NULL) {
    return;
  }
  if (m->map != NULL) {
    munmap(m->map, m->map_len);
  }
  free(m->owned);
  memset(m, 0, sizeof *m);
}

static int too_few_rows(const char *key, const char *path, size_t rows, size_t min_rows,
                        dpd_err *err) {
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for '%s': '%s' has N = %zu rows (allowed: at least %zu)", key,
                  path, rows, min_rows);
}

/* Maps the whole file read-only; *map_len is its size, which must still be what the header
 * checked (the file may have changed since). */
static int map_file(const char *key, const char *path, size_t expect_len, void **map,
                    size_t *map_len, dpd_err *err) {
  FILE *f;
  unsigned long long size = 0;
  void *p;
  int status = dpd__file_open_regular(key, 1, path, DPD_MAX_DATA_BYTES, &f, &size, err);
  if (status < 0) {
    return status;
  }
  if (size != (unsigned long long)expect_len) {
    fclose(f);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' changed while read (%llu bytes, the header "
                    "said %zu) (allowed: a file that is not being written)",
                    key, path, size, expect_len);
  }
  p = mmap(NULL, expect_len, PROT_READ, MAP_PRIVATE, fileno(f), 0);
  fclose(f); /* the mapping keeps its own reference to the file */
  if (p == MAP_FAILED) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': cannot map '%s' into memory", key,
                    path);
  }
  *map = p;
  *map_len = expect_len;
  return DPD_OK;
}

/* A float64/float32 .npy on a little-endian host: the data of a C-order file in place (or
 * copied when its offset is not aligned to the element size), a Fortran-order one transposed. */
static int open_npy_float(const char *key, const char *path, const dpd__npy_info *info,
                          dpd__datamat *m, dpd_err *err) {
  const size_t n = info->rows * info->cols, size = info->itemsize; /* checked by the header */
  const size_t len = info->data_offset + n * size;
  const unsigned char *src;
  int status = map_file(key, path, len, &m->map, &m->map_len, err);
  if (status < 0) {
    return status;
  }
  src = (const unsigned char *)m->map + info->data_offset;
  if (!info->fortran_order && (uintptr_t)src % size == 0) {
    m->data = src;
    m->mapped = 1;
    return DPD_OK;
  }
  m->owned = malloc(n * size);
  if (m->owned == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s' (%zu values)", path, n);
  }
  if (!info->fortran_order) {
    memcpy(m->owned, src, n * size);
  } else {
    /* element (i, j) is at j * rows + i in the file; walk the file in order */
    unsigned char *dst = m->owned;
    for (size_t j = 0; j < info->cols; j++) {
      for (size_t i = 0; i < info->rows; i++) {
        memcpy(dst + (i * info->cols + j) * size, src + (j * info->rows + i) * size, size);
      }
    }
  }
  munmap(m->map, m->map_len);
  m->map = NULL;
  m->map_len = 0;
  m->data = m->owned;
  return DPD_OK;
}

static int open_npy(const char *key, const char *path, size_t min_rows, size_t max_bytes,
                    dpd__datamat *m, dpd_err *err) {
  dpd__npy_info info;
  double need;
  int status = dpd__npy_header(key, path, &info, err);
  if (status < 0) {
    return status;
  }
  if (info.rows < min_rows) {
    return too_few_rows(key, path, info.rows, min_rows, err);
  }
  need = npy_matrix_bytes(&info);
  if (max_bytes != 0 && need > (double)max_bytes) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' holds %zu x %zu values, which need %.0f bytes, "
                    "more than max_memory = %zu bytes (allowed: raise max_memory)",
                    key, path, info.rows, info.cols, need, max_bytes);
  }
  m->rows = info.rows;
  m->cols = info.cols;
  if (npy_native_float(&info)) {
    m->f32 = info.itemsize == 4;
    return open_npy_float(key, path, &info, m, err);
  }
  /* integers and bool (or a big-endian host): doubles, converted by the .npy reader */
  double *data = NULL;
  status = dpd__read_npy(key, path, max_bytes, &data, &info, err);
  if (status < 0) {
    return status;
  }
  m->owned = data;
  m->data = data;
  m->rows = info.rows;
  m->cols = info.cols;
  return DPD_OK;
}

static int open_text(const char *key, const char *path, size_t min_rows, size_t max_bytes,
                     dpd__datamat *m, dpd_err *err) {
  double *data = NULL, *exact;
  size_t rows = 0, cols = 0;
  int status = dpd__read_matrix(key, path, 1, max_bytes, &data, &rows, &cols, err);
  if (status < 0) {
    return status;
  }
  exact = realloc(data, rows * cols * sizeof *data); /* the reader over-allocates as it grows */
  if (exact != NULL) {
    data = exact;
  }
  m->owned = data;
  m->data = data;
  m->rows = rows;
  m->cols = cols;
  if (rows < min_rows) {
    return too_few_rows(key, path, rows, min_rows, err);
  }
  return DPD_OK;
}

/* The first non-finite value, by row then column, named 1-based. */
static int check_finite(const char *key, const char *path, const dpd__datamat *m, dpd_err *err) {
  const size_t n = m->rows * m->cols;
  size_t bad = n;
  double v = 0.0;
  if (m->f32) {
    const float *x = m->data;
    for (size_t e = 0; e < n; e++) {
      if (!isfinite(x[e])) {
        bad = e;
        v = (double)x[e];
        break;
      }
    }
  } else {
    const double *x = m->data;
    for (size_t e = 0; e < n; e++) {
      if (!isfinite(x[e])) {
        bad = e;
        v = x[e];
        break;
      }
    }
  }
  if (bad == n) {
    return DPD_OK;
  }
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for '%s': '%s' row %zu, column %zu is %s (allowed: finite "
                  "numbers)",
                  key, path, bad / m->cols + 1, bad % m->cols + 1,
                  isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
}

int dpd__datamat_open(const char *key, const char *path, size_t min_rows, size_t max_bytes,
                      dpd__datamat *m, dpd_err *err) {
  int status;
  memset(m, 0, sizeof *m);
  status = dpd__datafile_is_npy(path) ? open_npy(key, path, min_rows, max_bytes, m, err)
                                      : open_text(key, path, min_rows, max_bytes, m, err);
  if (status == DPD_OK) {
    status = check_finite(key, path, m, err);
  }
  if (status < 0) {
    dpd__datamat_close(m);
  }
  return status;
}
