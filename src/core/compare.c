/* Theory against simulation: the gaps (compare.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "dpdyn/compare.h"

double dpd_gap_in_se(double theory, double sim, double se) {
  const double gap = fabs(theory - sim);
  if (isnan(gap) || isnan(se) || se < 0.0) {
    return NAN;
  }
  if (se > 0.0) {
    return gap / se;
  }
  /* Without randomness both sides are deterministic: a gap at rounding level counts as none.
   * An infinite gap (one side diverged) is a real one: inf > 1e-9 * inf would say otherwise. */
  return isinf(gap) || gap > 1e-9 * fmax(fabs(theory), fabs(sim)) ? INFINITY : 0.0;
}

void dpd_gap_measure(const double *theory, const double *sim, const double *se, size_t g,
                     double final_theory, double final_sim, double final_se, double *in_se,
                     dpd_gap_stats *gap) {
  gap->sup_gap = 0.0;
  gap->sup_gap_in_se = 0.0;
  for (size_t j = 0; j < g; j++) {
    const double z = dpd_gap_in_se(theory[j], sim[j], se[j]);
    gap->sup_gap = fmax(gap->sup_gap, fabs(theory[j] - sim[j]));
    gap->sup_gap_in_se = fmax(gap->sup_gap_in_se, z);
    if (in_se != NULL) {
      in_se[j] = z;
    }
  }
  gap->final_gap = fabs(final_theory - final_sim);
  gap->final_gap_se = final_se;
  gap->final_gap_in_se = dpd_gap_in_se(final_theory, final_sim, final_se);
}

static void number_set(dpd_output *out, const char *prefix, const char *name, double v) {
  char key[96];
  snprintf(key, sizeof key, "%s%s", prefix, name);
  if (isnan(v)) {
    dpd_output_na_set(out, key, "a standard error is not available");
  } else {
    dpd_output_number_set(out, key, v);
  }
}

/* The warning for 2..7 replicates, once per output. */
int dpd_compare_warning_add(dpd_output *out, size_t seeds, dpd_err *err) {
  static const char fmt[] = "seeds = %zu < 8: the standard errors, and the gaps measured in "
                            "them, are unreliable; use seeds >= 8";
  char msg[200];
  cJSON *w = cJSON_GetObjectItemCaseSensitive(out->summary, "warnings");
  if (seeds < 2 || seeds >= 8) { /* one replicate: no standard errors at all */
    return DPD_OK;
  }
  snprintf(msg, sizeof msg, fmt, seeds);
  for (cJSON *item = w != NULL ? w->child : NULL; item != NULL; item = item->next) {
    if (cJSON_IsString(item) && strcmp(item->valuestring, msg) == 0) {
      return DPD_OK;
    }
  }
  if (w == NULL) {
    w = cJSON_AddArrayToObject(out->summary, "warnings");
  }
  if (w == NULL || !cJSON_AddItemToArray(w, cJSON_CreateString(msg)) ||
      dpd__output_note_add(out, err, "warning: %s", msg) < 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

int dpd_compare_add(dpd_output *out, dpd_table_builder *table, const dpd_compare_spec *s,
                    size_t seeds, dpd_gap_stats *gap, dpd_err *err) {
  dpd_gap_stats st;
  double *col = NULL;
  const char *prefix = s->prefix != NULL ? s->prefix : "";
  if (table != NULL) {
    char name[96];
    if (s->column == NULL) {
      snprintf(name, sizeof name, "%sgap_in_se", prefix);
    }
    const char *cname = s->column != NULL ? s->column : name;
    int status;
    if (dpd_table_builder_rows(table) != s->g) {
      return DPD_FAIL(err, DPD_EINVAL, "compare: %zu grid points for a table of %zu rows", s->g,
                      dpd_table_builder_rows(table));
    }
    status = dpd_table_builder_add(table, cname, NULL, err);
    if (status < 0) {
      return status;
    }
    col = dpd_table_builder_find(table, cname);
  }
  dpd_gap_measure(s->theory, s->sim, s->se, s->g, s->final_theory, s->final_sim, s->final_se, col,
                  &st);
  number_set(out, prefix, "sup_gap", st.sup_gap);
  number_set(out, prefix, "sup_gap_in_se", st.sup_gap_in_se);
  number_set(out, prefix, "final_gap", st.final_gap);
  number_set(out, prefix, "final_gap_se", st.final_gap_se);
  number_set(out, prefix, "final_gap_in_se", st.final_gap_in_se);
  if (gap != NULL) {
    *gap = st;
  }
  return dpd_compare_warning_add(out, seeds, err);
}
