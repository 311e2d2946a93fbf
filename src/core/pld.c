/* Privacy loss distributions (include/dpdyn/pld.h; docs/privacy.md).
 * SPDX-License-Identifier: MIT
 *
 * Why the two bounds are bounds. For a dominating pair (P, Q) of one step, the privacy loss is
 * L = log(dP/dQ)(x), x ~ P, and delta(eps) = E[(1 - e^{eps - L})_+] + P(L = inf). For T adaptive
 * steps the loss of the composition is S = L_1 + ... + L_T with independent L_j, and
 * delta_{A+B}(eps) = E_{L ~ A} delta_B(eps - L). Hence a discrete distribution whose delta(eps)
 * is above (below) the true one at every real eps stays above (below) after composition with any
 * non-negative distribution, and so after any sequence of compositions; so do (i) moving mass to
 * larger (smaller) losses or +inf and (ii) adding (dropping) non-negative mass. The pessimistic
 * one-step distribution is the "connect the dots" chord construction and the optimistic one the
 * lowered-chord convex minorant (discretise_up, discretise_low below). Add/remove neighbours:
 * the pair (D, D + {x}) is composed in the "remove" order in every step and (D + {x}, D) in the
 * "add" order; delta is the maximum of the two composed curves.
 *
 * One step: a pair of Gaussian mixtures (pld_pair; pairs and their justification at
 * dpd_pld_step_create and in docs/privacy.md). The support is cut where P's tails are below
 * DPD_PLD_TAIL (below: exact for connect-the-dots; above: split into +inf).
 *
 * Composition on a circular grid. The FFT composes modulo N points. N is chosen from Chernoff
 * bounds P(S >= b) <= exp(K(lambda) - lambda b), K(lambda) = sum_j T_j log E e^{lambda L_j},
 * evaluated on a coarsened copy of each distribution (block mass times e^{lambda * block's largest
 * (lambda>0) or smallest (lambda<0) loss}: an upper bound of the MGF, so the tail bound stays
 * valid), so that the mass outside the window is below DPD_PLD_WRAP_TOL, or N covers the whole
 * support (no wrap at all). What falls outside the window is folded back into it: extra
 * non-negative mass. Pessimistic: the bound of the mass above the window is added to the infinity
 * mass (the folded copy is harmless extra mass). Optimistic: the folded mass A (bounded by the
 * two tail bounds) may have raised delta by at most A; it is carried as `alias` and subtracted
 * from delta_low (composing c_j = w_j + a_j, |w_j| <= 1, |a_j| <= A_j: the extra mass of the
 * product is at most prod (1 + A_j)^{T_j} - 1).
 * FFT rounding: estimated per composed distribution (pld_dist.noise) and allowed for in every
 * query (dist_delta_n); dpd_pld_epsilon refuses a delta it would dominate. */
#include "dpdyn/pld.h"

#include <complex.h>
#include <float.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"

#define DPD_PLD_TAIL 1e-20     /* per-step truncated tail mass */
#define DPD_PLD_WRAP_TOL 1e-22 /* Chernoff bound of the mass outside a composition's window */
#define DPD_PLD_TRIM 1e-30     /* mass trimmed off the ends of a result (pessimistically) */
#define DPD_PLD_NOISE_SHARE 0.1 /* the most of delta the FFT rounding allowance may be */
#define DPD_PLD_H_PILOT 0.02    /* dpd_pld_step_h_for's pilot grid */
#define COARSE_BLOCKS 4096

typedef struct {
  long long lo; /* grid index of p[0]: its loss is lo * h */
  size_t n;
  double *p;
  double inf;   /* mass at +infinity */
  double alias; /* optimistic only: bound of the extra (folded) mass */
  double noise; /* estimated bound of the FFT rounding error of each point (absolute) */
} pld_dist;

struct dpd_pld {
  double h;
  int orders;         /* 1 (symmetric: both orders equal) or 2 (0 remove, 1 add) */
  pld_dist d[2][3];   /* [order][0 pessimistic, 1 optimistic, 2 pessimistic on the grid 2h
                         (the extrapolation of dpd_pld_epsilon_estimate; n = 0 when absent)] */
};

/* ---- One step: a dominating pair of Gaussian mixtures -------------------------------------- */

#define PLD_KMAX 96             /* most mixture components (REPLACEMENT: copies 0..K) */
#define PLD_BINOM_TAIL 1e-40    /* REPLACEMENT: binomial tail sent to L = +inf */

typedef enum { FORM_GAUSS, FORM_REMOVE, FORM_ADD, FORM_GENERIC } pair_form;

/* P = sum_i ap_i N(mp_i, s^2) (+ pinf at L = +inf), Q = sum_j aq_j N(mq_j, s^2); the loss
 * L(x) = log(dP/dQ)(x) is nondecreasing in x. The closed forms: GAUSS P = N(1), Q = N(0);
 * REMOVE P = (1-q) N(0) + q N(1), Q = N(0); ADD (the add order reflected, x -> -x) P = N(0),
 * Q = (1-q) N(0) + q N(-1). */
typedef struct {
  pair_form form;
  double s, q, pinf;
  int np, nq;
  double ap[PLD_KMAX], mp[PLD_KMAX], aq[PLD_KMAX], mq[PLD_KMAX];
  double lmin, lmax; /* the loss's limits as x -> -inf and x -> +inf */
} pld_pair;

static double phi_upper(double z) { return 0.5 * erfc(z * 0.70710678118654752440); } /* P(N(0,1) > z) */

/* x(l) = s^2 log((e^l - (1-q))/q) + 1/2, for e^l > 1 - q. */
static double x_of_loss(double l, double s, double q) {
  double lg;
  if (l > 0.0)
    lg = l + log1p(-(1.0 - q) * exp(-l));
  else
    lg = log(expm1(l) + q);
  return s * s * (lg - log(q)) + 0.5;
}

/* log sum_i a_i exp((2 m_i x - m_i^2) / (2 s^2)) and its x-derivative (times s^2) */
static double mix_log(const double *a, const double *m, int n, double s, double x, double *dlog) {
  double top = -INFINITY, sum = 0.0, msum = 0.0, e[PLD_KMAX];
  for (int i = 0; i < n; i++) {
    e[i] = log(a[i]) + (2.0 * m[i] * x - m[i] * m[i]) / (2.0 * s * s);
    top = fmax(top, e[i]);
  }
  for (int i = 0; i < n; i++) {
    double w = exp(e[i] - top);
    sum += w;
    msum += w * m[i];
  }
  if (dlog)
    *dlog = msum / sum;
  return top + log(sum);
}

static double pair_loss(const pld_pair *pr, double x, double *dl) {
  double dp, dq, l = mix_log(pr->ap, pr->mp, pr->np, pr->s, x, &dp) -
                     mix_log(pr->aq, pr->mq, pr->nq, pr->s, x, &dq);
  if (dl)
    *dl = (dp - dq) / (pr->s * pr->s);
  return l;
}

/* The loss's limit at x -> +inf (dir = 1) or -inf (dir = -1). */
static double pair_limit(const pld_pair *pr, int dir) {
  double ep = -INFINITY, eq = -INFINITY, ap = 0.0, aq = 0.0;
  for (int i = 0; i < pr->np; i++)
    ep = fmax(ep, dir * pr->mp[i]);
  for (int i = 0; i < pr->nq; i++)
    eq = fmax(eq, dir * pr->mq[i]);
  if (ep != eq)
    return ep > eq ? INFINITY : -INFINITY;
  for (int i = 0; i < pr->np; i++)
    ap += dir * pr->mp[i] == ep ? pr->ap[i] : 0.0;
  for (int i = 0; i < pr->nq; i++)
    aq += dir * pr->mq[i] == eq ? pr->aq[i] : 0.0;
  return log(ap / aq);
}

/* x with L(x) = l: a safeguarded Newton iteration inside a bracket found by doubling from the
 * guess x0 (L is nondecreasing; the bracket always holds the root, Newton steps that leave it
 * are replaced by bisection). */
static double pair_solve(const pld_pair *pr, double l, double x0) {
  double dl, f = pair_loss(pr, x0, &dl) - l, step = pr->s * pr->s + pr->s;
  double a = x0, b = x0, fa = f, fb = f;
  if (f == 0.0)
    return x0;
  if (f < 0.0) {
    for (int k = 0; k < 4000 && fb < 0.0; k++) {
      a = b;
      fa = fb;
      b += step;
      step *= 2.0;
      fb = pair_loss(pr, b, NULL) - l;
    }
  } else {
    for (int k = 0; k < 4000 && fa > 0.0; k++) {
      b = a;
      fb = fa;
      a -= step;
      step *= 2.0;
      fa = pair_loss(pr, a, NULL) - l;
    }
  }
  double x = 0.5 * (a + b);
  for (int it = 0; it < 200; it++) {
    f = pair_loss(pr, x, &dl) - l;
    if (f == 0.0)
      return x;
    if (f < 0.0)
      a = x;
    else
      b = x;
    double xn = dl > 0.0 ? x - f / dl : NAN;
    if (!(xn > a && xn < b))
      xn = 0.5 * (a + b);
    if (fabs(xn - x) <= 1e-15 * fmax(1.0, fabs(x)) || b - a <= 1e-15 * fmax(1.0, fabs(x)))
      return xn;
    x = xn;
  }
  return x;
}

/* x(l): the point where L crosses l (-inf below the loss's range, +inf above). */
static double pair_x(const pld_pair *pr, double l, double guess) {
  if (!(l > pr->lmin))
    return -INFINITY;
  if (!(l < pr->lmax))
    return INFINITY;
  switch (pr->form) {
  case FORM_GAUSS:
    return pr->s * pr->s * l + 0.5;
  case FORM_REMOVE:
    return x_of_loss(l, pr->s, pr->q);
  case FORM_ADD:
    return -x_of_loss(-l, pr->s, pr->q);
  case FORM_GENERIC:
  default:
    return pair_solve(pr, l, isfinite(guess) ? guess : 0.0);
  }
}

/* The smaller tail of the standard normal at z, and the sign of z: Phi(z) = tail (z < 0) or
 * 1 - tail. Mass of (z1, z2] from the smaller tails (no cancellation of two numbers near 1). */
static double tail_of(double z) { return phi_upper(fabs(z)); }
static double normal_mass(double z1, double t1, double z2, double t2) {
  if (!(z2 > z1))
    return 0.0;
  if (z1 >= 0.0)
    return t1 - t2;
  if (z2 <= 0.0)
    return t2 - t1;
  return 1.0 - t1 - t2;
}

/* P(L > l) (upper = 1) or P(L <= l) under P (which = 0) or Q (which = 1), at x = x(l). */
static double pair_tail(const pld_pair *pr, int which, double x, int upper) {
  const double *a = which ? pr->aq : pr->ap, *m = which ? pr->mq : pr->mp;
  int n = which ? pr->nq : pr->np;
  double sum = 0.0;
  for (int i = 0; i < n; i++) {
    double z = (x - m[i]) / pr->s;
    sum += a[i] * (upper ? phi_upper(z) : phi_upper(-z));
  }
  if (which == 0 && upper)
    sum += pr->pinf;
  return sum;
}

/* Loss l with P(L > l) <= tail (upper = 1) or P(L <= l) <= tail (upper = 0): doubling from
 * the loss at P's mean, then bisection. */
static double pair_cut(const pld_pair *pr, int upper, double tail) {
  double mean = 0.0;
  for (int i = 0; i < pr->np; i++)
    mean += pr->ap[i] * pr->mp[i];
  double in = pair_loss(pr, mean, NULL), out = in, step = 1.0, dir = upper ? 1.0 : -1.0;
  if (upper && !isfinite(pr->lmax) && pr->pinf > tail)
    return NAN; /* cannot happen: pinf <= PLD_BINOM_TAIL */
  double g = mean;
  for (int k = 0; k < 2000; k++) {
    double x = pair_x(pr, out, g);
    if (isfinite(x))
      g = x;
    if (!(pair_tail(pr, 0, x, upper) - (upper ? pr->pinf : 0.0) > tail))
      break;
    in = out;
    out += dir * step;
    step *= 2.0;
  }
  for (int k = 0; k < 100; k++) {
    double mid = 0.5 * (in + out), x = pair_x(pr, mid, g);
    if (pair_tail(pr, 0, x, upper) - (upper ? pr->pinf : 0.0) > tail)
      in = mid;
    else
      out = mid;
  }
  return out;
}

static void dist_clear(pld_dist *d) {
  fftw_free(d->p);
  memset(d, 0, sizeof *d);
}

void dpd_pld_free(dpd_pld *pld) {
  if (!pld)
    return;
  for (int o = 0; o < 2; o++)
    for (int b = 0; b < 3; b++)
      dist_clear(&pld->d[o][b]);
  free(pld);
}

static int dist_alloc(pld_dist *d, size_t n, dpd_err *err) {
  d->p = fftw_malloc(n * sizeof *d->p);
  if (!d->p)
    return DPD_FAIL(err, DPD_ENOMEM, "PLD: out of memory for %zu points", n);
  d->n = n;
  return DPD_OK;
}

/* Drops (optimistic) or pushes up (pessimistic) the outermost mass up to DPD_PLD_TRIM at each
 * end, and clamps negative values to 0. */
static void dist_trim(pld_dist *d, int pessimistic) {
  size_t a = 0, b = d->n;
  double low = 0.0, high = 0.0;
  for (size_t k = 0; k < d->n; k++)
    if (!(d->p[k] > 0.0))
      d->p[k] = 0.0;
  while (a + 1 < b && low + d->p[a] <= 0.5 * DPD_PLD_TRIM)
    low += d->p[a++];
  while (b - 1 > a && high + d->p[b - 1] <= 0.5 * DPD_PLD_TRIM)
    high += d->p[--b];
  if (pessimistic) {
    d->p[a] += low;
    d->inf = fmin(1.0, d->inf + high);
  }
  if (a > 0)
    memmove(d->p, d->p + a, (b - a) * sizeof *d->p);
  d->lo += (long long)a;
  d->n = b - a;
}

/* e^l * m without overflow for the sizes met here (m = 0 gives 0). */
static double mul_exp(double m, double l) { return m > 0.0 ? exp(l + log(m)) : 0.0; }

/* The cell masses of one step on the grid l_k = (i0 + k) h, k = 0..M: Pc[k] = P(l_k < L <=
 * l_{k+1}), Qc[k] the same under Q (k < M); the lower tails P(L <= l_0), Q(L <= l_0) and the
 * upper tails P(L > l_M) (finite part), Q(L > l_M). Each cell mass is a sum over components of
 * a difference of the smaller normal tails. */
typedef struct {
  long long i0;
  size_t M;
  double *Pc, *Qc; /* M entries */
  double P_lo, Q_lo, P_hi, Q_hi;
} pld_cells;

static void cells_fill(const pld_pair *pr, double h, pld_cells *c) {
  double zp[PLD_KMAX], tp[PLD_KMAX], zq[PLD_KMAX], tq[PLD_KMAX], guess = NAN;
  for (size_t k = 0; k <= c->M; k++) {
    double l = (double)(c->i0 + (long long)k) * h, x = pair_x(pr, l, guess), pm = 0.0, qm = 0.0;
    if (isfinite(x))
      guess = x;
    for (int i = 0; i < pr->np; i++) {
      double z = (x - pr->mp[i]) / pr->s, t = tail_of(z);
      if (k > 0)
        pm += pr->ap[i] * normal_mass(zp[i], tp[i], z, t);
      else
        c->P_lo += pr->ap[i] * (z < 0.0 ? t : 1.0 - t);
      if (k == c->M)
        c->P_hi += pr->ap[i] * (z >= 0.0 ? t : 1.0 - t);
      zp[i] = z;
      tp[i] = t;
    }
    for (int i = 0; i < pr->nq; i++) {
      double z = (x - pr->mq[i]) / pr->s, t = tail_of(z);
      if (k > 0)
        qm += pr->aq[i] * normal_mass(zq[i], tq[i], z, t);
      else
        c->Q_lo += pr->aq[i] * (z < 0.0 ? t : 1.0 - t);
      if (k == c->M)
        c->Q_hi += pr->aq[i] * (z >= 0.0 ? t : 1.0 - t);
      zq[i] = z;
      tq[i] = t;
    }
    if (k > 0) {
      c->Pc[k - 1] = pm;
      c->Qc[k - 1] = qm;
    }
  }
}

/* Pessimistic: "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022). The P-mass
 * of a cell (l_k, l_{k+1}] is split between its two ends so that both its P-mass and its Q-mass
 * are kept: u to l_{k+1} and Pc - u to l_k, u e^{-l_{k+1}} + (Pc - u) e^{-l_k} = Qc, i.e.
 * u = (Pc - e^{l_k} Qc) / (1 - e^{-h}) in [0, Pc]. Then delta(eps) of the discrete pair equals
 * the true delta at every grid point and is linear in e^eps in between: above the true curve,
 * which is convex in e^eps. Below l_0 everything goes to l_0 (its delta is exact at eps >= l_0
 * and, being linear in e^eps from (0, 1), above the true curve below). Above l_M the cell is
 * split between l_M and +inf the same way: e^{l_M} Q_hi to l_M, the rest (= delta(l_M)) to +inf. */
static void discretise_up(const pld_pair *pr, const pld_cells *c, double h, pld_dist *up) {
  double *p = up->p, one_minus = -expm1(-h);
  memset(p, 0, (c->M + 1) * sizeof *p);
  p[0] = c->P_lo;
  for (size_t k = 0; k < c->M; k++) {
    double l = (double)(c->i0 + (long long)k) * h, Pc = c->Pc[k];
    double u = (Pc - mul_exp(c->Qc[k], l)) / one_minus;
    u = fmin(fmax(u, 0.0), Pc);
    p[k + 1] += u;
    p[k] += Pc - u;
  }
  double lM = (double)(c->i0 + (long long)c->M) * h, top = fmin(c->P_hi, mul_exp(c->Q_hi, lM));
  p[c->M] += top;
  up->inf = c->P_hi - top + pr->pinf;
  up->lo = c->i0;
  up->alias = 0.0;
}

/* Optimistic: every cell's mass rounded down to l_k (the mass above l_M to l_M; +inf dropped). */
static void discretise_low_round(const pld_cells *c, pld_dist *low) {
  memcpy(low->p, c->Pc, c->M * sizeof *low->p);
  low->p[c->M] = c->P_hi;
  low->inf = 0.0;
  low->lo = c->i0;
  low->alias = 0.0;
}

/* Optimistic: a discrete pair whose delta(eps) lies below the true curve everywhere, with kinks
 * on the grid only. In t = e^eps the true delta f(t) = E_P[(1 - t e^{-L})_+] is convex with
 * slope -Q(L > log t), so on [t_k, t_{k+1}] it lies above the larger of its two end tangents:
 * the chord exceeds f there by at most G_k (the chord minus the tangents at their crossing).
 * The points y_k = f(t_k) - max(G_{k-1}, G_k) make a polyline below f; so is its greatest convex
 * minorant (adjacent slopes pooled, PAVA), which is convex, decreasing and linear between grid
 * points: the delta curve of a discrete distribution with masses t_k (s_right - s_left) at its
 * kinks. Left of t_0 the polyline continues along the tangent at t_0 (lowered); it ends at
 * (t_E, 0), E the first point with y_E <= 0 (or M), with y_{E-1} <= Q(L > l_E) (t_E - t_{E-1})
 * to keep the last segment below the tangent at t_E. No +inf mass. The delta of its composition
 * with any other non-negative PLD is then below the true one too (delta_{A+B}(eps) =
 * E_{L ~ A} delta_B(eps - L)). The error per step is second order in h like the pessimistic
 * one's (about twice it). Everything from the cell masses: f_k as a sum of non-negative terms
 * from the top, the chord slopes B_k = Q(L > l_{k+1}) + (Pc_k e^{-l_k} - Qc_k) / (e^h - 1), no
 * difference of nearby f. Returns 0 when the losses are too large for e^l (then the caller
 * rounds down instead). */
static int discretise_low(const pld_cells *c, double h, pld_dist *low, dpd_err *err) {
  size_t M = c->M;
  double lM = (double)(c->i0 + (long long)M) * h;
  if (lM > 600.0)
    return 0;
  double *f = malloc((6 * (M + 2)) * sizeof *f);
  size_t *bend = malloc((M + 2) * sizeof *bend);
  if (!f || !bend) {
    free(f);
    free(bend);
    return DPD_FAIL(err, DPD_ENOMEM, "PLD: out of memory for %zu points", M);
  }
  double *SQ = f + (M + 2), *G = SQ + (M + 2), *B = G + (M + 2), *cc = B + (M + 2);
  double *bw = cc + (M + 2); /* block widths */
  double em1 = expm1(h);
  SQ[M] = c->Q_hi;
  f[M] = fmax(0.0, c->P_hi - mul_exp(c->Q_hi, lM));
  for (size_t k = M; k-- > 0;) {
    double tk = exp((double)(c->i0 + (long long)k) * h), Qc = c->Qc[k];
    SQ[k] = SQ[k + 1] + Qc;
    double term = fmax(0.0, c->Pc[k] - tk * Qc), dk = tk * em1;
    f[k] = term + f[k + 1] + dk * SQ[k + 1];
    double beta = fmin(fmax(term / dk, 0.0), Qc);
    G[k] = Qc > 0.0 ? dk * beta * (Qc - beta) / Qc : 0.0;
    B[k] = SQ[k + 1] + beta;
  }
  size_t E = M;
  for (size_t k = 0; k <= M; k++) {
    cc[k] = fmax(k > 0 ? G[k - 1] : 0.0, k < M ? G[k] : 0.0);
    if (f[k] - cc[k] <= 0.0) {
      E = k;
      break;
    }
  }
  memset(low->p, 0, (M + 1) * sizeof *low->p);
  low->inf = 0.0;
  low->lo = c->i0;
  low->alias = 0.0;
  if (E > 0) {
    double dl = exp((double)(c->i0 + (long long)E - 1) * h) * em1;
    cc[E] = f[E]; /* y_E = 0 */
    cc[E - 1] = fmax(cc[E - 1], f[E - 1] - SQ[E] * dl);
    /* segments: 0 the tangent at t_0 from t = 0; k + 1 the chord over [t_k, t_{k+1}], lowered */
    size_t nb = 0;
    double *bs = G; /* block slopes (G is no longer needed; bs[nb] is written at nb <= j) */
    for (size_t j = 0; j <= E; j++) {
      double s, w;
      if (j == 0) {
        w = exp((double)c->i0 * h);
        s = -SQ[0];
      } else {
        size_t k = j - 1;
        w = exp((double)(c->i0 + (long long)k) * h) * em1;
        s = -B[k] - (cc[k + 1] - cc[k]) / w;
      }
      bs[nb] = s;
      bw[nb] = w;
      bend[nb] = j;
      nb++;
      while (nb >= 2 && bs[nb - 2] > bs[nb - 1]) {
        double wt = bw[nb - 2] + bw[nb - 1];
        bs[nb - 2] = (bs[nb - 2] * bw[nb - 2] + bs[nb - 1] * bw[nb - 1]) / wt;
        bw[nb - 2] = wt;
        bend[nb - 2] = bend[nb - 1];
        nb--;
      }
    }
    /* block b ends at grid point bend[b] (segment j ends at point j) */
    for (size_t b = 0; b < nb; b++) {
      size_t j = bend[b];
      double next = b + 1 < nb ? bs[b + 1] : 0.0;
      low->p[j] = fmax(0.0, exp((double)(c->i0 + (long long)j) * h) * (next - bs[b]));
    }
  }
  free(f);
  free(bend);
  return 1;
}

/* Both discretisations of one step's pair. */
static int discretise(const pld_pair *pr, double h, pld_dist *up, pld_dist *low, dpd_err *err) {
  double lmin = pair_cut(pr, 0, DPD_PLD_TAIL), lmax = pair_cut(pr, 1, DPD_PLD_TAIL);
  double span = (ceil(lmax / h) - floor(lmin / h)) + 1.0;
  if (!(span <= (double)DPD_PLD_MAX_POINTS))
    return DPD_FAIL(err, DPD_EINVAL,
                    "h = %g is invalid: one step's loss range [%g, %g] needs %.0f grid points "
                    "(> %zu); the allowed range is h >= %g here",
                    h, lmin, lmax, span, DPD_PLD_MAX_POINTS,
                    (lmax - lmin) / (double)(DPD_PLD_MAX_POINTS - 2));
  pld_cells c = {0};
  c.i0 = (long long)floor(lmin / h);
  c.M = (size_t)((long long)ceil(lmax / h) - c.i0);
  if (c.M < 1)
    c.M = 1;
  int status = dist_alloc(up, c.M + 1, err);
  if (status == DPD_OK && low)
    status = dist_alloc(low, c.M + 1, err);
  c.Pc = malloc(2 * c.M * sizeof *c.Pc);
  if (status == DPD_OK && !c.Pc)
    status = DPD_FAIL(err, DPD_ENOMEM, "PLD: out of memory for %zu points", c.M);
  if (status < 0) {
    free(c.Pc);
    return status;
  }
  c.Qc = c.Pc + c.M;
  cells_fill(pr, h, &c);
  discretise_up(pr, &c, h, up);
  if (low) {
    status = discretise_low(&c, h, low, err);
    if (status == 0)
      discretise_low_round(&c, low);
  }
  free(c.Pc);
  if (status < 0)
    return status;
  dist_trim(up, 1);
  if (low)
    dist_trim(low, 0);
  return DPD_OK;
}

static int check_h(double h, dpd_err *err) {
  if (!(h >= DPD_PLD_H_MIN && h <= DPD_PLD_H_MAX))
    return DPD_FAIL(err, DPD_EINVAL, "h = %g is invalid: the allowed range is [%g, %g]", h,
                    DPD_PLD_H_MIN, DPD_PLD_H_MAX);
  return DPD_OK;
}

static int check_sigma(double sigma, dpd_err *err) {
  if (!(sigma > 0.0 && sigma < INFINITY))
    return DPD_FAIL(err, DPD_EINVAL, "sigma = %g is invalid: the allowed range is (0, inf)",
                    sigma);
  return DPD_OK;
}

static int pld_new(double h, int orders, dpd_pld **out, dpd_err *err) {
  *out = calloc(1, sizeof **out);
  if (!*out)
    return DPD_FAIL(err, DPD_ENOMEM, "PLD: out of memory");
  (*out)->h = h;
  (*out)->orders = orders;
  return DPD_OK;
}

static void pair_set_limits(pld_pair *pr) {
  pr->lmin = pr->form == FORM_REMOVE ? (pr->q < 1.0 ? log1p(-pr->q) : -INFINITY)
             : pr->form == FORM_GENERIC ? pair_limit(pr, -1)
                                        : -INFINITY;
  pr->lmax = pr->form == FORM_ADD ? (pr->q < 1.0 ? -log1p(-pr->q) : INFINITY)
             : pr->form == FORM_GENERIC ? pair_limit(pr, 1)
                                        : INFINITY;
}

/* The Poisson add/remove orders at noise s (in units of the sensitivity) and rate q. */
static void pair_poisson(double s, double q, int order, pld_pair *pr) {
  memset(pr, 0, sizeof *pr);
  pr->s = s;
  pr->q = q;
  if (q == 1.0) {
    pr->form = FORM_GAUSS;
    pr->np = pr->nq = 1;
    pr->ap[0] = pr->aq[0] = 1.0;
    pr->mp[0] = 1.0;
  } else if (order == 0) {
    pr->form = FORM_REMOVE;
    pr->np = 2;
    pr->nq = 1;
    pr->ap[0] = 1.0 - q;
    pr->ap[1] = q;
    pr->mp[1] = 1.0;
    pr->aq[0] = 1.0;
  } else {
    pr->form = FORM_ADD;
    pr->np = 1;
    pr->nq = 2;
    pr->ap[0] = 1.0;
    pr->aq[0] = 1.0 - q;
    pr->aq[1] = q;
    pr->mq[1] = -1.0;
  }
  pair_set_limits(pr);
}

static int make_pairs(const pld_pair *pairs, int orders, double h, dpd_pld **pld, dpd_err *err) {
  dpd_pld *out = NULL;
  int status = pld_new(h, orders, &out, err);
  for (int o = 0; o < orders && status == DPD_OK; o++) {
    status = discretise(&pairs[o], h, &out->d[o][0], &out->d[o][1], err);
    if (status == DPD_OK && 2.0 * h <= DPD_PLD_H_MAX)
      status = discretise(&pairs[o], 2.0 * h, &out->d[o][2], NULL, err);
  }
  if (status < 0) {
    dpd_pld_free(out);
    return status;
  }
  *pld = out;
  return DPD_OK;
}

static int make_mechanism(double sigma, double q, double h, dpd_pld **pld, dpd_err *err) {
  int status;
  if (!pld)
    return DPD_FAIL(err, DPD_EINVAL, "pld output pointer is NULL");
  if ((status = check_sigma(sigma, err)) < 0 || (status = check_h(h, err)) < 0)
    return status;
  if (!(q > 0.0 && q <= 1.0))
    return DPD_FAIL(err, DPD_EINVAL, "q = %g is invalid: the allowed range is (0, 1]", q);
  pld_pair pairs[2];
  int orders = q == 1.0 ? 1 : 2;
  for (int o = 0; o < orders; o++)
    pair_poisson(sigma, q, o, &pairs[o]);
  return make_pairs(pairs, orders, h, pld, err);
}

int dpd_pld_gaussian(double sigma, double h, dpd_pld **pld, dpd_err *err) {
  return make_mechanism(sigma, 1.0, h, pld, err);
}

int dpd_pld_subsampled_gaussian(double sigma, double q, double h, dpd_pld **pld, dpd_err *err) {
  return make_mechanism(sigma, q, h, pld, err);
}

/* log Binomial(b, 1/n) pmf at k (b may be large: the falling factorial summed in logs). */
static double log_binom_pmf(size_t b, size_t n, size_t k) {
  double lf = 0.0;
  for (size_t i = 0; i < k; i++)
    lf += log((double)(b - i));
  return lf - lgamma((double)k + 1.0) - (double)k * log((double)n) +
         (double)(b - k) * log1p(-1.0 / (double)n);
}

/* REPLACEMENT + REPLACE_ONE at noise s (units of 2C) and copies K ~ Binomial(b, 1/n):
 * remove order P = sum_k Bin(k) N(k, s^2), Q = N(0, s^2); add order reflected (P = N(0),
 * Q = sum_k Bin(k) N(-k, s^2)). The binomial tail beyond the last kept k (<= PLD_BINOM_TAIL):
 * remove: to L = +inf (pinf); add: dropped from Q (Q's mass there moved where P has none). */
static int pair_replacement(double s, size_t b, size_t n, int order, pld_pair *pr,
                            dpd_err *err) {
  memset(pr, 0, sizeof *pr);
  pr->s = s;
  pr->form = FORM_GENERIC;
  double w[PLD_KMAX], rest = 0.0, mean = (double)b / (double)n;
  int K = 0;
  for (size_t k = 0; k <= b; k++) {
    if (K == PLD_KMAX)
      return DPD_FAIL(err, DPD_EINVAL,
                      "step.batch = %zu is invalid with step.n = %zu: the copies of one record "
                      "need more than %d mixture components",
                      b, n, PLD_KMAX);
    w[K++] = exp(log_binom_pmf(b, n, k));
    if (k == b)
      break;
    /* the tail beyond k: at most pmf(k+1) / (1 - r), r = pmf(j+1)/pmf(j) at j = k+1 (the ratio
     * decreases in j) */
    double next = exp(log_binom_pmf(b, n, k + 1));
    double r = (double)(b - k - 1) / ((double)(k + 2) * (double)(n - 1));
    if ((double)k >= mean && r < 1.0 && next / (1.0 - r) <= PLD_BINOM_TAIL) {
      rest = next / (1.0 - r);
      break;
    }
  }
  double *a = order == 0 ? pr->ap : pr->aq, *m = order == 0 ? pr->mp : pr->mq;
  for (int k = 0; k < K; k++) {
    a[k] = w[k];
    m[k] = order == 0 ? (double)k : -(double)k;
  }
  if (order == 0) {
    pr->np = K;
    pr->nq = 1;
    pr->aq[0] = 1.0;
    pr->pinf = rest;
  } else {
    pr->np = 1;
    pr->ap[0] = 1.0;
    pr->nq = K;
  }
  pair_set_limits(pr);
  return DPD_OK;
}

/* The pairs (units of C; docs/privacy.md, "Privacy loss distributions", has the argument):
 * POISSON replace-one: the other records enter both batches with the same law, leaving
 *   (1-q)N(0) + qN(g) vs (1-q)N(0) + qN(g'), |g|, |g'| <= 1; worst case g' = -g (checked by 2-D
 *   integration over the angle and the norms on a grid of q, sigma, eps, not proven here);
 *   symmetric under x -> -x.
 * FIXED / REPLACEMENT replace-one: x's slot goes to another record when x is not drawn, so the
 *   other records do not cancel: with all of them at the replacing record's g', D' is N(b g')
 *   and D the mixture over the copies k of x of N(b g' + k (g - g')), |g - g'| = 2: the
 *   remove-type pair at sensitivity 2 per copy (s = sigma / 2, means k), attained, and an upper
 *   bound by the coupling argument of sampling without replacement under substitution (Balle,
 *   Barthe, Gaboardi 2018; Zhu, Dong, Wang 2022), k copies by group privacy of the Gaussian;
 *   the reverse order (the swapped data sets) is composed too. */
int dpd_pld_step_create(const dpd_pld_step *step, double h, dpd_pld **pld, dpd_err *err) {
  int status;
  if (!step || !pld)
    return DPD_FAIL(err, DPD_EINVAL, "PLD step: step or output pointer is NULL");
  if (!(step->sigma > 0.0 && step->sigma < INFINITY))
    return DPD_FAIL(err, DPD_EINVAL, "step.sigma = %g is invalid: the allowed range is (0, inf)",
                    step->sigma);
  if ((status = check_h(h, err)) < 0)
    return status;
  if (step->neighbours != DPD_NEIGHBOURS_ADD_REMOVE &&
      step->neighbours != DPD_NEIGHBOURS_REPLACE_ONE)
    return DPD_FAIL(err, DPD_EINVAL,
                    "step.neighbours = %d is invalid: the allowed values are "
                    "DPD_NEIGHBOURS_ADD_REMOVE (0) and DPD_NEIGHBOURS_REPLACE_ONE (1)",
                    (int)step->neighbours);
  pld_pair pairs[2];
  int orders = 2;
  switch (step->sampling) {
  case DPD_SAMPLING_POISSON:
    if (!(step->q > 0.0 && step->q <= 1.0))
      return DPD_FAIL(err, DPD_EINVAL, "step.q = %g is invalid: the allowed range is (0, 1]",
                      step->q);
    if (step->neighbours == DPD_NEIGHBOURS_ADD_REMOVE)
      return make_mechanism(step->sigma, step->q, h, pld, err);
    if (step->q == 1.0) { /* N(1) vs N(-1): the Gaussian at sensitivity 2 */
      pair_poisson(0.5 * step->sigma, 1.0, 0, &pairs[0]);
    } else {
      /* symmetric (x -> -x swaps P and Q): one order */
      pld_pair *pr = &pairs[0];
      memset(pr, 0, sizeof *pr);
      pr->form = FORM_GENERIC;
      pr->s = step->sigma;
      pr->q = step->q;
      pr->np = pr->nq = 2;
      pr->ap[0] = pr->aq[0] = 1.0 - step->q;
      pr->ap[1] = pr->aq[1] = step->q;
      pr->mp[1] = 1.0;
      pr->mq[1] = -1.0;
      pair_set_limits(pr);
    }
    orders = 1;
    break;
  case DPD_SAMPLING_FIXED:
  case DPD_SAMPLING_REPLACEMENT: {
    const char *name = step->sampling == DPD_SAMPLING_FIXED ? "DPD_SAMPLING_FIXED"
                                                             : "DPD_SAMPLING_REPLACEMENT";
    if (step->neighbours != DPD_NEIGHBOURS_REPLACE_ONE)
      return DPD_FAIL(err, DPD_EINVAL,
                      "step.neighbours = DPD_NEIGHBOURS_ADD_REMOVE is invalid with step.sampling "
                      "= %s (the data set size n is fixed): the allowed value is "
                      "DPD_NEIGHBOURS_REPLACE_ONE",
                      name);
    if (step->n < 1)
      return DPD_FAIL(err, DPD_EINVAL, "step.n = 0 is invalid: the allowed range is n >= 1");
    if (step->batch < 1 || step->batch > step->n)
      return DPD_FAIL(err, DPD_EINVAL, "step.batch = %zu is invalid: the allowed range is [1, n = %zu]",
                      step->batch, step->n);
    double q = (double)step->batch / (double)step->n;
    if (step->sampling == DPD_SAMPLING_FIXED || step->batch == 1) {
      /* b = 1: one draw, Binomial(1, 1/n) copies: the same pair as FIXED with q = 1/n */
      if (q >= 1.0) {
        pair_poisson(0.5 * step->sigma, 1.0, 0, &pairs[0]);
        orders = 1;
      } else {
        for (int o = 0; o < 2; o++)
          pair_poisson(0.5 * step->sigma, q, o, &pairs[o]);
      }
    } else {
      for (int o = 0; o < 2; o++)
        if ((status = pair_replacement(0.5 * step->sigma, step->batch, step->n, o, &pairs[o],
                                       err)) < 0)
          return status;
    }
    break;
  }
  default:
    return DPD_FAIL(err, DPD_EINVAL,
                    "step.sampling = %d is invalid: the allowed values are DPD_SAMPLING_POISSON "
                    "(0), DPD_SAMPLING_FIXED (1) and DPD_SAMPLING_REPLACEMENT (2)",
                    (int)step->sampling);
  }
  return make_pairs(pairs, orders, h, pld, err);
}


/* ---- Chernoff window ---------------------------------------------------------------------- */

/* A coarsened copy of a distribution for the Chernoff bounds: block masses and the grid indices
 * of each block's smallest and largest loss. */
typedef struct {
  size_t nb;
  double mass[COARSE_BLOCKS];
  long long first[COARSE_BLOCKS], last[COARSE_BLOCKS];
} pld_coarse;

static void coarsen(const pld_dist *d, pld_coarse *c) {
  size_t block = (d->n + COARSE_BLOCKS - 1) / COARSE_BLOCKS;
  c->nb = 0;
  for (size_t a = 0; a < d->n; a += block) {
    size_t b = a + block < d->n ? a + block : d->n;
    double mass = 0.0;
    for (size_t k = a; k < b; k++)
      mass += d->p[k];
    if (!(mass > 0.0))
      continue;
    c->mass[c->nb] = mass;
    c->first[c->nb] = d->lo + (long long)a;
    c->last[c->nb] = d->lo + (long long)(b - 1);
    c->nb++;
  }
}

/* Upper bound of log E[e^{lambda L}] (finite part): block mass times e^{lambda * (largest loss
 * of the block if lambda > 0, smallest otherwise)}. */
static double log_mgf_bound(const pld_coarse *c, double h, double lambda) {
  double top = -INFINITY, sum = 0.0;
  for (size_t k = 0; k < c->nb; k++)
    top = fmax(top, lambda * (double)(lambda > 0.0 ? c->last[k] : c->first[k]) * h);
  for (size_t k = 0; k < c->nb; k++)
    sum += c->mass[k] * exp(lambda * (double)(lambda > 0.0 ? c->last[k] : c->first[k]) * h - top);
  return sum > 0.0 ? top + log(sum) : -INFINITY;
}

typedef struct {
  const pld_dist *d[2];
  double mult[2];
  int count;
  double h;
  pld_coarse *coarse; /* count entries, filled by compose_dists */
} pld_sum;

static double sum_log_mgf(const pld_sum *sm, double lambda) {
  double k = 0.0;
  for (int j = 0; j < sm->count; j++)
    k += sm->mult[j] * log_mgf_bound(&sm->coarse[j], sm->h, lambda);
  return k;
}

/* min over lambda > 0 of (K(sign lambda) - lambda * sign * edge) (log of the tail bound at edge),
 * or with edge = NAN the smallest edge (sign = +1) / largest (sign = -1) whose bound is <= tol,
 * by golden section in log lambda (the objectives are unimodal: K is convex). */
static double chernoff(const pld_sum *sm, double sign, double edge, double log_tol) {
  double a = log(1e-4), b = log(1e4), g = 0.5 * (sqrt(5.0) - 1.0);
  double x1 = b - g * (b - a), x2 = a + g * (b - a), f1 = 0, f2 = 0;
  for (int it = 0; it < 2; it++) {
    double x = it ? x2 : x1, lam = exp(x), K = sum_log_mgf(sm, sign * lam);
    double f = isnan(edge) ? (K - log_tol) / lam : K - lam * sign * edge;
    if (it)
      f2 = f;
    else
      f1 = f;
  }
  for (int it = 0; it < 60; it++) {
    if (f1 < f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      double lam = exp(x1), K = sum_log_mgf(sm, sign * lam);
      f1 = isnan(edge) ? (K - log_tol) / lam : K - lam * sign * edge;
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      double lam = exp(x2), K = sum_log_mgf(sm, sign * lam);
      f2 = isnan(edge) ? (K - log_tol) / lam : K - lam * sign * edge;
    }
  }
  double f = fmin(f1, f2);
  return isnan(edge) ? sign * f : f;
}

static size_t next_pow2(size_t n) {
  size_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

static long long mod_ll(long long a, long long n) {
  long long r = a % n;
  return r < 0 ? r + n : r;
}

/* Composes sm (one distribution to the power mult[0], or two distributions once each) into out. */
static int compose_dists(pld_sum *sm, int pessimistic, pld_dist *out, dpd_err *err) {
  double h = sm->h;
  long long supp_lo = 0, supp_hi = 0, base = 0;
  double log_keep = 0.0, log_alias = 0.0;
  for (int j = 0; j < sm->count; j++) {
    const pld_dist *d = sm->d[j];
    supp_lo += (long long)sm->mult[j] * d->lo;
    supp_hi += (long long)sm->mult[j] * (d->lo + (long long)d->n - 1);
    log_keep += sm->mult[j] * log1p(-fmin(d->inf, 1.0));
    log_alias += sm->mult[j] * log1p(d->alias);
  }
  base = supp_lo;
  double support = (double)(supp_hi - supp_lo) + 1.0;
  long long w0 = supp_lo;
  size_t N;
  double tail_hi = 0.0, tail_lo = 0.0;
  if (support <= 8.0 * COARSE_BLOCKS) {
    N = next_pow2((size_t)support);
  } else {
    sm->coarse = malloc((size_t)sm->count * sizeof *sm->coarse);
    if (!sm->coarse)
      return DPD_FAIL(err, DPD_ENOMEM, "PLD composition: out of memory");
    for (int j = 0; j < sm->count; j++)
      coarsen(sm->d[j], &sm->coarse[j]);
    double log_tol = log(DPD_PLD_WRAP_TOL);
    double lo_edge = chernoff(sm, -1.0, NAN, log_tol), hi_edge = chernoff(sm, 1.0, NAN, log_tol);
    long long a = (long long)floor(lo_edge / h) - 1, b = (long long)ceil(hi_edge / h) + 1;
    if (a < supp_lo)
      a = supp_lo;
    if (b > supp_hi)
      b = supp_hi;
    double need = (double)(b - a) + 1.0;
    if (!(need <= (double)DPD_PLD_MAX_POINTS)) {
      free(sm->coarse);
      return DPD_FAIL(err, DPD_EINVAL,
                      "the composition needs a grid of %.0f points (> %zu, the memory limit): "
                      "h = %g is too fine for this many steps; the allowed range is h >= %g",
                      need, DPD_PLD_MAX_POINTS, h, h * need / (double)DPD_PLD_MAX_POINTS);
    }
    N = next_pow2((size_t)need);
    if ((double)N >= support) {
      N = next_pow2((size_t)support);
    } else {
      w0 = a;
      if (w0 > supp_lo)
        tail_lo = exp(chernoff(sm, -1.0, (double)(w0 - 1) * h, 0.0));
      if (w0 + (long long)N - 1 < supp_hi)
        tail_hi = exp(chernoff(sm, 1.0, (double)(w0 + (long long)N) * h, 0.0));
    }
    free(sm->coarse);
    sm->coarse = NULL;
  }
  if (N < 2)
    N = 2;
  size_t nc = N / 2 + 1;
  double *buf = fftw_malloc(N * sizeof *buf), *buf2 = NULL;
  fftw_complex *spec = fftw_malloc(nc * sizeof *spec), *spec2 = NULL;
  if (sm->count == 2) {
    buf2 = fftw_malloc(N * sizeof *buf2);
    spec2 = fftw_malloc(nc * sizeof *spec2);
  }
  int status = DPD_OK;
  if (!buf || !spec || (sm->count == 2 && (!buf2 || !spec2)))
    status = DPD_FAIL(err, DPD_ENOMEM, "PLD composition: out of memory for %zu points", N);
  fftw_plan fwd = NULL, inv = NULL;
  if (status == DPD_OK) {
    fwd = fftw_plan_dft_r2c_1d((int)N, buf, spec, FFTW_ESTIMATE);
    inv = fftw_plan_dft_c2r_1d((int)N, spec, buf, FFTW_ESTIMATE);
    if (!fwd || !inv)
      status = DPD_FAIL(err, DPD_ENOMEM, "PLD composition: FFTW plan of %zu points failed", N);
  }
  if (status == DPD_OK) {
    for (int j = 0; j < sm->count; j++) {
      const pld_dist *d = sm->d[j];
      memset(buf, 0, N * sizeof *buf);
      for (size_t k = 0; k < d->n; k++)
        buf[k % N] += d->p[k];
      fftw_execute(fwd);
      if (j == 0 && sm->count == 2)
        memcpy(spec2, spec, nc * sizeof *spec);
    }
    if (sm->count == 2) {
      for (size_t k = 0; k < nc; k++)
        spec[k] = spec[k] * spec2[k];
    } else {
      double T = sm->mult[0];
      for (size_t k = 0; k < nc; k++) {
        double r = cabs(spec[k]);
        if (!(r > 0.0)) {
          spec[k] = 0.0;
          continue;
        }
        double th = carg(spec[k]) * T, mag = exp(T * log(r));
        spec[k] = mag * cos(th) + I * mag * sin(th);
      }
    }
    fftw_execute(inv);
    out->p = fftw_malloc(N * sizeof *out->p);
    if (!out->p)
      status = DPD_FAIL(err, DPD_ENOMEM, "PLD composition: out of memory for %zu points", N);
  }
  if (status == DPD_OK) {
    /* position k holds the loss index base + k (mod N), placed in [w0, w0 + N) */
    long long shift = mod_ll(base - w0, (long long)N);
    for (size_t k = 0; k < N; k++)
      out->p[(size_t)mod_ll((long long)k + shift, (long long)N)] = buf[k] / (double)N;
    out->n = N;
    out->lo = w0;
    /* FFT rounding: each point is off by up to a few ulps of the largest value (measured here:
     * the most negative point, whose true value is >= 0, and a floor of 8 ulps of the peak),
     * plus each input's own rounding (spread over the output with total weight <= 1 per
     * input step). */
    double neg = 0.0, peak = 0.0, in_noise = 0.0;
    for (size_t k = 0; k < N; k++) {
      neg = fmax(neg, -out->p[k]);
      peak = fmax(peak, out->p[k]);
    }
    for (int j = 0; j < sm->count; j++)
      in_noise += sm->mult[j] * sm->d[j]->noise;
    out->noise = in_noise + fmax(2.0 * neg, 8.0 * DBL_EPSILON * peak);
    double inf = -expm1(log_keep);
    if (pessimistic) {
      out->inf = fmin(1.0, inf + tail_hi);
      out->alias = 0.0;
    } else {
      out->inf = inf;
      out->alias = expm1(log_alias) + tail_lo + tail_hi;
    }
    dist_trim(out, pessimistic);
  }
  if (fwd)
    fftw_destroy_plan(fwd);
  if (inv)
    fftw_destroy_plan(inv);
  fftw_free(buf);
  fftw_free(buf2);
  fftw_free(spec);
  fftw_free(spec2);
  return status;
}

int dpd_pld_compose_self(const dpd_pld *pld, size_t T, dpd_pld **out, dpd_err *err) {
  if (!pld || !out)
    return DPD_FAIL(err, DPD_EINVAL, "PLD compose_self: pld or output pointer is NULL");
  if (T < 1 || T > ((size_t)1 << 40))
    return DPD_FAIL(err, DPD_EINVAL, "T = %zu is invalid: the allowed range is [1, 2^40]", T);
  dpd_pld *res = NULL;
  int status = pld_new(pld->h, pld->orders, &res, err);
  for (int o = 0; o < pld->orders && status == DPD_OK; o++)
    for (int b = 0; b < 3 && status == DPD_OK; b++) {
      if (b == 2 && pld->d[o][2].n == 0)
        continue;
      pld_sum sm = {{&pld->d[o][b], NULL}, {(double)T, 0.0}, 1, b == 2 ? 2.0 * pld->h : pld->h,
                    NULL};
      status = compose_dists(&sm, b != 1, &res->d[o][b], err);
    }
  if (status < 0) {
    dpd_pld_free(res);
    return status;
  }
  *out = res;
  return DPD_OK;
}

int dpd_pld_compose(const dpd_pld *a, const dpd_pld *b, dpd_pld **out, dpd_err *err) {
  if (!a || !b || !out)
    return DPD_FAIL(err, DPD_EINVAL, "PLD compose: a, b or output pointer is NULL");
  if (!(fabs(a->h - b->h) <= 1e-12 * a->h))
    return DPD_FAIL(err, DPD_EINVAL,
                    "b's grid step h = %g is invalid: the allowed value is a's h = %g", b->h,
                    a->h);
  int orders = a->orders > b->orders ? a->orders : b->orders;
  dpd_pld *res = NULL;
  int status = pld_new(a->h, orders, &res, err);
  for (int o = 0; o < orders && status == DPD_OK; o++)
    for (int k = 0; k < 3 && status == DPD_OK; k++) {
      const pld_dist *da = &a->d[o < a->orders ? o : 0][k], *db = &b->d[o < b->orders ? o : 0][k];
      if (k == 2 && (da->n == 0 || db->n == 0))
        continue;
      pld_sum sm = {{da, db}, {1.0, 1.0}, 2, k == 2 ? 2.0 * a->h : a->h, NULL};
      status = compose_dists(&sm, k != 1, &res->d[o][k], err);
    }
  if (status < 0) {
    dpd_pld_free(res);
    return status;
  }
  *out = res;
  return DPD_OK;
}

/* ---- Queries -------------------------------------------------------------------------------- */

/* delta of one distribution with each point moved by sign * noise (the FFT rounding allowance:
 * +1 pessimistic, -1 optimistic, 0 none); *allow (may be NULL) gets the allowance's part. */
static double dist_delta_n(const pld_dist *d, double h, double eps, double sign, double *allow) {
  double sum = 0.0, w = 0.0;
  for (size_t k = d->n; k-- > 0;) {
    double l = (double)(d->lo + (long long)k) * h;
    if (!(l > eps))
      break;
    double c = -expm1(eps - l);
    sum += c * d->p[k];
    w += c;
  }
  if (allow)
    *allow = w * d->noise;
  return sum + sign * w * d->noise + d->inf;
}

/* Smallest eps >= 0 with sum_{L>eps}(1 - e^{eps-L}) (p + sign noise) + inf <= target: on each
 * interval [L_{k-1}, L_k) the sum is inf + A_k - e^{eps - L_k} B_k with suffix sums
 * A_k = sum_{i>=k} p_i, B_k = sum_{i>=k} p_i e^{L_k - L_i} (scaled so that nothing overflows at
 * large eps); solved there in closed form. */
static double dist_eps(const pld_dist *d, double h, double target, double sign) {
  if (d->inf >= target)
    return INFINITY;
  if (dist_delta_n(d, h, 0.0, sign, NULL) <= target)
    return 0.0;
  double A = 0.0, B = 0.0, decay = exp(-h), nz = sign * d->noise;
  for (size_t k = d->n; k-- > 0;) {
    double l = (double)(d->lo + (long long)k) * h;
    if (!(l > 0.0))
      break;
    A += d->p[k] + nz;
    B = B * decay + d->p[k] + nz;
    double lprev = fmax(0.0, l - h);
    double dprev = d->inf + A - exp(lprev - l) * B;
    if (dprev > target) {
      if (!(B > 0.0))
        return lprev;
      double e = l + log((d->inf + A - target) / B);
      return fmin(fmax(e, lprev), l);
    }
  }
  return 0.0;
}

static int check_query(const dpd_pld *pld, dpd_err *err) {
  if (!pld)
    return DPD_FAIL(err, DPD_EINVAL, "pld is NULL");
  return DPD_OK;
}

int dpd_pld_delta(const dpd_pld *pld, double eps, double *delta_up, double *delta_low,
                  dpd_err *err) {
  int status = check_query(pld, err);
  if (status < 0)
    return status;
  if (!(eps >= 0.0))
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is [0, inf]", eps);
  double up = 0.0, low = 0.0;
  for (int o = 0; o < pld->orders; o++) {
    up = fmax(up, fmin(1.0, dist_delta_n(&pld->d[o][0], pld->h, eps, 1.0, NULL)));
    const pld_dist *d = &pld->d[o][1];
    low = fmax(low, fmax(0.0, dist_delta_n(d, pld->h, eps, -1.0, NULL) - d->alias));
  }
  if (delta_up)
    *delta_up = up;
  if (delta_low)
    *delta_low = fmin(low, up);
  return DPD_OK;
}

int dpd_pld_epsilon(const dpd_pld *pld, double delta, double *eps_up, double *eps_low,
                    dpd_err *err) {
  int status = check_query(pld, err);
  if (status < 0)
    return status;
  if (!(delta > 0.0 && delta < 1.0))
    return DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)",
                    delta);
  double up = 0.0, low = 0.0;
  for (int o = 0; o < pld->orders; o++) {
    const pld_dist *d = &pld->d[o][0];
    double e = dist_eps(d, pld->h, delta, 1.0), allow = 0.0;
    /* re-check, rounding up until the pessimistic delta is met */
    double stepsize = 1e-14 * fmax(1.0, e);
    for (int it = 0; it < 200 && isfinite(e) && dist_delta_n(d, pld->h, e, 1.0, &allow) > delta;
         it++) {
      e += stepsize;
      stepsize *= 2.0;
    }
    if (isfinite(e) && allow > DPD_PLD_NOISE_SHARE * delta)
      return DPD_FAIL(err, DPD_EINVAL,
                      "delta = %g is invalid for this PLD: the FFT rounding of its %zu points "
                      "(about %.2g each) accounts for %.2g of delta(eps = %g), more than %g of "
                      "it; the allowed range is delta >= %.2g (or fewer points: a coarser h)",
                      delta, d->n, d->noise, allow, e, DPD_PLD_NOISE_SHARE,
                      allow / DPD_PLD_NOISE_SHARE);
    up = fmax(up, e);
    d = &pld->d[o][1];
    low = fmax(low, dist_eps(d, pld->h, delta + d->alias, -1.0));
  }
  if (eps_up)
    *eps_up = up;
  if (eps_low)
    *eps_low = fmin(low, up);
  return DPD_OK;
}

/* The pessimistic eps is exact at h -> 0 up to a second-order term: eps_up(h) ~ eps + c h^2
 * (each step's delta curve is a chord of the true one). With eps_up on the grid 2h as well,
 * eps_up(h) - (eps_up(2h) - eps_up(h)) / 3 removes that term (Richardson extrapolation; both
 * without the FFT rounding allowance); the result is clamped into [eps_low, eps_up]. Without a
 * 2h grid (h > DPD_PLD_H_MAX / 2, or composed with such a PLD) the estimate is eps_up. */
int dpd_pld_epsilon_estimate(const dpd_pld *pld, double delta, double *eps_est, dpd_err *err) {
  double up = NAN, low = NAN;
  int status = dpd_pld_epsilon(pld, delta, &up, &low, err);
  if (status < 0)
    return status;
  double est = -INFINITY;
  for (int o = 0; o < pld->orders; o++) {
    const pld_dist *d = &pld->d[o][0], *d2 = &pld->d[o][2];
    double e1 = dist_eps(d, pld->h, delta, 0.0), e = e1;
    if (d2->n > 0 && isfinite(e1)) {
      double e2 = dist_eps(d2, 2.0 * pld->h, delta, 0.0);
      if (isfinite(e2))
        e = e1 - (e2 - e1) / 3.0;
    }
    est = fmax(est, e);
  }
  if (!(est >= low)) /* also NAN */
    est = low;
  if (est > up)
    est = up;
  if (eps_est)
    *eps_est = est;
  return DPD_OK;
}

double dpd_pld_h(const dpd_pld *pld) { return pld ? pld->h : NAN; }

size_t dpd_pld_points(const dpd_pld *pld) {
  size_t n = 0;
  if (pld)
    for (int o = 0; o < pld->orders; o++)
      for (int b = 0; b < 2; b++)
        n = pld->d[o][b].n > n ? pld->d[o][b].n : n;
  return n;
}

int dpd_pld_step_h_for(const dpd_pld_step *step, size_t T, double delta, double rel, double *h,
                       dpd_err *err) {
  if (!step || !h)
    return DPD_FAIL(err, DPD_EINVAL, "PLD h_for: step or output pointer is NULL");
  if (!(rel > 0.0 && rel <= 0.5))
    return DPD_FAIL(err, DPD_EINVAL, "rel = %g is invalid: the allowed range is (0, 0.5]", rel);
  if (!(delta > 0.0 && delta < 1.0))
    return DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)",
                    delta);
  if (T < 1 || T > ((size_t)1 << 40))
    return DPD_FAIL(err, DPD_EINVAL, "T = %zu is invalid: the allowed range is [1, 2^40]", T);
  /* pilots: eps_up(h0) - eps_est ~ c h0^2 gives c, hence h; a pilot much coarser than the h it
   * suggests (or than eps itself) is not in the h^2 regime, so the next pilot is at 3 h, up to 5
   * pilots. At delta >= 1e-6 (above a pilot's FFT floor; c varies slowly with delta). A pilot
   * that cannot answer (too small a delta for its grid) stops with h0 / 20. */
  double h0 = DPD_PLD_H_PILOT, out = h0, pilot_delta = fmax(delta, 1e-6);
  for (int it = 0; it < 5; it++) {
    double up = NAN, est = NAN;
    dpd_pld *one = NULL, *all = NULL;
    dpd_err perr;
    int status = dpd_pld_step_create(step, h0, &one, err);
    if (status < 0)
      return status; /* the step itself is invalid */
    status = dpd_pld_compose_self(one, T, &all, &perr);
    if (status == DPD_OK)
      status = dpd_pld_epsilon(all, pilot_delta, &up, NULL, &perr);
    if (status == DPD_OK)
      status = dpd_pld_epsilon_estimate(all, pilot_delta, &est, &perr);
    dpd_pld_free(one);
    dpd_pld_free(all);
    if (status == DPD_ENOMEM)
      return DPD_FAIL(err, DPD_ENOMEM, "%s", perr.reason);
    if (status < 0) {
      out = h0 / 20.0;
      break;
    }
    out = h0;
    if (isfinite(up) && est > 0.0 && up - est > rel * est)
      out = 0.7 * h0 * sqrt(rel * est / (up - est));
    else if (!isfinite(up))
      out = 0.1 * h0;
    if (est > 0.0 && out > 0.05 * est)
      out = 0.05 * est; /* at least 20 grid steps per eps */
    if (!(out < h0 / 4.0) || out <= DPD_PLD_H_MIN)
      break;
    h0 = 3.0 * out;
  }
  *h = fmin(fmax(out, DPD_PLD_H_MIN), DPD_PLD_H_MAX);
  return DPD_OK;
}
