/* Finite-size correction of the clipping factors (docs/finite_size.md): the law of
 * s^2 = |x|^2/d as Gauss rules, and the corrected per-group coefficients of the risk ODE.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_FINITE_IMPL_H
#define DPD_FINITE_IMPL_H

#include <stddef.h>

#include "dpdyn/isa.h"
#include "dpdyn/linreg.h"
#include "dpdyn/noise.h"
#include "dpdyn/status.h"

#define DPD_FS_NODES 16       /* Gauss nodes of each law of s^2 */
#define DPD_FS_MAXTILT 32     /* groups with their own size-biased law (the largest lambda/d) */
#define DPD_FS_MAXEXACT 4     /* single directions integrated exactly over their own g_j ... */
#define DPD_FS_EXACT_EPS 0.05 /* ... those with lambda_j/d above it */
#define DPD_FS_EXACT_NODES 8  /* Gauss nodes of the law of s^2 without such a direction */
#define DPD_FS_GH_HALF 6      /* positive nodes of the Gauss-Hermite rule in g_j (12 in all) */
#define DPD_FS_GH_PARTNER 12  /* Gauss-Hermite nodes of a partner's g in a joint integral */
#define DPD_FS_COND_NODES 8   /* conditioning: Gauss nodes of the law without the top direction */
#define DPD_FS_COND_TILT 4    /* ... of its size-biased laws */
#define DPD_FS_JOINT_NODES 4  /* ... of the law without an exact direction and its partner */
#define DPD_FS_GP_HALF                                                                             \
  4 /* positive Gauss-Hermite nodes of an exact direction e > 0's own g (joint) */
#define DPD_FS_GH_PARTNER_SMALL                                                                    \
  6                         /* Gauss-Hermite nodes of direction 1 as exact direction 0's partner */
#define DPD_FS_EPS 0.02     /* groups with lambda/d > DPD_FS_EPS get their own law */
#define DPD_FS_TILT_NODES 8 /* Gauss nodes of each size-biased law */

/* A Gauss rule of a law on (0, inf): E h(s^2) ~ sum_k w[k] h(x[k]). */
typedef struct {
  int n;
  double x[DPD_FS_NODES], w[DPD_FS_NODES];
} dpd__fs_rule;

typedef struct {
  double m2;          /* E[(s^2 - 1)^2] = 2 sum lambda^2 / d^2 */
  double lmax_over_d; /* lambda_max / d */
  dpd__fs_rule base;  /* the law of s^2 */
  size_t m;           /* groups of the problem */
  double inv_d;
  size_t ntilt;                      /* groups with their own size-biased law */
  int *tilt_of;                      /* [m] index into tilt[], or -1 (first-order form) */
  dpd__fs_rule tilt[DPD_FS_MAXTILT]; /* law of s^2 + (lambda_j/d) chi^2_2 */
  double tilt_beta[DPD_FS_MAXTILT];  /* its lambda_j/d */
  /* Exact directions (docs/finite_size.md §2, "top directions"): the tilted groups of
   * multiplicity 1, the largest first, each with the law of s^2 without it (minus[e]) and the
   * Gauss-Hermite rule of its own g (gh_g > 0, gh_w: the weight of each of +-g, summing to 1/2) */
  size_t nexact;
  int exact_of_tilt[DPD_FS_MAXTILT]; /* index e, or -1 */
  size_t exact_group[DPD_FS_MAXEXACT];
  double exact_beta[DPD_FS_MAXEXACT];
  dpd__fs_rule minus[DPD_FS_MAXEXACT];
  double gh_g[DPD_FS_GH_HALF], gh_w[DPD_FS_GH_HALF];
  /* the partner's Gauss-Hermite rule in the joint integrals (all DPD_FS_GH_PARTNER nodes) */
  double gp_g[DPD_FS_GH_PARTNER], gp_w[DPD_FS_GH_PARTNER];
  double gq_g[DPD_FS_GP_HALF], gq_w[DPD_FS_GP_HALF]; /* the own g in a joint integral (g > 0) */
  double gs_g[DPD_FS_GH_PARTNER_SMALL], gs_w[DPD_FS_GH_PARTNER_SMALL]; /* direction 1 as partner */
  /* Conditioning on the first exact direction (docs/finite_size.md §2, "conditioning on the top
   * direction"): every other factor is averaged over its g, the residual given it being
   * non-central. cminus: the law of s^2 without it; ctilt[k]: cminus size-biased by tilted group
   * k; minus2[e] (e >= 1): the law without it and exact direction e. */
  int cond;
  dpd__fs_rule cminus;
  dpd__fs_rule ctilt[DPD_FS_MAXTILT];
  dpd__fs_rule minus2[DPD_FS_MAXEXACT];
  /* what the law was built from (dpd__fs_law_get's cache): d, lambda_max, mean_lambda_sq and
   * the groups' eigenvalues and multiplicities, copied */
  size_t key_d;
  double key_lmax, key_ml2;
  double *key_groups; /* [2m]: group_lambda, then group_mult */
  int refs;           /* holders (the cache counts as one) */
} dpd__fs_law;

/* The law of the problem, shared: the last law built is cached (process-wide, under a lock) and
 * handed out again while the problem's spectrum (d, lambda_max, mean_lambda_sq, the groups'
 * eigenvalues and multiplicities) is the same, so the tuner's and the error estimates' repeated
 * solves build it once. The law is the same bits either way. Release with dpd__fs_law_release. */
__attribute__((visibility("hidden"))) int dpd__fs_law_get(const dpd_linreg_problem *p,
                                                          const dpd__fs_law **out, dpd_err *err);
__attribute__((visibility("hidden"))) void dpd__fs_law_release(const dpd__fs_law *law);

/* m2 = 2 sum lambda_i^2 / d^2 of a problem (from mean_lambda_sq). */
__attribute__((visibility("hidden"))) double dpd__fs_m2(const dpd_linreg_problem *p);

/* Builds the Gauss rules of the problem's law of s^2 (docs/finite_size.md §3). *out owned by
 * the caller (dpd__fs_law_free). DPD_ENOMEM, or DPD_ESOLVER when the inversion fails. */
__attribute__((visibility("hidden"))) int dpd__fs_law_create(const dpd_linreg_problem *p,
                                                             dpd__fs_law **out, dpd_err *err);
__attribute__((visibility("hidden"))) void dpd__fs_law_free(dpd__fs_law *law);

/* The corrected coefficients at excess risk R, step eta and gamma (docs/finite_size.md §2):
 * A_j = A0 + (lambda_j/d) A1 and B_j = B0 + (lambda_j/d) B1 for first-order groups, A_j = At[k],
 * B_j = Bt[k] for tilted group k; d* their R-derivatives (Jacobian; for non-Gaussian laws the
 * derivatives of the G-terms are left out, an approximate Jacobian). */
typedef struct {
  double A0, A1, B0, B1, dA0, dA1, dB0, dB1;
  double At[DPD_FS_MAXTILT], Bt[DPD_FS_MAXTILT], dAt[DPD_FS_MAXTILT], dBt[DPD_FS_MAXTILT];
  double mu, nu; /* the averaged asymptotic-form factors E_s F_mu, E_s F_nu / (2P) (reporting) */
  double rank_one_mu, rank_one_nu; /* the rank-one terms added to mu and nu (reporting) */
  double dA_lbar, dB_lbar;         /* d A_j / d lbar, d B_j / d lbar (every group: Jacobian) */
  /* the rank-one terms per unit of s2 = sum lambda^2 S (they are linear in it): delta mu =
   * r1_mu s2, delta N = r1_N s2, and their R-derivatives (an exact direction j leaves out its
   * own share lambda_j^2 S_j, which its integral over g_j holds exactly) */
  double r1_mu, r1_N, dr1_mu, dr1_N;
  /* conditioning: the a1-derivatives of A0, A1, B0, B1, At, Bt (0 without it) */
  double aA0, aA1, aB0, aB1;
  double aAt[DPD_FS_MAXTILT], aBt[DPD_FS_MAXTILT];
  /* The factors themselves (the SDE): mu_j = mu0 + beta mu1, sigma_j = sig0, N_j = N0 + beta N1
   * for first-order groups; mut, sigt, Nt for tilted group k. */
  double mu0, mu1, sig0, N0, N1;
  double mut[DPD_FS_MAXTILT], sigt[DPD_FS_MAXTILT], Nt[DPD_FS_MAXTILT];
} dpd__fs_coef;

/* lbar = sum lambda_j^2 S_j / sum lambda_j S_j, the mean eigenvalue of the residual direction
 * (its state dependence is left out of the Jacobian).
 * Returns 0, 1 when R is outside the domain (R < 0 or not finite with a non-Gaussian law), or
 * the negative status of a failed quadrature (reason in *err). `derivs`: also the d* fields. */
/* a1 = sqrt(2 beta_1 S_1), the first exact direction's share of the residual: when positive (and
 * the law has one, Gaussian label noise, finite c; dpd__fs_cond_applies), every factor but the
 * rank-one moments is conditioned on that direction's g exactly, and lbar must then leave out
 * its share lambda_1^2 S_1. */
__attribute__((visibility("hidden"))) int dpd__fs_coef_eval(const dpd__fs_law *law,
                                                            const dpd_noise_spec *noise, double c,
                                                            double R, double lbar, double a1,
                                                            double eta, double gamma, int derivs,
                                                            dpd__fs_coef *co, dpd_err *err);
/* The same on the instruction-set path `isa` (dpd__fs_coef_eval: DPD_ISA_AUTO); every path gives
 * the same bits (tests/unit/test_finite.c). */
__attribute__((visibility("hidden"))) int
dpd__fs_coef_eval_isa(const dpd__fs_law *law, const dpd_noise_spec *noise, double c, double R,
                      double lbar, double a1, double eta, double gamma, int derivs, dpd_isa isa,
                      dpd__fs_coef *co, dpd_err *err);
__attribute__((visibility("hidden"))) int
dpd__fs_cond_applies(const dpd__fs_law *law, const dpd_noise_spec *noise, double c, double a1);

/* Expectation of h(s^2) under a rule. */
/* An exact direction e at amplitude a = sqrt(2 beta S_j) (its share of the residual) and full
 * risk P (Gaussian label noise, clipping at c): K1 = E[g psi], K2 = E[g^2 psi^2] over g ~ N(0,1),
 * s^2_{-j} ~ minus[e] and the rest of the residual U ~ N(0, 2P - a^2) independent, psi the
 * residual a g + U clipped at c/sqrt(beta g^2 + s^2_{-j}); with their a- and P-derivatives.
 * Returns 0, or 1 when 2P - a^2 is not positive. */
typedef struct {
  double k1, k2, k1a, k2a, k1p, k2p;
  double k1q, k2q; /* derivatives in the partner's share (joint integral; 0 otherwise) */
} dpd__fs_exact_k;
/* The partner of exact direction e in the joint integrals under conditioning: exact direction
 * 0 for e > 0, exact direction 1 for e = 0, or -1 when the law has no partner for it (it does not
 * condition, or e = 0 is its only exact direction). */
static inline int dpd__fs_partner(const dpd__fs_law *law, size_t e) {
  return !law->cond ? -1 : e > 0 ? 0 : law->nexact > 1 ? 1 : -1;
}
/* With a1 > 0 (conditioning, dpd__fs_coef_eval) the integral runs jointly over the g of a
 * partner direction with share a1: exact direction 0 for e > 0, exact direction 1 for e = 0;
 * s^2 without both ~ minus2[e] (minus2[1] for e = 0). The caller's rank-one term then leaves out
 * the partner's share as well. */
__attribute__((visibility("hidden"))) int dpd__fs_exact_eval(const dpd__fs_law *law, size_t e,
                                                             double c, double P, double a,
                                                             double a1, dpd__fs_exact_k *o);
__attribute__((visibility("hidden"))) int dpd__fs_exact_eval_isa(const dpd__fs_law *law, size_t e,
                                                                 double c, double P, double a,
                                                                 double a1, dpd_isa isa,
                                                                 dpd__fs_exact_k *o);

__attribute__((visibility("hidden"))) double
dpd__fs_rule_expect(const dpd__fs_rule *rule, double (*h)(double, void *), void *arg);

#endif /* DPD_FINITE_IMPL_H */
