/* The theory of each draw of a random-features problem: theta* and the OU theory conditional on
 * the draw, and their summaries over the draws (rf_draws_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Bombari & Mondelli, PNAS 122 (2025) e2423072122, §3 (DP-GD, theta*); the OU
 * theory of ou.h (docs/math.md §2.4); docs/rf.md, "Replicates: what varies" (paired SE). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/ou.h"
#include "rf/rf_run_impl.h"

void dpd__rf_draws_free(dpd__rf_draws *w) {
  if (w == NULL) {
    return;
  }
  free(w->kgrid);
  free(w->ts_train);
  free(w->ts_test);
  free(w->ou_d);
  free(w->ou_bias);
  free(w->ou_noise);
  free(w->ou_c);
  free(w->a_max);
  free(w->a_min);
  free(w->rank);
  free(w->exit_step);
  free(w->rows_hash);
  free(w);
}

int dpd__rf_draws_create(const dpd__rf_draws_config *cfg, dpd__rf_draws **out, dpd_err *err) {
  const size_t m = cfg->draws, mg = cfg->draws * cfg->g;
  dpd__rf_draws *w = calloc(1, sizeof *w);
  *out = NULL;
  if (w == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  w->cfg = *cfg;
  w->kgrid = malloc(cfg->g * sizeof *w->kgrid);
  w->ts_train = malloc(m * sizeof *w->ts_train);
  w->ts_test = malloc(m * sizeof *w->ts_test);
  w->ou_d = malloc(mg * sizeof *w->ou_d);
  w->ou_bias = malloc(mg * sizeof *w->ou_bias);
  w->ou_noise = malloc(mg * sizeof *w->ou_noise);
  w->ou_c = malloc(mg * sizeof *w->ou_c);
  w->a_max = malloc(m * sizeof *w->a_max);
  w->a_min = malloc(m * sizeof *w->a_min);
  w->rank = malloc(m * sizeof *w->rank);
  w->exit_step = malloc(m * sizeof *w->exit_step);
  w->rows_hash = malloc(m * sizeof *w->rows_hash);
  if (w->rows_hash == NULL || w->kgrid == NULL || w->ts_train == NULL || w->ts_test == NULL ||
      w->ou_d == NULL || w->ou_bias == NULL || w->ou_noise == NULL || w->ou_c == NULL ||
      w->a_max == NULL || w->a_min == NULL || w->rank == NULL || w->exit_step == NULL) {
    dpd__rf_draws_free(w);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (%zu draws of the problem)", m);
  }
  dpd_rf_sim_grid_steps(cfg->T, cfg->g, w->kgrid);
  *out = w;
  return DPD_OK;
}

/* One progress poll between two dense phases of a draw. */
static int draw_poll(dpd__rf_draws *w, dpd_err *err) {
  w->polls++;
  if (w->cfg.progress != NULL && w->cfg.progress(w->cfg.progress_user, "problem phases", w->polls,
                                                 w->cfg.draws * DPD__RF_DRAW_POLLS) != 0) {
    return DPD_FAIL(err, DPD_ECANCELLED, "stopped by the progress callback");
  }
  return DPD_OK;
}

/* theta*'s risks of one draw (NAN when not asked for). */
static int theta_star_eval(dpd__rf_draws *w, size_t rep, const dpd_rf_problem *problem,
                           dpd_err *err) {
  double *theta_star;
  int status;
  w->ts_train[rep] = NAN;
  w->ts_test[rep] = NAN;
  if (!w->cfg.theta_star) {
    return DPD_OK;
  }
  if ((theta_star = malloc(problem->p * sizeof *theta_star)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (p = %zu)", problem->p);
  }
  status =
      dpd_rf_theta_star_get(problem, -1.0, theta_star, &w->ts_train[rep], &w->ts_test[rep], err);
  free(theta_star);
  return status;
}

/* The spectrum of the draw: rank, a_max, a_min, and the stability of gradient descent. */
static int spectrum_eval(dpd__rf_draws *w, size_t rep, const dpd_ou *ou, size_t n, dpd_err *err) {
  double *s = malloc(n * sizeof *s);
  if (s == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  w->rank[rep] = dpd_ou_rank_get(ou);
  dpd_ou_singular_values_get(ou, s);
  w->a_max[rep] = 2.0 * s[0] * s[0] / (double)n;
  w->a_min[rep] =
      w->rank[rep] > 0 ? 2.0 * s[w->rank[rep] - 1] * s[w->rank[rep] - 1] / (double)n : 0.0;
  free(s);
  if (!(w->cfg.eta * w->a_max[rep] < 2.0)) {
    char which[64] = "";
    if (w->cfg.draws > 1) {
      snprintf(which, sizeof which, "data draw %zu: ", rep);
    }
    return DPD_FAIL(err, DPD_ENONFINITE,
                    "ou: eta = %g is above the stability limit 2 / a_max = %g of gradient "
                    "descent on this problem (%sa_max = 2 s_max^2 / n = %g): DP-GD diverges",
                    w->cfg.eta, 2.0 / w->a_max[rep], which, w->a_max[rep]);
  }
  return DPD_OK;
}

/* The first exit of the mean path from the no-clip set, scanned at every step (T + 1: never). */
static int exit_eval(dpd__rf_draws *w, size_t rep, const dpd_ou *ou, size_t p, dpd_err *err) {
  const size_t T = w->cfg.T;
  size_t exit_idx = T + 1, *ksteps;
  int status = DPD_OK;
  if (isfinite(w->cfg.clip)) {
    dpd_ou_params par = {.eta = w->cfg.eta,
                         .clip = w->cfg.clip * sqrt((double)p),
                         .sigma = w->cfg.sigma,
                         .time = DPD_OU_DISCRETE};
    if ((ksteps = malloc((T + 1) * sizeof *ksteps)) == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k <= T; k++) {
      ksteps[k] = k;
    }
    status = dpd_ou_exit_step(ou, &par, ksteps, T + 1, &exit_idx, err);
    free(ksteps);
  }
  w->exit_step[rep] = exit_idx;
  return status;
}

/* The risk curves of one draw on the grid: one projection of the test set serves the discrete
 * and the continuous curve. */
static int curves_eval(dpd__rf_draws *w, size_t rep, const dpd_ou *ou,
                       const dpd_rf_problem *problem, dpd_err *err) {
  const size_t g = w->cfg.g;
  dpd_ou_params par = {.eta = w->cfg.eta,
                       .clip = isfinite(w->cfg.clip) ? w->cfg.clip * sqrt((double)problem->p) : 1.0,
                       .sigma = w->cfg.sigma,
                       .time = DPD_OU_DISCRETE};
  dpd_ou_test *ou_test = NULL;
  dpd_ou_risk *risk_d = malloc(g * sizeof *risk_d), *risk_c = malloc(g * sizeof *risk_c);
  int status;
  if (risk_d == NULL || risk_c == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  } else if ((status = dpd_ou_test_create(ou, problem->phi_test, problem->n_test, problem->y_test,
                                          &ou_test, err)) >= 0 &&
             (status = draw_poll(w, err)) >= 0 &&
             (status = dpd_ou_test_risk_eval(ou_test, &par, w->kgrid, g, risk_d, err)) >= 0) {
    par.time = DPD_OU_CONTINUOUS;
    status = dpd_ou_test_risk_eval(ou_test, &par, w->kgrid, g, risk_c, err);
  }
  for (size_t j = 0; status >= 0 && j < g; j++) {
    w->ou_d[rep * g + j] = risk_d[j].risk;
    w->ou_bias[rep * g + j] = risk_d[j].bias;
    w->ou_noise[rep * g + j] = risk_d[j].noise;
    w->ou_c[rep * g + j] = risk_c[j].risk;
  }
  free(risk_d);
  free(risk_c);
  dpd_ou_test_free(ou_test);
  return status;
}

int dpd__rf_draws_eval(void *user, size_t rep, const dpd_rf_problem *problem, dpd_err *err) {
  dpd__rf_draws *w = user;
  const int polled = w->cfg.ou || w->cfg.theta_star;
  dpd_ou *ou = NULL;
  int status;
  w->rows_hash[rep] = dpd__rf_rows_hash(problem);
  if ((polled && (status = draw_poll(w, err)) < 0) ||
      (status = theta_star_eval(w, rep, problem, err)) < 0 ||
      (polled && (status = draw_poll(w, err)) < 0) || !w->cfg.ou) {
    return status;
  }
  if ((status = dpd_ou_create(NULL, problem->phi, problem->n, problem->p, problem->y, &ou, err)) >=
          0 &&
      (status = draw_poll(w, err)) >= 0 &&
      (status = spectrum_eval(w, rep, ou, problem->n, err)) >= 0 &&
      (status = curves_eval(w, rep, ou, problem, err)) >= 0) {
    status = exit_eval(w, rep, ou, problem->p, err);
  }
  dpd_ou_free(ou);
  return status;
}

void dpd__rf_draws_mean_se(const double *x, size_t draws, size_t g, double *mean, double *se) {
  if (draws == 1) {
    memcpy(mean, x, g * sizeof *mean);
    for (size_t j = 0; j < g; j++) {
      se[j] = 0.0;
    }
  } else {
    dpd__stats_columns_mean_se(x, draws, g, mean, se);
  }
}

void dpd__rf_ou_summary_free(dpd__rf_ou_summary *s) {
  free(s->risk); /* one allocation */
  s->risk = s->bias = s->noise = s->risk_continuous = s->risk_se = s->gap_se = NULL;
}

/* The standard error over the draws of the paired differences sim - ou_d, written to se[0..g):
 * replicate r's DP-GD risk minus the theory of its own draw r. The data's variance, common to
 * both, cancels; what is left is the noise's (and, with clipping, the theory's error). */
static int paired_se(const dpd__rf_draws *w, const double *sim, double *se, dpd_err *err) {
  const size_t g = w->cfg.g, draws = w->cfg.draws;
  double *diff = malloc((draws + 1) * g * sizeof *diff);
  if (diff == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (%zu draws)", draws);
  }
  for (size_t k = 0; k < draws * g; k++) {
    diff[k] = sim[k] - w->ou_d[k];
  }
  dpd__stats_columns_mean_se(diff, draws, g, diff + draws * g, se);
  free(diff);
  return DPD_OK;
}

int dpd__rf_draws_ou_summary(const dpd__rf_draws *w, const double *sim, dpd__rf_ou_summary *s,
                             dpd_err *err) {
  const size_t g = w->cfg.g, draws = w->cfg.draws;
  double *buf = malloc(7 * g * sizeof *buf), *scratch;
  if (buf == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (grid = %zu)", g);
  }
  s->risk = buf;
  s->bias = buf + g;
  s->noise = buf + 2 * g;
  s->risk_continuous = buf + 3 * g;
  s->risk_se = buf + 4 * g;
  scratch = buf + 5 * g;
  s->gap_se = sim != NULL ? buf + 6 * g : NULL;
  s->rank = w->rank[0];
  s->exit_step = w->exit_step[0];
  s->a_max = w->a_max[0];
  s->a_min = w->a_min[0];
  for (size_t k = 1; k < draws; k++) {
    s->rank = w->rank[k] < s->rank ? w->rank[k] : s->rank;
    s->exit_step = w->exit_step[k] < s->exit_step ? w->exit_step[k] : s->exit_step;
    s->a_max = fmax(s->a_max, w->a_max[k]);
    s->a_min = fmin(s->a_min, w->a_min[k]);
  }
  dpd__rf_draws_mean_se(w->ou_d, draws, g, s->risk, s->risk_se);
  dpd__rf_draws_mean_se(w->ou_bias, draws, g, s->bias, scratch);
  dpd__rf_draws_mean_se(w->ou_noise, draws, g, s->noise, scratch);
  dpd__rf_draws_mean_se(w->ou_c, draws, g, s->risk_continuous, scratch);
  return sim != NULL ? paired_se(w, sim, s->gap_se, err) : DPD_OK;
}

void dpd__rf_draws_bytes(size_t draws, size_t g, dpd__rf_bytes *b) {
  b->seeds += 8.0 * (double)draws * (6.0 * (double)g + 8.0); /* each draw's theta* and curves */
}

int dpd__rf_draws_run(const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                      dpd_rf_resample resample, int sim, dpd__rf_draws *w, dpd_rf_sim_result **res,
                      dpd_err *err) {
  dpd_rf_problem *problem = NULL;
  int status;
  *res = NULL;
  if (sim) {
    return dpd_rf_sim_resample_run(pc, sc, resample, dpd__rf_draws_eval, w, res, err);
  }
  if ((status = dpd_rf_problem_create(pc, &problem, err)) >= 0) {
    status = dpd__rf_draws_eval(w, 0, problem, err);
  }
  dpd_rf_problem_free(problem);
  return status;
}

double dpd__rf_memory_eval(const dpd_rf_config *pc, const dpd_rf_sim_config *sc,
                           dpd_rf_resample resample, int sim, int ou, double replicates_bytes,
                           const char **driver) {
  dpd__rf_bytes base = {0}, ts = {0}, later = {.steps = 8.0 * 3.0 * (double)sc->grid};
  const dpd__rf_bytes *extra = &later;
  double phase_ts, phase_later, top;
  dpd__rf_problem_bytes(pc, &base);
  dpd__rf_theta_star_bytes(pc, &ts);
  if (sim && resample != DPD_RF_RESAMPLE_NOISE) {
    dpd__rf_draws_bytes(sc->seeds, sc->grid, &later);
  }
  if (sim) {
    dpd__rf_sim_bytes(pc, sc, resample, &later);
    later.seeds += replicates_bytes;
  }
  if (ou) {
    dpd__ou_bytes(pc->n, pc->n_test, sc->T, &later);
  }
  phase_ts = ts.p + ts.n;
  phase_later = later.p + later.n + later.steps + later.seeds;
  if (phase_ts >= phase_later) {
    extra = &ts; /* no steps or seeds terms */
  }
  /* the key named is the one whose term dominates */
  top = base.p + extra->p;
  *driver = "p";
  if (extra->n > top) {
    top = extra->n;
    *driver = "n";
  }
  if (base.d > top) {
    top = base.d;
    *driver = "d";
  }
  if (extra->steps > top) {
    top = extra->steps;
    *driver = "steps";
  }
  if (extra->seeds > top) {
    *driver = "seeds";
  }
  return base.p + base.d + fmax(phase_ts, phase_later);
}
