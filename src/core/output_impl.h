/* JSON helpers of run outputs (internal; output.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_OUTPUT_IMPL_H
#define DPD_OUTPUT_IMPL_H

#include <cjson/cJSON.h>

#include "dpdyn/keys.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* A number in a JSON object: finite as a number, +-inf as the strings "inf"/"-inf", NaN as null
 * with a reason under the object's "not_available" (a summary never holds NaN). */
DPD_HIDDEN_FN void dpd__json_number(cJSON *obj, const char *key, double v);
DPD_HIDDEN_FN void dpd__json_na(cJSON *obj, const char *key, const char *reason);

/* Adds every key in effect to a JSON object (numbers as numbers, inf as "inf"; BYTES keys,
 * resource limits, left out). */
DPD_HIDDEN_FN void dpd__keys_json(const dpd_keys *keys, cJSON *obj);

#endif
