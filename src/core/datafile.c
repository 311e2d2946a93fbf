/* Numeric data files of either kind (datafile_impl.h).
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "core/datafile_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error_impl.h"
#include "core/npy_impl.h"
#include "core/table_impl.h"

static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO or pipe";
  }
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

int dpd__file_open_regular(const char *what, int key_is_name, const char *path,
                           unsigned long long max_size, FILE **f, unsigned long long *size,
                           dpd_err *err) {
  char head[96];
  const char *noun = key_is_name ? "" : what; /* "INI file " before the path */
  struct stat st;
  int fd, flags;
  *f = NULL;
  if (key_is_name) {
    snprintf(head, sizeof head, "invalid value for '%s': ", what);
  } else {
    head[0] = '\0';
  }
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
  fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "%scannot open %s%s'%s': %s (allowed: a readable regular file)", head, noun,
                    key_is_name ? "" : " ", path, strerror(errno));
  }
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return DPD_FAIL(err, DPD_EINVAL, "%scannot open %s%s'%s': %s", head, noun,
                    key_is_name ? "" : " ", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return DPD_FAIL(err, DPD_EINVAL,
                    "%s%s%s'%s' is %s, not read (allowed: a regular file; FIFOs, pipes and "
                    "devices are refused)",
                    head, noun, key_is_name ? "" : " ", path, file_kind(st.st_mode));
  }
  if (max_size != 0 && (unsigned long long)st.st_size > max_size) {
    close(fd);
    return DPD_FAIL(err, DPD_EINVAL,
                    "%s%s%s'%s' is larger than %llu bytes (%llu bytes; allowed: files up to %llu "
                    "bytes)",
                    head, noun, key_is_name ? "" : " ", path, max_size,
                    (unsigned long long)st.st_size, max_size);
  }
  /* a regular file: blocking reads again */
  if ((flags = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1 ||
      (*f = fdopen(fd, "rb")) == NULL) {
    int e = errno;
    close(fd);
    return DPD_FAIL(err, DPD_EINVAL, "%scannot open '%s': %s", head, path, strerror(e));
  }
  if (size != NULL) {
    *size = (unsigned long long)st.st_size;
  }
  return DPD_OK;
}

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
