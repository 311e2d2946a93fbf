/* Privacy loss distributions (include/dpdyn/pld.h; docs/privacy.md).
 * SPDX-License-Identifier: MIT
 *
 * Why the two bounds are bounds. For a dominating pair (P, Q) of one step, the privacy loss is
 * L = log(dP/dQ)(x), x ~ P, and delta(eps) = E[(1 - e^{eps - L})_+] + P(L = inf). For T adaptive
 * steps with the same neighbouring pair (so the same order in every step) the loss of the
 * composition is S = L_1 + ... + L_T with independent L_j, and delta_T(eps) = E[(1-e^{eps-S})_+]
 * (+ the mass where some L_j = inf). The map S -> (1 - e^{eps - S})_+ is nondecreasing and
 * non-negative. Hence (i) rounding every loss up to the grid (or moving mass to +inf) can only
 * increase delta_T, rounding down only decrease it; (ii) adding non-negative mass anywhere can
 * only increase it, dropping mass only decrease it. Both facts are preserved by convolution, so
 * they hold after any sequence of compositions. Add/remove neighbours: the pair (D, D + {x}) is
 * composed in the "remove" order in every step and the pair (D + {x}, D) in the "add" order;
 * delta is the maximum of the two composed curves.
 *
 * One step. remove: x ~ P = (1-q) N(0,s^2) + q N(1,s^2), Q = N(0,s^2),
 *   L(x) = log((1-q) + q e^{(2x-1)/(2s^2)}), increasing in x, so P(L <= l) = P(x <= x(l)) with
 *   x(l) = s^2 log((e^l - (1-q))/q) + 1/2 (l > log(1-q)).
 * add: x ~ N(0,s^2), L(x) = -log((1-q) + q e^{(2x-1)/(2s^2)}), decreasing: P(L <= l) =
 *   P(x >= x(-l)) (l < -log(1-q)). q = 1 (Gaussian): L ~ N(1/(2s^2), 1/s^2) in both orders.
 * The loss CDF F and survival S are evaluated with erfc (accurate in both tails); a bin's mass is
 * a difference of whichever of F or S is below 1/2. The support is cut where F or S is below
 * DPD_PLD_TAIL: pessimistic: the mass below goes to the lowest grid point (rounded up), the mass
 * above into the infinity mass; optimistic: the mass below is dropped, the mass above goes to the
 * highest point (rounded down).
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
 * Not accounted: FFT rounding (about 1e-16 of the largest probability per point). */
#include "dpdyn/pld.h"

#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"

#define DPD_PLD_TAIL 1e-20     /* per-step truncated tail mass */
#define DPD_PLD_WRAP_TOL 1e-22 /* Chernoff bound of the mass outside a composition's window */
#define DPD_PLD_TRIM 1e-30     /* mass trimmed off the ends of a result (pessimistically) */
#define COARSE_BLOCKS 4096

typedef struct {
  long long lo; /* grid index of p[0]: its loss is lo * h */
  size_t n;
  double *p;
  double inf;   /* mass at +infinity */
  double alias; /* optimistic only: bound of the extra (folded) mass */
} pld_dist;

struct dpd_pld {
  double h;
  int orders;         /* 1 (symmetric: both orders equal) or 2 (0 remove, 1 add) */
  pld_dist d[2][2];   /* [order][0 pessimistic, 1 optimistic] */
};

typedef enum { LAW_GAUSS, LAW_REMOVE, LAW_ADD } law_kind;
typedef struct {
  law_kind kind;
  double s, q;
} pld_law;

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

/* F(l) = P(L <= l) (upper = 0) or S(l) = P(L > l) (upper = 1). */
static double law_eval(const pld_law *law, double l, int upper) {
  double s = law->s, q = law->q;
  switch (law->kind) {
  case LAW_GAUSS: {
    double z = (l - 0.5 / (s * s)) * s;
    return upper ? phi_upper(z) : phi_upper(-z);
  }
  case LAW_REMOVE: {
    if (q < 1.0 && !(l > log1p(-q)))
      return upper ? 1.0 : 0.0;
    double x = x_of_loss(l, s, q);
    if (upper)
      return (1.0 - q) * phi_upper(x / s) + q * phi_upper((x - 1.0) / s);
    return (1.0 - q) * phi_upper(-x / s) + q * phi_upper((1.0 - x) / s);
  }
  case LAW_ADD:
  default: {
    if (q < 1.0 && !(l < -log1p(-q)))
      return upper ? 0.0 : 1.0;
    double x = x_of_loss(-l, s, q);
    return upper ? phi_upper(-x / s) : phi_upper(x / s);
  }
  }
}

/* Loss l with law_eval(l, upper) <= tail: bracket by doubling, then bisection. */
static double law_cut(const pld_law *law, int upper, double tail) {
  double dir = upper ? 1.0 : -1.0, in = 0.5 / (law->s * law->s), out = in;
  double step = 1.0;
  if (law->kind == LAW_ADD)
    in = -in;
  out = in;
  for (int k = 0; k < 2000 && law_eval(law, out, upper) > tail; k++) {
    in = out;
    out += dir * step;
    step *= 2.0;
  }
  for (int k = 0; k < 100; k++) {
    double mid = 0.5 * (in + out);
    if (law_eval(law, mid, upper) > tail)
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
    for (int b = 0; b < 2; b++)
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

/* Both discretisations of one step's loss law. */
static int discretise(const pld_law *law, double h, pld_dist *up, pld_dist *low, dpd_err *err) {
  double lmin = law_cut(law, 0, DPD_PLD_TAIL), lmax = law_cut(law, 1, DPD_PLD_TAIL);
  double span = (ceil(lmax / h) - floor(lmin / h)) + 1.0;
  if (!(span <= (double)DPD_PLD_MAX_POINTS))
    return DPD_FAIL(err, DPD_EINVAL,
                    "h = %g is invalid: one step's loss range [%g, %g] needs %.0f grid points "
                    "(> %zu); the allowed range is h >= %g here",
                    h, lmin, lmax, span, DPD_PLD_MAX_POINTS, (lmax - lmin) / (double)(DPD_PLD_MAX_POINTS - 2));
  long long i0 = (long long)floor(lmin / h), i1 = (long long)ceil(lmax / h);
  size_t n = (size_t)(i1 - i0 + 1);
  int status = dist_alloc(up, n, err);
  if (status == DPD_OK)
    status = dist_alloc(low, n, err);
  if (status < 0)
    return status;
  double *F = up->p, *S = low->p; /* F, S at the grid points, then turned into masses in place */
  for (size_t k = 0; k < n; k++) {
    double l = (double)(i0 + (long long)k) * h;
    F[k] = law_eval(law, l, 0);
    S[k] = law_eval(law, l, 1);
  }
  /* mass of (l_{k-1}, l_k] for k >= 1 */
  double prevF = F[0], prevS = S[0];
  up->lo = low->lo = i0;
  up->inf = S[n - 1];
  low->inf = 0.0;
  double topS = S[n - 1];
  for (size_t k = 1; k < n; k++) {
    double Fk = F[k], Sk = S[k];
    double m = prevS < 0.5 ? prevS - Sk : Fk - prevF;
    if (!(m > 0.0))
      m = 0.0;
    F[k] = m;     /* pessimistic: (l_{k-1}, l_k] -> l_k */
    S[k - 1] = m; /* optimistic:  (l_{k-1}, l_k] -> l_{k-1} */
    prevF = Fk;
    prevS = Sk;
  }
  /* F[0] keeps P(L <= l_0): pushed up to l_0. Optimistic top point gets everything above. */
  S[n - 1] = topS;
  up->alias = low->alias = 0.0;
  dist_trim(up, 1);
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

static int make_mechanism(double sigma, double q, double h, dpd_pld **pld, dpd_err *err) {
  int status;
  if (!pld)
    return DPD_FAIL(err, DPD_EINVAL, "pld output pointer is NULL");
  if ((status = check_sigma(sigma, err)) < 0 || (status = check_h(h, err)) < 0)
    return status;
  if (!(q > 0.0 && q <= 1.0))
    return DPD_FAIL(err, DPD_EINVAL, "q = %g is invalid: the allowed range is (0, 1]", q);
  dpd_pld *out = NULL;
  int orders = q == 1.0 ? 1 : 2;
  if ((status = pld_new(h, orders, &out, err)) < 0)
    return status;
  for (int o = 0; o < orders && status == DPD_OK; o++) {
    pld_law law = {orders == 1 ? LAW_GAUSS : (o == 0 ? LAW_REMOVE : LAW_ADD), sigma, q};
    status = discretise(&law, h, &out->d[o][0], &out->d[o][1], err);
  }
  if (status < 0) {
    dpd_pld_free(out);
    return status;
  }
  *pld = out;
  return DPD_OK;
}

int dpd_pld_gaussian(double sigma, double h, dpd_pld **pld, dpd_err *err) {
  return make_mechanism(sigma, 1.0, h, pld, err);
}

int dpd_pld_subsampled_gaussian(double sigma, double q, double h, dpd_pld **pld, dpd_err *err) {
  return make_mechanism(sigma, q, h, pld, err);
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
    for (int b = 0; b < 2 && status == DPD_OK; b++) {
      pld_sum sm = {{&pld->d[o][b], NULL}, {(double)T, 0.0}, 1, pld->h, NULL};
      status = compose_dists(&sm, b == 0, &res->d[o][b], err);
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
    for (int k = 0; k < 2 && status == DPD_OK; k++) {
      pld_sum sm = {{&a->d[o < a->orders ? o : 0][k], &b->d[o < b->orders ? o : 0][k]},
                    {1.0, 1.0}, 2, a->h, NULL};
      status = compose_dists(&sm, k == 0, &res->d[o][k], err);
    }
  if (status < 0) {
    dpd_pld_free(res);
    return status;
  }
  *out = res;
  return DPD_OK;
}

/* ---- Queries -------------------------------------------------------------------------------- */

static double dist_delta(const pld_dist *d, double h, double eps) {
  double sum = 0.0;
  for (size_t k = d->n; k-- > 0;) {
    double l = (double)(d->lo + (long long)k) * h;
    if (!(l > eps))
      break;
    sum += -expm1(eps - l) * d->p[k];
  }
  return sum + d->inf;
}

/* Smallest eps >= 0 with sum_{L>eps}(1 - e^{eps-L}) p + inf <= target: on each interval
 * [L_{k-1}, L_k) the sum is inf + A_k - e^{eps - L_k} B_k with suffix sums A_k = sum_{i>=k} p_i,
 * B_k = sum_{i>=k} p_i e^{L_k - L_i} (scaled so that nothing overflows at large eps); solved
 * there in closed form. */
static double dist_eps(const pld_dist *d, double h, double target) {
  if (d->inf >= target)
    return INFINITY;
  if (dist_delta(d, h, 0.0) <= target)
    return 0.0;
  double A = 0.0, B = 0.0, decay = exp(-h);
  for (size_t k = d->n; k-- > 0;) {
    double l = (double)(d->lo + (long long)k) * h;
    if (!(l > 0.0))
      break;
    A += d->p[k];
    B = B * decay + d->p[k];
    double lprev = fmax(0.0, l - h);
    double dprev = d->inf + A - exp(lprev - l) * B;
    if (dprev > target) {
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
    up = fmax(up, fmin(1.0, dist_delta(&pld->d[o][0], pld->h, eps)));
    const pld_dist *d = &pld->d[o][1];
    low = fmax(low, fmax(0.0, dist_delta(d, pld->h, eps) - d->alias));
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
    double e = dist_eps(d, pld->h, delta);
    /* re-check, rounding up until the pessimistic delta is met */
    double stepsize = 1e-14 * fmax(1.0, e);
    for (int it = 0; it < 200 && isfinite(e) && dist_delta(d, pld->h, e) > delta; it++) {
      e += stepsize;
      stepsize *= 2.0;
    }
    up = fmax(up, e);
    d = &pld->d[o][1];
    low = fmax(low, dist_eps(d, pld->h, delta + d->alias));
  }
  if (eps_up)
    *eps_up = up;
  if (eps_low)
    *eps_low = fmin(low, up);
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
