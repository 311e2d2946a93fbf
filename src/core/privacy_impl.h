/* Argument checks of the privacy module shared with the models' own calibration code (the rf
 * DP-GD accounting), so that every model words a bad delta or epsilon the same way.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_PRIVACY_IMPL_H
#define DPD_PRIVACY_IMPL_H

#include "dpdyn/status.h"

/* DPD_OK when delta is in (0, 1); DPD_EINVAL naming delta and the range otherwise. */
__attribute__((visibility("hidden"))) int dpd__privacy_check_delta(double delta, dpd_err *err);

/* DPD_OK when eps is in (0, inf]; DPD_EINVAL naming eps and the range (0, inf) otherwise. */
__attribute__((visibility("hidden"))) int dpd__privacy_check_eps_positive(double eps, dpd_err *err);

#endif
