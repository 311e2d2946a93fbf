/* Private interface of the SDE integrator (sde.c): one Euler-Maruyama step of a diagonal SDE.
 * SPDX-License-Identifier: MIT
 *
 * The stepper integrates, component by component (i = 0..dim-1),
 *
 *   dX_i = k a_i X_i dt + b_i (q + m X_i) dW_i + p dV_i,
 *
 * W, V independent dim-dimensional Brownian motions, with per-component coefficient arrays
 * a, b and scalar factors (k, q, m, p) that the caller may change from step to step (they may
 * depend on t and on the whole state, as in H-DP-SGD, where P couples the components). This
 * covers
 *   - H-DP-SGD in the eigenbasis (docs/math.md §1.6): a = lambda, k = -eta~ mu_c(P), b =
 * sqrt(lambda), q = eta~ sqrt(2 nu_c(P) P / n), m = 0, p = (2 sqrt(d) / n) c sigma~;
 *   - the Ornstein-Uhlenbeck process dX = -A X dt + B dW: a = A, k = -1, b = B, q = 1, m = p = 0;
 *   - geometric Brownian motion dX = a X dt + b X dW: k = 1, q = 0, m = 1, p = 0,
 * so that the order tests (tests/unit/test_sde.c) drive the very code the integrator uses.
 *
 * Euler-Maruyama (Kloeden & Platen, Numerical Solution of Stochastic Differential Equations,
 * Springer 1992, eq. 9.1.1 / 10.2.1) over a step h with standard Gaussians z_i, v_i:
 *
 *   X_i <- X_i + (k h) a_i X_i + sqrt(h) b_i (q + m X_i) z_i + (p sqrt(h)) v_i,
 *
 * so that sqrt(h) z_i and sqrt(h) v_i are the Brownian increments. The coefficients are taken
 * at the left end of the step (Ito). */
#ifndef DPD_SDE_IMPL_H
#define DPD_SDE_IMPL_H

#include <stddef.h>

/* Scalar factors of one step (see the equation above). */
typedef struct {
  double h; /* step > 0 */
  double k; /* drift factor: the drift of X_i is k a_i X_i */
  double q; /* additive part of the diffusion on W: b_i q */
  double m; /* multiplicative part of the diffusion on W: b_i m X_i */
  double p; /* isotropic additive diffusion on V */
} dpd__sde_em_coef;

/* One Euler-Maruyama step of the SDE above, in place on x[0..dim). a, b, z [dim] are borrowed;
 * v [dim] (the Gaussians of V) may be NULL when coef->p == 0. Returns the quadratic form
 * (1/2) sum_i a_i X_i^2 of the new state (the excess risk for H-DP-SGD), reduced in a fixed
 * order. The arithmetic is exactly that of the integrator's inner loop (the same inlined body,
 * compiled without FMA contraction), so it is bit-identical on every instruction set. Pure
 * apart from writing x; no allocation; thread-safe. */
__attribute__((visibility("hidden"))) double
dpd__sde_em_step(size_t dim, const double *a, const double *b, const dpd__sde_em_coef *coef,
                 const double *z, const double *v, double *x);

#endif /* DPD_SDE_IMPL_H */
