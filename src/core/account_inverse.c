/* The inverse of the accountant (include/dpdyn/account.h): the smallest noise multiplier or the
 * most steps for a target (eps, delta), by bracketing and bisection on the PLD upper bound.
 * SPDX-License-Identifier: MIT
 *
 * Every trial is the PLD upper bound at a fixed grid step (a->h, or one from the h^2 law that
 * puts the upper bound about accuracy/2 above the PLD estimate, as the automatic grid of
 * account.c does), and only a value whose upper bound was
 * computed and found <= eps is ever returned; the result `at` is recomputed at that value with
 * the same grid, so at->epsilon <= eps (never overshoots). A trial that fails (a grid the memory
 * limit refuses) counts as "above the target". */
#include <math.h>
#include <string.h>

#include "core/account_impl.h"
#include "core/error_impl.h"

static int check_target(const dpd_account *a, double eps, double delta, dpd_err *err) {
  int status = dpd_account_check(a, err);
  if (status < 0) {
    return status;
  }
  if (a->nsegments != 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "nsegments = %zu is invalid for the inverse: the allowed value is 1",
                    a->nsegments);
  }
  if (!(eps > 0.0 && eps < INFINITY)) {
    return DPD_FAIL(err, DPD_EINVAL, "epsilon = %g is invalid: the allowed range is (0, inf)", eps);
  }
  if (!(delta > 0.0 && delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "delta = %g is invalid: the allowed range is (0, 1)", delta);
  }
  return DPD_OK;
}

/* The search of the inverse over one variable of the segment: sigma (the good side, where the
 * upper bound is <= eps, is above) or steps (integers; the good side is below). */
typedef struct {
  const dpd_account *a;
  dpd_account_segment seg;
  double eps, delta;
  int steps;
  double c, hcap; /* the grid step of a trial: sqrt(0.9 accuracy eps / (c T)), <= hcap */
} search;

/* The grid step of a trial (a pure function of the trial's segment, so that the answer is
 * recomputed on the grid that found it): a->h, or sqrt(0.9 accuracy eps / (c T)) (see calibrate)
 * at most hcap, above the memory floor of the trial's segment. */
static double trial_h(const search *s) {
  dpd_account b = *s->a;
  double h = s->c > 0.0 ? sqrt(0.45 * dpd__account_accuracy(s->a) * s->eps /
                               (s->c * (double)s->seg.steps))
                        : s->hcap;
  b.segments = &s->seg;
  b.nsegments = 1;
  return s->a->h > 0.0 ? s->a->h
                       : fmax(fmin(DPD_PLD_H_MAX, fmin(h, s->hcap)),
                              dpd__account_h_for(&b, 0.0, s->seg.steps));
}

/* The accounting of `a` with segment 0 set to the trial's (returned-owned status). */
static int trial(const search *s, dpd_account_result *r, dpd_err *err) {
  dpd_account b = *s->a;
  b.segments = &s->seg;
  b.nsegments = 1;
  return dpd__account_epsilon_at_h(&b, s->delta, trial_h(s), r, err);
}

/* c and hcap: from the automatic grid step h0 at the starting point (account.c) and the width
 * w0 of the bounds there, taken as w = c T h^2 (pld.c's discretisations are second order), so
 * that the width at the target is about 0.9 accuracy eps; never coarser than h0 (where the width
 * is not yet quadratic in h, the law underestimates it). */
static void calibrate(search *s) {
  dpd_account b = *s->a;
  dpd_pld *p = NULL;
  double h, up, est;
  size_t points;
  b.segments = &s->seg;
  b.nsegments = 1;
  s->c = 0.0;
  s->hcap = DPD_PLD_H_MAX;
  if (s->a->h == 0.0 && dpd__account_run(&b, s->delta, &p, &h, &points, NULL) == DPD_OK &&
      dpd_pld_epsilon(p, s->delta, &up, NULL, NULL) == DPD_OK &&
      dpd_pld_epsilon_estimate(p, s->delta, &est, NULL) == DPD_OK) {
    s->hcap = h;
    s->c = up < INFINITY && up > est ? (up - est) / ((double)s->seg.steps * h * h) : 0.0;
  }
  dpd_pld_free(p);
}

static void var_set(search *s, double x) {
  if (s->steps) {
    s->seg.steps = (size_t)x;
  } else {
    s->seg.sigma = x;
  }
}

/* log(upper / eps) at x: <= 0 on the good side; inf where the computation fails. */
static double f_at(search *s, double x) {
  double u;
  dpd_account_result r;
  var_set(s, x);
  u = trial(s, &r, NULL) == DPD_OK ? r.epsilon : INFINITY;
  return u <= s->eps ? (u > 0.0 ? log(u / s->eps) : -INFINITY) : u < INFINITY ? log(u / s->eps)
                                                                              : INFINITY;
}

static int done(const search *s, double good, double bad) {
  return s->steps ? bad - good <= 1.0 : good / bad - 1.0 <= DPD_ACCOUNT_SIGMA_RTOL;
}

/* One probe at x strictly between good and bad: moves one end of the bracket to it; when the
 * same end moves twice in a row, the other end's f is halved (Illinois), so that the secant
 * estimates approach the root from both sides. */
static void probe(search *s, double x, double *good, double *fg, double *bad, double *fb,
                  int *last) {
  double f;
  if (!(x > fmin(*good, *bad) && x < fmax(*good, *bad))) {
    return;
  }
  f = f_at(s, x);
  if (f <= 0.0) {
    *good = x;
    *fg = f;
    *fb *= *last == 1 ? 0.5 : 1.0;
    *last = 1;
  } else {
    *bad = x;
    *fb = f;
    *fg *= *last == -1 ? 0.5 : 1.0;
    *last = -1;
  }
}

/* Shrinks the bracket [good, bad] by secant steps in (log x, f) (eps is about a power of sigma
 * and of T) with the Illinois rule, each estimate probed just on the good side (or, after the
 * good end moved, just on the bad side), so that a right estimate closes the bracket;
 * bisection where f is not finite. */
static void refine(search *s, double *good, double fg, double *bad, double fb) {
  int last = 0;
  for (int it = 0; it < 64 && !done(s, *good, *bad); it++) {
    double lg = log(*good), lb = log(*bad), w = lb - lg, r, x;
    r = fg > -INFINITY && fb < INFINITY && fb > fg ? lg - fg * w / (fb - fg) : lg + 0.5 * w;
    r = w > 0.0 ? fmin(fmax(r, lg + 0.02 * w), lb - 0.02 * w)
                : fmin(fmax(r, lb - 0.02 * w), lg + 0.02 * w);
    if (s->steps) {
      x = last == 1 ? floor(exp(r)) + 1.0 : floor(exp(r));
      x = x > *good ? x : *good + 1.0;
    } else {
      x = exp(r) * (last == 1 ? 1.0 - 0.3 * DPD_ACCOUNT_SIGMA_RTOL : 1.0 + 0.3 * DPD_ACCOUNT_SIGMA_RTOL);
    }
    probe(s, x, good, &fg, bad, &fb, &last);
  }
}

/* A bracket from the starting point x0 (the RDP answer, or 1): steps of growing factor towards
 * the other side, within [lo, hi]. 1: found; 0: the good side reaches `lo` or `hi` (then *good
 * holds that end if it is good, else NAN). */
static int bracket(search *s, double x0, double lo, double hi, double *good, double *fg,
                   double *bad, double *fb) {
  double f = f_at(s, x0), factor = 1.25, x = x0;
  int up = (f <= 0.0) == s->steps; /* the direction of the other side */
  *good = *bad = NAN;
  if (f <= 0.0) {
    *good = x0;
    *fg = f;
  } else {
    *bad = x0;
    *fb = f;
  }
  while (up ? x < hi : x > lo) {
    x = up ? fmin(hi, x * factor) : fmax(lo, x / factor);
    x = s->steps ? (up ? ceil(x) : floor(x)) : x;
    f = f_at(s, x);
    if ((f <= 0.0) != (*good == *good)) {
      if (f <= 0.0) {
        *good = x;
        *fg = f;
      } else {
        *bad = x;
        *fb = f;
      }
      return 1;
    }
    if (f <= 0.0) {
      *good = x;
      *fg = f;
    } else {
      *bad = x;
      *fb = f;
    }
    factor *= factor;
  }
  return 0;
}

/* Bracket from x0 within [lo, hi] and refine, then check the width of the bounds at the answer:
 * wider than the accuracy, the grid law is re-measured there (c from that width, hcap the grid
 * used) and the search is run again from the answer, up to DPD_ACCOUNT_REFINE_MAX times.
 * 1: *good holds the answer and *r its accounting; 0: no change of side in [lo, hi] (*good: the
 * end that meets the target, or NAN); < 0: an error of the accounting at the answer. */
static int solve(search *s, double x0, double lo, double hi, double *good, dpd_account_result *r,
                 dpd_err *err) {
  const double acc = dpd__account_accuracy(s->a);
  int status = 1;
  for (int pass = 0; pass < DPD_ACCOUNT_REFINE_MAX && status == 1; pass++) {
    double bad, fg = 0.0, fb = 0.0, h;
    if (!bracket(s, x0, lo, hi, good, &fg, &bad, &fb)) {
      return 0;
    }
    refine(s, good, fg, &bad, fb);
    var_set(s, *good);
    h = trial_h(s);
    if ((status = trial(s, r, err)) < 0) {
      return status;
    }
    /* the same stopping rule as the automatic grid (account.c): the upper bound within
     * accuracy/2 of the estimate, or the rigorous bounds within accuracy */
    status = s->a->h == 0.0 &&
                     r->epsilon - r->epsilon_estimate > 0.5 * acc * r->epsilon_estimate &&
                     r->epsilon - r->epsilon_lower > acc * r->epsilon &&
                     h > DPD_PLD_H_MIN * 1.0001
                 ? 1
                 : 2;
    if (status == 1) { /* the law gap = c T h^2, measured at the answer, with a 10 % margin */
      s->c = 1.1 * (r->epsilon - r->epsilon_estimate) / ((double)s->seg.steps * h * h);
      s->hcap = h;
      x0 = *good;
    }
  }
  return 1;
}

static int unreachable(double eps, double delta, dpd_err *err) {
  return DPD_FAIL(err, DPD_EINVAL,
                  "epsilon = %g is invalid at delta = %g: no noise multiplier in [%g, %g] reaches "
                  "it (the PLD upper bound at sigma = %g exceeds it); the allowed range is a "
                  "larger epsilon",
                  eps, delta, DPD_ACCOUNT_SIGMA_LO, DPD_ACCOUNT_SIGMA_HI, DPD_ACCOUNT_SIGMA_HI);
}

int dpd_account_sigma_for(const dpd_account *a, double eps, double delta, double *sigma,
                          dpd_account_result *at, dpd_err *err) {
  search s = {.a = a, .eps = eps, .delta = delta, .steps = 0, .c = 0.0, .hcap = 0.0};
  dpd_account_result r;
  double good = NAN, x0;
  int status = check_target(a, eps, delta, err);
  if (status < 0) {
    return status;
  }
  s.seg = a->segments[0];
  s.hcap = dpd__account_accuracy(a) * eps / sqrt((double)s.seg.steps); /* the cheap check's */
  if (!(f_at(&s, DPD_ACCOUNT_SIGMA_HI) <= 0.0)) { /* cheap: one step's loss is tiny there */
    return unreachable(eps, delta, err);
  }
  x0 = dpd__account_rdp_sigma(a, eps, delta);
  x0 = x0 > DPD_ACCOUNT_SIGMA_LO && x0 < DPD_ACCOUNT_SIGMA_HI ? x0 : 1.0;
  var_set(&s, x0);
  calibrate(&s);
  status = solve(&s, x0, DPD_ACCOUNT_SIGMA_LO, DPD_ACCOUNT_SIGMA_HI, &good, &r, err);
  if (status == 0 && !(good == good)) {
    return unreachable(eps, delta, err);
  }
  if (status == 0) { /* the bracket's smallest sigma meets the target already */
    var_set(&s, good);
    status = trial(&s, &r, err);
  }
  if (status < 0) {
    return status;
  }
  if (at != NULL) {
    *at = r;
  }
  if (sigma != NULL) {
    *sigma = good;
  }
  return DPD_OK;
}

int dpd_account_steps_for(const dpd_account *a, double eps, double delta, size_t *steps,
                          dpd_account_result *at, dpd_err *err) {
  search s = {.a = a, .eps = eps, .delta = delta, .steps = 1, .c = 0.0, .hcap = 0.0};
  dpd_account_result r;
  double good = NAN, x0;
  int status = check_target(a, eps, delta, err);
  if (status < 0) {
    return status;
  }
  s.seg = a->segments[0];
  s.hcap = dpd__account_accuracy(a) * eps; /* a coarse grid for the one-step check */
  x0 = f_at(&s, 1.0) <= 0.0 ? dpd__account_rdp_steps(a, eps, delta) : 1.0; /* one step: cheap */
  x0 = x0 >= 1.0 && x0 < (double)DPD_ACCOUNT_STEPS_MAX ? floor(x0) : 1.0;
  var_set(&s, x0);
  calibrate(&s);
  status = solve(&s, x0, 1.0, (double)DPD_ACCOUNT_STEPS_MAX, &good, &r, err);
  if (status == 0 && good == good) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "epsilon = %g is invalid at delta = %g: even 2^40 steps stay below it; the "
                    "allowed range is a smaller epsilon",
                    eps, delta);
  }
  if (status < 0) {
    return status;
  }
  if (status == 0) { /* even one step exceeds the target */
    memset(&r, 0, sizeof r);
    r.epsilon_rdp = r.best_alpha = r.mu_clt = r.epsilon_clt = NAN;
    good = 0.0;
  }
  if (at != NULL) {
    *at = r;
  }
  if (steps != NULL) {
    *steps = (size_t)good;
  }
  return DPD_OK;
}
