/* The text forms of a linreg problem (internal): the values of the keys `spectrum` and
 * `theta_star` ("iso", "levels:L1*M1,...", "powerlaw:ALPHA", "file:PATH"; "random", "flat",
 * "file:PATH") parsed into a dpd_linreg_problem_config, with the memory models of the problem's
 * kernels (a kernel's bytes beside it, as CVodeGetWorkSpace reports CVODE's).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_PROBLEM_SPEC_IMPL_H
#define DPD_PROBLEM_SPEC_IMPL_H

#include <stddef.h>

#include <stdint.h>

#include "dpdyn/keys.h"
#include "dpdyn/linreg.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* Largest dimension (d, sum of multiplicities) a run accepts. */
#define LINREG_MAX_DIM ((size_t)1 << 31)

/* The storage of file and list inputs, borrowed by the configuration they fill (free with
 * dpd__linreg_inputs_free; zero-initialise). */
typedef struct {
  double *spec_cols[2]; /* eigenvalues (levels:, file:) and a file's multiplicity column */
  size_t *mult;         /* multiplicities */
  double *theta_cols[1];
} dpd__linreg_inputs;

DPD_HIDDEN_FN void dpd__linreg_inputs_free(dpd__linreg_inputs *in);

/* Parses the value of `spectrum` into pc (spectrum, alpha, values, mult, nvalues; the arrays
 * point into `in`); *spectrum_d: the sum of the multiplicities of a levels:/file: spectrum, 0 for
 * an analytic one. Files may take at most max_memory bytes (0: no limit). DPD_EINVAL naming the
 * key. */
DPD_HIDDEN_FN int dpd__linreg_spectrum_parse(const char *spec, size_t max_memory,
                                             dpd__linreg_inputs *in, dpd_linreg_problem_config *pc,
                                             size_t *spectrum_d, dpd_err *err);

/* Parses the value of `theta_star` into pc (theta, theta_given) for dimension d. A file's
 * vector is rescaled to pc->theta_norm when keep_norm = 0; with keep_norm = 1 its components are
 * used as they are (pc->theta_norm = 0) and *file_norm receives their norm (else NAN). */
DPD_HIDDEN_FN int dpd__linreg_theta_parse(const char *theta, size_t d, size_t max_memory,
                                          int keep_norm, dpd__linreg_inputs *in,
                                          dpd_linreg_problem_config *pc, double *file_norm,
                                          dpd_err *err);

/* 1 when the ODE's spectral problem can be built without the full problem: an analytic
 * spectrum and theta* random or flat (dpd_linreg_problem_create_spectral). */
DPD_HIDDEN_FN int dpd__linreg_spectral_direct(const dpd_linreg_problem_config *pc);

/* Memory models (bytes), measured against peak RSS in tests/cli/test_limits.sh. */
/* The groups the ODE integrates: the spectrum's, or at most 2 x 32 Gauss nodes per band of the
 * compressed power law (compress: 1 when compression may apply). */
DPD_HIDDEN_FN double dpd__linreg_ode_groups(const dpd_linreg_problem_config *pc, int compress,
                                            int bands_per_decade);
/* The problem: the full per-coordinate problem (full = 1), or the spectral one alone. */
DPD_HIDDEN_FN double dpd__linreg_problem_bytes(const dpd_linreg_problem_config *pc, int full,
                                               double ode_groups);
/* The ODE solver: CVODE's BDF history and work vectors, the ODE's own. */
DPD_HIDDEN_FN double dpd__linreg_ode_bytes(double ode_groups);
/* The simulation (and the SDE beside it when with_sde) over `threads` workers: the terms that
 * grow with d, n and the replicates, added to *by_d, *by_n, *by_seeds (per replicate: its risk
 * and clipping rows on the grid, three numbers and the driver's record of it). */
DPD_HIDDEN_FN void dpd__linreg_sim_bytes(size_t d, size_t n, size_t seeds, size_t grid,
                                         double threads, int with_sde, double *by_d, double *by_n,
                                         double *by_seeds);

/* The keys of the problem (problem_keys.c), each validated in the order of the messages:
 * spectrum, d (given, or implied by a levels:/file: spectrum: *d_from_spectrum = 1),
 * theta_norm, theta_star (a file's norm recorded as theta_norm in effect when not given) into
 * pc (d, seed set); storage in `in`. data_d > 0: a dataset's d (features=file:, checked against
 * the key d by the dataset), no spectrum read (the data's replaces it at build). */
DPD_HIDDEN_FN int dpd__linreg_problem_keys(dpd_keys *keys, uint64_t seed, size_t max_memory,
                                           size_t data_d,
                                           dpd__linreg_inputs *in, dpd_linreg_problem_config *pc,
                                           int *d_from_spectrum, dpd_err *err);
/* n, or gamma = d/n (both: consistent). */
DPD_HIDDEN_FN int dpd__linreg_size_keys(const dpd_keys *keys, size_t d, size_t *n, dpd_err *err);
/* The schedule: its family's parameters (each validated by the range of its key), a file's
 * table (cols[0..2): returned-owned, borrowed by *config), the stability limit sup eta~ <
 * 2/gamma and, with finite rho, no increase. *schedule: returned-owned. */
DPD_HIDDEN_FN int dpd__linreg_schedule_keys(const dpd_keys *keys, double gamma, double rho,
                                            size_t max_memory, double **cols,
                                            dpd_schedule_config *config, dpd_schedule **schedule,
                                            dpd_err *err);

/* The privacy of the run: rho from rho, zcdp (rho = sqrt(2 zcdp)) or (epsilon, delta); delta
 * when given (one of the three forms, delta required with epsilon). */
typedef struct {
  double rho, delta, epsilon;
  int have_delta, have_epsilon;
} dpd__linreg_privacy;
DPD_HIDDEN_FN int dpd__linreg_privacy_keys(const dpd_keys *keys, dpd__linreg_privacy *r,
                                           dpd_err *err);
/* account --sequence FILE: refuses every key but model, sequence, delta, out, max_memory (drops
 * the others' defaults) and reads delta when given. */
DPD_HIDDEN_FN int dpd__linreg_sequence_keys(dpd_keys *keys, dpd__linreg_privacy *priv,
                                            dpd_err *err);

#endif
