/* model=nc, compare's science: the exact one-step error (notes B.5) on each replicate's own
 * training data and test points (overall and per class), the paired gap to the simulation, the
 * papers' D.1 bounds, and the seed's Thm 3.4 bound (nc_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Wang, Zhu, Su & Wang, arXiv:2405.08920 (v3), Thm 3.4 and Thm D.1;
 * notes-rf-nc-sp.md B.4 (the theorems and their corrections) and B.5 (the exact error).
 *
 * What is exact where (docs/nc.md). One step from W = 0 gives logits W x ~ eta N(m(x), sigma^2
 * |x|^2 I_K), m_j(x) = S_j^T x up to a term common to all j, where S_j is the class-j sum of the
 * training features as trained (feature clipping and normalize applied) and x the test point as
 * the classifier sees it (minus the training mean under centring). P[err | x] is then the
 * one-dimensional integral of B.5, computed by dpd_nc_error_logits. A replicate's theory value
 * is the mean of P[err | x_j] over its own test points, so it is exact given the replicate's
 * training data and test points: the simulation differs from it only through the noise draw,
 * and the average over the training and test laws is the mean over replicates (the same
 * replicates as the simulation). A projection onto a Frobenius ball after the one step rescales
 * W by a positive factor and leaves the argmax alone. Not exact: more than one step (W_t is a
 * nonlinear function of earlier noise), and adversarial test points (they depend on the trained
 * W, i.e. on the noise). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/nc_theory.h"
#include "core/dot_impl.h"
#include "nc/nc_impl.h"

/* Coordinates per pass of the blocked logits (the class sums' chunk, K NC_CHUNK doubles, stays in
 * cache while the block's points go by). */
#define NC_CHUNK 1024
/* Test points per block: about NC_BLOCK_DOUBLES / p (1 .. NC_BLOCK_MAX), so a block holds at
 * most max(p, NC_BLOCK_DOUBLES) doubles (16 MiB at p <= 2^21). Results do not depend on it:
 * every point's logits are added chunk by chunk in coordinate order. */
#define NC_BLOCK_DOUBLES 2097152
#define NC_BLOCK_MAX 64

const char *dpd__nc_theory_why_not(const dpd_nc_problem *pr, const dpd_nc_sim_config *sc) {
  if (sc->steps != 1) {
    return "the exact error is for one step (steps = 1): after it the gradient is taken at a "
           "W that depends on the noise (softmax, clipping), so the logits are no longer "
           "Gaussian; see bound_thm34";
  }
  if (pr->cfg.test_shift == DPD_NC_SHIFT_ADVERSARIAL) {
    return "adversarial test points depend on the trained W, i.e. on the noise draw, so "
           "P[err | x] at a fixed x does not apply; the simulation is the estimate";
  }
  if (pr->from_data && pr->data->X_test == NULL) {
    return "per-replicate features (fill, e.g. PCA) exist only inside a replicate: the test "
           "points the classifier sees cannot be formed outside it (dpd_nc_test_point)";
  }
  return NULL;
}

typedef struct {
  const dpd_nc_problem *pr;
  const dpd_nc_sim_config *sc;
  size_t block;    /* test points per block */
  int per_class;   /* clean ETF test: one point per class, weighted by its count */
  int centre;      /* subtract the training mean from test points */
  double *e;       /* [seeds] output */
  double *e_class; /* [seeds K] output, or NULL */
  dpd_err *errors; /* NULL inside the threads: a failing replicate is run again to word it */
} theory_job;

static size_t work_doubles(const dpd_nc_problem *pr, size_t block) {
  return (pr->K + 1 + block) * pr->p + block * (pr->K + 1) + pr->K;
}

/* Replicate rep: e[rep] (and e_class[rep K ..]). work: sums [K p], mu [p], X [block p],
 * Z [block K], x2 [block], class totals [K]. */
static int theory_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  (void)slot;
  const theory_job *tj = job;
  const dpd_nc_problem *pr = tj->pr;
  const size_t K = pr->K, p = pr->p, B = tj->block;
  double *sums = work, *mu = sums + K * p, *X = mu + p, *Z = X + B * p, *x2 = Z + B * K;
  double *ctot = x2 + B;
  const size_t npts = tj->per_class ? K : pr->n_test;
  size_t first = 0; /* per_class: the first test index of the next class */
  double total = 0.0;
  int status;
  memset(ctot, 0, K * sizeof *ctot);
  if ((status = dpd_nc_train_sums(pr, tj->sc->seed, rep, sums, mu, tj->errors)) < 0) {
    return status;
  }
  for (size_t j0 = 0; j0 < npts; j0 += B) {
    const size_t nb = npts - j0 < B ? npts - j0 : B;
    size_t cls[NC_BLOCK_MAX];
    double weight[NC_BLOCK_MAX];
    for (size_t b = 0; b < nb; b++) {
      size_t j = j0 + b;
      weight[b] = 1.0;
      if (tj->per_class) { /* class j's first test point, weighted by the class count */
        j = first;
        first += pr->test_counts[j0 + b];
        weight[b] = (double)pr->test_counts[j0 + b];
      }
      if ((status = dpd_nc_test_point(pr, tj->sc->seed, rep, j, tj->centre ? mu : NULL, X + b * p,
                                      &cls[b], tj->errors)) < 0) {
        return status;
      }
    }
    memset(Z, 0, nb * K * sizeof *Z);
    memset(x2, 0, nb * sizeof *x2);
    for (size_t a = 0; a < p; a += NC_CHUNK) {
      const size_t m = p - a < NC_CHUNK ? p - a : NC_CHUNK;
      for (size_t b = 0; b < nb; b++) {
        const double *xb = X + b * p + a;
        for (size_t j = 0; j < K; j++) {
          Z[b * K + j] += dpd__dot8(sums + j * p + a, xb, m);
        }
        x2[b] += dpd__dot8(xb, xb, m);
      }
    }
    for (size_t b = 0; b < nb; b++) {
      double pe;
      if ((status = dpd_nc_error_logits(Z + b * K, K, cls[b], tj->sc->sigma * sqrt(x2[b]), &pe,
                                        tj->errors)) < 0) {
        return status;
      }
      total += weight[b] * pe;
      ctot[cls[b]] += weight[b] * pe;
    }
  }
  tj->e[rep] = total / (double)pr->n_test;
  for (size_t k = 0; tj->e_class != NULL && k < K; k++) {
    tj->e_class[rep * K + k] = ctot[k] / (double)pr->test_counts[k]; /* NaN: no test point */
  }
  return DPD_OK;
}

int dpd__nc_theory_replicates(const dpd_nc_problem *pr, const dpd_nc_sim_config *sc, double *e,
                              dpd_err *err) {
  return dpd__nc_theory_replicates_classes(pr, sc, e, NULL, err);
}

int dpd__nc_theory_replicates_classes(const dpd_nc_problem *pr, const dpd_nc_sim_config *sc,
                                      double *e, double *e_class, dpd_err *err) {
  const char *why = dpd__nc_theory_why_not(pr, sc);
  if (why != NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "nc theory: %s", why);
  }
  size_t block = NC_BLOCK_DOUBLES / pr->p;
  block = block < 1 ? 1 : block > NC_BLOCK_MAX ? NC_BLOCK_MAX : block;
  theory_job tj = {.pr = pr,
                   .sc = sc,
                   .block = block,
                   .per_class = !pr->from_data && pr->cfg.test_shift == DPD_NC_SHIFT_NONE,
                   .centre = pr->cfg.normalize == DPD_NC_NORMALIZE_CENTER ||
                             pr->cfg.normalize == DPD_NC_NORMALIZE_CENTER_L2,
                   .e = e,
                   .e_class = e_class,
                   .errors = NULL};
  /* Training data and test points that no replicate redraws (the ETF law without shifts, fixed
   * rows; a clean test) give every replicate the same value: one is computed and copied. */
  const int same = pr->cfg.test_shift == DPD_NC_SHIFT_NONE &&
                   (pr->from_data ? pr->data->X != NULL : pr->cfg.shift == DPD_NC_SHIFT_NONE);
  const dpd__replicate_plan plan = {.n = same ? 1 : sc->seeds,
                                    .threads = sc->threads,
                                    .work_doubles = work_doubles(pr, block),
                                    .units = 1,
                                    .progress = sc->progress,
                                    .progress_user = sc->progress_user,
                                    .what = "nc theory"};
  size_t failed;
  int status = dpd__replicate_run(&plan, theory_replicate, &tj, &failed, err);
  if (status < 0 && status != DPD_ECANCELLED && failed < plan.n) {
    /* every step is pure: running the failing replicate again words its reason */
    double *work = malloc(work_doubles(pr, block) * sizeof *work);
    if (work == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "nc theory: out of memory (K = %zu, p = %zu)", pr->K, pr->p);
    }
    tj.errors = err;
    const int again = theory_replicate(&tj, failed, work, NULL);
    free(work);
    status = again < 0 ? again
                       : DPD_FAIL(err, status, "nc theory: replicate %zu failed (status %d)",
                                  failed, status);
  }
  for (size_t rep = 1; same && status == DPD_OK && rep < sc->seeds; rep++) {
    e[rep] = e[0];
    if (e_class != NULL) {
      memcpy(e_class + rep * pr->K, e_class, pr->K * sizeof *e_class);
    }
  }
  return status;
}

/* Thm 3.4 of the seed (notes B.4): binary projected NoisyGD theta_{k+1} = P_{B(0, R)}(theta_k -
 * eta (g_n(theta_k) + xi_k)), xi_k ~ N(0, sigma^2 I), on e_1 + v (class +1) and -e_1 + v, n/2
 * samples each, |v|^2 <= beta^2 p < 1, bounds P[theta_{k+1}^T (e_1 + v) < 0] for the step
 * eta = R / (n (1 + beta^2 p) + (p + sqrt(p t) + t)^(1/2)) (the proof's; printed without the
 * square root) by exp(-n^2 / (C^2 sigma^2 (1 + beta^2 p))) + k e^{-t}. The run at K = 2 maps onto
 * it by theta = W_1 - W_2 (the CE gradients of the two rows are opposite, so theta moves by 2 eta
 * times the logistic gradient and the noise sigma (Xi_1 - Xi_2) / 2 of std sigma / sqrt 2):
 * eta_theta = 2 eta, sigma_theta = sigma / sqrt 2, R_theta = sqrt(2) radius (|theta| <= sqrt 2
 * |W|_F), v = nu (beta^2 p = |nu|^2), k = steps; t is solved from eta_theta. Two differences
 * remain and are documented: the run projects W (not theta) and clips per-sample gradients to G
 * (steps > 1), so the bound belongs to the theorem's algorithm run with these parameters.
 * Returns NULL and sets the bounds, or the reason (in buf or a constant). */
static const char *thm34(const dpd_nc_problem *pr, const dpd_nc_sim_config *sc, char *buf,
                         size_t size, double *bound, double *bound_printed_eta, double *t_out) {
  const dpd_nc_problem_config *c = &pr->cfg;
  if (pr->K != 2) {
    return "Thm 3.4 is for two classes (K = 2)";
  }
  if (!isfinite(sc->radius)) {
    return "Thm 3.4 is for projected NoisyGD (radius < inf)";
  }
  if (pr->from_data) {
    return "Thm 3.4 is for the collapse law e_1 + v, not given features";
  }
  if (c->shift != DPD_NC_SHIFT_NONE) {
    return "Thm 3.4 has one deterministic shift v common to all samples (offset), not i.i.d. "
           "shifts (those are Thm 3.2's setting)";
  }
  if (pr->counts[0] != pr->counts[1]) {
    return "Thm 3.4 is for balanced classes (n/2 samples each)";
  }
  if (c->test_shift != DPD_NC_SHIFT_NONE || (c->offset > 0.0 && !c->offset_at_test)) {
    return "Thm 3.4 bounds the error at the training point e_1 + v (test_shift = none, and "
           "offset_at_test = yes with an offset)";
  }
  if (c->normalize != DPD_NC_NORMALIZE_NONE) {
    return "Thm 3.4 is for raw features (normalize = none)";
  }
  if (sc->loss != DPD_NC_LOSS_CE) {
    return "Thm 3.4 is for the logistic loss (loss = ce at K = 2)";
  }
  if (!(sc->sigma > 0.0)) {
    return "Thm 3.4 needs noise (sigma > 0)";
  }
  const double p = (double)pr->p, n = (double)pr->n;
  const double nu2 = dpd__dot8(pr->nu, pr->nu, pr->p), bp = nu2;
  if (!(bp < 1.0)) {
    snprintf(buf, size, "Thm 3.4 needs beta^2 p < 1 (here |nu|^2 = offset^2 p = %g)", nu2);
    return buf;
  }
  const double beta = sqrt(nu2 / p), R = sqrt(2.0) * sc->radius, eta = 2.0 * sc->eta;
  const double sigma = sc->sigma / sqrt(2.0);
  /* step rule: R / eta - n (1 + beta^2 p) = N^(1/2) (proof) or N (printed), N = p + sqrt(p t) + t
   * = u^2 + sqrt(p) u + p with u = sqrt(t) > 0, i.e. N > p. */
  const double A = R / eta - n * (1.0 + bp);
  double t_of[2] = {NAN, NAN};
  for (int printed = 0; printed < 2; printed++) {
    const double N = printed ? A : A * A;
    if (A > 0.0 && N > p) {
      const double u = 0.5 * (-sqrt(p) + sqrt(4.0 * N - 3.0 * p));
      t_of[printed] = u * u;
    }
  }
  if (!(t_of[0] > 0.0)) {
    snprintf(buf, size,
             "eta = %g is too large for Thm 3.4's step rule: 2 eta must be below sqrt(2) radius "
             "/ (n (1 + beta^2 p) + sqrt(p)) = %g",
             sc->eta, R / (n * (1.0 + bp) + sqrt(p)));
    return buf;
  }
  *t_out = t_of[0];
  *bound = dpd_nc_bound_thm34(n, beta, p, sigma, R, sc->steps, t_of[0]);
  *bound_printed_eta =
      t_of[1] > 0.0 ? dpd_nc_bound_thm34(n, beta, p, sigma, R, sc->steps, t_of[1]) : NAN;
  return NULL;
}

/* The exact error of every replicate, overall and per class, and the paired gap. */
static int theory_eval(const dpd_nc_problem *pr, const dpd_nc_sim_config *sc,
                       const dpd_nc_sim_result *sim, dpd__nc_comparison *c, dpd_err *err) {
  const size_t S = sc->seeds, K = pr->K;
  double *e = malloc((2 * S + S * K) * sizeof *e);
  int status;
  c->class_theory = malloc(2 * K * sizeof *c->class_theory);
  c->replicate_theory = malloc(S * sizeof *c->replicate_theory);
  if (e == NULL || c->class_theory == NULL || c->replicate_theory == NULL) {
    free(e);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (seeds = %zu)", S);
  }
  c->class_theory_se = c->class_theory + K;
  if ((status = dpd__nc_theory_replicates_classes(pr, sc, e, e + 2 * S, err)) == DPD_OK) {
    dpd__stats_mean_se(e, S, 1, &c->theory, &c->theory_se);
    /* The gap's standard error is that of the paired differences sim_r - theory_r: both sides
     * of replicate r share its training data and test points, so the spread of the
     * differences is what the noise alone adds (the SE of either side alone also carries the
     * data's variation, which cancels in the gap). */
    for (size_t r = 0; r < S; r++) {
      e[S + r] = sim->test_error_replicates[r] - e[r];
    }
    dpd__stats_mean_se(e + S, S, 1, &c->gap, &c->gap_se);
    dpd__stats_columns_mean_se(e + 2 * S, S, K, c->class_theory, c->class_theory_se);
    memcpy(c->replicate_theory, e, S * sizeof *e);
  }
  free(e);
  return status;
}

int dpd__nc_compare_eval(const dpd_nc_problem *pr, const dpd_nc_sim_config *sc,
                         const dpd_nc_sim_result *sim, dpd__nc_comparison *c, dpd_err *err) {
  const dpd_nc_problem_config *pc = &pr->cfg;
  int status;
  memset(c, 0, sizeof *c);
  c->theory = c->theory_se = c->gap = c->gap_se = NAN;
  c->why_not = dpd__nc_theory_why_not(pr, sc);
  if (c->why_not == NULL && (status = theory_eval(pr, sc, sim, c, err)) < 0) {
    return status;
  }
  /* The papers' perfect-collapse bounds (balanced, no shift, no offset, one step). */
  c->d1 = sc->steps == 1 && !pr->from_data && pc->shift == DPD_NC_SHIFT_NONE &&
          pc->offset == 0.0 && pc->normalize == DPD_NC_NORMALIZE_NONE && !pc->offset_at_test &&
          pc->imbalance_ratio == 1.0 && pc->test_shift == DPD_NC_SHIFT_NONE && pc->n % pc->K == 0;
  if (c->d1) {
    c->d1_printed = dpd_nc_bound_d1_printed(pc->K, (double)pc->n, sc->sigma);
    c->d1_union = dpd_nc_bound_d1_union(pc->K, (double)pc->n, sc->sigma);
  }
  c->thm34 = c->thm34_t = c->thm34_printed_eta = NAN;
  c->thm34_why = thm34(pr, sc, c->thm34_buf, sizeof c->thm34_buf, &c->thm34,
                       &c->thm34_printed_eta, &c->thm34_t);
  return DPD_OK;
}

void dpd__nc_comparison_free(dpd__nc_comparison *c) {
  free(c->class_theory);
  free(c->replicate_theory);
  c->class_theory = c->class_theory_se = c->replicate_theory = NULL;
}
