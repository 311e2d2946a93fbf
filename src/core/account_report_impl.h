/* The accountant as a run (model=privacy, command account): the query a user's keys make, the
 * segments file, and the output (summary.json, curve.tsv, the figure `account`). Internal; the
 * adapter is src/models/privacy/. SPDX-License-Identifier: MIT */
#ifndef DPD_ACCOUNT_REPORT_IMPL_H
#define DPD_ACCOUNT_REPORT_IMPL_H

#include "dpdyn/account.h"
#include "dpdyn/keys.h"
#include "dpdyn/model.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* Points of the privacy curve (curve.tsv). */
#define DPD_ACCOUNT_CURVE_POINTS 41

typedef enum { DPD__SOLVE_NONE = 0, DPD__SOLVE_SIGMA = 1, DPD__SOLVE_STEPS = 2 } dpd__account_solve;

typedef struct {
  dpd_account a;               /* a.segments: &one, or `file` */
  dpd_account_segment one;     /* the keys' segment */
  dpd_account_segment *file;   /* segments = file:PATH (owned), NULL otherwise */
  const char *file_path;       /* borrowed from the keys */
  double delta, epsilon;       /* NAN when not given */
  dpd__account_solve solve;
  int plot;
} dpd__account_query;

/* Reads segments = file:PATH into q->file (rows `noise_multiplier q steps [batch]`, '#'
 * comments; at most `max_bytes` of memory): errors name the key `segments`, the row and the
 * allowed range. */
DPD_HIDDEN_FN int dpd__account_segments_read(dpd__account_query *q, const char *path,
                                             size_t max_bytes, dpd_err *err);
DPD_HIDDEN_FN void dpd__account_query_release(dpd__account_query *q);
/* Bytes the run allocates at most (its largest grids). */
DPD_HIDDEN_FN double dpd__account_bytes(const dpd__account_query *q);
/* The run: summary (epsilon and its bounds, RDP, CLT; or delta at epsilon; or the solved
 * noise multiplier / steps and the accounting there), curve.tsv and the figure. */
DPD_HIDDEN_FN int dpd__account_report(const dpd__account_query *q, const dpd_keys *keys,
                                      dpd_output **out, dpd_err *err);

/* The pieces of the model type `privacy` (account_model.c). */
extern const dpd_key_desc dpd__account_keys[] DPD_HIDDEN_FN;
extern const dpd_model_command dpd__account_commands[] DPD_HIDDEN_FN;
extern const char *const dpd__account_small[] DPD_HIDDEN_FN;
DPD_HIDDEN_FN int dpd__account_setup(const dpd_model_command *c, dpd_keys *keys,
                                     const dpd_run_env *env, void **ctx, dpd_err *err);
DPD_HIDDEN_FN void dpd__account_release(void *ctx);
DPD_HIDDEN_FN double dpd__account_workspace_bytes(const void *ctx, const dpd_model_command *c,
                                                  const char **driver);

#endif
