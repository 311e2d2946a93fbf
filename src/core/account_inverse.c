/* The inverse of the accountant (include/dpdyn/account.h): the smallest noise multiplier or the
 * most steps for a target (eps, delta), by bracketing and bisection on the PLD upper bound.
 * SPDX-License-Identifier: MIT
 *
 * Every trial is the PLD upper bound at a fixed grid step (a->h, or accuracy * eps / T: the
 * width of the bounds is then about accuracy * eps), and only a value whose upper bound was
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
  double scale; /* the grid step of a trial: scale * accuracy * eps / sqrt(T) (calibrate) */
} search;

/* The grid step of a trial (a pure function of the trial's segment, so that the answer is
 * recomputed on the grid that found it): a->h, or scale * accuracy * eps / sqrt(T), above the
 * memory floor of the trial's segment. */
static double trial_h(const search *s) {
  dpd_account b = *s->a;
  double base = dpd__account_accuracy(s->a) * s->eps / sqrt((double)s->seg.steps);
  b.segments = &s->seg;
  b.nsegments = 1;
  return s->a->h > 0.0 ? s->a->h
                       : fmax(fmin(DPD_PLD_H_MAX, s->scale * base),
                              dpd__account_h_for(&b, 0.0, s->seg.steps));
}

/* The accounting of `a` with segment 0 set to the trial's (returned-owned status). */
static int trial(const search *s, dpd_account_result *r, dpd_err *err) {
  dpd_account b = *s->a;
  b.segments = &s->seg;
  b.nsegments = 1;
  return dpd__account_epsilon_at_h(&b, s->delta, trial_h(s), r, err);
}

/* scale: from the automatic grid step h0 at the starting point (account.c) and the width w0 of
 * the bounds there, taken as w = c T h^2 (pld.c's optimistic discretisation is second order):
 * h(T) = sqrt(0.9 accuracy eps / (c T)), so that the width at the target is 0.9 accuracy eps. */
static void calibrate(search *s) {
  dpd_account b = *s->a;
  dpd_pld *p = NULL;
  const double acc = dpd__account_accuracy(s->a), T = (double)s->seg.steps;
  double h, up, low;
  size_t points;
  b.segments = &s->seg;
  b.nsegments = 1;
  s->scale = 1.0;
  if (s->a->h == 0.0 && dpd__account_run(&b, s->delta, &p, &h, &points, NULL) == DPD_OK &&
      dpd_pld_epsilon(p, s->delta, &up, &low, NULL) == DPD_OK) {
    double c = (up - low) / (T * h * h);
    s->scale = c > 0.0 && up < INFINITY ? sqrt(0.9 * acc * s->eps / c) / (acc * s->eps)
                                        : h / (acc * s->eps / sqrt(T));
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

static int unreachable(double eps, double delta, dpd_err *err) {
  return DPD_FAIL(err, DPD_EINVAL,
                  "epsilon = %g is invalid at delta = %g: no noise multiplier in [%g, %g] reaches "
                  "it (the PLD upper bound at sigma = %g exceeds it); the allowed range is a "
                  "larger epsilon",
                  eps, delta, DPD_ACCOUNT_SIGMA_LO, DPD_ACCOUNT_SIGMA_HI, DPD_ACCOUNT_SIGMA_HI);
}

int dpd_account_sigma_for(const dpd_account *a, double eps, double delta, double *sigma,
                          dpd_account_result *at, dpd_err *err) {
  search s = {.a = a, .eps = eps, .delta = delta, .steps = 0, .scale = 1.0};
  double good, bad, fg = 0.0, fb = 0.0, x0;
  int status = check_target(a, eps, delta, err);
  if (status < 0) {
    return status;
  }
  s.seg = a->segments[0];
  if (!(f_at(&s, DPD_ACCOUNT_SIGMA_HI) <= 0.0)) { /* cheap: one step's loss is tiny there */
    return unreachable(eps, delta, err);
  }
  x0 = dpd__account_rdp_sigma(a, eps, delta);
  x0 = x0 > DPD_ACCOUNT_SIGMA_LO && x0 < DPD_ACCOUNT_SIGMA_HI ? x0 : 1.0;
  var_set(&s, x0);
  calibrate(&s);
  if (bracket(&s, x0, DPD_ACCOUNT_SIGMA_LO, DPD_ACCOUNT_SIGMA_HI, &good, &fg, &bad, &fb)) {
    refine(&s, &good, fg, &bad, fb);
  } else if (!(good == good)) {
    return unreachable(eps, delta, err);
  }
  s.seg.sigma = good; /* the bracket's smallest sigma when it meets the target already */
  if (at != NULL && (status = trial(&s, at, err)) < 0) {
    return status;
  }
  if (sigma != NULL) {
    *sigma = good;
  }
  return DPD_OK;
}

int dpd_account_steps_for(const dpd_account *a, double eps, double delta, size_t *steps,
                          dpd_account_result *at, dpd_err *err) {
  search s = {.a = a, .eps = eps, .delta = delta, .steps = 1};
  double good, bad, fg = 0.0, fb = 0.0, x0;
  int status = check_target(a, eps, delta, err);
  if (status < 0) {
    return status;
  }
  s.seg = a->segments[0];
  s.scale = 1.0;
  x0 = f_at(&s, 1.0) <= 0.0 ? dpd__account_rdp_steps(a, eps, delta) : 1.0; /* one step: cheap */
  x0 = x0 >= 1.0 && x0 < (double)DPD_ACCOUNT_STEPS_MAX ? floor(x0) : 1.0;
  var_set(&s, x0);
  calibrate(&s);
  if (bracket(&s, x0, 1.0, (double)DPD_ACCOUNT_STEPS_MAX, &good, &fg, &bad, &fb)) {
    refine(&s, &good, fg, &bad, fb);
  } else if (good == good) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "epsilon = %g is invalid at delta = %g: even 2^40 steps stay below it; the "
                    "allowed range is a smaller epsilon",
                    eps, delta);
  } else { /* even one step exceeds the target */
    if (at != NULL) {
      memset(at, 0, sizeof *at);
      at->epsilon_rdp = at->best_alpha = at->mu_clt = at->epsilon_clt = NAN;
    }
    if (steps != NULL) {
      *steps = 0;
    }
    return DPD_OK;
  }
  s.seg.steps = (size_t)good;
  if (at != NULL && (status = trial(&s, at, err)) < 0) {
    return status;
  }
  if (steps != NULL) {
    *steps = (size_t)good;
  }
  return DPD_OK;
}
