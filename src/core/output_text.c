/* The summary of a run as JSON text, for bindings that cannot walk a cJSON tree (model.h).
 * SPDX-License-Identifier: MIT
 *
 * The Python package (python/dpdyn) reads the summary through this one function: it loads the
 * library by name alone (cffi's ABI mode), without cJSON's headers. Numbers are printed by cJSON
 * in a form that reads back as the same double (%.15g, else %.17g). JSON has no token for
 * non-finite numbers; a summary may hold them as numbers (cJSON prints those as null, which would
 * lose them), so a copy of the summary carries them as the raw tokens Infinity, -Infinity and
 * NaN, which Python's json module reads back as the same values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/model.h"

/* Replaces every non-finite number under `item` by a raw token; -1 when out of memory. */
static int nonfinite_raw(cJSON *item) {
  cJSON *sub = item->child;
  while (sub != NULL) {
    cJSON *next = sub->next;
    if (cJSON_IsNumber(sub) && !isfinite(sub->valuedouble)) {
      const char *token = isnan(sub->valuedouble) ? "NaN"
                          : sub->valuedouble > 0  ? "Infinity"
                                                  : "-Infinity";
      cJSON *raw = cJSON_CreateRaw(token);
      if (raw == NULL) {
        return -1;
      }
      raw->string = sub->string; /* the member's name moves to the token (a copy owns it) */
      sub->string = NULL;
      cJSON_ReplaceItemViaPointer(item, sub, raw); /* cannot fail: sub is a child of item */
    } else if ((cJSON_IsObject(sub) || cJSON_IsArray(sub)) && nonfinite_raw(sub) < 0) {
      return -1;
    }
    sub = next;
  }
  return 0;
}

int dpd_output_summary_get(const dpd_output *out, char *buf, size_t cap, size_t *len,
                           dpd_err *err) {
  cJSON *copy = cJSON_Duplicate(out->summary, 1);
  char *text = NULL;
  size_t n;
  if (copy == NULL || nonfinite_raw(copy) < 0 || (text = cJSON_PrintUnformatted(copy)) == NULL) {
    cJSON_Delete(copy);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  n = strlen(text);
  if (len != NULL) {
    *len = n;
  }
  if (buf != NULL && cap > 0) {
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(buf, text, k);
    buf[k] = '\0';
  }
  cJSON_free(text);
  cJSON_Delete(copy);
  return DPD_OK;
}
