/* Private parts of the Volterra solver (volterra.c, toeplitz.c), exposed for white-box tests.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_VOLTERRA_IMPL_H
#define DPD_VOLTERRA_IMPL_H

#include <stddef.h>

#include "dpdyn/status.h"
#include "dpdyn/volterra.h"

/* ---- Lower-triangular Toeplitz engine (toeplitz.c) -------------------------------------------
 * For a kernel w_0..w_{n-1}, T is the n x n lower-triangular Toeplitz matrix T_{k,i} = w_{k-i}
 * (i <= k). The engine computes the causal convolution y = T x and solves (I - T) x = g, both
 * by the same blocked recursion: a block of length L (a power of two) is split in halves; the
 * contribution of the first half to the second is one circular convolution of length L (no
 * wrap-around reaches the outputs used) computed with FFTW r2c/c2r transforms against a kernel
 * spectrum precomputed per block length; blocks of length <= leaf are done directly.
 * O(n log^2 n) operations. Every array is allocated and every FFT planned in create. */
typedef struct dpd__ltt dpd__ltt;

/* Engine for kernels of length up to `cap` (>= 1). `leaf` >= 1 is the direct block length;
 * `fftw_flags` are FFTW planner flags (FFTW_ESTIMATE, ...). Returns DPD_OK, DPD_EINVAL or
 * DPD_ENOMEM (also when FFTW cannot plan). Not thread-safe (FFTW planner). */
__attribute__((visibility("hidden"))) int
dpd__ltt_create(size_t cap, size_t leaf, unsigned fftw_flags, dpd__ltt **out, dpd_err *err);
__attribute__((visibility("hidden"))) void dpd__ltt_free(dpd__ltt *ltt);

/* Sets the kernel w[0..n) (copied), 1 <= n <= cap, and transforms it for every block length. */
__attribute__((visibility("hidden"))) void dpd__ltt_kernel_set(dpd__ltt *ltt, const double *w,
                                                               size_t n);

/* y[k] = sum_{i <= k} w[k - i] x[i], k < n (n of the kernel); x and y must not overlap. */
__attribute__((visibility("hidden"))) void dpd__ltt_apply(dpd__ltt *ltt, const double *x,
                                                          double *y);

/* In place: on entry x = g, on exit x solves x[k] = g[k] + sum_{i <= k} w[k - i] x[i], that is
 * (1 - w_0) x[k] = g[k] + sum_{i < k} w[k - i] x[i] by forward substitution. */
__attribute__((visibility("hidden"))) void dpd__ltt_solve(dpd__ltt *ltt, double *x);

/* ---- Product-integration weights (volterra.c) ------------------------------------------------
 * For the exponential e^{-a v} on one step v in [0, h], with x = a h >= 0:
 *   int_0^h e^{-a v} (1 - v/h) dv = h phi_a(x),   phi_a(x) = (x - 1 + e^{-x}) / x^2,
 *   int_0^h e^{-a v} (v/h) dv     = h phi_b(x),   phi_b(x) = (1 - e^{-x} - x e^{-x}) / x^2,
 * computed without cancellation (series below x = 1/2). */
__attribute__((visibility("hidden"))) double dpd__volterra_phi_a(double x);
__attribute__((visibility("hidden"))) double dpd__volterra_phi_b(double x);

/* ---- Kernel selection (volterra.c) ------------------------------------------------------------
 * The tabulation kernels exist for baseline x86-64 (level 0), AVX2 (1) and AVX-512 (2); a plan
 * uses the best the CPU has. This selects another one, for tests that check that all give
 * bit-identical results. Returns 0, or -1 when the CPU lacks the level. */
__attribute__((visibility("hidden"))) int dpd__volterra_plan_simd_set(dpd_volterra_plan *plan,
                                                                      int level);

#endif /* DPD_VOLTERRA_IMPL_H */
