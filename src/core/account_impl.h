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

#endif
