/* The accountant of subsampled Gaussian runs (include/dpdyn/account.h; docs/privacy.md,
 * "Accounting subsampled DP-SGD").
 * SPDX-License-Identifier: MIT
 *
 * A run is a list of segments. Its PLD: each segment's one-step PLD composed with itself by an
 * FFT power (dpd_pld_compose_self), the segments then composed one after the other
 * (dpd_pld_compose). Gaussian and shuffle steps are one Gaussian step of noise multiplier
 * sigma / sensitivity (sensitivity 1 for add/remove, 2 for replace-one: the two contributions
 * differ by up to 2C); shuffle counts one step per epoch.
 *
 * The grid step. The pessimistic and optimistic discretisations differ by less than h per
 * step, so eps_up - eps_low is at most about T h (measured: far less, about T h^2). With h = 0 the accountant starts from the
 * coarse h = accuracy * eps_guess / sqrt(T) (eps_guess: RDP's epsilon, else 1) and refines h by
 * the measured width (taken as proportional to h^2: the optimistic discretisation of pld.c is
 * second order; a first-order width only takes more passes) until eps_up - eps_est <= accuracy/2 * eps_est
 * (on grids h <= 0.02) or eps_up - eps_low <= accuracy * eps_up, DPD_ACCOUNT_REFINE_MAX grids, h =
 * DPD_PLD_H_MIN or a grid the memory limit refuses: then the last grid that worked is reported,
 * its width as measured (never hidden: epsilon and epsilon_lower are both in the result). */
#include "dpdyn/account.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/account_impl.h"
#include "core/error_impl.h"
#include "dpdyn/privacy.h"
#include "dpdyn/rdp.h"

/* The loss range of one step's grid at most (points), below which h is not taken: a floor on h
 * that keeps one step's distribution within 2^23 points (64 MiB). */
#define STEP_POINTS_MAX 8388608.0
/* Standard deviations of the noise to the per-step loss range's edge (the PLD's tail cut). */
#define TAIL_SD 9.5
#define RDP_ORDERS_MAX 128

const char *dpd_mechanism_name(dpd_mechanism m) {
  static const char *const names[] = {"gaussian", "subsampled_gaussian", "shuffle"};
  return (unsigned)m < 3 ? names[m] : NULL;
}

const char *dpd_sampling_name(dpd_sampling s) {
  static const char *const names[] = {"poisson", "fixed", "replacement"};
  return (unsigned)s < 3 ? names[s] : NULL;
}

const char *dpd_neighbours_name(dpd_neighbours r) {
  static const char *const names[] = {"add_remove", "replace_one"};
  return (unsigned)r < 2 ? names[r] : NULL;
}

static int subsampled(const dpd_account *a) { return a->mechanism == DPD_MECHANISM_SUBSAMPLED; }

static int poisson(const dpd_account *a) {
  return subsampled(a) && a->sampling == DPD_SAMPLING_POISSON;
}

/* The noise multiplier of one Gaussian step of the relation's sensitivity. */
static double gauss_sigma(const dpd_account *a, const dpd_account_segment *s) {
  return a->neighbours == DPD_NEIGHBOURS_REPLACE_ONE ? 0.5 * s->sigma : s->sigma;
}

static size_t total_steps(const dpd_account *a) {
  size_t t = 0;
  for (size_t i = 0; i < a->nsegments; i++) {
    t += a->segments[i].steps;
  }
  return t;
}

static int check_segment(const dpd_account *a, size_t i, size_t *total, dpd_err *err) {
  const dpd_account_segment *s = &a->segments[i];
  if (!(s->sigma > 0.0 && s->sigma < INFINITY)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "segments[%zu].sigma = %g is invalid: the allowed range is (0, inf)", i,
                    s->sigma);
  }
  if (poisson(a) && !(s->q > 0.0 && s->q <= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "segments[%zu].q = %g is invalid: the allowed range is (0, 1]",
                    i, s->q);
  }
  if (subsampled(a) && !poisson(a) && !(s->batch >= 1 && s->batch <= a->n)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "segments[%zu].batch = %zu is invalid: the allowed range is [1, n = %zu]", i,
                    s->batch, a->n);
  }
  if (s->steps < 1 || s->steps > DPD_ACCOUNT_STEPS_MAX - *total) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "segments[%zu].steps = %zu is invalid: the allowed range is [1, 2^40] (all "
                    "segments together)",
                    i, s->steps);
  }
  *total += s->steps;
  return DPD_OK;
}

int dpd_account_check(const dpd_account *a, dpd_err *err) {
  size_t total = 0;
  int status = DPD_OK;
  if (a == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "account: NULL dpd_account");
  }
  if (dpd_mechanism_name(a->mechanism) == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "mechanism = %d is invalid: the allowed values are 0 (gaussian), 1 "
                    "(subsampled_gaussian), 2 (shuffle)",
                    (int)a->mechanism);
  }
  if (dpd_neighbours_name(a->neighbours) == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "neighbours = %d is invalid: the allowed values are 0 (add_remove), 1 "
                    "(replace_one)",
                    (int)a->neighbours);
  }
  if (subsampled(a) && dpd_sampling_name(a->sampling) == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "sampling = %d is invalid: the allowed values are 0 (poisson), 1 (fixed), 2 "
                    "(replacement)",
                    (int)a->sampling);
  }
  if (subsampled(a) && !poisson(a) && a->neighbours != DPD_NEIGHBOURS_REPLACE_ONE) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "neighbours = add_remove is invalid with sampling = %s (the data set size n "
                    "is fixed): the allowed value is replace_one",
                    dpd_sampling_name(a->sampling));
  }
  if (subsampled(a) && !poisson(a) && a->n < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "n = 0 is invalid: the allowed range is n >= 1 (sampling = %s)",
                    dpd_sampling_name(a->sampling));
  }
  if (a->segments == NULL || a->nsegments < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "nsegments = %zu is invalid: the allowed range is >= 1",
                    a->segments == NULL ? 0 : a->nsegments);
  }
  if (!(a->accuracy >= 0.0 && a->accuracy < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "accuracy = %g is invalid: the allowed range is [0, 1)",
                    a->accuracy);
  }
  if (!(a->h == 0.0 || (a->h >= DPD_PLD_H_MIN && a->h <= DPD_PLD_H_MAX))) {
    return DPD_FAIL(err, DPD_EINVAL, "h = %g is invalid: the allowed values are 0 or [%g, %g]",
                    a->h, DPD_PLD_H_MIN, DPD_PLD_H_MAX);
  }
  for (size_t i = 0; i < a->nsegments && status == DPD_OK; i++) {
    status = check_segment(a, i, &total, err);
  }
  return status;
}

double dpd__account_accuracy(const dpd_account *a) {
  return a->accuracy > 0.0 ? a->accuracy : DPD_ACCOUNT_ACCURACY_DEFAULT;
}

/* The largest loss of one step at the tail cut (the noise at TAIL_SD standard deviations): the
 * half-range of its grid, for the memory floor of h. */
static double step_loss_range(const dpd_account *a, const dpd_account_segment *s) {
  double sg = gauss_sigma(a, s), q, y;
  if (!subsampled(a)) {
    return 1.0 / (2.0 * sg * sg) + TAIL_SD / sg;
  }
  q = poisson(a) ? s->q : fmin(1.0, (double)s->batch / (double)a->n);
  y = (1.0 + 2.0 * TAIL_SD * sg) / (2.0 * sg * sg);
  return y < 30.0 ? log1p(q * expm1(y)) : y + log(q) + log1p((1.0 - q) / q * exp(-y));
}

double dpd__account_h_for(const dpd_account *a, double eps, size_t total) {
  double h = dpd__account_accuracy(a) * eps / (double)total, floor_mem = DPD_PLD_H_MIN;
  for (size_t i = 0; i < a->nsegments; i++) {
    floor_mem = fmax(floor_mem, 2.0 * step_loss_range(a, &a->segments[i]) / STEP_POINTS_MAX);
  }
  h = fmax(h, floor_mem);
  return h >= DPD_PLD_H_MIN ? fmin(h, DPD_PLD_H_MAX) : DPD_PLD_H_MIN;
}

/* One step's PLD of segment s with the grid step h. */
static int step_pld(const dpd_account *a, const dpd_account_segment *s, double h, dpd_pld **p,
                    dpd_err *err) {
  dpd_pld_step step;
  if (!subsampled(a)) {
    return dpd_pld_gaussian(gauss_sigma(a, s), h, p, err);
  }
  step.sampling = a->sampling;
  step.neighbours = a->neighbours;
  step.sigma = s->sigma;
  step.q = s->q;
  step.batch = s->batch;
  step.n = a->n;
  return dpd_pld_step_create(&step, h, p, err);
}

/* The PLD of the whole run with grid step h; *points: the largest grid met. */
static int run_pld_prec(const dpd_account *a, double h, dpd_pld_precision prec, dpd_pld **out,
                        size_t *points, dpd_err *err) {
  dpd_pld *acc = NULL;
  int status = DPD_OK;
  *points = 0;
  for (size_t i = 0; i < a->nsegments && status == DPD_OK; i++) {
    dpd_pld *one = NULL, *seg = NULL, *next = NULL;
    status = step_pld(a, &a->segments[i], h, &one, err);
    if (status == DPD_OK && a->segments[i].steps > 1) {
      status = dpd_pld_compose_self_prec(one, a->segments[i].steps, prec, &seg, err);
      dpd_pld_free(one);
    } else {
      seg = one;
    }
    if (status == DPD_OK && acc != NULL) {
      status = dpd_pld_compose_prec(acc, seg, prec, &next, err);
      *points = status == DPD_OK && dpd_pld_points(seg) > *points ? dpd_pld_points(seg) : *points;
      dpd_pld_free(seg);
      dpd_pld_free(acc);
      acc = next;
    } else if (status == DPD_OK) {
      acc = seg;
    }
  }
  if (status < 0) {
    dpd_pld_free(acc);
    return status;
  }
  *points = dpd_pld_points(acc) > *points ? dpd_pld_points(acc) : *points;
  *out = acc;
  return DPD_OK;
}

/* The run's PLD at grid step h, composed in double; again in long double when the double FFT's
 * rounding is too large for delta (dpd_pld_epsilon refuses it: pld.h, "FFT rounding"). One
 * precision for the whole sequence: a composition's rounding allowance adds its inputs'. */
static int run_pld(const dpd_account *a, double h, double delta, dpd_pld **out, size_t *points,
                   dpd_err *err) {
  dpd_err probe;
  double up;
  int status = run_pld_prec(a, h, DPD_PLD_DOUBLE, out, points, err);
  if (status < 0 || !(delta > 0.0 && delta < 1.0)) {
    return status;
  }
  memset(&probe, 0, sizeof probe);
  if (dpd_pld_epsilon(*out, delta, &up, NULL, &probe) == DPD_OK ||
      strstr(probe.reason, "FFT rounding") == NULL) {
    return DPD_OK;
  }
  dpd_pld_free(*out);
  *out = NULL;
  return run_pld_prec(a, h, DPD_PLD_EXTENDED, out, points, err);
}

/* The composed RDP curve of the run at the default orders; 0 where RDP is not computed. */
static size_t rdp_curve(const dpd_account *a, double *total, const double **alphas) {
  double one[RDP_ORDERS_MAX];
  size_t n = 0;
  *alphas = dpd_rdp_orders_default(&n);
  if (n > RDP_ORDERS_MAX || (subsampled(a) && !(poisson(a) &&
                                                a->neighbours == DPD_NEIGHBOURS_ADD_REMOVE))) {
    return 0;
  }
  memset(total, 0, n * sizeof *total);
  for (size_t i = 0; i < a->nsegments; i++) {
    const dpd_account_segment *s = &a->segments[i];
    int status = subsampled(a) ? dpd_rdp_subsampled_gaussian(s->sigma, s->q, *alphas, n, one, NULL)
                               : dpd_rdp_gaussian(gauss_sigma(a, s), *alphas, n, one, NULL);
    if (status < 0 || dpd_rdp_compose(one, n, s->steps, total, NULL) < 0) {
      return 0;
    }
  }
  return n;
}

static void rdp_epsilon(const dpd_account *a, double delta, double *eps, double *alpha) {
  double total[RDP_ORDERS_MAX];
  const double *alphas;
  size_t n = rdp_curve(a, total, &alphas);
  if (n == 0 || dpd_rdp_epsilon(alphas, total, n, delta, eps, alpha, NULL) < 0) {
    *eps = *alpha = NAN;
  }
}

double dpd__account_rdp_delta(const dpd_account *a, double eps) {
  double total[RDP_ORDERS_MAX], delta, alpha;
  const double *alphas;
  size_t n = rdp_curve(a, total, &alphas);
  return n > 0 && dpd_rdp_delta(alphas, total, n, eps, &delta, &alpha, NULL) == DPD_OK ? delta
                                                                                        : NAN;
}

double dpd__account_clt_mu(const dpd_account *a) {
  double sum = 0.0;
  if (!poisson(a) || a->neighbours != DPD_NEIGHBOURS_ADD_REMOVE) {
    return NAN;
  }
  for (size_t i = 0; i < a->nsegments; i++) {
    const dpd_account_segment *s = &a->segments[i];
    sum += (double)s->steps * s->q * s->q * expm1(1.0 / (s->sigma * s->sigma));
  }
  return sqrt(sum);
}

double dpd__account_eps_guess(const dpd_account *a, double delta) {
  double eps, alpha;
  rdp_epsilon(a, delta, &eps, &alpha);
  return eps > 0.0 && eps < INFINITY ? eps : 1.0;
}

/* The PLD with the grid step refined until the bounds' width meets the accuracy (see the top). */
#define DPD_ACCOUNT_H_TRUST 0.02

static int auto_pld(const dpd_account *a, double delta, dpd_pld **out, double *h_used,
                    size_t *points, dpd_err *err) {
  const double acc = dpd__account_accuracy(a);
  const double guess = dpd__account_eps_guess(a, delta);
  /* a coarse first grid (cheap): the width measured there sets the next one */
  double h = fmax(dpd__account_h_for(a, guess, total_steps(a)),
                  fmin(DPD_PLD_H_MAX, acc * guess / sqrt((double)total_steps(a))));
  dpd_pld *best = NULL;
  int failed = 0;
  for (int it = 0; it < DPD_ACCOUNT_REFINE_MAX; it++) {
    dpd_err local;
    dpd_pld *p = NULL;
    double up, low, est;
    size_t pts;
    int status = run_pld(a, h, delta, &p, &pts, best != NULL ? &local : err);
    if (status < 0 && best == NULL) {
      return status;
    }
    if (status < 0 && ++failed <= 2) {
      /* refused: the composition window search can fail at one step and succeed at a finer one
       * (its Chernoff bound is evaluated on a coarsened copy); try two finer steps */
      h = fmax(DPD_PLD_H_MIN, 0.25 * h);
      continue;
    }
    if (status < 0) {
      break; /* finer grids are refused (memory): the last one is reported */
    }
    if ((status = dpd_pld_epsilon(p, delta, &up, &low, best != NULL ? &local : err)) < 0 ||
        (status = dpd_pld_epsilon_estimate(p, delta, &est, best != NULL ? &local : err)) < 0) {
      dpd_pld_free(p);
      if (best == NULL) {
        return status;
      }
      break; /* the finer grid cannot answer delta (its FFT rounding): the last one is reported */
    }
    dpd_pld_free(best);
    best = p;
    *h_used = h;
    *points = pts;
    /* Done when the upper bound is within half the accuracy of the estimate (the upper bound's
     * error shrinks as h^2: tests/unit/test_pld_table.c measures it against the reference), or
     * when even the rigorous lower bound is within the accuracy. */
    /* The estimate (Richardson on h and 2h) is trusted on grids no coarser than
     * DPD_ACCOUNT_H_TRUST, the pilot step of dpd_pld_step_h_for and the coarsest step the
     * reference table was checked at. */
    const double gap = fmax(up - est, 0.0);
    /* ... and on grids no coarser than est/20 (for few steps a coarse grid can give h and 2h
     * the same upper bound: pld.h's dpd_pld_step_h_for keeps h <= eps_est/20 too) */
    const double trust = fmin(DPD_ACCOUNT_H_TRUST, est / 20.0);
    if (!(up < INFINITY) || (gap <= 0.5 * acc * est && h <= trust) ||
        up - low <= acc * up || h <= DPD_PLD_H_MIN) {
      break;
    }
    h = h > trust ? fmax(DPD_PLD_H_MIN, trust)
                  : fmax(DPD_PLD_H_MIN, fmin(0.9 * h, h * sqrt(0.9 * 0.5 * acc * est / gap)));
  }
  *out = best;
  return DPD_OK;
}

int dpd__account_run(const dpd_account *a, double delta_hint, dpd_pld **pld, double *h_used,
                     size_t *points, dpd_err *err) {
  int status = dpd_account_check(a, err);
  if (status < 0) {
    return status;
  }
  if (pld == NULL || h_used == NULL || points == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "account: NULL output pointer");
  }
  if (!(delta_hint > 0.0 && delta_hint < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)",
                    delta_hint);
  }
  *h_used = a->h;
  return a->h > 0.0 ? run_pld(a, a->h, delta_hint, pld, points, err)
                    : auto_pld(a, delta_hint, pld, h_used, points, err);
}

int dpd_account_pld(const dpd_account *a, double delta_hint, dpd_pld **pld, double *h_used,
                    dpd_err *err) {
  size_t points;
  double h;
  int status = dpd__account_run(a, delta_hint, pld, &h, &points, err);
  if (status == DPD_OK && h_used != NULL) {
    *h_used = h;
  }
  return status;
}

int dpd__account_fill(const dpd_account *a, const dpd_pld *p, double delta, double h, size_t points,
                dpd_account_result *r, dpd_err *err) {
  dpd_account_result x;
  int status = dpd_pld_epsilon(p, delta, &x.epsilon, &x.epsilon_lower, err);
  if (status < 0) {
    return status;
  }
  if ((status = dpd_pld_epsilon_estimate(p, delta, &x.epsilon_estimate, err)) < 0) {
    return status;
  }
  /* the estimate between the bounds (pld.h), clamped against rounding */
  x.epsilon_estimate = fmin(x.epsilon, fmax(x.epsilon_lower, x.epsilon_estimate));
  rdp_epsilon(a, delta, &x.epsilon_rdp, &x.best_alpha);
  x.mu_clt = dpd__account_clt_mu(a);
  if (!(x.mu_clt >= 0.0) || dpd_privacy_gdp_eps(x.mu_clt, delta, &x.epsilon_clt, NULL) < 0) {
    x.mu_clt = x.epsilon_clt = NAN;
  }
  x.h = h;
  x.points = points;
  x.total_steps = total_steps(a);
  *r = x;
  return DPD_OK;
}

static int check_delta(double delta, dpd_err *err) {
  return delta > 0.0 && delta < 1.0
             ? DPD_OK
             : DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)", delta);
}

int dpd__account_epsilon_at_h(const dpd_account *a, double delta, double h, dpd_account_result *r,
                              dpd_err *err) {
  dpd_pld *p = NULL;
  size_t points;
  int status = run_pld(a, h, delta, &p, &points, err);
  if (status == DPD_OK) {
    status = dpd__account_fill(a, p, delta, h, points, r, err);
  }
  dpd_pld_free(p);
  return status;
}

int dpd_account_epsilon(const dpd_account *a, double delta, dpd_account_result *r, dpd_err *err) {
  dpd_pld *p = NULL;
  size_t points = 0;
  double h = 0.0;
  int status = check_delta(delta, err);
  if (status == DPD_OK && r == NULL) {
    status = DPD_FAIL(err, DPD_EINVAL, "account: NULL result pointer");
  }
  if (status == DPD_OK && (status = dpd__account_run(a, delta, &p, &h, &points, err)) == DPD_OK) {
    status = dpd__account_fill(a, p, delta, h, points, r, err);
  }
  dpd_pld_free(p);
  return status;
}

/* The delta to pick the grid by for queries at eps: RDP's delta there, within [1e-12, 1e-2]. */
static double delta_hint(const dpd_account *a, double eps) {
  double d = dpd__account_rdp_delta(a, eps);
  return d >= 1e-12 && d <= 1e-2 ? d : d > 1e-2 ? 1e-2 : 1e-12;
}

int dpd_account_delta(const dpd_account *a, double eps, double *delta_up, double *delta_low,
                      double *delta_rdp, dpd_err *err) {
  dpd_pld *p = NULL;
  double up, low;
  int status = dpd_account_check(a, err);
  if (status < 0) {
    return status;
  }
  if (!(eps >= 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "eps = %g is invalid: the allowed range is [0, inf]", eps);
  }
  if ((status = dpd_account_pld(a, delta_hint(a, eps), &p, NULL, err)) == DPD_OK &&
      (status = dpd_pld_delta(p, eps, &up, &low, err)) == DPD_OK) {
    if (delta_up != NULL) {
      *delta_up = up;
    }
    if (delta_low != NULL) {
      *delta_low = low;
    }
    if (delta_rdp != NULL) {
      *delta_rdp = dpd__account_rdp_delta(a, eps);
    }
  }
  dpd_pld_free(p);
  return status;
}

int dpd_account_curve(const dpd_account *a, const double *eps, size_t n, double *delta_up,
                      double *delta_low, dpd_err *err) {
  dpd_pld *p = NULL;
  double emid;
  int status = dpd_account_check(a, err);
  if (status < 0) {
    return status;
  }
  if (eps == NULL || delta_up == NULL || n < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "account curve: n = %zu (the allowed range is >= 1) or NULL "
                                     "eps / delta_up", n);
  }
  for (size_t i = 0; i < n; i++) {
    if (!(eps[i] >= 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL, "eps[%zu] = %g is invalid: the allowed range is [0, inf]",
                      i, eps[i]);
    }
  }
  emid = eps[n / 2] < INFINITY ? eps[n / 2] : 1.0;
  if ((status = dpd_account_pld(a, delta_hint(a, emid), &p, NULL, err)) < 0) {
    return status;
  }
  for (size_t i = 0; i < n && status == DPD_OK; i++) {
    status = dpd_pld_delta(p, eps[i], &delta_up[i], delta_low != NULL ? &delta_low[i] : NULL, err);
  }
  dpd_pld_free(p);
  return status;
}

/* RDP's epsilon of `a` with its one segment replaced by `seg` (NAN where not computed). */
/* RDP's epsilon of one segment: the inverse's starting point only. Fixed and with-replacement
 * batches (replace-one), which have no RDP bound here, start from the Poisson add/remove pair at
 * rate b/n and noise multiplier sigma/2: their own pair for a fixed batch and for b = 1 (pld.h),
 * a guess otherwise. */
static double rdp_epsilon_seg(const dpd_account *a, dpd_account_segment seg, double delta) {
  dpd_account b = *a;
  double eps, alpha;
  if (subsampled(a) && !poisson(a) && a->n > 0) {
    b.sampling = DPD_SAMPLING_POISSON;
    b.neighbours = DPD_NEIGHBOURS_ADD_REMOVE;
    seg.q = fmin(1.0, (double)seg.batch / (double)a->n);
    seg.sigma *= 0.5;
  }
  b.segments = &seg;
  b.nsegments = 1;
  rdp_epsilon(&b, delta, &eps, &alpha);
  return eps;
}

double dpd__account_rdp_sigma(const dpd_account *a, double eps, double delta) {
  dpd_account_segment seg = a->segments[0];
  double lo = log(DPD_ACCOUNT_SIGMA_LO), hi = log(DPD_ACCOUNT_SIGMA_HI);
  seg.sigma = DPD_ACCOUNT_SIGMA_HI;
  if (!(rdp_epsilon_seg(a, seg, delta) <= eps)) {
    return NAN;
  }
  for (int it = 0; it < 40; it++) {
    seg.sigma = exp(0.5 * (lo + hi));
    if (rdp_epsilon_seg(a, seg, delta) <= eps) {
      hi = log(seg.sigma);
    } else {
      lo = log(seg.sigma);
    }
  }
  return exp(hi);
}

double dpd__account_rdp_steps(const dpd_account *a, double eps, double delta) {
  dpd_account_segment seg = a->segments[0];
  double lo = 0.0, hi = log((double)DPD_ACCOUNT_STEPS_MAX);
  seg.steps = 1;
  if (!(rdp_epsilon_seg(a, seg, delta) <= eps)) {
    return NAN;
  }
  for (int it = 0; it < 40; it++) {
    seg.steps = (size_t)exp(0.5 * (lo + hi));
    if (rdp_epsilon_seg(a, seg, delta) <= eps) {
      lo = log((double)seg.steps);
    } else {
      hi = log((double)seg.steps);
    }
  }
  return floor(exp(lo) + 1e-9);
}
