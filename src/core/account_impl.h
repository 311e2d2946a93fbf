/* Internal pieces of the accountant (include/dpdyn/account.h) shared by account.c and
 * account_inverse.c. SPDX-License-Identifier: MIT */
#ifndef DPD_ACCOUNT_IMPL_H
#define DPD_ACCOUNT_IMPL_H

#include "dpdyn/account.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* The default target relative width of the PLD bounds (accuracy = 0). */
#define DPD_ACCOUNT_ACCURACY_DEFAULT 0.01
/* Grid refinements of the automatic grid step at most. */
#define DPD_ACCOUNT_REFINE_MAX 6
/* The inverse's bracket and its relative resolution on sigma. */
#define DPD_ACCOUNT_SIGMA_LO 1e-2
#define DPD_ACCOUNT_SIGMA_HI 1e6
#define DPD_ACCOUNT_SIGMA_RTOL 1e-4
#define DPD_ACCOUNT_STEPS_MAX ((size_t)1 << 40)

/* The accuracy in effect (a->accuracy, or the default). */
DPD_HIDDEN_FN double dpd__account_accuracy(const dpd_account *a);
/* A grid step for a run of `total` steps whose epsilon is about `eps`: accuracy * eps / total,
 * clamped to the allowed range of h. */
DPD_HIDDEN_FN double dpd__account_h_for(const dpd_account *a, double eps, size_t total);
/* The RDP epsilon at delta (NAN where not computed), the rough size of epsilon used to pick h. */
DPD_HIDDEN_FN double dpd__account_eps_guess(const dpd_account *a, double delta);
/* Every member of r at delta with the grid step h (> 0) fixed. */
DPD_HIDDEN_FN int dpd__account_epsilon_at_h(const dpd_account *a, double delta, double h,
                                            dpd_account_result *r, dpd_err *err);

/* The run's PLD (validated first): a->h, or the automatic grid step for delta_hint; *h_used
 * and *points (the largest grid) beside it. *pld returned-owned. */
DPD_HIDDEN_FN int dpd__account_run(const dpd_account *a, double delta_hint, dpd_pld **pld,
                                   double *h_used, size_t *points, dpd_err *err);
/* Every member of r at delta from the run's PLD p (grid step h, largest grid points). */
DPD_HIDDEN_FN int dpd__account_fill(const dpd_account *a, const dpd_pld *p, double delta, double h,
                                    size_t points, dpd_account_result *r, dpd_err *err);
/* RDP's delta at eps (tight conversion), NAN where RDP is not computed. */
DPD_HIDDEN_FN double dpd__account_rdp_delta(const dpd_account *a, double eps);
/* The CLT mu (Bu, Dong, Long, Su 2020): sqrt(sum T_i q_i^2 (e^{1/s_i^2} - 1)) for Poisson
 * add/remove runs; NAN otherwise. */
DPD_HIDDEN_FN double dpd__account_clt_mu(const dpd_account *a);

/* The RDP answers of the inverse (the PLD search starts there): the smallest sigma / the most
 * steps of segment 0 whose RDP epsilon is <= eps; NAN where RDP is not computed or none. */
DPD_HIDDEN_FN double dpd__account_rdp_sigma(const dpd_account *a, double eps, double delta);
DPD_HIDDEN_FN double dpd__account_rdp_steps(const dpd_account *a, double eps, double delta);

#endif
