/* The privacy audit of full-batch DP-GD on random features (internal; src/rf/audit_rf.c,
 * docs/privacy.md "Empirical audit").
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RF_AUDIT_RF_IMPL_H
#define DPD_RF_AUDIT_RF_IMPL_H

#include <stddef.h>

#include "core/audit_impl.h"
#include "dpdyn/keys.h"
#include "dpdyn/model.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* The canary's label is this many times a bound on |phi_c . theta_t| + C/|phi_c| (audit_rf.c). */
#define DPD_RF_AUDIT_LABEL_FACTOR 1e3
/* The canary's input is this many times sqrt(d) along the first input axis (audit_rf.c). */
#define DPD_RF_AUDIT_INPUT_SCALE 10.0

typedef struct {
  double label;      /* |y| of the canary */
  double projection; /* |P phi_c| / |phi_c| (0: p too small, the statistic projects on phi_c) */
  double mu_canary;  /* sqrt(eta T)/sigma |P phi_c|/|phi_c|: the exact mu of the statistic
                        (NAN when projection = 0) */
} dpd__rf_audit_info;

/* Builds the problem of pc (with n_test = 1: the test set plays no part), makes training point
 * n - 1 the canary (label -Y on side 0, +Y on side 1) and runs the library's DP-GD
 * (dpd_rf_sim_run, one replicate, threads 1) `runs` times per side, run i of side s with noise
 * seed dpd__audit_seed_mix(dpd__audit_seed_mix(sc->seed, s), i), in parallel over runs on
 * sc->threads OpenMP threads (the bits do not depend on them). s0[i], s1[i]: <theta_T, w>
 * (audit_rf.c). DPD_EINVAL for sigma = 0 or clip = inf (naming 'sigma'), what
 * dpd_rf_problem_create and dpd_rf_sim_run return, DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__rf_audit_run(const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                                    size_t runs, double *s0, double *s1, dpd__rf_audit_info *info,
                                    dpd_err *err);

/* The audit command's run: the keys runs and confidence (validated by dpd__rf_audit_keys),
 * dpd__rf_audit_run, then the audit's output (dpd__audit_output at `delta`, upper bound
 * mu = sqrt(eta T)/sigma) and the canary's numbers (canary_label, canary_projection). */
DPD_HIDDEN_FN int dpd__rf_audit_output(dpd_output *out, const dpd_rf_config *pc,
                                       const dpd_rf_sim_config *sc, const dpd_keys *keys,
                                       double delta, dpd_err *err);

/* Bytes the audit allocates beyond the problem. */
DPD_HIDDEN_FN double dpd__rf_audit_bytes(size_t n, size_t p, size_t runs, double threads);

/* The audit's keys for model=rf (setup, once sc holds sigma and clip): runs and confidence
 * (dpd__audit_keys_get), a private run (sigma > 0 and a finite clip: DPD_EINVAL naming the
 * budget key given, 'clip', or 'epsilon' when none is given); adds the bytes beyond the problem
 * (dpd__rf_audit_bytes) to *memory. */
DPD_HIDDEN_FN int dpd__rf_audit_keys(const dpd_keys *keys, const dpd_rf_config *pc,
                                     const dpd_rf_sim_config *sc, double *memory, dpd_err *err);

/* The numbers of rf audit's summary besides the privacy numbers (dpd_model_command.numbers). */
#define DPD__RF_AUDIT_NUMBERS "canary_label canary_projection " DPD__AUDIT_NUMBERS

#endif
