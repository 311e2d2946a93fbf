/* Private helpers of the risk-ODE solver (ode.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_ODE_IMPL_H
#define DPD_ODE_IMPL_H

#include <sundials/sundials_nvector.h>

#include "dpdyn/ode.h"

/* The queue of deferred vector operations of one solve (ode_nvector.c); one per solve, shared
 * by all its vectors, freed after them. dpd__ode_fuse_new returns NULL when out of memory. */
typedef struct dpd__ode_fuse dpd__ode_fuse;
__attribute__((visibility("hidden"))) dpd__ode_fuse *dpd__ode_fuse_new(size_t n);
__attribute__((visibility("hidden"))) void dpd__ode_fuse_free(dpd__ode_fuse *fuse);

/* Replaces the operations of a serial N_Vector of length n (and of its future clones) by
 * optimised kernels with the same results, bit for bit, whose element-wise operations are
 * queued in `fuse` and executed together, cache-blocked, when a result is needed
 * (ode_nvector.c). Returns 0, or -1 when out of memory (v is then unchanged). */
__attribute__((visibility("hidden"))) int dpd__ode_nvector_speedup(N_Vector v, dpd__ode_fuse *fuse);

/* Benchmarks only (bench/bench_ode.c), for solves started afterwards: mode 0 (default) queues
 * and blocks; 1 executes every operation at once, one pass over the vectors per operation (the
 * kernels as they were before the queue). Both give the same results, bit for bit. Process-wide and
 * not synchronised: call it only while no solve runs. */
__attribute__((visibility("hidden"))) void dpd__ode_nvector_bench_mode(int mode);

/* The methods, defined next to their solvers (ode.c, volterra.c) and listed in ode_method.c. */
__attribute__((visibility("hidden"))) extern const dpd_ode_method_type dpd__ode_method_bdf;
__attribute__((visibility("hidden"))) extern const dpd_ode_method_type dpd__ode_method_adams;
__attribute__((visibility("hidden"))) extern const dpd_ode_method_type dpd__ode_method_volterra;

/* The validation of dpd_ode_solve (ode_config.c; the reason names the key, the value and the
 * allowed range), shared with the Volterra solver, which takes the same model configuration,
 * and with dpd_ode_rhs_eval / dpd_ode_jtimes_eval. `type` is the method of cfg->method when the
 * caller knows it (NULL: unknown); with `method_names` non-NULL (the table's names, for the
 * message) a NULL type is refused as an unknown method, with NULL the method is not checked
 * (a caller that does not use it and has no table: the Volterra plan). */
__attribute__((visibility("hidden"))) int
dpd__ode_validate(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                  const dpd_ode_config *cfg, const dpd_ode_method_type *type,
                  const char *method_names, dpd_err *err);

/* dpd_ode_rhs_eval and dpd_ode_jtimes_eval (ode.h) on a configuration already validated
 * (ode.c; the public functions validate in ode_method.c, beside the method table). */
__attribute__((visibility("hidden"))) int dpd__ode_rhs_eval(const dpd_linreg_problem *problem,
                                                            const dpd_schedule *schedule,
                                                            const dpd_ode_config *cfg, double t,
                                                            const double *S, double *dSdt);
__attribute__((visibility("hidden"))) int
dpd__ode_jtimes_eval(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                     const dpd_ode_config *cfg, double t, const double *S, const double *v,
                     double *Jv);

/* The names of the methods of the table whose flags include all of `with` and none of `without`
 * (0, 0: every method), ", "-separated ("bdf, adams, volterra"), into buf[size] (truncated to
 * fit; always terminated when size > 0): the "allowed" list of messages. */
__attribute__((visibility("hidden"))) void dpd__ode_method_names(unsigned with, unsigned without,
                                                                 char *buf, size_t size);

#endif /* DPD_ODE_IMPL_H */
