/* dpdyn tune's pieces (internal): its keys, the (c, eta~(0)) risk surface around a tuned
 * optimum and how it checks the search, and the report of a tuning.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_TUNE_SURFACE_IMPL_H
#define DPD_TUNE_SURFACE_IMPL_H

#include <stddef.h>

#include "dpdyn/keys.h"
#include "dpdyn/model.h"
#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"
#include "dpdyn/tune.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* Lower end of a log eta~(0) axis: eta_max * 1e-2, or the optimum / 10 if lower. */
#define DPD_TUNE_HEATMAP_ETA_DECADES 1e-2
#define DPD_TUNE_HEATMAP_ETA_BELOW_OPT 0.1

typedef struct {
  size_t points, failed, beating; /* grid points, of which failed, of which below the optimum */
  double best, best_c, best_eta;  /* the lowest risk on the grid and where */
} dpd__tune_surface_stats;

/* Evaluates R_out on an n x n grid of (c, eta~(0)), the other schedule parameters at the
 * optimum `res`: c log-spaced on [c_min, c_max]; eta~(0) up to the stability limit (with the
 * tuner's safety factor), log-spaced from two decades below it (or one below the optimum if
 * lower, never below the tuner's own box) when eta_log, else linearly from eta_max / n.
 * c[n], eta[n], risk[n * n] (c outer): caller-owned; st: the grid points below the optimum
 * (there should be none: a check of the search) and the lowest one. */
DPD_HIDDEN_FN int dpd__tune_surface(const dpd_linreg_problem *problem, const dpd_tune_config *tc,
                                    const dpd_tune_result *res, size_t n, double c_min,
                                    double c_max, int eta_log, double *c, double *eta, double *risk,
                                    dpd__tune_surface_stats *st, dpd_err *err);

/* The tunable parameters by name (DPD_TUNE_* flags), in the order of the summaries. */
typedef struct {
  const char *name;
  int flag;
} dpd__tune_name;
#define DPD_TUNE_NNAMES 6
extern const dpd__tune_name dpd__tune_names[DPD_TUNE_NNAMES] DPD_HIDDEN_FN;

/* The keys of tune, validated (tune_keys.c). */
typedef struct {
  int mask; /* DPD_TUNE_* tuned */
  double c_min, c_max;
  size_t heatmap, confirm_seeds, restarts;
  double xtol;
  int eta_log;
  const dpd_schedule_family *family; /* of the schedule tuned */
} dpd__tune_options;

/* Validates the keys of tune (schedule family, tune, c_min, c_max, heatmap, heatmap_eta,
 * confirm_seeds, xtol, restarts) into *t, and sets a placeholder c in effect when c is tuned
 * and not given (so that a finite rho is accepted). */
DPD_HIDDEN_FN int dpd__tune_keys(dpd_keys *keys, dpd__tune_options *t, dpd_err *err);
/* The tunable parameters of family f but c, at the schedule sc: names[k] and values[k] for k
 * below the count returned (at most DPD_TUNE_NNAMES). */
DPD_HIDDEN_FN size_t dpd__tune_values(const dpd_schedule_family *f, const dpd_schedule_config *sc,
                                      const char **names, double *values);

/* heatmap.tsv: the surface of dpd__tune_surface (t->heatmap points per axis) as one scanline per
 * c (eta~(0) varying), blank lines between scanlines. */
DPD_HIDDEN_FN int dpd__tune_surface_table(dpd_output *out, const dpd_linreg_problem *problem,
                                          const dpd_tune_config *tc, const dpd_tune_result *res,
                                          const dpd__tune_options *t, dpd__tune_surface_stats *st,
                                          dpd_err *err);

/* What a tuning reports. */
typedef struct {
  const dpd__tune_options *t;
  const dpd_tune_config *tc;
  const dpd_tune_result *res;
  const dpd_schedule *schedule;      /* the optimum's */
  const dpd_ode_result *ode;         /* the ODE at the optimum, with bounds */
  const dpd_linreg_sim_result *sim;  /* the confirmation; NULL: skipped */
  const dpd__tune_surface_stats *st; /* the surface's check (t->heatmap > 0) */
  const dpd_linreg_problem *problem; /* the ODE's */
  size_t d, n;
  unsigned long long seed;
} dpd__tune_report_spec;

/* The summary (the optimum, the confirmation's gaps of compare.h, the surface's check, the
 * search), trajectory.tsv and release.tsv (the columns of compare; nan simulation columns when
 * the confirmation is skipped; release.tsv adds the optimum's c and eta~(0)), the figure, the
 * text for a reader and the warnings. */
DPD_HIDDEN_FN int dpd__tune_report(dpd_output *out, const dpd__tune_report_spec *s, dpd_err *err);

#endif
