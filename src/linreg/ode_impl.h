/* Private helpers of the risk-ODE solver (ode.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_ODE_IMPL_H
#define DPD_ODE_IMPL_H

#include <sundials/sundials_nvector.h>

/* Replaces the hot operations of a serial N_Vector (and of its future clones)
 * by optimised kernels with the same semantics (ode_nvector.c). */
__attribute__((visibility("hidden"))) void dpd__ode_nvector_speedup(N_Vector v);

#endif /* DPD_ODE_IMPL_H */
