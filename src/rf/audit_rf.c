/* The privacy audit of full-batch DP-GD on random features (audit_rf_impl.h; docs/privacy.md
 * "Empirical audit").
 * SPDX-License-Identifier: MIT
 *
 * References: Nasr, Song, Thakurta, Papernot & Carlini, IEEE S&P 2021 (canaries, the last
 * iterate); Dong, Roth & Su, JRSS-B 2022 (T Gaussian steps of ratio sqrt(eta)/sigma compose to
 * mu = sqrt(eta T)/sigma GDP: the upper bound, docs/math.md §2).
 *
 * What runs is the library's DP-GD (dpd_rf_sim_run, one replicate per run) on one problem with
 * the canary's label changed, so that every run sees the same data and only the noise differs.
 *
 * The canary and the statistic. The canary is the last training point, phi_c = row n - 1 of Phi,
 * with label -Y (side 0) or +Y (side 1), Y so large that its residual never changes sign and its
 * gradient is clipped at every step: it adds -+ (eta/n) C phi_c/|phi_c| to every step (a
 * replace-one pair at the largest distance, 2 C). The other points' gradients lie in the span of
 * their features, whatever the iterate; so along w = P phi_c / |P phi_c|, P the projection
 * orthogonal to the other rows of Phi, only the canary and the noise move theta:
 *
 *   <theta_T, w> = -+ T (eta/n) C |P phi_c| / |phi_c| + N(0, T eta (2 C sigma / n)^2)   exactly,
 *
 * a Gaussian mechanism of mu_canary = sqrt(eta T)/sigma |P phi_c|/|phi_c| whatever the clipping
 * of the other points. When p >> n, |P phi_c| / |phi_c| is near 1 and the audit nearly reaches
 * the accountant's mu = sqrt(eta T)/sigma; it equals it when phi_c is orthogonal to the other
 * rows. P phi_c is computed by classical Gram-Schmidt with reorthogonalisation (CGS2) in the
 * rows' order, by this file's own loops (no BLAS: the bits do not depend on threads). With
 * p < n the projection vanishes (phi_c is in the other rows' span): the statistic is then the
 * projection on phi_c itself, a valid but looser test (mu_canary unknown). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/audit_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"
#include "rf/audit_rf_impl.h"

/* A row whose part orthogonal to the earlier rows is below this fraction of its norm adds no
 * direction (rank deficiency). */
#define RANK_TOL 1e-10

static double dot(const double *a, const double *b, size_t p) {
  double s = 0.0;
  for (size_t i = 0; i < p; i++) {
    s += a[i] * b[i];
  }
  return s;
}

/* v minus its projection on the orthonormal rows Q[0..k) (twice: CGS2). */
static void orthogonalise(const double *Q, size_t k, size_t p, double *v) {
  for (int pass = 0; pass < 2; pass++) {
    for (size_t j = 0; j < k; j++) {
      const double c = dot(Q + j * p, v, p);
      for (size_t i = 0; i < p; i++) {
        v[i] -= c * Q[j * p + i];
      }
    }
  }
}

/* w = P phi_c / |P phi_c| (or phi_c / |phi_c| when P phi_c vanishes); returns |P phi_c| /
 * |phi_c| (0 in the second case). */
static double canary_direction(const dpd_rf_problem *pr, double *w, dpd_err *err, int *status) {
  const size_t n = pr->n, p = pr->p;
  const double *phic = pr->phi + (n - 1) * p;
  const double nc = sqrt(dot(phic, phic, p));
  size_t k = 0;
  double *Q = malloc((n > 1 ? n - 1 : 1) * p * sizeof *Q);
  *status = DPD_OK;
  if (Q == NULL) {
    *status = DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (n = %zu, p = %zu)", n, p);
    return 0.0;
  }
  for (size_t r = 0; r + 1 < n && k < p; r++) {
    double *q = Q + k * p;
    memcpy(q, pr->phi + r * p, p * sizeof *q);
    const double before = sqrt(dot(q, q, p));
    orthogonalise(Q, k, p, q);
    const double after = sqrt(dot(q, q, p));
    if (after > RANK_TOL * before) {
      for (size_t i = 0; i < p; i++) {
        q[i] /= after;
      }
      k++;
    }
  }
  memcpy(w, phic, p * sizeof *w);
  orthogonalise(Q, k, p, w);
  free(Q);
  double nw = sqrt(dot(w, w, p));
  double ratio = nw / nc;
  if (!(ratio > RANK_TOL)) { /* phi_c in the others' span: project on phi_c itself */
    memcpy(w, phic, p * sizeof *w);
    nw = nc;
    ratio = 0.0;
  }
  for (size_t i = 0; i < p; i++) {
    w[i] /= nw;
  }
  return ratio;
}

/* The canary's input, x_c = DPD_RF_AUDIT_INPUT_SCALE sqrt(d) e_1, replaces training point n - 1:
 * its features phi(V x_c) (row n - 1 of Phi) and their norm. A large input saturates the
 * activation, so that more of phi_c lies outside the span of the other rows (whose linear
 * parts span at most d directions): |P phi_c| / |phi_c| is larger than a typical point's. */
static void canary_features(dpd_rf_problem *pr) {
  const size_t n = pr->n, p = pr->p, d = pr->d;
  const double xc = DPD_RF_AUDIT_INPUT_SCALE * sqrt((double)d);
  double *phic = pr->phi + (n - 1) * p;
  for (size_t j = 0; j < p; j++) {
    phic[j] = dpd_rf_activation_eval(pr->cfg.activation, pr->V[j * d] * xc);
  }
  pr->row_norm[n - 1] = sqrt(dot(phic, phic, p));
}

/* One run: DP-GD on problem `pr` with noise seed `seed`, its <theta_T, w>. */
static int one_run(const dpd_rf_problem *pr, const dpd_rf_sim_config *sc, uint64_t seed,
                   const double *w, double *stat, dpd_err *err) {
  dpd_rf_sim_config c = *sc;
  dpd_rf_sim_result *res = NULL;
  c.seeds = 1;
  c.seed = seed;
  c.grid = 2;
  c.threads = 1;
  c.progress = NULL;
  const int status = dpd_rf_sim_run(pr, &c, &res, err);
  if (status >= 0) {
    *stat = dot(res->theta_last, w, pr->p);
  }
  dpd_rf_sim_result_free(res);
  return status;
}

/* The runs of both sides, parallel over runs (each run serial, so any thread count gives the
 * same bits); the first failed run is run again alone for its message. sc->progress (DP-GD steps
 * of all runs) is called from the calling thread (thread 0 of the team) after each of its runs;
 * a non-zero return stops the runs not yet started (DPD_ECANCELLED). */
static int runs_all(const dpd_rf_problem *side[2], const dpd_rf_sim_config *sc, size_t runs,
                    const double *w, double *s, dpd_err *err) {
  const int threads = sc->threads > 0 ? sc->threads : omp_get_max_threads();
  size_t failed = SIZE_MAX, done = 0;
  int stop = 0;
  const long total = (long)(2 * runs);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
  for (long j = 0; j < total; j++) {
    const size_t sd = (size_t)j / runs, r = (size_t)j % runs;
    const uint64_t seed = dpd__audit_seed_mix(dpd__audit_seed_mix(sc->seed, sd), r);
    int halt, bad;
#pragma omp atomic read
    halt = stop;
    bad = !halt && one_run(side[sd], sc, seed, w, s + j, NULL) < 0;
    if (bad) {
#pragma omp critical(dpd_audit_rf_failed)
      failed = (size_t)j < failed ? (size_t)j : failed;
    }
    if (!halt) {
#pragma omp atomic update
      done++;
    }
    if (!halt && sc->progress != NULL && omp_get_thread_num() == 0) {
      size_t now;
#pragma omp atomic read
      now = done;
      if (sc->progress(sc->progress_user, now * sc->T, (size_t)total * sc->T) != 0) {
#pragma omp atomic write
        stop = 1;
      }
    }
  }
  if (stop) {
    return DPD_FAIL(err, DPD_ECANCELLED, "audit: stopped after %zu of %ld runs", done, total);
  }
  if (failed == SIZE_MAX) {
    return DPD_OK;
  }
  const size_t sd = failed / runs, r = failed % runs;
  return one_run(side[sd], sc, dpd__audit_seed_mix(dpd__audit_seed_mix(sc->seed, sd), r), w,
                 s + failed, err);
}

int dpd__rf_audit_run(const dpd_rf_config *pc, const dpd_rf_sim_config *sc, size_t runs,
                      double *s0, double *s1, dpd__rf_audit_info *info, dpd_err *err) {
  if (!(sc->sigma > 0.0) || !isfinite(sc->clip)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'sigma': %g (allowed: a private run, sigma > 0 with a "
                    "finite clip: the audit bounds its privacy)",
                    sc->sigma);
  }
  dpd_rf_config c = *pc;
  dpd_rf_problem *pr = NULL;
  c.n_test = 1; /* the test set plays no part */
  int status = dpd_rf_problem_create(&c, &pr, err);
  if (status < 0) {
    return status;
  }
  const size_t n = pr->n, p = pr->p;
  const double C = sc->clip * sqrt((double)p), eta_t = sc->eta * (double)sc->T;
  double *w = malloc(p * sizeof *w), *y1 = malloc(n * sizeof *y1), *s = malloc(2 * runs * sizeof *s);
  if (w == NULL || y1 == NULL || s == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (p = %zu, runs = %zu)", p, runs);
  }
  if (status >= 0) {
    canary_features(pr);
    info->projection = canary_direction(pr, w, err, &status);
  }
  if (status >= 0) {
    const double nc = pr->row_norm[n - 1];
    /* |phi_c . theta| stays below |phi_c| (eta T C + 10 sqrt(eta T p) 2 C sigma / n) but with
     * negligible probability; C / (2 |phi_c|) is the residual at which clipping starts */
    info->label = DPD_RF_AUDIT_LABEL_FACTOR *
                  (1.0 + C / nc +
                   nc * (eta_t * C + 10.0 * sqrt(eta_t * (double)p) * 2.0 * C * sc->sigma /
                                         (double)n));
    info->mu_canary =
        info->projection > 0.0 ? sqrt(eta_t) / sc->sigma * info->projection : NAN;
    memcpy(y1, pr->y, n * sizeof *y1);
    dpd_rf_problem side1 = *pr; /* the same problem but for the canary's label */
    side1.y = y1;
    pr->y[n - 1] = -info->label;
    y1[n - 1] = info->label;
    const dpd_rf_problem *side[2] = {pr, &side1};
    status = runs_all(side, sc, runs, w, s, err);
  }
  if (status >= 0) {
    memcpy(s0, s, runs * sizeof *s0);
    memcpy(s1, s + runs, runs * sizeof *s1);
  }
  free(w);
  free(y1);
  free(s);
  dpd_rf_problem_free(pr);
  return status;
}

int dpd__rf_audit_output(dpd_output *out, const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                         const dpd_keys *keys, double delta, dpd_err *err) {
  dpd__rf_audit_info info;
  dpd__audit_keys keyed = {.delta = delta}, *a = &keyed;
  double eps = NAN;
  char privacy[128];
  const double mu = sqrt(sc->eta * (double)sc->T) / sc->sigma;
  int status = dpd__audit_keys_get(keys, a, err);
  double *s = status >= 0 ? malloc(2 * a->runs * sizeof *s) : NULL;
  if (status < 0) {
    return status;
  }
  if (s == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "audit: out of memory (runs = %zu)", a->runs);
  }
  if ((status = dpd__rf_audit_run(pc, sc, a->runs, s, s + a->runs, &info, err)) < 0 ||
      (status = dpd_privacy_gdp_eps(mu, a->delta, &eps, err)) < 0) {
    free(s);
    return status;
  }
  snprintf(privacy, sizeof privacy, "mu = %.3g, sigma = %.3g (eps = %.3g at delta = %.3g)", mu,
           sc->sigma, eps, a->delta);
  const dpd__audit_upper u = {
      .model = "rf",
      .privacy = privacy,
      .bound = "mu = sqrt(eta T)/sigma: exact GDP of the whole DP-GD trajectory (docs/math.md 2), "
               "exact GDP-to-(eps, delta) conversion",
      .canary = "training point n-1 with label +Y against -Y (clipped gradients at the clip "
                "norm, opposite)",
      .statistic = "<theta_T, w>, w: the canary's feature vector orthogonal to the other rows "
                   "of Phi (normalised)",
      .mu_upper = mu,
      .mu_canary = info.mu_canary};
  status = dpd__audit_output(out, s, s + a->runs, a, &u, err);
  free(s);
  if (status >= 0) {
    dpd_output_number_set(out, "canary_label", info.label);
    dpd_output_number_set(out, "canary_projection", info.projection);
  }
  if (status >= 0 && info.projection == 0.0) {
    status = dpd__output_note_add(out, err,
                                  "note: p <= n - 1: the canary's features lie in the span of "
                                  "the others; the statistic projects on phi_c (a looser test)");
  }
  return status;
}

double dpd__rf_audit_bytes(size_t n, size_t p, size_t runs, double threads) {
  /* the orthonormal rows, w, the labels, the statistics, and per thread one run's DP-GD
   * (iterate, gradient, noise, a block partial, residuals) */
  return 8.0 * ((double)n * (double)p + 2.0 * (double)p + (double)n + 4.0 * (double)runs) +
         threads * 8.0 * (4.0 * (double)p + (double)n);
}

int dpd__rf_audit_keys(const dpd_keys *keys, const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                       double *memory, dpd_err *err) {
  static const char *const budget[] = {"sigma", "mu", "zcdp", "epsilon"};
  const char *named = "epsilon";
  dpd__audit_keys a;
  int status = dpd__audit_keys_get(keys, &a, err);
  if (status < 0) {
    return status;
  }
  for (size_t k = 0; k < 4; k++) {
    named = dpd_keys_given(keys, budget[k]) ? budget[k] : named;
  }
  if (!(sc->sigma > 0.0) || !isfinite(sc->clip)) {
    const int none = !(sc->sigma > 0.0) && !dpd_keys_given(keys, named);
    return DPD_FAIL(err, DPD_EINVAL,
                    "%s value for '%s': the audit needs a private run (allowed: epsilon (with "
                    "delta), mu, zcdp or sigma giving sigma > 0, with a finite clip)",
                    none ? "missing" : "invalid", sc->sigma > 0.0 ? "clip" : named);
  }
  *memory += dpd__rf_audit_bytes(pc->n, pc->p, a.runs,
                                 sc->threads > 0 ? sc->threads : omp_get_max_threads());
  return DPD_OK;
}
