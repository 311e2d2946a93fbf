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
#include "linreg/data_impl.h"
#include "linreg/ode_estimate_impl.h"
#include "linreg/problem_spec_impl.h"

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

/* The guarantees of the run (rho = priv->rho, a rho^2/2-zCDP run): the "privacy" object at
 * delta (have_delta) or 1/n, rho, zcdp, with delta its epsilons; then the last-iterate GDP of
 * the n steps of schedule s (dpd__linreg_report_gdp). p: the population's problem (Gaussian
 * rows) and D: the data (features = file:; NULL otherwise). */
DPD_HIDDEN_FN int dpd__linreg_report_privacy(dpd_output *out, const dpd__linreg_privacy *priv,
                                             size_t n, const dpd_schedule *s,
                                             const dpd_linreg_problem *p, const dpd__lrdata *D,
                                             dpd_err *err);

/* ---- the last-iterate GDP of one-pass linreg (lastiter.c; docs/privacy.md, "Last-iterate GDP
 * of one-pass linreg") ---- */

/* Whether every step is non-expansive (eta_k |x|^2 <= 2 for every row). */
enum { DPD__GDP_HOLDS = 0, DPD__GDP_FAILS = 1, DPD__GDP_CONDITIONAL = 2 };

typedef struct {
  double bound;      /* B = 2 / max_k eta_k: rows with |x|^2 <= B make every step non-expansive */
  int status;        /* DPD__GDP_HOLDS (data rows checked), FAILS, CONDITIONAL (unchecked) */
  const char *rows;  /* "data", "gaussian", "unknown" (static storage) */
  double max_norm2;  /* data: max |x|^2 over the population rows; NAN otherwise */
  double mean_norm2; /* Gaussian rows: E|x|^2 = tr Sigma = d; NAN otherwise */
  double row_tail;   /* Gaussian rows: a bound on P(|x|^2 > B) for one row; NAN otherwise */
  double run_tail;   /* min(1, n row_tail): a bound on P(some row of the run exceeds B) */
  char why[320];     /* FAILS: the reason */
} dpd__linreg_gdp_check;

/* The check for steps of largest size eta_max (n steps): data rows D when not NULL (its
 * with_replacement refuses the one-pass analysis), else the Gaussian rows of p when not NULL,
 * else nothing to check (CONDITIONAL). */
DPD_HIDDEN_FN void dpd__linreg_gdp_check_eval(double eta_max, size_t n, const dpd_linreg_problem *p,
                                              const dpd__lrdata *D, dpd__linreg_gdp_check *c);
/* "holds", "fails", "conditional". */
DPD_HIDDEN_FN const char *dpd__linreg_gdp_status_name(int status);
/* A Chernoff bound on P(|x|^2 > B) for x ~ N(0, Sigma), Sigma's eigenvalues those of p (mean 1):
 * from the exact groups, or from tr Sigma = d and lambda_max when p's groups are quadrature
 * nodes. 1 for B <= d. */
DPD_HIDDEN_FN double dpd__linreg_norm2_tail(const dpd_linreg_problem *p, double B);
/* max_j |x_j|^2 over the population rows of D (d max_j a_j). */
DPD_HIDDEN_FN double dpd__linreg_max_row_norm2(const dpd__lrdata *D);

/* The keys gdp_mu (mu), and with have_delta epsilon_gdp (dpd_privacy_gdp_eps at delta) and
 * epsilon_tight_over_gdp (the tight zCDP eps of mu^2/2 over it), null with the reason under
 * not_available when c fails; the check's numbers gdp_norm2_bound, gdp_max_row_norm2 (data),
 * gdp_row_tail and gdp_run_tail (Gaussian rows); the object last_iterate_gdp (assumption, rows,
 * status, why) and, when c fails, a note. Drops these keys first: the block may be written again
 * (tune, with the optimum's schedule). */
DPD_HIDDEN_FN int dpd__linreg_report_gdp_block(dpd_output *out, double mu, int have_delta,
                                               double delta, const dpd__linreg_gdp_check *c,
                                               dpd_err *err);

/* The last-iterate GDP of the run: mu = rho (the calibrated schedule makes every record's mu_k
 * equal rho), checked for the n steps of schedule s (eta_max = sup eta~ / n) on D or p. Nothing
 * for rho = inf. Written again by tune with the optimum's schedule. */
DPD_HIDDEN_FN int dpd__linreg_report_gdp(dpd_output *out, const dpd__linreg_privacy *priv, size_t n,
                                         const dpd_schedule *s, const dpd_linreg_problem *p,
                                         const dpd__lrdata *D, dpd_err *err);

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
