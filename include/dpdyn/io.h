/* Text and files as the library reads and writes them, for front ends (the dpdyn CLI, a
 * caller's own driver) that read inputs and write results the way the library does.
 * SPDX-License-Identifier: MIT
 *
 * - Numbers: the decimal grammar of keys and data files and the shortest round-trip format of
 *   summaries and data files (docs/input.md, docs/output.md).
 * - Input files: opening a user's file with the library's limits (a regular file only, of a
 *   bounded size), so that a FIFO or a device named as an input cannot block or exhaust a run.
 * - Summaries: the written JSON form of docs/output.md (non-finite numbers as null plus the
 *   top-level "nonfinite" record, NaN as null with a reason under "not_available") and the
 *   record of a run's keys.
 *
 * Every function is thread-safe (none has state). */
#ifndef DPD_IO_H
#define DPD_IO_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "dpdyn/keys.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- numbers ---- */

/* 1 when [s, end) (borrowed) is a decimal number as keys and data files take it,
 * [+-]digits[.digits][e[+-]digits] (at least one digit in the mantissa), and nothing else;
 * 0 otherwise. strtod reads more (hexadecimal, inf, nan, leading space): check with this
 * first, then convert with strtod. */
DPD_API int dpd_io_number_is_decimal(const char *s, const char *end);

/* Writes x into buf (cap bytes, borrowed) as summaries and data files do: the shorter of %.15g
 * and %.17g that reads back (strtod) as the same double. Finite x only (the caller writes inf,
 * -inf and nan as it wants); 32 bytes always suffice. */
DPD_API void dpd_io_number_format(char *buf, size_t cap, double x);

/* ---- input files ---- */

/* Opens `path` (borrowed) for reading when it is a regular file, refusing anything else (a
 * FIFO, a pipe, a device such as /dev/zero, a directory, a socket) at once: the file is opened
 * with O_NONBLOCK, so a FIFO without a writer cannot block the open, and the open descriptor is
 * checked with fstat (no race between the check and the read). A file larger than `max_size`
 * bytes (0: no limit) is refused too. *f is returned-owned (fclose); *size (may be NULL)
 * receives the file's size in bytes. Errors are DPD_EINVAL with one line in err (may be NULL)
 * naming `what` and the path: with key_is_name != 0 `what` is a key ("invalid value for
 * 'spectrum': ..."), with key_is_name = 0 a noun ("cannot open INI file '...'"). */
DPD_API int dpd_io_file_open(const char *what, int key_is_name, const char *path,
                             unsigned long long max_size, FILE **f, unsigned long long *size,
                             dpd_err *err);

/* ---- summaries (JSON) ---- */

/* Adds `v` to the JSON object `obj` (borrowed) under `key`, as every summary number is added:
 * a finite value or +-inf as a number (+-inf are written as null plus "nonfinite" by
 * dpd_io_json_print), NaN as null with the reason "undefined for these parameters" under the
 * object's "not_available". Out of memory leaves the member out. */
DPD_API void dpd_io_json_number_set(cJSON *obj, const char *key, double v);

/* Adds `key` as null to `obj` (borrowed), with `reason` under the object's "not_available". */
DPD_API void dpd_io_json_na_set(cJSON *obj, const char *key, const char *reason);

/* Adds every key of `keys` (borrowed) that holds a value to `obj` (borrowed), as the summary's
 * "params" record does: numbers as numbers, inf as the number inf, text as text; resource
 * limits (DPD_KEY_BYTES) are left out. */
DPD_API void dpd_io_json_keys_set(const dpd_keys *keys, cJSON *obj);

/* `obj` (borrowed, unchanged: a copy is encoded) printed in the written form of a summary:
 * every non-finite number becomes null and its value ("inf", "-inf", "nan") is recorded in the
 * top-level object "nonfinite" under its dotted path ("params.c", "gaps.final"). Formatted as
 * cJSON_Print does. Returned-owned (free()); NULL when out of memory. */
DPD_API char *dpd_io_json_print(const cJSON *obj);

/* The inverse of dpd_io_json_print's encoding, on a parsed summary `root` (borrowed, changed in
 * place): the numbers recorded under "nonfinite" are put back in place, and "nonfinite" is
 * removed. */
DPD_API void dpd_io_json_nonfinite_decode(cJSON *root);

#ifdef __cplusplus
}
#endif
#endif /* DPD_IO_H */
