/* Internal interface of rf_sim.c for the tests (not installed).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RF_SIM_IMPL_H
#define DPD_RF_SIM_IMPL_H

#include "dpdyn/rf.h"
#include "dpdyn/isa.h"

/* dpd_rf_clipped_gradient_eval with the kernels of `isa` (DPD_ISA_SCALAR, _AVX2, _AVX512; a
 * path this CPU cannot run falls back to the best it can, isa/isa_impl.h). Every path gives
 * the same bits. */
__attribute__((visibility("hidden"))) size_t
dpd__rf_clipped_gradient_isa(const dpd_rf_problem *problem, const double *theta, double C,
                             double *g, double *r, dpd_isa isa);

/* Row blocks the DP-GD kernels cut `rows` rows into (rf_sim.c: from the shape alone). */
__attribute__((visibility("hidden"))) size_t dpd__rf_blocks(size_t rows);

/* dpd_rf_clipped_gradient_eval with the row blocks on `threads` threads, holding `held` >= 1
 * block partials at once (rounds of `held` blocks). Every (threads, held) gives the same bits.
 * Returns SIZE_MAX when out of memory. */
__attribute__((visibility("hidden"))) size_t
dpd__rf_clipped_gradient_threads(const dpd_rf_problem *problem, const double *theta, double C,
                                 double *g, double *r, int threads, size_t held);

#endif
