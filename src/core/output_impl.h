/* JSON helpers of run outputs (internal; output.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_OUTPUT_IMPL_H
#define DPD_OUTPUT_IMPL_H

#include <cjson/cJSON.h>

#include "dpdyn/keys.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* A number in a JSON object: finite or +-inf as a number (+-inf become null + "nonfinite" when
 * written: dpd__json_nonfinite_encode), NaN as null with a reason under the object's
 * "not_available" (a summary never holds NaN). */
DPD_HIDDEN_FN void dpd__json_number(cJSON *obj, const char *key, double v);
DPD_HIDDEN_FN void dpd__json_na(cJSON *obj, const char *key, const char *reason);

/* Adds every key in effect to a JSON object (numbers as numbers, inf as the number inf; BYTES
 * keys, resource limits, left out). */
DPD_HIDDEN_FN void dpd__keys_json(const dpd_keys *keys, cJSON *obj);

/* The written form of a summary (docs/output.md): one type per key. Every non-finite number
 * becomes null and its value ("inf", "-inf", "nan") is recorded in the top-level object
 * "nonfinite" under its dotted path ("params.c", "gaps.final"); -1 when out of memory. */
DPD_HIDDEN_FN int dpd__json_nonfinite_encode(cJSON *root);
/* The inverse: the numbers of "nonfinite" put back in place, the object removed. */
DPD_HIDDEN_FN void dpd__json_nonfinite_decode(cJSON *root);
/* `obj` printed in that written form (a copy is encoded; `obj` is unchanged). Returned-owned
 * (free()); NULL when out of memory. */
DPD_HIDDEN_FN char *dpd__json_print(const cJSON *obj);

#endif
