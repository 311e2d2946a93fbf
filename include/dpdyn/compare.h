/* Theory against simulation: one definition of every gap, for every model (issue 26).
 * SPDX-License-Identifier: MIT
 *
 * A `compare` command is "simulate + theory + these statistics": the model runs its simulation
 * (means and standard errors over replicates on a grid) and its theory on the same grid, then
 * hands both to dpd_compare_add, which writes the gaps into the summary and the gap of every
 * grid point, in standard errors, as a column of the trajectory table, so the figure's residual
 * panel draws the very numbers the summary reports.
 *
 * The standard error of a gap is the simulation's standard error of its mean when the theory is
 * deterministic, and the standard error of the paired differences (simulation_r - theory_r)
 * when the theory is evaluated per replicate on the replicate's own draw (rf: the OU theory of
 * each draw of the features), because then what both sides share cancels. */
#ifndef DPD_COMPARE_H
#define DPD_COMPARE_H

#include <stddef.h>

#include "dpdyn/model.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* |theory - sim| / se, the one gap in standard errors: for se > 0 the ratio; for se = 0 (no
 * randomness left, e.g. without noise and with the data shared) 0 when the gap is at rounding
 * level (<= 1e-9 of the larger magnitude) and +inf otherwise; NaN (not available) when any
 * input is NaN or se < 0. */
DPD_API double dpd_gap_in_se(double theory, double sim, double se);

/* The gaps of one comparison. */
typedef struct {
  double sup_gap;         /* max over the grid of |theory - sim| */
  double sup_gap_in_se;   /* max over the grid of dpd_gap_in_se */
  double final_gap;       /* |theory - sim| of the final values */
  double final_gap_se;    /* the standard error of that gap */
  double final_gap_in_se; /* dpd_gap_in_se of the final values */
} dpd_gap_stats;

/* The comparison on a grid of g points: theory[j], sim[j] and se[j] (the SE of the gap at j),
 * and the final values (the last grid point, or the released iterate where the model reports
 * it apart). in_se[0..g): the gap of each point in SE (NULL: not wanted). */
DPD_API void dpd_gap_measure(const double *theory, const double *sim, const double *se, size_t g,
                             double final_theory, double final_sim, double final_se,
                             double *in_se, dpd_gap_stats *gap);

/* One comparison of a compare command. */
typedef struct {
  const char *prefix; /* summary names are prefix + "sup_gap", ... ("" or e.g. "sde_") */
  const double *theory, *sim, *se; /* [g] on the grid; se: the SE of the gap (see above) */
  size_t g;
  double final_theory, final_sim, final_se;
  const char *column; /* the gap-in-SE column appended to the table (NULL: prefix +
                         "gap_in_se") */
} dpd_compare_spec;

/* Measures the comparison, writes prefix + sup_gap, sup_gap_in_se, final_gap, final_gap_se,
 * final_gap_in_se into the summary, appends the column of gaps in SE to `table` (NULL: none),
 * and once per output (whatever the number of comparisons) the warning for too few
 * replicates: `seeds` in [2, 8) makes the standard errors, and the gaps measured in them,
 * unreliable (summary "warnings" + a note). gap: the numbers written (NULL: not wanted). */
DPD_API int dpd_compare_add(dpd_output *out, dpd_table_builder *table, const dpd_compare_spec *s,
                            size_t seeds, dpd_gap_stats *gap, dpd_err *err);

/* The warning for too few replicates alone (dpd_compare_add writes it too): `seeds` in [2, 8)
 * makes the standard errors unreliable (summary "warnings" + a note), once per output. For a
 * compare whose theory gives bounds, not predictions, so that no gap is measured. */
DPD_API int dpd_compare_warning_add(dpd_output *out, size_t seeds, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_COMPARE_H */
