/* Private helpers of the risk-ODE solver (ode.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_ODE_IMPL_H
#define DPD_ODE_IMPL_H

#include <sundials/sundials_nvector.h>

#include "dpdyn/ode.h"

/* Replaces the hot operations of a serial N_Vector (and of its future clones)
 * by optimised kernels with the same semantics (ode_nvector.c). */
__attribute__((visibility("hidden"))) void dpd__ode_nvector_speedup(N_Vector v);

/* The validation of dpd_ode_solve (the reason names the key, the value and the allowed range),
 * shared with the Volterra solver, which takes the same model configuration. */
__attribute__((visibility("hidden"))) int dpd__ode_validate(const dpd_linreg_problem *problem,
                                                            const dpd_schedule *schedule,
                                                            const dpd_ode_config *cfg,
                                                            dpd_err *err);

/* The names of the methods of the table whose flags include all of `with` and none of `without`
 * (0, 0: every method), ", "-separated ("bdf, adams, volterra"), into buf[size] (truncated to
 * fit; always terminated when size > 0): the "allowed" list of messages. */
__attribute__((visibility("hidden"))) void dpd__ode_method_names(unsigned with, unsigned without,
                                                                 char *buf, size_t size);

#endif /* DPD_ODE_IMPL_H */
