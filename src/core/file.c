/* Opening a user's input file with the library's limits (file_impl.h; public as
 * dpd_io_file_open, dpdyn/io.h): the one way the data-file readers (table.c, npy.c, datafile.c)
 * and the CLI open what a user names.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "core/file_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error_impl.h"
#include "dpdyn/io.h"

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

int dpd_io_file_open(const char *what, int key_is_name, const char *path,
                     unsigned long long max_size, FILE **f, unsigned long long *size,
                     dpd_err *err) {
  return dpd__file_open_regular(what, key_is_name, path, max_size, f, size, err);
}
