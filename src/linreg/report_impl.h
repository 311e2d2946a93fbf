/* The summary numbers and tables of linreg results (internal): what the model's commands
 * report of a simulation or SDE run, an ODE solve with its estimates, the finite-size
 * diagnostics, the per-replicate values and the privacy accounting, written once beside the
 * results (the adapter in src/models/linreg composes them).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_REPORT_IMPL_H
#define DPD_REPORT_IMPL_H

#include "dpdyn/linreg.h"
#include "dpdyn/model.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"
#include "linreg/ode_estimate_impl.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* The tables a command fills: trajectory.tsv (on the grid) and release.tsv (one row). A failed
 * step leaves status < 0 and the later ones do nothing. */
typedef struct {
  dpd_output *out;
  dpd_table_builder *traj, *rel;
  dpd_err *err;
  int status;
} dpd__linreg_report;

/* Appends the column prefix + name (from v; NULL: zeros) to b. */
DPD_HIDDEN_FN void dpd__linreg_report_column(dpd__linreg_report *rp, dpd_table_builder *b,
                                             const char *prefix, const char *name, const double *v);
/* Sets the number prefix + name in the summary. */
DPD_HIDDEN_FN void dpd__linreg_report_number(dpd_output *out, const char *prefix, const char *name,
                                             double v);

/* A stochastic run (simulation or SDE): prefix + final_excess_risk, ..., clip_key in the
 * summary; prefix + excess_risk(_se) on the grid; prefix + before(_se), after(_se) at the
 * release. */
DPD_HIDDEN_FN void dpd__linreg_report_sim(dpd__linreg_report *rp, const char *prefix,
                                          const dpd_linreg_sim_result *res, const char *clip_key);

/* The ODE solved on `problem` (`full`: the per-coordinate problem or NULL, pc its
 * configuration, for the distinct eigenvalues; compress_off: compression was off): prefix +
 * final_excess_risk (with final_excess_risk_se = 0 when prefix is "": the ODE is the run's
 * result), the bounds, the solver's diagnostics and error estimates, the finite-size
 * diagnostics; prefix + excess_risk and the bounds on the grid; ode_before, ode_after. */
DPD_HIDDEN_FN void
dpd__linreg_report_ode(dpd__linreg_report *rp, const char *prefix, const dpd_ode_result *ode,
                       const dpd__linreg_ode_estimates *est, const dpd_linreg_problem *problem,
                       const dpd_linreg_problem *full, const dpd_linreg_problem_config *pc,
                       const dpd_ode_config *oc, int compress_off);

/* The finite-size diagnostics of the ODE problem (finite_size, m2, lambda_max_over_d) and the
 * warning (summary "warnings" and a note) when the correction is off where it matters
 * (docs/finite_size.md). */
DPD_HIDDEN_FN int dpd__linreg_report_finite_size(dpd_output *out, const dpd_linreg_problem *p,
                                                 const dpd_ode_config *oc, dpd_err *err);

/* save_replicates = level (1, 2): replicates.tsv (each replicate's final values, named as the
 * summary's means of them) and, at 2, replicates_trajectory.tsv (each replicate on the grid,
 * named as the trajectory.tsv columns they average to: the row t = 1 is the risk before the
 * release noise). sim or sde may be NULL; with both, the SDE's columns are prefixed "sde_". */
DPD_HIDDEN_FN int dpd__linreg_report_replicates(dpd_output *out, const dpd_linreg_sim_result *sim,
                                                const dpd_linreg_sim_result *sde, int level,
                                                size_t seeds, size_t grid, dpd_err *err);

/* The guarantees of a rho^2/2-zCDP run (docs/privacy.md: no GDP curve is claimed): the
 * "privacy" object at delta (have_delta) or 1/n, rho, zcdp, and with delta its epsilons. */
DPD_HIDDEN_FN void dpd__linreg_report_privacy(dpd_output *out, double rho, int have_delta,
                                              double delta, size_t n);

/* account: rho_eff of the schedule's n steps at rho (rho_target, rho_eff, zcdp_eff, with
 * have_delta the epsilons "_eff"; epsilon > 0: the target epsilon and rho_bun_steinke). */
DPD_HIDDEN_FN int dpd__linreg_report_account(dpd_output *out, const dpd_schedule *s, size_t n,
                                             double rho, int have_delta, double delta,
                                             double epsilon, dpd_err *err);

/* account --sequence: rho_eff of the (eta_k, sigma_k) rows of the file `path` (at most
 * max_memory bytes), as a new output (*out: returned-owned). */
DPD_HIDDEN_FN int dpd__linreg_report_sequence(const char *path, size_t max_memory, int have_delta,
                                              double delta, dpd_output **out, dpd_err *err);

#endif
