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

/* The grid step of a trial: a->h, or accuracy * eps / T (with the trial's memory floor). */
static double trial_h(const dpd_account *a, dpd_account_segment seg, double eps) {
  dpd_account b = *a;
  b.segments = &seg;
  b.nsegments = 1;
  return a->h > 0.0 ? a->h : dpd__account_h_for(&b, eps, seg.steps);
}

/* The PLD upper bound of `a` with segment 0 set to `seg`, at delta (inf when the computation
 * fails: a grid the memory limit refuses). */
static double upper(const dpd_account *a, dpd_account_segment seg, double eps, double delta) {
  dpd_account b = *a;
  dpd_account_result r;
  b.segments = &seg;
  b.nsegments = 1;
  return dpd__account_epsilon_at_h(&b, delta, trial_h(a, seg, eps), &r, NULL) == DPD_OK
             ? r.epsilon
             : INFINITY;
}

static int result_at(const dpd_account *a, dpd_account_segment seg, double eps, double delta,
                     dpd_account_result *at, dpd_err *err) {
  dpd_account b = *a;
  b.segments = &seg;
  b.nsegments = 1;
  return at != NULL ? dpd__account_epsilon_at_h(&b, delta, trial_h(a, seg, eps), at, err) : DPD_OK;
}

/* A bracket lo < hi of sigma with upper(hi) <= eps < upper(lo), by doubling from sigma = 1
 * within [SIGMA_LO, SIGMA_HI]; *lo = *hi when SIGMA_LO meets the target already. */
static int sigma_bracket(const dpd_account *a, dpd_account_segment seg, double eps, double delta,
                         double *lo, double *hi, dpd_err *err) {
  int ok;
  seg.sigma = 1.0;
  ok = upper(a, seg, eps, delta) <= eps;
  while (ok && seg.sigma > DPD_ACCOUNT_SIGMA_LO) {
    *hi = seg.sigma;
    seg.sigma = fmax(DPD_ACCOUNT_SIGMA_LO, 0.5 * seg.sigma);
    if (!(upper(a, seg, eps, delta) <= eps)) {
      *lo = seg.sigma;
      return DPD_OK;
    }
  }
  if (ok) {
    *lo = *hi = DPD_ACCOUNT_SIGMA_LO; /* the bracket's smallest sigma meets the target */
    return DPD_OK;
  }
  while (seg.sigma < DPD_ACCOUNT_SIGMA_HI) {
    *lo = seg.sigma;
    seg.sigma = fmin(DPD_ACCOUNT_SIGMA_HI, 2.0 * seg.sigma);
    if (upper(a, seg, eps, delta) <= eps) {
      *hi = seg.sigma;
      return DPD_OK;
    }
  }
  return DPD_FAIL(err, DPD_EINVAL,
                  "epsilon = %g is invalid at delta = %g: no noise multiplier in [%g, %g] "
                  "reaches it (the PLD upper bound at sigma = %g exceeds it); the allowed range "
                  "is a larger epsilon",
                  eps, delta, DPD_ACCOUNT_SIGMA_LO, DPD_ACCOUNT_SIGMA_HI, DPD_ACCOUNT_SIGMA_HI);
}

int dpd_account_sigma_for(const dpd_account *a, double eps, double delta, double *sigma,
                          dpd_account_result *at, dpd_err *err) {
  dpd_account_segment seg;
  double lo = 0.0, hi = 0.0;
  int status = check_target(a, eps, delta, err);
  if (status < 0) {
    return status;
  }
  seg = a->segments[0];
  if ((status = sigma_bracket(a, seg, eps, delta, &lo, &hi, err)) < 0) {
    return status;
  }
  /* invariant: upper(hi) <= eps < upper(lo); bisection in log sigma */
  while (hi > lo && hi / lo - 1.0 > DPD_ACCOUNT_SIGMA_RTOL) {
    seg.sigma = sqrt(lo * hi);
    if (upper(a, seg, eps, delta) <= eps) {
      hi = seg.sigma;
    } else {
      lo = seg.sigma;
    }
  }
  seg.sigma = hi;
  if ((status = result_at(a, seg, eps, delta, at, err)) < 0) {
    return status;
  }
  if (sigma != NULL) {
    *sigma = hi;
  }
  return DPD_OK;
}

int dpd_account_steps_for(const dpd_account *a, double eps, double delta, size_t *steps,
                          dpd_account_result *at, dpd_err *err) {
  dpd_account_segment seg;
  size_t lo, hi; /* upper(lo) <= eps < upper(hi) */
  int status = check_target(a, eps, delta, err);
  if (status < 0) {
    return status;
  }
  seg = a->segments[0];
  seg.steps = 1;
  if (!(upper(a, seg, eps, delta) <= eps)) {
    if (at != NULL) {
      memset(at, 0, sizeof *at);
      at->epsilon_rdp = at->best_alpha = at->mu_clt = at->epsilon_clt = NAN;
    }
    if (steps != NULL) {
      *steps = 0;
    }
    return DPD_OK;
  }
  lo = 1;
  hi = 2;
  for (;;) {
    seg.steps = hi;
    if (!(upper(a, seg, eps, delta) <= eps)) {
      break;
    }
    lo = hi;
    if (hi >= DPD_ACCOUNT_STEPS_MAX) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "epsilon = %g is invalid at delta = %g: even 2^40 steps stay below it; the "
                      "allowed range is a smaller eps",
                      eps, delta);
    }
    hi *= 2;
  }
  while (hi - lo > 1) {
    seg.steps = lo + (hi - lo) / 2;
    if (upper(a, seg, eps, delta) <= eps) {
      lo = seg.steps;
    } else {
      hi = seg.steps;
    }
  }
  seg.steps = lo;
  if ((status = result_at(a, seg, eps, delta, at, err)) < 0) {
    return status;
  }
  if (steps != NULL) {
    *steps = lo;
  }
  return DPD_OK;
}
