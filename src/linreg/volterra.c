/* The Volterra form of the risk ODE: product integration on a graded uniform mesh, FFT solves.
 * SPDX-License-Identifier: MIT
 *
 * Equation (docs/math.md §1.9 with frozen clipping factors; derivation in docs/volterra.md): for
 * constant eta~, mu, nu and C = 2 c^2 gamma^2 sigma~^2 the grouped system of docs/math.md §1.7,
 *   dS_j/dt = -a_j S_j + m_j (b_j (R + zeta^2/2) + C),  a_j = 2 lambda_j eta~ mu,
 *   b_j = gamma lambda_j eta~^2 nu,
 * is linear, and variation of constants for every S_j, summed into R = (1/d) sum lambda_j S_j,
 * gives R(t) = F(t) + int_0^t K(t - s) R(s) ds with
 *   K(tau) = sum_j kappa_j e^{-a_j tau},            kappa_j = m_j lambda_j b_j / d,
 *   F(t)   = sum_j [ s_j e^{-a_j t} + g_j (1 - e^{-a_j t}) ],   s_j = lambda_j S_j(0) / d,
 *   g_j    = m_j lambda_j (b_j zeta^2/2 + C) / (d a_j),
 * g_j (1 - e^{-a_j t}) being the closed form of the forcing integral of docs/math.md §1.9
 * (int_0^t e^{-a_j tau} dtau = -expm1(-a_j t) / a_j). Restarted at a time T with the states
 * S_j(T), the same equation holds for R(T + .) with s_j = lambda_j S_j(T) / d.
 *
 * Discretisation: trapezoidal product integration (P. Linz, Analytical and Numerical Methods
 * for Volterra Equations, SIAM 1985, product integration methods; H. Brunner, Collocation
 * Methods for Volterra Integral and Related Functional Equations, Cambridge 2004): R is
 * replaced by its piecewise linear interpolant on a uniform mesh of step h and every
 * exponential of K is integrated exactly against it. On one step, with x = a h, q = e^{-x},
 *   int_{t_k}^{t_{k+1}} e^{-a (t_n - s)} R(s) ds = q^{n-k-1} h (phi_a(x) R_{k+1} + phi_b(x) R_k),
 * so with Ahat_l = sum_j kappa_j h phi_a(x_j) q_j^l and Bhat_l = sum_j kappa_j h phi_b(x_j) q_j^l
 * the values R_1..R_n solve the lower-triangular Toeplitz system
 *   (1 - W_0) R_k = F_k + Bhat_{k-1} R_0 + sum_{0<i<k} W_{k-i} R_i,
 *   W_0 = Ahat_0,  W_l = Ahat_l + Bhat_{l-1},
 * solved by the blocked FFT recursion of toeplitz.c in O(n log^2 n). The scheme is the
 * exponential integrator of every mode S_j with R linear on each step, so the states at the end
 * of a mesh segment follow in closed form:
 *   S_j(T + n h) = q^n S_j(T) + m_j [ b_j h sum_k q^{n-1-k} (phi_b R_k + phi_a R_{k+1})
 *                                     + (b_j zeta^2/2 + C) (1 - q^n) / a_j ].
 *
 * Graded start: the fast modes (a_j h up to 10^3 for power-law spectra) relax within the first
 * step, where R is far from linear, and the trapezoidal error of that step spreads to all t as
 * O(h) instead of O(h^2). As for weakly singular kernels (graded meshes, Brunner
 * 2004), the first n_g main steps [0, n_g h] are replaced by uniform segments whose steps
 * double: 2 n_g steps of h / 2^L, then n_g steps of h / 2^(L-1), ..., h / 2, with L the least
 * integer for which a_max h / 2^L <= start_x. At the start of every segment the modes fast on
 * its step have decayed by e^{-n_g a h_seg}; every segment is a restarted Volterra equation
 * (its F from the states S_j(T), which the closed form above carries across). Each segment
 * adds O(m n_g) work; the powers of q for the next segment come by squaring (1 - q^2 =
 * (1 - q)(2 - (1 - q)) without cancellation), one exp and one expm1 per group per solve.
 *
 * Richardson extrapolation (L. F. Richardson, Phil. Trans. R. Soc. A 226 (1927) 299): the
 * whole mesh is solved twice, (n, n_g) and (2n, 2n_g) with the same L (every step halved), and
 * (4 R_fine - R_coarse) / 3 removes the h^2 term of the error.
 *
 * Tabulation, the O(m n) part: the powers q_j^n are built by repeated multiplication and
 * 1 - q_j^n by the recurrence E_{n+1} = E_n + q_j^n (1 - q_j) from 1 - q_j = -expm1(-x_j), so
 * F is a sum of non-negative terms with relative error O(n eps) (no cancellation between
 * sum g_j and sum g_j q_j^n). Groups are processed in blocks that stay in L1; within a block the
 * sums over groups use eight explicit partial sums in a fixed order, the kernels are compiled
 * for AVX-512, AVX2 and baseline x86-64, and this file is built without FMA contraction, so all
 * three give bit-identical results. Powers below POWER_FLOOR are set to zero (they would only
 * add subnormal arithmetic, changing R by less than 1e-280 relative). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "core/error_impl.h"
#include "isa/isa_impl.h"
#include "dpdyn/volterra.h"
#include "linreg/ode_impl.h"
#include "linreg/volterra_impl.h"

/* Defaults of dpd_volterra_config (STYLE 25: one place). */
static const size_t volterra_steps_default = 400;
static const size_t volterra_start_steps_default = 32;
static const double volterra_start_x_default = 1.0;
static const size_t volterra_leaf_default = 64;
/* Largest N: the finest grid 2N and its FFT lengths stay far inside FFTW's int sizes. */
static const size_t volterra_steps_max = (size_t)1 << 26;
/* Largest number of graded segments L (mesh positions are counted in units of h / 2^L). */
static const int volterra_levels_max = 30;

/* Groups per tabulation block (a multiple of the 8 vector lanes; 8 arrays of BLOCK doubles =
 * 16 KiB, in L1). */
#define BLOCK 256
/* Powers q^n below this are flushed to zero (see the file comment). */
#define POWER_FLOOR 1e-280
/* Below this x, phi_a and phi_b are summed from their Taylor series (SERIES_TERMS terms:
 * the first term left out is below 0.5^18 / 18! < 1e-20). */
#define SERIES_X 0.5
#define SERIES_TERMS 18

dpd_volterra_config dpd_volterra_config_default(void) {
  dpd_volterra_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.steps = volterra_steps_default;
  cfg.richardson = 1;
  cfg.start_steps = volterra_start_steps_default;
  cfg.start_x = volterra_start_x_default;
  cfg.effort = DPD_VOLTERRA_FFT_ESTIMATE;
  cfg.leaf = volterra_leaf_default;
  return cfg;
}

/* ---- Product-integration weights ------------------------------------------------------------ */

/* phi_a(x) = int_0^1 e^{-x u} (1 - u) du = sum_k (-x)^k / (k! (k+1) (k+2)),
 * phi_b(x) = int_0^1 e^{-x u} u du       = sum_k (-x)^k / (k! (k+2)):
 * Taylor coefficients 1 / (k! (k+1) (k+2)) and 1 / (k! (k+2)), k < SERIES_TERMS. */
static const double series_a[SERIES_TERMS] = {
    5.00000000000000000e-01, 1.66666666666666657e-01, 4.16666666666666644e-02,
    8.33333333333333322e-03, 1.38888888888888894e-03, 1.98412698412698413e-04,
    2.48015873015873016e-05, 2.75573192239858925e-06, 2.75573192239858883e-07,
    2.50521083854417202e-08, 2.08767569878681002e-09, 1.60590438368216133e-10,
    1.14707455977297245e-11, 7.64716373181981641e-13, 4.77947733238738525e-14,
    2.81145725434552060e-15, 1.56192069685862253e-16, 8.22063524662432950e-18};
static const double series_b[SERIES_TERMS] = {
    5.00000000000000000e-01, 3.33333333333333315e-01, 1.25000000000000000e-01,
    3.33333333333333329e-02, 6.94444444444444406e-03, 1.19047619047619058e-03,
    1.73611111111111118e-04, 2.20458553791887140e-05, 2.48015873015873016e-06,
    2.50521083854417176e-07, 2.29644326866549102e-08, 1.92708526041859370e-09,
    1.49119692770486430e-10, 1.07060292245477428e-11, 7.16921599858107782e-13,
    4.49833160695283296e-14, 2.65526518465965852e-15, 1.47971434439237934e-16};

/* phi_a, phi_b from e1 = 1 - e^{-x} = -expm1(-x) and q = e^{-x}: the series (Horner) below
 * SERIES_X, else the closed forms, written as ((...)/x)/x so that x^2 never overflows. The
 * block kernels (block_fill) evaluate the same expressions in the same order. */
static void phi_eval(double x, double e1, double q, double *phi_a, double *phi_b) {
  if (x < SERIES_X) {
    double a = series_a[SERIES_TERMS - 1], b = series_b[SERIES_TERMS - 1];
    for (int k = SERIES_TERMS - 2; k >= 0; k--) {
      a = series_a[k] - x * a;
      b = series_b[k] - x * b;
    }
    *phi_a = a;
    *phi_b = b;
  } else {
    double inv = 1.0 / x;
    *phi_a = (1.0 - e1 * inv) * inv;
    *phi_b = (e1 * inv - q) * inv;
  }
}

double dpd__volterra_phi_a(double x) {
  double a, b;
  phi_eval(x, -expm1(-x), exp(-x), &a, &b);
  return a;
}

double dpd__volterra_phi_b(double x) {
  double a, b;
  phi_eval(x, -expm1(-x), exp(-x), &a, &b);
  return b;
}

/* ---- Model ---------------------------------------------------------------------------------- */

typedef struct {
  double eta, mu, nu;
  double gamma, zeta2;
  double C;            /* 2 c^2 gamma^2 sigma~^2 */
  double release_jump; /* 2 c^2 gamma^2 eta~(1)^2 / rho^2 */
} vt_model;

/* What one pass over the groups reads and writes. Per group j (lambda_j, m_j):
 *   a_j = lambda_j two_eta_mu,  b_j = lambda_j b_scale,  kappa_j = m_j lambda_j b_j inv_d,
 *   force_j = m_j (b_j half_zeta2 + C),  g_j = force_j g_scale  (= lambda_j force_j / (d a_j)). */
typedef struct {
  size_t m;                 /* groups */
  const double *lam, *mult; /* [m] problem groups (borrowed) */
  double *st, *q, *e1;      /* [m] S_j at the segment start, e^{-a_j hs}, 1 - e^{-a_j hs} */
  double two_eta_mu, b_scale, inv_d, half_zeta2, C, g_scale;
  size_t steps;      /* segment steps n */
  double hs;         /* segment step */
  double *a, *b, *f; /* pass A: [steps + 1] Ahat, Bhat, F (accumulated) */
  const double *r;   /* pass B: [steps + 1] R_0..R_n */
} pass_args;

/* ---- Kernels over blocks of groups ---------------------------------------------------------- */

/* One block of BLOCK groups (zero-padded past m), for pass A or pass B. */
typedef struct {
  double q[BLOCK] __attribute__((aligned(64))); /* e^{-a h} */
  double e1[BLOCK];                             /* 1 - e^{-a h} */
  double p[BLOCK];                              /* e^{-a k h} */
  double e[BLOCK];                              /* 1 - e^{-a k h} */
  double ca[BLOCK];                             /* A: kappa h phi_a(a h);  B: phi_a(a h) */
  double cb[BLOCK];                             /* A: kappa h phi_b(a h);  B: phi_b(a h) */
  double s[BLOCK];                              /* A: lambda S(T) / d;     B: the history sum M */
  double g[BLOCK];                              /* A: forcing asymptote */
} tab_block;

/* Eight doubles: GCC vector extension. Element-wise operations only (the same results in
 * every clone: gcc splits them into 4-wide or 2-wide instructions where 8-wide are missing). */
typedef double v8d __attribute__((vector_size(64)));
typedef long long v8l __attribute__((vector_size(64)));

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* The vector helpers are always inlined into their callers (no call ever passes a v8d), so
 * gcc's note that 64-byte vector arguments change the ABI without AVX-512 does not apply. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

ALWAYS_INLINE v8d v8_load(const double *x) {
  v8d v;
  memcpy(&v, x, sizeof v);
  return v;
}

ALWAYS_INLINE void v8_store(double *x, v8d v) {
  memcpy(x, &v, sizeof v);
}

ALWAYS_INLINE v8d v8_set1(double x) {
  v8d v = {x, x, x, x, x, x, x, x};
  return v;
}

/* Sum of the 8 lanes in a fixed order. */
ALWAYS_INLINE double v8_sum(v8d v) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

/* p where p >= POWER_FLOOR, else 0 (bitwise select: p is never negative). */
ALWAYS_INLINE v8d v8_floor(v8d p) {
  v8l keep = p >= v8_set1(POWER_FLOOR);
  return (v8d)((v8l)p & keep);
}

/* Loads groups [j0, j0 + BLOCK) into blk for pass A (weights = 1) or B (weights = 0); the
 * groups past m are zero. phi_a, phi_b come from the series (Horner, term by term over the
 * block) below SERIES_X and from the closed forms above, both computed and then selected, so
 * that every loop vectorises. */
ALWAYS_INLINE void block_fill(tab_block *restrict blk, const pass_args *pa, size_t j0,
                              int weights) {
  size_t count = pa->m - j0 < BLOCK ? pa->m - j0 : BLOCK;
  double *restrict x = blk->p, *restrict sa = blk->ca, *restrict sb = blk->cb;
  memset(blk, 0, sizeof *blk);
  for (size_t k = 0; k < count; k++) {
    x[k] = pa->lam[j0 + k] * pa->two_eta_mu * pa->hs;
    blk->q[k] = pa->q[j0 + k];
    blk->e1[k] = pa->e1[j0 + k];
  }
  for (size_t k = 0; k < BLOCK; k++) {
    sa[k] = series_a[SERIES_TERMS - 1];
    sb[k] = series_b[SERIES_TERMS - 1];
  }
  for (int t = SERIES_TERMS - 2; t >= 0; t--) {
    for (size_t k = 0; k < BLOCK; k++) {
      double xs = x[k] < SERIES_X ? x[k] : 0.0;
      sa[k] = series_a[t] - xs * sa[k];
      sb[k] = series_b[t] - xs * sb[k];
    }
  }
  for (size_t k = 0; k < count; k++) {
    double inv = 1.0 / x[k], e1 = blk->e1[k];
    double ca = (1.0 - e1 * inv) * inv, cb = (e1 * inv - blk->q[k]) * inv;
    double phi_a = x[k] < SERIES_X ? sa[k] : ca, phi_b = x[k] < SERIES_X ? sb[k] : cb;
    double lam = pa->lam[j0 + k], mult = pa->mult[j0 + k];
    double b = lam * pa->b_scale, kappa = mult * lam * b * pa->inv_d;
    if (weights) {
      blk->ca[k] = kappa * pa->hs * phi_a;
      blk->cb[k] = kappa * pa->hs * phi_b;
      blk->s[k] = lam * pa->st[j0 + k] * pa->inv_d;
      blk->g[k] = mult * (b * pa->half_zeta2 + pa->C) * pa->g_scale;
    } else {
      blk->ca[k] = phi_a;
      blk->cb[k] = phi_b;
    }
  }
  for (size_t k = count; k < BLOCK; k++) {
    blk->ca[k] = blk->cb[k] = 0.0;
  }
  for (size_t k = 0; k < count; k++) {
    blk->p[k] = 1.0;
  }
}

/* Pass A on one block for steps k0 .. k0 + ku - 1 (ku <= 4, a constant at each call site):
 * adds sum_j ca_j q_j^k to a[k], sum_j cb_j q_j^k to b[k] and sum_j (s_j q_j^k + g_j (1 -
 * q_j^k)) to f[k]; then advances p, e. The sums over j run in the same order for every ku. */
ALWAYS_INLINE void tab_steps(tab_block *restrict blk, size_t k0, int ku, const pass_args *pa) {
  v8d sa[4], sb[4], sf[4];
  for (int u = 0; u < ku; u++) {
    sa[u] = sb[u] = sf[u] = v8_set1(0.0);
  }
  for (size_t i = 0; i < BLOCK; i += 8) {
    v8d p = v8_load(blk->p + i), e = v8_load(blk->e + i), q = v8_load(blk->q + i);
    v8d e1 = v8_load(blk->e1 + i), ca = v8_load(blk->ca + i), cb = v8_load(blk->cb + i);
    v8d s = v8_load(blk->s + i), g = v8_load(blk->g + i);
    for (int u = 0; u < ku; u++) {
      sa[u] += ca * p;
      sb[u] += cb * p;
      sf[u] += s * p + g * e;
      e += p * e1;
      p = v8_floor(p * q);
    }
    v8_store(blk->p + i, p);
    v8_store(blk->e + i, e);
  }
  for (int u = 0; u < ku; u++) {
    pa->a[k0 + u] += v8_sum(sa[u]);
    pa->b[k0 + u] += v8_sum(sb[u]);
    pa->f[k0 + u] += v8_sum(sf[u]);
  }
}

/* 1 if some power in the block is non-zero. */
ALWAYS_INLINE int block_live(const tab_block *restrict blk) {
  v8l any = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < BLOCK; i += 8) {
    any |= v8_load(blk->p + i) != v8_set1(0.0);
  }
  return (any[0] | any[1] | any[2] | any[3] | any[4] | any[5] | any[6] | any[7]) != 0;
}

/* Pass A over every block, KU steps at a time. Once every power of a block is zero (checked
 * every 64 steps) only its constant sum g (1 - q^k) remains, added directly. */
ALWAYS_INLINE void pass_tab_body(tab_block *restrict blk, const pass_args *pa, int ku) {
  size_t n = pa->steps;
  for (size_t j0 = 0; j0 < pa->m; j0 += BLOCK) {
    size_t k = 0;
    block_fill(blk, pa, j0, 1);
    while (k <= n) {
      if (ku == 4 && k + 4 <= n + 1) {
        tab_steps(blk, k, 4, pa);
        k += 4;
      } else if (ku >= 2 && k + 2 <= n + 1) {
        tab_steps(blk, k, 2, pa);
        k += 2;
      } else {
        tab_steps(blk, k, 1, pa);
        k += 1;
      }
      if (k % 64 == 0 && k <= n && !block_live(blk)) {
        v8d sg = v8_set1(0.0);
        double gsum;
        for (size_t i = 0; i < BLOCK; i += 8) {
          sg += v8_load(blk->g + i) * v8_load(blk->e + i);
        }
        gsum = v8_sum(sg);
        for (; k <= n; k++) {
          pa->f[k] += gsum;
        }
      }
    }
  }
}

/* Pass B on one block for steps k0 .. k0 + ku - 1: M = q M + (phi_b R_k + phi_a R_{k+1}) (in
 * s), p = q^k, e = 1 - q^k. */
ALWAYS_INLINE void prop_steps(tab_block *restrict blk, size_t k0, int ku, const double *r) {
  for (size_t i = 0; i < BLOCK; i += 8) {
    v8d p = v8_load(blk->p + i), e = v8_load(blk->e + i), q = v8_load(blk->q + i);
    v8d e1 = v8_load(blk->e1 + i), ca = v8_load(blk->ca + i), cb = v8_load(blk->cb + i);
    v8d M = v8_load(blk->s + i);
    for (int u = 0; u < ku; u++) {
      M = q * M + (cb * v8_set1(r[k0 + u]) + ca * v8_set1(r[k0 + u + 1]));
      e += p * e1;
      p = v8_floor(p * q);
    }
    v8_store(blk->p + i, p);
    v8_store(blk->e + i, e);
    v8_store(blk->s + i, M);
  }
}

/* Pass B over every block: the states at the end of the segment, then q, e1 for a step twice
 * as long (1 - q^2 = e1 (2 - e1) without cancellation). */
ALWAYS_INLINE void pass_prop_body(tab_block *restrict blk, const pass_args *pa, int ku) {
  size_t n = pa->steps;
  for (size_t j0 = 0; j0 < pa->m; j0 += BLOCK) {
    size_t count = pa->m - j0 < BLOCK ? pa->m - j0 : BLOCK, k = 0;
    block_fill(blk, pa, j0, 0);
    while (k < n) {
      if (ku == 4 && k + 4 <= n) {
        prop_steps(blk, k, 4, pa->r);
        k += 4;
      } else {
        prop_steps(blk, k, 1, pa->r);
        k += 1;
      }
    }
    for (size_t i = 0; i < count; i++) {
      size_t j = j0 + i;
      double lam = pa->lam[j], mult = pa->mult[j], e1 = pa->e1[j];
      double b = lam * pa->b_scale, force = mult * (b * pa->half_zeta2 + pa->C);
      pa->st[j] = blk->p[i] * pa->st[j] + b * mult * pa->hs * blk->s[i] +
                  force * blk->e[i] / (lam * pa->two_eta_mu);
      pa->e1[j] = e1 * (2.0 - e1);
      pa->q[j] *= pa->q[j];
    }
  }
}

static void pass_tab_generic(tab_block *blk, const pass_args *pa) {
  pass_tab_body(blk, pa, 1);
}

static void pass_prop_generic(tab_block *blk, const pass_args *pa) {
  pass_prop_body(blk, pa, 1);
}

#if DPD__ISA_X86
__attribute__((target("avx2"))) static void pass_tab_avx2(tab_block *blk, const pass_args *pa) {
  pass_tab_body(blk, pa, 2);
}

__attribute__((target("avx2"))) static void pass_prop_avx2(tab_block *blk, const pass_args *pa) {
  pass_prop_body(blk, pa, 1);
}

__attribute__((target("avx512f,prefer-vector-width=512"))) static void
pass_tab_avx512(tab_block *blk, const pass_args *pa) {
  pass_tab_body(blk, pa, 4);
}

__attribute__((target("avx512f,prefer-vector-width=512"))) static void
pass_prop_avx512(tab_block *blk, const pass_args *pa) {
  pass_prop_body(blk, pa, 4);
}
#endif

typedef void (*pass_fn)(tab_block *blk, const pass_args *pa);

/* ---- Plan ----------------------------------------------------------------------------------- */

struct dpd_volterra_plan {
  dpd_volterra_config cfg;
  size_t nc, nf;       /* N and the finest step count (2N with Richardson, else N) */
  size_t ngroups;      /* largest number of groups */
  double *a, *b, *f;   /* [nf + 1] Ahat, Bhat, F of one segment */
  double *w;           /* [nf] Toeplitz kernel W */
  double *r;           /* [nf + 1] R_0..R_n of one segment */
  double *r_c, *r_f;   /* [nc + 1], [nf + 1]: R at t = k h of the coarse and fine solves */
  double *st, *q, *e1; /* [ngroups] states S_j at the segment start, e^{-a h}, 1 - e^{-a h} */
  tab_block *blk;      /* one block of groups */
  pass_fn tab, prop;   /* pass kernels for this CPU */
  dpd__ltt *ltt;       /* Toeplitz engine for kernels up to nf */
};

void dpd_volterra_plan_free(dpd_volterra_plan *plan) {
  if (plan == NULL) {
    return;
  }
  free(plan->a);
  free(plan->b);
  free(plan->f);
  free(plan->w);
  free(plan->r);
  free(plan->r_c);
  free(plan->r_f);
  free(plan->st);
  free(plan->q);
  free(plan->e1);
  free(plan->blk);
  dpd__ltt_free(plan->ltt);
  free(plan);
}

static unsigned fftw_flags_of(dpd_volterra_fft_effort effort) {
  switch (effort) {
  case DPD_VOLTERRA_FFT_MEASURE:
    return FFTW_MEASURE;
  case DPD_VOLTERRA_FFT_PATIENT:
    return FFTW_PATIENT;
  default:
    return FFTW_ESTIMATE;
  }
}

static int config_check(const dpd_volterra_config *cfg, const dpd_linreg_problem *problem,
                        dpd_err *err) {
  if (cfg == NULL || problem == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': NULL (allowed: a %s)",
                    cfg == NULL ? "config" : "problem",
                    cfg == NULL ? "pointer" : "created problem");
  }
  if (cfg->steps < 2 || cfg->steps > volterra_steps_max) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'steps': %zu (allowed: integer 2 .. %zu)",
                    cfg->steps, volterra_steps_max);
  }
  if (cfg->richardson != 0 && cfg->richardson != 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'richardson': %d (allowed: 0 or 1)",
                    cfg->richardson);
  }
  if (cfg->start_steps >= cfg->steps) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'start_steps': %zu (allowed: 0 .. steps - 1 = %zu)",
                    cfg->start_steps, cfg->steps - 1);
  }
  if (!(cfg->start_x > 0.0) || !isfinite(cfg->start_x)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'start_x': %g (allowed: finite, > 0)",
                    cfg->start_x);
  }
  if (cfg->effort != DPD_VOLTERRA_FFT_ESTIMATE && cfg->effort != DPD_VOLTERRA_FFT_MEASURE &&
      cfg->effort != DPD_VOLTERRA_FFT_PATIENT) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'effort': %d (allowed: estimate, measure, patient)",
                    (int)cfg->effort);
  }
  if (cfg->leaf < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'leaf': %zu (allowed: integer >= 1)",
                    cfg->leaf);
  }
  return DPD_OK;
}

int dpd_volterra_plan_create(const dpd_volterra_config *cfg, const dpd_linreg_problem *problem,
                             dpd_volterra_plan **out, dpd_err *err) {
  dpd_volterra_plan *plan;
  size_t nf, nc, m;
  int status;
  if (out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'out': NULL (allowed: a pointer)");
  }
  *out = NULL;
  if ((status = config_check(cfg, problem, err)) < 0) {
    return status;
  }
  nc = cfg->steps;
  nf = cfg->richardson ? 2 * nc : nc;
  m = problem->ngroups;
  plan = calloc(1, sizeof *plan);
  if (plan == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for a Volterra plan of %zu steps", nc);
  }
  plan->cfg = *cfg;
  plan->nc = nc;
  plan->nf = nf;
  plan->ngroups = m;
  plan->a = malloc((nf + 1) * sizeof *plan->a);
  plan->b = malloc((nf + 1) * sizeof *plan->b);
  plan->f = malloc((nf + 1) * sizeof *plan->f);
  plan->w = malloc(nf * sizeof *plan->w);
  plan->r = malloc((nf + 1) * sizeof *plan->r);
  plan->r_c = malloc((nc + 1) * sizeof *plan->r_c);
  plan->r_f = malloc((nf + 1) * sizeof *plan->r_f);
  plan->st = malloc(m * sizeof *plan->st);
  plan->q = malloc(m * sizeof *plan->q);
  plan->e1 = malloc(m * sizeof *plan->e1);
  plan->blk = aligned_alloc(64, sizeof *plan->blk);
  if (plan->a == NULL || plan->b == NULL || plan->f == NULL || plan->w == NULL || plan->r == NULL ||
      plan->r_c == NULL || plan->r_f == NULL || plan->st == NULL || plan->q == NULL ||
      plan->e1 == NULL || plan->blk == NULL) {
    dpd_volterra_plan_free(plan);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for a Volterra plan of %zu steps, %zu groups",
                    nc, m);
  }
  if ((status = dpd__ltt_create(nf, cfg->leaf, fftw_flags_of(cfg->effort), &plan->ltt, err)) < 0) {
    dpd_volterra_plan_free(plan);
    return status;
  }
  dpd__volterra_plan_simd_set(plan, (int)(dpd_isa_get() - DPD_ISA_SCALAR));
  *out = plan;
  return DPD_OK;
}

int dpd__volterra_plan_simd_set(dpd_volterra_plan *plan, int level) {
  const dpd_isa isa = (dpd_isa)(DPD_ISA_SCALAR + level);
  if (level < 0 || level > 2 || !dpd_isa_available(isa)) {
    return -1;
  }
  plan->tab = DPD__ISA_PICK(isa, pass_tab_generic, pass_tab_avx2, pass_tab_avx512);
  plan->prop = DPD__ISA_PICK(isa, pass_prop_generic, pass_prop_avx2, pass_prop_avx512);
  return 0;
}

/* ---- One solve on a graded mesh ---------------------------------------------------------------
 */

/* Mesh of n main steps h = 1/n whose first ng steps are replaced by `levels` graded segments
 * (none when levels = 0). */
typedef struct {
  size_t n, ng;
  int levels;
} mesh_spec;

/* Segment `seg` of the mesh: its step count and its step in units of h / 2^levels. */
static void mesh_segment(const mesh_spec *mesh, int seg, size_t *steps, size_t *step_units) {
  if (mesh->levels == 0) {
    *steps = mesh->n;
    *step_units = 1;
  } else if (seg == 0) {
    *steps = 2 * mesh->ng;
    *step_units = 1;
  } else if (seg < mesh->levels) {
    *steps = mesh->ng;
    *step_units = (size_t)1 << seg;
  } else {
    *steps = mesh->n - mesh->ng;
    *step_units = (size_t)1 << mesh->levels;
  }
}

/* Solves on one graded mesh; r_uni[k] = R(k h), k = 0..n. Returns DPD_OK, or DPD_ENONFINITE
 * with *t_bad set when R is not finite or a segment's equation is singular (W_0 >= 1). */
static int mesh_solve(dpd_volterra_plan *plan, const dpd_linreg_problem *problem,
                      const vt_model *md, const mesh_spec *mesh, double *r_uni, double *t_bad) {
  size_t m = problem->ngroups, unit = (size_t)1 << mesh->levels, u = 0;
  double h0 = ldexp(1.0 / (double)mesh->n, -mesh->levels);
  double R_start = 0.0;
  int nseg = mesh->levels + 1;
  pass_args pa;

  pa.m = m;
  pa.lam = problem->group_lambda;
  pa.mult = problem->group_mult;
  pa.st = plan->st;
  pa.q = plan->q;
  pa.e1 = plan->e1;
  pa.two_eta_mu = 2.0 * md->eta * md->mu;
  pa.b_scale = md->gamma * md->eta * md->eta * md->nu;
  pa.inv_d = 1.0 / (double)problem->d;
  pa.half_zeta2 = 0.5 * md->zeta2;
  pa.C = md->C;
  pa.g_scale = 1.0 / (pa.two_eta_mu * (double)problem->d);
  pa.a = plan->a;
  pa.b = plan->b;
  pa.f = plan->f;
  pa.r = plan->r;

  for (size_t j = 0; j < m; j++) {
    double x = problem->group_lambda[j] * pa.two_eta_mu * h0;
    plan->st[j] = problem->group_S0[j];
    plan->q[j] = exp(-x);
    plan->e1[j] = -expm1(-x);
    R_start += problem->group_lambda[j] * problem->group_S0[j];
  }
  R_start *= pa.inv_d;
  r_uni[0] = R_start;

  for (int seg = 0; seg < nseg; seg++) {
    size_t steps, step_units;
    double *w = plan->w, *r = plan->r;
    mesh_segment(mesh, seg, &steps, &step_units);
    pa.steps = steps;
    pa.hs = (double)step_units * h0;
    memset(plan->a, 0, (steps + 1) * sizeof *plan->a);
    memset(plan->b, 0, (steps + 1) * sizeof *plan->b);
    memset(plan->f, 0, (steps + 1) * sizeof *plan->f);
    plan->tab(plan->blk, &pa);
    /* The Toeplitz system of the segment (toeplitz.c solves it in place). */
    w[0] = plan->a[0];
    if (!(w[0] < 1.0)) {
      /* W_0 <= sum_j kappa_j / a_j = gamma eta~ nu / (2 mu): only far beyond the stability
       * limit (eta~ ~ 2/gamma for mu = nu = 1), where the risk diverges. */
      *t_bad = (double)u * h0;
      return DPD_ENONFINITE;
    }
    for (size_t l = 1; l < steps; l++) {
      w[l] = plan->a[l] + plan->b[l - 1];
    }
    r[0] = R_start;
    for (size_t k = 0; k < steps; k++) {
      r[k + 1] = plan->f[k + 1] + plan->b[k] * R_start;
    }
    dpd__ltt_kernel_set(plan->ltt, w, steps);
    dpd__ltt_solve(plan->ltt, r + 1);
    for (size_t k = 1; k <= steps; k++) {
      size_t uk = u + k * step_units;
      if (!isfinite(r[k])) {
        *t_bad = (double)uk * h0;
        return DPD_ENONFINITE;
      }
      if (uk % unit == 0) {
        r_uni[uk / unit] = r[k];
      }
    }
    if (seg + 1 < nseg) {
      plan->prop(plan->blk, &pa);
    }
    u += steps * step_units;
    R_start = r[steps];
  }
  return DPD_OK;
}

/* ---- Execute -------------------------------------------------------------------------------- */

static int model_check(const dpd_volterra_plan *plan, const dpd_linreg_problem *problem,
                       const dpd_schedule *schedule, const dpd_ode_config *model, dpd_err *err) {
  double eta0, eta1;
  /* The plan solves the Volterra form whatever model->method says: the method is checked only
   * when it is this one (no method table here: ode_method.c lists this file's type). */
  int status = dpd__ode_validate(problem, schedule, model,
                                 model != NULL && model->method == DPD_ODE_VOLTERRA
                                     ? &dpd__ode_method_volterra
                                     : NULL,
                                 NULL, err);
  if (status < 0) {
    return status;
  }
  if (problem->ngroups > plan->ngroups) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'problem': %zu eigenvalue groups (allowed: at most the "
                    "plan's %zu)",
                    problem->ngroups, plan->ngroups);
  }
  eta0 = dpd_schedule_eval(schedule, 0.0);
  eta1 = dpd_schedule_eval(schedule, 1.0);
  if (!dpd_schedule_is_nonincreasing(schedule) || eta0 != eta1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': %s with eta~(0) = %g, eta~(1) = %g is not "
                    "constant (allowed: a constant schedule; the Volterra form needs a constant "
                    "learning rate, use dpd_ode_solve otherwise)",
                    dpd_schedule_name(schedule), eta0, eta1);
  }
  if (isfinite(model->c) && (isnan(model->mu_frozen) || isnan(model->nu_frozen))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': NAN with c = %g (allowed: a frozen value when c is "
                    "finite; clipping at the current risk makes the equation nonlinear)",
                    isnan(model->mu_frozen) ? "mu_frozen" : "nu_frozen", model->c);
  }
  if (model->factors != NULL) { /* the Volterra form has no state-dependent factors */
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'factors': a function with the Volterra form (allowed: "
                    "NULL; use dpd_ode_solve with method bdf or adams)");
  }
  if (plan->nc % (model->grid - 1) != 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'grid': %zu (allowed: grid - 1 dividing the plan's %zu "
                    "steps)",
                    model->grid, plan->nc);
  }
  return DPD_OK;
}

static void model_init(vt_model *md, const dpd_schedule *schedule, const dpd_ode_config *cfg) {
  double c2g2 = cfg->c * cfg->c * cfg->gamma * cfg->gamma;
  md->eta = dpd_schedule_eval(schedule, 0.0);
  md->mu = isnan(cfg->mu_frozen) ? 1.0 : cfg->mu_frozen;
  md->nu = isnan(cfg->nu_frozen) ? 1.0 : cfg->nu_frozen;
  md->gamma = cfg->gamma;
  md->zeta2 = cfg->zeta * cfg->zeta;
  md->C = 0.0;
  if (!isnan(cfg->sigma2_const)) {
    md->C = cfg->sigma2_const > 0.0 ? 2.0 * c2g2 * cfg->sigma2_const : 0.0;
  } else if (!isinf(cfg->rho)) {
    /* The calibrated profile -d/dt[eta~^2]/rho^2: zero for a constant schedule. */
    md->C = -2.0 * c2g2 / (cfg->rho * cfg->rho) * dpd_schedule_dsq_eval(schedule, 0.0);
  }
  md->release_jump = isinf(cfg->rho) ? 0.0 : 2.0 * c2g2 * md->eta * md->eta / (cfg->rho * cfg->rho);
}

/* Graded segments needed for step h: the least L with a_max h / 2^L <= start_x. */
static int levels_for(const dpd_volterra_config *cfg, const dpd_linreg_problem *problem,
                      const vt_model *md, double h) {
  double x = 2.0 * problem->lambda_max * md->eta * md->mu * h;
  int levels = 0;
  if (cfg->start_steps == 0) {
    return 0;
  }
  while (x > cfg->start_x && levels < volterra_levels_max) {
    x *= 0.5;
    levels++;
  }
  return levels;
}

static dpd_ode_result *result_alloc(size_t grid) {
  dpd_ode_result *r = calloc(1, sizeof *r);
  if (r == NULL) {
    return NULL;
  }
  r->grid = grid;
  r->t = malloc(grid * sizeof *r->t);
  r->risk = malloc(grid * sizeof *r->risk);
  if (r->t == NULL || r->risk == NULL) {
    dpd_ode_result_free(r);
    return NULL;
  }
  return r;
}

int dpd_volterra_execute(dpd_volterra_plan *plan, const dpd_linreg_problem *problem,
                         const dpd_schedule *schedule, const dpd_ode_config *model,
                         dpd_ode_result **out, dpd_err *err) {
  vt_model md;
  mesh_spec coarse, fine;
  dpd_ode_result *res;
  size_t grid, stride;
  double t_bad = 0.0;
  int status;

  if (out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'out': NULL (allowed: a pointer)");
  }
  *out = NULL;
  if (plan == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'plan': NULL (allowed: a created plan)");
  }
  if ((status = model_check(plan, problem, schedule, model, err)) < 0) {
    return status;
  }
  model_init(&md, schedule, model);
  grid = model->grid;
  stride = plan->nc / (grid - 1);

  coarse.n = plan->nc;
  coarse.ng = plan->cfg.start_steps;
  coarse.levels = levels_for(&plan->cfg, problem, &md, 1.0 / (double)plan->nc);
  fine.n = 2 * coarse.n;
  fine.ng = 2 * coarse.ng;
  fine.levels = coarse.levels;

  status = mesh_solve(plan, problem, &md, &coarse, plan->r_c, &t_bad);
  if (status == DPD_OK && plan->cfg.richardson) {
    status = mesh_solve(plan, problem, &md, &fine, plan->r_f, &t_bad);
  }
  if (status < 0) {
    return DPD_FAIL(err, DPD_ENONFINITE,
                    "Volterra: the risk diverges at t = %.17g (eta~ = %g, gamma = %g, mu = %g, "
                    "nu = %g; stability needs about eta~ < 2 mu / (gamma nu))",
                    t_bad, md.eta, md.gamma, md.mu, md.nu);
  }

  res = result_alloc(grid);
  if (res == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for a grid of %zu points", grid);
  }
  for (size_t j = 0; j < grid; j++) {
    double rc = plan->r_c[j * stride];
    res->t[j] = (double)j / (double)(grid - 1);
    if (plan->cfg.richardson) {
      double rf = plan->r_f[2 * j * stride];
      res->risk[j] = j == 0 ? rc : rf + (rf - rc) / 3.0;
    } else {
      res->risk[j] = rc;
    }
  }
  res->steps = (long)(plan->cfg.richardson ? fine.n : coarse.n);
  res->before_release = res->risk[grid - 1];
  res->release_jump = md.release_jump;
  res->final_risk = res->before_release + res->release_jump;
  res->config = *model;
  *out = res;
  return DPD_OK;
}

int dpd_volterra_solve(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                       const dpd_ode_config *model, const dpd_volterra_config *cfg,
                       dpd_ode_result **out, dpd_err *err) {
  dpd_volterra_plan *plan = NULL;
  int status;
  if (out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'out': NULL (allowed: a pointer)");
  }
  *out = NULL;
  if ((status = dpd_volterra_plan_create(cfg, problem, &plan, err)) < 0) {
    return status;
  }
  status = dpd_volterra_execute(plan, problem, schedule, model, out, err);
  dpd_volterra_plan_free(plan);
  return status;
}

/* ---- Method type volterra of dpd_ode_solve (listed in ode_method.c) ------------------------ */

/* The default plan, its step count rounded up to a multiple of grid - 1 (the output grid must
 * fall on the mesh). Called by dpd_ode_solve with a validated configuration and *out = NULL. */
static int method_solve(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                        const dpd_ode_config *cfg, dpd_ode_result **out, dpd_err *err) {
  dpd_volterra_config vc = dpd_volterra_config_default();
  size_t per = cfg->grid - 1;
  vc.steps = (vc.steps + per - 1) / per * per;
  return dpd_volterra_solve(problem, schedule, cfg, &vc, out, err);
}

__attribute__((visibility("hidden"))) const dpd_ode_method_type dpd__ode_method_volterra = {
    "volterra",
    "FFT solve of the convolution-Volterra form, O(N log^2 N + ngroups N); constant schedules "
    "without clipping; no bounds",
    DPD_ODE_VOLTERRA, DPD_ODE_NEEDS_CONST_SCHEDULE | DPD_ODE_NEEDS_NO_CLIPPING, method_solve};
