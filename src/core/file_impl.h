/* Opening a user's input file with the library's limits (internal; file.c; public as
 * dpd_io_file_open in dpdyn/io.h).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_FILE_IMPL_H
#define DPD_FILE_IMPL_H

#include <stdio.h>

#include "dpdyn/status.h"

/* Opens `path` for reading when it is a regular file, refusing anything else (a FIFO, a pipe,
 * a device such as /dev/zero, a directory, a socket) at once: the file is opened with
 * O_NONBLOCK, so a FIFO without a writer cannot block the open, and the open descriptor is
 * checked with fstat (no race between the check and the read). *f is returned-owned (fclose);
 * *size (may be NULL) receives the file's size in bytes. A file larger than `max_size` bytes
 * (0: no limit) is refused too. Errors are DPD_EINVAL, one line naming `what` (a key: "invalid
 * value for 'spectrum': ...", or with key_is_name = 0 a noun such as "INI file": "cannot open
 * INI file '...'") and the path. */
__attribute__((visibility("hidden"))) int dpd__file_open_regular(const char *what, int key_is_name,
                                                                 const char *path,
                                                                 unsigned long long max_size,
                                                                 FILE **f, unsigned long long *size,
                                                                 dpd_err *err);

#endif
