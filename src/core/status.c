/* Status messages and the error-reporting function.
 * SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"

const char *dpd_status_str(int status) {
  switch (status) {
#define DPD_X_CASE(name, value, msg)                                                               \
  case name:                                                                                       \
    return msg;
    DPD_STATUS_LIST(DPD_X_CASE)
#undef DPD_X_CASE
  default:
    return "unknown status";
  }
}

void dpd_err_reset(dpd_err *err) {
  if (err != NULL) {
    memset(err, 0, sizeof *err);
  }
}

const char *dpd_version(void) {
  return DPD_VERSION_STRING;
}

/* The one body of both reporting functions. */
static void error_fill(dpd_err *err, int status, const char *file, int line, const char *fmt,
                       va_list ap) {
  err->status = status;
  err->file = file;
  err->line = line;
  vsnprintf(err->reason, sizeof err->reason, fmt, ap);
}

int dpd__error_set(dpd_err *err, int status, const char *file, int line, const char *fmt, ...) {
  if (err != NULL) {
    va_list ap;
    va_start(ap, fmt);
    error_fill(err, status, file, line, fmt, ap);
    va_end(ap);
  }
  return status;
}

int dpd_err_set(dpd_err *err, int status, const char *file, int line, const char *fmt, ...) {
  if (err != NULL) {
    va_list ap;
    va_start(ap, fmt);
    error_fill(err, status, file, line, fmt, ap);
    va_end(ap);
  }
  return status;
}
