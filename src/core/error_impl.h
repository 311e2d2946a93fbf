/* Internal error reporting: the one function every failure goes through.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_ERROR_IMPL_H
#define DPD_ERROR_IMPL_H

#include "dpdyn/status.h"

/* Records `status` and a printf-style reason into `err` (which may be NULL)
 * and returns `status`. Put a debugger breakpoint here to catch every error. */
__attribute__((visibility("hidden"), format(printf, 5, 6))) int
dpd__error_set(dpd_err *err, int status, const char *file, int line, const char *fmt, ...);

#define DPD_FAIL(err, status, ...) dpd__error_set((err), (status), __FILE__, __LINE__, __VA_ARGS__)

#endif
